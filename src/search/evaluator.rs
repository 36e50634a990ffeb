//! What the search evaluates with: the hand-written evaluation (centipawns)
//! or a Stockfish 15.1 net (Stockfish's internal units), and the search
//! margins tuned for each scale.
//!
//! With a net, the search evaluates as Stockfish 15.1's search does
//! (`Eval::evaluate` with the net, without its optimism, which depends on
//! the game being played): the adjusted net output, scaled up with the
//! material on the board and damped as the 50-move counter grows. Scores
//! leave the searcher as UCI centipawns on Stockfish 15.1's scale (100
//! internal units of 361), so a kibitz label and a Stockfish label of the
//! same position compare directly.

use crate::{
    chess::position::Position,
    nnue::{
        Net, NnueEval, SmallEval, ThreatEval, stockfish_non_pawn_material, threat, to_centipawns,
    },
    search::{
        WIN_BOUND,
        hce::{EvalTables, evaluate},
    },
};

/// The scale of the search's margins. The search is Stockfish 15.1's, and
/// its margins are Stockfish's, in Stockfish's internal units; an
/// evaluation on another scale may have them converted by `scale`, its
/// units per thousand of Stockfish's (see [`Params::v`]).
///
/// The hand-written evaluation (centipawns of material, a pawn 100 where
/// Stockfish's endgame pawn is 208) and kibitz's own net (centipawns of
/// Stockfish's UCI output, 100 where its internal unit is 361) would take
/// 481 and 277 by their scales. Measured (BENCHMARKS.md, "The search after
/// Stockfish 15.1"), those margins prune tactics their evaluations swing
/// on (WAC at depth 8: 165 and 157 of 300 solved, against 193 and 196 at
/// 1000) and play no better at equal nodes (kibitz's own net 30 Elo worse
/// at 277, the hand-written evaluation 12 better at 481, both within the
/// interval), at the same agreement per node: both take Stockfish's margins
/// as their own units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// The evaluation's units per thousand of Stockfish's internal units.
    pub scale: i32,
}

impl Params {
    /// A Stockfish 15.1 net: Stockfish's own units.
    pub const NNUE: Params = Params { scale: 1000 };

    /// The hand-written evaluation: Stockfish's margins as centipawns.
    pub const HAND_WRITTEN: Params = Params { scale: 1000 };

    /// kibitz's own net: Stockfish's margins as centipawns.
    pub const KIBITZ_NET: Params = Params { scale: 1000 };

    /// Stockfish 19's net: Stockfish's internal units, whose pawn is about
    /// 300 where Stockfish 15.1's was 361 (its `to_cp` divides by a cubic
    /// in the material, 304 at the middlegame's 58).
    pub const NNUE19: Params = Params { scale: 1000 };

    /// `sf`, a margin in Stockfish's internal units, in the evaluation's.
    #[inline(always)]
    pub const fn v(self, sf: i32) -> i32 {
        sf * self.scale / 1000
    }

    /// A history or statistics value `h` divided by `divisor` as Stockfish
    /// divides it to weigh it against its evaluation, in the evaluation's
    /// units.
    #[inline(always)]
    pub const fn history(self, h: i32, divisor: i32) -> i32 {
        h * self.scale / (divisor * 1000)
    }

    /// `e`, in the evaluation's units, in Stockfish's internal units.
    #[inline(always)]
    pub const fn to_sf(self, e: i32) -> i32 {
        e * 1000 / self.scale
    }
}

/// The evaluation a searcher uses.
pub enum Evaluator {
    /// The hand-written evaluation and its caches.
    HandWritten(EvalTables),
    /// A Stockfish 15.1 net and the accumulators of the position searched.
    Nnue(Box<NnueEval>),
    /// Stockfish 19's net and the accumulators of the position searched.
    Nnue19(Box<ThreatEval>),
    /// A kibitz net and the accumulators of the position searched; it
    /// evaluates in centipawns, as the hand-written evaluation does.
    Small(Box<SmallEval>),
}

impl Evaluator {
    /// The hand-written evaluation, or `net`'s.
    pub fn new(net: Option<Net>) -> Evaluator {
        match net {
            None => Evaluator::HandWritten(EvalTables::new()),
            Some(Net::Stockfish(net)) => Evaluator::Nnue(Box::new(NnueEval::new(net))),
            Some(Net::Stockfish19(net)) => Evaluator::Nnue19(Box::new(ThreatEval::new(net))),
            Some(Net::Kibitz(net)) => Evaluator::Small(Box::new(SmallEval::new(net))),
        }
    }

    /// The margins tuned for this evaluation's scale.
    pub fn params(&self) -> Params {
        match self {
            Evaluator::HandWritten(_) => Params::HAND_WRITTEN,
            Evaluator::Small(_) => Params::KIBITZ_NET,
            Evaluator::Nnue(_) => Params::NNUE,
            Evaluator::Nnue19(_) => Params::NNUE19,
        }
    }

