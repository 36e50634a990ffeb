//! Attacks, legality, checks and static exchange evaluation.

use super::*;

impl Position {
    // ---------------------------------------------------------------------
    // Attacks
    // ---------------------------------------------------------------------

    /// Pieces of both colors attacking `sq`, with `occupied` as the blockers.
    #[inline]
    pub fn attackers_to(&self, sq: Square, occupied: Bitboard) -> Bitboard {
        let r = &self.by_role;
        (pawn_attacks(Color::Black, sq) & self.pieces(Color::White, Role::Pawn))
            | (pawn_attacks(Color::White, sq) & self.pieces(Color::Black, Role::Pawn))
            | (knight_attacks(sq) & r.knight)
            | (rook_attacks(sq, occupied) & (r.rook | r.queen))
            | (bishop_attacks(sq, occupied) & (r.bishop | r.queen))
            | (king_attacks(sq) & r.king)
    }

    /// Whether a piece of `color` attacks `sq`, with `occupied` as blockers.
    #[inline]
    pub fn is_attacked_by(&self, color: Color, sq: Square, occupied: Bitboard) -> bool {
        let r = &self.by_role;
        let them = self.by_color[color];
        if (knight_attacks(sq) & r.knight & them).any()
            || (pawn_attacks(!color, sq) & r.pawn & them).any()
            || (king_attacks(sq) & r.king & them).any()
        {
            return true;
        }
        // Sliders: look up the (larger) attack tables only when a slider
        // stands on a ray through the square at all.
        let diagonal = (r.bishop | r.queen) & them;
        let orthogonal = (r.rook | r.queen) & them;
        ((bishop_rays(sq) & diagonal).any() && (bishop_attacks(sq, occupied) & diagonal).any())
            || ((rook_rays(sq) & orthogonal).any()
                && (rook_attacks(sq, occupied) & orthogonal).any())
    }

    /// The pieces (of either color) that alone stand between `sq` and a
    /// slider among `sliders` (looking through other such sliders, as
    /// Stockfish does), and those sliders whose lone blocker is one of
    /// `own`'s pieces: the pinners.
    #[inline(always)]
    pub fn slider_blockers(
        &self,
        sliders: Bitboard,
        sq: Square,
        own: Color,
    ) -> (Bitboard, Bitboard) {
        let r = &self.by_role;
        let snipers = ((rook_rays(sq) & (r.rook | r.queen))
            | (bishop_rays(sq) & (r.bishop | r.queen)))
            & sliders;
        let occupancy = self.occupied() ^ snipers;
        let own = self.by_color[own];
        let mut blockers = Bitboard::EMPTY;
        let mut pinners = Bitboard::EMPTY;
        for sniper in snipers {
            let b = between(sq, sniper) & occupancy;
            if b.any() && !b.more_than_one() {
                blockers |= b;
                if (b & own).any() {
                    pinners |= sniper;
                }
            }
        }
        (blockers, pinners)
    }

    /// Blockers, pinners and check squares of the current board, as
    /// `do_move` stores them.
    #[inline(always)]
    pub(super) fn check_info(&self) -> (ByColor<Bitboard>, ByColor<Bitboard>, ByRole<Bitboard>) {
        let (white_blockers, black_pinners) =
            self.slider_blockers(self.by_color.black, self.king(Color::White), Color::White);
        let (black_blockers, white_pinners) =
            self.slider_blockers(self.by_color.white, self.king(Color::Black), Color::Black);
        let them = !self.side_to_move;
        let ksq = self.king(them);
        let occupied = self.occupied();
        let bishop = bishop_attacks(ksq, occupied);
        let rook = rook_attacks(ksq, occupied);
        (
            ByColor { white: white_blockers, black: black_blockers },
            ByColor { white: white_pinners, black: black_pinners },
            ByRole {
                pawn: pawn_attacks(them, ksq),
                knight: knight_attacks(ksq),
                bishop,
                rook,
                queen: bishop | rook,
                king: Bitboard::EMPTY,
            },
        )
    }

