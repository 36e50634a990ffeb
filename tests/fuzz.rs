//! Fuzzing without libFuzzer (the toolchain is stable, so cargo-fuzz is out):
//! a seeded mutation driver with a small corpus kept by outcome features,
//! and `arbitrary` for structured inputs. Seven targets:
//!
//! * `fen`: bytes as a FEN and as an EPD line; an accepted position must be
//!   consistent, round-trip through its FEN, and play and unplay its moves;
//! * `san`: bytes as SAN and UCI on a set of positions; an accepted move is
//!   legal;
//! * `pgn`: bytes as a PGN chunk through the whole replay path, keys
//!   and every other incremental field verified after every move
//!   (`--verify full`);
//! * `kbz`: `.kbz` files from a real one, mutated as bytes and inside their
//!   frames (decompressed, mutated, recompressed with a valid checksum, so
//!   the mutation reaches the decoder), read, walked and exported to every
//!   format;
//! * `moves`: an `arbitrary` sequence of 16-bit move encodings, null moves
//!   and undos on a set of positions: every encoding is either legal (it is
//!   in the legal move list) and then plays with incremental state equal to
//!   the from-scratch state, or is refused;
//! * `net`: bytes as the start of a Stockfish net (a synthetic net's header
//!   and first weights as seeds): read alone (a short file), and, when the
//!   header still holds, written over the start of a whole net; the reader
//!   must give a net or an error, never a panic;
//! * `kibitz-net`: bytes as a kibitz net (`kibitz train`'s format, a
//!   synthetic net's bytes as seeds), read as they are and with the
//!   checksum made right (so a mutation reaches the header's checks and the
//!   weights): a net that reads evaluates a position, or an error names the
//!   file.
//!
//! Each target runs a few thousand inputs in the default suite. For long
//! runs, `KIBITZ_FUZZ_SECONDS=600 cargo test --release -- --ignored fuzz_`
//! (or `scripts/fuzz.sh SECONDS`): the `long_*` tests run each target for
//! that long. `KIBITZ_FUZZ_SEED=N` draws other mutations (the seed is in
//! the log and the stats), so one target runs on every core at once with
//! a seed each (`JOBS=2 SEEDS="1 2" scripts/fuzz.sh`). Seeds come from `data/` and, when present, `../shared/data`.
//! A panic saves its input under `target/fuzz/crashes/` (replay it with
//! `KIBITZ_FUZZ_REPLAY=FILE`); an input that runs more than 10 seconds is
//! saved and the process aborts (a hang). Counts go to stderr and to
//! `target/fuzz/stats.tsv`. Seconds are CPU seconds (`/proc/self/stat`), so
//! a run niced under other work, or stopped and continued, counts the
//! core-time it fuzzed.

