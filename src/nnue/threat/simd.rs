//! Stockfish 19's net's arithmetic, in portable code and in AVX2 and
//! AVX-512, chosen when the program starts by what the processor has
//! ([`Kernels::best`]), so one binary runs the fastest path each machine
//! offers. Every path gives the same integers: accumulator values add with
//! `i16` wrap-around in any order; the first layer's byte products fit in
//! `i16` pairs (inputs at most 127, weights at least -128: a pair is at
//! most 32,512, so AVX2's saturating `maddubs` never saturates); every sum
//! is an exact `i32`. Tests run each path the machine has on the same
//! inputs.

use crate::nnue::{
    L1, PSQT_BUCKETS, Row,
    threat::net::{L2, L3, Stack, ThreatNet},
};

/// A set of kernels.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kernels {
    /// Portable Rust (LLVM vectorizes it with what the build targets).
    Portable,
    /// AVX2.
    Avx2,
    /// AVX-512 (F and BW) for the accumulators, AVX2 for the layers.
    Avx512,
}

impl Kernels {
    /// The fastest kernels this processor runs; `KIBITZ_SIMD=portable`,
    /// `avx2` or `avx512` asks for one (never one the processor lacks).
    pub fn best() -> Kernels {
        static BEST: std::sync::OnceLock<Kernels> = std::sync::OnceLock::new();
        *BEST.get_or_init(|| {
            let have = Kernels::available();
            let wanted = match std::env::var("KIBITZ_SIMD").as_deref() {
                Ok("portable") => Some(Kernels::Portable),
                Ok("avx2") => Some(Kernels::Avx2),
                Ok("avx512") => Some(Kernels::Avx512),
                _ => None,
            };
            match wanted {
                Some(k) if have.contains(&k) => k,
                _ => *have.last().unwrap_or(&Kernels::Portable),
            }
        })
    }

    /// Every set this processor runs, slowest first.
    pub fn available() -> Vec<Kernels> {
        let mut v = vec![Kernels::Portable];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                v.push(Kernels::Avx2);
                if std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512bw")
                {
                    v.push(Kernels::Avx512);
                }
            }
        }
        v
    }

    /// The set's name, as figures quote it.
    pub fn name(self) -> &'static str {
        match self {
            Kernels::Portable => "portable",
            Kernels::Avx2 => "AVX2",
            Kernels::Avx512 => "AVX-512",
        }
    }
}

/// Rows to add to and take from one side's accumulator.
#[derive(Default, Clone, Debug)]
pub struct Changes {
    /// HalfKAv2_hm inputs added.
    pub psq_add: Vec<u32>,
    /// HalfKAv2_hm inputs removed.
    pub psq_sub: Vec<u32>,
    /// Threat and pawn pair inputs added.
    pub threat_add: Vec<u32>,
    /// Threat and pawn pair inputs removed.
    pub threat_sub: Vec<u32>,
}

impl Changes {
    /// Empties every list.
    pub fn clear(&mut self) {
        self.psq_add.clear();
        self.psq_sub.clear();
        self.threat_add.clear();
        self.threat_sub.clear();
    }
}

/// `dst = src + Σ added rows - Σ removed rows`, and the same for the PSQT
/// sums.
pub fn apply(
    k: Kernels,
    net: &ThreatNet,
    src: (&Row, &[i32; PSQT_BUCKETS]),
    dst: (&mut Row, &mut [i32; PSQT_BUCKETS]),
    c: &Changes,
) {
    let (src_row, src_psqt) = src;
    let (dst_row, dst_psqt) = dst;
    match k {
        #[cfg(target_arch = "x86_64")]
        // Safety: `Kernels::Avx2` and `Avx512` are only chosen when the
        // processor has those features (`Kernels::available`).
        Kernels::Avx2 => unsafe { x86::apply_avx2(net, src_row, dst_row, c) },
        #[cfg(target_arch = "x86_64")]
        // Safety: as above.
        Kernels::Avx512 => unsafe { x86::apply_avx512(net, src_row, dst_row, c) },
        _ => apply_portable(net, src_row, dst_row, c),
    }
    *dst_psqt = *src_psqt;
    for &i in &c.psq_add {
        add_psqt(dst_psqt, &net.psq_psqt[i as usize], 1);
    }
    for &i in &c.psq_sub {
        add_psqt(dst_psqt, &net.psq_psqt[i as usize], -1);
    }
    for &i in &c.threat_add {
        add_psqt(dst_psqt, &net.threat_psqt[i as usize], 1);
    }
    for &i in &c.threat_sub {
        add_psqt(dst_psqt, &net.threat_psqt[i as usize], -1);
    }
}

