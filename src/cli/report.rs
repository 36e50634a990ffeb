//! `kibitz report`: the analysis of labelled databases summed up per game
//! and per player, as one HTML page and as JSON lines.

use std::{io::Write, path::PathBuf, process::ExitCode};

use anyhow::{Context, Result};
use clap::Args;
use kibitz::{KbzReader, Report, analysis::analyse};

use super::common::create_output;

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// `.kbz` files, best made with `annotate --preset analysis` (every
    /// position labelled).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The HTML page to write.
    #[arg(long, short = 'o')]
    output: PathBuf,
    /// Also write JSON lines here: one per game (`"kind":"game"`), then one
    /// per player (`"kind":"player"`).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Games detailed on the page (summary and graph), the first ones read
    /// (0: none); the JSON has them all.
    #[arg(long, value_name = "N", default_value_t = 200)]
    games: usize,
    /// Players listed on the page, most games first (0: all); the JSON has
    /// them all.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    players: usize,
}

#[derive(serde::Serialize)]
struct Line<'a, T: serde::Serialize> {
    kind: &'a str,
    #[serde(flatten)]
    value: &'a T,
}

/// Runs `kibitz report`.
pub fn run(args: ReportArgs) -> Result<ExitCode> {
    for out in std::iter::once(&args.output).chain(&args.json) {
        super::refuse_output_over_input(out, &args.files)?;
        kibitz::check_output_folder(out)
            .with_context(|| format!("cannot create {}", out.display()))?;
    }
    let mut report = Report::new(args.games);
    let mut json = args.json.as_ref().map(create_output).transpose()?;
    let mut partial = 0u64;
    let mut failed = false;
    for path in &args.files {
        let mut reader = KbzReader::open(path)?;
        if !reader.header.options.labels_every_position() {
            eprintln!(
                "kibitz: {}: not every position is labelled (made without --preset analysis): \
                 judgments are missing where labels are, and totals count only labelled moves",
                path.display()
            );
        }
        let name = path.display().to_string();
        while let Some(next) = reader.next_block() {
            let (_, _, block) = match next {
                Ok(b) => b,
                Err(e) => {
                    // What was read stays in the report; the rest of this
                    // file cannot be trusted.
                    eprintln!("kibitz: {e}");
                    failed = true;
                    break;
                }
            };
            for record in &block {
                let analysis = match analyse(record) {
                    Ok(a) => a,
                    Err(e) => {
                        eprintln!("kibitz: {name}: game {}: {e}", record.index + 1);
                        failed = true;
                        continue;
                    }
                };
                if analysis.unlabelled > 0 {
                    partial += 1;
                }
                let summary = report.add(&name, record, &analysis);
                if let Some(out) = json.as_mut() {
                    serde_json::to_writer(&mut *out, &Line { kind: "game", value: &summary })?;
                    out.write_all(b"\n")?;
                }
            }
        }
    }
    if let Some(out) = json.as_mut() {
        for p in report.players() {
            serde_json::to_writer(&mut *out, &Line { kind: "player", value: &p })?;
            out.write_all(b"\n")?;
        }
        out.flush()?;
    }
    let mut page = create_output(&args.output)?;
    report.write_html(&mut page, args.players)?;
    page.flush().with_context(|| format!("cannot write {}", args.output.display()))?;
    eprintln!(
        "kibitz: {} games, {} players; {} games with unlabelled moves; page {}",
        report.games,
        report.players().len(),
        partial,
        args.output.display()
    );
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
