//! The end of the game: repetitions, the fifty-move rule, insufficient
//! material, mate and stalemate.

use super::*;
use crate::chess::attacks::attacks;

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

    /// Whether the side to move has a reversible move that reaches a
    /// position of the reversible stretch again (Stockfish's
    /// `upcoming_repetition`, after Marcel van Kervinck's cuckoo tables):
    /// the search may then count on at least a draw. As with
    /// [`Position::is_repetition`], a position older than the search
    /// (`ply` plies from its root) counts only if it repeats itself.
    ///
    /// The opponent's moves since that position must cancel out (their
    /// keys' changes XOR to nothing), and what is left of the difference
    /// must be the key of one move of a piece along a clear path.
    pub fn upcoming_repetition(&self, ply: usize) -> bool {
        let st = self.st();
        let n = self.states.len();
        let end = usize::from(st.copied.rule50.min(st.copied.plies_from_null)).min(n - 1);
        if end < 3 {
            return false;
        }
        let key_back = |back: usize| self.states[n - 1 - back].key;
        let key = st.key;
        let table = cuckoo();
        let mut theirs = key ^ key_back(1) ^ zobrist::WHITE_TO_MOVE;
        let mut i = 3;
        while i <= end {
            theirs ^= key_back(i - 1) ^ key_back(i) ^ zobrist::WHITE_TO_MOVE;
            if theirs == 0
                && let Some((a, b)) = table.find(key ^ key_back(i))
                && (between(a, b) & self.occupied()).is_empty()
                && (ply > i || self.repeats_earlier(n - 1 - i))
            {
                return true;
            }
            i += 2;
        }
        false
    }

    /// Whether the position of state `index` occurred before in its own
    /// reversible stretch.
    fn repeats_earlier(&self, index: usize) -> bool {
        let st = &self.states[index];
        let end = usize::from(st.copied.rule50.min(st.copied.plies_from_null)).min(index);
        (4..=end).step_by(2).any(|back| self.states[index - back].key == st.key)
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

/// The cuckoo tables of every reversible move: for each piece other than a
/// pawn and each pair of squares it can move between on an empty board,
/// the key change of that move (the two squares' keys and the side to
/// move's), stored at one of two slots given by the key's bits, with the
/// move's squares beside it. 3,668 moves in 8,192 slots.
pub(crate) struct Cuckoo {
    keys: Box<[u64; CUCKOO_SIZE]>,
    squares: Box<[(Square, Square); CUCKOO_SIZE]>,
}

const CUCKOO_SIZE: usize = 8192;

#[inline(always)]
fn cuckoo_slot_1(key: u64) -> usize {
    (key as usize) & (CUCKOO_SIZE - 1)
}

#[inline(always)]
fn cuckoo_slot_2(key: u64) -> usize {
    ((key >> 16) as usize) & (CUCKOO_SIZE - 1)
}

impl Cuckoo {
    fn build() -> Cuckoo {
        let mut table = Cuckoo {
            keys: Box::new([0; CUCKOO_SIZE]),
            squares: Box::new([(Square::A1, Square::A1); CUCKOO_SIZE]),
        };
        for piece in Piece::ALL {
            if piece.role() == Role::Pawn {
                continue;
            }
            for a in Square::ALL {
                for b in attacks(piece.role(), a, Bitboard::EMPTY) {
                    if b.to_usize() > a.to_usize() {
                        let key = zobrist::piece_square(piece, a)
                            ^ zobrist::piece_square(piece, b)
                            ^ zobrist::WHITE_TO_MOVE;
                        table.insert(key, (a, b));
                    }
                }
            }
        }
        table
    }

    /// Inserts by displacement: an occupied slot's entry moves to its
    /// other slot, and so on until one lands in an empty slot.
    fn insert(&mut self, mut key: u64, mut squares: (Square, Square)) {
        let mut slot = cuckoo_slot_1(key);
        loop {
            std::mem::swap(&mut self.keys[slot], &mut key);
            std::mem::swap(&mut self.squares[slot], &mut squares);
            if key == 0 {
                return;
            }
            slot = if slot == cuckoo_slot_1(key) { cuckoo_slot_2(key) } else { cuckoo_slot_1(key) };
        }
    }

    /// The squares of the reversible move whose key change is `key`.
    #[inline]
    pub(crate) fn find(&self, key: u64) -> Option<(Square, Square)> {
        let slot = cuckoo_slot_1(key);
        if self.keys[slot] == key {
            return Some(self.squares[slot]);
        }
        let slot = cuckoo_slot_2(key);
        (self.keys[slot] == key).then(|| self.squares[slot])
    }

    /// How many moves the tables hold.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.keys.iter().filter(|&&k| k != 0).count()
    }
}

