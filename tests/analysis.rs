//! Analysis end to end: `annotate --preset analysis`, `export --format pgn`
//! and `report`. Without features, kibitz's own outputs are checked against
//! each other; with `python-chess`, the exported games are read back by
//! python-chess and a Lichess export is judged move by move as Lichess
//! judged it; with `chromium`, the report is opened in headless Chromium.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{TempDir, kibitz, s, sample};

/// The sample labelled with the analysis preset at a small depth.
fn analysed_sample(dir: &TempDir) -> PathBuf {
    let out = dir.path("sample.kbz");
    let (code, _, err) = kibitz(&[
        "annotate",
        s(&sample()),
        "-o",
        s(&out),
        "--quiet",
        "--preset",
        "analysis",
        "--depth",
        "4",
    ]);
    assert_eq!(code, 0, "{err}");
    out
}

/// The report's JSON lines, split into games and players.
fn report(kbz: &Path, dir: &TempDir, extra: &[&str]) -> (Vec<Value>, Vec<Value>, String) {
    let page = dir.path("report.html");
    let json = dir.path("report.jsonl");
    let mut args = vec!["report", s(kbz), "-o", s(&page), "--json", s(&json)];
    args.extend(extra);
    let (code, _, err) = kibitz(&args);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<Value> = std::fs::read_to_string(&json)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (games, players) = lines.into_iter().partition(|v| v["kind"] == "game");
    (games, players, std::fs::read_to_string(&page).unwrap())
}

/// What the exported PGN says of each game: its `?!`, `?` and `??` glyphs
/// per side, counted from the movetext (`12. Nxc6?!`, `12... Nxc6?!`).
fn glyph_counts(pgn: &str) -> Vec<[u32; 6]> {
    let mut games = Vec::new();
    for game in pgn.split("\n\n[Event ").map(|g| g.split_once("\n\n").map_or("", |(_, m)| m)) {
        let mut counts = [0u32; 6];
        let mut side = 0;
        let mut depth = 0;
        let mut in_comment = false;
        for word in game.split_whitespace() {
            if in_comment {
                in_comment = !word.ends_with('}');
                continue;
            }
            if word.starts_with('{') {
                in_comment = !word.ends_with('}');
                continue;
            }
            depth += word.matches('(').count() as i32;
            let closes = word.matches(')').count() as i32;
            let result = ["1-0", "0-1", "1/2-1/2", "*"].contains(&word);
            if depth == 0 && !word.ends_with('.') && !result {
                let k = if word.ends_with("??") {
                    Some(2)
                } else if word.ends_with("?!") {
                    Some(0)
                } else if word.ends_with('?') {
                    Some(1)
                } else {
                    None
                };
                if let Some(k) = k {
                    counts[side * 3 + k] += 1;
                }
                side = 1 - side;
            } else if depth == 0 && word.ends_with("...") {
                side = 1;
            } else if depth == 0 && word.ends_with('.') {
                side = 0;
            }
            depth -= closes;
        }
        games.push(counts);
    }
    games
}

fn side_counts(game: &Value) -> [u32; 6] {
    let c = |side: &str, what: &str| game[side]["game"][what].as_u64().unwrap() as u32;
    [
        c("white", "inaccuracies"),
        c("white", "mistakes"),
        c("white", "blunders"),
        c("black", "inaccuracies"),
        c("black", "mistakes"),
        c("black", "blunders"),
    ]
}

