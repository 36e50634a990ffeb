#!/usr/bin/env python3
"""The annotate workload: kibitz's own search with the net against Stockfish
driven by kibitz's engine harness, on the same games, in the same run.

    python3 scripts/annotate_workload.py --net target/nn-ad9b42354671.nnue
    python3 scripts/annotate_workload.py --net NET --sources twic ccrl chesscom --games 60 --depth 8

For each source, the first --games games are annotated at --depth on one
thread by `kibitz annotate --net NET` and by `kibitz annotate --engine
/usr/games/stockfish` (one process, `ucinewgame` per game, the game's moves
sent with each position, as a user's own loop over a UCI engine does); the
two take turns for --rounds rounds and the medians of the wall times are
compared, as positions searched per second. Then the labels of both are
checked against Stockfish's depth-16 search of the same positions: a seeded
sample of --sample positions labelled by both (the capture filter, which
depends on the label, keeps slightly different sets), the best-move
agreement and the mean Win% gap (Lichess's formula). Depth-16 references are
cached in target/ as search_quality.py caches them.

A second kibitz binary (--baseline, say the build before a change) adds its
column: the same games, the same rounds, interleaved with the others.
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import search_quality as sq  # noqa: E402


def annotate(binary, source, games, depth, out, engine=None, net=None):
    """Runs one annotate; returns (wall seconds, positions searched)."""
    cmd = [binary, "annotate", os.path.join(sq.SHARED, sq.SOURCES[source]), "--max-games",
           str(games), "-d", str(depth), "-j", "1", "-o", out, "--force", "--json"]
    if engine:
        cmd += ["--engine", engine]
    elif net:
        cmd += ["--net", net]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    secs = time.perf_counter() - start
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    stats = summary.get("stats", summary)
    return secs, stats["searched"]


def labels(binary, kbz):
    """(game, ply) -> (fen, best, score from the side to move, mates +-10000)."""
    out = {}
    text = subprocess.run([binary, "export", kbz, "--format", "jsonl"], capture_output=True,
                          text=True, check=True).stdout
    for line in text.splitlines():
        r = json.loads(line)
        score = r["score"]
        if r.get("mate") is not None:
            score = 10000 if r["mate"] > 0 else -10000
        out[(r["game"], r["ply"])] = (r["fen"], r["best"], score)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sources", nargs="+", default=["twic", "ccrl", "chesscom"],
                    choices=[s for s in sq.SOURCES if sq.SOURCES[s]])
    ap.add_argument("--games", type=int, default=60)
    ap.add_argument("--depth", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sample", type=int, default=200, help="positions checked against depth 16")
    ap.add_argument("--net", required=True, help="the Stockfish 15.1 net kibitz evaluates with")
    ap.add_argument("--baseline", help="another kibitz binary, measured alongside")
    ap.add_argument("--engine", default=sq.STOCKFISH)
    a = ap.parse_args()
    net = os.path.abspath(a.net)
    runs = [("kibitz --net", sq.KIBITZ, None), ("kibitz --engine stockfish", sq.KIBITZ, a.engine)]
    if a.baseline:
        runs.insert(1, ("baseline --net", a.baseline, None))
    print(f"{a.games} games a source, depth {a.depth}, one thread, {a.rounds} interleaved rounds "
          f"(medians); labels checked against Stockfish depth 16 on {a.sample} positions")
    tmp = tempfile.mkdtemp(prefix="kibitz-workload-")
    for source in a.sources:
        times = {name: [] for name, _, _ in runs}
        searched = {}
        for _ in range(a.rounds):
            for name, binary, engine in runs:
                kbz = os.path.join(tmp, f"{source}-{len(times[name])}-{name.split()[0]}-{bool(engine)}.kbz")
                secs, n = annotate(binary, source, a.games, a.depth, kbz, engine, net)
                times[name].append(secs)
                searched[name] = (n, kbz, binary)
        found = {name: labels(binary, kbz) for name, (_, kbz, binary) in searched.items()}
        common = sorted(set.intersection(*(set(f) for f in found.values())))
        rng = random.Random(f"{source}:{a.games}:{a.depth}")
        sample = rng.sample(common, min(a.sample, len(common)))
        fens = [found[runs[0][0]][k][0] for k in sample]
        ref = sq.source_reference(f"workload-{source}", fens)
        sf_name = runs[-1][0]
        sf_rate = searched[sf_name][0] / statistics.median(times[sf_name])
        for name, _, _ in runs:
            n = searched[name][0]
            secs = statistics.median(times[name])
            got = [(found[name][k][1], found[name][k][2]) for k in sample]
            agree = sum(1 for (m, _), (r, _) in zip(got, ref) if m == r) / len(ref)
            gap = sq.mean_win_gap(got, ref)
            print(f"{source:<10} {name:<26} {secs:>7.2f} s {n:>6} searched {n / secs:>7.1f} pos/s "
                  f"{n / secs / sf_rate:>5.2f}x  {agree:>6.1%} agree {gap:>5.2f} Win% gap", flush=True)


if __name__ == "__main__":
    main()