use std::{
    collections::HashSet,
    hash::{Hash, Hasher},
    io::Write,
    panic::AssertUnwindSafe,
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use arbitrary::{Arbitrary, Unstructured};
use kibitz::{
    EpdLine, ExportFormat, Exporter, FenOptions, KbzReader, Move, Position, ReplayOptions,
    Replayer, Verify, walk,
};

use crate::{
    props::{exercise_fen, exercise_san},
    util::{Rng, shared},
};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fuzz_dir() -> PathBuf {
    root().join("target/fuzz")
}

/// The run's seed: `KIBITZ_FUZZ_SEED` (0 when unset, the inputs every
/// earlier run drew). Runs of one target with different seeds draw
/// different mutations, so a target can run on every core at once.
fn fuzz_seed() -> u64 {
    match std::env::var("KIBITZ_FUZZ_SEED") {
        Ok(s) => s.trim().parse().unwrap_or_else(|_| panic!("KIBITZ_FUZZ_SEED={s}: not a number")),
        Err(_) => 0,
    }
}

/// A generator for a part of a target (`salt` tells the parts apart),
/// drawn from the run's seed.
fn seeded(salt: u64) -> Rng {
    Rng::new(salt ^ fuzz_seed().wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// CPU seconds this process has used (user and system, every thread), from
/// `/proc/self/stat`; wall-clock seconds since `start` where that file is
/// missing. Budgets, the hang watchdog and the stats count CPU time, so a run
/// niced below other work, or stopped (`kill -STOP`) and continued, still
/// counts the core-seconds it fuzzed and never mistakes a pause for a hang.
fn cpu_seconds(start: Instant) -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").ok();
    // The command name (field 2) may hold spaces: count fields after its `)`.
    let ticks = stat.as_deref().and_then(|s| s.rsplit_once(')')).and_then(|(_, rest)| {
        let mut fields = rest.split_whitespace().skip(11);
        let user: u64 = fields.next()?.parse().ok()?;
        let system: u64 = fields.next()?.parse().ok()?;
        Some(user + system)
    });
    match ticks {
        // Linux reports these in USER_HZ, 100 a second on every architecture.
        Some(t) => t as f64 / 100.0,
        None => start.elapsed().as_secs_f64(),
    }
}

/// How long each target runs: `KIBITZ_FUZZ_SECONDS` for the long tests.
fn long_seconds() -> f64 {
    std::env::var("KIBITZ_FUZZ_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(60.0)
}

/// Words the mutator inserts: the syntax the readers branch on.
const TOKENS: &[&[u8]] = &[
    b"[",
    b"]",
    b"\"",
    b"{",
    b"}",
    b"(",
    b")",
    b";",
    b"\n",
    b"\r\n",
    b"\n\n",
    b" ",
    b"/",
    b"-",
    b"x",
    b"+",
    b"#",
    b"=",
    b"=Q",
    b"O-O",
    b"O-O-O",
    b"0-0",
    b"1-0",
    b"0-1",
    b"1/2-1/2",
    b"*",
    b"1.",
    b"1...",
    b"$1",
    b"$255",
    b"!?",
    b"--",
    b"Z0",
    b"e8=N",
    b"exd6",
    b"e.p.",
    b"K",
    b"Q",
    b"R",
    b"B",
    b"N",
    b"P",
    b"k",
    b"q",
    b"8",
    b"9",
    b"0",
    b"[FEN \"",
    b"[SetUp \"1\"]",
    b"[Variant \"Chess960\"]",
    b"[Variant \"Atomic\"]",
    b"{ [%eval #-3] }",
    b"{ [%eval 0.35] }",
    b"{ [%clk 0:01:02] }",
    b"KQkq",
    b"HAha",
    b" w ",
    b" b ",
    b" - ",
    b" e3 ",
    b"\xef\xbb\xbf",
    b"\0",
    b"\xff",
    b"bm ",
    b"ce ",
    b"acd ",
    b"id ",
    b"%",
];

/// One mutation step on `data`, with `others` for splicing.
fn mutate_once(data: &mut Vec<u8>, others: &[Vec<u8>], rng: &mut Rng) {
    let len = data.len();
    match rng.below(9) {
        0 if len > 0 => {
            let i = rng.below(len);
            data[i] ^= 1 << rng.below(8);
        }
        1 if len > 0 => {
            let i = rng.below(len);
            data[i] = rng.next_u64() as u8;
        }
        2 => {
            let token = TOKENS[rng.below(TOKENS.len())];
            let at = rng.below(len + 1);
            data.splice(at..at, token.iter().copied());
        }
        3 if len > 0 => {
            let at = rng.below(len);
            let n = 1 + rng.below((len - at).min(64));
            data.drain(at..at + n);
        }
        4 if len > 0 => {
            // Duplicate a range (repeated moves, tags, blocks).
            let at = rng.below(len);
            let n = 1 + rng.below((len - at).min(256));
            let piece = data[at..at + n].to_vec();
            let to = rng.below(len + 1);
            data.splice(to..to, piece);
        }
        5 if !others.is_empty() => {
            // Splice in a piece of another input.
            let other = &others[rng.below(others.len())];
            if !other.is_empty() {
                let at = rng.below(other.len());
                let n = 1 + rng.below((other.len() - at).min(512));
                let to = rng.below(len + 1);
                data.splice(to..to, other[at..at + n].iter().copied());
            }
        }
        6 if len > 0 => data.truncate(rng.below(len)),
        7 if len > 1 => {
            let a = rng.below(len);
            let b = rng.below(len);
            data.swap(a, b);
        }
        _ => {
            let at = rng.below(len + 1);
            let n = 1 + rng.below(8);
            let bytes: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
            data.splice(at..at, bytes);
        }
    }
}

/// A run of one target: totals for the report.
struct Report {
    execs: u64,
    seconds: f64,
    corpus: usize,
    crashes: Vec<PathBuf>,
}

fn save(kind: &str, name: &str, input: &[u8]) -> PathBuf {
    let dir = fuzz_dir().join("crashes");
    let _ = std::fs::create_dir_all(&dir);
    let mut h = std::collections::hash_map::DefaultHasher::new();
    input.hash(&mut h);
    let path = dir.join(format!("{name}-{kind}-{:016x}.bin", h.finish()));
    let _ = std::fs::write(&path, input);
    path
}

/// Runs `target` on seeds and mutations for `budget` (a count of inputs or
/// a time). The target returns a feature hash of what the input did;
/// inputs with a new feature join the corpus.
fn drive(
    name: &str,
    seeds: Vec<Vec<u8>>,
    budget: Budget,
    max_len: usize,
    target: impl Fn(&[u8]) -> u64 + Sync,
) -> Report {
    if let Ok(path) = std::env::var("KIBITZ_FUZZ_REPLAY") {
        let input = std::fs::read(&path).expect("KIBITZ_FUZZ_REPLAY file");
        target(&input);
        return Report { execs: 1, seconds: 0.0, corpus: 0, crashes: Vec::new() };
    }
    let seed = fuzz_seed();
    let mut rng = seeded(0x6b69_6269_747a ^ name.len() as u64);
    let mut corpus: Vec<Vec<u8>> = seeds.into_iter().filter(|s| s.len() <= max_len).collect();
    assert!(!corpus.is_empty(), "{name}: no seeds");
    let mut features: HashSet<u64> = HashSet::new();
    let mut crashes = Vec::new();

    // Watchdog: an input running over 10 CPU seconds is a hang. The loop
    // counts the inputs it has finished; the watchdog notes the CPU time at
    // which that count last moved, so the loop itself reads no clock.
    let current: Arc<Mutex<Vec<u8>>> = Arc::new(Mutex::new(Vec::new()));
    let finished = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let clock = Instant::now();
    let watchdog = {
        let (current, finished, done) = (current.clone(), finished.clone(), done.clone());
        let name = name.to_string();
        std::thread::spawn(move || {
            let (mut seen, mut moved_at) = (u64::MAX, 0.0);
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(250));
                let (count, now) = (finished.load(Ordering::Relaxed), cpu_seconds(clock));
                if count != seen {
                    (seen, moved_at) = (count, now);
                } else if now - moved_at > 10.0 {
                    let input = current.lock().map(|g| g.clone()).unwrap_or_default();
                    let path = save("hang", &name, &input);
                    eprintln!(
                        "fuzz {name}: an input ran over 10 CPU seconds (saved to {})",
                        path.display()
                    );
                    std::process::abort();
                }
            }
        })
    };

    let cpu_start = cpu_seconds(clock);
    let cpu_used = || cpu_seconds(clock) - cpu_start;
    let mut execs = 0u64;
    let mut queue: Vec<Vec<u8>> = corpus.clone();
    loop {
        let input = if let Some(seed) = queue.pop() {
            seed
        } else {
            let over = match budget {
                Budget::Execs(n) => execs >= n,
                Budget::Seconds(s) => execs.is_multiple_of(64) && cpu_used() >= s,
            };
            if over {
                break;
            }
            let mut data = corpus[rng.below(corpus.len())].clone();
            for _ in 0..1 + rng.below(6) {
                mutate_once(&mut data, &corpus, &mut rng);
            }
            data.truncate(max_len);
            data
        };
        if let Ok(mut g) = current.lock() {
            g.clone_from(&input);
        }
        let result = std::panic::catch_unwind(AssertUnwindSafe(|| target(&input)));
        execs += 1;
        finished.store(execs, Ordering::Relaxed);
        match result {
            Ok(feature) => {
                if features.insert(feature) && corpus.len() < 4096 {
                    corpus.push(input);
                }
            }
            Err(_) => crashes.push(save("crash", name, &input)),
        }
    }
    done.store(true, Ordering::Relaxed);
    let _ = watchdog.join();
    let report = Report { execs, seconds: cpu_used(), corpus: corpus.len(), crashes };
    eprintln!(
        "fuzz {name}: {} executions in {:.1} CPU seconds ({:.1} s of wall time), corpus {}, crashes {}, seed {seed}",
        report.execs,
        report.seconds,
        clock.elapsed().as_secs_f64(),
        report.corpus,
        report.crashes.len()
    );
    let _ = std::fs::create_dir_all(fuzz_dir());
    if let Ok(mut f) =
        std::fs::OpenOptions::new().create(true).append(true).open(fuzz_dir().join("stats.tsv"))
    {
        // One write per line: targets run in parallel append to this file.
        let line = format!(
            "{name}\t{}\t{:.1}\t{}\t{}\t{seed}\t{:.1}\n",
            report.execs,
            report.seconds,
            report.corpus,
            report.crashes.len(),
            clock.elapsed().as_secs_f64()
        );
        let _ = f.write_all(line.as_bytes());
    }
    report
}

#[derive(Clone, Copy)]
enum Budget {
    Execs(u64),
    Seconds(f64),
}

fn check(name: &str, report: &Report) {
    assert!(report.execs > 0, "{name}: nothing ran");
    assert!(
        report.crashes.is_empty(),
        "{name}: {} crashing inputs saved: {:?}",
        report.crashes.len(),
        report.crashes
    );
}

fn feature(parts: impl Hash) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    parts.hash(&mut h);
    h.finish()
}

