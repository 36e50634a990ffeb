//! From-scratch computation of every incremental field, and the two
//! verifiers that compare them with what `do_move` kept: the keys alone,
//! and every field.

use super::*;

impl Position {
    // ---------------------------------------------------------------------
    // From-scratch computation and consistency checks
    // ---------------------------------------------------------------------

    /// The Zobrist key computed from the board and the copied state.
    pub fn compute_key(&self) -> u64 {
        let mut key = 0;
        for sq in self.occupied() {
            if let Some(p) = self.board[sq.to_usize()] {
                key ^= zobrist::piece_square(p, sq);
            }
        }
        let c = &self.st().copied;
        key ^= zobrist::castling(c.castling_rights);
        if let Some(ep) = c.ep_square {
            key ^= zobrist::en_passant(ep.file());
        }
        if self.side_to_move == Color::White {
            key ^= zobrist::WHITE_TO_MOVE;
        }
        key
    }

    /// The pawn key computed from the board.
    pub fn compute_pawn_key(&self) -> u64 {
        let mut key = zobrist::NO_PAWNS;
        for sq in self.by_role.pawn {
            if let Some(p) = self.board[sq.to_usize()] {
                key ^= zobrist::piece_square(p, sq);
            }
        }
        key
    }

    /// The material key computed from the piece counts.
    pub fn compute_material_key(&self) -> u64 {
        Piece::ALL.iter().fold(0, |key, &piece| {
            key ^ zobrist::material_of_count(
                piece,
                self.pieces(piece.color(), piece.role()).count(),
            )
        })
    }

    /// The piece-square score computed from the board.
    pub fn compute_psq(&self) -> Tapered {
        let mut score = Tapered::ZERO;
        for sq in self.occupied() {
            if let Some(p) = self.board[sq.to_usize()] {
                score += psqt::psq(p, sq);
            }
        }
        score
    }

    /// Each side's non-pawn material computed from the board.
    pub fn compute_non_pawn_material(&self) -> ByColor<i32> {
        ByColor::new_with(|color| {
            [Role::Knight, Role::Bishop, Role::Rook, Role::Queen]
                .into_iter()
                .map(|role| self.pieces(color, role).count() as i32 * psqt::mg_value(role))
                .sum()
        })
    }

    /// The checkers computed from the board.
    pub fn compute_checkers(&self) -> Bitboard {
        let us = self.side_to_move;
        self.attackers_to(self.king(us), self.occupied()) & self.by_color[!us]
    }

    /// The en-passant square as the rule defines it, from the last move:
    /// kept only if a pawn of the side to move attacks it.
    fn compute_ep_square(&self) -> Option<Square> {
        let ep = self.st().copied.ep_square?;
        let us = self.side_to_move;
        let ok = ep.rank() == Rank::Sixth.relative(us)
            && (pawn_attacks(!us, ep) & self.pieces(us, Role::Pawn)).any()
            && self.board[ep.offset_unchecked(-pawn_push(us)).to_usize()]
                == Some(Piece::new(!us, Role::Pawn))
            && self.board[ep.to_usize()].is_none();
        if ok { Some(ep) } else { None }
    }

    /// A full state rebuilt from the board: every incremental field
    /// recomputed; what only history knows (rule50, plies from null, the
    /// captured and changed pieces) and the rights are taken from the
    /// current state.
    pub fn compute_state(&self) -> StateInfo {
        let st = self.st();
        let (blockers_for_king, pinners, check_squares) = self.check_info();
        StateInfo {
            copied: CopiedState {
                pawn_key: self.compute_pawn_key(),
                material_key: self.compute_material_key(),
                non_pawn_material: self.compute_non_pawn_material(),
                psq: self.compute_psq(),
                castling_rights: st.copied.castling_rights,
                rule50: st.copied.rule50,
                plies_from_null: st.copied.plies_from_null,
                ep_square: self.compute_ep_square(),
            },
            key: self.compute_key(),
            checkers: self.compute_checkers(),
            blockers_for_king,
            pinners,
            check_squares,
            captured: st.captured,
            dirty: st.dirty,
        }
    }

