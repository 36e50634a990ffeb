//! Columns read with the parquet crate's own column readers: a column of
//! a row group decoded into its values and its definition levels (which
//! rows are null), then read a row at a time as the text of a PGN tag, a
//! whole number or a date.
//!
//! What a column holds is settled from the file's schema alone: its
//! physical type and the logical type (or, in older files, the converted
//! type) written with it. Strings of any origin (pandas' `object`,
//! pyarrow's `string` and `large_string`, dictionary-encoded or not) are
//! all `BYTE_ARRAY` in the file, so one reader takes them all; integers of
//! any width and sign, floats, dates, times and timestamps (INT96's
//! included) are read as what they mean. Only top-level columns of one
//! value a row are read: a list or a struct column is refused by name.

use parquet::{
    basic::{ConvertedType, LogicalType, TimeUnit, Type as Physical},
    column::reader::ColumnReader,
    data_type::{ByteArray, Int96},
    errors::ParquetError,
    file::{metadata::ParquetMetaData, reader::FileReader},
    schema::types::ColumnDescriptor,
};

use super::{push_date, push_int, push_time};
use crate::io::table::{Kind, whole_number};

/// A unit of time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Milliseconds.
    Millis,
    /// Microseconds.
    Micros,
    /// Nanoseconds.
    Nanos,
    /// Seconds (INT96 timestamps, read as seconds).
    Seconds,
}

impl Unit {
    fn of(unit: &TimeUnit) -> Unit {
        match unit {
            TimeUnit::MILLIS => Unit::Millis,
            TimeUnit::MICROS => Unit::Micros,
            TimeUnit::NANOS => Unit::Nanos,
        }
    }

    fn per_second(self) -> i64 {
        match self {
            Unit::Seconds => 1,
            Unit::Millis => 1000,
            Unit::Micros => 1_000_000,
            Unit::Nanos => 1_000_000_000,
        }
    }
}

/// What a column's values are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// Text (`BYTE_ARRAY`: strings, enums, JSON, or bytes without a type).
    Text,
    /// Signed whole numbers (INT32 or INT64).
    Signed,
    /// Unsigned whole numbers (INT32 or INT64 holding their bits).
    Unsigned,
    /// Floating-point numbers.
    Float,
    /// Days since 1970-01-01.
    Date,
    /// A time of day in a unit.
    Time(Unit),
    /// A moment since 1970 in a unit.
    Timestamp(Unit),
    /// A column of nulls only (pandas' and pyarrow's null type).
    Null,
}

impl Form {
    /// What a column of this descriptor holds; `None` for a column kibitz
    /// cannot read (booleans, decimals, fixed-width bytes, a nested one).
    pub fn of(d: &ColumnDescriptor) -> Option<Form> {
        if d.max_rep_level() > 0 || d.max_def_level() > 1 {
            return None;
        }
        let logical = d.logical_type_ref();
        if matches!(logical, Some(LogicalType::Unknown)) {
            return Some(Form::Null);
        }
        let converted = d.converted_type();
        use ConvertedType as C;
        use LogicalType as L;
        Some(match d.physical_type() {
            Physical::BYTE_ARRAY => match (logical, converted) {
                (Some(L::String | L::Enum | L::Json), _) => Form::Text,
                (None, C::NONE | C::UTF8 | C::ENUM | C::JSON) => Form::Text,
                _ => return None,
            },
            Physical::INT32 | Physical::INT64 => match (logical, converted) {
                (Some(L::Integer(t)), _) if t.is_signed => Form::Signed,
                (Some(L::Integer(_)), _) => Form::Unsigned,
                (Some(L::Date), _) | (None, C::DATE) => Form::Date,
                (Some(L::Time(t)), _) => Form::Time(Unit::of(&t.unit)),
                (Some(L::Timestamp(t)), _) => Form::Timestamp(Unit::of(&t.unit)),
                (None, C::TIME_MILLIS) => Form::Time(Unit::Millis),
                (None, C::TIME_MICROS) => Form::Time(Unit::Micros),
                (None, C::TIMESTAMP_MILLIS) => Form::Timestamp(Unit::Millis),
                (None, C::TIMESTAMP_MICROS) => Form::Timestamp(Unit::Micros),
                (None, C::UINT_8 | C::UINT_16 | C::UINT_32 | C::UINT_64) => Form::Unsigned,
                (None, C::NONE | C::INT_8 | C::INT_16 | C::INT_32 | C::INT_64) => Form::Signed,
                _ => return None,
            },
            Physical::INT96 => Form::Timestamp(Unit::Seconds),
            Physical::FLOAT | Physical::DOUBLE => match logical {
                None => Form::Float,
                Some(_) => return None,
            },
            Physical::BOOLEAN | Physical::FIXED_LEN_BYTE_ARRAY => return None,
        })
    }

