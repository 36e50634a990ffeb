//! Other programs' training data read as game records: Stockfish's binpack
//! (its chains become games), plain text (a record whose position follows
//! the previous one's move continues its game) and viriformat (games as
//! they are), each position labelled with the file's score and its move
//! played as best move. [`for_each_game`] reads any of them, or a `.kbz`,
//! the same way.

use std::path::Path;

use crate::{
    chess::{position::Position, types::Color},
    record::{
        format::{Alternatives, GameRecord, Label, PackedBoard, Pv, label_score, move_index},
        reader::{KbzReader, RecordError},
        viriformat,
    },
};

/// The games of a binpack file, its chains as games (numbered from
/// `first`), each entry's position labelled with its score and its move
/// played; calls `f` with each.
pub fn binpack_games(
    path: &Path,
    first: u64,
    mut f: impl FnMut(GameRecord),
) -> Result<u64, RecordError> {
    let bad = |message: String| RecordError { path: path.to_path_buf(), offset: 0, message };
    let file = std::fs::File::open(path).map_err(|e| bad(e.to_string()))?;
    // The reader is another crate's: a malformed file must not take the
    // run down with a panic.
    let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut games = 0u64;
        let mut reader = match sfbinpack::CompressedTrainingDataEntryReader::new(file) {
            Ok(r) => r,
            Err(sfbinpack::CompressedReaderError::EndOfFile) => return Ok(0),
            Err(e) => return Err(format!("{e:?}")),
        };
        let mut current: Option<(Position, GameRecord)> = None;
        while reader.has_next() {
            let entry = reader.next();
            let continues = reader.is_next_entry_continuation();
            if current.is_none() {
                let fen = entry.pos.fen().map_err(|e| format!("{e:?}"))?;
                let start = Position::from_fen(&fen)
                    .or_else(|_| Position::from_fen_960(&fen))
                    .map_err(|e| format!("{fen}: {e}"))?;
                // The result as White's: 0 Black won, 1 draw, 2 White won.
                let white =
                    if start.side_to_move() == Color::White { entry.result } else { -entry.result };
                let result = (white.signum() + 1) as u8;
                let record = GameRecord::new(
                    first + games,
                    PackedBoard::pack(&start),
                    result,
                    Default::default(),
                    Vec::new(),
                );
                current = Some((start, record));
            }
            let Some((pos, record)) = current.as_mut() else { continue };
            let m = pos
                .parse_uci(&entry.mv.as_uci())
                .ok()
                .filter(|&m| !m.is_null() && pos.is_legal(m))
                .ok_or_else(|| format!("game {}: {} is not legal", games + 1, entry.mv.as_uci()))?;
            let index = move_index(pos, m).ok_or_else(|| "a move out of range".to_string())?;
            record.labels.push(Label {
                ply: record.moves.len().min(u16::MAX as usize) as u16,
                score: entry.score,
                best: index,
                depth: 0,
                pv: Pv::default(),
                alternatives: Alternatives::default(),
                flags: 0,
            });
            record.moves.push(index);
            pos.do_move(m);
            if !continues {
                let (_, record) = current.take().expect("a game in progress");
                f(record);
                games += 1;
            }
        }
        Ok(games)
    }));
    match read {
        Ok(Ok(games)) => Ok(games),
        Ok(Err(why)) => Err(bad(why)),
        Err(_) => Err(bad("not a readable binpack file".to_string())),
    }
}

