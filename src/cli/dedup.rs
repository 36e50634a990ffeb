//! `kibitz dedup`: one label per position across `.kbz` files.

use std::{io::Write, path::PathBuf, process::ExitCode};

use anyhow::{Result, anyhow};
use clap::Args;
use kibitz::{Dedup, DedupError, DedupSettings, Keep};

/// How `dedup` keeps one label per position.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeepArg {
    /// The first met (inputs in order).
    First,
    /// The last met.
    Last,
    /// The deepest search (the first of the deepest on a tie).
    Deepest,
}

impl KeepArg {
    pub(crate) fn keep(self) -> Keep {
        match self {
            KeepArg::First => Keep::First,
            KeepArg::Last => Keep::Last,
            KeepArg::Deepest => Keep::Deepest,
        }
    }
}

/// Arguments of `kibitz dedup`.
#[derive(Args, Debug)]
pub struct DedupArgs {
    /// `.kbz` files, read in order.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The file to write.
    #[arg(long, short = 'o')]
    output: PathBuf,
    /// Which label of a position to keep.
    #[arg(long, value_enum, default_value = "first")]
    keep: KeepArg,
    /// Memory for the positions seen (bytes, or with K, M, G); beyond it
    /// they go to disk in sorted runs beside the output.
    #[arg(long, value_name = "SIZE", default_value = "1G", value_parser = parse_size)]
    dedup_memory: usize,
    /// Replace an existing output file.
    #[arg(long)]
    force: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

pub(crate) fn parse_size(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => (&t[..i], t[i..].trim()),
        None => (t, ""),
    };
    let n: usize = digits.parse().map_err(|_| format!("{text}: a size such as 512M"))?;
    let unit = match unit.to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        _ => return Err(format!("{text}: a size such as 512M")),
    };
    n.checked_mul(unit).ok_or_else(|| format!("{text}: too large"))
}

/// Runs `kibitz dedup`.
pub fn run(args: DedupArgs) -> Result<ExitCode> {
    let args = DedupArgs { files: kibitz::expand_folders(&args.files)?, ..args };
    let settings =
        DedupSettings { keep: args.keep.keep(), memory: args.dedup_memory, replace: args.force };
    let report = Dedup::new(args.files.clone(), args.output.clone(), settings)
        .and_then(|job| job.run(&mut ()))
        .map_err(advice)?;
    let mut out = super::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&report)?)?;
    } else {
        writeln!(
            out,
            "dedup     {} games, {} labels read, {} kept ({} duplicates dropped); {} runs on disk; {} bytes written",
            report.games,
            report.labels,
            report.kept,
            report.labels - report.kept,
            report.runs,
            report.bytes_written
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A dedup error, with the flag that deals with an output that exists.
pub(crate) fn advice(e: DedupError) -> anyhow::Error {
    match e {
        DedupError::Io { path, source } if super::is_exists(&source) => {
            anyhow!("{}: exists: use --force to replace it", path.display())
        }
        e => e.into(),
    }
}
