#!/usr/bin/env python3
"""Perft against cozy-chess as whole processes: wall time, interleaved pairs.

Each pair runs `kibitz perft FEN DEPTH` and cozy-chess's own perft example
(`perft DEPTH FEN`, bulk counting) on the same position, the order of the
two alternating from pair to pair so that the machine's drift hits both
alike. Wall time is the whole process (start-up, tables, counting, exit).
Both counts are checked against the known one. Reported per position: the
median wall time of each, the ratio of the medians, and the median of the
per-pair ratios.

The peer is built as a user tuning it would build it (its `pext` feature,
this CPU's instructions):

    cp -r ~/.cargo/registry/src/*/cozy-chess-0.3.4 /tmp/cozy && cd /tmp/cozy/cozy-chess-0.3.4
    RUSTFLAGS="-C target-cpu=native" cargo build --release --example perft --features pext

    python3 scripts/perft_peers.py --kibitz target/release/kibitz \\
        --cozy /tmp/cozy/cozy-chess-0.3.4/target/release/examples/perft --pairs 9
"""

import argparse
import statistics
import subprocess
import sys
import time

CASES = [
    ("startpos", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", False, 6, 119_060_324),
    ("kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", False, 5,
     193_690_690),
    ("position 3", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", False, 7, 178_633_661),
    ("chess960", "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9", True, 6,
     227_689_589),
]


def timed(cmd, nodes, who):
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    wall = time.perf_counter() - start
    # kibitz prints "nodes N ..." or the count alone; cozy "N nodes in ...".
    numbers = {int(tok.replace(",", "")) for tok in out.replace("(", " ").split()
               if tok.replace(",", "").isdigit()}
    if nodes not in numbers:
        sys.exit(f"{who}: count {nodes} not in its output: {out!r}")
    return wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kibitz", required=True)
    ap.add_argument("--cozy", required=True)
    ap.add_argument("--pairs", type=int, default=9)
    ap.add_argument("--only", help="a position's name")
    args = ap.parse_args()
    rows = []
    for name, fen, chess960, depth, nodes in CASES:
        if args.only and args.only != name:
            continue
        kibitz = [args.kibitz, "perft", fen, str(depth)] + (["--chess960"] if chess960 else [])
        cozy = [args.cozy, str(depth), fen]
        k_walls, c_walls, ratios = [], [], []
        for pair in range(args.pairs):
            if pair % 2 == 0:
                k = timed(kibitz, nodes, "kibitz")
                c = timed(cozy, nodes, "cozy-chess")
            else:
                c = timed(cozy, nodes, "cozy-chess")
                k = timed(kibitz, nodes, "kibitz")
            k_walls.append(k)
            c_walls.append(c)
            ratios.append(c / k)
        km, cm = statistics.median(k_walls), statistics.median(c_walls)
        rows.append((name, depth, nodes, km, cm, cm / km, statistics.median(ratios)))
        print(f"{name} d{depth}: kibitz {km:.3f} s ({nodes / km / 1e6:.1f} Mnps), cozy-chess "
              f"{cm:.3f} s ({nodes / cm / 1e6:.1f} Mnps), {cm / km:.2f}x "
              f"(median pair {statistics.median(ratios):.2f}x)", flush=True)
    print()
    print("| position | kibitz s | cozy-chess s | kibitz Mnps | cozy-chess Mnps | ratio of medians | median pair |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, depth, nodes, km, cm, ratio, pair in rows:
        print(f"| {name} d{depth} | {km:.3f} | {cm:.3f} | {nodes / km / 1e6:.1f} | "
              f"{nodes / cm / 1e6:.1f} | {ratio:.2f}x | {pair:.2f}x |")
    print(f"worst case: {min(r[5] for r in rows):.2f}x")


if __name__ == "__main__":
    main()
