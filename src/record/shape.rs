//! Shaping a data set at export, the same for every format: labels left
//! out by score, by their agreement with the game's result, and resampled
//! to a target distribution of piece counts. What a trainer's loader does
//! on the fly (nnue-pytorch's `wld_filtered` and piece-count skipping) is
//! done once, deterministically, so that every trainer reads the same data.
//!
//! The rules run in this order, and a label is counted under the first
//! that drops it:
//!
//! 0. the selection annotate makes at labelling (`skip_plies`,
//!    `skip_check`, `skip_captures`), for files labelled at every position
//!    (self-play keeps them all: every move is searched anyway, and
//!    viriformat wants every move of a game);
//! 1. `max_score`: a score beyond ±N centipawns, or a mate;
//! 2. `wdl_consistency`: the game's result has a probability below P under
//!    the win-rate model nnue-pytorch's loader filters with (Stockfish's
//!    fishtest fit of win, draw and loss rates from the score and the
//!    game's ply, its width scaled by 1.5); a game without a known result
//!    counts as drawn, as the trainer formats write it;
//! 3. `piece_count_weights`: every label is kept with a probability per
//!    piece count chosen so that the kept labels follow the target
//!    weights, as many as the scarcest piece count allows. The draw is a
//!    hash of the seed, the game's index and the ply: the same labels are
//!    kept whatever the format or the run.

use crate::{
    chess::types::Color,
    hash::{fnv1a64, splitmix64},
    record::{
        chain::{ChainError, walk},
        format::GameRecord,
    },
    score::{ScoreKind, WIN_BOUND, mate_in},
};

/// The rules of one export.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ShapeRules {
    /// Selection as annotate makes it: leave out positions before this ply
    /// of their game's chain...
    pub skip_plies: u32,
    /// ... positions in check ...
    pub skip_check: bool,
    /// ... and positions whose best move (the move played, without one)
    /// captures or promotes.
    pub skip_captures: bool,
    /// Drop scores beyond ±N centipawns, and mates.
    pub max_score: Option<i32>,
    /// Drop labels whose game's result has a probability below this.
    pub wdl_consistency: Option<f64>,
    /// Target weight of each piece count, 0 to 32 pieces on the board.
    pub piece_count_weights: Option<[f64; 33]>,
    /// Seed of the piece-count draw.
    pub seed: u64,
}

/// nnue-pytorch's target: `2 - ((pieces - 16) / 16)²`, twice as many
/// positions with 16 pieces as with 32 or with none.
pub fn nnue_pytorch_weights() -> [f64; 33] {
    std::array::from_fn(|k| 2.0 - ((k as f64 - 16.0) / 16.0).powi(2))
}

/// Piece-count weights by name (`nnue-pytorch`, `uniform`) or as 33
/// comma-separated weights for 0 to 32 pieces, none negative; `None` for
/// anything else.
pub fn parse_piece_count_weights(text: &str) -> Option<[f64; 33]> {
    match text {
        "nnue-pytorch" => Some(nnue_pytorch_weights()),
        "uniform" => Some([1.0; 33]),
        list => {
            let values: Vec<f64> =
                list.split(',').map(|v| v.trim().parse::<f64>()).collect::<Result<_, _>>().ok()?;
            (values.len() == 33 && values.iter().all(|w| *w >= 0.0))
                .then(|| std::array::from_fn(|k| values[k]))
        }
    }
}

impl ShapeRules {
    /// Whether the rules shape anything (the seed alone does not).
    pub fn is_active(&self) -> bool {
        self != &ShapeRules { seed: self.seed, ..ShapeRules::default() }
    }
}

/// What the rules dropped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ShapeStats {
    /// Labels read.
    pub labels: u64,
    /// Dropped by the selection (`skip_plies`, `skip_check`,
    /// `skip_captures`).
    pub selection: u64,
    /// Dropped for their score.
    pub max_score: u64,
    /// Dropped for contradicting their game's result.
    pub wdl_consistency: u64,
    /// Dropped by the piece-count resampling.
    pub piece_count: u64,
    /// Kept.
    pub kept: u64,
}

