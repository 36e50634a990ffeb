#!/usr/bin/env python3
"""Writes PGN games as a Parquet file in the schema of Lichess's
`standard-chess-games` dataset on Hugging Face, with pyarrow.

The columns, in the dataset's order and types: Event, Site, White, Black,
Result, WhiteTitle, BlackTitle (string), WhiteElo, BlackElo,
WhiteRatingDiff, BlackRatingDiff (int16), UTCDate (date32), UTCTime
(time32[s]), ECO, Opening, Termination, TimeControl, movetext (string). A
tag a game lacks (or a value that does not fit the type: `?` as a rating)
is a null; `movetext` is the game's moves as the file writes them, its
lines joined by spaces. Games with a `[FEN]` or `[Variant]` tag are left
out (the dataset holds standard games from the start position); with
`--pgn-out` the games written are also written as PGN, as the file had
them, so that both can be read and compared.

Usage:
  lichess_parquet.py IN.pgn[.zst] OUT.parquet [--pgn-out OUT.pgn]
      [--max-games N] [--row-group-size 1000] [--compression snappy]
      [--extra-column] [--drop-column NAME] [--repeat K]
"""

import argparse
import datetime
import re
import sys

import pyarrow as pa
import pyarrow.parquet as pq

STRING = pa.string()
SCHEMA = pa.schema(
    [
        ("Event", STRING),
        ("Site", STRING),
        ("White", STRING),
        ("Black", STRING),
        ("Result", STRING),
        ("WhiteTitle", STRING),
        ("BlackTitle", STRING),
        ("WhiteElo", pa.int16()),
        ("BlackElo", pa.int16()),
        ("WhiteRatingDiff", pa.int16()),
        ("BlackRatingDiff", pa.int16()),
        ("UTCDate", pa.date32()),
        ("UTCTime", pa.time32("s")),
        ("ECO", STRING),
        ("Opening", STRING),
        ("Termination", STRING),
        ("TimeControl", STRING),
        ("movetext", STRING),
    ]
)

TAG = re.compile(r'^\[([A-Za-z0-9_]+)\s+"(.*)"\]\s*$')


def open_text(path):
    if path.endswith(".zst"):
        raw = pa.CompressedInputStream(pa.OSFile(path), "zstd")
        data = raw.read()
    else:
        with open(path, "rb") as f:
            data = f.read()
    return data.decode("utf-8", errors="replace")


def games(text):
    """Yields (tags, movetext, raw text) of each game."""
    tags, moves, raw = {}, [], []
    for line in text.splitlines():
        m = TAG.match(line.strip())
        if m and moves:
            yield tags, " ".join(moves), "\n".join(raw)
            tags, moves, raw = {}, [], []
        if m:
            value = m.group(2).replace('\\"', '"').replace("\\\\", "\\")
            tags[m.group(1)] = value
            raw.append(line)
        elif line.strip():
            if tags or moves:
                moves.append(line.strip())
                raw.append(line)
        elif raw:
            raw.append(line)
    if tags or moves:
        yield tags, " ".join(moves), "\n".join(raw)


def as_int(value):
    try:
        v = int(value)
    except (TypeError, ValueError):
        return None
    return v if -32768 <= v <= 32767 else None


def as_date(value):
    try:
        y, m, d = (int(x) for x in re.split(r"[.\-/]", value))
        return datetime.date(y, m, d)
    except (TypeError, ValueError):
        return None


def as_time(value):
    try:
        h, m, s = (int(x) for x in value.split(":"))
        return datetime.time(h, m, s)
    except (AttributeError, ValueError):
        return None


def row(tags, movetext):
    text = lambda k: tags.get(k)
    return {
        "Event": text("Event"),
        "Site": text("Site"),
        "White": text("White"),
        "Black": text("Black"),
        "Result": text("Result"),
        "WhiteTitle": text("WhiteTitle"),
        "BlackTitle": text("BlackTitle"),
        "WhiteElo": as_int(tags.get("WhiteElo")),
        "BlackElo": as_int(tags.get("BlackElo")),
        "WhiteRatingDiff": as_int(tags.get("WhiteRatingDiff")),
        "BlackRatingDiff": as_int(tags.get("BlackRatingDiff")),
        "UTCDate": as_date(tags.get("UTCDate", tags.get("Date"))),
        "UTCTime": as_time(tags.get("UTCTime")),
        "ECO": text("ECO"),
        "Opening": text("Opening"),
        "Termination": text("Termination"),
        "TimeControl": text("TimeControl"),
        "movetext": movetext,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--pgn-out")
    ap.add_argument("--max-games", type=int, default=0)
    ap.add_argument("--row-group-size", type=int, default=1000)
    ap.add_argument("--compression", default="snappy")
    ap.add_argument("--extra-column", action="store_true",
                    help="add a column the dataset lacks (Round), last")
    ap.add_argument("--drop-column", help="leave this column out")
    ap.add_argument("--repeat", type=int, default=1,
                    help="write the games this many times (a larger file)")
    args = ap.parse_args()
    rows, raws, left_out = [], [], 0
    for tags, movetext, raw in games(open_text(args.input)):
        if "FEN" in tags or "Variant" in tags:
            left_out += 1
            continue
        r = row(tags, movetext)
        if args.extra_column:
            r["Round"] = tags.get("Round")
        rows.append(r)
        raws.append(raw.strip() + "\n")
        if args.max_games and len(rows) >= args.max_games:
            break
    schema = SCHEMA
    if args.extra_column:
        schema = schema.append(pa.field("Round", STRING))
    if args.drop_column:
        schema = schema.remove(schema.get_field_index(args.drop_column))
        for r in rows:
            r.pop(args.drop_column, None)
    table = pa.Table.from_pylist(rows, schema=schema)
    writer = pq.ParquetWriter(args.output, schema, compression=args.compression)
    for _ in range(args.repeat):
        writer.write_table(table, row_group_size=args.row_group_size)
    writer.close()
    if args.pgn_out:
        with open(args.pgn_out, "w", encoding="utf-8") as f:
            for _ in range(args.repeat):
                for raw in raws:
                    f.write(raw + "\n")
    print(f"{len(rows) * args.repeat} games written, {left_out} with [FEN] or [Variant] left out",
          file=sys.stderr)


if __name__ == "__main__":
    main()
