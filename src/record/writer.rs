//! Writing `.kbz` files: [`KbzWriter`] writes whole frames, flushed and
//! synced, and resumes an interrupted file after its last complete block.

use std::{
    fs::{File, OpenOptions},
    io::{self, Seek, SeekFrom, Write},
    path::{Path, PathBuf},
};

use crate::record::{
    format::{Block, GameRecord, Header},
    frame::{Trailer, encode_frame},
    reader::{KbzReader, RecordError},
};

/// Writes a `.kbz` file block by block.
pub struct KbzWriter {
    file: File,
    /// The file being written.
    path: PathBuf,
    written: u64,
    counts: Trailer,
    /// For an output that appears only once complete
    /// ([`KbzWriter::create_whole`]): where [`KbzWriter::finish`] moves it.
    whole: Option<PathBuf>,
}

/// The file an output made by [`KbzWriter::create_whole`] is written to
/// until it is complete: its path with `.partial` added.
pub fn partial_path(path: &Path) -> PathBuf {
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    PathBuf::from(partial)
}

impl KbzWriter {
    /// Creates a file and writes the header. Refuses to replace an existing
    /// file unless `force` (an error of kind
    /// [`io::ErrorKind::AlreadyExists`]).
    pub fn create(path: &Path, header: &Header, force: bool) -> io::Result<KbzWriter> {
        let mut options = OpenOptions::new();
        options.write(true);
        if force {
            options.create(true).truncate(true);
        } else {
            options.create_new(true);
        }
        // Messages without the path: callers name the output.
        let file = options.open(path).map_err(|e| {
            if e.kind() == io::ErrorKind::AlreadyExists {
                io::Error::new(e.kind(), "exists")
            } else if let Some(folder) = crate::io::missing_folder(path) {
                let e = crate::io::no_folder_error(&folder);
                io::Error::new(e.kind(), format!("cannot create: {e}"))
            } else {
                io::Error::new(e.kind(), format!("cannot create: {e}"))
            }
        })?;
        let mut writer = KbzWriter {
            file,
            path: path.to_path_buf(),
            written: 0,
            counts: Trailer::default(),
            whole: None,
        };
        writer.write_frame(&encode_frame(header)?)?;
        Ok(writer)
    }

    /// Creates an output that appears only once complete, for the jobs that
    /// cannot continue an interrupted run (dedup, merge, relabel): blocks
    /// go to [`partial_path`], and [`KbzWriter::finish`] renames it to
    /// `path`, replacing a file there only when `force`. A job killed part
    /// way leaves `path` as it was (and a partial file, which the next run
    /// replaces); [`KbzWriter::abandon`] removes the partial file.
    pub fn create_whole(path: &Path, header: &Header, force: bool) -> io::Result<KbzWriter> {
        if !force && path.exists() {
            return Err(io::Error::new(io::ErrorKind::AlreadyExists, "exists"));
        }
        let mut writer = KbzWriter::create(&partial_path(path), header, true)?;
        writer.whole = Some(path.to_path_buf());
        Ok(writer)
    }

    /// Creates an output aside, as [`KbzWriter::create_whole`] does, to be
    /// put in place by [`KbzWriter::publish`] once the run has read
    /// something: a run that reads nothing leaves `path` as it was (an
    /// older file included) and [`KbzWriter::abandon`] removes what it
    /// wrote. Once published, the file is written in place, resumable.
    pub fn create_aside(path: &Path, header: &Header, force: bool) -> io::Result<KbzWriter> {
        KbzWriter::create_whole(path, header, force)
    }

