//! Opening books: the positions games start from. An EPD file gives one
//! position a line; a PGN file the final position of each game (as
//! Stockfish's books ship, `2moves_v2.pgn`). Plain, zstd or gzip, told
//! apart by their bytes. Chess960 starts are recognised by their castling
//! field (file letters, or rights that do not fit standard chess).

use std::{
    io::Read,
    path::{Path, PathBuf},
};

use sha2::{Digest, Sha256};

use crate::{
    chess::position::Position,
    io::{
        epd::EpdLine,
        pgn::GameReader,
        source::{Chunk, ChunkConfig, Format, InputEvent, display_name, read_input},
    },
    pipeline::replayer::set_start_position,
    record::format::PackedBoard,
};

/// Why a book cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum BookError {
    /// The file cannot be read whole.
    #[error("{}: {message}", path.display())]
    Read {
        /// The book.
        path: PathBuf,
        /// What failed, and where.
        message: String,
    },
    /// No usable position at all.
    #[error("{}: no position in the book{}", path.display(),
        if *skipped == 0 { String::new() } else {
            format!(" ({skipped} {unit}{} skipped, the first: {})",
                if *skipped == 1 { "" } else { "s" }, first.as_deref().unwrap_or("?"))
        })]
    Empty {
        /// The book.
        path: PathBuf,
        /// Lines or games skipped as not positions.
        skipped: u64,
        /// What was skipped: `line` (EPD) or `game` (PGN).
        unit: &'static str,
        /// The first of them, described.
        first: Option<String>,
    },
}

/// A line or game of a book that gives no position, skipped: where it is
/// and why, as annotate reports a game it rejects.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct BookSkip {
    /// The book's name as given.
    pub file: String,
    /// `line N` of an EPD book or `game N` of a PGN book (from 1).
    pub what: String,
    /// The byte offset of the line or game in the (decompressed) book.
    pub offset: u64,
    /// The ply of a PGN game's move that cannot be played (0: its start).
    pub ply: Option<u32>,
    /// The text refused (a FEN, a move).
    pub token: String,
    /// Why.
    pub reason: String,
}

impl std::fmt::Display for BookSkip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let place = crate::io::place::describe(&self.file, self.offset);
        write!(f, "{}: {} at {place}", self.file, self.what)?;
        if let Some(ply) = self.ply {
            write!(f, ", ply {ply}")?;
        }
        if !self.token.is_empty() {
            write!(f, " ({})", self.token)?;
        }
        write!(f, ": {}", self.reason)
    }
}

/// How many skipped lines a book keeps described (the count goes on).
pub const BOOK_SKIPS_KEPT: usize = 100;

/// The positions of a book, packed, in the file's order.
#[derive(Clone, Debug)]
pub struct Book {
    /// The file's name as given.
    pub name: String,
    /// The SHA-256 of its bytes.
    pub sha256: String,
    positions: Vec<[u8; 32]>,
    /// Lines or games skipped (not positions).
    skipped: u64,
    /// The first [`BOOK_SKIPS_KEPT`] of them.
    skips: Vec<BookSkip>,
    /// What the book is read by: `line` (EPD) or `game` (PGN).
    unit: &'static str,
}

/// Where a book's reading stands: the positions so far and what was
/// skipped.
struct Reading {
    name: String,
    positions: Vec<[u8; 32]>,
    skipped: u64,
    skips: Vec<BookSkip>,
    /// Lines (EPD) or games (PGN) read so far.
    count: u64,
    /// What the book is read by: `line` (EPD) or `game` (PGN).
    unit: &'static str,
}

impl Reading {
    fn skip(&mut self, what: String, offset: u64, ply: Option<u32>, token: String, reason: String) {
        self.skipped += 1;
        if self.skips.len() < BOOK_SKIPS_KEPT {
            let file = self.name.clone();
            self.skips.push(BookSkip { file, what, offset, ply, token, reason });
        }
    }
}

impl Book {
    /// Reads every position of `path`. A line or a game that is not a
    /// legal position is skipped and counted ([`Book::skips`]), as annotate
    /// skips a game it rejects; a book with no usable position at all is an
    /// error, and so is one that cannot be read whole.
    pub fn open(path: &Path) -> Result<Book, BookError> {
        let mut reading = Reading {
            name: display_name(path),
            positions: Vec::new(),
            skipped: 0,
            skips: Vec::new(),
            count: 0,
            unit: "line",
        };
        let mut failure: Option<BookError> = None;
        let startpos = Position::startpos();
        let config = ChunkConfig::default();
        read_input(0, path, None, &config, &mut |event| match event {
            InputEvent::Chunk(chunk) => {
                reading.unit = if chunk.format == Format::Epd { "line" } else { "game" };
                match chunk.format {
                    Format::Epd => epd_positions(&chunk.data, chunk.offset, &mut reading),
                    Format::Pgn => pgn_positions(&chunk, &startpos, &mut reading),
                }
                true
            }
            InputEvent::Error { offset, message, .. } => {
                let name = display_name(path);
                let at = offset
                    .map(|o| format!(" at {}", crate::io::place::describe(&name, o)))
                    .unwrap_or_default();
                failure = Some(BookError::Read {
                    path: path.to_path_buf(),
                    message: format!("{message}{at}"),
                });
                false
            }
            InputEvent::Start { .. } | InputEvent::End { .. } => true,
        });
        if let Some(e) = failure {
            return Err(e);
        }
        if reading.positions.is_empty() {
            return Err(BookError::Empty {
                path: path.to_path_buf(),
                skipped: reading.skipped,
                unit: reading.unit,
                first: reading.skips.first().map(ToString::to_string),
            });
        }
        Ok(Book {
            name: reading.name,
            sha256: file_sha256(path)?,
            positions: reading.positions,
            skipped: reading.skipped,
            skips: reading.skips,
            unit: reading.unit,
        })
    }

