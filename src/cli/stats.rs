//! `kibitz stats`: what a data set holds, as text, JSON and plots.

use std::{
    io::Write,
    path::{Path, PathBuf},
    process::ExitCode,
};

use anyhow::{Context, Result};
use clap::Args;
use kibitz::{DataStats, PLY_BIN, SCORE_BIN, SCORE_RANGE, data_stats};
use plotters::{coord::Shift, prelude::*};

#[derive(Args, Debug)]
pub struct StatsArgs {
    /// Labelled files: `.kbz`, Stockfish binpack (`.binpack`) or plain,
    /// viriformat (`.vf`, `.viri`, `.viriformat`, plain or zstd); told
    /// apart by their first bytes and those extensions.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Draw each histogram as PNG and SVG in this folder (made if missing;
    /// its parent must exist).
    #[arg(long, value_name = "DIR")]
    plots: Option<PathBuf>,
}

/// Runs `kibitz stats`.
pub fn run(args: StatsArgs) -> Result<ExitCode> {
    let args = StatsArgs { files: kibitz::expand_folders(&args.files)?, ..args };
    if let Some(dir) = &args.plots {
        kibitz::make_output_folder(dir)
            .with_context(|| format!("--plots {}: cannot create the folder", dir.display()))?;
    }
    let stats = data_stats(&args.files)?;
    let mut out = super::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&stats)?)?;
    } else {
        print_text(&mut out, &stats)?;
    }
    if let Some(dir) = &args.plots {
        plots(dir, &stats)?;
        if !args.json {
            writeln!(out, "plots     {} (PNG and SVG)", dir.display())?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn percent(n: u64, total: u64) -> f64 {
    100.0 * n as f64 / total.max(1) as f64
}

fn print_text(out: &mut impl Write, s: &DataStats) -> Result<()> {
    let t = s.positions;
    writeln!(out, "positions {}\ngames     {}", s.positions, s.games)?;
    let [w, b] = s.side_to_move;
    writeln!(
        out,
        "to move   White {w} ({:.1}%), Black {b} ({:.1}%)",
        percent(w, t),
        percent(b, t)
    )?;
    let [l, d, wi, u] = s.result;
    writeln!(
        out,
        "result    for the side to move: win {wi} ({:.1}%), draw {d} ({:.1}%), loss {l} ({:.1}%), unknown {u}",
        percent(wi, t),
        percent(d, t),
        percent(l, t)
    )?;
    let [o, m, e] = s.phase;
    writeln!(
        out,
        "phase     opening {o} ({:.1}%), middlegame {m} ({:.1}%), endgame {e} ({:.1}%)",
        percent(o, t),
        percent(m, t),
        percent(e, t)
    )?;
    writeln!(out, "score     (side to move, centipawns)")?;
    writeln!(out, "  below -{SCORE_RANGE}: {}", s.score_beyond[0])?;
    for (i, n) in s.score.iter().enumerate() {
        let lo = -SCORE_RANGE + SCORE_BIN * i as i32;
        writeln!(out, "  {lo:>5} to {:>5}: {n}", lo + SCORE_BIN - 1)?;
    }
    writeln!(out, "  {SCORE_RANGE} and above: {}", s.score_beyond[1])?;
    writeln!(out, "  mates: {} mating, {} mated", s.mates[1], s.mates[0])?;
    let sign = |r: &[u64; 3]| format!("loss {}, draw {}, win {}", r[0], r[1], r[2]);
    writeln!(out, "result by the score's sign")?;
    writeln!(out, "  score < 0: {}", sign(&s.result_by_sign[0]))?;
    writeln!(out, "  score = 0: {}", sign(&s.result_by_sign[1]))?;
    writeln!(out, "  score > 0: {}", sign(&s.result_by_sign[2]))?;
    writeln!(out, "pieces    (count: positions)")?;
    let pieces: Vec<String> = s
        .pieces
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| format!("{k}: {n}"))
        .collect();
    writeln!(out, "  {}", pieces.join(", "))?;
    writeln!(out, "ply       (bins of {PLY_BIN})")?;
    let plies: Vec<String> = s
        .ply
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .map(|(i, n)| format!("{}: {n}", i as u32 * PLY_BIN))
        .collect();
    writeln!(out, "  {}; beyond: {}", plies.join(", "), s.ply_beyond)?;
    for (i, side) in ["White", "Black"].iter().enumerate() {
        let mut top: Vec<(usize, u64)> = s.king_squares[i].iter().copied().enumerate().collect();
        top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let names: Vec<String> = top
            .iter()
            .take(5)
            .map(|(sq, n)| format!("{}{} {n}", (b'a' + (sq % 8) as u8) as char, sq / 8 + 1))
            .collect();
        writeln!(out, "{side:<9} king's squares, most frequent: {}", names.join(", "))?;
    }
    Ok(())
}

/// The plots' font, built into the binary so that a plot has its text on a
/// server with no fonts installed: DejaVu Sans cut to Latin-1
/// (`data/fonts`, made by `scripts/make_font.sh`; its licence beside it).
const PLOT_FONT: &[u8] = include_bytes!("../../data/fonts/kibitz-sans.ttf");

/// Registers the plots' font (once; later calls do nothing).
pub(super) fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // The font is ours and read by the tests: a failure here is a
        // broken build, and drawing then fails with plotters' own error.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, PLOT_FONT);
    });
}

