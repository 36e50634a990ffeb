//! The search: mates, draws, determinism, the bench signature, and the UCI
//! protocol as a match tool or python-chess speaks it.

use std::{
    io::{BufRead, BufReader, Write},
    process::{Command, Stdio},
};

use kibitz::{Limits, Position, Searcher, bench, mate_in};

fn search(fen: &str, depth: i32) -> kibitz::SearchResult {
    let mut pos = Position::from_fen(fen).unwrap();
    let mut searcher = Searcher::new(16);
    searcher.search(&mut pos, &Limits::depth(depth), |_| {})
}

/// A queen attacked by a pawn near the horizon is moved, not given up: the
/// escapes are ordered before other quiet moves, so late-move pruning does
/// not cut them. Black (to move, a queen down) scored -44 at depth 2 and
/// -49 at depth 3 before, as if the queen were lost after ...b5.
#[test]
fn a_threatened_queen_escapes_at_shallow_depths() {
    let fen = "4k3/p2p1ppp/1pp1p3/4P3/2Q5/8/PPPP1PPP/4K3 b - - 0 6";
    let mut pos = Position::from_fen(fen).unwrap();
    let mut searcher = Searcher::new(16);
    let mut scores = Vec::new();
    searcher.search(&mut pos, &Limits::depth(6), |info| scores.push((info.depth, info.score)));
    assert_eq!(scores.len(), 6, "{scores:?}");
    for &(depth, score) in &scores {
        assert!(score < -700, "depth {depth}: {score} ({scores:?})");
    }
}

#[test]
fn finds_mates() {
    // (FEN, mate in N): a back-rank mate, and WAC positions whose mate
    // distance Stockfish 15.1 confirmed at depth 18.
    let cases = [
        ("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1", 1),
        ("2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1", 2),
        ("r1bq2rk/pp3pbp/2p1p1pQ/7P/3P4/2PB1N2/PP3PPR/2KR4 w - - 0 1", 2),
        ("5k2/6pp/p1qN4/1p1p4/3P4/2PKP2Q/PP3r2/3R4 b - - 0 1", 2),
        ("k4r2/1R4pb/1pQp1n1p/3P4/5p1P/3P2P1/r1q1R2K/8 w - - 0 1", 3),
        ("r3q1kr/ppp5/3p2pQ/8/3PP1b1/5R2/PPP3P1/5RK1 w - - 0 1", 3),
        ("r2rb1k1/pp1q1p1p/2n1p1p1/2bp4/5P2/PP1BPR1Q/1BPN2PP/R5K1 w - - 0 1", 4),
        ("r3r2k/2R3pp/pp1q1p2/8/3P3R/7P/PP3PP1/3Q2K1 w - - 0 1", 4),
    ];
    for (fen, n) in cases {
        // Depth 15: Stockfish's pruning, which the search takes, finds the
        // mate in 4 of WAC.2rb1k1 (a queen sacrifice, then quiet moves)
        // at depth 15 with the hand-written evaluation (a mate in 5 at
        // 14), at 12 with Stockfish's net (as Stockfish itself).
        let result = search(fen, 15);
        assert_eq!(result.score, mate_in(n), "{fen}: {:?}", result.pv);
        // The principal variation plays the mate out.
        let mut pos = Position::from_fen(fen).unwrap();
        for &m in &result.pv {
            assert!(pos.is_legal(m));
            pos.do_move(m);
        }
        // A line the table gave can stop short (as Stockfish's can); one
        // that goes the whole way mates.
        assert!(!result.pv.is_empty() && (result.pv.len() as i32) < 2 * n, "{fen}");
        if result.pv.len() as i32 == 2 * n - 1 {
            assert!(pos.is_checkmate(), "{fen}: pv {:?} does not end in mate", result.pv);
        }
    }
}

#[test]
fn mated_side_scores_the_distance() {
    // After 1. f3 e5 2. g4 Black mates in one: from White's side, after any
    // move... here White to move is not yet mated; Black to move mates.
    let result = search("rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq g3 0 2", 3);
    assert_eq!(result.score, mate_in(1));
    let mut pos =
        Position::from_fen("rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq g3 0 2")
            .unwrap();
    pos.do_move(result.best.unwrap());
    let mut searcher = Searcher::new(1);
    let r = searcher.search(&mut pos, &Limits::depth(3), |_| {});
    assert_eq!((r.best, r.score), (None, -kibitz::MATE));
}

