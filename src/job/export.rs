//! Exports of `.kbz` records, streamed block by block:
//!
//! * `pgn`: each game with its tags, a `{ [%eval ...] }` comment per
//!   labelled position in Lichess's syntax (White's point of view, after the
//!   move that reached the position) and the best move as a one-move
//!   variation where it differs from the move played;
//! * `plain`: Stockfish's text training format (`fen`, `move`, `score`,
//!   `ply`, `result`, `e`);
//! * `epd`: the position with `ce` (or `dm` for mates), `bm`, `acd`, `id`;
//! * `jsonl`: one JSON object per labelled position;
//! * `bullet`: bullet's 32-byte `ChessBoard` records (bulletformat crate);
//! * `binpack`: Stockfish's compressed training format (sfbinpack crate);
//! * `parquet`: one row per labelled position, with the game's tags (see
//!   [`POSITION_COLUMNS`]), zstd, for DuckDB, polars and pandas.
//!
//! Positions whose label has no move (from `[%eval]`, at the end of a game)
//! are written with the move played where the format needs a move, and left
//! out (and counted) where there is none.

use std::{fmt::Write as _, io::Write, path::PathBuf};

use crate::{
    analysis::{Eval, analyse},
    chess::{
        fen::STARTPOS,
        mv::{Move, MoveKind},
        position::Position,
        types::{Color, Role},
        uci::move_to_uci,
    },
    record::{
        chain::{ChainError, Step, walk},
        format::{
            Ending, GameRecord, LABEL_PAST_LIMIT, LABEL_SHORT_OF_LIMIT, Label, ROSTER, move_at,
            result_text,
        },
        reader::{KbzReader, RecordError},
        shape::{ShapeRules, ShapeStats, Shaper},
        viriformat,
    },
    score::ScoreKind,
};

/// Export formats.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ExportFormat {
    /// Annotated PGN.
    Pgn,
    /// Stockfish's `.plain` text.
    Plain,
    /// EPD with `ce`/`dm`, `bm`, `acd`.
    Epd,
    /// JSON lines.
    Jsonl,
    /// bullet's 32-byte ChessBoard.
    Bullet,
    /// Stockfish's binpack.
    Binpack,
    /// viriformat (viridithas, bullet): games of 32-byte boards and 4-byte
    /// moves and scores.
    Viriformat,
    /// Parquet: a table of one row per labelled position
    /// ([`Export::run_parquet`]).
    Parquet,
}

/// Counts of what an export wrote.
#[derive(Clone, Copy, Debug, Default)]
pub struct ExportStats {
    /// Games read.
    pub games: u64,
    /// Records written (games for PGN, positions otherwise).
    pub written: u64,
    /// Labelled positions left out (no move where the format needs one).
    pub skipped: u64,
}

/// The result from `color`'s point of view: 1 win, 0 draw (or unknown), -1 loss.
fn relative_result(code: u8, color: Color) -> i16 {
    let white = match code {
        2 => 1,
        0 => -1,
        _ => 0,
    };
    if color == Color::White { white } else { -white }
}

/// `[%eval]` text, White's point of view, as Lichess writes it (`0.35`,
/// `-1.2`, `#4`); `#0` for a position already mated.
fn lichess_eval(score: i16, side: Color) -> String {
    // Eval classifies from the side to move's view first: mate distances
    // are not symmetric under negating the score (mate in n is 2n-1 plies,
    // mated in n is 2n), so flipping the score first would be off by one.
    Eval::from_score(i32::from(score), side).map_or_else(|| "#0".to_string(), Eval::pgn)
}

/// A score as EPD's `ce` gives it (centipawns), or `#n` for a mate.
fn epd_score(score: i16) -> String {
    match ScoreKind::from_score(i32::from(score)) {
        ScoreKind::Cp(cp) => cp.to_string(),
        ScoreKind::Mate(n) => format!("#{n}"),
    }
}

fn escape_tag(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"")
}

enum Sink<W: Write> {
    Bytes(W),
    /// The binpack writer, over a writer that keeps the first error: the
    /// binpack crate drops the errors of its last write and flush.
    Binpack(Box<sfbinpack::CompressedTrainingDataEntryWriter<Kept<W>>>, KeptError),
}

/// The first error a [`Kept`] writer met.
type KeptError = std::sync::Arc<std::sync::Mutex<Option<std::io::Error>>>;

/// A writer that keeps the first error it returns, for a caller that
/// ignores it.
struct Kept<W> {
    inner: W,
    error: KeptError,
}

