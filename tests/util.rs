//! Helpers shared by the integration tests.

#![allow(dead_code)]

use std::path::PathBuf;

/// A small seeded generator (xorshift64*), so every run plays the same games.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (((self.next_u64() >> 32) * n as u64) >> 32) as usize
    }
}

/// A file of the shared corpora (`../shared/data/...`).
pub fn shared(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data").join(path)
}

/// The kibitz binary, without a net from the environment (`KIBITZ_NET`):
/// each test chooses its evaluation itself.
pub fn kibitz_command() -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_kibitz"));
    command.env_remove("KIBITZ_NET");
    command
}
