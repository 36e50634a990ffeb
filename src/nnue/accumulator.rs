//! The feature transformer's output, kept up to date beside the board.
//!
//! An [`Accumulator`] holds, for each side, the sum of the biases and of the
//! weight rows of every active input (1024 `i16`), and the sums of the PSQT
//! weights (8 `i32`). An [`AccumulatorStack`] keeps one for each state of a
//! [`Position`]'s stack, index for index, so a search that makes and unmakes
//! moves finds its parent's accumulator beside its own. Each accumulator
//! records the key of the state it was computed for, per side; it is used
//! only while that state is the position's state at that index, so no call
//! is needed when moves are made or unmade (a Zobrist key that matched a
//! different position would mislead it, with the same odds as a
//! transposition table).
//!
//! Bringing an accumulator up to date ([`AccumulatorStack::update`]) walks
//! back to the nearest state whose accumulator is computed and applies the
//! pieces each move since changed ([`DirtyPiece`](crate::DirtyPiece)), one
//! state at a time, as Stockfish does. A side whose king moved on the way
//! (its inputs all depend on its king's square), or with more changes to
//! apply than pieces on the board, is refreshed instead, from the last
//! accumulator computed for that king square ([`RefreshCache`], Stockfish's
//! "Finny tables"): only the pieces that differ from that one are added or
//! removed.

use crate::{
    chess::{
        bitboard::Bitboard,
        position::Position,
        types::{Color, Piece, Role, Square},
    },
    nnue::{Network, PSQT_BUCKETS, Row, features, simd},
};

/// The feature transformer's output for both sides.
#[derive(Clone, PartialEq, Eq, Debug)]
#[repr(C, align(64))]
pub struct Accumulator {
    /// The 1024 values of each side (White, Black).
    pub values: [Row; 2],
    /// The PSQT sums of each side.
    pub psqt: [[i32; PSQT_BUCKETS]; 2],
}

impl Accumulator {
    /// The accumulator of `pos` computed from scratch: the biases plus the
    /// rows of every piece on the board, for both sides.
    pub fn refresh(net: &Network, pos: &Position) -> Accumulator {
        let mut acc = Accumulator {
            values: [(*net.ft_biases).clone(), (*net.ft_biases).clone()],
            psqt: [[0; PSQT_BUCKETS]; 2],
        };
        for side in [Color::White, Color::Black] {
            let king = pos.king(side);
            let active: Vec<usize> = pos
                .occupied()
                .into_iter()
                .filter_map(|sq| pos.piece_on(sq).map(|pc| features::index(side, sq, pc, king)))
                .collect();
            let s = side.to_usize();
            simd::apply_in_place(&mut acc.values[s], &net.ft_weights, &active, &[]);
            add_psqt(&mut acc.psqt[s], net, &active, &[]);
        }
        acc
    }

    /// The accumulator of `pos` with the piece on `without` taken off the
    /// board (as Stockfish's `eval` prices each piece), from scratch.
    pub fn refresh_without(net: &Network, pos: &Position, without: Square) -> Accumulator {
        let mut acc = Accumulator::refresh(net, pos);
        if let Some(pc) = pos.piece_on(without) {
            for side in [Color::White, Color::Black] {
                let i = features::index(side, without, pc, pos.king(side));
                let s = side.to_usize();
                simd::apply_in_place(&mut acc.values[s], &net.ft_weights, &[], &[i]);
                add_psqt(&mut acc.psqt[s], net, &[], &[i]);
            }
        }
        acc
    }
}

/// `psqt += Σ rows[add] - Σ rows[sub]`.
fn add_psqt(psqt: &mut [i32; PSQT_BUCKETS], net: &Network, add: &[usize], sub: &[usize]) {
    for &i in add {
        for (p, w) in psqt.iter_mut().zip(&net.psqt_weights[i]) {
            *p = p.wrapping_add(*w);
        }
    }
    for &i in sub {
        for (p, w) in psqt.iter_mut().zip(&net.psqt_weights[i]) {
            *p = p.wrapping_sub(*w);
        }
    }
}

/// One accumulator of the stack and, per side, the key of the state it was
/// computed for.
#[derive(Clone)]
struct Entry {
    acc: Accumulator,
    key: [Option<u64>; 2],
}

/// The last accumulator computed for each side and king square, with the
/// board it was computed for.
struct CacheEntry {
    values: Row,
    psqt: [i32; PSQT_BUCKETS],
    pieces: [Bitboard; 12],
}

