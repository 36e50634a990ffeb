//! A database's analysis summed up: a summary per game and totals per
//! player, as JSON lines and as one self-contained HTML page (inline CSS,
//! SVG and script; nothing fetched from the network) with a sortable player
//! table and, per game, an evaluation graph like Lichess's: White's Win%
//! over the moves, the judged moves marked, the phases shaded.
//!
//! Memory stays bounded whatever the database's size: games are summed up
//! one at a time, the page keeps the detail (graph and moves) of the first
//! [`Report::new`]'s `games_shown` games only, and the player totals take
//! one entry per distinct player.

use std::{
    collections::HashMap,
    fmt::Write as _,
    io::{self, Write},
    path::PathBuf,
};

use crate::{
    analysis::{
        Division, Eval, GameAnalysis, INITIAL_CP, Judgment, Phase, SideAnalysis, Totals, analyse,
    },
    chess::types::Color,
    record::{
        format::{GameRecord, result_text},
        reader::{KbzReader, RecordError},
    },
};

/// What building a report tells its caller as it goes.
pub trait ReportSink {
    /// A file, a block or a game that is left out, or a warning about a
    /// file (not every position labelled), with the file's name.
    fn warning(&mut self, _message: &str) {}
    /// A game summed up, in input order (the JSON lines' source).
    fn game(&mut self, _summary: &GameSummary) -> io::Result<()> {
        Ok(())
    }
}

/// A sink that hears nothing.
impl ReportSink for () {}

/// What reading the files for a report did.
pub struct ReportRead {
    /// The report.
    pub report: Report,
    /// Games with moves left without a label.
    pub partial: u64,
    /// A block or a game could not be read (what was read is in the
    /// report).
    pub failed: bool,
}

/// Reads `files` into a report whose page details its first `games_shown`
/// games; each game is analysed (see [`crate::analysis::analyse`])
/// and handed to the sink.
pub fn report_files(
    files: &[PathBuf],
    games_shown: usize,
    sink: &mut dyn ReportSink,
) -> Result<ReportRead, ReportError> {
    let mut read = ReportRead { report: Report::new(games_shown), partial: 0, failed: false };
    for path in files {
        let mut reader = KbzReader::open(path)?;
        let name = path.display().to_string();
        if !reader.header.options.labels_every_position() {
            sink.warning(&format!(
                "{name}: not every position is labelled: judgments are missing where labels \
                 are, and totals count only labelled moves"
            ));
        }
        while let Some(next) = reader.next_block() {
            let block = match next {
                Ok((_, _, block)) => block,
                Err(e) => {
                    // What was read stays in the report; the rest of this
                    // file cannot be trusted.
                    sink.warning(&e.to_string());
                    read.failed = true;
                    break;
                }
            };
            for record in &block {
                let analysis = match analyse(record) {
                    Ok(a) => a,
                    Err(e) => {
                        sink.warning(&format!("{name}: game {}: {e}", record.index + 1));
                        read.failed = true;
                        continue;
                    }
                };
                if analysis.unlabelled > 0 {
                    read.partial += 1;
                }
                sink.game(&read.report.add(&name, record, &analysis))?;
            }
        }
    }
    Ok(read)
}

