//! The vocabulary of the board: colors, roles, pieces, files, ranks, squares,
//! and the keyed containers [`ByColor`], [`ByRole`] and [`ByPiece`].
//!
//! Every type is a `#[repr(u8)]` enum, so matches are exhaustive,
//! `Option<Square>` is one byte, and no value outside the board exists.

use std::{
    fmt,
    ops::{Index, IndexMut, Not},
};

/// The two sides.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[repr(u8)]
pub enum Color {
    /// White, who moves first.
    White = 0,
    /// Black.
    Black = 1,
}

impl Color {
    /// Both colors, White first.
    pub const ALL: [Color; 2] = [Color::White, Color::Black];

    /// The color with index `index & 1`.
    #[inline]
    pub const fn from_index(index: usize) -> Color {
        // Safety: `index & 1` is 0 or 1, both discriminants of the
        // `repr(u8)` enum. A transmute instead of a branch or table load
        // saves work on every piece lookup in do_move.
        unsafe { std::mem::transmute::<u8, Color>((index & 1) as u8) }
    }

    /// 0 for White, 1 for Black.
    #[inline]
    pub const fn to_usize(self) -> usize {
        self as usize
    }

    /// The other color.
    #[inline]
    pub const fn other(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }

    /// `white` for White, `black` for Black.
    #[inline]
    pub fn fold_wb<T>(self, white: T, black: T) -> T {
        match self {
            Color::White => white,
            Color::Black => black,
        }
    }

    /// The rank the pieces of this color start on.
    #[inline]
    pub const fn backrank(self) -> Rank {
        match self {
            Color::White => Rank::First,
            Color::Black => Rank::Eighth,
        }
    }

    /// The rank a pawn of this color reaches with its first double step
    /// (the fourth rank for White, the fifth for Black).
    #[inline]
    pub const fn double_step_rank(self) -> Rank {
        match self {
            Color::White => Rank::Fourth,
            Color::Black => Rank::Fifth,
        }
    }

    /// `'w'` or `'b'`, as in FEN.
    pub const fn char(self) -> char {
        match self {
            Color::White => 'w',
            Color::Black => 'b',
        }
    }

    /// Parses `'w'` or `'b'`.
    pub const fn from_char(c: char) -> Option<Color> {
        match c {
            'w' => Some(Color::White),
            'b' => Some(Color::Black),
            _ => None,
        }
    }
}

impl Not for Color {
    type Output = Color;
    #[inline]
    fn not(self) -> Color {
        self.other()
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.fold_wb("white", "black"))
    }
}

/// A value for each color.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
#[repr(C)]
pub struct ByColor<T> {
    /// White's value.
    pub white: T,
    /// Black's value.
    pub black: T,
}

impl<T> ByColor<T> {
    /// Builds a container by calling `f` for each color.
    #[inline]
    pub fn new_with(mut f: impl FnMut(Color) -> T) -> ByColor<T> {
        ByColor { white: f(Color::White), black: f(Color::Black) }
    }

    /// Applies `f` to both values.
    #[inline]
    pub fn map<U>(self, mut f: impl FnMut(T) -> U) -> ByColor<U> {
        ByColor { white: f(self.white), black: f(self.black) }
    }
}

impl<T> Index<Color> for ByColor<T> {
    type Output = T;
    #[inline]
    fn index(&self, color: Color) -> &T {
        match color {
            Color::White => &self.white,
            Color::Black => &self.black,
        }
    }
}

impl<T> IndexMut<Color> for ByColor<T> {
    #[inline]
    fn index_mut(&mut self, color: Color) -> &mut T {
        match color {
            Color::White => &mut self.white,
            Color::Black => &mut self.black,
        }
    }
}

/// The kind of a piece, without its color.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[repr(u8)]
pub enum Role {
    /// Pawn.
    Pawn = 0,
    /// Knight.
    Knight = 1,
    /// Bishop.
    Bishop = 2,
    /// Rook.
    Rook = 3,
    /// Queen.
    Queen = 4,
    /// King.
    King = 5,
}

impl Role {
    /// All roles, pawn first.
    pub const ALL: [Role; 6] =
        [Role::Pawn, Role::Knight, Role::Bishop, Role::Rook, Role::Queen, Role::King];

