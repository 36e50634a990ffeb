//! kibitz's integration tests, built as one binary (as ripgrep does) to keep
//! link time down. Tests that read the shared corpora in `../shared/data`
//! are compiled only with `--features corpus`.

mod analysis;
mod annotate;
mod cli;
#[cfg(feature = "corpus")]
mod conformance;
mod dedup;
mod differential;
mod engine;
mod faults;
mod fuzz;
mod keys;
mod layers;
mod memory;
mod nnue;
mod nnue19;
#[cfg(feature = "parquet")]
mod parquet;
mod perft;
#[cfg(feature = "python-chess")]
mod pgn;
mod playout;
mod props;
mod relabel;
mod replay;
mod search;
mod selfplay;
mod shape;
#[cfg(feature = "slurm")]
mod slurm;
mod stats;
mod syzygy;
mod tables;
mod train;
mod util;
