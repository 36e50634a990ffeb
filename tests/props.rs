//! Bad input never panics: arbitrary bytes and mutations of valid strings
//! go through the FEN, SAN and UCI readers, which must return errors (or a
//! position that passes its own consistency check and plays).

use kibitz::{FenOptions, Position, San};
use proptest::prelude::*;

const FENS: [&str; 5] = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
];

const SANS: [&str; 12] = [
    "e4", "Nf3", "exd5", "O-O-O", "e8=Q+", "Nbd7", "R1a3", "Qh4xe1#", "0-0", "g1f3", "e7e8q", "--",
];

/// Reads text as a FEN; if accepted, the position must be consistent and
/// its moves must play and unplay.
pub(crate) fn exercise_fen(bytes: &[u8]) {
    for drop in [false, true] {
        let options = FenOptions { drop_invalid_castling: drop, ..FenOptions::default() };
        if let Ok(mut pos) = Position::from_fen_with(bytes, options) {
            pos.verify_state().unwrap();
            let again = Position::from_fen_with(
                pos.fen().as_bytes(),
                FenOptions { castling_mode: Some(pos.castling_mode()), ..FenOptions::default() },
            )
            .unwrap();
            assert_eq!(again.fen(), pos.fen());
            let snapshot = pos.clone();
            for &m in pos.legal_moves().iter() {
                let san = pos.san_plus(m);
                assert_eq!(pos.parse_san(san.as_bytes()), Ok(m));
                pos.do_move(m);
                pos.verify_state().unwrap();
                pos.undo_move(m);
            }
            assert!(pos == snapshot);
        }
    }
}

pub(crate) fn exercise_san(bytes: &[u8]) {
    let _ = San::parse(bytes);
    for fen in FENS {
        let pos = Position::from_fen(fen).unwrap();
        if let Ok(m) = pos.parse_san(bytes) {
            assert!(pos.is_legal(m));
        }
        if let Ok(text) = std::str::from_utf8(bytes)
            && let Ok(m) = pos.parse_uci(text)
        {
            assert!(m.is_null() || pos.is_legal(m));
        }
    }
}

/// Applies byte edits (replace, insert, delete) to a valid string.
fn mutate(base: &str, edits: &[(usize, u8, u8)]) -> Vec<u8> {
    let mut v = base.as_bytes().to_vec();
    for &(pos, op, byte) in edits {
        let i = if v.is_empty() { 0 } else { pos % (v.len() + 1) };
        match op % 3 {
            0 if i < v.len() => v[i] = byte,
            1 => v.insert(i, byte),
            _ if i < v.len() => {
                v.remove(i);
            }
            _ => {}
        }
    }
    v
}

/// Bytes drawn mostly from the FEN/SAN alphabet, so mutations stay close to
/// valid text.
fn fen_byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        4 => prop::sample::select(b"pnbrqkPNBRQK12345678/ wb-KQkqabcdefghAH0x=+#O".to_vec()),
        1 => any::<u8>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, .. ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_as_fen(bytes in prop::collection::vec(any::<u8>(), 0..100)) {
        exercise_fen(&bytes);
    }

    #[test]
    fn mutated_fens(which in 0..FENS.len(), edits in prop::collection::vec((any::<usize>(), any::<u8>(), fen_byte()), 1..6)) {
        exercise_fen(&mutate(FENS[which], &edits));
    }

    #[test]
    fn arbitrary_bytes_as_san(bytes in prop::collection::vec(any::<u8>(), 0..16)) {
        exercise_san(&bytes);
    }

    #[test]
    fn mutated_sans(which in 0..SANS.len(), edits in prop::collection::vec((any::<usize>(), any::<u8>(), fen_byte()), 1..4)) {
        exercise_san(&mutate(SANS[which], &edits));
    }
}
