//! PGN games through pgn-reader: tags, SAN moves, and the `[%eval]` and
//! `[%clk]` annotations of each move; variations are skipped.
//!
//! [`GameReader`] reads the games of one chunk of text into a reused
//! [`ParsedGame`], and knows each game's byte offset.
//!
//! ```
//! use kibitz::io::pgn::GameReader;
//!
//! let text = b"[Event \"t\"]\n[Result \"1-0\"]\n\n1. e4 { [%eval 0.25] } e5 (1... c5) 2. Qh5 1-0\n";
//! let mut reader = GameReader::new(&text[..], 0, &[]);
//! let game = reader.next_game().unwrap().unwrap();
//! assert_eq!(game.moves.len(), 3);
//! assert_eq!(game.evals[0], Some(kibitz::io::pgn::Eval::Cp(25)));
//! assert_eq!(game.result, b"1-0");
//! ```

use std::{cell::Cell, io, ops::ControlFlow, rc::Rc};

use pgn_reader::{
    Outcome, RawComment, RawTag, Reader, SanPlus, Skip, Visitor,
    shakmaty::{self, san::San as ShakSan},
};

use crate::chess::{
    san::San,
    types::{CastlingSide, File, Rank, Role, Square},
};

/// An evaluation written in a comment, White's point of view, as Lichess
/// writes `[%eval 0.25]` and `[%eval #-3]`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, serde::Serialize)]
pub enum Eval {
    /// Centipawns for White.
    Cp(i32),
    /// Mate in this many moves: positive if White mates.
    Mate(i32),
}

/// The most plies of a game kept and replayed: far above the longest game
/// the 75-move rule allows (17,697 plies), and the most a label's `u16` ply
/// can address. A longer main line is cut here and the game reported.
pub const MAX_GAME_PLIES: usize = 65_535;

/// A move token: the SAN as pgn-reader read it, converted to ours, or a
/// token pgn-reader accepted that is no chess move (a piece drop).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MoveToken {
    /// A move or null move.
    San(San),
    /// Not playable in chess (e.g. a drop `N@f3`), as read.
    Unsupported(SanPlus),
}

/// One game: tags, moves, annotations, and where it starts.
#[derive(Clone, Debug, Default)]
pub struct ParsedGame {
    /// Byte offset of the game's first byte in the decompressed text.
    pub offset: u64,
    /// The main line had more than [`MAX_GAME_PLIES`] moves: only the first
    /// ones are kept (memory stays bounded whatever the game's length).
    pub too_long: bool,
    /// `[Event]`.
    pub event: Vec<u8>,
    /// `[Site]`.
    pub site: Vec<u8>,
    /// `[Date]`.
    pub date: Vec<u8>,
    /// `[Round]`.
    pub round: Vec<u8>,
    /// `[White]`.
    pub white: Vec<u8>,
    /// `[Black]`.
    pub black: Vec<u8>,
    /// `[Result]` (or the result token of the movetext if there is no tag).
    pub result: Vec<u8>,
    /// `[FEN]`, if any.
    pub fen: Option<Vec<u8>>,
    /// `[SetUp]`.
    pub setup: Vec<u8>,
    /// `[Variant]`.
    pub variant: Vec<u8>,
    /// Values of the extra tags asked for, in the order asked.
    pub extra: Vec<Option<Vec<u8>>>,
    /// The main line.
    pub moves: Vec<MoveToken>,
    /// `[%eval]` after each move.
    pub evals: Vec<Option<Eval>>,
    /// `[%clk]` after each move, in seconds.
    pub clocks: Vec<Option<u32>>,
    /// The result token at the end of the movetext.
    pub outcome: Option<Outcome>,
}

impl ParsedGame {
    fn clear(&mut self, extra_tags: usize) {
        self.too_long = false;
        self.event.clear();
        self.site.clear();
        self.date.clear();
        self.round.clear();
        self.white.clear();
        self.black.clear();
        self.result.clear();
        self.fen = None;
        self.setup.clear();
        self.variant.clear();
        self.extra.clear();
        self.extra.resize(extra_tags, None);
        self.moves.clear();
        self.evals.clear();
        self.clocks.clear();
        self.outcome = None;
    }
}

/// Converts pgn-reader's SAN (shakmaty's type) to ours.
pub fn convert_san(san: &ShakSan) -> MoveToken {
    fn role(r: shakmaty::Role) -> Role {
        Role::new(usize::from(r as u8) - 1)
    }
    fn square(s: shakmaty::Square) -> Square {
        Square::new_masked(u32::from(s))
    }
    match *san {
        ShakSan::Normal { role: r, file, rank, capture, to, promotion } => {
            let file = file.map(|f| File::new(u32::from(f)));
            let rank = rank.map(|r| Rank::new(u32::from(r)));
            let promotion = promotion.map(role);
            let r = role(r);
            if r == Role::Pawn
                && let (Some(f), Some(rk)) = (file, rank)
            {
                // A pawn with both origin file and rank is a coordinate move
                // (`g1f3`, `e2e4`): SAN never writes pawns that way.
                return MoveToken::San(San::Coordinates {
                    from: Square::from_coords(f, rk),
                    to: square(to),
                    promotion,
                });
            }
            MoveToken::San(San::Normal { role: r, file, rank, capture, to: square(to), promotion })
        }
        ShakSan::Castle(side) => MoveToken::San(San::Castle(match side {
            shakmaty::CastlingSide::KingSide => CastlingSide::KingSide,
            shakmaty::CastlingSide::QueenSide => CastlingSide::QueenSide,
        })),
        ShakSan::Null => MoveToken::San(San::Null),
        ShakSan::Put { .. } => MoveToken::Unsupported(SanPlus { san: *san, suffix: None }),
    }
}