/// Stockfish's "Finny tables": a refresh starts from the accumulator last
/// computed for the same king square and changes only the pieces that
/// moved since, usually a few where a refresh from scratch adds 20 to 32
/// rows.
pub struct RefreshCache {
    entries: Vec<CacheEntry>,
}

impl RefreshCache {
    /// A cache whose every entry is the empty board's accumulator.
    pub fn new(net: &Network) -> RefreshCache {
        let entries = (0..2 * 64)
            .map(|_| CacheEntry {
                values: (*net.ft_biases).clone(),
                psqt: [0; PSQT_BUCKETS],
                pieces: [Bitboard::EMPTY; 12],
            })
            .collect();
        RefreshCache { entries }
    }

    /// Updates the entry of `side`'s king square to `pos` and copies it out.
    fn refresh(
        &mut self,
        net: &Network,
        pos: &Position,
        side: Color,
        values: &mut Row,
        psqt: &mut [i32; PSQT_BUCKETS],
    ) {
        let king = pos.king(side);
        let e = &mut self.entries[side.to_usize() * 64 + king.to_usize()];
        let mut batch = Batch { add: [0; 32], sub: [0; 32], n_add: 0, n_sub: 0 };
        for pc in Piece::ALL {
            let now = pos.pieces(pc.color(), pc.role());
            let was = e.pieces[pc.to_usize()];
            for sq in now & !was {
                batch.add(features::index(side, sq, pc, king), net, e);
            }
            for sq in was & !now {
                batch.sub(features::index(side, sq, pc, king), net, e);
            }
            e.pieces[pc.to_usize()] = now;
        }
        batch.flush(net, e);
        values.0.copy_from_slice(&e.values.0);
        *psqt = e.psqt;
    }
}

/// Rows to add to and remove from a cache entry, applied in batches.
struct Batch {
    add: [usize; 32],
    sub: [usize; 32],
    n_add: usize,
    n_sub: usize,
}

impl Batch {
    fn add(&mut self, i: usize, net: &Network, e: &mut CacheEntry) {
        if self.n_add == self.add.len() {
            self.flush(net, e);
        }
        self.add[self.n_add] = i;
        self.n_add += 1;
    }

    fn sub(&mut self, i: usize, net: &Network, e: &mut CacheEntry) {
        if self.n_sub == self.sub.len() {
            self.flush(net, e);
        }
        self.sub[self.n_sub] = i;
        self.n_sub += 1;
    }

    fn flush(&mut self, net: &Network, e: &mut CacheEntry) {
        let (add, sub) = (&self.add[..self.n_add], &self.sub[..self.n_sub]);
        simd::apply_in_place(&mut e.values, &net.ft_weights, add, sub);
        add_psqt(&mut e.psqt, net, add, sub);
        (self.n_add, self.n_sub) = (0, 0);
    }
}

/// How an accumulator was brought up to date, counted for measurements.
#[derive(Clone, Copy, Default, Debug)]
pub struct UpdateStats {
    /// Side updates that found their accumulator computed.
    pub hits: u64,
    /// Moves applied incrementally (per side).
    pub steps: u64,
    /// Sides refreshed through the cache.
    pub refreshes: u64,
    /// Of the steps, moves undone from a later accumulator to compute an
    /// earlier one (after a refresh, back to the state where the king last
    /// moved).
    pub back_steps: u64,
    /// Sides updated after a king move by swapping its refresh cache
    /// entries (Stockfish 19's net only).
    pub hybrids: u64,
}

/// One accumulator per state of a position's stack (see the module's
/// documentation).
pub struct AccumulatorStack {
    entries: Vec<Entry>,
    cache: RefreshCache,
    /// Counts of the work done.
    pub stats: UpdateStats,
}

impl AccumulatorStack {
    /// An empty stack for `net`'s accumulators.
    pub fn new(net: &Network) -> AccumulatorStack {
        AccumulatorStack {
            entries: Vec::new(),
            cache: RefreshCache::new(net),
            stats: UpdateStats::default(),
        }
    }

    /// The accumulator of `pos`'s current state, brought up to date for
    /// both sides.
    pub fn update(&mut self, net: &Network, pos: &Position) -> &Accumulator {
        let top = pos.states().len() - 1;
        if self.entries.len() <= top {
            let blank = Entry {
                acc: Accumulator { values: [Row::ZERO, Row::ZERO], psqt: [[0; PSQT_BUCKETS]; 2] },
                key: [None; 2],
            };
            self.entries.resize(top + 1 + 64, blank);
        }
        self.update_side(net, pos, top, Color::White);
        self.update_side(net, pos, top, Color::Black);
        &self.entries[top].acc
    }

