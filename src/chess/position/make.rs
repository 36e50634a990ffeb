//! Making and unmaking moves: [`Position::do_move`] and its inverse, null
//! moves, and the key a move will give.

use super::*;

impl Position {
    // ---------------------------------------------------------------------
    // Making and unmaking moves
    // ---------------------------------------------------------------------

    /// The king's and rook's destinations when `color` castles with the rook
    /// on `rook` (king on `king`).
    #[inline]
    pub(crate) fn castling_destinations(
        color: Color,
        king: Square,
        rook: Square,
    ) -> (Square, Square) {
        let side = if rook > king { CastlingSide::KingSide } else { CastlingSide::QueenSide };
        let rank = color.backrank();
        (
            Square::from_coords(side.king_to_file(), rank),
            Square::from_coords(side.rook_to_file(), rank),
        )
    }

    /// Makes a legal move, updating every field incrementally and pushing a
    /// new [`StateInfo`].
    ///
    /// # Panics
    ///
    /// If no piece stands on the move's origin. Any other illegal move
    /// leaves the position inconsistent (never unsafe): check moves from
    /// outside with [`Position::is_legal`] first.
    pub fn do_move(&mut self, m: Move) {
        self.do_move_inlined(m);
    }

    /// [`Position::do_move`], always inlined where it is called: replay
    /// calls it for every ply of a database, with the key check right
    /// after it (inlined there, the two measured 6% faster in the replay
    /// bench; the search keeps the call).
    #[inline(always)]
    pub(crate) fn do_move_inlined(&mut self, m: Move) {
        self.make::<true>(m);
    }

    /// Makes a legal move for counting the moves after it and nothing else
    /// (perft's last ply but one): the board, castling rights, the
    /// en-passant square, the checkers and the side to move's blockers are
    /// set; the keys, scores, changed pieces, check squares and the other
    /// side's blockers and pinners are not (they are what the next
    /// `do_move` or an evaluation would read). Only
    /// [`Position::undo_move`] may follow, and no move may be made from
    /// the position. Perft spends half of its time in `do_move`, on the
    /// leaf's parents, almost all of it on fields the count never reads.
    #[inline]
    pub(crate) fn do_move_for_count(&mut self, m: Move) {
        self.make::<false>(m);
    }

