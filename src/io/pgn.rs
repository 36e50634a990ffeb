//! PGN games read straight from a slice of text: tags, the main line's
//! moves, and the `[%eval]` and `[%clk]` annotations of each move; of the
//! variations, only the first alternative to each main-line move is kept
//! (its first [`MAX_VARIATION`] moves: an analysis's better line, as
//! Lichess writes it), and only when annotations are read.
//!
//! [`GameReader`] reads the games of one chunk of text into a reused
//! [`ParsedGame`], which borrows its tag values from the text (nothing is
//! copied; [`TagValue::unescaped`] undoes `\"` and `\\` when a value is
//! used), and knows each game's byte offset. It reads PGN as real
//! databases, GUIs, forums and other readers' test suites write it:
//!
//! * tags: `[Name "value"]` on lines of their own, indented or not, or
//!   several on one line (`[Event "x"] [Site "y"][Date "z"]`), with `\"`
//!   and `\\` escapes; a value that holds a bare quote (`[Site "Leningrad
//!   "living pi"]`, as old exports write) runs, as python-chess reads it,
//!   to the last quote before the line's closing bracket; the moves may
//!   start on the last tag's line (`[Result "1-0"] e4 *`); tag blocks
//!   separated by blank lines are one game's tags; a line opening with `[`
//!   that holds no tag at all is passed over and counted in
//!   [`ParsedGame::malformed_tags`];
//! * moves in every spelling [`San::parse`] reads: promotions as `e8=Q`,
//!   `e8Q`, `e8(Q)`, `e8/Q`, `e8=q`; castling with `O` or `0`; check
//!   marks, `!`/`?` glyphs and en-passant marks (`e.p.`, `ep`) attached;
//!   null moves `--`, `Z0`, `0000`, `@@@@`; coordinates (`g1f3`);
//! * known non-moves: move numbers (`12.`, `12...`, `12`, `12.e4`),
//!   ellipses standing alone or before a move (`1. ... Ba5`, `7. .. fxe5`,
//!   `...Nf6`), NAGs (`$4`), glyphs standing alone (`!?`, `+-`, `=`, `N`,
//!   `±`, `e.p.`, `ep`), results, comments (`{...}`, `;` to the end of the
//!   line), `%` escape lines, forum wrappers `[pgn]` and `[/pgn]`.
//!
//! A game ends
//!
//! * at a result token of its main line (`1-0`, `0-1`, `1/2-1/2`, `*`):
//!   comments and NAGs after it on the same line are its own, anything
//!   else on that line starts the next game (games written one per line,
//!   with no blank line and no tags between them);
//! * at a line opening with a tag (the next game's tags);
//! * at a blank line after its moves, unless what follows the blank lines
//!   (and any comments) is its result or its next move number (`23.` or
//!   `23...`, as the game's numbering goes on): a blank line before the
//!   final result, or between tags, comments and the first move, is no
//!   end;
//! * at the end of the text.
//!
//! A game holding nothing but comments (a file's leading comment) is no
//! game.
//!
//! No token is skipped silently: a token that is neither a move nor a
//! known non-move (`Nb6x`, `hello`, a piece drop `N@f3`) ends the game's
//! move list, and [`ParsedGame::bad_token`] names it, so the game is
//! rejected at that ply and not at a later move that no longer fits.
//!
//! ```
//! use kibitz::GameReader;
//!
//! let text = b"[Event \"t\"]\n[Result \"1-0\"]\n\n1. e4 { [%eval 0.25] } e5 (1... c5) 2. Qh5 1-0\n";
//! let mut reader = GameReader::new(&text[..], 0, &[]);
//! let game = reader.next_game().unwrap();
//! assert_eq!(game.moves.len(), 3);
//! assert_eq!(game.evals[0], Some(kibitz::PgnEval::Cp(25)));
//! assert_eq!(game.result.raw(), b"1-0");
//! assert!(reader.next_game().is_none());
//! ```

use std::borrow::Cow;

use crate::chess::san::{San, parse_window};

/// An evaluation written in a comment, White's point of view, as Lichess
/// writes `[%eval 0.25]` and `[%eval #-3]`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, serde::Serialize)]
pub enum PgnEval {
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

/// A tag's value as it stands in the text, between its quotes: escapes
/// (`\"`, `\\`) are kept until [`TagValue::unescaped`] undoes them.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug, Hash)]
pub struct TagValue<'a>(&'a [u8]);

impl<'a> TagValue<'a> {
    /// A value from its text as written.
    pub const fn new(raw: &'a [u8]) -> TagValue<'a> {
        TagValue(raw)
    }

    /// The value as written, escapes included.
    pub const fn raw(&self) -> &'a [u8] {
        self.0
    }

    /// Whether the value is empty (or the tag absent).
    pub const fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The value with `\"` and `\\` unescaped, as the PGN standard writes
    /// them (borrowed when it holds no backslash).
    pub fn unescaped(&self) -> Cow<'a, [u8]> {
        let raw = self.0;
        if memchr::memchr(b'\\', raw).is_none() {
            return Cow::Borrowed(raw);
        }
        let mut out = Vec::with_capacity(raw.len());
        let mut i = 0;
        while i < raw.len() {
            if raw[i] == b'\\' && matches!(raw.get(i + 1), Some(b'"' | b'\\')) {
                i += 1;
            }
            out.push(raw[i]);
            i += 1;
        }
        Cow::Owned(out)
    }

    /// The unescaped value as text (invalid UTF-8 replaced), for messages
    /// and records.
    pub fn to_string_lossy(self) -> String {
        String::from_utf8_lossy(&self.unescaped()).into_owned()
    }
}

