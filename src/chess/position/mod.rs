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
//!
//! The type and its accessors are here; `make` makes and unmakes moves,
//! `legal` holds attacks, legality, checks and SEE, `draws` the end of the
//! game, and `verify` the from-scratch computations and the state verifier.

mod draws;
mod legal;
mod make;
mod verify;

pub use verify::{KeyCheck, StateField};

use std::fmt;

use crate::chess::{
    attacks::{
        between, bishop_attacks, bishop_rays, king_attacks, knight_attacks, line, pawn_attacks,
        rook_attacks, rook_rays,
    },
    bitboard::Bitboard,
    movegen,
    mv::{Move, MoveKind},
    psqt::{self, Tapered},
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

/// Piece values used by static exchange evaluation ([`Position::see_ge`]):
/// Stockfish 15.1's middlegame values, so that the search's exchange
/// thresholds are Stockfish's.
pub const SEE_VALUE: ByRole<i32> =
    ByRole { pawn: 126, knight: 781, bishop: 825, rook: 1276, queen: 2538, king: 0 };

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
        // Sliding attacks' lookups are chosen for this processor before the
        // first board is set up.
        crate::chess::attacks::choose_slider_kernel();
        let mut states = Vec::with_capacity(STATE_CAPACITY);
        states.push(StateInfo {
            copied: CopiedState {
                pawn_key: zobrist::NO_PAWNS,
                material_key: 0,
                non_pawn_material: ByColor::default(),
                psq: Tapered::ZERO,
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

    /// What stands on each square, a1 first.
    #[inline]
    pub fn board(&self) -> &[Option<Piece>; 64] {
        &self.board
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
    pub fn psq(&self) -> Tapered {
        self.st().copied.psq
    }

    /// `color`'s middlegame material without pawns.
    #[inline]
    pub fn non_pawn_material(&self, color: Color) -> i32 {
        self.st().copied.non_pawn_material[color]
    }

    /// Castling rights, bits as in `castling_bit` (White king side 1, queen side 2, Black 4 and 8).
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
