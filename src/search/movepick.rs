//! Staged move ordering: the hash move first, then good captures (by
//! victim and attacker, kept only if their exchange does not lose), the two
//! killer moves, the counter move, quiet moves by history, and the losing
//! captures last. Each stage is generated only when reached, so a cutoff on
//! the hash move or a capture saves generating the quiet moves.
//!
//! The generators produce legal moves; the hash, killer and counter moves
//! come from other positions and are checked with `pseudo_legal` + `legal`.

use std::mem::MaybeUninit;

use crate::chess::{
    attacks::{bishop_attacks, knight_attacks, rook_attacks},
    bitboard::Bitboard,
    mv::{MAX_MOVES, Move, MoveList},
    position::Position,
    types::{Piece, Role},
};

/// History of quiet moves, by moving piece and destination.
pub type History = [[i32; 64]; 12];

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
}

/// The ordering score of a quiet move: its history entry, by moving piece
/// and destination; above any history, a piece threatened by a lesser one
/// that moves out of reach, and below, a piece that moves into such a
/// threat (as Stockfish's move picker weighs them). Without this, a queen
/// attacked by a pawn at the last plies was left en prise: its escapes
/// came after the king's moves and late-move pruning cut them.
#[inline]
fn quiet_score(pos: &Position, history: &History, threats: &Threats, m: Move) -> i32 {
    let piece = pos.piece_on(m.from()).unwrap_or(Piece::WhitePawn);
    let (from, to) = (m.from(), m.to());
    let history = history[piece.to_usize()][to.to_usize()];
    let h = HISTORY_MAX;
    let into = |b: Bitboard, w: i32| if b.contains(to) { w } else { 0 };
    // The squares where this piece is threatened, what escaping is worth,
    // and what stepping into threats costs.
    let (threat, escape, malus) = match piece.role() {
        Role::Queen => (
            threats.by_rook,
            7 * h,
            into(threats.by_rook, 7 * h) + into(threats.by_minor, h) + into(threats.by_pawn, 3 * h),
        ),
        Role::Rook => (
            threats.by_minor,
            7 * h / 2,
            into(threats.by_minor, 7 * h / 2) + into(threats.by_pawn, h),
        ),
        Role::Knight | Role::Bishop => (threats.by_pawn, 2 * h, into(threats.by_pawn, 2 * h)),
        Role::Pawn | Role::King => return history,
    };
    let adjust = if !threat.contains(from) {
        -malus
    } else if threat.contains(to) {
        0
    } else {
        escape
    };
    history + adjust
}

/// Bits of a sort key that hold the move's place in the list.
const INDEX_BITS: u32 = MAX_MOVES.trailing_zeros();
const INDEX_MASK: i32 = (1 << INDEX_BITS) - 1;
const _: () = assert!(MAX_MOVES.is_power_of_two());

/// The sort key of a move with `score` at `index` in the list: the score
/// above, and below it the index counted down, so that of equal scores the
/// one nearer the front has the larger key, and the largest key says where
/// its move stands. Scores fit with room to spare: quiet moves stay within
/// ±12 [`HISTORY_MAX`] (history and the threat bonus or malus), captures
/// and evasions below 2^21.
#[inline]
fn sort_key(score: i32, index: usize) -> i32 {
    debug_assert!(index < MAX_MOVES && score.unsigned_abs() < 1 << (31 - INDEX_BITS));
    score << INDEX_BITS | (INDEX_MASK - index as i32)
}

/// The key `key` re-placed at `index`.
#[inline]
fn sort_key_moved(key: i32, index: usize) -> i32 {
    (key & !INDEX_MASK) | (INDEX_MASK - index as i32)
}

/// Where the move with sort key `key` stands.
#[inline]
fn key_index(key: i32) -> usize {
    (INDEX_MASK - (key & INDEX_MASK)) as usize
}

/// The largest history value (scores are kept in ±this).
pub const HISTORY_MAX: i32 = 16_384;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stage {
    TtMove,
    GenerateCaptures,
    GoodCaptures,
    Killer1,
    Killer2,
    Counter,
    GenerateQuiets,
    Quiets,
    BadCaptures,
    GenerateEvasions,
    Evasions,
    Done,
}

