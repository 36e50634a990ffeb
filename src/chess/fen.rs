//! FEN and EPD position fields, in and out.
//!
//! Parsing is split as shakmaty splits it: [`Setup::parse`] checks the
//! syntax of the text (from bytes, so PGN tags need no UTF-8 check) and
//! gives an unvalidated [`Setup`]; [`Position::from_setup`] checks that the
//! setup is a position we can play from. Both return a [`FenError`] that
//! names the field and the reason.
//!
//! Castling rights may be written in X-FEN (`KQkq`, the outermost rook on
//! that side, or a file letter for an inner rook) or Shredder-FEN (`HAha`,
//! the rook's file). An en-passant field that no double step explains, or
//! that no pawn can capture on, is accepted and dropped: the position keeps
//! an en-passant square only when a pawn attacks it (Polyglot's rule, which
//! the key follows). FEN output writes the square only when the capture is
//! also legal (python-chess's and Lichess's convention), so a pawn pinned
//! against its king does not make one appear.
//!
//! ```
//! use kibitz::Position;
//!
//! let fen = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
//! let pos = Position::from_fen(fen)?;
//! assert_eq!(pos.fen(), fen);
//! assert_eq!(pos.legal_moves().len(), 48);
//!
//! let err = Position::from_fen("8/8/8/8/8/8/8/8 w - - 0 1").unwrap_err();
//! assert_eq!(err.to_string(), "invalid fen: board: white has no king");
//! # Ok::<(), kibitz::FenError>(())
//! ```

use std::fmt;

use crate::chess::{
    bitboard::Bitboard,
    position::{CastlingMode, Position, pawn_push},
    types::{CastlingSide, Color, File, Piece, Rank, Role, Square},
};

/// The standard starting position.
pub const STARTPOS: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// The field of a FEN an error is about.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum FenField {
    /// The piece placement.
    Board,
    /// The side to move.
    Turn,
    /// The castling rights.
    Castling,
    /// The en-passant square.
    EnPassant,
    /// The halfmove clock.
    Halfmoves,
    /// The fullmove number.
    Fullmoves,
    /// The text as a whole (missing or extra fields).
    Text,
}

impl fmt::Display for FenField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FenField::Board => "board",
            FenField::Turn => "side to move",
            FenField::Castling => "castling",
            FenField::EnPassant => "en passant",
            FenField::Halfmoves => "halfmove clock",
            FenField::Fullmoves => "fullmove number",
            FenField::Text => "text",
        })
    }
}

/// A FEN that cannot be read or is not a playable position.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct FenError {
    /// Which field is wrong.
    pub field: FenField,
    /// Why, in lowercase words.
    pub reason: String,
}

impl FenError {
    fn new(field: FenField, reason: impl Into<String>) -> FenError {
        FenError { field, reason: reason.into() }
    }
}

impl fmt::Display for FenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid fen: {}: {}", self.field, self.reason)
    }
}

impl std::error::Error for FenError {}

/// A parsed but unvalidated FEN.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Setup {
    /// The pieces, a1 first.
    pub board: [Option<Piece>; 64],
    /// The side to move.
    pub turn: Color,
    /// The castling field as written (`-` is empty), at most 4 letters.
    pub castling: Vec<u8>,
    /// The en-passant square as written.
    pub ep_square: Option<Square>,
    /// The halfmove clock (0 if the field is missing).
    pub halfmoves: u32,
    /// The fullmove number (1 if the field is missing or 0).
    pub fullmoves: u32,
}

fn describe(byte: u8) -> String {
    if byte.is_ascii_graphic() {
        format!("'{}'", byte as char)
    } else {
        format!("byte {byte:#04x}")
    }
}