fn read_text(path: &Path) -> Option<Vec<u8>> {
    let bytes = std::fs::read(path).ok()?;
    if bytes.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        zstd::decode_all(&bytes[..]).ok()
    } else {
        Some(bytes)
    }
}

/// Pieces of text files cut at line starts, at most `piece` bytes each,
/// `count` of them spread over the file.
fn pieces(text: &[u8], piece: usize, count: usize) -> Vec<Vec<u8>> {
    if text.len() <= piece {
        return vec![text.to_vec()];
    }
    let step = (text.len() / count.max(1)).max(1);
    let mut out = Vec::new();
    let mut at = 0;
    while at < text.len() && out.len() < count {
        let start = text[at..].iter().position(|&b| b == b'\n').map_or(text.len(), |i| at + i + 1);
        let end = (start + piece).min(text.len());
        if start < end {
            out.push(text[start..end].to_vec());
        }
        at += step;
    }
    out
}

fn pgn_seeds() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    if let Some(t) = read_text(&root().join("data/sample.pgn")) {
        seeds.extend(pieces(&t, 2048, 20));
    }
    for dir in ["pgn/edgecases", "pgn/chess960", "pgn/lichess", "pgn/engine", "pgn/openings"] {
        let Ok(entries) = std::fs::read_dir(shared(dir)) else { continue };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for p in paths {
            if let Some(t) = read_text(&p) {
                seeds.extend(pieces(&t, 4096, 8));
            }
        }
    }
    seeds
}

