//! The end of the game: repetitions, the fifty-move rule, insufficient
//! material, mate and stalemate.

use super::*;

impl Position {
    // ---------------------------------------------------------------------
    // Draws
    // ---------------------------------------------------------------------

    /// How many earlier positions in the reversible stretch of the history
    /// (since the last capture, pawn move or null move) have the current key.
    pub fn repetitions(&self) -> u32 {
        let st = self.st();
        let end = usize::from(st.copied.rule50.min(st.copied.plies_from_null));
        let n = self.states.len();
        let key = st.key;
        let mut count = 0;
        let mut i = 4;
        while i <= end && i < n {
            if self.states[n - 1 - i].key == key {
                count += 1;
            }
            i += 2;
        }
        count
    }

    /// Whether the current position occurred before, fewer than `ply` plies back
    /// (a repetition inside the search tree, when `ply` is the distance from
    /// the root), or repeats twice in all: the search scores both as draws.
    pub fn is_repetition(&self, ply: usize) -> bool {
        let st = self.st();
        let end = usize::from(st.copied.rule50.min(st.copied.plies_from_null));
        let n = self.states.len();
        let key = st.key;
        let mut seen = 0;
        let mut i = 4;
        while i <= end && i < n {
            if self.states[n - 1 - i].key == key {
                if i < ply {
                    return true;
                }
                seen += 1;
                if seen >= 2 {
                    return true;
                }
            }
            i += 2;
        }
        false
    }

    /// Whether the 50-move rule applies: 100 plies without capture or pawn
    /// move, unless the side to move is checkmated.
    pub fn is_fifty_move_draw(&self) -> bool {
        self.rule50() >= 100 && (!self.in_check() || self.has_legal_moves())
    }

    /// Whether neither side can ever mate: king against king, king and minor
    /// piece against king, or bishops all on squares of one color.
    pub fn has_insufficient_material(&self) -> bool {
        let r = &self.by_role;
        if (r.pawn | r.rook | r.queen).any() {
            return false;
        }
        let minors = r.knight | r.bishop;
        if minors.count() <= 1 {
            return true;
        }
        if r.knight.is_empty() {
            // Only bishops: a draw if all stand on one color.
            return (r.bishop & Bitboard::DARK_SQUARES).is_empty()
                || (r.bishop & !Bitboard::DARK_SQUARES).is_empty();
        }
        false
    }

    /// Whether the side to move has a legal move.
    pub fn has_legal_moves(&self) -> bool {
        let mut counter = movegen::CountSink::default();
        self.generate_into::<{ movegen::LEGAL }, _>(&mut counter);
        counter.0 > 0
    }

    /// Whether the side to move is checkmated.
    pub fn is_checkmate(&self) -> bool {
        self.in_check() && !self.has_legal_moves()
    }

    /// Whether the side to move is stalemated.
    pub fn is_stalemate(&self) -> bool {
        !self.in_check() && !self.has_legal_moves()
    }
}
