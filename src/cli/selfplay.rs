//! `kibitz selfplay`: training data from games kibitz plays itself.

use std::{
    io::{IsTerminal, Write},
    path::PathBuf,
    process::ExitCode,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
};

use anyhow::{Result, anyhow, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use kibitz::{
    BLOCK_GAMES, BLOCK_LABELS, Cause, EngineConfig, LabelWith, OutputMode, Rules, SelfPlay,
    SelfPlayError, SelfPlayReport, SelfPlaySettings, SelfPlaySink, SelfPlayStats,
};

use super::common::{REJECTS_SHOWN, count, default_threads};

/// Arguments of `kibitz selfplay`.
#[derive(Args, Debug)]
pub struct SelfPlayArgs {
    /// The output file (`.kbz`).
    #[arg(long, short = 'o')]
    output: PathBuf,
    /// Games to play (across all shards).
    #[arg(long, value_name = "N", required_unless_present = "positions")]
    games: Option<u64>,
    /// Stop once this many positions are written (the game that reaches it
    /// is written whole).
    #[arg(long, value_name = "N")]
    positions: Option<u64>,
    /// Replace an existing output file.
    #[arg(long, conflicts_with = "resume")]
    force: bool,
    /// Continue an interrupted run of the same command.
    #[arg(long)]
    resume: bool,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "N", short = 'j')]
    threads: Option<usize>,
    /// Search this many nodes per position (the default, 5000, is the
    /// field's usual setting).
    #[arg(long, value_name = "N", conflicts_with = "depth")]
    nodes: Option<u64>,
    /// Search to this depth instead of a node count.
    #[arg(long, short = 'd')]
    depth: Option<u32>,
    /// Transposition table per thread, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 16)]
    hash: u32,
    #[command(flatten)]
    net: super::eval::NetArgs,
    #[command(flatten)]
    syzygy: super::search::SyzygyArgs,
    /// Play with this UCI engine (one process per thread) instead of the
    /// built-in search.
    #[arg(long, value_name = "PATH")]
    engine: Option<PathBuf>,
    /// An option for the engine, `Name=Value` (repeatable).
    #[arg(long = "engine-option", value_name = "NAME=VALUE")]
    engine_options: Vec<String>,
    /// Seconds an engine may take for one position before it is restarted.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    engine_timeout: f64,
    /// Refuse the moves of an engine that does not keep to its limit
    /// (stopped far short of it, or past twice its nodes): the run stops at
    /// the first, exit 2. Without it they are played, and their labels
    /// written flagged and counted.
    #[arg(long, requires = "engine")]
    strict_limits: bool,
    /// Openings: EPD positions, or the final positions of PGN games (plain,
    /// zstd or gzip); each game draws one by its index and the seed. A line
    /// or game that gives no position is reported and skipped.
    #[arg(long, value_name = "FILE", help_heading = "Openings")]
    book: Option<PathBuf>,
    /// Without a book: Chess960 starts (both sides the same).
    #[arg(long, conflicts_with_all = ["book", "dfrc"], help_heading = "Openings")]
    chess960: bool,
    /// Without a book: double Fischer random starts (each side's drawn
    /// apart).
    #[arg(long, conflicts_with = "book", help_heading = "Openings")]
    dfrc: bool,
    /// Random plies after the opening (viridithas plays 8 from the start).
    #[arg(long, value_name = "PLIES", default_value_t = 8, help_heading = "Openings")]
    random_plies: u32,
    /// Draw each random ply among the best K moves of a search (as
    /// Stockfish's `random_multi_pv`) instead of among all legal moves.
    #[arg(long, value_name = "K", default_value_t = 0, help_heading = "Openings")]
    random_multipv: u32,
    /// With --random-multipv: only moves at most this many centipawns below
    /// the best.
    #[arg(long, value_name = "CP", default_value_t = 100, help_heading = "Openings")]
    random_multipv_diff: u32,
    /// With --random-multipv: the depth of that search.
    #[arg(long, value_name = "DEPTH", default_value_t = 4, help_heading = "Openings")]
    random_multipv_depth: u32,
    /// Draw the opening again when the first search scores beyond this
    /// (0: never).
    #[arg(long, value_name = "CP", default_value_t = 1000, help_heading = "Openings")]
    opening_score: u32,
    /// Resign when the score stays beyond this...
    #[arg(long, value_name = "CP", default_value_t = 2000, help_heading = "Adjudication")]
    resign_score: u32,
    /// ... for this many plies in a row (0: never; viridithas: 2000, 4).
    #[arg(long, value_name = "PLIES", default_value_t = 4, help_heading = "Adjudication")]
    resign_plies: u32,
    /// Draw when the score stays within this...
    #[arg(long, value_name = "CP", default_value_t = 0, help_heading = "Adjudication")]
    draw_score: u32,
    /// ... for this many plies in a row (0: never) ...
    #[arg(long, value_name = "PLIES", default_value_t = 8, help_heading = "Adjudication")]
    draw_plies: u32,
    /// ... from this game ply on (Stockfish's tools: 0 for 8 plies from
    /// ply 80).
    #[arg(long, value_name = "PLY", default_value_t = 80, help_heading = "Adjudication")]
    draw_from_ply: u32,
    /// A game reaching this ply is drawn (0: no limit; Stockfish's tools
    /// stop writing at 400).
    #[arg(long, value_name = "PLY", default_value_t = 400, help_heading = "Adjudication")]
    max_plies: u32,
    /// With tables (--syzygy, KIBITZ_SYZYGY): play their endings out to
    /// mate or a draw (the search ranks each root's moves by the tables, a
    /// win's by how soon it makes progress) instead of ending the game when
    /// the tables decide it; positions in the tables are not adjudicated
    /// (resignation, draw) either. A book of such positions needs
    /// --opening-score 0 (their first score is the tables').
    #[arg(long, help_heading = "Adjudication")]
    tables_play_out: bool,
    /// Seed of the openings and random plies.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Play only the games whose index modulo N is K (K/N, 0-based).
    #[arg(long, value_name = "K/N")]
    shard: Option<String>,
    /// Close a block after this many games (recorded in the header).
    #[arg(long, value_name = "N", default_value_t = BLOCK_GAMES)]
    block_games: u32,
    /// Close a block after this many labels (recorded in the header).
    #[arg(long, value_name = "N", default_value_t = BLOCK_LABELS)]
    block_labels: u32,
    /// No progress bar.
    #[arg(long, short = 'q')]
    quiet: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

