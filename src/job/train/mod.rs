//! `kibitz train`: a small NNUE ([`crate::nnue::small`]) trained on the CPU
//! from the labels kibitz writes (`.kbz`) or reads (binpack, plain,
//! viriformat).
//!
//! The run, as the data flows:
//!
//! 1. Ingest ([`data::ingest`]): every label of every game, except mate
//!    scores, positions in check and positions whose best move is a capture
//!    or a promotion (the quiet positions a static evaluation can learn),
//!    packed in 32 bytes with its game's result, scattered at random into
//!    bucket files in the cache folder; a seeded share of whole games goes
//!    to the validation file instead.
//! 2. Train: superbatches of batches; the stream visits the buckets in a
//!    seeded order, each shuffled in memory (memory holds one bucket). Each
//!    batch is split into one contiguous part per thread; each thread adds
//!    its part's gradient into its own buffer; the buffers are summed in
//!    thread order, so a seed and a thread count give the same net to the
//!    bit. AdamW with a cosine learning-rate schedule.
//! 3. After each superbatch: the validation loss, a checkpoint (parameters,
//!    AdamW's moments, the stream's cursor, the losses so far) and the
//!    quantised net, each written to a temporary file and renamed, so a run
//!    stopped at any moment leaves the last complete ones; `--resume`
//!    continues from the checkpoint to the same bytes an uninterrupted run
//!    writes.

pub mod data;
pub mod model;

use std::{
    fs::File,
    io::{Read, Write},
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Instant,
};

use sha2::{Digest, Sha256};

use crate::{nnue::small::Activation, record::reader::RecordError};

use data::{Cursor, Entry, IngestCounts, Stream};
use model::{AdamW, Model};

/// Why a training run failed.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    /// An input could not be read.
    #[error("{0}")]
    Read(RecordError),
    /// A file of the run could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The settings cannot work, or do not match the run resumed.
    #[error("{0}")]
    Settings(String),
    /// Nothing to train on.
    #[error("no training positions in the inputs ({0})")]
    NoData(String),
    /// The run was stopped (Ctrl-C) before its end; the last checkpoint
    /// stands.
    #[error("stopped after superbatch {0}; --resume continues from there")]
    Stopped(u32),
}

/// How to train.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TrainSettings {
    /// The labelled files.
    pub inputs: Vec<PathBuf>,
    /// The net to write.
    pub output: PathBuf,
    /// The folder of the bucket files and the checkpoint.
    pub cache: PathBuf,
    /// The hidden layer's width per side.
    pub hidden: usize,
    /// SCReLU (true) or CReLU.
    pub screlu: bool,
    /// Output buckets, by the number of pieces (1 to 8).
    #[serde(default = "one_bucket")]
    pub output_buckets: usize,
    /// Superbatches to train.
    pub superbatches: u32,
    /// Batches per superbatch.
    pub batches: u32,
    /// Positions per batch.
    pub batch_size: usize,
    /// The first learning rate.
    pub lr: f32,
    /// The last learning rate (cosine schedule between).
    pub lr_final: f32,
    /// AdamW's decoupled weight decay.
    pub weight_decay: f32,
    /// The share of the target taken from the game's result.
    pub wdl: f32,
    /// Worker threads.
    pub threads: usize,
    /// The seed of the shuffle, the split and the initial weights.
    pub seed: u64,
    /// Games kept for validation, per thousand.
    pub validation_per_mille: u32,
    /// Bucket files.
    pub buckets: usize,
}

fn one_bucket() -> usize {
    1
}

impl TrainSettings {
    /// The activation.
    pub fn activation(&self) -> Activation {
        if self.screlu { Activation::SCReLU } else { Activation::CReLU }
    }

    fn check(&self) -> Result<(), TrainError> {
        let bad = |m: String| Err(TrainError::Settings(m));
        if self.hidden == 0
            || !self.hidden.is_multiple_of(crate::nnue::small::HIDDEN_STEP)
            || self.hidden > 1024
        {
            return bad(format!("--hidden {}: a multiple of 16 up to 1024", self.hidden));
        }
        if !(1..=crate::nnue::small::MAX_BUCKETS).contains(&self.output_buckets) {
            return bad(format!(
                "--output-buckets {}: 1 to {}",
                self.output_buckets,
                crate::nnue::small::MAX_BUCKETS
            ));
        }
        if self.batch_size == 0 || self.batches == 0 || self.superbatches == 0 {
            return bad("batch size, batches and superbatches must be at least 1".into());
        }
        if self.threads == 0 || self.threads > self.batch_size {
            return bad(format!("--threads {}: at least 1, at most the batch size", self.threads));
        }
        if !(0.0..=1.0).contains(&self.wdl) {
            return bad(format!("--wdl {}: between 0 and 1", self.wdl));
        }
        if !(self.lr > 0.0 && self.lr_final >= 0.0 && self.lr_final <= self.lr) {
            return bad(format!(
                "--lr {} --lr-final {}: 0 <= final <= first",
                self.lr, self.lr_final
            ));
        }
        if self.buckets == 0 || self.buckets > 4096 {
            return bad(format!("{} buckets: between 1 and 4096", self.buckets));
        }
        if self.inputs.is_empty() {
            return bad("no input files".into());
        }
        Ok(())
    }