/// The report, the export's tags and its glyphs agree game by game, and
/// every game and player is on the page.
#[test]
fn report_export_and_tags_tell_the_same_analysis() {
    let dir = TempDir::new("analysis-report");
    let kbz = analysed_sample(&dir);
    let (games, players, page) = report(&kbz, &dir, &[]);
    assert_eq!(games.len(), 20);
    let names: std::collections::BTreeSet<&str> = games
        .iter()
        .flat_map(|g| [g["white_name"].as_str().unwrap(), g["black_name"].as_str().unwrap()])
        .filter(|name| *name != "?")
        .collect();
    assert_eq!(players.len(), names.len());
    assert_eq!(page.matches("<tr class=\"player\">").count(), players.len());
    assert_eq!(page.matches("<svg class=\"graph\"").count(), 20);
    // Player totals add up from the games.
    for p in &players {
        let name = p["name"].as_str().unwrap();
        let played = games.iter().filter(|g| g["white_name"] == name || g["black_name"] == name);
        assert_eq!(p["all"]["games"].as_u64().unwrap(), played.clone().count() as u64, "{name}");
        let blunders: u64 = played
            .map(|g| {
                let side = if g["white_name"] == name { "white" } else { "black" };
                g[side]["game"]["blunders"].as_u64().unwrap()
            })
            .sum();
        assert_eq!(p["all"]["blunders"].as_u64().unwrap(), blunders, "{name}");
    }
    let (code, pgn, err) = kibitz(&["export", s(&kbz), "--format", "pgn"]);
    assert_eq!(code, 0, "{err}");
    let glyphs = glyph_counts(&pgn);
    assert_eq!(glyphs.len(), 20);
    let mut judged = 0;
    for (g, (game, counts)) in games.iter().zip(&glyphs).enumerate() {
        assert_eq!(side_counts(game), *counts, "game {}", g + 1);
        judged += counts.iter().sum::<u32>();
    }
    // A depth-4 search finds judged moves in games between people.
    assert!(judged > 20, "{judged} judged moves");
    // Tags as Lichess names them, equal to the report's figures.
    let first = &games[0];
    let tag = |name: &str| {
        let at = pgn.find(&format!("[{name} \"")).unwrap_or_else(|| panic!("no {name}"));
        let rest = &pgn[at + name.len() + 3..];
        rest[..rest.find('"').unwrap()].to_string()
    };
    let accuracy = first["white"]["game"]["accuracy"].as_f64().unwrap();
    assert_eq!(tag("WhiteAccuracy"), format!("{accuracy:.1}"));
    assert_eq!(tag("BlackACPL"), first["black"]["game"]["acpl"].to_string());
    assert_eq!(tag("WhiteBlunders"), first["white"]["game"]["blunders"].to_string());
}

/// A file labelled with filters (opening skipped, checks and captures left
/// out) still reports, with a warning, and its export carries no totals
/// that would mislead.
#[test]
fn a_filtered_file_reports_with_a_warning_and_no_total_tags() {
    let dir = TempDir::new("analysis-filtered");
    let kbz = dir.path("filtered.kbz");
    let (code, _, err) =
        kibitz(&["annotate", s(&sample()), "-o", s(&kbz), "--quiet", "--depth", "3"]);
    assert_eq!(code, 0, "{err}");
    let page = dir.path("r.html");
    let (code, _, err) = kibitz(&["report", s(&kbz), "-o", s(&page)]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("not every position is labelled"), "{err}");
    let (_, pgn, _) = kibitz(&["export", s(&kbz), "--format", "pgn"]);
    assert!(!pgn.contains("Accuracy \""), "{}", &pgn[..400]);
}

/// The page keeps to its limits: `--games` and `--players`.
#[test]
fn the_page_is_limited_by_its_options() {
    let dir = TempDir::new("analysis-limits");
    let kbz = analysed_sample(&dir);
    let (games, players, page) = report(&kbz, &dir, &["--games", "3", "--players", "5"]);
    assert_eq!(games.len(), 20, "the JSON has every game");
    assert!(players.len() > 5);
    assert_eq!(page.matches("<svg class=\"graph\"").count(), 3);
    assert_eq!(page.matches("<tr class=\"player\">").count(), 5);
    assert!(page.contains("3 of 20 games shown"));
}

#[cfg(feature = "python-chess")]
mod python {
    use std::process::Command;

    use super::*;
    use crate::util::shared;

    fn script() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/judgments.py")
    }

    /// A Lichess export with its own analysis, relabelled from its
    /// `[%eval]`s and exported again: the same judgment, comment, eval and
    /// better move on every move.
    #[test]
    fn a_lichess_export_is_judged_as_lichess_judged_it() {
        let dir = TempDir::new("analysis-lichess");
        let lichess = std::fs::read_dir(shared("pgn/lichess"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.file_name().unwrap().to_str().unwrap().starts_with("lichess_api_export_"))
            .expect("a Lichess API export in ../shared/data/pgn/lichess");
        let kbz = dir.path("l.kbz");
        let (code, _, err) = kibitz(&[
            "annotate",
            s(&lichess),
            "-o",
            s(&kbz),
            "--quiet",
            "--label",
            "pgn-eval",
            "--preset",
            "analysis",
        ]);
        assert_eq!(code, 0, "{err}");
        let pgn = dir.path("l.pgn");
        let (code, _, err) = kibitz(&["export", s(&kbz), "--format", "pgn", "-o", s(&pgn)]);
        assert_eq!(code, 0, "{err}");
        let out = Command::new("python3").arg(script()).arg(&lichess).arg(&pgn).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
        let summary = text.lines().last().unwrap();
        assert_eq!(
            summary,
            "judgments: 3 games, 194 moves, 17 judged by the first, 17 by the second, 0 differences"
        );
    }

    /// python-chess reads every exported game of the analysed sample: the
    /// same plies, an `eval()` after every move but a final mate, and NAGs
    /// that count as the report's judgments.
    #[test]
    fn python_chess_reads_the_exported_analysis_back() {
        let dir = TempDir::new("analysis-python");
        let kbz = analysed_sample(&dir);
        let (games, _, _) = report(&kbz, &dir, &[]);
        let pgn = dir.path("s.pgn");
        let (code, _, err) = kibitz(&["export", s(&kbz), "--format", "pgn", "-o", s(&pgn)]);
        assert_eq!(code, 0, "{err}");
        let out = Command::new("python3").arg(script()).arg("--counts").arg(&pgn).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let rows: Vec<Vec<u32>> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| l.split('\t').map(|c| c.parse().unwrap()).collect())
            .collect();
        assert_eq!(rows.len(), games.len());
        for (g, (row, game)) in rows.iter().zip(&games).enumerate() {
            let plies = game["plies"].as_u64().unwrap() as u32;
            assert_eq!(row[0], plies, "game {}", g + 1);
            // Every move's position is labelled but a final checkmate's.
            assert!(row[1] == plies || row[1] + 1 == plies, "game {}: {row:?}", g + 1);
            assert_eq!(row[2..], side_counts(game), "game {}", g + 1);
        }
    }
}

