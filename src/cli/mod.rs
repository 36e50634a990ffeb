//! The command line: clap arguments, validated per command, one function per
//! command. Errors print with their causes; a broken pipe (`kibitz ... |
//! head`) exits quietly with success, as Unix filters do.

use std::{
    io::{self, Write},
    path::{Path, PathBuf},
    process::ExitCode,
};

use clap::{Parser, Subcommand};

mod annotate;
mod common;
mod dedup;
pub(crate) mod eval;
mod export;
mod inspect;
mod merge;
mod perft;
mod probe;
pub(crate) mod replay;
mod report;
mod search;
mod selfplay;
mod stats;
mod train;
mod tune;
mod uci;

/// Bulk chess analysis: replay and verify game databases, label positions
/// with a fixed-depth search, write compact checksummed records.
#[derive(Parser, Debug)]
#[command(name = "kibitz", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// The main job: label the positions of games (or EPD lines) and write a .kbz file.
    Annotate(Box<annotate::AnnotateArgs>),
    /// Show a .kbz file: header, counts, sizes, score histogram; verify every block.
    Inspect(inspect::InspectArgs),
    /// Convert a .kbz file: annotated PGN, Stockfish plain or binpack, EPD,
    /// JSON lines, bullet, viriformat.
    Export(export::ExportArgs),
    /// Sum up analysed games: a page with a player table and an evaluation
    /// graph per game, and JSON lines per game and per player.
    Report(report::ReportArgs),
    /// What a data set holds: counts and histograms (score, pieces, ply,
    /// phase, result, side to move, king squares), as text, JSON and plots.
    Stats(stats::StatsArgs),
    /// Drop duplicate positions across .kbz files, keeping the first, the
    /// last or the deepest label of each; bounded memory.
    Dedup(dedup::DedupArgs),
    /// Join the shard files of one run into the file an unsharded run writes.
    Merge(merge::MergeArgs),
    /// Self-play training data: games from an opening book played by the
    /// built-in search or a UCI engine, adjudicated, every position written
    /// with its score and the game's result.
    Selfplay(Box<selfplay::SelfPlayArgs>),
    /// Train a small NNUE on the CPU from labelled files (.kbz, binpack,
    /// plain, viriformat); `--net` then evaluates with it.
    Train(Box<train::TrainArgs>),
    /// Count leaf nodes of the legal move tree (move generator check and speed).
    Perft(perft::PerftArgs),
    /// Replay and verify games: every move played, every key checked, every
    /// bad game located.
    Replay(replay::ReplayArgs),
    /// Search one position: an info line per depth, then the best move.
    Search(search::SearchArgs),
    /// Search the built-in bench positions: total nodes (a signature) and speed.
    Bench(search::BenchArgs),
    /// The static evaluation of a position: hand-written, and with a net as
    /// Stockfish 15.1's `eval` prints it.
    Eval(eval::EvalArgs),
    /// What the Syzygy endgame tables say of positions: WDL, DTZ and the
    /// best move.
    Probe(probe::ProbeArgs),
    /// Speak the UCI protocol on stdin and stdout (for GUIs and match tools).
    Uci,
    /// Fit the evaluation weights to game results (for developers).
    Tune(tune::TuneArgs),
}

/// Refuses to write `output` when it is one of `inputs` (the same file,
/// whatever the paths say): the output is created or truncated before the
/// input is read, so the input would be lost.
pub(crate) fn refuse_output_over_input(output: &Path, inputs: &[PathBuf]) -> anyhow::Result<()> {
    if !output.exists() {
        return Ok(());
    }
    if let Some(input) = inputs.iter().find(|input| same_file(output, input)) {
        anyhow::bail!(
            "the output {} is the input {}: it would be overwritten before it is read",
            output.display(),
            input.display()
        );
    }
    Ok(())
}

pub(crate) use kibitz::same_file;

/// Whether an error says that an output exists.
pub(crate) fn is_exists(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::AlreadyExists
}

