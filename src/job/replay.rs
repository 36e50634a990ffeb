//! The replay job: whole databases read, every game replayed and verified
//! on every core, with the rejected games, the inputs that could not be
//! read and (on request) every position's key handed to a sink in input
//! order, and a [`Summary`] at the end.
//!
//! ```
//! use kibitz::{Rejected, Replay, ReplaySettings, ReplaySink};
//!
//! #[derive(Default)]
//! struct Rejects(Vec<(u64, u32)>);
//!
//! impl ReplaySink for Rejects {
//!     fn rejected(&mut self, _: &str, game_in_file: u64, _: u64, r: &Rejected) -> std::io::Result<()> {
//!         self.0.push((game_in_file, r.ply));
//!         Ok(())
//!     }
//! }
//!
//! let dir = std::env::temp_dir().join(format!("kibitz-replay-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! let input = dir.join("games.pgn");
//! std::fs::write(&input, "[Event \"a\"]\n\n1. e4 e5 *\n\n[Event \"b\"]\n\n1. d4 Ke3 *\n")?;
//! let mut rejects = Rejects::default();
//! let summary = Replay::new(vec![input], ReplaySettings::default()).run(&mut rejects)?;
//! assert_eq!((summary.games, summary.plies, summary.rejected_games), (2, 3, 1));
//! assert_eq!(rejects.0, [(2, 2)]); // the second game, at its second ply
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::{io, path::PathBuf};

use crate::{
    io::{
        place::describe,
        source::{ChunkConfig, Format, display_name},
        table::TableOptions,
    },
    pipeline::{
        fingerprint::Fingerprint,
        replayer::{ChunkOutcome, Rejected, ReplayOptions, Replayer, Verify},
        run::{self, Event, PipelineConfig},
        summary::{FileSummary, Summary},
    },
};

/// How to replay.
#[derive(Clone, Debug)]
pub struct ReplaySettings {
    /// Read the inputs as this format instead of sniffing it.
    pub format: Option<Format>,
    /// Worker threads (at least 1).
    pub threads: usize,
    /// What to check after every move.
    pub verify: Verify,
    /// Hand every position's key line to [`ReplaySink::key_line`].
    pub keys: bool,
    /// Hand every game's fingerprint to [`ReplaySink::fingerprint`].
    pub fingerprints: bool,
    /// Read at most this many bytes of text from each input (whole games
    /// only): a bound for endless inputs.
    pub max_bytes: Option<u64>,
    /// How tables of games or positions are read.
    pub table: TableOptions,
}

impl Default for ReplaySettings {
    fn default() -> ReplaySettings {
        ReplaySettings {
            format: None,
            threads: 1,
            verify: Verify::Keys,
            keys: false,
            fingerprints: false,
            max_bytes: None,
            table: TableOptions::default(),
        }
    }
}

/// What a replay reports as it goes, in input order. Every method has a
/// default that ignores the report.
pub trait ReplaySink {
    /// Progress: bytes of all inputs consumed, and the summary so far.
    fn progress(&mut self, _bytes: u64, _summary: &Summary) {}
    /// An input (named) could not be read whole; the run goes on.
    fn input_error(&mut self, _file: &str, _offset: Option<u64>, _message: &str) {}
    /// A game rejected: its input's name, its number in that input (from
    /// 1) and in the whole input (from 0).
    fn rejected(
        &mut self,
        _file: &str,
        _game_in_file: u64,
        _game: u64,
        _rejected: &Rejected,
    ) -> io::Result<()> {
        Ok(())
    }
    /// With [`ReplaySettings::keys`]: one position of game `game` (numbered
    /// from 1 across all inputs, at byte `offset` of its input's text) as
    /// `ply, Polyglot key, FEN`, tab-separated, ending in a line feed.
    fn key_line(&mut self, _game: u64, _offset: u64, _line: &[u8]) -> io::Result<()> {
        Ok(())
    }
    /// With [`ReplaySettings::fingerprints`]: game `game` (numbered from 1
    /// across all inputs), of input `file` at byte `offset`, was replayed to
    /// its end with this fingerprint.
    fn fingerprint(
        &mut self,
        _game: u64,
        _file: usize,
        _offset: u64,
        _fingerprint: Fingerprint,
    ) -> io::Result<()> {
        Ok(())
    }
}