impl<W: Write> Kept<W> {
    fn keep<T>(&self, r: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &r
            && let Ok(mut first) = self.error.lock()
            && first.is_none()
        {
            *first = Some(std::io::Error::new(e.kind(), e.to_string()));
        }
        r
    }
}

impl<W: Write> Write for Kept<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = self.inner.write(buf);
        self.keep(r)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.inner.flush();
        self.keep(r)
    }
}

/// Streams records into one export format.
pub struct Exporter<W: Write> {
    format: ExportFormat,
    sink: Sink<W>,
    text: String,
    analysis_tags: bool,
    /// Counts.
    pub stats: ExportStats,
}

impl<W: Write> Exporter<W> {
    /// An exporter writing `format` to `out`.
    pub fn new(format: ExportFormat, out: W) -> std::io::Result<Exporter<W>> {
        if format == ExportFormat::Parquet {
            return Err(std::io::Error::other(
                "Parquet is a table, not a stream of records: export it with Export::run_parquet",
            ));
        }
        let sink = if format == ExportFormat::Binpack {
            let error = KeptError::default();
            let kept = Kept { inner: out, error: error.clone() };
            let writer = sfbinpack::CompressedTrainingDataEntryWriter::new(kept)
                .map_err(std::io::Error::other)?;
            Sink::Binpack(Box::new(writer), error)
        } else {
            Sink::Bytes(out)
        };
        Ok(Exporter {
            format,
            sink,
            text: String::new(),
            analysis_tags: false,
            stats: ExportStats::default(),
        })
    }

    /// PGN: write each game's accuracy, average centipawn loss and
    /// judgment counts as tags (`WhiteAccuracy`, `WhiteACPL`,
    /// `WhiteInaccuracies`, ...). Meaningful when every position is
    /// labelled (`annotate --preset analysis`).
    pub fn with_analysis_tags(mut self, on: bool) -> Exporter<W> {
        self.analysis_tags = on;
        self
    }

    /// Exports one game.
    pub fn game(&mut self, record: &GameRecord) -> std::io::Result<()> {
        self.stats.games += 1;
        self.text.clear();
        let result = match self.format {
            ExportFormat::Pgn => self.pgn(record),
            ExportFormat::Binpack => self.binpack(record),
            ExportFormat::Viriformat => self.viriformat(record),
            _ => self.positions(record),
        };
        result?;
        if let Sink::Bytes(out) = &mut self.sink {
            out.write_all(self.text.as_bytes())?;
        }
        Ok(())
    }

    /// Flushes (and for binpack, writes the last chunk).
    pub fn finish(self) -> std::io::Result<()> {
        match self.sink {
            Sink::Bytes(mut out) => out.flush(),
            Sink::Binpack(mut w, error) => {
                w.flush_and_end();
                match error.lock().map(|mut e| e.take()) {
                    Ok(Some(e)) => Err(e),
                    _ => Ok(()),
                }
            }
        }
    }

