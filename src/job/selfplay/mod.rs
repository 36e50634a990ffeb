//! Self-play: games kibitz plays itself, from a book of openings (or the
//! standard, Chess960 or double Fischer random starts) and random plies,
//! both sides the built-in search (hand-written evaluation or a net) or
//! one UCI engine, each game ended by the board or adjudicated, and every
//! searched position written with its score, its best move (the move
//! played) and the game's result, as a chain in a `.kbz` like a replayed
//! game: every later stage (export, stats, dedup, relabel) treats played
//! and read games alike.
//!
//! Game `i` of a run is a function of the run's seed and `i` alone (its
//! opening, its random plies, a cleared searcher), so the file is the same
//! bytes whatever the thread count, a run resumed after a kill writes what
//! an uninterrupted one would, and shards (games `i` with `i % n == k`)
//! merge into the unsharded run's file.

mod book;
mod game;

use std::{
    collections::{BTreeMap, HashMap},
    path::PathBuf,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::Instant,
};

pub use book::{BOOK_SKIPS_KEPT, Book, BookError, BookSkip};
pub use game::{GameRng, OPENING_TRIES, Openings, Played, Rules, board_ending};

use crate::{
    job::common::{LabelWith, OutputMode, input_infos},
    label::{Cause, Labeller, LabellerPool, engine::EngineError, search::SearchLabeller},
    nnue::Net,
    record::{
        format::{
            BLOCK_GAMES, BLOCK_LABELS, Ending, FORMAT_VERSION, GameRecord, Header,
            LABEL_PAST_LIMIT, LABEL_SHORT_OF_LIMIT, LabelSource, MAGIC, Options, SelfPlayOptions,
        },
        reader::RecordError,
        writer::{BlockLimits, BlockWriter, KbzWriter},
    },
    search::{Searcher, tt::TableError},
    syzygy::Tablebases,
};

/// The settings of a self-play run, apart from its output.
#[derive(Clone)]
pub struct SelfPlaySettings {
    /// Who plays: kibitz's search (with a net or not) or a UCI engine.
    /// Labels from `[%eval]` are not a player.
    pub player: LabelWith,
    /// Search depth (when `nodes` is 0).
    pub depth: u32,
    /// Nodes per search (0: search to `depth`).
    pub nodes: u64,
    /// Transposition table per worker, MiB.
    pub hash_mib: u32,
    /// Worker threads.
    pub threads: usize,
    /// The opening book (`None`: `variant`'s starts).
    pub book: Option<PathBuf>,
    /// Without a book: 0 the standard start, 1 Chess960, 2 double Fischer
    /// random.
    pub variant: u8,
    /// Random plies and adjudication.
    pub rules: Rules,
    /// The seed of everything random.
    pub seed: u64,
    /// Games of the run (before the shard).
    pub games: u64,
    /// Stop once this many labels are written (0: play every game); the
    /// game that reaches it is written whole.
    pub positions: u64,
    /// This run's shard `(k, n)`: games whose index is `k` modulo `n`.
    pub shard: (u64, u64),
    /// Games per block at most.
    pub block_games: u32,
    /// Labels per block at most.
    pub block_labels: u32,
    /// Endgame tables: a game whose position enters them ends with their
    /// result, its positions within them are labelled by them, and the
    /// search probes them.
    pub tablebases: Option<std::sync::Arc<Tablebases>>,
}

impl Default for SelfPlaySettings {
    /// The built-in search with the hand-written evaluation at 5,000 nodes
    /// (the field's usual setting), one thread, a 16 MiB table, the
    /// standard start, [`Rules::default`], 1,000 games.
    fn default() -> SelfPlaySettings {
        SelfPlaySettings {
            player: LabelWith::Search(None),
            depth: 0,
            nodes: 5000,
            hash_mib: 16,
            threads: 1,
            book: None,
            variant: 0,
            rules: Rules::default(),
            seed: 0,
            games: 1000,
            positions: 0,
            shard: (0, 1),
            block_games: BLOCK_GAMES,
            block_labels: BLOCK_LABELS,
            tablebases: None,
        }
    }
}

