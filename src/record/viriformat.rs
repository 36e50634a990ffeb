//! viriformat: the game format of viridithas and the engines trained with
//! bullet (the `viriformat` crate, MIT, specifies it). A file is games one
//! after another; a game is a 32-byte marlinformat board (its start, with
//! the game's result), then a move (`u16`) and a score (`i16`, White's
//! view, of the position the move is played from) for each position, then
//! four zero bytes. Every integer is little-endian; squares are numbered
//! a1 = 0 to h8 = 63.
//!
//! The board: the occupied squares (`u64`); a 4-bit piece for each, in the
//! order of the occupied squares (the i-th in the low nibble of byte i/2
//! when i is even, the high one when odd): 0 pawn to 5 king, 6 a rook that
//! can still castle, plus 8 for Black; one byte with the side to move in
//! its top bit (set: Black) and the en-passant square (64: none) in the
//! rest; the 50-move counter (`u8`); the move number (`u16`); a score
//! (`i16`, 0 here); the result (`u8`: 0 Black won, 1 drawn, 2 White won);
//! a spare byte.
//!
//! A move: the from square in bits 0 to 5, the to square in bits 6 to 11
//! (the rook's square for castling: king takes rook, so Chess960 works),
//! the promotion (0 knight to 3 queen) in bits 12 and 13, and in bits 14
//! and 15 what it is: 3 a promotion, 1 en passant, 2 castling, 0 any other.
//!
//! kibitz writes the labelled stretches of a game: a game whose positions
//! are all labelled (self-play) is one viriformat game; a gap (a position
//! left out) starts another from the next labelled position, with the same
//! result.

use std::io::{self, BufRead, Write};

use crate::{
    chess::{
        mv::{Move, MoveKind},
        position::Position,
        types::{CastlingSide, Color, Piece, Role, Square},
    },
    record::{
        chain::{ChainError, walk},
        format::{Alternatives, GameRecord, Label, PackedBoard, Pv, label_score, move_index},
    },
};

/// The four zero bytes that end a game.
const END: [u8; 4] = [0; 4];

/// A piece's 4-bit code: its role (0 pawn to 5 king, 6 a rook that can
/// still castle) plus 8 for Black.
fn piece_code(pos: &Position, sq: Square, piece: Piece) -> u8 {
    let color = piece.color();
    let mut role = match piece.role() {
        Role::Pawn => 0,
        Role::Knight => 1,
        Role::Bishop => 2,
        Role::Rook => 3,
        Role::Queen => 4,
        Role::King => 5,
    };
    let castles = [CastlingSide::KingSide, CastlingSide::QueenSide]
        .iter()
        .any(|&side| pos.can_castle(color, side) && pos.castling_rook(color, side) == Some(sq));
    if castles {
        role = 6;
    }
    role | if color == Color::Black { 8 } else { 0 }
}

/// The 32-byte board of `pos` with the game's result (0, 1 or 2).
pub fn pack_board(pos: &Position, result: u8) -> [u8; 32] {
    let mut out = [0u8; 32];
    let occupied = pos.occupied();
    out[..8].copy_from_slice(&occupied.0.to_le_bytes());
    for (i, sq) in occupied.into_iter().enumerate() {
        let piece = pos.piece_on(sq).expect("an occupied square holds a piece");
        out[8 + i / 2] |= piece_code(pos, sq, piece) << ((i % 2) * 4);
    }
    let stm = u8::from(pos.side_to_move() == Color::Black) << 7;
    out[24] = stm | pos.ep_square().map_or(64, |s| s as u8);
    out[25] = pos.rule50().min(255) as u8;
    out[26..28]
        .copy_from_slice(&(pos.fullmove_number().min(u32::from(u16::MAX)) as u16).to_le_bytes());
    // 28, 29: the board's own score, unused (0); 30: the result; 31 spare.
    out[30] = result.min(2);
    out
}

/// The position of a 32-byte board, and the game's result; `None` for
/// bytes that are no legal position.
pub fn unpack_board(bytes: &[u8; 32]) -> Option<(Position, u8)> {
    let occupied = u64::from_le_bytes(bytes[..8].try_into().ok()?);
    if occupied.count_ones() > 32 {
        return None;
    }
    let mut board = [None::<(Color, u8)>; 64];
    let mut sq = occupied;
    let mut i = 0;
    while sq != 0 {
        let s = sq.trailing_zeros() as usize;
        sq &= sq - 1;
        let code = (bytes[8 + i / 2] >> ((i % 2) * 4)) & 0xf;
        let color = if code & 8 != 0 { Color::Black } else { Color::White };
        if code & 7 == 7 {
            return None;
        }
        board[s] = Some((color, code & 7));
        i += 1;
    }
    let fen = board_fen(&board, bytes)?;
    let pos = Position::from_fen(&fen).ok()?;
    Some((pos, bytes[30]))
}

