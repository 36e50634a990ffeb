//! Reading a Stockfish 15.1 net (SFNNv5), as Stockfish writes it with
//! `export_net`. Every field is little-endian:
//!
//! ```text
//! u32 version (0x7AF32F20)   u32 architecture hash (0x1C102EF2)
//! u32 n   n bytes of description
//! u32 feature transformer hash (0x7F2344B8)
//!     i16 biases[1024]   i16 weights[22528][1024]   i32 psqt[22528][8]
//! 8 layer stacks, each:
//!     u32 network hash (0x63336A4A)
//!     i32 fc0 biases[16]   i8 fc0 weights[16][1024]
//!     i32 fc1 biases[32]   i8 fc1 weights[32][32]   (inputs padded from 30)
//!     i32 fc2 bias[1]      i8 fc2 weights[1][32]
//! and nothing after.
//! ```
//!
//! The hashes are the ones Stockfish computes from the layer types and
//! sizes, so a net of another architecture is refused by its hash even when
//! its version matches (Stockfish 14 to 17 all write 0x7AF32F20).

use std::{fmt, io, path::Path};

use sha2::{Digest, Sha256};

use crate::nnue::{FEATURES, L1, L2, L2_INPUTS, L3, LAYER_STACKS, PSQT_BUCKETS, Row};

/// The version of the SFNNv5 file format.
pub const VERSION: u32 = 0x7AF3_2F20;
/// The version Stockfish 12 and 13 wrote (HalfKP nets).
const VERSION_HALFKP: u32 = 0x7AF3_2F16;

/// The feature transformer's hash: HalfKAv2_hm's, with its output size.
pub const TRANSFORMER_HASH: u32 = 0x7F23_4CB8 ^ (L1 as u32 * 2);

/// An affine layer's part of a layer stack's hash (Stockfish's
/// `AffineTransform::get_hash_value`).
pub(crate) const fn affine(prev: u32, outputs: u32) -> u32 {
    (0xCC03_DAE4u32.wrapping_add(outputs)) ^ (prev >> 1) ^ (prev << 31)
}

/// A clipped ReLU's part of a layer stack's hash.
pub(crate) const fn clipped_relu(prev: u32) -> u32 {
    0x538D_24C7u32.wrapping_add(prev)
}

/// The hash of one layer stack, computed as Stockfish's `Network` does.
pub const NETWORK_HASH: u32 = {
    let h = 0xEC42_E90D ^ (L1 as u32 * 2);
    let h = affine(h, L2 as u32);
    let h = clipped_relu(h);
    let h = affine(h, L3 as u32);
    let h = clipped_relu(h);
    affine(h, 1)
};

/// The whole net's hash, as the header holds it.
pub const ARCHITECTURE_HASH: u32 = TRANSFORMER_HASH ^ NETWORK_HASH;

/// The size of an SFNNv5 file with an `n`-byte description.
pub const fn file_size(description: usize) -> usize {
    12 + description
        + 4
        + 2 * L1
        + 2 * L1 * FEATURES
        + 4 * PSQT_BUCKETS * FEATURES
        + LAYER_STACKS * (4 + 4 * L2 + L2 * L1 + 4 * L3 + L3 * L2_INPUTS + 4 + L2_INPUTS)
}

/// One of the eight layer stacks: 1024 transformed inputs to one output.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct LayerStack {
    /// The first layer's weights, one row of 1024 per output.
    pub fc0_weights: [[i8; L1]; L2],
    /// The second layer's weights, one row of 32 per output (the last two
    /// columns meet padding).
    pub fc1_weights: [[i8; L2_INPUTS]; L3],
    /// The output layer's weights.
    pub fc2_weights: [i8; L2_INPUTS],
    /// The first layer's biases.
    pub fc0_biases: [i32; L2],
    /// The second layer's biases.
    pub fc1_biases: [i32; L3],
    /// The output layer's bias.
    pub fc2_bias: i32,
    /// The first layer's weights again, by 4-byte block of inputs: for
    /// block `j`, every output's 4 weights in turn (what the vector kernels
    /// multiply one block of inputs by, all outputs at once).
    pub fc0_blocks: [[i8; 4 * L2]; L1 / 4],
    /// The second layer's weights by 4-byte block of inputs, likewise.
    pub fc1_blocks: [[i8; 4 * L3]; L2_INPUTS / 4],
}

