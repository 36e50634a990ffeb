//! The net being trained, in 32-bit floats: the forward pass, the gradient
//! of the loss, AdamW, and the quantisation to a [`SmallNet`].
//!
//! The parameters live in one flat vector: the first layer's weights (768
//! rows of `hidden`), its biases, the output weights of each output bucket
//! (the side to move's `hidden`, then the other side's), the output biases
//! (one a bucket) and the linear term
//! (one weight per input: the side to move's inputs add theirs, the other
//! side's subtract theirs). The output `o` is
//! in units of [`SCALE`] centipawns; the prediction is `sigmoid(o)`, the
//! target `lambda * result + (1 - lambda) * sigmoid(score / SCALE)`, the loss
//! their squared difference (as bullet and nnue-pytorch train).
//!
//! The first layer is sparse: a position touches only the rows of its
//! pieces (about 30 per side), forward and backward.

use crate::nnue::small::{Activation, INPUTS, QA, QB, SCALE, SmallNet, bucket_table};

use super::data::{Entry, MAX_PIECES, Rng};

/// The largest first-layer weight or bias (the accumulator stays in 16
/// bits with 32 pieces at QA).
const FT_CLIP: f32 = 3.0;
/// The largest output weight: `QB * 1.98` rounds to at most 127.
const OUT_CLIP: f32 = 1.98;
/// The largest weight of the linear term (32 pieces of it stay far inside
/// 32 bits at QA * QB).
const PSQT_CLIP: f32 = 16.0;

/// The parameters of a net, and their layout.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// The hidden layer's width per side.
    pub hidden: usize,
    /// The activation.
    pub activation: Activation,
    /// Output buckets (by the number of pieces).
    pub buckets: usize,
    /// Every parameter (see the module's documentation).
    pub params: Vec<f32>,
}

impl Model {
    /// A net with weights drawn from `seed`: uniform in `±1/sqrt(fan in)`.
    pub fn new(hidden: usize, activation: Activation, buckets: usize, seed: u64) -> Model {
        let mut rng = Rng::derive(seed, &[5]);
        let n = Model::size(hidden, buckets);
        let mut params = vec![0f32; n];
        let ft = 1.0 / (32f32).sqrt();
        let out = 1.0 / (2.0 * hidden as f32).sqrt();
        for (i, p) in params.iter_mut().enumerate() {
            let range = if i < INPUTS * hidden {
                ft
            } else if i < (INPUTS + 1) * hidden {
                0.0
            } else if i < (INPUTS + 1 + 2 * buckets) * hidden {
                out
            } else {
                0.0
            };
            *p = (rng.unit() * 2.0 - 1.0) * range;
        }
        // The linear term starts as the pieces' usual values (in units of
        // 400 centipawns), half on the own side's input and half, negated,
        // on the other's: a piece counts its value for its side.
        const VALUES: [f32; 6] = [0.25, 0.75, 0.8, 1.25, 2.4, 0.0];
        let at = (INPUTS + 1 + 2 * buckets) * hidden + buckets;
        for (f, p) in params[at..].iter_mut().enumerate() {
            let (theirs, role) = (f / 384, (f % 384) / 64);
            *p = if theirs == 0 { VALUES[role] / 2.0 } else { -VALUES[role] / 2.0 };
        }
        Model { hidden, activation, buckets, params }
    }

    /// The number of parameters of a net of this width and these output
    /// buckets.
    pub fn size(hidden: usize, buckets: usize) -> usize {
        (INPUTS + 1 + 2 * buckets) * hidden + buckets + INPUTS
    }

    fn ft_bias_at(&self) -> usize {
        INPUTS * self.hidden
    }

    fn out_at(&self) -> usize {
        (INPUTS + 1) * self.hidden
    }

    fn out_bias_at(&self) -> usize {
        (INPUTS + 1 + 2 * self.buckets) * self.hidden
    }

    fn psqt_at(&self) -> usize {
        self.out_bias_at() + self.buckets
    }

    /// The loss of `entries` (mean), without gradients.
    pub fn loss(&self, entries: &[Entry], lambda: f32) -> f64 {
        self.loss_threaded(entries, lambda, 1)
    }

