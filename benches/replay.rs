//! Replay speed: `kibitz replay --verify keys` (and `full`, `none`) against
//! pgn-reader + shakmaty (the peer: every SAN played, shakmaty's
//! Polyglot-compatible Zobrist hash computed at every ply, as pgn-reader's
//! parallel_validate example does), on the same corpus, in the same run.
//!
//! Each corpus is at least 100 MB of real games, a unit of shared files
//! concatenated as many times as needed, written once to
//! `target/bench-corpus/` as plain text and as zstd:
//!
//! * `lichess`: the shared Lichess samples (2016-05, 2017-05), short
//!   movetext and many tags;
//! * `tcec`: the TCEC Season 13 superfinal, engine games with a long
//!   comment after every move (each run reads it eight times, kibitz as
//!   eight inputs of one process: 100 MB of it is only 345,670 plies, a
//!   run of about 50 ms, of which starting a process would be a few
//!   percent);
//! * `real`: nine of the ten real databases of `pgn/real` (TWIC, CCRL,
//!   chess.com, Lichess 2025, ChessBase, Latin-1 miniatures, cutechess):
//!   every kind of source the shared data holds. The old Tal database is
//!   left out because the peer misreads it (pgn-reader drops its
//!   promotions written `g8Q+`: 99 games cut short), so the two would not
//!   replay the same plies.
//! * `old`: that Tal database alone (3,110 games of old, pre-standard
//!   PGN: promotions written `g8Q+`, bare quotes in tag values), timed
//!   the same way; the peer stops 99 of its games early (the dropped
//!   promotion makes the next move illegal), so each side's plies are
//!   checked against its own first run, and the ratio is one of wall
//!   times on the same bytes (M plies/s is kibitz's plies over each
//!   time).
//!
//! Configurations:
//!
//! * kibitz with `--threads 1` (everything on one thread) and `--threads 2`;
//! * the peer on one thread, and with one reader thread feeding one or two
//!   workers (two workers: its best on two cores);
//! * kibitz with `--verify full` (every incremental field checked at
//!   every ply) and `--verify none` (no check) for reference;
//! * pgn-reader alone, collecting each game's SANs and playing none: the
//!   peer's parser, a floor under the peer; and kibitz's reader alone the
//!   same way, on the text of kibitz's own source (plain text mapped, zstd
//!   decoded as a stream and cut into chunks), the part of a replay that
//!   reading costs;
//! * the floor: `zstd -dc FILE > /dev/null`, and `pgn-extract -s -o
//!   /dev/null` when installed.
//!
//! ```text
//! cargo bench --bench replay                 # 3 rounds, every corpus, plain and zstd
//! cargo bench --bench replay -- --rounds 5
//! cargo bench --bench replay -- --corpus tcec --plain --only "keys, 1 thread,parse"
//! ```
//!
//! `--only A,B` runs the configurations whose names hold one of the
//! strings (the peer on one thread always runs: the plies are checked
//! against it).

use std::{
    fs::File,
    io::{self, BufWriter, Read, Write},
    ops::ControlFlow,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::Instant,
};

use pgn_reader::{
    RawTag, Reader, SanPlus, Visitor,
    shakmaty::{
        CastlingMode, Chess, EnPassantMode, Position, fen::Fen, san::San, zobrist::Zobrist64,
    },
};

const MIN_CORPUS: u64 = 100_000_000;

fn shared(path: &str) -> PathBuf {
    std::env::var_os("KIBITZ_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data"))
        .join(path)
}

