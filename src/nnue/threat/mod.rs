//! Stockfish 19's net: HalfKAv2_hm inputs with threat and pawn pair inputs
//! beside them ([`features`]), a feature transformer of 1024 per side, and
//! 8 layer stacks 1024 -> 32 -> 32 -> 1 whose hidden layers each pass on a
//! squared and a plain clipped ReLU side by side, the output layer reading
//! both layers' ([`simd::propagate`]). Computed with Stockfish's integer
//! arithmetic: an evaluation here is the value Stockfish 19 computes.
//!
//! [`ThreatEval`] keeps one accumulator per state of a position's stack, as
//! the Stockfish 15.1 evaluator does, and brings it up to date lazily from
//! the nearest computed ancestor. A move's HalfKAv2_hm changes come from
//! the pieces it moved ([`DirtyPiece`](crate::DirtyPiece)); its threat and
//! pawn pair changes are worked out here, from the boards before and after
//! the move (the board before is the board after with the move's pieces
//! put back) and the attack tables, for the squares the move changed only.
//! A side whose king moved within its half of the board (15 pieces or
//! more) takes the accumulator before the move, less the HalfKAv2_hm part
//! of the king's old square, plus the part of its new square (each the
//! last computed for that king square, Stockfish's "Finny tables", brought
//! to the board), plus the move's threat changes: threats are indexed by
//! the king's half only. Any other king move refreshes: the HalfKAv2_hm
//! part from the cache, every threat and pair from the board; and the
//! states back to that king move are then computed from the refreshed one
//! by undoing their moves, so that their other children step from them.
//! The board knows nothing of this.
//!
//! Stockfish.js 19's lite net has the same transformer size, layer stacks
//! and blend, with P_hm inputs alone ([`net::Inputs::PHm`]): the same
//! evaluator runs it with no threats or pairs to work out, and a king move
//! refreshes only when it takes the king across the d/e line (a cache entry
//! per side and half of the board).

pub mod features;
pub mod net;
pub mod simd;

use std::{fmt::Write as _, sync::Arc};

use crate::{
    chess::{
        bitboard::Bitboard,
        position::Position,
        state::DirtyEntry,
        types::{Color, Piece, Role, Square},
    },
    nnue::{
        Accumulator, L1, PSQT_BUCKETS, Row, UpdateStats,
        features::{index as psq_index, mirror_half, phm_index},
        threat::{
            features::{Board, Pair, ThreatList, changed_pairs, changed_threats, orientation},
            simd::{Changes, Kernels},
        },
    },
};

pub use features::{pair_index, threat_index};
pub use net::{Inputs, LAYER_STACKS, ThreatNet, VERSION};

impl Inputs {
    /// The piece-square input of `pc` on `sq` for `side`, whose king is on
    /// `king`: HalfKAv2_hm's or P_hm's.
    #[inline]
    fn psq_index(self, side: Color, sq: Square, pc: Piece, king: Square) -> usize {
        match self {
            Inputs::Threats => psq_index(side, sq, pc, king),
            Inputs::PHm => phm_index(side, sq, pc, king),
        }
    }

    /// The refresh cache's entry (of 64 a side) for a king on `king`: one
    /// per king square for HalfKAv2_hm's king buckets, one per half of the
    /// board for P_hm's mirror.
    #[inline]
    fn cache_slot(self, king: Square) -> usize {
        match self {
            Inputs::Threats => king.to_usize(),
            Inputs::PHm => mirror_half(king),
        }
    }

    /// Whether the side's king moving from `from` to `to` refreshes its
    /// accumulator: every move with king buckets, only a move across the
    /// d/e line with P_hm's mirror alone.
    #[inline]
    fn king_move_refreshes(self, from: Option<Square>, to: Option<Square>) -> bool {
        match (self, from, to) {
            (Inputs::PHm, Some(a), Some(b)) => mirror_half(a) != mirror_half(b),
            _ => true,
        }
    }
}

/// The net's two outputs for a position, side to move's view, in internal
/// units (each part divided by 16 on its own, as Stockfish divides them).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Outputs {
    /// The PSQT part ("material").
    pub psqt: i32,
    /// The layer stack's output ("positional").
    pub positional: i32,
}

