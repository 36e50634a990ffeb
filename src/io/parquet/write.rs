//! Tables written as Parquet, streamed: rows are gathered column by column
//! until a row group is full ([`ROW_GROUP_ROWS`] rows, or
//! [`ROW_GROUP_BYTES`] of text), then each column is handed to the parquet
//! crate's column writer, compressed with zstd. Memory holds one row group
//! being written, whatever the table's size.
//!
//! A Parquet file is readable only once its footer is written, at its end:
//! the command line writes a file under a temporary name and gives it its
//! own name when it is complete, so a run that stops leaves no file that
//! looks whole (and an older file of that name untouched).

use std::{io::Write, sync::Arc};

use bytes::Bytes;
use parquet::{
    basic::{Compression, LogicalType, Repetition, Type as Physical, ZstdLevel},
    data_type::{ByteArray, ByteArrayType, DoubleType, Int32Type, Int64Type},
    file::{
        properties::{EnabledStatistics, WriterProperties},
        writer::SerializedFileWriter,
    },
    schema::types::Type,
};

/// Rows per row group: large enough for good compression and few footer
/// entries, small enough that a row group in memory stays a few MB.
pub const ROW_GROUP_ROWS: usize = 65_536;

/// The most bytes of text a row group gathers before it is written,
/// whatever its rows: long texts (principal variations, whole games) end
/// a row group early rather than grow memory.
pub const ROW_GROUP_BYTES: usize = 64 << 20;

/// The most bytes a column's open page (and its dictionary) holds before
/// it is compressed and set aside.
pub const PAGE_BYTES: usize = 256 << 10;

/// The zstd level of every column (zstd's own default).
pub const ZSTD_LEVEL: i32 = 3;

/// A column's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnType {
    /// UTF-8 text.
    Text,
    /// `u8`.
    U8,
    /// `u16`.
    U16,
    /// `u32`.
    U32,
    /// `u64`.
    U64,
    /// `i16`.
    I16,
    /// `i32`.
    I32,
    /// `f64`.
    F64,
    /// A list of texts.
    TextList,
}

impl ColumnType {
    /// The column's schema: every column may hold nulls; integers are
    /// INT32 or INT64 annotated with their width and sign, texts
    /// `BYTE_ARRAY` annotated as strings, a list Parquet's three-level
    /// `LIST` of strings.
    fn schema(self, name: &str) -> parquet::errors::Result<Type> {
        let primitive = |physical: Physical, logical: Option<LogicalType>| {
            Type::primitive_type_builder(name, physical)
                .with_repetition(Repetition::OPTIONAL)
                .with_logical_type(logical)
                .build()
        };
        let int = |bits: i8, signed: bool| {
            let physical = if bits == 64 { Physical::INT64 } else { Physical::INT32 };
            primitive(physical, Some(LogicalType::integer(bits, signed)))
        };
        match self {
            ColumnType::Text => primitive(Physical::BYTE_ARRAY, Some(LogicalType::String)),
            ColumnType::U8 => int(8, false),
            ColumnType::U16 => int(16, false),
            ColumnType::U32 => int(32, false),
            ColumnType::U64 => int(64, false),
            ColumnType::I16 => int(16, true),
            ColumnType::I32 => int(32, true),
            ColumnType::F64 => primitive(Physical::DOUBLE, None),
            ColumnType::TextList => {
                let element = Type::primitive_type_builder("element", Physical::BYTE_ARRAY)
                    .with_repetition(Repetition::OPTIONAL)
                    .with_logical_type(Some(LogicalType::String))
                    .build()?;
                let list = Type::group_type_builder("list")
                    .with_repetition(Repetition::REPEATED)
                    .with_fields(vec![Arc::new(element)])
                    .build()?;
                Type::group_type_builder(name)
                    .with_repetition(Repetition::OPTIONAL)
                    .with_logical_type(Some(LogicalType::List))
                    .with_fields(vec![Arc::new(list)])
                    .build()
            }
        }
    }
}

/// A list's definition levels: a null list, an empty one, an element.
const LIST_NULL: i16 = 0;
const LIST_EMPTY: i16 = 1;
const LIST_ITEM: i16 = 3;

