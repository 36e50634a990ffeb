#!/usr/bin/env python3
"""Checks kibitz's Parquet with the clients its users query with.

1. Inputs: every real database of the shared data is written with pyarrow
   in the schema of Lichess's `standard-chess-games` (scripts/
   lichess_parquet.py), with snappy and with zstd, in row groups of 1,000
   and of 37, with an extra column; the games it holds are also written as
   PGN. kibitz must read both alike: `replay`'s counts, and `annotate`'s
   labels exported as JSON lines, equal. A file without `movetext` (or
   another moves column) must be refused with an error that names the
   columns looked for.
2. Other pipelines' tables: from every real database (games) and every
   EPD suite (positions) of the shared data, pandas and pyarrow write
   tables under other names (`pgn` holding whole games, `white_elo` as
   floats with gaps; `fen`, `next_move`, `cp`, `mate`) in every shape a
   user's file may have: snappy and zstd, one and several row groups,
   dictionary and plain strings, `large_string`, an extra pandas index
   column, a null-typed column; and the same as CSV and zstd TSV. `replay`
   must count the games and plies of the PGN (the EPD) of the same games
   (positions), and `annotate` must write the same JSON lines (a table of
   positions adds the played move); a table's evaluations, read with
   `--label table`, equal the EPD's `ce` and `dm`.
3. Outputs: a Lichess database annotated with `--preset analysis`,
   exported with `export --format parquet` and summed up with `report
   --parquet`; DuckDB, polars, pandas and pyarrow read every file, and
   their counts, sums and histograms must equal `kibitz stats --json` and
   the report's JSON lines.
4. The README's example, run as written: a Lichess month in the dataset's
   folder layout to a DuckDB query of accuracy by rating band.

Prints each query and its result next to kibitz's; exits 1 on any
difference.

Usage: parquet_clients.py --kibitz BIN --data ../shared/data [--work DIR]
       [--readme README.md]
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lichess_parquet  # noqa: E402  (the schema and the PGN splitting, shared)

FAILURES = []


def check(what, got, want):
    ok = got == want
    print(f"{'ok  ' if ok else 'FAIL'} {what}: {got!r}" + ("" if ok else f" (kibitz: {want!r})"))
    if not ok:
        FAILURES.append(what)




def run(kibitz, *args, check_code=True):
    p = subprocess.run([kibitz, *args], capture_output=True, text=True)
    if check_code and p.returncode != 0:
        raise SystemExit(f"kibitz {' '.join(args)} failed ({p.returncode}): {p.stderr}")
    return p


def summary(text, key):
    for line in text.splitlines():
        if line.startswith(key):
            return line
    return None


def write_games(conv, pgn_path, out, pgn_out=None, compression="snappy", row_group=1000,
                extra=False, drop=None, max_games=0):
    rows, raws = [], []
    for tags, movetext, raw in conv.games(conv.open_text(pgn_path)):
        if "FEN" in tags or "Variant" in tags:
            continue
        r = conv.row(tags, movetext)
        if extra:
            r["Round"] = tags.get("Round")
        rows.append(r)
        raws.append(raw.strip() + "\n")
        if max_games and len(rows) >= max_games:
            break
    schema = conv.SCHEMA
    if extra:
        schema = schema.append(pa.field("Round", pa.string()))
    if drop:
        schema = schema.remove(schema.get_field_index(drop))
        for r in rows:
            r.pop(drop, None)
    table = pa.Table.from_pylist(rows, schema=schema)
    pq.write_table(table, out, compression=compression, row_group_size=row_group)
    if pgn_out:
        with open(pgn_out, "w", encoding="utf-8") as f:
            for raw in raws:
                f.write(raw + "\n")
    return len(rows)


def inputs(kibitz, shared, work, conv):
    print("== inputs: PGN and Parquet read alike")
    files = sorted(glob.glob(os.path.join(shared, "pgn/real/*.pgn.zst")))
    for path in files:
        name = os.path.basename(path).removesuffix(".pgn.zst")
        pgn = os.path.join(work, f"{name}.pgn")
        shapes = [("snappy", dict(compression="snappy"))]
        if name.startswith("lichess"):
            shapes += [("zstd-37", dict(compression="zstd", row_group=37)),
                       ("extra", dict(compression="snappy", extra=True))]
        reference = None
        for shape, kw in shapes:
            parquet = os.path.join(work, f"{name}.{shape}.parquet")
            n = write_games(conv, path, parquet, pgn_out=pgn if reference is None else None, **kw)
            if n == 0:
                # Lichess's schema holds standard games from the start
                # position only (the table shapes below read the rest).
                print(f"     {name}: no standard game from the start position")
                break
            if reference is None:
                p = run(kibitz, "replay", pgn, check_code=False)
                label = (["--label", "pgn-eval"] if name.startswith("lichess")
                         else ["--depth", "2", "--max-games", "60"])
                kbz = os.path.join(work, f"{name}.pgn.kbz")
                run(kibitz, "annotate", pgn, *label, "--force", "-o", kbz)
                jsonl = run(kibitz, "export", kbz, "--format", "jsonl").stdout
                reference = (summary(p.stdout, "games"), summary(p.stdout, "plies"), jsonl, label)
            p = run(kibitz, "replay", parquet, check_code=False)
            check(f"{name} ({n} games, {shape}): replay's games",
                  summary(p.stdout, "games"), reference[0])
            check(f"{name} ({shape}): replay's plies", summary(p.stdout, "plies"), reference[1])
            kbz = os.path.join(work, f"{name}.{shape}.kbz")
            run(kibitz, "annotate", parquet, *reference[3], "--force", "-o", kbz)
            jsonl = run(kibitz, "export", kbz, "--format", "jsonl").stdout
            check(f"{name} ({shape}): annotate's labels as JSON lines ({len(jsonl.splitlines())})"
                  " equal the PGN's", jsonl == reference[2], True)
    lichess = [f for f in files if os.path.basename(f).startswith("lichess")][0]
    missing = os.path.join(work, "no-movetext.parquet")
    write_games(conv, lichess, missing, drop="movetext", max_games=20)
    p = run(kibitz, "replay", missing, check_code=False)
    check("a file without movetext: the error names the moves columns looked for",
          "no column of moves or positions: looked for one of movetext" in p.stderr
          and p.returncode != 0,
          True)


def shaped(frame, path, shape):
    """Writes a pandas frame in one of the shapes users' files have."""
    if shape == "pandas-snappy-index":
        # pandas keeps a non-default index as a column of its own.
        frame = frame.set_axis(frame.index * 3 + 7).rename_axis("row_id")
        frame.to_parquet(path, engine="pyarrow", compression="snappy", index=True)
        return
    if shape == "csv":
        frame.to_csv(path, index=True)
        return
    table = pa.Table.from_pandas(frame, preserve_index=False)
    if shape == "zstd-rowgroups-37-plain":
        pq.write_table(table, path, compression="zstd", row_group_size=37, use_dictionary=False)
    elif shape == "large-string-dictionary":
        fields = [pa.field(f.name, pa.large_string()) if pa.types.is_string(f.type) else f
                  for f in table.schema]
        table = table.cast(pa.schema(fields))
        pq.write_table(table, path, compression="snappy", use_dictionary=True,
                       row_group_size=100_000)
    elif shape == "null-column":
        table = table.append_column("notes", pa.nulls(len(table), pa.null()))
        pq.write_table(table, path, compression="zstd", row_group_size=50)
    else:
        raise ValueError(shape)


