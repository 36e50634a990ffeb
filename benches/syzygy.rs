//! Syzygy probing speed, kibitz against the decoder it wraps and against
//! python-chess, in one run, and the search's speed with tables against
//! without:
//!
//! * WDL probes per second (as just after a capture or pawn move, WDL
//!   tables alone) on random positions of every table in the shared set
//!   (seeded; the tables memory-mapped and in the page cache after a first
//!   pass): kibitz's `Tablebases` (its position crossing to shakmaty's
//!   board at each probe), shakmaty-syzygy alone on positions already in
//!   its board type, and python-chess (`chess.syzygy`, timed inside
//!   python, its own loop over boards already made);
//! * nodes per second of kibitz's search at a fixed depth on positions of
//!   6 to 8 pieces, where captures enter the tables, from each kind of
//!   game the shared data holds (Lichess, TWIC, CCRL, chess.com, an old
//!   master's games, TCEC): with tables and without, and the probes made.
//!
//! Rounds are interleaved; medians and ratios are printed.
//!
//! ```text
//! cargo bench --bench syzygy                      # 3 rounds, 100,000 positions, 50 a source
//! cargo bench --bench syzygy -- --rounds 5 --positions 20000 --depth 10
//! ```
//!
//! Needs `../shared/data` (or `KIBITZ_DATA`) and python3 with python-chess
//! for its column (left out, and said, without it).

use std::{
    fmt::Write as _,
    path::{Path, PathBuf},
    process::Command,
    sync::Arc,
    time::Instant,
};

use kibitz::{GameReader, Limits, Position, Searcher, Tablebases, set_start_position};
use shakmaty::{CastlingMode, Chess, fen::Fen};

fn arg<T: std::str::FromStr>(name: &str, default: T) -> T {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn data() -> PathBuf {
    std::env::var_os("KIBITZ_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data"))
}

/// SplitMix64, seeded: the same positions every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) % n as u64) as usize
    }
}

/// `count` random legal positions spread over the tables of `folder`.
fn random_positions(folder: &Path, count: usize) -> Vec<Position> {
    let mut materials: Vec<String> = std::fs::read_dir(folder)
        .expect("the shared Syzygy tables")
        .filter_map(|e| {
            let name = e.ok()?.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".rtbw").map(str::to_string)
        })
        .collect();
    materials.sort();
    let mut rng = Rng(7);
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let material = &materials[out.len() % materials.len()];
        let (white, black) = material.split_once('v').expect("a table's name");
        let mut board = [None::<char>; 64];
        let pieces = white.chars().chain(black.chars().map(|c| c.to_ascii_lowercase()));
        for c in pieces {
            loop {
                let sq = rng.below(64);
                let pawn_rank = c.eq_ignore_ascii_case(&'p') && (sq / 8 == 0 || sq / 8 == 7);
                if board[sq].is_none() && !pawn_rank {
                    board[sq] = Some(c);
                    break;
                }
            }
        }
        let mut fen = String::new();
        for rank in (0..8).rev() {
            let mut empty = 0;
            for file in 0..8 {
                match board[rank * 8 + file] {
                    Some(c) => {
                        if empty > 0 {
                            write!(fen, "{empty}").unwrap();
                            empty = 0;
                        }
                        fen.push(c);
                    }
                    None => empty += 1,
                }
            }
            if empty > 0 {
                write!(fen, "{empty}").unwrap();
            }
            if rank > 0 {
                fen.push('/');
            }
        }
        let side = if rng.below(2) == 0 { 'w' } else { 'b' };
        if let Ok(pos) = Position::from_fen(&format!("{fen} {side} - - 0 1")) {
            out.push(pos);
        }
    }
    out
}

/// The kinds of games the shared data holds, one file each.
const SOURCES: [(&str, &str); 6] = [
    ("Lichess 2016", "pgn/lichess/lichess-org_database_2016-05.pgn.zst"),
    ("TWIC", "pgn/real/twic1599_1000k.pgn.zst"),
    ("CCRL", "pgn/real/ccrl_blitz_Obsidian_2025.pgn.zst"),
    ("chess.com", "pgn/real/chesscom_kyle_b81_2021.pgn.zst"),
    ("old master", "pgn/real/play-like-tal_Tal_3110.pgn.zst"),
    ("TCEC", "pgn/engine/TCEC_Season_13_-_Superfinal.pgn.zst"),
];