/// The settings of a run, from its flags.
fn settings(args: &SelfPlayArgs) -> Result<SelfPlaySettings> {
    let (depth, nodes) = match (args.depth, args.nodes) {
        (Some(d), _) => (d, 0),
        (None, n) => (0, n.unwrap_or(5000)),
    };
    let player = match &args.engine {
        Some(path) => {
            if args.net.net.is_some() && !args.quiet {
                eprintln!("kibitz: the net is not used: the engine plays");
            }
            LabelWith::Engine(EngineConfig {
                strict_limits: args.strict_limits,
                ..EngineConfig::new(
                    path.clone(),
                    &args.engine_options,
                    depth,
                    nodes,
                    args.hash,
                    args.engine_timeout,
                )?
            })
        }
        None => LabelWith::Search(args.net.load()?),
    };
    let shard = args.shard.as_deref().map(super::annotate::parse_shard).transpose()?;
    Ok(SelfPlaySettings {
        player,
        depth,
        nodes,
        hash_mib: args.hash,
        threads: args.threads.unwrap_or_else(default_threads).max(1),
        book: args.book.clone(),
        variant: if args.dfrc { 2 } else { u8::from(args.chess960) },
        rules: Rules {
            random_plies: args.random_plies,
            random_multipv: args.random_multipv,
            random_multipv_diff: args.random_multipv_diff,
            random_multipv_depth: args.random_multipv_depth,
            opening_score: args.opening_score,
            resign_score: args.resign_score,
            resign_plies: args.resign_plies,
            draw_score: args.draw_score,
            draw_plies: args.draw_plies,
            draw_from_ply: args.draw_from_ply,
            max_plies: args.max_plies,
            tables_play_out: args.tables_play_out,
        },
        seed: args.seed,
        games: args.games.unwrap_or(u64::MAX),
        positions: args.positions.unwrap_or(0),
        shard: shard.unwrap_or((0, 1)),
        block_games: args.block_games,
        block_labels: args.block_labels,
        tablebases: args.syzygy.open()?,
    })
}

