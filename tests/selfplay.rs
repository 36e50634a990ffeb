//! `kibitz selfplay`: games that replay legally from their openings and end
//! as recorded; the same bytes whatever the threads, after a kill and a
//! resume, and from shards merged; an engine that crashes does not stop the
//! run; the viriformat export read back by the `viriformat` crate.

use std::{io::BufReader, path::Path, process::Stdio, time::Duration};

use kibitz::{Ending, check_ending, read_all, walk};

use crate::util::{TempDir, kibitz, s};

/// Runs `kibitz selfplay ARGS -o OUT --quiet`, asserting success.
fn selfplay(out: &Path, args: &[&str]) {
    let mut all = vec!["selfplay", "-o", s(out), "--quiet", "--force"];
    all.extend_from_slice(args);
    let (code, out_text, err) = kibitz(&all);
    assert_eq!(code, 0, "selfplay {args:?}: {err}{out_text}");
}

const QUICK: [&str; 6] = ["--games", "40", "--depth", "4", "--block-games", "8"];

/// Every game replays from its start, its ending agrees with its final
/// position (a board ending) or is an adjudication with a fitting result,
/// and its moves after the random plies are its labels' best moves.
#[test]
fn games_replay_and_end_as_recorded() {
    let dir = TempDir::new("selfplay-games");
    let out = dir.path("games.kbz");
    selfplay(&out, &["--games", "60", "--depth", "3", "--random-plies", "6", "-j", "2"]);
    let (header, games) = read_all(&out).unwrap();
    assert_eq!(games.len(), 60);
    let rules = header.options.selfplay.expect("the header records the self-play options");
    assert_eq!((rules.random_plies, rules.resign_score, rules.games), (6, 2000, 60));
    let mut endings = std::collections::BTreeSet::new();
    for g in &games {
        check_ending(g).unwrap_or_else(|e| panic!("game {}: {e}", g.index));
        assert_ne!(g.ending, Ending::Unknown);
        endings.insert(g.ending);
        let mut labelled = 0;
        walk(g, |step| match step.label {
            None => assert!(step.ply < 6 || step.played.is_none(), "ply {} unlabelled", step.ply),
            Some(_) => {
                labelled += 1;
                assert_eq!(step.best, step.played, "game {} ply {}", g.index, step.ply);
            }
        })
        .unwrap();
        assert_eq!(labelled, g.labels.len());
    }
    assert!(endings.len() >= 2, "60 games end in more than one way: {endings:?}");
}

/// The same seed gives the same file with one thread and two, and a
/// sharded run's shards merged give the unsharded run's file.
#[test]
fn threads_and_shards_give_the_same_file() {
    let dir = TempDir::new("selfplay-same");
    let one = dir.path("one.kbz");
    let two = dir.path("two.kbz");
    selfplay(&one, &[&QUICK[..], &["-j", "1"]].concat());
    selfplay(&two, &[&QUICK[..], &["-j", "2"]].concat());
    let expected = std::fs::read(&one).unwrap();
    assert_eq!(std::fs::read(&two).unwrap(), expected, "1 and 2 threads");
    let shards: Vec<String> =
        (0..3).map(|k| s(&dir.path(&format!("shard{k}.kbz"))).to_string()).collect();
    for (k, shard) in shards.iter().enumerate() {
        let spec = format!("{k}/3");
        selfplay(Path::new(shard), &[&QUICK[..], &["--shard", &spec]].concat());
    }
    let merged = dir.path("merged.kbz");
    let mut args = vec!["merge"];
    args.extend(shards.iter().map(String::as_str));
    args.extend(["-o", s(&merged)]);
    let (code, _, err) = kibitz(&args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(&merged).unwrap(), expected, "3 shards merged");
    let other_seed = dir.path("seed.kbz");
    selfplay(&other_seed, &[&QUICK[..], &["--seed", "1"]].concat());
    assert_ne!(std::fs::read(&other_seed).unwrap(), expected, "another seed, other games");
}

