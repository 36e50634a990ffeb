//! `kibitz replay`: counts, error locations, key output, compression forms,
//! thread counts, and bad input. The default tests use the project's own
//! `data/sample.pgn` and files they generate; with `--features corpus` the
//! shared corpora are checked against python-chess's counts.

use std::{io::Write, process::Stdio};

use serde_json::Value;

use crate::util::{TempDir, s, sample};

/// Runs `kibitz replay --json --quiet ARGS`; returns (exit code, summary,
/// stderr).
pub fn replay(args: &[&str]) -> (i32, Value, String) {
    let out = crate::util::kibitz_command()
        .args(["replay", "--json", "--quiet"])
        .args(args)
        .output()
        .expect("run kibitz");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("bad json ({e}): {stderr}"));
    (out.status.code().unwrap_or(-1), json, stderr)
}

fn counts(v: &Value) -> (u64, u64, u64) {
    (
        v["games"].as_u64().unwrap(),
        v["plies"].as_u64().unwrap(),
        v["rejected_games"].as_u64().unwrap(),
    )
}

#[test]
fn sample_counts_match_python_chess() {
    // python-chess 1.11.2 reads 20 games, 943 plies, none with errors.
    let (code, v, _) = replay(&[s(&sample())]);
    assert_eq!(code, 0);
    assert_eq!(counts(&v), (20, 943, 0));
}

#[test]
fn same_results_whatever_the_thread_count() {
    let dir = TempDir::new("threads");
    let mut outputs = Vec::new();
    for threads in ["1", "2", "3"] {
        let keys = dir.path(&format!("keys{threads}.tsv"));
        let (_, v, _) =
            replay(&["--threads", threads, "--keys", s(&keys), s(&sample()), s(&sample())]);
        assert_eq!(counts(&v), (40, 1886, 0));
        outputs.push(std::fs::read(&keys).unwrap());
    }
    assert!(outputs.windows(2).all(|w| w[0] == w[1]));
    let text = String::from_utf8(outputs.pop().unwrap()).unwrap();
    assert_eq!(text.lines().count(), 1886 + 40);
    assert!(text.starts_with(
        "1\t0\t463b96181691fc9c\trnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\n"
    ));
    // The second copy's games are numbered on from the first's.
    assert!(text.contains("\n21\t0\t463b96181691fc9c\t"));
}

/// zstd frames cut at arbitrary byte offsets (mid-game), each preceded by a
/// skippable frame, as pzstd writes them.
fn multiframe(text: &[u8], piece: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for part in text.chunks(piece) {
        out.extend_from_slice(&[0x50, 0x2a, 0x4d, 0x18, 4, 0, 0, 0]);
        out.extend_from_slice(&(part.len() as u32).to_le_bytes());
        out.extend_from_slice(&zstd::encode_all(part, 3).unwrap());
    }
    out
}

