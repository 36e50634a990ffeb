//! `kibitz export`: a `.kbz` file in another format, shaped or not.

use std::{io::BufWriter, path::PathBuf, process::ExitCode};

use anyhow::{Context, Result, bail};
use clap::Args;
use kibitz::{Export, ExportFormat, ShapeRules, parse_piece_count_weights};

use super::common::Aside;

/// `--format` of `export`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum ExportFormatArg {
    /// Annotated PGN.
    Pgn,
    /// Stockfish's `.plain` text.
    Plain,
    /// EPD with `ce`/`dm`, `bm`, `acd`.
    Epd,
    /// JSON lines.
    Jsonl,
    /// bullet's 32-byte ChessBoard.
    Bullet,
    /// Stockfish's binpack.
    Binpack,
    /// viriformat (viridithas, bullet): games of 32-byte boards and
    /// 4-byte moves and scores.
    Viriformat,
    /// Parquet: one row per labelled position with its game's tags, zstd
    /// (DuckDB, polars, pandas read it). Needs --output.
    Parquet,
}

impl From<ExportFormatArg> for ExportFormat {
    fn from(f: ExportFormatArg) -> ExportFormat {
        match f {
            ExportFormatArg::Pgn => ExportFormat::Pgn,
            ExportFormatArg::Plain => ExportFormat::Plain,
            ExportFormatArg::Epd => ExportFormat::Epd,
            ExportFormatArg::Jsonl => ExportFormat::Jsonl,
            ExportFormatArg::Bullet => ExportFormat::Bullet,
            ExportFormatArg::Binpack => ExportFormat::Binpack,
            ExportFormatArg::Viriformat => ExportFormat::Viriformat,
            ExportFormatArg::Parquet => ExportFormat::Parquet,
        }
    }
}

/// Arguments of `kibitz export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// A `.kbz` file.
    file: PathBuf,
    /// The format to write.
    #[arg(long, value_enum)]
    format: ExportFormatArg,
    /// Write here (default: standard output).
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    /// Shaping: leave out scores beyond ±N centipawns, and mates.
    #[arg(long, value_name = "N", help_heading = "Shaping (every format)")]
    max_score: Option<i32>,
    /// Shaping: leave out positions whose game's result has a probability
    /// below P (0 to 1) under nnue-pytorch's win-rate model of the score
    /// and ply (its loader skips them at random; this is deterministic).
    #[arg(long, value_name = "P", help_heading = "Shaping (every format)")]
    wdl_consistency: Option<f64>,
    /// Shaping: resample to a distribution of piece counts:
    /// `nnue-pytorch` (its loader's target, 2 - ((n - 16) / 16)^2),
    /// `uniform`, or 33 comma-separated weights for 0 to 32 pieces. Reads
    /// the file twice.
    #[arg(long, value_name = "WEIGHTS", help_heading = "Shaping (every format)")]
    piece_count_weights: Option<String>,
    /// Selection: leave out positions before this ply of their game (as
    /// annotate's --skip-plies; for files labelled at every position, such
    /// as self-play's).
    #[arg(
        long,
        value_name = "PLIES",
        default_value_t = 0,
        help_heading = "Shaping (every format)"
    )]
    skip_plies: u32,
    /// Selection: leave out positions in check.
    #[arg(long, help_heading = "Shaping (every format)")]
    skip_check: bool,
    /// Selection: leave out positions whose best move captures or promotes.
    #[arg(long, help_heading = "Shaping (every format)")]
    skip_captures: bool,
    /// Seed of the piece-count resampling.
    #[arg(long, default_value_t = 0, help_heading = "Shaping (every format)")]
    seed: u64,
}

impl ExportArgs {
    fn shape_rules(&self) -> Result<ShapeRules> {
        if let Some(p) = self.wdl_consistency
            && !(0.0..=1.0).contains(&p)
        {
            bail!("--wdl-consistency {p}: a probability from 0 to 1");
        }
        if let Some(n) = self.max_score
            && n < 0
        {
            bail!("--max-score {n}: centipawns, 0 or more");
        }
        let weights = self
            .piece_count_weights
            .as_deref()
            .map(|list| {
                parse_piece_count_weights(list).with_context(|| {
                    format!(
                        "--piece-count-weights {list}: nnue-pytorch, uniform, or 33 weights (0 \
                         to 32 pieces), none negative"
                    )
                })
            })
            .transpose()?;
        Ok(ShapeRules {
            skip_plies: self.skip_plies,
            skip_check: self.skip_check,
            skip_captures: self.skip_captures,
            max_score: self.max_score,
            wdl_consistency: self.wdl_consistency,
            piece_count_weights: weights,
            seed: self.seed,
        })
    }
}

/// Writes a Parquet export aside ([`Aside`]): its footer is written
/// last, so a run that stops leaves no file that looks whole.
#[cfg(feature = "parquet")]
fn write_parquet(job: Export, output: &std::path::Path) -> Result<(kibitz::ExportReport, Aside)> {
    let (aside, out) = Aside::create(output)?;
    Ok((job.run_parquet(out)?, aside))
}

#[cfg(not(feature = "parquet"))]
fn write_parquet(_job: Export, _output: &std::path::Path) -> Result<(kibitz::ExportReport, Aside)> {
    bail!("--format parquet: this kibitz was built without the `parquet` feature")
}

/// Runs `kibitz export`, block by block. A file named by `--output` is
/// written aside and given its name only when the whole input was read
/// (exit code 0): a failed export leaves no file.
pub fn run(args: ExportArgs) -> Result<ExitCode> {
    if let Some(output) = &args.output {
        super::refuse_output_over_input(output, std::slice::from_ref(&args.file))?;
    }
    let job = Export::new(args.file.clone(), args.format.into(), Some(args.shape_rules()?));
    let (report, aside) = if matches!(args.format, ExportFormatArg::Parquet) {
        let Some(output) = &args.output else {
            bail!(
                "--format parquet needs --output FILE: a Parquet file's footer is written last, \
                 and kibitz gives the file its name only once it is complete"
            );
        };
        let (report, aside) = write_parquet(job, output)?;
        (report, Some(aside))
    } else {
        match &args.output {
            Some(p) => {
                let (aside, out) = Aside::create(p)?;
                (job.run(out)?, Some(aside))
            }
            None => (job.run(BufWriter::with_capacity(1 << 16, super::stdout()))?, None),
        }
    };
    if let Some(s) = report.shaped {
        eprintln!(
            "kibitz: shaping: {} labels read, {} kept; left out: {} by the selection, {} by \
             --max-score, {} by --wdl-consistency, {} by --piece-count-weights",
            s.labels, s.kept, s.selection, s.max_score, s.wdl_consistency, s.piece_count
        );
    }
    let whole = report.complete && report.corrupt.is_none();
    if let (Some(output), Some(aside)) = (&args.output, aside) {
        let s = report.stats;
        if whole {
            aside.keep()?;
            eprintln!(
                "kibitz: {} games, {} records written, {} positions without a move left out",
                s.games, s.written, s.skipped
            );
        } else {
            eprintln!(
                "kibitz: {} is not written: {} could not be read whole (below)",
                output.display(),
                args.file.display()
            );
        }
    }
    Ok(super::end_of_reading(&args.file, report.complete, report.corrupt.as_ref(), report.read))
}
