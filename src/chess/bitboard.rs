//! [`Bitboard`]: a set of squares in one `u64`, bit `i` for square `i`.
//!
//! ```text
//! 56 57 58 59 60 61 62 63   <- rank 8
//! ...
//!  0  1  2  3  4  5  6  7   <- rank 1
//! a  b  c  d  e  f  g  h
//! ```

use std::{
    fmt,
    ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not},
};

use crate::chess::types::{Color, File, Rank, Square};

/// A set of squares.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(transparent)]
pub struct Bitboard(pub u64);

impl Bitboard {
    /// No square.
    pub const EMPTY: Bitboard = Bitboard(0);
    /// Every square.
    pub const FULL: Bitboard = Bitboard(!0);
    /// The a-file.
    pub const FILE_A: Bitboard = Bitboard(0x0101_0101_0101_0101);
    /// The h-file.
    pub const FILE_H: Bitboard = Bitboard(0x8080_8080_8080_8080);
    /// The first rank.
    pub const RANK_1: Bitboard = Bitboard(0xff);
    /// The eighth rank.
    pub const RANK_8: Bitboard = Bitboard(0xff << 56);
    /// The edge of the board: files a and h, ranks 1 and 8.
    pub const EDGES: Bitboard = Bitboard(0xff81_8181_8181_81ff);
    /// The dark squares (a1 is dark).
    pub const DARK_SQUARES: Bitboard = Bitboard(0xaa55_aa55_aa55_aa55);

    /// The set holding only `sq`.
    #[inline]
    pub const fn from_square(sq: Square) -> Bitboard {
        Bitboard(1 << sq as u32)
    }

    /// All squares of `file`.
    #[inline]
    pub const fn from_file(file: File) -> Bitboard {
        Bitboard(Bitboard::FILE_A.0 << file as u32)
    }

    /// All squares of `rank`.
    #[inline]
    pub const fn from_rank(rank: Rank) -> Bitboard {
        Bitboard(Bitboard::RANK_1.0 << (8 * rank as u32))
    }

    /// `rank` seen from `color`'s side.
    #[inline]
    pub const fn relative_rank(color: Color, rank: Rank) -> Bitboard {
        Bitboard::from_rank(rank.relative(color))
    }

    /// Whether `sq` is in the set.
    #[inline]
    pub const fn contains(self, sq: Square) -> bool {
        self.0 & (1 << sq as u32) != 0
    }

    /// Whether the set is empty.
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether the set has a square.
    #[inline]
    pub const fn any(self) -> bool {
        self.0 != 0
    }

    /// The number of squares.
    #[inline]
    pub const fn count(self) -> u32 {
        self.0.count_ones()
    }

    /// Whether the set has two squares or more.
    #[inline]
    pub const fn more_than_one(self) -> bool {
        self.0 & self.0.wrapping_sub(1) != 0
    }

    /// The lowest square, if any.
    #[inline]
    pub const fn first(self) -> Option<Square> {
        if self.0 == 0 { None } else { Some(Square::new_masked(self.0.trailing_zeros())) }
    }

    /// The highest square, if any.
    #[inline]
    pub const fn last(self) -> Option<Square> {
        if self.0 == 0 { None } else { Some(Square::new_masked(63 - self.0.leading_zeros())) }
    }

    /// The lowest square. On an empty set the result is unspecified (a1 or
    /// another square) but it never panics or misbehaves.
    #[inline]
    pub const fn lsb(self) -> Square {
        Square::new_masked(self.0.trailing_zeros())
    }

    /// The set with `sq` added.
    #[inline]
    pub const fn with(self, sq: Square) -> Bitboard {
        Bitboard(self.0 | 1 << sq as u32)
    }

    /// The set with `sq` removed.
    #[inline]
    pub const fn without(self, sq: Square) -> Bitboard {
        Bitboard(self.0 & !(1 << sq as u32))
    }

    /// Toggles `sq`.
    #[inline]
    pub fn toggle(&mut self, sq: Square) {
        self.0 ^= 1 << sq as u32;
    }

    /// Every square moved one rank up (towards rank 8).
    #[inline]
    pub const fn north(self) -> Bitboard {
        Bitboard(self.0 << 8)
    }

    /// Every square moved one rank down.
    #[inline]
    pub const fn south(self) -> Bitboard {
        Bitboard(self.0 >> 8)
    }

    /// Every square moved one rank forward from `color`'s side.
    #[inline]
    pub const fn forward(self, color: Color) -> Bitboard {
        match color {
            Color::White => self.north(),
            Color::Black => self.south(),
        }
    }

