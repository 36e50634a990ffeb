//! PGN reading against python-chess. The shared games are written out again
//! as real databases write them: promotions with and without `=`, upper and
//! lower case; castling with `O` or `0`; check marks kept, dropped or
//! wrong; `!`/`?` glyphs, NAGs, assessment glyphs, comments on one line and
//! across lines, `;` comments, `%` lines, side variations (nested, with
//! comments holding parentheses); move numbers spaced, attached and
//! repeated; tag values holding bare quotes and brackets; a share of games
//! broken by an illegal move or a piece drop. kibitz and python-chess read
//! the same text: the same games, plies, final positions and rejected
//! games. A second text writes what python-chess does not read: promotions
//! as `e8(Q)` and `e8/Q`; Black's move numbers as `12. ...`, `12..`,
//! `12 ...`; en-passant captures marked `exd6ep`, `exd6 e.p.` or `exd6 e.p.?!`; moves on
//! the last tag's line; movetext inside forum wrappers `[pgn]` ...
//! `[/pgn]`; games without tags right after the previous game's result;
//! blank lines before a game's result and before its next move number.
//! kibitz reads it as python-chess reads the first.
//!
//! Needs python3 with python-chess (`pip install chess`), hence the
//! `python-chess` feature.

use std::{collections::BTreeMap, path::Path, process::Command};

use kibitz::{Color, GameReader, Move, ParsedGame, Position, Square, set_start_position};

use crate::util::{Rng, TempDir, shared};

const SOURCES: [&str; 5] = [
    "pgn/lichess/lichess-org_database_2016-05.pgn.zst",
    "pgn/lichess/lichess-org_database_2017-05.pgn.zst",
    "pgn/engine/TCEC_Season_13_-_Superfinal.pgn.zst",
    "pgn/chess960/fics_wild_fr_2009.pgn",
    "pgn/chess960/cutechess-fischerrandom.pgn",
];

/// A source game: its tags, start and moves.
struct Source {
    tags: Vec<(&'static str, String)>,
    start: Position,
    moves: Vec<Move>,
    result: String,
}

fn tags_of(game: &ParsedGame) -> Vec<(&'static str, String)> {
    let mut tags = vec![
        ("Event", game.event.to_string_lossy()),
        ("Site", game.site.to_string_lossy()),
        ("Date", game.date.to_string_lossy()),
        ("Round", game.round.to_string_lossy()),
        ("White", game.white.to_string_lossy()),
        ("Black", game.black.to_string_lossy()),
        ("Result", game.result.to_string_lossy()),
    ];
    if !game.variant.is_empty() {
        tags.push(("Variant", game.variant.to_string_lossy()));
    }
    if let Some(fen) = &game.fen {
        tags.push(("SetUp", "1".into()));
        tags.push(("FEN", fen.to_string_lossy()));
    }
    tags
}

/// The shared games, replayed whole (the sources have no broken game).
fn sources() -> Vec<Source> {
    let startpos = Position::startpos();
    let mut out = Vec::new();
    for file in SOURCES {
        let path = shared(file);
        let bytes = std::fs::read(&path).unwrap();
        let bytes =
            if file.ends_with(".zst") { zstd::decode_all(&bytes[..]).unwrap() } else { bytes };
        let mut reader = GameReader::new(&bytes, 0, &[]);
        while let Some(game) = reader.next_game() {
            let mut pos = Position::startpos();
            set_start_position(game, &mut pos, &startpos).unwrap();
            let start = pos.clone();
            let mut moves = Vec::new();
            for san in &game.moves {
                let m = san.to_move(&pos).unwrap();
                pos.do_move(m);
                moves.push(m);
            }
            assert!(game.bad_token.is_none(), "{file}");
            let result =
                if game.result.is_empty() { "*".into() } else { game.result.to_string_lossy() };
            out.push(Source { tags: tags_of(game), start, moves, result });
        }
    }
    out
}

/// Counts of what the generated text holds, for the report.
#[derive(Default, Debug)]
struct Written {
    games: usize,
    plies: usize,
    promotions: BTreeMap<&'static str, usize>,
    zero_castles: usize,
    check_marks_changed: usize,
    comments: usize,
    variations: usize,
    odd_tags: usize,
    illegal: usize,
    drops: usize,
    /// Forms only the second text holds.
    ellipses: usize,
    en_passant_marks: usize,
    moves_on_tag_lines: usize,
    wrappers: usize,
    tagless: usize,
    blank_before_result: usize,
    blank_before_number: usize,
}

/// Writes movetext into two texts at once: they differ only where a
/// promotion is spelt in a way python-chess does not read.
struct Writer {
    readable: String,
    exotic: String,
    line: usize,
    wrap: usize,
}

impl Writer {
    fn tokens(&mut self, readable: &str, exotic: &str) {
        if self.line > 0 && self.line + 1 + readable.len() > self.wrap {
            self.newline();
        } else if self.line > 0 {
            self.readable.push(' ');
            self.exotic.push(' ');
            self.line += 1;
        }
        self.readable.push_str(readable);
        self.exotic.push_str(exotic);
        self.line = match readable.rfind('\n') {
            Some(i) => readable.len() - i - 1,
            None => self.line + readable.len(),
        };
    }

