//! `kibitz annotate --engine`: failures of the engine contained (a fake
//! engine that crashes, hangs and babbles at set points), and, with
//! `--features stockfish`, Debian's Stockfish driven by kibitz giving the
//! same labels as a direct python-chess run of the same engine.

use std::path::Path;

use serde_json::Value;

use crate::util::{TempDir, kibitz_env, s, sample};

fn fake_engine() -> String {
    format!("{}/tests/data/fake_engine.sh", env!("CARGO_MANIFEST_DIR"))
}

/// Runs annotate with the fake engine (`kibitz uci` behind a script that
/// fails at the `go` commands `plan` names); returns (exit code, summary,
/// stderr).
fn annotate_fake(dir: &TempDir, out: &Path, plan: &str, extra: &[&str]) -> (i32, Value, String) {
    let state = dir.path(&format!("state-{}", out.file_name().unwrap().to_str().unwrap()));
    let _ = std::fs::remove_dir_all(&state);
    std::fs::create_dir_all(&state).unwrap();
    let engine = fake_engine();
    let sample = sample();
    let mut args = vec![
        "annotate",
        "--quiet",
        "--json",
        s(&sample),
        "--engine",
        &engine,
        "--depth",
        "3",
        "--engine-timeout",
        "1",
        "-o",
        s(out),
    ];
    args.extend_from_slice(extra);
    let (code, stdout, stderr) = kibitz_env(
        &args,
        &[
            ("FAKE_ENGINE_KIBITZ", env!("CARGO_BIN_EXE_kibitz")),
            ("FAKE_ENGINE_STATE", s(&state)),
            ("FAKE_ENGINE_PLAN", plan),
        ],
    );
    let summary = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}{stderr}"));
    (code, summary, stderr)
}

/// A promotion written without "=" reaches the engine as the promotion:
/// every position of the game is labelled through `--engine` (kibitz's own
/// UCI behind the fake engine's pipe, failing nowhere) as by the built-in
/// search, and the exported game holds all 10 moves.
#[test]
fn promotions_without_an_equals_sign_reach_the_engine() {
    let dir = TempDir::new("engine-promotions");
    let pgn = dir.path("p.pgn");
    std::fs::write(
        &pgn,
        "[Event \"x\"]\n\n1. e4 d5 2. exd5 c6 3. dxc6 Nf6 4. cxb7 Nbd7 5. bxa8Q+ Nb6 *\n",
    )
    .unwrap();
    let state = dir.path("state");
    std::fs::create_dir_all(&state).unwrap();
    let engine = fake_engine();
    for with_engine in [false, true] {
        let out = dir.path(&format!("p-{with_engine}.kbz"));
        let mut args = vec!["annotate", "--quiet", "--json", s(&pgn), "-o", s(&out)];
        args.extend(["--depth", "3", "--skip-plies", "0", "--skip-check", "false"]);
        args.extend(["--skip-captures", "false"]);
        if with_engine {
            args.extend(["--engine", &engine]);
        }
        let env = [
            ("FAKE_ENGINE_KIBITZ", env!("CARGO_BIN_EXE_kibitz")),
            ("FAKE_ENGINE_STATE", s(&state)),
            ("FAKE_ENGINE_PLAN", ""),
        ];
        let (code, stdout, stderr) = kibitz_env(&args, &env);
        assert_eq!(code, 0, "{stderr}");
        let v: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!((v["games"].as_u64(), v["rejected"].as_u64()), (Some(1), Some(0)), "{v}");
        assert_eq!(v["labelled"], 11, "{v}");
        let (code, exported, stderr) = kibitz_env(&["export", s(&out), "--format", "pgn"], &[]);
        assert_eq!(code, 0, "{stderr}");
        assert!(exported.contains("5. bxa8=Q"), "{exported}");
        assert!(exported.contains("5... Nb6"), "{exported}");
    }
}

