//! Standard algebraic notation (SAN), in and out.
//!
//! [`San::parse`] reads the syntax, tolerant of what real databases hold:
//! `0-0` for `O-O`, check marks that are missing or wrong, annotation
//! glyphs (`!?`), promotions without `=` (`e8Q`) or in parentheses, a `P`
//! for pawns, `:` for captures, `-` between squares, and long algebraic or
//! UCI-style coordinates (`g1f3`, `Ng1-f3`). [`San::to_move`] resolves it
//! against the position's legal moves: piece, disambiguation, promotion,
//! castling. A capture mark on a move that captures nothing is ignored, as
//! python-chess does.
//!
//! ```
//! use kibitz::{Position, San};
//!
//! use kibitz::SanError;
//!
//! let mut pos = Position::startpos();
//! let m = San::parse(b"Nf3!?")?.to_move(&pos)?;
//! assert_eq!(pos.san(m), "Nf3");
//! pos.do_move(m);
//! assert_eq!(pos.parse_san(b"0-0"), Err(SanError::Illegal));
//! assert_eq!(pos.parse_san(b"Nf6")?, pos.parse_san(b"g8f6")?);
//! # Ok::<(), kibitz::SanError>(())
//! ```

use std::fmt;

use crate::chess::{
    attacks::{self, pawn_attacks},
    bitboard::Bitboard,
    mv::{Move, MoveKind},
    position::{Position, pawn_push},
    types::{CastlingSide, File, Piece, Rank, Role, Square},
};

/// A move in SAN, parsed but not yet resolved against a position.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum San {
    /// A piece or pawn move.
    Normal {
        /// The moving role (pawn when no letter is given).
        role: Role,
        /// The origin file, when given.
        file: Option<File>,
        /// The origin rank, when given.
        rank: Option<Rank>,
        /// Whether a capture mark was written.
        capture: bool,
        /// The destination.
        to: Square,
        /// The promotion role.
        promotion: Option<Role>,
    },
    /// Coordinates without a piece letter (`g1f3`, `e7e8q`), as some
    /// exports write moves; resolved by origin and destination.
    Coordinates {
        /// The origin.
        from: Square,
        /// The destination.
        to: Square,
        /// The promotion role.
        promotion: Option<Role>,
    },
    /// Castling.
    Castle(CastlingSide),
    /// A null move (`--`, `Z0`, `0000`).
    Null,
}

/// Why a SAN could not be read or played.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum SanError {
    /// The text is not SAN.
    Syntax,
    /// No legal move matches.
    Illegal,
    /// Several legal moves match.
    Ambiguous,
    /// A null move, which has no legal move to resolve to.
    NullMove,
}

impl fmt::Display for SanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SanError::Syntax => "invalid san",
            SanError::Illegal => "illegal san",
            SanError::Ambiguous => "ambiguous san",
            SanError::NullMove => "null move",
        })
    }
}

impl std::error::Error for SanError {}

fn role_from_upper(b: u8) -> Option<Role> {
    match b {
        b'P' => Some(Role::Pawn),
        b'N' => Some(Role::Knight),
        b'B' => Some(Role::Bishop),
        b'R' => Some(Role::Rook),
        b'Q' => Some(Role::Queen),
        b'K' => Some(Role::King),
        _ => None,
    }
}

fn promotion_from(b: u8) -> Option<Role> {
    match b.to_ascii_uppercase() {
        b'N' => Some(Role::Knight),
        b'B' => Some(Role::Bishop),
        b'R' => Some(Role::Rook),
        b'Q' => Some(Role::Queen),
        _ => None,
    }
}

/// A file letter's file.
#[inline(always)]
fn file_of(b: u8) -> Option<File> {
    let i = b.wrapping_sub(b'a');
    (i < 8).then(|| File::new(u32::from(i)))
}

/// A rank digit's rank.
#[inline(always)]
fn rank_of(b: u8) -> Option<Rank> {
    let i = b.wrapping_sub(b'1');
    (i < 8).then(|| Rank::new(u32::from(i)))
}

/// A square's two characters.
#[inline(always)]
fn square_of(f: u8, r: u8) -> Option<Square> {
    Some(Square::from_coords(file_of(f)?, rank_of(r)?))
}