/// The exit code after reading a `.kbz` through: 1, with the reason on
/// stderr, if a block was corrupt or the file has no end marker (what to do
/// about it depends on the command that wrote it: a `.partial` file is
/// the output of a dedup, merge or relabel that stopped, to be run again;
/// any other an interrupted annotate run, to be resumed).
pub(crate) fn end_of_reading(
    file: &Path,
    complete: bool,
    corrupt: Option<&kibitz::RecordError>,
    (blocks, games): (u64, u64),
) -> ExitCode {
    if let Some(e) = corrupt {
        eprintln!("kibitz: {e}");
        return ExitCode::from(1);
    }
    if !complete {
        eprintln!("kibitz: {}", incomplete_advice(file, blocks, games));
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// The message for a `.kbz` without an end marker, with what to do.
pub(crate) fn incomplete_advice(file: &Path, blocks: u64, games: u64) -> String {
    let what = if file.as_os_str().as_encoded_bytes().ends_with(b".partial") {
        "a dedup, merge or relabel that stopped before its end left it: run that command again \
         (its output appears only once complete)"
    } else {
        "the annotate or selfplay run that wrote it was interrupted or failed: continue it with the same \
         command and --resume"
    };
    format!(
        "{}: incomplete: no end marker after its {blocks} blocks ({games} games); {what}",
        file.display()
    )
}

/// An error and its causes on one line, each cause said once: a cause
/// whose text the message already holds (an error that prints its source)
/// is not repeated.
pub(crate) fn error_line(err: &anyhow::Error) -> String {
    let mut line = err.to_string();
    for cause in err.chain().skip(1) {
        let text = cause.to_string();
        if !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
    }
    line
}

/// Standard output, for the commands' results. A write that finds the reader
/// gone (`kibitz export ... | head`) fails with a broken pipe that carries
/// [`StdoutClosed`], which `main` takes for a quiet, successful end. A broken
/// pipe anywhere else (an engine that died, an `--errors` FIFO) stays an
/// error.
pub(crate) fn stdout() -> Stdout {
    Stdout(io::stdout().lock())
}

/// See [`stdout`].
pub(crate) struct Stdout(io::StdoutLock<'static>);

/// Marks the broken pipe of a closed standard output.
#[derive(Debug)]
struct StdoutClosed;

impl std::fmt::Display for StdoutClosed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("standard output closed")
    }
}

impl std::error::Error for StdoutClosed {}

fn mark_closed(e: io::Error) -> io::Error {
    if e.kind() == io::ErrorKind::BrokenPipe {
        io::Error::new(io::ErrorKind::BrokenPipe, StdoutClosed)
    } else {
        e
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf).map_err(mark_closed)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0.write_all(buf).map_err(mark_closed)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush().map_err(mark_closed)
    }
}

/// Parses the command line, runs the command, and maps the outcome to an
/// exit code: 0 success, 1 usage or input errors.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Annotate(args) => annotate::run(*args),
        Command::Inspect(args) => inspect::run(args),
        Command::Export(args) => export::run(args),
        Command::Merge(args) => merge::run(args),
        Command::Dedup(args) => dedup::run(args),
        Command::Selfplay(args) => selfplay::run(*args),
        Command::Train(args) => train::run(*args),
        Command::Report(args) => report::run(args),
        Command::Stats(args) => stats::run(args),
        Command::Perft(args) => perft::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Search(args) => search::run_search(args),
        Command::Bench(args) => search::run_bench(args),
        Command::Eval(args) => eval::run(args),
        Command::Probe(args) => probe::run(args),
        Command::Uci => uci::run(),
        Command::Tune(args) => tune::run(args),
    };
    search::SyzygyArgs::report_probe_errors();
    match result {
        Ok(code) => code,
        Err(err) => {
            // Standard output closed by its reader: stop quietly, as
            // ripgrep and coreutils do.
            if err.chain().any(|cause| {
                cause.is::<StdoutClosed>()
                    || cause
                        .downcast_ref::<io::Error>()
                        .and_then(io::Error::get_ref)
                        .is_some_and(|inner| inner.is::<StdoutClosed>())
            }) {
                return ExitCode::SUCCESS;
            }
            eprintln!("kibitz: {}", error_line(&err));
            ExitCode::from(1)
        }
    }
}
