//! kibitz: bulk chess analysis.
//!
//! kibitz streams game databases (PGN) and position sets (EPD), replays
//! every game with an incremental bitboard [`Position::do_move`], verifies
//! Zobrist keys (Polyglot standard), searches positions to a fixed depth on
//! every core, and writes compact, checksummed binary records.
//!
//! The board follows Stockfish's `Position` and `StateInfo`:
//!
//! ```
//! use kibitz::{perft, Position};
//!
//! let mut pos = Position::startpos();
//! let e4 = pos.parse_san(b"e4")?;
//! pos.do_move(e4);
//! assert_eq!(pos.key(), 0x823c9b50fd114196);
//! assert_eq!(perft::perft(&mut pos, 3), 13_160);
//! # Ok::<(), kibitz::SanError>(())
//! ```

#![deny(clippy::undocumented_unsafe_blocks)]
#![warn(missing_docs)]

pub mod chess;
pub mod io;
pub mod nnue;
pub mod pipeline;
pub mod record;
pub mod score;
pub mod search;

pub use chess::{
    attacks,
    bitboard::Bitboard,
    fen::{FenError, FenField, FenOptions, STARTPOS, Setup},
    movegen,
    mv::{MAX_MOVES, Move, MoveKind, MoveList},
    perft,
    position::{CastlingMode, Position, StateField},
    psqt::Score,
    san::{San, SanError},
    state::{CopiedState, DirtyEntry, DirtyPiece, StateInfo},
    types::{ByColor, ByPiece, ByRole, CastlingSide, Color, File, Piece, Rank, Role, Square},
    uci::UciError,
    zobrist,
};
