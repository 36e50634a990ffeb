//! The net's arithmetic, three times: in AVX-512 with VNNI and in AVX2
//! (each compiled where the build targets it: kibitz builds with
//! `target-cpu=native`) and in portable code (every build; LLVM vectorizes
//! it with what the target has, SSE2 on any x86-64). The functions at this
//! module's top level are the fastest the build has.
//!
//! Both give the same integers, as Stockfish's paths do: the accumulators
//! add and subtract `i16` with wrap-around; the first layer's products fit
//! in `i16` pairs (inputs are at most 126 after the feature transformer and
//! 127 after a clipped ReLU, weights at least -128, so a pair is at most
//! 32,512 in size and AVX2's saturating `maddubs` never saturates); every
//! sum is an exact `i32`. Tests run both on the same inputs.

use crate::nnue::{L1, L2, L2_INPUTS, L3, LayerStack, Row};

/// The portable kernels.
pub mod portable {
    use super::*;

    /// `acc += Σ weights[add] - Σ weights[sub]`, each `i16` wrapping.
    pub fn apply_in_place(acc: &mut Row, weights: &[Row], add: &[usize], sub: &[usize]) {
        for &i in add {
            for (a, w) in acc.0.iter_mut().zip(&weights[i].0) {
                *a = a.wrapping_add(*w);
            }
        }
        for &i in sub {
            for (a, w) in acc.0.iter_mut().zip(&weights[i].0) {
                *a = a.wrapping_sub(*w);
            }
        }
    }

    /// `dst = src + Σ weights[add] - Σ weights[sub]`.
    pub fn apply(dst: &mut Row, src: &Row, weights: &[Row], add: &[usize], sub: &[usize]) {
        dst.0.copy_from_slice(&src.0);
        apply_in_place(dst, weights, add, sub);
    }

    /// The feature transformer's output: for each side (the side to move
    /// first), the products of its two halves clipped to 0..=127, divided
    /// by 128.
    pub fn transform(us: &Row, them: &Row, out: &mut [u8; L1]) {
        for (half, row) in [us, them].into_iter().enumerate() {
            let (a, b) = row.0.split_at(L1 / 2);
            for (j, (&x, &y)) in a.iter().zip(b).enumerate() {
                let x = i32::from(x.clamp(0, 127));
                let y = i32::from(y.clamp(0, 127));
                out[half * L1 / 2 + j] = (x * y / 128) as u8;
            }
        }
    }

    /// The first hidden layer: 1024 inputs to 16 outputs.
    pub fn fc0(input: &[u8; L1], stack: &LayerStack) -> [i32; L2] {
        std::array::from_fn(|o| dot(input, &stack.fc0_weights[o]) + stack.fc0_biases[o])
    }

    /// The second hidden layer: 32 inputs to 32 outputs.
    pub fn fc1(input: &[u8; L2_INPUTS], stack: &LayerStack) -> [i32; L3] {
        std::array::from_fn(|o| dot(input, &stack.fc1_weights[o]) + stack.fc1_biases[o])
    }

    /// The output layer: 32 inputs to one output.
    pub fn fc2(input: &[u8; L2_INPUTS], stack: &LayerStack) -> i32 {
        dot(input, &stack.fc2_weights) + stack.fc2_bias
    }

    fn dot(input: &[u8], weights: &[i8]) -> i32 {
        input.iter().zip(weights).map(|(&x, &w)| i32::from(x) * i32::from(w)).sum()
    }
}

/// The AVX2 kernels.
#[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
pub mod avx2 {
    use std::arch::x86_64::*;

    use super::*;

    /// 256-bit registers per accumulator tile: 16 (of the 16 AVX2 has), so
    /// a tile of 256 values stays in registers while rows are added.
    const TILE_REGS: usize = 16;
    /// Registers per row.
    const ROW_REGS: usize = L1 / 16;