/// A piece letter other than `P`.
#[inline(always)]
fn piece_of(b: u8) -> Option<Role> {
    role_from_upper(b).filter(|&r| r != Role::Pawn)
}

/// The shapes nearly every move in a database has, read from the start of
/// an 8-byte window: `e4`, `exd5`, `e8=Q`, `exd8=Q`, `Nf3`, `Nxe5`,
/// `Nbd2`, `R1e2`, `Nbxd2`, `Qh4e1`, `Qh4xe1`, `O-O`, `O-O-O`. Returns the
/// move and its length; the bytes after it are not looked at beyond what
/// tells one shape from a longer one (`Nf3` from `Nf3e1`), so the caller
/// checks that the token ends there. `None` for anything else, which the
/// general parser reads. A window of fixed size spares every bounds check:
/// the PGN reader hands over the text itself, [`San::parse`] a copy padded
/// with zeros.
#[inline(always)]
pub(crate) fn parse_window(w: &[u8; 8]) -> Option<(San, usize)> {
    let normal = |role, file, rank, capture, to, promotion| San::Normal {
        role,
        file,
        rank,
        capture,
        to,
        promotion,
    };
    if let Some(from_file) = file_of(w[0]) {
        // A pawn: `e4`, `e8=Q`, `exd5`, `exd8=Q`.
        if let Some(rank) = rank_of(w[1]) {
            let to = Square::from_coords(from_file, rank);
            if w[2] == b'=' {
                let promotion = promotion_from(w[3])?;
                return Some((normal(Role::Pawn, None, None, false, to, Some(promotion)), 4));
            }
            // `e2e4`, `e8Q`: coordinates and bare promotions, read by the
            // general parser.
            if file_of(w[2]).is_some() || promotion_from(w[2]).is_some() {
                return None;
            }
            return Some((normal(Role::Pawn, None, None, false, to, None), 2));
        }
        if w[1] == b'x' {
            let to = square_of(w[2], w[3])?;
            if w[4] == b'=' {
                let promotion = promotion_from(w[5])?;
                let san = normal(Role::Pawn, Some(from_file), None, true, to, Some(promotion));
                return Some((san, 6));
            }
            if promotion_from(w[4]).is_some() {
                return None;
            }
            return Some((normal(Role::Pawn, Some(from_file), None, true, to, None), 4));
        }
        return None;
    }
    if let Some(role) = piece_of(w[0]) {
        if w[1] == b'x' {
            return Some((normal(role, None, None, true, square_of(w[2], w[3])?, None), 4));
        }
        if let Some(file) = file_of(w[1]) {
            if let Some(rank) = rank_of(w[2]) {
                // `Nf3`, or the origin square of `Qh4e1`, `Qh4xe1`.
                if w[3] == b'x' {
                    let to = square_of(w[4], w[5])?;
                    return Some((normal(role, Some(file), Some(rank), true, to, None), 6));
                }
                if let Some(to) = square_of(w[3], w[4]) {
                    return Some((normal(role, Some(file), Some(rank), false, to, None), 5));
                }
                let to = Square::from_coords(file, rank);
                return Some((normal(role, None, None, false, to, None), 3));
            }
            if w[2] == b'x' {
                return Some((
                    normal(role, Some(file), None, true, square_of(w[3], w[4])?, None),
                    5,
                ));
            }
            return Some((normal(role, Some(file), None, false, square_of(w[2], w[3])?, None), 4));
        }
        if let Some(rank) = rank_of(w[1]) {
            if w[2] == b'x' {
                return Some((
                    normal(role, None, Some(rank), true, square_of(w[3], w[4])?, None),
                    5,
                ));
            }
            return Some((normal(role, None, Some(rank), false, square_of(w[2], w[3])?, None), 4));
        }
        return None;
    }
    if w[0] == b'O' && w[1] == b'-' && w[2] == b'O' {
        if w[3] == b'-' && w[4] == b'O' {
            return Some((San::Castle(CastlingSide::QueenSide), 5));
        }
        return Some((San::Castle(CastlingSide::KingSide), 3));
    }
    None
}

