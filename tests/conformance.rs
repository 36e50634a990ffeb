//! PGN as other readers' test suites and real databases write it (needs
//! `../shared/data`, hence the `corpus` feature).
//!
//! `pgn/peer-suites/` holds forty small files from the test suites of
//! python-chess, rust-pgn-reader, chessops, chess.js, scalachess,
//! pgn-extract, pgn-parser, notnil/chess and chesslib; its `expected.tsv`
//! gives python-chess's reading of each: games, plies, games with errors,
//! and the SHA-1 of every game's final position. kibitz must read every
//! file as that, except where python-chess is wrong by the file's own
//! project's test or by the PGN standard: those readings are
//! [`JUDGED`], each with its reason (`scripts/peer_suites.py` makes them
//! with python-chess from the text as the right reading has it, and the
//! python-chess tier checks them against it).
//!
//! `pgn/real/` holds ten real databases; `counts.tsv` gives python-chess's
//! counts, right for nine of them.

use std::path::Path;

use serde_json::Value;
use sha1::{Digest, Sha1};

use crate::util::{TempDir, kibitz_command, s, shared};

/// A file's reading: games, plies, rejected games (python-chess: games with
/// errors), and the SHA-1 of the final positions of the games played (a
/// FEN and a line feed each, in game order).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Reading {
    pub games: u64,
    pub plies: u64,
    pub rejected: u64,
    pub final_fens_sha1: String,
}

/// Where python-chess's reading is not the right one: the file, the right
/// reading (games, plies, rejected, SHA-1 of the final positions) and why.
pub const JUDGED: [(&str, u64, u64, u64, &str, &str); 14] = [
    (
        "chesslib__src_test_resources_ep.pgn",
        1,
        164,
        0,
        "888c688b7fdebba57e3cae323fd9c9a32fdddcc7",
        "a blank line before the final result does not end the game (chesslib replays one \
         game of 164 plies; python-chess reads the result as a second, empty game)",
    ),
    (
        "chesslib__src_test_resources_err.pgn",
        1,
        91,
        1,
        "919ec555015a8b57b1918d273aab61621b0c37fe",
        "one game with its illegal move, the result after a blank line (chesslib's test)",
    ),
    (
        "chesslib__src_test_resources_z0.pgn",
        1,
        58,
        0,
        "c30c69ca180cc27b7c88867bdfc1aa8eb3b79771",
        "one game ending in a null move, its result after a blank line",
    ),
    (
        "chessops__data_headers-and-moves-on-the-same-line.pgn",
        3,
        0,
        0,
        "da39a3ee5e6b4b0d3255bfef95601890afd80709",
        "three Antichess games, skipped (chessops expects 3; python-chess drops the first \
         line, tags and moves together)",
    ),
    (
        "chessops__data_leading-whitespace.pgn",
        4,
        20,
        0,
        "5c3d0adf60e7562fce452caf18f8cf1dbbd804f6",
        "indented tags, moves on a tag line, a game without tags: chessops expects 4 games of \
         e4 e5 Nf3 Nc6 Bb5 (python-chess reads an extra empty game)",
    ),
    (
        "pgn-extract__test_infield_nested-comment.pgn",
        1,
        1,
        1,
        "dfdd20c1f5f23e479462304c2bcb9d4a2756a720",
        "brace comments do not nest (pgn-extract reads this only with --nestedcomment): the \
         comment ends at the first `}` and `which` is no move",
    ),
    (
        "pgn-extract__test_infield_test-fuzzydepth.pgn",
        4,
        20,
        0,
        "55f791cfa388811fdc6ce066c2c5bd0c84472684",
        "four games, one per line, each ended by `*` (pgn-extract reads 4; python-chess one \
         game that runs into an illegal move)",
    ),
    (
        "pgn-extract__test_infield_test-nobadresults.pgn",
        9,
        9,
        0,
        "26cd40d0c0836295f26b10a2b27b35f21a74c264",
        "nine games of one ply, tag and moves on one line (pgn-extract reads 9; python-chess \
         passes over every line as a malformed tag)",
    ),
    (
        "pgn-extract__test_infield_test-nochecks.pgn",
        2,
        76,
        0,
        "63502c52d6acd200c60b4eabde9ec60ff9b9d14b",
        "a blank line after the game's comment, before move 1, does not end the game \
         (pgn-extract reads 2 games; python-chess splits the second in two)",
    ),
    (
        "pgn-parser__doc_sampleGameThrow.pgn",
        1,
        2,
        1,
        "d41531dfca482525ed2f7ebd2fa7ac3ddd79dbe8",
        "German `Sf3` is not SAN: rejected after 1.d4 Nf6 (pgn-parser throws there)",
    ),
    (
        "python-chess__data_pgn_antichess-programfox.pgn",
        2,
        0,
        0,
        "da39a3ee5e6b4b0d3255bfef95601890afd80709",
        "Antichess, a variant kibitz does not play: skipped",
    ),
    (
        "python-chess__data_pgn_saturs-jannlee-zh-lichess.pgn",
        1,
        0,
        0,
        "da39a3ee5e6b4b0d3255bfef95601890afd80709",
        "Crazyhouse, a variant kibitz does not play: skipped",
    ),
    (
        "scalachess__Fixtures.scala_invalidVariant.pgn",
        1,
        142,
        0,
        "e344fb1fe0cb88e32491fe7bba74a86092949927",
        "an unknown variant name is played as standard chess with a warning, as scalachess \
         plays it (python-chess plays it too, and reports an error)",
    ),
    (
        "scalachess__Fixtures.scala_invisibleChar.pgn",
        1,
        19,
        0,
        "0c7fca095b365c861b4c5df27eeaf4cf67d7781e",
        "a byte-order mark after the first line feed starts no game (scalachess replays one \
         game of 19 plies; python-chess reads the tags as a game of their own)",
    ),
];

