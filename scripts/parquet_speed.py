#!/usr/bin/env python3
"""Parquet against PGN and kibitz's own files, in one run: reading speed,
writing speed, bytes per position, peak memory.

Reading: the same games as a Parquet file in Lichess's dataset's shape
(scripts/lichess_parquet.py: snappy, row groups of 1,000 rows, the
dictionary encoding pyarrow gives every column but the moves, which are
unique in a real month) and as `.pgn.zst` (pzstd frames, as Lichess
publishes its dumps), read by `replay` and by `annotate --label pgn-eval`
with a rating filter that about 10% of the games pass, on one and two
threads; runs interleaved, medians and ratios. Two sets of games: the
shared Lichess games (their `[%eval]` and `[%clk]` comments), and every
shared database's games together; each repeated to make a file of some
size.

Writing: `export --format parquet` and `--format jsonl` of the same
`.kbz`, interleaved: positions per second, bytes per position against the
`.kbz`; peak memory (maximum resident set) of the Parquet export of a
small `.kbz` and of one 100 times larger.

With --baseline OLD, the same Parquet jobs (reading both sets, writing
both .kbz) are run by OLD and by BIN interleaved instead: the speeds of a
change to the Parquet reader or writer, before and after in one run.

Usage: parquet_speed.py --kibitz BIN --data ../shared/data [--work DIR]
       [--rounds 5] [--repeat 100] [--baseline OLD]
"""

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lichess_parquet  # noqa: E402  (the schema and the PGN splitting, shared)




def timed(cmd):
    """Wall seconds and peak resident set (KiB) of a command."""
    p = subprocess.run(["/usr/bin/time", "-f", "%e %M", *cmd], capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr[-2000:]}")
    last = p.stderr.strip().splitlines()[-1].split()
    return float(last[0]), int(last[1]), p


def make_games(conv, paths, work, name, repeat):
    rows, raws = [], []
    for path in paths:
        for tags, movetext, raw in conv.games(conv.open_text(path)):
            if "FEN" in tags or "Variant" in tags:
                continue
            rows.append(conv.row(tags, movetext))
            raws.append(raw.strip() + "\n")
    parquet = os.path.join(work, f"{name}.parquet")
    pgn = os.path.join(work, f"{name}.pgn")
    table = pa.Table.from_pylist(rows, schema=conv.SCHEMA)
    columns = [f.name for f in conv.SCHEMA if f.name != "movetext"]
    with pq.ParquetWriter(parquet, conv.SCHEMA, compression="snappy",
                          use_dictionary=columns) as w:
        for _ in range(repeat):
            w.write_table(table, row_group_size=1000)
    with open(pgn, "w", encoding="utf-8") as f:
        for _ in range(repeat):
            for raw in raws:
                f.write(raw + "\n")
    # The .pgn.zst: zstd frames as pzstd writes them (Lichess publishes its
    # dumps so). A copy of the games smaller than a frame is compressed on
    # its own and the frame written once per copy: compressing the
    # repeated text whole would find each copy in the one before (the
    # shared Lichess games shrink 40 times so, against 6.3 times alone, and
    # a real month's 6 to 7), which no real month offers.
    one = "".join(raw + "\n" for raw in raws).encode("utf-8")
    if len(one) < (4 << 20):
        frame = subprocess.run(["zstd", "-q", "-3", "-c"], input=one, capture_output=True,
                               check=True).stdout
        with open(pgn + ".zst", "wb") as f:
            for _ in range(repeat):
                f.write(frame)
    else:
        subprocess.run(["pzstd", "-q", "-f", "-3", "-p", "2", pgn, "-o", pgn + ".zst"],
                       check=True)
    elos = sorted(min(r["WhiteElo"] or 0, r["BlackElo"] or 0) for r in rows)
    # Both players rated at least this: about 10% of the games pass.
    threshold = elos[int(len(elos) * 0.9)] if elos else 0
    return parquet, pgn + ".zst", len(rows) * repeat, threshold


