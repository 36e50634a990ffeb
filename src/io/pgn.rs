//! PGN games read straight from a slice of text: tags, the main line's
//! moves, and the `[%eval]` and `[%clk]` annotations of each move; of the
//! variations, only the first alternative to each main-line move is kept
//! (its first [`MAX_VARIATION`] moves: an analysis's better line, as
//! Lichess writes it), and only when annotations are read.
//!
//! [`GameReader`] reads the games of one chunk of text into a reused
//! [`ParsedGame`], and knows each game's byte offset. It reads what real
//! databases hold:
//!
//! * tag lines as python-chess reads them: `[Name "value"]` at the start of
//!   a line, the value running to the last quote before the closing
//!   bracket, so a bare quote inside a value (`[Site "Leningrad "living
//!   pi"]`, as old exports write) neither ends the tag nor starts a game;
//!   `\"` and `\\` are unescaped, as the PGN standard writes them; tag
//!   blocks separated by blank lines are one game's tags;
//! * moves in every spelling [`San::parse`] reads: promotions as `e8=Q`,
//!   `e8Q`, `e8(Q)`, `e8/Q`, `e8=q`; castling with `O` or `0`; check
//!   marks, `!`/`?` glyphs and `e.p.` attached; null moves `--`, `Z0`,
//!   `0000`, `@@@@`; coordinates (`g1f3`);
//! * known non-moves: move numbers (`12.`, `12...`, `12.e4`), NAGs (`$4`),
//!   glyphs standing alone (`!?`, `+-`, `=`, `N`, `±`...), results,
//!   comments (`{...}`, `;` to the end of the line), `%` escape lines;
//! * a game ends at a blank line outside a comment, at a line opening with
//!   `[` after its moves (games written without blank lines between them),
//!   or at the end of the text.
//!
//! No token is skipped silently: a token that is neither a move nor a
//! known non-move (`Nb6x`, `hello`, a piece drop `N@f3`) ends the game's
//! move list, and [`ParsedGame::bad_token`] names it, so the game is
//! rejected at that ply and not at a later move that no longer fits.
//!
//! ```
//! use kibitz::io::pgn::GameReader;
//!
//! let text = b"[Event \"t\"]\n[Result \"1-0\"]\n\n1. e4 { [%eval 0.25] } e5 (1... c5) 2. Qh5 1-0\n";
//! let mut reader = GameReader::new(&text[..], 0, &[]);
//! let game = reader.next_game().unwrap();
//! assert_eq!(game.moves.len(), 3);
//! assert_eq!(game.evals[0], Some(kibitz::io::pgn::Eval::Cp(25)));
//! assert_eq!(game.result, b"1-0");
//! assert!(reader.next_game().is_none());
//! ```

use crate::chess::san::San;

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

/// The most bytes of a bad token kept for messages.
const MAX_TOKEN_TEXT: usize = 64;

/// Why a movetext token ended a game's move list.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum BadTokenKind {
    /// A piece drop (`N@f3`): a move of other variants, not of chess.
    Drop,
    /// Neither a move nor a known non-move.
    NotAMove,
    /// A comment opened with `{` and not closed before the game's end (a
    /// blank line followed by a tag line, or the end of the text).
    UnterminatedComment,
}

/// The token that ended a game's move list, as written.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct BadToken {
    /// What is wrong with it.
    pub kind: BadTokenKind,
    /// Its text (the first 64 bytes at most).
    pub text: Vec<u8>,
}

impl BadToken {
    /// The token's text for messages.
    pub fn text_lossy(&self) -> String {
        String::from_utf8_lossy(&self.text).into_owned()
    }

    /// Why the token cannot be played, for messages.
    pub fn reason(&self) -> &'static str {
        match self.kind {
            BadTokenKind::Drop => "a piece drop, not a chess move",
            BadTokenKind::NotAMove => {
                "not a move, move number, result, glyph or comment: the game is read up to it"
            }
            BadTokenKind::UnterminatedComment => {
                "a comment that is never closed: the game is read up to it"
            }
        }
    }
}

