//! Checking a database's own key file: the Polyglot keys another tool (or
//! an earlier run) computed, in the layout `replay --keys` writes
//! (`game, ply, key, FEN`, tab-separated, games numbered from 1 across all
//! inputs, ply 0 the start position), compared position by position with
//! the keys kibitz computes as it replays.
//!
//! Both sides come in game and ply order, so the key file is streamed beside
//! the replay, one line in hand: memory does not grow with the file. A
//! game the key file lacks, or has and the database does not, is reported
//! once as such, and the comparison goes on with the next game. A line
//! that goes back in game or ply order is skipped as out of order (so one
//! stray line with a large game number makes the lines after it out of
//! order, and the database's games after it missing).
//!
//! ```
//! use kibitz::{KeyChecker, KeyDiff};
//!
//! let file = "# game\tply\tkey\tfen\n\
//!     1\t0\t463b96181691fc9c\trnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\n\
//!     1\t1\t0000000000000000\trnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\n\
//!     3\t0\t463b96181691fc9c\trnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\n";
//! let mut checker = KeyChecker::new(file.as_bytes());
//! let mut diffs = Vec::new();
//! let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
//! let e4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
//! checker.position(1, 0, 0, 0x463b96181691fc9c, start, &mut |d| diffs.push(d))?;
//! checker.position(1, 0, 1, 0x823c9b50fd114196, e4, &mut |d| diffs.push(d))?;
//! checker.position(2, 900, 0, 0x463b96181691fc9c, start, &mut |d| diffs.push(d))?;
//! let summary = checker.finish(&mut |d| diffs.push(d))?;
//! assert!(matches!(diffs[0], KeyDiff::Mismatch { game: 1, ply: 1, .. }));
//! assert!(matches!(diffs[1], KeyDiff::MissingGame { game: 2, offset: 900, .. }));
//! assert!(matches!(diffs[2], KeyDiff::ExtraGame { game: 3, .. }));
//! assert_eq!((summary.compared, summary.matched), (2, 1));
//! # Ok::<(), std::io::Error>(())
//! ```

use std::{
    fs::File,
    io::{self, BufRead, BufReader, Read},
    path::Path,
};

use crate::io::source::Compression;

/// The longest key-file line read whole; a longer one is reported and
/// skipped (a FEN is under 100 bytes).
pub const MAX_LINE: usize = 4096;

/// One difference between the key file and kibitz's keys.
#[derive(Clone, PartialEq, Eq, Debug, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum KeyDiff {
    /// A position whose key differs.
    Mismatch {
        /// Game number (from 1, across all inputs).
        game: u64,
        /// Byte offset of the game in its input's text.
        offset: u64,
        /// Ply (0: the start position).
        ply: u32,
        /// The position, as kibitz replayed it.
        fen: String,
        /// The key file's FEN, when it differs from kibitz's.
        #[serde(skip_serializing_if = "Option::is_none")]
        file_fen: Option<String>,
        /// The key in the key file.
        expected: String,
        /// The key kibitz computed.
        found: String,
    },
    /// A game kibitz replayed that the key file has no line of.
    MissingGame {
        /// Game number.
        game: u64,
        /// Byte offset of the game.
        offset: u64,
        /// Its positions.
        positions: u64,
    },
    /// A game number the key file has and the database does not (beyond
    /// its last game, or a game kibitz could not replay from its start).
    ExtraGame {
        /// Game number.
        game: u64,
        /// The key file's line where it starts.
        line: u64,
        /// Its lines.
        positions: u64,
    },
    /// Positions of a game the key file lacks (the first, and how many).
    MissingPositions {
        /// Game number.
        game: u64,
        /// Byte offset of the game.
        offset: u64,
        /// The first ply missing.
        ply: u32,
        /// How many.
        positions: u64,
    },
    /// Positions of a game the key file has beyond those kibitz replayed
    /// (a game rejected part way, or a longer game in the key file).
    ExtraPositions {
        /// Game number.
        game: u64,
        /// Byte offset of the game.
        offset: u64,
        /// The first such ply.
        ply: u32,
        /// How many.
        positions: u64,
    },
    /// A key-file line that could not be read, or out of game and ply
    /// order: skipped.
    BadLine {
        /// Line number (from 1).
        line: u64,
        /// Why.
        reason: String,
    },
}

