//! Parquet in and out: Lichess's game and evaluation datasets read as
//! kibitz's inputs, and the tables kibitz writes read back.
//!
//! The games files are written here with arrow-rs in the dataset's schema
//! (column order, types, nulls as the dataset card gives them) from the
//! project's sample games, each given Lichess's tags (ratings, titles,
//! clock, date); the same games are written as PGN, and both must read the
//! same. The clients Lichess's users query with (DuckDB, polars, pandas,
//! pyarrow) are exercised by `scripts/parquet_clients.py` under the
//! `parquet-clients` feature.

use std::{path::Path, sync::Arc};

use arrow_array::{
    ArrayRef, RecordBatch,
    builder::{Date32Builder, Int16Builder, Int64Builder, StringBuilder, Time32MillisecondBuilder},
    cast::AsArray,
};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use parquet::{
    arrow::{ArrowWriter, arrow_reader::ParquetRecordBatchReaderBuilder},
    basic::{Compression, ZstdLevel},
    file::properties::WriterProperties,
};

use crate::util::{TempDir, kibitz, s, sample};

/// One game: its tags and its moves.
#[derive(Clone, Debug)]
struct Game {
    tags: Vec<(String, String)>,
    movetext: String,
}

impl Game {
    fn tag(&self, name: &str) -> Option<&str> {
        self.tags.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

/// The sample's games, each given Lichess's tags: ratings, a title for
/// some (a bot among them), a clock, a day and a time, a termination.
fn lichess_games() -> Vec<Game> {
    let text = std::fs::read_to_string(sample()).unwrap();
    let mut games: Vec<Game> = Vec::new();
    let mut in_moves = false;
    for line in text.lines() {
        let line = line.trim();
        if let Some(inner) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            if in_moves || games.is_empty() {
                games.push(Game { tags: Vec::new(), movetext: String::new() });
                in_moves = false;
            }
            let (name, value) = inner.split_once(' ').unwrap();
            let value = value.trim().trim_matches('"').to_string();
            games.last_mut().unwrap().tags.push((name.to_string(), value));
        } else if !line.is_empty() {
            in_moves = true;
            let g = games.last_mut().unwrap();
            if !g.movetext.is_empty() {
                g.movetext.push(' ');
            }
            g.movetext.push_str(line);
        }
    }
    for (i, g) in games.iter_mut().enumerate() {
        g.tags.retain(|(k, _)| !matches!(k.as_str(), "Date" | "Round"));
        let day = 1 + i % 28;
        let extra = [
            ("UTCDate", format!("2016.05.{day:02}")),
            ("UTCTime", format!("{:02}:{:02}:{:02}", i % 24, (7 * i) % 60, (13 * i) % 60)),
            ("WhiteElo", (1400 + 60 * i).to_string()),
            ("BlackElo", (2600 - 55 * i).to_string()),
            ("WhiteRatingDiff", format!("+{}", i % 9)),
            ("BlackRatingDiff", format!("-{}", i % 7)),
            ("TimeControl", ["60+0", "180+2", "300+0", "600+5"][i % 4].to_string()),
            ("Termination", if i % 5 == 0 { "Time forfeit" } else { "Normal" }.to_string()),
            ("ECO", "C00".to_string()),
            ("Opening", "An \"opening\" with a backslash \\ in it".to_string()),
        ];
        g.tags.extend(extra.into_iter().map(|(k, v)| (k.to_string(), v)));
        match i % 6 {
            1 => g.tags.push(("WhiteTitle".into(), "GM".into())),
            2 => g.tags.push(("BlackTitle".into(), "BOT".into())),
            3 => {
                g.tags.push(("WhiteTitle".into(), "BOT".into()));
                g.tags.push(("BlackTitle".into(), "FM".into()));
            }
            _ => {}
        }
    }
    games
}

/// The games as PGN, tags as given (Date from UTCDate, as Lichess writes).
fn write_pgn(games: &[Game], path: &Path) {
    let mut out = String::new();
    for g in games {
        for (k, v) in &g.tags {
            let v = v.replace('\\', "\\\\").replace('"', "\\\"");
            out.push_str(&format!("[{k} \"{v}\"]\n"));
            if k == "UTCDate" {
                out.push_str(&format!("[Date \"{v}\"]\n"));
            }
        }
        out.push_str(&format!("\n{}\n\n", g.movetext));
    }
    std::fs::write(path, out).unwrap();
}

/// Days from 1970-01-01 to a `YYYY.MM.DD` day (the test's own count).
fn days(date: &str) -> i32 {
    let p: Vec<i64> = date.split('.').map(|x| x.parse().unwrap()).collect();
    let (y, m, d) = (p[0], p[1], p[2]);
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    (era * 146_097 + doe - 719_468) as i32
}

/// How a test file is written.
#[derive(Clone, Copy)]
struct Shape<'a> {
    compression: Compression,
    row_group: usize,
    /// A column the dataset lacks, at the end.
    extra: bool,
    /// A column left out.
    drop: Option<&'a str>,
}

impl Default for Shape<'_> {
    fn default() -> Self {
        Shape { compression: Compression::SNAPPY, row_group: 1000, extra: false, drop: None }
    }
}

const TEXT_COLUMNS: [&str; 7] =
    ["Event", "Site", "White", "Black", "Result", "WhiteTitle", "BlackTitle"];