fn fen_seeds() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for p in [root().join("data/perft.epd"), root().join("data/bench.epd")] {
        if let Some(t) = read_text(&p) {
            seeds.extend(t.split(|&b| b == b'\n').filter(|l| !l.is_empty()).map(<[u8]>::to_vec));
        }
    }
    for f in [
        "epd/arasan_wac_original.epd",
        "epd/bratko-kopec.epd",
        "epd/BT2450.epd",
        "epd/FRC_openings.epd",
        "perft/ethereal_fischer960.epd",
    ] {
        if let Some(t) = read_text(&shared(f)) {
            seeds.extend(
                t.split(|&b| b == b'\n').filter(|l| !l.is_empty()).take(200).map(<[u8]>::to_vec),
            );
        }
    }
    seeds
}

// ---------------------------------------------------------------- targets

fn target_fen(input: &[u8]) -> u64 {
    exercise_fen(input);
    let epd = EpdLine::parse(input);
    let epd_ok = match &epd {
        Some(Ok(line)) => line.position().is_ok(),
        _ => false,
    };
    let fen = Position::from_fen_with(input, FenOptions::default());
    feature((
        fen.as_ref()
            .map(|p| (p.is_chess960(), p.in_check(), p.legal_moves().len()))
            .map_err(|e| format!("{e:?}").len()),
        epd.is_some(),
        epd_ok,
    ))
}

fn target_san(input: &[u8]) -> u64 {
    exercise_san(input);
    let parsed = kibitz::San::parse(input);
    feature(parsed.as_ref().map(|_| 1).map_err(|e| format!("{e:?}")))
}