impl Outputs {
    /// The raw evaluation: what Stockfish 19 prints as `NNUE evaluation`
    /// in internal units.
    pub fn raw(self) -> i32 {
        self.psqt + self.positional
    }
}

/// The layer stack for a position with `pieces` pieces, kings included.
pub fn bucket(pieces: u32) -> usize {
    (pieces.saturating_sub(1) / 4).min(LAYER_STACKS as u32 - 1) as usize
}

/// The outputs of bucket `bucket` for `acc`, `stm` to move.
pub fn outputs(
    k: Kernels,
    net: &ThreatNet,
    acc: &Accumulator,
    stm: Color,
    bucket: usize,
) -> Outputs {
    let (us, them) = (stm.to_usize(), (!stm).to_usize());
    let psqt = acc.psqt[us][bucket].wrapping_sub(acc.psqt[them][bucket]) / 2;
    let mut transformed = [0u8; L1];
    simd::transform(k, &acc.values[us], &acc.values[them], &mut transformed);
    let positional = simd::propagate(k, &transformed, &net.stacks[bucket]);
    Outputs { psqt: psqt / 16, positional: positional / 16 }
}

/// Stockfish's piece values (pawn 208), which its evaluation's material
/// terms count in.
pub fn stockfish_material(pos: &Position) -> (i32, i32) {
    const VALUES: [(Role, i32); 4] =
        [(Role::Knight, 781), (Role::Bishop, 825), (Role::Rook, 1276), (Role::Queen, 2538)];
    let npm = VALUES.iter().map(|&(role, v)| v * (pos.pieces_by_role(role).count() as i32)).sum();
    (pos.pieces_by_role(Role::Pawn).count() as i32, npm)
}

/// Stockfish 19's `Eval::evaluate`: the net's output less a share that
/// grows with its "complexity" (how far its two parts disagree), scaled up
/// with the material on the board, `optimism` (the side to move's, from
/// its search) blended in, and damped as the 50-move counter grows; side
/// to move's view, internal units.
pub fn blend(o: Outputs, pos: &Position, optimism: i32) -> i32 {
    let mut nnue = i64::from(o.raw());
    let complexity = i64::from((o.psqt - o.positional).abs());
    let mut optimism = i64::from(optimism);
    optimism += optimism * complexity / 476;
    nnue -= nnue * complexity / 18_236;
    let (pawns, npm) = stockfish_material(pos);
    let material = i64::from(534 * pawns + npm);
    // Stockfish 19's release weighs material with 91,000 and 7,675 (the
    // development source before it had 77,871 and 7,191); read from its
    // release build and checked on every position the oracles share.
    let mut v = (nnue * (91_000 + material) + optimism * (7_675 + material)) / 91_000;
    v -= v * i64::from(pos.rule50()) / 199;
    // Stockfish keeps it off the tablebase range: 32000 - 2 * 246 - 1.
    const BOUND: i64 = 31_507 - 1;
    v.clamp(-BOUND, BOUND) as i32
}

/// The centipawns Stockfish 19 reports for an internal value `v` in `pos`:
/// `v` over the value its win-rate model gives a 50% win chance at this
/// material (Stockfish's `UCIEngine::to_cp`).
pub fn to_centipawns(v: i32, pos: &Position) -> i32 {
    (100.0 * f64::from(v) / win_rate_a(pos)).round() as i32
}

/// The win-rate model's `a` for the material on the board: a cubic in the
/// material count (pawn 1, minor 3, rook 5, queen 9), clamped to 17..=78
/// and divided by 58. The coefficients are Stockfish 19's (read from its
/// release build, which differs from the development source before it).
pub fn win_rate_a(pos: &Position) -> f64 {
    const AS: [f64; 4] = [-142.720_526_67, 372.351_763_98, -340.710_735_72, 415.234_902_12];
    let count = |r: Role| pos.pieces_by_role(r).count() as i32;
    let material = count(Role::Pawn)
        + 3 * count(Role::Knight)
        + 3 * count(Role::Bishop)
        + 5 * count(Role::Rook)
        + 9 * count(Role::Queen);
    let m = f64::from(material.clamp(17, 78)) / 58.0;
    ((AS[0] * m + AS[1]) * m + AS[2]) * m + AS[3]
}