type Plot<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// A bar chart of labelled bins.
fn bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    x_desc: &str,
    labels: &[String],
    counts: &[u64],
) -> Plot<DB> {
    root.fill(&WHITE)?;
    let top = counts.iter().copied().max().unwrap_or(0).max(1) * 11 / 10 + 1;
    let n = counts.len() as u32;
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(80)
        // Segments 0 to n - 1: one per bin.
        .build_cartesian_2d((0..n.max(1) - 1).into_segmented(), 0..top)?;
    let step = (labels.len() / 12).max(1);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_desc(x_desc)
        .y_desc("positions")
        .x_labels(labels.len().min(40))
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) if (*i as usize).is_multiple_of(step) => {
                labels.get(*i as usize).cloned().unwrap_or_default()
            }
            _ => String::new(),
        })
        .draw()?;
    chart.draw_series(
        Histogram::vertical(&chart)
            .style(RGBColor(52, 101, 164).filled())
            .margin(1)
            .data(counts.iter().enumerate().map(|(i, &c)| (i as u32, c))),
    )?;
    root.present()
}

/// Two 8x8 boards shaded by how often each king stands on each square.
fn kings<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, s: &DataStats) -> Plot<DB> {
    root.fill(&WHITE)?;
    let root = root.titled("King squares", ("sans-serif", 22))?;
    let halves = root.split_evenly((1, 2));
    for (i, area) in halves.iter().enumerate() {
        let counts = &s.king_squares[i];
        let top = counts.iter().copied().max().unwrap_or(0).max(1) as f64;
        let mut chart = ChartBuilder::on(area)
            .caption(if i == 0 { "White king" } else { "Black king" }, ("sans-serif", 18))
            .margin(16)
            .x_label_area_size(24)
            .y_label_area_size(24)
            .build_cartesian_2d((0..7i32).into_segmented(), (0..7i32).into_segmented())?;
        let name = |v: &SegmentValue<i32>, first: u8| match v {
            SegmentValue::CenterOf(k) => ((first + *k as u8) as char).to_string(),
            _ => String::new(),
        };
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(8)
            .y_labels(8)
            .x_label_formatter(&|v| name(v, b'a'))
            .y_label_formatter(&|v| name(v, b'1'))
            .draw()?;
        chart.draw_series((0..64).map(|sq| {
            let (x, y) = ((sq % 8) as i32, (sq / 8) as i32);
            // Square-root shading, so that rare squares still show.
            let t = (counts[sq] as f64 / top).sqrt();
            let shade = |lo: f64, hi: f64| (lo + (hi - lo) * t) as u8;
            let color = RGBColor(shade(245.0, 32.0), shade(245.0, 74.0), shade(245.0, 135.0));
            let corner = |x: i32, y: i32| (SegmentValue::Exact(x), SegmentValue::Exact(y));
            Rectangle::new([corner(x, y), corner(x + 1, y + 1)], color.filled())
        }))?;
    }
    root.present()
}

