//! [`Position`]: the board (a mailbox plus bitboards by role and by color),
//! the side to move, castling geometry, and a stack of [`StateInfo`], after
//! Stockfish's `Position`.
//!
//! [`Position::do_move`] updates everything incrementally (keys, material,
//! piece-square score, castling rights, en passant, checkers, pins, check
//! squares) and pushes the new state; [`Position::undo_move`] pops it and
//! puts the pieces back, recomputing nothing. The `compute_*` functions
//! rebuild each incremental field from scratch; [`Position::verify_state`]
//! compares the two, and debug builds call it after every move.
//!
//! ```
//! use kibitz::{Move, Position, Square};
//!
//! let mut pos = Position::startpos();
//! let e4 = Move::normal(Square::E2, Square::E4);
//! assert!(pos.is_legal(e4));
//! pos.do_move(e4);
//! assert_eq!(pos.key(), 0x823c9b50fd114196); // Polyglot's test vector
//! pos.undo_move(e4);
//! assert_eq!(pos, Position::startpos());
//! ```

use std::fmt;

use crate::chess::{
    attacks::{
        between, bishop_attacks, bishop_rays, king_attacks, knight_attacks, line, pawn_attacks,
        rook_attacks, rook_rays,
    },
    bitboard::Bitboard,
    movegen::{self, MoveSink},
    mv::{Move, MoveKind, MoveList},
    psqt::{self, Score},
    state::{CopiedState, DirtyPiece, StateInfo},
    types::{
        ByColor, ByPiece, ByRole, CastlingSide, Color, File, Piece, Rank, Role, Square,
        castling_bit,
    },
    zobrist,
};

/// Capacity of the state stack reserved when a position is created (18 KiB):
/// a game or a search deeper than this grows it once. (1024 states cost a
/// 147 KiB allocation per position, which glibc serves with mmap: slow when
/// a replay sets up a position per game.)
const STATE_CAPACITY: usize = 128;

/// Piece values used by static exchange evaluation ([`Position::see_ge`]).
pub const SEE_VALUE: ByRole<i32> =
    ByRole { pawn: 100, knight: 320, bishop: 330, rook: 500, queen: 950, king: 0 };

/// A chess position, standard or Chess960, with its history of states.
#[derive(PartialEq, Eq)]
pub struct Position {
    pub(crate) board: [Option<Piece>; 64],
    pub(crate) by_role: ByRole<Bitboard>,
    pub(crate) by_color: ByColor<Bitboard>,
    pub(crate) piece_count: ByPiece<u8>,
    pub(crate) side_to_move: Color,
    /// Plies since the start of the game (from the FEN's fullmove number).
    pub(crate) game_ply: u32,
    pub(crate) chess960: bool,
    /// For each square, the castling rights lost when a piece leaves or
    /// reaches it (the king's and the castling rooks' squares).
    pub(crate) castling_rights_mask: [u8; 64],
    /// The castling rook's square for each right (index = bit number).
    pub(crate) castling_rook: [Option<Square>; 4],
    /// Squares that must be empty to castle (king's and rook's paths, the
    /// king and rook themselves excluded).
    pub(crate) castling_path: [Bitboard; 4],
    /// Squares the king crosses or lands on, which must not be attacked.
    pub(crate) castling_king_path: [Bitboard; 4],
    /// Whether the right has standard geometry (king on the e-file, rook in
    /// the corner), which allows a faster legality test.
    pub(crate) castling_standard: [bool; 4],
    pub(crate) states: Vec<StateInfo>,
}

impl Clone for Position {
    fn clone(&self) -> Position {
        let mut states = Vec::with_capacity(self.states.len().max(STATE_CAPACITY));
        states.extend_from_slice(&self.states);
        Position { states, ..self.shallow_copy() }
    }

    /// Reuses `self`'s state stack: replaying many games on one position
    /// allocates nothing.
    fn clone_from(&mut self, source: &Position) {
        let states = std::mem::take(&mut self.states);
        *self = Position { states, ..source.shallow_copy() };
        self.states.clear();
        self.states.extend_from_slice(&source.states);
    }
}