impl San {
    /// Parses SAN from bytes.
    #[inline]
    pub fn parse(text: &[u8]) -> Result<San, SanError> {
        let mut end = text.len();
        while end > 0 && matches!(text[end - 1], b'+' | b'#' | b'!' | b'?') {
            end -= 1;
        }
        if end < 8 {
            let mut window = [0u8; 8];
            window[..end].copy_from_slice(&text[..end]);
            if let Some((san, len)) = parse_window(&window)
                && len == end
            {
                return Ok(san);
            }
        }
        San::parse_general(text)
    }

    /// [`San::parse`] for every shape it reads.
    fn parse_general(text: &[u8]) -> Result<San, SanError> {
        // Strip check marks and annotation glyphs.
        let mut end = text.len();
        loop {
            if end > 0 && matches!(text[end - 1], b'+' | b'#' | b'!' | b'?') {
                end -= 1;
            } else if text[..end].ends_with(b"e.p.") {
                end -= 4;
            } else if end > 2 && text[..end].ends_with(b"ep") {
                // `gxf6ep`: an en-passant mark glued to the capture.
                end -= 2;
            } else if end > 3 && text[..end].ends_with(b"e.p") {
                end -= 3;
            } else {
                break;
            }
        }
        let s = &text[..end];
        match s {
            b"O-O" | b"0-0" | b"o-o" | b"OO" | b"00" => {
                return Ok(San::Castle(CastlingSide::KingSide));
            }
            b"O-O-O" | b"0-0-0" | b"o-o-o" | b"OOO" | b"000" => {
                return Ok(San::Castle(CastlingSide::QueenSide));
            }
            b"--" | b"Z0" | b"0000" | b"@@@@" => return Ok(San::Null),
            _ => {}
        }
        if s.len() < 2 || s.len() > 12 {
            return Err(SanError::Syntax);
        }

        let mut i = 0;
        let letter = role_from_upper(s[0]);
        if letter.is_some() {
            i = 1;
        }
        // Collect the squares' characters, skipping capture marks and dashes.
        let mut files: [Option<File>; 2] = [None; 2];
        let mut ranks: [Option<Rank>; 2] = [None; 2];
        let mut coords = 0; // number of (file?, rank?) groups seen
        let mut capture = false;
        let mut promotion = None;
        let mut pending_file: Option<File> = None;
        let mut pending_rank: Option<Rank> = None;
        while i < s.len() {
            let b = s[i];
            // A final promotion letter without '=' (e8Q, and e7e8q or e7e8b
            // in coordinates).
            if i + 1 == s.len()
                && coords > 0
                && pending_file.is_none()
                && pending_rank.is_none()
                && let Some(p) = promotion_from(b)
            {
                promotion = Some(p);
                break;
            }
            match b {
                b'a'..=b'h' => {
                    if pending_file.is_some() || pending_rank.is_some() {
                        if coords >= 2 {
                            return Err(SanError::Syntax);
                        }
                        files[coords] = pending_file.take();
                        ranks[coords] = pending_rank.take();
                        coords += 1;
                    }
                    pending_file = File::from_char(b as char);
                }
                b'1'..=b'8' => {
                    if pending_rank.is_some() {
                        return Err(SanError::Syntax);
                    }
                    pending_rank = Rank::from_char(b as char);
                    // A rank closes a group.
                    if coords >= 2 {
                        return Err(SanError::Syntax);
                    }
                    files[coords] = pending_file.take();
                    ranks[coords] = pending_rank.take();
                    coords += 1;
                }
                b'x' | b':' | b'-' => {
                    if b != b'-' {
                        capture = true;
                    }
                    if pending_file.is_some() {
                        if coords >= 2 {
                            return Err(SanError::Syntax);
                        }
                        files[coords] = pending_file.take();
                        coords += 1;
                    }
                }
                b'=' | b'(' | b'/' => {
                    let p =
                        s.get(i + 1).and_then(|b| promotion_from(*b)).ok_or(SanError::Syntax)?;
                    promotion = Some(p);
                    i += 2;
                    if b == b'(' {
                        if s.get(i) != Some(&b')') {
                            return Err(SanError::Syntax);
                        }
                        i += 1;
                    }
                    if i != s.len() {
                        return Err(SanError::Syntax);
                    }
                    break;
                }
                _ => return Err(SanError::Syntax),
            }
            i += 1;
        }
        if pending_file.is_some() || pending_rank.is_some() {
            // Trailing file without rank ("exd" short form) is not accepted.
            return Err(SanError::Syntax);
        }
        // The last group is the destination and must be a full square.
        if coords == 0 {
            return Err(SanError::Syntax);
        }
        let (Some(to_file), Some(to_rank)) = (files[coords - 1], ranks[coords - 1]) else {
            return Err(SanError::Syntax);
        };
        let to = Square::from_coords(to_file, to_rank);
        let (file, rank) = if coords == 2 { (files[0], ranks[0]) } else { (None, None) };
        if let (None, Some(f), Some(r)) = (letter, file, rank) {
            return Ok(San::Coordinates { from: Square::from_coords(f, r), to, promotion });
        }
        let role = letter.unwrap_or(Role::Pawn);
        if promotion.is_some() && role != Role::Pawn {
            return Err(SanError::Syntax);
        }
        Ok(San::Normal { role, file, rank, capture, to, promotion })
    }

