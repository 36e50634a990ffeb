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
    chess::{position::Position, types::Role},
    nnue::{Net, NnueEval, SmallEval, stockfish_non_pawn_material, to_centipawns},
    search::{
        MATE_BOUND,
        hce::{EvalTables, evaluate},
    },
};

/// The search's margins, in the evaluation's units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// The first aspiration window's half-width.
    pub aspiration: i32,
    /// Reverse futility: the margin per ply of depth.
    pub rfp_margin: i32,
    /// Futility: the margin's constant part...
    pub futility_base: i32,
    /// ... and its part per ply of depth.
    pub futility_margin: i32,
    /// Null move: the evaluation above beta worth one more ply of
    /// reduction.
    pub nmp_divisor: i32,
    /// Quiescence delta pruning's margin beyond the captured piece's value.
    pub qs_delta: i32,
    /// The pieces' values for delta pruning (pawn, knight, bishop, rook,
    /// queen).
    pub piece_values: [i32; 5],
    /// Late-move reductions: `base + ln(depth) * ln(moves) / divisor`, in
    /// hundredths.
    pub lmr_base: i32,
    /// See `lmr_base`, in hundredths.
    pub lmr_divisor: i32,
    /// Static exchange pruning of quiet moves: the loss allowed per ply.
    pub see_quiet: i32,
    /// ... and of captures.
    pub see_capture: i32,
    /// Razoring: a node whose evaluation is this far below alpha (per ply
    /// squared, plus as much again) drops into quiescence; 0 for none.
    pub razor_margin: i32,
}

impl Params {
    /// The margins for the hand-written evaluation (centipawns).
    pub const HAND_WRITTEN: Params = Params {
        aspiration: 20,
        rfp_margin: 75,
        futility_base: 90,
        futility_margin: 80,
        nmp_divisor: 200,
        qs_delta: 200,
        piece_values: [100, 320, 330, 500, 950],
        lmr_base: 75,
        lmr_divisor: 225,
        see_quiet: -60,
        see_capture: -100,
        razor_margin: 0,
    };

    /// The margins for a Stockfish 15.1 net (its internal units: a pawn is
    /// about 208 in the endgame, 126 in the middlegame).
    pub const NNUE: Params = Params {
        aspiration: 40,
        rfp_margin: 60,
        futility_base: 180,
        futility_margin: 160,
        nmp_divisor: 400,
        qs_delta: 400,
        piece_values: [208, 781, 825, 1276, 2538],
        lmr_base: 100,
        lmr_divisor: 225,
        see_quiet: -60,
        see_capture: -100,
        razor_margin: 0,
    };

    /// The value of a captured `role` for delta pruning.
    #[inline]
    pub fn piece_value(&self, role: Role) -> i32 {
        match role {
            Role::Pawn => self.piece_values[0],
            Role::Knight => self.piece_values[1],
            Role::Bishop => self.piece_values[2],
            Role::Rook => self.piece_values[3],
            Role::Queen => self.piece_values[4],
            Role::King => 0,
        }
    }
}

/// The evaluation a searcher uses.
pub enum Evaluator {
    /// The hand-written evaluation and its caches.
    HandWritten(EvalTables),
    /// A Stockfish 15.1 net and the accumulators of the position searched.
    Nnue(Box<NnueEval>),
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
            Some(Net::Kibitz(net)) => Evaluator::Small(Box::new(SmallEval::new(net))),
        }
    }

    /// The margins tuned for this evaluation's scale.
    pub fn params(&self) -> Params {
        match self {
            Evaluator::HandWritten(_) | Evaluator::Small(_) => Params::HAND_WRITTEN,
            Evaluator::Nnue(_) => Params::NNUE,
        }
    }

    /// The net, if the evaluation is a net's.
    pub fn net(&self) -> Option<Net> {
        match self {
            Evaluator::HandWritten(_) => None,
            Evaluator::Nnue(e) => Some(Net::Stockfish(e.network().clone())),
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
                v.clamp(-MATE_BOUND + 1, MATE_BOUND - 1)
            }
            Evaluator::Small(e) => {
                // Damped as the 50-move counter grows, as with Stockfish's
                // nets: a won position that makes no progress is less won.
                let v = e.evaluate(pos);
                let v = v * (200 - (pos.rule50() as i32).min(200)) / 200;
                v.clamp(-MATE_BOUND + 1, MATE_BOUND - 1)
            }
        }
    }

    /// Forgets what the caches hold (a new game).
    pub fn clear(&mut self) {
        match self {
            Evaluator::HandWritten(tables) => tables.clear(),
            // The accumulators are tagged with the keys of their states:
            // there is nothing stale to forget.
            Evaluator::Nnue(_) | Evaluator::Small(_) => {}
        }
    }

    /// A search score (not a mate) in the centipawns labels are given in.
    #[inline]
    pub fn to_centipawns(&self, score: i32) -> i32 {
        match self {
            Evaluator::HandWritten(_) | Evaluator::Small(_) => score,
            Evaluator::Nnue(_) if score.abs() >= MATE_BOUND => score,
            Evaluator::Nnue(_) => to_centipawns(score),
        }
    }
}
