//! Syzygy endgame tables: folders found and refused, probes checked
//! against python-chess on random positions of every table in the shared
//! set, and the search, the labels and self-play using them.

use kibitz::{TablebaseError, Tablebases};

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

    // A file named as a table that is none (wrong first bytes, as a table
    // of another variant has), and one whose size cannot be a table's:
    // each is named and left out.
    std::fs::write(empty.join("KQvK.rtbw"), [0u8; 100]).unwrap();
    let mut truncated = vec![0x71, 0xe8, 0x23, 0x5d];
    truncated.resize(100, 0);
    std::fs::write(empty.join("KRvK.rtbw"), &truncated).unwrap();
    let err = Tablebases::open(empty.to_str().unwrap()).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("KQvK.rtbw: not a Syzygy WDL table of standard chess"), "{text}");
    assert!(text.contains("KRvK.rtbw") && text.contains("truncated or damaged"), "{text}");
}

#[cfg(feature = "corpus")]
pub mod corpus {
    use super::*;
    use crate::util::{Rng, kibitz, s, shared};
    use kibitz::{Color, Limits, Move, Position, Searcher, TbWdl, WIN_BOUND};

    pub fn tables() -> Tablebases {
        Tablebases::open(shared("syzygy").to_str().unwrap()).expect("the shared Syzygy tables")
    }

    #[cfg_attr(not(feature = "python-chess"), allow(dead_code))]
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

