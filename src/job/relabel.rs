//! Relabelling: the positions a data set already labels, labelled again by
//! another labeller (the built-in search with or without a net, or an
//! engine), the games kept as chains so that the output stays as compact as
//! the input. Inputs are `.kbz` files, Stockfish binpack files (whose
//! chains become games) and Stockfish plain files (whose records chain when
//! one's move leads to the next one's position); the output is a `.kbz`
//! whose header names both the new labeller and the old one. (EPD inputs
//! are positions: `annotate` labels them as it does any EPD.)
//!
//! Each game is labelled by one worker, starting a new game for its
//! labeller, so the output is the same bytes whatever the thread count.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use crate::{
    chess::{mv::Move, position::Position},
    job::{
        annotate::{AnnotateError, AnnotateSettings, Annotation},
        common::tables_ending,
    },
    label::{
        self, LabelContext, Labeller, LabellerPool, LimitKept, engine::EngineError,
        search::SearchLabeller,
    },
    record::{
        chain::{ChainError, walk},
        format::{
            Alternatives, Ending, GameRecord, Header, Label, LabelSource, PackedBoard, Pv,
            label_score, move_index, result_text,
        },
        import::Foreign,
        reader::{KbzReader, RecordError},
        writer::{BlockLimits, BlockWriter, KbzWriter},
    },
    syzygy::Tablebases,
};

/// What a relabelling did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct RelabelReport {
    /// Games read (and written).
    pub games: u64,
    /// Labels read.
    pub labels: u64,
    /// Labels the new labeller gave (the rest are left out).
    pub relabelled: u64,
    /// Labels the new labeller could not give (an engine failure, or a
    /// label off its limit refused by `--strict-limits`).
    pub failed: u64,
    /// Labels of an engine that stopped far short of its limit (flagged).
    pub short_of_limit: u64,
    /// Labels of an engine stopped past twice its limit (flagged).
    pub past_limit: u64,
    /// Of the labels failed, those refused by `--strict-limits` (from the
    /// first label off its limit on, that worker labels nothing).
    pub refused: u64,
    /// Nodes searched.
    pub nodes: u64,
    /// Labels the endgame tables gave.
    pub tablebase: u64,
    /// Of those, labels whose score changed sign (a win for the other
    /// side, or a win turned into a loss)...
    pub sign_flips: u64,
    /// ... and those the tables call drawn where the old score was not
    /// within 50 centipawns of 0.
    pub draws_found: u64,
    /// Labels kept as they were (`--tables-only`: outside the tables).
    pub kept: u64,
    /// Self-play games adjudicated by a rule whose result the tables
    /// changed (they entered the tables: their result and ending are now
    /// the tables').
    pub results_corrected: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// The output's header.
    pub header: Option<Header>,
}

/// An input of a relabelling.
#[derive(Clone, Debug)]
pub enum RelabelInput {
    /// A `.kbz` file.
    Kbz(PathBuf),
    /// Another program's training data: binpack, plain or viriformat (see
    /// [`Foreign`]).
    Foreign(Foreign, PathBuf),
}

impl RelabelInput {
    /// The input a file is: another program's format by its extension or
    /// first bytes, `.kbz` by its extension (an error if it does not open)
    /// or by its header; `None` for anything else (PGN, EPD: the annotate
    /// pipeline's).
    pub fn detect(path: &Path) -> Result<Option<RelabelInput>, RecordError> {
        if let Some(kind) = Foreign::detect(path) {
            return Ok(Some(RelabelInput::Foreign(kind, path.to_path_buf())));
        }
        let kbz = KbzReader::open(path).map(|_| RelabelInput::Kbz(path.to_path_buf()));
        if path.extension().is_some_and(|e| e == "kbz") {
            return kbz.map(Some);
        }
        Ok(kbz.ok())
    }

    fn describe(&self) -> Result<String, RecordError> {
        Ok(match self {
            RelabelInput::Kbz(p) => {
                let o = KbzReader::open(p)?.header.options;
                let what = match o.label {
                    LabelSource::Search if o.nodes > 0 => format!("search, {} nodes", o.nodes),
                    LabelSource::Search => format!("search, depth {}", o.depth),
                    LabelSource::PgnEval => "[%eval] of the games".to_string(),
                    LabelSource::Table => "the evaluations of the positions".to_string(),
                    LabelSource::Engine => o.engine.clone(),
                };
                let net = if o.net.is_empty() { String::new() } else { format!(", net {}", o.net) };
                format!("{}: {what}{net}", p.display())
            }
            RelabelInput::Foreign(kind, p) => format!("{}: {} scores", p.display(), kind.name()),
        })
    }
}