/// One game: tags, moves, annotations, and where it starts.
#[derive(Clone, Debug, Default)]
pub struct ParsedGame<'a> {
    /// Byte offset of the game's first byte in the decompressed text.
    pub offset: u64,
    /// The main line had more than [`MAX_GAME_PLIES`] moves: only the first
    /// ones are kept (memory stays bounded whatever the game's length).
    pub too_long: bool,
    /// `[Event]`.
    pub event: TagValue<'a>,
    /// `[Site]`.
    pub site: TagValue<'a>,
    /// `[Date]`.
    pub date: TagValue<'a>,
    /// `[Round]`.
    pub round: TagValue<'a>,
    /// `[White]`.
    pub white: TagValue<'a>,
    /// `[Black]`.
    pub black: TagValue<'a>,
    /// `[Result]` (or the result token of the movetext if there is no tag).
    pub result: TagValue<'a>,
    /// `[FEN]`, if any.
    pub fen: Option<TagValue<'a>>,
    /// `[SetUp]`.
    pub setup: TagValue<'a>,
    /// `[Variant]`.
    pub variant: TagValue<'a>,
    /// Values of the extra tags asked for, in the order asked.
    pub extra: Vec<Option<TagValue<'a>>>,
    /// Lines opening with `[` among the tags that hold no tag (`[White"x"]`,
    /// `[Event "x`): passed over, as python-chess passes over them.
    pub malformed_tags: u32,
    /// The main line, up to the first bad token.
    pub moves: Vec<San>,
    /// The token after the last of [`ParsedGame::moves`] that stopped the
    /// main line, if one did.
    pub bad_token: Option<BadToken>,
    /// `[%eval]` after each move.
    pub evals: Vec<Option<PgnEval>>,
    /// `[%clk]` after each move, in seconds.
    pub clocks: Vec<Option<u32>>,
    /// The first variation after each move: the line played instead of it
    /// (empty for none), at most `MAX_VARIATION` (12) moves.
    pub variations: Vec<Vec<San>>,
    /// The result token that ended the main line, if one did.
    pub outcome: Option<&'static [u8]>,
    /// Tags read, of any name.
    tags: u32,
    /// Main-line moves written, those after a bad token included.
    written_moves: usize,
}

impl<'a> ParsedGame<'a> {
    fn clear(&mut self, extra_tags: usize) {
        self.too_long = false;
        self.event = TagValue::default();
        self.site = TagValue::default();
        self.date = TagValue::default();
        self.round = TagValue::default();
        self.white = TagValue::default();
        self.black = TagValue::default();
        self.result = TagValue::default();
        self.fen = None;
        self.setup = TagValue::default();
        self.variant = TagValue::default();
        self.extra.clear();
        self.extra.resize(extra_tags, None);
        self.malformed_tags = 0;
        self.moves.clear();
        self.bad_token = None;
        self.evals.clear();
        self.clocks.clear();
        self.variations.clear();
        self.outcome = None;
        self.tags = 0;
        self.written_moves = 0;
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

    /// Whether anything but comments was read: a tag, a move, a result, a
    /// token that is no move.
    fn has_content(&self) -> bool {
        self.tags > 0
            || self.written_moves > 0
            || self.bad_token.is_some()
            || self.outcome.is_some()
            || self.malformed_tags > 0
    }

    /// The fullmove number and side (true: Black) of the move after the
    /// main line's written moves, from the `[FEN]` tag's counters.
    fn next_move_number(&self) -> (u64, bool) {
        let (mut full, mut black) = (1u64, false);
        if let Some(fen) = self.fen {
            let mut fields = fen.raw().split(|b| b.is_ascii_whitespace()).filter(|f| !f.is_empty());
            black = fields.nth(1) == Some(b"b");
            full = fields
                .nth(3)
                .and_then(|f| std::str::from_utf8(f).ok()?.parse::<u64>().ok())
                .unwrap_or(1)
                .clamp(1, 1 << 40);
        }
        let ply = 2 * (full - 1) + u64::from(black) + self.written_moves as u64;
        (ply / 2 + 1, ply % 2 == 1)
    }
}

/// Parses `[%eval ...]` in a comment.
pub fn parse_eval(comment: &[u8]) -> Option<PgnEval> {
    let at = memchr::memmem::find(comment, b"[%eval ")?;
    let rest = comment[at + 7..].trim_ascii_start();
    let end = rest
        .iter()
        .position(|&b| b == b']' || b == b',' || b.is_ascii_whitespace())
        .unwrap_or(rest.len());
    let token = std::str::from_utf8(&rest[..end]).ok()?;
    if let Some(mate) = token.strip_prefix('#') {
        return mate.parse::<i32>().ok().map(PgnEval::Mate);
    }
    let pawns: f64 = token.parse().ok()?;
    if !pawns.is_finite() {
        return None;
    }
    Some(PgnEval::Cp((pawns * 100.0).round().clamp(-1e6, 1e6) as i32))
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

/// Bytes that end a movetext token: whitespace, comments, variations,
/// NAGs, and `[` (a forum wrapper glued to the last move).
static TOKEN_END: [bool; 256] = {
    let mut table = [false; 256];
    let ends = b" \t\r\n\x0b\x0c{}();$[";
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

/// Whether `b` may stand in a tag name after its first character.
fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'+' | b'#' | b'=' | b':' | b'-')
}

/// Whether a tag starts at `j`: `[`, a name (a letter or digit, then
/// letters, digits and `_+#=:-`), whitespace and a quote. Forum wrappers
/// (`[pgn]`), diagram marks (`[#]`) and commands (`[%clk ...]`) are no
/// tags. The splitter cuts chunks at tags by the same rule.
pub(crate) fn is_tag_start(t: &[u8], j: usize) -> bool {
    if t.get(j) != Some(&b'[') || !t.get(j + 1).is_some_and(u8::is_ascii_alphanumeric) {
        return false;
    }
    let mut k = j + 2;
    while k < t.len() && is_name_byte(t[k]) {
        k += 1;
    }
    let spaces = k;
    while k < t.len() && matches!(t[k], b' ' | b'\t') {
        k += 1;
    }
    k > spaces && t.get(k) == Some(&b'"')
}

/// The length of a forum wrapper, `[pgn]` or `[/pgn]` in any case, at `i`.
fn wrapper_len(t: &[u8], i: usize) -> Option<usize> {
    let rest = &t[i..];
    for wrapper in [&b"[pgn]"[..], b"[/pgn]"] {
        if rest.len() >= wrapper.len() && rest[..wrapper.len()].eq_ignore_ascii_case(wrapper) {
            return Some(wrapper.len());
        }
    }
    None
}

/// One tag read from a line: its name, its raw value and where it ends.
struct Tag<'a> {
    name: &'a [u8],
    value: &'a [u8],
    end: usize,
}