#[test]
fn compressed_forms_agree() {
    let dir = TempDir::new("compressed");
    let text = std::fs::read(sample()).unwrap();
    let plain_keys = dir.path("plain.tsv");
    replay(&["--keys", s(&plain_keys), s(&sample())]);
    let expected = std::fs::read(&plain_keys).unwrap();

    let zst = dir.path("sample.pgn.zst");
    std::fs::write(&zst, zstd::encode_all(&text[..], 19).unwrap()).unwrap();
    let multi = dir.path("sample.multi"); // no extension: detected by magic
    std::fs::write(&multi, multiframe(&text, 997)).unwrap();
    let gz = dir.path("sample.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&text).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();

    for (file, threads) in [(&zst, "1"), (&zst, "2"), (&multi, "1"), (&multi, "2"), (&gz, "2")] {
        let keys = dir.path("k.tsv");
        let (code, v, err) = replay(&["--threads", threads, "--keys", s(&keys), s(file)]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(counts(&v), (20, 943, 0), "{}", file.display());
        assert_eq!(std::fs::read(&keys).unwrap(), expected, "{}", file.display());
    }
}

#[test]
fn standard_input() {
    let mut child = crate::util::kibitz_command()
        .args(["replay", "--json", "--quiet", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let text = std::fs::read(sample()).unwrap();
    child.stdin.take().unwrap().write_all(&zstd::encode_all(&text[..], 3).unwrap()).unwrap();
    let out = child.wait_with_output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(counts(&v), (20, 943, 0));
}

#[test]
fn rejected_games_are_located() {
    let dir = TempDir::new("illegal");
    let good = "[Event \"one\"]\n[White \"A\"]\n[Black \"B\"]\n\n1. e4 e5 2. Nf3 Nc6 *\n\n";
    let bad = "[Event \"two\"]\n[Site \"here\"]\n[White \"C\"]\n[Black \"D\"]\n\n1. d4 d5 2. c4 Ke6 3. Nc3 *\n\n";
    let fen = "[Event \"three\"]\n[FEN \"8/8/8/8/8/8/8/8 w - - 0 1\"]\n\n1. e4 *\n\n";
    let text = format!("{good}{bad}{fen}{good}");
    let pgn = dir.path("games.pgn");
    std::fs::write(&pgn, &text).unwrap();
    let errors = dir.path("errors.jsonl");
    let (code, v, _) = replay(&["--errors", s(&errors), s(&pgn)]);
    assert_eq!(code, 0);
    // Plies: 4 in the first game, 3 before the illegal move, 4 in the last.
    assert_eq!(counts(&v), (4, 11, 2));
    assert_eq!(v["rejected"]["illegal_move"], 1);
    assert_eq!(v["rejected"]["bad_position"], 1);
    let lines: Vec<Value> = std::fs::read_to_string(&errors)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    let e = &lines[0];
    assert_eq!(e["game"], 2);
    assert_eq!(e["ply"], 4);
    assert_eq!(e["san"], "Ke6");
    assert_eq!(e["kind"], "illegal_move");
    assert_eq!(e["offset"], good.len());
    assert_eq!(
        (e["event"].as_str(), e["site"].as_str(), e["white"].as_str()),
        (Some("two"), Some("here"), Some("C"))
    );
    assert!(e["file"].as_str().unwrap().ends_with("games.pgn"));
    assert_eq!(lines[1]["game"], 3);
    assert_eq!(lines[1]["ply"], 0);
    assert!(lines[1]["reason"].as_str().unwrap().contains("no king"), "{}", lines[1]);
    // --strict turns rejections into exit code 2.
    let (code, _, _) = replay(&["--strict", s(&pgn)]);
    assert_eq!(code, 2);
    let (code, _, _) = replay(&["--strict", s(&sample())]);
    assert_eq!(code, 0);
}

#[test]
fn broken_inputs_are_reported_and_the_run_goes_on() {
    let dir = TempDir::new("broken");
    // Games with incompressible comments: the zstd file has many blocks, so
    // half of it still decodes to games.
    let mut x = 0x1234_5678_9abc_def0u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut text = Vec::new();
    for _ in 0..400 {
        let noise: String = (0..2000).map(|_| (b'a' + (next() % 26) as u8) as char).collect();
        text.extend_from_slice(
            format!("[Event \"x\"]\n\n1. e4 {{ {noise} }} e5 2. Nf3 *\n\n").as_bytes(),
        );
    }
    let mut encoder = zstd::Encoder::new(Vec::new(), 3).unwrap();
    encoder.include_checksum(true).unwrap();
    encoder.write_all(&text).unwrap();
    let zst = encoder.finish().unwrap();
    let truncated = dir.path("truncated.zst");
    std::fs::write(&truncated, &zst[..zst.len() / 2]).unwrap();
    let mut flipped_bytes = zst.clone();
    let mid = flipped_bytes.len() / 2;
    flipped_bytes[mid] ^= 0x10;
    let flipped = dir.path("flipped.zst");
    std::fs::write(&flipped, &flipped_bytes).unwrap();
    let random = dir.path("random.bin");
    let noise: Vec<u8> = (0..1 << 20).map(|_| next() as u8).collect();
    std::fs::write(&random, &noise).unwrap();
    let missing = dir.path("missing.pgn");
    let directory = dir.path("");

    let (code, v, err) =
        replay(&[s(&truncated), s(&flipped), s(&random), s(&missing), s(&directory), s(&sample())]);
    // Inputs that could not be read whole: exit code 1, after the summary.
    assert_eq!(code, 1, "{err}");
    // The sample at the end is read whole.
    assert_eq!(v["files"][5]["games"], 20);
    assert!(err.contains("truncated.zst at byte"), "{err}");
    assert!(err.contains("flipped.zst at byte"), "{err}");
    assert!(err.contains("missing.pgn: cannot open"), "{err}");
    assert!(err.contains("is a directory"), "{err}");
    // Random bytes are binary data (11% control bytes), refused at once.
    assert!(err.contains("random.bin at byte 0: binary data"), "{err}");
    assert_eq!(v["input_errors"], 5);
    // The truncated file gives the games before the cut.
    let truncated_games = v["files"][0]["games"].as_u64().unwrap();
    assert!(truncated_games > 0 && truncated_games < 400, "{v}");
    assert_eq!(v["files"][0]["compression"], "zstd");
}

#[test]
fn long_games_tags_and_comments() {
    let dir = TempDir::new("long");
    // 10,000 plies: knights out and back.
    let mut game = String::from("[Event \"long\"]\n\n");
    for i in 0..2500 {
        game.push_str(&format!("{}. Nf3 Nf6 {}. Ng1 Ng8 ", 2 * i + 1, 2 * i + 2));
    }
    game.push_str("1/2-1/2\n\n");
    // A 1 MB tag line.
    let tag = format!("[Event \"{}\"]\n[White \"x\"]\n\n1. e4 e5 *\n\n", "a".repeat(1 << 20));
    // A 100 MB comment.
    let mut comment = String::from("[Event \"comment\"]\n\n1. e4 { ");
    comment.push_str(&"abcdefghij".repeat(10 << 20));
    comment.push_str(" } e5 2. Nf3 *\n\n");
    let after = "[Event \"after\"]\n\n1. d4 d5 *\n";
    let pgn = dir.path("long.pgn");
    std::fs::write(&pgn, format!("{game}{tag}{comment}{after}")).unwrap();
    drop(comment);
    let errors = dir.path("errors.jsonl");
    let (code, v, err) = replay(&["--errors", s(&errors), s(&pgn)]);
    assert_eq!(code, 0, "{err}");
    // Every game replays in full, the one with the 1 MB tag line too: the
    // reader works on the text in place, so a line's length is no limit.
    let text = std::fs::read_to_string(&errors).unwrap();
    assert_eq!(counts(&v), (4, 10_000 + 2 + 3 + 2, 0), "{v} {text}");
}

/// A game with a long tag line is read like any other, and its neighbours
/// too: games without blank lines between them (a `[` line after the moves
/// starts the next game), a `%` escape line among the tags, a comment
/// wrapped so that one of its lines starts with `[` (part of the comment,
/// not a new game).
#[test]
fn a_long_tag_line_is_read() {
    let dir = TempDir::new("longtag");
    let long = format!("[Annotator \"{}\"]\n", "x".repeat(20_000));
    let text = format!(
        "[Event \"a\"]\n[Result \"*\"]\n1. e4 *\n\
         [Event \"b\"]\n% exported\n{long}1. e4 {{ a comment\n[%clk 0:01:00] }} e5 2. Nf3 *\n\
         [Event \"c\"]\n1. d4 d5 *\n\
         [Event \"d\"]\n\n1. c4 *\n"
    );
    let pgn = dir.path("longtag.pgn");
    std::fs::write(&pgn, &text).unwrap();
    let keys = dir.path("keys.tsv");
    let (code, v, err) = replay(&["--keys", s(&keys), s(&pgn)]);
    assert_eq!(code, 0, "{err}");
    // Games a, b, c, d: 1 + 3 + 2 + 1 plies.
    assert_eq!(counts(&v), (4, 7, 0), "{v}");
    let keys = std::fs::read_to_string(&keys).unwrap();
    let games: Vec<&str> = keys.lines().map(|l| l.split('\t').next().unwrap()).collect();
    assert_eq!(games, ["1", "1", "2", "2", "2", "2", "3", "3", "3", "4", "4"]);
}

/// The game of a promotion written without "=", in the spellings real
/// databases use.
fn promotion_game(promotion: &str) -> String {
    format!("[Event \"x\"]\n\n1. e4 d5 2. exd5 c6 3. dxc6 Nf6 4. cxb7 Nbd7 5. {promotion} Nb6 *\n")
}

/// A promotion written without "=" (`bxa8Q+`, `36.g8Q+` in old exports) is
/// a move: the game is read to its end, 10 plies with no error, as
/// python-chess reads it. It was dropped from the movetext without a word,
/// and the game rejected at the move after it (ply 9, `Nb6`).
#[test]
fn promotions_without_an_equals_sign() {
    let dir = TempDir::new("promotions");
    let pgn = dir.path("p.pgn");
    for promotion in ["bxa8Q+", "bxa8Q", "bxa8(Q)", "bxa8/Q", "bxa8=q", "bxa8q", "bxa8Q!", "b7a8q"]
    {
        std::fs::write(&pgn, promotion_game(promotion)).unwrap();
        let (code, v, err) = replay(&["--strict", s(&pgn)]);
        assert_eq!((code, counts(&v)), (0, (1, 10, 0)), "{promotion}: {err}");
    }
    // A pawn pushed onto the last rank with a check mark (`g8Q+`), and a
    // capture promoting (`gxh8Q`) followed by a move that is illegal after
    // it: rejected at that move, ply 10, as python-chess rejects it.
    let moves = "1. h4 g5 2. hxg5 h6 3. gxh6 Bg7 4. hxg7 Nf6 5.";
    std::fs::write(&pgn, format!("{moves} g8Q+ Rxg8 *\n")).unwrap();
    assert_eq!(counts(&replay(&[s(&pgn)]).1), (1, 10, 0));
    let errors = dir.path("errors.jsonl");
    std::fs::write(&pgn, format!("{moves} gxh8Q Rg8 *\n")).unwrap();
    assert_eq!(counts(&replay(&["--errors", s(&errors), s(&pgn)]).1), (1, 9, 1));
    let e: Value = serde_json::from_str(&std::fs::read_to_string(&errors).unwrap()).unwrap();
    assert_eq!((e["ply"].as_u64(), e["san"].as_str()), (Some(10), Some("Rg8")));
}

/// A tag value holding a bare quote, as old exports write it, runs to the
/// last quote before the closing bracket (python-chess reads the Site as
/// `Leningrad "living pi`): two games of 2 and 1 plies. The quote used to
/// end the tag section, and the rest of the line and the tags after it
/// were read as games of their own (3 games).
#[test]
fn a_bare_quote_inside_a_tag_value() {
    let dir = TempDir::new("quote");
    let pgn = dir.path("q.pgn");
    std::fs::write(
        &pgn,
        "[Event \"x\"]\n[Site \"Leningrad \"living pi\"]\n[Result \"1-0\"]\n\n1. e4 e5 1-0\n\n\
         [Event \"y\"]\n\n1. d4 *\n",
    )
    .unwrap();
    let (code, v, err) = replay(&["--strict", s(&pgn)]);
    assert_eq!((code, counts(&v)), (0, (2, 3, 0)), "{err}");
}

/// A token that is neither a move nor a known non-move is never skipped:
/// the game is rejected at that token's ply, with the token named (not at
/// a later move that no longer fits, nor read as if the token were not
/// there).
#[test]
fn a_token_that_is_no_move_is_named_at_its_ply() {
    let dir = TempDir::new("token");
    let pgn = dir.path("t.pgn");
    std::fs::write(
        &pgn,
        "[Event \"a\"]\n\n1. e4 e5 2. Qe9 Nf6 3. Nf3 *\n\n\
         [Event \"b\"]\n\n1. e4 e5 2. N@f3 *\n\n\
         [Event \"c\"]\n\n1. d4 $1 d5 += 2. c4 {ok} N 1/2-1/2\n",
    )
    .unwrap();
    let errors = dir.path("errors.jsonl");
    let (code, v, err) = replay(&["--errors", s(&errors), s(&pgn)]);
    assert_eq!((code, counts(&v)), (0, (3, 7, 2)), "{err}");
    let lines = std::fs::read_to_string(&errors).unwrap();
    let found: Vec<(u64, u64, String, String)> = lines
        .lines()
        .map(|l| {
            let e: Value = serde_json::from_str(l).unwrap();
            let text = |k: &str| e[k].as_str().unwrap().to_string();
            (e["game"].as_u64().unwrap(), e["ply"].as_u64().unwrap(), text("san"), text("kind"))
        })
        .collect();
    assert_eq!(
        found,
        [
            (1, 3, "Qe9".into(), "parse_error".into()),
            (2, 3, "N@f3".into(), "unsupported_move".into())
        ],
        "{lines}"
    );
}

#[test]
fn epd_positions() {
    let dir = TempDir::new("epd");
    let epd = dir.path("suite.epd");
    std::fs::write(
        &epd,
        "2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - bm Qg6; id \"WAC.001\";\r\n\
         r1bqrnk1/pp2bp1p/2p2np1/3p2B1/3P4/2NBPN2/PPQ2PPP/1R3RK1 w - -1 12 ; bm b4\0\n\
         \n\
         8/8/8/8/8/8/8/8 w - - bm Kh1;\n\
         bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9 ;D1 21\n",
    )
    .unwrap();
    let errors = dir.path("errors.jsonl");
    let keys = dir.path("keys.tsv");
    let (code, v, _) = replay(&["--errors", s(&errors), "--keys", s(&keys), s(&epd)]);
    assert_eq!(code, 0);
    assert_eq!(v["files"][0]["format"], "epd");
    assert_eq!(counts(&v), (4, 0, 1));
    assert_eq!(v["chess960_games"], 1);
    let e: Value =
        serde_json::from_str(std::fs::read_to_string(&errors).unwrap().lines().next().unwrap())
            .unwrap();
    assert_eq!(e["game"], 3);
    assert_eq!(e["kind"], "bad_position");
    let keys = std::fs::read_to_string(&keys).unwrap();
    assert_eq!(keys.lines().count(), 3);
}

#[cfg(feature = "corpus")]
mod corpus {
    use super::*;
    use crate::util::shared;

    /// (file, games, plies, games with errors), measured with python-chess
    /// 1.11.2 by scripts/pgn_counts.py.
    const PYTHON_CHESS: [(&str, u64, u64, u64); 21] = [
        ("pgn/chess960/cutechess-fischerrandom.pgn", 4, 396, 0),
        ("pgn/chess960/fics_wild_fr_2009.pgn", 12, 1387, 0),
        ("pgn/edgecases/anastasian-lewis.pgn", 1, 84, 0),
        ("pgn/edgecases/chessbase-empty-line.pgn", 1, 134, 0),
        ("pgn/edgecases/kasparov-deep-blue-1997.pgn", 6, 519, 0),
        ("pgn/edgecases/molinari-bordais-1979.pgn", 1, 10, 0),
        ("pgn/edgecases/nepomniachtchi-liren-game1.pgn", 1, 97, 0),
        ("pgn/edgecases/pgn-reader_illegal.pgn", 100, 9060, 1),
        ("pgn/edgecases/pgn-reader_legal.pgn", 100, 6409, 0),
        ("pgn/edgecases/scalachess_FWWRC_2024_headers_only.pgn", 1, 0, 0),
        ("pgn/edgecases/scalachess_uzchesscup_headers_only.pgn", 1, 0, 0),
        ("pgn/edgecases/stockfish-learning.pgn", 1, 154, 0),
        ("pgn/edgecases/uci-moves.pgn", 1, 113, 0),
        ("pgn/edgecases/utf8-bom.pgn", 2, 0, 0),
        ("pgn/edgecases/variations-nags-and-comments.pgn", 1, 13, 0),
        ("pgn/engine/TCEC_Season_13_-_Superfinal.pgn.zst", 100, 13295, 0),
        ("pgn/lichess/lichess-org_database_2016-05.pgn.multiframe.zst", 4798, 217481, 0),
        ("pgn/lichess/lichess-org_database_2016-05.pgn.zst", 4798, 217481, 0),
        ("pgn/lichess/lichess-org_database_2017-05.pgn.zst", 298, 21247, 0),
        ("pgn/lichess/lichess_api_export_AlPhA_ZeRo_1925_2026-04-19.pgn", 3, 194, 0),
        ("pgn/openings/2moves_v2.pgn.zst", 12092, 48368, 0),
    ];

    #[test]
    fn every_shared_pgn_matches_python_chess() {
        for (file, games, plies, errors) in PYTHON_CHESS {
            let path = shared(file);
            let (code, v, err) = replay(&[s(&path)]);
            assert_eq!(code, 0, "{file}: {err}");
            assert_eq!(counts(&v), (games, plies, errors), "{file}");
        }
        let chess960 = replay(&[s(&shared("pgn/chess960/fics_wild_fr_2009.pgn"))]).1;
        assert_eq!(chess960["chess960_games"], 12);
        let nulls = replay(&[s(&shared("pgn/edgecases/anastasian-lewis.pgn"))]).1;
        assert_eq!(nulls["null_moves"], 1);
    }

    /// EPD files that end every line with a NUL byte (about 1.5% of their
    /// bytes) are text: every line is read as a position. They were once
    /// refused as binary data.
    #[test]
    fn epd_files_with_nul_line_ends_are_read() {
        for (file, lines) in [
            ("perft/chess-epds_perft.epd", 174),
            ("perft/chess-epds_perft-ferdy-double-checks.epd", 184),
            ("epd/chess-epds_kaufman.epd", 25),
        ] {
            let (code, v, err) = replay(&[s(&shared(file))]);
            assert_eq!(code, 0, "{file}: {err}");
            assert_eq!(counts(&v), (lines, 0, 0), "{file}");
        }
    }

    #[test]
    fn illegal_move_located_exactly() {
        let dir = TempDir::new("corpus-illegal");
        let errors = dir.path("e.jsonl");
        replay(&["--errors", s(&errors), s(&shared("pgn/edgecases/pgn-reader_illegal.pgn"))]);
        let e: Value =
            serde_json::from_str(std::fs::read_to_string(&errors).unwrap().trim()).unwrap();
        assert_eq!(
            (e["game"].as_u64(), e["ply"].as_u64(), e["san"].as_str()),
            (Some(38), Some(2), Some("b4"))
        );
        assert_eq!(e["offset"], 34111);
        assert_eq!(e["site"], "https://lichess.org/HajiazyC");
    }

    #[test]
    fn keys_reproduce_the_shared_key_file() {
        let dir = TempDir::new("corpus-keys");
        let keys = dir.path("keys.tsv");
        let (code, _, _) = replay(&[
            "--keys",
            s(&keys),
            s(&shared("pgn/lichess/lichess-org_database_2017-05.pgn.zst")),
        ]);
        assert_eq!(code, 0);
        let expected = zstd::decode_all(
            std::fs::File::open(shared(
                "polyglot/zobrist_keys_lichess-org_database_2017-05.tsv.zst",
            ))
            .unwrap(),
        )
        .unwrap();
        let expected: Vec<&[u8]> =
            expected.split_inclusive(|&b| b == b'\n').filter(|l| !l.starts_with(b"#")).collect();
        let got = std::fs::read(&keys).unwrap();
        let got: Vec<&[u8]> = got.split_inclusive(|&b| b == b'\n').collect();
        assert_eq!(got.len(), 21545);
        assert_eq!(got, expected);
    }

    /// The shared key file's lines (comments left out), split into
    /// (game, ply, rest of the line).
    fn shared_key_lines() -> Vec<(u64, u64, String)> {
        let text = zstd::decode_all(
            std::fs::File::open(shared(
                "polyglot/zobrist_keys_lichess-org_database_2017-05.tsv.zst",
            ))
            .unwrap(),
        )
        .unwrap();
        String::from_utf8(text)
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| {
                let mut f = l.splitn(3, '\t');
                let game = f.next().unwrap().parse().unwrap();
                let ply = f.next().unwrap().parse().unwrap();
                (game, ply, f.next().unwrap().to_string())
            })
            .collect()
    }

    fn write_key_lines(path: &std::path::Path, lines: &[(u64, u64, String)]) {
        let text: String = lines.iter().map(|(g, p, rest)| format!("{g}\t{p}\t{rest}\n")).collect();
        std::fs::write(path, text).unwrap();
    }

    fn errors_of(path: &std::path::Path) -> Vec<Value> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    const LICHESS_2017: &str = "pgn/lichess/lichess-org_database_2017-05.pgn.zst";

    /// The key file python-chess computed for the 2017-05 games, compressed
    /// as shared: every one of its 21,545 positions equal.
    #[test]
    fn check_keys_finds_the_shared_key_file_equal() {
        let key_file = shared("polyglot/zobrist_keys_lichess-org_database_2017-05.tsv.zst");
        let (code, v, err) =
            replay(&["--strict", "--check-keys", s(&key_file), s(&shared(LICHESS_2017))]);
        assert_eq!(code, 0, "{err}");
        let k = &v["check_keys"];
        assert_eq!((k["compared"].as_u64(), k["matched"].as_u64()), (Some(21545), Some(21545)));
        for field in ["mismatched", "missing_games", "extra_games", "bad_lines"] {
            assert_eq!(k[field], 0, "{field}");
        }
    }

    /// Three keys altered in the key file (zstd-compressed here): exactly
    /// those three reported, with game, ply and byte offset, on standard
    /// error and in the --errors file; --strict exits 2.
    #[test]
    fn check_keys_reports_exactly_the_altered_keys() {
        let dir = TempDir::new("corpus-check-keys");
        let mut lines = shared_key_lines();
        let altered = [(5u64, 10u64), (150, 0), (298, 59)];
        for (g, p) in altered {
            let line = lines.iter_mut().find(|l| (l.0, l.1) == (g, p)).expect("a line");
            let key = u64::from_str_radix(&line.2[..16], 16).unwrap() ^ 0x0100_0000_0000_0001;
            line.2 = format!("{key:016x}{}", &line.2[16..]);
        }
        let plain = dir.path("keys.tsv");
        write_key_lines(&plain, &lines);
        let zst = dir.path("keys.tsv.zst");
        std::fs::write(&zst, zstd::encode_all(&std::fs::read(&plain).unwrap()[..], 3).unwrap())
            .unwrap();
        let errors = dir.path("errors.jsonl");
        let (code, v, err) = replay(&[
            "--strict",
            "--check-keys",
            s(&zst),
            "--errors",
            s(&errors),
            s(&shared(LICHESS_2017)),
        ]);
        assert_eq!(code, 2, "{err}");
        assert_eq!(v["check_keys"]["mismatched"], 3);
        assert_eq!(v["check_keys"]["compared"], 21545);
        let found: Vec<(u64, u64)> = errors_of(&errors)
            .iter()
            .map(|e| {
                assert_eq!(e["kind"], "mismatch");
                assert!(e["offset"].as_u64().is_some() && e["fen"].as_str().is_some());
                assert_ne!(e["expected"], e["found"]);
                (e["game"].as_u64().unwrap(), e["ply"].as_u64().unwrap())
            })
            .collect();
        assert_eq!(found, altered);
        assert_eq!(err.lines().filter(|l| l.contains("key file has")).count(), 3, "{err}");
        assert!(err.contains("game 150 at byte "), "{err}");
    }

    /// A compressed key file cut short: the check stops where it breaks,
    /// the replay goes on, the summary says so and the exit code is 1.
    #[test]
    fn check_keys_against_a_cut_key_file_stops_the_check_not_the_run() {
        let dir = TempDir::new("corpus-check-keys-cut");
        let whole =
            std::fs::read(shared("polyglot/zobrist_keys_lichess-org_database_2017-05.tsv.zst"))
                .unwrap();
        let cut = dir.path("cut.tsv.zst");
        std::fs::write(&cut, &whole[..whole.len() / 4]).unwrap();
        let (code, v, err) = replay(&["--check-keys", s(&cut), s(&shared(LICHESS_2017))]);
        assert_eq!(code, 1, "{err}");
        assert_eq!(v["games"], 298);
        let k = &v["check_keys"];
        assert!(k["error"].as_str().is_some_and(|e| e.contains("reading stopped")), "{k}");
        let compared = k["compared"].as_u64().unwrap();
        assert!(compared > 0 && compared < 21545, "{compared}");
        assert_eq!(k["mismatched"], 0);
        assert!(err.contains("reading stopped"), "{err}");
    }

    /// A game taken out of the key file and one added past the database's
    /// end: each reported as such, every other position still compared.
    #[test]
    fn check_keys_reports_missing_and_extra_games_and_goes_on() {
        let dir = TempDir::new("corpus-check-keys-games");
        let lines = shared_key_lines();
        let game_100 = lines.iter().filter(|l| l.0 == 100).count() as u64;
        let mut changed: Vec<_> = lines.iter().filter(|l| l.0 != 100).cloned().collect();
        changed.extend(lines.iter().filter(|l| l.0 == 1).map(|(_, p, r)| (299, *p, r.clone())));
        let game_1 = lines.iter().filter(|l| l.0 == 1).count() as u64;
        let path = dir.path("keys.tsv");
        write_key_lines(&path, &changed);
        let errors = dir.path("errors.jsonl");
        let (code, v, err) =
            replay(&["--check-keys", s(&path), "--errors", s(&errors), s(&shared(LICHESS_2017))]);
        assert_eq!(code, 0, "{err}");
        let k = &v["check_keys"];
        assert_eq!(k["missing_games"], 1);
        assert_eq!(k["extra_games"], 1);
        assert_eq!(k["mismatched"], 0);
        assert_eq!(k["compared"].as_u64(), Some(21545 - game_100));
        let e = errors_of(&errors);
        assert_eq!(e.len(), 2, "{e:?}");
        assert_eq!(
            (e[0]["kind"].as_str(), e[0]["game"].as_u64()),
            (Some("missing_game"), Some(100))
        );
        assert_eq!(e[0]["positions"].as_u64(), Some(game_100));
        assert_eq!((e[1]["kind"].as_str(), e[1]["game"].as_u64()), (Some("extra_game"), Some(299)));
        assert_eq!(e[1]["positions"].as_u64(), Some(game_1));
        assert!(err.contains("game 100 at byte ") && err.contains("missing from the key file"));
        // --strict makes the difference an exit code.
        let (code, _, _) =
            replay(&["--strict", "--check-keys", s(&path), s(&shared(LICHESS_2017))]);
        assert_eq!(code, 2);
    }

    /// The 2016-05 games twice over, as one plain file: (its path, games
    /// in one copy).
    pub fn lichess_2016_twice(dir: &TempDir) -> (std::path::PathBuf, u64) {
        let text = zstd::decode_all(
            std::fs::File::open(shared("pgn/lichess/lichess-org_database_2016-05.pgn.zst"))
                .unwrap(),
        )
        .unwrap();
        let path = dir.path("twice.pgn");
        std::fs::write(&path, [&text[..], b"\n", &text[..]].concat()).unwrap();
        (path, 4798)
    }

    /// (game, duplicate of) for each line of a --duplicates file.
    pub fn duplicate_pairs(path: &std::path::Path) -> Vec<(u64, u64)> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                assert_eq!(f.len(), 7, "{l}");
                (f[0].parse().unwrap(), f[3].parse().unwrap())
            })
            .collect()
    }

    /// The 2016-05 games concatenated with themselves: every game of the
    /// second copy is reported once, as a duplicate of an earlier game, and
    /// the only others are the first copy's own duplicates (the same file
    /// alone), whatever the thread count.
    #[test]
    fn duplicates_of_a_file_concatenated_with_itself() {
        let dir = TempDir::new("corpus-duplicates");
        let (twice, n) = lichess_2016_twice(&dir);
        let once = shared("pgn/lichess/lichess-org_database_2016-05.pgn.zst");
        let alone = dir.path("alone.tsv");
        let (code, v, err) = replay(&["--duplicates", s(&alone), s(&once)]);
        assert_eq!(code, 0, "{err}");
        let within = duplicate_pairs(&alone);
        assert_eq!(v["duplicate_games"].as_u64(), Some(within.len() as u64));
        let mut lists = Vec::new();
        for threads in ["1", "2"] {
            let list = dir.path("dups.tsv");
            let (code, v, err) =
                replay(&["--threads", threads, "--duplicates", s(&list), s(&twice)]);
            assert_eq!(code, 0, "{err}");
            assert_eq!(v["games"].as_u64(), Some(2 * n));
            let pairs = duplicate_pairs(&list);
            assert_eq!(v["duplicate_games"].as_u64(), Some(pairs.len() as u64));
            assert!(pairs.iter().all(|&(g, first)| first < g));
            let second: Vec<u64> = pairs.iter().map(|p| p.0).filter(|&g| g > n).collect();
            assert_eq!(second, (n + 1..=2 * n).collect::<Vec<_>>(), "each second-copy game once");
            let first_copy: Vec<(u64, u64)> =
                pairs.iter().copied().filter(|&(g, _)| g <= n).collect();
            assert_eq!(first_copy, within);
            // A game of the second copy duplicates its own first copy, or
            // the game that one duplicates.
            for &(g, first) in pairs.iter().filter(|p| p.0 > n) {
                let own = g - n;
                let expected = within.iter().find(|p| p.0 == own).map_or(own, |p| p.1);
                assert_eq!(first, expected, "game {g}");
            }
            lists.push(std::fs::read(&list).unwrap());
        }
        assert_eq!(lists[0], lists[1]);
    }

    #[test]
    fn multiframe_equals_single_frame_and_threads_agree() {
        let dir = TempDir::new("corpus-frames");
        let mut outputs = Vec::new();
        for (file, threads) in [
            ("pgn/lichess/lichess-org_database_2016-05.pgn.zst", "1"),
            ("pgn/lichess/lichess-org_database_2016-05.pgn.zst", "2"),
            ("pgn/lichess/lichess-org_database_2016-05.pgn.multiframe.zst", "1"),
            ("pgn/lichess/lichess-org_database_2016-05.pgn.multiframe.zst", "2"),
        ] {
            let keys = dir.path("k.tsv");
            let (_, v, _) = replay(&["--threads", threads, "--keys", s(&keys), s(&shared(file))]);
            assert_eq!(counts(&v), (4798, 217481, 0));
            outputs.push(std::fs::read(&keys).unwrap());
        }
        assert!(outputs.windows(2).all(|w| w[0] == w[1]));
    }
}

