//! CSV and TSV tables of games, read with the `csv` crate: a header line of
//! column names, then a game a row, as a Parquet table of games is read
//! (the columns by their names, [`crate::io::table`]). Found by content,
//! not by name: a first line that is a header of names separated by commas
//! or tabs, and neither a PGN tag nor a FEN.

use crate::io::table::{Cells, Kind, MOVES_COLUMNS, TAG_COLUMNS, normalize, whole_number};

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
    let name_like = |n: &[u8]| {
        !n.is_empty()
            && n.len() <= 64
            && n.iter().all(|&b| b.is_ascii_alphanumeric() || b"_-. \"'".contains(&b))
    };
    names.clone().all(name_like).then_some(sep)
}

/// Where the columns of a CSV table of games are.
#[derive(Clone, Debug)]
pub struct CsvColumns {
    tags: [Option<usize>; TAG_COLUMNS.len()],
    moves: usize,
}

impl CsvColumns {
    /// Finds the columns in a header; an error names the columns it has
    /// and those looked for.
    pub fn find(header: &csv::ByteRecord, moves: Option<&str>) -> Result<CsvColumns, String> {
        let names: Vec<String> =
            header.iter().map(|n| normalize(&String::from_utf8_lossy(n))).collect();
        let index = |name: &str| names.iter().position(|n| n == name);
        let wanted: Vec<String> = match moves {
            Some(m) => vec![normalize(m)],
            None => MOVES_COLUMNS.iter().map(|m| m.to_string()).collect(),
        };
        let moves_at = wanted.iter().find_map(|w| index(w)).ok_or_else(|| {
            let have: Vec<String> =
                header.iter().map(|n| String::from_utf8_lossy(n).into_owned()).collect();
            let looked = match moves {
                Some(m) => format!("`{m}`, the column --moves-column names"),
                None => format!("one of {}", MOVES_COLUMNS.join(", ")),
            };
            format!(
                "a CSV table with no column of moves: looked for {looked}, ignoring case, `_` \
                 and `-` (its columns: {})",
                have.join(", ")
            )
        })?;
        let mut tags = [None; TAG_COLUMNS.len()];
        for (slot, column) in tags.iter_mut().zip(TAG_COLUMNS) {
            *slot = column.names.iter().find_map(|n| index(n)).filter(|&i| i != moves_at);
        }
        Ok(CsvColumns { tags, moves: moves_at })
    }
}

/// A record of a CSV table of games.
pub struct CsvCells<'a> {
    /// The record.
    pub record: &'a csv::ByteRecord,
    /// The table's columns.
    pub columns: &'a CsvColumns,
}

impl Cells for CsvCells<'_> {
    fn has(&self, k: usize) -> bool {
        self.columns.tags[k].is_some()
    }

    fn tag(&self, k: usize, kind: Kind, out: &mut Vec<u8>) -> bool {
        let Some(cell) = self.columns.tags[k].and_then(|i| self.record.get(i)) else {
            return false;
        };
        let cell = cell.trim_ascii();
        if cell.is_empty() {
            return false;
        }
        match kind {
            // pandas writes an integer column with gaps as floats: `1500.0`.
            Kind::Integer => {
                let number = std::str::from_utf8(cell).ok().and_then(|t| t.parse::<f64>().ok());
                match number.and_then(whole_number) {
                    Some(n) => out.extend_from_slice(n.to_string().as_bytes()),
                    None => out.extend_from_slice(cell),
                }
            }
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

    fn moves<'s>(&'s self, _: &'s mut Vec<u8>) -> Option<&'s [u8]> {
        self.record.get(self.columns.moves)
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
    }
}