/// `dst += add - sub`, value by value (wrapping, as the accumulators are).
pub fn add_difference(k: Kernels, dst: &mut Row, add: &Row, sub: &Row) {
    match k {
        #[cfg(target_arch = "x86_64")]
        // Safety: `Kernels::Avx2` and `Avx512` are only chosen when the
        // processor has those features (`Kernels::available`); AVX-512
        // implies AVX2.
        Kernels::Avx2 | Kernels::Avx512 => unsafe { x86::add_difference_avx2(dst, add, sub) },
        _ => {
            for ((d, &a), &s) in dst.0.iter_mut().zip(&add.0).zip(&sub.0) {
                *d = d.wrapping_add(a.wrapping_sub(s));
            }
        }
    }
}

#[inline]
fn add_psqt(acc: &mut [i32; PSQT_BUCKETS], w: &[i32; PSQT_BUCKETS], sign: i32) {
    for (a, &w) in acc.iter_mut().zip(w) {
        *a = a.wrapping_add(sign.wrapping_mul(w));
    }
}

fn apply_portable(net: &ThreatNet, src: &Row, dst: &mut Row, c: &Changes) {
    dst.0.copy_from_slice(&src.0);
    let acc = &mut dst.0;
    for &i in &c.psq_add {
        for (a, &w) in acc.iter_mut().zip(&net.psq_weights[i as usize].0) {
            *a = a.wrapping_add(w);
        }
    }
    for &i in &c.psq_sub {
        for (a, &w) in acc.iter_mut().zip(&net.psq_weights[i as usize].0) {
            *a = a.wrapping_sub(w);
        }
    }
    for &i in &c.threat_add {
        for (a, &w) in acc.iter_mut().zip(&net.threat_weights[i as usize].0) {
            *a = a.wrapping_add(i16::from(w));
        }
    }
    for &i in &c.threat_sub {
        for (a, &w) in acc.iter_mut().zip(&net.threat_weights[i as usize].0) {
            *a = a.wrapping_sub(i16::from(w));
        }
    }
}

/// The feature transformer's output: for each side (the side to move
/// first), the products of its two halves' values clipped to 0..=255,
/// divided by 512 (at most 127).
pub fn transform(k: Kernels, us: &Row, them: &Row, out: &mut [u8; L1]) {
    match k {
        #[cfg(target_arch = "x86_64")]
        // Safety: AVX2 is present whenever these kernels are chosen.
        Kernels::Avx2 | Kernels::Avx512 => unsafe { x86::transform_avx2(us, them, out) },
        _ => transform_portable(us, them, out),
    }
}

fn transform_portable(us: &Row, them: &Row, out: &mut [u8; L1]) {
    for (half, row) in [us, them].into_iter().enumerate() {
        let (a, b) = row.0.split_at(L1 / 2);
        for (j, (&x, &y)) in a.iter().zip(b).enumerate() {
            let x = i32::from(x.clamp(0, 255));
            let y = i32::from(y.clamp(0, 255));
            out[half * L1 / 2 + j] = (x * y / 512) as u8;
        }
    }
}

/// The first hidden layer: 1024 inputs (most of them zero) to 32 outputs.
pub fn fc0(k: Kernels, input: &[u8; L1], stack: &Stack) -> [i32; L2] {
    match k {
        #[cfg(target_arch = "x86_64")]
        // Safety: AVX2 is present whenever these kernels are chosen.
        Kernels::Avx2 | Kernels::Avx512 => unsafe { x86::fc0_avx2(input, stack) },
        _ => fc0_portable(input, stack),
    }
}

fn fc0_portable(input: &[u8; L1], stack: &Stack) -> [i32; L2] {
    let mut out = stack.fc0_biases;
    for (j, block) in stack.fc0_blocks.iter().enumerate() {
        let x = &input[4 * j..4 * j + 4];
        if x == [0; 4] {
            continue;
        }
        for (o, acc) in out.iter_mut().enumerate() {
            let w = &block[4 * o..4 * o + 4];
            *acc += (0..4).map(|k| i32::from(x[k]) * i32::from(w[k])).sum::<i32>();
        }
    }
    out
}

