//! Labelling with an external UCI engine: one engine process per worker,
//! spoken to over pipes.
//!
//! Per game: `ucinewgame` (and `UCI_Chess960` when the game needs it); per
//! selected position: `position fen START moves ...` with the game so far,
//! then `go depth N` or `go nodes N`; the score comes from the last `info`
//! line with a score (a bound included, as other UCI clients read it), the
//! move from `bestmove`.
//!
//! Failures are contained: a crash, a timeout or output that makes no sense
//! (no score, a best move that is not legal) kills and restarts that
//! worker's engine and retries the position once; a position that fails
//! twice is reported with its game and ply and skipped, and the run goes on.

use std::{
    io::{BufRead, BufReader, Read, Write},
    os::unix::process::CommandExt,
    path::PathBuf,
    process::{Child, ChildStdin, Command, Stdio},
    time::{Duration, Instant},
};

use crossbeam_channel::{Receiver, RecvTimeoutError};

use crate::{
    chess::{mv::Move, position::Position},
    label::{LabelContext, LabelFailure, Labelled, Labeller, LimitKept},
    record::format::MAX_PV,
    search::{MATE, MATE_BOUND, mate_in, mated_in},
};

/// What went wrong with an engine.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// An option not of the form `Name=Value`.
    #[error("engine option {0:?}: expected Name=Value")]
    BadOption(String),
    /// A timeout that is not a positive number of seconds.
    #[error("the engine timeout must be a positive number of seconds, not {0}")]
    BadTimeout(f64),
    /// The executable could not be started.
    #[error("cannot start {path}: {source}")]
    Start {
        /// The executable.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Options the engine does not declare (it would ignore them).
    #[error("{name} has no option {} (its options: {})", unknown.join(", "),
        if declared.is_empty() { "none".to_string() } else { declared.join(", ") })]
    UnknownOptions {
        /// The engine's `id name`.
        name: String,
        /// The options asked for that it lacks.
        unknown: Vec<String>,
        /// The options it declares.
        declared: Vec<String>,
    },
    /// Writing to the engine failed.
    #[error("the engine exited or stopped reading")]
    Write(#[source] std::io::Error),
    /// A line of output longer than any UCI line.
    #[error("a line of output over {0} bytes")]
    LineTooLong(usize),
    /// No answer in time.
    #[error("no answer within {0:.1} s")]
    Timeout(f64),
    /// The engine's output ended.
    #[error("the engine exited")]
    Exited,
    /// `bestmove` named no legal move.
    #[error("bestmove {0:?} is not a legal move")]
    IllegalBestMove(String),
    /// `bestmove` came before any score.
    #[error("no score before bestmove")]
    NoScore,
    /// A position failed with a fresh engine too.
    #[error("the engine failed twice ({first}; then {second}): position skipped")]
    FailedTwice {
        /// The first failure.
        first: Box<EngineError>,
        /// The failure of the retry.
        second: Box<EngineError>,
    },
    /// Positions failed in a row: the engine is deemed broken.
    #[error("the engine failed {0} positions in a row (twice each): giving up")]
    GaveUp(u32),
    /// A label off its limit, refused (`--strict-limits`).
    #[error(
        "ply {ply}: the engine {} `{go}` (it reported depth {depth}, {nodes} nodes): refused by \
         --strict-limits{}",
        if *kept == LimitKept::Past { "went past twice" } else { "stopped far short of" },
        if go.starts_with("go nodes") { "; an engine that does not honour `go nodes` labels \
         with --depth" } else { "" }
    )]
    OffLimit {
        /// The position's ply.
        ply: usize,
        /// Short or past.
        kept: LimitKept,
        /// The `go` command sent.
        go: String,
        /// The depth it reported.
        depth: u8,
        /// The nodes it reported.
        nodes: u64,
    },
}

type Result<T> = std::result::Result<T, EngineError>;

/// How to run the engine.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// The executable.
    pub path: PathBuf,
    /// `setoption` name/value pairs, in order.
    pub options: Vec<(String, String)>,
    /// `go depth` (when `nodes` is 0).
    pub depth: u32,
    /// `go nodes` (0 for depth).
    pub nodes: u64,
    /// `Hash` in MiB.
    pub hash: u32,
    /// The longest a position may take.
    pub timeout: Duration,
    /// A label off its limit ([`LimitKept::Short`] or
    /// [`LimitKept::Past`]) stops the run instead of being flagged.
    pub strict_limits: bool,
}

