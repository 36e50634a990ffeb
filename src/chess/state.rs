//! [`StateInfo`]: what a position keeps per ply that cannot be recomputed
//! cheaply from the board, as in Stockfish. [`Position`](crate::Position)
//! owns a stack of them: `do_move` pushes one, `undo_move` pops it, so
//! unmaking a move restores these fields without recomputing anything.
//!
//! The fields are split as Stockfish splits them: [`CopiedState`] is carried
//! forward from the previous ply and updated (one struct copied in one go, as
//! Stockfish's `memcpy` of StateInfo up to `key`), the rest of [`StateInfo`] is computed
//! afresh by every move.

use crate::chess::{
    bitboard::Bitboard,
    psqt::Tapered,
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
    pub psq: Tapered,
    /// Castling rights, bits as in
    /// `castling_bit` (White king side 1, queen side 2, Black 4 and 8).
    pub castling_rights: u8,
    /// Plies since the last capture or pawn move (the 50-move counter).
    pub rule50: u16,
    /// Plies since the last null move (bounds the repetition search).
    pub plies_from_null: u16,
    /// The en-passant square, set only when a pawn of the side to move
    /// attacks it (Polyglot's rule; pins are ignored).
    pub ep_square: Option<Square>,
}

/// One piece a move changed: moved (`from` and `to`), removed (no `to`) or
/// added (no `from`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct DirtyEntry {
    /// The piece.
    pub piece: Piece,
    /// Where it stood before the move, if it stood on the board.
    pub from: Option<Square>,
    /// Where it stands after the move, if it stays on the board.
    pub to: Option<Square>,
}

/// The pieces a move changed, as Stockfish's `DirtyPiece` records them so
/// that an evaluation kept beside the board (an NNUE accumulator) can follow
/// the move without looking at the whole board: up to three entries. A
/// move moves its piece; a capture also removes the captured piece; a
/// promotion removes the pawn from the destination (its entry has no `to`)
/// and adds the new piece there; castling moves the king (always the first
/// entry of a king move) and the rook. A null move changes nothing. The
/// board itself never reads it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct DirtyPiece {
    len: u8,
    entries: [DirtyEntry; 3],
}

impl DirtyPiece {
    /// No piece changed (the first state, a null move).
    pub const NONE: DirtyPiece = DirtyPiece {
        len: 0,
        entries: [DirtyEntry { piece: Piece::WhitePawn, from: None, to: None }; 3],
    };

    /// The changed pieces, in the order the move changed them.
    #[inline]
    pub fn entries(&self) -> &[DirtyEntry] {
        &self.entries[..usize::from(self.len)]
    }

    /// The first entry's piece leaves the board instead of moving (a pawn
    /// that promotes).
    #[inline]
    pub(crate) fn clear_first_destination(&mut self) {
        self.entries[0].to = None;
    }

    /// Records one more change.
    #[inline]
    pub(crate) fn push(&mut self, piece: Piece, from: Option<Square>, to: Option<Square>) {
        self.entries[usize::from(self.len)] = DirtyEntry { piece, from, to };
        self.len += 1;
    }
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
    /// The pieces the move that led here changed.
    pub dirty: DirtyPiece,
}