    /// A game as Lichess exports an analysed one: `[%eval]` after every
    /// labelled position, each judged move marked (`?!`, `?`, `??`) with
    /// the comment `(0.26 → 1.67) Mistake. O-O was best.` and the better
    /// line as a variation.
    fn pgn(&mut self, record: &GameRecord) -> std::io::Result<()> {
        let analysis = analyse(record)?;
        let t = &mut self.text;
        for (name, value) in ROSTER.iter().zip(&record.tags) {
            let value = if *name == "Result" && value.is_empty() {
                result_text(record.result)
            } else {
                value
            };
            let _ = writeln!(
                t,
                "[{name} \"{}\"]",
                escape_tag(if value.is_empty() { "?" } else { value })
            );
        }
        for (side, elo) in ["White", "Black"].iter().zip(record.elo) {
            if elo > 0 {
                let _ = writeln!(t, "[{side}Elo \"{elo}\"]");
            }
        }
        let start = crate::record::format::PackedBoard::unpack(&record.start)
            .ok_or(ChainError::BadStart { game: record.index })?;
        if start.is_chess960() {
            let _ = writeln!(t, "[Variant \"Chess960\"]");
        }
        if start.fen() != STARTPOS || start.is_chess960() {
            let _ = writeln!(t, "[SetUp \"1\"]\n[FEN \"{}\"]", start.fen());
        }
        if record.ending != Ending::Unknown {
            let _ = writeln!(t, "[Termination \"{}\"]", record.ending.termination());
        }
        if self.analysis_tags {
            for (side, a) in [("White", &analysis.white.game), ("Black", &analysis.black.game)] {
                if let Some(accuracy) = a.accuracy {
                    let _ = writeln!(t, "[{side}Accuracy \"{accuracy:.1}\"]");
                }
                if let Some(acpl) = a.acpl {
                    let _ = writeln!(t, "[{side}ACPL \"{acpl}\"]");
                }
                let _ = writeln!(t, "[{side}Inaccuracies \"{}\"]", a.inaccuracies);
                let _ = writeln!(t, "[{side}Mistakes \"{}\"]", a.mistakes);
                let _ = writeln!(t, "[{side}Blunders \"{}\"]", a.blunders);
            }
        }
        t.push('\n');
        let mut movetext = String::new();
        if let Some(l) = record.labels.first().filter(|l| l.ply == 0) {
            let _ =
                write!(movetext, "{{ [%eval {}] }} ", lichess_eval(l.score, start.side_to_move()));
        }
        let mut need_number = true;
        for m in &analysis.moves {
            if m.mover == Color::White {
                let _ = write!(movetext, "{}. ", m.number);
            } else if need_number {
                let _ = write!(movetext, "{}... ", m.number);
            }
            movetext.push_str(&m.san);
            if let Some(a) = m.advice {
                movetext.push_str(a.judgment.glyph());
            }
            movetext.push(' ');
            need_number = false;
            if let Some(a) = m.advice {
                let evals = match (m.before, m.after) {
                    (Some(b), Some(after)) => format!("({} → {}) ", b.comment(), after.comment()),
                    _ => String::new(),
                };
                let what = a.mate.map_or(a.judgment.name(), |c| c.description());
                let best = m.best.as_ref().map(|b| format!(" {b} was best.")).unwrap_or_default();
                let _ = write!(movetext, "{{ {evals}{what}.{best} }} ");
                need_number = true;
            }
            // A mated position has no evaluation to show, as on Lichess.
            if let Some(after) = m.after {
                let _ = write!(movetext, "{{ [%eval {}] }} ", after.pgn());
                need_number = true;
            }
            // What the tables say, where their label stands for an
            // engine's.
            if let Some(verdict) = &m.tablebase {
                let _ = write!(movetext, "{{ Tablebase: {verdict} }} ");
                need_number = true;
            }
            if let (Some(_), Some(line)) = (m.advice, &m.variation) {
                let _ = write!(movetext, "({line}) ");
                need_number = true;
            }
        }
        if record.ending != Ending::Unknown {
            let _ = write!(movetext, "{{ {} }} ", record.ending.name().replace('_', " "));
        }
        let wrapped = wrap(&movetext, 79);
        let _ = writeln!(self.text, "{wrapped}{}\n", result_text(record.result));
        self.stats.written += 1;
        Ok(())
    }

    /// A game's labelled stretches as viriformat games (positions without
    /// a move played, at the end, are left out and counted).
    fn viriformat(&mut self, record: &GameRecord) -> std::io::Result<()> {
        let Sink::Bytes(out) = &mut self.sink else { return Ok(()) };
        let written = viriformat::write_game(out, record).map_err(|e| match e {
            viriformat::WriteError::Io(e) => e,
            viriformat::WriteError::Chain(e) => std::io::Error::other(e),
        })?;
        self.stats.written += written;
        self.stats.skipped += record.label_count() as u64 - written;
        Ok(())
    }