    /// The loss of `entries` (mean), on `threads` threads, each summing a
    /// contiguous part; the parts' sums are added in order.
    pub fn loss_threaded(&self, entries: &[Entry], lambda: f32, threads: usize) -> f64 {
        if entries.is_empty() {
            return 0.0;
        }
        let sum = |part: &[Entry]| -> f64 {
            let mut scratch = Scratch::new(self.hidden, self.buckets);
            part.iter().map(|e| f64::from(self.forward(e, lambda, &mut scratch).1)).sum()
        };
        let per = entries.len().div_ceil(threads.max(1));
        let total: f64 = std::thread::scope(|scope| {
            let handles: Vec<_> =
                entries.chunks(per).skip(1).map(|part| scope.spawn(move || sum(part))).collect();
            let first = sum(&entries[..per.min(entries.len())]);
            first + handles.into_iter().map(|h| h.join().expect("a loss thread")).sum::<f64>()
        });
        total / entries.len() as f64
    }

    /// The output (in units of SCALE centipawns) and the loss of one entry;
    /// leaves the accumulators and the features in `s`.
    #[inline]
    fn forward(&self, e: &Entry, lambda: f32, s: &mut Scratch) -> (f32, f32) {
        let h = self.hidden;
        s.pieces = e.features(&mut s.stm, &mut s.nstm);
        let bias = &self.params[self.ft_bias_at()..self.ft_bias_at() + h];
        s.acc[..h].copy_from_slice(bias);
        s.acc[h..].copy_from_slice(bias);
        let (us, them) = s.acc.split_at_mut(h);
        for k in 0..s.pieces {
            let (a, b) = (usize::from(s.stm[k]), usize::from(s.nstm[k]));
            add(us, &self.params[a * h..(a + 1) * h]);
            add(them, &self.params[b * h..(b + 1) * h]);
        }
        s.bucket = usize::from(s.bucket_of[s.pieces.min(32)]);
        let out_at = self.out_at() + 2 * h * s.bucket;
        let w = &self.params[out_at..out_at + 2 * h];
        let mut o = self.params[self.out_bias_at() + s.bucket];
        let psqt = &self.params[self.psqt_at()..];
        for k in 0..s.pieces {
            o += psqt[usize::from(s.stm[k])] - psqt[usize::from(s.nstm[k])];
        }
        // Sixteen running sums, added at the end: the loop vectorises (one
        // sum would be a chain of dependent scalar additions).
        let mut lanes = [0f32; 16];
        let pairs = s.acc.chunks_exact(16).zip(w.chunks_exact(16));
        match self.activation {
            Activation::SCReLU => {
                for (a, w) in pairs {
                    for k in 0..16 {
                        let c = a[k].clamp(0.0, 1.0);
                        lanes[k] += c * c * w[k];
                    }
                }
            }
            Activation::CReLU => {
                for (a, w) in pairs {
                    for k in 0..16 {
                        lanes[k] += a[k].clamp(0.0, 1.0) * w[k];
                    }
                }
            }
        }
        o += lanes.iter().sum::<f32>();
        let p = sigmoid(o);
        let t = target(e, lambda);
        (o, (p - t) * (p - t))
    }

    /// Adds the gradient of one entry's loss to `grad`; its loss.
    #[inline]
    fn backward(&self, e: &Entry, lambda: f32, s: &mut Scratch, grad: &mut [f32]) -> f32 {
        let h = self.hidden;
        let (o, loss) = self.forward(e, lambda, s);
        let p = sigmoid(o);
        let g = 2.0 * (p - target(e, lambda)) * p * (1.0 - p);
        grad[self.out_bias_at() + s.bucket] += g;
        let pa = self.psqt_at();
        for k in 0..s.pieces {
            grad[pa + usize::from(s.stm[k])] += g;
            grad[pa + usize::from(s.nstm[k])] -= g;
        }
        let out_at = self.out_at() + 2 * h * s.bucket;
        let w = &self.params[out_at..out_at + 2 * h];
        {
            let gw = &mut grad[out_at..out_at + 2 * h];
            match self.activation {
                Activation::SCReLU => {
                    for k in 0..2 * h {
                        let a = s.acc[k];
                        let c = a.clamp(0.0, 1.0);
                        gw[k] += g * c * c;
                        s.dacc[k] = if a > 0.0 && a < 1.0 { g * w[k] * 2.0 * a } else { 0.0 };
                    }
                }
                Activation::CReLU => {
                    for k in 0..2 * h {
                        let a = s.acc[k];
                        gw[k] += g * a.clamp(0.0, 1.0);
                        s.dacc[k] = if a > 0.0 && a < 1.0 { g * w[k] } else { 0.0 };
                    }
                }
            }
        }
        let (du, dt) = s.dacc.split_at(h);
        let fb = self.ft_bias_at();
        for k in 0..h {
            grad[fb + k] += du[k] + dt[k];
        }
        for k in 0..s.pieces {
            let (a, b) = (usize::from(s.stm[k]), usize::from(s.nstm[k]));
            add(&mut grad[a * h..(a + 1) * h], du);
            add(&mut grad[b * h..(b + 1) * h], dt);
        }
        loss
    }

