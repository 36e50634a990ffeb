//! EPD lines: the four position fields of a FEN (or all six), then
//! opcodes (`bm Nf3; id "WAC.001"; ce 35; c0 "text";`).
//!
//! Tolerant of what published suites contain: CRLF and trailing NUL bytes,
//! 6-field FENs, a `;` right after the position, a malformed en-passant
//! field (`-1` for `-`), opcodes with several operands (`bm Qb3 Qa4;`),
//! quoted operands holding `;`.
//!
//! ```
//! use kibitz::EpdLine;
//!
//! let line = EpdLine::parse(b"2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - bm Qg6; id \"WAC.001\";").unwrap()?;
//! assert_eq!(line.operand("id"), Some("WAC.001"));
//! assert_eq!(line.operands("bm"), Some(&["Qg6".to_string()][..]));
//! let pos = line.position().unwrap();
//! assert_eq!(pos.side_to_move(), kibitz::Color::White);
//! # Ok::<(), kibitz::FenError>(())
//! ```

use crate::{
    chess::{
        fen::{FenError, FenOptions, Setup},
        mv::Move,
        position::Position,
        types::Square,
    },
    io::pgn::PgnEval,
};

/// One EPD line, parsed.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct EpdLine {
    /// The FEN text rebuilt from the line's position fields (and counters
    /// when present), with a malformed en-passant field replaced by `-`.
    pub fen: String,
    /// The opcodes in order, each with its operands (quotes removed).
    pub opcodes: Vec<(String, Vec<String>)>,
    /// Repairs made while reading (a bad en-passant field, ...).
    pub repairs: Vec<String>,
}

/// Splits `text` at `;` outside double quotes.
fn split_opcodes(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut quoted = false;
    for (i, c) in text.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ';' if !quoted => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// Splits operands at spaces outside quotes, removing the quotes.
fn split_operands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in text.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any || !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                    any = false;
                }
            }
            c => current.push(c),
        }
    }
    if any || !current.is_empty() {
        out.push(current);
    }
    out
}

impl EpdLine {
    /// Parses a line. `None` for a blank line or a `#` comment.
    ///
    /// # Errors
    ///
    /// When the position fields are missing or not valid FEN syntax.
    pub fn parse(raw: &[u8]) -> Option<Result<EpdLine, FenError>> {
        let text = String::from_utf8_lossy(raw);
        let text = text.trim_matches(|c: char| c.is_whitespace() || c == '\0' || c == '\u{feff}');
        if text.is_empty() || text.starts_with('#') {
            return None;
        }
        Some(EpdLine::parse_text(text))
    }

    fn parse_text(text: &str) -> Result<EpdLine, FenError> {
        let mut repairs = Vec::new();
        let mut rest = text;
        let mut fields: Vec<&str> = Vec::with_capacity(6);
        // Take the four position fields.
        while fields.len() < 4 {
            rest = rest.trim_start();
            let end = rest.find(|c: char| c.is_whitespace() || c == ';').unwrap_or(rest.len());
            if end == 0 {
                break;
            }
            fields.push(&rest[..end]);
            rest = &rest[end..];
        }
        if fields.len() == 4
            && !(fields[3] == "-" || Square::from_ascii(fields[3].as_bytes()).is_some())
        {
            repairs.push(format!("en-passant field {:?} read as '-'", fields[3]));
            fields[3] = "-";
        }
        // Optional halfmove and fullmove numbers.
        for _ in 0..2 {
            let t = rest.trim_start();
            let end = t.find(|c: char| c.is_whitespace() || c == ';').unwrap_or(t.len());
            if end > 0 && t[..end].bytes().all(|b| b.is_ascii_digit()) {
                fields.push(&t[..end]);
                rest = &t[end..];
            } else {
                break;
            }
        }
        let fen = fields.join(" ");
        // Validate the syntax now so the error names the field.
        Setup::parse(fen.as_bytes())?;
        let opcodes = split_opcodes(rest)
            .into_iter()
            .filter_map(|op| {
                let op = op.trim();
                if op.is_empty() {
                    return None;
                }
                let (name, operands) = op.split_once(char::is_whitespace).unwrap_or((op, ""));
                Some((name.to_string(), split_operands(operands)))
            })
            .collect();
        Ok(EpdLine { fen, opcodes, repairs })
    }

