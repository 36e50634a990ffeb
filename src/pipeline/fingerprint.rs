//! Duplicate games: games whose start position and move sequence equal an
//! earlier game's, whatever their tags, as pgn-extract's `-D` finds them.
//!
//! Each replayed game gets a [`Fingerprint`]: two independent 64-bit hashes
//! of its start position's Polyglot key and its moves, and its length. The
//! finder keeps one entry per distinct game (48 bytes in a hash table, 55
//! to 110 with the table's spare room), keyed by the
//! first hash; a game is a duplicate when an earlier game has the same
//! first hash, and the second hash and the length agree too (the check that
//! turns a 64-bit collision into a miss rather than a false duplicate).
//! Games that could not be replayed to their end (rejected) have no
//! fingerprint and are never duplicates.
//!
//! ```
//! use kibitz::{DuplicateFinder, Fingerprint, GameAt, Position};
//!
//! let mut pos = Position::startpos();
//! let e4 = pos.parse_san(b"e4").unwrap();
//! let d4 = pos.parse_san(b"d4").unwrap();
//! let a = Fingerprint::of(pos.key(), &[e4]);
//! let b = Fingerprint::of(pos.key(), &[d4]);
//! let mut finder = DuplicateFinder::default();
//! assert_eq!(finder.add(a, GameAt { game: 1, file: 0, offset: 0 }), None);
//! assert_eq!(finder.add(b, GameAt { game: 2, file: 0, offset: 40 }), None);
//! let first = finder.add(a, GameAt { game: 3, file: 0, offset: 80 });
//! assert_eq!(first, Some(GameAt { game: 1, file: 0, offset: 0 }));
//! ```

use std::collections::HashMap;

use crate::chess::mv::Move;

/// What identifies a game's moves: two independent hashes of its start key
/// and moves, and its length in plies.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct Fingerprint {
    /// The table key.
    pub hash: u64,
    /// An independent hash of the same, checked on a match.
    pub check: u64,
    /// Plies.
    pub plies: u32,
}

/// The finalizer of MurmurHash3: a bijection on 64 bits that spreads every
/// input bit over the output.
#[inline]
fn fmix(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

impl Fingerprint {
    /// The fingerprint of a game from the position with Polyglot key
    /// `start_key` with `moves` (null moves included).
    pub fn of(start_key: u64, moves: &[Move]) -> Fingerprint {
        // Two chains with different starting values and step constants:
        // each step mixes the state with the move and its ply, so order
        // matters.
        let mut hash = fmix(start_key ^ 0x6a09_e667_f3bc_c908);
        let mut check = fmix(start_key.rotate_left(29) ^ 0xbb67_ae85_84ca_a73b);
        for (ply, m) in moves.iter().enumerate() {
            let x = u64::from(m.to_u16()) | (ply as u64) << 16;
            hash = fmix(hash ^ x).wrapping_add(0x9e37_79b9_7f4a_7c15);
            check = fmix(check.rotate_left(23) ^ x.wrapping_mul(0x3c6e_f372_fe94_f82b));
        }
        Fingerprint { hash, check, plies: moves.len() as u32 }
    }
}

/// Where a game is: its number (from 1, across all inputs), its input and
/// its byte offset there.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct GameAt {
    /// Game number across all inputs, from 1.
    pub game: u64,
    /// Index of its input.
    pub file: u32,
    /// Byte offset in its input's text.
    pub offset: u64,
}

#[derive(Clone, Copy, Debug)]
struct First {
    check: u64,
    plies: u32,
    at: GameAt,
}

/// Finds each game equal to an earlier one, fed games in order.
#[derive(Default)]
pub struct DuplicateFinder {
    seen: HashMap<u64, First>,
    /// Distinct games whose first hash collides with an earlier, different
    /// game's (rare: about one in 2^64 per pair).
    collided: HashMap<(u64, u64, u32), GameAt>,
    duplicates: u64,
}

impl DuplicateFinder {
    /// Adds a game: returns the earlier game it duplicates, if any.
    pub fn add(&mut self, fp: Fingerprint, at: GameAt) -> Option<GameAt> {
        let first =
            *self.seen.entry(fp.hash).or_insert(First { check: fp.check, plies: fp.plies, at });
        let earlier = if first.at == at {
            None
        } else if first.check == fp.check && first.plies == fp.plies {
            Some(first.at)
        } else {
            let entry = *self.collided.entry((fp.hash, fp.check, fp.plies)).or_insert(at);
            (entry != at).then_some(entry)
        };
        self.duplicates += u64::from(earlier.is_some());
        earlier
    }

    /// Duplicates found so far.
    pub fn duplicates(&self) -> u64 {
        self.duplicates
    }

    /// Distinct games so far.
    pub fn distinct(&self) -> u64 {
        (self.seen.len() + self.collided.len()) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::position::Position;

    fn moves(sans: &[&str]) -> (u64, Vec<Move>) {
        let mut pos = Position::startpos();
        let key = pos.key();
        let mut out = Vec::new();
        for san in sans {
            let m = pos.parse_san(san.as_bytes()).unwrap();
            pos.do_move(m);
            out.push(m);
        }
        (key, out)
    }

    /// Transpositions, prefixes and other starts are different games.
    #[test]
    fn order_length_and_start_tell_games_apart() {
        let (k, a) = moves(&["e4", "e5", "Nf3", "Nc6"]);
        let (_, b) = moves(&["Nf3", "Nc6", "e4", "e5"]);
        let fa = Fingerprint::of(k, &a);
        assert_ne!(fa, Fingerprint::of(k, &b));
        assert_ne!(fa, Fingerprint::of(k, &a[..3]));
        assert_ne!(fa, Fingerprint::of(k ^ 1, &a));
        assert_eq!(fa, Fingerprint::of(k, &a));
        assert_ne!(fa.hash, fa.check);
    }

    /// A first-hash collision between different games is no duplicate, and
    /// a later copy of either is still found.
    #[test]
    fn a_colliding_hash_is_checked() {
        let mut finder = DuplicateFinder::default();
        let at = |game| GameAt { game, file: 0, offset: game * 10 };
        let a = Fingerprint { hash: 7, check: 1, plies: 10 };
        let b = Fingerprint { hash: 7, check: 2, plies: 10 };
        let c = Fingerprint { hash: 7, check: 1, plies: 11 };
        assert_eq!(finder.add(a, at(1)), None);
        assert_eq!(finder.add(b, at(2)), None);
        assert_eq!(finder.add(c, at(3)), None);
        assert_eq!(finder.add(b, at(4)), Some(at(2)));
        assert_eq!(finder.add(a, at(5)), Some(at(1)));
        assert_eq!(finder.add(c, at(6)), Some(at(3)));
        assert_eq!((finder.duplicates(), finder.distinct()), (3, 3));
    }
}