    /// The roles a pawn may promote to, queen first.
    pub const PROMOTIONS: [Role; 4] = [Role::Queen, Role::Rook, Role::Bishop, Role::Knight];

    /// The role with index `index`.
    ///
    /// # Panics
    ///
    /// If `index >= 6`.
    #[inline]
    pub const fn new(index: usize) -> Role {
        match index {
            0 => Role::Pawn,
            1 => Role::Knight,
            2 => Role::Bishop,
            3 => Role::Rook,
            4 => Role::Queen,
            5 => Role::King,
            _ => panic!("role index out of range"),
        }
    }

    /// 0 (pawn) to 5 (king).
    #[inline]
    pub const fn to_usize(self) -> usize {
        self as usize
    }

    /// The lowercase letter: `p n b r q k`.
    pub const fn char(self) -> char {
        match self {
            Role::Pawn => 'p',
            Role::Knight => 'n',
            Role::Bishop => 'b',
            Role::Rook => 'r',
            Role::Queen => 'q',
            Role::King => 'k',
        }
    }

    /// The uppercase letter, as SAN writes pieces: `P N B R Q K`.
    pub const fn upper_char(self) -> char {
        self.char().to_ascii_uppercase()
    }

    /// Parses a letter of either case.
    pub const fn from_char(c: char) -> Option<Role> {
        match c.to_ascii_lowercase() {
            'p' => Some(Role::Pawn),
            'n' => Some(Role::Knight),
            'b' => Some(Role::Bishop),
            'r' => Some(Role::Rook),
            'q' => Some(Role::Queen),
            'k' => Some(Role::King),
            _ => None,
        }
    }

    /// The piece of this role and color `color`.
    #[inline]
    pub const fn of(self, color: Color) -> Piece {
        Piece::new(color, self)
    }
}

/// A value for each role.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
#[repr(C)]
pub struct ByRole<T> {
    /// The pawn's value.
    pub pawn: T,
    /// The knight's value.
    pub knight: T,
    /// The bishop's value.
    pub bishop: T,
    /// The rook's value.
    pub rook: T,
    /// The queen's value.
    pub queen: T,
    /// The king's value.
    pub king: T,
}

impl<T> ByRole<T> {
    /// Builds a container by calling `f` for each role.
    #[inline]
    pub fn new_with(mut f: impl FnMut(Role) -> T) -> ByRole<T> {
        ByRole {
            pawn: f(Role::Pawn),
            knight: f(Role::Knight),
            bishop: f(Role::Bishop),
            rook: f(Role::Rook),
            queen: f(Role::Queen),
            king: f(Role::King),
        }
    }
}

impl<T> Index<Role> for ByRole<T> {
    type Output = T;
    #[inline]
    fn index(&self, role: Role) -> &T {
        // Safety: `ByRole` is `repr(C)` with six fields of the same type `T`,
        // so they are laid out consecutively without padding, like `[T; 6]`,
        // and `role.to_usize() < 6`. A `match` here compiled to a jump table
        // in move generation; the offset is one `lea`.
        unsafe { &*(self as *const ByRole<T>).cast::<T>().add(role.to_usize()) }
    }
}

impl<T> IndexMut<Role> for ByRole<T> {
    #[inline]
    fn index_mut(&mut self, role: Role) -> &mut T {
        // Safety: as in `index`.
        unsafe { &mut *(self as *mut ByRole<T>).cast::<T>().add(role.to_usize()) }
    }
}

/// A piece: a role and a color.
///
/// The discriminant is `2 * role + color`, so White's pieces are even; the
/// Polyglot "kind" of a piece is the discriminant with its low bit flipped.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[repr(u8)]
#[allow(missing_docs)]
pub enum Piece {
    WhitePawn = 0,
    BlackPawn = 1,
    WhiteKnight = 2,
    BlackKnight = 3,
    WhiteBishop = 4,
    BlackBishop = 5,
    WhiteRook = 6,
    BlackRook = 7,
    WhiteQueen = 8,
    BlackQueen = 9,
    WhiteKing = 10,
    BlackKing = 11,
}