/// A column's values of the row group being gathered.
enum Values {
    /// Texts, one after another, and where each ends.
    Text {
        bytes: Vec<u8>,
        ends: Vec<usize>,
    },
    I32(Vec<i32>),
    I64(Vec<i64>),
    F64(Vec<f64>),
}

/// A column being gathered: its values (nulls left out), and each value's
/// definition level (and repetition level, for a list).
struct Gathered {
    t: ColumnType,
    values: Values,
    defs: Vec<i16>,
    reps: Vec<i16>,
}

impl Gathered {
    fn new(t: ColumnType) -> Gathered {
        let values = match t {
            ColumnType::Text | ColumnType::TextList => {
                Values::Text { bytes: Vec::new(), ends: Vec::new() }
            }
            ColumnType::U64 => Values::I64(Vec::new()),
            ColumnType::F64 => Values::F64(Vec::new()),
            _ => Values::I32(Vec::new()),
        };
        Gathered { t, values, defs: Vec::new(), reps: Vec::new() }
    }

    /// Appends a text; returns its bytes.
    fn push_text(&mut self, v: &str) -> usize {
        if let Values::Text { bytes, ends } = &mut self.values {
            bytes.extend_from_slice(v.as_bytes());
            ends.push(bytes.len());
        }
        v.len()
    }

    /// Writes the column's values to the row group's next column and
    /// empties it.
    fn write<W: Write + Send>(
        &mut self,
        group: &mut parquet::file::writer::SerializedRowGroupWriter<'_, W>,
    ) -> parquet::errors::Result<()> {
        let mut column = group.next_column()?.ok_or_else(|| {
            parquet::errors::ParquetError::General("the schema has fewer columns".into())
        })?;
        let defs = Some(&self.defs[..]);
        let reps = (self.t == ColumnType::TextList).then_some(&self.reps[..]);
        match &mut self.values {
            Values::Text { bytes, ends } => {
                let all = Bytes::from(std::mem::take(bytes));
                let mut start = 0;
                let values: Vec<ByteArray> = ends
                    .iter()
                    .map(|&end| {
                        let v = ByteArray::from(all.slice(start..end));
                        start = end;
                        v
                    })
                    .collect();
                column.typed::<ByteArrayType>().write_batch(&values, defs, reps)?;
                ends.clear();
            }
            Values::I32(v) => {
                column.typed::<Int32Type>().write_batch(v, defs, reps)?;
                v.clear();
            }
            Values::I64(v) => {
                column.typed::<Int64Type>().write_batch(v, defs, reps)?;
                v.clear();
            }
            Values::F64(v) => {
                column.typed::<DoubleType>().write_batch(v, defs, reps)?;
                v.clear();
            }
        }
        column.close()?;
        self.defs.clear();
        self.reps.clear();
        Ok(())
    }
}

/// A Parquet table being written row by row: each row sets every column
/// in order (`text`, `u64`, ...; `None` is a null), then [`Table::end_row`].
pub struct Table<W: Write + Send> {
    columns: Vec<Gathered>,
    /// The column the next value goes to.
    next: usize,
    rows: usize,
    /// Bytes of text the row group in hand has gathered.
    text: usize,
    writer: SerializedFileWriter<W>,
}

/// `v` in a column's type: the callers write values of their columns'
/// ranges (a ply, a depth, a rating), so one that does not fit is a defect.
fn fit<T: TryFrom<i64>>(v: i64, column: usize) -> T {
    T::try_from(v).unwrap_or_else(|_| panic!("column {column}: {v} is out of its type's range"))
}

