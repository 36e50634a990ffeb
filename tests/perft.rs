//! Perft against published counts.
//!
//! The default run checks counts written here (small facts from the
//! chessprogramming wiki positions, the Ethereal suites and python-chess's
//! tricky positions). With `--features corpus` every suite of
//! `../shared/data/perft` runs in full, up to 10^8 nodes per count.

use kibitz::{CastlingMode, FenOptions, Position, perft};

fn check(fen: &str, chess960: bool, counts: &[u64]) {
    let options = FenOptions {
        castling_mode: chess960.then_some(CastlingMode::Chess960),
        ..FenOptions::default()
    };
    let mut pos = Position::from_fen_with(fen.as_bytes(), options).unwrap();
    for (i, &expected) in counts.iter().enumerate() {
        let depth = i as u32 + 1;
        assert_eq!(perft::perft(&mut pos, depth), expected, "{fen} depth {depth}");
        if expected < 1_000_000 {
            assert_eq!(
                perft::perft_make_leaves(&mut pos, depth),
                expected,
                "{fen} depth {depth} (make leaves)"
            );
        }
    }
}

#[test]
fn standard_positions() {
    let cases: &[(&str, &[u64])] = &[
        (
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            &[20, 400, 8902, 197281, 4865609],
        ),
        (
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            &[48, 2039, 97862, 4085603],
        ),
        ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", &[14, 191, 2812, 43238, 674624, 11030083]),
        (
            "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
            &[6, 264, 9467, 422333],
        ),
        (
            "r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1",
            &[6, 264, 9467, 422333],
        ),
        ("rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", &[44, 1486, 62379, 2103487]),
        (
            "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
            &[46, 2079, 89890, 3894594],
        ),
        ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", &[26, 568, 13744, 314346]),
    ];
    for (fen, counts) in cases {
        check(fen, false, counts);
    }
}

#[test]
fn en_passant_promotion_and_double_check() {
    // (FEN, depth, nodes) from chess-epds perft.epd and the Ferdy
    // double-check set.
    let cases: &[(&str, u32, u64)] = &[
        ("8/8/1k6/2b5/2pP4/8/5K2/8 b - d3 0 1", 6, 1440467),
        ("3k4/3p4/8/K1P4r/8/8/8/8 b - - 0 1", 6, 1134888),
        ("8/8/8/8/k1p4R/8/3P4/3K4 w - - 0 1", 6, 1134888),
        ("8/8/4k3/8/2p5/8/B2P2K1/8 w - - 0 1", 6, 1015133),
        ("2K2r2/4P3/8/8/8/8/8/3k4 w - - 0 1", 6, 3821001),
        ("8/P1k5/K7/8/8/8/8/8 w - - 0 1", 6, 92683),
        ("K1k5/8/P7/8/8/8/8/8 w - - 0 1", 6, 2217),
        ("8/k1P5/8/1K6/8/8/8/8 w - - 0 1", 7, 567584),
        ("r3k2r/1b4bq/8/8/8/8/7B/R3K2R w KQkq - 0 1", 4, 1274206),
        ("r3k2r/8/3Q4/8/8/5q2/8/R3K2R b KQkq - 0 1", 4, 1720476),
        ("r3k2r/8/5Q2/8/8/3q4/8/R3K2R w KQkq - 0 1", 4, 1720476),
        ("3q2k1/5p1p/p1Q3p1/8/2n3R1/1P2P3/3K3N/2R5 w - - 0 1", 4, 178499),
        ("2r2r1k/1pp3bp/p7/6qQ/3Pp3/PPB3P1/3K4/1NR2n1R w - - 0 1", 4, 253517),
        ("r4rk1/1bp5/pb1p1q1N/1p4pn/3nP3/1BP3BP/PP3PP1/RN1QR1K1 b - - 0 1", 4, 228935),
    ];
    for &(fen, depth, nodes) in cases {
        let mut pos = Position::from_fen(fen).unwrap();
        assert_eq!(perft::perft(&mut pos, depth), nodes, "{fen}");
    }
}

