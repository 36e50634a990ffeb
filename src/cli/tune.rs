//! `kibitz tune`: fit the evaluation weights to game results (Texel
//! tuning) and write them as Rust source. For developers: the weights are
//! compiled in, so rebuild after writing them.

use std::{path::PathBuf, process::ExitCode, time::Instant};

use anyhow::{Context, Result};
use clap::Args;

use kibitz::{collect_tuning_positions, texel};

/// Arguments of `kibitz tune`.
#[derive(Args, Debug)]
pub struct TuneArgs {
    /// PGN files with results (plain or zstd).
    #[arg(required = true)]
    games: Vec<PathBuf>,
    /// Use every Nth qualifying position.
    #[arg(long, default_value_t = 1)]
    stride: usize,
    /// Adam epochs (full passes over the positions).
    #[arg(long, default_value_t = 1000)]
    epochs: usize,
    /// Write the material and piece-square parameters here
    /// (src/chess/psqt_params.rs).
    #[arg(long)]
    psqt: Option<PathBuf>,
    /// Write the term weights here (src/search/weights.rs).
    #[arg(long)]
    weights: Option<PathBuf>,
}

/// Runs `kibitz tune`.
pub fn run(args: TuneArgs) -> Result<ExitCode> {
    let start = Instant::now();
    let samples =
        collect_tuning_positions(&args.games, args.stride).context("reading the games")?;
    anyhow::ensure!(!samples.is_empty(), "no training positions in the games given");
    eprintln!("{} positions in {:.1} s", samples.len(), start.elapsed().as_secs_f64());
    let k = texel::fit_k(&samples, &texel::current_weights());
    eprintln!("K = {k:.4}");
    let (w, before, after) = texel::tune(&samples, k, args.epochs, |epoch, loss| {
        eprintln!("epoch {epoch:>5}: loss {loss:.6}");
    });
    eprintln!("loss {before:.6} -> {after:.6}");
    let note = format!(
        "{} positions from {} file(s), K = {k:.4}, {} epochs, loss {before:.6} -> {after:.6}",
        samples.len(),
        args.games.len(),
        args.epochs
    );
    if let Some(path) = &args.psqt {
        std::fs::write(path, texel::psqt_source(&w, &note))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(path) = &args.weights {
        std::fs::write(path, texel::weights_source(&w, &note))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}
