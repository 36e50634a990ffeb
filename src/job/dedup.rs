//! Duplicate positions dropped across files, with a policy for which label
//! to keep: the first met, the last met, or the deepest (the first of the
//! deepest on a tie).
//!
//! The winners are found in one pass over the labels, in a hash map of about
//! [`BYTES_PER_ENTRY`] bytes per distinct position. When the map would
//! outgrow the memory allowed, it is written to a temporary file as a run
//! sorted by key and emptied; the runs are merged at the end. Which labels
//! are kept is one bit per label, in a temporary file mapped into memory;
//! a second pass writes the kept labels (games keep their moves, so chains
//! stay whole). When two labels are of the same position is
//! [`crate::record::position_key`]'s to say. The temporary files have no name (made nameless as they are
//! created, in the output's directory): they go with the process, however
//! it ends. The output appears only once complete
//! ([`KbzWriter::create_whole`]).

use std::{
    collections::{BinaryHeap, HashMap},
    fs::{File, OpenOptions},
    io::{self, BufReader, BufWriter, Read, Seek, Write},
    path::{Path, PathBuf},
};

use crate::{
    job::common::input_infos,
    record::{
        chain::ChainError,
        format::{FORMAT_VERSION, Header, LabelSource, MAGIC, Options},
        import::{Foreign, for_each_game},
        position_key::label_keys,
        reader::{KbzReader, RecordError},
        writer::{BlockLimits, BlockWriter, KbzWriter},
    },
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

/// How a deduplication runs.
#[derive(Clone, Copy, Debug)]
pub struct DedupSettings {
    /// Which label of a position to keep.
    pub keep: Keep,
    /// Bytes of map at most before the positions seen spill to disk.
    pub memory: usize,
    /// Replace an output that exists.
    pub replace: bool,
}

impl Default for DedupSettings {
    /// The first label of each position, 1 GiB of map, no replacing.
    fn default() -> DedupSettings {
        DedupSettings { keep: Keep::First, memory: 1 << 30, replace: false }
    }
}

/// What a deduplication tells its caller as it goes.
pub trait DedupSink {
    /// Labels read in the first pass (finding the winners) so far.
    fn finding(&mut self, _labels: u64) {}
    /// Games written in the second pass so far.
    fn writing(&mut self, _games: u64) {}
}

/// A sink that hears nothing.
impl DedupSink for () {}

/// A deduplication of `.kbz` files into one (see the module's
/// documentation). The output's header is the first input's, with all the
/// inputs' inputs and `dedup` set; games are numbered again from 0; blocks
/// close by [`BlockLimits`].
pub struct Dedup {
    inputs: Vec<PathBuf>,
    output: PathBuf,
    settings: DedupSettings,
}

impl Dedup {
    /// Checks the job: an output that exists (unless replacing) or that is
    /// one of the inputs is refused before anything is read.
    pub fn new(
        inputs: Vec<PathBuf>,
        output: PathBuf,
        settings: DedupSettings,
    ) -> Result<Dedup, DedupError> {
        if let Some(input) = inputs.iter().find(|i| crate::io::same_file(&output, i)) {
            let source = io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "is the input {}: it would be overwritten before it is read",
                    input.display()
                ),
            );
            return Err(DedupError::Io { path: output, source });
        }
        if !settings.replace && output.exists() {
            let source = io::Error::new(io::ErrorKind::AlreadyExists, "exists");
            return Err(DedupError::Io { path: output, source });
        }
        if let Err(source) = crate::io::check_output_folder(&output) {
            return Err(DedupError::Io { path: output, source });
        }
        Ok(Dedup { inputs, output, settings })
    }

    /// A file replaced by its own deduplication, once that is complete
    /// (annotate's and merge's `keep` policies after writing).
    pub fn in_place(file: &Path, keep: Keep, memory: usize) -> Dedup {
        let settings = DedupSettings { keep, memory, replace: true };
        Dedup { inputs: vec![file.to_path_buf()], output: file.to_path_buf(), settings }
    }

    /// Runs the two passes.
    pub fn run(self, sink: &mut dyn DedupSink) -> Result<DedupReport, DedupError> {
        let scratch_dir =
            self.output.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let mut scratch = Scratch { dir: scratch_dir.to_path_buf(), made: 0 };
        let mut report = DedupReport::default();
        let winners = self.find_winners(&mut scratch, &mut report, sink)?;
        let bits = self
            .mark_winners(winners, &mut scratch, &mut report)
            .map_err(|source| DedupError::Io { path: scratch_dir.to_path_buf(), source })?;
        self.write_kept(&bits, &mut report, sink)?;
        Ok(report)
    }

    /// Pass 1: the winner of every key, in memory or in sorted runs.
    fn find_winners(
        &self,
        scratch: &mut Scratch,
        report: &mut DedupReport,
        sink: &mut dyn DedupSink,
    ) -> Result<Winners, DedupError> {
        let keep = self.settings.keep;
        let capacity = (self.settings.memory / BYTES_PER_ENTRY).max(16);
        let dir = scratch.dir.clone();
        let spill_error = |source| DedupError::Io { path: dir.clone(), source };
        let mut map: HashMap<u64, Seen> = HashMap::new();
        let mut runs: Vec<File> = Vec::new();
        let mut order = 0u64;
        for input in &self.inputs {
            for_each_game(input, |g| -> Result<(), DedupError> {
                for (key, label) in label_keys(&g)?.into_iter().zip(&g.labels) {
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
                        runs.push(spill(&mut map, scratch).map_err(spill_error)?);
                    }
                }
                if order % 65_536 < g.labels.len() as u64 {
                    sink.finding(order);
                }
                Ok(())
            })?;
        }
        report.labels = order;
        if !runs.is_empty() && !map.is_empty() {
            runs.push(spill(&mut map, scratch).map_err(spill_error)?);
        }
        report.runs = runs.len() as u64;
        Ok(if runs.is_empty() { Winners::InMemory(map) } else { Winners::Runs(runs) })
    }

    /// The kept labels: a bit each (by order), in a mapped temporary file.
    fn mark_winners(
        &self,
        winners: Winners,
        scratch: &mut Scratch,
        report: &mut DedupReport,
    ) -> io::Result<memmap2::MmapMut> {
        let bits_file = scratch.file()?;
        bits_file.set_len(report.labels.div_ceil(8).max(1))?;
        // Safety: a file this process created and alone writes (it has no
        // name), mapped once.
        let mut bits = unsafe { memmap2::MmapMut::map_mut(&bits_file) }?;
        let mut set = |o: u64| bits[(o / 8) as usize] |= 1 << (o % 8);
        match winners {
            Winners::InMemory(map) => map.values().for_each(|seen| set(seen.order)),
            Winners::Runs(mut runs) => {
                // Merge the runs a group at a time (open files stay few),
                // each merge keeping one winner per key, down to one last
                // merge.
                while runs.len() > MERGE_FAN_IN {
                    let mut merged = Vec::with_capacity(runs.len().div_ceil(MERGE_FAN_IN));
                    for group in runs.chunks(MERGE_FAN_IN) {
                        let mut file = scratch.file()?;
                        let mut w = BufWriter::new(&mut file);
                        merge_runs(group, self.settings.keep, |key, seen| {
                            write_run(&mut w, key, seen)
                        })?;
                        w.flush()?;
                        drop(w);
                        merged.push(file);
                    }
                    runs = merged;
                }
                merge_runs(&runs, self.settings.keep, |_, seen| {
                    set(seen.order);
                    Ok(())
                })?;
            }
        }
        Ok(bits)
    }

    /// Pass 2: the games again, with the kept labels, into the output.
    fn write_kept(
        &self,
        bits: &[u8],
        report: &mut DedupReport,
        sink: &mut dyn DedupSink,
    ) -> Result<(), DedupError> {
        let output_error = |source| DedupError::Io { path: self.output.clone(), source };
        let header = self.output_header()?;
        // The output appears only once complete: replacing a file in place
        // (annotate's `--dedup last`) or killed part way, nothing is lost.
        let file = KbzWriter::create_whole(&self.output, &header, self.settings.replace)
            .map_err(output_error)?;
        let mut writer = BlockWriter::new(file, BlockLimits::of(&header));
        let (mut order, mut index) = (0u64, 0u64);
        let mut copy = || -> Result<(), DedupError> {
            for input in &self.inputs {
                for_each_game(input, |mut g| -> Result<(), DedupError> {
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
                    report.games += 1;
                    writer.push(g).map_err(output_error)?;
                    if report.games.is_multiple_of(1024) {
                        sink.writing(report.games);
                    }
                    Ok(())
                })?;
            }
            Ok(())
        };
        match copy() {
            Ok(()) => {
                report.bytes_written = writer.finish().map_err(output_error)?;
                Ok(())
            }
            Err(e) => {
                writer.abandon();
                Err(e)
            }
        }
    }
}