    /// Compares every incremental field with its from-scratch value, and the
    /// board's redundant representations with each other; fast enough for
    /// every ply of a replay: the key, pawn key, piece-square score and
    /// material in one pass over each piece's bitboard (checking the mailbox
    /// against the bitboards on the way), then checkers, blockers, pinners,
    /// check squares, castling rights, and that the side not to move is not
    /// in check. The error names the first field that differs.
    pub fn verify_state(&self) -> Result<(), StateField> {
        let st = self.st();
        let c = &st.copied;
        let occupied = self.occupied();
        let r = &self.by_role;
        if (self.by_color.white & self.by_color.black).any()
            || (r.pawn | r.knight | r.bishop | r.rook | r.queen | r.king) != occupied
        {
            return Err(StateField::Occupancy);
        }
        // Piece by piece over its bitboard: each square's mailbox entry must
        // hold that piece (with the disjointness above and the count below,
        // the two representations agree), the counts must match, and the
        // key, pawn key, score and material add up. The piece is a loop
        // constant, so no square needs its role or color worked out.
        let mut key = 0;
        let mut pawn_key = zobrist::NO_PAWNS;
        let mut psq = Tapered::ZERO;
        let mut material_key = 0;
        let mut npm = ByColor::<i32>::default();
        let mut board_mismatch = false;
        let mut count_mismatch = false;
        // Written out once per piece (inlined with the piece a constant), so
        // that each piece's loop has its own branch for the predictor.
        let mut add = |piece: Piece| {
            let (n, piece_key, piece_psq, mismatch) = self.piece_sums(piece);
            board_mismatch |= mismatch;
            count_mismatch |= u32::from(self.piece_count[piece]) != n;
            material_key ^= zobrist::material_of_count(piece, n);
            key ^= piece_key;
            psq += piece_psq;
            if piece.role() == Role::Pawn {
                pawn_key ^= piece_key;
            } else {
                npm[piece.color()] += n as i32 * psqt::mg_value(piece.role());
            }
        };
        add(Piece::WhitePawn);
        add(Piece::WhiteKnight);
        add(Piece::WhiteBishop);
        add(Piece::WhiteRook);
        add(Piece::WhiteQueen);
        add(Piece::WhiteKing);
        add(Piece::BlackPawn);
        add(Piece::BlackKnight);
        add(Piece::BlackBishop);
        add(Piece::BlackRook);
        add(Piece::BlackQueen);
        add(Piece::BlackKing);
        if board_mismatch {
            return Err(StateField::Mailbox);
        }
        if self.board.iter().filter(|p| p.is_some()).count() != occupied.count() as usize {
            return Err(StateField::MailboxExtra);
        }
        if count_mismatch {
            return Err(StateField::PieceCounts);
        }
        key ^= zobrist::castling(c.castling_rights);
        if let Some(ep) = c.ep_square {
            key ^= zobrist::en_passant(ep.file());
        }
        if self.side_to_move == Color::White {
            key ^= zobrist::WHITE_TO_MOVE;
        }
        if key != st.key {
            return Err(StateField::Key);
        }
        if pawn_key != c.pawn_key {
            return Err(StateField::PawnKey);
        }
        if psq != c.psq {
            return Err(StateField::Psq);
        }
        if material_key != c.material_key {
            return Err(StateField::MaterialKey);
        }
        if npm != c.non_pawn_material {
            return Err(StateField::NonPawnMaterial);
        }
        if self.piece_count[Piece::WhiteKing] != 1 || self.piece_count[Piece::BlackKing] != 1 {
            return Err(StateField::Kings);
        }
        if c.ep_square.is_some() && self.compute_ep_square() != c.ep_square {
            return Err(StateField::EnPassant);
        }
        if st.checkers != self.compute_checkers() {
            return Err(StateField::Checkers);
        }
        let (blockers, pinners, check_squares) = self.check_info();
        // One branch for the ten bitboards (a derived `==` branches on each).
        let differ = |a: Bitboard, b: Bitboard| (a ^ b).0;
        let (cs, scs) = (&check_squares, &st.check_squares);
        let diff = differ(blockers.white, st.blockers_for_king.white)
            | differ(blockers.black, st.blockers_for_king.black)
            | differ(pinners.white, st.pinners.white)
            | differ(pinners.black, st.pinners.black)
            | differ(cs.pawn, scs.pawn)
            | differ(cs.knight, scs.knight)
            | differ(cs.bishop, scs.bishop)
            | differ(cs.rook, scs.rook)
            | differ(cs.queen, scs.queen)
            | differ(cs.king, scs.king);
        if diff != 0 {
            return Err(if blockers != st.blockers_for_king {
                StateField::Blockers
            } else if pinners != st.pinners {
                StateField::Pinners
            } else {
                StateField::CheckSquares
            });
        }
        if c.castling_rights != 0 && !self.castling_rights_consistent() {
            return Err(StateField::CastlingRights);
        }
        let them = !self.side_to_move;
        if self.is_attacked_by(self.side_to_move, self.king(them), occupied) {
            return Err(StateField::OpponentInCheck);
        }
        Ok(())
    }

