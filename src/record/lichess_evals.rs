//! `Lichess/chess-position-evaluations`: positions evaluated by Stockfish
//! on Lichess, read as labelled positions.
//!
//! The dataset has one row per principal variation: `fen` (board, side,
//! castling, en passant; no move counters), `line` (the variation in UCI,
//! castling as the king taking its rook), `depth`, `knodes`, `cp` (null for
//! a mate) and `mate` (moves, not plies), scores from White's point of
//! view. A position's rows stand together; they may hold several
//! evaluations (of different depths), each of one or more lines.
//!
//! Each position becomes a record of one position and one label: the
//! deepest evaluation's first line (the most nodes among equal depths),
//! its score turned to the side to move's (a mate in `n` moves to
//! `±(32000 - plies)`), its first move as the best move and the line as
//! the principal variation, its depth kept; the same evaluation's other
//! lines are the label's alternatives, as a multi-PV search's. There is
//! no game, so no result: the records' result is unknown.
//!
//! A row that cannot be read (a FEN that is not a position, a line whose
//! first move is not legal) is skipped, counted and reported by its row
//! group and row; a position's rows that straddle row groups are read as
//! one position.

use std::path::Path;

use parquet::file::reader::FileReader;

use crate::{
    chess::{position::Position, types::Color},
    io::{
        parquet::{UnitReader, root_columns, row_group_starts},
        place,
        table::Kind,
    },
    record::{
        format::{Alternatives, GameRecord, Label, MAX_PV, PackedBoard, Pv, move_index},
        reader::RecordError,
    },
    score::MATE,
};

/// The columns a file of evaluations must have.
pub const COLUMNS: [&str; 6] = ["fen", "line", "depth", "knodes", "cp", "mate"];

/// Rows skipped and reported on standard error before only counting them.
const SKIPS_SHOWN: u64 = 10;

/// One row, as read.
#[derive(Clone, Debug)]
struct Row {
    fen: String,
    line: String,
    depth: i64,
    knodes: i64,
    cp: Option<i64>,
    mate: Option<i64>,
    /// Row in the file.
    at: u64,
}

/// Reads the positions of a file of evaluations, numbered from `first`;
/// calls `f` with each. Returns how many were read.
pub fn eval_games(
    path: &Path,
    first: u64,
    mut f: impl FnMut(GameRecord),
) -> Result<u64, RecordError> {
    let name = path.display().to_string();
    let bad = |message: String| RecordError { path: path.to_path_buf(), offset: 0, message };
    let file = std::fs::File::open(path).map_err(|e| bad(format!("cannot open: {e}")))?;
    let file = crate::io::parquet::open(file).map_err(bad)?;
    let roots = root_columns(file.metadata());
    let mut read = Vec::new();
    for (column, kind) in COLUMNS.iter().zip([
        Kind::Text,
        Kind::Text,
        Kind::Integer,
        Kind::Integer,
        Kind::Integer,
        Kind::Integer,
    ]) {
        let i = roots.iter().position(|r| r.name == *column).ok_or_else(|| {
            let names: Vec<&str> = roots.iter().map(|r| r.name.as_str()).collect();
            bad(format!(
                "no column `{column}`: a file of Lichess's evaluations has {} (the file's \
                 columns: {})",
                COLUMNS.join(", "),
                names.join(", ")
            ))
        })?;
        read.push(roots[i].read_as(i, kind).map_err(bad)?);
    }
    let starts = row_group_starts(file.metadata());
    place::register_row_groups(&name, starts.clone());
    let mut reader = EvalReader { name, first, count: 0, skipped: 0, group: Vec::new() };
    for (g, &start) in starts.iter().enumerate() {
        let decoded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut rows = UnitReader::new(&file, g, &read, roots.len(), 0)?;
            let mut at = start;
            loop {
                let n = rows.next_batch(4096)?;
                if n == 0 {
                    return Ok::<(), parquet::errors::ParquetError>(());
                }
                let columns = rows.columns();
                let col = |c: usize| columns[read[c].0].as_ref();
                let (Some(fen), Some(line), Some(depth), Some(knodes), Some(cp), Some(mate)) =
                    (col(0), col(1), col(2), col(3), col(4), col(5))
                else {
                    return Err(parquet::errors::ParquetError::General(
                        "a batch lacks a column".into(),
                    ));
                };
                for i in 0..n {
                    let row = Row {
                        fen: fen.text(i).unwrap_or_default(),
                        line: line.text(i).unwrap_or_default(),
                        depth: depth.integer(i).unwrap_or(0),
                        knodes: knodes.integer(i).unwrap_or(0),
                        cp: cp.integer(i),
                        mate: mate.integer(i),
                        at,
                    };
                    reader.row(row, &mut f);
                    at += 1;
                }
            }
        }));
        match decoded {
            Ok(Ok(())) => {}
            Ok(Err(e)) => reader.skip(start, &format!("row group {g} cannot be read: {e}")),
            Err(_) => reader.skip(start, &format!("row group {g}: the Parquet decoder failed")),
        }
    }
    reader.flush(&mut f);
    if reader.skipped > SKIPS_SHOWN {
        eprintln!(
            "kibitz: {}: {} rows skipped in all ({} shown)",
            reader.name, reader.skipped, SKIPS_SHOWN
        );
    }
    Ok(reader.count)
}

