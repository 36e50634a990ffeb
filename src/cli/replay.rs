//! `kibitz replay`: replay and verify game databases; report every rejected
//! game with its location, and the speed.

use std::{
    fs::File,
    io::{self, BufWriter, IsTerminal, Write},
    path::PathBuf,
    process::ExitCode,
    time::Instant,
};

use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use kibitz::{
    io::source::{ChunkConfig, Format, display_name},
    pipeline::{
        replay::{Rejected, ReplayOptions, Replayer, Verify},
        run::{self, Event, PipelineConfig},
        stats::{FileSummary, Summary},
    },
};

/// Arguments of `kibitz replay`.
#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// Input files: PGN or EPD, plain, zstd or gzip (detected from the
    /// bytes); `-` reads standard input.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Worker threads (default: all cores).
    #[arg(long, short = 'j')]
    threads: Option<usize>,
    /// What to check after every move.
    #[arg(long, value_enum, default_value_t = VerifyArg::Keys)]
    verify: VerifyArg,
    /// Read the inputs as this format instead of sniffing it.
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
    /// Read at most this many bytes of text from each input (whole games
    /// only): a bound for endless inputs such as a device or a pipe.
    #[arg(long, value_name = "BYTES")]
    max_bytes: Option<u64>,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
    /// Write one JSON line per rejected game to FILE.
    #[arg(long, value_name = "FILE")]
    errors: Option<PathBuf>,
    /// Write `game, ply, Polyglot key, FEN` (tab-separated) for every
    /// position to FILE; games are numbered from 1 across all inputs.
    #[arg(long, value_name = "FILE")]
    keys: Option<PathBuf>,
    /// Exit with code 2 if any game was rejected.
    #[arg(long)]
    strict: bool,
    /// No progress bar.
    #[arg(long, short = 'q')]
    quiet: bool,
}

/// `--verify`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum VerifyArg {
    /// Replay only.
    None,
    /// After every move, every incremental field equals its from-scratch
    /// value.
    Keys,
    /// Keys, and each game unwound to its start must equal the start.
    Undo,
}

impl From<VerifyArg> for Verify {
    fn from(v: VerifyArg) -> Verify {
        match v {
            VerifyArg::None => Verify::None,
            VerifyArg::Keys => Verify::Keys,
            VerifyArg::Undo => Verify::Undo,
        }
    }
}

/// `--format`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum FormatArg {
    /// PGN games.
    Pgn,
    /// EPD positions, one per line.
    Epd,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Pgn => Format::Pgn,
            FormatArg::Epd => Format::Epd,
        }
    }
}

/// The default number of worker threads: the cores available.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Creates an output file, refusing to write into something that is not a
/// regular file path (a directory).
pub fn create_output(path: &PathBuf) -> Result<BufWriter<File>> {
    let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    Ok(BufWriter::with_capacity(1 << 20, file))
}

/// Rejected games described on standard error; the rest are counted (the
/// summary has them by kind, `--errors FILE` every one).
pub const REJECTS_SHOWN: u64 = 10;

/// How rejected games reach the user: the first [`REJECTS_SHOWN`] as a line
/// on standard error (file, game number, byte offset, ply, move, why), and
/// every one as a JSON line in the `--errors` file if there is one.
pub struct RejectReport {
    path: Option<PathBuf>,
    file: Option<File>,
    out: Option<BufWriter<File>>,
    shown: u64,
    total: u64,
}

impl RejectReport {
    /// A report to the `--errors` file `errors`, if given. The file is
    /// opened (created if missing) but not yet emptied, so that a path that
    /// cannot be written fails before any other output is started; call
    /// [`RejectReport::start`] before reporting.
    pub fn open(errors: Option<&PathBuf>) -> Result<RejectReport> {
        let file = errors
            .map(|p| {
                // A pipe or device (`/dev/stderr`, a FIFO) is only written:
                // opened for reading too, a FIFO would keep its own reader.
                let regular = std::fs::metadata(p).map_or(true, |m| m.is_file());
                std::fs::OpenOptions::new()
                    .read(regular)
                    .write(true)
                    .create(regular)
                    .truncate(false)
                    .open(p)
                    .with_context(|| format!("cannot create {}", p.display()))
            })
            .transpose()?;
        Ok(RejectReport { path: errors.cloned(), file, out: None, shown: 0, total: 0 })
    }

