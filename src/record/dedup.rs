//! Duplicate positions dropped across files, with a policy for which label
//! to keep: the first met, the last met, or the deepest (the first of the
//! deepest on a tie).
//!
//! Two labels are of the same position when their Polyglot keys are equal
//! and so is the state that changes what a search finds there:
//!
//! * the 50-move counter when it is 70 or more (a search can then reach the
//!   100-ply limit; below that it counts as 0);
//! * how often the position occurred earlier in its game within that
//!   counter's reach, capped at 2 (a repetition is scored as a draw).
//!
//! The winners are found in one pass over the labels, in a hash map of about
//! [`BYTES_PER_ENTRY`] bytes per distinct position. When the map would
//! outgrow the memory allowed, it is written to a temporary file as a run
//! sorted by key and emptied; the runs are merged at the end. Which labels
//! are kept is one bit per label, in a temporary file mapped into memory;
//! a second pass writes the kept labels (games keep their moves, so chains
//! stay whole). The temporary files have no name (made nameless as they are
//! created, in the output's directory): they go with the process, however
//! it ends. The output appears only once complete
//! ([`KbzWriter::create_whole`]).

use std::{
    collections::{BinaryHeap, HashMap},
    fs::{File, OpenOptions},
    io::{self, BufReader, BufWriter, Read, Seek, Write},
    path::{Path, PathBuf},
};

use crate::record::{
    chain::{ChainError, walk},
    file::{KbzReader, KbzWriter, RecordError},
    format::{Block, GameRecord, Header},
};

/// Which label of a position to keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Keep {
    /// The first met (inputs in order, games in order).
    First,
    /// The last met.
    Last,
    /// The deepest search; the first met of the deepest on a tie.
    Deepest,
}

/// The memory a distinct position takes in the map: its key, the label's
/// order and depth, and the map's own overhead.
pub const BYTES_PER_ENTRY: usize = 40;

/// What a deduplication did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct DedupReport {
    /// Games written.
    pub games: u64,
    /// Labels read.
    pub labels: u64,
    /// Distinct positions (labels kept).
    pub kept: u64,
    /// Sorted runs written to disk (0: everything fitted in memory).
    pub runs: u64,
    /// Bytes written.
    pub bytes_written: u64,
}

/// A failure of a deduplication.
#[derive(Debug, thiserror::Error)]
pub enum DedupError {
    /// An input cannot be read.
    #[error(transparent)]
    Input(#[from] RecordError),
    /// A game does not replay.
    #[error(transparent)]
    Chain(#[from] ChainError),
    /// The output or a temporary file cannot be written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
}

/// The dedup key of each labelled position of a game, in label order.
pub fn label_keys(record: &GameRecord) -> Result<Vec<u64>, ChainError> {
    let mut keys = Vec::with_capacity(record.labels.len());
    let mut history: Vec<u64> = Vec::with_capacity(record.moves.len() + 1);
    walk(record, |step| {
        let pos = step.pos;
        let key = pos.key();
        if step.label.is_some() {
            let rule50 = pos.rule50();
            let reach = (rule50 as usize).min(history.len());
            // Earlier occurrences: same side to move, every second ply back.
            let earlier = history[history.len() - reach..]
                .iter()
                .rev()
                .skip(1)
                .step_by(2)
                .filter(|&&k| k == key)
                .count()
                .min(2) as u64;
            let counter = if rule50 >= 70 { u64::from(rule50) } else { 0 };
            let state = counter << 2 | earlier;
            // Mixed so that equal keys with different states part ways.
            keys.push(key ^ state.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17));
        }
        history.push(key);
    })?;
    Ok(keys)
}

/// One label seen: its order among all labels and its depth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Seen {
    order: u64,
    depth: u8,
}

impl Seen {
    /// Whether `self` beats `other` under `keep`.
    fn beats(self, other: Seen, keep: Keep) -> bool {
        match keep {
            Keep::First => self.order < other.order,
            Keep::Last => self.order > other.order,
            Keep::Deepest => {
                self.depth > other.depth || (self.depth == other.depth && self.order < other.order)
            }
        }
    }
}

const RUN_RECORD: usize = 17;

/// A sorted run on disk, read back record by record.
struct Run {
    reader: BufReader<File>,
}