/// The shared files a corpus repeats.
fn corpus_unit(name: &str) -> Vec<&'static str> {
    match name {
        "lichess" => vec![
            "pgn/lichess/lichess-org_database_2016-05.pgn.zst",
            "pgn/lichess/lichess-org_database_2017-05.pgn.zst",
        ],
        "tcec" => vec!["pgn/engine/TCEC_Season_13_-_Superfinal.pgn.zst"],
        "real" => vec![
            "pgn/real/twic1599_1000k.pgn.zst",
            "pgn/real/lichess_db_standard_rated_2025-05_1000k.pgn.zst",
            "pgn/real/chesscom_MagnusCarlsen_2014-2018.pgn.zst",
            "pgn/real/chesscom_kyle_b81_2021.pgn.zst",
            "pgn/real/chessbase_wall_uncommon_miniatures.pgn.zst",
            "pgn/real/latin1_miniatures2.pgn.zst",
            "pgn/real/ccrl_blitz_Obsidian_2025.pgn.zst",
            "pgn/real/cutechess_avalanche_selfplay_2022-02.pgn.zst",
            "pgn/real/chesscom_MagnusCarlsen_2014-2018.blanklines.pgn.zst",
        ],
        "old" => vec!["pgn/real/play-like-tal_Tal_3110.pgn.zst"],
        _ => panic!("unknown corpus {name}: lichess, tcec, real or old"),
    }
}

/// How many times a run reads a corpus: the TCEC games hold few plies for
/// their bytes (a long comment after every move), and a run of 100 MB of
/// them lasts about 50 ms, of which starting kibitz's process would be a
/// few percent; eight times through, each run replays 2.8 million plies,
/// as the Lichess corpus's runs replay 8.4 million.
fn times_through(name: &str) -> usize {
    if name == "tcec" { 8 } else { 1 }
}

/// Builds a corpus once: returns (plain path, zstd path).
fn corpus(name: &str) -> io::Result<(PathBuf, PathBuf)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-corpus");
    std::fs::create_dir_all(&dir)?;
    let plain = dir.join(format!("{name}-100mb.pgn"));
    let zst = dir.join(format!("{name}-100mb.pgn.zst"));
    if plain.exists() && zst.exists() && std::fs::metadata(&plain)?.len() >= MIN_CORPUS {
        return Ok((plain, zst));
    }
    let mut unit = Vec::new();
    for f in corpus_unit(name) {
        unit.extend(zstd::decode_all(File::open(shared(f))?)?);
        // Files that do not end in a line feed still end their last game.
        unit.extend_from_slice(b"\n\n");
    }
    let mut out = BufWriter::new(File::create(&plain)?);
    let mut written = 0u64;
    while written < MIN_CORPUS {
        out.write_all(&unit)?;
        written += unit.len() as u64;
    }
    out.flush()?;
    drop(out);
    let mut encoder = zstd::Encoder::new(BufWriter::new(File::create(&zst)?), 3)?;
    encoder.include_checksum(true)?;
    io::copy(&mut File::open(&plain)?, &mut encoder)?;
    encoder.finish()?.flush()?;
    Ok((plain, zst))
}

// ---------------------------------------------------------------------------
// The peer: pgn-reader + shakmaty.

struct Game {
    fen: Option<Vec<u8>>,
    sans: Vec<San>,
}

impl Game {
    /// Plays every move and hashes every position; returns plies played.
    fn validate(&self) -> u64 {
        let mut pos: Chess = match &self.fen {
            Some(fen) => match Fen::from_ascii(fen)
                .ok()
                .and_then(|f| f.into_position(CastlingMode::Chess960).ok())
            {
                Some(p) => p,
                None => return 0,
            },
            None => Chess::default(),
        };
        let mut hash = pos.zobrist_hash::<Zobrist64>(EnPassantMode::PseudoLegal);
        let mut plies = 0;
        for san in &self.sans {
            match san.to_move(&pos) {
                Ok(m) => {
                    pos.play_unchecked(m);
                    hash = pos.zobrist_hash::<Zobrist64>(EnPassantMode::PseudoLegal);
                    plies += 1;
                }
                Err(_) => break,
            }
        }
        std::hint::black_box(hash);
        plies
    }
}

struct Collector;

impl Visitor for Collector {
    type Tags = Option<Vec<u8>>;
    type Movetext = Game;
    type Output = Game;

