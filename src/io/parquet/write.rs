//! Tables written as Parquet, streamed: rows are gathered into record
//! batches of [`BATCH_ROWS`] and handed to arrow-rs's writer, which closes
//! a row group every [`ROW_GROUP_ROWS`] rows, every column compressed with
//! zstd. Memory holds one row group being written, whatever the table's
//! size.
//!
//! A Parquet file is readable only once its footer is written, at its end:
//! the command line writes a file under a temporary name and gives it its
//! own name when it is complete, so a run that stops leaves no file that
//! looks whole (and an older file of that name untouched).

use std::{io::Write, sync::Arc};

use arrow_array::{
    ArrayRef, RecordBatch,
    builder::{
        Float64Builder, Int16Builder, Int32Builder, ListBuilder, StringBuilder, UInt8Builder,
        UInt16Builder, UInt32Builder, UInt64Builder,
    },
};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::{
    arrow::ArrowWriter,
    basic::{Compression, ZstdLevel},
    file::properties::{EnabledStatistics, WriterProperties},
};

/// Rows gathered before they go to the writer.
pub const BATCH_ROWS: usize = 8192;

/// Rows per row group: large enough for good compression and few footer
/// entries, small enough that a row group in memory stays a few MB.
pub const ROW_GROUP_ROWS: usize = 65_536;

/// The most bytes a column's open page (and its dictionary) holds before
/// it is compressed and set aside: every column has one open, so this
/// bounds the writer's memory more than the row group does.
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
    fn data_type(self) -> DataType {
        match self {
            ColumnType::Text => DataType::Utf8,
            ColumnType::U8 => DataType::UInt8,
            ColumnType::U16 => DataType::UInt16,
            ColumnType::U32 => DataType::UInt32,
            ColumnType::U64 => DataType::UInt64,
            ColumnType::I16 => DataType::Int16,
            ColumnType::I32 => DataType::Int32,
            ColumnType::F64 => DataType::Float64,
            ColumnType::TextList => {
                DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)))
            }
        }
    }
}

enum Builder {
    Text(StringBuilder),
    U8(UInt8Builder),
    U16(UInt16Builder),
    U32(UInt32Builder),
    U64(UInt64Builder),
    I16(Int16Builder),
    I32(Int32Builder),
    F64(Float64Builder),
    TextList(ListBuilder<StringBuilder>),
}

impl Builder {
    fn new(t: ColumnType) -> Builder {
        let n = BATCH_ROWS;
        match t {
            ColumnType::Text => Builder::Text(StringBuilder::with_capacity(n, n * 16)),
            ColumnType::U8 => Builder::U8(UInt8Builder::with_capacity(n)),
            ColumnType::U16 => Builder::U16(UInt16Builder::with_capacity(n)),
            ColumnType::U32 => Builder::U32(UInt32Builder::with_capacity(n)),
            ColumnType::U64 => Builder::U64(UInt64Builder::with_capacity(n)),
            ColumnType::I16 => Builder::I16(Int16Builder::with_capacity(n)),
            ColumnType::I32 => Builder::I32(Int32Builder::with_capacity(n)),
            ColumnType::F64 => Builder::F64(Float64Builder::with_capacity(n)),
            ColumnType::TextList => Builder::TextList(ListBuilder::new(StringBuilder::new())),
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Builder::Text(b) => Arc::new(b.finish()),
            Builder::U8(b) => Arc::new(b.finish()),
            Builder::U16(b) => Arc::new(b.finish()),
            Builder::U32(b) => Arc::new(b.finish()),
            Builder::U64(b) => Arc::new(b.finish()),
            Builder::I16(b) => Arc::new(b.finish()),
            Builder::I32(b) => Arc::new(b.finish()),
            Builder::F64(b) => Arc::new(b.finish()),
            Builder::TextList(b) => Arc::new(b.finish()),
        }
    }
}