/// Orders the moves of one node.
pub struct MovePicker {
    stage: Stage,
    tt_move: Option<Move>,
    killers: [Option<Move>; 2],
    counter: Option<Move>,
    captures_only: bool,
    list: MoveList,
    /// The sort keys of `list`'s moves. Left uninitialised (a picker is
    /// made at every node, quiescence included, and zeroing 2 KiB each time
    /// cost more than the ordering): every stage that fills `list` writes
    /// the key of each of its moves before any is read.
    scores: [MaybeUninit<i32>; MAX_MOVES],
    next: usize,
    bad: MoveList,
    bad_next: usize,
    /// Moves already given from outside the lists (hash, killers, counter).
    given: [Option<Move>; 4],
}

fn value(role: Role) -> i32 {
    match role {
        Role::Pawn => 1,
        Role::Knight => 3,
        Role::Bishop => 3,
        Role::Rook => 5,
        Role::Queen => 9,
        Role::King => 0,
    }
}

/// Most valuable victim, least valuable attacker; queen promotions first.
fn capture_score(pos: &Position, m: Move) -> i32 {
    let victim =
        if m.is_en_passant() { 1 } else { pos.piece_on(m.to()).map_or(0, |p| value(p.role())) };
    let attacker = pos.piece_on(m.from()).map_or(0, |p| p.role() as i32);
    let promo = if m.promotion_role() == Some(Role::Queen) { 80 } else { 0 };
    victim * 16 - attacker + promo
}

impl MovePicker {
    /// A picker for a main-search node.
    pub fn new(
        pos: &Position,
        tt_move: Option<Move>,
        killers: [Option<Move>; 2],
        counter: Option<Move>,
    ) -> MovePicker {
        let in_check = pos.in_check();
        MovePicker {
            stage: if tt_move.is_some_and(|m| pos.is_legal(m)) {
                Stage::TtMove
            } else if in_check {
                Stage::GenerateEvasions
            } else {
                Stage::GenerateCaptures
            },
            tt_move: tt_move.filter(|&m| pos.is_legal(m)),
            killers,
            counter,
            captures_only: false,
            list: MoveList::new(),
            scores: [const { MaybeUninit::uninit() }; MAX_MOVES],
            next: 0,
            bad: MoveList::new(),
            bad_next: 0,
            given: [None; 4],
        }
    }

    /// A picker for quiescence: captures that do not lose material (all
    /// evasions when in check).
    pub fn quiescence(pos: &Position, tt_move: Option<Move>) -> MovePicker {
        let in_check = pos.in_check();
        let tt_move =
            tt_move.filter(|&m| pos.is_legal(m) && (in_check || pos.is_capture_or_promotion(m)));
        let mut picker = MovePicker::new(pos, None, [None; 2], None);
        picker.captures_only = !in_check;
        picker.tt_move = tt_move;
        picker.stage = if tt_move.is_some() {
            Stage::TtMove
        } else if in_check {
            Stage::GenerateEvasions
        } else {
            Stage::GenerateCaptures
        };
        picker
    }

    /// The hash move this picker gives first, if it passed the checks.
    pub fn tt_move(&self) -> Option<Move> {
        self.tt_move
    }

    /// Records the ordering score of the move at `index`.
    #[inline]
    fn set_score(&mut self, index: usize, score: i32) {
        self.scores[index] = MaybeUninit::new(sort_key(score, index));
    }

    /// The sort keys of the moves from `next` to the end of the list.
    #[inline]
    fn keys_left(&self) -> &[i32] {
        let len = self.list.len();
        assert!(self.next <= len && len <= MAX_MOVES);
        // Safety: the range lies within `scores` (asserted), and every key
        // below `list.len()` was written by `set_score` when the list was
        // filled (each generating stage scores all its moves) or by
        // `pick_best` since; `MaybeUninit<i32>` has `i32`'s layout.
        unsafe {
            std::slice::from_raw_parts(
                self.scores.as_ptr().add(self.next).cast::<i32>(),
                len - self.next,
            )
        }
    }

