//! The annotate job as a library type: inputs, record options and an
//! output in, a `.kbz` file and a report out.
//!
//! [`Annotation::new`] checks the settings, starts the engine once to name
//! it in the header, and allocates every worker's search table before
//! anything is written; [`Annotation::run`] streams the inputs through the
//! workers ([`run`]) and writes the blocks in input
//! order. What the run meets on the way (progress, unreadable input,
//! rejected games) goes to an [`AnnotateSink`]; the caller draws bars and
//! writes reports from there.
//!
//! The rules of what reaches the file live in [`Collector`]: chunk results
//! arrive in input order; a labeller that gave up stops the run before its
//! chunk; once `max_positions` labels are written, the games after the one
//! that filled the file are dropped, and so are their rejections (a reader
//! of the file and of the rejection report sees the same games).

use std::{
    path::PathBuf,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Instant,
};

use crate::{
    io::{
        filter::GameFilter,
        source::{ChunkConfig, Format, display_name},
        table::TableOptions,
    },
    job::{
        common::{LabelWith, OutputMode, input_infos},
        dedup::{Dedup, DedupError, DedupReport, Keep},
    },
    label::{GaveUp, LabellerPool, engine::EngineError, search::SearchLabeller},
    nnue::Net,
    pipeline::{
        annotator::{AnnotateStats, ChunkAnnotations, Worker},
        replayer::{Rejected, Verify},
        run::{self, Event, PipelineConfig},
    },
    record::{
        chain::ChainError,
        format::{
            BLOCK_GAMES, BLOCK_LABELS, FORMAT_VERSION, GameRecord, Header, LabelSource, MAGIC,
            MAX_MULTIPV, MAX_PV, Options,
        },
        position_key::FirstSeen,
        reader::RecordError,
        writer::{BlockLimits, BlockSink, BlockWriter, KbzWriter},
    },
    search::tt::TableError,
    syzygy::Tablebases,
};

/// The settings of an annotate run, apart from its inputs and output.
#[derive(Clone)]
pub struct AnnotateSettings {
    /// Where labels come from.
    pub label: LabelWith,
    /// The inputs' format (`None`: sniffed per input).
    pub format: Option<Format>,
    /// Worker threads (at least 1).
    pub threads: usize,
    /// Search depth (when `nodes` is 0).
    pub depth: u32,
    /// Nodes per search (0: search to `depth`).
    pub nodes: u64,
    /// Transposition table per worker, MiB.
    pub hash_mib: u32,
    /// Plies skipped at the start of each game.
    pub skip_plies: u32,
    /// Skip positions in check.
    pub skip_check: bool,
    /// Skip positions whose best move is a capture.
    pub skip_captures: bool,
    /// The share of positions kept, 0 to 1.
    pub sample: f64,
    /// The sampling seed.
    pub seed: u64,
    /// Keep one label per position (the key, 50-move and repetition state of [`crate::label_keys`]):
    /// the first as the run goes (`Keep::First`), or the last or the
    /// deepest by a dedup of the file once written. `None`: every label.
    pub dedup: Option<Keep>,
    /// Memory for that dedup's positions (bytes) before they spill to disk.
    pub dedup_memory: usize,
    /// Games taken from the input's start (0: all).
    pub max_games: u64,
    /// Labels written at most (0: no limit).
    pub max_positions: u64,
    /// Bytes of text read from each input at most (0: no limit).
    pub max_bytes: u64,
    /// How tables of games or positions are read.
    pub table: TableOptions,
    /// This run's shard `(k, n)`: games whose index is `k` modulo `n`.
    pub shard: (u64, u64),
    /// Games per block at most.
    pub block_games: u32,
    /// Labels per block at most.
    pub block_labels: u32,
    /// Plies of each label's principal variation kept (0: none; at most
    /// [`MAX_PV`]).
    pub pv_plies: u32,
    /// Games left out by their tags before any work.
    pub filter: GameFilter,
    /// Moves searched per position, best first (1 to [`MAX_MULTIPV`]).
    pub multipv: u32,
    /// What to check after every move of the games read.
    pub verify: Verify,
    /// Endgame tables: positions within them are labelled by them, and
    /// the search probes them.
    pub tablebases: Option<Arc<Tablebases>>,
    /// Only the tables label: positions outside them get no label (a
    /// relabelling keeps their old one) and nothing is searched.
    pub tables_only: bool,
}

impl Default for AnnotateSettings {
    /// The command line's defaults: kibitz's search with the hand-written
    /// evaluation to depth 8, one thread, a 16 MiB table, the first 8 plies
    /// and positions in check or with a capture as best move skipped,
    /// everything kept, no limits, one shard, the format's block sizes.
    fn default() -> AnnotateSettings {
        AnnotateSettings {
            label: LabelWith::Search(None),
            format: None,
            threads: 1,
            depth: 8,
            nodes: 0,
            hash_mib: 16,
            skip_plies: 8,
            skip_check: true,
            skip_captures: true,
            sample: 1.0,
            seed: 0,
            dedup: None,
            dedup_memory: 1 << 30,
            max_games: 0,
            max_positions: 0,
            max_bytes: 0,
            table: TableOptions::default(),
            shard: (0, 1),
            block_games: BLOCK_GAMES,
            block_labels: BLOCK_LABELS,
            pv_plies: 0,
            filter: GameFilter::default(),
            multipv: 1,
            verify: Verify::None,
            tablebases: None,
            tables_only: false,
        }
    }
}

