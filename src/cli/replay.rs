//! `kibitz replay`: replay and verify game databases; report every rejected
//! game with its location, and the speed.

use std::{
    fs::File,
    io::{self, BufRead, BufWriter, Write},
    path::PathBuf,
    process::ExitCode,
};

use anyhow::{Context, Result};
use clap::Args;
use indicatif::ProgressBar;

use kibitz::{
    DuplicateFinder, Fingerprint, Format, GameAt, KeyCheckSummary, KeyChecker, KeyDiff, Rejected,
    Replay, ReplaySettings, ReplaySink, Summary, SummaryWithRates, Verify, display_name,
    open_key_file,
};

use crate::cli::common::{
    REJECTS_SHOWN, RejectReport, create_output, default_threads, input_bytes, progress_bar,
};

/// Arguments of `kibitz replay`.
#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// Input files: PGN or EPD, plain, zstd or gzip (detected from the
    /// bytes); `-` reads standard input.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "N", short = 'j')]
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
    #[command(flatten)]
    table: super::common::TableArgs,
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
    /// Compare every position's Polyglot key with those in FILE, a key
    /// file in the `--keys` layout (game, ply, key, FEN; plain, zstd or
    /// gzip) written by another tool or an earlier run: each key that
    /// differs, and each game the file lacks or has beyond the database, is
    /// reported (the first ten on standard error, all with `--errors`).
    #[arg(long, value_name = "FILE")]
    check_keys: Option<PathBuf>,
    /// Write to FILE every game whose start position and moves equal an
    /// earlier game's (whatever the tags), with the earlier game: game
    /// numbers (from 1 across all inputs), inputs and byte offsets of both,
    /// tab-separated; as pgn-extract's `-D` finds duplicates.
    #[arg(long, value_name = "FILE")]
    duplicates: Option<PathBuf>,
    /// Exit with code 2 if any game was rejected, or the `--check-keys`
    /// file differs (a key, or games or positions missing or extra).
    #[arg(long)]
    strict: bool,
    /// No progress bar.
    #[arg(long, short = 'q')]
    quiet: bool,
}

/// `--verify`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum VerifyArg {
    /// Replay only.
    None,
    /// After every move, the Polyglot key, the pawn key and the material
    /// key equal their from-scratch values.
    Keys,
    /// After every move, every incremental field of the position's state
    /// (checkers, pins, check squares, scores, keys...) equals its
    /// from-scratch value.
    Full,
    /// Full, and each game unwound to its start must equal the start.
    Undo,
}

