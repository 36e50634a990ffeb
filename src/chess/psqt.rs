//! Material values and piece-square tables, the part of the evaluation that
//! [`Position::do_move`](crate::Position::do_move) keeps up to date
//! incrementally in [`StateInfo`](crate::StateInfo): a tapered
//! [`Tapered`] (middlegame, endgame) from White's point of view, and the
//! non-pawn material of each side.
//!
//! The tables are built at compile time from [`PARAMS`], a flat list of
//! numbers that the evaluation tuner adjusts.

use std::ops::{Add, AddAssign, Neg, Sub, SubAssign};

use crate::chess::types::{Piece, Role, Square};

/// A pair of middlegame and endgame values, tapered by game phase.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Tapered {
    /// Middlegame value.
    pub mg: i32,
    /// Endgame value.
    pub eg: i32,
}

impl Tapered {
    /// Zero in both phases.
    pub const ZERO: Tapered = Tapered { mg: 0, eg: 0 };

    /// A score of `mg` and `eg`.
    #[inline]
    pub const fn new(mg: i32, eg: i32) -> Tapered {
        Tapered { mg, eg }
    }
}

impl Add for Tapered {
    type Output = Tapered;
    #[inline]
    fn add(self, rhs: Tapered) -> Tapered {
        Tapered { mg: self.mg + rhs.mg, eg: self.eg + rhs.eg }
    }
}

impl Sub for Tapered {
    type Output = Tapered;
    #[inline]
    fn sub(self, rhs: Tapered) -> Tapered {
        Tapered { mg: self.mg - rhs.mg, eg: self.eg - rhs.eg }
    }
}

impl Neg for Tapered {
    type Output = Tapered;
    #[inline]
    fn neg(self) -> Tapered {
        Tapered { mg: -self.mg, eg: -self.eg }
    }
}

impl AddAssign for Tapered {
    #[inline]
    fn add_assign(&mut self, rhs: Tapered) {
        *self = *self + rhs;
    }
}

impl SubAssign for Tapered {
    #[inline]
    fn sub_assign(&mut self, rhs: Tapered) {
        *self = *self - rhs;
    }
}

/// Number of tunable numbers in [`PARAMS`]: 5 material pairs plus
/// 6 tables of 32 half-board squares (files a-d, mirrored to e-h) in two
/// phases.
pub const NUM_PARAMS: usize = 5 * 2 + 6 * 32 * 2;

/// The tunable numbers behind the tables, in order: material (mg, eg) for
/// pawn, knight, bishop, rook and queen; then for each role from pawn to
/// king, 32 middlegame values and 32 endgame values for the squares a1-d1,
/// a2-d2, ... a8-d8 (White's view; files e-h mirror a-d). Written by
/// `kibitz tune` into `psqt_params.rs`.
pub const PARAMS: [i32; NUM_PARAMS] = psqt_params::TUNED;

#[path = "psqt_params.rs"]
mod psqt_params;

/// The middlegame material value of each role, used for
/// [`CopiedState::non_pawn_material`](crate::chess::state::CopiedState::non_pawn_material)
/// and game phase.
#[inline]
pub const fn mg_value(role: Role) -> i32 {
    match role {
        Role::Pawn => PARAMS[0],
        Role::Knight => PARAMS[2],
        Role::Bishop => PARAMS[4],
        Role::Rook => PARAMS[6],
        Role::Queen => PARAMS[8],
        Role::King => 0,
    }
}

/// Builds the 12 x 64 table from a parameter vector: material plus the
/// square bonus, positive for White, mirrored and negated for Black.
pub const fn build_psq(p: &[i32; NUM_PARAMS]) -> [[Tapered; 64]; 12] {
    let mut table = [[Tapered::ZERO; 64]; 12];
    let mut piece = 0;
    while piece < 12 {
        let role = piece / 2;
        let white = piece % 2 == 0;
        let (mat_mg, mat_eg) = if role < 5 { (p[2 * role], p[2 * role + 1]) } else { (0, 0) };
        let mut sq = 0;
        while sq < 64 {
            // The square as seen from the piece's own side.
            let rel = if white { sq } else { sq ^ 56 };
            let file = rel % 8;
            let half_file = if file < 4 { file } else { 7 - file };
            let idx = (rel / 8) * 4 + half_file;
            let mg = mat_mg + p[10 + role * 64 + idx];
            let eg = mat_eg + p[10 + role * 64 + 32 + idx];
            table[piece][sq] = if white { Tapered::new(mg, eg) } else { Tapered::new(-mg, -eg) };
            sq += 1;
        }
        piece += 1;
    }
    table
}

static PSQ: [[Tapered; 64]; 12] = build_psq(&PARAMS);

/// The piece-square score (material included) of `piece` on `sq`, from
/// White's point of view.
#[inline]
pub fn psq(piece: Piece, sq: Square) -> Tapered {
    PSQ[piece.to_usize()][sq.to_usize()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::types::Color;

    #[test]
    fn tables_are_symmetric() {
        for sq in Square::ALL {
            for role in Role::ALL {
                let w = psq(Piece::new(Color::White, role), sq);
                let b = psq(Piece::new(Color::Black, role), sq.flip_vertical());
                assert_eq!(w, -b, "{role:?} {sq}");
            }
        }
        assert!(psq(Piece::WhiteKnight, Square::D4).mg > psq(Piece::WhiteKnight, Square::A1).mg);
    }
}
