//! Perft speed: kibitz against cozy-chess and shakmaty, timed in the same
//! run on the same positions, single thread.
//!
//! Each engine counts the same trees two ways:
//! * bulk: the last ply counted without making its moves (each library's
//!   fastest honest perft: kibitz and cozy-chess count with popcounts,
//!   shakmaty takes the length of its legal move list);
//! * make leaves: every leaf move is made (kibitz: `do_move` with the full
//!   incremental StateInfo, then `undo_move`; the peers: clone and play).
//!
//! Rounds are interleaved (kibitz, cozy, shakmaty, kibitz, ...) so that
//! machine noise hits all three alike; the table reports the median Mnps of
//! each and the ratios of the medians.
//!
//! ```text
//! cargo bench --bench perft                  # 5 rounds
//! cargo bench --bench perft -- --rounds 9
//! cargo bench --bench perft -- --only "position 3" --bulk   # one case, one mode
//! ```

use std::{hint::black_box, time::Instant};

use cozy_chess::Board;
use kibitz::{Position, perft};
use shakmaty::{CastlingMode, Chess, Position as _, fen::Fen};

struct Case {
    name: &'static str,
    fen: &'static str,
    chess960: bool,
    depth: u32,
    nodes: u64,
}

const CASES: [Case; 4] = [
    Case {
        name: "startpos",
        fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        chess960: false,
        depth: 6,
        nodes: 119_060_324,
    },
    Case {
        name: "kiwipete",
        fen: "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        chess960: false,
        depth: 5,
        nodes: 193_690_690,
    },
    Case {
        name: "position 3",
        fen: "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        chess960: false,
        depth: 7,
        nodes: 178_633_661,
    },
    Case {
        name: "chess960",
        fen: "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
        chess960: true,
        depth: 6,
        nodes: 227_689_589,
    },
];

fn cozy_bulk(board: &Board, depth: u32) -> u64 {
    let mut nodes = 0;
    if depth == 1 {
        board.generate_moves(|moves| {
            nodes += moves.len() as u64;
            false
        });
    } else {
        board.generate_moves(|moves| {
            for mv in moves {
                let mut child = board.clone();
                child.play_unchecked(mv);
                nodes += cozy_bulk(&child, depth - 1);
            }
            false
        });
    }
    nodes
}

fn cozy_leaves(board: &Board, depth: u32) -> u64 {
    let mut nodes = 0;
    board.generate_moves(|moves| {
        for mv in moves {
            let mut child = board.clone();
            child.play_unchecked(mv);
            nodes += if depth == 1 {
                black_box(&child);
                1
            } else {
                cozy_leaves(&child, depth - 1)
            };
        }
        false
    });
    nodes
}

fn shakmaty_bulk(pos: &Chess, depth: u32) -> u64 {
    let moves = pos.legal_moves();
    if depth == 1 {
        return moves.len() as u64;
    }
    moves
        .iter()
        .map(|m| {
            let mut child = pos.clone();
            child.play_unchecked(*m);
            shakmaty_bulk(&child, depth - 1)
        })
        .sum()
}

fn shakmaty_leaves(pos: &Chess, depth: u32) -> u64 {
    pos.legal_moves()
        .iter()
        .map(|m| {
            let mut child = pos.clone();
            child.play_unchecked(*m);
            if depth == 1 {
                black_box(&child);
                1
            } else {
                shakmaty_leaves(&child, depth - 1)
            }
        })
        .sum()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Times `f` once; returns Mnps, checking the count.
fn time(nodes: u64, f: impl FnOnce() -> u64) -> f64 {
    let start = Instant::now();
    let n = f();
    let seconds = start.elapsed().as_secs_f64();
    assert_eq!(n, nodes, "wrong node count");
    nodes as f64 / seconds / 1e6
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rounds = args
        .iter()
        .position(|a| a == "--rounds")
        .and_then(|i| args.get(i + 1))
        .and_then(|r| r.parse().ok())
        .unwrap_or(5usize);
    let quick = args.iter().any(|a| a == "--quick");
    // `--only NAME`: the cases whose name starts with NAME; `--bulk` or
    // `--make-leaves`: one mode (for quick A/B runs of one change).
    let only = args.iter().position(|a| a == "--only").and_then(|i| args.get(i + 1));
    let modes: &[bool] = if args.iter().any(|a| a == "--bulk") {
        &[false]
    } else if args.iter().any(|a| a == "--make-leaves") {
        &[true]
    } else {
        &[false, true]
    };

    println!(
        "perft, single thread, {rounds} interleaved rounds, median Mnps (ratio = kibitz / peer)"
    );
    println!(
        "{:<16} {:<12} {:>9} {:>9} {:>9} {:>8} {:>8}",
        "position", "mode", "kibitz", "cozy", "shakmaty", "k/cozy", "k/shak"
    );
    for case in CASES.iter().filter(|c| only.is_none_or(|o| c.name.starts_with(o.as_str()))) {
        let mut pos = Position::from_fen(case.fen).unwrap();
        let board = Board::from_fen(case.fen, case.chess960).unwrap();
        let mode = if case.chess960 { CastlingMode::Chess960 } else { CastlingMode::Standard };
        let chess: Chess = case.fen.parse::<Fen>().unwrap().into_position(mode).unwrap();
        // `--quick`: one ply less (a smoke test for CI).
        let (depth, nodes) = if quick {
            (case.depth - 1, perft::perft(&mut pos, case.depth - 1))
        } else {
            (case.depth, case.nodes)
        };
        for &leaves in modes {
            let (mut k, mut c, mut s) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..rounds {
                if leaves {
                    k.push(time(nodes, || perft::perft_make_leaves(&mut pos, depth)));
                    c.push(time(nodes, || cozy_leaves(&board, depth)));
                    s.push(time(nodes, || shakmaty_leaves(&chess, depth)));
                } else {
                    k.push(time(nodes, || perft::perft(&mut pos, depth)));
                    c.push(time(nodes, || cozy_bulk(&board, depth)));
                    s.push(time(nodes, || shakmaty_bulk(&chess, depth)));
                }
            }
            let (k, c, s) = (median(&mut k), median(&mut c), median(&mut s));
            println!(
                "{:<16} {:<12} {:>9.1} {:>9.1} {:>9.1} {:>7.2}x {:>7.2}x",
                format!("{} d{depth}", case.name),
                if leaves { "make-leaves" } else { "bulk" },
                k,
                c,
                s,
                k / c,
                k / s
            );
        }
    }
}
