//! Replay: every game played move by move on one [`Position`] per worker,
//! SAN resolved against our own legal moves, the incremental keys (or, at
//! [`Verify::Full`], every incremental field) checked against a
//! from-scratch computation after every move, and every rejected game
//! located by file, game number, byte offset and ply.
//!
//! ```
//! use kibitz::{ReplayOptions, Replayer, Verify};
//!
//! let text = b"[Event \"a\"]\n\n1. e4 e5 2. Nf3 *\n\n[Event \"b\"]\n\n1. d4 b4 *\n";
//! let mut replayer = Replayer::new(ReplayOptions { verify: Verify::Keys, ..ReplayOptions::default() });
//! let out = replayer.replay_pgn_chunk(text, 0, 0);
//! assert_eq!((out.games, out.plies, out.rejected.len()), (2, 4, 1));
//! assert_eq!(out.rejected[0].ply, 2);
//! assert_eq!(out.rejected[0].san, "b4");
//! ```

use std::{collections::BTreeMap, fmt::Write as _};

use crate::{
    chess::{
        fen::FenOptions,
        mv::Move,
        position::{CastlingMode, KeyCheck, Position},
        san::SanError,
    },
    io::{
        epd::EpdLine,
        pgn::{BadToken, BadTokenKind, GameReader, ParsedGame},
        source::{Chunk, LinePlaces},
    },
    pipeline::fingerprint::Fingerprint,
};

/// How much to check while replaying.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verify {
    /// Replay only.
    None,
    /// After every move, the Polyglot key, the pawn key and the material
    /// key equal their from-scratch values.
    #[default]
    Keys,
    /// After every move, every incremental field of the state (keys,
    /// checkers, blockers, pinners, check squares, piece-square score,
    /// material, en-passant square, castling rights) and the board's
    /// representations agree with a from-scratch computation.
    Full,
    /// Full, and each game unwound to its start must equal the start.
    Undo,
}

impl Verify {
    /// Checks `pos` at this level (nothing for [`Verify::None`]); `keys`
    /// keeps the key shares of the positions checked before (see
    /// [`KeyCheck`]).
    #[inline(always)]
    pub fn check(
        self,
        pos: &Position,
        keys: &mut KeyCheck,
    ) -> Result<(), crate::chess::position::StateField> {
        match self {
            Verify::None => Ok(()),
            Verify::Keys => keys.check(pos),
            Verify::Full | Verify::Undo => pos.verify_state(),
        }
    }

    /// The level's name, as the command line writes it.
    pub fn name(self) -> &'static str {
        match self {
            Verify::None => "none",
            Verify::Keys => "keys",
            Verify::Full => "full",
            Verify::Undo => "undo",
        }
    }
}

/// Why a game was rejected.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RejectKind {
    /// A move no legal move matches.
    IllegalMove,
    /// A move several legal moves match.
    AmbiguousMove,
    /// A token that is no chess move (a piece drop).
    UnsupportedMove,
    /// A null move while in check.
    NullMoveInCheck,
    /// The `[FEN]` tag (or EPD line) is not a valid position.
    BadPosition,
    /// A movetext token that is neither a move nor a known non-move (a
    /// move number, NAG, glyph, result or comment), or a comment never
    /// closed: the game is read up to it.
    ParseError,
    /// The incremental state differed from the from-scratch state (a bug in
    /// kibitz: please report it).
    VerifyFailed,
    /// More plies than [`crate::io::pgn::MAX_GAME_PLIES`]: the first ones
    /// were replayed, the rest were not.
    TooLong,
}

impl RejectKind {
    /// The name used in summaries and JSON.
    pub fn name(self) -> &'static str {
        match self {
            RejectKind::IllegalMove => "illegal_move",
            RejectKind::AmbiguousMove => "ambiguous_move",
            RejectKind::UnsupportedMove => "unsupported_move",
            RejectKind::NullMoveInCheck => "null_move_in_check",
            RejectKind::BadPosition => "bad_position",
            RejectKind::ParseError => "parse_error",
            RejectKind::VerifyFailed => "verify_failed",
            RejectKind::TooLong => "too_long",
        }
    }
}

