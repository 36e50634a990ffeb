#!/usr/bin/env python3
"""Search quality and speed of kibitz against Stockfish, side by side.

Drives `kibitz uci` and Stockfish (Debian's build, /usr/games/stockfish)
through python-chess's engine module: one thread, Hash 16, a fresh
`ucinewgame` before every position, `go depth N`.

    python3 scripts/search_quality.py suites   --depths 8 10
    python3 scripts/search_quality.py agreement --positions 1000 --depths 6 7 8 9 10 11 12
    python3 scripts/search_quality.py speed    --positions 1000 --depths 8 10
    python3 scripts/search_quality.py speed    --positions 1000 --depths 8 10 --driver pipe
    python3 scripts/search_quality.py sources  --positions 100 --depths 7 8 9 10 11 12 --net NET
    python3 scripts/search_quality.py curve    --positions 400 --baseline OLD_KIBITZ --rounds 3
    python3 scripts/search_quality.py nets     --positions 400 --net builtin --rounds 3

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
speed:     positions per second of both engines at each depth, same
           positions, same run (the engines take turns position by
           position; --rounds rounds, medians), and the ratio. `--driver pipe` speaks UCI
           to both directly instead of through python-chess, whose own cost
           per search (about 1.3 ms here) otherwise counts as engine time.
"""
import argparse
import io
import json
import math
import os
import random
import subprocess
import sys
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
            games.append(moves)
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
    engines rather than the driver."""

    def __init__(self, kind, binary=None, off=None, scale=None):
        cmd = [binary or KIBITZ, "uci"] if kind == "kibitz" else [STOCKFISH]
        env = dict(os.environ)
        if off is not None:
            env["KIBITZ_SEARCH_OFF"] = off
        if scale:
            env["KIBITZ_SEARCH_SCALE"] = str(scale)
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  bufsize=1, env=env)
        self.send("uci")
        self.wait("uciok")
        if kind != "kibitz":
            self.send("setoption name Threads value 1")
        else:
            self.send(f"setoption name EvalFile value {NET}")
        self.send("setoption name Hash value 16")
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
        self.send("quit")
        self.p.wait()


def cmd_speed(args):
    fens = sample_positions(args.positions)
    pipe = args.driver == "pipe"
    engines = {k: PipeEngine(k) if pipe else open_engine(k) for k in ("kibitz", "stockfish")}
    print(f"{len(fens)} positions, one thread, Hash 16, ucinewgame before each position, "
          f"driven by {'raw UCI over pipes' if pipe else 'python-chess engine.analyse'}; "
          f"the engines take turns position by position, {args.rounds} rounds, medians")
    for depth in args.depths:
        totals = {k: [] for k in engines}
        nodes = {k: 0 for k in engines}
        for _ in range(args.rounds):
            secs = {k: 0.0 for k in engines}
            nodes = {k: 0 for k in engines}
            for i, fen in enumerate(fens):
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
                    secs[kind] += time.perf_counter() - start
                    nodes[kind] += n
            for kind in engines:
                totals[kind].append(secs[kind])
        med = {k: sorted(v)[len(v) // 2] for k, v in totals.items()}
        rate = {k: len(fens) / med[k] for k in engines}
        nps = {k: nodes[k] / med[k] for k in engines}
        print(f"depth {depth}: kibitz {rate['kibitz']:.1f} pos/s ({nps['kibitz'] / 1e6:.2f} M nodes/s, "
              f"{nodes['kibitz'] / len(fens):.0f} nodes/pos), stockfish {rate['stockfish']:.1f} pos/s "
              f"({nps['stockfish'] / 1e6:.2f} M nodes/s, {nodes['stockfish'] / len(fens):.0f} nodes/pos), "
              f"ratio {rate['kibitz'] / rate['stockfish']:.2f}x pos/s, {nps['kibitz'] / nps['stockfish']:.2f}x nps",
              flush=True)
    for e in engines.values():
        e.quit()


def source_reference(name, fens, depth=16, jobs=None):
    """Stockfish's depth-`depth` (bestmove, score) of a source's positions,
    cached in target/ by source, position by position (a larger sample
    searches only its new positions); `jobs` Stockfish processes side by
    side (default REFERENCE_JOBS)."""
    import concurrent.futures
    import threading
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
    names = args.sources or list(SOURCES)
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
    """The first 12 hex digits of a file's SHA-256 (a cache key)."""
    import hashlib
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:12]


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


def engine_key(kind, binary, off="", scale=None):
    if kind == "stockfish":
        return "sf-" + file_sha(STOCKFISH)
    net = NET if NET in ("hand-written", "<built-in>") else "net-" + file_sha(NET)
    key = f"kibitz-{file_sha(binary)}-{net.replace('<', '').replace('>', '')}"
    key += f"-scale-{scale}" if scale else ""
    return key + (f"-off-{off.replace(',', '+')}" if off else "")


