//! Tables of games, whatever they are stored in (Parquet, CSV): which
//! columns carry what, by their names, and a row written as the PGN text
//! of its game, so that it goes through the same reader as a PGN file's.

use crate::io::filter::{GameFilter, GameTags, Verdict};

/// What a column's values are read as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Text.
    Text,
    /// A whole number.
    Integer,
    /// A day (PGN's `YYYY.MM.DD`).
    Date,
}

/// A float that holds a whole number (pandas writes an integer column with
/// gaps as floats: `1500.0`), as that number; `None` for a fraction, an
/// infinity, NaN, or a value past what a float holds exactly.
pub fn whole_number(v: f64) -> Option<i64> {
    (v.is_finite() && v.fract() == 0.0 && v.abs() < 9.0e15).then_some(v as i64)
}

/// A tag a column carries: the tag, how the column's values are read, and
/// the column names that carry it, as [`normalize`] writes them (so
/// `WhiteElo`, `white_elo` and `white-elo` are one name).
#[derive(Clone, Copy, Debug)]
pub struct TagColumn {
    /// The PGN tag.
    pub tag: &'static str,
    /// How the column's values are read.
    pub kind: Kind,
    /// The column names that carry it, normalised.
    pub names: &'static [&'static str],
}

const fn tag(tag: &'static str, kind: Kind, names: &'static [&'static str]) -> TagColumn {
    TagColumn { tag, kind, names }
}

/// The columns that become tags: Lichess's dataset's names (those kibitz
/// reads: the records' tags and ratings, the game filters') and the
/// variants other pipelines write, in the order the PGN dumps write the
/// tags. `UTCDate` also gives `Date` when the table has no date column of
/// its own. A lone `elo` (or `rating`) column is the game's `Elo` tag,
/// given to neither player; a `fen` column is the game's start position.
/// The columns no part of kibitz reads (Lichess's `UTCTime`, the rating
/// differences, `ECO`, `Opening`) are not decoded at all: a column
/// projection is what makes Parquet quick to read.
pub const TAG_COLUMNS: [TagColumn; 16] = [
    tag("Event", Kind::Text, &["event"]),
    tag("Site", Kind::Text, &["site"]),
    tag("Date", Kind::Date, &["date"]),
    tag("Round", Kind::Text, &["round"]),
    tag("White", Kind::Text, &["white", "whiteplayer", "whitename"]),
    tag("Black", Kind::Text, &["black", "blackplayer", "blackname"]),
    tag("Result", Kind::Text, &["result"]),
    tag("UTCDate", Kind::Date, &["utcdate"]),
    tag("WhiteElo", Kind::Integer, &["whiteelo", "whiterating"]),
    tag("BlackElo", Kind::Integer, &["blackelo", "blackrating"]),
    tag("WhiteTitle", Kind::Text, &["whitetitle"]),
    tag("BlackTitle", Kind::Text, &["blacktitle"]),
    tag("TimeControl", Kind::Text, &["timecontrol"]),
    tag("Termination", Kind::Text, &["termination"]),
    tag("Elo", Kind::Integer, &["elo", "rating"]),
    tag("FEN", Kind::Text, &["fen", "startfen", "startposition"]),
];

/// The columns that may hold a game's moves, in the order they are looked
/// for (normalised): the first the table has is read. A cell holds
/// movetext with or without move numbers, SAN or UCI moves, or a whole
/// PGN game with its tags (which then win over the other columns').
pub const MOVES_COLUMNS: [&str; 6] = ["movetext", "pgn", "moves", "san", "game", "uci"];

/// A column name as it is matched: lower case, without `_`, `-`, spaces
/// and dots.
pub fn normalize(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, '_' | '-' | ' ' | '.'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// The columns that may hold a position (a FEN, or an EPD line with its
/// opcodes), in the order they are looked for, normalised: a table with
/// none of [`MOVES_COLUMNS`] is a table of positions when it has one.
pub const POSITION_COLUMNS: [&str; 3] = ["fen", "epd", "position"];

/// The columns of a table of positions that may hold the move played from
/// the position (SAN or UCI), in the order they are looked for.
pub const PLAYED_COLUMNS: [&str; 5] = ["move", "nextmove", "bestmove", "played", "playedmove"];

/// The columns of a table of positions that may hold its evaluation in
/// centipawns (`#3`, `#-2` for mates), in the order they are looked for.
pub const EVAL_COLUMNS: [&str; 6] =
    ["cp", "eval", "score", "positioneval", "evaluation", "centipawns"];

/// The columns of a table of positions that may hold a mate's distance in
/// moves (positive when the side the evaluations speak for mates).
pub const MATE_COLUMNS: [&str; 2] = ["mate", "matein"];

/// What a table's rows are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Rows {
    /// Games when the table has a column of moves, else positions when it
    /// has a column of positions.
    #[default]
    Auto,
    /// A game a row.
    Games,
    /// A position a row.
    Positions,
}

/// Whose side a table's evaluations speak for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum EvalSide {
    /// White's: positive when White is better (Lichess's convention, and
    /// PGN's `[%eval]`).
    #[default]
    White,
    /// The side to move's (EPD's `ce`).
    Mover,
}