/// A rejected game (or EPD line), with where to find it.
#[derive(Clone, PartialEq, Eq, Debug, serde::Serialize)]
pub struct Rejected {
    /// Index of the input file.
    #[serde(skip)]
    pub file: usize,
    /// Game number within the chunk (0-based); the sink makes it global.
    /// (annotate, which numbers games as it reads, puts the game's index in
    /// the whole input here.)
    #[serde(skip)]
    pub local_game: u64,
    /// Byte offset of the game in the input's text.
    pub offset: u64,
    /// The ply of the offending move (1 = White's first move); 0 for the
    /// start position.
    pub ply: u32,
    /// The move as written (empty for position errors).
    pub san: String,
    /// The kind of problem.
    pub kind: RejectKind,
    /// Details.
    pub reason: String,
    /// `[Event]`.
    pub event: String,
    /// `[Site]`.
    pub site: String,
    /// `[White]`.
    pub white: String,
    /// `[Black]`.
    pub black: String,
}

impl Rejected {
    /// A rejected game that was parsed, at `ply` (0: its start position),
    /// with its offset and tags; `local_game` as the field says.
    pub fn in_game(
        file: usize,
        local_game: u64,
        game: &ParsedGame,
        ply: u32,
        san: String,
        kind: RejectKind,
        reason: String,
    ) -> Rejected {
        Rejected {
            ply,
            san,
            event: game.event.to_string_lossy(),
            site: game.site.to_string_lossy(),
            white: game.white.to_string_lossy(),
            black: game.black.to_string_lossy(),
            ..Rejected::at(file, local_game, game.offset, kind, reason)
        }
    }

    /// A rejected input with no parsed game (an EPD line): at `offset`, no
    /// ply, move or tags.
    pub fn at(
        file: usize,
        local_game: u64,
        offset: u64,
        kind: RejectKind,
        reason: String,
    ) -> Rejected {
        Rejected {
            file,
            local_game,
            offset,
            ply: 0,
            san: String::new(),
            kind,
            reason,
            event: String::new(),
            site: String::new(),
            white: String::new(),
            black: String::new(),
        }
    }
}

/// Why a move cannot be played in `pos`, for a SAN that resolved to none
/// or several moves (`e` is not [`SanError::NullMove`], which replay plays
/// and annotate stops at).
pub fn unplayable(e: SanError, pos: &Position) -> (RejectKind, String) {
    let kind = match e {
        SanError::Ambiguous => RejectKind::AmbiguousMove,
        _ => RejectKind::IllegalMove,
    };
    (kind, format!("{e} in {}", pos.fen()))
}

/// How a game is rejected whose main line stops at `token` (a token that
/// is no move, or a comment never closed).
pub fn bad_token_reject(token: &BadToken) -> (RejectKind, String) {
    let kind = match token.kind {
        BadTokenKind::Drop => RejectKind::UnsupportedMove,
        BadTokenKind::NotAMove | BadTokenKind::UnterminatedComment => RejectKind::ParseError,
    };
    (kind, token.reason().to_string())
}

/// Options of a replay.
#[derive(Clone, Debug, Default)]
pub struct ReplayOptions {
    /// What to check.
    pub verify: Verify,
    /// Collect `ply, key, FEN` lines for every position.
    pub keys: bool,
    /// Parse `[%eval]` and `[%clk]` comments.
    pub annotations: bool,
    /// Give each game replayed to its end a [`Fingerprint`] of its start
    /// and moves, to find duplicate games.
    pub fingerprints: bool,
}

