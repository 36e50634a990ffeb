//! The trainer's data: labelled positions read from any file kibitz reads
//! labels from, packed in 32 bytes, scattered into bucket files on disk,
//! and streamed back shuffled one bucket at a time, so memory holds one
//! bucket, never the whole set.
//!
//! An entry, little-endian:
//!
//! ```text
//! bytes  0.. 8  occupancy
//! bytes  8..24  a nibble per occupied square, low squares first: the piece
//!               (0 White pawn, 1 Black pawn, 2 White knight, ... 11 Black king)
//! bytes 24..26  the label's score, side to move's view, centipawns (i16)
//! byte  26      the game's result for the side to move: 0 lost, 1 drawn,
//!               2 won, 3 unknown
//! byte  27      the side to move: 0 White, 1 Black
//! bytes 28..32  zero
//! ```

use std::{
    fs::File,
    io::{BufWriter, Read, Write},
    path::{Path, PathBuf},
};

use crate::{
    chess::{
        position::Position,
        types::{Color, Piece, Square},
    },
    nnue::small::feature,
    record::{
        chain::walk,
        format::{GameRecord, is_decided},
        import::for_each_game,
        reader::RecordError,
    },
};

use super::TrainError;

/// Bytes per entry.
pub const ENTRY_BYTES: usize = 32;
/// The most pieces a position has.
pub const MAX_PIECES: usize = 32;

/// A labelled position, packed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Entry(pub [u8; ENTRY_BYTES]);

impl Entry {
    /// `pos` with its label `score` (side to move's view) and the game's
    /// `result` for the side to move (0 lost, 1 drawn, 2 won, 3 unknown).
    pub fn new(pos: &Position, score: i16, result: u8) -> Entry {
        let mut b = [0u8; ENTRY_BYTES];
        let occ = pos.occupied();
        b[..8].copy_from_slice(&occ.0.to_le_bytes());
        for (k, sq) in occ.into_iter().enumerate() {
            let pc = pos.piece_on(sq).expect("occupied") as u8;
            b[8 + k / 2] |= pc << (4 * (k % 2));
        }
        b[24..26].copy_from_slice(&score.to_le_bytes());
        b[26] = result;
        b[27] = pos.side_to_move() as u8;
        Entry(b)
    }

    /// The score, side to move's view.
    pub fn score(&self) -> i16 {
        i16::from_le_bytes([self.0[24], self.0[25]])
    }

    /// The result for the side to move (0 lost, 1 drawn, 2 won, 3 unknown).
    pub fn result(&self) -> u8 {
        self.0[26]
    }

    /// The side to move.
    pub fn side_to_move(&self) -> Color {
        Color::from_index(usize::from(self.0[27] & 1))
    }

    /// The inputs active for the side to move and for the other side; the
    /// number of pieces.
    pub fn features(&self, stm: &mut [u16; MAX_PIECES], nstm: &mut [u16; MAX_PIECES]) -> usize {
        let us = self.side_to_move();
        let mut occ = u64::from_le_bytes(self.0[..8].try_into().expect("8 bytes"));
        let mut k = 0;
        while occ != 0 && k < MAX_PIECES {
            let sq = Square::new(occ.trailing_zeros());
            occ &= occ - 1;
            let code = (self.0[8 + k / 2] >> (4 * (k % 2))) & 15;
            let pc = Piece::ALL[usize::from(code.min(11))];
            stm[k] = feature(us, sq, pc) as u16;
            nstm[k] = feature(!us, sq, pc) as u16;
            k += 1;
        }
        k
    }
}

/// What ingesting the inputs found.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IngestCounts {
    /// Games read.
    pub games: u64,
    /// Labels read.
    pub labels: u64,
    /// Entries kept for training.
    pub train: u64,
    /// Entries kept for validation.
    pub validation: u64,
    /// Labels dropped: a mate score or a tablebase win or loss.
    pub mates: u64,
    /// Labels dropped: the side to move in check.
    pub in_check: u64,
    /// Labels dropped: the best move a capture or a promotion.
    pub tactical: u64,
    /// Games that could not be walked (a bad move index).
    pub bad_games: u64,
}