    /// Puts an output made aside in place ([`KbzWriter::create_aside`]):
    /// from here it is written in place, its complete blocks kept by a
    /// crash. Nothing to do for an output already in place.
    pub fn publish(&mut self) -> io::Result<()> {
        let Some(whole) = self.whole.take() else { return Ok(()) };
        std::fs::rename(&self.path, &whole).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot move {} to {}: {e}", self.path.display(), whole.display()),
            )
        })?;
        let dir = whole.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        File::open(dir)?.sync_all()?;
        self.path = whole;
        Ok(())
    }

    /// Whether the output is still aside ([`KbzWriter::create_aside`]).
    pub fn is_aside(&self) -> bool {
        self.whole.is_some()
    }

    /// Opens an interrupted file to continue it: checks that its header
    /// equals `header`, keeps every complete, valid block, truncates what
    /// follows, and returns the writer with the blocks kept.
    pub fn resume(
        path: &Path,
        header: &Header,
    ) -> Result<(KbzWriter, Vec<GameRecord>, Option<RecordError>), RecordError> {
        let mut reader = KbzReader::open(path)?;
        if &reader.header != header {
            return Err(RecordError {
                path: path.to_path_buf(),
                offset: 0,
                message:
                    "its header (options or inputs) differs from this run's: refusing to resume"
                        .into(),
            });
        }
        let mut blocks = Vec::new();
        let mut good_end = reader.pos as u64;
        let mut dropped = None;
        let mut counts = Trailer::default();
        while let Some(next) = reader.next_block() {
            match next {
                Ok((offset, size, games)) => {
                    good_end = offset + size;
                    counts.blocks += 1;
                    counts.games += games.len() as u64;
                    counts.labels += games.iter().map(|g| g.label_count() as u64).sum::<u64>();
                    blocks.extend(games);
                }
                Err(e) => {
                    dropped = Some(e);
                    break;
                }
            }
        }
        let io_err = |e: io::Error| RecordError {
            path: path.to_path_buf(),
            offset: good_end,
            message: e.to_string(),
        };
        let mut file = OpenOptions::new().write(true).open(path).map_err(io_err)?;
        file.set_len(good_end).map_err(io_err)?;
        file.seek(SeekFrom::End(0)).map_err(io_err)?;
        file.sync_all().map_err(io_err)?;
        // A complete file loses its end marker here and gets it back when
        // the (then empty) continuation finishes: the same bytes.
        Ok((
            KbzWriter { file, path: path.to_path_buf(), written: good_end, counts, whole: None },
            blocks,
            dropped,
        ))
    }

    fn write_frame(&mut self, frame: &[u8]) -> io::Result<()> {
        self.check_still_there()?;
        let result = self
            .file
            .write_all(frame)
            .and_then(|()| self.file.flush())
            .and_then(|()| self.file.sync_data());
        if let Err(e) = result {
            // Take back a frame written in part (a full disk, a quota), so
            // the file ends at its last complete frame.
            let _ = self.file.set_len(self.written);
            let _ = self.file.seek(SeekFrom::Start(self.written));
            let _ = self.file.sync_all();
            let message = match &self.whole {
                Some(whole) => format!(
                    "writing {}: {e}; {} is not written: run the command again once the cause is \
                     fixed",
                    self.path.display(),
                    whole.display()
                ),
                None => format!(
                    "writing {}: {e}; the file keeps its {} complete blocks ({} games) and no end \
                     marker: it can be continued once the cause is fixed",
                    self.path.display(),
                    self.counts.blocks,
                    self.counts.games
                ),
            };
            return Err(io::Error::new(e.kind(), message));
        }
        self.written += frame.len() as u64;
        Ok(())
    }

    /// Fails if the output path no longer names the file being written (it
    /// was removed or replaced): writing on would lose everything.
    fn check_still_there(&self) -> io::Result<()> {
        use std::os::unix::fs::MetadataExt;
        let ours = self.file.metadata()?;
        let gone = match std::fs::metadata(&self.path) {
            Ok(now) => now.dev() != ours.dev() || now.ino() != ours.ino(),
            Err(_) => true,
        };
        if gone {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "{} was removed or replaced while being written: the {} blocks written to it \
                     are lost; stopping",
                    self.path.display(),
                    self.counts.blocks
                ),
            ));
        }
        Ok(())
    }

    /// Writes a block whole, flushed and synced.
    pub fn write_block(&mut self, block: &Block) -> io::Result<u64> {
        let frame = encode_frame(block)?;
        self.write_frame(&frame)?;
        self.counts.blocks += 1;
        self.counts.games += block.len() as u64;
        self.counts.labels += block.label_count() as u64;
        Ok(frame.len() as u64)
    }

    /// Bytes in the file so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Ends a complete run: writes the end marker and syncs. Returns the
    /// file's size.
    pub fn finish(mut self) -> io::Result<u64> {
        let trailer = self.counts.encode();
        self.write_frame(&trailer)?;
        self.file.sync_all()?;
        if let Some(whole) = &self.whole {
            std::fs::rename(&self.path, whole).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("cannot move {} to {}: {e}", self.path.display(), whole.display()),
                )
            })?;
            // The rename itself outlives a crash once the directory is synced.
            let dir =
                whole.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
            File::open(dir)?.sync_all()?;
        }
        Ok(self.written)
    }

    /// Closes an interrupted run without the end marker (synced): the file
    /// holds whole blocks and reads as incomplete until resumed. Returns the
    /// file's size. An output made whole is abandoned instead (0).
    pub fn close_incomplete(self) -> io::Result<u64> {
        if self.whole.is_some() {
            self.abandon();
            return Ok(0);
        }
        self.check_still_there()?;
        self.file.sync_all()?;
        Ok(self.written)
    }

    /// Gives up an output made by [`KbzWriter::create_whole`]: its partial
    /// file is removed, and the output path is left as it was. (A file
    /// written in place is left as it is: it holds whole blocks.)
    pub fn abandon(self) {
        if self.whole.is_some() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Where finished blocks go: a [`KbzWriter`], or (in tests, or for a
/// caller that encodes blocks elsewhere) a vector.
pub trait BlockSink {
    /// Writes one block; returns the bytes it took.
    fn write_block(&mut self, block: &Block) -> io::Result<u64>;
}

impl BlockSink for KbzWriter {
    fn write_block(&mut self, block: &Block) -> io::Result<u64> {
        KbzWriter::write_block(self, block)
    }
}

impl BlockSink for Vec<Block> {
    fn write_block(&mut self, block: &Block) -> io::Result<u64> {
        self.push(block.clone());
        Ok(0)
    }
}

/// When a block closes: once it holds `games` games or `labels` labels,
/// whichever comes first. Every command that writes a `.kbz` closes its
/// blocks by this rule, so the same games make the same file whichever
/// command wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockLimits {
    /// Games per block at most.
    pub games: usize,
    /// Labels per block at most (a game is never split: the game that
    /// reaches the limit closes the block).
    pub labels: usize,
}

impl BlockLimits {
    /// The limits a file's header records.
    pub fn of(header: &Header) -> BlockLimits {
        BlockLimits {
            games: header.options.block_games.max(1) as usize,
            labels: header.options.block_labels.max(1) as usize,
        }
    }
}

/// The one block writer: games go in one at a time, in the file's order,
/// and a block is written whenever [`BlockLimits`] says it is full.
pub struct BlockWriter<S: BlockSink = KbzWriter> {
    sink: S,
    limits: BlockLimits,
    open: Vec<GameRecord>,
    labels: usize,
}

impl<S: BlockSink> BlockWriter<S> {
    /// A writer of blocks into `sink`.
    pub fn new(sink: S, limits: BlockLimits) -> BlockWriter<S> {
        BlockWriter { sink, limits, open: Vec::new(), labels: 0 }
    }

    /// Adds a game; writes the block it fills.
    pub fn push(&mut self, game: GameRecord) -> io::Result<()> {
        self.labels += game.label_count();
        self.open.push(game);
        if self.open.len() >= self.limits.games || self.labels >= self.limits.labels {
            self.close_block()?;
        }
        Ok(())
    }

    /// Writes the open block now, if it has games (the end of a run, or a
    /// label budget that filled).
    pub fn close_block(&mut self) -> io::Result<()> {
        if self.open.is_empty() {
            return Ok(());
        }
        let block = Block::from_games(&self.open);
        self.open.clear();
        self.labels = 0;
        self.sink.write_block(&block)?;
        Ok(())
    }

    /// Games waiting in the open block.
    pub fn open_games(&self) -> usize {
        self.open.len()
    }

    /// The sink, for what the block writer does not do itself.
    pub fn sink(&mut self) -> &mut S {
        &mut self.sink
    }

    /// Drops the open block and returns the sink: an interrupted run keeps
    /// only complete blocks, so that a resumed run writes the same ones.
    pub fn into_sink_dropping_open(self) -> S {
        self.sink
    }

    /// Writes the open block and returns the sink.
    pub fn into_sink(mut self) -> io::Result<S> {
        self.close_block()?;
        Ok(self.sink)
    }
}

impl BlockWriter<KbzWriter> {
    /// Writes the open block and the end marker: a complete file. Returns
    /// its size.
    pub fn finish(self) -> io::Result<u64> {
        self.into_sink()?.finish()
    }

    /// Ends an interrupted run: the open block is dropped, the file keeps
    /// its complete blocks and no end marker. Returns its size.
    pub fn close_incomplete(self) -> io::Result<u64> {
        self.into_sink_dropping_open().close_incomplete()
    }

    /// Gives up the output (see [`KbzWriter::abandon`]).
    pub fn abandon(self) {
        self.into_sink_dropping_open().abandon()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(index: u64, labels: usize) -> GameRecord {
        let mut g = GameRecord::new(index, [0; 32], 3, Default::default(), vec![0; labels]);
        let labels: Vec<_> = (0..labels)
            .map(|p| crate::record::format::Label {
                ply: p as u16,
                score: 0,
                best: 255,
                depth: 1,
                pv: Default::default(),
                alternatives: Default::default(),
                flags: 0,
            })
            .collect();
        g.set_labels(&labels);
        g
    }

    fn shape(blocks: &[Block]) -> Vec<Vec<u64>> {
        blocks.iter().map(|b| b.games().unwrap().iter().map(|g| g.index).collect()).collect()
    }

    /// A block closes at its game limit or at its label limit, whichever
    /// comes first, and never splits a game.
    #[test]
    fn a_block_closes_at_games_or_labels() {
        let mut w = BlockWriter::new(Vec::new(), BlockLimits { games: 3, labels: 10 });
        for (i, labels) in [2, 2, 2, 4, 7, 1, 0].into_iter().enumerate() {
            w.push(game(i as u64, labels)).unwrap();
        }
        assert_eq!(w.open_games(), 2);
        let blocks = w.into_sink().unwrap();
        assert_eq!(shape(&blocks), [vec![0, 1, 2], vec![3, 4], vec![5, 6]]);
    }

    /// An interrupted run drops the open block.
    #[test]
    fn dropping_the_open_block() {
        let mut w = BlockWriter::new(Vec::new(), BlockLimits { games: 2, labels: 100 });
        for i in 0..3 {
            w.push(game(i, 1)).unwrap();
        }
        assert_eq!(shape(&w.into_sink_dropping_open()), [vec![0, 1]]);
    }
}
