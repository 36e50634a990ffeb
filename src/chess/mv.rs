//! [`Move`]: a move in 16 bits, and [`MoveList`], a list of moves that lives
//! on the stack.

use std::{fmt, mem::MaybeUninit, num::NonZeroU16};

use crate::chess::types::{Role, Square};

/// What kind of move a [`Move`] is (bits 14-15).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
#[repr(u8)]
pub enum MoveKind {
    /// Any move that is not one of the three below, captures included.
    Normal = 0,
    /// A pawn reaching the last rank; the new role is in bits 12-13.
    Promotion = 1,
    /// A pawn capturing en passant; `to` is the square the pawn lands on.
    EnPassant = 2,
    /// Castling, encoded as the king capturing its own rook: `from` is the
    /// king's square, `to` the rook's. Standard chess and Chess960 alike.
    Castling = 3,
}

/// A move in 16 bits.
///
/// ```text
/// bit  0- 5: destination square (0 to 63); for castling, the rook's square
/// bit  6-11: origin square (0 to 63)
/// bit 12-13: promotion role minus knight (knight 0, bishop 1, rook 2, queen 3)
/// bit 14-15: kind: normal 0, promotion 1, en passant 2, castling 3
/// ```
///
/// No move a position generates has `from == to`, so the value 0 (a1 to a1,
/// normal) is never a move, which gives `Option<Move>` its niche; the null
/// move is b1 to b1 (65), as in Stockfish.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Move(NonZeroU16);

const _: () = assert!(std::mem::size_of::<Option<Move>>() == 2);

impl Move {
    /// The null move (pass), b1 to b1.
    pub const NULL: Move = Move(NonZeroU16::new(65).unwrap());

    const fn build(from: Square, to: Square, bits: u16) -> Move {
        let value = bits | (from as u16) << 6 | to as u16;
        match NonZeroU16::new(value) {
            Some(v) => Move(v),
            // a1 to a1 as a normal move: only a caller's bug produces it;
            // return the null move rather than panicking.
            None => Move::NULL,
        }
    }

    /// A normal move (captures included).
    #[inline]
    pub const fn normal(from: Square, to: Square) -> Move {
        Move::build(from, to, 0)
    }

    /// A promotion to `role` (knight to queen; other roles give a knight).
    #[inline]
    pub const fn promotion(from: Square, to: Square, role: Role) -> Move {
        let promo = (role as u16).wrapping_sub(Role::Knight as u16) & 3;
        Move::build(from, to, 1 << 14 | promo << 12)
    }

    /// An en-passant capture landing on `to`.
    #[inline]
    pub const fn en_passant(from: Square, to: Square) -> Move {
        Move::build(from, to, 2 << 14)
    }

    /// Castling: the king on `king` "captures" its own rook on `rook`.
    #[inline]
    pub const fn castling(king: Square, rook: Square) -> Move {
        Move::build(king, rook, 3 << 14)
    }

    /// The move with this 16-bit encoding, if it is not 0. Any other value is
    /// a `Move`, though most are not legal anywhere: check with
    /// [`Position::pseudo_legal`](crate::Position::pseudo_legal).
    #[inline]
    pub const fn from_u16(value: u16) -> Option<Move> {
        match NonZeroU16::new(value) {
            Some(v) => Some(Move(v)),
            None => None,
        }
    }

    /// The 16-bit encoding.
    #[inline]
    pub const fn to_u16(self) -> u16 {
        self.0.get()
    }

    /// The origin square (the king's square for castling).
    #[inline]
    pub const fn from(self) -> Square {
        Square::new_masked((self.0.get() >> 6) as u32)
    }

    /// The destination square (the rook's square for castling).
    #[inline]
    pub const fn to(self) -> Square {
        Square::new_masked(self.0.get() as u32)
    }

    /// The kind of move.
    #[inline]
    pub const fn kind(self) -> MoveKind {
        match self.0.get() >> 14 {
            0 => MoveKind::Normal,
            1 => MoveKind::Promotion,
            2 => MoveKind::EnPassant,
            _ => MoveKind::Castling,
        }
    }

    /// The role promoted to, for a promotion.
    #[inline]
    pub const fn promotion_role(self) -> Option<Role> {
        match self.kind() {
            MoveKind::Promotion => Some(self.promotion_bits()),
            _ => None,
        }
    }

    /// The role in bits 12-13, whatever the kind.
    #[inline]
    pub(crate) const fn promotion_bits(self) -> Role {
        Role::new(((self.0.get() >> 12) & 3) as usize + 1)
    }

    /// Whether this is a promotion.
    #[inline]
    pub const fn is_promotion(self) -> bool {
        self.0.get() >> 14 == 1
    }

    /// Whether this is an en-passant capture.
    #[inline]
    pub const fn is_en_passant(self) -> bool {
        self.0.get() >> 14 == 2
    }

    /// Whether this is castling.
    #[inline]
    pub const fn is_castling(self) -> bool {
        self.0.get() >> 14 == 3
    }

    /// Whether this is the null move.
    #[inline]
    pub const fn is_null(self) -> bool {
        self.0.get() == 65
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_null() {
            return f.write_str("Move(null)");
        }
        write!(f, "Move({}{}", self.from(), self.to())?;
        match self.kind() {
            MoveKind::Normal => {}
            MoveKind::Promotion => write!(f, "={}", self.promotion_bits().upper_char())?,
            MoveKind::EnPassant => f.write_str(" ep")?,
            MoveKind::Castling => f.write_str(" castling")?,
        }
        f.write_str(")")
    }
}

/// The capacity of a [`MoveList`].
///
/// A position accepted by [`Position`](crate::Position) has at most 16
/// pieces per side; even fifteen queens and a king with both castlings make
/// no more than 15 * 27 + 8 + 2 = 415 moves, so 512 can never overflow.
/// (The most known in a reachable position is 218.)
pub const MAX_MOVES: usize = 512;

