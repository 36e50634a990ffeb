//! Analysis as Lichess computes it, from the labels of every position of a
//! game: each move judged (inaccuracy, mistake, blunder), its accuracy, and
//! per player the game's accuracy and average centipawn loss, overall and
//! per game phase.
//!
//! The formulas are Lichess's (lila's `Advice`, `AccuracyPercent`,
//! `AccuracyCP`, scalachess's `WinPercent` and `Divider`), reimplemented so
//! that a database analysed by kibitz reads like the analysis its players
//! see on Lichess:
//!
//! * winning chances `2 / (1 + exp(-0.00368208 * cp)) - 1` with `cp` clamped
//!   to ±1000, Win% `50 + 50 * chances`;
//! * a move is an inaccuracy, mistake or blunder when it drops the mover's
//!   winning chances by at least 0.1, 0.2 or 0.3, with separate rules when
//!   a forced mate appears or is lost;
//! * move accuracy `103.1668100711649 * exp(-0.04354415386753951 * drop)
//!   - 3.166924740191411 + 1` from the drop in Win%, clamped to [0, 100];
//! * game accuracy per side: the mean of a volatility-weighted mean and the
//!   harmonic mean of its move accuracies.

mod divider;
mod game;

use crate::{chess::types::Color, score::ScoreKind};

pub use divider::{Division, Phase, divide, position_phase};
pub use game::{
    GameAnalysis, MoveAnalysis, SideAnalysis, Totals, analyse, move_advice, movetext, position_eval,
};

/// Centipawn evaluations are clamped to this (and a mate counts as it) in
/// every formula.
pub const CP_CEILING: i32 = 1000;

/// The evaluation Lichess assumes before the first move.
pub const INITIAL_CP: i32 = 15;

/// An evaluation from White's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Eval {
    /// Centipawns.
    Cp(i32),
    /// Mate in this many moves: positive when White mates, negative when
    /// Black does.
    Mate(i32),
}

impl Eval {
    /// The evaluation of a label's score (side to move's view) with `side`
    /// to move; `None` for a position already mated (it has no move to
    /// judge).
    pub fn from_score(score: i32, side: Color) -> Option<Eval> {
        let sign = if side == Color::White { 1 } else { -1 };
        match ScoreKind::from_score(score) {
            ScoreKind::Cp(cp) => Some(Eval::Cp(sign * cp)),
            ScoreKind::Mate(0) => None,
            ScoreKind::Mate(n) => Some(Eval::Mate(sign * n)),
        }
    }

    /// Centipawns clamped to ±[`CP_CEILING`], a mate counting as the
    /// ceiling on its side.
    pub fn ceiled_cp(self) -> i32 {
        match self {
            Eval::Cp(cp) => cp.clamp(-CP_CEILING, CP_CEILING),
            Eval::Mate(n) if n > 0 => CP_CEILING,
            Eval::Mate(_) => -CP_CEILING,
        }
    }

    /// White's Win%, 0 to 100 (a mate counts as the ceiling).
    pub fn win_percent(self) -> f64 {
        win_percent(self.ceiled_cp())
    }

    /// The evaluation as Lichess writes it in `[%eval]`: pawns with the
    /// fewest digits that give it back (`0.15`, `-0.2`, `1.0`), or `#3`,
    /// `#-3`.
    pub fn pgn(self) -> String {
        match self {
            // Lichess prints a 32-bit float's shortest form.
            Eval::Cp(cp) => format!("{:?}", cp as f32 / 100.0),
            Eval::Mate(n) => format!("#{n}"),
        }
    }

    /// The evaluation as Lichess writes it in a judgment's comment: pawns
    /// with two decimals (`0.26`, `-2.18`), or `Mate in 3`.
    pub fn comment(self) -> String {
        match self {
            Eval::Cp(cp) => format!("{:.2}", f64::from(cp) / 100.0),
            Eval::Mate(n) => format!("Mate in {}", n.abs()),
        }
    }
}

/// Winning chances of a centipawn score, -1 to 1, with no ceiling: the
/// judgments use them so.
pub fn winning_chances(cp: i32) -> f64 {
    let chances = 2.0 / (1.0 + (-0.00368208 * f64::from(cp)).exp()) - 1.0;
    chances.clamp(-1.0, 1.0)
}

