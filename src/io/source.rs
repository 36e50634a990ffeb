//! Sources: bytes from files or standard input, decompressed, cut into
//! chunks that end at game (or line) boundaries, ready to be parsed in
//! parallel.
//!
//! * Plain regular files are memory-mapped (memmap2, sequential advice) and
//!   chunks are ranges of the map: nothing is copied.
//! * Pipes, character devices and standard input (`-`) are read with
//!   `read`.
//! * zstd is detected by its magic number (or a skippable frame's), gzip by
//!   its own; file names do not matter. A zstd file of several frames
//!   (pzstd, as Lichess publishes) is decoded a window of frames at a time
//!   in parallel; a single frame streams through one decoder. Either way
//!   the decoded text goes through a splitter that re-synchronises on
//!   the next tag section, so a frame may end mid-game.
//!
//! Memory stays bounded: chunks are about [`ChunkConfig::target`] bytes, a
//! bounded channel limits how many are in flight, and a game longer than
//! [`ChunkConfig::max_game`] is reported and skipped rather than buffered.

use std::{
    fs::File,
    io::{self, BufRead, BufReader, Read},
    ops::{Deref, Range},
    path::Path,
    sync::Arc,
};

use memmap2::{Advice, Mmap};

use crate::io::mapguard::GuardedMap;
use rayon::prelude::*;

/// The text format of an input.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Portable Game Notation: games with tags and movetext.
    Pgn,
    /// Extended Position Description: one position per line.
    Epd,
}

/// How an input is compressed, from its first bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    /// Not compressed.
    Plain,
    /// zstd (one or more frames, skippable frames allowed).
    Zstd,
    /// gzip (one or more members).
    Gzip,
}

impl Compression {
    /// Detects the compression from the first bytes of a stream.
    pub fn detect(head: &[u8]) -> Compression {
        match head {
            [0x28, 0xb5, 0x2f, 0xfd, ..] => Compression::Zstd,
            // Skippable frames: magic 0x184D2A50 to 0x184D2A5F.
            [b0, 0x2a, 0x4d, 0x18, ..] if b0 & 0xf0 == 0x50 => Compression::Zstd,
            [0x1f, 0x8b, ..] => Compression::Gzip,
            _ => Compression::Plain,
        }
    }
}

/// Guesses the text format from the first bytes of the decompressed text:
/// a first line shaped like a FEN board means EPD, anything else PGN.
pub fn sniff_format(text: &[u8]) -> Format {
    let text = text.strip_prefix(b"\xef\xbb\xbf").unwrap_or(text);
    let first = text
        .split(|&b| b == b'\n')
        .map(|l| l.trim_ascii())
        .find(|l| !l.is_empty() && !l.starts_with(b"#"))
        .unwrap_or(b"");
    let board = first.split(|b| b.is_ascii_whitespace()).next().unwrap_or(b"");
    let looks_like_fen = board.iter().filter(|&&b| b == b'/').count() == 7
        && board.iter().all(|&b| b == b'/' || b.is_ascii_digit() || b"pnbrqkPNBRQK".contains(&b));
    if looks_like_fen { Format::Epd } else { Format::Pgn }
}

/// Why the start of an input is not PGN or EPD text, if it is not: an
/// archive kibitz does not decompress (bzip2, xz, zip, 7z, lz4: named, so
/// the user knows to decompress it first), or binary data, refused at once
/// instead of being scanned for games that are not there (`/dev/zero`
/// would otherwise be read for ever, and a `.pgn.bz2` read as a few empty
/// games). In the first 64 KiB: more than 10% NUL bytes (zeros, UTF-16
/// text; some EPD files end every line with a NUL, about 1.5% of their
/// bytes, and are text), or more than 1% other control bytes (random or
/// compressed data has about 11%; text has next to none).
pub fn binary_at(text: &[u8]) -> Option<String> {
    const ARCHIVES: [(&[u8], &str, &str); 6] = [
        (b"BZh", "bzip2", "bzip2 -dc"),
        (b"\xfd7zXZ\x00", "xz", "xz -dc"),
        (b"PK\x03\x04", "zip", "unzip -p"),
        (b"7z\xbc\xaf\x27\x1c", "7z", "7z x -so"),
        (b"\x04\x22\x4d\x18", "lz4", "lz4 -dc"),
        (b"\x5d\x00\x00", "lzma", "xz -dc"),
    ];
    // bzip2: "BZh", the block size 1-9, then a block's or the end's magic.
    let bzip2_body = |t: &[u8]| {
        matches!(t.get(3), Some(b'1'..=b'9'))
            && t.get(4..10)
                .is_some_and(|m| m == b"1AY&SY" || m == [0x17, 0x72, 0x45, 0x38, 0x50, 0x90])
    };
    for (magic, name, tool) in ARCHIVES {
        if text.starts_with(magic) && (name != "bzip2" || bzip2_body(text)) {
            return Some(format!(
                "{name}-compressed data: kibitz reads zstd and gzip; decompress it first \
                 (for example `{tool} FILE | kibitz ... -`): input skipped"
            ));
        }
    }
    let head = &text[..text.len().min(1 << 16)];
    let nuls = memchr::memchr_iter(0, head).count();
    // At least 16 of them as well as the share: a stray byte in a short
    // file or a short first read from a pipe is left to the parser.
    if nuls >= 16 && nuls * 10 > head.len() {
        return Some(format!(
            "binary data, not PGN or EPD text ({nuls} NUL bytes in the first {}): input skipped",
            head.len()
        ));
    }
    // Control bytes other than NUL, tab, line feed, form feed and carriage
    // return (and DOS's end-of-file mark).
    let controls = head
        .iter()
        .filter(|&&b| (b < 0x20 && !b"\0\t\n\x0c\r\x1a".contains(&b)) || b == 0x7f)
        .count();
    (controls >= 16 && controls * 100 > head.len()).then(|| {
        format!(
            "binary data, not PGN or EPD text ({controls} control bytes in the first {}): input skipped",
            head.len()
        )
    })
}