/// Why a report could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file cannot be opened.
    #[error(transparent)]
    Input(#[from] RecordError),
    /// The sink failed.
    #[error(transparent)]
    Sink(#[from] io::Error),
}

/// One game's summary: who played, the result, and each side's totals,
/// overall and per phase. A JSON line of the report.
#[derive(Clone, Debug, serde::Serialize)]
pub struct GameSummary {
    /// The game's index in its file (from 0).
    pub index: u64,
    /// The file it came from.
    pub file: String,
    /// `[Event]`.
    pub event: String,
    /// `[Site]`.
    pub site: String,
    /// `[Date]`.
    pub date: String,
    /// `[White]`.
    pub white_name: String,
    /// `[Black]`.
    pub black_name: String,
    /// `[WhiteElo]`, if the game has one.
    pub white_elo: Option<u16>,
    /// `[BlackElo]`, if the game has one.
    pub black_elo: Option<u16>,
    /// `1-0`, `0-1`, `1/2-1/2` or `*`.
    pub result: String,
    /// Plies played.
    pub plies: usize,
    /// Where the middlegame and the endgame start.
    pub division: Division,
    /// White's totals.
    pub white: SideAnalysis,
    /// Black's totals.
    pub black: SideAnalysis,
    /// Moves with a position unlabelled before or after.
    pub unlabelled: u32,
}

/// Sums over some games of one player with one colour, or both.
#[derive(Clone, Copy, Debug, Default)]
struct Sums {
    games: u32,
    moves: u64,
    accuracy: f64,
    accuracy_games: u32,
    lost: u64,
    lost_moves: u64,
    inaccuracies: u64,
    mistakes: u64,
    blunders: u64,
}

impl Sums {
    fn add(&mut self, t: &Totals) {
        if t.moves == 0 {
            return;
        }
        self.games += 1;
        self.moves += u64::from(t.moves);
        if let Some(a) = t.accuracy {
            self.accuracy += a;
            self.accuracy_games += 1;
        }
        self.lost += t.lost;
        self.lost_moves += u64::from(t.lost_moves);
        self.inaccuracies += u64::from(t.inaccuracies);
        self.mistakes += u64::from(t.mistakes);
        self.blunders += u64::from(t.blunders);
    }

    fn merge(&mut self, o: &Sums) {
        self.games += o.games;
        self.moves += o.moves;
        self.accuracy += o.accuracy;
        self.accuracy_games += o.accuracy_games;
        self.lost += o.lost;
        self.lost_moves += o.lost_moves;
        self.inaccuracies += o.inaccuracies;
        self.mistakes += o.mistakes;
        self.blunders += o.blunders;
    }

    fn summary(&self) -> PlayerTotals {
        let per = |n: u64, d: u64| (d > 0).then(|| n as f64 / d as f64);
        PlayerTotals {
            games: self.games,
            moves: self.moves,
            accuracy: (self.accuracy_games > 0)
                .then(|| self.accuracy / f64::from(self.accuracy_games)),
            acpl: per(self.lost, self.lost_moves),
            inaccuracies: self.inaccuracies,
            mistakes: self.mistakes,
            blunders: self.blunders,
            blunders_per_100: per(100 * self.blunders, self.moves),
        }
    }
}

/// A player's totals over some games.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct PlayerTotals {
    /// Games with at least one move of the player's.
    pub games: u32,
    /// The player's moves.
    pub moves: u64,
    /// The mean of the per-game accuracies.
    pub accuracy: Option<f64>,
    /// Centipawns lost per move, over every move whose loss is known.
    pub acpl: Option<f64>,
    /// Inaccuracies.
    pub inaccuracies: u64,
    /// Mistakes.
    pub mistakes: u64,
    /// Blunders.
    pub blunders: u64,
    /// Blunders per 100 moves.
    pub blunders_per_100: Option<f64>,
}

/// A player over the whole database: overall, by colour and by phase. A
/// JSON line of the report. Games whose tag names nobody (`?`, or no
/// tag) count for no player.
#[derive(Clone, Debug, serde::Serialize)]
pub struct PlayerSummary {
    /// The name, as the `[White]` or `[Black]` tag gives it.
    pub name: String,
    /// The mean of the player's ratings over the games that give one.
    pub rating: Option<f64>,
    /// The rating of the last such game read.
    pub last_rating: Option<u16>,
    /// Over all games.
    pub all: PlayerTotals,
    /// With White.
    pub white: PlayerTotals,
    /// With Black.
    pub black: PlayerTotals,
    /// In the opening, the middlegame and the endgame.
    pub opening: PlayerTotals,
    /// See `opening`.
    pub middlegame: PlayerTotals,
    /// See `opening`.
    pub endgame: PlayerTotals,
}

#[derive(Clone, Debug, Default)]
struct PlayerSums {
    colour: [Sums; 2],
    phase: [Sums; 3],
    rating_sum: u64,
    rated_games: u32,
    last_rating: Option<u16>,
}

/// A game kept for the page: its summary, its graph and its judged moves.
struct Shown {
    summary: GameSummary,
    /// White's Win% at each ply from the start.
    wins: Vec<Option<f64>>,
    /// Judged moves: ply, text (`12. Nxc6?!`), judgment.
    marks: Vec<(usize, String, Judgment)>,
    /// The first move after which the endgame tables decide the game, and
    /// what they say (`41... Rxe4: White wins`).
    tablebase: Option<String>,
}