    /// Compares the three keys with their from-scratch values: the
    /// Polyglot key (the pieces from their bitboards, the side to move, and
    /// the castling rights and en-passant square the state holds, the
    /// square counted only when a pawn can capture there), the pawn key and
    /// the material key (from the bitboards' counts): `replay --verify
    /// keys` runs this after every move, through a [`KeyCheck`] that keeps
    /// the shares of the pieces a move left alone. Castling rights and the en-passant
    /// square are history, not board: that they are right is
    /// [`Position::verify_state`]'s check, with every other field.
    pub fn verify_keys(&self) -> Result<(), StateField> {
        KeyCheck::new().check(self)
    }

    /// Flips a bit of one of the three keys in the current state, as a bug
    /// in `do_move` would: for tests of the verifiers.
    #[cfg(test)]
    pub(crate) fn corrupt_key(&mut self, field: StateField) {
        let st = self.states.last_mut().expect("a state");
        match field {
            StateField::Key => st.key ^= 1 << 17,
            StateField::PawnKey => st.copied.pawn_key ^= 1 << 17,
            StateField::MaterialKey => st.copied.material_key ^= 1 << 17,
            other => panic!("corrupt_key: {other} is not a key"),
        }
    }

    /// For `piece`: its count, the xor of its square keys, the sum of its
    /// piece-square scores, and whether the mailbox disagrees on any of its
    /// squares.
    #[inline(always)]
    fn piece_sums(&self, piece: Piece) -> (u32, u64, Tapered, bool) {
        let pieces = self.pieces(piece.color(), piece.role());
        let mut key = 0;
        let mut psq = Tapered::ZERO;
        let mut mismatch = false;
        for sq in pieces {
            mismatch |= self.board[sq.to_usize()] != Some(piece);
            key ^= zobrist::piece_square(piece, sq);
            psq += psqt::psq(piece, sq);
        }
        (pieces.count(), key, psq, mismatch)
    }

    /// Whether a legal en-passant capture exists (what FEN output shows).
    pub fn has_legal_en_passant(&self) -> bool {
        let Some(ep) = self.ep_square() else { return false };
        let us = self.side_to_move;
        Iterator::any(&mut (pawn_attacks(!us, ep) & self.pieces(us, Role::Pawn)), |from| {
            self.en_passant_is_legal(from, ep)
        })
    }

    /// Every castling right still held has its king and rook in place.
    fn castling_rights_consistent(&self) -> bool {
        let rights = self.castling_rights();
        (0..4).all(|i| {
            if rights & (1 << i) == 0 {
                return true;
            }
            let color = Color::from_index(i / 2);
            let king_ok = self.pieces(color, Role::King).any()
                && self.king(color).rank() == color.backrank()
                && self.castling_rights_mask[self.king(color).to_usize()] & (1 << i) != 0;
            let rook_ok = self.castling_rook[i]
                .is_some_and(|sq| self.board[sq.to_usize()] == Some(Piece::new(color, Role::Rook)));
            king_ok && rook_ok
        })
    }
}

