//! One game analysed: every move with its evaluations, judgment, accuracy
//! and loss, the phases, and each side's totals, overall and per phase.

use crate::{
    analysis::{
        Advice, Division, Eval, INITIAL_CP, Judgment, Phase, centipawn_losses, combined_accuracy,
        divide, judge, mean_loss, weighted_accuracies,
    },
    chess::{mv::Move, position::Position, types::Color},
    record::{
        chain::{ChainError, walk},
        format::{GameRecord, LABEL_TABLEBASE, LABEL_TB_50_MOVE, Label},
    },
    syzygy::TbWdl,
};

/// One move of an analysed game.
#[derive(Clone, Debug, serde::Serialize)]
pub struct MoveAnalysis {
    /// The ply of the position after the move (1 for the first move).
    pub ply: usize,
    /// The move's number, as PGN counts them.
    pub number: u32,
    /// The side that moved.
    #[serde(serialize_with = "color_name")]
    pub mover: Color,
    /// The move in SAN (with `+` or `#`).
    pub san: String,
    /// The evaluation before the move (White's view): the previous
    /// position's label, or [`INITIAL_CP`] before the first move, as
    /// Lichess assumes.
    pub before: Option<Eval>,
    /// The evaluation after it, if the position after it is labelled.
    pub after: Option<Eval>,
    /// The best move of the position before, in SAN, when it is known and
    /// not the move played.
    pub best: Option<String>,
    /// The principal variation from the position before as PGN movetext
    /// (with move numbers), when the move played was not the best.
    pub variation: Option<String>,
    /// The judgment, for a move other than the best one.
    pub advice: Option<Advice>,
    /// The move's accuracy, 0 to 100, when the position after it is
    /// labelled.
    pub accuracy: Option<f64>,
    /// Its weight in the game accuracy.
    #[serde(skip)]
    pub weight: f64,
    /// The side Lichess credits the accuracy to: the mover, unless an
    /// earlier position lacks a label (Lichess then drops that evaluation
    /// and the sides of all later ones shift).
    #[serde(skip)]
    pub credited: Color,
    /// Its centipawn loss, when both positions around it are labelled.
    pub loss: Option<i32>,
    /// The phase of the position it was played in.
    pub phase: Phase,
    /// What the endgame tables say of the position after the move, when
    /// its label is theirs (`White wins`, `draw`...): shown instead of an
    /// engine's line, as Lichess shows a tablebase result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tablebase: Option<String>,
}

/// The tables' result of a position whose label is theirs (side to move's
/// view), from the label's score and flags.
fn tables_verdict(label: &Label) -> Option<TbWdl> {
    if label.flags & LABEL_TABLEBASE == 0 {
        return None;
    }
    let cursed = label.flags & LABEL_TB_50_MOVE != 0;
    Some(match (label.score.signum(), cursed) {
        (1, false) => TbWdl::Win,
        (1, true) => TbWdl::CursedWin,
        (-1, false) => TbWdl::Loss,
        (-1, true) => TbWdl::BlessedLoss,
        _ => TbWdl::Draw,
    })
}

/// A tables' result in words, White's view.
fn verdict_text(wdl: TbWdl, side: Color) -> String {
    let white = if side == Color::White { wdl } else { wdl.flip() };
    match white {
        TbWdl::Win => "White wins".to_string(),
        TbWdl::Loss => "Black wins".to_string(),
        TbWdl::Draw => "draw".to_string(),
        TbWdl::CursedWin => "White wins, but the 50-move rule draws it".to_string(),
        TbWdl::BlessedLoss => "Black wins, but the 50-move rule draws it".to_string(),
    }
}

fn color_name<S: serde::Serializer>(c: &Color, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(if *c == Color::White { "white" } else { "black" })
}

/// A side's totals over some of its moves.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Totals {
    /// Moves.
    pub moves: u32,
    /// Accuracy, 0 to 100 (`None` without moves).
    pub accuracy: Option<f64>,
    /// Average centipawn loss (`None` without moves).
    pub acpl: Option<i32>,
    /// Inaccuracies.
    pub inaccuracies: u32,
    /// Mistakes.
    pub mistakes: u32,
    /// Blunders.
    pub blunders: u32,
    /// Centipawns lost over the moves whose loss is known...
    pub lost: u64,
    /// ... and those moves (the ACPL is their quotient, rounded).
    pub lost_moves: u32,
}

