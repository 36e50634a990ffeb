//! `kibitz annotate`: the main job. Games (or EPD positions) in, a `.kbz`
//! file of labelled positions out.

use std::{
    io::Write,
    path::PathBuf,
    process::ExitCode,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Instant,
};

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;

use crate::cli::{
    common::{RejectReport, count, default_threads, input_bytes, progress_bar},
    replay::FormatArg,
};
use kibitz::{
    AnnotateError, AnnotateReport, AnnotateSettings, AnnotateSink, AnnotateStats, Annotation,
    BLOCK_GAMES, BLOCK_LABELS, EngineConfig, EngineError, Format, GameFilter, Header, LabelWith,
    OutputMode, RecordError, Rejected, Relabel, RelabelInput, RelabelReport, RelabelSink, Speed,
    normalize_date,
};

/// `--label`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LabelArg {
    /// kibitz's fixed-depth search.
    Search,
    /// The `[%eval]` comments already in the PGN (no search).
    PgnEval,
    /// The evaluations the positions come with: a table's evaluation
    /// column (`cp`, `eval`, `score`, `mate`...), an EPD line's `ce` or
    /// `dm` (no search).
    Table,
}

/// The game filters: games that fail one are neither replayed nor
/// searched, and are counted by the first filter they fail (those that lack
/// the tag a filter needs apart).
#[derive(Args, Debug)]
pub struct FilterArgs {
    /// Both players rated at least this ([WhiteElo], [BlackElo]).
    #[arg(long, value_name = "ELO", help_heading = "Game filters")]
    min_elo: Option<u16>,
    /// Both players rated at most this.
    #[arg(long, value_name = "ELO", help_heading = "Game filters")]
    max_elo: Option<u16>,
    /// The players' mean rating at least this.
    #[arg(long, value_name = "ELO", help_heading = "Game filters")]
    min_avg_elo: Option<u16>,
    /// The players' mean rating at most this.
    #[arg(long, value_name = "ELO", help_heading = "Game filters")]
    max_avg_elo: Option<u16>,
    /// Speeds kept, as Lichess classes them from [TimeControl] (base + 40 x
    /// increment): ultrabullet, bullet, blitz, rapid, classical,
    /// correspondence; comma-separated.
    #[arg(long, value_name = "SPEEDS", value_delimiter = ',', help_heading = "Game filters")]
    speed: Vec<String>,
    /// Played on this day or later ([UTCDate], else [Date]): YYYY-MM-DD.
    #[arg(long, value_name = "DATE", help_heading = "Game filters")]
    date_from: Option<String>,
    /// Played on this day or earlier: YYYY-MM-DD.
    #[arg(long, value_name = "DATE", help_heading = "Game filters")]
    date_to: Option<String>,
    /// [Termination] values kept ("Normal", "Time forfeit", ...), without
    /// case; comma-separated.
    #[arg(long, value_name = "VALUES", value_delimiter = ',', help_heading = "Game filters")]
    termination: Vec<String>,
    /// Results kept (1-0, 0-1, 1/2-1/2, *); comma-separated.
    #[arg(long, value_name = "RESULTS", value_delimiter = ',', help_heading = "Game filters")]
    result: Vec<String>,
    /// Keep only games where a player holds one of these titles
    /// ([WhiteTitle], [BlackTitle]: GM, IM, FM, ..., BOT), without case;
    /// comma-separated.
    #[arg(long, value_name = "TITLES", value_delimiter = ',', help_heading = "Game filters")]
    title: Vec<String>,
    /// Leave out games where a player holds one of these titles
    /// (`--exclude-title BOT`: no bots' games); comma-separated.
    #[arg(long, value_name = "TITLES", value_delimiter = ',', help_heading = "Game filters")]
    exclude_title: Vec<String>,
}