/// Reads the tag at `p` of `line` (a line without its line feed; `line[p]`
/// is `[`). The value ends at the first unescaped quote followed by a
/// closing bracket, unless text other than another tag follows that
/// bracket on a line that itself ends with `"]`: then, as python-chess
/// reads it, the value runs to the line's last `"]`. A value whose quote
/// never closes (`[Event "Ugra Cup \"]`, the quote escaped) is read the
/// same way.
fn read_tag(line: &[u8], p: usize) -> Option<Tag<'_>> {
    let mut k = p + 1;
    if !line.get(k).is_some_and(u8::is_ascii_alphanumeric) {
        return None;
    }
    while k < line.len() && is_name_byte(line[k]) {
        k += 1;
    }
    let name = &line[p + 1..k];
    let spaces = k;
    while k < line.len() && matches!(line[k], b' ' | b'\t') {
        k += 1;
    }
    if k == spaces || line.get(k) != Some(&b'"') {
        return None;
    }
    let start = k + 1;
    let trimmed = line.trim_ascii_end();
    // python-chess's reading: the last quote before the closing bracket.
    let last_quote = || {
        (trimmed.ends_with(b"\"]") && trimmed.len() - 2 >= start).then(|| Tag {
            name,
            value: &line[start..trimmed.len() - 2],
            end: line.len(),
        })
    };
    let mut q = start;
    while q < line.len() {
        match line[q] {
            b'\\' => q += 2,
            b'"' => {
                let mut after = q + 1;
                while after < line.len() && matches!(line[after], b' ' | b'\t') {
                    after += 1;
                }
                if line.get(after) == Some(&b']') {
                    let end = after + 1;
                    let rest = line[end..].trim_ascii();
                    if rest.is_empty() || rest[0] == b'[' || !trimmed.ends_with(b"\"]") {
                        return Some(Tag { name, value: &line[start..q], end });
                    }
                    return last_quote();
                }
                q += 1;
            }
            _ => q += 1,
        }
    }
    last_quote()
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
/// forms), a novelty, en-passant marks.
const GLYPHS: [&str; 32] = [
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
    "e.p",
    "ep",
    "\u{25a1}",
    "\u{394}",
    "\u{22a5}",
    "\u{2192}",
    "\u{2191}",
    "\u{21c6}",
    "\u{27f3}",
];

/// Whether `tok` is an en-passant mark standing alone with the check mark
/// and glyphs that belong to its move (`exd6 e.p.+`, `exd6 ep?!`): read as
/// the mark alone is, and as `exd6e.p.?!` glued to its move is.
fn is_en_passant_mark(tok: &[u8]) -> bool {
    let end =
        tok.iter().rposition(|b| !matches!(b, b'+' | b'#' | b'!' | b'?')).map_or(0, |i| i + 1);
    end < tok.len() && matches!(&tok[..end], b"e.p." | b"e.p" | b"ep")
}

/// The horizontal ellipsis, `…`, in UTF-8.
const ELLIPSIS: &[u8] = "\u{2026}".as_bytes();

/// `tok` without the dots and ellipses it opens with.
fn strip_dots(mut tok: &[u8]) -> &[u8] {
    loop {
        if let Some(rest) = tok.strip_prefix(b".") {
            tok = rest;
        } else if let Some(rest) = tok.strip_prefix(ELLIPSIS) {
            tok = rest;
        } else {
            return tok;
        }
    }
}