    /// See [`portable::apply_in_place`].
    pub fn apply_in_place(acc: &mut Row, weights: &[Row], add: &[usize], sub: &[usize]) {
        let dst = acc.0.as_mut_ptr().cast::<__m256i>();
        tiles(dst.cast_const(), dst, weights, add, sub);
    }

    /// See [`portable::apply`].
    pub fn apply(dst: &mut Row, src: &Row, weights: &[Row], add: &[usize], sub: &[usize]) {
        tiles(src.0.as_ptr().cast(), dst.0.as_mut_ptr().cast(), weights, add, sub);
    }

    /// `dst = src + Σ add - Σ sub` over a row, a tile at a time (`src` may
    /// be `dst`).
    fn tiles(
        src: *const __m256i,
        dst: *mut __m256i,
        weights: &[Row],
        add: &[usize],
        sub: &[usize],
    ) {
        for tile in (0..ROW_REGS).step_by(TILE_REGS) {
            // Safety: `src` and `dst` point at rows of `L1` i16, that is
            // `ROW_REGS` registers, aligned to 64 bytes (`Row` is
            // `align(64)`), and `tile + k < ROW_REGS`; the weight rows are
            // rows too. AVX2 is enabled at compile time (this module's cfg).
            unsafe {
                let mut r: [__m256i; TILE_REGS] =
                    std::array::from_fn(|k| _mm256_load_si256(src.add(tile + k)));
                for &i in add {
                    let w = weights[i].0.as_ptr().cast::<__m256i>();
                    for (k, reg) in r.iter_mut().enumerate() {
                        *reg = _mm256_add_epi16(*reg, _mm256_load_si256(w.add(tile + k)));
                    }
                }
                for &i in sub {
                    let w = weights[i].0.as_ptr().cast::<__m256i>();
                    for (k, reg) in r.iter_mut().enumerate() {
                        *reg = _mm256_sub_epi16(*reg, _mm256_load_si256(w.add(tile + k)));
                    }
                }
                for (k, reg) in r.iter().enumerate() {
                    _mm256_store_si256(dst.add(tile + k), *reg);
                }
            }
        }
    }

    /// See [`portable::transform`].
    pub fn transform(us: &Row, them: &Row, out: &mut [u8; L1]) {
        for (half, row) in [us, them].into_iter().enumerate() {
            // Safety: a row is `ROW_REGS` aligned registers: its halves are
            // `ROW_REGS / 2` each, read in pairs below (`2 * j + 1 <
            // ROW_REGS / 2`); `out` has room for `L1 / 2` bytes at `half *
            // L1 / 2`, written 32 at a time (unaligned stores). AVX2 is
            // enabled at compile time.
            unsafe {
                let in0 = row.0.as_ptr().cast::<__m256i>();
                let in1 = in0.add(ROW_REGS / 2);
                let dst = out.as_mut_ptr().add(half * L1 / 2).cast::<__m256i>();
                let zero = _mm256_setzero_si256();
                let top = _mm256_set1_epi16(127);
                let clip = |p: *const __m256i| {
                    _mm256_max_epi16(_mm256_min_epi16(_mm256_load_si256(p), top), zero)
                };
                for j in 0..ROW_REGS / 4 {
                    let pa = _mm256_mullo_epi16(clip(in0.add(2 * j)), clip(in1.add(2 * j)));
                    let pb = _mm256_mullo_epi16(clip(in0.add(2 * j + 1)), clip(in1.add(2 * j + 1)));
                    // Products are at most 127 * 127: shifted right by 7,
                    // they fit in a byte. The pack interleaves the two
                    // registers by 128-bit lane; the permutation puts them
                    // back in order.
                    let packed =
                        _mm256_packs_epi16(_mm256_srli_epi16(pa, 7), _mm256_srli_epi16(pb, 7));
                    _mm256_storeu_si256(
                        dst.add(j),
                        _mm256_permute4x64_epi64(packed, 0b11_01_10_00),
                    );
                }
            }
        }
    }

