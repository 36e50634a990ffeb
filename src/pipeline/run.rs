//! The parallel, ordered pipeline: one reader thread cuts the inputs into
//! chunks, worker threads process chunks (parse and replay, or more), and
//! the calling thread receives the results in input order.
//!
//! ```text
//! reader thread ──jobs──► workers (each owns its state) ──results──► caller
//!      ▲                                                        │ reorders by
//!      └──────────────── permits (bounds chunks in flight) ─────┘ sequence number
//! ```
//!
//! A fixed number of permits bounds the chunks between the reader and the
//! caller, so memory stays bounded however large the input and however slow
//! one chunk is. With one thread everything runs on the calling thread.

use std::{
    collections::BTreeMap,
    path::PathBuf,
    sync::atomic::{AtomicBool, Ordering},
};

use crossbeam_channel::{Receiver, Sender, bounded};

use crate::io::{
    filter::GameFilter,
    source::{self, Chunk, ChunkConfig, ChunkData, Compression, Format, InputEvent, Release},
};

/// What the caller receives, in input order.
#[derive(Debug)]
pub enum Event<R> {
    /// An input was opened.
    Start {
        /// Index of the input.
        file: usize,
        /// Its compression.
        compression: Compression,
        /// Its text format.
        format: Format,
    },
    /// A chunk was processed.
    Chunk {
        /// Index of the input.
        file: usize,
        /// Bytes of the input consumed so far (for progress).
        input_pos: u64,
        /// What the worker made of it.
        result: R,
    },
    /// A problem with an input (the run goes on).
    Error {
        /// Index of the input.
        file: usize,
        /// Where, when known.
        offset: Option<u64>,
        /// What went wrong.
        message: String,
    },
    /// An input is finished.
    End {
        /// Index of the input.
        file: usize,
        /// Bytes read.
        bytes_in: u64,
        /// Bytes of text.
        bytes_out: u64,
    },
}

/// Pipeline settings.
#[derive(Clone, Debug)]
pub struct PipelineConfig {
    /// The inputs, in order (`-` is standard input).
    pub inputs: Vec<PathBuf>,
    /// Force a text format instead of sniffing it.
    pub format: Option<Format>,
    /// Worker threads (1: everything on the calling thread).
    pub threads: usize,
    /// Chunking.
    pub chunk: ChunkConfig,
    /// Count the games of each chunk on the reader thread, so each chunk
    /// knows the index of its first game (needed by `--shard`, `--resume`,
    /// `--max-games`; costs a parse per chunk, small next to a search).
    pub count_games: bool,
    /// The game filters of the run, for inputs that can check them before
    /// reading a game's moves (Parquet: on its tag columns). The workers
    /// still apply them: this only saves work.
    pub filter: Option<std::sync::Arc<GameFilter>>,
    /// With `count_games`: the games read so far, counted as the reader
    /// cuts them (before any is processed), for a caller that must know
    /// early whether its inputs hold any.
    pub games_seen: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
}

/// The number of games (PGN) or positions (EPD) in a chunk, counted the
/// way the workers will read them.
pub fn count_games(chunk: &Chunk) -> u64 {
    match chunk.format {
        Format::Pgn => {
            let no_tags: [Vec<u8>; 0] = [];
            let mut reader = crate::io::pgn::GameReader::new(&chunk.data, chunk.offset, &no_tags);
            reader.set_places(chunk.places());
            reader.set_annotations(false);
            let mut n = 0;
            while reader.next_game().is_some() {
                n += 1;
            }
            n
        }
        Format::Epd => chunk
            .data
            .split(|&b| b == b'\n')
            .filter(|line| crate::io::epd::EpdLine::parse(line).is_some())
            .count() as u64,
    }
}

/// With `count_games`: gives a chunk the index of its first game, counts
/// its games into `games` (the games before the next chunk), and says so
/// in `games_seen`.
fn number_games(config: &PipelineConfig, chunk: &mut Chunk, games: &mut u64) {
    if !config.count_games {
        return;
    }
    chunk.first_game = *games;
    *games += count_games(chunk);
    if let Some(seen) = &config.games_seen {
        seen.store(*games, Ordering::Relaxed);
    }
}

/// Runs the pipeline. `init` makes each worker's state, `work` processes a
/// chunk, `on_event` receives everything in input order on the calling
/// thread and returns `false` to stop early.
pub fn run<S, R, I, W, E>(config: &PipelineConfig, init: I, work: W, mut on_event: E)
where
    R: Send,
    I: Fn() -> S + Sync,
    W: Fn(&mut S, &Chunk) -> R + Sync,
    E: FnMut(Event<R>) -> bool,
{
    let threads = config.threads.max(1);
    if threads == 1 {
        return run_inline(config, init(), work, on_event);
    }
    let in_flight = threads * 4;
    let stop = AtomicBool::new(false);
    let (permit_tx, permit_rx) = bounded::<()>(in_flight);
    for _ in 0..in_flight {
        let _ = permit_tx.send(());
    }
    let (job_tx, job_rx) = bounded::<(u64, InputEvent)>(in_flight);
    let (result_tx, result_rx) = bounded::<(u64, Outcome<R>)>(in_flight);
    std::thread::scope(|scope| {
        let stop = &stop;
        scope.spawn(move || read_inputs(config, stop, &permit_rx, &job_tx));
        for _ in 0..threads {
            let (job_rx, result_tx, init, work) = (job_rx.clone(), result_tx.clone(), &init, &work);
            scope.spawn(move || work_chunks(init(), work, stop, job_rx, result_tx));
        }
        drop(result_tx);
        drop(job_rx);
        // The caller's side: restore input order.
        let mut permits = Some(permit_tx);
        let mut pending: BTreeMap<u64, Outcome<R>> = BTreeMap::new();
        let mut release = Release::default();
        let mut next = 0u64;
        for (seq, outcome) in result_rx.iter() {
            if permits.is_none() {
                continue; // Stopped: drain so the workers can finish.
            }
            pending.insert(seq, outcome);
            while let Some((event, cut, mapped)) = pending.remove(&next) {
                next += 1;
                if let Some((file, data)) = mapped {
                    release.after(file, &data);
                }
                let go_on = on_event(event) && cut.is_none_or(&mut on_event);
                if !go_on {
                    stop.store(true, Ordering::Relaxed);
                    // Dropping the permits wakes a reader waiting for one.
                    permits = None;
                    pending.clear();
                    break;
                }
                if let Some(p) = &permits {
                    let _ = p.try_send(());
                }
            }
        }
    });
}

