//! `kibitz bench`: a fixed set of positions searched to a fixed depth, each
//! from a cleared searcher. The total node count is a signature of the
//! search and evaluation (a test pins it, so any change that alters the
//! search shows), and the speed is a rough nodes-per-second figure.

use std::time::{Duration, Instant};

use crate::{
    chess::position::Position,
    io::epd::EpdLine,
    search::{Limits, Searcher},
};

/// The positions (`data/bench.epd`, built into the binary).
pub const BENCH_EPD: &str = include_str!("../../data/bench.epd");

/// The default bench depth.
pub const DEFAULT_DEPTH: i32 = 10;

/// What a bench run measured.
#[derive(Clone, Debug)]
pub struct BenchResult {
    /// Positions searched.
    pub positions: usize,
    /// Total nodes: the signature.
    pub nodes: u64,
    /// Wall time.
    pub elapsed: Duration,
}

impl BenchResult {
    /// Nodes per second.
    pub fn nps(&self) -> f64 {
        self.nodes as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// The bench positions as FENs.
pub fn positions() -> Vec<String> {
    BENCH_EPD
        .lines()
        .filter_map(|l| EpdLine::parse(l.as_bytes()))
        .filter_map(Result::ok)
        .map(|l| l.fen)
        .collect()
}

/// Searches every bench position to `depth` with a `hash_mib` table,
/// clearing the searcher before each, evaluating with `net` (the
/// hand-written evaluation without one: each has its own signature). The
/// error says the table cannot be allocated.
pub fn run(
    depth: i32,
    hash_mib: usize,
    net: Option<crate::nnue::Net>,
    on_position: impl FnMut(usize, &str, u64),
) -> Result<BenchResult, crate::search::tt::TableError> {
    run_with_tables(depth, hash_mib, net, None, on_position)
}

/// [`run`], the search probing `tables` (a signature of its own when a
/// bench position reaches them).
pub fn run_with_tables(
    depth: i32,
    hash_mib: usize,
    net: Option<crate::nnue::Net>,
    tables: Option<std::sync::Arc<crate::syzygy::Tablebases>>,
    mut on_position: impl FnMut(usize, &str, u64),
) -> Result<BenchResult, crate::search::tt::TableError> {
    let mut searcher = Searcher::try_with_net(hash_mib, net)?;
    searcher.set_tablebases(tables);
    let start = Instant::now();
    let mut nodes = 0;
    let fens = positions();
    for (i, fen) in fens.iter().enumerate() {
        let Ok(mut pos) = Position::from_fen(fen) else { continue };
        searcher.new_game();
        let result = searcher.search(&mut pos, &Limits::depth(depth), |_| {});
        nodes += result.nodes;
        on_position(i, fen, result.nodes);
    }
    Ok(BenchResult { positions: fens.len(), nodes, elapsed: start.elapsed() })
}
