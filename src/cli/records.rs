//! `kibitz inspect`, `kibitz export` and `kibitz merge`: reading `.kbz`
//! files.

use std::{
    collections::{BTreeMap, HashSet},
    fs::File,
    io::{BufWriter, Write},
    path::PathBuf,
    process::ExitCode,
};

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;

use kibitz::{
    pipeline::annotate::same_run_but_shard,
    record::{
        chain::walk,
        dedup::{DedupError, Keep, dedup_files},
        export::{ExportFormat, Exporter},
        file::{KbzReader, KbzWriter, RecordError, partial_path},
        format::{Block, GameRecord, is_mate},
        shape::{ShapeRules, Shaper, nnue_pytorch_weights},
    },
};

/// Arguments of `kibitz inspect`.
#[derive(Args, Debug)]
pub struct InspectArgs {
    /// A `.kbz` file.
    file: PathBuf,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `kibitz inspect`: header, counts, sizes, a score histogram, and
/// every block's checksum checked. Exit code 1 if a block is corrupt.
pub fn run_inspect(args: InspectArgs) -> Result<ExitCode> {
    let mut reader = KbzReader::open(&args.file)?;
    let (mut blocks, mut games, mut labels, mut moves, mut mates, mut chains_checked) =
        (0u64, 0u64, 0u64, 0u64, 0u64, 0u64);
    let mut histogram: BTreeMap<i32, u64> = BTreeMap::new();
    let mut corrupt = None;
    let mut first_game = None;
    let mut last_game = None;
    while let Some(next) = reader.next_block() {
        match next {
            Ok((_, _, block)) => {
                blocks += 1;
                for g in &block {
                    games += 1;
                    first_game.get_or_insert(g.index);
                    last_game = Some(g.index);
                    moves += g.moves.len() as u64;
                    let decoded = g.labels();
                    labels += decoded.len() as u64;
                    for l in decoded {
                        if is_mate(l.score) {
                            mates += 1;
                        } else {
                            // Buckets of 100 centipawns, clamped to ±1000.
                            let b =
                                (i32::from(l.score).clamp(-1050, 1050) + 50).div_euclid(100) * 100;
                            *histogram.entry(b).or_default() += 1;
                        }
                    }
                    if walk(g, |_| {}).is_ok() {
                        chains_checked += 1;
                    }
                }
            }
            Err(e) => {
                corrupt = Some(e);
                break;
            }
        }
    }
    let size = reader.len();
    let mut out = super::stdout();
    if args.json {
        let v = serde_json::json!({
            "file": args.file.display().to_string(),
            "bytes": size,
            "header": reader.header,
            "blocks": blocks,
            "games": games,
            "first_game": first_game,
            "last_game": last_game,
            "moves": moves,
            "labels": labels,
            "mate_labels": mates,
            "chains_valid": chains_checked,
            "bytes_per_label": size as f64 / labels.max(1) as f64,
            "histogram": histogram,
            "corrupt": corrupt.as_ref().map(|e| serde_json::json!({"offset": e.offset, "message": e.message})),
        });
        writeln!(out, "{v}")?;
    } else {
        let h = &reader.header;
        writeln!(out, "file      {} ({size} bytes)", args.file.display())?;
        writeln!(
            out,
            "format    kbz version {}, written by kibitz {}",
            h.version, h.kibitz_version
        )?;
        let o = &h.options;
        writeln!(
            out,
            "labels    {:?}, depth {}, nodes {}, hash {} MiB{}",
            o.label,
            o.depth,
            o.nodes,
            o.hash_mib,
            if o.engine.is_empty() { String::new() } else { format!(", engine {}", o.engine) }
        )?;
        match (o.label, o.net.is_empty()) {
            (kibitz::record::format::LabelSource::Search, true) => {
                writeln!(out, "eval      hand-written")?
            }
            (_, false) => writeln!(out, "eval      NNUE {} (sha256 {})", o.net, o.net_sha256)?,
            _ => {}
        }
        writeln!(
            out,
            "select    skip {} plies, skip check {}, skip captures {}, sample {:.6} (seed {}), dedup {}, shard {}/{}",
            o.skip_plies,
            o.skip_check,
            o.skip_captures,
            f64::from(o.sample_ppm) / 1e6,
            o.seed,
            o.dedup,
            o.shard.0,
            o.shard.1
        )?;
        if o.pv_plies > 0 {
            writeln!(out, "variation up to {} plies per label", o.pv_plies)?;
        }
        if !o.relabelled_from.is_empty() {
            writeln!(out, "relabels  {}", o.relabelled_from)?;
        }
        if o.multipv > 1 {
            writeln!(out, "multipv   {} best moves per position, each with its score", o.multipv)?;
        }
        if !o.filter.is_empty() {
            writeln!(out, "games     filtered by {}", o.filter.describe())?;
        }
        for i in &h.inputs {
            writeln!(out, "input     {} ({} bytes)", i.name, i.size)?;
        }
        let end = if reader.is_complete() {
            "end marker present, its counts match"
        } else if corrupt.is_some() {
            "reading stopped at a corrupt block"
        } else {
            "NO END MARKER: incomplete (interrupted run; continue with --resume)"
        };
        writeln!(out, "blocks    {blocks}, every checksum verified; {end}")?;
        let range = match (first_game, last_game) {
            (Some(a), Some(b)) => format!(" (input game indices {a} to {b})"),
            _ => String::new(),
        };
        writeln!(out, "games     {games}{range}, {moves} moves, {chains_checked} chains replayed")?;
        writeln!(
            out,
            "positions {labels} labelled ({mates} mate scores), {:.2} bytes each",
            size as f64 / labels.max(1) as f64
        )?;
        let max = histogram.values().copied().max().unwrap_or(1).max(1);
        for (bucket, n) in &histogram {
            let bar = "#".repeat((n * 50 / max) as usize);
            writeln!(out, "  {:>+6} {:>9} {bar}", bucket, n)?;
        }
    }
    Ok(end_of_reading(&reader, corrupt))
}

/// The exit code after reading a file through: 1, with the reason on
/// stderr, if a block was corrupt or the file has no end marker (an
/// interrupted run); what could be read has been reported or written.
fn end_of_reading(reader: &KbzReader, corrupt: Option<RecordError>) -> ExitCode {
    if let Some(e) = corrupt {
        eprintln!("kibitz: {e}");
        ExitCode::from(1)
    } else if !reader.is_complete() {
        eprintln!("kibitz: {}", reader.incomplete_message());
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Arguments of `kibitz export`.
/// `--format` of `export`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum ExportFormatArg {
    /// Annotated PGN.
    Pgn,
    /// Stockfish's `.plain` text.
    Plain,
    /// EPD with `ce`/`dm`, `bm`, `acd`.
    Epd,
    /// JSON lines.
    Jsonl,
    /// bullet's 32-byte ChessBoard.
    Bullet,
    /// Stockfish's binpack.
    Binpack,
}

impl From<ExportFormatArg> for ExportFormat {
    fn from(f: ExportFormatArg) -> ExportFormat {
        match f {
            ExportFormatArg::Pgn => ExportFormat::Pgn,
            ExportFormatArg::Plain => ExportFormat::Plain,
            ExportFormatArg::Epd => ExportFormat::Epd,
            ExportFormatArg::Jsonl => ExportFormat::Jsonl,
            ExportFormatArg::Bullet => ExportFormat::Bullet,
            ExportFormatArg::Binpack => ExportFormat::Binpack,
        }
    }
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// A `.kbz` file.
    file: PathBuf,
    /// The format to write.
    #[arg(long, value_enum)]
    format: ExportFormatArg,
    /// Write here (default: standard output).
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    /// Shaping: leave out scores beyond ±N centipawns, and mates.
    #[arg(long, value_name = "N", help_heading = "Shaping (every format)")]
    max_score: Option<i32>,
    /// Shaping: leave out positions whose game's result has a probability
    /// below P (0 to 1) under nnue-pytorch's win-rate model of the score
    /// and ply (its loader skips them at random; this is deterministic).
    #[arg(long, value_name = "P", help_heading = "Shaping (every format)")]
    wdl_consistency: Option<f64>,
    /// Shaping: resample to a distribution of piece counts:
    /// `nnue-pytorch` (its loader's target, 2 - ((n - 16) / 16)^2),
    /// `uniform`, or 33 comma-separated weights for 0 to 32 pieces. Reads
    /// the file twice.
    #[arg(long, value_name = "WEIGHTS", help_heading = "Shaping (every format)")]
    piece_count_weights: Option<String>,
    /// Seed of the piece-count resampling.
    #[arg(long, default_value_t = 0, help_heading = "Shaping (every format)")]
    seed: u64,
}

impl ExportArgs {
    fn shape_rules(&self) -> Result<Option<ShapeRules>> {
        if let Some(p) = self.wdl_consistency
            && !(0.0..=1.0).contains(&p)
        {
            bail!("--wdl-consistency {p}: a probability from 0 to 1");
        }
        if let Some(n) = self.max_score
            && n < 0
        {
            bail!("--max-score {n}: centipawns, 0 or more");
        }
        let weights = match self.piece_count_weights.as_deref() {
            None => None,
            Some("nnue-pytorch") => Some(nnue_pytorch_weights()),
            Some("uniform") => Some([1.0; 33]),
            Some(list) => {
                let values: Vec<f64> = list
                    .split(',')
                    .map(|v| v.trim().parse::<f64>())
                    .collect::<Result<_, _>>()
                    .ok()
                    .filter(|v: &Vec<f64>| v.len() == 33 && v.iter().all(|w| *w >= 0.0))
                    .with_context(|| {
                        format!("--piece-count-weights {list}: nnue-pytorch, uniform, or 33 weights (0 to 32 pieces), none negative")
                    })?;
                Some(std::array::from_fn(|k| values[k]))
            }
        };
        let rules = ShapeRules {
            max_score: self.max_score,
            wdl_consistency: self.wdl_consistency,
            piece_count_weights: weights,
            seed: self.seed,
        };
        Ok((rules != ShapeRules { seed: self.seed, ..ShapeRules::default() }).then_some(rules))
    }
}

/// Runs `kibitz export`, block by block.
pub fn run_export(args: ExportArgs) -> Result<ExitCode> {
    if let Some(output) = &args.output {
        super::refuse_output_over_input(output, std::slice::from_ref(&args.file))?;
    }
    let mut shaper = args.shape_rules()?.map(Shaper::new);
    if let Some(shaper) = shaper.as_mut().filter(|s| s.needs_counts()) {
        // The first pass: the piece counts the resampling starts from.
        let mut reader = KbzReader::open(&args.file)?;
        while let Some(next) = reader.next_block() {
            let Ok((_, _, block)) = next else { break };
            for g in &block {
                shaper.count(g)?;
            }
        }
    }
    let mut reader = KbzReader::open(&args.file)?;
    let out: Box<dyn Write> = match &args.output {
        Some(p) => Box::new(BufWriter::with_capacity(
            1 << 20,
            File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        )),
        None => Box::new(BufWriter::with_capacity(1 << 16, super::stdout())),
    };
    let every = reader.header.options.labels_every_position();
    let mut exporter = Exporter::new(args.format.into(), out)?.with_analysis_tags(every);
    let mut corrupt = None;
    while let Some(next) = reader.next_block() {
        match next {
            Ok((_, _, block)) => {
                for g in &block {
                    match shaper.as_mut() {
                        Some(shaper) => exporter.game(&shaper.shape(g)?)?,
                        None => exporter.game(g)?,
                    }
                }
            }
            Err(e) => {
                corrupt = Some(e);
                break;
            }
        }
    }
    let stats = exporter.stats;
    exporter.finish()?;
    if let Some(shaper) = &shaper {
        let s = shaper.stats;
        eprintln!(
            "kibitz: shaping: {} labels read, {} kept; left out: {} by --max-score, {} by --wdl-consistency, {} by --piece-count-weights",
            s.labels, s.kept, s.max_score, s.wdl_consistency, s.piece_count
        );
    }
    if args.output.is_some() {
        eprintln!(
            "kibitz: {} games, {} records written, {} positions without a move left out",
            stats.games, stats.written, stats.skipped
        );
    }
    Ok(end_of_reading(&reader, corrupt))
}

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
    #[arg(long, default_value = "1G", value_parser = parse_size)]
    dedup_memory: usize,
}

impl KeepArg {
    pub(crate) fn keep(self) -> Keep {
        match self {
            KeepArg::First => Keep::First,
            KeepArg::Last => Keep::Last,
            KeepArg::Deepest => Keep::Deepest,
        }
    }
}

/// Replaces `file` by its deduplication under `keep` (written beside it,
/// then renamed over it).
pub(crate) fn dedup_in_place(
    file: &std::path::Path,
    keep: Keep,
    memory: usize,
) -> Result<kibitz::record::dedup::DedupReport> {
    // The deduplicated file replaces the file only once it is complete.
    Ok(dedup_files(&[file.to_path_buf()], file, keep, memory, true)?)
}

/// Runs `kibitz merge`: shards of one run, joined in game order into the
/// file the unsharded run writes (duplicates dropped here when the run asked
/// for `--dedup`).
pub fn run_merge(args: MergeArgs) -> Result<ExitCode> {
    super::refuse_output_over_input(&args.output, &args.files)?;
    let mut readers: Vec<KbzReader> =
        args.files.iter().map(|f| KbzReader::open(f)).collect::<Result<_, _>>()?;
    let first = readers[0].header.clone();
    let n = first.options.shard.1;
    let mut shards_seen = HashSet::new();
    for (r, f) in readers.iter().zip(&args.files) {
        if !same_run_but_shard(&r.header, &first) {
            bail!("{} is not a shard of the same run as {}", f.display(), args.files[0].display());
        }
        if r.header.options.shard.1 != n || !shards_seen.insert(r.header.options.shard.0) {
            bail!(
                "{}: shard {}/{} repeated or of another split",
                f.display(),
                r.header.options.shard.0,
                r.header.options.shard.1
            );
        }
    }
    if shards_seen.len() as u64 != n {
        bail!("{} shards of {n} given: the merge would miss games", shards_seen.len());
    }
    let mut header = first.clone();
    header.options.shard = (0, 1);
    // Written in the current layout, whatever version the shards were.
    header.version = kibitz::record::format::FORMAT_VERSION;
    // A merge that fails leaves nothing behind: it is cheap to run again,
    // and a partial merge must not be mistaken for the run's output.
    let writer = KbzWriter::create_whole(&args.output, &header, args.force)
        .map_err(|e| super::exists_advice(e, "replace it"))
        .with_context(|| args.output.display().to_string())?;
    match merge_into(&args, &mut readers, &header, writer) {
        Ok(()) => {
            if let Some(keep) = args.keep {
                let r = dedup_in_place(&args.output, keep.keep(), args.dedup_memory)?;
                eprintln!(
                    "kibitz: {} labels, {} kept ({} duplicates dropped)",
                    r.labels,
                    r.kept,
                    r.labels - r.kept
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            let _ = std::fs::remove_file(partial_path(&args.output));
            Err(e.context(format!("merge failed; {} not written", args.output.display())))
        }
    }
}

fn merge_into(
    args: &MergeArgs,
    readers: &mut [KbzReader],
    header: &kibitz::record::format::Header,
    mut writer: KbzWriter,
) -> Result<()> {
    // A k-way merge by game index; each shard is in index order.
    let mut pending: Vec<std::collections::VecDeque<GameRecord>> =
        vec![Default::default(); readers.len()];
    let mut seen = header.options.dedup.then(HashSet::new);
    let (block_games, block_labels_max) =
        (header.options.block_games.max(1) as usize, header.options.block_labels.max(1) as usize);
    let mut block: Vec<GameRecord> = Vec::new();
    let mut block_labels = 0;
    loop {
        for (i, r) in readers.iter_mut().enumerate() {
            if pending[i].is_empty()
                && let Some(next) = r.next_block()
            {
                pending[i].extend(next?.2);
            }
        }
        let Some(i) = (0..pending.len())
            .filter(|&i| !pending[i].is_empty())
            .min_by_key(|&i| pending[i][0].index)
        else {
            break;
        };
        let Some(mut game) = pending[i].pop_front() else { break };
        if let Some(seen) = seen.as_mut() {
            let mut keys = Vec::new();
            walk(&game, |s| {
                if s.label.is_some() {
                    keys.push(s.pos.key());
                }
            })
            .map_err(|e| anyhow::anyhow!("{e}"))?;
            let kept: Vec<_> = game
                .labels()
                .iter()
                .copied()
                .zip(keys)
                .filter(|&(_, k)| seen.insert(k))
                .map(|(l, _)| l)
                .collect();
            game.set_labels(&kept);
        }
        block_labels += game.label_count();
        block.push(game);
        if block.len() >= block_games || block_labels >= block_labels_max {
            writer.write_block(&Block::from_games(&block))?;
            block.clear();
            block_labels = 0;
        }
    }
    if !block.is_empty() {
        writer.write_block(&Block::from_games(&block))?;
    }
    for (r, f) in readers.iter().zip(&args.files) {
        if !r.is_complete() {
            bail!("{} is incomplete (no end marker): finish that shard first", f.display());
        }
    }
    writer.finish()?;
    Ok(())
}

/// How `dedup` keeps one label per position.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeepArg {
    /// The first met (inputs in order).
    First,
    /// The last met.
    Last,
    /// The deepest search (the first of the deepest on a tie).
    Deepest,
}

/// Arguments of `kibitz dedup`.
#[derive(Args, Debug)]
pub struct DedupArgs {
    /// `.kbz` files, read in order.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The file to write.
    #[arg(long, short = 'o')]
    output: PathBuf,
    /// Which label of a position to keep.
    #[arg(long, value_enum, default_value = "first")]
    keep: KeepArg,
    /// Memory for the positions seen (bytes, or with K, M, G); beyond it
    /// they go to disk in sorted runs beside the output.
    #[arg(long, default_value = "1G", value_parser = parse_size)]
    dedup_memory: usize,
    /// Replace an existing output file.
    #[arg(long)]
    force: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

pub(crate) fn parse_size(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => (&t[..i], t[i..].trim()),
        None => (t, ""),
    };
    let n: usize = digits.parse().map_err(|_| format!("{text}: a size such as 512M"))?;
    let unit = match unit.to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        _ => return Err(format!("{text}: a size such as 512M")),
    };
    n.checked_mul(unit).ok_or_else(|| format!("{text}: too large"))
}

/// Runs `kibitz dedup`.
pub fn run_dedup(args: DedupArgs) -> Result<ExitCode> {
    super::refuse_output_over_input(&args.output, &args.files)?;
    let keep = args.keep.keep();
    let report = dedup_files(&args.files, &args.output, keep, args.dedup_memory, args.force)
        .map_err(|e| match e {
            DedupError::Io { source, .. } if source.kind() == std::io::ErrorKind::AlreadyExists => {
                anyhow!("{}: exists: use --force to replace it", args.output.display())
            }
            e => e.into(),
        })?;
    let mut out = super::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&report)?)?;
    } else {
        writeln!(
            out,
            "dedup     {} games, {} labels read, {} kept ({} duplicates dropped); {} runs on disk; {} bytes written",
            report.games,
            report.labels,
            report.kept,
            report.labels - report.kept,
            report.runs,
            report.bytes_written
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
