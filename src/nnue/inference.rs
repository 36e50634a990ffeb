//! The net's evaluation of a position, as Stockfish 15.1 computes it, and
//! the report its `eval` command prints.

use std::{fmt::Write as _, sync::Arc};

use crate::{
    chess::{
        position::Position,
        types::{Color, File, Rank, Role, Square},
    },
    nnue::{
        Accumulator, AccumulatorStack, L1, LAYER_STACKS, NORMALIZE_TO_PAWN, Network, OUTPUT_SCALE,
        simd,
    },
};

/// The net's two outputs for a position, side to move's view, in units of
/// 1/16 of an internal evaluation.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Outputs {
    /// The PSQT part ("material").
    pub psqt: i32,
    /// The layer stack's output ("positional").
    pub positional: i32,
}

/// The layer stack (and PSQT bucket) Stockfish uses for a position with
/// `pieces` pieces, kings included.
pub fn bucket(pieces: u32) -> usize {
    (pieces.saturating_sub(1) / 4).min(LAYER_STACKS as u32 - 1) as usize
}

/// The outputs of bucket `bucket` for the accumulator `acc`, `stm` to move
/// (Stockfish's `FeatureTransformer::transform` and `Network::propagate`).
pub fn outputs(net: &Network, acc: &Accumulator, stm: Color, bucket: usize) -> Outputs {
    let (us, them) = (stm.to_usize(), (!stm).to_usize());
    // C++ division: truncated towards zero, as Rust's.
    let psqt = (acc.psqt[us][bucket] - acc.psqt[them][bucket]) / 2;
    let mut transformed = [0u8; L1];
    simd::transform(&acc.values[us], &acc.values[them], &mut transformed);
    Outputs { psqt, positional: simd::propagate(&transformed, &net.stacks[bucket]) }
}

/// Stockfish 15.1's non-pawn material in its own units (both sides).
pub fn stockfish_non_pawn_material(pos: &Position) -> i32 {
    const VALUES: [(Role, i32); 4] =
        [(Role::Knight, 781), (Role::Bishop, 825), (Role::Rook, 1276), (Role::Queen, 2538)];
    VALUES.iter().map(|&(role, v)| v * (pos.pieces_by_role(role).count() as i32)).sum()
}

/// A thread's NNUE evaluator: the net, and the accumulators of the position
/// it is asked about, kept up to date move by move.
pub struct NnueEval {
    net: Arc<Network>,
    stack: AccumulatorStack,
}

impl NnueEval {
    /// An evaluator with `net`.
    pub fn new(net: Arc<Network>) -> NnueEval {
        let stack = AccumulatorStack::new(&net);
        NnueEval { net, stack }
    }

    /// The net.
    pub fn network(&self) -> &Arc<Network> {
        &self.net
    }

    /// The accumulators' statistics.
    pub fn stack(&self) -> &AccumulatorStack {
        &self.stack
    }

    /// The accumulator of `pos`, brought up to date.
    pub fn accumulator(&mut self, pos: &Position) -> &Accumulator {
        self.stack.update(&self.net, pos)
    }

    /// The net's outputs for `pos` with the bucket its piece count chooses.
    pub fn outputs(&mut self, pos: &Position) -> Outputs {
        let bucket = bucket(pos.occupied().count());
        let acc = self.stack.update(&self.net, pos);
        outputs(&self.net, acc, pos.side_to_move(), bucket)
    }

    /// Stockfish's `NNUE::evaluate(pos, false)`: the evaluation its `eval`
    /// command prints, side to move's view, in internal units.
    pub fn evaluate(&mut self, pos: &Position) -> i32 {
        let o = self.outputs(pos);
        (o.psqt + o.positional) / OUTPUT_SCALE
    }

    /// Stockfish's `NNUE::evaluate(pos, true)`, which its search uses: the
    /// positional part weighs more, and the PSQT part less, as material
    /// leaves the board.
    pub fn evaluate_adjusted(&mut self, pos: &Position) -> i32 {
        let delta = 24 - stockfish_non_pawn_material(pos) / 9560;
        let o = self.outputs(pos);
        ((1024 - delta) * o.psqt + (1024 + delta) * o.positional) / (1024 * OUTPUT_SCALE)
    }

