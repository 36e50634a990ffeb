//! What the search learns about moves as it goes, after Stockfish's
//! statistics tables: the butterfly history of quiet moves (by side, from
//! and to), the low-ply history (the same, for the first plies of the
//! search only), the pawn history (by the pawn structure, the moving piece
//! and its destination), the capture history (by moving piece, destination
//! and captured kind), the continuation histories (by the move made one to
//! six plies before, and the move now, each as piece and destination) and
//! the counter moves. Every entry moves towards a bonus with "gravity": the
//! fuller it is, the less a bonus of its sign adds, so it stays within its
//! bound.
//!
//! A searcher owns one [`Histories`]; [`Histories::clear`] at a new game
//! makes the next search reproducible.

use crate::chess::{
    mv::Move,
    types::{Color, Piece, Role, Square},
};

/// The butterfly history's bound.
pub const MAIN_MAX: i32 = 7183;
/// The capture history's bound.
pub const CAPTURE_MAX: i32 = 10_692;
/// A continuation history's bound.
pub const CONTINUATION_MAX: i32 = 30_000;
/// The pawn history's bound.
pub const PAWN_MAX: i32 = 8192;
/// The low-ply history's bound.
pub const LOW_PLY_MAX: i32 = 7183;

/// The plies from the root the low-ply history covers.
pub const LOW_PLY: usize = 5;

/// Entries of the pawn history (a power of two), each a [`PieceTo`] table
/// of the pawn structures whose key falls in it.
pub const PAWN_ENTRIES: usize = 8192;

/// The pawn-history entry of the pawn structure with key `pawn_key`.
#[inline]
fn pawn_entry(pawn_key: u64) -> usize {
    pawn_key as usize & (PAWN_ENTRIES - 1)
}

/// A history of a move by its piece and destination.
pub type PieceTo = [[i16; 64]; 12];

/// Continuation tables: one per (in check, capture, piece, destination) of
/// the earlier move, and one more that stands for no move (before the root,
/// after a null move): it is never written.
pub const CONTINUATION_TABLES: usize = 2 * 2 * 12 * 64 + 1;

/// The index of the table for "no earlier move".
pub const NO_CONTINUATION: usize = CONTINUATION_TABLES - 1;

/// Every statistics table of a searcher.
pub struct Histories {
    /// Quiet moves: [side][from * 64 + to].
    pub main: Box<[[i16; 4096]; 2]>,
    /// Captures: [moving piece][destination][captured kind].
    pub capture: Box<[[[i16; 6]; 64]; 12]>,
    /// Continuation histories, [`CONTINUATION_TABLES`] of them.
    pub continuation: Vec<PieceTo>,
    /// Quiet moves near the root: [ply][from * 64 + to], refilled with
    /// [`LOW_PLY_START`] at every search.
    pub low_ply: Box<[[i16; 4096]; LOW_PLY]>,
    /// Quiet moves by pawn structure: [pawn key mod
    /// [`PAWN_ENTRIES`]][moving piece][destination].
    pub pawn: Vec<PieceTo>,
    /// The move that answered a piece's move to a square.
    pub counters: Box<[[Option<Move>; 64]; 12]>,
    /// Which pawn-history tables an update wrote since the last clear, a
    /// bit each: a clear refills only those (the pawn and continuation
    /// tables are 17 MB, and a game searched briefly writes few of them).
    written_pawn: Box<[u64; PAWN_ENTRIES / 64]>,
    /// Which continuation tables an update wrote since the last clear.
    written_continuation: Box<[u64; CONTINUATION_TABLES.div_ceil(64)]>,
    /// How often the hash move turns out best (Stockfish's
    /// `ttMoveHistory`): one entry, raised when a node off the principal
    /// variation ends with its hash move best, lowered when another move is
    /// or when a multi-cut finds a second move; readier double extensions
    /// when high.
    tt_move: i16,
}

/// The hash-move history's bound.
pub const TT_MOVE_MAX: i32 = 8192;