    /// For each byte, the positions of its set bits, in order (the rest
    /// zero): the offsets of the non-zero blocks among 8.
    static NONZERO_OFFSETS: [[u16; 8]; 256] = {
        let mut t = [[0u16; 8]; 256];
        let mut byte = 0;
        while byte < 256 {
            let (mut bit, mut k) = (0, 0);
            while bit < 8 {
                if byte & (1 << bit) != 0 {
                    t[byte][k] = bit as u16;
                    k += 1;
                }
                bit += 1;
            }
            byte += 1;
        }
        t
    };

    /// The horizontal sum of eight `i32`.
    #[inline(always)]
    fn hsum(v: __m256i) -> i32 {
        // Safety: register arithmetic only; AVX2 is enabled at compile time.
        unsafe {
            let s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
            let s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0b01_00_11_10));
            let s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0b10_11_00_01));
            _mm_cvtsi128_si32(s)
        }
    }

    /// `acc += Σ x * w` over 32 unsigned bytes and 32 signed bytes, as
    /// `i32` lanes (`maddubs` to `i16` pairs, which never saturate here, then
    /// `madd` by one to `i32`).
    #[inline(always)]
    fn dpbusd(acc: __m256i, x: __m256i, w: __m256i) -> __m256i {
        // Safety: register arithmetic only; AVX2 is enabled at compile time.
        unsafe {
            let pairs = _mm256_maddubs_epi16(x, w);
            _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)))
        }
    }

    /// See [`portable::fc0`]. Most inputs are zero (about 83% on real
    /// games, half of the 4-byte blocks wholly): only the blocks with a
    /// non-zero byte are multiplied, each by its 16 outputs' weights at
    /// once ([`LayerStack::fc0_blocks`]), so no horizontal sum is needed.
    pub fn fc0(input: &[u8; L1], stack: &LayerStack) -> [i32; L2] {
        // Room for a full write of 8 indices past the last block found.
        let mut blocks = [0u16; L1 / 4 + 8];
        let mut n = 0;
        // Safety: `input` is `L1` bytes, read 32 at a time for `c < L1 / 32`
        // (unaligned loads), and as `L1 / 4` 4-byte blocks below (`j` comes
        // from a block index `< L1 / 4`); `fc0_blocks[j]` is 64 bytes, read
        // in two 32-byte halves; `n + 8 <= L1 / 4 + 8` at every store of 8
        // indices. AVX2 is enabled at compile time.
        unsafe {
            let zero = _mm256_setzero_si256();
            let x = input.as_ptr().cast::<__m256i>();
            let eight = _mm_set1_epi16(8);
            let mut base = _mm_setzero_si128();
            for c in 0..L1 / 32 {
                let v = _mm256_loadu_si256(x.add(c));
                // A bit per 4-byte block that has a non-zero byte; the
                // indices of those blocks are written 8 at a time from a
                // table and the count moves by how many there are, without
                // a branch per block (a loop over the bits mispredicted
                // most of its exits).
                let zero_blocks = _mm256_cmpeq_epi32(v, zero);
                let bits = !_mm256_movemask_ps(_mm256_castsi256_ps(zero_blocks)) as usize & 0xFF;
                let offsets = _mm_loadu_si128(NONZERO_OFFSETS[bits].as_ptr().cast());
                _mm_storeu_si128(blocks.as_mut_ptr().add(n).cast(), _mm_add_epi16(base, offsets));
                n += bits.count_ones() as usize;
                base = _mm_add_epi16(base, eight);
            }
            let mut lo = _mm256_loadu_si256(stack.fc0_biases.as_ptr().cast());
            let mut hi = _mm256_loadu_si256(stack.fc0_biases.as_ptr().add(8).cast());
            let (mut lo2, mut hi2) = (zero, zero);
            let words = input.as_ptr().cast::<i32>();
            // Two blocks at a time into two pairs of sums, which keeps both
            // multipliers busy.
            let pairs = blocks[..n].chunks_exact(2);
            let rest = pairs.remainder();
            for pair in pairs {
                let (j, k) = (usize::from(pair[0]), usize::from(pair[1]));
                let xj = _mm256_set1_epi32(words.add(j).read_unaligned());
                let xk = _mm256_set1_epi32(words.add(k).read_unaligned());
                let wj = stack.fc0_blocks[j].as_ptr().cast::<__m256i>();
                let wk = stack.fc0_blocks[k].as_ptr().cast::<__m256i>();
                lo = dpbusd(lo, xj, _mm256_loadu_si256(wj));
                hi = dpbusd(hi, xj, _mm256_loadu_si256(wj.add(1)));
                lo2 = dpbusd(lo2, xk, _mm256_loadu_si256(wk));
                hi2 = dpbusd(hi2, xk, _mm256_loadu_si256(wk.add(1)));
            }
            for &j in rest {
                let j = usize::from(j);
                let xj = _mm256_set1_epi32(words.add(j).read_unaligned());
                let w = stack.fc0_blocks[j].as_ptr().cast::<__m256i>();
                lo = dpbusd(lo, xj, _mm256_loadu_si256(w));
                hi = dpbusd(hi, xj, _mm256_loadu_si256(w.add(1)));
            }
            let (lo, hi) = (_mm256_add_epi32(lo, lo2), _mm256_add_epi32(hi, hi2));
            let mut out = [0i32; L2];
            _mm256_storeu_si256(out.as_mut_ptr().cast(), lo);
            _mm256_storeu_si256(out.as_mut_ptr().add(8).cast(), hi);
            out
        }
    }

    /// See [`portable::fc1`]: a block of 4 inputs at a time times its 32
    /// outputs' weights ([`LayerStack::fc1_blocks`]).
    pub fn fc1(input: &[u8; L2_INPUTS], stack: &LayerStack) -> [i32; L3] {
        // Safety: `input` is 32 bytes, read as 8 4-byte blocks;
        // `fc1_blocks[j]` is 128 bytes, read in four 32-byte quarters;
        // the biases and the output are 32 `i32`, 4 registers. AVX2 is
        // enabled at compile time.
        unsafe {
            let b = stack.fc1_biases.as_ptr().cast::<__m256i>();
            let mut acc: [__m256i; 4] = std::array::from_fn(|k| _mm256_loadu_si256(b.add(k)));
            let words = input.as_ptr().cast::<i32>();
            for j in 0..L2_INPUTS / 4 {
                let word = words.add(j).read_unaligned();
                if word == 0 {
                    continue;
                }
                let xj = _mm256_set1_epi32(word);
                let w = stack.fc1_blocks[j].as_ptr().cast::<__m256i>();
                for (k, a) in acc.iter_mut().enumerate() {
                    *a = dpbusd(*a, xj, _mm256_loadu_si256(w.add(k)));
                }
            }
            let mut out = [0i32; L3];
            for (k, a) in acc.iter().enumerate() {
                _mm256_storeu_si256(out.as_mut_ptr().add(8 * k).cast(), *a);
            }
            out
        }
    }

    /// See [`portable::fc2`].
    pub fn fc2(input: &[u8; L2_INPUTS], stack: &LayerStack) -> i32 {
        // Safety: as in `fc1`.
        unsafe {
            let x = _mm256_loadu_si256(input.as_ptr().cast());
            let w = _mm256_loadu_si256(stack.fc2_weights.as_ptr().cast());
            hsum(dpbusd(_mm256_setzero_si256(), x, w)) + stack.fc2_bias
        }
    }
}

