//! Weights of the evaluation terms ([`crate::search::hce::Term`]), in
//! centipawns, middlegame and endgame. Written by `kibitz tune` (59602 positions from 1 file(s), K = 1.1029, 2000 epochs, loss 0.005670 -> 0.005023);
//! see `docs/TUNING.md`.

use crate::{chess::psqt::Tapered, search::hce::NUM_TERMS};

const fn s(mg: i32, eg: i32) -> Tapered {
    Tapered::new(mg, eg)
}

/// One weight per term, in the order of `Term`.
#[rustfmt::skip]
pub const WEIGHTS: [Tapered; NUM_TERMS] = [
    s(-1, 10), // passed pawn, rank 2
    s(5, 14), // passed pawn, rank 3
    s(10, 30), // passed pawn, rank 4
    s(20, 54), // passed pawn, rank 5
    s(40, 90), // passed pawn, rank 6
    s(60, 140), // passed pawn, rank 7
    s(-11, -11), // isolated pawn
    s(-12, -20), // doubled pawn
    s(-9, -9), // backward pawn
    s(6, 5), // connected pawn, rank 2
    s(6, 5), // connected pawn, rank 3
    s(6, 4), // connected pawn, rank 4
    s(13, 9), // connected pawn, rank 5
    s(25, 30), // connected pawn, rank 6
    s(40, 50), // connected pawn, rank 7
    s(31, 50), // bishop pair
    s(7, 9), // knight mobility (per square)
    s(7, 7), // bishop mobility (per square)
    s(4, 4), // rook mobility (per square)
    s(2, 0), // queen mobility (per square)
    s(22, 9), // rook on open file
    s(13, 7), // rook on semi-open file
    s(8, 1), // king zone attacked by a knight (per square)
    s(6, 0), // king zone attacked by a bishop (per square)
    s(8, 1), // king zone attacked by a rook (per square)
    s(9, 1), // king zone attacked by a queen (per square)
    s(12, 3), // pawn in the king's shelter
    s(-15, -1), // king on or next to an open file (per file)
    s(38, 30), // piece attacked by a pawn
    s(29, 20), // rook or queen attacked by a minor piece
    s(14, 9), // piece attacked and undefended
    s(5, 21), // passed pawn with a free path
    s(-3, 8), // passed pawn: enemy king's distance minus ours
    s(31, 12), // side to move
];