/// A sink that reports nothing.
impl ReplaySink for () {}

/// A replay that could not be finished.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The sink failed to take a report (a full disk, a closed pipe); the
    /// replay stopped there.
    #[error("{0}")]
    Sink(#[source] io::Error),
}

/// A replay of some inputs (paths, `-` for standard input).
#[derive(Clone, Debug)]
pub struct Replay {
    inputs: Vec<PathBuf>,
    settings: ReplaySettings,
}

impl Replay {
    /// The job; nothing is read until [`Replay::run`].
    pub fn new(inputs: Vec<PathBuf>, settings: ReplaySettings) -> Replay {
        Replay { inputs, settings }
    }

    /// Replays every input. Inputs that cannot be read whole are reported
    /// to the sink and counted in [`Summary::input_errors`]; the run goes
    /// on with the rest.
    pub fn run(&self, sink: &mut dyn ReplaySink) -> Result<Summary, ReplayError> {
        let threads = self.settings.threads.max(1);
        let config = PipelineConfig {
            inputs: self.inputs.clone(),
            format: self.settings.format,
            threads,
            // As many zstd frames decoded at once as there are threads:
            // more only holds more decoded text in memory.
            chunk: ChunkConfig {
                frame_window: threads.max(2),
                max_text: self.settings.max_bytes.unwrap_or(u64::MAX),
                table: self.settings.table.clone(),
                ..ChunkConfig::default()
            },
            count_games: false,
            filter: None,
            games_seen: None,
        };
        let options = ReplayOptions {
            verify: self.settings.verify,
            keys: self.settings.keys,
            annotations: false,
            fingerprints: self.settings.fingerprints,
        };
        let names: Vec<String> = self.inputs.iter().map(|p| display_name(p)).collect();
        let mut summary = Summary {
            files: names
                .iter()
                .map(|name| FileSummary { name: name.clone(), ..FileSummary::default() })
                .collect(),
            threads,
            verify: format!("{:?}", self.settings.verify).to_lowercase(),
            ..Summary::default()
        };
        let mut file_game_base = vec![0u64; self.inputs.len()];
        let mut game_base = 0u64;
        let mut done_bytes = 0u64;
        let mut failed: Option<io::Error> = None;
        let start = std::time::Instant::now();
        run::run(
            &config,
            || Replayer::new(options.clone()),
            |replayer, chunk| match chunk.format {
                Format::Pgn => replayer.replay_chunk(chunk),
                Format::Epd => replayer.replay_epd_chunk(chunk),
            },
            |event| {
                match event {
                    Event::Start { file, compression, format, .. } => {
                        summary.files[file].compression = Some(compression);
                        summary.files[file].format = Some(format);
                    }
                    Event::Chunk { file, input_pos, result, .. } => {
                        summary.add(file, &result);
                        let bases = (game_base, file_game_base[file]);
                        let reported = report_chunk(sink, &names, file, bases, &result);
                        if let Err(e) = reported {
                            failed = Some(e);
                            return false;
                        }
                        file_game_base[file] += result.games;
                        game_base += result.games;
                        summary.seconds = start.elapsed().as_secs_f64();
                        sink.progress(done_bytes + input_pos, &summary);
                    }
                    Event::Error { file, offset, message } => {
                        sink.input_error(&names[file], offset, &message);
                        let at = offset
                            .map(|o| format!(" at {}", describe(&names[file], o)))
                            .unwrap_or_default();
                        summary.files[file].errors.push(format!("{message}{at}"));
                        summary.input_errors += 1;
                    }
                    Event::End { file, bytes_in, bytes_out } => {
                        summary.files[file].bytes = bytes_in;
                        summary.files[file].text_bytes = bytes_out;
                        summary.bytes += bytes_in;
                        summary.text_bytes += bytes_out;
                        done_bytes += bytes_in;
                        summary.seconds = start.elapsed().as_secs_f64();
                        sink.progress(done_bytes, &summary);
                    }
                }
                true
            },
        );
        summary.seconds = start.elapsed().as_secs_f64();
        match failed {
            Some(e) => Err(ReplayError::Sink(e)),
            None => Ok(summary),
        }
    }
}