SHAPES = ["pandas-snappy-index", "zstd-rowgroups-37-plain", "large-string-dictionary",
          "null-column", "csv", "tsv-zstd"]


def write_shape(frame, work, stem, shape):
    ext = {"csv": "csv", "tsv-zstd": "tsv.zst"}.get(shape, "parquet")
    path = os.path.join(work, f"{stem}.{shape}.{ext}")
    if shape == "tsv-zstd":
        text = frame.to_csv(sep="\t", index=False).encode()
        p = subprocess.run(["zstd", "-q", "-c"], input=text, capture_output=True, check=True)
        with open(path, "wb") as f:
            f.write(p.stdout)
    else:
        shaped(frame, path, shape)
    return path


def jsonl_without_played(text):
    out = []
    for line in text.splitlines():
        v = json.loads(line)
        v.pop("played", None)
        out.append(v)
    return out


def check_shapes(kibitz, work, frame, what, reference, runs):
    """Writes `frame` in every shape; each must replay as `reference`
    (games and plies) and annotate, for each (flags, view, want, title) of
    `runs`, to JSON lines whose `view` is `want`."""
    stem = re.sub(r"\W+", "-", what)
    kbz = os.path.join(work, f"{stem}.kbz")
    for shape in SHAPES:
        table = write_shape(frame, work, stem, shape)
        p = run(kibitz, "replay", table, check_code=False)
        check(f"{what}, {shape}: replay's games and plies",
              (summary(p.stdout, "games"), summary(p.stdout, "plies")), reference)
        for flags, view, want, title in runs:
            run(kibitz, "annotate", table, *flags, "--force", "-o", kbz)
            got = run(kibitz, "export", kbz, "--format", "jsonl").stdout
            check(f"{what}, {shape}: {title} ({len(got.splitlines())} lines)",
                  view(got) == want, True)