    /// [`NnueEval::evaluate_adjusted`] and the net's "complexity": how far
    /// its positional part strays from its material (PSQT) part, in
    /// internal units (Stockfish's `NNUE::evaluate(pos, true, &complexity)`).
    pub fn evaluate_adjusted_complexity(&mut self, pos: &Position) -> (i32, i32) {
        let delta = 24 - stockfish_non_pawn_material(pos) / 9560;
        let o = self.outputs(pos);
        let v = ((1024 - delta) * o.psqt + (1024 + delta) * o.positional) / (1024 * OUTPUT_SCALE);
        (v, (o.psqt - o.positional).abs() / OUTPUT_SCALE)
    }

    /// The line Stockfish 15.1's `eval` prints for the net's evaluation:
    /// `NNUE evaluation        +0.14 (white side)`.
    pub fn stockfish_line(&mut self, pos: &Position) -> String {
        let v = white_side(pos, self.evaluate(pos));
        format!(
            "NNUE evaluation        {:+.2} (white side)",
            f64::from(v) / f64::from(NORMALIZE_TO_PAWN)
        )
    }

    /// The net's part of Stockfish 15.1's `eval` report, laid out as it
    /// prints it: the value of each piece (the evaluation less the
    /// evaluation without that piece, White's view), then every bucket's
    /// material and positional parts, side to move's view.
    pub fn stockfish_trace(&mut self, pos: &Position) -> String {
        let net = self.net.clone();
        let mut out = String::new();
        let base = white_side(pos, self.evaluate(pos));
        // 25 rows of 65 characters, as Stockfish draws the board.
        let mut board = vec![[b' '; 65]; 25];
        for rank in (0..8).rev() {
            for file in 0..8 {
                let sq = Square::from_coords(File::new(file), Rank::new(rank));
                let (x, y) = (file as usize * 8, (7 - rank as usize) * 3);
                for i in 1..8 {
                    board[y][x + i] = b'-';
                    board[y + 3][x + i] = b'-';
                }
                for i in 1..3 {
                    board[y + i][x] = b'|';
                    board[y + i][x + 8] = b'|';
                }
                for (dy, dx) in [(0, 0), (0, 8), (3, 8), (3, 0)] {
                    board[y + dy][x + dx] = b'+';
                }
                let Some(pc) = pos.piece_on(sq) else { continue };
                board[y + 1][x + 4] = pc.char() as u8;
                if pc.role() == Role::King {
                    continue;
                }
                let acc = Accumulator::refresh_without(&net, pos, sq);
                let o = outputs(&net, &acc, pos.side_to_move(), bucket(pos.occupied().count() - 1));
                let without = white_side(pos, (o.psqt + o.positional) / OUTPUT_SCALE);
                board[y + 2][x + 2..x + 7].copy_from_slice(&compact_cp(base - without));
            }
        }
        out.push_str(" NNUE derived piece values:\n");
        for row in &board {
            out.push_str(std::str::from_utf8(row).unwrap_or_default());
            out.push('\n');
        }
        out.push('\n');
        let stm = if pos.side_to_move() == Color::White { "White" } else { "Black" };
        let _ = writeln!(out, " NNUE network contributions ({stm} to move)");
        let rule = "+------------+------------+------------+------------+\n";
        out.push_str(rule);
        out.push_str("|   Bucket   |  Material  | Positional |   Total    |\n");
        out.push_str("|            |   (PSQT)   |  (Layers)  |            |\n");
        out.push_str(rule);
        let used = bucket(pos.occupied().count());
        let acc = Accumulator::refresh(&net, pos);
        for b in 0..LAYER_STACKS {
            let o = outputs(&net, &acc, pos.side_to_move(), b);
            let (psqt, positional) = (o.psqt / OUTPUT_SCALE, o.positional / OUTPUT_SCALE);
            let _ = write!(
                out,
                "|  {b}         |  {}   |  {}   |  {}   |",
                aligned_cp(psqt),
                aligned_cp(positional),
                aligned_cp(psqt + positional)
            );
            if b == used {
                out.push_str(" <-- this bucket is used");
            }
            out.push('\n');
        }
        out.push_str(rule);
        out
    }
}

