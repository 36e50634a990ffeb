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

/// Why a record cannot be walked (a corrupt or foreign file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainError(pub String);

impl std::fmt::Display for ChainError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Calls `f` for every position of the chain, start to end.
pub fn walk(record: &GameRecord, mut f: impl FnMut(&Step<'_>)) -> Result<(), ChainError> {
    let mut pos = PackedBoard::unpack(&record.start)
        .ok_or_else(|| ChainError(format!("game {}: bad start position", record.index)))?;
    let mut labels = record.labels.iter().peekable();
    for ply in 0..=record.moves.len() {
        let played = match record.moves.get(ply) {
            Some(&i) => Some(move_at(&pos, i).ok_or_else(|| {
                ChainError(format!("game {}: bad move index at ply {ply}", record.index))
            })?),
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
        return Err(ChainError(format!("game {}: labels beyond the chain", record.index)));
    }
    Ok(())
}
