//! One self-play game: an opening drawn for the game's index, random
//! plies, then the player's search at every position until the board or a
//! rule ends the game. Everything random is drawn from the game's own
//! generator, seeded by the run's seed and the game's index, so a game is
//! the same whichever worker plays it and whenever.

use crate::{
    chess::{chess960, mv::Move, position::Position, types::Color},
    hash::{GOLDEN, mix64, splitmix64},
    job::common::tables_ending,
    job::selfplay::book::Book,
    label::{LabelContext, Labelled, Labeller},
    record::format::{
        Alternatives, Ending, GameRecord, Label, PackedBoard, Pv, label_score, move_index,
    },
    search::{Limits, Searcher},
    syzygy::Tablebases,
};

/// A game's random numbers: SplitMix64 from a seed made of the run's seed
/// and the game's index.
#[derive(Clone, Debug)]
pub struct GameRng(u64);

impl GameRng {
    /// The generator of game `index` of a run seeded `seed`.
    pub fn for_game(seed: u64, index: u64) -> GameRng {
        GameRng(mix64(seed ^ mix64(index.wrapping_add(GOLDEN))))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN);
        splitmix64(self.0)
    }

    /// A number below `n` (`n` > 0), without the bias of a plain modulo
    /// worth speaking of (`n` is small beside 2^64).
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// Where games start.
#[derive(Clone, Debug)]
pub enum Openings {
    /// The standard start position.
    Standard,
    /// A book's positions, one drawn per game.
    Book(Book),
    /// The 960 Chess960 starts, both sides the same.
    Chess960,
    /// Double Fischer random: each side's back rank drawn apart.
    DoubleFischerRandom,
}

impl Openings {
    /// The start of a game, drawn with `rng`.
    pub fn draw(&self, rng: &mut GameRng) -> Position {
        match self {
            Openings::Standard => Position::startpos(),
            Openings::Book(book) => book.position(rng.below(book.len())),
            Openings::Chess960 => {
                let n = rng.below(960) as u32;
                chess960::start(n, n)
            }
            Openings::DoubleFischerRandom => {
                let (white, black) = (rng.below(960) as u32, rng.below(960) as u32);
                chess960::start(white, black)
            }
        }
    }
}

/// The rules of a run's games: the openings' random plies, and what ends a
/// game before the board does. Scores are centipawns, White's view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rules {
    /// Random plies played from the opening before the players search.
    pub random_plies: u32,
    /// A random ply is drawn among the best this many moves of a search
    /// (0: among all legal moves, uniformly)...
    pub random_multipv: u32,
    /// ... within this many centipawns of the best ...
    pub random_multipv_diff: u32,
    /// ... searched to this depth.
    pub random_multipv_depth: u32,
    /// An opening whose first search scores beyond this is drawn again (0:
    /// never).
    pub opening_score: u32,
    /// Resign once every score of `resign_plies` plies in a row is beyond
    /// this, for the same side...
    pub resign_score: u32,
    /// ... (0: never resign).
    pub resign_plies: u32,
    /// Draw once every score of `draw_plies` plies in a row is within
    /// this...
    pub draw_score: u32,
    /// ... (0: never) ...
    pub draw_plies: u32,
    /// ... counting the plies from this game ply on.
    pub draw_from_ply: u32,
    /// Drawn at this game ply (0: no limit).
    pub max_plies: u32,
    /// With tables: play their endings out to mate or a draw (the search
    /// ranks the root's moves by them) rather than end the game when they
    /// decide it.
    pub tables_play_out: bool,
}

impl Default for Rules {
    /// Random plies and resignation as viridithas's datagen has them (8
    /// random plies; a score of 2000 or more for 4 plies in a row, and an
    /// opening scored beyond 1000 drawn again); draws as Stockfish's
    /// `generate_training_data` adjudicates them (a score of 0 for 8 plies
    /// from ply 80) and its `write_max_ply` of 400.
    fn default() -> Rules {
        Rules {
            random_plies: 8,
            random_multipv: 0,
            random_multipv_diff: 100,
            random_multipv_depth: 4,
            opening_score: 1000,
            resign_score: 2000,
            resign_plies: 4,
            draw_score: 0,
            draw_plies: 8,
            draw_from_ply: 80,
            max_plies: 400,
            tables_play_out: false,
        }
    }
}

