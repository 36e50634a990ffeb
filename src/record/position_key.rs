//! When two labels are of the same position, for every command that keeps
//! one label per position (annotate's and merge's `dedup`, the dedup job):
//! their Polyglot keys are equal and so is the state that changes what a
//! search finds there:
//!
//! * the 50-move counter when it is 70 or more (a search can then reach the
//!   100-ply limit; below that it counts as 0);
//! * how often the position occurred earlier in its game within that
//!   counter's reach, capped at 2 (a repetition is scored as a draw).

use std::collections::HashSet;

use crate::record::{
    chain::{ChainError, walk},
    format::GameRecord,
};

/// The dedup key of each labelled position of a game, in label order.
pub fn label_keys(record: &GameRecord) -> Result<Vec<u64>, ChainError> {
    let mut keys = Vec::with_capacity(record.labels.len());
    let mut history: Vec<u64> = Vec::with_capacity(record.moves.len() + 1);
    walk(record, |step| {
        let pos = step.pos;
        let key = pos.key();
        if step.label.is_some() {
            let rule50 = pos.rule50();
            let reach = (rule50 as usize).min(history.len());
            // Earlier occurrences: same side to move, every second ply back.
            let earlier = history[history.len() - reach..]
                .iter()
                .rev()
                .skip(1)
                .step_by(2)
                .filter(|&&k| k == key)
                .count()
                .min(2) as u64;
            let counter = if rule50 >= 70 { u64::from(rule50) } else { 0 };
            let state = counter << 2 | earlier;
            // Mixed so that equal keys with different states part ways.
            keys.push(key ^ state.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17));
        }
        history.push(key);
    })?;
    Ok(keys)
}

/// The positions labelled so far, to keep the first label of each.
#[derive(Debug, Default)]
pub struct FirstSeen {
    seen: HashSet<u64>,
}

impl FirstSeen {
    /// Drops the labels of `record` whose position was labelled before
    /// (earlier in this game or in an earlier one) and remembers the rest.
    /// Returns the number dropped.
    pub fn keep_new(&mut self, record: &mut GameRecord) -> Result<u64, ChainError> {
        let keys = label_keys(record)?;
        let before = record.labels.len();
        let mut keys = keys.into_iter();
        record.labels.retain(|_| keys.next().is_some_and(|k| self.seen.insert(k)));
        Ok((before - record.labels.len()) as u64)
    }

    /// Remembers the labelled positions of `record` (a game already
    /// written, when a run resumes).
    pub fn remember(&mut self, record: &GameRecord) -> Result<(), ChainError> {
        self.seen.extend(label_keys(record)?);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        chess::{position::Position, san::San},
        record::format::{Label, PackedBoard, move_index},
    };

    fn record(sans: &[&str]) -> GameRecord {
        let mut pos = Position::startpos();
        let start = PackedBoard::pack(&pos);
        let mut moves = Vec::new();
        for san in sans {
            let m = San::parse(san.as_bytes()).unwrap().to_move(&pos).unwrap();
            moves.push(move_index(&pos, m).unwrap());
            pos.do_move(m);
        }
        let mut g = GameRecord::new(0, start, 3, Default::default(), moves);
        let labels: Vec<Label> = (0..=sans.len())
            .map(|ply| Label {
                ply: ply as u16,
                score: 0,
                best: 255,
                depth: 1,
                pv: Default::default(),
                alternatives: Default::default(),
                flags: 0,
            })
            .collect();
        g.set_labels(&labels);
        g
    }

    /// The start position comes back after four knight moves: the second
    /// time it is a repetition (another state), the third time as well,
    /// but then the same state as the second: dropped.
    #[test]
    fn a_repetition_is_another_position_once() {
        let knights = ["Nf3", "Nf6", "Ng1", "Ng8"];
        let moves: Vec<&str> = knights.iter().chain(&knights).chain(&knights).copied().collect();
        let mut g = record(&moves);
        let mut seen = FirstSeen::default();
        let dropped = seen.keep_new(&mut g).unwrap();
        // 13 positions: 4 distinct, each met at 0, 1 and 2+ earlier
        // occurrences except the last (the start's 4th time, capped at 2).
        assert_eq!(dropped, 1);
        let again = seen.keep_new(&mut record(&moves)).unwrap();
        assert_eq!(again, 13, "a second copy of the game adds nothing");
    }
}
