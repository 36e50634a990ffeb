//! `Lichess/standard-chess-games`: one game a row, read as PGN.
//!
//! Each row becomes the PGN text of its game: a tag for each column kibitz
//! reads that the row holds (a null column, or one the file lacks, is no
//! tag; `Date` is `UTCDate`'s day, there is no `Round`), then `movetext`,
//! the moves as the monthly PGN dumps write them. Only `movetext` is
//! required. The columns no part of kibitz reads (`UTCTime`, the rating
//! differences, `ECO`, `Opening`) are not decoded at all: a column
//! projection is what makes Parquet quick to read. The text goes through the same reader as a PGN file's, so a
//! game reads the same from either source; the games' places are their
//! rows (see [`crate::io::place`]).
//!
//! Work is cut into units of at most [`UNIT_ROWS`] rows of one row group,
//! decoded a window at a time in parallel, and handed on in order as
//! chunks of about the configured size: memory holds a window of units
//! whatever the file's size. With game filters, a row's tag columns are
//! checked before anything of its moves is copied; a row that fails
//! becomes its tags alone, which the filters then count as a PGN game's.

use std::sync::Arc;

use arrow_array::{Array, RecordBatch};
use bytes::Bytes;
use parquet::arrow::{
    ProjectionMask,
    arrow_reader::{
        ArrowReaderMetadata, ParquetRecordBatchReaderBuilder, RowSelection, RowSelector,
    },
};
use rayon::prelude::*;

use super::{Kind, push_cell, readable};
use crate::io::filter::{GameFilter, GameTags, Verdict};

/// The columns of the dataset that become tags (those kibitz reads: the
/// records' tags and ratings, the game filters'), in the order the monthly
/// PGN dumps write them, with how each is read. `UTCDate` also gives
/// `Date`.
pub const TAG_COLUMNS: [(&str, Kind); 12] = [
    ("Event", Kind::Text),
    ("Site", Kind::Text),
    ("White", Kind::Text),
    ("Black", Kind::Text),
    ("Result", Kind::Text),
    ("UTCDate", Kind::Date),
    ("WhiteElo", Kind::Integer),
    ("BlackElo", Kind::Integer),
    ("WhiteTitle", Kind::Text),
    ("BlackTitle", Kind::Text),
    ("TimeControl", Kind::Text),
    ("Termination", Kind::Text),
];

/// The column that holds the moves.
pub const MOVETEXT: &str = "movetext";

/// The most rows decoded as one unit of work: a row group of more is read
/// a part at a time, so a file of huge row groups stays in bounded memory.
pub const UNIT_ROWS: usize = 8192;

/// Rows decoded at a time within a unit.
const BATCH_ROWS: usize = 1024;

/// Where each column of a games file is (`None`: the file lacks it).
#[derive(Clone, Debug)]
pub struct GameColumns {
    /// The tag columns, as [`TAG_COLUMNS`] lists them.
    tags: [Option<usize>; TAG_COLUMNS.len()],
    /// `movetext`.
    movetext: usize,
    /// The projection of those columns.
    mask: ProjectionMask,
}