def reading(kibitz, parquet, zst, games, threshold, rounds, label):
    print(f"\n== reading: {label}: {games} games; .pgn.zst {os.path.getsize(zst):,} bytes, "
          f"Parquet {os.path.getsize(parquet):,} bytes; --min-elo {threshold}")
    jobs = []
    for threads in ("1", "2"):
        jobs.append((f"replay -j {threads}", ["replay", "--quiet", "-j", threads]))
        jobs.append((f"annotate --label pgn-eval --min-elo {threshold} -j {threads}",
                     ["annotate", "--quiet", "--label", "pgn-eval", "--min-elo", str(threshold),
                      "--force", "-j", threads, "-o", os.path.join(os.path.dirname(parquet), "x.kbz")]))
    times = {(j, k): [] for j, _ in jobs for k in ("pgn.zst", "parquet")}
    passed = {}
    for _ in range(rounds):
        for name, args in jobs:
            for kind, path in (("pgn.zst", zst), ("parquet", parquet)):
                if name.startswith("annotate"):
                    cmd = [kibitz, args[0], path, *args[1:], "--json"]
                else:
                    cmd = [kibitz, args[0], path, *args[1:]]
                t, _, p = timed(cmd)
                times[(name, kind)].append(t)
                if name.startswith("annotate"):
                    v = json.loads(p.stdout)
                    passed[kind] = v["games"]
    out = []
    for name, _ in jobs:
        a = statistics.median(times[(name, "pgn.zst")])
        b = statistics.median(times[(name, "parquet")])
        print(f"{name:55s} .pgn.zst {games / a:10,.0f} games/s   Parquet {games / b:10,.0f} games/s"
              f"   Parquet/.pgn.zst {a / b:.2f}x")
        out.append({"job": name, "pgn_zst_games_per_s": games / a, "parquet_games_per_s": games / b,
                    "ratio": a / b})
    print(f"games through the filter: {passed} of {games} "
          f"({100 * passed.get('parquet', 0) / games:.1f}%)")
    return out


def writing(kibitz, work, small, large, rounds, what):
    print(f"\n== writing: export --format parquet and jsonl of the same .kbz ({what})")
    results = {}
    larger = [large] if isinstance(large, str) else large
    for label, kbz in [("small", small)] + [(f"large{i}", k) for i, k in enumerate(larger)]:
        stats = json.loads(subprocess.run([kibitz, "stats", kbz, "--json"], capture_output=True,
                                          text=True, check=True).stdout)
        n = stats["positions"]
        t = {"parquet": [], "jsonl": []}
        rss = {"parquet": [], "jsonl": []}
        for _ in range(rounds):
            for fmt in ("parquet", "jsonl"):
                out = os.path.join(work, f"{label}.{fmt}")
                secs, kib, _ = timed([kibitz, "export", kbz, "--format", fmt, "-o", out])
                t[fmt].append(secs)
                rss[fmt].append(kib)
        size = {fmt: os.path.getsize(os.path.join(work, f"{label}.{fmt}")) for fmt in t}
        kbz_size = os.path.getsize(kbz)
        print(f"{label} ({os.path.basename(kbz)}): {n:,} positions; .kbz {kbz_size / n:.1f} bytes a position, "
              f"Parquet {size['parquet'] / n:.1f}, JSON lines {size['jsonl'] / n:.1f}")
        for fmt in t:
            m = statistics.median(t[fmt])
            print(f"  export --format {fmt:8s} {n / m:12,.0f} positions/s  peak memory "
                  f"{statistics.median(rss[fmt]) / 1024:.1f} MiB (median of {rounds})")
        print(f"  Parquet/JSON lines speed {statistics.median(t['jsonl']) / statistics.median(t['parquet']):.2f}x")
        results[label] = {"positions": n, "kbz_bytes": kbz_size, "parquet_bytes": size["parquet"],
                          "jsonl_bytes": size["jsonl"],
                          "parquet_positions_per_s": n / statistics.median(t["parquet"]),
                          "jsonl_positions_per_s": n / statistics.median(t["jsonl"]),
                          "parquet_peak_kib": statistics.median(rss["parquet"]),
                          "jsonl_peak_kib": statistics.median(rss["jsonl"])}
    return results