    /// A random position of `material` (`KRPvKB`): pieces on random
    /// squares (pawns off the first and last ranks), a random side to move;
    /// where both sides have pawns, one in three has an en-passant square
    /// (a pawn that has just advanced two squares beside one of the side to
    /// move). `None` when the draw is not a legal position (the caller
    /// draws again).
    pub fn random_position(material: &str, rng: &mut Rng) -> Option<Position> {
        let (white, black) = material.split_once('v').unwrap();
        let mut board = [None::<char>; 64];
        let white_moves = rng.below(2) == 0;
        let mut pieces: Vec<char> = white.chars().collect();
        pieces.extend(black.chars().map(|c| c.to_ascii_lowercase()));
        let mut ep = None;
        if white.contains('P') && black.contains('P') && rng.below(3) == 0 {
            // The pawn that advanced two squares, and the one beside it.
            let file = rng.below(8);
            let beside =
                if file == 0 || (file < 7 && rng.below(2) == 0) { file + 1 } else { file - 1 };
            let (rank, mover, capturer, passed, start) =
                if white_moves { (4, 'p', 'P', 5, 6) } else { (3, 'P', 'p', 2, 1) };
            board[rank * 8 + file] = Some(mover);
            board[rank * 8 + beside] = Some(capturer);
            // The squares it crossed are empty: kept so by a placeholder.
            board[passed * 8 + file] = Some('.');
            board[start * 8 + file] = Some('.');
            for c in [mover, capturer] {
                let i = pieces.iter().position(|&p| p == c).unwrap();
                pieces.remove(i);
            }
            ep = Some(format!("{}{}", (b'a' + file as u8) as char, passed + 1));
        }
        for c in pieces {
            loop {
                let sq = rng.below(64);
                let rank = sq / 8;
                if board[sq].is_some() || (c.eq_ignore_ascii_case(&'p') && (rank == 0 || rank == 7))
                {
                    continue;
                }
                board[sq] = Some(c);
                break;
            }
        }
        let mut fen = String::new();
        for rank in (0..8).rev() {
            let mut empty = 0;
            for file in 0..8 {
                match board[rank * 8 + file].filter(|&c| c != '.') {
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
        let side = if white_moves { "w" } else { "b" };
        let ep = ep.unwrap_or_else(|| "-".to_string());
        // kibitz's FEN reader refuses positions that cannot arise (the side
        // not to move in check, kings side by side).
        Position::from_fen(&format!("{fen} {side} - {ep} 0 1")).ok()
    }

    /// `kibitz annotate INPUT --preset analysis --depth DEPTH --syzygy
    /// TABLES -o OUTPUT`: exit code, standard output and error.
    fn analyse_with_tables(
        input: &std::path::Path,
        output: &std::path::Path,
        tables: &std::path::Path,
        depth: u32,
    ) -> (i32, String, String) {
        let depth = depth.to_string();
        kibitz(&[
            "annotate",
            s(input),
            "--preset",
            "analysis",
            "--depth",
            &depth,
            "--syzygy",
            s(tables),
            "-o",
            s(output),
        ])
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

    /// python-chess's WDL and DTZ of each FEN of `fens` (`None` outside
    /// its tables), in order.
    #[cfg(feature = "python-chess")]
    fn python_chess_probes(fens: &str, dir: &TempDir) -> Vec<(Option<i32>, Option<i32>)> {
        let list = dir.path("fens.txt");
        std::fs::write(&list, fens).unwrap();
        let script = "import sys, chess, chess.syzygy\n\
            tb = chess.syzygy.open_tablebase(sys.argv[1])\n\
            out = []\n\
            for fen in open(sys.argv[2]):\n\
            \x20   b = chess.Board(fen.strip())\n\
            \x20   try:\n\
            \x20       out.append('%d %d' % (tb.probe_wdl(b), tb.probe_dtz(b)))\n\
            \x20   except (KeyError, chess.syzygy.MissingTableError):\n\
            \x20       out.append('none none')\n\
            print('\\n'.join(out))\n";
        let out = std::process::Command::new("python3")
            .args(["-c", script])
            .arg(shared("syzygy"))
            .arg(&list)
            .output()
            .expect("python3");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| {
                let (w, d) = l.split_once(' ').unwrap();
                (w.parse().ok(), d.parse().ok())
            })
            .collect()
    }

    /// WDL (as just after a capture or pawn move: python-chess ignores the
    /// 50-move counter) and DTZ of kibitz and python-chess on 2,700 random
    /// positions of each of the 38 shared tables (102,600; both sides to
    /// move; en-passant squares where both sides have pawns).
    #[cfg(feature = "python-chess")]
    #[test]
    fn probes_agree_with_python_chess_on_every_table() {
        use std::fmt::Write as _;
        let tb = tables();
        let mut rng = Rng::new(37);
        let mut fens = String::new();
        let mut ours = Vec::new();
        let mut with_ep = 0;
        for material in materials() {
            let mut drawn = 0;
            while drawn < 2700 {
                let Some(pos) = random_position(&material, &mut rng) else { continue };
                drawn += 1;
                with_ep += usize::from(pos.ep_square().is_some());
                writeln!(fens, "{}", pos.fen()).unwrap();
                let wdl = tb.probe_wdl_after_zeroing(&pos).map(|w| w.value());
                ours.push((pos.fen(), wdl, tb.probe_dtz(&pos)));
            }
        }
        let dir = TempDir::new("syzygy-python");
        let theirs = python_chess_probes(&fens, &dir);
        assert_eq!(theirs.len(), ours.len());
        let mut differ = Vec::new();
        let mut kinds = [0usize; 5];
        for ((fen, wdl, dtz), (w, d)) in ours.iter().zip(&theirs) {
            if (*w, *d) != (*wdl, *dtz) {
                differ.push(format!("{fen}: kibitz {wdl:?} {dtz:?}, python-chess {w:?} {d:?}"));
            }
            if let Some(w) = w {
                kinds[(w + 2) as usize] += 1;
            }
        }
        eprintln!(
            "{} positions of {} tables ({with_ep} with an en-passant square): {} wins, {} cursed \
             wins, {} draws, {} blessed losses, {} losses; {} differ",
            ours.len(),
            materials().len(),
            kinds[4],
            kinds[3],
            kinds[2],
            kinds[1],
            kinds[0],
            differ.len()
        );
        assert!(kinds.iter().all(|&k| k > 0) && with_ep > 500, "{kinds:?} {with_ep}");
        assert!(
            differ.is_empty(),
            "{} of {} differ:\n{}",
            differ.len(),
            ours.len(),
            differ.join("\n")
        );
    }

    /// Every position of the shared real games within the tables (read by
    /// python-chess, the 50-move counter set to zero as its probe ignores
    /// it): kibitz's WDL and DTZ are python-chess's.
    #[cfg(feature = "python-chess")]
    #[test]
    fn probes_agree_with_python_chess_on_the_shared_games() {
        let dir = TempDir::new("syzygy-games");
        let mut pgn = Vec::new();
        for entry in std::fs::read_dir(shared("pgn/real")).unwrap() {
            let path = entry.unwrap().path();
            if path.to_string_lossy().ends_with(".pgn.zst") {
                let bytes = std::fs::read(&path).unwrap();
                pgn.extend(zstd::decode_all(&bytes[..]).unwrap());
                pgn.extend(b"\n\n");
            }
        }
        let games = dir.path("games.pgn");
        std::fs::write(&games, &pgn).unwrap();
        // The positions of 5 pieces or fewer, without castling rights.
        let script = "import sys, chess, chess.pgn\n\
            f = open(sys.argv[1], encoding='latin-1')\n\
            seen = set()\n\
            while True:\n\
            \x20   g = chess.pgn.read_game(f)\n\
            \x20   if g is None: break\n\
            \x20   b = g.board()\n\
            \x20   for m in g.mainline_moves():\n\
            \x20       b.push(m)\n\
            \x20       if chess.popcount(b.occupied) <= 5 and not b.castling_rights:\n\
            \x20           b.halfmove_clock = 0\n\
            \x20           seen.add(b.fen())\n\
            print('\\n'.join(sorted(seen)))\n";
        let out = std::process::Command::new("python3")
            .args(["-c", script])
            .arg(&games)
            .output()
            .expect("python3");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let fens = String::from_utf8(out.stdout).unwrap();
        let theirs = python_chess_probes(&fens, &dir);
        let tb = tables();
        let (mut probed, mut differ) = (0, Vec::new());
        for (fen, (w, d)) in fens.lines().zip(&theirs) {
            let pos = Position::from_fen(fen).unwrap();
            let ours = (tb.probe_wdl_after_zeroing(&pos).map(|w| w.value()), tb.probe_dtz(&pos));
            probed += usize::from(w.is_some());
            if ours != (*w, *d) {
                differ.push(format!("{fen}: kibitz {ours:?}, python-chess {:?}", (w, d)));
            }
        }
        eprintln!(
            "{} positions of 5 pieces or fewer in the shared games, {probed} within the tables; {} \
             differ",
            theirs.len(),
            differ.len()
        );
        assert!(probed > 100, "{probed}");
        assert!(differ.is_empty(), "{}", differ.join("\n"));
    }

    /// The search with the tables converts a won ending to mate and holds a
    /// drawn one: each side plays the searched move, and the tables follow
    /// the game.
    #[test]
    fn the_search_converts_a_win_and_holds_a_draw() {
        let tb = std::sync::Arc::new(tables());
        let mut searcher = Searcher::new(16);
        searcher.set_tablebases(Some(tb.clone()));
        // King and rook against king: mate, well within the 50-move rule.
        let mut pos = Position::from_fen("8/8/8/4k3/8/8/8/R3K3 w - - 0 1").unwrap();
        let mut plies = 0;
        while pos.has_legal_moves() && plies < 200 {
            let r = searcher.search(&mut pos, &Limits::depth(6), |_| {});
            if pos.side_to_move() == Color::White {
                assert!(r.score >= WIN_BOUND, "ply {plies}: {} scores {}", pos.fen(), r.score);
                assert!(r.tb_hits > 0);
            }
            pos.do_move(r.best.unwrap());
            plies += 1;
        }
        assert!(
            pos.in_check() && !pos.has_legal_moves(),
            "no mate after {plies} plies: {}",
            pos.fen()
        );
        // Within the 50-move rule (a won ending's moves are ranked by it:
        // the search picks among those that zero the counter in time).
        assert!(plies < 100, "{plies} plies to mate with king and rook");

        // Rook against rook: a draw the side to move keeps, ply after ply.
        let mut pos = Position::from_fen("8/8/2k5/8/8/5r2/8/1K1R4 w - - 0 1").unwrap();
        for ply in 0..40 {
            let r = searcher.search(&mut pos, &Limits::depth(6), |_| {});
            assert_eq!(r.score, 0, "ply {ply}: {}", pos.fen());
            pos.do_move(r.best.unwrap());
            let after = tb.probe_wdl(&pos);
            assert!(
                after.is_none_or(|w| w == TbWdl::Draw),
                "ply {ply}: {} is {after:?}",
                pos.fen()
            );
        }

        // Six pieces: the captures that enter the tables are probed in the
        // tree, and only with tables.
        let fen = "4k2r/8/8/3p4/8/8/8/2BRK3 w - - 0 1";
        let mut pos = Position::from_fen(fen).unwrap();
        let with = searcher.search(&mut pos, &Limits::depth(8), |_| {});
        assert!(with.tb_hits > 0);
        let mut plain = Searcher::new(16);
        assert_eq!(plain.search(&mut pos, &Limits::depth(8), |_| {}).tb_hits, 0);
    }

    /// annotate labels the positions within the tables by them (flagged,
    /// scored as the tables say, the best move keeping the result), and
    /// relabelling with the tables alone keeps every other label as it was.
    #[test]
    fn annotate_and_relabel_take_the_tables_labels() {
        let dir = TempDir::new("syzygy-annotate");
        let tb_path = shared("syzygy");
        let tb = tables();
        let epd = dir.path("p.epd");
        let fens = [
            "8/8/8/4k3/8/8/8/R3K3 w - - 0 1",
            "8/8/8/4k3/8/8/8/R3K3 b - - 0 1",
            "8/8/3k4/8/3r4/8/3R4/3K4 w - - 0 1",
            "8/8/8/8/3k4/8/8/KBBn4 w - - 0 1",
            "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
        ];
        std::fs::write(&epd, fens.map(|f| format!("{}\n", &f[..f.len() - 4])).concat()).unwrap();
        let kbz = dir.path("p.kbz");
        let (code, out, err) = analyse_with_tables(&epd, &kbz, &tb_path, 4);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("38 WDL and 38 DTZ tables, up to 5 pieces"), "{out}");
        assert!(out.contains("4 labels from the tables"), "{out}");
        let (_, games) = kibitz::read_all(&kbz).unwrap();
        assert_eq!(games.len(), fens.len());
        for g in &games {
            kibitz::walk(g, |step| {
                let Some(label) = step.label else { return };
                let answer = tb.answer(step.pos);
                let flagged = label.flags & kibitz::LABEL_TABLEBASE != 0;
                assert_eq!(flagged, answer.is_some(), "{}", step.pos.fen());
                let Some(answer) = answer else { return };
                let expected = match answer.wdl {
                    TbWdl::Win => kibitz::TB_WIN,
                    TbWdl::Loss => -kibitz::TB_WIN,
                    TbWdl::CursedWin => kibitz::CURSED_WIN,
                    TbWdl::BlessedLoss => -kibitz::CURSED_WIN,
                    TbWdl::Draw => 0,
                };
                assert_eq!(i32::from(label.score), expected, "{}", step.pos.fen());
                let cursed = label.flags & kibitz::LABEL_TB_50_MOVE != 0;
                assert_eq!(cursed, matches!(answer.wdl, TbWdl::CursedWin | TbWdl::BlessedLoss));
                // The best move keeps the result: the other side is left
                // with its opposite.
                let mut after = step.pos.clone();
                after.do_move(step.best.unwrap());
                let kept = tb.probe_wdl(&after).map(TbWdl::flip);
                assert!(
                    kept.is_none() || kept == Some(answer.wdl) || after.rule50() == 0,
                    "{}: {:?} after the best move, {:?} before",
                    step.pos.fen(),
                    kept,
                    answer.wdl
                );
            })
            .unwrap();
        }

        // The tables alone over the same labels, searched without them:
        // those within the tables are rewritten, the others kept.
        let plain = dir.path("plain.kbz");
        let (code, _, err) =
            kibitz(&["annotate", s(&epd), "-o", s(&plain), "--depth", "4", "--preset", "analysis"]);
        assert_eq!(code, 0, "{err}");
        let rescored = dir.path("rescored.kbz");
        let (code, out, err) = kibitz(&[
            "annotate",
            s(&plain),
            "-o",
            s(&rescored),
            "--tables-only",
            "--syzygy",
            s(&tb_path),
        ]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("4 labels from the tables"), "{out}");
        assert!(out.contains("1 kept"), "{out}");
        let (_, before) = kibitz::read_all(&plain).unwrap();
        let (_, after) = kibitz::read_all(&rescored).unwrap();
        let (_, tabled) = kibitz::read_all(&kbz).unwrap();
        for ((b, a), t) in before.iter().zip(&after).zip(&tabled) {
            let in_tables = t.labels[0].flags & kibitz::LABEL_TABLEBASE != 0;
            if in_tables {
                assert_eq!(a.labels[0].score, t.labels[0].score);
                assert_eq!(a.labels[0].flags, t.labels[0].flags);
            } else {
                assert_eq!(a.labels, b.labels, "a label outside the tables is kept");
            }
        }
        // Without tables, --tables-only is refused.
        let (code, _, err) = crate::util::kibitz_env(
            &["annotate", s(&plain), "-o", s(&dir.path("x.kbz")), "--tables-only"],
            &[("KIBITZ_SYZYGY", "")],
        );
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("--tables-only needs endgame tables"), "{err}");
    }

    /// Self-play with the tables ends the games that enter them with their
    /// result, as its own ending, counted in the summary.
    #[test]
    fn selfplay_ends_games_by_the_tables() {
        let dir = TempDir::new("syzygy-selfplay");
        let out_path = dir.path("sp.kbz");
        let tb_path = shared("syzygy");
        let (code, out, err) = kibitz(&[
            "selfplay",
            "--games",
            "24",
            "--nodes",
            "1500",
            "--seed",
            "5",
            "-o",
            s(&out_path),
            "--syzygy",
            s(&tb_path),
        ]);
        assert_eq!(code, 0, "{err}");
        let (_, games) = kibitz::read_all(&out_path).unwrap();
        let tb = tables();
        let mut ended = 0;
        for g in &games {
            if g.ending != kibitz::Ending::Tablebase {
                continue;
            }
            ended += 1;
            let mut last = None;
            kibitz::walk(g, |step| {
                if step.played.is_none() {
                    last = Some(step.pos.clone());
                }
            })
            .unwrap();
            let pos = last.unwrap();
            let wdl = tb
                .probe_wdl(&pos)
                .or_else(|| tb.probe_wdl_after_zeroing(&pos))
                .expect("the final position is in the tables");
            let white = if pos.side_to_move() == Color::White { wdl } else { wdl.flip() };
            assert_eq!(i32::from(g.result), white.outcome() + 1, "{}", pos.fen());
        }
        assert!(ended > 0, "no game of 24 entered the tables:\n{out}");
        assert!(out.contains(&format!("{ended} tablebase")), "{out}");
        assert!(
            out.contains(&format!(
                "{ended} game{} ended by the tables",
                if ended == 1 { "" } else { "s" }
            )),
            "{out}"
        );
    }

    /// A set with a DTZ table missing and one truncated: each is named,
    /// and the positions they would answer get no answer from the tables
    /// rather than a wrong one (the search labels them).
    #[test]
    fn missing_and_truncated_tables_are_named_and_give_no_wrong_answer() {
        let dir = TempDir::new("syzygy-damaged");
        let set = dir.path("tb");
        std::fs::create_dir(&set).unwrap();
        for entry in std::fs::read_dir(shared("syzygy")).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.ends_with(".rtbw") || name.ends_with(".rtbz") {
                std::fs::copy(&path, set.join(&name)).unwrap();
            }
        }
        std::fs::remove_file(set.join("KRvK.rtbz")).unwrap();
        let bytes = std::fs::read(set.join("KQvK.rtbz")).unwrap();
        std::fs::write(set.join("KQvK.rtbz"), &bytes[..bytes.len() - 10]).unwrap();
        let tb = Tablebases::open(set.to_str().unwrap()).unwrap();
        let warnings = tb.warnings().join("\n");
        assert!(warnings.contains("KQvK.rtbz") && warnings.contains("truncated"), "{warnings}");
        assert!(warnings.contains("no DTZ table beside the WDL table of KQvK, KRvK"), "{warnings}");
        assert_eq!((tb.wdl_tables(), tb.dtz_tables()), (38, 36));
        let krk = Position::from_fen("8/8/8/3k4/8/8/1R6/K7 w - - 0 1").unwrap();
        assert_eq!(tb.probe_wdl_after_zeroing(&krk), Some(TbWdl::Win), "WDL still answers");
        assert_eq!(tb.probe_dtz(&krk), None);
        assert_eq!(tb.answer(&krk), None);

        // annotate names them, and labels those positions by the search.
        let epd = dir.path("p.epd");
        std::fs::write(&epd, "8/8/8/3k4/8/8/1R6/K7 w - -\n8/8/8/8/3k4/8/8/KBBn4 w - -\n").unwrap();
        let kbz = dir.path("p.kbz");
        let (code, out, err) = analyse_with_tables(&epd, &kbz, &set, 4);
        assert_eq!(code, 0, "{err}");
        assert!(err.contains("warning: ") && err.contains("KQvK.rtbz"), "{err}");
        assert!(out.contains("1 label from the tables"), "{out}");
        let (_, games) = kibitz::read_all(&kbz).unwrap();
        assert_eq!(games[0].labels[0].flags & kibitz::LABEL_TABLEBASE, 0);
        assert!(games[0].labels[0].score > 300, "the search finds the rook up");
        assert_ne!(games[1].labels[0].flags & kibitz::LABEL_TABLEBASE, 0);
    }

