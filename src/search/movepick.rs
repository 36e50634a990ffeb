//! Staged move ordering, after Stockfish 15.1's move picker: the hash move
//! first; then captures by the value of what they take and their capture
//! history, those that lose in the exchange put aside; the two killer moves
//! and the counter move; quiet moves by their histories (butterfly, pawn,
//! continuation and, near the root, low-ply), a threatened piece's escape
//! and a check; the captures put aside last. Each stage is generated only
//! when reached, so a cutoff on the hash move or a capture saves generating
//! the quiet moves. Three more orders serve the other searches: evasions
//! (captures first, then by history), ProbCut (captures that win at least
//! a threshold in the exchange) and quiescence (captures, recaptures only
//! when deep, and quiet checks at its first ply).
//!
//! The generators produce legal moves; the hash, killer and counter moves
//! come from other positions and are checked with `pseudo_legal` + `legal`.

use crate::{
    chess::{
        attacks::{bishop_attacks, knight_attacks, rook_attacks},
        bitboard::Bitboard,
        mv::{MAX_MOVES, Move, MoveList},
        position::Position,
        types::{Color, Piece, Role, Square},
    },
    search::history::{Histories, LOW_PLY},
};

/// Piece values the ordering weighs captures by (Stockfish 15.1's
/// middlegame values); the king's slot stands for "nothing captured" (a
/// promotion, en passant's empty square).
pub const PIECE_VALUE_MG: [i32; 6] = [126, 781, 825, 1276, 2538, 0];

/// The kind a move captures, as the capture history indexes it: the piece
/// on the destination, or the king's slot for none (en passant, a
/// promotion that takes nothing).
#[inline]
pub fn captured_kind(pos: &Position, m: Move) -> Role {
    if m.is_en_passant() {
        return Role::King;
    }
    pos.piece_on(m.to()).map_or(Role::King, |p| p.role())
}

/// Where Stockfish's move generator puts a move: its lists come pawn moves
/// first (pushes, double pushes, promotions by capture to the right, to the
/// left and by push, captures to the right, to the left, en passant), then
/// knights, bishops, rooks and queens by square and destination, then the
/// king, then castling (king side first). Evasions are put in this order
/// before they are scored: of quiet evasions the histories score alike,
/// blocks come before king moves, as in Stockfish, and quiescence, which
/// searches two quiet evasions at most, tries the same two.
#[inline]
pub fn generation_key(pos: &Position, m: Move) -> u32 {
    let (from, to) = (m.from().to_u32(), m.to().to_u32());
    let Some(piece) = pos.moved_piece(m) else { return 0 };
    let (class, a, b) = match piece.role() {
        Role::Pawn => {
            let delta = to as i32 - from as i32;
            let white = piece.color() == Color::White;
            // Towards the h-file for White, the a-file for Black: Stockfish's
            // "up right".
            let right = if white { delta == 9 } else { delta == -9 };
            let diagonal = delta.abs() == 7 || delta.abs() == 9;
            if let Some(role) = m.promotion_role() {
                let order = match role {
                    Role::Queen => 0,
                    Role::Rook => 1,
                    Role::Bishop => 2,
                    _ => 3,
                };
                (
                    if !diagonal {
                        4
                    } else if right {
                        2
                    } else {
                        3
                    },
                    to,
                    order,
                )
            } else if m.is_en_passant() {
                (7, from, 0)
            } else if diagonal {
                (if right { 5 } else { 6 }, to, 0)
            } else if delta.abs() == 16 {
                (1, to, 0)
            } else {
                (0, to, 0)
            }
        }
        Role::Knight => (8, from, to),
        Role::Bishop => (9, from, to),
        Role::Rook => (10, from, to),
        Role::Queen => (11, from, to),
        Role::King if m.is_castling() => (13, u32::from(to < from), 0),
        Role::King => (12, to, 0),
    };
    class << 16 | a << 8 | b
}

/// Puts `list` in Stockfish's generation order ([`generation_key`]): each
/// move's key computed once, beside the move in one integer, the integers
/// sorted.
fn in_generation_order(pos: &Position, list: &mut MoveList) {
    let moves = list.as_mut_slice();
    let mut keyed = [0u64; MAX_MOVES];
    for (k, &m) in keyed.iter_mut().zip(moves.iter()) {
        *k = u64::from(generation_key(pos, m)) << 16 | u64::from(m.to_u16());
    }
    let keyed = &mut keyed[..moves.len()];
    keyed.sort_unstable();
    for (m, &k) in moves.iter_mut().zip(keyed.iter()) {
        *m = Move::from_u16(k as u16).expect("a move's own encoding");
    }
}

