//! Reading and writing `.kbz` files: frames, checksums, whole blocks,
//! resuming after a crash.
//!
//! Writing: the header frame and each block frame are written with one
//! `write_all`, flushed and synced, so after a crash the file is whole up to
//! some frame boundary plus possibly part of one frame. Reading checks each
//! frame's structure and zstd checksum and names a bad frame by its byte
//! offset. Resuming keeps the complete frames, truncates the rest, and
//! continues after the last game written.
//!
//! A run that completes ends the file with an end marker (a zstd skippable
//! frame holding the block, game and label counts), so a file cut short at a
//! block boundary (a kill, a full disk) is never taken for a complete one:
//! readers report a file without it as incomplete.

use std::{
    fmt,
    fs::{File, OpenOptions},
    io::{self, Seek, SeekFrom, Write},
    path::{Path, PathBuf},
};

use crate::{
    io::source::zstd_frame_end,
    record::format::{Block, BlockV2, BlockV3, GameRecord, Header, MAGIC, config},
};

/// zstd level of every frame (fixed: the same input gives the same bytes).
pub const ZSTD_LEVEL: i32 = 19;

/// Magic of the end marker: a zstd skippable frame (RFC 8878 allows
/// 0x184D2A50 to 0x184D2A5F), which `zstd -t` and zstd readers skip.
pub const TRAILER_MAGIC: u32 = 0x184d_2a5b;
const TRAILER_TAG: [u8; 8] = *b"KBZEND\0\x01";
const TRAILER_PAYLOAD: usize = 8 + 3 * 8 + 8;

/// What the end marker says the file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Trailer {
    /// Block frames.
    pub blocks: u64,
    /// Games.
    pub games: u64,
    /// Labelled positions.
    pub labels: u64,
}