    /// The gradient of `entries`' summed loss, added into `grad` (which the
    /// caller zeroes); the summed loss.
    pub fn gradient(&self, entries: &[Entry], lambda: f32, grad: &mut [f32]) -> f64 {
        let mut s = Scratch::new(self.hidden, self.buckets);
        let mut total = 0f64;
        for e in entries {
            total += f64::from(self.backward(e, lambda, &mut s, grad));
        }
        total
    }

    /// Clips the weights to what the integers can hold (first layer,
    /// output weights and linear term each to its own limit; the output
    /// biases are not clipped).
    pub fn clip(&mut self) {
        let (out_at, psqt_at) = (self.out_at(), self.psqt_at());
        let (ft, out) = self.params.split_at_mut(out_at);
        for p in ft {
            *p = p.clamp(-FT_CLIP, FT_CLIP);
        }
        let n = 2 * self.hidden * self.buckets;
        for p in &mut out[..n] {
            *p = p.clamp(-OUT_CLIP, OUT_CLIP);
        }
        for p in &mut out[psqt_at - out_at..] {
            *p = p.clamp(-PSQT_CLIP, PSQT_CLIP);
        }
    }

    /// The net in integers (as bullet quantises: QA for the first layer,
    /// QB for the output weights, QA * QB for the output bias).
    pub fn quantise(&self, description: &str) -> SmallNet {
        let q = |v: f32, scale: i32, lim: i32| {
            ((v * scale as f32).round() as i32).clamp(-lim, lim) as i16
        };
        let fb = self.ft_bias_at();
        let ft_weights = self.params[..fb].iter().map(|&v| q(v, QA, 32767)).collect();
        let ft_biases = self.params[fb..self.out_at()].iter().map(|&v| q(v, QA, 32767)).collect();
        let out_weights =
            self.params[self.out_at()..self.out_bias_at()].iter().map(|&v| q(v, QB, 127)).collect();
        let wide = |v: f32| (v * (QA * QB) as f32).round() as i32;
        let out_biases =
            self.params[self.out_bias_at()..self.psqt_at()].iter().map(|&v| wide(v)).collect();
        let psqt = self.params[self.psqt_at()..].iter().map(|&v| wide(v)).collect();
        SmallNet::new(
            self.activation,
            ft_weights,
            ft_biases,
            out_weights,
            out_biases,
            psqt,
            description,
        )
    }

    /// The evaluation of an entry in centipawns, side to move's view (the
    /// float net's).
    pub fn evaluate(&self, e: &Entry) -> f32 {
        let mut s = Scratch::new(self.hidden, self.buckets);
        self.forward(e, 0.0, &mut s).0 * SCALE as f32
    }
}

/// A thread's working memory.
struct Scratch {
    stm: [u16; MAX_PIECES],
    nstm: [u16; MAX_PIECES],
    pieces: usize,
    bucket: usize,
    bucket_of: [u8; 33],
    acc: Vec<f32>,
    dacc: Vec<f32>,
}

impl Scratch {
    fn new(hidden: usize, buckets: usize) -> Scratch {
        Scratch {
            stm: [0; MAX_PIECES],
            nstm: [0; MAX_PIECES],
            pieces: 0,
            bucket: 0,
            bucket_of: bucket_table(buckets),
            acc: vec![0.0; 2 * hidden],
            dacc: vec![0.0; 2 * hidden],
        }
    }
}

#[inline]
fn add(dst: &mut [f32], src: &[f32]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d += s;
    }
}

#[inline]
fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// What an entry is trained towards: the score's win probability blended
/// with the game's result (`lambda` of it; none when the result is unknown).
#[inline]
fn target(e: &Entry, lambda: f32) -> f32 {
    let score = sigmoid(f32::from(e.score()) / SCALE as f32);
    match e.result() {
        3 => score,
        r => lambda * f32::from(r) / 2.0 + (1.0 - lambda) * score,
    }
}

