//! `kibitz train`: the net it writes reads back and evaluates as the
//! trained float net would; a seed and a thread count give the same bytes;
//! a run killed between superbatches and resumed writes the bytes of an
//! uninterrupted run; bad settings and inputs are named errors.

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::{Duration, Instant},
};

use kibitz::nnue::Net;

use crate::util::{TempDir, kibitz, s};

/// A small labelled file: self-play with the hand-written evaluation.
fn data(dir: &TempDir) -> PathBuf {
    let out = dir.path("sp.kbz");
    let (code, _, err) = kibitz(&[
        "selfplay",
        "-o",
        s(&out),
        "--games",
        "40",
        "--depth",
        "3",
        "-j",
        "1",
        "-q",
        "--eval",
        "hand-written",
    ]);
    assert_eq!(code, 0, "{err}");
    out
}

fn train(data: &Path, out: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["train", s(data), "-o", s(out), "-q"];
    for (flag, value) in [("--batch-size", "512"), ("--hidden", "32")] {
        if !extra.contains(&flag) {
            args.extend([flag, value]);
        }
    }
    args.extend_from_slice(extra);
    kibitz(&args)
}

#[test]
fn a_trained_net_reads_back_and_runs_are_reproducible() {
    let dir = TempDir::new("train");
    let data = data(&dir);
    let a = dir.path("a.nnue");
    let (code, out, err) = train(&data, &a, &["--superbatches", "3", "--batches", "20", "-j", "2"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("trained  3 superbatches, 30720 positions"), "{out}");
    let net = match Net::load(&a).unwrap() {
        Net::Kibitz(n) => n,
        Net::Stockfish(_) | Net::Stockfish19(_) => panic!("a kibitz net expected"),
    };
    assert_eq!(net.architecture(), "768->32x2->1 SCReLU");
    assert!(net.description().contains("3 superbatches of 20 x 512"), "{}", net.description());
    assert!(dir.path("a.nnue.loss.png").is_file() && dir.path("a.nnue.loss.svg").is_file());
    // The loss went down from the first superbatch to the last.
    let (code, json, err) =
        train(&data, &dir.path("j.nnue"), &["--superbatches", "3", "--batches", "20", "--json"]);
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let history = report["history"].as_array().unwrap();
    let first = history[0]["train"].as_f64().unwrap();
    let last = history[2]["train"].as_f64().unwrap();
    assert!(last < first, "training loss {first} -> {last}");

    // The same seed and threads: the same bytes, even with the data read
    // again into a fresh cache.
    let b = dir.path("b.nnue");
    let (code, _, err) = train(&data, &b, &["--superbatches", "3", "--batches", "20", "-j", "2"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    // Another seed: another net.
    let c = dir.path("c.nnue");
    let (code, _, err) =
        train(&data, &c, &["--superbatches", "3", "--batches", "20", "-j", "2", "--seed", "9"]);
    assert_eq!(code, 0, "{err}");
    assert_ne!(std::fs::read(&a).unwrap(), std::fs::read(&c).unwrap());

    // The net searches.
    let (code, out, err) = kibitz(&["search", "startpos", "--depth", "5", "--net", s(&a)]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("bestmove"), "{out}");

    // An existing output is kept without --force.
    let (code, _, err) = train(&data, &a, &["--superbatches", "1", "--batches", "1"]);
    assert_eq!(code, 1);
    assert!(err.contains("exists"), "{err}");
}

#[test]
fn a_killed_run_resumes_to_the_uninterrupted_bytes() {
    let dir = TempDir::new("train-resume");
    let data = data(&dir);
    let settings = ["--superbatches", "6", "--batches", "300", "--batch-size", "2048"];
    let whole = dir.path("whole.nnue");
    let (code, _, err) = train(&data, &whole, &settings);
    assert_eq!(code, 0, "{err}");

    let cut = dir.path("cut.nnue");
    let mut args = vec![
        "train".to_string(),
        s(&data).to_string(),
        "-o".into(),
        s(&cut).into(),
        "--hidden".into(),
        "32".into(),
        "-q".into(),
    ];
    args.extend(settings.iter().map(|a| a.to_string()));
    let mut child = Command::new(env!("CARGO_BIN_EXE_kibitz")).args(&args).spawn().unwrap();
    // Killed once the first superbatch's checkpoint is there.
    let checkpoint = dir.path("cut.nnue.train/checkpoint.bin");
    let start = Instant::now();
    while !checkpoint.exists() && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let Net::Kibitz(partial) = Net::load(&cut).unwrap() else { panic!("a kibitz net") };
    assert!(
        !partial.description().contains(" 6 superbatches"),
        "the run ended before it was killed: {}",
        partial.description()
    );
    let mut resume: Vec<&str> = args[1..].iter().map(String::as_str).collect();
    resume.insert(0, "train");
    resume.push("--resume");
    let (code, out, err) = kibitz(&resume);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("trained  6 superbatches"), "{out}");
    assert_eq!(std::fs::read(&whole).unwrap(), std::fs::read(&cut).unwrap());

    // Other settings cannot resume that checkpoint.
    resume.push("--wdl");
    resume.push("0.5");
    let (code, _, err) = kibitz(&resume);
    assert_eq!(code, 1);
    assert!(err.contains("other settings"), "{err}");
}

#[test]
fn bad_training_input_is_a_named_error() {
    let dir = TempDir::new("train-bad");
    let text = dir.path("notes.kbz");
    std::fs::write(&text, "not a kbz file\n").unwrap();
    let (code, _, err) = train(&text, &dir.path("x.nnue"), &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("notes.kbz"), "{err}");
    let (code, _, err) = train(&dir.path("missing.kbz"), &dir.path("y.nnue"), &[]);
    assert_eq!(code, 1);
    assert!(err.contains("missing.kbz"), "{err}");
    let (code, _, err) = train(&text, &dir.path("z.nnue"), &["--hidden", "30"]);
    assert_eq!(code, 1);
    assert!(err.contains("--hidden 30"), "{err}");
}

/// A run with no validation set (no game in the validation share) says so
/// in its log and summary, keeps no validation loss (JSON `null`, where a
/// zero would read as a perfect fit), and draws the loss plot (PNG and
/// SVG, with the font built into kibitz) without a validation line.
#[test]
fn no_validation_set_is_said_not_scored_zero() {
    let dir = TempDir::new("train-no-validation");
    let data = data(&dir);
    let net = dir.path("n.nnue");
    let (code, out, err) =
        train(&data, &net, &["--superbatches", "2", "--batches", "2", "--validation", "0"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("no validation (no game fell in the validation share"), "{out}");
    assert!(out.contains("trained  2 superbatches") && out.contains("(1 thread)"), "{out}");
    let svg = std::fs::read_to_string(dir.path("n.nnue.loss.svg")).unwrap();
    assert!(svg.contains("training") && !svg.contains("validation"), "{svg}");
    assert!(std::fs::read(dir.path("n.nnue.loss.png")).unwrap().starts_with(b"\x89PNG"));
    let json = dir.path("j.nnue");
    let (code, out, err) = train(
        &data,
        &json,
        &["--superbatches", "1", "--batches", "2", "--validation", "0", "--json"],
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["history"][0]["validation"].is_null(), "{v}");
    // With a validation set the loss is a number, and the plot has its line.
    let (code, out, err) = train(
        &data,
        &dir.path("v.nnue"),
        &["--superbatches", "1", "--batches", "2", "--validation", "500", "--json"],
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["history"][0]["validation"].as_f64().is_some_and(|l| l > 0.0), "{v}");
    let svg = std::fs::read_to_string(dir.path("v.nnue.loss.svg")).unwrap();
    assert!(svg.contains("validation"), "the legend names the validation line");
}