/// Killed (SIGKILL) part way, then resumed: the bytes of an uninterrupted
/// run, whichever moment the kill came at.
#[test]
fn a_killed_run_resumes_to_the_same_bytes() {
    let dir = TempDir::new("selfplay-resume");
    let args = ["--games", "120", "--depth", "5", "--block-games", "8", "-j", "2"];
    let reference = dir.path("reference.kbz");
    selfplay(&reference, &args);
    let expected = std::fs::read(&reference).unwrap();
    let mut interrupted = false;
    for (i, ms) in [300u64, 900].into_iter().enumerate() {
        let out = dir.path(&format!("killed{i}.kbz"));
        let mut child = crate::util::kibitz_command()
            .args(["selfplay", "-o", s(&out), "--quiet"])
            .args(args)
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(ms));
        let finished = child.try_wait().unwrap().is_some();
        child.kill().unwrap();
        child.wait().unwrap();
        let partial = std::fs::read(&out).unwrap_or_default();
        interrupted |= !finished && partial.len() < expected.len();
        let (code, _, err) =
            kibitz(&[&["selfplay", "-o", s(&out), "--quiet", "--resume"][..], &args].concat());
        assert_eq!(code, 0, "{err}");
        assert_eq!(std::fs::read(&out).unwrap(), expected, "resumed after {ms} ms");
    }
    assert!(interrupted, "every run finished before its kill: nothing was tested");
}

/// An engine that crashes is restarted and the position tried again; a
/// position that fails twice leaves its game out; the run goes on and
/// says so. (The engine is kibitz's own UCI behind a script that fails on
/// the `go` commands named.)
#[test]
fn a_crashing_engine_does_not_stop_the_run() {
    let dir = TempDir::new("selfplay-crash");
    let out = dir.path("crash.kbz");
    let engine = format!("{}/tests/data/fake_engine.sh", env!("CARGO_MANIFEST_DIR"));
    let state = dir.path("state");
    std::fs::create_dir_all(&state).unwrap();
    let kibitz_bin = env!("CARGO_BIN_EXE_kibitz");
    let env = [
        ("FAKE_ENGINE_KIBITZ", kibitz_bin),
        ("FAKE_ENGINE_STATE", s(&state)),
        ("FAKE_ENGINE_PLAN", "7:crash 40:crash 41:crash"),
    ];
    let (code, text, err) = crate::util::kibitz_env(
        &[
            "selfplay",
            "-o",
            s(&out),
            "--quiet",
            "--games",
            "6",
            "--depth",
            "3",
            "-j",
            "1",
            "--engine",
            &engine,
            "--random-plies",
            "4",
        ],
        &env,
    );
    assert_eq!(code, 0, "{err}{text}");
    assert!(text.contains("(the player failed)"), "{text}");
    assert!(err.contains("left out: the player failed"), "{err}");
    let (_, games) = read_all(&out).unwrap();
    assert_eq!(games.len(), 5, "one game of six left out; the others written: {text}");
    for g in &games {
        check_ending(g).unwrap();
    }
}