/// Win% of a centipawn score, 0 to 100, the score clamped to
/// ±[`CP_CEILING`] first (as the accuracy formulas take it).
pub fn win_percent(cp: i32) -> f64 {
    50.0 + 50.0 * winning_chances(cp.clamp(-CP_CEILING, CP_CEILING))
}

/// How bad a move was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Judgment {
    /// The mover's winning chances dropped by 0.1 or more (`?!`, NAG 6).
    Inaccuracy,
    /// By 0.2 or more (`?`, NAG 2).
    Mistake,
    /// By 0.3 or more (`??`, NAG 4).
    Blunder,
}

impl Judgment {
    /// The name Lichess gives it.
    pub fn name(self) -> &'static str {
        match self {
            Judgment::Inaccuracy => "Inaccuracy",
            Judgment::Mistake => "Mistake",
            Judgment::Blunder => "Blunder",
        }
    }

    /// The move suffix: `?!`, `?`, `??`.
    pub fn glyph(self) -> &'static str {
        match self {
            Judgment::Inaccuracy => "?!",
            Judgment::Mistake => "?",
            Judgment::Blunder => "??",
        }
    }

    /// The numeric annotation glyph: 6, 2, 4.
    pub fn nag(self) -> u8 {
        match self {
            Judgment::Inaccuracy => 6,
            Judgment::Mistake => 2,
            Judgment::Blunder => 4,
        }
    }
}

/// What a forced mate did, when a move changed one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum MateChange {
    /// The mover now gets mated by force.
    Created,
    /// The mover had a forced mate and let it go.
    Lost,
}

impl MateChange {
    /// Lichess's words for it.
    pub fn description(self) -> &'static str {
        match self {
            MateChange::Created => "Checkmate is now unavoidable",
            MateChange::Lost => "Lost forced checkmate sequence",
        }
    }
}

/// A judged move: how bad, and whether a forced mate appeared or was lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Advice {
    /// The judgment.
    pub judgment: Judgment,
    /// Set when the judgment comes from a mate created or lost.
    pub mate: Option<MateChange>,
}

/// The judgment of a move by `mover` from evaluation `before` to `after`
/// (both White's view), Lichess's rules: first the mate rules (a forced
/// mate against the mover appears, or one for the mover is lost), then the
/// drop in the mover's winning chances when both are centipawns (not
/// clamped: Lichess's judgments take the engine's centipawns as they are).
pub fn judge(before: Eval, after: Eval, mover: Color) -> Option<Advice> {
    let sign = if mover == Color::White { 1 } else { -1 };
    // The mover's view.
    let (before, after) = (flip(before, sign), flip(after, sign));
    let mate = match (before, after) {
        (Eval::Cp(_), Eval::Mate(n)) if n < 0 => Some(MateChange::Created),
        (Eval::Mate(p), Eval::Cp(_)) if p > 0 => Some(MateChange::Lost),
        (Eval::Mate(p), Eval::Mate(n)) if p > 0 && n < 0 => Some(MateChange::Lost),
        _ => None,
    };
    let cp = |e: Eval| match e {
        Eval::Cp(cp) => cp,
        Eval::Mate(_) => 0,
    };
    if let Some(change) = mate {
        let judgment = match change {
            MateChange::Created if cp(before) < -999 => Judgment::Inaccuracy,
            MateChange::Created if cp(before) < -700 => Judgment::Mistake,
            MateChange::Lost if cp(after) > 999 => Judgment::Inaccuracy,
            MateChange::Lost if cp(after) > 700 => Judgment::Mistake,
            _ => Judgment::Blunder,
        };
        return Some(Advice { judgment, mate: Some(change) });
    }
    let (Eval::Cp(b), Eval::Cp(a)) = (before, after) else { return None };
    let drop = winning_chances(b) - winning_chances(a);
    let judgment = if drop >= 0.3 {
        Judgment::Blunder
    } else if drop >= 0.2 {
        Judgment::Mistake
    } else if drop >= 0.1 {
        Judgment::Inaccuracy
    } else {
        return None;
    };
    Some(Advice { judgment, mate: None })
}

fn flip(e: Eval, sign: i32) -> Eval {
    match e {
        Eval::Cp(cp) => Eval::Cp(sign * cp),
        Eval::Mate(n) => Eval::Mate(sign * n),
    }
}

