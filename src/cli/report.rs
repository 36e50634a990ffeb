//! `kibitz report`: the analysis of labelled databases summed up per game
//! and per player, as one HTML page and as JSON lines.

use std::{io::Write, path::PathBuf, process::ExitCode};

use anyhow::{Context, Result};
use clap::Args;
use kibitz::{KbzReader, Report, analysis::analyse};

use super::common::Aside;

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
    /// Also write the games and the players as Parquet tables in this
    /// folder (made if missing): `games.parquet`, `players.parquet`, with
    /// Lichess's names for its columns (they join Lichess's games on Site).
    #[arg(long, value_name = "DIR")]
    parquet: Option<PathBuf>,
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
    // Every output is written aside and named only when every game was
    // read: a report with errors leaves no file.
    let (json_aside, mut json) = match &args.json {
        Some(p) => {
            let (aside, out) = Aside::create(p)?;
            (Some(aside), Some(out))
        }
        None => (None, None),
    };
    let mut tables = args.parquet.as_ref().map(|dir| Tables::create(dir)).transpose()?;
    let (partial, failed) = read_files(&args.files, &mut report, &mut json, &mut tables)?;
    if failed {
        eprintln!(
            "kibitz: {} is not written (nor the JSON lines or tables asked for): an input could \
             not be read whole (above)",
            args.output.display()
        );
        return Ok(ExitCode::from(1));
    }
    if let Some(mut out) = json.take() {
        for p in report.players() {
            serde_json::to_writer(&mut out, &Line { kind: "player", value: &p })?;
            out.write_all(b"\n")?;
        }
        out.flush()?;
    }
    let mut written: Vec<Aside> = json_aside.into_iter().collect();
    if let Some(t) = tables {
        written.extend(t.finish(&report.players())?);
    }
    let (page_aside, mut page) = Aside::create(&args.output)?;
    report.write_html(&mut page, args.players)?;
    page.flush().with_context(|| format!("cannot write {}", args.output.display()))?;
    drop(page);
    written.push(page_aside);
    written.into_iter().try_for_each(Aside::keep)?;
    eprintln!(
        "kibitz: {} games, {} players; {} games with unlabelled moves; page {}",
        report.games,
        report.players().len(),
        partial,
        args.output.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Reads every game of `files` into the report (and the JSON lines and
/// tables asked for); returns the games with unlabelled moves, and
/// whether some game or block could not be read.
fn read_files(
    files: &[PathBuf],
    report: &mut Report,
    json: &mut Option<std::io::BufWriter<std::fs::File>>,
    tables: &mut Option<Tables>,
) -> Result<(u64, bool)> {
    let mut partial = 0u64;
    let mut failed = false;
    for path in files {
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
                    // The rest of this file cannot be trusted.
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
                if let Some(t) = tables.as_mut() {
                    t.game(&summary)?;
                }
                if let Some(out) = json.as_mut() {
                    serde_json::to_writer(&mut *out, &Line { kind: "game", value: &summary })?;
                    out.write_all(b"\n")?;
                }
            }
        }
    }
    Ok((partial, failed))
}

/// The Parquet tables of `--parquet DIR`, written under temporary names
/// (`games.parquet.partial`) and named when complete.
#[cfg(feature = "parquet")]
struct Tables {
    dir: PathBuf,
    games: kibitz::report_tables::GamesTable<std::io::BufWriter<std::fs::File>>,
    games_aside: Aside,
}

#[cfg(feature = "parquet")]
impl Tables {
    fn create(dir: &std::path::Path) -> Result<Tables> {
        kibitz::make_output_folder(dir)
            .with_context(|| format!("--parquet {}: cannot make the folder", dir.display()))?;
        let (games_aside, out) = Aside::create(&dir.join("games.parquet"))?;
        let games = kibitz::report_tables::GamesTable::new(out)?;
        Ok(Tables { dir: dir.to_path_buf(), games, games_aside })
    }

    fn game(&mut self, g: &kibitz::GameSummary) -> Result<()> {
        Ok(self.games.add(g)?)
    }

    /// Writes the players' table and the games' footer; returns both
    /// files, to be given their names.
    fn finish(self, players: &[kibitz::PlayerSummary]) -> Result<Vec<Aside>> {
        self.games.finish()?.flush()?;
        let (players_aside, out) = Aside::create(&self.dir.join("players.parquet"))?;
        kibitz::report_tables::write_players(out, players)?.flush()?;
        Ok(vec![self.games_aside, players_aside])
    }
}

/// Without Parquet support, `--parquet` is refused.
#[cfg(not(feature = "parquet"))]
struct Tables;

#[cfg(not(feature = "parquet"))]
impl Tables {
    fn create(_dir: &std::path::Path) -> Result<Tables> {
        anyhow::bail!("--parquet: this kibitz was built without the `parquet` feature")
    }

    fn game(&mut self, _g: &kibitz::GameSummary) -> Result<()> {
        Ok(())
    }

    fn finish(self, _players: &[kibitz::PlayerSummary]) -> Result<Vec<Aside>> {
        Ok(Vec::new())
    }
}
