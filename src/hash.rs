//! Small, fixed hash and mixing functions: their values are part of what
//! kibitz writes (samples drawn, checksums), so they never change.

/// The golden-ratio increment of SplitMix64.
pub const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's finaliser (Steele, Lea and Flood, "Fast splittable
/// pseudorandom number generators", 2014): a bijective mix of 64 bits.
/// Equal inputs give equal outputs on every machine; nearby inputs give
/// unrelated outputs.
pub const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One step of SplitMix64 from state `z`: the finaliser of `z` plus the
/// increment.
pub const fn splitmix64(z: u64) -> u64 {
    mix64(z.wrapping_add(GOLDEN))
}

/// FNV-1a, 64 bits, of `bytes`.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Published values: SplitMix64's first outputs from seed 0 (each
    /// output is the finaliser of the seed plus k times the increment) and
    /// FNV-1a of the empty string and of "a".
    #[test]
    fn known_values() {
        assert_eq!(splitmix64(0), 0xe220_a839_7b1d_cdaf);
        assert_eq!(splitmix64(0x9e37_79b9_7f4a_7c15), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
