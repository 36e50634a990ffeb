//! `kibitz uci`: the UCI protocol on stdin and stdout, enough for match
//! tools (cutechess, fastchess) and python-chess's engine module: `uci`,
//! `isready`, `ucinewgame`, `position`, `go` (depth, nodes, movetime,
//! wtime/btime/winc/binc/movestogo, infinite), `stop`, `quit`, and the
//! options `Hash`, `UCI_Chess960`, `EvalFile` (a net to evaluate with:
//! a Stockfish 15.1 or 19 net or one `kibitz train` made; KIBITZ_NET by
//! default, else `<built-in>`, the net built into the binary (Stockfish.js
//! 19's lite net); `hand-written` or empty for the
//! hand-written evaluation) and `SyzygyPath` (endgame tables, folders
//! separated by `:`; KIBITZ_SYZYGY by default).
//!
//! The search runs on its own thread so `stop` and `isready` are answered
//! while it thinks.

use std::{
    io::{self, BufRead, Write},
    process::ExitCode,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    thread::JoinHandle,
    time::{Duration, Instant},
};

use anyhow::Result;

use crate::cli::search::info_line;
use kibitz::{CastlingMode, FenOptions, Limits, Position, Searcher, Tablebases, nnue::Net};

const NAME: &str = concat!("kibitz ", env!("CARGO_PKG_VERSION"));

