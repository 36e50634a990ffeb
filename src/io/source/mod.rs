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
//!
//! The reader lives here; `detect` recognises compressions and formats,
//! `chunk` holds the chunk and event types, `frames` walks zstd frames and
//! `split` cuts text at game boundaries.

mod chunk;
mod detect;
mod frames;
mod split;

pub use chunk::{Chunk, ChunkConfig, ChunkData, Emit, InputEvent, LinePlaces, Release};
pub use detect::{
    Compression, Format, PARQUET_MAGIC, binary_at, is_parquet, is_parquet_file, sniff_format,
};
pub use frames::{zstd_frame_end, zstd_frames};
pub use split::find_boundary;

use std::{
    fs::File,
    io::{self, BufRead, BufReader, Read},
    ops::Range,
    path::Path,
    sync::Arc,
};

use memmap2::{Advice, Mmap};
use rayon::prelude::*;

use crate::io::{filter::GameFilter, mapguard::GuardedMap};
use detect::compression_name;
use frames::{MAX_PARALLEL_FRAME, decode_frame};
use split::{SplitResult, Splitter, drop_cut_game, rfind_boundary};

/// Reads one input (a path, or `-` for standard input) and emits its
/// events. Never fails: problems become [`InputEvent::Error`].
pub fn read_input(
    file: usize,
    path: &Path,
    format: Option<Format>,
    config: &ChunkConfig,
    emit: &mut Emit<'_>,
) {
    read_input_filtered(file, path, format, config, None, emit);
}

/// [`read_input`], with the game filters of the run: a Parquet input
/// checks them on its tag columns and copies no moves of a game that
/// fails (the game is still handed on, as its tags alone, so the filters
/// count it as they count a PGN game). Text inputs ignore them here.
pub fn read_input_filtered(
    file: usize,
    path: &Path,
    format: Option<Format>,
    config: &ChunkConfig,
    filter: Option<&GameFilter>,
    emit: &mut Emit<'_>,
) {
    let name = display_name(path);
    let mut reader =
        InputReader { file, config: config.clone(), emit, stopped: false, filter, name };
    reader.run(path, format);
}

struct InputReader<'a, 'b> {
    file: usize,
    config: ChunkConfig,
    emit: &'a mut Emit<'b>,
    stopped: bool,
    /// The run's game filters (used by tables: Parquet and CSV inputs).
    filter: Option<&'a GameFilter>,
    /// The input's name in messages.
    name: String,
}

/// Compressed input read from a map is released every this many bytes: the
/// pages a run keeps of an input it has passed stay within a few MB,
/// whatever the input's size, for one `madvise` call per step.
pub const RELEASE_STEP: usize = 4 << 20;

/// How far behind its fault a page fault may map pages of a file: Linux
/// maps the page-cache pages of the aligned window around a faulting page
/// (`fault_around_bytes`, 64 KiB by default), so reading past a released
/// mark brings back the pages just behind it.
const FAULT_AROUND: usize = 64 << 10;

/// Tells the kernel that the pages of `map` before `upto` will not be read
/// again: from a little before the last release (`released`, where faults
/// since may have mapped pages back: the 64 KiB of fault-around) up to the last
/// page boundary at or before `upto` (the whole map when `upto` is its
/// end). The pages stay in the page cache; touched again, they are read
/// back from it. Moves `released` on.
pub fn release_behind(map: &Mmap, released: &mut usize, upto: usize) {
    let page = 4096;
    let end = if upto >= map.len() { map.len() } else { upto / page * page };
    let from = released.saturating_sub(FAULT_AROUND) / page * page;
    if end > from {
        // Safety: a read-only shared mapping of a file, read as plain bytes:
        // MADV_DONTNEED only drops clean page-cache pages from this process,
        // which are read back from the file if touched again, so no byte
        // read later differs. Callers release only what they have read.
        let _ = unsafe {
            map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, from, end - from)
        };
    }
    *released = (*released).max(end);
}

