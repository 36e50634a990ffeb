//! The pipeline: parallel ordered processing of inputs ([`run`]), replay and
//! verification of games ([`replay`]), and run summaries ([`stats`]).

pub mod annotate;
pub mod annotation;
pub mod engine;
pub mod replay;
pub mod run;
pub mod stats;
pub mod tune;
