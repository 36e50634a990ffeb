//! Annotate: games in, labelled positions out, on every core.
//!
//! Workers replay the games of their chunks, select positions (skip the
//! opening plies, positions in check, positions whose best move captures,
//! a deterministic sample), label them (kibitz's search, or the PGN's
//! `[%eval]`), and turn each game into a [`GameRecord`]. The caller's side
//! receives the records in input order, drops duplicates, applies the
//! limits, and writes blocks that close at deterministic points, so the
//! output is the same bytes whatever the thread count, and a resumed run
//! writes what an uninterrupted one would.

use std::collections::BTreeMap;

use crate::{
    chess::{
        mv::Move,
        position::{KeyCheck, Position},
        san::{San, SanError},
        types::Color,
    },
    hash::{GOLDEN, mix64},
    io::{
        epd::EpdLine,
        filter::{FILTER_TAGS, GameTags, Verdict},
        pgn::{GameReader, ParsedGame, PgnEval},
        source::{Chunk, Format, LinePlaces},
    },
    label::{GaveUp, LabelContext, Labelled, Labeller, LimitKept, LocatedFailure},
    pipeline::replayer::{
        RejectKind, Rejected, VariantKind, Verify, bad_token_reject, set_start_position,
        unplayable, variant_kind, verify_failure,
    },
    record::format::{
        Alternatives, GameRecord, Label, LabelSource, Options, PackedBoard, Pv, label_score,
        move_index, result_code,
    },
    search::{mate_in, mated_in},
};

/// Counts of an annotate run.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct AnnotateStats {
    /// Games (or EPD lines) read, before shard and limits.
    pub games_read: u64,
    /// Games taken (in the shard, within the limits) and written.
    pub games: u64,
    /// Games with an illegal move or a bad start (their chain stops there).
    pub rejected: u64,
    /// Games skipped for their variant, by name.
    pub skipped_variants: BTreeMap<String, u64>,
    /// Games of a variant name kibitz does not know, played as standard
    /// chess, by name.
    pub unknown_variants: BTreeMap<String, u64>,
    /// Games left out by a game filter, by the first filter they failed.
    pub filtered: BTreeMap<String, u64>,
    /// Games left out because they lack the tag a filter needs, by filter.
    pub filtered_no_tag: BTreeMap<String, u64>,
    /// Positions looked at.
    pub positions: u64,
    /// Positions labelled and written.
    pub labelled: u64,
    /// Positions searched (or evaluated by the engine).
    pub searched: u64,
    /// Nodes searched.
    pub nodes: u64,
    /// Positions left out by each filter.
    pub skipped_opening: u64,
    /// ... in check.
    pub skipped_check: u64,
    /// ... best move a capture.
    pub skipped_capture: u64,
    /// ... not sampled.
    pub skipped_sample: u64,
    /// ... no label (no `[%eval]`, no legal move, an engine failure).
    pub skipped_unlabelled: u64,
    /// ... duplicates.
    pub skipped_duplicate: u64,
    /// Positions that could not be labelled because the labeller failed
    /// (an engine that crashed, hung or answered nonsense twice).
    pub failed: u64,
    /// The first `MAX_FAILURE_MESSAGES` (100) of those failures, located.
    pub failures: Vec<LocatedFailure>,
    /// Labels of an engine that stopped far short of its limit (flagged
    /// in the file).
    pub short_of_limit: u64,
    /// Labels of an engine that went past twice its limit and was stopped
    /// (flagged in the file).
    pub past_limit: u64,
    /// Labels the endgame tables gave (written).
    pub tablebase: u64,
    /// The first of those labels in input order: where, and what the
    /// engine reported.
    pub first_off_limit: Option<String>,
}

/// How many failure messages a run keeps (the count goes on).
pub const MAX_FAILURE_MESSAGES: usize = 100;

