//! `kibitz merge`: the shards of one run joined into the file the unsharded
//! run writes.

use std::{io::Write, path::PathBuf, process::ExitCode};

use anyhow::Result;
use clap::Args;
use kibitz::{Merge, MergeError};

use super::dedup::{KeepArg, parse_size};

/// Arguments of `kibitz merge`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The shard files (any order).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The merged file.
    #[arg(long, short = 'o')]
    output: PathBuf,
    /// Replace an existing output file.
    #[arg(long)]
    force: bool,
    /// Then keep one label per position across the shards: the first, the
    /// last or the deepest (see `kibitz dedup`).
    #[arg(long, value_enum)]
    keep: Option<KeepArg>,
    /// Memory for the positions seen by --keep (bytes, or with K, M, G).
    #[arg(long, value_name = "SIZE", default_value = "1G", value_parser = parse_size)]
    dedup_memory: usize,
}

/// Runs `kibitz merge`.
pub fn run(args: MergeArgs) -> Result<ExitCode> {
    let keep = args.keep.map(|k| (k.keep(), args.dedup_memory));
    let job =
        Merge::new(args.files.clone(), args.output.clone(), args.force, keep).map_err(advice)?;
    let report = job.run().map_err(|e| {
        advice(e).context(format!("merge failed; {} not written", args.output.display()))
    })?;
    if let Some(r) = report.dedup {
        writeln!(
            super::stdout(),
            "kibitz: {} labels, {} kept ({} duplicates dropped)",
            r.labels,
            r.kept,
            r.labels - r.kept
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A merge error, with the flag that deals with an output that exists.
fn advice(e: MergeError) -> anyhow::Error {
    match e {
        MergeError::Output { path, source } if super::is_exists(&source) => {
            anyhow::anyhow!("{}: exists: use --force to replace it", path.display())
        }
        e => e.into(),
    }
}