/// The values the tables start from at a new game (Stockfish's
/// `Worker::clear`): a move never tried counts as somewhat bad, the more so
/// in the tables that learn fastest.
const MAIN_START: i16 = -5;
const CAPTURE_START: i16 = -742;
const CONTINUATION_START: i16 = -586;
const PAWN_START: i16 = -1338;
/// The value the low-ply history starts every search from: a move near the
/// root not yet tried this search counts as slightly good.
pub const LOW_PLY_START: i16 = 102;

/// Moves `entry` towards `bonus` (clamped to ±`max`) with gravity.
#[inline]
pub fn gravity(entry: &mut i16, bonus: i32, max: i32) {
    let bonus = bonus.clamp(-max, max);
    let e = i32::from(*entry);
    *entry = (e + bonus - e * bonus.abs() / max) as i16;
}

/// The index of the continuation table of a move: in check or not when it
/// was made, capture or not, its piece and destination.
#[inline]
pub fn continuation_index(in_check: bool, capture: bool, piece: Piece, to: Square) -> usize {
    ((usize::from(in_check) * 2 + usize::from(capture)) * 12 + piece.to_usize()) * 64
        + to.to_usize()
}

/// The butterfly index of a move.
#[inline]
pub fn from_to(m: Move) -> usize {
    m.from().to_usize() * 64 + m.to().to_usize()
}

impl Histories {
    /// Empty tables (as after [`Histories::clear`]).
    pub fn new() -> Histories {
        let mut h = Histories {
            main: Box::new([[0; 4096]; 2]),
            capture: Box::new([[[0; 6]; 64]; 12]),
            continuation: vec![[[0; 64]; 12]; CONTINUATION_TABLES],
            low_ply: Box::new([[0; 4096]; LOW_PLY]),
            pawn: vec![[[0; 64]; 12]; PAWN_ENTRIES],
            counters: Box::new([[None; 64]; 12]),
            written_pawn: Box::new([!0; PAWN_ENTRIES / 64]),
            written_continuation: Box::new([!0; CONTINUATION_TABLES.div_ceil(64)]),
            tt_move: 0,
        };
        h.clear();
        h
    }

    /// Forgets everything learned.
    pub fn clear(&mut self) {
        self.main.iter_mut().for_each(|t| t.fill(MAIN_START));
        self.capture.iter_mut().for_each(|t| t.iter_mut().for_each(|r| r.fill(CAPTURE_START)));
        refill_written(&mut self.pawn, &mut self.written_pawn[..], PAWN_START);
        self.start_search();
        // The table of no move too (at the first clear, when every bit is
        // set): it is never written, and reads as a move never tried (as
        // Stockfish's sentinel table reads).
        refill_written(
            &mut self.continuation,
            &mut self.written_continuation[..],
            CONTINUATION_START,
        );
        self.counters.iter_mut().for_each(|r| r.fill(None));
        self.tt_move = 0;
    }

    /// What a new search keeps of the last: the low-ply history starts
    /// again (the root has changed), and the butterfly history fades by
    /// about a third, so the new position's moves soon outweigh it.
    pub fn start_search(&mut self) {
        self.low_ply.iter_mut().for_each(|t| t.fill(LOW_PLY_START));
        for side in self.main.iter_mut() {
            side.iter_mut().for_each(|e| *e = (i32::from(*e) * 729 / 1024) as i16);
        }
    }

    /// The hash-move history.
    #[inline]
    pub fn tt_move(&self) -> i32 {
        i32::from(self.tt_move)
    }

    /// Moves the hash-move history towards `bonus`.
    #[inline]
    pub fn update_tt_move(&mut self, bonus: i32) {
        gravity(&mut self.tt_move, bonus, TT_MOVE_MAX);
    }

    /// The butterfly history of a quiet move of `us`.
    #[inline]
    pub fn main(&self, us: Color, m: Move) -> i32 {
        i32::from(self.main[us as usize][from_to(m)])
    }

    /// Adds `bonus` to a quiet move's butterfly history.
    #[inline]
    pub fn update_main(&mut self, us: Color, m: Move, bonus: i32) {
        gravity(&mut self.main[us as usize][from_to(m)], bonus, MAIN_MAX);
    }