/// What a chunk gave.
#[derive(Clone, Debug, Default)]
pub struct ChunkOutcome {
    /// Games (or EPD positions) read, skipped variants included.
    pub games: u64,
    /// Plies replayed (in rejected games too, up to the bad move).
    pub plies: u64,
    /// Games rejected.
    pub rejected: Vec<Rejected>,
    /// Games skipped because of their variant, by variant name.
    pub skipped_variants: BTreeMap<String, u64>,
    /// Games of a variant name kibitz does not know, played as standard
    /// chess, by name.
    pub unknown_variants: BTreeMap<String, u64>,
    /// Lines among games' tags that hold no tag, passed over.
    pub malformed_tag_lines: u64,
    /// Null moves played (not in check), which python-chess plays too.
    pub null_moves: u64,
    /// Chess960 games.
    pub chess960_games: u64,
    /// With keys on: for each game, its lines `ply\tkey\tFEN\n` ...
    pub key_lines: Vec<u8>,
    /// ... and, for each game (game order), how many lines it has and its
    /// byte offset.
    pub key_line_counts: Vec<(u32, u64)>,
    /// With fingerprints on: (game in the chunk, byte offset, fingerprint)
    /// of each game replayed to its end, in game order.
    pub fingerprints: Vec<(u64, u64, Fingerprint)>,
}

/// What a `[Variant]` tag asks for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum VariantKind {
    /// Standard chess (also "From Position", "normal").
    Standard,
    /// Chess960.
    Chess960,
    /// A name kibitz does not know (`starwars`): played as standard chess,
    /// as python-chess and scalachess play it, and counted apart.
    Unknown,
    /// A variant with other rules (antichess, crazyhouse, atomic, ...):
    /// skipped.
    Other,
}

/// Variants with rules of their own, as their names are written (lower
/// case, with only letters and digits): a name that holds one of these is
/// skipped.
const OTHER_VARIANTS: [&str; 27] = [
    "suicide",
    "giveaway",
    "antichess",
    "atomic",
    "kingofthehill",
    "koth",
    "racingkings",
    "horde",
    "threecheck",
    "3check",
    "fivecheck",
    "crazyhouse",
    "bughouse",
    "losers",
    "shatranj",
    "xiangqi",
    "shogi",
    "makruk",
    "duck",
    "seirawan",
    "capablanca",
    "fogofwar",
    "placement",
    "chessgi",
    "janggi",
    "4player",
    "fourplayer",
];

/// Names that are whole words only (too short to look for inside others).
const OTHER_VARIANT_WORDS: [&str; 8] =
    ["anti", "atom", "race", "zh", "house", "schess", "grand", "gothic"];

/// Reads a `[Variant]` tag value.
pub fn variant_kind(value: &[u8]) -> VariantKind {
    if value.is_empty() {
        return VariantKind::Standard;
    }
    let name: String = String::from_utf8_lossy(value)
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    match name.as_str() {
        "" | "standard" | "chess" | "normal" | "fromposition" | "standardchess" | "classical" => {
            VariantKind::Standard
        }
        "chess960" | "960" | "fischerandom" | "fischerrandom" | "fischerrandomchess" | "frc"
        | "wildfr" => VariantKind::Chess960,
        _ if OTHER_VARIANT_WORDS.contains(&name.as_str())
            || OTHER_VARIANTS.iter().any(|v| name.contains(v)) =>
        {
            VariantKind::Other
        }
        _ => VariantKind::Unknown,
    }
}

/// Sets `pos` to the starting position a game's tags ask for: `[FEN]` if
/// present (Chess960 castling when `[Variant]` says so or the castling field
/// needs it; castling rights without a rook are dropped, as python-chess
/// does), else the standard start.
pub fn set_start_position(
    game: &ParsedGame,
    pos: &mut Position,
    startpos: &Position,
) -> Result<(), String> {
    let chess960 = variant_kind(game.variant.raw()) == VariantKind::Chess960;
    match &game.fen {
        Some(fen) => {
            let options = FenOptions {
                castling_mode: chess960.then_some(CastlingMode::Chess960),
                drop_invalid_castling: true,
            };
            *pos = Position::from_fen_with(&fen.unescaped(), options).map_err(|e| e.to_string())?;
        }
        None => {
            pos.clone_from(startpos);
            pos.set_chess960(chess960);
        }
    }
    Ok(())
}

/// A worker's replay state: one position and buffers reused game to game.
pub struct Replayer {
    options: ReplayOptions,
    made: Vec<Move>,
    pos: Position,
    startpos: Position,
    keys: KeyCheck,
    /// For tests: corrupt this key after this ply of this game (of the
    /// chunk), as a bug in `do_move` would.
    #[cfg(test)]
    corrupt: Option<(u64, u32, crate::chess::position::StateField)>,
}

