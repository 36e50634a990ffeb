//! The transposition table: one per searcher, no locks.
//!
//! Buckets of four 16-byte entries fill a 64-byte cache line. The bucket is
//! chosen by the key's low bits; the entry is recognised by the key's high
//! 32 bits. Replacement keeps deep entries of the current search and drops
//! old ones first (depth minus 4 per search of age). Moves read back are
//! checked by the caller with `pseudo_legal` and `legal`, since a 32-bit
//! check can collide.
//!
//! Clearing is lazy: each entry carries the table's epoch when written, and
//! [`TranspositionTable::clear`] starts a new epoch, so an old entry reads
//! as empty. A cleared table behaves exactly like a zeroed one (searches are
//! deterministic), at the cost of one increment instead of a memset per game.

use std::ops::{Deref, DerefMut};

use memmap2::MmapMut;

use crate::chess::mv::Move;

/// What a stored score means.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum Bound {
    /// No score (the entry holds a static evaluation only).
    None = 0,
    /// The score is at most this (fail low).
    Upper = 1,
    /// The score is at least this (fail high).
    Lower = 2,
    /// The exact score.
    Exact = 3,
}

impl Bound {
    /// Whether a score `score` with this bound can stand for a search of
    /// the window around `beta`: a lower bound when it is at least `beta`,
    /// an upper bound when it is below (Stockfish's `bound & (v >= beta ?
    /// LOWER : UPPER)`).
    #[inline]
    pub fn cuts(self, score: i32, beta: i32) -> bool {
        let wanted = if score >= beta { Bound::Lower } else { Bound::Upper };
        self as u8 & wanted as u8 != 0
    }

    /// Whether this bound includes `other`'s direction (an exact bound is
    /// both).
    #[inline]
    pub fn has(self, other: Bound) -> bool {
        self as u8 & other as u8 != 0
    }
}

/// The score stored with a static evaluation only, and an evaluation not
/// stored.
pub const VALUE_NONE: i32 = 32_002;

/// Depths as stored: a search depth, or a quiescence depth (0 and -1), or
/// [`DEPTH_NONE`], all above this.
pub const DEPTH_OFFSET: i32 = -7;
/// The depth of an entry that holds a static evaluation only.
pub const DEPTH_NONE: i32 = -6;

/// A table entry, as read.
#[derive(Clone, Copy, Debug)]
pub struct TtHit {
    /// The best move found, unverified.
    pub mv: Option<Move>,
    /// The score (mate scores relative to the stored node), or
    /// [`VALUE_NONE`].
    pub score: i32,
    /// The static evaluation, or [`VALUE_NONE`].
    pub eval: i32,
    /// The depth searched.
    pub depth: i32,
    /// The bound.
    pub bound: Bound,
    /// Whether the position is or was on a principal variation (Stockfish's
    /// `ttPv`).
    pub pv: bool,
}

#[derive(Clone, Copy, Default)]
#[repr(C)]
struct Entry {
    key: u32,
    mv: u16,
    score: i16,
    eval: i16,
    /// The depth minus [`DEPTH_OFFSET`].
    depth: u8,
    /// Bound in bits 0-1, the principal-variation flag in bit 2, occupied
    /// in bit 3.
    flags: u8,
    epoch: u8,
    age: u8,
    _pad: u16,
}

const PV_BIT: u8 = 4;
const OCCUPIED_BIT: u8 = 8;

impl Entry {
    #[inline]
    fn occupied(&self, epoch: u8) -> bool {
        self.epoch == epoch && self.flags & OCCUPIED_BIT != 0
    }
}

const _: () = assert!(std::mem::size_of::<Entry>() == 16);

#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Bucket([Entry; 4]);

/// The table's memory: an anonymous mapping (zero-filled, page-aligned)
/// advised to use transparent huge pages where the kernel offers them, so
/// that a probe of a random bucket rarely also misses the TLB (`kibitz bench
/// 11`: 2.79 -> 2.97 M nodes/s, medians of four interleaved pairs). An
/// ordinary allocation when the mapping cannot be made.
enum Store {
    Mapped(MmapMut),
    Heap(Vec<Bucket>),
}

impl Store {
    /// `count` zeroed buckets, or `None` when the memory cannot be had.
    fn new(count: usize) -> Option<Store> {
        let bytes = count.checked_mul(std::mem::size_of::<Bucket>())?;
        match MmapMut::map_anon(bytes) {
            Ok(map) => {
                // Advice only: without huge pages the table works the same.
                #[cfg(target_os = "linux")]
                let _ = map.advise(memmap2::Advice::HugePage);
                Some(Store::Mapped(map))
            }
            Err(_) => {
                // Reserved fallibly: an infallible allocation of this size
                // would abort the process.
                let mut buckets = Vec::new();
                buckets.try_reserve_exact(count).ok()?;
                buckets.resize(count, Bucket::default());
                Some(Store::Heap(buckets))
            }
        }
    }
}

