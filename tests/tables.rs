//! CSV and TSV tables of games (plain, zstd, gzip; found by their content),
//! written here with the `csv` crate from the project's sample games: the
//! same games and plies as the PGN, whatever the moves column's name and
//! content, and the errors of a table kibitz cannot read.

use std::io::Write;

use crate::util::{TempDir, kibitz, played_positions, s, sample, without_played};

/// The sample's games: (tags, movetext).
fn sample_games() -> Vec<(Vec<(String, String)>, String)> {
    let text = std::fs::read_to_string(sample()).unwrap();
    let mut games: Vec<(Vec<(String, String)>, String)> = Vec::new();
    let mut in_moves = false;
    for line in text.lines().map(str::trim) {
        if let Some(inner) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            if in_moves || games.is_empty() {
                games.push((Vec::new(), String::new()));
                in_moves = false;
            }
            let (k, v) = inner.split_once(' ').unwrap();
            games.last_mut().unwrap().0.push((k.to_string(), v.trim_matches('"').to_string()));
        } else if !line.is_empty() {
            in_moves = true;
            let g = games.last_mut().unwrap();
            if !g.1.is_empty() {
                g.1.push(' ');
            }
            g.1.push_str(line);
        }
    }
    games
}

fn tag<'a>(tags: &'a [(String, String)], name: &str) -> &'a str {
    tags.iter().find(|(k, _)| k == name).map_or("", |(_, v)| v.as_str())
}