fn target_pgn(input: &[u8]) -> u64 {
    let mut replayer = Replayer::new(ReplayOptions {
        verify: Verify::Full,
        keys: true,
        annotations: true,
        fingerprints: true,
    });
    let out = replayer.replay_pgn_chunk(input, 0, 0);
    // Key lines cover exactly the replayed positions.
    let lines = out.key_lines.iter().filter(|&&b| b == b'\n').count() as u64;
    assert!(
        lines >= out.plies.min(1) || out.games == 0 || out.plies == 0,
        "{lines} key lines for {} plies",
        out.plies
    );
    let kinds: Vec<String> = out.rejected.iter().map(|r| format!("{:?}", r.kind)).collect();
    feature((
        out.games.min(8),
        out.plies.min(64) / 4,
        kinds,
        out.skipped_variants.len(),
        out.chess960_games.min(2),
    ))
}

/// What the `moves` target does, built by `arbitrary`.
#[derive(Arbitrary, Debug)]
enum Action {
    Raw(u16),
    Legal(u8),
    Null,
    Undo,
}

const MOVE_FENS: [&str; 8] = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
    "1k6/8/8/8/8/8/8/R3K2R w KQ - 0 1",
    "2r1k2r/8/8/8/8/8/8/R3K1R1 w GAhc - 0 1",
];

fn target_moves(input: &[u8]) -> u64 {
    let mut u = Unstructured::new(input);
    let which = u.int_in_range(0..=MOVE_FENS.len() - 1).unwrap_or(0);
    let actions: Vec<Action> = u.arbitrary().unwrap_or_default();
    let mut pos = Position::from_fen(MOVE_FENS[which]).unwrap();
    let start = pos.clone();
    let mut played: Vec<Move> = Vec::new();
    let mut legal_played = 0u32;
    for action in actions.iter().take(512) {
        let candidate = match *action {
            Action::Raw(raw) => Move::from_u16(raw),
            Action::Legal(i) => {
                let moves = pos.legal_moves();
                (!moves.is_empty()).then(|| moves[usize::from(i) % moves.len()])
            }
            Action::Null => {
                if !pos.in_check() {
                    pos.do_null_move();
                    pos.verify_state().unwrap();
                    played.push(Move::NULL);
                }
                continue;
            }
            Action::Undo => {
                if let Some(m) = played.pop() {
                    if m == Move::NULL {
                        pos.undo_null_move()
                    } else {
                        pos.undo_move(m)
                    }
                    pos.verify_state().unwrap();
                }
                continue;
            }
        };
        let Some(m) = candidate else { continue };
        let in_list = pos.legal_moves().contains(m);
        let legal = pos.pseudo_legal(m) && pos.legal(m);
        assert_eq!(legal, in_list, "{m:?} in {}", pos.fen());
        if legal {
            let key_after = pos.key_after(m);
            let gives_check = pos.gives_check(m);
            pos.do_move(m);
            assert_eq!(pos.key(), pos.compute_key());
            assert_eq!(pos.key(), key_after, "key_after");
            assert_eq!(pos.in_check(), gives_check, "gives_check");
            pos.verify_state().unwrap();
            played.push(m);
            legal_played += 1;
        }
    }
    while let Some(m) = played.pop() {
        if m == Move::NULL { pos.undo_null_move() } else { pos.undo_move(m) }
    }
    assert!(pos == start, "unwinding did not restore the start");
    feature((which, legal_played.min(32), actions.len().min(64) / 8))
}

/// Splits a `.kbz` file into its frames (by zstd frame headers).
fn frames(data: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < data.len() {
        match kibitz::zstd_frame_end(data, at) {
            Some(end) => {
                out.push(at..end);
                at = end;
            }
            None => break,
        }
    }
    out
}

fn kbz_seed(dir: &Path) -> Vec<u8> {
    let out = dir.join("seed.kbz");
    let status = crate::util::kibitz_command()
        .args(["annotate", "--quiet", "--force", "--depth", "2", "--skip-plies", "0", "-o"])
        .arg(&out)
        .arg(root().join("data/sample.pgn"))
        .stdout(std::process::Stdio::null())
        .status()
        .expect("run kibitz annotate");
    assert!(status.success());
    std::fs::read(&out).unwrap()
}

