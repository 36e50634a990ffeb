//! Input: sources (files, stdin, zstd, gzip), chunking at game boundaries,
//! and the PGN and EPD readers.

pub mod epd;
pub mod mapguard;
pub mod pgn;
pub mod source;
