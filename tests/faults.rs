//! Fault injection: broken, endless and changing inputs, and outputs that
//! fail under the writer (full disk, removed file, closed pipe, signals).
//! Every case must end with a clear message and an exit code, never a
//! crash, a hang, or a file that passes for complete when it is not.
//! docs/RELIABILITY.md lists each fault with the test that shows it.
//!
//! Tests that mount a tmpfs (a full disk, a read-only directory) need root
//! and are `#[ignore]`d; `.ci/run` runs them.

use std::{
    io::{Read, Write},
    path::{Path, PathBuf},
    process::{Child, Command, Output, Stdio},
    time::{Duration, Instant},
};

use serde_json::Value;

use crate::util::{Rng, TempDir, s, sample};

fn bin() -> Command {
    crate::util::kibitz_command()
}

/// Waits for a child at most `limit`, reading its output meanwhile; kills
/// it and fails if it runs over (a hang).
fn wait_for(child: Child, limit: Duration, what: &str) -> Output {
    let pid = child.id() as libc::pid_t;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            // Safety: kill(2) on our own child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("{what}: still running after {limit:?} (a hang)");
        }
    }
}

fn run(args: &[&str], limit: Duration) -> (i32, String, String) {
    let child = bin()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_for(child, limit, &args.join(" "));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn replay_json(args: &[&str]) -> (i32, Value, String) {
    let mut all = vec!["replay", "--json", "--quiet"];
    all.extend_from_slice(args);
    let (code, out, err) = run(&all, Duration::from_secs(60));
    let v = serde_json::from_str(&out).unwrap_or_else(|e| panic!("bad json ({e}): {out} {err}"));
    (code, v, err)
}

fn games(v: &Value) -> u64 {
    v["games"].as_u64().unwrap()
}

/// The sample's games, one string each.
fn sample_games() -> Vec<Vec<u8>> {
    let text = std::fs::read(sample()).unwrap();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 1;
    while i < text.len() {
        if text[i] == b'[' && text[..i].ends_with(b"\n\n") {
            // A new game starts after a blank line, unless the previous
            // non-blank line is a tag (a tag section split by blank lines).
            let prev = text[..i].trim_ascii_end();
            let line = prev.rsplit(|&b| b == b'\n').next().unwrap_or(b"");
            if !line.starts_with(b"[") {
                out.push(text[start..i].to_vec());
                start = i;
            }
        }
        i += 1;
    }
    out.push(text[start..].to_vec());
    out
}

// ------------------------------------------------------------------ input

#[test]
fn binary_devices_and_utf16_are_refused_at_once() {
    let dir = TempDir::new("binary");
    let utf16 = dir.path("utf16.pgn");
    let text = std::fs::read_to_string(sample()).unwrap();
    let mut bytes = vec![0xff, 0xfe];
    for unit in text.encode_utf16() {
        bytes.extend_from_slice(&unit.to_le_bytes());
    }
    std::fs::write(&utf16, bytes).unwrap();
    let (code, v, err) = replay_json(&["/dev/zero", s(&utf16), s(&sample())]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("/dev/zero at byte 0: binary data, not PGN or EPD text"), "{err}");
    assert!(err.contains("utf16.pgn at byte 0: binary data"), "{err}");
    assert_eq!(games(&v), 20, "the sample after them is read whole");
    // annotate too: the output is complete and valid, the exit code says
    // an input was refused.
    let out = dir.path("zero.kbz");
    let (code, _, err) = run(
        &["annotate", "--quiet", "--depth", "1", "-o", s(&out), "/dev/zero", s(&sample())],
        Duration::from_secs(60),
    );
    assert_eq!(code, 1, "{err}");
    let (code, inspected, err) = run(&["inspect", s(&out)], Duration::from_secs(30));
    assert_eq!(code, 0, "{err}");
    assert!(inspected.contains("games     20"), "{inspected}");
}

/// Archives kibitz does not decompress are named, so the user knows what
/// to do; random bytes (few NULs, many control bytes) are binary data. Both
/// were once parsed as a few empty games with exit code 0.
#[test]
fn archives_and_random_bytes_are_refused() {
    let dir = TempDir::new("archives");
    let mut rng = Rng::new(11);
    let noise: Vec<u8> = (0..100_000).map(|_| rng.below(255) as u8 + 1).collect();
    let cases: [(&str, &[u8], &str); 4] = [
        ("a.pgn.bz2", b"BZh91AY&SY", "bzip2-compressed data: kibitz reads zstd and gzip"),
        ("a.pgn.xz", b"\xfd7zXZ\x00\x00\x04", "xz-compressed data"),
        ("a.zip", b"PK\x03\x04\x14\x00", "zip-compressed data"),
        ("noise.pgn", b"", "binary data, not PGN or EPD text"),
    ];
    for (name, magic, expected) in cases {
        let path = dir.path(name);
        std::fs::write(&path, [magic, &noise[..]].concat()).unwrap();
        let (code, v, err) = replay_json(&[s(&path), s(&sample())]);
        assert_eq!(code, 1, "{name}: {err}");
        assert!(err.contains(&format!("{name} at byte 0: {expected}")), "{name}: {err}");
        assert_eq!(games(&v), 20, "{name}: the sample after it is read whole");
    }
    // A stray control byte in a short text is left to the parser: a short
    // file (or a short first read from a pipe) is not refused for it.
    let short = dir.path("short.pgn");
    std::fs::write(&short, "[Event \"x\"]\n\n1. e4 { \x1b } e5 *\n").unwrap();
    let (code, v, err) = replay_json(&[s(&short)]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(games(&v), 1, "{err}");
}

#[test]
fn endless_stream_stops_at_max_bytes() {
    // A writer that never stops: the same moves for ever on standard input.
    let mut child = bin()
        .args(["replay", "--json", "--quiet", "--max-bytes", "3000000", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let game = std::fs::read(sample()).unwrap();
        let mut written = 0u64;
        // Stops when kibitz closes the pipe (or after 1 GB: a failure).
        while written < 1 << 30 {
            if stdin.write_all(&game).is_err() {
                return written;
            }
            written += game.len() as u64;
        }
        written
    });
    let out = wait_for(child, Duration::from_secs(60), "replay --max-bytes");
    let written = writer.join().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("stopped after 3000000 bytes of text, the limit set"), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    // Whole games only: those whose text ends before byte 3,000,000 (the
    // next game's first byte is then inside the limit).
    let lengths: Vec<usize> = sample_games().iter().map(Vec::len).collect();
    let mut end = 0;
    let mut whole = 0u64;
    for len in lengths.iter().cycle() {
        end += len;
        if end >= 3_000_000 {
            break;
        }
        whole += 1;
    }
    assert_eq!(games(&v), whole, "{v}");
    assert!(written < 1 << 30, "kibitz kept reading past --max-bytes");
}

#[test]
fn fifo_input_is_streamed() {
    let dir = TempDir::new("fifo");
    let fifo = dir.path("games.fifo");
    let name = std::ffi::CString::new(s(&fifo)).unwrap();
    // Safety: a valid C string; mkfifo only creates a file.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    let path = fifo.clone();
    let writer = std::thread::spawn(move || {
        let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.write_all(&std::fs::read(sample()).unwrap().repeat(3)).unwrap();
    });
    let (code, v, err) = replay_json(&[s(&fifo)]);
    writer.join().unwrap();
    assert_eq!(code, 0, "{err}");
    assert_eq!(games(&v), 60);
}

/// One zstd frame per game: truncating at each frame boundary leaves
/// exactly the games of the frames before it; anywhere else inside a frame
/// is reported (offset named) and the games before it are kept.
#[test]
fn truncation_at_every_frame_boundary_and_random_offsets() {
    let dir = TempDir::new("truncate");
    let games_text = sample_games();
    assert_eq!(games_text.len(), 20);
    let mut file = Vec::new();
    let mut ends = Vec::new();
    for g in &games_text {
        file.extend(zstd::encode_all(&g[..], 3).unwrap());
        ends.push(file.len());
    }
    let path = dir.path("cut.pgn.zst");
    for (k, &end) in ends.iter().enumerate() {
        std::fs::write(&path, &file[..end]).unwrap();
        let (code, v, err) = replay_json(&[s(&path)]);
        assert_eq!((code, games(&v)), (0, k as u64 + 1), "cut after frame {k}: {err}");
    }
    let mut rng = Rng::new(5);
    for _ in 0..40 {
        let cut = 1 + rng.below(file.len() - 1);
        if ends.contains(&cut) {
            continue;
        }
        let whole = ends.iter().filter(|&&e| e <= cut).count() as u64;
        std::fs::write(&path, &file[..cut]).unwrap();
        let (code, v, err) = replay_json(&[s(&path)]);
        assert_eq!(code, 1, "cut at {cut}: {err}");
        assert!(err.contains("cut.pgn.zst at byte"), "{err}");
        assert_eq!(games(&v), whole, "cut at {cut}: {err}");
    }
    // Plain text cut anywhere: the last game is shorter or rejected, never
    // a crash; games before it are all there.
    let text = std::fs::read(sample()).unwrap();
    let plain = dir.path("cut.pgn");
    let starts: Vec<usize> = games_text
        .iter()
        .scan(0, |at, g| {
            let start = *at;
            *at += g.len();
            Some(start)
        })
        .collect();
    for _ in 0..40 {
        let cut = rng.below(text.len());
        std::fs::write(&plain, &text[..cut]).unwrap();
        let (code, v, err) = replay_json(&[s(&plain)]);
        assert_eq!(code, 0, "{err}");
        let begun = starts.iter().filter(|&&st| st < cut).count() as u64;
        assert!(games(&v) <= begun && games(&v) + 1 >= begun, "cut at {cut}: {v}");
    }
}

/// A single-frame zstd or a gzip file cut anywhere: the decoder hands over
/// text up to the break, which ends inside a game. That game is not counted
/// as a (shorter) replayed game: the games read are whole games, their plies
/// exactly those of the same games uncut, and the error says which game was
/// dropped.
#[test]
fn a_game_cut_by_broken_compression_is_not_counted() {
    let dir = TempDir::new("cutgame");
    let games_text = sample_games();
    // Plies of the first k games, for every k.
    let prefix = dir.path("prefix.pgn");
    let mut plies_before = vec![0u64];
    for k in 1..=games_text.len() {
        std::fs::write(&prefix, games_text[..k].concat()).unwrap();
        let (code, v, err) = replay_json(&[s(&prefix)]);
        assert_eq!((code, games(&v)), (0, k as u64), "{err}");
        plies_before.push(v["plies"].as_u64().unwrap());
    }
    let text = games_text.concat();
    // zstd hands over text a block at a time: a block every 700 bytes (a
    // flush ends one), so that a cut leaves text ending inside a game.
    let mut zst = zstd::stream::Encoder::new(Vec::new(), 1).unwrap();
    for piece in text.chunks(700) {
        zst.write_all(piece).unwrap();
        zst.flush().unwrap();
    }
    let zst = zst.finish().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&text).unwrap();
    let gz = gz.finish().unwrap();
    // A frame every 700 bytes (decoded frame by frame in parallel): a frame
    // that breaks ends the text inside a game too.
    let multi: Vec<u8> =
        text.chunks(700).flat_map(|piece| zstd::encode_all(piece, 1).unwrap()).collect();
    let frame_ends = frame_ends(&multi);
    assert_eq!(frame_ends.len(), text.len().div_ceil(700));
    let mut rng = Rng::new(11);
    let mut dropped = 0;
    for (name, bytes) in [("cut.pgn.zst", &zst), ("cut.pgn.gz", &gz), ("cut.multi.pgn.zst", &multi)]
    {
        assert!(bytes.len() > 1000, "{name}: {} bytes", bytes.len());
        let path = dir.path(name);
        for _ in 0..25 {
            let cut = 20 + rng.below(bytes.len() - 40);
            if bytes == &multi && frame_ends.contains(&cut) {
                continue; // whole frames: nothing is broken
            }
            std::fs::write(&path, &bytes[..cut]).unwrap();
            let (code, v, err) = replay_json(&[s(&path)]);
            assert_eq!(code, 1, "{name} cut at {cut}: {err}");
            let k = games(&v) as usize;
            assert!(k < games_text.len(), "{name} cut at {cut}: {v}");
            assert_eq!(
                v["plies"].as_u64().unwrap(),
                plies_before[k],
                "{name} cut at {cut}: a partial game was counted: {v} {err}"
            );
            if err.contains("(the game it cuts, from text byte ") {
                dropped += 1;
            }
        }
    }
    assert!(dropped >= 60, "only {dropped} of 75 cuts named the game they dropped");

    // EPD, gzip cut anywhere: the positions read are the whole lines of
    // the text handed over, the line the break cuts is not read.
    let epd = std::fs::read(crate::util::sample().with_file_name("bench.epd")).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&epd).unwrap();
    let gz = gz.finish().unwrap();
    let path = dir.path("cut.epd.gz");
    for _ in 0..15 {
        let cut = 20 + rng.below(gz.len() - 40);
        std::fs::write(&path, &gz[..cut]).unwrap();
        let (code, v, err) = replay_json(&["--format", "epd", s(&path)]);
        assert_eq!(code, 1, "epd cut at {cut}: {err}");
        let read = v["text_bytes"].as_u64().unwrap() as usize;
        assert!(read == 0 || epd[read - 1] == b'\n', "epd cut at {cut}: text ends mid-line: {v}");
        let lines =
            epd[..read].split(|&b| b == b'\n').filter(|l| l.first().is_some_and(|&c| c != b'#'));
        assert_eq!(games(&v), lines.count() as u64, "epd cut at {cut}: {v} {err}");
    }
}