/// One accumulator of the stack and, per side, the key of the state it was
/// computed for.
#[derive(Clone)]
struct Entry {
    acc: Accumulator,
    key: [Option<u64>; 2],
}

/// The HalfKAv2_hm part last computed for a side and king square, with the
/// pieces it was computed for.
#[derive(Clone)]
struct CacheEntry {
    values: Row,
    psqt: [i32; PSQT_BUCKETS],
    pieces: [Bitboard; 12],
}

/// Where a side's accumulator comes from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Start {
    /// Up to date already.
    Done,
    /// From the computed accumulator at this index, a move at a time.
    From(usize),
    /// The side's king moved, within its half of the board, to the current
    /// state, and the state before is computed: that accumulator less the
    /// HalfKAv2_hm part of the king's old square plus the part of its new
    /// square (both from the refresh cache), plus the move's threat and
    /// pair changes, which the king's half leaves indexed as they were
    /// (Stockfish's "hybrid" update). The state before is first computed
    /// from the one at this index, a move at a time, if it is not already.
    Hybrid(usize),
    /// Refreshed, then the states back to this index (those since the
    /// side's king last moved) computed from it a move at a time, undoing
    /// each: the siblings and children of those states then step from them
    /// rather than refresh again.
    Refresh(usize),
}

/// Hybrid updates only with this many pieces on the board: with fewer, the
/// threats of a refresh are few and it costs no more.
const MIN_PIECES_HYBRID: u32 = 15;

/// Moves a hybrid update steps over to compute the state before the king
/// moved: a step costs a few rows, a refresh every threat on the board.
const MAX_STEPS_BEFORE_HYBRID: usize = 3;

/// Moves applied one at a time before a refresh is cheaper.
const MAX_STEPS: usize = 12;

/// A thread's evaluator with Stockfish 19's net: the net, and the
/// accumulators of the position it is asked about, kept up to date move by
/// move.
pub struct ThreatEval {
    net: Arc<ThreatNet>,
    kernels: Kernels,
    entries: Vec<Entry>,
    cache: Vec<CacheEntry>,
    boards: Vec<Board>,
    changes: Changes,
    scratch: [ThreatList; 2],
    threats_removed: ThreatList,
    threats_added: ThreatList,
    pairs_removed: Vec<Pair>,
    pairs_added: Vec<Pair>,
    /// The state whose move's changes the threat and pair lists hold.
    changed_for: Option<usize>,
    /// Counts of the work done.
    pub stats: UpdateStats,
}

impl ThreatEval {
    /// An evaluator with `net`, with the fastest kernels the processor has.
    pub fn new(net: Arc<ThreatNet>) -> ThreatEval {
        ThreatEval::with_kernels(net, Kernels::best())
    }

    /// An evaluator with `net` and the kernels `kernels`.
    pub fn with_kernels(net: Arc<ThreatNet>, kernels: Kernels) -> ThreatEval {
        let cache = (0..2 * 64)
            .map(|_| CacheEntry {
                values: (*net.biases).clone(),
                psqt: [0; PSQT_BUCKETS],
                pieces: [Bitboard::EMPTY; 12],
            })
            .collect();
        ThreatEval {
            net,
            kernels,
            entries: Vec::new(),
            cache,
            boards: Vec::new(),
            changes: Changes::default(),
            scratch: Default::default(),
            threats_removed: ThreatList::default(),
            threats_added: ThreatList::default(),
            pairs_removed: Vec::new(),
            pairs_added: Vec::new(),
            changed_for: None,
            stats: UpdateStats::default(),
        }
    }

    /// The net.
    pub fn network(&self) -> &Arc<ThreatNet> {
        &self.net
    }

    /// The kernels in use.
    pub fn kernels(&self) -> Kernels {
        self.kernels
    }