    fn token(&mut self, token: &str) {
        self.tokens(token, token);
    }

    /// Tokens written onto the previous one, without a space.
    fn attach(&mut self, readable: &str, exotic: &str) {
        self.readable.push_str(readable);
        self.exotic.push_str(exotic);
        self.line += readable.len();
    }

    /// Text for the second text only (the line's length follows the first).
    fn exotic_only(&mut self, text: &str) {
        self.exotic.push_str(text);
    }

    /// Text for the first text only.
    fn readable_only(&mut self, text: &str) {
        self.readable.push_str(text);
    }

    /// Ends the line, if anything stands on it (never a blank line, which
    /// would end the game).
    fn break_line(&mut self) {
        if self.line > 0 {
            self.newline();
        }
    }

    fn newline(&mut self) {
        self.readable.push('\n');
        self.exotic.push('\n');
        self.line = 0;
    }
}

const GLYPHS: [&str; 6] = ["!", "?", "!?", "?!", "!!", "??"];
const ASSESSMENTS: [&str; 7] = ["+=", "=+", "+-", "-+", "=", "N", "\u{b1}"];

/// The SAN of the legal move `m` with its check mark.
fn san_plus(pos: &Position, m: Move) -> String {
    let mut san = pos.san(m);
    if pos.gives_check(m) {
        let mut after = pos.clone();
        after.do_move(m);
        san.push(if after.legal_moves().is_empty() { '#' } else { '+' });
    }
    san
}

/// `san` (a legal move's SAN with its check mark) respelt: promotion, castling, check
/// mark, glyph. Returns the python-chess-readable spelling and the exotic
/// one.
fn respell(san: &str, rng: &mut Rng, written: &mut Written) -> (String, String) {
    let body_len = san.trim_end_matches(['+', '#']).len();
    let (body, check) = san.split_at(body_len);
    let (mut readable, mut exotic) = (body.to_string(), body.to_string());
    if let Some(eq) = body.find('=') {
        let (square, piece) = (&body[..eq], &body[eq + 1..]);
        let lower = piece.to_ascii_lowercase();
        let forms = [
            ("=Q", format!("={piece}")),
            ("Q", piece.to_string()),
            ("=q", format!("={lower}")),
            ("q", lower.clone()),
        ];
        let (name, form) = &forms[rng.below(forms.len())];
        *written.promotions.entry(name).or_default() += 1;
        readable = format!("{square}{form}");
        let exotic_forms = [("(Q)", format!("({piece})")), ("/Q", format!("/{piece}"))];
        let (name, form) = &exotic_forms[rng.below(2)];
        *written.promotions.entry(name).or_default() += 1;
        exotic = format!("{square}{form}");
    } else if body.starts_with("O-O") && rng.below(3) == 0 {
        written.zero_castles += 1;
        readable = body.replace('O', "0");
        exotic.clone_from(&readable);
    }
    let check = match rng.below(6) {
        0 if !check.is_empty() => {
            written.check_marks_changed += 1;
            ""
        }
        1 if check == "+" => {
            written.check_marks_changed += 1;
            "#"
        }
        _ => check,
    };
    let glyph = if rng.below(12) == 0 { GLYPHS[rng.below(GLYPHS.len())] } else { "" };
    (format!("{readable}{check}{glyph}"), format!("{exotic}{check}{glyph}"))
}

/// A tag value written as old exports write it, with bare quotes or a
/// bracket inside.
fn odd_value(value: &str, rng: &mut Rng) -> String {
    match rng.below(4) {
        0 => format!("{value} \"living pi"),
        1 => format!("\"{value}\""),
        2 => format!("{value} \"A\" ] group"),
        _ => format!("{value} \\\"escaped\\\""),
    }
}

/// A side variation from `pos` (before the main move `main`): another
/// legal move and perhaps a reply, sometimes with a nested variation and a
/// comment holding parentheses.
fn variation(pos: &mut Position, main: Move, number: u32, rng: &mut Rng) -> Option<String> {
    let alternatives: Vec<Move> =
        pos.legal_moves().iter().copied().filter(|&m| m != main).collect();
    if alternatives.is_empty() {
        return None;
    }
    let first = alternatives[rng.below(alternatives.len())];
    let white = pos.side_to_move() == Color::White;
    let mut text =
        if white { format!("( {number}. ") } else { format!("( {number}... ") } + &pos.san(first);
    pos.do_move(first);
    let replies = pos.legal_moves();
    if !replies.is_empty() && rng.below(2) == 0 {
        let reply = replies.iter().copied().nth(rng.below(replies.len())).unwrap();
        if rng.below(3) == 0 {
            text.push_str(" { a line (the main one) 1-0 }");
        }
        if !white {
            text.push_str(&format!(" {}.", number + 1));
        }
        text.push(' ');
        text.push_str(&pos.san(reply));
        if rng.below(3) == 0 {
            let others: Vec<Move> =
                replies.iter().copied().filter(|&m| m != reply).take(1).collect();
            if let Some(&other) = others.first() {
                text.push_str(&format!(" ( {} )", pos.san(other)));
            }
        }
    }
    pos.undo_move(first);
    text.push_str(" )");
    Some(text)
}

/// An illegal king move in `pos`: to a square at least three files or
/// ranks away, off the king's rank (never a castling in any notation).
fn illegal_king_move(pos: &Position) -> String {
    let king = pos.king(pos.side_to_move());
    let target = (0..64)
        .map(Square::new)
        .find(|&s| s.distance(king) >= 3 && s.rank() != king.rank())
        .unwrap();
    format!("K{target}")
}

/// Writes every source game, seeded: (python-chess-readable text, exotic
/// text, what they hold).
fn generate(sources: &[Source], seed: u64) -> (String, String, Written) {
    let mut rng = Rng::new(seed);
    let mut written = Written::default();
    let mut w = Writer { readable: String::new(), exotic: String::new(), line: 0, wrap: 80 };
    for game in sources {
        written.games += 1;
        // How the second text lays the game out: as the first, its moves on
        // the last tag's line, its movetext inside forum wrappers, or (a
        // game from the standard start, after a game) without tags and
        // with no blank line before it.
        let standard_start = !game.tags.iter().any(|(name, _)| *name == "FEN");
        let layout = match rng.below(12) {
            0 => "tag line",
            1 => "wrapper",
            2 if standard_start && written.games > 1 => "tagless",
            _ => "plain",
        };
        if layout == "tagless" {
            written.tagless += 1;
            // The blank line the first text wrote after the last game.
            w.exotic.truncate(w.exotic.len() - 1);
        }
        let last_tag = game.tags.len() - 1;
        for (k, (name, value)) in game.tags.iter().enumerate() {
            let value = if matches!(*name, "Event" | "Site" | "Round") && rng.below(8) == 0 {
                written.odd_tags += 1;
                odd_value(value, &mut rng)
            } else {
                value.clone()
            };
            let tag = format!("[{name} \"{value}\"]");
            if layout == "tagless" {
                w.readable_only(&tag);
                w.readable_only("\n");
            } else {
                w.token(&tag);
                if k == last_tag && layout == "tag line" {
                    break;
                }
                w.newline();
            }
        }
        match layout {
            "tag line" => {
                written.moves_on_tag_lines += 1;
                w.readable_only("\n\n");
                w.exotic_only(" ");
                w.line = 0;
            }
            "tagless" => w.readable_only("\n"),
            _ => {
                if rng.below(20) == 0 {
                    w.token("% an escape line between the tags");
                    w.newline();
                }
                w.newline();
            }
        }
        if layout == "wrapper" {
            written.wrappers += 1;
            w.exotic_only(if rng.below(2) == 0 { "[pgn]\n" } else { "[pgn]" });
        }
        w.wrap = 60 + rng.below(40);
        let broken = rng.below(30) == 0;
        let break_at = if broken { rng.below(game.moves.len() + 1) } else { usize::MAX };
        let mut pos = game.start.clone();
        let mut after_comment = true;
        for (i, &m) in game.moves.iter().enumerate() {
            let number = pos.fullmove_number();
            let white = pos.side_to_move() == Color::White;
            if i == break_at {
                let token = if rng.below(4) == 0 {
                    written.drops += 1;
                    "N@e4".to_string()
                } else {
                    written.illegal += 1;
                    illegal_king_move(&pos)
                };
                w.token(&if white { format!("{number}. {token}") } else { token });
            }
            if white && i > 0 && !broken && rng.below(150) == 0 {
                // A blank line inside the game, before its next move number.
                written.blank_before_number += 1;
                w.break_line();
                w.exotic_only("\n");
            }
            let (readable, mut exotic) = respell(&san_plus(&pos, m), &mut rng, &mut written);
            if m.is_en_passant() {
                written.en_passant_marks += 1;
                let body = exotic.trim_end_matches(['+', '#', '!', '?']).len();
                let (capture, marks) = exotic.split_at(body);
                exotic = match rng.below(5) {
                    0 => format!("{capture}ep{marks}"),
                    1 => format!("{capture}{marks} e.p."),
                    // The mark alone, carrying its move's check mark and
                    // glyphs.
                    2 => format!("{capture} e.p.{marks}"),
                    3 => format!("{capture} ep{marks}"),
                    _ => format!("{capture}e.p.{marks}"),
                };
            }
            if white && rng.below(4) == 0 {
                w.token(&format!("{number}."));
                w.attach(&readable, &exotic);
            } else {
                if white {
                    w.token(&format!("{number}."));
                } else if after_comment {
                    let dots = if rng.below(5) == 0 { "\u{2026}" } else { "..." };
                    let readable_number = format!("{number}{dots}");
                    let exotic_number = match rng.below(4) {
                        0 => format!("{number}. ..."),
                        1 => format!("{number}.."),
                        2 => format!("{number} ..."),
                        _ => readable_number.clone(),
                    };
                    if exotic_number != readable_number {
                        written.ellipses += 1;
                    }
                    w.tokens(&readable_number, &exotic_number);
                }
                w.tokens(&readable, &exotic);
            }
            after_comment = false;
            let side =
                if rng.below(15) == 0 { variation(&mut pos, m, number, &mut rng) } else { None };
            pos.do_move(m);
            written.plies += 1;
            match rng.below(40) {
                0..=4 => {
                    written.comments += 1;
                    w.token(&format!(
                        "{{ [%eval {}.{:02}] [%clk 0:0{}:00] }}",
                        rng.below(3),
                        rng.below(100),
                        rng.below(10)
                    ));
                    after_comment = true;
                }
                5 => {
                    written.comments += 1;
                    w.token("{ a comment\nacross lines (with 1-0 and e4 inside) }");
                    after_comment = true;
                }
                6 => {
                    w.token("; the rest of the line: Nf3 1-0");
                    w.break_line();
                    after_comment = true;
                }
                7 | 8 => {
                    w.token(&format!("${}", 1 + rng.below(20)));
                    after_comment = true;
                }
                9 => w.token(ASSESSMENTS[rng.below(ASSESSMENTS.len())]),
                10 => {
                    w.break_line();
                    w.token("% an escape line 1. e4 e5");
                    w.break_line();
                }
                _ => {}
            }
            if let Some(text) = side {
                written.variations += 1;
                w.token(&text);
                after_comment = true;
            }
        }
        if break_at == game.moves.len() {
            written.illegal += 1;
            let token = illegal_king_move(&pos);
            w.token(&token);
        }
        if !game.moves.is_empty() && rng.below(20) == 0 {
            // The result after a blank line.
            written.blank_before_result += 1;
            w.break_line();
            w.exotic_only("\n");
        }
        w.token(&game.result);
        if layout == "wrapper" {
            w.exotic_only(if rng.below(2) == 0 { "\n[/pgn]" } else { "[/pgn]" });
        }
        w.newline();
        w.newline();
    }
    (w.readable, w.exotic, written)
}

/// One game as read: plies, rejected (and at which ply), final FEN.
#[derive(Clone, PartialEq, Eq, Debug)]
struct Read {
    plies: u64,
    rejected_at: Option<u64>,
    fen: String,
}

fn kibitz_reads(path: &Path, dir: &TempDir) -> Vec<Read> {
    let keys = dir.path("keys.tsv");
    let errors = dir.path("errors.jsonl");
    let out = crate::util::kibitz_command()
        .args(["replay", "--quiet", "--json", "--keys"])
        .arg(&keys)
        .arg("--errors")
        .arg(&errors)
        .arg(path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut games: Vec<Read> = Vec::new();
    for line in std::fs::read_to_string(&keys).unwrap().lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        let game: usize = fields[0].parse().unwrap();
        let ply: u64 = fields[1].parse().unwrap();
        if ply == 0 {
            assert_eq!(game, games.len() + 1, "every game has its start position");
            games.push(Read { plies: 0, rejected_at: None, fen: String::new() });
        }
        let read = games.last_mut().unwrap();
        read.plies = ply;
        read.fen = fields[3].to_string();
    }
    assert_eq!(games.len() as u64, summary["games"].as_u64().unwrap());
    for line in std::fs::read_to_string(&errors).unwrap().lines() {
        let e: serde_json::Value = serde_json::from_str(line).unwrap();
        let game = e["game"].as_u64().unwrap() as usize;
        games[game - 1].rejected_at = Some(e["ply"].as_u64().unwrap());
    }
    games
}

fn python_chess_reads(path: &Path) -> Vec<Read> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/pgn_counts.py");
    let out = Command::new("python3").arg(script).arg("--games").arg(path).output().unwrap();
    assert!(out.status.success(), "python-chess: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            let plies: u64 = fields[1].parse().unwrap();
            let rejected_at = (fields[2] == "1").then_some(plies + 1);
            Read { plies, rejected_at, fen: fields[3].to_string() }
        })
        .collect()
}

