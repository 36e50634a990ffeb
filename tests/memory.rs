//! Memory that does not grow with the input: a command's peak resident set
//! (the child's `VmHWM`) on an input of about 300 MB is
//! within a few MB of the same command's on a 16 MB input, and within the
//! hash tables plus 64 MB per thread.
//!
//! The inputs are the sample games with a comment of random hex digits in
//! each, so that zstd cannot shrink 300 MB of text to a few (a compressed
//! input that stayed resident would go unseen), written plain, as one zstd
//! frame (as the zstd tool writes) and as frames of 1 MB of text (as
//! pzstd and Lichess write). Ignored by default (about two minutes);
//! `.ci/run` runs it with the long tests.

use std::{
    io::Write,
    path::{Path, PathBuf},
    process::Stdio,
};

use crate::util::{Rng, TempDir, kibitz_command, s, sample};

/// Runs kibitz with `args`: its exit code and peak resident set in MiB,
/// the child's `VmHWM` read from `/proc` every few milliseconds while it
/// runs. (`ru_maxrss` from `wait4` would not do: a child started by vfork,
/// as `Command` starts it, counts the parent's own peak in its maximum,
/// and this test's parent has held 300 MB of text.)
fn peak_mib<A: AsRef<std::ffi::OsStr>>(args: &[A]) -> (i32, f64) {
    let mut child = kibitz_command()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("run kibitz");
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak_kib = 0u64;
    let code = loop {
        if let Ok(status) = std::fs::read_to_string(&status_file)
            && let Some(line) = status.lines().find(|l| l.starts_with("VmHWM:"))
        {
            let kib = line.split_whitespace().nth(1).and_then(|v| v.parse().ok());
            peak_kib = peak_kib.max(kib.unwrap_or(0));
        }
        if let Some(status) = child.try_wait().expect("wait") {
            break status.code().unwrap_or(-1);
        }
        std::thread::sleep(std::time::Duration::from_millis(3));
    };
    assert!(
        peak_kib > 0,
        "no VmHWM read for {:?}",
        args.iter().map(|a| a.as_ref()).collect::<Vec<_>>()
    );
    (code, peak_kib as f64 / 1024.0)
}

/// Writes about `bytes` of games: the sample's, each with a comment of
/// random hex digits before its first move. Returns the paths of the plain
/// text, one zstd frame, and zstd frames of 1 MB of text each.
fn inputs(dir: &TempDir, name: &str, bytes: usize, rng: &mut Rng) -> [PathBuf; 3] {
    let sample = std::fs::read_to_string(sample()).unwrap();
    let games: Vec<&str> =
        sample.split("\n[Event ").map(|g| g.strip_prefix("[Event ").unwrap_or(g)).collect();
    let mut text = Vec::with_capacity(bytes + 4096);
    let hex = b"0123456789abcdef";
    while text.len() < bytes {
        for game in &games {
            let (tags, moves) = game.split_once("\n\n").expect("tags, then moves");
            text.extend_from_slice(b"[Event ");
            text.extend_from_slice(tags.as_bytes());
            text.extend_from_slice(b"\n\n{ ");
            for _ in 0..800 {
                text.push(hex[rng.below(16)]);
            }
            text.extend_from_slice(b" }\n");
            text.extend_from_slice(moves.trim_end().as_bytes());
            text.extend_from_slice(b"\n\n");
        }
    }
    let plain = dir.path(&format!("{name}.pgn"));
    std::fs::write(&plain, &text).unwrap();
    let zst = dir.path(&format!("{name}.pgn.zst"));
    let mut encoder = zstd::Encoder::new(std::fs::File::create(&zst).unwrap(), 1).unwrap();
    encoder.write_all(&text).unwrap();
    encoder.finish().unwrap();
    let multi = dir.path(&format!("{name}.multi.pgn.zst"));
    let mut out = std::io::BufWriter::new(std::fs::File::create(&multi).unwrap());
    for piece in text.chunks(1 << 20) {
        out.write_all(&zstd::encode_all(piece, 1).unwrap()).unwrap();
    }
    out.flush().unwrap();
    [plain, zst, multi]
}

