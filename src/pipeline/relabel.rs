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
    sync::Mutex,
};

use crate::{
    chess::{mv::Move, position::Position},
    pipeline::{
        annotate::{LabelContext, Labeller},
        annotation::{AnnotateError, Annotation, LabelWith},
        engine::EngineLabeller,
    },
    record::{
        chain::{ChainError, walk},
        file::{KbzReader, KbzWriter, RecordError},
        format::{
            Alternatives, Block, GameRecord, Header, Label, LabelSource, PackedBoard, Pv,
            label_score, move_index,
        },
    },
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
    /// Labels the new labeller could not give (an engine failure).
    pub failed: u64,
    /// Nodes searched.
    pub nodes: u64,
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
    /// A Stockfish binpack file.
    Binpack(PathBuf),
    /// A Stockfish plain file (`fen`, `move`, `score`, `ply`, `result`,
    /// `e`); a record whose position follows the previous one's move
    /// continues its game.
    Plain(PathBuf),
}

impl RelabelInput {
    /// The input a file is: binpack by its extension, `.kbz` by its
    /// extension (an error if it does not open) or by its header; `None` for
    /// anything else (PGN, EPD: the annotate pipeline's).
    pub fn detect(path: &Path) -> Result<Option<RelabelInput>, RecordError> {
        if path.extension().is_some_and(|e| e == "binpack") {
            return Ok(Some(RelabelInput::Binpack(path.to_path_buf())));
        }
        let mut head = [0u8; 4];
        if std::fs::File::open(path)
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
            .is_ok()
            && &head == b"fen "
        {
            return Ok(Some(RelabelInput::Plain(path.to_path_buf())));
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
                    LabelSource::Engine => o.engine.clone(),
                };
                let net = if o.net.is_empty() { String::new() } else { format!(", net {}", o.net) };
                format!("{}: {what}{net}", p.display())
            }
            RelabelInput::Binpack(p) => format!("{}: binpack scores", p.display()),
            RelabelInput::Plain(p) => format!("{}: plain scores", p.display()),
        })
    }
}

/// The games of a binpack file, its chains as games (numbered from
/// `first`), each entry's position labelled with its score and its move
/// played; calls `f` with each.
pub fn binpack_games(
    path: &Path,
    first: u64,
    mut f: impl FnMut(GameRecord),
) -> Result<u64, RecordError> {
    let bad = |message: String| RecordError { path: path.to_path_buf(), offset: 0, message };
    let file = std::fs::File::open(path).map_err(|e| bad(e.to_string()))?;
    // The reader is another crate's: a malformed file must not take the
    // run down with a panic.
    let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut games = 0u64;
        let mut reader = match sfbinpack::CompressedTrainingDataEntryReader::new(file) {
            Ok(r) => r,
            Err(sfbinpack::CompressedReaderError::EndOfFile) => return Ok(0),
            Err(e) => return Err(format!("{e:?}")),
        };
        let mut current: Option<(Position, GameRecord)> = None;
        while reader.has_next() {
            let entry = reader.next();
            let continues = reader.is_next_entry_continuation();
            if current.is_none() {
                let fen = entry.pos.fen().map_err(|e| format!("{e:?}"))?;
                let start = Position::from_fen(&fen)
                    .or_else(|_| Position::from_fen_960(&fen))
                    .map_err(|e| format!("{fen}: {e}"))?;
                // The result as White's: 0 Black won, 1 draw, 2 White won.
                let white = if start.side_to_move() == crate::Color::White {
                    entry.result
                } else {
                    -entry.result
                };
                let result = (white.signum() + 1) as u8;
                let record = GameRecord::new(
                    first + games,
                    PackedBoard::pack(&start),
                    result,
                    Default::default(),
                    Vec::new(),
                );
                current = Some((start, record));
            }
            let Some((pos, record)) = current.as_mut() else { continue };
            let m = pos
                .parse_uci(&entry.mv.as_uci())
                .ok()
                .filter(|&m| !m.is_null() && pos.is_legal(m))
                .ok_or_else(|| format!("game {}: {} is not legal", games + 1, entry.mv.as_uci()))?;
            let index = move_index(pos, m).ok_or_else(|| "a move out of range".to_string())?;
            record.labels.push(Label {
                ply: record.moves.len().min(u16::MAX as usize) as u16,
                score: entry.score,
                best: index,
                depth: 0,
                pv: Pv::default(),
                alternatives: Alternatives::default(),
            });
            record.moves.push(index);
            pos.do_move(m);
            if !continues {
                let (_, record) = current.take().expect("a game in progress");
                f(record);
                games += 1;
            }
        }
        Ok(games)
    }));
    match read {
        Ok(Ok(games)) => Ok(games),
        Ok(Err(why)) => Err(bad(why)),
        Err(_) => Err(bad("not a readable binpack file".to_string())),
    }
}

