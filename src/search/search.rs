//! The search, after Stockfish 15.1's: iterative deepening with aspiration
//! windows, principal variation search, a transposition table that keeps
//! whether a node is or was on the principal variation, quiescence, and
//! Stockfish's pruning, reductions and extensions, each step numbered as in
//! Stockfish's `search()`: razoring, futility of the node (reverse
//! futility), null move with verification, ProbCut, internal iterative
//! reductions, move-count, futility, history and exchange
//! pruning of moves by their reduced depth, singular, double and negative
//! extensions with multi-cut, late-move reductions driven by the histories
//! (butterfly, continuation and capture: [`history`](super::history)), and
//! a quiescence search that prunes by futility and move count.
//!
//! Stockfish's margins are in its internal units; an evaluation on another
//! scale (the hand-written one, kibitz's own net) has them converted
//! ([`Params`]). Techniques can be switched off for measurements with the
//! environment variable `KIBITZ_SEARCH_OFF` (docs/TUNING.md).
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
        mv::{MAX_MOVES, Move},
        position::Position,
        types::{Color, Piece, Role, Square},
    },
    nnue::Net,
    search::{
        correction::{CORRECTION_MAX, CorrectionKeys, CorrectionMoves, Corrections, move_table},
        evaluator::{Evaluator, Params},
        history::{Histories, LOW_PLY, NO_CONTINUATION, continuation_index},
        movepick::{Continuations, MovePicker, captured_kind, generation_key},
        tt::{Bound, DEPTH_NONE, TableError, TranspositionTable, VALUE_NONE},
    },
    syzygy::{Tablebases, TbWdl},
};

pub use crate::score::{INFINITE, MATE, MATE_BOUND, MAX_PLY, WIN_BOUND, mate_in, mated_in};

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
    /// Positions found in the endgame tables so far.
    pub tb_hits: u64,
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
    /// Positions found in the endgame tables (the root's moves, when the
    /// root is in them).
    pub tb_hits: u64,
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

/// Frames before the root the search reads (a node reads its ancestors up
/// to six plies back), and after the deepest node (it clears its
/// grandchildren's killers).
const FRAMES_BEFORE: usize = 7;
const FRAMES: usize = FRAMES_BEFORE + MAX_PLY + 3;

/// What the search keeps of each ply on its way down (Stockfish's
/// `Search::Stack`).
#[derive(Clone, Copy)]
struct Frame {
    /// The static evaluation. In check a main-search node has none of its
    /// own and keeps the one two plies above it (for its children's
    /// `improving`); quiescence keeps [`VALUE_NONE`] there, as does a node
    /// with nothing known above it.
    static_eval: i32,
    /// The move made from this ply (`Move::NULL` for a null move), if any.
    current: Option<Move>,
    /// Its continuation table ([`NO_CONTINUATION`] for none or a null
    /// move).
    cont: usize,
    /// The piece that stands on the move's destination after it, and the
    /// destination (the previous move, as the child sees it).
    moved: Option<(Piece, Square)>,
    move_count: i32,
    in_check: bool,
    /// On the principal variation now or in an earlier search of the node.
    tt_pv: bool,
    tt_hit: bool,
    /// The move a singular-extension search leaves out.
    excluded: Option<Move>,
    killers: [Option<Move>; 2],
    stat_score: i32,
    cutoff_count: i32,
    /// The plies a late-move reduction took off the child searched from
    /// this ply (0 otherwise); the child reads it and sets it back.
    reduction: i32,
}

impl Default for Frame {
    fn default() -> Frame {
        Frame {
            static_eval: VALUE_NONE,
            current: None,
            cont: NO_CONTINUATION,
            moved: None,
            move_count: 0,
            in_check: false,
            tt_pv: false,
            tt_hit: false,
            excluded: None,
            killers: [None; 2],
            stat_score: 0,
            cutoff_count: 0,
            reduction: 0,
        }
    }
}

impl Frame {
    /// The move made from this ply, when it is a real one (not a null
    /// move, not before the root).
    #[inline]
    fn real_move(&self) -> Option<Move> {
        self.current.filter(|m| *m != Move::NULL)
    }
}

/// Techniques the search can leave out, for measuring what each is worth:
/// the names `KIBITZ_SEARCH_OFF` takes (comma-separated).
pub const SWITCHES: [&str; 21] = [
    "razoring",
    "reverse-futility",
    "null-move",
    "probcut",
    "iir",
    "move-count",
    "futility",
    "see",
    "continuation-pruning",
    "singular",
    "lmr-history",
    "tt-pv",
    "qs-futility",
    "eval-bonus",
    "deeper-search",
    "optimism",
    "hindsight",
    "correction",
    "correction-futility",
    "correction-singular",
    "correction-reduction",
];

/// The techniques switched off (bits in [`SWITCHES`]' order).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Switches(u32);

impl Switches {
    /// Every technique on.
    pub const ALL: Switches = Switches(0);

    /// The techniques `KIBITZ_SEARCH_OFF` switches off (unknown names are
    /// ignored).
    pub fn from_env() -> Switches {
        let off = std::env::var("KIBITZ_SEARCH_OFF").unwrap_or_default();
        let mut bits = 0;
        for name in off.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if let Some(i) = SWITCHES.iter().position(|s| *s == name) {
                bits |= 1 << i;
            }
        }
        Switches(bits)
    }

    #[inline(always)]
    fn on(self, name_index: usize) -> bool {
        self.0 & (1 << name_index) == 0
    }
}

const RAZORING: usize = 0;
const REVERSE_FUTILITY: usize = 1;
const NULL_MOVE: usize = 2;
const PROBCUT: usize = 3;
const IIR: usize = 4;
const MOVE_COUNT: usize = 5;
const FUTILITY: usize = 6;
const SEE_PRUNING: usize = 7;
const CONTINUATION_PRUNING: usize = 8;
const SINGULAR: usize = 9;
const LMR_HISTORY: usize = 10;
const TT_PV: usize = 11;
const QS_FUTILITY: usize = 12;
const EVAL_BONUS: usize = 13;
const DEEPER_SEARCH: usize = 14;
const OPTIMISM: usize = 15;
const HINDSIGHT: usize = 16;
const CORRECTION: usize = 17;
const CORRECTION_FUTILITY: usize = 18;
const CORRECTION_SINGULAR: usize = 19;
const CORRECTION_REDUCTION: usize = 20;

/// Piece values of the futility margins (Stockfish 15.1's endgame values,
/// in its internal units); the king's slot is "nothing captured".
const PIECE_VALUE_EG: [i32; 6] = [208, 854, 915, 1380, 2682, 0];

/// Piece values of a capture's history score (Stockfish's single table,
/// in its internal units); the king's slot is "nothing captured".
const PIECE_VALUE: [i32; 6] = [208, 781, 825, 1276, 2538, 0];

/// Divisors of a quiet move's histories into plies of its reduced depth
/// at step 14, by depth 1 to 16 (Stockfish's `lmrDivisor`).
const LMR_DIVISOR: [i32; 16] = [
    3637, 2787, 2761, 2939, 3171, 3347, 3147, 2762, 2772, 3106, 3107, 3060, 3112, 2991, 3090, 3542,
];

/// The moves of a node the statistics at its end lower: the first this
/// many searched (Stockfish's `SEARCHEDLIST_CAPACITY`).
const SEARCHED: usize = 32;

