//! Reading and writing `.kbz` files: frames, checksums, whole blocks,
//! resuming after a crash.
//!
//! Writing: the header frame and each block frame are written with one
//! `write_all`, flushed and synced, so after a crash the file is whole up to
//! some frame boundary plus possibly part of one frame. Reading checks each
//! frame's structure and zstd checksum and names a bad frame by its byte
//! offset. Resuming keeps the complete frames, truncates the rest, and
//! continues after the last game written.

use std::{
    fmt,
    fs::{File, OpenOptions},
    io::{self, Seek, SeekFrom, Write},
    path::{Path, PathBuf},
};

use crate::{
    io::source::zstd_frame_end,
    record::format::{Block, GameRecord, Header, config},
};

/// zstd level of every frame (fixed: the same input gives the same bytes).
pub const ZSTD_LEVEL: i32 = 19;

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

/// Decompresses one frame (checksum verified) and decodes it.
pub fn decode_frame<T: bincode::Decode<()>>(frame: &[u8]) -> Result<T, String> {
    let size = match zstd::zstd_safe::get_frame_content_size(frame) {
        Ok(Some(n)) if n <= crate::record::format::DECODE_LIMIT as u64 => n as usize,
        Ok(Some(_)) => return Err("frame content larger than the format allows".into()),
        _ => return Err("not a zstd frame with a content size".into()),
    };
    let raw = zstd::bulk::decompress(frame, size).map_err(|e| format!("zstd: {e}"))?;
    let (value, used) =
        bincode::decode_from_slice(&raw, config()).map_err(|e| format!("decoding: {e}"))?;
    if used != raw.len() {
        return Err(format!("{} bytes after the structure", raw.len() - used));
    }
    Ok(value)
}

/// A block as read: its frame's byte offset and size, and its games.
pub type BlockRead = (u64, u64, Vec<GameRecord>);

/// A `.kbz` file read frame by frame through a memory map (pages behind the
/// reading position are released, so any size reads in bounded memory).
pub struct KbzReader {
    path: PathBuf,
    data: memmap2::Mmap,
    released: usize,
    /// The header.
    pub header: Header,
    pos: usize,
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
        // Safety: a read-only map of a regular file; the usual caveat of
        // mapping applies if another process truncates it meanwhile.
        let data =
            unsafe { memmap2::Mmap::map(&file) }.map_err(|e| err(0, format!("cannot map: {e}")))?;
        let _ = data.advise(memmap2::Advice::Sequential);
        let end =
            zstd_frame_end(&data, 0).ok_or_else(|| err(0, "no complete header frame".into()))?;
        let header: Header =
            decode_frame(&data[..end]).map_err(|m| err(0, format!("header: {m}")))?;
        if header.magic != crate::record::format::MAGIC {
            return Err(err(0, "not a kibitz record file (bad magic)".into()));
        }
        if header.version != crate::record::format::FORMAT_VERSION {
            return Err(err(
                0,
                format!(
                    "format version {} (this kibitz reads {})",
                    header.version,
                    crate::record::format::FORMAT_VERSION
                ),
            ));
        }
        Ok(KbzReader { path: path.to_path_buf(), data, released: 0, header, pos: end })
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
                message: "incomplete or malformed frame (a block cut short)".into(),
            }));
        };
        let frame = &self.data[self.pos..end];
        self.pos = end;
        if self.pos - self.released > 16 << 20 {
            let release_end = self.pos / 4096 * 4096;
            // Safety: read-only file mapping; pages behind the position are
            // not read again by this reader.
            let _ = unsafe {
                self.data.unchecked_advise_range(
                    memmap2::UncheckedAdvice::DontNeed,
                    self.released,
                    release_end - self.released,
                )
            };
            self.released = release_end;
        }
        match decode_frame::<Block>(frame).and_then(|b| b.games()) {
            Ok(games) => Some(Ok((offset, (end as u64) - offset, games))),
            Err(m) => {
                self.pos = self.data.len();
                Some(Err(RecordError {
                    path: self.path.clone(),
                    offset,
                    message: format!("corrupt block: {m}"),
                }))
            }
        }
    }
}

/// Writes a `.kbz` file block by block.
pub struct KbzWriter {
    file: File,
    path: PathBuf,
    written: u64,
}

impl KbzWriter {
    /// Creates a file and writes the header. Refuses to replace an existing
    /// file unless `force`.
    pub fn create(path: &Path, header: &Header, force: bool) -> io::Result<KbzWriter> {
        let mut options = OpenOptions::new();
        options.write(true);
        if force {
            options.create(true).truncate(true);
        } else {
            options.create_new(true);
        }
        let file = options.open(path).map_err(|e| {
            if e.kind() == io::ErrorKind::AlreadyExists {
                io::Error::new(
                    e.kind(),
                    format!(
                        "{} exists: use --force to replace it or --resume to continue it",
                        path.display()
                    ),
                )
            } else {
                io::Error::new(e.kind(), format!("cannot create {}: {e}", path.display()))
            }
        })?;
        let mut writer = KbzWriter { file, path: path.to_path_buf(), written: 0 };
        writer.write_frame(&encode_frame(header)?)?;
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
        while let Some(next) = reader.next_block() {
            match next {
                Ok((offset, size, games)) => {
                    good_end = offset + size;
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
        Ok((KbzWriter { file, path: path.to_path_buf(), written: good_end }, blocks, dropped))
    }

    fn write_frame(&mut self, frame: &[u8]) -> io::Result<()> {
        self.file.write_all(frame).map_err(|e| {
            io::Error::new(e.kind(), format!("writing {}: {e}", self.path.display()))
        })?;
        self.file.flush()?;
        self.file.sync_data()?;
        self.written += frame.len() as u64;
        Ok(())
    }

    /// Writes a block whole, flushed and synced.
    pub fn write_block(&mut self, block: &Block) -> io::Result<u64> {
        let frame = encode_frame(block)?;
        self.write_frame(&frame)?;
        Ok(frame.len() as u64)
    }

    /// Bytes in the file so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Closes the file (synced).
    pub fn finish(self) -> io::Result<()> {
        self.file.sync_all()
    }
}

/// Reads a whole file's games, stopping at the first bad frame.
pub fn read_all(path: &Path) -> Result<(Header, Vec<GameRecord>), RecordError> {
    let mut reader = KbzReader::open(path)?;
    let mut games = Vec::new();
    while let Some(b) = reader.next_block() {
        games.extend(b?.2);
    }
    Ok((reader.header.clone(), games))
}