    /// Resolves the SAN against the legal moves of `pos`.
    pub fn to_move(&self, pos: &Position) -> Result<Move, SanError> {
        match *self {
            San::Null => Err(SanError::NullMove),
            San::Castle(side) => {
                let us = pos.side_to_move();
                let rook = pos.castling_rook(us, side).ok_or(SanError::Illegal)?;
                let m = Move::castling(pos.king(us), rook);
                if pos.is_legal(m) { Ok(m) } else { Err(SanError::Illegal) }
            }
            San::Coordinates { from, to, promotion } => {
                crate::chess::uci::resolve_coordinates(pos, from, to, promotion)
                    .ok_or(SanError::Illegal)
            }
            San::Normal { role, file, rank, capture: _, to, promotion } => {
                let us = pos.side_to_move();
                if pos.pieces_of(us).contains(to) {
                    return Err(SanError::Illegal);
                }
                let ours = pos.pieces(us, role);
                let occupied = pos.occupied();
                // Candidate origins: pieces of the role that reach `to`.
                let mut from_mask = if role == Role::Pawn {
                    let up = pawn_push(us);
                    let capture_from = pawn_attacks(!us, to) & ours;
                    let target_piece = pos.piece_on(to);
                    let is_ep = pos.ep_square() == Some(to);
                    let mut m = Bitboard::EMPTY;
                    if target_piece.is_some_and(|p| p.color() != us) || is_ep {
                        m |= capture_from;
                    }
                    if target_piece.is_none()
                        && let Some(one) = to.offset(-up)
                    {
                        if ours.contains(one) {
                            m |= one;
                        } else if pos.piece_on(one).is_none()
                            && to.rank() == Rank::Fourth.relative(us)
                            && let Some(two) = one.offset(-up)
                            && ours.contains(two)
                        {
                            m |= two;
                        }
                    }
                    m
                } else if role == Role::Knight || role == Role::King {
                    attacks::attacks(role, to, occupied) & ours
                } else {
                    // Sliders: the pieces on the destination's lines with
                    // nothing between, which spares a lookup in the large
                    // sliding-attack table (there are one or two of them).
                    let lines = match role {
                        Role::Bishop => attacks::bishop_rays(to),
                        Role::Rook => attacks::rook_rays(to),
                        _ => attacks::bishop_rays(to) | attacks::rook_rays(to),
                    };
                    let mut reach = Bitboard::EMPTY;
                    for from in lines & ours {
                        if (attacks::between(to, from) & occupied).is_empty() {
                            reach |= from;
                        }
                    }
                    reach
                };
                if let Some(f) = file {
                    from_mask &= Bitboard::from_file(f);
                }
                if let Some(r) = rank {
                    from_mask &= Bitboard::from_rank(r);
                }
                let last_rank = to.rank() == Rank::Eighth.relative(us);
                let mut found = None;
                for from in from_mask {
                    let m = if role == Role::Pawn {
                        if last_rank {
                            match promotion {
                                Some(p) => Move::promotion(from, to, p),
                                None => continue,
                            }
                        } else if promotion.is_some() {
                            continue;
                        } else if pos.ep_square() == Some(to) && from.file() != to.file() {
                            Move::en_passant(from, to)
                        } else {
                            Move::normal(from, to)
                        }
                    } else {
                        Move::normal(from, to)
                    };
                    let legal = if m.kind() == MoveKind::EnPassant {
                        pos.en_passant_is_legal(from, to)
                    } else {
                        // The candidates came from attack (or push) sets, so
                        // the geometry is right; only the king's safety is
                        // left to check.
                        let pc = Piece::new(us, role);
                        pos.legal_geometric_move(pc, from, to)
                    };
                    if legal {
                        if found.is_some() {
                            return Err(SanError::Ambiguous);
                        }
                        found = Some(m);
                    }
                }
                found.ok_or(SanError::Illegal)
            }
        }
    }
}