/// Counts of one worker's games.
#[derive(Default)]
struct Counts {
    labels: u64,
    relabelled: u64,
    failed: u64,
    short_of_limit: u64,
    past_limit: u64,
    refused: u64,
    nodes: u64,
    tablebase: u64,
    sign_flips: u64,
    draws_found: u64,
    kept: u64,
    results_corrected: u64,
}

/// One game relabelled: the same plies, the new labeller's labels, in the
/// order the labeller wants the positions (`Labeller::backward`).
fn relabel_game(
    labeller: &mut dyn Labeller,
    record: &GameRecord,
    pv_plies: usize,
    keep_unlabelled: bool,
    counts: &mut Counts,
) -> Result<GameRecord, ChainError> {
    let start =
        PackedBoard::unpack(&record.start).ok_or(ChainError::BadStart { game: record.index })?;
    let start_fen = start.fen();
    labeller.new_game(start.is_chess960());
    let mut made: Vec<Move> = Vec::with_capacity(record.moves.len());
    let mut plies: Vec<usize> = Vec::with_capacity(record.labels.len());
    let mut old: Vec<Label> = Vec::with_capacity(record.labels.len());
    walk(record, |step| {
        if let Some(l) = step.label {
            plies.push(step.ply);
            old.push(*l);
        }
        if let Some(m) = step.played {
            made.push(m);
        }
    })?;
    let mut out = record.clone();
    out.labels.clear();
    let mut pos = start;
    let mut at = 0;
    let backward = labeller.backward();
    let mut label_at = |pos: &mut Position, i: usize, labels: &mut Vec<Label>| {
        let ply = plies[i];
        counts.labels += 1;
        let ctx =
            LabelContext { game: record.index, ply, start_fen: &start_fen, moves: &made[..ply] };
        match labeller.label(pos, &ctx) {
            Some(l) => {
                counts.relabelled += 1;
                counts.nodes += l.nodes;
                if l.tablebase.is_some() {
                    let before = i32::from(old[i].score);
                    counts.tablebase += 1;
                    counts.sign_flips += u64::from(before.signum() * l.score.signum() < 0);
                    counts.draws_found += u64::from(l.score.abs() <= 2 && before.abs() > 50);
                }
                match l.limit {
                    LimitKept::Kept => {}
                    LimitKept::Short => counts.short_of_limit += 1,
                    LimitKept::Past => counts.past_limit += 1,
                }
                labels.push(new_label(pos, ply, &l, pv_plies));
            }
            None if keep_unlabelled => {
                counts.kept += 1;
                labels.push(old[i]);
            }
            None => {
                counts.failed += 1;
                let off_limit = labeller.gave_up().is_some_and(|c| {
                    matches!(c.downcast_ref::<EngineError>(), Some(EngineError::OffLimit { .. }))
                });
                if off_limit {
                    counts.refused += 1;
                }
            }
        }
    };
    if backward {
        for &m in &made {
            pos.do_move(m);
        }
        at = made.len();
        for (i, &ply) in plies.iter().enumerate().rev() {
            while at > ply {
                at -= 1;
                pos.undo_move(made[at]);
            }
            label_at(&mut pos, i, &mut out.labels);
        }
        out.labels.reverse();
    } else {
        for (i, &ply) in plies.iter().enumerate() {
            while at < ply {
                pos.do_move(made[at]);
                at += 1;
            }
            label_at(&mut pos, i, &mut out.labels);
        }
    }
    Ok(out)
}

/// A game kibitz generated and a rule adjudicated (self-play: resigned,
/// drawn by the score rule, the ply limit) that entered the endgame tables
/// gets their result, from the first position within them, and the
/// tables' ending; whether its result changed. Played games (no ending
/// recorded, or the board's) keep theirs.
fn correct_result(tables: &Tablebases, game: &mut GameRecord) -> Result<bool, ChainError> {
    if !matches!(game.ending, Ending::Resigned | Ending::DrawAdjudicated | Ending::MaxPlies) {
        return Ok(false);
    }
    let mut found = None;
    walk(game, |step| {
        if found.is_none() {
            found = tables_ending(tables, step.pos);
        }
    })?;
    let Some((ending, result)) = found else { return Ok(false) };
    let changed = result != game.result;
    game.result = result;
    game.ending = ending;
    game.tags[6] = result_text(result).to_string();
    Ok(changed)
}