/// Stockfish's squared clipped ReLU: `min(127, x² >> (2 * bits + 7))`.
#[inline]
pub fn sqr_clipped_relu(x: i32, bits: u32) -> u8 {
    ((i64::from(x) * i64::from(x)) >> (2 * bits + 7)).min(127) as u8
}

/// Stockfish's clipped ReLU: `clamp(x >> bits, 0, 127)`.
#[inline]
pub fn clipped_relu(x: i32, bits: u32) -> u8 {
    (x >> bits).clamp(0, 127) as u8
}

/// The layer stack's output for the transformed features `input`
/// (Stockfish's `NetworkArchitecture::propagate`), in the net's output
/// units (16 to an internal unit).
pub fn propagate(k: Kernels, input: &[u8; L1], stack: &Stack) -> i32 {
    let h0 = fc0(k, input, stack);
    // The output layer reads both activations of both hidden layers.
    let mut concat = [0u8; 2 * L2 + 2 * L3];
    for (o, &x) in h0.iter().enumerate() {
        concat[o] = sqr_clipped_relu(x, 7);
        concat[L2 + o] = clipped_relu(x, 7);
    }
    let mut h1 = stack.fc1_biases;
    let (first, rest) = concat.split_at_mut(2 * L2);
    let first: &[u8; 2 * L2] = (&*first).try_into().expect("2 * L2 bytes");
    fc1(k, first, stack, &mut h1);
    for (o, &x) in h1.iter().enumerate() {
        rest[o] = sqr_clipped_relu(x, 6);
        rest[L3 + o] = clipped_relu(x, 6);
    }
    let out = stack.fc2_bias + fc2(k, &concat, &stack.fc2_weights);
    // The first layer's last two outputs also pass straight to the output.
    let forward = out + h0[L2 - 2] - h0[L2 - 1];
    // 1.0 is 128 * 64 * 2 in the output's fixed point; Stockfish wants it
    // to be 600 * 16.
    (i64::from(forward) * 600 * 16 / (128 * 64 * 2)) as i32
}

/// The second layer: `h1[o] += input · fc1_weights[o]`.
fn fc1(k: Kernels, input: &[u8; 2 * L2], stack: &Stack, h1: &mut [i32; L3]) {
    match k {
        #[cfg(target_arch = "x86_64")]
        // Safety: AVX2 is present whenever these kernels are chosen.
        Kernels::Avx2 | Kernels::Avx512 => unsafe { x86::fc1_avx2(input, &stack.fc1_weights, h1) },
        _ => {
            for (acc, row) in h1.iter_mut().zip(&stack.fc1_weights) {
                *acc += dot(input, row);
            }
        }
    }
}

/// The output layer's dot product.
fn fc2(k: Kernels, input: &[u8; 2 * L2 + 2 * L3], w: &[i8; 2 * L2 + 2 * L3]) -> i32 {
    match k {
        #[cfg(target_arch = "x86_64")]
        // Safety: AVX2 is present whenever these kernels are chosen.
        Kernels::Avx2 | Kernels::Avx512 => unsafe { x86::fc2_avx2(input, w) },
        _ => dot(input, w),
    }
}