/// Chunking parameters.
#[derive(Clone, Copy, Debug)]
pub struct ChunkConfig {
    /// Preferred chunk size in bytes.
    pub target: usize,
    /// The largest game (or EPD line) kept whole; a longer one is skipped
    /// with an error.
    pub max_game: usize,
    /// Stop each input after this many bytes of text (whole games only):
    /// `--max-bytes`, a bound for endless inputs such as a device or a pipe.
    pub max_text: u64,
    /// Zstd frames decoded at once when a file has several.
    pub frame_window: usize,
}

impl Default for ChunkConfig {
    fn default() -> ChunkConfig {
        ChunkConfig { target: 1 << 20, max_game: 256 << 20, frame_window: 8, max_text: u64::MAX }
    }
}

/// Bytes of a chunk: a range of a mapped file, or an owned buffer.
#[derive(Clone, Debug)]
pub enum ChunkData {
    /// A range of a memory-mapped plain file.
    Mapped(Arc<GuardedMap>, Range<usize>),
    /// Decompressed or read bytes.
    Owned(Vec<u8>),
}

impl Deref for ChunkData {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            ChunkData::Mapped(map, range) => &map[range.clone()],
            ChunkData::Owned(v) => v,
        }
    }
}

impl ChunkData {
    /// For a mapped chunk whose file was truncated into or before the
    /// chunk's range (so pages of it read as zeros): the file's size now.
    pub fn cut_short(&self) -> Option<u64> {
        match self {
            ChunkData::Mapped(map, range) => map.shrunk().filter(|&now| now < range.end as u64),
            ChunkData::Owned(_) => None,
        }
    }

    /// Tells the kernel the pages of a mapped chunk will not be read again,
    /// so a long run over a large file keeps a small resident set.
    pub fn release(&self) {
        if let ChunkData::Mapped(map, range) = self {
            let page = 4096;
            let start = range.start.div_ceil(page) * page;
            let end = range.end / page * page;
            if end > start {
                // Safety: the map is a read-only shared mapping of a file;
                // MADV_DONTNEED only drops clean page-cache pages from this
                // process, which are read back from the file if touched
                // again. No reference into this range outlives the chunk's
                // processing, which is finished when this is called.
                let _ = unsafe {
                    map.unchecked_advise_range(
                        memmap2::UncheckedAdvice::DontNeed,
                        start,
                        end - start,
                    )
                };
            }
        }
    }
}

/// A piece of an input that holds whole games (or whole lines).
#[derive(Debug)]
pub struct Chunk {
    /// Index of the input among those given.
    pub file: usize,
    /// The text format.
    pub format: Format,
    /// Offset of the chunk's first byte in the input's decompressed text.
    pub offset: u64,
    /// Bytes of the (compressed) input consumed when the chunk was cut, for
    /// progress reports.
    pub input_pos: u64,
    /// The text.
    pub data: ChunkData,
    /// Index (over all inputs) of the chunk's first game or EPD line, when
    /// the pipeline counts games.
    pub first_game: u64,
}

/// What reading an input produces, in order.
#[derive(Debug)]
pub enum InputEvent {
    /// An input was opened.
    Start {
        /// Index of the input.
        file: usize,
        /// Its size on disk, when known.
        size: Option<u64>,
        /// Its compression.
        compression: Compression,
        /// Its text format.
        format: Format,
    },
    /// A chunk of text.
    Chunk(Chunk),
    /// A problem that skips part or all of an input. The run goes on.
    Error {
        /// Index of the input.
        file: usize,
        /// Byte offset where it happened: in the compressed file for
        /// decoding errors, in the text for oversized games.
        offset: Option<u64>,
        /// What went wrong.
        message: String,
    },
    /// An input is finished.
    End {
        /// Index of the input.
        file: usize,
        /// Bytes read from the input.
        bytes_in: u64,
        /// Bytes of decompressed text.
        bytes_out: u64,
    },
}

/// Receives events; returns `false` to stop reading.
pub type Emit<'a> = dyn FnMut(InputEvent) -> bool + 'a;

/// Reads one input (a path, or `-` for standard input) and emits its
/// events. Never fails: problems become [`InputEvent::Error`].
pub fn read_input(
    file: usize,
    path: &Path,
    format: Option<Format>,
    config: &ChunkConfig,
    emit: &mut Emit<'_>,
) {
    let mut reader = InputReader { file, config: *config, emit, stopped: false };
    reader.run(path, format);
}

struct InputReader<'a, 'b> {
    file: usize,
    config: ChunkConfig,
    emit: &'a mut Emit<'b>,
    stopped: bool,
}

/// A reader that counts the bytes it hands out.
struct Counting<R> {
    inner: R,
    count: Arc<std::sync::atomic::AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }
}

/// Reads a mapped file front to back, telling the kernel to drop the pages
/// it has passed (so a compressed input does not stay resident), and
/// counting the bytes it hands out.
struct MappedReader<'a> {
    map: &'a Mmap,
    pos: usize,
    released: usize,
    count: Arc<std::sync::atomic::AtomicU64>,
}

