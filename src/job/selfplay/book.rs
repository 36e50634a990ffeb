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
        source::{ChunkConfig, Format, InputEvent, display_name, read_input},
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
    /// A line or a game is not a position.
    #[error("{}: {what}", path.display())]
    Position {
        /// The book.
        path: PathBuf,
        /// Which line or game, and why.
        what: String,
    },
    /// No position at all.
    #[error("{}: no position in the book", .0.display())]
    Empty(PathBuf),
}

/// The positions of a book, packed, in the file's order.
#[derive(Clone, Debug)]
pub struct Book {
    /// The file's name as given.
    pub name: String,
    /// The SHA-256 of its bytes.
    pub sha256: String,
    positions: Vec<[u8; 32]>,
}

impl Book {
    /// Reads every position of `path`. A line or a game that is not a
    /// legal position is an error naming it: a book is small and meant to
    /// be right.
    pub fn open(path: &Path) -> Result<Book, BookError> {
        let mut positions = Vec::new();
        let mut failure: Option<BookError> = None;
        let mut line = 0u64;
        let mut game = 0u64;
        let startpos = Position::startpos();
        let config = ChunkConfig::default();
        read_input(0, path, None, &config, &mut |event| {
            let result = match event {
                InputEvent::Chunk(chunk) => match chunk.format {
                    Format::Epd => epd_positions(&chunk.data, &mut line, &mut positions),
                    Format::Pgn => pgn_positions(&chunk.data, &startpos, &mut game, &mut positions),
                },
                InputEvent::Error { offset, message, .. } => {
                    let at = offset.map(|o| format!(" at byte {o}")).unwrap_or_default();
                    Err(BookError::Read {
                        path: path.to_path_buf(),
                        message: format!("{message}{at}"),
                    })
                }
                InputEvent::Start { .. } | InputEvent::End { .. } => Ok(()),
            };
            match result {
                Ok(()) => true,
                Err(e) => {
                    failure = Some(with_path(e, path));
                    false
                }
            }
        });
        if let Some(e) = failure {
            return Err(e);
        }
        if positions.is_empty() {
            return Err(BookError::Empty(path.to_path_buf()));
        }
        Ok(Book { name: display_name(path), sha256: file_sha256(path)?, positions })
    }

    /// A book of the given positions (for tests and programs that make
    /// their own openings).
    pub fn from_positions(name: &str, positions: &[Position]) -> Book {
        let packed: Vec<[u8; 32]> = positions.iter().map(PackedBoard::pack).collect();
        let mut hash = Sha256::new();
        packed.iter().for_each(|p| hash.update(p));
        Book { name: name.to_string(), sha256: format!("{:x}", hash.finalize()), positions: packed }
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

/// `e` with the book's path where the chunk readers left it empty.
fn with_path(e: BookError, path: &Path) -> BookError {
    match e {
        BookError::Position { what, .. } => BookError::Position { path: path.to_path_buf(), what },
        e => e,
    }
}

/// The positions of a chunk of EPD lines; `line` counts the lines read.
fn epd_positions(text: &[u8], line: &mut u64, out: &mut Vec<[u8; 32]>) -> Result<(), BookError> {
    let body = text.strip_suffix(b"\n").unwrap_or(text);
    for raw in body.split(|&b| b == b'\n') {
        *line += 1;
        let Some(parsed) = EpdLine::parse(raw) else { continue };
        let bad = |why: String| BookError::Position {
            path: PathBuf::new(),
            what: format!("line {}: {why}", *line),
        };
        let epd = parsed.map_err(|e| bad(e.to_string()))?;
        let pos = Position::from_fen(&epd.fen).map_err(|e| bad(format!("{}: {e}", epd.fen)))?;
        out.push(PackedBoard::pack(&pos));
    }
    Ok(())
}

/// The final positions of a chunk of PGN games; `game` counts the games.
fn pgn_positions(
    text: &[u8],
    startpos: &Position,
    game: &mut u64,
    out: &mut Vec<[u8; 32]>,
) -> Result<(), BookError> {
    let mut reader = GameReader::new(text, 0, &[]);
    let mut pos = startpos.clone();
    while let Some(parsed) = reader.next_game() {
        *game += 1;
        let bad = |why: String| BookError::Position {
            path: PathBuf::new(),
            what: format!("game {}: {why}", *game),
        };
        set_start_position(parsed, &mut pos, startpos).map_err(bad)?;
        if let Some(token) = &parsed.bad_token {
            return Err(bad(format!("{} is not a move", token.text_lossy())));
        }
        for san in &parsed.moves {
            let m = san.to_move(&pos).map_err(|e| bad(format!("{san}: {e}")))?;
            pos.do_move(m);
        }
        pos.forget_history();
        out.push(PackedBoard::pack(&pos));
    }
    Ok(())
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