/// The report being built, game by game.
pub struct Report {
    players: HashMap<String, PlayerSums>,
    shown: Vec<Shown>,
    games_shown: usize,
    /// Games summed up.
    pub games: u64,
}

impl Report {
    /// An empty report whose page details the first `games_shown` games.
    pub fn new(games_shown: usize) -> Report {
        Report { players: HashMap::new(), shown: Vec::new(), games_shown, games: 0 }
    }

    /// Adds an analysed game; returns its summary.
    pub fn add(&mut self, file: &str, record: &GameRecord, analysis: &GameAnalysis) -> GameSummary {
        let tag = |i: usize| record.tags[i].clone();
        let summary = GameSummary {
            index: record.index,
            file: file.to_string(),
            event: tag(0),
            site: tag(1),
            date: tag(2),
            white_name: tag(4),
            black_name: tag(5),
            white_elo: (record.elo[0] > 0).then_some(record.elo[0]),
            black_elo: (record.elo[1] > 0).then_some(record.elo[1]),
            result: result_text(record.result).to_string(),
            plies: analysis.moves.len(),
            division: analysis.division,
            white: analysis.white,
            black: analysis.black,
            unlabelled: analysis.unlabelled,
        };
        self.games += 1;
        let sides = [
            (&summary.white_name, &summary.white, summary.white_elo),
            (&summary.black_name, &summary.black, summary.black_elo),
        ];
        for (colour, (name, side, elo)) in sides.into_iter().enumerate() {
            // An unknown player (`?` or no tag) is nobody's total.
            if name.is_empty() || name == "?" {
                continue;
            }
            let sums = self.players.entry(name.clone()).or_default();
            if let Some(elo) = elo {
                sums.rating_sum += u64::from(elo);
                sums.rated_games += 1;
                sums.last_rating = Some(elo);
            }
            sums.colour[colour].add(&side.game);
            for (i, t) in [&side.opening, &side.middlegame, &side.endgame].into_iter().enumerate() {
                sums.phase[i].add(t);
            }
        }
        if self.shown.len() < self.games_shown {
            let mut wins = Vec::with_capacity(analysis.moves.len() + 1);
            wins.push(Some(Eval::Cp(INITIAL_CP).win_percent()));
            let mut marks = Vec::new();
            for m in &analysis.moves {
                // A checkmate has no evaluation; the graph shows it won.
                let mate = m.san.ends_with('#');
                let won = if m.mover == Color::White { 100.0 } else { 0.0 };
                wins.push(m.after.map(Eval::win_percent).or(mate.then_some(won)));
                if let Some(a) = m.advice {
                    let dots = if m.mover == Color::White { "." } else { "..." };
                    let text = format!("{}{dots} {}{}", m.number, m.san, a.judgment.glyph());
                    marks.push((m.ply, text, a.judgment));
                }
            }
            let tablebase = analysis.moves.iter().find_map(|m| {
                let dots = if m.mover == Color::White { "." } else { "..." };
                m.tablebase.as_ref().map(|t| format!("{}{dots} {}: {t}", m.number, m.san))
            });
            self.shown.push(Shown { summary: summary.clone(), wins, marks, tablebase });
        }
        summary
    }

    /// Every player's totals, most games first (then by name).
    pub fn players(&self) -> Vec<PlayerSummary> {
        let mut out: Vec<PlayerSummary> = self
            .players
            .iter()
            .map(|(name, s)| {
                let mut all = s.colour[0];
                all.merge(&s.colour[1]);
                PlayerSummary {
                    name: name.clone(),
                    rating: (s.rated_games > 0)
                        .then(|| s.rating_sum as f64 / f64::from(s.rated_games)),
                    last_rating: s.last_rating,
                    all: all.summary(),
                    white: s.colour[0].summary(),
                    black: s.colour[1].summary(),
                    opening: s.phase[0].summary(),
                    middlegame: s.phase[1].summary(),
                    endgame: s.phase[2].summary(),
                }
            })
            .collect();
        out.sort_by(|a, b| b.all.games.cmp(&a.all.games).then_with(|| a.name.cmp(&b.name)));
        out
    }