const INT_COLUMNS: [&str; 4] = ["WhiteElo", "BlackElo", "WhiteRatingDiff", "BlackRatingDiff"];
const LAST_COLUMNS: [&str; 5] = ["ECO", "Opening", "Termination", "TimeControl", "movetext"];

/// The games in the dataset's schema: Event ... BlackTitle (string),
/// WhiteElo ... BlackRatingDiff (int16), UTCDate (date32), UTCTime (time32,
/// stored in milliseconds as Parquet stores times), ECO, Opening,
/// Termination, TimeControl, movetext (string); a missing tag is a null.
fn write_parquet(games: &[Game], path: &Path, shape: Shape<'_>) {
    let mut fields = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    let text = |name: &str, value: &dyn Fn(&Game) -> Option<String>| {
        let mut b = StringBuilder::new();
        for g in games {
            b.append_option(value(g));
        }
        (Field::new(name, DataType::Utf8, true), Arc::new(b.finish()) as ArrayRef)
    };
    let mut push = |(f, a): (Field, ArrayRef)| {
        if shape.drop != Some(f.name().as_str()) {
            fields.push(f);
            columns.push(a);
        }
    };
    for name in TEXT_COLUMNS {
        push(text(name, &|g: &Game| g.tag(name).map(str::to_string)));
    }
    for name in INT_COLUMNS {
        let mut b = Int16Builder::new();
        for g in games {
            b.append_option(g.tag(name).and_then(|v| v.trim_start_matches('+').parse().ok()));
        }
        push((Field::new(name, DataType::Int16, true), Arc::new(b.finish())));
    }
    let mut b = Date32Builder::new();
    for g in games {
        b.append_option(g.tag("UTCDate").map(days));
    }
    push((Field::new("UTCDate", DataType::Date32, true), Arc::new(b.finish())));
    let mut b = Time32MillisecondBuilder::new();
    for g in games {
        b.append_option(g.tag("UTCTime").map(|t| {
            let p: Vec<i32> = t.split(':').map(|x| x.parse().unwrap()).collect();
            1000 * (3600 * p[0] + 60 * p[1] + p[2])
        }));
    }
    push((
        Field::new("UTCTime", DataType::Time32(TimeUnit::Millisecond), true),
        Arc::new(b.finish()),
    ));
    for name in LAST_COLUMNS {
        if name == "movetext" {
            push(text(name, &|g: &Game| Some(g.movetext.clone())));
        } else {
            push(text(name, &|g: &Game| g.tag(name).map(str::to_string)));
        }
    }
    if shape.extra {
        let mut b = Int64Builder::new();
        for i in 0..games.len() {
            b.append_value(i as i64 * 7);
        }
        push((Field::new("LichessInternal", DataType::Int64, true), Arc::new(b.finish())));
    }
    write_batch(path, fields, columns, shape.compression, shape.row_group);
}

/// Writes one batch of `columns` as a Parquet file in row groups of
/// `row_group` rows.
fn write_batch(
    path: &Path,
    fields: Vec<Field>,
    columns: Vec<ArrayRef>,
    compression: Compression,
    row_group: usize,
) {
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
    let props = WriterProperties::builder()
        .set_compression(compression)
        .set_max_row_group_row_count(Some(row_group))
        .build();
    let file = std::fs::File::create(path).unwrap();
    let mut w = ArrowWriter::try_new(file, schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

fn zstd() -> Compression {
    Compression::ZSTD(ZstdLevel::try_new(3).unwrap())
}

/// A line of a command's summary that starts with `key`.
fn summary_line<'a>(text: &'a str, key: &str) -> &'a str {
    text.lines().find(|l| l.starts_with(key)).unwrap_or_else(|| panic!("no {key} in {text}"))
}

/// The games written as PGN and read: `replay`'s games and plies lines,
/// and the JSON lines of their labels at depth 3 (what a table of the same
/// games must give).
fn pgn_reference(dir: &TempDir, games: &[Game]) -> (String, String, String) {
    let pgn = dir.path("games.pgn");
    write_pgn(games, &pgn);
    let (code, out, err) = kibitz(&["replay", s(&pgn)]);
    assert_eq!(code, 0, "{err}");
    let (pgn_games, pgn_plies) =
        (summary_line(&out, "games").to_string(), summary_line(&out, "plies").to_string());
    let (code, _, _) = kibitz(&["annotate", s(&pgn), "--depth", "3", "-o", s(&dir.path("p.kbz"))]);
    assert_eq!(code, 0);
    let (_, expected, _) = kibitz(&["export", s(&dir.path("p.kbz")), "--format", "jsonl"]);
    (pgn_games, pgn_plies, expected)
}