/// How many buckets a mapping holds.
#[inline]
fn buckets_in(map: &MmapMut) -> usize {
    map.len() / std::mem::size_of::<Bucket>()
}

impl Deref for Store {
    type Target = [Bucket];
    fn deref(&self) -> &[Bucket] {
        match self {
            // Safety: the mapping is page-aligned (more than a bucket's 64
            // bytes), a whole number of buckets long (made so in `new`),
            // lives as long as the borrow of `self`, and a bucket is plain
            // integers (`repr(C)`, no padding invariants), so its bytes,
            // zero at first and then only ever written as buckets, are
            // always valid buckets.
            Store::Mapped(map) => unsafe {
                std::slice::from_raw_parts(map.as_ptr().cast::<Bucket>(), buckets_in(map))
            },
            Store::Heap(v) => v,
        }
    }
}

impl DerefMut for Store {
    fn deref_mut(&mut self) -> &mut [Bucket] {
        match self {
            // Safety: as in `deref`, and `&mut self` makes the borrow unique.
            Store::Mapped(map) => unsafe {
                let len = buckets_in(map);
                std::slice::from_raw_parts_mut(map.as_mut_ptr().cast::<Bucket>(), len)
            },
            Store::Heap(v) => v,
        }
    }
}

/// The transposition table.
pub struct TranspositionTable {
    buckets: Store,
    epoch: u8,
    age: u8,
}

/// A transposition table the machine cannot give.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot allocate a {mib} MiB transposition table")]
pub struct TableError {
    /// The size asked for, in MiB.
    pub mib: usize,
}

impl TranspositionTable {
    /// A table of about `mib` MiB (at least one bucket).
    ///
    /// # Panics
    ///
    /// If the memory cannot be had: use [`TranspositionTable::try_new`]
    /// for a size that comes from outside.
    pub fn new(mib: usize) -> TranspositionTable {
        TranspositionTable::try_new(mib).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A table of about `mib` MiB (at least one bucket), or an error that
    /// says the memory cannot be had.
    pub fn try_new(mib: usize) -> Result<TranspositionTable, TableError> {
        let too_large = || TableError { mib };
        let bytes = mib.max(1).checked_mul(1 << 20).ok_or_else(too_large)?;
        let count = (bytes / std::mem::size_of::<Bucket>()).max(1);
        let buckets = Store::new(count).ok_or_else(too_large)?;
        Ok(TranspositionTable { buckets, epoch: 1, age: 0 })
    }

    /// The size in MiB.
    pub fn size_mib(&self) -> usize {
        (self.buckets.len() * std::mem::size_of::<Bucket>()) >> 20
    }

    /// Forgets everything: afterwards the table reads as freshly zeroed.
    pub fn clear(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            // Epochs wrapped: entries from 256 clears ago could look current.
            self.buckets.fill(Bucket::default());
            self.epoch = 1;
        }
        self.age = 0;
    }

    /// Starts a new search (entries of older searches age).
    pub fn new_search(&mut self) {
        self.age = self.age.wrapping_add(1);
    }

    #[inline]
    fn index(&self, key: u64) -> usize {
        // The multiply-shift maps the key's low 32 bits onto the table size
        // without a modulo; the high 32 bits identify the entry.
        ((key as u32 as u64 * self.buckets.len() as u64) >> 32) as usize
    }