impl Dedup {
    /// The output's header: the first input's (a `.kbz`), or one that names
    /// the first input's format (another program's file), with every
    /// input's inputs and `dedup` set.
    fn output_header(&self) -> Result<Header, DedupError> {
        let mut header = match Foreign::detect(&self.inputs[0]) {
            None => KbzReader::open(&self.inputs[0])?.header,
            Some(kind) => imported_header(&self.inputs[0], kind),
        };
        header.options.dedup = true;
        header.inputs = Vec::new();
        for input in &self.inputs {
            match Foreign::detect(input) {
                None => header.inputs.extend(KbzReader::open(input)?.header.inputs),
                Some(_) => header.inputs.extend(input_infos(std::slice::from_ref(input))),
            }
        }
        Ok(header)
    }
}

/// The header of a file made from another program's data: labels from an
/// engine whose name is the file's format, as a relabelled file records
/// its source.
pub fn imported_header(path: &Path, kind: Foreign) -> Header {
    let options = Options {
        label: LabelSource::Engine,
        engine: format!("{} file", kind.name()),
        relabelled_from: format!("{}: {} scores", path.display(), kind.name()),
        max_games: 0,
        ..Options::default()
    };
    Header {
        magic: MAGIC,
        version: FORMAT_VERSION,
        kibitz_version: env!("CARGO_PKG_VERSION").to_string(),
        options,
        inputs: Vec::new(),
    }
}

/// The winners of pass 1.
enum Winners {
    /// Everything fitted in the map.
    InMemory(HashMap<u64, Seen>),
    /// Sorted runs on disk.
    Runs(Vec<File>),
}

/// Writes one run record.
fn write_run(w: &mut impl Write, key: u64, seen: Seen) -> io::Result<()> {
    w.write_all(&key.to_le_bytes())?;
    w.write_all(&seen.order.to_le_bytes())?;
    w.write_all(&[seen.depth])
}

/// The map written to a temporary file as a run sorted by key, and emptied.
fn spill(map: &mut HashMap<u64, Seen>, scratch: &mut Scratch) -> io::Result<File> {
    let mut file = scratch.file()?;
    let mut entries: Vec<(u64, Seen)> = map.drain().collect();
    entries.sort_unstable_by_key(|e| e.0);
    let mut w = BufWriter::new(&mut file);
    for (key, seen) in entries {
        write_run(&mut w, key, seen)?;
    }
    w.flush()?;
    drop(w);
    Ok(file)
}