/// Parses `[%eval ...]` in a comment.
pub fn parse_eval(comment: &[u8]) -> Option<Eval> {
    let at = memchr::memmem::find(comment, b"[%eval ")?;
    let rest = comment[at + 7..].trim_ascii_start();
    let end = rest
        .iter()
        .position(|&b| b == b']' || b == b',' || b.is_ascii_whitespace())
        .unwrap_or(rest.len());
    let token = std::str::from_utf8(&rest[..end]).ok()?;
    if let Some(mate) = token.strip_prefix('#') {
        return mate.parse::<i32>().ok().map(Eval::Mate);
    }
    let pawns: f64 = token.parse().ok()?;
    if !pawns.is_finite() {
        return None;
    }
    Some(Eval::Cp((pawns * 100.0).round().clamp(-1e6, 1e6) as i32))
}

/// Parses `[%clk H:MM:SS]` in a comment, in whole seconds.
pub fn parse_clock(comment: &[u8]) -> Option<u32> {
    let at = memchr::memmem::find(comment, b"[%clk ")?;
    let rest = comment[at + 6..].trim_ascii_start();
    let end = rest.iter().position(|&b| b == b']' || b.is_ascii_whitespace()).unwrap_or(rest.len());
    let text = std::str::from_utf8(&rest[..end]).ok()?;
    let mut seconds: f64 = 0.0;
    for part in text.split(':') {
        seconds = seconds * 60.0 + part.parse::<f64>().ok()?;
    }
    (seconds.is_finite() && (0.0..4e9).contains(&seconds)).then_some(seconds as u32)
}

struct GameVisitor<'a> {
    game: &'a mut ParsedGame,
    extra_tags: &'a [Vec<u8>],
    annotations: bool,
}

impl Visitor for GameVisitor<'_> {
    type Tags = ();
    type Movetext = ();
    type Output = ();

    fn begin_tags(&mut self) -> ControlFlow<(), ()> {
        ControlFlow::Continue(())
    }

    fn tag(&mut self, _tags: &mut (), name: &[u8], value: RawTag<'_>) -> ControlFlow<()> {
        let slot = match name {
            b"Event" => &mut self.game.event,
            b"Site" => &mut self.game.site,
            b"Date" => &mut self.game.date,
            b"Round" => &mut self.game.round,
            b"White" => &mut self.game.white,
            b"Black" => &mut self.game.black,
            b"Result" => &mut self.game.result,
            b"SetUp" => &mut self.game.setup,
            b"Variant" => &mut self.game.variant,
            b"FEN" => self.game.fen.get_or_insert_with(Vec::new),
            _ => {
                if let Some(i) = self.extra_tags.iter().position(|t| t == name) {
                    self.game.extra[i] = Some(value.decode().into_owned());
                }
                return ControlFlow::Continue(());
            }
        };
        slot.clear();
        slot.extend_from_slice(&value.decode());
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, _tags: ()) -> ControlFlow<(), ()> {
        ControlFlow::Continue(())
    }

    fn san(&mut self, _movetext: &mut (), san_plus: SanPlus) -> ControlFlow<()> {
        if self.game.moves.len() >= MAX_GAME_PLIES {
            self.game.too_long = true;
            return ControlFlow::Continue(());
        }
        self.game.moves.push(convert_san(&san_plus.san));
        if self.annotations {
            self.game.evals.push(None);
            self.game.clocks.push(None);
        }
        ControlFlow::Continue(())
    }

    fn comment(&mut self, _movetext: &mut (), comment: RawComment<'_>) -> ControlFlow<()> {
        if self.annotations && !self.game.moves.is_empty() {
            let text = comment.as_bytes();
            let last = self.game.moves.len() - 1;
            if let Some(e) = parse_eval(text) {
                self.game.evals[last] = Some(e);
            }
            if let Some(c) = parse_clock(text) {
                self.game.clocks[last] = Some(c);
            }
        }
        ControlFlow::Continue(())
    }

    fn partial_comment(&mut self, _movetext: &mut (), _comment: RawComment<'_>) -> ControlFlow<()> {
        // Pieces of a comment longer than the reader's buffer: no
        // annotation of ours is that long.
        ControlFlow::Continue(())
    }

    fn begin_variation(&mut self, _movetext: &mut ()) -> ControlFlow<(), Skip> {
        ControlFlow::Continue(Skip(true))
    }

    fn outcome(&mut self, _movetext: &mut (), outcome: Outcome) -> ControlFlow<()> {
        self.game.outcome = Some(outcome);
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, _movetext: ()) {}
}

