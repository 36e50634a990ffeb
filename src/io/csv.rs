//! CSV and TSV tables of games or positions, read with the `csv` crate: a
//! header line of column names, then a game or a position a row, as a
//! Parquet table is read (the columns by their names, [`crate::io::table`]). Found by content,
//! not by name: a first line that is a header of names separated by commas
//! or tabs, and neither a PGN tag nor a FEN.

use crate::io::table::{Cells, Kind, Layout, TableOptions, number, whole_number};

/// The separator of a table whose text starts with `head`, if it is a
/// table: its first non-blank line holds at least two names separated by
/// commas or tabs (the one it holds more of), each of letters, digits,
/// `_`, `-`, `.`, spaces or quotes, and is neither a PGN tag pair, a FEN
/// nor a line of moves.
pub fn sniff(head: &[u8]) -> Option<u8> {
    let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    let line = head.split(|&b| b == b'\n').map(|l| l.trim_ascii()).find(|l| !l.is_empty())?;
    if line.starts_with(b"[") || line.first().is_some_and(u8::is_ascii_digit) {
        return None;
    }
    let tabs = line.iter().filter(|&&b| b == b'\t').count();
    let commas = line.iter().filter(|&&b| b == b',').count();
    let sep = if tabs >= commas { b'\t' } else { b',' };
    if tabs.max(commas) == 0 || line.contains(&b'/') {
        return None;
    }
    let names = line.split(|&b| b == sep).map(|n| n.trim_ascii());
    // An empty name is pandas' unnamed index (`,pgn,elo`); one name at
    // least is not empty.
    let name_like = |n: &[u8]| {
        n.len() <= 64 && n.iter().all(|&b| b.is_ascii_alphanumeric() || b"_-. \"'".contains(&b))
    };
    let named = names.clone().any(|n| n.iter().any(u8::is_ascii_alphanumeric));
    (named && names.clone().all(name_like)).then_some(sep)
}

/// Whether text that starts with `head` is a CSV or TSV table of positions
/// without its header line: its first non-blank line is a FEN, then a
/// comma or a tab and more cells. (Read as EPD, the other cells would be
/// taken for opcodes and lost.)
pub fn headerless(head: &[u8]) -> bool {
    let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    let Some(line) = head.split(|&b| b == b'\n').map(|l| l.trim_ascii()).find(|l| !l.is_empty())
    else {
        return false;
    };
    let Some(cut) = line.iter().position(|&b| b == b',' || b == b'\t') else { return false };
    let cell = line[..cut].trim_ascii();
    let first = cell.strip_prefix(b"\"").unwrap_or(cell);
    // The cell before the separator is a FEN alone: 4 to 6 fields, no
    // opcodes (a `;`).
    let fields: Vec<&[u8]> = first.split(|&b| b == b' ').filter(|f| !f.is_empty()).collect();
    let board = fields.first().copied().unwrap_or_default();
    (4..=6).contains(&fields.len())
        && !first.contains(&b';')
        && board.iter().filter(|&&b| b == b'/').count() == 7
        && board.iter().all(|b| b"/12345678pnbrqkPNBRQK".contains(b))
        && matches!(fields[1], b"w" | b"b")
}

/// The message for a table [`headerless`] finds.
pub const HEADERLESS: &str = "a CSV table without a header line: its first line holds a \
    position where the names of its columns belong (`fen`, `move`, `cp`...); add the header line";

/// The layout of a CSV table, from its header; an error names the
/// columns it has and those looked for.
pub fn layout(header: &csv::ByteRecord, options: &TableOptions) -> Result<Layout, String> {
    let names: Vec<String> =
        header.iter().map(|n| String::from_utf8_lossy(n).trim().to_string()).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    Layout::find(&names, options).map_err(|e| format!("a CSV table with {e}"))
}

/// A record of a CSV table.
pub struct CsvCells<'a> {
    /// The record.
    pub record: &'a csv::ByteRecord,
}

impl Cells for CsvCells<'_> {
    fn cell(&self, col: usize, kind: Kind, out: &mut Vec<u8>) -> bool {
        let Some(cell) = self.record.get(col) else {
            return false;
        };
        let cell = cell.trim_ascii();
        if cell.is_empty() {
            return false;
        }
        match kind {
            // pandas writes an integer column with gaps as floats: `1500.0`.
            Kind::Integer => match number(cell).and_then(whole_number) {
                Some(n) => out.extend_from_slice(n.to_string().as_bytes()),
                None => out.extend_from_slice(cell),
            },
            // `2016-05-01` (ISO, as pandas writes dates) is PGN's `2016.05.01`.
            Kind::Date => {
                let iso = cell.len() >= 10
                    && cell[4] == b'-'
                    && cell[7] == b'-'
                    && cell[..10]
                        .iter()
                        .enumerate()
                        .all(|(i, b)| i == 4 || i == 7 || b.is_ascii_digit());
                if iso {
                    out.extend_from_slice(&cell[..4]);
                    out.push(b'.');
                    out.extend_from_slice(&cell[5..7]);
                    out.push(b'.');
                    out.extend_from_slice(&cell[8..10]);
                } else {
                    out.extend_from_slice(cell);
                }
            }
            Kind::Text => out.extend_from_slice(cell),
        }
        true
    }

    fn text<'s>(&'s self, col: usize, _: &'s mut Vec<u8>) -> Option<&'s [u8]> {
        self.record.get(col)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_tables_and_not_pgn_or_epd() {
        assert_eq!(sniff(b"pgn,elo\n\"1. e4 e5 *\",1500\n"), Some(b','));
        assert_eq!(sniff(b"\xef\xbb\xbfWhite\tBlack\tmoves\n"), Some(b'\t'));
        assert_eq!(sniff(b"\n\"Event\",\"Site\",\"movetext\"\n"), Some(b','));
        assert_eq!(sniff(b"[Event \"a, b\"]\n"), None);
        assert_eq!(sniff(b"1. e4, e5\n"), None);
        assert_eq!(sniff(b"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - bm e4;\n"), None);
        assert_eq!(sniff(b"e4 e5 Nf3 *\n"), None);
        assert_eq!(sniff(b""), None);
        // pandas' `to_csv` with its index: the index's name is empty.
        assert_eq!(sniff(b",pgn,white_elo\n0,\"1. e4 *\",1500.0\n"), Some(b','));
        assert_eq!(sniff(b",,\n"), None);
    }

    #[test]
    fn finds_tables_of_positions_without_a_header() {
        let fen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        assert!(headerless(format!("{fen},e2e4,35\n").as_bytes()));
        assert!(headerless(format!("\n{fen}\te4\n").as_bytes()));
        assert!(!headerless(format!("{fen} bm e4; c0 \"a, b\";\n").as_bytes()));
        assert!(!headerless(format!("fen,move\n{fen},e4\n").as_bytes()));
        assert!(!headerless(b"[Event \"a, b\"]\n"));
    }
}
