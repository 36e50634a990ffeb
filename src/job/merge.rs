//! Merging the shards of one run (`annotate --shard K/N`) into the file the
//! unsharded run writes: the shards are checked to be the N parts of one
//! run, their games joined in index order (a k-way merge: each shard is in
//! index order), the run's first-label dedup applied across them, and the
//! blocks closed by [`BlockLimits`], as the unsharded run closes them.

use std::{
    collections::{HashSet, VecDeque},
    io,
    path::PathBuf,
};

use crate::{
    job::dedup::{Dedup, DedupError, DedupReport, Keep},
    record::{
        chain::ChainError,
        format::{FORMAT_VERSION, GameRecord, Header},
        position_key::FirstSeen,
        reader::{KbzReader, RecordError},
        writer::{BlockLimits, BlockWriter, KbzWriter},
    },
};

/// Why shards cannot be merged, or the merge failed.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// A shard cannot be read.
    #[error(transparent)]
    Input(#[from] RecordError),
    /// A file is not a shard of the same run as the first.
    #[error("{file} is not a shard of the same run as {first}")]
    OtherRun {
        /// The file.
        file: PathBuf,
        /// The first shard.
        first: PathBuf,
    },
    /// A shard given twice, or of another split.
    #[error("{file}: shard {k}/{n} repeated or of another split")]
    Repeated {
        /// The file.
        file: PathBuf,
        /// Its shard.
        k: u64,
        /// Its shard count.
        n: u64,
    },
    /// Shards are missing.
    #[error("{given} shards of {n} given: the merge would miss games")]
    Missing {
        /// Shards given.
        given: usize,
        /// Shards of the run.
        n: u64,
    },
    /// A shard has no end marker.
    #[error("{0} is incomplete (no end marker): finish that shard first")]
    Incomplete(PathBuf),
    /// A game does not replay (for the dedup).
    #[error(transparent)]
    Chain(#[from] ChainError),
    /// The output is one of the shards.
    #[error("the output {output} is the input {input}: it would be overwritten before it is read")]
    OutputIsInput {
        /// The output.
        output: PathBuf,
        /// The shard it is.
        input: PathBuf,
    },
    /// The output cannot be written.
    #[error("{path}: {source}")]
    Output {
        /// The output.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
    /// The dedup after the merge failed.
    #[error(transparent)]
    Dedup(#[from] DedupError),
}

/// What a merge did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct MergeReport {
    /// Games written.
    pub games: u64,
    /// Labels written (before a `keep` dedup).
    pub labels: u64,
    /// Bytes of the merged file (before a `keep` dedup).
    pub bytes_written: u64,
    /// The dedup that followed, when a policy was asked for.
    pub dedup: Option<DedupReport>,
}

/// A merge of shards, checked and ready to run.
pub struct Merge {
    readers: Vec<KbzReader>,
    files: Vec<PathBuf>,
    output: PathBuf,
    header: Header,
    replace: bool,
    keep: Option<(Keep, usize)>,
}

impl Merge {
    /// Opens the shards and checks that they are the N parts of one run.
    /// `keep` asks for one label per position afterwards, with a policy
    /// and the dedup's memory (see [`Dedup`]).
    pub fn new(
        files: Vec<PathBuf>,
        output: PathBuf,
        replace: bool,
        keep: Option<(Keep, usize)>,
    ) -> Result<Merge, MergeError> {
        if let Some(input) = files.iter().find(|f| crate::io::same_file(&output, f)) {
            return Err(MergeError::OutputIsInput { output, input: input.clone() });
        }
        if let Err(source) = crate::io::check_output_folder(&output) {
            return Err(MergeError::Output { path: output, source });
        }
        let readers: Vec<KbzReader> =
            files.iter().map(|f| KbzReader::open(f)).collect::<Result<_, _>>()?;
        let Some(first) = readers.first().map(|r| r.header.clone()) else {
            return Err(MergeError::Missing { given: 0, n: 1 });
        };
        let n = first.options.shard.1;
        let mut seen = HashSet::new();
        for (r, f) in readers.iter().zip(&files) {
            if !same_run_but_shard(&r.header, &first) {
                return Err(MergeError::OtherRun { file: f.clone(), first: files[0].clone() });
            }
            let (k, nk) = r.header.options.shard;
            if nk != n || !seen.insert(k) {
                return Err(MergeError::Repeated { file: f.clone(), k, n: nk });
            }
        }
        if seen.len() as u64 != n {
            return Err(MergeError::Missing { given: seen.len(), n });
        }
        let mut header = first;
        header.options.shard = (0, 1);
        // Written in the current layout, whatever version the shards were.
        header.version = FORMAT_VERSION;
        Ok(Merge { readers, files, output, header, replace, keep })
    }

    /// Joins the shards. A merge that fails leaves nothing behind: it is
    /// cheap to run again, and a partial merge must not be mistaken for the
    /// run's output.
    pub fn run(mut self) -> Result<MergeReport, MergeError> {
        let output_error = |path: &PathBuf| {
            let path = path.clone();
            move |source| MergeError::Output { path: path.clone(), source }
        };
        let file = KbzWriter::create_whole(&self.output, &self.header, self.replace)
            .map_err(output_error(&self.output))?;
        let mut writer = BlockWriter::new(file, BlockLimits::of(&self.header));
        let mut report = MergeReport::default();
        if let Err(e) = self.join(&mut writer, &mut report) {
            writer.abandon();
            return Err(e);
        }
        report.bytes_written = writer.finish().map_err(output_error(&self.output))?;
        if let Some((keep, memory)) = self.keep {
            report.dedup = Some(Dedup::in_place(&self.output, keep, memory).run(&mut ())?);
        }
        Ok(report)
    }

    /// The k-way merge by game index into `writer`.
    fn join(
        &mut self,
        writer: &mut BlockWriter,
        report: &mut MergeReport,
    ) -> Result<(), MergeError> {
        let mut pending: Vec<VecDeque<GameRecord>> = vec![VecDeque::new(); self.readers.len()];
        let mut first_seen = self.header.options.dedup.then(FirstSeen::default);
        loop {
            for (queue, reader) in pending.iter_mut().zip(&mut self.readers) {
                if queue.is_empty()
                    && let Some(next) = reader.next_block()
                {
                    queue.extend(next?.2);
                }
            }
            let next = (0..pending.len())
                .filter(|&i| !pending[i].is_empty())
                .min_by_key(|&i| pending[i][0].index);
            let Some(mut game) = next.and_then(|i| pending[i].pop_front()) else { break };
            if let Some(seen) = first_seen.as_mut() {
                seen.keep_new(&mut game)?;
            }
            report.games += 1;
            report.labels += game.label_count() as u64;
            writer
                .push(game)
                .map_err(|source| MergeError::Output { path: self.output.clone(), source })?;
        }
        for (r, f) in self.readers.iter().zip(&self.files) {
            if !r.is_complete() {
                return Err(MergeError::Incomplete(f.clone()));
            }
        }
        Ok(())
    }
}

/// Whether two headers describe the same run but for the shard.
pub fn same_run_but_shard(a: &Header, b: &Header) -> bool {
    let mut a = a.clone();
    let mut b = b.clone();
    a.options.shard = (0, 1);
    b.options.shard = (0, 1);
    a == b
}
