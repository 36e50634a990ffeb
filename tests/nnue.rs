//! The NNUE evaluation.
//!
//! Without anything beside the repository: a synthetic net written by the
//! tests (Stockfish 15.1's layout, seeded weights) through the reader, the
//! command line and its errors, and seeded playouts (standard and Chess960,
//! a million moves each) in which the incremental accumulator equals a
//! refresh from scratch after every move.
//!
//! With `--features stockfish`: Stockfish 15.1's own net (exported from
//! Debian's `/usr/games/stockfish` into `target/` when missing), the same
//! playouts, and kibitz's `eval` report compared with Stockfish's `eval`
//! on more than 10,000 positions: every piece value, every bucket's parts
//! and the evaluation, character for character.

use std::sync::Arc;

use kibitz::{
    Color, Move, Position,
    nnue::{Accumulator, Network, NnueEval, SmallEval, SmallNet, small::Activation},
};

use crate::util::{Rng, TempDir, kibitz};

/// Plays seeded random games; after every legal move of every position
/// visited, the evaluator's accumulator (kept up to date move by move, the
/// parent's reused) equals one computed from scratch. Returns the moves
/// checked.
fn playouts(net: &Arc<Network>, chess960: bool, seed: u64, min_checked: u64) -> u64 {
    let mut rng = Rng::new(seed);
    let mut eval = NnueEval::new(net.clone());
    let mut checked = 0;
    while checked < min_checked {
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
            assert_eq!(*eval.accumulator(&pos), Accumulator::refresh(net, &pos), "{}", pos.fen());
            for &m in moves.iter() {
                pos.do_move(m);
                let incremental = eval.accumulator(&pos).clone();
                if incremental != Accumulator::refresh(net, &pos) {
                    pos.undo_move(m);
                    panic!("after {} in {}", pos.uci(m), pos.fen());
                }
                pos.undo_move(m);
                checked += 1;
            }
            if !pos.in_check() && rng.below(8) == 0 {
                // A null move changes no piece: the accumulator is the
                // parent's.
                pos.do_null_move();
                assert_eq!(*eval.accumulator(&pos), Accumulator::refresh(net, &pos));
                pos.undo_null_move();
            }
            let m: Move = moves[rng.below(moves.len())];
            pos.do_move(m);
        }
    }
    let stats = eval.stack().stats;
    assert!(stats.steps > checked / 2 && stats.refreshes > 1000, "{stats:?}");
    checked
}

/// The playouts of [`playouts`] with a kibitz net: after every legal move,
/// the accumulators brought up to date from an ancestor equal a refresh, and
/// so does the evaluation.
fn small_playouts(net: &Arc<SmallNet>, chess960: bool, seed: u64, min_checked: u64) -> u64 {
    let mut rng = Rng::new(seed);
    let mut eval = SmallEval::new(net.clone());
    let h = net.hidden();
    let (mut w, mut b) = (vec![0i16; h], vec![0i16; h]);
    let mut checked = 0;
    while checked < min_checked {
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
            for &m in moves.iter() {
                pos.do_move(m);
                let pw = net.refresh(&pos, Color::White, &mut w);
                let pb = net.refresh(&pos, Color::Black, &mut b);
                let (iw, ib, p) = eval.accumulators(&pos);
                if (iw, ib, p) != (&w[..], &b[..], [pw, pb]) {
                    pos.undo_move(m);
                    panic!("after {} in {}", pos.uci(m), pos.fen());
                }
                assert_eq!(eval.evaluate(&pos), net.evaluate(&pos));
                pos.undo_move(m);
                checked += 1;
            }
            if !pos.in_check() && rng.below(8) == 0 {
                pos.do_null_move();
                assert_eq!(eval.evaluate(&pos), net.evaluate(&pos));
                pos.undo_null_move();
            }
            let m: Move = moves[rng.below(moves.len())];
            pos.do_move(m);
        }
    }
    assert!(eval.steps > checked / 2, "steps {} of {checked}", eval.steps);
    checked
}