/// Moves of a variation kept: as many as an analysis's line holds.
pub const MAX_VARIATION: usize = 12;

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
    /// The main line, up to the first bad token.
    pub moves: Vec<San>,
    /// The token after the last of [`ParsedGame::moves`] that stopped the
    /// main line, if one did.
    pub bad_token: Option<BadToken>,
    /// `[%eval]` after each move.
    pub evals: Vec<Option<Eval>>,
    /// `[%clk]` after each move, in seconds.
    pub clocks: Vec<Option<u32>>,
    /// The first variation after each move: the line played instead of it
    /// (empty for none), at most [`MAX_VARIATION`] moves.
    pub variations: Vec<Vec<San>>,
    /// The last result token of the main line's movetext.
    pub outcome: Option<&'static [u8]>,
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
        self.bad_token = None;
        self.evals.clear();
        self.clocks.clear();
        self.variations.clear();
        self.outcome = None;
    }

    /// The main line's token at index `i` (ply `i + 1`): a move, the bad
    /// token that ended the main line, or `None` past both.
    pub fn token(&self, i: usize) -> Option<Result<San, &BadToken>> {
        match self.moves.get(i) {
            Some(&san) => Some(Ok(san)),
            None if i == self.moves.len() => self.bad_token.as_ref().map(Err),
            None => None,
        }
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

/// Whitespace inside a line: space, tab, carriage return, vertical tab,
/// form feed.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c)
}

/// Bytes that end a movetext token.
static TOKEN_END: [bool; 256] = {
    let mut table = [false; 256];
    let ends = b" \t\r\n\x0b\x0c{}();$";
    let mut i = 0;
    while i < ends.len() {
        table[ends[i] as usize] = true;
        i += 1;
    }
    table
};

/// The end of the token starting at `i`.
fn token_end(t: &[u8], mut i: usize) -> usize {
    while i < t.len() && !TOKEN_END[t[i] as usize] {
        i += 1;
    }
    i
}

/// The index of the line feed ending the line at `i`, or the text's end.
fn line_end(t: &[u8], i: usize) -> usize {
    memchr::memchr(b'\n', &t[i..]).map_or(t.len(), |k| i + k)
}

/// The start of the line after the one at `i`, or the text's end.
fn next_line(t: &[u8], i: usize) -> usize {
    (line_end(t, i) + 1).min(t.len())
}

/// A tag line (without its line feed) as python-chess's `TAG_REGEX` reads
/// it: `[`, a name of letters, digits and `_+#=:-` (not opening with one
/// of the last six), whitespace, then a value from the first quote to the
/// last quote before a closing bracket that only whitespace follows. The
/// value holds no carriage return. Returns the name and the raw value.
fn tag_line(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let line = line.trim_ascii_end();
    let body = line.strip_prefix(b"[")?.strip_suffix(b"\"]")?;
    let name_len = body
        .iter()
        .position(|&b| !(b.is_ascii_alphanumeric() || b"_+#=:-".contains(&b)))
        .unwrap_or(body.len());
    let name = &body[..name_len];
    if !name.first().is_some_and(u8::is_ascii_alphanumeric) {
        return None;
    }
    let rest = &body[name_len..];
    let space = rest.iter().position(|&b| !b.is_ascii_whitespace()).unwrap_or(rest.len());
    if space == 0 {
        return None;
    }
    let value = rest[space..].strip_prefix(b"\"")?;
    (!value.contains(&b'\r')).then_some((name, value))
}

/// Appends a raw tag value to `out`, with `\"` and `\\` unescaped.
fn unescape_into(raw: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == b'\\' && matches!(raw.get(i + 1), Some(b'"' | b'\\')) {
            i += 1;
        }
        out.push(raw[i]);
        i += 1;
    }
}