/// A single-threaded searcher.
pub struct Searcher {
    /// The transposition table.
    pub tt: TranspositionTable,
    eval: Evaluator,
    params: Params,
    switches: Switches,
    hist: Box<Histories>,
    /// The correction histories of the static evaluation.
    corr: Box<Corrections>,
    /// No search has written the histories (the correction histories
    /// included) since they were last cleared: a new game need not clear
    /// them again (19 MB, about a millisecond, which a run that searches
    /// few of its games would spend on each).
    hist_clear: bool,
    frames: Box<[Frame; FRAMES]>,
    pv: Box<[[Option<Move>; MAX_PLY + 1]; MAX_PLY + 1]>,
    pv_len: [usize; MAX_PLY + 1],
    /// Stockfish's `Reductions`: 20.26 ln(i).
    reductions: [i32; MAX_MOVES],
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
    /// The root's best move so far: the hash move of the root.
    root_best: Option<Move>,
    /// The iteration's depth.
    root_depth: i32,
    /// The root window's width (reductions shrink as a node's window
    /// narrows relative to it).
    root_delta: i32,
    /// Null-move pruning is off for `nmp_color` below this ply, during a
    /// null move's verification search.
    nmp_min_ply: usize,
    nmp_color: Color,
    /// Each side's optimism in Stockfish's units: the side to move at the
    /// root leans towards its root score (Stockfish's `optimism`, from the
    /// fourth iteration on).
    optimism: [i32; 2],
    /// The last completed search's root: its result is exact for the root
    /// move that leads to it in the next search (a game's positions
    /// labelled last to first).
    last_root: Option<KnownLine>,
    /// The line known exactly in the current search (the last search's
    /// root, taken at its start).
    known: Option<KnownLine>,
    /// Endgame tables, when given.
    tablebases: Option<Arc<Tablebases>>,
    /// The most pieces of a position probed in the tree (0: no probes,
    /// as when the root itself is in the tables and its moves are ranked).
    tb_cardinality: u32,
    /// Positions found in the tables during the search.
    tb_hits: u64,
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

/// Moves searched before quiet moves are pruned by their count.
#[inline]
fn futility_move_count(improving: bool, depth: i32) -> i32 {
    let base = 3 + depth * depth;
    if improving { base } else { base / 2 }
}

/// The moves searched at a node, kept for the statistics at its end.
struct Searched {
    quiets: [Move; SEARCHED],
    quiet_count: usize,
    captures: [Move; SEARCHED],
    capture_count: usize,
}

impl Searched {
    fn new() -> Searched {
        Searched {
            quiets: [Move::NULL; SEARCHED],
            quiet_count: 0,
            captures: [Move::NULL; SEARCHED],
            capture_count: 0,
        }
    }

    fn quiets(&self) -> &[Move] {
        &self.quiets[..self.quiet_count]
    }

    fn captures(&self) -> &[Move] {
        &self.captures[..self.capture_count]
    }
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
        let mut reductions = [0i32; MAX_MOVES];
        for (i, r) in reductions.iter_mut().enumerate().skip(1) {
            *r = (2872.0 / 128.0 * (i as f64).ln()) as i32;
        }
        // A margin scale other than the evaluation's (`KIBITZ_SEARCH_SCALE`,
        // units per thousand of Stockfish's), for fitting it.
        let params = std::env::var("KIBITZ_SEARCH_SCALE")
            .ok()
            .and_then(|v| v.parse::<i32>().ok())
            .filter(|&v| v > 0)
            .map_or(params, |scale| Params { scale });
        Ok(Searcher {
            tt,
            params,
            eval,
            switches: Switches::from_env(),
            hist: Box::new(Histories::new()),
            corr: Box::new(Corrections::new()),
            hist_clear: true,
            frames: Box::new([Frame::default(); FRAMES]),
            pv: Box::new([[None; MAX_PLY + 1]; MAX_PLY + 1]),
            pv_len: [0; MAX_PLY + 1],
            reductions,
            nodes: 0,
            seldepth: 0,
            limits: Limits::default(),
            stopped: false,
            has_move: false,
            stop: Arc::new(AtomicBool::new(false)),
            excluded: Vec::new(),
            root_best: None,
            root_depth: 0,
            root_delta: 1,
            nmp_min_ply: 0,
            nmp_color: Color::White,
            optimism: [0; 2],
            last_root: None,
            known: None,
            tablebases: None,
            tb_cardinality: 0,
            tb_hits: 0,
        })
    }

    /// Endgame tables to probe: in the tree (Stockfish's way: a position
    /// with no more pieces than the tables cover, reached by a capture or
    /// a pawn move, with no castling right), and at the root, whose moves
    /// are then ranked by the tables so a won ending is converted and a
    /// drawn one kept.
    pub fn set_tablebases(&mut self, tablebases: Option<Arc<Tablebases>>) {
        self.tablebases = tablebases;
    }

    /// The endgame tables probed, if any.
    pub fn tablebases(&self) -> Option<&Arc<Tablebases>> {
        self.tablebases.as_ref()
    }

    /// The techniques switched off (`KIBITZ_SEARCH_OFF`, read by `Switches::from_env`).
    pub fn set_switches(&mut self, switches: Switches) {
        self.switches = switches;
    }