/// A seeded generator (SplitMix64): the same numbers on every machine.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// A float in `[0, 1)`.
    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// A generator for the stream `parts` of `seed`.
    pub fn derive(seed: u64, parts: &[u64]) -> Rng {
        let mut r = Rng(seed);
        for &p in parts {
            r = Rng(r.next_u64() ^ p.wrapping_mul(0xD6E8_FEB8_6659_FD93));
        }
        r
    }

    /// Shuffles `v` (Fisher-Yates).
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
    }
}

/// The bucket files of a cache folder.
pub fn bucket_path(dir: &Path, b: usize) -> PathBuf {
    dir.join(format!("train-{b:03}.bin"))
}

/// The validation file of a cache folder.
pub fn validation_path(dir: &Path) -> PathBuf {
    dir.join("validation.bin")
}

/// Reads the labels of `inputs` into `dir`: entries scattered at random
/// (from `seed`) into `buckets` training files, and the games whose index
/// falls in the validation share (`validation_per_mille`) into the
/// validation file, whole games, so no position of a validation game is
/// trained on. `progress` hears the games read so far.
pub fn ingest(
    inputs: &[PathBuf],
    dir: &Path,
    buckets: usize,
    validation_per_mille: u32,
    seed: u64,
    mut progress: impl FnMut(&IngestCounts),
) -> Result<IngestCounts, TrainError> {
    crate::io::make_output_folder(dir).map_err(|e| io_error(dir, e))?;
    let mut files = Vec::with_capacity(buckets);
    for b in 0..buckets {
        let p = bucket_path(dir, b);
        files.push(BufWriter::new(File::create(&p).map_err(|e| io_error(&p, e))?));
    }
    let vp = validation_path(dir);
    let mut val = BufWriter::new(File::create(&vp).map_err(|e| io_error(&vp, e))?);
    let mut rng = Rng::derive(seed, &[1]);
    let mut counts = IngestCounts::default();
    let mut game_number = 0u64;
    for input in inputs {
        let mut failed: Option<std::io::Error> = None;
        for_each_game(input, |g: GameRecord| -> Result<(), RecordError> {
            counts.games += 1;
            game_number += 1;
            let validation =
                Rng::derive(seed, &[2, game_number]).below(1000) < u64::from(validation_per_mille);
            let mut entries = Vec::new();
            let walked = walk(&g, |step| {
                let Some(label) = step.label else { return };
                counts.labels += 1;
                if is_decided(label.score) {
                    counts.mates += 1;
                    return;
                }
                if step.pos.in_check() {
                    counts.in_check += 1;
                    return;
                }
                if step.best.is_some_and(|m| step.pos.is_capture_or_promotion(m)) {
                    counts.tactical += 1;
                    return;
                }
                let result = match (g.result, step.pos.side_to_move()) {
                    (3, _) => 3,
                    (r, Color::White) => r,
                    (r, Color::Black) => 2 - r,
                };
                entries.push(Entry::new(step.pos, label.score, result));
            });
            if walked.is_err() {
                counts.bad_games += 1;
                return Ok(());
            }
            for e in entries {
                let out = if validation {
                    counts.validation += 1;
                    &mut val
                } else {
                    counts.train += 1;
                    &mut files[rng.below(buckets as u64) as usize]
                };
                if let Err(e) = out.write_all(&e.0) {
                    failed.get_or_insert(e);
                }
            }
            if counts.games % 4096 == 0 {
                progress(&counts);
            }
            Ok(())
        })
        .map_err(TrainError::Read)?;
        if let Some(e) = failed {
            return Err(io_error(dir, e));
        }
    }
    for (b, f) in files.into_iter().enumerate() {
        f.into_inner()
            .map_err(|e| e.into_error())
            .and_then(|f| f.sync_all())
            .map_err(|e| io_error(&bucket_path(dir, b), e))?;
    }
    val.into_inner()
        .map_err(|e| e.into_error())
        .and_then(|f| f.sync_all())
        .map_err(|e| io_error(&vp, e))?;
    progress(&counts);
    Ok(counts)
}

