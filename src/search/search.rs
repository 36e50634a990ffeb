//! The search: iterative deepening, principal variation search with
//! aspiration windows, a transposition table, quiescence, null-move
//! pruning, late-move reductions, check extensions and mate distances.
//!
//! A [`Searcher`] belongs to one thread and owns its table, history and
//! stacks; nothing is shared, so there are no locks. At a fixed depth (or
//! node count) with the same table size and a cleared table, a search is
//! deterministic: same score, move, principal variation and node count.
//!
//! ```
//! use kibitz::{Limits, Position, Searcher};
//!
//! let mut pos = Position::from_fen("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")?;
//! let mut searcher = Searcher::new(16);
//! let result = searcher.search(&mut pos, &Limits::depth(4), |_| {});
//! assert_eq!(pos.uci(result.best.unwrap()), "a1a8");
//! assert_eq!(result.score, kibitz::mate_in(1));
//! # Ok::<(), kibitz::FenError>(())
//! ```

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use crate::{
    chess::{
        mv::{Move, MoveList},
        position::Position,
        types::{Piece, Role},
    },
    nnue::Net,
    search::{
        evaluator::{Evaluator, Params},
        movepick::{HISTORY_MAX, History, MovePicker},
        tt::{Bound, TableError, TranspositionTable},
    },
};

pub use crate::score::{INFINITE, MATE, MATE_BOUND, MAX_PLY, mate_in, mated_in};

/// When to stop.
#[derive(Clone, Debug, Default)]
pub struct Limits {
    /// The depth to reach.
    pub depth: Option<i32>,
    /// Stop after this many nodes (checked at every node, so the count is
    /// exact and the search deterministic; the stop flag and the deadline
    /// are checked every 1024 nodes).
    pub nodes: Option<u64>,
    /// Stop at once at this time.
    pub deadline: Option<Instant>,
    /// Do not start a new iteration after this time.
    pub soft_deadline: Option<Instant>,
}

impl Limits {
    /// Search to a fixed depth.
    pub fn depth(depth: i32) -> Limits {
        Limits { depth: Some(depth), ..Limits::default() }
    }

    /// Search a fixed number of nodes.
    pub fn nodes(nodes: u64) -> Limits {
        Limits { nodes: Some(nodes), ..Limits::default() }
    }

    /// Search for a fixed time.
    pub fn movetime(time: Duration) -> Limits {
        let now = Instant::now();
        Limits {
            deadline: Some(now + time),
            soft_deadline: Some(now + time / 2),
            ..Limits::default()
        }
    }
}

/// Progress after each completed depth.
#[derive(Clone, Debug)]
pub struct Info {
    /// The depth completed.
    pub depth: i32,
    /// The deepest ply reached.
    pub seldepth: usize,
    /// The score, side to move's view.
    pub score: i32,
    /// Nodes so far.
    pub nodes: u64,
    /// Time so far.
    pub elapsed: Duration,
    /// The principal variation.
    pub pv: Vec<Move>,
    /// Table use in permille.
    pub hashfull: usize,
}

/// What a search found.
#[derive(Clone, Debug, Default)]
pub struct SearchResult {
    /// The best move (`None` if there is no legal move).
    pub best: Option<Move>,
    /// Its score, side to move's view.
    pub score: i32,
    /// The depth completed.
    pub depth: i32,
    /// The principal variation.
    pub pv: Vec<Move>,
    /// Nodes searched.
    pub nodes: u64,
    /// The deepest ply reached.
    pub seldepth: usize,
}

trait NodeType {
    const PV: bool;
    const ROOT: bool;
}

struct Root;
struct Pv;
struct NonPv;

impl NodeType for Root {
    const PV: bool = true;
    const ROOT: bool = true;
}
impl NodeType for Pv {
    const PV: bool = true;
    const ROOT: bool = false;
}
impl NodeType for NonPv {
    const PV: bool = false;
    const ROOT: bool = false;
}

// Tuned constants. The margins in evaluation units are in [`Params`], one
// set per evaluation scale.
const RFP_DEPTH: i32 = 7;
const NMP_MIN_DEPTH: i32 = 3;
const FUTILITY_DEPTH: i32 = 6;
const LMP_DEPTH: i32 = 6;

#[derive(Clone, Copy, Default)]
struct StackEntry {
    eval: i32,
    /// The move that led to the next ply, as (piece, destination).
    moved: Option<(Piece, u8)>,
}