impl KeyDiff {
    /// One line for a person.
    pub fn describe(&self) -> String {
        match self {
            KeyDiff::Mismatch { game, offset, ply, fen, file_fen, expected, found } => {
                let theirs = file_fen
                    .as_ref()
                    .map(|f| format!(" (key file's FEN: {f})"))
                    .unwrap_or_default();
                format!(
                    "game {game} at byte {offset}, ply {ply}: key file has {expected}, kibitz \
                     computes {found} for {fen}{theirs}"
                )
            }
            KeyDiff::MissingGame { game, offset, positions } => format!(
                "game {game} at byte {offset}: missing from the key file ({positions} positions)"
            ),
            KeyDiff::ExtraGame { game, line, positions } => format!(
                "game {game} (key file line {line}, {positions} positions): not in the database"
            ),
            KeyDiff::MissingPositions { game, offset, ply, positions } => format!(
                "game {game} at byte {offset}: the key file lacks {positions} positions from ply \
                 {ply}"
            ),
            KeyDiff::ExtraPositions { game, offset, ply, positions } => format!(
                "game {game} at byte {offset}: the key file has {positions} positions from ply \
                 {ply} that kibitz did not replay"
            ),
            KeyDiff::BadLine { line, reason } => format!("key file line {line}: {reason}"),
        }
    }

    /// Whether this is a difference of keys or games (not a line that
    /// could not be read).
    pub fn is_difference(&self) -> bool {
        !matches!(self, KeyDiff::BadLine { .. })
    }
}

/// What a check found, in counts.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, serde::Serialize)]
pub struct KeyCheckSummary {
    /// Positions found in both and compared.
    pub compared: u64,
    /// Of those, with equal keys.
    pub matched: u64,
    /// Of those, with different keys.
    pub mismatched: u64,
    /// Games missing from the key file.
    pub missing_games: u64,
    /// Games in the key file only.
    pub extra_games: u64,
    /// Positions missing from the key file (missing games included).
    pub missing_positions: u64,
    /// Positions in the key file only (extra games included).
    pub extra_positions: u64,
    /// Key-file lines skipped as unreadable or out of order.
    pub bad_lines: u64,
}

impl KeyCheckSummary {
    /// Whether anything differs.
    pub fn differs(&self) -> bool {
        self.mismatched + self.missing_positions + self.extra_positions > 0
    }
}

/// A key-file line.
#[derive(Clone, Debug)]
struct Expected {
    game: u64,
    ply: u32,
    key: u64,
    fen: String,
    line: u64,
}

/// The game in hand on kibitz's side.
#[derive(Clone, Copy, Debug)]
struct Current {
    game: u64,
    offset: u64,
    /// Lines of it the key file had.
    seen: u64,
    /// Positions of it the key file lacked: the first ply and how many.
    missing: Option<(u32, u64)>,
    /// Its positions.
    positions: u64,
}

/// Streams a key file beside a replay; see the module's documentation.
pub struct KeyChecker<R> {
    reader: R,
    line_no: u64,
    buf: Vec<u8>,
    /// The next line of the key file not yet matched.
    next: Option<Expected>,
    eof: bool,
    /// The last (game, ply) read, to find lines out of order.
    last_read: Option<(u64, u32)>,
    current: Option<Current>,
    summary: KeyCheckSummary,
}

/// Opens a key file, plain, zstd or gzip (detected from its bytes); `-` is
/// standard input.
pub fn open_key_file(path: &Path) -> io::Result<Box<dyn BufRead + Send>> {
    let raw: Box<dyn Read + Send> =
        if path.as_os_str() == "-" { Box::new(io::stdin()) } else { Box::new(File::open(path)?) };
    let mut reader = BufReader::with_capacity(1 << 16, raw);
    let head = reader.fill_buf()?;
    Ok(match Compression::detect(head) {
        Compression::Plain => Box::new(reader),
        Compression::Zstd => Box::new(BufReader::with_capacity(
            1 << 16,
            zstd::stream::read::Decoder::with_buffer(reader)?,
        )),
        Compression::Gzip => Box::new(BufReader::with_capacity(
            1 << 16,
            flate2::bufread::MultiGzDecoder::new(reader),
        )),
        // Never detected from a stream's first bytes.
        Compression::Parquet => Box::new(reader),
    })
}

impl<R: BufRead> KeyChecker<R> {
    /// A checker reading the key file from `reader`.
    pub fn new(reader: R) -> KeyChecker<R> {
        KeyChecker {
            reader,
            line_no: 0,
            buf: Vec::with_capacity(256),
            next: None,
            eof: false,
            last_read: None,
            current: None,
            summary: KeyCheckSummary::default(),
        }
    }

    /// The counts so far.
    pub fn summary(&self) -> KeyCheckSummary {
        self.summary
    }

