//! kibitz: bulk chess analysis.
//!
//! kibitz streams game databases (PGN) and position sets (EPD), replays
//! every game with an incremental bitboard [`Position::do_move`], verifies
//! Zobrist keys (Polyglot standard), labels positions with a fixed-depth
//! search (Stockfish.js 19's lite net built into the binary, Stockfish 19's
//! and 15.1's nets, kibitz's own nets, the hand-written evaluation, or any
//! UCI engine), plays games against itself for training data, trains
//! small nets on the CPU, and writes compact, checksummed `.kbz` record
//! files that trainers and databases read. The `kibitz` command is a thin
//! layer over this library.
//!
//! # The data flow
//!
//! ```text
//!  inputs (PGN/EPD; plain, zstd, gzip; memory-mapped)   book (EPD/PGN)
//!    │ source: detect, decompress, cut into chunks        │
//!    ▼        at game boundaries                          ▼
//!  runner ── reader thread ──chunks──► workers      SelfPlay: openings,
//!    │          ▲                        │          random plies, both
//!    │          └── permits (bounded) ───┤          sides a Labeller,
//!    ▼ each worker: GameReader parses,   │          adjudication
//!    │ Position replays (do_move, keys   │                │
//!    │ verified), a Labeller labels      │                │
//!    ▼ (the search with a net, an engine)▼                ▼
//!  BlockWriter: blocks of games in input order, columns zstd-compressed,
//!    │ checksummed ─► .kbz (Relabel, Dedup and Merge write through it too)
//!    ▼
//!  records ─► Export (annotated PGN, Stockfish plain and binpack, EPD,
//!    │        JSON lines, bullet, viriformat) · analysis ─► report · stats
//!    ▼
//!  train: a small NNUE on the CPU ─► net file ─► nnue::Net, the
//!         search's evaluation (built in: Stockfish.js 19's lite net)
//! ```
//!
//! The crate root holds what a program needs; the layout of the files
//! behind it is not part of the interface:
//!
//! * the board after Stockfish's `Position` and `StateInfo`: [`Position`],
//!   [`Move`], [`San`], [`Setup`] (FEN), [`perft`], [`zobrist`];
//! * reading: [`GameReader`] (PGN), [`EpdLine`], [`read_input`] (files,
//!   zstd, gzip, standard input, cut into chunks of whole games);
//! * evaluating and labelling: [`nnue`] (Stockfish 15.1's nets and kibitz's
//!   own), [`evaluate`] (the hand-written evaluation), [`Searcher`],
//!   [`Labeller`] with [`SearchLabeller`] and [`EngineLabeller`] (any UCI
//!   engine, held to its limit: [`LimitKept`]);
//! * records: [`KbzReader`], [`KbzWriter`] and the one [`BlockWriter`],
//!   [`GameRecord`] walked with [`walk`]; other programs' training data
//!   read by [`for_each_game`];
//! * the jobs, each built from its settings and run with a sink that
//!   hears its progress: [`Annotation`], [`Replay`], [`Relabel`],
//!   [`Dedup`], [`Merge`], [`Export`], [`SelfPlay`], [`train::Train`],
//!   [`data_stats`], [`report_files`], [`inspect`]; their common words
//!   ([`LabelWith`], [`OutputMode`]);
//! * [`analysis`]: Lichess's formulas (judgments, accuracy, phases).
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
//!     AnnotateSettings, Annotation, GameReader, KbzReader, Limits, OutputMode, Position,
//!     Searcher, walk,
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
//! // Search it to depth 4 (a searcher made without a net evaluates with
//! // the hand-written evaluation).
//! let mut searcher = Searcher::try_new(16)?;
//! let result = searcher.search(&mut pos, &Limits::depth(4), |_| {});
//! assert!(result.best.is_some());
//!
//! // Annotate the game into a .kbz file, one thread, depth 2.
//! let dir = std::env::temp_dir().join(format!("kibitz-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! let (input, output) = (dir.join("game.pgn"), dir.join("game.kbz"));
//! std::fs::write(&input, pgn)?;
//! let settings = AnnotateSettings {
//!     depth: 2,
//!     hash_mib: 1,
//!     skip_plies: 0,
//!     skip_captures: false,
//!     ..AnnotateSettings::default()
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

// The floors, bottom to top as the data flows; each imports only the
// floors below it (CONTRIBUTING.md has the map).
pub mod analysis;
mod chess;
mod hash;
mod io;
mod job;
mod label;
pub mod nnue;
mod pipeline;
mod record;
mod score;
mod search;
mod syzygy;

