//! `kibitz train`: a small NNUE trained on the CPU from labelled files.

use std::{
    io::{IsTerminal, Write},
    path::{Path, PathBuf},
    process::ExitCode,
    sync::atomic::Ordering,
};

use anyhow::{Context, Result, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use plotters::prelude::*;

use kibitz::train::{
    LossPoint, Train, TrainError, TrainReport, TrainSettings, TrainSink, data::IngestCounts,
};

/// Arguments of `kibitz train`.
#[derive(Args, Debug)]
pub struct TrainArgs {
    /// Labelled files: .kbz (annotate, selfplay, relabel), Stockfish binpack
    /// or plain, viriformat (plain or zstd).
    #[arg(required = true, value_name = "DATA")]
    inputs: Vec<PathBuf>,
    /// The net to write (kibitz's format; `--net` reads it). Rewritten after
    /// every superbatch.
    #[arg(short, long, value_name = "NET")]
    output: PathBuf,
    /// The hidden layer's width per side (a multiple of 16).
    #[arg(long, value_name = "WIDTH", default_value_t = 128)]
    hidden: usize,
    /// The hidden layer's activation.
    #[arg(long, value_enum, default_value_t = ActivationArg::Screlu)]
    activation: ActivationArg,
    /// Output layers chosen by the number of pieces on the board (1 to 8;
    /// 8: one for every 4 piece counts, as bullet's material buckets).
    #[arg(long, value_name = "N", default_value_t = 1)]
    output_buckets: usize,
    /// Superbatches to train (a checkpoint and the net after each).
    #[arg(long, value_name = "N", default_value_t = 40)]
    superbatches: u32,
    /// Batches per superbatch.
    #[arg(long, value_name = "N", default_value_t = 100)]
    batches: u32,
    /// Positions per batch.
    #[arg(long, value_name = "N", default_value_t = 16384)]
    batch_size: usize,
    /// The first learning rate (AdamW).
    #[arg(long, value_name = "RATE", default_value_t = 0.001)]
    lr: f32,
    /// The last learning rate (cosine decay from --lr).
    #[arg(long, value_name = "RATE", default_value_t = 0.00001)]
    lr_final: f32,
    /// AdamW's decoupled weight decay.
    #[arg(long, value_name = "DECAY", default_value_t = 0.01)]
    weight_decay: f32,
    /// The share of the target taken from the game's result (the rest from
    /// the score's win probability, sigmoid(score / 400)).
    #[arg(long, value_name = "SHARE", default_value_t = 0.3)]
    wdl: f32,
    /// Worker threads (the net depends on it: the gradients are summed in
    /// thread order).
    #[arg(short = 'j', long, default_value_t = 1)]
    threads: usize,
    /// The seed of the shuffle, the validation split and the first weights.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Games kept for validation, per thousand.
    #[arg(long, value_name = "PER_THOUSAND", default_value_t = 20)]
    validation: u32,
    /// Bucket files of the shuffle (memory holds one: the data's size over
    /// this number).
    #[arg(long, value_name = "N", default_value_t = 32)]
    buckets: usize,
    /// The folder of the shuffled data and the checkpoint, made if missing
    /// (its parent must exist) [default: NET.train].
    #[arg(long, value_name = "DIR")]
    cache: Option<PathBuf>,
    /// Continue the run from its last checkpoint (same settings).
    #[arg(long)]
    resume: bool,
    /// Replace an existing net.
    #[arg(long)]
    force: bool,
    /// The loss plot [default: NET.loss.png and NET.loss.svg].
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
    /// The summary as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum ActivationArg {
    /// clamp(x, 0, 1) squared.
    Screlu,
    /// clamp(x, 0, 1).
    Crelu,
}

struct CliSink {
    bar: ProgressBar,
    superbatches: u32,
    batches: u32,
    plot: PathBuf,
    plot_error: Option<String>,
    log: bool,
}

impl TrainSink for CliSink {
    fn ingest(&mut self, c: &IngestCounts) {
        self.bar.set_message(format!(
            "reading: {} games, {} training positions, {} validation",
            c.games, c.train, c.validation
        ));
    }

    fn batch(&mut self, superbatch: u32, batch: u32, per_second: f64, loss: f64) {
        let done = u64::from(superbatch - 1) * u64::from(self.batches) + u64::from(batch);
        self.bar.set_length(u64::from(self.superbatches) * u64::from(self.batches));
        self.bar.set_position(done);
        self.bar.set_message(format!(
            "superbatch {superbatch}/{} {:.0} positions/s loss {loss:.6}",
            self.superbatches, per_second
        ));
    }

    fn superbatch(&mut self, history: &[LossPoint]) {
        let p = history.last().expect("a superbatch");
        if self.log {
            self.bar.suspend(|| {
                let validation = match p.validation {
                    Some(v) => format!("validation loss {v:.6}"),
                    None => "no validation set".to_string(),
                };
                eprintln!(
                    "superbatch {:>4}: train loss {:.6}, {validation}, {:.0} s",
                    p.superbatch, p.train, p.seconds
                );
            });
        }
        if let Err(e) = draw_losses(&self.plot, history) {
            self.plot_error.get_or_insert(e.to_string());
        }
    }
}

/// Runs `kibitz train`.
pub fn run(args: TrainArgs) -> Result<ExitCode> {
    let args = TrainArgs { inputs: kibitz::expand_folders(&args.inputs)?, ..args };
    check_args(&args)?;
    let cache = args.cache.clone().unwrap_or_else(|| with_suffix(&args.output, ".train"));
    let plot = args.plot.clone().unwrap_or_else(|| with_suffix(&args.output, ".loss.png"));
    // Checked before the data is read: no folder is made for a file.
    kibitz::check_output_folder(&args.output)
        .with_context(|| format!("{}: cannot write the net", args.output.display()))?;
    kibitz::check_output_folder(&plot)
        .with_context(|| format!("--plot {}: cannot write the plot", plot.display()))?;
    let job = Train::new(settings(&args, cache), args.resume);
    let stop = job.stop_flag();
    let _ = ctrlc::set_handler(move || {
        if stop.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
    });
    super::stats::register_font();
    let mut sink = CliSink {
        bar: progress_bar(args.quiet),
        superbatches: args.superbatches,
        batches: args.batches,
        plot,
        plot_error: None,
        log: !args.quiet,
    };
    let result = job.run(&mut sink);
    sink.bar.finish_and_clear();
    if let Some(e) = &sink.plot_error {
        eprintln!("kibitz: the loss plot could not be drawn: {e}");
    }
    let report = match result {
        Ok(r) => r,
        Err(TrainError::Stopped(done)) => {
            eprintln!("kibitz: stopped after superbatch {done}; --resume continues from there");
            return Ok(ExitCode::from(130));
        }
        Err(e) => return Err(e.into()),
    };
    let mut out = super::stdout();
    if args.json {
        serde_json::to_writer(&mut out, &report)?;
        writeln!(out)?;
    } else {
        print_report(&mut out, &args, &report)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// What is refused before anything is read: a net that exists (without
/// `--force` or `--resume`), a blend with results from inputs that hold
/// none.
fn check_args(args: &TrainArgs) -> Result<()> {
    if args.output.exists() && !args.force && !args.resume {
        bail!(
            "{}: exists: use --force to replace it, or --resume to continue its run",
            args.output.display()
        );
    }
    if args.wdl > 0.0 {
        // A result blend needs each position's game result.
        for input in &args.inputs {
            if kibitz::Foreign::detect(input) == Some(kibitz::Foreign::LichessEvals) {
                bail!(
                    "{}: Lichess's evaluations hold no game results, so --wdl {} (a blend with \
                     the result) cannot be trained on them: give --wdl 0",
                    input.display(),
                    args.wdl
                );
            }
        }
    }
    Ok(())
}

/// The run's settings from its arguments.
fn settings(args: &TrainArgs, cache: PathBuf) -> TrainSettings {
    TrainSettings {
        inputs: args.inputs.clone(),
        output: args.output.clone(),
        cache,
        hidden: args.hidden,
        screlu: args.activation == ActivationArg::Screlu,
        output_buckets: args.output_buckets,
        superbatches: args.superbatches,
        batches: args.batches,
        batch_size: args.batch_size,
        lr: args.lr,
        lr_final: args.lr_final,
        weight_decay: args.weight_decay,
        wdl: args.wdl,
        threads: args.threads,
        seed: args.seed,
        validation_per_mille: args.validation,
        buckets: args.buckets,
    }
}

/// The progress bar: hidden when quiet or when standard error is no
/// terminal.
fn progress_bar(quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(4));
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// The run's report as text: the data, the training, the losses, the net.
fn print_report(out: &mut impl Write, args: &TrainArgs, report: &TrainReport) -> Result<()> {
    let c = &report.counts;
    writeln!(
        out,
        "data     {} games, {} labels: {} training positions, {} validation; dropped {} mate or \
         tablebase scores, {} in check, {} with a capture or promotion best",
        c.games, c.labels, c.train, c.validation, c.mates, c.in_check, c.tactical
    )?;
    writeln!(
        out,
        "trained  {} superbatch{}, {} positions in {:.1} s: {:.0} positions/s ({} thread{})",
        report.trained,
        if report.trained == 1 { "" } else { "es" },
        report.positions,
        report.seconds,
        report.per_second,
        args.threads,
        if args.threads == 1 { "" } else { "s" }
    )?;
    if let Some(p) = report.history.last() {
        let validation = match p.validation {
            Some(v) => format!("validation {v:.6}"),
            None => format!(
                "no validation (no game fell in the validation share, --validation {} per \
                 thousand)",
                args.validation
            ),
        };
        writeln!(
            out,
            "loss     train {:.6}, {validation} after superbatch {}",
            p.train, p.superbatch
        )?;
    }
    writeln!(out, "net      {} (sha256 {})", args.output.display(), report.sha256)?;
    Ok(())
}

/// `path` with `suffix` added to its file name.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// The training and validation losses by superbatch, as PNG (`png`) and
/// SVG (the same name, `.svg`).
fn draw_losses(png: &Path, history: &[LossPoint]) -> Result<()> {
    fn draw<DB: DrawingBackend>(
        root: DrawingArea<DB, plotters::coord::Shift>,
        history: &[LossPoint],
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        root.fill(&WHITE)?;
        let last = history.last().map_or(1, |p| p.superbatch).max(2);
        let all = history.iter().flat_map(|p| std::iter::once(p.train).chain(p.validation));
        let (lo, hi) = all.fold((f64::MAX, f64::MIN), |(l, h), v| (l.min(v), h.max(v)));
        let pad = ((hi - lo) * 0.1).max(1e-6);
        let mut chart = ChartBuilder::on(&root)
            .caption("Loss by superbatch", ("sans-serif", 22))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(1u32..last, (lo - pad)..(hi + pad))?;
        chart.configure_mesh().x_desc("superbatch").y_desc("loss").draw()?;
        let blue = RGBColor(52, 101, 164);
        let orange = RGBColor(206, 92, 0);
        chart
            .draw_series(LineSeries::new(history.iter().map(|p| (p.superbatch, p.train)), blue))?
            .label("training")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], blue));
        // No validation set: no validation line (a line at zero would read
        // as a perfect fit).
        if history.iter().any(|p| p.validation.is_some()) {
            chart
                .draw_series(LineSeries::new(
                    history.iter().filter_map(|p| Some((p.superbatch, p.validation?))),
                    orange,
                ))?
                .label("validation")
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], orange));
        }
        chart.configure_series_labels().border_style(BLACK).background_style(WHITE).draw()?;
        root.present()
    }
    // Drawn aside after every superbatch: a run stopped while drawing
    // leaves the last whole plot.
    let mut drawn = super::common::Drawn::default();
    drawn.draw(png, |f| draw(BitMapBackend::new(f, (900, 520)).into_drawing_area(), history))?;
    drawn.draw(&png.with_extension("svg"), |f| {
        draw(SVGBackend::new(f, (900, 520)).into_drawing_area(), history)
    })?;
    drawn.keep()
}
