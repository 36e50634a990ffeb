//! Weights of the evaluation terms ([`crate::search::eval::Term`]), in
//! centipawns, middlegame and endgame. Written by `kibitz tune`; see
//! `docs/TUNING.md` for how they were made.

use crate::chess::psqt::Score;
use crate::search::eval::NUM_TERMS;

const fn s(mg: i32, eg: i32) -> Score {
    Score::new(mg, eg)
}

/// One weight per term, in the order of `Term`.
#[rustfmt::skip]
pub const WEIGHTS: [Score; NUM_TERMS] = [
    s(0, 10), s(5, 15), s(10, 30), s(20, 55), s(40, 90), s(60, 140), // passed pawns by rank
    s(-10, -12), s(-8, -20), s(-8, -8),                              // isolated, doubled, backward
    s(4, 2), s(6, 4), s(8, 6), s(14, 12), s(25, 30), s(40, 50),       // connected by rank
    s(30, 50),                                                        // bishop pair
    s(4, 4), s(4, 5), s(2, 4), s(1, 2),                               // mobility N B R Q
    s(20, 8), s(10, 5),                                               // rook open, semi-open file
    s(8, 0), s(6, 0), s(6, 0), s(8, 0),                               // king zone attacks N B R Q (for the attacker)
    s(8, 0), s(-12, 0),                                               // king shelter, open files
    s(40, 30), s(30, 20), s(15, 10),                                  // threats (for the attacker): pawn, minor, hanging
    s(5, 20), s(0, 6),                                                // passed: free path, king race
    s(15, 5),                                                         // tempo
];