/// The part of a position's state that [`Position::verify_state`] found
/// wrong: an incremental field that differs from its from-scratch value,
/// or two representations of the board that disagree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum StateField {
    /// The colour and role bitboards overlap or miss occupied squares.
    #[error("bitboards overlap or disagree with the occupancy")]
    Occupancy,
    /// A square's mailbox entry is not the piece its bitboards hold.
    #[error("mailbox disagrees with the bitboards")]
    Mailbox,
    /// The mailbox holds pieces on squares the bitboards leave empty.
    #[error("mailbox holds pieces the bitboards lack")]
    MailboxExtra,
    /// The piece counts.
    #[error("piece counts")]
    PieceCounts,
    /// A side without exactly one king.
    #[error("kings")]
    Kings,
    /// The Zobrist key.
    #[error("key")]
    Key,
    /// The pawn key.
    #[error("pawn key")]
    PawnKey,
    /// The material key.
    #[error("material key")]
    MaterialKey,
    /// The non-pawn material per side.
    #[error("non-pawn material")]
    NonPawnMaterial,
    /// The piece-square score.
    #[error("piece-square score")]
    Psq,
    /// The en-passant square.
    #[error("en-passant square")]
    EnPassant,
    /// The pieces giving check.
    #[error("checkers")]
    Checkers,
    /// The pieces shielding each king.
    #[error("blockers for king")]
    Blockers,
    /// The sliders pinning those blockers.
    #[error("pinners")]
    Pinners,
    /// The squares from which each role gives check.
    #[error("check squares")]
    CheckSquares,
    /// Castling rights without their king and rook in place.
    #[error("castling rights")]
    CastlingRights,
    /// The side not to move is in check (no legal position).
    #[error("side not to move in check")]
    OpponentInCheck,
}

/// The keys of boards computed from scratch, one board after another, as
/// `replay --verify keys` checks them after every move.
///
/// A board's Polyglot key, pawn key and material key are XORs of shares,
/// one per piece (white pawn, black pawn, ...), each a function of that
/// piece's bitboard alone: the keys of its squares, and of its count. The
/// check keeps each share with the bitboard it was computed from and
/// computes it again only when the bitboard differs: a move changes one or
/// two pieces' bitboards, so the other ten shares are known. This is a
/// cache of a pure function of the board, not the incremental key: every
/// share is what a full computation from the bitboards gives, and the
/// keys are compared with the incremental ones as
/// [`Position::verify_keys`] compares them (which computes every share).
#[derive(Clone, Debug)]
pub struct KeyCheck {
    /// The bitboard each share was computed from; a thirteenth, empty,
    /// slot takes the work of a piece that did not change.
    boards: [u64; 13],
    /// Each piece's share of the Polyglot key (its squares).
    squares: [u64; 13],
    /// Each piece's share of the material key (its count).
    counts: [u64; 13],
    /// The XOR of the twelve pieces' shares of the Polyglot key...
    key: u64,
    /// ... and of the material key.
    material: u64,
}

impl Default for KeyCheck {
    fn default() -> KeyCheck {
        KeyCheck::new()
    }
}

/// The slot of [`KeyCheck`] that no piece has.
const NO_PIECE: usize = 12;

impl KeyCheck {
    /// A check with no share known: the first board computes all twelve.
    pub fn new() -> KeyCheck {
        // No board has all 64 squares of one piece: every share is computed
        // on first use.
        let mut boards = [u64::MAX; 13];
        let mut counts = [0; 13];
        // The empty slot holds what it computes, so it changes no sum.
        boards[NO_PIECE] = 0;
        counts[NO_PIECE] = zobrist::material_of_count(Piece::ALL[0], 0);
        KeyCheck { boards, squares: [0; 13], counts, key: 0, material: 0 }
    }