#[test]
fn games_read_from_parquet_as_from_pgn() {
    let dir = TempDir::new("parquet-games");
    let games = lichess_games();
    let (pgn_games, pgn_plies, expected) = pgn_reference(&dir, &games);
    assert!(pgn_games.starts_with("games     20 "), "{pgn_games}");
    assert!(expected.lines().count() > 100);
    for (name, shape) in [
        ("snappy", Shape::default()),
        ("zstd", Shape { compression: zstd(), ..Shape::default() }),
        ("groups", Shape { row_group: 3, ..Shape::default() }),
        ("extra", Shape { extra: true, row_group: 7, ..Shape::default() }),
        ("no-titles", Shape { drop: Some("WhiteTitle"), ..Shape::default() }),
    ] {
        let file = dir.path(&format!("{name}.parquet"));
        write_parquet(&games, &file, shape);
        let (code, out, err) = kibitz(&["replay", s(&file)]);
        assert_eq!(code, 0, "{name}: {err}");
        assert_eq!(summary_line(&out, "games"), pgn_games, "{name}");
        assert_eq!(summary_line(&out, "plies"), pgn_plies, "{name}");
        let out = dir.path(&format!("{name}.kbz"));
        let (code, _, err) = kibitz(&["annotate", s(&file), "--depth", "3", "-o", s(&out)]);
        assert_eq!(code, 0, "{name}: {err}");
        let (_, got, _) = kibitz(&["export", s(&out), "--format", "jsonl"]);
        assert!(got == expected, "{name}: the export differs from the PGN's");
    }
    // A folder of the partitioned layout reads as its files in path order.
    let month = dir.path("data/year=2016/month=05");
    std::fs::create_dir_all(&month).unwrap();
    write_parquet(&games[..8], &month.join("train-00000-of-00002.parquet"), Shape::default());
    write_parquet(&games[8..], &month.join("train-00001-of-00002.parquet"), Shape::default());
    let (code, out, err) = kibitz(&["replay", s(&dir.path("data"))]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(summary_line(&out, "games"), pgn_games);
    assert_eq!(summary_line(&out, "plies"), pgn_plies);
    let out = dir.path("folder.kbz");
    let (code, _, _) = kibitz(&["annotate", s(&dir.path("data")), "--depth", "3", "-o", s(&out)]);
    assert_eq!(code, 0);
    let (_, got, _) = kibitz(&["export", s(&out), "--format", "jsonl"]);
    assert!(got == expected, "the folder's export differs from the PGN's");
    let empty = dir.path("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let (code, _, err) = kibitz(&["replay", s(&empty)]);
    assert_ne!(code, 0);
    assert!(err.contains("is a directory (with no .parquet file in it)"), "{err}");
}

#[test]
fn filters_read_the_columns_and_count_as_for_pgn() {
    let dir = TempDir::new("parquet-filters");
    let games = lichess_games();
    let pgn = dir.path("games.pgn");
    write_pgn(&games, &pgn);
    let file = dir.path("games.parquet");
    write_parquet(&games, &file, Shape { row_group: 6, ..Shape::default() });
    let filters: [&[&str]; 6] = [
        &["--min-elo", "1500"],
        &["--exclude-title", "BOT"],
        &["--title", "gm,fm"],
        &["--speed", "blitz,rapid", "--date-from", "2016-05-04"],
        &["--termination", "normal", "--min-avg-elo", "1900"],
        &["--result", "1-0"],
    ];
    for filter in filters {
        let mut outputs = Vec::new();
        for input in [&pgn, &file] {
            let out = dir.path("f.kbz");
            let mut args =
                vec!["annotate", s(input), "--label", "pgn-eval", "--force", "-o", s(&out)];
            args.extend_from_slice(filter);
            args.push("--json");
            let (code, json, err) = kibitz(&args);
            assert_eq!(code, 0, "{filter:?}: {err}");
            let v: serde_json::Value = serde_json::from_str(&json).unwrap();
            outputs.push((
                v["filtered"].clone(),
                v["filtered_no_tag"].clone(),
                v["games_read"].clone(),
            ));
        }
        assert_eq!(outputs[0], outputs[1], "{filter:?}");
        let filtered: u64 =
            outputs[0].0.as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
        assert!(filtered > 0 && filtered < 20, "{filter:?}: {filtered} games filtered");
    }
    // Bots: games 2, 3, 8, 9, 14, 15 of 20 have one.
    let (_, json, _) = kibitz(&[
        "annotate",
        s(&file),
        "--label",
        "pgn-eval",
        "--force",
        "-o",
        s(&dir.path("b.kbz")),
        "--exclude-title",
        "BOT",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["filtered"]["title"], 6, "{json}");
    // The filter is in the header.
    let (_, out, _) = kibitz(&["inspect", s(&dir.path("b.kbz"))]);
    assert!(out.contains("--exclude-title BOT"), "{out}");
    // Without the rating columns, a rating filter finds no ratings.
    let no_elo = dir.path("no-elo.parquet");
    write_parquet(&games, &no_elo, Shape { drop: Some("WhiteElo"), ..Shape::default() });
    let (_, json, _) = kibitz(&[
        "annotate",
        s(&no_elo),
        "--label",
        "pgn-eval",
        "--force",
        "-o",
        s(&dir.path("n.kbz")),
        "--min-elo",
        "1000",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["filtered_no_tag"]["elo"], 20, "{json}");
}

/// A column of a table: its name and its values.
type Column<'a> = (&'a str, Vec<Option<String>>);

/// A table of other columns, as pandas or pyarrow write them: each
/// `(name, values)` a string column (`None` a null), or an `Int64` or
/// `Float64` one when its name says so (`:i`, `:f`).
fn write_table(path: &Path, columns: &[Column<'_>], row_group: usize) {
    let mut fields = Vec::new();
    let mut arrays: Vec<ArrayRef> = Vec::new();
    for (name, values) in columns {
        let (name, kind) = name.split_once(':').unwrap_or((name, "s"));
        match kind {
            "i" => {
                fields.push(Field::new(name, DataType::Int64, true));
                let mut b = Int64Builder::new();
                values.iter().for_each(|v| b.append_option(v.as_ref().map(|v| v.parse().unwrap())));
                arrays.push(Arc::new(b.finish()));
            }
            "f" => {
                fields.push(Field::new(name, DataType::Float64, true));
                let v: Vec<Option<f64>> =
                    values.iter().map(|v| v.as_ref().map(|v| v.parse().unwrap())).collect();
                arrays.push(Arc::new(arrow_array::Float64Array::from(v)));
            }
            _ => {
                fields.push(Field::new(name, DataType::LargeUtf8, true));
                let mut b = arrow_array::builder::LargeStringBuilder::new();
                values.iter().for_each(|v| b.append_option(v.as_deref()));
                arrays.push(Arc::new(b.finish()));
            }
        }
    }
    write_batch(path, fields, arrays, zstd(), row_group);
}

/// A game's moves without move numbers, and in UCI (shakmaty's).
fn bare_and_uci(movetext: &str) -> (String, String) {
    let played = crate::util::played_positions(movetext);
    let bare: Vec<&str> = played.iter().map(|p| p.san.as_str()).collect();
    let uci: Vec<&str> = played.iter().map(|p| p.uci.as_str()).collect();
    (bare.join(" "), uci.join(" "))
}

/// Tables of games with other pipelines' names: the moves in `pgn`,
/// `Moves` or `uci` (with or without move numbers, UCI moves, whole games
/// with their tags), ratings as `white_elo` floats with nulls, a lone
/// `elo`: the same games and plies as the PGN, and the whole-game cells
/// annotated as the PGN is.
#[test]
fn tables_of_games_with_other_names_read_as_their_pgn() {
    let dir = TempDir::new("parquet-tables");
    let games = lichess_games();
    let (pgn_games, pgn_plies, expected) = pgn_reference(&dir, &games);
    let col = |f: &dyn Fn(&Game) -> Option<String>| games.iter().map(f).collect::<Vec<_>>();
    let elo = |g: &Game, tag: &str| g.tag(tag).map(str::to_string);
    // Whole games in a `pgn` cell: their tags come with them.
    let whole = col(&|g| {
        let one = dir.path("one.pgn");
        write_pgn(std::slice::from_ref(g), &one);
        Some(std::fs::read_to_string(&one).unwrap())
    });
    let moves = col(&|g| Some(g.movetext.clone()));
    let bare = col(&|g| Some(bare_and_uci(&g.movetext).0));
    let uci = col(&|g| Some(bare_and_uci(&g.movetext).1));
    // Every third rating missing, as pandas writes an integer column with
    // gaps: floats and nulls.
    let white_elo: Vec<Option<String>> = games
        .iter()
        .enumerate()
        .map(|(i, g)| if i % 3 == 0 { None } else { elo(g, "WhiteElo") })
        .collect();
    let cases: Vec<(&str, Vec<Column<'_>>)> = vec![
        ("pgn-whole", vec![("pgn", whole.clone())]),
        ("pgn-movetext", vec![("pgn", moves.clone()), ("elo:i", col(&|g| elo(g, "BlackElo")))]),
        ("moves-bare", vec![("Moves", bare), ("white_elo:f", white_elo)]),
        ("uci", vec![("uci", uci), ("White-Player", col(&|g| elo(g, "White")))]),
    ];
    for (name, columns) in cases {
        let file = dir.path(&format!("{name}.parquet"));
        write_table(&file, &columns, 7);
        let (code, out, err) = kibitz(&["replay", s(&file)]);
        assert_eq!(code, 0, "{name}: {err}");
        assert_eq!(summary_line(&out, "games"), pgn_games, "{name}");
        assert_eq!(summary_line(&out, "plies"), pgn_plies, "{name}");
    }
    let out = dir.path("whole.kbz");
    let file = dir.path("pgn-whole.parquet");
    let (code, _, err) = kibitz(&["annotate", s(&file), "--depth", "3", "-o", s(&out)]);
    assert_eq!(code, 0, "{err}");
    let (_, got, _) = kibitz(&["export", s(&out), "--format", "jsonl"]);
    assert!(got == expected, "whole games in cells: the export differs from the PGN's");
    // A lone `elo` is given to neither player (a record keeps the players'
    // ratings, not the game's `Elo` tag).
    let (code, text, err) = kibitz(&[
        "export",
        s(&{
            let k = dir.path("tags.kbz");
            let f = dir.path("pgn-movetext.parquet");
            assert_eq!(kibitz(&["annotate", s(&f), "--depth", "1", "-o", s(&k)]).0, 0);
            k
        }),
        "--format",
        "pgn",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("[White ") && !text.contains("Elo \""), "{text}");
}

/// A table of positions (its position, the move played from it and an
/// evaluation for White, in row groups of 7, a mate in its own column):
/// the same positions as the EPD of them, searched alike, its evaluations
/// read as the EPD's `ce` and `dm`, a bad cell named by its row.
#[test]
fn tables_of_positions_read_as_their_epd() {
    let dir = TempDir::new("parquet-positions");
    let mut positions = Vec::new();
    for g in lichess_games().iter().take(12) {
        positions.extend(crate::util::played_positions(&g.movetext).into_iter().step_by(9));
    }
    let n = positions.len();
    assert!(n > 30, "{n}");
    let eval = |i: usize| -> Result<i64, i64> {
        if i % 11 == 4 {
            Err(i as i64 % 4 - 2 + i64::from(i % 4 == 2))
        } else {
            Ok(i as i64 * 41 % 500 - 250)
        }
    };
    let (mut bare, mut given) = (String::new(), String::new());
    for (i, p) in positions.iter().enumerate() {
        bare.push_str(&format!("{}\n", p.fen));
        let sign = if p.fen.split(' ').nth(1) == Some("w") { 1 } else { -1 };
        let e = match eval(i) {
            Ok(cp) => format!("ce {};", cp * sign),
            Err(m) => format!("dm {};", m * sign),
        };
        given.push_str(&format!("{}; sm {}; {e}\n", p.fen, p.uci));
    }
    std::fs::write(dir.path("bare.epd"), &bare).unwrap();
    std::fs::write(dir.path("given.epd"), &given).unwrap();
    let file = dir.path("positions.parquet");
    let columns: Vec<Column<'_>> = vec![
        ("id:i", (0..n).map(|i| Some(i.to_string())).collect()),
        ("fen", positions.iter().map(|p| Some(p.fen.clone())).collect()),
        ("best_move", positions.iter().map(|p| Some(p.san.clone())).collect()),
        ("eval:i", (0..n).map(|i| eval(i).ok().map(|v| v.to_string())).collect()),
        ("mate:i", (0..n).map(|i| eval(i).err().map(|v| v.to_string())).collect()),
    ];
    write_table(&file, &columns, 7);
    let (code, out, err) = kibitz(&["replay", s(&dir.path("bare.epd"))]);
    assert_eq!(code, 0, "{err}");
    let (code, got, err) = kibitz(&["replay", s(&file)]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(summary_line(&got, "games"), summary_line(&out, "games"));
    assert_eq!(summary_line(&got, "plies"), summary_line(&out, "plies"));
    let annotate = |input: &Path, name: &str, extra: &[&str]| {
        let out = dir.path(name);
        let mut args = vec!["annotate", s(input), "-o", s(&out), "--skip-plies", "0"];
        args.extend(["--skip-check", "false", "--skip-captures", "false"]);
        args.extend_from_slice(extra);
        let (code, _, err) = kibitz(&args);
        assert_eq!(code, 0, "{err}");
        kibitz(&["export", s(&out), "--format", "jsonl"]).1
    };
    let strip = crate::util::without_played;
    let expected = annotate(&dir.path("bare.epd"), "bare.kbz", &["--depth", "2"]);
    let got = annotate(&file, "searched.kbz", &["--depth", "2"]);
    assert_eq!(expected.lines().count(), n);
    assert!(strip(&got) == strip(&expected), "a table searched differs from its EPD");
    let expected = annotate(&dir.path("given.epd"), "given.kbz", &["--label", "table"]);
    let got = annotate(&file, "table.kbz", &["--label", "table"]);
    assert_eq!(expected.lines().count(), n);
    assert!(got == expected, "a table's evaluations differ from the EPD's ce and dm");
    // A bad cell: named by its row group and row, the others read.
    let mut columns = columns;
    columns[1].1[9] = None;
    write_table(&file, &columns, 7);
    let (code, out, err) = kibitz(&["replay", s(&file)]);
    assert_eq!(code, 1);
    assert!(
        err.contains(
            "row group 1, row 2 (row 9 of the file): a row that cannot be read: its \
                      position cell is empty; skipped"
        ),
        "{err}"
    );
    assert!(summary_line(&out, "games").starts_with(&format!("games     {} ", n - 1)), "{out}");
}

#[test]
fn bad_parquet_inputs_get_clear_errors() {
    let dir = TempDir::new("parquet-errors");
    let mut games = lichess_games();
    // Game 12 (row 11: row group 2, row 1 with groups of 5) has an illegal
    // move.
    games[11].movetext = games[11].movetext.replacen("2.", "2.Ke5 ", 1);
    let file = dir.path("games.parquet");
    write_parquet(&games, &file, Shape { row_group: 5, ..Shape::default() });
    let (_, out, err) = kibitz(&["replay", s(&file)]);
    assert!(
        err.contains("game 12 at row group 2, row 1 (row 11 of the file), ply 3 (Ke5)"),
        "{err}"
    );
    assert!(summary_line(&out, "games").starts_with("games     20 "), "{out}");
    assert!(summary_line(&out, "rejected").starts_with("rejected  1"), "{out}");
    // Without a moves column: the error names the columns there are and
    // those looked for.
    let no_moves = dir.path("no-moves.parquet");
    write_parquet(&games, &no_moves, Shape { drop: Some("movetext"), ..Shape::default() });
    // (Its `FEN` column would make it a table of positions: `--rows games`
    // says it holds games.)
    let (code, _, err) = kibitz(&["replay", s(&no_moves), "--rows", "games"]);
    assert_ne!(code, 0);
    assert!(
        err.contains("no column of moves: looked for one of movetext, pgn, moves, san, game, uci")
            && err.contains("Event, Site"),
        "{err}"
    );
    // Standard input cannot be read as Parquet (its footer is at its end).
    let bytes = std::fs::read(&file).unwrap();
    let mut child = crate::util::kibitz_command()
        .args(["replay", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    let _ = child.stdin.take().unwrap().write_all(&bytes);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0));
    assert!(err.contains("a Parquet file cannot be read from standard input"), "{err}");
    // A broken row group is reported by its number; the others are read.
    let good = dir.path("good.parquet");
    write_parquet(&lichess_games(), &good, Shape { row_group: 5, ..Shape::default() });
    let meta = parquet::file::reader::FileReader::metadata(
        &parquet::file::serialized_reader::SerializedFileReader::new(
            std::fs::File::open(&good).unwrap(),
        )
        .unwrap(),
    )
    .clone();
    let chunk = meta.row_group(1).columns().iter().find(|c| c.column_path().string() == "movetext");
    let (start, len) = chunk.unwrap().byte_range();
    let mut bytes = std::fs::read(&good).unwrap();
    for b in &mut bytes[start as usize + 40..(start + len) as usize - 8] {
        *b = 0xa5;
    }
    let broken = dir.path("broken.parquet");
    std::fs::write(&broken, &bytes).unwrap();
    let (code, out, err) = kibitz(&["replay", s(&broken)]);
    assert_ne!(code, 0);
    assert!(err.contains("row group 1 (rows 5 to 9 of the file) cannot be read"), "{err}");
    assert!(summary_line(&out, "games").starts_with("games     15 "), "{out}");
    // A file cut short has no footer.
    let cut = dir.path("cut.parquet");
    std::fs::write(&cut, &std::fs::read(&good).unwrap()[..3000]).unwrap();
    let (code, out, err) = kibitz(&["replay", s(&cut)]);
    assert_ne!(code, 0);
    assert!(err.contains("cut.parquet"), "{err}");
    assert!(summary_line(&out, "games").starts_with("games     0 "), "{out}");
}

#[test]
fn a_parquet_book_opens_self_play() {
    let dir = TempDir::new("parquet-book");
    let file = dir.path("book.parquet");
    write_parquet(&lichess_games(), &file, Shape::default());
    let out = dir.path("sp.kbz");
    let (code, _, err) = kibitz(&[
        "selfplay",
        "--book",
        s(&file),
        "--games",
        "2",
        "--nodes",
        "200",
        "--max-plies",
        "6",
        "-o",
        s(&out),
    ]);
    assert_eq!(code, 0, "{err}");
    let (_, info, _) = kibitz(&["inspect", s(&out)]);
    assert!(info.contains("book.parquet"), "{info}");
}

/// Rows of Lichess's evaluations: (fen, line, depth, knodes, cp, mate).
type EvalRow<'a> = (&'a str, &'a str, i64, i64, Option<i64>, Option<i64>);

fn write_evals(rows: &[EvalRow<'_>], path: &Path, row_group: usize, drop: Option<&str>) {
    let mut fen = StringBuilder::new();
    let mut line = StringBuilder::new();
    let (mut depth, mut knodes, mut cp, mut mate) =
        (Int64Builder::new(), Int64Builder::new(), Int64Builder::new(), Int64Builder::new());
    for r in rows {
        fen.append_value(r.0);
        line.append_value(r.1);
        depth.append_value(r.2);
        knodes.append_value(r.3);
        cp.append_option(r.4);
        mate.append_option(r.5);
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(fen.finish()),
        Arc::new(line.finish()),
        Arc::new(depth.finish()),
        Arc::new(knodes.finish()),
        Arc::new(cp.finish()),
        Arc::new(mate.finish()),
    ];
    let names = ["fen", "line", "depth", "knodes", "cp", "mate"];
    let (fields, columns): (Vec<Field>, Vec<ArrayRef>) = names
        .iter()
        .zip(columns)
        .filter(|(n, _)| Some(**n) != drop)
        .map(|(n, c)| (Field::new(*n, c.data_type().clone(), true), c))
        .unzip();
    write_batch(path, fields, columns, Compression::SNAPPY, row_group);
}

#[test]
fn lichess_evaluations_are_labelled_positions() {
    let dir = TempDir::new("parquet-evals");
    let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -";
    let black = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -";
    // Black to move, mated in 1 by White (Qxf7#) after ...: White mates.
    let mated = "r1bqkbnr/pppp1ppp/2n5/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq -";
    let castle = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq -";
    let rows: [EvalRow<'_>; 10] = [
        // A shallow evaluation first, then the deeper one with two lines.
        (start, "e2e4 e7e5", 20, 1000, Some(30), None),
        (start, "d2d4 d7d5 c2c4", 36, 50_000, Some(18), None),
        (start, "e2e4 c7c5", 36, 50_000, Some(15), None),
        // White's point of view: +40 for White is -40 for Black to move.
        (black, "g8f6 e4e5", 30, 9000, Some(40), None),
        (black, "b8c6", 30, 9000, Some(55), None),
        // The deepest of equal depths is the one with the most nodes.
        (mated, "h5f7", 99, 10, None, Some(1)),
        (mated, "c4f7", 99, 20, None, Some(1)),
        // Castling written as the king taking its rook.
        (castle, "e1h1 e8a8", 25, 100, Some(0), None),
        // A line that is not legal: skipped and reported.
        ("8/8/8/8/8/8/8/K6k w - -", "a1a3", 25, 100, Some(0), None),
        // Not a position: skipped and reported.
        ("not a fen", "e2e4", 25, 100, Some(0), None),
    ];
    let file = dir.path("evals.parquet");
    // Row groups of 2: the start position's rows straddle two of them.
    write_evals(&rows, &file, 2, None);
    let kbz = dir.path("evals.kbz");
    let (code, _, err) = kibitz(&["dedup", s(&file), "-o", s(&kbz)]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("row group 4, row 0 (row 8 of the file): line \"a1a3\""), "{err}");
    assert!(err.contains("row group 4, row 1 (row 9 of the file): fen \"not a fen\""), "{err}");
    let (_, jsonl, _) = kibitz(&["export", s(&kbz), "--format", "jsonl"]);
    let got: Vec<serde_json::Value> =
        jsonl.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(got.len(), 4, "{jsonl}");
    let pick = |i: usize, k: &str| got[i][k].clone();
    assert_eq!(
        (pick(0, "best"), pick(0, "score"), pick(0, "depth")),
        ("d2d4".into(), 18.into(), 36.into())
    );
    assert_eq!(pick(0, "multipv")[1]["move"], "e2e4");
    assert_eq!(pick(0, "multipv")[1]["score"], 15);
    assert_eq!((pick(1, "best"), pick(1, "score")), ("g8f6".into(), (-40).into()));
    assert_eq!(pick(1, "multipv")[1]["score"], -55);
    assert_eq!((pick(2, "best"), pick(2, "mate")), ("c4f7".into(), 1.into()));
    assert_eq!(pick(3, "best"), "e1g1");
    assert_eq!(pick(3, "result"), "*");
    // annotate relabels them: the same positions, kibitz's labels.
    let relabelled = dir.path("relabelled.kbz");
    let (code, _, err) = kibitz(&["annotate", s(&file), "--depth", "2", "-o", s(&relabelled)]);
    assert_eq!(code, 0, "{err}");
    let (_, jsonl, _) = kibitz(&["export", s(&relabelled), "--format", "jsonl"]);
    let fens: Vec<String> = jsonl
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["fen"].to_string())
        .collect();
    let before: Vec<String> = got.iter().map(|v| v["fen"].to_string()).collect();
    assert_eq!(fens, before);
    assert!(jsonl.contains("\"depth\":2"), "{jsonl}");
    // stats reads them as they are; train refuses a result blend.
    let (code, out, _) = kibitz(&["stats", s(&file), "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["positions"], 4);
    assert_eq!(v["result"][3], 4);
    let (code, _, err) = kibitz(&["train", s(&file), "-o", s(&dir.path("n.nnue"))]);
    assert_ne!(code, 0);
    assert!(err.contains("hold no game results") && err.contains("--wdl 0"), "{err}");
    // A file that lacks a column says which.
    let broken = dir.path("nocp.parquet");
    write_evals(&rows, &broken, 100, Some("cp"));
    let (code, _, err) = kibitz(&["stats", s(&broken)]);
    assert_ne!(code, 0);
    assert!(
        err.contains("no column `cp`") && err.contains("fen, line, depth, knodes, mate"),
        "{err}"
    );
}

/// Every value of a column of a Parquet file, as text (nulls as "").
fn column_text(path: &Path, name: &str) -> Vec<String> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(path).unwrap())
        .unwrap()
        .build()
        .unwrap();
    let mut out = Vec::new();
    for batch in reader {
        let batch = batch.unwrap();
        let a = batch.column_by_name(name).unwrap();
        let a = arrow_cast_text(a.as_ref());
        out.extend(a);
    }
    out
}

fn arrow_cast_text(a: &dyn arrow_array::Array) -> Vec<String> {
    use arrow_array::types::*;
    (0..a.len())
        .map(|i| {
            if a.is_null(i) {
                return String::new();
            }
            match a.data_type() {
                DataType::Utf8 => a.as_string::<i32>().value(i).to_string(),
                DataType::Int16 => a.as_primitive::<Int16Type>().value(i).to_string(),
                DataType::Int32 => a.as_primitive::<Int32Type>().value(i).to_string(),
                DataType::UInt8 => a.as_primitive::<UInt8Type>().value(i).to_string(),
                DataType::UInt16 => a.as_primitive::<UInt16Type>().value(i).to_string(),
                DataType::UInt32 => a.as_primitive::<UInt32Type>().value(i).to_string(),
                DataType::UInt64 => a.as_primitive::<UInt64Type>().value(i).to_string(),
                DataType::Float64 => a.as_primitive::<Float64Type>().value(i).to_string(),
                DataType::List(_) => {
                    let l = a.as_list::<i32>().value(i);
                    arrow_cast_text(l.as_ref()).join(" ")
                }
                t => panic!("{t}"),
            }
        })
        .collect()
}

#[test]
fn exported_parquet_holds_what_jsonl_holds() {
    let dir = TempDir::new("parquet-export");
    let kbz = dir.path("a.kbz");
    let (code, _, _) = kibitz(&[
        "annotate",
        s(&sample()),
        "--preset",
        "analysis",
        "--depth",
        "4",
        "--pv",
        "4",
        "-o",
        s(&kbz),
    ]);
    assert_eq!(code, 0);
    let out = dir.path("a.parquet");
    let (code, _, err) = kibitz(&["export", s(&kbz), "--format", "parquet", "-o", s(&out)]);
    assert_eq!(code, 0, "{err}");
    assert!(!kibitz::partial_path(&out).exists());
    let (_, jsonl, _) = kibitz(&["export", s(&kbz), "--format", "jsonl"]);
    let rows: Vec<serde_json::Value> =
        jsonl.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let fens = column_text(&out, "fen");
    assert_eq!(fens.len(), rows.len());
    let text = |v: &serde_json::Value| match v {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(s) => s.clone(),
        v => v.to_string(),
    };
    for (column, key) in [
        ("fen", "fen"),
        ("cp", "score"),
        ("mate", "mate"),
        ("best", "best"),
        ("played", "played"),
        ("depth", "depth"),
        ("ply", "ply"),
        ("game", "game"),
        ("Result", "result"),
    ] {
        let got = column_text(&out, column);
        let want: Vec<String> = rows.iter().map(|r| text(&r[key])).collect();
        assert!(got == want, "column {column} differs from the JSON's {key}");
    }
    // The tags of the game each row is from, under Lichess's names.
    let site = column_text(&out, "Site");
    assert_eq!(site[0], "Paris");
    // The principal variation starts with the best move.
    let pv = column_text(&out, "pv");
    let best = column_text(&out, "best");
    assert!(pv.iter().zip(&best).all(|(p, b)| p.split(' ').next() == Some(b.as_str())));
    // Shaping applies as to every format: the same positions as JSON lines.
    let shaped = dir.path("shaped.parquet");
    let shaping = ["--max-score", "150", "--skip-plies", "10", "--skip-check"];
    let mut args = vec!["export", s(&kbz), "--format", "parquet", "-o", s(&shaped)];
    args.extend(shaping);
    let (code, _, err) = kibitz(&args);
    assert_eq!(code, 0, "{err}");
    let mut args = vec!["export", s(&kbz), "--format", "jsonl"];
    args.extend(shaping);
    let (_, shaped_jsonl, _) = kibitz(&args);
    let want: Vec<String> = shaped_jsonl
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["fen"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert!(!want.is_empty() && want.len() < rows.len() / 2, "{} of {}", want.len(), rows.len());
    assert_eq!(column_text(&shaped, "fen"), want);
    // Without --output, Parquet is refused (its footer comes last).
    let (code, _, err) = kibitz(&["export", s(&kbz), "--format", "parquet"]);
    assert_ne!(code, 0);
    assert!(err.contains("needs --output"), "{err}");
    // The report's tables.
    let tables = dir.path("tables");
    let (code, _, err) = kibitz(&[
        "report",
        s(&kbz),
        "-o",
        s(&dir.path("r.html")),
        "--json",
        s(&dir.path("r.jsonl")),
        "--parquet",
        s(&tables),
    ]);
    assert_eq!(code, 0, "{err}");
    let json = std::fs::read_to_string(dir.path("r.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> =
        json.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let games: Vec<&serde_json::Value> = lines.iter().filter(|l| l["kind"] == "game").collect();
    let players: Vec<&serde_json::Value> = lines.iter().filter(|l| l["kind"] == "player").collect();
    let games_table = tables.join("games.parquet");
    assert_eq!(column_text(&games_table, "Site").len(), games.len());
    let blunders: u64 = column_text(&games_table, "black_endgame_blunders")
        .iter()
        .map(|v| v.parse::<u64>().unwrap())
        .sum();
    let want: u64 = games.iter().map(|g| g["black"]["endgame"]["blunders"].as_u64().unwrap()).sum();
    assert_eq!(blunders, want);
    // The judgments of the positions table are the report's.
    let judgments = column_text(&out, "judgment");
    for (name, key) in
        [("Inaccuracy", "inaccuracies"), ("Mistake", "mistakes"), ("Blunder", "blunders")]
    {
        let in_table = judgments.iter().filter(|j| *j == name).count() as u64;
        let in_report: u64 = games
            .iter()
            .map(|g| {
                g["white"]["game"][key].as_u64().unwrap()
                    + g["black"]["game"][key].as_u64().unwrap()
            })
            .sum();
        assert_eq!(in_table, in_report, "{name}");
        assert!(in_table > 0, "{name}");
    }
    let names = column_text(&tables.join("players.parquet"), "name");
    assert_eq!(names.len(), players.len());
    let acpl = column_text(&tables.join("players.parquet"), "all_acpl");
    for (p, a) in players.iter().zip(&acpl) {
        assert_eq!(p["all"]["acpl"].as_f64().map(|x| x.to_string()).unwrap_or_default(), *a);
    }
}

/// DuckDB, polars, pandas and pyarrow against kibitz, on every shared
/// database (`scripts/parquet_clients.py`: inputs written with pyarrow in
/// Lichess's schema read as their PGN; every table kibitz writes read by
/// each client, its counts and histograms equal to `kibitz stats` and the
/// report's JSON; the README's example run as written).
#[cfg(feature = "parquet-clients")]
#[test]
fn clients_read_what_kibitz_writes() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new("python3")
        .arg(root.join("scripts/parquet_clients.py"))
        .args(["--kibitz", env!("CARGO_BIN_EXE_kibitz"), "--data"])
        .arg(crate::util::shared_root())
        .output()
        .expect("python3 runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    // The queries and their results, next to kibitz's (shown with
    // --nocapture, as .ci/run runs it).
    println!("{text}");
    assert!(out.status.success(), "{text}{err}");
    assert!(text.contains("every check passed") && !text.contains("FAIL"), "{text}");
    // Every shared database was read both ways.
    let databases = std::fs::read_dir(crate::util::shared("pgn/real"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().to_string_lossy().ends_with(".pgn.zst"))
        .count();
    assert!(text.matches("equal the PGN's").count() >= databases, "{text}");
}