/// The win, draw and loss probabilities of a score (side to move's view,
/// centipawns, a mate counted as far beyond the model's range) at a game
/// ply, as nnue-pytorch's loader models them.
pub fn win_draw_loss(score: i32, ply: u32) -> (f64, f64, f64) {
    let m = f64::from(ply.min(240)) / 64.0;
    let a = ((-3.683_893_04 * m + 30.070_659_21) * m - 60.528_787_23) * m + 149.533_785_57;
    let b = 1.5 * (((-2.018_185_7 * m + 15.856_850_38) * m - 29.834_520_23) * m + 47.590_788_27);
    let x = (100.0 * f64::from(score) / 208.0).clamp(-2000.0, 2000.0);
    let win = 1.0 / (1.0 + ((a - x) / b).exp());
    let loss = 1.0 / (1.0 + ((a + x) / b).exp());
    (win, 1.0 - win - loss, loss)
}

/// A number in [0, 1) drawn from the seed and a position's FEN.
pub fn draw(seed: u64, fen: &str) -> f64 {
    let x = splitmix64(splitmix64(seed) ^ fnv1a64(fen.as_bytes()));
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// One label as the rules see it.
struct Seen {
    /// The FEN, when the piece-count draw needs it.
    fen: Option<String>,
    pieces: usize,
    dropped_by: Option<Rule>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Rule {
    Selection,
    MaxScore,
    Wdl,
}

/// Applies [`ShapeRules`] game by game. With piece-count weights it needs
/// every game twice: first [`Shaper::count`] each (the distribution), then
/// [`Shaper::shape`] each.
pub struct Shaper {
    rules: ShapeRules,
    counts: [u64; 33],
    keep: Option<[f64; 33]>,
    /// Counts so far.
    pub stats: ShapeStats,
}

impl Shaper {
    /// A shaper for these rules.
    pub fn new(rules: ShapeRules) -> Shaper {
        Shaper { rules, counts: [0; 33], keep: None, stats: ShapeStats::default() }
    }

    /// Whether the rules need a first pass ([`Shaper::count`]).
    pub fn needs_counts(&self) -> bool {
        self.rules.piece_count_weights.is_some()
    }

    /// The labels of a game with the first two rules applied.
    fn see(&self, record: &GameRecord) -> Result<Vec<Seen>, ChainError> {
        let mut seen = Vec::with_capacity(record.labels.len());
        walk(record, |step| {
            let Some(label) = step.label else { return };
            let pos = step.pos;
            let score = i32::from(label.score);
            let kind = ScoreKind::from_score(score);
            let r = &self.rules;
            let mut dropped_by = None;
            let capture = step.best.or(step.played).is_some_and(|m| pos.is_capture_or_promotion(m));
            if step.ply < r.skip_plies as usize
                || (r.skip_check && pos.in_check())
                || (r.skip_captures && capture)
            {
                dropped_by = Some(Rule::Selection);
            }
            if let Some(limit) = self.rules.max_score.filter(|_| dropped_by.is_none()) {
                let beyond = match kind {
                    // A tablebase win is a known win, as a mate is.
                    ScoreKind::Cp(cp) => cp.abs() > limit || cp.abs() >= WIN_BOUND,
                    ScoreKind::Mate(_) => true,
                };
                if beyond {
                    dropped_by = Some(Rule::MaxScore);
                }
            }
            if dropped_by.is_none()
                && let Some(least) = self.rules.wdl_consistency
            {
                // The game's result for the side to move: 1, 0 or -1
                // (unknown as drawn).
                let white = if record.result <= 2 { i32::from(record.result) - 1 } else { 0 };
                let result = if pos.side_to_move() == Color::White { white } else { -white };
                let cp = match kind {
                    ScoreKind::Cp(cp) => cp,
                    ScoreKind::Mate(n) if n > 0 => mate_in(1),
                    ScoreKind::Mate(_) => -mate_in(1),
                };
                let (w, d, l) = win_draw_loss(cp, pos.game_ply());
                let p = match result {
                    1 => w,
                    -1 => l,
                    _ => d,
                };
                if p < least {
                    dropped_by = Some(Rule::Wdl);
                }
            }
            let fen = (self.rules.piece_count_weights.is_some() && dropped_by.is_none())
                .then(|| pos.fen());
            seen.push(Seen { fen, pieces: pos.occupied().count() as usize, dropped_by });
        })?;
        Ok(seen)
    }

    /// First pass: counts the piece counts of the labels the first two
    /// rules keep.
    pub fn count(&mut self, record: &GameRecord) -> Result<(), ChainError> {
        for s in self.see(record)? {
            if s.dropped_by.is_none() {
                self.counts[s.pieces.min(32)] += 1;
            }
        }
        Ok(())
    }

    /// The probability of keeping a label of each piece count: the target
    /// weights over the piece counts present, scaled so that the scarcest
    /// one relative to its weight is kept whole.
    fn keep_probabilities(&self, weights: &[f64; 33]) -> [f64; 33] {
        let present = |k: usize| self.counts[k] > 0 && weights[k] > 0.0;
        let total: f64 = (0..33).filter(|&k| present(k)).map(|k| weights[k]).sum();
        let out = (0..33)
            .filter(|&k| present(k))
            .map(|k| self.counts[k] as f64 * total / weights[k])
            .fold(f64::INFINITY, f64::min);
        std::array::from_fn(|k| {
            if present(k) {
                (weights[k] * out / (total * self.counts[k] as f64)).min(1.0)
            } else {
                0.0
            }
        })
    }

    /// The piece-count keep probabilities, once the first pass is done
    /// (`None` without weights).
    pub fn keep_table(&mut self) -> Option<[f64; 33]> {
        if self.keep.is_none()
            && let Some(weights) = self.rules.piece_count_weights
        {
            self.keep = Some(self.keep_probabilities(&weights));
        }
        self.keep
    }

    /// Second pass: the game with only the labels the rules keep.
    pub fn shape(&mut self, record: &GameRecord) -> Result<GameRecord, ChainError> {
        let keep = self.keep_table();
        let seen = self.see(record)?;
        let mut out = record.clone();
        out.labels.clear();
        for (label, s) in record.labels.iter().zip(&seen) {
            self.stats.labels += 1;
            match s.dropped_by {
                Some(Rule::Selection) => self.stats.selection += 1,
                Some(Rule::MaxScore) => self.stats.max_score += 1,
                Some(Rule::Wdl) => self.stats.wdl_consistency += 1,
                None => {
                    let kept = match (keep, &s.fen) {
                        (Some(p), Some(fen)) => draw(self.rules.seed, fen) < p[s.pieces.min(32)],
                        _ => true,
                    };
                    if kept {
                        self.stats.kept += 1;
                        out.labels.push(*label);
                    } else {
                        self.stats.piece_count += 1;
                    }
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_is_nnue_pytorchs() {
        // Symmetric, and a draw is likeliest at 0.
        let (w, d, l) = win_draw_loss(0, 60);
        assert!((w - l).abs() < 1e-12 && d > w);
        let (w, _, l) = win_draw_loss(300, 60);
        assert!(w > 0.5 && l < 0.01, "{w} {l}");
        // nnue-pytorch's table is this parabola.
        let t = nnue_pytorch_weights();
        assert_eq!((t[0], t[16], t[32]), (1.0, 2.0, 1.0));
        assert!((t[1] - 1.121_094).abs() < 1e-6 && (t[31] - 1.121_094).abs() < 1e-6);
    }

    #[test]
    fn keep_probabilities_follow_the_target() {
        let mut s = Shaper::new(ShapeRules::default());
        s.counts[10] = 100;
        s.counts[20] = 400;
        let mut w = [0.0; 33];
        w[10] = 1.0;
        w[20] = 1.0;
        let p = s.keep_probabilities(&w);
        // 100 of each: all of the scarce one, a quarter of the other.
        assert_eq!((p[10], p[20]), (1.0, 0.25));
        assert_eq!(p[5], 0.0);
    }

    #[test]
    fn draws_are_uniform_and_repeatable() {
        let n = 100_000;
        let below = (0..n).filter(|i| draw(7, &format!("fen {i}")) < 0.3).count();
        assert!((below as f64 / n as f64 - 0.3).abs() < 0.01, "{below}");
        assert_eq!(draw(7, "8/8/8/8/8/8/8/8 w - - 0 1"), draw(7, "8/8/8/8/8/8/8/8 w - - 0 1"));
        assert_ne!(draw(7, "8/8/8/8/8/8/8/8 w - - 0 1"), draw(8, "8/8/8/8/8/8/8/8 w - - 0 1"));
    }
}
