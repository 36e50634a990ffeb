//! The score vocabulary shared by the search, the records and the exports:
//! centipawns from the side to move's point of view, and mate scores
//! `±(MATE - plies to mate)`, as Stockfish's `Value` has them.

/// The score of a mate now (mated at ply 0).
pub const MATE: i32 = 32_000;
/// Scores beyond this are mate scores.
pub const MATE_BOUND: i32 = MATE - 1_000;
/// A win the endgame tables know, at the root: below every mate, above
/// every evaluation (Stockfish's `VALUE_TB_WIN`). A win found `ply` plies
/// from the root scores `TB_WIN - ply`.
pub const TB_WIN: i32 = MATE_BOUND - 1;
/// Scores at or beyond this are known wins: the tables' or mates. The
/// evaluations stay within it.
pub const WIN_BOUND: i32 = TB_WIN - MAX_PLY as i32;
/// More than any score.
pub const INFINITE: i32 = 32_001;
/// The deepest ply searched.
pub const MAX_PLY: usize = 128;

/// The score of a tablebase win `ply` plies from the root.
pub const fn tb_win_in(ply: usize) -> i32 {
    TB_WIN - ply as i32
}

/// The score of a tablebase loss `ply` plies from the root.
pub const fn tb_loss_in(ply: usize) -> i32 {
    -TB_WIN + ply as i32
}

/// The score of mating in `moves` moves (from the side to move).
pub const fn mate_in(moves: i32) -> i32 {
    MATE - (2 * moves - 1)
}

/// The score of being mated in `moves` moves.
pub const fn mated_in(moves: i32) -> i32 {
    -MATE + 2 * moves
}

/// A score for people: centipawns, or mate in N moves (negative: mated).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, serde::Serialize)]
pub enum ScoreKind {
    /// Centipawns from the side to move's point of view.
    Cp(i32),
    /// Mate in this many moves; negative when the side to move is mated.
    Mate(i32),
}

impl ScoreKind {
    /// Classifies a search score.
    pub fn from_score(score: i32) -> ScoreKind {
        if score >= MATE_BOUND {
            ScoreKind::Mate((MATE - score + 1) / 2)
        } else if score <= -MATE_BOUND {
            ScoreKind::Mate(-(MATE + score) / 2)
        } else {
            ScoreKind::Cp(score)
        }
    }

    /// As UCI writes it: `cp 35` or `mate -3`.
    pub fn uci(self) -> String {
        match self {
            ScoreKind::Cp(cp) => format!("cp {cp}"),
            ScoreKind::Mate(m) => format!("mate {m}"),
        }
    }
}