/// Openings drawn again at most this many times for one game.
pub const OPENING_TRIES: u32 = 100;

/// What playing a game gave.
#[derive(Debug)]
pub enum Played {
    /// A finished game: its record (result and ending set), and the
    /// nodes its searches took.
    Game(Box<GameRecord>, u64),
    /// No usable opening in [`OPENING_TRIES`] draws (every one ended the
    /// game, or scored beyond the limit).
    NoOpening,
    /// The player could not search a position (an engine that failed
    /// twice): the game is left out.
    Failed {
        /// The ply of the position.
        ply: usize,
    },
    /// Stopped from outside.
    Cancelled,
}

/// Plays game `index`.
pub struct Game<'a> {
    /// The game's index in the run.
    pub index: u64,
    /// The run's seed.
    pub seed: u64,
    /// Where games start.
    pub openings: &'a Openings,
    /// The rules.
    pub rules: &'a Rules,
    /// The roster tags the record gets (Event, Site, Date, Round, White,
    /// Black; the Result is filled in).
    pub tags: &'a [String; 7],
    /// Endgame tables: a game whose position enters them ends with their
    /// result.
    pub tables: Option<&'a Tablebases>,
}

/// How the board ends a game, if it does: the ending, and the result
/// (0 Black won, 1 draw, 2 White won).
pub fn board_ending(pos: &Position) -> Option<(Ending, u8)> {
    if !pos.has_legal_moves() {
        return Some(if pos.in_check() {
            (Ending::Checkmate, if pos.side_to_move() == Color::White { 0 } else { 2 })
        } else {
            (Ending::Stalemate, 1)
        });
    }
    if pos.repetitions() >= 2 {
        Some((Ending::Repetition, 1))
    } else if pos.rule50() >= 100 {
        Some((Ending::FiftyMoves, 1))
    } else if pos.has_insufficient_material() {
        Some((Ending::InsufficientMaterial, 1))
    } else {
        None
    }
}

/// The counters of the adjudication rules.
#[derive(Default)]
struct Adjudicator {
    /// Plies in a row beyond the resign score, and for which side (1
    /// White, -1 Black).
    resign: (u32, i32),
    /// Plies in a row within the draw score.
    draw: u32,
}

impl Adjudicator {
    /// Takes the score (White's view) of the position at `game_ply`;
    /// returns how the game ends, if a rule ends it now.
    fn score(&mut self, rules: &Rules, white: i32, game_ply: u32) -> Option<(Ending, u8)> {
        let side = white.signum();
        if rules.resign_plies > 0 && white.unsigned_abs() >= rules.resign_score {
            self.resign = if self.resign.1 == side { (self.resign.0 + 1, side) } else { (1, side) };
            if self.resign.0 >= rules.resign_plies {
                return Some((Ending::Resigned, if side > 0 { 2 } else { 0 }));
            }
        } else {
            self.resign = (0, 0);
        }
        if rules.draw_plies > 0
            && game_ply >= rules.draw_from_ply
            && white.unsigned_abs() <= rules.draw_score
        {
            self.draw += 1;
            if self.draw >= rules.draw_plies {
                return Some((Ending::DrawAdjudicated, 1));
            }
        } else {
            self.draw = 0;
        }
        None
    }
}

/// A label from what the player found at `pos`.
fn make_label(pos: &Position, ply: usize, found: &Labelled) -> Label {
    let best = found.best.and_then(|m| move_index(pos, m)).unwrap_or(255);
    Label {
        ply: ply.min(usize::from(u16::MAX)) as u16,
        score: label_score(found.score),
        best,
        depth: found.depth,
        pv: Pv::default(),
        alternatives: Alternatives::default(),
        flags: found.flags(),
    }
}