/// A Parquet table being written row by row: each row sets every column
/// in order (`text`, `u64`, ...; `None` is a null), then [`Table::end_row`].
pub struct Table<W: Write + Send> {
    schema: SchemaRef,
    builders: Vec<Builder>,
    /// The column the next value goes to.
    next: usize,
    rows: usize,
    writer: ArrowWriter<W>,
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
        let fields: Vec<Field> =
            columns.iter().map(|&(name, t)| Field::new(name, t.data_type(), true)).collect();
        let schema = Arc::new(Schema::new(fields));
        let level = ZstdLevel::try_new(ZSTD_LEVEL).map_err(io_error)?;
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(level))
            .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
            .set_data_page_size_limit(PAGE_BYTES)
            .set_dictionary_page_size_limit(PAGE_BYTES)
            // Statistics per column chunk (what readers prune row groups
            // by), not per page: the page indexes are held until the
            // footer, memory that would grow with the table.
            .set_statistics_enabled(EnabledStatistics::Chunk)
            .set_offset_index_disabled(true)
            .set_created_by(format!("kibitz {}", env!("CARGO_PKG_VERSION")))
            .build();
        let writer = ArrowWriter::try_new(out, schema.clone(), Some(props)).map_err(io_error)?;
        let builders = columns.iter().map(|&(_, t)| Builder::new(t)).collect();
        Ok(Table { schema, builders, next: 0, rows: 0, writer })
    }

    fn column(&mut self) -> &mut Builder {
        let i = self.next;
        self.next += 1;
        &mut self.builders[i]
    }

    /// The next column's text.
    pub fn text(&mut self, v: Option<&str>) {
        match self.column() {
            Builder::Text(b) => b.append_option(v),
            _ => panic!("column {} is not text", self.next - 1),
        }
    }

    /// The next column's list of texts.
    pub fn text_list<'a>(&mut self, v: Option<impl IntoIterator<Item = &'a str>>) {
        match self.column() {
            Builder::TextList(b) => match v {
                Some(items) => {
                    for item in items {
                        b.values().append_value(item);
                    }
                    b.append(true);
                }
                None => b.append(false),
            },
            _ => panic!("column {} is not a list", self.next - 1),
        }
    }

    /// The next column's number (of the column's type; `v` must fit it).
    pub fn int(&mut self, v: Option<i64>) {
        let at = self.next;
        match self.column() {
            Builder::U8(b) => b.append_option(v.map(|v| fit::<u8>(v, at))),
            Builder::U16(b) => b.append_option(v.map(|v| fit::<u16>(v, at))),
            Builder::U32(b) => b.append_option(v.map(|v| fit::<u32>(v, at))),
            Builder::U64(b) => b.append_option(v.map(|v| fit::<u64>(v, at))),
            Builder::I16(b) => b.append_option(v.map(|v| fit::<i16>(v, at))),
            Builder::I32(b) => b.append_option(v.map(|v| fit::<i32>(v, at))),
            _ => panic!("column {at} is not a whole number"),
        }
    }

    /// The next column's real number.
    pub fn float(&mut self, v: Option<f64>) {
        match self.column() {
            Builder::F64(b) => b.append_option(v),
            _ => panic!("column {} is not a real number", self.next - 1),
        }
    }

    /// Ends a row (every column set); a full batch goes to the writer.
    pub fn end_row(&mut self) -> std::io::Result<()> {
        assert_eq!(self.next, self.builders.len(), "a row sets every column");
        self.next = 0;
        self.rows += 1;
        if self.rows >= BATCH_ROWS {
            self.flush_batch()?;
        }
        Ok(())
    }

    fn flush_batch(&mut self) -> std::io::Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let columns: Vec<ArrayRef> = self.builders.iter_mut().map(Builder::finish).collect();
        let batch = RecordBatch::try_new(self.schema.clone(), columns).map_err(io_error)?;
        self.writer.write(&batch).map_err(io_error)?;
        self.rows = 0;
        Ok(())
    }

    /// Writes the last rows and the footer; returns the output.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.flush_batch()?;
        self.writer.into_inner().map_err(io_error)
    }
}

/// The name a file is written under until it is complete: `NAME.partial`
/// beside it.
pub fn partial_path(path: &std::path::Path) -> std::path::PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".partial");
    path.with_file_name(name)
}