/// Against Debian's pgn-extract (`/usr/games/pgn-extract`).
#[cfg(feature = "pgn-extract")]
mod pgn_extract {
    use super::*;
    use crate::replay::corpus::{duplicate_pairs, lichess_2016_twice};

    /// The games pgn-extract writes to `out`.
    fn games_in(path: &std::path::Path) -> u64 {
        std::fs::read_to_string(path).unwrap().lines().filter(|l| l.starts_with("[Event ")).count()
            as u64
    }

    /// `--duplicates` finds as many duplicate games as `pgn-extract -D`
    /// drops (its `-d FILE` writes them), on the 2016-05 games concatenated
    /// with themselves and on the file alone.
    #[test]
    fn duplicates_count_as_pgn_extract_counts_them() {
        let dir = TempDir::new("pgn-extract-duplicates");
        let (twice, _) = lichess_2016_twice(&dir);
        let once = dir.path("once.pgn");
        let text = std::fs::read(&twice).unwrap();
        std::fs::write(&once, &text[..text.len() / 2]).unwrap();
        for input in [&twice, &once] {
            let dropped = dir.path("dropped.pgn");
            let kept = dir.path("kept.pgn");
            let status = std::process::Command::new("/usr/games/pgn-extract")
                .args(["-s", "-d", s(&dropped), "-o", s(&kept), s(input)])
                .stderr(Stdio::null())
                .status()
                .expect("run /usr/games/pgn-extract");
            assert!(status.success());
            let list = dir.path("dups.tsv");
            let (code, v, err) = replay(&["--duplicates", s(&list), s(input)]);
            assert_eq!(code, 0, "{err}");
            let ours = duplicate_pairs(&list).len() as u64;
            assert_eq!(ours, games_in(&dropped), "{}", input.display());
            assert_eq!(v["distinct_games"].as_u64(), Some(games_in(&kept)));
        }
    }
}