/// AdamW's state: the moments of every parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct AdamW {
    /// First moments.
    pub m: Vec<f32>,
    /// Second moments.
    pub v: Vec<f32>,
    /// Steps taken.
    pub t: u64,
}

/// AdamW's constants.
const BETA1: f32 = 0.9;
const BETA2: f32 = 0.999;
const EPSILON: f32 = 1e-8;

impl AdamW {
    /// Zero moments for `n` parameters.
    pub fn new(n: usize) -> AdamW {
        AdamW { m: vec![0.0; n], v: vec![0.0; n], t: 0 }
    }

    /// One step over `params` with the gradient `grad` (already averaged),
    /// learning rate `lr` and decoupled weight decay `decay`.
    pub fn step(&mut self, params: &mut [f32], grad: &[f32], lr: f32, decay: f32) {
        self.t += 1;
        let c1 = 1.0 - BETA1.powi(self.t.min(100_000) as i32);
        let c2 = 1.0 - BETA2.powi(self.t.min(100_000) as i32);
        let step = lr * c2.sqrt() / c1;
        for (((p, &g), m), v) in params.iter_mut().zip(grad).zip(&mut self.m).zip(&mut self.v) {
            *m = BETA1 * *m + (1.0 - BETA1) * g;
            *v = BETA2 * *v + (1.0 - BETA2) * g * g;
            *p -= lr * decay * *p + step * *m / (v.sqrt() + EPSILON);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::position::Position;

    fn entries() -> Vec<Entry> {
        let fens = [
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
            "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
            "8/8/4k3/8/2K5/8/3Q4/8 w - - 0 60",
            "8/8/4k3/8/2K5/8/3q4/8 w - - 0 60",
        ];
        let scores = [30, 20, 900, -900];
        fens.iter()
            .zip(scores)
            .map(|(f, s)| Entry::new(&Position::from_fen(f).unwrap(), s, 1))
            .collect()
    }

    /// The analytic gradient matches finite differences.
    #[test]
    fn gradient_matches_finite_differences() {
        for activation in [Activation::SCReLU, Activation::CReLU] {
            let model = Model::new(16, activation, 2, 7);
            let es = entries();
            let mut grad = vec![0f32; model.params.len()];
            model.gradient(&es, 0.3, &mut grad);
            let (_, s) = (0, es[2].features(&mut [0; 32], &mut [0; 32]));
            assert!(s > 0);
            let mut f1 = [0u16; 32];
            es[2].features(&mut f1, &mut [0; 32]);
            let probe = [
                usize::from(f1[0]) * 16 + 3,
                model.ft_bias_at() + 5,
                model.out_at() + 2,
                model.out_at() + 20,
                model.out_at() + 2 * 16 + 5,
                model.out_bias_at(),
                model.out_bias_at() + 1,
                model.psqt_at() + usize::from(f1[1]),
            ];
            for &i in &probe {
                let h = 1e-3f32;
                let mut up = model.clone();
                up.params[i] += h;
                let mut down = model.clone();
                down.params[i] -= h;
                let n = es.len() as f64;
                let numeric = (up.loss(&es, 0.3) - down.loss(&es, 0.3)) * n / (2.0 * f64::from(h));
                let analytic = f64::from(grad[i]);
                assert!(
                    (numeric - analytic).abs() <= 2e-3 + 0.05 * analytic.abs(),
                    "{activation:?} param {i}: numeric {numeric}, analytic {analytic}"
                );
            }
        }
    }

    /// The quantised net evaluates as the float net, within rounding.
    #[test]
    fn quantised_net_evaluates_as_the_float_net() {
        for activation in [Activation::SCReLU, Activation::CReLU] {
            let model = Model::new(32, activation, 4, 11);
            let net = model.quantise("test");
            for (e, fen) in entries().iter().zip([
                "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
                "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
                "8/8/4k3/8/2K5/8/3Q4/8 w - - 0 60",
                "8/8/4k3/8/2K5/8/3q4/8 w - - 0 60",
            ]) {
                let float = model.evaluate(e);
                let int = net.evaluate(&Position::from_fen(fen).unwrap());
                // Output weights in steps of 1/64: about 10 centipawns of
                // rounding over 64 activations.
                assert!(
                    (float - int as f32).abs() <= 20.0 + 0.02 * float.abs(),
                    "{activation:?} {fen}: float {float}, integer {int}"
                );
            }
        }
    }
}