/// A FEN of an unpacked board: pieces, side to move, castling (Shredder-FEN
/// files of the rooks that can castle), en passant and the clocks.
fn board_fen(board: &[Option<(Color, u8)>; 64], bytes: &[u8; 32]) -> Option<String> {
    let mut fen = String::with_capacity(90);
    for rank in (0..8).rev() {
        let mut empty = 0;
        for file in 0..8 {
            match board[rank * 8 + file] {
                None => empty += 1,
                Some((color, code)) => {
                    if empty > 0 {
                        fen.push(char::from(b'0' + empty));
                        empty = 0;
                    }
                    let letter = [b'p', b'n', b'b', b'r', b'q', b'k', b'r'][usize::from(code)];
                    let letter =
                        if color == Color::White { letter.to_ascii_uppercase() } else { letter };
                    fen.push(char::from(letter));
                }
            }
        }
        if empty > 0 {
            fen.push(char::from(b'0' + empty));
        }
        if rank > 0 {
            fen.push('/');
        }
    }
    fen.push_str(if bytes[24] & 0x80 != 0 { " b " } else { " w " });
    let mut castling = String::new();
    for (color, rank, base) in [(Color::White, 0, b'A'), (Color::Black, 7, b'a')] {
        // King side first, as Shredder-FEN writes it.
        for file in (0..8).rev() {
            if board[rank * 8 + file] == Some((color, 6)) {
                castling.push(char::from(base + file as u8));
            }
        }
    }
    fen.push_str(if castling.is_empty() { "-" } else { &castling });
    let ep = bytes[24] & 0x7f;
    match ep {
        64 => fen.push_str(" -"),
        0..64 => {
            let sq = Square::new(u32::from(ep));
            fen.push(' ');
            fen.push_str(&sq.to_string());
        }
        _ => return None,
    }
    let fullmove = u16::from_le_bytes([bytes[26], bytes[27]]).max(1);
    fen.push_str(&format!(" {} {fullmove}", bytes[25]));
    Some(fen)
}

/// A move as viriformat writes it.
pub fn encode_move(m: Move) -> u16 {
    let (from, to) = (m.from() as u16, m.to() as u16);
    let flags = match m.kind() {
        MoveKind::Promotion => {
            let role = m.promotion_role().unwrap_or(Role::Queen);
            0xc000 | (role as u16 - Role::Knight as u16) << 12
        }
        MoveKind::EnPassant => 0x4000,
        MoveKind::Castling => 0x8000,
        MoveKind::Normal => 0,
    };
    from | (to << 6) | flags
}

/// The legal move of `pos` a viriformat move names, if any.
pub fn decode_move(pos: &Position, raw: u16) -> Option<Move> {
    pos.legal_moves().iter().copied().find(|&m| encode_move(m) == raw)
}

/// Writes `record`'s labelled stretches as viriformat games (see the
/// module's documentation); returns the positions written.
pub fn write_game(out: &mut impl Write, record: &GameRecord) -> Result<u64, WriteError> {
    let result = if record.result > 2 { 1 } else { record.result };
    let mut bytes = Vec::with_capacity(40 + 4 * record.moves.len());
    let mut open = false;
    let mut positions = 0u64;
    walk(record, |step| match (step.label, step.played) {
        (Some(label), Some(m)) => {
            if !open {
                bytes.extend_from_slice(&pack_board(step.pos, result));
                open = true;
            }
            let white =
                if step.pos.side_to_move() == Color::White { label.score } else { -label.score };
            bytes.extend_from_slice(&encode_move(m).to_le_bytes());
            bytes.extend_from_slice(&white.to_le_bytes());
            positions += 1;
        }
        _ if open => {
            bytes.extend_from_slice(&END);
            open = false;
        }
        _ => {}
    })?;
    if open {
        bytes.extend_from_slice(&END);
    }
    out.write_all(&bytes)?;
    Ok(positions)
}

