//! NNUE speed, kibitz and Stockfish 15.1 side by side in one run:
//!
//! * evaluations per second along real games (the shared Lichess 2016-05
//!   games, every position after every move), each with its accumulator
//!   brought up to date from the previous position's (kibitz), and, for
//!   reference, with every accumulator computed from scratch;
//! * search speed with the net on the bench positions (`data/bench.epd`)
//!   at a fixed depth: kibitz's searcher in this process, Debian's
//!   Stockfish 15.1 (`/usr/games/stockfish`, one thread, Hash 16,
//!   `ucinewgame` before each position) over UCI; nodes per second and
//!   positions per second of each, and the ratios. Stockfish exposes no
//!   evaluation-only benchmark (its `eval` prints a trace of some forty
//!   evaluations), so the evaluation rate has no Stockfish column.
//!
//! * the same two measures for kibitz's own net (`data/kibitz-net.nnue`, or
//!   `--own FILE`): evaluations per second along the games, and the search
//!   on the bench positions, beside the hand-written evaluation's.
//!
//! Also printed: how sparse the first hidden layer's inputs are.
//!
//! ```text
//! cargo bench --bench nnue                        # 3 rounds, 2000 games, depth 10
//! cargo bench --bench nnue -- --rounds 5 --games 500 --depth 12
//! ```
//!
//! Needs `../shared/data` and Stockfish 15.1's net in
//! `target/nn-ad9b42354671.nnue`, exported from `/usr/games/stockfish`
//! when missing.

use std::{
    io::{BufRead, BufReader, Write},
    path::{Path, PathBuf},
    process::{Command, Stdio},
    sync::Arc,
    time::Instant,
};

use kibitz::{
    GameReader, Limits, Move, Position, Searcher, bench,
    nnue::{Accumulator, L1, Net, Network, NnueEval, SmallEval, SmallNet, outputs, simd},
    set_start_position,
};

const STOCKFISH: &str = "/usr/games/stockfish";

fn arg<T: std::str::FromStr>(name: &str, default: T) -> T {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn net_path() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/nn-ad9b42354671.nnue");
    if !path.exists() {
        let mut sf = Command::new(STOCKFISH)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("Debian's stockfish (apt-get install stockfish)");
        let cmd = format!("uci\nexport_net {}\nquit\n", path.display());
        sf.stdin.take().unwrap().write_all(cmd.as_bytes()).unwrap();
        assert!(sf.wait().unwrap().success());
    }
    path
}

/// The start and moves of the first `n` games of the shared Lichess sample.
fn games(n: usize) -> Vec<(Position, Vec<Move>)> {
    let data = std::env::var_os("KIBITZ_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data"));
    let path = data.join("pgn/lichess/lichess-org_database_2016-05.pgn.zst");
    let text = zstd::decode_all(&std::fs::read(&path).expect("the shared data (KIBITZ_DATA)")[..])
        .unwrap();
    let startpos = Position::startpos();
    let mut reader = GameReader::new(&text, 0, &[]);
    let mut out = Vec::new();
    while let Some(game) = reader.next_game() {
        let mut pos = Position::startpos();
        if set_start_position(game, &mut pos, &startpos).is_err() {
            continue;
        }
        let start = pos.clone();
        let mut moves = Vec::new();
        for san in &game.moves {
            let Ok(m) = san.to_move(&pos) else { break };
            pos.do_move(m);
            moves.push(m);
        }
        out.push((start, moves));
        if out.len() == n {
            break;
        }
    }
    out
}

/// Evaluates every position of every game; returns evaluations made.
fn evaluate_games(net: &Arc<Network>, games: &[(Position, Vec<Move>)], incremental: bool) -> u64 {
    let mut eval = NnueEval::new(net.clone());
    let mut n = 0;
    let mut sum = 0i64;
    for (start, moves) in games {
        let mut pos = start.clone();
        for &m in moves {
            pos.do_move(m);
            let v = if incremental {
                eval.evaluate(&pos)
            } else {
                let acc = Accumulator::refresh(net, &pos);
                let b = kibitz::nnue::bucket(pos.occupied().count());
                let o = outputs(net, &acc, pos.side_to_move(), b);
                (o.psqt + o.positional) / 16
            };
            sum += i64::from(v);
            n += 1;
        }
    }
    std::hint::black_box(sum);
    n
}