struct EvalReader {
    name: String,
    first: u64,
    count: u64,
    skipped: u64,
    /// The rows of the position in hand.
    group: Vec<Row>,
}

impl EvalReader {
    fn skip(&mut self, at: u64, why: &str) {
        self.skipped += 1;
        if self.skipped <= SKIPS_SHOWN {
            eprintln!("kibitz: {}: {}: {why}; skipped", self.name, place::describe(&self.name, at));
        }
    }

    fn row(&mut self, row: Row, f: &mut impl FnMut(GameRecord)) {
        if self.group.first().is_some_and(|g| g.fen != row.fen) {
            self.flush(f);
        }
        self.group.push(row);
    }

    /// The position in hand, as a record.
    fn flush(&mut self, f: &mut impl FnMut(GameRecord)) {
        let rows = std::mem::take(&mut self.group);
        let Some(head) = rows.first() else { return };
        let pos = match Position::from_fen(&head.fen) {
            Ok(p) => p,
            Err(e) => {
                let at = head.at;
                self.skip(at, &format!("fen {:?}: {e}", head.fen));
                return;
            }
        };
        // The deepest evaluation: its lines are the run of rows with its
        // depth and nodes.
        let key = |r: &Row| (r.depth, r.knodes);
        let Some(best_key) = rows.iter().map(key).max() else { return };
        let start = rows.iter().position(|r| key(r) == best_key).unwrap_or(0);
        let run: Vec<&Row> = rows[start..].iter().take_while(|r| key(r) == best_key).collect();
        let mut lines: Vec<(i16, Vec<u8>, u64)> = Vec::new();
        for r in run {
            let Some(score) = stm_score(r, pos.side_to_move()) else {
                self.skip(r.at, "neither cp nor mate");
                continue;
            };
            match line_indices(&pos, &r.line) {
                Some(moves) if !moves.is_empty() => lines.push((score, moves, r.at)),
                _ => {
                    self.skip(r.at, &format!("line {:?} does not start with a legal move", r.line))
                }
            }
        }
        // The file's order: an evaluation's lines are its multi-PV lines,
        // the first the one the engine chose.
        let Some((score, best_line, _)) = lines.first() else { return };
        let alternatives: Vec<(u8, i16)> = lines[1..].iter().map(|(s, m, _)| (m[0], *s)).collect();
        let label = Label {
            ply: 0,
            score: *score,
            best: best_line[0],
            depth: best_key.0.clamp(0, 255) as u8,
            pv: Pv::new(best_line),
            alternatives: Alternatives::new(&alternatives),
            flags: 0,
        };
        let mut record = GameRecord::new(
            self.first + self.count,
            PackedBoard::pack(&pos),
            3,
            Default::default(),
            Vec::new(),
        );
        record.labels.push(label);
        f(record);
        self.count += 1;
    }
}

/// A row's score for the side to move `side`: centipawns, or a mate in `n`
/// moves as `±(32000 - plies)`.
fn stm_score(r: &Row, side: Color) -> Option<i16> {
    let sign = if side == Color::White { 1 } else { -1 };
    let score = match (r.mate, r.cp) {
        (Some(m), _) if m != 0 => {
            let m = (m * sign).clamp(-500, 500);
            if m > 0 { MATE - (2 * m as i32 - 1) } else { -MATE + 2 * (-m) as i32 }
        }
        (_, Some(cp)) => (cp * sign).clamp(-20_000, 20_000) as i32,
        _ => return None,
    };
    Some(score as i16)
}

/// A line's moves as indices among each position's sorted legal moves,
/// up to the first that is not legal (or [`MAX_PV`]).
fn line_indices(pos: &Position, line: &str) -> Option<Vec<u8>> {
    let mut p = pos.clone();
    let mut out = Vec::new();
    for uci in line.split_ascii_whitespace().take(MAX_PV) {
        let Ok(m) = p.parse_uci(uci) else { break };
        if m.is_null() || !p.is_legal(m) {
            break;
        }
        out.push(move_index(&p, m)?);
        p.do_move(m);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cp: Option<i64>, mate: Option<i64>) -> Row {
        Row { fen: String::new(), line: String::new(), depth: 0, knodes: 0, cp, mate, at: 0 }
    }

    #[test]
    fn scores_turn_to_the_side_to_move() {
        assert_eq!(stm_score(&row(Some(35), None), Color::White), Some(35));
        assert_eq!(stm_score(&row(Some(35), None), Color::Black), Some(-35));
        // White mates in 2 moves: 3 plies with White to move, mated in 2
        // (4 plies) for Black to move.
        assert_eq!(stm_score(&row(None, Some(2)), Color::White), Some(32_000 - 3));
        assert_eq!(stm_score(&row(None, Some(2)), Color::Black), Some(-32_000 + 4));
        assert_eq!(stm_score(&row(None, Some(-1)), Color::Black), Some(32_000 - 1));
        assert_eq!(stm_score(&row(None, None), Color::White), None);
    }

    #[test]
    fn lines_castle_as_the_king_takes_its_rook() {
        let pos =
            Position::from_fen("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq -").expect("a FEN");
        let moves = line_indices(&pos, "e1h1 e8a8").expect("moves");
        assert_eq!(moves.len(), 2);
        let standard = line_indices(&pos, "e1g1 e8c8").expect("moves");
        assert_eq!(moves, standard);
    }
}
