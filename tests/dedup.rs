//! `kibitz dedup`: duplicate positions across files dropped by policy
//! (first, last, deepest), checked against the policy worked out here from
//! the inputs' labels; the same bytes when the positions spill to disk.

use std::{collections::HashMap, path::Path};

use kibitz::{label_keys, read_all};

use crate::util::{TempDir, kibitz, s, sample};

/// Every label of `files` in order: (dedup key, depth, game, ply), games
/// numbered across the files as dedup numbers them.
fn labels(files: &[&Path]) -> Vec<(u64, u8, u64, u16)> {
    let mut out = Vec::new();
    let mut game = 0;
    for f in files {
        let (_, games) = read_all(f).unwrap();
        for g in &games {
            for (key, l) in label_keys(g).unwrap().into_iter().zip(&g.labels) {
                out.push((key, l.depth, game, l.ply));
            }
            game += 1;
        }
    }
    out
}

/// The (game, ply) of the labels a policy keeps, in order.
fn expected(all: &[(u64, u8, u64, u16)], keep: &str) -> Vec<(u64, u16)> {
    let mut winner: HashMap<u64, usize> = HashMap::new();
    for (i, &(key, depth, _, _)) in all.iter().enumerate() {
        let w = winner.entry(key).or_insert(i);
        let better = match keep {
            "first" => false,
            "last" => true,
            _ => depth > all[*w].1,
        };
        if better {
            *w = i;
        }
    }
    let mut kept: Vec<usize> = winner.into_values().collect();
    kept.sort_unstable();
    kept.into_iter().map(|i| (all[i].2, all[i].3)).collect()
}

fn kept(file: &Path) -> Vec<(u64, u16)> {
    let (header, games) = read_all(file).unwrap();
    assert!(header.options.dedup);
    games.iter().flat_map(|g| g.labels.iter().map(move |l| (g.index, l.ply))).collect()
}

#[test]
fn each_policy_keeps_its_label_and_spilling_changes_nothing() {
    let dir = TempDir::new("dedup");
    // The sample at two depths, and its games in reverse order.
    let text = std::fs::read_to_string(sample()).unwrap();
    let mut games: Vec<&str> = text.split("\n\n[Event").collect();
    let first = games.remove(0);
    let mut reversed: Vec<String> = games.iter().rev().map(|g| format!("[Event{g}")).collect();
    reversed.push(first.to_string());
    let shuffled_pgn = dir.path("reversed.pgn");
    std::fs::write(&shuffled_pgn, reversed.join("\n\n") + "\n").unwrap();
    let annotate = |pgn: &Path, out: &Path, depth: &str| {
        let (code, _, err) =
            kibitz(&["annotate", s(pgn), "-o", s(out), "--quiet", "--depth", depth]);
        assert_eq!(code, 0, "{err}");
    };
    let (a, b, r) = (dir.path("a.kbz"), dir.path("b.kbz"), dir.path("r.kbz"));
    annotate(&sample(), &a, "2");
    annotate(&sample(), &b, "4");
    annotate(&shuffled_pgn, &r, "2");
    let sets: [&[&Path]; 4] = [&[&a, &a], &[&a, &b], &[&b, &a, &r], &[&r, &a, &b, &a]];
    for files in sets {
        let all = labels(files);
        let distinct = all.iter().map(|l| l.0).collect::<std::collections::HashSet<_>>().len();
        for keep in ["first", "last", "deepest"] {
            let out = dir.path(&format!("{keep}.kbz"));
            let mut args = vec!["dedup"];
            args.extend(files.iter().map(|f| s(f)));
            args.extend(["-o", s(&out), "--keep", keep, "--force", "--json"]);
            let (code, stdout, err) = kibitz(&args);
            assert_eq!(code, 0, "{err}");
            let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            assert_eq!(report["kept"].as_u64(), Some(distinct as u64));
            assert_eq!(report["runs"], 0);
            assert_eq!(kept(&out), expected(&all, keep), "{keep} {files:?}");
            // A few hundred bytes of memory: sorted runs on disk, same file.
            let small = dir.path(&format!("{keep}-small.kbz"));
            args.iter_mut().filter(|a| **a == s(&out)).for_each(|a| *a = s(&small));
            args.extend(["--dedup-memory", "600"]);
            let (code, stdout, err) = kibitz(&args);
            assert_eq!(code, 0, "{err}");
            let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            assert!(report["runs"].as_u64().unwrap() > 5, "{report}");
            assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&small).unwrap(), "{keep}");
        }
    }
    // Deepest keeps depth 4 wherever b has the position, in any order.
    let out = dir.path("deep.kbz");
    let (code, _, err) = kibitz(&["dedup", s(&a), s(&b), "-o", s(&out), "--keep", "deepest"]);
    assert_eq!(code, 0, "{err}");
    let in_b: std::collections::HashSet<u64> = labels(&[&b]).iter().map(|l| l.0).collect();
    let (_, games) = read_all(&out).unwrap();
    for g in &games {
        for (key, l) in label_keys(g).unwrap().into_iter().zip(&g.labels) {
            assert_eq!(l.depth == 4, in_b.contains(&key), "game {} ply {}", g.index, l.ply);
        }
    }
}

