//! HalfKAv2_hm: the inputs of Stockfish 15.1's nets.
//!
//! Each side sees the board from its own king. A piece on a square
//! activates one input of that side's 22,528: the king's bucket (32 of
//! them: the king's square with the board mirrored so that the king stands
//! on files e to h, and seen from the side's own back rank), the piece's
//! plane (own or enemy pawn, knight, bishop, rook, queen, or a king of
//! either color: 11 planes) and its square (mirrored with the king, and
//! flipped for Black).
//!
//! ```
//! use kibitz::{Color, Piece, Square, nnue::feature_index as index};
//!
//! // White's e1 king sees itself in bucket 31's king plane, on e1.
//! let i = index(Color::White, Square::E1, Piece::WhiteKing, Square::E1);
//! assert_eq!(i, 31 * 704 + 640 + 4);
//! // Black sees the position flipped: its e8 king on e1 too.
//! assert_eq!(index(Color::Black, Square::E8, Piece::BlackKing, Square::E8), i);
//! ```

use crate::chess::types::{Color, Piece, Role, Square};

/// The planes of one king bucket: 10 for the pieces other than kings, one
/// for both kings.
pub const PLANES: usize = 11 * 64;

/// The plane of the kings, whichever their color.
const KING_PLANE: usize = 10 * 64;

/// The index of the input a piece `piece` on `sq` activates for side
/// `perspective`, whose king stands on `king`.
#[inline]
pub fn index(perspective: Color, sq: Square, piece: Piece, king: Square) -> usize {
    let k = king.to_usize();
    let orient = ORIENT[perspective.to_usize()][k];
    let plane = if piece.role() == Role::King {
        KING_PLANE
    } else {
        // Pieces are numbered 2 * role + color: flipping the color bit
        // makes Black's pieces the "own" ones from Black's side.
        (piece.to_usize() ^ perspective.to_usize()) * 64
    };
    (sq.to_usize() ^ orient) + plane + BUCKET[perspective.to_usize()][k] * PLANES
}

/// The index of the P_hm input (Stockfish.js 19's lite net) a piece
/// `piece` on `sq` activates for side `perspective`, whose king stands on
/// `king`: the square mirrored and flipped as for HalfKAv2_hm, on one of
/// 12 planes (the side's own pawn, knight, bishop, rook, queen and king,
/// then the other side's), with no king bucket.
#[inline]
pub fn phm_index(perspective: Color, sq: Square, piece: Piece, king: Square) -> usize {
    let orient = ORIENT[perspective.to_usize()][king.to_usize()];
    let plane = piece.role() as usize + if piece.color() == perspective { 0 } else { 6 };
    (sq.to_usize() ^ orient) + 64 * plane
}

/// Which half of the board (files a-d: 0, e-h: 1) a king on `king`
/// stands on: the mirror P_hm's inputs take, and so the refresh cache's
/// entry for the lite net.
#[inline]
pub fn mirror_half(king: Square) -> usize {
    usize::from(king.to_usize() % 8 >= 4)
}

/// What a square index is XORed with: the mirror that puts the king on
/// files e to h, and the flip that puts Black's back rank first.
const ORIENT: [[usize; 64]; 2] = {
    let mut t = [[0; 64]; 2];
    let mut sq = 0;
    while sq < 64 {
        let mirror = if sq % 8 < 4 { 7 } else { 0 };
        t[0][sq] = mirror;
        t[1][sq] = 56 + mirror;
        sq += 1;
    }
    t
};

/// The king buckets: four per rank from the side's back rank up, by the
/// file's distance from the edge.
const BUCKET: [[usize; 64]; 2] = {
    let mut t = [[0; 64]; 2];
    let mut sq = 0;
    while sq < 64 {
        let (file, rank) = (sq % 8, sq / 8);
        let edge = if file < 4 { file } else { 7 - file };
        t[0][sq] = 4 * (7 - rank) + edge;
        t[1][sq] = 4 * rank + edge;
        sq += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;

    /// Stockfish 15.1's `KingBuckets` for White, rank 1 first (the table
    /// in half_ka_v2_hm.h, divided by the planes per bucket).
    const WHITE_BUCKETS: [usize; 64] = [
        28, 29, 30, 31, 31, 30, 29, 28, 24, 25, 26, 27, 27, 26, 25, 24, 20, 21, 22, 23, 23, 22, 21,
        20, 16, 17, 18, 19, 19, 18, 17, 16, 12, 13, 14, 15, 15, 14, 13, 12, 8, 9, 10, 11, 11, 10,
        9, 8, 4, 5, 6, 7, 7, 6, 5, 4, 0, 1, 2, 3, 3, 2, 1, 0,
    ];

    #[test]
    fn buckets_and_orientation_as_stockfish_tabulates_them() {
        for sq in 0..64 {
            assert_eq!(BUCKET[0][sq], WHITE_BUCKETS[sq]);
            assert_eq!(BUCKET[1][sq], WHITE_BUCKETS[sq ^ 56]);
            // Stockfish's OrientTBL: H1 or A1 for White, H8 or A8 for Black.
            assert_eq!(ORIENT[0][sq], if sq % 8 < 4 { 7 } else { 0 });
            assert_eq!(ORIENT[1][sq], if sq % 8 < 4 { 63 } else { 56 });
        }
    }

    #[test]
    fn every_input_is_reachable() {
        // Over the king squares of files e to h (the others mirror onto
        // them), every piece and square (the side's own king only on its
        // square): the indices stay below 22,528 and reach each one.
        for perspective in [Color::White, Color::Black] {
            let mut seen = vec![0u32; crate::nnue::FEATURES];
            for k in 0..64 {
                let king = Square::new(k);
                // Mirrored kings share a bucket: count one half only.
                if king.file().to_usize() < 4 {
                    continue;
                }
                for piece in Piece::ALL {
                    for s in 0..64 {
                        let sq = Square::new(s);
                        if piece == Piece::new(perspective, Role::King) && sq != king {
                            continue;
                        }
                        seen[index(perspective, sq, piece, king)] += 1;
                    }
                }
            }
            assert!(seen.iter().all(|&n| n >= 1), "every input reached");
        }
    }
}
