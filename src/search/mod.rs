//! The fixed-depth search that labels positions: evaluation on the
//! incremental state ([`eval`](mod@eval)), the evaluation the search uses
//! ([`evaluator`]: the hand-written one or a net), the transposition table ([`tt`]), staged
//! move ordering ([`movepick`]), the evaluation's correction histories
//! ([`correction`]), the search itself ([`search`](mod@search)), the bench
//! signature ([`bench`](mod@bench)) and the weight tuner ([`tune`]).

pub mod bench;
pub mod correction;
pub mod evaluator;
pub mod hce;
pub mod history;
pub mod movepick;
#[allow(clippy::module_inception)]
pub mod search;
pub mod texel;
pub mod tt;
pub mod weights;

pub use search::{
    Info, Limits, MATE, MATE_BOUND, SearchResult, Searcher, WIN_BOUND, mate_in, mated_in,
};
