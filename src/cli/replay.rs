//! `kibitz replay`: replay and verify game databases; report every rejected
//! game with its location, and the speed.

use std::{
    fs::File,
    io::{self, BufWriter, Write},
    path::PathBuf,
    process::ExitCode,
};

use anyhow::{Context, Result};
use clap::Args;
use indicatif::ProgressBar;

use kibitz::{
    io::source::Format,
    pipeline::{
        database::{Replay, ReplaySettings, ReplaySink},
        replay::{Rejected, Verify},
        stats::Summary,
    },
};

use crate::cli::common::{RejectReport, create_output, default_threads, input_bytes, progress_bar};

/// Arguments of `kibitz replay`.
#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// Input files: PGN or EPD, plain, zstd or gzip (detected from the
    /// bytes); `-` reads standard input.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Worker threads (default: all cores).
    #[arg(long, short = 'j')]
    threads: Option<usize>,
    /// What to check after every move.
    #[arg(long, value_enum, default_value_t = VerifyArg::Keys)]
    verify: VerifyArg,
    /// Read the inputs as this format instead of sniffing it.
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
    /// Read at most this many bytes of text from each input (whole games
    /// only): a bound for endless inputs such as a device or a pipe.
    #[arg(long, value_name = "BYTES")]
    max_bytes: Option<u64>,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
    /// Write one JSON line per rejected game to FILE.
    #[arg(long, value_name = "FILE")]
    errors: Option<PathBuf>,
    /// Write `game, ply, Polyglot key, FEN` (tab-separated) for every
    /// position to FILE; games are numbered from 1 across all inputs.
    #[arg(long, value_name = "FILE")]
    keys: Option<PathBuf>,
    /// Exit with code 2 if any game was rejected.
    #[arg(long)]
    strict: bool,
    /// No progress bar.
    #[arg(long, short = 'q')]
    quiet: bool,
}

/// `--verify`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum VerifyArg {
    /// Replay only.
    None,
    /// After every move, the Polyglot key, the pawn key and the material
    /// key equal their from-scratch values.
    Keys,
    /// After every move, every incremental field of the position's state
    /// (checkers, pins, check squares, scores, keys...) equals its
    /// from-scratch value.
    Full,
    /// Full, and each game unwound to its start must equal the start.
    Undo,
}

impl From<VerifyArg> for Verify {
    fn from(v: VerifyArg) -> Verify {
        match v {
            VerifyArg::None => Verify::None,
            VerifyArg::Keys => Verify::Keys,
            VerifyArg::Full => Verify::Full,
            VerifyArg::Undo => Verify::Undo,
        }
    }
}

/// `--format`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum FormatArg {
    /// PGN games.
    Pgn,
    /// EPD positions, one per line.
    Epd,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Pgn => Format::Pgn,
            FormatArg::Epd => Format::Epd,
        }
    }
}

/// A sink that writes the `--keys` and `--errors` files and draws the bar.
struct Reports {
    keys: Option<BufWriter<File>>,
    rejects: RejectReport,
    bar: ProgressBar,
}

impl ReplaySink for Reports {
    fn progress(&mut self, bytes: u64, summary: &Summary) {
        self.bar.set_position(bytes);
        self.bar.set_message(format!(
            "{} games, {:.2} M plies/s",
            summary.games,
            summary.plies as f64 / summary.seconds.max(1e-9) / 1e6
        ));
    }

    fn input_error(&mut self, file: &str, offset: Option<u64>, message: &str) {
        let at = offset.map(|o| format!(" at byte {o}")).unwrap_or_default();
        self.bar.suspend(|| eprintln!("kibitz: {file}{at}: {message}"));
    }

    fn rejected(
        &mut self,
        file: &str,
        game_in_file: u64,
        game: u64,
        r: &Rejected,
    ) -> io::Result<()> {
        self.rejects.add(&self.bar, file, game_in_file, game, r)
    }

    fn key_line(&mut self, game: u64, line: &[u8]) -> io::Result<()> {
        if let Some(out) = self.keys.as_mut() {
            write!(out, "{game}\t")?;
            out.write_all(line)?;
        }
        Ok(())
    }
}

/// Runs `kibitz replay`.
pub fn run(args: ReplayArgs) -> Result<ExitCode> {
    // Before any file is created: an output that is an input would be
    // emptied before it is read.
    for (flag, out) in [("--keys", &args.keys), ("--errors", &args.errors)] {
        if let Some(out) = out {
            super::refuse_output_over_input(out, &args.inputs)
                .with_context(|| format!("{flag} {}", out.display()))?;
        }
    }
    if let (Some(keys), Some(errors)) = (&args.keys, &args.errors)
        && super::same_file(keys, errors)
    {
        anyhow::bail!("--keys and --errors name the same file {}", keys.display());
    }
    let settings = ReplaySettings {
        format: args.format.map(Format::from),
        threads: args.threads.unwrap_or_else(default_threads).max(1),
        verify: args.verify.into(),
        keys: args.keys.is_some(),
        max_bytes: args.max_bytes,
    };
    let mut reports = Reports {
        keys: args.keys.as_ref().map(create_output).transpose()?,
        rejects: RejectReport::open(args.errors.as_ref())?,
        bar: progress_bar(input_bytes(&args.inputs), args.quiet),
    };
    reports.rejects.start(0)?;
    let summary = Replay::new(args.inputs.clone(), settings).run(&mut reports);
    reports.bar.finish_and_clear();
    let summary = summary.context("writing the --keys or --errors file")?;
    if let Some(mut out) = reports.keys {
        out.flush().context("writing the --keys file")?;
    }
    reports.rejects.finish()?;
    let mut stdout = super::stdout();
    if args.json {
        writeln!(stdout, "{}", summary.to_json())?;
    } else {
        writeln!(stdout, "{summary}")?;
    }
    // 2: --strict and a game was rejected; 1: an input could not be read
    // whole (missing, binary, broken compression, cut short); the summary
    // covers everything that could be read either way.
    Ok(if args.strict && summary.rejected_games > 0 {
        ExitCode::from(2)
    } else if summary.input_errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
