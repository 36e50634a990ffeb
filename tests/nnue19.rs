//! Stockfish 19's nets: the big one (threat, pawn pair and HalfKAv2_hm
//! inputs) and Stockfish.js 19's lite one (P_hm inputs).
//!
//! Without anything beside the repository: synthetic nets of both
//! architectures (seeded weights) and the lite net built into the binary
//! (`data/nn-61e7af4bb97d.nnue`) in seeded playouts, standard and Chess960,
//! where the accumulators kept up to date move by move equal a refresh from
//! scratch after every legal move, with every kernel set the processor
//! runs; positions whose outputs the lite build printed, through the
//! library and through `kibitz eval` with no net named; and the reader's
//! refusals, each naming the file.
//!
//! With `--features sf19`: both nets (the big one from
//! `../shared/data/nets`), their accumulators checked against a refresh
//! after every move of more than 300,000 moves of the shared games (real
//! databases, engine games, Chess960), positions whose outputs the big
//! net's oracles printed, and the search's bench signature with the big
//! net.
//!
//! With `--features stockfish-js`: kibitz's `eval` against Stockfish.js
//! 19's (`node`, the npm package `stockfish@19.0.0`), the big net on more
//! than 2,000 positions of every kind and the lite net (its lite build) on
//! more than 20,000, with every kernel set: the raw output, the net's
//! evaluation in pawns and the final evaluation, line for line.

use std::sync::Arc;

use kibitz::{
    Position,
    nnue::{
        Net, ThreatEval, ThreatNet,
        threat::{Inputs, simd::Kernels},
    },
};

use crate::util::{Rng, TempDir, kibitz};

/// The synthetic net, built once (87 million weights).
fn synthetic() -> Arc<ThreatNet> {
    static NET: std::sync::OnceLock<Arc<ThreatNet>> = std::sync::OnceLock::new();
    NET.get_or_init(|| Arc::new(ThreatNet::synthetic(11))).clone()
}

/// A synthetic lite net (P_hm inputs), built once.
fn synthetic_lite() -> Arc<ThreatNet> {
    static NET: std::sync::OnceLock<Arc<ThreatNet>> = std::sync::OnceLock::new();
    NET.get_or_init(|| Arc::new(ThreatNet::synthetic_with(Inputs::PHm, 12))).clone()
}

/// Stockfish.js 19's lite net: the net built into the binary, checked to be
/// the file in `data/` (with `sf19`, also the one in `../shared/data/nets`).
fn lite_net() -> Arc<ThreatNet> {
    let Net::Stockfish19(net) = Net::builtin() else { panic!("the built-in net is the lite net") };
    assert_eq!(net.inputs, Inputs::PHm);
    assert_eq!(net.info().sha256, LITE_SHA256);
    assert_eq!(net.info().name, "nn-61e7af4bb97d.nnue");
    net
}

const LITE_SHA256: &str = "61e7af4bb97d51eeeb25d322916f86513b5cd3a827ce189c98c6e31946f99e5b";

/// The lite net's file in `data/`.
fn lite_net_path() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/nn-61e7af4bb97d.nnue")
}

/// Plays seeded random games; after every legal move of every position
/// visited (and after null moves), the accumulator kept up to date equals
/// one computed from scratch. Returns the moves checked.
fn playouts(net: &Arc<ThreatNet>, kernels: Kernels, chess960: bool, seed: u64, min: u64) -> u64 {
    let mut rng = Rng::new(seed);
    let mut eval = ThreatEval::with_kernels(net.clone(), kernels);
    let mut checked = 0;
    while checked < min {
        let mut pos = if chess960 {
            Position::chess960_startpos(rng.below(960) as u32).unwrap()
        } else {
            Position::startpos()
        };
        for _ in 0..300 {
            let moves = pos.legal_moves();
            if moves.is_empty() || pos.rule50() >= 100 {
                break;
            }
            let want = eval.refresh(&pos);
            assert_eq!(*eval.accumulator(&pos), want, "{}", pos.fen());
            for &m in moves.iter() {
                pos.do_move(m);
                let want = eval.refresh(&pos);
                if *eval.accumulator(&pos) != want {
                    pos.undo_move(m);
                    panic!("{kernels:?}: after {} in {}", pos.uci(m), pos.fen());
                }
                pos.undo_move(m);
                checked += 1;
            }
            if !pos.in_check() && rng.below(8) == 0 {
                pos.do_null_move();
                let want = eval.refresh(&pos);
                assert_eq!(*eval.accumulator(&pos), want);
                pos.undo_null_move();
            }
            // Two moves at once now and then: the update walks back over
            // both.
            let m = moves[rng.below(moves.len())];
            pos.do_move(m);
            let next = pos.legal_moves();
            if !next.is_empty() && rng.below(3) == 0 {
                pos.do_move(next[rng.below(next.len())]);
            }
        }
    }
    checked
}