    /// Writes the page: at most `players_shown` players (most games first;
    /// 0 for all), then the games kept.
    pub fn write_html(&self, out: &mut impl Write, players_shown: usize) -> io::Result<()> {
        let players = self.players();
        let listed =
            if players_shown == 0 { players.len() } else { players_shown.min(players.len()) };
        let mut h = String::with_capacity(1 << 16);
        h.push_str(HEAD);
        let _ = write!(
            h,
            "<h1>kibitz analysis</h1>\n<p class=\"counts\">{} games, {} players{}.</p>\n",
            self.games,
            players.len(),
            if listed < players.len() {
                format!(" ({listed} with the most games listed; all in the JSON)")
            } else {
                String::new()
            }
        );
        h.push_str(
            "<h2>Players</h2>\n<input type=\"checkbox\" id=\"phases\">\
             <label class=\"toggle\" for=\"phases\">Show accuracy and ACPL by game phase</label>\n\
             <div class=\"scroll\"><table id=\"players\">\n<thead><tr>",
        );
        for (i, (key, title, kind)) in COLUMNS.iter().enumerate() {
            let class = column_class(i);
            let _ = write!(h, "<th{class} data-key=\"{key}\" data-kind=\"{kind}\">{title}</th>");
        }
        h.push_str("</tr></thead>\n<tbody>\n");
        for p in &players[..listed] {
            let cells = [
                Cell::Text(&p.name),
                Cell::Real0(p.rating),
                Cell::Int(p.all.games.into()),
                Cell::Int(p.white.games.into()),
                Cell::Int(p.black.games.into()),
                Cell::Real(p.all.accuracy),
                Cell::Real(p.white.accuracy),
                Cell::Real(p.black.accuracy),
                Cell::Real(p.all.acpl),
                Cell::Real(p.all.blunders_per_100),
                Cell::Real(p.opening.accuracy),
                Cell::Real(p.middlegame.accuracy),
                Cell::Real(p.endgame.accuracy),
                Cell::Real(p.opening.acpl),
                Cell::Real(p.middlegame.acpl),
                Cell::Real(p.endgame.acpl),
            ];
            h.push_str("<tr class=\"player\">");
            for (i, c) in cells.iter().enumerate() {
                c.write(&mut h, column_class(i));
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</tbody></table></div>\n");
        out.write_all(h.as_bytes())?;
        let _ = write!(
            out,
            "<h2>Games</h2>\n<p class=\"counts\">{} of {} games shown.</p>\n{LEGEND}",
            self.shown.len(),
            self.games
        );
        for g in &self.shown {
            h.clear();
            game_html(&mut h, g);
            out.write_all(h.as_bytes())?;
        }
        out.write_all(TAIL.as_bytes())
    }
}

enum Cell<'a> {
    Text(&'a str),
    Int(u64),
    Real(Option<f64>),
    /// A real number shown without decimals.
    Real0(Option<f64>),
}

impl Cell<'_> {
    /// The cell as a `<td>`; `class` is empty or ` class="..."`.
    fn write(&self, h: &mut String, class: &str) {
        match self {
            Cell::Text(t) => {
                let _ = write!(h, "<td{class} data-v=\"{}\">{}</td>", escape(t), escape(t));
            }
            Cell::Int(v) => {
                let _ = write!(h, "<td{class} data-v=\"{v}\">{v}</td>");
            }
            Cell::Real(Some(v)) => {
                let _ = write!(h, "<td{class} data-v=\"{v:.3}\">{v:.1}</td>");
            }
            Cell::Real0(Some(v)) => {
                let _ = write!(h, "<td{class} data-v=\"{v:.3}\">{v:.0}</td>");
            }
            Cell::Real(None) | Cell::Real0(None) => {
                let _ = write!(h, "<td{class} data-v=\"\">–</td>");
            }
        }
    }
}

/// The player table's columns by game phase (from this one on): behind a
/// toggle where the page is narrow.
const FIRST_PHASE_COLUMN: usize = 10;

/// The class of a player table column.
fn column_class(i: usize) -> &'static str {
    if i >= FIRST_PHASE_COLUMN { " class=\"ph\"" } else { "" }
}