/// Reads a `.kbz` image the way inspect and export do. The input's first
/// byte picks a frame to mutate inside (decompressed) or none; the rest
/// is the file.
fn target_kbz(input: &[u8], scratch: &Path) -> u64 {
    let path = scratch.join(format!("fuzz-{:?}.kbz", std::thread::current().id()));
    std::fs::write(&path, input).unwrap();
    let mut blocks = 0u32;
    let mut games = 0u64;
    let mut walked = 0u64;
    let mut errors = Vec::new();
    match KbzReader::open(&path) {
        Err(e) => errors.push(e.message.chars().take(24).collect::<String>()),
        Ok(mut reader) => {
            let mut exporters: Vec<Exporter<std::io::Sink>> = [
                ExportFormat::Pgn,
                ExportFormat::Plain,
                ExportFormat::Epd,
                ExportFormat::Jsonl,
                ExportFormat::Bullet,
                ExportFormat::Binpack,
            ]
            .into_iter()
            .map(|f| Exporter::new(f, std::io::sink()).unwrap())
            .collect();
            while let Some(block) = reader.next_block() {
                match block {
                    Ok((_, _, records)) => {
                        blocks += 1;
                        for r in &records {
                            games += 1;
                            if walk(r, |_| {}).is_ok() {
                                walked += 1;
                            }
                            for e in &mut exporters {
                                let _ = e.game(r);
                            }
                        }
                    }
                    Err(e) => errors.push(e.message.chars().take(24).collect::<String>()),
                }
            }
            for e in exporters {
                let _ = e.finish();
            }
        }
    }
    feature((blocks, games.min(64), walked.min(64), errors))
}

/// Mutates inside a frame: decompress, mutate, recompress with a valid
/// checksum and content size, so the mutation reaches the decoder.
fn mutate_inside(file: &[u8], rng: &mut Rng) -> Vec<u8> {
    let ranges = frames(file);
    if ranges.is_empty() {
        return file.to_vec();
    }
    let r = ranges[rng.below(ranges.len())].clone();
    let Ok(mut raw) = zstd::decode_all(&file[r.clone()]) else { return file.to_vec() };
    for _ in 0..1 + rng.below(4) {
        mutate_once(&mut raw, &[], rng);
    }
    let mut c = zstd::bulk::Compressor::new(1).unwrap();
    c.include_checksum(true).unwrap();
    c.include_contentsize(true).unwrap();
    let frame = c.compress(&raw).unwrap();
    let mut out = file[..r.start].to_vec();
    out.extend_from_slice(&frame);
    out.extend_from_slice(&file[r.end..]);
    out
}

/// A synthetic net's bytes (47 MB), made once.
fn net_bytes() -> &'static [u8] {
    static BYTES: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    BYTES.get_or_init(|| kibitz::nnue::Network::synthetic(5).to_bytes())
}

fn target_net(input: &[u8]) -> u64 {
    use kibitz::nnue::{NetError, Network};
    let kind = |r: Result<Network, NetError>| match r {
        Ok(_) => "ok".to_string(),
        Err(e) => {
            let message = e.to_string();
            assert!(message.starts_with("fuzz.nnue: "), "{message}");
            message.split(':').nth(1).unwrap_or_default().chars().take(40).collect()
        }
    };
    let alone = kind(Network::from_bytes(input, "fuzz.nnue", "fuzz.nnue".into()));
    // Over a whole net, when the header (version, hash) still holds: the
    // description's length and the transformer's hash then decide.
    let whole = net_bytes();
    let spliced = (input.len() >= 12 && input[..8] == whole[..8]).then(|| {
        let mut bytes = whole.to_vec();
        bytes[..input.len()].copy_from_slice(input);
        kind(Network::from_bytes(&bytes, "fuzz.nnue", "fuzz.nnue".into()))
    });
    feature((alone, spliced))
}

fn kibitz_net_bytes() -> Vec<u8> {
    use kibitz::nnue::small::{Activation, SmallNet};
    SmallNet::synthetic(32, Activation::SCReLU, 9).to_bytes()
}

fn target_kibitz_net(input: &[u8]) -> u64 {
    use kibitz::nnue::Net;
    use sha2::Digest;
    let kind = |bytes: &[u8]| match Net::from_bytes(bytes, "fuzz.nnue", "fuzz.nnue".into()) {
        Ok(Net::Kibitz(net)) => {
            // A net that reads evaluates, whatever its weights.
            let v = net.evaluate(&kibitz::Position::startpos());
            format!("ok {}", v.signum())
        }
        Ok(Net::Stockfish(_)) => "stockfish".to_string(),
        Ok(Net::Stockfish19(_)) => "stockfish 19".to_string(),
        Err(e) => {
            let message = e.to_string();
            assert!(message.starts_with("fuzz.nnue: "), "{message}");
            message.split(':').nth(1).unwrap_or_default().chars().take(40).collect()
        }
    };
    let alone = kind(input);
    let repaired = (input.len() > 72).then(|| {
        let mut bytes = input.to_vec();
        let body = bytes.len() - 32;
        let digest = sha2::Sha256::digest(&bytes[..body]);
        bytes[body..].copy_from_slice(&digest);
        kind(&bytes)
    });
    feature((alone, repaired))
}