/// Why an annotate run could not start or finish.
#[derive(Debug, thiserror::Error)]
pub enum AnnotateError {
    /// No game or position was read from any input.
    #[error(
        "no game or position was read from any input: {output} is not written (a file there \
         is left as it was)"
    )]
    NothingRead {
        /// The output path.
        output: PathBuf,
    },
    /// The output is one of the inputs.
    #[error("the output {output} is the input {input}: it would be overwritten before it is read")]
    OutputIsInput {
        /// The output.
        output: PathBuf,
        /// The input it is.
        input: PathBuf,
    },
    /// A sampling share outside 0 to 1.
    #[error("the sampling share must be between 0 and 1, not {0}")]
    Sample(f64),
    /// Several best moves asked of labels that come from the games' text.
    #[error("several best moves need a search: labels from [%eval] have one score")]
    MultiPvWithoutSearch,
    /// A shard `k/n` with `k >= n` or `n = 0`.
    #[error("shard {k}/{n}: K must be below N")]
    Shard {
        /// The shard.
        k: u64,
        /// The shard count.
        n: u64,
    },
    /// The last or deepest label of a position needs the whole file.
    #[error(
        "the last or the deepest label of each position is chosen over the whole file: dedup the \
         merged file"
    )]
    KeepWithShards,
    /// The dedup of the written file failed.
    #[error(transparent)]
    Dedup(#[from] DedupError),
    /// A label budget cannot be split across shards.
    #[error(
        "a maximum number of positions cannot be split across shards: apply it to the merged file"
    )]
    MaxPositionsWithShards,
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
    /// An input to relabel cannot be read.
    #[error(transparent)]
    Input(RecordError),
    /// An input cannot be opened.
    #[error("{}: cannot open: {source}", path.display())]
    InputOpen {
        /// The input.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A game of an input to relabel does not replay.
    #[error(transparent)]
    Chain(#[from] crate::record::chain::ChainError),
    /// The sink failed (its report could not be written): the output keeps
    /// its complete blocks and can be resumed.
    #[error("{source}; {output} keeps its complete blocks and can be resumed")]
    Sink {
        /// The sink's error.
        source: std::io::Error,
        /// The output.
        output: PathBuf,
    },
}

/// What an annotate run reports to its caller as it goes.
pub trait AnnotateSink {
    /// The run resumes an output: games before `from_game` are in it.
    /// `dropped` says what followed its last complete block, if anything.
    fn resumed(&mut self, _from_game: u64, _labels_kept: u64, _dropped: Option<&RecordError>) {}
    /// Called once the resume point is known, before any rejection.
    fn start(&mut self, _resume_from: u64) -> std::io::Result<()> {
        Ok(())
    }
    /// Progress: bytes of all inputs consumed, the counts so far and the
    /// labels written.
    fn progress(&mut self, _bytes: u64, _stats: &AnnotateStats, _labels: u64) {}
    /// An input (named) could not be read whole; the run goes on.
    fn input_error(&mut self, _file: &str, _offset: Option<u64>, _message: &str) {}
    /// A game rejected, in input order: its input's name, its number in
    /// that input (from 1) and in the whole input (from 0).
    fn rejected(
        &mut self,
        _file: &str,
        _game_in_file: u64,
        _game: u64,
        _rejected: &Rejected,
    ) -> std::io::Result<()> {
        Ok(())
    }
    /// The run is over; the last chance to report a failure.
    fn finish(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A sink that reports nothing.
impl AnnotateSink for () {}

/// What a run did.
#[derive(Clone, Debug)]
pub struct AnnotateReport {
    /// The header written.
    pub header: Header,
    /// The counts.
    pub stats: AnnotateStats,
    /// Bytes in the output.
    pub bytes_written: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Worker threads.
    pub threads: usize,
    /// The run stopped early (interrupted, the labeller gave up, or the
    /// sink failed): the output holds complete blocks only, no end marker.
    pub interrupted: bool,
    /// The first game the run annotated (0 unless resumed).
    pub resumed_from_game: u64,
    /// Inputs that could not be read whole.
    pub input_errors: u64,
    /// The labeller gave up here (an engine that kept failing).
    pub gave_up: Option<GaveUp>,
    /// The dedup of the written file (`Keep::Last` or `Keep::Deepest`).
    pub dedup: Option<DedupReport>,
}

/// What [`Collector::accept`] made of a chunk.
#[derive(Debug, Default)]
pub struct Accepted {
    /// The rejected games to report: those in the file's range only.
    pub rejected: Vec<Rejected>,
    /// The run is done: the file is full, or `max_games` games were read.
    pub stop: bool,
}

/// Why [`Collector::accept`] stops the run before a chunk.
#[derive(Debug)]
pub enum Refused {
    /// The labeller gave up.
    GaveUp(GaveUp),
    /// A block could not be written.
    Write(std::io::Error),
    /// A game record does not replay (for the dedup).
    Chain(ChainError),
}

/// The rules of what reaches the file, fed chunk results in input order:
/// the first label of each position (with `dedup`), the label budget, then
/// the one block writer.
pub struct Collector<S: BlockSink = KbzWriter> {
    writer: BlockWriter<S>,
    first_seen: Option<FirstSeen>,
    max_positions: u64,
    max_games: u64,
    labels_written: u64,
    full: bool,
    /// Counts of what the file holds (work counts include what was
    /// searched past a limit).
    pub stats: AnnotateStats,
}

impl<S: BlockSink> Collector<S> {
    /// A collector for a run with `options`, writing into `sink`; `dedup`
    /// drops positions already written (a shard keeps them: `merge` drops
    /// them).
    pub fn new(options: &Options, dedup: bool, sink: S) -> Collector<S> {
        let limits = BlockLimits {
            games: options.block_games.max(1) as usize,
            labels: options.block_labels.max(1) as usize,
        };
        Collector {
            writer: BlockWriter::new(sink, limits),
            first_seen: dedup.then(FirstSeen::default),
            max_positions: options.max_positions,
            max_games: options.max_games,
            labels_written: 0,
            full: false,
            stats: AnnotateStats::default(),
        }
    }

    /// Continues a file whose complete blocks hold `games`: their labels
    /// count against the budget, and their positions are seen.
    pub fn restore(&mut self, games: &[GameRecord]) -> Result<(), ChainError> {
        for record in games {
            self.labels_written += record.label_count() as u64;
            if let Some(seen) = self.first_seen.as_mut() {
                seen.remember(record)?;
            }
        }
        self.full = self.max_positions > 0 && self.labels_written >= self.max_positions;
        Ok(())
    }

    /// Labels written so far.
    pub fn labels_written(&self) -> u64 {
        self.labels_written
    }

    /// Takes one chunk's result. A labeller that gave up ends the run
    /// before the chunk; a cancelled chunk is dropped whole.
    pub fn accept(&mut self, result: ChunkAnnotations) -> Result<Accepted, Refused> {
        let mut out = Accepted::default();
        if result.cancelled {
            out.stop = true;
            return Ok(out);
        }
        if let Some(why) = result.gave_up {
            return Err(Refused::GaveUp(why));
        }
        self.stats.add(&result.stats);
        // When the label budget fills inside this chunk, the games after
        // the one that filled it are not written, and their rejections are
        // not reported. (A resumed file can be full before its first chunk:
        // then nothing of the chunk is written.)
        let mut written_below = if self.full { 0 } else { u64::MAX };
        let records = result.records.len() as u64;
        let mut pushed = 0;
        for record in result.records {
            if self.full {
                break;
            }
            pushed += 1;
            let index = record.index;
            self.push(record)?;
            if self.full {
                written_below = index + 1;
            }
        }
        let written = |r: &Rejected| r.local_game < written_below;
        self.stats.games -= records - pushed;
        let (kept, dropped): (Vec<_>, Vec<_>) = result.rejected.into_iter().partition(written);
        self.stats.rejected -= dropped.len() as u64;
        out.rejected = kept;
        // `games_read` counts from the input's first game, the games
        // skipped on resuming included.
        out.stop = self.full || (self.max_games > 0 && self.stats.games_read >= self.max_games);
        Ok(out)
    }

    /// One game: its repeated positions dropped, cut at the label budget,
    /// written (the block it fills, or the last block once the budget is
    /// full, is written at once).
    fn push(&mut self, mut record: GameRecord) -> Result<(), Refused> {
        if let Some(seen) = self.first_seen.as_mut() {
            self.stats.skipped_duplicate += seen.keep_new(&mut record).map_err(Refused::Chain)?;
        }
        if self.max_positions > 0 {
            let room = self.max_positions.saturating_sub(self.labels_written) as usize;
            if record.labels.len() >= room {
                record.labels.truncate(room);
                self.full = true;
            }
        }
        self.labels_written += record.label_count() as u64;
        self.writer.push(record).map_err(Refused::Write)?;
        if self.full {
            self.writer.close_block().map_err(Refused::Write)?;
        }
        Ok(())
    }

    /// The sink blocks go to.
    pub fn sink(&mut self) -> &mut S {
        self.writer.sink()
    }

    /// The final counts and the block writer (whose open block the caller
    /// writes, or drops when the run was interrupted).
    pub fn finish(mut self) -> (AnnotateStats, BlockWriter<S>) {
        self.stats.labelled = self.labels_written;
        (self.stats, self.writer)
    }
}

/// An annotate run, ready to go: settings checked, engine named, tables
/// allocated.
pub struct Annotation {
    inputs: Vec<PathBuf>,
    output: PathBuf,
    mode: OutputMode,
    settings: AnnotateSettings,
    header: Header,
    searchers: Vec<SearchLabeller>,
}

impl Annotation {
    /// The job's parts, for a relabelling ([`crate::job::relabel`]):
    /// inputs, output, whether to replace it, settings, header, searchers.
    pub(crate) fn into_parts(
        self,
    ) -> (Vec<PathBuf>, PathBuf, bool, AnnotateSettings, Header, Vec<SearchLabeller>) {
        let replace = self.mode == OutputMode::Replace;
        (self.inputs, self.output, replace, self.settings, self.header, self.searchers)
    }

    /// Checks the settings and prepares the run. Nothing is written yet:
    /// an output over an input, an input that cannot be opened, a bad
    /// share or shard, an engine that does not start or lacks an option,
    /// or a table the machine cannot give once per worker is an error here.
    pub fn new(
        inputs: Vec<PathBuf>,
        output: PathBuf,
        mode: OutputMode,
        mut settings: AnnotateSettings,
    ) -> Result<Annotation, AnnotateError> {
        check_paths(&inputs, &output)?;
        check_settings(&mut settings)?;
        let (source, engine_id, net) = match &settings.label {
            // The engine's identity goes into the header: probe it once.
            LabelWith::Engine(c) => (LabelSource::Engine, c.describe()?, None),
            LabelWith::Search(net) => (LabelSource::Search, String::new(), net.clone()),
            LabelWith::PgnEval => (LabelSource::PgnEval, String::new(), None),
            LabelWith::Table => (LabelSource::Table, String::new(), None),
        };
        let searching = source.searches();
        let threads = settings.threads;
        // Each worker owns a searcher with its own table, all allocated
        // here, before anything is written. With PGN evals nothing is
        // searched, so the (unused) searchers get the smallest table.
        let searchers = match source {
            LabelSource::Engine => Vec::new(),
            _ => {
                let hash = if searching { settings.hash_mib as usize } else { 1 };
                (0..threads)
                    .map(|_| {
                        SearchLabeller::try_new(settings.depth, settings.nodes, hash, net.clone())
                            .map(|l| l.with_multipv(settings.multipv as usize))
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|source| AnnotateError::Table { source, threads })?
            }
        };
        let header = Header {
            magic: MAGIC,
            version: FORMAT_VERSION,
            kibitz_version: env!("CARGO_PKG_VERSION").to_string(),
            options: record_options(&settings, source, engine_id, net.as_ref()),
            inputs: input_infos(&inputs),
        };
        Ok(Annotation { inputs, output, mode, settings, header, searchers })
    }

    /// The header the output gets.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Runs the job. Setting `interrupt` stops it between two positions;
    /// the output then holds its complete blocks (no end marker) and a
    /// run with [`OutputMode::Resume`] continues it.
    pub fn run(
        mut self,
        sink: &mut dyn AnnotateSink,
        interrupt: &Arc<AtomicBool>,
    ) -> Result<AnnotateReport, AnnotateError> {
        let start = Instant::now();
        let output_error = |source| AnnotateError::Output { path: self.output.clone(), source };
        let (collector, resume_from) = self.open_output(sink)?;
        let mut state = RunState {
            collector,
            sink,
            names: self.inputs.iter().map(|p| display_name(p)).collect::<Vec<_>>().into(),
            file_first_game: vec![0; self.inputs.len()],
            done_bytes: 0,
            input_errors: 0,
            write_failure: None,
            gave_up: None,
            sink_failure: None,
            interrupt: interrupt.clone(),
            games_seen: Default::default(),
        };
        state.sink_failure = state.sink.start(resume_from).err();
        if state.sink_failure.is_none() {
            let searchers = std::mem::take(&mut self.searchers);
            self.stream(&mut state, resume_from, searchers);
        }
        let RunState { collector, sink, input_errors, gave_up, games_seen, .. } = state;
        let sink_failure = state.sink_failure.or_else(|| sink.finish().err());
        if let Some(e) = state.write_failure {
            return Err(output_error(e));
        }
        // A failed sink: the output is closed as an interrupted run's
        // (complete blocks, no end marker), so that it can be resumed.
        let interrupted =
            interrupt.load(Ordering::SeqCst) || gave_up.is_some() || sink_failure.is_some();
        let (stats, mut writer) = collector.finish();
        if writer.sink().is_aside() {
            // Nothing read: the output stays as it was. (An interrupted
            // run that read games but finished none is put in place, to be
            // resumed.)
            if stats.games_read == 0 && games_seen.load(Ordering::Relaxed) == 0 {
                if !interrupted {
                    writer.abandon();
                    return Err(AnnotateError::NothingRead { output: self.output });
                }
            } else {
                writer.sink().publish().map_err(output_error)?;
            }
        }
        // An interrupted output still aside (nothing read) is abandoned
        // by `close_incomplete`: 0 bytes.
        let bytes_written = if interrupted { writer.close_incomplete() } else { writer.finish() }
            .map_err(output_error)?;
        if let Some(source) = sink_failure {
            return Err(AnnotateError::Sink { source, output: self.output });
        }
        // The workers are gone, so every engine has quit and been reaped.
        let dedup = match self.settings.dedup {
            Some(keep @ (Keep::Last | Keep::Deepest)) if !interrupted => {
                Some(Dedup::in_place(&self.output, keep, self.settings.dedup_memory).run(&mut ())?)
            }
            _ => None,
        };
        Ok(AnnotateReport {
            header: self.header,
            stats,
            bytes_written: dedup.as_ref().map_or(bytes_written, |d| d.bytes_written),
            seconds: start.elapsed().as_secs_f64(),
            threads: self.settings.threads,
            interrupted,
            resumed_from_game: resume_from,
            input_errors,
            gave_up,
            dedup,
        })
    }

    /// The output created, or resumed after its last complete block; the
    /// collector that writes into it, and the first game to annotate.
    fn open_output(&self, sink: &mut dyn AnnotateSink) -> Result<(Collector, u64), AnnotateError> {
        let output_error = |source| AnnotateError::Output { path: self.output.clone(), source };
        let dedup = self.settings.dedup == Some(Keep::First) && self.settings.shard.1 <= 1;
        if self.mode == OutputMode::Resume && self.output.exists() {
            let (writer, games, dropped) = KbzWriter::resume(&self.output, &self.header)?;
            let resume_from = games.last().map_or(0, |g| g.index + 1);
            let mut collector = Collector::new(&self.header.options, dedup, writer);
            collector.restore(&games)?;
            sink.resumed(resume_from, collector.labels_written(), dropped.as_ref());
            return Ok((collector, resume_from));
        }
        // Made aside, put in place once something is read (`RunState::chunk`).
        let writer =
            KbzWriter::create_aside(&self.output, &self.header, self.mode == OutputMode::Replace)
                .map_err(output_error)?;
        Ok((Collector::new(&self.header.options, dedup, writer), 0))
    }

    /// Streams the inputs through the workers into `state`.
    fn stream(&self, state: &mut RunState<'_>, resume_from: u64, searchers: Vec<SearchLabeller>) {
        let settings = &self.settings;
        let threads = settings.threads;
        let searching = self.header.options.label.searches();
        let config = PipelineConfig {
            inputs: self.inputs.clone(),
            format: settings.format,
            threads,
            // Searching costs far more than reading: small chunks (a few
            // games) keep every thread busy even on a small input.
            chunk: ChunkConfig {
                frame_window: threads.max(2),
                target: if searching { 4 << 10 } else { 256 << 10 },
                max_text: if settings.max_bytes == 0 { u64::MAX } else { settings.max_bytes },
                table: settings.table.clone(),
                ..ChunkConfig::default()
            },
            count_games: true,
            filter: Some(std::sync::Arc::new(self.header.options.filter.clone()))
                .filter(|f| !f.is_empty()),
            games_seen: Some(state.games_seen.clone()),
        };
        // `run` takes one labeller per worker thread, and there is a
        // searcher for each.
        let pool = LabellerPool::new(settings.label.engine(), searchers)
            .with_tablebases(settings.tablebases.clone())
            .tables_only(settings.tables_only);
        let (options, names) = (&self.header.options, state.names.clone());
        let interrupt = state.interrupt.clone();
        run::run(
            &config,
            || {
                Worker::new(pool.take(), options.clone(), resume_from, names.clone())
                    .cancel_on(interrupt.clone())
                    .verify(settings.verify)
            },
            |worker, chunk| worker.chunk(chunk),
            |event| state.event(event),
        );
    }
}

/// What a run keeps while its events arrive.
struct RunState<'a> {
    collector: Collector,
    sink: &'a mut dyn AnnotateSink,
    names: Arc<[String]>,
    /// Each input's first game's index in the whole input, for game
    /// numbers within the file.
    file_first_game: Vec<u64>,
    done_bytes: u64,
    input_errors: u64,
    write_failure: Option<std::io::Error>,
    gave_up: Option<GaveUp>,
    sink_failure: Option<std::io::Error>,
    interrupt: Arc<AtomicBool>,
    /// Games the reader has cut so far, before any is processed: whether
    /// the run has read anything, when it stops before a chunk is done.
    games_seen: Arc<std::sync::atomic::AtomicU64>,
}

impl RunState<'_> {
    /// One event of the pipeline, in input order; `false` stops the run.
    fn event(&mut self, event: Event<ChunkAnnotations>) -> bool {
        if self.interrupt.load(Ordering::SeqCst) {
            return false;
        }
        match event {
            Event::Chunk { input_pos, result, .. } => return self.chunk(input_pos, result),
            Event::Error { file, offset, message } => {
                self.input_errors += 1;
                self.sink.input_error(&self.names[file], offset, &message);
            }
            Event::End { bytes_in, .. } => {
                self.done_bytes += bytes_in;
                let c = &self.collector;
                self.sink.progress(self.done_bytes, &c.stats, c.labels_written());
            }
            Event::Start { file, .. } => {
                self.file_first_game[file] = self.collector.stats.games_read
            }
        }
        true
    }

    /// A chunk's records to the file, its rejections to the sink.
    fn chunk(&mut self, input_pos: u64, result: ChunkAnnotations) -> bool {
        let accepted = match self.collector.accept(result) {
            Ok(a) => a,
            Err(Refused::GaveUp(why)) => {
                self.gave_up = Some(why);
                return false;
            }
            Err(Refused::Write(e)) => {
                self.write_failure = Some(e);
                return false;
            }
            Err(Refused::Chain(e)) => {
                self.write_failure = Some(std::io::Error::other(e));
                return false;
            }
        };
        for r in &accepted.rejected {
            // Games are counted in input order, so a file's first game is
            // never after one of its games.
            let first = self.file_first_game[r.file];
            let game = r.local_game.checked_sub(first).unwrap_or(r.local_game) + 1;
            if let Err(e) = self.sink.rejected(&self.names[r.file], game, r.local_game, r) {
                self.sink_failure = Some(e);
                return false;
            }
        }
        if self.collector.stats.games_read > 0
            && let Err(e) = self.collector.sink().publish()
        {
            self.write_failure = Some(e);
            return false;
        }
        let c = &self.collector;
        self.sink.progress(self.done_bytes + input_pos, &c.stats, c.labels_written());
        !accepted.stop
    }
}

/// The paths checked before anything is written: the output is none of
/// the inputs, and every input can be opened (one that breaks part way is
/// reported, and the run goes on).
fn check_paths(inputs: &[PathBuf], output: &std::path::Path) -> Result<(), AnnotateError> {
    if output.exists()
        && let Some(input) = inputs.iter().find(|i| crate::io::same_file(output, i))
    {
        return Err(AnnotateError::OutputIsInput {
            output: output.to_path_buf(),
            input: input.clone(),
        });
    }
    for input in inputs.iter().filter(|i| i.as_os_str() != "-") {
        let opened = std::fs::File::open(input).and_then(|f| f.metadata()).and_then(|m| {
            if m.is_dir() { Err(std::io::Error::other("a directory, not a file")) } else { Ok(()) }
        });
        if let Err(source) = opened {
            return Err(AnnotateError::InputOpen { path: input.clone(), source });
        }
    }
    Ok(())
}

/// The settings checked, and brought within their bounds.
fn check_settings(settings: &mut AnnotateSettings) -> Result<(), AnnotateError> {
    if !(0.0..=1.0).contains(&settings.sample) {
        return Err(AnnotateError::Sample(settings.sample));
    }
    let (k, n) = settings.shard;
    if n == 0 || k >= n {
        return Err(AnnotateError::Shard { k, n });
    }
    if n > 1 && settings.max_positions > 0 {
        return Err(AnnotateError::MaxPositionsWithShards);
    }
    if n > 1 && matches!(settings.dedup, Some(Keep::Last | Keep::Deepest)) {
        return Err(AnnotateError::KeepWithShards);
    }
    settings.threads = settings.threads.max(1);
    settings.multipv = settings.multipv.clamp(1, MAX_MULTIPV as u32);
    if settings.multipv > 1 {
        match &mut settings.label {
            // The engine searches the lines itself.
            LabelWith::Engine(c) => {
                c.options.retain(|(n, _)| !n.eq_ignore_ascii_case("MultiPV"));
                c.options.push(("MultiPV".to_string(), settings.multipv.to_string()));
            }
            LabelWith::PgnEval | LabelWith::Table => {
                return Err(AnnotateError::MultiPvWithoutSearch);
            }
            LabelWith::Search(_) => {}
        }
    }
    Ok(())
}

/// The options the header records.
fn record_options(
    s: &AnnotateSettings,
    label: LabelSource,
    engine: String,
    net: Option<&Net>,
) -> Options {
    let searching = label.searches();
    Options {
        label,
        depth: if searching && s.nodes == 0 { s.depth } else { 0 },
        nodes: if searching { s.nodes } else { 0 },
        hash_mib: if searching { s.hash_mib } else { 0 },
        skip_plies: s.skip_plies,
        skip_check: s.skip_check,
        skip_captures: s.skip_captures,
        sample_ppm: (s.sample * 1e6).round() as u32,
        seed: s.seed,
        dedup: s.dedup == Some(Keep::First),
        max_games: s.max_games,
        max_positions: s.max_positions,
        max_bytes: s.max_bytes,
        shard: s.shard,
        engine,
        block_games: s.block_games,
        block_labels: s.block_labels,
        net: net.map_or(String::new(), |n| n.info().name.clone()),
        net_sha256: net.map_or(String::new(), |n| n.info().sha256.clone()),
        pv_plies: s.pv_plies.min(MAX_PV as u32),
        filter: s.filter.clone(),
        multipv: s.multipv,
        relabelled_from: String::new(),
        selfplay: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        chess::{position::Position, san::San},
        pipeline::replayer::RejectKind,
        record::format::{Block, Label, PackedBoard, move_index},
    };

    fn options(max_games: u64, max_positions: u64, block_games: u32) -> Options {
        Options {
            label: LabelSource::Search,
            depth: 1,
            nodes: 0,
            hash_mib: 1,
            skip_plies: 0,
            skip_check: false,
            skip_captures: false,
            sample_ppm: 1_000_000,
            seed: 0,
            dedup: false,
            max_games,
            max_positions,
            max_bytes: 0,
            shard: (0, 1),
            engine: String::new(),
            block_games,
            block_labels: 1 << 20,
            net: String::new(),
            net_sha256: String::new(),
            pv_plies: 0,
            filter: GameFilter::default(),
            multipv: 1,
            relabelled_from: String::new(),
            selfplay: None,
        }
    }

    fn label(ply: usize) -> Label {
        Label {
            ply: ply as u16,
            score: 10,
            best: 255,
            depth: 1,
            pv: Default::default(),
            alternatives: Default::default(),
            flags: 0,
        }
    }

    /// A game of `labels` labelled plies at `index` (moves are never
    /// decoded here, so the move indices are placeholders).
    fn game(index: u64, labels: usize) -> GameRecord {
        let mut record = GameRecord::new(index, [0; 32], 3, Default::default(), vec![0; labels]);
        record.labels = (0..labels).map(label).collect();
        record
    }

    /// A real game from the start position, every position labelled.
    fn played(index: u64, sans: &[&str]) -> GameRecord {
        let mut pos = Position::startpos();
        let mut record =
            GameRecord::new(index, PackedBoard::pack(&pos), 3, Default::default(), Vec::new());
        for san in sans {
            let m = San::parse(san.as_bytes()).unwrap().to_move(&pos).unwrap();
            record.moves.push(move_index(&pos, m).unwrap());
            pos.do_move(m);
        }
        record.labels = (0..=sans.len()).map(label).collect();
        record
    }

    fn collector(options: &Options, dedup: bool) -> Collector<Vec<Block>> {
        Collector::new(options, dedup, Vec::new())
    }

    /// The blocks written so far, taken out of the collector's sink.
    fn written(c: &mut Collector<Vec<Block>>) -> Vec<(u64, usize)> {
        labels_of(&std::mem::take(c.writer.sink()))
    }

    fn rejected(index: u64) -> Rejected {
        Rejected {
            file: 0,
            local_game: index,
            offset: index * 100,
            ply: 3,
            san: "Qxh9".into(),
            kind: RejectKind::IllegalMove,
            reason: "no legal move".into(),
            event: String::new(),
            site: String::new(),
            white: String::new(),
            black: String::new(),
        }
    }

    /// A chunk whose games are `games` (index, labels), rejections at
    /// `rejects`, as the workers count them.
    fn chunk(games: &[(u64, usize)], rejects: &[u64]) -> ChunkAnnotations {
        let mut c = ChunkAnnotations::default();
        for &(index, labels) in games {
            c.records.push(game(index, labels));
        }
        c.stats.games_read = (games.len() + rejects.len()) as u64;
        c.stats.games = games.len() as u64;
        c.stats.rejected = rejects.len() as u64;
        c.rejected = rejects.iter().map(|&i| rejected(i)).collect();
        c
    }

    fn labels_of(blocks: &[Block]) -> Vec<(u64, usize)> {
        blocks.iter().flat_map(|b| b.games().unwrap()).map(|g| (g.index, g.label_count())).collect()
    }

    #[test]
    fn without_limits_everything_reaches_the_file() {
        let mut c = collector(&options(0, 0, 2), false);
        let a = c.accept(chunk(&[(0, 3), (2, 4), (3, 1)], &[1])).unwrap();
        assert_eq!(written(&mut c), [(0, 3), (2, 4)], "a block closes at two games");
        assert_eq!(a.rejected.len(), 1);
        assert!(!a.stop);
        let (stats, writer) = c.finish();
        let last = writer.into_sink().unwrap();
        assert_eq!(labels_of(&last), [(3, 1)], "the third game waits in the open block");
        assert_eq!((stats.games, stats.rejected, stats.labelled), (3, 1, 8));
    }

    /// The label budget fills inside a game: that game is cut at the
    /// budget, the games after it are not written, and neither are the
    /// rejections after it; the run stops.
    #[test]
    fn max_positions_drops_the_games_and_rejections_after_the_last_written() {
        let mut c = collector(&options(0, 5, 100), false);
        let a = c.accept(chunk(&[(0, 3), (2, 4), (4, 2)], &[1, 3])).unwrap();
        assert!(a.stop);
        assert_eq!(written(&mut c), [(0, 3), (2, 2)], "the block closes when the budget fills");
        let kept: Vec<u64> = a.rejected.iter().map(|r| r.local_game).collect();
        assert_eq!(kept, [1], "game 3's rejection comes after the last game written");
        let (stats, writer) = c.finish();
        assert_eq!(writer.open_games(), 0);
        assert_eq!((stats.games, stats.rejected, stats.labelled), (2, 1, 5));
    }

    /// A resumed file that is already full takes nothing of the next chunk,
    /// not even its rejections.
    #[test]
    fn a_full_resumed_file_takes_nothing() {
        let mut c = collector(&options(0, 3, 100), false);
        c.restore(&[game(0, 3)]).unwrap();
        let a = c.accept(chunk(&[(2, 1)], &[1])).unwrap();
        assert!(a.stop && a.rejected.is_empty());
        assert!(written(&mut c).is_empty());
        assert_eq!(c.finish().0.games, 0);
    }

    #[test]
    fn max_games_stops_once_read() {
        let mut c = collector(&options(3, 0, 100), false);
        assert!(!c.accept(chunk(&[(0, 1), (1, 1)], &[])).unwrap().stop);
        assert!(c.accept(chunk(&[(2, 1)], &[])).unwrap().stop);
    }

    /// A labeller that gave up stops the run before its chunk: nothing of
    /// the chunk is counted or written. A cancelled chunk is dropped whole.
    #[test]
    fn a_labeller_that_gave_up_or_a_cancel_drops_the_chunk() {
        let mut c = collector(&options(0, 0, 1), false);
        let mut given_up = chunk(&[(0, 2)], &[]);
        given_up.gave_up = Some(GaveUp {
            file: "games.pgn".into(),
            game: 1,
            offset: 0,
            cause: Arc::new(EngineError::GaveUp(3)),
        });
        let Err(Refused::GaveUp(why)) = c.accept(given_up) else { panic!("the labeller gave up") };
        assert_eq!(
            why.to_string(),
            "games.pgn: game 1 at byte 0: the engine failed 3 positions in a row (twice each): \
             giving up"
        );
        let mut cancelled = chunk(&[(0, 2)], &[]);
        cancelled.cancelled = true;
        let a = c.accept(cancelled).unwrap();
        assert!(a.stop);
        assert!(written(&mut c).is_empty());
        assert_eq!(c.finish().0.games, 0);
    }

    /// Positions labelled before (in this game or an earlier one, the
    /// same key and state) are dropped across chunks and counted.
    #[test]
    fn dedup_drops_positions_seen_before() {
        let mut c = collector(&options(0, 0, 100), true);
        let knights = ["Nf3", "Nf6", "Ng1", "Ng8"];
        let mut first = ChunkAnnotations::default();
        first.records.push(played(0, &knights));
        first.stats.games = 1;
        c.accept(first).unwrap();
        let mut again = ChunkAnnotations::default();
        again.records.push(played(1, &["Nf3", "Nc6"]));
        again.stats.games = 1;
        c.accept(again).unwrap();
        let (stats, writer) = c.finish();
        // Game 0: five positions, the last the start again but repeated
        // (another state); game 1: the start and 1. Nf3 seen, ...Nc6 new.
        assert_eq!(labels_of(&writer.into_sink().unwrap()), [(0, 5), (1, 1)]);
        assert_eq!((stats.skipped_duplicate, stats.labelled), (2, 6));
    }

    /// The settings are checked before anything is written.
    #[test]
    fn bad_settings_are_refused_before_any_output() {
        let dir = std::env::temp_dir().join(format!("kibitz-annotation-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let input = dir.join("in.pgn");
        std::fs::write(&input, "1. e4 e5 *\n").unwrap();
        let settings = AnnotateSettings {
            label: LabelWith::PgnEval,
            skip_plies: 0,
            skip_check: false,
            skip_captures: false,
            block_games: 8,
            block_labels: 8,
            ..AnnotateSettings::default()
        };
        let new = |output: &PathBuf, s: AnnotateSettings| {
            Annotation::new(vec![input.clone()], output.clone(), OutputMode::Replace, s)
        };
        let out = dir.join("out.kbz");
        let over = new(&input, settings.clone()).err().unwrap();
        assert!(matches!(over, AnnotateError::OutputIsInput { .. }), "{over}");
        let sample = new(&out, AnnotateSettings { sample: 1.5, ..settings.clone() }).err().unwrap();
        assert!(matches!(sample, AnnotateError::Sample(_)), "{sample}");
        let shard =
            new(&out, AnnotateSettings { shard: (2, 2), ..settings.clone() }).err().unwrap();
        assert!(matches!(shard, AnnotateError::Shard { k: 2, n: 2 }), "{shard}");
        let split = AnnotateSettings { shard: (0, 2), max_positions: 10, ..settings.clone() };
        assert!(matches!(new(&out, split).err().unwrap(), AnnotateError::MaxPositionsWithShards));
        assert!(!out.exists(), "nothing written");
        let report = new(&out, settings).unwrap().run(&mut (), &Arc::default()).unwrap();
        assert_eq!((report.stats.games, report.interrupted), (1, false));
        assert!(out.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
