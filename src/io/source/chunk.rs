//! Chunks: pieces of an input holding whole games, and the events that
//! reading an input emits.

use std::{
    ops::{Deref, Range},
    sync::Arc,
};

use super::{Compression, Format};
use crate::io::mapguard::GuardedMap;

/// Chunking parameters, and how tables are read.
#[derive(Clone, Debug)]
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
    /// How tables (Parquet, CSV) are read: their columns and rows.
    pub table: crate::io::table::TableOptions,
}

impl Default for ChunkConfig {
    fn default() -> ChunkConfig {
        ChunkConfig {
            target: 256 << 10,
            max_game: 256 << 20,
            frame_window: 8,
            max_text: u64::MAX,
            table: Default::default(),
        }
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
}

/// Releases a mapped input's pages in input order: each chunk, once it and
/// every chunk before it are processed, gives back the pages from the end
/// of the last release to its own end (the page it shares with the next
/// chunk stays; see `release_behind`). Releasing a chunk's pages
/// as soon as it is processed leaves the pages it shares with its
/// neighbours: a chunk of a few games (annotate cuts 4 KiB ones) often
/// holds no whole page, and those pages stayed resident, about half a
/// file; releasing them too makes a neighbour still being read fault them
/// back, and the kernel maps the pages around a fault with it
/// (fault-around), already released ones included.
#[derive(Debug, Default)]
pub struct Release {
    /// The input and the offset up to which its pages are released.
    at: Option<(usize, usize)>,
}

impl Release {
    /// Releases what a chunk of input `file` allows, given that it and
    /// every chunk of its input before it are processed and none will be
    /// read again.
    pub fn after(&mut self, file: usize, data: &ChunkData) {
        let ChunkData::Mapped(map, range) = data else { return };
        let mut done = match self.at {
            Some((f, done)) if f == file => done,
            _ => 0,
        };
        // The whole file once its last chunk is done; else up to the page
        // the next chunk starts in.
        super::release_behind(map, &mut done, range.end);
        self.at = Some((file, done));
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
    /// For games read from a Parquet file: each game's first byte in the
    /// chunk's text and its row in the file, which stands for its offset
    /// (see [`crate::io::place`]). `None` for text inputs.
    pub places: Option<Arc<[(u32, u64)]>>,
}

impl Chunk {
    /// The games' places when they are rows (empty for text inputs, whose
    /// games' places are their byte offsets).
    pub fn places(&self) -> &[(u32, u64)] {
        self.places.as_deref().unwrap_or(&[])
    }
}

/// The places of the lines of a chunk of EPD lines, as messages name
/// them: a table's rows when the chunk has places (see
/// [`Chunk::places`]), else byte offsets from the chunk's.
#[derive(Clone, Debug)]
pub struct LinePlaces<'a> {
    places: &'a [(u32, u64)],
    next: usize,
    base: u64,
}

impl<'a> LinePlaces<'a> {
    /// The places of a chunk's lines.
    pub fn new(chunk: &'a Chunk) -> LinePlaces<'a> {
        LinePlaces { places: chunk.places(), next: 0, base: chunk.offset }
    }

    /// The place of the line that starts at byte `at` of the chunk's text
    /// (lines asked for in order).
    pub fn at(&mut self, at: usize) -> u64 {
        if self.places.is_empty() {
            return self.base + at as u64;
        }
        while self.places.get(self.next + 1).is_some_and(|p| p.0 as usize <= at) {
            self.next += 1;
        }
        self.places[self.next].1
    }
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
