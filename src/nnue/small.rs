//! kibitz's own nets: a perspective net, 768 inputs -> N hidden x 2 -> 1,
//! the output layer one of B (1 to 8) chosen by the number of pieces on
//! the board (output buckets, as bullet's material-count buckets), beside a
//! linear term of the same inputs (a piece-square table, as
//! Stockfish's nets carry one), trained by `kibitz train` and quantised to
//! integers as bullet does.
//!
//! The inputs are the pieces seen from one side: colour (the side's own or
//! the other's) x role x square, the board flipped vertically for Black,
//! 768 in all. Both sides' accumulators share one weight matrix; the side
//! to move's comes first into the output layer. The hidden layer's
//! activation is SCReLU (`clamp(x, 0, 1)^2`) or CReLU (`clamp(x, 0, 1)`).
//!
//! Integers: the first layer's weights and biases are `i16` scaled by
//! [`QA`], the output weights `i16` scaled by [`QB`], the output bias `i32`
//! scaled by `QA * QB`, one set per output bucket. The evaluation, side to move's view, in
//! centipawns, is
//!
//! ```text
//! SCReLU: (sum(clamp(acc, 0, QA)^2 * w) / QA + psqt + bias) * SCALE / (QA * QB)
//! CReLU:  (sum(clamp(acc, 0, QA)   * w)      + psqt + bias) * SCALE / (QA * QB)
//! ```
//!
//! where `psqt` is the side to move's sum of the linear term's `i32`
//! weights (scaled by `QA * QB`) over its inputs, minus the other side's.
//!
//! with the sums in wrapping 32-bit arithmetic, so a vectorised build and a
//! portable one compute the same integers whatever order they add in.
//!
//! The file (documented in docs/NET_FORMAT.md), little-endian:
//!
//! ```text
//! magic "KIBITZNN" | version u32 | inputs u32 | hidden u32 | activation u32
//! | QA i32 | QB i32 | SCALE i32 | description length u32 | buckets u32
//! | description | first-layer weights i16[768 * hidden] (row by input)
//! | biases i16[hidden] | output weights i16[buckets * 2 * hidden]
//! | output biases i32[buckets] | linear term i32[768] | SHA-256 of all before
//! ```
//!
//! Version 1 files (no `buckets` field, one output layer) still read.

use std::{path::Path, sync::Arc};

use sha2::{Digest, Sha256};

use crate::{
    chess::{
        position::Position,
        state::StateInfo,
        types::{Color, Piece, Square},
    },
    nnue::{NetError, NetInfo},
};

/// The file's first eight bytes.
pub const MAGIC: &[u8; 8] = b"KIBITZNN";
/// The format version this build writes (it reads 1 too).
pub const FORMAT_VERSION: u32 = 2;
/// The most output buckets a net has.
pub const MAX_BUCKETS: usize = 8;
/// Inputs per side: 2 colours x 6 roles x 64 squares.
pub const INPUTS: usize = 768;
/// The first layer's scale.
pub const QA: i32 = 255;
/// The output layer's scale.
pub const QB: i32 = 64;
/// Centipawns per unit of the net's output.
pub const SCALE: i32 = 400;
/// The hidden layer's width must be a multiple of this (whole vectors).
pub const HIDDEN_STEP: usize = 16;
/// The widest hidden layer a file may declare.
pub const MAX_HIDDEN: usize = 2048;
/// The longest description a file may carry.
pub const MAX_DESCRIPTION: usize = 4096;
/// The header's size in a version's files.
const fn header(version: u32) -> usize {
    if version == 1 { 8 + 4 * 8 } else { 8 + 4 * 9 }
}
const TRAILER: usize = 32;

/// The hidden layer's activation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Activation {
    /// `clamp(x, 0, 1)`.
    CReLU,
    /// `clamp(x, 0, 1)^2`.
    SCReLU,
}

impl Activation {
    /// The code the file stores.
    pub fn code(self) -> u32 {
        match self {
            Activation::CReLU => 0,
            Activation::SCReLU => 1,
        }
    }

    /// The activation of a stored code.
    pub fn from_code(code: u32) -> Option<Activation> {
        match code {
            0 => Some(Activation::CReLU),
            1 => Some(Activation::SCReLU),
            _ => None,
        }
    }

    /// Its name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Activation::CReLU => "CReLU",
            Activation::SCReLU => "SCReLU",
        }
    }
}

/// The input a piece on a square is, seen from `side`.
#[inline]
pub fn feature(side: Color, sq: Square, pc: Piece) -> usize {
    let theirs = usize::from(pc.color() != side);
    let sq = match side {
        Color::White => sq.to_usize(),
        Color::Black => sq.to_usize() ^ 56,
    };
    theirs * 384 + pc.role().to_usize() * 64 + sq
}

