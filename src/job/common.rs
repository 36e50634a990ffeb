//! The jobs' common vocabulary: where labels come from, how an existing
//! output is treated, and the inputs as a header records them. Every job
//! that labels or writes a `.kbz` takes these from here, so that no job
//! imports another for its words.

use std::path::PathBuf;

use crate::{
    chess::{position::Position, types::Color},
    io::source::display_name,
    label::engine::EngineConfig,
    nnue::Net,
    record::format::{Ending, InputInfo},
    syzygy::Tablebases,
};

/// Where labels come from.
#[derive(Clone)]
pub enum LabelWith {
    /// kibitz's search, with the hand-written evaluation or a net.
    Search(Option<Net>),
    /// The `[%eval]` comments of the PGN (nothing is searched).
    PgnEval,
    /// The evaluations the positions came with: a table's evaluation
    /// column, an EPD line's `ce` or `dm` (nothing is searched).
    Table,
    /// An external UCI engine, one process per worker.
    Engine(EngineConfig),
}

impl LabelWith {
    /// The engine, when labels come from one.
    pub fn engine(&self) -> Option<EngineConfig> {
        match self {
            LabelWith::Engine(c) => Some(c.clone()),
            _ => None,
        }
    }
}

/// How to treat an output file that exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputMode {
    /// Refuse to replace it.
    Create,
    /// Replace it.
    Replace,
    /// Keep its complete blocks and go on after its last game (a missing
    /// file is created).
    Resume,
}

/// The inputs of a run as the header records them.
pub fn input_infos(inputs: &[PathBuf]) -> Vec<InputInfo> {
    inputs
        .iter()
        .map(|p| InputInfo {
            name: display_name(p),
            size: if p.as_os_str() == "-" {
                0
            } else {
                std::fs::metadata(p).map_or(0, |m| m.len())
            },
        })
        .collect()
}

/// The tables' result of `pos`, as a game's result (0 Black won, 1 draw, 2
/// White won: a cursed win and a blessed loss are draws), when they hold
/// it.
pub fn tables_ending(tables: &Tablebases, pos: &Position) -> Option<(Ending, u8)> {
    let wdl = tables.probe_wdl(pos).or_else(|| {
        // Just after a capture or a pawn move the WDL tables alone tell.
        (pos.rule50() == 0).then(|| tables.probe_wdl_after_zeroing(pos)).flatten()
    })?;
    let white = if pos.side_to_move() == Color::White { wdl } else { wdl.flip() };
    Some((Ending::Tablebase, (white.outcome() + 1) as u8))
}
