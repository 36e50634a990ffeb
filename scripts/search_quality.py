#!/usr/bin/env python3
"""Search quality and speed of kibitz against Stockfish, side by side.

Drives `kibitz uci` and Stockfish (Debian's build, /usr/games/stockfish,
or any UCI engine for `reference` and `labels`) through python-chess's
engine module or raw UCI over pipes: one thread, Hash 16, a fresh
`ucinewgame` before every position, `go depth N`.

    python3 scripts/search_quality.py suites   --depths 8 10
    python3 scripts/search_quality.py agreement --positions 1000 --depths 6 7 8 9 10 11 12
    python3 scripts/search_quality.py speed    --positions 1000 --depths 8 10
    python3 scripts/search_quality.py speed    --positions 1000 --depths 8 10 --driver pipe
    python3 scripts/search_quality.py sources  --positions 100 --depths 7 8 9 10 11 12 --net NET
    python3 scripts/search_quality.py curve    --positions 400 --baseline OLD_KIBITZ --rounds 3
    python3 scripts/search_quality.py nets     --positions 400 --net builtin --rounds 3
    python3 scripts/search_quality.py reference --engine native=/tmp/stockfish-762dd1da \
        --depth 20 --hash 64 --positions 40 --out target/quality/ref-native-762dd1da-d20.json
    python3 scripts/search_quality.py labels   --positions 40 \
        --engines kibitz@NET:7,8,9,10,11,12,13 native=/tmp/stockfish-762dd1da:8,10,12

suites:    solved counts on WAC 300, Bratko-Kopec, BT-2450 and the STS score
           (1500 positions, points per move), for kibitz at each depth.
agreement: best-move agreement of both engines with Stockfish's own depth-16
           choice, positions per second, the mean absolute difference in
           Win% (Lichess's formula) of each label from Stockfish depth
           16's score, and the correlation of kibitz's scores with
           Stockfish's at the same depth; and for each kibitz
           depth, a paired comparison with Stockfish depth 8 (the
           yardstick): positions only one of them gets right, and the exact
           McNemar p-value of the difference.
sources:   per kind of position the shared data holds (Lichess 2016 and
           2025, TWIC, CCRL, a club player's chess.com games, an old master
           database, TCEC, the EPD suites): agreement with Stockfish depth
           16 (cached per source), positions per second, nodes per position
           and the Win% gap of kibitz at --depths and Stockfish at
           --sf-depths, raw UCI over pipes; then whether each goal is met.
curve:     the agreement-per-node curve over every source (--positions a
           source, seeded samples): kibitz at --kibitz-depths (7-13) and
           Stockfish at --sf-depths (8 10 12), agreement with Stockfish depth
           16 and nodes, per source and pooled, a held-out share (--held-out,
           by a seeded hash of the FEN) reported apart from the tuning share;
           kibitz's agreement at Stockfish's node counts (linear in log nodes
           between kibitz's depths) with a paired 95% interval; with
           --baseline, the same for another binary and paired tests of the
           change (McNemar at each depth, the paired difference at Stockfish's
           node counts); with --rounds, speeds as medians of interleaved
           rounds and positions per second at Stockfish d8's and d10's
           agreement; with --second-reference D, both engines held to
           kibitz's own depth-D search too (an engine's own deep search
           favours it). Every search is cached per position by binary and
           net (target/quality/), so a rerun searches only what is new.
nets:      two evaluations in the same kibitz binary, --net (e.g. `builtin`)
           against --versus (default Stockfish 15.1's net), at
           --kibitz-depths on every source: agreement with Stockfish
           depth 16 per depth; then the two interleaved position by
           position for speed (--rounds rounds, medians, seconds a position
           at each depth); and --net's agreement at --versus's speeds at
           depths 8 and 10 (linear in log time between --net's depths), as a
           paired difference with a 95% interval, pooled, on the held-out
           share and per source.
reference: one engine's reference, written to --out (default
           target/quality/ref-LABEL-SHA-dDEPTH.json) as {fen: [bestmove,
           nodes, score]} (the score in centipawns from the side to move,
           mates +-10000): --engine at --depth (20) with one thread, Hash
           --hash (64) and ucinewgame before each position, --positions (40)
           of every source. It resumes: positions already in the file are
           skipped, and the file is replaced atomically every 10 searches.
labels:    every engine configuration of --engines held to the references
           (--reference FILE, repeatable; by default every JSON file in
           data/references/, else every ref-*.json in target/quality/; a
           reference is named by its file name without ref- and .json), on
           the positions of --positions a source that are in every
           reference: agreement with each reference and with their mean
           (per position, the share of references whose move it plays) and
           nodes a position, from searches cached per position (one thread,
           Hash 16, ucinewgame before each position, --jobs processes side
           by side); positions and nodes a second from a timing pass always
           run afresh on the first --speed-positions (30) of each source, all
           engines and depths taking turns position by position (--rounds,
           default 1, medians). Per source, pooled and the held-out share
           (--held-out, 0.25). Then the goals (--goals, default 8:1.0
           10:0.8): at --yardstick's (default `native`) agreement with the
           mean reference at depth 8 (10), each kibitz configuration's
           depth (linear in agreement between its depths) and positions a
           second (linear in log time) as a ratio to the yardstick's, goal
           >= 1.0x (0.8x); and kibitz's agreement at the goal's speed minus
           the yardstick's, paired, with a 95% interval. --json FILE dumps it
           all; --speed-positions 0 leaves out the timing.
speed:     positions per second of both engines at each depth, same
           positions, same run (the engines take turns position by
           position; --rounds rounds, medians), and the ratio. `--driver pipe` speaks UCI
           to both directly instead of through python-chess, whose own cost
           per search (about 1.3 ms here) otherwise counts as engine time.

Engines (--engine, --engines SPEC:DEPTHS with DEPTHS like 7,8,9):
    kibitz                    $KIBITZ with --net's evaluation
    kibitz@NET                $KIBITZ with NET (a net file, builtin or hand-written)
    kibitzLABEL[=PATH][@NET]  another label, or another kibitz binary
    NAME=PATH                 any other UCI engine, e.g. native=/tmp/stockfish-762dd1da
A plain `kibitz` is labelled kibitz@ and the net's file name
(kibitz@nn-1a298aa575a0), any other engine by its NAME. Cached searches
are keyed by the binary's content hash, kibitz's net's and Hash.
"""
import argparse
import concurrent.futures
import glob
import hashlib
import io
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import threading
import time

import chess
import chess.engine
import chess.pgn

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED = os.environ.get("KIBITZ_DATA", os.path.join(ROOT, "..", "shared", "data"))
KIBITZ = os.environ.get("KIBITZ", os.path.join(ROOT, "target", "release", "kibitz"))
# What kibitz evaluates with (--net, or KIBITZ_NET): a net file (Stockfish
# 15.1's or kibitz's own), "<built-in>" for the net built into kibitz, or
# "hand-written" (the default): its EvalFile.
NET = "hand-written"


def eval_name():
    return NET if NET in ("hand-written", "<built-in>") else "the net " + os.path.basename(NET)
STOCKFISH = os.environ.get("STOCKFISH", "/usr/games/stockfish")
# Stockfish 15.1's net, as exported by `printf 'uci\nexport_net FILE\nquit\n' | stockfish`.
SF_NET = os.path.join(ROOT, "target", "nn-ad9b42354671.nnue")


def positions_of(games, n, rng):
    """`n` positions drawn from `games` ((start, moves) pairs): a game, then
    a ply from 10 on, not a finished game."""
    out = []
    while len(out) < n:
        start, moves = rng.choice(games)
        ply = rng.randrange(10, len(moves))
        b = start.copy()
        for m in moves[:ply]:
            b.push(m)
        if not b.is_game_over():
            out.append(b.fen())
    return out


def zstd_text(path):
    return subprocess.run(["zstd", "-dc", path], check=True, capture_output=True).stdout.decode()


def sample_positions(n, seed=1):
    """n positions from the shared Lichess games: a random game, a random ply
    from 10 to the end, no finished positions."""
    games = []
    handle = io.StringIO(zstd_text(os.path.join(SHARED, "pgn/lichess/lichess-org_database_2016-05.pgn.zst")))
    while True:
        g = chess.pgn.read_game(handle)
        if g is None:
            break
        moves = list(g.mainline_moves())
        if len(moves) > 12:
            games.append((chess.Board(), moves))
    rng = random.Random(seed)
    return positions_of(games, n, rng)


# Every kind of position the shared data holds: games of players of every
# level and of engines, and test suites. Each source is sampled with its
# own seed, so a source's positions do not change when others are added.
SOURCES = {
    "lichess2016": "pgn/lichess/lichess-org_database_2016-05.pgn.zst",
    "lichess2025": "pgn/real/lichess_db_standard_rated_2025-05_1000k.pgn.zst",
    "twic": "pgn/real/twic1599_1000k.pgn.zst",
    "ccrl": "pgn/real/ccrl_blitz_Obsidian_2025.pgn.zst",
    "chesscom": "pgn/real/chesscom_kyle_b81_2021.pgn.zst",
    "oldmaster": "pgn/real/play-like-tal_Tal_3110.pgn.zst",
    "tcec": "pgn/engine/TCEC_Season_13_-_Superfinal.pgn.zst",
    "enginegames": "pgn/real/cutechess_avalanche_selfplay_2022-02.pgn.zst",
    "suites": None,
}