impl LayerStack {
    /// A stack of zeros.
    fn zero() -> LayerStack {
        LayerStack {
            fc0_weights: [[0; L1]; L2],
            fc1_weights: [[0; L2_INPUTS]; L3],
            fc2_weights: [0; L2_INPUTS],
            fc0_biases: [0; L2],
            fc1_biases: [0; L3],
            fc2_bias: 0,
            fc0_blocks: [[0; 4 * L2]; L1 / 4],
            fc1_blocks: [[0; 4 * L3]; L2_INPUTS / 4],
        }
    }

    /// Fills the block layouts from the row weights.
    fn arrange_blocks(&mut self) {
        for (j, block) in self.fc0_blocks.iter_mut().enumerate() {
            for (o, row) in self.fc0_weights.iter().enumerate() {
                block[4 * o..4 * o + 4].copy_from_slice(&row[4 * j..4 * j + 4]);
            }
        }
        for (j, block) in self.fc1_blocks.iter_mut().enumerate() {
            for (o, row) in self.fc1_weights.iter().enumerate() {
                block[4 * o..4 * o + 4].copy_from_slice(&row[4 * j..4 * j + 4]);
            }
        }
    }
}

/// A net file's bytes, the path as errors name it, and the file's name
/// (what [`NetInfo`] records).
pub(crate) fn read_net_file(path: &Path) -> Result<(Vec<u8>, String, String), NetError> {
    let file = path.display().to_string();
    if path.is_dir() {
        return Err(NetError::Directory { file });
    }
    let bytes =
        std::fs::read(path).map_err(|source| NetError::Io { file: file.clone(), source })?;
    let name = path.file_name().map_or(file.clone(), |n| n.to_string_lossy().into_owned());
    Ok((bytes, file, name))
}

/// Which net made something: the file's name and its SHA-256, so a label
/// can say what computed it.
#[derive(Clone, PartialEq, Eq, Debug, Hash, serde::Serialize)]
pub struct NetInfo {
    /// The file name, without its directory.
    pub name: String,
    /// The SHA-256 of the file's bytes, in lowercase hexadecimal.
    pub sha256: String,
}

/// A Stockfish 15.1 net, read and checked.
pub struct Network {
    /// The feature transformer's biases.
    pub ft_biases: Box<Row>,
    /// The feature transformer's weights: one row per input.
    pub ft_weights: Vec<Row>,
    /// The PSQT weights: 8 buckets per input.
    pub psqt_weights: Vec<[i32; PSQT_BUCKETS]>,
    /// The layer stacks.
    pub stacks: Vec<LayerStack>,
    description: String,
    info: NetInfo,
}

/// Why a net could not be read. Every message names the file.
#[derive(Debug)]
pub enum NetError {
    /// The file could not be opened or read.
    Io {
        /// The file.
        file: String,
        /// The cause.
        source: io::Error,
    },
    /// The path is a directory.
    Directory {
        /// The path.
        file: String,
    },
    /// The file is empty.
    Empty {
        /// The file.
        file: String,
    },
    /// Another file format version.
    Version {
        /// The file.
        file: String,
        /// The version found.
        found: u32,
    },
    /// A part's hash is not SFNNv5's: another architecture.
    Hash {
        /// The file.
        file: String,
        /// The part whose hash differs.
        part: &'static str,
        /// The hash found.
        found: u32,
        /// SFNNv5's.
        expected: u32,
    },
    /// The file ends inside a part.
    Truncated {
        /// The file.
        file: String,
        /// The part it ends in.
        part: &'static str,
        /// The file's size.
        size: usize,
        /// The size an SFNNv5 net with this description has (unknown
        /// before the description's length is read).
        expected: Option<usize>,
    },
    /// Bytes follow the last layer stack.
    /// A kibitz net (`kibitz train`'s format) that is not valid: the
    /// reason says what is wrong.
    Invalid {
        /// The file.
        file: String,
        /// What is wrong.
        reason: String,
    },
    /// Bytes follow where the net ends.
    TrailingBytes {
        /// The file.
        file: String,
        /// The file's size.
        size: usize,
        /// The size an SFNNv5 net with this description has.
        expected: usize,
    },
}

