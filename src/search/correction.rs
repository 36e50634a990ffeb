//! The correction histories, after Stockfish's search: they learn how far
//! the static evaluation strays from what searches find, by the pawns, by
//! the knights and bishops, by each side's pieces other than pawns, and by
//! the previous move as seen from the moves two and four plies before it.
//! The search adds their weighted sum to the static evaluation, and reads
//! its size as the evaluation's uncertainty (pruning and reducing less
//! where it is large).
//!
//! Every entry moves towards a bonus with the histories' gravity
//! ([`gravity`]), within [`CORRECTION_MAX`].

use crate::{
    chess::{
        position::Position,
        types::{Color, Piece, Role, Square},
    },
    search::history::{PieceTo, gravity},
};

/// A correction entry's bound.
pub const CORRECTION_MAX: i32 = 1024;

/// Entries of each correction table found by a key of the position.
const ENTRIES: usize = 1 << 16;

/// Correction tables found by a move (its piece and destination), and one
/// more for no move (before the root, after a null move).
const MOVE_TABLES: usize = 12 * 64 + 1;

/// The table of "no move".
const NO_MOVE: usize = MOVE_TABLES - 1;

/// The correction table of a move by its piece and destination, or the
/// table of no move.
#[inline]
pub fn move_table(moved: Option<(Piece, Square)>) -> usize {
    moved.map_or(NO_MOVE, |(pc, to)| pc.to_usize() * 64 + to.to_usize())
}

/// The entries a position's corrections are found at: its pawns (the
/// position's pawn key), its knights and bishops, and each side's pieces
/// other than pawns (king included), as Stockfish keys them. The last three
/// are hashed from the bitboards at each node rather than kept by
/// `do_move`: a dozen multiplications, once a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CorrectionKeys {
    pawn: usize,
    minor: usize,
    non_pawn: [usize; 2],
}

impl CorrectionKeys {
    /// The keys of `pos`.
    #[inline]
    pub fn of(pos: &Position) -> CorrectionKeys {
        // An odd multiplier per piece, a rotation between pieces and a
        // final mix: bitboards that differ in any square give different,
        // well-spread sums.
        const MUL: [u64; 12] = [
            0x9e37_79b9_7f4a_7c15,
            0xbf58_476d_1ce4_e5b9,
            0x94d0_49bb_1331_11eb,
            0xd6e8_feb8_6659_fd93,
            0xa076_1d64_78bd_642f,
            0xe703_7ed1_a0b4_28db,
            0x8ebc_6af0_9c88_c6e3,
            0x5899_65cc_7537_4cc3,
            0x1d8e_4e27_c47d_124f,
            0xc2b2_ae3d_27d4_eb4f,
            0x1656_67b1_9e37_79f9,
            0x27d4_eb2f_1656_67c5,
        ];
        let mix = |mut x: u64| {
            x ^= x >> 31;
            x = x.wrapping_mul(0x7fb5_d329_728e_a185);
            x ^= x >> 27;
            x as usize & (ENTRIES - 1)
        };
        let hash = |pieces: &[(Color, Role)]| {
            pieces.iter().fold(0u64, |h, &(c, r)| {
                let pc = Piece::new(c, r);
                h.wrapping_add(pos.pieces(c, r).0.wrapping_mul(MUL[pc.to_usize()])).rotate_left(7)
            })
        };
        let side = |c: Color| {
            mix(hash(&[
                (c, Role::Knight),
                (c, Role::Bishop),
                (c, Role::Rook),
                (c, Role::Queen),
                (c, Role::King),
            ]))
        };
        use Color::{Black, White};
        CorrectionKeys {
            pawn: pos.pawn_key() as usize & (ENTRIES - 1),
            minor: mix(hash(&[
                (White, Role::Knight),
                (White, Role::Bishop),
                (Black, Role::Knight),
                (Black, Role::Bishop),
            ])),
            non_pawn: [side(White), side(Black)],
        }
    }
}

/// The moves before a node, as its move corrections read them: the
/// previous move (the piece on its destination, and the destination) and
/// the tables of the moves two and four plies before ([`move_table`]).
#[derive(Clone, Copy, Debug)]
pub struct CorrectionMoves {
    /// The previous move, if a real one.
    pub previous: Option<(Piece, Square)>,
    /// The tables of the moves two and four plies before.
    pub tables: [usize; 2],
}

/// Every correction table of a searcher (2.2 MB).
pub struct Corrections {
    /// By pawn key, then the side to move.
    pawn: Vec<[i16; 2]>,
    /// By the knights and bishops, then the side to move.
    minor: Vec<[i16; 2]>,
    /// By each side's pieces other than pawns: [side][key], then the side
    /// to move.
    non_pawn: [Vec<[i16; 2]>; 2],
    /// By the previous move, one table per move two or four plies before it.
    moves: Vec<PieceTo>,
}