/// How tables are read: the run's `--moves-column`, `--fen-column`,
/// `--rows` and `--table-eval-side`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct TableOptions {
    /// The column of moves of a table of games (else the first of
    /// `movetext`, `pgn`, `moves`, `san`, `game`, `uci` a table has).
    pub moves_column: Option<String>,
    /// The column of positions of a table of positions (else the first of
    /// `fen`, `epd`, `position`).
    pub fen_column: Option<String>,
    /// What the rows are.
    pub rows: Rows,
    /// Whose side the evaluations speak for.
    pub eval_side: EvalSide,
}

/// Where a table's columns are (indices among the table's columns), as
/// its names and the run's [`TableOptions`] settle them.
// One a table, read once a row: the games' tag slots inline are simpler
// than a box and cost nothing that counts.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Layout {
    /// A game a row: its tag columns, as [`TAG_COLUMNS`] lists them, and
    /// its moves column.
    Games {
        /// The tag columns.
        tags: [Option<usize>; TAG_COLUMNS.len()],
        /// The moves column.
        moves: usize,
    },
    /// A position a row, written as an EPD line.
    Positions {
        /// The position column.
        fen: usize,
        /// The played move's column.
        played: Option<usize>,
        /// The evaluation's column.
        eval: Option<usize>,
        /// The mate's column.
        mate: Option<usize>,
    },
}

impl Layout {
    /// Finds the columns among a table's `names`; an error names the
    /// columns it has and those looked for.
    pub fn find(names: &[&str], options: &TableOptions) -> Result<Layout, String> {
        let normal: Vec<String> = names.iter().map(|n| normalize(n)).collect();
        let index = |name: &str| normal.iter().position(|n| n == name);
        let first = |given: &Option<String>, list: &[&str]| match given {
            Some(name) => index(&normalize(name)),
            None => list.iter().find_map(|n| index(n)),
        };
        let moves = first(&options.moves_column, &MOVES_COLUMNS);
        let fen = first(&options.fen_column, &POSITION_COLUMNS);
        let games = match options.rows {
            Rows::Games => true,
            Rows::Positions => false,
            Rows::Auto => moves.is_some() || fen.is_none(),
        };
        if games && let Some(moves) = moves {
            let mut tags = [None; TAG_COLUMNS.len()];
            for (slot, column) in tags.iter_mut().zip(TAG_COLUMNS) {
                *slot = column.names.iter().find_map(|n| index(n)).filter(|&i| i != moves);
            }
            return Ok(Layout::Games { tags, moves });
        }
        if !games && let Some(fen) = fen {
            let other = |list: &[&str]| list.iter().find_map(|n| index(n)).filter(|&i| i != fen);
            let (played, eval, mate) =
                (other(&PLAYED_COLUMNS), other(&EVAL_COLUMNS), other(&MATE_COLUMNS));
            return Ok(Layout::Positions { fen, played, eval, mate });
        }
        let looked = |given: &Option<String>, list: &[&str], flag: &str| match given {
            Some(name) => format!("`{name}`, the column {flag} names"),
            None => format!("one of {}", list.join(", ")),
        };
        let moves = looked(&options.moves_column, &MOVES_COLUMNS, "--moves-column");
        let fens = looked(&options.fen_column, &POSITION_COLUMNS, "--fen-column");
        let wanted = match options.rows {
            Rows::Games => format!("no column of moves: looked for {moves}"),
            Rows::Positions => format!("no column of positions: looked for {fens}"),
            Rows::Auto => format!(
                "no column of moves or positions: looked for {moves} (a game a row), or {fens} \
                 (a position a row)"
            ),
        };
        Err(format!(
            "{wanted}, ignoring case, `_` and `-` (the table's columns: {})",
            names.join(", ")
        ))
    }