/// A result token's canonical form.
fn result_token(tok: &[u8]) -> Option<&'static [u8]> {
    const WHITE: [&[u8]; 3] = [b"1-0", "1\u{2013}0".as_bytes(), "1\u{2014}0".as_bytes()];
    const BLACK: [&[u8]; 3] = [b"0-1", "0\u{2013}1".as_bytes(), "0\u{2014}1".as_bytes()];
    const DRAW: [&[u8]; 5] = [
        b"1/2-1/2",
        "1/2\u{2013}1/2".as_bytes(),
        "\u{bd}-\u{bd}".as_bytes(),
        "\u{bd}\u{2013}\u{bd}".as_bytes(),
        b"1/2",
    ];
    if tok == b"*" {
        Some(b"*")
    } else if WHITE.contains(&tok) {
        Some(b"1-0")
    } else if BLACK.contains(&tok) {
        Some(b"0-1")
    } else if DRAW.contains(&tok) {
        Some(b"1/2-1/2")
    } else {
        None
    }
}

/// Glyphs written as text instead of NAGs, standing alone between moves:
/// check marks, the assessments of positions and moves (ASCII and Unicode
/// forms), a novelty, `e.p.`.
const GLYPHS: [&str; 30] = [
    "+",
    "#",
    "=",
    "+=",
    "=+",
    "+/=",
    "=/+",
    "+/-",
    "-/+",
    "+-",
    "-+",
    "\u{b1}",
    "\u{2213}",
    "\u{2a72}",
    "\u{2a71}",
    "\u{221e}",
    "=/\u{221e}",
    "\u{221e}/=",
    "~",
    "=~",
    "N",
    "TN",
    "e.p.",
    "\u{25a1}",
    "\u{394}",
    "\u{22a5}",
    "\u{2192}",
    "\u{2191}",
    "\u{21c6}",
    "\u{27f3}",
];

/// What a movetext token is.
enum Token {
    /// A move (or null move).
    Move(San),
    /// A result.
    Result(&'static [u8]),
    /// A move number, glyph or assessment.
    NonMove,
    /// Anything else.
    Bad(BadTokenKind),
}

/// Classifies a token (never empty). Moves, the common case, are tried
/// first; the rarer kinds only when a token is no move.
fn classify(tok: &[u8]) -> Token {
    let first = tok[0];
    if first.is_ascii_digit() {
        return classify_numeric(tok);
    }
    if first == b'*' && tok.len() == 1 {
        return Token::Result(b"*");
    }
    if let Ok(san) = San::parse(tok) {
        return Token::Move(san);
    }
    if let Some(result) = result_token(tok) {
        return Token::Result(result);
    }
    if tok.iter().all(|b| matches!(b, b'!' | b'?')) || GLYPHS.iter().any(|g| g.as_bytes() == tok) {
        return Token::NonMove;
    }
    Token::Bad(if tok.contains(&b'@') { BadTokenKind::Drop } else { BadTokenKind::NotAMove })
}

/// Classifies a token that opens with a digit: a move number (`12.`), a
/// move number with its move (`12.e4`, `9.0-0`), a result, castling or a
/// null move written with zeros.
fn classify_numeric(tok: &[u8]) -> Token {
    let digits = tok.iter().position(|b| !b.is_ascii_digit()).unwrap_or(tok.len());
    let dots = tok[digits..].iter().take_while(|&&b| b == b'.').count();
    if digits + dots == tok.len() {
        return if tok == b"0000" { Token::Move(San::Null) } else { Token::NonMove };
    }
    if let Some(result) = result_token(tok) {
        return Token::Result(result);
    }
    if let Ok(san) = San::parse(tok) {
        return Token::Move(san);
    }
    let mut rest = &tok[digits..];
    loop {
        if let Some(r) = rest.strip_prefix(b".") {
            rest = r;
        } else if let Some(r) = rest.strip_prefix("\u{2026}".as_bytes()) {
            rest = r;
        } else {
            break;
        }
    }
    if rest.is_empty() {
        return Token::NonMove;
    }
    // Shorter than `tok` by the number's digits.
    classify(rest)
}

/// Reads the games of a chunk of PGN text one at a time.
pub struct GameReader<'a> {
    text: &'a [u8],
    /// Where reading goes on.
    at: usize,
    base: u64,
    game: ParsedGame,
    extra_tags: &'a [Vec<u8>],
    annotations: bool,
}

