//! Self-play speed, kibitz and Stockfish 15.1 side by side in one run:
//! `kibitz selfplay` with the built-in search and Stockfish's own net
//! against `kibitz selfplay --engine /usr/games/stockfish`, both at a fixed
//! node count per position (5,000 by default: the field's usual setting),
//! the same book, random plies and seed, one thread and two. The figure is
//! positions written per second; rounds are interleaved, medians reported,
//! and the ratio kibitz / Stockfish.
//!
//! ```text
//! cargo bench --bench selfplay                           # 3 rounds, 24 games a run
//! cargo bench --bench selfplay -- --rounds 5 --games 40 --nodes 5000
//! ```
//!
//! Needs `../shared/data` (or `KIBITZ_DATA`), Debian's Stockfish at
//! `/usr/games/stockfish`, and its net in `target/nn-ad9b42354671.nnue`
//! (exported from Stockfish when missing).

use std::{
    path::{Path, PathBuf},
    process::Command,
};

fn arg(args: &[String], name: &str, default: u64) -> u64 {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn net() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/nn-ad9b42354671.nnue");
    if !path.exists() {
        let mut sf = Command::new("/usr/games/stockfish")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("/usr/games/stockfish");
        let cmd = format!("uci\nexport_net {}\nquit\n", path.display());
        std::io::Write::write_all(&mut sf.stdin.take().unwrap(), cmd.as_bytes()).unwrap();
        assert!(sf.wait().unwrap().success());
    }
    path
}

/// Positions per second of one run (from its JSON summary).
fn run(player: &[&str], threads: u32, games: u64, nodes: u64, out: &Path) -> f64 {
    let data = std::env::var_os("KIBITZ_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data"));
    let book = data.join("epd/noob_3moves.epd.zst");
    let output = Command::new(env!("CARGO_BIN_EXE_kibitz"))
        .args(["selfplay", "-o"])
        .arg(out)
        .args(["--force", "--quiet", "--json", "--random-plies", "2", "--seed", "1", "--book"])
        .arg(&book)
        .args(["--games", &games.to_string(), "--nodes", &nodes.to_string()])
        .args(["-j", &threads.to_string()])
        .args(player)
        .env_remove("KIBITZ_NET")
        .output()
        .expect("kibitz");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let v: serde_json::Value = serde_json::from_slice(&output.stdout).expect("a JSON summary");
    v["positions_per_second"].as_f64().expect("positions_per_second")
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (rounds, games, nodes) =
        (arg(&args, "--rounds", 3), arg(&args, "--games", 24), arg(&args, "--nodes", 5000));
    let net = net();
    let net = net.to_str().expect("a UTF-8 path");
    let dir = std::env::temp_dir().join(format!("kibitz-bench-selfplay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let kibitz = ["--net", net];
    let stockfish = ["--engine", "/usr/games/stockfish", "--engine-option", "Threads=1"];
    println!(
        "selfplay: {games} games a run, {nodes} nodes a position, {rounds} interleaved rounds"
    );
    for threads in [1, 2] {
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            ours.push(run(&kibitz, threads, games, nodes, &dir.join("kibitz.kbz")));
            theirs.push(run(&stockfish, threads, games, nodes, &dir.join("stockfish.kbz")));
        }
        let (a, b) = (median(ours.clone()), median(theirs.clone()));
        println!(
            "  {threads} thread(s): kibitz with Stockfish 15.1's net {a:8.1} positions/s {ours:?}"
        );
        println!(
            "  {threads} thread(s): Debian's Stockfish 15.1        {b:8.1} positions/s {theirs:?}"
        );
        println!("  ratio, {threads} thread(s): {:.2}x (kibitz / Stockfish)", a / b);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