    // ---------------------------------------------------------------------
    // Legality
    // ---------------------------------------------------------------------

    /// Whether the pseudo-legal move `m` leaves the king safe. `m` must have
    /// passed [`Position::pseudo_legal`] (or come from a generator).
    pub fn legal(&self, m: Move) -> bool {
        let us = self.side_to_move;
        let from = m.from();
        let to = m.to();
        let ksq = self.king(us);
        match m.kind() {
            MoveKind::EnPassant => self.en_passant_is_legal(from, to),
            MoveKind::Castling => self.castling_is_legal(us, from, to),
            _ => {
                if from == ksq {
                    !self.is_attacked_by(!us, to, self.occupied() ^ from)
                } else {
                    !self.st().blockers_for_king[us].contains(from) || line(from, to).contains(ksq)
                }
            }
        }
    }

    /// Whether capturing en passant from `from` onto `to` leaves the king safe
    /// (also when the side to move is in check).
    #[inline]
    pub(crate) fn en_passant_is_legal(&self, from: Square, to: Square) -> bool {
        let us = self.side_to_move;
        let them = !us;
        let capsq = to.offset_unchecked(-pawn_push(us));
        let ksq = self.king(us);
        let occupied = (self.occupied() ^ from ^ capsq) | to;
        let theirs = self.by_color[them] ^ capsq;
        let r = &self.by_role;
        ((rook_attacks(ksq, occupied) & (r.rook | r.queen))
            | (bishop_attacks(ksq, occupied) & (r.bishop | r.queen))
            | (knight_attacks(ksq) & r.knight)
            | (pawn_attacks(us, ksq) & r.pawn))
            .none_in(theirs)
    }

    /// Whether castling with the king on `king` and the rook on `rook` is
    /// legal, the right and the empty path assumed: the king is not in check
    /// and crosses and lands on no attacked square (judged with king and rook
    /// already moved, which also catches a Chess960 rook that was shielding
    /// the king's destination).
    #[inline]
    pub(crate) fn castling_is_legal(&self, us: Color, king: Square, rook: Square) -> bool {
        if self.in_check() {
            return false;
        }
        let (kto, rto) = Position::castling_destinations(us, king, rook);
        let occupied = (self.occupied() ^ king ^ rook) | kto | rto;
        let path = between(king, kto) | kto;
        if path.more_than_one() {
            self.attacks_reaching(!us, path, occupied).is_empty()
        } else {
            !self.is_attacked_by(!us, path.lsb(), occupied)
        }
    }