/// The games of a Stockfish plain file (numbered from `first`): each
/// record's position labelled with its score and its move played, a record
/// whose position is the one the previous record's move leads to continuing
/// that game; calls `f` with each.
pub fn plain_games(
    path: &Path,
    first: u64,
    mut f: impl FnMut(GameRecord),
) -> Result<u64, RecordError> {
    use std::io::BufRead;
    let err = |line: usize, message: String| RecordError {
        path: path.to_path_buf(),
        offset: line as u64,
        message: format!("line {line}: {message}"),
    };
    let file = std::fs::File::open(path).map_err(|e| err(0, e.to_string()))?;
    let mut games = 0u64;
    // The game being read, and its position after its last move.
    let mut current: Option<(Position, GameRecord)> = None;
    let (mut fen, mut mv, mut score, mut result) = (None, None, None, None);
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| err(n + 1, e.to_string()))?;
        let (key, value) = line.split_once(' ').unwrap_or((line.as_str(), ""));
        match key {
            "fen" => fen = Some(value.to_string()),
            "move" => mv = Some(value.trim().to_string()),
            "score" => score = value.trim().parse::<i32>().ok(),
            "result" => result = value.trim().parse::<i32>().ok(),
            "ply" => {}
            "e" => {
                let (Some(text), Some(uci), Some(score), Some(result)) =
                    (fen.take(), mv.take(), score.take(), result.take())
                else {
                    return Err(err(n + 1, "a record without fen, move, score or result".into()));
                };
                let pos = Position::from_fen(&text)
                    .or_else(|_| Position::from_fen_960(&text))
                    .map_err(|e| err(n + 1, format!("{text}: {e}")))?;
                let continues = current
                    .as_ref()
                    .is_some_and(|(after, _)| after.key() == pos.key() && after.fen() == pos.fen());
                if !continues {
                    if let Some((_, done)) = current.take() {
                        f(done);
                        games += 1;
                    }
                    let white =
                        if pos.side_to_move() == crate::Color::White { result } else { -result };
                    let record = GameRecord::new(
                        first + games,
                        PackedBoard::pack(&pos),
                        (white.signum() + 1) as u8,
                        Default::default(),
                        Vec::new(),
                    );
                    current = Some((pos.clone(), record));
                }
                let (after, record) = current.as_mut().expect("a game in progress");
                let m = after
                    .parse_uci(&uci)
                    .ok()
                    .filter(|&m| !m.is_null() && after.is_legal(m))
                    .ok_or_else(|| err(n + 1, format!("{uci} is not legal in {text}")))?;
                let index =
                    move_index(after, m).ok_or_else(|| err(n + 1, "a move out of range".into()))?;
                record.labels.push(Label {
                    ply: record.moves.len().min(u16::MAX as usize) as u16,
                    score: label_score(score),
                    best: index,
                    depth: 0,
                    pv: Pv::default(),
                    alternatives: Alternatives::default(),
                });
                record.moves.push(index);
                after.do_move(m);
            }
            _ => return Err(err(n + 1, format!("not a plain record line: {line:?}"))),
        }
    }
    if let Some((_, done)) = current.take() {
        f(done);
        games += 1;
    }
    Ok(games)
}

/// Counts of one worker's games.
#[derive(Default)]
struct Counts {
    labels: u64,
    relabelled: u64,
    failed: u64,
    nodes: u64,
}

