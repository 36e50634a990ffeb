//! Syzygy endgame tables: folders found and refused, probes checked
//! against python-chess on random positions of every table in the shared
//! set, and the search, the labels and self-play using them.

use kibitz::{Position, TablebaseError, Tablebases};

use crate::util::TempDir;

#[test]
fn a_missing_or_empty_folder_is_named() {
    let dir = TempDir::new("syzygy-folders");
    let missing = dir.path("no-such-folder");
    let err = Tablebases::open(missing.to_str().unwrap()).unwrap_err();
    assert!(matches!(err, TablebaseError::Folder { .. }), "{err}");
    assert!(err.to_string().contains("no-such-folder"), "{err}");

    let empty = dir.path("empty");
    std::fs::create_dir(&empty).unwrap();
    std::fs::write(empty.join("README"), "not a table").unwrap();
    let err = Tablebases::open(empty.to_str().unwrap()).unwrap_err();
    assert!(matches!(err, TablebaseError::Empty(_)), "{err}");
    assert!(err.to_string().contains("empty"), "{err}");

    // A file named as a table whose size cannot be one's.
    std::fs::write(empty.join("KQvK.rtbw"), [0u8; 100]).unwrap();
    let err = Tablebases::open(empty.to_str().unwrap()).unwrap_err();
    assert!(err.to_string().contains("KQvK.rtbw"), "{err}");
}

#[cfg(feature = "corpus")]
pub mod corpus {
    use super::*;
    use crate::util::{Rng, shared};

    pub fn tables() -> Tablebases {
        Tablebases::open(shared("syzygy").to_str().unwrap()).expect("the shared Syzygy tables")
    }

    /// The table names in the shared folder (`KBNvK`), sorted.
    pub fn materials() -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(shared("syzygy"))
            .unwrap()
            .filter_map(|e| {
                let name = e.unwrap().file_name().to_string_lossy().into_owned();
                name.strip_suffix(".rtbw").map(str::to_string)
            })
            .collect();
        names.sort();
        names
    }

    /// A random legal position of `material` (`KRPvKB`): pieces on random
    /// squares (pawns off the first and last ranks), a random side to move,
    /// the side not to move not in check. `None` when the draw fails (the
    /// caller draws again).
    pub fn random_position(material: &str, rng: &mut Rng) -> Option<Position> {
        let (white, black) = material.split_once('v').unwrap();
        let mut board = [None::<char>; 64];
        for (pieces, upper) in [(white, true), (black, false)] {
            for c in pieces.chars() {
                let c = if upper { c } else { c.to_ascii_lowercase() };
                loop {
                    let sq = rng.below(64);
                    let rank = sq / 8;
                    if board[sq].is_some()
                        || (c.eq_ignore_ascii_case(&'p') && (rank == 0 || rank == 7))
                    {
                        continue;
                    }
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
                            fen.push_str(&empty.to_string());
                            empty = 0;
                        }
                        fen.push(c);
                    }
                    None => empty += 1,
                }
            }
            if empty > 0 {
                fen.push_str(&empty.to_string());
            }
            if rank > 0 {
                fen.push('/');
            }
        }
        let side = if rng.below(2) == 0 { "w" } else { "b" };
        let pos = Position::from_fen(&format!("{fen} {side} - - 0 1")).ok()?;
        // The side not to move may not be in check (kibitz's FEN reader
        // refuses such positions; kings side by side are refused too).
        Some(pos)
    }

    /// The example of the shared tables' README, and a few known results.
    #[test]
    fn known_results() {
        let tb = tables();
        assert_eq!(tb.max_pieces(), 5);
        assert_eq!(tb.wdl_tables(), 38);
        assert_eq!(tb.dtz_tables(), 38);
        let probe = |fen: &str| {
            let pos = Position::from_fen(fen).unwrap();
            (tb.probe_wdl(&pos).map(|w| w.value()), tb.probe_dtz(&pos))
        };
        assert_eq!(probe("8/8/8/8/3k4/8/8/KBBn4 w - - 0 1"), (Some(1), Some(121)));
        // King and queen against king: a win for the side with the queen,
        // a loss for the other; two kings alone, a draw.
        assert_eq!(probe("8/8/8/3k4/8/8/8/KQ6 w - - 0 1").0, Some(2));
        assert_eq!(probe("8/8/8/3k4/8/8/8/KQ6 b - - 0 1").0, Some(-2));
        assert_eq!(probe("8/8/8/3k4/8/8/8/K7 w - - 0 1"), (Some(0), Some(0)));
        // Castling rights: never in a table.
        assert_eq!(probe("4k3/8/8/8/8/8/8/R3K3 w Q - 0 1"), (None, None));
        // A table not in the set (six pieces).
        assert_eq!(probe("4k3/8/8/8/8/8/PPP5/R3K3 w - - 0 1"), (None, None));
    }

    #[cfg(feature = "python-chess")]
    #[test]
    fn probes_agree_with_python_chess_on_every_table() {
        use std::fmt::Write as _;
        let tb = tables();
        let mut rng = Rng::new(37);
        let mut fens = String::new();
        let mut ours = Vec::new();
        for material in materials() {
            let mut drawn = 0;
            while drawn < 60 {
                let Some(pos) = random_position(&material, &mut rng) else { continue };
                drawn += 1;
                let wdl = tb.probe_wdl_after_zeroing(&pos).map(|w| w.value());
                let dtz = tb.probe_dtz(&pos);
                writeln!(fens, "{}", pos.fen()).unwrap();
                ours.push((pos.fen(), wdl, dtz));
            }
        }
        let dir = TempDir::new("syzygy-python");
        let list = dir.path("fens.txt");
        std::fs::write(&list, fens).unwrap();
        let script = "import sys, chess, chess.syzygy\n\
            tb = chess.syzygy.open_tablebase(sys.argv[1])\n\
            for fen in open(sys.argv[2]):\n\
            \x20   b = chess.Board(fen.strip())\n\
            \x20   try:\n\
            \x20       print(tb.probe_wdl(b), tb.probe_dtz(b))\n\
            \x20   except (KeyError, chess.syzygy.MissingTableError):\n\
            \x20       print('none none')\n";
        let out = std::process::Command::new("python3")
            .args(["-c", script])
            .arg(shared("syzygy"))
            .arg(&list)
            .output()
            .expect("python3");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        let theirs: Vec<&str> = text.lines().collect();
        assert_eq!(theirs.len(), ours.len());
        let mut differ = Vec::new();
        let (mut wins, mut draws, mut losses, mut cursed) = (0, 0, 0, 0);
        for ((fen, wdl, dtz), line) in ours.iter().zip(&theirs) {
            let (w, d) = line.split_once(' ').unwrap();
            let (w, d) = (w.parse::<i32>().ok(), d.parse::<i32>().ok());
            if (w, d) != (*wdl, *dtz) {
                differ.push(format!("{fen}: kibitz {wdl:?} {dtz:?}, python-chess {w:?} {d:?}"));
            }
            match w {
                Some(2) => wins += 1,
                Some(0) => draws += 1,
                Some(-2) => losses += 1,
                Some(_) => cursed += 1,
                None => {}
            }
        }
        eprintln!(
            "{} positions of {} tables: {wins} wins, {draws} draws, {losses} losses, \
             {cursed} cursed or blessed; {} differ",
            ours.len(),
            materials().len(),
            differ.len()
        );
        assert!(wins > 100 && draws > 100 && losses > 100 && cursed > 0);
        assert!(
            differ.is_empty(),
            "{} of {} differ:\n{}",
            differ.len(),
            ours.len(),
            differ.join("\n")
        );
    }
}
