//! The jobs: each a library type built from its settings, run with a sink
//! that hears its progress, and returning a report. The command line
//! builds them from flags; a program builds them directly.

pub mod annotate;
pub mod common;
pub mod dedup;
pub mod export;
pub mod inspect;
pub mod merge;
pub mod relabel;
pub mod replay;
pub mod report;
pub mod selfplay;
pub mod stats;
pub mod train;
pub mod tune;