impl Run {
    fn next(&mut self) -> io::Result<Option<(u64, Seen)>> {
        let mut buf = [0u8; RUN_RECORD];
        match self.reader.read_exact(&mut buf) {
            Ok(()) => {
                let key = u64::from_le_bytes(buf[..8].try_into().expect("8 bytes"));
                let order = u64::from_le_bytes(buf[8..16].try_into().expect("8 bytes"));
                Ok(Some((key, Seen { order, depth: buf[16] })))
            }
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// Runs merged at once.
const MERGE_FAN_IN: usize = 64;

/// Merges sorted runs by key, calling `out` with each key's winner in key
/// order.
fn merge_runs(
    runs: &[File],
    keep: Keep,
    mut out: impl FnMut(u64, Seen) -> io::Result<()>,
) -> io::Result<()> {
    let mut readers: Vec<Run> = runs
        .iter()
        .map(|f| {
            let mut f = f.try_clone()?;
            f.rewind()?;
            Ok(Run { reader: BufReader::new(f) })
        })
        .collect::<io::Result<_>>()?;
    // (key, run) smallest first.
    let mut heap = BinaryHeap::new();
    let mut heads: Vec<Option<(u64, Seen)>> = Vec::with_capacity(readers.len());
    for (i, r) in readers.iter_mut().enumerate() {
        let head = r.next()?;
        if let Some((key, _)) = head {
            heap.push(std::cmp::Reverse((key, i)));
        }
        heads.push(head);
    }
    let mut current: Option<(u64, Seen)> = None;
    while let Some(std::cmp::Reverse((key, i))) = heap.pop() {
        let (_, seen) = heads[i].take().expect("a head for each run in the heap");
        current = match current {
            Some((k, best)) if k == key => {
                Some((k, if seen.beats(best, keep) { seen } else { best }))
            }
            Some((k, best)) => {
                out(k, best)?;
                Some((key, seen))
            }
            None => Some((key, seen)),
        };
        let next = readers[i].next()?;
        if let Some((k, _)) = next {
            heap.push(std::cmp::Reverse((k, i)));
        }
        heads[i] = next;
    }
    if let Some((k, best)) = current {
        out(k, best)?;
    }
    Ok(())
}

/// Where one deduplication makes its temporary files.
struct Scratch {
    dir: PathBuf,
    made: usize,
}

impl Scratch {
    /// A temporary file with no name, read and written: it goes when the
    /// last handle closes, however the process ends. Linux makes it nameless
    /// from the start (`O_TMPFILE`); elsewhere, or on a file system without
    /// it, it is named and removed at once.
    fn file(&mut self) -> io::Result<File> {
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::fs::OpenOptionsExt;
            if let Ok(f) = OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(libc::O_TMPFILE)
                .open(&self.dir)
            {
                return Ok(f);
            }
        }
        let path = self.dir.join(format!(".kibitz-dedup-{}-{}", std::process::id(), self.made));
        self.made += 1;
        let f = OpenOptions::new().read(true).write(true).create_new(true).open(&path)?;
        std::fs::remove_file(&path)?;
        Ok(f)
    }
}

/// Drops duplicate positions from `inputs` into `output` (see the module's
/// documentation), with at most `memory` bytes of map before spilling.
/// The output's header is the first input's, its inputs all of theirs and
/// `dedup` set; games are numbered again from 0.
pub fn dedup_files(
    inputs: &[PathBuf],
    output: &Path,
    keep: Keep,
    memory: usize,
    force: bool,
) -> Result<DedupReport, DedupError> {
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| DedupError::Io { path: path.clone(), source }
    };
    if !force && output.exists() {
        let source = io::Error::new(io::ErrorKind::AlreadyExists, "exists");
        return Err(DedupError::Io { path: output.to_path_buf(), source });
    }
    let scratch_dir =
        output.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut scratch = Scratch { dir: scratch_dir.to_path_buf(), made: 0 };
    let scratch_err = |source| DedupError::Io { path: scratch_dir.to_path_buf(), source };
    let capacity = (memory / BYTES_PER_ENTRY).max(16);
    let mut report = DedupReport::default();

    // Pass 1: the winner of every key, in memory or in sorted runs.
    let mut map: HashMap<u64, Seen> = HashMap::new();
    let mut runs: Vec<File> = Vec::new();
    let mut order = 0u64;
    let spill = |map: &mut HashMap<u64, Seen>, scratch: &mut Scratch| -> io::Result<File> {
        let mut file = scratch.file()?;
        let mut entries: Vec<(u64, Seen)> = map.drain().collect();
        entries.sort_unstable_by_key(|e| e.0);
        let mut w = BufWriter::new(&mut file);
        for (key, seen) in entries {
            w.write_all(&key.to_le_bytes())?;
            w.write_all(&seen.order.to_le_bytes())?;
            w.write_all(&[seen.depth])?;
        }
        w.flush()?;
        drop(w);
        Ok(file)
    };
    for input in inputs {
        let mut reader = KbzReader::open(input)?;
        while let Some(block) = reader.next_block() {
            let (_, _, games) = block?;
            for g in &games {
                for (key, label) in label_keys(g)?.into_iter().zip(&g.labels) {
                    let seen = Seen { order, depth: label.depth };
                    order += 1;
                    map.entry(key)
                        .and_modify(|s| {
                            if seen.beats(*s, keep) {
                                *s = seen;
                            }
                        })
                        .or_insert(seen);
                    if map.len() >= capacity {
                        runs.push(spill(&mut map, &mut scratch).map_err(scratch_err)?);
                    }
                }
            }
        }
    }
    report.labels = order;

    // The kept labels: a bit each, in a mapped temporary file.
    let bits_file = scratch.file().map_err(scratch_err)?;
    bits_file.set_len(order.div_ceil(8).max(1)).map_err(scratch_err)?;
    // Safety: a file this process created and alone writes (it has no
    // name), mapped once.
    let mut bits = unsafe { memmap2::MmapMut::map_mut(&bits_file) }.map_err(scratch_err)?;
    let mut set = |o: u64| bits[(o / 8) as usize] |= 1 << (o % 8);
    if runs.is_empty() {
        for seen in map.values() {
            set(seen.order);
        }
    } else {
        if !map.is_empty() {
            runs.push(spill(&mut map, &mut scratch).map_err(scratch_err)?);
        }
        report.runs = runs.len() as u64;
        // Merge the runs a group at a time (open files stay few), each
        // merge keeping one winner per key, down to one last merge.
        while runs.len() > MERGE_FAN_IN {
            let mut merged = Vec::with_capacity(runs.len().div_ceil(MERGE_FAN_IN));
            for group in runs.chunks(MERGE_FAN_IN) {
                let mut file = scratch.file().map_err(scratch_err)?;
                let mut w = BufWriter::new(&mut file);
                merge_runs(group, keep, |key, seen| {
                    w.write_all(&key.to_le_bytes())?;
                    w.write_all(&seen.order.to_le_bytes())?;
                    w.write_all(&[seen.depth])
                })
                .and_then(|()| w.flush())
                .map_err(scratch_err)?;
                drop(w);
                merged.push(file);
            }
            runs = merged;
        }
        merge_runs(&runs, keep, |_, seen| {
            set(seen.order);
            Ok(())
        })
        .map_err(scratch_err)?;
    }
    drop(map);

    // Pass 2: the games again, with the kept labels.
    let first = KbzReader::open(&inputs[0])?;
    let mut header: Header = first.header.clone();
    header.options.dedup = true;
    header.inputs = Vec::new();
    for input in inputs {
        header.inputs.extend(KbzReader::open(input)?.header.inputs);
    }
    let mut writer = KbzWriter::create_whole(output, &header, force).map_err(io_err(output))?;
    let mut order = 0u64;
    let mut index = 0u64;
    let mut pending: Vec<GameRecord> = Vec::new();
    let block_games = header.options.block_games.max(1) as usize;
    let written = (|| -> Result<(), DedupError> {
        for input in inputs {
            let mut reader = KbzReader::open(input)?;
            while let Some(block) = reader.next_block() {
                let (_, _, games) = block?;
                for mut g in games {
                    g.index = index;
                    index += 1;
                    let labels = std::mem::take(&mut g.labels);
                    for l in labels {
                        if bits[(order / 8) as usize] & (1 << (order % 8)) != 0 {
                            g.labels.push(l);
                        }
                        order += 1;
                    }
                    report.kept += g.labels.len() as u64;
                    pending.push(g);
                    if pending.len() >= block_games {
                        report.games += pending.len() as u64;
                        writer
                            .write_block(&Block::from_games(&std::mem::take(&mut pending)))
                            .map_err(io_err(output))?;
                    }
                }
            }
        }
        if !pending.is_empty() {
            report.games += pending.len() as u64;
            writer.write_block(&Block::from_games(&pending)).map_err(io_err(output))?;
        }
        Ok(())
    })();
    match written {
        Ok(()) => {
            report.bytes_written = writer.finish().map_err(io_err(output))?;
            Ok(report)
        }
        Err(e) => {
            writer.abandon();
            Err(e)
        }
    }
}