#[test]
fn stalemate_and_avoiding_it() {
    let r = search("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", 5);
    assert_eq!((r.best, r.score), (None, 0));
    // Queen against king: winning, and the search must not stalemate.
    let r = search("k7/2Q5/8/8/8/8/8/7K w - - 0 1", 8);
    assert!(r.score > 500, "{}", r.score);
}

#[test]
fn fifty_move_rule_draws() {
    // King against king and rook, 99 plies without capture or pawn move:
    // every black move makes it 100 and the game is drawn.
    let r = search("8/8/8/8/8/3k4/8/3KR3 b - - 99 80", 6);
    assert_eq!(r.score, 0);
    // The same position with a fresh counter is lost for Black.
    let r = search("8/8/8/8/8/3k4/8/3KR3 b - - 0 80", 6);
    assert!(r.score < -300, "{}", r.score);
}

#[test]
fn repetition_draws() {
    // White shuffles the rook; Black's king goes back to d3, which would
    // make the position occur a third time: the only way not to lose.
    let mut pos = Position::from_fen("8/8/8/8/8/3k4/8/3KR3 w - - 0 1").unwrap();
    for uci in ["e1e2", "d3c3", "e2e1", "c3d3", "e1e2", "d3c3", "e2e1"] {
        let m = pos.parse_uci(uci).unwrap();
        pos.do_move(m);
    }
    let mut searcher = Searcher::new(16);
    let r = searcher.search(&mut pos, &Limits::depth(6), |_| {});
    assert_eq!(pos.uci(r.best.unwrap()), "c3d3");
    assert_eq!(r.score, 0);
}

#[test]
fn insufficient_material_draws() {
    assert_eq!(search("8/8/8/4k3/8/8/2B5/4K3 w - - 0 1", 6).score, 0);
}

#[test]
fn searches_are_deterministic() {
    let fen = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
    let run = |searcher: &mut Searcher| {
        let mut pos = Position::from_fen(fen).unwrap();
        let r = searcher.search(&mut pos, &Limits::depth(9), |_| {});
        (r.best, r.score, r.pv, r.nodes)
    };
    let mut a = Searcher::new(16);
    let first = run(&mut a);
    a.new_game();
    assert_eq!(run(&mut a), first);
    let mut b = Searcher::new(16);
    assert_eq!(run(&mut b), first);
    // A node limit is exact too.
    let mut pos = Position::from_fen(fen).unwrap();
    let mut c = Searcher::new(16);
    let r1 = c.search(&mut pos, &Limits::nodes(50_000), |_| {});
    c.new_game();
    let r2 = c.search(&mut pos, &Limits::nodes(50_000), |_| {});
    assert_eq!((r1.best, r1.score, r1.nodes), (r2.best, r2.score, r2.nodes));
}

/// The bench node count at depth 6: a signature of search and evaluation.
/// Any change that alters the search changes it; update it deliberately
/// (and say so in the commit), as Stockfish does with its bench.
const BENCH_SIGNATURE_DEPTH_6: u64 = 58667;

#[test]
fn bench_signature() {
    let result = bench::run(6, 16, None, |_, _, _| {}).expect("a 16 MiB table");
    assert_eq!(result.positions, 52);
    assert_eq!(result.nodes, BENCH_SIGNATURE_DEPTH_6);
}

/// The bench node count at depth 6 with the built-in net (`kibitz bench
/// 6`, Stockfish.js 19's lite net): another built-in net changes it, as a
/// change to the search does.
const BUILTIN_NET_BENCH_SIGNATURE_DEPTH_6: u64 = 41960;

#[test]
fn bench_signature_builtin_net() {
    let result = bench::run(6, 16, Some(kibitz::nnue::Net::builtin()), |_, _, _| {})
        .expect("a 16 MiB table");
    assert_eq!(result.nodes, BUILTIN_NET_BENCH_SIGNATURE_DEPTH_6);
    let (code, out, err) = crate::util::kibitz(&["bench", "6"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&format!("nodes {BUILTIN_NET_BENCH_SIGNATURE_DEPTH_6}")), "{out}");
    assert!(out.contains("nn-61e7af4bb97d.nnue"), "{out}");
}

