//! Reading `.kbz` files: the header, then block by block, every frame's
//! structure and checksum checked and a bad frame named by its byte offset.

use std::{
    fmt,
    fs::File,
    io,
    path::{Path, PathBuf},
};

use crate::{
    io::{
        mapguard::GuardedMap,
        source::{RELEASE_STEP, release_behind, zstd_frame_end},
    },
    record::{
        format::{Block, BlockV2, BlockV3, BlockV4, BlockV5, GameRecord, Header, MAGIC},
        frame::{Trailer, decode_frame, is_trailer_frame},
    },
};

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
    data: GuardedMap,
    released: usize,
    /// The header.
    pub header: Header,
    pub(crate) pos: usize,
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
        let data =
            unsafe { GuardedMap::map(file) }.map_err(|e| err(0, format!("cannot map: {e}")))?;
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

    /// The message for a file read to its end without an end marker: its
    /// name, and the blocks and games it holds. (What to do about it
    /// depends on the command that wrote it: a caller's to say.)
    pub fn incomplete_message(&self) -> String {
        format!(
            "{}: incomplete: no end marker after its {} blocks ({} games)",
            self.path.display(),
            self.read.blocks,
            self.read.games
        )
    }

    /// The blocks and games read so far.
    pub fn read_counts(&self) -> (u64, u64) {
        (self.read.blocks, self.read.games)
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
        if self.pos - self.released > RELEASE_STEP {
            // Frames behind the position are not read again by this reader.
            release_behind(&self.data, &mut self.released, self.pos);
        }
        let block = if self.header.version >= 6 {
            decode_frame::<Block>(frame)
        } else if self.header.version == 5 {
            decode_frame::<BlockV5>(frame).map(Block::from)
        } else if self.header.version == 4 {
            decode_frame::<BlockV4>(frame).map(Block::from)
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