#[test]
fn bit_flips_in_compressed_and_plain_input() {
    let dir = TempDir::new("flips");
    let text = std::fs::read(sample()).unwrap();
    // With its checksum, as the zstd tool writes by default.
    let mut zst = zstd::stream::Encoder::new(Vec::new(), 19).unwrap();
    zst.include_checksum(true).unwrap();
    zst.write_all(&text).unwrap();
    let zst = zst.finish().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&text).unwrap();
    let gz = gz.finish().unwrap();
    let mut rng = Rng::new(9);
    let path = dir.path("flipped");
    let mut reported = 0;
    for (name, original) in [("plain", &text), ("zst", &zst), ("gz", &gz)] {
        for _ in 0..30 {
            let mut bytes = original.clone();
            let at = rng.below(bytes.len());
            bytes[at] ^= 1 << rng.below(8);
            std::fs::write(&path, &bytes).unwrap();
            let (code, v, err) = replay_json(&[s(&path)]);
            assert!(code == 0 || code == 1, "{name} flip at {at}: exit {code}: {err}");
            // A flip can split games (a new `[` line); in gzip, whose
            // checksum comes at the end, the damage is read before it is
            // found (and then reported). Bounded all the same.
            assert!(games(&v) <= 200, "{name}: {v}");
            if code == 1 {
                assert!(err.contains("flipped at byte"), "{err}");
                reported += 1;
            } else if name != "plain" {
                // A flip in compressed data is caught by its checksum (or
                // breaks the decoding) unless it hits a header field that
                // does not matter.
                assert!(games(&v) >= 1, "{name} flip at {at}: {v}");
            }
        }
    }
    assert!(reported > 0, "no flip in compressed data was reported");
}