/// The output bucket of a position with `pieces` pieces (kings
/// included) in a net of `buckets` buckets: as many piece counts in each,
/// from 2 pieces up (bullet's material-count buckets).
#[inline]
pub fn output_bucket(pieces: usize, buckets: usize) -> usize {
    (pieces.saturating_sub(2) / 32usize.div_ceil(buckets)).min(buckets - 1)
}

/// [`output_bucket`] of every piece count from 0 to 32, for `buckets`
/// buckets: the evaluation looks the bucket up rather than divide.
pub fn bucket_table(buckets: usize) -> [u8; 33] {
    std::array::from_fn(|pieces| output_bucket(pieces, buckets) as u8)
}

/// A kibitz net, read and checked.
#[derive(Clone, Debug)]
pub struct SmallNet {
    hidden: usize,
    activation: Activation,
    /// The output bucket of each piece count (the bucket count is
    /// `out_biases.len()`).
    bucket_of: [u8; 33],
    /// The first layer's weights, `hidden` per input, input by input.
    pub ft_weights: Vec<i16>,
    /// The first layer's biases.
    pub ft_biases: Vec<i16>,
    /// The output weights, bucket by bucket: the side to move's `hidden`,
    /// then the other's.
    pub out_weights: Vec<i16>,
    /// The output biases, one a bucket, scaled by `QA * QB`.
    pub out_biases: Vec<i32>,
    /// The linear term: one weight per input, scaled by `QA * QB`.
    pub psqt: Vec<i32>,
    description: String,
    info: NetInfo,
}

impl SmallNet {
    /// A net from its integers; `description` and `name` say what it is.
    ///
    /// # Panics
    ///
    /// If the slices' lengths do not fit `hidden` and the biases' bucket
    /// count, `hidden` is not a multiple of [`HIDDEN_STEP`] up to
    /// [`MAX_HIDDEN`] or the buckets not 1 to [`MAX_BUCKETS`] (a programming
    /// error).
    pub fn new(
        activation: Activation,
        ft_weights: Vec<i16>,
        ft_biases: Vec<i16>,
        out_weights: Vec<i16>,
        out_biases: Vec<i32>,
        psqt: Vec<i32>,
        description: &str,
    ) -> SmallNet {
        let hidden = ft_biases.len();
        let buckets = out_biases.len();
        assert!(hidden > 0 && hidden.is_multiple_of(HIDDEN_STEP) && hidden <= MAX_HIDDEN);
        assert!((1..=MAX_BUCKETS).contains(&buckets));
        assert_eq!(ft_weights.len(), INPUTS * hidden);
        assert_eq!(out_weights.len(), buckets * 2 * hidden);
        assert_eq!(psqt.len(), INPUTS);
        let mut net = SmallNet {
            hidden,
            activation,
            bucket_of: bucket_table(buckets),
            ft_weights,
            ft_biases,
            out_weights,
            out_biases,
            psqt,
            description: description.chars().take(MAX_DESCRIPTION / 4).collect(),
            info: NetInfo { name: String::new(), sha256: String::new() },
        };
        let bytes = net.to_bytes();
        net.info = NetInfo { name: "(in memory)".into(), sha256: sha256_hex(&bytes) };
        net
    }

