//! Parquet: Lichess's datasets read as kibitz's inputs, and the tables
//! kibitz writes.
//!
//! * [`games`]: tables of games (`Lichess/standard-chess-games`, one game
//!   a row, its tags in columns and its moves in `movetext`; or another
//!   pipeline's, its moves in `pgn`, `moves`, `uci`...) read as PGN games,
//!   row group by row group, in parallel and in bounded memory.
//! * `Lichess/chess-position-evaluations` (one principal variation a row)
//!   is recognised here ([`is_evals`]) and read as labelled positions by
//!   `record::lichess_evals`, with the helpers below.
//! * [`write`]: tables written with zstd in row groups of a bounded size,
//!   streamed.
//!
//! Column names and types are read from each file's footer: the datasets'
//! schemas may change, so a column is found by its name and read from any
//! of the types that can hold its values (strings of any width, integers
//! of any width, dates and times in any unit); a file that lacks a
//! required column, or holds one in a type that cannot be read, is an
//! error that names the column.

pub mod games;
pub mod write;

use std::sync::Arc;

use arrow_array::{Array, cast::AsArray, types::*};
use arrow_schema::{DataType, TimeUnit};
use bytes::Bytes;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};

use crate::io::{
    mapguard::GuardedMap,
    table::{Kind, whole_number},
};

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

/// A Parquet file's footer read, or why it cannot be. The reader is
/// another crate's: a malformed footer must not take the run down with a
/// panic.
pub(crate) fn open_metadata(bytes: &Bytes) -> Result<ArrowReaderMetadata, String> {
    let loaded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        ArrowReaderMetadata::load(bytes, ArrowReaderOptions::new())
    }));
    match loaded {
        Ok(Ok(m)) => Ok(m),
        Ok(Err(e)) => Err(format!("not a readable Parquet file: {e}")),
        Err(_) => Err("not a readable Parquet file: its footer is malformed".into()),
    }
}

/// Whether a Parquet file is one of Lichess's evaluations: it has a `fen`
/// and a `line` column (a games file has `movetext`).
pub fn is_evals(path: &std::path::Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else { return false };
    let Ok(meta) = ArrowReaderMetadata::load(&file, ArrowReaderOptions::new()) else {
        return false;
    };
    let has = |n: &str| meta.schema().fields().iter().any(|f| f.name() == n);
    has("fen") && has("line")
}

/// The first row of each row group of a file.
pub(crate) fn row_group_starts(meta: &ArrowReaderMetadata) -> Vec<u64> {
    let mut starts = Vec::with_capacity(meta.metadata().num_row_groups());
    let mut at = 0u64;
    for g in meta.metadata().row_groups() {
        starts.push(at);
        at += g.num_rows().max(0) as u64;
    }
    starts
}