/// The games of a Stockfish plain file (numbered from `first`): each
/// record's position labelled with its score and its move played, a record
/// whose position is the one the previous record's move leads to continuing
/// that game; calls `f` with each.
pub fn plain_games(
    path: &Path,
    first: u64,
    mut f: impl FnMut(GameRecord),
) -> Result<u64, RecordError> {
    use std::io::BufRead;
    let err = |line: usize, message: String| RecordError {
        path: path.to_path_buf(),
        offset: line as u64,
        message: format!("line {line}: {message}"),
    };
    let file = std::fs::File::open(path).map_err(|e| err(0, e.to_string()))?;
    let mut games = 0u64;
    // The game being read, and its position after its last move.
    let mut current: Option<(Position, GameRecord)> = None;
    let (mut fen, mut mv, mut score, mut result) = (None, None, None, None);
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| err(n + 1, e.to_string()))?;
        let (key, value) = line.split_once(' ').unwrap_or((line.as_str(), ""));
        match key {
            "fen" => fen = Some(value.to_string()),
            "move" => mv = Some(value.trim().to_string()),
            "score" => score = value.trim().parse::<i32>().ok(),
            "result" => result = value.trim().parse::<i32>().ok(),
            "ply" => {}
            "e" => {
                let (Some(text), Some(uci), Some(score), Some(result)) =
                    (fen.take(), mv.take(), score.take(), result.take())
                else {
                    return Err(err(n + 1, "a record without fen, move, score or result".into()));
                };
                let pos = Position::from_fen(&text)
                    .or_else(|_| Position::from_fen_960(&text))
                    .map_err(|e| err(n + 1, format!("{text}: {e}")))?;
                let continues = current
                    .as_ref()
                    .is_some_and(|(after, _)| after.key() == pos.key() && after.fen() == pos.fen());
                if !continues {
                    if let Some((_, done)) = current.take() {
                        f(done);
                        games += 1;
                    }
                    let white = if pos.side_to_move() == Color::White { result } else { -result };
                    let record = GameRecord::new(
                        first + games,
                        PackedBoard::pack(&pos),
                        (white.signum() + 1) as u8,
                        Default::default(),
                        Vec::new(),
                    );
                    current = Some((pos.clone(), record));
                }
                let (after, record) = current.as_mut().expect("a game in progress");
                let m = after
                    .parse_uci(&uci)
                    .ok()
                    .filter(|&m| !m.is_null() && after.is_legal(m))
                    .ok_or_else(|| err(n + 1, format!("{uci} is not legal in {text}")))?;
                let index =
                    move_index(after, m).ok_or_else(|| err(n + 1, "a move out of range".into()))?;
                record.labels.push(Label {
                    ply: record.moves.len().min(u16::MAX as usize) as u16,
                    score: label_score(score),
                    best: index,
                    depth: 0,
                    pv: Pv::default(),
                    alternatives: Alternatives::default(),
                    flags: 0,
                });
                record.moves.push(index);
                after.do_move(m);
            }
            _ => return Err(err(n + 1, format!("not a plain record line: {line:?}"))),
        }
    }
    if let Some((_, done)) = current.take() {
        f(done);
        games += 1;
    }
    Ok(games)
}

/// The games of a viriformat file (plain, or zstd-compressed), numbered from
/// `first`; calls `f` with each.
pub fn viriformat_games(
    path: &Path,
    first: u64,
    f: impl FnMut(GameRecord),
) -> Result<u64, RecordError> {
    let bad =
        |offset: u64, message: String| RecordError { path: path.to_path_buf(), offset, message };
    let mut file = std::fs::File::open(path).map_err(|e| bad(0, format!("cannot open: {e}")))?;
    let mut magic = [0u8; 4];
    let zstd = std::io::Read::read(&mut file, &mut magic).is_ok_and(|n| n == 4)
        && magic == [0x28, 0xb5, 0x2f, 0xfd];
    let file = std::fs::File::open(path).map_err(|e| bad(0, format!("cannot open: {e}")))?;
    let read = if zstd {
        let decoder = zstd::Decoder::new(file).map_err(|e| bad(0, e.to_string()))?;
        viriformat::read_games(&mut std::io::BufReader::new(decoder), first, f)
    } else {
        viriformat::read_games(&mut std::io::BufReader::new(file), first, f)
    };
    read.map_err(|(offset, message)| {
        let what = if zstd { " of decompressed text" } else { "" };
        bad(offset, format!("{message} (byte {offset}{what})"))
    })
}