    /// Prefetches the bucket of `key`.
    #[inline]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            let ptr = self.buckets.as_ptr().wrapping_add(self.index(key)) as *const i8;
            // Safety: prefetching never faults, whatever the address.
            unsafe { std::arch::x86_64::_mm_prefetch(ptr, std::arch::x86_64::_MM_HINT_T0) };
        }
    }

    /// Looks `key` up.
    #[inline]
    pub fn probe(&self, key: u64) -> Option<TtHit> {
        let check = (key >> 32) as u32;
        let bucket = &self.buckets[self.index(key)];
        bucket.0.iter().find(|e| e.occupied(self.epoch) && e.key == check).map(|e| TtHit {
            mv: Move::from_u16(e.mv),
            score: i32::from(e.score),
            eval: i32::from(e.eval),
            depth: i32::from(e.depth) + DEPTH_OFFSET,
            bound: match e.flags & 3 {
                0 => Bound::None,
                1 => Bound::Upper,
                2 => Bound::Lower,
                _ => Bound::Exact,
            },
            pv: e.flags & PV_BIT != 0,
        })
    }

    /// Stores a result, as Stockfish's `TTEntry::save`: an existing move is
    /// kept when the new one is none; an entry of the same position is
    /// overwritten by an exact bound, or by a search not much shallower
    /// (a principal-variation node counts two plies deeper), or when it is
    /// of an earlier search.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn store(
        &mut self,
        key: u64,
        mv: Option<Move>,
        score: i32,
        pv: bool,
        bound: Bound,
        depth: i32,
        eval: i32,
    ) {
        let check = (key >> 32) as u32;
        let (epoch, age) = (self.epoch, self.age);
        let i = self.index(key);
        let bucket = &mut self.buckets[i];
        // The slot: the same key, else an empty one, else the least valuable
        // (depth less eight per search of age).
        let mut slot = 0;
        let mut worst = i32::MAX;
        for (j, e) in bucket.0.iter().enumerate() {
            if !e.occupied(epoch) || e.key == check {
                slot = j;
                break;
            }
            let value = i32::from(e.depth) - 8 * i32::from(age.wrapping_sub(e.age));
            if value < worst {
                worst = value;
                slot = j;
            }
        }
        let e = &mut bucket.0[slot];
        let same = e.occupied(epoch) && e.key == check;
        if same && mv.is_none() {
            // Keep the move it has.
        } else {
            e.mv = mv.map_or(0, Move::to_u16);
        }
        let stored_depth = depth - DEPTH_OFFSET;
        if !same
            || bound == Bound::Exact
            || e.age != age
            || stored_depth + 2 * i32::from(pv) > i32::from(e.depth) - 4
        {
            e.key = check;
            e.score = score.clamp(-32_767, 32_767) as i16;
            e.eval = eval.clamp(-32_767, 32_767) as i16;
            e.depth = stored_depth.clamp(0, 255) as u8;
            e.flags = bound as u8 | if pv { PV_BIT } else { 0 } | OCCUPIED_BIT;
            e.epoch = epoch;
            e.age = age;
        }
    }

    /// Permille of the first 1000 entries (250 buckets) written in this
    /// search.
    pub fn hashfull(&self) -> usize {
        let n = self.buckets.len().min(250);
        let used: usize = self.buckets[..n]
            .iter()
            .map(|b| b.0.iter().filter(|e| e.occupied(self.epoch) && e.age == self.age).count())
            .sum();
        used * 1000 / (n * 4).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::types::Square;

    #[test]
    fn store_probe_clear() {
        let mut tt = TranspositionTable::new(1);
        let m = Move::normal(Square::E2, Square::E4);
        tt.store(0x1234_5678_9abc_def0, Some(m), 35, true, Bound::Exact, 7, 20);
        let hit = tt.probe(0x1234_5678_9abc_def0).unwrap();
        assert_eq!(
            (hit.mv, hit.score, hit.eval, hit.depth, hit.bound, hit.pv),
            (Some(m), 35, 20, 7, Bound::Exact, true)
        );
        // A static evaluation alone, at a quiescence depth: found, with no
        // score; a later result keeps the move.
        tt.store(0x2222_0000_0000_0001, None, VALUE_NONE, false, Bound::None, DEPTH_NONE, -12);
        let hit = tt.probe(0x2222_0000_0000_0001).unwrap();
        assert_eq!((hit.bound, hit.depth, hit.eval, hit.pv), (Bound::None, DEPTH_NONE, -12, false));
        tt.store(0x1234_5678_9abc_def0, None, 40, false, Bound::Upper, -1, 20);
        let hit = tt.probe(0x1234_5678_9abc_def0).unwrap();
        assert_eq!(
            (hit.mv, hit.score, hit.depth),
            (Some(m), 35, 7),
            "a shallow bound does not replace"
        );
        assert!(tt.probe(0x1234_5679_9abc_def0).is_none());
        tt.clear();
        assert!(tt.probe(0x1234_5678_9abc_def0).is_none());
        for _ in 0..300 {
            tt.clear();
        }
        assert!(tt.probe(0x1234_5678_9abc_def0).is_none());
    }

    #[test]
    fn a_table_too_large_is_an_error() {
        // The byte count overflows, or no machine has the memory.
        for mib in [usize::MAX, 1 << 40] {
            let err = TranspositionTable::try_new(mib).err().expect("no such table");
            assert_eq!(err.to_string(), format!("cannot allocate a {mib} MiB transposition table"));
        }
        assert_eq!(TranspositionTable::try_new(1).unwrap().size_mib(), 1);
    }
}
