//! Relabelling (`annotate` of `.kbz` and binpack inputs): the same
//! positions and moves, new labels, the games kept as chains, the same
//! bytes on any thread count, and a binpack read back by sfbinpack.

use std::path::Path;

use crate::util::{TempDir, kibitz, s, sample};

/// (FEN, move, score) of every entry of a binpack file, read by sfbinpack.
fn binpack_entries(path: &Path) -> Vec<(String, String, i16)> {
    let file = std::fs::File::open(path).unwrap();
    let mut reader = sfbinpack::CompressedTrainingDataEntryReader::new(file).unwrap();
    let mut out = Vec::new();
    while reader.has_next() {
        let e = reader.next();
        out.push((e.pos.fen().unwrap(), e.mv.as_uci(), e.score));
    }
    out
}

#[test]
fn a_kbz_relabelled_keeps_its_positions() {
    let dir = TempDir::new("relabel-kbz");
    let old = dir.path("old.kbz");
    let (code, _, err) =
        kibitz(&["annotate", s(&sample()), "-o", s(&old), "--quiet", "--depth", "3"]);
    assert_eq!(code, 0, "{err}");
    let one = dir.path("one.kbz");
    let two = dir.path("two.kbz");
    for (out, j) in [(&one, "1"), (&two, "2")] {
        let (code, text, err) =
            kibitz(&["annotate", s(&old), "-o", s(out), "--quiet", "--depth", "5", "-j", j]);
        assert_eq!(code, 0, "{err}");
        assert!(text.contains("relabelled, 0 failed"), "{text}");
    }
    assert_eq!(std::fs::read(&one).unwrap(), std::fs::read(&two).unwrap());
    let (_, inspected, _) = kibitz(&["inspect", s(&one)]);
    assert!(
        inspected.contains("relabels  ") && inspected.contains("search, depth 3"),
        "{inspected}"
    );
    assert!(inspected.contains("depth 5"), "{inspected}");
    // The same positions, in the same order; new depths and scores.
    let jsonl = |f: &Path| -> Vec<serde_json::Value> {
        kibitz(&["export", s(f), "--format", "jsonl"])
            .1
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let (before, after) = (jsonl(&old), jsonl(&one));
    assert_eq!(before.len(), after.len());
    assert!(before.len() > 400);
    let mut changed = 0;
    for (b, a) in before.iter().zip(&after) {
        assert_eq!((&b["game"], &b["ply"], &b["fen"]), (&a["game"], &a["ply"], &a["fen"]));
        assert_eq!((b["depth"].as_u64(), a["depth"].as_u64()), (Some(3), Some(5)));
        changed += usize::from(b["score"] != a["score"]);
    }
    assert!(changed > before.len() / 4, "{changed} of {} scores changed", before.len());
}

#[test]
fn a_binpack_relabelled_reads_back_with_new_scores() {
    let dir = TempDir::new("relabel-binpack");
    let kbz = dir.path("old.kbz");
    let (code, _, err) =
        kibitz(&["annotate", s(&sample()), "-o", s(&kbz), "--quiet", "--depth", "3"]);
    assert_eq!(code, 0, "{err}");
    let before = dir.path("before.binpack");
    let (code, _, err) = kibitz(&["export", s(&kbz), "--format", "binpack", "-o", s(&before)]);
    assert_eq!(code, 0, "{err}");
    let relabelled = dir.path("new.kbz");
    let (code, text, err) =
        kibitz(&["annotate", s(&before), "-o", s(&relabelled), "--quiet", "--depth", "5"]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("binpack scores"), "{text}");
    let after = dir.path("after.binpack");
    let (code, _, err) =
        kibitz(&["export", s(&relabelled), "--format", "binpack", "-o", s(&after)]);
    assert_eq!(code, 0, "{err}");
    let (b, a) = (binpack_entries(&before), binpack_entries(&after));
    assert_eq!(b.len(), a.len());
    assert!(b.iter().zip(&a).all(|(x, y)| x.0 == y.0 && x.1 == y.1), "positions and moves");
    let changed = b.iter().zip(&a).filter(|(x, y)| x.2 != y.2).count();
    assert!(changed > b.len() / 4, "{changed} of {} scores changed", b.len());
    let size = |p: &Path| std::fs::metadata(p).unwrap().len();
    println!("binpack {} bytes before, {} after; {} entries", size(&before), size(&after), b.len());
}

#[test]
fn labelled_data_and_games_do_not_mix() {
    let dir = TempDir::new("relabel-mix");
    let kbz = dir.path("old.kbz");
    let (code, _, err) = kibitz(&[
        "annotate",
        s(&sample()),
        "-o",
        s(&kbz),
        "--quiet",
        "--depth",
        "2",
        "--max-games",
        "2",
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) =
        kibitz(&["annotate", s(&kbz), s(&sample()), "-o", s(&dir.path("x.kbz")), "--depth", "2"]);
    assert_eq!(code, 1);
    assert!(err.contains("cannot be mixed"), "{err}");
}

/// A plain file relabelled: the same positions in the same order, new
/// scores.
#[test]
fn a_plain_file_relabelled_keeps_its_positions() {
    let dir = TempDir::new("relabel-plain");
    let kbz = dir.path("old.kbz");
    let (code, _, err) =
        kibitz(&["annotate", s(&sample()), "-o", s(&kbz), "--quiet", "--depth", "3"]);
    assert_eq!(code, 0, "{err}");
    let before = dir.path("before.plain");
    let (code, _, err) = kibitz(&["export", s(&kbz), "--format", "plain", "-o", s(&before)]);
    assert_eq!(code, 0, "{err}");
    let relabelled = dir.path("new.kbz");
    let (code, text, err) =
        kibitz(&["annotate", s(&before), "-o", s(&relabelled), "--quiet", "--depth", "5"]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("plain scores") && text.contains("0 failed"), "{text}");
    let (_, after, _) = kibitz(&["export", s(&relabelled), "--format", "plain"]);
    let field = |text: &str, key: &str| -> Vec<String> {
        text.lines().filter(|l| l.starts_with(key)).map(String::from).collect()
    };
    let before = std::fs::read_to_string(&before).unwrap();
    assert_eq!(field(&before, "fen "), field(&after, "fen "));
    let changed = field(&before, "score ")
        .iter()
        .zip(field(&after, "score "))
        .filter(|(a, b)| **a != *b)
        .count();
    assert!(changed > field(&before, "score ").len() / 4, "{changed}");
}