    /// A net of width `hidden` with weights from a seeded generator: not
    /// trained, but every part non-trivial (tests and fuzzing write it).
    pub fn synthetic(hidden: usize, activation: Activation, seed: u64) -> SmallNet {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = |range: i32| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 33) as i32 % (2 * range + 1) - range) as i16
        };
        let ft_weights = (0..INPUTS * hidden).map(|_| next(40)).collect();
        let ft_biases = (0..hidden).map(|_| next(60)).collect();
        let out_weights = (0..2 * hidden).map(|_| next(100)).collect();
        let psqt = (0..INPUTS).map(|_| i32::from(next(3000))).collect();
        SmallNet::new(
            activation,
            ft_weights,
            ft_biases,
            out_weights,
            vec![1234],
            psqt,
            "synthetic net",
        )
    }

    /// As [`SmallNet::synthetic`], with `buckets` output buckets.
    pub fn synthetic_bucketed(
        hidden: usize,
        activation: Activation,
        buckets: usize,
        seed: u64,
    ) -> SmallNet {
        let one = SmallNet::synthetic(hidden, activation, seed);
        let mut out_weights = Vec::with_capacity(buckets * 2 * hidden);
        for b in 0..buckets {
            // Each bucket its own weights: the first's, rotated.
            let mut w = one.out_weights.clone();
            w.rotate_left(b * 3 % (2 * hidden));
            out_weights.extend(w);
        }
        let out_biases = (0..buckets as i32).map(|b| 1234 - 700 * b).collect();
        SmallNet::new(
            activation,
            one.ft_weights,
            one.ft_biases,
            out_weights,
            out_biases,
            one.psqt,
            "synthetic net",
        )
    }

    /// The hidden layer's width per side.
    pub fn hidden(&self) -> usize {
        self.hidden
    }

    /// The hidden layer's activation.
    pub fn activation(&self) -> Activation {
        self.activation
    }

    /// The description the net carries.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The file's name and SHA-256.
    pub fn info(&self) -> &NetInfo {
        &self.info
    }

    /// The output buckets.
    pub fn buckets(&self) -> usize {
        self.out_biases.len()
    }

    /// The architecture in words: `768->128x2->1 SCReLU`, with
    /// `, 8 output buckets` when there are several.
    pub fn architecture(&self) -> String {
        let buckets = if self.buckets() > 1 {
            format!(", {} output buckets", self.buckets())
        } else {
            String::new()
        };
        format!("{INPUTS}->{}x2->1 {}{buckets}", self.hidden, self.activation.name())
    }

    /// Whether `bytes` start as a kibitz net does.
    pub fn is_kibitz_net(bytes: &[u8]) -> bool {
        bytes.starts_with(MAGIC)
    }

    /// Reads and checks the net in `path`.
    ///
    /// # Errors
    ///
    /// A [`NetError`] naming the file.
    pub fn load(path: &Path) -> Result<SmallNet, NetError> {
        let (bytes, file, name) = crate::nnue::net::read_net_file(path)?;
        SmallNet::from_bytes(&bytes, &file, name)
    }

    /// Reads and checks a net held in memory; `file` names it in errors,
    /// `name` in [`NetInfo`].
    ///
    /// # Errors
    ///
    /// A [`NetError`]: not a kibitz net, another version, an architecture
    /// this build does not know, a file cut short or too long, or a
    /// checksum that does not match its bytes.
    pub fn from_bytes(bytes: &[u8], file: &str, name: String) -> Result<SmallNet, NetError> {
        let invalid = |reason: String| NetError::Invalid { file: file.to_string(), reason };
        if bytes.is_empty() {
            return Err(NetError::Empty { file: file.to_string() });
        }
        if !SmallNet::is_kibitz_net(bytes) {
            return Err(invalid("not a kibitz net (no KIBITZNN magic)".into()));
        }
        let short = || {
            invalid(format!("the kibitz net is cut short inside its header: {} bytes", bytes.len()))
        };
        if bytes.len() < 12 {
            return Err(short());
        }
        let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        let version = u32_at(8);
        if version != 1 && version != FORMAT_VERSION {
            return Err(invalid(format!(
                "kibitz net format version {version}; this build reads versions 1 and \
                 {FORMAT_VERSION}"
            )));
        }
        let header = header(version);
        if bytes.len() < header {
            return Err(short());
        }
        let buckets = if version == 1 { 1 } else { u32_at(40) as usize };
        if !(1..=MAX_BUCKETS).contains(&buckets) {
            return Err(invalid(format!("{buckets} output buckets: 1 to {MAX_BUCKETS}")));
        }
        let inputs = u32_at(12) as usize;
        let hidden = u32_at(16) as usize;
        let activation = Activation::from_code(u32_at(20))
            .ok_or_else(|| invalid(format!("unknown activation code {}", u32_at(20))))?;
        let (qa, qb, scale) = (u32_at(24) as i32, u32_at(28) as i32, u32_at(32) as i32);
        if inputs != INPUTS {
            return Err(invalid(format!("{inputs} inputs; this build knows {INPUTS}")));
        }
        if hidden == 0 || !hidden.is_multiple_of(HIDDEN_STEP) || hidden > MAX_HIDDEN {
            return Err(invalid(format!(
                "hidden width {hidden}: must be a multiple of {HIDDEN_STEP} up to {MAX_HIDDEN}"
            )));
        }
        if (qa, qb, scale) != (QA, QB, SCALE) {
            return Err(invalid(format!(
                "scales QA {qa}, QB {qb}, SCALE {scale}; this build uses {QA}, {QB}, {SCALE}"
            )));
        }
        let length = u32_at(36) as usize;
        if length > MAX_DESCRIPTION {
            return Err(invalid(format!(
                "a description of {length} bytes (at most {MAX_DESCRIPTION})"
            )));
        }
        let expected = file_size(version, hidden, buckets, length);
        if bytes.len() != expected {
            let (size, how) =
                (bytes.len(), if bytes.len() < expected { "cut short" } else { "too long" });
            return Err(invalid(format!(
                "the kibitz net is {how}: {size} bytes, a {INPUTS}->{hidden}x2->1 net of \
                 {buckets} output bucket{} with this description has {expected}",
                if buckets == 1 { "" } else { "s" }
            )));
        }
        let body = &bytes[..expected - TRAILER];
        if Sha256::digest(body)[..] != bytes[expected - TRAILER..] {
            return Err(invalid("checksum mismatch: the file was changed or damaged".into()));
        }
        let description = String::from_utf8_lossy(&bytes[header..header + length]).into_owned();
        let mut at = header + length;
        let mut i16s = |n: usize| -> Vec<i16> {
            let v = bytes[at..at + 2 * n]
                .chunks_exact(2)
                .map(|c| i16::from_le_bytes([c[0], c[1]]))
                .collect();
            at += 2 * n;
            v
        };
        let ft_weights = i16s(INPUTS * hidden);
        let ft_biases = i16s(hidden);
        let out_weights = i16s(buckets * 2 * hidden);
        if let Some(w) = out_weights.iter().find(|w| !(-128..=127).contains(*w)) {
            return Err(invalid(format!(
                "an output weight of {w}: this format keeps them within -128..=127"
            )));
        }
        let i32_at = |at: usize| i32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        let out_biases = (0..buckets).map(|k| i32_at(at + 4 * k)).collect();
        let at = at + 4 * buckets;
        let psqt = (0..INPUTS).map(|k| i32_at(at + 4 * k)).collect();
        Ok(SmallNet {
            hidden,
            activation,
            bucket_of: bucket_table(buckets),
            ft_weights,
            ft_biases,
            out_weights,
            out_biases,
            psqt,
            description,
            info: NetInfo { name, sha256: sha256_hex(bytes) },
        })
    }

    /// The file's bytes: what [`SmallNet::from_bytes`] reads back.
    pub fn to_bytes(&self) -> Vec<u8> {
        let size = file_size(FORMAT_VERSION, self.hidden, self.buckets(), self.description.len());
        let mut out = Vec::with_capacity(size);
        out.extend_from_slice(MAGIC);
        for v in [
            FORMAT_VERSION,
            INPUTS as u32,
            self.hidden as u32,
            self.activation.code(),
            QA as u32,
            QB as u32,
            SCALE as u32,
            self.description.len() as u32,
            self.buckets() as u32,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(self.description.as_bytes());
        for v in self.ft_weights.iter().chain(&self.ft_biases).chain(&self.out_weights) {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for v in self.out_biases.iter().chain(&self.psqt) {
            out.extend_from_slice(&v.to_le_bytes());
        }
        let digest = Sha256::digest(&out);
        out.extend_from_slice(&digest);
        out
    }

    /// The accumulator of `side` for `pos`, from scratch; the side's sum
    /// of the linear term.
    pub fn refresh(&self, pos: &Position, side: Color, acc: &mut [i16]) -> i32 {
        acc.copy_from_slice(&self.ft_biases);
        let mut psqt = 0i32;
        for sq in pos.occupied() {
            if let Some(pc) = pos.piece_on(sq) {
                let f = feature(side, sq, pc);
                add_row(acc, self.row(f));
                psqt = psqt.wrapping_add(self.psqt[f]);
            }
        }
        psqt
    }

    /// Row `f` of the first layer.
    #[inline]
    fn row(&self, f: usize) -> &[i16] {
        &self.ft_weights[f * self.hidden..(f + 1) * self.hidden]
    }

    /// The evaluation in centipawns from the accumulators of the side to
    /// move (`us`) and of the other side (`them`), the difference of their
    /// sums of the linear term, and the number of pieces on the board (which
    /// output bucket).
    #[inline]
    pub fn output(&self, us: &[i16], them: &[i16], psqt: i32, pieces: usize) -> i32 {
        let b = usize::from(self.bucket_of[pieces.min(32)]);
        let h = self.hidden;
        let (wu, wt) = self.out_weights[2 * h * b..2 * h * (b + 1)].split_at(h);
        let sum = match self.activation {
            Activation::SCReLU => screlu_dot(us, wu).wrapping_add(screlu_dot(them, wt)) / QA,
            Activation::CReLU => crelu_dot(us, wu).wrapping_add(crelu_dot(them, wt)),
        };
        // i64: the bias and the scale could overflow 32 bits together.
        let sum = i64::from(sum) + i64::from(psqt) + i64::from(self.out_biases[b]);
        (sum * i64::from(SCALE) / i64::from(QA * QB)) as i32
    }

    /// The evaluation of `pos` from scratch, side to move's view, in
    /// centipawns.
    pub fn evaluate(&self, pos: &Position) -> i32 {
        let mut w = vec![0i16; self.hidden];
        let mut b = vec![0i16; self.hidden];
        let pw = self.refresh(pos, Color::White, &mut w);
        let pb = self.refresh(pos, Color::Black, &mut b);
        let pieces = pos.occupied().count() as usize;
        match pos.side_to_move() {
            Color::White => self.output(&w, &b, pw.wrapping_sub(pb), pieces),
            Color::Black => self.output(&b, &w, pb.wrapping_sub(pw), pieces),
        }
    }
}

fn file_size(version: u32, hidden: usize, buckets: usize, description: usize) -> usize {
    header(version)
        + description
        + 2 * (INPUTS * hidden + hidden + buckets * 2 * hidden)
        + 4 * buckets
        + 4 * INPUTS
        + TRAILER
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

// The loops below are written so the compiler vectorises them (AVX-512,
// AVX2 or SSE2, whatever the build targets); wrapping arithmetic makes every
// build's integers the same.

#[inline]
fn add_row(acc: &mut [i16], row: &[i16]) {
    for (a, &w) in acc.iter_mut().zip(row) {
        *a = a.wrapping_add(w);
    }
}

#[inline]
fn sub_row(acc: &mut [i16], row: &[i16]) {
    for (a, &w) in acc.iter_mut().zip(row) {
        *a = a.wrapping_sub(w);
    }
}

/// `sum(c * wrap16(c * w))` over the accumulator, `c = clamp(acc, 0, QA)`,
/// in wrapping 32-bit arithmetic: `c * w` is exact in 16 bits because the
/// reader refuses output weights outside `-128..=127`. AVX-512 and AVX2
/// compute it with `madd` (pairs of 16-bit products summed into 32 bits),
/// the portable path one lane at a time: the same integers.
#[inline]
fn screlu_dot(acc: &[i16], w: &[i16]) -> i32 {
    #[cfg(all(target_arch = "x86_64", target_feature = "avx512bw"))]
    {
        // Safety: the build targets AVX-512BW; the slices have equal
        // lengths, multiples of 32 (HIDDEN_STEP * 2 per side is checked
        // when the net is read: hidden is a multiple of 16, and 32 is
        // handled by the remainder loop below).
        unsafe { screlu_dot_avx512(acc, w) }
    }
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2", not(target_feature = "avx512bw")))]
    {
        // Safety: the build targets AVX2; the slices have equal lengths,
        // multiples of 16.
        unsafe { screlu_dot_avx2(acc, w) }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
    {
        screlu_dot_portable(acc, w)
    }
}

#[inline]
fn screlu_dot_portable(acc: &[i16], w: &[i16]) -> i32 {
    acc.iter().zip(w).fold(0i32, |s, (&a, &w)| {
        let c = a.clamp(0, QA as i16);
        s.wrapping_add(i32::from(c) * i32::from(c.wrapping_mul(w)))
    })
}

#[cfg(all(target_arch = "x86_64", target_feature = "avx512bw"))]
#[inline]
unsafe fn screlu_dot_avx512(acc: &[i16], w: &[i16]) -> i32 {
    use std::arch::x86_64::*;
    let n = acc.len() / 32 * 32;
    // Safety: loads of 32 i16 within the slices' first `n` elements.
    let sum = unsafe {
        let (zero, qa) = (_mm512_setzero_si512(), _mm512_set1_epi16(QA as i16));
        let mut sum = _mm512_setzero_si512();
        for k in (0..n).step_by(32) {
            let a = _mm512_loadu_si512(acc.as_ptr().add(k).cast());
            let v = _mm512_loadu_si512(w.as_ptr().add(k).cast());
            let c = _mm512_min_epi16(_mm512_max_epi16(a, zero), qa);
            sum = _mm512_add_epi32(sum, _mm512_madd_epi16(c, _mm512_mullo_epi16(c, v)));
        }
        _mm512_reduce_add_epi32(sum)
    };
    sum.wrapping_add(screlu_dot_portable(&acc[n..], &w[n..]))
}

#[cfg(all(target_arch = "x86_64", target_feature = "avx2", not(target_feature = "avx512bw")))]
#[inline]
unsafe fn screlu_dot_avx2(acc: &[i16], w: &[i16]) -> i32 {
    use std::arch::x86_64::*;
    let n = acc.len() / 16 * 16;
    // Safety: loads of 16 i16 within the slices' first `n` elements.
    let sum = unsafe {
        let (zero, qa) = (_mm256_setzero_si256(), _mm256_set1_epi16(QA as i16));
        let mut sum = _mm256_setzero_si256();
        for k in (0..n).step_by(16) {
            let a = _mm256_loadu_si256(acc.as_ptr().add(k).cast());
            let v = _mm256_loadu_si256(w.as_ptr().add(k).cast());
            let c = _mm256_min_epi16(_mm256_max_epi16(a, zero), qa);
            sum = _mm256_add_epi32(sum, _mm256_madd_epi16(c, _mm256_mullo_epi16(c, v)));
        }
        let s = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0b01_00_11_10));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0b10_11_00_01));
        _mm_cvtsi128_si32(s)
    };
    sum.wrapping_add(screlu_dot_portable(&acc[n..], &w[n..]))
}

