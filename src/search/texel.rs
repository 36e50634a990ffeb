//! Texel tuning: fit the evaluation weights to game results.
//!
//! The evaluation is linear in its weights (material, piece-square values,
//! and every term of the hand-written evaluation), tapered by phase. For
//! each training position the tuner records how many of each feature it has
//! (White's minus Black's), its phase and endgame scale factor, and the
//! game's result; then it minimises the mean squared difference between the
//! result and `sigmoid(K * eval)` over all positions with Adam, `K` fitted
//! first so that the starting weights match the results best.
//!
//! The training positions come from [`crate::job::tune::collect`],
//! which reads them from games and scored positions; this module knows
//! nothing of files.
//!
//! `kibitz tune GAMES.pgn... --psqt src/chess/psqt_params.rs --weights
//! src/search/weights.rs` writes the new weights as Rust source; rebuilding
//! makes them the evaluation's. See `docs/TUNING.md`.

use std::fmt::Write as _;

use crate::{
    chess::{
        position::Position,
        psqt::{NUM_PARAMS, PARAMS},
        types::Color,
    },
    search::{
        hce::{self, EvalTables, NUM_TERMS, TERM_NAMES, Term, Trace},
        weights::WEIGHTS,
    },
};

/// Feature pairs (middlegame, endgame): 5 materials, 6 x 32 piece-square
/// values, then the evaluation terms.
pub const NUM_FEATURES: usize = 5 + 6 * 32 + NUM_TERMS;

const TERM_BASE: usize = 5 + 6 * 32;

/// One training position.
#[derive(Clone, Debug)]
pub struct Sample {
    /// (feature, count) pairs, White's minus Black's.
    pub features: Vec<(u16, i16)>,
    /// Phase in [0, 256].
    pub phase: i32,
    /// Endgame scale factor of the side the starting weights favour (of 64).
    pub scale: i32,
    /// 1, 0.5 or 0 for a White win, draw, Black win.
    pub result: f64,
}

struct Collect<'a>(&'a mut Vec<i32>);

impl Trace for Collect<'_> {
    fn add(&mut self, term: Term, count: i32) {
        self.0[TERM_BASE + term as usize] += count;
    }
}

/// The feature counts of `pos`.
pub fn features(pos: &Position, tables: &mut EvalTables) -> Vec<(u16, i16)> {
    let mut counts = vec![0i32; NUM_FEATURES];
    for sq in pos.occupied() {
        let Some(p) = pos.piece_on(sq) else { continue };
        let sign = if p.color() == Color::White { 1 } else { -1 };
        let role = p.role() as usize;
        let rel = sq.relative(p.color());
        let file = rel.file().to_usize();
        let half = if file < 4 { file } else { 7 - file };
        let idx = rel.rank().to_usize() * 4 + half;
        if role < 5 {
            counts[role] += sign;
        }
        counts[5 + role * 32 + idx] += sign;
    }
    hce::evaluate_traced(pos, tables, &mut Collect(&mut counts));
    counts
        .iter()
        .enumerate()
        .filter(|&(_, &c)| c != 0)
        .map(|(i, &c)| (i as u16, c.clamp(i16::MIN as i32, i16::MAX as i32) as i16))
        .collect()
}

/// The starting weights as (mg, eg) pairs in feature order.
pub fn current_weights() -> Vec<(f64, f64)> {
    let mut w = Vec::with_capacity(NUM_FEATURES);
    for r in 0..5 {
        w.push((f64::from(PARAMS[2 * r]), f64::from(PARAMS[2 * r + 1])));
    }
    for role in 0..6 {
        for idx in 0..32 {
            w.push((
                f64::from(PARAMS[10 + role * 64 + idx]),
                f64::from(PARAMS[10 + role * 64 + 32 + idx]),
            ));
        }
    }
    for s in WEIGHTS {
        w.push((f64::from(s.mg), f64::from(s.eg)));
    }
    w
}

/// White's evaluation of a sample under weights `w` (no tempo sign flip:
/// the tempo feature is signed already).
fn linear_eval(s: &Sample, w: &[(f64, f64)]) -> f64 {
    let (mut mg, mut eg) = (0.0, 0.0);
    for &(i, c) in &s.features {
        let (wm, we) = w[usize::from(i)];
        mg += wm * f64::from(c);
        eg += we * f64::from(c);
    }
    let phase = f64::from(s.phase) / 256.0;
    mg * phase + eg * f64::from(s.scale) / 64.0 * (1.0 - phase)
}