    /// The columns read, each with how its values are read (a Parquet
    /// table's projection and type checks).
    #[cfg(feature = "parquet")]
    pub fn columns(&self) -> Vec<(usize, Kind)> {
        match self {
            Layout::Games { tags, moves } => {
                let mut out: Vec<(usize, Kind)> = tags
                    .iter()
                    .zip(TAG_COLUMNS)
                    .filter_map(|(t, c)| t.map(|i| (i, c.kind)))
                    .collect();
                out.push((*moves, Kind::Text));
                out
            }
            Layout::Positions { fen, played, eval, mate } => {
                let mut out = vec![(*fen, Kind::Text)];
                out.extend(played.map(|i| (i, Kind::Text)));
                out.extend(eval.map(|i| (i, Kind::Integer)));
                out.extend(mate.map(|i| (i, Kind::Integer)));
                out
            }
        }
    }

    /// Whether rows are positions (written as EPD lines) rather than games
    /// (written as PGN).
    pub fn positions(&self) -> bool {
        matches!(self, Layout::Positions { .. })
    }
}

/// A row of a table as [`RowWriter`] reads it, its cells by their column's
/// index in the table.
pub trait Cells {
    /// Appends cell `col`, read as `kind`; `false`, appending nothing, for
    /// a null or an empty cell.
    fn cell(&self, col: usize, kind: Kind, out: &mut Vec<u8>) -> bool;
    /// The text of cell `col`: its bytes where the table holds them as
    /// they are, else written into `scratch`; `None` for a null.
    fn text<'s>(&'s self, col: usize, scratch: &'s mut Vec<u8>) -> Option<&'s [u8]>;
}

/// Writes rows as PGN games (checking the filters on the tag columns) or
/// as EPD lines, as the table's [`Layout`] says.
pub struct RowWriter<'f> {
    layout: Layout,
    filter: Option<&'f GameFilter>,
    eval_side: EvalSide,
    /// Where each tag's value stands in the text of the row in hand.
    values: [Option<(usize, usize)>; TAG_COLUMNS.len()],
    /// A cell copied out of the table (one it does not hold as text).
    scratch: Vec<u8>,
}

/// Indices in [`TAG_COLUMNS`] of the tags the filters read, and of those
/// written with another.
const DATE: usize = 2;
const RESULT: usize = 6;
const UTC_DATE: usize = 7;
const WHITE_ELO: usize = 8;
const BLACK_ELO: usize = 9;
const WHITE_TITLE: usize = 10;
const BLACK_TITLE: usize = 11;
const TIME_CONTROL: usize = 12;
const TERMINATION: usize = 13;
const FEN: usize = 15;

impl<'f> RowWriter<'f> {
    /// A writer of the rows of a table of `layout`, which checks `filter`
    /// (if any) on each game's tag cells and reads evaluations as speaking
    /// for `eval_side`.
    pub fn new(layout: Layout, filter: Option<&'f GameFilter>, eval_side: EvalSide) -> Self {
        RowWriter {
            layout,
            filter: filter.filter(|f| !f.is_empty()),
            eval_side,
            values: [None; TAG_COLUMNS.len()],
            scratch: Vec::new(),
        }
    }

    /// Writes a row: a game's PGN text, or a position's EPD line. A row
    /// that cannot be written (a position without its FEN, an evaluation
    /// that is no number) writes nothing and says why.
    pub fn row(&mut self, cells: &impl Cells, out: &mut Vec<u8>) -> Result<(), String> {
        match self.layout {
            Layout::Games { tags, moves } => {
                self.game(&tags, moves, cells, out);
                Ok(())
            }
            Layout::Positions { fen, played, eval, mate } => {
                let at = out.len();
                let written = self.position(cells, fen, played, eval, mate, out);
                if written.is_err() {
                    out.truncate(at);
                }
                written
            }
        }
    }