    /// The accumulator of `pos`, computed from scratch: the biases plus the
    /// rows of every input, for both sides.
    pub fn refresh(&self, pos: &Position) -> Accumulator {
        let board = Board::new(pos.board());
        let mut threats = ThreatList::default();
        let mut pairs = Vec::new();
        if self.net.inputs == Inputs::Threats {
            board.threats(&mut threats);
            features::pairs(board.pawns(), &mut pairs);
        }
        let inputs = self.net.inputs;
        let mut acc = Accumulator { values: [Row::ZERO, Row::ZERO], psqt: [[0; PSQT_BUCKETS]; 2] };
        for side in [Color::White, Color::Black] {
            let mut c = Changes::default();
            let king = pos.king(side);
            for sq in pos.occupied() {
                if let Some(pc) = pos.piece_on(sq) {
                    c.psq_add.push(inputs.psq_index(side, sq, pc, king) as u32);
                }
            }
            threat_inputs(side, king, threats.as_slice(), &pairs, &mut c.threat_add);
            let s = side.to_usize();
            let (values, psqt) = (&mut acc.values[s], &mut acc.psqt[s]);
            simd::apply(
                self.kernels,
                &self.net,
                (&self.net.biases, &[0; PSQT_BUCKETS]),
                (values, psqt),
                &c,
            );
        }
        acc
    }

    /// The accumulator of `pos`'s current state, brought up to date.
    pub fn accumulator(&mut self, pos: &Position) -> &Accumulator {
        let top = pos.states().len() - 1;
        if self.entries.len() <= top {
            let blank = Entry {
                acc: Accumulator { values: [Row::ZERO, Row::ZERO], psqt: [[0; PSQT_BUCKETS]; 2] },
                key: [None; 2],
            };
            self.entries.resize(top + 1 + 64, blank);
        }
        let starts = [self.start(pos, top, Color::White), self.start(pos, top, Color::Black)];
        if starts == [Start::Done; 2] {
            return &self.entries[top].acc;
        }
        let first = starts
            .iter()
            .map(|s| match *s {
                Start::From(i) | Start::Refresh(i) | Start::Hybrid(i) => i,
                Start::Done => top,
            })
            .min()
            .unwrap_or(top);
        // The boards from the first start up to the current one: the
        // threats and pairs of every move stepped over come from them (the
        // lite net needs only the current board, for a refresh).
        let threats = self.net.inputs == Inputs::Threats;
        let lowest = if threats { first } else { top };
        let states = pos.states();
        self.boards.clear();
        self.boards.push(Board::new(pos.board()));
        for j in (lowest + 1..=top).rev() {
            let mut before = self.boards[self.boards.len() - 1].clone();
            before.undo(states[j].dirty.entries());
            self.boards.push(before);
        }
        self.boards.reverse();
        self.changed_for = None;
        // A move's threat and pair changes are the same for both sides:
        // worked out once, applied to each side that steps over it.
        for j in first + 1..=top {
            let steps = starts.map(|s| match s {
                Start::From(from) => from < j,
                Start::Hybrid(from) => from < j && j < top,
                _ => false,
            });
            if steps == [false; 2] {
                continue;
            }
            self.changed(pos, j, lowest);
            for side in [Color::White, Color::Black] {
                if steps[side.to_usize()] {
                    // Before a hybrid update's king move, the king stood
                    // where that move took it from.
                    let king = match starts[side.to_usize()] {
                        Start::Hybrid(_) => states[top].dirty.entries()[0].from,
                        _ => None,
                    };
                    self.step(pos, j, side, king.unwrap_or(pos.king(side)), true);
                }
            }
        }
        for side in [Color::White, Color::Black] {
            match starts[side.to_usize()] {
                Start::Hybrid(_) => {
                    self.changed(pos, top, lowest);
                    self.hybrid(pos, top, side, lowest);
                }
                Start::Refresh(back_to) => {
                    self.refresh_side(pos, top, side, lowest);
                    for j in (back_to + 1..=top).rev() {
                        self.changed(pos, j, lowest);
                        self.step(pos, j, side, pos.king(side), false);
                    }
                }
                Start::Done | Start::From(_) => {}
            }
        }
        &self.entries[top].acc
    }