    /// Takes the highest-scored move left in the list (the first of equals,
    /// in the list's current order).
    fn pick_best(&mut self) -> Option<Move> {
        let len = self.list.len();
        if self.next >= len {
            return None;
        }
        // One branch-free maximum over the keys (it vectorizes): the key's
        // low bits make the first of equal scores the largest and say where
        // it is.
        let keys = self.keys_left();
        let top = keys.iter().copied().fold(i32::MIN, i32::max);
        let moved = keys[0];
        let best = key_index(top);
        self.list.as_mut_slice().swap(self.next, best);
        // The move from `next` now stands at `best`: its key must say so.
        self.scores[best] = MaybeUninit::new(sort_key_moved(moved, best));
        let m = self.list[self.next];
        self.next += 1;
        Some(m)
    }

    fn was_given(&self, m: Move) -> bool {
        self.given.contains(&Some(m))
    }

    fn give(&mut self, m: Move) -> Option<Move> {
        if let Some(slot) = self.given.iter_mut().find(|g| g.is_none()) {
            *slot = Some(m);
        }
        Some(m)
    }

    /// The next move, or `None` when all have been given.
    pub fn next(&mut self, pos: &Position, history: &History) -> Option<Move> {
        loop {
            match self.stage {
                Stage::TtMove => {
                    self.stage = if pos.in_check() {
                        Stage::GenerateEvasions
                    } else {
                        Stage::GenerateCaptures
                    };
                    if let Some(m) = self.tt_move {
                        return self.give(m);
                    }
                }
                Stage::GenerateCaptures => {
                    self.list.clear();
                    pos.generate_captures(&mut self.list);
                    for i in 0..self.list.len() {
                        self.set_score(i, capture_score(pos, self.list[i]));
                    }
                    self.next = 0;
                    self.stage = Stage::GoodCaptures;
                }
                Stage::GoodCaptures => match self.pick_best() {
                    Some(m) if self.was_given(m) => {}
                    Some(m) => {
                        if pos.see_ge(m, 0) {
                            return Some(m);
                        }
                        if !self.captures_only {
                            self.bad.push(m);
                        }
                    }
                    None => {
                        self.stage = if self.captures_only { Stage::Done } else { Stage::Killer1 };
                    }
                },
                Stage::Killer1 | Stage::Killer2 | Stage::Counter => {
                    let candidate = match self.stage {
                        Stage::Killer1 => self.killers[0],
                        Stage::Killer2 => self.killers[1],
                        _ => self.counter,
                    };
                    self.stage = match self.stage {
                        Stage::Killer1 => Stage::Killer2,
                        Stage::Killer2 => Stage::Counter,
                        _ => Stage::GenerateQuiets,
                    };
                    if let Some(m) = candidate
                        && !self.was_given(m)
                        && !pos.is_capture_or_promotion(m)
                        && pos.is_legal(m)
                    {
                        return self.give(m);
                    }
                }
                Stage::GenerateQuiets => {
                    self.list.clear();
                    pos.generate_quiets(&mut self.list);
                    let threats = Threats::of(pos);
                    for i in 0..self.list.len() {
                        let m = self.list[i];
                        self.set_score(i, quiet_score(pos, history, &threats, m));
                    }
                    self.next = 0;
                    self.stage = Stage::Quiets;
                }
                Stage::Quiets => match self.pick_best() {
                    Some(m) if self.was_given(m) => {}
                    Some(m) => return Some(m),
                    None => self.stage = Stage::BadCaptures,
                },
                Stage::BadCaptures => {
                    if self.bad_next < self.bad.len() {
                        let m = self.bad[self.bad_next];
                        self.bad_next += 1;
                        return Some(m);
                    }
                    self.stage = Stage::Done;
                }
                Stage::GenerateEvasions => {
                    self.list.clear();
                    pos.generate_legal(&mut self.list);
                    for i in 0..self.list.len() {
                        let m = self.list[i];
                        let score = if pos.is_capture_or_promotion(m) {
                            1 << 20 | capture_score(pos, m)
                        } else {
                            quiet_score(pos, history, &Threats::default(), m)
                        };
                        self.set_score(i, score);
                    }
                    self.next = 0;
                    self.stage = Stage::Evasions;
                }
                Stage::Evasions => match self.pick_best() {
                    Some(m) if self.was_given(m) => {}
                    Some(m) => return Some(m),
                    None => self.stage = Stage::Done,
                },
                Stage::Done => return None,
            }
        }
    }
}