    fn update_side(&mut self, net: &Network, pos: &Position, top: usize, side: Color) {
        let s = side.to_usize();
        let states = pos.states();
        if self.entries[top].key[s] == Some(states[top].key) {
            self.stats.hits += 1;
            return;
        }
        // Walk back to the nearest state whose accumulator is computed, as
        // long as applying the moves since costs less than a refresh and
        // this side's king stayed where it is.
        let king = Piece::new(side, Role::King);
        let budget = pos.occupied().count() as usize;
        let mut cost = 0;
        let mut i = top;
        let found = loop {
            let dirty = &states[i].dirty;
            if i == 0 || dirty.entries().first().is_some_and(|e| e.piece == king) {
                break None;
            }
            cost += dirty.entries().len() + 1;
            if cost > budget {
                break None;
            }
            i -= 1;
            if self.entries[i].key[s] == Some(states[i].key) {
                break Some(i);
            }
        };
        match found {
            Some(from) if from + 1 == top => {
                self.step(net, states[top].dirty.entries(), top, side, pos.king(side));
                self.entries[top].key[s] = Some(states[top].key);
            }
            Some(from) => {
                // Several moves at once, in one pass over the row: the
                // sums are the same integers (wrapping adds commute), and
                // a piece that moved twice costs two rows, not four. The
                // states between keep what they held: an entry is only
                // used when its key matches.
                self.jump(net, &states[from + 1..=top], from, top, side, pos.king(side));
                self.entries[top].key[s] = Some(states[top].key);
            }
            None => {
                self.stats.refreshes += 1;
                let e = &mut self.entries[top];
                self.cache.refresh(net, pos, side, &mut e.acc.values[s], &mut e.acc.psqt[s]);
                e.key[s] = Some(states[top].key);
            }
        }
    }

    /// Computes entry `top` from entry `from` and the pieces the moves of
    /// `between` (the states after `from`, up to `top`) changed.
    fn jump(
        &mut self,
        net: &Network,
        between: &[crate::chess::state::StateInfo],
        from: usize,
        top: usize,
        side: Color,
        king: Square,
    ) {
        self.stats.steps += between.len() as u64;
        let mut add: Vec<usize> = Vec::with_capacity(16);
        let mut sub: Vec<usize> = Vec::with_capacity(16);
        for st in between {
            for e in st.dirty.entries() {
                if let Some(from_sq) = e.from {
                    let f = features::index(side, from_sq, e.piece, king);
                    // A feature added by an earlier move and removed now
                    // cancels.
                    match add.iter().position(|&a| a == f) {
                        Some(k) => {
                            add.swap_remove(k);
                        }
                        None => sub.push(f),
                    }
                }
                if let Some(to) = e.to {
                    let f = features::index(side, to, e.piece, king);
                    match sub.iter().position(|&x| x == f) {
                        Some(k) => {
                            sub.swap_remove(k);
                        }
                        None => add.push(f),
                    }
                }
            }
        }
        let s = side.to_usize();
        let (before, after) = self.entries.split_at_mut(top);
        let (src, dst) = (&before[from].acc, &mut after[0].acc);
        simd::apply(&mut dst.values[s], &src.values[s], &net.ft_weights, &add, &sub);
        dst.psqt[s] = src.psqt[s];
        add_psqt(&mut dst.psqt[s], net, &add, &sub);
    }

    /// Computes entry `j` from entry `j - 1` and the pieces the move
    /// between them changed.
    fn step(
        &mut self,
        net: &Network,
        dirty: &[crate::chess::state::DirtyEntry],
        j: usize,
        side: Color,
        king: Square,
    ) {
        self.stats.steps += 1;
        let mut add = [0usize; 3];
        let mut sub = [0usize; 3];
        let (mut n_add, mut n_sub) = (0, 0);
        for e in dirty {
            if let Some(from) = e.from {
                sub[n_sub] = features::index(side, from, e.piece, king);
                n_sub += 1;
            }
            if let Some(to) = e.to {
                add[n_add] = features::index(side, to, e.piece, king);
                n_add += 1;
            }
        }
        let s = side.to_usize();
        let (before, after) = self.entries.split_at_mut(j);
        let (src, dst) = (&before[j - 1].acc, &mut after[0].acc);
        simd::apply(
            &mut dst.values[s],
            &src.values[s],
            &net.ft_weights,
            &add[..n_add],
            &sub[..n_sub],
        );
        dst.psqt[s] = src.psqt[s];
        add_psqt(&mut dst.psqt[s], net, &add[..n_add], &sub[..n_sub]);
    }
}