/// Whether values of type `t` can be read as `kind`.
pub(crate) fn readable(t: &DataType, kind: Kind) -> bool {
    use DataType as D;
    match t {
        D::Dictionary(_, values) => readable(values, kind),
        D::Utf8 | D::LargeUtf8 | D::Utf8View => true,
        D::Int8 | D::Int16 | D::Int32 | D::Int64 => kind != Kind::Date,
        D::UInt8 | D::UInt16 | D::UInt32 | D::UInt64 => kind != Kind::Date,
        // pandas writes an integer column with missing values as floats.
        D::Float32 | D::Float64 => kind != Kind::Date,
        D::Date32 | D::Date64 => kind == Kind::Date || kind == Kind::Text,
        D::Time32(_) | D::Time64(_) => kind == Kind::Text,
        D::Timestamp(_, _) => kind == Kind::Date || kind == Kind::Text,
        D::Null => true,
        _ => false,
    }
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
fn push_two(out: &mut Vec<u8>, n: u32) {
    out.extend_from_slice(&[b'0' + (n / 10 % 10) as u8, b'0' + (n % 10) as u8]);
}

/// Appends a whole number in decimal.
fn push_int(out: &mut Vec<u8>, v: i64) {
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
fn push_date(out: &mut Vec<u8>, days: i64) {
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
fn push_time(out: &mut Vec<u8>, seconds: i64) {
    let s = seconds.rem_euclid(86_400) as u32;
    push_two(out, s / 3600);
    out.push(b':');
    push_two(out, s / 60 % 60);
    out.push(b':');
    push_two(out, s % 60);
}

/// Seconds since 1970 of a timestamp's value in `unit`.
fn timestamp_seconds(v: i64, unit: TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => v,
        TimeUnit::Millisecond => v.div_euclid(1000),
        TimeUnit::Microsecond => v.div_euclid(1_000_000),
        TimeUnit::Nanosecond => v.div_euclid(1_000_000_000),
    }
}

/// Appends the value at row `i` of `a` as `kind` writes it (PGN's date
/// and time forms for days and times); returns `false`, appending
/// nothing, for a null or a type [`readable`] refuses.
pub(crate) fn push_cell(a: &dyn Array, i: usize, kind: Kind, out: &mut Vec<u8>) -> bool {
    if a.is_null(i) {
        return false;
    }
    use DataType as D;
    match a.data_type() {
        D::Dictionary(_, _) => {
            let Some(dict) = a.as_any_dictionary_opt() else { return false };
            let Some(key) = dict_key(dict.keys(), i) else { return false };
            return push_cell(dict.values().as_ref(), key, kind, out);
        }
        D::Utf8 => out.extend_from_slice(a.as_string::<i32>().value(i).as_bytes()),
        D::LargeUtf8 => out.extend_from_slice(a.as_string::<i64>().value(i).as_bytes()),
        D::Utf8View => out.extend_from_slice(a.as_string_view().value(i).as_bytes()),
        D::Int8 | D::Int16 | D::Int32 | D::Int64 | D::UInt8 | D::UInt16 | D::UInt32 => {
            push_int(out, int_value(a, i).unwrap_or(0))
        }
        D::UInt64 => match int_value(a, i) {
            Some(v) => push_int(out, v),
            // Past i64: written as it is.
            None => {
                let v = a.as_primitive::<UInt64Type>().value(i);
                out.extend_from_slice(v.to_string().as_bytes())
            }
        },
        D::Float32 | D::Float64 => {
            let v = match a.data_type() {
                D::Float32 => f64::from(a.as_primitive::<Float32Type>().value(i)),
                _ => a.as_primitive::<Float64Type>().value(i),
            };
            if !v.is_finite() {
                return false;
            }
            match whole_number(v) {
                Some(n) => push_int(out, n),
                None => out.extend_from_slice(v.to_string().as_bytes()),
            }
        }
        D::Date32 => push_date(out, a.as_primitive::<Date32Type>().value(i).into()),
        D::Date64 => push_date(out, a.as_primitive::<Date64Type>().value(i).div_euclid(86_400_000)),
        D::Time32(TimeUnit::Second) => {
            push_time(out, a.as_primitive::<Time32SecondType>().value(i).into())
        }
        D::Time32(_) => {
            push_time(out, i64::from(a.as_primitive::<Time32MillisecondType>().value(i)) / 1000)
        }
        D::Time64(TimeUnit::Microsecond) => {
            push_time(out, a.as_primitive::<Time64MicrosecondType>().value(i) / 1_000_000)
        }
        D::Time64(_) => {
            push_time(out, a.as_primitive::<Time64NanosecondType>().value(i) / 1_000_000_000)
        }
        D::Timestamp(unit, _) => {
            let v = match unit {
                TimeUnit::Second => a.as_primitive::<TimestampSecondType>().value(i),
                TimeUnit::Millisecond => a.as_primitive::<TimestampMillisecondType>().value(i),
                TimeUnit::Microsecond => a.as_primitive::<TimestampMicrosecondType>().value(i),
                TimeUnit::Nanosecond => a.as_primitive::<TimestampNanosecondType>().value(i),
            };
            let s = timestamp_seconds(v, *unit);
            match kind {
                Kind::Date => push_date(out, s.div_euclid(86_400)),
                _ => {
                    push_date(out, s.div_euclid(86_400));
                    out.push(b' ');
                    push_time(out, s);
                }
            }
        }
        _ => return false,
    }
    true
}

/// The bytes of the string at row `i` of `a`, as the array holds them
/// (no copy); `None` for a null or a column of another type.
pub(crate) fn text_slice(a: &dyn Array, i: usize) -> Option<&[u8]> {
    if a.is_null(i) {
        return None;
    }
    use DataType as D;
    match a.data_type() {
        D::Utf8 => Some(a.as_string::<i32>().value(i).as_bytes()),
        D::LargeUtf8 => Some(a.as_string::<i64>().value(i).as_bytes()),
        D::Utf8View => Some(a.as_string_view().value(i).as_bytes()),
        D::Dictionary(_, _) => {
            let dict = a.as_any_dictionary_opt()?;
            let key = dict_key(dict.keys(), i)?;
            text_slice(dict.values().as_ref(), key)
        }
        _ => None,
    }
}

/// The value at row `i` of an integer array of any width (nulls not
/// checked); `None` for another type, or a `u64` past `i64`.
fn int_value(a: &dyn Array, i: usize) -> Option<i64> {
    use DataType as D;
    Some(match a.data_type() {
        D::Int8 => a.as_primitive::<Int8Type>().value(i).into(),
        D::Int16 => a.as_primitive::<Int16Type>().value(i).into(),
        D::Int32 => a.as_primitive::<Int32Type>().value(i).into(),
        D::Int64 => a.as_primitive::<Int64Type>().value(i),
        D::UInt8 => a.as_primitive::<UInt8Type>().value(i).into(),
        D::UInt16 => a.as_primitive::<UInt16Type>().value(i).into(),
        D::UInt32 => a.as_primitive::<UInt32Type>().value(i).into(),
        D::UInt64 => i64::try_from(a.as_primitive::<UInt64Type>().value(i)).ok()?,
        _ => return None,
    })
}

/// The key at row `i` of a dictionary's keys, as an index.
fn dict_key(keys: &dyn Array, i: usize) -> Option<usize> {
    usize::try_from(int_value(keys, i)?).ok()
}

/// The whole number at row `i` of `a` (an integer column read directly,
/// or text that holds one); `None` for a null or anything else.
pub(crate) fn integer_at(a: &dyn Array, i: usize) -> Option<i64> {
    if a.is_null(i) {
        return None;
    }
    if let Some(v) = int_value(a, i) {
        return Some(v);
    }
    let mut text = Vec::with_capacity(12);
    if !push_cell(a, i, Kind::Integer, &mut text) {
        return None;
    }
    std::str::from_utf8(&text).ok()?.trim().parse().ok()
}

/// The text at row `i` of `a`; `None` for a null.
pub(crate) fn text_at(a: &dyn Array, i: usize) -> Option<String> {
    let mut text = Vec::new();
    push_cell(a, i, Kind::Text, &mut text).then(|| String::from_utf8_lossy(&text).into_owned())
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
