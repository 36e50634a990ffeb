//! Records: the `.kbz` format ([`format`](mod@format)), reading and writing files
//! ([`file`](mod@file)), walking game chains ([`chain`]) and exporting to trainers'
//! and databases' formats ([`export`]).

pub mod chain;
pub mod format;
pub mod frame;
pub mod import;
#[cfg(feature = "parquet")]
pub mod lichess_evals;
pub mod position_key;
pub mod reader;
pub mod shape;
pub mod viriformat;
pub mod writer;
