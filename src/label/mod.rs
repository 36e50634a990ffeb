//! Labellers: what gives a position its score and best move. The built-in
//! search ([`search::SearchLabeller`]) and an external UCI engine
//! ([`engine::EngineLabeller`]) implement [`Labeller`]; the annotate and
//! relabel jobs call it for every position they select.

use std::sync::{Arc, Mutex};

use crate::{
    chess::{mv::Move, position::Position},
    label::{
        engine::{EngineConfig, EngineLabeller},
        search::SearchLabeller,
    },
    record::format::{LABEL_PAST_LIMIT, LABEL_SHORT_OF_LIMIT, LABEL_TABLEBASE, LABEL_TB_50_MOVE},
    syzygy::{Tablebases, TbWdl},
};

pub mod engine;
pub mod search;

/// Where a position stands: its game and ply, and the game so far (an
/// external engine is given the moves, so it knows the history).
pub struct LabelContext<'a> {
    /// The game's index.
    pub game: u64,
    /// The position's ply in the game.
    pub ply: usize,
    /// The game's start position as FEN.
    pub start_fen: &'a str,
    /// The moves from the start to this position.
    pub moves: &'a [Move],
}

/// What a labeller found for a position.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Labelled {
    /// The score, side to move's view (centipawns or a mate score).
    pub score: i32,
    /// The best move, if known.
    pub best: Option<Move>,
    /// The depth searched.
    pub depth: u8,
    /// Nodes searched.
    pub nodes: u64,
    /// The principal variation from the position (may be empty).
    pub pv: Vec<Move>,
    /// The next best moves with their scores, best first (a multi-PV
    /// search; empty otherwise).
    pub alternatives: Vec<(Move, i32)>,
    /// Whether the search kept to the limit it was given (an external
    /// engine may not).
    pub limit: LimitKept,
    /// The endgame tables' result, when the label is theirs.
    pub tablebase: Option<TbWdl>,
}

impl Labelled {
    /// The label's flags as a record keeps them ([`crate::Label::flags`]).
    pub fn flags(&self) -> u8 {
        let tables = match self.tablebase {
            None => 0,
            Some(TbWdl::CursedWin | TbWdl::BlessedLoss) => LABEL_TABLEBASE | LABEL_TB_50_MOVE,
            Some(_) => LABEL_TABLEBASE,
        };
        self.limit.flag() | tables
    }

    /// The tables' label of `pos`, when they cover it: their result as the
    /// score, their best move as the best move and the variation; `None`
    /// when no table covers it, the result is left open by DTZ's rounding,
    /// or the game is over.
    pub fn from_tables(tables: &Tablebases, pos: &Position) -> Option<Labelled> {
        let answer = tables.answer(pos)?;
        let best = answer.best?;
        Some(Labelled {
            score: answer.wdl.score(0),
            best: Some(best),
            depth: 0,
            nodes: 0,
            pv: vec![best],
            alternatives: Vec::new(),
            limit: LimitKept::Kept,
            tablebase: Some(answer.wdl),
        })
    }
}

/// How a search kept to the limit it was given. The built-in search always
/// does; an external engine is checked against what its `info` lines
/// report ([`crate::EngineLabeller`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitKept {
    /// As asked (or stopped early for a reason: a mate found, a single
    /// legal move).
    #[default]
    Kept,
    /// Far short of it: under a quarter of the nodes, or under half the
    /// depth.
    Short,
    /// Past twice the node (or depth) limit, and stopped with `stop`.
    Past,
}

impl LimitKept {
    /// The label flag that records it ([`crate::Label::flags`]).
    pub fn flag(self) -> u8 {
        match self {
            LimitKept::Kept => 0,
            LimitKept::Short => LABEL_SHORT_OF_LIMIT,
            LimitKept::Past => LABEL_PAST_LIMIT,
        }
    }
}

/// Labels positions for a worker: the built-in search, or an external
/// engine ([`crate::EngineLabeller`]).
pub trait Labeller {
    /// Called at the start of each game (clear what carries over).
    fn new_game(&mut self, chess960: bool);
    /// The label of `pos`, or `None` when it cannot be labelled.
    fn label(&mut self, pos: &mut Position, ctx: &LabelContext<'_>) -> Option<Labelled>;
    /// Whether it wants a game's positions last to first. The built-in
    /// search does: searched after the position the played move leads to,
    /// a position finds that line's whole tree in the table, searched a ply
    /// deeper than its own search would, and the history tables already
    /// trained on it. An engine over UCI is given positions in the game's
    /// order, as a user's own loop would.
    fn backward(&self) -> bool {
        false
    }
    /// Problems met (positions it failed to label), drained by the caller.
    fn take_failures(&mut self) -> Vec<LabelFailure> {
        Vec::new()
    }
    /// Why the labeller cannot go on (an engine that fails position after
    /// position), if so: the run must stop.
    fn gave_up(&self) -> Option<Cause> {
        None
    }
}

/// The error behind a failure, shared (failures are counted, copied into
/// summaries and printed).
pub type Cause = std::sync::Arc<dyn std::error::Error + Send + Sync>;

/// A position a labeller could not label.
#[derive(Clone, Debug, thiserror::Error)]
#[error("ply {ply}: {cause}")]
pub struct LabelFailure {
    /// The position's ply in its game.
    pub ply: usize,
    /// Why.
    pub cause: Cause,
}

/// A failure located in the input: file, game (numbered from 1) and the
/// byte offset where the game starts. Serialized as its message.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{file}: game {game} at {}, {failure}", crate::io::place::describe(file, *offset))]
pub struct LocatedFailure {
    /// The input's name.
    pub file: String,
    /// The game, numbered from 1 across the inputs.
    pub game: u64,
    /// The byte offset of the game in its input.
    pub offset: u64,
    /// What failed.
    pub failure: LabelFailure,
}

impl serde::Serialize for LocatedFailure {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A labeller that gave up, where: the run must stop before this game.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{file}: game {game} at {}: {cause}", crate::io::place::describe(file, *offset))]
pub struct GaveUp {
    /// The input's name.
    pub file: String,
    /// The game, numbered from 1 across the inputs.
    pub game: u64,
    /// The byte offset of the game in its input.
    pub offset: u64,
    /// Why.
    pub cause: Cause,
}

impl Labeller for Box<dyn Labeller> {
    fn new_game(&mut self, chess960: bool) {
        (**self).new_game(chess960);
    }

