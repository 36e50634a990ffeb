//! `kibitz eval`: the static evaluation of positions, hand-written and,
//! with a net, the NNUE evaluation laid out as Stockfish's `eval` prints it
//! (Stockfish 15.1's for its net, Stockfish 19's for its net).

use std::{
    io::{BufRead, Write},
    path::PathBuf,
    process::ExitCode,
};

use anyhow::{Context, Result};
use clap::Args;

use kibitz::{
    Color, EvalTables, FenOptions, Position, evaluate,
    nnue::{Net, NnueEval, SmallNet, ThreatEval, to_centipawns},
};

/// Arguments of `kibitz eval`.
#[derive(Args, Debug)]
pub struct EvalArgs {
    /// A FEN (quoted), `startpos`, or `-` for one FEN (or EPD line) per
    /// line of standard input.
    position: String,
    /// Moves to play first, in UCI (`e2e4 e7e5`).
    #[arg(long, num_args = 1.., value_name = "UCI")]
    moves: Vec<String>,
    #[command(flatten)]
    net: NetArgs,
}

/// The net option every command that evaluates shares.
#[derive(Args, Debug, Clone)]
pub struct NetArgs {
    /// A net to evaluate with instead of the built-in one: a Stockfish 15.1
    /// net (SFNNv5), a Stockfish 19 net (Stockfish 19's own or Stockfish.js
    /// 19's lite one) or one `kibitz train` made (kibitz's former default
    /// is `data/kibitz-net.nnue`); the environment variable KIBITZ_NET names
    /// one by default. Get Stockfish 15.1's with
    /// `printf 'uci\nexport_net nn.nnue\nquit\n' | /usr/games/stockfish`.
    #[arg(long, value_name = "FILE", env = "KIBITZ_NET")]
    pub net: Option<PathBuf>,
    /// What to evaluate with when no --net is given: the built-in net
    /// (Stockfish.js 19's lite net, `nn-61e7af4bb97d.nnue`) or the
    /// hand-written evaluation (which wins over KIBITZ_NET).
    #[arg(long, value_enum, default_value_t = EvalChoice::Net)]
    pub eval: EvalChoice,
}

/// The evaluation when no net file is named.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvalChoice {
    /// The net built into the binary: Stockfish.js 19's lite net.
    Net,
    /// The hand-written evaluation.
    HandWritten,
}

impl NetArgs {
    /// The net to evaluate with: the file named, else the built-in net,
    /// or none for the hand-written evaluation.
    pub fn load(&self) -> Result<Option<Net>> {
        match (&self.net, self.eval) {
            (_, EvalChoice::HandWritten) => Ok(None),
            (Some(path), EvalChoice::Net) => Ok(Some(Net::load(path)?)),
            (None, EvalChoice::Net) => Ok(Some(Net::builtin())),
        }
    }
}

/// `v` from White's side, as a signed number of pawns with two decimals.
fn pawns(v: i32) -> String {
    format!("{:+.2}", f64::from(v) / 100.0)
}

/// The evaluators of the net given, by kind.
#[derive(Default)]
struct Evaluators {
    nnue: Option<NnueEval>,
    nnue19: Option<ThreatEval>,
    small: Option<std::sync::Arc<SmallNet>>,
    /// The net's file and kind, as Stockfish names the net it loaded.
    net: String,
}

fn report(
    out: &mut impl Write,
    pos: &Position,
    tables: &mut EvalTables,
    e: &mut Evaluators,
) -> Result<()> {
    if let Some(eval) = e.nnue19.as_mut() {
        // Stockfish 19's report, line for line, then the hand-written
        // evaluation.
        writeln!(out, "NNUE evaluation using {}", e.net)?;
        write!(out, "{}", eval.stockfish_report(pos))?;
        let white = if pos.side_to_move() == Color::White { 1 } else { -1 };
        writeln!(
            out,
            "Hand-written eval      {} (white side)",
            pawns(white * evaluate(pos, tables))
        )?;
        return Ok(());
    }
    let (nnue, small) = (e.nnue.as_mut(), e.small.as_deref());
    let white = |v: i32| if pos.side_to_move() == Color::White { v } else { -v };
    let hand = white(evaluate(pos, tables));
    if pos.in_check() {
        writeln!(out, "(in check: Stockfish's eval prints no evaluation here)")?;
    }
    writeln!(out, "Hand-written eval      {} (white side)", pawns(hand))?;
    if let Some(nnue) = nnue {
        write!(out, "\n{}\n\n", nnue.stockfish_trace(pos))?;
        writeln!(out, "{}", nnue.stockfish_line(pos))?;
        let cp = to_centipawns(white(nnue.evaluate(pos)));
        writeln!(out, "NNUE centipawns        {cp:+} (white side)")?;
    }
    if let Some(net) = small {
        let cp = white(net.evaluate(pos));
        writeln!(out, "kibitz net eval        {} (white side, {})", pawns(cp), net.architecture())?;
    }
    Ok(())
}

/// Runs `kibitz eval`.
pub fn run(args: EvalArgs) -> Result<ExitCode> {
    let net = args.net.load()?;
    let mut evaluators = Evaluators::default();
    if let Some(n) = &net {
        evaluators.net = format!("{} ({})", n.info().name, n.kind());
    }
    match net {
        Some(Net::Stockfish(n)) => evaluators.nnue = Some(NnueEval::new(n)),
        Some(Net::Stockfish19(n)) => evaluators.nnue19 = Some(ThreatEval::new(n)),
        Some(Net::Kibitz(n)) => evaluators.small = Some(n),
        None => {}
    }
    let mut tables = EvalTables::new();
    let mut out = super::stdout();
    let options = FenOptions { castling_mode: None, drop_invalid_castling: true };
    if args.position == "-" {
        for (n, line) in std::io::stdin().lock().lines().enumerate() {
            let line = line.context("reading standard input")?;
            let fen = line.trim();
            if fen.is_empty() {
                continue;
            }
            let pos = kibitz::EpdLine::parse(fen.as_bytes())
                .and_then(Result::ok)
                .and_then(|l| l.position().ok())
                .or_else(|| Position::from_fen_with(fen.as_bytes(), options).ok())
                .with_context(|| format!("line {}: not a FEN: {fen}", n + 1))?;
            writeln!(out, "position {}", pos.fen())?;
            report(&mut out, &pos, &mut tables, &mut evaluators)?;
            writeln!(out)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut pos = if args.position == "startpos" {
        Position::startpos()
    } else {
        Position::from_fen_with(args.position.as_bytes(), options)?
    };
    for m in &args.moves {
        let mv = pos.parse_uci(m)?;
        pos.do_move(mv);
    }
    report(&mut out, &pos, &mut tables, &mut evaluators)?;
    Ok(ExitCode::SUCCESS)
}
