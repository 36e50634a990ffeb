//! Statistics of a data set of labelled positions, whatever file holds
//! them (`.kbz`, Stockfish plain or binpack): counts, and histograms of
//! score, piece count, ply, game phase, result, result against the score's
//! sign, side to move and king squares. Every figure is from the side to
//! move's point of view, as trainers read the data.

use std::{
    fs::File,
    io::{BufRead, BufReader},
    path::{Path, PathBuf},
};

use crate::{
    analysis::{Phase, position_phase},
    chess::{position::Position, types::Color},
    record::{
        chain::{ChainError, walk},
        import::for_each_game,
        reader::RecordError,
    },
    score::ScoreKind,
};

/// Scores are counted in bins of this many centipawns...
pub const SCORE_BIN: i32 = 50;
/// ... from minus this to this (beyond: the end bins of `score_beyond`).
pub const SCORE_RANGE: i32 = 1000;
/// Plies are counted in bins of this many...
pub const PLY_BIN: u32 = 10;
/// ... up to this (beyond: `ply_beyond`).
pub const PLY_RANGE: u32 = 300;

/// A game result for the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The side to move lost.
    Loss,
    /// Drawn.
    Draw,
    /// The side to move won.
    Win,
    /// Not known (`*`).
    Unknown,
}

/// The statistics. Arrays are indexed as their field says.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct DataStats {
    /// Labelled positions.
    pub positions: u64,
    /// Games: exact from a `.kbz`; from binpack, its chains (a game's
    /// labelled positions split wherever positions were left out); from
    /// plain, a new game wherever the ply does not grow.
    pub games: u64,
    /// Centipawn scores in bins of [`SCORE_BIN`] from -[`SCORE_RANGE`]:
    /// bin `i` holds `-1000 + 50 i <= score < -1000 + 50 (i + 1)`.
    pub score: Vec<u64>,
    /// Centipawn scores below -[`SCORE_RANGE`] and at or above it.
    pub score_beyond: [u64; 2],
    /// Mate scores: the side to move mated, the side to move mating.
    pub mates: [u64; 2],
    /// Pieces on the board (kings included), 0 to 32.
    pub pieces: Vec<u64>,
    /// Game plies in bins of [`PLY_BIN`] from 0.
    pub ply: Vec<u64>,
    /// Plies at or beyond [`PLY_RANGE`].
    pub ply_beyond: u64,
    /// Opening, middlegame, endgame, as Lichess's Divider tells one
    /// position.
    pub phase: [u64; 3],
    /// Loss, draw, win for the side to move, unknown.
    pub result: [u64; 4],
    /// Result (loss, draw, win) by the score's sign (negative, zero,
    /// positive; a mate by its side), games with a known result only.
    pub result_by_sign: [[u64; 3]; 3],
    /// White to move, Black to move.
    pub side_to_move: [u64; 2],
    /// The White king's square (a1 = 0 ... h8 = 63), then the Black king's.
    pub king_squares: [Vec<u64>; 2],
}

impl Default for DataStats {
    fn default() -> DataStats {
        DataStats {
            positions: 0,
            games: 0,
            score: vec![0; (2 * SCORE_RANGE / SCORE_BIN) as usize],
            score_beyond: [0; 2],
            mates: [0; 2],
            pieces: vec![0; 33],
            ply: vec![0; (PLY_RANGE / PLY_BIN) as usize],
            ply_beyond: 0,
            phase: [0; 3],
            result: [0; 4],
            result_by_sign: [[0; 3]; 3],
            side_to_move: [0; 2],
            king_squares: [vec![0; 64], vec![0; 64]],
        }
    }
}

