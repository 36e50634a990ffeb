//! Legal move generation into a caller's buffer.
//!
//! Every generator here produces legal moves directly, as Stockfish's
//! `generate<LEGAL>` does: pinned pieces move only along their pin line,
//! when in check only king moves, captures of the checker and blocks are
//! made, king moves are tested against the enemy's attacks with the king
//! lifted off the board, and en passant and castling are verified in full.
//! The search asks for [`CAPTURES`] and [`QUIETS`] in stages; the two sets
//! are disjoint and together make [`LEGAL`]:
//!
//! * captures: every capture (en passant included), capture-promotions to a
//!   queen, and non-capturing promotions to a queen;
//! * quiets: every other move, castling and all under-promotions included.
//!
//! Generation is written once against a [`MoveSink`]: [`MoveList`] stores
//! the moves, [`CountSink`] only counts them with popcounts (perft's bulk
//! counting, and [`Position::has_legal_moves`]).
//!
//! ```
//! use kibitz::{MoveList, Position};
//!
//! let pos = Position::startpos();
//! let mut moves = MoveList::new();
//! pos.generate_legal(&mut moves);
//! assert_eq!(moves.len(), 20);
//! assert_eq!(pos.count_legal(), 20);
//! ```

use crate::chess::{
    attacks::{
        between, bishop_attacks, king_attacks, knight_attacks, line, pawn_attacks, rook_attacks,
    },
    bitboard::Bitboard,
    mv::{Move, MoveList},
    position::{Position, pawn_push},
    types::{CastlingSide, Color, Rank, Role, Square},
};

/// Generate captures and queen promotions.
pub const CAPTURES: u8 = 1;
/// Generate quiet moves, castling and under-promotions.
pub const QUIETS: u8 = 2;
/// Generate every legal move (when in check: the evasions).
pub const LEGAL: u8 = CAPTURES | QUIETS;

/// Where generated moves go.
pub trait MoveSink {
    /// Normal moves from `from` to each square of `targets`.
    fn piece(&mut self, from: Square, targets: Bitboard);
    /// Normal pawn moves to each square of `targets`, from `to - delta`.
    fn pawns(&mut self, targets: Bitboard, delta: i32);
    /// Promotions to each square of `targets`, from `to - delta`: to a
    /// queen if `queen`, to rook, bishop and knight if `under`.
    fn promotions(&mut self, targets: Bitboard, delta: i32, queen: bool, under: bool);
    /// One move (castling, en passant, a pinned pawn's capture).
    fn one(&mut self, m: Move);
}

/// The generator's usual sink: every move into a [`MoveList`].
impl MoveSink for MoveList {
    #[inline(always)]
    fn piece(&mut self, from: Square, targets: Bitboard) {
        for to in targets {
            // Safety: see `MAX_MOVES`: a position has at most 16 pieces a
            // side (checked when it is set up), so at most 415 legal moves.
            unsafe { self.push_unchecked(Move::normal(from, to)) };
        }
    }

    #[inline(always)]
    fn pawns(&mut self, targets: Bitboard, delta: i32) {
        for to in targets {
            // Safety: as in `piece`.
            unsafe { self.push_unchecked(Move::normal(to.offset_unchecked(-delta), to)) };
        }
    }

    #[inline(always)]
    fn promotions(&mut self, targets: Bitboard, delta: i32, queen: bool, under: bool) {
        for to in targets {
            let from = to.offset_unchecked(-delta);
            // Safety: as in `piece`.
            unsafe {
                if queen {
                    self.push_unchecked(Move::promotion(from, to, Role::Queen));
                }
                if under {
                    self.push_unchecked(Move::promotion(from, to, Role::Rook));
                    self.push_unchecked(Move::promotion(from, to, Role::Bishop));
                    self.push_unchecked(Move::promotion(from, to, Role::Knight));
                }
            }
        }
    }

    #[inline(always)]
    fn one(&mut self, m: Move) {
        // Safety: as in `piece`.
        unsafe { self.push_unchecked(m) };
    }
}

/// A sink that only counts moves.
#[derive(Default, Clone, Copy, Debug)]
pub struct CountSink(pub u32);

impl MoveSink for CountSink {
    #[inline(always)]
    fn piece(&mut self, _from: Square, targets: Bitboard) {
        self.0 += targets.count();
    }

    #[inline(always)]
    fn pawns(&mut self, targets: Bitboard, _delta: i32) {
        self.0 += targets.count();
    }

    #[inline(always)]
    fn promotions(&mut self, targets: Bitboard, _delta: i32, queen: bool, under: bool) {
        self.0 += targets.count() * (u32::from(queen) + 3 * u32::from(under));
    }

    #[inline(always)]
    fn one(&mut self, _m: Move) {
        self.0 += 1;
    }
}

impl Position {
    /// Appends every legal move to `list`.
    #[inline]
    pub fn generate_legal(&self, list: &mut MoveList) {
        self.generate_into::<LEGAL, _>(list);
    }

    /// Appends the legal captures and queen promotions to `list`.
    #[inline]
    pub fn generate_captures(&self, list: &mut MoveList) {
        self.generate_into::<CAPTURES, _>(list);
    }