def run_cached(kind, binary, depth, fens, jobs, off="", scale=None):
    """(bestmove, nodes, score) of every fen at `depth`, from the cache or
    searched, `jobs` engine processes side by side (the searches are
    deterministic, so splitting them changes nothing but the time)."""
    cache = Cached(f"{engine_key(kind, binary, off, scale)}-d{depth}")
    todo = cache.todo(fens)
    if todo:
        parts = [todo[i::jobs] for i in range(jobs)]

        def work(part):
            e = PipeEngine(kind, binary, off, scale)
            out = {}
            for fen in part:
                best, nodes, score = e.search_scored(fen, depth)
                out[fen] = (best, nodes, score)
            e.quit()
            return out

        import concurrent.futures
        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            for out in pool.map(work, parts):
                cache.known.update(out)
        cache.save()
    return [tuple(cache.known[f]) for f in fens]


def held_out(fen, share, seed):
    """Whether a position is in the held-out share: a seeded hash of its
    FEN, so a position keeps its side of the split whatever else is drawn."""
    import hashlib
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
    names = args.sources or list(SOURCES)
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


def use_net(net):
    """Sets the evaluation kibitz's engines are started with (as --net)."""
    global NET
    if net == "builtin":
        NET = "<built-in>"
    elif net and net != "hand-written":
        if not os.path.exists(net):
            sys.exit(f"{net}: no such net (export Stockfish's: printf 'uci\\nexport_net "
                     f"{net}\\nquit\\n' | {STOCKFISH}; or builtin|hand-written)")
        NET = os.path.abspath(net)
    else:
        NET = "hand-written"
    return NET


def cmd_nets(args):
    """Two evaluations of one kibitz binary held to each other at equal
    positions per second: agreement with Stockfish depth 16 at each depth,
    speeds from interleaved rounds, and the first's agreement at the
    second's speeds at depths 8 and 10, paired."""
    names = args.sources or list(SOURCES)
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


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["suites", "agreement", "speed", "sources", "curve", "nets"])
    p.add_argument("--positions", type=int, default=1000)
    p.add_argument("--depths", type=int, nargs="+", default=[8, 10])
    p.add_argument("--driver", choices=["python-chess", "pipe"], default="python-chess",
                   help="speed: drive the engines through python-chess (default) or raw UCI over pipes")
    p.add_argument("--kibitz-only", action="store_true",
                   help="agreement: run kibitz alone (Stockfish's depth-16 reference is cached in target/)")
    p.add_argument("--rounds", type=int, default=3, help="speed: rounds over the positions (medians)")
    p.add_argument("--sources", nargs="+", choices=list(SOURCES),
                   help="sources: the sources to sample (default: all)")
    p.add_argument("--sf-depths", type=int, nargs="*", default=[7, 8, 9, 10],
                   help="sources: Stockfish's depths")
    p.add_argument("--net", default=os.environ.get("KIBITZ_NET") or SF_NET,
                   help="kibitz evaluates with this net (Stockfish 15.1's or kibitz's own; its "
                        "EvalFile), `builtin` for the net built into kibitz, `hand-written` for "
                        "the hand-written evaluation; default KIBITZ_NET, else Stockfish 15.1's "
                        "net exported to target/nn-ad9b42354671.nnue")
    p.add_argument("--kibitz-depths", type=int, nargs="+", default=[7, 8, 9, 10, 11, 12, 13],
                   help="curve, nets: kibitz's depths (nets: default 7-12)")
    p.add_argument("--net-scale", type=int,
                   help="nets: the search's margin scale for --net (KIBITZ_SEARCH_SCALE)")
    p.add_argument("--versus", default=SF_NET,
                   help="nets: the evaluation --net is held to (default Stockfish 15.1's net)")
    p.add_argument("--held-out", type=float, default=0.25,
                   help="curve: the share of every source held out of tuning, reported apart")
    p.add_argument("--split-seed", type=int, default=1, help="curve: the seed of the held-out split")
    p.add_argument("--baseline", help="curve: another kibitz binary, for paired tests of a change")
    p.add_argument("--jobs", type=int, default=2, help="curve: engine processes side by side")
    p.add_argument("--off", default="",
                   help="curve: techniques the kibitz searched switches off (KIBITZ_SEARCH_OFF)")
    p.add_argument("--baseline-off",
                   help="curve: the baseline is --baseline (default: the same kibitz) with these "
                        "techniques off")
    p.add_argument("--speed-positions", type=int, default=30,
                   help="curve: positions per source timed in the speed rounds")
    p.add_argument("--json", help="curve: write the figures here")
    p.add_argument("--second-reference", type=int, metavar="DEPTH",
                   help="curve: also hold both engines to kibitz's own search at DEPTH")
    args = p.parse_args()
    if args.command == "curve" and args.sf_depths == [7, 8, 9, 10]:
        args.sf_depths = [8, 10, 12]
    if args.command == "curve" and args.rounds == 3 and "--rounds" not in sys.argv:
        args.rounds = 0
    if args.command == "nets" and "--kibitz-depths" not in sys.argv:
        args.kibitz_depths = [7, 8, 9, 10, 11, 12]
    if args.command == "nets" and "--speed-positions" not in sys.argv:
        args.speed_positions = 20
    global REFERENCE_JOBS
    REFERENCE_JOBS = args.jobs
    use_net(args.net)
    {"suites": cmd_suites, "agreement": cmd_agreement, "speed": cmd_speed,
     "sources": cmd_sources, "curve": cmd_curve, "nets": cmd_nets}[args.command](args)


if __name__ == "__main__":
    main()