impl Read for MappedReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = buf.len().min(self.map.len() - self.pos);
        buf[..n].copy_from_slice(&self.map[self.pos..self.pos + n]);
        self.pos += n;
        self.count.store(self.pos as u64, std::sync::atomic::Ordering::Relaxed);
        const STEP: usize = 16 << 20;
        if self.pos - self.released > STEP {
            let end = (self.pos - (1 << 20)) / 4096 * 4096;
            if end > self.released {
                // Safety: a read-only shared file mapping; the dropped pages
                // are behind the read position and only re-read from the
                // file if touched again, which this reader never does.
                let _ = unsafe {
                    self.map.unchecked_advise_range(
                        memmap2::UncheckedAdvice::DontNeed,
                        self.released,
                        end - self.released,
                    )
                };
                self.released = end;
            }
        }
        Ok(n)
    }
}

impl InputReader<'_, '_> {
    fn send(&mut self, event: InputEvent) {
        if !self.stopped && !(self.emit)(event) {
            self.stopped = true;
        }
    }

    fn error(&mut self, offset: Option<u64>, message: String) {
        let file = self.file;
        self.send(InputEvent::Error { file, offset, message });
    }

    fn run(&mut self, path: &Path, format: Option<Format>) {
        let file = self.file;
        if path.as_os_str() == "-" {
            let stdin = io::stdin();
            let reader = BufReader::with_capacity(1 << 20, stdin.lock());
            let (bytes_in, bytes_out) = self.stream(reader, None, format);
            self.send(InputEvent::End { file, bytes_in, bytes_out });
            return;
        }
        let opened = File::open(path).and_then(|f| f.metadata().map(|m| (f, m)));
        let (handle, meta) = match opened {
            Ok(x) => x,
            Err(e) => {
                self.error(None, format!("cannot open: {e}"));
                self.send(InputEvent::End { file, bytes_in: 0, bytes_out: 0 });
                return;
            }
        };
        if meta.is_dir() {
            self.error(None, "is a directory".into());
            self.send(InputEvent::End { file, bytes_in: 0, bytes_out: 0 });
            return;
        }
        if meta.is_file() && meta.len() > 0 {
            // Safety: the map is read-only and read as plain bytes. Another
            // process truncating the file while it is mapped would make reads
            // past the new end fault (SIGBUS); the guard turns those pages
            // into zeros and the reader reports the file as cut short.
            let mapped = handle.try_clone().and_then(|h| unsafe { GuardedMap::map(h) });
            match mapped {
                Ok(map) => {
                    let _ = map.advise(Advice::Sequential);
                    let (bytes_in, bytes_out) = self.mapped(Arc::new(map), format);
                    self.send(InputEvent::End { file, bytes_in, bytes_out });
                    return;
                }
                Err(e) => {
                    // Fall back to reading.
                    let _ = e;
                }
            }
        }
        let reader = BufReader::with_capacity(1 << 20, handle);
        let size = meta.is_file().then_some(meta.len());
        let (bytes_in, bytes_out) = self.stream(reader, size, format);
        self.send(InputEvent::End { file, bytes_in, bytes_out });
    }

    /// A mapped regular file: returns (bytes in, bytes out).
    fn mapped(&mut self, map: Arc<GuardedMap>, format: Option<Format>) -> (u64, u64) {
        let out = self.mapped_inner(&map, format);
        let was = map.len();
        if let Some(now) = map.shrunk() {
            self.error(
                Some(now),
                format!(
                    "the file shrank from {was} to {now} bytes while being read: \
                     nothing past byte {now} was read"
                ),
            );
        } else if let Some(now) = map.grown() {
            self.error(
                Some(was as u64),
                format!(
                    "the file grew from {was} to {now} bytes while being read: \
                     only the first {was} bytes were read"
                ),
            );
        }
        out
    }

    fn mapped_inner(&mut self, map: &Arc<GuardedMap>, format: Option<Format>) -> (u64, u64) {
        let file = self.file;
        let size = map.len() as u64;
        let compression = Compression::detect(map);
        match compression {
            Compression::Plain => {
                let format = format.unwrap_or_else(|| sniff_format(&map[..map.len().min(1 << 16)]));
                self.send(InputEvent::Start { file, size: Some(size), compression, format });
                if let Some(why) = binary_at(map) {
                    self.error(Some(0), why);
                    return (size, 0);
                }
                let mut start = 0;
                let mut len = map.len();
                let max = self.config.max_text;
                if (len as u64) > max {
                    // Whole games (or lines) within the first `max` bytes.
                    len = rfind_boundary(map, max as usize, format).unwrap_or(0);
                }
                while start < len && !self.stopped {
                    if map.shrunk().is_some() {
                        // Cut short underneath us: the rest reads as zeros.
                        break;
                    }
                    let mut end = if len - start <= self.config.target {
                        len
                    } else {
                        find_boundary(map, start + self.config.target, format).unwrap_or(len)
                    };
                    if end - start > self.config.max_game + self.config.target {
                        // No boundary for a long stretch: one huge game.
                        // Skip it whole; the next chunk starts at the next
                        // boundary.
                        let skip_to = find_boundary(map, start + 1, format).unwrap_or(len);
                        self.error(
                            Some(start as u64),
                            format!(
                                "game longer than {} MiB ({} bytes): skipped",
                                self.config.max_game >> 20,
                                skip_to - start
                            ),
                        );
                        start = skip_to;
                        continue;
                    }
                    if end < start {
                        end = len;
                    }
                    self.send(InputEvent::Chunk(Chunk {
                        file,
                        format,
                        offset: start as u64,
                        input_pos: end as u64,
                        data: ChunkData::Mapped(map.clone(), start..end),
                        first_game: 0,
                    }));
                    start = end;
                }
                if len < map.len() && !self.stopped {
                    self.error(Some(len as u64), max_bytes_message(max));
                }
                (size, len as u64)
            }
            Compression::Zstd => {
                let frames = zstd_frames(map);
                let data_frames =
                    frames.iter().filter(|r| !is_skippable(&map[(*r).clone()])).count();
                if data_frames > 1 && frames.iter().all(|r| r.len() <= MAX_PARALLEL_FRAME) {
                    self.zstd_frames(map, &frames, format)
                } else {
                    let count = Arc::new(std::sync::atomic::AtomicU64::new(0));
                    let counting = MappedReader { map, pos: 0, released: 0, count: count.clone() };
                    match zstd::stream::read::Decoder::with_buffer(BufReader::with_capacity(
                        1 << 17,
                        counting,
                    )) {
                        Ok(decoder) => {
                            let out =
                                self.split_stream(decoder, Some(size), compression, format, &count);
                            (count.load(std::sync::atomic::Ordering::Relaxed), out)
                        }
                        Err(e) => {
                            self.error(Some(0), format!("cannot start zstd decoding: {e}"));
                            (0, 0)
                        }
                    }
                }
            }
            Compression::Gzip => {
                let count = Arc::new(std::sync::atomic::AtomicU64::new(0));
                let counting = MappedReader { map, pos: 0, released: 0, count: count.clone() };
                let decoder =
                    flate2::read::MultiGzDecoder::new(BufReader::with_capacity(1 << 17, counting));
                let out = self.split_stream(decoder, Some(size), compression, format, &count);
                (count.load(std::sync::atomic::Ordering::Relaxed), out)
            }
        }
    }