/// Evaluates every position of every game with a kibitz net, each
/// accumulator brought up to date from the previous position's.
fn evaluate_games_small(net: &Arc<SmallNet>, games: &[(Position, Vec<Move>)]) -> u64 {
    let mut eval = SmallEval::new(net.clone());
    let (mut n, mut sum) = (0, 0i64);
    for (start, moves) in games {
        let mut pos = start.clone();
        for &m in moves {
            pos.do_move(m);
            sum += i64::from(eval.evaluate(&pos));
            n += 1;
        }
    }
    std::hint::black_box(sum);
    n
}

/// Zero bytes and zero 4-byte blocks among the first hidden layer's inputs.
fn sparsity(net: &Arc<Network>, games: &[(Position, Vec<Move>)]) -> (f64, f64) {
    let (mut zero, mut zero_blocks, mut total) = (0u64, 0u64, 0u64);
    for (start, moves) in games.iter().take(200) {
        let mut pos = start.clone();
        for &m in moves {
            pos.do_move(m);
            let acc = Accumulator::refresh(net, &pos);
            let (us, them) = (pos.side_to_move().to_usize(), (!pos.side_to_move()).to_usize());
            let mut t = [0u8; L1];
            simd::transform(&acc.values[us], &acc.values[them], &mut t);
            zero += t.iter().filter(|&&b| b == 0).count() as u64;
            zero_blocks += t.chunks(4).filter(|c| c.iter().all(|&b| b == 0)).count() as u64;
            total += L1 as u64;
        }
    }
    (zero as f64 / total as f64, zero_blocks as f64 * 4.0 / total as f64)
}

/// Searches the bench positions to `depth`: (nodes, seconds).
fn kibitz_search(net: Option<Net>, fens: &[String], depth: i32) -> (u64, f64) {
    let mut searcher = Searcher::try_with_net(16, net).unwrap();
    let start = Instant::now();
    let mut nodes = 0;
    for fen in fens {
        let mut pos = Position::from_fen(fen).unwrap();
        searcher.new_game();
        nodes += searcher.search(&mut pos, &Limits::depth(depth), |_| {}).nodes;
    }
    (nodes, start.elapsed().as_secs_f64())
}