/// The AVX-512 kernels (with VNNI's `vpdpbusd`): a row of the accumulator
/// is 32 registers of 512 bits, all held at once, and the first layer
/// multiplies a block of four inputs by its sixteen outputs' weights in one
/// instruction. Compiled where the build targets AVX-512BW and VNNI.
#[cfg(all(target_arch = "x86_64", target_feature = "avx512bw", target_feature = "avx512vnni"))]
pub mod avx512 {
    use std::arch::x86_64::*;

    use super::*;

    /// 512-bit registers per row: all 32 of AVX-512's hold a row, so each
    /// added or subtracted weight row is read once.
    const ROW_REGS: usize = L1 / 32;

    /// See [`portable::apply_in_place`].
    pub fn apply_in_place(acc: &mut Row, weights: &[Row], add: &[usize], sub: &[usize]) {
        let dst = acc.0.as_mut_ptr().cast::<__m512i>();
        row(dst.cast_const(), dst, weights, add, sub);
    }

    /// See [`portable::apply`].
    pub fn apply(dst: &mut Row, src: &Row, weights: &[Row], add: &[usize], sub: &[usize]) {
        row(src.0.as_ptr().cast(), dst.0.as_mut_ptr().cast(), weights, add, sub);
    }

    /// `dst = src + Σ add - Σ sub` over a row (`src` may be `dst`).
    fn row(src: *const __m512i, dst: *mut __m512i, weights: &[Row], add: &[usize], sub: &[usize]) {
        // Safety: `src` and `dst` point at rows of `L1` i16, that is
        // `ROW_REGS` registers, aligned to 64 bytes (`Row` is `align(64)`);
        // the weight rows are rows too. AVX-512BW is enabled at compile
        // time (this module's cfg).
        unsafe {
            let mut r: [__m512i; ROW_REGS] =
                std::array::from_fn(|k| _mm512_load_si512(src.add(k).cast()));
            for &i in add {
                let w = weights[i].0.as_ptr().cast::<__m512i>();
                for (k, reg) in r.iter_mut().enumerate() {
                    *reg = _mm512_add_epi16(*reg, _mm512_load_si512(w.add(k).cast()));
                }
            }
            for &i in sub {
                let w = weights[i].0.as_ptr().cast::<__m512i>();
                for (k, reg) in r.iter_mut().enumerate() {
                    *reg = _mm512_sub_epi16(*reg, _mm512_load_si512(w.add(k).cast()));
                }
            }
            for (k, reg) in r.iter().enumerate() {
                _mm512_store_si512(dst.add(k).cast(), *reg);
            }
        }
    }