#[test]
fn the_shared_games_respelt_read_as_python_chess_reads_them() {
    let dir = TempDir::new("pgn-python-chess");
    let sources = sources();
    let (readable, exotic, written) = generate(&sources, 2026);
    assert!(written.games > 5000, "{written:?}");
    assert!(written.promotions.values().all(|&n| n > 20), "{written:?}");
    assert!(written.illegal > 50 && written.drops > 10 && written.odd_tags > 100, "{written:?}");
    assert!(written.check_marks_changed > 1000 && written.zero_castles > 1000, "{written:?}");
    for (form, n) in [
        ("ellipses", written.ellipses),
        ("en-passant marks", written.en_passant_marks),
        ("moves on tag lines", written.moves_on_tag_lines),
        ("wrappers", written.wrappers),
        ("games without tags", written.tagless),
        ("blank lines before a result", written.blank_before_result),
        ("blank lines before a move number", written.blank_before_number),
    ] {
        assert!(n > 50, "{form}: {written:?}");
    }
    let readable_path = dir.path("readable.pgn");
    let exotic_path = dir.path("exotic.pgn");
    std::fs::write(&readable_path, &readable).unwrap();
    std::fs::write(&exotic_path, &exotic).unwrap();
    // KIBITZ_KEEP_PGN=DIR keeps both texts, to look into a difference.
    if let Some(d) = std::env::var_os("KIBITZ_KEEP_PGN") {
        std::fs::copy(&readable_path, Path::new(&d).join("readable.pgn")).unwrap();
        std::fs::copy(&exotic_path, Path::new(&d).join("exotic.pgn")).unwrap();
    }

    let expected = python_chess_reads(&readable_path);
    assert_eq!(expected.len(), written.games);
    let rejected = expected.iter().filter(|r| r.rejected_at.is_some()).count();
    assert_eq!(rejected, written.illegal + written.drops, "python-chess reads the breaks");
    for (name, path) in [("readable", &readable_path), ("exotic", &exotic_path)] {
        let got = kibitz_reads(path, &dir);
        assert_eq!(got.len(), expected.len(), "{name}: games");
        for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
            assert_eq!(g, e, "{name}: game {}", i + 1);
        }
    }
    let plies: u64 = expected.iter().map(|r| r.plies).sum();
    println!(
        "{} games ({} rejected), {plies} plies read by both; written: {written:?}",
        expected.len(),
        rejected
    );
}

/// The readings the conformance test holds where python-chess errs are
/// python-chess's own on the text as the right reading has it
/// (`scripts/peer_suites.py`).
#[test]
fn judged_peer_suite_readings_are_python_chess_on_the_right_text() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/peer_suites.py");
    let out = Command::new("python3").arg(script).arg(shared("pgn/peer-suites")).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(str::to_string)
        .collect();
    let judged: Vec<String> = crate::conformance::JUDGED
        .iter()
        .map(|(file, games, plies, rejected, sha, _)| {
            format!("{file}\t{games}\t{plies}\t{rejected}\t{sha}")
        })
        .collect();
    assert_eq!(lines, judged);
}