    /// Reads one line into `buf` (without its line feed), at most
    /// [`MAX_LINE`] bytes kept; returns false at the end, and whether the
    /// line was cut.
    fn read_line(&mut self) -> io::Result<Option<bool>> {
        self.buf.clear();
        let mut cut = false;
        let mut any = false;
        loop {
            let chunk = self.reader.fill_buf()?;
            if chunk.is_empty() {
                return Ok(any.then_some(cut));
            }
            any = true;
            let (part, done) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (&chunk[..i], Some(i + 1)),
                None => (chunk, None),
            };
            let room = MAX_LINE.saturating_sub(self.buf.len());
            if part.len() > room {
                cut = true;
            }
            self.buf.extend_from_slice(&part[..part.len().min(room)]);
            let used = done.unwrap_or(chunk.len());
            self.reader.consume(used);
            if done.is_some() {
                return Ok(Some(cut));
            }
        }
    }

    /// Makes `next` the key file's next readable line in order (or none at
    /// its end), reporting the lines skipped.
    fn fill(&mut self, report: &mut dyn FnMut(KeyDiff)) -> io::Result<()> {
        while self.next.is_none() && !self.eof {
            let Some(cut) = self.read_line()? else {
                self.eof = true;
                break;
            };
            self.line_no += 1;
            let line = self.line_no;
            let mut bad = |summary: &mut KeyCheckSummary, reason: String| {
                summary.bad_lines += 1;
                report(KeyDiff::BadLine { line, reason });
            };
            if cut {
                bad(&mut self.summary, format!("longer than {MAX_LINE} bytes"));
                continue;
            }
            let text = self.buf.strip_suffix(b"\r").unwrap_or(&self.buf);
            if text.is_empty() || text.starts_with(b"#") {
                continue;
            }
            match parse_line(text) {
                Ok((game, ply, key, fen)) => {
                    if self.last_read.is_some_and(|last| (game, ply) <= last) {
                        bad(
                            &mut self.summary,
                            format!(
                                "game {game} ply {ply} out of order (after game {} ply {})",
                                self.last_read.unwrap_or_default().0,
                                self.last_read.unwrap_or_default().1
                            ),
                        );
                        continue;
                    }
                    self.last_read = Some((game, ply));
                    self.next = Some(Expected { game, ply, key, fen, line });
                }
                Err(reason) => bad(&mut self.summary, reason),
            }
        }
        Ok(())
    }

    /// Skips the key file's lines of games before `game` that are not the
    /// game in hand: each is a game the database does not have.
    /// (`None`: every game left.)
    fn skip_extra_games(
        &mut self,
        before: Option<u64>,
        report: &mut dyn FnMut(KeyDiff),
    ) -> io::Result<()> {
        loop {
            self.fill(report)?;
            let Some(first) = self.next.take_if(|e| before.is_none_or(|b| e.game < b)) else {
                return Ok(());
            };
            let mut positions = 1;
            loop {
                self.fill(report)?;
                if self.next.take_if(|e| e.game == first.game).is_none() {
                    break;
                }
                positions += 1;
            }
            self.summary.extra_games += 1;
            self.summary.extra_positions += positions;
            report(KeyDiff::ExtraGame { game: first.game, line: first.line, positions });
        }
    }

    /// Closes the game in hand: the key file's remaining lines of it are
    /// positions kibitz did not replay, and what it lacked is reported.
    fn close_game(&mut self, report: &mut dyn FnMut(KeyDiff)) -> io::Result<()> {
        let Some(cur) = self.current.take() else { return Ok(()) };
        let mut extra: Option<(u32, u64)> = None;
        loop {
            self.fill(report)?;
            let Some(e) = self.next.take_if(|e| e.game == cur.game) else { break };
            let first = extra.map_or(e.ply, |(p, _)| p);
            extra = Some((first, extra.map_or(0, |(_, n)| n) + 1));
        }
        if cur.seen == 0 && extra.is_none() {
            self.summary.missing_games += 1;
            self.summary.missing_positions += cur.positions;
            report(KeyDiff::MissingGame {
                game: cur.game,
                offset: cur.offset,
                positions: cur.positions,
            });
        } else if let Some((ply, positions)) = cur.missing {
            self.summary.missing_positions += positions;
            report(KeyDiff::MissingPositions {
                game: cur.game,
                offset: cur.offset,
                ply,
                positions,
            });
        }
        if let Some((ply, positions)) = extra {
            self.summary.extra_positions += positions;
            report(KeyDiff::ExtraPositions { game: cur.game, offset: cur.offset, ply, positions });
        }
        Ok(())
    }

    /// Compares kibitz's position `ply` of game `game` (at byte `offset`),
    /// with key `key` and FEN `fen`, with the key file. Positions must come
    /// in game and ply order.
    pub fn position(
        &mut self,
        game: u64,
        offset: u64,
        ply: u32,
        key: u64,
        fen: &str,
        report: &mut dyn FnMut(KeyDiff),
    ) -> io::Result<()> {
        if self.current.is_none_or(|c| c.game != game) {
            self.close_game(report)?;
            self.skip_extra_games(Some(game), report)?;
            self.current = Some(Current { game, offset, seen: 0, missing: None, positions: 0 });
        }
        // The key file's lines of this game before this ply are positions
        // the caller skipped (a replay's plies run without gaps): extra.
        let mut earlier = 0;
        loop {
            self.fill(report)?;
            match self.next.take_if(|e| e.game == game && e.ply < ply) {
                Some(e) => {
                    earlier += 1;
                    self.summary.extra_positions += 1;
                    report(KeyDiff::ExtraPositions { game, offset, ply: e.ply, positions: 1 });
                }
                None => break,
            }
        }
        let Some(cur) = self.current.as_mut() else { return Ok(()) };
        cur.positions += 1;
        cur.seen += earlier;
        match self.next.take_if(|e| e.game == game && e.ply == ply) {
            Some(e) => {
                cur.seen += 1;
                self.summary.compared += 1;
                if e.key == key {
                    self.summary.matched += 1;
                } else {
                    self.summary.mismatched += 1;
                    report(KeyDiff::Mismatch {
                        game,
                        offset,
                        ply,
                        fen: fen.to_string(),
                        file_fen: (!e.fen.is_empty() && e.fen != fen).then_some(e.fen),
                        expected: format!("{:016x}", e.key),
                        found: format!("{key:016x}"),
                    });
                }
            }
            None => {
                let first = cur.missing.map_or(ply, |(p, _)| p);
                cur.missing = Some((first, cur.missing.map_or(0, |(_, n)| n) + 1));
            }
        }
        Ok(())
    }

    /// Ends the check: the game in hand is closed and the key file's
    /// remaining games are reported as extra.
    pub fn finish(&mut self, report: &mut dyn FnMut(KeyDiff)) -> io::Result<KeyCheckSummary> {
        self.close_game(report)?;
        self.skip_extra_games(None, report)?;
        Ok(self.summary)
    }
}