/// Writes `n` copies of the sample to `path` (a large plain input).
fn big_input(path: &Path, n: usize) {
    let text = std::fs::read(sample()).unwrap();
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for _ in 0..n {
        f.write_all(&text).unwrap();
    }
    f.flush().unwrap();
}

/// A mapped input truncated while it is read: no SIGBUS, the lost part is
/// reported, and the exit code says so.
#[test]
fn input_truncated_while_mapped_is_reported_not_a_crash() {
    let dir = TempDir::new("shrink");
    let path = dir.path("big.pgn");
    big_input(&path, 12_000); // 96 MB: a few seconds on one thread
    let child = bin()
        .args(["replay", "--json", "--quiet", "--threads", "1", s(&path)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(400));
    std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(1 << 20).unwrap();
    let out = wait_for(child, Duration::from_secs(120), "replay of a shrinking file");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "killed by a signal? {:?} {err}", out.status);
    assert!(err.contains("shrank from 96456000 to 1048576 bytes"), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(games(&v) < 240_000, "{v}");
}

#[test]
fn input_grown_while_mapped_is_reported() {
    let dir = TempDir::new("grow");
    let path = dir.path("big.pgn");
    big_input(&path, 12_000);
    let child = bin()
        .args(["replay", "--json", "--quiet", "--threads", "1", s(&path)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(400));
    let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(&std::fs::read(sample()).unwrap()).unwrap();
    drop(f);
    let out = wait_for(child, Duration::from_secs(120), "replay of a growing file");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("grew from 96456000 to 96464038 bytes"), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(games(&v), 240_000, "the bytes mapped at the start are read whole");
}

// ----------------------------------------------------------------- output

fn annotate_small(dir: &TempDir, out: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["annotate", "--quiet", "--depth", "1", "--block-games", "2", "-o", s(out)];
    args.extend_from_slice(extra);
    let input = dir.path("in.pgn");
    if !input.exists() {
        big_input(&input, 4);
    }
    let input = input.to_str().unwrap().to_string();
    args.push(&input);
    run(&args, Duration::from_secs(120))
}

#[test]
fn export_to_a_full_device_fails_clearly() {
    let dir = TempDir::new("devfull");
    let kbz = dir.path("s.kbz");
    assert_eq!(annotate_small(&dir, &kbz, &[]).0, 0);
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let out = bin()
        .args(["export", s(&kbz), "--format", "plain"])
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
}

#[test]
fn broken_pipe_ends_export_quietly() {
    let dir = TempDir::new("pipe");
    let kbz = dir.path("s.kbz");
    assert_eq!(annotate_small(&dir, &kbz, &[]).0, 0);
    let mut child = bin()
        .args(["export", s(&kbz), "--format", "plain"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read one line, then close the pipe: `kibitz export | head -1`.
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 64];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let out = wait_for(child, Duration::from_secs(30), "export into a closed pipe");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.is_empty(), "no message for a reader that stopped reading: {err}");
}

#[test]
fn output_removed_mid_run_is_an_error() {
    let dir = TempDir::new("removed");
    let input = dir.path("big.pgn");
    big_input(&input, 30);
    let out = dir.path("gone.kbz");
    let child = bin()
        .args(["annotate", "--quiet", "--depth", "6", "--block-games", "4", "--threads", "1"])
        .args(["-o", s(&out), s(&input)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while std::fs::metadata(&out).map_or(0, |m| m.len()) < 400 {
        assert!(start.elapsed() < Duration::from_secs(60), "no block written");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::remove_file(&out).unwrap();
    let result = wait_for(child, Duration::from_secs(300), "annotate with its output removed");
    let err = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(1), "{err}");
    assert!(err.contains("was removed or replaced while being written"), "{err}");
}

#[test]
fn sigterm_closes_cleanly_and_resume_completes() {
    let dir = TempDir::new("sigterm");
    let input = dir.path("big.pgn");
    big_input(&input, 12);
    let out = dir.path("t.kbz");
    let args = ["annotate", "--quiet", "--depth", "7", "--block-games", "16"];
    let child = bin()
        .args(args)
        .args(["-o", s(&out), s(&input)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    // Safety: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) }, 0);
    let result = wait_for(child, Duration::from_secs(60), "annotate after SIGTERM");
    assert_eq!(result.status.code(), Some(130), "finished before the signal? {:?}", result.status);
    let (code, _, err) = run(&["inspect", s(&out)], Duration::from_secs(30));
    assert_eq!(code, 1, "an interrupted file must read as incomplete: {err}");
    assert!(err.contains("incomplete: no end marker"), "{err}");
    let (code, _, err) = run(
        &[&args[..], &["--resume", "-o", s(&out), s(&input)]].concat(),
        Duration::from_secs(300),
    );
    assert_eq!(code, 0, "{err}");
    let whole = dir.path("whole.kbz");
    let (code, _, err) =
        run(&[&args[..], &["-o", s(&whole), s(&input)]].concat(), Duration::from_secs(300));
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&whole).unwrap());
}

/// Where each zstd frame of a `.kbz` file ends (header, blocks, end
/// marker), by the frame headers.
pub fn frame_ends(bytes: &[u8]) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut at = 0;
    while let Some(end) = kibitz::zstd_frame_end(bytes, at) {
        ends.push(end);
        at = end;
    }
    ends
}

#[test]
fn kbz_cut_at_every_block_boundary_reads_as_incomplete_and_resumes() {
    let dir = TempDir::new("kbzcut");
    let whole = dir.path("whole.kbz");
    assert_eq!(annotate_small(&dir, &whole, &[]).0, 0);
    let bytes = std::fs::read(&whole).unwrap();
    let ends = frame_ends(&bytes);
    assert_eq!(*ends.last().unwrap(), bytes.len());
    assert!(ends.len() >= 10, "{} frames", ends.len());
    let cut = dir.path("cut.kbz");
    let mut rng = Rng::new(3);
    // Every block boundary (not the header's end, not the file's end) and
    // random offsets inside frames.
    let mut points: Vec<usize> = ends[..ends.len() - 1].to_vec();
    points.extend((0..12).map(|_| ends[0] + 1 + rng.below(bytes.len() - ends[0] - 2)));
    for &p in &points {
        std::fs::write(&cut, &bytes[..p]).unwrap();
        let (code, _, err) = run(&["inspect", s(&cut)], Duration::from_secs(30));
        assert_eq!(code, 1, "cut at {p} passed inspect");
        assert!(
            err.contains("incomplete: no end marker") || err.contains("cut short"),
            "cut at {p}: {err}"
        );
        let (code, _, err) =
            run(&["export", s(&cut), "--format", "plain"], Duration::from_secs(30));
        assert_eq!(code, 1, "cut at {p}: export passed it as complete: {err}");
        let (code, _, err) = annotate_small(&dir, &cut, &["--resume"]);
        assert_eq!(code, 0, "resume after cut at {p}: {err}");
        assert!(std::fs::read(&cut).unwrap() == bytes, "resume after cut at {p} differs");
    }
    // A complete file resumed: its end marker goes and comes back.
    std::fs::write(&cut, &bytes).unwrap();
    let (code, _, err) = annotate_small(&dir, &cut, &["--resume"]);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::read(&cut).unwrap() == bytes, "resuming a complete file changed it");
}

/// With `--max-games`, a run cut at any block boundary and resumed writes
/// the whole file, not one that stops short (the games skipped on resuming
/// were once counted twice against the limit) and calls itself complete.
#[test]
fn resume_with_max_games_writes_the_whole_file() {
    let dir = TempDir::new("kbzcutmax");
    let whole = dir.path("whole.kbz");
    // 30 games: several chunks (about ten games each when searching).
    let limit = ["--max-games", "30"];
    assert_eq!(annotate_small(&dir, &whole, &limit).0, 0);
    let bytes = std::fs::read(&whole).unwrap();
    let ends = frame_ends(&bytes);
    // Header, fifteen blocks of two games, end marker.
    assert!(ends.len() >= 16, "{} frames", ends.len());
    let cut = dir.path("cut.kbz");
    for &p in &ends[1..ends.len() - 1] {
        std::fs::write(&cut, &bytes[..p]).unwrap();
        let (code, _, err) = annotate_small(&dir, &cut, &[&limit[..], &["--resume"]].concat());
        assert_eq!(code, 0, "resume after cut at {p}: {err}");
        assert!(std::fs::read(&cut).unwrap() == bytes, "resume after cut at {p} differs");
    }
}

#[test]
fn merge_refuses_an_incomplete_shard_and_leaves_nothing() {
    let dir = TempDir::new("mergecut");
    let a = dir.path("a.kbz");
    let b = dir.path("b.kbz");
    assert_eq!(annotate_small(&dir, &a, &["--shard", "0/2"]).0, 0);
    assert_eq!(annotate_small(&dir, &b, &["--shard", "1/2"]).0, 0);
    // Drop b's end marker (its last 48 bytes): an interrupted shard.
    let bytes = std::fs::read(&b).unwrap();
    std::fs::write(&b, &bytes[..bytes.len() - 48]).unwrap();
    let merged = dir.path("merged.kbz");
    let (code, _, err) = run(&["merge", s(&a), s(&b), "-o", s(&merged)], Duration::from_secs(60));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("is incomplete (no end marker)"), "{err}");
    assert!(!merged.exists(), "a failed merge left its output behind");
    // With the shard finished, the merge goes through.
    assert_eq!(annotate_small(&dir, &b, &["--shard", "1/2", "--resume"]).0, 0);
    let (code, _, err) = run(&["merge", s(&a), s(&b), "-o", s(&merged)], Duration::from_secs(60));
    assert_eq!(code, 0, "{err}");
    let whole = dir.path("whole.kbz");
    assert_eq!(annotate_small(&dir, &whole, &[]).0, 0);
    assert!(std::fs::read(&merged).unwrap() == std::fs::read(&whole).unwrap());
}

#[test]
fn threads_stay_bounded() {
    let dir = TempDir::new("threads");
    let input = dir.path("big.pgn");
    big_input(&input, 40);
    let out = dir.path("t.kbz");
    let child = bin()
        .args(["annotate", "--quiet", "--depth", "6", "--threads", "2", "-o", s(&out), s(&input)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let task_dir = PathBuf::from(format!("/proc/{}/task", child.id()));
    let mut most = 0;
    for _ in 0..20 {
        std::thread::sleep(Duration::from_millis(50));
        if let Ok(entries) = std::fs::read_dir(&task_dir) {
            most = most.max(entries.count());
        }
    }
    let result = wait_for(child, Duration::from_secs(300), "annotate");
    assert_eq!(result.status.code(), Some(0));
    // Main, reader, two workers, the signal thread, and the zstd frame
    // decoders' pool (one per core): bounded by the options, not the input.
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    assert!(most >= 4, "saw {most} threads: the run was not observed");
    assert!(most <= 5 + cores, "{most} threads for --threads 2");
}

/// Runs with a filesystem that fills up: a 256 KiB tmpfs.
#[test]
#[ignore = "needs root: mounts a tmpfs"]
fn disk_full_keeps_whole_blocks_and_resume_finishes() {
    let dir = TempDir::new("diskfull");
    let mnt = dir.path("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs", s(&mnt)])
        .status()
        .unwrap();
    assert!(mounted.success(), "mount failed: this test needs root");
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(mnt.clone());
    let input = dir.path("big.pgn");
    big_input(&input, 300);
    let out = mnt.join("full.kbz");
    let args = ["annotate", "--quiet", "--depth", "1", "--block-games", "50", "--skip-plies", "0"];
    let (code, _, err) =
        run(&[&args[..], &["-o", s(&out), s(&input)]].concat(), Duration::from_secs(300));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(err.contains("complete blocks"), "{err}");
    // What is on the disk: whole blocks, no end marker.
    let (code, inspected, err) = run(&["inspect", s(&out)], Duration::from_secs(30));
    assert_eq!(code, 1, "{err}");
    assert!(inspected.contains("every checksum verified; NO END MARKER"), "{inspected} {err}");
    // Move it where there is room and resume: the same bytes as a run that
    // never failed.
    let roomy = dir.path("full.kbz");
    std::fs::copy(&out, &roomy).unwrap();
    let (code, _, err) = run(
        &[&args[..], &["--resume", "-o", s(&roomy), s(&input)]].concat(),
        Duration::from_secs(300),
    );
    assert_eq!(code, 0, "{err}");
    let whole = dir.path("whole.kbz");
    let (code, _, err) =
        run(&[&args[..], &["-o", s(&whole), s(&input)]].concat(), Duration::from_secs(300));
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::read(&roomy).unwrap() == std::fs::read(&whole).unwrap());
}

#[test]
#[ignore = "needs root: mounts a read-only tmpfs"]
fn read_only_output_directory_fails_clearly() {
    let dir = TempDir::new("rodir");
    let mnt = dir.path("ro");
    std::fs::create_dir_all(&mnt).unwrap();
    let mounted =
        Command::new("mount").args(["-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", s(&mnt)]).status();
    assert!(mounted.unwrap().success(), "mount failed: this test needs root");
    let out = mnt.join("x.kbz");
    let (code, _, err) = annotate_small(&dir, &out, &[]);
    let _ = Command::new("umount").arg(&mnt).status();
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("cannot create") && err.contains("Read-only file system"), "{err}");
}