/// Stockfish on the same positions: (nodes, seconds).
fn stockfish_search(fens: &[String], depth: i32) -> (u64, f64) {
    let mut sf = Command::new(STOCKFISH)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("Debian's stockfish");
    let mut input = sf.stdin.take().unwrap();
    let mut output = BufReader::new(sf.stdout.take().unwrap());
    let mut wait = |prefix: &str| -> String {
        let mut line = String::new();
        loop {
            line.clear();
            assert!(output.read_line(&mut line).unwrap() > 0, "stockfish exited");
            if line.starts_with(prefix) {
                return line.clone();
            }
        }
    };
    writeln!(input, "uci\nsetoption name Threads value 1\nsetoption name Hash value 16").unwrap();
    wait("uciok");
    let start = Instant::now();
    let mut nodes = 0;
    for fen in fens {
        writeln!(input, "ucinewgame\nisready").unwrap();
        wait("readyok");
        writeln!(input, "position fen {fen}\ngo depth {depth}").unwrap();
        let mut last = 0;
        loop {
            let line = wait("");
            if line.starts_with("info") && line.contains(" nodes ") {
                let words: Vec<&str> = line.split_whitespace().collect();
                let i = words.iter().position(|&w| w == "nodes").unwrap();
                last = words[i + 1].parse().unwrap();
            } else if line.starts_with("bestmove") {
                break;
            }
        }
        nodes += last;
    }
    let secs = start.elapsed().as_secs_f64();
    writeln!(input, "quit").unwrap();
    sf.wait().unwrap();
    (nodes, secs)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let rounds = arg("--rounds", 3usize);
    let n_games = arg("--games", 2000usize);
    let depth = arg("--depth", 10i32);
    let net = Arc::new(Network::load(&net_path()).expect("the net"));
    let own = match std::env::args().position(|a| a == "--own") {
        Some(i) => Net::load(Path::new(&std::env::args().nth(i + 1).expect("--own FILE")))
            .expect("--own: a net"),
        None => Net::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("data/kibitz-net.nnue"))
            .expect("data/kibitz-net.nnue"),
    };
    let Net::Kibitz(small) = own.clone() else { panic!("--own: a kibitz net, not Stockfish's") };
    println!("kibitz's own net: {} {}", small.info().name, small.architecture());
    let games = games(n_games);
    println!(
        "nnue: {} kernels, {} games, {rounds} interleaved rounds, medians",
        simd::KERNELS,
        games.len()
    );
    let (zero, zero_blocks) = sparsity(&net, &games);
    println!(
        "first hidden layer's inputs: {:.1}% zero bytes, {:.1}% in all-zero 4-byte blocks",
        100.0 * zero,
        100.0 * zero_blocks
    );
    let fens = bench::positions();
    let mut rates: [Vec<f64>; 11] = Default::default();
    let mut evals = 0;
    let mut nodes = [0u64; 4];
    for _ in 0..rounds {
        for incremental in [true, false] {
            let start = Instant::now();
            evals = evaluate_games(&net, &games, incremental);
            rates[usize::from(!incremental)].push(evals as f64 / start.elapsed().as_secs_f64());
        }
        let start = Instant::now();
        let n = evaluate_games_small(&small, &games);
        rates[6].push(n as f64 / start.elapsed().as_secs_f64());
        let (n, secs) = kibitz_search(Some(own.clone()), &fens, depth);
        nodes[2] = n;
        rates[7].push(n as f64 / secs);
        rates[8].push(fens.len() as f64 / secs);
        let (n, secs) = kibitz_search(None, &fens, depth);
        nodes[3] = n;
        rates[9].push(n as f64 / secs);
        rates[10].push(fens.len() as f64 / secs);
        let (n, secs) = kibitz_search(Some(Net::Stockfish(net.clone())), &fens, depth);
        nodes[0] = n;
        rates[2].push(n as f64 / secs);
        rates[3].push(fens.len() as f64 / secs);
        let (n, secs) = stockfish_search(&fens, depth);
        nodes[1] = n;
        rates[4].push(n as f64 / secs);
        rates[5].push(fens.len() as f64 / secs);
    }
    let [inc, scratch, k_nps, k_pos, s_nps, s_pos, own_evals, o_nps, o_pos, h_nps, h_pos] =
        rates.map(|mut r| median(&mut r));
    println!("evaluations along the games ({evals} positions):");
    println!(
        "  kibitz, incremental       {:>8.2} M evals/s   {:>6.0} ns each",
        inc / 1e6,
        1e9 / inc
    );
    println!(
        "  kibitz, from scratch      {:>8.2} M evals/s   {:>6.0} ns each",
        scratch / 1e6,
        1e9 / scratch
    );
    println!("search, {} bench positions, depth {depth}, one thread:", fens.len());
    println!(
        "  kibitz with the net   {:>10} nodes  {:>6.2} M nodes/s  {:>7.1} pos/s",
        nodes[0],
        k_nps / 1e6,
        k_pos
    );
    println!(
        "  Stockfish 15.1        {:>10} nodes  {:>6.2} M nodes/s  {:>7.1} pos/s",
        nodes[1],
        s_nps / 1e6,
        s_pos
    );
    println!(
        "  ratios kibitz / Stockfish: {:.2}x nodes/s, {:.2}x positions/s (a native build of \
         Stockfish runs about 1.6x Debian's)",
        k_nps / s_nps,
        k_pos / s_pos
    );
    println!("kibitz's own net ({}):", small.architecture());
    println!(
        "  evaluations, incremental  {:>8.2} M evals/s   {:>6.0} ns each ({:.2}x Stockfish's net \
         in kibitz)",
        own_evals / 1e6,
        1e9 / own_evals,
        own_evals / inc
    );
    println!(
        "  search                {:>10} nodes  {:>6.2} M nodes/s  {:>7.1} pos/s ({:.2}x the nodes/s \
         of kibitz with Stockfish's net)",
        nodes[2],
        o_nps / 1e6,
        o_pos,
        o_nps / k_nps
    );
    println!(
        "  hand-written eval     {:>10} nodes  {:>6.2} M nodes/s  {:>7.1} pos/s",
        nodes[3],
        h_nps / 1e6,
        h_pos
    );
}