/// The continuation tables of a node: those of the moves one to six plies
/// before (Stockfish's `contHist[0]` to `[5]`). Quiet moves are ordered by
/// all but the fifth.
#[derive(Clone, Copy, Debug)]
pub struct Continuations(pub [usize; 6]);

/// Squares the opponent attacks with a pawn; with a pawn or a minor piece;
/// with a pawn, a minor piece or a rook: where a piece of ours of the next
/// higher value is threatened.
#[derive(Clone, Copy, Default)]
struct Threats {
    by_pawn: Bitboard,
    by_minor: Bitboard,
    by_rook: Bitboard,
}

impl Threats {
    fn of(pos: &Position) -> Threats {
        let them = !pos.side_to_move();
        let occupied = pos.occupied();
        let by_pawn = pos.pieces(them, Role::Pawn).pawn_attacks(them);
        let mut by_minor = by_pawn;
        for sq in pos.pieces(them, Role::Knight) {
            by_minor |= knight_attacks(sq);
        }
        for sq in pos.pieces(them, Role::Bishop) {
            by_minor |= bishop_attacks(sq, occupied);
        }
        let mut by_rook = by_minor;
        for sq in pos.pieces(them, Role::Rook) {
            by_rook |= rook_attacks(sq, occupied);
        }
        Threats { by_pawn, by_minor, by_rook }
    }

