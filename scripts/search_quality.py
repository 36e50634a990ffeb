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

    def __init__(self, kind):
        cmd = [KIBITZ, "uci"] if kind == "kibitz" else [STOCKFISH]
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
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


def source_reference(name, fens, depth=16):
    """Stockfish's depth-`depth` (bestmove, score) of a source's positions,
    cached in target/ by source, position by position (a larger sample
    searches only its new positions)."""
    cache = os.path.join(ROOT, "target", f"sf-d{depth}-{name}.json")
    known = json.load(open(cache)) if os.path.exists(cache) else {}
    todo = [f for f in dict.fromkeys(fens) if f not in known]
    if todo:
        sf = PipeEngine("stockfish")
        for i, fen in enumerate(todo):
            best, _, score = sf.search_scored(fen, depth)
            known[fen] = (best, score)
            if i % 50 == 49 or i == len(todo) - 1:
                os.makedirs(os.path.dirname(cache), exist_ok=True)
                json.dump(known, open(cache + ".tmp", "w"))
                os.replace(cache + ".tmp", cache)
        sf.quit()
    return [tuple(known[f]) for f in fens]


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
    p.add_argument("command", choices=["suites", "agreement", "speed", "sources"])
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
    p.add_argument("--net", default=os.environ.get("KIBITZ_NET"),
                   help="kibitz evaluates with this net (Stockfish 15.1's or kibitz's own; its "
                        "EvalFile), `builtin` for the net built into kibitz; default KIBITZ_NET, "
                        "else the hand-written evaluation")
    args = p.parse_args()
    global NET
    if args.net == "builtin":
        NET = "<built-in>"
    elif args.net and args.net != "hand-written":
        NET = os.path.abspath(args.net)
    {"suites": cmd_suites, "agreement": cmd_agreement, "speed": cmd_speed,
     "sources": cmd_sources}[args.command](args)


if __name__ == "__main__":
    main()