impl Piece {
    /// All twelve pieces, in discriminant order.
    pub const ALL: [Piece; 12] = [
        Piece::WhitePawn,
        Piece::BlackPawn,
        Piece::WhiteKnight,
        Piece::BlackKnight,
        Piece::WhiteBishop,
        Piece::BlackBishop,
        Piece::WhiteRook,
        Piece::BlackRook,
        Piece::WhiteQueen,
        Piece::BlackQueen,
        Piece::WhiteKing,
        Piece::BlackKing,
    ];

    /// The piece of color `color` and role `role`.
    #[inline]
    pub const fn new(color: Color, role: Role) -> Piece {
        // Safety: `2 * role + color` is at most 2 * 5 + 1 = 11, and every
        // value 0..=11 is a discriminant of the `repr(u8)` enum.
        unsafe { std::mem::transmute::<u8, Piece>(role as u8 * 2 + color as u8) }
    }

    /// The piece's color.
    #[inline]
    pub const fn color(self) -> Color {
        Color::from_index(self as usize)
    }

    /// The piece's role.
    #[inline]
    pub const fn role(self) -> Role {
        // Safety: the discriminant is at most 11, so `>> 1` is at most 5,
        // a discriminant of `Role`.
        unsafe { std::mem::transmute::<u8, Role>(self as u8 >> 1) }
    }

    /// 0 to 11.
    #[inline]
    pub const fn to_usize(self) -> usize {
        self as usize
    }

    /// The FEN letter: uppercase for White.
    pub const fn char(self) -> char {
        match self.color() {
            Color::White => self.role().upper_char(),
            Color::Black => self.role().char(),
        }
    }

    /// Parses a FEN letter.
    pub const fn from_char(c: char) -> Option<Piece> {
        match Role::from_char(c) {
            Some(role) => Some(Piece::new(
                if c.is_ascii_uppercase() { Color::White } else { Color::Black },
                role,
            )),
            None => None,
        }
    }
}

/// A value for each of the twelve pieces.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct ByPiece<T>(pub [T; 12]);

impl<T> Index<Piece> for ByPiece<T> {
    type Output = T;
    #[inline]
    fn index(&self, piece: Piece) -> &T {
        &self.0[piece.to_usize()]
    }
}

impl<T> IndexMut<Piece> for ByPiece<T> {
    #[inline]
    fn index_mut(&mut self, piece: Piece) -> &mut T {
        &mut self.0[piece.to_usize()]
    }
}

/// A file (column), a to h.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[repr(u8)]
#[allow(missing_docs)]
pub enum File {
    A = 0,
    B,
    C,
    D,
    E,
    F,
    G,
    H,
}

impl File {
    /// All files, a first.
    pub const ALL: [File; 8] =
        [File::A, File::B, File::C, File::D, File::E, File::F, File::G, File::H];

    /// The file with index `index & 7`.
    #[inline]
    pub const fn new(index: u32) -> File {
        // Safety: `index & 7` is 0..=7, the discriminants of the enum.
        unsafe { std::mem::transmute::<u8, File>((index & 7) as u8) }
    }

    /// 0 (a) to 7 (h).
    #[inline]
    pub const fn to_usize(self) -> usize {
        self as usize
    }

    /// 0 (a) to 7 (h).
    #[inline]
    pub const fn to_u32(self) -> u32 {
        self as u32
    }

    /// The lowercase letter.
    pub const fn char(self) -> char {
        (b'a' + self as u8) as char
    }

    /// Parses a letter of either case.
    pub const fn from_char(c: char) -> Option<File> {
        let c = c.to_ascii_lowercase();
        if c >= 'a' && c <= 'h' { Some(File::new(c as u32 - 'a' as u32)) } else { None }
    }
}

/// A rank (row), first to eighth.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[repr(u8)]
#[allow(missing_docs)]
pub enum Rank {
    First = 0,
    Second,
    Third,
    Fourth,
    Fifth,
    Sixth,
    Seventh,
    Eighth,
}