impl Setup {
    /// Parses a FEN from bytes: 4 fields (EPD's position part) to 6, split by
    /// spaces or tabs. Leading and trailing whitespace is ignored.
    pub fn parse(text: &[u8]) -> Result<Setup, FenError> {
        let mut fields = text
            .split(|b| *b == b' ' || *b == b'\t' || *b == b'\r' || *b == b'\n')
            .filter(|f| !f.is_empty());
        let board_field = fields.next().ok_or_else(|| FenError::new(FenField::Text, "empty"))?;
        let board = parse_board(board_field)?;
        let turn = match fields.next() {
            Some(b"w") | Some(b"W") => Color::White,
            Some(b"b") | Some(b"B") => Color::Black,
            Some(other) => {
                return Err(FenError::new(
                    FenField::Turn,
                    format!("expected 'w' or 'b', found {:?}", String::from_utf8_lossy(other)),
                ));
            }
            None => return Err(FenError::new(FenField::Turn, "missing")),
        };
        let castling = match fields.next() {
            None => return Err(FenError::new(FenField::Castling, "missing")),
            Some(b"-") => Vec::new(),
            Some(c) => {
                if c.len() > 4 {
                    return Err(FenError::new(FenField::Castling, "more than four rights"));
                }
                if let Some(bad) = c
                    .iter()
                    .find(|b| !matches!(b, b'K' | b'Q' | b'k' | b'q' | b'A'..=b'H' | b'a'..=b'h'))
                {
                    return Err(FenError::new(
                        FenField::Castling,
                        format!("unexpected {}", describe(*bad)),
                    ));
                }
                c.to_vec()
            }
        };
        let ep_square = match fields.next() {
            None => return Err(FenError::new(FenField::EnPassant, "missing")),
            Some(b"-") => None,
            Some(e) => Some(Square::from_ascii(e).ok_or_else(|| {
                FenError::new(
                    FenField::EnPassant,
                    format!("expected a square or '-', found {:?}", String::from_utf8_lossy(e)),
                )
            })?),
        };
        let halfmoves = match fields.next() {
            None => 0,
            Some(h) => parse_number(h).ok_or_else(|| {
                FenError::new(
                    FenField::Halfmoves,
                    format!("expected a number, found {:?}", String::from_utf8_lossy(h)),
                )
            })?,
        };
        let fullmoves = match fields.next() {
            None => 1,
            Some(h) => parse_number(h).ok_or_else(|| {
                FenError::new(
                    FenField::Fullmoves,
                    format!("expected a number, found {:?}", String::from_utf8_lossy(h)),
                )
            })?,
        }
        .max(1);
        if let Some(extra) = fields.next() {
            return Err(FenError::new(
                FenField::Text,
                format!(
                    "unexpected field {:?} after the fullmove number",
                    String::from_utf8_lossy(extra)
                ),
            ));
        }
        Ok(Setup { board, turn, castling, ep_square, halfmoves, fullmoves })
    }
}