#[inline]
fn crelu_dot(acc: &[i16], w: &[i16]) -> i32 {
    let mut sum = [0i32; HIDDEN_STEP];
    for (a, w) in acc.chunks_exact(HIDDEN_STEP).zip(w.chunks_exact(HIDDEN_STEP)) {
        for k in 0..HIDDEN_STEP {
            let c = i32::from(a[k]).clamp(0, QA);
            sum[k] = sum[k].wrapping_add(c * i32::from(w[k]));
        }
    }
    sum.iter().fold(0i32, |s, &v| s.wrapping_add(v))
}

/// `dst = src + rows added - rows removed`, in one pass over the row.
#[inline]
fn apply_rows(dst: &mut [i16], src: &[i16], add: &[&[i16]], sub: &[&[i16]]) {
    match (add, sub) {
        ([a], [s]) => {
            for k in 0..dst.len() {
                dst[k] = src[k].wrapping_add(a[k]).wrapping_sub(s[k]);
            }
        }
        ([a], [s, t]) => {
            for k in 0..dst.len() {
                dst[k] = src[k].wrapping_add(a[k]).wrapping_sub(s[k]).wrapping_sub(t[k]);
            }
        }
        _ => {
            dst.copy_from_slice(src);
            for a in add {
                add_row(dst, a);
            }
            for s in sub {
                sub_row(dst, s);
            }
        }
    }
}

