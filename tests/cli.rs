//! The `kibitz` binary: outputs, exit codes and error messages.

use crate::util::{TempDir, kibitz, s, sample};

#[test]
fn perft_startpos() {
    let (code, out, _) = kibitz(&["perft", "startpos", "4"]);
    assert_eq!(code, 0);
    assert!(out.contains("nodes 197281"), "{out}");
    let (code, out, _) = kibitz(&["perft", "startpos", "3", "--make-leaves"]);
    assert_eq!(code, 0);
    assert!(out.contains("nodes 8902"), "{out}");
}

#[test]
fn perft_divide_sums_to_total() {
    let (code, out, _) = kibitz(&[
        "perft",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "3",
        "--divide",
    ]);
    assert_eq!(code, 0);
    let sum: u64 = out
        .lines()
        .filter_map(|l| l.split_once(": "))
        .map(|(_, n)| n.trim().parse::<u64>().unwrap())
        .sum();
    assert_eq!(sum, 97862);
    assert!(out.contains("e1g1: ") && out.contains("nodes 97862"), "{out}");
}

#[test]
fn perft_suite_of_the_project() {
    let suite = concat!(env!("CARGO_MANIFEST_DIR"), "/data/perft.epd");
    let (code, out, _) = kibitz(&["perft", "--suite", suite, "--max-nodes", "20000000"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(" 0 failures"), "{out}");
}

#[test]
fn perft_suite_reports_mismatches() {
    let dir = TempDir::new("cli-perft");
    let file = dir.path("wrong.epd");
    std::fs::write(
        &file,
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 ;D1 20 ;D2 401\n",
    )
    .unwrap();
    let (code, out, _) = kibitz(&["perft", "--suite", s(&file)]);
    assert_eq!(code, 1);
    assert!(out.contains("MISMATCH") && out.contains("expected 401, got 400"), "{out}");
}

#[test]
fn bad_fen_is_a_clear_error() {
    let (code, _, err) =
        kibitz(&["perft", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1", "1"]);
    assert_eq!(code, 1);
    assert!(err.contains("invalid fen: side to move"), "{err}");
}

/// A transposition table the machine cannot give is a clear error before
/// any work or output, not an aborted process.
#[test]
fn an_impossible_hash_is_a_clear_error() {
    let (code, out, err) = kibitz(&["search", "startpos", "--depth", "2", "--hash", "4294967295"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("cannot allocate a 4294967295 MiB transposition table"), "{err}");
    assert!(out.is_empty(), "{out}");

    let dir = TempDir::new("cli-hash");
    let output = dir.path("hash.kbz");
    let sample = sample();
    let sample = s(&sample);
    let (code, out, err) =
        kibitz(&["annotate", "--quiet", sample, "--hash", "4294967295", "-o", s(&output)]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("cannot allocate a 4294967295 MiB transposition table"), "{err}");
    assert!(!output.exists(), "no output file is started");

    let (code, out, err) = kibitz(&["bench", "2", "--hash", "4294967295"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("cannot allocate a 4294967295 MiB transposition table"), "{err}");

    // Labels from the games' own evals search nothing, so no table of
    // that size is wanted (this used to abort in every worker).
    let (code, out, err) = kibitz(&[
        "annotate",
        "--quiet",
        sample,
        "--label",
        "pgn-eval",
        "--hash",
        "4294967295",
        "-o",
        s(&output),
    ]);
    let written = output.exists();
    assert_eq!(code, 0, "{out}{err}");
    assert!(written, "{out}{err}");
}

/// An output that is one of the inputs (by any path) is refused before it
/// is created or truncated: the input would be gone before it is read.
#[test]
fn an_output_that_is_an_input_is_refused() {
    let scratch = TempDir::new("cli-same");
    let dir = scratch.root();
    let pgn = dir.join("in.pgn");
    std::fs::copy(sample(), &pgn).unwrap();
    let kbz = dir.join("a.kbz");
    let p = |p: &std::path::Path| p.to_str().unwrap().to_string();
    let (code, _, err) = kibitz(&["annotate", "--quiet", "--depth", "1", &p(&pgn), "-o", &p(&kbz)]);
    assert_eq!(code, 0, "{err}");
    let kbz_bytes = std::fs::read(&kbz).unwrap();
    let pgn_bytes = std::fs::read(&pgn).unwrap();
    // The same file through another path.
    let other =
        format!("{}/../{}/a.kbz", dir.display(), dir.file_name().unwrap().to_str().unwrap());
    let cases: [Vec<String>; 4] = [
        vec!["export".into(), p(&kbz), "--format".into(), "jsonl".into(), "-o".into(), p(&kbz)],
        vec!["export".into(), p(&kbz), "--format".into(), "plain".into(), "-o".into(), other],
        vec!["merge".into(), p(&kbz), "-o".into(), p(&kbz), "--force".into()],
        vec!["annotate".into(), "--quiet".into(), p(&pgn), "-o".into(), p(&pgn), "--force".into()],
    ];
    for args in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, _, err) = kibitz(&args);
        assert_eq!(code, 1, "{args:?}");
        assert!(err.contains("it would be overwritten before it is read"), "{args:?}: {err}");
    }
    // The side files too: --errors and --keys onto an input, --errors onto
    // the output, --keys and --errors onto each other.
    let fresh = p(&dir.join("fresh.kbz"));
    let side: [(Vec<String>, &str); 5] = [
        (
            vec![
                "annotate".into(),
                p(&pgn),
                "-o".into(),
                fresh.clone(),
                "--errors".into(),
                p(&pgn),
            ],
            "it would be overwritten before it is read",
        ),
        (vec!["replay".into(), p(&pgn), "--errors".into(), p(&pgn)], "it would be overwritten"),
        (vec!["replay".into(), p(&pgn), "--keys".into(), p(&pgn)], "it would be overwritten"),
        (
            vec!["annotate".into(), p(&pgn), "-o".into(), fresh.clone(), "--errors".into(), fresh],
            "is the output file",
        ),
        (
            vec![
                "replay".into(),
                p(&pgn),
                "--keys".into(),
                p(&dir.join("k")),
                "--errors".into(),
                p(&dir.join("k")),
            ],
            "name the same file",
        ),
    ];
    for (args, expected) in &side {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, _, err) = kibitz(&args);
        assert_eq!(code, 1, "{args:?}");
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    assert!(!dir.join("fresh.kbz").exists(), "no output started");
    // An --errors file that cannot be created fails before the output is.
    let (code, _, err) = kibitz(&[
        "annotate",
        &p(&pgn),
        "-o",
        &p(&dir.join("never.kbz")),
        "--errors",
        &p(&dir.join("no/such/dir/e.jsonl")),
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("cannot create"), "{err}");
    assert!(!dir.join("never.kbz").exists(), "no output started");
    assert_eq!(std::fs::read(&kbz).unwrap(), kbz_bytes, "the .kbz input is intact");
    assert_eq!(std::fs::read(&pgn).unwrap(), pgn_bytes, "the PGN input is intact");
}