    /// Whether values of this form can be read as `kind`.
    pub fn reads_as(self, kind: Kind) -> bool {
        match self {
            Form::Text | Form::Null => true,
            Form::Signed | Form::Unsigned | Form::Float => kind != Kind::Date,
            Form::Date | Form::Timestamp(_) => kind != Kind::Integer,
            Form::Time(_) => kind == Kind::Text,
        }
    }
}

/// A top-level column of a file.
#[derive(Clone, Debug)]
pub struct RootColumn {
    /// Its name.
    pub name: String,
    /// Its leaf column (its index among the file's leaves) and what it
    /// holds; `None` for a column kibitz cannot read.
    pub leaf: Option<(usize, Form)>,
    /// Its type as the schema gives it, for messages.
    pub type_name: String,
}

impl RootColumn {
    /// The column, the `index`-th of its file, to be read as `kind`:
    /// (top-level index, leaf index, what it holds); or why it cannot be.
    pub fn read_as(&self, index: usize, kind: Kind) -> Result<(usize, usize, Form), String> {
        match self.leaf {
            Some((leaf, form)) if form.reads_as(kind) => Ok((index, leaf, form)),
            _ => Err(format!(
                "column `{}` is of type {}, which kibitz cannot read",
                self.name, self.type_name
            )),
        }
    }
}

/// The top-level columns of a file, in order.
pub fn root_columns(meta: &ParquetMetaData) -> Vec<RootColumn> {
    let schema = meta.file_metadata().schema_descr();
    let mut roots: Vec<RootColumn> = schema
        .root_schema()
        .get_fields()
        .iter()
        .map(|f| RootColumn {
            name: f.name().to_string(),
            leaf: None,
            type_name: if f.is_primitive() {
                String::new()
            } else {
                "a group (list, map or struct)".into()
            },
        })
        .collect();
    for leaf in 0..schema.num_columns() {
        let root = schema.get_column_root_idx(leaf);
        let Some(r) = roots.get_mut(root) else { continue };
        if !schema.get_column_root(leaf).is_primitive() {
            continue;
        }
        let d = schema.column(leaf);
        r.type_name = type_name(&d);
        r.leaf = Form::of(&d).map(|form| (leaf, form));
    }
    roots
}

/// A column's type as its schema names it: the physical type, and the
/// logical (or converted) type written with it.
fn type_name(d: &ColumnDescriptor) -> String {
    match (d.logical_type_ref(), d.converted_type()) {
        (Some(l), _) => format!("{} ({l:?})", d.physical_type()),
        (None, ConvertedType::NONE) => d.physical_type().to_string(),
        (None, c) => format!("{} ({c})", d.physical_type()),
    }
}