impl EngineConfig {
    /// A configuration from `Name=Value` option strings and a timeout in
    /// seconds.
    pub fn new(
        path: PathBuf,
        options: &[String],
        depth: u32,
        nodes: u64,
        hash: u32,
        timeout_s: f64,
    ) -> Result<Self> {
        let options = options
            .iter()
            .map(|o| {
                let (n, v) = o.split_once('=').ok_or_else(|| EngineError::BadOption(o.clone()))?;
                Ok((n.trim().to_string(), v.trim().to_string()))
            })
            .collect::<Result<Vec<_>>>()?;
        if !(timeout_s > 0.0 && timeout_s.is_finite()) {
            return Err(EngineError::BadTimeout(timeout_s));
        }
        Ok(EngineConfig {
            path,
            options,
            depth,
            nodes,
            hash,
            timeout: Duration::from_secs_f64(timeout_s),
            strict_limits: false,
        })
    }

    /// Starts the engine once and describes the setup for the file header:
    /// `id name`, options and limits.
    pub fn describe(&self) -> Result<String> {
        let engine = EngineProcess::start(self, false)?;
        let name = engine.name.clone();
        let declared = engine.declared.clone();
        engine.quit();
        // UCI engines ignore options they do not have (Stockfish says so
        // on stdout, others say nothing): a misspelt option would label a
        // whole database with the wrong settings, so refuse it here.
        let unknown: Vec<String> = self
            .options
            .iter()
            .map(|(n, _)| n.clone())
            .filter(|n| !declared.iter().any(|d| d.eq_ignore_ascii_case(n)))
            .collect();
        if !unknown.is_empty() {
            return Err(EngineError::UnknownOptions { name, unknown, declared });
        }
        let options: Vec<String> = ["Threads=1".to_string(), format!("Hash={}", self.hash)]
            .into_iter()
            .chain(self.options.iter().map(|(n, v)| format!("{n}={v}")))
            .collect();
        Ok(format!("{name}; {}; {}", options.join(" "), self.go_command()))
    }

    /// The `go` command for each position.
    pub fn go_command(&self) -> String {
        if self.nodes > 0 {
            format!("go nodes {}", self.nodes)
        } else {
            format!("go depth {}", self.depth)
        }
    }
}

/// The longest line of engine output accepted (a UCI `info` line with a
/// long principal variation is a few KiB).
const MAX_LINE: usize = 1 << 16;

/// A running engine.
struct EngineProcess {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Result<String>>,
    name: String,
    /// The `go` command for each position.
    go: String,
    /// Its limit: nodes (0 for a depth) and depth.
    nodes: u64,
    depth: u32,
    /// The option names the engine declared (`option name NAME type ...`).
    declared: Vec<String>,
    chess960: bool,
    timeout: Duration,
}