/// A single-threaded searcher.
pub struct Searcher {
    /// The transposition table.
    pub tt: TranspositionTable,
    eval: Evaluator,
    params: Params,
    history: Box<History>,
    counters: Box<[[Option<Move>; 64]; 12]>,
    killers: [[Option<Move>; 2]; MAX_PLY + 2],
    stack: [StackEntry; MAX_PLY + 4],
    pv: Box<[[Option<Move>; MAX_PLY + 1]; MAX_PLY + 1]>,
    pv_len: [usize; MAX_PLY + 1],
    lmr: Box<[[i32; 64]; 64]>,
    nodes: u64,
    seldepth: usize,
    limits: Limits,
    stopped: bool,
    /// Whether an iteration has completed (before that, nothing stops the
    /// search: there would be no move to give).
    has_move: bool,
    stop: Arc<AtomicBool>,
    /// Root moves left out of the search (the lines already found by a
    /// multi-PV search).
    excluded: Vec<Move>,
    /// The last completed search's root: its result is exact for the root
    /// move that leads to it in the next search (a game's positions
    /// labelled last to first).
    last_root: Option<KnownLine>,
    /// The line known exactly in the current search (the last search's
    /// root, taken at its start).
    known: Option<KnownLine>,
}

/// A search's result at its root, kept for the search of a position one
/// move before it.
#[derive(Clone, Debug)]
struct KnownLine {
    key: u64,
    /// The score in the search's own units, from the root's side to move.
    score: i32,
    depth: i32,
    pv: Vec<Move>,
}

fn late_move_limit(depth: i32, improving: bool) -> usize {
    let base = 3 + depth * depth;
    (if improving { base } else { base / 2 }) as usize
}

