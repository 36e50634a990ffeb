//! UCI move strings (`e2e4`, `e7e8q`, `0000`), in and out.
//!
//! Castling is written the standard way (`e1g1`, the king's two-step) or
//! the Chess960 way (`e1h1`, the king taking its own rook); the position's
//! castling mode picks the form by default, and both forms are read in
//! either mode when they are unambiguous.
//!
//! ```
//! use kibitz::Position;
//!
//! let pos = Position::from_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")?;
//! let castle = pos.parse_uci("e1g1")?;
//! assert!(castle.is_castling());
//! assert_eq!(pos.uci(castle), "e1g1");
//! assert_eq!(pos.uci_with(castle, true), "e1h1");
//! assert_eq!(pos.parse_uci("e1h1")?, castle);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;

use crate::chess::{
    mv::{Move, MoveKind},
    position::Position,
    types::{CastlingSide, Role, Square},
};

/// A UCI move string that cannot be read or is not legal here.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum UciError {
    /// Not of the form `e2e4`, `e7e8q` or `0000`.
    Syntax(String),
    /// Well formed but not a legal move in the position.
    Illegal(String),
}

impl fmt::Display for UciError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UciError::Syntax(s) => write!(f, "invalid uci move {s:?}"),
            UciError::Illegal(s) => write!(f, "illegal uci move {s:?}"),
        }
    }
}

impl std::error::Error for UciError {}

/// Writes `m` in UCI; castling as king-takes-rook if `chess960`.
pub fn move_to_uci(m: Move, chess960: bool) -> String {
    if m.is_null() {
        return "0000".to_string();
    }
    let from = m.from();
    let mut to = m.to();
    if m.is_castling() && !chess960 {
        let side = if to > from { CastlingSide::KingSide } else { CastlingSide::QueenSide };
        to = Square::from_coords(side.king_to_file(), from.rank());
    }
    let mut s = format!("{from}{to}");
    if let Some(p) = m.promotion_role() {
        s.push(p.char());
    }
    s
}

/// Finds the legal move from `from` to `to` (with `promotion`), reading a
/// king's two-step or a king-takes-own-rook as castling.
pub(crate) fn resolve_coordinates(
    pos: &Position,
    from: Square,
    to: Square,
    promotion: Option<Role>,
) -> Option<Move> {
    let us = pos.side_to_move();
    let piece = pos.piece_on(from)?;
    if piece.color() != us {
        return None;
    }
    let candidate = if piece.role() == Role::King && pos.piece_on(to) == Some(Role::Rook.of(us)) {
        Move::castling(from, to)
    } else if piece.role() == Role::King
        && from.rank() == to.rank()
        && from.file().to_u32().abs_diff(to.file().to_u32()) >= 2
    {
        let side = if to > from { CastlingSide::KingSide } else { CastlingSide::QueenSide };
        if to.file() != side.king_to_file() {
            return None;
        }
        Move::castling(from, pos.castling_rook(us, side)?)
    } else if piece.role() == Role::Pawn && pos.ep_square() == Some(to) && from.file() != to.file()
    {
        Move::en_passant(from, to)
    } else if let Some(p) = promotion {
        Move::promotion(from, to, p)
    } else {
        Move::normal(from, to)
    };
    if candidate.kind() != MoveKind::Promotion && promotion.is_some() {
        return None;
    }
    if pos.is_legal(candidate) {
        return Some(candidate);
    }
    // A Chess960 king may castle onto its own square or next to it; the
    // two-step reading then fails and a normal king move is tried.
    if candidate.is_castling() && pos.is_legal(Move::normal(from, to)) {
        return Some(Move::normal(from, to));
    }
    None
}

impl Position {
    /// The UCI string of `m` in this position's castling mode.
    pub fn uci(&self, m: Move) -> String {
        move_to_uci(m, self.is_chess960())
    }

    /// The UCI string of `m`, castling as king-takes-rook if `chess960`.
    pub fn uci_with(&self, m: Move, chess960: bool) -> String {
        move_to_uci(m, chess960)
    }

    /// Reads a UCI move and checks that it is legal here. `0000` gives the
    /// null move (legal only when not in check).
    pub fn parse_uci(&self, text: &str) -> Result<Move, UciError> {
        let b = text.as_bytes();
        if b == b"0000" {
            return if self.in_check() {
                Err(UciError::Illegal(text.into()))
            } else {
                Ok(Move::NULL)
            };
        }
        if b.len() != 4 && b.len() != 5 {
            return Err(UciError::Syntax(text.into()));
        }
        let from = Square::from_ascii(&b[0..2]).ok_or_else(|| UciError::Syntax(text.into()))?;
        let to = Square::from_ascii(&b[2..4]).ok_or_else(|| UciError::Syntax(text.into()))?;
        let promotion = match b.get(4) {
            None => None,
            Some(c) => Some(
                Role::from_char(*c as char)
                    .filter(|r| !matches!(r, Role::Pawn | Role::King))
                    .ok_or_else(|| UciError::Syntax(text.into()))?,
            ),
        };
        resolve_coordinates(self, from, to, promotion).ok_or_else(|| UciError::Illegal(text.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chess960_castling_forms() {
        // King on b1, rook on a1: O-O-O lands the king on c1.
        let pos = Position::from_fen_960("4k3/8/8/8/8/8/8/RK5R w AH - 0 1").unwrap();
        let qs = pos.parse_uci("b1a1").unwrap();
        assert!(qs.is_castling());
        assert_eq!(pos.uci(qs), "b1a1");
        assert_eq!(pos.uci_with(qs, false), "b1c1");
        // b1c1 is a king step here but also the castling destination:
        // the king-takes-rook form is unambiguous.
        assert!(pos.parse_uci("b1c1").is_ok());
        assert_eq!(pos.parse_uci("b1b3"), Err(UciError::Illegal("b1b3".into())));
        assert!(matches!(pos.parse_uci("b1"), Err(UciError::Syntax(_))));
        assert!(matches!(pos.parse_uci("a7a8k"), Err(UciError::Syntax(_))));
    }
}
