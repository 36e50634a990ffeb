//! Perft: the number of leaf nodes of the legal move tree to a fixed depth,
//! the standard check of a move generator.
//!
//! [`perft`] counts the last ply in bulk (popcounts of target sets, no moves
//! written), as Stockfish and cozy-chess do, and makes the moves before that
//! count with a `do_move` that sets only what counting reads (the board,
//! castling, en passant, checkers, the side to move's pins: keys, scores
//! and the rest are left unset there, no move being made after it);
//! [`perft_make_leaves`] makes and unmakes every leaf move with the full
//! `do_move`, which times `do_move`/`undo_move` as well.
//!
//! ```
//! use kibitz::{perft, Position};
//!
//! let mut pos = Position::startpos();
//! assert_eq!(perft::perft(&mut pos, 4), 197_281);
//! assert_eq!(perft::perft_make_leaves(&mut pos, 3), 8_902);
//! ```

use crate::chess::{
    bitboard::Bitboard,
    movegen::MoveSink,
    mv::{Move, MoveList},
    position::Position,
    types::{Role, Square},
};

/// Leaf nodes at `depth`, the last ply counted in bulk.
pub fn perft(pos: &mut Position, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => u64::from(pos.count_legal()),
        // The last ply but one counts each child in place. An arm of its
        // own: folded into the arm below as `if depth == 2`, the loop also
        // holds the recursive call and measured about 2% slower on
        // position 3 (alternating bench runs).
        2 => {
            let mut nodes = 0;
            for_each_legal(pos, |pos, m| {
                pos.do_move_for_count(m);
                nodes += u64::from(pos.count_legal());
                pos.undo_move_inlined(m);
            });
            nodes
        }
        _ => {
            let mut nodes = 0;
            for_each_legal(pos, |pos, m| {
                pos.do_move(m);
                nodes += perft(pos, depth - 1);
                pos.undo_move_inlined(m);
            });
            nodes
        }
    }
}

/// Leaf nodes at `depth`, every leaf move made and unmade.
pub fn perft_make_leaves(pos: &mut Position, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut nodes = 0;
    for_each_legal(pos, |pos, m| {
        pos.do_move(m);
        nodes += if depth == 1 { 1 } else { perft_make_leaves(pos, depth - 1) };
        pos.undo_move_inlined(m);
    });
    nodes
}

/// Calls `visit` with each legal move, taken from the generator's target
/// sets a piece at a time (as cozy-chess iterates its move sets), so no move
/// list is written and read back. The order differs from
/// [`Position::generate_legal`]'s.
#[inline(always)]
fn for_each_legal(pos: &mut Position, mut visit: impl FnMut(&mut Position, Move)) {
    let mut sets = MoveSets::default();
    pos.generate_into::<{ crate::chess::movegen::LEGAL }, _>(&mut sets);
    for &(from, targets) in &sets.pieces[..sets.piece_len] {
        for to in targets {
            visit(pos, Move::normal(from, to));
        }
    }
    for &(targets, delta) in &sets.pawns[..sets.pawn_len] {
        for to in targets {
            visit(pos, Move::normal(to.offset_unchecked(-i32::from(delta)), to));
        }
    }
    for &(targets, delta, queen, under) in &sets.promotions[..sets.promotion_len] {
        for to in targets {
            let from = to.offset_unchecked(-i32::from(delta));
            if queen {
                visit(pos, Move::promotion(from, to, Role::Queen));
            }
            if under {
                for role in [Role::Rook, Role::Bishop, Role::Knight] {
                    visit(pos, Move::promotion(from, to, role));
                }
            }
        }
    }
    for &m in sets.others.iter() {
        visit(pos, m);
    }
}

/// Legal moves kept as the generator yields them: each piece's target set,
/// pawn moves as target sets with their step, and single moves (castling,
/// en passant, a pinned pawn's capture) in a list.
struct MoveSets {
    /// One entry per call of [`MoveSink::piece`]: the king, then each other
    /// piece once, a queen twice (diagonal and orthogonal moves). A side has
    /// at most 16 pieces (positions with more are refused when they are set
    /// up), so at most 1 + 2 x 15 calls.
    pieces: [(Square, Bitboard); 32],
    piece_len: usize,
    /// Single and double pushes, two capture directions.
    pawns: [(Bitboard, i8); 4],
    pawn_len: usize,
    /// A push and two capture directions.
    promotions: [(Bitboard, i8, bool, bool); 3],
    promotion_len: usize,
    others: MoveList,
}

impl Default for MoveSets {
    fn default() -> MoveSets {
        MoveSets {
            pieces: [(Square::A1, Bitboard::EMPTY); 32],
            piece_len: 0,
            pawns: [(Bitboard::EMPTY, 0); 4],
            pawn_len: 0,
            promotions: [(Bitboard::EMPTY, 0, false, false); 3],
            promotion_len: 0,
            others: MoveList::new(),
        }
    }
}