// The board, after Stockfish's Position and StateInfo; notation; perft.
pub use chess::{
    attacks,
    bitboard::Bitboard,
    chess960,
    fen::{FenError, FenField, FenOptions, STARTPOS, Setup},
    movegen,
    mv::{MAX_MOVES, Move, MoveKind, MoveList},
    perft,
    position::{CastlingMode, KeyCheck, Position, StateField},
    san::{San, SanError},
    state::{CopiedState, DirtyEntry, DirtyPiece, StateInfo},
    types::{ByColor, ByPiece, ByRole, CastlingSide, Color, File, Piece, Rank, Role, Square},
    uci::{UciError, move_to_uci},
    zobrist,
};
// Scores: centipawns and mates, side to move's view.
pub use score::{
    INFINITE, MATE, MATE_BOUND, MAX_PLY, ScoreKind, TB_WIN, WIN_BOUND, mate_in, mated_in,
    tb_loss_in, tb_win_in,
};
// Endgame tables: exact results of positions with few pieces.
pub use syzygy::{
    CURSED_WIN, TablebaseError, Tablebases, TbAnswer, TbWdl, probe_errors as syzygy_probe_errors,
};
// Reading games and positions: sources, the PGN and EPD readers, filters.
pub use io::{
    check_output_folder,
    epd::EpdLine,
    expand_folders,
    filter::{GameFilter, Speed, normalize_date},
    make_output_folder, missing_folder,
    pgn::{GameReader, MAX_GAME_PLIES, ParsedGame, PgnEval, TagValue},
    place::describe as describe_place,
    same_file,
    source::{ChunkConfig, Format, InputEvent, Release, display_name, read_input, zstd_frame_end},
    table::{EvalSide, Rows, TableOptions},
};
// The search, and what labels positions.
pub use label::{
    Cause, GaveUp, LabelContext, LabelFailure, Labelled, Labeller, LabellerPool, LimitKept,
    engine::{EngineConfig, EngineError, EngineLabeller},
    search::SearchLabeller,
};
pub use search::{
    Info, Limits, SearchResult, Searcher, bench,
    hce::{EvalTables, evaluate},
    texel,
};
// Records: the `.kbz` format, its reader and its one block writer.
pub use record::{
    chain::{ChainError, Step, walk},
    format::{
        BLOCK_GAMES, BLOCK_LABELS, Ending, FORMAT_VERSION, GameRecord, Header, InputInfo,
        LABEL_PAST_LIMIT, LABEL_SHORT_OF_LIMIT, LABEL_TABLEBASE, LABEL_TB_50_MOVE, Label,
        LabelSource, MAGIC, MAX_MULTIPV, MAX_PV, Options, PackedBoard, SelfPlayOptions, move_at,
        move_index, result_text,
    },
    import::{Foreign, for_each_game},
    position_key::{FirstSeen, label_keys},
    reader::{KbzReader, RecordError, read_all},
    shape::{ShapeRules, ShapeStats, parse_piece_count_weights},
    viriformat,
    writer::{BlockLimits, BlockSink, BlockWriter, KbzWriter, partial_path},
};
// Replaying and verifying: the stages the jobs share.
pub use pipeline::{
    annotator::AnnotateStats,
    fingerprint::{DuplicateFinder, Fingerprint, GameAt},
    keycheck::{KeyCheckSummary, KeyChecker, KeyDiff, open_key_file},
    replayer::{RejectKind, Rejected, ReplayOptions, Replayer, Verify, set_start_position},
    summary::{Summary, SummaryWithRates},
};
// The jobs: each built from its settings and run with a sink.
/// The report's Parquet tables (`report --parquet`).
#[cfg(feature = "parquet")]
pub use job::report::tables as report_tables;
/// The trainer of kibitz's own nets (`kibitz train`): its data, its model
/// and its run.
pub use job::train;
pub use job::{
    annotate::{AnnotateError, AnnotateReport, AnnotateSettings, AnnotateSink, Annotation},
    common::{LabelWith, OutputMode, input_infos},
    dedup::{Dedup, DedupError, DedupReport, DedupSettings, DedupSink, Keep},
    export::{Export, ExportError, ExportFormat, ExportReport, ExportStats, Exporter},
    inspect::{Inspection, inspect},
    merge::{Merge, MergeError, MergeReport},
    relabel::{Relabel, RelabelInput, RelabelReport, RelabelSink},
    replay::{Replay, ReplayError, ReplaySettings, ReplaySink},
    report::{
        GameSummary, PlayerSummary, Report, ReportError, ReportRead, ReportSink, report_files,
    },
    selfplay::{
        BOOK_SKIPS_KEPT, Book, BookError, BookSkip, GameRng, OPENING_TRIES, Openings, Played,
        Rules, SelfPlay, SelfPlayError, SelfPlayReport, SelfPlaySettings, SelfPlaySink,
        SelfPlayStats, board_ending, check_ending,
    },
    stats::{
        DataStats, Outcome, PLY_BIN, PLY_RANGE, SCORE_BIN, SCORE_RANGE, StatsError, data_stats,
    },
    tune::{CollectError, collect as collect_tuning_positions},
};