    /// Won endings played out by kibitz at depth 4 against a perfect
    /// defender (the tables' move: the longest way to the next capture or
    /// pawn move): how the game ends.
    #[derive(Debug, PartialEq, Eq)]
    enum Playout {
        /// Mate, or a capture or promotion into another ending still won.
        Converted,
        /// The 50-move rule, or the win let slip.
        Failed,
    }

    /// The perfect defender's move: one that does not lose if there is
    /// one, else the one that puts off the next capture or pawn move
    /// longest (ties: the first in UCI order).
    fn defend(pos: &Position, tb: &Tablebases) -> Move {
        let moves = pos.legal_moves();
        *moves
            .iter()
            .min_by_key(|&&m| {
                let mut after = pos.clone();
                after.do_move(m);
                let wdl = tb.probe_wdl_after_zeroing(&after).map_or(0, |w| w.value());
                (wdl, -tb.probe_dtz(&after).unwrap_or(0), pos.uci(m))
            })
            .unwrap()
    }

    /// Positions of `material` won for White to move among `draws` drawn,
    /// the longest to the next capture or pawn move first.
    fn won_positions(
        material: &str,
        draws: usize,
        rng: &mut Rng,
        tb: &Tablebases,
    ) -> Vec<(i32, Position)> {
        let mut won: Vec<(i32, Position)> = Vec::new();
        let mut drawn = 0;
        while drawn < draws {
            let Some(pos) = random_position(material, rng) else { continue };
            drawn += 1;
            if pos.side_to_move() == Color::White && tb.probe_wdl(&pos) == Some(TbWdl::Win) {
                won.push((tb.probe_dtz(&pos).unwrap(), pos));
            }
        }
        won.sort_by_key(|(dtz, p)| (-dtz, p.fen()));
        won
    }