    /// A position's row as an EPD line: the position cell, then the played
    /// move as `sm` and the evaluation as `ce` (centipawns) or `dm` (a mate
    /// in moves, negative when the side to move is mated), both from the
    /// side to move's view, as EPD gives them.
    fn position(
        &mut self,
        cells: &impl Cells,
        fen: usize,
        played: Option<usize>,
        eval: Option<usize>,
        mate: Option<usize>,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        self.scratch.clear();
        let position = cells.text(fen, &mut self.scratch).unwrap_or_default().trim_ascii();
        if position.is_empty() {
            return Err("its position cell is empty".into());
        }
        let from = out.len();
        out.extend_from_slice(position);
        // The side to move: the FEN's second field.
        let black = out[from..].split(|b| b.is_ascii_whitespace()).nth(1) == Some(b"b");
        let sign = if self.eval_side == EvalSide::White && black { -1 } else { 1 };
        out.extend_from_slice(b" ;");
        let cell = &mut self.scratch;
        cell.clear();
        if let Some(col) = played
            && cells.cell(col, Kind::Text, cell)
        {
            out.extend_from_slice(b" sm ");
            out.extend_from_slice(cell.trim_ascii());
            out.push(b';');
        }
        cell.clear();
        let mut mate_moves = None;
        if let Some(col) = mate
            && cells.cell(col, Kind::Integer, cell)
        {
            mate_moves = Some(mate_in(cell).ok_or_else(|| {
                format!(
                    "its mate cell `{}` is not a number of moves",
                    String::from_utf8_lossy(cell)
                )
            })?);
        }
        cell.clear();
        if mate_moves.is_none()
            && let Some(col) = eval
            && cells.cell(col, Kind::Integer, cell)
        {
            let text = cell.trim_ascii();
            if let Some(m) = text.strip_prefix(b"#") {
                mate_moves = Some(mate_in(m).ok_or_else(|| {
                    format!("its evaluation `{}` is not a mate", String::from_utf8_lossy(text))
                })?);
            } else {
                let cp = number(text).filter(|v| v.abs() < 1e6).ok_or_else(|| {
                    format!("its evaluation `{}` is not a number", String::from_utf8_lossy(text))
                })?;
                let cp = (cp.round() as i64) * sign;
                out.extend_from_slice(format!(" ce {cp};").as_bytes());
            }
        }
        if let Some(n) = mate_moves {
            out.extend_from_slice(format!(" dm {};", n * sign).as_bytes());
        }
        // One position a line.
        for b in &mut out[from..] {
            if *b == b'\n' || *b == b'\r' {
                *b = b' ';
            }
        }
        out.push(b'\n');
        Ok(())
    }