/// What a movetext token is.
enum Token {
    /// A move (or null move).
    Move(San),
    /// A result.
    Result(&'static [u8]),
    /// A move number, ellipsis, glyph or assessment.
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
    if first == b'.' || tok.starts_with(ELLIPSIS) {
        // `...`, `..`, `…` alone (`1. ... Ba5`), or before a move.
        let rest = strip_dots(tok);
        return if rest.is_empty() { Token::NonMove } else { classify(rest) };
    }
    if tok.iter().all(|b| matches!(b, b'!' | b'?')) || GLYPHS.iter().any(|g| g.as_bytes() == tok) {
        return Token::NonMove;
    }
    if is_en_passant_mark(tok) {
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
    let rest = strip_dots(&tok[digits..]);
    if rest.is_empty() {
        return Token::NonMove;
    }
    // Shorter than `tok` by the number's digits.
    classify(rest)
}

/// Where a move read by the fast path ends, if it ends as a token does: a
/// check mark, up to two `!`/`?` glyphs, then a byte that ends tokens (or
/// the text's end). `i` is just past the move; the text holds at least
/// three bytes after it or ends within them.
#[inline(always)]
fn move_end(t: &[u8], mut i: usize) -> Option<usize> {
    let Some(&b) = t.get(i) else { return Some(i) };
    if b == b' ' {
        // The common case: a space, and nothing attached to the move.
        return Some(i);
    }
    if matches!(b, b'+' | b'#') {
        i += 1;
    }
    let glyphs = i + 2;
    while i < glyphs && matches!(t.get(i), Some(b'!' | b'?')) {
        i += 1;
    }
    match t.get(i) {
        None => Some(i),
        // `e8(Q)`: a promotion in parentheses, for the general reading.
        Some(b'(') => None,
        Some(&b) => TOKEN_END[b as usize].then_some(i),
    }
}

/// Whether `b` may stand in a tag name after its first character
/// (`is_name_byte`, as a table).
static NAME_BYTE: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] =
            c.is_ascii_alphanumeric() || matches!(c, b'_' | b'+' | b'#' | b'=' | b':' | b'-');
        b += 1;
    }
    table
};