impl Position {
    /// Every field but the state stack.
    fn shallow_copy(&self) -> Position {
        Position {
            board: self.board,
            by_role: self.by_role,
            by_color: self.by_color,
            piece_count: self.piece_count,
            side_to_move: self.side_to_move,
            game_ply: self.game_ply,
            chess960: self.chess960,
            castling_rights_mask: self.castling_rights_mask,
            castling_rook: self.castling_rook,
            castling_path: self.castling_path,
            castling_king_path: self.castling_king_path,
            castling_standard: self.castling_standard,
            states: Vec::new(),
        }
    }
}

/// How castling rights are written and read.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum CastlingMode {
    /// Standard chess: king on the e-file, rooks in the corners, `KQkq`.
    Standard,
    /// Chess960: any king and rook files, X-FEN or Shredder-FEN letters, and
    /// castling written in UCI as the king taking its own rook.
    Chess960,
}

impl Position {
    /// An empty board with White to move (not a legal position: used while
    /// building one).
    pub(crate) fn empty() -> Position {
        let mut states = Vec::with_capacity(STATE_CAPACITY);
        states.push(StateInfo {
            copied: CopiedState {
                pawn_key: zobrist::NO_PAWNS,
                material_key: 0,
                non_pawn_material: ByColor::default(),
                psq: Score::ZERO,
                castling_rights: 0,
                rule50: 0,
                plies_from_null: 0,
                ep_square: None,
            },
            key: 0,
            checkers: Bitboard::EMPTY,
            blockers_for_king: ByColor::default(),
            pinners: ByColor::default(),
            check_squares: ByRole::default(),
            captured: None,
            dirty: DirtyPiece::NONE,
        });
        Position {
            board: [None; 64],
            by_role: ByRole::default(),
            by_color: ByColor::default(),
            piece_count: ByPiece::default(),
            side_to_move: Color::White,
            game_ply: 0,
            chess960: false,
            castling_rights_mask: [0; 64],
            castling_rook: [None; 4],
            castling_path: [Bitboard::EMPTY; 4],
            castling_king_path: [Bitboard::EMPTY; 4],
            castling_standard: [false; 4],
            states,
        }
    }

    /// The standard starting position.
    pub fn startpos() -> Position {
        static STARTPOS: std::sync::OnceLock<Position> = std::sync::OnceLock::new();
        STARTPOS
            .get_or_init(|| {
                Position::from_fen(crate::chess::fen::STARTPOS)
                    .expect("the start position is valid")
            })
            .clone()
    }

    // ---------------------------------------------------------------------
    // Accessors
    // ---------------------------------------------------------------------

    /// The current state (the top of the stack).
    #[inline]
    pub fn st(&self) -> &StateInfo {
        // Safety: the stack is never empty: it is created with one state and
        // `undo_move` refuses to pop the last one. Skipping the check saves
        // a branch on every access in the search.
        unsafe { self.states.last().unwrap_unchecked() }
    }

    /// All states from the position the board was set up from to now.
    #[inline]
    pub fn states(&self) -> &[StateInfo] {
        &self.states
    }

    /// The piece on `sq`.
    #[inline]
    pub fn piece_on(&self, sq: Square) -> Option<Piece> {
        self.board[sq.to_usize()]
    }

    /// All occupied squares.
    #[inline]
    pub fn occupied(&self) -> Bitboard {
        self.by_color.white | self.by_color.black
    }

    /// The squares of `color`'s pieces.
    #[inline]
    pub fn pieces_of(&self, color: Color) -> Bitboard {
        self.by_color[color]
    }

    /// The squares of all pieces of `role`, both colors.
    #[inline]
    pub fn pieces_by_role(&self, role: Role) -> Bitboard {
        self.by_role[role]
    }

    /// The squares of `color`'s pieces of `role`.
    #[inline]
    pub fn pieces(&self, color: Color, role: Role) -> Bitboard {
        self.by_color[color] & self.by_role[role]
    }

    /// The number of `piece` on the board.
    #[inline]
    pub fn count(&self, piece: Piece) -> u32 {
        u32::from(self.piece_count[piece])
    }

    /// The square of `color`'s king.
    #[inline]
    pub fn king(&self, color: Color) -> Square {
        (self.by_role.king & self.by_color[color]).lsb()
    }

    /// The side to move.
    #[inline]
    pub fn side_to_move(&self) -> Color {
        self.side_to_move
    }

    /// Plies since the start of the game.
    #[inline]
    pub fn game_ply(&self) -> u32 {
        self.game_ply
    }

