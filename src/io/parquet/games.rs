//! Tables of games (one game a row, read as PGN) and of positions (one
//! position a row, read as an EPD line). Lichess's `standard-chess-games`
//! is a table of games; so is any table whose moves are in a column of one
//! of the names [`crate::io::table::MOVES_COLUMNS`] lists (pandas' and
//! pyarrow's tables of `pgn`, `moves`, `uci`...); a table without one but
//! with a `fen` or `epd` column is a table of positions
//! ([`crate::io::table::Layout`]).
//!
//! Each row of games becomes the PGN text of its game: a tag for each
//! column of [`crate::io::table::TAG_COLUMNS`] that the row holds (a null column, or one the file
//! lacks, is no tag; names are matched ignoring case, `_` and `-`), then
//! the moves cell. A cell may hold movetext with or without move numbers,
//! UCI moves, or a whole game with its tags, which then win over the
//! columns'. The columns no part of kibitz reads are not decoded at all: a
//! column projection is what makes Parquet quick to read. The text goes
//! through the same reader as a PGN file's, so a game reads the same from
//! either source; the games' places are their rows (see
//! [`crate::io::place`]).
//!
//! Work is cut into units of at most [`UNIT_ROWS`] rows of one row group,
//! decoded a window at a time in parallel, and handed on in order as
//! chunks of about the configured size: memory holds a window of units
//! whatever the file's size. With game filters, a row's tag columns are
//! checked before anything of its moves is copied; a row that fails
//! becomes its tags alone, which the filters then count as a PGN game's.

use std::sync::Arc;

use bytes::Bytes;
use parquet::file::{
    metadata::ParquetMetaData, reader::FileReader, serialized_reader::SerializedFileReader,
};
use rayon::prelude::*;

use super::{Form, RootColumn, UnitReader, column::Column, root_columns};
use crate::io::{
    filter::GameFilter,
    table::{Cells, EvalSide, Kind, Layout, RowWriter, TableOptions},
};

/// The most rows decoded as one unit of work: a row group of more is read
/// a part at a time, so a file of huge row groups stays in bounded memory.
pub const UNIT_ROWS: usize = 8192;

/// Rows decoded at a time within a unit.
const BATCH_ROWS: usize = 1024;

/// Where the columns of a table are, and those read.
#[derive(Clone, Debug)]
pub struct TableColumns {
    /// The columns, as the table's names settle them.
    pub layout: Layout,
    /// The columns read: (top-level index, leaf index, what it holds).
    read: Vec<(usize, usize, Form)>,
    /// The file's number of top-level columns.
    roots: usize,
}

impl TableColumns {
    /// Finds the columns in a file's schema ([`Layout::find`]); an error
    /// names the columns the file has and those looked for, or a column of
    /// a type that cannot be read.
    pub fn find(roots: &[RootColumn], options: &TableOptions) -> Result<TableColumns, String> {
        let names: Vec<&str> = roots.iter().map(|r| r.name.as_str()).collect();
        let layout = Layout::find(&names, options)?;
        let read = layout
            .columns()
            .into_iter()
            .map(|(i, kind)| roots[i].read_as(i, kind))
            .collect::<Result<_, _>>()?;
        Ok(TableColumns { layout, read, roots: roots.len() })
    }
}

/// A part of a row group decoded as one unit.
#[derive(Clone, Copy, Debug)]
pub struct Unit {
    /// The row group.
    pub group: usize,
    /// The unit's first row within its row group.
    pub skip: usize,
    /// Its rows.
    pub rows: usize,
    /// Its first row within the file.
    pub first: u64,
    /// Where the row group's data starts in the file.
    pub start_byte: u64,
    /// Where the row group's data ends in the file (for progress).
    pub end_byte: u64,
}

/// The units of a file, in order.
pub fn units(meta: &ParquetMetaData) -> Vec<Unit> {
    let mut out = Vec::new();
    let mut first = 0u64;
    for (group, g) in meta.row_groups().iter().enumerate() {
        let n = g.num_rows().max(0) as usize;
        let ranges = g.columns().iter().map(|c| c.byte_range());
        let end_byte = ranges.clone().map(|(start, len)| start + len).max().unwrap_or(0);
        let start_byte = ranges.map(|(start, _)| start).min().unwrap_or(0);
        let mut skip = 0;
        while skip < n {
            let rows = (n - skip).min(UNIT_ROWS);
            out.push(Unit { group, skip, rows, first: first + skip as u64, start_byte, end_byte });
            skip += rows;
        }
        first += n as u64;
    }
    out
}