def against(kibitz, baseline, made, kbzs, work, rounds):
    """The Parquet jobs run by `baseline` (before) and `kibitz` (after),
    interleaved: medians, and after/before as speed (> 1: faster)."""
    jobs = []
    for name, (parquet, _, games, threshold) in made.items():
        for threads in ("1", "2"):
            jobs.append((f"{name}: replay -j {threads}", games, "games",
                         ["replay", parquet, "--quiet", "-j", threads]))
            jobs.append((f"{name}: annotate --label pgn-eval --min-elo {threshold} -j {threads}",
                         games, "games",
                         ["annotate", parquet, "--quiet", "--label", "pgn-eval", "--min-elo",
                          str(threshold), "--force", "-j", threads, "-o",
                          os.path.join(work, "x.kbz")]))
    for label, kbz in kbzs:
        stats = json.loads(subprocess.run([kibitz, "stats", kbz, "--json"], capture_output=True,
                                          text=True, check=True).stdout)
        jobs.append((f"export --format parquet: {label}", stats["positions"], "positions",
                     ["export", kbz, "--format", "parquet", "-o",
                      os.path.join(work, "x.parquet")]))
    times = {(j, w): [] for j, _, _, _ in jobs for w in ("before", "after")}
    for _ in range(rounds):
        for name, _, _, args in jobs:
            for which, binary in (("before", baseline), ("after", kibitz)):
                t, _, _ = timed([binary, *args])
                times[(name, which)].append(t)
    print(f"\n== before ({baseline}) and after ({kibitz}), medians of {rounds} interleaved rounds")
    out = []
    for name, n, unit, _ in jobs:
        b = statistics.median(times[(name, "before")])
        a = statistics.median(times[(name, "after")])
        print(f"{name:60s} before {n / b:10,.0f} {unit}/s ({b:.3f} s)  after {n / a:10,.0f} "
              f"{unit}/s ({a:.3f} s)  after/before {b / a:.3f}x")
        out.append({"job": name, "before_s": b, "after_s": a, "speed": b / a})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kibitz", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--work", default="/tmp/kibitz-parquet-speed")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=100)
    ap.add_argument("--skip-reading", action="store_true")
    ap.add_argument("--baseline", help="an older kibitz: time its Parquet jobs against --kibitz's")
    ap.add_argument("--selfplay-large", nargs="+", help="large self-play .kbz files "
                    "(scripts/make_net.sh's target/make-net/sp-1.kbz, and larger); a small one "
                    "is played here")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    conv = lichess_parquet
    real = sorted(glob.glob(os.path.join(args.data, "pgn/real/*.pgn.zst")))
    lichess = [p for p in real if os.path.basename(p).startswith("lichess")]
    summary = {}
    sets = [("lichess", lichess, args.repeat), ("all", real, max(1, args.repeat // 20))]
    made = {name: make_games(conv, paths, args.work, name, rep) for name, paths, rep in sets}
    if not args.skip_reading and not args.baseline:
        for name, _, _ in sets:
            parquet, zst, games, threshold = made[name]
            summary[name] = reading(args.kibitz, parquet, zst, games, threshold, args.rounds,
                                    f"{name} ({'the shared Lichess games' if name == 'lichess' else 'every shared database'})")
    # The .kbz files: labels from the games' [%eval]s, every one kept.
    small = os.path.join(args.work, "small.kbz")
    large = os.path.join(args.work, "large.kbz")
    one = os.path.join(args.work, "one.parquet")
    conv_rows = [conv.row(t, m) for t, m, _ in conv.games(conv.open_text(lichess[0])) if "FEN" not in t]
    pq.write_table(pa.Table.from_pylist(conv_rows, schema=conv.SCHEMA), one)
    for src, dst in ((one, small), (made["lichess"][0], large)):
        subprocess.run([args.kibitz, "annotate", src, "--label", "pgn-eval", "--preset", "analysis",
                        "--quiet", "--force", "-o", dst], check=True, capture_output=True)
    if args.baseline:
        kbzs = [("Lichess analysis x1", small), ("Lichess analysis x100", large)]
        kbzs += [(os.path.basename(k), k) for k in args.selfplay_large or []]
        summary["against"] = against(args.kibitz, args.baseline, made, kbzs, args.work,
                                     args.rounds)
        with open(os.path.join(args.work, "summary.json"), "w") as f:
            json.dump(summary, f, indent=1)
        return
    summary["writing"] = writing(args.kibitz, args.work, small, large, args.rounds,
                                 "the shared Lichess games' [%eval]s, x1 and x100: repeated "
                                 "games, which Parquet's dictionaries and zstd find")
    if args.selfplay_large:
        sp_small = os.path.join(args.work, "selfplay-small.kbz")
        if not os.path.exists(sp_small):
            subprocess.run([args.kibitz, "selfplay", "--games", "60", "--nodes", "400", "--quiet",
                            "-o", sp_small], check=True, capture_output=True)
        summary["writing_selfplay"] = writing(args.kibitz, args.work, sp_small,
                                              args.selfplay_large, args.rounds,
                                              "self-play, every game its own")
    with open(os.path.join(args.work, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