impl<'a> GameReader<'a> {
    /// A reader over `text`, whose first byte is at offset `base` of the
    /// input; `extra_tags` names tags to keep besides the standard ones.
    pub fn new(text: &'a [u8], base: u64, extra_tags: &'a [Vec<u8>]) -> GameReader<'a> {
        GameReader { text, at: 0, base, game: ParsedGame::default(), extra_tags, annotations: true }
    }

    /// Whether to parse `[%eval]` and `[%clk]` comments (on by default).
    pub fn set_annotations(&mut self, on: bool) {
        self.annotations = on;
    }

    /// Reads the next game, or `None` at the end of the text. Every text
    /// is read: what is not a game's tags, moves or known non-moves is a
    /// [`BadToken`] of the game it stands in.
    pub fn next_game(&mut self) -> Option<&ParsedGame> {
        let start = self.skip_to_game()?;
        self.game.clear(self.extra_tags.len());
        self.game.offset = self.base + start as u64;
        let movetext = self.read_tags(start);
        self.at = self.read_movetext(movetext);
        if self.game.result.is_empty()
            && let Some(outcome) = self.game.outcome
        {
            self.game.result.extend_from_slice(outcome);
        }
        Some(&self.game)
    }

    /// The offset (in the input) of the last game [`GameReader::next_game`]
    /// read.
    pub fn game_offset(&self) -> u64 {
        self.game.offset
    }

    /// The offset (in the input) just past what has been read.
    pub fn position(&self) -> u64 {
        self.base + self.at as u64
    }

    /// Skips what stands between games (whitespace, a byte-order mark, `%`
    /// and `;` lines) and returns where the next game starts.
    fn skip_to_game(&mut self) -> Option<usize> {
        let t = self.text;
        let mut i = self.at;
        loop {
            while i < t.len() && t[i].is_ascii_whitespace() {
                i += 1;
            }
            if t[i..].starts_with(b"\xef\xbb\xbf") {
                i += 3;
            } else if i < t.len() && matches!(t[i], b'%' | b';') {
                i = next_line(t, i);
            } else {
                break;
            }
        }
        self.at = i;
        (i < t.len()).then_some(i)
    }

    /// Reads the tag section starting at `i` (a line start) and returns
    /// where the movetext starts. Lines opening with `[` are tag lines (one
    /// that is not well formed is passed over, as python-chess does); blank,
    /// `%` and `;` lines among them are skipped.
    fn read_tags(&mut self, mut i: usize) -> usize {
        let t = self.text;
        while i < t.len() {
            match t[i] {
                b'[' => {
                    let end = line_end(t, i);
                    if let Some((name, value)) = tag_line(&t[i..end]) {
                        self.tag(name, value);
                    }
                    i = (end + 1).min(t.len());
                }
                b'%' | b';' => i = next_line(t, i),
                _ => {
                    let mut j = i;
                    while j < t.len() && is_space(t[j]) {
                        j += 1;
                    }
                    match t.get(j) {
                        Some(b'\n') => i = j + 1,
                        None => return t.len(),
                        Some(_) => return i,
                    }
                }
            }
        }
        i
    }

    fn tag(&mut self, name: &[u8], value: &[u8]) {
        let game = &mut self.game;
        let slot = match name {
            b"Event" => &mut game.event,
            b"Site" => &mut game.site,
            b"Date" => &mut game.date,
            b"Round" => &mut game.round,
            b"White" => &mut game.white,
            b"Black" => &mut game.black,
            b"Result" => &mut game.result,
            b"SetUp" => &mut game.setup,
            b"Variant" => &mut game.variant,
            b"FEN" => game.fen.get_or_insert_with(Vec::new),
            _ => match self.extra_tags.iter().position(|t| t == name) {
                Some(k) => game.extra[k].get_or_insert_with(Vec::new),
                None => return,
            },
        };
        unescape_into(value, slot);
    }

    /// Reads the movetext starting at `i` (a line start) up to the game's
    /// end, and returns where the next game may start.
    fn read_movetext(&mut self, mut i: usize) -> usize {
        let t = self.text;
        let len = t.len();
        // Nesting of the variation being skipped (0: the main line).
        let mut depth = 0u32;
        // The main-line move whose alternative is being read, if kept.
        let mut variation: Option<usize> = None;
        let mut line_start = true;
        while i < len {
            if line_start {
                line_start = false;
                // A line of whitespace ends the game, a line opening with
                // `[` starts the next game's tags, a `%` line is skipped.
                let mut j = i;
                while j < len && is_space(t[j]) {
                    j += 1;
                }
                match t.get(j) {
                    None => return len,
                    Some(b'\n') => return j + 1,
                    Some(b'[') if j == i => return i,
                    Some(b'%') if j == i => {
                        i = next_line(t, i);
                        line_start = true;
                        continue;
                    }
                    Some(_) => i = j,
                }
            }
            // The commonest bytes first, before the general dispatch: the
            // space between tokens, and move numbers (`12.`, `12...`),
            // which classify as non-moves.
            let b = t[i];
            if b == b' ' {
                i += 1;
                continue;
            }
            if b.is_ascii_digit() {
                let mut j = i + 1;
                while j < len && t[j].is_ascii_digit() {
                    j += 1;
                }
                let digits_end = j;
                while j < len && t[j] == b'.' {
                    j += 1;
                }
                if j > digits_end && (j == len || TOKEN_END[t[j] as usize]) {
                    i = j;
                    continue;
                }
            }
            match b {
                b'\n' => {
                    i += 1;
                    line_start = true;
                }
                b' ' | b'\t' | b'\r' | 0x0b | 0x0c | b'}' => i += 1,
                b'{' => {
                    let body = i + 1;
                    let close = memchr::memchr(b'}', &t[body..]).map(|k| body + k);
                    // A comment runs to its `}`, across lines, unless the
                    // next game's tags come first (a blank line, then a
                    // line opening with `[`, where the splitter cuts too).
                    let limit = close.unwrap_or(len);
                    let comment = &t[body..limit];
                    let cut = if memchr::memchr(b'\n', comment).is_some() {
                        next_game_in(comment).map(|k| body + k)
                    } else {
                        None
                    };
                    match (close, cut) {
                        (Some(close), None) => {
                            if depth == 0 {
                                self.comment(&t[body..close]);
                            }
                            i = close + 1;
                        }
                        (_, cut) => {
                            if depth == 0 {
                                let first_line = line_end(t, i).min(limit);
                                self.bad(BadTokenKind::UnterminatedComment, &t[i..first_line]);
                            }
                            return cut.unwrap_or(len);
                        }
                    }
                }
                b';' => i = line_end(t, i),
                b'(' => {
                    depth += 1;
                    if depth == 1 {
                        variation = self.variation_target();
                    }
                    i += 1;
                }
                b')' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        variation = None;
                    }
                    i += 1;
                }
                b'$' => {
                    i += 1;
                    while i < len && t[i].is_ascii_digit() {
                        i += 1;
                    }
                }
                _ => {
                    let start = i;
                    let mut end = token_end(t, i);
                    // A promotion in parentheses, `e8(Q)`, is one token.
                    if matches!(t[end - 1], b'1' | b'8')
                        && t.get(end) == Some(&b'(')
                        && t.get(end + 1).is_some_and(|b| b"QRBNqrbn".contains(b))
                        && t.get(end + 2) == Some(&b')')
                    {
                        end = token_end(t, end + 3);
                    }
                    if depth == 0 {
                        self.token(&t[start..end]);
                    } else if depth == 1
                        && let Some(k) = variation
                        && let Token::Move(san) = classify(&t[start..end])
                    {
                        let line = &mut self.game.variations[k];
                        if line.len() < MAX_VARIATION {
                            line.push(san);
                        }
                    }
                    i = end;
                }
            }
        }
        len
    }

    /// A main-line token.
    fn token(&mut self, tok: &[u8]) {
        let game = &mut self.game;
        match classify(tok) {
            Token::Move(san) => {
                if game.bad_token.is_some() {
                    return;
                }
                if game.moves.len() >= MAX_GAME_PLIES {
                    game.too_long = true;
                    return;
                }
                game.moves.push(san);
                if self.annotations {
                    game.evals.push(None);
                    game.clocks.push(None);
                    game.variations.push(Vec::new());
                }
            }
            Token::Result(result) => game.outcome = Some(result),
            Token::NonMove => {}
            Token::Bad(kind) => self.bad(kind, tok),
        }
    }

    /// A token that ends the main line (the first one counts).
    fn bad(&mut self, kind: BadTokenKind, tok: &[u8]) {
        let game = &mut self.game;
        if game.bad_token.is_none() && !game.too_long {
            let text = tok[..tok.len().min(MAX_TOKEN_TEXT)].to_vec();
            game.bad_token = Some(BadToken { kind, text });
        }
    }

    /// The main-line move a variation opening now is an alternative to,
    /// when annotations are read and it is the first for that move.
    fn variation_target(&self) -> Option<usize> {
        let game = &self.game;
        if !self.annotations || game.bad_token.is_some() || game.too_long {
            return None;
        }
        let last = game.moves.len().checked_sub(1)?;
        game.variations[last].is_empty().then_some(last)
    }

    /// A main-line comment: its annotations belong to the move before it.
    fn comment(&mut self, text: &[u8]) {
        let game = &mut self.game;
        if !self.annotations || game.moves.is_empty() || game.bad_token.is_some() {
            return;
        }
        let last = game.moves.len() - 1;
        if let Some(e) = parse_eval(text) {
            game.evals[last] = Some(e);
        }
        if let Some(c) = parse_clock(text) {
            game.clocks[last] = Some(c);
        }
    }
}