    /// Where `side`'s accumulator at `top` comes from.
    fn start(&mut self, pos: &Position, top: usize, side: Color) -> Start {
        let s = side.to_usize();
        let states = pos.states();
        if self.entries[top].key[s] == Some(states[top].key) {
            self.stats.hits += 1;
            return Start::Done;
        }
        let king = Piece::new(side, Role::King);
        let inputs = self.net.inputs;
        let mut i = top;
        loop {
            if i == 0 {
                return Start::Refresh(0);
            }
            let moved = states[i].dirty.entries().first().filter(|e| e.piece == king);
            if let Some(e) = moved.filter(|e| inputs.king_move_refreshes(e.from, e.to)) {
                // A Chess960 castling can leave the king where it stood:
                // its two cache entries would be one, so it is refreshed.
                let same_half = matches!((e.from, e.to), (Some(a), Some(b))
                    if a != b && orientation(side, a) == orientation(side, b));
                if i == top
                    && inputs == Inputs::Threats
                    && same_half
                    && pos.occupied().count() >= MIN_PIECES_HYBRID
                {
                    // The state before, computed or a few steps from it.
                    let mut k = top - 1;
                    while top - 1 - k <= MAX_STEPS_BEFORE_HYBRID {
                        if self.entries[k].key[s] == Some(states[k].key) {
                            return Start::Hybrid(k);
                        }
                        let refreshes = states[k].dirty.entries().first().is_some_and(|e| {
                            e.piece == king && inputs.king_move_refreshes(e.from, e.to)
                        });
                        if k == 0 || refreshes {
                            break;
                        }
                        k -= 1;
                    }
                }
                return Start::Refresh(i);
            }
            if top - i >= MAX_STEPS {
                return Start::Refresh(top);
            }
            i -= 1;
            if self.entries[i].key[s] == Some(states[i].key) {
                return Start::From(i);
            }
        }
    }

    /// Works out the threats and pawn pairs the move to state `j` changed;
    /// `self.boards[k]` is the board at index `lowest + k`. Nothing to do
    /// with the lite net, or when they are the last worked out.
    fn changed(&mut self, pos: &Position, j: usize, lowest: usize) {
        if self.net.inputs != Inputs::Threats || self.changed_for == Some(j) {
            return;
        }
        self.changed_for = Some(j);
        let dirty = pos.states()[j].dirty.entries();
        let (before, after) = (&self.boards[j - 1 - lowest], &self.boards[j - lowest]);
        self.threats_removed.clear();
        self.threats_added.clear();
        changed_threats(
            before,
            after,
            changed_squares(dirty),
            &mut self.scratch,
            &mut self.threats_removed,
            &mut self.threats_added,
        );
        self.pairs_removed.clear();
        self.pairs_added.clear();
        changed_pairs(
            before.pawns(),
            after.pawns(),
            &mut self.pairs_removed,
            &mut self.pairs_added,
        );
    }

    /// The inputs the move to state `j` changes for `side` into
    /// `self.changes`: added and removed as the move plays (`forward`), or
    /// the other way round, as it is undone. The threat and pair changes
    /// are those [`ThreatEval::changed`] worked out for `j`; `psq` leaves
    /// the HalfKAv2_hm changes out (a hybrid update takes that part from
    /// the refresh cache).
    fn collect_changes(
        &mut self,
        pos: &Position,
        j: usize,
        (side, king): (Color, Square),
        forward: bool,
        psq: bool,
    ) {
        let inputs = self.net.inputs;
        self.changes.clear();
        let c = &mut self.changes;
        let (add, sub) = if forward {
            (&mut c.psq_add, &mut c.psq_sub)
        } else {
            (&mut c.psq_sub, &mut c.psq_add)
        };
        if psq {
            for e in pos.states()[j].dirty.entries() {
                if let Some(from) = e.from {
                    sub.push(inputs.psq_index(side, from, e.piece, king) as u32);
                }
                if let Some(to) = e.to {
                    add.push(inputs.psq_index(side, to, e.piece, king) as u32);
                }
            }
        }
        if inputs == Inputs::Threats {
            let (add, sub) = if forward {
                (&mut c.threat_add, &mut c.threat_sub)
            } else {
                (&mut c.threat_sub, &mut c.threat_add)
            };
            threat_inputs(side, king, self.threats_removed.as_slice(), &self.pairs_removed, sub);
            threat_inputs(side, king, self.threats_added.as_slice(), &self.pairs_added, add);
        }
    }