    /// The learning rate of batch `t` of `total`.
    pub fn learning_rate(&self, t: u64, total: u64) -> f32 {
        let x = t as f64 / total.max(1) as f64;
        let c = 0.5 * (1.0 + (std::f64::consts::PI * x).cos());
        (f64::from(self.lr_final) + f64::from(self.lr - self.lr_final) * c) as f32
    }

    /// The settings that decide the net's bytes (a resumed run must match).
    fn identity(&self) -> TrainSettings {
        TrainSettings { output: PathBuf::new(), cache: PathBuf::new(), ..self.clone() }
    }
}

/// The losses after a superbatch.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LossPoint {
    /// The superbatch (from 1).
    pub superbatch: u32,
    /// Mean training loss over the superbatch.
    pub train: f64,
    /// Validation loss after it; `None` when the run has no validation set
    /// (no game fell in the validation share).
    pub validation: Option<f64>,
    /// Seconds of training so far (this run and the runs it resumed).
    pub seconds: f64,
}

/// What a run reports as it goes.
pub trait TrainSink {
    /// The ingest read more games.
    fn ingest(&mut self, _counts: &IngestCounts) {}
    /// A batch was trained: superbatch (from 1), batch in it (from 1),
    /// positions a second over this superbatch, its mean loss so far.
    fn batch(&mut self, _superbatch: u32, _batch: u32, _per_second: f64, _loss: f64) {}
    /// A superbatch ended: the losses so far; the net and checkpoint are
    /// written.
    fn superbatch(&mut self, _history: &[LossPoint]) {}
}

/// What a run did.
#[derive(Clone, Debug, serde::Serialize)]
pub struct TrainReport {
    /// What the ingest kept and dropped (from the cache's manifest when
    /// resumed).
    pub counts: IngestCounts,
    /// Superbatches trained in this run.
    pub trained: u32,
    /// Positions trained in this run.
    pub positions: u64,
    /// Training seconds of this run.
    pub seconds: f64,
    /// Positions a second in this run.
    pub per_second: f64,
    /// The losses after every superbatch (of every run).
    pub history: Vec<LossPoint>,
    /// The net written.
    pub sha256: String,
}

/// The cache folder's record of what it holds.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Manifest {
    inputs: Vec<(String, u64)>,
    buckets: usize,
    seed: u64,
    validation_per_mille: u32,
    counts: IngestCounts,
}

/// A checkpoint: everything a resumed run needs.
struct Checkpoint {
    settings: TrainSettings,
    done: u32,
    cursor: Cursor,
    history: Vec<LossPoint>,
    model: Model,
    adam: AdamW,
}

const CHECKPOINT_MAGIC: &[u8; 8] = b"KIBITZCK";

#[derive(serde::Serialize, serde::Deserialize)]
struct CheckpointMeta {
    settings: TrainSettings,
    done: u32,
    cursor: Cursor,
    history: Vec<LossPoint>,
    adam_steps: u64,
}

impl Checkpoint {
    fn path(cache: &Path) -> PathBuf {
        cache.join("checkpoint.bin")
    }