    /// Whether `m` is a pseudo-legal move: right piece, right geometry, and
    /// when in check a move that answers the check. Safe on any 16-bit value
    /// (moves from a hash table may come from another position).
    pub fn pseudo_legal(&self, m: Move) -> bool {
        let us = self.side_to_move;
        let them = !us;
        let from = m.from();
        let to = m.to();

        let Some(pc) = self.board[from.to_usize()] else { return false };
        if pc.color() != us {
            return false;
        }
        let occupied = self.occupied();
        match m.kind() {
            MoveKind::Normal => {
                // A normal move carries no promotion bits.
                if m.to_u16() & 0x3000 != 0 {
                    return false;
                }
            }
            MoveKind::Castling => {
                // The king takes a rook it may castle with, over an empty
                // path; `legal` judges the attacks.
                if pc.role() != Role::King || m.to_u16() & 0x3000 != 0 {
                    return false;
                }
                let side = if to > from { CastlingSide::KingSide } else { CastlingSide::QueenSide };
                let index = usize::from(us as u8 * 2 + side as u8);
                return self.castling_rights() & castling_bit(us, side) != 0
                    && self.castling_rook[index] == Some(to)
                    && (self.castling_path[index] & occupied).is_empty()
                    && !self.in_check();
            }
            MoveKind::EnPassant => {
                // `legal` checks the king in full, evasions included.
                return pc.role() == Role::Pawn
                    && m.to_u16() & 0x3000 == 0
                    && self.ep_square() == Some(to)
                    && pawn_attacks(us, from).contains(to);
            }
            MoveKind::Promotion => {
                if pc.role() != Role::Pawn || to.rank() != Rank::Eighth.relative(us) {
                    return false;
                }
                let single = from.offset(pawn_push(us)) == Some(to) && !occupied.contains(to);
                let capture = (pawn_attacks(us, from) & self.by_color[them]).contains(to);
                return (single || capture) && self.answers_check(pc, to);
            }
        }
        if self.by_color[us].contains(to) {
            return false;
        }
        if pc.role() == Role::Pawn {
            if (Bitboard::RANK_1 | Bitboard::RANK_8).contains(to) {
                return false;
            }
            let up = pawn_push(us);
            let capture = (pawn_attacks(us, from) & self.by_color[them]).contains(to);
            let single = from.offset(up) == Some(to) && !occupied.contains(to);
            let double = from.offset(2 * up) == Some(to)
                && from.rank() == Rank::Second.relative(us)
                && !occupied.contains(to)
                && !occupied.contains(to.offset_unchecked(-up));
            if !capture && !single && !double {
                return false;
            }
        } else if !crate::chess::attacks::attacks(pc.role(), from, occupied).contains(to) {
            return false;
        }
        if pc.role() == Role::King {
            return !self.in_check() || !self.is_attacked_by(them, to, occupied ^ from);
        }
        self.answers_check(pc, to)
    }

    /// Whether the piece `pc` of the side to move may legally go from `from`
    /// to `to`, given that its geometry is right and `to` holds no piece of
    /// ours (as SAN resolution knows from the attack sets it searched).
    #[inline]
    pub(crate) fn legal_geometric_move(&self, pc: Piece, from: Square, to: Square) -> bool {
        let us = self.side_to_move;
        if pc.role() == Role::King {
            return !self.is_attacked_by(!us, to, self.occupied() ^ from);
        }
        self.answers_check(pc, to)
            && (!self.st().blockers_for_king[us].contains(from)
                || line(from, to).contains(self.king(us)))
    }

    /// For a move of a piece other than the king to `to`: true when not in
    /// check, else whether it captures or blocks the single checker.
    #[inline]
    fn answers_check(&self, pc: Piece, to: Square) -> bool {
        let checkers = self.checkers();
        if checkers.is_empty() {
            return true;
        }
        debug_assert!(pc.role() != Role::King);
        if checkers.more_than_one() {
            return false;
        }
        let checker = checkers.lsb();
        (between(self.king(pc.color()), checker) | checker).contains(to)
    }

    /// Whether `m` is legal here: any 16-bit value is accepted.
    #[inline]
    pub fn is_legal(&self, m: Move) -> bool {
        self.pseudo_legal(m) && self.legal(m)
    }

    /// Whether moving the piece on `from` to `to` uncovers a check from a
    /// slider of the side to move: the piece stood alone between that
    /// slider and the enemy king, and leaves the line.
    #[inline(always)]
    pub(super) fn uncovers_check(&self, from: Square, to: Square) -> bool {
        let them = !self.side_to_move;
        self.st().blockers_for_king[them].contains(from)
            && !line(from, to).contains(self.king(them))
    }