#[test]
fn uci_protocol() {
    let mut child = crate::util::kibitz_command()
        .arg("uci")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    // A hang fails the test instead of stalling it: kill the engine after
    // two minutes (its output then ends and `wait_for` panics).
    let (done, watchdog) = std::sync::mpsc::channel::<()>();
    let pid = child.id().to_string();
    let guard = std::thread::spawn(move || {
        if watchdog.recv_timeout(std::time::Duration::from_secs(120)).is_err() {
            let _ = Command::new("kill").args(["-9", &pid]).status();
        }
    });
    let mut wait_for = |prefix: &str| -> String {
        let mut line = String::new();
        loop {
            line.clear();
            assert!(output.read_line(&mut line).unwrap() > 0, "no {prefix}");
            if line.starts_with(prefix) {
                return line.trim().to_string();
            }
        }
    };
    writeln!(input, "uci").unwrap();
    assert_eq!(wait_for("uciok"), "uciok");
    // The largest Hash the engine declares: a machine that cannot give it
    // keeps the table it has and says so; either way the engine answers.
    writeln!(input, "setoption name Hash value 65536\nisready").unwrap();
    assert_eq!(wait_for("readyok"), "readyok");
    writeln!(input, "setoption name Hash value 8\nisready").unwrap();
    assert_eq!(wait_for("readyok"), "readyok");
    writeln!(input, "ucinewgame\nposition startpos moves e2e4 e7e5\ngo depth 5").unwrap();
    let best = wait_for("bestmove");
    let mv = best.split_whitespace().nth(1).unwrap();
    let mut pos = Position::startpos();
    for m in ["e2e4", "e7e5"] {
        let m = pos.parse_uci(m).unwrap();
        pos.do_move(m);
    }
    assert!(pos.parse_uci(mv).is_ok(), "{best}");
    // Mate in one from a FEN, and castling written king-takes-rook in
    // Chess960 mode.
    writeln!(input, "position fen 6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1\ngo depth 3").unwrap();
    assert!(wait_for("bestmove").starts_with("bestmove a1a8"));
    writeln!(input, "setoption name UCI_Chess960 value true").unwrap();
    // The castling must have been played: the rook's move to f8 that
    // follows is legal only from f1, and Black, in check, must answer it.
    writeln!(input, "position fen 4k3/8/8/8/8/8/8/4K2R w K - 0 1 moves e1h1 e8d8 f1f8\ngo depth 3")
        .unwrap();
    let best = wait_for("bestmove");
    let after = Position::from_fen("3k1R2/8/8/8/8/8/8/6K1 b - - 3 2").unwrap();
    assert!(after.in_check());
    let mv = best.split_whitespace().nth(1).unwrap();
    assert!(after.parse_uci(mv).is_ok(), "castling not played: {best}");
    // An infinite search stops on request.
    writeln!(input, "position startpos\ngo infinite").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    writeln!(input, "stop").unwrap();
    assert!(wait_for("bestmove").starts_with("bestmove "));
    writeln!(input, "go wtime 1000 btime 1000").unwrap();
    assert!(wait_for("bestmove").starts_with("bestmove "));
    // A stop read straight after `go` is not lost (the search once cleared
    // it on starting, and the engine waited forever), and a search stopped
    // at once, or limited to one node, still gives a legal move.
    let legal = |best: &str| {
        let mv = best.split_whitespace().nth(1).unwrap();
        Position::startpos().parse_uci(mv).is_ok()
    };
    writeln!(input, "position startpos\ngo infinite\nstop").unwrap();
    let best = wait_for("bestmove");
    assert!(legal(&best), "{best}");
    writeln!(input, "go nodes 1").unwrap();
    let best = wait_for("bestmove");
    assert!(legal(&best), "{best}");
    writeln!(input, "go infinite\nquit").unwrap();
    assert!(child.wait().unwrap().success());
    let _ = done.send(());
    guard.join().unwrap();
}