    /// The low-ply history of a quiet move at `ply` (below [`LOW_PLY`]).
    #[inline]
    pub fn low_ply(&self, ply: usize, m: Move) -> i32 {
        i32::from(self.low_ply[ply][from_to(m)])
    }

    /// Adds `bonus` to a quiet move's low-ply history at `ply` (below
    /// [`LOW_PLY`]).
    #[inline]
    pub fn update_low_ply(&mut self, ply: usize, m: Move, bonus: i32) {
        gravity(&mut self.low_ply[ply][from_to(m)], bonus, LOW_PLY_MAX);
    }

    /// The pawn-history table of the pawn structure with key `pawn_key`.
    #[inline]
    pub fn pawn_table(&self, pawn_key: u64) -> &PieceTo {
        &self.pawn[pawn_entry(pawn_key)]
    }

    /// The pawn history of `piece` moving to `to` with pawn key `pawn_key`.
    #[inline]
    pub fn pawn(&self, pawn_key: u64, piece: Piece, to: Square) -> i32 {
        i32::from(self.pawn_table(pawn_key)[piece.to_usize()][to.to_usize()])
    }

    /// Adds `bonus` to the pawn history of `piece` moving to `to`.
    #[inline]
    pub fn update_pawn(&mut self, pawn_key: u64, piece: Piece, to: Square, bonus: i32) {
        let entry = pawn_entry(pawn_key);
        self.written_pawn[entry / 64] |= 1 << (entry % 64);
        let table = &mut self.pawn[entry];
        gravity(&mut table[piece.to_usize()][to.to_usize()], bonus, PAWN_MAX);
    }

    /// The capture history of `piece` taking a `captured` on `to`.
    #[inline]
    pub fn capture(&self, piece: Piece, to: Square, captured: Role) -> i32 {
        i32::from(self.capture[piece.to_usize()][to.to_usize()][captured as usize])
    }

    /// Adds `bonus` to a capture's history.
    #[inline]
    pub fn update_capture(&mut self, piece: Piece, to: Square, captured: Role, bonus: i32) {
        let entry = &mut self.capture[piece.to_usize()][to.to_usize()][captured as usize];
        gravity(entry, bonus, CAPTURE_MAX);
    }

    /// The entry of table `table` for `piece` moving to `to`.
    #[inline]
    pub fn continuation(&self, table: usize, piece: Piece, to: Square) -> i32 {
        i32::from(self.continuation[table][piece.to_usize()][to.to_usize()])
    }

    /// Adds `bonus` to the entry of table `table` (never the table of no
    /// move).
    #[inline]
    pub fn update_continuation(&mut self, table: usize, piece: Piece, to: Square, bonus: i32) {
        if table != NO_CONTINUATION {
            self.written_continuation[table / 64] |= 1 << (table % 64);
            let entry = &mut self.continuation[table][piece.to_usize()][to.to_usize()];
            gravity(entry, bonus, CONTINUATION_MAX);
        }
    }
}

/// Refills with `start` the tables whose bits are set in `written`, and
/// clears the bits.
fn refill_written(tables: &mut [PieceTo], written: &mut [u64], start: i16) {
    for (word, bits) in written.iter_mut().enumerate() {
        let mut rest = std::mem::take(bits);
        while rest != 0 {
            let index = word * 64 + rest.trailing_zeros() as usize;
            rest &= rest - 1;
            if let Some(table) = tables.get_mut(index) {
                table.iter_mut().for_each(|r| r.fill(start));
            }
        }
    }
}