fn sigmoid(k: f64, e: f64) -> f64 {
    1.0 / (1.0 + (-k * e / 400.0).exp())
}

/// The win probability the tuner gives a score of `cp` centipawns (its
/// curve with `K` = 1): the target of a scored training position.
pub fn win_probability(cp: f64) -> f64 {
    sigmoid(1.0, cp)
}

fn loss(samples: &[Sample], w: &[(f64, f64)], k: f64) -> f64 {
    samples.iter().map(|s| (s.result - sigmoid(k, linear_eval(s, w))).powi(2)).sum::<f64>()
        / samples.len() as f64
}

/// Weight of the pull towards the starting weights (ridge regression): the
/// features overlap (a passed pawn on the seventh rank is also a pawn on
/// the seventh rank's square), and without it correlated weights drift
/// apart in opposite directions.
const REGULARISATION: f64 = 2e-7;

impl Sample {
    /// The sample of `pos` with target `result` (White's win probability);
    /// `start` (the starting weights) chooses the endgame scale kept.
    pub fn new(
        pos: &Position,
        tables: &mut EvalTables,
        start: &[(f64, f64)],
        result: f64,
    ) -> Sample {
        let phase = hce::phase(pos);
        let features = features(pos, tables);
        // The scale factor of the side the starting weights favour in the
        // endgame; the tuner keeps it fixed.
        let eg: f64 = features.iter().map(|&(i, c)| start[usize::from(i)].1 * f64::from(c)).sum();
        let strong = if eg >= 0.0 { Color::White } else { Color::Black };
        let scale = hce::endgame_scale(pos, strong);
        Sample { features, phase, scale, result }
    }
}

/// The `K` that best fits the starting weights to the results.
pub fn fit_k(samples: &[Sample], w: &[(f64, f64)]) -> f64 {
    let (mut lo, mut hi) = (0.1, 4.0);
    for _ in 0..40 {
        let m1 = lo + (hi - lo) / 3.0;
        let m2 = hi - (hi - lo) / 3.0;
        if loss(samples, w, m1) < loss(samples, w, m2) {
            hi = m2;
        } else {
            lo = m1;
        }
    }
    (lo + hi) / 2.0
}

/// Tunes with Adam for `epochs` full passes; returns the new weights and
/// the loss before and after.
pub fn tune(
    samples: &[Sample],
    k: f64,
    epochs: usize,
    mut report: impl FnMut(usize, f64),
) -> (Vec<(f64, f64)>, f64, f64) {
    let mut w = current_weights();
    let w0 = w.clone();
    let before = loss(samples, &w, k);
    let n = w.len();
    let (mut m, mut v) = (vec![(0.0, 0.0); n], vec![(0.0, 0.0); n]);
    let lr = 0.5;
    for epoch in 1..=epochs {
        let mut grad = vec![(0.0f64, 0.0f64); n];
        for s in samples {
            let e = linear_eval(s, &w);
            let p = sigmoid(k, e);
            // d/dE (r - p)^2 = -2 (r - p) p (1 - p) k / 400
            let g = -2.0 * (s.result - p) * p * (1.0 - p) * k / 400.0;
            let phase = f64::from(s.phase) / 256.0;
            let egf = f64::from(s.scale) / 64.0 * (1.0 - phase);
            for &(i, c) in &s.features {
                let c = f64::from(c);
                let gi = &mut grad[usize::from(i)];
                gi.0 += g * c * phase;
                gi.1 += g * c * egf;
            }
        }
        let scale = 1.0 / samples.len() as f64;
        let t = epoch as i32;
        for i in 0..n {
            if i < 5 {
                // Material stays as it is: the piece-square values carry it
                // too (a material feature is the sum of its role's square
                // features), so tuning both has no single answer; material
                // also sets the phase and the exchange values.
                continue;
            }
            let g0 = grad[i].0 * scale + 2.0 * REGULARISATION * (w[i].0 - w0[i].0);
            let g1 = grad[i].1 * scale + 2.0 * REGULARISATION * (w[i].1 - w0[i].1);
            adam(g0, &mut m[i].0, &mut v[i].0, &mut w[i].0, t, lr);
            adam(g1, &mut m[i].1, &mut v[i].1, &mut w[i].1, t, lr);
        }
        if epoch % 50 == 0 || epoch == epochs {
            report(epoch, loss(samples, &w, k));
        }
    }
    let after = loss(samples, &w, k);
    (w, before, after)
}

