//! Helpers shared by the integration tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

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

/// The shared corpora: `KIBITZ_DATA` when set, else `../shared/data` beside
/// the checkout.
pub fn shared_root() -> PathBuf {
    match std::env::var_os("KIBITZ_DATA") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data"),
    }
}

/// A file of the shared corpora (`$KIBITZ_DATA/...`, see [`shared_root`]).
pub fn shared(path: &str) -> PathBuf {
    shared_root().join(path)
}

/// The kibitz binary, without a net from the environment (`KIBITZ_NET`):
/// each test chooses its evaluation itself.
pub fn kibitz_command() -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_kibitz"));
    command.env_remove("KIBITZ_NET");
    command
}

/// Runs the kibitz binary with `args` and the extra environment `env`;
/// returns (exit code, stdout, stderr).
pub fn kibitz_env(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let out = kibitz_command().args(args).envs(env.iter().copied()).output().expect("run kibitz");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs the kibitz binary with `args`; returns (exit code, stdout, stderr).
pub fn kibitz(args: &[&str]) -> (i32, String, String) {
    kibitz_env(args, &[])
}

/// A path as the `&str` a command line takes.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The project's own sample games, `data/sample.pgn`.
pub fn sample() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/sample.pgn")
}

/// A scratch directory removed at the end of the test.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("kibitz-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// The directory itself.
    pub fn root(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A position of a game: its FEN, and the move played from it in SAN and
/// in UCI (shakmaty's, an oracle kibitz did not write).
pub struct PlayedPosition {
    /// The position's FEN.
    pub fen: String,
    /// The move played from it, in SAN.
    pub san: String,
    /// The same move, in UCI.
    pub uci: String,
}

/// The positions of a game's movetext (from the start position), each
/// with the move played from it.
pub fn played_positions(movetext: &str) -> Vec<PlayedPosition> {
    use shakmaty::{CastlingMode, Chess, EnPassantMode, Position as _, fen::Fen, san::SanPlus};
    let mut pos = Chess::default();
    let mut out = Vec::new();
    for tok in movetext.split_whitespace() {
        if ["1-0", "0-1", "1/2-1/2", "*"].contains(&tok) {
            continue;
        }
        let tok = tok.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
        if tok.is_empty() {
            continue;
        }
        let san: SanPlus = tok.parse().unwrap();
        let m = san.san.to_move(&pos).unwrap();
        out.push(PlayedPosition {
            fen: Fen::from_position(&pos, EnPassantMode::Legal).to_string(),
            san: tok.to_string(),
            uci: m.to_uci(CastlingMode::Standard).to_string(),
        });
        pos.play_unchecked(m);
    }
    out
}

/// Exported JSON lines without their `played` key (a table of positions
/// adds the played move to what the EPD of its positions gives).
pub fn without_played(jsonl: &str) -> Vec<serde_json::Value> {
    jsonl
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("played");
            v
        })
        .collect()
}