def games_of(path):
    """The (start, main line) of a PGN file's standard-chess games of more
    than 12 plies, read without errors (a [FEN] start, as engine matches
    from an opening book have, is kept)."""
    games = []
    handle = io.StringIO(zstd_text(os.path.join(SHARED, path)))
    while True:
        g = chess.pgn.read_game(handle)
        if g is None:
            break
        if g.errors or g.headers.get("Variant", "Standard") not in ("Standard", "standard"):
            continue
        moves = list(g.mainline_moves())
        if len(moves) > 12:
            games.append((g.board(), moves))
    return games


def source_names(args):
    """The sources `--sources` names (`all`, or none given: every one)."""
    if not args.sources or "all" in args.sources:
        return list(SOURCES)
    return args.sources


def sample_source(name, n, seed=1):
    """n positions of a source: a random game and a random ply from 10 to
    its end (no finished position); for `suites`, positions of the EPD test
    suites (STS, WAC, Bratko-Kopec, BT-2450, Kaufman) drawn at random."""
    rng = random.Random(f"{name}:{seed}")
    if name == "suites":
        fens = []
        for path in ["epd/STS1-STS15_LAN_v3.epd.zst", "epd/arasan_wac_original.epd",
                     "epd/bratko-kopec.epd", "epd/BT2450.epd", "epd/chess-epds_kaufman.epd"]:
            for board, _ in read_epd(os.path.join(SHARED, path)):
                if board.is_valid() and not board.is_game_over():
                    fens.append(board.fen())
        return rng.sample(fens, min(n, len(fens)))
    games = games_of(SOURCES[name])
    return positions_of(games, n, rng)


def open_engine(kind):
    if kind == "kibitz":
        e = chess.engine.SimpleEngine.popen_uci([KIBITZ, "uci"])
        e.configure({"EvalFile": NET})
    else:
        e = chess.engine.SimpleEngine.popen_uci(STOCKFISH)
        e.configure({"Threads": 1})
    e.configure({"Hash": 16})
    return e


def analyse_all(engine, fens, depth, nodes=None):
    """Returns (results, seconds): results = [(bestmove uci, score cp from the side to move)].
    With `nodes` (a list), appends each search's node count to it."""
    results = []
    start = time.perf_counter()
    for fen in fens:
        board = chess.Board(fen)
        info = engine.analyse(board, chess.engine.Limit(depth=depth), game=object())
        pv = info.get("pv") or [None]
        score = info["score"].relative.score(mate_score=10000)
        results.append((pv[0].uci() if pv[0] else None, score))
        if nodes is not None:
            nodes.append(info.get("nodes", 0))
    return results, time.perf_counter() - start


def pearson(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    return sxy / math.sqrt(sxx * syy) if sxx and syy else float("nan")


def reference(fens, depth=16):
    cache = os.path.join(ROOT, "target", f"sf-d{depth}-{len(fens)}.json")
    if os.path.exists(cache):
        return json.load(open(cache))
    sf = open_engine("stockfish")
    res, _ = analyse_all(sf, fens, depth)
    sf.quit()
    json.dump(res, open(cache, "w"))
    return res


def win_percent(cp):
    """Lichess's Win%: 50 + 50 * (2 / (1 + exp(-0.00368208 * cp)) - 1), the
    centipawns clamped to +-1000 (mates, scored +-10000 here, included)."""
    cp = max(-1000, min(1000, cp))
    return 50 + 50 * (2 / (1 + math.exp(-0.00368208 * cp)) - 1)


def mean_win_gap(results, ref):
    """The mean absolute difference in Win% between each label and the
    reference's score of the same position."""
    return sum(abs(win_percent(s) - win_percent(r)) for (_, s), (_, r) in zip(results, ref)) / len(ref)


def mcnemar_p(b, c):
    """Exact two-sided McNemar p-value: b and c are the discordant pairs
    (positions only one of the two engines gets right)."""
    n, k = b + c, min(b, c)
    if n == 0:
        return 1.0
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n)


def cmd_agreement(args):
    fens = sample_positions(args.positions)
    ref = reference(fens)
    # Stockfish depth 8's agreement is the yardstick labels are held to: each kibitz
    # depth is compared with it position by position (paired), so that
    # "equal" can be told from noise.
    sf8 = reference(fens, depth=8)
    sf8_right = [m == r for (m, _), (r, _) in zip(sf8, ref)]
    print(f"{len(fens)} positions from the shared Lichess 2016-05 games; reference: Stockfish 15.1 depth 16")
    print(f"{'engine':<10} {'depth':>5} {'pos/s':>8} {'agree':>7} {'nodes/pos':>9} {'Win% gap':>8}  score correlation with SF same depth")
    kinds = ("kibitz",) if args.kibitz_only else ("kibitz", "stockfish")
    engines = {k: open_engine(k) for k in kinds}
    for depth in args.depths:
        row = {}
        for kind, e in engines.items():
            nodes = []
            res, secs = analyse_all(e, fens, depth, nodes)
            agree = sum(1 for (m, _), (r, _) in zip(res, ref) if m == r) / len(fens)
            row[kind] = (res, secs, agree, sum(nodes) / len(fens), mean_win_gap(res, ref))
        extra = ""
        if "stockfish" in row:
            kres, sres = row["kibitz"][0], row["stockfish"][0]
            clip = lambda v: max(-1000, min(1000, v))
            corr = pearson([clip(s) for _, s in kres], [clip(s) for _, s in sres])
            same = sum(1 for (a, _), (b, _) in zip(kres, sres) if a == b) / len(fens)
            extra = f"  r = {corr:.3f}, same move as SF d{depth}: {same:.1%}"
        right = [m == r for (m, _), (r, _) in zip(row["kibitz"][0], ref)]
        b = sum(1 for k, s in zip(right, sf8_right) if k and not s)
        c = sum(1 for k, s in zip(right, sf8_right) if s and not k)
        extra += (f"  vs SF d8 ({sum(sf8_right) / len(fens):.1%}): kibitz alone right {b},"
                  f" SF d8 alone {c}, McNemar p = {mcnemar_p(b, c):.3f}")
        for kind in kinds:
            res, secs, agree, mean_nodes, gap = row[kind]
            extra = extra if kind == "kibitz" else ""
            print(f"{kind:<10} {depth:>5} {len(fens) / secs:>8.1f} {agree:>7.1%} {mean_nodes:>9.0f} {gap:>8.2f}{extra}", flush=True)
    for e in engines.values():
        e.quit()


class PipeEngine:
    """A UCI engine spoken to directly over its pipes, without python-chess:
    the same commands (ucinewgame, isready, position, go depth N), but no
    per-line parsing beyond the last info line's node count. It measures the
    engines rather than the driver.

    `kind` "kibitz" starts `binary uci` (default $KIBITZ) with EvalFile `net`
    (default --net's); any other kind starts `binary` (default $STOCKFISH)
    with no arguments. Both get Threads 1 and Hash `hash_mb`."""

    def __init__(self, kind, binary=None, off=None, scale=None, hash_mb=16, net=None):
        cmd = [binary or KIBITZ, "uci"] if kind == "kibitz" else [binary or STOCKFISH]
        env = dict(os.environ)
        if off is not None:
            env["KIBITZ_SEARCH_OFF"] = off
        if scale:
            env["KIBITZ_SEARCH_SCALE"] = str(scale)
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  bufsize=1, env=env)
        self.send("uci")
        self.wait("uciok")
        self.send("setoption name Threads value 1")
        if kind == "kibitz":
            self.send(f"setoption name EvalFile value {net or NET}")
        self.send(f"setoption name Hash value {hash_mb}")
        self.send("isready")
        self.wait("readyok")

    def send(self, line):
        self.p.stdin.write(line + "\n")

    def wait(self, prefix):
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("engine exited")
            if line.startswith(prefix):
                return line

    def search(self, fen, depth):
        """Returns (bestmove, nodes) for a fresh search of `fen`."""
        best, nodes, _ = self.search_scored(fen, depth)
        return best, nodes

    def search_scored(self, fen, depth):
        """Returns (bestmove, nodes, score in centipawns from the side to
        move, mates as +-10000) for a fresh search of `fen`."""
        self.send("ucinewgame")
        self.send("isready")
        self.wait("readyok")
        self.send(f"position fen {fen}")
        self.send(f"go depth {depth}")
        nodes, score = 0, 0
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("engine exited")
            if line.startswith("info") and " score " in line:
                words = line.split()
                if "nodes" in words:
                    nodes = int(words[words.index("nodes") + 1])
                i = words.index("score")
                kind, value = words[i + 1], int(words[i + 2])
                score = value if kind == "cp" else (10000 if value > 0 else -10000)
            elif line.startswith("bestmove"):
                return line.split()[1], nodes, score

    def quit(self):
        try:
            self.send("quit")
            self.p.stdin.close()
        except OSError:
            pass  # the engine is gone already
        self.p.wait()