/// Positions of 6 to 8 pieces without castling rights from the games of
/// `file`, one in eight of those met.
fn endgame_positions(file: &str, count: usize) -> Vec<Position> {
    let path = data().join(file);
    let text = zstd::decode_all(&std::fs::read(&path).expect("the shared data (KIBITZ_DATA)")[..])
        .expect("zstd");
    let startpos = Position::startpos();
    let mut reader = GameReader::new(&text, 0, &[]);
    let (mut out, mut met) = (Vec::new(), 0usize);
    while let Some(game) = reader.next_game() {
        let mut pos = Position::startpos();
        if set_start_position(game, &mut pos, &startpos).is_err() {
            continue;
        }
        for san in &game.moves {
            let Ok(m) = san.to_move(&pos) else { break };
            pos.do_move(m);
            let pieces = pos.occupied().count();
            if (6..=8).contains(&pieces) && pos.castling_rights() == 0 && pos.has_legal_moves() {
                met += 1;
                if met % 8 == 0 {
                    let mut p = Position::from_fen(&pos.fen()).expect("a FEN kibitz wrote");
                    p.forget_history();
                    out.push(p);
                    if out.len() == count {
                        return out;
                    }
                }
            }
        }
    }
    out
}

/// `pos` as shakmaty's board, the way kibitz crosses over at a probe.
fn board_of(pos: &Position) -> Option<Chess> {
    use shakmaty::{Color, FromSetup, Piece, Role, Setup, Square};
    let mut setup = Setup::empty();
    for sq in pos.occupied() {
        let piece = pos.piece_on(sq)?;
        let color = Color::from_white(piece.color() == kibitz::Color::White);
        let role = Role::ALL[piece.role() as usize];
        setup.board.set_piece_at(Square::new(sq as u32), Piece { color, role });
    }
    setup.turn = Color::from_white(pos.side_to_move() == kibitz::Color::White);
    setup.halfmoves = pos.rule50();
    Chess::from_setup(setup, CastlingMode::Standard).ok()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// python-chess's WDL probes per second over `fens` (its own boards, made
/// before the clock starts), or why it could not run.
fn python_chess(folder: &Path, fens: &Path) -> Result<f64, String> {
    let script = "import sys, time, chess, chess.syzygy\n\
        tb = chess.syzygy.open_tablebase(sys.argv[1])\n\
        boards = [chess.Board(l.strip()) for l in open(sys.argv[2])]\n\
        for b in boards[:2000]: tb.probe_wdl(b)\n\
        t = time.perf_counter()\n\
        for b in boards: tb.probe_wdl(b)\n\
        print(len(boards) / (time.perf_counter() - t))\n";
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(folder)
        .arg(fens)
        .output()
        .map_err(|e| format!("python3: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("").to_string());
    }
    String::from_utf8_lossy(&out.stdout).trim().parse().map_err(|e| format!("{e}"))
}

fn main() {
    let rounds: usize = arg("--rounds", 3);
    let count: usize = arg("--positions", 100_000);
    let depth: i32 = arg("--depth", 10);
    let searched: usize = arg("--searched", 50);
    let folder = data().join("syzygy");
    let tables = Arc::new(Tablebases::open(folder.to_str().unwrap()).expect("the shared tables"));
    let crate_tables = {
        // Safety: the shared tables are read-only files no one rewrites
        // during the run.
        let mut t = unsafe { shakmaty_syzygy::Tablebase::<Chess>::with_mmap_filesystem() };
        t.add_directory(&folder).expect("the shared tables");
        t
    };
    // The positions both boards take (shakmaty refuses a few that kibitz
    // reads, such as checks no move could give).
    let (positions, boards): (Vec<Position>, Vec<Chess>) = random_positions(&folder, count)
        .into_iter()
        .filter_map(|p| {
            let fen: Fen = p.fen().parse().ok()?;
            let board = fen.into_position(CastlingMode::Standard).ok()?;
            Some((p, board))
        })
        .unzip();
    let fens = std::env::temp_dir().join(format!("kibitz-bench-syzygy-{}.txt", std::process::id()));
    std::fs::write(&fens, positions.iter().map(|p| p.fen() + "\n").collect::<String>()).unwrap();
    let endgames: Vec<(&str, Vec<Position>)> =
        SOURCES.iter().map(|&(name, file)| (name, endgame_positions(file, searched))).collect();
    println!(
        "{} random positions of the shared tables; {} positions of 6-8 pieces from each of {} \
         sources searched to depth {depth}; {rounds} rounds",
        positions.len(),
        searched,
        SOURCES.len()
    );

    let (mut ours, mut alone, mut python) = (Vec::new(), Vec::new(), Vec::new());
    let mut convert = Vec::new();
    // Per source: nodes per second with tables and without, each round;
    // nodes and probes of the first round.
    let mut with_nps = vec![Vec::new(); SOURCES.len()];
    let mut without_nps = vec![Vec::new(); SOURCES.len()];
    let mut first = vec![(0u64, 0u64, 0u64); SOURCES.len()];
    let mut python_error = None;
    // A first pass brings the tables into the page cache.
    let found = positions.iter().filter(|p| tables.probe_wdl_after_zeroing(p).is_some()).count();
    assert_eq!(found, positions.len(), "every random position is in the tables");
    for round in 0..rounds {
        // Each loop runs once untimed first, so that each is timed with the
        // tables and its positions warm in the caches, whatever ran before.
        let kibitz_pass = || {
            let mut sum = 0i64;
            for p in &positions {
                sum += i64::from(tables.probe_wdl_after_zeroing(p).map_or(9, |w| w.value()));
            }
            sum
        };
        let crate_pass = || {
            let mut sum = 0i64;
            for b in &boards {
                sum += crate_tables.probe_wdl_after_zeroing(b).map_or(9, |w| w as i64);
            }
            sum
        };
        kibitz_pass();
        let t = Instant::now();
        let sum = kibitz_pass();
        ours.push(positions.len() as f64 / t.elapsed().as_secs_f64());

        let t = Instant::now();
        let mut made = 0usize;
        for p in &positions {
            made += usize::from(board_of(p).is_some());
        }
        convert.push(positions.len() as f64 / t.elapsed().as_secs_f64());
        assert_eq!(made, positions.len());

        crate_pass();
        let t = Instant::now();
        let check = crate_pass();
        alone.push(boards.len() as f64 / t.elapsed().as_secs_f64());
        assert_eq!(sum, check, "kibitz and the crate alone agree");

        match python_chess(&folder, &fens) {
            Ok(rate) => python.push(rate),
            Err(e) => python_error = Some(e),
        }

        for (k, (_, games)) in endgames.iter().enumerate() {
            // Which goes first alternates round by round.
            let order = if round % 2 == 0 { [true, false] } else { [false, true] };
            for with in order {
                let mut searcher = Searcher::new(16);
                searcher.set_tablebases(with.then(|| tables.clone()));
                let (mut nodes, t) = (0u64, Instant::now());
                for p in games {
                    searcher.new_game();
                    let r = searcher.search(&mut p.clone(), &Limits::depth(depth), |_| {});
                    nodes += r.nodes;
                    if round == 0 {
                        if with {
                            first[k].0 += r.nodes;
                            first[k].2 += r.tb_hits;
                        } else {
                            first[k].1 += r.nodes;
                        }
                    }
                }
                let rate = nodes as f64 / t.elapsed().as_secs_f64();
                if with { with_nps[k].push(rate) } else { without_nps[k].push(rate) }
            }
        }
        println!(
            "round {}: kibitz {:.0} probes/s, crate alone {:.0}, python-chess {}",
            round + 1,
            ours[round],
            alone[round],
            python.last().map_or("not run".to_string(), |r| format!("{r:.0}")),
        );
    }
    let _ = std::fs::remove_file(&fens);
    let (ours, alone) = (median(ours), median(alone));
    println!("WDL probes per second (median of {rounds}):");
    println!("  kibitz        {ours:>10.0}");
    println!("  crate alone   {alone:>10.0}   kibitz / crate {:.2}x", ours / alone);
    let convert = median(convert);
    println!(
        "  (a kibitz position made into shakmaty's board alone: {convert:.0} a second, {:.0} ns \
         of the {:.0} ns a kibitz probe takes)",
        1e9 / convert,
        1e9 / ours
    );
    match python_error {
        Some(e) if python.is_empty() => println!("  python-chess  NOT RUN: {e}"),
        _ => {
            let p = median(python);
            println!("  python-chess  {p:>10.0}   kibitz / python-chess {:.1}x", ours / p);
        }
    }
    println!("search, 6-8 pieces, depth {depth}, nodes per second (median of {rounds}):");
    let mut ratios = Vec::new();
    for (k, (name, games)) in endgames.iter().enumerate() {
        let (with, without) = (median(with_nps[k].clone()), median(without_nps[k].clone()));
        ratios.push(with / without);
        let (nodes_with, nodes_without, probes) = first[k];
        println!(
            "  {name:<12} {:>3} positions: {with:>9.0} with tables ({nodes_with} nodes, {probes} \
             probes), {without:>9.0} without ({nodes_without} nodes): {:.2}x",
            games.len(),
            with / without
        );
    }
    println!("  median of the sources' ratios: {:.2}x", median(ratios));
}