    /// See [`portable::transform`].
    pub fn transform(us: &Row, them: &Row, out: &mut [u8; L1]) {
        for (half, row) in [us, them].into_iter().enumerate() {
            // Safety: a row is `ROW_REGS` aligned registers, its halves
            // `ROW_REGS / 2` each, read in pairs (`2 * j + 1 < ROW_REGS /
            // 2`); `out` has room for `L1 / 2` bytes at `half * L1 / 2`,
            // written 64 at a time (unaligned stores). AVX-512BW is enabled
            // at compile time.
            unsafe {
                let in0 = row.0.as_ptr().cast::<__m512i>();
                let in1 = in0.add(ROW_REGS / 2);
                let dst = out.as_mut_ptr().add(half * L1 / 2).cast::<__m512i>();
                let zero = _mm512_setzero_si512();
                let top = _mm512_set1_epi16(127);
                let clip = |p: *const __m512i| {
                    _mm512_max_epi16(_mm512_min_epi16(_mm512_load_si512(p.cast()), top), zero)
                };
                // The pack interleaves the two registers by 128-bit lane;
                // the permutation of 64-bit words puts them back in order.
                let order = _mm512_set_epi64(7, 5, 3, 1, 6, 4, 2, 0);
                for j in 0..ROW_REGS / 4 {
                    let pa = _mm512_mullo_epi16(clip(in0.add(2 * j)), clip(in1.add(2 * j)));
                    let pb = _mm512_mullo_epi16(clip(in0.add(2 * j + 1)), clip(in1.add(2 * j + 1)));
                    let packed =
                        _mm512_packs_epi16(_mm512_srli_epi16(pa, 7), _mm512_srli_epi16(pb, 7));
                    _mm512_storeu_si512(dst.add(j).cast(), _mm512_permutexvar_epi64(order, packed));
                }
            }
        }
    }