/// One Adam step on a weight.
fn adam(g: f64, m: &mut f64, v: &mut f64, w: &mut f64, t: i32, lr: f64) {
    const BETA1: f64 = 0.9;
    const BETA2: f64 = 0.999;
    *m = BETA1 * *m + (1.0 - BETA1) * g;
    *v = BETA2 * *v + (1.0 - BETA2) * g * g;
    let mh = *m / (1.0 - BETA1.powi(t));
    let vh = *v / (1.0 - BETA2.powi(t));
    *w -= lr * mh / (vh.sqrt() + 1e-8);
}

/// The piece-square parameters as Rust source (`src/chess/psqt_params.rs`).
pub fn psqt_source(w: &[(f64, f64)], note: &str) -> String {
    let mut p = [0i32; NUM_PARAMS];
    for r in 0..5 {
        p[2 * r] = w[r].0.round() as i32;
        p[2 * r + 1] = w[r].1.round() as i32;
    }
    for role in 0..6 {
        for idx in 0..32 {
            let (mg, eg) = w[5 + role * 32 + idx];
            p[10 + role * 64 + idx] = mg.round() as i32;
            p[10 + role * 64 + 32 + idx] = eg.round() as i32;
        }
    }
    let mut s = String::new();
    let _ =
        writeln!(s, "//! Material and piece-square parameters, written by `kibitz tune` ({note}).");
    let _ = writeln!(s, "//! Layout: see `psqt::PARAMS`.\n");
    let _ = writeln!(s, "/// The tuned parameters.");
    let _ = writeln!(s, "#[rustfmt::skip]");
    let _ = writeln!(s, "pub const TUNED: [i32; super::NUM_PARAMS] = [");
    let _ = writeln!(s, "    // material (mg, eg): pawn, knight, bishop, rook, queen");
    let _ =
        writeln!(s, "    {},", p[..10].iter().map(i32::to_string).collect::<Vec<_>>().join(", "));
    for (role, name) in ["pawn", "knight", "bishop", "rook", "queen", "king"].iter().enumerate() {
        for (phase, off) in [("middlegame", 0), ("endgame", 32)] {
            let _ = writeln!(s, "    // {name}, {phase}: ranks 1 to 8, files a to d");
            for rank in 0..8 {
                let row: Vec<String> = (0..4)
                    .map(|f| format!("{:>4}", p[10 + role * 64 + off + rank * 4 + f]))
                    .collect();
                let _ = writeln!(s, "    {},", row.join(","));
            }
        }
    }
    let _ = writeln!(s, "];");
    s
}

/// The term weights as Rust source (`src/search/weights.rs`).
pub fn weights_source(w: &[(f64, f64)], note: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "//! Weights of the evaluation terms ([`crate::search::hce::Term`]), in");
    let _ =
        writeln!(s, "//! centipawns, middlegame and endgame. Written by `kibitz tune` ({note});");
    let _ = writeln!(s, "//! see `docs/TUNING.md`.\n");
    let _ = writeln!(s, "use crate::{{chess::psqt::Tapered, search::hce::NUM_TERMS}};\n");
    let _ =
        writeln!(s, "const fn s(mg: i32, eg: i32) -> Tapered {{\n    Tapered::new(mg, eg)\n}}\n");
    let _ = writeln!(s, "/// One weight per term, in the order of `Term`.");
    let _ = writeln!(s, "#[rustfmt::skip]");
    let _ = writeln!(s, "pub const WEIGHTS: [Tapered; NUM_TERMS] = [");
    for (i, name) in TERM_NAMES.iter().enumerate() {
        let (mg, eg) = w[TERM_BASE + i];
        let _ = writeln!(s, "    s({}, {}), // {name}", mg.round() as i32, eg.round() as i32);
    }
    let _ = writeln!(s, "];");
    s
}