#[cfg(feature = "chromium")]
mod chromium {
    use std::process::Command;

    use super::*;

    fn browser() -> &'static str {
        ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .expect("chromium (apt-get install chromium)")
    }

    /// The sample's report opened in headless Chromium: the script sorts
    /// the player table (most games first), every player has a row, every
    /// game a graph; a screenshot is kept in target/.
    #[test]
    fn the_report_renders_in_a_real_browser() {
        let dir = TempDir::new("analysis-chromium");
        let kbz = analysed_sample(&dir);
        let (games, players, _) = report(&kbz, &dir, &[]);
        let url = format!("file://{}", dir.path("report.html").display());
        let profile = dir.path("profile");
        let run = |extra: &[String]| {
            let out = Command::new(browser())
                .args(["--headless", "--no-sandbox", "--disable-gpu", "--window-size=1200,3000"])
                .arg(format!("--user-data-dir={}", profile.display()))
                .args(extra)
                .arg(&url)
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            String::from_utf8(out.stdout).unwrap()
        };
        let dom = run(&["--dump-dom".to_string()]);
        assert!(dom.contains("data-sorted-by=\"games\""), "the sorting script did not run");
        assert_eq!(dom.matches("<tr class=\"player\">").count(), players.len());
        assert_eq!(dom.matches("<svg class=\"graph\"").count(), games.len());
        // The first row after sorting has the most games.
        let most = players.iter().map(|p| p["all"]["games"].as_u64().unwrap()).max().unwrap();
        let body = &dom[dom.find("<tbody>").unwrap()..];
        let first_row = &body[..body.find("</tr>").unwrap()];
        assert!(first_row.contains(&format!("<td data-v=\"{most}\">{most}</td>")), "{first_row}");
        let shot = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/report-screenshot.png");
        let _ = std::fs::remove_file(&shot);
        run(&[format!("--screenshot={}", shot.display())]);
        let bytes = std::fs::read(&shot).expect("a screenshot");
        assert!(bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000, "{} bytes", bytes.len());
        println!("screenshot: {}", shot.display());
    }

    /// The report laid out at the widths people read it at, a phone's 390
    /// px, 1280 and 1920: the page never scrolls sideways (its scroll width
    /// within the window's), the player table's columns by phase go behind
    /// a toggle where the page is narrow (shown at 1920), and each game's
    /// graph is nearly as wide as the page. Headless Chromium's window is
    /// at least 500 px wide, so the page is measured in a frame of the
    /// width asked for; a screenshot of each width is kept in target/.
    #[test]
    fn the_report_fits_a_phone_a_laptop_and_a_wide_screen() {
        let dir = TempDir::new("analysis-widths");
        let kbz = analysed_sample(&dir);
        let _ = report(&kbz, &dir, &[]);
        let profile = dir.path("profile");
        for width in [390u32, 1280, 1920] {
            let frame = dir.path(&format!("frame-{width}.html"));
            std::fs::write(
                &frame,
                format!(
                    "<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head>\
                     <body style=\"margin:0;background:#777\">\
                     <iframe id=\"f\" src=\"report.html\" style=\"border:0;width:{width}px;\
                     height:1600px;display:block\"></iframe><script>\
                     window.addEventListener('load', function () {{\
                       var f = document.getElementById('f'), d = f.contentDocument;\
                       var cell = d.querySelector('#players td.ph');\
                       var graph = d.querySelector('svg.graph').getBoundingClientRect().width;\
                       var before = getComputedStyle(cell).display;\
                       d.getElementById('phases').checked = true;\
                       document.body.dataset.measured = [d.documentElement.scrollWidth,\
                         f.contentWindow.innerWidth, before, Math.round(graph),\
                         getComputedStyle(cell).display].join(' ');\
                     }});</script></body></html>"
                ),
            )
            .unwrap();
            let run = |extra: &str| {
                let out = Command::new(browser())
                    .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"])
                    .args(["--disable-background-networking", "--disable-component-update"])
                    .arg("--allow-file-access-from-files")
                    .arg(format!("--window-size={},1600", width.max(500)))
                    .arg(format!("--user-data-dir={}", profile.display()))
                    .arg(extra)
                    .arg(format!("file://{}", frame.display()))
                    .output()
                    .unwrap();
                assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
                String::from_utf8(out.stdout).unwrap()
            };
            let dom = run("--dump-dom");
            let at = dom.find("data-measured=\"").expect("the measuring script ran") + 15;
            let measured: Vec<&str> =
                dom[at..dom[at..].find('"').unwrap() + at].split(' ').collect();
            let [scroll, window, phases, graph, toggled] = measured[..] else {
                panic!("{measured:?}")
            };
            let (scroll, window): (u32, u32) = (scroll.parse().unwrap(), window.parse().unwrap());
            let graph: u32 = graph.parse().unwrap();
            println!(
                "{width} px: scroll width {scroll}, window {window}, phase columns {phases}, graph {graph} px"
            );
            assert_eq!(window, width);
            assert!(scroll <= window, "{width} px: the page scrolls sideways ({scroll} px)");
            let wide = width >= 1500;
            assert_eq!(phases, if wide { "table-cell" } else { "none" }, "{width} px");
            assert_eq!(toggled, "table-cell", "{width} px: the toggle shows the phase columns");
            assert!(graph * 100 >= width * 85, "{width} px: a graph of {graph} px");
            let shot =
                Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("target/report-{width}.png"));
            let _ = std::fs::remove_file(&shot);
            run(&format!("--screenshot={}", shot.display()));
            assert!(std::fs::read(&shot).is_ok_and(|b| b.starts_with(b"\x89PNG")));
            println!("screenshot: {}", shot.display());
        }
    }
}