/// A thread's evaluator with a kibitz net: one pair of accumulators per
/// state of the position's stack, tagged with the state's key and brought up
/// to date from the nearest computed ancestor with the pieces each move
/// changed, as Stockfish's accumulator stack is (no king buckets here, so a
/// king move is one more changed piece, not a refresh).
pub struct SmallEval {
    net: Arc<SmallNet>,
    /// Per state: White's accumulator then Black's, `2 * hidden` values.
    values: Vec<i16>,
    /// Per state: White's and Black's sums of the linear term.
    psqt: Vec<[i32; 2]>,
    keys: Vec<Option<u64>>,
    add: Vec<usize>,
    sub: Vec<usize>,
    /// Updates that found their accumulators computed.
    pub hits: u64,
    /// Updates from an ancestor.
    pub steps: u64,
    /// Updates from scratch.
    pub refreshes: u64,
}

impl SmallEval {
    /// An evaluator with `net`.
    pub fn new(net: Arc<SmallNet>) -> SmallEval {
        SmallEval {
            net,
            values: Vec::new(),
            psqt: Vec::new(),
            keys: Vec::new(),
            add: Vec::with_capacity(32),
            sub: Vec::with_capacity(32),
            hits: 0,
            steps: 0,
            refreshes: 0,
        }
    }