impl fmt::Display for NetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NetError::Io { file, source } => write!(f, "{file}: cannot read the net: {source}"),
            NetError::Directory { file } => write!(f, "{file}: is a directory, not a net"),
            NetError::Empty { file } => write!(f, "{file}: the file is empty, not a net"),
            NetError::Version { file, found } => {
                let what = match *found {
                    VERSION_HALFKP => " (a Stockfish 12 or 13 HalfKP net)",
                    _ => "",
                };
                write!(
                    f,
                    "{file}: net version {found:#010x}{what}; kibitz reads version \
                     {VERSION:#010x} nets of the SFNNv5 architecture (Stockfish 15 and 15.1)"
                )
            }
            NetError::Hash { file, part, found, expected } => write!(
                f,
                "{file}: the {part} hash is {found:#010x}, not SFNNv5's {expected:#010x}: \
                 a net of another architecture (kibitz reads Stockfish 15 and 15.1 nets)"
            ),
            NetError::Truncated { file, part, size, expected: Some(expected) } => write!(
                f,
                "{file}: the net is cut short inside the {part}: {size} bytes, an SFNNv5 net \
                 with this description has {expected}"
            ),
            NetError::Truncated { file, part, size, expected: None } => write!(
                f,
                "{file}: the net is cut short inside the {part}: {size} bytes are too few for \
                 an SFNNv5 net"
            ),
            NetError::Invalid { file, reason } => write!(f, "{file}: {reason}"),
            NetError::TrailingBytes { file, size, expected } => write!(
                f,
                "{file}: {} bytes follow the last layer stack ({size} bytes, an SFNNv5 net with \
                 this description has {expected})",
                size - expected
            ),
        }
    }
}