/// A self-play error, with the flags that deal with it.
fn advice(e: SelfPlayError) -> anyhow::Error {
    match e {
        SelfPlayError::Output { path, source } if super::is_exists(&source) => anyhow!(
            "{}: exists: use --force to replace it, or --resume to continue it if an interrupted \
             selfplay run of the same command wrote it",
            path.display()
        ),
        SelfPlayError::PositionsWithShards => {
            anyhow!("--positions cannot be split across shards: give --games")
        }
        SelfPlayError::Shard { k, n } => anyhow!("--shard {k}/{n}: K must be below N"),
        e => anyhow::Error::new(e),
    }
}

/// The command line's sink: a progress bar with the running counts, and
/// the games left out on standard error.
struct CliSink {
    bar: ProgressBar,
    quiet: bool,
    /// The engine's record in the header, for the warning about its
    /// limits (given once).
    engine: Option<String>,
    warned: bool,
}

impl SelfPlaySink for CliSink {
    fn resumed(&mut self, from_game: u64, stats: &SelfPlayStats) {
        if !self.quiet {
            eprintln!(
                "kibitz: resuming after game {from_game} ({} games, {} positions kept)",
                stats.games, stats.positions
            );
        }
    }

    fn progress(&mut self, s: &SelfPlayStats) {
        if let (false, Some(engine), Some(first)) = (self.warned, &self.engine, &s.first_off_limit)
        {
            self.warned = true;
            let text = super::annotate::limit_warning(engine, first);
            self.bar.suspend(|| eprintln!("{text}"));
        }
        self.bar.set_position(s.games);
        let adjudicated: u64 = ["resigned", "draw_adjudicated", "max_plies"]
            .iter()
            .filter_map(|k| s.endings.get(*k))
            .sum();
        self.bar.set_message(format!(
            "{} positions, W/D/L {}/{}/{}, {adjudicated} adjudicated",
            s.positions, s.white_wins, s.draws, s.black_wins
        ));
    }

    fn failed(&mut self, game: u64, ply: usize, cause: Option<&Cause>) {
        let why = cause.map(|c| format!(": {c}")).unwrap_or_default();
        self.bar.suspend(|| {
            eprintln!("kibitz: game {} left out: the player failed at ply {ply}{why}", game + 1)
        });
    }
}

/// Runs `kibitz selfplay`.
pub fn run(args: SelfPlayArgs) -> Result<ExitCode> {
    if args.games == Some(0) || args.positions == Some(0) {
        bail!("--games and --positions must be above 0");
    }
    let mode = match (args.resume, args.force) {
        (true, _) => OutputMode::Resume,
        (false, true) => OutputMode::Replace,
        (false, false) => OutputMode::Create,
    };
    let job = SelfPlay::new(args.output.clone(), mode, settings(&args)?).map_err(advice)?;
    let book_skipped = job.book().map(|b| (b.skips().0, b.unit()));
    let engine = args.engine.as_ref().map(|_| job.header().options.engine.clone());
    if let Some(book) = job.book() {
        let (skipped, skips) = book.skips();
        for skip in skips.iter().take(REJECTS_SHOWN as usize) {
            eprintln!("kibitz: {skip}: skipped");
        }
        if skipped > REJECTS_SHOWN {
            eprintln!(
                "kibitz: {} more {}s of the book skipped ({skipped} in all; {} positions kept)",
                skipped - REJECTS_SHOWN,
                book.unit(),
                book.len()
            );
        }
    }
    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let flag = interrupted.clone();
        let _ = ctrlc::set_handler(move || {
            if flag.swap(true, Ordering::SeqCst) {
                std::process::exit(130);
            }
        });
    }
    let bar = if args.quiet || !std::io::stderr().is_terminal() {
        ProgressBar::hidden()
    } else {
        let total = args.games.unwrap_or(0);
        let bar = ProgressBar::with_draw_target(
            (total > 0).then_some(total),
            ProgressDrawTarget::stderr_with_hz(4),
        );
        let style = ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} games {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar
    };
    let mut sink = CliSink { bar, quiet: args.quiet, engine, warned: false };
    let report = job.run(&mut sink, &interrupted).map_err(advice);
    sink.bar.finish_and_clear();
    let report = report?;
    print_summary(&args, &report, book_skipped)?;
    Ok(if let Some(why) = &report.gave_up {
        if super::annotate::is_off_limit(why) {
            // 2: refused by --strict-limits, as replay --strict refuses.
            eprintln!("kibitz: {why}; the file keeps the blocks before it");
            ExitCode::from(2)
        } else {
            eprintln!("kibitz: {why}; fix the engine and continue with --resume");
            ExitCode::from(1)
        }
    } else if report.interrupted {
        ExitCode::from(130)
    } else {
        ExitCode::SUCCESS
    })
}