    /// The net.
    pub fn network(&self) -> &Arc<SmallNet> {
        &self.net
    }

    /// The evaluation of `pos`, side to move's view, in centipawns.
    #[inline]
    pub fn evaluate(&mut self, pos: &Position) -> i32 {
        let top = self.update(pos);
        let n = self.net.hidden;
        let (w, b) = self.values[2 * n * top..2 * n * (top + 1)].split_at(n);
        let [pw, pb] = self.psqt[top];
        let pieces = pos.occupied().count() as usize;
        match pos.side_to_move() {
            Color::White => self.net.output(w, b, pw.wrapping_sub(pb), pieces),
            Color::Black => self.net.output(b, w, pb.wrapping_sub(pw), pieces),
        }
    }

    /// White's and Black's accumulators of `pos`, brought up to date, and
    /// their sums of the linear term.
    pub fn accumulators(&mut self, pos: &Position) -> (&[i16], &[i16], [i32; 2]) {
        let top = self.update(pos);
        let n = self.net.hidden;
        let (w, b) = self.values[2 * n * top..2 * n * (top + 1)].split_at(n);
        (w, b, self.psqt[top])
    }

    /// Brings the accumulators of `pos`'s current state up to date; its
    /// index in the stack.
    fn update(&mut self, pos: &Position) -> usize {
        let states = pos.states();
        let top = states.len() - 1;
        let n = 2 * self.net.hidden;
        if self.keys.len() <= top {
            self.keys.resize(top + 65, None);
            self.values.resize(self.keys.len() * n, 0);
            self.psqt.resize(self.keys.len(), [0; 2]);
        }
        if self.keys[top] == Some(states[top].key) {
            self.hits += 1;
            return top;
        }
        let budget = pos.occupied().count() as usize;
        let (mut cost, mut i) = (0, top);
        let found = loop {
            if i == 0 {
                break None;
            }
            cost += states[i].dirty.entries().len();
            if cost > budget {
                break None;
            }
            i -= 1;
            if self.keys[i] == Some(states[i].key) {
                break Some(i);
            }
        };
        match found {
            Some(from) => {
                self.steps += 1;
                self.jump(&states[from + 1..=top], from, top);
            }
            None => {
                self.refreshes += 1;
                let (w, b) = self.values[n * top..n * (top + 1)].split_at_mut(n / 2);
                self.psqt[top] = [
                    self.net.refresh(pos, Color::White, w),
                    self.net.refresh(pos, Color::Black, b),
                ];
            }
        }
        self.keys[top] = Some(states[top].key);
        top
    }