/// One game relabelled: the same plies, the new labeller's labels.
fn relabel_game(
    labeller: &mut dyn Labeller,
    record: &GameRecord,
    pv_plies: usize,
    counts: &mut Counts,
) -> Result<GameRecord, ChainError> {
    let start =
        PackedBoard::unpack(&record.start).ok_or(ChainError::BadStart { game: record.index })?;
    let start_fen = start.fen();
    labeller.new_game(start.is_chess960());
    let mut made: Vec<Move> = Vec::with_capacity(record.moves.len());
    let mut out = record.clone();
    out.labels.clear();
    walk(record, |step| {
        if step.label.is_some() {
            counts.labels += 1;
            let mut pos = step.pos.clone();
            let ctx = LabelContext {
                game: record.index,
                ply: step.ply,
                start_fen: &start_fen,
                moves: &made,
            };
            match labeller.label(&mut pos, &ctx) {
                Some(l) => {
                    counts.relabelled += 1;
                    counts.nodes += l.nodes;
                    let best = l.best.and_then(|m| move_index(&pos, m)).unwrap_or(255);
                    let pv = match l.best {
                        Some(b) if pv_plies > 0 => {
                            let line = if l.pv.first() == Some(&b) { &l.pv[..] } else { &[b][..] };
                            Pv::from_moves(&pos, line, pv_plies)
                        }
                        _ => Pv::default(),
                    };
                    let alternatives: Vec<(u8, i16)> = l
                        .alternatives
                        .iter()
                        .filter_map(|&(m, s)| Some((move_index(&pos, m)?, label_score(s))))
                        .collect();
                    out.labels.push(Label {
                        ply: step.ply.min(u16::MAX as usize) as u16,
                        score: label_score(l.score),
                        best,
                        depth: l.depth,
                        pv,
                        alternatives: Alternatives::new(&alternatives),
                    });
                }
                None => counts.failed += 1,
            }
        }
        if let Some(m) = step.played {
            made.push(m);
        }
    })?;
    Ok(out)
}

