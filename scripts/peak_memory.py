#!/usr/bin/env python3
"""Peak resident set of every kibitz command on large inputs.

Builds inputs of the shared Lichess and TCEC games repeated to SIZE GB
(plain, zstd as one frame, zstd as many frames as pzstd writes them), runs
each command on them with 1 and 2 threads, and prints the peak resident
set (GNU time's %M: the child's ru_maxrss) as a Markdown table.

    python3 scripts/peak_memory.py --sizes 1 5            # the table of docs/RELIABILITY.md
    python3 scripts/peak_memory.py --sizes 1 --only annotate,replay

Every command reads the whole input (annotate labels a sample of the
positions at depth 1, `--sample`, so that the run is about reading, not
searching); the .kbz commands read the file annotate wrote from the same
input. Inputs go to target/memory-corpus (KIBITZ_DATA names the shared
data, ../shared/data by default).
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.environ.get("KIBITZ_DATA", os.path.join(ROOT, "..", "shared", "data"))
KIBITZ = os.environ.get("KIBITZ_BIN", os.path.join(ROOT, "target", "release", "kibitz"))
OUT = os.path.join(ROOT, "target", "memory-corpus")
KINDS = []  # the inputs asked for (--kinds)


def unit_text():
    """The shared Lichess games and the TCEC superfinal, decoded."""
    parts = []
    for name in ["pgn/lichess/lichess-org_database_2016-05.pgn.zst",
                 "pgn/lichess/lichess-org_database_2017-05.pgn.zst",
                 "pgn/engine/TCEC_Season_13_-_Superfinal.pgn.zst"]:
        parts.append(subprocess.run(["zstd", "-dc", os.path.join(DATA, name)],
                                    check=True, capture_output=True).stdout)
    return b"\n".join(p.rstrip(b"\n") + b"\n" for p in parts) + b"\n"


def build(size_gb):
    """Writes SIZE GB of games as plain, zstd (one frame) and pzstd (many)."""
    os.makedirs(OUT, exist_ok=True)
    plain = os.path.join(OUT, f"games-{size_gb:g}g.pgn")
    zst = plain + ".zst"
    multi = plain + ".multi.zst"
    if not os.path.exists(plain):
        unit = unit_text()
        target = int(size_gb * 1e9)
        with open(plain + ".tmp", "wb") as f:
            written = 0
            while written < target:
                f.write(unit)
                written += len(unit)
        os.rename(plain + ".tmp", plain)
    if not os.path.exists(zst):
        subprocess.run(["zstd", "-q", "-3", "-T2", "-f", plain, "-o", zst + ".tmp"], check=True)
        os.rename(zst + ".tmp", zst)
    if not os.path.exists(multi) and "pzstd" in KINDS:
        subprocess.run(["pzstd", "-q", "-3", "-p", "2", "-f", plain, "-o", multi + ".tmp"],
                       check=True)
        os.rename(multi + ".tmp", multi)
    return {"plain": plain, "zstd": zst, "pzstd": multi}



def peak(args, stdout=subprocess.DEVNULL):
    """Runs kibitz with `args`: (exit code, peak RSS in MB, seconds).

    Through GNU time (`/usr/bin/time -f %M`), which forks the command: a
    child this script started itself would be started by vfork, and its
    ru_maxrss would count this process's own peak (about 14 MB)."""
    start = time.time()
    with tempfile.NamedTemporaryFile("r") as out:
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", out.name, KIBITZ] + args,
                              stdout=stdout, stderr=subprocess.PIPE)
        text = out.read().strip().splitlines()
    if proc.returncode not in (0, 1):
        sys.exit(f"kibitz {' '.join(args)}: exit {proc.returncode}: {proc.stderr.decode()[-2000:]}")
    return proc.returncode, int(text[-1]) / 1024, time.time() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=float, nargs="+", default=[1.0])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--only", default="", help="commands to run, comma separated")
    ap.add_argument("--kinds", default="plain,zstd,pzstd", help="inputs to read, comma separated")
    ap.add_argument("--sample", default="0.002", help="annotate's --sample")
    ap.add_argument("--hash", default="16", help="annotate's --hash (MiB per thread)")
    a = ap.parse_args()
    KINDS.extend(a.kinds.split(","))
    only = [o for o in a.only.split(",") if o]
    want = lambda name: not only or any(o in name for o in only)
    rows = []
    for size in a.sizes:
        inputs = build(size)
        tag = f"{size:g} GB"
        scratch = os.path.join(OUT, "scratch")
        os.makedirs(scratch, exist_ok=True)
        for kind, path in inputs.items():
            if kind not in a.kinds.split(","):
                continue
            for t in a.threads:
                j = ["-j", str(t)]
                if want("replay"):
                    rows.append((f"replay", tag, kind, t, *peak(["replay", "--quiet", *j, path])))
                kbz = os.path.join(scratch, f"a-{size:g}-{kind}-{t}.kbz")
                if want("annotate") or want("kbz"):
                    rows.append(("annotate", tag, kind, t, *peak(
                        ["annotate", path, "-o", kbz, "--force", "-d", "1", "--hash", a.hash,
                         "--sample", a.sample, *j])))
        # The .kbz commands, on the file annotate wrote from the plain input.
        kbz = os.path.join(scratch, f"a-{size:g}-plain-1.kbz")
        if os.path.exists(kbz) and want("kbz"):
            mb = os.path.getsize(kbz) / 1e6
            ktag = f"{tag} of games ({mb:.0f} MB .kbz)"
            keys = os.path.join(scratch, f"keys-{size:g}.tsv.zst")
            for t in a.threads:
                j = ["-j", str(t)]
                rows.append(("relabel (annotate a .kbz)", ktag, "kbz", t, *peak(
                    ["annotate", kbz, "-o", os.path.join(scratch, "r.kbz"), "--force", "-d", "1",
                     "--hash", a.hash, *j])))
            rows.append(("dedup", ktag, "kbz", 1, *peak(
                ["dedup", kbz, kbz, "-o", os.path.join(scratch, "d.kbz"), "--force"])))
            rows.append(("dedup, 64 MiB table (spills)", ktag, "kbz", 1, *peak(
                ["dedup", kbz, kbz, "-o", os.path.join(scratch, "d.kbz"), "--force",
                 "--dedup-memory", "64"])))
            for fmt in ["plain", "binpack", "jsonl", "pgn", "bullet", "epd"]:
                rows.append((f"export --format {fmt}", ktag, "kbz", 1, *peak(
                    ["export", kbz, "--format", fmt, "-o", os.path.join(scratch, "e.out")])))
            rows.append(("stats", ktag, "kbz", 1, *peak(["stats", kbz, "--json"])))
            rows.append(("report", ktag, "kbz", 1, *peak(
                ["report", kbz, "-o", os.path.join(scratch, "r.html"),
                 "--json", os.path.join(scratch, "r.jsonl")])))
            # Shards of one run, merged.
            shards = []
            for k in range(2):
                shard = os.path.join(scratch, f"s{k}.kbz")
                peak(["annotate", inputs["plain"], "-o", shard, "--force", "-d", "1", "--hash",
                      a.hash, "--sample", a.sample, "--shard", f"{k}/2", "-j", "2"])
                shards.append(shard)
            rows.append(("merge (2 shards)", ktag, "kbz", 1, *peak(
                ["merge", *shards, "-o", os.path.join(scratch, "m.kbz"), "--force"])))
            # A key file written by replay, checked against the input.
            peak(["replay", "--quiet", inputs["plain"], "--keys", keys])
            for t in a.threads:
                rows.append(("replay --check-keys", tag, "plain", t, *peak(
                    ["replay", "--quiet", "-j", str(t), inputs["plain"], "--check-keys", keys])))
    print("| command | input | kind | threads | exit | peak RSS (MB) | seconds |")
    print("|---|---|---|---:|---:|---:|---:|")
    for name, tag, kind, t, code, rss, secs in rows:
        print(f"| {name} | {tag} | {kind} | {t} | {code} | {rss:.0f} | {secs:.1f} |")


if __name__ == "__main__":
    main()