    /// Every square moved one diagonal step forward-left (towards the
    /// a-file) from `color`'s side; squares leaving the board vanish.
    #[inline]
    pub const fn forward_west(self, color: Color) -> Bitboard {
        let b = self.0 & !Bitboard::FILE_A.0;
        match color {
            Color::White => Bitboard(b << 7),
            Color::Black => Bitboard(b >> 9),
        }
    }

    /// Every square moved one diagonal step forward-right (towards the
    /// h-file) from `color`'s side.
    #[inline]
    pub const fn forward_east(self, color: Color) -> Bitboard {
        let b = self.0 & !Bitboard::FILE_H.0;
        match color {
            Color::White => Bitboard(b << 9),
            Color::Black => Bitboard(b >> 7),
        }
    }

    /// The squares attacked by pawns of `color` standing on this set.
    #[inline]
    pub const fn pawn_attacks(self, color: Color) -> Bitboard {
        Bitboard(self.forward_west(color).0 | self.forward_east(color).0)
    }

    /// Iterates over the squares from a1 to h8.
    #[inline]
    pub const fn iter(self) -> Bitboard {
        self
    }
}

impl Iterator for Bitboard {
    type Item = Square;

    #[inline]
    fn next(&mut self) -> Option<Square> {
        if self.0 == 0 {
            None
        } else {
            let sq = Square::new_masked(self.0.trailing_zeros());
            self.0 &= self.0 - 1;
            Some(sq)
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.count_ones() as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Bitboard {}

impl From<Square> for Bitboard {
    #[inline]
    fn from(sq: Square) -> Bitboard {
        Bitboard::from_square(sq)
    }
}

impl FromIterator<Square> for Bitboard {
    fn from_iter<I: IntoIterator<Item = Square>>(iter: I) -> Bitboard {
        iter.into_iter().fold(Bitboard::EMPTY, Bitboard::with)
    }
}

macro_rules! bit_op {
    ($tr:ident, $f:ident, $tra:ident, $fa:ident, $op:tt) => {
        impl $tr for Bitboard {
            type Output = Bitboard;
            #[inline]
            fn $f(self, rhs: Bitboard) -> Bitboard {
                Bitboard(self.0 $op rhs.0)
            }
        }
        impl $tr<Square> for Bitboard {
            type Output = Bitboard;
            #[inline]
            fn $f(self, rhs: Square) -> Bitboard {
                Bitboard(self.0 $op (1u64 << rhs as u32))
            }
        }
        impl $tra for Bitboard {
            #[inline]
            fn $fa(&mut self, rhs: Bitboard) {
                self.0 = self.0 $op rhs.0;
            }
        }
        impl $tra<Square> for Bitboard {
            #[inline]
            fn $fa(&mut self, rhs: Square) {
                self.0 = self.0 $op (1u64 << rhs as u32);
            }
        }
    };
}

bit_op!(BitAnd, bitand, BitAndAssign, bitand_assign, &);
bit_op!(BitOr, bitor, BitOrAssign, bitor_assign, |);
bit_op!(BitXor, bitxor, BitXorAssign, bitxor_assign, ^);

impl Not for Bitboard {
    type Output = Bitboard;
    #[inline]
    fn not(self) -> Bitboard {
        Bitboard(!self.0)
    }
}

impl fmt::Debug for Bitboard {
    /// Draws the set as an 8x8 grid, rank 8 on top.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Bitboard({:#018x})", self.0)?;
        for rank in Rank::ALL.iter().rev() {
            for file in File::ALL {
                let sq = Square::from_coords(file, *rank);
                f.write_str(if self.contains(sq) { "1" } else { "." })?;
                f.write_str(if file == File::H { "\n" } else { " " })?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iteration_and_counts() {
        let b = Bitboard::from(Square::A1) | Square::H8 | Square::E4;
        assert_eq!(b.count(), 3);
        assert!(b.more_than_one());
        assert_eq!(b.collect::<Vec<_>>(), vec![Square::A1, Square::E4, Square::H8]);
        assert_eq!(b.first(), Some(Square::A1));
        assert_eq!(b.last(), Some(Square::H8));
        assert!(!Bitboard::from(Square::C3).more_than_one());
        assert_eq!(Bitboard::EMPTY.first(), None);
    }

    #[test]
    fn pawn_shifts_do_not_wrap() {
        let a = Bitboard::from(Square::A4);
        assert_eq!(a.pawn_attacks(Color::White), Bitboard::from(Square::B5));
        assert_eq!(a.pawn_attacks(Color::Black), Bitboard::from(Square::B3));
        let h = Bitboard::from(Square::H4);
        assert_eq!(h.pawn_attacks(Color::White), Bitboard::from(Square::G5));
        assert_eq!(h.pawn_attacks(Color::Black), Bitboard::from(Square::G3));
    }
}
