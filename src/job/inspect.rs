//! Inspecting a `.kbz` file: every block read and its checksum checked,
//! every chain replayed, the games, moves and labels counted, the scores
//! binned, and whether the file is complete.

use std::{collections::BTreeMap, path::Path};

use crate::record::{
    chain::walk,
    format::{
        Header, LABEL_PAST_LIMIT, LABEL_SHORT_OF_LIMIT, LABEL_TABLEBASE, LABEL_TB_50_MOVE, is_mate,
    },
    reader::{KbzReader, RecordError},
};

/// What a file holds, as [`inspect`] found it.
#[derive(Debug, serde::Serialize)]
pub struct Inspection {
    /// The header.
    pub header: Header,
    /// The file's size in bytes.
    pub bytes: u64,
    /// Blocks read whole.
    pub blocks: u64,
    /// Games.
    pub games: u64,
    /// The first and the last game's index in the run's input.
    pub first_game: Option<u64>,
    /// See `first_game`.
    pub last_game: Option<u64>,
    /// Moves.
    pub moves: u64,
    /// Labels.
    pub labels: u64,
    /// Labels with a mate score.
    pub mate_labels: u64,
    /// Labels flagged: the engine stopped far short of its limit.
    pub short_of_limit: u64,
    /// Labels flagged: the engine went past twice its limit.
    pub past_limit: u64,
    /// Labels the endgame tables gave (flagged)...
    pub tablebase: u64,
    /// ... of which cursed wins or blessed losses.
    pub tablebase_50_move: u64,
    /// Games whose chain replays.
    pub chains_valid: u64,
    /// Labels that are not mates, by score in buckets of 100 centipawns
    /// (clamped to ±1000).
    pub histogram: BTreeMap<i32, u64>,
    /// The end marker is there and its counts match.
    pub complete: bool,
    /// Reading stopped at this corrupt block.
    #[serde(serialize_with = "corrupt_json")]
    pub corrupt: Option<RecordError>,
}

fn corrupt_json<S: serde::Serializer>(e: &Option<RecordError>, s: S) -> Result<S::Ok, S::Error> {
    use serde::Serialize;
    e.as_ref().map(|e| serde_json::json!({"offset": e.offset, "message": e.message})).serialize(s)
}

/// Reads `path` through. A file that cannot be opened is an error; a
/// corrupt block stops the reading and is reported in the result.
pub fn inspect(path: &Path) -> Result<Inspection, RecordError> {
    let mut reader = KbzReader::open(path)?;
    let mut i = Inspection {
        header: reader.header.clone(),
        bytes: reader.len(),
        blocks: 0,
        games: 0,
        first_game: None,
        last_game: None,
        moves: 0,
        labels: 0,
        mate_labels: 0,
        short_of_limit: 0,
        past_limit: 0,
        tablebase: 0,
        tablebase_50_move: 0,
        chains_valid: 0,
        histogram: BTreeMap::new(),
        complete: false,
        corrupt: None,
    };
    while let Some(next) = reader.next_block() {
        let block = match next {
            Ok((_, _, block)) => block,
            Err(e) => {
                i.corrupt = Some(e);
                break;
            }
        };
        i.blocks += 1;
        for g in &block {
            i.games += 1;
            i.first_game.get_or_insert(g.index);
            i.last_game = Some(g.index);
            i.moves += g.moves.len() as u64;
            i.labels += g.labels.len() as u64;
            for l in &g.labels {
                i.short_of_limit += u64::from(l.flags & LABEL_SHORT_OF_LIMIT != 0);
                i.past_limit += u64::from(l.flags & LABEL_PAST_LIMIT != 0);
                i.tablebase += u64::from(l.flags & LABEL_TABLEBASE != 0);
                i.tablebase_50_move += u64::from(l.flags & LABEL_TB_50_MOVE != 0);
                if is_mate(l.score) {
                    i.mate_labels += 1;
                } else {
                    let b = (i32::from(l.score).clamp(-1050, 1050) + 50).div_euclid(100) * 100;
                    *i.histogram.entry(b).or_default() += 1;
                }
            }
            if walk(g, |_| {}).is_ok() {
                i.chains_valid += 1;
            }
        }
    }
    i.complete = reader.is_complete();
    Ok(i)
}
