//! Cutting text at game boundaries: the splitter that turns decoded text
//! into chunks of whole games, and the boundary searches it and the
//! mapped-file reader use.

use super::{ChunkConfig, Format};

/// When decoding breaks, the text decoded so far almost always ends inside
/// a game, which would otherwise be read as a shorter game (or a game of
/// tags alone) and counted as replayed. Drops that last game (or EPD line)
/// from the splitter unless it is visibly complete (a PGN game ending in its
/// result token, an EPD line ending in a newline), and returns the text
/// offset where the dropped part starts.
pub(super) fn drop_cut_game(splitter: &mut Option<Splitter>) -> Option<u64> {
    let s = splitter.as_mut()?;
    s.compact();
    if s.skipping {
        // Inside an oversized game already reported and dropped.
        return None;
    }
    let end = whole_games_end(&s.buf, s.format);
    if s.buf[end..].iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    s.buf.truncate(end);
    Some(s.offset + end as u64)
}

/// The end of the last whole game (or EPD line) in `buf`, which starts at a
/// game boundary: all of it when the last PGN line is movetext (not a tag,
/// such as a `[Result "1-0` cut short) ending in a result token of its own,
/// else the last boundary. Text whose games are not separated by blank
/// lines has none (the splitter hands it over whole); there the last game
/// starts at the last `[` line whose previous non-blank line is movetext,
/// as pgn-reader starts games.
pub(super) fn whole_games_end(buf: &[u8], format: Format) -> usize {
    if format == Format::Pgn {
        let line = last_line(buf.trim_ascii_end());
        let finished = !line.trim_ascii_start().starts_with(b"[")
            && [&b"1-0"[..], b"0-1", b"1/2-1/2", b"*"].iter().any(|result| {
                line.strip_suffix(*result)
                    .is_some_and(|before| before.last().is_none_or(u8::is_ascii_whitespace))
            });
        if finished {
            return buf.len();
        }
    }
    rfind_boundary(buf, buf.len(), format)
        .or_else(|| {
            (format == Format::Pgn).then(|| {
                rfind_tag_line(buf, buf.len(), |before| {
                    matches!(last_line(before.trim_ascii_end()).trim_ascii_start().first(),
                        Some(c) if *c != b'[' && *c != b'%')
                })
            })?
        })
        .unwrap_or(0)
}

/// The last line of `text` (all of it if it has no line feed).
fn last_line(text: &[u8]) -> &[u8] {
    &text[memchr::memrchr(b'\n', text).map_or(0, |i| i + 1)..]
}

/// What [`Splitter::next`] gives.
pub(super) enum SplitResult {
    /// A chunk: its text offset and bytes.
    Chunk(u64, Vec<u8>),
    /// A game longer than the maximum was dropped: its offset and length.
    Oversized(u64, usize),
    /// Feed more bytes.
    NeedMore,
}

/// Accumulates decoded text and cuts it at game boundaries.
///
/// Text is added at the end of `buf`; chunks are cut from its front. A
/// chunk that is most of what is held takes the buffer itself (the rest
/// moves to a new one); a small chunk is copied out and the front moves on,
/// so that a large piece of text (a decoded zstd frame of several MB) cut
/// into small chunks (annotate's 4 KiB) is copied once, not once per chunk,
/// and no small chunk keeps a large buffer's memory. Between calls to
/// [`Splitter::next`] that return [`SplitResult::NeedMore`], `buf` holds
/// only text not handed over yet.
pub(super) struct Splitter {
    pub(super) format: Format,
    config: ChunkConfig,
    pub(super) buf: Vec<u8>,
    /// Text offset of `buf[0]`.
    pub(super) offset: u64,
    /// `buf[..head]` has been handed over (cut chunks not compacted yet).
    head: usize,
    /// Skipping an oversized game until the next boundary.
    pub(super) skipping: bool,
    /// No boundary lies between the target and here, counted from `head`
    /// (the search resumes here, so a long game arriving read by read is
    /// scanned once).
    searched: usize,
}

impl Splitter {
    pub(super) fn new(format: Format, config: ChunkConfig) -> Splitter {
        Splitter {
            format,
            buf: Vec::with_capacity(config.target * 2),
            config,
            offset: 0,
            head: 0,
            skipping: false,
            searched: 0,
        }
    }

    /// The text not handed over yet.
    fn live(&self) -> &[u8] {
        &self.buf[self.head..]
    }

    /// Cuts the first `end` bytes of the live text as a chunk.
    fn take(&mut self, end: usize) -> Vec<u8> {
        let live = self.buf.len() - self.head;
        // Hand the buffer over only when the chunk is most of it, in use
        // and in size: a chunk keeps its vector's whole capacity alive.
        let hand_over = self.head == 0
            && end * 2 >= live
            && self.buf.capacity() <= 4 * end.max(self.config.target);
        let chunk = if hand_over {
            let mut rest = Vec::with_capacity((self.config.target * 2).max(live - end));
            rest.extend_from_slice(&self.buf[end..]);
            let mut chunk = std::mem::replace(&mut self.buf, rest);
            chunk.truncate(end);
            self.offset += end as u64;
            chunk
        } else {
            let chunk = self.buf[self.head..self.head + end].to_vec();
            self.head += end;
            chunk
        };
        self.searched = 0;
        chunk
    }