impl Default for Histories {
    fn default() -> Histories {
        Histories::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gravity keeps an entry within its bound whatever the bonuses, and a
    /// bonus of the entry's own sign adds less the fuller it is.
    #[test]
    fn gravity_bounds_entries() {
        let mut e = 0i16;
        for _ in 0..10_000 {
            gravity(&mut e, 1594, MAIN_MAX);
            assert!(i32::from(e) <= MAIN_MAX);
        }
        assert!(i32::from(e) > MAIN_MAX * 9 / 10);
        let before = e;
        gravity(&mut e, 100, MAIN_MAX);
        assert!(e - before < 10, "a full entry barely moves: {before} -> {e}");
        for _ in 0..10_000 {
            gravity(&mut e, -5000, CONTINUATION_MAX);
            assert!(i32::from(e) >= -CONTINUATION_MAX);
        }
    }

    /// A new search starts the low-ply history again and fades the
    /// butterfly history; the pawn history keeps each pawn structure's
    /// moves apart, and a new game forgets everything.
    #[test]
    fn lifetimes_and_pawn_structures() {
        let mut h = Histories::new();
        let m = Move::normal(Square::G1, Square::F3);
        h.update_main(Color::White, m, 1024);
        h.update_low_ply(2, m, 2000);
        let main = h.main(Color::White, m);
        assert!(main > 900, "{main}");
        assert!(h.low_ply(2, m) > i32::from(LOW_PLY_START) + 1500);
        h.start_search();
        assert_eq!(h.main(Color::White, m), main * 729 / 1024);
        assert_eq!(h.low_ply(2, m), i32::from(LOW_PLY_START));
        let (knight, f3) = (Piece::WhiteKnight, Square::F3);
        h.update_pawn(7, knight, f3, 3000);
        assert!(h.pawn(7, knight, f3) > 0);
        assert_eq!(h.pawn(7 + PAWN_ENTRIES as u64, knight, f3), h.pawn(7, knight, f3));
        assert_eq!(h.pawn(8, knight, f3), i32::from(PAWN_START));
        h.clear();
        assert_eq!(h.pawn(7, knight, f3), i32::from(PAWN_START));
        assert_eq!(h.main(Color::White, m), i32::from(MAIN_START) * 729 / 1024);
    }

    /// The continuation tables are all distinct, and the table of no move
    /// is never written.
    #[test]
    fn continuation_tables() {
        let mut seen = std::collections::HashSet::new();
        for check in [false, true] {
            for capture in [false, true] {
                for piece in Piece::ALL {
                    for sq in 0..64 {
                        let to = Square::new(sq);
                        assert!(seen.insert(continuation_index(check, capture, piece, to)));
                    }
                }
            }
        }
        assert_eq!(seen.len(), NO_CONTINUATION);
        assert!(seen.iter().all(|&i| i < NO_CONTINUATION));
        let mut h = Histories::new();
        let (p, to) = (Piece::WhiteKnight, Square::F3);
        h.update_continuation(NO_CONTINUATION, p, to, 1000);
        assert_eq!(h.continuation(NO_CONTINUATION, p, to), i32::from(CONTINUATION_START));
        assert_eq!(h.continuation(0, p, to), i32::from(CONTINUATION_START));
    }

    /// A clear, which refills only the tables written since the last
    /// one, leaves every table as a new one, after updates that reach the
    /// first and last tables and the edges of the bit words.
    #[test]
    fn a_clear_refills_every_table_written() {
        let fresh = Histories::new();
        let mut h = Histories::new();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for round in 0..3 {
            let tables = [0, 63, 64, 65, 127, 128, NO_CONTINUATION - 1, 1000 + round];
            for (i, &table) in tables.iter().enumerate() {
                let piece = Piece::ALL[i % 12];
                let to = Square::new((i * 9 % 64) as u32);
                h.update_continuation(table, piece, to, 1500);
                h.update_pawn(table as u64, piece, to, 1500);
                h.update_pawn((PAWN_ENTRIES - 1 - table % PAWN_ENTRIES) as u64, piece, to, -900);
            }
            for _ in 0..2000 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let piece = Piece::ALL[(state % 12) as usize];
                let to = Square::new((state >> 8) as u32 % 64);
                let table = (state >> 16) as usize % CONTINUATION_TABLES;
                h.update_continuation(table, piece, to, (state >> 40) as i32 % 4000 - 2000);
                h.update_pawn(state >> 24, piece, to, (state >> 48) as i32 % 4000 - 2000);
            }
            assert!(h.pawn != fresh.pawn && h.continuation != fresh.continuation);
            h.clear();
            assert!(h.pawn == fresh.pawn, "round {round}: a pawn-history table not refilled");
            assert!(h.continuation == fresh.continuation, "round {round}: a continuation table");
        }
    }
}