impl Rank {
    /// All ranks, first first.
    pub const ALL: [Rank; 8] = [
        Rank::First,
        Rank::Second,
        Rank::Third,
        Rank::Fourth,
        Rank::Fifth,
        Rank::Sixth,
        Rank::Seventh,
        Rank::Eighth,
    ];

    /// The rank with index `index & 7`.
    #[inline]
    pub const fn new(index: u32) -> Rank {
        // Safety: `index & 7` is 0..=7, the discriminants of the enum.
        unsafe { std::mem::transmute::<u8, Rank>((index & 7) as u8) }
    }

    /// 0 (first) to 7 (eighth).
    #[inline]
    pub const fn to_usize(self) -> usize {
        self as usize
    }

    /// 0 (first) to 7 (eighth).
    #[inline]
    pub const fn to_u32(self) -> u32 {
        self as u32
    }

    /// The digit `'1'` to `'8'`.
    pub const fn char(self) -> char {
        (b'1' + self as u8) as char
    }

    /// Parses a digit `'1'` to `'8'`.
    pub const fn from_char(c: char) -> Option<Rank> {
        if c >= '1' && c <= '8' { Some(Rank::new(c as u32 - '1' as u32)) } else { None }
    }

    /// The same rank seen from `color`'s side: `Rank::First.relative(Black)`
    /// is the eighth rank.
    #[inline]
    pub const fn relative(self, color: Color) -> Rank {
        Rank::new(self as u32 ^ (color as u32 * 7))
    }
}

/// A square of the board, a1 = 0 to h8 = 63.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[repr(u8)]
#[rustfmt::skip]
#[allow(missing_docs)]
pub enum Square {
    A1, B1, C1, D1, E1, F1, G1, H1,
    A2, B2, C2, D2, E2, F2, G2, H2,
    A3, B3, C3, D3, E3, F3, G3, H3,
    A4, B4, C4, D4, E4, F4, G4, H4,
    A5, B5, C5, D5, E5, F5, G5, H5,
    A6, B6, C6, D6, E6, F6, G6, H6,
    A7, B7, C7, D7, E7, F7, G7, H7,
    A8, B8, C8, D8, E8, F8, G8, H8,
}

impl Square {
    /// All 64 squares, a1 first, rank by rank.
    #[rustfmt::skip]
    pub const ALL: [Square; 64] = {
        use Square::*;
        [
            A1, B1, C1, D1, E1, F1, G1, H1,
            A2, B2, C2, D2, E2, F2, G2, H2,
            A3, B3, C3, D3, E3, F3, G3, H3,
            A4, B4, C4, D4, E4, F4, G4, H4,
            A5, B5, C5, D5, E5, F5, G5, H5,
            A6, B6, C6, D6, E6, F6, G6, H6,
            A7, B7, C7, D7, E7, F7, G7, H7,
            A8, B8, C8, D8, E8, F8, G8, H8,
        ]
    };

    /// The square with index `index`.
    ///
    /// # Panics
    ///
    /// If `index >= 64`.
    #[inline]
    pub const fn new(index: u32) -> Square {
        assert!(index < 64, "square index out of range");
        Square::ALL[index as usize]
    }

    /// The square with index `index & 63`: never panics.
    #[inline]
    pub const fn new_masked(index: u32) -> Square {
        // Safety: `index & 63` is 0..=63, the discriminants of the enum.
        // The table load this replaces cost 18 instructions per
        // do_move/undo_move pair (callgrind).
        unsafe { std::mem::transmute::<u8, Square>((index & 63) as u8) }
    }

    /// The square on `file` and `rank`.
    #[inline]
    pub const fn from_coords(file: File, rank: Rank) -> Square {
        Square::new_masked(file as u32 | (rank as u32) << 3)
    }

    /// 0 (a1) to 63 (h8).
    #[inline]
    pub const fn to_usize(self) -> usize {
        self as usize
    }

    /// 0 (a1) to 63 (h8).
    #[inline]
    pub const fn to_u32(self) -> u32 {
        self as u32
    }

    /// The square's file.
    #[inline]
    pub const fn file(self) -> File {
        File::new(self as u32)
    }

    /// The square's rank.
    #[inline]
    pub const fn rank(self) -> Rank {
        Rank::new(self as u32 >> 3)
    }