/// Relabels `inputs` into the job's output with the job's labeller and
/// settings (the selection settings do not apply: the positions are the
/// inputs'). `progress` hears the games done.
pub fn relabel(
    job: Annotation,
    inputs: &[RelabelInput],
    progress: &mut dyn FnMut(u64),
) -> Result<RelabelReport, AnnotateError> {
    let (_, output, replace, settings, mut header, searchers) = job.into_parts();
    let described: Vec<String> = inputs
        .iter()
        .map(|i| i.describe())
        .collect::<Result<_, _>>()
        .map_err(AnnotateError::Input)?;
    header.options.relabelled_from = described.join("; ");
    let output_error = |source| AnnotateError::Output { path: output.clone(), source };
    // A relabelling does not continue: its output appears only once whole.
    let mut writer = KbzWriter::create_whole(&output, &header, replace).map_err(output_error)?;
    let threads = settings.threads.max(1);
    let pv_plies = header.options.pv_plies as usize;
    let block_games = header.options.block_games.max(1) as usize;
    let searchers = Mutex::new(searchers);
    let make_labeller = || -> Box<dyn Labeller> {
        match &settings.label {
            LabelWith::Engine(c) => Box::new(EngineLabeller::new(c.clone())),
            _ => Box::new(
                searchers
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .pop()
                    .expect("a searcher per worker"),
            ),
        }
    };
    let (jobs_tx, jobs_rx) = crossbeam_channel::bounded::<(u64, Vec<GameRecord>)>(threads * 2);
    // Batches between the reader and the writer, queued, being labelled or
    // waiting for an earlier one: at most this many, so that a slow batch
    // does not let the other workers fill memory with the ones after it.
    let in_flight = threads * 4;
    let (permit_tx, permit_rx) = crossbeam_channel::bounded::<()>(in_flight);
    for _ in 0..in_flight {
        let _ = permit_tx.send(());
    }
    let (done_tx, done_rx) =
        crossbeam_channel::unbounded::<(u64, Result<(Vec<GameRecord>, Counts), ChainError>)>();
    let mut report = RelabelReport::default();
    let result: Result<(), AnnotateError> = std::thread::scope(|scope| {
        for _ in 0..threads {
            let jobs = jobs_rx.clone();
            let done = done_tx.clone();
            let make = &make_labeller;
            scope.spawn(move || {
                let mut labeller = make();
                for (batch, games) in jobs.iter() {
                    let mut counts = Counts::default();
                    let out: Result<Vec<GameRecord>, ChainError> = games
                        .iter()
                        .map(|g| relabel_game(labeller.as_mut(), g, pv_plies, &mut counts))
                        .collect();
                    if done.send((batch, out.map(|o| (o, counts)))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done_tx);
        // The reader: batches of whole blocks, sent in order.
        let reader = scope.spawn(move || -> Result<u64, AnnotateError> {
            let mut batch = 0u64;
            let mut pending: Vec<GameRecord> = Vec::with_capacity(block_games);
            let mut index = 0u64;
            let send = |games: Vec<GameRecord>, batch: &mut u64| {
                let ok = permit_rx.recv().is_ok() && jobs_tx.send((*batch, games)).is_ok();
                *batch += 1;
                ok
            };
            for input in inputs {
                match input {
                    RelabelInput::Kbz(p) => {
                        let mut r = KbzReader::open(p).map_err(AnnotateError::Input)?;
                        while let Some(block) = r.next_block() {
                            let (_, _, games) = block.map_err(AnnotateError::Input)?;
                            for mut g in games {
                                g.index = index;
                                index += 1;
                                pending.push(g);
                                if pending.len() >= block_games
                                    && !send(std::mem::take(&mut pending), &mut batch)
                                {
                                    return Ok(batch);
                                }
                            }
                        }
                    }
                    RelabelInput::Plain(p) => {
                        let mut stopped = false;
                        let n = plain_games(p, index, |g| {
                            if stopped {
                                return;
                            }
                            pending.push(g);
                            if pending.len() >= block_games {
                                stopped = !send(std::mem::take(&mut pending), &mut batch);
                            }
                        })
                        .map_err(AnnotateError::Input)?;
                        index += n;
                    }
                    RelabelInput::Binpack(p) => {
                        let mut stopped = false;
                        let n = binpack_games(p, index, |g| {
                            if stopped {
                                return;
                            }
                            pending.push(g);
                            if pending.len() >= block_games {
                                stopped = !send(std::mem::take(&mut pending), &mut batch);
                            }
                        })
                        .map_err(AnnotateError::Input)?;
                        index += n;
                    }
                }
            }
            if !pending.is_empty() {
                send(pending, &mut batch);
            }
            Ok(batch)
        });
        // The writer: batches back in order, one block each.
        let mut next = 0u64;
        let mut waiting = std::collections::BTreeMap::new();
        let mut failure = None;
        for (batch, out) in done_rx.iter() {
            waiting.insert(batch, out);
            while let Some(out) = waiting.remove(&next) {
                next += 1;
                let _ = permit_tx.try_send(());
                match out {
                    Ok((games, counts)) => {
                        report.games += games.len() as u64;
                        report.labels += counts.labels;
                        report.relabelled += counts.relabelled;
                        report.failed += counts.failed;
                        report.nodes += counts.nodes;
                        if failure.is_none()
                            && let Err(e) = writer.write_block(&Block::from_games(&games))
                        {
                            failure = Some(output_error(e));
                        }
                        progress(report.games);
                    }
                    Err(e) => failure = failure.or(Some(AnnotateError::Chain(e))),
                }
            }
        }
        let read = reader.join().expect("the reader does not panic");
        match (failure, read) {
            (Some(e), _) | (None, Err(e)) => Err(e),
            (None, Ok(_)) => Ok(()),
        }
    });
    match result {
        Ok(()) => {
            report.bytes_written = writer.finish().map_err(output_error)?;
            report.header = Some(header);
            Ok(report)
        }
        Err(e) => {
            // A failed relabelling leaves nothing that looks finished.
            writer.abandon();
            Err(e)
        }
    }
}