    /// The lines or games skipped as not positions: how many, and the first
    /// [`BOOK_SKIPS_KEPT`] described.
    pub fn skips(&self) -> (u64, &[BookSkip]) {
        (self.skipped, &self.skips)
    }

    /// What the book is read by: `line` (EPD) or `game` (PGN).
    pub fn unit(&self) -> &'static str {
        self.unit
    }

    /// A book of the given positions (for tests and programs that make
    /// their own openings).
    pub fn from_positions(name: &str, positions: &[Position]) -> Book {
        let packed: Vec<[u8; 32]> = positions.iter().map(PackedBoard::pack).collect();
        let mut hash = Sha256::new();
        packed.iter().for_each(|p| hash.update(p));
        Book {
            name: name.to_string(),
            sha256: format!("{:x}", hash.finalize()),
            positions: packed,
            skipped: 0,
            skips: Vec::new(),
            unit: "line",
        }
    }

    /// The number of positions.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// Whether the book has no position (never, once opened).
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// Position `i` (taken modulo the book's size).
    pub fn position(&self, i: usize) -> Position {
        let packed = &self.positions[i % self.positions.len()];
        PackedBoard::unpack(packed).expect("the book packed a legal position")
    }
}

/// The positions of a chunk of EPD lines that starts at byte `offset`.
fn epd_positions(text: &[u8], offset: u64, reading: &mut Reading) {
    let body = text.strip_suffix(b"\n").unwrap_or(text);
    let mut at = offset;
    for raw in body.split(|&b| b == b'\n') {
        reading.count += 1;
        let line_at = at;
        at += raw.len() as u64 + 1;
        let Some(parsed) = EpdLine::parse(raw) else { continue };
        let what = format!("line {}", reading.count);
        let token = || String::from_utf8_lossy(raw).trim().chars().take(100).collect::<String>();
        let position = parsed
            .map_err(|e| e.to_string())
            .and_then(|epd| Position::from_fen(&epd.fen).map_err(|e| e.to_string()));
        match position {
            Ok(pos) => reading.positions.push(PackedBoard::pack(&pos)),
            Err(why) => reading.skip(what, line_at, None, token(), why),
        }
    }
}

/// The final positions of a chunk of PGN games that starts at byte
/// `offset`.
fn pgn_positions(chunk: &Chunk, startpos: &Position, reading: &mut Reading) {
    let mut reader = GameReader::new(&chunk.data, chunk.offset, &[]);
    reader.set_places(chunk.places());
    let mut pos = startpos.clone();
    'games: while let Some(parsed) = reader.next_game() {
        reading.count += 1;
        let what = format!("game {}", reading.count);
        if let Err(why) = set_start_position(parsed, &mut pos, startpos) {
            let fen = parsed.fen.map(|f| f.to_string_lossy()).unwrap_or_default();
            reading.skip(what, parsed.offset, Some(0), fen, format!("[FEN] tag: {why}"));
            continue;
        }
        for (ply, san) in parsed.moves.iter().enumerate() {
            if let Err(e) = san.to_move(&pos).map(|m| pos.do_move(m)) {
                let ply = Some(ply as u32 + 1);
                reading.skip(what, parsed.offset, ply, san.to_string(), e.to_string());
                continue 'games;
            }
        }
        if let Some(token) = &parsed.bad_token {
            let ply = Some(parsed.moves.len() as u32 + 1);
            let text = token.text_lossy();
            reading.skip(what, parsed.offset, ply, text, "not a move".to_string());
            continue;
        }
        pos.forget_history();
        reading.positions.push(PackedBoard::pack(&pos));
    }
}

/// The SHA-256 of a file's bytes.
fn file_sha256(path: &Path) -> Result<String, BookError> {
    let read =
        |e: std::io::Error| BookError::Read { path: path.to_path_buf(), message: e.to_string() };
    let mut file = std::fs::File::open(path).map_err(read)?;
    let mut hash = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf).map_err(read)?;
        if n == 0 {
            break;
        }
        hash.update(&buf[..n]);
    }
    Ok(format!("{:x}", hash.finalize()))
}
