//! CSV and TSV tables of games (plain, zstd, gzip; found by their content),
//! written here with the `csv` crate from the project's sample games: the
//! same games and plies as the PGN, whatever the moves column's name and
//! content, and the errors of a table kibitz cannot read.

use std::io::Write;

use crate::util::{TempDir, kibitz, s, sample};

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
            && err.contains("no column of moves: looked for one of movetext, pgn, moves")
            && err.contains("its columns: name, elo"),
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