    /// The flag another thread sets to stop the search. A search does not
    /// clear it (so a stop sent just before the search starts is not lost):
    /// clear it before starting one. The first iteration always completes.
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    /// Forgets everything learned (table, histories, evaluation caches):
    /// the state of a new searcher, so the next search is reproducible.
    pub fn new_game(&mut self) {
        self.tt.clear();
        self.eval.clear();
        if !self.hist_clear {
            self.hist.clear();
            self.corr.clear();
            self.hist_clear = true;
        }
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

    /// A search score at `root` as labels give it: centipawns (mates
    /// unchanged).
    pub fn to_centipawns(&self, score: i32, root: &Position) -> i32 {
        self.eval.to_centipawns(score, root)
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
        self.nmp_min_ply = 0;
        self.optimism = [0; 2];
        // The stop flag is not cleared here: a stop sent before this thread
        // got this far must still stop it. The caller clears it before
        // starting a search.
        self.tt.new_search();
        self.hist_clear = false;
        *self.frames = [Frame::default(); FRAMES];
        // Only a plain search (no root move left out) leaves its root for
        // the next, or takes the last one's.
        let plain = self.excluded.is_empty();
        self.known = if plain { self.last_root.take() } else { None };
        if plain {
            self.hist.start_search();
        }

        let root_moves = pos.legal_moves();
        let mut result = SearchResult::default();
        if root_moves.is_empty() {
            result.score = if pos.in_check() { -MATE } else { 0 };
            return result;
        }
        // A root in the tables: only the moves that keep its result best
        // (by the 50-move counter, a win's by how soon it zeroes the
        // counter) are searched, and the tree is not probed (Stockfish's
        // root ranking with its DTZ ranking on).
        self.tb_hits = 0;
        self.tb_cardinality = self.tablebases.as_ref().map_or(0, |tb| tb.max_pieces());
        let excluded_before = self.excluded.len();
        let root_tb = match &self.tablebases {
            Some(tb) if self.excluded.is_empty() => tb.rank_root_moves(pos),
            _ => None,
        };
        if let Some((keep, _)) = &root_tb {
            self.tb_hits = root_moves.len() as u64;
            self.tb_cardinality = 0;
            self.excluded.extend(root_moves.iter().copied().filter(|m| !keep.contains(m)));
        }
        // The first move of Stockfish's generation order is the root's hash
        // move until an iteration finds a best one.
        self.root_best = root_moves
            .iter()
            .copied()
            .filter(|m| !self.excluded.contains(m))
            .min_by_key(|&m| generation_key(pos, m));
        let max_depth = limits.depth.unwrap_or(MAX_PLY as i32 - 1).clamp(1, MAX_PLY as i32 - 1);
        let p = self.params;
        let mut score = 0;
        let mut average = -INFINITE;
        for depth in 1..=max_depth {
            self.root_depth = depth;
            // Step 1 of the iteration: an aspiration window around the
            // average of the last iterations' scores, wider as they stray
            // from zero.
            let (mut alpha, mut beta, mut delta) = (-INFINITE, INFINITE, p.v(10));
            if depth >= 4 {
                let prev = p.to_sf(average);
                delta = p.v(10 + prev * prev / 15620).max(1);
                alpha = (average - delta).max(-INFINITE);
                beta = (average + delta).min(INFINITE);
                if self.switches.on(OPTIMISM) {
                    let us = pos.side_to_move() as usize;
                    let opt = 118 * prev / (prev.abs() + 169);
                    self.optimism[us] = opt;
                    self.optimism[1 - us] = -opt;
                }
            }
            let mut failed_high = 0;
            let s = loop {
                // After a fail high, a shallower search finds the better
                // score sooner.
                let adjusted = (depth - failed_high).max(1);
                let s = self.alpha_beta::<Root>(pos, adjusted, alpha, beta, 0, false);
                if self.stopped {
                    break s;
                }
                if s <= alpha {
                    beta = (alpha + beta) / 2;
                    alpha = (s - delta).max(-INFINITE);
                    failed_high = 0;
                } else if s >= beta {
                    beta = (s + delta).min(INFINITE);
                    failed_high += 1;
                } else {
                    break s;
                }
                delta += delta / 4 + p.v(2).max(1);
            };
            if self.stopped && result.best.is_some() {
                break;
            }
            let pv: Vec<Move> = self.pv[0][..self.pv_len[0]].iter().flatten().copied().collect();
            let Some(&best) = pv.first() else { break };
            score = s;
            average = if average == -INFINITE { s } else { (2 * s + average) / 3 };
            self.root_best = Some(best);
            self.has_move = true;
            // The tables' result stands for a root in the tables' score,
            // unless the search found a mate (exact, and a distance besides).
            let shown = match &root_tb {
                Some((_, wdl)) if s.abs() < MATE_BOUND => wdl.score(0),
                _ => self.eval.to_centipawns(score, pos),
            };
            result = SearchResult {
                best: Some(best),
                score: shown,
                depth,
                pv: pv.clone(),
                nodes: self.nodes,
                seldepth: self.seldepth,
                tb_hits: self.tb_hits,
            };
            on_info(&Info {
                depth,
                seldepth: self.seldepth,
                score: shown,
                nodes: self.nodes,
                elapsed: start.elapsed(),
                pv,
                hashfull: self.tt.hashfull(),
                tb_hits: self.tb_hits,
            });
            if self.stopped || limits.soft_deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
        }
        result.nodes = self.nodes;
        result.tb_hits = self.tb_hits;
        self.excluded.truncate(excluded_before);
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
        let child = if k.score >= WIN_BOUND {
            k.score - 1
        } else if k.score <= -WIN_BOUND {
            k.score + 1
        } else {
            k.score
        };
        let len = k.pv.len().min(MAX_PLY - 1);
        for (i, &m) in k.pv[..len].iter().enumerate() {
            self.pv[1][1 + i] = Some(m);
        }
        self.pv_len[1] = 1 + len;
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

    /// Whether `m` walks a piece back and forth: a quiet move deep in the
    /// tree, long after the last capture or pawn move, by the piece our
    /// previous move brought to its square, which our move before that had
    /// brought to where it came from. Such a hash move is not extended
    /// (Stockfish's `is_shuffling`): the line only marks time.
    fn is_shuffling(&self, pos: &Position, at: usize, ply: usize, m: Move, capture: bool) -> bool {
        if capture || m.promotion_role() == Some(Role::Queen) || pos.rule50() < 10 {
            return false;
        }
        if pos.plies_from_null() < 6 || ply < 20 {
            return false;
        }
        match (self.frames[at - 2].current, self.frames[at - 4].current) {
            (Some(ours), Some(before)) => m.from() == ours.to() && ours.from() == before.to(),
            _ => false,
        }
    }

    /// The reduction of the `moves`-th move at `depth` in 1024ths of a
    /// ply (Stockfish's `reduction`): larger for later moves and deeper
    /// nodes, and when not improving; smaller as the node's window is wide
    /// against the root's.
    #[inline]
    fn reduction(&self, improving: bool, depth: i32, moves: i32, delta: i32) -> i32 {
        let scale = self.reductions[depth.clamp(0, MAX_MOVES as i32 - 1) as usize]
            * self.reductions[moves.clamp(0, MAX_MOVES as i32 - 1) as usize];
        scale - delta * 577 / self.root_delta.max(1)
            + i32::from(!improving) * scale * 197 / 512
            + 982
    }

    /// Adds `bonus` to the continuation histories of the move (`piece` to
    /// `to`) made at frame `at`, after each of the six moves before it
    /// (only the first two when in check), as Stockfish weighs them: the
    /// nearer move counts most, the bonus grows as more of the entries
    /// already agree that the move is good, and the table of the move just
    /// before gets a small constant on top.
    fn update_continuations(&mut self, at: usize, piece: Piece, to: Square, bonus: i32) {
        const WEIGHTS: [i32; 6] = [1040, 780, 290, 502, 132, 418];
        const AGREEMENT: [i32; 7] = [94, 103, 110, 106, 119, 126, 121];
        let in_check = self.frames[at].in_check;
        let mut positive = 0;
        for (i, weight) in (1..=6).zip(WEIGHTS) {
            if in_check && i > 2 {
                break;
            }
            if self.frames[at - i].real_move().is_some() {
                let table = self.frames[at - i].cont;
                if self.hist.continuation(table, piece, to) > 0 {
                    positive += 1;
                }
                let b = bonus * weight * AGREEMENT[positive] / 131_072 + 73 * i32::from(i == 1);
                self.hist.update_continuation(table, piece, to, b);
            }
        }
    }

    /// Adds `bonus` to every history of the quiet move `m` at frame `at`
    /// (Stockfish's `update_quiet_histories`): butterfly, low-ply near the
    /// root, continuation and pawn, each at its own scale.
    fn update_quiet_histories(&mut self, pos: &Position, at: usize, m: Move, bonus: i32) {
        let us = pos.side_to_move();
        self.hist.update_main(us, m, bonus);
        let ply = at - FRAMES_BEFORE;
        if ply < LOW_PLY {
            self.hist.update_low_ply(ply, m, bonus * 712 / 1024);
        }
        if let Some(piece) = pos.moved_piece(m) {
            self.update_continuations(at, piece, m.to(), bonus * 750 / 1024);
            let pawn_bonus = bonus * if bonus > -4 { 1104 } else { 459 } / 1024;
            self.hist.update_pawn(pos.pawn_key(), piece, m.to(), pawn_bonus);
        }
    }

    /// A quiet move that caused a cutoff: a killer, and its histories and
    /// the counter move of the previous move raised.
    fn update_quiet_stats(&mut self, pos: &Position, at: usize, m: Move, bonus: i32) {
        let f = &mut self.frames[at];
        if f.killers[0] != Some(m) {
            f.killers[1] = f.killers[0];
            f.killers[0] = Some(m);
        }
        self.update_quiet_histories(pos, at, m, bonus);
        if let Some((p, sq)) = self.frames[at - 1].moved {
            self.hist.counters[p.to_usize()][sq.to_usize()] = Some(m);
        }
    }

    /// The statistics at the end of a node that found a best move
    /// (Stockfish's `update_all_stats`): it is raised, the more so at
    /// depth, as the hash move, after a poorly rated previous move, and
    /// off the principal variation after many moves; the other moves
    /// searched are lowered, later quiet moves less than earlier ones.
    #[allow(clippy::too_many_arguments)]
    fn update_all_stats(
        &mut self,
        pos: &Position,
        at: usize,
        best: Move,
        tt_move: Option<Move>,
        searched: &Searched,
        depth: i32,
        pv: bool,
    ) {
        let mut bonus = (133 * depth - 81).min(1487)
            + 364 * i32::from(Some(best) == tt_move)
            + self.frames[at - 1].stat_score / 28;
        let malus = (968 * depth - 235).min(2244);
        if !pv {
            bonus += bonus * (searched.quiet_count + searched.capture_count) as i32 / 256;
        }
        if !pos.is_capture(best) {
            self.update_quiet_stats(pos, at, best, bonus * 899 / 1024);
            let mut malus = malus * 1159 / 1024;
            for &q in searched.quiets() {
                malus = malus * 921 / 1024;
                self.update_quiet_histories(pos, at, q, -malus);
            }
        } else if let Some(piece) = pos.moved_piece(best) {
            let kind = captured_kind(pos, best);
            self.hist.update_capture(piece, best.to(), kind, bonus * 1427 / 1024);
        }
        // An early quiet move of the previous ply that this refutes.
        let prev = self.frames[at - 1];
        if prev.move_count == 1 + i32::from(prev.tt_hit)
            && pos.captured_piece().is_none()
            && let Some((p, sq)) = prev.moved
        {
            self.update_continuations(at - 1, p, sq, -malus * 713 / 1024);
        }
        for &c in searched.captures() {
            if let Some(piece) = pos.moved_piece(c) {
                let kind = captured_kind(pos, c);
                self.hist.update_capture(piece, c.to(), kind, -malus * 1489 / 1024);
            }
        }
    }

    /// The continuation tables of the node at frame `at`.
    #[inline]
    fn continuations(&self, at: usize) -> Continuations {
        let f = &self.frames;
        Continuations([
            f[at - 1].cont,
            f[at - 2].cont,
            f[at - 3].cont,
            f[at - 4].cont,
            f[at - 5].cont,
            f[at - 6].cont,
        ])
    }

    /// What the correction histories of the node at frame `at` are found
    /// by, and their correction of its static evaluation (0 when switched
    /// off), in Stockfish's units times 131,072.
    #[inline]
    fn correction(&self, pos: &Position, at: usize) -> (CorrectionKeys, CorrectionMoves, i32) {
        let keys = CorrectionKeys::of(pos);
        let moves = CorrectionMoves {
            previous: self.frames[at - 1].moved,
            tables: [move_table(self.frames[at - 2].moved), move_table(self.frames[at - 4].moved)],
        };
        let cv = if self.switches.on(CORRECTION) {
            self.corr.value(&keys, pos.side_to_move(), &moves)
        } else {
            0
        };
        (keys, moves, cv)
    }

    /// `raw`, a static evaluation, corrected by `cv` (Stockfish's
    /// `to_corrected_static_eval`), short of the decisive scores.
    #[inline]
    fn corrected(&self, raw: i32, cv: i32) -> i32 {
        (raw + self.params.v(cv / 131_072)).clamp(-WIN_BOUND + 1, WIN_BOUND - 1)
    }

    /// The static evaluation of a node and its complexity, with the side
    /// to move's optimism.
    #[inline]
    fn evaluate_node(&mut self, pos: &Position) -> (i32, i32) {
        let optimism = self.optimism[pos.side_to_move() as usize];
        self.eval.evaluate_in_search(pos, optimism)
    }

    /// How far the static evaluation strays from the material and
    /// piece-square values (Stockfish's "complexity" of a position), in
    /// the evaluation's units.
    #[inline]
    fn complexity(&self, pos: &Position, static_eval: i32) -> i32 {
        let psq = pos.psq().eg;
        let psq = if pos.side_to_move() == Color::White { psq } else { -psq };
        // The piece-square values are centipawns of material; in the
        // evaluation's units a pawn is 208 of Stockfish's.
        (static_eval - self.params.v(psq * 208 / 100)).abs()
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
            return if NT::PV {
                self.quiescence::<Pv>(pos, alpha, beta, ply, 0)
            } else {
                self.quiescence::<NonPv>(pos, alpha, beta, ply, 0)
            };
        }
        // Extensions have no ply limit: the depth is kept within the
        // tables' range (Stockfish's clamp).
        depth = depth.min(MAX_PLY as i32 - 1);
        self.pv_len[ply] = ply;
        if self.check_stop() {
            return 0;
        }
        self.seldepth = self.seldepth.max(ply);
        let p = self.params;
        let on = self.switches;
        let max_next_depth = if NT::ROOT { depth } else { depth + 1 };
        let at = ply + FRAMES_BEFORE;

        // Step 1. Initialize the node.
        let in_check = pos.in_check();
        let prior_capture = pos.captured_piece().is_some();
        let us = pos.side_to_move();
        self.frames[at].in_check = in_check;
        self.frames[at].move_count = 0;
        let mut best_value = -INFINITE;
        let max_value = INFINITE;

        if !NT::ROOT {
            // Step 2. Draws and the ply limit.
            if self.is_draw(pos, ply) {
                return 0;
            }
            if ply >= MAX_PLY - 1 {
                return if in_check { 0 } else { self.evaluate_node(pos).0 };
            }
            // Step 3. Mate distance pruning.
            alpha = alpha.max(-MATE + ply as i32);
            beta = beta.min(MATE - ply as i32 - 1);
            if alpha >= beta {
                return alpha;
            }
        } else {
            self.root_delta = beta - alpha;
        }
        self.frames[at + 1].tt_pv = false;
        self.frames[at + 1].excluded = None;
        self.frames[at + 2].killers = [None; 2];
        self.frames[at + 2].cutoff_count = 0;
        let prev = self.frames[at - 1].moved;
        if !NT::ROOT {
            self.frames[at + 2].stat_score = 0;
        }
        let prior_reduction = self.frames[at - 1].reduction;
        self.frames[at - 1].reduction = 0;

        // Step 4. The transposition table. A search that leaves a move out
        // stores under its own key.
        let excluded = self.frames[at].excluded;
        let key = match excluded {
            None => pos.key(),
            Some(m) => pos.key() ^ (u64::from(m.to_u16()).wrapping_mul(0x9e37_79b9_7f4a_7c15)),
        };
        let hit = self.tt.probe(key);
        self.frames[at].tt_hit = hit.is_some();
        let tt_value = match hit {
            Some(h) if h.bound != Bound::None => score_from_tt(h.score, ply, pos.rule50()),
            _ => VALUE_NONE,
        };
        let tt_move = if NT::ROOT {
            hit.and_then(|h| h.mv)
                .filter(|m| !self.excluded.contains(m) && pos.is_legal(*m))
                .or(self.root_best)
        } else {
            hit.and_then(|h| h.mv).filter(|&m| pos.is_legal(m))
        };
        let tt_capture = tt_move.is_some_and(|m| pos.is_capture(m));
        if excluded.is_none() {
            self.frames[at].tt_pv = NT::PV || (on.on(TT_PV) && hit.is_some_and(|h| h.pv));
        }
        let tt_pv = self.frames[at].tt_pv;
        if !NT::PV
            && let Some(h) = hit
            && h.depth > depth - i32::from(h.bound == Bound::Exact)
            && tt_value != VALUE_NONE
            && h.bound.cuts(tt_value, beta)
        {
            if let Some(m) = tt_move
                && tt_value >= beta
            {
                if !tt_capture {
                    self.update_quiet_stats(pos, at, m, (112 * depth).min(695));
                }
                // An early quiet move of the previous ply that this refutes.
                if self.frames[at - 1].move_count < 5
                    && !prior_capture
                    && let Some((pc, sq)) = prev
                {
                    self.update_continuations(at - 1, pc, sq, -2210);
                }
            }
            // Near the 50-move rule the table's result may not hold.
            if pos.rule50() < 90 {
                return tt_value;
            }
        }

        // Step 5. The endgame tables: a position just reached by a capture
        // or a pawn move, within them, is won, drawn or lost outright; a
        // win bounds the node from below, a loss from above.
        let mut max_value = max_value;
        if !NT::ROOT
            && excluded.is_none()
            && self.tb_cardinality > 0
            && pos.rule50() == 0
            && pos.castling_rights() == 0
            && pos.occupied().count() <= self.tb_cardinality
            && let Some(wdl) = self
                .tablebases
                .as_ref()
                .filter(|tb| tb.has_wdl_table(pos))
                .and_then(|tb| tb.probe_wdl_after_zeroing(pos))
        {
            self.tb_hits += 1;
            let value = wdl.score(ply);
            let bound = match wdl {
                TbWdl::Win => Bound::Lower,
                TbWdl::Loss => Bound::Upper,
                _ => Bound::Exact,
            };
            if bound == Bound::Exact
                || (bound == Bound::Lower && value >= beta)
                || (bound == Bound::Upper && value <= alpha)
            {
                let stored = score_to_tt(value, ply);
                let tt_depth = (depth + 6).min(MAX_PLY as i32 - 1);
                self.tt.store(key, None, stored, tt_pv, bound, tt_depth, VALUE_NONE);
                return value;
            }
            if NT::PV {
                if bound == Bound::Lower {
                    best_value = value;
                    alpha = alpha.max(value);
                } else {
                    max_value = value;
                }
            }
        }

        // The correction, once the table and the endgame tables have not
        // settled the node; in check too: its size is the evaluation's
        // uncertainty.
        let (corr_keys, corr_moves, cv) = self.correction(pos, at);

        // Step 6. The static evaluation, corrected by the correction
        // histories (the table keeps it uncorrected); a table score bounds
        // it.
        let mut raw_eval = VALUE_NONE;
        let (static_eval, eval, mut improving, improvement, complexity) = if in_check {
            (VALUE_NONE, VALUE_NONE, false, 0, 0)
        } else {
            let (raw, complexity) = match hit {
                Some(h) if h.eval != VALUE_NONE => (h.eval, self.complexity(pos, h.eval)),
                Some(_) => self.evaluate_node(pos),
                None => {
                    let (s, c) = self.evaluate_node(pos);
                    if excluded.is_none() {
                        self.tt.store(key, None, VALUE_NONE, tt_pv, Bound::None, DEPTH_NONE, s);
                    }
                    (s, c)
                }
            };
            raw_eval = raw;
            let static_eval = self.corrected(raw, cv);
            let mut eval = static_eval;
            if let Some(h) = hit
                && tt_value != VALUE_NONE
                && h.bound.has(if tt_value > eval { Bound::Lower } else { Bound::Upper })
            {
                eval = tt_value;
            }
            let before = self.frames[at - 2].static_eval;
            let improvement = if before != VALUE_NONE {
                static_eval - before
            } else if self.frames[at - 4].static_eval != VALUE_NONE {
                static_eval - self.frames[at - 4].static_eval
            } else {
                p.v(168)
            };
            // Better than two plies before (Stockfish's `improving`).
            let improving = before != VALUE_NONE && static_eval > before;
            (static_eval, eval, improving, improvement, complexity)
        };
        // In check the node has no evaluation of its own; its children
        // compare theirs with the one two plies above it.
        let frame_eval = if in_check { self.frames[at - 2].static_eval } else { static_eval };
        self.frames[at].static_eval = frame_eval;
        let parent_eval = self.frames[at - 1].static_eval;
        let known_evals = frame_eval != VALUE_NONE && parent_eval != VALUE_NONE;
        // The opponent's position got worse with its last move.
        let opponent_worsening = !known_evals || frame_eval > -parent_eval;
        // Hindsight: the reduction the parent gave this node looks too
        // large when the opponent's move did not hurt it, too small when
        // both evaluations say the position is calm.
        if on.on(HINDSIGHT) {
            if prior_reduction >= 3 && !opponent_worsening {
                depth += 1;
            }
            if prior_reduction >= 2
                && depth >= 2
                && known_evals
                && frame_eval + parent_eval > p.v(166)
            {
                depth -= 1;
            }
        }

        // The static evaluation's change orders the previous quiet move.
        if on.on(EVAL_BONUS)
            && !in_check
            && !prior_capture
            && let Some(m) = self.frames[at - 1].real_move()
            && !self.frames[at - 1].in_check
            && self.frames[at - 1].static_eval != VALUE_NONE
        {
            let diff =
                (-p.to_sf(self.frames[at - 1].static_eval + static_eval)).clamp(-189, 194) + 60;
            self.hist.update_main(!us, m, diff * 11);
            // The pawn history of a piece move that kept the pawns as they
            // were (the entry it was ordered by).
            if hit.is_none()
                && let Some((pc, sq)) = prev
                && pc.role() != Role::Pawn
                && !m.is_promotion()
            {
                self.hist.update_pawn(pos.pawn_key(), pc, sq, diff * 13);
            }
        }

        if !in_check {
            // Step 7. Razoring: far below alpha, only a capture can save
            // the node; if quiescence agrees, trust it.
            if on.on(RAZORING) && eval < alpha - p.v(369) - p.v(254) * depth * depth {
                let v = self.quiescence::<NonPv>(pos, alpha - 1, alpha, ply, 0);
                if self.stopped {
                    return 0;
                }
                if v < alpha {
                    return v;
                }
            }

            // Step 8. Futility pruning of the node (reverse futility): far
            // above beta at a low depth, with no quiet hash move to try;
            // the value returned leans towards beta.
            if on.on(REVERSE_FUTILITY)
                && !tt_pv
                && depth < 19
                && eval >= beta
                && (tt_move.is_none() || tt_capture)
                && beta > -WIN_BOUND
                && eval < WIN_BOUND
            {
                let mult = (45 + 4 * depth).min(85) - 20 * i32::from(hit.is_none());
                let margin = mult * depth
                    - (2789 * i32::from(improving) + 335 * i32::from(opponent_worsening)) * mult
                        / 1024
                    + i32::from(on.on(CORRECTION_FUTILITY)) * cv.abs() / 198_435;
                if eval - p.v(margin) >= beta {
                    return (661 * beta + 363 * eval) / 1024;
                }
            }

            // Step 9. Null move with a verification search at high depths.
            if on.on(NULL_MOVE)
                && !NT::PV
                && self.frames[at - 1].current != Some(Move::NULL)
                && self.frames[at - 1].stat_score < 17_139
                && eval >= beta
                && eval >= static_eval
                && static_eval
                    >= beta - p.v(20) * depth - improvement / 13 + p.v(233) + complexity / 25
                && excluded.is_none()
                && pos.non_pawn_material(us) > 0
                && (ply >= self.nmp_min_ply || us != self.nmp_color)
            {
                let r = ((eval - beta) / p.v(168).max(1)).min(7) + depth / 3 + 4
                    - i32::from(complexity > p.v(861));
                self.frames[at].current = Some(Move::NULL);
                self.frames[at].cont = NO_CONTINUATION;
                self.frames[at].moved = None;
                pos.do_null_move();
                let null_value =
                    -self.alpha_beta::<NonPv>(pos, depth - r, -beta, -beta + 1, ply + 1, !cut_node);
                pos.undo_null_move();
                if self.stopped {
                    return 0;
                }
                if null_value >= beta {
                    // An unproven mate is not returned.
                    let null_value = if null_value >= WIN_BOUND { beta } else { null_value };
                    if self.nmp_min_ply != 0 || (beta.abs() < p.v(10_000) && depth < 14) {
                        return null_value;
                    }
                    // The verification search, with null moves off for us
                    // below this ply.
                    self.nmp_min_ply = ply + (3 * (depth - r) / 4).max(0) as usize;
                    self.nmp_color = us;
                    let v = self.alpha_beta::<NonPv>(pos, depth - r, beta - 1, beta, ply, false);
                    self.nmp_min_ply = 0;
                    if self.stopped {
                        return 0;
                    }
                    if v >= beta {
                        return null_value;
                    }
                }
            }

            // A node above beta after the null move counts as improving.
            improving |= static_eval >= beta;

            // Step 10. ProbCut: a good capture whose reduced search holds a
            // margin above beta refutes the previous move.
            let probcut_beta = beta + p.v(191) - p.v(54) * i32::from(improving);
            if on.on(PROBCUT)
                && !NT::PV
                && depth > 4
                && beta.abs() < WIN_BOUND
                && !hit.is_some_and(|h| {
                    h.depth >= depth - 3 && tt_value != VALUE_NONE && tt_value < probcut_beta
                })
            {
                let threshold = p.to_sf(probcut_beta - static_eval);
                let mut picker = MovePicker::probcut(pos, tt_move, threshold);
                let cont = self.continuations(at);
                while let Some(m) = picker.next(pos, &self.hist, &cont, false) {
                    if Some(m) == excluded {
                        continue;
                    }
                    let piece = pos.moved_piece(m).unwrap_or(Piece::WhitePawn);
                    self.frames[at].current = Some(m);
                    self.frames[at].cont = continuation_index(in_check, true, piece, m.to());
                    self.nodes += 1;
                    pos.do_move(m);
                    self.frames[at].moved = pos.piece_on(m.to()).map(|pc| (pc, m.to()));
                    let mut v = -self.quiescence::<NonPv>(
                        pos,
                        -probcut_beta,
                        -probcut_beta + 1,
                        ply + 1,
                        0,
                    );
                    if v >= probcut_beta {
                        v = -self.alpha_beta::<NonPv>(
                            pos,
                            depth - 4,
                            -probcut_beta,
                            -probcut_beta + 1,
                            ply + 1,
                            !cut_node,
                        );
                    }
                    pos.undo_move(m);
                    if self.stopped {
                        return 0;
                    }
                    if v >= probcut_beta {
                        let stored = score_to_tt(v, ply);
                        self.tt.store(
                            key,
                            Some(m),
                            stored,
                            tt_pv,
                            Bound::Lower,
                            depth - 3,
                            raw_eval,
                        );
                        return v;
                    }
                }
            }

            // Step 11. Internal iterative reductions: a principal-variation
            // node the table does not know searches shallower first.
            if on.on(IIR) && NT::PV && tt_move.is_none() {
                depth -= 3;
            }
            if depth <= 0 {
                return self.quiescence::<Pv>(pos, alpha, beta, ply, 0);
            }
            if on.on(IIR) && cut_node && depth >= 9 && tt_move.is_none() {
                depth -= 2;
            }
        }

        // Step 12. In check, a table capture far above beta cuts.
        let probcut_beta = beta + p.v(417);
        if in_check
            && !NT::PV
            && depth >= 2
            && tt_capture
            && let Some(h) = hit
            && h.bound.has(Bound::Lower)
            && h.depth >= depth - 3
            && tt_value >= probcut_beta
            && tt_value.abs() <= p.v(10_000)
            && beta.abs() <= p.v(10_000)
        {
            return probcut_beta;
        }

        // Step 13. The moves.
        let cont = self.continuations(at);
        let counter = prev.and_then(|(pc, sq)| self.hist.counters[pc.to_usize()][sq.to_usize()]);
        let killers = self.frames[at].killers;
        let mut picker = MovePicker::new(pos, tt_move, depth, ply, killers, counter);
        let mut move_count = 0i32;
        let mut move_count_pruning = false;
        let mut best_move: Option<Move> = None;
        let mut searched = Searched::new();
        let original_alpha = alpha;
        // Neither a principal-variation node nor one expected to fail high.
        let all_node = !NT::PV && !cut_node;

        while let Some(m) = picker.next(pos, &self.hist, &cont, move_count_pruning) {
            if Some(m) == excluded || (NT::ROOT && self.excluded.contains(&m)) {
                continue;
            }
            move_count += 1;
            self.frames[at].move_count = move_count;
            let capture = pos.is_capture(m);
            let piece = pos.moved_piece(m).unwrap_or(Piece::WhitePawn);
            let gives_check = pos.gives_check(m);
            let mut new_depth = depth - 1;
            let delta = beta - alpha;
            // The move's late-move reduction in 1024ths of a ply, more on a
            // position of the principal variation before the terms below.
            let mut r =
                self.reduction(improving, depth, move_count, delta) + 929 * i32::from(tt_pv);

            // Step 14. Pruning at shallow depth, by the depth the move's
            // late-move reduction would leave.
            if !NT::ROOT && pos.non_pawn_material(us) > 0 && best_value > -WIN_BOUND {
                move_count_pruning =
                    on.on(MOVE_COUNT) && move_count >= futility_move_count(improving, depth);
                let mut lmr_depth = new_depth - r / 1024;
                if capture || gives_check {
                    let kind = captured_kind(pos, m);
                    let capture_history = self.hist.capture(piece, m.to(), kind);
                    // Futility of captures.
                    if on.on(FUTILITY) && !gives_check && lmr_depth < 8 {
                        let margin = p.v(234)
                            + p.v(247) * lmr_depth
                            + p.v(PIECE_VALUE[kind as usize])
                            + p.history(134 * capture_history, 1024);
                        if static_eval + margin <= alpha {
                            continue;
                        }
                    }
                    // Exchanges that lose too much, unless the move gives
                    // up our last piece when a draw would do (stalemate).
                    let margin = 177 * depth + 34 * capture_history / 1024;
                    if on.on(SEE_PRUNING)
                        && (alpha >= 0
                            || pos.non_pawn_material(us) != PIECE_VALUE[piece.role() as usize])
                        && !pos.see_ge(m, -margin)
                    {
                        continue;
                    }
                } else {
                    let [c1, c2, ..] = cont.0;
                    let mut history = self.hist.continuation(c1, piece, m.to())
                        + self.hist.continuation(c2, piece, m.to())
                        + self.hist.pawn(pos.pawn_key(), piece, m.to());
                    // Continuation- and pawn-history pruning.
                    if on.on(CONTINUATION_PRUNING) && history < -4136 * depth {
                        continue;
                    }
                    // The histories move the reduced depth (Stockfish's
                    // divisors by depth).
                    history += 69 * self.hist.main(us, m) / 32;
                    lmr_depth += history / LMR_DIVISOR[depth.clamp(1, 16) as usize - 1];
                    // Futility of the move: the node's best value is at
                    // least the futility value.
                    let futility = static_eval
                        + p.v(119) * lmr_depth
                        + p.v(90) * i32::from(static_eval > alpha)
                        + p.v(164);
                    if on.on(FUTILITY) && !in_check && lmr_depth < 12 && futility <= alpha {
                        if best_value <= futility
                            && best_value.abs() < WIN_BOUND
                            && futility < WIN_BOUND
                        {
                            best_value = futility;
                        }
                        continue;
                    }
                    // Quiet moves that lose material.
                    let lmr_depth = lmr_depth.max(0);
                    if on.on(SEE_PRUNING) && !pos.see_ge(m, -23 * lmr_depth * lmr_depth) {
                        continue;
                    }
                }
            }

            // Step 15. Extensions: the singular extension, and the hash
            // move cut back when another move also holds.
            let mut extension = 0;
            if let Some(h) = hit
                && on.on(SINGULAR)
                && !NT::ROOT
                && Some(m) == tt_move
                && excluded.is_none()
                && depth >= 6 + i32::from(tt_pv)
                && tt_value.abs() < WIN_BOUND
                && h.bound.has(Bound::Lower)
                && h.depth >= depth - 3
                && !self.is_shuffling(pos, at, ply, m, capture)
            {
                // If every other move fails low against a margin below the
                // table's score, this one is the only good move.
                let singular_beta =
                    tt_value - p.v((59 + 66 * i32::from(tt_pv && !NT::PV)) * depth) / 63;
                let singular_depth = new_depth / 2;
                self.frames[at].excluded = Some(m);
                let v = self.alpha_beta::<NonPv>(
                    pos,
                    singular_depth,
                    singular_beta - 1,
                    singular_beta,
                    ply,
                    cut_node,
                );
                self.frames[at].excluded = None;
                if self.stopped {
                    return 0;
                }
                if v < singular_beta {
                    // Two and three plies more the further below it falls:
                    // more readily for a quiet hash move off the principal
                    // variation, and (the double) the more often hash moves
                    // have proved best (the hash-move history).
                    let pv = i32::from(NT::PV);
                    let quiet = i32::from(!tt_capture);
                    let deep = i32::from(ply as i32 > self.root_depth);
                    let uncertain = i32::from(on.on(CORRECTION_SINGULAR)) * cv.abs() / 198_368;
                    let double_margin = -2 + 204 * pv
                        - 152 * quiet
                        - uncertain
                        - 1175 * self.hist.tt_move() / 114_178
                        - 38 * deep;
                    let triple_margin =
                        70 + 279 * pv - 188 * quiet + 81 * i32::from(tt_pv) - uncertain - 43 * deep;
                    extension = 1
                        + i32::from(v < singular_beta - p.v(double_margin))
                        + i32::from(v < singular_beta - p.v(triple_margin));
                    depth += 1;
                } else if v >= beta && v.abs() < WIN_BOUND {
                    // Multi-cut: another move beats beta too. The
                    // evaluation, below that value, learns it.
                    self.hist.update_tt_move(-421 - 110 * depth);
                    if !in_check && on.on(CORRECTION) && v > static_eval {
                        let limit = CORRECTION_MAX / 4;
                        let bonus = (p.to_sf(v - static_eval) * singular_depth * 177 / 1024)
                            .clamp(-limit, limit);
                        self.corr.update(&corr_keys, us, &corr_moves, bonus);
                    }
                    return v;
                } else if tt_value >= beta || cut_node {
                    // Another move holds the margin: the hash move is likely
                    // no better than it, so it is searched shallower.
                    extension = -3;
                }
            }
            new_depth += extension;

            self.tt.prefetch(pos.key_after(m));
            self.frames[at].current = Some(m);
            self.frames[at].cont = continuation_index(in_check, capture, piece, m.to());
            // How well the move's histories rate it (Stockfish's
            // `statScore`): the child reads it when it ends.
            self.frames[at].stat_score = if capture {
                let kind = captured_kind(pos, m);
                873 * PIECE_VALUE[kind as usize] / 128 + self.hist.capture(piece, m.to(), kind)
            } else {
                let [c1, c2, ..] = cont.0;
                (2252 * self.hist.main(us, m)
                    + 1126 * self.hist.continuation(c1, piece, m.to())
                    + 1093 * self.hist.continuation(c2, piece, m.to()))
                    / 1024
            };

            // Step 16. Make the move.
            self.nodes += 1;
            pos.do_move(m);
            self.frames[at].moved = pos.piece_on(m.to()).map(|pc| (pc, m.to()));
            let known = if NT::ROOT { self.known_child(pos, new_depth) } else { None };
            let mut value = -INFINITE;
            if let Some(v) = known {
                value = v;
            } else {
                // The reduction's terms (Stockfish's 2026 source, 1024ths):
                // less on the principal variation's positions, the more so
                // when the table's score beats alpha or its entry is deep
                // enough; less for later moves (their base grew already),
                // for the hash move and by the move's statistics; more at
                // cut nodes, after a capture hash move, when the next ply
                // cut often, and in proportion at nodes expected to fail
                // low.
                if tt_pv {
                    r -= 3023
                        + 1004 * i32::from(NT::PV)
                        + 885 * i32::from(tt_value > alpha)
                        + i32::from(hit.is_some_and(|h| h.depth >= depth))
                            * (816 + 940 * i32::from(cut_node));
                }
                r += 697 - 65 * move_count;
                if cut_node {
                    r += 4026 + 933 * i32::from(tt_move.is_none());
                }
                if tt_capture {
                    r += 1079;
                }
                let next_cutoffs = self.frames[at + 1].cutoff_count;
                if next_cutoffs > 1 {
                    r += 264 + 1095 * i32::from(next_cutoffs > 2) + 1138 * i32::from(all_node);
                } else if Some(m) == tt_move {
                    r -= 2179;
                }
                if on.on(LMR_HISTORY) {
                    r -= self.frames[at].stat_score * 439 / 4096;
                }
                // Less where the evaluation is uncertain.
                if on.on(CORRECTION_REDUCTION) {
                    r -= cv.abs() / 26_310;
                }
                if all_node {
                    r += r * 276 / (256 * depth + 268);
                }
                if depth >= 2 && move_count > 1 {
                    // Step 17. Late-move reductions: a negative reduction
                    // may extend by up to two plies; the principal
                    // variation's positions a ply deeper.
                    let d = (new_depth - r / 1024).min(new_depth + 2).max(1) + i32::from(NT::PV);
                    self.frames[at].reduction = new_depth - d;
                    value = -self.alpha_beta::<NonPv>(pos, d, -(alpha + 1), -alpha, ply + 1, true);
                    self.frames[at].reduction = 0;
                    if value > alpha {
                        // The full-depth search, a ply deeper or shallower as
                        // the reduced one came out.
                        if on.on(DEEPER_SEARCH) {
                            let deeper = d < new_depth && value > best_value + p.v(53);
                            let shallower = value < best_value + p.v(8);
                            new_depth += i32::from(deeper) - i32::from(shallower);
                        }
                        if new_depth > d {
                            value = -self.alpha_beta::<NonPv>(
                                pos,
                                new_depth,
                                -(alpha + 1),
                                -alpha,
                                ply + 1,
                                !cut_node,
                            );
                        }
                        // A move whose reduced search beat alpha is a good
                        // one, whatever the full search finds.
                        self.update_continuations(at, piece, m.to(), 1334);
                    }
                } else if !NT::PV || move_count > 1 {
                    // Step 18. A full-depth search with a null window, a
                    // ply or two shallower when the reduction is large.
                    if tt_move.is_none() {
                        r += 1127;
                    }
                    let d = new_depth - i32::from(r > 5234) - i32::from(r > 5487 && new_depth > 2);
                    value =
                        -self.alpha_beta::<NonPv>(pos, d, -(alpha + 1), -alpha, ply + 1, !cut_node);
                }
            }
            // The principal variation: the first move, or one that beat
            // alpha, searched with the full window.
            if known.is_none()
                && NT::PV
                && (move_count == 1 || (value > alpha && (NT::ROOT || value < beta)))
            {
                // The hash move of a table entry searched deeper does not
                // drop into quiescence.
                if Some(m) == tt_move
                    && let Some(h) = hit
                    && (h.depth > 1
                        || (tt_value != VALUE_NONE && tt_value.abs() >= WIN_BOUND && h.depth > 0))
                {
                    new_depth = new_depth.max(1);
                }
                value = -self.alpha_beta::<Pv>(
                    pos,
                    new_depth.min(max_next_depth),
                    -beta,
                    -alpha,
                    ply + 1,
                    false,
                );
            }

            // Step 19. Undo the move.
            pos.undo_move(m);
            if self.stopped {
                return 0;
            }

            // Step 20. A new best move.
            if value > best_value {
                best_value = value;
                if value > alpha {
                    best_move = Some(m);
                    if NT::PV {
                        self.update_pv(ply, m);
                    }
                    if NT::PV && value < beta {
                        alpha = value;
                        // Once a move beats alpha, the rest searches a
                        // little shallower.
                        if depth > 1 && depth < 6 && beta < p.v(10_000) && alpha > -p.v(10_000) {
                            depth -= 1;
                        }
                    } else {
                        self.frames[at].cutoff_count += 1;
                        break;
                    }
                }
            }
            if Some(m) != best_move && move_count <= SEARCHED as i32 {
                if capture {
                    searched.captures[searched.capture_count] = m;
                    searched.capture_count += 1;
                } else {
                    searched.quiets[searched.quiet_count] = m;
                    searched.quiet_count += 1;
                }
            }
        }

        // Step 21. Mate, stalemate, and the statistics.
        if move_count == 0 {
            best_value = if excluded.is_some() {
                alpha
            } else if in_check {
                -MATE + ply as i32
            } else {
                0
            };
        } else if let Some(bm) = best_move {
            self.update_all_stats(pos, at, bm, tt_move, &searched, depth, NT::PV);
            if !NT::PV {
                self.hist.update_tt_move(if Some(bm) == tt_move { 918 } else { -747 });
            }
        } else if let Some((pc, sq)) = prev {
            if let Some(captured) = pos.captured_piece() {
                // The previous move, a capture, caused this fail low.
                self.hist.update_capture(pc, sq, captured.role(), 892);
            } else {
                // The previous move, a quiet one, caused this fail low: the
                // more so the deeper the node, the worse that move's
                // history, the later it came, and the further below both
                // static evaluations the result fell.
                let parent = self.frames[at - 1];
                let mut scale = -241 - parent.stat_score / 98 + (59 * depth).min(420);
                scale += 186 * i32::from(parent.move_count > 9);
                scale += 142
                    * i32::from(
                        !in_check
                            && static_eval != VALUE_NONE
                            && best_value <= static_eval - p.v(106),
                    );
                scale += 159
                    * i32::from(
                        !parent.in_check
                            && parent.static_eval != VALUE_NONE
                            && best_value <= -parent.static_eval - p.v(68),
                    );
                let bonus = (150 * depth - 85).min(1337) * scale.max(0);
                self.update_continuations(at - 1, pc, sq, bonus * 263 / 16_384);
                if let Some(prev_move) = parent.real_move() {
                    self.hist.update_main(!us, prev_move, bonus * 215 / 32_768);
                    if pc.role() != Role::Pawn && !prev_move.is_promotion() {
                        self.hist.update_pawn(pos.pawn_key(), pc, sq, bonus * 324 / 8192);
                    }
                }
            }
        }
        // A fail high's value leans towards beta, the more so the shallower
        // the node (the table then inflates it less).
        if move_count > 0
            && best_value >= beta
            && best_value.abs() < WIN_BOUND
            && alpha.abs() < WIN_BOUND
        {
            best_value = (best_value * depth + beta) / (depth + 1);
        }
        if NT::PV {
            best_value = best_value.min(max_value);
        }
        // A node that fails low below a principal-variation node becomes
        // part of the principal variation's tree.
        if best_value <= alpha {
            self.frames[at].tt_pv =
                self.frames[at].tt_pv || (self.frames[at - 1].tt_pv && depth > 3);
        }
        // A multi-PV line's root (some root moves left out) is not stored.
        if excluded.is_none() && (!NT::ROOT || self.excluded.is_empty()) {
            let bound = if best_value >= beta {
                Bound::Lower
            } else if NT::PV && best_move.is_some() && best_value > original_alpha {
                Bound::Exact
            } else {
                Bound::Upper
            };
            let stored = score_to_tt(best_value, ply);
            let pv = self.frames[at].tt_pv;
            self.tt.store(key, best_move, stored, pv, bound, depth, raw_eval);
        }
        // The correction histories learn the evaluation's error when the
        // result says which way it errs: a best move (not a capture) that
        // beats it, or no best move and a result below it.
        if !in_check
            && on.on(CORRECTION)
            && !best_move.is_some_and(|m| pos.is_capture(m))
            && (best_value > static_eval) == best_move.is_some()
        {
            let weight = if best_move.is_some() { 12 } else { 18 };
            let limit = CORRECTION_MAX / 4;
            let bonus =
                (p.to_sf(best_value - static_eval) * depth * weight / 128).clamp(-limit, limit);
            self.corr.update(&corr_keys, us, &corr_moves, 1061 * bonus / 1024);
        }
        best_value
    }

    /// Captures (and evasions) until the position is quiet, after
    /// Stockfish 15.1's `qsearch`: quiet checks at the first ply,
    /// recaptures only from the fifth, captures pruned by futility, by
    /// their number and by exchange, quiet evasions after two.
    fn quiescence<NT: NodeType>(
        &mut self,
        pos: &mut Position,
        mut alpha: i32,
        beta: i32,
        ply: usize,
        depth: i32,
    ) -> i32 {
        // At every node, not only PV nodes: a zero-window child whose score
        // lands exactly on a bound lowered by mate-distance pruning can reach
        // the parent's `update_pv`, which must not copy a stale line.
        self.pv_len[ply] = ply;
        if self.check_stop() {
            return 0;
        }
        self.seldepth = self.seldepth.max(ply);
        let p = self.params;
        let at = ply + FRAMES_BEFORE;
        let in_check = pos.in_check();
        self.frames[at].in_check = in_check;
        if self.is_draw(pos, ply) {
            return 0;
        }
        if ply >= MAX_PLY - 1 {
            return if in_check { 0 } else { self.evaluate_node(pos).0 };
        }
        // Checks are searched at the first ply only: two depths in the
        // table.
        let tt_depth = if in_check || depth >= 0 { 0 } else { -1 };
        let key = pos.key();
        let hit = self.tt.probe(key);
        let tt_value = match hit {
            Some(h) if h.bound != Bound::None => score_from_tt(h.score, ply, pos.rule50()),
            _ => VALUE_NONE,
        };
        let tt_move = hit.and_then(|h| h.mv).filter(|&m| pos.is_legal(m));
        let pv_hit = hit.is_some_and(|h| h.pv);
        if !NT::PV
            && let Some(h) = hit
            && h.depth >= tt_depth
            && tt_value != VALUE_NONE
            && h.bound.cuts(tt_value, beta)
        {
            return tt_value;
        }
        // The static evaluation, corrected by the correction histories
        // (the table keeps it uncorrected).
        let mut raw_eval = VALUE_NONE;
        let (static_eval, mut best_value, futility_base) = if in_check {
            (VALUE_NONE, -INFINITE, -INFINITE)
        } else {
            let raw = match hit {
                Some(h) if h.eval != VALUE_NONE => h.eval,
                // After a null move, without corrections, the evaluation
                // is the parent's turned round; with them the node's own
                // keys correct its own evaluation.
                None if !self.switches.on(CORRECTION)
                    && self.frames[at - 1].current == Some(Move::NULL)
                    && self.frames[at - 1].static_eval != VALUE_NONE =>
                {
                    -self.frames[at - 1].static_eval
                }
                _ => self.evaluate_node(pos).0,
            };
            raw_eval = raw;
            let static_eval = self.corrected(raw, self.correction(pos, at).2);
            let mut best = static_eval;
            if let Some(h) = hit
                && tt_value != VALUE_NONE
                && h.bound.has(if tt_value > best { Bound::Lower } else { Bound::Upper })
            {
                best = tt_value;
            }
            // Stand pat, the value leaning towards beta.
            if best >= beta {
                if best.abs() < WIN_BOUND {
                    best = (441 * best + 583 * beta) / 1024;
                }
                if hit.is_none() {
                    let stored = score_to_tt(best, ply);
                    self.tt.store(key, None, stored, false, Bound::Lower, DEPTH_NONE, raw_eval);
                }
                return best;
            }
            if NT::PV && best > alpha {
                alpha = best;
            }
            (static_eval, best, best + p.v(153))
        };
        self.frames[at].static_eval = static_eval;
        let cont = self.continuations(at);
        let recapture = self.frames[at - 1].moved.map(|(_, sq)| sq);
        let mut picker = MovePicker::quiescence(pos, tt_move, depth, recapture);
        let mut best_move = None;
        let mut move_count = 0;
        let mut quiet_evasions = 0;
        let on = self.switches;
        while let Some(m) = picker.next(pos, &self.hist, &cont, false) {
            let gives_check = pos.gives_check(m);
            let capture = pos.is_capture(m);
            move_count += 1;
            // Futility and move-count pruning.
            if on.on(QS_FUTILITY)
                && best_value > -WIN_BOUND
                && !gives_check
                && Some(m.to()) != recapture
                && futility_base > -p.v(10_000)
                && !m.is_promotion()
            {
                if move_count > 2 {
                    continue;
                }
                let futility_value =
                    futility_base + p.v(PIECE_VALUE_EG[captured_kind(pos, m) as usize]);
                if futility_value <= alpha {
                    best_value = best_value.max(futility_value);
                    continue;
                }
                if futility_base <= alpha && !pos.see_ge(m, 1) {
                    best_value = best_value.max(futility_base);
                    continue;
                }
            }
            // Moves that lose material.
            if best_value > -WIN_BOUND && !pos.see_ge(m, 0) {
                continue;
            }
            let piece = pos.moved_piece(m).unwrap_or(Piece::WhitePawn);
            // Quiet moves the continuation histories call bad.
            if !capture
                && best_value > -WIN_BOUND
                && self.hist.continuation(cont.0[0], piece, m.to()) < 0
                && self.hist.continuation(cont.0[1], piece, m.to()) < 0
            {
                continue;
            }
            if best_value > -WIN_BOUND && quiet_evasions > 1 {
                break;
            }
            quiet_evasions += i32::from(!capture && in_check);
            self.tt.prefetch(pos.key_after(m));
            self.frames[at].current = Some(m);
            self.frames[at].cont = continuation_index(in_check, capture, piece, m.to());
            self.nodes += 1;
            pos.do_move(m);
            self.frames[at].moved = pos.piece_on(m.to()).map(|pc| (pc, m.to()));
            let value = -self.quiescence::<NT>(pos, -beta, -alpha, ply + 1, depth - 1);
            pos.undo_move(m);
            if self.stopped {
                return 0;
            }
            if value > best_value {
                best_value = value;
                if value > alpha {
                    best_move = Some(m);
                    if NT::PV {
                        self.update_pv(ply, m);
                    }
                    if NT::PV && value < beta {
                        alpha = value;
                    } else {
                        break;
                    }
                }
            }
        }
        if in_check && best_value == -INFINITE {
            return -MATE + ply as i32;
        }
        if best_value > beta && best_value.abs() < WIN_BOUND {
            best_value = (462 * best_value + 562 * beta) / 1024;
        }
        let bound = if best_value >= beta { Bound::Lower } else { Bound::Upper };
        let stored = score_to_tt(best_value, ply);
        self.tt.store(key, best_move, stored, pv_hit, bound, tt_depth, raw_eval);
        best_value
    }
}

/// A mate or tablebase score as stored: relative to the node, not the
/// root.
fn score_to_tt(score: i32, ply: usize) -> i32 {
    if score >= WIN_BOUND {
        score + ply as i32
    } else if score <= -WIN_BOUND {
        score - ply as i32
    } else {
        score
    }
}

/// A stored score at `ply` from the root; a mate that the 50-move rule
/// could stop (further than the plies left before it) is no longer taken
/// for a mate. A tablebase score already counts the 50-move rule.
fn score_from_tt(score: i32, ply: usize, rule50: u32) -> i32 {
    let left = 99 - rule50.min(99) as i32;
    if score >= MATE_BOUND {
        if MATE - score > left {
            return MATE_BOUND - 1;
        }
        score - ply as i32
    } else if score <= -MATE_BOUND {
        if MATE + score > left {
            return -MATE_BOUND + 1;
        }
        score + ply as i32
    } else if score >= WIN_BOUND {
        score - ply as i32
    } else if score <= -WIN_BOUND {
        score + ply as i32
    } else {
        score
    }
}