/// A side's totals: the whole game and each phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct SideAnalysis {
    /// Over the whole game.
    pub game: Totals,
    /// In the opening.
    pub opening: Totals,
    /// In the middlegame.
    pub middlegame: Totals,
    /// In the endgame.
    pub endgame: Totals,
}

/// A game analysed.
#[derive(Clone, Debug, serde::Serialize)]
pub struct GameAnalysis {
    /// The game's index in the input.
    pub index: u64,
    /// The moves.
    pub moves: Vec<MoveAnalysis>,
    /// Where the phases start (plies).
    pub division: Division,
    /// White's totals.
    pub white: SideAnalysis,
    /// Black's totals.
    pub black: SideAnalysis,
    /// Moves whose position before or after has no label, the final
    /// checkmate aside (the totals treat them as Lichess does: the
    /// centipawn loss leaves such a move out, the accuracy drops the
    /// missing evaluation from its sequence).
    pub unlabelled: u32,
}

/// What a position's label says for the judgments: its evaluation (White's
/// view; a stalemate without a label is a draw) and the tables' result
/// when the label is theirs.
pub fn position_eval(label: Option<&Label>, pos: &Position) -> (Option<Eval>, Option<TbWdl>) {
    let eval = match label {
        Some(l) => Eval::from_score(i32::from(l.score), pos.side_to_move()),
        // A stalemate has no label (no move to search) and is a draw.
        None if pos.is_stalemate() => Some(Eval::Cp(0)),
        None => None,
    };
    (eval, label.and_then(tables_verdict))
}

/// The advice on a move by `mover` from a position to the next, each as
/// [`position_eval`] gives it (the first move of a game is judged from
/// [`INITIAL_CP`], as Lichess assumes), `differs` when it is not the best
/// move: Lichess's judgment of the two evaluations, or a blunder for a win
/// the tables know given away.
pub fn move_advice(
    before: (Option<Eval>, Option<TbWdl>),
    after: (Option<Eval>, Option<TbWdl>),
    differs: bool,
    mover: Color,
) -> Option<Advice> {
    match (before.0, after.0) {
        // A win the tables know given away is a blunder, whatever the
        // scores around it.
        _ if before.1 == Some(TbWdl::Win) && after.1.is_some_and(|w| w.flip() != TbWdl::Win) => {
            Some(Advice { judgment: Judgment::Blunder, mate: None })
        }
        (Some(b), Some(a)) if differs => judge(b, a, mover),
        _ => None,
    }
}