    /// Computes the shares of slot `i` from `board`, and the sums with
    /// them in place of the old ones.
    #[inline(always)]
    fn compute(&mut self, i: usize, board: u64) {
        let piece = Piece::ALL[i % 12];
        let board = Bitboard(board);
        let squares = zobrist::squares_key(piece, board);
        let count = zobrist::material_of_count(piece, board.count());
        self.key ^= self.squares[i] ^ squares;
        self.material ^= self.counts[i] ^ count;
        self.boards[i] = board.0;
        self.squares[i] = squares;
        self.counts[i] = count;
    }

    /// Compares `pos`'s incremental Polyglot key, pawn key and material key
    /// with the keys of its board computed from scratch (castling rights
    /// and the en-passant square as the state holds them, the en-passant
    /// file counted only when a pawn can capture); names the first that
    /// differs.
    #[inline(always)]
    pub fn check(&mut self, pos: &Position) -> Result<(), StateField> {
        // The pieces whose bitboards changed, found without a branch.
        let mut boards = [0u64; 13];
        for (board, piece) in boards.iter_mut().zip(Piece::ALL) {
            *board = pos.pieces(piece.color(), piece.role()).0;
        }
        let mut changed = 0u32;
        for (i, (&now, &then)) in boards.iter().zip(&self.boards).enumerate() {
            changed |= u32::from(now != then) << i;
        }
        if changed.count_ones() <= 2 {
            // A move, castling and en passant included, changes at most two
            // pieces: two slots, the unused ones empty, and no branch on
            // which.
            let first = (changed.trailing_zeros() as usize).min(NO_PIECE);
            let rest = changed & changed.wrapping_sub(1);
            let second = (rest.trailing_zeros() as usize).min(NO_PIECE);
            self.compute(first, boards[first]);
            self.compute(second, boards[second]);
        } else {
            // A game's start, a promotion that captures.
            for i in Bitboard(u64::from(changed)) {
                let i = i.to_usize();
                self.compute(i, boards[i]);
            }
        }
        let mut key = self.key;
        let material_key = self.material;
        let pawn_key = zobrist::NO_PAWNS
            ^ self.squares[Piece::WhitePawn.to_usize()]
            ^ self.squares[Piece::BlackPawn.to_usize()];
        let st = pos.st();
        let c = &st.copied;
        key ^= zobrist::castling(c.castling_rights);
        if let Some(ep) = pos.compute_ep_square() {
            key ^= zobrist::en_passant(ep.file());
        }
        if pos.side_to_move == Color::White {
            key ^= zobrist::WHITE_TO_MOVE;
        }
        if key != st.key {
            return Err(StateField::Key);
        }
        if pawn_key != c.pawn_key {
            return Err(StateField::PawnKey);
        }
        if material_key != c.material_key {
            return Err(StateField::MaterialKey);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `verify_keys` names each key whose incremental value is corrupted,
    /// passes the uncorrupted positions, and agrees with the from-scratch
    /// functions on them.
    #[test]
    fn verify_keys_catches_each_corrupted_key() {
        let fens = [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
            "4k3/8/8/1b6/8/8/3R4/R3K2r w Q - 0 1",
        ];
        for fen in fens {
            let pos = Position::from_fen(fen).unwrap();
            assert_eq!(pos.verify_keys(), Ok(()), "{fen}");
            assert_eq!(pos.key(), pos.compute_key(), "{fen}");
            for field in [StateField::Key, StateField::PawnKey, StateField::MaterialKey] {
                let mut bad = pos.clone();
                bad.corrupt_key(field);
                assert_eq!(bad.verify_keys(), Err(field), "{fen}");
                assert_eq!(bad.verify_state(), Err(field), "{fen}");
            }
        }
    }

    /// A [`KeyCheck`] kept from one position to the next (the moves of
    /// random games, and jumps to unrelated positions, as between games)
    /// gives what a full computation gives, and its kept shares never hide
    /// a corrupted key: every one is named, at every ply.
    #[test]
    fn a_key_check_kept_across_positions_agrees_and_catches_each_key() {
        let starts = [
            crate::chess::fen::STARTPOS,
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "8/P6k/8/8/8/8/6Kp/8 w - - 0 1",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
        ];
        let mut keys = KeyCheck::new();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut plies = 0;
        for game in 0..40 {
            let mut pos = Position::from_fen(starts[game % starts.len()]).unwrap();
            for _ in 0..120 {
                assert_eq!(keys.check(&pos), Ok(()), "{}", pos.fen());
                for field in [StateField::Key, StateField::PawnKey, StateField::MaterialKey] {
                    let mut bad = pos.clone();
                    bad.corrupt_key(field);
                    assert_eq!(keys.check(&bad), Err(field), "{}", pos.fen());
                }
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                pos.do_move(moves[(state % moves.len() as u64) as usize]);
                plies += 1;
            }
        }
        assert!(plies > 3000, "{plies}");
    }

    /// A piece's share of the key is the XOR of its squares' keys.
    #[test]
    fn squares_key_is_the_xor_of_the_squares_keys() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // Sparse and dense bitboards alike.
            let squares = Bitboard(state & (state >> (state % 7)));
            for piece in Piece::ALL {
                let mut expected = 0;
                for sq in squares {
                    expected ^= zobrist::piece_square(piece, sq);
                }
                assert_eq!(zobrist::squares_key(piece, squares), expected);
            }
        }
    }