    /// The FEN fullmove number.
    #[inline]
    pub fn fullmove_number(&self) -> u32 {
        1 + self.game_ply / 2
    }

    /// Whether castling follows Chess960 conventions.
    #[inline]
    pub fn is_chess960(&self) -> bool {
        self.chess960
    }

    /// The castling mode.
    #[inline]
    pub fn castling_mode(&self) -> CastlingMode {
        if self.chess960 { CastlingMode::Chess960 } else { CastlingMode::Standard }
    }

    /// Switches between standard and Chess960 conventions (text only: the
    /// moves are the same).
    pub fn set_chess960(&mut self, chess960: bool) {
        self.chess960 = chess960;
    }

    /// The Polyglot Zobrist key.
    #[inline]
    pub fn key(&self) -> u64 {
        self.st().key
    }

    /// The pawn key.
    #[inline]
    pub fn pawn_key(&self) -> u64 {
        self.st().copied.pawn_key
    }

    /// The material key.
    #[inline]
    pub fn material_key(&self) -> u64 {
        self.st().copied.material_key
    }

    /// The incremental piece-square score, White's view.
    #[inline]
    pub fn psq(&self) -> Score {
        self.st().copied.psq
    }

    /// `color`'s middlegame material without pawns.
    #[inline]
    pub fn non_pawn_material(&self, color: Color) -> i32 {
        self.st().copied.non_pawn_material[color]
    }

    /// Castling rights, bits as in [`castling_bit`].
    #[inline]
    pub fn castling_rights(&self) -> u8 {
        self.st().copied.castling_rights
    }

    /// Whether `color` may still castle on `side`.
    #[inline]
    pub fn can_castle(&self, color: Color, side: CastlingSide) -> bool {
        self.castling_rights() & castling_bit(color, side) != 0
    }

    /// The rook that castles on `side` for `color`, while the right exists.
    #[inline]
    pub fn castling_rook(&self, color: Color, side: CastlingSide) -> Option<Square> {
        if self.can_castle(color, side) {
            self.castling_rook[usize::from(color as u8 * 2 + side as u8)]
        } else {
            None
        }
    }

    /// The en-passant square, when a pawn of the side to move attacks it.
    #[inline]
    pub fn ep_square(&self) -> Option<Square> {
        self.st().copied.ep_square
    }

    /// Plies since the last capture or pawn move.
    #[inline]
    pub fn rule50(&self) -> u32 {
        u32::from(self.st().copied.rule50)
    }

    /// Plies since the last null move.
    #[inline]
    pub fn plies_from_null(&self) -> u32 {
        u32::from(self.st().copied.plies_from_null)
    }

    /// Enemy pieces giving check.
    #[inline]
    pub fn checkers(&self) -> Bitboard {
        self.st().checkers
    }

    /// Whether the side to move is in check.
    #[inline]
    pub fn in_check(&self) -> bool {
        self.st().checkers.any()
    }

    /// Pieces of either color that alone shield `color`'s king from a slider.
    #[inline]
    pub fn blockers_for_king(&self, color: Color) -> Bitboard {
        self.st().blockers_for_king[color]
    }

    /// `color`'s sliders pinning a piece to the other king.
    #[inline]
    pub fn pinners(&self, color: Color) -> Bitboard {
        self.st().pinners[color]
    }

    /// Squares from which a piece of `role` of the side to move gives check.
    #[inline]
    pub fn check_squares(&self, role: Role) -> Bitboard {
        self.st().check_squares[role]
    }

    /// The piece the last move captured.
    #[inline]
    pub fn captured_piece(&self) -> Option<Piece> {
        self.st().captured
    }

    /// Whether `m` captures something (en passant included, castling not).
    #[inline]
    pub fn is_capture(&self, m: Move) -> bool {
        match m.kind() {
            MoveKind::Castling => false,
            MoveKind::EnPassant => true,
            _ => self.board[m.to().to_usize()].is_some(),
        }
    }

    /// Whether `m` captures or promotes (what the search calls "tactical").
    #[inline]
    pub fn is_capture_or_promotion(&self, m: Move) -> bool {
        m.is_promotion() || self.is_capture(m)
    }

    /// The piece `m` moves.
    #[inline]
    pub fn moved_piece(&self, m: Move) -> Option<Piece> {
        self.board[m.from().to_usize()]
    }