/// Why a game could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The record does not replay.
    #[error(transparent)]
    Chain(#[from] ChainError),
    /// Writing failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Reads the viriformat games of `reader`, each as a record numbered from
/// `first` on, every position labelled with its score and its move as the
/// best; calls `f` with each. Returns the games read, or what is wrong and
/// at which byte.
pub fn read_games(
    reader: &mut impl BufRead,
    first: u64,
    mut f: impl FnMut(GameRecord),
) -> Result<u64, (u64, String)> {
    let mut games = 0u64;
    let mut offset = 0u64;
    loop {
        let mut board = [0u8; 32];
        match read_exact_or_end(reader, &mut board) {
            Ok(false) => return Ok(games),
            Ok(true) => {}
            Err(e) => return Err((offset, e)),
        }
        let at = offset;
        offset += 32;
        let (mut pos, result) =
            unpack_board(&board).ok_or((at, "not a legal board".to_string()))?;
        let result = if result <= 2 { result } else { 3 };
        let mut record = GameRecord::new(
            first + games,
            PackedBoard::pack(&pos),
            result,
            Default::default(),
            Vec::new(),
        );
        loop {
            let mut entry = [0u8; 4];
            if !read_exact_or_end(reader, &mut entry).map_err(|e| (offset, e))? {
                return Err((offset, "cut short inside a game".to_string()));
            }
            offset += 4;
            if entry == END {
                break;
            }
            let raw = u16::from_le_bytes([entry[0], entry[1]]);
            let white = i16::from_le_bytes([entry[2], entry[3]]);
            let m = decode_move(&pos, raw).ok_or_else(|| {
                (offset - 4, format!("move {raw:#06x} is not legal in {}", pos.fen()))
            })?;
            let score = if pos.side_to_move() == Color::White { white } else { -white };
            let index =
                move_index(&pos, m).ok_or((offset - 4, "a move out of range".to_string()))?;
            record.labels.push(Label {
                ply: record.moves.len().min(usize::from(u16::MAX)) as u16,
                score: label_score(i32::from(score)),
                best: index,
                depth: 0,
                pv: Pv::default(),
                alternatives: Alternatives::default(),
                flags: 0,
            });
            record.moves.push(index);
            pos.do_move(m);
        }
        f(record);
        games += 1;
    }
}

/// Fills `buf`: `Ok(true)`, or `Ok(false)` at the end of the input before
/// its first byte; an error for an input that ends part way.
fn read_exact_or_end(reader: &mut impl BufRead, buf: &mut [u8]) -> Result<bool, String> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) if filled == 0 => return Ok(false),
            Ok(0) => return Err(format!("cut short: {filled} of {} bytes", buf.len())),
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A board packs and unpacks to the same position (castling rights,
    /// en passant, clocks and side to move included), standard and
    /// Chess960.
    #[test]
    fn boards_round_trip() {
        for fen in [
            crate::chess::fen::STARTPOS,
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 b - - 13 40",
        ] {
            let pos = Position::from_fen(fen).unwrap();
            let (back, result) = unpack_board(&pack_board(&pos, 2)).unwrap();
            assert_eq!((back.fen(), result), (pos.fen(), 2), "{fen}");
        }
        let pos960 = crate::chess::chess960::start(3, 700);
        let (back, _) = unpack_board(&pack_board(&pos960, 1)).unwrap();
        assert_eq!(back.fen_shredder(), pos960.fen_shredder());
        assert!(back.is_chess960());
    }

    /// The start position's board, byte by byte as the format gives it.
    #[test]
    fn the_start_position_bytes() {
        let b = pack_board(&Position::startpos(), 1);
        assert_eq!(&b[..8], &0xffff_0000_0000_ffffu64.to_le_bytes());
        // a1 rook that can castle (6), b1 knight (1): byte 0 is 0x16; the
        // white king (5) on e1 with the f1 bishop (2): byte 2 is 0x25.
        assert_eq!(b[8], 0x16);
        assert_eq!(b[10], 0x25);
        // Black's a7 and b7 pawns (0 + 8 each), then, four bytes on, its
        // a8 rook (6 + 8) and b8 knight (1 + 8).
        assert_eq!(b[16], 0x88);
        assert_eq!(b[20], 0x9e);
        assert_eq!((b[24], b[25], b[26], b[27], b[30]), (64, 0, 1, 0, 1));
    }
}