    /// Entry `top` from entry `from` and the pieces the moves of `between`
    /// changed.
    fn jump(&mut self, between: &[StateInfo], from: usize, top: usize) {
        let n = 2 * self.net.hidden;
        let h = self.net.hidden;
        let (before, after) = self.values.split_at_mut(n * top);
        let (src, dst) = (&before[n * from..n * (from + 1)], &mut after[..n]);
        let mut psqt = self.psqt[from];
        for (s, side) in [Color::White, Color::Black].into_iter().enumerate() {
            self.add.clear();
            self.sub.clear();
            for st in between {
                for e in st.dirty.entries() {
                    if let Some(sq) = e.from {
                        self.sub.push(feature(side, sq, e.piece));
                    }
                    if let Some(sq) = e.to {
                        self.add.push(feature(side, sq, e.piece));
                    }
                }
            }
            for &f in &self.add {
                psqt[s] = psqt[s].wrapping_add(self.net.psqt[f]);
            }
            for &f in &self.sub {
                psqt[s] = psqt[s].wrapping_sub(self.net.psqt[f]);
            }
            let net: &SmallNet = &self.net;
            fn rows<'a>(net: &'a SmallNet, fs: &[usize], out: &mut [&'a [i16]; 8]) -> usize {
                for (o, &f) in out.iter_mut().zip(fs) {
                    *o = net.row(f);
                }
                fs.len()
            }
            let (mut adds, mut subs): ([&[i16]; 8], [&[i16]; 8]) = ([&[]; 8], [&[]; 8]);
            let range = s * h..(s + 1) * h;
            if self.add.len() <= 8 && self.sub.len() <= 8 {
                let na = rows(net, &self.add, &mut adds);
                let ns = rows(net, &self.sub, &mut subs);
                apply_rows(&mut dst[range.clone()], &src[range], &adds[..na], &subs[..ns]);
            } else {
                let acc = &mut dst[range.clone()];
                acc.copy_from_slice(&src[range]);
                for &f in &self.add {
                    add_row(acc, net.row(f));
                }
                for &f in &self.sub {
                    sub_row(acc, net.row(f));
                }
            }
        }
        self.psqt[top] = psqt;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The build's kernel (AVX-512, AVX2 or portable) gives the integers of
    /// the portable one, at every width, on accumulators below 0, inside
    /// `0..=QA` and above it.
    #[test]
    fn the_vector_dot_equals_the_portable_dot() {
        let mut s = 0x2545_F491_4F6C_DD1Du64;
        let mut next = |range: i32| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 33) as i32 % (2 * range + 1) - range) as i16
        };
        for hidden in [16, 32, 48, 64, 128, 256, 2048] {
            for _ in 0..50 {
                let acc: Vec<i16> = (0..hidden).map(|_| next(600)).collect();
                let w: Vec<i16> = (0..hidden).map(|_| next(128).clamp(-128, 127)).collect();
                assert_eq!(screlu_dot(&acc, &w), screlu_dot_portable(&acc, &w), "width {hidden}");
            }
        }
    }

    /// Output buckets: 4 piece counts each from 2 pieces up with 8; a
    /// bucketed net round-trips and evaluates each bucket with its own
    /// layer; a version-1 file (one layer, no bucket field) still reads.
    #[test]
    fn output_buckets_and_version_one_files() {
        assert_eq!(output_bucket(2, 8), 0);
        assert_eq!(output_bucket(5, 8), 0);
        assert_eq!(output_bucket(6, 8), 1);
        assert_eq!(output_bucket(32, 8), 7);
        assert_eq!(output_bucket(32, 1), 0);
        assert_eq!(output_bucket(0, 8), 0);
        let net = SmallNet::synthetic_bucketed(32, Activation::SCReLU, 8, 4);
        let bytes = net.to_bytes();
        let back = SmallNet::from_bytes(&bytes, "b.nnue", "b".into()).unwrap();
        assert_eq!(back.to_bytes(), bytes);
        assert_eq!(back.architecture(), "768->32x2->1 SCReLU, 8 output buckets");
        let full = Position::startpos();
        let bare = Position::from_fen("4k3/8/8/8/8/8/8/4K2R w K - 0 1").unwrap();
        let one = SmallNet::synthetic(32, Activation::SCReLU, 4);
        // The last bucket's layer is the first's rotated: a full board
        // evaluates otherwise than one layer does; three pieces use the
        // first bucket, the one-layer net's own weights.
        assert_ne!(net.evaluate(&full), one.evaluate(&full));
        assert_eq!(net.evaluate(&bare), one.evaluate(&bare));
        // Version 1: the header without the bucket count.
        let one_bytes = one.to_bytes();
        let mut v1 = one_bytes[..8 + 4 * 8].to_vec();
        v1[8..12].copy_from_slice(&1u32.to_le_bytes());
        v1.extend_from_slice(&one_bytes[8 + 4 * 9..one_bytes.len() - TRAILER]);
        let digest = Sha256::digest(&v1);
        v1.extend_from_slice(&digest);
        let old = SmallNet::from_bytes(&v1, "v1.nnue", "v1".into()).unwrap();
        assert_eq!(old.buckets(), 1);
        assert_eq!(old.evaluate(&full), one.evaluate(&full));
        let mut bad = bytes.clone();
        bad[40] = 9;
        let err = SmallNet::from_bytes(&bad, "b.nnue", "b".into()).unwrap_err().to_string();
        assert!(err.contains("9 output buckets"), "{err}");
    }

    #[test]
    fn bytes_round_trip_and_every_fault_is_named() {
        let net = SmallNet::synthetic(32, Activation::SCReLU, 3);
        let bytes = net.to_bytes();
        let back = SmallNet::from_bytes(&bytes, "t.nnue", "t.nnue".into()).unwrap();
        assert_eq!(back.to_bytes(), bytes);
        assert_eq!(back.architecture(), "768->32x2->1 SCReLU");
        assert_eq!(back.info().sha256, net.info().sha256);
        let err = |b: &[u8]| SmallNet::from_bytes(b, "t.nnue", "t".into()).unwrap_err().to_string();
        assert!(err(&bytes[..bytes.len() - 1]).starts_with("t.nnue: the kibitz net is cut short"));
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(err(&longer).contains("is too long"));
        let mut flipped = bytes.clone();
        flipped[header(FORMAT_VERSION) + 100] ^= 1;
        assert!(err(&flipped).contains("checksum"), "{}", err(&flipped));
        let mut version = bytes.clone();
        version[8] = 9;
        assert!(err(&version).contains("version 9"));
        // An output weight outside -128..=127 (the checksum made right).
        let mut heavy = bytes.clone();
        let at = bytes.len() - 32 - 4 * INPUTS - 4 - 2;
        heavy[at..at + 2].copy_from_slice(&300i16.to_le_bytes());
        let body = heavy.len() - 32;
        let digest = Sha256::digest(&heavy[..body]);
        heavy[body..].copy_from_slice(&digest);
        assert!(err(&heavy).contains("an output weight of 300"), "{}", err(&heavy));
        let mut width = bytes.clone();
        width[16] = 33;
        assert!(err(&width).contains("hidden width 33"));
        assert!(err(b"KIBITZNN").contains("inside its header"));
        assert!(err(b"").contains("empty"));
        assert!(err(b"\x20\x2f\xf3\x7a....").contains("not a kibitz net"));
    }
}
