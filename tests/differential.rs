//! Differential test against shakmaty, an independent library: on positions
//! from seeded random playouts (standard and Chess960), the same legal
//! moves, the same Polyglot key (shakmaty's Zobrist64 with
//! `EnPassantMode::PseudoLegal`), the same FEN (en passant shown when legal), for every legal move the
//! same SAN (with check and mate marks), and shakmaty's SAN read back by our
//! resolver gives the same move.

use std::collections::BTreeMap;

use kibitz::{Move, Position};
use shakmaty::{
    CastlingMode, Chess, EnPassantMode, Position as _, fen::Fen, san::SanPlus, uci::UciMove,
    zobrist::Zobrist64,
};

use crate::util::Rng;

fn compare(ours: &mut Position, theirs: &Chess) {
    let fen = ours.fen();
    let their_fen = Fen::from_position(theirs, EnPassantMode::Legal).to_string();
    assert_eq!(fen, their_fen);
    let key: Zobrist64 = theirs.zobrist_hash(EnPassantMode::PseudoLegal);
    assert_eq!(ours.key(), key.0, "{fen}");

    // Moves keyed by their Chess960 UCI string (castling = king takes rook).
    let our_moves: BTreeMap<String, Move> =
        ours.legal_moves().iter().map(|&m| (ours.uci_with(m, true), m)).collect();
    let their_moves: BTreeMap<String, shakmaty::Move> = theirs
        .legal_moves()
        .iter()
        .map(|m| (UciMove::from_move(*m, CastlingMode::Chess960).to_string(), *m))
        .collect();
    assert_eq!(
        our_moves.keys().collect::<Vec<_>>(),
        their_moves.keys().collect::<Vec<_>>(),
        "legal moves of {fen}"
    );
    for (uci, &m) in &our_moves {
        let their_san = SanPlus::from_move(theirs.clone(), their_moves[uci]).to_string();
        assert_eq!(ours.san_plus(m), their_san, "SAN of {uci} in {fen}");
        assert_eq!(ours.parse_san(their_san.as_bytes()), Ok(m), "reading {their_san} in {fen}");
    }
}

fn run(chess960: bool, seed: u64, positions: usize) {
    let mut rng = Rng::new(seed);
    let mode = if chess960 { CastlingMode::Chess960 } else { CastlingMode::Standard };
    let mut done = 0;
    while done < positions {
        let mut ours = if chess960 {
            Position::chess960_startpos(rng.below(960) as u32).unwrap()
        } else {
            Position::startpos()
        };
        let mut theirs: Chess = ours.fen().parse::<Fen>().unwrap().into_position(mode).unwrap();
        for _ in 0..300 {
            compare(&mut ours, &theirs);
            done += 1;
            let moves = ours.legal_moves();
            if moves.is_empty() || done >= positions {
                break;
            }
            let m = moves[rng.below(moves.len())];
            let uci = ours.uci_with(m, true);
            let their_m = UciMove::from_ascii(uci.as_bytes()).unwrap().to_move(&theirs).unwrap();
            ours.do_move(m);
            theirs.play_unchecked(their_m);
        }
    }
}

#[test]
fn against_shakmaty_standard() {
    run(false, 11, 100_000);
}

#[test]
fn against_shakmaty_chess960() {
    run(true, 12, 100_000);
}