    /// A stream (stdin, pipe, device, or a file that could not be mapped).
    fn stream<R: BufRead>(
        &mut self,
        mut reader: R,
        size: Option<u64>,
        format: Option<Format>,
    ) -> (u64, u64) {
        let head = match reader.fill_buf() {
            Ok(h) => h,
            Err(e) => {
                self.error(Some(0), format!("cannot read: {e}"));
                return (0, 0);
            }
        };
        let compression = Compression::detect(head);
        let count = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let counting = Counting { inner: reader, count: count.clone() };
        let out = match compression {
            Compression::Plain => self.split_stream(counting, size, compression, format, &count),
            Compression::Zstd => {
                match zstd::stream::read::Decoder::with_buffer(BufReader::new(counting)) {
                    Ok(d) => self.split_stream(d, size, compression, format, &count),
                    Err(e) => {
                        self.error(Some(0), format!("cannot start zstd decoding: {e}"));
                        0
                    }
                }
            }
            Compression::Gzip => {
                let d = flate2::read::MultiGzDecoder::new(BufReader::new(counting));
                self.split_stream(d, size, compression, format, &count)
            }
        };
        (count.load(std::sync::atomic::Ordering::Relaxed), out)
    }

    /// Cuts a decoded stream into chunks. Returns the bytes of text.
    fn split_stream<R: Read>(
        &mut self,
        mut reader: R,
        size: Option<u64>,
        compression: Compression,
        format: Option<Format>,
        count: &std::sync::atomic::AtomicU64,
    ) -> u64 {
        let file = self.file;
        let mut splitter: Option<Splitter> = None;
        let mut pending_start = Some((size, compression, format));
        let mut buf = vec![0u8; 1 << 18];
        loop {
            if self.stopped {
                break;
            }
            let n = match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    if let Some((size, compression, format)) = pending_start.take() {
                        let format = format.unwrap_or(Format::Pgn);
                        self.send(InputEvent::Start { file, size, compression, format });
                    }
                    // Hand over the whole games decoded, then report where
                    // it broke.
                    let cut = drop_cut_game(&mut splitter);
                    self.flush_splitter(&mut splitter, count);
                    let at = count.load(std::sync::atomic::Ordering::Relaxed);
                    self.error(
                        Some(at),
                        format!(
                            "{} data broken near compressed byte {at}: {e}{}",
                            compression_name(compression),
                            cut_game_note(cut)
                        ),
                    );
                    return splitter.map_or(0, |s| s.offset + s.buf.len() as u64);
                }
            };
            let data = &buf[..n];
            if let Some((size, compression, format)) = pending_start.take() {
                let format = format.unwrap_or_else(|| sniff_format(data));
                self.send(InputEvent::Start { file, size, compression, format });
                if let Some(why) = binary_at(data) {
                    self.error(Some(0), why);
                    return 0;
                }
                splitter = Some(Splitter::new(format, self.config));
            }
            if !self.push_text(&mut splitter, data, count) {
                break;
            }
        }
        if let Some((size, compression, format)) = pending_start.take() {
            // Empty input.
            self.send(InputEvent::Start {
                file,
                size,
                compression,
                format: format.unwrap_or(Format::Pgn),
            });
            return 0;
        }
        self.flush_splitter(&mut splitter, count);
        splitter.map_or(0, |s| s.offset + s.buf.len() as u64)
    }

    fn drain_splitter(
        &mut self,
        splitter: &mut Option<Splitter>,
        count: &std::sync::atomic::AtomicU64,
        last: bool,
    ) {
        let Some(s) = splitter.as_mut() else { return };
        loop {
            match s.next(last) {
                SplitResult::Chunk(offset, data) => {
                    let input_pos = count.load(std::sync::atomic::Ordering::Relaxed);
                    let file = self.file;
                    let format = s.format;
                    self.send(InputEvent::Chunk(Chunk {
                        file,
                        format,
                        offset,
                        input_pos,
                        data: ChunkData::Owned(data),
                        first_game: 0,
                    }));
                }
                SplitResult::Oversized(offset, len) => {
                    let max = self.config.max_game >> 20;
                    self.error(
                        Some(offset),
                        format!("game longer than {max} MiB ({len} bytes so far): skipped"),
                    );
                }
                SplitResult::NeedMore => break,
            }
            if self.stopped {
                break;
            }
        }
    }

    /// Adds decoded text to the splitter and sends the chunks it makes.
    /// Returns `false` when `--max-bytes` is reached: the games that fit are
    /// sent, the one cut by the limit is dropped, and the input stops.
    fn push_text(
        &mut self,
        splitter: &mut Option<Splitter>,
        data: &[u8],
        count: &std::sync::atomic::AtomicU64,
    ) -> bool {
        let Some(s) = splitter.as_mut() else { return true };
        let max = self.config.max_text;
        let room = max.saturating_sub(s.offset + s.buf.len() as u64);
        if data.len() as u64 <= room {
            s.buf.extend_from_slice(data);
            self.drain_splitter(splitter, count, false);
            return true;
        }
        s.buf.extend_from_slice(&data[..room as usize]);
        let keep = rfind_boundary(&s.buf, s.buf.len(), s.format).unwrap_or(0);
        s.buf.truncate(keep);
        self.flush_splitter(splitter, count);
        self.error(Some(max), max_bytes_message(max));
        false
    }

    fn flush_splitter(
        &mut self,
        splitter: &mut Option<Splitter>,
        count: &std::sync::atomic::AtomicU64,
    ) {
        self.drain_splitter(splitter, count, true);
    }

    /// A zstd file of several frames: decode windows of frames in parallel,
    /// then split the text in order.
    fn zstd_frames(
        &mut self,
        map: &Mmap,
        frames: &[Range<usize>],
        format: Option<Format>,
    ) -> (u64, u64) {
        let file = self.file;
        let count = std::sync::atomic::AtomicU64::new(0);
        let mut splitter: Option<Splitter> = None;
        let mut started = false;
        for window in frames.chunks(self.config.frame_window.max(1)) {
            if self.stopped {
                break;
            }
            let decoded: Vec<Result<Vec<u8>, String>> = window
                .par_iter()
                .map(|range| decode_frame(&map[range.clone()]).map_err(|e| e.to_string()))
                .collect();
            if let (Some(first), Some(last)) = (window.first(), window.last()) {
                let start = first.start.div_ceil(4096) * 4096;
                let end = last.end / 4096 * 4096;
                if end > start {
                    // Safety: as in `MappedReader::read`: these frames are
                    // decoded and never read again.
                    let _ = unsafe {
                        map.unchecked_advise_range(
                            memmap2::UncheckedAdvice::DontNeed,
                            start,
                            end - start,
                        )
                    };
                }
            }
            for (range, result) in window.iter().zip(decoded) {
                match result {
                    Ok(text) => {
                        count.store(range.end as u64, std::sync::atomic::Ordering::Relaxed);
                        if text.is_empty() {
                            continue; // skippable frame
                        }
                        if !started {
                            started = true;
                            let format = format.unwrap_or_else(|| sniff_format(&text));
                            self.send(InputEvent::Start {
                                file,
                                size: Some(map.len() as u64),
                                compression: Compression::Zstd,
                                format,
                            });
                            if let Some(why) = binary_at(&text) {
                                self.error(Some(0), why);
                                return (range.end as u64, 0);
                            }
                            splitter = Some(Splitter::new(format, self.config));
                        }
                        if !self.push_text(&mut splitter, &text, &count) {
                            let out = splitter.map_or(0, |s| s.offset + s.buf.len() as u64);
                            return (range.end as u64, out);
                        }
                    }
                    Err(e) => {
                        let cut = drop_cut_game(&mut splitter);
                        self.flush_splitter(&mut splitter, &count);
                        self.error(
                            Some(range.start as u64),
                            format!(
                                "zstd frame at compressed byte {} broken: {e}{}",
                                range.start,
                                cut_game_note(cut)
                            ),
                        );
                        let out = splitter.map_or(0, |s| s.offset + s.buf.len() as u64);
                        return (range.start as u64, out);
                    }
                }
            }
        }
        if !started {
            self.send(InputEvent::Start {
                file,
                size: Some(map.len() as u64),
                compression: Compression::Zstd,
                format: format.unwrap_or(Format::Pgn),
            });
        }
        self.flush_splitter(&mut splitter, &count);
        (map.len() as u64, splitter.map_or(0, |s| s.offset + s.buf.len() as u64))
    }
}

