//! The pipeline: parallel ordered processing of inputs ([`run`]), replay and
//! verification of games ([`replay`]), and run summaries ([`stats`]).

pub mod replay;
pub mod run;
pub mod stats;