fn io_error(e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

impl<W: Write + Send> Table<W> {
    /// A table of these columns (name, type; every column may hold nulls)
    /// written to `out`.
    pub fn new(out: W, columns: &[(&str, ColumnType)]) -> std::io::Result<Table<W>> {
        let fields = columns
            .iter()
            .map(|&(name, t)| t.schema(name).map(Arc::new))
            .collect::<parquet::errors::Result<Vec<_>>>()
            .map_err(io_error)?;
        let schema =
            Type::group_type_builder("schema").with_fields(fields).build().map_err(io_error)?;
        let level = ZstdLevel::try_new(ZSTD_LEVEL).map_err(io_error)?;
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(level))
            .set_data_page_size_limit(PAGE_BYTES)
            .set_dictionary_page_size_limit(PAGE_BYTES)
            // Statistics per column chunk (what readers prune row groups
            // by), not per page: the page indexes are held until the
            // footer, memory that would grow with the table.
            .set_statistics_enabled(EnabledStatistics::Chunk)
            .set_offset_index_disabled(true)
            .set_created_by(format!("kibitz {}", env!("CARGO_PKG_VERSION")))
            .build();
        let writer =
            SerializedFileWriter::new(out, Arc::new(schema), Arc::new(props)).map_err(io_error)?;
        let columns = columns.iter().map(|&(_, t)| Gathered::new(t)).collect();
        Ok(Table { columns, next: 0, rows: 0, text: 0, writer })
    }

    fn column(&mut self) -> &mut Gathered {
        let i = self.next;
        self.next += 1;
        &mut self.columns[i]
    }

    /// The next column's text.
    pub fn text(&mut self, v: Option<&str>) {
        let at = self.next;
        let c = self.column();
        assert_eq!(c.t, ColumnType::Text, "column {at} is not text");
        c.defs.push(i16::from(v.is_some()));
        self.text += v.map_or(0, |v| c.push_text(v));
    }

    /// The next column's list of texts.
    pub fn text_list<'a>(&mut self, v: Option<impl IntoIterator<Item = &'a str>>) {
        let at = self.next;
        let c = self.column();
        assert_eq!(c.t, ColumnType::TextList, "column {at} is not a list");
        let Some(items) = v else {
            c.defs.push(LIST_NULL);
            c.reps.push(0);
            return;
        };
        let (mut rep, mut added) = (0, 0);
        for item in items {
            added += c.push_text(item);
            c.defs.push(LIST_ITEM);
            c.reps.push(rep);
            rep = 1;
        }
        if rep == 0 {
            c.defs.push(LIST_EMPTY);
            c.reps.push(0);
        }
        self.text += added;
    }

    /// The next column's number (of the column's type; `v` must fit it).
    pub fn int(&mut self, v: Option<i64>) {
        let at = self.next;
        let c = self.column();
        let whole = matches!(c.values, Values::I32(_) | Values::I64(_));
        assert!(whole, "column {at} is not a whole number");
        let Some(v) = v else {
            c.defs.push(0);
            return;
        };
        // Unsigned values are stored as their bits in INT32 and INT64.
        match (c.t, &mut c.values) {
            (ColumnType::U8, Values::I32(out)) => out.push(i32::from(fit::<u8>(v, at))),
            (ColumnType::U16, Values::I32(out)) => out.push(i32::from(fit::<u16>(v, at))),
            (ColumnType::U32, Values::I32(out)) => out.push(fit::<u32>(v, at) as i32),
            (ColumnType::U64, Values::I64(out)) => out.push(fit::<u64>(v, at) as i64),
            (ColumnType::I16, Values::I32(out)) => out.push(i32::from(fit::<i16>(v, at))),
            (ColumnType::I32, Values::I32(out)) => out.push(fit::<i32>(v, at)),
            _ => panic!("column {at} is not a whole number"),
        }
        c.defs.push(1);
    }

    /// The next column's real number.
    pub fn float(&mut self, v: Option<f64>) {
        let at = self.next;
        let c = self.column();
        match (&mut c.values, v) {
            (Values::F64(out), Some(v)) => {
                out.push(v);
                c.defs.push(1);
            }
            (Values::F64(_), None) => c.defs.push(0),
            _ => panic!("column {at} is not a real number"),
        }
    }

    /// Ends a row (every column set); a full row group goes to the
    /// writer.
    pub fn end_row(&mut self) -> std::io::Result<()> {
        assert_eq!(self.next, self.columns.len(), "a row sets every column");
        self.next = 0;
        self.rows += 1;
        if self.rows >= ROW_GROUP_ROWS || self.text >= ROW_GROUP_BYTES {
            self.flush_group()?;
        }
        Ok(())
    }

    fn flush_group(&mut self) -> std::io::Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let mut group = self.writer.next_row_group().map_err(io_error)?;
        for column in &mut self.columns {
            column.write(&mut group).map_err(io_error)?;
        }
        group.close().map_err(io_error)?;
        self.rows = 0;
        self.text = 0;
        Ok(())
    }

    /// Writes the last rows and the footer; returns the output.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.flush_group()?;
        self.writer.into_inner().map_err(io_error)
    }
}
