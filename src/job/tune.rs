//! The tuner's input job: training positions read from PGN and EPD files
//! (plain or zstd) for [`crate::search::texel`] to fit the evaluation to.
//!
//! From PGN, every `stride`-th qualifying position of every standard game
//! with a result, labelled with the result: from ply 10 on, not in check,
//! and with no capture that wins material (so the static evaluation is
//! meaningful). From EPD, every `stride`-th position with a `ce` score that
//! is not in check, labelled with the score's win probability.

use std::path::{Path, PathBuf};

use crate::{
    chess::{position::Position, types::Color},
    io::{
        epd::EpdLine,
        pgn::GameReader,
        source::{Compression, Format, sniff_format},
    },
    pipeline::replayer::set_start_position,
    search::{
        hce::EvalTables,
        texel::{Sample, current_weights, win_probability},
    },
};

/// A training file that could not be read.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
pub struct CollectError {
    /// The file.
    pub path: PathBuf,
    /// Why it could not be read or decompressed.
    #[source]
    pub source: std::io::Error,
}

/// Reads the training positions of `paths`, keeping every `stride`-th
/// qualifying one (counted across all files, so the choice does not depend
/// on how the games are split into files).
pub fn collect(paths: &[PathBuf], stride: usize) -> Result<Vec<Sample>, CollectError> {
    let stride = stride.max(1);
    let mut collector = Collector {
        samples: Vec::new(),
        tables: EvalTables::new(),
        start: current_weights(),
        counter: 0,
        stride,
    };
    for path in paths {
        let text = read_text(path).map_err(|source| CollectError { path: path.clone(), source })?;
        if sniff_format(&text) == Format::Epd {
            collector.epd(&text);
        } else {
            collector.pgn(&text);
        }
    }
    Ok(collector.samples)
}

/// A file's text, decompressed when it is zstd.
fn read_text(path: &Path) -> std::io::Result<Vec<u8>> {
    let bytes = std::fs::read(path)?;
    if Compression::detect(&bytes) == Compression::Zstd {
        zstd::decode_all(&bytes[..])
    } else {
        Ok(bytes)
    }
}

struct Collector {
    samples: Vec<Sample>,
    tables: EvalTables,
    /// The starting weights, which choose each sample's endgame scale.
    start: Vec<(f64, f64)>,
    /// Qualifying positions seen so far.
    counter: usize,
    stride: usize,
}

impl Collector {
    /// Counts a qualifying position; whether it is one to keep.
    fn take(&mut self) -> bool {
        self.counter += 1;
        self.counter.is_multiple_of(self.stride)
    }

    fn push(&mut self, pos: &Position, result: f64) {
        self.samples.push(Sample::new(pos, &mut self.tables, &self.start, result));
    }

    /// Positions with a score (`ce`, the side to move's view): the target
    /// is the score's win probability on the tuner's curve.
    fn epd(&mut self, text: &[u8]) {
        for line in text.split(|&b| b == b'\n') {
            let Some(Ok(epd)) = EpdLine::parse(line) else { continue };
            let (Ok(pos), Some(ce)) =
                (epd.position(), epd.operand("ce").and_then(|c| c.parse::<f64>().ok()))
            else {
                continue;
            };
            if !self.take() || pos.in_check() {
                continue;
            }
            let white_cp = if pos.side_to_move() == Color::White { ce } else { -ce };
            self.push(&pos, win_probability(white_cp));
        }
    }

    /// Quiet positions of standard games with a result, labelled with it.
    fn pgn(&mut self, text: &[u8]) {
        let no_tags: [Vec<u8>; 0] = [];
        let mut reader = GameReader::new(text, 0, &no_tags);
        reader.set_annotations(false);
        let startpos = Position::startpos();
        let mut pos = Position::startpos();
        while let Some(game) = reader.next_game() {
            let result = match game.result.raw() {
                b"1-0" => 1.0,
                b"0-1" => 0.0,
                b"1/2-1/2" => 0.5,
                _ => continue,
            };
            if set_start_position(game, &mut pos, &startpos).is_err() || pos.is_chess960() {
                continue;
            }
            for (ply, san) in game.moves.iter().enumerate() {
                let Ok(m) = san.to_move(&pos) else { break };
                pos.do_move(m);
                if ply < 10 || pos.in_check() {
                    continue;
                }
                if pos.legal_moves().iter().any(|&c| pos.is_capture(c) && pos.see_ge(c, 1)) {
                    continue;
                }
                if self.take() {
                    self.push(&pos, result);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data").join(name)
    }

    /// The sample's games give positions labelled with their results, and a
    /// stride keeps every n-th of the same sequence.
    #[test]
    fn games_give_positions_labelled_with_results() {
        let all = collect(&[data("sample.pgn")], 1).unwrap();
        assert!(all.len() > 100, "{} positions", all.len());
        assert!(all.iter().all(|s| [0.0, 0.5, 1.0].contains(&s.result)));
        assert!(all.iter().all(|s| (0..=256).contains(&s.phase) && !s.features.is_empty()));
        let third = collect(&[data("sample.pgn")], 3).unwrap();
        assert_eq!(third.len(), all.len() / 3);
        for (i, s) in third.iter().enumerate() {
            assert_eq!(s.features, all[3 * i + 2].features);
        }
    }

    /// EPD positions are labelled with the win probability of their `ce`
    /// score from White's side; lines without one are not used.
    #[test]
    fn scored_positions_are_labelled_with_win_probability() {
        let dir = std::env::temp_dir().join(format!("kibitz-tune-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("scored.epd");
        std::fs::write(
            &file,
            "4k3/8/8/8/8/8/4P3/4K3 w - - ce 200;\n\
             4k3/8/8/8/8/8/4P3/4K3 b - - ce -200;\n\
             4k3/8/8/8/8/8/4P3/4K3 w - - id \"no score\";\n",
        )
        .unwrap();
        let samples = collect(std::slice::from_ref(&file), 1);
        std::fs::remove_dir_all(&dir).unwrap();
        let samples = samples.unwrap();
        assert_eq!(samples.len(), 2);
        // 200 for White, then 200 for White seen from Black's side: on the
        // tuner's logistic curve (400 centipawns per e-fold), 1 / (1 + e^-0.5).
        let expected = 1.0 / (1.0 + (-0.5f64).exp());
        for s in &samples {
            assert!((s.result - expected).abs() < 1e-12, "{}", s.result);
        }
    }

    #[test]
    fn a_missing_file_is_named() {
        let missing = data("no-such-file.pgn");
        let e = collect(std::slice::from_ref(&missing), 1).unwrap_err();
        assert_eq!(e.path, missing);
        assert!(e.to_string().starts_with(&missing.display().to_string()), "{e}");
    }
}