/// Rows as PGN games or EPD lines, with each row's place: its first byte
/// in the text and its row in the file.
#[derive(Debug, Default)]
pub struct Piece {
    /// The text.
    pub text: Vec<u8>,
    /// (first byte in `text`, row in the file) of each row written.
    pub places: Vec<(u32, u64)>,
    /// The rows that could not be written: (row in the file, why).
    pub errors: Vec<(u64, String)>,
}

/// Decodes one unit of a file into pieces of about `target` bytes of
/// text.
fn decode_unit(
    file: &TableFile,
    unit: Unit,
    target: usize,
    filter: Option<&GameFilter>,
) -> Result<Vec<Piece>, String> {
    let columns = &file.columns;
    let mut reader =
        UnitReader::new(&file.reader, unit.group, &columns.read, columns.roots, unit.skip)
            .map_err(|e| e.to_string())?;
    let mut pieces = Vec::new();
    let mut piece = Piece::default();
    let mut row = unit.first;
    let mut writer = RowWriter::new(columns.layout.clone(), filter, file.eval_side);
    let mut left = unit.rows;
    while left > 0 {
        let n = reader.next_batch(left.min(BATCH_ROWS)).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err(format!("row group {} ends {left} rows short", unit.group));
        }
        left -= n;
        for i in 0..n {
            let cells = RowCells { columns: reader.columns(), i };
            let start = piece.text.len();
            if start > u32::MAX as usize / 2 {
                return Err("a row group's text is too large".into());
            }
            match writer.row(&cells, &mut piece.text) {
                Ok(()) => piece.places.push((start as u32, row)),
                Err(why) => piece.errors.push((row, why)),
            }
            row += 1;
            if piece.text.len() >= target {
                pieces.push(std::mem::take(&mut piece));
            }
        }
    }
    if !piece.places.is_empty() || !piece.errors.is_empty() {
        pieces.push(piece);
    }
    Ok(pieces)
}

/// Row `i` of a batch, its columns at their top-level index in the file
/// (`None` for those not read).
struct RowCells<'a> {
    columns: &'a [Option<Column>],
    i: usize,
}

impl Cells for RowCells<'_> {
    fn cell(&self, col: usize, kind: Kind, out: &mut Vec<u8>) -> bool {
        self.columns[col].as_ref().is_some_and(|c| c.push_cell(self.i, kind, out))
    }

    fn text<'s>(&'s self, col: usize, scratch: &'s mut Vec<u8>) -> Option<&'s [u8]> {
        let column = self.columns[col].as_ref()?;
        match column.text_slice(self.i) {
            Some(text) => Some(text),
            None => column.push_cell(self.i, Kind::Text, scratch).then_some(&scratch[..]),
        }
    }
}

/// A table file opened: its reader (its bytes and footer) and columns.
pub struct TableFile {
    /// The file's reader, over its bytes (a memory map).
    pub reader: SerializedFileReader<Bytes>,
    /// Its columns.
    pub columns: Arc<TableColumns>,
    /// Whose side its evaluations speak for (the run's
    /// `--table-eval-side`).
    pub eval_side: EvalSide,
}

impl TableFile {
    /// Opens a table file from its bytes, its columns found as `options`
    /// say.
    pub fn open(bytes: Bytes, options: &TableOptions) -> Result<TableFile, String> {
        let reader = super::open(bytes)?;
        let roots = root_columns(reader.metadata());
        let columns = Arc::new(TableColumns::find(&roots, options)?);
        Ok(TableFile { reader, columns, eval_side: options.eval_side })
    }

    /// Its footer.
    pub fn meta(&self) -> &ParquetMetaData {
        self.reader.metadata()
    }

    /// Decodes a window of units in parallel, in order. The decoder is
    /// another crate's: a panic on malformed data is caught and reported
    /// as an error of its unit.
    pub fn decode_window(
        &self,
        window: &[Unit],
        target: usize,
        filter: Option<&GameFilter>,
    ) -> Vec<Result<Vec<Piece>, String>> {
        let decode = |u: Unit| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                decode_unit(self, u, target, filter)
            }))
            .unwrap_or_else(|_| Err("the Parquet decoder failed on this row group's data".into()))
        };
        window.par_iter().map(|&u| decode(u)).collect()
    }
}