// ---------------------------------------------------------------- runs

fn run_fen(budget: Budget) -> Report {
    drive("fen", fen_seeds(), budget, 512, target_fen)
}

fn run_san(budget: Budget) -> Report {
    let seeds: Vec<Vec<u8>> = [
        "e4", "Nf3", "exd5", "O-O-O", "e8=Q+", "Nbd7", "R1a3", "Qh4xe1#", "0-0", "g1f3", "e7e8q",
        "--", "Kxh8", "bxa8=N", "e5xd6", "Z0", "@@", "Nge2", "Qa1b2",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    drive("san", seeds, budget, 32, target_san)
}

fn run_pgn(budget: Budget) -> Report {
    drive("pgn", pgn_seeds(), budget, 16 << 10, target_pgn)
}

fn run_moves(budget: Budget) -> Report {
    let mut rng = seeded(7);
    let seeds: Vec<Vec<u8>> =
        (0..64).map(|n| (0..64 + n * 8).map(|_| rng.next_u64() as u8).collect()).collect();
    drive("moves", seeds, budget, 4096, target_moves)
}

fn run_net(budget: Budget) -> Report {
    let whole = net_bytes();
    let seeds: Vec<Vec<u8>> =
        [8, 12, 40, 100, 300, 2000].iter().map(|&n| whole[..n].to_vec()).collect();
    drive("net", seeds, budget, 4096, target_net)
}

fn run_kibitz_net(budget: Budget) -> Report {
    let whole = kibitz_net_bytes();
    let mut seeds = vec![whole.clone()];
    seeds.extend([8, 40, 100, 2000].iter().map(|&n| whole[..n].to_vec()));
    drive("kibitz-net", seeds, budget, 1 << 17, target_kibitz_net)
}

fn run_kbz(budget: Budget) -> Report {
    let scratch = crate::util::TempDir::new("fuzz-kbz");
    let seed = kbz_seed(&scratch.path(""));
    // Seeds: the file, and variants mutated inside their frames (a byte
    // mutation of a frame fails its checksum; these reach the decoder).
    let mut rng = seeded(11);
    let mut seeds = vec![seed.clone()];
    for _ in 0..63 {
        seeds.push(mutate_inside(&seed, &mut rng));
    }
    let inner = std::sync::Mutex::new(seeded(13));
    let dir = scratch.path("");
    drive("kbz", seeds, budget, 1 << 20, |input| {
        // Half the time, mutate inside a frame before reading.
        let mut rng = inner.lock().unwrap();
        if rng.below(2) == 0 {
            let inside = mutate_inside(input, &mut rng);
            drop(rng);
            target_kbz(&inside, &dir) ^ 1
        } else {
            drop(rng);
            target_kbz(input, &dir)
        }
    })
}

/// Every input kept in `tests/data/fuzz/` (named `TARGET-crash-HASH.bin`:
/// bytes a fuzzing run saved because its target panicked on them) runs
/// clean through its target. Each is listed in that directory's
/// `README.md`, a table whose rows start with the file name in backticks
/// and say what the input exposed: a file without a row or a description,
/// or a row without a file, fails the test, which runs exactly the listed
/// inputs.
#[test]
fn fuzz_regressions() {
    let dir = root().join("tests/data/fuzz");
    let manifest =
        std::fs::read_to_string(dir.join("README.md")).expect("tests/data/fuzz/README.md");
    let mut listed = std::collections::HashMap::new();
    for line in manifest.lines().map(str::trim).filter(|l| l.starts_with('|')) {
        // | `NAME` | target | what it exposed |
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let Some(name) = cells[0].strip_prefix('`').and_then(|c| c.strip_suffix('`')) else {
            continue; // the header and its rule
        };
        let described = cells.len() >= 3 && !cells[2..].concat().is_empty();
        assert!(listed.insert(name.to_string(), described).is_none(), "{name}: two rows");
        assert!(dir.join(name).is_file(), "{name}: in README.md but not in {}", dir.display());
    }
    let mut ran = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if name == "README.md" {
            continue;
        }
        match listed.get(&name) {
            None => panic!("{name}: no row in README.md"),
            Some(false) => panic!("{name}: its row in README.md does not say what it exposed"),
            Some(true) => {}
        }
        let input = std::fs::read(&path).unwrap();
        let scratch = fuzz_dir().join("regression-scratch");
        let kind = name.split('-').next().unwrap().to_string();
        let run = || match kind.as_str() {
            "fen" => target_fen(&input),
            "san" => target_san(&input),
            "pgn" => target_pgn(&input),
            "moves" => target_moves(&input),
            "net" => target_net(&input),
            "kibitz" => target_kibitz_net(&input),
            "kbz" => {
                std::fs::create_dir_all(&scratch).unwrap();
                target_kbz(&input, &scratch)
            }
            other => panic!("no target {other}"),
        };
        if let Err(e) = std::panic::catch_unwind(run) {
            let message = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            panic!("{name}: {message}");
        }
        ran += 1;
    }
    assert_eq!(ran, listed.len(), "inputs run against rows in README.md");
}