impl Game<'_> {
    /// Plays the game with `player`; `random` searches the random plies
    /// drawn among the best moves (`random_multipv` > 0). `stop` is asked
    /// between positions.
    pub fn play(
        &self,
        player: &mut dyn Labeller,
        random: &mut Searcher,
        stop: &dyn Fn() -> bool,
    ) -> Played {
        let mut rng = GameRng::for_game(self.seed, self.index);
        for _ in 0..OPENING_TRIES {
            let Some((start, opening)) = self.opening(&mut rng, random) else { continue };
            match self.play_from(&start, &opening, player, stop) {
                Some(played) => return played,
                // The opening was decided already: draw another.
                None => continue,
            }
        }
        Played::NoOpening
    }

    /// An opening and its random plies, or `None` when they end the game.
    fn opening(&self, rng: &mut GameRng, random: &mut Searcher) -> Option<(Position, Vec<Move>)> {
        let start = self.openings.draw(rng);
        let mut pos = start.clone();
        let mut moves = Vec::with_capacity(self.rules.random_plies as usize);
        for _ in 0..self.rules.random_plies {
            let m = self.random_move(&mut pos, rng, random)?;
            pos.do_move(m);
            moves.push(m);
            if board_ending(&pos).is_some() {
                return None;
            }
        }
        Some((start, moves))
    }

    /// A random move: among all legal moves, or among the best of a
    /// multi-PV search within the allowed loss.
    fn random_move(
        &self,
        pos: &mut Position,
        rng: &mut GameRng,
        random: &mut Searcher,
    ) -> Option<Move> {
        let rules = self.rules;
        if rules.random_multipv == 0 {
            let moves = pos.legal_moves();
            return (!moves.is_empty()).then(|| moves[rng.below(moves.len())]);
        }
        random.new_game();
        let limits = Limits::depth(rules.random_multipv_depth.max(1) as i32);
        let lines = random.search_multipv(pos, &limits, rules.random_multipv as usize);
        let best = lines.first()?.score;
        let near: Vec<Move> = lines
            .iter()
            .filter(|l| best - l.score <= rules.random_multipv_diff as i32)
            .filter_map(|l| l.best)
            .collect();
        (!near.is_empty()).then(|| near[rng.below(near.len())])
    }

    /// Plays from the opening `start` and its random plies `opening` to
    /// the end; `None` when the first search finds the opening decided.
    fn play_from(
        &self,
        start: &Position,
        opening: &[Move],
        player: &mut dyn Labeller,
        stop: &dyn Fn() -> bool,
    ) -> Option<Played> {
        let mut pos = start.clone();
        let mut record = GameRecord::new(
            self.index,
            PackedBoard::pack(start),
            3,
            self.tags.clone(),
            Vec::with_capacity(160),
        );
        let mut made: Vec<Move> = Vec::with_capacity(160);
        for &m in opening {
            record.moves.push(move_index(&pos, m).expect("a legal move has an index"));
            made.push(m);
            pos.do_move(m);
        }
        let start_fen = start.fen();
        player.new_game(start.is_chess960());
        let mut adjudicator = Adjudicator::default();
        let mut nodes = 0u64;
        let (ending, result) = loop {
            if stop() {
                return Some(Played::Cancelled);
            }
            if let Some(end) = board_ending(&pos) {
                break end;
            }
            // Played out, a position the tables decide is not adjudicated
            // either: its score is the tables' (a win scores past any
            // resignation margin), the game goes on to mate or a draw.
            let decided = self.tables.and_then(|t| tables_ending(t, &pos));
            if let Some(end) = decided
                && !self.rules.tables_play_out
            {
                if made.len() == opening.len() {
                    // An opening the tables decide: draw another.
                    return None;
                }
                break end;
            }
            if self.rules.max_plies > 0 && pos.game_ply() >= self.rules.max_plies {
                break (Ending::MaxPlies, 1);
            }
            let ply = made.len();
            let ctx = LabelContext { game: self.index, ply, start_fen: &start_fen, moves: &made };
            let Some(found) = player.label(&mut pos, &ctx) else {
                return Some(Played::Failed { ply });
            };
            let Some(best) = found.best.filter(|&m| pos.is_legal(m)) else {
                return Some(Played::Failed { ply });
            };
            nodes += found.nodes;
            let white = if pos.side_to_move() == Color::White { found.score } else { -found.score };
            if ply == opening.len()
                && self.rules.opening_score > 0
                && white.unsigned_abs() > self.rules.opening_score
            {
                return None;
            }
            record.labels.push(make_label(&pos, ply, &found));
            // (A position the tables decide reaches here only played out.)
            let adjudicated = if decided.is_some() {
                None
            } else {
                adjudicator.score(self.rules, white, pos.game_ply())
            };
            record.moves.push(move_index(&pos, best).expect("a legal move has an index"));
            made.push(best);
            pos.do_move(best);
            if let Some(end) = adjudicated {
                break end;
            }
        };
        record.result = result;
        record.ending = ending;
        record.tags[6] = crate::record::format::result_text(result).to_string();
        Some(Played::Game(Box::new(record), nodes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The generator's draws are spread over their range and depend on the
    /// seed and the index.
    #[test]
    fn game_rng_draws_evenly_and_apart() {
        let mut counts = [0u32; 10];
        let mut rng = GameRng::for_game(7, 3);
        for _ in 0..100_000 {
            counts[rng.below(10)] += 1;
        }
        assert!(counts.iter().all(|&c| (9_500..10_500).contains(&c)), "{counts:?}");
        let first = |seed, index| GameRng::for_game(seed, index).next_u64();
        assert_ne!(first(7, 3), first(7, 4));
        assert_ne!(first(7, 3), first(8, 3));
        assert_eq!(first(7, 3), first(7, 3));
    }

    /// Resignation needs the same side beyond the limit for the whole run
    /// of plies; a score in between starts the count again.
    #[test]
    fn resignation_and_draw_counts() {
        let rules = Rules { resign_score: 500, resign_plies: 3, ..Rules::default() };
        let mut a = Adjudicator::default();
        assert_eq!(a.score(&rules, 600, 10), None);
        assert_eq!(a.score(&rules, -600, 11), None, "the other side: the count starts again");
        assert_eq!(a.score(&rules, -700, 12), None);
        assert_eq!(a.score(&rules, -900, 13), Some((Ending::Resigned, 0)));
        let mut a = Adjudicator::default();
        assert_eq!(a.score(&rules, 600, 10), None);
        assert_eq!(a.score(&rules, 100, 11), None);
        assert_eq!(a.score(&rules, 600, 12), None);
        assert_eq!(a.score(&rules, 600, 13), None);
        assert_eq!(a.score(&rules, 600, 14), Some((Ending::Resigned, 2)));
        let rules = Rules { draw_score: 10, draw_plies: 3, draw_from_ply: 40, ..Rules::default() };
        let mut a = Adjudicator::default();
        for ply in 30..40 {
            assert_eq!(a.score(&rules, 0, ply), None, "before ply 40 nothing counts");
        }
        assert_eq!(a.score(&rules, 5, 40), None);
        assert_eq!(a.score(&rules, -10, 41), None);
        assert_eq!(a.score(&rules, 3, 42), Some((Ending::DrawAdjudicated, 1)));
    }

    /// The board's endings, each with its result.
    #[test]
    fn board_endings() {
        let fen = |f: &str| Position::from_fen(f).unwrap();
        assert_eq!(board_ending(&Position::startpos()), None);
        // Fool's mate: White is mated.
        let mated = fen("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3");
        assert_eq!(board_ending(&mated), Some((Ending::Checkmate, 0)));
        let stalemate = fen("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1");
        assert_eq!(board_ending(&stalemate), Some((Ending::Stalemate, 1)));
        let fifty = fen("7k/8/8/8/8/8/8/R6K w - - 100 80");
        assert_eq!(board_ending(&fifty), Some((Ending::FiftyMoves, 1)));
        let bare = fen("7k/8/8/8/8/8/8/6NK w - - 0 1");
        assert_eq!(board_ending(&bare), Some((Ending::InsufficientMaterial, 1)));
        let mut pos = Position::startpos();
        for uci in ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8"] {
            let m = pos.parse_uci(uci).unwrap();
            pos.do_move(m);
        }
        assert_eq!(board_ending(&pos), Some((Ending::Repetition, 1)));
    }
}