    /// Appends the legal quiet moves (castling and under-promotions
    /// included) to `list`.
    #[inline]
    pub fn generate_quiets(&self, list: &mut MoveList) {
        self.generate_into::<QUIETS, _>(list);
    }

    /// Appends the legal moves out of check to `list`.
    ///
    /// The side to move should be in check; otherwise this is
    /// [`Position::generate_legal`].
    #[inline]
    pub fn generate_evasions(&self, list: &mut MoveList) {
        debug_assert!(self.in_check());
        self.generate_into::<LEGAL, _>(list);
    }

    /// The legal moves, in a new list.
    #[inline]
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        self.generate_legal(&mut list);
        list
    }

    /// The number of legal moves, counted without listing them.
    ///
    /// Always inlined, generator included: perft counts at every node, and
    /// a fat-LTO build had left it a call there.
    #[inline(always)]
    pub fn count_legal(&self) -> u32 {
        let mut sink = CountSink(0);
        self.generate_inlined::<LEGAL, _>(&mut sink);
        sink.0
    }

    /// Generates the legal moves of kind `GEN` ([`CAPTURES`], [`QUIETS`] or
    /// [`LEGAL`]) into `sink`.
    #[inline]
    pub fn generate_into<const GEN: u8, S: MoveSink>(&self, sink: &mut S) {
        self.generate_inlined::<GEN, S>(sink);
    }

    /// [`Position::generate_into`], always inlined where it is called.
    #[inline(always)]
    fn generate_inlined<const GEN: u8, S: MoveSink>(&self, sink: &mut S) {
        let caps = GEN & CAPTURES != 0;
        let quiets = GEN & QUIETS != 0;
        let us = self.side_to_move;
        let them = !us;
        let st = self.st();
        let ours = self.by_color[us];
        let theirs = self.by_color[them];
        let occupied = ours | theirs;
        let ksq = self.king(us);
        let base = (if caps { theirs } else { Bitboard::EMPTY })
            | (if quiets { !occupied } else { Bitboard::EMPTY });

        // King moves: every target checked with the king lifted off the board,
        // so it cannot hide behind itself from a slider.
        let king_targets = king_attacks(ksq) & base;
        if king_targets.any() {
            let lifted = occupied ^ ksq;
            let safe = if king_targets.more_than_one() {
                king_targets & !self.attacks_reaching(them, king_targets, lifted)
            } else if self.is_attacked_by(them, king_targets.lsb(), lifted) {
                Bitboard::EMPTY
            } else {
                king_targets
            };
            sink.piece(ksq, safe);
        }

        let checkers = st.checkers;
        if checkers.more_than_one() {
            return; // Double check: only the king moves.
        }
        let in_check = checkers.any();
        let check_mask = match checkers.first() {
            Some(checker) => between(ksq, checker) | checker,
            None => Bitboard::FULL,
        };
        let target = base & check_mask;
        let pinned = st.blockers_for_king[us] & ours;
        let r = &self.by_role;

        // Knights: a pinned knight never moves.
        for from in r.knight & ours & !pinned {
            sink.piece(from, knight_attacks(from) & target);
        }
        // Sliders (a queen is both).
        let diagonal = (r.bishop | r.queen) & ours;
        let orthogonal = (r.rook | r.queen) & ours;
        for from in diagonal & !pinned {
            sink.piece(from, bishop_attacks(from, occupied) & target);
        }
        for from in orthogonal & !pinned {
            sink.piece(from, rook_attacks(from, occupied) & target);
        }
        // A pinned piece moves along its pin line. "Pinned" is Stockfish's
        // blocker set, which looks through other enemy sliders: a piece
        // behind a checking slider counts as pinned by the slider behind it,
        // and may still capture the checker along that line.
        for from in diagonal & pinned {
            sink.piece(from, bishop_attacks(from, occupied) & target & line(ksq, from));
        }
        for from in orthogonal & pinned {
            sink.piece(from, rook_attacks(from, occupied) & target & line(ksq, from));
        }

        self.generate_pawn_moves::<GEN, S>(sink, check_mask, pinned);

        // Castling.
        if quiets && !in_check {
            let rights = st.copied.castling_rights >> (2 * us as u8) & 3;
            if rights != 0 {
                self.generate_castling(sink, us, ksq, rights, occupied);
            }
        }
    }

    /// Castling moves of `us` for the rights in `rights` (bit 0 king side,
    /// bit 1 queen side), the side to move not in check.
    #[inline(always)]
    fn generate_castling<S: MoveSink>(
        &self,
        sink: &mut S,
        us: Color,
        ksq: Square,
        rights: u8,
        occupied: Bitboard,
    ) {
        let mut candidates = [None; 2];
        let mut zone = Bitboard::EMPTY;
        let mut all_standard = true;
        for side in CastlingSide::ALL {
            if rights & (1 << side as u8) == 0 {
                continue;
            }
            let index = 2 * us.to_usize() + side as usize;
            if (self.castling_path[index] & occupied).any() {
                continue;
            }
            if let Some(rook) = self.castling_rook[index] {
                candidates[side as usize] = Some((rook, index));
                zone |= self.castling_king_path[index];
                all_standard &= self.castling_standard[index];
            }
        }
        if zone.is_empty() {
            return;
        }
        if all_standard {
            // King on e1/e8 and rooks in the corners: the squares the king
            // crosses can be judged on one board with the king lifted off
            // (the rook's and king's moves change only attacks along the
            // back rank, which would already be giving check).
            let danger = self.attacks_reaching(!us, zone, occupied ^ ksq);
            for (rook, index) in candidates.into_iter().flatten() {
                if (self.castling_king_path[index] & danger).is_empty() {
                    sink.one(Move::castling(ksq, rook));
                }
            }
        } else {
            for (rook, _) in candidates.into_iter().flatten() {
                if self.castling_is_legal(us, ksq, rook) {
                    sink.one(Move::castling(ksq, rook));
                }
            }
        }
    }

    /// The squares of `zone` that `color` attacks, with `occupied` as the
    /// blockers. Computed piece by piece (pawns set-wise), skipping sliders
    /// whose rays miss the zone: cheaper than testing each square of a king's
    /// neighbourhood in turn when it has several.
    #[inline(always)]
    pub(crate) fn attacks_reaching(
        &self,
        color: Color,
        zone: Bitboard,
        occupied: Bitboard,
    ) -> Bitboard {
        let r = &self.by_role;
        let them = self.by_color[color];
        let mut attacked = (r.pawn & them).pawn_attacks(color) | king_attacks(self.king(color));
        for sq in r.knight & them {
            attacked |= knight_attacks(sq);
        }
        for sq in (r.bishop | r.queen) & them {
            if (crate::chess::attacks::bishop_rays(sq) & zone).any() {
                attacked |= bishop_attacks(sq, occupied);
            }
        }
        for sq in (r.rook | r.queen) & them {
            if (crate::chess::attacks::rook_rays(sq) & zone).any() {
                attacked |= rook_attacks(sq, occupied);
            }
        }
        attacked & zone
    }

    #[inline(always)]
    fn generate_pawn_moves<const GEN: u8, S: MoveSink>(
        &self,
        sink: &mut S,
        check_mask: Bitboard,
        pinned: Bitboard,
    ) {
        let caps = GEN & CAPTURES != 0;
        let quiets = GEN & QUIETS != 0;
        let us = self.side_to_move;
        let them = !us;
        let ours = self.by_color[us];
        let theirs = self.by_color[them];
        let empty = !(ours | theirs);
        let ksq = self.king(us);
        let pawns = self.by_role.pawn & ours;
        if pawns.is_empty() {
            return;
        }
        let rank7 = Bitboard::relative_rank(us, Rank::Seventh);
        let rank3 = Bitboard::relative_rank(us, Rank::Third);
        let up = pawn_push(us);
        let (west, east) = match us {
            Color::White => (7, 9),
            Color::Black => (-9, -7),
        };

        let free = pawns & !pinned;
        // A pawn pinned along its file may still push.
        let pushers = free | (pawns & pinned & Bitboard::from_file(ksq.file()));

        // Pushes.
        let single = (pushers & !rank7).forward(us) & empty;
        if quiets {
            let double = (single & rank3).forward(us) & empty & check_mask;
            sink.pawns(single & check_mask, up);
            sink.pawns(double, 2 * up);
        }
        let seventh = pushers & rank7;
        if seventh.any() {
            sink.promotions(seventh.forward(us) & empty & check_mask, up, caps, quiets);
        }

        // Captures by unpinned pawns.
        let victims = theirs & check_mask;
        if caps {
            let low = free & !rank7;
            sink.pawns(low.forward_west(us) & victims, west);
            sink.pawns(low.forward_east(us) & victims, east);
        }
        let high = free & rank7;
        if high.any() {
            sink.promotions(high.forward_west(us) & victims, west, caps, quiets);
            sink.promotions(high.forward_east(us) & victims, east, caps, quiets);
        }

        // Captures by pinned pawns, along the pin.
        {
            for from in pawns & pinned {
                let targets = pawn_attacks(us, from) & victims & line(ksq, from);
                for to in targets {
                    if rank7.contains(from) {
                        if caps {
                            sink.one(Move::promotion(from, to, crate::chess::types::Role::Queen));
                        }
                        if quiets {
                            for role in [
                                crate::chess::types::Role::Rook,
                                crate::chess::types::Role::Bishop,
                                crate::chess::types::Role::Knight,
                            ] {
                                sink.one(Move::promotion(from, to, role));
                            }
                        }
                    } else if caps {
                        sink.one(Move::normal(from, to));
                    }
                }
            }
        }

        // En passant, verified in full (discovered attacks through the
        // captured pawn's square, and evasions).
        if caps && let Some(ep) = self.st().copied.ep_square {
            for from in pawn_attacks(them, ep) & pawns {
                if self.en_passant_is_legal(from, ep) {
                    sink.one(Move::en_passant(from, ep));
                }
            }
        }
    }
}