/// The record's label of what the labeller found at `pos`.
fn new_label(pos: &Position, ply: usize, l: &label::Labelled, pv_plies: usize) -> Label {
    let best = l.best.and_then(|m| move_index(pos, m)).unwrap_or(255);
    let pv = match l.best {
        Some(b) if pv_plies > 0 => {
            let line = if l.pv.first() == Some(&b) { &l.pv[..] } else { &[b][..] };
            Pv::from_moves(pos, line, pv_plies)
        }
        _ => Pv::default(),
    };
    let alternatives: Vec<(u8, i16)> = l
        .alternatives
        .iter()
        .filter_map(|&(m, s)| Some((move_index(pos, m)?, label_score(s))))
        .collect();
    Label {
        ply: ply.min(u16::MAX as usize) as u16,
        score: label_score(l.score),
        best,
        depth: l.depth,
        pv,
        alternatives: Alternatives::new(&alternatives),
        flags: l.flags(),
    }
}

/// What a relabelling tells its caller as it goes.
pub trait RelabelSink {
    /// Games relabelled and written so far.
    fn progress(&mut self, _games: u64) {}
}

/// A sink that hears nothing.
impl RelabelSink for () {}

/// A relabelling: the inputs' positions labelled again by the labeller of
/// an annotate job (its selection settings do not apply: the positions are
/// the inputs'), into the job's output.
pub struct Relabel {
    inputs: Vec<RelabelInput>,
    output: PathBuf,
    replace: bool,
    settings: AnnotateSettings,
    header: Header,
    searchers: Vec<SearchLabeller>,
}

/// A batch of games, numbered in input order, on its way to a worker or
/// back.
type Batch<T> = (u64, T);

impl Relabel {
    /// The relabelling of `inputs` with `job`'s labeller, settings and
    /// output; the header names both the new labeller and the old ones.
    pub fn new(job: Annotation, inputs: Vec<RelabelInput>) -> Result<Relabel, AnnotateError> {
        let (_, output, replace, settings, mut header, searchers) = job.into_parts();
        let described: Vec<String> = inputs
            .iter()
            .map(|i| i.describe())
            .collect::<Result<_, _>>()
            .map_err(AnnotateError::Input)?;
        header.options.relabelled_from = described.join("; ");
        Ok(Relabel { inputs, output, replace, settings, header, searchers })
    }

    /// Runs it: a reader sends batches of games to the workers, and the
    /// batches come back to be written in input order. A relabelling does
    /// not continue: its output appears only once whole.
    pub fn run(self, sink: &mut dyn RelabelSink) -> Result<RelabelReport, AnnotateError> {
        let output_error = |source| AnnotateError::Output { path: self.output.clone(), source };
        let file = KbzWriter::create_whole(&self.output, &self.header, self.replace)
            .map_err(output_error)?;
        let mut writer = BlockWriter::new(file, BlockLimits::of(&self.header));
        let threads = self.settings.threads.max(1);
        let pv_plies = self.header.options.pv_plies as usize;
        let pool = LabellerPool::new(self.settings.label.engine(), self.searchers)
            .with_tablebases(self.settings.tablebases.clone())
            .tables_only(self.settings.tables_only);
        let keep = self.settings.tables_only;
        let (jobs_tx, jobs_rx) = crossbeam_channel::bounded::<Batch<Vec<GameRecord>>>(threads * 2);
        // Batches between the reader and the writer, queued, being labelled
        // or waiting for an earlier one: at most this many, so that a slow
        // batch does not let the other workers fill memory with the ones
        // after it.
        let in_flight = threads * 4;
        let (permit_tx, permit_rx) = crossbeam_channel::bounded::<()>(in_flight);
        for _ in 0..in_flight {
            let _ = permit_tx.send(());
        }
        let (done_tx, done_rx) = crossbeam_channel::unbounded::<Batch<Labelled>>();
        let mut report = RelabelReport::default();
        let batch_games = self.header.options.block_games.max(1) as usize;
        let inputs = &self.inputs;
        let result = std::thread::scope(|scope| {
            for _ in 0..threads {
                let (jobs, done, pool) = (jobs_rx.clone(), done_tx.clone(), &pool);
                let tables = self.settings.tablebases.clone();
                scope.spawn(move || label_batches(pool.take(), tables, pv_plies, keep, jobs, done));
            }
            drop(done_tx);
            let reader = scope.spawn(move || {
                let mut send = |batch: u64, games: Vec<GameRecord>| {
                    permit_rx.recv().is_ok() && jobs_tx.send((batch, games)).is_ok()
                };
                read_batches(inputs, batch_games, &mut send)
            });
            let written = write_in_order(done_rx, &permit_tx, &mut writer, &mut report, sink)
                .map_err(|e| match e {
                    WriteFailure::Output(e) => output_error(e),
                    WriteFailure::Chain(e) => AnnotateError::Chain(e),
                });
            let read = reader.join().expect("the reader does not panic");
            written.and(read)
        });
        match result {
            Ok(()) => {
                report.bytes_written = writer.finish().map_err(output_error)?;
                report.header = Some(self.header);
                Ok(report)
            }
            Err(e) => {
                // A failed relabelling leaves nothing that looks finished.
                writer.abandon();
                Err(e)
            }
        }
    }
}