/// kibitz's reading of `path`, and its JSON summary.
pub fn kibitz_reading(path: &Path, dir: &TempDir) -> (Reading, Value) {
    let keys = dir.path("keys.tsv");
    let out = kibitz_command()
        .args(["replay", "--quiet", "--json", "--keys"])
        .arg(&keys)
        .arg(path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}: {}", path.display(), String::from_utf8_lossy(&out.stderr));
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The last line of each game is its final position.
    let mut last: Vec<(u64, String)> = Vec::new();
    for line in std::fs::read_to_string(&keys).unwrap().lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        let game: u64 = fields[0].parse().unwrap();
        match last.last_mut() {
            Some((g, fen)) if *g == game => *fen = fields[3].to_string(),
            _ => last.push((game, fields[3].to_string())),
        }
    }
    let mut sha = Sha1::new();
    for (_, fen) in &last {
        sha.update(fen.as_bytes());
        sha.update(b"\n");
    }
    let reading = Reading {
        games: summary["games"].as_u64().unwrap(),
        plies: summary["plies"].as_u64().unwrap(),
        rejected: summary["rejected_games"].as_u64().unwrap(),
        final_fens_sha1: format!("{:x}", sha.finalize()),
    };
    (reading, summary)
}

/// `expected.tsv`: file name and python-chess's reading.
fn python_chess_readings() -> Vec<(String, Reading)> {
    let text = std::fs::read_to_string(shared("pgn/peer-suites/expected.tsv")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("file\t"))
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            let reading = Reading {
                games: f[1].parse().unwrap(),
                plies: f[2].parse().unwrap(),
                rejected: f[3].parse().unwrap(),
                final_fens_sha1: f[4].to_string(),
            };
            (f[0].to_string(), reading)
        })
        .collect()
}

#[test]
fn peer_suites_read_as_their_projects_read_them() {
    let dir = TempDir::new("peer-suites");
    let readings = python_chess_readings();
    assert_eq!(readings.len(), 40, "expected.tsv lists the forty files");
    let mut right = 0;
    let mut wrong = Vec::new();
    for (file, python_chess) in &readings {
        let expected = match JUDGED.iter().find(|j| j.0 == file) {
            Some(&(_, games, plies, rejected, sha, _why)) => {
                Reading { games, plies, rejected, final_fens_sha1: sha.to_string() }
            }
            None => python_chess.clone(),
        };
        let (got, summary) = kibitz_reading(&shared(&format!("pgn/peer-suites/{file}")), &dir);
        if got == expected {
            right += 1;
        } else {
            wrong.push(format!("{file}: read {got:?}, right {expected:?}"));
        }
        // Nothing is dropped without a word: no tag line passed over in
        // these files, and the variants are accounted for.
        assert_eq!(summary["malformed_tag_lines"], 0, "{file}");
        if file.contains("antichess") || file.contains("headers-and-moves") {
            assert_eq!(summary["skipped_variants"]["Antichess"], got.games, "{file}");
        }
        if file.contains("zh-lichess") {
            assert_eq!(summary["skipped_variants"]["Crazyhouse"], 1, "{file}");
        }
        if file.contains("invalidVariant") {
            assert_eq!(summary["unknown_variants"]["starwars"], 1, "{file}");
        }
    }
    println!("peer suites: {right}/{} files read right", readings.len());
    assert!(wrong.is_empty(), "{right}/40 read right; wrong:\n{}", wrong.join("\n"));
    // Null moves count the move number: after Black's `--`, move 32.
    let (_, summary) = kibitz_reading(
        &shared("pgn/peer-suites/pgn-extract__test_infield_test-allownullmoves.pgn"),
        &dir,
    );
    assert_eq!(summary["null_moves"], 2);
}

/// The real databases as python-chess counts them, but for the chess.com
/// export with no blank line between games, which python-chess misreads
/// (MANIFEST.md): kibitz reads it as the copy with blank lines added, the
/// same games and the same positions, its 21 Chess960 games included.
#[test]
fn real_databases_read_as_intended() {
    let dir = TempDir::new("real-databases");
    let text = std::fs::read_to_string(shared("pgn/real/counts.tsv")).unwrap();
    let mut files = 0;
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let (file, mut games, mut plies, mut errors) = (
            f[0],
            f[1].parse::<u64>().unwrap(),
            f[2].parse::<u64>().unwrap(),
            f[3].parse().unwrap(),
        );
        if file == "chesscom_MagnusCarlsen_2014-2018.pgn.zst" {
            (games, plies, errors) = (334, 30139, 0);
        }
        let (got, summary) = kibitz_reading(&shared(&format!("pgn/real/{file}")), &dir);
        assert_eq!((got.games, got.plies, got.rejected), (games, plies, errors), "{file}");
        assert_eq!(summary["malformed_tag_lines"], 0, "{file}");
        assert_eq!(summary["unknown_variants"], serde_json::json!({}), "{file}");
        files += 1;
    }
    assert_eq!(files, 10);
    let keys = |name: &str| {
        let out = dir.path(&format!("{name}.keys"));
        let status = kibitz_command()
            .args(["replay", "--quiet", "--keys", s(&out)])
            .arg(shared(&format!("pgn/real/{name}")))
            .status()
            .unwrap();
        assert!(status.success());
        std::fs::read(out).unwrap()
    };
    assert_eq!(
        keys("chesscom_MagnusCarlsen_2014-2018.pgn.zst"),
        keys("chesscom_MagnusCarlsen_2014-2018.blanklines.pgn.zst")
    );
}