const COLUMNS: [(&str, &str, &str); 16] = [
    ("name", "Player", "text"),
    ("rating", "Rating", "num"),
    ("games", "Games", "num"),
    ("white", "as White", "num"),
    ("black", "as Black", "num"),
    ("accuracy", "Accuracy", "num"),
    ("accuracy-white", "Acc. White", "num"),
    ("accuracy-black", "Acc. Black", "num"),
    ("acpl", "ACPL", "num"),
    ("blunders", "Blunders /100 moves", "num"),
    ("accuracy-opening", "Acc. opening", "num"),
    ("accuracy-middlegame", "Acc. middlegame", "num"),
    ("accuracy-endgame", "Acc. endgame", "num"),
    ("acpl-opening", "ACPL opening", "num"),
    ("acpl-middlegame", "ACPL middlegame", "num"),
    ("acpl-endgame", "ACPL endgame", "num"),
];

/// Text made safe inside HTML, attributes included.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn fmt_opt(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), |v| format!("{v:.1}"))
}

fn fmt_int(v: Option<i32>) -> String {
    v.map_or_else(|| "–".to_string(), |v| v.to_string())
}

const GRAPH_W: f64 = 600.0;
const GRAPH_H: f64 = 120.0;

fn game_html(h: &mut String, g: &Shown) {
    let s = &g.summary;
    let _ = write!(
        h,
        "<section class=\"game\" id=\"game-{}\">\n<h3>{}{} – {}{} <span class=\"result\">{}</span></h3>\n\
         <p class=\"meta\">{} · {} · {} · game {} of {}</p>\n",
        s.index,
        escape(&s.white_name),
        s.white_elo.map(|e| format!(" ({e})")).unwrap_or_default(),
        escape(&s.black_name),
        s.black_elo.map(|e| format!(" ({e})")).unwrap_or_default(),
        escape(&s.result),
        escape(&s.event),
        escape(&s.site),
        escape(&s.date),
        s.index + 1,
        escape(&s.file),
    );
    h.push_str(
        "<div class=\"scroll\"><table class=\"sides\"><thead><tr><th></th><th>Accuracy</th><th>ACPL</th>\
         <th>?!</th><th>?</th><th>??</th><th>Acc. opening</th><th>Acc. middlegame</th>\
         <th>Acc. endgame</th></tr></thead><tbody>\n",
    );
    for (side, a) in [("White", &s.white), ("Black", &s.black)] {
        let _ = writeln!(
            h,
            "<tr><th>{side}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td></tr>",
            fmt_opt(a.game.accuracy),
            fmt_int(a.game.acpl),
            a.game.inaccuracies,
            a.game.mistakes,
            a.game.blunders,
            fmt_opt(a.opening.accuracy),
            fmt_opt(a.middlegame.accuracy),
            fmt_opt(a.endgame.accuracy),
        );
    }
    h.push_str("</tbody></table></div>\n");
    if let Some(t) = &g.tablebase {
        let _ = writeln!(h, "<p class=\"tablebase\">Tablebase after {}</p>", escape(t));
    }
    graph(h, g);
    h.push_str("</section>\n");
}