/// The index of the first `a` or `b` at or after `i`, or the text's end:
/// eight bytes at a time over the first 32 (tag values and clock comments
/// are a few words long, too short for memchr's setup to pay), memchr2
/// beyond.
#[inline(always)]
fn find2(t: &[u8], mut i: usize, a: u8, b: u8) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let short = i + 32;
    while i < short
        && let Some(chunk) = t.get(i..i + 8)
    {
        let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        // A zero byte in `word ^ pattern` marks the byte sought.
        let has = |byte: u8| {
            let x = word ^ (ONES * u64::from(byte));
            x.wrapping_sub(ONES) & !x & HIGHS
        };
        let found = has(a) | has(b);
        if found != 0 {
            return i + (found.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    if i >= t.len() {
        return t.len();
    }
    memchr::memchr2(a, b, &t[i..]).map_or(t.len(), |k| i + k)
}

/// Whether a token at `i` of `t` is a result.
fn is_result_at(t: &[u8], i: usize) -> bool {
    let end = token_end(t, i + 1).max(i + 1);
    result_token(&t[i..end.min(t.len())]).is_some()
}

/// Reads the games of a chunk of PGN text one at a time.
pub struct GameReader<'a> {
    text: &'a [u8],
    /// Where reading goes on.
    at: usize,
    base: u64,
    game: ParsedGame<'a>,
    extra_tags: &'a [Vec<u8>],
    annotations: bool,
    /// Games' places other than their offsets (rows of a Parquet file):
    /// (first byte in `text`, place), ascending.
    places: &'a [(u32, u64)],
}

impl<'a> GameReader<'a> {
    /// A reader over `text`, whose first byte is at offset `base` of the
    /// input; `extra_tags` names tags to keep besides the standard ones.
    pub fn new(text: &'a [u8], base: u64, extra_tags: &'a [Vec<u8>]) -> GameReader<'a> {
        GameReader {
            text,
            at: 0,
            base,
            game: ParsedGame::default(),
            extra_tags,
            annotations: true,
            places: &[],
        }
    }

    /// Gives each game the place of the last entry of `places` (first
    /// byte in the text, place) at or before its first byte as its offset:
    /// the rows of a Parquet file's games, which have no byte offset of
    /// their own. Empty (the default): offsets are byte offsets.
    pub fn set_places(&mut self, places: &'a [(u32, u64)]) {
        self.places = places;
    }

    /// Whether to parse `[%eval]` and `[%clk]` comments and keep the first
    /// variation after each move (on by default).
    pub fn set_annotations(&mut self, on: bool) {
        self.annotations = on;
    }

    /// Reads the next game, or `None` at the end of the text. Every text
    /// is read: what is not a game's tags, moves or known non-moves is a
    /// `BadToken` of the game it stands in.
    pub fn next_game(&mut self) -> Option<&ParsedGame<'a>> {
        loop {
            let start = self.skip_to_game()?;
            self.game.clear(self.extra_tags.len());
            self.game.offset = self.base + start as u64;
            if !self.places.is_empty() {
                let k = self.places.partition_point(|&(p, _)| p as usize <= start);
                if let Some(&(_, place)) = k.checked_sub(1).and_then(|k| self.places.get(k)) {
                    self.game.offset = place;
                }
            }
            let (movetext, line_start) = self.read_tags(start);
            self.at = self.read_movetext(movetext, line_start).max(start + 1);
            if self.game.result.is_empty()
                && let Some(outcome) = self.game.outcome
            {
                self.game.result = TagValue(outcome);
            }
            if self.game.has_content() {
                return Some(&self.game);
            }
        }
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

    /// Skips what stands between games (whitespace, byte-order marks, `%`
    /// and `;` lines, forum wrappers) and returns where the next game
    /// starts.
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
            } else if i < t.len()
                && let Some(n) = wrapper_len(t, i)
            {
                i += n;
            } else {
                break;
            }
        }
        self.at = i;
        (i < t.len()).then_some(i)
    }

    /// Reads the tag section starting at `i` and returns where the
    /// movetext starts, and whether that is a line's start. Lines opening
    /// with `[` hold tags (one that holds none is passed over and counted);
    /// blank, `%` and `;` lines among them are skipped.
    fn read_tags(&mut self, mut i: usize) -> (usize, bool) {
        let t = self.text;
        loop {
            let mut j = i;
            while j < t.len() && is_space(t[j]) {
                j += 1;
            }
            match t.get(j) {
                None => return (t.len(), true),
                Some(b'\n') => i = j + 1,
                Some(b'%') if j == i => i = next_line(t, i),
                Some(b';') => i = next_line(t, j),
                Some(b'[') => {
                    // The common line, `[Name "value"]` alone, in one pass.
                    if let Some((name, value, next)) = Self::simple_tag(t, j) {
                        self.tag(name, value);
                        i = next;
                        continue;
                    }
                    match self.tag_line(j) {
                        Some(movetext) => return (movetext, false),
                        None => i = next_line(t, j),
                    }
                }
                Some(_) => return (i, true),
            }
        }
    }

    /// Reads the tags of the line whose first non-space byte, `j`, is `[`.
    /// Returns where movetext starts on the same line, if any does.
    fn tag_line(&mut self, j: usize) -> Option<usize> {
        let t = self.text;
        let end = line_end(t, j);
        let line = &t[j..end];
        let mut p = 0;
        let mut tags = 0;
        loop {
            while p < line.len() && is_space(line[p]) {
                p += 1;
            }
            if p == line.len() {
                return None;
            }
            if let Some(n) = wrapper_len(line, p) {
                p += n;
                continue;
            }
            match (line[p], read_tag(line, p)) {
                (b'[', Some(tag)) => {
                    self.tag(tag.name, tag.value);
                    tags += 1;
                    p = tag.end;
                }
                (b'[', None) if tags == 0 => {
                    self.game.malformed_tags += 1;
                    return None;
                }
                _ => return Some(j + p),
            }
        }
    }

    /// The tag line at `j` if it is the common one: `[Name "value"]` alone
    /// on its line, a single space between name and value, no quote inside
    /// the value. Returns the name, the value and the next line's start.
    /// Read in one pass, without looking for the line's end first.
    #[inline(always)]
    fn simple_tag(t: &'a [u8], j: usize) -> Option<(&'a [u8], &'a [u8], usize)> {
        let mut k = j + 1;
        if !t.get(k).is_some_and(u8::is_ascii_alphanumeric) {
            return None;
        }
        while k < t.len() && NAME_BYTE[t[k] as usize] {
            k += 1;
        }
        if t.get(k) != Some(&b' ') || t.get(k + 1) != Some(&b'"') {
            return None;
        }
        let start = k + 2;
        let close = find2(t, start, b'"', b'\n');
        if t.get(close) != Some(&b'"') || t.get(close + 1) != Some(&b']') {
            return None;
        }
        let mut next = close + 2;
        while next < t.len() && is_space(t[next]) {
            next += 1;
        }
        match t.get(next) {
            None => Some((&t[j + 1..k], &t[start..close], next)),
            Some(b'\n') => Some((&t[j + 1..k], &t[start..close], next + 1)),
            Some(_) => None,
        }
    }

    fn tag(&mut self, name: &[u8], value: &'a [u8]) {
        let game = &mut self.game;
        game.tags += 1;
        let value = TagValue(value);
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
            b"FEN" => {
                game.fen = Some(value);
                return;
            }
            _ => {
                if let Some(k) = self.extra_tags.iter().position(|t| t == name) {
                    game.extra[k] = Some(value);
                }
                return;
            }
        };
        *slot = value;
    }

    /// Reads the movetext starting at `i` (a line's start when `line_start`)
    /// up to the game's end, and returns where the next game may start.
    fn read_movetext(&mut self, mut i: usize, mut line_start: bool) -> usize {
        let t = self.text;
        let len = t.len();
        // Nesting of the variation being read (0: the main line).
        let mut depth = 0u32;
        // The main-line move whose alternative is being read, if kept.
        let mut variation: Option<usize> = None;
        while i < len {
            if line_start {
                line_start = false;
                // A blank line may end the game, a line opening with a tag
                // starts the next game's tags, a `%` line is skipped.
                let mut j = i;
                while j < len && is_space(t[j]) {
                    j += 1;
                }
                match t.get(j) {
                    None => return len,
                    Some(b'\n') => {
                        if self.blank_line_ends_game(j + 1) {
                            return j + 1;
                        }
                        i = j + 1;
                        line_start = true;
                        continue;
                    }
                    Some(b'[') if is_tag_start(t, j) => return i,
                    Some(b'%') if j == i => {
                        i = next_line(t, i);
                        line_start = true;
                        continue;
                    }
                    Some(_) => i = j,
                }
            }
            let b = t[i];
            // The commonest bytes first, before the general dispatch: the
            // space between tokens, moves of the common shapes (read in
            // place, with no second pass over the token), and move numbers
            // (`12.`, `12...`; `12.e4` goes on at its move).
            if b == b' ' {
                i += 1;
                continue;
            }
            if depth == 0
                && let Some(window) = t.get(i..i + 8)
                && let Some((san, n)) = parse_window(window.try_into().expect("8 bytes"))
                && let Some(end) = move_end(t, i + n)
            {
                self.main_move(san);
                // The space after the move, without a turn of the loop.
                i = end + usize::from(t.get(end) == Some(&b' '));
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
                if j > digits_end
                    && (j == len || TOKEN_END[t[j] as usize] || !t[j].is_ascii_digit())
                {
                    i = j + usize::from(t.get(j) == Some(&b' '));
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
                    // The common comment closes on its line (`{ [%clk 0:03:00] }`).
                    let first = find2(t, body, b'}', b'\n');
                    if t.get(first) == Some(&b'}') {
                        if depth == 0 {
                            self.comment(&t[body..first]);
                        }
                        i = first + 1;
                        continue;
                    }
                    // A comment runs to its `}`, across lines, unless the
                    // next game's tags come first (a blank line, then a
                    // line opening with a tag, where the splitter cuts too).
                    match comment_end(t, body) {
                        CommentEnd::Closed(close) => {
                            if depth == 0 {
                                self.comment(&t[body..close]);
                            }
                            i = close + 1;
                        }
                        end => {
                            if depth == 0 {
                                let first_line = line_end(t, i);
                                self.bad(BadTokenKind::UnterminatedComment, &t[i..first_line]);
                            }
                            return match end {
                                CommentEnd::Cut(cut) => cut,
                                _ => len,
                            };
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
                    if b == b'['
                        && let Some(n) = wrapper_len(t, i)
                    {
                        i += n;
                        continue;
                    }
                    let start = i;
                    let mut end = token_end(t, i + 1);
                    // A promotion in parentheses, `e8(Q)`, is one token.
                    if matches!(t[end - 1], b'1' | b'8')
                        && t.get(end) == Some(&b'(')
                        && t.get(end + 1).is_some_and(|b| b"QRBNqrbn".contains(b))
                        && t.get(end + 2) == Some(&b')')
                    {
                        end = token_end(t, end + 3);
                    }
                    let tok = &t[start..end];
                    if depth == 0 {
                        match classify(tok) {
                            Token::Move(san) => self.main_move(san),
                            Token::Result(result) => {
                                self.game.outcome = Some(result);
                                return self.after_result(end);
                            }
                            Token::NonMove => {}
                            Token::Bad(kind) => self.bad(kind, tok),
                        }
                    } else if depth == 1
                        && let Some(k) = variation
                        && let Token::Move(san) = classify(tok)
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

    /// After the result that ended the main line at `i`: the comments and
    /// NAGs on the rest of its line belong to the game; returns where the
    /// next game may start (the next line, or other text on this one).
    fn after_result(&self, mut i: usize) -> usize {
        let t = self.text;
        loop {
            while i < t.len() && is_space(t[i]) {
                i += 1;
            }
            match t.get(i) {
                None => return t.len(),
                Some(b'\n') => return i + 1,
                Some(b';') => return next_line(t, i),
                Some(b'$') => {
                    i += 1;
                    while i < t.len() && t[i].is_ascii_digit() {
                        i += 1;
                    }
                }
                Some(b'{') => match comment_end(t, i + 1) {
                    CommentEnd::Closed(close) => i = close + 1,
                    CommentEnd::Cut(cut) => return cut,
                    CommentEnd::Open => return t.len(),
                },
                Some(_) => return i,
            }
        }
    }

    /// Whether a blank line, followed by the line at `k`, ends the game:
    /// not before anything was played (tags, comments and blank lines come
    /// before move 1), nor when what follows the blank lines and comments
    /// is the game's result or its next move number.
    fn blank_line_ends_game(&self, k: usize) -> bool {
        let game = &self.game;
        if game.written_moves == 0 && game.bad_token.is_none() {
            return false;
        }
        let t = self.text;
        let mut i = k;
        // Only spaces since the last line feed.
        let mut line_start = true;
        loop {
            let Some(&b) = t.get(i) else { return false };
            match b {
                // Another blank line decides for itself: each look ahead
                // stops there, so the text is looked at a bounded number of
                // times whatever its blank lines.
                b'\n' if line_start => return false,
                b'\n' => {
                    i += 1;
                    line_start = true;
                    continue;
                }
                _ if is_space(b) => {
                    i += 1;
                    continue;
                }
                b'%' if i == 0 || t[i - 1] == b'\n' => {
                    i = next_line(t, i);
                    continue;
                }
                b';' => i = line_end(t, i),
                b'{' => match comment_end(t, i + 1) {
                    CommentEnd::Closed(close) => i = close + 1,
                    // Never closed in this game: the game reads it, and says so.
                    CommentEnd::Cut(_) | CommentEnd::Open => return false,
                },
                b'$' => {
                    i += 1;
                    while i < t.len() && t[i].is_ascii_digit() {
                        i += 1;
                    }
                }
                b'[' if line_start && is_tag_start(t, i) => return true,
                b'[' if wrapper_len(t, i).is_some() => i += wrapper_len(t, i).unwrap_or(1),
                _ => return !(is_result_at(t, i) || self.continues_numbering(i)),
            }
            line_start = false;
        }
    }

    /// Whether a move number at `i` is the one the game's next move has:
    /// `N.` for White, `N...` (or `N..`, `N…`, `N. ...`) for Black.
    fn continues_numbering(&self, i: usize) -> bool {
        let t = self.text;
        let digits = t[i..].iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 || digits > 12 {
            return false;
        }
        let Some(number) =
            std::str::from_utf8(&t[i..i + digits]).ok().and_then(|n| n.parse::<u64>().ok())
        else {
            return false;
        };
        let mut j = i + digits;
        let dots = t[j..].iter().take_while(|&&b| b == b'.').count();
        j += dots;
        while j < t.len() && is_space(t[j]) {
            j += 1;
        }
        let ellipsis = t[i + digits + dots..].starts_with(ELLIPSIS)
            || t[j..].starts_with(b"..")
            || t[j..].starts_with(ELLIPSIS);
        let (next, black) = self.game.next_move_number();
        number == next && black == (dots >= 2 || ellipsis)
    }

    /// A main-line move.
    #[inline(always)]
    fn main_move(&mut self, san: San) {
        let game = &mut self.game;
        game.written_moves += 1;
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

/// Where a comment ends.
enum CommentEnd {
    /// At its `}`.
    Closed(usize),
    /// Never closed before the next game's tags start here (a blank line,
    /// then a line opening with a tag: where the splitter cuts too).
    Cut(usize),
    /// Never closed before the text's end.
    Open,
}

/// Where the comment whose text starts at `body` (just past its `{`)
/// ends: one pass up to its `}` or the next game's tags, whichever comes
/// first, so a comment never closed costs no more than its game's text
/// (a search to the text's end for each would make a text of such games
/// quadratic).
fn comment_end(t: &[u8], body: usize) -> CommentEnd {
    let mut line = body;
    let mut p = body;
    loop {
        let Some(k) = memchr::memchr2(b'}', b'\n', &t[p..]) else { return CommentEnd::Open };
        let q = p + k;
        if t[q] == b'}' {
            return CommentEnd::Closed(q);
        }
        // `q` ends the line that starts at `line` (the comment's first line,
        // which holds its `{`, is never blank).
        let blank = line != body && t[line..q].iter().all(|&b| is_space(b));
        if blank && is_tag_start(t, q + 1) {
            return CommentEnd::Cut(q + 1);
        }
        line = q + 1;
        p = q + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::types::{Role, Square};

    fn games(text: &str) -> Vec<ParsedGame<'_>> {
        let mut reader = GameReader::new(text.as_bytes(), 0, &[]);
        let mut out = Vec::new();
        while let Some(game) = reader.next_game() {
            out.push(game.clone());
        }
        out
    }

    fn sans(game: &ParsedGame) -> Vec<String> {
        game.moves.iter().map(|m| m.to_string()).collect()
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
        assert_eq!(game.result.raw(), b"1-0");
    }

    #[test]
    fn tag_values_run_to_the_last_quote() {
        let text = "[Event \"x\"]\n[Site \"Leningrad \"living pi\"]\n[Result \"1-0\"]\n\n\
                    1. e4 e5 1-0\n\n[Event \"y\"]\n\n1. d4 *\n";
        let read = games(text);
        assert_eq!(read.len(), 2);
        assert_eq!(read[0].site.unescaped(), &b"Leningrad \"living pi"[..]);
        assert_eq!((read[0].moves.len(), read[1].moves.len()), (2, 1));
        assert_eq!(read[1].event.raw(), b"y");
        // Escapes, an empty value, lines python-chess does not read as tags
        // (passed over and counted), a tag with text after it: the text is
        // movetext, and no move.
        let text = "[Event \"a \\\"b\\\" \\\\ c\"]\n[Site \"\"]\n[White\"x\"]\n[Black \"y\"]\n\
                    [Round \"1\"] junk\n\n1. e4 *";
        let game = &games(text)[0];
        assert_eq!(game.event.unescaped(), &b"a \"b\" \\ c"[..]);
        assert_eq!((game.site.raw(), game.white.raw()), (&b""[..], &b""[..]));
        assert_eq!((game.black.raw(), game.round.raw()), (&b"y"[..], &b"1"[..]));
        assert_eq!(game.malformed_tags, 1);
        assert_eq!(game.bad_token.as_ref().map(BadToken::text_lossy).as_deref(), Some("junk"));
        // A value ending in a backslash, its closing quote escaped by the
        // standard's rule: read to the last quote, as python-chess reads it.
        let game = &games("[Event \"Ugra Cup \\\"]\n[Site \"?\"]\n\n1. e4 *\n")[0];
        assert_eq!(game.event.raw(), b"Ugra Cup \\");
        assert_eq!(game.site.raw(), b"?");
    }

    #[test]
    fn several_tags_on_a_line_and_moves_after_them() {
        let text = "[A \"b\\\"\"] [C \"A]]\"] [D \"A]][\"] [F \"\\\"A]][\\\"\\\\\"] [G \"\\\"]\"]\n*\n\n\
                    [Event \"e\"] [Site \"s\"][White \"w\"]\n1. e4 *\n\n\
                    [Result \"1-0\"] e4 *\n[Result \"0-1\"] d4 1-0\n\
                    [Variant \"Standard\"] 1. e4 e5 { a comment } *\n";
        let extra = [b"A".to_vec(), b"C".to_vec(), b"D".to_vec(), b"F".to_vec(), b"G".to_vec()];
        let mut reader = GameReader::new(text.as_bytes(), 0, &extra);
        let game = reader.next_game().unwrap();
        let values: Vec<Vec<u8>> =
            game.extra.iter().map(|v| v.unwrap().unescaped().into_owned()).collect();
        assert_eq!(values, [&b"b\""[..], b"A]]", b"A]][", b"\"A]][\"\\", b"\"]"]);
        let game = reader.next_game().unwrap();
        assert_eq!(
            (game.event.raw(), game.site.raw(), game.white.raw()),
            (&b"e"[..], &b"s"[..], &b"w"[..])
        );
        assert_eq!(game.moves.len(), 1);
        let read: Vec<(Vec<String>, Vec<u8>)> =
            std::iter::from_fn(|| reader.next_game().map(|g| (sans(g), g.result.raw().to_vec())))
                .collect();
        assert_eq!(
            read,
            [
                (vec!["e4".to_string()], b"1-0".to_vec()),
                (vec!["d4".to_string()], b"0-1".to_vec()),
                (vec!["e4".to_string(), "e5".to_string()], b"*".to_vec()),
            ]
        );
    }

    #[test]
    fn ellipses_en_passant_marks_and_wrappers() {
        for (text, moves) in [
            ("1. ... Ba5 2. O-O d6 *", "Ba5 O-O d6"),
            ("7. .. fxe5 8. Ng5 *", "fxe5 Ng5"),
            ("12 ... Nf6 13. e4 *", "Nf6 e4"),
            ("3. \u{2026} Nf6 4. ...Nc6 *", "Nf6 Nc6"),
            ("30. gxf6ep Qxf6 31. exd6 e.p. Kh8 32. exd6e.p. *", "gxf6 Qxf6 exd6 Kh8 exd6"),
            // The mark alone with its move's check mark and glyphs.
            ("31. exd6 e.p.?! Kh8 32. exd6 e.p.+ Kg8 33. gxf6 ep!? *", "exd6 Kh8 exd6 Kg8 gxf6"),
            ("31. exd6 e.p?? Kh8 32. exd6 ep# *", "exd6 Kh8 exd6"),
            ("[pgn]\n1. e4 e6 2. d4 d5\n[/pgn]", "e4 e6 d4 d5"),
            ("[pgn]1. e4 e6 2. Qh5#[/pgn]", "e4 e6 Qh5"),
        ] {
            let read = games(text);
            assert_eq!(read.len(), 1, "{text}");
            assert_eq!(read[0].bad_token, None, "{text}");
            assert_eq!(sans(&read[0]).join(" "), moves, "{text}");
        }
    }

    #[test]
    fn a_result_ends_its_game() {
        // One game per line, no tags, no blank lines (pgn-extract's tests).
        let text = "e4 e5 Nf3 Nc6 Bb5 *\nNf3 Nc6 e4 e5 { a comment } Bc4 *\n\
                    d4 d5 1-0 { after the result } $1 ; and a comment\nc4 *\n1. e4 * 1. d4 *";
        let read = games(text);
        let moves: Vec<usize> = read.iter().map(|g| g.moves.len()).collect();
        assert_eq!(moves, [5, 5, 2, 1, 1, 1]);
        assert!(read.iter().all(|g| g.bad_token.is_none()));
        // A result inside a variation does not end the game.
        let read = games("1. e4 (1. d4 d5 1-0) e5 2. Nf3 *");
        assert_eq!((read.len(), read[0].moves.len()), (1, 3));
    }

    #[test]
    fn blank_lines_inside_a_game() {
        // Before the final result, between tags, comments and move 1, and
        // before the game's next move number: the game goes on.
        let text = "[Event \"a\"]\n\n{ before move 1 }\n\n1. e4 e5 2. Nf3\n\n2... Nc6 3. Bb5\n\n\
                    { a last word }\n\n1-0\n\n[Event \"b\"]\n\n1. d4 d5\n\n3. c4 *\n";
        let read = games(text);
        assert_eq!(read.len(), 3, "{:?}", read.iter().map(sans).collect::<Vec<_>>());
        assert_eq!((read[0].moves.len(), read[0].result.raw()), (5, &b"1-0"[..]));
        // `3.` does not go on from 1. d4 d5: a game of its own.
        assert_eq!((read[1].moves.len(), read[2].moves.len()), (2, 1));
        // From a FEN with Black to move, numbering from the FEN.
        let text = "[FEN \"8/8/8/4k3/8/8/8/4K3 b - - 0 40\"]\n\n40... Kd5 41. Kd2\n\n41... Kc5\n\n\
                    1. e4 *";
        let read = games(text);
        assert_eq!(read.iter().map(|g| g.moves.len()).collect::<Vec<_>>(), [3, 1]);
        // Games without results, separated by blank lines and no tags.
        let read = games("1. e4 e5\n\n\n1. d4 d5\n\n1. c4\n");
        assert_eq!(read.iter().map(|g| g.moves.len()).collect::<Vec<_>>(), [2, 2, 1]);
        // Indented tags and movetext (chessops's test).
        let text = "    [Variant \"Standard\"]\n\n1. e4 e5 { c }\n\n    [Variant \"Standard\"] 1. d4 { c }\n\n\
                    \x20   [Variant \"Standard\"]\n1. c4 { c }\n\n\n    1. Nf3 { c }\n";
        let read = games(text);
        assert_eq!(
            read.iter().map(sans).collect::<Vec<_>>(),
            [vec!["e4", "e5"], vec!["d4"], vec!["c4"], vec!["Nf3"]]
        );
    }

    #[test]
    fn a_file_of_comments_alone_holds_no_game() {
        assert!(games("{ created by a program }\n\n% and an escape\n").is_empty());
        let read = games("{ a file comment }\n\n[Event \"a\"]\n\n1. e4 *\n");
        assert_eq!((read.len(), read[0].event.raw()), (1, &b"a"[..]));
    }

    #[test]
    fn game_boundaries() {
        // Blank lines between games, none, tag blocks merged, `%` lines.
        let text = "\u{feff}% header\n[Event \"a\"]\n1. e4 *\n[Event \"b\"]\n\n[Site \"s\"]\n\n\
                    1. d4 (1. c4 c5\n2. Nc3) d5\n  \n1. c4 *\n\n\n";
        let read = games(text);
        assert_eq!(read.len(), 3);
        assert_eq!(read[0].offset, 12);
        assert_eq!((read[1].event.raw(), read[1].site.raw()), (&b"b"[..], &b"s"[..]));
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
        assert_eq!(game.evals, [Some(PgnEval::Cp(17)), Some(PgnEval::Mate(-3)), None]);
        assert_eq!(game.clocks, [Some(180), None, None]);
    }
}