    fn positions(&mut self, record: &GameRecord) -> std::io::Result<()> {
        let format = self.format;
        let text = &mut self.text;
        let stats = &mut self.stats;
        let mut bullet: Vec<bulletformat::ChessBoard> = Vec::new();
        walk(record, |step: &Step<'_>| {
            let Some(label) = step.label else { return };
            let written = match format {
                ExportFormat::Plain => plain_record(text, record, step, label),
                ExportFormat::Epd => epd_line(text, record, step, label),
                ExportFormat::Jsonl => jsonl_line(text, record, step, label),
                ExportFormat::Bullet => bullet_board(record, step, label).map(|b| bullet.push(b)),
                ExportFormat::Pgn
                | ExportFormat::Binpack
                | ExportFormat::Viriformat
                | ExportFormat::Parquet => return,
            };
            match written {
                Some(()) => stats.written += 1,
                None => stats.skipped += 1,
            }
        })?;
        if !bullet.is_empty()
            && let Sink::Bytes(out) = &mut self.sink
        {
            out.write_all(
                <bulletformat::ChessBoard as bulletformat::BulletFormat>::as_bytes_slice(&bullet),
            )?;
        }
        Ok(())
    }

    fn binpack(&mut self, record: &GameRecord) -> std::io::Result<()> {
        let Sink::Binpack(writer, _) = &mut self.sink else { return Ok(()) };
        let stats = &mut self.stats;
        let mut failure = None;
        walk(record, |step: &Step<'_>| {
            let Some(label) = step.label else { return };
            if failure.is_some() {
                return;
            }
            let Some(m) = step.played.or(step.best) else {
                stats.skipped += 1;
                return;
            };
            let pos = step.pos;
            let entry = sfbinpack::TrainingDataEntry {
                pos: match sfbinpack::chess::position::Position::from_fen(&pos.fen()) {
                    Ok(p) => p,
                    Err(_) => {
                        stats.skipped += 1;
                        return;
                    }
                },
                mv: binpack_move(pos, m),
                score: label.score,
                ply: pos.game_ply().min(u32::from(u16::MAX)) as u16,
                result: relative_result(record.result, pos.side_to_move()),
            };
            match writer.write_entry(&entry) {
                Ok(()) => stats.written += 1,
                Err(e) => failure = Some(e),
            }
        })?;
        failure.map_or(Ok(()), |e| Err(std::io::Error::other(e.to_string())))
    }
}

/// Our move as sfbinpack's: castling as the king taking its rook (as
/// Stockfish encodes it), en passant as a normal pawn move.
fn binpack_move(pos: &Position, m: Move) -> sfbinpack::chess::r#move::Move {
    use sfbinpack::chess::{
        coords::Square as BSquare,
        r#move::{Move as BMove, MoveType},
        piece::Piece as BPiece,
        piecetype::PieceType,
    };
    let from = BSquare::new(m.from().to_u32());
    let to = BSquare::new(m.to().to_u32());
    match m.kind() {
        MoveKind::Castling => BMove::new(from, to, MoveType::Castle, BPiece::none()),
        MoveKind::EnPassant => BMove::new(from, to, MoveType::EnPassant, BPiece::none()),
        MoveKind::Promotion => {
            let color = if pos.side_to_move() == Color::White {
                sfbinpack::chess::color::Color::White
            } else {
                sfbinpack::chess::color::Color::Black
            };
            let kind = match m.promotion_role() {
                Some(Role::Knight) => PieceType::Knight,
                Some(Role::Bishop) => PieceType::Bishop,
                Some(Role::Rook) => PieceType::Rook,
                _ => PieceType::Queen,
            };
            BMove::new(from, to, MoveType::Promotion, BPiece::new(kind, color))
        }
        MoveKind::Normal => BMove::new(from, to, MoveType::Normal, BPiece::none()),
    }
}