/// When decoding breaks, the text decoded so far almost always ends inside
/// a game, which would otherwise be read as a shorter game (or a game of
/// tags alone) and counted as replayed. Drops that last game (or EPD line)
/// from the splitter unless it is visibly complete (a PGN game ending in its
/// result token, an EPD line ending in a newline), and returns the text
/// offset where the dropped part starts.
fn drop_cut_game(splitter: &mut Option<Splitter>) -> Option<u64> {
    let s = splitter.as_mut()?;
    if s.skipping {
        // Inside an oversized game already reported and dropped.
        return None;
    }
    let end = whole_games_end(&s.buf, s.format);
    if s.buf[end..].iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    s.buf.truncate(end);
    Some(s.offset + end as u64)
}

/// The end of the last whole game (or EPD line) in `buf`, which starts at a
/// game boundary: all of it when the last PGN line is movetext (not a tag,
/// such as a `[Result "1-0` cut short) ending in a result token of its own,
/// else the last boundary. Text whose games are not separated by blank
/// lines has none (the splitter hands it over whole); there the last game
/// starts at the last `[` line whose previous non-blank line is movetext,
/// as pgn-reader starts games.
fn whole_games_end(buf: &[u8], format: Format) -> usize {
    if format == Format::Pgn {
        let line = last_line(buf.trim_ascii_end());
        let finished = !line.trim_ascii_start().starts_with(b"[")
            && [&b"1-0"[..], b"0-1", b"1/2-1/2", b"*"].iter().any(|result| {
                line.strip_suffix(*result)
                    .is_some_and(|before| before.last().is_none_or(u8::is_ascii_whitespace))
            });
        if finished {
            return buf.len();
        }
    }
    rfind_boundary(buf, buf.len(), format)
        .or_else(|| {
            (format == Format::Pgn).then(|| {
                rfind_tag_line(buf, buf.len(), |before| {
                    matches!(last_line(before.trim_ascii_end()).trim_ascii_start().first(),
                        Some(c) if *c != b'[' && *c != b'%')
                })
            })?
        })
        .unwrap_or(0)
}