    /// Drops the handed-over text from the front of the buffer.
    pub(super) fn compact(&mut self) {
        if self.head > 0 {
            self.buf.drain(..self.head);
            self.offset += self.head as u64;
            self.head = 0;
        }
    }

    /// The text offset of the live text's first byte.
    fn live_offset(&self) -> u64 {
        self.offset + self.head as u64
    }

    pub(super) fn next(&mut self, last: bool) -> SplitResult {
        let result = self.cut(last);
        if matches!(result, SplitResult::NeedMore) {
            self.compact();
        }
        result
    }

    fn cut(&mut self, last: bool) -> SplitResult {
        if self.skipping {
            match find_boundary(self.live(), 1, self.format) {
                Some(b) => {
                    self.take(b);
                    self.skipping = false;
                }
                None => {
                    // Keep only a small tail (a boundary may straddle reads).
                    self.compact();
                    let keep = self.buf.len().min(8);
                    let drop = self.buf.len() - keep;
                    self.buf.drain(..drop);
                    self.offset += drop as u64;
                    self.searched = 0;
                    return SplitResult::NeedMore;
                }
            }
        }
        let len = self.buf.len() - self.head;
        if len == 0 {
            return SplitResult::NeedMore;
        }
        // Cut at the first game boundary after the target size, however much
        // one read brought in: a decoder hands over 256 KiB at a time, and a
        // search job wants chunks of a few games so every worker has work.
        if len > self.config.target {
            let from = self.searched.max(self.config.target);
            if let Some(b) = find_boundary(self.live(), from, self.format) {
                let offset = self.live_offset();
                return SplitResult::Chunk(offset, self.take(b));
            }
            // The last line may be a tag cut short by the read: look at it
            // again when more has come.
            self.searched = memchr::memrchr(b'\n', self.live()).unwrap_or(0);
        }
        if last {
            let offset = self.live_offset();
            return SplitResult::Chunk(offset, self.take(len));
        }
        if len > self.config.max_game {
            // No boundary after the target: whole games before the giant one
            // go out first, then the giant one is skipped.
            if let Some(b) = rfind_boundary(self.live(), len, self.format).filter(|&b| b > 0) {
                let offset = self.live_offset();
                return SplitResult::Chunk(offset, self.take(b));
            }
            let offset = self.live_offset();
            self.skipping = true;
            self.buf.clear();
            self.offset = offset + len as u64;
            self.head = 0;
            return SplitResult::Oversized(offset, len);
        }
        SplitResult::NeedMore
    }
}

/// Whether the `[` at `pos` (at the start of a line, after a blank line)
/// starts a new game: it opens a tag (as the reader sees one), and the last
/// non-blank line before it is not a line of tags alone (tag sections
/// separated by blank lines are one game to the reader; a line of tags
/// with moves after them, `[Result "1-0"] e4 *`, is a game).
fn starts_game(buf: &[u8], pos: usize) -> bool {
    // Preceded by a blank line: "\n\n[" or "\n\r\n[".
    let before = &buf[..pos];
    let blank = before.ends_with(b"\n\n") || before.ends_with(b"\n\r\n");
    if !blank || !crate::io::pgn::is_tag_start(buf, pos) {
        return false;
    }
    let content = before.trim_ascii_end();
    let line = last_line(content).trim_ascii_start();
    let tags_alone = line.starts_with(b"[") && line.ends_with(b"]");
    !content.is_empty() && !tags_alone
}

/// The first boundary at or after `from`: for PGN the start of a game's tag
/// section, for EPD the start of a line.
pub fn find_boundary(buf: &[u8], from: usize, format: Format) -> Option<usize> {
    if from >= buf.len() {
        return None;
    }
    match format {
        Format::Epd => memchr::memchr(b'\n', &buf[from - usize::from(from > 0)..])
            .map(|i| from - usize::from(from > 0) + i + 1)
            .filter(|&b| b < buf.len()),
        Format::Pgn => {
            let finder = memchr::memmem::Finder::new(b"\n[");
            let mut at = from.saturating_sub(1);
            while let Some(i) = finder.find(&buf[at..]) {
                let pos = at + i + 1;
                if pos >= from && starts_game(buf, pos) {
                    return Some(pos);
                }
                at = pos;
            }
            None
        }
    }
}

/// The last boundary before `end`.
pub(super) fn rfind_boundary(buf: &[u8], end: usize, format: Format) -> Option<usize> {
    match format {
        Format::Epd => memchr::memrchr(b'\n', &buf[..end.min(buf.len())]).map(|i| i + 1),
        Format::Pgn => rfind_tag_line(buf, end, |before| starts_game(buf, before.len())),
    }
}