fn say(line: &str) {
    let mut out = io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// `EvalFile`'s value for the built-in net.
const BUILTIN: &str = "<built-in>";

struct Engine {
    position: Position,
    chess960: bool,
    hash: usize,
    /// The `EvalFile` value and the net read from it.
    eval_file: String,
    net: Option<Net>,
    /// The `SyzygyPath` value and the tables found there.
    syzygy_path: String,
    tablebases: Option<Arc<Tablebases>>,
    searcher: Option<Searcher>,
    running: Option<(JoinHandle<Searcher>, Arc<AtomicBool>)>,
}

impl Engine {
    /// `setoption name NAME value VALUE`.
    fn set_option(&mut self, name: &str, value: &str) {
        match name.to_ascii_lowercase().as_str() {
            "hash" => {
                if let Ok(mib) = value.parse::<usize>() {
                    let mib = mib.clamp(1, 65536);
                    // A size the machine cannot give leaves the
                    // table as it was (a GUI may offer any value up
                    // to the declared maximum).
                    match self.searcher().set_hash(mib) {
                        Ok(()) => self.hash = mib,
                        Err(e) => say(&format!("info string {e}; Hash stays {}", self.hash)),
                    }
                } else {
                    say(&format!(
                        "info string Hash {value:?} is not a size in MiB; Hash stays {}",
                        self.hash
                    ));
                }
            }
            "uci_chess960" => {
                self.chess960 = value.eq_ignore_ascii_case("true");
                self.position.set_chess960(self.chess960);
            }
            "evalfile" => self.set_eval_file(value),
            "syzygypath" => self.set_syzygy_path(value),
            "threads" => {}
            _ => say(&format!("info string unknown option {name}")),
        }
    }

    fn finish_search(&mut self) {
        if let Some((handle, _)) = self.running.take()
            && let Ok(searcher) = handle.join()
        {
            self.searcher = Some(searcher);
        }
    }

    fn stop(&mut self) {
        if let Some((_, flag)) = &self.running {
            flag.store(true, Ordering::Relaxed);
        }
        self.finish_search();
    }

    fn new_searcher(&self) -> Searcher {
        let mut searcher = Searcher::try_with_net(self.hash, self.net.clone())
            .or_else(|e| {
                say(&format!("info string {e}; using a 1 MiB table"));
                Searcher::try_with_net(1, self.net.clone())
            })
            .expect("a 1 MiB table");
        searcher.set_tablebases(self.tablebases.clone());
        searcher
    }

    /// Opens the tables `SyzygyPath` names (none when empty or
    /// `<empty>`) and says what was found; folders that cannot be read
    /// are reported and the previous tables stay.
    fn set_syzygy_path(&mut self, value: &str) {
        let value = value.trim();
        if value.is_empty() || value == "<empty>" {
            self.syzygy_path.clear();
            self.tablebases = None;
        } else {
            match Tablebases::open(value) {
                Ok(tb) => {
                    say(&format!("info string Syzygy: {}", tb.describe()));
                    self.syzygy_path = value.to_string();
                    self.tablebases = Some(Arc::new(tb));
                }
                Err(e) => {
                    say(&format!("info string {e}; SyzygyPath stays {:?}", self.syzygy_path));
                    return;
                }
            }
        }
        let tables = self.tablebases.clone();
        self.searcher().set_tablebases(tables);
    }

    fn searcher(&mut self) -> &mut Searcher {
        self.finish_search();
        if self.searcher.is_none() {
            self.searcher = Some(self.new_searcher());
        }
        self.searcher.as_mut().expect("just made")
    }

    /// Reads the net `EvalFile` names (none when empty or `hand-written`,
    /// the built-in net for `<built-in>`): the searcher evaluates with it
    /// from the next search on. A net that cannot be read is reported and
    /// the previous evaluation stays.
    fn set_eval_file(&mut self, value: &str) {
        let value = value.trim();
        let net = if value.is_empty() || value == "<empty>" || value == "hand-written" {
            None
        } else if value == BUILTIN {
            Some(Net::builtin())
        } else {
            match Net::load(std::path::Path::new(value)) {
                Ok(net) => Some(net),
                Err(e) => {
                    say(&format!("info string {e}; EvalFile stays {:?}", self.eval_file));
                    return;
                }
            }
        };
        match &net {
            Some(n) => say(&format!(
                "info string NNUE evaluation using {} (sha256 {})",
                value,
                n.info().sha256
            )),
            None => say("info string hand-written evaluation"),
        }
        self.eval_file = value.to_string();
        self.net = net;
        self.searcher = None;
    }

    fn set_position(&mut self, words: &[&str]) {
        let moves_at = words.iter().position(|&w| w == "moves");
        let (setup, moves) = match moves_at {
            Some(i) => (&words[..i], &words[i + 1..]),
            None => (words, &[][..]),
        };
        let options = FenOptions {
            castling_mode: self.chess960.then_some(CastlingMode::Chess960),
            drop_invalid_castling: true,
        };
        let mut pos = match setup {
            ["startpos", ..] => {
                let mut p = Position::startpos();
                p.set_chess960(self.chess960);
                p
            }
            ["fen", fen @ ..] => match Position::from_fen_with(fen.join(" ").as_bytes(), options) {
                Ok(p) => p,
                Err(e) => {
                    say(&format!("info string {e}"));
                    return;
                }
            },
            _ => {
                say("info string position: expected startpos or fen");
                return;
            }
        };
        for m in moves {
            match pos.parse_uci(m) {
                Ok(mv) if mv.is_null() => pos.do_null_move(),
                Ok(mv) => pos.do_move(mv),
                Err(e) => {
                    say(&format!("info string {e}"));
                    break;
                }
            }
        }
        self.position = pos;
    }

    fn go(&mut self, words: &[&str]) {
        let mut limits = Limits::default();
        let value = |name: &str| -> Option<u64> {
            words
                .iter()
                .position(|&w| w == name)
                .and_then(|i| words.get(i + 1))
                .and_then(|v| v.parse().ok())
        };
        if let Some(d) = value("depth") {
            limits.depth = Some(d.min(100) as i32);
        }
        if let Some(n) = value("nodes") {
            limits.nodes = Some(n);
        }
        let now = Instant::now();
        if let Some(ms) = value("movetime") {
            limits.deadline = Some(now + Duration::from_millis(ms));
            limits.soft_deadline = limits.deadline;
        }
        let us_white = self.position.side_to_move() == kibitz::Color::White;
        let (time, inc) = if us_white {
            (value("wtime"), value("winc"))
        } else {
            (value("btime"), value("binc"))
        };
        if let Some(time) = time {
            let moves_to_go = value("movestogo").unwrap_or(30).clamp(1, 60);
            let inc = inc.unwrap_or(0);
            let overhead = 30;
            let budget = time / moves_to_go + inc * 3 / 4;
            let hard = (budget * 3).min(time.saturating_sub(overhead) / 2).max(1);
            let soft = budget.min(hard).max(1);
            limits.soft_deadline = Some(now + Duration::from_millis(soft / 2));
            limits.deadline = Some(now + Duration::from_millis(hard));
        }
        let mut searcher = match self.searcher.take() {
            Some(s) => s,
            None => self.new_searcher(),
        };
        let flag = searcher.stop_flag();
        // Cleared here, before the thread starts: a `stop` read right after
        // this `go` sets it again and the search sees it.
        flag.store(false, Ordering::Relaxed);
        let mut pos = self.position.clone();
        let handle = std::thread::spawn(move || {
            let chess960 = pos.is_chess960();
            let started = std::time::Instant::now();
            let mut last: Option<kibitz::Info> = None;
            let result = searcher.search(&mut pos, &limits, |info| {
                say(&info_line(chess960, info));
                last = Some(info.clone());
            });
            // A search stopped inside an iteration (a node limit, `stop`)
            // ends with the whole count, as Stockfish's does: a client
            // checks the nodes searched against the limit it sent.
            if let Some(last) = last.filter(|l| l.nodes < result.nodes && result.best.is_some()) {
                let end = kibitz::Info {
                    depth: result.depth,
                    seldepth: result.seldepth.max(last.seldepth),
                    score: result.score,
                    nodes: result.nodes,
                    elapsed: started.elapsed(),
                    pv: result.pv.clone(),
                    hashfull: last.hashfull,
                    tb_hits: result.tb_hits,
                };
                say(&info_line(chess960, &end));
            }
            match result.best {
                Some(m) => {
                    let ponder = result.pv.get(1).map(|&p| {
                        let mut after = pos.clone();
                        after.do_move(m);
                        format!(" ponder {}", after.uci(p))
                    });
                    say(&format!("bestmove {}{}", pos.uci(m), ponder.unwrap_or_default()));
                }
                // No legal move: mated (score mate 0) or stalemated.
                None => {
                    let score = if pos.in_check() { "mate 0" } else { "cp 0" };
                    say(&format!("info depth 0 score {score}"));
                    say("bestmove 0000");
                }
            }
            searcher
        });
        self.running = Some((handle, flag));
    }
}

/// Runs the UCI loop until `quit` or the end of input.
pub fn run() -> Result<ExitCode> {
    let mut engine = Engine {
        position: Position::startpos(),
        chess960: false,
        hash: 16,
        eval_file: BUILTIN.to_string(),
        net: Some(Net::builtin()),
        syzygy_path: String::new(),
        tablebases: None,
        searcher: None,
        running: None,
    };
    if let Some(path) = std::env::var_os("KIBITZ_NET").filter(|p| !p.is_empty()) {
        engine.set_eval_file(&path.to_string_lossy());
    }
    if let Some(path) = std::env::var_os("KIBITZ_SYZYGY").filter(|p| !p.is_empty()) {
        engine.set_syzygy_path(&path.to_string_lossy());
    }
    let stdin = io::stdin();
    for line in stdin.lock().lines() {
        let line = line?;
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["uci"] => {
                say(&format!("id name {NAME}"));
                say("id author the kibitz developers");
                say("option name Hash type spin default 16 min 1 max 65536");
                say("option name Threads type spin default 1 min 1 max 1");
                say("option name UCI_Chess960 type check default false");
                let default =
                    if engine.eval_file.is_empty() { "hand-written" } else { &engine.eval_file };
                say(&format!("option name EvalFile type string default {default}"));
                let path =
                    if engine.syzygy_path.is_empty() { "<empty>" } else { &engine.syzygy_path };
                say(&format!("option name SyzygyPath type string default {path}"));
                say("uciok");
            }
            ["isready"] => say("readyok"),
            ["ucinewgame"] => {
                engine.searcher().new_game();
            }
            ["setoption", "name", rest @ ..] => {
                let value_at = rest.iter().position(|&w| w == "value");
                let name = rest[..value_at.unwrap_or(rest.len())].join(" ");
                let value = value_at.map(|i| rest[i + 1..].join(" ")).unwrap_or_default();
                engine.stop();
                engine.set_option(&name, &value);
            }
            ["position", rest @ ..] => {
                engine.stop();
                engine.set_position(rest);
            }
            ["go", rest @ ..] => {
                engine.stop();
                engine.go(rest);
            }
            ["stop"] => engine.stop(),
            ["quit"] => {
                engine.stop();
                return Ok(ExitCode::SUCCESS);
            }
            ["d"] => say(&format!("{}", engine.position)),
            [] => {}
            _ => say(&format!("info string unknown command: {line}")),
        }
    }
    engine.stop();
    Ok(ExitCode::SUCCESS)
}