/// The positions of a file of Lichess's evaluations (see
/// [`crate::record::lichess_evals`]).
#[cfg(feature = "parquet")]
fn lichess_eval_games(
    path: &Path,
    first: u64,
    f: impl FnMut(GameRecord),
) -> Result<u64, RecordError> {
    crate::record::lichess_evals::eval_games(path, first, f)
}

/// Without Parquet support, a file of Lichess's evaluations is refused.
#[cfg(not(feature = "parquet"))]
fn lichess_eval_games(
    path: &Path,
    _first: u64,
    _f: impl FnMut(GameRecord),
) -> Result<u64, RecordError> {
    Err(RecordError {
        path: path.to_path_buf(),
        offset: 0,
        message: "a Parquet file, and this kibitz was built without the `parquet` feature".into(),
    })
}

/// A file of labelled positions in another program's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Foreign {
    /// Stockfish's binpack (`.binpack`).
    Binpack,
    /// Stockfish's plain text (its first bytes are `fen `).
    Plain,
    /// viriformat (`.vf`, `.viri`, `.viriformat`; plain or zstd).
    Viriformat,
    /// Lichess's evaluations (`Lichess/chess-position-evaluations`): a
    /// Parquet file with `fen` and `line` columns. Its records have no
    /// result.
    LichessEvals,
}

impl Foreign {
    /// What `path` is, by its extension and first bytes; `None` for
    /// anything else (a `.kbz`, PGN, EPD).
    pub fn detect(path: &Path) -> Option<Foreign> {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let stem_ext = path
            .file_stem()
            .and_then(|s| Path::new(s).extension())
            .and_then(|e| e.to_str())
            .unwrap_or("");
        if ext == "binpack" {
            return Some(Foreign::Binpack);
        }
        if crate::io::source::is_parquet_file(path) {
            return crate::io::parquet_evals(path).then_some(Foreign::LichessEvals);
        }
        if ["vf", "viri", "viriformat"].contains(&ext)
            || (ext == "zst" && ["vf", "viri", "viriformat"].contains(&stem_ext))
        {
            return Some(Foreign::Viriformat);
        }
        let mut head = [0u8; 4];
        (std::fs::File::open(path)
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
            .is_ok()
            && &head == b"fen ")
            .then_some(Foreign::Plain)
    }

    /// The format's name in messages and headers.
    pub fn name(self) -> &'static str {
        match self {
            Foreign::Binpack => "binpack",
            Foreign::Plain => "plain",
            Foreign::Viriformat => "viriformat",
            Foreign::LichessEvals => "Lichess evaluations",
        }
    }

    /// The games of `path` in this format, numbered from `first`.
    pub fn games(
        self,
        path: &Path,
        first: u64,
        f: impl FnMut(GameRecord),
    ) -> Result<u64, RecordError> {
        match self {
            Foreign::Binpack => binpack_games(path, first, f),
            Foreign::Plain => plain_games(path, first, f),
            Foreign::Viriformat => viriformat_games(path, first, f),
            Foreign::LichessEvals => lichess_eval_games(path, first, f),
        }
    }
}

/// Every game of `path`, a `.kbz` or a file [`Foreign::detect`] knows, in
/// order, numbered as the file has them (a `.kbz`) or from 0; `f` may stop
/// the reading with an error of its own.
pub fn for_each_game<E: From<RecordError>>(
    path: &Path,
    mut f: impl FnMut(GameRecord) -> Result<(), E>,
) -> Result<(), E> {
    match Foreign::detect(path) {
        Some(kind) => {
            let mut failed = None;
            kind.games(path, 0, |g| {
                if failed.is_none()
                    && let Err(e) = f(g)
                {
                    failed = Some(e);
                }
            })?;
            failed.map_or(Ok(()), Err)
        }
        None => {
            let mut reader = KbzReader::open(path)?;
            while let Some(block) = reader.next_block() {
                for g in block?.2 {
                    f(g)?;
                }
            }
            Ok(())
        }
    }
}