    /// Computes `side`'s accumulator at `j` from the one at `j - 1`
    /// (`forward`), or the one at `j - 1` from the one at `j`, with the
    /// changes [`ThreatEval::changed`] worked out for `j`. The king of
    /// `side` stands on `king` in both states.
    fn step(&mut self, pos: &Position, j: usize, side: Color, king: Square, forward: bool) {
        self.stats.steps += 1;
        self.stats.back_steps += u64::from(!forward);
        self.collect_changes(pos, j, (side, king), forward, true);
        let s = side.to_usize();
        let (lower, upper) = self.entries.split_at_mut(j);
        let (earlier, later) = (&mut lower[j - 1], &mut upper[0]);
        let (src, dst, at) =
            if forward { (&*earlier, later, j) } else { (&*later, earlier, j - 1) };
        simd::apply(
            self.kernels,
            &self.net,
            (&src.acc.values[s], &src.acc.psqt[s]),
            (&mut dst.acc.values[s], &mut dst.acc.psqt[s]),
            &self.changes,
        );
        dst.key[s] = Some(pos.states()[at].key);
    }

    /// Brings the refresh cache's entry for `side`'s king on `king` to the
    /// pieces of `board`; its index in the cache.
    fn update_cache(&mut self, side: Color, king: Square, board: &Board) -> usize {
        let s = side.to_usize();
        let inputs = self.net.inputs;
        let slot = s * 64 + inputs.cache_slot(king);
        let e = &mut self.cache[slot];
        self.changes.clear();
        for pc in Piece::ALL {
            let now = board.by_piece[pc.to_usize()];
            let was = e.pieces[pc.to_usize()];
            for sq in now & !was {
                self.changes.psq_add.push(inputs.psq_index(side, sq, pc, king) as u32);
            }
            for sq in was & !now {
                self.changes.psq_sub.push(inputs.psq_index(side, sq, pc, king) as u32);
            }
            e.pieces[pc.to_usize()] = now;
        }
        if !self.changes.psq_add.is_empty() || !self.changes.psq_sub.is_empty() {
            let (old_values, old_psqt) = (e.values.clone(), e.psqt);
            simd::apply(
                self.kernels,
                &self.net,
                (&old_values, &old_psqt),
                (&mut e.values, &mut e.psqt),
                &self.changes,
            );
        }
        slot
    }

    /// `side`'s accumulator at `top` by a hybrid update (see
    /// [`Start::Hybrid`]) from the one at `top - 1`, with the threat and
    /// pair changes [`ThreatEval::changed`] worked out for `top`.
    fn hybrid(&mut self, pos: &Position, top: usize, side: Color, lowest: usize) {
        self.stats.hybrids += 1;
        let s = side.to_usize();
        let e = pos.states()[top].dirty.entries()[0];
        let (Some(old_king), Some(new_king)) = (e.from, e.to) else {
            unreachable!("a hybrid update follows a king move on the board")
        };
        let before = self.boards[top - 1 - lowest].clone();
        let old_slot = self.update_cache(side, old_king, &before);
        let now = self.boards[top - lowest].clone();
        let new_slot = self.update_cache(side, new_king, &now);
        self.collect_changes(pos, top, (side, new_king), true, false);
        let (lower, upper) = self.entries.split_at_mut(top);
        let (src, dst) = (&lower[top - 1].acc, &mut upper[0].acc);
        simd::apply(
            self.kernels,
            &self.net,
            (&src.values[s], &src.psqt[s]),
            (&mut dst.values[s], &mut dst.psqt[s]),
            &self.changes,
        );
        let (old, new) = (&self.cache[old_slot], &self.cache[new_slot]);
        simd::add_difference(self.kernels, &mut dst.values[s], &new.values, &old.values);
        for ((d, &n), &o) in dst.psqt[s].iter_mut().zip(&new.psqt).zip(&old.psqt) {
            *d = d.wrapping_add(n.wrapping_sub(o));
        }
        upper[0].key[s] = Some(pos.states()[top].key);
    }