/// The values of a column read.
enum Values {
    Bytes(Vec<ByteArray>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    I96(Vec<Int96>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

/// Rows of a column, as read: the values of its non-null rows and, for
/// each row, its value's index.
pub struct Column {
    form: Form,
    max_def: i16,
    values: Values,
    levels: Vec<i16>,
    /// For each row, the index of its value in `values`; [`NULL`] for a
    /// null.
    at: Vec<u32>,
}

/// A null row's index.
const NULL: u32 = u32::MAX;

impl Column {
    fn new(form: Form, max_def: i16, reader: &ColumnReader) -> Column {
        let values = match reader {
            ColumnReader::ByteArrayColumnReader(_) => Values::Bytes(Vec::new()),
            ColumnReader::Int32ColumnReader(_) => Values::I32(Vec::new()),
            ColumnReader::Int64ColumnReader(_) => Values::I64(Vec::new()),
            ColumnReader::Int96ColumnReader(_) => Values::I96(Vec::new()),
            ColumnReader::FloatColumnReader(_) => Values::F32(Vec::new()),
            // Booleans and fixed-width bytes have no form: never read.
            _ => Values::F64(Vec::new()),
        };
        Column { form, max_def, values, levels: Vec::new(), at: Vec::new() }
    }

    /// Reads the next `rows` rows from `reader`; returns how many there
    /// were (fewer at the column's end).
    fn read(&mut self, reader: &mut ColumnReader, rows: usize) -> Result<usize, ParquetError> {
        self.levels.clear();
        let levels = (self.max_def > 0).then_some(&mut self.levels);
        // Each physical type's reader into its values, emptied first.
        macro_rules! read_into {
            ($r:expr, $v:expr) => {{
                $v.clear();
                $r.read_records(rows, levels, None, $v)?
            }};
        }
        let (records, values, _) = match (reader, &mut self.values) {
            (ColumnReader::ByteArrayColumnReader(r), Values::Bytes(v)) => read_into!(r, v),
            (ColumnReader::Int32ColumnReader(r), Values::I32(v)) => read_into!(r, v),
            (ColumnReader::Int64ColumnReader(r), Values::I64(v)) => read_into!(r, v),
            (ColumnReader::Int96ColumnReader(r), Values::I96(v)) => read_into!(r, v),
            (ColumnReader::FloatColumnReader(r), Values::F32(v)) => read_into!(r, v),
            (ColumnReader::DoubleColumnReader(r), Values::F64(v)) => read_into!(r, v),
            _ => return Err(ParquetError::General("a column of a type kibitz cannot read".into())),
        };
        self.at.clear();
        let mut present = records;
        if self.max_def > 0 {
            let mut next = 0u32;
            for &level in &self.levels[..records] {
                if level == self.max_def {
                    self.at.push(next);
                    next += 1;
                } else {
                    self.at.push(NULL);
                }
            }
            present = next as usize;
        } else {
            self.at.extend(0..records as u32);
        }
        if present != values {
            return Err(ParquetError::General("a column's levels and values disagree".into()));
        }
        Ok(records)
    }

    /// The index of row `i`'s value; `None` for a null.
    fn value(&self, i: usize) -> Option<usize> {
        match self.at.get(i) {
            Some(&NULL) | None => None,
            Some(&at) => Some(at as usize),
        }
    }

    /// The whole number held at row `i` by an integer column, as its
    /// form reads it; `None` for a null, another type, or a `u64` past
    /// `i64`.
    fn raw_int(&self, i: usize) -> Option<i64> {
        let at = self.value(i)?;
        let unsigned = self.form == Form::Unsigned;
        match &self.values {
            Values::I32(v) if unsigned => Some(i64::from(v[at] as u32)),
            Values::I32(v) => Some(i64::from(v[at])),
            Values::I64(v) if unsigned => i64::try_from(v[at] as u64).ok(),
            Values::I64(v) => Some(v[at]),
            Values::I96(v) => Some(v[at].to_seconds()),
            _ => None,
        }
    }

    /// Appends the value at row `i` as `kind` writes it (PGN's date and
    /// time forms for days and times); returns `false`, appending nothing,
    /// for a null.
    pub fn push_cell(&self, i: usize, kind: Kind, out: &mut Vec<u8>) -> bool {
        let Some(at) = self.value(i) else { return false };
        match self.form {
            Form::Null => return false,
            Form::Text => match &self.values {
                Values::Bytes(v) => out.extend_from_slice(v[at].data()),
                _ => return false,
            },
            Form::Signed => push_int(out, self.raw_int(i).unwrap_or(0)),
            Form::Unsigned => match (&self.values, self.raw_int(i)) {
                (_, Some(n)) => push_int(out, n),
                // Past i64: written as it is.
                (Values::I64(v), None) => {
                    out.extend_from_slice((v[at] as u64).to_string().as_bytes())
                }
                _ => return false,
            },
            Form::Float => {
                let v = match &self.values {
                    Values::F32(v) => f64::from(v[at]),
                    Values::F64(v) => v[at],
                    _ => return false,
                };
                if !v.is_finite() {
                    return false;
                }
                match whole_number(v) {
                    Some(n) => push_int(out, n),
                    None => out.extend_from_slice(v.to_string().as_bytes()),
                }
            }
            Form::Date => push_date(out, self.raw_int(i).unwrap_or(0)),
            Form::Time(unit) => push_time(out, self.raw_int(i).unwrap_or(0) / unit.per_second()),
            Form::Timestamp(unit) => {
                let s = self.raw_int(i).unwrap_or(0).div_euclid(unit.per_second());
                push_date(out, s.div_euclid(86_400));
                if kind != Kind::Date {
                    out.push(b' ');
                    push_time(out, s);
                }
            }
        }
        true
    }

    /// The bytes of the text at row `i`, as the page holds them (no
    /// copy); `None` for a null or a column of another type.
    pub fn text_slice(&self, i: usize) -> Option<&[u8]> {
        match (&self.values, self.form) {
            (Values::Bytes(v), Form::Text) => Some(v[self.value(i)?].data()),
            _ => None,
        }
    }

    /// The whole number at row `i` (an integer column read directly, or
    /// text or a float that holds one); `None` for a null or anything
    /// else.
    pub fn integer(&self, i: usize) -> Option<i64> {
        if matches!(self.form, Form::Signed | Form::Unsigned) {
            return self.raw_int(i);
        }
        let mut text = Vec::with_capacity(12);
        if !self.push_cell(i, Kind::Integer, &mut text) {
            return None;
        }
        std::str::from_utf8(&text).ok()?.trim().parse().ok()
    }

    /// The text at row `i`; `None` for a null.
    pub fn text(&self, i: usize) -> Option<String> {
        let mut text = Vec::new();
        self.push_cell(i, Kind::Text, &mut text)
            .then(|| String::from_utf8_lossy(&text).into_owned())
    }
}

/// Some columns of one row group read together, a batch of rows at a
/// time.
pub struct UnitReader {
    readers: Vec<ColumnReader>,
    /// The columns read, at their top-level index in the file.
    columns: Vec<Option<Column>>,
    /// Where each reader's column is in `columns`.
    slots: Vec<usize>,
}

impl UnitReader {
    /// Readers of the columns `read` (top-level index, leaf index, form)
    /// of row group `group`, past its first `skip` rows. `roots` is the
    /// file's number of top-level columns.
    pub fn new<F: FileReader + ?Sized>(
        file: &F,
        group: usize,
        read: &[(usize, usize, Form)],
        roots: usize,
        skip: usize,
    ) -> Result<UnitReader, ParquetError> {
        let row_group = file.get_row_group(group)?;
        let schema = file.metadata().file_metadata().schema_descr();
        let mut columns: Vec<Option<Column>> = (0..roots).map(|_| None).collect();
        let mut readers = Vec::with_capacity(read.len());
        let mut slots = Vec::with_capacity(read.len());
        for &(root, leaf, form) in read {
            let mut reader = row_group.get_column_reader(leaf)?;
            let max_def = schema.column(leaf).max_def_level();
            let column = Column::new(form, max_def, &reader);
            if skip > 0 {
                let skipped = match &mut reader {
                    ColumnReader::BoolColumnReader(r) => r.skip_records(skip)?,
                    ColumnReader::Int32ColumnReader(r) => r.skip_records(skip)?,
                    ColumnReader::Int64ColumnReader(r) => r.skip_records(skip)?,
                    ColumnReader::Int96ColumnReader(r) => r.skip_records(skip)?,
                    ColumnReader::FloatColumnReader(r) => r.skip_records(skip)?,
                    ColumnReader::DoubleColumnReader(r) => r.skip_records(skip)?,
                    ColumnReader::ByteArrayColumnReader(r) => r.skip_records(skip)?,
                    ColumnReader::FixedLenByteArrayColumnReader(r) => r.skip_records(skip)?,
                };
                if skipped != skip {
                    return Err(ParquetError::General("a column chunk is short of rows".into()));
                }
            }
            columns[root] = Some(column);
            readers.push(reader);
            slots.push(root);
        }
        Ok(UnitReader { readers, columns, slots })
    }

    /// Reads the next `rows` rows of every column; returns how many there
    /// were. Columns that disagree on their rows are an error.
    pub fn next_batch(&mut self, rows: usize) -> Result<usize, ParquetError> {
        let mut count = None;
        for (reader, &slot) in self.readers.iter_mut().zip(&self.slots) {
            let Some(column) = self.columns[slot].as_mut() else { continue };
            let n = column.read(reader, rows)?;
            if count.is_some_and(|c| c != n) {
                return Err(ParquetError::General(
                    "the columns of a row group differ in rows".into(),
                ));
            }
            count = Some(n);
        }
        Ok(count.unwrap_or(0))
    }

    /// The columns of the batch read, at their top-level index (`None`
    /// for those not read).
    pub fn columns(&self) -> &[Option<Column>] {
        &self.columns
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use bytes::Bytes;
    use parquet::{
        data_type::{ByteArrayType, Int32Type, Int64Type, Int96Type},
        file::{properties::WriterProperties, writer::SerializedFileWriter},
        schema::parser::parse_message_type,
    };

    use super::*;

    /// A file of the shapes other writers give: a required unsigned byte
    /// (no definition levels), an optional string with nulls, an unsigned
    /// 64-bit value past `i64`, an INT96 timestamp, a date, and a list
    /// (refused), over two row groups.
    fn sample() -> Bytes {
        let schema = parse_message_type(
            "message m {
                required int32 rating (INTEGER(8, false));
                optional binary name (STRING);
                optional int64 big (INTEGER(64, false));
                required int96 at;
                optional int32 day (DATE);
                optional group tags (LIST) { repeated group list { optional binary element (STRING); } }
            }",
        )
        .unwrap();
        let mut out = Vec::new();
        let props = Arc::new(WriterProperties::builder().build());
        let mut w = SerializedFileWriter::new(&mut out, Arc::new(schema), props).unwrap();
        for group in 0..2 {
            let mut g = w.next_row_group().unwrap();
            let mut c = g.next_column().unwrap().unwrap();
            c.typed::<Int32Type>().write_batch(&[200, 7, group], None, None).unwrap();
            c.close().unwrap();
            let mut c = g.next_column().unwrap().unwrap();
            let names = [ByteArray::from("Carlsen"), ByteArray::from("Nakamura")];
            c.typed::<ByteArrayType>().write_batch(&names, Some(&[1, 0, 1]), None).unwrap();
            c.close().unwrap();
            let mut c = g.next_column().unwrap().unwrap();
            c.typed::<Int64Type>().write_batch(&[-1, 5], Some(&[1, 1, 0]), None).unwrap();
            c.close().unwrap();
            let mut c = g.next_column().unwrap().unwrap();
            // 2016-05-01 12:00:00: Julian day 2457510, noon in nanoseconds.
            let mut t = Int96::new();
            let nanos: u64 = 12 * 3600 * 1_000_000_000;
            t.set_data(nanos as u32, (nanos >> 32) as u32, 2_457_510);
            c.typed::<Int96Type>().write_batch(&[t, t, t], None, None).unwrap();
            c.close().unwrap();
            let mut c = g.next_column().unwrap().unwrap();
            c.typed::<Int32Type>().write_batch(&[16_922], Some(&[0, 1, 0]), None).unwrap();
            c.close().unwrap();
            let mut c = g.next_column().unwrap().unwrap();
            let tags = [ByteArray::from("x")];
            c.typed::<ByteArrayType>()
                .write_batch(&tags, Some(&[3, 0, 1]), Some(&[0, 0, 0]))
                .unwrap();
            c.close().unwrap();
            g.close().unwrap();
        }
        w.close().unwrap();
        Bytes::from(out)
    }

    fn text(c: &Column, i: usize, kind: Kind) -> Option<String> {
        let mut out = Vec::new();
        c.push_cell(i, kind, &mut out).then(|| String::from_utf8(out).unwrap())
    }

    #[test]
    fn columns_read_as_their_schema_says() {
        let file = crate::io::parquet::open(sample()).unwrap();
        let roots = root_columns(file.metadata());
        let names: Vec<&str> = roots.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["rating", "name", "big", "at", "day", "tags"]);
        let forms: Vec<Option<Form>> = roots.iter().map(|r| r.leaf.map(|l| l.1)).collect();
        assert_eq!(
            forms,
            [
                Some(Form::Unsigned),
                Some(Form::Text),
                Some(Form::Unsigned),
                Some(Form::Timestamp(Unit::Seconds)),
                Some(Form::Date),
                None
            ]
        );
        assert!(roots[5].type_name.contains("group"), "{}", roots[5].type_name);
        let read: Vec<(usize, usize, Form)> =
            (0..5).map(|i| (i, roots[i].leaf.unwrap().0, roots[i].leaf.unwrap().1)).collect();
        // The second row group, past its first row.
        let mut unit = UnitReader::new(&file, 1, &read, roots.len(), 1).unwrap();
        assert_eq!(unit.next_batch(10).unwrap(), 2);
        let c = unit.columns();
        let col = |i: usize| c[i].as_ref().unwrap();
        assert_eq!(text(col(0), 0, Kind::Integer).as_deref(), Some("7"));
        assert_eq!(text(col(0), 1, Kind::Integer).as_deref(), Some("1"));
        assert_eq!(col(1).text(0), None);
        assert_eq!(col(1).text_slice(1), Some(&b"Nakamura"[..]));
        assert_eq!(col(2).integer(0), Some(5));
        assert_eq!(col(2).integer(1), None);
        assert_eq!(text(col(3), 0, Kind::Text).as_deref(), Some("2016.05.01 12:00:00"));
        assert_eq!(text(col(3), 0, Kind::Date).as_deref(), Some("2016.05.01"));
        assert_eq!(text(col(4), 0, Kind::Date).as_deref(), Some("2016.05.01"));
        assert_eq!(col(4).text(1), None);
        assert_eq!(unit.next_batch(10).unwrap(), 0);
        // The first row group from its start: u64 past i64 written whole.
        let mut unit = UnitReader::new(&file, 0, &read, roots.len(), 0).unwrap();
        assert_eq!(unit.next_batch(2).unwrap(), 2);
        let c = unit.columns();
        assert_eq!(text(c[0].as_ref().unwrap(), 0, Kind::Integer).as_deref(), Some("200"));
        assert_eq!(text(c[1].as_ref().unwrap(), 0, Kind::Text).as_deref(), Some("Carlsen"));
        assert_eq!(c[2].as_ref().unwrap().integer(0), None);
        let big = text(c[2].as_ref().unwrap(), 0, Kind::Text);
        assert_eq!(big.as_deref(), Some("18446744073709551615"));
    }
}