/// A main line longer than any legal game (knights shuffled for 80,000
/// plies): the first 65,535 plies are replayed, the game is reported as too
/// long, and memory does not grow with the rest.
#[test]
fn overlong_game_is_cut_and_reported() {
    let dir = TempDir::new("overlong");
    let path = dir.path("long.pgn");
    let mut text = String::from("[Event \"long\"]\n[Result \"*\"]\n\n");
    for i in 0..20_000 {
        text.push_str(&format!("{}. Nf3 Nf6 {}. Ng1 Ng8 ", 2 * i + 1, 2 * i + 2));
    }
    text.push_str("*\n\n");
    text.push_str(&std::fs::read_to_string(sample()).unwrap());
    std::fs::write(&path, text).unwrap();
    let errors = dir.path("errors.jsonl");
    let (code, v, err) = replay_json(&["--errors", s(&errors), s(&path)]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(games(&v), 21);
    assert_eq!(v["plies"].as_u64().unwrap(), 65_535 + 943);
    assert_eq!(v["rejected"]["too_long"], 1, "{v}");
    let line: Value =
        serde_json::from_str(std::fs::read_to_string(&errors).unwrap().lines().next().unwrap())
            .unwrap();
    assert_eq!(line["ply"], 65_536);
    assert_eq!(line["kind"], "too_long");
    // annotate keeps the first 65,535 plies of it and labels them quickly
    // (no scan of the whole reversible stretch at every node).
    let out = dir.path("long.kbz");
    let (code, _, err) = run(
        &["annotate", "--quiet", "--depth", "4", "-o", s(&out), s(&path)],
        Duration::from_secs(120),
    );
    assert_eq!(code, 0, "{err}");
}

/// An input that cannot be opened fails annotate before an output exists:
/// no file to clean up, and the corrected command runs without --force.
#[test]
fn an_input_that_cannot_be_opened_fails_before_any_output() {
    let dir = TempDir::new("missing-input");
    let out = dir.path("x.kbz");
    let missing = dir.path("missing.pgn");
    for inputs in [vec![s(&missing)], vec![s(&sample()), s(&missing)], vec![s(dir.root())]] {
        let mut args = vec!["annotate"];
        args.extend(&inputs);
        args.extend(["-o", s(&out), "--depth", "1"]);
        let (code, _, err) = run(&args, Duration::from_secs(60));
        assert_eq!(code, 1, "{err}");
        let named = inputs.last().unwrap();
        assert!(err.contains(&format!("{named}: cannot open")), "{err}");
        assert!(!out.exists(), "{inputs:?}: an output was written");
    }
    let (code, _, err) =
        run(&["annotate", s(&sample()), "-o", s(&out), "--depth", "1"], Duration::from_secs(60));
    assert_eq!(code, 0, "{err}");
    // An output that exists: said once, with what to do.
    let (code, _, err) =
        run(&["annotate", s(&sample()), "-o", s(&out), "--depth", "1"], Duration::from_secs(60));
    assert_eq!(code, 1);
    assert_eq!(err.matches("exists").count(), 1, "{err}");
    assert!(err.contains("--force") && err.contains("--resume"), "{err}");
}

/// A dedup killed part way (SIGKILL, nothing can clean up) leaves no output
/// and no temporary file behind, only its `.partial` file, which says what
/// it is; the same command run again needs no --force and writes what an
/// uninterrupted run writes.
#[test]
fn a_killed_dedup_leaves_no_output_and_runs_again() {
    let dir = TempDir::new("dedup-kill");
    let one = dir.path("one.kbz");
    let (code, _, err) = annotate_small(&dir, &one, &["--skip-plies", "0"]);
    assert_eq!(code, 0, "{err}");
    let out = dir.path("dd.kbz");
    let partial = dir.path("dd.kbz.partial");
    let mut copies = 200;
    let killed = loop {
        let inputs: Vec<PathBuf> = (0..copies).map(|i| dir.path(&format!("in{i}.kbz"))).collect();
        for input in &inputs {
            if !input.exists() {
                std::fs::copy(&one, input).unwrap();
            }
        }
        let mut child = bin()
            .arg("dedup")
            .args(&inputs)
            .args(["-o", s(&out), "--keep", "last", "--dedup-memory", "64K"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        // Kill it once its output is being written.
        while start.elapsed() < Duration::from_secs(120) {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            if std::fs::metadata(&partial).is_ok_and(|m| m.len() > 4096) {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let _ = child.kill();
        child.wait().unwrap();
        if !out.exists() {
            break inputs;
        }
        // It finished first: more input, and again.
        std::fs::remove_file(&out).unwrap();
        copies *= 2;
        assert!(copies < 5000, "dedup always finished before it could be killed");
    };
    assert!(!out.exists(), "a killed dedup left an output");
    let names: Vec<String> = std::fs::read_dir(dir.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".kbz") && n != "in.pgn")
        .collect();
    assert_eq!(names, ["dd.kbz.partial"], "what the killed dedup left");
    let (code, _, err) = run(&["inspect", s(&partial)], Duration::from_secs(60));
    assert_eq!(code, 1);
    assert!(err.contains("incomplete") && err.contains("run that command again"), "{err}");
    assert!(!err.contains("--resume"), "{err}");
    let mut args = vec!["dedup"];
    args.extend(killed.iter().map(|p| s(p)));
    args.extend(["-o", s(&out), "--keep", "last", "--dedup-memory", "64K"]);
    let (code, _, err) = run(&args, Duration::from_secs(300));
    assert_eq!(code, 0, "{err}");
    assert!(!partial.exists());
    let again = dir.path("again.kbz");
    let output_at = args.len() - 5;
    args[output_at] = s(&again);
    let (code, _, err) = run(&args, Duration::from_secs(300));
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::read(&out).unwrap() == std::fs::read(&again).unwrap());
}

/// One rule for outputs in every command: a file whose folder is missing
/// is an error that names the folder, and nothing is made (a typo in a path
/// leaves no stray tree of folders); a folder the user names (`stats
/// --plots`) or one that belongs to an output (train's cache beside its
/// net) is made, but never its missing parent.
#[test]
fn missing_folders_are_named_and_never_made() {
    let dir = TempDir::new("missing-folders");
    let kbz = dir.path("s.kbz");
    let sample = sample();
    let (code, _, err) = run(
        &["annotate", s(&sample), "-o", s(&kbz), "--depth", "1", "--max-games", "3", "-q"],
        Duration::from_secs(60),
    );
    assert_eq!(code, 0, "{err}");
    let gone = dir.path("no/such");
    let file = |name: &str| gone.join(name).to_str().unwrap().to_string();
    let (out_kbz, out_txt, out_net) = (file("x.kbz"), file("x.txt"), file("x.nnue"));
    let (plots, cache) = (file("plots"), file("cache"));
    let (page, net) = (dir.path("r.html"), dir.path("n.nnue"));
    let cases: Vec<Vec<&str>> = vec![
        vec!["annotate", s(&sample), "-o", &out_kbz, "--depth", "1"],
        vec![
            "annotate",
            s(&sample),
            "-o",
            s(&kbz),
            "--force",
            "--depth",
            "1",
            "--errors",
            &out_txt,
        ],
        vec!["selfplay", "-o", &out_kbz, "--games", "1", "--depth", "1"],
        vec!["export", s(&kbz), "--format", "plain", "-o", &out_txt],
        vec!["report", s(&kbz), "-o", &out_txt],
        vec!["report", s(&kbz), "-o", s(&page), "--json", &out_txt],
        vec!["replay", s(&sample), "--keys", &out_txt],
        vec!["replay", s(&sample), "--errors", &out_txt],
        vec!["dedup", s(&kbz), "-o", &out_kbz],
        vec!["merge", s(&kbz), "-o", &out_kbz],
        vec!["train", s(&kbz), "-o", &out_net, "--superbatches", "1", "--batches", "1"],
        vec!["train", s(&kbz), "-o", s(&net), "--cache", &cache],
        vec!["stats", s(&kbz), "--plots", &plots],
    ];
    for args in &cases {
        let (code, _, err) = run(args, Duration::from_secs(60));
        assert_ne!(code, 0, "{args:?}");
        assert!(err.contains(&format!("{}", dir.path("no").display())), "{args:?}: {err}");
        assert!(err.contains("does not exist"), "{args:?}: {err}");
        assert!(!dir.path("no").exists(), "{args:?} made a folder");
    }
    // A folder named for outputs is made, and train's cache beside its net.
    let plots = dir.path("plots");
    let (code, _, err) = run(&["stats", s(&kbz), "--plots", s(&plots)], Duration::from_secs(60));
    assert_eq!(code, 0, "{err}");
    assert!(plots.join("score.png").exists() && plots.join("score.svg").exists());
    let args = ["train", s(&kbz), "-o", s(&net), "--superbatches", "1", "--batches", "1", "-q"];
    let (code, _, err) =
        run(&[&args[..], &["--batch-size", "256"]].concat(), Duration::from_secs(60));
    assert_eq!(code, 0, "{err}");
    assert!(net.exists() && dir.path("n.nnue.train").is_dir());
}

/// Every command that writes a file, given input it cannot read whole (a
/// file that is no `.kbz`, one damaged past its header, a net that is no
/// net, an empty book): it exits 1, leaves no new file (nor a partial one)
/// and an older file of that name as it was.
#[test]
fn failed_runs_leave_no_file_and_keep_an_older_one() {
    let dir = TempDir::new("failed-runs");
    let good = dir.path("good.kbz");
    assert_eq!(annotate_small(&dir, &good, &[]).0, 0);
    let mut damaged = std::fs::read(&good).unwrap();
    let at = damaged.len() * 2 / 3;
    for b in &mut damaged[at..at + 64] {
        *b ^= 0x5a;
    }
    std::fs::write(dir.path("damaged.kbz"), damaged).unwrap();
    std::fs::write(dir.path("bad.kbz"), "not a kbz file\n").unwrap();
    std::fs::write(dir.path("bad.nnue"), "not a net\n").unwrap();
    std::fs::write(dir.path("empty.pgn"), "").unwrap();
    let p = |name: &str| dir.path(name).to_str().unwrap().to_string();
    // (arguments, the output, the flag that replaces a file: "" for none)
    let mut cases: Vec<(Vec<String>, String, &str)> = Vec::new();
    for format in ["plain", "binpack", "bullet", "jsonl", "pgn", "epd", "parquet"] {
        for input in ["bad.kbz", "damaged.kbz"] {
            let out = p(&format!("x.{format}"));
            let args = ["export", &p(input), "--format", format, "-o", &out];
            cases.push((args.map(String::from).to_vec(), out, ""));
        }
    }
    let out = p("x.kbz");
    for args in [
        vec!["dedup", "damaged.kbz"],
        vec!["merge", "good.kbz", "damaged.kbz"],
        vec!["annotate", "empty.pgn"],
        vec!["selfplay", "--games", "2", "--depth", "1", "--net", "bad.nnue"],
        vec!["selfplay", "--games", "2", "--depth", "1", "--book", "empty.pgn"],
    ] {
        let mut a: Vec<String> =
            args.iter().map(|&x| if x.contains('.') { p(x) } else { x.to_string() }).collect();
        a.extend(["-o".to_string(), out.clone()]);
        cases.push((a, out.clone(), "--force"));
    }
    let html = p("x.html");
    cases.push((["report", &p("damaged.kbz"), "-o", &html].map(String::from).to_vec(), html, ""));
    let net = p("x.nnue");
    for input in ["bad.kbz", "damaged.kbz"] {
        let a = ["train", &p(input), "--superbatches", "1", "--batches", "1", "-o", &net];
        cases.push((a.map(String::from).to_vec(), net.clone(), "--force"));
    }
    for (args, out, force) in &cases {
        let partial = format!("{out}.partial");
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, _, err) = run(&argv, Duration::from_secs(120));
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(!Path::new(out).exists(), "{args:?} left {out}");
        assert!(!Path::new(&partial).exists(), "{args:?} left {partial}");
        std::fs::write(out, "older file\n").unwrap();
        let mut argv = argv.clone();
        if !force.is_empty() {
            argv.push(force);
        }
        let (code, _, err) = run(&argv, Duration::from_secs(120));
        assert_ne!(code, 0, "{args:?}: {err}");
        assert_eq!(std::fs::read_to_string(out).unwrap(), "older file\n", "{args:?} replaced it");
        std::fs::remove_file(out).unwrap();
    }
}

/// An output that is no regular file is written directly, not aside: a
/// symbolic link stays a link (its target written), `/dev/stdout` is
/// written, and a directory is refused before any work.
#[test]
fn outputs_that_are_no_regular_file_are_written_in_place() {
    let dir = TempDir::new("aside-special");
    let good = dir.path("good.kbz");
    assert_eq!(annotate_small(&dir, &good, &[]).0, 0);
    let target = dir.path("target.plain");
    let link = dir.path("link.plain");
    std::fs::write(&target, "").unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let args = ["export", s(&good), "--format", "plain", "-o", s(&link)];
    let (code, _, err) = run(&args, Duration::from_secs(60));
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert!(std::fs::read_to_string(&target).unwrap().contains("fen "), "the target is empty");
    let args = ["export", s(&good), "--format", "plain", "-o", "/dev/stdout"];
    let (code, out, err) = run(&args, Duration::from_secs(60));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("fen "), "{out}");
    let folder = dir.path("folder");
    std::fs::create_dir(&folder).unwrap();
    let args = ["export", s(&good), "--format", "plain", "-o", s(&folder)];
    let (code, _, err) = run(&args, Duration::from_secs(60));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("is a directory"), "{err}");
}