    fn write(&self, cache: &Path) -> Result<(), TrainError> {
        let meta = CheckpointMeta {
            settings: self.settings.identity(),
            done: self.done,
            cursor: self.cursor,
            history: self.history.clone(),
            adam_steps: self.adam.t,
        };
        let json = serde_json::to_vec(&meta).expect("serialisable");
        let mut out = Vec::with_capacity(16 + json.len() + 12 * self.model.params.len() + 32);
        out.extend_from_slice(CHECKPOINT_MAGIC);
        out.extend_from_slice(&(json.len() as u64).to_le_bytes());
        out.extend_from_slice(&json);
        for v in [&self.model.params, &self.adam.m, &self.adam.v] {
            for x in v.iter() {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        let digest = Sha256::digest(&out);
        out.extend_from_slice(&digest);
        write_atomic(&Checkpoint::path(cache), &out)
    }

    fn read(cache: &Path) -> Result<Checkpoint, TrainError> {
        let path = Checkpoint::path(cache);
        let io = |e| TrainError::Io { path: path.clone(), source: e };
        let mut bytes = Vec::new();
        File::open(&path).and_then(|mut f| f.read_to_end(&mut bytes)).map_err(io)?;
        let bad = |what: &str| TrainError::Settings(format!("{}: {what}", path.display()));
        if bytes.len() < 48 || !bytes.starts_with(CHECKPOINT_MAGIC) {
            return Err(bad("not a kibitz training checkpoint"));
        }
        let (body, sum) = bytes.split_at(bytes.len() - 32);
        if Sha256::digest(body)[..] != *sum {
            return Err(bad("checksum mismatch: the checkpoint is damaged"));
        }
        let len = u64::from_le_bytes(body[8..16].try_into().expect("8 bytes")) as usize;
        let meta: CheckpointMeta = body
            .get(16..16 + len)
            .and_then(|j| serde_json::from_slice(j).ok())
            .ok_or_else(|| bad("unreadable settings"))?;
        let n = Model::size(meta.settings.hidden, meta.settings.output_buckets);
        let floats = &body[16 + len..];
        if floats.len() != 12 * n {
            return Err(bad("the parameters do not fit the width"));
        }
        let read = |k: usize| -> Vec<f32> {
            floats[4 * n * k..4 * n * (k + 1)]
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
                .collect()
        };
        let model = Model {
            hidden: meta.settings.hidden,
            activation: meta.settings.activation(),
            buckets: meta.settings.output_buckets,
            params: read(0),
        };
        let adam = AdamW { m: read(1), v: read(2), t: meta.adam_steps };
        Ok(Checkpoint {
            settings: meta.settings,
            done: meta.done,
            cursor: meta.cursor,
            history: meta.history,
            model,
            adam,
        })
    }
}

/// Writes `bytes` to `path` through a temporary file and a rename: the
/// path holds the old bytes or the new, never a part.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), TrainError> {
    // `NAME.partial` beside it, as every command's outputs are written.
    let tmp = crate::record::writer::partial_path(path);
    let io = |e| TrainError::Io { path: path.to_path_buf(), source: e };
    let mut f = File::create(&tmp).map_err(io)?;
    if let Err(e) = f.write_all(bytes).and_then(|()| f.sync_all()) {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(e));
    }
    std::fs::rename(&tmp, path).map_err(io)
}

fn manifest_path(cache: &Path) -> PathBuf {
    cache.join("manifest.json")
}

fn input_list(inputs: &[PathBuf]) -> Result<Vec<(String, u64)>, TrainError> {
    inputs
        .iter()
        .map(|p| {
            let len = std::fs::metadata(p)
                .map_err(|e| TrainError::Io { path: p.clone(), source: e })?
                .len();
            Ok((p.display().to_string(), len))
        })
        .collect()
}

/// A training run.
pub struct Train {
    settings: TrainSettings,
    resume: bool,
    stop: Arc<AtomicBool>,
}

impl Train {
    /// A run with `settings`; `resume` continues the checkpoint in the
    /// cache folder.
    pub fn new(settings: TrainSettings, resume: bool) -> Train {
        Train { settings, resume, stop: Arc::new(AtomicBool::new(false)) }
    }

    /// A flag that, set, stops the run at the end of the current
    /// superbatch's next batch (nothing of the superbatch is kept).
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    /// Runs it.
    ///
    /// # Errors
    ///
    /// A [`TrainError`]; the last checkpoint and net written stay valid.
    pub fn run(self, sink: &mut dyn TrainSink) -> Result<TrainReport, TrainError> {
        let s = &self.settings;
        s.check()?;
        let cache = &s.cache;
        // The net's folder must exist; the cache folder belongs to the run
        // and is made (its parent must exist too).
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| TrainError::Io { path, source }
        };
        crate::io::check_output_folder(&s.output).map_err(io(&s.output))?;
        crate::io::make_output_folder(cache).map_err(io(cache))?;
        let inputs = input_list(&s.inputs)?;
        let checkpoint = self.checkpoint()?;
        let counts = ingested(s, inputs, checkpoint.is_some(), sink)?;
        if counts.train == 0 {
            return Err(TrainError::NoData(format!(
                "{} games, {} labels read",
                counts.games, counts.labels
            )));
        }
        let validation = data::read_entries(&data::validation_path(cache), 200_000)
            .map_err(|e| TrainError::Io { path: data::validation_path(cache), source: e })?;