    /// Starts the `--errors` file: it keeps the lines of games before
    /// `keep_below` (what a resumed run reported before it was stopped; 0
    /// keeps nothing) and loses the rest.
    pub fn start(&mut self, keep_below: u64) -> Result<()> {
        let Some(mut file) = self.file.take() else { return Ok(()) };
        let name = self.path.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
        let failed = || format!("writing {name}");
        // A pipe or device has nothing to keep and cannot be emptied.
        if !file.metadata().with_context(failed)?.is_file() {
            self.out = Some(BufWriter::with_capacity(1 << 20, file));
            return Ok(());
        }
        let mut kept = Vec::new();
        if keep_below > 0 {
            let mut text = Vec::new();
            io::Read::read_to_end(&mut file, &mut text).with_context(failed)?;
            for line in text.split(|&b| b == b'\n') {
                let index = serde_json::from_slice::<serde_json::Value>(line)
                    .ok()
                    .and_then(|v| v["index"].as_u64());
                if index.is_some_and(|i| i < keep_below) {
                    kept.extend_from_slice(line);
                    kept.push(b'\n');
                }
            }
        }
        file.set_len(0).with_context(failed)?;
        io::Seek::seek(&mut file, io::SeekFrom::Start(0)).with_context(failed)?;
        file.write_all(&kept).with_context(failed)?;
        self.out = Some(BufWriter::with_capacity(1 << 20, file));
        Ok(())
    }

    /// Reports `r`, of input `file` (its display name), game `game` of that
    /// file (from 1) and `index` of the whole input (from 0).
    pub fn add(
        &mut self,
        bar: &ProgressBar,
        file: &str,
        game: u64,
        index: u64,
        r: &Rejected,
    ) -> io::Result<()> {
        self.total += 1;
        if self.shown < REJECTS_SHOWN {
            self.shown += 1;
            let san = if r.san.is_empty() { String::new() } else { format!(" ({})", r.san) };
            bar.suspend(|| {
                eprintln!(
                    "kibitz: {file}: game {game} at byte {}, ply {}{san}: {}: {}",
                    r.offset,
                    r.ply,
                    r.kind.name(),
                    r.reason
                )
            });
        }
        if let Some(out) = self.out.as_mut() {
            let mut v = serde_json::to_value(r).unwrap_or(serde_json::Value::Null);
            if let serde_json::Value::Object(map) = &mut v {
                map.insert("file".into(), file.into());
                map.insert("game".into(), game.into());
                map.insert("index".into(), index.into());
            }
            writeln!(out, "{v}")?;
        }
        Ok(())
    }

    /// Flushes the `--errors` file and says how many were not shown.
    pub fn finish(self) -> Result<()> {
        if let Some(mut out) = self.out {
            out.flush().context("writing the --errors file")?;
            if self.total > self.shown {
                eprintln!(
                    "kibitz: {} more rejected games not shown (all are in the --errors file)",
                    self.total - self.shown
                );
            }
        } else if self.total > self.shown {
            eprintln!(
                "kibitz: {} more rejected games not shown (--errors FILE lists every one)",
                self.total - self.shown
            );
        }
        Ok(())
    }
}

/// The inputs' total size on disk, the progress bar's length; unknown if
/// one of them is standard input or cannot be read.
pub fn input_bytes(inputs: &[PathBuf]) -> Option<u64> {
    inputs
        .iter()
        .map(
            |p| {
                if p.as_os_str() == "-" { None } else { std::fs::metadata(p).ok().map(|m| m.len()) }
            },
        )
        .sum()
}

/// A progress bar on stderr, hidden when `quiet` or stderr is not a
/// terminal.
pub fn progress_bar(total: Option<u64>, quiet: bool) -> ProgressBar {
    if quiet || !io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = match total {
        Some(t) => ProgressBar::with_draw_target(Some(t), ProgressDrawTarget::stderr_with_hz(4)),
        None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(4)),
    };
    let style = ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {wide_bar} {binary_bytes}/{binary_total_bytes} {msg}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar
}