/// A game's moves without move numbers.
fn bare(movetext: &str) -> String {
    movetext
        .split_whitespace()
        .filter(|t| !["1-0", "0-1", "1/2-1/2", "*"].contains(t))
        .map(|t| t.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.'))
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Writes rows with the `csv` crate (quoting as RFC 4180 and pandas do).
fn write_csv(path: &std::path::Path, sep: u8, rows: &[Vec<String>]) -> Vec<u8> {
    let mut w = csv::WriterBuilder::new().delimiter(sep).from_writer(Vec::new());
    for r in rows {
        w.write_record(r).unwrap();
    }
    let bytes = w.into_inner().unwrap();
    std::fs::write(path, &bytes).unwrap();
    bytes
}

fn summary(out: &str, key: &str) -> String {
    out.lines().find(|l| l.starts_with(key)).unwrap_or("").to_string()
}

#[test]
fn csv_and_tsv_tables_of_games_read_as_their_pgn() {
    let dir = TempDir::new("tables");
    let games = sample_games();
    assert_eq!(games.len(), 20);
    let (code, out, err) = kibitz(&["replay", s(&sample())]);
    assert_eq!(code, 0, "{err}");
    let (pgn_games, pgn_plies) = (summary(&out, "games"), summary(&out, "plies"));
    let (code, _, _) =
        kibitz(&["annotate", s(&sample()), "--depth", "3", "-o", s(&dir.path("p.kbz"))]);
    assert_eq!(code, 0);
    let (_, expected, _) = kibitz(&["export", s(&dir.path("p.kbz")), "--format", "jsonl"]);
    // Whole games in a `pgn` cell (line breaks and quotes inside), with
    // other columns beside it.
    let whole_game = |(tags, moves): &(Vec<(String, String)>, String)| {
        let mut t = String::new();
        for (k, v) in tags {
            t.push_str(&format!("[{k} \"{v}\"]\n"));
        }
        t + "\n" + moves + "\n"
    };
    let mut rows = vec![vec!["id".to_string(), "PGN".into(), "elo".into()]];
    for (i, g) in games.iter().enumerate() {
        rows.push(vec![i.to_string(), whole_game(g), (1500 + i).to_string()]);
    }
    write_csv(&dir.path("whole.csv"), b',', &rows);
    // The tags in columns (Lichess's and other names), the moves without
    // numbers, tab-separated and zstd-compressed.
    let mut rows = vec![vec![
        "White".to_string(),
        "black".into(),
        "RESULT".into(),
        "white_elo".into(),
        "moves".into(),
    ]];
    for (tags, moves) in &games {
        rows.push(vec![
            tag(tags, "White").into(),
            tag(tags, "Black").into(),
            tag(tags, "Result").into(),
            "2100.0".into(),
            format!("{} {}", bare(moves), tag(tags, "Result")),
        ]);
    }
    let tsv = write_csv(&dir.path("plain.tsv"), b'\t', &rows);
    std::fs::write(dir.path("bare.tsv.zst"), zstd::encode_all(&tsv[..], 3).unwrap()).unwrap();
    // The movetext as it is, gzip-compressed, under a name that says
    // nothing.
    let mut rows = vec![vec!["Event".to_string(), "movetext".into()]];
    rows.extend(games.iter().map(|(t, m)| vec![tag(t, "Event").to_string(), m.clone()]));
    let plain = write_csv(&dir.path("movetext.csv"), b',', &rows);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&plain).unwrap();
    std::fs::write(dir.path("games.dat"), gz.finish().unwrap()).unwrap();
    for name in ["whole.csv", "plain.tsv", "bare.tsv.zst", "movetext.csv", "games.dat"] {
        let (code, out, err) = kibitz(&["replay", s(&dir.path(name))]);
        assert_eq!(code, 0, "{name}: {err}");
        assert_eq!(summary(&out, "games"), pgn_games, "{name}");
        assert_eq!(summary(&out, "plies"), pgn_plies, "{name}");
    }
    // Whole games annotate as the PGN does, tags and all.
    let out = dir.path("whole.kbz");
    let (code, _, err) =
        kibitz(&["annotate", s(&dir.path("whole.csv")), "--depth", "3", "-o", s(&out)]);
    assert_eq!(code, 0, "{err}");
    let (_, got, _) = kibitz(&["export", s(&out), "--format", "jsonl"]);
    assert!(got == expected, "whole games in CSV cells: the export differs from the PGN's");
    // The ratings column: `2100.0` is White's rating 2100.
    let out = dir.path("tsv.kbz");
    let (code, _, err) =
        kibitz(&["annotate", s(&dir.path("bare.tsv.zst")), "--depth", "1", "-o", s(&out)]);
    assert_eq!(code, 0, "{err}");
    let (_, pgn, _) = kibitz(&["export", s(&out), "--format", "pgn"]);
    assert!(pgn.contains("[WhiteElo \"2100\"]"), "{pgn}");
}

#[test]
fn bad_tables_get_clear_errors() {
    let dir = TempDir::new("tables-errors");
    // No moves column: the columns there are and the names looked for.
    let path = dir.path("players.csv");
    std::fs::write(&path, "name,elo\nCarlsen,2830\n").unwrap();
    let (code, _, err) = kibitz(&["replay", s(&path)]);
    assert_ne!(code, 0);
    assert!(
        err.contains("players.csv")
            && err.contains("no column of moves or positions: looked for one of movetext, pgn")
            && err.contains("or one of fen, epd, position (a position a row)")
            && err.contains("the table's columns: name, elo"),
        "{err}"
    );
    // An illegal move in the third row (line 4): named by its line; the
    // other games are read.
    let path = dir.path("games.csv");
    std::fs::write(&path, "White,pgn\nA,1. e4 e5 *\nB,1. d4 d5 *\nC,1. e4 Ke5 *\nD,1. c4 *\n")
        .unwrap();
    let (_, out, err) = kibitz(&["replay", s(&path)]);
    assert!(err.contains("games.csv") && err.contains("line 4"), "{err}");
    assert!(summary(&out, "games").starts_with("games     4 "), "{out}");
    assert!(summary(&out, "rejected").starts_with("rejected  1"), "{out}");
}

/// The sample's positions, every fifth of each game, with the move played
/// from each and an evaluation for White (a mate in a few rows): (FEN,
/// SAN, UCI, centipawns or mate).
fn sample_positions() -> Vec<(String, String, String, Result<i32, i32>)> {
    let mut out = Vec::new();
    for (_, moves) in sample_games() {
        for p in played_positions(&moves).into_iter().step_by(5) {
            let i = out.len() as i32;
            let eval = if i % 17 == 3 {
                Err(i % 5 - 2 + i32::from(i % 5 == 2))
            } else {
                Ok(i * 37 % 601 - 300)
            };
            out.push((p.fen, p.san, p.uci, eval));
        }
    }
    out
}

/// Whether a FEN's side to move is White.
fn white(fen: &str) -> bool {
    fen.split(' ').nth(1) == Some("w")
}

/// Tables of positions (CSV, TSV, zstd; a played move in SAN or UCI; an
/// evaluation for White or for the side to move): the same positions as
/// an EPD file of them, searched alike, and their evaluations read as the
/// EPD's `ce` and `dm` are.
#[test]
fn tables_of_positions_read_as_their_epd() {
    let dir = TempDir::new("tables-positions");
    let positions = sample_positions();
    assert!(positions.len() > 100, "{}", positions.len());
    // The EPD of the same positions: bare, and with the played move and
    // the evaluation as EPD gives them (for the side to move).
    let mut bare = String::new();
    let mut given = String::new();
    for (fen, _, uci, eval) in &positions {
        bare.push_str(&format!("{fen}\n"));
        let sign = if white(fen) { 1 } else { -1 };
        let eval = match eval {
            Ok(cp) => format!("ce {};", cp * sign),
            Err(n) => format!("dm {};", n * sign),
        };
        given.push_str(&format!("{fen}; sm {uci}; {eval}\n"));
    }
    std::fs::write(dir.path("bare.epd"), &bare).unwrap();
    std::fs::write(dir.path("given.epd"), &given).unwrap();
    // CSV: Lichess's convention (for White), the mate in its own column.
    let mut rows = vec![vec!["FEN".to_string(), "next_move".into(), "cp".into(), "Mate".into()]];
    for (fen, _, uci, eval) in &positions {
        let (cp, mate) = match eval {
            Ok(cp) => (cp.to_string(), String::new()),
            Err(n) => (String::new(), n.to_string()),
        };
        rows.push(vec![fen.clone(), uci.clone(), cp, mate]);
    }
    write_csv(&dir.path("white.csv"), b',', &rows);
    // TSV, zstd: SAN moves, the evaluation for the side to move, mates as
    // `#n`, under names of other pipelines.
    let mut rows = vec![vec!["epd".to_string(), "played".into(), "score".into()]];
    for (fen, san, _, eval) in &positions {
        let sign = if white(fen) { 1 } else { -1 };
        let score = match eval {
            Ok(cp) => (cp * sign).to_string(),
            Err(n) => format!("#{}", n * sign),
        };
        rows.push(vec![fen.clone(), san.clone(), score]);
    }
    let tsv = write_csv(&dir.path("mover.tsv"), b'\t', &rows);
    std::fs::write(dir.path("mover.tsv.zst"), zstd::encode_all(&tsv[..], 3).unwrap()).unwrap();
    let (code, out, err) = kibitz(&["replay", s(&dir.path("bare.epd"))]);
    assert_eq!(code, 0, "{err}");
    let (epd_games, epd_plies) = (summary(&out, "games"), summary(&out, "plies"));
    assert!(epd_games.starts_with(&format!("games     {} ", positions.len())), "{out}");
    for name in ["white.csv", "mover.tsv.zst"] {
        let (code, out, err) = kibitz(&["replay", s(&dir.path(name))]);
        assert_eq!(code, 0, "{name}: {err}");
        assert_eq!(summary(&out, "games"), epd_games, "{name}");
        assert_eq!(summary(&out, "plies"), epd_plies, "{name}");
    }
    // Searched: the same lines as the EPD's, with the played move added.
    let annotate = |input: &str, out: &str, extra: &[&str]| {
        let out = dir.path(out);
        let mut args = vec!["annotate", input, "-o", s(&out), "--skip-plies", "0"];
        args.extend(["--skip-check", "false", "--skip-captures", "false"]);
        args.extend_from_slice(extra);
        let (code, _, err) = kibitz(&args);
        assert_eq!(code, 0, "{input}: {err}");
        let (code, jsonl, err) = kibitz(&["export", s(&out), "--format", "jsonl"]);
        assert_eq!(code, 0, "{err}");
        jsonl
    };
    let expected = annotate(s(&dir.path("bare.epd")), "bare.kbz", &["--depth", "3"]);
    assert_eq!(expected.lines().count(), positions.len());
    let got = annotate(s(&dir.path("white.csv")), "white.kbz", &["--depth", "3"]);
    assert!(without_played(&got) == without_played(&expected), "a table searched differs");
    let first: serde_json::Value = serde_json::from_str(got.lines().next().unwrap()).unwrap();
    assert_eq!(first["played"], positions[0].2.as_str(), "{first}");
    // The evaluations given: the table's, for White or for the mover, are
    // the EPD's `ce` and `dm`.
    let expected = annotate(s(&dir.path("given.epd")), "given.kbz", &["--label", "table"]);
    assert_eq!(expected.lines().count(), positions.len());
    let got = annotate(s(&dir.path("white.csv")), "white-given.kbz", &["--label", "table"]);
    assert!(got == expected, "evaluations for White read differently");
    let mover = ["--label", "table", "--table-eval-side", "mover"];
    let got = annotate(s(&dir.path("mover.tsv.zst")), "mover-given.kbz", &mover);
    assert!(got == expected, "evaluations for the side to move read differently");
    let line: serde_json::Value = serde_json::from_str(expected.lines().nth(1).unwrap()).unwrap();
    let (fen, _, _, eval) = &positions[1];
    let sign = if white(fen) { 1 } else { -1 };
    assert_eq!(line["score"], eval.unwrap() * sign, "{line}");
}

/// A table with a column of moves and one of positions (a puzzle's start
/// and its line) is a table of games unless `--rows positions` says
/// otherwise; columns of other names are named by flags.
#[test]
fn flags_settle_what_a_table_holds() {
    let dir = TempDir::new("tables-flags");
    let path = dir.path("puzzles.csv");
    std::fs::write(
        &path,
        "PuzzleId,FEN,Moves,Rating\n\
         a1,r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3,f1c4 f8c5 c2c3,1500\n\
         a2,rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1,e7e5 g1f3,1200\n",
    )
    .unwrap();
    let (code, out, err) = kibitz(&["replay", s(&path)]);
    assert_eq!(code, 0, "{err}");
    assert!(summary(&out, "plies").starts_with("plies     5"), "{out}");
    let (code, out, err) = kibitz(&["replay", s(&path), "--rows", "positions"]);
    assert_eq!(code, 0, "{err}");
    assert!(summary(&out, "games").starts_with("games     2 "), "{out}");
    assert!(summary(&out, "plies").starts_with("plies     0"), "{out}");
    // Names of the table's own.
    let path = dir.path("own.csv");
    std::fs::write(&path, "start,line\n8/8/8/4k3/8/8/8/4K2R w K - 0 1,Rh8\n").unwrap();
    let (code, _, err) = kibitz(&["replay", s(&path)]);
    assert_ne!(code, 0);
    assert!(err.contains("the table's columns: start, line"), "{err}");
    let (code, out, err) = kibitz(&["replay", s(&path), "--fen-column", "start"]);
    assert_eq!(code, 0, "{err}");
    assert!(summary(&out, "games").starts_with("games     1 "), "{out}");
    let (code, _, err) = kibitz(&["replay", s(&path), "--moves-column", "Line", "--rows", "games"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = kibitz(&["replay", s(&path), "--rows", "games"]);
    assert_ne!(code, 0);
    assert!(err.contains("no column of moves: looked for one of movetext"), "{err}");
}

/// Bad cells are named by their line and skipped, the rest read; a run
/// that reads nothing at all (a table without the columns, an empty
/// table, a CSV without its header) fails and leaves no output, an older
/// file of the name untouched.
#[test]
fn bad_rows_and_runs_that_read_nothing() {
    let dir = TempDir::new("tables-nothing");
    let path = dir.path("cells.csv");
    std::fs::write(
        &path,
        "fen,move,cp\n\
         rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1,e2e4,20\n\
         ,e2e4,20\n\
         rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1,e2e5,20\n\
         rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1,e4,much\n\
         rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1,Nf3,-15\n",
    )
    .unwrap();
    let out = dir.path("cells.kbz");
    let (code, text, err) = kibitz(&["annotate", s(&path), "-o", s(&out), "--label", "table"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("cells.csv at line 3: a row that cannot be read: its position cell is empty"),
        "{err}"
    );
    assert!(
        err.contains("at line 5: a row that cannot be read: its evaluation `much` is not a number"),
        "{err}"
    );
    assert!(
        err.contains("line 4, ply 0: bad_position: the played move `e2e5` is not a legal move"),
        "{err}"
    );
    assert!(text.contains("positions 2 labelled"), "{text}");
    let older = dir.path("older.kbz");
    std::fs::write(&older, "an older file").unwrap();
    let no_columns = dir.path("players.csv");
    std::fs::write(&no_columns, "name,elo\nCarlsen,2830\n").unwrap();
    let empty = dir.path("empty.csv");
    std::fs::write(&empty, "fen,cp\n").unwrap();
    let headerless = dir.path("headerless.csv");
    std::fs::write(&headerless, "8/8/8/4k3/8/8/8/4K2R w K - 0 1,Rh8,35\n").unwrap();
    for input in [&no_columns, &empty, &headerless] {
        let (code, _, err) = kibitz(&["annotate", s(input), "-o", s(&older), "--force"]);
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("no game or position was read from any input"), "{err}");
        assert_eq!(std::fs::read(&older).unwrap(), b"an older file");
        let fresh = dir.path("fresh.kbz");
        let (code, _, _) = kibitz(&["annotate", s(input), "-o", s(&fresh)]);
        assert_eq!(code, 1);
        assert!(!fresh.exists() && !dir.path("fresh.kbz.partial").exists());
        let (code, _, err) = kibitz(&["replay", s(input)]);
        assert_eq!(code, 1, "{err}");
    }
    let (_, _, err) = kibitz(&["replay", s(&headerless)]);
    assert!(err.contains("headerless.csv: a CSV table without a header line"), "{err}");
}

/// README's example of tables from other pipelines, run as written: its
/// files made from the sample's games and positions.
#[test]
fn readme_table_example_runs_as_written() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let block = &readme[readme.find("<!-- table-example -->").unwrap()
        ..readme.find("<!-- /table-example -->").unwrap()];
    let dir = TempDir::new("tables-readme");
    let mut rows = vec![vec!["White".to_string(), "Black".into(), "Result".into(), "moves".into()]];
    for (tags, moves) in sample_games() {
        let result = tag(&tags, "Result").to_string();
        rows.push(vec![
            tag(&tags, "White").into(),
            tag(&tags, "Black").into(),
            result,
            bare(&moves),
        ]);
    }
    write_csv(&dir.path("games.csv"), b',', &rows);
    let positions = sample_positions();
    let mut rows = vec![vec!["fen".to_string(), "next_move".into(), "cp".into()]];
    rows.extend(positions.iter().map(|(fen, _, uci, eval)| {
        vec![fen.clone(), uci.clone(), eval.map_or(String::new(), |cp| cp.to_string())]
    }));
    write_csv(&dir.path("positions.csv"), b',', &rows);
    let commands: Vec<&str> = block.lines().filter(|l| l.starts_with("kibitz ")).collect();
    assert_eq!(commands.len(), 5, "{block}");
    for line in commands {
        let args: Vec<&str> = line.split_whitespace().skip(1).collect();
        let out =
            crate::util::kibitz_command().args(&args).current_dir(dir.root()).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{line}: {}", String::from_utf8_lossy(&out.stderr));
    }
    // Every position searched; those with an evaluation in centipawns
    // labelled from it.
    let searched = std::fs::read_to_string(dir.path("searched.jsonl")).unwrap();
    assert_eq!(searched.lines().count(), positions.len());
    let (code, given, err) = kibitz(&["export", s(&dir.path("given.kbz")), "--format", "jsonl"]);
    assert_eq!(code, 0, "{err}");
    assert!(given.lines().count() > 20, "{given}");
    for line in given.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let sign = if white(v["fen"].as_str().unwrap()) { 1 } else { -1 };
        let given = |p: &&(String, String, String, Result<i32, i32>)| {
            p.0 == v["fen"] && p.3.is_ok_and(|cp| v["score"] == cp * sign)
        };
        assert!(positions.iter().any(|p| given(&p)), "{line}");
    }
}