def table_shapes(kibitz, shared, work, conv):
    print("== other pipelines' tables, in every shape, read as their PGN and EPD")
    import chess
    # Games: a `pgn` cell holding each whole game (tags and all), other
    # columns beside it under other names.
    for path in sorted(glob.glob(os.path.join(shared, "pgn/real/*.pgn.zst"))):
        name = os.path.basename(path).removesuffix(".pgn.zst")
        rows, raws = [], []
        for tags, movetext, raw in conv.games(conv.open_text(path)):
            raw = raw.strip() + "\n"
            elo = conv.as_int(tags.get("WhiteElo"))
            rows.append({"pgn": raw, "white_player": tags.get("White"),
                         "white_elo": float(elo) if elo is not None and len(rows) % 4 else None})
            raws.append(raw)
            if len(rows) >= 400:
                break
        pgn = os.path.join(work, f"shape-{name}.pgn")
        with open(pgn, "w", encoding="utf-8") as f:
            f.write("\n".join(raws))
        frame = pd.DataFrame(rows)
        label = ["--depth", "2", "--max-games", "25"]
        p = run(kibitz, "replay", pgn, check_code=False)
        reference = (summary(p.stdout, "games"), summary(p.stdout, "plies"))
        kbz = os.path.join(work, f"shape-{name}.kbz")
        run(kibitz, "annotate", pgn, *label, "--force", "-o", kbz)
        want = run(kibitz, "export", kbz, "--format", "jsonl").stdout
        runs = [(label, lambda text: text, want, "annotate's JSON lines equal the PGN's")]
        check_shapes(kibitz, work, frame, f"{name} games ({len(rows)})", reference, runs)
    # Positions: every EPD suite, its positions as FENs with a played move
    # (a legal move of the position, UCI or SAN) and an evaluation for
    # White (a mate every 13th row).
    for path in sorted(glob.glob(os.path.join(shared, "epd/*.epd*"))):
        name = os.path.basename(path).split(".")[0]
        chess960 = "FRC" in name
        rows, bare, given = [], [], []
        for i, line in enumerate(conv.open_text(path).splitlines()):
            line = line.strip().strip("\0")
            if not line or line.startswith("#"):
                continue
            fields = line.replace(";", " ; ").split()
            try:
                board = chess.Board(" ".join(fields[:4]) + " 0 1", chess960=chess960)
            except ValueError:
                continue
            moves = sorted(board.legal_moves, key=lambda m: m.uci())
            if not moves or not board.is_valid():
                continue
            move = moves[i % len(moves)]
            mate = i % 13 == 5
            value = (i % 5) - 2 or 1 if mate else (i * 37) % 601 - 300
            sign = 1 if board.turn == chess.WHITE else -1
            fen = board.fen()
            rows.append({"FEN": fen,
                         "next_move": board.san(move) if i % 2 else board.uci(move),
                         "cp": None if mate else value,
                         "mate": value if mate else None})
            bare.append(fen)
            op = f"dm {value * sign}" if mate else f"ce {value * sign}"
            given.append(f"{fen}; sm {board.uci(move)}; {op};")
            if len(rows) >= 300:
                break
        epd = os.path.join(work, f"shape-{name}.epd")
        with open(epd, "w") as f:
            f.write("\n".join(bare) + "\n")
        given_epd = os.path.join(work, f"shape-{name}-given.epd")
        with open(given_epd, "w") as f:
            f.write("\n".join(given) + "\n")
        frame = pd.DataFrame(rows).astype({"cp": "Int64", "mate": "Int64"})
        p = run(kibitz, "replay", epd, check_code=False)
        reference = (summary(p.stdout, "games"), summary(p.stdout, "plies"))
        search = ["--depth", "2", "--max-games", "40", "--skip-check", "false",
                  "--skip-captures", "false"]
        kbz = os.path.join(work, f"shape-{name}.kbz")
        run(kibitz, "annotate", epd, *search, "--force", "-o", kbz)
        want = jsonl_without_played(run(kibitz, "export", kbz, "--format", "jsonl").stdout)
        given_args = ["--label", "table", "--skip-check", "false", "--skip-captures", "false"]
        run(kibitz, "annotate", given_epd, *given_args, "--force", "-o", kbz)
        want_given = run(kibitz, "export", kbz, "--format", "jsonl").stdout
        runs = [(search, jsonl_without_played, want, "annotate's JSON lines equal the EPD's"),
                (given_args, lambda text: text, want_given,
                 "the evaluations read as the EPD's ce and dm")]
        check_shapes(kibitz, work, frame, f"{name} positions ({len(rows)})", reference, runs)