impl DataStats {
    /// Counts one labelled position: its score (side to move's view, a
    /// search score: mates beyond `MATE_BOUND`), the game's ply and result.
    pub fn add(&mut self, pos: &Position, score: i32, ply: u32, outcome: Outcome) {
        self.positions += 1;
        let sign = match ScoreKind::from_score(score) {
            ScoreKind::Cp(cp) => {
                if cp < -SCORE_RANGE {
                    self.score_beyond[0] += 1;
                } else if cp >= SCORE_RANGE {
                    self.score_beyond[1] += 1;
                } else {
                    self.score[((cp + SCORE_RANGE) / SCORE_BIN) as usize] += 1;
                }
                cp.signum()
            }
            ScoreKind::Mate(n) => {
                self.mates[usize::from(n > 0)] += 1;
                if n > 0 { 1 } else { -1 }
            }
        };
        self.pieces[(pos.occupied().count() as usize).min(32)] += 1;
        if ply >= PLY_RANGE {
            self.ply_beyond += 1;
        } else {
            self.ply[(ply / PLY_BIN) as usize] += 1;
        }
        self.phase[match position_phase(pos) {
            Phase::Opening => 0,
            Phase::Middlegame => 1,
            Phase::Endgame => 2,
        }] += 1;
        let result = match outcome {
            Outcome::Loss => Some(0),
            Outcome::Draw => Some(1),
            Outcome::Win => Some(2),
            Outcome::Unknown => None,
        };
        self.result[result.unwrap_or(3)] += 1;
        if let Some(r) = result {
            self.result_by_sign[(sign + 1) as usize][r] += 1;
        }
        self.side_to_move[usize::from(pos.side_to_move() == Color::Black)] += 1;
        for (i, color) in [Color::White, Color::Black].into_iter().enumerate() {
            self.king_squares[i][pos.king(color).to_usize()] += 1;
        }
    }

    /// Adds another part's counts.
    pub fn merge(&mut self, o: &DataStats) {
        let add = |a: &mut [u64], b: &[u64]| a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
        self.positions += o.positions;
        self.games += o.games;
        add(&mut self.score, &o.score);
        add(&mut self.score_beyond, &o.score_beyond);
        add(&mut self.mates, &o.mates);
        add(&mut self.pieces, &o.pieces);
        add(&mut self.ply, &o.ply);
        self.ply_beyond += o.ply_beyond;
        add(&mut self.phase, &o.phase);
        add(&mut self.result, &o.result);
        for (a, b) in self.result_by_sign.iter_mut().zip(&o.result_by_sign) {
            add(a, b);
        }
        add(&mut self.side_to_move, &o.side_to_move);
        for (a, b) in self.king_squares.iter_mut().zip(&o.king_squares) {
            add(a, b);
        }
    }
}

/// Why a data set's statistics could not be read whole.
#[derive(Debug, thiserror::Error)]
pub enum StatsError {
    /// A `.kbz` cannot be read.
    #[error(transparent)]
    Kbz(#[from] RecordError),
    /// A game of a `.kbz` does not replay.
    #[error(transparent)]
    Chain(#[from] ChainError),
    /// A file cannot be opened or read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line or an entry that is not what its format says.
    #[error("{}: {what}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// Where and what.
        what: String,
    },
}

/// The statistics of `files` (`.kbz`, Stockfish `.binpack` or plain,
/// viriformat; told apart by their first bytes and, for binpack and
/// viriformat, their extension), summed in the order given.
pub fn data_stats(files: &[PathBuf]) -> Result<DataStats, StatsError> {
    let mut stats = DataStats::default();
    for path in files {
        let io = |source| StatsError::Io { path: path.clone(), source };
        let mut head = [0u8; 8];
        let n = File::open(path)
            .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
            .map_err(io)?;
        if path.extension().is_some_and(|e| e == "binpack") {
            binpack(path, &mut stats)?;
        } else if head[..n].starts_with(b"fen ") {
            plain(path, &mut stats)?;
        } else {
            // A .kbz, or viriformat: games as records.
            records(path, &mut stats)?;
        }
    }
    Ok(stats)
}

fn outcome(result: i32) -> Outcome {
    match result.signum() {
        1 => Outcome::Win,
        -1 => Outcome::Loss,
        _ => Outcome::Draw,
    }
}

fn records(path: &Path, stats: &mut DataStats) -> Result<(), StatsError> {
    for_each_game(path, |g| -> Result<(), StatsError> {
        stats.games += 1;
        walk(&g, |step| {
            let Some(label) = step.label else { return };
            let pos = step.pos;
            let white = match g.result {
                2 => Some(1),
                1 => Some(0),
                0 => Some(-1),
                _ => None,
            };
            let result = match white {
                Some(w) => outcome(if pos.side_to_move() == Color::White { w } else { -w }),
                None => Outcome::Unknown,
            };
            stats.add(pos, i32::from(label.score), pos.game_ply(), result);
        })?;
        Ok(())
    })
}

fn parse_fen(fen: &str) -> Option<Position> {
    Position::from_fen(fen).or_else(|_| Position::from_fen_960(fen)).ok()
}

fn plain(path: &Path, stats: &mut DataStats) -> Result<(), StatsError> {
    let format = |what: String| StatsError::Format { path: path.to_path_buf(), what };
    let file =
        File::open(path).map_err(|source| StatsError::Io { path: path.to_path_buf(), source })?;
    let (mut fen, mut score, mut ply, mut result) = (None, None, None, None);
    let mut last_ply: Option<u32> = None;
    for (n, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|source| StatsError::Io { path: path.to_path_buf(), source })?;
        let bad = || format(format!("line {}: {line:?}", n + 1));
        let (key, value) = line.split_once(' ').unwrap_or((line.as_str(), ""));
        match key {
            "fen" => fen = Some(parse_fen(value).ok_or_else(bad)?),
            "score" => score = Some(value.trim().parse::<i32>().map_err(|_| bad())?),
            "ply" => ply = Some(value.trim().parse::<u32>().map_err(|_| bad())?),
            "result" => result = Some(value.trim().parse::<i32>().map_err(|_| bad())?),
            "move" => {}
            "e" => {
                let (Some(pos), Some(score), Some(ply), Some(result)) =
                    (fen.take(), score.take(), ply.take(), result.take())
                else {
                    return Err(format(format!(
                        "line {}: a record without fen, score, ply or result",
                        n + 1
                    )));
                };
                if last_ply.is_none_or(|last| ply <= last) {
                    stats.games += 1;
                }
                last_ply = Some(ply);
                stats.add(&pos, score, ply, outcome(result));
            }
            _ => return Err(bad()),
        }
    }
    Ok(())
}

