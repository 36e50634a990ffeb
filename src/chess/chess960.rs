//! The 960 start positions of Chess960, numbered as Scharnagl numbers them
//! (518 is the standard position), and double Fischer random starts, where
//! White's and Black's back ranks are drawn apart.
//!
//! ```
//! use kibitz::{Position, chess960};
//!
//! let standard = chess960::start(518, 518);
//! assert_eq!(standard.fen(), Position::startpos().fen());
//! assert_eq!(chess960::back_rank(0), *b"BBQNNRKR");
//! ```

use crate::chess::{fen::FenError, position::Position};

/// Where the two knights stand among the five squares left once the
/// bishops and the queen are placed, by the number's last digit.
const KNIGHTS: [(usize, usize); 10] =
    [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)];

/// The back rank of start position `n` (0 to 959; taken modulo 960), files
/// a to h, as the letters of White's pieces.
pub fn back_rank(n: u32) -> [u8; 8] {
    let n = (n % 960) as usize;
    let mut rank = [0u8; 8];
    // The light-squared bishop on b, d, f or h; the dark-squared one on a,
    // c, e or g.
    rank[2 * (n % 4) + 1] = b'B';
    rank[2 * ((n / 4) % 4)] = b'B';
    let rest = n / 16;
    let place = |rank: &mut [u8; 8], mut k: usize, piece: u8| {
        for square in rank.iter_mut().filter(|s| **s == 0) {
            if k == 0 {
                *square = piece;
                return;
            }
            k -= 1;
        }
    };
    place(&mut rank, rest % 6, b'Q');
    let (first, second) = KNIGHTS[rest / 6];
    // The second knight's index among the five empty squares counts the
    // first knight's square as still empty: place it first.
    place(&mut rank, second, b'N');
    place(&mut rank, first, b'N');
    // The three squares left: rook, king, rook.
    for piece in [b'R', b'K', b'R'] {
        place(&mut rank, 0, piece);
    }
    rank
}

/// The FEN of a start with White's back rank from position `white` and
/// Black's from `black` (the same number for Chess960; two numbers for
/// double Fischer random), full castling rights in Shredder-FEN.
pub fn start_fen(white: u32, black: u32) -> String {
    let (w, b) = (back_rank(white), back_rank(black));
    let rooks = |rank: &[u8; 8], upper: bool| -> String {
        let mut files: Vec<u8> = (0..8u8).filter(|&f| rank[usize::from(f)] == b'R').collect();
        // King side first, as Shredder-FEN writes it.
        files.reverse();
        files.iter().map(|&f| char::from(if upper { b'A' + f } else { b'a' + f })).collect()
    };
    format!(
        "{}/pppppppp/8/8/8/8/PPPPPPPP/{} w {}{} - 0 1",
        String::from_utf8_lossy(&b).to_ascii_lowercase(),
        String::from_utf8_lossy(&w),
        rooks(&w, true),
        rooks(&b, false)
    )
}

/// The start position of [`start_fen`], in Chess960 mode.
pub fn start(white: u32, black: u32) -> Position {
    try_start(white, black).expect("every back rank of the 960 is a legal start")
}

/// The start position of [`start_fen`], or why it is not one (it always
/// is: for callers that do not want a panic path).
pub fn try_start(white: u32, black: u32) -> Result<Position, FenError> {
    Position::from_fen_960(&start_fen(white, black))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Scharnagl's numbering: the standard position is 518, and the first,
    /// last and a few others as published.
    #[test]
    fn numbers_as_scharnagl_gives_them() {
        assert_eq!(&back_rank(518), b"RNBQKBNR");
        assert_eq!(&back_rank(0), b"BBQNNRKR");
        assert_eq!(&back_rank(959), b"RKRNNQBB");
        assert_eq!(&back_rank(1), b"BQNBNRKR");
    }

    /// The 960 ranks are distinct, each a legal start: bishops on both
    /// colors, the king between the rooks.
    #[test]
    fn all_960_are_distinct_and_legal() {
        let mut seen = std::collections::HashSet::new();
        for n in 0..960 {
            let rank = back_rank(n);
            assert!(seen.insert(rank), "{n} repeats");
            let bishops: Vec<usize> = (0..8).filter(|&f| rank[f] == b'B').collect();
            assert_eq!(bishops.len(), 2);
            assert_ne!(bishops[0] % 2, bishops[1] % 2, "{n}: bishops on one color");
            let rooks: Vec<usize> = (0..8).filter(|&f| rank[f] == b'R').collect();
            let king = (0..8).find(|&f| rank[f] == b'K').unwrap();
            assert!(rooks[0] < king && king < rooks[1], "{n}");
            // Double Fischer random: each side's pieces from its own
            // number, castling rights for each side's own rooks.
            let black = (n * 7 + 3) % 960;
            let pos = start(n, black);
            let fen = pos.fen_shredder();
            let (board, rights) = (fen.split(' ').next().unwrap(), fen.split(' ').nth(2).unwrap());
            assert!(board.ends_with(std::str::from_utf8(&rank).unwrap()), "{fen}");
            let black_rank = back_rank(black).to_ascii_lowercase();
            assert!(board.starts_with(std::str::from_utf8(&black_rank).unwrap()), "{fen}");
            assert_eq!(rights.len(), 4, "{fen}");
        }
    }
}