/// The start of the last line before `end` that opens with `[` and whose
/// text before it passes `accept`.
fn rfind_tag_line(buf: &[u8], end: usize, accept: impl Fn(&[u8]) -> bool) -> Option<usize> {
    let finder = memchr::memmem::FinderRev::new(b"\n[");
    let mut until = end.min(buf.len());
    while let Some(i) = finder.rfind(&buf[..until]) {
        if accept(&buf[..=i]) {
            return Some(i + 1);
        }
        until = i;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_games_end_keeps_only_finished_games() {
        let a = "[Event \"a\"]\n\n1. e4 e5 1-0\n\n";
        let cases: [(&str, usize); 8] = [
            ("", 0),
            ("[Event \"b\"]\n\n1. d4 d5 *\n", 1),
            ("[Event \"b\"]\n\n1. d4 d5 2. c4 1/2-1/2", 1),
            // Cut inside the moves, a result half written, a tag section.
            ("[Event \"b\"]\n\n1. d4 d5 2. c4", 0),
            ("[Event \"b\"]\n\n1. d4 d5 1/2-1", 0),
            ("[Event \"b\"]\n[Result \"1-0", 0),
            ("[Event \"b\"]\n[Result \"*", 0),
            // A result token must stand alone.
            (
                "[Event \"b\"]\n\n1. d4 d5 2. Nf3 Nf6 3. Qd3 Qd6 4. Qa3 Qa6 5. Qxa6 bxa6 6. e3 a5 7. b4 a4 8. b5 a3 9. b6 a2 10. bxa70-1",
                0,
            ),
        ];
        for (tail, whole) in cases {
            let buf = format!("{a}{tail}");
            let end = if whole == 1 { buf.len() } else { a.len() };
            assert_eq!(whole_games_end(buf.as_bytes(), Format::Pgn), end, "{tail:?}");
        }
        assert_eq!(whole_games_end(b"[Event \"b\"]\n[Result \"1-0", Format::Pgn), 0);
        // Games without blank lines between them (pgn-reader reads them):
        // the finished ones are kept.
        let dense = b"[Event \"a\"]\n1. e4 *\n[Event \"b\"]\n1. d4 *\n[Event \"c\"]\n1. c4";
        assert_eq!(whole_games_end(dense, Format::Pgn), 40);
        assert!(dense[40..].starts_with(b"[Event \"c\"]"));
        assert_eq!(whole_games_end(b"fen1 w - -\nfen2 b", Format::Epd), 11);
    }

    #[test]
    fn boundaries_skip_tag_only_blocks() {
        let text = b"[A \"1\"]\n\n1. e4 *\n\n[B \"2\"]\n\n[C \"3\"]\n\n1. d4 *\n\n[D \"4\"]\n";
        let first = find_boundary(text, 1, Format::Pgn).unwrap();
        assert!(text[first..].starts_with(b"[B"));
        // [C follows a tag-only block: same game to the parser.
        let second = find_boundary(text, first + 1, Format::Pgn).unwrap();
        assert!(text[second..].starts_with(b"[D"));
        assert_eq!(rfind_boundary(text, text.len(), Format::Pgn), Some(second));
        let crlf = b"[A \"1\"]\r\n\r\n1. e4 *\r\n\r\n[B \"2\"]\r\n";
        assert!(crlf[find_boundary(crlf, 1, Format::Pgn).unwrap()..].starts_with(b"[B"));
    }

    #[test]
    fn splitter_keeps_games_whole() {
        let game = b"[Event \"x\"]\n\n1. e4 e5 2. Nf3 *\n\n";
        let mut text = Vec::new();
        for _ in 0..1000 {
            text.extend_from_slice(game);
        }
        let config = ChunkConfig { target: 1000, max_game: 1 << 20, ..ChunkConfig::default() };
        // Reads smaller and much larger than the target: chunks stay near
        // the target either way (a decoder hands over 256 KiB at a time).
        for read_size in [777, 100_000] {
            let mut s = Splitter::new(Format::Pgn, config.clone());
            let mut chunks = Vec::new();
            for piece in text.chunks(read_size) {
                s.buf.extend_from_slice(piece);
                while let SplitResult::Chunk(off, c) = s.next(false) {
                    chunks.push((off, c));
                }
            }
            while let SplitResult::Chunk(off, c) = s.next(true) {
                chunks.push((off, c));
            }
            let joined: Vec<u8> = chunks.iter().flat_map(|(_, c)| c.iter().copied()).collect();
            assert_eq!(joined, text);
            for (off, c) in &chunks {
                assert!(c.starts_with(b"[Event"), "chunk at {off}");
                assert_eq!(&text[*off as usize..*off as usize + c.len()], &c[..]);
                assert!(c.len() <= config.target + game.len(), "chunk of {} bytes", c.len());
                // No small chunk keeps a large read's buffer alive.
                assert!(
                    c.capacity() <= 4 * (config.target + game.len()),
                    "chunk of {} bytes holds {} (read size {read_size})",
                    c.len(),
                    c.capacity()
                );
            }
            assert!(chunks.len() > 10);
        }
    }
}