impl Replayer {
    /// A replayer with these options.
    pub fn new(options: ReplayOptions) -> Replayer {
        Replayer {
            options,
            made: Vec::with_capacity(512),
            pos: Position::startpos(),
            startpos: Position::startpos(),
            keys: KeyCheck::new(),
            #[cfg(test)]
            corrupt: None,
        }
    }

    /// Replays every game of a chunk of PGN text. `base` is the chunk's
    /// offset in its input, `file` the input's index.
    pub fn replay_pgn_chunk(&mut self, text: &[u8], base: u64, file: usize) -> ChunkOutcome {
        self.replay_pgn_text(text, base, file, &[])
    }

    /// Replays every game of a chunk of PGN (from a text file or made from
    /// a Parquet file's rows, whose games' places are their rows).
    pub fn replay_chunk(&mut self, chunk: &Chunk) -> ChunkOutcome {
        self.replay_pgn_text(&chunk.data, chunk.offset, chunk.file, chunk.places())
    }

    fn replay_pgn_text(
        &mut self,
        text: &[u8],
        base: u64,
        file: usize,
        places: &[(u32, u64)],
    ) -> ChunkOutcome {
        let mut out = ChunkOutcome::default();
        let no_tags: [Vec<u8>; 0] = [];
        let mut reader = GameReader::new(text, base, &no_tags);
        reader.set_places(places);
        reader.set_annotations(self.options.annotations);
        while let Some(game) = reader.next_game() {
            let local = out.games;
            out.games += 1;
            self.replay_game(game, file, local, &mut out);
        }
        out
    }

    /// Replays one parsed game, adding to `out`.
    pub fn replay_game(
        &mut self,
        game: &ParsedGame,
        file: usize,
        local: u64,
        out: &mut ChunkOutcome,
    ) {
        if !self.start_game(game, file, local, out) {
            return;
        }
        let mut key_count = 0u32;
        let reject =
            |out: &mut ChunkOutcome, ply: u32, san: String, kind: RejectKind, reason: String| {
                out.rejected.push(Rejected::in_game(file, local, game, ply, san, kind, reason));
            };
        #[cfg(test)]
        let corrupt = self.corrupt;
        let Replayer { options, made, pos, keys, .. } = self;
        let start_key = pos.key();
        let rejected_before = out.rejected.len();
        let start = (options.verify == Verify::Undo).then(|| pos.clone());
        if options.keys {
            push_key_line(out, pos, 0);
            key_count += 1;
        }
        made.clear();
        let mut stopped = false;
        for (i, &san) in game.moves.iter().enumerate() {
            let ply = i as u32 + 1;
            let m = match san.to_move(pos) {
                Ok(m) => m,
                Err(SanError::NullMove) => {
                    if pos.in_check() {
                        let reason = format!("null move while in check in {}", pos.fen());
                        reject(out, ply, san.to_string(), RejectKind::NullMoveInCheck, reason);
                        stopped = true;
                        break;
                    }
                    out.null_moves += 1;
                    Move::NULL
                }
                Err(e) => {
                    let (kind, reason) = unplayable(e, pos);
                    reject(out, ply, san.to_string(), kind, reason);
                    stopped = true;
                    break;
                }
            };
            if m.is_null() {
                pos.do_null_move();
            } else {
                pos.do_move_inlined(m);
            }
            made.push(m);
            out.plies += 1;
            #[cfg(test)]
            if let Some((g, p, field)) = corrupt
                && g == local
                && p == ply
            {
                pos.corrupt_key(field);
            }
            if let Err(field) = options.verify.check(pos, keys) {
                let (kind, reason) = verify_failure(field);
                reject(out, ply, san.to_string(), kind, reason);
                stopped = true;
                break;
            }
            if options.keys {
                push_key_line(out, pos, ply);
                key_count += 1;
            }
        }
        end_of_game(game, stopped, start, pos, made, &mut |ply, san, kind, reason| {
            reject(out, ply, san, kind, reason)
        });
        // After the unwinding check: a game that fails it is no duplicate.
        if options.fingerprints && out.rejected.len() == rejected_before {
            out.fingerprints.push((local, game.offset, Fingerprint::of(start_key, made)));
        }
        if options.keys {
            out.key_line_counts.push((key_count, game.offset));
        }
    }