    /// The net, if the evaluation is a net's.
    pub fn net(&self) -> Option<Net> {
        match self {
            Evaluator::HandWritten(_) => None,
            Evaluator::Nnue(e) => Some(Net::Stockfish(e.network().clone())),
            Evaluator::Nnue19(e) => Some(Net::Stockfish19(e.network().clone())),
            Evaluator::Small(e) => Some(Net::Kibitz(e.network().clone())),
        }
    }

    /// The static evaluation of `pos` (not in check), side to move's view,
    /// in the evaluation's units.
    #[inline]
    pub fn evaluate(&mut self, pos: &Position) -> i32 {
        match self {
            Evaluator::HandWritten(tables) => evaluate(pos, tables),
            Evaluator::Nnue(e) => {
                let v = e.evaluate_adjusted(pos);
                let npm = stockfish_non_pawn_material(pos);
                let v = v * (1064 + 106 * npm / 5120) / 1024;
                let v = v * (195 - (pos.rule50() as i32).min(195)) / 211;
                v.clamp(-WIN_BOUND + 1, WIN_BOUND - 1)
            }
            Evaluator::Nnue19(e) => e.evaluate_blended(pos, 0).0,
            Evaluator::Small(e) => {
                // Damped as the 50-move counter grows, as with Stockfish's
                // nets: a won position that makes no progress is less won.
                let v = e.evaluate(pos);
                let v = v * (200 - (pos.rule50() as i32).min(200)) / 200;
                v.clamp(-WIN_BOUND + 1, WIN_BOUND - 1)
            }
        }
    }

    /// The static evaluation of `pos` (not in check) as the search uses it,
    /// and its "complexity", both in the evaluation's units. With
    /// Stockfish's net this is Stockfish 15.1's `Eval::evaluate`: the net's
    /// complexity blended with how far it strays from the material and
    /// piece-square values, and the side to move's `optimism` (set from the
    /// root's score by the search, 0 outside it) added in proportion. The
    /// other evaluations take no optimism; their complexity is how far they
    /// stray from the material and piece-square values.
    #[inline]
    pub fn evaluate_in_search(&mut self, pos: &Position, optimism: i32) -> (i32, i32) {
        let psq = pos.psq().eg;
        let psq = if pos.side_to_move() == crate::chess::types::Color::White { psq } else { -psq };
        match self {
            Evaluator::Nnue(e) => {
                let (nnue, net_complexity) = e.evaluate_adjusted_complexity(pos);
                // The piece-square values are centipawns of material; in
                // Stockfish's units a pawn is 208 in the endgame.
                let psq = psq * 208 / 100;
                let blend = 416 * net_complexity
                    + 424 * (psq - nnue).abs()
                    + if optimism > 0 { optimism * (psq - nnue) } else { 0 };
                let complexity = blend / 1024;
                let optimism = optimism * (269 + complexity) / 256;
                let scale = 1064 + 106 * stockfish_non_pawn_material(pos) / 5120;
                let v = (nnue * scale + optimism * (scale - 754)) / 1024;
                let v = v * (195 - (pos.rule50() as i32).min(195)) / 211;
                (v.clamp(-WIN_BOUND + 1, WIN_BOUND - 1), complexity)
            }
            Evaluator::Nnue19(e) => {
                // Stockfish 19's evaluation takes the optimism itself; its
                // net's complexity is how far its two parts disagree.
                let (v, o) = e.evaluate_blended(pos, optimism);
                (v, (o.psqt - o.positional).abs())
            }
            _ => {
                let v = self.evaluate(pos);
                let psq = Params::v(self.params(), psq * 208 / 100);
                (v, (v - psq).abs())
            }
        }
    }

    /// Forgets what the caches hold (a new game).
    pub fn clear(&mut self) {
        match self {
            Evaluator::HandWritten(tables) => tables.clear(),
            // The accumulators are tagged with the keys of their states:
            // there is nothing stale to forget.
            Evaluator::Nnue(_) | Evaluator::Nnue19(_) | Evaluator::Small(_) => {}
        }
    }

    /// A search score (not a mate) at `root` in the centipawns labels are
    /// given in: with Stockfish 19's net, as Stockfish 19 reports it (its
    /// pawn depends on the material on the board).
    #[inline]
    pub fn to_centipawns(&self, score: i32, root: &Position) -> i32 {
        match self {
            Evaluator::HandWritten(_) | Evaluator::Small(_) => score,
            Evaluator::Nnue(_) | Evaluator::Nnue19(_) if score.abs() >= WIN_BOUND => score,
            Evaluator::Nnue(_) => to_centipawns(score),
            Evaluator::Nnue19(_) => threat::to_centipawns(score, root),
        }
    }
}