/// The driver itself: a target that panics on some inputs must be caught,
/// and its input saved (otherwise a clean fuzzing run would prove nothing).
#[test]
fn fuzz_driver_catches_panics() {
    let seeds = vec![b"1. e4 e5".to_vec()];
    let report = drive("selftest", seeds, Budget::Execs(2000), 64, |input| {
        assert!(!input.contains(&b'#'), "found the planted bug");
        feature(input.len())
    });
    assert!(!report.crashes.is_empty(), "the planted panic was not found in 2000 inputs");
    for path in &report.crashes {
        let saved = std::fs::read(path).unwrap();
        assert!(saved.contains(&b'#'));
        let _ = std::fs::remove_file(path);
    }
}

#[test]
fn fuzz_fen_quick() {
    check("fen", &run_fen(Budget::Execs(20_000)));
}

#[test]
fn fuzz_san_quick() {
    check("san", &run_san(Budget::Execs(20_000)));
}

#[test]
fn fuzz_pgn_quick() {
    check("pgn", &run_pgn(Budget::Execs(20_000)));
}

#[test]
fn fuzz_moves_quick() {
    check("moves", &run_moves(Budget::Execs(20_000)));
}

#[test]
fn fuzz_net_quick() {
    check("net", &run_net(Budget::Execs(2_000)));
}

#[test]
fn fuzz_kibitz_net_quick() {
    check("kibitz-net", &run_kibitz_net(Budget::Execs(3_000)));
}

#[test]
#[ignore = "long fuzzing run: KIBITZ_FUZZ_SECONDS per target (scripts/fuzz.sh)"]
fn fuzz_long_kibitz_net() {
    check("kibitz-net", &run_kibitz_net(Budget::Seconds(long_seconds())));
}

#[test]
fn fuzz_kbz_quick() {
    check("kbz", &run_kbz(Budget::Execs(5_000)));
}

#[test]
#[ignore = "long fuzzing run: KIBITZ_FUZZ_SECONDS per target (scripts/fuzz.sh)"]
fn fuzz_long_fen() {
    check("fen", &run_fen(Budget::Seconds(long_seconds())));
}

#[test]
#[ignore = "long fuzzing run: KIBITZ_FUZZ_SECONDS per target (scripts/fuzz.sh)"]
fn fuzz_long_san() {
    check("san", &run_san(Budget::Seconds(long_seconds())));
}

#[test]
#[ignore = "long fuzzing run: KIBITZ_FUZZ_SECONDS per target (scripts/fuzz.sh)"]
fn fuzz_long_pgn() {
    check("pgn", &run_pgn(Budget::Seconds(long_seconds())));
}

#[test]
#[ignore = "long fuzzing run: KIBITZ_FUZZ_SECONDS per target (scripts/fuzz.sh)"]
fn fuzz_long_moves() {
    check("moves", &run_moves(Budget::Seconds(long_seconds())));
}

#[test]
#[ignore = "long fuzzing run: KIBITZ_FUZZ_SECONDS per target (scripts/fuzz.sh)"]
fn fuzz_long_net() {
    check("net", &run_net(Budget::Seconds(long_seconds())));
}

#[test]
#[ignore = "long fuzzing run: KIBITZ_FUZZ_SECONDS per target (scripts/fuzz.sh)"]
fn fuzz_long_kbz() {
    check("kbz", &run_kbz(Budget::Seconds(long_seconds())));
}