        let (mut model, mut adam, mut done, cursor, mut history) = match checkpoint {
            Some(c) => (c.model, c.adam, c.done, c.cursor, c.history),
            None => {
                let model = Model::new(s.hidden, s.activation(), s.output_buckets, s.seed);
                let n = model.params.len();
                (model, AdamW::new(n), 0, Cursor::default(), Vec::new())
            }
        };
        let mut stream = Stream::new(cache, s.buckets, s.seed, cursor);
        let n = model.params.len();
        let mut grads: Vec<Vec<f32>> = (0..s.threads).map(|_| vec![0f32; n]).collect();
        let mut batch: Vec<Entry> = Vec::with_capacity(s.batch_size);
        let started = Instant::now();
        let seconds_before = history.last().map_or(0.0, |p: &LossPoint| p.seconds);
        let (mut trained, mut positions) = (0u32, 0u64);
        let mut sha256 = String::new();
        while done < s.superbatches {
            let loss_sum = self.superbatch(
                Pass { model: &mut model, adam: &mut adam, grads: &mut grads, batch: &mut batch },
                &mut stream,
                done,
                sink,
            )?;
            done += 1;
            trained += 1;
            positions += u64::from(s.batches) * s.batch_size as u64;
            let seen = u64::from(s.batches) * s.batch_size as u64;
            history.push(LossPoint {
                superbatch: done,
                train: loss_sum / seen as f64,
                validation: (!validation.is_empty())
                    .then(|| model.loss_threaded(&validation, s.wdl, s.threads)),
                seconds: seconds_before + started.elapsed().as_secs_f64(),
            });
            let net = model.quantise(&description(s, done, &counts));
            let bytes = net.to_bytes();
            write_atomic(&s.output, &bytes)?;
            sha256 = net.info().sha256.clone();
            Checkpoint {
                settings: s.clone(),
                done,
                cursor: stream.cursor(),
                history: history.clone(),
                model: model.clone(),
                adam: adam.clone(),
            }
            .write(cache)?;
            sink.superbatch(&history);
        }
        let seconds = started.elapsed().as_secs_f64();
        if sha256.is_empty() {
            // A resumed run that had nothing left to do: the net is there.
            let bytes = std::fs::read(&s.output)
                .map_err(|e| TrainError::Io { path: s.output.clone(), source: e })?;
            sha256 = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
        }
        Ok(TrainReport {
            counts,
            trained,
            positions,
            seconds,
            per_second: positions as f64 / seconds.max(1e-9),
            history,
            sha256,
        })
    }

    /// The checkpoint to resume from: with `--resume` and one in the
    /// cache, it must have been made with these settings.
    fn checkpoint(&self) -> Result<Option<Checkpoint>, TrainError> {
        let cache = &self.settings.cache;
        if !self.resume || !Checkpoint::path(cache).exists() {
            return Ok(None);
        }
        let c = Checkpoint::read(cache)?;
        if c.settings != self.settings.identity() {
            return Err(TrainError::Settings(format!(
                "{}: the checkpoint was made with other settings; run without --resume, or \
                 with the same settings",
                Checkpoint::path(cache).display()
            )));
        }
        Ok(Some(c))
    }

    /// One superbatch: its batches read, their gradients taken and the
    /// model updated; returns the sum of the batches' losses.
    fn superbatch(
        &self,
        pass: Pass<'_>,
        stream: &mut Stream,
        done: u32,
        sink: &mut dyn TrainSink,
    ) -> Result<f64, TrainError> {
        let s = &self.settings;
        let total_batches = u64::from(s.superbatches) * u64::from(s.batches);
        let sb_start = Instant::now();
        let mut loss_sum = 0f64;
        for b in 0..s.batches {
            if self.stop.load(Ordering::Relaxed) {
                return Err(TrainError::Stopped(done));
            }
            stream
                .fill(pass.batch, s.batch_size)
                .map_err(|e| TrainError::Io { path: s.cache.clone(), source: e })?;
            loss_sum += batch_gradient(pass.model, pass.batch, s.wdl, pass.grads);
            let t = u64::from(done) * u64::from(s.batches) + u64::from(b);
            let lr = s.learning_rate(t, total_batches);
            update(pass.model, pass.adam, pass.grads, pass.batch.len(), lr, s.weight_decay);
            let seen = (u64::from(b) + 1) * s.batch_size as u64;
            let rate = seen as f64 / sb_start.elapsed().as_secs_f64().max(1e-9);
            sink.batch(done + 1, b + 1, rate, loss_sum / seen as f64);
        }
        Ok(loss_sum)
    }
}

