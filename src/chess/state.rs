//! [`StateInfo`]: what a position keeps per ply that cannot be recomputed
//! cheaply from the board, as in Stockfish. [`Position`](crate::Position)
//! owns a stack of them: `do_move` pushes one, `undo_move` pops it, so
//! unmaking a move restores these fields without recomputing anything.
//!
//! The fields are split as Stockfish splits them: [`CopiedState`] is carried
//! forward from the previous ply and updated (one struct copied in one go, as
//! the seeds' `memcpy` up to `key`), the rest of [`StateInfo`] is computed
//! afresh by every move.

use crate::chess::{
    bitboard::Bitboard,
    psqt::Score,
    types::{ByColor, ByRole, Piece, Square},
};

/// The fields `do_move` copies from the previous ply and then updates.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct CopiedState {
    /// Zobrist key of the pawns alone (for a pawn-structure table).
    pub pawn_key: u64,
    /// Zobrist key of the piece counts (for a material table).
    pub material_key: u64,
    /// Middlegame material of each side without pawns and kings.
    pub non_pawn_material: ByColor<i32>,
    /// The tapered piece-square score, material included, White's view.
    pub psq: Score,
    /// Castling rights, bits as in
    /// [`castling_bit`](crate::chess::types::castling_bit).
    pub castling_rights: u8,
    /// Plies since the last capture or pawn move (the 50-move counter).
    pub rule50: u16,
    /// Plies since the last null move (bounds the repetition search).
    pub plies_from_null: u16,
    /// The en-passant square, set only when a pawn of the side to move
    /// attacks it (Polyglot's rule; pins are ignored).
    pub ep_square: Option<Square>,
}

/// The state of one ply.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct StateInfo {
    /// Fields copied forward from the previous ply.
    pub copied: CopiedState,
    /// The Polyglot Zobrist key of the position.
    pub key: u64,
    /// Enemy pieces giving check to the side to move.
    pub checkers: Bitboard,
    /// For each color, the pieces (of either color) that alone stand between
    /// that color's king and an enemy slider: moving one away exposes the
    /// king. Own pieces among them are pinned.
    pub blockers_for_king: ByColor<Bitboard>,
    /// For each color, its sliders that pin a piece of the other color to the
    /// other color's king.
    pub pinners: ByColor<Bitboard>,
    /// For each role, the squares from which a piece of that role of the side
    /// to move would give check to the enemy king.
    pub check_squares: ByRole<Bitboard>,
    /// The piece the move that led here captured, if any.
    pub captured: Option<Piece>,
}
