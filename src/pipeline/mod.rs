//! The stages every job shares: the parallel ordered runner ([`run`]),
//! a chunk of games replayed and verified ([`replayer`]) or replayed,
//! selected and labelled ([`annotator`]), a database's key file checked
//! ([`keycheck`]), games fingerprinted for duplicates ([`fingerprint`]),
//! and run summaries ([`summary`]).

pub mod annotator;
pub mod fingerprint;
pub mod keycheck;
pub mod replayer;
pub mod run;
pub mod summary;