fn dot(x: &[u8], w: &[i8]) -> i32 {
    x.iter().zip(w).map(|(&x, &w)| i32::from(x) * i32::from(w)).sum()
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::*;

    /// Accumulator values per 256-bit register.
    const LANES: usize = 16;
    /// Registers per tile: a tile stays in registers while rows are added.
    const TILE: usize = 8;

    /// Asks for the cache lines of `bytes` bytes at `p`.
    #[inline(always)]
    fn prefetch(p: *const u8, bytes: usize) {
        for line in (0..bytes).step_by(64) {
            // Safety: a prefetch never faults, whatever the address.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(line).cast::<i8>()) };
        }
    }

    /// Asks for the part of every row `c` names that the tile after
    /// `tile` (of `regs` registers of `bytes` bytes) reads, while this one
    /// is summed: the rows are spread over 100 MB, and each tile reads
    /// only a slice of each.
    #[inline(always)]
    fn prefetch_tile(net: &ThreatNet, c: &Changes, tile: usize, regs: usize, bytes: usize) {
        let next = (tile + regs) * bytes;
        if next >= 2 * L1 {
            return;
        }
        for &i in c.psq_add.iter().chain(&c.psq_sub) {
            prefetch(
                net.psq_weights[i as usize].0.as_ptr().cast::<u8>().wrapping_add(next),
                regs * bytes,
            );
        }
        if next < L1 {
            for &i in c.threat_add.iter().chain(&c.threat_sub) {
                let p = net.threat_weights[i as usize].0.as_ptr().cast::<u8>();
                prefetch(p.wrapping_add(next / 2), regs * bytes / 2);
            }
        }
    }

    #[target_feature(enable = "avx2")]
    pub unsafe fn apply_avx2(net: &ThreatNet, src: &Row, dst: &mut Row, c: &Changes) {
        let s = src.0.as_ptr().cast::<__m256i>();
        let d = dst.0.as_mut_ptr().cast::<__m256i>();
        for tile in (0..L1 / LANES).step_by(TILE) {
            prefetch_tile(net, c, tile, TILE, 32);
            // Safety: rows are `L1` values aligned to 64 bytes, so register
            // `tile + k < L1 / LANES` is in bounds and aligned; threat rows
            // are `L1` bytes aligned to 64, read 16 bytes per register.
            unsafe {
                let mut r: [__m256i; TILE] =
                    std::array::from_fn(|k| _mm256_load_si256(s.add(tile + k)));
                for &i in &c.psq_add {
                    let w = net.psq_weights[i as usize].0.as_ptr().cast::<__m256i>();
                    for (k, reg) in r.iter_mut().enumerate() {
                        *reg = _mm256_add_epi16(*reg, _mm256_load_si256(w.add(tile + k)));
                    }
                }
                for &i in &c.psq_sub {
                    let w = net.psq_weights[i as usize].0.as_ptr().cast::<__m256i>();
                    for (k, reg) in r.iter_mut().enumerate() {
                        *reg = _mm256_sub_epi16(*reg, _mm256_load_si256(w.add(tile + k)));
                    }
                }
                for &i in &c.threat_add {
                    let w = net.threat_weights[i as usize].0.as_ptr().cast::<__m128i>();
                    for (k, reg) in r.iter_mut().enumerate() {
                        let x = _mm256_cvtepi8_epi16(_mm_load_si128(w.add(tile + k)));
                        *reg = _mm256_add_epi16(*reg, x);
                    }
                }
                for &i in &c.threat_sub {
                    let w = net.threat_weights[i as usize].0.as_ptr().cast::<__m128i>();
                    for (k, reg) in r.iter_mut().enumerate() {
                        let x = _mm256_cvtepi8_epi16(_mm_load_si128(w.add(tile + k)));
                        *reg = _mm256_sub_epi16(*reg, x);
                    }
                }
                for (k, reg) in r.iter().enumerate() {
                    _mm256_store_si256(d.add(tile + k), *reg);
                }
            }
        }
    }

    #[target_feature(enable = "avx512f,avx512bw")]
    pub unsafe fn apply_avx512(net: &ThreatNet, src: &Row, dst: &mut Row, c: &Changes) {
        const LANES: usize = 32;
        const TILE: usize = 16;
        let s = src.0.as_ptr().cast::<__m512i>();
        let d = dst.0.as_mut_ptr().cast::<__m512i>();
        for tile in (0..L1 / LANES).step_by(TILE) {
            // Safety: as in `apply_avx2`, with 64-byte registers: rows are
            // aligned to 64 bytes, threat rows read 32 bytes per register.
            unsafe {
                let mut r: [__m512i; TILE] =
                    std::array::from_fn(|k| _mm512_load_si512(s.add(tile + k)));
                for &i in &c.psq_add {
                    let w = net.psq_weights[i as usize].0.as_ptr().cast::<__m512i>();
                    for (k, reg) in r.iter_mut().enumerate() {
                        *reg = _mm512_add_epi16(*reg, _mm512_load_si512(w.add(tile + k)));
                    }
                }
                for &i in &c.psq_sub {
                    let w = net.psq_weights[i as usize].0.as_ptr().cast::<__m512i>();
                    for (k, reg) in r.iter_mut().enumerate() {
                        *reg = _mm512_sub_epi16(*reg, _mm512_load_si512(w.add(tile + k)));
                    }
                }
                for &i in &c.threat_add {
                    let w = net.threat_weights[i as usize].0.as_ptr().cast::<__m256i>();
                    for (k, reg) in r.iter_mut().enumerate() {
                        let x = _mm512_cvtepi8_epi16(_mm256_load_si256(w.add(tile + k)));
                        *reg = _mm512_add_epi16(*reg, x);
                    }
                }
                for &i in &c.threat_sub {
                    let w = net.threat_weights[i as usize].0.as_ptr().cast::<__m256i>();
                    for (k, reg) in r.iter_mut().enumerate() {
                        let x = _mm512_cvtepi8_epi16(_mm256_load_si256(w.add(tile + k)));
                        *reg = _mm512_sub_epi16(*reg, x);
                    }
                }
                for (k, reg) in r.iter().enumerate() {
                    _mm512_store_si512(d.add(tile + k), *reg);
                }
            }
        }
    }

    #[target_feature(enable = "avx2")]
    pub unsafe fn add_difference_avx2(dst: &mut Row, add: &Row, sub: &Row) {
        let d = dst.0.as_mut_ptr().cast::<__m256i>();
        let (a, s) = (add.0.as_ptr().cast::<__m256i>(), sub.0.as_ptr().cast::<__m256i>());
        for k in 0..L1 / LANES {
            // Safety: rows are `L1` values aligned to 64 bytes.
            unsafe {
                let diff =
                    _mm256_sub_epi16(_mm256_load_si256(a.add(k)), _mm256_load_si256(s.add(k)));
                _mm256_store_si256(d.add(k), _mm256_add_epi16(_mm256_load_si256(d.add(k)), diff));
            }
        }
    }

    #[target_feature(enable = "avx2")]
    pub unsafe fn transform_avx2(us: &Row, them: &Row, out: &mut [u8; L1]) {
        let zero = _mm256_setzero_si256();
        let max = _mm256_set1_epi16(255);
        for (half, row) in [us, them].into_iter().enumerate() {
            let a = row.0.as_ptr().cast::<__m256i>();
            let b = a.wrapping_add(L1 / 2 / LANES);
            let o = out.as_mut_ptr().wrapping_add(half * L1 / 2).cast::<__m256i>();
            for j in 0..L1 / 2 / (2 * LANES) {
                // Safety: each half of a row is `L1 / 2` aligned values,
                // read as registers `2j` and `2j + 1 < L1 / 2 / LANES`;
                // `out` has `L1 / 2` bytes at `half * L1 / 2`, written 32
                // at a time, unaligned.
                unsafe {
                    let x0 = _mm256_load_si256(a.add(2 * j));
                    let x1 = _mm256_load_si256(a.add(2 * j + 1));
                    let y0 = _mm256_load_si256(b.add(2 * j));
                    let y1 = _mm256_load_si256(b.add(2 * j + 1));
                    // x clipped to 0..=255 and shifted left 7; y clipped
                    // above only: a negative y makes a negative product,
                    // which the pack turns to 0, as clipping y would.
                    let x0 =
                        _mm256_slli_epi16(_mm256_max_epi16(_mm256_min_epi16(x0, max), zero), 7);
                    let x1 =
                        _mm256_slli_epi16(_mm256_max_epi16(_mm256_min_epi16(x1, max), zero), 7);
                    let p0 = _mm256_mulhi_epi16(x0, _mm256_min_epi16(y0, max));
                    let p1 = _mm256_mulhi_epi16(x1, _mm256_min_epi16(y1, max));
                    // The pack works within 128-bit lanes: put them back in
                    // order.
                    let packed =
                        _mm256_permute4x64_epi64(_mm256_packus_epi16(p0, p1), 0b11_01_10_00);
                    _mm256_storeu_si256(o.add(j), packed);
                }
            }
        }
    }

    /// The sums of `x`'s products with `w`, 64 bytes of each: 8 partial
    /// sums. A product pair is at most 2 x 127 x 127 (inputs are at most
    /// 127), so `maddubs` never saturates.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn dot64(x: [__m256i; 2], w: *const i8, ones: __m256i) -> __m256i {
        // Safety: the caller gives 64 readable bytes at `w`.
        let (w0, w1) = unsafe {
            (
                _mm256_loadu_si256(w.cast::<__m256i>()),
                _mm256_loadu_si256(w.add(32).cast::<__m256i>()),
            )
        };
        let a = _mm256_madd_epi16(_mm256_maddubs_epi16(x[0], w0), ones);
        let b = _mm256_madd_epi16(_mm256_maddubs_epi16(x[1], w1), ones);
        _mm256_add_epi32(a, b)
    }

    /// The 8 partial sums in each of `v`'s four registers summed: four
    /// totals, in order.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn hadd4(v: [__m256i; 4]) -> __m128i {
        let ab = _mm256_hadd_epi32(v[0], v[1]);
        let cd = _mm256_hadd_epi32(v[2], v[3]);
        let abcd = _mm256_hadd_epi32(ab, cd);
        _mm_add_epi32(_mm256_castsi256_si128(abcd), _mm256_extracti128_si256::<1>(abcd))
    }

    #[target_feature(enable = "avx2")]
    pub unsafe fn fc1_avx2(input: &[u8; 2 * L2], rows: &[[i8; 2 * L2]; L3], h1: &mut [i32; L3]) {
        let ones = _mm256_set1_epi16(1);
        let p = input.as_ptr().cast::<__m256i>();
        // Safety: `input` is 64 bytes, read as two registers, unaligned.
        let x = unsafe { [_mm256_loadu_si256(p), _mm256_loadu_si256(p.add(1))] };
        for o in (0..L3).step_by(4) {
            // Safety: each row is 64 bytes; `h1` has room for 4 i32 at `o`.
            unsafe {
                let v = [
                    dot64(x, rows[o].as_ptr(), ones),
                    dot64(x, rows[o + 1].as_ptr(), ones),
                    dot64(x, rows[o + 2].as_ptr(), ones),
                    dot64(x, rows[o + 3].as_ptr(), ones),
                ];
                let sums = hadd4(v);
                let dst = h1.as_mut_ptr().add(o).cast::<__m128i>();
                _mm_storeu_si128(dst, _mm_add_epi32(_mm_loadu_si128(dst), sums));
            }
        }
    }

    #[target_feature(enable = "avx2")]
    pub unsafe fn fc2_avx2(input: &[u8; 2 * L2 + 2 * L3], w: &[i8; 2 * L2 + 2 * L3]) -> i32 {
        let ones = _mm256_set1_epi16(1);
        let p = input.as_ptr().cast::<__m256i>();
        // Safety: both are 128 bytes, read 32 at a time, unaligned.
        unsafe {
            let lo = dot64([_mm256_loadu_si256(p), _mm256_loadu_si256(p.add(1))], w.as_ptr(), ones);
            let hi = dot64(
                [_mm256_loadu_si256(p.add(2)), _mm256_loadu_si256(p.add(3))],
                w.as_ptr().add(64),
                ones,
            );
            let zero = _mm256_setzero_si256();
            let sums = hadd4([_mm256_add_epi32(lo, hi), zero, zero, zero]);
            _mm_cvtsi128_si32(sums)
        }
    }

    #[target_feature(enable = "avx2")]
    pub unsafe fn fc0_avx2(input: &[u8; L1], stack: &Stack) -> [i32; L2] {
        // The non-zero 4-byte blocks of the input as a bit set, 8 blocks a
        // register: bytes are at most 127, so a block read as an i32 is
        // non-negative, and positive exactly when some byte is not zero.
        let mut bits = [0u64; L1 / 256];
        let inp = input.as_ptr().cast::<__m256i>();
        for j in 0..L1 / 32 {
            // Safety: `input` is `L1` bytes, read 32 at a time, unaligned.
            let v = unsafe { _mm256_loadu_si256(inp.add(j)) };
            let mask = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(
                v,
                _mm256_setzero_si256(),
            ))) as u8;
            bits[j / 8] |= u64::from(mask) << (8 * (j % 8));
        }
        // Two sets of sums, a block each in turn, so that the additions of
        // one block do not wait on the other's; integer sums, so the order
        // changes nothing.
        let ones = _mm256_set1_epi16(1);
        let mut acc = [[_mm256_setzero_si256(); L2 / 8]; 2];
        let blocks = stack.fc0_blocks.as_ptr().cast::<i8>();
        let words = input.as_ptr().cast::<i32>();
        let mut turn = 0;
        for (w, &set) in bits.iter().enumerate() {
            let mut set = set;
            while set != 0 {
                let j = w * 64 + set.trailing_zeros() as usize;
                set &= set - 1;
                // Safety: `j < L1 / 4`: the input has `L1 / 4` blocks of 4
                // bytes and the weights `L1 / 4` blocks of `4 * L2`, read
                // unaligned.
                let (x, col) = unsafe {
                    (
                        _mm256_set1_epi32(words.add(j).read_unaligned()),
                        blocks.add(j * 4 * L2).cast::<__m256i>(),
                    )
                };
                for (k, a) in acc[turn].iter_mut().enumerate() {
                    // Safety: as above: register `k < L2 / 8` of block `j`.
                    let wk = unsafe { _mm256_loadu_si256(col.add(k)) };
                    let pairs = _mm256_maddubs_epi16(x, wk);
                    *a = _mm256_add_epi32(*a, _mm256_madd_epi16(pairs, ones));
                }
                turn ^= 1;
            }
        }
        let mut out = stack.fc0_biases;
        let mut lanes = [0i32; L2];
        for (k, (&a, &b)) in acc[0].iter().zip(&acc[1]).enumerate() {
            let sum = _mm256_add_epi32(a, b);
            // Safety: `lanes` has room for `L2` i32, 8 per register.
            unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast::<__m256i>().add(k), sum) };
        }
        for (o, l) in out.iter_mut().zip(lanes) {
            *o = o.wrapping_add(l);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rng(seed: u64) -> impl FnMut() -> u64 {
        let mut s = seed | 1;
        move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        }
    }

    #[test]
    fn every_kernel_gives_the_portable_integers() {
        let net = ThreatNet::synthetic(5);
        let mut next = rng(9);
        let mut src = Row::ZERO;
        for v in &mut src.0 {
            // Values near the ends wrap, as they may in a real accumulator.
            *v = next() as i16;
        }
        let c = Changes {
            psq_add: (0..5).map(|_| (next() % 22_528) as u32).collect(),
            psq_sub: (0..3).map(|_| (next() % 22_528) as u32).collect(),
            threat_add: (0..40).map(|_| (next() % 64_368) as u32).collect(),
            threat_sub: (0..37).map(|_| (next() % 64_368) as u32).collect(),
        };
        let psqt = [7; PSQT_BUCKETS];
        let mut want = (Row::ZERO, [0; PSQT_BUCKETS]);
        apply(Kernels::Portable, &net, (&src, &psqt), (&mut want.0, &mut want.1), &c);
        let mut input = [0u8; L1];
        for (i, x) in input.iter_mut().enumerate() {
            // Sparse, as the transformed features are.
            *x = if next().is_multiple_of(3) { (next() % 128) as u8 } else { 0 };
            if i % 97 == 0 {
                *x = 127;
            }
        }
        let mut t_want = [0u8; L1];
        transform(Kernels::Portable, &src, &want.0, &mut t_want);
        let out_want = propagate(Kernels::Portable, &input, &net.stacks[3]);
        for k in Kernels::available() {
            let mut got = (Row::ZERO, [0; PSQT_BUCKETS]);
            apply(k, &net, (&src, &psqt), (&mut got.0, &mut got.1), &c);
            assert_eq!(got, want, "{k:?}");
            let mut t = [0u8; L1];
            transform(k, &src, &want.0, &mut t);
            assert_eq!(t, t_want, "{k:?}");
            assert_eq!(propagate(k, &input, &net.stacks[3]), out_want, "{k:?}");
        }
        eprintln!("kernels checked: {:?}", Kernels::available());
    }

    #[test]
    fn activations_as_stockfish_computes_them() {
        assert_eq!(sqr_clipped_relu(0, 7), 0);
        assert_eq!(sqr_clipped_relu(-2000, 7), ((2000 * 2000) >> 21) as u8);
        assert_eq!(sqr_clipped_relu(1 << 20, 7), 127);
        assert_eq!(clipped_relu(-5, 7), 0);
        assert_eq!(clipped_relu(300 << 7, 7), 127);
        assert_eq!(clipped_relu(1000, 6), 15);
    }
}