    fn begin_tags(&mut self) -> ControlFlow<Game, Option<Vec<u8>>> {
        ControlFlow::Continue(None)
    }

    fn tag(
        &mut self,
        tags: &mut Option<Vec<u8>>,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<Game> {
        if name == b"FEN" {
            *tags = Some(value.decode().into_owned());
        }
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Option<Vec<u8>>) -> ControlFlow<Game, Game> {
        ControlFlow::Continue(Game { fen: tags, sans: Vec::with_capacity(80) })
    }

    fn san(&mut self, game: &mut Game, san_plus: SanPlus) -> ControlFlow<Game> {
        game.sans.push(san_plus.san);
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, game: Game) -> Game {
        game
    }
}

fn open(path: &Path) -> Box<dyn Read + Send> {
    let file = File::open(path).expect("corpus");
    if path.extension().is_some_and(|e| e == "zst") {
        Box::new(zstd::Decoder::new(file).expect("zstd"))
    } else {
        Box::new(file)
    }
}

fn peer_single(path: &Path) -> u64 {
    let mut reader = Reader::new(open(path));
    let mut plies = 0;
    for game in reader.read_games(&mut Collector) {
        plies += game.expect("io").validate();
    }
    plies
}

/// pgn-reader alone: games read and their SANs collected, no move played:
/// the peer's parser, a floor under the peer.
fn parse_only(path: &Path) -> u64 {
    let mut reader = Reader::new(open(path));
    let mut sans = 0;
    for game in reader.read_games(&mut Collector) {
        sans += game.expect("io").sans.len() as u64;
    }
    sans
}

/// kibitz's PGN reader alone on one thread (games read, SANs parsed,
/// nothing played), its text from kibitz's own source as replay reads it
/// (a plain file mapped, zstd decoded as a stream and cut into chunks):
/// the part of a replay that reading costs.
fn kibitz_parse_only(path: &Path) -> u64 {
    use kibitz::{ChunkConfig, InputEvent, Release, read_input};
    let no_tags: [Vec<u8>; 0] = [];
    let mut sans = 0;
    let mut release = Release::default();
    read_input(0, path, None, &ChunkConfig::default(), &mut |event| {
        if let InputEvent::Chunk(chunk) = event {
            let mut reader = kibitz::GameReader::new(&chunk.data, chunk.offset, &no_tags);
            // As replay reads: `[%eval]` and `[%clk]` comments not parsed.
            reader.set_annotations(false);
            while let Some(game) = reader.next_game() {
                sans += game.moves.len() as u64;
            }
            release.after(chunk.file, &chunk.data);
        }
        true
    });
    sans
}

fn peer_threads(path: &Path, workers: usize, times: usize) -> u64 {
    let (send, recv) = crossbeam_channel::bounded::<Game>(128);
    std::thread::scope(|scope| {
        scope.spawn(move || {
            for _ in 0..times {
                let mut reader = Reader::new(open(path));
                for game in reader.read_games(&mut Collector) {
                    send.send(game.expect("io")).expect("send");
                }
            }
        });
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                let recv = recv.clone();
                scope.spawn(move || recv.iter().map(|g| g.validate()).sum::<u64>())
            })
            .collect();
        drop(recv);
        handles.into_iter().map(|h| h.join().expect("worker")).sum()
    })
}

// ---------------------------------------------------------------------------
// kibitz, through its binary.

/// kibitz's replay of `path` given `times` times as inputs of one run:
/// its plies and the games it rejected.
fn kibitz(path: &Path, threads: usize, verify: &str, times: usize) -> (u64, u64) {
    let out = Command::new(env!("CARGO_BIN_EXE_kibitz"))
        .args(["replay", "--quiet", "--json", "--verify", verify, "--threads"])
        .arg(threads.to_string())
        .args(std::iter::repeat_n(path, times))
        .output()
        .expect("run kibitz");
    assert!(out.status.success(), "kibitz failed: {}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json summary");
    let rejected = json["rejected_games"].as_u64().expect("rejected games");
    (json["plies"].as_u64().expect("plies"), rejected)
}