#[test]
fn kibitz_net_incremental_equals_refresh() {
    for (activation, chess960, seed) in
        [(Activation::SCReLU, false, 31), (Activation::CReLU, true, 32)]
    {
        let net = Arc::new(SmallNet::synthetic(64, activation, seed));
        let checked = small_playouts(&net, chess960, seed, 1_000_000);
        eprintln!(
            "kibitz net {activation:?}, chess960 {chess960}: {checked} moves, accumulators equal"
        );
    }
    // Output buckets: the bucket follows the pieces as captures remove them.
    let net = Arc::new(SmallNet::synthetic_bucketed(64, Activation::SCReLU, 8, 33));
    let checked = small_playouts(&net, false, 33, 300_000);
    eprintln!("kibitz net with 8 output buckets: {checked} moves, accumulators equal");
    // kibitz's own net in `data/` (the former built-in net), as `--net`
    // reads it.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/kibitz-net.nnue");
    let kibitz::nnue::Net::Kibitz(net) = kibitz::nnue::Net::load(&path).unwrap() else {
        panic!("data/kibitz-net.nnue is a kibitz net")
    };
    let checked = small_playouts(&net, false, 34, 300_000);
    eprintln!("kibitz-net.nnue ({}): {checked} moves, accumulators equal", net.architecture());
}

/// A kibitz net file: `eval`, `search` and `bench` read it through the same
/// `--net`, and its faults are named errors.
#[test]
fn kibitz_nets_read_through_net_and_bad_ones_are_named() {
    let dir = TempDir::new("kibitz-nets");
    let net = SmallNet::synthetic(32, Activation::SCReLU, 5);
    let bytes = net.to_bytes();
    let good = dir.path("own.nnue");
    std::fs::write(&good, &bytes).unwrap();
    let g = good.to_str().unwrap();
    let (code, out, err) = kibitz(&["eval", "startpos", "--net", g]);
    assert_eq!(code, 0, "{err}");
    let expected = net.evaluate(&Position::startpos());
    assert!(
        out.contains(&format!(
            "kibitz net eval        {:+.2} (white side, 768->32x2->1 SCReLU)",
            f64::from(expected) / 100.0
        )),
        "{out}"
    );
    let (code, out, err) = kibitz(&["bench", "4", "--net", g]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&net.info().sha256), "{out}");
    let mut flipped = bytes.clone();
    flipped[500] ^= 4;
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("cut.nnue", bytes[..bytes.len() - 10].to_vec(), "the kibitz net is cut short"),
        ("long.nnue", [&bytes[..], b"x"].concat(), "the kibitz net is too long"),
        ("flipped.nnue", flipped, "checksum mismatch"),
        ("head.nnue", bytes[..20].to_vec(), "cut short inside its header"),
    ];
    for (name, content, message) in cases {
        let path = dir.path(name);
        std::fs::write(&path, content).unwrap();
        let (code, _, err) = kibitz(&["eval", "startpos", "--net", path.to_str().unwrap()]);
        assert_eq!(code, 1, "{name}");
        assert!(err.contains(name) && err.contains(message), "{name}: {err}");
    }
}

fn synthetic() -> Arc<Network> {
    Arc::new(Network::synthetic(2026))
}

#[test]
fn incremental_equals_refresh_standard() {
    let checked = playouts(&synthetic(), false, 11, 1_000_000);
    eprintln!("standard, synthetic net: {checked} moves, accumulators equal after each");
}

#[test]
fn incremental_equals_refresh_chess960() {
    let checked = playouts(&synthetic(), true, 12, 1_000_000);
    eprintln!("chess960, synthetic net: {checked} moves, accumulators equal after each");
}