/// The accuracy of a move that takes the mover's Win% from `before` to
/// `after`, 0 to 100 (100 when it does not drop).
pub fn move_accuracy(before: f64, after: f64) -> f64 {
    if after >= before {
        return 100.0;
    }
    let drop = before - after;
    let raw = 103.1668100711649 * (-0.04354415386753951 * drop).exp() - 3.166924740191411;
    // Lichess adds one point for the uncertainty of the evaluation.
    (raw + 1.0).clamp(0.0, 100.0)
}

/// Population standard deviation.
fn standard_deviation(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64).sqrt()
}

/// Each move's accuracy and weight in the game accuracy, as Lichess
/// computes them, from White's centipawns after each move (`cps[0]` after
/// the first move, made by `first`), the position before the first move
/// assumed at [`INITIAL_CP`]. The weights are the standard deviations of
/// Win% over windows of `clamp(moves / 10, 2, 8)` positions, clamped to
/// [0.5, 12]: a move in a volatile stretch counts more.
pub fn weighted_accuracies(first: Color, cps: &[i32]) -> Vec<(Color, f64, f64)> {
    let wins: Vec<f64> =
        std::iter::once(INITIAL_CP).chain(cps.iter().copied()).map(win_percent).collect();
    let window = (cps.len() / 10).clamp(2, 8);
    let mut weights = Vec::with_capacity(wins.len());
    // The first windows repeat the opening one, so that every move has a
    // weight; a game shorter than a window has the one window of it all.
    let head = &wins[..window.min(wins.len())];
    for _ in 0..window.min(wins.len()).saturating_sub(2) {
        weights.push(standard_deviation(head));
    }
    if wins.len() < window {
        weights.push(standard_deviation(&wins));
    } else {
        weights.extend(wins.windows(window).map(standard_deviation));
    }
    wins.windows(2)
        .zip(&weights)
        .enumerate()
        .map(|(i, (pair, weight))| {
            let mover = if i % 2 == 0 { first } else { !first };
            let (before, after) = match mover {
                Color::White => (pair[0], pair[1]),
                Color::Black => (100.0 - pair[0], 100.0 - pair[1]),
            };
            (mover, move_accuracy(before, after), weight.clamp(0.5, 12.0))
        })
        .collect()
}

/// The accuracy of a set of moves given as (accuracy, weight): the mean of
/// their weighted mean and their harmonic mean (each accuracy counted as
/// at least 1 there). `None` for no move.
pub fn combined_accuracy(moves: &[(f64, f64)]) -> Option<f64> {
    if moves.is_empty() {
        return None;
    }
    let weighted =
        moves.iter().map(|(a, w)| a * w).sum::<f64>() / moves.iter().map(|(_, w)| w).sum::<f64>();
    let harmonic = moves.len() as f64 / moves.iter().map(|(a, _)| 1.0 / a.max(1.0)).sum::<f64>();
    Some((weighted + harmonic) / 2.0)
}

/// Each side's game accuracy (White, Black), as Lichess computes it: see
/// [`weighted_accuracies`] and [`combined_accuracy`].
pub fn game_accuracy(first: Color, cps: &[i32]) -> [Option<f64>; 2] {
    let moves = weighted_accuracies(first, cps);
    [Color::White, Color::Black].map(|side| {
        let mine: Vec<(f64, f64)> =
            moves.iter().filter(|m| m.0 == side).map(|&(_, a, w)| (a, w)).collect();
        combined_accuracy(&mine)
    })
}

/// Each side's average centipawn loss, as Lichess computes it, from White's
/// evaluations after each move (`None` where there is none), the position
/// before the first move at [`INITIAL_CP`]: the mean over the side's moves
/// of how much the move lowered its own evaluation (never below 0, both
/// evaluations clamped to ±[`CP_CEILING`], a mate counting as the ceiling),
/// rounded to whole centipawns. A move with an evaluation missing before or
/// after it is left out. `None` for a side with no such move.
pub fn acpl(first: Color, evals: &[Option<Eval>]) -> [Option<i32>; 2] {
    let losses = centipawn_losses(first, evals);
    [Color::White, Color::Black].map(|side| {
        let mine: Vec<Option<i32>> = losses.iter().filter(|l| l.0 == side).map(|l| l.1).collect();
        mean_loss(&mine)
    })
}