/// Why a self-play run could not start or finish.
#[derive(Debug, thiserror::Error)]
pub enum SelfPlayError {
    /// Games come from a search: `[%eval]` labels cannot play.
    #[error("self-play needs a player that searches: the built-in search or an engine")]
    NoPlayer,
    /// Neither a depth nor a node count.
    #[error("a search limit is needed: a depth or a node count above 0")]
    NoLimit,
    /// A shard `k/n` with `k >= n` or `n = 0`.
    #[error("shard {k}/{n}: K must be below N")]
    Shard {
        /// The shard.
        k: u64,
        /// The shard count.
        n: u64,
    },
    /// A label budget cannot be split across shards.
    #[error("a number of positions cannot be split across shards: give a number of games")]
    PositionsWithShards,
    /// The book cannot be used.
    #[error(transparent)]
    Book(#[from] BookError),
    /// The engine could not be started or refused the options.
    #[error("starting the engine: {0}")]
    Engine(#[from] EngineError),
    /// A worker's search table cannot be had.
    #[error("{source} for each of {threads} worker threads")]
    Table {
        /// The table that failed.
        source: TableError,
        /// The workers asking for one.
        threads: usize,
    },
    /// The output cannot be created, resumed or written.
    #[error("{path}: {source}")]
    Output {
        /// The output.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// The output to resume is not a file this run can continue.
    #[error(transparent)]
    Resume(#[from] RecordError),
}

/// The counts of a run (the resumed part included).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct SelfPlayStats {
    /// Games written.
    pub games: u64,
    /// Positions labelled (written).
    pub positions: u64,
    /// Nodes searched by the players (this run's games).
    pub nodes: u64,
    /// Games White won, drawn, Black won.
    pub white_wins: u64,
    /// See `white_wins`.
    pub draws: u64,
    /// See `white_wins`.
    pub black_wins: u64,
    /// Games by how they ended (`checkmate`, `resigned`...).
    pub endings: BTreeMap<String, u64>,
    /// Games left out: no opening that was not decided at once.
    pub no_opening: u64,
    /// Games left out: the player could not search a position.
    pub failed: u64,
    /// Labels of an engine that stopped far short of its limit (flagged in
    /// the file).
    pub short_of_limit: u64,
    /// Labels of an engine stopped past twice its limit (flagged).
    pub past_limit: u64,
    /// The first of those labels: game, ply and the depth reported.
    pub first_off_limit: Option<String>,
}

impl SelfPlayStats {
    fn add(&mut self, game: &GameRecord) {
        self.games += 1;
        self.positions += game.label_count() as u64;
        match game.result {
            2 => self.white_wins += 1,
            0 => self.black_wins += 1,
            _ => self.draws += 1,
        }
        *self.endings.entry(game.ending.name().to_string()).or_default() += 1;
        for l in &game.labels {
            if l.flags & LABEL_SHORT_OF_LIMIT != 0 {
                self.short_of_limit += 1;
            }
            if l.flags & LABEL_PAST_LIMIT != 0 {
                self.past_limit += 1;
            }
            if l.flags & (LABEL_SHORT_OF_LIMIT | LABEL_PAST_LIMIT) != 0
                && self.first_off_limit.is_none()
            {
                let what = if l.flags & LABEL_SHORT_OF_LIMIT != 0 {
                    "stopped far short of"
                } else {
                    "went past twice"
                };
                self.first_off_limit = Some(format!(
                    "game {}, ply {}: the engine {what} its limit (it reported depth {})",
                    game.index + 1,
                    l.ply,
                    l.depth
                ));
            }
        }
    }
}

/// What a self-play run tells its caller as it goes.
pub trait SelfPlaySink {
    /// The run continues a file whose games before `from_game` it keeps.
    fn resumed(&mut self, _from_game: u64, _stats: &SelfPlayStats) {}
    /// Progress: the counts so far, after each game written.
    fn progress(&mut self, _stats: &SelfPlayStats) {}
    /// Game `game` was left out: the player failed at `ply` (with why).
    fn failed(&mut self, _game: u64, _ply: usize, _cause: Option<&Cause>) {}
}

/// A sink that hears nothing.
impl SelfPlaySink for () {}

/// What a run did.
#[derive(Clone, Debug)]
pub struct SelfPlayReport {
    /// The header written.
    pub header: Header,
    /// The counts.
    pub stats: SelfPlayStats,
    /// Bytes in the output.
    pub bytes_written: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Worker threads.
    pub threads: usize,
    /// Stopped before the end (interrupted, or the engine gave up): the
    /// output holds whole blocks and no end marker; resume it.
    pub interrupted: bool,
    /// Why the engine gave up, if it did.
    pub gave_up: Option<Cause>,
    /// The first game this run played (0 unless resumed).
    pub resumed_from_game: u64,
}

/// A self-play run, ready to go: settings checked, book read, engine named,
/// tables allocated.
pub struct SelfPlay {
    output: PathBuf,
    mode: OutputMode,
    settings: SelfPlaySettings,
    openings: Openings,
    header: Header,
    searchers: Vec<SearchLabeller>,
    random: Vec<Searcher>,
}

impl SelfPlay {
    /// Checks the settings and prepares the run; nothing is written yet.
    pub fn new(
        output: PathBuf,
        mode: OutputMode,
        mut settings: SelfPlaySettings,
    ) -> Result<SelfPlay, SelfPlayError> {
        let (k, n) = settings.shard;
        if n == 0 || k >= n {
            return Err(SelfPlayError::Shard { k, n });
        }
        if n > 1 && settings.positions > 0 {
            return Err(SelfPlayError::PositionsWithShards);
        }
        if settings.depth == 0 && settings.nodes == 0 {
            return Err(SelfPlayError::NoLimit);
        }
        settings.threads = settings.threads.max(1);
        let threads = settings.threads;
        let openings = match (&settings.book, settings.variant) {
            (Some(path), _) => Openings::Book(Book::open(path)?),
            (None, 1) => Openings::Chess960,
            (None, 2) => Openings::DoubleFischerRandom,
            (None, _) => Openings::Standard,
        };
        let (source, engine, net) = match &settings.player {
            LabelWith::Engine(c) => (LabelSource::Engine, c.describe()?, None),
            LabelWith::Search(net) => (LabelSource::Search, String::new(), net.clone()),
            LabelWith::PgnEval | LabelWith::Table => return Err(SelfPlayError::NoPlayer),
        };
        let table = |source| SelfPlayError::Table { source, threads };
        let searchers = match source {
            LabelSource::Engine => Vec::new(),
            _ => (0..threads)
                .map(|_| {
                    let hash = settings.hash_mib as usize;
                    SearchLabeller::try_new(settings.depth, settings.nodes, hash, net.clone())
                })
                .collect::<Result<_, _>>()
                .map_err(table)?,
        };
        // The random plies' multi-PV searches: kibitz's own search, with
        // the player's net when it has one, a small table each.
        let random_threads = if settings.rules.random_multipv > 0 { threads } else { 0 };
        let random = (0..random_threads)
            .map(|_| Searcher::try_with_net(1, net.clone()))
            .collect::<Result<_, _>>()
            .map_err(table)?;
        let header = header(&settings, &openings, source, engine, net.as_ref());
        Ok(SelfPlay { output, mode, settings, openings, header, searchers, random })
    }

    /// The header the output gets.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The opening book, when the games start from one (what it skipped:
    /// [`Book::skips`]).
    pub fn book(&self) -> Option<&Book> {
        match &self.openings {
            Openings::Book(b) => Some(b),
            _ => None,
        }
    }

    /// Plays the games. Setting `interrupt` stops the run between two
    /// positions: the output keeps its complete blocks and a run with
    /// [`OutputMode::Resume`] continues it.
    pub fn run(
        mut self,
        sink: &mut dyn SelfPlaySink,
        interrupt: &Arc<AtomicBool>,
    ) -> Result<SelfPlayReport, SelfPlayError> {
        let start = Instant::now();
        let output = self.output.clone();
        let output_error = |source| SelfPlayError::Output { path: output.clone(), source };
        let (mut writer, mut stats, first_game) = self.open_output(sink)?;
        let plan = Plan::new(&self.settings, first_game);
        let pool =
            LabellerPool::new(self.settings.player.engine(), std::mem::take(&mut self.searchers))
                .with_tablebases(self.settings.tablebases.clone());
        let mut state = WriteState { stats: &mut stats, failure: None, gave_up: None, sink };
        let full = self.settings.positions > 0 && state.stats.positions >= self.settings.positions;
        if !full {
            self.play(&plan, &pool, &mut writer, &mut state, interrupt);
        }
        let (failure, gave_up) = (state.failure.take(), state.gave_up.take());
        if let Some(e) = failure {
            // The file keeps its complete blocks: a resumed run continues it.
            let _ = writer.close_incomplete();
            return Err(output_error(e));
        }
        let interrupted = interrupt.load(Ordering::SeqCst) || gave_up.is_some();
        let bytes_written = if interrupted { writer.close_incomplete() } else { writer.finish() }
            .map_err(output_error)?;
        Ok(SelfPlayReport {
            header: self.header,
            stats,
            bytes_written,
            seconds: start.elapsed().as_secs_f64(),
            threads: self.settings.threads,
            interrupted,
            gave_up,
            resumed_from_game: first_game,
        })
    }

    /// The output created, or resumed after its last complete block; the
    /// counts of the games it keeps, and the first game to play.
    fn open_output(
        &self,
        sink: &mut dyn SelfPlaySink,
    ) -> Result<(BlockWriter, SelfPlayStats, u64), SelfPlayError> {
        let output_error = |source| SelfPlayError::Output { path: self.output.clone(), source };
        let limits = BlockLimits::of(&self.header);
        let mut stats = SelfPlayStats::default();
        if self.mode == OutputMode::Resume && self.output.exists() {
            let (file, games, _dropped) = KbzWriter::resume(&self.output, &self.header)?;
            games.iter().for_each(|g| stats.add(g));
            let first = games.last().map_or(0, |g| g.index + 1);
            sink.resumed(first, &stats);
            return Ok((BlockWriter::new(file, limits), stats, first));
        }
        let replace = self.mode == OutputMode::Replace;
        let file = KbzWriter::create(&self.output, &self.header, replace).map_err(output_error)?;
        Ok((BlockWriter::new(file, limits), stats, 0))
    }

    /// The workers play the plan's games; the calling thread writes them in
    /// index order.
    fn play(
        &mut self,
        plan: &Plan,
        pool: &LabellerPool,
        writer: &mut BlockWriter,
        state: &mut WriteState<'_>,
        interrupt: &Arc<AtomicBool>,
    ) {
        let threads = self.settings.threads;
        let in_flight = threads * 4;
        let (permit_tx, permit_rx) = crossbeam_channel::bounded::<()>(in_flight);
        for _ in 0..in_flight {
            let _ = permit_tx.send(());
        }
        let (done_tx, done_rx) = crossbeam_channel::bounded::<Done>(in_flight);
        let stop = AtomicBool::new(false);
        let next = AtomicU64::new(0);
        let randoms = std::sync::Mutex::new(std::mem::take(&mut self.random));
        let tags = game_tags(&self.header);
        let (openings, rules, seed) = (&self.openings, &self.settings.rules, self.settings.seed);
        let tables = self.settings.tablebases.as_deref();
        std::thread::scope(|scope| {
            for _ in 0..threads {
                let (done, permits) = (done_tx.clone(), permit_rx.clone());
                let (stop, next, tags, randoms) = (&stop, &next, &tags, &randoms);
                scope.spawn(move || {
                    let mut player = pool.take();
                    let taken = randoms.lock().unwrap_or_else(|e| e.into_inner()).pop();
                    let mut random = taken.unwrap_or_else(|| Searcher::new(1));
                    let halted =
                        || stop.load(Ordering::Relaxed) || interrupt.load(Ordering::Relaxed);
                    while permits.recv().is_ok() && !halted() {
                        let seq = next.fetch_add(1, Ordering::Relaxed);
                        let Some(index) = plan.index(seq) else { break };
                        let game = game::Game { index, seed, openings, rules, tags, tables };
                        let played = game.play(player.as_mut(), &mut random, &halted);
                        let cause = player.take_failures().pop().map(|f| f.cause);
                        let gave_up = player.gave_up();
                        let stopping = gave_up.is_some();
                        let done = done.send(Done { seq, index, played, cause, gave_up });
                        if done.is_err() || stopping {
                            break;
                        }
                    }
                });
            }
            drop(done_tx);
            drop(permit_rx);
            let mut pending: HashMap<u64, Done> = HashMap::new();
            let mut expected = 0u64;
            for done in done_rx.iter() {
                pending.insert(done.seq, done);
                while let Some(done) = pending.remove(&expected) {
                    expected += 1;
                    let go_on = state.take(done, writer);
                    let full = self.settings.positions > 0
                        && state.stats.positions >= self.settings.positions;
                    if !go_on || full {
                        stop.store(true, Ordering::Relaxed);
                    }
                    let _ = permit_tx.try_send(());
                }
                if stop.load(Ordering::Relaxed) {
                    // Wake the workers waiting for a permit; the games in
                    // flight are dropped.
                    while permit_tx.try_send(()).is_ok() {}
                }
            }
        });
    }
}

/// A game played, on its way to the writer.
struct Done {
    /// Its place in the plan.
    seq: u64,
    /// Its index in the run.
    index: u64,
    played: Played,
    /// Why the player failed, if it did.
    cause: Option<Cause>,
    /// The player gave up (an engine that failed position after position).
    gave_up: Option<Cause>,
}

/// The games of this run's shard, from the first to play on: the `seq`-th
/// is game `first + seq * n` while below the run's count.
struct Plan {
    first: u64,
    step: u64,
    end: u64,
}

impl Plan {
    fn new(settings: &SelfPlaySettings, resume_from: u64) -> Plan {
        let (k, n) = settings.shard;
        // The shard's first game at or after the resume point.
        let first = resume_from + (k + n - resume_from % n) % n;
        Plan { first, step: n, end: settings.games }
    }

    fn index(&self, seq: u64) -> Option<u64> {
        let i = self.first.checked_add(seq.checked_mul(self.step)?)?;
        (i < self.end).then_some(i)
    }
}

/// The writer's side of a run.
struct WriteState<'a> {
    stats: &'a mut SelfPlayStats,
    failure: Option<std::io::Error>,
    gave_up: Option<Cause>,
    sink: &'a mut dyn SelfPlaySink,
}

impl WriteState<'_> {
    /// A played game, in index order: written, or counted as left out.
    /// `false` stops the run.
    fn take(&mut self, done: Done, writer: &mut BlockWriter) -> bool {
        if self.failure.is_some() || self.gave_up.is_some() {
            return false;
        }
        if done.gave_up.is_some() {
            // An engine that gave up stops the run here, before this game:
            // a resumed run plays it again.
            self.gave_up = done.gave_up;
            return false;
        }
        match done.played {
            Played::Game(record, nodes) => {
                self.stats.add(&record);
                self.stats.nodes += nodes;
                if let Err(e) = writer.push(*record) {
                    self.failure = Some(e);
                    return false;
                }
            }
            Played::NoOpening => self.stats.no_opening += 1,
            Played::Failed { ply } => {
                self.stats.failed += 1;
                self.sink.failed(done.index, ply, done.cause.as_ref());
            }
            Played::Cancelled => return false,
        }
        self.sink.progress(self.stats);
        true
    }
}

/// The roster tags of every game of a run: Event names the run, White and
/// Black the player.
fn game_tags(header: &Header) -> [String; 7] {
    let o = &header.options;
    let player = match (o.label, o.engine.is_empty(), o.net.is_empty()) {
        (LabelSource::Engine, _, _) => o.engine.split(';').next().unwrap_or("engine").to_string(),
        (_, _, false) => format!("kibitz {} {}", env!("CARGO_PKG_VERSION"), o.net),
        _ => format!("kibitz {}", env!("CARGO_PKG_VERSION")),
    };
    let limit =
        if o.nodes > 0 { format!("nodes {}", o.nodes) } else { format!("depth {}", o.depth) };
    [
        format!("kibitz selfplay, {limit}, seed {}", o.seed),
        "?".into(),
        "????.??.??".into(),
        "?".into(),
        player.clone(),
        player,
        "*".into(),
    ]
}

/// The header of a run.
fn header(
    s: &SelfPlaySettings,
    openings: &Openings,
    label: LabelSource,
    engine: String,
    net: Option<&Net>,
) -> Header {
    let r = &s.rules;
    let (book, book_sha256, book_positions) = match openings {
        Openings::Book(b) => (b.name.clone(), b.sha256.clone(), b.len() as u64),
        _ => (String::new(), String::new(), 0),
    };
    let selfplay = SelfPlayOptions {
        book,
        book_sha256,
        book_positions,
        variant: if s.book.is_some() { 0 } else { s.variant },
        random_plies: r.random_plies,
        random_multipv: r.random_multipv,
        random_multipv_diff: if r.random_multipv > 0 { r.random_multipv_diff } else { 0 },
        opening_score: r.opening_score,
        resign_score: r.resign_score,
        resign_plies: r.resign_plies,
        draw_score: r.draw_score,
        draw_plies: r.draw_plies,
        draw_from_ply: r.draw_from_ply,
        max_plies: r.max_plies,
        games: s.games,
        positions: s.positions,
    };
    let options = Options {
        label,
        depth: if s.nodes == 0 { s.depth } else { 0 },
        nodes: s.nodes,
        hash_mib: s.hash_mib,
        skip_plies: 0,
        skip_check: false,
        skip_captures: false,
        sample_ppm: 1_000_000,
        seed: s.seed,
        dedup: false,
        max_games: s.games,
        max_positions: s.positions,
        max_bytes: 0,
        shard: s.shard,
        engine,
        block_games: s.block_games,
        block_labels: s.block_labels,
        net: net.map_or(String::new(), |n| n.info().name.clone()),
        net_sha256: net.map_or(String::new(), |n| n.info().sha256.clone()),
        pv_plies: 0,
        filter: Default::default(),
        multipv: 1,
        relabelled_from: String::new(),
        selfplay: Some(selfplay),
    };
    let inputs = s.book.as_ref().map(|b| input_infos(std::slice::from_ref(b))).unwrap_or_default();
    Header {
        magic: MAGIC,
        version: FORMAT_VERSION,
        kibitz_version: env!("CARGO_PKG_VERSION").to_string(),
        options,
        inputs,
    }
}

/// Whether a run's games ended where the rules say: the ending each game
/// records agrees with its final position (a board ending) and its result.
pub fn check_ending(game: &GameRecord) -> Result<(), String> {
    let mut last = None;
    crate::record::chain::walk(game, |step| {
        if step.played.is_none() {
            last = Some(step.pos.clone());
        }
    })
    .map_err(|e| e.to_string())?;
    let pos = last.ok_or("no final position")?;
    let board = board_ending(&pos);
    match game.ending {
        Ending::Checkmate
        | Ending::Stalemate
        | Ending::FiftyMoves
        | Ending::InsufficientMaterial => match board {
            Some((ending, result)) if ending == game.ending && result == game.result => Ok(()),
            _ => Err(format!("{:?} recorded, the board says {board:?}", game.ending)),
        },
        Ending::Repetition => match board {
            Some((Ending::Repetition, 1)) if game.result == 1 => Ok(()),
            _ => Err(format!("repetition recorded, the board says {board:?}")),
        },
        Ending::Resigned if game.result != 1 => Ok(()),
        Ending::DrawAdjudicated | Ending::MaxPlies if game.result == 1 => Ok(()),
        // The tables' result cannot be checked without them; the position
        // must be one they could hold.
        Ending::Tablebase if board.is_none() && pos.castling_rights() == 0 => {
            match pos.occupied().count() {
                3..=7 => Ok(()),
                n => Err(format!("a tablebase ending recorded with {n} pieces on the board")),
            }
        }
        e => Err(format!("{e:?} with result {}", game.result)),
    }
}
