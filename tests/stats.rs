//! `kibitz stats`: the same figures from a `.kbz`, its plain export and its
//! binpack export; plots drawn; and, with python, the figures equal a
//! python-chess computation (`scripts/data_stats.py`) on the Lichess
//! 2016-05 labels.

use std::path::Path;

use serde_json::Value;

use crate::util::{TempDir, kibitz, s, sample};

fn stats(file: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["stats", s(file), "--json"];
    args.extend(extra);
    let (code, out, err) = kibitz(&args);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

/// Every field but `games` (exact in `.kbz`, chains in binpack, guessed in
/// plain) and the results (plain and binpack write an unknown result as a
/// draw).
fn same_positions(a: &Value, b: &Value, what: &str) {
    for (k, v) in a.as_object().unwrap() {
        if !["games", "result", "result_by_sign"].contains(&k.as_str()) {
            assert_eq!(v, &b[k], "{what}: {k}");
        }
    }
    let r = |v: &Value, i: usize| v["result"][i].as_u64().unwrap();
    assert_eq!((r(a, 0), r(a, 2)), (r(b, 0), r(b, 2)), "{what}: wins and losses");
    assert_eq!(r(a, 1) + r(a, 3), r(b, 1) + r(b, 3), "{what}: draws and unknown");
}

#[test]
fn kbz_plain_and_binpack_give_the_same_figures() {
    let dir = TempDir::new("stats-formats");
    let kbz = dir.path("s.kbz");
    let (code, _, err) =
        kibitz(&["annotate", s(&sample()), "-o", s(&kbz), "--quiet", "--depth", "3"]);
    assert_eq!(code, 0, "{err}");
    let ours = stats(&kbz, &[]);
    assert_eq!(ours["games"], 20);
    let labelled = ours["positions"].as_u64().unwrap();
    assert!(labelled > 400, "{labelled}");
    // Every histogram counts every position once.
    for field in ["pieces", "phase", "result", "side_to_move"] {
        let sum: u64 = ours[field].as_array().unwrap().iter().map(|n| n.as_u64().unwrap()).sum();
        assert_eq!(sum, labelled, "{field}");
    }
    for format in ["plain", "binpack"] {
        let out = dir.path(&format!("s.{format}"));
        let (code, _, err) = kibitz(&["export", s(&kbz), "--format", format, "-o", s(&out)]);
        assert_eq!(code, 0, "{err}");
        same_positions(&ours, &stats(&out, &[]), format);
    }
    // Plots: a PNG and an SVG per histogram.
    let plots = dir.path("plots");
    stats(&kbz, &["--plots", s(&plots)]);
    for name in [
        "score",
        "pieces",
        "ply",
        "phase",
        "result",
        "result-by-sign",
        "side-to-move",
        "king-squares",
    ] {
        let png = std::fs::read(plots.join(format!("{name}.png"))).unwrap();
        assert!(png.starts_with(b"\x89PNG") && png.len() > 5_000, "{name}.png");
        let svg = std::fs::read_to_string(plots.join(format!("{name}.svg"))).unwrap();
        assert!(svg.contains("<svg") && svg.contains("<text"), "{name}.svg");
    }
}

#[test]
fn a_bad_plain_file_is_named_with_its_line() {
    let dir = TempDir::new("stats-bad");
    let plain = dir.path("bad.plain");
    std::fs::write(
        &plain,
        "fen 8/8/8/8/8/8/8/8 w - - 0 1\nmove e2e4\nscore 1\nply 0\nresult 0\ne\n",
    )
    .unwrap();
    let (code, _, err) = kibitz(&["stats", s(&plain)]);
    assert_ne!(code, 0);
    assert!(err.contains("bad.plain: line 1"), "{err}");
}

/// The Lichess 2016-05 games labelled at depth 2: `kibitz stats` of the
/// plain export equals python-chess's computation field for field, and the
/// `.kbz`'s figures equal it too (games and unknown results aside).
#[cfg(feature = "python-chess")]
#[test]
fn the_figures_equal_a_python_chess_computation() {
    let dir = TempDir::new("stats-python");
    let kbz = dir.path("l.kbz");
    let lichess = crate::util::shared("pgn/lichess/lichess-org_database_2016-05.pgn.zst");
    let (code, _, err) =
        kibitz(&["annotate", s(&lichess), "-o", s(&kbz), "--quiet", "--depth", "2"]);
    assert_eq!(code, 0, "{err}");
    let plain = dir.path("l.plain");
    let (code, _, err) = kibitz(&["export", s(&kbz), "--format", "plain", "-o", s(&plain)]);
    assert_eq!(code, 0, "{err}");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/data_stats.py");
    let python = std::process::Command::new("python3").arg(script).arg(&plain).output().unwrap();
    assert!(python.status.success(), "{}", String::from_utf8_lossy(&python.stderr));
    let theirs: Value = serde_json::from_slice(&python.stdout).unwrap();
    assert_eq!(stats(&plain, &[]), theirs);
    let ours = stats(&kbz, &[]);
    same_positions(&ours, &theirs, "kbz");
    assert_eq!(ours["games"], 4798);
    println!("{} positions, {} games", ours["positions"], ours["games"]);
}