#[test]
fn engine_crashes_hangs_and_garbage_are_contained() {
    let dir = TempDir::new("engine-faults");
    // One worker, so the `go` commands are counted in game order.
    let clean = dir.path("clean.kbz");
    let (code, base, err) = annotate_fake(&dir, &clean, "", &["-j1", "--max-games", "2"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(base["failed"], 0);
    assert!(base["searched"].as_u64().unwrap() > 40, "{base}");

    // Position 3: a crash, then the retry works. 6: a hang (timed out),
    // retried. 9: garbage, retried. 12: noise lines before a good search
    // (no failure at all). 15: a 100 KB line (capped), retried. 20 and 21:
    // the same position crashes twice: reported and skipped. 30 hangs and
    // its retry, 31, answers garbage: reported and skipped.
    let plan = "3:crash 6:hang 9:garbage 12:noise 15:flood 20:crash 21:crash 30:hang 31:garbage";
    let faulty = dir.path("faulty.kbz");
    let (code, sum, err) = annotate_fake(&dir, &faulty, plan, &["-j1", "--max-games", "2"]);
    assert_eq!(code, 1, "engine failures give exit code 1: {err}");
    assert_eq!(sum["failed"], 2, "{sum}");
    assert_eq!(sum["engine_gave_up"], Value::Null);
    let failures: Vec<&str> =
        sum["failures"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
    assert_eq!(failures.len(), 2);
    // Go command 20 is the 18th position of game 1 (ply 24, as the clean
    // run's order shows); 30 is in game 2, the game at byte 348.
    assert!(failures[0].contains("sample.pgn: game 1 at byte 0, ply 24:"), "{}", failures[0]);
    assert!(failures[0].contains("the engine exited; then the engine exited"), "{}", failures[0]);
    assert!(failures[1].contains("sample.pgn: game 2 at byte 348, ply 10:"), "{}", failures[1]);
    assert!(failures[1].contains("no answer within 1.0 s"), "{}", failures[1]);
    assert!(failures[1].contains("\"z9z9\" is not a legal move"), "{}", failures[1]);
    // Every position was tried; the two that failed are the only ones
    // missing, and the file is complete and valid.
    assert_eq!(sum["searched"], base["searched"]);
    assert_eq!(sum["games"], base["games"]);
    let looked = |v: &Value| {
        v["labelled"].as_u64().unwrap()
            + v["skipped_capture"].as_u64().unwrap()
            + v["skipped_unlabelled"].as_u64().unwrap()
    };
    assert_eq!(looked(&sum), looked(&base));
    assert_eq!(sum["skipped_unlabelled"].as_u64().unwrap(), 2);
    let (code, out, err) = kibitz_env(&["inspect", s(&faulty)], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("end marker present"), "{out}");
    assert!(out.contains("engine kibitz"), "the header names the engine: {out}");
}

#[test]
fn a_broken_engine_stops_the_run_and_resume_finishes_it() {
    let dir = TempDir::new("engine-broken");
    let clean = dir.path("clean.kbz");
    let (code, _, err) = annotate_fake(&dir, &clean, "", &["-j1"]);
    assert_eq!(code, 0, "{err}");

    // Every `go` from the 5th on crashes: three positions fail twice in a
    // row and the run stops, leaving a resumable file.
    let plan: Vec<String> = (5..=40).map(|n| format!("{n}:crash")).collect();
    let out = dir.path("broken.kbz");
    let (code, sum, err) = annotate_fake(&dir, &out, &plan.join(" "), &["-j1"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("failed 3 positions in a row"), "{err}");
    assert!(err.contains("--resume"), "{err}");
    assert!(sum["engine_gave_up"].as_str().unwrap().contains("game 1 at byte 0"), "{sum}");
    let (code, text, _) = kibitz_env(&["inspect", s(&out)], &[]);
    assert_eq!(code, 1, "an interrupted file is not passed as complete: {text}");
    assert!(text.contains("NO END MARKER"), "{text}");

    // The engine mended, --resume gives the file an unbroken run writes.
    let (code, _, err) = annotate_fake(&dir, &out, "", &["-j1", "--resume"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&clean).unwrap());
}

#[test]
fn an_engine_that_cannot_start_is_a_clear_error() {
    let dir = TempDir::new("engine-missing");
    let out = dir.path("x.kbz");
    let sample = sample();
    let (code, _, err) = kibitz_env(
        &["annotate", "--quiet", s(&sample), "--engine", "/nonexistent/engine", "-o", s(&out)],
        &[],
    );
    assert_eq!(code, 1);
    assert!(err.contains("cannot start /nonexistent/engine"), "{err}");
    assert!(!out.exists(), "no output file for a run that never started");
}

/// An engine that stops reading its input: writing to it fails with a
/// broken pipe, which must be an error (exit 1, said), not taken for a
/// closed standard output (`kibitz ... | head`), which exits quietly with 0.
#[test]
fn an_engine_that_stops_reading_is_an_error_not_a_quiet_success() {
    let dir = TempDir::new("engine-epipe");
    let engine = dir.path("deaf.sh");
    // Answers `uci`, closes its input, then lingers: the next command
    // written (a setoption or isready) meets a pipe nobody reads.
    std::fs::write(
        &engine,
        "#!/bin/sh\nread line\nexec 0<&-\necho 'id name deaf'\necho uciok\nsleep 5\n",
    )
    .unwrap();
    let mut perms = std::fs::metadata(&engine).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&engine, perms).unwrap();
    let out = dir.path("x.kbz");
    let sample = sample();
    let (code, stdout, err) = kibitz_env(
        &["annotate", "--quiet", s(&sample), "--engine", s(&engine), "-o", s(&out)],
        &[],
    );
    assert_eq!(code, 1, "{stdout}{err}");
    assert!(err.contains("the engine exited or stopped reading"), "{err}");
}

#[test]
fn an_option_the_engine_lacks_is_refused() {
    let dir = TempDir::new("engine-options");
    let state = dir.path("state");
    std::fs::create_dir_all(&state).unwrap();
    let engine = fake_engine();
    let sample = sample();
    let env = [
        ("FAKE_ENGINE_KIBITZ", env!("CARGO_BIN_EXE_kibitz")),
        ("FAKE_ENGINE_STATE", s(&state)),
        ("FAKE_ENGINE_PLAN", ""),
    ];
    let run = |option: &str, out: &Path| {
        kibitz_env(
            &[
                "annotate",
                "--quiet",
                s(&sample),
                "--max-games",
                "1",
                "--depth",
                "2",
                "--engine",
                &engine,
                "--engine-option",
                option,
                "-o",
                s(out),
            ],
            &env,
        )
    };
    let bad = dir.path("bad.kbz");
    let (code, _, err) = run("Hassh=32", &bad);
    assert_eq!(code, 1);
    assert!(
        err.contains(
            "has no option Hassh (its options: Hash, Threads, UCI_Chess960, EvalFile, SyzygyPath)"
        ),
        "{err}"
    );
    assert!(!bad.exists());
    // Names are matched without regard to case, as UCI says.
    let good = dir.path("good.kbz");
    let (code, _, err) = run("hash=32", &good);
    assert_eq!(code, 0, "{err}");
}

/// Debian's Stockfish through kibitz and through python-chess, on the
/// first games of the shared Lichess sample at `go nodes`: the same
/// positions, scores and best moves, and the same bytes for 1 and 2
/// threads. Needs /usr/games/stockfish, python3 with python-chess, and
/// ../shared/data.
/// An engine held to its limit: one that stops far short of `go nodes`
/// (the fake engine searching to depth 1, as Ethereal 12 does) and one
/// that takes it as an infinite search (as Toga II does) have every label
/// flagged and counted, with one warning; the endless one is stopped
/// within the one-second timeout, not timed out; `--strict-limits` refuses
/// the first such label (exit 2); an engine that keeps to its limit gets
/// no flag and no warning.
#[test]
fn an_engine_off_its_limit_is_flagged_counted_and_refused_when_strict() {
    let dir = TempDir::new("engine-limits");
    let nodes = ["--nodes", "5000", "--max-games", "2"];
    for (plan, field) in [("all:short", "short_of_limit"), ("all:endless", "past_limit")] {
        let out = dir.path(&format!("{field}.kbz"));
        let start = std::time::Instant::now();
        let (code, summary, err) = annotate_fake(&dir, &out, plan, &nodes);
        assert_eq!(code, 0, "{plan}: {err}");
        let labelled = summary["labelled"].as_u64().unwrap();
        assert!(labelled > 20, "{plan}: {summary}");
        let flagged = summary[field].as_u64().unwrap();
        assert!(flagged > 0, "{plan}: {flagged} of {labelled}");
        assert_eq!(summary["failed"], 0, "{plan}: the endless search is stopped, not timed out");
        assert_eq!(err.matches("warning:").count(), 1, "{plan}: {err}");
        assert!(err.contains("does not keep to `go nodes 5000`"), "{err}");
        assert!(err.contains("label with --depth"), "{err}");
        assert!(start.elapsed().as_secs() < 60, "{plan}: {:?}", start.elapsed());
        // The file says so: inspect counts them, the JSON lines mark them.
        let (_, inspect, _) = crate::util::kibitz(&["inspect", s(&out)]);
        let (short, past) = if field == "short_of_limit" { (flagged, 0) } else { (0, flagged) };
        let line = format!(
            "limits    {short} label{} where the engine stopped far short of its limit, {past} \
             where it went past twice it (flagged)",
            if short == 1 { "" } else { "s" }
        );
        assert!(inspect.contains(&line), "{inspect}");
        let (_, jsonl, _) = crate::util::kibitz(&["export", s(&out), "--format", "jsonl"]);
        let word = if field == "short_of_limit" { "short" } else { "past" };
        let marked = jsonl.matches(&format!("\"limit\":\"{word}\"")).count() as u64;
        assert_eq!(marked, flagged, "{plan}");
        // Every label left unflagged is a mate found or a single legal
        // move: stopping early (or at the search's last depth, the endless
        // one finishing a short mate) is right there.
        for line in jsonl.lines().filter(|l| !l.contains("\"limit\":")) {
            let v: Value = serde_json::from_str(line).unwrap();
            let pos = kibitz::Position::from_fen(v["fen"].as_str().unwrap()).unwrap();
            assert!(
                !v["mate"].is_null() || pos.legal_moves().len() == 1,
                "{plan}: unflagged without a mate or a forced move: {line}"
            );
        }
    }
    // Refused when strict: the run stops at the first, exit 2.
    let out = dir.path("strict.kbz");
    let strict = [&nodes[..], &["--strict-limits"]].concat();
    let (code, _, err) = annotate_fake(&dir, &out, "all:short", &strict);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("refused by --strict-limits"), "{err}");
    // The fake engine passing every command through is kibitz's own UCI,
    // which keeps to its limit.
    let out = dir.path("kept.kbz");
    let (code, summary, err) = annotate_fake(&dir, &out, "", &nodes);
    assert_eq!(code, 0, "{err}");
    assert_eq!((&summary["short_of_limit"], &summary["past_limit"]), (&0.into(), &0.into()));
    assert!(!err.contains("warning:"), "{err}");
}

/// Debian's Ethereal 12 and Toga II as labellers, against their own way
/// with `go nodes` (Ethereal searches depth 1; Toga II searches on until
/// stopped), and Stockfish, which keeps to it.
#[cfg(feature = "engines")]
mod debian_engines {
    use super::*;

    fn annotate(dir: &TempDir, engine: &str, extra: &[&str]) -> (i32, Value, String) {
        let out = dir.path(&format!("{}.kbz", engine.rsplit('/').next().unwrap()));
        let sample = sample();
        let mut args = vec!["annotate", "--quiet", "--json", "--force", s(&sample)];
        args.extend(["--engine", engine, "--max-games", "3", "-o", s(&out)]);
        args.extend(extra);
        let (code, out, err) = crate::util::kibitz(&args);
        let summary = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
        (code, summary, err)
    }

    #[test]
    fn ethereal_toga_and_stockfish_are_held_to_their_limits() {
        let dir = TempDir::new("engine-debian");
        let nodes = ["--nodes", "5000"];
        for (engine, field) in
            [("/usr/games/ethereal-chess", "short_of_limit"), ("/usr/games/toga2", "past_limit")]
        {
            let start = std::time::Instant::now();
            let (code, summary, err) = annotate(&dir, engine, &nodes);
            assert_eq!(code, 0, "{engine}: {err}");
            let (labelled, flagged) =
                (summary["labelled"].as_u64().unwrap(), summary[field].as_u64().unwrap());
            println!("{engine}: {flagged} of {labelled} labels {field}; {}", err.trim());
            assert!(labelled > 20 && flagged * 10 >= labelled * 8, "{engine}: {summary}");
            assert!(err.contains("does not keep to `go nodes 5000`"), "{err}");
            assert!(start.elapsed().as_secs() < 60, "{engine}: {:?}", start.elapsed());
            let strict = [&nodes[..], &["--strict-limits"]].concat();
            let (code, _, err) = annotate(&dir, engine, &strict);
            assert_eq!(code, 2, "{engine}: {err}");
            assert!(err.contains("refused by --strict-limits"), "{err}");
            // With a depth both keep to the limit.
            let (code, summary, err) = annotate(&dir, engine, &["--depth", "6"]);
            assert_eq!(code, 0, "{engine}: {err}");
            assert_eq!(summary["short_of_limit"].as_u64().unwrap(), 0, "{engine}");
            assert_eq!(summary["past_limit"].as_u64().unwrap(), 0, "{engine}");
        }
        let (code, summary, err) = annotate(&dir, "/usr/games/stockfish", &nodes);
        assert_eq!(code, 0, "{err}");
        assert_eq!(summary["short_of_limit"].as_u64().unwrap(), 0, "{summary}");
        assert_eq!(summary["past_limit"].as_u64().unwrap(), 0, "{summary}");
        assert!(!err.contains("warning:"), "{err}");
    }
}

#[cfg(feature = "stockfish")]
mod stockfish {
    use std::{collections::BTreeMap, process::Command};

    use super::*;
    use crate::util::shared;

    const STOCKFISH: &str = "/usr/games/stockfish";
    const GAMES: &str = "10";
    const NODES: &str = "20000";

    fn annotate_sf(out: &Path, threads: &str) -> Value {
        let input = shared("pgn/lichess/lichess-org_database_2016-05.pgn.zst");
        let (code, stdout, err) = kibitz_env(
            &[
                "annotate",
                "--quiet",
                "--json",
                s(&input),
                "--max-games",
                GAMES,
                "--engine",
                STOCKFISH,
                "--nodes",
                NODES,
                "-j",
                threads,
                "-o",
                s(out),
            ],
            &[],
        );
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&stdout).unwrap()
    }

    #[test]
    fn stockfish_labels_equal_a_direct_python_chess_run() {
        let dir = TempDir::new("engine-stockfish");
        let out = dir.path("sf.kbz");
        let summary = annotate_sf(&out, "2");
        assert_eq!(summary["failed"], 0);
        assert!(summary["header"]["options"]["engine"].as_str().unwrap().starts_with("Stockfish"));

        let input = shared("pgn/lichess/lichess-org_database_2016-05.pgn.zst");
        let script = format!("{}/scripts/engine_reference.py", env!("CARGO_MANIFEST_DIR"));
        let reference = Command::new("python3")
            .args([&script, STOCKFISH, s(&input), "--games", GAMES, "--nodes", NODES])
            .output()
            .expect("python3");
        assert!(reference.status.success(), "{}", String::from_utf8_lossy(&reference.stderr));
        // (game, ply) -> (score, mate, best) for the positions kibitz keeps:
        // best move not a capture.
        let mut expected = BTreeMap::new();
        for line in String::from_utf8(reference.stdout).unwrap().lines() {
            let r: Value = serde_json::from_str(line).unwrap();
            if !r["capture"].as_bool().unwrap() {
                expected.insert(
                    (r["game"].as_u64().unwrap(), r["ply"].as_u64().unwrap()),
                    (r["score"].clone(), r["mate"].clone(), r["best"].clone()),
                );
            }
        }
        // The reference searched every position kibitz did.
        let searched = summary["searched"].as_u64().unwrap();
        assert!(expected.len() > 200, "{}", expected.len());

        let (code, jsonl, err) = kibitz_env(&["export", s(&out), "--format", "jsonl"], &[]);
        assert_eq!(code, 0, "{err}");
        let mut got = BTreeMap::new();
        for line in jsonl.lines() {
            let k: Value = serde_json::from_str(line).unwrap();
            got.insert(
                (k["game"].as_u64().unwrap(), k["ply"].as_u64().unwrap()),
                (k["score"].clone(), k["mate"].clone(), k["best"].clone()),
            );
        }
        let differ: Vec<_> = expected
            .iter()
            .filter(|(k, v)| got.get(k) != Some(v))
            .map(|(k, v)| format!("{k:?}: python-chess {v:?}, kibitz {:?}", got.get(k)))
            .collect();
        assert!(
            differ.is_empty(),
            "{} of {} differ:\n{}",
            differ.len(),
            expected.len(),
            differ.join("\n")
        );
        assert_eq!(got.len(), expected.len(), "kibitz labelled positions python-chess did not");
        eprintln!(
            "stockfish: {} positions searched, {} labels, all equal to python-chess's",
            searched,
            got.len()
        );
    }

    /// Chess960 games: the engine is switched to UCI_Chess960 and gets
    /// castling as king-takes-rook; a move it did not understand would
    /// leave it in another position and its best moves would be refused.
    #[test]
    fn stockfish_labels_chess960_games() {
        let dir = TempDir::new("engine-stockfish-960");
        let out = dir.path("960.kbz");
        let input = shared("pgn/chess960/cutechess-fischerrandom.pgn");
        let (code, stdout, err) = kibitz_env(
            &[
                "annotate",
                "--quiet",
                "--json",
                s(&input),
                "--engine",
                STOCKFISH,
                "--nodes",
                "5000",
                "-o",
                s(&out),
            ],
            &[],
        );
        assert_eq!(code, 0, "{err}");
        let v: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(v["games"], 4);
        assert_eq!(v["failed"], 0, "{v}");
        assert_eq!(v["searched"], 338, "{v}");
    }

    #[test]
    fn stockfish_output_is_the_same_for_one_and_two_threads() {
        let dir = TempDir::new("engine-stockfish-threads");
        let (one, two) = (dir.path("one.kbz"), dir.path("two.kbz"));
        annotate_sf(&one, "1");
        annotate_sf(&two, "2");
        assert_eq!(std::fs::read(&one).unwrap(), std::fs::read(&two).unwrap());
    }

    /// `--multipv 3` through Stockfish: every position's three moves and
    /// scores equal python-chess's `analyse(multipv=3)` of the same
    /// positions at the same node count.
    #[test]
    fn stockfish_multipv_equals_python_chess_analyse() {
        let dir = TempDir::new("engine-multipv");
        let out = dir.path("mp.kbz");
        let input = shared("pgn/lichess/lichess-org_database_2016-05.pgn.zst");
        let (code, _, err) = kibitz_env(
            &[
                "annotate",
                "--quiet",
                s(&input),
                "--max-games",
                GAMES,
                "--engine",
                STOCKFISH,
                "--nodes",
                NODES,
                "--multipv",
                "3",
                "--skip-captures",
                "false",
                "-o",
                s(&out),
            ],
            &[],
        );
        assert_eq!(code, 0, "{err}");
        let script = format!("{}/scripts/engine_reference.py", env!("CARGO_MANIFEST_DIR"));
        let reference = Command::new("python3")
            .args([&script, STOCKFISH, s(&input), "--games", GAMES, "--nodes", NODES])
            .args(["--multipv", "3"])
            .output()
            .expect("python3");
        assert!(reference.status.success(), "{}", String::from_utf8_lossy(&reference.stderr));
        let lines = |text: &str| -> BTreeMap<(u64, u64), Value> {
            text.lines()
                .map(|l| {
                    let v: Value = serde_json::from_str(l).unwrap();
                    (
                        (v["game"].as_u64().unwrap(), v["ply"].as_u64().unwrap()),
                        v["multipv"].clone(),
                    )
                })
                .collect()
        };
        let expected = lines(&String::from_utf8(reference.stdout).unwrap());
        let (code, jsonl, err) = kibitz_env(&["export", s(&out), "--format", "jsonl"], &[]);
        assert_eq!(code, 0, "{err}");
        let got = lines(&jsonl);
        assert!(expected.len() > 200, "{}", expected.len());
        assert_eq!(got.len(), expected.len());
        let differ: Vec<_> = expected
            .iter()
            .filter(|(k, v)| got.get(k) != Some(v))
            .map(|(k, v)| format!("{k:?}: python-chess {v}, kibitz {:?}", got.get(k)))
            .collect();
        assert!(
            differ.is_empty(),
            "{} of {} differ:\n{}",
            differ.len(),
            expected.len(),
            differ.join("\n")
        );
        println!("{} positions, 3 lines each, all equal", expected.len());
    }
}