/// The evaluation graph: White's Win% from top (100) to bottom (0), the
/// area under the curve light; middlegame and endgame shaded; judged moves
/// as dots.
fn graph(h: &mut String, g: &Shown) {
    let n = g.wins.len().saturating_sub(1).max(1) as f64;
    let x = |ply: usize| ply as f64 / n * GRAPH_W;
    let y = |win: f64| (100.0 - win) / 100.0 * GRAPH_H;
    let _ = write!(
        h,
        "<svg class=\"graph\" viewBox=\"0 0 {GRAPH_W} {GRAPH_H}\" preserveAspectRatio=\"none\" \
         role=\"img\" aria-label=\"Win% of White over the moves\">\
         <rect class=\"bg\" width=\"{GRAPH_W}\" height=\"{GRAPH_H}\"/>"
    );
    let plies = g.wins.len().saturating_sub(1);
    let d = g.summary.division;
    let phases = [
        (d.middlegame, d.endgame.unwrap_or(plies), Phase::Middlegame),
        (d.endgame, plies, Phase::Endgame),
    ];
    for (start, end, phase) in phases {
        if let Some(start) = start {
            let class = if phase == Phase::Middlegame { "middlegame" } else { "endgame" };
            let _ = write!(
                h,
                "<rect class=\"phase {class}\" x=\"{:.1}\" width=\"{:.1}\" height=\"{GRAPH_H}\"/>",
                x(start),
                (x(end) - x(start)).max(0.0)
            );
        }
    }
    // The known points, a missing evaluation bridged by its neighbours.
    let points: Vec<(f64, f64)> =
        g.wins.iter().enumerate().filter_map(|(i, w)| w.map(|w| (x(i), y(w)))).collect();
    if let (Some(first), Some(last)) = (points.first(), points.last()) {
        let mut area = format!("M{:.1},{GRAPH_H}", first.0);
        let mut line = String::new();
        for (i, (px, py)) in points.iter().enumerate() {
            let _ = write!(area, " L{px:.1},{py:.1}");
            let _ = write!(line, "{}{px:.1},{py:.1}", if i == 0 { "M" } else { " L" });
        }
        let _ = write!(area, " L{:.1},{GRAPH_H} Z", last.0);
        let _ = write!(
            h,
            "<path class=\"white-area\" d=\"{area}\"/><path class=\"curve\" d=\"{line}\"/>"
        );
    }
    let _ = write!(
        h,
        "<line class=\"mid\" x1=\"0\" y1=\"{0}\" x2=\"{GRAPH_W}\" y2=\"{0}\"/>",
        GRAPH_H / 2.0
    );
    for (ply, text, judgment) in &g.marks {
        let Some(w) = g.wins.get(*ply).copied().flatten() else { continue };
        // A dot of zero length with round caps and a stroke that does not
        // scale: round at any width of the graph (a circle would stretch
        // with the graph into an ellipse).
        let _ = write!(
            h,
            "<path class=\"mark {}\" d=\"M{:.1},{:.1}h0\"><title>{} {}</title></path>",
            judgment.name().to_lowercase(),
            x(*ply),
            y(w),
            escape(text),
            judgment.name()
        );
    }
    h.push_str("</svg>\n");
}

const LEGEND: &str = "<p class=\"legend\">White's Win% over the moves: \
    <span style=\"color:#56b4e9\">● inaccuracy</span><span style=\"color:#e69f00\">● mistake</span>\
    <span style=\"color:#db3031\">● blunder</span><span style=\"color:#268bd2\">■ middlegame</span>\
    <span style=\"color:#d33682\">■ endgame</span></p>\n";