    /// The square `delta` steps further in index order, if it is on the
    /// board (no wrap-around check: callers use it along files).
    #[inline]
    pub const fn offset(self, delta: i32) -> Option<Square> {
        let index = self as i32 + delta;
        if index >= 0 && index < 64 { Some(Square::new(index as u32)) } else { None }
    }

    /// The square `delta` steps further in index order, without checking.
    /// The result is taken modulo 64.
    #[inline]
    pub const fn offset_unchecked(self, delta: i32) -> Square {
        Square::new_masked((self as i32 + delta) as u32)
    }

    /// The same square mirrored vertically (a1 <-> a8).
    #[inline]
    pub const fn flip_vertical(self) -> Square {
        Square::new_masked(self as u32 ^ 56)
    }

    /// The same square seen from `color`'s side (mirrored for Black).
    #[inline]
    pub const fn relative(self, color: Color) -> Square {
        Square::new_masked(self as u32 ^ (color as u32 * 56))
    }

    /// Chebyshev (king-step) distance between two squares.
    #[inline]
    pub const fn distance(self, other: Square) -> u32 {
        let df = (self.file() as i32 - other.file() as i32).unsigned_abs();
        let dr = (self.rank() as i32 - other.rank() as i32).unsigned_abs();
        if df > dr { df } else { dr }
    }

    /// Parses a square name such as `e4` from two bytes.
    pub fn from_ascii(s: &[u8]) -> Option<Square> {
        match s {
            [f, r] => Some(Square::from_coords(
                File::from_char(*f as char)?,
                Rank::from_char(*r as char)?,
            )),
            _ => None,
        }
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use fmt::Write;
        f.write_char(self.file().char())?;
        f.write_char(self.rank().char())
    }
}

/// The two castling sides.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[repr(u8)]
pub enum CastlingSide {
    /// Towards the h-file (O-O).
    KingSide = 0,
    /// Towards the a-file (O-O-O).
    QueenSide = 1,
}

impl CastlingSide {
    /// Both sides, king side first.
    pub const ALL: [CastlingSide; 2] = [CastlingSide::KingSide, CastlingSide::QueenSide];

    /// The file the king lands on.
    #[inline]
    pub const fn king_to_file(self) -> File {
        match self {
            CastlingSide::KingSide => File::G,
            CastlingSide::QueenSide => File::C,
        }
    }

    /// The file the rook lands on.
    #[inline]
    pub const fn rook_to_file(self) -> File {
        match self {
            CastlingSide::KingSide => File::F,
            CastlingSide::QueenSide => File::D,
        }
    }
}

/// One of the four castling rights as a bit: White O-O = 1, White O-O-O = 2,
/// Black O-O = 4, Black O-O-O = 8 (Polyglot's order of castling keys).
#[inline]
pub const fn castling_bit(color: Color, side: CastlingSide) -> u8 {
    1 << (color as u8 * 2 + side as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn piece_layout() {
        for piece in Piece::ALL {
            assert_eq!(Piece::new(piece.color(), piece.role()), piece);
            assert_eq!(Piece::from_char(piece.char()), Some(piece));
        }
        assert_eq!(std::mem::size_of::<Option<Square>>(), 1);
        assert_eq!(std::mem::size_of::<Option<Piece>>(), 1);
    }

    #[test]
    fn by_role_index() {
        let by = ByRole::new_with(|r| r.to_usize() * 10);
        for role in Role::ALL {
            assert_eq!(by[role], role.to_usize() * 10);
        }
        let mut by = by;
        by[Role::Queen] = 7;
        assert_eq!(by.queen, 7);
    }

    #[test]
    fn squares() {
        for sq in Square::ALL {
            assert_eq!(Square::from_coords(sq.file(), sq.rank()), sq);
            assert_eq!(Square::from_ascii(sq.to_string().as_bytes()), Some(sq));
        }
        assert_eq!(Square::E2.relative(Color::Black), Square::E7);
        assert_eq!(Square::A1.distance(Square::H8), 7);
        assert_eq!(Rank::Second.relative(Color::Black), Rank::Seventh);
    }
}