/// A list of up to [`MAX_MOVES`] moves, on the stack, never allocating.
pub struct MoveList {
    moves: [MaybeUninit<Move>; MAX_MOVES],
    len: usize,
}

impl MoveList {
    /// An empty list. Creating one costs nothing: the storage stays
    /// uninitialised.
    #[inline]
    pub const fn new() -> MoveList {
        MoveList { moves: [const { MaybeUninit::uninit() }; MAX_MOVES], len: 0 }
    }

    /// Appends a move.
    ///
    /// # Panics
    ///
    /// If the list is full.
    #[inline]
    pub fn push(&mut self, m: Move) {
        assert!(self.len < MAX_MOVES, "move list full");
        self.moves[self.len] = MaybeUninit::new(m);
        self.len += 1;
    }

    /// Appends a move without checking the capacity.
    ///
    /// # Safety
    ///
    /// `self.len() < MAX_MOVES`. The move generator relies on the bound
    /// documented at [`MAX_MOVES`].
    #[inline(always)]
    pub(crate) unsafe fn push_unchecked(&mut self, m: Move) {
        debug_assert!(self.len < MAX_MOVES);
        // Safety: the caller guarantees `len < MAX_MOVES`.
        unsafe { self.moves.get_unchecked_mut(self.len).write(m) };
        self.len += 1;
    }

    /// The number of moves.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the list is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Removes every move.
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Keeps only the moves for which `f` is true (order kept).
    pub fn retain(&mut self, mut f: impl FnMut(Move) -> bool) {
        let mut kept = 0;
        for i in 0..self.len {
            let m = self[i];
            if f(m) {
                self.moves[kept] = MaybeUninit::new(m);
                kept += 1;
            }
        }
        self.len = kept;
    }

    /// Removes the move at `index` by moving the last move into its place.
    ///
    /// # Panics
    ///
    /// If `index >= self.len()`.
    pub fn swap_remove(&mut self, index: usize) -> Move {
        let m = self[index];
        self.len -= 1;
        self.moves[index] = self.moves[self.len];
        m
    }

    /// The moves as a slice.
    #[inline]
    pub fn as_slice(&self) -> &[Move] {
        // Safety: the first `len` entries were written (push and
        // push_unchecked write before incrementing `len`), and
        // `MaybeUninit<Move>` has the layout of `Move`.
        unsafe { std::slice::from_raw_parts(self.moves.as_ptr().cast::<Move>(), self.len) }
    }

    /// The moves as a mutable slice (for sorting).
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [Move] {
        // Safety: as in `as_slice`.
        unsafe { std::slice::from_raw_parts_mut(self.moves.as_mut_ptr().cast::<Move>(), self.len) }
    }

    /// Whether `m` is in the list.
    #[inline]
    pub fn contains(&self, m: Move) -> bool {
        self.as_slice().contains(&m)
    }

    /// Iterates over the moves.
    #[inline]
    pub fn iter(&self) -> std::slice::Iter<'_, Move> {
        self.as_slice().iter()
    }
}

impl Default for MoveList {
    fn default() -> MoveList {
        MoveList::new()
    }
}

impl Clone for MoveList {
    fn clone(&self) -> MoveList {
        let mut list = MoveList::new();
        list.moves[..self.len].copy_from_slice(&self.moves[..self.len]);
        list.len = self.len;
        list
    }
}

impl std::ops::Deref for MoveList {
    type Target = [Move];
    #[inline]
    fn deref(&self) -> &[Move] {
        self.as_slice()
    }
}

impl std::ops::DerefMut for MoveList {
    #[inline]
    fn deref_mut(&mut self) -> &mut [Move] {
        self.as_mut_slice()
    }
}

impl<'a> IntoIterator for &'a MoveList {
    type Item = &'a Move;
    type IntoIter = std::slice::Iter<'a, Move>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl fmt::Debug for MoveList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_round_trips() {
        let m = Move::normal(Square::E2, Square::E4);
        assert_eq!((m.from(), m.to(), m.kind()), (Square::E2, Square::E4, MoveKind::Normal));
        assert_eq!(m.promotion_role(), None);
        for role in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
            let p = Move::promotion(Square::B7, Square::A8, role);
            assert_eq!(p.promotion_role(), Some(role));
            assert_eq!((p.from(), p.to()), (Square::B7, Square::A8));
        }
        let c = Move::castling(Square::E1, Square::H1);
        assert!(c.is_castling() && !c.is_en_passant());
        assert!(Move::en_passant(Square::E5, Square::D6).is_en_passant());
        assert_eq!(Move::from_u16(0), None);
        assert_eq!(Move::NULL.to_u16(), 65);
        assert!(Move::NULL.is_null());
        // Stockfish's layout: e2e4 = (12 << 6) | 28.
        assert_eq!(m.to_u16(), (12 << 6) | 28);
    }

    #[test]
    fn list_operations() {
        let mut list = MoveList::new();
        assert!(list.is_empty());
        list.push(Move::normal(Square::A2, Square::A3));
        list.push(Move::normal(Square::B2, Square::B3));
        list.push(Move::normal(Square::C2, Square::C3));
        assert_eq!(list.len(), 3);
        list.retain(|m| m.from() != Square::B2);
        assert_eq!(
            list.as_slice(),
            &[Move::normal(Square::A2, Square::A3), Move::normal(Square::C2, Square::C3)]
        );
        assert_eq!(list.swap_remove(0), Move::normal(Square::A2, Square::A3));
        assert_eq!(list.len(), 1);
        let copy = list.clone();
        assert!(copy.contains(Move::normal(Square::C2, Square::C3)));
    }
}
