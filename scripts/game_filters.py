#!/usr/bin/env python3
"""Counts what kibitz's game filters should leave out, with python-chess
reading the tags: an independent count for `kibitz annotate`'s summary.

The rules, as `kibitz annotate --help` states them: a game is checked for
ratings (both players within --min-elo/--max-elo), mean rating, speed
(Lichess's classes of base + 40 x increment; `-` is correspondence), date
([UTCDate], else [Date]), termination (without case) and result, in that
order, and counted under the first it fails; a game lacking the tag a
filter needs (or holding `?`, a date with `??`) is counted apart.

    python3 scripts/game_filters.py FILE.pgn[.zst] [--min-elo N] [--max-elo N]
        [--min-avg-elo N] [--max-avg-elo N] [--speed a,b] [--date-from YYYY-MM-DD]
        [--date-to YYYY-MM-DD] [--termination a,b] [--result a,b]

Prints one JSON object: {"games": read, "kept": N, "filtered": {...},
"filtered_no_tag": {...}}.
"""

import argparse
import io
import json
import re
import subprocess

import chess.pgn

SPEEDS = ["ultrabullet", "bullet", "blitz", "rapid", "classical", "correspondence"]


def speed(tc):
    if tc is None:
        return None
    tc = tc.strip()
    if tc == "-":
        return "correspondence"
    m = re.fullmatch(r"(\d+)\+(\d+)", tc)
    if not m:
        return None
    total = int(m.group(1)) + 40 * int(m.group(2))
    for limit, name in [(30, "ultrabullet"), (180, "bullet"), (480, "blitz"),
                        (1500, "rapid"), (21600, "classical")]:
        if total < limit:
            return name
    return "correspondence"


def rating(value):
    if value is None or not value.strip().isdigit():
        return None
    r = int(value)
    return r if 0 < r <= 65535 else None


def date(value):
    if value is None:
        return None
    m = re.fullmatch(r"(\d{4})[.\-/](\d{2})[.\-/](\d{2})", value.strip())
    return f"{m.group(1)}.{m.group(2)}.{m.group(3)}" if m else None


def verdict(h, a):
    w, b = rating(h.get("WhiteElo")), rating(h.get("BlackElo"))
    if a.min_elo is not None or a.max_elo is not None:
        if w is None or b is None:
            return ("no_tag", "elo")
        lo = a.min_elo if a.min_elo is not None else 0
        hi = a.max_elo if a.max_elo is not None else 1 << 20
        if not (lo <= w <= hi and lo <= b <= hi):
            return ("out", "elo")
    if a.min_avg_elo is not None or a.max_avg_elo is not None:
        if w is None or b is None:
            return ("no_tag", "avg-elo")
        mean = (w + b) / 2
        if (a.min_avg_elo is not None and mean < a.min_avg_elo) or \
                (a.max_avg_elo is not None and mean > a.max_avg_elo):
            return ("out", "avg-elo")
    if a.speed:
        s = speed(h.get("TimeControl"))
        if s is None:
            return ("no_tag", "speed")
        if s not in a.speed:
            return ("out", "speed")
    if a.date_from or a.date_to:
        d = date(h.get("UTCDate", h.get("Date")))
        if d is None:
            return ("no_tag", "date")
        if (a.date_from and d < date(a.date_from)) or (a.date_to and d > date(a.date_to)):
            return ("out", "date")
    if a.termination:
        t = h.get("Termination")
        if t is None:
            return ("no_tag", "termination")
        if t.strip().lower() not in [x.lower() for x in a.termination]:
            return ("out", "termination")
    if a.result:
        r = h.get("Result")
        if not r:
            return ("no_tag", "result")
        if r not in a.result:
            return ("out", "result")
    return None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("file")
    for flag in ["--min-elo", "--max-elo", "--min-avg-elo", "--max-avg-elo"]:
        p.add_argument(flag, type=int)
    split = lambda s: [x.strip() for x in s.split(",")]
    p.add_argument("--speed", type=split, default=[])
    p.add_argument("--date-from")
    p.add_argument("--date-to")
    p.add_argument("--termination", type=split, default=[])
    p.add_argument("--result", type=split, default=[])
    a = p.parse_args()
    if a.file.endswith(".zst"):
        raw = subprocess.run(["zstd", "-dc", a.file], check=True, capture_output=True).stdout
        f = io.StringIO(raw.decode("utf-8", errors="replace"))
    else:
        f = open(a.file, encoding="utf-8", errors="replace")
    counts = {"games": 0, "kept": 0, "filtered": {}, "filtered_no_tag": {}}
    while True:
        h = chess.pgn.read_headers(f)
        if h is None:
            break
        counts["games"] += 1
        v = verdict(h, a)
        if v is None:
            counts["kept"] += 1
        else:
            key = "filtered" if v[0] == "out" else "filtered_no_tag"
            counts[key][v[1]] = counts[key].get(v[1], 0) + 1
    print(json.dumps(counts, sort_keys=True))


if __name__ == "__main__":
    main()