/// A book's lines that give no position are reported (file, line or game,
/// byte offset, the text), skipped and counted, wherever they stand, in an
/// EPD book and a PGN one; the run goes on from the good ones; a book with
/// no usable line at all is an error.
#[test]
fn a_book_s_bad_lines_are_skipped_and_counted() {
    let dir = TempDir::new("selfplay-book");
    let good = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\n";
    let other = "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1\n";
    let short_rank = "rnbqkbnr/ppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1\n";
    let epd = format!("garbage\n{good}{other}{short_rank}{good}");
    let pgn = "[Event \"a\"]\n\n1. e4 e5 *\n\n[Event \"b\"]\n\n1. e4 e5 2. Nf9 *\n\n\
               [Event \"c\"]\n[FEN \"8/8/8/8/8/8/8/8 w - - 0 1\"]\n\n1. e4 *\n\n[Event \"d\"]\n\n1. d4 d5 *\n";
    for (name, text, skipped, positions, first, first_at) in [
        ("b.epd", epd.as_str(), 2, 3, "b.epd: line 1 at byte 0 (garbage)", "line 4 at byte 126"),
        ("b.pgn", pgn, 2, 2, "b.pgn: game 2 at byte 25, ply 3 (Nf9)", "game 3 at byte 57, ply 0"),
    ] {
        let book = dir.path(name);
        std::fs::write(&book, text).unwrap();
        let out = dir.path(&format!("{name}.kbz"));
        let args = ["selfplay", "-o", s(&out), "--quiet", "--games", "4", "--depth", "2"];
        let (code, text, err) = kibitz(&[&args[..], &["--book", s(&book)]].concat());
        assert_eq!(code, 0, "{name}: {err}{text}");
        assert_eq!(err.matches(": skipped").count(), skipped, "{name}: {err}");
        assert!(err.contains(first), "{name}: {err}");
        assert!(err.contains(first_at), "{name}: {err}");
        let unit = if name.ends_with("epd") { "line" } else { "game" };
        let line = format!("{name}: {positions} positions, {skipped} {unit}s skipped");
        assert!(text.contains(&line), "{name}: {text}");
        let (header, games) = read_all(&out).unwrap();
        assert_eq!(games.len(), 4);
        assert_eq!(header.options.selfplay.unwrap().book_positions, positions);
    }
    // Nothing usable: an error that says what was skipped.
    let book = dir.path("none.epd");
    std::fs::write(&book, format!("{short_rank}{short_rank}")).unwrap();
    let out = dir.path("none.kbz");
    let (code, _, err) =
        kibitz(&["selfplay", "-o", s(&out), "--games", "2", "--depth", "2", "--book", s(&book)]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no position in the book (2 lines skipped, the first: "), "{err}");
    assert!(!out.exists());
}

/// The viriformat export, read by the `viriformat` crate itself: every
/// game's start, moves, scores (White's view) and result as kibitz has
/// them; and read back by kibitz, the same positions and scores.
#[test]
fn viriformat_round_trips_through_the_crate() {
    let dir = TempDir::new("selfplay-viriformat");
    let out = dir.path("games.kbz");
    selfplay(&out, &["--games", "30", "--depth", "3", "--dfrc"]);
    let vf = dir.path("games.vf");
    let (code, _, err) = kibitz(&["export", s(&out), "--format", "viriformat", "-o", s(&vf)]);
    assert_eq!(code, 0, "{err}");
    let (_, games) = read_all(&out).unwrap();
    let bytes = std::fs::read(&vf).unwrap();
    let mut reader = BufReader::new(&bytes[..]);
    let mut positions = 0;
    for g in &games {
        let theirs = viriformat::dataformat::Game::deserialise_from(&mut reader, Vec::new())
            .unwrap_or_else(|e| panic!("game {}: {e}", g.index));
        let expected_wdl = match g.result {
            2 => viriformat::dataformat::WDL::Win,
            0 => viriformat::dataformat::WDL::Loss,
            _ => viriformat::dataformat::WDL::Draw,
        };
        assert_eq!(theirs.outcome(), expected_wdl, "game {}", g.index);
        let mut ours = Vec::new();
        walk(g, |step| {
            if let (Some(label), Some(m)) = (step.label, step.played) {
                let white = if step.pos.side_to_move() == kibitz::Color::White {
                    label.score
                } else {
                    -label.score
                };
                ours.push((step.pos.fen(), kibitz::move_to_uci(m, true), i32::from(white)));
            }
        })
        .unwrap();
        let mut seen = Vec::new();
        theirs.visit_positions(|board, eval| seen.push((board.to_string(), eval)));
        let moves: Vec<String> = theirs.moves().map(|m| m.display(true).to_string()).collect();
        assert_eq!(seen.len(), ours.len(), "game {}", g.index);
        for (i, ((fen, uci, score), ((board, eval), m))) in
            ours.iter().zip(seen.iter().zip(&moves)).enumerate()
        {
            assert_eq!(*eval, *score, "game {} position {i}", g.index);
            // The crate writes a FEN of its own: compare the board field.
            assert_eq!(
                board.split(' ').next(),
                fen.split(' ').next(),
                "game {} position {i}",
                g.index
            );
            // Both in Chess960 notation: king takes rook for castling.
            assert_eq!(m, uci, "game {} position {i}", g.index);
        }
        positions += ours.len();
    }
    assert!(reader.into_inner().is_empty(), "nothing after the last game");
    assert!(positions > 1000, "{positions} positions");
    // kibitz reads its own export back: the same games' positions.
    let (code, stats_vf, err) = kibitz(&["stats", s(&vf), "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&stats_vf).unwrap();
    assert_eq!(v["positions"], positions as u64);
    assert_eq!(v["games"], games.len() as u64);
}

/// python-chess reads the PGN export of self-play games from every kind of
/// start (the standard one with a book's openings, Chess960, double Fischer
/// random): the same moves, every one legal, and the same results.
#[cfg(feature = "python-chess")]
mod python {
    use super::*;
    use crate::util::shared;

    const READ: &str = r#"
import sys, chess.pgn
with open(sys.argv[1]) as f:
    while (game := chess.pgn.read_game(f)) is not None:
        if game.errors:
            print("ERRORS", game.errors)
        board = game.board()
        moves = []
        for m in game.mainline_moves():
            assert board.is_legal(m), (board.fen(), m)
            moves.append(board.uci(m, chess960=True))
            board.push(m)
        print(game.headers["Result"], game.headers.get("Termination", ""), " ".join(moves))
"#;

    #[test]
    fn python_chess_reads_the_games_back() {
        let dir = TempDir::new("selfplay-python");
        let book = shared("pgn/openings/2moves_v2.pgn.zst");
        for (name, args) in [
            ("book", vec!["--book", s(&book), "--random-plies", "2"]),
            ("chess960", vec!["--chess960"]),
            ("dfrc", vec!["--dfrc"]),
        ] {
            let out = dir.path(&format!("{name}.kbz"));
            selfplay(&out, &[&["--games", "25", "--depth", "3"][..], &args].concat());
            let pgn = dir.path(&format!("{name}.pgn"));
            let (code, _, err) = kibitz(&["export", s(&out), "--format", "pgn", "-o", s(&pgn)]);
            assert_eq!(code, 0, "{err}");
            let py =
                std::process::Command::new("python3").args(["-c", READ, s(&pgn)]).output().unwrap();
            assert!(py.status.success(), "{}", String::from_utf8_lossy(&py.stderr));
            let lines: Vec<String> =
                String::from_utf8(py.stdout).unwrap().lines().map(String::from).collect();
            let (_, games) = read_all(&out).unwrap();
            assert_eq!(lines.len(), games.len(), "{name}");
            for (g, line) in games.iter().zip(&lines) {
                let mut moves = Vec::new();
                walk(g, |step| {
                    if let Some(m) = step.played {
                        moves.push(kibitz::move_to_uci(m, true));
                    }
                })
                .unwrap();
                let expected = format!(
                    "{} {} {}",
                    kibitz::result_text(g.result),
                    g.ending.termination(),
                    moves.join(" ")
                );
                assert_eq!(line, &expected, "{name} game {}", g.index);
            }
        }
    }
}

/// Debian's Stockfish as the player, at 5,000 nodes with one thread: the
/// same games twice, each replaying and ending as recorded.
#[cfg(feature = "stockfish")]
mod stockfish {
    use super::*;

    #[test]
    fn stockfish_plays_the_same_games_twice() {
        let dir = TempDir::new("selfplay-stockfish");
        let args = [
            "--games",
            "6",
            "--nodes",
            "5000",
            "-j",
            "2",
            "--engine",
            "/usr/games/stockfish",
            "--engine-option",
            "Threads=1",
        ];
        let (a, b) = (dir.path("a.kbz"), dir.path("b.kbz"));
        selfplay(&a, &args);
        selfplay(&b, &args);
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        let (header, games) = read_all(&a).unwrap();
        assert!(header.options.engine.contains("Stockfish"), "{}", header.options.engine);
        assert_eq!(games.len(), 6);
        for g in &games {
            check_ending(g).unwrap();
        }
    }
}