impl Searcher {
    /// A searcher with a `hash_mib` MiB table.
    ///
    /// # Panics
    ///
    /// If the table cannot be allocated: use [`Searcher::try_new`] for a
    /// size that comes from outside.
    pub fn new(hash_mib: usize) -> Searcher {
        Searcher::try_new(hash_mib).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A searcher with a `hash_mib` MiB table, or an error that says the
    /// table cannot be allocated.
    pub fn try_new(hash_mib: usize) -> Result<Searcher, TableError> {
        Searcher::try_with_net(hash_mib, None)
    }

    /// A searcher with a `hash_mib` MiB table that evaluates with `net`
    /// (the hand-written evaluation without one).
    pub fn try_with_net(hash_mib: usize, net: Option<Net>) -> Result<Searcher, TableError> {
        let tt = TranspositionTable::try_new(hash_mib)?;
        let eval = Evaluator::new(net);
        let params = eval.params();
        let (base, divisor) =
            (f64::from(params.lmr_base) / 100.0, f64::from(params.lmr_divisor) / 100.0);
        let mut lmr = Box::new([[0i32; 64]; 64]);
        for (d, row) in lmr.iter_mut().enumerate().skip(1) {
            for (m, r) in row.iter_mut().enumerate().skip(1) {
                *r = (base + (d as f64).ln() * (m as f64).ln() / divisor) as i32;
            }
        }
        Ok(Searcher {
            tt,
            params,
            eval,
            history: Box::new([[0; 64]; 12]),
            counters: Box::new([[None; 64]; 12]),
            killers: [[None; 2]; MAX_PLY + 2],
            stack: [StackEntry::default(); MAX_PLY + 4],
            pv: Box::new([[None; MAX_PLY + 1]; MAX_PLY + 1]),
            pv_len: [0; MAX_PLY + 1],
            lmr,
            nodes: 0,
            seldepth: 0,
            limits: Limits::default(),
            stopped: false,
            has_move: false,
            stop: Arc::new(AtomicBool::new(false)),
            excluded: Vec::new(),
            last_root: None,
            known: None,
        })
    }

    /// The flag another thread sets to stop the search. A search does not
    /// clear it (so a stop sent just before the search starts is not lost):
    /// clear it before starting one. The first iteration always completes.
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    /// Forgets everything learned (table, history, killers, evaluation
    /// caches): the state of a new searcher, so the next search is
    /// reproducible.
    pub fn new_game(&mut self) {
        self.tt.clear();
        self.eval.clear();
        self.history.iter_mut().for_each(|r| r.fill(0));
        self.counters.iter_mut().for_each(|r| r.fill(None));
        self.killers = [[None; 2]; MAX_PLY + 2];
        self.last_root = None;
        self.known = None;
    }

    /// Resizes the table (and clears it). When the new size cannot be
    /// allocated, the table stays as it was and the error says so.
    pub fn set_hash(&mut self, mib: usize) -> Result<(), TableError> {
        self.tt = TranspositionTable::try_new(mib)?;
        Ok(())
    }

    /// Nodes searched by the last (or current) search.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// The net the searcher evaluates with, if any.
    pub fn net(&self) -> Option<Net> {
        self.eval.net()
    }

    /// The static evaluation of `pos`, side to move's view, in the
    /// evaluation's units (centipawns for the hand-written one, Stockfish's
    /// internal units with a net).
    pub fn evaluate(&mut self, pos: &Position) -> i32 {
        self.eval.evaluate(pos)
    }

    /// A search score as labels give it: centipawns (mates unchanged).
    pub fn to_centipawns(&self, score: i32) -> i32 {
        self.eval.to_centipawns(score)
    }

    #[inline]
    fn check_stop(&mut self) -> bool {
        if self.stopped {
            return true;
        }
        // The first iteration (depth 1, a few hundred nodes at most) always
        // completes, so that a stopped search still has a move to give.
        if !self.has_move {
            return false;
        }
        if let Some(n) = self.limits.nodes
            && self.nodes >= n
        {
            self.stopped = true;
        } else if self.nodes & 1023 == 0 {
            if self.stop.load(Ordering::Relaxed) {
                self.stopped = true;
            } else if let Some(d) = self.limits.deadline
                && Instant::now() >= d
            {
                self.stopped = true;
            }
        }
        self.stopped
    }

    /// Searches `pos` within `limits`, calling `on_info` after each
    /// completed depth. The position is restored before returning.
    pub fn search(
        &mut self,
        pos: &mut Position,
        limits: &Limits,
        mut on_info: impl FnMut(&Info),
    ) -> SearchResult {
        let start = Instant::now();
        self.limits = limits.clone();
        self.nodes = 0;
        self.seldepth = 0;
        self.stopped = false;
        self.has_move = false;
        // The stop flag is not cleared here: a stop sent before this thread
        // got this far must still stop it. The caller clears it before
        // starting a search.
        self.tt.new_search();
        self.killers = [[None; 2]; MAX_PLY + 2];
        self.stack = [StackEntry::default(); MAX_PLY + 4];
        // Only a plain search (no root move left out) leaves its root for
        // the next, or takes the last one's.
        let plain = self.excluded.is_empty();
        self.known = if plain { self.last_root.take() } else { None };

        let root_moves = pos.legal_moves();
        let mut result = SearchResult::default();
        if root_moves.is_empty() {
            result.score = if pos.in_check() { -MATE } else { 0 };
            return result;
        }
        let max_depth = limits.depth.unwrap_or(MAX_PLY as i32 - 1).clamp(1, MAX_PLY as i32 - 1);
        let mut score = 0;
        for depth in 1..=max_depth {
            let mut delta = self.params.aspiration;
            let (mut alpha, mut beta) =
                if depth >= 5 { (score - delta, score + delta) } else { (-INFINITE, INFINITE) };
            let s = loop {
                let s = self.alpha_beta::<Root>(pos, depth, alpha, beta, 0, false);
                if self.stopped {
                    break s;
                }
                if s <= alpha {
                    beta = (alpha + beta) / 2;
                    alpha = (s - delta).max(-INFINITE);
                } else if s >= beta {
                    beta = (s + delta).min(INFINITE);
                } else {
                    break s;
                }
                delta += delta / 2 + self.params.aspiration / 2;
            };
            if self.stopped && result.best.is_some() {
                break;
            }
            let pv: Vec<Move> = self.pv[0][..self.pv_len[0]].iter().flatten().copied().collect();
            let Some(&best) = pv.first() else { break };
            score = s;
            self.has_move = true;
            result = SearchResult {
                best: Some(best),
                score: self.eval.to_centipawns(score),
                depth,
                pv: pv.clone(),
                nodes: self.nodes,
                seldepth: self.seldepth,
            };
            on_info(&Info {
                depth,
                seldepth: self.seldepth,
                score: self.eval.to_centipawns(score),
                nodes: self.nodes,
                elapsed: start.elapsed(),
                pv,
                hashfull: self.tt.hashfull(),
            });
            if self.stopped || limits.soft_deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
        }
        result.nodes = self.nodes;
        self.known = None;
        if plain && result.best.is_some() {
            self.last_root = Some(KnownLine {
                key: pos.key(),
                score,
                depth: result.depth,
                pv: result.pv.clone(),
            });
        }
        result
    }

    /// The score of root move just made (`pos` is the position after it)
    /// when the last search's root is that position, searched at least
    /// `depth` deep: its result is exact, so the move's subtree need not be
    /// searched again. The root's variation is continued with its line.
    fn known_child(&mut self, pos: &Position, depth: i32) -> Option<i32> {
        let k = self.known.as_ref()?;
        if k.key != pos.key() || k.depth < depth || self.is_draw(pos, 1) {
            return None;
        }
        // One ply further from the root: a mate is a ply further away.
        let child = if k.score >= MATE_BOUND {
            k.score - 1
        } else if k.score <= -MATE_BOUND {
            k.score + 1
        } else {
            k.score
        };
        let len = k.pv.len().min(MAX_PLY - 1);
        for (i, &m) in k.pv[..len].iter().enumerate() {
            self.pv[1][1 + i] = Some(m);
        }
        self.pv_len[1] = 1 + len;
        self.nodes += 1;
        Some(-child)
    }

    /// The `lines` best moves of `pos` (at most as many as it has legal
    /// moves), each searched within `limits` with the ones before it left
    /// out at the root, the best first. One line is [`Searcher::search`].
    pub fn search_multipv(
        &mut self,
        pos: &mut Position,
        limits: &Limits,
        lines: usize,
    ) -> Vec<SearchResult> {
        let lines = lines.min(pos.legal_moves().len()).max(1);
        let mut found: Vec<SearchResult> = Vec::with_capacity(lines);
        for _ in 0..lines {
            self.excluded = found.iter().filter_map(|r| r.best).collect();
            let r = self.search(pos, limits, |_| {});
            if r.best.is_none() {
                break;
            }
            found.push(r);
        }
        self.excluded.clear();
        found
    }

    fn update_pv(&mut self, ply: usize, m: Move) {
        self.pv[ply][ply] = Some(m);
        let child_len = self.pv_len[ply + 1].max(ply + 1);
        for i in ply + 1..child_len {
            self.pv[ply][i] = self.pv[ply + 1][i];
        }
        self.pv_len[ply] = child_len;
    }

    fn is_draw(&self, pos: &Position, ply: usize) -> bool {
        // The 50-move rule first: past it, the repetition scan (as long as
        // the reversible stretch, which a game of shuffled knights makes as
        // long as the game) is not needed.
        (pos.rule50() >= 100 && pos.is_fifty_move_draw())
            || pos.is_repetition(ply)
            || pos.has_insufficient_material()
    }

    fn update_history(&mut self, pos: &Position, m: Move, bonus: i32) {
        let Some(piece) = pos.piece_on(m.from()) else { return };
        let entry = &mut self.history[piece.to_usize()][m.to().to_usize()];
        // Gravity: the entry moves towards ±HISTORY_MAX and saturates there.
        *entry += bonus - *entry * bonus.abs() / HISTORY_MAX;
    }

    #[allow(clippy::too_many_arguments)]
    fn alpha_beta<NT: NodeType>(
        &mut self,
        pos: &mut Position,
        mut depth: i32,
        mut alpha: i32,
        mut beta: i32,
        ply: usize,
        cut_node: bool,
    ) -> i32 {
        if depth <= 0 {
            return self.quiescence::<NT>(pos, alpha, beta, ply, 0);
        }
        self.nodes += 1;
        self.pv_len[ply] = ply;
        if self.check_stop() {
            return 0;
        }
        self.seldepth = self.seldepth.max(ply);

        // Step 1. Draws and the ply limit; mate distance pruning.
        if !NT::ROOT {
            if self.is_draw(pos, ply) {
                return 0;
            }
            if ply >= MAX_PLY - 1 {
                return if pos.in_check() { 0 } else { self.evaluate(pos) };
            }
            alpha = alpha.max(-MATE + ply as i32);
            beta = beta.min(MATE - ply as i32 - 1);
            if alpha >= beta {
                return alpha;
            }
        }
        let in_check = pos.in_check();

        // Step 2. The transposition table.
        let key = pos.key();
        let hit = self.tt.probe(key);
        let tt_move = hit.and_then(|h| h.mv);
        if !NT::PV
            && let Some(h) = hit
            && h.depth >= depth
        {
            let s = score_from_tt(h.score, ply);
            let usable = match h.bound {
                Bound::Exact => true,
                Bound::Lower => s >= beta,
                Bound::Upper => s <= alpha,
                Bound::None => false,
            };
            if usable {
                return s;
            }
        }

        // Step 3. Static evaluation.
        let eval = if in_check {
            -INFINITE
        } else if let Some(h) = hit {
            h.eval
        } else {
            self.evaluate(pos)
        };
        self.stack[ply].eval = eval;
        let improving = !in_check && ply >= 2 && eval > self.stack[ply - 2].eval;
        let us = pos.side_to_move();

        if !NT::PV && !in_check {
            // Step 4. Razoring: far below alpha, only captures can save
            // the node; if quiescence agrees, trust it.
            if self.params.razor_margin > 0
                && depth <= 3
                && eval + self.params.razor_margin * (1 + depth * depth) < alpha
            {
                let s = self.quiescence::<NonPv>(pos, alpha - 1, alpha, ply, 0);
                if s < alpha {
                    return s;
                }
            }
            // Step 4b. Reverse futility: far above beta at low depth.
            if depth <= RFP_DEPTH
                && eval - self.params.rfp_margin * (depth - i32::from(improving)) >= beta
                && eval < MATE_BOUND
            {
                return eval;
            }
            // Step 5. Null move: passing still holds beta, so a real move
            // will too (not in zugzwang-prone pawn endings).
            if depth >= NMP_MIN_DEPTH
                && eval >= beta
                && pos.non_pawn_material(us) > 0
                && pos.plies_from_null() > 0
                && ply > 0
                && self.stack[ply - 1].moved.is_some()
            {
                let r = 3 + depth / 4 + ((eval - beta) / self.params.nmp_divisor).min(3);
                pos.do_null_move();
                self.stack[ply].moved = None;
                let s =
                    -self.alpha_beta::<NonPv>(pos, depth - r, -beta, -beta + 1, ply + 1, !cut_node);
                pos.undo_null_move();
                if self.stopped {
                    return 0;
                }
                if s >= beta {
                    return if s >= MATE_BOUND { beta } else { s };
                }
            }
        }

        // Step 6. Without a hash move, search a little shallower.
        if depth >= 4 && tt_move.is_none() && (NT::PV || cut_node) {
            depth -= 1;
        }

        // Step 7. The moves.
        let counter = if ply > 0 {
            self.stack[ply - 1]
                .moved
                .and_then(|(p, to)| self.counters[p.to_usize()][usize::from(to)])
        } else {
            None
        };
        let killers = self.killers[ply];
        let mut picker = MovePicker::new(pos, tt_move, killers, counter);
        let mut best_score = -INFINITE;
        let mut best_move: Option<Move> = None;
        let mut moves_seen = 0usize;
        let mut moves_searched = 0usize;
        let mut quiets_tried = MoveList::new();
        let original_alpha = alpha;

        while let Some(m) = picker.next(pos, &self.history) {
            if NT::ROOT && self.excluded.contains(&m) {
                continue;
            }
            moves_seen += 1;
            self.tt.prefetch(pos.key_after(m));
            let tactical = pos.is_capture_or_promotion(m);
            let gives_check = pos.gives_check(m);

            // Step 8. Shallow pruning, once a move has a real score.
            if !NT::ROOT && best_score > -MATE_BOUND && pos.non_pawn_material(us) > 0 {
                if !tactical && !gives_check {
                    if depth <= LMP_DEPTH && moves_searched >= late_move_limit(depth, improving) {
                        continue;
                    }
                    if !in_check
                        && depth <= FUTILITY_DEPTH
                        && eval + self.params.futility_base + self.params.futility_margin * depth
                            <= alpha
                    {
                        continue;
                    }
                    if depth <= LMP_DEPTH && !pos.see_ge(m, self.params.see_quiet * depth) {
                        continue;
                    }
                } else if depth <= LMP_DEPTH && !pos.see_ge(m, self.params.see_capture * depth) {
                    continue;
                }
            }

            // Step 9. Check extension.
            let extension = i32::from(gives_check && ply < 2 * MAX_PLY / 3);
            let new_depth = depth - 1 + extension;
            let piece = pos.piece_on(m.from()).unwrap_or(Piece::WhitePawn);
            let is_killer = killers.contains(&Some(m));

            pos.do_move(m);
            self.stack[ply].moved = Some((piece, m.to().to_u32() as u8));
            let known = if NT::ROOT { self.known_child(pos, new_depth) } else { None };
            let score = if let Some(v) = known {
                v
            } else if moves_searched == 0 {
                if NT::PV {
                    -self.alpha_beta::<Pv>(pos, new_depth, -beta, -alpha, ply + 1, false)
                } else {
                    -self.alpha_beta::<NonPv>(pos, new_depth, -beta, -alpha, ply + 1, !cut_node)
                }
            } else {
                // Step 10. Late-move reductions.
                let mut r = 0;
                if depth >= 3 && moves_searched >= 2 + usize::from(NT::PV) && !tactical {
                    r = self.lmr[depth.min(63) as usize][moves_searched.min(63)];
                    r += i32::from(!NT::PV) + i32::from(cut_node);
                    r -= i32::from(improving)
                        + i32::from(is_killer)
                        + i32::from(gives_check)
                        + i32::from(in_check);
                    let h = self.history[piece.to_usize()][m.to().to_usize()];
                    r -= h / (HISTORY_MAX / 2);
                    r = r.clamp(0, (new_depth - 1).max(0));
                }
                let mut s = -self.alpha_beta::<NonPv>(
                    pos,
                    new_depth - r,
                    -alpha - 1,
                    -alpha,
                    ply + 1,
                    true,
                );
                if s > alpha && r > 0 {
                    s = -self.alpha_beta::<NonPv>(
                        pos,
                        new_depth,
                        -alpha - 1,
                        -alpha,
                        ply + 1,
                        !cut_node,
                    );
                }
                if NT::PV && s > alpha && s < beta {
                    s = -self.alpha_beta::<Pv>(pos, new_depth, -beta, -alpha, ply + 1, false);
                }
                s
            };
            pos.undo_move(m);
            if self.stopped {
                return 0;
            }
            moves_searched += 1;

            if score > best_score {
                best_score = score;
                if score > alpha {
                    best_move = Some(m);
                    if NT::PV {
                        self.update_pv(ply, m);
                    }
                    if score >= beta {
                        // Step 11. A cutoff: remember quiet moves that cause
                        // them, and lower those tried before.
                        if !tactical {
                            let bonus = (depth * depth * 16).min(HISTORY_MAX / 4);
                            self.update_history(pos, m, bonus);
                            for &q in quiets_tried.iter() {
                                self.update_history(pos, q, -bonus);
                            }
                            if self.killers[ply][0] != Some(m) {
                                self.killers[ply][1] = self.killers[ply][0];
                                self.killers[ply][0] = Some(m);
                            }
                            if ply > 0
                                && let Some((p, to)) = self.stack[ply - 1].moved
                            {
                                self.counters[p.to_usize()][usize::from(to)] = Some(m);
                            }
                        }
                        break;
                    }
                    alpha = score;
                }
            }
            if !tactical && quiets_tried.len() < 64 {
                quiets_tried.push(m);
            }
        }

        // Step 12. Mate or stalemate.
        if moves_seen == 0 {
            return if in_check { -MATE + ply as i32 } else { 0 };
        }

        let bound = if best_score >= beta {
            Bound::Lower
        } else if NT::PV && best_score > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.tt.store(key, best_move, score_to_tt(best_score, ply), eval, depth, bound);
        best_score
    }

    /// Captures (and evasions) until the position is quiet; at the first
    /// quiescence ply also quiet checks, so that a mate threat just beyond
    /// the horizon (after a null move, say) is seen.
    fn quiescence<NT: NodeType>(
        &mut self,
        pos: &mut Position,
        mut alpha: i32,
        beta: i32,
        ply: usize,
        qdepth: i32,
    ) -> i32 {
        self.nodes += 1;
        // At every node, not only PV nodes: a zero-window child whose score
        // lands exactly on a bound lowered by mate-distance pruning can reach
        // the parent's `update_pv`, which must not copy a stale line.
        self.pv_len[ply] = ply;
        if self.check_stop() {
            return 0;
        }
        self.seldepth = self.seldepth.max(ply);
        if self.is_draw(pos, ply) {
            return 0;
        }
        let in_check = pos.in_check();
        if ply >= MAX_PLY - 1 {
            return if in_check { 0 } else { self.evaluate(pos) };
        }
        let key = pos.key();
        let hit = self.tt.probe(key);
        if !NT::PV
            && let Some(h) = hit
        {
            let s = score_from_tt(h.score, ply);
            let usable = match h.bound {
                Bound::Exact => true,
                Bound::Lower => s >= beta,
                Bound::Upper => s <= alpha,
                Bound::None => false,
            };
            if usable {
                return s;
            }
        }
        let eval;
        let best_score;
        if in_check {
            eval = -INFINITE;
            best_score = -INFINITE;
        } else {
            eval = match hit {
                Some(h) => h.eval,
                None => self.evaluate(pos),
            };
            if eval >= beta {
                return eval;
            }
            alpha = alpha.max(eval);
            best_score = eval;
        }
        let original_alpha = alpha;
        let mut best = QsBest { alpha, score: best_score, mv: None };
        let mut picker = MovePicker::quiescence(pos, hit.and_then(|h| h.mv));
        let tt_move = picker.tt_move();
        let mut moves_seen = 0;
        while let Some(m) = picker.next(pos, &self.history) {
            moves_seen += 1;
            // Delta pruning: even winning the piece would not reach alpha.
            if !in_check && m.promotion_role().is_none() {
                let victim = if m.is_en_passant() {
                    Role::Pawn
                } else {
                    pos.piece_on(m.to()).map_or(Role::Pawn, |p| p.role())
                };
                if eval + self.params.piece_value(victim) + self.params.qs_delta <= best.alpha {
                    continue;
                }
            }
            if !self.quiescence_move::<NT>(pos, m, ply, qdepth, beta, &mut best) {
                break;
            }
        }
        if self.stopped {
            return 0;
        }
        if in_check && moves_seen == 0 {
            return -MATE + ply as i32;
        }
        if qdepth == 0 && !in_check && best.score < beta {
            let mut quiets = MoveList::new();
            pos.generate_quiets(&mut quiets);
            for &m in quiets.iter() {
                // The hash move (an under-promotion can be one) was searched
                // with the captures.
                if Some(m) == tt_move || !pos.gives_check(m) || !pos.see_ge(m, 0) {
                    continue;
                }
                if !self.quiescence_move::<NT>(pos, m, ply, qdepth, beta, &mut best) {
                    break;
                }
            }
            if self.stopped {
                return 0;
            }
        }
        let QsBest { score: best_score, mv: best_move, .. } = best;
        let bound = if best_score >= beta {
            Bound::Lower
        } else if NT::PV && best_score > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.tt.store(key, best_move, score_to_tt(best_score, ply), eval.max(-32_000), 0, bound);
        best_score
    }

    /// Searches one quiescence move and folds its score into the node's
    /// best score, best move, PV and alpha. Returns `false` when the node
    /// is done: a beta cutoff, or the search was stopped.
    #[inline(always)]
    fn quiescence_move<NT: NodeType>(
        &mut self,
        pos: &mut Position,
        m: Move,
        ply: usize,
        qdepth: i32,
        beta: i32,
        best: &mut QsBest,
    ) -> bool {
        self.tt.prefetch(pos.key_after(m));
        pos.do_move(m);
        let score = -self.quiescence::<NT>(pos, -beta, -best.alpha, ply + 1, qdepth - 1);
        pos.undo_move(m);
        if self.stopped {
            return false;
        }
        if score > best.score {
            best.score = score;
            if score > best.alpha {
                best.mv = Some(m);
                if NT::PV {
                    self.update_pv(ply, m);
                }
                if score >= beta {
                    return false;
                }
                best.alpha = score;
            }
        }
        true
    }
}

/// The running result of a quiescence node.
struct QsBest {
    alpha: i32,
    score: i32,
    mv: Option<Move>,
}

/// A mate score as stored: relative to the node, not the root.
fn score_to_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND {
        score + ply as i32
    } else if score <= -MATE_BOUND {
        score - ply as i32
    } else {
        score
    }
}

fn score_from_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND {
        score - ply as i32
    } else if score <= -MATE_BOUND {
        score + ply as i32
    } else {
        score
    }
}
