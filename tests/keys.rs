//! Polyglot keys: the nine test vectors of the Polyglot book format,
//! reproduced from the FEN and by replaying the moves.

use kibitz::Position;

/// (key, FEN, moves from the start position), from the Polyglot book format
/// specification (`../shared/data/polyglot/polyglot_test_vectors.tsv`).
const VECTORS: [(u64, &str, &str); 9] = [
    (0x463b96181691fc9c, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", ""),
    (0x823c9b50fd114196, "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1", "e2e4"),
    (
        0x0756b94461c50fb0,
        "rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 2",
        "e2e4 d7d5",
    ),
    (
        0x662fafb965db29d4,
        "rnbqkbnr/ppp1pppp/8/3pP3/8/8/PPPP1PPP/RNBQKBNR b KQkq - 0 2",
        "e2e4 d7d5 e4e5",
    ),
    (
        0x22a48b5a8e47ff78,
        "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
        "e2e4 d7d5 e4e5 f7f5",
    ),
    (
        0x652a607ca3f242c1,
        "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPPKPPP/RNBQ1BNR b kq - 0 3",
        "e2e4 d7d5 e4e5 f7f5 e1e2",
    ),
    (
        0x00fdd303c946bdd9,
        "rnbq1bnr/ppp1pkpp/8/3pPp2/8/8/PPPPKPPP/RNBQ1BNR w - - 0 4",
        "e2e4 d7d5 e4e5 f7f5 e1e2 e8f7",
    ),
    (
        0x3c8123ea7b067637,
        "rnbqkbnr/p1pppppp/8/8/PpP4P/8/1P1PPPP1/RNBQKBNR b KQkq c3 0 3",
        "a2a4 b7b5 h2h4 b5b4 c2c4",
    ),
    (
        0x5c3f9b829b279560,
        "rnbqkbnr/p1pppppp/8/8/P6P/R1p5/1P1PPPP1/1NBQKBNR b Kkq - 0 4",
        "a2a4 b7b5 h2h4 b5b4 c2c4 b4c3 a1a3",
    ),
];

#[test]
fn polyglot_vectors_from_fen() {
    for (key, fen, _) in VECTORS {
        let pos = Position::from_fen(fen).unwrap();
        assert_eq!(pos.key(), key, "{fen}");
        assert_eq!(pos.compute_key(), key, "{fen}");
    }
}

#[test]
fn polyglot_vectors_by_replay() {
    for (key, fen, moves) in VECTORS {
        let mut pos = Position::startpos();
        for uci in moves.split_whitespace() {
            let m = pos.parse_uci(uci).unwrap();
            assert_eq!(pos.key_after(m), {
                let mut p = pos.clone();
                p.do_move(m);
                p.key()
            });
            pos.do_move(m);
            pos.verify_state().unwrap();
        }
        assert_eq!(pos.key(), key, "{moves}");
        // The spec's FENs list en-passant squares no pawn can take and odd
        // halfmove clocks; the boards agree.
        assert_eq!(pos.epd().split(' ').next(), fen.split(' ').next());
    }
}

/// Every line of the shared key file: game, ply, key and FEN after each ply
/// of the Lichess 2017-05 sample, computed with python-chess.
#[cfg(feature = "corpus")]
#[test]
fn lichess_key_file_positions() {
    use crate::util::shared;
    let bytes = std::fs::read(shared("polyglot/zobrist_keys_lichess-org_database_2017-05.tsv.zst"))
        .unwrap();
    let text = String::from_utf8(zstd::decode_all(&bytes[..]).unwrap()).unwrap();
    let mut checked = 0;
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let fields: Vec<&str> = line.split('\t').collect();
        let key = u64::from_str_radix(fields[2], 16).unwrap();
        let pos = Position::from_fen(fields[3]).unwrap();
        assert_eq!(pos.key(), key, "{line}");
        checked += 1;
    }
    assert_eq!(checked, 21545);
}