impl AnnotateStats {
    /// Adds another part's counts.
    pub fn add(&mut self, o: &AnnotateStats) {
        self.games_read += o.games_read;
        self.games += o.games;
        self.rejected += o.rejected;
        for (k, v) in &o.filtered {
            *self.filtered.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &o.filtered_no_tag {
            *self.filtered_no_tag.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &o.skipped_variants {
            *self.skipped_variants.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &o.unknown_variants {
            *self.unknown_variants.entry(k.clone()).or_default() += v;
        }
        self.positions += o.positions;
        self.labelled += o.labelled;
        self.searched += o.searched;
        self.nodes += o.nodes;
        self.skipped_opening += o.skipped_opening;
        self.skipped_check += o.skipped_check;
        self.skipped_capture += o.skipped_capture;
        self.skipped_sample += o.skipped_sample;
        self.skipped_unlabelled += o.skipped_unlabelled;
        self.skipped_duplicate += o.skipped_duplicate;
        self.failed += o.failed;
        self.short_of_limit += o.short_of_limit;
        self.past_limit += o.past_limit;
        self.tablebase += o.tablebase;
        if self.first_off_limit.is_none() {
            self.first_off_limit.clone_from(&o.first_off_limit);
        }
        let room = MAX_FAILURE_MESSAGES.saturating_sub(self.failures.len());
        self.failures.extend(o.failures.iter().take(room).cloned());
    }
}

/// What a chunk gave.
#[derive(Default)]
pub struct ChunkAnnotations {
    /// Records in input order.
    pub records: Vec<GameRecord>,
    /// Counts.
    pub stats: AnnotateStats,
    /// Set when the labeller gave up: the run must stop before this chunk.
    pub gave_up: Option<GaveUp>,
    /// Set when the worker was cancelled part way: the chunk is incomplete
    /// and must not be written.
    pub cancelled: bool,
    /// The games rejected (a bad start, an unplayable move, unparsable
    /// text), each with where it is. Here `local_game` holds the game's
    /// index in the whole input (annotate numbers games as it reads).
    pub rejected: Vec<Rejected>,
}

/// A deterministic coin for `--sample`: the same (seed, game, ply) always
/// gives the same answer.
pub fn sampled(seed: u64, game: u64, ply: usize, ppm: u32) -> bool {
    if ppm >= 1_000_000 {
        return true;
    }
    let x = seed ^ game.wrapping_mul(GOLDEN) ^ (ply as u64).wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
    mix64(x) % 1_000_000 < u64::from(ppm)
}

/// A score from a PGN `[%eval]` (White's view) for the side to move.
/// A position admitted for a label, waiting for the backward pass: its ply
/// and the move played from it.
struct Pending {
    ply: usize,
    played: Option<Move>,
}

/// A game on its way through a worker: the moves made, the labels so far
/// and the positions waiting to be labelled last to first.
struct Walk {
    /// The game's index in the input.
    index: u64,
    start_fen: String,
    made: Vec<Move>,
    labels: Vec<Label>,
    /// Positions are labelled last to first, after the moves.
    backward: bool,
    pending: Vec<Pending>,
}

/// A game's record before its moves: start, result, roster tags, ratings.
fn new_record(game: &ParsedGame, index: u64, start: &Position) -> GameRecord {
    let tags =
        [&game.event, &game.site, &game.date, &game.round, &game.white, &game.black, &game.result]
            .map(|t| t.to_string_lossy());
    let mut record = GameRecord::new(
        index,
        PackedBoard::pack(start),
        result_code(game.result.raw()),
        tags,
        Vec::with_capacity(game.moves.len()),
    );
    record.elo =
        std::array::from_fn(|i| rating(game.extra.get(i).copied().flatten().map(|v| v.raw())));
    record
}

/// A refused move: its text, the kind of rejection and why.
type Refusal = (String, RejectKind, String);

/// The move played from `pos` at `ply`, if legal; if not, why (`None` for
/// both at the end of the moves).
fn played_move(game: &ParsedGame, ply: usize, pos: &Position) -> (Option<Move>, Option<Refusal>) {
    match game.token(ply) {
        Some(Ok(san)) => match san.to_move(pos) {
            Ok(m) => (Some(m), None),
            Err(e) => {
                let (kind, reason) = match e {
                    // The chain of positions cannot go through it.
                    SanError::NullMove => (
                        RejectKind::UnsupportedMove,
                        "a null move: the game is annotated up to it".to_string(),
                    ),
                    _ => unplayable(e, pos),
                };
                (None, Some((san.to_string(), kind, reason)))
            }
        },
        Some(Err(bad)) => {
            let (kind, reason) = bad_token_reject(bad);
            (None, Some((bad.text_lossy(), kind, reason)))
        }
        None => (None, None),
    }
}

/// Whether undoing `made` from `pos` gives back `start`.
fn unwinds_to(pos: &Position, made: &[Move], start: &Position) -> bool {
    let mut back = pos.clone();
    for &m in made.iter().rev() {
        back.undo_move(m);
    }
    back == *start
}

/// A rating tag's value: digits making a number from 1 to 65,535; 0 (none)
/// for anything else (`?`, `-`, an empty tag).
fn rating(value: Option<&[u8]>) -> u16 {
    value
        .and_then(|v| std::str::from_utf8(v).ok())
        .and_then(|v| v.trim().parse::<u16>().ok())
        .unwrap_or(0)
}

/// The moves of a variation from `pos`, up to the first that is not legal
/// there.
fn variation_moves(pos: &Position, sans: &[San]) -> Vec<Move> {
    let mut pos = pos.clone();
    let mut line = Vec::with_capacity(sans.len());
    for san in sans {
        let Ok(m) = san.to_move(&pos) else { break };
        pos.do_move(m);
        line.push(m);
    }
    line
}

fn eval_score(eval: PgnEval, pos: &Position) -> i32 {
    let white_to_move = pos.side_to_move() == Color::White;
    match eval {
        PgnEval::Cp(cp) => {
            let cp = cp.clamp(-30_000, 30_000);
            if white_to_move { cp } else { -cp }
        }
        // `#n`: White mates in n moves; `#-n`: Black mates in n moves.
        PgnEval::Mate(0) => 0,
        PgnEval::Mate(n) => {
            if (n > 0) == white_to_move {
                mate_in(n.abs())
            } else {
                mated_in(n.abs())
            }
        }
    }
}

/// A worker: its labeller and settings.
pub struct Worker<L: Labeller> {
    labeller: L,
    options: Options,
    resume_from: u64,
    startpos: Position,
    /// The inputs' names, to locate failures.
    inputs: std::sync::Arc<[String]>,
    /// The input and byte offset of the game in hand.
    at: (usize, u64),
    /// Set from outside (SIGINT, SIGTERM) to abandon the chunk in hand.
    cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// What to check after every move of a game.
    verify: Verify,
    /// The key shares of the positions checked before.
    keys: KeyCheck,
}

impl<L: Labeller> Worker<L> {
    /// A worker with `labeller`, skipping games before `resume_from`;
    /// `inputs` names the input files (for messages).
    pub fn new(
        labeller: L,
        options: Options,
        resume_from: u64,
        inputs: std::sync::Arc<[String]>,
    ) -> Worker<L> {
        Worker {
            labeller,
            options,
            resume_from,
            startpos: Position::startpos(),
            inputs,
            at: (0, 0),
            cancel: None,
            verify: Verify::None,
            keys: KeyCheck::new(),
        }
    }

    /// Makes the worker check every game's positions at this level after
    /// every move (and, with [`Verify::Undo`], unwind each game to its
    /// start): a game that fails is annotated up to the move and reported.
    pub fn verify(mut self, verify: Verify) -> Self {
        self.verify = verify;
        self
    }

    /// Makes the worker abandon its chunk, between two positions, once
    /// `flag` is set (the chunk comes back marked `cancelled`): an
    /// interrupted run stops after the searches in progress rather than
    /// after the chunks queued.
    pub fn cancel_on(mut self, flag: std::sync::Arc<std::sync::atomic::AtomicBool>) -> Self {
        self.cancel = Some(flag);
        self
    }

    fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Moves the labeller's failures into `out`, located by input, game
    /// (numbered from 1) and byte offset.
    fn collect_failures(&mut self, index: u64, out: &mut ChunkAnnotations) {
        let (file, offset) = self.at;
        let name = self.inputs.get(file).map_or("?", String::as_str);
        let mut failures = self.labeller.take_failures();
        // In the order of the game, whichever order the positions were
        // labelled in.
        failures.sort_by_key(|f| f.ply);
        for failure in failures {
            out.stats.failed += 1;
            if out.stats.failures.len() < MAX_FAILURE_MESSAGES {
                out.stats.failures.push(LocatedFailure {
                    file: name.to_string(),
                    game: index + 1,
                    offset,
                    failure,
                });
            }
        }
        if out.gave_up.is_none()
            && let Some(cause) = self.labeller.gave_up()
        {
            out.gave_up = Some(GaveUp { file: name.to_string(), game: index + 1, offset, cause });
        }
    }

    fn takes(&self, game: u64) -> bool {
        let (k, n) = self.options.shard;
        game >= self.resume_from
            && (self.options.max_games == 0 || game < self.options.max_games)
            && (n <= 1 || game % n == k)
    }

    /// Whether a game passes the game filters; counts it when not.
    fn passes(&self, game: &ParsedGame, stats: &mut AnnotateStats) -> bool {
        let filter = &self.options.filter;
        if filter.is_empty() {
            return true;
        }
        let extra = |i: usize| game.extra.get(i).copied().flatten().map(|v| v.raw());
        let nonempty = |v: &'_ [u8]| !v.is_empty();
        let tags = GameTags {
            white_elo: extra(0),
            black_elo: extra(1),
            time_control: extra(2),
            date: extra(3).or(Some(game.date.raw()).filter(|d| nonempty(d))),
            termination: extra(4),
            result: Some(game.result.raw()).filter(|r| nonempty(r)),
            white_title: extra(5),
            black_title: extra(6),
        };
        match filter.check(&tags) {
            Verdict::Keep => true,
            Verdict::Out(why) => {
                *stats.filtered.entry(why.name().to_string()).or_default() += 1;
                false
            }
            Verdict::NoTag(why) => {
                *stats.filtered_no_tag.entry(why.name().to_string()).or_default() += 1;
                false
            }
        }
    }

    /// Annotates the games of a chunk.
    pub fn chunk(&mut self, chunk: &Chunk) -> ChunkAnnotations {
        let mut out = ChunkAnnotations::default();
        match chunk.format {
            Format::Pgn => {
                let tags = FILTER_TAGS.map(|t| t.to_vec());
                let mut reader = GameReader::new(&chunk.data, chunk.offset, &tags);
                reader.set_places(chunk.places());
                reader.set_annotations(self.options.label == LabelSource::PgnEval);
                let mut index = chunk.first_game;
                while let Some(game) = reader.next_game() {
                    out.stats.games_read += 1;
                    self.at = (chunk.file, game.offset);
                    if self.takes(index) && self.passes(game, &mut out.stats) {
                        let game = game.clone();
                        self.game(&game, index, &mut out);
                    }
                    index += 1;
                }
            }
            Format::Epd => {
                let mut index = chunk.first_game;
                let mut places = LinePlaces::new(chunk);
                let mut at = 0;
                for line in chunk.data.split(|&b| b == b'\n') {
                    self.at = (chunk.file, places.at(at));
                    at += line.len() + 1;
                    let Some(parsed) = EpdLine::parse(line) else { continue };
                    out.stats.games_read += 1;
                    if self.takes(index) {
                        let given = self.options.label == LabelSource::Table;
                        let position = parsed.map_err(|e| e.to_string()).and_then(|l| {
                            let pos = l.position().map_err(|e| e.to_string())?;
                            let played = l.played(&pos)?;
                            let white = pos.side_to_move() == Color::White;
                            let eval = given.then(|| l.evaluation(white)).flatten().transpose()?;
                            Ok((pos, played, eval))
                        });
                        match position {
                            Ok((pos, played, eval)) => self.epd(pos, played, eval, index, &mut out),
                            Err(e) => {
                                out.stats.rejected += 1;
                                out.rejected.push(Rejected::at(
                                    self.at.0,
                                    index,
                                    self.at.1,
                                    RejectKind::BadPosition,
                                    e,
                                ));
                            }
                        }
                    }
                    index += 1;
                }
            }
        }
        out
    }

    /// Whether the filters that need no label (the opening plies, check,
    /// the sample, a position with no move) let `pos` at `ply` through;
    /// counted in `stats` either way.
    fn admits(
        &self,
        pos: &Position,
        game: u64,
        ply: usize,
        in_game: bool,
        stats: &mut AnnotateStats,
    ) -> bool {
        let o = &self.options;
        stats.positions += 1;
        if in_game && ply < o.skip_plies as usize {
            stats.skipped_opening += 1;
            return false;
        }
        if o.skip_check && pos.in_check() {
            stats.skipped_check += 1;
            return false;
        }
        if !sampled(o.seed, game, ply, o.sample_ppm) {
            stats.skipped_sample += 1;
            return false;
        }
        if !pos.has_legal_moves() {
            stats.skipped_unlabelled += 1;
            return false;
        }
        true
    }

    /// The label of an admitted position ([`Annotator::admits`]), if it
    /// gets one and the capture filter keeps it.
    fn label(
        &mut self,
        pos: &mut Position,
        ctx: &LabelContext<'_>,
        pgn_eval: Option<Option<PgnEval>>,
        pgn_line: &[Move],
        played: Option<Move>,
        stats: &mut AnnotateStats,
    ) -> Option<Label> {
        let ply = ctx.ply;
        let o = &self.options;
        let mut off_limit = None;
        let mut tables_flags = 0;
        let (score, best, depth, pv, alternatives) = match (o.label, pgn_eval) {
            (LabelSource::PgnEval | LabelSource::Table, Some(eval)) => match eval {
                // A variation in the text is the better line from here,
                // as an analysis exported by Lichess writes it.
                Some(e) => {
                    let best = pgn_line.first().copied();
                    (eval_score(e, pos), best, 0, pgn_line.to_vec(), Vec::new())
                }
                None => {
                    stats.skipped_unlabelled += 1;
                    return None;
                }
            },
            (LabelSource::PgnEval | LabelSource::Table, None) => {
                stats.skipped_unlabelled += 1;
                return None;
            }
            _ => {
                stats.searched += 1;
                match self.labeller.label(pos, ctx) {
                    Some(l) => {
                        stats.nodes += l.nodes;
                        off_limit = (l.limit != LimitKept::Kept).then(|| l.clone());
                        if l.tablebase.is_some() {
                            tables_flags = l.flags();
                        }
                        (l.score, l.best, l.depth, l.pv, l.alternatives)
                    }
                    None => {
                        stats.skipped_unlabelled += 1;
                        return None;
                    }
                }
            }
        };
        if o.skip_captures && best.or(played).is_some_and(|m| pos.is_capture(m)) {
            stats.skipped_capture += 1;
            return None;
        }
        let best_index = match best {
            Some(m) => move_index(pos, m)?,
            None => 255,
        };
        // Counted as written: after the filters that drop the label.
        let flags = off_limit.map_or(tables_flags, |l| {
            self.off_limit(&l, ctx, stats);
            l.flags()
        });
        if tables_flags != 0 {
            stats.tablebase += 1;
        }
        // The variation starts with the best move; a labeller that gives
        // the best move alone gives a variation of one.
        let pv = match (o.pv_plies, best) {
            (0, _) | (_, None) => Pv::default(),
            (plies, Some(m)) if pv.first() == Some(&m) => Pv::from_moves(pos, &pv, plies as usize),
            (plies, Some(m)) => Pv::from_moves(pos, &[m], plies as usize),
        };
        let alternatives: Vec<(u8, i16)> = alternatives
            .iter()
            .filter_map(|&(m, score)| Some((move_index(pos, m)?, label_score(score))))
            .collect();
        Some(Label {
            ply: ply.min(u16::MAX as usize) as u16,
            score: label_score(score),
            best: best_index,
            depth,
            pv,
            alternatives: Alternatives::new(&alternatives),
            flags,
        })
    }

    /// Counts a label off its limit; the first is described.
    fn off_limit(&self, l: &Labelled, ctx: &LabelContext<'_>, stats: &mut AnnotateStats) {
        let (what, count) = match l.limit {
            LimitKept::Short => ("stopped far short of", &mut stats.short_of_limit),
            _ => ("went past twice", &mut stats.past_limit),
        };
        *count += 1;
        if stats.first_off_limit.is_none() {
            let (file, offset) = self.at;
            let name = self.inputs.get(file).map_or("?", String::as_str);
            stats.first_off_limit = Some(format!(
                "{name}: game {} at {}, ply {}: the engine {what} its limit (it \
                 reported depth {}, {} nodes)",
                ctx.game + 1,
                crate::io::place::describe(name, offset),
                ctx.ply,
                l.depth,
                l.nodes
            ));
        }
    }

    /// The start position of a game that is played: its variant known (or
    /// unknown and played as standard chess), its `[FEN]` tag legal;
    /// `None` (counted, or rejected) otherwise.
    fn game_start(
        &self,
        game: &ParsedGame,
        index: u64,
        out: &mut ChunkAnnotations,
    ) -> Option<Position> {
        let stats = &mut out.stats;
        match variant_kind(game.variant.raw()) {
            VariantKind::Other => {
                *stats.skipped_variants.entry(game.variant.to_string_lossy()).or_default() += 1;
                return None;
            }
            VariantKind::Unknown => {
                *stats.unknown_variants.entry(game.variant.to_string_lossy()).or_default() += 1;
            }
            VariantKind::Standard | VariantKind::Chess960 => {}
        }
        let mut pos = self.startpos.clone();
        if let Err(e) = set_start_position(game, &mut pos, &self.startpos) {
            self.reject_whole(game, index, RejectKind::BadPosition, format!("[FEN] tag: {e}"), out);
            return None;
        }
        stats.games += 1;
        Some(pos)
    }

    /// Rejects a game as a whole (at ply 0, no move named), counted.
    fn reject_whole(
        &self,
        game: &ParsedGame,
        index: u64,
        kind: RejectKind,
        why: String,
        out: &mut ChunkAnnotations,
    ) {
        out.stats.rejected += 1;
        out.rejected.push(Rejected::in_game(self.at.0, index, game, 0, String::new(), kind, why));
    }

    fn game(&mut self, game: &ParsedGame, index: u64, out: &mut ChunkAnnotations) {
        let Some(mut pos) = self.game_start(game, index, out) else { return };
        self.labeller.new_game(pos.is_chess960());
        let pgn_eval = self.options.label == LabelSource::PgnEval;
        let mut walk = Walk {
            index,
            start_fen: pos.fen(),
            made: Vec::with_capacity(game.moves.len()),
            labels: Vec::new(),
            // The built-in search labels a game's positions last to first
            // (see `Labeller::backward`); the admitted plies wait till the
            // end.
            backward: !pgn_eval && self.labeller.backward(),
            pending: Vec::new(),
        };
        let mut record = new_record(game, index, &pos);
        let start_pos = (self.verify == Verify::Undo).then(|| pos.clone());
        let Some(broken) = self.forward(game, &mut pos, &mut walk, &mut record, out) else {
            return;
        };
        if let Some(start) = start_pos.filter(|_| !walk.made.is_empty() && !broken)
            && !unwinds_to(&pos, &walk.made, &start)
        {
            let why = "unwinding the game did not restore its start position".to_string();
            self.reject_whole(game, index, RejectKind::VerifyFailed, why, out);
        }
        if walk.backward && !self.label_backward(&mut pos, &mut walk, out) {
            return;
        }
        self.collect_failures(index, out);
        record.labels = walk.labels;
        out.records.push(record);
    }

    /// Plays a game's moves from `pos`, labelling the positions the filters
    /// admit (or leaving them pending for [`Worker::label_backward`]), and
    /// recording the moves; the game's refused move or broken state is
    /// rejected. Whether the state broke; `None` when cancelled.
    fn forward(
        &mut self,
        game: &ParsedGame,
        pos: &mut Position,
        walk: &mut Walk,
        record: &mut GameRecord,
        out: &mut ChunkAnnotations,
    ) -> Option<bool> {
        let pgn_eval = self.options.label == LabelSource::PgnEval;
        let index = walk.index;
        for ply in 0..=game.moves.len() {
            if self.cancelled() {
                out.cancelled = true;
                return None;
            }
            let (played, refused) = played_move(game, ply, pos);
            if self.admits(pos, index, ply, true, &mut out.stats) {
                if walk.backward {
                    walk.pending.push(Pending { ply, played });
                } else {
                    let eval = pgn_eval.then(|| {
                        if ply == 0 { None } else { game.evals.get(ply - 1).copied().flatten() }
                    });
                    let line = match game.variations.get(ply) {
                        Some(sans) if pgn_eval && !sans.is_empty() => variation_moves(pos, sans),
                        _ => Vec::new(),
                    };
                    let (start_fen, made) = (&walk.start_fen, &walk.made);
                    let ctx = LabelContext { game: index, ply, start_fen, moves: made };
                    if let Some(label) = self.label(pos, &ctx, eval, &line, played, &mut out.stats)
                    {
                        walk.labels.push(label);
                    }
                }
            }
            let Some(m) = played else {
                if let Some((san, kind, reason)) = refused {
                    out.stats.rejected += 1;
                    let (file, ply) = (self.at.0, ply as u32 + 1);
                    out.rejected.push(Rejected::in_game(file, index, game, ply, san, kind, reason));
                }
                return Some(false);
            };
            let Some(i) = move_index(pos, m) else {
                // Unreachable for a legal move; counted, not trusted.
                out.stats.rejected += 1;
                return Some(false);
            };
            record.moves.push(i);
            walk.made.push(m);
            pos.do_move(m);
            if let Err(field) = self.verify.check(pos, &mut self.keys) {
                out.stats.rejected += 1;
                let san = game.token(ply).and_then(Result::ok).map(|s| s.to_string());
                let (kind, reason) = verify_failure(field);
                let (file, ply) = (self.at.0, ply as u32 + 1);
                let san = san.unwrap_or_default();
                out.rejected.push(Rejected::in_game(file, index, game, ply, san, kind, reason));
                // The positions after a broken state are not labelled.
                return Some(true);
            }
        }
        Some(false)
    }

    /// Labels the pending positions back from the last: each position's
    /// search finds the table full of the deeper search of the position
    /// after it, the line played from there. `false` when cancelled.
    fn label_backward(
        &mut self,
        pos: &mut Position,
        walk: &mut Walk,
        out: &mut ChunkAnnotations,
    ) -> bool {
        let mut at = walk.made.len();
        for p in walk.pending.iter().rev() {
            while at > p.ply {
                at -= 1;
                pos.undo_move(walk.made[at]);
            }
            if self.cancelled() {
                out.cancelled = true;
                return false;
            }
            let ctx = LabelContext {
                game: walk.index,
                ply: p.ply,
                start_fen: &walk.start_fen,
                moves: &walk.made[..at],
            };
            if let Some(label) = self.label(pos, &ctx, None, &[], p.played, &mut out.stats) {
                walk.labels.push(label);
            }
        }
        walk.labels.reverse();
        true
    }

    /// A position of an EPD line (or a table's row): labelled as the
    /// filters admit, with the move played from it when the line gives one
    /// (kept as the record's one move) and the evaluation it gives
    /// (`--label table`).
    fn epd(
        &mut self,
        mut pos: Position,
        played: Option<Move>,
        eval: Option<PgnEval>,
        index: u64,
        out: &mut ChunkAnnotations,
    ) {
        if self.cancelled() {
            out.cancelled = true;
            return;
        }
        out.stats.games += 1;
        self.labeller.new_game(pos.is_chess960());
        let moves = played.and_then(|m| move_index(&pos, m)).into_iter().collect();
        let mut record =
            GameRecord::new(index, PackedBoard::pack(&pos), 3, Default::default(), moves);
        let mut labels = Vec::new();
        let start_fen = pos.fen();
        let ctx = LabelContext { game: index, ply: 0, start_fen: &start_fen, moves: &[] };
        let given = (self.options.label == LabelSource::Table).then_some(eval);
        if self.admits(&pos, index, 0, false, &mut out.stats)
            && let Some(label) = self.label(&mut pos, &ctx, given, &[], played, &mut out.stats)
        {
            labels.push(label);
        }
        self.collect_failures(index, out);
        record.labels = labels;
        out.records.push(record);
    }
}