    /// Whether the legal move `m` gives check, without making it.
    #[inline]
    pub fn gives_check(&self, m: Move) -> bool {
        let us = self.side_to_move;
        let from = m.from();
        let to = m.to();
        let Some(pc) = self.board[from.to_usize()] else { return false };
        let ksq = self.king(!us);
        let st = self.st();
        let r = &self.by_role;

        if m.kind() == MoveKind::Castling {
            // Judge the board after castling: the rook may check directly,
            // and the king leaving may uncover a slider.
            let (kto, rto) = Position::castling_destinations(us, from, to);
            let occupied = (self.occupied() ^ from ^ to) | kto | rto;
            let ours = (self.by_color[us] ^ from ^ to) | kto | rto;
            let orthogonal = ((r.rook ^ to) | rto | r.queen) & ours;
            let diagonal = (r.bishop | r.queen) & ours;
            return (rook_attacks(ksq, occupied) & orthogonal).any()
                || (bishop_attacks(ksq, occupied) & diagonal).any();
        }
        // Direct check. (For a promotion the pawn's own check squares never
        // include the last rank, so this is false and the role below
        // decides.)
        if st.check_squares[pc.role()].contains(to) {
            return true;
        }
        if self.uncovers_check(from, to) {
            return true;
        }
        match m.kind() {
            MoveKind::Promotion => {
                crate::chess::attacks::attacks(m.promotion_bits(), to, self.occupied() ^ from)
                    .contains(ksq)
            }
            MoveKind::EnPassant => {
                // The captured pawn's square opens too.
                let capsq = Square::from_coords(to.file(), from.rank());
                let b = (self.occupied() ^ from ^ capsq) | to;
                ((rook_attacks(ksq, b) & (r.rook | r.queen))
                    | (bishop_attacks(ksq, b) & (r.bishop | r.queen)))
                    .any_in(self.by_color[us])
            }
            _ => false,
        }
    }

    /// Static exchange evaluation: whether the exchange sequence that `m`
    /// starts on its destination wins at least `threshold` (in
    /// `SEE_VALUE` units), both sides recapturing with their least
    /// valuable piece and pinned pieces held back while their pinner stands.
    pub fn see_ge(&self, m: Move, threshold: i32) -> bool {
        if m.kind() != MoveKind::Normal {
            return 0 >= threshold;
        }
        let from = m.from();
        let to = m.to();
        let Some(moved) = self.board[from.to_usize()] else { return 0 >= threshold };

        let mut swap = self.board[to.to_usize()].map_or(0, |p| SEE_VALUE[p.role()]) - threshold;
        if swap < 0 {
            return false;
        }
        swap = SEE_VALUE[moved.role()] - swap;
        if swap <= 0 {
            return true;
        }

        let r = &self.by_role;
        let mut occupied = self.occupied() ^ from ^ to;
        let mut stm = moved.color();
        let mut attackers = self.attackers_to(to, occupied);
        let mut res = true;
        loop {
            stm = !stm;
            attackers &= occupied;
            let mut stm_attackers = attackers & self.by_color[stm];
            if stm_attackers.is_empty() {
                break;
            }
            // Pinned pieces may not recapture while their pinner stands.
            if (self.st().pinners[!stm] & occupied).any() {
                stm_attackers &= !self.st().blockers_for_king[stm];
                if stm_attackers.is_empty() {
                    break;
                }
            }
            res = !res;

            let (role, bb) = if let Some(b) = nonempty(stm_attackers & r.pawn) {
                (Role::Pawn, b)
            } else if let Some(b) = nonempty(stm_attackers & r.knight) {
                (Role::Knight, b)
            } else if let Some(b) = nonempty(stm_attackers & r.bishop) {
                (Role::Bishop, b)
            } else if let Some(b) = nonempty(stm_attackers & r.rook) {
                (Role::Rook, b)
            } else if let Some(b) = nonempty(stm_attackers & r.queen) {
                (Role::Queen, b)
            } else {
                // The king recaptures: it wins only if the other side has
                // no attacker left.
                return if (attackers & !self.by_color[stm]).any() { !res } else { res };
            };
            swap = SEE_VALUE[role] - swap;
            if swap < i32::from(res) {
                break;
            }
            occupied ^= bb.lsb();
            if matches!(role, Role::Pawn | Role::Bishop | Role::Queen) {
                attackers |= bishop_attacks(to, occupied) & (r.bishop | r.queen);
            }
            if matches!(role, Role::Rook | Role::Queen) {
                attackers |= rook_attacks(to, occupied) & (r.rook | r.queen);
            }
        }
        res
    }
}