/// A position repeated in its game is not the same position for a label as
/// its first occurrence; nor is one near the 50-move limit.
#[test]
fn repetitions_and_the_fifty_move_counter_part_keys() {
    let dir = TempDir::new("dedup-keys");
    let pgn = dir.path("rep.pgn");
    std::fs::write(&pgn, "[Event \"r\"]\n\n1. Nf3 Nf6 2. Ng1 Ng8 3. Nf3 Nf6 4. Ng1 Ng8 *\n")
        .unwrap();
    let kbz = dir.path("rep.kbz");
    let (code, _, err) = kibitz(&[
        "annotate",
        s(&pgn),
        "-o",
        s(&kbz),
        "--quiet",
        "--depth",
        "1",
        "--skip-plies",
        "0",
    ]);
    assert_eq!(code, 0, "{err}");
    let (_, games) = read_all(&kbz).unwrap();
    let keys = label_keys(&games[0]).unwrap();
    // Plies 0, 4 and 8 are the start position: seen 0, 1 and 2 times before.
    let at = |ply: u16| keys[games[0].labels.iter().position(|l| l.ply == ply).unwrap()];
    assert_ne!(at(0), at(4));
    assert_ne!(at(4), at(8));
    assert_ne!(at(0), at(8));
}

/// `annotate --dedup last` and `merge --keep deepest` write what `kibitz
/// dedup` writes from the plain run's file.
#[test]
fn annotate_and_merge_apply_the_same_policies() {
    let dir = TempDir::new("dedup-runs");
    let plain = dir.path("plain.kbz");
    let pgn = sample();
    let run = |extra: &[&str], out: &Path| {
        let mut args = vec!["annotate", s(&pgn), "-o", s(out), "--quiet", "--depth", "3"];
        args.extend(extra);
        let (code, _, err) = kibitz(&args);
        assert_eq!(code, 0, "{err}");
    };
    run(&[], &plain);
    let policy = |keep: &str| {
        let out = dir.path(&format!("dedup-{keep}.kbz"));
        let (code, _, err) = kibitz(&["dedup", s(&plain), "-o", s(&out), "--keep", keep]);
        assert_eq!(code, 0, "{err}");
        std::fs::read(out).unwrap()
    };
    let last = dir.path("last.kbz");
    run(&["--dedup", "last"], &last);
    assert_eq!(std::fs::read(&last).unwrap(), policy("last"));
    let shards: Vec<_> = (0..2).map(|k| dir.path(&format!("shard{k}.kbz"))).collect();
    for (k, shard) in shards.iter().enumerate() {
        run(&["--shard", &format!("{k}/2")], shard);
    }
    let merged = dir.path("merged.kbz");
    let (code, _, err) =
        kibitz(&["merge", s(&shards[0]), s(&shards[1]), "-o", s(&merged), "--keep", "deepest"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(&merged).unwrap(), policy("deepest"));
}

/// The shared Lichess 2016-05 games labelled at two depths, and again with
/// their games in reverse order: each policy keeps the label the policy
/// says, in memory and spilled.
#[cfg(feature = "corpus")]
#[test]
fn the_shared_corpus_with_itself_and_a_shuffled_copy() {
    let dir = TempDir::new("dedup-corpus");
    let lichess = crate::util::shared("pgn/lichess/lichess-org_database_2016-05.pgn.zst");
    let text = String::from_utf8(
        std::process::Command::new("zstd").arg("-dc").arg(&lichess).output().unwrap().stdout,
    )
    .unwrap();
    let games: Vec<&str> = text.split("\n\n[").collect();
    let mut reversed: Vec<String> = games[1..].iter().rev().map(|g| format!("[{g}")).collect();
    reversed.push(games[0].to_string());
    let reversed_pgn = dir.path("reversed.pgn");
    std::fs::write(&reversed_pgn, reversed.join("\n\n") + "\n").unwrap();
    let annotate = |pgn: &Path, out: &Path, depth: &str| {
        let (code, _, err) =
            kibitz(&["annotate", s(pgn), "-o", s(out), "--quiet", "--depth", depth]);
        assert_eq!(code, 0, "{err}");
    };
    let (a, b, r) = (dir.path("a.kbz"), dir.path("b.kbz"), dir.path("r.kbz"));
    annotate(&lichess, &a, "1");
    annotate(&lichess, &b, "3");
    annotate(&reversed_pgn, &r, "1");
    let files: [&Path; 4] = [&a, &r, &b, &a];
    let all = labels(&files);
    for keep in ["first", "last", "deepest"] {
        for memory in ["1G", "64K"] {
            let out = dir.path(&format!("{keep}-{memory}.kbz"));
            let mut args = vec!["dedup"];
            args.extend(files.iter().map(|f| s(f)));
            args.extend(["-o", s(&out), "--keep", keep, "--dedup-memory", memory]);
            let (code, _, err) = kibitz(&args);
            assert_eq!(code, 0, "{err}");
            assert_eq!(kept(&out), expected(&all, keep), "{keep} {memory}");
        }
    }
    println!("{} labels in, {} distinct", all.len(), expected(&all, "first").len());
}

/// A file made from an older file's header (dedup and relabelling keep
/// their input's options) is written as a current one: its header says
/// the current version, whose layout its header and blocks have. (They
/// once kept the old number over the new layout, and the file did not
/// read back.)
#[test]
fn files_of_every_older_version_dedup_and_relabel_to_current_ones() {
    let dir = TempDir::new("dedup-old-versions");
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    for v in 1..=5 {
        let input = data.join(format!("format-v{v}.kbz"));
        let (code, before, err) = kibitz(&["inspect", s(&input)]);
        assert_eq!(code, 0, "v{v}: {err}");
        assert!(before.contains(&format!("kbz version {v}")), "{before}");
        // "positions 62 labelled ...": the count.
        let labels = |text: &str| {
            let line = text.lines().find(|l| l.starts_with("positions")).unwrap_or_default();
            line.split_whitespace().nth(1).unwrap_or_default().to_string()
        };
        for job in ["dedup", "annotate"] {
            let out = dir.path(&format!("v{v}-{job}.kbz"));
            let mut args = vec![job, s(&input), "-o", s(&out)];
            if job == "annotate" {
                args.extend(["--depth", "1"]);
            }
            let (code, _, err) = kibitz(&args);
            assert_eq!(code, 0, "v{v} {job}: {err}");
            let (code, after, err) = kibitz(&["inspect", s(&out)]);
            assert_eq!(code, 0, "v{v} {job}: {err}");
            let current = format!("kbz version {}", kibitz::FORMAT_VERSION);
            assert!(after.contains(&current), "v{v} {job}: {after}");
            assert_eq!(labels(&after), labels(&before), "v{v} {job}");
        }
    }
}