    fn play_out(pos: &Position, searcher: &mut Searcher, tb: &Tablebases) -> Playout {
        let mut pos = Position::from_fen(&pos.fen()).unwrap();
        let attacker = pos.side_to_move();
        let material = pos.material_key();
        searcher.new_game();
        for _ in 0..400 {
            if !pos.has_legal_moves() {
                return if pos.in_check() && pos.side_to_move() != attacker {
                    Playout::Converted
                } else {
                    Playout::Failed
                };
            }
            if pos.rule50() >= 100 {
                return Playout::Failed;
            }
            let m = if pos.side_to_move() == attacker {
                searcher.search(&mut pos, &Limits::depth(4), |_| {}).best.unwrap()
            } else {
                defend(&pos, tb)
            };
            pos.do_move(m);
            if pos.material_key() != material {
                let wdl = tb.probe_wdl_after_zeroing(&pos).map(|w| w.value());
                let still_won =
                    if pos.side_to_move() == attacker { wdl == Some(2) } else { wdl == Some(-2) };
                let bare = pos.occupied().count() == 2;
                return if still_won && !bare { Playout::Converted } else { Playout::Failed };
            }
        }
        Playout::Failed
    }

    /// Won positions of six endings (three of each, the longest to the
    /// next capture or pawn move among 400 drawn) played out: with tables,
    /// every one is converted within the 50-move rule.
    #[test]
    fn won_endings_are_converted_against_a_perfect_defender() {
        let tb = std::sync::Arc::new(tables());
        let mut rng = Rng::new(5);
        let mut with = Searcher::new(16);
        with.set_tablebases(Some(tb.clone()));
        let mut without = Searcher::new(16);
        let mut report = Vec::new();
        let mut failed_with = Vec::new();
        for material in ["KBNvK", "KQvKR", "KQvKB", "KBBvKN", "KRBvKR", "KPvK"] {
            let won = won_positions(material, 400, &mut rng, &tb);
            let (mut converted_with, mut converted_without) = (0, 0);
            for (dtz, pos) in won.iter().take(3) {
                if play_out(pos, &mut with, &tb) == Playout::Converted {
                    converted_with += 1;
                } else {
                    failed_with.push(format!("{} (DTZ {dtz})", pos.fen()));
                }
                converted_without +=
                    usize::from(play_out(pos, &mut without, &tb) == Playout::Converted);
            }
            report.push(format!(
                "{material}: {converted_with}/3 with tables, {converted_without}/3 without"
            ));
        }
        eprintln!("{}", report.join("; "));
        assert!(failed_with.is_empty(), "not converted with tables: {}", failed_with.join(", "));
    }