/// Analyses a game from its labels (best with a label at every ply).
pub fn analyse(record: &GameRecord) -> Result<GameAnalysis, ChainError> {
    struct Ply {
        pos: Position,
        played: Option<Move>,
        eval: Option<Eval>,
        best: Option<Move>,
        pv: Vec<Move>,
        tables: Option<TbWdl>,
    }
    let mut plies: Vec<Ply> = Vec::with_capacity(record.moves.len() + 1);
    walk(record, |step| {
        let pos = step.pos.clone();
        let (eval, tables) = position_eval(step.label, &pos);
        let pv = step.label.map_or_else(Vec::new, |l| l.pv.moves(&pos));
        plies.push(Ply { pos, played: step.played, eval, best: step.best, pv, tables });
    })?;
    let division = divide(plies.iter().map(|p| &p.pos));
    let n = plies.len().saturating_sub(1);
    let first = plies.first().map_or(Color::White, |p| p.pos.side_to_move());
    let after: Vec<Option<Eval>> = plies.iter().skip(1).map(|p| p.eval).collect();
    // Lichess's accuracy takes the evaluations there are, in order.
    let cps: Vec<i32> = after.iter().flatten().map(|e| e.ceiled_cp()).collect();
    let mut weighted = weighted_accuracies(first, &cps).into_iter();
    let losses = centipawn_losses(first, &after);
    let mut moves = Vec::with_capacity(n);
    let mut unlabelled = 0;
    for k in 1..=n {
        let prev = &plies[k - 1];
        let Some(played) = prev.played else { break };
        let before = if k == 1 { Some(Eval::Cp(INITIAL_CP)) } else { prev.eval };
        let after = plies[k].eval;
        let mate = k == n && plies[k].pos.is_checkmate();
        if ((k > 1 && prev.eval.is_none()) || after.is_none()) && !mate {
            unlabelled += 1;
        }
        let mut pos = prev.pos.clone();
        let differs = prev.best.is_none_or(|b| b != played);
        let advice = move_advice(
            (before, prev.tables),
            (after, plies[k].tables),
            differs,
            prev.pos.side_to_move(),
        );
        let (best, variation) = match prev.best {
            Some(b) if b != played => {
                let line = if prev.pv.first() == Some(&b) { &prev.pv[..] } else { &[b][..] };
                (Some(pos.san_plus(b)), Some(movetext(&prev.pos, line)))
            }
            _ => (None, None),
        };
        let san = pos.san_plus(played);
        let (credited, accuracy, weight) = match after {
            Some(_) => weighted
                .next()
                .map_or((prev.pos.side_to_move(), None, 0.0), |(c, a, w)| (c, Some(a), w)),
            None => (prev.pos.side_to_move(), None, 0.0),
        };
        moves.push(MoveAnalysis {
            ply: k,
            number: prev.pos.fullmove_number(),
            mover: prev.pos.side_to_move(),
            san,
            before,
            after,
            best,
            variation,
            advice,
            accuracy,
            weight,
            credited,
            loss: losses[k - 1].1,
            phase: division.phase(k - 1),
            tablebase: plies[k].tables.map(|w| verdict_text(w, plies[k].pos.side_to_move())),
        });
    }
    let side = |color: Color| {
        let totals = |phase: Option<Phase>| {
            let mine: Vec<&MoveAnalysis> = moves
                .iter()
                .filter(|m| m.mover == color && phase.is_none_or(|p| m.phase == p))
                .collect();
            let count = |j: Judgment| {
                mine.iter().filter(|m| m.advice.is_some_and(|a| a.judgment == j)).count() as u32
            };
            let weighted: Vec<(f64, f64)> = moves
                .iter()
                .filter(|m| m.credited == color && phase.is_none_or(|p| m.phase == p))
                .filter_map(|m| m.accuracy.map(|a| (a, m.weight)))
                .collect();
            let losses: Vec<Option<i32>> = mine.iter().map(|m| m.loss).collect();
            Totals {
                moves: mine.len() as u32,
                accuracy: combined_accuracy(&weighted),
                acpl: mean_loss(&losses),
                inaccuracies: count(Judgment::Inaccuracy),
                mistakes: count(Judgment::Mistake),
                blunders: count(Judgment::Blunder),
                lost: losses.iter().flatten().map(|&l| l as u64).sum(),
                lost_moves: losses.iter().flatten().count() as u32,
            }
        };
        SideAnalysis {
            game: totals(None),
            opening: totals(Some(Phase::Opening)),
            middlegame: totals(Some(Phase::Middlegame)),
            endgame: totals(Some(Phase::Endgame)),
        }
    };
    Ok(GameAnalysis {
        index: record.index,
        white: side(Color::White),
        black: side(Color::Black),
        moves,
        division,
        unlabelled,
    })
}

/// A line of moves from `pos` as PGN movetext: `9... O-O 10. cxd5 Nxd5`.
pub fn movetext(pos: &Position, line: &[Move]) -> String {
    let mut pos = pos.clone();
    let mut text = String::new();
    for (i, &m) in line.iter().enumerate() {
        if !text.is_empty() {
            text.push(' ');
        }
        let number = pos.fullmove_number();
        if pos.side_to_move() == Color::White {
            text.push_str(&format!("{number}. "));
        } else if i == 0 {
            text.push_str(&format!("{number}... "));
        }
        text.push_str(&pos.san_plus(m));
        pos.do_move(m);
    }
    text
}