    /// `do_move` in full (`FULL`), or for counting alone: the fields the
    /// count does not read are left as the previous ply had them, so their
    /// updates are dead code the compiler drops.
    #[inline(always)]
    fn make<const FULL: bool>(&mut self, m: Move) {
        debug_assert!(self.is_legal(m), "illegal move {m:?} in {}", self.fen());
        let us = self.side_to_move;
        let them = !us;
        let prev = self.st();
        let mut c = prev.copied;
        let unchanged = prev.copied;
        let mut key = prev.key ^ zobrist::WHITE_TO_MOVE;
        c.rule50 = c.rule50.saturating_add(1);
        c.plies_from_null = c.plies_from_null.saturating_add(1);

        let from = m.from();
        let mut to = m.to();
        let Some(pc) = self.board[from.to_usize()] else {
            panic!("do_move: no piece on {from} for {m:?}");
        };
        // The checkers after a normal move, from the check squares and
        // blockers already known (as Stockfish's do_move takes
        // `givesCheck`): a direct check is the moved piece itself, and only
        // a discovered check needs attack lookups. Castling, promotions and
        // en passant (rare) recompute them on the new board.
        let ksq_them = self.king(them);
        let direct_check = prev.check_squares[pc.role()].contains(to);
        let discovered_check = self.uncovers_check(from, to);
        let up = pawn_push(us);
        let mut captured = if m.is_en_passant() {
            Some(Piece::new(them, Role::Pawn))
        } else {
            self.board[to.to_usize()]
        };
        let mut dirty = DirtyPiece::NONE;

        if m.is_castling() {
            let rook = Piece::new(us, Role::Rook);
            let rfrom = to;
            let (kto, rto) = Position::castling_destinations(us, from, rfrom);
            // Remove both first: in Chess960 a destination may be the other
            // piece's origin.
            self.remove_piece(pc, from);
            self.remove_piece(rook, rfrom);
            self.put_piece(pc, kto);
            self.put_piece(rook, rto);
            key ^= zobrist::piece_square(rook, rfrom) ^ zobrist::piece_square(rook, rto);
            c.psq += psqt::psq(rook, rto) - psqt::psq(rook, rfrom);
            captured = None;
            to = kto;
            dirty.push(pc, Some(from), Some(kto));
            dirty.push(rook, Some(rfrom), Some(rto));
        } else if let Some(cap) = captured {
            let capsq = if m.is_en_passant() { to.offset_unchecked(-up) } else { to };
            dirty.push(pc, Some(from), Some(to));
            dirty.push(cap, Some(capsq), None);
            if cap.role() == Role::Pawn {
                c.pawn_key ^= zobrist::piece_square(cap, capsq);
            } else {
                c.non_pawn_material[them] -= psqt::mg_value(cap.role());
            }
            self.remove_piece(cap, capsq);
            key ^= zobrist::piece_square(cap, capsq);
            c.material_key ^= zobrist::material(cap, u32::from(self.piece_count[cap]));
            c.psq -= psqt::psq(cap, capsq);
            c.rule50 = 0;
        }

        key ^= zobrist::piece_square(pc, from) ^ zobrist::piece_square(pc, to);

        if let Some(ep) = c.ep_square.take() {
            key ^= zobrist::en_passant(ep.file());
        }

        if c.castling_rights != 0 {
            let lost = self.castling_rights_mask[from.to_usize()]
                | self.castling_rights_mask[to.to_usize()];
            if lost & c.castling_rights != 0 {
                key ^= zobrist::castling(c.castling_rights);
                c.castling_rights &= !lost;
                key ^= zobrist::castling(c.castling_rights);
            }
        }

        if !m.is_castling() {
            self.move_piece(pc, from, to);
            if captured.is_none() {
                dirty.push(pc, Some(from), Some(to));
            }
        }

        if pc.role() == Role::Pawn {
            if to.to_u32() ^ from.to_u32() == 16 {
                // Double step: record the square only if an enemy pawn
                // attacks it (Polyglot's rule, and Stockfish's do_move).
                let ep = from.offset_unchecked(up);
                if (pawn_attacks(us, ep) & self.pieces(them, Role::Pawn)).any() {
                    c.ep_square = Some(ep);
                    key ^= zobrist::en_passant(ep.file());
                }
            } else if let Some(role) = m.promotion_role() {
                let promo = Piece::new(us, role);
                self.remove_piece(pc, to);
                self.put_piece(promo, to);
                key ^= zobrist::piece_square(pc, to) ^ zobrist::piece_square(promo, to);
                c.pawn_key ^= zobrist::piece_square(pc, to);
                c.material_key ^= zobrist::material(promo, u32::from(self.piece_count[promo]) - 1)
                    ^ zobrist::material(pc, u32::from(self.piece_count[pc]));
                c.psq += psqt::psq(promo, to) - psqt::psq(pc, to);
                c.non_pawn_material[us] += psqt::mg_value(role);
                // The pawn leaves the board; the new piece comes onto it.
                dirty.clear_first_destination();
                dirty.push(promo, None, Some(to));
            }
            c.pawn_key ^= zobrist::piece_square(pc, from) ^ zobrist::piece_square(pc, to);
            c.rule50 = 0;
        }

        c.psq += psqt::psq(pc, to) - psqt::psq(pc, from);
        self.side_to_move = them;
        self.game_ply += 1;

        let checkers = if m.kind() != MoveKind::Normal {
            self.attackers_to(ksq_them, self.occupied()) & self.by_color[us]
        } else if discovered_check {
            let r = &self.by_role;
            let occupied = self.occupied();
            let sliders = (rook_attacks(ksq_them, occupied) & (r.rook | r.queen))
                | (bishop_attacks(ksq_them, occupied) & (r.bishop | r.queen));
            (sliders & self.by_color[us])
                | if direct_check { Bitboard::from(to) } else { Bitboard::EMPTY }
        } else if direct_check {
            Bitboard::from(to)
        } else {
            Bitboard::EMPTY
        };
        if FULL {
            let (blockers_for_king, pinners, check_squares) = self.check_info();
            self.states.push(StateInfo {
                copied: c,
                key,
                checkers,
                blockers_for_king,
                pinners,
                check_squares,
                captured,
                dirty,
            });
            #[cfg(debug_assertions)]
            if let Err(e) = self.verify_state() {
                panic!("do_move {m:?}: {e}");
            }
        } else {
            // The side to move is `them` now: its pinned pieces.
            let (blockers, pinners) =
                self.slider_blockers(self.by_color[us], self.king(them), them);
            let mut blockers_for_king = ByColor::<Bitboard>::default();
            blockers_for_king[them] = blockers;
            let mut pinned_by = ByColor::<Bitboard>::default();
            pinned_by[us] = pinners;
            c.pawn_key = unchanged.pawn_key;
            c.material_key = unchanged.material_key;
            c.non_pawn_material = unchanged.non_pawn_material;
            c.psq = unchanged.psq;
            self.states.push(StateInfo {
                copied: c,
                key: 0,
                checkers,
                blockers_for_king,
                pinners: pinned_by,
                check_squares: ByRole::default(),
                captured,
                dirty: DirtyPiece::NONE,
            });
        }
    }

    /// Unmakes `m`, which must be the last move made: pops the state and puts
    /// the pieces back.
    ///
    /// # Panics
    ///
    /// If no move was made.
    pub fn undo_move(&mut self, m: Move) {
        self.undo_move_inlined(m);
    }