    /// Won positions of the endings a shallow search used to shuffle in
    /// (two of each, the longest to the next capture or pawn move among 300
    /// drawn), played out to mate at depths 1 and 3 against the perfect
    /// defender above: with the root's moves ranked by DTZ, every one is
    /// mated, no position occurs twice, and the 50-move counter stays
    /// under 100 (a capture or promotion goes on into the next ending).
    #[test]
    fn won_endings_are_mated_at_every_depth_without_a_repetition() {
        let tb = std::sync::Arc::new(tables());
        let mut rng = Rng::new(9);
        let mut searcher = Searcher::new(16);
        searcher.set_tablebases(Some(tb.clone()));
        let mut failed = Vec::new();
        let mut longest = 0;
        for material in ["KBNvK", "KRvKP", "KRBvKR", "KQvKQ", "KPvKP", "KNvKP", "KRvKR"] {
            let won = won_positions(material, 300, &mut rng, &tb);
            for (_, start) in won.iter().take(2) {
                for depth in [1, 3] {
                    match mate_out(start, &mut searcher, &tb, depth) {
                        Ok(plies) => longest = longest.max(plies),
                        Err(why) => failed.push(format!("{} at depth {depth}: {why}", start.fen())),
                    }
                }
            }
        }
        eprintln!("longest game {longest} plies");
        assert!(failed.is_empty(), "not mated: {}", failed.join("; "));
    }