fn parse_number(text: &[u8]) -> Option<u32> {
    if text.is_empty() || text.len() > 9 || !text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(text.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0')))
}

fn parse_board(text: &[u8]) -> Result<[Option<Piece>; 64], FenError> {
    let mut board = [None; 64];
    let mut rank = 7i32;
    let mut file = 0i32;
    for &b in text {
        match b {
            b'/' => {
                if file != 8 {
                    return Err(FenError::new(
                        FenField::Board,
                        format!("rank {} has {} squares, expected 8", rank + 1, file),
                    ));
                }
                rank -= 1;
                file = 0;
                if rank < 0 {
                    return Err(FenError::new(FenField::Board, "more than 8 ranks"));
                }
            }
            b'1'..=b'8' => {
                file += i32::from(b - b'0');
                if file > 8 {
                    return Err(FenError::new(
                        FenField::Board,
                        format!("rank {} has more than 8 squares", rank + 1),
                    ));
                }
            }
            _ => {
                let piece =
                    Piece::from_char(b as char).filter(|_| b.is_ascii_alphabetic()).ok_or_else(
                        || FenError::new(FenField::Board, format!("unexpected {}", describe(b))),
                    )?;
                if file >= 8 {
                    return Err(FenError::new(
                        FenField::Board,
                        format!("rank {} has more than 8 squares", rank + 1),
                    ));
                }
                board[(rank * 8 + file) as usize] = Some(piece);
                file += 1;
            }
        }
    }
    if rank != 0 || file != 8 {
        return Err(FenError::new(
            FenField::Board,
            if rank != 0 {
                format!("{} ranks, expected 8", 8 - rank)
            } else {
                format!("rank 1 has {file} squares, expected 8")
            },
        ));
    }
    Ok(board)
}

/// Options for turning a [`Setup`] into a [`Position`].
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct FenOptions {
    /// Force a castling mode; `None` detects it: Chess960 when the castling
    /// field uses file letters or the rights do not fit standard chess.
    pub castling_mode: Option<CastlingMode>,
    /// Drop castling rights that have no king or rook to go with them,
    /// instead of failing (for dirty databases).
    pub drop_invalid_castling: bool,
}

impl Position {
    /// Reads a FEN (4 to 6 fields), detecting Chess960 castling.
    pub fn from_fen(fen: &str) -> Result<Position, FenError> {
        Position::from_fen_with(fen.as_bytes(), FenOptions::default())
    }

    /// Reads a FEN in Chess960 mode.
    pub fn from_fen_960(fen: &str) -> Result<Position, FenError> {
        Position::from_fen_with(
            fen.as_bytes(),
            FenOptions { castling_mode: Some(CastlingMode::Chess960), ..FenOptions::default() },
        )
    }

    /// Reads a FEN from bytes with options.
    pub fn from_fen_with(fen: &[u8], options: FenOptions) -> Result<Position, FenError> {
        Position::from_setup(&Setup::parse(fen)?, options)
    }

    /// Validates a setup and builds the position.
    ///
    /// Checked: one king per side, at most 16 pieces and 8 pawns per side,
    /// no pawn on the first or last rank, the side not to move not in check,
    /// the side to move in check by at most two pieces,
    /// and every castling right backed by a king on its back rank and a rook.
    pub fn from_setup(setup: &Setup, options: FenOptions) -> Result<Position, FenError> {
        let mut pos = Position::empty();
        for sq in Square::ALL {
            if let Some(p) = setup.board[sq.to_usize()] {
                pos.put_piece(p, sq);
            }
        }
        for color in Color::ALL {
            let kings = pos.pieces(color, Role::King).count();
            if kings == 0 {
                return Err(FenError::new(FenField::Board, format!("{color} has no king")));
            }
            if kings > 1 {
                return Err(FenError::new(FenField::Board, format!("{color} has {kings} kings")));
            }
            if pos.pieces_of(color).count() > 16 {
                return Err(FenError::new(
                    FenField::Board,
                    format!("{color} has more than 16 pieces"),
                ));
            }
            if pos.pieces(color, Role::Pawn).count() > 8 {
                return Err(FenError::new(
                    FenField::Board,
                    format!("{color} has more than 8 pawns"),
                ));
            }
        }
        if (pos.pieces_by_role(Role::Pawn) & (Bitboard::RANK_1 | Bitboard::RANK_8)).any() {
            return Err(FenError::new(FenField::Board, "pawn on the first or last rank"));
        }
        pos.side_to_move = setup.turn;
        let them = !setup.turn;
        if pos.is_attacked_by(setup.turn, pos.king(them), pos.occupied()) {
            return Err(FenError::new(
                FenField::Board,
                format!("{them} is in check but it is {} to move", setup.turn),
            ));
        }
        // No move gives check with more than two pieces at once.
        let us = setup.turn;
        let checkers = pos.attackers_to(pos.king(us), pos.occupied()) & pos.pieces_of(them);
        if checkers.count() > 2 {
            return Err(FenError::new(
                FenField::Board,
                format!(
                    "{us} is in check by {} pieces (at most two is possible)",
                    checkers.count()
                ),
            ));
        }

        // Castling: resolve each letter to a rook.
        let mut rooks: Vec<(Color, Square)> = Vec::new();
        let mut needs_960 = false;
        for &c in &setup.castling {
            let color = if c.is_ascii_uppercase() { Color::White } else { Color::Black };
            let king = pos.king(color);
            let rank = color.backrank();
            let candidates = pos.pieces(color, Role::Rook) & Bitboard::from_rank(rank);
            let resolved = if king.rank() != rank {
                Err(format!("'{}': the {color} king is not on its back rank", c as char))
            } else {
                match c.to_ascii_lowercase() {
                    b'k' => (candidates & Bitboard(!0u64 << king.to_u32()))
                        .last()
                        .filter(|r| *r > king)
                        .ok_or_else(|| {
                            format!("'{}': no {color} rook on the king side", c as char)
                        }),
                    b'q' => candidates.first().filter(|r| *r < king).ok_or_else(|| {
                        format!("'{}': no {color} rook on the queen side", c as char)
                    }),
                    letter => {
                        needs_960 = true;
                        let file = File::new(u32::from(letter - b'a'));
                        let sq = Square::from_coords(file, rank);
                        if candidates.contains(sq) && sq != king {
                            Ok(sq)
                        } else {
                            Err(format!("'{}': no {color} rook on {sq}", c as char))
                        }
                    }
                }
            };
            match resolved {
                Ok(rook) => {
                    let standard_rook = rook.file() == File::A || rook.file() == File::H;
                    if king.file() != File::E || !standard_rook {
                        needs_960 = true;
                    }
                    if rooks.iter().any(|&(col, r)| col == color && (r > king) == (rook > king)) {
                        if options.drop_invalid_castling {
                            continue;
                        }
                        return Err(FenError::new(
                            FenField::Castling,
                            format!("'{}': two rights on one side for {color}", c as char),
                        ));
                    }
                    rooks.push((color, rook));
                }
                Err(reason) => {
                    if !options.drop_invalid_castling {
                        return Err(FenError::new(FenField::Castling, reason));
                    }
                }
            }
        }
        pos.chess960 = match options.castling_mode {
            Some(CastlingMode::Chess960) => true,
            Some(CastlingMode::Standard) => {
                if needs_960 {
                    if options.drop_invalid_castling {
                        rooks.retain(|&(color, rook)| {
                            pos.king(color).file() == File::E
                                && (rook.file() == File::A || rook.file() == File::H)
                        });
                    } else {
                        return Err(FenError::new(
                            FenField::Castling,
                            "the rights need Chess960 (king or rook off its standard square)",
                        ));
                    }
                }
                false
            }
            None => needs_960,
        };
        for (color, rook) in rooks {
            pos.add_castling_right(color, rook);
        }

        // En passant: keep the square only if a double step explains it and
        // a pawn of the side to move can capture there.
        let us = setup.turn;
        pos.states[0].copied.ep_square = setup.ep_square.filter(|&ep| {
            ep.rank() == Rank::Sixth.relative(us)
                && pos.piece_on(ep).is_none()
                && pos.piece_on(ep.offset_unchecked(pawn_push(us))).is_none()
                && pos.piece_on(ep.offset_unchecked(-pawn_push(us)))
                    == Some(Piece::new(them, Role::Pawn))
        });
        pos.states[0].copied.rule50 = u16::try_from(setup.halfmoves).unwrap_or(u16::MAX);
        pos.game_ply = 2 * (setup.fullmoves - 1).min(1 << 20) + u32::from(us == Color::Black);
        pos.init_state();
        Ok(pos)
    }

    /// Chess960 starting position number `n` (0 to 959) in Scharnagl's
    /// numbering; 518 is the standard starting position (but in Chess960
    /// mode).
    pub fn chess960_startpos(n: u32) -> Option<Position> {
        (n < 960).then(|| crate::chess::chess960::start(n, n))
    }

    /// The position as FEN (6 fields). Castling is written `KQkq` in standard
    /// chess and X-FEN in Chess960 (a file letter only for an inner rook).
    pub fn fen(&self) -> String {
        format!("{} {} {}", self.epd(), self.rule50(), self.fullmove_number())
    }

    /// The position as FEN with Shredder-FEN castling (rook files, `HAha`).
    pub fn fen_shredder(&self) -> String {
        format!("{} {} {}", self.epd_with(true), self.rule50(), self.fullmove_number())
    }

    /// The first four FEN fields, as EPD writes a position.
    pub fn epd(&self) -> String {
        self.epd_with(false)
    }

    fn epd_with(&self, shredder: bool) -> String {
        let mut s = String::with_capacity(90);
        for rank in Rank::ALL.iter().rev() {
            let mut empty = 0;
            for file in File::ALL {
                match self.piece_on(Square::from_coords(file, *rank)) {
                    Some(p) => {
                        if empty > 0 {
                            s.push((b'0' + empty) as char);
                            empty = 0;
                        }
                        s.push(p.char());
                    }
                    None => empty += 1,
                }
            }
            if empty > 0 {
                s.push((b'0' + empty) as char);
            }
            if *rank != Rank::First {
                s.push('/');
            }
        }
        s.push(' ');
        s.push(self.side_to_move.char());
        s.push(' ');
        let before = s.len();
        for color in Color::ALL {
            for side in CastlingSide::ALL {
                let Some(rook) = self.castling_rook(color, side) else { continue };
                let candidates =
                    self.pieces(color, Role::Rook) & Bitboard::from_rank(color.backrank());
                let outermost = match side {
                    CastlingSide::KingSide => candidates.last() == Some(rook),
                    CastlingSide::QueenSide => candidates.first() == Some(rook),
                };
                let letter = if shredder || !outermost {
                    rook.file().char()
                } else {
                    match side {
                        CastlingSide::KingSide => 'k',
                        CastlingSide::QueenSide => 'q',
                    }
                };
                s.push(if color == Color::White { letter.to_ascii_uppercase() } else { letter });
            }
        }
        if s.len() == before {
            s.push('-');
        }
        s.push(' ');
        match self.ep_square() {
            Some(ep) if self.has_legal_en_passant() => s.push_str(&ep.to_string()),
            _ => s.push('-'),
        }
        s
    }
}

impl std::str::FromStr for Position {
    type Err = FenError;
    fn from_str(s: &str) -> Result<Position, FenError> {
        Position::from_fen(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_than_two_checkers_is_refused() {
        let err = Position::from_fen("4k3/8/3N1N2/8/8/8/8/4RK2 b - - 0 1").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid fen: board: black is in check by 3 pieces (at most two is possible)"
        );
        // Two checkers (a discovered double check) is a position.
        assert!(Position::from_fen("4k3/8/3N4/8/8/8/8/4RK2 b - - 0 1").is_ok());
    }

    #[test]
    fn round_trips() {
        for fen in [
            STARTPOS,
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
        ] {
            assert_eq!(Position::from_fen(fen).unwrap().fen(), fen);
        }
    }

    #[test]
    fn uncapturable_en_passant_is_dropped() {
        let pos = Position::from_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1")
            .unwrap();
        assert_eq!(pos.ep_square(), None);
        assert_eq!(pos.fen(), "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
    }

    #[test]
    fn chess960_castling_fields() {
        // Shredder letters switch to Chess960; X-FEN output uses KQkq when
        // the rook is the outermost.
        let pos =
            Position::from_fen("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9")
                .unwrap();
        assert!(pos.is_chess960());
        assert_eq!(pos.fen(), "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w KQkq - 2 9");
        assert_eq!(
            pos.fen_shredder(),
            "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9"
        );
        let std = Position::from_fen(STARTPOS).unwrap();
        assert!(!std.is_chess960());
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            ("", FenField::Text),
            ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR", FenField::Turn),
            ("rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", FenField::Board),
            ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1", FenField::Board),
            ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1", FenField::Turn),
            ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkqX - 0 1", FenField::Castling),
            ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e9 0 1", FenField::EnPassant),
            ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - x 1", FenField::Halfmoves),
            ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 y", FenField::Fullmoves),
            ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 z", FenField::Text),
            ("4k3/8/8/8/8/8/8/4K3 w K - 0 1", FenField::Castling),
            ("4k3/8/8/8/8/8/4q3/4K3 b - - 0 1", FenField::Board),
            ("4k3/8/8/8/8/8/8/P3K3 w - - 0 1", FenField::Board),
        ];
        for (fen, field) in cases {
            match Position::from_fen(fen) {
                Err(e) => assert_eq!(e.field, field, "{fen}: {e}"),
                Ok(p) => panic!("{fen} accepted as {}", p.fen()),
            }
        }
    }

    #[test]
    fn chess960_numbering() {
        assert_eq!(
            Position::chess960_startpos(518).unwrap().epd(),
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"
        );
        assert_eq!(
            Position::chess960_startpos(0).unwrap().epd(),
            "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w KQkq -"
        );
        let all: std::collections::HashSet<String> =
            (0..960).map(|n| Position::chess960_startpos(n).unwrap().epd()).collect();
        assert_eq!(all.len(), 960);
        assert!(Position::chess960_startpos(960).is_none());
    }

    #[test]
    fn lenient_castling() {
        // BT2450 #15: 'kq' without a rook on a8.
        let fen = "4k1rr/ppp5/3b1p1p/4pP1P/3pP2N/3P3P/PPP5/2KR2R1 w kq - 0 1";
        assert_eq!(Position::from_fen(fen).unwrap_err().field, FenField::Castling);
        let pos = Position::from_fen_with(
            fen.as_bytes(),
            FenOptions { drop_invalid_castling: true, ..FenOptions::default() },
        )
        .unwrap();
        assert_eq!(
            pos.castling_rights(),
            crate::chess::types::castling_bit(Color::Black, CastlingSide::KingSide)
        );
    }
}