    /// Our pieces attacked by a piece worth less.
    fn threatened(&self, pos: &Position, us: Color) -> Bitboard {
        (pos.pieces(us, Role::Queen) & self.by_rook)
            | (pos.pieces(us, Role::Rook) & self.by_minor)
            | ((pos.pieces(us, Role::Knight) | pos.pieces(us, Role::Bishop)) & self.by_pawn)
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stage {
    MainTt,
    CaptureInit,
    GoodCapture,
    Refutation,
    QuietInit,
    Quiet,
    BadCapture,
    EvasionTt,
    EvasionInit,
    Evasion,
    ProbcutTt,
    ProbcutInit,
    Probcut,
    QsearchTt,
    QcaptureInit,
    Qcapture,
    QcheckInit,
    Qcheck,
    Done,
}

/// Quiescence plies at or below this take recaptures only (Stockfish's
/// `DEPTH_QS_RECAPTURES`).
pub const QS_RECAPTURES: i32 = -5;

/// Orders the moves of one node.
pub struct MovePicker {
    stage: Stage,
    tt_move: Option<Move>,
    refutations: [Option<Move>; 3],
    refutation_next: usize,
    depth: i32,
    /// The node's distance from the root (the low-ply history orders the
    /// first plies' quiet moves).
    ply: usize,
    /// ProbCut: the exchange a capture must win at least.
    threshold: i32,
    /// Quiescence deep enough for recaptures only: the square of the last
    /// move.
    recapture: Option<Square>,
    list: MoveList,
    scores: [i32; MAX_MOVES],
    next: usize,
    bad: MoveList,
    bad_next: usize,
}

/// Sorts the moves whose score is at least `limit` to the front, best
/// first, in a stable way; the others keep their order behind them
/// (Stockfish's partial insertion sort).
fn partial_insertion_sort(list: &mut MoveList, scores: &mut [i32], limit: i32) {
    let moves = list.as_mut_slice();
    let mut sorted_end = 0usize;
    for p in 1..moves.len() {
        if scores[p] >= limit {
            let (m, s) = (moves[p], scores[p]);
            sorted_end += 1;
            moves[p] = moves[sorted_end];
            scores[p] = scores[sorted_end];
            let mut q = sorted_end;
            while q > 0 && scores[q - 1] < s {
                moves[q] = moves[q - 1];
                scores[q] = scores[q - 1];
                q -= 1;
            }
            moves[q] = m;
            scores[q] = s;
        }
    }
}

impl MovePicker {
    fn empty(stage: Stage, tt_move: Option<Move>, depth: i32) -> MovePicker {
        MovePicker {
            stage,
            tt_move,
            refutations: [None; 3],
            refutation_next: 0,
            depth,
            ply: usize::MAX,
            threshold: 0,
            recapture: None,
            list: MoveList::new(),
            scores: [0; MAX_MOVES],
            next: 0,
            bad: MoveList::new(),
            bad_next: 0,
        }
    }

    /// A picker for a main-search node at `depth`, `ply` plies from the
    /// root; `tt_move`, if any, must be legal.
    pub fn new(
        pos: &Position,
        tt_move: Option<Move>,
        depth: i32,
        ply: usize,
        killers: [Option<Move>; 2],
        counter: Option<Move>,
    ) -> MovePicker {
        let stage = match (pos.in_check(), tt_move.is_some()) {
            (true, true) => Stage::EvasionTt,
            (true, false) => Stage::EvasionInit,
            (false, true) => Stage::MainTt,
            (false, false) => Stage::CaptureInit,
        };
        let mut picker = MovePicker::empty(stage, tt_move, depth);
        picker.ply = ply;
        // The counter move once only, when it is no killer.
        let counter = counter.filter(|c| !killers.contains(&Some(*c)));
        picker.refutations = [killers[0], killers[1], counter];
        picker
    }

    /// A picker for quiescence at `depth` (0 and below): captures and
    /// queen promotions, recaptures on `recapture` only below
    /// [`QS_RECAPTURES`], quiet checks at depth 0; evasions in check. The
    /// hash move (which must be legal) comes first.
    pub fn quiescence(
        pos: &Position,
        tt_move: Option<Move>,
        depth: i32,
        recapture: Option<Square>,
    ) -> MovePicker {
        let stage = match (pos.in_check(), tt_move.is_some()) {
            (true, true) => Stage::EvasionTt,
            (true, false) => Stage::EvasionInit,
            (false, true) => Stage::QsearchTt,
            (false, false) => Stage::QcaptureInit,
        };
        let mut picker = MovePicker::empty(stage, tt_move, depth);
        picker.recapture = recapture;
        picker
    }

    /// A picker for ProbCut: captures (and queen promotions) that win at
    /// least `threshold` in the exchange, the hash move first if it is one.
    pub fn probcut(pos: &Position, tt_move: Option<Move>, threshold: i32) -> MovePicker {
        let tt_move =
            tt_move.filter(|&m| pos.is_capture_or_promotion(m) && pos.see_ge(m, threshold));
        let stage = if tt_move.is_some() { Stage::ProbcutTt } else { Stage::ProbcutInit };
        let mut picker = MovePicker::empty(stage, tt_move, 0);
        picker.threshold = threshold;
        picker
    }

    fn score_captures(&mut self, pos: &Position, h: &Histories) {
        for i in 0..self.list.len() {
            let m = self.list[i];
            let piece = pos.moved_piece(m).unwrap_or(Piece::WhitePawn);
            let kind = captured_kind(pos, m);
            self.scores[i] = 6 * PIECE_VALUE_MG[kind as usize] + h.capture(piece, m.to(), kind);
        }
    }

    fn score_quiets(&mut self, pos: &Position, h: &Histories, cont: &Continuations) {
        let us = pos.side_to_move();
        let threats = Threats::of(pos);
        let threatened = threats.threatened(pos, us);
        let pawns = h.pawn_table(pos.pawn_key());
        let low_ply = self.ply < LOW_PLY;
        for i in 0..self.list.len() {
            let m = self.list[i];
            let piece = pos.moved_piece(m).unwrap_or(Piece::WhitePawn);
            let to = m.to();
            let [c1, c2, c3, c4, _, c6] = cont.0;
            let mut score = 2 * h.main(us, m)
                + 2 * i32::from(pawns[piece.to_usize()][to.to_usize()])
                + h.continuation(c1, piece, to)
                + h.continuation(c2, piece, to)
                + h.continuation(c3, piece, to)
                + h.continuation(c4, piece, to)
                + h.continuation(c6, piece, to);
            if low_ply {
                score += 8 * h.low_ply(self.ply, m) / (1 + self.ply as i32);
            }
            if threatened.contains(m.from()) {
                score += match piece.role() {
                    Role::Queen if !threats.by_rook.contains(to) => 50_000,
                    Role::Rook if !threats.by_minor.contains(to) => 25_000,
                    _ if !threats.by_pawn.contains(to) => 15_000,
                    _ => 0,
                };
            }
            if pos.check_squares(piece.role()).contains(to) {
                score += 16_384;
            }
            self.scores[i] = score;
        }
    }

    fn score_evasions(&mut self, pos: &Position, h: &Histories, cont: &Continuations) {
        let us = pos.side_to_move();
        for i in 0..self.list.len() {
            let m = self.list[i];
            let piece = pos.moved_piece(m).unwrap_or(Piece::WhitePawn);
            self.scores[i] = if pos.is_capture(m) {
                PIECE_VALUE_MG[captured_kind(pos, m) as usize] - piece.role() as i32 + (1 << 28)
            } else {
                h.main(us, m) + h.continuation(cont.0[0], piece, m.to())
            };
        }
    }

    /// The next move in list order that is not the hash move.
    fn next_in_order(&mut self) -> Option<Move> {
        while self.next < self.list.len() {
            let m = self.list[self.next];
            self.next += 1;
            if Some(m) != self.tt_move {
                return Some(m);
            }
        }
        None
    }

    /// The best-scored move left that is not the hash move.
    fn next_best(&mut self) -> Option<Move> {
        while self.next < self.list.len() {
            let len = self.list.len();
            let mut best = self.next;
            for i in self.next + 1..len {
                if self.scores[i] > self.scores[best] {
                    best = i;
                }
            }
            self.list.as_mut_slice().swap(self.next, best);
            self.scores.swap(self.next, best);
            let m = self.list[self.next];
            self.next += 1;
            if Some(m) != self.tt_move {
                return Some(m);
            }
        }
        None
    }

    fn generate(&mut self, pos: &Position, captures: bool) {
        self.list.clear();
        self.next = 0;
        if captures {
            pos.generate_captures(&mut self.list);
        } else {
            pos.generate_quiets(&mut self.list);
        }
    }

    /// The next move, or `None` when all have been given. With
    /// `skip_quiets` (move-count pruning has started), quiet moves not yet
    /// given are passed over.
    pub fn next(
        &mut self,
        pos: &Position,
        h: &Histories,
        cont: &Continuations,
        skip_quiets: bool,
    ) -> Option<Move> {
        loop {
            match self.stage {
                Stage::MainTt | Stage::EvasionTt | Stage::ProbcutTt | Stage::QsearchTt => {
                    self.stage = match self.stage {
                        Stage::MainTt => Stage::CaptureInit,
                        Stage::EvasionTt => Stage::EvasionInit,
                        Stage::ProbcutTt => Stage::ProbcutInit,
                        _ => Stage::QcaptureInit,
                    };
                    if self.tt_move.is_some() {
                        return self.tt_move;
                    }
                }
                Stage::CaptureInit | Stage::ProbcutInit | Stage::QcaptureInit => {
                    self.generate(pos, true);
                    self.score_captures(pos, h);
                    let len = self.list.len();
                    partial_insertion_sort(&mut self.list, &mut self.scores[..len], i32::MIN);
                    self.stage = match self.stage {
                        Stage::CaptureInit => Stage::GoodCapture,
                        Stage::ProbcutInit => Stage::Probcut,
                        _ => Stage::Qcapture,
                    };
                }
                Stage::GoodCapture => {
                    match self.next_in_order() {
                        Some(m) => {
                            // A capture that loses more than its ordering
                            // score allows waits for the end.
                            let score = self.scores[self.next - 1];
                            if pos.see_ge(m, -69 * score / 1024) {
                                return Some(m);
                            }
                            self.bad.push(m);
                        }
                        None => self.stage = Stage::Refutation,
                    }
                }
                Stage::Refutation => {
                    if self.refutation_next < 3 {
                        let i = self.refutation_next;
                        self.refutation_next += 1;
                        if let Some(m) = self.refutations[i]
                            && Some(m) != self.tt_move
                            && !pos.is_capture_or_promotion(m)
                            && pos.is_legal(m)
                        {
                            return Some(m);
                        }
                        // Not given here: the quiet moves do not pass it
                        // over.
                        self.refutations[i] = None;
                    } else {
                        self.stage = Stage::QuietInit;
                    }
                }
                Stage::QuietInit => {
                    if !skip_quiets {
                        self.generate(pos, false);
                        self.score_quiets(pos, h, cont);
                        let len = self.list.len();
                        let limit = -3560 * self.depth;
                        partial_insertion_sort(&mut self.list, &mut self.scores[..len], limit);
                    } else {
                        self.list.clear();
                        self.next = 0;
                    }
                    self.stage = Stage::Quiet;
                }
                Stage::Quiet => {
                    if !skip_quiets && let Some(m) = self.next_in_order() {
                        if self.refutations.contains(&Some(m)) {
                            continue;
                        }
                        return Some(m);
                    }
                    self.stage = Stage::BadCapture;
                }
                Stage::BadCapture => {
                    if self.bad_next < self.bad.len() {
                        self.bad_next += 1;
                        return Some(self.bad[self.bad_next - 1]);
                    }
                    self.stage = Stage::Done;
                }
                Stage::EvasionInit => {
                    self.list.clear();
                    self.next = 0;
                    pos.generate_legal(&mut self.list);
                    in_generation_order(pos, &mut self.list);
                    self.score_evasions(pos, h, cont);
                    self.stage = Stage::Evasion;
                }
                Stage::Evasion => match self.next_best() {
                    Some(m) => return Some(m),
                    None => self.stage = Stage::Done,
                },
                Stage::Probcut => match self.next_in_order() {
                    Some(m) if pos.see_ge(m, self.threshold) => return Some(m),
                    Some(_) => {}
                    None => self.stage = Stage::Done,
                },
                Stage::Qcapture => match self.next_in_order() {
                    Some(m) if self.depth > QS_RECAPTURES || Some(m.to()) == self.recapture => {
                        return Some(m);
                    }
                    Some(_) => {}
                    None => {
                        self.stage = if self.depth == 0 { Stage::QcheckInit } else { Stage::Done };
                    }
                },
                Stage::QcheckInit => {
                    self.generate(pos, false);
                    // As Stockfish's quiet checks: no castling, no
                    // promotion.
                    self.list
                        .retain(|m| !m.is_castling() && !m.is_promotion() && pos.gives_check(m));
                    self.stage = Stage::Qcheck;
                }
                Stage::Qcheck => match self.next_in_order() {
                    Some(m) => return Some(m),
                    None => self.stage = Stage::Done,
                },
                Stage::Done => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every picker gives each legal move once (the ones its kind of
    /// search wants), whatever the hash move, killers and counter move.
    #[test]
    fn pickers_give_each_move_once() {
        let h = Histories::new();
        let cont = Continuations([crate::search::history::NO_CONTINUATION; 6]);
        for fen in [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "rnbqkb1r/pp1p1ppp/5n2/2pPp3/8/8/PPP1PPPP/RNBQKBNR w KQkq e6 0 4",
            "4k3/8/8/8/8/8/3q4/4K3 w - - 0 1",
            "8/P6k/8/8/8/8/6p1/K7 w - - 0 1",
        ] {
            let pos = Position::from_fen(fen).unwrap();
            let legal = pos.legal_moves();
            let mut expected: Vec<Move> = legal.iter().copied().collect();
            expected.sort_by_key(|m| m.to_u16());
            let tt = legal.iter().copied().nth(3);
            let killers = [legal.iter().copied().nth(5), Some(Move::NULL)];
            for depth in [1, 5, 12] {
                let mut p =
                    MovePicker::new(&pos, tt, depth, 2, killers, legal.iter().copied().nth(7));
                let mut given = Vec::new();
                while let Some(m) = p.next(&pos, &h, &cont, false) {
                    given.push(m);
                }
                if tt.is_some() {
                    assert_eq!(given.first().copied(), tt, "{fen}");
                }
                given.sort_by_key(|m| m.to_u16());
                assert_eq!(given, expected, "{fen} depth {depth}");
            }
            // Quiescence at depth 0: captures, queen promotions and checks
            // (all evasions in check), each once.
            let mut p = MovePicker::quiescence(&pos, None, 0, None);
            let mut given = Vec::new();
            while let Some(m) = p.next(&pos, &h, &cont, false) {
                given.push(m);
            }
            let n = given.len();
            given.sort_by_key(|m| m.to_u16());
            given.dedup();
            assert_eq!(given.len(), n, "{fen}: a move given twice");
            for m in legal.iter().copied() {
                let wanted = pos.in_check()
                    || (pos.is_capture(m) || m.promotion_role() == Some(Role::Queen))
                    || (pos.gives_check(m) && !m.is_castling() && !m.is_promotion());
                assert_eq!(given.contains(&m), wanted, "{fen}: {m:?}");
            }
        }
    }

    /// The moves scored at least the limit come first, best first, equal
    /// scores in their order; every move stays in the list.
    #[test]
    fn partial_sort_orders_the_moves_above_the_limit() {
        let pos = Position::startpos();
        let mut list = pos.legal_moves();
        let original: Vec<Move> = list.iter().copied().collect();
        let mut scores: Vec<i32> = (0..list.len() as i32).map(|i| (i * 7919) % 23 - 11).collect();
        let before = scores.clone();
        partial_insertion_sort(&mut list, &mut scores, 0);
        let mut kept: Vec<(i32, usize)> =
            before.iter().enumerate().filter(|(_, s)| **s >= 0).map(|(i, s)| (*s, i)).collect();
        // Best first; of equal scores, the earlier first (a stable sort).
        kept.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let front: Vec<Move> = kept.iter().map(|&(_, i)| original[i]).collect();
        assert_eq!(&list.as_slice()[..kept.len()], &front[..]);
        let mut all: Vec<u16> = list.iter().map(|m| m.to_u16()).collect();
        let mut expected: Vec<u16> = original.iter().map(|m| m.to_u16()).collect();
        all.sort_unstable();
        expected.sort_unstable();
        assert_eq!(all, expected);
    }
}