    /// Plays `start` out to mate, the winner searching to `depth`, the
    /// defender perfect; the plies to mate, or why it was not.
    fn mate_out(
        start: &Position,
        searcher: &mut Searcher,
        tb: &Tablebases,
        depth: i32,
    ) -> Result<usize, String> {
        let mut pos = Position::from_fen(&start.fen()).unwrap();
        let attacker = pos.side_to_move();
        let mut seen = std::collections::HashSet::new();
        searcher.new_game();
        for ply in 0..600 {
            if !seen.insert(pos.key()) {
                return Err(format!("{} occurred twice", pos.fen()));
            }
            if !pos.has_legal_moves() {
                let mated = pos.in_check() && pos.side_to_move() != attacker;
                return if mated { Ok(ply) } else { Err(format!("{} is no mate", pos.fen())) };
            }
            if pos.rule50() >= 100 {
                return Err(format!("the 50-move rule at {}", pos.fen()));
            }
            let m = if pos.side_to_move() == attacker {
                searcher.search(&mut pos, &Limits::depth(depth), |_| {}).best.unwrap()
            } else {
                defend(&pos, tb)
            };
            pos.do_move(m);
            let wdl = tb.probe_wdl_after_zeroing(&pos).map(|w| w.value());
            let won = if pos.side_to_move() == attacker { wdl == Some(2) } else { wdl == Some(-2) };
            if !won && pos.occupied().count() > 2 && pos.has_legal_moves() {
                return Err(format!("the win given away at {}", pos.fen()));
            }
        }
        Err("no mate within 600 plies".into())
    }