/// `v` (side to move's view) from White's side.
fn white_side(pos: &Position, v: i32) -> i32 {
    if pos.side_to_move() == Color::White { v } else { -v }
}

/// Stockfish's `format_cp_compact`: a sign, then the centipawns in four
/// characters (`1.23`, `12.3`, `123 `).
fn compact_cp(v: i32) -> [u8; 5] {
    let mut b = [b' '; 5];
    b[0] = match v.signum() {
        -1 => b'-',
        1 => b'+',
        _ => b' ',
    };
    let mut cp = (100 * v / NORMALIZE_TO_PAWN).unsigned_abs();
    let digit = |d: u32| b'0' + (d % 10) as u8;
    if cp >= 10_000 {
        b[1] = digit(cp / 10_000);
        cp %= 10_000;
        b[2] = digit(cp / 1000);
        cp %= 1000;
        b[3] = digit(cp / 100);
        b[4] = b' ';
    } else if cp >= 1000 {
        b[1] = digit(cp / 1000);
        cp %= 1000;
        b[2] = digit(cp / 100);
        cp %= 100;
        b[3] = b'.';
        b[4] = digit(cp / 10);
    } else {
        b[1] = digit(cp / 100);
        cp %= 100;
        b[2] = b'.';
        b[3] = digit(cp / 10);
        b[4] = digit(cp);
    }
    b
}

/// Stockfish's `format_cp_aligned_dot`: a sign, then `%6.2f` of the pawns.
fn aligned_cp(v: i32) -> String {
    let sign = match v.signum() {
        -1 => '-',
        1 => '+',
        _ => ' ',
    };
    format!("{sign}{:6.2}", f64::from(v.unsigned_abs()) / f64::from(NORMALIZE_TO_PAWN))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::fen::STARTPOS;

    #[test]
    fn stockfish_number_formats() {
        assert_eq!(&compact_cp(1902), b"+5.26");
        assert_eq!(&compact_cp(-1902), b"-5.26");
        assert_eq!(&compact_cp(0), b" 0.00");
        assert_eq!(&compact_cp(3610 * 3), b"+30.0");
        assert_eq!(&compact_cp(-361 * 123), b"-123 ");
        assert_eq!(aligned_cp(50), "+  0.14");
        assert_eq!(aligned_cp(-1022), "-  2.83");
        assert_eq!(aligned_cp(0), "   0.00");
        assert_eq!(bucket(32), 7);
        assert_eq!(bucket(2), 0);
        assert_eq!(bucket(5), 1);
    }

    #[test]
    fn incremental_accumulators_equal_a_refresh_along_a_game() {
        let net = Arc::new(Network::synthetic(3));
        let mut eval = NnueEval::new(net.clone());
        let mut pos = Position::from_fen(STARTPOS).unwrap();
        // Captures, castling by both sides, en passant, promotions to a
        // knight and a queen, king moves.
        let game = "e4 d5 exd5 c6 dxc6 Nf6 cxb7 Nbd7 bxa8=N e5 Nb6 Bc5 Nf3 O-O Be2 Qe7 O-O e4 \
                    d4 exd3 Kh1 dxc2 Nxc8 cxb1=Q Nxa7 Qxa2 Rb1";
        let mut made = Vec::new();
        for san in game.split_whitespace() {
            let m = pos.parse_san(san.as_bytes()).unwrap();
            // Every other ply only: the walk back covers two moves.
            if made.len() % 2 == 0 {
                assert_eq!(
                    *eval.accumulator(&pos),
                    Accumulator::refresh(&net, &pos),
                    "{}",
                    pos.fen()
                );
            }
            pos.do_move(m);
            made.push(m);
        }
        assert_eq!(*eval.accumulator(&pos), Accumulator::refresh(&net, &pos), "{}", pos.fen());
        // Back down the game and up another way: the stack follows.
        for &m in made.iter().rev().take(5) {
            pos.undo_move(m);
            assert_eq!(*eval.accumulator(&pos), Accumulator::refresh(&net, &pos), "{}", pos.fen());
        }
        let stats = eval.stack().stats;
        assert!(stats.steps > 0 && stats.refreshes > 0 && stats.hits > 0, "{stats:?}");
    }
}