/// What a superbatch works on: the model, its optimiser, the threads'
/// gradients and the batch read.
struct Pass<'a> {
    model: &'a mut Model,
    adam: &'a mut AdamW,
    grads: &'a mut Vec<Vec<f32>>,
    batch: &'a mut Vec<Entry>,
}

/// The counts of the cache's data: read from its manifest when the cache
/// was made from these inputs with these settings, else the inputs are
/// ingested again (refused when resuming a checkpoint, which the new
/// cache would not match).
fn ingested(
    s: &TrainSettings,
    inputs: Vec<(String, u64)>,
    resuming: bool,
    sink: &mut dyn TrainSink,
) -> Result<IngestCounts, TrainError> {
    let cache = &s.cache;
    let manifest: Option<Manifest> =
        std::fs::read(manifest_path(cache)).ok().and_then(|b| serde_json::from_slice(&b).ok());
    let fresh = Manifest {
        inputs,
        buckets: s.buckets,
        seed: s.seed,
        validation_per_mille: s.validation_per_mille,
        counts: IngestCounts::default(),
    };
    match manifest {
        Some(m) if Manifest { counts: IngestCounts::default(), ..m.clone() } == fresh => {
            Ok(m.counts)
        }
        _ if resuming => Err(TrainError::Settings(format!(
            "{}: the cache no longer matches the inputs; run without --resume",
            cache.display()
        ))),
        _ => {
            let counts =
                data::ingest(&s.inputs, cache, s.buckets, s.validation_per_mille, s.seed, |c| {
                    sink.ingest(c)
                })?;
            let m = Manifest { counts: counts.clone(), ..fresh };
            write_atomic(&manifest_path(cache), &serde_json::to_vec_pretty(&m).expect("json"))?;
            Ok(counts)
        }
    }
}

/// The description a trained net carries.
fn description(s: &TrainSettings, done: u32, counts: &IngestCounts) -> String {
    format!(
        "kibitz train {}: {}{} superbatches of {} x {} positions from {} training positions \
         ({} games), wdl {}, lr {} -> {}, seed {}, {} thread{}",
        env!("CARGO_PKG_VERSION"),
        if s.output_buckets > 1 {
            format!("{} output buckets, ", s.output_buckets)
        } else {
            String::new()
        },
        done,
        s.batches,
        s.batch_size,
        counts.train,
        counts.games,
        s.wdl,
        s.lr,
        s.lr_final,
        s.seed,
        s.threads,
        if s.threads == 1 { "" } else { "s" }
    )
}

/// One optimiser step from the threads' gradients: their sum (in thread
/// order), averaged over the batch's `entries`, then AdamW and the clip.
/// On this thread: measured, spreading the step over the threads (each its
/// part of the parameters) and reading the next bucket ahead on a thread of
/// its own made two threads slower (1.40 M positions a second against 1.53
/// M), the parts' memory passing between the cores' caches.
fn update(
    model: &mut Model,
    adam: &mut AdamW,
    grads: &mut [Vec<f32>],
    entries: usize,
    lr: f32,
    decay: f32,
) {
    let (first, rest) = grads.split_first_mut().expect("a thread");
    for g in rest.iter() {
        for (a, b) in first.iter_mut().zip(g) {
            *a += b;
        }
    }
    let scale = 1.0 / entries as f32;
    for a in first.iter_mut() {
        *a *= scale;
    }
    adam.step(&mut model.params, first, lr, decay);
    model.clip();
}

/// Each thread's gradient of its contiguous part of `batch`, in `grads`
/// (zeroed first); the batch's summed loss, added in thread order.
fn batch_gradient(model: &Model, batch: &[Entry], wdl: f32, grads: &mut [Vec<f32>]) -> f64 {
    let parts = grads.len();
    let per = batch.len().div_ceil(parts);
    if parts == 1 {
        grads[0].fill(0.0);
        return model.gradient(batch, wdl, &mut grads[0]);
    }
    let losses: Vec<f64> = std::thread::scope(|scope| {
        let handles: Vec<_> = grads
            .iter_mut()
            .enumerate()
            .map(|(k, g)| {
                let part = &batch[(k * per).min(batch.len())..((k + 1) * per).min(batch.len())];
                scope.spawn(move || {
                    g.fill(0.0);
                    model.gradient(part, wdl, g)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a training thread panicked")).collect()
    });
    losses.iter().sum()
}