    /// The analysis of a game that gives a tablebase win away: the move is
    /// a blunder, the PGN export and the report say what the tables say.
    #[test]
    fn a_tablebase_win_given_away_is_a_blunder_and_marked() {
        let dir = TempDir::new("syzygy-analysis");
        let pgn = dir.path("g.pgn");
        std::fs::write(
            &pgn,
            "[Event \"t\"]\n[White \"a\"]\n[Black \"b\"]\n[Result \"1/2-1/2\"]\n[SetUp \"1\"]\n\
             [FEN \"2k5/8/8/8/8/8/8/3QK3 w - - 0 1\"]\n\n1. Qd7+ Kxd7 1/2-1/2\n",
        )
        .unwrap();
        let kbz = dir.path("g.kbz");
        let tb = shared("syzygy");
        let (code, _, err) = analyse_with_tables(&pgn, &kbz, &tb, 6);
        assert_eq!(code, 0, "{err}");
        let out = dir.path("g-out.pgn");
        let (code, _, err) = kibitz(&["export", s(&kbz), "--format", "pgn", "-o", s(&out)]);
        assert_eq!(code, 0, "{err}");
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(text.contains("1. Qd7+??"), "{text}");
        assert!(text.contains("{ Tablebase: draw }"), "{text}");
        let html = dir.path("g.html");
        let (code, _, err) = kibitz(&["report", s(&kbz), "-o", s(&html)]);
        assert_eq!(code, 0, "{err}");
        let page = std::fs::read_to_string(&html).unwrap();
        assert!(page.contains("Tablebase after 1. Qd7+: draw"));
    }