    fn label(&mut self, pos: &mut Position, ctx: &LabelContext<'_>) -> Option<Labelled> {
        (**self).label(pos, ctx)
    }

    fn backward(&self) -> bool {
        (**self).backward()
    }

    fn take_failures(&mut self) -> Vec<LabelFailure> {
        (**self).take_failures()
    }

    fn gave_up(&self) -> Option<Cause> {
        (**self).gave_up()
    }
}

/// Hands each worker thread its labeller: one of the built-in searchers
/// allocated up front (one per worker, so that a table the machine cannot
/// give fails before anything is written), or a new process of the engine.
pub struct LabellerPool {
    engine: Option<EngineConfig>,
    searchers: Mutex<Vec<SearchLabeller>>,
    tablebases: Option<Arc<Tablebases>>,
    tables_only: bool,
}

impl LabellerPool {
    /// A pool of `searchers`, or of processes of `engine` when given.
    pub fn new(engine: Option<EngineConfig>, searchers: Vec<SearchLabeller>) -> LabellerPool {
        LabellerPool {
            engine,
            searchers: Mutex::new(searchers),
            tablebases: None,
            tables_only: false,
        }
    }

    /// Positions within `tablebases` are labelled by them, whatever the
    /// labeller (the search or an engine), and the search probes them in
    /// its tree.
    pub fn with_tablebases(mut self, tablebases: Option<Arc<Tablebases>>) -> LabellerPool {
        for s in self.searchers.get_mut().unwrap_or_else(|e| e.into_inner()).iter_mut() {
            s.set_tablebases(tablebases.clone());
        }
        self.tablebases = tablebases;
        self
    }

    /// Only the tables label (with [`LabellerPool::with_tablebases`]): a
    /// position outside them gets no label, and nothing is searched.
    pub fn tables_only(mut self, only: bool) -> LabellerPool {
        self.tables_only = only;
        self
    }

    /// A worker's labeller.
    ///
    /// # Panics
    ///
    /// When more labellers are taken than searchers were given (a worker
    /// too many: a bug of the caller).
    pub fn take(&self) -> Box<dyn Labeller> {
        if let (true, Some(tables)) = (self.tables_only, &self.tablebases) {
            return Box::new(TablesOnly(tables.clone()));
        }
        let inner: Box<dyn Labeller> = match &self.engine {
            Some(c) => Box::new(EngineLabeller::new(c.clone())),
            None => Box::new(
                self.searchers
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .pop()
                    .expect("a searcher per worker"),
            ),
        };
        match &self.tablebases {
            Some(tables) => Box::new(WithTables { inner, tables: tables.clone() }),
            None => inner,
        }
    }
}

/// The endgame tables alone: a label for the positions they hold, none
/// for the others.
struct TablesOnly(Arc<Tablebases>);

impl Labeller for TablesOnly {
    fn new_game(&mut self, _chess960: bool) {}

    fn label(&mut self, pos: &mut Position, _ctx: &LabelContext<'_>) -> Option<Labelled> {
        Labelled::from_tables(&self.0, pos)
    }
}

/// A labeller whose positions within the endgame tables are labelled by
/// them: exact, and with no search.
struct WithTables {
    inner: Box<dyn Labeller>,
    tables: Arc<Tablebases>,
}

impl Labeller for WithTables {
    fn new_game(&mut self, chess960: bool) {
        self.inner.new_game(chess960);
    }

    fn label(&mut self, pos: &mut Position, ctx: &LabelContext<'_>) -> Option<Labelled> {
        Labelled::from_tables(&self.tables, pos).or_else(|| self.inner.label(pos, ctx))
    }

    fn backward(&self) -> bool {
        self.inner.backward()
    }

    fn take_failures(&mut self) -> Vec<LabelFailure> {
        self.inner.take_failures()
    }

    fn gave_up(&self) -> Option<Cause> {
        self.inner.gave_up()
    }
}