/// Prints what a run did.
fn print_summary(
    args: &SelfPlayArgs,
    report: &SelfPlayReport,
    book_skipped: Option<(u64, &str)>,
) -> Result<()> {
    let s = &report.stats;
    let mut out = super::stdout();
    if args.json {
        #[derive(serde::Serialize)]
        struct Summary<'a> {
            output: String,
            #[serde(flatten)]
            stats: &'a SelfPlayStats,
            bytes_written: u64,
            seconds: f64,
            positions_per_second: f64,
            threads: usize,
            interrupted: bool,
            resumed_from_game: u64,
            /// Lines or games of the book that gave no position.
            book_skipped: u64,
        }
        let summary = Summary {
            output: args.output.display().to_string(),
            stats: s,
            bytes_written: report.bytes_written,
            seconds: report.seconds,
            positions_per_second: s.positions as f64 / report.seconds.max(1e-9),
            threads: report.threads,
            interrupted: report.interrupted,
            resumed_from_game: report.resumed_from_game,
            book_skipped: book_skipped.map_or(0, |b| b.0),
        };
        writeln!(out, "{}", serde_json::to_string(&summary)?)?;
        return Ok(());
    }
    writeln!(out, "output    {} ({} bytes)", args.output.display(), report.bytes_written)?;
    writeln!(
        out,
        "games     {}: White won {}, drawn {}, Black won {}; left out {} (no opening) and {} \
         (the player failed)",
        s.games, s.white_wins, s.draws, s.black_wins, s.no_opening, s.failed
    )?;
    if let (Some(o), Some((skipped, unit))) = (&report.header.options.selfplay, book_skipped) {
        writeln!(
            out,
            "book      {}: {} position{}, {skipped} {unit}{} skipped",
            o.book,
            o.book_positions,
            if o.book_positions == 1 { "" } else { "s" },
            if skipped == 1 { "" } else { "s" },
        )?;
    }
    let endings: Vec<String> = s.endings.iter().map(|(k, v)| format!("{v} {k}")).collect();
    writeln!(
        out,
        "endings   {}",
        if endings.is_empty() { "none".into() } else { endings.join(", ") }
    )?;
    writeln!(out, "positions {} labelled ({} nodes)", s.positions, s.nodes)?;
    if let Some(tables) = args.syzygy.describe() {
        let ended = s.endings.get("tablebase").copied().unwrap_or(0);
        writeln!(out, "syzygy    {tables}: {} ended by the tables", count(ended, "game"))?;
    }
    let engine = &report.header.options.engine;
    if let Some(line) = super::annotate::limits_line(s.short_of_limit, s.past_limit, engine) {
        writeln!(out, "{line}")?;
    }
    writeln!(
        out,
        "seconds   {:.2} ({} thread{}, {:.0} positions per second)",
        report.seconds,
        report.threads,
        if report.threads == 1 { "" } else { "s" },
        s.positions as f64 / report.seconds.max(1e-9)
    )?;
    let refused = report.gave_up.as_ref().is_some_and(super::annotate::is_off_limit);
    if report.interrupted && !refused {
        writeln!(
            out,
            "interrupted: the file ends at its last complete block; continue with --resume"
        )?;
    }
    Ok(())
}
