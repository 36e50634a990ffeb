//! `kibitz inspect`: a `.kbz` file's header, counts, sizes and score
//! histogram, every block's checksum checked.

use std::{io::Write, path::PathBuf, process::ExitCode};

use anyhow::Result;
use clap::Args;
use kibitz::{Inspection, LabelSource, inspect};

use super::common::count;

/// Arguments of `kibitz inspect`.
#[derive(Args, Debug)]
pub struct InspectArgs {
    /// A `.kbz` file.
    file: PathBuf,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `kibitz inspect`. Exit code 1 if a block is corrupt or the file is
/// incomplete.
pub fn run(args: InspectArgs) -> Result<ExitCode> {
    let i = inspect(&args.file)?;
    let mut out = super::stdout();
    if args.json {
        let mut v = serde_json::to_value(&i)?;
        v["file"] = args.file.display().to_string().into();
        v["bytes_per_label"] = (i.bytes as f64 / i.labels.max(1) as f64).into();
        writeln!(out, "{v}")?;
    } else {
        print_header(&mut out, &args, &i)?;
        print_counts(&mut out, &i)?;
    }
    Ok(super::end_of_reading(&args.file, i.complete, i.corrupt.as_ref(), (i.blocks, i.games)))
}

fn print_header(out: &mut impl Write, args: &InspectArgs, i: &Inspection) -> Result<()> {
    let h = &i.header;
    let o = &h.options;
    writeln!(out, "file      {} ({} bytes)", args.file.display(), i.bytes)?;
    writeln!(out, "format    kbz version {}, written by kibitz {}", h.version, h.kibitz_version)?;
    let limit = if o.nodes > 0 {
        format!("{} nodes", o.nodes)
    } else if o.depth > 0 {
        format!("depth {}", o.depth)
    } else {
        "no limit recorded".to_string()
    };
    match (o.label, o.net.is_empty()) {
        (LabelSource::Search, true) => writeln!(out, "eval      hand-written")?,
        (_, false) => writeln!(out, "eval      NNUE {} (sha256 {})", o.net, o.net_sha256)?,
        _ => {}
    }
    match o.label {
        LabelSource::Search => {
            writeln!(out, "labels    kibitz's search, {limit}, {} MiB table", o.hash_mib)?
        }
        LabelSource::PgnEval => writeln!(out, "labels    the games' [%eval] comments")?,
        LabelSource::Table => {
            writeln!(out, "labels    the positions' evaluations (a table's column, EPD ce/dm)")?
        }
        LabelSource::Engine => {
            writeln!(out, "labels    engine {}", o.engine)?;
            writeln!(
                out,
                "limits    {} label{} where the engine stopped far short of its limit, {} where \
                 it went past twice it (flagged)",
                i.short_of_limit,
                if i.short_of_limit == 1 { "" } else { "s" },
                i.past_limit
            )?;
        }
    }
    if i.tablebase > 0 {
        writeln!(
            out,
            "tables    {} from the endgame tables, exact ({} cursed wins or blessed losses)",
            if i.tablebase == 1 {
                "1 label".to_string()
            } else {
                format!("{} labels", i.tablebase)
            },
            i.tablebase_50_move
        )?;
    }
    writeln!(out, "select    {}", selection(o))?;
    if o.pv_plies > 0 {
        writeln!(out, "variation up to {} plies per label", o.pv_plies)?;
    }
    if !o.relabelled_from.is_empty() {
        writeln!(out, "relabels  {}", o.relabelled_from)?;
    }
    if o.multipv > 1 {
        writeln!(out, "multipv   {} best moves per position, each with its score", o.multipv)?;
    }
    if let Some(p) = &o.selfplay {
        let starts = match (p.book.is_empty(), p.variant) {
            (false, _) => format!(
                "book {} ({}, sha256 {})",
                p.book,
                count(p.book_positions, "position"),
                p.book_sha256
            ),
            (true, 1) => "Chess960 starts".to_string(),
            (true, 2) => "double Fischer random starts".to_string(),
            _ => "the standard start".to_string(),
        };
        // A run bounded by positions alone records no game count.
        let games = if p.games == u64::MAX {
            "games until the positions asked for".to_string()
        } else {
            count(p.games, "game")
        };
        writeln!(
            out,
            "selfplay  {games} from {starts}, {}",
            count(u64::from(p.random_plies), "random ply")
        )?;
        if p.random_multipv > 0 {
            writeln!(
                out,
                "          random plies among the best {} moves within {} cp",
                p.random_multipv, p.random_multipv_diff
            )?;
        }
        writeln!(out, "adjudge   {}", adjudication(p))?;
    }
    if !o.filter.is_empty() {
        writeln!(out, "games     filtered by {}", super::annotate::describe_filter(&o.filter))?;
    }
    for input in &h.inputs {
        writeln!(out, "input     {} ({} bytes)", input.name, input.size)?;
    }
    Ok(())
}

fn print_counts(out: &mut impl Write, i: &Inspection) -> Result<()> {
    let end = if i.complete {
        "end marker present, its counts match"
    } else if i.corrupt.is_some() {
        "reading stopped at a corrupt block"
    } else {
        "NO END MARKER: incomplete (interrupted run; continue with --resume)"
    };
    writeln!(out, "blocks    {}, every checksum verified; {end}", i.blocks)?;
    let range = match (i.first_game, i.last_game) {
        (Some(a), Some(b)) => format!(" (input game indices {a} to {b})"),
        _ => String::new(),
    };
    writeln!(
        out,
        "games     {}{range}, {}, {} replayed",
        i.games,
        count(i.moves, "move"),
        count(i.chains_valid, "chain")
    )?;
    writeln!(
        out,
        "positions {} labelled ({}), {:.2} bytes each",
        i.labels,
        count(i.mate_labels, "mate score"),
        i.bytes as f64 / i.labels.max(1) as f64
    )?;
    let max = i.histogram.values().copied().max().unwrap_or(1).max(1);
    for (bucket, n) in &i.histogram {
        let bar = "#".repeat((n * 50 / max) as usize);
        writeln!(out, "  {:>+6} {:>9} {bar}", bucket, n)?;
    }
    Ok(())
}

/// A self-play run's adjudication rules, in words.
fn adjudication(p: &kibitz::SelfPlayOptions) -> String {
    let mut rules = Vec::new();
    if p.opening_score > 0 {
        rules.push(format!("an opening scored beyond {} cp is drawn again", p.opening_score));
    }
    if p.resign_plies > 0 {
        rules.push(format!(
            "resigned when the score stays beyond {} cp for {} plies",
            p.resign_score, p.resign_plies
        ));
    }
    if p.draw_plies > 0 {
        let band = if p.draw_score == 0 {
            "at exactly 0".to_string()
        } else {
            format!("within {} cp of 0", p.draw_score)
        };
        rules.push(format!(
            "drawn when the score stays {band} for {} plies from ply {}",
            p.draw_plies, p.draw_from_ply
        ));
    }
    if p.max_plies > 0 {
        rules.push(format!("drawn at ply {}", p.max_plies));
    }
    if rules.is_empty() { "none: games end on the board".to_string() } else { rules.join("; ") }
}

/// The selection a file was made with, in words.
fn selection(o: &kibitz::Options) -> String {
    let mut parts = Vec::new();
    if o.skip_plies > 0 {
        parts.push(format!("the first {} of each game skipped", count(o.skip_plies.into(), "ply")));
    }
    if o.skip_check {
        parts.push("positions in check skipped".to_string());
    }
    if o.skip_captures {
        parts.push("positions whose best move captures skipped".to_string());
    }
    if o.sample_ppm < 1_000_000 {
        parts.push(format!(
            "a share of {:.6} sampled (seed {})",
            f64::from(o.sample_ppm) / 1e6,
            o.seed
        ));
    }
    if o.dedup {
        parts.push("one label per position".to_string());
    }
    if o.shard.1 > 1 {
        parts.push(format!("shard {}/{}", o.shard.0, o.shard.1));
    }
    if parts.is_empty() { "every position".to_string() } else { parts.join("; ") }
}