/// Ratings come from the games' `[WhiteElo]` and `[BlackElo]`: kept in the
/// record, exported, and averaged per player (a `?` is no rating).
#[test]
fn ratings_come_from_the_tags() {
    let dir = TempDir::new("analysis-ratings");
    let pgn = dir.path("rated.pgn");
    std::fs::write(
        &pgn,
        "[White \"Ann\"]\n[Black \"Bob\"]\n[WhiteElo \"1500\"]\n[BlackElo \"?\"]\n\n1. e4 e5 2. Nf3 Nc6 *\n\n\
         [White \"Bob\"]\n[Black \"Ann\"]\n[WhiteElo \"1720\"]\n[BlackElo \"1600\"]\n\n1. d4 d5 2. c4 e6 *\n",
    )
    .unwrap();
    let kbz = dir.path("rated.kbz");
    let (code, _, err) = kibitz(&[
        "annotate",
        s(&pgn),
        "-o",
        s(&kbz),
        "--quiet",
        "--preset",
        "analysis",
        "--depth",
        "3",
    ]);
    assert_eq!(code, 0, "{err}");
    let (games, players, page) = report(&kbz, &dir, &[]);
    assert_eq!(games[0]["white_elo"], 1500);
    assert!(games[0]["black_elo"].is_null());
    assert_eq!(
        (games[1]["white_elo"].as_u64(), games[1]["black_elo"].as_u64()),
        (Some(1720), Some(1600))
    );
    let ann = players.iter().find(|p| p["name"] == "Ann").unwrap();
    let bob = players.iter().find(|p| p["name"] == "Bob").unwrap();
    assert_eq!((ann["rating"].as_f64(), ann["last_rating"].as_u64()), (Some(1550.0), Some(1600)));
    assert_eq!((bob["rating"].as_f64(), bob["last_rating"].as_u64()), (Some(1720.0), Some(1720)));
    assert!(page.contains("Ann (1500)"), "the game's heading shows the rating");
    let (_, exported, _) = kibitz(&["export", s(&kbz), "--format", "pgn"]);
    assert!(exported.contains("[WhiteElo \"1500\"]") && !exported.contains("[BlackElo \"?\"]"));
    assert!(exported.contains("[WhiteElo \"1720\"]\n[BlackElo \"1600\"]"), "{exported}");
}
