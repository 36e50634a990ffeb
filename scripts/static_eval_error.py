#!/usr/bin/env python3
"""How well static evaluations predict search labels: for every labelled
position of a .kbz (mates left out), the mean squared difference in win
probability, sigmoid(cp / 400), between the evaluation and the label, and
their correlation; the hand-written evaluation first, then each net
(kibitz's own or Stockfish 15.1's: the teacher's static evaluation is the
floor a net distilled from its searches is measured against).

    kibitz annotate ../shared/data/pgn/lichess/lichess-org_database_2016-05.pgn.zst \\
        -o li.kbz --net target/nn-ad9b42354671.nnue --nodes 5000
    python3 scripts/static_eval_error.py li.kbz --every 20 --limit 3000 NET...

(docs/TRAINING.md's table: every 20th label, the first 3,000.)
"""
import argparse
import json
import math
import os
import statistics
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KIBITZ = os.environ.get("KIBITZ", os.path.join(ROOT, "target", "release", "kibitz"))


def sig(x):
    return 1 / (1 + math.exp(-x / 400))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kbz")
    p.add_argument("nets", nargs="+")
    p.add_argument("--every", type=int, default=20)
    p.add_argument("--limit", type=int, default=3000)
    args = p.parse_args()
    lines = subprocess.run([KIBITZ, "export", args.kbz, "--format", "jsonl"], check=True,
                           capture_output=True, text=True).stdout.splitlines()
    rows = [json.loads(l) for i, l in enumerate(lines) if (i + 1) % args.every == 0][:args.limit]
    rows = [r for r in rows if r["mate"] is None]
    fens = "".join(r["fen"] + "\n" for r in rows)
    labels = [r["score"] if " w " in r["fen"] else -r["score"] for r in rows]
    print(f"{len(rows)} positions")
    for i, net in enumerate(args.nets):
        out = subprocess.run([KIBITZ, "eval", "-", "--net", net], input=fens, check=True,
                             capture_output=True, text=True).stdout
        hand, own = [], []
        for line in out.splitlines():
            if line.startswith("Hand-written eval"):
                hand.append(float(line.split()[2]) * 100)
            if line.startswith("kibitz net eval"):
                own.append(float(line.split()[3]) * 100)
            if line.startswith("NNUE centipawns"):
                # Stockfish's net: its evaluation in UCI centipawns.
                own.append(float(line.split()[2]))
        named = [("hand-written", hand)] if i == 0 else []
        for name, values in named + [(os.path.basename(net), own)]:
            mse = statistics.mean((sig(a) - sig(b)) ** 2 for a, b in zip(values, labels))
            corr = statistics.correlation(values, labels)
            print(f"{name:<24} win-probability MSE {mse:.5f}  correlation {corr:.3f}")


if __name__ == "__main__":
    main()
