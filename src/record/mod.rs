//! Records: the `.kbz` format ([`format`](mod@format)), reading and writing files
//! ([`file`](mod@file)), walking game chains ([`chain`]) and exporting to trainers'
//! and databases' formats ([`export`]).

pub mod chain;
pub mod dedup;
pub mod export;
pub mod file;
pub mod format;
pub mod shape;
pub mod stats;