impl Corrections {
    /// Tables as at a new game.
    pub fn new() -> Corrections {
        let mut c = Corrections {
            pawn: vec![[0; 2]; ENTRIES],
            minor: vec![[0; 2]; ENTRIES],
            non_pawn: [vec![[0; 2]; ENTRIES], vec![[0; 2]; ENTRIES]],
            moves: vec![[[0; 64]; 12]; MOVE_TABLES],
        };
        c.clear();
        c
    }

    /// Forgets everything learned. Stockfish starts its position
    /// corrections at -5 and its move corrections at 5.
    pub fn clear(&mut self) {
        for table in [&mut self.pawn, &mut self.minor].into_iter().chain(self.non_pawn.iter_mut()) {
            table.fill([-5; 2]);
        }
        for table in &mut self.moves {
            table.iter_mut().for_each(|r| r.fill(5));
        }
    }

    /// The correction of a static evaluation with `us` to move, in
    /// Stockfish's internal units times 131,072 (Stockfish's
    /// `correction_value`): the position entries weighted 15,341 (pawns),
    /// 10,569 (minor pieces) and 12,906 (each side's other pieces), the two
    /// move entries 8,761 each (64,049 in all with no previous move).
    #[inline]
    pub fn value(&self, keys: &CorrectionKeys, us: Color, moves: &CorrectionMoves) -> i32 {
        let u = us as usize;
        let pawn = i32::from(self.pawn[keys.pawn][u]);
        let minor = i32::from(self.minor[keys.minor][u]);
        let white = i32::from(self.non_pawn[0][keys.non_pawn[0]][u]);
        let black = i32::from(self.non_pawn[1][keys.non_pawn[1]][u]);
        let by_moves = match moves.previous {
            Some((pc, to)) => {
                let entry = |t: usize| i32::from(self.moves[t][pc.to_usize()][to.to_usize()]);
                8761 * (entry(moves.tables[0]) + entry(moves.tables[1]))
            }
            None => 64_049,
        };
        15_341 * pawn + 10_569 * minor + 12_906 * (white + black) + by_moves
    }

    /// Moves every correction entry of a position towards `bonus`, each by
    /// its weight out of 128: pawns 128, minor pieces 150, each side's other
    /// pieces 186, the moves two and four plies before 130 and 70.
    pub fn update(
        &mut self,
        keys: &CorrectionKeys,
        us: Color,
        moves: &CorrectionMoves,
        bonus: i32,
    ) {
        let u = us as usize;
        let max = CORRECTION_MAX;
        gravity(&mut self.pawn[keys.pawn][u], bonus, max);
        gravity(&mut self.minor[keys.minor][u], bonus * 150 / 128, max);
        for side in 0..2 {
            gravity(&mut self.non_pawn[side][keys.non_pawn[side]][u], bonus * 186 / 128, max);
        }
        if let Some((pc, to)) = moves.previous {
            for (t, weight) in moves.tables.into_iter().zip([130, 70]) {
                gravity(
                    &mut self.moves[t][pc.to_usize()][to.to_usize()],
                    bonus * weight / 128,
                    max,
                );
            }
        }
    }
}

impl Default for Corrections {
    fn default() -> Corrections {
        Corrections::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh position reads Stockfish's starting correction; updates of
    /// one sign move it that way, stay within the bound, are kept apart by
    /// side to move and by position, and a clear forgets them.
    #[test]
    fn corrections_learn_and_forget() {
        let mut c = Corrections::new();
        let pos =
            Position::from_fen("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
                .unwrap();
        let other = Position::from_fen("8/5k2/8/3p4/3P4/8/5K2/8 w - - 0 1").unwrap();
        let keys = CorrectionKeys::of(&pos);
        assert_ne!(keys, CorrectionKeys::of(&other));
        let moves = CorrectionMoves {
            previous: Some((Piece::BlackKnight, Square::C6)),
            tables: [move_table(Some((Piece::WhiteKnight, Square::F3))), move_table(None)],
        };
        let start = 15_341 * -5 + 10_569 * -5 + 12_906 * -10 + 8761 * 10;
        assert_eq!(c.value(&keys, Color::White, &moves), start);
        for _ in 0..200 {
            c.update(&keys, Color::White, &moves, 256);
        }
        let full = c.value(&keys, Color::White, &moves);
        let bound = (15_341 + 10_569 + 2 * 12_906 + 2 * 8761) * CORRECTION_MAX;
        assert!(full > bound * 9 / 10 && full <= bound, "{full} of {bound}");
        // The position entries are the side to move's; the move entries
        // are shared.
        let none = CorrectionMoves { previous: None, tables: [NO_MOVE; 2] };
        let start_none = start - 8761 * 10 + 64_049;
        assert_eq!(c.value(&keys, Color::Black, &none), start_none);
        assert!(c.value(&keys, Color::Black, &moves) > start);
        let other_keys = CorrectionKeys::of(&other);
        assert_eq!(c.value(&other_keys, Color::White, &none), start_none);
        c.clear();
        assert_eq!(c.value(&keys, Color::White, &moves), start);
    }
}