/// Reads `game, ply, key, FEN` (the FEN may be missing).
fn parse_line(text: &[u8]) -> Result<(u64, u32, u64, String), String> {
    let mut fields = text.splitn(4, |&b| b == b'\t');
    fn field<'a>(f: Option<&'a [u8]>, name: &str) -> Result<&'a str, String> {
        f.and_then(|f| std::str::from_utf8(f).ok())
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .ok_or_else(|| format!("no {name} (expected game, ply, key, FEN, tab-separated)"))
    }
    let game = field(fields.next(), "game number")?;
    let game: u64 =
        game.parse().ok().filter(|&g| g > 0).ok_or_else(|| format!("bad game number {game:?}"))?;
    let ply = field(fields.next(), "ply")?;
    let ply: u32 = ply.parse().map_err(|_| format!("bad ply {ply:?}"))?;
    let key = field(fields.next(), "key")?;
    let hex = key.strip_prefix("0x").unwrap_or(key);
    let key = (hex.len() <= 16)
        .then(|| u64::from_str_radix(hex, 16).ok())
        .flatten()
        .ok_or_else(|| format!("bad key {key:?} (expected 16 hexadecimal digits)"))?;
    let fen =
        fields.next().map(|f| String::from_utf8_lossy(f).trim().to_string()).unwrap_or_default();
    Ok((game, ply, key, fen))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a check of `ours` (game, ply, key) against `file`.
    fn check(file: &str, ours: &[(u64, u32, u64)]) -> (Vec<KeyDiff>, KeyCheckSummary) {
        let mut checker = KeyChecker::new(file.as_bytes());
        let mut diffs = Vec::new();
        for &(game, ply, key) in ours {
            checker.position(game, game * 100, ply, key, "f", &mut |d| diffs.push(d)).unwrap();
        }
        let summary = checker.finish(&mut |d| diffs.push(d)).unwrap();
        (diffs, summary)
    }

    fn file(lines: &[(u64, u32, u64)]) -> String {
        lines.iter().map(|(g, p, k)| format!("{g}\t{p}\t{k:016x}\tf\n")).collect()
    }

    fn games(spec: &[(u64, u32)]) -> Vec<(u64, u32, u64)> {
        spec.iter()
            .flat_map(|&(g, plies)| (0..=plies).map(move |p| (g, p, g * 1000 + u64::from(p))))
            .collect()
    }

    #[test]
    fn equal_keys_give_no_difference() {
        let ours = games(&[(1, 3), (2, 0), (3, 5)]);
        let (diffs, summary) = check(&file(&ours), &ours);
        assert!(diffs.is_empty(), "{diffs:?}");
        assert_eq!((summary.compared, summary.matched), (11, 11));
        assert!(!summary.differs());
    }

    #[test]
    fn each_altered_key_is_reported_once_with_its_game_and_ply() {
        let ours = games(&[(1, 3), (2, 4), (3, 5)]);
        let mut theirs = ours.clone();
        for i in [2, 6, 14] {
            theirs[i].2 ^= 0xff;
        }
        let (diffs, summary) = check(&file(&theirs), &ours);
        let at: Vec<_> = diffs
            .iter()
            .map(|d| match d {
                KeyDiff::Mismatch { game, ply, offset, .. } => (*game, *ply, *offset),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(at, [(1, 2, 100), (2, 2, 200), (3, 5, 300)]);
        assert_eq!((summary.compared, summary.mismatched), (15, 3));
    }

    #[test]
    fn missing_and_extra_games_are_named_and_the_rest_compared() {
        let ours = games(&[(1, 2), (2, 2), (3, 2), (4, 1)]);
        // Game 2 missing from the file; games 5 and 7 extra; game 3 altered.
        let mut theirs = games(&[(1, 2), (3, 2), (4, 1), (5, 3), (7, 0)]);
        theirs[4].2 ^= 1;
        let (diffs, summary) = check(&file(&theirs), &ours);
        assert_eq!(
            diffs,
            [
                KeyDiff::MissingGame { game: 2, offset: 200, positions: 3 },
                KeyDiff::Mismatch {
                    game: 3,
                    offset: 300,
                    ply: 1,
                    fen: "f".into(),
                    file_fen: None,
                    expected: format!("{:016x}", 3001 ^ 1),
                    found: format!("{:016x}", 3001),
                },
                KeyDiff::ExtraGame { game: 5, line: 9, positions: 4 },
                KeyDiff::ExtraGame { game: 7, line: 13, positions: 1 },
            ]
        );
        assert_eq!(summary.missing_games, 1);
        assert_eq!(summary.extra_games, 2);
        assert_eq!(summary.compared, 8);
    }

    #[test]
    fn a_game_cut_short_on_either_side_is_reported() {
        let ours = games(&[(1, 4), (2, 4)]);
        // Game 1 stops at ply 2 in the file; game 2 goes on to ply 6.
        let theirs = games(&[(1, 2), (2, 6)]);
        let (diffs, _) = check(&file(&theirs), &ours);
        assert_eq!(
            diffs,
            [
                KeyDiff::MissingPositions { game: 1, offset: 100, ply: 3, positions: 2 },
                KeyDiff::ExtraPositions { game: 2, offset: 200, ply: 5, positions: 2 },
            ]
        );
    }

    /// Extra games at the end are counted whole, the largest game number
    /// too, and a key file without FENs gives none.
    #[test]
    fn extra_games_at_the_end_are_counted_whole() {
        let text = format!("1\t0\t{:016x}\n{}\t0\t0\n{}\t1\t0\n", 7, u64::MAX, u64::MAX);
        let (diffs, summary) = check(&text, &[(1, 0, 8)]);
        assert!(matches!(&diffs[0], KeyDiff::Mismatch { file_fen: None, .. }), "{diffs:?}");
        assert_eq!(diffs[1], KeyDiff::ExtraGame { game: u64::MAX, line: 2, positions: 2 });
        assert_eq!((summary.extra_games, summary.extra_positions), (1, 2));
        let (diffs, summary) = check(&text, &[]);
        assert_eq!(diffs.len(), 2);
        assert_eq!((summary.extra_games, summary.extra_positions), (2, 3));
    }

    #[test]
    fn bad_and_unordered_lines_are_skipped_and_named() {
        let ours = games(&[(1, 1), (2, 1)]);
        let text = format!(
            "# header\n{}1\t1\tzz\tf\n{}\n\n2\t0\n{}1\t0\t{:016x}\tf\n{}",
            file(&ours[..1]),
            "x".repeat(MAX_LINE + 10),
            file(&ours[1..3]),
            1000,
            file(&ours[3..]),
        );
        let (diffs, summary) = check(&text, &ours);
        let lines: Vec<_> = diffs
            .iter()
            .map(|d| match d {
                KeyDiff::BadLine { line, .. } => *line,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(lines, [3, 4, 6, 9]);
        assert_eq!((summary.compared, summary.matched, summary.bad_lines), (4, 4, 4));
    }
}
