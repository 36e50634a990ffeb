#!/usr/bin/env python3
"""A match between `kibitz uci` and Stockfish 15.1 weakened by its
`Skill Level` option, from the shared 2-move opening book, each opening
played with both colours. Prints wins/draws/losses and an Elo estimate with
a 95% interval.

    python3 scripts/match.py --games 200 --kibitz-depth 8 --sf-depth 8 --skill 10

With --baseline PATH the opponent is another kibitz binary at the same
depth instead (an A/B match of a change, same openings, both colours):

    python3 scripts/match.py --games 400 --kibitz-depth 7 --baseline /tmp/kibitz-before
    python3 scripts/match.py --games 400 --nodes 20000 --baseline /tmp/kibitz-before

A baseline that is not kibitz (a native Stockfish build, which reads its
command-line arguments as commands and quits after them) is started with no
arguments by --baseline-plain:

    python3 scripts/match.py --games 400 --nodes 10000 --baseline /tmp/stockfish-native \
        --baseline-plain --kibitz-option EvalFile=../shared/data/nets/nn-1a298aa575a0.nnue

Two evaluations of one binary at equal time per move, two games at a time:
kibitz's own net (data/kibitz-net.nnue; the built-in net, EvalFile's value
`<built-in>`, is Stockfish.js 19's lite net) against the hand-written
evaluation, and
against Stockfish 15.1's net (exported to target/ as README says):

    python3 scripts/match.py --games 400 --movetime 40 --baseline target/release/kibitz \
        --kibitz-option EvalFile=data/kibitz-net.nnue --baseline-option EvalFile=hand-written \
        --concurrency 2
    python3 scripts/match.py --games 400 --movetime 40 --baseline target/release/kibitz \
        --kibitz-option EvalFile=data/kibitz-net.nnue \
        --baseline-option EvalFile=target/nn-ad9b42354671.nnue --concurrency 2
"""
import argparse
import concurrent.futures
import io
import math
import os
import random
import subprocess

import chess
import chess.engine
import chess.pgn

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED = os.environ.get("KIBITZ_DATA", os.path.join(ROOT, "..", "shared", "data"))
KIBITZ = os.environ.get("KIBITZ", os.path.join(ROOT, "target", "release", "kibitz"))
STOCKFISH = os.environ.get("STOCKFISH", "/usr/games/stockfish")


def openings(n, seed):
    text = subprocess.run(["zstd", "-dc", os.path.join(SHARED, "pgn/openings/2moves_v2.pgn.zst")],
                          check=True, capture_output=True).stdout.decode()
    handle = io.StringIO(text)
    lines = []
    while True:
        g = chess.pgn.read_game(handle)
        if g is None:
            break
        lines.append(list(g.mainline_moves()))
    random.Random(seed).shuffle(lines)
    return lines[:n]


def play(white, black, moves, limits):
    board = chess.Board()
    for m in moves:
        board.push(m)
    engines = {chess.WHITE: white, chess.BLACK: black}
    game_id = object()
    while not board.is_game_over(claim_draw=True) and board.ply() < 300:
        name, engine = engines[board.turn]
        result = engine.play(board, limits[name], game=game_id)
        board.push(result.move)
    outcome = board.outcome(claim_draw=True)
    if outcome is None or outcome.winner is None:
        return 0.5
    return 1.0 if outcome.winner == chess.WHITE else 0.0