impl From<VerifyArg> for Verify {
    fn from(v: VerifyArg) -> Verify {
        match v {
            VerifyArg::None => Verify::None,
            VerifyArg::Keys => Verify::Keys,
            VerifyArg::Full => Verify::Full,
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

/// A sink that writes the `--keys` and `--errors` files, checks the
/// `--check-keys` file and draws the bar.
struct Reports {
    keys: Option<BufWriter<File>>,
    check: Option<KeyCheck>,
    duplicates: Option<Duplicates>,
    rejects: RejectReport,
    bar: ProgressBar,
}

/// `--duplicates`: the games seen, and the list written.
struct Duplicates {
    finder: DuplicateFinder,
    out: BufWriter<File>,
    names: Vec<String>,
}

/// `--check-keys`: the key file streamed beside the replay.
struct KeyCheck {
    name: String,
    checker: KeyChecker<Box<dyn BufRead + Send>>,
    /// Differences (and skipped lines) shown on standard error so far.
    shown: u64,
    reported: u64,
    /// The key file could not be read on (cut short, broken compression):
    /// why. The check stopped there; the replay goes on.
    failed: Option<String>,
}

impl KeyCheck {
    /// Runs `f` on the checker, each difference reported as it is found
    /// (first ten on stderr, all in the `--errors` file): nothing is held.
    /// A read error of the key file stops the check, not the replay; an
    /// error writing the report is returned.
    fn with<T>(
        &mut self,
        rejects: &mut RejectReport,
        bar: &ProgressBar,
        f: impl FnOnce(
            &mut KeyChecker<Box<dyn BufRead + Send>>,
            &mut dyn FnMut(KeyDiff),
        ) -> io::Result<T>,
    ) -> io::Result<Option<T>> {
        if self.failed.is_some() {
            return Ok(None);
        }
        let KeyCheck { name, checker, shown, reported, failed } = self;
        let mut write_error = None;
        let mut report = |diff: KeyDiff| {
            if write_error.is_some() {
                return;
            }
            *reported += 1;
            if *shown < REJECTS_SHOWN {
                *shown += 1;
                bar.suspend(|| eprintln!("kibitz: --check-keys {name}: {}", diff.describe()));
            }
            let mut value = serde_json::to_value(&diff).unwrap_or(serde_json::Value::Null);
            if let serde_json::Value::Object(map) = &mut value {
                map.insert("key_file".into(), name.clone().into());
            }
            if let Err(e) = rejects.add_line(&value) {
                write_error = Some(e);
            }
        };
        let out = f(checker, &mut report);
        if let Some(e) = write_error {
            return Err(e);
        }
        match out {
            Ok(v) => Ok(Some(v)),
            Err(e) => {
                let why = format!("reading stopped: {e}; the keys after this were not checked");
                bar.suspend(|| eprintln!("kibitz: --check-keys {name}: {why}"));
                *failed = Some(why);
                Ok(None)
            }
        }
    }
}

impl ReplaySink for Reports {
    fn progress(&mut self, bytes: u64, summary: &Summary) {
        self.bar.set_position(bytes);
        self.bar.set_message(format!(
            "{} games, {:.2} M plies/s",
            summary.games,
            summary.plies as f64 / summary.seconds.max(1e-9) / 1e6
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
        r: &Rejected,
    ) -> io::Result<()> {
        self.rejects.add(&self.bar, file, game_in_file, game, r)
    }

    fn fingerprint(
        &mut self,
        game: u64,
        file: usize,
        offset: u64,
        fingerprint: Fingerprint,
    ) -> io::Result<()> {
        let Some(d) = self.duplicates.as_mut() else { return Ok(()) };
        let at = GameAt { game, file: file as u32, offset };
        if let Some(first) = d.finder.add(fingerprint, at) {
            let name = |f: u32| d.names.get(f as usize).map_or("?", String::as_str);
            writeln!(
                d.out,
                "{game}\t{}\t{offset}\t{}\t{}\t{}\t{}",
                name(at.file),
                first.game,
                name(first.file),
                first.offset,
                fingerprint.plies
            )?;
        }
        Ok(())
    }

    fn key_line(&mut self, game: u64, offset: u64, line: &[u8]) -> io::Result<()> {
        if let Some(out) = self.keys.as_mut() {
            write!(out, "{game}\t")?;
            out.write_all(line)?;
        }
        if let Some(check) = self.check.as_mut() {
            // Our own line: `ply, key, FEN`.
            let text = std::str::from_utf8(line).map_err(io::Error::other)?;
            let mut fields = text.trim_end().splitn(3, '\t');
            let (Some(ply), Some(key), Some(fen)) = (fields.next(), fields.next(), fields.next())
            else {
                return Err(io::Error::other(format!("malformed key line {text:?}")));
            };
            let ply: u32 = ply.parse().map_err(io::Error::other)?;
            let key = u64::from_str_radix(key, 16).map_err(io::Error::other)?;
            check.with(&mut self.rejects, &self.bar, |checker, report| {
                checker.position(game, offset, ply, key, fen, report)
            })?;
        }
        Ok(())
    }
}

/// Refuses outputs that are inputs or one another, before any is created
/// (an output that is an input would be emptied before it is read).
fn check_outputs(args: &ReplayArgs) -> Result<()> {
    let outputs =
        [("--keys", &args.keys), ("--errors", &args.errors), ("--duplicates", &args.duplicates)];
    for (i, (flag, out)) in outputs.iter().enumerate() {
        let Some(out) = out else { continue };
        super::refuse_output_over_input(out, &args.inputs)
            .with_context(|| format!("{flag} {}", out.display()))?;
        for (other, o) in &outputs[..i] {
            if let Some(o) = o
                && super::same_file(out, o)
            {
                anyhow::bail!("{other} and {flag} name the same file {}", out.display());
            }
        }
    }
    if let Some(check) = &args.check_keys {
        if check.as_os_str() == "-" && args.inputs.iter().any(|i| i.as_os_str() == "-") {
            anyhow::bail!("--check-keys - and an input - cannot both read standard input");
        }
        for (flag, out) in outputs {
            if let Some(out) = out
                && super::same_file(check, out)
            {
                anyhow::bail!("--check-keys and {flag} name the same file {}", check.display());
            }
        }
    }
    Ok(())
}

/// The reports a run writes as it goes, opened (the --errors file first:
/// a path that cannot be written fails before the other outputs are
/// created, and emptied).
fn open_reports(args: &ReplayArgs) -> Result<Reports> {
    let rejects = RejectReport::open(args.errors.as_ref())?;
    let check = args
        .check_keys
        .as_ref()
        .map(|path| -> Result<KeyCheck> {
            let reader = open_key_file(path)
                .with_context(|| format!("--check-keys: cannot read {}", path.display()))?;
            Ok(KeyCheck {
                name: path.display().to_string(),
                checker: KeyChecker::new(reader),
                shown: 0,
                reported: 0,
                failed: None,
            })
        })
        .transpose()?;
    let duplicates = args
        .duplicates
        .as_ref()
        .map(|path| -> Result<Duplicates> {
            let mut out = create_output(path)?;
            writeln!(
                out,
                "# game\tinput\toffset\tduplicate_of\tinput\toffset\tplies (games numbered \
                 from 1 across all inputs; offsets in bytes of each input's text)"
            )
            .with_context(|| format!("writing {}", path.display()))?;
            Ok(Duplicates {
                finder: DuplicateFinder::default(),
                out,
                names: args.inputs.iter().map(|p| display_name(p)).collect(),
            })
        })
        .transpose()?;
    let mut reports = Reports {
        keys: args.keys.as_ref().map(create_output).transpose()?,
        check,
        duplicates,
        rejects,
        bar: progress_bar(input_bytes(&args.inputs), args.quiet),
    };
    reports.rejects.start(0)?;
    Ok(reports)
}

/// What the key file check and the duplicate search found.
struct Extras {
    key_check: Option<(KeyCheckSummary, Option<String>)>,
    duplicates: Option<(u64, u64)>,
}

/// Closes the reports after the run: the key check finished, the files
/// flushed.
fn close_reports(reports: &mut Reports) -> Result<Extras> {
    if let Some(out) = reports.keys.as_mut() {
        out.flush().context("writing the --keys file")?;
    }
    let key_check = match reports.check.take() {
        Some(mut check) => {
            let done = check
                .with(&mut reports.rejects, &reports.bar, |checker, report| checker.finish(report))
                .context("writing the --errors file")?;
            if check.reported > check.shown {
                let hint = if reports.rejects.has_file() {
                    "all are in the --errors file"
                } else {
                    "--errors FILE lists every one"
                };
                eprintln!(
                    "kibitz: --check-keys {}: {} more not shown ({hint})",
                    check.name,
                    check.reported - check.shown
                );
            }
            Some((done.unwrap_or_else(|| check.checker.summary()), check.failed))
        }
        None => None,
    };
    let duplicates = match reports.duplicates.take() {
        Some(mut d) => {
            d.out.flush().context("writing the --duplicates file")?;
            Some((d.finder.duplicates(), d.finder.distinct()))
        }
        None => None,
    };
    Ok(Extras { key_check, duplicates })
}

/// Runs `kibitz replay`.
pub fn run(args: ReplayArgs) -> Result<ExitCode> {
    let args = ReplayArgs { inputs: kibitz::expand_folders(&args.inputs)?, ..args };
    check_outputs(&args)?;
    let settings = ReplaySettings {
        format: args.format.map(Format::from),
        threads: args.threads.unwrap_or_else(default_threads).max(1),
        verify: args.verify.into(),
        keys: args.keys.is_some() || args.check_keys.is_some(),
        fingerprints: args.duplicates.is_some(),
        max_bytes: args.max_bytes,
        table: args.table.options(),
    };
    let mut reports = open_reports(&args)?;
    let summary = Replay::new(args.inputs.clone(), settings).run(&mut reports);
    reports.bar.finish_and_clear();
    let summary = summary.context("writing the --keys, --errors or --duplicates file")?;
    let extras = close_reports(&mut reports)?;
    reports.rejects.finish()?;
    if args.json {
        print_json(&summary, &extras)?;
    } else {
        print_text(&summary, &extras)?;
    }
    let keys_differ = extras.key_check.as_ref().is_some_and(|(k, _)| k.differs());
    let key_file_unreadable =
        extras.key_check.as_ref().is_some_and(|(k, failed)| k.bad_lines > 0 || failed.is_some());
    // 2: --strict and a game was rejected, or the key file differs (a key,
    // a game or positions missing or extra); 1: an input could not be read
    // whole (missing, binary, broken compression, cut short), or the key
    // file could not be read whole or had lines skipped; the summary covers
    // everything that could be read either way.
    // 1 too: no game or position read from any input (each refused or
    // empty), which a run meant to check a database must not pass.
    let nothing_read = summary.games == 0;
    if nothing_read {
        eprintln!("kibitz: no game or position was read from any input");
    }
    Ok(if args.strict && (summary.rejected_games > 0 || keys_differ) {
        ExitCode::from(2)
    } else if summary.input_errors > 0 || key_file_unreadable || nothing_read {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The summary as one JSON object: the run's, then the key check's and the
/// duplicates' when asked for.
fn print_json(summary: &Summary, extras: &Extras) -> Result<()> {
    #[derive(serde::Serialize)]
    struct CheckKeys<'a> {
        #[serde(flatten)]
        summary: &'a KeyCheckSummary,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<&'a str>,
    }
    #[derive(serde::Serialize)]
    struct Json<'a> {
        #[serde(flatten)]
        summary: SummaryWithRates<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        check_keys: Option<CheckKeys<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        duplicate_games: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        distinct_games: Option<u64>,
    }
    let json = Json {
        summary: summary.with_rates(),
        check_keys: extras
            .key_check
            .as_ref()
            .map(|(k, failed)| CheckKeys { summary: k, error: failed.as_deref() }),
        duplicate_games: extras.duplicates.map(|d| d.0),
        distinct_games: extras.duplicates.map(|d| d.1),
    };
    writeln!(super::stdout(), "{}", serde_json::to_string(&json)?)?;
    Ok(())
}

/// The summary for people.
fn print_text(summary: &Summary, extras: &Extras) -> Result<()> {
    let mut stdout = super::stdout();
    writeln!(stdout, "{summary}")?;
    if let Some((dups, distinct)) = extras.duplicates {
        writeln!(
            stdout,
            "duplicates {dups} games equal an earlier game ({distinct} distinct games replayed \
             to their end)"
        )?;
    }
    if let Some((k, failed)) = &extras.key_check {
        if let Some(why) = failed {
            writeln!(stdout, "key file  {why}")?;
        }
        writeln!(
            stdout,
            "key file  {} positions compared, {} equal, {} differ; games missing from it {}, \
             games only in it {}; positions missing {}, extra {}; lines skipped (unreadable or \
             out of order) {}",
            k.compared,
            k.matched,
            k.mismatched,
            k.missing_games,
            k.extra_games,
            k.missing_positions,
            k.extra_positions,
            k.bad_lines
        )?;
    }
    Ok(())
}
