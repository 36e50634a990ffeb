//! What the commands share: worker threads, output files, the progress
//! bar and the report of rejected games.

use std::{
    fs::File,
    io::{self, BufWriter, IsTerminal, Write},
    path::{Path, PathBuf},
};

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use kibitz::Rejected;

/// `n` and a noun, plural unless `n` is 1 (`1 game`, `2 games`): a
/// summary reads right for every count.
pub fn count(n: u64, noun: &str) -> String {
    match noun.strip_suffix('y') {
        _ if n == 1 => format!("{n} {noun}"),
        // `ply`, `entry`: a consonant and y take -ies.
        Some(stem) if !stem.ends_with(['a', 'e', 'o', 'u']) => format!("{n} {stem}ies"),
        _ => format!("{n} {noun}s"),
    }
}

/// The default number of worker threads: the cores available.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Creates an output file, refusing to write into something that is not a
/// regular file path (a directory) or into a folder that does not exist
/// (named in the error; no folder is made).
pub fn create_output(path: &PathBuf) -> Result<BufWriter<File>> {
    let cannot = || format!("cannot create {}", path.display());
    kibitz::check_output_folder(path).with_context(cannot)?;
    let file = File::create(path).with_context(cannot)?;
    Ok(BufWriter::with_capacity(1 << 20, file))
}

/// An output written aside, as `NAME.partial` beside its name, and given
/// its name by [`Aside::keep`] once the run has succeeded. Dropped
/// without it (an error, or a run that ends with a non-zero exit code),
/// the partial file is removed: a failed run leaves no new file, and an
/// older file of that name as it was. A name that is not a regular file
/// (`/dev/stdout`, a FIFO, a symbolic link) is written directly: there is
/// nothing to put aside, and renaming over it would replace it.
pub struct Aside {
    path: PathBuf,
    /// The partial file, when the output is written aside.
    partial: Option<PathBuf>,
    kept: bool,
}

impl Aside {
    /// Creates `path`'s partial file (or opens `path` itself when it is
    /// not a regular file); returns it with a writer to it.
    pub fn create(path: &Path) -> Result<(Aside, BufWriter<File>)> {
        let meta = std::fs::symlink_metadata(path).ok();
        if meta.as_ref().is_some_and(|m| m.is_dir()) {
            bail!("cannot create {}: it is a directory", path.display());
        }
        if meta.is_some_and(|m| !m.is_file()) {
            let out = create_output(&path.to_path_buf())?;
            return Ok((Aside { path: path.to_path_buf(), partial: None, kept: false }, out));
        }
        let partial = kibitz::partial_path(path);
        kibitz::check_output_folder(path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        let out = create_output(&partial)?;
        Ok((Aside { path: path.to_path_buf(), partial: Some(partial), kept: false }, out))
    }

    /// Gives the written file its name (its writer flushed and dropped
    /// first).
    pub fn keep(mut self) -> Result<()> {
        if let Some(partial) = &self.partial {
            std::fs::rename(partial, &self.path).with_context(|| {
                format!("cannot rename {} to {}", partial.display(), self.path.display())
            })?;
        }
        self.kept = true;
        Ok(())
    }
}

impl Drop for Aside {
    fn drop(&mut self) {
        if let (false, Some(partial)) = (self.kept, &self.partial) {
            let _ = std::fs::remove_file(partial);
        }
    }
}

/// Files drawn aside (`score.partial.png`: the extension kept, which the
/// drawing backend reads) and given their names together by
/// [`Drawn::keep`] once every one is drawn; dropped without it, the
/// partial files are removed.
#[derive(Default)]
pub struct Drawn {
    /// (partial file, name) of each file drawn.
    files: Vec<(PathBuf, PathBuf)>,
    kept: bool,
}

impl Drawn {
    /// Draws `path` aside with `draw`, which is given the file to draw.
    pub fn draw<E: std::fmt::Display>(
        &mut self,
        path: &Path,
        draw: impl FnOnce(&Path) -> std::result::Result<(), E>,
    ) -> Result<()> {
        let mut name = path.file_stem().unwrap_or_default().to_os_string();
        name.push(".partial");
        if let Some(ext) = path.extension() {
            name.push(".");
            name.push(ext);
        }
        let partial = path.with_file_name(name);
        self.files.push((partial.clone(), path.to_path_buf()));
        draw(&partial).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }

    /// Gives every file drawn its name.
    pub fn keep(mut self) -> Result<()> {
        for (partial, path) in &self.files {
            std::fs::rename(partial, path).with_context(|| {
                format!("cannot rename {} to {}", partial.display(), path.display())
            })?;
        }
        self.kept = true;
        Ok(())
    }
}

impl Drop for Drawn {
    fn drop(&mut self) {
        if !self.kept {
            for (partial, _) in &self.files {
                let _ = std::fs::remove_file(partial);
            }
        }
    }
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
                kibitz::check_output_folder(p)
                    .with_context(|| format!("cannot create {}", p.display()))?;
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
                    "kibitz: {file}: game {game} at {}, ply {}{san}: {}: {}",
                    kibitz::describe_place(file, r.offset),
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

    /// Writes one more JSON line to the `--errors` file, if there is one
    /// (what is shown on standard error is the caller's).
    pub fn add_line(&mut self, value: &serde_json::Value) -> io::Result<()> {
        if let Some(out) = self.out.as_mut() {
            writeln!(out, "{value}")?;
        }
        Ok(())
    }

    /// Whether an `--errors` file is written.
    pub fn has_file(&self) -> bool {
        self.out.is_some() || self.file.is_some()
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

/// `--rows`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RowsArg {
    /// A game a row (the table needs a column of moves).
    Games,
    /// A position a row (the table needs a column of positions).
    Positions,
}

/// `--table-eval-side`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum EvalSideArg {
    /// Positive when White is better (Lichess's convention).
    #[default]
    White,
    /// Positive when the side to move is better (EPD's `ce`).
    Mover,
}

/// How tables of games or positions (Parquet, CSV, TSV) are read: their
/// columns are found by name (docs/PARQUET.md lists the names); these
/// flags settle what the names do not.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct TableArgs {
    /// The column that holds each game's moves (else the first of
    /// movetext, pgn, moves, san, game, uci).
    #[arg(long, value_name = "NAME", help_heading = "Tables")]
    pub moves_column: Option<String>,
    /// The column that holds each position's FEN or EPD (else the first of
    /// fen, epd, position).
    #[arg(long, value_name = "NAME", help_heading = "Tables")]
    pub fen_column: Option<String>,
    /// What a row is, for a table with columns of both (else games when it
    /// has a column of moves).
    #[arg(long, value_enum, help_heading = "Tables")]
    pub rows: Option<RowsArg>,
    /// Whose side a table's evaluation column speaks for.
    #[arg(long, value_enum, default_value_t = EvalSideArg::White, help_heading = "Tables")]
    pub table_eval_side: EvalSideArg,
}

impl TableArgs {
    /// The library's table options.
    pub fn options(&self) -> kibitz::TableOptions {
        use kibitz::{EvalSide, Rows, TableOptions};
        TableOptions {
            moves_column: self.moves_column.clone(),
            fen_column: self.fen_column.clone(),
            rows: match self.rows {
                None => Rows::Auto,
                Some(RowsArg::Games) => Rows::Games,
                Some(RowsArg::Positions) => Rows::Positions,
            },
            eval_side: match self.table_eval_side {
                EvalSideArg::White => EvalSide::White,
                EvalSideArg::Mover => EvalSide::Mover,
            },
        }
    }
}
