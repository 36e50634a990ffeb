//! Where a game stands in its input, as messages name it: a byte offset
//! in a text input's (decompressed) text, a row in a Parquet input, or a
//! line of a CSV table.
//!
//! A game read from a Parquet file has no byte offset of its own: the
//! reader numbers it by its row in the file (from 0), and registers the
//! file's row groups here, so that a message can say "row group 3, row
//! 17" where a text input's says "byte 4096". The table holds the first
//! row of each row group of each Parquet input opened, under the name
//! messages give the input: a few numbers per file.

use std::sync::{Arc, Mutex};

/// The Parquet inputs opened, by name, with the first row of each of
/// their row groups.
static ROW_GROUPS: Mutex<Vec<(String, Arc<[u64]>)>> = Mutex::new(Vec::new());

/// Records that the input named `name` is a Parquet file whose row groups
/// start at the rows `starts` (ascending, the first 0).
pub fn register_row_groups(name: &str, starts: Vec<u64>) {
    let mut table = ROW_GROUPS.lock().unwrap_or_else(|e| e.into_inner());
    let starts: Arc<[u64]> = starts.into();
    match table.iter_mut().find(|(n, _)| n == name) {
        Some(entry) => entry.1 = starts,
        None => table.push((name.to_string(), starts)),
    }
}

/// Records that the input named `name` is a CSV table: its games are
/// placed by their lines (no row groups).
pub fn register_lines(name: &str) {
    register_row_groups(name, Vec::new());
}

/// The row groups of the Parquet input named `name`, if it is one (none
/// for a CSV table).
fn row_groups(name: &str) -> Option<Arc<[u64]>> {
    let table = ROW_GROUPS.lock().unwrap_or_else(|e| e.into_inner());
    table.iter().find(|(n, _)| n == name).map(|(_, s)| s.clone())
}

/// A place in an input, as a message words it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// A byte offset in a text input.
    Byte(u64),
    /// A line of a CSV table (from 1), where its row starts.
    Line(u64),
    /// A row of a Parquet file: the row group, the row in it and in the
    /// file (all from 0).
    Row {
        /// The row group.
        group: usize,
        /// The row within the row group.
        row: u64,
        /// The row within the file.
        in_file: u64,
    },
}

impl Place {
    /// The place of `offset` (a byte offset, or a row for a Parquet input)
    /// in the input named `name`.
    pub fn of(name: &str, offset: u64) -> Place {
        match row_groups(name) {
            Some(starts) if starts.is_empty() => Place::Line(offset),
            Some(starts) => {
                let group = starts.partition_point(|&s| s <= offset).saturating_sub(1);
                let first = starts.get(group).copied().unwrap_or(0);
                Place::Row { group, row: offset - first.min(offset), in_file: offset }
            }
            None => Place::Byte(offset),
        }
    }
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::Byte(b) => write!(f, "byte {b}"),
            Place::Line(n) => write!(f, "line {n}"),
            Place::Row { group, row, in_file } => {
                write!(f, "row group {group}, row {row} (row {in_file} of the file)")
            }
        }
    }
}

/// `offset` in the input named `name`, as a message says it: `byte N`, or
/// `row group G, row R (row N of the file)`.
pub fn describe(name: &str, offset: u64) -> String {
    Place::of(name, offset).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_of_a_registered_file_name_their_row_group() {
        register_row_groups("place-test.parquet", vec![0, 1000, 2000]);
        assert_eq!(describe("place-test.parquet", 0), "row group 0, row 0 (row 0 of the file)");
        assert_eq!(
            describe("place-test.parquet", 1999),
            "row group 1, row 999 (row 1999 of the file)"
        );
        assert_eq!(
            describe("place-test.parquet", 2500),
            "row group 2, row 500 (row 2500 of the file)"
        );
        assert_eq!(describe("place-test.pgn", 2500), "byte 2500");
        register_lines("place-test.csv");
        assert_eq!(describe("place-test.csv", 17), "line 17");
    }
}
