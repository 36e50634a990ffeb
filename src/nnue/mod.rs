//! NNUE evaluation with Stockfish 15.1's nets (the SFNNv5 architecture of
//! Stockfish 15 and 15.1), computed with Stockfish's integer arithmetic, so
//! that an evaluation here is the value Stockfish computes for the same
//! position.
//!
//! The parts, as the data flows:
//!
//! * [`Network`]: the file. A header (version, architecture hash,
//!   description), the feature transformer (HalfKAv2_hm features to 1024
//!   `i16` values per side, with 8 buckets of `i32` PSQT values), and 8
//!   layer stacks (1024 -> 16 -> 32 -> 1, the stack chosen by the number of
//!   pieces). Every part's hash is checked; every fault is a [`NetError`]
//!   that names the file.
//! * [`feature_index`]: which inputs a piece on a square activates, seen from
//!   each side's king (HalfKAv2_hm: 32 king buckets, the board mirrored so
//!   the king stands on files e to h).
//! * [`Accumulator`]: the first layer's output for both sides, kept for
//!   every ply of the position's [`StateInfo`](crate::StateInfo) stack and
//!   brought up to date lazily from the nearest computed ancestor with the
//!   pieces each move changed ([`DirtyPiece`](crate::DirtyPiece)); a
//!   side is refreshed when its king moves, through a cache of the last
//!   accumulator seen for each king square (Stockfish's "Finny tables").
//!   The board knows nothing of this: the accumulators sit beside it.
//! * [`simd`]: the arithmetic, in AVX2 where the build has it and in
//!   portable code everywhere; both give the same integers.
//! * [`NnueEval`]: the network's output for a position, the evaluation
//!   Stockfish's `eval` command prints, and its per-bucket trace.
//!
//! ```no_run
//! use std::{path::Path, sync::Arc};
//! use kibitz::{nnue::{Network, NnueEval}, Position};
//!
//! let net = Arc::new(Network::load(Path::new("nn-ad9b42354671.nnue"))?);
//! let mut eval = NnueEval::new(net);
//! let pos = Position::startpos();
//! // Stockfish 15.1 prints `NNUE evaluation        +0.14 (white side)`.
//! println!("{}", eval.stockfish_line(&pos));
//! # Ok::<(), kibitz::nnue::NetError>(())
//! ```

mod accumulator;
mod features;
mod inference;
mod net;
pub mod simd;
pub mod small;
pub mod threat;

use std::{path::Path, sync::Arc};

pub use accumulator::{Accumulator, AccumulatorStack, RefreshCache, UpdateStats};
pub use features::index as feature_index;
pub use inference::{NnueEval, Outputs, bucket, outputs, stockfish_non_pawn_material};
pub use net::{LayerStack, NetError, NetInfo, Network};
pub use small::{SmallEval, SmallNet};
pub use threat::{ThreatEval, ThreatNet};

/// A net the search evaluates with: a Stockfish 15.1 net or one of
/// kibitz's own ([`small`]); the file's first bytes say which.
#[derive(Clone)]
pub enum Net {
    /// A Stockfish 15.1 net (SFNNv5).
    Stockfish(Arc<Network>),
    /// A Stockfish 19 net: the big one (threat, pawn pair and HalfKAv2_hm
    /// inputs) or Stockfish.js 19's lite one (P_hm inputs).
    Stockfish19(Arc<ThreatNet>),
    /// A kibitz net (`kibitz train`'s).
    Kibitz(Arc<SmallNet>),
}

/// The net kibitz ships, built into the binary: Stockfish.js 19's lite net
/// (P_hm inputs, 1.1 MB, GPL-3.0; data/README.md has its origin), chosen
/// over kibitz's own net by the labels it gives per CPU second and by
/// matches (BENCHMARKS.md). Read and checked at first use.
const BUILTIN_BYTES: &[u8] = include_bytes!("../../data/nn-61e7af4bb97d.nnue");

/// The name the built-in net goes by in headers and messages: its file's,
/// `nn-` and the first 12 hex digits of its SHA-256, as Stockfish names nets.
pub const BUILTIN_NAME: &str = "nn-61e7af4bb97d.nnue";

impl Net {
    /// The net built into the binary (the default evaluation), read once.
    pub fn builtin() -> Net {
        static NET: std::sync::OnceLock<Arc<ThreatNet>> = std::sync::OnceLock::new();
        Net::Stockfish19(
            NET.get_or_init(|| {
                Arc::new(
                    ThreatNet::from_bytes(BUILTIN_BYTES, BUILTIN_NAME, BUILTIN_NAME.into())
                        .expect("the built-in net is checked by the tests"),
                )
            })
            .clone(),
        )
    }

