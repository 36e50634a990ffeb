//! `kibitz perft`: one position, or a whole suite with its expected counts.

use std::{io::Write, path::PathBuf, process::ExitCode, time::Instant};

use anyhow::{Context, Result, bail};
use clap::Args;

use kibitz::{CastlingMode, FenOptions, Position, perft};

/// Arguments of `kibitz perft`.
#[derive(Args, Debug)]
pub struct PerftArgs {
    /// A FEN (quoted) or `startpos`; not with --suite.
    #[arg(required_unless_present = "suite")]
    position: Option<String>,
    /// Depth in plies.
    #[arg(required_unless_present = "suite")]
    depth: Option<u32>,
    /// Print the count below each legal move.
    #[arg(long)]
    divide: bool,
    /// Make and unmake every leaf move instead of counting the last ply in bulk.
    #[arg(long)]
    make_leaves: bool,
    /// Read Chess960 castling (X-FEN / Shredder-FEN), and write castling as king takes rook.
    #[arg(long)]
    chess960: bool,
    /// Run every position of a suite file (`FEN ;D1 n ;D2 n` lines, or
    /// `id`/`epd`/`perft d n` blocks) and check the counts.
    #[arg(long, conflicts_with_all = ["position", "depth", "divide"])]
    suite: Option<PathBuf>,
    /// With --suite: skip depths whose expected count exceeds this.
    #[arg(long, default_value_t = u64::MAX)]
    max_nodes: u64,
    /// With --suite: only depths up to this.
    #[arg(long)]
    max_depth: Option<u32>,
}

fn options(chess960: bool) -> FenOptions {
    FenOptions {
        castling_mode: chess960.then_some(CastlingMode::Chess960),
        ..FenOptions::default()
    }
}

fn count(pos: &mut Position, depth: u32, make_leaves: bool) -> u64 {
    if make_leaves { perft::perft_make_leaves(pos, depth) } else { perft::perft(pos, depth) }
}

fn mnps(nodes: u64, seconds: f64) -> f64 {
    if seconds > 0.0 { nodes as f64 / seconds / 1e6 } else { 0.0 }
}

/// Runs `kibitz perft`.
pub fn run(args: PerftArgs) -> Result<ExitCode> {
    let mut out = super::stdout();
    if let Some(path) = &args.suite {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let suite =
            perft::parse_suite(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        let (mut pairs, mut failures, mut total_nodes) = (0u64, 0u64, 0u64);
        let start = Instant::now();
        for entry in &suite {
            let mut pos =
                match Position::from_fen_with(entry.fen.as_bytes(), options(args.chess960)) {
                    Ok(p) => p,
                    Err(e) => {
                        writeln!(out, "{}:{}: {e}", path.display(), entry.line)?;
                        failures += 1;
                        continue;
                    }
                };
            for &(depth, expected) in &entry.counts {
                if expected > args.max_nodes || args.max_depth.is_some_and(|d| depth > d) {
                    continue;
                }
                let got = count(&mut pos, depth, args.make_leaves);
                pairs += 1;
                total_nodes += got;
                if got != expected {
                    failures += 1;
                    writeln!(
                        out,
                        "{}:{}: MISMATCH {} depth {depth}: expected {expected}, got {got}",
                        path.display(),
                        entry.line,
                        entry.name
                    )?;
                }
            }
        }
        let seconds = start.elapsed().as_secs_f64();
        writeln!(
            out,
            "suite {}: {} positions, {pairs} (position, depth) pairs, {failures} failures, \
             {total_nodes} nodes, {seconds:.3} s, {:.1} Mnps",
            path.display(),
            suite.len(),
            mnps(total_nodes, seconds)
        )?;
        return Ok(if failures == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) });
    }

    let (Some(position), Some(depth)) = (args.position, args.depth) else {
        bail!("a position and a depth are required without --suite");
    };
    let mut pos = if position == "startpos" {
        let mut p = Position::startpos();
        p.set_chess960(args.chess960);
        p
    } else {
        Position::from_fen_with(position.as_bytes(), options(args.chess960))?
    };
    let start = Instant::now();
    let nodes = if args.divide && depth > 0 {
        let mut total = 0;
        for (m, n) in perft::divide(&mut pos, depth, args.make_leaves) {
            writeln!(out, "{}: {n}", pos.uci(m))?;
            total += n;
        }
        writeln!(out)?;
        total
    } else {
        count(&mut pos, depth, args.make_leaves)
    };
    let seconds = start.elapsed().as_secs_f64();
    writeln!(out, "nodes {nodes}")?;
    writeln!(out, "seconds {seconds:.3}")?;
    writeln!(out, "mnps {:.1}", mnps(nodes, seconds))?;
    writeln!(out, "sliders {}", kibitz::attacks::slider_kernel().name())?;
    Ok(ExitCode::SUCCESS)
}
