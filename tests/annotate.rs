//! `kibitz annotate` end to end: records, determinism, resume after a kill,
//! shards and merge, corrupt blocks, every export format read back by an
//! independent reader.

use std::{
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::Duration,
};

use kibitz::{Position, read_all, walk};
use serde_json::Value;

use crate::util::{TempDir, kibitz, s, sample};

fn annotate(args: &[&str]) -> Value {
    let mut all = vec!["annotate", "--quiet", "--json"];
    all.extend_from_slice(args);
    let (code, out, err) = kibitz(&all);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// The sample repeated `n` times (a longer input).
fn repeated_sample(dir: &TempDir, n: usize) -> PathBuf {
    let text = std::fs::read(sample()).unwrap();
    let path = dir.path(&format!("sample{n}.pgn"));
    std::fs::write(&path, text.repeat(n)).unwrap();
    path
}

#[test]
fn annotate_then_inspect() {
    let dir = TempDir::new("annotate");
    let out = dir.path("s.kbz");
    let v = annotate(&[s(&sample()), "-o", s(&out), "--depth", "4"]);
    assert_eq!(v["games"], 20);
    let labelled = v["labelled"].as_u64().unwrap();
    assert!(labelled > 300, "{v}");
    // The first 8 positions of every game skipped: the fool's mate has only
    // 5 positions (plies 0 to 4), the other 19 games at least 8.
    assert_eq!(v["skipped_opening"], 19 * 8 + 5);
    let (code, text, _) = kibitz(&["inspect", "--json", s(&out)]);
    assert_eq!(code, 0);
    let i: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(i["labels"].as_u64(), Some(labelled));
    assert_eq!(i["games"], 20);
    assert_eq!(i["chains_valid"], 20);
    assert_eq!(i["moves"], 943);
    // Records are independent of the reader: every label's position and
    // best move are legal where the chain says.
    let (_, games) = read_all(&out).unwrap();
    let mut seen = 0;
    {
        for g in &games {
            walk(g, |step| {
                if let Some(l) = step.label {
                    seen += 1;
                    assert!(usize::from(l.ply) >= 8 && !step.pos.in_check());
                    let best = step.best.unwrap();
                    assert!(step.pos.is_legal(best) && !step.pos.is_capture(best));
                }
            })
            .unwrap();
        }
    }
    assert_eq!(seen, labelled);
    // No overwriting without --force.
    let (code, _, err) = kibitz(&["annotate", "-q", s(&sample()), "-o", s(&out), "--depth", "2"]);
    assert_eq!(code, 1);
    assert!(err.contains("exists: use --force"), "{err}");
}

#[test]
fn same_bytes_whatever_the_threads() {
    let dir = TempDir::new("determinism");
    let input = repeated_sample(&dir, 2);
    let mut files = Vec::new();
    for (i, threads) in ["1", "2", "2", "3"].iter().enumerate() {
        let out = dir.path(&format!("t{i}.kbz"));
        annotate(&[s(&input), "-o", s(&out), "--depth", "5", "--threads", threads]);
        files.push(std::fs::read(&out).unwrap());
    }
    assert!(files.windows(2).all(|w| w[0] == w[1]));
}

/// `annotate --verify` checks the games at each level and, finding them
/// sound, writes the same file as without it; an unknown level is refused.
#[test]
fn verify_levels_check_and_change_nothing() {
    let dir = TempDir::new("annotate-verify");
    let mut files = Vec::new();
    for level in ["none", "keys", "full", "undo"] {
        let out = dir.path(&format!("{level}.kbz"));
        let v = annotate(&[s(&sample()), "-o", s(&out), "--depth", "3", "--verify", level]);
        assert_eq!(v["rejected"], 0, "{level}");
        files.push(std::fs::read(&out).unwrap());
    }
    assert!(files.windows(2).all(|w| w[0] == w[1]));
    let out = dir.path("bad.kbz");
    let (code, _, err) =
        kibitz(&["annotate", s(&sample()), "-o", s(&out), "--verify", "everything"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--verify"), "{err}");
}

#[test]
fn resume_after_sigkill_gives_the_same_file() {
    let dir = TempDir::new("resume");
    let input = repeated_sample(&dir, 8);
    let reference = dir.path("reference.kbz");
    annotate(&[s(&input), "-o", s(&reference), "--depth", "6", "--block-games", "16"]);
    let expected = std::fs::read(&reference).unwrap();
    let mut interrupted_at_least_once = false;
    for (i, ms) in [150u64, 600, 1500].into_iter().enumerate() {
        let out = dir.path(&format!("killed{i}.kbz"));
        let mut child = crate::util::kibitz_command()
            .args([
                "annotate",
                "--quiet",
                s(&input),
                "-o",
                s(&out),
                "--depth",
                "6",
                "--block-games",
                "16",
            ])
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(ms));
        let finished = child.try_wait().unwrap().is_some();
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        // A run killed before it read its first game leaves no file (its
        // output is made aside until then): resuming starts afresh.
        let partial = std::fs::read(&out).unwrap_or_default();
        if !finished && partial.len() < expected.len() {
            interrupted_at_least_once = true;
        }
        // Cut the file mid-frame too, as a power loss could.
        if partial.len() > 200 && i == 1 {
            std::fs::write(&out, &partial[..partial.len() - 37]).unwrap();
        }
        annotate(&[s(&input), "-o", s(&out), "--depth", "6", "--block-games", "16", "--resume"]);
        assert_eq!(std::fs::read(&out).unwrap(), expected, "resume after {ms} ms");
    }
    assert!(
        interrupted_at_least_once,
        "every run finished before it was killed: nothing was tested"
    );
}

#[test]
fn sigint_closes_the_file_cleanly() {
    let dir = TempDir::new("sigint");
    let input = repeated_sample(&dir, 8);
    let out = dir.path("int.kbz");
    let child = crate::util::kibitz_command()
        .args([
            "annotate",
            "--quiet",
            s(&input),
            "-o",
            s(&out),
            "--depth",
            "7",
            "--block-games",
            "16",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let status = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let (code, inspected, err) = kibitz(&["inspect", s(&out)]);
    if output.status.code() == Some(130) {
        assert!(stdout.contains("continue with --resume"), "{stdout}");
        // Whole blocks, every checksum good, and no end marker: inspect
        // says the file is incomplete (exit 1) instead of passing it off
        // as a finished run.
        assert_eq!(code, 1, "{err}");
        assert!(inspected.contains("every checksum verified; NO END MARKER"), "{inspected}");
        assert!(err.contains("incomplete: no end marker"), "{err}");
        annotate(&[s(&input), "-o", s(&out), "--depth", "7", "--block-games", "16", "--resume"]);
    }
    let (code, _, err) = kibitz(&["inspect", s(&out)]);
    assert_eq!(code, 0, "{err}");
    let resumed = std::fs::read(&out).unwrap();
    let whole = dir.path("whole.kbz");
    annotate(&[s(&input), "-o", s(&whole), "--depth", "7", "--block-games", "16"]);
    assert_eq!(resumed, std::fs::read(&whole).unwrap());
}

#[test]
fn a_corrupt_block_is_named_by_its_offset() {
    let dir = TempDir::new("corrupt");
    let input = repeated_sample(&dir, 30);
    let out = dir.path("c.kbz");
    annotate(&[
        s(&input),
        "-o",
        s(&out),
        "--label",
        "search",
        "--depth",
        "1",
        "--block-games",
        "64",
    ]);
    let (_, json, _) = kibitz(&["inspect", "--json", s(&out)]);
    let v: Value = serde_json::from_str(&json).unwrap();
    assert!(v["blocks"].as_u64().unwrap() >= 2, "{v}");
    // Find the second block's offset by walking the frames.
    let mut bytes = std::fs::read(&out).unwrap();
    let header_end = kibitz::zstd_frame_end(&bytes, 0).unwrap();
    let first_end = kibitz::zstd_frame_end(&bytes, header_end).unwrap();
    let second_end = kibitz::zstd_frame_end(&bytes, first_end).unwrap();
    let middle = (first_end + second_end) / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(&out, &bytes).unwrap();
    let (code, _, err) = kibitz(&["inspect", s(&out)]);
    assert_eq!(code, 1);
    assert!(err.contains(&format!("at byte {first_end}")), "{err}");
}

#[test]
fn shards_merge_into_the_unsharded_file() {
    let dir = TempDir::new("shards");
    let input = repeated_sample(&dir, 3);
    for extra in [&[][..], &["--dedup"][..]] {
        let whole = dir.path("whole.kbz");
        let mut args =
            vec![s(&input), "-o", s(&whole), "--depth", "3", "--force", "--block-games", "8"];
        args.extend_from_slice(extra);
        annotate(&args);
        let mut shards = Vec::new();
        for k in 0..3 {
            let out = dir.path(&format!("shard{k}.kbz"));
            let shard = format!("{k}/3");
            let mut args = vec![
                s(&input),
                "-o",
                s(&out),
                "--depth",
                "3",
                "--force",
                "--shard",
                &shard,
                "--block-games",
                "8",
            ];
            args.extend_from_slice(extra);
            annotate(&args);
            shards.push(out);
        }
        let merged = dir.path("merged.kbz");
        let _ = std::fs::remove_file(&merged);
        let (code, _, err) =
            kibitz(&["merge", s(&shards[2]), s(&shards[0]), s(&shards[1]), "-o", s(&merged)]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(std::fs::read(&merged).unwrap(), std::fs::read(&whole).unwrap(), "{extra:?}");
        // A missing shard is refused.
        let (code, _, err) =
            kibitz(&["merge", s(&shards[0]), s(&shards[1]), "-o", s(&dir.path("x.kbz"))]);
        assert_eq!(code, 1);
        assert!(err.contains("2 shards of 3"), "{err}");
    }
}

#[test]
fn exports_read_back() {
    let dir = TempDir::new("exports");
    let kbz = dir.path("e.kbz");
    let v = annotate(&[s(&sample()), "-o", s(&kbz), "--depth", "4"]);
    let labelled = v["labelled"].as_u64().unwrap();

    // PGN: the same games, move for move, with one eval per label.
    let pgn = dir.path("e.pgn");
    let (code, _, _) = kibitz(&["export", s(&kbz), "--format", "pgn", "-o", s(&pgn)]);
    assert_eq!(code, 0);
    let text = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(text.matches("[%eval ").count() as u64, labelled);
    let (_, replayed, _) = kibitz(&["replay", "--json", "-q", s(&pgn)]);
    let r: Value = serde_json::from_str(&replayed).unwrap();
    assert_eq!(
        (r["games"].as_u64(), r["plies"].as_u64(), r["rejected_games"].as_u64()),
        (Some(20), Some(943), Some(0))
    );
    let original_keys = dir.path("k1.tsv");
    let exported_keys = dir.path("k2.tsv");
    kibitz(&["replay", "-q", "--keys", s(&original_keys), s(&sample())]);
    kibitz(&["replay", "-q", "--keys", s(&exported_keys), s(&pgn)]);
    assert_eq!(std::fs::read(&original_keys).unwrap(), std::fs::read(&exported_keys).unwrap());

    // plain: every entry's FEN reads and its move is legal (shakmaty).
    let plain = dir.path("e.plain");
    kibitz(&["export", s(&kbz), "--format", "plain", "-o", s(&plain)]);
    let text = std::fs::read_to_string(&plain).unwrap();
    let entries: Vec<&str> = text.split("e\n").filter(|e| !e.is_empty()).collect();
    assert_eq!(entries.len() as u64, labelled);
    for e in &entries {
        let fen = e.lines().find_map(|l| l.strip_prefix("fen ")).unwrap();
        let mv = e.lines().find_map(|l| l.strip_prefix("move ")).unwrap();
        let pos: shakmaty::Chess = fen
            .parse::<shakmaty::fen::Fen>()
            .unwrap()
            .into_position(shakmaty::CastlingMode::Standard)
            .unwrap();
        let uci: shakmaty::uci::UciMove = mv.parse().unwrap();
        assert!(uci.to_move(&pos).is_ok(), "{fen} {mv}");
    }

    // EPD and JSON lines: one record per label.
    for (format, check) in [("epd", "ce "), ("jsonl", "\"fen\"")] {
        let path = dir.path(&format!("e.{format}"));
        kibitz(&["export", s(&kbz), "--format", format, "-o", s(&path)]);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count() as u64, labelled, "{format}");
        assert!(text.lines().all(|l| l.contains(check) || l.contains("dm ")), "{format}");
    }

    // bullet: the loader of the bulletformat crate reads every board.
    let bullet = dir.path("e.bullet");
    kibitz(&["export", s(&kbz), "--format", "bullet", "-o", s(&bullet)]);
    let loader = bulletformat::DataLoader::<bulletformat::ChessBoard>::new(&bullet, 1).unwrap();
    assert_eq!(loader.len() as u64, labelled);
    let mut read = 0;
    bulletformat::DataLoader::<bulletformat::ChessBoard>::new(&bullet, 1).unwrap().map_batches(
        64,
        |batch| {
            read += batch.len();
        },
    );
    assert_eq!(read as u64, labelled);

    // binpack: Stockfish's format, read back with the sfbinpack crate.
    let binpack = dir.path("e.binpack");
    kibitz(&["export", s(&kbz), "--format", "binpack", "-o", s(&binpack)]);
    let file = std::fs::File::open(&binpack).unwrap();
    let mut reader = sfbinpack::CompressedTrainingDataEntryReader::new(file).unwrap();
    let mut entries = Vec::new();
    while reader.has_next() {
        entries.push(reader.next());
    }
    // Labelled positions with a move to store (all but those at a game's end).
    assert!(
        entries.len() as u64 <= labelled && entries.len() as u64 >= labelled - 20,
        "{}",
        entries.len()
    );
    for e in &entries {
        let fen = e.pos.fen().unwrap();
        assert!(Position::from_fen(&fen).is_ok(), "{fen}");
    }
}

#[test]
fn pgn_eval_labels_and_epd_input() {
    let dir = TempDir::new("pgneval");
    let pgn = dir.path("evals.pgn");
    std::fs::write(
        &pgn,
        "[Event \"e\"]\n[Result \"1-0\"]\n\n1. e4 { [%eval 0.25] } 1... e5 { [%eval 0.3] } 2. Qh5 { [%eval -0.1] } \
         2... Nc6 { [%eval #3] } 3. Bc4 { [%eval #-2] } 3... Nf6 4. Qxf7# 1-0\n",
    )
    .unwrap();
    let out = dir.path("e.kbz");
    let v = annotate(&[
        s(&pgn),
        "-o",
        s(&out),
        "--label",
        "pgn-eval",
        "--skip-plies",
        "0",
        "--skip-captures",
        "false",
    ]);
    assert_eq!(v["searched"], 0);
    let (_, games) = read_all(&out).unwrap();
    let labels = games[0].labels();
    // Plies 1 to 5 carry the evals of the moves that reached them, from the
    // side to move; ply 0 and ply 6 (no comment) have none, ply 7 is mate.
    let got: Vec<(u16, i16, u8)> = labels.iter().map(|l| (l.ply, l.score, l.best)).collect();
    let m3 = kibitz::mate_in(3) as i16;
    let m2 = kibitz::mate_in(2) as i16;
    assert_eq!(got, vec![(1, -25, 255), (2, 30, 255), (3, 10, 255), (4, m3, 255), (5, m2, 255)]);

    let epd = dir.path("p.epd");
    std::fs::write(
        &epd,
        "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - bm Ra8#;\nrnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - id \"start\";\n",
    )
    .unwrap();
    let out = dir.path("p.kbz");
    let v = annotate(&[s(&epd), "-o", s(&out), "--depth", "4", "--skip-captures", "false"]);
    assert_eq!((v["games"].as_u64(), v["labelled"].as_u64()), (Some(2), Some(2)));
    let (_, games) = read_all(&out).unwrap();
    let first = &games[0];
    assert!(first.moves.is_empty());
    assert_eq!(first.labels()[0].score, kibitz::mate_in(1) as i16);
}

#[test]
fn selection_limits() {
    let dir = TempDir::new("limits");
    let out = dir.path("l.kbz");
    let v = annotate(&[s(&sample()), "-o", s(&out), "--depth", "2", "--max-positions", "50"]);
    assert_eq!(v["labelled"], 50);
    let v = annotate(&[s(&sample()), "-o", s(&out), "--depth", "2", "--max-games", "3", "--force"]);
    assert_eq!(v["games"], 3);
    let all = annotate(&[s(&sample()), "-o", s(&out), "--depth", "2", "--force"]);
    let half = annotate(&[
        s(&sample()),
        "-o",
        s(&out),
        "--depth",
        "2",
        "--sample",
        "0.5",
        "--seed",
        "7",
        "--force",
    ]);
    let (a, h) = (all["labelled"].as_u64().unwrap(), half["labelled"].as_u64().unwrap());
    assert!(h > a / 4 && h < a * 3 / 4, "{h} of {a}");
    let doubled = repeated_sample(&dir, 2);
    let dedup = annotate(&[s(&doubled), "-o", s(&out), "--depth", "2", "--dedup", "--force"]);
    assert_eq!(dedup["labelled"].as_u64(), Some(a));
    assert_eq!(dedup["skipped_duplicate"].as_u64(), Some(a));
}

/// Three games: a good one, one with an impossible start (no kings), one
/// with an illegal third move (Ke3), at bytes 0, 41 and 114.
const BAD_GAMES: &str = "[Event \"good\"]\n\n1. e4 e5 2. Nf3 Nc6 1-0\n\n\
         [Event \"badfen\"]\n[FEN \"8/8/8/8/8/8/8/8 w - - 0 1\"]\n[SetUp \"1\"]\n\n1. e4 *\n\n\
         [Event \"illegal\"]\n\n1. e4 e5 2. Ke3 Nc6 *\n";

/// Each rejected game is named (file, game number, byte offset, ply, move,
/// why) on standard error and, with `--errors`, as a JSON line; replay
/// names them on standard error the same way.
#[test]
fn rejected_games_are_located() {
    let dir = TempDir::new("annotate-rejects");
    let input = dir.path("bad.pgn");
    std::fs::write(&input, BAD_GAMES).unwrap();
    let out = dir.path("bad.kbz");
    let errors = dir.path("errors.jsonl");
    let (code, _, err) = kibitz(&[
        "annotate",
        "--quiet",
        "--depth",
        "1",
        s(&input),
        "-o",
        s(&out),
        "--errors",
        s(&errors),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("bad.pgn: game 2 at byte 41, ply 0: bad_position"), "{err}");
    assert!(err.contains("bad.pgn: game 3 at byte 114, ply 3 (Ke3): illegal_move"), "{err}");
    let lines: Vec<Value> = std::fs::read_to_string(&errors)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[1]["game"], 3);
    assert_eq!(lines[1]["offset"], 114);
    assert_eq!(lines[1]["ply"], 3);
    assert_eq!(lines[1]["san"], "Ke3");
    assert_eq!(lines[1]["event"], "illegal");

    let (code, _, err) = kibitz(&["replay", "--quiet", s(&input)]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("bad.pgn: game 3 at byte 114, ply 3 (Ke3): illegal_move"), "{err}");
    // --errors onto a pipe (here standard error, captured by the test): it
    // is written, not read back or emptied (which a pipe cannot be).
    let (code, _, err) = kibitz(&["replay", "--quiet", s(&input), "--errors", "/dev/stderr"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("\"san\":\"Ke3\""), "{err}");

    // Game numbers count within each file, whatever the threads.
    let second = dir.path("bad2.pgn");
    std::fs::copy(&input, &second).unwrap();
    let out2 = dir.path("two.kbz");
    let (code, _, err) = kibitz(&[
        "annotate",
        "--quiet",
        "--depth",
        "1",
        "-j",
        "2",
        s(&input),
        s(&second),
        "-o",
        s(&out2),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("bad.pgn: game 3 at byte 114, ply 3 (Ke3)"), "{err}");
    assert!(err.contains("bad2.pgn: game 3 at byte 114, ply 3 (Ke3)"), "{err}");
}

/// When --max-positions fills up, the games after the one that filled it
/// (in the same chunk) are not written, so their rejections are not
/// reported and the summary does not count them; the same when a resumed
/// file is full already.
#[test]
fn rejections_past_max_positions_are_not_reported() {
    let dir = TempDir::new("annotate-max-rejects");
    let input = dir.path("bad.pgn");
    std::fs::write(&input, format!("{BAD_GAMES}\n[Event \"good2\"]\n\n1. d4 d5 *\n")).unwrap();
    let out = dir.path("max.kbz");
    let errors = dir.path("errors.jsonl");
    // Returns the summary's games and rejections, the --errors lines and
    // standard error; `resume` goes on from the output as it is.
    let run = |max: &str, resume: bool| {
        if !resume {
            let _ = std::fs::remove_file(&out);
        }
        let mut args = vec![
            "annotate",
            "--json",
            "--depth",
            "1",
            "--skip-plies",
            "0",
            "--max-positions",
            max,
            s(&input),
            "-o",
            s(&out),
            "--errors",
            s(&errors),
        ];
        if resume {
            args.push("--resume");
        }
        let (code, stdout, err) = kibitz(&args);
        assert_eq!(code, 0, "{err}");
        let v: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
        let lines = std::fs::read_to_string(&errors).unwrap().lines().count();
        (v["games"].as_u64(), v["rejected"].as_u64(), lines, err)
    };
    // The first game fills one position: nothing after it is reported.
    let (games, rejected, lines, err) = run("1", false);
    assert_eq!((games, rejected, lines), (Some(1), Some(0), 0), "{err}");
    assert!(!err.contains("bad_position") && !err.contains("illegal_move"), "{err}");
    // Without the limit filling up, all games and both rejections.
    let (games, rejected, lines, err) = run("100", false);
    assert_eq!((games, rejected, lines), (Some(3), Some(2), 2), "{err}");

    // A file already full but not closed (interrupted after the block that
    // filled it): resuming writes the end and reports nothing past it.
    let _ = run("1", false);
    let whole = std::fs::read(&out).unwrap();
    let ends = crate::faults::frame_ends(&whole);
    assert_eq!(ends.len(), 3, "header, one block, end marker");
    std::fs::write(&out, &whole[..ends[1]]).unwrap();
    let (games, rejected, lines, err) = run("1", true);
    assert_eq!((games, rejected, lines), (Some(0), Some(0), 0), "{err}");
    assert!(!err.contains("bad_position") && !err.contains("illegal_move"), "{err}");
    assert!(std::fs::read(&out).unwrap() == whole, "the resumed file differs");
}

/// A resumed run keeps the rejections reported before its resume point and
/// reports the rest: its --errors file equals an uninterrupted run's (it
/// was once emptied, losing the games before the resume point).
#[test]
fn resume_keeps_the_errors_before_the_resume_point() {
    let dir = TempDir::new("annotate-resume-errors");
    let input = dir.path("bad.pgn");
    std::fs::write(&input, format!("{BAD_GAMES}\n").repeat(8)).unwrap();
    let run = |out: &Path, errors: &Path, resume: bool| {
        let mut args = vec![
            "annotate",
            "--quiet",
            "--depth",
            "1",
            "--block-games",
            "2",
            "-j",
            "1",
            s(&input),
            "-o",
            s(out),
            "--errors",
            s(errors),
        ];
        if resume {
            args.push("--resume");
        }
        let (code, _, err) = kibitz(&args);
        assert_eq!(code, 0, "{err}");
    };
    let whole = dir.path("whole.kbz");
    let whole_errors = dir.path("whole.jsonl");
    run(&whole, &whole_errors, false);
    let expected = std::fs::read(&whole_errors).unwrap();
    assert_eq!(expected.iter().filter(|&&b| b == b'\n').count(), 16, "two rejected per repeat");
    // Cut the output after its fourth block (eight games) and resume, with
    // the errors file as the killed run left it (every line written).
    let bytes = std::fs::read(&whole).unwrap();
    let ends = crate::faults::frame_ends(&bytes);
    let cut = dir.path("cut.kbz");
    let cut_errors = dir.path("cut.jsonl");
    std::fs::write(&cut, &bytes[..ends[4]]).unwrap();
    std::fs::write(&cut_errors, &expected).unwrap();
    run(&cut, &cut_errors, true);
    assert_eq!(std::fs::read(&cut).unwrap(), bytes);
    assert_eq!(
        String::from_utf8(std::fs::read(&cut_errors).unwrap()).unwrap(),
        String::from_utf8(expected).unwrap()
    );
}

/// Files of earlier format versions still read: version 1 (before the
/// header recorded the net, `tests/data/format-v1.kbz`), version 2
/// (before labels kept variations, `tests/data/format-v2.kbz`) and version
/// 3 (before games kept their ratings, `tests/data/format-v3.kbz`), 4
/// (before games kept how they ended) and 5 (before labels had flags;
/// `kibitz merge` of the version 4 file by the kibitz that wrote version
/// 5), each the sample's first 3 games at depth 2. inspect verifies them, their export equals
/// `tests/data/format-old.jsonl` (the export of that run when it was
/// written: the search has changed since, so a run today labels some
/// positions differently), its positions are among those of the same run
/// today, and a merge writes the current version.
#[test]
fn files_of_earlier_format_versions_still_read() {
    let dir = TempDir::new("format-old");
    let now = dir.path("now.kbz");
    let (code, _, err) = kibitz(&[
        "annotate",
        s(&sample()),
        "-o",
        s(&now),
        "--quiet",
        "--depth",
        "2",
        "--max-games",
        "3",
        "--eval",
        "hand-written",
    ]);
    assert_eq!(code, 0, "{err}");
    let (_, out, _) = kibitz(&["inspect", s(&now)]);
    assert!(out.contains("format    kbz version 7") && out.contains("eval      hand-written"));
    // Today's run without the capture filter (which depends on the label),
    // for the positions.
    let every = dir.path("every.kbz");
    let (code, _, err) = kibitz(&[
        "annotate",
        s(&sample()),
        "-o",
        s(&every),
        "--quiet",
        "--depth",
        "2",
        "--max-games",
        "3",
        "--skip-captures",
        "false",
        "--eval",
        "hand-written",
    ]);
    assert_eq!(code, 0, "{err}");
    let export = |f: &Path| kibitz(&["export", s(f), "--format", "jsonl"]).1;
    let written = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/format-old.jsonl"),
    )
    .unwrap();
    // The positions: every field but the label's.
    let positions = |jsonl: &str| -> Vec<(String, String, String)> {
        let field = |line: &str, key: &str| {
            let at = line.find(&format!("\"{key}\":")).unwrap_or_else(|| panic!("{key}: {line}"));
            line[at..].split([',', '}']).next().unwrap().to_string()
        };
        jsonl.lines().map(|l| (field(l, "fen"), field(l, "ply"), field(l, "played"))).collect()
    };
    let today = positions(&export(&every));
    let then = positions(&written);
    assert!(then.len() > 50 && then.iter().all(|p| today.contains(p)), "{then:?}");
    for version in [1, 2, 3, 4, 5] {
        let name = format!("format-v{version}.kbz");
        let old = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(&name);
        let (code, out, err) = kibitz(&["inspect", s(&old)]);
        assert_eq!(code, 0, "{name}: {err}");
        assert!(out.contains(&format!("format    kbz version {version}")), "{out}");
        assert_eq!(export(&old), written, "{name}");
        let merged = dir.path(&format!("merged-{version}.kbz"));
        let (code, _, err) = kibitz(&["merge", s(&old), "-o", s(&merged)]);
        assert_eq!(code, 0, "{err}");
        assert!(kibitz(&["inspect", s(&merged)]).1.contains("format    kbz version 7"));
        assert_eq!(export(&merged), written, "{name}");
    }
}

/// `--preset analysis` labels every position that has a move, each with a
/// variation that starts with its best move and plays legally from it.
#[test]
fn the_analysis_preset_labels_every_position_with_a_variation() {
    let dir = TempDir::new("preset-analysis");
    let out = dir.path("analysis.kbz");
    let (code, _, err) = kibitz(&[
        "annotate",
        s(&sample()),
        "-o",
        s(&out),
        "--quiet",
        "--preset",
        "analysis",
        "--depth",
        "4",
        "--max-games",
        "4",
    ]);
    assert_eq!(code, 0, "{err}");
    let (header, games) = read_all(&out).unwrap();
    assert_eq!(header.options.pv_plies, 12);
    assert_eq!(header.options.skip_plies, 0);
    let mut longest = 0;
    for g in &games {
        let start = kibitz::PackedBoard::unpack(&g.start).unwrap();
        let mut pos = start.clone();
        let mut labels = g.labels().iter().peekable();
        for ply in 0..=g.moves.len() {
            let has_moves = pos.has_legal_moves();
            match labels.next_if(|l| usize::from(l.ply) == ply) {
                Some(l) => {
                    let pv = l.pv.moves(&pos);
                    assert_eq!(pv.len(), l.pv.indices().len(), "game {} ply {ply}", g.index);
                    assert!(!pv.is_empty());
                    assert_eq!(kibitz::move_index(&pos, pv[0]), Some(l.best));
                    longest = longest.max(pv.len());
                }
                None => assert!(!has_moves, "game {} ply {ply} unlabelled", g.index),
            }
            if let Some(&m) = g.moves.get(ply) {
                let m = kibitz::move_at(&pos, m).unwrap();
                pos.do_move(m);
            }
        }
    }
    assert!(longest >= 4, "variations of at most {longest} plies at depth 4");
    // The preset cannot be mixed with the filters it sets.
    let (code, _, err) = kibitz(&[
        "annotate",
        s(&sample()),
        "-o",
        s(&dir.path("x.kbz")),
        "--preset",
        "analysis",
        "--skip-plies",
        "4",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--skip-plies"), "{err}");
}

/// The game filters count, on the shared Lichess files, what python-chess
/// counts reading the same tags (`scripts/game_filters.py`): per filter,
/// the games it left out and those without its tag, and the games kept.
#[cfg(feature = "python-chess")]
#[test]
fn game_filters_count_as_python_chess_does() {
    let dir = TempDir::new("game-filters");
    let files = [
        "pgn/lichess/lichess-org_database_2016-05.pgn.zst",
        "pgn/lichess/lichess-org_database_2017-05.pgn.zst",
        "pgn/lichess/lichess_api_export_AlPhA_ZeRo_1925_2026-04-19.pgn",
    ];
    let filters: [&[&str]; 4] = [
        &[
            "--min-elo",
            "1500",
            "--max-elo",
            "2000",
            "--speed",
            "blitz,rapid",
            "--date-from",
            "2016-05-01",
            "--date-to",
            "2017-05-31",
            "--termination",
            "normal",
            "--result",
            "1-0,0-1",
        ],
        &["--min-avg-elo", "1600", "--max-avg-elo", "1900", "--speed", "bullet"],
        &["--speed", "classical,correspondence,ultrabullet", "--result", "1/2-1/2"],
        &["--date-to", "2017-05-15", "--termination", "time forfeit,abandoned"],
    ];
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/game_filters.py");
    let out = dir.path("f.kbz");
    // The sample's old games lack ratings, clocks and terminations, and
    // some have partial dates: the counts of games without the tag.
    let inputs = files.map(crate::util::shared).into_iter().chain([sample()]);
    for input in inputs {
        let file = input.display().to_string();
        for args in filters {
            let mut command = vec!["annotate", s(&input), "-o", s(&out), "--force", "--quiet"];
            command.extend(["--json", "--label", "pgn-eval"]);
            command.extend(args);
            let (code, stdout, err) = kibitz(&command);
            assert_eq!(code, 0, "{err}");
            let ours: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            let python = std::process::Command::new("python3")
                .arg(&script)
                .arg(&input)
                .args(args)
                .output()
                .unwrap();
            assert!(python.status.success(), "{}", String::from_utf8_lossy(&python.stderr));
            let theirs: serde_json::Value = serde_json::from_slice(&python.stdout).unwrap();
            let what = format!("{file} {args:?}");
            assert_eq!(ours["games_read"], theirs["games"], "{what}");
            assert_eq!(ours["games"], theirs["kept"], "{what}");
            assert_eq!(ours["filtered"], theirs["filtered"], "{what}");
            assert_eq!(ours["filtered_no_tag"], theirs["filtered_no_tag"], "{what}");
            let left_out = |v: &serde_json::Value| -> u64 {
                v.as_object().unwrap().values().map(|n| n.as_u64().unwrap()).sum()
            };
            println!(
                "{what}: {} kept, {} filtered, {} without the tag",
                ours["games"],
                left_out(&ours["filtered"]),
                left_out(&ours["filtered_no_tag"])
            );
        }
    }
}

/// `--multipv 3` with the built-in search: each label keeps its best move
/// and score first, then two more moves, legal and distinct, in jsonl and
/// EPD; the same bytes on 1 and 2 threads. (The extra lines' searches fill
/// the table and history the next position's search reads, as Stockfish's
/// MultiPV does, so later labels may differ from a single-line run's.)
#[test]
fn multipv_keeps_the_best_line_and_adds_two() {
    let dir = TempDir::new("multipv");
    let one = dir.path("one.kbz");
    let three = dir.path("three.kbz");
    for (out, j) in [(&one, "1"), (&three, "2")] {
        let (code, _, err) = kibitz(&[
            "annotate",
            s(&sample()),
            "-o",
            s(out),
            "--quiet",
            "--depth",
            "4",
            "--max-games",
            "5",
            "--multipv",
            "3",
            "-j",
            j,
        ]);
        assert_eq!(code, 0, "{err}");
    }
    assert_eq!(std::fs::read(&one).unwrap(), std::fs::read(&three).unwrap());
    let export = |f: &Path, format: &str| kibitz(&["export", s(f), "--format", format]).1;
    let mut lines = 0;
    for line in export(&three, "jsonl").lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let pos = kibitz::Position::from_fen(v["fen"].as_str().unwrap()).unwrap();
        let multipv = v["multipv"].as_array().expect(line);
        assert_eq!(multipv.len(), 3.min(pos.legal_moves().len()), "{line}");
        assert_eq!(multipv[0]["move"], v["best"]);
        assert_eq!(multipv[0]["score"], v["score"]);
        let moves: std::collections::BTreeSet<&str> =
            multipv.iter().map(|l| l["move"].as_str().unwrap()).collect();
        assert_eq!(moves.len(), multipv.len(), "distinct: {line}");
        for m in &moves {
            assert!(pos.parse_uci(m).is_ok_and(|m| pos.is_legal(m)), "{m}: {line}");
        }
        lines += 1;
    }
    assert!(lines > 50, "{lines}");
    assert!(export(&three, "epd").contains("c0 \"multipv "));
    let (_, out, _) = kibitz(&["inspect", s(&three)]);
    assert!(out.contains("multipv   3 best moves per position"), "{out}");
    let (code, _, err) = kibitz(&[
        "annotate",
        s(&sample()),
        "-o",
        s(&dir.path("x.kbz")),
        "--label",
        "pgn-eval",
        "--multipv",
        "2",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("--multipv needs a search"), "{err}");
}
