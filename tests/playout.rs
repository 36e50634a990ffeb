//! Incremental == from scratch: seeded random playouts, standard and
//! Chess960. At every visited position, every legal move is made; after
//! each `do_move` every StateInfo field is compared with its from-scratch
//! value (`verify_state`), `key_after` and `gives_check` are compared with
//! the position reached, the changed pieces the move recorded
//! (`DirtyPiece`) must take the board before it to the board after it, and
//! `undo_move` must give back a position equal
//! (derived `Eq`, state stack included) to the one before. Then one move is
//! played at random and the walk goes on.
//!
//! Also: the generators agree with each other (captures + quiets = legal,
//! disjoint; the counting sink counts the list), `is_legal` accepts exactly
//! the generated moves among all 65,535 move encodings on a sample of
//! positions, null moves undo, and SAN and UCI round-trip.

use std::collections::HashSet;

use kibitz::{Move, MoveList, Position, Square};

use crate::util::Rng;

struct Totals {
    checked_moves: u64,
    positions: u64,
}

fn check_position(pos: &mut Position, totals: &mut Totals, rng: &mut Rng) {
    let snapshot = pos.clone();
    let moves = pos.legal_moves();
    assert_eq!(moves.len() as u32, pos.count_legal(), "{}", pos.fen());

    let mut caps = MoveList::new();
    let mut quiets = MoveList::new();
    pos.generate_captures(&mut caps);
    pos.generate_quiets(&mut quiets);
    assert_eq!(caps.len() + quiets.len(), moves.len(), "{}", pos.fen());
    let all: HashSet<Move> = moves.iter().copied().collect();
    assert_eq!(all.len(), moves.len(), "duplicate moves in {}", pos.fen());
    for &m in caps.iter() {
        assert!(
            all.contains(&m)
                && (pos.is_capture(m) || m.promotion_role() == Some(kibitz::Role::Queen))
        );
    }
    for &m in quiets.iter() {
        assert!(all.contains(&m) && !caps.contains(m));
    }

    for &m in moves.iter() {
        assert!(pos.is_legal(m), "{m:?} generated but not legal in {}", pos.fen());
        let key_after = pos.key_after(m);
        let gives_check = pos.gives_check(m);
        let san = pos.san(m);
        assert_eq!(pos.parse_san(san.as_bytes()), Ok(m), "SAN {san} in {}", pos.fen());
        let uci = pos.uci(m);
        assert_eq!(pos.parse_uci(&uci), Ok(m), "UCI {uci} in {}", pos.fen());
        let uci960 = pos.uci_with(m, true);
        assert_eq!(pos.parse_uci(&uci960), Ok(m), "UCI {uci960} in {}", pos.fen());

        pos.do_move(m);
        if let Err(e) = pos.verify_state() {
            panic!("after {m:?} from {}: {e}", snapshot.fen());
        }
        // The changed pieces the move recorded take the board before it
        // to the board after it.
        let mut board: Vec<Option<kibitz::Piece>> =
            (0..64).map(|i| snapshot.piece_on(Square::new(i))).collect();
        let dirty = pos.st().dirty;
        for e in dirty.entries() {
            if let Some(from) = e.from {
                assert_eq!(board[from.to_usize()], Some(e.piece), "{m:?} from {}", snapshot.fen());
                board[from.to_usize()] = None;
            }
        }
        for e in dirty.entries().iter().filter_map(|e| e.to.map(|to| (to, e.piece))) {
            board[e.0.to_usize()] = Some(e.1);
        }
        for (i, piece) in board.iter().enumerate() {
            assert_eq!(
                pos.piece_on(Square::new(i as u32)),
                *piece,
                "{m:?} from {}",
                snapshot.fen()
            );
        }
        assert_eq!(pos.key(), key_after, "key_after {m:?} from {}", snapshot.fen());
        assert_eq!(pos.in_check(), gives_check, "gives_check {m:?} from {}", snapshot.fen());
        pos.undo_move(m);
        assert!(*pos == snapshot, "undo {m:?} from {}", snapshot.fen());
        totals.checked_moves += 1;
    }

    if !pos.in_check() {
        pos.do_null_move();
        pos.verify_state().unwrap();
        pos.undo_null_move();
        assert!(*pos == snapshot);
    }

    // A few random 16-bit encodings: legal exactly when generated.
    for _ in 0..8 {
        if let Some(m) = Move::from_u16(rng.next_u64() as u16) {
            assert_eq!(pos.is_legal(m), all.contains(&m), "{m:?} in {}", pos.fen());
        }
    }
    totals.positions += 1;
}