/// The last line of `text` (all of it if it has no line feed).
fn last_line(text: &[u8]) -> &[u8] {
    &text[memchr::memrchr(b'\n', text).map_or(0, |i| i + 1)..]
}

/// What the error message adds about a game dropped by [`drop_cut_game`].
fn cut_game_note(cut: Option<u64>) -> String {
    cut.map_or_else(String::new, |at| {
        format!(" (the game it cuts, from text byte {at}, is not read)")
    })
}

fn max_bytes_message(max: u64) -> String {
    format!("stopped after {max} bytes of text (--max-bytes): the rest of the input is not read")
}

fn compression_name(c: Compression) -> &'static str {
    match c {
        Compression::Plain => "plain",
        Compression::Zstd => "zstd",
        Compression::Gzip => "gzip",
    }
}

/// The end of the zstd frame (data or skippable) starting at `pos`, read
/// from the frame and block headers (RFC 8878), or `None` if the bytes there
/// are not a complete frame.
pub fn zstd_frame_end(data: &[u8], pos: usize) -> Option<usize> {
    zstd_frame_end_with(data, pos, &mut |_| {})
}

/// [`zstd_frame_end`], calling `progress` with the position now and then
/// while walking a long frame's blocks.
fn zstd_frame_end_with(data: &[u8], pos: usize, progress: &mut dyn FnMut(usize)) -> Option<usize> {
    let le32 = |at: usize| -> Option<u32> {
        data.get(at..at + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let magic = le32(pos)?;
    if magic & 0xffff_fff0 == 0x184d_2a50 {
        let size = le32(pos + 4)? as usize;
        let end = pos.checked_add(8)?.checked_add(size)?;
        return (end <= data.len()).then_some(end);
    }
    if magic != 0xfd2f_b528 {
        return None;
    }
    let descriptor = *data.get(pos + 4)?;
    let fcs_flag = descriptor >> 6;
    let single_segment = descriptor & 0x20 != 0;
    let checksum = descriptor & 0x04 != 0;
    let dict_bytes = [0, 1, 2, 4][usize::from(descriptor & 3)];
    let fcs_bytes = match fcs_flag {
        0 => usize::from(single_segment),
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let mut at = pos + 5 + usize::from(!single_segment) + dict_bytes + fcs_bytes;
    loop {
        let h = data.get(at..at + 3)?;
        let header = u32::from(h[0]) | u32::from(h[1]) << 8 | u32::from(h[2]) << 16;
        let last = header & 1 != 0;
        let block_type = (header >> 1) & 3;
        let size = (header >> 3) as usize;
        at += 3 + match block_type {
            0 | 2 => size,
            1 => 1,
            _ => return None,
        };
        if at > data.len() {
            return None;
        }
        if last {
            break;
        }
        progress(at);
    }
    if checksum {
        at += 4;
    }
    (at <= data.len()).then_some(at)
}

/// The frames of a mapped zstd file, in order. A stretch that is not a
/// complete frame ends the list as one range (the decoder reports it).
/// Walking the block headers touches the file's pages; they are released as
/// the walk goes, so a large file does not become resident.
pub fn zstd_frames(map: &Mmap) -> Vec<Range<usize>> {
    let mut frames = Vec::new();
    let mut pos = 0;
    let mut released = 0;
    let mut release = |at: usize| {
        if at - released > 16 << 20 {
            let end = at / 4096 * 4096;
            // Safety: a read-only shared file mapping; dropped pages are read
            // back from the file when touched again.
            let _ = unsafe {
                map.unchecked_advise_range(
                    memmap2::UncheckedAdvice::DontNeed,
                    released,
                    end - released,
                )
            };
            released = end;
        }
    };
    while pos < map.len() {
        match zstd_frame_end_with(map, pos, &mut release) {
            Some(end) => {
                frames.push(pos..end);
                pos = end;
            }
            None => {
                frames.push(pos..map.len());
                break;
            }
        }
        release(pos);
    }
    frames
}

/// Frames larger than this (compressed) are streamed rather than decoded
/// whole in parallel, to keep memory bounded.
const MAX_PARALLEL_FRAME: usize = 32 << 20;

/// Whether the bytes start with a skippable frame's magic number.
fn is_skippable(frame: &[u8]) -> bool {
    matches!(frame, [b0, 0x2a, 0x4d, 0x18, ..] if b0 & 0xf0 == 0x50)
}

/// Decodes one zstd frame (a skippable frame gives no bytes).
fn decode_frame(frame: &[u8]) -> io::Result<Vec<u8>> {
    if is_skippable(frame) {
        return Ok(Vec::new());
    }
    let capacity = match zstd::zstd_safe::get_frame_content_size(frame) {
        Ok(Some(n)) if n <= 1 << 30 => n as usize,
        _ => frame.len() * 4,
    };
    let mut out = Vec::with_capacity(capacity);
    let mut decoder = zstd::stream::read::Decoder::with_buffer(frame)?.single_frame();
    decoder.read_to_end(&mut out)?;
    Ok(out)
}

/// What [`Splitter::next`] gives.
enum SplitResult {
    /// A chunk: its text offset and bytes.
    Chunk(u64, Vec<u8>),
    /// A game longer than the maximum was dropped: its offset and length.
    Oversized(u64, usize),
    /// Feed more bytes.
    NeedMore,
}

/// Accumulates decoded text and cuts it at game boundaries.
struct Splitter {
    format: Format,
    config: ChunkConfig,
    buf: Vec<u8>,
    /// Text offset of `buf[0]`.
    offset: u64,
    /// Skipping an oversized game until the next boundary.
    skipping: bool,
    /// No boundary lies between the target and here (the search resumes
    /// here, so a long game arriving read by read is scanned once).
    searched: usize,
}

impl Splitter {
    fn new(format: Format, config: ChunkConfig) -> Splitter {
        Splitter {
            format,
            config,
            buf: Vec::with_capacity(config.target * 2),
            offset: 0,
            skipping: false,
            searched: 0,
        }
    }

    fn take(&mut self, end: usize) -> Vec<u8> {
        let mut rest = Vec::with_capacity(self.config.target * 2);
        rest.extend_from_slice(&self.buf[end..]);
        let mut chunk = std::mem::replace(&mut self.buf, rest);
        chunk.truncate(end);
        self.offset += end as u64;
        self.searched = 0;
        chunk
    }

    fn next(&mut self, last: bool) -> SplitResult {
        if self.skipping {
            match find_boundary(&self.buf, 1, self.format) {
                Some(b) => {
                    self.take(b);
                    self.skipping = false;
                }
                None => {
                    // Keep only a small tail (a boundary may straddle reads).
                    let keep = self.buf.len().min(8);
                    let drop = self.buf.len() - keep;
                    self.buf.drain(..drop);
                    self.offset += drop as u64;
                    self.searched = 0;
                    return SplitResult::NeedMore;
                }
            }
        }
        if self.buf.is_empty() {
            return SplitResult::NeedMore;
        }
        // Cut at the first game boundary after the target size, however much
        // one read brought in: a decoder hands over 256 KiB at a time, and a
        // search job wants chunks of a few games so every worker has work.
        if self.buf.len() > self.config.target {
            let from = self.searched.max(self.config.target);
            if let Some(b) = find_boundary(&self.buf, from, self.format) {
                let offset = self.offset;
                return SplitResult::Chunk(offset, self.take(b));
            }
            self.searched = self.buf.len();
        }
        if last {
            let n = self.buf.len();
            let offset = self.offset;
            return SplitResult::Chunk(offset, self.take(n));
        }
        if self.buf.len() > self.config.max_game {
            // No boundary after the target: whole games before the giant one
            // go out first, then the giant one is skipped.
            if let Some(b) =
                rfind_boundary(&self.buf, self.buf.len(), self.format).filter(|&b| b > 0)
            {
                let offset = self.offset;
                return SplitResult::Chunk(offset, self.take(b));
            }
            let offset = self.offset;
            let len = self.buf.len();
            self.skipping = true;
            self.buf.clear();
            self.offset += len as u64;
            return SplitResult::Oversized(offset, len);
        }
        SplitResult::NeedMore
    }
}

/// Whether the `[` at `pos` (at the start of a line, after a blank line)
/// starts a new game: the last non-blank line before it is not a tag line
/// (tag sections separated by blank lines are one game to the parser).
fn starts_game(buf: &[u8], pos: usize) -> bool {
    // Preceded by a blank line: "\n\n[" or "\n\r\n[".
    let before = &buf[..pos];
    let blank = before.ends_with(b"\n\n") || before.ends_with(b"\n\r\n");
    if !blank {
        return false;
    }
    let content = before.trim_ascii_end();
    !content.is_empty() && !last_line(content).starts_with(b"[")
}

/// The first boundary at or after `from`: for PGN the start of a game's tag
/// section, for EPD the start of a line.
pub fn find_boundary(buf: &[u8], from: usize, format: Format) -> Option<usize> {
    if from >= buf.len() {
        return None;
    }
    match format {
        Format::Epd => memchr::memchr(b'\n', &buf[from - usize::from(from > 0)..])
            .map(|i| from - usize::from(from > 0) + i + 1)
            .filter(|&b| b < buf.len()),
        Format::Pgn => {
            let finder = memchr::memmem::Finder::new(b"\n[");
            let mut at = from.saturating_sub(1);
            while let Some(i) = finder.find(&buf[at..]) {
                let pos = at + i + 1;
                if pos >= from && starts_game(buf, pos) {
                    return Some(pos);
                }
                at = pos;
            }
            None
        }
    }
}

/// The last boundary before `end`.
fn rfind_boundary(buf: &[u8], end: usize, format: Format) -> Option<usize> {
    match format {
        Format::Epd => memchr::memrchr(b'\n', &buf[..end.min(buf.len())]).map(|i| i + 1),
        Format::Pgn => rfind_tag_line(buf, end, |before| starts_game(buf, before.len())),
    }
}

/// The start of the last line before `end` that opens with `[` and whose
/// text before it passes `accept`.
fn rfind_tag_line(buf: &[u8], end: usize, accept: impl Fn(&[u8]) -> bool) -> Option<usize> {
    let finder = memchr::memmem::FinderRev::new(b"\n[");
    let mut until = end.min(buf.len());
    while let Some(i) = finder.rfind(&buf[..until]) {
        if accept(&buf[..=i]) {
            return Some(i + 1);
        }
        until = i;
    }
    None
}

/// How an input is named in messages: its path, or `<stdin>` for `-`.
pub fn display_name(path: &Path) -> String {
    if path.as_os_str() == "-" { "<stdin>".into() } else { path.display().to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_games_end_keeps_only_finished_games() {
        let a = "[Event \"a\"]\n\n1. e4 e5 1-0\n\n";
        let cases: [(&str, usize); 8] = [
            ("", 0),
            ("[Event \"b\"]\n\n1. d4 d5 *\n", 1),
            ("[Event \"b\"]\n\n1. d4 d5 2. c4 1/2-1/2", 1),
            // Cut inside the moves, a result half written, a tag section.
            ("[Event \"b\"]\n\n1. d4 d5 2. c4", 0),
            ("[Event \"b\"]\n\n1. d4 d5 1/2-1", 0),
            ("[Event \"b\"]\n[Result \"1-0", 0),
            ("[Event \"b\"]\n[Result \"*", 0),
            // A result token must stand alone.
            (
                "[Event \"b\"]\n\n1. d4 d5 2. Nf3 Nf6 3. Qd3 Qd6 4. Qa3 Qa6 5. Qxa6 bxa6 6. e3 a5 7. b4 a4 8. b5 a3 9. b6 a2 10. bxa70-1",
                0,
            ),
        ];
        for (tail, whole) in cases {
            let buf = format!("{a}{tail}");
            let end = if whole == 1 { buf.len() } else { a.len() };
            assert_eq!(whole_games_end(buf.as_bytes(), Format::Pgn), end, "{tail:?}");
        }
        assert_eq!(whole_games_end(b"[Event \"b\"]\n[Result \"1-0", Format::Pgn), 0);
        // Games without blank lines between them (pgn-reader reads them):
        // the finished ones are kept.
        let dense = b"[Event \"a\"]\n1. e4 *\n[Event \"b\"]\n1. d4 *\n[Event \"c\"]\n1. c4";
        assert_eq!(whole_games_end(dense, Format::Pgn), 40);
        assert!(dense[40..].starts_with(b"[Event \"c\"]"));
        assert_eq!(whole_games_end(b"fen1 w - -\nfen2 b", Format::Epd), 11);
    }

    #[test]
    fn detects_compression_by_magic() {
        assert_eq!(Compression::detect(&[0x28, 0xb5, 0x2f, 0xfd, 0]), Compression::Zstd);
        assert_eq!(Compression::detect(&[0x50, 0x2a, 0x4d, 0x18]), Compression::Zstd);
        assert_eq!(Compression::detect(&[0x1f, 0x8b, 8]), Compression::Gzip);
        assert_eq!(Compression::detect(b"[Event"), Compression::Plain);
        assert_eq!(Compression::detect(b""), Compression::Plain);
    }

    #[test]
    fn sniffs_format() {
        assert_eq!(sniff_format(b"[Event \"x\"]\n1. e4 *\n"), Format::Pgn);
        assert_eq!(sniff_format(b"\n8/8/8/8/8/8/8/K6k w - - bm Kb2;\n"), Format::Epd);
        assert_eq!(sniff_format(b"1. e4 e5 *"), Format::Pgn);
    }

    #[test]
    fn boundaries_skip_tag_only_blocks() {
        let text = b"[A \"1\"]\n\n1. e4 *\n\n[B \"2\"]\n\n[C \"3\"]\n\n1. d4 *\n\n[D \"4\"]\n";
        let first = find_boundary(text, 1, Format::Pgn).unwrap();
        assert!(text[first..].starts_with(b"[B"));
        // [C follows a tag-only block: same game to the parser.
        let second = find_boundary(text, first + 1, Format::Pgn).unwrap();
        assert!(text[second..].starts_with(b"[D"));
        assert_eq!(rfind_boundary(text, text.len(), Format::Pgn), Some(second));
        let crlf = b"[A \"1\"]\r\n\r\n1. e4 *\r\n\r\n[B \"2\"]\r\n";
        assert!(crlf[find_boundary(crlf, 1, Format::Pgn).unwrap()..].starts_with(b"[B"));
    }

    #[test]
    fn splitter_keeps_games_whole() {
        let game = b"[Event \"x\"]\n\n1. e4 e5 2. Nf3 *\n\n";
        let mut text = Vec::new();
        for _ in 0..1000 {
            text.extend_from_slice(game);
        }
        let config = ChunkConfig { target: 1000, max_game: 1 << 20, ..ChunkConfig::default() };
        // Reads smaller and much larger than the target: chunks stay near
        // the target either way (a decoder hands over 256 KiB at a time).
        for read_size in [777, 100_000] {
            let mut s = Splitter::new(Format::Pgn, config);
            let mut chunks = Vec::new();
            for piece in text.chunks(read_size) {
                s.buf.extend_from_slice(piece);
                while let SplitResult::Chunk(off, c) = s.next(false) {
                    chunks.push((off, c));
                }
            }
            while let SplitResult::Chunk(off, c) = s.next(true) {
                chunks.push((off, c));
            }
            let joined: Vec<u8> = chunks.iter().flat_map(|(_, c)| c.iter().copied()).collect();
            assert_eq!(joined, text);
            for (off, c) in &chunks {
                assert!(c.starts_with(b"[Event"), "chunk at {off}");
                assert_eq!(&text[*off as usize..*off as usize + c.len()], &c[..]);
                assert!(c.len() <= config.target + game.len(), "chunk of {} bytes", c.len());
            }
            assert!(chunks.len() > 10);
        }
    }
}