/// The commands measured on an input, with the files they write in `dir`.
fn commands(input: &Path, dir: &TempDir) -> Vec<(String, Vec<String>)> {
    let input = s(input).to_string();
    let kbz = s(&dir.path("out.kbz")).to_string();
    let owned = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    vec![
        ("replay -j 2".into(), owned(&["replay", "--quiet", "-j", "2", &input])),
        (
            "annotate -j 2".into(),
            owned(&[
                "annotate", &input, "-o", &kbz, "--force", "-d", "1", "--hash", "16", "--sample",
                "0.001", "-j", "2",
            ]),
        ),
        (
            "annotate -j 1".into(),
            owned(&[
                "annotate", &input, "-o", &kbz, "--force", "-d", "1", "--hash", "16", "--sample",
                "0.001", "-j", "1",
            ]),
        ),
    ]
}

#[test]
#[ignore = "about two minutes: .ci/run runs it"]
fn peak_memory_does_not_grow_with_the_input() {
    let dir = TempDir::new("memory");
    let mut rng = Rng::new(31);
    let small = inputs(&dir, "small", 16 << 20, &mut rng);
    let large = inputs(&dir, "large", 300 << 20, &mut rng);
    let kinds = ["plain", "zstd", "zstd frames"];
    let mut failures = Vec::new();
    for ((kind, small), large) in kinds.iter().zip(&small).zip(&large) {
        let sizes =
            (std::fs::metadata(small).unwrap().len(), std::fs::metadata(large).unwrap().len());
        assert!(sizes.1 > 80 << 20, "{kind}: the large input is only {} bytes", sizes.1);
        for ((name, small_args), (_, large_args)) in
            commands(small, &dir).into_iter().zip(commands(large, &dir))
        {
            let (code_small, peak_small) = peak_mib(&small_args);
            let (code_large, peak_large) = peak_mib(&large_args);
            assert_eq!((code_small, code_large), (0, 0), "{name} on {kind}");
            let threads = if name.ends_with("-j 2") { 2.0 } else { 1.0 };
            // Hash tables (16 MiB a thread, annotate) plus 64 MB a thread.
            let bound = threads * (16.0 + 64.0);
            eprintln!(
                "{name}, {kind}: {peak_small:.0} MiB on {} MB, {peak_large:.0} MiB on {} MB \
                 (bound {bound:.0})",
                sizes.0 / 1_000_000,
                sizes.1 / 1_000_000
            );
            if peak_large > peak_small + 8.0 || peak_large > bound {
                failures.push(format!(
                    "{name}, {kind}: {peak_large:.0} MiB on {} MB against {peak_small:.0} MiB \
                     on {} MB (at most 8 MiB more, and {bound:.0} MiB)",
                    sizes.1 / 1_000_000,
                    sizes.0 / 1_000_000
                ));
            }
        }
    }
    // The .kbz commands read the large run's output in bounded memory too.
    let kbz = dir.path("out.kbz");
    for args in [
        vec!["export", s(&kbz), "--format", "plain", "-o", s(&dir.path("out.plain"))],
        vec!["stats", s(&kbz), "--json"],
        vec!["dedup", s(&kbz), s(&kbz), "-o", s(&dir.path("d.kbz")), "--force"],
    ] {
        let (code, peak) = peak_mib(&args);
        assert_eq!(code, 0, "{args:?}");
        eprintln!("{}: {peak:.0} MiB", args[0]);
        if peak > 80.0 {
            failures.push(format!("{}: {peak:.0} MiB on a .kbz", args[0]));
        }
    }
    assert!(failures.is_empty(), "peak memory grows with the input:\n{}", failures.join("\n"));
}