/// The first 64 KiB of text of a zstd file (less if it decodes to less or
/// breaks): enough to tell a table from PGN or EPD.
fn zstd_head(map: &[u8]) -> Option<Vec<u8>> {
    let mut decoder = zstd::stream::read::Decoder::with_buffer(map).ok()?;
    let mut head = Vec::new();
    let _ = decoder.by_ref().take(1 << 16).read_to_end(&mut head);
    Some(head)
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
        if self.pos - self.released > RELEASE_STEP {
            release_behind(self.map, &mut self.released, self.pos);
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
            self.error(None, "is a directory (with no .parquet file in it)".into());
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
        if is_parquet(map) {
            return self.parquet(map);
        }
        let compression = Compression::detect(map);
        match compression {
            Compression::Plain => {
                if format.is_none() && crate::io::csv::headerless(&map[..map.len().min(1 << 16)]) {
                    self.refuse_headerless(Some(size), compression);
                    return (size, 0);
                }
                if format.is_none()
                    && let Some(sep) = crate::io::csv::sniff(&map[..map.len().min(1 << 16)])
                {
                    let text = self.csv(&map[..], sep, (Some(size), compression), &|| size);
                    return (size, text);
                }
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
                        places: None,
                    }));
                    start = end;
                }
                if len < map.len() && !self.stopped {
                    self.error(Some(len as u64), max_bytes_message(max));
                }
                (size, len as u64)
            }
            Compression::Zstd => {
                if format.is_none()
                    && zstd_head(map).is_some_and(|h| crate::io::csv::sniff(&h).is_some())
                {
                    // A table: read as a stream (the CSV reader is not
                    // split at game boundaries).
                    let count = Arc::new(std::sync::atomic::AtomicU64::new(0));
                    let counting = MappedReader { map, pos: 0, released: 0, count: count.clone() };
                    return match zstd::stream::read::Decoder::with_buffer(BufReader::new(counting))
                    {
                        Ok(d) => {
                            let out = self.split_stream(d, Some(size), compression, None, &count);
                            (count.load(std::sync::atomic::Ordering::Relaxed), out)
                        }
                        Err(e) => {
                            self.error(Some(0), format!("cannot start zstd decoding: {e}"));
                            (0, 0)
                        }
                    };
                }
                let (frames, data_frames) = zstd_frames(map);
                if data_frames > 1 && frames.iter().all(|r| r.len() <= MAX_PARALLEL_FRAME) {
                    self.zstd_frames(map, &frames, format)
                } else {
                    self.zstd_stream(map, format)
                }
            }
            Compression::Parquet => self.parquet(map),
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

    /// A Parquet file of games (Lichess's `standard-chess-games`): its
    /// rows as PGN games, a window of row groups decoded in parallel and
    /// handed on in order; pages of the map are released behind the
    /// window. Returns (bytes in, bytes of PGN text made).
    #[cfg(feature = "parquet")]
    fn parquet(&mut self, map: &Arc<GuardedMap>) -> (u64, u64) {
        use crate::io::parquet::{
            games::{TableFile, units},
            map_bytes, row_group_starts,
        };
        let file = self.file;
        let size = map.len() as u64;
        let games = TableFile::open(map_bytes(map.clone()), &self.config.table);
        let format = match &games {
            Ok(g) if g.columns.layout.positions() => Format::Epd,
            _ => Format::Pgn,
        };
        let start =
            InputEvent::Start { file, size: Some(size), compression: Compression::Parquet, format };
        self.send(start);
        let games = match games {
            Ok(g) => g,
            Err(e) => {
                self.error(None, e);
                return (0, 0);
            }
        };
        crate::io::place::register_row_groups(&self.name, row_group_starts(games.meta()));
        let units = units(games.meta());
        let window = self.config.frame_window.max(2) * 2;
        let mut released = 0;
        let mut text = 0u64;
        for (w, batch) in units.chunks(window).enumerate() {
            if self.stopped {
                break;
            }
            let decoded = games.decode_window(batch, self.config.target, self.filter);
            // Every row group before the next window's is decoded.
            let next = units.get((w + 1) * window).map_or(map.len(), |u| u.start_byte as usize);
            release_behind(map, &mut released, next);
            for (unit, result) in batch.iter().zip(decoded) {
                match result {
                    Ok(pieces) => {
                        for piece in pieces {
                            for (row, why) in piece.errors {
                                self.error(Some(row), bad_row(&why));
                            }
                            if piece.places.is_empty() {
                                continue;
                            }
                            text += piece.text.len() as u64;
                            if text > self.config.max_text {
                                self.error(None, max_bytes_message(self.config.max_text));
                                return (unit.end_byte, text - piece.text.len() as u64);
                            }
                            self.send_rows(format, piece.text, piece.places, unit.end_byte);
                        }
                    }
                    Err(e) => self.error(
                        Some(unit.first),
                        format!(
                            "row group {} (rows {} to {} of the file) cannot be read: {e}; \
                             its games are skipped",
                            unit.group,
                            unit.first,
                            unit.first + unit.rows as u64 - 1
                        ),
                    ),
                }
            }
        }
        (size, text)
    }

    /// A CSV (or TSV) table, separated by `sep`: its rows as PGN games or
    /// EPD lines, placed by their lines, handed on in chunks; its start
    /// (its size and compression) is announced once its header
    /// says which. `input_pos` says how far into the input the reading is
    /// (for progress). Returns the bytes of text made.
    fn csv<R: Read>(
        &mut self,
        reader: R,
        sep: u8,
        (size, compression): (Option<u64>, Compression),
        input_pos: &dyn Fn() -> u64,
    ) -> u64 {
        use crate::io::{csv::CsvCells, table::RowWriter};
        let mut table = ::csv::ReaderBuilder::new()
            .delimiter(sep)
            .flexible(true)
            .has_headers(true)
            .from_reader(reader);
        let layout = match table.byte_headers() {
            Ok(h) => crate::io::csv::layout(h, &self.config.table),
            Err(e) => Err(format!("the CSV header cannot be read: {e}")),
        };
        let format = match &layout {
            Ok(l) if l.positions() => Format::Epd,
            _ => Format::Pgn,
        };
        self.send(InputEvent::Start { file: self.file, size, compression, format });
        let layout = match layout {
            Ok(c) => c,
            Err(e) => {
                self.error(None, e);
                return 0;
            }
        };
        crate::io::place::register_lines(&self.name);
        let mut writer = RowWriter::new(layout, self.filter, self.config.table.eval_side);
        let mut record = ::csv::ByteRecord::new();
        let mut text = Vec::new();
        let mut places: Vec<(u32, u64)> = Vec::new();
        let mut total = 0u64;
        loop {
            if self.stopped {
                break;
            }
            let line = table.position().line();
            match table.read_byte_record(&mut record) {
                Ok(false) => break,
                Ok(true) => {}
                Err(e) if matches!(e.kind(), ::csv::ErrorKind::Io(_)) => {
                    // The input itself broke (a compressed stream cut
                    // short): what was read is handed on below.
                    self.error(Some(line), format!("line {line}: {e}: the rest is not read"));
                    break;
                }
                Err(e) => {
                    // The reader goes on at the next record.
                    self.error(Some(line), format!("line {line}: {e}: row skipped"));
                    continue;
                }
            }
            let line = record.position().map_or(line, |p| p.line());
            if record.as_slice().len() > self.config.max_game {
                self.error(
                    Some(line),
                    format!(
                        "line {line}: a row longer than {} MiB: skipped",
                        self.config.max_game >> 20
                    ),
                );
                continue;
            }
            let at = text.len() as u32;
            match writer.row(&CsvCells { record: &record }, &mut text) {
                Ok(()) => places.push((at, line)),
                Err(why) => {
                    self.error(Some(line), bad_row(&why));
                    continue;
                }
            }
            if text.len() >= self.config.target || text.len() > u32::MAX as usize / 2 {
                total += text.len() as u64;
                if total > self.config.max_text {
                    self.error(None, max_bytes_message(self.config.max_text));
                    return total - text.len() as u64;
                }
                let (rows, at) = (std::mem::take(&mut text), std::mem::take(&mut places));
                self.send_rows(format, rows, at, input_pos());
            }
        }
        if !places.is_empty() && !self.stopped {
            total += text.len() as u64;
            self.send_rows(format, text, places, input_pos());
        }
        total
    }

    /// Refuses a CSV table of positions without its header line
    /// ([`crate::io::csv::headerless`]), read as nothing.
    fn refuse_headerless(&mut self, size: Option<u64>, compression: Compression) {
        let (file, format) = (self.file, Format::Epd);
        self.send(InputEvent::Start { file, size, compression, format });
        self.error(None, crate::io::csv::HEADERLESS.into());
    }

    /// Hands on a table's rows written as PGN games or EPD lines
    /// (`format`), each placed by its row (or line).
    fn send_rows(
        &mut self,
        format: Format,
        text: Vec<u8>,
        places: Vec<(u32, u64)>,
        input_pos: u64,
    ) {
        let offset = places.first().map_or(0, |p| p.1);
        self.send(InputEvent::Chunk(Chunk {
            file: self.file,
            format,
            offset,
            input_pos,
            data: ChunkData::Owned(text),
            first_game: 0,
            places: Some(places.into()),
        }));
    }

    /// Without Parquet support: the file is refused with the reason.
    #[cfg(not(feature = "parquet"))]
    fn parquet(&mut self, map: &Arc<GuardedMap>) -> (u64, u64) {
        let file = self.file;
        let size = Some(map.len() as u64);
        self.send(InputEvent::Start {
            file,
            size,
            compression: Compression::Parquet,
            format: Format::Pgn,
        });
        self.error(
            None,
            "a Parquet file, and this kibitz was built without the `parquet` feature".into(),
        );
        (0, 0)
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
        if head.starts_with(PARQUET_MAGIC) {
            self.error(
                None,
                "a Parquet file cannot be read from standard input or a pipe: its footer, \
                 which says where its columns are, is at its end; give its path"
                    .into(),
            );
            return (0, 0);
        }
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
            Compression::Parquet => 0,
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
                if format.is_none() && crate::io::csv::headerless(data) {
                    self.refuse_headerless(size, compression);
                    return 0;
                }
                if format.is_none()
                    && let Some(sep) = crate::io::csv::sniff(data)
                {
                    let head = io::Cursor::new(data.to_vec());
                    let load = || count.load(std::sync::atomic::Ordering::Relaxed);
                    return self.csv(head.chain(reader), sep, (size, compression), &load);
                }
                let format = format.unwrap_or_else(|| sniff_format(data));
                self.send(InputEvent::Start { file, size, compression, format });
                if let Some(why) = binary_at(data) {
                    self.error(Some(0), why);
                    return 0;
                }
                splitter = Some(Splitter::new(format, self.config.clone()));
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
                        places: None,
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
        s.buf.extend_from_slice(data);
        self.pushed(splitter, count)
    }

    /// Text was added at the end of the splitter's buffer: sends the chunks
    /// it makes, or stops the input at `--max-bytes` as [`Self::push_text`]
    /// says.
    fn pushed(
        &mut self,
        splitter: &mut Option<Splitter>,
        count: &std::sync::atomic::AtomicU64,
    ) -> bool {
        let Some(s) = splitter.as_mut() else { return true };
        s.compact();
        let max = self.config.max_text;
        let end = s.offset + s.buf.len() as u64;
        if end <= max {
            self.drain_splitter(splitter, count, false);
            return true;
        }
        let within = s.buf.len() - (end - max) as usize;
        let keep = rfind_boundary(&s.buf[..within], within, s.format).unwrap_or(0);
        s.buf.truncate(keep);
        self.flush_splitter(splitter, count);
        self.error(Some(max), max_bytes_message(max));
        false
    }

    /// Starts a mapped zstd input on its first text: sends its start
    /// event (the format sniffed from `text` unless given), and gives the
    /// splitter its text goes to, or `None` (reported) if it is binary.
    fn start_zstd(&mut self, size: usize, format: Option<Format>, text: &[u8]) -> Option<Splitter> {
        let file = self.file;
        let format = format.unwrap_or_else(|| sniff_format(text));
        let size = Some(size as u64);
        self.send(InputEvent::Start { file, size, compression: Compression::Zstd, format });
        if let Some(why) = binary_at(text) {
            self.error(Some(0), why);
            return None;
        }
        Some(Splitter::new(format, self.config.clone()))
    }

    /// A mapped zstd file decoded as one stream (one frame, or frames too
    /// large to decode whole in parallel). The decoder writes straight into
    /// the splitter's buffer, so the text is copied once, from the
    /// decoder's window to the chunk, as a reader with its own buffer
    /// (pgn-reader's) copies it; the compressed pages behind the decoder are
    /// released as it goes. Returns (bytes in, bytes out).
    fn zstd_stream(&mut self, map: &GuardedMap, format: Option<Format>) -> (u64, u64) {
        use zstd::stream::raw::{Decoder, InBuffer, Operation, OutBuffer};
        /// Text decoded per call: a chunk's worth arrives in a few calls.
        const STEP: usize = 1 << 17;
        let count = std::sync::atomic::AtomicU64::new(0);
        let mut decoder = match Decoder::new() {
            Ok(d) => d,
            Err(e) => {
                self.error(Some(0), format!("cannot start zstd decoding: {e}"));
                return (0, 0);
            }
        };
        let mut input = InBuffer::around(&map[..]);
        let mut released = 0;
        // The first text goes here, to sniff the format before there is a
        // splitter to write into.
        let mut first: Vec<u8> = Vec::new();
        let mut splitter: Option<Splitter> = None;
        // 0 once a frame is complete: the input may end there.
        let mut frame_done = true;
        loop {
            if self.stopped {
                break;
            }
            let buf = match splitter.as_mut() {
                Some(s) => &mut s.buf,
                None => &mut first,
            };
            let len = buf.len();
            buf.reserve(STEP);
            let mut room = Room { vec: buf, end: len + STEP };
            let mut out = OutBuffer::around_pos(&mut room, len);
            let result = decoder.run(&mut input, &mut out);
            let produced = out.pos() - len;
            let at = input.pos();
            count.store(at as u64, std::sync::atomic::Ordering::Relaxed);
            if at - released > RELEASE_STEP {
                release_behind(map, &mut released, at);
            }
            let broken = match result {
                Ok(hint) => {
                    frame_done = hint == 0;
                    (produced == 0 && at == map.len() && !frame_done)
                        .then(|| "incomplete frame".to_string())
                }
                Err(e) => Some(e.to_string()),
            };
            if splitter.is_none() && (!first.is_empty() || broken.is_some()) {
                let Some(s) = self.start_zstd(map.len(), format, &first) else {
                    return (at as u64, 0);
                };
                splitter = Some(s);
                let text = std::mem::take(&mut first);
                if !self.push_text(&mut splitter, &text, &count) {
                    break;
                }
            } else if produced > 0 && !self.pushed(&mut splitter, &count) {
                break;
            }
            if let Some(e) = broken {
                // Hand over the whole games decoded, then report where it
                // broke.
                let cut = drop_cut_game(&mut splitter);
                self.flush_splitter(&mut splitter, &count);
                self.error(
                    Some(at as u64),
                    format!(
                        "zstd data broken near compressed byte {at}: {e}{}",
                        cut_game_note(cut)
                    ),
                );
                return (at as u64, splitter.map_or(0, |s| s.offset + s.buf.len() as u64));
            }
            if at == map.len() && produced < STEP && frame_done {
                break;
            }
        }
        if splitter.is_none() && !self.stopped {
            // No text at all (skippable frames, or an empty frame).
            let _ = self.start_zstd(map.len(), Some(format.unwrap_or(Format::Pgn)), &[]);
        }
        self.flush_splitter(&mut splitter, &count);
        let bytes_in = count.load(std::sync::atomic::Ordering::Relaxed);
        (bytes_in, splitter.map_or(0, |s| s.offset + s.buf.len() as u64))
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
        let count = std::sync::atomic::AtomicU64::new(0);
        let mut splitter: Option<Splitter> = None;
        let mut started = false;
        let mut released = 0;
        for window in frames.chunks(self.config.frame_window.max(1)) {
            if self.stopped {
                break;
            }
            let decoded: Vec<Result<Vec<u8>, String>> = window
                .par_iter()
                .map(|range| decode_frame(&map[range.clone()]).map_err(|e| e.to_string()))
                .collect();
            if let Some(last) = window.last() {
                // These frames and those before are decoded, never read again.
                release_behind(map, &mut released, last.end);
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
                            let Some(s) = self.start_zstd(map.len(), format, &text) else {
                                return (range.end as u64, 0);
                            };
                            splitter = Some(s);
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
            let _ = self.start_zstd(map.len(), Some(format.unwrap_or(Format::Pgn)), &[]);
        }
        self.flush_splitter(&mut splitter, &count);
        (map.len() as u64, splitter.map_or(0, |s| s.offset + s.buf.len() as u64))
    }
}