/// The length of the longest tag line of a game's text (its tag section:
/// the tag lines, blank lines and `%` lines before the first other line).
fn longest_tag_line(game: &[u8]) -> usize {
    let mut longest = 0;
    for line in game.split(|&b| b == b'\n').map(<[u8]>::trim_ascii) {
        match line.first() {
            Some(b'[') => longest = longest.max(line.len()),
            None | Some(b'%') => {}
            Some(_) => break,
        }
    }
    longest
}

/// A byte-slice reader that tells how far it has been read.
struct SliceReader<'a> {
    data: &'a [u8],
    pos: Rc<Cell<usize>>,
}

impl io::Read for SliceReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let pos = self.pos.get();
        let n = buf.len().min(self.data.len() - pos);
        buf[..n].copy_from_slice(&self.data[pos..pos + n]);
        self.pos.set(pos + n);
        Ok(n)
    }
}

/// The tag-line length kibitz asks pgn-reader to support. Longer lines may
/// be refused, depending on where they fall in its 16 KiB buffer, and a
/// game with a line it refuses is rejected whole.
pub const MAX_TAG_LINE: usize = 1024;

/// Reads the games of a chunk of PGN text one at a time.
pub struct GameReader<'a> {
    text: &'a [u8],
    reader: Reader<SliceReader<'a>>,
    pos: Rc<Cell<usize>>,
    base: u64,
    game: ParsedGame,
    extra_tags: &'a [Vec<u8>],
    annotations: bool,
}

impl<'a> GameReader<'a> {
    /// A reader over `text`, whose first byte is at offset `base` of the
    /// input; `extra_tags` names tags to keep besides the standard ones.
    pub fn new(text: &'a [u8], base: u64, extra_tags: &'a [Vec<u8>]) -> GameReader<'a> {
        let pos = Rc::new(Cell::new(0));
        // pgn-reader keeps this many bytes ahead in its buffer for every tag
        // and token, moving the rest to the front when short: 1 KiB covers
        // real tags and annotation comments; 64 KiB cost a quarter of the
        // replay time in memmove.
        let reader = Reader::build(SliceReader { data: text, pos: pos.clone() })
            .set_supported_tag_line_length(MAX_TAG_LINE)
            .set_supported_comment_length(1024)
            .finish();
        GameReader {
            text,
            reader,
            pos,
            base,
            game: ParsedGame::default(),
            extra_tags,
            annotations: true,
        }
    }

    /// Whether to parse `[%eval]` and `[%clk]` comments (on by default).
    pub fn set_annotations(&mut self, on: bool) {
        self.annotations = on;
    }

    /// Reads the next game, or `None` at the end of the text.
    ///
    /// # Errors
    ///
    /// What pgn-reader reports as unrecoverable: a tag line too long for its
    /// buffer (longer than [`MAX_TAG_LINE`] bytes may be refused, longer
    /// than 16 KiB always is). The rest of that game is skipped by
    /// pgn-reader itself, which knows where its games end (comments across
    /// lines, `%` lines, a blank line after the moves), so the game's
    /// remains are not read as a game of their own; the caller may go on
    /// reading.
    pub fn next_game(&mut self) -> io::Result<Option<&ParsedGame>> {
        if !self.reader.has_more()? {
            return Ok(None);
        }
        // `has_more` skipped the whitespace before the game.
        let consumed = self.consumed();
        self.game.clear(self.extra_tags.len());
        self.game.offset = self.base + consumed as u64;
        let mut visitor = GameVisitor {
            game: &mut self.game,
            extra_tags: self.extra_tags,
            annotations: self.annotations,
        };
        if let Err(e) = self.reader.read_game(&mut visitor) {
            // pgn-reader stopped inside the game (an unterminated tag leaves
            // it at the next line, still among the tags): let it skip the
            // rest. Each error consumes at least the rest of a line, and a
            // pass that consumes nothing ends the loop.
            loop {
                let before = self.position();
                match self.reader.skip_game() {
                    Err(_) if self.position() > before => {}
                    _ => break,
                }
            }
            let longest = longest_tag_line(&self.text[consumed..self.consumed()]);
            return Err(if longest > MAX_TAG_LINE {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("a tag line of {longest} bytes, too long to read: game skipped"),
                )
            } else {
                e
            });
        }
        if self.game.result.is_empty()
            && let Some(outcome) = self.game.outcome
        {
            self.game.result = outcome.to_string().into_bytes();
        }
        Ok(Some(&self.game))
    }

    /// The offset (in the input) of the last game [`GameReader::next_game`]
    /// started reading: where a game it gave up on starts.
    pub fn game_offset(&self) -> u64 {
        self.game.offset
    }

    /// The offset (in the input) just past what has been consumed.
    pub fn position(&self) -> u64 {
        self.base + self.consumed() as u64
    }

    /// How much of the text has been consumed: what was read from it less
    /// what pgn-reader holds in its buffer unparsed.
    fn consumed(&self) -> usize {
        self.pos.get() - self.reader.buffer().len()
    }
}