fn binpack(path: &Path, stats: &mut DataStats) -> Result<(), StatsError> {
    let format = |what: String| StatsError::Format { path: path.to_path_buf(), what };
    let file =
        File::open(path).map_err(|source| StatsError::Io { path: path.to_path_buf(), source })?;
    // The reader is another crate's: a malformed file must not take the
    // run down with a panic.
    let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut part = DataStats::default();
        let mut reader = match sfbinpack::CompressedTrainingDataEntryReader::new(file) {
            Ok(r) => r,
            Err(sfbinpack::CompressedReaderError::EndOfFile) => return Ok(part),
            Err(e) => return Err(format(format!("{e:?}"))),
        };
        let mut continues = false;
        while reader.has_next() {
            let entry = reader.next();
            if !continues {
                part.games += 1;
            }
            continues = reader.is_next_entry_continuation();
            let fen = entry.pos.fen().map_err(|e| format(format!("{e:?}")))?;
            let pos = parse_fen(&fen).ok_or_else(|| format(format!("bad position {fen}")))?;
            let (score, ply) = (i32::from(entry.score), u32::from(entry.ply));
            part.add(&pos, score, ply, outcome(i32::from(entry.result)));
        }
        Ok(part)
    }));
    match read {
        Ok(part) => {
            stats.merge(&part?);
            Ok(())
        }
        Err(_) => Err(format("not a readable binpack file".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::mate_in;

    #[test]
    fn each_position_lands_in_one_bin_of_each_histogram() {
        let mut s = DataStats::default();
        let start = Position::startpos();
        s.add(&start, 15, 0, Outcome::Win);
        s.add(&start, -1000, 9, Outcome::Loss);
        s.add(&start, 1000, 10, Outcome::Draw);
        s.add(&start, mate_in(3), 400, Outcome::Unknown);
        assert_eq!(s.positions, 4);
        assert_eq!(s.score[20], 1); // 0 <= 15 < 50
        assert_eq!(s.score[0], 1); // -1000
        assert_eq!(s.score_beyond, [0, 1]); // 1000 is beyond
        assert_eq!(s.mates, [0, 1]);
        assert_eq!(s.pieces[32], 4);
        assert_eq!((s.ply[0], s.ply[1], s.ply_beyond), (2, 1, 1));
        assert_eq!(s.phase, [4, 0, 0]);
        assert_eq!(s.result, [1, 1, 1, 1]);
        assert_eq!(s.result_by_sign, [[1, 0, 0], [0, 0, 0], [0, 1, 1]]);
        assert_eq!(s.side_to_move, [4, 0]);
        assert_eq!((s.king_squares[0][4], s.king_squares[1][60]), (4, 4));
        let mut twice = s.clone();
        twice.merge(&s);
        assert_eq!(twice.positions, 8);
        assert_eq!(twice.king_squares[1][60], 8);
    }
}