fn io_error(path: &Path, e: std::io::Error) -> TrainError {
    TrainError::Io { path: path.to_path_buf(), source: e }
}

/// Reads a file of entries (at most `limit`).
pub fn read_entries(path: &Path, limit: usize) -> std::io::Result<Vec<Entry>> {
    let mut bytes = Vec::new();
    File::open(path)?.take((limit * ENTRY_BYTES) as u64).read_to_end(&mut bytes)?;
    Ok(bytes.chunks_exact(ENTRY_BYTES).map(|c| Entry(c.try_into().expect("32 bytes"))).collect())
}

/// Where a stream of training entries stands: the pass over the data, the
/// bucket (in that pass's order) and the entry in it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Cursor {
    /// Passes completed.
    pub epoch: u64,
    /// Buckets of this pass completed.
    pub bucket: u64,
    /// Entries of the current bucket consumed.
    pub offset: u64,
}

/// The training entries, shuffled: each pass visits the buckets in an order
/// drawn from the seed and the pass, and each bucket's entries in an order
/// drawn from the seed, the pass and the bucket. The same seed gives the
/// same stream, and a stream resumed from a [`Cursor`] continues it.
pub struct Stream {
    dir: PathBuf,
    buckets: usize,
    seed: u64,
    cursor: Cursor,
    order: Vec<usize>,
    loaded: Vec<Entry>,
    loaded_for: Option<(u64, u64)>,
}

impl Stream {
    /// A stream over the buckets of `dir`, from `cursor`.
    pub fn new(dir: &Path, buckets: usize, seed: u64, cursor: Cursor) -> Stream {
        Stream {
            dir: dir.to_path_buf(),
            buckets,
            seed,
            cursor,
            order: Vec::new(),
            loaded: Vec::new(),
            loaded_for: None,
        }
    }

    /// Where the stream stands.
    pub fn cursor(&self) -> Cursor {
        self.cursor
    }

    /// Fills `batch` with the next `batch.capacity()` entries (cleared
    /// first); passes wrap around.
    pub fn fill(&mut self, batch: &mut Vec<Entry>, size: usize) -> std::io::Result<()> {
        batch.clear();
        let mut empty_buckets = 0;
        while batch.len() < size {
            self.load()?;
            let at = self.cursor.offset as usize;
            let take = (size - batch.len()).min(self.loaded.len() - at);
            batch.extend_from_slice(&self.loaded[at..at + take]);
            self.cursor.offset += take as u64;
            if take == 0 {
                empty_buckets += 1;
                if empty_buckets > 2 * self.buckets {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("{}: no training entries", self.dir.display()),
                    ));
                }
            }
            if self.cursor.offset as usize == self.loaded.len() {
                self.cursor.offset = 0;
                self.cursor.bucket += 1;
                if self.cursor.bucket as usize == self.buckets {
                    self.cursor.bucket = 0;
                    self.cursor.epoch += 1;
                }
            }
        }
        Ok(())
    }

    /// Loads and shuffles the bucket the cursor is in, if not loaded.
    fn load(&mut self) -> std::io::Result<()> {
        let key = (self.cursor.epoch, self.cursor.bucket);
        if self.loaded_for == Some(key) {
            return Ok(());
        }
        let mut order: Vec<usize> = (0..self.buckets).collect();
        Rng::derive(self.seed, &[3, key.0]).shuffle(&mut order);
        self.order = order;
        let b = self.order[key.1 as usize];
        self.loaded = read_entries(&bucket_path(&self.dir, b), usize::MAX / ENTRY_BYTES)?;
        Rng::derive(self.seed, &[4, key.0, b as u64]).shuffle(&mut self.loaded);
        self.loaded_for = Some(key);
        Ok(())
    }
}
