//! The board, after Stockfish's Position and StateInfo: vocabulary, attack tables, keys,
//! the position with its state stack, move generation, notation and perft.

pub mod attacks;
pub mod bitboard;
pub mod chess960;
pub mod fen;
pub mod movegen;
pub mod mv;
pub mod perft;
pub mod position;
pub mod psqt;
pub mod san;
pub mod state;
pub mod types;
pub mod uci;
pub mod zobrist;