impl GameColumns {
    /// Finds the columns in a file's schema; an error names a missing
    /// `movetext` or a column of a type that cannot be read.
    pub fn find(meta: &ArrowReaderMetadata) -> Result<GameColumns, String> {
        let schema = meta.schema();
        let index = |name: &str| schema.fields().iter().position(|f| f.name() == name);
        let movetext = index(MOVETEXT).ok_or_else(|| {
            let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
            format!(
                "no column `{MOVETEXT}`, which holds the moves (the file's columns: {})",
                names.join(", ")
            )
        })?;
        let check = |i: usize, kind: Kind| {
            let f = &schema.fields()[i];
            if readable(f.data_type(), kind) {
                Ok(())
            } else {
                Err(format!(
                    "column `{}` is of type {}, which kibitz cannot read",
                    f.name(),
                    f.data_type()
                ))
            }
        };
        check(movetext, Kind::Text)?;
        let mut tags = [None; TAG_COLUMNS.len()];
        for (slot, (name, kind)) in tags.iter_mut().zip(TAG_COLUMNS) {
            if let Some(i) = index(name) {
                check(i, kind)?;
                *slot = Some(i);
            }
        }
        // Top-level columns: a root's index is its field's.
        let mut roots: Vec<usize> = tags.iter().flatten().copied().collect();
        roots.push(movetext);
        let mask = ProjectionMask::roots(meta.parquet_schema(), roots);
        Ok(GameColumns { tags, movetext, mask })
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
pub fn units(meta: &ArrowReaderMetadata) -> Vec<Unit> {
    let mut out = Vec::new();
    let mut first = 0u64;
    for (group, g) in meta.metadata().row_groups().iter().enumerate() {
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

/// Games as PGN text, with each game's place: its first byte in the text
/// and its row in the file.
#[derive(Debug, Default)]
pub struct Piece {
    /// The text.
    pub text: Vec<u8>,
    /// (first byte in `text`, row in the file) of each game.
    pub places: Vec<(u32, u64)>,
}

/// Decodes one unit of a file into pieces of about `target` bytes of
/// text.
fn decode_unit(
    file: &GamesFile,
    unit: Unit,
    target: usize,
    filter: Option<&GameFilter>,
) -> Result<Vec<Piece>, String> {
    let (bytes, meta, columns) = (&file.bytes, &file.meta, &file.columns);
    let mut builder =
        ParquetRecordBatchReaderBuilder::new_with_metadata(bytes.clone(), meta.clone())
            .with_projection(columns.mask.clone())
            .with_row_groups(vec![unit.group])
            .with_batch_size(BATCH_ROWS);
    let group_rows = meta.metadata().row_group(unit.group).num_rows().max(0) as usize;
    if unit.skip > 0 || unit.rows < group_rows {
        let mut selectors = Vec::with_capacity(2);
        if unit.skip > 0 {
            selectors.push(RowSelector::skip(unit.skip));
        }
        selectors.push(RowSelector::select(unit.rows));
        builder = builder.with_row_selection(RowSelection::from(selectors));
    }
    let reader = builder.build().map_err(|e| e.to_string())?;
    let schema = meta.schema();
    let mut pieces = Vec::new();
    let mut piece = Piece::default();
    let mut row = unit.first;
    let mut writer = RowWriter::new(filter);
    for batch in reader {
        let batch = batch.map_err(|e| e.to_string())?;
        let column = |i: usize| batch_column(&batch, schema.field(i).name());
        let tags: Vec<Option<&dyn Array>> =
            columns.tags.iter().map(|c| c.and_then(column)).collect();
        let movetext =
            column(columns.movetext).ok_or_else(|| format!("no column `{MOVETEXT}` in a batch"))?;
        for i in 0..batch.num_rows() {
            let start = piece.text.len();
            if start > u32::MAX as usize / 2 {
                return Err("a row group's text is too large".into());
            }
            piece.places.push((start as u32, row));
            writer.row(&tags, movetext, i, &mut piece.text);
            row += 1;
            if piece.text.len() >= target {
                pieces.push(std::mem::take(&mut piece));
            }
        }
    }
    if !piece.places.is_empty() {
        pieces.push(piece);
    }
    Ok(pieces)
}

/// The column named `name` of a batch.
fn batch_column<'a>(batch: &'a RecordBatch, name: &str) -> Option<&'a dyn Array> {
    batch.column_by_name(name).map(|a| a.as_ref())
}

/// Writes rows as PGN games, checking the filters on the tag columns.
struct RowWriter<'f> {
    filter: Option<&'f GameFilter>,
    /// Where each tag's value stands in the text of the row in hand.
    values: [Option<(usize, usize)>; TAG_COLUMNS.len()],
}

/// Indices in [`TAG_COLUMNS`] of the tags the filters read.
const RESULT: usize = 4;
const UTC_DATE: usize = 5;
const WHITE_ELO: usize = 6;
const BLACK_ELO: usize = 7;
const WHITE_TITLE: usize = 8;
const BLACK_TITLE: usize = 9;
const TIME_CONTROL: usize = 10;
const TERMINATION: usize = 11;

impl<'f> RowWriter<'f> {
    fn new(filter: Option<&'f GameFilter>) -> RowWriter<'f> {
        RowWriter { filter: filter.filter(|f| !f.is_empty()), values: [None; TAG_COLUMNS.len()] }
    }

    /// Writes row `i` as a game: its tags, then (when it passes the
    /// filters) its moves.
    fn row(
        &mut self,
        tags: &[Option<&dyn Array>],
        movetext: &dyn Array,
        i: usize,
        out: &mut Vec<u8>,
    ) {
        self.values = [None; TAG_COLUMNS.len()];
        for (k, ((name, kind), column)) in TAG_COLUMNS.iter().zip(tags).enumerate() {
            let Some(column) = column else { continue };
            if k == UTC_DATE {
                // `Date` first, as the dumps write it: the same day.
                let at = out.len();
                out.extend_from_slice(b"[Date \"");
                let from = out.len();
                if push_cell(*column, i, *kind, out) {
                    let to = out.len();
                    out.extend_from_slice(b"\"]\n");
                    out.extend_from_slice(b"[UTCDate \"");
                    let v = out.len();
                    out.extend_from_within(from..to);
                    self.values[k] = Some((v, out.len()));
                    out.extend_from_slice(b"\"]\n");
                } else {
                    out.truncate(at);
                }
                continue;
            }
            let at = out.len();
            out.push(b'[');
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b" \"");
            let from = out.len();
            if !push_cell(*column, i, *kind, out) {
                out.truncate(at);
                continue;
            }
            escape_from(out, from);
            self.values[k] = Some((from, out.len()));
            out.extend_from_slice(b"\"]\n");
        }
        out.push(b'\n');
        if self.passes(out) {
            let from = out.len();
            if push_cell(movetext, i, Kind::Text, out) {
                // One game a row: a line break in the moves could start
                // another game's tags.
                for b in &mut out[from..] {
                    if *b == b'\n' || *b == b'\r' {
                        *b = b' ';
                    }
                }
            }
            out.push(b'\n');
        } else {
            // The tags alone, closed by an unknown result: a game of no
            // moves (the next row's tags would otherwise continue these).
            out.extend_from_slice(b"*\n");
        }
        out.push(b'\n');
    }

