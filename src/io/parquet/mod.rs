//! Parquet: Lichess's datasets read as kibitz's inputs, and the tables
//! kibitz writes.
//!
//! * [`games`]: tables of games (`Lichess/standard-chess-games`, one game
//!   a row, its tags in columns and its moves in `movetext`; or another
//!   pipeline's, its moves in `pgn`, `moves`, `uci`...) read as PGN games,
//!   row group by row group, in parallel and in bounded memory.
//! * `Lichess/chess-position-evaluations` (one principal variation a row)
//!   is recognised here ([`is_evals`]) and read as labelled positions by
//!   `record::lichess_evals`, with the column readers of [`column`].
//! * [`write`]: tables written with zstd in row groups of a bounded size,
//!   streamed.
//!
//! Column names and types are read from each file's footer: the datasets'
//! schemas may change, so a column is found by its name and read from any
//! of the types that can hold its values (strings of any width, integers
//! of any width, dates and times in any unit); a file that lacks a
//! required column, or holds one in a type that cannot be read, is an
//! error that names the column.

pub mod column;
pub mod games;
pub mod write;

use std::sync::Arc;

use bytes::Bytes;
use parquet::file::{
    metadata::ParquetMetaData,
    reader::{ChunkReader, FileReader},
    serialized_reader::SerializedFileReader,
};

pub(crate) use column::{Form, RootColumn, UnitReader, root_columns};

use crate::io::mapguard::GuardedMap;

/// A memory map as the bytes the Parquet reader reads: pages are decoded
/// straight from the map, nothing is copied first.
struct MapBytes(Arc<GuardedMap>);

impl AsRef<[u8]> for MapBytes {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// The bytes of a mapped file as the Parquet reader takes them.
pub(crate) fn map_bytes(map: Arc<GuardedMap>) -> Bytes {
    Bytes::from_owner(MapBytes(map))
}

/// A Parquet file opened: its footer read, or why it cannot be. The
/// reader is another crate's: a malformed footer must not take the run
/// down with a panic.
pub(crate) fn open<R: ChunkReader + 'static>(source: R) -> Result<SerializedFileReader<R>, String> {
    let opened = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        SerializedFileReader::new(source)
    }));
    match opened {
        Ok(Ok(file)) => Ok(file),
        Ok(Err(e)) => Err(format!("not a readable Parquet file: {e}")),
        Err(_) => Err("not a readable Parquet file: its footer is malformed".into()),
    }
}

/// Whether a Parquet file is one of Lichess's evaluations: it has a `fen`
/// and a `line` column (a games file has `movetext`).
pub fn is_evals(path: &std::path::Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else { return false };
    let Ok(reader) = open(file) else { return false };
    let roots = root_columns(reader.metadata());
    let has = |n: &str| roots.iter().any(|r| r.name == n);
    has("fen") && has("line")
}

/// The first row of each row group of a file.
pub(crate) fn row_group_starts(meta: &ParquetMetaData) -> Vec<u64> {
    let mut starts = Vec::with_capacity(meta.num_row_groups());
    let mut at = 0u64;
    for g in meta.row_groups() {
        starts.push(at);
        at += g.num_rows().max(0) as u64;
    }
    starts
}

/// The civil date of a day counted from 1970-01-01 (the proleptic
/// Gregorian calendar), as `(year, month, day)`.
pub(crate) fn civil_date(days: i64) -> (i64, u32, u32) {
    // Days from 0000-03-01, in eras of 400 years (146,097 days).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Appends `n` (0 to 99) as two digits.
pub(crate) fn push_two(out: &mut Vec<u8>, n: u32) {
    out.extend_from_slice(&[b'0' + (n / 10 % 10) as u8, b'0' + (n % 10) as u8]);
}

/// Appends a whole number in decimal.
pub(crate) fn push_int(out: &mut Vec<u8>, v: i64) {
    let mut digits = [0u8; 20];
    let mut n = v.unsigned_abs();
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&digits[i..]);
}

/// Appends `YYYY.MM.DD` for a day counted from 1970-01-01.
pub(crate) fn push_date(out: &mut Vec<u8>, days: i64) {
    let (y, m, d) = civil_date(days);
    if (0..10_000).contains(&y) {
        push_two(out, (y / 100) as u32);
        push_two(out, (y % 100) as u32);
    } else {
        push_int(out, y);
    }
    out.push(b'.');
    push_two(out, m);
    out.push(b'.');
    push_two(out, d);
}

/// Appends `HH:MM:SS` for a number of seconds into a day.
pub(crate) fn push_time(out: &mut Vec<u8>, seconds: i64) {
    let s = seconds.rem_euclid(86_400) as u32;
    push_two(out, s / 3600);
    out.push(b':');
    push_two(out, s / 60 % 60);
    out.push(b':');
    push_two(out, s % 60);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_match_the_calendar() {
        assert_eq!(civil_date(0), (1970, 1, 1));
        assert_eq!(civil_date(-1), (1969, 12, 31));
        // 2016-05-01 is day 16,922; 2000-02-29 day 11,016.
        assert_eq!(civil_date(16_922), (2016, 5, 1));
        assert_eq!(civil_date(11_016), (2000, 2, 29));
        assert_eq!(civil_date(11_017), (2000, 3, 1));
        let mut out = Vec::new();
        push_time(&mut out, 3 * 3600 + 4 * 60 + 5);
        out.push(b' ');
        push_date(&mut out, 16_922);
        out.push(b' ');
        for v in [0, -7, 1234, i64::MIN] {
            push_int(&mut out, v);
            out.push(b' ');
        }
        assert_eq!(out, b"03:04:05 2016.05.01 0 -7 1234 -9223372036854775808 ");
    }
}
