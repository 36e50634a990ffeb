//! `kibitz probe`: what the Syzygy tables say of positions: WDL (as the
//! WDL tables hold it, and with the position's 50-move counter counted),
//! DTZ and the tables' best move.

use std::{
    io::{BufRead, Write},
    process::ExitCode,
};

use anyhow::{Context, Result, bail};
use clap::Args;

use super::search::SyzygyArgs;
use kibitz::{FenOptions, Position, Tablebases};

/// Arguments of `kibitz probe`.
#[derive(Args, Debug)]
pub struct ProbeArgs {
    /// A FEN (quoted), or `-` for one FEN (or EPD line) per line of
    /// standard input.
    position: String,
    /// Moves to play first, in UCI (`e2e4 e7e5`).
    #[arg(long, num_args = 1.., value_name = "UCI")]
    moves: Vec<String>,
    #[command(flatten)]
    syzygy: SyzygyArgs,
    /// One JSON object per position instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs `kibitz probe`.
pub fn run(args: ProbeArgs) -> Result<ExitCode> {
    let Some(tables) = args.syzygy.open()? else {
        bail!("probe needs endgame tables: --syzygy FOLDERS or KIBITZ_SYZYGY");
    };
    let mut out = super::stdout();
    if !args.json {
        writeln!(out, "tables    {}", tables.describe())?;
    }
    let mut failed = false;
    if args.position == "-" {
        for (i, line) in std::io::stdin().lock().lines().enumerate() {
            let line = line.context("standard input")?;
            if line.trim().is_empty() {
                continue;
            }
            match position(&line, &[]) {
                Ok(pos) => print(&mut out, &tables, &pos, args.json)?,
                Err(e) => {
                    eprintln!("kibitz: standard input: line {}: {e:#}", i + 1);
                    failed = true;
                }
            }
        }
    } else {
        let pos = position(&args.position, &args.moves)?;
        print(&mut out, &tables, &pos, args.json)?;
    }
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The position of a FEN or EPD line (an EPD line has no move counters:
/// they read as 0 and 1), after `moves`.
fn position(text: &str, moves: &[String]) -> Result<Position> {
    let fields: Vec<&str> = text.split_whitespace().collect();
    let fen = match fields.len() {
        0..4 => bail!("{text:?} is not a FEN"),
        4 => format!("{} 0 1", fields.join(" ")),
        5 => format!("{} 1", fields.join(" ")),
        _ if fields[4].parse::<u32>().is_ok() => fields[..6].join(" "),
        _ => format!("{} 0 1", fields[..4].join(" ")),
    };
    let mut pos = Position::from_fen_with(fen.as_bytes(), FenOptions::default())?;
    for m in moves {
        let mv = pos.parse_uci(m)?;
        pos.do_move(mv);
    }
    Ok(pos)
}

/// One position's line.
fn print(out: &mut impl Write, tables: &Tablebases, pos: &Position, json: bool) -> Result<()> {
    let wdl = tables.probe_wdl_after_zeroing(pos);
    let wdl50 = tables.probe_wdl(pos);
    let dtz = tables.probe_dtz(pos);
    let best = tables.answer(pos).and_then(|a| a.best).map(|m| pos.uci(m));
    if json {
        let line = serde_json::json!({
            "fen": pos.fen(),
            "wdl": wdl.map(|w| w.value()),
            "wdl50": wdl50.map(|w| w.value()),
            "dtz": dtz,
            "best": best,
        });
        writeln!(out, "{line}")?;
        return Ok(());
    }
    let Some(w) = wdl else {
        writeln!(out, "{}  not in the tables", pos.fen())?;
        return Ok(());
    };
    let fifty = match wdl50 {
        Some(w50) if w50 != w => {
            format!(", {} with the 50-move counter at {}", w50.name(), pos.rule50())
        }
        Some(_) => String::new(),
        None => ", the 50-move counter leaves it open (DTZ rounded)".to_string(),
    };
    writeln!(
        out,
        "{}  wdl {} ({}{fifty})  dtz {}  best {}",
        pos.fen(),
        w.value(),
        w.name(),
        dtz.map_or("?".to_string(), |d| d.to_string()),
        best.as_deref().unwrap_or("-")
    )?;
    Ok(())
}
