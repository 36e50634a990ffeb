//! `kibitz annotate`: the main job. Games (or EPD positions) in, a `.kbz`
//! file of labelled positions out.

use std::{
    io::Write,
    path::PathBuf,
    process::ExitCode,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::Instant,
};

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;

use crate::{
    cli::replay::{FormatArg, RejectReport, default_threads, input_bytes, progress_bar},
    io::source::{ChunkConfig, Format, display_name},
    pipeline::{
        annotate::{AnnotateStats, BlockBuilder, Labeller, SearchLabeller, Worker, input_infos},
        engine::{EngineConfig, EngineLabeller},
        replay::Rejected,
        run::{self, Event, PipelineConfig},
    },
    record::{
        file::KbzWriter,
        format::{BLOCK_GAMES, BLOCK_LABELS, FORMAT_VERSION, Header, LabelSource, MAGIC, Options},
    },
};

/// `--label`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LabelArg {
    /// kibitz's fixed-depth search.
    Search,
    /// The `[%eval]` comments already in the PGN (no search).
    PgnEval,
}

/// Arguments of `kibitz annotate`.
#[derive(Args, Debug)]
pub struct AnnotateArgs {
    /// Input files: PGN or EPD, plain, zstd or gzip; `-` reads standard input.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The output file (`.kbz`).
    #[arg(long, short = 'o')]
    output: PathBuf,
    /// Replace an existing output file.
    #[arg(long, conflicts_with = "resume")]
    force: bool,
    /// Continue an interrupted run: keep the complete blocks of the output,
    /// drop a block cut short, and go on after the last game written.
    #[arg(long)]
    resume: bool,
    /// Worker threads (default: all cores).
    #[arg(long, short = 'j')]
    threads: Option<usize>,
    /// Where labels come from.
    #[arg(long, value_enum, default_value_t = LabelArg::Search)]
    label: LabelArg,
    /// Search depth.
    #[arg(long, short = 'd', default_value_t = 8)]
    depth: u32,
    /// Search this many nodes per position instead of a depth.
    #[arg(long)]
    nodes: Option<u64>,
    /// Transposition table per thread, in MiB.
    #[arg(long, default_value_t = 16)]
    hash: u32,
    #[command(flatten)]
    net: super::eval::NetArgs,
    /// Plies skipped at the start of each game.
    #[arg(long, default_value_t = 8)]
    skip_plies: u32,
    /// Skip positions in check.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    skip_check: bool,
    /// Skip positions whose best move is a capture (the played move when not searching).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    skip_captures: bool,
    /// Keep this fraction of positions (0 to 1), chosen by --seed.
    #[arg(long, default_value_t = 1.0)]
    sample: f64,
    /// Seed of --sample.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Drop positions already labelled (same key) earlier in the run.
    #[arg(long)]
    dedup: bool,
    /// Write one JSON line per rejected game to FILE (the first few are
    /// described on standard error either way).
    #[arg(long, value_name = "FILE")]
    errors: Option<PathBuf>,
    /// Read at most this many games.
    #[arg(long)]
    max_games: Option<u64>,
    /// Write at most this many labelled positions.
    #[arg(long)]
    max_positions: Option<u64>,
    /// Read at most this many bytes of text from each input (whole games
    /// only): a bound for endless inputs such as a device or a pipe.
    #[arg(long, value_name = "BYTES")]
    max_bytes: Option<u64>,
    /// Take only the games whose index modulo N is K (K/N, 0-based).
    #[arg(long, value_name = "K/N")]
    shard: Option<String>,
    /// Read the inputs as this format instead of sniffing it.
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
    /// Label with this UCI engine (one process per thread) instead of the
    /// built-in search.
    #[arg(long, value_name = "PATH")]
    engine: Option<PathBuf>,
    /// An option for the engine, `Name=Value` (repeatable).
    #[arg(long = "engine-option", value_name = "NAME=VALUE")]
    engine_options: Vec<String>,
    /// Seconds an engine may take for one position before it is restarted.
    #[arg(long, default_value_t = 60.0)]
    engine_timeout: f64,
    /// Close a block after this many games (recorded in the header). A
    /// block is the unit a kill can lose: with a slow labeller, smaller
    /// blocks lose less, at some cost in size.
    #[arg(long, default_value_t = BLOCK_GAMES)]
    block_games: u32,
    /// Close a block after this many labels (recorded in the header).
    #[arg(long, default_value_t = BLOCK_LABELS)]
    block_labels: u32,
    /// No progress bar.
    #[arg(long, short = 'q')]
    quiet: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

fn parse_shard(text: &str) -> Result<(u64, u64)> {
    let (k, n) = text.split_once('/').context("--shard expects K/N, e.g. 0/4")?;
    let (k, n): (u64, u64) = (k.trim().parse()?, n.trim().parse()?);
    if n == 0 || k >= n {
        bail!("--shard {text}: K must be below N");
    }
    Ok((k, n))
}

/// Everything the summary reports.
#[derive(serde::Serialize)]
struct Summary<'a> {
    output: String,
    header: &'a Header,
    #[serde(flatten)]
    stats: &'a AnnotateStats,
    bytes_written: u64,
    bytes_per_position: f64,
    seconds: f64,
    positions_per_second: f64,
    threads: usize,
    interrupted: bool,
    resumed_from_game: u64,
    /// CPU seconds (user + system) of kibitz itself ...
    cpu_seconds: f64,
    /// ... and of the engine processes it ran (`--engine`), reaped.
    engine_cpu_seconds: f64,
    input_errors: u64,
    /// Why the run stopped early because the engine kept failing.
    engine_gave_up: Option<String>,
}