/// What a worker sends back: a batch's games relabelled and their counts.
type Labelled = Result<(Vec<GameRecord>, Counts), ChainError>;

/// A worker: batches in, relabelled batches out, until the reader is done.
fn label_batches(
    mut labeller: Box<dyn Labeller>,
    tables: Option<Arc<Tablebases>>,
    pv_plies: usize,
    keep_unlabelled: bool,
    jobs: crossbeam_channel::Receiver<Batch<Vec<GameRecord>>>,
    done: crossbeam_channel::Sender<Batch<Labelled>>,
) {
    for (batch, games) in jobs.iter() {
        let mut counts = Counts::default();
        let out: Result<Vec<GameRecord>, ChainError> = games
            .iter()
            .map(|g| {
                let mut out =
                    relabel_game(labeller.as_mut(), g, pv_plies, keep_unlabelled, &mut counts)?;
                if let Some(tables) = &tables {
                    counts.results_corrected += u64::from(correct_result(tables, &mut out)?);
                }
                Ok(out)
            })
            .collect();
        if done.send((batch, out.map(|o| (o, counts)))).is_err() {
            break;
        }
    }
}

/// The reader: every input's games, numbered again from 0 across the
/// inputs, in batches of `batch_games` given to `send` in order (`false`
/// from `send`: stop).
fn read_batches(
    inputs: &[RelabelInput],
    batch_games: usize,
    send: &mut dyn FnMut(u64, Vec<GameRecord>) -> bool,
) -> Result<(), AnnotateError> {
    let mut batch = 0u64;
    let mut pending: Vec<GameRecord> = Vec::with_capacity(batch_games);
    let mut index = 0u64;
    let mut stopped = false;
    let mut take = |mut g: GameRecord| {
        if stopped {
            return;
        }
        g.index = index;
        index += 1;
        pending.push(g);
        if pending.len() >= batch_games {
            stopped = !send(batch, std::mem::take(&mut pending));
            batch += 1;
        }
    };
    for input in inputs {
        match input {
            RelabelInput::Kbz(p) => {
                let mut r = KbzReader::open(p).map_err(AnnotateError::Input)?;
                while let Some(block) = r.next_block() {
                    block.map_err(AnnotateError::Input)?.2.into_iter().for_each(&mut take);
                }
            }
            RelabelInput::Foreign(kind, p) => {
                kind.games(p, 0, &mut take).map_err(AnnotateError::Input)?;
            }
        }
    }
    if !stopped && !pending.is_empty() {
        send(batch, pending);
    }
    Ok(())
}

/// Why the writer stopped.
enum WriteFailure {
    /// The output could not be written.
    Output(std::io::Error),
    /// A game did not replay.
    Chain(ChainError),
}

/// The writer: batches back in input order, their games through the block
/// writer; a permit goes back to the reader for each batch written.
fn write_in_order(
    done: crossbeam_channel::Receiver<Batch<Labelled>>,
    permits: &crossbeam_channel::Sender<()>,
    writer: &mut BlockWriter,
    report: &mut RelabelReport,
    sink: &mut dyn RelabelSink,
) -> Result<(), WriteFailure> {
    let mut next = 0u64;
    let mut waiting = std::collections::BTreeMap::new();
    let mut failure = None;
    for (batch, out) in done.iter() {
        waiting.insert(batch, out);
        while let Some(out) = waiting.remove(&next) {
            next += 1;
            let _ = permits.try_send(());
            if failure.is_some() {
                continue;
            }
            match out {
                Ok((games, counts)) => {
                    report.labels += counts.labels;
                    report.relabelled += counts.relabelled;
                    report.failed += counts.failed;
                    report.nodes += counts.nodes;
                    report.short_of_limit += counts.short_of_limit;
                    report.past_limit += counts.past_limit;
                    report.refused += counts.refused;
                    report.tablebase += counts.tablebase;
                    report.sign_flips += counts.sign_flips;
                    report.draws_found += counts.draws_found;
                    report.kept += counts.kept;
                    report.results_corrected += counts.results_corrected;
                    for g in games {
                        report.games += 1;
                        if let Err(e) = writer.push(g) {
                            failure = Some(WriteFailure::Output(e));
                            break;
                        }
                    }
                    sink.progress(report.games);
                }
                Err(e) => failure = Some(WriteFailure::Chain(e)),
            }
        }
    }
    failure.map_or(Ok(()), Err)
}
