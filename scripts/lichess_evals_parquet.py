#!/usr/bin/env python3
"""Writes labelled positions (kibitz's `export --format jsonl`) as a
Parquet file in the schema of Lichess's `chess-position-evaluations`
dataset on Hugging Face, with pyarrow.

The dataset's columns: fen (board, side, castling, en passant: no move
counters), line (the variation in UCI), depth, knodes, cp (null for a
mate), mate (moves; null otherwise), all scores from White's point of view,
one row per line. Here each position gives a row per line of its label
(the best move, then each multi-PV line) and, with --shallow, a first
shallower evaluation (depth - 1, its score off by 50) that a reader must
pass over for the deeper one. The JSON scores are the side to move's
(kibitz's); they are turned to White's here, independently of kibitz's
reading, so that reading the file back must give the JSON's scores again.

Usage: lichess_evals_parquet.py IN.jsonl OUT.parquet [--row-group-size N]
       [--compression zstd] [--shallow] [--drop-column NAME]
"""

import argparse
import json

import pyarrow as pa
import pyarrow.parquet as pq

SCHEMA = pa.schema([
    ("fen", pa.string()),
    ("line", pa.string()),
    ("depth", pa.int64()),
    ("knodes", pa.int64()),
    ("cp", pa.int64()),
    ("mate", pa.int64()),
])


def white(value, fen):
    if value is None:
        return None
    return value if fen.split()[1] == "w" else -value


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--row-group-size", type=int, default=1000)
    ap.add_argument("--compression", default="zstd")
    ap.add_argument("--shallow", action="store_true")
    ap.add_argument("--drop-column")
    args = ap.parse_args()
    rows = []
    for text in open(args.input):
        p = json.loads(text)
        if p.get("best") is None:
            continue
        fen = " ".join(p["fen"].split()[:4])
        lines = [(p["best"], p["score"], p["mate"])]
        for alt in p.get("multipv", [])[1:]:
            lines.append((alt["move"], alt["score"], alt["mate"]))
        depth = p["depth"]
        if args.shallow:
            cp = p["score"]
            rows.append({"fen": fen, "line": p["best"], "depth": max(depth - 1, 0), "knodes": 1,
                         "cp": white(cp + 50 if cp is not None else 0, fen), "mate": None})
        for move, cp, mate in lines:
            rows.append({"fen": fen, "line": move, "depth": depth, "knodes": 2,
                         "cp": white(cp, fen), "mate": white(mate, fen)})
    schema = SCHEMA
    if args.drop_column:
        schema = schema.remove(schema.get_field_index(args.drop_column))
        for r in rows:
            r.pop(args.drop_column, None)
    table = pa.Table.from_pylist(rows, schema=schema)
    pq.write_table(table, args.output, row_group_size=args.row_group_size,
                   compression=args.compression)


if __name__ == "__main__":
    main()