/// A chunk's key lines, fingerprints and rejected games to the sink, with
/// game numbers from `game_base` (all inputs) and `file_game_base` (this
/// input) on.
fn report_chunk(
    sink: &mut dyn ReplaySink,
    names: &[String],
    file: usize,
    (game_base, file_game_base): (u64, u64),
    result: &ChunkOutcome,
) -> io::Result<()> {
    let mut lines = result.key_lines.split_inclusive(|&b| b == b'\n');
    for (g, &(count, offset)) in result.key_line_counts.iter().enumerate() {
        for line in lines.by_ref().take(count as usize) {
            sink.key_line(game_base + g as u64 + 1, offset, line)?;
        }
    }
    for &(local, offset, fp) in &result.fingerprints {
        sink.fingerprint(game_base + local + 1, file, offset, fp)?;
    }
    for r in &result.rejected {
        let in_file = file_game_base + r.local_game + 1;
        sink.rejected(&names[r.file], in_file, game_base + r.local_game, r)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/sample.pgn")
    }

    #[derive(Default)]
    struct Keys(Vec<(u64, Vec<u8>)>);

    impl ReplaySink for Keys {
        fn key_line(&mut self, game: u64, _: u64, line: &[u8]) -> io::Result<()> {
            self.0.push((game, line.to_vec()));
            Ok(())
        }
    }

    /// The key lines are numbered by game across inputs, one per position
    /// (the start and after each ply), and do not depend on the threads.
    #[test]
    fn key_lines_follow_the_games_whatever_the_threads() {
        let settings = ReplaySettings { keys: true, ..ReplaySettings::default() };
        let mut one = Keys::default();
        let summary =
            Replay::new(vec![sample(), sample()], settings.clone()).run(&mut one).unwrap();
        assert_eq!(summary.rejected_games, 0);
        assert_eq!(one.0.len() as u64, summary.games + summary.plies);
        assert_eq!(one.0.first().map(|k| k.0), Some(1));
        assert_eq!(one.0.last().map(|k| k.0), Some(summary.games));
        assert!(one.0.windows(2).all(|w| w[0].0 <= w[1].0));
        let half = one.0.len() / 2;
        let second: Vec<_> = one.0[half..].iter().map(|(_, l)| l.clone()).collect();
        let first: Vec<_> = one.0[..half].iter().map(|(_, l)| l.clone()).collect();
        assert_eq!(first, second, "the same file twice gives the same lines");
        let mut two = Keys::default();
        let threads = ReplaySettings { threads: 2, ..settings };
        Replay::new(vec![sample(), sample()], threads).run(&mut two).unwrap();
        assert_eq!(one.0, two.0);
    }

    struct Failing;

    impl ReplaySink for Failing {
        fn key_line(&mut self, _: u64, _: u64, _: &[u8]) -> io::Result<()> {
            Err(io::Error::other("disk full"))
        }
    }

    /// A sink that fails stops the run with its error.
    #[test]
    fn a_failing_sink_stops_the_run() {
        let settings = ReplaySettings { keys: true, ..ReplaySettings::default() };
        let e = Replay::new(vec![sample()], settings).run(&mut Failing).unwrap_err();
        assert_eq!(e.to_string(), "disk full");
    }

    #[derive(Default)]
    struct Errors(Vec<String>);

    impl ReplaySink for Errors {
        fn input_error(&mut self, file: &str, _: Option<u64>, message: &str) {
            self.0.push(format!("{file}: {message}"));
        }
    }

    /// A missing input is reported by name and counted; the others are read.
    #[test]
    fn a_missing_input_is_reported_and_the_rest_read() {
        let missing = PathBuf::from("/nonexistent/kibitz/games.pgn");
        let mut errors = Errors::default();
        let summary = Replay::new(vec![missing, sample()], ReplaySettings::default())
            .run(&mut errors)
            .unwrap();
        assert_eq!(summary.input_errors, 1);
        assert_eq!(errors.0.len(), 1);
        assert!(errors.0[0].starts_with("/nonexistent/kibitz/games.pgn: "), "{:?}", errors.0);
        assert!(summary.games > 0 && summary.files[1].games == summary.games);
    }
}
