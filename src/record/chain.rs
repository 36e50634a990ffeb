//! Walking a game record: the position at every ply, the move played, and
//! the label if the ply has one.

use crate::{
    chess::{mv::Move, position::Position},
    record::format::{GameRecord, Label, PackedBoard, move_at},
};

/// One position of a chain.
pub struct Step<'a> {
    /// The position.
    pub pos: &'a Position,
    /// Its ply in the chain (0 = start).
    pub ply: usize,
    /// The move played from it, if any.
    pub played: Option<Move>,
    /// Its label, if any.
    pub label: Option<&'a Label>,
    /// The label's best move, decoded.
    pub best: Option<Move>,
}

/// Why a record cannot be walked (a corrupt or foreign file); each names
/// the game by its index in the input (from 0).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChainError {
    /// The start position does not unpack.
    #[error("game {game}: bad start position")]
    BadStart {
        /// The game's index.
        game: u64,
    },
    /// A move index names no legal move.
    #[error("game {game}: bad move index at ply {ply}")]
    BadMove {
        /// The game's index.
        game: u64,
        /// The ply of the move.
        ply: usize,
    },
    /// Labels on plies past the last move.
    #[error("game {game}: labels beyond the chain")]
    LabelsBeyondChain {
        /// The game's index.
        game: u64,
    },
}

impl From<ChainError> for std::io::Error {
    fn from(e: ChainError) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::InvalidData, e)
    }
}

/// Calls `f` for every position of the chain, start to end.
pub fn walk(record: &GameRecord, mut f: impl FnMut(&Step<'_>)) -> Result<(), ChainError> {
    let mut pos =
        PackedBoard::unpack(&record.start).ok_or(ChainError::BadStart { game: record.index })?;
    let mut labels = record.labels.iter().peekable();
    for ply in 0..=record.moves.len() {
        let played = match record.moves.get(ply) {
            Some(&i) => {
                Some(move_at(&pos, i).ok_or(ChainError::BadMove { game: record.index, ply })?)
            }
            None => None,
        };
        let label = labels.next_if(|l| usize::from(l.ply) == ply);
        let best = label.and_then(|l| if l.best == 255 { None } else { move_at(&pos, l.best) });
        f(&Step { pos: &pos, ply, played, label, best });
        if let Some(m) = played {
            pos.do_move(m);
        }
    }
    if labels.next().is_some() {
        return Err(ChainError::LabelsBeyondChain { game: record.index });
    }
    Ok(())
}