impl std::error::Error for NetError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            NetError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Reads little-endian fields in order, and says in which part the bytes
/// ran out.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    file: &'a str,
    expected: Option<usize>,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, part: &'static str) -> Result<&'a [u8], NetError> {
        let end =
            self.at.checked_add(n).filter(|&end| end <= self.bytes.len()).ok_or_else(|| {
                NetError::Truncated {
                    file: self.file.to_string(),
                    part,
                    size: self.bytes.len(),
                    expected: self.expected,
                }
            })?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn u32(&mut self, part: &'static str) -> Result<u32, NetError> {
        let b = self.take(4, part)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn hash(&mut self, part: &'static str, expected: u32) -> Result<(), NetError> {
        let found = self.u32(part)?;
        if found != expected {
            return Err(NetError::Hash { file: self.file.to_string(), part, found, expected });
        }
        Ok(())
    }

    fn i16s(&mut self, out: &mut [i16], part: &'static str) -> Result<(), NetError> {
        let b = self.take(2 * out.len(), part)?;
        for (o, c) in out.iter_mut().zip(b.chunks_exact(2)) {
            *o = i16::from_le_bytes([c[0], c[1]]);
        }
        Ok(())
    }

    fn i32s(&mut self, out: &mut [i32], part: &'static str) -> Result<(), NetError> {
        let b = self.take(4 * out.len(), part)?;
        for (o, c) in out.iter_mut().zip(b.chunks_exact(4)) {
            *o = i32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
        Ok(())
    }

    fn i8s(&mut self, out: &mut [i8], part: &'static str) -> Result<(), NetError> {
        let b = self.take(out.len(), part)?;
        for (o, &c) in out.iter_mut().zip(b) {
            *o = c as i8;
        }
        Ok(())
    }
}

impl Network {
    /// Reads and checks the net in `path`.
    ///
    /// # Errors
    ///
    /// A [`NetError`] naming the file: it cannot be read, is a directory or
    /// empty, has another version or architecture, is cut short, or has
    /// bytes after its end.
    pub fn load(path: &Path) -> Result<Network, NetError> {
        let (bytes, file, name) = read_net_file(path)?;
        Network::from_bytes(&bytes, &file, name)
    }

    /// Reads and checks a net held in memory; `file` names it in errors,
    /// `name` in [`NetInfo`].
    ///
    /// # Errors
    ///
    /// As [`Network::load`].
    pub fn from_bytes(bytes: &[u8], file: &str, name: String) -> Result<Network, NetError> {
        if bytes.is_empty() {
            return Err(NetError::Empty { file: file.to_string() });
        }
        let mut r = Reader { bytes, at: 0, file, expected: None };
        let version = r.u32("header")?;
        if version != VERSION {
            return Err(NetError::Version { file: file.to_string(), found: version });
        }
        let found = r.u32("header")?;
        if found != ARCHITECTURE_HASH {
            let (file, part, expected) = (file.to_string(), "architecture", ARCHITECTURE_HASH);
            return Err(NetError::Hash { file, part, found, expected });
        }
        let length = r.u32("header")? as usize;
        let expected = file_size(length);
        r.expected = Some(expected);
        let description = String::from_utf8_lossy(r.take(length, "description")?).into_owned();
        // The size is known now: a file cut short fails here, before 47 MB
        // of weights are allocated and read.
        if bytes.len() < expected {
            let part = part_at(bytes.len(), length);
            let (file, size, expected) = (file.to_string(), bytes.len(), Some(expected));
            return Err(NetError::Truncated { file, part, size, expected });
        }
        if bytes.len() > expected {
            let (file, size) = (file.to_string(), bytes.len());
            return Err(NetError::TrailingBytes { file, size, expected });
        }

        r.hash("feature transformer", TRANSFORMER_HASH)?;
        let mut ft_biases = Box::new(Row::ZERO);
        r.i16s(&mut ft_biases.0, "feature transformer")?;
        let mut ft_weights = vec![Row::ZERO; FEATURES];
        for row in &mut ft_weights {
            r.i16s(&mut row.0, "feature transformer")?;
        }
        let mut psqt_weights = vec![[0i32; PSQT_BUCKETS]; FEATURES];
        for row in &mut psqt_weights {
            r.i32s(row, "feature transformer")?;
        }
        let mut stacks = Vec::with_capacity(LAYER_STACKS);
        for _ in 0..LAYER_STACKS {
            r.hash("layer stack", NETWORK_HASH)?;
            let mut s = LayerStack::zero();
            r.i32s(&mut s.fc0_biases, "layer stack")?;
            for row in &mut s.fc0_weights {
                r.i8s(row, "layer stack")?;
            }
            r.i32s(&mut s.fc1_biases, "layer stack")?;
            for row in &mut s.fc1_weights {
                r.i8s(row, "layer stack")?;
            }
            let mut bias = [0i32; 1];
            r.i32s(&mut bias, "layer stack")?;
            s.fc2_bias = bias[0];
            r.i8s(&mut s.fc2_weights, "layer stack")?;
            s.arrange_blocks();
            stacks.push(s);
        }
        debug_assert_eq!(r.at, bytes.len());
        let sha256 = Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect();
        Ok(Network {
            ft_biases,
            ft_weights,
            psqt_weights,
            stacks,
            description,
            info: NetInfo { name, sha256 },
        })
    }

    /// The description the net carries.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The file's name and SHA-256.
    pub fn info(&self) -> &NetInfo {
        &self.info
    }

    /// The net's bytes as Stockfish writes them, with `description`: what
    /// [`Network::from_bytes`] reads back (tests write nets of their own
    /// with it).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(file_size(self.description.len()));
        let u32s = |out: &mut Vec<u8>, v: &[u32]| {
            for x in v {
                out.extend_from_slice(&x.to_le_bytes());
            }
        };
        u32s(&mut out, &[VERSION, ARCHITECTURE_HASH, self.description.len() as u32]);
        out.extend_from_slice(self.description.as_bytes());
        u32s(&mut out, &[TRANSFORMER_HASH]);
        let i16s = |out: &mut Vec<u8>, v: &[i16]| {
            for x in v {
                out.extend_from_slice(&x.to_le_bytes());
            }
        };
        let i32s = |out: &mut Vec<u8>, v: &[i32]| {
            for x in v {
                out.extend_from_slice(&x.to_le_bytes());
            }
        };
        i16s(&mut out, &self.ft_biases.0);
        for row in &self.ft_weights {
            i16s(&mut out, &row.0);
        }
        for row in &self.psqt_weights {
            i32s(&mut out, row);
        }
        let i8s = |out: &mut Vec<u8>, v: &[i8]| out.extend(v.iter().map(|&x| x as u8));
        for s in &self.stacks {
            u32s(&mut out, &[NETWORK_HASH]);
            i32s(&mut out, &s.fc0_biases);
            for row in &s.fc0_weights {
                i8s(&mut out, row);
            }
            i32s(&mut out, &s.fc1_biases);
            for row in &s.fc1_weights {
                i8s(&mut out, row);
            }
            i32s(&mut out, &[s.fc2_bias]);
            i8s(&mut out, &s.fc2_weights);
        }
        out
    }

    /// A net of small seeded pseudo-random weights, in the layout of
    /// Stockfish 15.1's: for tests that need a net and have none (the
    /// default test suite needs nothing beside the repository). Its values
    /// mean nothing; its arithmetic is the real one.
    pub fn synthetic(seed: u64) -> Network {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = move || {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as i32
        };
        let mut small = move |range: i32| next().rem_euclid(2 * range + 1) - range;
        let mut ft_biases = Box::new(Row::ZERO);
        ft_biases.0.iter_mut().for_each(|b| *b = small(40) as i16);
        let mut ft_weights = vec![Row::ZERO; FEATURES];
        for row in &mut ft_weights {
            row.0.iter_mut().for_each(|w| *w = small(12) as i16);
        }
        let mut psqt_weights = vec![[0i32; PSQT_BUCKETS]; FEATURES];
        for row in &mut psqt_weights {
            row.iter_mut().for_each(|w| *w = small(3000));
        }
        let stacks = (0..LAYER_STACKS)
            .map(|_| {
                let mut s = LayerStack::zero();
                s.fc2_bias = small(2000);
                s.fc0_weights.iter_mut().flatten().for_each(|w| *w = small(127) as i8);
                s.fc1_weights.iter_mut().flatten().for_each(|w| *w = small(127) as i8);
                s.fc2_weights.iter_mut().for_each(|w| *w = small(127) as i8);
                s.fc0_biases.iter_mut().for_each(|b| *b = small(4000));
                s.fc1_biases.iter_mut().for_each(|b| *b = small(4000));
                s.arrange_blocks();
                s
            })
            .collect();
        let description = format!("kibitz synthetic test net, seed {seed}");
        let mut net = Network {
            ft_biases,
            ft_weights,
            psqt_weights,
            stacks,
            description,
            info: NetInfo { name: String::new(), sha256: String::new() },
        };
        let bytes = net.to_bytes();
        net.info = NetInfo {
            name: format!("synthetic-{seed}.nnue"),
            sha256: Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect(),
        };
        net
    }
}

/// The part of an SFNNv5 file with an `n`-byte description that byte
/// `offset` falls in.
fn part_at(offset: usize, description: usize) -> &'static str {
    let transformer =
        12 + description + 4 + 2 * L1 + 2 * L1 * FEATURES + 4 * PSQT_BUCKETS * FEATURES;
    if offset < 12 + description {
        "description"
    } else if offset < transformer {
        "feature transformer"
    } else {
        "layer stacks"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hashes_are_stockfish_15_1s() {
        // As nn-ad9b42354671.nnue (Stockfish 15.1's default net) holds them.
        assert_eq!(TRANSFORMER_HASH, 0x7F23_44B8);
        assert_eq!(ARCHITECTURE_HASH, 0x1C10_2EF2);
        assert_eq!(file_size(75), 47_001_499);
    }

    #[test]
    fn a_net_reads_back_and_every_fault_is_named() {
        let net = Network::synthetic(7);
        let bytes = net.to_bytes();
        assert_eq!(bytes.len(), file_size(net.description().len()));
        let back = Network::from_bytes(&bytes, "t.nnue", "t.nnue".into()).unwrap();
        assert_eq!(back.to_bytes(), bytes);
        assert_eq!(back.info().sha256, net.info().sha256);
        assert_eq!(back.description(), net.description());

        let err = |b: &[u8]| Network::from_bytes(b, "bad.nnue", "bad.nnue".into()).err().unwrap();
        let msg = |b: &[u8]| err(b).to_string();
        assert!(matches!(err(&[]), NetError::Empty { .. }));
        // Cut at every part, and in the middle of each.
        for cut in [1, 4, 11, 20, 100, 3_000_000, bytes.len() - 100_000, bytes.len() - 1] {
            let m = msg(&bytes[..cut]);
            assert!(m.starts_with("bad.nnue: ") && m.contains("cut short"), "{cut}: {m}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(msg(&longer).contains("1 bytes follow the last layer stack"));
        let mut v = bytes.clone();
        v[0] = 0x16;
        assert!(msg(&v).contains("0x7af32f16 (a Stockfish 12 or 13 HalfKP net)"), "{}", msg(&v));
        v[0..4].copy_from_slice(&0x1234_5678u32.to_le_bytes());
        assert!(msg(&v).contains("net version 0x12345678; kibitz reads version 0x7af32f20"));
        for (at, part) in
            [(4, "architecture"), (12 + net.description().len(), "feature transformer")]
        {
            let mut h = bytes.clone();
            h[at] ^= 1;
            assert!(msg(&h).contains(&format!("the {part} hash")), "{}", msg(&h));
        }
        let stack = file_size(net.description().len()) - 8 * 17_640 + 3 * 17_640;
        let mut h = bytes.clone();
        h[stack] ^= 0x80;
        assert!(msg(&h).contains("the layer stack hash is"), "{}", msg(&h));
    }

    #[test]
    fn a_directory_and_a_missing_file() {
        let dir = std::env::temp_dir();
        assert!(matches!(Network::load(&dir), Err(NetError::Directory { .. })));
        let missing = dir.join("kibitz-no-such-net.nnue");
        let e = Network::load(&missing).err().unwrap().to_string();
        assert!(e.contains("kibitz-no-such-net.nnue: cannot read the net"), "{e}");
    }
}