fn plots(dir: &Path, s: &DataStats) -> Result<()> {
    register_font();
    let score_labels: Vec<String> =
        (0..s.score.len()).map(|i| (-SCORE_RANGE + SCORE_BIN * i as i32).to_string()).collect();
    let mut score_counts = vec![s.mates[0], s.score_beyond[0]];
    score_counts.extend(&s.score);
    score_counts.extend([s.score_beyond[1], s.mates[1]]);
    let mut score_names = vec!["mated".to_string(), format!("<-{SCORE_RANGE}")];
    score_names.extend(score_labels);
    score_names.extend([format!(">={SCORE_RANGE}"), "mating".to_string()]);
    let ply_names: Vec<String> =
        (0..s.ply.len()).map(|i| (i as u32 * PLY_BIN).to_string()).collect();
    let mut ply_counts = s.ply.clone();
    ply_counts.push(s.ply_beyond);
    let mut ply_names = ply_names;
    ply_names.push(format!("{}+", s.ply.len() as u32 * PLY_BIN));
    let sign_names: Vec<String> = ["score<0", "score=0", "score>0"]
        .iter()
        .flat_map(|sign| ["loss", "draw", "win"].map(|r| format!("{sign} {r}")))
        .collect();
    let sign_counts: Vec<u64> = s.result_by_sign.iter().flatten().copied().collect();
    // (file name, title, x axis, bin names, counts)
    type Chart<'a> = (&'a str, &'a str, &'a str, Vec<String>, Vec<u64>);
    let charts: Vec<Chart> = vec![
        ("score", "Score (side to move, centipawns)", "score", score_names, score_counts),
        (
            "pieces",
            "Pieces on the board",
            "pieces",
            (0..33).map(|k| k.to_string()).collect(),
            s.pieces.clone(),
        ),
        ("ply", "Game ply", "ply", ply_names, ply_counts),
        (
            "phase",
            "Game phase (Lichess's Divider)",
            "phase",
            ["opening", "middlegame", "endgame"].map(String::from).to_vec(),
            s.phase.to_vec(),
        ),
        (
            "result",
            "Result for the side to move",
            "result",
            ["loss", "draw", "win", "unknown"].map(String::from).to_vec(),
            s.result.to_vec(),
        ),
        ("result-by-sign", "Result against the score's sign", "", sign_names, sign_counts),
        (
            "side-to-move",
            "Side to move",
            "",
            ["White", "Black"].map(String::from).to_vec(),
            s.side_to_move.to_vec(),
        ),
    ];
    // Every plot is drawn aside; they are named together once all are.
    let mut drawn = super::common::Drawn::default();
    for (name, title, x, labels, counts) in &charts {
        drawn.draw(&dir.join(format!("{name}.png")), |f| {
            bars(&BitMapBackend::new(f, (1000, 560)).into_drawing_area(), title, x, labels, counts)
        })?;
        drawn.draw(&dir.join(format!("{name}.svg")), |f| {
            bars(&SVGBackend::new(f, (1000, 560)).into_drawing_area(), title, x, labels, counts)
        })?;
    }
    drawn.draw(&dir.join("king-squares.png"), |f| {
        kings(&BitMapBackend::new(f, (1000, 540)).into_drawing_area(), s)
    })?;
    drawn.draw(&dir.join("king-squares.svg"), |f| {
        kings(&SVGBackend::new(f, (1000, 540)).into_drawing_area(), s)
    })?;
    drawn.keep().with_context(|| format!("drawing the plots in {}", dir.display()))
}