/// Wraps movetext at `width` columns on spaces, never inside a `{ }`
/// comment.
fn wrap(text: &str, width: usize) -> String {
    let mut units: Vec<String> = Vec::new();
    let mut comment: Option<String> = None;
    for word in text.split_whitespace() {
        match comment.as_mut() {
            Some(c) => {
                c.push(' ');
                c.push_str(word);
                if word.ends_with('}') {
                    units.extend(comment.take());
                }
            }
            None if word.starts_with('{') && !word.ends_with('}') => {
                comment = Some(word.to_string())
            }
            // A move stays on the line of its number: `5. bxa8=Q`.
            None => match units.last_mut() {
                Some(last) if last.ends_with('.') => {
                    last.push(' ');
                    last.push_str(word);
                }
                _ => units.push(word.to_string()),
            },
        }
    }
    units.extend(comment);
    let mut out = String::with_capacity(text.len() + text.len() / width + 1);
    let mut line = 0;
    for unit in units {
        if line > 0 && line + 1 + unit.len() > width {
            out.push('\n');
            line = 0;
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        out.push_str(&unit);
        line += unit.len();
    }
    if line > 0 {
        out.push(' ');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::lichess_eval;
    use crate::chess::types::Color;
    use crate::score::MATE;

    fn score(s: i32) -> i16 {
        i16::try_from(s).unwrap()
    }

    #[test]
    fn eval_text_is_whites_view() {
        assert_eq!(lichess_eval(35, Color::White), "0.35");
        assert_eq!(lichess_eval(35, Color::Black), "-0.35");
        assert_eq!(lichess_eval(-120, Color::Black), "1.2");
        // As Lichess writes them: the fewest digits, a whole pawn with ".0".
        assert_eq!(lichess_eval(0, Color::White), "0.0");
        assert_eq!(lichess_eval(100, Color::White), "1.0");
        assert_eq!(lichess_eval(-15, Color::White), "-0.15");
    }

    #[test]
    fn mate_distances_survive_the_flip() {
        // Side to move mates in 4 (7 plies): White's view depends on who moves.
        assert_eq!(lichess_eval(score(MATE - 7), Color::White), "#4");
        assert_eq!(lichess_eval(score(MATE - 7), Color::Black), "#-4");
        // Side to move is mated in 3 (6 plies).
        assert_eq!(lichess_eval(score(-(MATE - 6)), Color::White), "#-3");
        assert_eq!(lichess_eval(score(-(MATE - 6)), Color::Black), "#3");
    }
}

/// One position in Stockfish's plain text; `None` (left out) without a
/// move.
fn plain_record(
    text: &mut String,
    record: &GameRecord,
    step: &Step<'_>,
    label: &Label,
) -> Option<()> {
    let pos = step.pos;
    let m = step.best.or(step.played)?;
    let _ = write!(
        text,
        "fen {}\nmove {}\nscore {}\nply {}\nresult {}\ne\n",
        pos.fen(),
        move_to_uci(m, pos.is_chess960()),
        label.score,
        pos.game_ply(),
        relative_result(record.result, pos.side_to_move())
    );
    Some(())
}

/// One position as an EPD line with `ce` (or `dm`), `bm`, `acd`, the lines
/// of a multi-PV search in `c0`, and `id`.
fn epd_line(text: &mut String, record: &GameRecord, step: &Step<'_>, label: &Label) -> Option<()> {
    let pos = step.pos;
    let _ = write!(text, "{} ", pos.epd());
    match ScoreKind::from_score(i32::from(label.score)) {
        ScoreKind::Cp(cp) => {
            let _ = write!(text, "ce {cp}; ");
        }
        ScoreKind::Mate(n) => {
            let _ = write!(text, "dm {n}; ");
        }
    }
    if let Some(b) = step.best {
        let _ = write!(text, "bm {}; ", pos.san(b));
    }
    if label.depth > 0 {
        let _ = write!(text, "acd {}; ", label.depth);
    }
    let lines = multipv_lines(step, label);
    if !lines.is_empty() {
        let lines: Vec<String> = lines
            .iter()
            .map(|&(m, score)| format!("{} {}", pos.san(m), epd_score(score)))
            .collect();
        let _ = write!(text, "c0 \"multipv {}\"; ", lines.join(", "));
    }
    let _ = writeln!(text, "id \"game {} ply {}\";", record.index + 1, step.ply);
    Some(())
}

/// The lines of a multi-PV search, best first, with their scores (empty
/// for a label of one line).
fn multipv_lines(step: &Step<'_>, label: &Label) -> Vec<(Move, i16)> {
    let Some(best) = step.best.filter(|_| !label.alternatives.is_empty()) else {
        return Vec::new();
    };
    let others = label.alternatives.lines().filter_map(|(i, s)| Some((move_at(step.pos, i)?, s)));
    std::iter::once((best, label.score)).chain(others).collect()
}

/// A score as JSON: centipawns, or a mate distance.
fn json_score(score: i16) -> (serde_json::Value, serde_json::Value) {
    match ScoreKind::from_score(i32::from(score)) {
        ScoreKind::Cp(cp) => (serde_json::Value::from(cp), serde_json::Value::Null),
        ScoreKind::Mate(n) => (serde_json::Value::Null, serde_json::Value::from(n)),
    }
}

/// One position as a JSON object on its own line.
fn jsonl_line(
    text: &mut String,
    record: &GameRecord,
    step: &Step<'_>,
    label: &Label,
) -> Option<()> {
    let pos = step.pos;
    let chess960 = pos.is_chess960();
    let (score, mate) = json_score(label.score);
    let mut v = serde_json::json!({
        "game": record.index,
        "ply": step.ply,
        "fen": pos.fen(),
        "score": score,
        "mate": mate,
        "best": step.best.map(|m| move_to_uci(m, chess960)),
        "played": step.played.map(|m| move_to_uci(m, chess960)),
        "depth": label.depth,
        "result": result_text(record.result),
    });
    // A label its engine did not make as asked (absent when it was).
    if label.flags & LABEL_SHORT_OF_LIMIT != 0 {
        v["limit"] = "short".into();
    } else if label.flags & LABEL_PAST_LIMIT != 0 {
        v["limit"] = "past".into();
    }
    let lines = multipv_lines(step, label);
    if !lines.is_empty() {
        let line = |&(m, score): &(Move, i16)| {
            let (cp, mate) = json_score(score);
            serde_json::json!({"move": move_to_uci(m, chess960), "score": cp, "mate": mate})
        };
        v["multipv"] = serde_json::Value::from(lines.iter().map(line).collect::<Vec<_>>());
    }
    let _ = writeln!(text, "{v}");
    Some(())
}

/// One position as bullet's 32-byte `ChessBoard` (White's score and
/// result); `None` where the crate refuses it.
fn bullet_board(
    record: &GameRecord,
    step: &Step<'_>,
    label: &Label,
) -> Option<bulletformat::ChessBoard> {
    let pos = step.pos;
    let stm = pos.side_to_move();
    let bitboards = [
        pos.pieces_of(Color::White).0,
        pos.pieces_of(Color::Black).0,
        pos.pieces_by_role(Role::Pawn).0,
        pos.pieces_by_role(Role::Knight).0,
        pos.pieces_by_role(Role::Bishop).0,
        pos.pieces_by_role(Role::Rook).0,
        pos.pieces_by_role(Role::Queen).0,
        pos.pieces_by_role(Role::King).0,
    ];
    let white_score = if stm == Color::White { label.score } else { -label.score };
    let white_result = match record.result {
        2 => 1.0,
        0 => 0.0,
        _ => 0.5,
    };
    bulletformat::ChessBoard::from_raw(bitboards, stm as usize, white_score, white_result).ok()
}

/// Why an export stopped.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The file cannot be opened (a bad block is not an error: the export
    /// writes what came before it and says so in its report).
    #[error(transparent)]
    Input(#[from] RecordError),
    /// A game does not replay.
    #[error(transparent)]
    Chain(#[from] ChainError),
    /// Writing failed.
    #[error("writing the export")]
    Write(#[from] std::io::Error),
}

/// What an export did.
#[derive(Debug)]
pub struct ExportReport {
    /// Games read, records written, positions left out.
    pub stats: ExportStats,
    /// What the shaping rules dropped, when there were rules.
    pub shaped: Option<ShapeStats>,
    /// The file ended with its end marker.
    pub complete: bool,
    /// Blocks and games read (for the message of an incomplete file).
    pub read: (u64, u64),
    /// Reading stopped at this corrupt block.
    pub corrupt: Option<RecordError>,
}

/// An export of a `.kbz` file into one format, shaped or not.
pub struct Export {
    file: PathBuf,
    format: ExportFormat,
    rules: Option<ShapeRules>,
}

impl Export {
    /// The export of `file` as `format`; `rules` shape it (inactive rules
    /// are the same as none).
    pub fn new(file: PathBuf, format: ExportFormat, rules: Option<ShapeRules>) -> Export {
        Export { file, format, rules: rules.filter(ShapeRules::is_active) }
    }

    /// Writes the export to `out`, block by block (the file is read twice
    /// when the piece counts are resampled: once for the counts).
    pub fn run<W: Write>(self, out: W) -> Result<ExportReport, ExportError> {
        let every = KbzReader::open(&self.file)?.header.options.labels_every_position();
        let mut exporter = Exporter::new(self.format, out)?.with_analysis_tags(every);
        let mut report = self.each_game(|g| Ok(exporter.game(g)?))?;
        report.stats = exporter.stats;
        exporter.finish()?;
        Ok(report)
    }

    /// Writes the export as Parquet (one row per labelled position, see
    /// the columns of `POSITION_COLUMNS` in `src/job/export.rs`) to `out`,
    /// streamed: memory holds a row group.
    #[cfg(feature = "parquet")]
    pub fn run_parquet<W: Write + Send>(self, out: W) -> Result<ExportReport, ExportError> {
        let every = KbzReader::open(&self.file)?.header.options.labels_every_position();
        let mut table = PositionTable::new(out, every)?;
        let mut report = self.each_game(|g| Ok(table.game(g)?))?;
        report.stats = table.stats;
        table.finish()?;
        Ok(report)
    }

    /// Reads the file block by block, each game shaped (when there are
    /// rules) and handed to `f`.
    fn each_game(
        &self,
        mut f: impl FnMut(&GameRecord) -> Result<(), ExportError>,
    ) -> Result<ExportReport, ExportError> {
        let mut shaper = self.rules.clone().map(Shaper::new);
        if let Some(shaper) = shaper.as_mut().filter(|s| s.needs_counts()) {
            let mut reader = KbzReader::open(&self.file)?;
            while let Some(Ok((_, _, block))) = reader.next_block() {
                for g in &block {
                    shaper.count(g)?;
                }
            }
        }
        let mut reader = KbzReader::open(&self.file)?;
        let mut corrupt = None;
        while let Some(next) = reader.next_block() {
            match next {
                Ok((_, _, block)) => {
                    for g in &block {
                        match shaper.as_mut() {
                            Some(shaper) => f(&shaper.shape(g)?)?,
                            None => f(g)?,
                        }
                    }
                }
                Err(e) => {
                    corrupt = Some(e);
                    break;
                }
            }
        }
        Ok(ExportReport {
            stats: ExportStats::default(),
            shaped: shaper.map(|s| s.stats),
            complete: reader.is_complete(),
            read: reader.read_counts(),
            corrupt,
        })
    }
}

/// The columns of `export --format parquet`, one row per labelled
/// position. Tag columns bear Lichess's names (and its types: ratings as
/// `int16`), so the table joins Lichess's games on `Site`; scores are the
/// side to move's, as kibitz's labels.
///
/// | column | type | what |
/// |---|---|---|
/// | game | uint64 | the game's index in its input (from 0) |
/// | Event, Site, White, Black | string | the game's tags (null when empty) |
/// | WhiteElo, BlackElo | int16 | the ratings (null when the game has none) |
/// | ply | uint16 | the position's ply (0: the start) |
/// | fen | string | the position |
/// | side_to_move | string | `w` or `b` |
/// | cp | int32 | the score in centipawns (null for a mate) |
/// | mate | int32 | mate in moves (positive: the side to move mates; null otherwise) |
/// | win_percent | double | Lichess's Win% of the score for the side to move, 0 to 100 |
/// | best | string | the best move in UCI (null when the label has none) |
/// | depth | uint8 | the depth searched (0 for `[%eval]` labels) |
/// | pv | list<string> | the principal variation in UCI, when kept (null otherwise) |
/// | Result | string | the game's result (`1-0`, `0-1`, `1/2-1/2`, `*`) |
/// | played | string | the move played from the position, in UCI (null at a game's end) |
/// | judgment | string | the move played judged as Lichess does (`Inaccuracy`, `Mistake`, `Blunder`), when the file labels every position; null for a good move or without analysis |
#[cfg(feature = "parquet")]
pub const POSITION_COLUMNS: [(&str, crate::io::parquet::write::ColumnType); 21] = {
    use crate::io::parquet::write::ColumnType as T;
    [
        ("game", T::U64),
        ("Event", T::Text),
        ("Site", T::Text),
        ("White", T::Text),
        ("Black", T::Text),
        ("WhiteElo", T::I16),
        ("BlackElo", T::I16),
        ("ply", T::U16),
        ("fen", T::Text),
        ("side_to_move", T::Text),
        ("cp", T::I32),
        ("mate", T::I32),
        ("win_percent", T::F64),
        ("best", T::Text),
        ("depth", T::U8),
        ("pv", T::TextList),
        ("Result", T::Text),
        ("played", T::Text),
        ("judgment", T::Text),
        ("limit", T::Text),
        ("tablebase", T::Text),
    ]
};

/// The positions table being written.
#[cfg(feature = "parquet")]
struct PositionTable<W: Write + Send> {
    table: crate::io::parquet::write::Table<W>,
    /// The file labels every position: judge the moves played.
    analysis: bool,
    stats: ExportStats,
}

#[cfg(feature = "parquet")]
impl<W: Write + Send> PositionTable<W> {
    fn new(out: W, analysis: bool) -> std::io::Result<PositionTable<W>> {
        let table = crate::io::parquet::write::Table::new(out, &POSITION_COLUMNS)?;
        Ok(PositionTable { table, analysis, stats: ExportStats::default() })
    }

    fn game(&mut self, record: &GameRecord) -> std::io::Result<()> {
        use crate::analysis::{Eval, INITIAL_CP, move_advice, position_eval};
        self.stats.games += 1;
        /// A labelled position, kept until the game's judgments are known.
        struct Row {
            ply: usize,
            fen: String,
            white: bool,
            label: Label,
            best: Option<String>,
            played: Option<String>,
            pv: Vec<String>,
        }
        let mut rows = Vec::new();
        // Each position's evaluation for the judgments, and the mover's
        // side and whether the move played was the best.
        let mut evals = Vec::new();
        let mut moves = Vec::new();
        let analysis = self.analysis;
        walk(record, |step: &Step<'_>| {
            let pos = step.pos;
            if analysis {
                evals.push(position_eval(step.label, pos));
                moves.push((pos.side_to_move(), step.played, step.best));
            }
            let Some(label) = step.label else { return };
            let chess960 = pos.is_chess960();
            let uci = |m: Move| move_to_uci(m, chess960);
            rows.push(Row {
                ply: step.ply,
                fen: pos.fen(),
                white: pos.side_to_move() == Color::White,
                label: *label,
                best: step.best.map(uci),
                played: step.played.map(uci),
                pv: label.pv.moves(pos).into_iter().map(uci).collect(),
            });
        })?;
        // The judgment of the move played from each ply, as the analysis
        // makes it (the first move judged from Lichess's initial +0.15).
        let judged = |ply: usize| -> Option<&'static str> {
            let (mover, played, best) = *moves.get(ply)?;
            let played = played?;
            let after = *evals.get(ply + 1)?;
            let mut before = evals[ply];
            if ply == 0 {
                before.0 = Some(Eval::Cp(INITIAL_CP));
            }
            let differs = best.is_none_or(|b| b != played);
            move_advice(before, after, differs, mover).map(|a| a.judgment.name())
        };
        let nonempty = |s: &str| (!s.is_empty()).then(|| s.to_string());
        let tags: Vec<Option<String>> =
            [0, 1, 4, 5].iter().map(|&i| nonempty(&record.tags[i])).collect();
        let elo = record.elo.map(|e| (e > 0 && e <= i16::MAX as u16).then_some(i64::from(e)));
        let result = result_text(record.result);
        let t = &mut self.table;
        for row in rows {
            let label = &row.label;
            t.int(Some(record.index as i64));
            for tag in &tags {
                t.text(tag.as_deref());
            }
            t.int(elo[0]);
            t.int(elo[1]);
            t.int(Some(row.ply.min(u16::MAX as usize) as i64));
            t.text(Some(&row.fen));
            t.text(Some(if row.white { "w" } else { "b" }));
            let (cp, mate) = match ScoreKind::from_score(i32::from(label.score)) {
                ScoreKind::Cp(cp) => (Some(i64::from(cp)), None),
                ScoreKind::Mate(n) => (None, Some(i64::from(n))),
            };
            t.int(cp);
            t.int(mate);
            let win = match (cp, mate) {
                (Some(cp), _) => crate::analysis::win_percent(cp as i32),
                (_, Some(n)) if n > 0 => 100.0,
                _ => 0.0,
            };
            t.float(Some(win));
            t.text(row.best.as_deref());
            t.int(Some(i64::from(label.depth)));
            t.text_list((!row.pv.is_empty()).then(|| row.pv.iter().map(String::as_str)));
            t.text(Some(result));
            t.text(row.played.as_deref());
            t.text(if analysis { judged(row.ply) } else { None });
            t.text(if label.flags & LABEL_SHORT_OF_LIMIT != 0 {
                Some("short")
            } else if label.flags & LABEL_PAST_LIMIT != 0 {
                Some("past")
            } else {
                None
            });
            t.text(tablebase_text(label));
            t.end_row()?;
            self.stats.written += 1;
        }
        Ok(())
    }

    fn finish(self) -> std::io::Result<()> {
        let mut out = self.table.finish()?;
        out.flush()
    }
}

/// What the tables say of a label that is theirs (`win`, `loss`, `draw`,
/// `cursed-win`, `blessed-loss`; side to move's view).
#[cfg(feature = "parquet")]
fn tablebase_text(label: &Label) -> Option<&'static str> {
    use crate::record::format::{LABEL_TABLEBASE, LABEL_TB_50_MOVE};
    if label.flags & LABEL_TABLEBASE == 0 {
        return None;
    }
    let cursed = label.flags & LABEL_TB_50_MOVE != 0;
    Some(match (label.score.signum(), cursed) {
        (1, false) => "win",
        (1, true) => "cursed-win",
        (-1, false) => "loss",
        (-1, true) => "blessed-loss",
        _ => "draw",
    })
}