impl EngineProcess {
    fn start(config: &EngineConfig, chess960: bool) -> Result<EngineProcess> {
        // Its own process group: a Ctrl-C in the terminal goes to kibitz,
        // which finishes cleanly and quits its engines, rather than killing
        // the engines under it mid-search (they then exit on `quit` or at
        // the end of their input).
        let mut child = Command::new(&config.path)
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|source| EngineError::Start { path: config.path.clone(), source })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            unreachable!("both pipes were asked for");
        };
        // Lines are read on a thread (so a silent engine can be timed out)
        // and capped in length (so a babbling one cannot fill memory); the
        // channel is bounded too.
        let (tx, rx) = crossbeam_channel::bounded::<Result<String>>(1024);
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = Vec::new();
            loop {
                line.clear();
                match (&mut reader).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) if line.len() > MAX_LINE => {
                        let _ = tx.send(Err(EngineError::LineTooLong(MAX_LINE)));
                        break;
                    }
                    Ok(_) => {
                        let text = String::from_utf8_lossy(&line);
                        if tx.send(Ok(text.trim_end_matches(['\r', '\n']).to_string())).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        let mut engine = EngineProcess {
            child,
            stdin,
            lines: rx,
            name: String::new(),
            go: config.go_command(),
            nodes: config.nodes,
            depth: config.depth,
            declared: Vec::new(),
            chess960,
            timeout: config.timeout,
        };
        engine.send("uci")?;
        let deadline = Instant::now() + config.timeout.min(Duration::from_secs(30));
        loop {
            let line = engine.line(deadline)?;
            if let Some(name) = line.strip_prefix("id name ") {
                engine.name = name.trim().to_string();
            }
            // The name runs from `name` to ` type` and may hold spaces.
            if let Some(rest) = line.strip_prefix("option name ") {
                let name = rest.split_once(" type ").map_or(rest, |(n, _)| n);
                engine.declared.push(name.trim().to_string());
            }
            if line.trim() == "uciok" {
                break;
            }
        }
        engine.send("setoption name Threads value 1")?;
        engine.send(&format!("setoption name Hash value {}", config.hash))?;
        for (n, v) in &config.options {
            engine.send(&format!("setoption name {n} value {v}"))?;
        }
        if chess960 {
            engine.send("setoption name UCI_Chess960 value true")?;
        }
        engine.ready()?;
        Ok(engine)
    }

    fn send(&mut self, line: &str) -> Result<()> {
        writeln!(self.stdin, "{line}").and_then(|()| self.stdin.flush()).map_err(EngineError::Write)
    }

    fn line(&self, deadline: Instant) -> Result<String> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(left) {
            Ok(Ok(line)) => Ok(line),
            Ok(Err(e)) => Err(e),
            Err(RecvTimeoutError::Timeout) => Err(EngineError::Timeout(self.timeout.as_secs_f64())),
            Err(RecvTimeoutError::Disconnected) => Err(EngineError::Exited),
        }
    }

    fn ready(&mut self) -> Result<()> {
        self.send("isready")?;
        let deadline = Instant::now() + self.timeout;
        while self.line(deadline)?.trim() != "readyok" {}
        Ok(())
    }

    fn quit(mut self) {
        let _ = self.send("quit");
        let deadline = Instant::now() + Duration::from_millis(500);
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Searches one position; returns (score, best move, depth, nodes).
    fn search(&mut self, pos: &Position, ctx: &LabelContext<'_>) -> Result<Labelled> {
        let moves: Vec<String> =
            ctx.moves.iter().map(|&m| crate::chess::uci::move_to_uci(m, self.chess960)).collect();
        let commands = if moves.is_empty() {
            format!("position fen {}\n{}", ctx.start_fen, self.go)
        } else {
            format!("position fen {} moves {}\n{}", ctx.start_fen, moves.join(" "), self.go)
        };
        self.send(&commands)?;
        let deadline = Instant::now() + self.timeout;
        let (mut score, mut depth, mut nodes) = (None, 0u8, 0u64);
        // The most nodes any `info` line reported, and whether kibitz had
        // to stop the search (past twice its limit).
        let (mut most_nodes, mut reported_nodes, mut stopped) = (0u64, false, false);
        let mut pv: Vec<&str> = Vec::new();
        let mut pv_line = String::new();
        let mut alternatives: std::collections::BTreeMap<u32, (i32, String)> =
            std::collections::BTreeMap::new();
        loop {
            let line = self.line(deadline)?;
            let mut words = line.split_whitespace();
            match words.next() {
                Some("info") => {
                    let words: Vec<&str> = line.split_whitespace().collect();
                    let get = |k: &str| {
                        words.iter().position(|&w| w == k).and_then(|i| words.get(i + 1)).copied()
                    };
                    // Only the first line of a multi-PV search. A score that
                    // is a bound (`lowerbound`/`upperbound`, sent when a node
                    // limit stops an aspiration search that failed high or
                    // low) is kept: it is the engine's last word, and it is
                    // what python-chess, cutechess and the Lichess tools
                    // report for the same search.
                    // The other lines of a multi-PV search: each one's last
                    // score and first move, as python-chess keeps them.
                    if let Some(k) = get("multipv").and_then(|m| m.parse::<u32>().ok())
                        && k > 1
                    {
                        let first = words
                            .iter()
                            .position(|&w| w == "pv")
                            .and_then(|i| words.get(i + 1))
                            .copied();
                        if let (Some(score), Some(first)) = (info_score(&words), first) {
                            alternatives.insert(k, (score, first.to_string()));
                        }
                        continue;
                    }
                    if let Some(d) = get("depth").and_then(|d| d.parse::<u32>().ok()) {
                        depth = d.min(255) as u8;
                    }
                    if let Some(n) = get("nodes").and_then(|n| n.parse().ok()) {
                        nodes = n;
                        most_nodes = most_nodes.max(n);
                        reported_nodes = true;
                    }
                    // An engine that does not honour the limit (`go nodes`
                    // taken as an infinite search) is stopped once it is
                    // past twice its budget, not left to the timeout.
                    let past = if self.nodes > 0 {
                        most_nodes > past_nodes(self.nodes)
                    } else {
                        u32::from(depth) > self.depth.saturating_mul(2).max(self.depth + 2)
                    };
                    if past && !stopped {
                        self.send("stop")?;
                        stopped = true;
                    }
                    if let Some(i) = words.iter().position(|&w| w == "pv") {
                        // `pv` runs to the end of the line (UCI).
                        pv_line = words[i + 1..].join(" ");
                    }
                    if let Some(s) = info_score(&words) {
                        score = Some(s);
                    }
                }
                Some("bestmove") => {
                    let text = words.next().unwrap_or("");
                    let best = pos.parse_uci(text).ok().filter(|m| !m.is_null());
                    let Some(best) = best else {
                        return Err(EngineError::IllegalBestMove(text.to_string()));
                    };
                    let Some(score) = score else { return Err(EngineError::NoScore) };
                    pv.extend(pv_line.split_whitespace());
                    let limit = if stopped {
                        LimitKept::Past
                    } else if score.abs() >= MATE_BOUND || pos.legal_moves().len() == 1 {
                        // A mate found or a forced move: stopping early is
                        // right.
                        LimitKept::Kept
                    } else if self.nodes > 0 {
                        // Under a quarter of the budget: an engine that
                        // reports only its completed iterations may show
                        // under half of a search that kept to it (the last
                        // iteration, cut by the limit, unreported).
                        let short = reported_nodes && most_nodes.saturating_mul(4) < self.nodes;
                        if short { LimitKept::Short } else { LimitKept::Kept }
                    } else if u32::from(depth) * 2 < self.depth {
                        LimitKept::Short
                    } else {
                        LimitKept::Kept
                    };
                    let alternatives = alternatives
                        .values()
                        .filter_map(|(score, text)| {
                            let m = pos.parse_uci(text).ok()?;
                            (!m.is_null() && pos.is_legal(m) && m != best).then_some((m, *score))
                        })
                        .collect();
                    return Ok(Labelled {
                        score,
                        best: Some(best),
                        depth,
                        nodes,
                        pv: uci_line(pos, &pv),
                        alternatives,
                        limit,
                        tablebase: None,
                    });
                }
                _ => {}
            }
        }
    }
}

