//! Run summaries: what was read, replayed, rejected and skipped, and how
//! fast; printed for people or as JSON.

use std::{collections::BTreeMap, fmt};

use serde::Serialize;

use crate::{
    io::source::{Compression, Format},
    pipeline::replayer::{ChunkOutcome, RejectKind},
};

/// One input's part of a summary.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FileSummary {
    /// The name as given.
    pub name: String,
    /// Compression, once known.
    pub compression: Option<Compression>,
    /// Text format, once known.
    pub format: Option<Format>,
    /// Bytes read from the input.
    pub bytes: u64,
    /// Bytes of text after decompression.
    pub text_bytes: u64,
    /// Games (or EPD lines) read.
    pub games: u64,
    /// Plies replayed.
    pub plies: u64,
    /// Games rejected.
    pub rejected: u64,
    /// Problems reading the input (corrupt or unreadable data), with offsets.
    pub errors: Vec<String>,
}

/// The summary of a replay run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Summary {
    /// Per input.
    pub files: Vec<FileSummary>,
    /// Bytes read from all inputs.
    pub bytes: u64,
    /// Bytes of text.
    pub text_bytes: u64,
    /// Games (or EPD lines).
    pub games: u64,
    /// Plies replayed.
    pub plies: u64,
    /// Games rejected, by kind.
    pub rejected: BTreeMap<&'static str, u64>,
    /// Games rejected in all.
    pub rejected_games: u64,
    /// Games skipped for their variant, by variant.
    pub skipped_variants: BTreeMap<String, u64>,
    /// Games of a variant name kibitz does not know, played as standard
    /// chess (a warning), by name.
    pub unknown_variants: BTreeMap<String, u64>,
    /// Lines among games' tags that hold no tag, passed over (a warning).
    pub malformed_tag_lines: u64,
    /// Chess960 games replayed.
    pub chess960_games: u64,
    /// Null moves played.
    pub null_moves: u64,
    /// Inputs with read errors.
    pub input_errors: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Worker threads.
    pub threads: usize,
    /// What was verified.
    pub verify: String,
}

impl Summary {
    /// Adds a chunk's outcome for input `file`.
    pub fn add(&mut self, file: usize, out: &ChunkOutcome) {
        self.games += out.games;
        self.plies += out.plies;
        self.null_moves += out.null_moves;
        self.chess960_games += out.chess960_games;
        for r in &out.rejected {
            *self.rejected.entry(kind_name(r.kind)).or_default() += 1;
        }
        self.rejected_games += out.rejected.len() as u64;
        for (v, n) in &out.skipped_variants {
            *self.skipped_variants.entry(v.clone()).or_default() += n;
        }
        for (v, n) in &out.unknown_variants {
            *self.unknown_variants.entry(v.clone()).or_default() += n;
        }
        self.malformed_tag_lines += out.malformed_tag_lines;
        if let Some(f) = self.files.get_mut(file) {
            f.games += out.games;
            f.plies += out.plies;
            f.rejected += out.rejected.len() as u64;
        }
    }

    /// Games per second.
    pub fn games_per_second(&self) -> f64 {
        rate(self.games as f64, self.seconds)
    }

    /// Plies per second.
    pub fn plies_per_second(&self) -> f64 {
        rate(self.plies as f64, self.seconds)
    }

    /// Megabytes (10^6) of input per second.
    pub fn mb_per_second(&self) -> f64 {
        rate(self.bytes as f64 / 1e6, self.seconds)
    }

    /// The summary with its rates, to serialize as one JSON object.
    pub fn with_rates(&self) -> SummaryWithRates<'_> {
        SummaryWithRates {
            summary: self,
            games_per_second: self.games_per_second(),
            plies_per_second: self.plies_per_second(),
            mb_per_second: self.mb_per_second(),
        }
    }

    /// The summary as one JSON object, rates included.
    pub fn to_json(&self) -> String {
        serde_json::to_string(&self.with_rates()).unwrap_or_default()
    }
}

/// A [`Summary`] and its rates, serialized as one object.
#[derive(Serialize)]
pub struct SummaryWithRates<'a> {
    #[serde(flatten)]
    summary: &'a Summary,
    games_per_second: f64,
    plies_per_second: f64,
    mb_per_second: f64,
}

fn kind_name(kind: RejectKind) -> &'static str {
    kind.name()
}

fn rate(x: f64, seconds: f64) -> f64 {
    if seconds > 0.0 { x / seconds } else { 0.0 }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "files     {} ({} bytes read, {} bytes of text)",
            self.files.len(),
            self.bytes,
            self.text_bytes
        )?;
        writeln!(f, "games     {} ({} Chess960)", self.games, self.chess960_games)?;
        writeln!(f, "plies     {}", self.plies)?;
        write!(f, "rejected  {}", self.rejected_games)?;
        if !self.rejected.is_empty() {
            let kinds: Vec<String> =
                self.rejected.iter().map(|(k, n)| format!("{k} {n}")).collect();
            write!(f, " ({})", kinds.join(", "))?;
        }
        writeln!(f)?;
        if !self.skipped_variants.is_empty() {
            let v: Vec<String> =
                self.skipped_variants.iter().map(|(k, n)| format!("{k:?} {n}")).collect();
            writeln!(
                f,
                "skipped   {} (variants: {})",
                self.skipped_variants.values().sum::<u64>(),
                v.join(", ")
            )?;
        }
        if !self.unknown_variants.is_empty() {
            let v: Vec<String> =
                self.unknown_variants.iter().map(|(k, n)| format!("{k:?} {n}")).collect();
            writeln!(
                f,
                "warning   {} games of an unknown variant played as standard chess ({})",
                self.unknown_variants.values().sum::<u64>(),
                v.join(", ")
            )?;
        }
        if self.malformed_tag_lines > 0 {
            writeln!(
                f,
                "warning   {} lines among tags held no tag and were passed over",
                self.malformed_tag_lines
            )?;
        }
        if self.null_moves > 0 {
            writeln!(f, "null      {} null moves played", self.null_moves)?;
        }
        for file in &self.files {
            for e in &file.errors {
                writeln!(f, "error     {}: {e}", file.name)?;
            }
        }
        let plural = if self.threads == 1 { "" } else { "s" };
        writeln!(f, "verify    {} ({} thread{plural})", self.verify, self.threads)?;
        writeln!(f, "seconds   {:.3}", self.seconds)?;
        write!(
            f,
            "speed     {:.0} games/s, {:.0} plies/s, {:.1} MB/s",
            self.games_per_second(),
            self.plies_per_second(),
            self.mb_per_second()
        )
    }
}