impl MoveSink for MoveSets {
    #[inline(always)]
    fn piece(&mut self, from: Square, targets: Bitboard) {
        self.pieces[self.piece_len] = (from, targets);
        self.piece_len += usize::from(targets.any());
    }

    #[inline(always)]
    fn pawns(&mut self, targets: Bitboard, delta: i32) {
        self.pawns[self.pawn_len] = (targets, delta as i8);
        self.pawn_len += usize::from(targets.any());
    }

    #[inline(always)]
    fn promotions(&mut self, targets: Bitboard, delta: i32, queen: bool, under: bool) {
        self.promotions[self.promotion_len] = (targets, delta as i8, queen, under);
        self.promotion_len += usize::from(targets.any());
    }

    #[inline(always)]
    fn one(&mut self, m: Move) {
        self.others.push(m);
    }
}

/// Leaf nodes at `depth` below each legal move (`depth >= 1`), in generation
/// order.
pub fn divide(pos: &mut Position, depth: u32, make_leaves: bool) -> Vec<(Move, u64)> {
    let moves = pos.legal_moves();
    moves
        .iter()
        .map(|&m| {
            pos.do_move(m);
            let n = if make_leaves {
                perft_make_leaves(pos, depth.saturating_sub(1))
            } else {
                perft(pos, depth.saturating_sub(1))
            };
            pos.undo_move(m);
            (m, n)
        })
        .collect()
}

/// One position of a perft suite with its expected counts.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct SuiteEntry {
    /// The line (1-based) the position starts on.
    pub line: usize,
    /// A name (`id` in the block format), or the FEN.
    pub name: String,
    /// The FEN as written.
    pub fen: String,
    /// `(depth, nodes)` pairs, as listed.
    pub counts: Vec<(u32, u64)>,
}

/// Reads a perft suite in either common format:
///
/// * EPD lines with counts after the FEN: `FEN ;D1 20 ;D2 400` (Ethereal)
///   or `FEN; D1 20; D2 400` (with trailing NUL bytes tolerated);
/// * blocks of `id NAME`, `epd FEN`, `perft DEPTH NODES` lines
///   (python-chess), `#` comments.
///
/// Lines that fit neither are reported with their number.
pub fn parse_suite(text: &str) -> Result<Vec<SuiteEntry>, String> {
    let mut entries: Vec<SuiteEntry> = Vec::new();
    let mut pending_id: Option<String> = None;
    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        let line = raw.trim_matches(|c: char| c.is_whitespace() || c == '\0');
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(id) = line.strip_prefix("id ") {
            pending_id = Some(id.trim().to_string());
        } else if let Some(fen) = line.strip_prefix("epd ") {
            let fen = fen.trim().to_string();
            entries.push(SuiteEntry {
                line: line_no,
                name: pending_id.take().unwrap_or_else(|| fen.clone()),
                fen,
                counts: Vec::new(),
            });
        } else if let Some(rest) = line.strip_prefix("perft ") {
            let mut it = rest.split_whitespace();
            let depth = it.next().and_then(|d| d.parse().ok());
            let nodes = it.next().and_then(|n| n.parse().ok());
            match (entries.last_mut(), depth, nodes) {
                (Some(e), Some(d), Some(n)) => e.counts.push((d, n)),
                _ => return Err(format!("line {line_no}: bad perft line {line:?}")),
            }
        } else {
            let mut parts = line.split(';');
            let fen = parts.next().unwrap_or("").trim().to_string();
            let mut counts = Vec::new();
            for part in parts {
                let part = part.trim();
                if part.is_empty() {
                    continue;
                }
                let mut it = part.split_whitespace();
                let key = it.next().unwrap_or("");
                let depth = key.strip_prefix('D').and_then(|d| d.parse().ok());
                let nodes = it.next().and_then(|n| n.parse().ok());
                match (depth, nodes) {
                    (Some(d), Some(n)) => counts.push((d, n)),
                    _ => return Err(format!("line {line_no}: bad count {part:?}")),
                }
            }
            if counts.is_empty() {
                return Err(format!("line {line_no}: no perft counts in {line:?}"));
            }
            entries.push(SuiteEntry { line: line_no, name: fen.clone(), fen, counts });
        }
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suite_formats() {
        let text = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 ;D1 20 ;D2 400\n\
                    k7/6p1/8/8/8/8/7P/K7 b - - 0 1; D1 5; D2 25 \0\n\
                    # comment\n\
                    id pos-3\nepd 8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - -\nperft 1 14\nperft 2 191\n";
        let suite = parse_suite(text).unwrap();
        assert_eq!(suite.len(), 3);
        assert_eq!(suite[0].counts, vec![(1, 20), (2, 400)]);
        assert_eq!(suite[1].counts, vec![(1, 5), (2, 25)]);
        assert_eq!(suite[2].name, "pos-3");
        assert_eq!(suite[2].counts, vec![(1, 14), (2, 191)]);
        assert!(parse_suite("startpos ;Dx 1").is_err());
    }
}