/// Labels with an external engine; one per worker thread.
pub struct EngineLabeller {
    config: EngineConfig,
    engine: Option<EngineProcess>,
    chess960: bool,
    failures: Vec<LabelFailure>,
    needs_new_game: bool,
    /// Positions failed in a row (reset by a success).
    failed_in_a_row: u32,
    /// A label off its limit refused by [`EngineConfig::strict_limits`].
    refused: Option<std::sync::Arc<EngineError>>,
}

/// After this many positions in a row fail twice each, the engine is
/// deemed broken and the run stops (resumable), rather than spend two
/// timeouts on every position left.
pub const GIVE_UP_AFTER: u32 = 3;

impl EngineLabeller {
    /// A labeller that starts its engine on first use.
    pub fn new(config: EngineConfig) -> EngineLabeller {
        EngineLabeller {
            config,
            engine: None,
            chess960: false,
            failures: Vec::new(),
            needs_new_game: true,
            failed_in_a_row: 0,
            refused: None,
        }
    }

    fn engine(&mut self) -> Result<&mut EngineProcess> {
        if self.engine.as_ref().is_some_and(|e| e.chess960 != self.chess960)
            && let Some(e) = self.engine.take()
        {
            e.quit();
        }
        if self.engine.is_none() {
            self.engine = Some(EngineProcess::start(&self.config, self.chess960)?);
            self.needs_new_game = true;
        }
        let engine = self.engine.as_mut().expect("started above");
        if self.needs_new_game {
            engine.send("ucinewgame")?;
            engine.ready()?;
            self.needs_new_game = false;
        }
        Ok(engine)
    }