/// Standard and Chess960 playouts from `seed` with every kernel set.
fn playouts_with_every_kernel_set(net: &Arc<ThreatNet>, seed: u64) {
    for kernels in Kernels::available() {
        let standard = playouts(net, kernels, false, seed, 60_000);
        let chess960 = playouts(net, kernels, true, seed + 1, 60_000);
        eprintln!(
            "{:?}, {}: {standard} + {chess960} moves, accumulators equal after each",
            net.inputs,
            kernels.name()
        );
    }
}

#[test]
fn incremental_equals_refresh_standard_and_chess960() {
    playouts_with_every_kernel_set(&synthetic(), 31);
}

#[test]
fn lite_incremental_equals_refresh_standard_and_chess960() {
    // King moves within a half of the board are updates with P_hm, moves
    // across the d/e line refreshes: the playouts take kings both ways.
    playouts_with_every_kernel_set(&synthetic_lite(), 41);
}

#[test]
fn builtin_lite_incremental_equals_refresh_standard_and_chess960() {
    // The net every command uses by default, with its real weights.
    playouts_with_every_kernel_set(&lite_net(), 43);
}

#[test]
fn every_kernel_set_gives_the_same_outputs() {
    for net in [synthetic(), synthetic_lite(), lite_net()] {
        same_outputs(&net);
    }
}

fn same_outputs(net: &Arc<ThreatNet>) {
    let mut rng = Rng::new(5);
    let kernels = Kernels::available();
    let mut evals: Vec<ThreatEval> =
        kernels.iter().map(|&k| ThreatEval::with_kernels(net.clone(), k)).collect();
    let mut compared = 0;
    for _ in 0..40 {
        let mut pos = Position::startpos();
        for _ in 0..120 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            pos.do_move(moves[rng.below(moves.len())]);
            let outs: Vec<_> = evals.iter_mut().map(|e| e.outputs(&pos)).collect();
            assert!(outs.windows(2).all(|w| w[0] == w[1]), "{kernels:?} {outs:?} {}", pos.fen());
            compared += 1;
        }
    }
    eprintln!("{:?}: {compared} positions: {kernels:?} give the same outputs", net.inputs);
}