    /// `selfplay --tables-play-out` from a book of won positions, with the
    /// default resignation and draw adjudication: every game is played to
    /// mate by the side the tables say wins (none resigned or ended by the
    /// tables), and no position occurs twice.
    #[test]
    fn selfplay_plays_won_endings_out_to_mate() {
        let dir = TempDir::new("syzygy-play-out");
        let tb = std::sync::Arc::new(tables());
        let mut rng = Rng::new(13);
        let mut book = String::new();
        for material in ["KBNvK", "KRvKP", "KQvKR", "KPvKP"] {
            for (_, pos) in won_positions(material, 200, &mut rng, &tb).iter().take(2) {
                let fen = pos.fen();
                book.push_str(&fen.split(' ').take(4).collect::<Vec<_>>().join(" "));
                book.push('\n');
            }
        }
        let book_path = dir.path("won.epd");
        std::fs::write(&book_path, &book).unwrap();
        let out_path = dir.path("sp.kbz");
        let tb_path = shared("syzygy");
        let (code, out, err) = kibitz(&[
            "selfplay",
            "--games",
            "16",
            "--depth",
            "1",
            "--book",
            s(&book_path),
            "--random-plies",
            "0",
            "--opening-score",
            "0",
            "--tables-play-out",
            "--syzygy",
            s(&tb_path),
            "-o",
            s(&out_path),
        ]);
        assert_eq!(code, 0, "{err}");
        let (_, games) = kibitz::read_all(&out_path).unwrap();
        assert_eq!(games.len(), 16, "{out}");
        for g in &games {
            assert_eq!(g.ending, kibitz::Ending::Checkmate, "{out}");
            let (mut first, mut last) = (None, None);
            let mut seen = std::collections::HashSet::new();
            kibitz::walk(g, |step| {
                first.get_or_insert_with(|| step.pos.side_to_move());
                assert!(seen.insert(step.pos.key()), "{} occurred twice", step.pos.fen());
                last = Some(step.pos.clone());
            })
            .unwrap();
            let winner = first.unwrap();
            let mated = last.unwrap();
            assert!(mated.is_checkmate() && mated.side_to_move() != winner, "{}", mated.fen());
            let white_won = winner == Color::White;
            assert_eq!(g.result, if white_won { 2 } else { 0 }, "{}", mated.fen());
        }
    }

    /// Self-play with tables writes the same file on one thread and two.
    #[test]
    fn selfplay_with_tables_is_the_same_on_one_and_two_threads() {
        let dir = TempDir::new("syzygy-threads");
        let tb = shared("syzygy");
        let mut files = Vec::new();
        for threads in ["1", "2"] {
            let out = dir.path(&format!("sp{threads}.kbz"));
            let (code, _, err) = kibitz(&[
                "selfplay",
                "--games",
                "12",
                "--nodes",
                "1000",
                "--seed",
                "9",
                "--threads",
                threads,
                "--syzygy",
                s(&tb),
                "-o",
                s(&out),
            ]);
            assert_eq!(code, 0, "{err}");
            files.push(std::fs::read(&out).unwrap());
        }
        assert!(files[0] == files[1], "one thread and two wrote different files");
    }
}
