#!/usr/bin/env python3
"""Searches positions to a fixed depth through one UCI engine, for a
profiler to watch: the same positions `search_quality.py speed` times, one
thread, Hash 16, `ucinewgame` before each, raw UCI over a pipe.

    perf record -F 999 -g -o kibitz.data -- python3 scripts/profile_search.py \
        --engine target/profiling/kibitz --net NET --positions 100 --depth 12 --sources all
    perf report -i kibitz.data --comm kibitz --no-children --sort symbol

A native Stockfish is driven the same way (`--engine PATH`; an engine
whose name is not kibitz is started with no arguments, its own net). The
positions: with `--sources`, drawn evenly from those sources (`all`: every
kind the shared data holds); without, from the Lichess 2016 games.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import search_quality as sq  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--engine", required=True, help="the UCI engine (kibitz is started with `uci`)")
    p.add_argument("--net", help="kibitz's EvalFile (a native Stockfish keeps its own default net)")
    p.add_argument("--positions", type=int, default=100)
    p.add_argument("--depth", type=int, default=12)
    p.add_argument("--sources", nargs="+", choices=list(sq.SOURCES) + ["all"])
    args = p.parse_args()

    if args.sources:
        names = sq.source_names(args)
        counts = [args.positions // len(names) + (i < args.positions % len(names)) for i in range(len(names))]
        fens = [fen for name, n in zip(names, counts) for fen in sq.sample_source(name, n)]
    else:
        fens = sq.sample_positions(args.positions)

    kind = "kibitz" if "kibitz" in os.path.basename(args.engine) else "stockfish"
    net = os.path.abspath(args.net) if args.net else None
    engine = sq.PipeEngine(kind, binary=args.engine, net=net)
    nodes = 0
    start = time.perf_counter()
    for fen in fens:
        nodes += engine.search(fen, args.depth)[1]
    secs = time.perf_counter() - start
    engine.quit()
    print(f"{len(fens)} positions, depth {args.depth}: {nodes / len(fens):.0f} nodes a position, "
          f"{nodes / secs / 1e6:.2f} M nodes a second, {len(fens) / secs:.1f} positions a second")


if __name__ == "__main__":
    main()