impl FilterArgs {
    fn filter(&self) -> Result<GameFilter> {
        let speeds = self
            .speed
            .iter()
            .map(|s| {
                Speed::from_name(s.trim()).ok_or_else(|| {
                    anyhow!("--speed {s}: one of ultrabullet, bullet, blitz, rapid, classical, correspondence")
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let date = |flag: &str, v: &Option<String>| -> Result<Option<String>> {
            v.as_ref()
                .map(|d| {
                    normalize_date(d.as_bytes())
                        .ok_or_else(|| anyhow!("--{flag} {d}: a day as YYYY-MM-DD"))
                })
                .transpose()
        };
        for r in &self.result {
            if !["1-0", "0-1", "1/2-1/2", "*"].contains(&r.as_str()) {
                bail!("--result {r}: one of 1-0, 0-1, 1/2-1/2, *");
            }
        }
        Ok(GameFilter {
            min_elo: self.min_elo,
            max_elo: self.max_elo,
            min_avg_elo: self.min_avg_elo,
            max_avg_elo: self.max_avg_elo,
            speeds,
            date_from: date("date-from", &self.date_from)?,
            date_to: date("date-to", &self.date_to)?,
            terminations: self.termination.iter().map(|t| t.trim().to_string()).collect(),
            results: self.result.clone(),
            titles: self.title.iter().map(|t| t.trim().to_string()).collect(),
            exclude_titles: self.exclude_title.iter().map(|t| t.trim().to_string()).collect(),
        })
    }
}

/// `--preset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PresetArg {
    /// Game analysis as Lichess gives it: every position labelled (no
    /// opening skip, no check or capture filter, no sampling) with a
    /// principal variation of up to 12 plies, for `export --format pgn`
    /// and `report`.
    Analysis,
}

/// Arguments of `kibitz annotate`.
#[derive(Args, Debug)]
pub struct AnnotateArgs {
    /// Games (PGN) or positions (EPD), plain, zstd or gzip; `-` reads
    /// standard input. Labelled files (.kbz, Stockfish binpack or plain,
    /// viriformat) are relabelled instead: the same positions, new labels.
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
    #[arg(long, short = 'j', value_name = "N")]
    threads: Option<usize>,
    /// Where labels come from.
    #[arg(long, value_enum, default_value_t = LabelArg::Search)]
    label: LabelArg,
    /// Search depth.
    #[arg(long, short = 'd', default_value_t = 8)]
    depth: u32,
    /// Search this many nodes per position instead of a depth.
    #[arg(long, value_name = "N")]
    nodes: Option<u64>,
    /// Transposition table per thread, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 16)]
    hash: u32,
    #[command(flatten)]
    net: super::eval::NetArgs,
    #[command(flatten)]
    syzygy: super::search::SyzygyArgs,
    /// The selection for a purpose: `analysis` labels every position, with
    /// its principal variation (as `--skip-plies 0 --skip-check false
    /// --skip-captures false --pv 12`).
    #[arg(long, value_enum, conflicts_with_all = ["skip_plies", "skip_check", "skip_captures", "sample", "dedup"])]
    preset: Option<PresetArg>,
    /// Keep up to this many plies of each label's principal variation
    /// (0 to 12).
    #[arg(long, value_name = "PLIES", value_parser = clap::value_parser!(u32).range(0..=12))]
    pv: Option<u32>,
    /// Search this many best moves per position (1 to 5), each kept with
    /// its score (the built-in search, or the engine's MultiPV).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=5))]
    multipv: u32,
    /// What to check after every move of the games read, as `replay
    /// --verify` does (a game that fails is annotated up to that move and
    /// reported).
    #[arg(long, value_enum, default_value_t = super::replay::VerifyArg::None)]
    verify: super::replay::VerifyArg,
    /// Plies skipped at the start of each game.
    #[arg(long, value_name = "PLIES", default_value_t = 8)]
    skip_plies: u32,
    /// Skip positions in check.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    skip_check: bool,
    /// Skip positions whose best move is a capture (the played move when not searching).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    skip_captures: bool,
    /// Keep this share of positions (0 to 1), chosen by --seed.
    #[arg(long, value_name = "SHARE", default_value_t = 1.0)]
    sample: f64,
    /// Seed of --sample.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Keep one label per position (its key, and its 50-move and
    /// repetition state, as `kibitz dedup`): `first` (the default) drops
    /// the later ones during the run; `last` and `deepest` keep that label
    /// of each position once the run is done.
    #[arg(long, value_enum, value_name = "KEEP", num_args = 0..=1, default_missing_value = "first")]
    dedup: Option<super::dedup::KeepArg>,
    /// Memory for the positions seen by --dedup last|deepest (K, M or G
    /// bytes).
    #[arg(long, value_name = "SIZE", default_value = "1G", value_parser = super::dedup::parse_size)]
    dedup_memory: usize,
    /// Write one JSON line per rejected game to FILE (the first few are
    /// described on standard error either way).
    #[arg(long, value_name = "FILE")]
    errors: Option<PathBuf>,
    /// Read at most this many games.
    #[arg(long, value_name = "N")]
    max_games: Option<u64>,
    /// Write at most this many labelled positions.
    #[arg(long, value_name = "N")]
    max_positions: Option<u64>,
    /// Read at most this many bytes of text from each input (whole games
    /// only): a bound for endless inputs such as a device or a pipe.
    #[arg(long, value_name = "BYTES")]
    max_bytes: Option<u64>,
    #[command(flatten)]
    table: super::common::TableArgs,
    #[command(flatten)]
    filters: FilterArgs,
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
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    engine_timeout: f64,
    /// Refuse the labels of an engine that does not keep to its limit
    /// (stopped far short of it, or past twice its nodes): the run stops at
    /// the first, exit 2. Without it they are written, flagged and counted.
    #[arg(long, requires = "engine")]
    strict_limits: bool,
    /// Label with the endgame tables alone (--syzygy or KIBITZ_SYZYGY):
    /// positions outside them get no label, and a labelled file relabelled
    /// keeps their old labels; nothing is searched.
    #[arg(long)]
    tables_only: bool,
    /// Close a block after this many games (recorded in the header). A
    /// block is the unit a kill can lose: with a slow labeller, smaller
    /// blocks lose less, at some cost in size.
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

/// A run's game filters as the flags that set them: `--min-elo 1500
/// --speed blitz,rapid`.
pub fn describe_filter(f: &GameFilter) -> String {
    let mut parts = Vec::new();
    let bounds = [
        ("min-elo", f.min_elo),
        ("max-elo", f.max_elo),
        ("min-avg-elo", f.min_avg_elo),
        ("max-avg-elo", f.max_avg_elo),
    ];
    for (flag, v) in bounds {
        if let Some(v) = v {
            parts.push(format!("--{flag} {v}"));
        }
    }
    if !f.speeds.is_empty() {
        let names: Vec<&str> = f.speeds.iter().map(|s| s.name()).collect();
        parts.push(format!("--speed {}", names.join(",")));
    }
    for (flag, v) in [("date-from", &f.date_from), ("date-to", &f.date_to)] {
        if let Some(v) = v {
            parts.push(format!("--{flag} {}", v.replace('.', "-")));
        }
    }
    if !f.terminations.is_empty() {
        parts.push(format!("--termination \"{}\"", f.terminations.join(",")));
    }
    if !f.titles.is_empty() {
        parts.push(format!("--title {}", f.titles.join(",")));
    }
    if !f.exclude_titles.is_empty() {
        parts.push(format!("--exclude-title {}", f.exclude_titles.join(",")));
    }
    if !f.results.is_empty() {
        parts.push(format!("--result {}", f.results.join(",")));
    }
    parts.join(" ")
}

pub(crate) fn parse_shard(text: &str) -> Result<(u64, u64)> {
    let (k, n) = text.split_once('/').context("--shard expects K/N, e.g. 0/4")?;
    Ok((k.trim().parse()?, n.trim().parse()?))
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

/// The command line's sink: a progress bar, unreadable inputs on standard
/// error, rejected games on standard error and in the `--errors` file.
struct CliSink {
    bar: indicatif::ProgressBar,
    rejects: Option<RejectReport>,
    quiet: bool,
    start: Instant,
    /// The engine's name and `go` command, for the warning about its
    /// limits (given once).
    engine: Option<String>,
    warned: bool,
}

/// The warning, given once per run, that an engine does not keep to its
/// limit: `first` says where and what it reported.
pub(super) fn limit_warning(engine: &str, first: &str) -> String {
    let (name, go) = engine_name_and_go(engine);
    let nodes = if go.starts_with("go nodes") {
        " If it does not honour `go nodes`, label with --depth."
    } else {
        ""
    };
    format!(
        "kibitz: warning: {name} does not keep to `{go}`: {first}. Such labels are written \
         flagged and counted; --strict-limits refuses them.{nodes}"
    )
}

/// The summary's line of labels off their engine's limit (`engine` as the
/// header records it), if there are any.
pub(super) fn limits_line(short: u64, past: u64, engine: &str) -> Option<String> {
    (short + past > 0).then(|| {
        format!(
            "limits    {} where the engine stopped far short of `{}`, {past} where it went past \
             twice it (flagged in the file)",
            count(short, "label"),
            engine_name_and_go(engine).1
        )
    })
}

/// Whether a labeller's cause for stopping is a label off its limit
/// refused by `--strict-limits`.
pub(super) fn is_off_limit(cause: &kibitz::Cause) -> bool {
    matches!(cause.downcast_ref::<EngineError>(), Some(EngineError::OffLimit { .. }))
}

/// The engine's `id name` and its `go` command, from the header's record
/// of it (`NAME; OPTIONS; go ...`).
fn engine_name_and_go(engine: &str) -> (&str, &str) {
    let name = engine.split(';').next().unwrap_or(engine).trim();
    let go = engine.rsplit(';').next().unwrap_or("").trim();
    (name, go)
}

fn io_error(e: anyhow::Error) -> std::io::Error {
    std::io::Error::other(format!("{e:#}"))
}

impl AnnotateSink for CliSink {
    fn resumed(&mut self, from_game: u64, labels_kept: u64, dropped: Option<&RecordError>) {
        if let Some(e) = dropped {
            eprintln!("kibitz: dropped what followed the last complete block ({e})");
        }
        if !self.quiet {
            eprintln!("kibitz: resuming after game {from_game} ({labels_kept} labels kept)");
        }
    }

    fn start(&mut self, resume_from: u64) -> std::io::Result<()> {
        // A resumed run keeps the rejections it reported before the
        // resume point.
        self.rejects.as_mut().map_or(Ok(()), |r| r.start(resume_from).map_err(io_error))
    }

    fn progress(&mut self, bytes: u64, stats: &AnnotateStats, labels: u64) {
        if let (false, Some(engine), Some(first)) =
            (self.warned, &self.engine, &stats.first_off_limit)
        {
            self.warned = true;
            let text = limit_warning(engine, first);
            self.bar.suspend(|| eprintln!("{text}"));
        }
        self.bar.set_position(bytes);
        let secs = self.start.elapsed().as_secs_f64().max(1e-9);
        self.bar.set_message(format!(
            "{} games, {labels} positions, {:.0} positions/s",
            stats.games,
            stats.searched as f64 / secs
        ));
    }

    fn input_error(&mut self, file: &str, offset: Option<u64>, message: &str) {
        let at =
            offset.map(|o| format!(" at {}", kibitz::describe_place(file, o))).unwrap_or_default();
        self.bar.suspend(|| eprintln!("kibitz: {file}{at}: {message}"));
    }

    fn rejected(
        &mut self,
        file: &str,
        game_in_file: u64,
        game: u64,
        rejected: &Rejected,
    ) -> std::io::Result<()> {
        match self.rejects.as_mut() {
            Some(r) => r.add(&self.bar, file, game_in_file, game, rejected).map_err(|e| {
                std::io::Error::new(e.kind(), format!("writing the --errors file: {e}"))
            }),
            None => Ok(()),
        }
    }

    fn finish(&mut self) -> std::io::Result<()> {
        self.bar.finish_and_clear();
        self.rejects.take().map_or(Ok(()), |r| r.finish().map_err(io_error))
    }
}

/// An annotate error, with the flags that deal with it.
fn advice(e: AnnotateError) -> anyhow::Error {
    match e {
        AnnotateError::Output { path, source } if super::is_exists(&source) => anyhow!(
            "{}: exists: use --force to replace it, or --resume to continue it if an interrupted \
             annotate run of the same command wrote it",
            path.display()
        ),
        AnnotateError::Sample(_) => anyhow!("--sample must be between 0 and 1"),
        AnnotateError::Shard { k, n } => anyhow!("--shard {k}/{n}: K must be below N"),
        AnnotateError::MultiPvWithoutSearch => {
            anyhow!(
                "--multipv needs a search: --label pgn-eval or table gives one score a position"
            )
        }
        AnnotateError::MaxPositionsWithShards => {
            anyhow!("--max-positions cannot be split across shards: apply it to the merged file")
        }
        AnnotateError::KeepWithShards => anyhow!(
            "--dedup last|deepest chooses over the whole file: run `kibitz merge --keep` on the \
             shards instead"
        ),
        AnnotateError::Sink { source, output } => anyhow::Error::new(source).context(format!(
            "{} keeps its complete blocks: continue with --resume",
            output.display()
        )),
        AnnotateError::Dedup(e) => super::dedup::advice(e),
        e => anyhow::Error::new(e),
    }
}

/// The settings of a run, from its flags.
fn settings(args: &AnnotateArgs) -> Result<AnnotateSettings> {
    let shard = args.shard.as_deref().map(parse_shard).transpose()?.unwrap_or((0, 1));
    let label = match (&args.engine, args.label) {
        (Some(_), LabelArg::PgnEval | LabelArg::Table) => {
            bail!("--engine labels by searching: it cannot be used with --label pgn-eval or table")
        }
        (Some(path), _) => LabelWith::Engine(EngineConfig {
            strict_limits: args.strict_limits,
            ..EngineConfig::new(
                path.clone(),
                &args.engine_options,
                args.depth,
                args.nodes.unwrap_or(0),
                args.hash,
                args.engine_timeout,
            )?
        }),
        // The net is the built-in search's: read once, shared by every worker.
        (None, LabelArg::Search) => LabelWith::Search(args.net.load()?),
        (None, LabelArg::PgnEval) => LabelWith::PgnEval,
        (None, LabelArg::Table) => LabelWith::Table,
    };
    if !matches!(label, LabelWith::Search(_))
        && let Some(path) = &args.net.net
        && !args.quiet
    {
        eprintln!("kibitz: the net {} is not used: labels come from elsewhere", path.display());
    }
    let analysis = args.preset == Some(PresetArg::Analysis);
    Ok(AnnotateSettings {
        label,
        format: args.format.map(Format::from),
        threads: args.threads.unwrap_or_else(default_threads).max(1),
        depth: args.depth,
        nodes: args.nodes.unwrap_or(0),
        hash_mib: args.hash,
        skip_plies: if analysis { 0 } else { args.skip_plies },
        skip_check: args.skip_check && !analysis,
        skip_captures: args.skip_captures && !analysis,
        sample: args.sample,
        seed: args.seed,
        dedup: args.dedup.map(super::dedup::KeepArg::keep),
        dedup_memory: args.dedup_memory,
        max_games: args.max_games.unwrap_or(0),
        max_positions: args.max_positions.unwrap_or(0),
        max_bytes: args.max_bytes.unwrap_or(0),
        table: args.table.options(),
        shard,
        block_games: args.block_games,
        block_labels: args.block_labels,
        pv_plies: args.pv.unwrap_or(if analysis { 12 } else { 0 }),
        filter: args.filters.filter()?,
        multipv: args.multipv,
        verify: args.verify.into(),
        tablebases: match (args.syzygy.open()?, args.tables_only) {
            (None, true) => {
                bail!("--tables-only needs endgame tables: --syzygy FOLDERS or KIBITZ_SYZYGY")
            }
            (tables, _) => tables,
        },
        tables_only: args.tables_only,
    })
}

/// Runs `kibitz annotate`.
pub fn run(args: AnnotateArgs) -> Result<ExitCode> {
    let args = AnnotateArgs { inputs: kibitz::expand_folders(&args.inputs)?, ..args };
    if let Some(errors) = &args.errors {
        super::refuse_output_over_input(errors, &args.inputs)
            .with_context(|| format!("--errors {}", errors.display()))?;
        if super::same_file(errors, &args.output) {
            bail!("--errors {} is the output file", errors.display());
        }
    }
    let mode = match (args.resume, args.force) {
        (true, _) => OutputMode::Resume,
        (false, true) => OutputMode::Replace,
        (false, false) => OutputMode::Create,
    };
    let job = Annotation::new(args.inputs.clone(), args.output.clone(), mode, settings(&args)?)
        .map_err(advice)?;
    // Labelled data (`.kbz`, binpack, plain) is relabelled: the same
    // positions, new labels, the games kept as chains.
    let relabel: Vec<Option<RelabelInput>> =
        args.inputs.iter().map(|p| RelabelInput::detect(p)).collect::<Result<_, _>>()?;
    if relabel.iter().any(Option::is_some) {
        let Some(inputs) = relabel.into_iter().collect::<Option<Vec<_>>>() else {
            bail!(
                "labelled data (.kbz, .binpack, plain) and games (PGN, EPD) cannot be mixed in one run"
            );
        };
        if args.resume {
            bail!("relabelling writes a new file: it does not --resume");
        }
        return run_relabel(&args, job, inputs);
    }
    // Opened before the output, so that a path that cannot be written fails
    // before anything is.
    let rejects = Some(RejectReport::open(args.errors.as_ref())?);
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
    let bar = progress_bar(input_bytes(&args.inputs), args.quiet);
    let engine = args.engine.as_ref().map(|_| job.header().options.engine.clone());
    let mut sink =
        CliSink { bar, rejects, quiet: args.quiet, start: Instant::now(), engine, warned: false };
    let report = job.run(&mut sink, &interrupted).map_err(advice)?;
    if let Some(r) = report.dedup.as_ref().filter(|_| !args.quiet) {
        eprintln!(
            "kibitz: --dedup {:?}: {} labels, {} kept ({} duplicates dropped)",
            args.dedup.unwrap_or(super::dedup::KeepArg::First),
            r.labels,
            r.kept,
            r.labels - r.kept
        );
    }
    print_summary(&args, &report, cpu_seconds())
}

/// Relabels `.kbz`, binpack and plain inputs and prints the summary.
fn run_relabel(
    args: &AnnotateArgs,
    job: Annotation,
    inputs: Vec<RelabelInput>,
) -> Result<ExitCode> {
    struct Progress(bool);
    impl RelabelSink for Progress {
        fn progress(&mut self, games: u64) {
            if self.0 && games % 1000 < 10 {
                eprint!("\rkibitz: {games} games relabelled");
            }
        }
    }
    let start = Instant::now();
    let job_engine = job.header().options.engine.clone();
    let report = Relabel::new(job, inputs)
        .and_then(|r| r.run(&mut Progress(!args.quiet)))
        .map_err(advice)?;
    if !args.quiet {
        eprintln!();
    }
    let seconds = start.elapsed().as_secs_f64();
    let mut out = super::stdout();
    if args.json {
        #[derive(serde::Serialize)]
        struct Summary<'a> {
            #[serde(flatten)]
            report: &'a RelabelReport,
            seconds: f64,
        }
        writeln!(out, "{}", serde_json::to_string(&Summary { report: &report, seconds })?)?;
    } else {
        let from =
            report.header.as_ref().map_or(String::new(), |h| h.options.relabelled_from.clone());
        writeln!(out, "output    {} ({} bytes)", args.output.display(), report.bytes_written)?;
        writeln!(
            out,
            "relabel   {} games, {} labels read, {} relabelled, {} failed",
            report.games, report.labels, report.relabelled, report.failed
        )?;
        writeln!(out, "from      {from}")?;
        if let Some(tables) = args.syzygy.describe() {
            writeln!(
                out,
                "syzygy    {tables}: {} from the tables ({} changed sign, {} now drawn), {} kept; \
                 {} of self-play corrected by the tables",
                count(report.tablebase, "label"),
                report.sign_flips,
                report.draws_found,
                report.kept,
                count(report.results_corrected, "result")
            )?;
        }
        if let Some(line) = limits_line(report.short_of_limit, report.past_limit, &job_engine) {
            writeln!(out, "{line}")?;
        }
        if report.refused > 0 {
            writeln!(out, "refused   {} by --strict-limits", count(report.refused, "label"))?;
        }
        writeln!(out, "seconds   {seconds:.2} ({} nodes)", report.nodes)?;
    }
    Ok(if report.refused > 0 {
        ExitCode::from(2)
    } else if report.failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Prints the summary of a run and chooses the exit code.
fn print_summary(
    args: &AnnotateArgs,
    report: &AnnotateReport,
    cpu: (f64, f64),
) -> Result<ExitCode> {
    let stats = &report.stats;
    let (seconds, threads, bytes_written) = (report.seconds, report.threads, report.bytes_written);
    let gave_up = report.gave_up.as_ref().map(|why| {
        if is_off_limit(&why.cause) {
            format!("{why}; the file keeps the blocks before it")
        } else {
            format!("{why}; fix the engine and continue with --resume")
        }
    });
    let summary = Summary {
        output: args.output.display().to_string(),
        header: &report.header,
        stats,
        bytes_written,
        bytes_per_position: bytes_written as f64 / stats.labelled.max(1) as f64,
        seconds,
        positions_per_second: stats.searched as f64 / seconds.max(1e-9),
        threads,
        interrupted: report.interrupted,
        resumed_from_game: report.resumed_from_game,
        cpu_seconds: cpu.0,
        engine_cpu_seconds: cpu.1,
        input_errors: report.input_errors,
        engine_gave_up: gave_up.clone(),
    };
    let mut out = super::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&summary)?)?;
    } else {
        print_text(&mut out, args, report, &summary)?;
    }
    if let Some(why) = &gave_up {
        eprintln!("kibitz: {why}");
        // 2: refused by --strict-limits, as replay --strict refuses.
        let refused = report.gave_up.as_ref().is_some_and(|g| is_off_limit(&g.cause));
        return Ok(ExitCode::from(if refused { 2 } else { 1 }));
    }

    // 130: interrupted (the file is complete up to its last block; resume);
    // 1: an input could not be read whole, or the engine failed on some
    // positions (the file holds everything that could be read and labelled,
    // and is complete and valid; the summary says what is missing).
    Ok(if report.interrupted {
        ExitCode::from(130)
    } else if report.input_errors > 0 || stats.failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The games the filters left out, and the variants met.
fn print_filtered_and_variants(out: &mut impl Write, report: &AnnotateReport) -> Result<()> {
    let stats = &report.stats;
    if !report.header.options.filter.is_empty() {
        let list = |m: &std::collections::BTreeMap<String, u64>| {
            let parts: Vec<String> = m.iter().map(|(k, v)| format!("{v} {k}")).collect();
            if parts.is_empty() { "none".to_string() } else { parts.join(", ") }
        };
        writeln!(
            out,
            "filtered  {} by game filters ({}); without the tag a filter needs: {}",
            stats.filtered.values().sum::<u64>() + stats.filtered_no_tag.values().sum::<u64>(),
            list(&stats.filtered),
            list(&stats.filtered_no_tag)
        )?;
    }
    if !stats.unknown_variants.is_empty() {
        writeln!(
            out,
            "warning   games of an unknown variant played as standard chess: {:?}",
            stats.unknown_variants
        )?;
    }
    if !stats.skipped_variants.is_empty() {
        writeln!(out, "variants  {:?} skipped", stats.skipped_variants)?;
    }
    Ok(())
}

/// The summary of a run for people.
fn print_text(
    out: &mut impl Write,
    args: &AnnotateArgs,
    report: &AnnotateReport,
    summary: &Summary<'_>,
) -> Result<()> {
    let stats = &report.stats;
    let (seconds, threads, bytes_written) = (report.seconds, report.threads, report.bytes_written);
    let cpu = (summary.cpu_seconds, summary.engine_cpu_seconds);
    writeln!(
        out,
        "output    {} ({} bytes, {:.2} bytes per labelled position)",
        summary.output, bytes_written, summary.bytes_per_position
    )?;
    writeln!(
        out,
        "games     {} read, {} annotated, {} rejected (bad start, or annotated up to a move that \
         cannot be played)",
        stats.games_read, stats.games, stats.rejected
    )?;
    writeln!(
        out,
        "positions {} labelled of {} looked at ({} searched, {})",
        stats.labelled,
        stats.positions,
        stats.searched,
        count(stats.nodes, "node")
    )?;
    writeln!(
        out,
        "skipped   {} opening, {} in check, {} best move a capture, {} not sampled, {} \
         unlabelled, {} duplicates",
        stats.skipped_opening,
        stats.skipped_check,
        stats.skipped_capture,
        stats.skipped_sample,
        stats.skipped_unlabelled,
        stats.skipped_duplicate
    )?;
    print_filtered_and_variants(out, report)?;
    if let Some(tables) = args.syzygy.describe() {
        writeln!(out, "syzygy    {tables}: {} from the tables", count(stats.tablebase, "label"))?;
    }
    for f in stats.failures.iter().take(20) {
        writeln!(out, "failure   {f}")?;
    }
    if let Some(line) =
        limits_line(stats.short_of_limit, stats.past_limit, &report.header.options.engine)
    {
        writeln!(out, "{line}")?;
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
    let refused = report.gave_up.as_ref().is_some_and(|g| is_off_limit(&g.cause));
    if report.interrupted && !refused {
        writeln!(
            out,
            "interrupted: the file ends at its last complete block; continue with --resume"
        )?;
    }
    Ok(())
}