const HEAD: &str = r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>kibitz analysis</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; background: #fafafa; }
h1 { font-size: 1.5em; } h2 { margin-top: 1.5em; } h3 { margin: 0.2em 0; font-size: 1.1em; }
h3, .meta, .counts { overflow-wrap: anywhere; }
table { border-collapse: collapse; }
.scroll { max-width: 100%; overflow-x: auto; }
#players th { cursor: pointer; user-select: none; background: #e8e8e8; position: sticky; top: 0; }
#players th.sorted::after { content: " ▾"; } #players th.sorted.asc::after { content: " ▴"; }
#players td:first-child { position: sticky; left: 0; background: #fafafa; }
#players th:first-child { left: 0; z-index: 1; }
#players th { min-width: 3.5em; }
th, td { padding: 2px 6px; border-bottom: 1px solid #ddd; text-align: right; }
td:first-child, th:first-child { text-align: left; white-space: nowrap; }
#players .ph { display: none; }
#phases { margin-left: 0; }
.toggle { cursor: pointer; color: #444; }
#phases:checked ~ .scroll #players .ph { display: table-cell; }
@media (min-width: 1500px) {
  #players .ph { display: table-cell; }
  #phases, .toggle { display: none; }
}
@media (max-width: 600px) {
  body { margin: 0.6em; }
}
.game { margin: 1.2em 0; padding: 0.6em; background: #fff; border: 1px solid #ddd; }
.meta { color: #666; margin: 0.2em 0 0.5em; }
.sides { margin-bottom: 0.5em; }
svg.graph { width: 100%; height: clamp(120px, 12vw, 260px); display: block; }
.bg { fill: #3a3a3a; }
.white-area { fill: #e9e9e9; }
.curve { fill: none; stroke: #b58900; stroke-width: 1.2; vector-effect: non-scaling-stroke; }
.mid { stroke: #888; stroke-dasharray: 4 3; stroke-width: 0.8; vector-effect: non-scaling-stroke; }
.phase { fill-opacity: 0.16; }
.phase.middlegame { fill: #268bd2; } .phase.endgame { fill: #d33682; }
.mark { stroke-width: 7; stroke-linecap: round; vector-effect: non-scaling-stroke; }
.mark.inaccuracy { stroke: #56b4e9; } .mark.mistake { stroke: #e69f00; } .mark.blunder { stroke: #db3031; }
.legend span { display: inline-block; margin-right: 1em; }
</style>
</head>
<body>
"#;

const TAIL: &str = r#"<script>
(function () {
  var table = document.getElementById('players');
  var heads = table.tHead.rows[0].cells;
  function sort(col, asc) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var num = heads[col].dataset.kind === 'num';
    rows.sort(function (a, b) {
      var x = a.cells[col].dataset.v, y = b.cells[col].dataset.v;
      if (num) {
        // Empty cells last, whatever the direction.
        if (x === '' || y === '') return (x === '') - (y === '');
        x = parseFloat(x); y = parseFloat(y);
        return asc ? x - y : y - x;
      }
      return asc ? x.localeCompare(y) : y.localeCompare(x);
    });
    rows.forEach(function (r) { body.appendChild(r); });
    for (var i = 0; i < heads.length; i++) heads[i].classList.remove('sorted', 'asc');
    heads[col].classList.add('sorted');
    if (asc) heads[col].classList.add('asc');
    table.dataset.sortedBy = heads[col].dataset.key;
  }
  var current = -1, ascending = false;
  for (var i = 0; i < heads.length; i++) {
    (function (col) {
      heads[col].addEventListener('click', function () {
        // A second click turns the order round; a new column starts with
        // names from A and numbers from the largest.
        ascending = col === current ? !ascending : heads[col].dataset.kind === 'text';
        current = col;
        sort(col, ascending);
      });
    })(i);
  }
  // Most games first.
  for (var i = 0; i < heads.length; i++) if (heads[i].dataset.key === 'games') current = i;
  sort(current, false);
})();
</script>
</body>
</html>
"#;

/// The report as Parquet tables (`report --parquet DIR`): `games.parquet`,
/// a row per game, and `players.parquet`, a row per player. Tag columns
/// bear Lichess's names (Event, Site, White, Black, Result, WhiteElo,
/// BlackElo), so the games join Lichess's own on `Site`; the totals are
/// named `{side}_{measure}` over the game and `{side}_{phase}_{measure}`
/// per phase (`white_accuracy`, `black_endgame_blunders`), and a player's
/// `{group}_{measure}` (`all_acpl`, `white_games`, `opening_mistakes`).
#[cfg(feature = "parquet")]
pub mod tables {
    use std::io::Write;

    use super::{GameSummary, PlayerSummary, PlayerTotals};
    use crate::{
        analysis::Totals,
        io::parquet::write::{ColumnType as T, Table},
    };

    const SIDES: [&str; 2] = ["white", "black"];
    const PARTS: [&str; 4] = ["", "opening_", "middlegame_", "endgame_"];
    const SIDE_MEASURES: [(&str, T); 6] = [
        ("moves", T::U32),
        ("accuracy", T::F64),
        ("acpl", T::I32),
        ("inaccuracies", T::U32),
        ("mistakes", T::U32),
        ("blunders", T::U32),
    ];
    const GROUPS: [&str; 6] = ["all", "white", "black", "opening", "middlegame", "endgame"];
    const PLAYER_MEASURES: [(&str, T); 8] = [
        ("games", T::U32),
        ("moves", T::U64),
        ("accuracy", T::F64),
        ("acpl", T::F64),
        ("inaccuracies", T::U64),
        ("mistakes", T::U64),
        ("blunders", T::U64),
        ("blunders_per_100", T::F64),
    ];

    /// The games table's columns.
    pub fn game_columns() -> Vec<(String, T)> {
        let mut c: Vec<(String, T)> = [
            ("game", T::U64),
            ("file", T::Text),
            ("Event", T::Text),
            ("Site", T::Text),
            ("Date", T::Text),
            ("White", T::Text),
            ("Black", T::Text),
            ("WhiteElo", T::I16),
            ("BlackElo", T::I16),
            ("Result", T::Text),
            ("plies", T::U32),
            ("middlegame_ply", T::U32),
            ("endgame_ply", T::U32),
            ("unlabelled", T::U32),
        ]
        .into_iter()
        .map(|(n, t)| (n.to_string(), t))
        .collect();
        for side in SIDES {
            for part in PARTS {
                for (m, t) in SIDE_MEASURES {
                    c.push((format!("{side}_{part}{m}"), t));
                }
            }
        }
        c
    }

    /// The players table's columns.
    pub fn player_columns() -> Vec<(String, T)> {
        let mut c: Vec<(String, T)> = vec![
            ("name".into(), T::Text),
            ("rating".into(), T::F64),
            ("last_rating".into(), T::I32),
        ];
        for g in GROUPS {
            for (m, t) in PLAYER_MEASURES {
                c.push((format!("{g}_{m}"), t));
            }
        }
        c
    }

    fn table<W: Write + Send>(out: W, columns: &[(String, T)]) -> std::io::Result<Table<W>> {
        let named: Vec<(&str, T)> = columns.iter().map(|(n, t)| (n.as_str(), *t)).collect();
        Table::new(out, &named)
    }

    /// The games table being written.
    pub struct GamesTable<W: Write + Send>(Table<W>);

    impl<W: Write + Send> GamesTable<W> {
        /// A games table written to `out`.
        pub fn new(out: W) -> std::io::Result<GamesTable<W>> {
            Ok(GamesTable(table(out, &game_columns())?))
        }

        /// Adds a game's row.
        pub fn add(&mut self, g: &GameSummary) -> std::io::Result<()> {
            let t = &mut self.0;
            let text = |s: &str| (!s.is_empty()).then(|| s.to_string());
            let elo = |e: Option<u16>| e.filter(|&e| e <= i16::MAX as u16).map(i64::from);
            t.int(Some(g.index as i64));
            t.text(Some(&g.file));
            for s in [&g.event, &g.site, &g.date, &g.white_name, &g.black_name] {
                t.text(text(s).as_deref());
            }
            t.int(elo(g.white_elo));
            t.int(elo(g.black_elo));
            t.text(Some(&g.result));
            t.int(Some(g.plies as i64));
            t.int(g.division.middlegame.map(|p| p as i64));
            t.int(g.division.endgame.map(|p| p as i64));
            t.int(Some(i64::from(g.unlabelled)));
            for side in [&g.white, &g.black] {
                for part in [&side.game, &side.opening, &side.middlegame, &side.endgame] {
                    side_totals(t, part);
                }
            }
            t.end_row()
        }

        /// Writes the footer; returns the output.
        pub fn finish(self) -> std::io::Result<W> {
            self.0.finish()
        }
    }

    fn side_totals<W: Write + Send>(t: &mut Table<W>, x: &Totals) {
        t.int(Some(i64::from(x.moves)));
        t.float(x.accuracy);
        t.int(x.acpl.map(i64::from));
        t.int(Some(i64::from(x.inaccuracies)));
        t.int(Some(i64::from(x.mistakes)));
        t.int(Some(i64::from(x.blunders)));
    }

    fn player_totals<W: Write + Send>(t: &mut Table<W>, x: &PlayerTotals) {
        t.int(Some(i64::from(x.games)));
        t.int(Some(x.moves as i64));
        t.float(x.accuracy);
        t.float(x.acpl);
        t.int(Some(x.inaccuracies as i64));
        t.int(Some(x.mistakes as i64));
        t.int(Some(x.blunders as i64));
        t.float(x.blunders_per_100);
    }

    /// Writes the players table to `out`; returns the output.
    pub fn write_players<W: Write + Send>(out: W, players: &[PlayerSummary]) -> std::io::Result<W> {
        let mut t = table(out, &player_columns())?;
        for p in players {
            t.text(Some(&p.name));
            t.float(p.rating);
            t.int(p.last_rating.map(i64::from));
            for g in [&p.all, &p.white, &p.black, &p.opening, &p.middlegame, &p.endgame] {
                player_totals(&mut t, g);
            }
            t.end_row()?;
        }
        t.finish()
    }
}