    /// Counts a game's tags and variant and sets its start position;
    /// `false` when it is not replayed (a variant kibitz does not play,
    /// counted; a `[FEN]` that is no position, rejected).
    fn start_game(
        &mut self,
        game: &ParsedGame,
        file: usize,
        local: u64,
        out: &mut ChunkOutcome,
    ) -> bool {
        out.malformed_tag_lines += u64::from(game.malformed_tags);
        let variant = variant_kind(game.variant.raw());
        if variant == VariantKind::Unknown {
            *out.unknown_variants.entry(game.variant.to_string_lossy()).or_default() += 1;
        }
        if variant == VariantKind::Other {
            *out.skipped_variants.entry(game.variant.to_string_lossy()).or_default() += 1;
            if self.options.keys {
                out.key_line_counts.push((0, game.offset));
            }
            return false;
        }
        if let Err(e) = set_start_position(game, &mut self.pos, &self.startpos) {
            let reason = format!("[FEN] tag: {e}");
            let kind = RejectKind::BadPosition;
            out.rejected.push(Rejected::in_game(file, local, game, 0, String::new(), kind, reason));
            if self.options.keys {
                out.key_line_counts.push((0, game.offset));
            }
            return false;
        }
        if self.pos.is_chess960() {
            out.chess960_games += 1;
        }
        true
    }

    /// Checks every line of a chunk of EPD text (or a table's positions):
    /// one "game" per line, placed by its byte offset (or row).
    pub fn replay_epd_chunk(&mut self, chunk: &Chunk) -> ChunkOutcome {
        let (text, file) = (&chunk.data[..], chunk.file);
        let mut out = ChunkOutcome::default();
        let mut places = LinePlaces::new(chunk);
        let mut offset = 0usize;
        for raw in text.split_inclusive(|&b| b == b'\n') {
            let line_offset = places.at(offset);
            offset += raw.len();
            let Some(parsed) = EpdLine::parse(raw) else { continue };
            let local = out.games;
            out.games += 1;
            // A position, and the move played from it (when the line, or
            // a table's row, gives one) legal there.
            let result = parsed.map_err(|e| e.to_string()).and_then(|l| {
                let pos = l.position().map_err(|e| e.to_string())?;
                l.played(&pos)?;
                Ok(pos)
            });
            match result {
                Ok(pos) => {
                    if pos.is_chess960() {
                        out.chess960_games += 1;
                    }
                    if let Err(field) = self.options.verify.check(&pos, &mut self.keys) {
                        out.rejected.push(Rejected::at(
                            file,
                            local,
                            line_offset,
                            RejectKind::VerifyFailed,
                            field.to_string(),
                        ));
                    }
                    if self.options.keys {
                        push_key_line(&mut out, &pos, 0);
                        out.key_line_counts.push((1, line_offset));
                    }
                }
                Err(e) => {
                    out.rejected.push(Rejected::at(
                        file,
                        local,
                        line_offset,
                        RejectKind::BadPosition,
                        e,
                    ));
                    if self.options.keys {
                        out.key_line_counts.push((0, line_offset));
                    }
                }
            }
        }
        out
    }
}

/// The rejection of a game whose incremental `field` differs from its
/// from-scratch value after a move.
pub fn verify_failure(field: impl std::fmt::Display) -> (RejectKind, String) {
    let reason = format!("incremental {field} differs from its from-scratch value after this move");
    (RejectKind::VerifyFailed, reason)
}

