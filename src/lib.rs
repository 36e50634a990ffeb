//! kibitz: bulk chess analysis.
//!
//! kibitz streams game databases (PGN) and position sets (EPD), replays
//! every game with an incremental bitboard [`Position::do_move`], verifies
//! Zobrist keys (Polyglot standard), labels positions with a fixed-depth
//! search (a hand-written evaluation, or Stockfish 15.1's NNUE), and writes
//! compact, checksummed `.kbz` record files that trainers and databases
//! read. The `kibitz` command is a thin layer over this library.
//!
//! # The data flow
//!
//! ```text
//!  inputs (PGN/EPD; plain, zstd, gzip; memory-mapped)
//!    │ io::source: detect, decompress, cut into chunks at game boundaries
//!    ▼
//!  pipeline::run ── reader thread ──chunks──► workers ──results──► caller, in input order
//!    │                 ▲                                       │
//!    │                 └─────── permits (bounded memory) ──────┘
//!    ▼ each worker: io::pgn parses, chess::Position replays (do_move, keys
//!    │ verified), search (or nnue, or an external engine) labels
//!    ▼
//!  record: blocks of games, columns zstd-compressed, checksummed ─► .kbz
//!    │
//!    ▼ record::export: annotated PGN, Stockfish plain and binpack, EPD, JSON, bullet
//! ```
//!
//! * [`chess`]: the board after Stockfish's `Position` and `StateInfo`;
//!   move generation, SAN/UCI/FEN, perft, Zobrist keys.
//! * [`io`]: sources, chunking, the PGN and EPD readers.
//! * [`pipeline`]: the parallel ordered runner, replay and verification,
//!   the annotate job ([`pipeline::annotation::Annotation`]).
//! * [`search`], [`nnue`], [`score`]: the search, the NNUE evaluation and
//!   the score vocabulary.
//! * [`record`]: the `.kbz` format, its reader and writer, exports.
//!
//! # Using the library
//!
//! Replay a PGN game and label a position, write a `.kbz` with the
//! annotate job, then read it back: every game and its labelled
//! positions.
//!
//! ```
//! use std::sync::{Arc, atomic::AtomicBool};
//!
//! use kibitz::{
//!     Position,
//!     io::pgn::GameReader,
//!     pipeline::annotation::{Annotation, LabelWith, OutputMode, Settings},
//!     record::{chain::walk, file::KbzReader},
//!     search::{Limits, Searcher},
//! };
//!
//! // Replay a game from PGN text, move by move.
//! let pgn = b"[White \"A\"]\n[Black \"B\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 *\n";
//! let mut reader = GameReader::new(pgn, 0, &[]);
//! let game = reader.next_game().expect("one game");
//! let mut pos = Position::startpos();
//! for san in &game.moves {
//!     let m = san.to_move(&pos)?;
//!     pos.do_move(m);
//! }
//! assert_eq!(pos.fen(), "r1bqkbnr/1ppp1ppp/p1n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 0 4");
//!
//! // Search it to depth 4 with the hand-written evaluation.
//! let mut searcher = Searcher::try_new(16)?;
//! let result = searcher.search(&mut pos, &Limits::depth(4), |_| {});
//! assert!(result.best.is_some());
//!
//! // Annotate the game into a .kbz file, one thread, depth 2.
//! let dir = std::env::temp_dir().join(format!("kibitz-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! let (input, output) = (dir.join("game.pgn"), dir.join("game.kbz"));
//! std::fs::write(&input, pgn)?;
//! let settings = Settings {
//!     depth: 2,
//!     hash_mib: 1,
//!     skip_plies: 0,
//!     skip_captures: false,
//!     ..Settings::default()
//! };
//! let job = Annotation::new(vec![input], output.clone(), OutputMode::Replace, settings)?;
//! let report = job.run(&mut (), &Arc::new(AtomicBool::new(false)))?;
//! assert_eq!(report.stats.games, 1);
//!
//! // Read it back: every game, every position, the labelled ones with
//! // their score and best move.
//! let mut file = KbzReader::open(&output)?;
//! let mut labelled = 0;
//! while let Some(block) = file.next_block() {
//!     let (_offset, _len, games) = block?;
//!     for game in &games {
//!         walk(game, |step| {
//!             if let Some(label) = step.label {
//!                 labelled += 1;
//!                 assert!(step.best.is_some_and(|m| step.pos.is_legal(m)));
//!                 let _cp_for_side_to_move = label.score;
//!             }
//!         })?;
//!     }
//! }
//! assert!(file.is_complete());
//! assert_eq!(labelled, report.stats.labelled);
//! assert_eq!(labelled, 7, "plies 0 to 6 (the last position too)");
//! std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(clippy::undocumented_unsafe_blocks)]
#![warn(missing_docs)]

pub mod analysis;
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
