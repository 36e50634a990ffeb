#!/usr/bin/env python3
"""The trainer's speed: positions per second of `kibitz train` at each
width and thread count, on the same data, the runs interleaved round by
round (the machine is shared: medians of --rounds rounds), and each
thread count's rate against one thread's at the same width.

    python3 scripts/train_speed.py target/make-net/sp-*.kbz --widths 128 256 --threads 1 2

The data is ingested into its bucket files once (--cache, default
target/train-speed) before the first timed run, so the runs time the
training alone: --superbatches superbatches of --batches batches of
16,384 positions each.
"""
import argparse
import json
import os
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
KIBITZ = os.environ.get("KIBITZ", os.path.join(ROOT, "target", "release", "kibitz"))


def train(args, width, threads, buckets, out):
    cmd = [KIBITZ, "train", *args.data, "-o", out, "--force", "--cache", args.cache,
           "--hidden", str(width), "-j", str(threads),
           "--superbatches", str(args.superbatches), "--batches", str(args.batches),
           "--wdl", "0", "-q", "--json"]
    if buckets != 1:
        cmd += ["--output-buckets", str(buckets)]
    run = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(run.stdout)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("data", nargs="+", help="labelled files (.kbz, binpack, plain, viriformat)")
    p.add_argument("--widths", type=int, nargs="+", default=[128, 256])
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--output-buckets", type=int, default=1)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--superbatches", type=int, default=2)
    p.add_argument("--batches", type=int, default=100)
    p.add_argument("--cache", default=os.path.join(ROOT, "target", "train-speed"))
    args = p.parse_args()
    runs = [(w, t) for w in args.widths for t in args.threads]
    rates = {r: [] for r in runs}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "net.nnue")
        first = train(args, args.widths[0], 1, args.output_buckets, out)
        counts = first.get("counts", {})
        print(f"data: {', '.join(args.data)}; {counts.get('train', '?')} training positions; "
              f"{args.superbatches} superbatches of {args.batches} x 16384 a run, "
              f"{args.output_buckets} output bucket(s)")
        for rnd in range(args.rounds):
            order = runs if rnd % 2 == 0 else list(reversed(runs))
            for w, t in order:
                rates[(w, t)].append(train(args, w, t, args.output_buckets, out)["per_second"])
    med = {r: sorted(v)[len(v) // 2] for r, v in rates.items()}
    print(f"{'width':>6} {'threads':>7} {'positions/s':>12} {'per thread':>11} {'vs 1 thread':>12}")
    for w, t in runs:
        one = med.get((w, 1))
        ratio = f"{med[(w, t)] / one:.2f}x" if one else ""
        print(f"{w:>6} {t:>7} {med[(w, t)]:>12,.0f} {med[(w, t)] / t:>11,.0f} {ratio:>12}")


if __name__ == "__main__":
    main()