    /// Refreshes `side`'s accumulator at `top`.
    fn refresh_side(&mut self, pos: &Position, top: usize, side: Color, lowest: usize) {
        self.stats.refreshes += 1;
        let s = side.to_usize();
        let king = pos.king(side);
        // The piece-square part: the cache entry brought to this board. An
        // entry per king square for HalfKAv2_hm, per half of the board for
        // P_hm (whose king plane is an input like any other).
        let board = self.boards[top - lowest].clone();
        let slot = self.update_cache(side, king, &board);
        // Then every threat and pair.
        self.changes.clear();
        if self.net.inputs == Inputs::Threats {
            self.scratch[0].clear();
            board.threats(&mut self.scratch[0]);
            self.pairs_added.clear();
            features::pairs(board.pawns(), &mut self.pairs_added);
            threat_inputs(
                side,
                king,
                self.scratch[0].as_slice(),
                &self.pairs_added,
                &mut self.changes.threat_add,
            );
            // The pair lists now hold this board's pairs, not a move's.
            self.changed_for = None;
        }
        let e = &self.cache[slot];
        let dst = &mut self.entries[top];
        simd::apply(
            self.kernels,
            &self.net,
            (&e.values, &e.psqt),
            (&mut dst.acc.values[s], &mut dst.acc.psqt[s]),
            &self.changes,
        );
        dst.key[s] = Some(pos.states()[top].key);
    }

    /// The net's outputs for `pos`, with the bucket its piece count
    /// chooses.
    pub fn outputs(&mut self, pos: &Position) -> Outputs {
        let b = bucket(pos.occupied().count());
        self.accumulator(pos);
        // The accumulator is the top entry's: borrowed beside the net
        // rather than through a second handle on the net at every node.
        let acc = &self.entries[pos.states().len() - 1].acc;
        outputs(self.kernels, &self.net, acc, pos.side_to_move(), b)
    }

    /// The raw evaluation Stockfish 19's `eval` prints as `NNUE
    /// evaluation`, side to move's view, internal units.
    pub fn evaluate(&mut self, pos: &Position) -> i32 {
        self.outputs(pos).raw()
    }

    /// Stockfish 19's `Eval::evaluate` with `optimism`: see [`blend`].
    pub fn evaluate_blended(&mut self, pos: &Position, optimism: i32) -> (i32, Outputs) {
        let o = self.outputs(pos);
        (blend(o, pos, optimism), o)
    }

    /// The report Stockfish 19's `eval` prints: the contribution of every
    /// bucket, then the net's evaluation (internal units and pawns) and
    /// the final evaluation; in check only the net's raw output (Stockfish
    /// prints no evaluation there).
    pub fn stockfish_report(&mut self, pos: &Position) -> String {
        let mut out = String::new();
        let stm = pos.side_to_move();
        let white = |v: i32| if stm == Color::White { v } else { -v };
        let raw = self.evaluate(pos);
        if pos.in_check() {
            let _ =
                writeln!(out, "NNUE evaluation          {raw:+} (side to move, internal units)");
            out.push_str("Final evaluation: none (in check)\n");
            return out;
        }
        let side = if stm == Color::White { "White" } else { "Black" };
        let _ = writeln!(out, "NNUE network contributions (Normalized, {side} to move)");
        let rule = "+------------+------------+------------+------------+\n";
        out.push_str(rule);
        out.push_str("|   Bucket   |  Material  | Positional |   Total    |\n");
        out.push_str("|            |   (PSQT)   |  (Layers)  |            |\n");
        out.push_str(rule);
        let acc = self.accumulator(pos).clone();
        let used = bucket(pos.occupied().count());
        for b in 0..LAYER_STACKS {
            let o = outputs(self.kernels, &self.net, &acc, stm, b);
            let cell = |v: i32| aligned_pawns(v, pos);
            let _ = write!(
                out,
                "|  {b}         |  {}   |  {}   |  {}   |",
                cell(o.psqt),
                cell(o.positional),
                cell(o.raw())
            );
            if b == used {
                out.push_str(" <-- this bucket is used");
            }
            out.push('\n');
        }
        out.push_str(rule);
        out.push('\n');
        let _ = writeln!(out, "NNUE evaluation          {raw:+} (side to move, internal units)");
        let pawns = |v: i32| f64::from(to_centipawns(white(v), pos)) * 0.01;
        let _ = writeln!(out, "NNUE evaluation        {:+.2} (white side)", pawns(raw));
        let (final_eval, _) = self.evaluate_blended(pos, 0);
        let _ = writeln!(
            out,
            "Final evaluation      {:+.2} (white side) [with scaled NNUE, ...]",
            pawns(final_eval)
        );
        out
    }
}

