//! The pipeline: parallel ordered processing of inputs ([`run`]), replay and
//! verification of games ([`replay`]), run summaries ([`stats`]), and the
//! jobs built on them: replaying databases ([`database::Replay`]),
//! labelling positions ([`annotation::Annotation`]), reading the tuner's
//! training positions ([`tune`]).

pub mod annotate;
pub mod annotation;
pub mod database;
pub mod duplicates;
pub mod engine;
pub mod keycheck;
pub mod relabel;
pub mod replay;
pub mod run;
pub mod stats;
pub mod tune;