/// Runs `kibitz replay`.
pub fn run(args: ReplayArgs) -> Result<ExitCode> {
    // Before any file is created: an output that is an input would be
    // emptied before it is read.
    for (flag, out) in [("--keys", &args.keys), ("--errors", &args.errors)] {
        if let Some(out) = out {
            super::refuse_output_over_input(out, &args.inputs)
                .with_context(|| format!("{flag} {}", out.display()))?;
        }
    }
    if let (Some(keys), Some(errors)) = (&args.keys, &args.errors)
        && super::same_file(keys, errors)
    {
        anyhow::bail!("--keys and --errors name the same file {}", keys.display());
    }
    let threads = args.threads.unwrap_or_else(default_threads).max(1);
    let config = PipelineConfig {
        inputs: args.inputs.clone(),
        format: args.format.map(Format::from),
        threads,
        // Decode as many zstd frames at once as there are threads: more
        // only holds more decoded text in memory.
        chunk: ChunkConfig {
            frame_window: threads.max(2),
            max_text: args.max_bytes.unwrap_or(u64::MAX),
            ..ChunkConfig::default()
        },
        count_games: false,
    };
    let options =
        ReplayOptions { verify: args.verify.into(), keys: args.keys.is_some(), annotations: false };
    let mut keys_out = args.keys.as_ref().map(create_output).transpose()?;
    let mut rejects = RejectReport::open(args.errors.as_ref())?;
    rejects.start(0)?;

    let bar = progress_bar(input_bytes(&args.inputs), args.quiet);

    let mut summary = Summary {
        files: args
            .inputs
            .iter()
            .map(|p| FileSummary { name: display_name(p), ..FileSummary::default() })
            .collect(),
        threads,
        verify: format!("{:?}", args.verify).to_lowercase(),
        ..Summary::default()
    };
    let mut file_game_base = vec![0u64; args.inputs.len()];
    let mut global_game_base = 0u64;
    let mut done_bytes = 0u64;
    let mut write_error: Option<io::Error> = None;
    let start = Instant::now();

    run::run(
        &config,
        || Replayer::new(options.clone()),
        |replayer, chunk| match chunk.format {
            Format::Pgn => replayer.replay_pgn_chunk(&chunk.data, chunk.offset, chunk.file),
            Format::Epd => replayer.replay_epd_chunk(&chunk.data, chunk.offset, chunk.file),
        },
        |event| {
            match event {
                Event::Start { file, compression, format, .. } => {
                    summary.files[file].compression = Some(compression);
                    summary.files[file].format = Some(format);
                }
                Event::Chunk { file, input_pos, result, .. } => {
                    summary.add(file, &result);
                    let written = (|| -> io::Result<()> {
                        if let Some(out) = keys_out.as_mut() {
                            let mut lines = result.key_lines.split_inclusive(|&b| b == b'\n');
                            for (g, &count) in result.key_line_counts.iter().enumerate() {
                                let game_no = global_game_base + g as u64 + 1;
                                for _ in 0..count {
                                    if let Some(line) = lines.next() {
                                        write!(out, "{game_no}\t")?;
                                        out.write_all(line)?;
                                    }
                                }
                            }
                        }
                        for r in &result.rejected {
                            rejects.add(
                                &bar,
                                &display_name(&args.inputs[r.file]),
                                file_game_base[file] + r.local_game + 1,
                                global_game_base + r.local_game,
                                r,
                            )?;
                        }
                        Ok(())
                    })();
                    if let Err(e) = written {
                        write_error = Some(e);
                        return false;
                    }
                    file_game_base[file] += result.games;
                    global_game_base += result.games;
                    bar.set_position(done_bytes + input_pos);
                    let secs = start.elapsed().as_secs_f64().max(1e-9);
                    bar.set_message(format!(
                        "{} games, {:.2} M plies/s",
                        summary.games,
                        summary.plies as f64 / secs / 1e6
                    ));
                }
                Event::Error { file, offset, message } => {
                    let at = offset.map(|o| format!(" at byte {o}")).unwrap_or_default();
                    let line = format!("{}{at}: {message}", display_name(&args.inputs[file]));
                    bar.suspend(|| eprintln!("kibitz: {line}"));
                    summary.files[file].errors.push(format!("{}{at}", message));
                    summary.input_errors += 1;
                }
                Event::End { file, bytes_in, bytes_out } => {
                    summary.files[file].bytes = bytes_in;
                    summary.files[file].text_bytes = bytes_out;
                    summary.bytes += bytes_in;
                    summary.text_bytes += bytes_out;
                    done_bytes += bytes_in;
                    bar.set_position(done_bytes);
                }
            }
            true
        },
    );
    bar.finish_and_clear();
    summary.seconds = start.elapsed().as_secs_f64();
    if let Some(e) = write_error {
        return Err(e).context("writing the --keys or --errors file");
    }
    if let Some(mut out) = keys_out {
        out.flush().context("writing the --keys file")?;
    }
    rejects.finish()?;
    let mut stdout = super::stdout();
    if args.json {
        writeln!(stdout, "{}", summary.to_json())?;
    } else {
        writeln!(stdout, "{summary}")?;
    }
    // 2: --strict and a game was rejected; 1: an input could not be read
    // whole (missing, binary, broken compression, cut short); the summary
    // covers everything that could be read either way.
    Ok(if args.strict && summary.rejected_games > 0 {
        ExitCode::from(2)
    } else if summary.input_errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