/// A game's checks after its last move played: a token that is no move,
/// a game too long, and (`start`, at [`Verify::Undo`]) every move unwound
/// back to the start. `stopped`: the game was already rejected.
fn end_of_game(
    game: &ParsedGame,
    stopped: bool,
    start: Option<Position>,
    pos: &mut Position,
    made: &[Move],
    reject: &mut dyn FnMut(u32, String, RejectKind, String),
) {
    if !stopped && let Some(bad) = &game.bad_token {
        let (kind, reason) = bad_token_reject(bad);
        reject(game.moves.len() as u32 + 1, bad.text_lossy(), kind, reason);
    } else if game.too_long && !stopped {
        let max = crate::io::pgn::MAX_GAME_PLIES;
        reject(
            max as u32 + 1,
            String::new(),
            RejectKind::TooLong,
            format!("more than {max} plies: the first {max} were replayed, the rest were not"),
        );
    }
    if let Some(start) = start {
        for &m in made.iter().rev() {
            if m.is_null() {
                pos.undo_null_move();
            } else {
                pos.undo_move(m);
            }
        }
        if *pos != start {
            reject(
                0,
                String::new(),
                RejectKind::VerifyFailed,
                "unwinding the game did not restore its start position".into(),
            );
        }
    }
}

fn push_key_line(out: &mut ChunkOutcome, pos: &Position, ply: u32) {
    let _ = writeln!(KeyWriter(&mut out.key_lines), "{ply}\t{:016x}\t{}", pos.key(), pos.fen());
}

/// `fmt::Write` into a byte buffer.
struct KeyWriter<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for KeyWriter<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::position::StateField;

    const GAMES: &[u8] = b"[Event \"a\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 *\n\n\
        [Event \"b\"]\n\n1. d4 d5 2. c4 dxc4 3. e3 b5 4. a4 c6 *\n\n\
        [Event \"c\"]\n\n1. c4 e5 *\n";

    /// A key corrupted in the incremental state (as a bug in `do_move`
    /// would leave it) is caught by `keys`, `full` and `undo` at the game
    /// and ply where it happened, named, and the game's other plies are
    /// not replayed; `none` lets it pass.
    #[test]
    fn each_corrupted_key_is_reported_with_its_game_and_ply() {
        let second_game = GAMES.windows(12).position(|w| w == b"[Event \"b\"]\n").unwrap() as u64;
        for field in [StateField::Key, StateField::PawnKey, StateField::MaterialKey] {
            for verify in [Verify::Keys, Verify::Full, Verify::Undo] {
                let mut replayer = Replayer::new(ReplayOptions { verify, ..Default::default() });
                replayer.corrupt = Some((1, 6, field));
                let out = replayer.replay_pgn_chunk(GAMES, 1000, 0);
                assert_eq!(out.games, 3);
                let caught: Vec<_> =
                    out.rejected.iter().filter(|r| r.kind == RejectKind::VerifyFailed).collect();
                assert!(!caught.is_empty(), "{verify:?} missed a corrupted {field}");
                let r = caught[0];
                assert_eq!((r.local_game, r.ply, r.offset), (1, 6, 1000 + second_game));
                assert_eq!(r.san, "b5");
                assert_eq!(r.event, "b");
                assert!(r.reason.contains(&field.to_string()), "{}", r.reason);
                // The game stops there: 6 plies of game b, all of a and c.
                assert_eq!(out.plies, 6 + 6 + 2, "{verify:?} {field}");
            }
            let mut replayer =
                Replayer::new(ReplayOptions { verify: Verify::None, ..Default::default() });
            replayer.corrupt = Some((1, 6, field));
            let out = replayer.replay_pgn_chunk(GAMES, 0, 0);
            assert!(out.rejected.is_empty(), "none checks nothing");
            assert_eq!(out.plies, 6 + 8 + 2);
        }
    }

    /// Without a corruption every level passes every game.
    #[test]
    fn every_level_passes_sound_games() {
        for verify in [Verify::None, Verify::Keys, Verify::Full, Verify::Undo] {
            let mut replayer = Replayer::new(ReplayOptions { verify, ..Default::default() });
            let out = replayer.replay_pgn_chunk(GAMES, 0, 0);
            assert_eq!((out.games, out.plies, out.rejected.len()), (3, 16, 0), "{verify:?}");
        }
    }
}
