//! Shaping at export (`--max-score`, `--wdl-consistency`,
//! `--piece-count-weights`): the same labels kept in every format, counts
//! that add up, and, with python, the same choice as an independent
//! computation on the unshaped plain file (`scripts/shaping.py`).

use std::path::PathBuf;

use crate::util::{TempDir, kibitz, s, sample};

/// The sample labelled by the search (every labelled position has a best
/// move, so the plain export holds every label).
fn labelled(dir: &TempDir) -> PathBuf {
    let out = dir.path("sample.kbz");
    let (code, _, err) = kibitz(&[
        "annotate",
        s(&sample()),
        "-o",
        s(&out),
        "--quiet",
        "--preset",
        "analysis",
        "--depth",
        "3",
    ]);
    assert_eq!(code, 0, "{err}");
    out
}

/// The counts `export` prints: labels, kept, then the three rules.
fn counts(stderr: &str) -> [u64; 6] {
    let line = stderr.lines().find(|l| l.contains("shaping:")).expect(stderr);
    let numbers: Vec<u64> =
        line.split(|c: char| !c.is_ascii_digit()).filter_map(|w| w.parse().ok()).collect();
    [numbers[0], numbers[1], numbers[2], numbers[3], numbers[4], numbers[5]]
}

const RULES: [&[&str]; 4] = [
    &["--max-score", "150"],
    &["--wdl-consistency", "0.15", "--piece-count-weights", "nnue-pytorch", "--seed", "3"],
    &["--max-score", "600", "--wdl-consistency", "0.05", "--piece-count-weights", "uniform"],
    &["--skip-plies", "20", "--skip-check", "--skip-captures", "--max-score", "900"],
];

#[test]
fn every_format_keeps_the_same_labels_and_the_counts_add_up() {
    let dir = TempDir::new("shape-formats");
    let kbz = labelled(&dir);
    for rules in RULES {
        let mut per_format = Vec::new();
        for format in ["plain", "jsonl", "epd"] {
            let out = dir.path(&format!("shaped.{format}"));
            let mut args = vec!["export", s(&kbz), "--format", format, "-o", s(&out)];
            args.extend(rules);
            let (code, _, err) = kibitz(&args);
            assert_eq!(code, 0, "{err}");
            let [labels, kept, by_selection, by_score, by_wdl, by_pieces] = counts(&err);
            assert_eq!(labels, kept + by_selection + by_score + by_wdl + by_pieces, "{rules:?}");
            assert_eq!(by_selection > 0, rules.contains(&"--skip-check"), "{rules:?}");
            assert!(kept > 0 && kept < labels, "{rules:?}: {kept} of {labels}");
            let records = match format {
                "plain" => std::fs::read_to_string(&out).unwrap().matches("\ne\n").count(),
                _ => std::fs::read_to_string(&out).unwrap().lines().count(),
            };
            assert_eq!(records as u64, kept, "{format} {rules:?}");
            per_format.push(counts(&err));
        }
        assert!(per_format.windows(2).all(|w| w[0] == w[1]), "{per_format:?}");
    }
    // No score beyond the limit is left in.
    let out = dir.path("limited.jsonl");
    let (code, _, err) =
        kibitz(&["export", s(&kbz), "--format", "jsonl", "-o", s(&out), "--max-score", "150"]);
    assert_eq!(code, 0, "{err}");
    for line in std::fs::read_to_string(&out).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(v["mate"].is_null() && v["score"].as_i64().unwrap().abs() <= 150, "{line}");
    }
}

#[test]
fn bad_shaping_arguments_are_named() {
    let dir = TempDir::new("shape-bad");
    let kbz = labelled(&dir);
    for (args, says) in [
        (&["--wdl-consistency", "1.5"][..], "--wdl-consistency 1.5"),
        (&["--piece-count-weights", "1,2,3"][..], "--piece-count-weights 1,2,3"),
        (&["--max-score=-5"][..], "--max-score -5"),
    ] {
        let mut command = vec!["export", s(&kbz), "--format", "plain"];
        command.extend(args);
        let (code, _, err) = kibitz(&command);
        assert_ne!(code, 0);
        assert!(err.contains(says), "{err}");
    }
}

/// The counts and the kept records equal `scripts/shaping.py`'s, computed
/// from the unshaped plain file.
#[cfg(feature = "python-chess")]
#[test]
fn shaping_keeps_what_an_independent_computation_keeps() {
    let dir = TempDir::new("shape-python");
    let kbz = labelled(&dir);
    let plain = dir.path("all.plain");
    let (code, _, err) = kibitz(&["export", s(&kbz), "--format", "plain", "-o", s(&plain)]);
    assert_eq!(code, 0, "{err}");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/shaping.py");
    for rules in RULES {
        let ours = dir.path("ours.plain");
        let theirs = dir.path("theirs.plain");
        let mut args = vec!["export", s(&kbz), "--format", "plain", "-o", s(&ours)];
        args.extend(rules);
        let (code, _, err) = kibitz(&args);
        assert_eq!(code, 0, "{err}");
        let python = std::process::Command::new("python3")
            .arg(&script)
            .arg(&plain)
            .args(rules)
            .arg("--write")
            .arg(&theirs)
            .output()
            .unwrap();
        assert!(python.status.success(), "{}", String::from_utf8_lossy(&python.stderr));
        let v: serde_json::Value = serde_json::from_slice(&python.stdout).unwrap();
        let field = |k: &str| v[k].as_u64().unwrap();
        let expected = [
            field("labels"),
            field("kept"),
            field("selection"),
            field("max_score"),
            field("wdl_consistency"),
            field("piece_count"),
        ];
        assert_eq!(counts(&err), expected, "{rules:?}");
        assert_eq!(std::fs::read(&ours).unwrap(), std::fs::read(&theirs).unwrap(), "{rules:?}");
        println!("{rules:?}: {expected:?}");
    }
}