def elo(score):
    score = min(max(score, 1e-6), 1 - 1e-6)
    return -400 * math.log10(1 / score - 1)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", type=int, default=200)
    p.add_argument("--kibitz-depth", type=int, default=8)
    p.add_argument("--sf-depth", type=int, default=8)
    p.add_argument("--skill", type=int, default=10)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--first", type=int, default=0,
                   help="leave out the schedule's first N games (to split one match across runs: "
                        "`--games 400` and `--games 400 --first 200` play the second half)")
    p.add_argument("--baseline", help="play this kibitz binary (at --kibitz-depth) instead of Stockfish")
    p.add_argument("--baseline-plain", action="store_true",
                   help="start the baseline with no arguments (a UCI engine such as Stockfish) "
                        "rather than as `BASELINE uci`")
    p.add_argument("--movetime", type=int,
                   help="with --baseline: both search this many milliseconds a move (equal time)")
    p.add_argument("--kibitz-option", action="append", default=[], metavar="NAME=VALUE",
                   help="a UCI option for kibitz (repeatable)")
    p.add_argument("--baseline-option", action="append", default=[], metavar="NAME=VALUE",
                   help="a UCI option for the baseline (repeatable)")
    p.add_argument("--concurrency", type=int, default=1,
                   help="games played at once, each by its own pair of engines")
    p.add_argument("--nodes", type=int,
                   help="with --baseline: both binaries search this many nodes a move instead of a depth "
                        "(an equal-cost match for a change that makes a depth dearer or cheaper)")
    args = p.parse_args()

    def options(pairs):
        return dict(pair.split("=", 1) for pair in pairs)

    def engines():
        kib = chess.engine.SimpleEngine.popen_uci([KIBITZ, "uci"])
        kib.configure({"Hash": 16, **options(args.kibitz_option)})
        if args.baseline:
            command = [args.baseline] if args.baseline_plain else [args.baseline, "uci"]
            sf = chess.engine.SimpleEngine.popen_uci(command)
            sf.configure({"Hash": 16, **options(args.baseline_option)})
        else:
            sf = chess.engine.SimpleEngine.popen_uci(STOCKFISH)
            sf.configure({"Threads": 1, "Hash": 16, "Skill Level": args.skill})
        return kib, sf

    if args.baseline:
        args.sf_depth = args.kibitz_depth
        opponent = f"baseline {args.baseline} {' '.join(args.baseline_option)}".strip()
    else:
        opponent = f"Stockfish 15.1 Skill {args.skill}"
    limits = {"kibitz": chess.engine.Limit(depth=args.kibitz_depth), "sf": chess.engine.Limit(depth=args.sf_depth)}
    budget = f"d{args.kibitz_depth}"
    if args.nodes or args.movetime:
        if not args.baseline:
            p.error("--nodes and --movetime need --baseline")
        if args.nodes:
            limits = {k: chess.engine.Limit(nodes=args.nodes) for k in limits}
            budget = f"{args.nodes} nodes"
        else:
            limits = {k: chess.engine.Limit(time=args.movetime / 1000) for k in limits}
            budget = f"{args.movetime} ms"
    schedule = []
    for moves in openings((args.games + 1) // 2, args.seed):
        for kibitz_white in (True, False):
            if len(schedule) < args.games:
                schedule.append((moves, kibitz_white))
    schedule = schedule[args.first:]
    pool = [engines() for _ in range(max(1, args.concurrency))]
    free = list(range(len(pool)))
    import threading
    lock = threading.Lock()

    def one(job):
        moves, kibitz_white = job
        with lock:
            k = free.pop()
        kib, sf = pool[k]
        try:
            pair = (("kibitz", kib), ("sf", sf)) if kibitz_white else (("sf", sf), ("kibitz", kib))
            r = play(pair[0], pair[1], moves, limits)
        finally:
            with lock:
                free.append(k)
        return r if kibitz_white else 1 - r

    wins = draws = losses = 0
    scores = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(pool)) as ex:
        for s in ex.map(one, schedule):
            scores.append(s)
            wins += s == 1.0
            draws += s == 0.5
            losses += s == 0.0
            n = len(scores)
            if n % 20 == 0 or n >= len(schedule):
                mean = sum(scores) / n
                sd = math.sqrt(sum((x - mean) ** 2 for x in scores) / max(1, n - 1)) / math.sqrt(n)
                lo, hi = elo(mean - 1.96 * sd), elo(mean + 1.96 * sd)
                print(f"{n} games: +{wins} ={draws} -{losses}, score {mean:.3f}, "
                      f"Elo {elo(mean):+.0f} [{lo:+.0f}, {hi:+.0f}] (kibitz {' '.join(args.kibitz_option)} {budget} "
                      f"vs {opponent} {budget if args.baseline else f'd{args.sf_depth}'})", flush=True)
    for kib, sf in pool:
        kib.quit()
        sf.quit()


if __name__ == "__main__":
    main()