impl fmt::Display for San {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            San::Null => f.write_str("--"),
            San::Castle(CastlingSide::KingSide) => f.write_str("O-O"),
            San::Castle(CastlingSide::QueenSide) => f.write_str("O-O-O"),
            San::Coordinates { from, to, promotion } => {
                write!(f, "{from}{to}")?;
                if let Some(p) = promotion {
                    write!(f, "{}", p.char())?;
                }
                Ok(())
            }
            San::Normal { role, file, rank, capture, to, promotion } => {
                if role != Role::Pawn {
                    write!(f, "{}", role.upper_char())?;
                }
                if let Some(file) = file {
                    write!(f, "{}", file.char())?;
                }
                if let Some(rank) = rank {
                    write!(f, "{}", rank.char())?;
                }
                if capture {
                    f.write_str("x")?;
                }
                write!(f, "{to}")?;
                if let Some(p) = promotion {
                    write!(f, "={}", p.upper_char())?;
                }
                Ok(())
            }
        }
    }
}

impl Position {
    /// The SAN of the legal move `m`, without a check mark.
    pub fn san(&self, m: Move) -> String {
        let mut s = String::with_capacity(8);
        self.write_san(m, &mut s);
        s
    }

    fn write_san(&self, m: Move, s: &mut String) {
        use fmt::Write;
        if m.is_null() {
            s.push_str("--");
            return;
        }
        let from = m.from();
        let to = m.to();
        if m.is_castling() {
            s.push_str(if to > from { "O-O" } else { "O-O-O" });
            return;
        }
        let Some(pc) = self.piece_on(from) else {
            s.push_str("--");
            return;
        };
        let role = pc.role();
        let capture = self.is_capture(m);
        if role == Role::Pawn {
            if capture {
                s.push(from.file().char());
                s.push('x');
            }
            let _ = write!(s, "{to}");
            if let Some(p) = m.promotion_role() {
                s.push('=');
                s.push(p.upper_char());
            }
            return;
        }
        s.push(role.upper_char());
        if role != Role::King {
            // Other pieces of the same role that could legally go to `to`.
            let others = (attacks::attacks(role, to, self.occupied())
                & self.pieces(pc.color(), role))
            .without(from)
            .into_iter()
            .filter(|&o| self.is_legal(Move::normal(o, to)))
            .fold(Bitboard::EMPTY, Bitboard::with);
            if others.any() {
                if (others & Bitboard::from_file(from.file())).is_empty() {
                    s.push(from.file().char());
                } else if (others & Bitboard::from_rank(from.rank())).is_empty() {
                    s.push(from.rank().char());
                } else {
                    s.push(from.file().char());
                    s.push(from.rank().char());
                }
            }
        }
        if capture {
            s.push('x');
        }
        let _ = write!(s, "{to}");
    }

    /// The SAN of the legal move `m` with `+` or `#` when it checks or mates
    /// (the move is made and unmade to find out).
    pub fn san_plus(&mut self, m: Move) -> String {
        let mut s = self.san(m);
        if !m.is_null() && self.gives_check(m) {
            self.do_move(m);
            s.push(if self.has_legal_moves() { '+' } else { '#' });
            self.undo_move(m);
        }
        s
    }