/// Everything on the calling thread: each chunk read, worked and handed to
/// `on_event` in turn.
fn run_inline<S, R, W, E>(config: &PipelineConfig, mut state: S, work: W, mut on_event: E)
where
    W: Fn(&mut S, &Chunk) -> R,
    E: FnMut(Event<R>) -> bool,
{
    let mut go_on = true;
    let mut games = 0u64;
    let mut release = Release::default();
    for (file, path) in config.inputs.iter().enumerate() {
        if !go_on {
            break;
        }
        let filter = config.filter.as_deref();
        source::read_input_filtered(
            file,
            path,
            config.format,
            &config.chunk,
            filter,
            &mut |event| {
                let event = match event {
                    InputEvent::Chunk(mut chunk) => {
                        number_games(config, &mut chunk, &mut games);
                        let result = work(&mut state, &chunk);
                        release.after(chunk.file, &chunk.data);
                        let cut = cut_short(&chunk);
                        go_on = on_event(chunk_event(&chunk, result));
                        if go_on && let Some(cut) = cut {
                            go_on = on_event(cut);
                        }
                        return go_on;
                    }
                    other => pass_through(other),
                };
                go_on = on_event(event);
                go_on
            },
        );
    }
}

/// The reader thread: every input's events, numbered in order, each sent
/// once a permit allows (the permits bound the chunks in flight).
fn read_inputs(
    config: &PipelineConfig,
    stop: &AtomicBool,
    permits: &Receiver<()>,
    jobs: &Sender<(u64, InputEvent)>,
) {
    let mut seq = 0u64;
    let mut games = 0u64;
    for (file, path) in config.inputs.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let filter = config.filter.as_deref();
        let emit = &mut |mut event: InputEvent| {
            if stop.load(Ordering::Relaxed) || permits.recv().is_err() {
                return false;
            }
            if let InputEvent::Chunk(chunk) = &mut event {
                number_games(config, chunk, &mut games);
            }
            let ok = jobs.send((seq, event)).is_ok();
            seq += 1;
            ok
        };
        source::read_input_filtered(file, path, config.format, &config.chunk, filter, emit);
    }
}

/// A worker thread: chunks worked as they come, the outcomes sent back with
/// their numbers.
fn work_chunks<S, R, W>(
    mut state: S,
    work: &W,
    stop: &AtomicBool,
    jobs: Receiver<(u64, InputEvent)>,
    results: Sender<(u64, Outcome<R>)>,
) where
    W: Fn(&mut S, &Chunk) -> R,
{
    for (seq, event) in jobs {
        // Stopped: the caller drops every result from now on, so drain the
        // queue without working.
        if stop.load(Ordering::Relaxed) {
            continue;
        }
        let outcome = match event {
            InputEvent::Chunk(chunk) => {
                let result = work(&mut state, &chunk);
                // A mapped chunk's pages are released in input order, on the
                // caller's side.
                let mapped = matches!(chunk.data, ChunkData::Mapped(..))
                    .then(|| (chunk.file, chunk.data.clone()));
                (chunk_event(&chunk, result), cut_short(&chunk), mapped)
            }
            other => (pass_through(other), None, None),
        };
        if results.send((seq, outcome)).is_err() {
            break;
        }
    }
}

/// A chunk's event, an error if its file was cut short under it, and a
/// mapped chunk's input and text, whose pages the caller releases in order.
type Outcome<R> = (Event<R>, Option<Event<R>>, Option<(usize, ChunkData)>);

/// The error for a mapped chunk whose file was truncated while it was
/// processed: pages past the new end read as zeros, so its games after
/// that byte are not what the file held.
fn cut_short<R>(chunk: &Chunk) -> Option<Event<R>> {
    let now = chunk.data.cut_short()?;
    Some(Event::Error {
        file: chunk.file,
        offset: Some(now),
        message: format!(
            "the file was cut to {now} bytes while the chunk at byte {} was read: \
             its games past byte {now} are not valid",
            chunk.offset
        ),
    })
}

fn chunk_event<R>(chunk: &Chunk, result: R) -> Event<R> {
    Event::Chunk { file: chunk.file, input_pos: chunk.input_pos, result }
}

fn pass_through<R>(event: InputEvent) -> Event<R> {
    match event {
        InputEvent::Start { file, compression, format, .. } => {
            Event::Start { file, compression, format }
        }
        InputEvent::Error { file, offset, message } => Event::Error { file, offset, message },
        InputEvent::End { file, bytes_in, bytes_out } => Event::End { file, bytes_in, bytes_out },
        InputEvent::Chunk(_) => unreachable!("chunks are processed, not passed through"),
    }
}