    /// Whether the row just written passes the filters (always, without
    /// filters; a row whose filter needs a result its `Result` column
    /// lacks is passed on whole, so its moves can give it).
    fn passes(&self, text: &[u8]) -> bool {
        let Some(filter) = self.filter else { return true };
        let value = |k: usize| self.values[k].map(|(a, b)| &text[a..b]);
        if !filter.results.is_empty() && value(RESULT).is_none() {
            return true;
        }
        let tags = GameTags {
            white_elo: value(WHITE_ELO),
            black_elo: value(BLACK_ELO),
            time_control: value(TIME_CONTROL),
            date: value(UTC_DATE),
            termination: value(TERMINATION),
            result: value(RESULT),
            white_title: value(WHITE_TITLE),
            black_title: value(BLACK_TITLE),
        };
        filter.check(&tags) == Verdict::Keep
    }
}

/// Escapes a tag value written from `from` to the end of `out`: `\` and
/// `"` get a backslash, line breaks become spaces.
fn escape_from(out: &mut Vec<u8>, from: usize) {
    if !out[from..].iter().any(|&b| matches!(b, b'\\' | b'"' | b'\n' | b'\r')) {
        return;
    }
    let value = out.split_off(from);
    for b in value {
        match b {
            b'\\' | b'"' => out.extend_from_slice(&[b'\\', b]),
            b'\n' | b'\r' => out.push(b' '),
            _ => out.push(b),
        }
    }
}

/// A games file opened: its bytes, footer and columns.
pub struct GamesFile {
    /// The file's bytes (a memory map).
    pub bytes: Bytes,
    /// Its footer.
    pub meta: ArrowReaderMetadata,
    /// Its columns.
    pub columns: Arc<GameColumns>,
}

impl GamesFile {
    /// Opens a games file from its bytes.
    pub fn open(bytes: Bytes) -> Result<GamesFile, String> {
        let meta = super::open_metadata(&bytes)?;
        let columns = Arc::new(GameColumns::find(&meta)?);
        Ok(GamesFile { bytes, meta, columns })
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