    /// `verify_state` (what `replay --verify full` runs after every move)
    /// must catch every kind of corruption, each under its own name, and
    /// pass the uncorrupted position.
    #[test]
    fn verify_state_catches_each_corrupted_field() {
        let fens = [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
            "4k3/8/8/1b6/8/8/3R4/R3K2r w Q - 0 1",
        ];
        type Corruption = (&'static str, fn(&mut Position));
        let corruptions: [Corruption; 15] = [
            ("key", |p| p.states.last_mut().unwrap().key ^= 1),
            ("pawn key", |p| p.states.last_mut().unwrap().copied.pawn_key ^= 1),
            ("material key", |p| p.states.last_mut().unwrap().copied.material_key ^= 1),
            ("non-pawn material", |p| {
                p.states.last_mut().unwrap().copied.non_pawn_material.white += 1
            }),
            ("piece-square score", |p| p.states.last_mut().unwrap().copied.psq.mg += 1),
            ("checkers", |p| p.states.last_mut().unwrap().checkers ^= Square::D4),
            ("blockers for king", |p| {
                p.states.last_mut().unwrap().blockers_for_king.black ^= Square::D4
            }),
            ("pinners", |p| p.states.last_mut().unwrap().pinners.white ^= Square::D4),
            ("check squares", |p| p.states.last_mut().unwrap().check_squares.knight ^= Square::D4),
            ("en-passant square", |p| {
                let ep = &mut p.states.last_mut().unwrap().copied.ep_square;
                *ep = if ep.is_some() { None } else { Some(Square::E6) };
            }),
            ("castling rights", |p| p.castling_rook = [Some(Square::D4); 4]),
            ("mailbox disagrees with the bitboards", |p| {
                let sq = p.king(Color::White).to_usize();
                p.board[sq] = Some(Piece::WhiteQueen);
            }),
            ("mailbox holds pieces the bitboards lack", |p| {
                let sq = (!p.occupied()).first().unwrap().to_usize();
                p.board[sq] = Some(Piece::BlackKnight);
            }),
            ("piece counts", |p| p.piece_count[Piece::WhitePawn] += 1),
            ("bitboards overlap or disagree with the occupancy", |p| {
                p.by_role.knight ^= Square::D4
            }),
        ];
        for fen in fens {
            let pos = Position::from_fen(fen).unwrap();
            assert_eq!(pos.verify_state(), Ok(()), "{fen}");
            for (name, corrupt) in corruptions {
                let mut bad = pos.clone();
                corrupt(&mut bad);
                let got = bad.verify_state().map_err(|field| field.to_string());
                assert!(got.is_err(), "{fen}: {name} corruption passed");
                // Where a corruption changes more than one derived value (a
                // set en-passant square also changes the key), an earlier
                // check may name it; otherwise it must be named exactly.
                if name != "en-passant square" {
                    assert_eq!(got, Err(name.to_string()), "{fen}");
                }
            }
        }
    }
}