/// The cuckoo tables, built on first use.
#[inline]
pub(crate) fn cuckoo() -> &'static Cuckoo {
    static TABLE: std::sync::OnceLock<Cuckoo> = std::sync::OnceLock::new();
    TABLE.get_or_init(Cuckoo::build)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every reversible move of a knight, bishop, rook, queen or king of
    /// either color (Stockfish's count) finds a slot.
    #[test]
    fn the_cuckoo_tables_hold_every_reversible_move() {
        assert_eq!(cuckoo().len(), 3668);
    }

    /// The key a quiet move of the piece on `a` to `b` leads to, without
    /// the move's effect on castling rights: what the cuckoo tables hold.
    fn key_after(pos: &Position, a: Square, b: Square) -> u64 {
        let piece = pos.piece_on(a).unwrap();
        pos.key()
            ^ zobrist::piece_square(piece, a)
            ^ zobrist::piece_square(piece, b)
            ^ zobrist::WHITE_TO_MOVE
    }

    /// Whether a position of the reversible stretch at an odd distance
    /// (the other side to move there, so one move of ours away) has `key`,
    /// counted as `upcoming_repetition` counts it.
    fn stretch_has(pos: &Position, key: u64, ply: usize) -> bool {
        let n = pos.states.len();
        let st = pos.st();
        let end = usize::from(st.copied.rule50.min(st.copied.plies_from_null)).min(n - 1);
        (3..=end).step_by(2).any(|i| {
            pos.states[n - 1 - i].key == key && (ply > i || pos.repeats_earlier(n - 1 - i))
        })
    }

    /// `upcoming_repetition` against a search of every move by hand: true
    /// exactly when some piece of the side to move (not a pawn) can step
    /// along a clear path to an empty square and so reach a key of the
    /// stretch; and true whenever a legal quiet move reaches one (its real
    /// key, from `do_move`). Random games in positions of few pawns, half
    /// their moves taking back the mover's previous move, so that
    /// repetitions come often, at distances from the root 0 to 12.
    #[test]
    fn upcoming_repetition_agrees_with_every_move_tried() {
        let starts = [
            "4k3/8/3n4/8/8/2B5/8/R3K2R w KQ - 0 1",
            "r3k1nr/8/8/3q4/8/8/3Q4/1N2K2R w Kkq - 0 1",
            "6k1/5p2/4b3/8/8/3N4/5P2/6K1 b - - 10 40",
            "2r3k1/8/8/8/8/8/8/2R3K1 w - - 0 1",
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let (mut checked, mut found) = (0, 0);
        for game in 0..200 {
            let mut pos = Position::from_fen(starts[game % starts.len()]).unwrap();
            let mut played: Vec<Move> = Vec::new();
            for _ in 0..60 {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                for ply in 0..=12 {
                    let fast = pos.upcoming_repetition(ply);
                    let us = pos.side_to_move();
                    let mut by_hand = false;
                    for a in pos.pieces_of(us) & !pos.pieces_by_role(Role::Pawn) {
                        let role = pos.piece_on(a).unwrap().role();
                        for b in attacks(role, a, pos.occupied()) & !pos.occupied() {
                            by_hand |= stretch_has(&pos, key_after(&pos, a, b), ply);
                        }
                    }
                    assert_eq!(fast, by_hand, "{} at ply {ply}", pos.fen());
                    for &m in moves.iter() {
                        if m.kind() != MoveKind::Normal
                            || pos.is_capture(m)
                            || pos.piece_on(m.from()).unwrap().role() == Role::Pawn
                        {
                            continue;
                        }
                        pos.do_move(m);
                        let key = pos.key();
                        pos.undo_move(m);
                        if stretch_has(&pos, key, ply) {
                            assert!(fast, "{} at ply {ply}: {m:?} repeats", pos.fen());
                        }
                    }
                    checked += 1;
                    found += usize::from(fast);
                }
                let back = played.len().checked_sub(2).map(|i| played[i]);
                let take_back = back
                    .map(|b| Move::normal(b.to(), b.from()))
                    .filter(|m| next() % 2 == 0 && moves.iter().any(|l| l == m));
                let m = take_back.unwrap_or_else(|| moves[(next() % moves.len() as u64) as usize]);
                pos.do_move(m);
                played.push(m);
            }
        }
        // The games must have made both answers common.
        assert!(found * 10 > checked && found * 10 < checked * 9, "{found} of {checked}");
    }
}