/// Every way a net file can be wrong gives one clear line naming the file,
/// exit 1, and no panic.
#[test]
fn bad_nets_are_named_errors() {
    let dir = TempDir::new("bad-nets");
    let bytes = synthetic().to_bytes();
    let good = dir.path("good.nnue");
    std::fs::write(&good, &bytes).unwrap();
    let (code, out, err) = kibitz(&["eval", "startpos", "--net", good.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("NNUE evaluation        "), "{out}");

    let mut cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("empty.nnue", Vec::new(), "the file is empty"),
        ("cut.nnue", bytes[..bytes.len() / 2].to_vec(), "cut short inside the feature transformer"),
        ("header.nnue", bytes[..6].to_vec(), "cut short inside the header"),
        ("long.nnue", [&bytes[..], b"x"].concat(), "1 bytes follow the last layer stack"),
        ("text.nnue", b"this is not a net at all\n".to_vec(), "net version 0x73696874"),
    ];
    let mut hash = bytes.clone();
    hash[5] ^= 0x40;
    cases.push(("hash.nnue", hash, "the architecture hash is"));
    let mut old = bytes.clone();
    old[0] = 0x16;
    cases.push(("old.nnue", old, "(a Stockfish 12 or 13 HalfKP net)"));
    for (name, content, message) in cases {
        let path = dir.path(name);
        std::fs::write(&path, content).unwrap();
        let (code, _, err) = kibitz(&["eval", "startpos", "--net", path.to_str().unwrap()]);
        assert_eq!(code, 1, "{name}: {err}");
        assert!(err.starts_with("kibitz: ") && err.contains(name), "{name}: {err}");
        assert!(err.contains(message), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
    }
    let (code, _, err) = kibitz(&["eval", "startpos", "--net", dir.path("").to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("is a directory, not a net"), "{err}");
    let (code, _, err) = kibitz(&["eval", "startpos", "--net", dir.path("none").to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("none: cannot read the net"), "{err}");
}

/// The net through the commands that search: `annotate` records it in the
/// header (name and SHA-256, shown by `inspect`) and writes the same bytes
/// with 1 and 2 threads; `bench` prints the net and a node count that
/// repeats; `KIBITZ_NET` names the net when `--net` does not.
#[test]
fn the_commands_search_with_a_net() {
    let dir = TempDir::new("nnue-commands");
    let net = synthetic();
    let path = dir.path("synthetic.nnue");
    std::fs::write(&path, net.to_bytes()).unwrap();
    let p = path.to_str().unwrap();
    let sample = crate::util::sample();
    let mut outputs = Vec::new();
    for threads in ["1", "2"] {
        let out = dir.path(&format!("out{threads}.kbz"));
        let o = out.to_str().unwrap();
        let args = ["annotate", sample.to_str().unwrap(), "-o", o, "--quiet", "--net", p];
        let (code, _, err) = kibitz(&[&args[..], &["--depth", "4", "-j", threads]].concat());
        assert_eq!(code, 0, "{err}");
        outputs.push(std::fs::read(&out).unwrap());
        let (_, inspect, _) = kibitz(&["inspect", o]);
        let line = format!("eval      NNUE synthetic.nnue (sha256 {})", net.info().sha256);
        assert!(inspect.contains(&line), "{inspect}");
    }
    assert_eq!(outputs[0], outputs[1]);
    let nodes = |out: &str| out.lines().find(|l| l.starts_with("nodes ")).unwrap().to_string();
    let (code, first, err) = kibitz(&["bench", "5", "--net", p]);
    assert_eq!(code, 0, "{err}");
    assert!(first.starts_with("net synthetic.nnue (sha256 "), "{first}");
    let by_env =
        crate::util::kibitz_command().args(["bench", "5"]).env("KIBITZ_NET", p).output().unwrap();
    assert_eq!(nodes(&first), nodes(&String::from_utf8_lossy(&by_env.stdout)));
    let (_, plain, _) = kibitz(&["bench", "5"]);
    assert_ne!(nodes(&first), nodes(&plain), "the net changes the search");
}

#[cfg(feature = "stockfish")]
mod stockfish {
    use std::{
        collections::HashSet,
        io::{BufRead, BufReader, Write},
        path::{Path, PathBuf},
        process::{Command, Stdio},
    };

    use kibitz::{EpdLine, GameReader, set_start_position};

    use super::*;
    use crate::util::shared;

    const STOCKFISH: &str = "/usr/games/stockfish";

    /// Stockfish 15.1's net, exported into `target/` once.
    pub fn net_path() -> PathBuf {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/nn-ad9b42354671.nnue");
        if !path.exists() {
            let mut sf = Command::new(STOCKFISH)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .spawn()
                .expect("Debian's stockfish (apt-get install stockfish)");
            let cmd = format!("uci\nexport_net {}\nquit\n", path.display());
            sf.stdin.take().unwrap().write_all(cmd.as_bytes()).unwrap();
            assert!(sf.wait().unwrap().success());
        }
        path
    }

    fn real_net() -> Arc<Network> {
        let net = Network::load(&net_path()).unwrap();
        assert_eq!(
            net.info().sha256,
            "ad9b423546714137916bd38978af6fd68d7b8951bef25ff76bf43da72d6cb786"
        );
        Arc::new(net)
    }

    #[test]
    fn incremental_equals_refresh_with_stockfish_net() {
        let net = real_net();
        let standard = playouts(&net, false, 21, 1_000_000);
        let chess960 = playouts(&net, true, 22, 1_000_000);
        eprintln!("Stockfish's net: {standard} + {chess960} moves, accumulators equal after each");
    }

    /// The bench node count at depth 8 with Stockfish 15.1's net: a
    /// signature of the search with the net, as the hand-written one has
    /// its own in the search tests. Every SIMD path computes the same
    /// integers, so the portable build reaches the same count. Any change
    /// to the search or the evaluation changes it; update it deliberately.
    const NET_BENCH_SIGNATURE_DEPTH_8: u64 = 88_851;

    #[test]
    fn eval_bench_signature_with_stockfish_net() {
        let result =
            kibitz::bench::run(8, 16, Some(kibitz::nnue::Net::Stockfish(real_net())), |_, _, _| {})
                .expect("a 16 MiB table");
        assert_eq!(result.positions, 52);
        assert_eq!(result.nodes, NET_BENCH_SIGNATURE_DEPTH_8);
    }

    /// Positions from every kind of source: games (Lichess, TCEC, Chess960),
    /// test suites, the 960 start positions, random playouts. Not in check
    /// (Stockfish's `eval` prints no evaluation there), no duplicates.
    fn positions() -> Vec<String> {
        let mut fens = Vec::new();
        let mut seen = HashSet::new();
        let mut add = |pos: &Position, fens: &mut Vec<String>| {
            if !pos.in_check() && seen.insert(pos.key()) {
                fens.push(pos.fen());
            }
        };
        let startpos = Position::startpos();
        for (file, every) in [
            ("pgn/lichess/lichess-org_database_2016-05.pgn.zst", 13),
            ("pgn/lichess/lichess-org_database_2017-05.pgn.zst", 5),
            ("pgn/engine/TCEC_Season_13_-_Superfinal.pgn.zst", 5),
            ("pgn/chess960/fics_wild_fr_2009.pgn", 2),
            ("pgn/chess960/cutechess-fischerrandom.pgn", 2),
        ] {
            let bytes = std::fs::read(shared(file)).unwrap();
            let text =
                if file.ends_with(".zst") { zstd::decode_all(&bytes[..]).unwrap() } else { bytes };
            let mut reader = GameReader::new(&text, 0, &[]);
            while let Some(game) = reader.next_game() {
                let mut pos = Position::startpos();
                set_start_position(game, &mut pos, &startpos).unwrap();
                for (ply, san) in game.moves.iter().enumerate() {
                    let Ok(m) = san.to_move(&pos) else { break };
                    pos.do_move(m);
                    if ply % every == 0 {
                        add(&pos, &mut fens);
                    }
                }
            }
        }
        for file in [
            "epd/arasan_wac_original.epd",
            "epd/BT2450.epd",
            "epd/bratko-kopec.epd",
            "epd/FRC_openings.epd",
        ] {
            for line in std::fs::read(shared(file)).unwrap().split(|&b| b == b'\n') {
                if let Some(Ok(l)) = EpdLine::parse(line)
                    && let Ok(pos) = l.position()
                {
                    add(&pos, &mut fens);
                }
            }
        }
        let sts =
            zstd::decode_all(&std::fs::read(shared("epd/STS1-STS15_LAN_v3.epd.zst")).unwrap()[..])
                .unwrap();
        for line in sts.split(|&b| b == b'\n') {
            if let Some(Ok(l)) = EpdLine::parse(line)
                && let Ok(pos) = l.position()
            {
                add(&pos, &mut fens);
            }
        }
        let mut rng = Rng::new(7);
        for _ in 0..100 {
            let mut pos = Position::startpos();
            for _ in 0..rng.below(200) {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                pos.do_move(moves[rng.below(moves.len())]);
                if rng.below(4) == 0 {
                    add(&pos, &mut fens);
                }
            }
        }
        fens
    }

    /// The net's part of an `eval` report: the piece values and the bucket
    /// table, then the `NNUE evaluation` line (Stockfish prints its
    /// classical evaluation between them).
    fn nnue_part(report: &str) -> Option<String> {
        let start = report.find(" NNUE derived piece values:")?;
        let table_end = start + report[start..].find("\n\n\n")?;
        let line = report.lines().find(|l| l.starts_with("NNUE evaluation "))?;
        Some(format!("{}\n{line}", &report[start..table_end]))
    }

    fn stockfish_reports(fens: &[String]) -> Vec<String> {
        let mut sf = Command::new(STOCKFISH)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("Debian's stockfish");
        let mut input = sf.stdin.take().unwrap();
        let commands: String =
            fens.iter().map(|f| format!("position fen {f}\neval\n")).collect::<String>() + "quit\n";
        let writer = std::thread::spawn(move || input.write_all(commands.as_bytes()));
        let mut reports = Vec::new();
        let mut current = String::new();
        for line in BufReader::new(sf.stdout.take().unwrap()).lines() {
            let line = line.unwrap();
            if line.starts_with("Final evaluation") {
                reports.push(std::mem::take(&mut current));
            } else {
                current.push_str(&line);
                current.push('\n');
            }
        }
        writer.join().unwrap().unwrap();
        sf.wait().unwrap();
        reports
    }

    fn kibitz_reports(fens: &[String]) -> Vec<String> {
        let net = net_path();
        let mut child = crate::util::kibitz_command()
            .args(["eval", "-", "--net", net.to_str().unwrap()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        let text: String = fens.iter().map(|f| format!("{f}\n")).collect();
        let writer = std::thread::spawn(move || input.write_all(text.as_bytes()));
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap().unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        text.split("\nposition ").map(str::to_string).collect()
    }

    #[test]
    fn eval_equals_stockfish_on_ten_thousand_positions() {
        let fens = positions();
        assert!(fens.len() >= 10_000, "{} positions", fens.len());
        let theirs = stockfish_reports(&fens);
        let ours = kibitz_reports(&fens);
        assert_eq!(theirs.len(), fens.len());
        assert_eq!(ours.len(), fens.len());
        let mut numbers = 0;
        for ((fen, t), o) in fens.iter().zip(&theirs).zip(&ours) {
            let (Some(t), Some(o)) = (nnue_part(t), nnue_part(o)) else {
                panic!("{fen}: no NNUE report:\n{t}\n---\n{o}");
            };
            assert_eq!(o, t, "{fen}");
            numbers += t.matches('.').count();
        }
        eprintln!(
            "{} positions: kibitz's NNUE report equals Stockfish 15.1's, {numbers} numbers",
            fens.len()
        );
    }
}