#[test]
fn chess960_positions() {
    // X-FEN castling with inner rooks (python-chess tricky.perft) and
    // Shredder-FEN positions from Ethereal's fischer960.epd.
    let cases: &[(&str, &[u64])] = &[
        ("r1k1r2q/p1ppp1pp/8/8/8/8/P1PPP1PP/R1K1R2Q w KQkq - 0 1", &[23, 522, 12333, 285754]),
        ("r1k2r1q/p1ppp1pp/8/8/8/8/P1PPP1PP/R1K2R1Q w KQkq - 0 1", &[28, 738, 20218, 541480]),
        ("8/8/8/4B2b/6nN/8/5P2/2R1K2k w Q - 0 1", &[34, 318, 9002, 118388]),
        ("2r5/8/8/8/8/8/6PP/k2KR3 w K - 0 1", &[17, 242, 3931, 57700]),
        ("4r3/3k4/8/8/8/8/6PP/qR1K1R2 w KQ - 0 1", &[19, 628, 12858, 405636]),
        ("r2r3k/p7/3p4/8/8/P6P/8/R3K2R b KQq - 0 1", &[14, 206, 3672, 64639, 1320962]),
        (
            "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
            &[21, 528, 12189, 326672],
        ),
        (
            "2nnrbkr/p1qppppp/8/1ppb4/6PP/3PP3/PPP2P2/BQNNRBKR w HEhe - 1 9",
            &[21, 807, 18002, 667366],
        ),
        (
            "q1brnkrb/p1pppppp/n7/1p6/P7/3P1P2/QPP1P1PP/1NBRNKRB w GDgd - 0 9",
            &[32, 827, 26106, 718243],
        ),
        (
            "nb1r1nkr/ppp1ppp1/2bp4/7p/3P2qP/P6R/1PP1PPP1/NBQRBNK1 w Dhd - 1 9",
            &[38, 1691, 60060, 2526992],
        ),
        (
            "bbr1qk1n/1ppppp1p/2n5/p7/P7/1P2P3/2PP1PrP/1BRNQKRN w GCc - 0 9",
            &[18, 520, 10680, 304462],
        ),
    ];
    for (fen, counts) in cases {
        check(fen, true, counts);
    }
}

#[test]
fn tricky_alignments() {
    // python-chess tricky.perft: impossible checker alignments and en
    // passant next to pins.
    let cases: &[(&str, &[u64])] = &[
        ("8/ppp3p1/8/8/3p4/5Q2/1ppp2K1/brk4n w - - 0 1", &[27, 390, 9354, 134167]),
        ("8/6kR/8/8/8/bq6/1rqqqqqq/K1nqnbrq b - - 0 1", &[7, 52, 4593, 50268]),
        ("3R4/8/q4k2/2B5/1NK5/3b4/8/8 w - - 0 1", &[4, 125, 2854]),
        ("2Nq4/2K5/1b6/8/7R/3k4/7P/8 w - - 0 1", &[3, 81, 1217]),
        ("5R2/2P5/8/4k3/8/3rK2r/8/8 w - - 0 1", &[2, 56, 1030]),
        ("8/8/8/1k6/3Pp3/8/8/4KQ2 b - d3 0 1", &[6, 121, 711]),
        ("1b1k4/8/8/1rPpK3/8/8/8/8 w - d6 0 1", &[5, 100, 555]),
        ("rnbqk1nr/bb3p1p/1q2r3/2pPp3/3P4/7P/1PP1NpPP/R1BQKBNR w KQkq c6 0 1", &[2, 92, 2528]),
    ];
    for (fen, counts) in cases {
        check(fen, false, counts);
    }
}