    /// Resolves SAN text against the legal moves.
    pub fn parse_san(&self, text: &[u8]) -> Result<Move, SanError> {
        San::parse(text)?.to_move(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The common shapes read as the general parser reads them: every
    /// string of up to four characters over an alphabet of SAN characters
    /// and a few others, and a million longer ones at random.
    #[test]
    fn the_fast_path_agrees_with_the_general_parser() {
        let alphabet = b"NBRQKPabcdefgh012345678x=+#-O!?:(/)qe.Z9i ";
        let check = |t: &[u8]| {
            assert_eq!(San::parse(t), San::parse_general(t), "{:?}", String::from_utf8_lossy(t));
        };
        let mut t = Vec::new();
        fn all(t: &mut Vec<u8>, alphabet: &[u8], left: usize, check: &dyn Fn(&[u8])) {
            check(t);
            if left == 0 {
                return;
            }
            for &b in alphabet {
                t.push(b);
                all(t, alphabet, left - 1, check);
                t.pop();
            }
        }
        all(&mut t, alphabet, 4, &check);
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let common = b"NBRQKabcdefgh12345678x=+#";
        for _ in 0..1_000_000 {
            let len = 5 + (next() % 5) as usize;
            let pool: &[u8] = if next() % 4 == 0 { alphabet } else { common };
            let t: Vec<u8> =
                (0..len).map(|_| pool[(next() % pool.len() as u64) as usize]).collect();
            check(&t);
        }
    }

    fn play(pos: &mut Position, sans: &[&str]) {
        for san in sans {
            let m = pos
                .parse_san(san.as_bytes())
                .unwrap_or_else(|e| panic!("{san}: {e} in {}", pos.fen()));
            pos.do_move(m);
        }
    }

    #[test]
    fn tolerant_parsing() {
        let mut pos = Position::startpos();
        play(&mut pos, &["e4", "e5", "Nf3", "Nc6", "Bc4", "Nf6", "0-0", "Bc5"]);
        assert!(pos.castling_rights() & 3 == 0);
        for (text, ok) in [
            ("d4", true),
            ("Pd4", true),
            ("d2-d4", true),
            ("d2d4", true),
            ("Nxe5", true),
            ("Nxe5+!", true),
        ] {
            assert_eq!(pos.parse_san(text.as_bytes()).is_ok(), ok, "{text}");
        }
        assert_eq!(pos.parse_san(b"Ne6"), Err(SanError::Illegal));
        assert_eq!(pos.parse_san(b"Zz9"), Err(SanError::Syntax));
        assert_eq!(pos.parse_san(b""), Err(SanError::Syntax));
        assert_eq!(San::parse(b"--"), Ok(San::Null));
        assert_eq!(San::parse(b"Z0"), Ok(San::Null));
    }

    #[test]
    fn promotions_and_disambiguation() {
        let mut pos = Position::from_fen("3k4/P7/8/8/8/8/4K3/R6R w - - 0 1").unwrap();
        for text in ["a8=Q", "a8Q", "a8(Q)", "a7a8q"] {
            let m = pos.parse_san(text.as_bytes()).unwrap();
            assert_eq!(m.promotion_role(), Some(Role::Queen), "{text}");
        }
        assert_eq!(pos.parse_san(b"a8"), Err(SanError::Illegal));
        let m = pos.parse_san(b"a8=R").unwrap();
        assert_eq!(pos.san_plus(m), "a8=R+");
        let m = pos.parse_san(b"a7a8b").unwrap();
        assert_eq!(pos.san(m), "a8=B");
        // Two rooks reach d1: file disambiguation.
        let m = pos.parse_san(b"Rad1").unwrap();
        assert_eq!(pos.san(m), "Rad1");
        assert_eq!(pos.parse_san(b"Rd1"), Err(SanError::Ambiguous));

        let mut pos = Position::from_fen("3k4/8/8/8/8/8/8/R3K2R w KQ - 0 1").unwrap();
        play(&mut pos, &["O-O-O"]);
        assert_eq!(pos.fen(), "3k4/8/8/8/8/8/8/2KR3R b - - 1 1");
    }

    #[test]
    fn mate_mark() {
        let mut pos = Position::startpos();
        play(&mut pos, &["f3", "e5", "g4"]);
        let m = pos.parse_san(b"Qh4").unwrap();
        assert_eq!(pos.san_plus(m), "Qh4#");
    }
}