    /// See [`portable::fc0`]: only the 4-byte blocks of inputs with a
    /// non-zero byte are multiplied, each by its 16 outputs' 64 weight bytes
    /// ([`LayerStack::fc0_blocks`]) in one `vpdpbusd`, which sums the four
    /// products of each output exactly in `i32`.
    pub fn fc0(input: &[u8; L1], stack: &LayerStack) -> [i32; L2] {
        // Room for a full write of 16 indices past the last block found.
        let mut blocks = [0i32; L1 / 4 + 16];
        let mut n = 0;
        // Safety: `input` is `L1` bytes, read 64 at a time for `c < L1 / 64`
        // (unaligned loads) and as 4-byte words at block indices below `L1 /
        // 4`; `n + 16 <= L1 / 4 + 16` at every store of 16 indices;
        // `fc0_blocks[j]` is 64 bytes (one unaligned load); the biases and
        // the output are 16 `i32`. AVX-512BW and VNNI are enabled at compile
        // time.
        unsafe {
            let x = input.as_ptr().cast::<__m512i>();
            let words = input.as_ptr().cast::<i32>();
            // The indices of the blocks with a non-zero byte, 16 blocks at a
            // time, compressed into place without a branch per block.
            let mut index = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
            let sixteen = _mm512_set1_epi32(16);
            for c in 0..L1 / 64 {
                let v = _mm512_loadu_si512(x.add(c).cast());
                let nonzero = _mm512_test_epi32_mask(v, v);
                let found = _mm512_maskz_compress_epi32(nonzero, index);
                _mm512_storeu_si512(blocks.as_mut_ptr().add(n).cast(), found);
                n += nonzero.count_ones() as usize;
                index = _mm512_add_epi32(index, sixteen);
            }
            let mut acc = _mm512_loadu_si512(stack.fc0_biases.as_ptr().cast());
            let mut acc2 = _mm512_setzero_si512();
            // Two blocks at a time into two sums, which keeps both
            // multipliers busy.
            let pairs = blocks[..n].chunks_exact(2);
            let rest = pairs.remainder();
            for pair in pairs {
                let (j, k) = (pair[0] as usize, pair[1] as usize);
                let xj = _mm512_set1_epi32(words.add(j).read_unaligned());
                let xk = _mm512_set1_epi32(words.add(k).read_unaligned());
                let wj = _mm512_loadu_si512(stack.fc0_blocks[j].as_ptr().cast());
                let wk = _mm512_loadu_si512(stack.fc0_blocks[k].as_ptr().cast());
                acc = _mm512_dpbusd_epi32(acc, xj, wj);
                acc2 = _mm512_dpbusd_epi32(acc2, xk, wk);
            }
            for &j in rest {
                let j = j as usize;
                let xj = _mm512_set1_epi32(words.add(j).read_unaligned());
                let w = _mm512_loadu_si512(stack.fc0_blocks[j].as_ptr().cast());
                acc = _mm512_dpbusd_epi32(acc, xj, w);
            }
            let mut out = [0i32; L2];
            _mm512_storeu_si512(out.as_mut_ptr().cast(), _mm512_add_epi32(acc, acc2));
            out
        }
    }