/// Each move's centipawn loss for [`acpl`]: (mover, loss), the loss `None`
/// where an evaluation is missing.
pub fn centipawn_losses(first: Color, evals: &[Option<Eval>]) -> Vec<(Color, Option<i32>)> {
    let mut before = Some(INITIAL_CP);
    evals
        .iter()
        .enumerate()
        .map(|(i, &e)| {
            let mover = if i % 2 == 0 { first } else { !first };
            let after = e.map(Eval::ceiled_cp);
            let loss = before.zip(after).map(|(b, a)| {
                let loss = if mover == Color::White { b - a } else { a - b };
                loss.max(0)
            });
            before = after;
            (mover, loss)
        })
        .collect()
}

/// The mean of the losses that are known, rounded half up; `None` for
/// none.
pub fn mean_loss(losses: &[Option<i32>]) -> Option<i32> {
    let known: Vec<i32> = losses.iter().flatten().copied().collect();
    (!known.is_empty()).then(|| {
        let mean = f64::from(known.iter().sum::<i32>()) / known.len() as f64;
        (mean + 0.5).floor() as i32
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An accuracy expected, with its tolerance.
    type Expected = (f64, f64);

    /// Each side's game accuracy from White's centipawns after each move.
    fn accuracy(first: Color, cps: &[i32]) -> Option<(f64, f64)> {
        match game_accuracy(first, cps) {
            [Some(w), Some(b)] => Some((w, b)),
            _ => None,
        }
    }

    fn close(value: f64, expected: f64, delta: f64) -> bool {
        (value - expected).abs() <= delta
    }

    /// lila's AccuracyPercentTest, every case: (White's cps, White's
    /// expected accuracy and tolerance, Black's).
    #[test]
    fn game_accuracy_as_lichess_tests_it_white_first() {
        let repeat = |pair: [i32; 2], n: usize| -> Vec<i32> { pair.repeat(n) };
        let mut twenty_and_white_blunder = vec![15; 20];
        twenty_and_white_blunder.push(-900);
        let mut twenty_one_and_black_blunder = vec![15; 21];
        twenty_one_and_black_blunder.push(900);
        let cases: Vec<(&str, Vec<i32>, Expected, Expected)> = vec![
            ("two good moves", vec![15, 15], (100.0, 1.0), (100.0, 1.0)),
            ("white blunders on first move", vec![-900, -900], (10.0, 5.0), (100.0, 1.0)),
            ("black blunders on first move", vec![15, 900], (100.0, 1.0), (10.0, 5.0)),
            ("both blunder on first move", vec![-900, 0], (10.0, 5.0), (10.0, 5.0)),
            ("20 perfect moves", vec![15; 20], (100.0, 1.0), (100.0, 1.0)),
            (
                "20 perfect moves and a white blunder",
                twenty_and_white_blunder,
                (50.0, 5.0),
                (100.0, 1.0),
            ),
            (
                "21 perfect moves and a black blunder",
                twenty_one_and_black_blunder,
                (100.0, 1.0),
                (50.0, 5.0),
            ),
            (
                "5 average moves (65 cpl) on each side",
                repeat([-50, 15], 5),
                (76.0, 8.0),
                (76.0, 8.0),
            ),
            (
                "50 average moves (65 cpl) on each side",
                repeat([-50, 15], 50),
                (76.0, 8.0),
                (76.0, 8.0),
            ),
            (
                "50 mediocre moves (150 cpl) on each side",
                repeat([-135, 15], 50),
                (54.0, 8.0),
                (54.0, 8.0),
            ),
            (
                "50 terrible moves (500 cpl) on each side",
                repeat([-435, 15], 50),
                (20.0, 8.0),
                (20.0, 8.0),
            ),
        ];
        assert_eq!(accuracy(Color::White, &[]), None, "empty game");
        assert_eq!(accuracy(Color::White, &[15]), None, "single move");
        for (name, cps, (w, wd), (b, bd)) in cases {
            let (white, black) = accuracy(Color::White, &cps).expect(name);
            assert!(close(white, w, wd), "{name}: White {white:.2}, expected {w} ± {wd}");
            assert!(close(black, b, bd), "{name}: Black {black:.2}, expected {b} ± {bd}");
        }
    }

    /// The same test's second half: Black moves first.
    #[test]
    fn game_accuracy_as_lichess_tests_it_black_first() {
        let cases: [(&str, [i32; 2], Expected, Expected); 4] = [
            ("two good moves", [15, 15], (100.0, 1.0), (100.0, 1.0)),
            ("black blunders on first move", [900, 900], (100.0, 1.0), (10.0, 5.0)),
            ("white blunders on first move", [15, -900], (10.0, 5.0), (100.0, 1.0)),
            ("both blunder on first move", [900, 0], (10.0, 5.0), (10.0, 5.0)),
        ];
        assert_eq!(accuracy(Color::Black, &[]), None, "empty game");
        assert_eq!(accuracy(Color::Black, &[15]), None, "single move");
        for (name, cps, (w, wd), (b, bd)) in cases {
            let (white, black) = accuracy(Color::Black, &cps).expect(name);
            assert!(close(white, w, wd), "{name}: White {white:.2}, expected {w} ± {wd}");
            assert!(close(black, b, bd), "{name}: Black {black:.2}, expected {b} ± {bd}");
        }
    }

    #[test]
    fn move_accuracy_follows_the_fitted_curve() {
        // No drop, or a gain: 100.
        assert_eq!(move_accuracy(50.0, 50.0), 100.0);
        assert_eq!(move_accuracy(40.0, 60.0), 100.0);
        // Values of lila's formula computed apart (Python's math.exp).
        for (drop, expected) in [
            (5.0, 80.815_299_920_414_36),
            (10.0, 64.579_828_453_720_67),
            (20.0, 41.016_818_741_417_126),
            (40.0, 15.909_002_002_130_041),
            (60.0, 5.399_328_234_910_814),
            (80.0, 1.000_170_640_274_321),
        ] {
            let a = move_accuracy(100.0, 100.0 - drop);
            assert!(close(a, expected, 1e-9), "drop {drop}: {a}");
        }
        // Clamped at 0 for the largest drops.
        assert_eq!(move_accuracy(100.0, 0.0), 0.0);
    }

    #[test]
    fn win_percent_is_clamped_at_the_ceiling_and_symmetric() {
        assert!(close(win_percent(0), 50.0, 1e-12));
        assert_eq!(win_percent(1000), win_percent(5000));
        assert!(close(win_percent(300) + win_percent(-300), 100.0, 1e-9));
        // 2 / (1 + e^-3.68208) - 1 = 0.9509...
        assert!(close(win_percent(1000), 50.0 + 50.0 * 0.950_9, 0.01));
        assert_eq!(Eval::Mate(3).win_percent(), win_percent(1000));
        assert_eq!(Eval::Mate(-1).win_percent(), win_percent(-1000));
    }

    /// Lichess's judgment thresholds, worked out from its formula: from an
    /// equal position the mover's winning chances drop by 0.1 at -54.5
    /// centipawns, by 0.2 at -110.1, by 0.3 at -168.1.
    #[test]
    fn judgments_start_where_the_winning_chances_drop_enough() {
        let j = |before: i32, after: i32, mover: Color| {
            judge(Eval::Cp(before), Eval::Cp(after), mover).map(|a| a.judgment)
        };
        assert_eq!(j(0, -54, Color::White), None);
        assert_eq!(j(0, -55, Color::White), Some(Judgment::Inaccuracy));
        assert_eq!(j(0, -110, Color::White), Some(Judgment::Inaccuracy));
        assert_eq!(j(0, -111, Color::White), Some(Judgment::Mistake));
        assert_eq!(j(0, -168, Color::White), Some(Judgment::Mistake));
        assert_eq!(j(0, -169, Color::White), Some(Judgment::Blunder));
        // Black's view is the mirror.
        assert_eq!(j(0, 54, Color::Black), None);
        assert_eq!(j(0, 169, Color::Black), Some(Judgment::Blunder));
        // Gaining is never judged.
        assert_eq!(j(0, 500, Color::White), None);
        // No ceiling in the judgments: 3000 → 700 drops White's chances by
        // 0.14 (with the ceiling at 1000 it would be 0.12, the same
        // judgment), 3000 → 400 by 0.37 where the ceiling gives 0.34.
        assert_eq!(j(3000, 700, Color::White), Some(Judgment::Inaccuracy));
        assert_eq!(j(20000, 450, Color::White), Some(Judgment::Blunder));
        assert_eq!(j(1000, 450, Color::White), Some(Judgment::Mistake));
    }

    /// Lichess's mate rules: a mate against the mover appearing is a
    /// blunder unless the mover was already lost (-700: mistake, -1000:
    /// inaccuracy); a mate for the mover lost likewise by the score left.
    #[test]
    fn mates_created_or_lost_are_judged_by_what_was_left() {
        let j = |before: Eval, after: Eval, mover: Color| judge(before, after, mover);
        let created = |judgment| Some(Advice { judgment, mate: Some(MateChange::Created) });
        let lost = |judgment| Some(Advice { judgment, mate: Some(MateChange::Lost) });
        // The Lichess export's "(0.00 → Mate in 1) Checkmate is now
        // unavoidable" (Black to move) and "(-10.35 → Mate in 6)" (White).
        assert_eq!(j(Eval::Cp(0), Eval::Mate(1), Color::Black), created(Judgment::Blunder));
        assert_eq!(j(Eval::Cp(-1035), Eval::Mate(-6), Color::White), created(Judgment::Inaccuracy));
        assert_eq!(j(Eval::Cp(-800), Eval::Mate(-6), Color::White), created(Judgment::Mistake));
        assert_eq!(j(Eval::Cp(-700), Eval::Mate(-6), Color::White), created(Judgment::Blunder));
        assert_eq!(j(Eval::Mate(3), Eval::Cp(1200), Color::White), lost(Judgment::Inaccuracy));
        assert_eq!(j(Eval::Mate(3), Eval::Cp(800), Color::White), lost(Judgment::Mistake));
        assert_eq!(j(Eval::Mate(3), Eval::Cp(700), Color::White), lost(Judgment::Blunder));
        assert_eq!(j(Eval::Mate(-3), Eval::Cp(-200), Color::Black), lost(Judgment::Blunder));
        // Mate for the mover turned into mate against: lost, cp counted 0.
        assert_eq!(j(Eval::Mate(2), Eval::Mate(-2), Color::White), lost(Judgment::Blunder));
        // A longer mate is not judged (Lichess's "not the best checkmate
        // sequence" has no judgment), nor a mate against the mover that
        // was already there.
        assert_eq!(j(Eval::Mate(2), Eval::Mate(5), Color::White), None);
        assert_eq!(j(Eval::Mate(-5), Eval::Mate(-2), Color::White), None);
    }

    #[test]
    fn acpl_counts_losses_from_the_initial_fifteen() {
        let cp = |v: i32| Some(Eval::Cp(v));
        // White: 15 → -50 loses 65; Black: -50 → 15 loses 65 too.
        assert_eq!(acpl(Color::White, &[cp(-50), cp(15), cp(-50), cp(15)]), [Some(65), Some(65)]);
        // Gains count 0; scores clamped to ±1000 and a mate counts as it.
        assert_eq!(acpl(Color::White, &[cp(-5000), Some(Eval::Mate(2))]), [Some(1015), Some(2000)]);
        assert_eq!(acpl(Color::White, &[cp(5000), Some(Eval::Mate(-2))]), [Some(0), Some(0)]);
        // A move with a missing evaluation before or after is left out.
        assert_eq!(acpl(Color::White, &[cp(15), None, cp(-85)]), [Some(0), None]);
        // Rounded half up: losses 1 and 2 → 1.5 → 2.
        assert_eq!(acpl(Color::White, &[cp(14), cp(14), cp(12)]), [Some(2), Some(0)]);
        assert_eq!(acpl(Color::White, &[]), [None, None]);
    }

    #[test]
    fn evaluations_are_written_as_lichess_writes_them() {
        assert_eq!(Eval::Cp(15).pgn(), "0.15");
        assert_eq!(Eval::Cp(0).pgn(), "0.0");
        assert_eq!(Eval::Cp(-20).pgn(), "-0.2");
        assert_eq!(Eval::Cp(-1035).pgn(), "-10.35");
        assert_eq!(Eval::Mate(-6).pgn(), "#-6");
        assert_eq!(Eval::Cp(0).comment(), "0.00");
        assert_eq!(Eval::Cp(-20).comment(), "-0.20");
        assert_eq!(Eval::Mate(-6).comment(), "Mate in 6");
    }
}