    /// Reads and checks the net in `path`, of either kind.
    ///
    /// # Errors
    ///
    /// A [`NetError`] naming the file.
    pub fn load(path: &Path) -> Result<Net, NetError> {
        let (bytes, file, name) = net::read_net_file(path)?;
        Net::from_bytes(&bytes, &file, name)
    }

    /// A net held in memory; `file` names it in errors, `name` in
    /// [`NetInfo`].
    ///
    /// # Errors
    ///
    /// As [`Net::load`].
    pub fn from_bytes(bytes: &[u8], file: &str, name: String) -> Result<Net, NetError> {
        if SmallNet::is_kibitz_net(bytes) {
            Ok(Net::Kibitz(Arc::new(SmallNet::from_bytes(bytes, file, name)?)))
        } else if ThreatNet::is_threat_net(bytes) {
            Ok(Net::Stockfish19(Arc::new(ThreatNet::from_bytes(bytes, file, name)?)))
        } else {
            Ok(Net::Stockfish(Arc::new(Network::from_bytes(bytes, file, name)?)))
        }
    }

    /// The file's name and SHA-256.
    pub fn info(&self) -> &NetInfo {
        match self {
            Net::Stockfish(n) => n.info(),
            Net::Stockfish19(n) => n.info(),
            Net::Kibitz(n) => n.info(),
        }
    }

    /// The description the net carries.
    pub fn description(&self) -> &str {
        match self {
            Net::Stockfish(n) => n.description(),
            Net::Stockfish19(n) => n.description(),
            Net::Kibitz(n) => n.description(),
        }
    }

    /// What kind of net it is, in words.
    pub fn kind(&self) -> String {
        match self {
            Net::Stockfish(_) => "Stockfish 15.1 net (SFNNv5)".into(),
            Net::Stockfish19(n) => match n.inputs {
                threat::Inputs::Threats => {
                    "Stockfish 19 net (threats, pawn pairs and HalfKAv2_hm to 1024x2, 32, 32, 1)"
                        .into()
                }
                threat::Inputs::PHm => "Stockfish 19 lite net (P_hm to 1024x2, 32, 32, 1)".into(),
            },
            Net::Kibitz(n) => format!("kibitz net {}", n.architecture()),
        }
    }
}

/// The feature transformer's outputs per side (Stockfish's
/// `TransformedFeatureDimensions`).
pub const L1: usize = 1024;
/// The first hidden layer's outputs: 15, and one more passed straight to
/// the output.
pub const L2: usize = 16;
/// The second hidden layer's outputs.
pub const L3: usize = 32;
/// The inputs of the second hidden layer: the first layer's 15 outputs,
/// squared and clipped, then clipped, padded to 32.
pub const L2_INPUTS: usize = 32;
/// HalfKAv2_hm features: 32 king buckets of 11 planes of 64 squares.
pub const FEATURES: usize = 22_528;
/// PSQT buckets (one per layer stack).
pub const PSQT_BUCKETS: usize = 8;
/// Layer stacks, chosen by `(pieces - 1) / 4`.
pub const LAYER_STACKS: usize = 8;
/// The network's output is this many times the evaluation.
pub const OUTPUT_SCALE: i32 = 16;
/// Hidden layers' weights are this many bits of fixed point.
pub const WEIGHT_SCALE_BITS: u32 = 6;
/// Stockfish 15.1's internal evaluation units per UCI centipawn times 100:
/// an evaluation `v` is `100 * v / 361` centipawns (`UCI::NormalizeToPawnValue`).
pub const NORMALIZE_TO_PAWN: i32 = 361;

/// An internal evaluation in UCI centipawns, as Stockfish 15.1 reports it
/// (truncated towards zero).
pub const fn to_centipawns(v: i32) -> i32 {
    v * 100 / NORMALIZE_TO_PAWN
}

/// A row of the feature transformer: one feature's weights, the biases, or
/// one side's accumulator. Aligned for 256-bit loads and to cache lines.
#[derive(Clone, PartialEq, Eq, Debug)]
#[repr(C, align(64))]
pub struct Row(pub [i16; L1]);

impl Row {
    /// All zeros.
    pub const ZERO: Row = Row([0; L1]);
}