    /// See [`portable::fc1`]: a block of 4 inputs at a time times its 32
    /// outputs' weights ([`LayerStack::fc1_blocks`]), two registers.
    pub fn fc1(input: &[u8; L2_INPUTS], stack: &LayerStack) -> [i32; L3] {
        // Safety: `input` is 32 bytes, read as 8 4-byte words;
        // `fc1_blocks[j]` is 128 bytes, read in two 64-byte halves; the
        // biases and the output are 32 `i32`, 2 registers. AVX-512BW and
        // VNNI are enabled at compile time.
        unsafe {
            let b = stack.fc1_biases.as_ptr().cast::<__m512i>();
            let mut lo = _mm512_loadu_si512(b.cast());
            let mut hi = _mm512_loadu_si512(b.add(1).cast());
            let words = input.as_ptr().cast::<i32>();
            for j in 0..L2_INPUTS / 4 {
                let word = words.add(j).read_unaligned();
                if word == 0 {
                    continue;
                }
                let xj = _mm512_set1_epi32(word);
                let w = stack.fc1_blocks[j].as_ptr().cast::<__m512i>();
                lo = _mm512_dpbusd_epi32(lo, xj, _mm512_loadu_si512(w.cast()));
                hi = _mm512_dpbusd_epi32(hi, xj, _mm512_loadu_si512(w.add(1).cast()));
            }
            let mut out = [0i32; L3];
            _mm512_storeu_si512(out.as_mut_ptr().cast(), lo);
            _mm512_storeu_si512(out.as_mut_ptr().add(16).cast(), hi);
            out
        }
    }

    /// See [`portable::fc2`] (32 inputs: the AVX2 kernel's width).
    pub fn fc2(input: &[u8; L2_INPUTS], stack: &LayerStack) -> i32 {
        super::avx2::fc2(input, stack)
    }
}

#[cfg(all(
    target_arch = "x86_64",
    target_feature = "avx2",
    not(all(target_feature = "avx512bw", target_feature = "avx512vnni"))
))]
pub use avx2::{apply, apply_in_place, fc0, fc1, fc2, transform};
#[cfg(all(
    target_arch = "x86_64",
    target_feature = "avx512bw",
    target_feature = "avx512vnni"
))]
pub use avx512::{apply, apply_in_place, fc0, fc1, fc2, transform};
#[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
pub use portable::{apply, apply_in_place, fc0, fc1, fc2, transform};

/// The name of the kernels this build uses.
pub const KERNELS: &str = if cfg!(all(
    target_arch = "x86_64",
    target_feature = "avx512bw",
    target_feature = "avx512vnni"
)) {
    "avx512"
} else if cfg!(all(target_arch = "x86_64", target_feature = "avx2")) {
    "avx2"
} else {
    "portable"
};

/// Stockfish's `SqrClippedReLU`: `x²` scaled down by `2^19` (twice the
/// weight scale, then 128), at most 127.
#[inline]
pub fn sqr_clipped_relu(x: i32) -> u8 {
    ((i64::from(x) * i64::from(x)) >> 19).min(127) as u8
}

/// Stockfish's `ClippedReLU`: `x` scaled down by the weight scale, clipped
/// to 0..=127.
#[inline]
pub fn clipped_relu(x: i32) -> u8 {
    (x >> crate::nnue::WEIGHT_SCALE_BITS).clamp(0, 127) as u8
}