/// A vector's spare room, up to `end` bytes of it, as zstd's output: the
/// decoder writes decoded text straight into a splitter's buffer.
struct Room<'a> {
    vec: &'a mut Vec<u8>,
    end: usize,
}

// Safety: `capacity` never exceeds the vector's (the caller reserves `end`
// bytes first, and it is clamped), `as_mut_ptr` is the vector's buffer, and
// zstd calls `filled_until(n)` only after writing every byte below `n`
// (n <= capacity), so `set_len` covers initialised bytes only.
unsafe impl zstd::zstd_safe::WriteBuf for Room<'_> {
    fn as_slice(&self) -> &[u8] {
        self.vec
    }
    fn capacity(&self) -> usize {
        self.end.min(self.vec.capacity())
    }
    fn as_mut_ptr(&mut self) -> *mut u8 {
        self.vec.as_mut_ptr()
    }
    unsafe fn filled_until(&mut self, n: usize) {
        // Safety: as above, the bytes below `n` are initialised.
        unsafe { self.vec.set_len(n) }
    }
}

/// What the error message adds about a game dropped by [`drop_cut_game`].
/// The message of a table's row that cannot be read.
fn bad_row(why: &str) -> String {
    format!("a row that cannot be read: {why}; skipped")
}

fn cut_game_note(cut: Option<u64>) -> String {
    cut.map_or_else(String::new, |at| {
        format!(" (the game it cuts, from text byte {at}, is not read)")
    })
}

fn max_bytes_message(max: u64) -> String {
    format!("stopped after {max} bytes of text, the limit set: the rest of the input is not read")
}

/// How an input is named in messages: its path, or `<stdin>` for `-`.
pub fn display_name(path: &Path) -> String {
    if path.as_os_str() == "-" { "<stdin>".into() } else { path.display().to_string() }
}