def stats_queries(kibitz, work, kbz, table):
    print("== export --format parquet against kibitz stats --json")
    stats = json.loads(run(kibitz, "stats", kbz, "--json").stdout)
    bins = len(stats["score"])
    rng = bins * 25  # bins of 50 from -range
    sql = {
        "positions": f"SELECT count(*) FROM '{table}'",
        "games": f"SELECT count(DISTINCT game) FROM '{table}'",
        "side_to_move": f"SELECT count(*) FILTER (side_to_move = 'w'), "
                        f"count(*) FILTER (side_to_move = 'b') FROM '{table}'",
        "mates": f"SELECT count(*) FILTER (mate < 0), count(*) FILTER (mate > 0) FROM '{table}'",
        "score_beyond": f"SELECT count(*) FILTER (cp < -{rng}), count(*) FILTER (cp >= {rng}) "
                        f"FROM '{table}'",
        "score": f"SELECT (cp + {rng}) // 50 AS bin, count(*) FROM '{table}' "
                 f"WHERE cp >= -{rng} AND cp < {rng} GROUP BY bin ORDER BY bin",
        "result": f"""SELECT
            count(*) FILTER (Result = '0-1' AND side_to_move = 'w' OR Result = '1-0' AND side_to_move = 'b'),
            count(*) FILTER (Result = '1/2-1/2'),
            count(*) FILTER (Result = '1-0' AND side_to_move = 'w' OR Result = '0-1' AND side_to_move = 'b'),
            count(*) FILTER (Result NOT IN ('1-0', '0-1', '1/2-1/2'))
            FROM '{table}'""",
        "pieces": f"SELECT length(regexp_replace(split_part(fen, ' ', 1), '[^A-Za-z]', '', 'g')) "
                  f"AS n, count(*) FROM '{table}' GROUP BY n ORDER BY n",
    }
    con = duckdb.connect()
    for key, q in sql.items():
        rows = con.sql(q).fetchall()
        if key in ("score", "pieces"):
            hist = [0] * len(stats[key])
            for b, c in rows:
                hist[int(b)] += c
            got = hist
        elif len(rows[0]) == 1:
            got = rows[0][0]
        else:
            got = list(rows[0])
        print(f"     DuckDB: {' '.join(q.split())}")
        check(f"DuckDB {key}", got, stats[key])
    # polars
    df = pl.read_parquet(table)
    check("polars positions", df.height, stats["positions"])
    check("polars games", df["game"].n_unique(), stats["games"])
    check("polars side_to_move",
          [df.filter(pl.col("side_to_move") == s).height for s in "wb"], stats["side_to_move"])
    cp = df.filter((pl.col("cp") >= -rng) & (pl.col("cp") < rng))
    counts = cp.group_by(((pl.col("cp") + rng) // 50).alias("bin")).len().sort("bin")
    hist = [0] * bins
    for b, c in counts.iter_rows():
        hist[b] += c
    check("polars score histogram", hist, stats["score"])
    check("polars mates", [df.filter(pl.col("mate") < 0).height, df.filter(pl.col("mate") > 0).height],
          stats["mates"])
    # pandas
    pdf = pd.read_parquet(table)
    check("pandas positions", len(pdf), stats["positions"])
    check("pandas games", pdf["game"].nunique(), stats["games"])
    inside = pdf[(pdf["cp"] >= -rng) & (pdf["cp"] < rng)]
    hist = [0] * bins
    for b, c in ((inside["cp"] + rng) // 50).astype(int).value_counts().items():
        hist[b] += int(c)
    check("pandas score histogram", hist, stats["score"])
    # pyarrow
    t = pq.read_table(table)
    check("pyarrow positions", t.num_rows, stats["positions"])
    check("pyarrow side_to_move",
          [pc.sum(pc.equal(t["side_to_move"], s)).as_py() for s in "wb"], stats["side_to_move"])
    check("pyarrow mates", [pc.sum(pc.less(t["mate"], 0)).as_py() or 0,
                            pc.sum(pc.greater(t["mate"], 0)).as_py() or 0], stats["mates"])
    md = pq.ParquetFile(table).metadata
    codecs = {md.row_group(g).column(c).compression for g in range(md.num_row_groups)
              for c in range(md.num_columns)}
    check("pyarrow: every column chunk is zstd", codecs, {"ZSTD"})


def report_queries(kibitz, work, kbz):
    print("== report --parquet against the report's JSON")
    tables = os.path.join(work, "report")
    jsonl = os.path.join(work, "report.jsonl")
    run(kibitz, "report", kbz, "-o", os.path.join(work, "report.html"), "--json", jsonl,
        "--parquet", tables)
    lines = [json.loads(l) for l in open(jsonl)]
    games = [l for l in lines if l["kind"] == "game"]
    players = [l for l in lines if l["kind"] == "player"]
    con = duckdb.connect()
    g = f"'{tables}/games.parquet'"
    p = f"'{tables}/players.parquet'"
    q = f"SELECT count(*), sum(white_blunders + black_blunders), sum(white_endgame_mistakes) FROM {g}"
    print(f"     DuckDB: {q}")
    check("DuckDB games, blunders, White's endgame mistakes", list(con.sql(q).fetchall()[0]),
          [len(games), sum(x["white"]["game"]["blunders"] + x["black"]["game"]["blunders"] for x in games),
           sum(x["white"]["endgame"]["mistakes"] for x in games)])
    q = f"SELECT round(avg(white_accuracy), 6) FROM {g}"
    acc = [x["white"]["game"]["accuracy"] for x in games if x["white"]["game"]["accuracy"] is not None]
    check("DuckDB mean White accuracy", con.sql(q).fetchall()[0][0], round(sum(acc) / len(acc), 6))
    q = f"SELECT count(*), sum(all_games), sum(all_inaccuracies) FROM {p}"
    print(f"     DuckDB: {q}")
    check("DuckDB players, their games, inaccuracies", list(con.sql(q).fetchall()[0]),
          [len(players), sum(x["all"]["games"] for x in players),
           sum(x["all"]["inaccuracies"] for x in players)])
    df = pl.read_parquet(f"{tables}/players.parquet")
    by_name = {x["name"]: x for x in players}
    same = all(abs((r["all_acpl"] or 0) - (by_name[r["name"]]["all"]["acpl"] or 0)) < 1e-9
               for r in df.iter_rows(named=True))
    check("polars: every player's ACPL is the JSON's", same, True)
    pdf = pd.read_parquet(f"{tables}/games.parquet")
    check(f"pandas: the games' Sites are the JSON's ({len(games)})",
          sorted(pdf["Site"].dropna()) == sorted(x["site"] for x in games if x["site"]), True)


README_SQL = re.compile(r"```sql\n(.*?)```", re.S)


def readme_example(kibitz, shared, work, conv, readme):
    print("== the README's example, run as written")
    text = open(readme, encoding="utf-8").read()
    block = text[text.index("<!-- parquet-example -->"):text.index("<!-- /parquet-example -->")]
    commands = re.search(r"```sh\n(.*?)```", block, re.S).group(1)
    sql = README_SQL.search(block).group(1)
    month = os.path.join(work, "lichess/data/year=2025/month=05")
    os.makedirs(month, exist_ok=True)
    lichess = glob.glob(os.path.join(shared, "pgn/real/lichess*.pgn.zst"))[0]
    rows = [conv.row(t, m) for t, m, _ in conv.games(conv.open_text(lichess)) if "FEN" not in t]
    rows = rows[:120]
    for k in range(2):
        part = rows[k * 60:(k + 1) * 60]
        pq.write_table(pa.Table.from_pylist(part, schema=conv.SCHEMA),
                       os.path.join(month, f"train-{k:05d}-of-00002.parquet"), row_group_size=1000)
    for line in commands.strip().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        args = line.split()
        assert args[0] == "kibitz", line
        p = subprocess.run([kibitz] + args[1:], capture_output=True, text=True, cwd=work)
        if p.returncode != 0:
            raise SystemExit(f"{line} failed: {p.stderr}")
    # The query's paths are the README's, relative to where it was run.
    here = os.getcwd()
    os.chdir(work)
    try:
        result = duckdb.connect().sql(sql).fetchall()
    finally:
        os.chdir(here)
    print(f"     DuckDB: {' '.join(sql.split())}")
    for r in result:
        print(f"       {r}")
    games = pd.read_parquet(os.path.join(work, "may/games.parquet"))
    rated = int(games["WhiteElo"].notna().sum() + games["BlackElo"].notna().sum())
    check("README query: rating bands", len(result) > 3, True)
    check("README query: every rated side of every game counted", sum(r[1] for r in result), rated)
    bots = sum(1 for r in rows if "BOT" in (r["WhiteTitle"], r["BlackTitle"]))
    check("README example: bots' games left out", len(games), len(rows) - bots)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kibitz", required=True)
    ap.add_argument("--data", required=True, help="the shared data folder")
    ap.add_argument("--work")
    ap.add_argument("--readme", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                      "..", "README.md"))
    args = ap.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="kibitz-parquet-")
    os.makedirs(work, exist_ok=True)
    conv = lichess_parquet
    print(f"pyarrow {pa.__version__}, DuckDB {duckdb.__version__}, polars {pl.__version__}, "
          f"pandas {pd.__version__}")
    inputs(args.kibitz, args.data, work, conv)
    table_shapes(args.kibitz, args.data, work, conv)
    lichess = glob.glob(os.path.join(args.data, "pgn/real/lichess*.pgn.zst"))[0]
    parquet = os.path.join(work, "outputs.parquet")
    write_games(conv, lichess, parquet, max_games=150)
    kbz = os.path.join(work, "analysis.kbz")
    run(args.kibitz, "annotate", parquet, "--preset", "analysis", "--depth", "4", "--pv", "3",
        "--force", "-o", kbz)
    table = os.path.join(work, "positions.parquet")
    run(args.kibitz, "export", kbz, "--format", "parquet", "-o", table)
    stats_queries(args.kibitz, work, kbz, table)
    report_queries(args.kibitz, work, kbz)
    readme_example(args.kibitz, args.data, work, conv, args.readme)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    if FAILURES:
        print(f"{len(FAILURES)} checks failed: {', '.join(FAILURES)}")
        sys.exit(1)
    print("every check passed")


if __name__ == "__main__":
    main()