    /// The operands of the first opcode named `name`.
    pub fn operands(&self, name: &str) -> Option<&[String]> {
        self.opcodes.iter().find(|(n, _)| n == name).map(|(_, v)| &v[..])
    }

    /// The first operand of the first opcode named `name`.
    pub fn operand(&self, name: &str) -> Option<&str> {
        self.operands(name).and_then(|v| v.first()).map(String::as_str)
    }

    /// The move played from the position, if the line gives one: `sm`
    /// (EPD's supplied move), in SAN or UCI; an error for one that is not a
    /// legal move here. A table of positions writes its played move so.
    pub fn played(&self, pos: &Position) -> Result<Option<Move>, String> {
        let Some(text) = self.operand("sm") else { return Ok(None) };
        let m = pos.parse_san(text.as_bytes()).ok().or_else(|| pos.parse_uci(text).ok());
        match m {
            Some(m) if m != Move::NULL => Ok(Some(m)),
            _ => Err(format!("the played move `{text}` is not a legal move in this position")),
        }
    }

    /// The evaluation the line gives, from White's side as PGN's
    /// `[%eval]` gives it: `ce` (centipawns) or `dm` (mate in that many
    /// moves, negative when the side to move is mated), both from the
    /// side to move's view as EPD gives them; `dm` wins. `None` when the
    /// line gives neither; an error for an operand that is no number.
    pub fn evaluation(&self, white_to_move: bool) -> Option<Result<PgnEval, String>> {
        let sign = if white_to_move { 1 } else { -1 };
        let number = |op: &str| {
            let text = self.operand(op)?;
            Some(text.parse::<i32>().map_err(|_| format!("`{op} {text}` is not a whole number")))
        };
        if let Some(dm) = number("dm") {
            return Some(dm.map(|n| PgnEval::Mate(n * sign)));
        }
        number("ce").map(|cp| cp.map(|cp| PgnEval::Cp(cp * sign)))
    }

    /// The position, detecting Chess960 castling; castling rights without a
    /// rook are dropped (published suites have them).
    pub fn position(&self) -> Result<Position, FenError> {
        Position::from_fen_with(
            self.fen.as_bytes(),
            FenOptions { drop_invalid_castling: true, ..FenOptions::default() },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kaufman_style_lines() {
        // NUL at the end, counters, ';' after the FEN, a malformed ep field.
        let line = EpdLine::parse(
            b"r1bqrnk1/pp2bp1p/2p2np1/3p2B1/3P4/2NBPN2/PPQ2PPP/1R3RK1 w - -1 12 ; bm b4\0",
        )
        .unwrap()
        .unwrap();
        assert_eq!(line.fen, "r1bqrnk1/pp2bp1p/2p2np1/3p2B1/3P4/2NBPN2/PPQ2PPP/1R3RK1 w - - 12");
        assert_eq!(line.operand("bm"), Some("b4"));
        assert_eq!(line.repairs.len(), 1);
        let line = EpdLine::parse(
            b"rn1qkb1r/pb1p1ppp/1p2pn2/2p5/2PP4/5NP1/PP2PPBP/RNBQK2R w KQkq c6 1 6; bm d5\r",
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            line.fen,
            "rn1qkb1r/pb1p1ppp/1p2pn2/2p5/2PP4/5NP1/PP2PPBP/RNBQK2R w KQkq c6 1 6"
        );
        assert!(line.position().is_ok());
    }

    #[test]
    fn quoted_operands_and_several_moves() {
        let line = EpdLine::parse(b"1k1r4/pp1b1R2/3q2pp/4p3/2B5/4Q3/PPP2B2/2K5 b - - bm Qd1+ Qd2; id \"BK; 01\"; c0 \"a b\";")
            .unwrap()
            .unwrap();
        assert_eq!(line.operands("bm").unwrap(), &["Qd1+".to_string(), "Qd2".to_string()]);
        assert_eq!(line.operand("id"), Some("BK; 01"));
        assert_eq!(line.operand("c0"), Some("a b"));
        assert!(EpdLine::parse(b"   \r\n").is_none());
        assert!(EpdLine::parse(b"not a fen").unwrap().is_err());
    }
}