fn fnv64(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

impl Trailer {
    /// The frame: magic, payload size, then the tag, the three counts and an
    /// FNV-1a checksum of the tag and counts, all little-endian.
    pub fn encode(&self) -> Vec<u8> {
        let mut payload = Vec::with_capacity(TRAILER_PAYLOAD);
        payload.extend_from_slice(&TRAILER_TAG);
        for n in [self.blocks, self.games, self.labels] {
            payload.extend_from_slice(&n.to_le_bytes());
        }
        let sum = fnv64(&payload);
        payload.extend_from_slice(&sum.to_le_bytes());
        let mut frame = Vec::with_capacity(8 + TRAILER_PAYLOAD);
        frame.extend_from_slice(&TRAILER_MAGIC.to_le_bytes());
        frame.extend_from_slice(&(TRAILER_PAYLOAD as u32).to_le_bytes());
        frame.extend_from_slice(&payload);
        frame
    }

    /// Reads an end marker frame; `None` if the bytes are not one.
    pub fn decode(frame: &[u8]) -> Option<Trailer> {
        let u64_at = |at: usize| -> Option<u64> {
            frame.get(at..at + 8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
        };
        if frame.len() != 8 + TRAILER_PAYLOAD
            || frame[..4] != TRAILER_MAGIC.to_le_bytes()
            || frame[4..8] != (TRAILER_PAYLOAD as u32).to_le_bytes()
            || frame[8..16] != TRAILER_TAG
            || fnv64(&frame[8..40]) != u64_at(40)?
        {
            return None;
        }
        Some(Trailer { blocks: u64_at(16)?, games: u64_at(24)?, labels: u64_at(32)? })
    }
}

fn is_trailer_frame(frame: &[u8]) -> bool {
    frame.len() >= 4 && frame[..4] == TRAILER_MAGIC.to_le_bytes()
}

/// A problem with a `.kbz` file, located by byte offset.
#[derive(Debug)]
pub struct RecordError {
    /// The file.
    pub path: PathBuf,
    /// Byte offset of the frame concerned.
    pub offset: u64,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: at byte {}: {}", self.path.display(), self.offset, self.message)
    }
}

impl std::error::Error for RecordError {}

/// Encodes and compresses a structure into one zstd frame with a checksum.
pub fn encode_frame<T: bincode::Encode>(value: &T) -> io::Result<Vec<u8>> {
    let raw = bincode::encode_to_vec(value, config()).map_err(io::Error::other)?;
    let mut compressor = zstd::bulk::Compressor::new(ZSTD_LEVEL)?;
    compressor.include_checksum(true)?;
    compressor.include_contentsize(true)?;
    compressor.compress(&raw)
}

/// A frame that does not decode.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The frame declares more content than any structure of the format.
    #[error("frame content larger than the format allows")]
    TooLarge,
    /// No zstd frame, or one without its content size.
    #[error("not a zstd frame with a content size")]
    NotZstd,
    /// zstd refused the frame.
    #[error("zstd: {0}")]
    Zstd(std::io::Error),
    /// The content is not the structure expected.
    #[error("decoding: {0}")]
    Decode(bincode::error::DecodeError),
    /// Bytes left after the structure.
    #[error("{0} bytes after the structure")]
    Trailing(usize),
    /// The columns of a block do not add up.
    #[error(transparent)]
    Block(#[from] crate::record::format::BlockError),
}

/// Decompresses one frame (checksum verified) and decodes it.
pub fn decode_frame<T: bincode::Decode<()>>(frame: &[u8]) -> Result<T, FrameError> {
    let size = match zstd::zstd_safe::get_frame_content_size(frame) {
        Ok(Some(n)) if n <= crate::record::format::DECODE_LIMIT as u64 => n as usize,
        Ok(Some(_)) => return Err(FrameError::TooLarge),
        _ => return Err(FrameError::NotZstd),
    };
    let raw = zstd::bulk::decompress(frame, size).map_err(FrameError::Zstd)?;
    let (value, used) = bincode::decode_from_slice(&raw, config()).map_err(FrameError::Decode)?;
    if used != raw.len() {
        return Err(FrameError::Trailing(raw.len() - used));
    }
    Ok(value)
}

/// Whether the first frame of `data` decodes to [`MAGIC`]'s bytes (the
/// header's first field, written raw), decoding no more than its first
/// block.
fn starts_with_magic(data: &[u8]) -> bool {
    let mut magic = [0u8; MAGIC.len()];
    zstd::stream::read::Decoder::with_buffer(data)
        .map(|d| d.single_frame())
        .and_then(|mut d| io::Read::read_exact(&mut d, &mut magic))
        .is_ok_and(|()| magic == MAGIC)
}

/// A block as read: its frame's byte offset and size, and its games.
pub type BlockRead = (u64, u64, Vec<GameRecord>);

/// A `.kbz` file read frame by frame through a memory map (pages behind the
/// reading position are released, so any size reads in bounded memory).
pub struct KbzReader {
    path: PathBuf,
    data: crate::io::mapguard::GuardedMap,
    released: usize,
    /// The header.
    pub header: Header,
    pos: usize,
    trailer: Option<Trailer>,
    read: Trailer,
}

impl KbzReader {
    /// Opens a file and reads its header.
    pub fn open(path: &Path) -> Result<KbzReader, RecordError> {
        let err = |offset: u64, message: String| RecordError {
            path: path.to_path_buf(),
            offset,
            message,
        };
        let file = File::open(path).map_err(|e| err(0, format!("cannot open: {e}")))?;
        let meta = file.metadata().map_err(|e| err(0, format!("cannot read: {e}")))?;
        if !meta.is_file() {
            return Err(err(0, "not a regular file".into()));
        }
        if meta.len() == 0 {
            return Err(err(0, "empty file".into()));
        }
        // Safety: a read-only map of a regular file, read as plain bytes; if
        // another process truncates it meanwhile, the guard makes the lost
        // pages read as zeros (their frames then fail their checksums) and
        // the error says the file shrank.
        let data = unsafe { crate::io::mapguard::GuardedMap::map(file) }
            .map_err(|e| err(0, format!("cannot map: {e}")))?;
        let _ = data.advise(memmap2::Advice::Sequential);
        // The magic first, from the first decoded bytes: finding the header
        // frame's end walks its block headers, and another zstd file (a
        // `.pgn.zst` given to annotate, which asks every input whether it is
        // a `.kbz`) is one frame of hundreds of MB whose every page the
        // walk would bring in.
        if !starts_with_magic(&data) {
            return Err(err(0, "not a kibitz record file (bad magic)".into()));
        }
        let end =
            zstd_frame_end(&data, 0).ok_or_else(|| err(0, "no complete header frame".into()))?;
        let header: Header =
            decode_frame(&data[..end]).map_err(|m| err(0, format!("header: {m}")))?;
        Ok(KbzReader {
            path: path.to_path_buf(),
            data,
            released: 0,
            header,
            pos: end,
            trailer: None,
            read: Trailer::default(),
        })
    }

    /// Why a frame may have failed: the file was truncated underneath.
    fn shrunk_note(&self) -> String {
        match self.data.shrunk() {
            Some(now) => format!(
                " (the file shrank from {} to {now} bytes while being read)",
                self.data.len()
            ),
            None => String::new(),
        }
    }

    /// Whether the file ended with a valid end marker whose counts match
    /// what was read: known once `next_block` has returned `None`.
    pub fn is_complete(&self) -> bool {
        self.trailer.is_some()
    }

    /// The message for a file read to its end without an end marker.
    pub fn incomplete_message(&self) -> String {
        let what = if self.path.as_os_str().as_encoded_bytes().ends_with(b".partial") {
            "a dedup, merge or relabel that stopped before its end left it: run that command \
             again (its output appears only once complete)"
        } else {
            "the annotate run that wrote it was interrupted or failed: continue it with the same \
             command and --resume"
        };
        format!(
            "{}: incomplete: no end marker after its {} blocks ({} games); {what}",
            self.path.display(),
            self.read.blocks,
            self.read.games
        )
    }

    /// The file's size.
    pub fn len(&self) -> u64 {
        self.data.len() as u64
    }

    /// Whether the file holds no block.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    /// The next block's games with the frame's offset and size, `None` at
    /// the end, or the error of the first bad frame (after which reading
    /// stops).
    pub fn next_block(&mut self) -> Option<Result<BlockRead, RecordError>> {
        if self.pos >= self.data.len() {
            return None;
        }
        let offset = self.pos as u64;
        let Some(end) = zstd_frame_end(&self.data, self.pos) else {
            self.pos = self.data.len();
            return Some(Err(RecordError {
                path: self.path.clone(),
                offset,
                message: format!(
                    "incomplete or malformed frame (a block cut short){}",
                    self.shrunk_note()
                ),
            }));
        };
        let frame = &self.data[self.pos..end];
        if is_trailer_frame(frame) {
            self.pos = self.data.len();
            let error = |message: String| {
                Some(Err(RecordError { path: self.path.clone(), offset, message }))
            };
            return match Trailer::decode(frame) {
                None => error("malformed end marker".into()),
                Some(_) if end != self.data.len() => {
                    error(format!("{} bytes after the end marker", self.data.len() - end))
                }
                Some(t) if t != self.read => error(format!(
                    "the end marker counts {} blocks, {} games, {} labels; the file holds {}, {}, {}",
                    t.blocks,
                    t.games,
                    t.labels,
                    self.read.blocks,
                    self.read.games,
                    self.read.labels
                )),
                Some(t) => {
                    self.trailer = Some(t);
                    None
                }
            };
        }
        self.pos = end;
        if self.pos - self.released > crate::io::source::RELEASE_STEP {
            // Frames behind the position are not read again by this reader.
            crate::io::source::release_behind(&self.data, &mut self.released, self.pos);
        }
        let block = if self.header.version >= 4 {
            decode_frame::<Block>(frame)
        } else if self.header.version == 3 {
            decode_frame::<BlockV3>(frame).map(Block::from)
        } else {
            decode_frame::<BlockV2>(frame).map(Block::from)
        };
        match block.and_then(|b| Ok(b.games()?)) {
            Ok(games) => {
                self.read.blocks += 1;
                self.read.games += games.len() as u64;
                self.read.labels += games.iter().map(|g| g.label_count() as u64).sum::<u64>();
                Some(Ok((offset, (end as u64) - offset, games)))
            }
            Err(m) => {
                self.pos = self.data.len();
                Some(Err(RecordError {
                    path: self.path.clone(),
                    offset,
                    message: format!("corrupt block: {m}{}", self.shrunk_note()),
                }))
            }
        }
    }
}

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

/// Reads a whole file's games, stopping at the first bad frame.
pub fn read_all(path: &Path) -> Result<(Header, Vec<GameRecord>), RecordError> {
    let mut reader = KbzReader::open(path)?;
    let mut games = Vec::new();
    while let Some(b) = reader.next_block() {
        games.extend(b?.2);
    }
    if !reader.is_complete() {
        return Err(RecordError {
            path: path.to_path_buf(),
            offset: reader.len(),
            message: reader.incomplete_message(),
        });
    }
    Ok((reader.header.clone(), games))
}