/// The layer stack's output for the transformed features (Stockfish's
/// `Network::propagate`): the output layer's value plus the first layer's
/// last output, passed forward and rescaled from `127 * 2^6` to `600 * 16`
/// units.
pub fn propagate(input: &[u8; L1], stack: &LayerStack) -> i32 {
    let l1 = fc0(input, stack);
    let mut l2_in = [0u8; L2_INPUTS];
    for i in 0..L2 - 1 {
        l2_in[i] = sqr_clipped_relu(l1[i]);
        l2_in[L2 - 1 + i] = clipped_relu(l1[i]);
    }
    let l2 = fc1(&l2_in, stack);
    let l3_in: [u8; L2_INPUTS] = std::array::from_fn(|i| clipped_relu(l2[i]));
    let out = fc2(&l3_in, stack);
    // In `i32` as Stockfish computes it (the product wraps where C++'s
    // would on x86-64).
    let forward = l1[L2 - 1].wrapping_mul(600 * crate::nnue::OUTPUT_SCALE)
        / (127 * (1 << crate::nnue::WEIGHT_SCALE_BITS));
    out.wrapping_add(forward)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nnue::Network;

    /// A seeded generator for test inputs.
    fn rng(seed: u64) -> impl FnMut() -> u64 {
        let mut s = seed | 1;
        move || {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            s.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
    }

    #[test]
    fn activations_as_stockfish_computes_them() {
        // SqrClippedReLU: min(127, (x * x >> 12) / 128).
        for x in
            [-70_000, -32_768, -5_000, -1, 0, 1, 100, 2_047, 2_048, 5_000, 7_999, 8_000, 1 << 20]
        {
            let expected = (((i64::from(x) * i64::from(x)) >> 12) / 128).clamp(0, 127) as u8;
            assert_eq!(sqr_clipped_relu(x), expected, "{x}");
            assert_eq!(clipped_relu(x), (x >> 6).clamp(0, 127) as u8, "{x}");
        }
    }

    #[test]
    fn every_kernel_gives_the_portable_integers() {
        let net = Network::synthetic(11);
        let mut next = rng(5);
        for round in 0..200 {
            // Accumulators of every magnitude, wrapping included.
            let mut a = Row::ZERO;
            let mut b = Row::ZERO;
            let spread = [64, 512, 40_000][round % 3];
            for v in a.0.iter_mut().chain(b.0.iter_mut()) {
                *v = ((next() % (2 * spread)) as i64 - spread as i64) as i16;
            }
            let add: Vec<usize> =
                (0..round % 33).map(|_| next() as usize % net.ft_weights.len()).collect();
            let sub: Vec<usize> =
                (0..round % 7).map(|_| next() as usize % net.ft_weights.len()).collect();
            let (mut x, mut y) = (Row::ZERO, Row::ZERO);
            apply(&mut x, &a, &net.ft_weights, &add, &sub);
            portable::apply(&mut y, &a, &net.ft_weights, &add, &sub);
            assert_eq!(x, y);
            let mut z = a.clone();
            apply_in_place(&mut z, &net.ft_weights, &add, &sub);
            assert_eq!(z, y);

            let (mut t1, mut t2) = ([0u8; L1], [0u8; L1]);
            transform(&a, &b, &mut t1);
            portable::transform(&a, &b, &mut t2);
            assert_eq!(t1, t2);
            let stack = &net.stacks[round % net.stacks.len()];
            assert_eq!(fc0(&t1, stack), portable::fc0(&t1, stack));
            // Inputs of the later layers reach 127.
            let small: [u8; L2_INPUTS] = std::array::from_fn(|_| (next() % 128) as u8);
            assert_eq!(fc1(&small, stack), portable::fc1(&small, stack));
            assert_eq!(fc2(&small, stack), portable::fc2(&small, stack));
            // The first layer's extremes: every input 126, the largest the
            // transformer gives; and inputs as sparse as real ones.
            let full = [126u8; L1];
            assert_eq!(fc0(&full, stack), portable::fc0(&full, stack));
            let sparse: [u8; L1] = std::array::from_fn(|_| {
                if next().is_multiple_of(6) { (next() % 127) as u8 } else { 0 }
            });
            assert_eq!(fc0(&sparse, stack), portable::fc0(&sparse, stack));
            let mut sparse2 = small;
            sparse2[..16].fill(0);
            assert_eq!(fc1(&sparse2, stack), portable::fc1(&sparse2, stack));
            // The AVX2 kernels too, where a wider set is the default.
            #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
            {
                let (mut x2, mut t3) = (Row::ZERO, [0u8; L1]);
                avx2::apply(&mut x2, &a, &net.ft_weights, &add, &sub);
                assert_eq!(x2, y);
                avx2::transform(&a, &b, &mut t3);
                assert_eq!(t3, t2);
                assert_eq!(avx2::fc0(&sparse, stack), portable::fc0(&sparse, stack));
                assert_eq!(avx2::fc0(&full, stack), portable::fc0(&full, stack));
                assert_eq!(avx2::fc1(&small, stack), portable::fc1(&small, stack));
            }
        }
    }
}