fn playouts(chess960: bool, seed: u64, min_checked: u64) -> Totals {
    let mut rng = Rng::new(seed);
    let mut totals = Totals { checked_moves: 0, positions: 0 };
    while totals.checked_moves < min_checked {
        let mut pos = if chess960 {
            Position::chess960_startpos(rng.below(960) as u32).unwrap()
        } else {
            Position::startpos()
        };
        for _ in 0..400 {
            check_position(&mut pos, &mut totals, &mut rng);
            let moves = pos.legal_moves();
            if moves.is_empty() || pos.rule50() >= 100 {
                break;
            }
            pos.do_move(moves[rng.below(moves.len())]);
        }
    }
    totals
}

#[test]
fn incremental_state_standard() {
    let t = playouts(false, 1, 1_000_000);
    assert!(t.checked_moves >= 1_000_000 && t.positions > 10_000);
    eprintln!("standard: {} moves checked at {} positions", t.checked_moves, t.positions);
}

#[test]
fn incremental_state_chess960() {
    let t = playouts(true, 2, 1_000_000);
    assert!(t.checked_moves >= 1_000_000 && t.positions > 10_000);
    eprintln!("chess960: {} moves checked at {} positions", t.checked_moves, t.positions);
}

#[test]
fn every_encoding_on_a_sample() {
    let mut rng = Rng::new(3);
    let mut pos =
        Position::from_fen("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
            .unwrap();
    for _ in 0..40 {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            break;
        }
        let legal: HashSet<Move> = moves.iter().copied().collect();
        for raw in 1..=u16::MAX {
            let m = Move::from_u16(raw).unwrap();
            assert_eq!(pos.is_legal(m), legal.contains(&m), "{m:?} in {}", pos.fen());
        }
        pos.do_move(moves[rng.below(moves.len())]);
    }
}

#[test]
fn draws() {
    // Repetition: knights out and back twice.
    let mut pos = Position::startpos();
    for _ in 0..2 {
        for san in ["Nf3", "Nf6", "Ng1", "Ng8"] {
            let m = pos.parse_san(san.as_bytes()).unwrap();
            pos.do_move(m);
        }
    }
    assert_eq!(pos.repetitions(), 2);
    assert!(pos.is_repetition(0));
    // 50-move rule, and mate beats it.
    let pos = Position::from_fen("7k/8/8/8/8/8/R7/K7 w - - 100 80").unwrap();
    assert!(pos.is_fifty_move_draw());
    let mate = Position::from_fen("R6k/8/7K/8/8/8/8/8 b - - 100 80").unwrap();
    assert!(mate.is_checkmate() && !mate.is_fifty_move_draw());
    assert!(
        Position::from_fen("7k/8/8/8/8/8/8/K5B1 w - - 0 1").unwrap().has_insufficient_material()
    );
    assert!(
        !Position::from_fen("7k/8/8/8/8/8/8/K4NB1 w - - 0 1").unwrap().has_insufficient_material()
    );
    assert!(
        Position::from_fen("k7/8/8/8/8/8/8/K1B1B3 w - - 0 1").unwrap().has_insufficient_material()
    );
    let stalemate = Position::from_fen("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1").unwrap();
    assert!(stalemate.is_stalemate());
}