def cmd_speed(args):
    # With --sources, the positions are drawn evenly from those sources
    # (`--sources all`: every kind the shared data holds), each source
    # reported apart as well; without, from the Lichess 2016 games.
    if args.sources:
        names = source_names(args)
        counts = [args.positions // len(names) + (i < args.positions % len(names))
                  for i in range(len(names))]
        tagged = [(name, fen) for name, n in zip(names, counts) for fen in sample_source(name, n)]
    else:
        tagged = [("lichess2016", fen) for fen in sample_positions(args.positions)]
    fens = [fen for _, fen in tagged]
    pipe = args.driver == "pipe"
    engines = {k: PipeEngine(k) if pipe else open_engine(k) for k in ("kibitz", "stockfish")}
    print(f"{len(fens)} positions, one thread, Hash 16, ucinewgame before each position, "
          f"driven by {'raw UCI over pipes' if pipe else 'python-chess engine.analyse'}; "
          f"the engines take turns position by position, {args.rounds} rounds, medians")
    for depth in args.depths:
        totals = {k: [] for k in engines}
        nodes = {k: 0 for k in engines}
        # Per source: seconds of each round and nodes, by engine.
        by_source = {}
        for _ in range(args.rounds):
            secs = {k: 0.0 for k in engines}
            nodes = {k: 0 for k in engines}
            round_source = {}
            for i, (source, fen) in enumerate(tagged):
                # Alternate who goes first, so neither always runs on a
                # cache the other has just cooled.
                order = list(engines) if i % 2 == 0 else list(reversed(list(engines)))
                for kind in order:
                    e = engines[kind]
                    start = time.perf_counter()
                    if pipe:
                        n = e.search(fen, depth)[1]
                    else:
                        info = e.analyse(chess.Board(fen), chess.engine.Limit(depth=depth), game=object())
                        n = info.get("nodes", 0)
                    took = time.perf_counter() - start
                    secs[kind] += took
                    nodes[kind] += n
                    row = round_source.setdefault((source, kind), [0.0, 0, 0])
                    row[0] += took
                    row[1] += n
                    row[2] += 1
            for kind in engines:
                totals[kind].append(secs[kind])
            for key, row in round_source.items():
                by_source.setdefault(key, []).append(row)
        med = {k: sorted(v)[len(v) // 2] for k, v in totals.items()}
        rate = {k: len(fens) / med[k] for k in engines}
        nps = {k: nodes[k] / med[k] for k in engines}
        print(f"depth {depth}: kibitz {rate['kibitz']:.1f} pos/s ({nps['kibitz'] / 1e6:.2f} M nodes/s, "
              f"{nodes['kibitz'] / len(fens):.0f} nodes/pos), stockfish {rate['stockfish']:.1f} pos/s "
              f"({nps['stockfish'] / 1e6:.2f} M nodes/s, {nodes['stockfish'] / len(fens):.0f} nodes/pos), "
              f"ratio {rate['kibitz'] / rate['stockfish']:.2f}x pos/s, {nps['kibitz'] / nps['stockfish']:.2f}x nps",
              flush=True)
        sources = list(dict.fromkeys(source for source, _ in tagged))
        if len(sources) > 1:
            for source in sources:
                cell = {}
                for kind in engines:
                    rows = sorted(by_source[(source, kind)], key=lambda r: r[0])
                    t, n, count = rows[len(rows) // 2]
                    cell[kind] = (count / t, n / t, n / count)
                k, f = cell["kibitz"], cell["stockfish"]
                print(f"  {source:<12} kibitz {k[1] / 1e6:.2f} M nodes/s {k[2]:>8.0f} nodes/pos, "
                      f"stockfish {f[1] / 1e6:.2f} M nodes/s {f[2]:>8.0f} nodes/pos, "
                      f"{k[0] / f[0]:.2f}x pos/s, {k[1] / f[1]:.2f}x nps", flush=True)
    for e in engines.values():
        e.quit()


def source_reference(name, fens, depth=16, jobs=None):
    """Stockfish's depth-`depth` (bestmove, score) of a source's positions,
    cached in target/ by source, position by position (a larger sample
    searches only its new positions); `jobs` Stockfish processes side by
    side (default REFERENCE_JOBS)."""
    cache = os.path.join(ROOT, "target", f"sf-d{depth}-{name}.json")
    known = json.load(open(cache)) if os.path.exists(cache) else {}
    todo = [f for f in dict.fromkeys(fens) if f not in known]
    lock = threading.Lock()

    def save():
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        json.dump(known, open(cache + ".tmp", "w"))
        os.replace(cache + ".tmp", cache)

    def work(part):
        sf = PipeEngine("stockfish")
        for i, fen in enumerate(part):
            best, _, score = sf.search_scored(fen, depth)
            with lock:
                known[fen] = (best, score)
                if i % 50 == 49:
                    save()
        sf.quit()

    if todo:
        jobs = jobs or REFERENCE_JOBS
        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            list(pool.map(work, [todo[i::jobs] for i in range(jobs)]))
        save()
    return [tuple(known[f]) for f in fens]


# Stockfish processes that compute the depth-16 references side by side.
REFERENCE_JOBS = 1


def run_depth(engine, fens, depth):
    """(results [(bestmove, score)], seconds, mean nodes) of fresh searches."""
    res, nodes = [], 0
    start = time.perf_counter()
    for fen in fens:
        best, n, score = engine.search_scored(fen, depth)
        res.append((best, score))
        nodes += n
    return res, time.perf_counter() - start, nodes / len(fens)


def cmd_sources(args):
    """Per source: agreement with Stockfish depth 16, positions per second,
    nodes per position and the mean Win% gap of kibitz at `--depths` and of
    Stockfish at `--sf-depths`, both over raw UCI pipes, one thread, Hash 16,
    ucinewgame before every position; then the goals' rows."""
    names = source_names(args)
    engines = {"kibitz": PipeEngine("kibitz"), "stockfish": PipeEngine("stockfish")}
    print(f"{args.positions} positions per source; reference: Stockfish 15.1 depth 16; "
          f"kibitz with {eval_name()}; "
          f"raw UCI over pipes, one thread, Hash 16, ucinewgame before each position")
    summary = []
    for name in names:
        fens = sample_source(name, args.positions)
        ref = source_reference(name, fens)
        rows = {}
        # The engines take turns (kibitz d7, Stockfish d7, kibitz d8, ...), so
        # that a slow spell of a shared machine falls on both.
        runs = sorted([("kibitz", d) for d in args.depths] + [("stockfish", d) for d in args.sf_depths],
                      key=lambda r: (r[1], r[0]))
        for kind, depth in runs:
            res, secs, nodes = run_depth(engines[kind], fens, depth)
            agree = sum(1 for (m, _), (r, _) in zip(res, ref) if m == r) / len(fens)
            rows[(kind, depth)] = (len(fens) / secs, agree, nodes, mean_win_gap(res, ref))
            print(f"{name:<12} {kind:<9} d{depth:<3} {len(fens) / secs:>8.1f} pos/s "
                  f"{agree:>6.1%} agree {nodes:>8.0f} nodes/pos {rows[(kind, depth)][3]:>6.2f} Win% gap",
                  flush=True)
        summary.append((name, rows))
    for e in engines.values():
        e.quit()
    print("\ngoals: some kibitz depth at least Stockfish d8's agreement at >= 1.8x its pos/s; "
          "at Stockfish d10's agreement, >= 1.5x its pos/s")
    for name, rows in summary:
        for sf_depth, goal in ((8, 1.8), (10, 1.5)):
            if ("stockfish", sf_depth) not in rows:
                continue
            sf_rate, sf_agree, _, _ = rows[("stockfish", sf_depth)]
            reach = [(d, r) for (k, d), r in rows.items() if k == "kibitz" and r[1] >= sf_agree]
            if reach:
                d, (rate, agree, _, _) = min(reach, key=lambda x: x[0])
                verdict = "met" if rate / sf_rate >= goal else "not met"
                print(f"{name:<12} SF d{sf_depth} {sf_agree:.1%} at {sf_rate:.1f} pos/s: kibitz d{d} "
                      f"{agree:.1%} at {rate:.1f} pos/s, {rate / sf_rate:.2f}x (goal {goal}x: {verdict})")
            else:
                best = max(((d, r) for (k, d), r in rows.items() if k == "kibitz"), key=lambda x: x[1][1])
                print(f"{name:<12} SF d{sf_depth} {sf_agree:.1%}: no kibitz depth reaches it "
                      f"(best d{best[0]} {best[1][1]:.1%})")


def file_sha(path):
    """The first 12 hex digits of a file's SHA-256 (a cache key), hashed
    once per run unless the file changes."""
    st = os.stat(path)
    memo = (os.path.abspath(path), st.st_size, st.st_mtime_ns)
    if memo not in FILE_SHAS:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        FILE_SHAS[memo] = h.hexdigest()[:12]
    return FILE_SHAS[memo]


FILE_SHAS = {}


class Cached:
    """(bestmove, nodes, score) of fresh searches of one engine at one depth,
    cached position by position in target/quality/ under a key that names
    the engine's binary and evaluation: a deterministic search (one thread,
    ucinewgame before each position, a fixed depth) is run once per
    position whatever the run."""

    def __init__(self, key):
        self.path = os.path.join(ROOT, "target", "quality", key + ".json")
        self.known = json.load(open(self.path)) if os.path.exists(self.path) else {}

    def todo(self, fens):
        return [f for f in dict.fromkeys(fens) if f not in self.known]

    def save(self):
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        json.dump(self.known, open(self.path + ".tmp", "w"))
        os.replace(self.path + ".tmp", self.path)


def engine_key(kind, binary, off="", scale=None, net=None, hash_mb=16):
    """The cache key of an engine (PipeEngine's arguments): its binary by
    content hash; for kibitz also its evaluation (a net by content hash),
    search scale and switched-off techniques; Hash when it is not 16."""
    if kind != "kibitz":
        key = "uci-" + file_sha(binary or STOCKFISH)
    else:
        net = net or NET
        ev = net if net in ("hand-written", "<built-in>") else "net-" + file_sha(net)
        key = f"kibitz-{file_sha(binary or KIBITZ)}-{ev.replace('<', '').replace('>', '')}"
        key += f"-scale-{scale}" if scale else ""
        key += f"-off-{off.replace(',', '+')}" if off else ""
    return key + (f"-hash{hash_mb}" if hash_mb != 16 else "")


def run_cached(kind, binary, depth, fens, jobs, off="", scale=None, net=None, hash_mb=16):
    """(bestmove, nodes, score) of every fen at `depth`, from the cache or
    searched, `jobs` engine processes side by side (the searches are
    deterministic, so splitting them changes nothing but the time)."""
    cache = Cached(f"{engine_key(kind, binary, off, scale, net, hash_mb)}-d{depth}")
    todo = cache.todo(fens)
    if todo:
        parts = [todo[i::jobs] for i in range(jobs)]

        def work(part):
            e = PipeEngine(kind, binary, off, scale, hash_mb, net)
            out = {}
            for fen in part:
                best, nodes, score = e.search_scored(fen, depth)
                out[fen] = (best, nodes, score)
            e.quit()
            return out

        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            for out in pool.map(work, parts):
                cache.known.update(out)
        cache.save()
    return [tuple(cache.known[f]) for f in fens]


def held_out(fen, share, seed):
    """Whether a position is in the held-out share: a seeded hash of its
    FEN, so a position keeps its side of the split whatever else is drawn."""
    h = int.from_bytes(hashlib.sha256(f"{seed}:{fen}".encode()).digest()[:8], "little")
    return h / 2**64 < share


def interpolate(curve, x):
    """The y of a curve [(x, y)] (x increasing) at `x`, linear between the
    two points around it; None outside the curve."""
    for (x0, y0), (x1, y1) in zip(curve, curve[1:]):
        if x0 <= x <= x1:
            w = 0 if x1 == x0 else (x - x0) / (x1 - x0)
            return y0 + w * (y1 - y0), w, (x0, x1)
    return None


def at_nodes(kib, depths, target_nodes, rows):
    """Kibitz's agreement read off its curve at `target_nodes` (linear in log
    nodes between the two kibitz depths around it), as per-position values
    (1 - w) * right_d + w * right_{d+1}, so that a difference with another
    engine on the same positions has a paired interval. None when the
    target lies outside kibitz's depths."""
    curve = [(math.log(max(1.0, sum(kib[d][i][1] for i in rows) / len(rows))), d) for d in depths]
    for (x0, d0), (x1, d1) in zip(curve, curve[1:]):
        x = math.log(target_nodes)
        if x0 <= x <= x1:
            w = 0 if x1 == x0 else (x - x0) / (x1 - x0)
            return [(1 - w) * kib[d0][i][3] + w * kib[d1][i][3] for i in rows], (d0, d1, w)
    return None


def paired(xs, ys):
    """Mean of xs - ys and its 95% interval (normal approximation of the
    paired differences)."""
    n = len(xs)
    diffs = [x - y for x, y in zip(xs, ys)]
    mean = sum(diffs) / n
    var = sum((d - mean) ** 2 for d in diffs) / max(1, n - 1)
    half = 1.96 * math.sqrt(var / n)
    return mean, half


def cmd_curve(args):
    """The agreement-per-node curve: per source and pooled, tuning and
    held-out shares apart. Kibitz at --kibitz-depths and Stockfish at
    --sf-depths, both against Stockfish depth 16; kibitz's agreement read
    at Stockfish's node counts; with --baseline, the same for another kibitz
    binary and paired tests of the change; with --rounds, speeds as medians
    of interleaved rounds and labels per CPU."""
    names = source_names(args)
    binaries = {"new": os.path.abspath(KIBITZ)}
    offs = {"new": args.off, "base": args.baseline_off}
    if args.baseline or args.baseline_off is not None:
        binaries["base"] = os.path.abspath(args.baseline or KIBITZ)
    data = {}
    for name in names:
        fens = sample_source(name, args.positions)
        ref = source_reference(name, fens)
        data[name] = (fens, ref)
    print(f"{args.positions} positions per source ({len(names)} sources); held out: a share of "
          f"{args.held_out} by a seeded hash of the FEN (seed {args.split_seed}); reference: "
          f"Stockfish 15.1 depth 16; kibitz with {eval_name()}; one thread, Hash 16, ucinewgame "
          f"before each position, raw UCI over pipes", flush=True)
    # Per engine and depth: a list over all positions (source by source) of
    # (best, nodes, score, right).
    all_fens = [f for n in names for f in data[n][0]]
    all_ref = [r for n in names for r in data[n][1]]
    src_of = [n for n in names for _ in data[n][0]]
    results = {}
    for label, binary in binaries.items():
        results[label] = {}
        for d in args.kibitz_depths:
            res = run_cached("kibitz", binary, d, all_fens, args.jobs, offs[label] or "")
            results[label][d] = [(b, n, s, int(b == r[0])) for (b, n, s), r in zip(res, all_ref)]
            print(f"  kibitz {label} d{d}: done", flush=True)
    results["sf"] = {}
    for d in args.sf_depths:
        res = run_cached("stockfish", None, d, all_fens, args.jobs)
        results["sf"][d] = [(b, n, s, int(b == r[0])) for (b, n, s), r in zip(res, all_ref)]
    if args.second_reference:
        # A second reference, kibitz's own deep search: agreement with an
        # engine's own deep search favours that engine (they break ties and
        # prune alike), so each engine is also held to the other's.
        kref = run_cached("kibitz", binaries["new"], args.second_reference, all_fens, args.jobs,
                          offs["new"] or "")
        print(f"\nagreement with each reference (pooled, {len(all_fens)} positions): Stockfish depth 16 "
              f"and kibitz depth {args.second_reference}, and their mean")
        for label, depths in [("sf", args.sf_depths), ("new", args.kibitz_depths)]:
            for d in depths:
                r = results[label][d]
                a_sf = sum(x[3] for x in r) / len(r)
                a_k = sum(1 for x, k in zip(r, kref) if x[0] == k[0]) / len(r)
                nodes = sum(x[1] for x in r) / len(r)
                name = "Stockfish" if label == "sf" else "kibitz"
                print(f"  {name:<10} d{d:<3} {nodes:>8.0f} nodes: SF d16 {a_sf:.1%}, kibitz "
                      f"d{args.second_reference} {a_k:.1%}, mean {(a_sf + a_k) / 2:.1%}")
        same = sum(1 for k, r in zip(kref, all_ref) if k[0] == r[0]) / len(all_ref)
        print(f"  kibitz d{args.second_reference} against Stockfish d16: {same:.1%}")
    split = [held_out(f, args.held_out, args.split_seed) for f in all_fens]
    groups = [("pooled", lambda i: True), ("tuning", lambda i: not split[i]),
              ("held-out", lambda i: split[i])]
    groups += [(n, (lambda n: lambda i: src_of[i] == n)(n)) for n in names]
    report = {}
    for gname, member in groups:
        rows = [i for i in range(len(all_fens)) if member(i)]
        if not rows:
            continue
        line = {"positions": len(rows)}
        print(f"\n{gname}: {len(rows)} positions")
        for label in ["sf"] + list(binaries):
            depths = args.sf_depths if label == "sf" else args.kibitz_depths
            for d in depths:
                r = results[label][d]
                agree = sum(r[i][3] for i in rows) / len(rows)
                nodes = sum(r[i][1] for i in rows) / len(rows)
                line[f"{label}-d{d}"] = {"agree": agree, "nodes": nodes}
                name = "Stockfish" if label == "sf" else f"kibitz {label}"
                print(f"  {name:<14} d{d:<3} {agree:>6.1%} agree {nodes:>9.0f} nodes/pos")
        for sd in args.sf_depths:
            sf = results["sf"][sd]
            target = sum(sf[i][1] for i in rows) / len(rows)
            sf_right = [sf[i][3] for i in rows]
            for label in binaries:
                got = at_nodes(results[label], args.kibitz_depths, target, rows)
                if got is None:
                    print(f"  at SF d{sd}'s {target:.0f} nodes: kibitz {label} outside d"
                          f"{args.kibitz_depths[0]}-{args.kibitz_depths[-1]}")
                    continue
                xs, (d0, d1, w) = got
                mean, half = paired(xs, sf_right)
                k = sum(xs) / len(xs)
                line[f"{label}-at-sf-d{sd}"] = {"kibitz": k, "sf": sum(sf_right) / len(rows),
                                               "diff": mean, "half": half, "nodes": target}
                print(f"  at SF d{sd}'s {target:>7.0f} nodes: kibitz {label} {k:.1%} (d{d0}-d{d1}, "
                      f"w {w:.2f}) vs SF {sum(sf_right) / len(rows):.1%}: {mean * 100:+.1f} "
                      f"[{(mean - half) * 100:+.1f}, {(mean + half) * 100:+.1f}] points")
            if "base" in binaries:
                a = at_nodes(results["new"], args.kibitz_depths, target, rows)
                b = at_nodes(results["base"], args.kibitz_depths, target, rows)
                if a and b:
                    mean, half = paired(a[0], b[0])
                    print(f"  change at SF d{sd}'s nodes: {mean * 100:+.2f} [{(mean - half) * 100:+.2f}, "
                          f"{(mean + half) * 100:+.2f}] points (paired)")
                    line[f"change-at-sf-d{sd}"] = {"diff": mean, "half": half}
        if "base" in binaries:
            for d in args.kibitz_depths:
                new = [results["new"][d][i][3] for i in rows]
                base = [results["base"][d][i][3] for i in rows]
                b = sum(1 for x, y in zip(new, base) if x and not y)
                c = sum(1 for x, y in zip(new, base) if y and not x)
                nn = sum(results["new"][d][i][1] for i in rows) / len(rows)
                nb = sum(results["base"][d][i][1] for i in rows) / len(rows)
                print(f"  d{d}: new {sum(new) / len(rows):.1%} at {nn:.0f} nodes, base "
                      f"{sum(base) / len(rows):.1%} at {nb:.0f}; new alone right {b}, base alone "
                      f"{c}, McNemar p = {mcnemar_p(b, c):.3f}")
                line[f"mcnemar-d{d}"] = {"new_only": b, "base_only": c, "p": mcnemar_p(b, c)}
        report[gname] = line
    if args.rounds:
        report["speed"] = curve_speed(args, names, data, binaries["new"], results)
    if args.json:
        json.dump(report, open(args.json, "w"), indent=1)


def resolve_net(net):
    """kibitz's EvalFile for a net named as --net names it: "<built-in>" for
    `builtin`, a net file's absolute path, or "hand-written"."""
    if net == "builtin":
        return "<built-in>"
    if net and net != "hand-written":
        if not os.path.exists(net):
            sys.exit(f"{net}: no such net (export Stockfish's: printf 'uci\\nexport_net "
                     f"{net}\\nquit\\n' | {STOCKFISH}; or builtin|hand-written)")
        return os.path.abspath(net)
    return "hand-written"


def use_net(net):
    """Sets the evaluation kibitz's engines are started with (as --net)."""
    global NET
    NET = resolve_net(net)
    return NET


def cmd_nets(args):
    """Two evaluations of one kibitz binary held to each other at equal
    positions per second: agreement with Stockfish depth 16 at each depth,
    speeds from interleaved rounds, and the first's agreement at the
    second's speeds at depths 8 and 10, paired."""
    names = source_names(args)
    binary = os.path.abspath(KIBITZ)
    evals = {"net": use_net(args.net), "versus": use_net(args.versus)}
    scales = {"net": args.net_scale, "versus": None}
    depths = args.kibitz_depths
    data = {}
    for name in names:
        fens = sample_source(name, args.positions)
        data[name] = (fens, source_reference(name, fens))
    all_fens = [f for n in names for f in data[n][0]]
    all_ref = [r for n in names for r in data[n][1]]
    src_of = [n for n in names for _ in data[n][0]]
    print(f"{args.positions} positions per source ({len(names)} sources); held out: a share of "
          f"{args.held_out} by a seeded hash of the FEN (seed {args.split_seed}); reference: "
          f"Stockfish 15.1 depth 16; kibitz {binary} with {evals['net']} against "
          f"{evals['versus']}{f' (--net with search scale {args.net_scale})' if args.net_scale else ''}; one thread, Hash 16, ucinewgame before each position, raw UCI "
          f"over pipes", flush=True)
    results = {}
    for label, net in evals.items():
        use_net(net)
        results[label] = {}
        for d in depths:
            res = run_cached("kibitz", binary, d, all_fens, args.jobs, scale=scales[label])
            results[label][d] = [(b, n, s, int(b == r[0])) for (b, n, s), r in zip(res, all_ref)]
        print(f"  {label}: searched", flush=True)
    # Speeds: both evaluations, every depth, interleaved position by
    # position (the order flips every position and round).
    timed = {n: data[n][0][:args.speed_positions] for n in names}
    engines = {}
    for label, net in evals.items():
        use_net(net)
        engines[label] = PipeEngine("kibitz", binary, scale=scales[label])
    runs = [(label, d) for label in evals for d in depths]
    per_round = {(n, r): [] for n in names for r in runs}
    for rnd in range(args.rounds):
        secs = {(n, r): 0.0 for n in names for r in runs}
        i = 0
        for n in names:
            for fen in timed[n]:
                order = runs if (i + rnd) % 2 == 0 else list(reversed(runs))
                i += 1
                for label, d in order:
                    t = time.perf_counter()
                    engines[label].search_scored(fen, d)
                    secs[(n, (label, d))] += time.perf_counter() - t
        for key, v in secs.items():
            per_round[key].append(v / len(timed[key[0]]))
        print(f"  speed round {rnd + 1}: done", flush=True)
    for e in engines.values():
        e.quit()

    def median(v):
        v = sorted(v)
        return v[len(v) // 2]

    # Seconds a position: per source, and pooled (every source's positions
    # weighted alike), each the median over rounds.
    sec = {(n, r): median(per_round[(n, r)]) for n in names for r in runs}
    pooled_rounds = {r: [sum(per_round[(n, r)][k] for n in names) / len(names)
                         for k in range(args.rounds)] for r in runs}
    sec_pooled = {r: median(v) for r, v in pooled_rounds.items()}
    split = [held_out(f, args.held_out, args.split_seed) for f in all_fens]
    groups = [("pooled", lambda i: True, None), ("tuning", lambda i: not split[i], None),
              ("held-out", lambda i: split[i], None)]
    groups += [(n, (lambda n: lambda i: src_of[i] == n)(n), n) for n in names]
    report = {"evaluations": evals, "depths": depths, "rounds": args.rounds,
              "speed_positions": args.speed_positions}
    print(f"\nspeed: {args.speed_positions} positions a source, {args.rounds} interleaved rounds, "
          f"medians (positions per second)")
    for label in evals:
        row = "  ".join(f"d{d} {1 / sec_pooled[(label, d)]:.1f}" for d in depths)
        print(f"  {label:<7} {row}")
    for gname, member, source in groups:
        rows = [i for i in range(len(all_fens)) if member(i)]
        if not rows:
            continue
        seconds = (lambda r: sec[(source, r)]) if source else (lambda r: sec_pooled[r])
        line = {"positions": len(rows)}
        print(f"\n{gname}: {len(rows)} positions")
        for label in evals:
            for d in depths:
                r = results[label][d]
                agree = sum(r[i][3] for i in rows) / len(rows)
                nodes = sum(r[i][1] for i in rows) / len(rows)
                line[f"{label}-d{d}"] = {"agree": agree, "nodes": nodes,
                                         "per_second": 1 / seconds((label, d))}
                print(f"  {label:<7} d{d:<3} {agree:>6.1%} agree {nodes:>9.0f} nodes "
                      f"{1 / seconds((label, d)):>7.1f} pos/s")
        curve = [(math.log(seconds(("net", d))), d) for d in depths]
        for vd in (8, 10):
            if vd not in depths:
                continue
            x = math.log(seconds(("versus", vd)))
            got = None
            for (x0, d0), (x1, d1) in zip(curve, curve[1:]):
                if x0 <= x <= x1:
                    w = 0 if x1 == x0 else (x - x0) / (x1 - x0)
                    got = ([(1 - w) * results["net"][d0][i][3] + w * results["net"][d1][i][3]
                            for i in rows], d0, d1, w)
                    break
            v_right = [results["versus"][vd][i][3] for i in rows]
            v = sum(v_right) / len(rows)
            if got is None:
                print(f"  at versus d{vd}'s {1 / math.exp(x):.1f} pos/s: net outside its depths")
                line[f"at-versus-d{vd}"] = None
                continue
            xs, d0, d1, w = got
            mean, half = paired(xs, v_right)
            k = sum(xs) / len(xs)
            line[f"at-versus-d{vd}"] = {"net": k, "versus": v, "diff": mean, "half": half,
                                        "per_second": 1 / math.exp(x), "between": [d0, d1, w]}
            print(f"  at versus d{vd}'s {1 / math.exp(x):>6.1f} pos/s: net {k:.1%} (d{d0}-d{d1}, "
                  f"w {w:.2f}) vs {v:.1%}: {mean * 100:+.1f} [{(mean - half) * 100:+.1f}, "
                  f"{(mean + half) * 100:+.1f}] points")
        report[gname] = line
    if args.json:
        json.dump(report, open(args.json, "w"), indent=1)


def curve_speed(args, names, data, binary, results):
    """Seconds a position at each kibitz depth and each Stockfish depth, on
    the first --speed-positions of every source, one engine at a time, the
    engines and depths interleaved position by position, --rounds rounds,
    medians; then positions per second at Stockfish d8's and d10's agreement
    (kibitz's time read off its curve, linear in log time) and the ratio."""
    fens = [f for n in names for f in data[n][0][:args.speed_positions]]
    kib = PipeEngine("kibitz", binary, args.off or None)
    sf = PipeEngine("stockfish")
    runs = [("kibitz", d) for d in args.kibitz_depths] + [("sf", d) for d in args.sf_depths]
    rounds = {r: [] for r in runs}
    for rnd in range(args.rounds):
        secs = {r: 0.0 for r in runs}
        for i, fen in enumerate(fens):
            order = runs if (i + rnd) % 2 == 0 else list(reversed(runs))
            for kind, d in order:
                e = kib if kind == "kibitz" else sf
                t = time.perf_counter()
                e.search_scored(fen, d)
                secs[(kind, d)] += time.perf_counter() - t
        for r in runs:
            rounds[r].append(secs[r] / len(fens))
    kib.quit()
    sf.quit()
    med = {r: sorted(v)[len(v) // 2] for r, v in rounds.items()}
    print(f"\nspeed: {len(fens)} positions, {args.rounds} interleaved rounds, medians")
    out = {}
    for kind, d in runs:
        print(f"  {kind:<7} d{d:<3} {1 / med[(kind, d)]:>8.1f} pos/s")
        out[f"{kind}-d{d}"] = 1 / med[(kind, d)]
    n = len(data[names[0]][0]) * len(names)
    rows = range(n)
    curve = []
    for d in args.kibitz_depths:
        agree = sum(results["new"][d][i][3] for i in rows) / n
        curve.append((agree, math.log(med[("kibitz", d)])))
    curve.sort()
    for sd in (8, 10):
        if ("sf", sd) not in med:
            continue
        target = sum(results["sf"][sd][i][3] for i in rows) / n
        got = interpolate(curve, target)
        if got is None:
            print(f"  at SF d{sd}'s agreement {target:.1%}: outside kibitz's depths")
            continue
        t = math.exp(got[0])
        ratio = med[("sf", sd)] / t
        print(f"  at SF d{sd}'s agreement {target:.1%}: kibitz {1 / t:.1f} pos/s, Stockfish "
              f"{1 / med[('sf', sd)]:.1f} pos/s: {ratio:.2f}x")
        out[f"ratio-at-sf-d{sd}"] = ratio
    return out


class Engine:
    """An engine named on the command line (--engine, --engines):

        kibitz                  $KIBITZ with --net's evaluation
        kibitz@NET              $KIBITZ with NET (a net file, `builtin` or
                                `hand-written`)
        kibitzLABEL[=PATH][@NET]
                                the same under another label, or another
                                kibitz binary: a name starting with
                                "kibitz" is run as `PATH uci` with EvalFile
        NAME=PATH               any other UCI engine, run as PATH

    Its label is NAME, except that plain `kibitz` is labelled kibitz@ and
    the net's file name (kibitz@nn-1a298aa575a0), so that two nets of one
    binary can be told apart."""

    def __init__(self, spec, default_net=None):
        if spec.startswith("kibitz"):
            head, at, net = spec.partition("@")
            name, _, path = head.partition("=")
            self.kind = "kibitz"
            self.net = resolve_net(net if at else default_net)
            self.binary = path or KIBITZ
            self.label = name if name != "kibitz" else "kibitz@" + net_name(self.net)
        else:
            name, eq, path = spec.partition("=")
            if not eq or not name or not path:
                sys.exit(f"{spec}: an engine is kibitz, kibitz@NET or NAME=PATH")
            self.kind, self.net, self.label = "uci", None, name
            self.binary = path if os.path.exists(path) else (shutil.which(path) or path)
        if not os.path.exists(self.binary):
            sys.exit(f"{spec}: no such binary {self.binary}")
        self.binary = os.path.abspath(self.binary)

    def open(self, hash_mb=16):
        return PipeEngine(self.kind, self.binary, hash_mb=hash_mb, net=self.net)

    def run_cached(self, depth, fens, jobs, hash_mb=16):
        return run_cached(self.kind, self.binary, depth, fens, jobs, net=self.net, hash_mb=hash_mb)

    def describe(self):
        ev = f", {eval_of(self.net)}" if self.kind == "kibitz" else ""
        return f"{self.label}: {self.binary} (sha256 {file_sha(self.binary)}{ev})"


def net_name(net):
    """A short name of kibitz's evaluation: the net file's name without
    .nnue, `builtin` or `hand-written`."""
    if net == "<built-in>":
        return "builtin"
    if net == "hand-written":
        return net
    return os.path.splitext(os.path.basename(net))[0]


def eval_of(net):
    return net if net in ("hand-written", "<built-in>") else f"net {net}, sha256 {file_sha(net)}"


def engines_of(specs, default_net):
    """[(Engine, depths)] of `--engines SPEC:DEPTHS ...` (DEPTHS: 8,10,12)."""
    out = []
    for s in specs:
        spec, colon, depths = s.rpartition(":")
        if not colon or not re.fullmatch(r"\d+(,\d+)*", depths):
            sys.exit(f"{s}: expected SPEC:DEPTHS, e.g. kibitz@NET:7,8,9 or native=PATH:8,10,12")
        out.append((Engine(spec, default_net), sorted({int(d) for d in depths.split(",")})))
    labels = [e.label for e, _ in out]
    for label in labels:
        if labels.count(label) > 1:
            sys.exit(f"two engines labelled {label}: name one (e.g. kibitz151@NET)")
    return out


# Committed references (JSON, {fen: [bestmove, nodes, score]}), and where
# the searches of this script are cached (references written by
# `reference` too, unless --out says otherwise).
REFERENCES = os.path.join(ROOT, "data", "references")
QUALITY = os.path.join(ROOT, "target", "quality")


def reference_path(arg):
    """A reference's file: `arg` itself, else a file of that name (with or
    without .json and the ref- prefix) in data/references/, else in
    target/quality/."""
    if os.path.isfile(arg):
        return arg
    for folder in (REFERENCES, QUALITY):
        for name in (arg, arg + ".json", f"ref-{arg}.json"):
            if os.path.isfile(os.path.join(folder, name)):
                return os.path.join(folder, name)
    sys.exit(f"{arg}: no such reference (a file, or a name in {REFERENCES} or {QUALITY})")


def load_references(args):
    """{name: (path, {fen: [bestmove, nodes, score]})} of --reference, or
    without it, of every JSON file in data/references/ (else every ref-*.json
    in target/quality/). A reference's name is its file's name without
    .json and the ref- prefix."""
    if args.reference:
        paths = [reference_path(a) for a in args.reference]
    else:
        paths = (sorted(glob.glob(os.path.join(REFERENCES, "*.json")))
                 or sorted(glob.glob(os.path.join(QUALITY, "ref-*.json"))))
        if not paths:
            sys.exit(f"no references in {REFERENCES} or {QUALITY}: write one with `reference`, "
                     f"or name one with --reference FILE")
    refs = {}
    for path in paths:
        name = os.path.basename(path)
        name = name[:-len(".json")] if name.endswith(".json") else name
        name = name[len("ref-"):] if name.startswith("ref-") else name
        if name in refs:
            sys.exit(f"two references named {name}: {refs[name][0]} and {path}")
        refs[name] = (path, json.load(open(path)))
    return refs


def cmd_reference(args):
    """Writes one engine's reference: (bestmove, nodes, score) at --depth of
    --positions of every source, one thread, Hash --hash, ucinewgame before
    each position, as {fen: [bestmove, nodes, score]} to --out. Positions
    already in the file are skipped and the file is replaced atomically
    every 10 searches, so an interrupted run resumes where it stopped (with
    the same engine and settings: the file does not record them)."""
    if not args.engine:
        sys.exit("reference: --engine SPEC (kibitz, kibitz@NET or NAME=PATH)")
    engine = Engine(args.engine, args.net)
    out = args.out or os.path.join(
        QUALITY, f"ref-{re.sub(r'[^A-Za-z0-9._-]', '-', engine.label)}-"
                 f"{file_sha(engine.binary)[:8]}-d{args.depth}.json")
    known = json.load(open(out)) if os.path.exists(out) else {}
    names = source_names(args)
    source_of = {}
    for name in names:
        for fen in sample_source(name, args.positions):
            source_of.setdefault(fen, name)
    todo = [f for f in source_of if f not in known]
    print(f"{engine.describe()}\ndepth {args.depth}, one thread, Hash {args.hash}, ucinewgame "
          f"before each position; {args.positions} positions a source ({len(names)} sources): "
          f"{len(source_of) - len(todo)} already in {out}, {len(todo)} to search, "
          f"{args.jobs} at a time", flush=True)
    lock = threading.Lock()
    done = [0]
    start = time.perf_counter()

    def save():
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        with open(out + ".tmp", "w") as f:
            json.dump(known, f)
        os.replace(out + ".tmp", out)

    # On an interrupt the engines are stopped at once (a depth-20 search can
    # take a minute) and what is done is saved.
    stop = threading.Event()
    procs = []

    def work(part):
        e = engine.open(args.hash)
        with lock:
            procs.append(e)
        try:
            for fen in part:
                if stop.is_set():
                    return
                try:
                    best, nodes, score = e.search_scored(fen, args.depth)
                except RuntimeError:
                    if stop.is_set():
                        return
                    raise
                with lock:
                    known[fen] = [best, nodes, score]
                    done[0] += 1
                    if done[0] % 10 == 0:
                        save()
                        secs = time.perf_counter() - start
                        print(f"  {done[0]}/{len(todo)} ({source_of[fen]}), {secs / done[0]:.2f} s "
                              f"a position", flush=True)
        finally:
            e.quit()

    try:
        if todo:
            with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
                futures = [pool.submit(work, todo[i::args.jobs]) for i in range(args.jobs)]
                try:
                    for f in futures:
                        f.result()
                except BaseException:
                    stop.set()
                    with lock:
                        for e in procs:
                            e.p.terminate()
                    raise
    except KeyboardInterrupt:
        stop.set()
    finally:
        if done[0]:
            with lock:
                save()
    print(f"{out}: {len(known)} positions ({done[0]} searched now, "
          f"{time.perf_counter() - start:.0f} s){'; interrupted' if stop.is_set() else ''}")
    if stop.is_set():
        sys.exit(130)


def labels_speed(args, engines, timed):
    """{(source or "pooled", (label, depth)): (positions a second, nodes a
    second)} on `timed` ({source: fens}), always searched afresh: one
    process per engine, every engine and depth taking turns position by
    position (the order reversed every other position and round), so a
    slow spell of the machine falls on all alike; --rounds rounds, medians
    of each source's seconds and of the pooled seconds. Nothing without
    positions to time (--speed-positions 0)."""
    names = [n for n in timed if timed[n]]
    if not names or not args.rounds:
        return {}
    procs = {e.label: e.open(args.hash) for e, _ in engines}
    runs = [(e.label, d) for e, depths in engines for d in depths]
    secs = {(n, r): [] for n in names for r in runs}
    nodes = {(n, r): 0 for n in names for r in runs}
    # One untimed search a process first: its first search pays for
    # faulting in the net and the tables.
    for e, depths in engines:
        procs[e.label].search_scored(timed[names[0]][0], depths[0])
    for rnd in range(args.rounds):
        took = {key: 0.0 for key in secs}
        i = 0
        for n in names:
            for fen in timed[n]:
                order = runs if (i + rnd) % 2 == 0 else runs[::-1]
                i += 1
                for label, d in order:
                    t = time.perf_counter()
                    _, k, _ = procs[label].search_scored(fen, d)
                    took[(n, (label, d))] += time.perf_counter() - t
                    if rnd == 0:
                        nodes[(n, (label, d))] += k
        for key, v in took.items():
            secs[key].append(v)
        print(f"  speed round {rnd + 1} of {args.rounds}: done", flush=True)
    for p in procs.values():
        p.quit()

    def median(v):
        return sorted(v)[len(v) // 2]

    out = {}
    total = sum(len(timed[n]) for n in names)
    for r in runs:
        for n in names:
            s = median(secs[(n, r)])
            out[(n, r)] = (len(timed[n]) / s, nodes[(n, r)] / s)
        s = median([sum(secs[(n, r)][k] for n in names) for k in range(args.rounds)])
        out[("pooled", r)] = (total / s, sum(nodes[(n, r)] for n in names) / s)
    return out


def cmd_labels(args):
    """Best-move agreement of every --engines configuration with each
    reference and with their mean, nodes a position (all counted positions,
    cached searches) and positions and nodes a second (fresh interleaved
    searches of the first --speed-positions a source), per source, pooled
    and on the held-out share; then the goals' rows: each kibitz
    configuration at --yardstick's agreement at each --goals depth."""
    if not args.engines:
        sys.exit("labels: --engines SPEC:DEPTHS ... (e.g. kibitz@NET:7,8,9 native=PATH:8,10)")
    engines = engines_of(args.engines, args.net)
    by_label = {e.label: (e, depths) for e, depths in engines}
    yardstick = args.yardstick or ("native" if "native" in by_label else next(
        (e.label for e, _ in engines if e.kind != "kibitz"), None))
    if yardstick is not None and yardstick not in by_label:
        sys.exit(f"--yardstick {yardstick}: not among the engines ({', '.join(by_label)})")
    refs = load_references(args)
    names = source_names(args)
    counted = {}
    for name in names:
        fens = sample_source(name, args.positions)
        counted[name] = [f for f in dict.fromkeys(fens) if all(f in data for _, data in refs.values())]
    all_fens = [f for n in names for f in counted[n]]
    src_of = [n for n in names for _ in counted[n]]
    split = [held_out(f, args.held_out, args.split_seed) for f in all_fens]
    print(f"{args.positions} positions a source sampled; counted, being in every reference: "
          f"{len(all_fens)} ({', '.join(f'{n} {len(counted[n])}' for n in names)}), "
          f"{sum(split)} of them held out (a share of {args.held_out} by a seeded hash of the "
          f"FEN, seed {args.split_seed})")
    print("references:")
    for r, (path, data) in refs.items():
        print(f"  {r}: {path}, {len(data)} positions")
    if not all_fens:
        sys.exit("no position is in every reference")
    ref_moves = {r: [data[f][0] for f in all_fens] for r, (_, data) in refs.items()}
    listed = list(refs)
    for a, b in [(a, b) for k, a in enumerate(listed) for b in listed[k + 1:]]:
        same = sum(x == y for x, y in zip(ref_moves[a], ref_moves[b])) / len(all_fens)
        print(f"  {a} and {b} choose the same move in {same:.1%}")
    print("engines (one thread, Hash {}, ucinewgame before each position, raw UCI over pipes):"
          .format(args.hash))
    for e, depths in engines:
        print(f"  {e.describe()}, depths {','.join(map(str, depths))}")
    print(flush=True)

    # Per configuration and depth, over the counted positions: nodes, and
    # 1/0 per reference for the same move as that reference, and their mean.
    results = {}
    for e, depths in engines:
        for d in depths:
            res = e.run_cached(d, all_fens, args.jobs, args.hash)
            right = {r: [int(b == m) for (b, _, _), m in zip(res, moves)]
                     for r, moves in ref_moves.items()}
            mean = [sum(right[r][i] for r in refs) / len(refs) for i in range(len(all_fens))]
            results[(e.label, d)] = {"nodes": [n for _, n, _ in res], "right": right, "mean": mean}
            print(f"  {e.label} d{d}: searched", flush=True)
    timed = {n: counted[n][:args.speed_positions] for n in names}
    speed = labels_speed(args, engines, timed)

    report = {"references": {r: {"path": p, "positions": len(data)} for r, (p, data) in refs.items()},
              "sampled_per_source": args.positions,
              "counted": {n: len(counted[n]) for n in names},
              "held_out": {"share": args.held_out, "seed": args.split_seed, "positions": sum(split)},
              "engines": {e.label: {"binary": e.binary, "sha256": file_sha(e.binary),
                                    "net": e.net, "depths": depths} for e, depths in engines},
              "hash": args.hash, "rounds": args.rounds,
              "speed_positions": {n: len(timed[n]) for n in names}, "groups": {}}
    print(f"\nspeed: the first {args.speed_positions} counted positions a source "
          f"({sum(len(v) for v in timed.values())} in all), searched afresh, engines and depths "
          f"taking turns position by position, {args.rounds} round(s), medians; agreement and "
          f"nodes a position from every counted position; `mean` is the mean over the "
          f"references of 1 for the same move as that reference, else 0")
    groups = [("pooled", "pooled", lambda i: True), ("held-out", "pooled", lambda i: split[i])]
    groups += [(n, n, (lambda n: lambda i: src_of[i] == n)(n)) for n in names]
    width = max(len(e.label) for e, _ in engines)
    cols = [max(7, len(r)) for r in refs]
    for gname, skey, member in groups:
        rows = [i for i in range(len(all_fens)) if member(i)]
        if not rows:
            continue
        line = {"positions": len(rows), "rows": {}, "goals": []}
        head = "  ".join(f"{r:>{w}}" for r, w in zip(refs, cols))
        print(f"\n{gname}: {len(rows)} positions{' (speeds pooled)' if gname == 'held-out' else ''}")
        print(f"  {'engine':<{width}} {'depth':>5}  {head}     mean  nodes/pos    pos/s  Mnodes/s")
        for e, depths in engines:
            for d in depths:
                res = results[(e.label, d)]
                agree = {r: sum(res["right"][r][i] for i in rows) / len(rows) for r in refs}
                mean = sum(res["mean"][i] for i in rows) / len(rows)
                nodes = sum(res["nodes"][i] for i in rows) / len(rows)
                rate, nps = speed.get((skey, (e.label, d)), (None, None))
                line["rows"][f"{e.label}-d{d}"] = {"agree": agree, "mean": mean, "nodes": nodes,
                                                   "per_second": rate, "nodes_per_second": nps}
                cells = "  ".join(f"{agree[r]:>{w}.1%}" for r, w in zip(refs, cols))
                timing = f"{rate:>7.1f}  {nps / 1e6:>8.2f}" if rate else f"{'-':>7}  {'-':>8}"
                print(f"  {e.label:<{width}} {d:>5}  {cells}  {mean:>7.1%}  {nodes:>9.0f}  {timing}")
        if yardstick is not None and (skey, (yardstick, by_label[yardstick][1][0])) in speed:
            for goal_row in labels_goals(args, engines, by_label[yardstick], results, speed, skey, rows):
                line["goals"].append(goal_row)
        report["groups"][gname] = line
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


def labels_goals(args, engines, yard, results, speed, skey, rows):
    """The goals' rows of one group: for each --goals depth D of the
    yardstick, each kibitz configuration's depth at the yardstick's
    agreement with the mean reference at D (linear between depths) and
    its positions a second there (linear in log time), as a ratio to the
    yardstick's at D; and, paired position by position with a 95%
    interval, kibitz's agreement at the goal's speed (the ratio times
    the yardstick's positions a second; linear in log time between depths)
    minus the yardstick's. Returns the rows for --json."""
    y, ydepths = yard
    out = []

    def mean_of(vals):
        return sum(vals) / len(vals)

    for yd, goal in args.goals:
        if yd not in ydepths:
            continue
        y_right = [results[(y.label, yd)]["mean"][i] for i in rows]
        target = mean_of(y_right)
        y_sec = 1 / speed[(skey, (y.label, yd))][0]
        print(f"  goal: {y.label} d{yd}'s {target:.1%} mean agreement at {1 / y_sec:.1f} pos/s, "
              f"kibitz at >= {goal}x its pos/s")
        for e, depths in engines:
            if e.kind != "kibitz":
                continue
            agree = [mean_of([results[(e.label, d)]["mean"][i] for i in rows]) for d in depths]
            logt = [math.log(1 / speed[(skey, (e.label, d))][0]) for d in depths]
            row = {"yardstick": y.label, "depth": yd, "goal": goal, "kibitz": e.label,
                   "target": target, "yardstick_per_second": 1 / y_sec}
            # Equal agreement: the first two depths around the target.
            reach = None
            for k in range(len(depths) - 1):
                if agree[k] <= target <= agree[k + 1]:
                    w = 0 if agree[k + 1] == agree[k] else (target - agree[k]) / (agree[k + 1] - agree[k])
                    reach = (depths[k] + w * (depths[k + 1] - depths[k]),
                             math.exp((1 - w) * logt[k] + w * logt[k + 1]))
                    break
            if reach is None and agree and agree[0] >= target:
                ratio = y_sec / math.exp(logt[0])
                text = (f"d{depths[0]} already {agree[0]:.1%} at {math.exp(-logt[0]):.1f} pos/s, "
                        f">= {ratio:.2f}x ({'met' if ratio >= goal else 'undecided: no lower depth'})")
                row.update(depth_reached=None, ratio_at_least=ratio)
            elif reach is None:
                best = max(range(len(depths)), key=lambda k: agree[k])
                text = f"no depth reaches it (best d{depths[best]} {agree[best]:.1%})"
                row.update(depth_reached=None, ratio=None)
            else:
                ratio = y_sec / reach[1]
                text = (f"d{reach[0]:.2f} at {1 / reach[1]:.1f} pos/s: {ratio:.2f}x "
                        f"({'met' if ratio >= goal else 'not met'})")
                row.update(depth_reached=reach[0], per_second=1 / reach[1], ratio=ratio)
            # Equal speed: kibitz at the goal's positions a second, paired.
            x = math.log(y_sec / goal)
            for k in range(len(depths) - 1):
                if logt[k] <= x <= logt[k + 1]:
                    w = 0 if logt[k + 1] == logt[k] else (x - logt[k]) / (logt[k + 1] - logt[k])
                    xs = [(1 - w) * results[(e.label, depths[k])]["mean"][i]
                          + w * results[(e.label, depths[k + 1])]["mean"][i] for i in rows]
                    diff, half = paired(xs, y_right)
                    text += (f"; at {goal}x its pos/s (d{depths[k]}-d{depths[k + 1]}, w {w:.2f}) "
                             f"{mean_of(xs):.1%}: {diff * 100:+.1f} [{(diff - half) * 100:+.1f}, "
                             f"{(diff + half) * 100:+.1f}] points")
                    row.update(at_goal_speed=mean_of(xs), diff=diff, half=half)
                    break
            else:
                text += f"; at {goal}x its pos/s: outside d{depths[0]}-d{depths[-1]}'s speeds"
            print(f"    {e.label}: {text}")
            out.append(row)
    return out


def read_epd(path):
    text = zstd_text(path) if path.endswith(".zst") else open(path, encoding="utf-8", errors="replace").read()
    out = []
    for line in text.splitlines():
        line = line.strip().strip("\x00")
        if not line:
            continue
        try:
            board, ops = chess.Board.from_epd(line)
        except ValueError:
            continue
        out.append((board, ops))
    return out


def cmd_suites(args):
    kib = open_engine("kibitz")
    suites = [
        ("WAC 300", "epd/arasan_wac_original.epd"),
        ("Bratko-Kopec", "epd/bratko-kopec.epd"),
        ("BT-2450", "epd/BT2450.epd"),
    ]
    for depth in args.depths:
        for name, path in suites:
            items = read_epd(os.path.join(SHARED, path))
            solved = 0
            for board, ops in items:
                info = kib.analyse(board, chess.engine.Limit(depth=depth), game=object())
                move = info["pv"][0]
                bm = ops.get("bm") or []
                am = ops.get("am") or []
                if (bm and move in bm) or (am and move not in am and not bm):
                    solved += 1
            print(f"depth {depth}: {name}: {solved}/{len(items)} solved", flush=True)
        # STS: points per move from c8/c9 (c9: UCI moves, c8: points).
        items = read_epd(os.path.join(SHARED, "epd/STS1-STS15_LAN_v3.epd.zst"))
        points = 0
        top = 0
        for board, ops in items:
            moves = (ops.get("c9") or "").split()
            pts = [int(p) for p in (ops.get("c8") or "").split()]
            table = dict(zip(moves, pts))
            info = kib.analyse(board, chess.engine.Limit(depth=depth), game=object())
            points += table.get(info["pv"][0].uci(), 0)
            top += max(pts) if pts else 0
        print(f"depth {depth}: STS: {points}/{top} points ({len(items)} positions)", flush=True)
    kib.quit()


# Defaults of the options whose default depends on the command (None in
# the parser): the command's own, else the general one.
DEFAULTS = {
    "curve": {"sf_depths": [8, 10, 12], "rounds": 0},
    "nets": {"kibitz_depths": [7, 8, 9, 10, 11, 12], "speed_positions": 20},
    "reference": {"positions": 40, "hash": 64, "jobs": 1},
    "labels": {"positions": 40, "rounds": 1, "jobs": 1},
    None: {"positions": 1000, "sf_depths": [7, 8, 9, 10], "rounds": 3, "hash": 16, "jobs": 2,
           "kibitz_depths": [7, 8, 9, 10, 11, 12, 13], "speed_positions": 30},
}


def goal_of(text):
    """--goals' DEPTH:RATIO, e.g. 8:1.0."""
    depth, _, ratio = text.partition(":")
    try:
        return int(depth), float(ratio)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text}: expected DEPTH:RATIO, e.g. 8:1.0")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["suites", "agreement", "speed", "sources", "curve", "nets",
                                       "reference", "labels"])
    p.add_argument("--positions", type=int,
                   help="positions (agreement, speed; default 1000) or positions a source "
                        "(sources, curve, nets: default 1000; reference, labels: default 40)")
    p.add_argument("--depths", type=int, nargs="+", default=[8, 10])
    p.add_argument("--driver", choices=["python-chess", "pipe"], default="python-chess",
                   help="speed: drive the engines through python-chess (default) or raw UCI over pipes")
    p.add_argument("--kibitz-only", action="store_true",
                   help="agreement: run kibitz alone (Stockfish's depth-16 reference is cached in target/)")
    p.add_argument("--rounds", type=int,
                   help="speed, curve, nets, labels: timed rounds over the positions, medians "
                        "(default 3; curve 0, no timing; labels 1)")
    p.add_argument("--sources", nargs="+", choices=list(SOURCES) + ["all"],
                   help="sources, curve, nets, reference, labels: the sources to sample (default: all); "
                        "speed: draw the positions evenly from these (`all`: every source) "
                        "instead of the Lichess 2016 games, and report each apart")
    p.add_argument("--sf-depths", type=int, nargs="*",
                   help="sources, curve: Stockfish's depths (default 7-10; curve 8 10 12)")
    p.add_argument("--net", default=os.environ.get("KIBITZ_NET") or SF_NET,
                   help="kibitz evaluates with this net (Stockfish 15.1's or kibitz's own; its "
                        "EvalFile), `builtin` for the net built into kibitz, `hand-written` for "
                        "the hand-written evaluation; default KIBITZ_NET, else Stockfish 15.1's "
                        "net exported to target/nn-ad9b42354671.nnue")
    p.add_argument("--kibitz-depths", type=int, nargs="+",
                   help="curve, nets: kibitz's depths (default 7-13; nets 7-12)")
    p.add_argument("--net-scale", type=int,
                   help="nets: the search's margin scale for --net (KIBITZ_SEARCH_SCALE)")
    p.add_argument("--versus", default=SF_NET,
                   help="nets: the evaluation --net is held to (default Stockfish 15.1's net)")
    p.add_argument("--held-out", type=float, default=0.25,
                   help="curve, nets, labels: the share of every source held out of tuning, "
                        "reported apart")
    p.add_argument("--split-seed", type=int, default=1,
                   help="curve, nets, labels: the seed of the held-out split")
    p.add_argument("--baseline", help="curve: another kibitz binary, for paired tests of a change")
    p.add_argument("--jobs", type=int,
                   help="curve, nets, reference, labels: engine processes side by side for the "
                        "cached searches (default 2; reference and labels 1)")
    p.add_argument("--off", default="",
                   help="curve: techniques the kibitz searched switches off (KIBITZ_SEARCH_OFF)")
    p.add_argument("--baseline-off",
                   help="curve: the baseline is --baseline (default: the same kibitz) with these "
                        "techniques off")
    p.add_argument("--speed-positions", type=int,
                   help="curve, nets, labels: positions per source timed in the speed rounds "
                        "(default 30; nets 20; labels: 0 for no timing)")
    p.add_argument("--json", help="curve, nets, labels: write the figures here")
    p.add_argument("--second-reference", type=int, metavar="DEPTH",
                   help="curve: also hold both engines to kibitz's own search at DEPTH")
    p.add_argument("--engine", metavar="SPEC",
                   help="reference: the engine (kibitz, kibitz@NET or NAME=PATH)")
    p.add_argument("--depth", type=int, default=20, help="reference: the depth (default 20)")
    p.add_argument("--hash", type=int,
                   help="reference, labels: Hash in MB (default 64 for reference, 16 for labels)")
    p.add_argument("--out", metavar="FILE",
                   help="reference: the JSON file written and resumed (default "
                        "target/quality/ref-LABEL-SHA-dDEPTH.json)")
    p.add_argument("--reference", action="append", metavar="FILE",
                   help="labels: a reference, {fen: [bestmove, nodes, score]} (repeatable; a file, "
                        "or a name in data/references/ or target/quality/; default: every JSON "
                        "file in data/references/, else every ref-*.json in target/quality/)")
    p.add_argument("--engines", nargs="+", metavar="SPEC:DEPTHS",
                   help="labels: engine configurations, e.g. kibitz@NET:7,8,9 native=PATH:8,10,12")
    p.add_argument("--yardstick", metavar="LABEL",
                   help="labels: the engine the goals hold kibitz to (default `native`, else the "
                        "first engine that is not kibitz)")
    p.add_argument("--goals", type=goal_of, nargs="+", default=[(8, 1.0), (10, 0.8)],
                   metavar="DEPTH:RATIO",
                   help="labels: at the yardstick's agreement at DEPTH, kibitz at >= RATIO times "
                        "its positions a second (default 8:1.0 10:0.8)")
    args = p.parse_args()
    for name, value in {**DEFAULTS[None], **DEFAULTS.get(args.command, {})}.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    global REFERENCE_JOBS
    REFERENCE_JOBS = args.jobs
    if args.command not in ("reference", "labels"):
        # reference and labels resolve --net only for a plain `kibitz` engine.
        use_net(args.net)
    {"suites": cmd_suites, "agreement": cmd_agreement, "speed": cmd_speed,
     "sources": cmd_sources, "curve": cmd_curve, "nets": cmd_nets,
     "reference": cmd_reference, "labels": cmd_labels}[args.command](args)


if __name__ == "__main__":
    main()