fn external(program: &str, args: &[&str], path: &Path) -> Option<f64> {
    let start = Instant::now();
    let status = Command::new(program)
        .args(args)
        .arg(path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok()?;
    status.success().then(|| start.elapsed().as_secs_f64())
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The value of `--name` on the command line, if given.
fn flag<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).map(String::as_str)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rounds = flag(&args, "--rounds").and_then(|r| r.parse().ok()).unwrap_or(3usize);
    let corpora: Vec<&str> =
        flag(&args, "--corpus").unwrap_or("lichess,tcec,real,old").split(',').collect();
    let only: Vec<&str> = flag(&args, "--only").map(|o| o.split(',').collect()).unwrap_or_default();
    let plain_only = args.iter().any(|a| a == "--plain");
    let zstd_only = args.iter().any(|a| a == "--zstd");
    for name in corpora {
        let (plain, zst) = corpus(name).expect("building the corpus (needs ../shared/data)");
        let bytes = std::fs::metadata(&plain).expect("corpus").len();
        println!(
            "replay, {name}: {} MB ({}), {rounds} interleaved rounds, median plies/s",
            bytes / 1_000_000,
            plain.display()
        );
        let mut paths = Vec::new();
        if !zstd_only {
            paths.push(&plain);
        }
        if !plain_only {
            paths.push(&zst);
        }
        for path in paths {
            let label = if path == &zst { "zstd" } else { "plain" };
            let k = times_through(name);
            // Every run's plies and rejected games are checked: the peer's
            // against its one-thread run, kibitz's against its own first
            // run, and on every corpus but the old one kibitz's against the
            // peer's (the same games, no game rejected).
            let peer_plies = peer_single(path) * k as u64;
            let same_games = name != "old";
            let mut kibitz_expected: Option<(u64, u64)> = same_games.then_some((peer_plies, 0));
            // (name, what runs): kibitz's three verify levels on one and two
            // threads, the peer's three configurations, the parsers alone;
            // each reads the corpus `k` times (kibitz in one process).
            type PeerRun = Box<dyn Fn(&Path, usize) -> u64>;
            enum Run {
                Kibitz(usize, &'static str),
                Peer(PeerRun),
            }
            let again = |f: fn(&Path) -> u64| -> Run {
                Run::Peer(Box::new(move |p, k| (0..k).map(|_| f(p)).sum()))
            };
            let all: Vec<(&str, Run)> = vec![
                ("kibitz keys, 1 thread", Run::Kibitz(1, "keys")),
                ("kibitz keys, 2 threads", Run::Kibitz(2, "keys")),
                ("peer 1 thread", again(peer_single)),
                ("peer reader+1 worker", Run::Peer(Box::new(|p, k| peer_threads(p, 1, k)))),
                ("peer reader+2 workers", Run::Peer(Box::new(|p, k| peer_threads(p, 2, k)))),
                ("kibitz full, 1 thread", Run::Kibitz(1, "full")),
                ("kibitz full, 2 threads", Run::Kibitz(2, "full")),
                ("kibitz none, 1 thread", Run::Kibitz(1, "none")),
                ("kibitz none, 2 threads", Run::Kibitz(2, "none")),
                ("pgn-reader parse only", again(parse_only)),
                ("kibitz parse only", again(kibitz_parse_only)),
            ];
            let configs: Vec<(&str, Run)> = all
                .into_iter()
                .filter(|(n, _)| {
                    only.is_empty() || *n == "peer 1 thread" || only.iter().any(|o| n.contains(o))
                })
                .collect();
            let mut times: Vec<Vec<f64>> = vec![Vec::new(); configs.len()];
            for _ in 0..rounds {
                for ((config, run), times) in configs.iter().zip(times.iter_mut()) {
                    let start = Instant::now();
                    match run {
                        Run::Kibitz(threads, verify) => {
                            let got = kibitz(path, *threads, verify, k);
                            times.push(start.elapsed().as_secs_f64());
                            let want = *kibitz_expected.get_or_insert(got);
                            assert_eq!(got, want, "{config}: other (plies, rejected games)");
                        }
                        Run::Peer(run) => {
                            let plies = run(path, k);
                            times.push(start.elapsed().as_secs_f64());
                            if config.contains("parse only") && !same_games {
                                // SANs read, not plies played: no count to
                                // hold it to on the old games.
                                continue;
                            }
                            assert_eq!(plies, peer_plies, "{config} counted other plies");
                        }
                    }
                }
            }
            // Rates in kibitz's plies (the peer's where kibitz did not run)
            // over each configuration's median time: ratios of rates are
            // ratios of times on the same bytes.
            let plies = kibitz_expected.map_or(peer_plies, |(p, _)| p);
            let rates: Vec<(&str, f64)> = configs
                .iter()
                .zip(times.iter_mut())
                .map(|((n, _), t)| (*n, plies as f64 / median(t)))
                .collect();
            let rate = |n: &str| rates.iter().find(|r| r.0 == n).map(|r| r.1);
            println!(
                "{name}, {label}: {plies} plies ({k} times through the corpus; the peer plays \
                 {peer_plies})"
            );
            for (n, r) in &rates {
                println!("  {n:<24} {:>7.2} M plies/s  {:>6.1} ns/ply", r / 1e6, 1e9 / r);
            }
            let peer_one = rate("peer 1 thread").expect("always run");
            let peer_reader_one = rate("peer reader+1 worker");
            let peer_two = rate("peer reader+2 workers");
            for level in ["keys", "full", "none"] {
                if let Some(one) = rate(&format!("kibitz {level}, 1 thread")) {
                    print!(
                        "  ratio, --verify {level}, 1 thread: {:.2}x (kibitz / peer 1 thread)",
                        one / peer_one
                    );
                    match peer_reader_one {
                        Some(p) => println!(", {:.2}x (/ peer reader+1 worker)", one / p),
                        None => println!(),
                    }
                }
                if let Some(two) = rate(&format!("kibitz {level}, 2 threads")) {
                    let best = peer_two.map_or(peer_one, |r| r.max(peer_one));
                    print!(
                        "  ratio, --verify {level}, 2 threads: {:.2}x (kibitz / peer best)",
                        two / best
                    );
                    match peer_two {
                        Some(p) => println!(", {:.2}x (/ peer reader+2 workers)", two / p),
                        None => println!(),
                    }
                }
            }
            if let (Some(k), Some(p)) = (rate("kibitz parse only"), rate("pgn-reader parse only")) {
                println!("  ratio, reader alone: {:.2}x (kibitz / pgn-reader)", k / p);
            }
        }
        if only.is_empty() {
            floors(&plain, &zst, rounds);
        }
    }
}

/// The floors under every reader: `zstd -dc` and `pgn-extract`.
fn floors(plain: &Path, zst: &Path, rounds: usize) {
    let bytes = std::fs::metadata(plain).expect("corpus").len();
    let mut floor = Vec::new();
    for _ in 0..rounds {
        if let Some(t) = external("zstd", &["-q", "-dc"], zst) {
            floor.push(t);
        }
    }
    if !floor.is_empty() {
        println!("floor: zstd -dc {:.0} MB/s of text", bytes as f64 / median(&mut floor) / 1e6);
    }
    let mut pe = Vec::new();
    for _ in 0..rounds.min(2) {
        let t = external("pgn-extract", &["-s", "-o", "/dev/null"], plain)
            .or_else(|| external("/usr/games/pgn-extract", &["-s", "-o", "/dev/null"], plain));
        if let Some(t) = t {
            pe.push(t);
        }
    }
    if !pe.is_empty() {
        let plies = peer_single(plain) as f64;
        println!("pgn-extract -s -o /dev/null: {:.2} M plies/s", plies / median(&mut pe) / 1e6);
    }
}