    /// Writes a row as a game: its tags, then (when it passes the
    /// filters) its moves. A moves cell that holds a whole game (its tags
    /// first) is written with its own tags, then the columns' tags it
    /// lacks.
    fn game(
        &mut self,
        tags: &[Option<usize>; TAG_COLUMNS.len()],
        moves_col: usize,
        cells: &impl Cells,
        out: &mut Vec<u8>,
    ) {
        self.values = [None; TAG_COLUMNS.len()];
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        let moves = cells.text(moves_col, &mut scratch).unwrap_or_default();
        let (cell_tags, moves_from) = split_tags(moves);
        let row_start = out.len();
        if cell_tags > 0 {
            // The cell's tags, a line each.
            for (name, value) in tag_pairs(&moves[..moves_from]) {
                out.push(b'[');
                out.extend_from_slice(name);
                out.extend_from_slice(b" \"");
                out.extend_from_slice(value);
                out.extend_from_slice(b"\"]\n");
            }
        }
        let cell_tag_end = out.len();
        let in_cell = |out: &[u8], tag: &str| {
            tag_pairs(&out[row_start..cell_tag_end]).any(|(n, _)| n == tag.as_bytes())
        };
        let has_date_column = tags[DATE].is_some();
        for (k, column) in TAG_COLUMNS.iter().enumerate() {
            let Some(col) = tags[k] else { continue };
            if cell_tags > 0 && in_cell(out, column.tag) {
                continue;
            }
            if k == UTC_DATE && !has_date_column && !(cell_tags > 0 && in_cell(out, "Date")) {
                // `Date` first, as the dumps write it: the same day.
                let at = out.len();
                out.extend_from_slice(b"[Date \"");
                let from = out.len();
                if cells.cell(col, column.kind, out) {
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
            out.extend_from_slice(column.tag.as_bytes());
            out.extend_from_slice(b" \"");
            let from = out.len();
            if !cells.cell(col, column.kind, out) {
                out.truncate(at);
                continue;
            }
            escape_from(out, from);
            self.values[k] = Some((from, out.len()));
            out.extend_from_slice(b"\"]\n");
            if k == FEN && !(cell_tags > 0 && in_cell(out, "SetUp")) {
                out.extend_from_slice(b"[SetUp \"1\"]\n");
            }
        }
        out.push(b'\n');
        // A row whose cell carries tags is passed on whole: the reader's
        // filters see all of its tags.
        if cell_tags > 0 || self.passes(out) {
            let from = out.len();
            out.extend_from_slice(&moves[moves_from..]);
            // One game a row: a line break in the moves could start
            // another game's tags.
            for b in &mut out[from..] {
                if *b == b'\n' || *b == b'\r' {
                    *b = b' ';
                }
            }
            out.push(b'\n');
        } else {
            // The tags alone, closed by an unknown result: a game of no
            // moves (the next row's tags would otherwise continue these).
            out.extend_from_slice(b"*\n");
        }
        out.push(b'\n');
        self.scratch = scratch;
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
            date: value(UTC_DATE).or_else(|| value(DATE)),
            termination: value(TERMINATION),
            result: value(RESULT),
            white_title: value(WHITE_TITLE),
            black_title: value(BLACK_TITLE),
        };
        filter.check(&tags) == Verdict::Keep
    }
}

/// A cell's text as a number.
pub(crate) fn number(cell: &[u8]) -> Option<f64> {
    std::str::from_utf8(cell).ok()?.trim().parse().ok()
}

/// A cell's text as a mate's distance in moves (a whole number below
/// 10,000 in size).
fn mate_in(cell: &[u8]) -> Option<i64> {
    number(cell).and_then(whole_number).filter(|n| n.abs() < 10_000)
}

/// The tag pairs at the start of a moves cell that holds a whole game:
/// how many, and where its moves start (0 and 0 for a cell of moves
/// alone). A tag pair is `[Name "value"]`, the value's `\"` and `\\`
/// escaped, whitespace of any kind around it.
fn split_tags(cell: &[u8]) -> (usize, usize) {
    let mut count = 0;
    let mut at = 0;
    loop {
        let start = at + cell[at..].iter().take_while(|b| b.is_ascii_whitespace()).count();
        match tag_end(&cell[start..]) {
            Some(len) => {
                count += 1;
                at = start + len;
            }
            None => return if count == 0 { (0, 0) } else { (count, at) },
        }
    }
}

/// The length of the tag pair `text` starts with, if it starts with one.
fn tag_end(text: &[u8]) -> Option<usize> {
    let rest = text.strip_prefix(b"[")?;
    let name = rest.iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'_').count();
    if name == 0 {
        return None;
    }
    let mut i = 1 + name;
    i += text[i..].iter().take_while(|b| **b == b' ' || **b == b'\t').count();
    if text.get(i) != Some(&b'"') {
        return None;
    }
    i += 1;
    while i < text.len() {
        match text[i] {
            b'\\' => i += 2,
            b'"' => break,
            b'\n' | b'\r' => return None,
            _ => i += 1,
        }
    }
    if text.get(i) != Some(&b'"') {
        return None;
    }
    i += 1;
    i += text[i..].iter().take_while(|b| **b == b' ' || **b == b'\t').count();
    (text.get(i) == Some(&b']')).then_some(i + 1)
}

/// The (name, escaped value) of each tag pair of a run of them.
fn tag_pairs(text: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    let mut at = 0;
    std::iter::from_fn(move || {
        let start = at + text[at..].iter().take_while(|b| b.is_ascii_whitespace()).count();
        let len = tag_end(&text[start..])?;
        at = start + len;
        let pair = &text[start + 1..start + len - 1];
        let name_len = pair.iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'_').count();
        let q1 = pair.iter().position(|&b| b == b'"')?;
        let q2 = pair.iter().rposition(|&b| b == b'"')?;
        Some((&pair[..name_len], &pair[q1 + 1..q2]))
    })
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