/// Positions the lite build (`stockfish-19-lite-single.js`) evaluated:
/// its raw output, and its net's and final evaluations in pawns, White's
/// view. Kings on both halves, both sides to move, buckets 0 to 7.
#[test]
fn positions_evaluate_as_the_lite_build() {
    let net = lite_net();
    let cases = [
        ("r4rk1/p2pbppp/1pq1pn2/8/2P1P3/2NQ2P1/PP1B1PKP/R4R2 b - - 2 13", 25, "-0.08", "-0.10"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 12, "+0.04", "+0.05"),
        ("4k3/8/8/8/8/8/8/R3K3 w Q - 0 1", 1581, "+4.60", "+4.49"),
        ("1k6/8/8/3q4/8/8/2K5/7R w - - 30 80", -758, "-2.20", "-1.73"),
        ("3r2k1/1p3ppp/p1n5/2K5/8/8/PPP2PPP/3R4 b - - 0 25", 1197, "-3.65", "-4.01"),
    ];
    for k in Kernels::available() {
        let mut eval = ThreatEval::with_kernels(net.clone(), k);
        for (fen, raw, nnue, last) in cases {
            let pos = Position::from_fen(fen).unwrap();
            assert_eq!(eval.evaluate(&pos), raw, "{k:?} {fen}");
            let report = eval.stockfish_report(&pos);
            let width = |v: &str| format!("{v:>5}");
            assert!(
                report.contains(&format!("NNUE evaluation        {} (white side)", width(nnue))),
                "{report}"
            );
            assert!(
                report.contains(&format!("Final evaluation      {} (white side)", width(last))),
                "{report}"
            );
        }
    }
    // `kibitz eval` with no net named evaluates with the built-in lite
    // net; the file in `data/` names the same net.
    let (code, out, err) = kibitz(&["eval", cases[0].0]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("NNUE evaluation using nn-61e7af4bb97d.nnue (Stockfish 19 lite net (P_hm"),
        "{out}"
    );
    assert!(out.contains("NNUE evaluation        -0.08 (white side)"), "{out}");
    let (code, file_out, err) =
        kibitz(&["eval", cases[0].0, "--net", lite_net_path().to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(file_out, out);
}

#[test]
fn bad_nets_are_named_errors() {
    let dir = TempDir::new("nnue19");
    let header = |hash: u32, desc: &[u8]| {
        let mut b = 0x6A44_8AFAu32.to_le_bytes().to_vec();
        b.extend_from_slice(&hash.to_le_bytes());
        b.extend_from_slice(&(desc.len() as u32).to_le_bytes());
        b.extend_from_slice(desc);
        b
    };
    // The same version, an architecture neither net has.
    let other = dir.path("other.nnue");
    std::fs::write(&other, header(0x1234_5678, b"other")).unwrap();
    let e = Net::load(&other).err().unwrap().to_string();
    assert!(e.contains("other.nnue") && e.contains("neither its big net's architecture"), "{e}");
    // The lite net's header, then the big net's transformer: refused by
    // the transformer's hash.
    let lite = dir.path("lite.nnue");
    let mut b = header(0x0C10_35AE, b"lite");
    b.extend_from_slice(&0xCB68_5313u32.to_le_bytes());
    std::fs::write(&lite, &b).unwrap();
    let e = Net::load(&lite).err().unwrap().to_string();
    assert!(e.contains("lite.nnue") && e.contains("feature transformer hash is 0xcb685313"), "{e}");
    // Cut short in the header's description, then in the first block.
    let cut = dir.path("cut.nnue");
    std::fs::write(&cut, &header(0xA85B_2205, b"trained")[..15]).unwrap();
    let e = Net::load(&cut).err().unwrap().to_string();
    assert!(e.contains("cut.nnue") && e.contains("cut short inside the description"), "{e}");
    let mut b = header(0xA85B_2205, b"d");
    b.extend_from_slice(&0xCB68_5313u32.to_le_bytes());
    b.extend_from_slice(b"COMPRESSED_LEB128");
    b.extend_from_slice(&4000u32.to_le_bytes());
    b.extend_from_slice(&[0; 10]);
    std::fs::write(&cut, &b).unwrap();
    let e = Net::load(&cut).err().unwrap().to_string();
    assert!(e.contains("cut short inside the feature transformer's biases"), "{e}");
    // Through the command line: an error naming the file, no panic.
    let (code, _, err) = kibitz(&["eval", "startpos", "--net", cut.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("cut.nnue"), "{err}");
}

#[cfg(feature = "sf19")]
mod sf19 {
    use std::path::PathBuf;

    use kibitz::{GameReader, set_start_position};

    use super::*;
    use crate::util::shared;

    pub fn net_path() -> PathBuf {
        shared("nets/nn-1a298aa575a0.nnue")
    }

    /// The lite net the binary carries is the file Stockfish.js 19's lite
    /// build embeds, byte for byte.
    #[test]
    fn the_built_in_net_is_the_shared_lite_net() {
        let shared_bytes = std::fs::read(shared("nets/nn-61e7af4bb97d.nnue")).unwrap();
        assert_eq!(shared_bytes, std::fs::read(lite_net_path()).unwrap());
        assert_eq!(lite_net().info().sha256, LITE_SHA256);
    }

    pub fn real_net() -> Arc<ThreatNet> {
        static NET: std::sync::OnceLock<Arc<ThreatNet>> = std::sync::OnceLock::new();
        NET.get_or_init(|| {
            let Net::Stockfish19(net) = Net::load(&net_path()).unwrap() else {
                panic!("Stockfish 19's net read as another kind")
            };
            assert_eq!(
                net.info().sha256,
                "1a298aa575a085434d29027978dc36867fe9c5bcea9376654b7a8eba1e52dfc2"
            );
            net
        })
        .clone()
    }

    /// The position the nets' README checks both oracles on: Stockfish.js
    /// 19 and the native build print +24 for it, -0.08 and -0.10 pawns.
    #[test]
    fn the_recorded_position_evaluates_as_stockfish_19() {
        let net = real_net();
        let fen = "r4rk1/p2pbppp/1pq1pn2/8/2P1P3/2NQ2P1/PP1B1PKP/R4R2 b - - 2 13";
        let pos = Position::from_fen(fen).unwrap();
        for k in Kernels::available() {
            let mut eval = ThreatEval::with_kernels(net.clone(), k);
            assert_eq!(eval.evaluate(&pos), 24, "{k:?}");
            let report = eval.stockfish_report(&pos);
            assert!(report.contains("NNUE evaluation          +24 (side to move, internal units)"));
            assert!(report.contains("NNUE evaluation        -0.08 (white side)"), "{report}");
            assert!(report.contains("Final evaluation      -0.10 (white side)"), "{report}");
        }
        let (code, out, err) = kibitz(&["eval", fen, "--net", net_path().to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        assert!(
            out.contains(
                "|  6         |  +  0.01   |  +  0.07   |  +  0.08   | <-- this bucket is used"
            ),
            "{out}"
        );
    }

    /// Every move of the shared games, replayed: after each, the
    /// accumulators kept up to date equal a refresh, with every kernel set
    /// the processor runs.
    #[test]
    fn incremental_equals_refresh_on_real_games() {
        replayed_accumulators_equal_refreshes(&real_net(), "Stockfish 19's net");
    }

    #[test]
    fn lite_incremental_equals_refresh_on_real_games() {
        replayed_accumulators_equal_refreshes(&lite_net(), "the lite net");
    }

    fn replayed_accumulators_equal_refreshes(net: &Arc<ThreatNet>, name: &str) {
        let files = [
            "pgn/real/lichess_db_standard_rated_2025-05_1000k.pgn.zst",
            "pgn/real/twic1599_1000k.pgn.zst",
            "pgn/real/ccrl_blitz_Obsidian_2025.pgn.zst",
            "pgn/real/chesscom_kyle_b81_2021.pgn.zst",
            "pgn/real/play-like-tal_Tal_3110.pgn.zst",
            "pgn/real/cutechess_avalanche_selfplay_2022-02.pgn.zst",
            "pgn/engine/TCEC_Season_13_-_Superfinal.pgn.zst",
            "pgn/chess960/fics_wild_fr_2009.pgn",
            "pgn/chess960/cutechess-fischerrandom.pgn",
            "pgn/lichess/lichess-org_database_2016-05.pgn.zst",
        ];
        let kernels = Kernels::available();
        let mut evals: Vec<ThreatEval> =
            kernels.iter().map(|&k| ThreatEval::with_kernels(net.clone(), k)).collect();
        let startpos = Position::startpos();
        let (mut moves, mut games, mut kinds) = (0u64, 0u64, [0u64; 4]);
        for file in files {
            let bytes = std::fs::read(shared(file)).unwrap();
            let text =
                if file.ends_with(".zst") { zstd::decode_all(&bytes[..]).unwrap() } else { bytes };
            let mut reader = GameReader::new(&text, 0, &[]);
            while let Some(game) = reader.next_game() {
                let mut pos = Position::startpos();
                if set_start_position(game, &mut pos, &startpos).is_err() {
                    continue;
                }
                games += 1;
                for san in &game.moves {
                    let Ok(m) = san.to_move(&pos) else { break };
                    let king = pos.moved_piece(m).is_some_and(|p| p.role() == kibitz::Role::King);
                    kinds[0] += u64::from(pos.is_capture(m));
                    kinds[1] += u64::from(m.promotion_role().is_some());
                    kinds[2] += u64::from(m.is_castling());
                    kinds[3] += u64::from(king);
                    pos.do_move(m);
                    let want = evals[0].refresh(&pos);
                    for (k, e) in kernels.iter().zip(&mut evals) {
                        assert_eq!(*e.accumulator(&pos), want, "{k:?}: {file}, {}", pos.fen());
                    }
                    moves += 1;
                }
                if moves >= 320_000 {
                    break;
                }
            }
            if moves >= 320_000 {
                break;
            }
        }
        assert!(moves >= 300_000, "{moves} moves");
        eprintln!(
            "{name}: {moves} moves of {games} games ({} captures, {} promotions, {} castlings, {} \
             king moves), accumulators equal a refresh after each, kernels {:?}",
            kinds[0], kinds[1], kinds[2], kinds[3], kernels
        );
        if !kernels.contains(&Kernels::Avx512) {
            eprintln!("AVX-512 kernels: NOT RUN (this processor has no AVX-512)");
        }
    }

    /// The bench node count at depth 8 with Stockfish 19's net: a signature
    /// of the search with this evaluation. Every kernel set computes the
    /// same integers, so every machine reaches the same count.
    const BENCH_SIGNATURE_DEPTH_8: u64 = 115_515;

    #[test]
    fn bench_signature_with_stockfish_19s_net() {
        let result = kibitz::bench::run(8, 16, Some(Net::Stockfish19(real_net())), |_, _, _| {})
            .expect("a 16 MiB table");
        assert_eq!(result.positions, 52);
        assert_eq!(result.nodes, BENCH_SIGNATURE_DEPTH_8);
    }
}

#[cfg(feature = "stockfish-js")]
mod stockfish_js {
    use std::{
        collections::HashSet,
        io::{BufRead, BufReader, Write},
        path::PathBuf,
        process::{Command, Stdio},
    };

    use kibitz::{EpdLine, GameReader, set_start_position};

    use super::{sf19::real_net, *};
    use crate::util::shared;

    /// Stockfish.js 19's single-threaded build: `KIBITZ_STOCKFISH_JS`, or
    /// `target/sfjs/package/bin/stockfish-19-single.js` (what `.ci/run`
    /// unpacks from `npm pack stockfish@19.0.0`).
    fn stockfish_js() -> PathBuf {
        std::env::var_os("KIBITZ_STOCKFISH_JS").map(PathBuf::from).unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("target/sfjs/package/bin/stockfish-19-single.js")
        })
    }

    /// Its lite build, beside it: `stockfish-19-lite-single.js`.
    fn stockfish_js_lite() -> PathBuf {
        stockfish_js().with_file_name("stockfish-19-lite-single.js")
    }

    /// `total` positions not in check (Stockfish prints no evaluation
    /// there), about `scale` times 1,750 of them from games of every kind,
    /// Chess960 among them, then the test suites, then seeded playouts to
    /// the endgame; `seed` draws them.
    fn positions(scale: usize, total: usize, seed: u64) -> Vec<String> {
        let mut rng = Rng::new(seed);
        let mut fens = Vec::new();
        let mut seen = HashSet::new();
        let mut add = |pos: &Position, fens: &mut Vec<String>| {
            if !pos.in_check() && seen.insert(pos.key()) {
                fens.push(pos.fen());
            }
        };
        let startpos = Position::startpos();
        for (file, take) in [
            ("pgn/real/lichess_db_standard_rated_2025-05_1000k.pgn.zst", 300),
            ("pgn/real/twic1599_1000k.pgn.zst", 300),
            ("pgn/real/ccrl_blitz_Obsidian_2025.pgn.zst", 250),
            ("pgn/real/chesscom_kyle_b81_2021.pgn.zst", 250),
            ("pgn/real/play-like-tal_Tal_3110.pgn.zst", 250),
            ("pgn/engine/TCEC_Season_13_-_Superfinal.pgn.zst", 250),
            ("pgn/chess960/fics_wild_fr_2009.pgn", 150),
        ] {
            let bytes = std::fs::read(shared(file)).unwrap();
            let text =
                if file.ends_with(".zst") { zstd::decode_all(&bytes[..]).unwrap() } else { bytes };
            let mut reader = GameReader::new(&text, 0, &[]);
            let mut all = Vec::new();
            while let Some(game) = reader.next_game() {
                let mut pos = Position::startpos();
                if set_start_position(game, &mut pos, &startpos).is_err() {
                    continue;
                }
                for san in &game.moves {
                    let Ok(m) = san.to_move(&pos) else { break };
                    pos.do_move(m);
                    if !pos.in_check() {
                        all.push(pos.fen());
                    }
                }
            }
            for _ in 0..take * scale {
                let fen = &all[rng.below(all.len())];
                add(&parse(fen), &mut fens);
            }
        }
        for file in ["epd/arasan_wac_original.epd", "epd/BT2450.epd", "epd/bratko-kopec.epd"] {
            for line in std::fs::read(shared(file)).unwrap().split(|&b| b == b'\n') {
                if let Some(Ok(l)) = EpdLine::parse(line)
                    && let Ok(pos) = l.position()
                {
                    add(&pos, &mut fens);
                }
            }
        }
        while fens.len() < total {
            let mut pos = Position::startpos();
            for ply in 0..300 {
                let moves = pos.legal_moves();
                if moves.is_empty() || pos.rule50() >= 100 {
                    break;
                }
                // Captures first: the game thins out to every piece count.
                let caps: Vec<_> = moves.iter().filter(|&&m| pos.is_capture(m)).copied().collect();
                let m = if !caps.is_empty() && rng.below(2) == 0 {
                    caps[rng.below(caps.len())]
                } else {
                    moves[rng.below(moves.len())]
                };
                pos.do_move(m);
                if ply % 7 == 0 {
                    add(&pos, &mut fens);
                }
            }
        }
        fens
    }

    /// A FEN kibitz wrote, Chess960's included.
    fn parse(fen: &str) -> Position {
        let options = kibitz::FenOptions { castling_mode: None, drop_invalid_castling: true };
        Position::from_fen_with(fen.as_bytes(), options).unwrap()
    }

    /// The three lines Stockfish 19's `eval` ends with, per position.
    fn lines(report: &str) -> Vec<String> {
        report
            .lines()
            .filter(|l| l.starts_with("NNUE evaluation") || l.starts_with("Final evaluation"))
            .map(str::to_string)
            .collect()
    }

    fn stockfish_js_reports(build: &PathBuf, fens: &[String]) -> Vec<Vec<String>> {
        let mut js = Command::new("node")
            .arg(build)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("node and Stockfish.js 19 (apt-get install nodejs; npm pack stockfish@19.0.0)");
        let mut input = js.stdin.take().unwrap();
        let mut commands = String::from("uci\nsetoption name UCI_Chess960 value true\n");
        for f in fens {
            commands.push_str(&format!("position fen {f}\neval\n"));
        }
        commands.push_str("isready\n");
        let mut reports = Vec::new();
        let mut current = String::new();
        let writer = std::thread::spawn(move || {
            input.write_all(commands.as_bytes()).unwrap();
            input
        });
        let mut out = BufReader::new(js.stdout.take().unwrap());
        let mut line = String::new();
        while out.read_line(&mut line).unwrap() > 0 {
            if line.starts_with("readyok") {
                break;
            }
            current.push_str(&line);
            if line.starts_with("Final evaluation") {
                reports.push(lines(&std::mem::take(&mut current)));
            }
            line.clear();
        }
        let mut input = writer.join().unwrap();
        input.write_all(b"quit\n").unwrap();
        drop(input);
        js.wait().unwrap();
        reports
    }

    /// kibitz's report of every position, with each kernel set, line for
    /// line equal to Stockfish.js's.
    fn same_reports(
        net: &Arc<ThreatNet>,
        kernels: &[Kernels],
        fens: &[String],
        theirs: &[Vec<String>],
    ) {
        for &k in kernels {
            let mut eval = ThreatEval::with_kernels(net.clone(), k);
            for (fen, t) in fens.iter().zip(theirs) {
                let ours = lines(&eval.stockfish_report(&parse(fen)));
                assert_eq!(&ours, t, "{k:?} {fen}");
            }
        }
    }

    #[test]
    fn eval_equals_stockfish_js_19() {
        let fens = positions(1, 2_400, 19);
        assert!(fens.len() >= 2_000, "{} positions", fens.len());
        let theirs = stockfish_js_reports(&stockfish_js(), &fens);
        assert_eq!(theirs.len(), fens.len());
        same_reports(&real_net(), &[Kernels::best()], &fens, &theirs);
        eprintln!(
            "{} positions: kibitz's raw output, NNUE evaluation and final evaluation equal \
             Stockfish.js 19's, line for line",
            fens.len()
        );
    }

    /// The lite net against the lite build, with every kernel set.
    #[test]
    fn lite_eval_equals_stockfish_js_19_lite() {
        let fens = positions(8, 20_400, 61);
        assert!(fens.len() >= 20_000, "{} positions", fens.len());
        let theirs = stockfish_js_reports(&stockfish_js_lite(), &fens);
        assert_eq!(theirs.len(), fens.len());
        same_reports(&lite_net(), &Kernels::available(), &fens, &theirs);
        eprintln!(
            "{} positions: the lite net's raw output, NNUE evaluation and final evaluation equal \
             Stockfish.js 19 lite's, line for line, kernels {:?}",
            fens.len(),
            Kernels::available()
        );
    }
}