/// Stockfish's `format_cp_aligned_dot`: a sign, then the pawns in six
/// characters with two decimals.
fn aligned_pawns(v: i32, pos: &Position) -> String {
    let sign = match v.signum() {
        -1 => '-',
        1 => '+',
        _ => ' ',
    };
    let pawns = (0.01 * f64::from(to_centipawns(v, pos))).abs();
    format!("{sign}{pawns:6.2}")
}

/// Every square the move of `dirty` changed.
fn changed_squares(dirty: &[DirtyEntry]) -> Bitboard {
    let mut bb = Bitboard::EMPTY;
    for e in dirty {
        for sq in [e.from, e.to].into_iter().flatten() {
            bb |= Bitboard::from_square(sq);
        }
    }
    bb
}

/// The inputs of `threats` and `pairs` for `side`, whose king is on `king`.
fn threat_inputs(
    side: Color,
    king: Square,
    threats: &[features::Threat],
    pairs: &[Pair],
    out: &mut Vec<u32>,
) {
    let orient = orientation(side, king);
    for &t in threats {
        if let Some(i) = threat_index(t, side, orient) {
            out.push(i as u32);
        }
    }
    for p in pairs {
        out.push(pair_index(p.a.0, p.a.1, p.b.0, p.b.1, side, orient) as u32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incremental_accumulators_equal_a_refresh_along_games() {
        let net = Arc::new(ThreatNet::synthetic(3));
        for kernels in Kernels::available() {
            let mut eval = ThreatEval::with_kernels(net.clone(), kernels);
            let game = "e4 d5 exd5 c6 dxc6 Nf6 cxb7 Nbd7 bxa8=N e5 Nb6 Bc5 Nf3 O-O Be2 Qe7 O-O e4 \
                        d4 exd3 Kh1 dxc2 Nxc8 cxb1=Q Nxa7 Qxa2 Rb1";
            let mut pos = Position::startpos();
            let mut made = Vec::new();
            for (n, san) in game.split_whitespace().enumerate() {
                let m = pos.parse_san(san.as_bytes()).unwrap();
                if n % 3 != 1 {
                    let want = eval.refresh(&pos);
                    assert_eq!(*eval.accumulator(&pos), want, "{}", pos.fen());
                }
                pos.do_move(m);
                made.push(m);
            }
            for &m in made.iter().rev().take(6) {
                pos.undo_move(m);
                let want = eval.refresh(&pos);
                assert_eq!(*eval.accumulator(&pos), want, "{}", pos.fen());
            }
            // Random games: every kind of move, checked at random plies
            // (so that updates span several moves), and unwound part way.
            let mut seed = 0x2545_F491_4F6C_DD1Du64;
            let mut next = move || {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed
            };
            for _ in 0..20 {
                let mut pos = Position::startpos();
                let mut made = Vec::new();
                for _ in 0..200 {
                    let moves = pos.legal_moves();
                    if moves.is_empty() {
                        break;
                    }
                    let m = moves[(next() % moves.len() as u64) as usize];
                    pos.do_move(m);
                    made.push(m);
                    if next() % 4 == 0 {
                        let want = eval.refresh(&pos);
                        assert_eq!(*eval.accumulator(&pos), want, "{}", pos.fen());
                    }
                    if next() % 16 == 0 {
                        for _ in 0..(next() % 5).min(made.len() as u64 - 1) {
                            pos.undo_move(made.pop().unwrap());
                        }
                    }
                }
            }
            let stats = eval.stats;
            assert!(stats.steps > 0 && stats.refreshes > 0 && stats.hits > 0, "{stats:?}");
            assert!(stats.back_steps > 0 && stats.hybrids > 0, "{stats:?}");
        }
    }
}