/// Depth 6 on every 96th position of Ethereal's fischer960.epd
/// (3.5 * 10^9 nodes): `cargo test --release -- --ignored`.
#[test]
#[ignore]
fn chess960_depth_6_sample() {
    let cases: &[(&str, u64)] = &[
        ("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9", 227689589),
        ("bq1brnkr/1p1ppp1p/1np5/p5p1/8/1N5P/PPPPPPP1/BQ1BRNKR w HEhe - 0 9", 273795898),
        ("b1nbrknr/1qppp1pp/p4p2/1p6/6P1/P2NP3/1PPP1P1P/BQ1BRKNR w HEhe - 1 9", 389603029),
        ("bqn1rkrn/p1p2ppp/1p1p4/4p3/3PP2b/8/PPP2PPP/BQNBRKRN w GEge - 2 9", 515838333),
        ("bqrb2k1/pppppppr/5nnp/8/3P1P2/4P1N1/PPP3PP/BQRBN1KR w HCc - 1 9", 295682250),
        ("bq1bnknr/pprppp1p/8/2p3p1/4PPP1/8/PPPP3P/BQRBNKNR w HCh - 0 9", 250988458),
        ("bq1b1krn/pp1ppppp/3n4/2r5/3p3N/6N1/PPP1PPPP/BQRB1KR1 w GCg - 2 9", 647165916),
        ("bqrbknnr/ppp1p2p/8/3p1p2/5p2/P3N2P/1PPPP1P1/BQRBK1NR w HChc - 0 9", 113660536),
        ("b1rbknrn/qpp1ppp1/p6p/3p4/2P5/1P1P1P2/P3P1PP/BQRBKNRN w GCgc - 0 9", 611986786),
        ("bqkr1rnn/1ppp1ppp/p4b2/4p3/P7/3PP2N/1PP2PPP/BQRBKR1N w FC - 3 9", 197806842),
    ];
    for &(fen, nodes) in cases {
        let mut pos = Position::from_fen_960(fen).unwrap();
        assert_eq!(perft::perft(&mut pos, 6), nodes, "{fen}");
    }
}

#[cfg(feature = "corpus")]
mod corpus {
    use kibitz::{CastlingMode, FenOptions, Position, perft};

    use crate::util::shared;

    /// Runs a shared suite; returns the number of (position, depth) pairs.
    fn run_suite(file: &str, chess960: bool, max_nodes: u64, max_depth: u32) -> usize {
        let text = std::fs::read_to_string(shared(file)).unwrap();
        let suite = perft::parse_suite(&text).unwrap();
        let options = FenOptions {
            castling_mode: chess960.then_some(CastlingMode::Chess960),
            ..FenOptions::default()
        };
        let mut pairs = 0;
        let mut failures = Vec::new();
        for entry in &suite {
            let mut pos = Position::from_fen_with(entry.fen.as_bytes(), options)
                .unwrap_or_else(|e| panic!("{file}:{}: {e}", entry.line));
            for &(depth, expected) in &entry.counts {
                if expected >= max_nodes || depth > max_depth {
                    continue;
                }
                pairs += 1;
                let got = perft::perft(&mut pos, depth);
                if got != expected {
                    failures.push(format!(
                        "{file}:{} depth {depth}: expected {expected}, got {got}",
                        entry.line
                    ));
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        pairs
    }

    #[test]
    fn ethereal_standard() {
        assert_eq!(run_suite("perft/ethereal_standard.epd", false, 100_000_000, 99), 741);
    }

    #[test]
    fn chess_epds_perft() {
        assert_eq!(run_suite("perft/chess-epds_perft.epd", false, 100_000_000, 99), 794);
    }

    #[test]
    fn ferdy_double_checks() {
        assert_eq!(
            run_suite("perft/chess-epds_perft-ferdy-double-checks.epd", false, 100_000_000, 99),
            184
        );
    }

    #[test]
    fn python_chess_tricky_in_chess960_mode() {
        assert_eq!(run_suite("perft/python-chess_tricky.perft", true, 100_000_000, 99), 67);
    }

    #[test]
    fn ethereal_fischer960_depth_4() {
        assert_eq!(run_suite("perft/ethereal_fischer960.epd", true, u64::MAX, 4), 3840);
    }
}
