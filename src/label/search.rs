//! The built-in search as a labeller.

use crate::{
    chess::{mv::Move, position::Position},
    label::{LabelContext, Labelled, Labeller, LimitKept},
    search::{Limits, Searcher},
};

/// The built-in search as a labeller.
pub struct SearchLabeller {
    searcher: Searcher,
    limits: Limits,
    lines: usize,
}

impl SearchLabeller {
    /// A labeller searching to `depth` (or `nodes`) with a `hash_mib` table,
    /// evaluating with `net` (the hand-written evaluation without one), or
    /// an error that says the table cannot be allocated.
    pub fn try_new(
        depth: u32,
        nodes: u64,
        hash_mib: usize,
        net: Option<crate::nnue::Net>,
    ) -> Result<SearchLabeller, crate::search::tt::TableError> {
        let limits = if nodes > 0 { Limits::nodes(nodes) } else { Limits::depth(depth as i32) };
        Ok(SearchLabeller { searcher: Searcher::try_with_net(hash_mib, net)?, limits, lines: 1 })
    }

    /// Endgame tables the search probes (see [`Searcher::set_tablebases`]).
    pub fn set_tablebases(
        &mut self,
        tablebases: Option<std::sync::Arc<crate::syzygy::Tablebases>>,
    ) {
        self.searcher.set_tablebases(tablebases);
    }

    /// Search this many best moves per position (1 to
    /// [`crate::record::format::MAX_MULTIPV`]).
    pub fn with_multipv(mut self, lines: usize) -> SearchLabeller {
        self.lines = lines.clamp(1, crate::record::format::MAX_MULTIPV);
        self
    }
}

impl Labeller for SearchLabeller {
    fn new_game(&mut self, _chess960: bool) {
        self.searcher.new_game();
    }

    fn backward(&self) -> bool {
        true
    }

    fn label(&mut self, pos: &mut Position, _ctx: &LabelContext<'_>) -> Option<Labelled> {
        if self.lines > 1 {
            let found = self.searcher.search_multipv(pos, &self.limits, self.lines);
            let nodes = found.iter().map(|l| l.nodes).sum();
            let mut found = found.into_iter();
            let r = found.next()?;
            let alternatives: Vec<(Move, i32)> =
                found.filter_map(|l| Some((l.best?, l.score))).collect();
            return Some(Labelled {
                score: r.score,
                best: r.best,
                depth: r.depth.clamp(0, 255) as u8,
                nodes,
                pv: r.pv,
                alternatives,
                limit: LimitKept::Kept,
                tablebase: None,
            });
        }
        let r = self.searcher.search(pos, &self.limits, |_| {});
        r.best?;
        Some(Labelled {
            score: r.score,
            best: r.best,
            depth: r.depth.clamp(0, 255) as u8,
            nodes: r.nodes,
            pv: r.pv,
            alternatives: Vec::new(),
            limit: LimitKept::Kept,
            tablebase: None,
        })
    }
}