/// CPU seconds (user + system) of this process and of its reaped children.
fn cpu_seconds() -> (f64, f64) {
    let get = |who| {
        // SAFETY: rusage is plain integers, for which all zeros is valid.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: getrusage only writes the struct it is given.
        if unsafe { libc::getrusage(who, &mut u) } != 0 {
            return 0.0;
        }
        let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
        t(u.ru_utime) + t(u.ru_stime)
    };
    (get(libc::RUSAGE_SELF), get(libc::RUSAGE_CHILDREN))
}

/// Runs `kibitz annotate`.
pub fn run(args: AnnotateArgs) -> Result<ExitCode> {
    super::refuse_output_over_input(&args.output, &args.inputs)?;
    if let Some(errors) = &args.errors {
        super::refuse_output_over_input(errors, &args.inputs)
            .with_context(|| format!("--errors {}", errors.display()))?;
        if super::same_file(errors, &args.output) {
            bail!("--errors {} is the output file", errors.display());
        }
    }
    let threads = args.threads.unwrap_or_else(default_threads).max(1);
    if !(0.0..=1.0).contains(&args.sample) {
        bail!("--sample must be between 0 and 1");
    }
    let shard = args.shard.as_deref().map(parse_shard).transpose()?.unwrap_or((0, 1));
    if shard.1 > 1 && args.max_positions.is_some() {
        bail!("--max-positions cannot be split across shards: apply it to the merged file");
    }
    let label = match (&args.engine, args.label) {
        (Some(_), LabelArg::PgnEval) => {
            bail!("--engine labels by searching: it cannot be used with --label pgn-eval")
        }
        (Some(_), _) => LabelSource::Engine,
        (None, LabelArg::Search) => LabelSource::Search,
        (None, LabelArg::PgnEval) => LabelSource::PgnEval,
    };
    let engine_config = match &args.engine {
        Some(path) => Some(EngineConfig::new(
            path.clone(),
            &args.engine_options,
            args.depth,
            args.nodes.unwrap_or(0),
            args.hash,
            args.engine_timeout,
        )?),
        None => None,
    };
    // The engine's identity goes into the header, so probe it once.
    let engine_id = match &engine_config {
        Some(c) => c.describe().context("starting the engine")?,
        None => String::new(),
    };
    let searching = label != LabelSource::PgnEval;
    // The net is the built-in search's: read once, shared by every worker.
    let net = if label == LabelSource::Search { args.net.load()? } else { None };
    if label != LabelSource::Search
        && let Some(path) = &args.net.net
        && !args.quiet
    {
        eprintln!("kibitz: the net {} is not used: labels come from elsewhere", path.display());
    }
    // Each worker owns a searcher with its own table. They are all
    // allocated here, before the pipeline starts: a `--hash` the machine
    // cannot give once per thread is a clear error, not a worker's panic
    // after output has begun. With PGN evals nothing is searched, so the
    // (unused) searchers get the smallest table.
    let searchers = match label {
        LabelSource::Engine => Vec::new(),
        LabelSource::Search | LabelSource::PgnEval => {
            let hash = if label == LabelSource::Search { args.hash as usize } else { 1 };
            let nodes = args.nodes.unwrap_or(0);
            (0..threads)
                .map(|_| SearchLabeller::try_new(args.depth, nodes, hash, net.clone()))
                .collect::<Result<Vec<_>, String>>()
                .map_err(|e| anyhow!("{e} for each of {threads} worker threads"))?
        }
    };
    let searchers = Mutex::new(searchers);
    let options = Options {
        label,
        depth: if searching && args.nodes.is_none() { args.depth } else { 0 },
        nodes: if searching { args.nodes.unwrap_or(0) } else { 0 },
        hash_mib: if searching { args.hash } else { 0 },
        skip_plies: args.skip_plies,
        skip_check: args.skip_check,
        skip_captures: args.skip_captures,
        sample_ppm: (args.sample * 1e6).round() as u32,
        seed: args.seed,
        dedup: args.dedup,
        max_games: args.max_games.unwrap_or(0),
        max_positions: args.max_positions.unwrap_or(0),
        max_bytes: args.max_bytes.unwrap_or(0),
        shard,
        engine: engine_id,
        block_games: args.block_games,
        block_labels: args.block_labels,
        net: net.as_ref().map_or(String::new(), |n| n.info().name.clone()),
        net_sha256: net.as_ref().map_or(String::new(), |n| n.info().sha256.clone()),
    };
    let header = Header {
        magic: MAGIC,
        version: FORMAT_VERSION,
        kibitz_version: env!("CARGO_PKG_VERSION").to_string(),
        options: options.clone(),
        inputs: input_infos(&args.inputs),
    };

    // Duplicates are dropped here, except in a shard: `merge` drops them,
    // so that the merged shards equal one unsharded run.
    let mut builder = BlockBuilder::new(&options, args.dedup && shard.1 <= 1);
    // Opened before the output, so that a path that cannot be written fails
    // before anything is; started once the resume point is known.
    let mut rejects = RejectReport::open(args.errors.as_ref())?;
    let mut resume_from = 0;
    let mut writer = if args.resume && args.output.exists() {
        let (writer, blocks, dropped) = KbzWriter::resume(&args.output, &header)?;
        if let Some(e) = dropped {
            eprintln!("kibitz: dropped what followed the last complete block ({e})");
        }
        resume_from = blocks.last().map_or(0, |g| g.index + 1);
        builder.restore(&blocks);
        if !args.quiet {
            eprintln!(
                "kibitz: resuming after game {resume_from} ({} labels kept)",
                builder.labels_written
            );
        }
        writer
    } else {
        KbzWriter::create(&args.output, &header, args.force)?
    };

    // A resumed run keeps the rejections it reported before the resume point.
    rejects.start(resume_from)?;
    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let flag = interrupted.clone();
        // A second signal while finishing up ends the process at once; the
        // file then holds complete blocks only and --resume continues it.
        let _ = ctrlc::set_handler(move || {
            if flag.swap(true, Ordering::SeqCst) {
                std::process::exit(130);
            }
        });
    }

    let names: std::sync::Arc<[String]> =
        args.inputs.iter().map(|p| display_name(p)).collect::<Vec<_>>().into();
    let config = PipelineConfig {
        inputs: args.inputs.clone(),
        format: args.format.map(Format::from),
        threads,
        // Searching costs far more than reading: small chunks (a few games)
        // keep every thread busy even on a small input.
        chunk: ChunkConfig {
            frame_window: threads.max(2),
            target: if searching { 4 << 10 } else { 256 << 10 },
            max_text: args.max_bytes.unwrap_or(u64::MAX),
            ..ChunkConfig::default()
        },
        count_games: true,
    };
    // Each input's first game's index in the whole input, for game numbers
    // within the file.
    let mut file_first_game = vec![0u64; args.inputs.len()];
    let bar = progress_bar(input_bytes(&args.inputs), args.quiet);
    let start = Instant::now();
    let mut stats = AnnotateStats::default();
    let mut failure: Option<anyhow::Error> = None;
    let mut errors_failure: Option<anyhow::Error> = None;
    let mut gave_up: Option<String> = None;
    let mut done_bytes = 0u64;
    let mut input_errors = 0u64;
    let mut dropped = 0u64;
    let max_games = options.max_games;

    // `run` calls this once per worker thread, and there is a searcher
    // for each.
    let make_labeller = || -> Box<dyn Labeller> {
        match &engine_config {
            Some(c) => Box::new(EngineLabeller::new(c.clone())),
            None => Box::new(
                searchers
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .pop()
                    .expect("a searcher per worker"),
            ),
        }
    };
    run::run(
        &config,
        || {
            Worker::new(make_labeller(), options.clone(), resume_from, names.clone())
                .cancel_on(interrupted.clone())
        },
        |worker, chunk| worker.chunk(chunk),
        |event| {
            if interrupted.load(Ordering::SeqCst) {
                return false;
            }
            match event {
                Event::Chunk { input_pos, result, .. } => {
                    // A broken engine: stop before this chunk; what came
                    // before is written and --resume goes on from there.
                    if result.cancelled {
                        return false;
                    }
                    if let Some(why) = result.gave_up {
                        gave_up = Some(why);
                        return false;
                    }
                    stats.add(&result.stats);
                    // When --max-positions fills up inside this chunk, the
                    // games after the one that filled it are not written:
                    // their rejections are not reported either. (A resumed
                    // file can be full before its first chunk: then nothing
                    // of the chunk is written.)
                    let mut written_below = if builder.full { 0 } else { u64::MAX };
                    let records = result.records.len() as u64;
                    let mut pushed = 0;
                    for a in result.records {
                        if builder.full {
                            break;
                        }
                        pushed += 1;
                        let index = a.record.index;
                        if let Some(block) = builder.push(a, &mut dropped)
                            && let Err(e) = writer.write_block(&block)
                        {
                            failure = Some(e.into());
                            return false;
                        }
                        if builder.full {
                            written_below = index + 1;
                        }
                    }
                    let written = |r: &&Rejected| r.local_game < written_below;
                    // The summary counts the games and rejections the file
                    // holds (the work counts, positions searched and nodes,
                    // include what was searched past the limit).
                    stats.games -= records - pushed;
                    stats.rejected -= result.rejected.iter().filter(|r| !written(r)).count() as u64;
                    for r in result.rejected.iter().filter(written) {
                        // Games are counted in input order, so a file's
                        // first game is never after one of its games.
                        let first = file_first_game[r.file];
                        let game = r.local_game.checked_sub(first).unwrap_or(r.local_game) + 1;
                        let name = display_name(&args.inputs[r.file]);
                        if let Err(e) = rejects.add(&bar, &name, game, r.local_game, r) {
                            errors_failure =
                                Some(anyhow::Error::new(e).context("writing the --errors file"));
                            return false;
                        }
                    }
                    bar.set_position(done_bytes + input_pos);
                    let secs = start.elapsed().as_secs_f64().max(1e-9);
                    bar.set_message(format!(
                        "{} games, {} positions, {:.0} positions/s",
                        stats.games,
                        builder.labels_written,
                        stats.searched as f64 / secs
                    ));
                    // `games_read` counts from the input's first game, the
                    // games skipped on resuming included.
                    if builder.full || (max_games > 0 && stats.games_read >= max_games) {
                        return false;
                    }
                }
                Event::Error { file, offset, message } => {
                    input_errors += 1;
                    let at = offset.map(|o| format!(" at byte {o}")).unwrap_or_default();
                    bar.suspend(|| {
                        eprintln!("kibitz: {}{at}: {message}", display_name(&args.inputs[file]))
                    });
                }
                Event::End { bytes_in, .. } => {
                    done_bytes += bytes_in;
                    bar.set_position(done_bytes);
                }
                Event::Start { file, .. } => file_first_game[file] = stats.games_read,
            }
            true
        },
    );
    bar.finish_and_clear();
    let errors_finished = rejects.finish();
    if let Some(e) = failure {
        return Err(e.context(format!("writing {}", args.output.display())));
    }
    // The --errors file failed: the output is closed as an interrupted run's
    // (complete blocks, no end marker), so --resume can finish it.
    let errors_failure = errors_failure.or_else(|| errors_finished.err());
    let was_interrupted =
        interrupted.load(Ordering::SeqCst) || gave_up.is_some() || errors_failure.is_some();
    if !was_interrupted && let Some(block) = builder.take() {
        writer.write_block(&block).with_context(|| format!("writing {}", args.output.display()))?;
    }
    let bytes_written =
        if was_interrupted { writer.close_incomplete()? } else { writer.finish()? };
    if let Some(e) = errors_failure {
        let output = args.output.display();
        return Err(
            e.context(format!("{output} keeps its complete blocks: continue with --resume"))
        );
    }
    stats.skipped_duplicate += dropped;
    stats.labelled = builder.labels_written;
    let seconds = start.elapsed().as_secs_f64();
    // The workers are gone, so every engine has quit and been reaped.
    let cpu = cpu_seconds();
    let summary = Summary {
        output: args.output.display().to_string(),
        header: &header,
        stats: &stats,
        bytes_written,
        bytes_per_position: bytes_written as f64 / stats.labelled.max(1) as f64,
        seconds,
        positions_per_second: stats.searched as f64 / seconds.max(1e-9),
        threads,
        interrupted: was_interrupted,
        resumed_from_game: resume_from,
        cpu_seconds: cpu.0,
        engine_cpu_seconds: cpu.1,
        input_errors,
        engine_gave_up: gave_up.clone(),
    };
    let mut out = super::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&summary)?)?;
    } else {
        writeln!(
            out,
            "output    {} ({} bytes, {:.2} bytes per labelled position)",
            summary.output, bytes_written, summary.bytes_per_position
        )?;
        writeln!(
            out,
            "games     {} read, {} annotated, {} rejected (bad start, or annotated up to a move that cannot be played)",
            stats.games_read, stats.games, stats.rejected
        )?;
        writeln!(
            out,
            "positions {} labelled of {} looked at ({} searched, {} nodes)",
            stats.labelled, stats.positions, stats.searched, stats.nodes
        )?;
        writeln!(
            out,
            "skipped   {} opening, {} in check, {} best move a capture, {} not sampled, {} unlabelled, {} duplicates",
            stats.skipped_opening,
            stats.skipped_check,
            stats.skipped_capture,
            stats.skipped_sample,
            stats.skipped_unlabelled,
            stats.skipped_duplicate
        )?;
        if !stats.skipped_variants.is_empty() {
            writeln!(out, "variants  {:?} skipped", stats.skipped_variants)?;
        }
        for f in stats.failures.iter().take(20) {
            writeln!(out, "failure   {f}")?;
        }
        if stats.failed > 0 {
            writeln!(
                out,
                "failed    {} position{} the engine could not label (skipped)",
                stats.failed,
                if stats.failed == 1 { "" } else { "s" }
            )?;
        }
        writeln!(
            out,
            "seconds   {seconds:.2} ({threads} thread{}, {:.0} positions searched per second)",
            if threads == 1 { "" } else { "s" },
            summary.positions_per_second
        )?;
        if args.engine.is_some() {
            let total = (cpu.0 + cpu.1).max(1e-9);
            writeln!(
                out,
                "cpu       kibitz {:.2} s, engines {:.2} s: kibitz is {:.1}% of the CPU time",
                cpu.0,
                cpu.1,
                100.0 * cpu.0 / total
            )?;
        }
        if was_interrupted {
            writeln!(
                out,
                "interrupted: the file ends at its last complete block; continue with --resume"
            )?;
        }
    }
    if let Some(why) = &gave_up {
        eprintln!("kibitz: {why}");
        return Ok(ExitCode::from(1));
    }
    // 130: interrupted (the file is complete up to its last block; resume);
    // 1: an input could not be read whole, or the engine failed on some
    // positions (the file holds everything that could be read and labelled,
    // and is complete and valid; the summary says what is missing).
    Ok(if was_interrupted {
        ExitCode::from(130)
    } else if input_errors > 0 || stats.failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