    // ---------------------------------------------------------------------
    // Board edits (no keys: do_move updates those itself)
    // ---------------------------------------------------------------------

    #[inline]
    pub(crate) fn put_piece(&mut self, piece: Piece, sq: Square) {
        self.board[sq.to_usize()] = Some(piece);
        self.by_role[piece.role()] |= sq;
        self.by_color[piece.color()] |= sq;
        self.piece_count[piece] += 1;
    }

    #[inline]
    fn remove_piece(&mut self, piece: Piece, sq: Square) {
        self.board[sq.to_usize()] = None;
        self.by_role[piece.role()] ^= sq;
        self.by_color[piece.color()] ^= sq;
        self.piece_count[piece] -= 1;
    }

    #[inline]
    fn move_piece(&mut self, piece: Piece, from: Square, to: Square) {
        let from_to = Bitboard::from(from) | to;
        self.board[from.to_usize()] = None;
        self.board[to.to_usize()] = Some(piece);
        self.by_role[piece.role()] ^= from_to;
        self.by_color[piece.color()] ^= from_to;
    }

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
    fn check_info(&self) -> (ByColor<Bitboard>, ByColor<Bitboard>, ByRole<Bitboard>) {
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
        debug_assert!(self.is_legal(m), "illegal move {m:?} in {}", self.fen());
        let us = self.side_to_move;
        let them = !us;
        let prev = self.st();
        let mut c = prev.copied;
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
    fn uncovers_check(&self, from: Square, to: Square) -> bool {
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
    /// [`SEE_VALUE`] units), both sides recapturing with their least
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

    // ---------------------------------------------------------------------
    // Draws
    // ---------------------------------------------------------------------

    /// How many earlier positions in the reversible stretch of the history
    /// (since the last capture, pawn move or null move) have the current key.
    pub fn repetitions(&self) -> u32 {
        let st = self.st();
        let end = usize::from(st.copied.rule50.min(st.copied.plies_from_null));
        let n = self.states.len();
        let key = st.key;
        let mut count = 0;
        let mut i = 4;
        while i <= end && i < n {
            if self.states[n - 1 - i].key == key {
                count += 1;
            }
            i += 2;
        }
        count
    }

    /// Whether the current position occurred before, fewer than `ply` plies back
    /// (a repetition inside the search tree, when `ply` is the distance from
    /// the root), or repeats twice in all: the search scores both as draws.
    pub fn is_repetition(&self, ply: usize) -> bool {
        let st = self.st();
        let end = usize::from(st.copied.rule50.min(st.copied.plies_from_null));
        let n = self.states.len();
        let key = st.key;
        let mut seen = 0;
        let mut i = 4;
        while i <= end && i < n {
            if self.states[n - 1 - i].key == key {
                if i < ply {
                    return true;
                }
                seen += 1;
                if seen >= 2 {
                    return true;
                }
            }
            i += 2;
        }
        false
    }

    /// Whether the 50-move rule applies: 100 plies without capture or pawn
    /// move, unless the side to move is checkmated.
    pub fn is_fifty_move_draw(&self) -> bool {
        self.rule50() >= 100 && (!self.in_check() || self.has_legal_moves())
    }

    /// Whether neither side can ever mate: king against king, king and minor
    /// piece against king, or bishops all on squares of one color.
    pub fn has_insufficient_material(&self) -> bool {
        let r = &self.by_role;
        if (r.pawn | r.rook | r.queen).any() {
            return false;
        }
        let minors = r.knight | r.bishop;
        if minors.count() <= 1 {
            return true;
        }
        if r.knight.is_empty() {
            // Only bishops: a draw if all stand on one color.
            return (r.bishop & Bitboard::DARK_SQUARES).is_empty()
                || (r.bishop & !Bitboard::DARK_SQUARES).is_empty();
        }
        false
    }

    /// Whether the side to move has a legal move.
    pub fn has_legal_moves(&self) -> bool {
        let mut counter = movegen::CountSink::default();
        self.generate_into::<{ movegen::LEGAL }, _>(&mut counter);
        counter.0 > 0
    }

    /// Whether the side to move is checkmated.
    pub fn is_checkmate(&self) -> bool {
        self.in_check() && !self.has_legal_moves()
    }

    /// Whether the side to move is stalemated.
    pub fn is_stalemate(&self) -> bool {
        !self.in_check() && !self.has_legal_moves()
    }

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
    pub fn compute_psq(&self) -> Score {
        let mut score = Score::ZERO;
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
        let mut psq = Score::ZERO;
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

    /// For `piece`: its count, the xor of its square keys, the sum of its
    /// piece-square scores, and whether the mailbox disagrees on any of its
    /// squares.
    #[inline(always)]
    fn piece_sums(&self, piece: Piece) -> (u32, u64, Score, bool) {
        let pieces = self.pieces(piece.color(), piece.role());
        let mut key = 0;
        let mut psq = Score::ZERO;
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

    // ---------------------------------------------------------------------
    // Setting up
    // ---------------------------------------------------------------------

    /// Records a castling right for `color` with the rook on `rook`
    /// (the king must stand on its back rank).
    pub(crate) fn add_castling_right(&mut self, color: Color, rook: Square) {
        let king = self.king(color);
        let side = if rook > king { CastlingSide::KingSide } else { CastlingSide::QueenSide };
        let bit = castling_bit(color, side);
        let index = usize::from(color as u8 * 2 + side as u8);
        self.states[0].copied.castling_rights |= bit;
        self.castling_rights_mask[king.to_usize()] |= bit;
        self.castling_rights_mask[rook.to_usize()] |= bit;
        self.castling_rook[index] = Some(rook);
        let (kto, rto) = Position::castling_destinations(color, king, rook);
        self.castling_path[index] = (between(rook, rto) | rto | between(king, kto) | kto)
            & !Bitboard::from(king)
            & !Bitboard::from(rook);
        self.castling_king_path[index] = between(king, kto) | kto;
        self.castling_standard[index] =
            king.file() == File::E && matches!(rook.file(), File::A | File::H);
    }

    /// Computes the root state from the board (after pieces, side to move,
    /// castling rights and a tentative en-passant square are in place).
    pub(crate) fn init_state(&mut self) {
        let fresh = self.compute_state();
        let st = &mut self.states[0];
        let captured = st.captured;
        let rule50 = st.copied.rule50;
        let plies_from_null = st.copied.plies_from_null;
        let rights = st.copied.castling_rights;
        *st = fresh;
        st.copied.rule50 = rule50;
        st.copied.plies_from_null = plies_from_null;
        st.copied.castling_rights = rights;
        st.captured = captured;
        // The key depends on the validated en-passant square: recompute.
        self.states[0].key = self.compute_key();
    }

    /// Forgets the history: the current state becomes the only one, so the
    /// position can no longer undo moves or see repetitions before now.
    pub fn forget_history(&mut self) {
        let st = *self.st();
        self.states.clear();
        self.states.push(st);
    }
}

/// The square offset of a pawn step for `color`.
#[inline]
pub(crate) const fn pawn_push(color: Color) -> i32 {
    match color {
        Color::White => 8,
        Color::Black => -8,
    }
}

#[inline]
fn nonempty(b: Bitboard) -> Option<Bitboard> {
    if b.any() { Some(b) } else { None }
}

/// Set tests against a mask, to keep long attack expressions readable.
trait MaskTest {
    fn any_in(self, mask: Bitboard) -> bool;
    fn none_in(self, mask: Bitboard) -> bool;
}

impl MaskTest for Bitboard {
    #[inline]
    fn any_in(self, mask: Bitboard) -> bool {
        (self & mask).any()
    }

    #[inline]
    fn none_in(self, mask: Bitboard) -> bool {
        (self & mask).is_empty()
    }
}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Position({:?}, key {:#018x}, {} states)",
            self.fen(),
            self.key(),
            self.states.len()
        )
    }
}

impl fmt::Display for Position {
    /// Draws the board, rank 8 on top, then the FEN and the key.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for rank in Rank::ALL.iter().rev() {
            for file in File::ALL {
                let c = self.piece_on(Square::from_coords(file, *rank)).map_or('.', Piece::char);
                write!(f, "{c}{}", if file == File::H { "\n" } else { " " })?;
            }
        }
        writeln!(f, "fen {}", self.fen())?;
        write!(f, "key {:016x}", self.key())
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    /// `verify_state` (what `replay --verify keys` runs after every move)
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