    fn attempt(&mut self, pos: &Position, ctx: &LabelContext<'_>) -> Result<Labelled> {
        let result = self.engine()?.search(pos, ctx);
        if result.is_err()
            && let Some(e) = self.engine.take()
        {
            e.kill();
        }
        result
    }
}

impl Drop for EngineLabeller {
    fn drop(&mut self) {
        if let Some(e) = self.engine.take() {
            e.quit();
        }
    }
}

impl Labeller for EngineLabeller {
    fn new_game(&mut self, chess960: bool) {
        self.chess960 = chess960;
        self.needs_new_game = true;
    }

    fn label(&mut self, pos: &mut Position, ctx: &LabelContext<'_>) -> Option<Labelled> {
        if self.failed_in_a_row >= GIVE_UP_AFTER || self.refused.is_some() {
            return None;
        }
        let result = self.attempt(pos, ctx).or_else(|first| {
            // The engine was killed; a fresh one gets one more try (it
            // starts a new game: for a fixed-depth or fixed-node search
            // that gives the same answer, see docs/ENGINES.md).
            self.needs_new_game = true;
            self.attempt(pos, ctx).map_err(|second| EngineError::FailedTwice {
                first: first.into(),
                second: second.into(),
            })
        });
        match result {
            Ok(labelled) if self.config.strict_limits && labelled.limit != LimitKept::Kept => {
                self.refused = Some(std::sync::Arc::new(EngineError::OffLimit {
                    ply: ctx.ply,
                    kept: labelled.limit,
                    go: self.config.go_command(),
                    depth: labelled.depth,
                    nodes: labelled.nodes,
                }));
                None
            }
            Ok(labelled) => {
                self.failed_in_a_row = 0;
                Some(labelled)
            }
            Err(cause) => {
                self.failures
                    .push(LabelFailure { ply: ctx.ply, cause: std::sync::Arc::new(cause) });
                self.needs_new_game = true;
                self.failed_in_a_row += 1;
                None
            }
        }
    }

    fn take_failures(&mut self) -> Vec<LabelFailure> {
        std::mem::take(&mut self.failures)
    }

    fn gave_up(&self) -> Option<crate::label::Cause> {
        if let Some(refused) = &self.refused {
            return Some(refused.clone() as _);
        }
        (self.failed_in_a_row >= GIVE_UP_AFTER)
            .then(|| std::sync::Arc::new(EngineError::GaveUp(GIVE_UP_AFTER)) as _)
    }
}

/// The nodes past which a search asked for `budget` nodes is stopped:
/// twice the budget, and at least 4,096 (an engine completes its first
/// iterations whatever the budget: Stockfish 15.1 takes 450 nodes to finish
/// depth 2 when asked for 200).
pub fn past_nodes(budget: u64) -> u64 {
    budget.saturating_mul(2).max(4096)
}

/// The score of a UCI `info` line, side to move's view, a mate as a mate
/// score.
fn info_score(words: &[&str]) -> Option<i32> {
    let i = words.iter().position(|&w| w == "score")?;
    match (words.get(i + 1), words.get(i + 2).and_then(|v| v.parse::<i32>().ok())) {
        (Some(&"cp"), Some(cp)) => Some(cp.clamp(-30_000, 30_000)),
        (Some(&"mate"), Some(n)) if n > 0 => Some(mate_in(n)),
        (Some(&"mate"), Some(n)) if n < 0 => Some(mated_in(-n)),
        (Some(&"mate"), Some(_)) => Some(-MATE),
        _ => None,
    }
}

/// The moves of a UCI `pv` from `pos`, up to the first that is not legal
/// there (an engine's variation past a draw by repetition, or garbage).
fn uci_line(pos: &Position, moves: &[&str]) -> Vec<Move> {
    let mut pos = pos.clone();
    let mut line = Vec::with_capacity(moves.len().min(MAX_PV));
    for text in moves.iter().take(MAX_PV) {
        let Ok(m) = pos.parse_uci(text) else { break };
        if m.is_null() || !pos.is_legal(m) {
            break;
        }
        line.push(m);
        pos.do_move(m);
    }
    line
}