/// Where a blank line followed by a line opening with `[` starts the next
/// game's tags inside `text`: the index of that `[`.
fn next_game_in(text: &[u8]) -> Option<usize> {
    let finder = memchr::memmem::Finder::new(b"\n[");
    let mut from = 0;
    while let Some(k) = finder.find(&text[from..]) {
        let at = from + k;
        let before = &text[..at];
        if let Some(n) = memchr::memrchr(b'\n', before)
            && before[n + 1..].iter().all(|&b| is_space(b))
        {
            return Some(at + 1);
        }
        from = at + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::types::{Role, Square};

    fn games(text: &str) -> Vec<ParsedGame> {
        let mut reader = GameReader::new(text.as_bytes(), 0, &[]);
        let mut out = Vec::new();
        while let Some(game) = reader.next_game() {
            out.push(game.clone());
        }
        out
    }

    fn promotion(san: San) -> Option<Role> {
        match san {
            San::Normal { promotion, .. } | San::Coordinates { promotion, .. } => promotion,
            _ => None,
        }
    }

    #[test]
    fn promotions_in_every_spelling() {
        for spelling in [
            "bxa8=Q+", "bxa8Q+", "bxa8Q", "bxa8(Q)", "bxa8(Q)+", "bxa8/Q", "bxa8=q", "bxa8q+",
            "bxa8=Q!?", "bxa8Q#", "b7a8q",
        ] {
            let text = format!("1. e4 d5 2. exd5 c6 3. dxc6 Nf6 4. cxb7 Nbd7 5. {spelling} Nb6 *");
            let game = &games(&text)[0];
            assert_eq!(game.moves.len(), 10, "{spelling}");
            assert_eq!(game.bad_token, None, "{spelling}");
            assert_eq!(promotion(game.moves[8]), Some(Role::Queen), "{spelling}");
        }
        let game = &games("1. e4 e5 2. exd8N *")[0];
        assert_eq!(promotion(game.moves[2]), Some(Role::Knight));
    }

    #[test]
    fn a_token_that_is_no_move_stops_the_main_line_where_it_stands() {
        for (text, moves, token, kind) in [
            ("1. e4 Qe9 2. Nf3 *", 1, "Qe9", BadTokenKind::NotAMove),
            ("1. e4 e5 hello *", 2, "hello", BadTokenKind::NotAMove),
            ("1. e4 e5 2. N@f3 *", 2, "N@f3", BadTokenKind::Drop),
            ("1. e4 e5 2. e8=K *", 2, "e8=K", BadTokenKind::NotAMove),
            ("1. e4 { never closed\n\n[Event \"b\"]\n", 1, "{ never closed", {
                BadTokenKind::UnterminatedComment
            }),
        ] {
            let game = &games(text)[0];
            assert_eq!(game.moves.len(), moves, "{text}");
            let bad = game.bad_token.as_ref().unwrap();
            assert_eq!((bad.text_lossy().trim_end(), bad.kind), (token, kind), "{text}");
            assert!(game.token(moves).unwrap().is_err());
        }
    }

    #[test]
    fn known_non_moves_are_passed_over() {
        let text = "1.e4 $1 e5!? 2. Nf3 += 2...Nc6 3.\u{2026}Bb5 ; a comment\n\
                    % escape\n3... a6 \u{b1} N e.p. !! ?? 4. Ba4 +- 4...Nf6 5.0-0 1-0";
        let game = &games(text)[0];
        assert_eq!(game.bad_token, None);
        assert_eq!(game.moves.len(), 9);
        assert_eq!(game.moves[8], San::Castle(crate::chess::types::CastlingSide::KingSide));
        assert_eq!(game.result, b"1-0");
    }

    #[test]
    fn tag_values_run_to_the_last_quote() {
        let text = "[Event \"x\"]\n[Site \"Leningrad \"living pi\"]\n[Result \"1-0\"]\n\n\
                    1. e4 e5 1-0\n\n[Event \"y\"]\n\n1. d4 *\n";
        let read = games(text);
        assert_eq!(read.len(), 2);
        assert_eq!(read[0].site, b"Leningrad \"living pi");
        assert_eq!((read[0].moves.len(), read[1].moves.len()), (2, 1));
        assert_eq!(read[1].event, b"y");
        // Escapes, an empty value, lines python-chess does not read as tags.
        let text = "[Event \"a \\\"b\\\" \\\\ c\"]\n[Site \"\"]\n[White\"x\"]\n[Black \"y\" ]  \n\
                    [Round \"1\"] junk\n\n1. e4 *";
        let game = &games(text)[0];
        assert_eq!(game.event, b"a \"b\" \\ c");
        assert_eq!((game.site.as_slice(), game.white.as_slice()), (&b""[..], &b""[..]));
        assert_eq!((game.black.as_slice(), game.round.as_slice()), (&b""[..], &b""[..]));
    }

    #[test]
    fn game_boundaries() {
        // Blank lines between games, none, tag blocks merged, `%` lines.
        let text = "\u{feff}% header\n[Event \"a\"]\n1. e4 *\n[Event \"b\"]\n\n[Site \"s\"]\n\n\
                    1. d4 (1. c4 c5\n2. Nc3) d5\n  \n1. c4 *\n\n\n";
        let read = games(text);
        assert_eq!(read.len(), 3);
        assert_eq!(read[0].offset, 12);
        assert_eq!((read[1].event.as_slice(), read[1].site.as_slice()), (&b"b"[..], &b"s"[..]));
        assert_eq!(read[1].moves.len(), 2);
        assert_eq!(
            read[2].moves,
            [San::Normal {
                role: Role::Pawn,
                file: None,
                rank: None,
                capture: false,
                to: Square::C4,
                promotion: None
            }]
        );
        assert!(games(" \n\n% only an escape\n").is_empty());
    }

    #[test]
    fn annotations_follow_their_moves() {
        let text = "1. e4 { [%eval 0.17] [%clk 0:03:00] } 1... e5 { [%eval #-3] } \
                    ( 1... c5 { [%eval 9.9] } ) 2. Nf3 *";
        let game = &games(text)[0];
        assert_eq!(game.evals, [Some(Eval::Cp(17)), Some(Eval::Mate(-3)), None]);
        assert_eq!(game.clocks, [Some(180), None, None]);
    }
}
