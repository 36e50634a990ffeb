//! `kibitz search` (one position) and `kibitz bench` (the signature).

use std::{io::Write, process::ExitCode};

use anyhow::Result;
use clap::Args;

use super::eval::NetArgs;
use kibitz::{FenOptions, Info, Limits, Position, ScoreKind, Searcher, bench};

/// Arguments of `kibitz search`.
#[derive(Args, Debug)]
pub struct SearchArgs {
    /// A FEN (quoted) or `startpos`.
    position: String,
    /// Moves to play first, in UCI (`e2e4 e7e5`).
    #[arg(long, num_args = 1.., value_name = "UCI")]
    moves: Vec<String>,
    /// Depth to search.
    #[arg(long, short = 'd', default_value_t = 10)]
    depth: i32,
    /// Stop after this many nodes instead.
    #[arg(long)]
    nodes: Option<u64>,
    /// Transposition table size in MiB.
    #[arg(long, default_value_t = 16)]
    hash: usize,
    #[command(flatten)]
    net: NetArgs,
    #[command(flatten)]
    syzygy: SyzygyArgs,
}

/// Endgame tables, for every command that judges positions.
#[derive(Args, Debug, Clone, Default)]
pub struct SyzygyArgs {
    /// Syzygy endgame tables (.rtbw, .rtbz): folders separated by `:`, as
    /// UCI's SyzygyPath takes them. Positions within them are judged by
    /// them exactly. Default: KIBITZ_SYZYGY when set.
    #[arg(long, value_name = "FOLDERS")]
    pub syzygy: Option<String>,
}

impl SyzygyArgs {
    /// The tables named, or `None`; what was left out of them is said on
    /// standard error.
    pub fn open(&self) -> Result<Option<std::sync::Arc<kibitz::Tablebases>>> {
        let tables = kibitz::Tablebases::from_option(self.syzygy.as_deref())?;
        for w in tables.iter().flat_map(|t| t.warnings()) {
            eprintln!("kibitz: warning: {w}");
        }
        Ok(tables)
    }

    /// Says on standard error how many probes failed on a table that could
    /// not be read (the positions were taken as outside the tables).
    pub fn report_probe_errors() {
        if let (n @ 1.., Some(first)) = kibitz::syzygy_probe_errors() {
            eprintln!(
                "kibitz: warning: {n} probes failed on an unreadable table (the first: {first}); \
                 those positions were taken as outside the tables"
            );
        }
    }

    /// The tables named, for a summary (`38 WDL and 38 DTZ tables, up to
    /// 5 pieces, in /tb`), or `None`.
    pub fn describe(&self) -> Option<String> {
        self.open().ok().flatten().map(|t| t.describe())
    }
}

/// An `info` line as UCI writes it.
pub fn info_line(chess960: bool, info: &Info) -> String {
    let secs = info.elapsed.as_secs_f64().max(1e-9);
    let pv: Vec<String> = info.pv.iter().map(|&m| kibitz::move_to_uci(m, chess960)).collect();
    format!(
        "info depth {} seldepth {} score {} nodes {} nps {} time {} hashfull {} tbhits {} pv {}",
        info.depth,
        info.seldepth,
        ScoreKind::from_score(info.score).uci(),
        info.nodes,
        (info.nodes as f64 / secs) as u64,
        info.elapsed.as_millis(),
        info.hashfull,
        info.tb_hits,
        pv.join(" ")
    )
}

/// Runs `kibitz search`.
pub fn run_search(args: SearchArgs) -> Result<ExitCode> {
    let mut pos = if args.position == "startpos" {
        Position::startpos()
    } else {
        Position::from_fen_with(args.position.as_bytes(), FenOptions::default())?
    };
    for m in &args.moves {
        let mv = pos.parse_uci(m)?;
        pos.do_move(mv);
    }
    let mut searcher =
        Searcher::try_with_net(args.hash, args.net.load()?).map_err(anyhow::Error::msg)?;
    searcher.set_tablebases(args.syzygy.open()?);
    let limits = match args.nodes {
        Some(n) => Limits::nodes(n),
        None => Limits::depth(args.depth),
    };
    let mut out = super::stdout();
    let mut write_error = None;
    let chess960 = pos.is_chess960();
    let result = searcher.search(&mut pos, &limits, |info| {
        if let Err(e) = writeln!(out, "{}", info_line(chess960, info)) {
            write_error.get_or_insert(e);
        }
    });
    if let Some(e) = write_error {
        return Err(e.into());
    }
    match result.best {
        Some(m) => writeln!(out, "bestmove {}", pos.uci(m))?,
        None => writeln!(
            out,
            "bestmove (none) ({})",
            if pos.in_check() { "checkmate" } else { "stalemate" }
        )?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Arguments of `kibitz bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Depth to search each position.
    #[arg(default_value_t = bench::DEFAULT_DEPTH)]
    depth: i32,
    /// Transposition table size in MiB.
    #[arg(long, default_value_t = 16)]
    hash: usize,
    /// Print each position's node count.
    #[arg(long, short = 'v')]
    verbose: bool,
    #[command(flatten)]
    net: NetArgs,
    #[command(flatten)]
    syzygy: SyzygyArgs,
}

/// Runs `kibitz bench`.
pub fn run_bench(args: BenchArgs) -> Result<ExitCode> {
    let mut out = super::stdout();
    let net = args.net.load()?;
    if let Some(net) = &net {
        writeln!(out, "net {} (sha256 {})", net.info().name, net.info().sha256)?;
    }
    let tables = args.syzygy.open()?;
    if let Some(t) = &tables {
        writeln!(out, "syzygy {}", t.describe())?;
    }
    let result = bench::run_with_tables(args.depth, args.hash, net, tables, |i, fen, nodes| {
        if args.verbose {
            let _ = writeln!(out, "position {:>2} nodes {:>10} {fen}", i + 1, nodes);
        }
    })
    .map_err(anyhow::Error::msg)?;
    writeln!(out, "positions {}", result.positions)?;
    writeln!(out, "depth {}", args.depth)?;
    writeln!(out, "nodes {}", result.nodes)?;
    writeln!(out, "seconds {:.3}", result.elapsed.as_secs_f64())?;
    writeln!(out, "nps {:.0}", result.nps())?;
    Ok(ExitCode::SUCCESS)
}