    /// [`Position::undo_move`], always inlined where it is called: perft
    /// calls it at every node (the search keeps the call, which measured
    /// faster there).
    #[inline(always)]
    pub(crate) fn undo_move_inlined(&mut self, m: Move) {
        assert!(self.states.len() > 1, "undo_move without a move to undo");
        self.side_to_move = !self.side_to_move;
        let us = self.side_to_move;
        let captured = self.st().captured;
        self.states.pop();
        let from = m.from();
        let to = m.to();

        if m.is_castling() {
            let king = Piece::new(us, Role::King);
            let rook = Piece::new(us, Role::Rook);
            let (kto, rto) = Position::castling_destinations(us, from, to);
            self.remove_piece(king, kto);
            self.remove_piece(rook, rto);
            self.put_piece(king, from);
            self.put_piece(rook, to);
        } else {
            if let Some(role) = m.promotion_role() {
                self.remove_piece(Piece::new(us, role), to);
                self.put_piece(Piece::new(us, Role::Pawn), to);
            }
            let Some(pc) = self.board[to.to_usize()] else {
                panic!("undo_move: no piece on {to} for {m:?}");
            };
            self.move_piece(pc, to, from);
            if let Some(cap) = captured {
                let capsq =
                    if m.is_en_passant() { to.offset_unchecked(-pawn_push(us)) } else { to };
                self.put_piece(cap, capsq);
            }
        }
        self.game_ply -= 1;

        #[cfg(debug_assertions)]
        if let Err(e) = self.verify_state() {
            panic!("undo_move {m:?}: {e}");
        }
    }

    /// Passes the move to the other side (for null-move pruning).
    ///
    /// The side to move must not be in check.
    pub fn do_null_move(&mut self) {
        debug_assert!(!self.in_check());
        let mut st = *self.st();
        if let Some(ep) = st.copied.ep_square.take() {
            st.key ^= zobrist::en_passant(ep.file());
        }
        st.key ^= zobrist::WHITE_TO_MOVE;
        st.copied.rule50 = st.copied.rule50.saturating_add(1);
        st.copied.plies_from_null = 0;
        st.captured = None;
        st.dirty = DirtyPiece::NONE;
        self.side_to_move = !self.side_to_move;
        // A null move in a game's record (`--`, `Z0`) counts as a move: the
        // fullmove number goes on after Black's, as python-chess counts.
        self.game_ply += 1;
        st.checkers = Bitboard::EMPTY;
        let (blockers_for_king, pinners, check_squares) = self.check_info();
        st.blockers_for_king = blockers_for_king;
        st.pinners = pinners;
        st.check_squares = check_squares;
        self.states.push(st);
    }

    /// Takes back a null move.
    ///
    /// # Panics
    ///
    /// If no move was made.
    pub fn undo_null_move(&mut self) {
        assert!(self.states.len() > 1, "undo_null_move without a move to undo");
        self.states.pop();
        self.side_to_move = !self.side_to_move;
        self.game_ply -= 1;
    }

    /// The key the position will have after the legal move `m`, exactly
    /// (captures, promotions, castling rights, en passant included), without
    /// making the move.
    pub fn key_after(&self, m: Move) -> u64 {
        let us = self.side_to_move;
        let them = !us;
        let st = self.st();
        let from = m.from();
        let mut to = m.to();
        let Some(pc) = self.board[from.to_usize()] else { return st.key };
        let mut key = st.key ^ zobrist::WHITE_TO_MOVE;
        if let Some(ep) = st.copied.ep_square {
            key ^= zobrist::en_passant(ep.file());
        }
        match m.kind() {
            MoveKind::Castling => {
                let rook = Piece::new(us, Role::Rook);
                let (kto, rto) = Position::castling_destinations(us, from, to);
                key ^= zobrist::piece_square(rook, to) ^ zobrist::piece_square(rook, rto);
                to = kto;
            }
            MoveKind::EnPassant => {
                let capsq = to.offset_unchecked(-pawn_push(us));
                key ^= zobrist::piece_square(Piece::new(them, Role::Pawn), capsq);
            }
            _ => {
                if let Some(cap) = self.board[to.to_usize()] {
                    key ^= zobrist::piece_square(cap, to);
                }
            }
        }
        let landing = match m.promotion_role() {
            Some(role) => Piece::new(us, role),
            None => pc,
        };
        key ^= zobrist::piece_square(pc, from) ^ zobrist::piece_square(landing, to);
        let rights = st.copied.castling_rights;
        let lost = self.castling_rights_mask[from.to_usize()]
            | self.castling_rights_mask[to.to_usize()]
            | if m.is_castling() { self.castling_rights_mask[m.to().to_usize()] } else { 0 };
        if lost & rights != 0 {
            key ^= zobrist::castling(rights) ^ zobrist::castling(rights & !lost);
        }
        if pc.role() == Role::Pawn && to.to_u32() ^ from.to_u32() == 16 {
            let ep = from.offset_unchecked(pawn_push(us));
            if (pawn_attacks(us, ep) & self.pieces(them, Role::Pawn)).any() {
                key ^= zobrist::en_passant(ep.file());
            }
        }
        key
    }
}
