//! Reading Stockfish 19's nets. Every field is little-endian; "LEB128" is
//! a block of signed LEB128 integers (the 17 bytes `COMPRESSED_LEB128`, a
//! `u32` byte count, then the integers). The big net:
//!
//! ```text
//! u32 version (0x6A448AFA)   u32 net hash   u32 n   n bytes of description
//! u32 feature transformer hash
//!     LEB128 i16 biases[1024]
//!     i8 threat weights[59808][1024]        LEB128 i32 threat psqt[59808][8]
//!     i8 pawn pair weights[4560][1024]      LEB128 i32 pawn pair psqt[4560][8]
//!     LEB128 i16 HalfKAv2_hm weights[22528][1024]
//!     LEB128 i32 HalfKAv2_hm psqt[22528][8]
//! 8 layer stacks, each:
//!     u32 layer stack hash
//!     i32 fc0 biases[32]   i8 fc0 weights[32][1024]
//!     i32 fc1 biases[32]   i8 fc1 weights[32][64]
//!     i32 fc2 bias[1]      i8 fc2 weights[1][128]
//! and nothing after.
//! ```
//!
//! Stockfish.js 19's "lite" net (`nn-61e7af4bb97d.nnue`, 1.1 MB) has the
//! same version, header and layer stacks; its feature transformer reads
//! P_hm inputs only (see [`Inputs::PHm`]):
//!
//! ```text
//! u32 feature transformer hash (0x6F2344B8)
//!     LEB128 i16 biases[1024]
//!     LEB128 i16 P_hm weights[768][1024]    LEB128 i32 P_hm psqt[768][8]
//! ```
//!
//! The hashes are those Stockfish computes from its input sets and layer
//! types (an input set's hash, the transformer's output size, each layer's
//! kind and size), so the header's net hash tells the two apart and a net
//! of any other architecture with the same version is refused by it.

use sha2::{Digest, Sha256};

use crate::nnue::{
    L1, NetError, NetInfo, PSQT_BUCKETS, Row,
    net::{affine, clipped_relu},
    threat::features::{PAIRS, THREAT_INPUTS, THREATS},
};

/// The version of Stockfish 19's file format.
pub const VERSION: u32 = 0x6A44_8AFA;

/// HalfKAv2_hm inputs.
pub const PSQ_FEATURES: usize = 22_528;
/// P_hm inputs: 12 planes (the side's own pawn to king, then the other
/// side's) of 64 squares.
pub const PHM_FEATURES: usize = 768;
/// The first hidden layer's outputs.
pub const L2: usize = 32;
/// The second hidden layer's outputs.
pub const L3: usize = 32;
/// Layer stacks, one per 4 pieces on the board.
pub const LAYER_STACKS: usize = 8;

/// The feature transformer's hash: the three input sets' hashes, rotated
/// in and combined, with the output size (Stockfish's
/// `FeatureTransformer::get_hash_value`).
pub const TRANSFORMER_HASH: u32 = {
    const SETS: [u32; 3] = [0x2E6B_9D04, 0x86F2_B1DD, 0x7F23_4CB8];
    let mut h = 0u32;
    let mut i = 0;
    while i < SETS.len() {
        h = h.rotate_left(1) ^ SETS[i];
        i += 1;
    }
    h ^ (L1 as u32 * 2)
};

/// One layer stack's hash (Stockfish's `NetworkArchitecture::get_hash_value`:
/// the squared activations are left out of it, as Stockfish leaves them).
pub const STACK_HASH: u32 = {
    let h = 0xEC42_E90D ^ (L1 as u32 * 2);
    let h = affine(h, L2 as u32);
    let h = clipped_relu(h);
    let h = affine(h, L3 as u32);
    let h = clipped_relu(h);
    affine(h, 1)
};

/// The whole net's hash, as the header holds it.
pub const NET_HASH: u32 = TRANSFORMER_HASH ^ STACK_HASH;

/// P_hm's hash (one input set: nothing to combine it with).
pub const PHM_HASH: u32 = 0x6F23_4CB8;

/// The lite net's feature transformer hash.
pub const LITE_TRANSFORMER_HASH: u32 = PHM_HASH ^ (L1 as u32 * 2);

/// The lite net's hash, as its header holds it.
pub const LITE_NET_HASH: u32 = LITE_TRANSFORMER_HASH ^ STACK_HASH;

/// The inputs a Stockfish 19 net's feature transformer reads.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Inputs {
    /// The big net's: threats, pawn pairs and HalfKAv2_hm (a piece-square
    /// input per king square, mirrored so that the side's king stands on
    /// files e-h). A move of the side's king refreshes its accumulator.
    Threats,
    /// The lite net's P_hm: a piece-square input per piece kind and square
    /// with no king square in it, mirrored as HalfKAv2_hm is; each king has
    /// a plane of its own. Only a king crossing between the d and e files
    /// changes the mirror and refreshes.
    PHm,
}

/// One threat or pawn pair input's weights: 1024 `i8`, added to the
/// accumulator's `i16` values.
#[derive(Clone, PartialEq, Eq, Debug)]
#[repr(C, align(64))]
pub struct ThreatRow(pub [i8; L1]);

/// One layer stack: 1024 transformed inputs to one output.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Stack {
    /// The first layer's weights by 4-byte block of inputs: for block `j`,
    /// every output's 4 weights in turn (Stockfish's sparse layout).
    pub fc0_blocks: [[i8; 4 * L2]; L1 / 4],
    /// The first layer's biases.
    pub fc0_biases: [i32; L2],
    /// The second layer's weights, one row of 64 per output.
    pub fc1_weights: [[i8; 2 * L2]; L3],
    /// The second layer's biases.
    pub fc1_biases: [i32; L3],
    /// The output layer's weights: the first layer's two activations, then
    /// the second's.
    pub fc2_weights: [i8; 2 * L2 + 2 * L3],
    /// The output layer's bias.
    pub fc2_bias: i32,
}

/// A Stockfish 19 net, the big one or the lite one, read and checked.
pub struct ThreatNet {
    /// The inputs it reads.
    pub inputs: Inputs,
    /// The feature transformer's biases.
    pub biases: Box<Row>,
    /// Piece-square weights (HalfKAv2_hm's or P_hm's): one row per input.
    pub psq_weights: Vec<Row>,
    /// Piece-square PSQT weights.
    pub psq_psqt: Vec<[i32; PSQT_BUCKETS]>,
    /// Threat then pawn pair weights: one row per input (none in the lite
    /// net).
    pub threat_weights: Vec<ThreatRow>,
    /// Threat then pawn pair PSQT weights.
    pub threat_psqt: Vec<[i32; PSQT_BUCKETS]>,
    /// The layer stacks.
    pub stacks: Vec<Stack>,
    description: String,
    info: NetInfo,
}

/// Reads the net's fields in order, naming the part it is in when the
/// bytes run out or do not parse.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    file: &'a str,
}

const LEB128_MAGIC: &[u8] = b"COMPRESSED_LEB128";

impl<'a> Reader<'a> {
    fn fail(&self, reason: String) -> NetError {
        NetError::Invalid { file: self.file.to_string(), reason }
    }

    fn take(&mut self, n: usize, part: &str) -> Result<&'a [u8], NetError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len()).ok_or_else(|| {
            self.fail(format!(
                "Stockfish 19 net cut short inside the {part}: {} bytes, {} more needed at byte {}",
                self.bytes.len(),
                self.at + n - self.bytes.len(),
                self.at
            ))
        })?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn u32(&mut self, part: &str) -> Result<u32, NetError> {
        let b = self.take(4, part)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn hash(&mut self, part: &str, expected: u32) -> Result<(), NetError> {
        let found = self.u32(part)?;
        if found != expected {
            return Err(self.fail(format!(
                "the {part} hash is {found:#010x}, not the {expected:#010x} its architecture has"
            )));
        }
        Ok(())
    }

    fn i8s(&mut self, out: &mut [i8], part: &str) -> Result<(), NetError> {
        let b = self.take(out.len(), part)?;
        for (o, &c) in out.iter_mut().zip(b) {
            *o = c as i8;
        }
        Ok(())
    }

    fn i32s(&mut self, out: &mut [i32], part: &str) -> Result<(), NetError> {
        let b = self.take(4 * out.len(), part)?;
        for (o, c) in out.iter_mut().zip(b.chunks_exact(4)) {
            *o = i32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
        Ok(())
    }

    /// One LEB128 block of exactly `count` integers, each handed to `put`
    /// with its position; every value must fit `bits` bits.
    fn leb128(
        &mut self,
        count: usize,
        bits: u32,
        part: &str,
        mut put: impl FnMut(usize, i32),
    ) -> Result<(), NetError> {
        let magic = self.take(LEB128_MAGIC.len(), part)?;
        if magic != LEB128_MAGIC {
            return Err(self.fail(format!(
                "the {part} at byte {} is not a LEB128 block (no COMPRESSED_LEB128 mark)",
                self.at - LEB128_MAGIC.len()
            )));
        }
        let size = self.u32(part)? as usize;
        let start = self.at;
        let block = self.take(size, part)?;
        let (lo, hi) = (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1);
        let mut at = 0;
        for i in 0..count {
            let (mut value, mut shift) = (0i64, 0u32);
            loop {
                let Some(&byte) = block.get(at) else {
                    return Err(self.fail(format!(
                        "the {part}'s LEB128 block (byte {start}, {size} bytes) ends after {i} of \
                         its {count} values"
                    )));
                };
                at += 1;
                if shift < 63 {
                    value |= i64::from(byte & 0x7f) << shift;
                }
                shift += 7;
                if byte & 0x80 == 0 {
                    if shift < 64 && byte & 0x40 != 0 {
                        value |= -1i64 << shift;
                    }
                    break;
                }
                if shift > 35 {
                    return Err(self.fail(format!(
                        "the {part}'s LEB128 block (byte {start}) holds a value longer than 5 \
                         bytes at its value {i}"
                    )));
                }
            }
            if value < lo || value > hi {
                return Err(self.fail(format!(
                    "the {part}'s value {i} is {value}, outside {bits}-bit integers"
                )));
            }
            put(i, value as i32);
        }
        if at != size {
            return Err(self.fail(format!(
                "the {part}'s LEB128 block (byte {start}) holds {} bytes after its {count} values",
                size - at
            )));
        }
        Ok(())
    }
}

impl Reader<'_> {
    /// A piece-square block: `n` rows of weights, then their PSQT weights.
    fn psq_block(
        &mut self,
        n: usize,
        name: &str,
    ) -> Result<(Vec<Row>, Vec<[i32; PSQT_BUCKETS]>), NetError> {
        let mut weights = vec![Row::ZERO; n];
        self.leb128(n * L1, 16, &format!("{name} weights"), |i, v| {
            weights[i / L1].0[i % L1] = v as i16;
        })?;
        let mut psqt = vec![[0i32; PSQT_BUCKETS]; n];
        self.leb128(n * PSQT_BUCKETS, 32, &format!("{name} PSQT weights"), |i, v| {
            psqt[i / PSQT_BUCKETS][i % PSQT_BUCKETS] = v;
        })?;
        Ok((weights, psqt))
    }

    /// Layer stack `k`.
    fn stack(&mut self, k: usize) -> Result<Stack, NetError> {
        let part = format!("layer stack {k}");
        self.hash(&part, STACK_HASH)?;
        let mut s = Box::new(Stack {
            fc0_blocks: [[0; 4 * L2]; L1 / 4],
            fc0_biases: [0; L2],
            fc1_weights: [[0; 2 * L2]; L3],
            fc1_biases: [0; L3],
            fc2_weights: [0; 2 * L2 + 2 * L3],
            fc2_bias: 0,
        });
        self.i32s(&mut s.fc0_biases, &part)?;
        let mut row = [0i8; L1];
        for o in 0..L2 {
            self.i8s(&mut row, &part)?;
            for (j, block) in s.fc0_blocks.iter_mut().enumerate() {
                block[4 * o..4 * o + 4].copy_from_slice(&row[4 * j..4 * j + 4]);
            }
        }
        self.i32s(&mut s.fc1_biases, &part)?;
        for row in &mut s.fc1_weights {
            self.i8s(row, &part)?;
        }
        let mut bias = [0i32; 1];
        self.i32s(&mut bias, &part)?;
        s.fc2_bias = bias[0];
        self.i8s(&mut s.fc2_weights, &part)?;
        Ok(*s)
    }
}

impl ThreatNet {
    /// Whether `bytes` start as a Stockfish 19 net does (its version).
    pub fn is_threat_net(bytes: &[u8]) -> bool {
        bytes.len() >= 4 && u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) == VERSION
    }

    /// Reads and checks a net held in memory; `file` names it in errors,
    /// `name` in [`NetInfo`].
    ///
    /// # Errors
    ///
    /// A [`NetError`] naming the file and the part that is wrong: another
    /// version or architecture, a block cut short or malformed, a value out
    /// of range, bytes after the end.
    pub fn from_bytes(bytes: &[u8], file: &str, name: String) -> Result<ThreatNet, NetError> {
        if bytes.is_empty() {
            return Err(NetError::Empty { file: file.to_string() });
        }
        let mut r = Reader { bytes, at: 0, file };
        let version = r.u32("header")?;
        if version != VERSION {
            return Err(NetError::Version { file: file.to_string(), found: version });
        }
        let net_hash = r.u32("header")?;
        let inputs = match net_hash {
            NET_HASH => Inputs::Threats,
            LITE_NET_HASH => Inputs::PHm,
            _ => {
                return Err(r.fail(format!(
                    "the net hash is {net_hash:#010x}: a net with Stockfish 19's version number \
                     but neither its big net's architecture ({NET_HASH:#010x}: threats, pawn \
                     pairs and HalfKAv2_hm) nor its lite net's ({LITE_NET_HASH:#010x}: P_hm)"
                )));
            }
        };
        let length = r.u32("header")? as usize;
        let description = String::from_utf8_lossy(r.take(length, "description")?).into_owned();

        let transformer_hash = match inputs {
            Inputs::Threats => TRANSFORMER_HASH,
            Inputs::PHm => LITE_TRANSFORMER_HASH,
        };
        r.hash("feature transformer", transformer_hash)?;
        let mut biases = Box::new(Row::ZERO);
        r.leb128(L1, 16, "feature transformer's biases", |i, v| biases.0[i] = v as i16)?;
        let (psq_weights, psq_psqt, threat_weights, threat_psqt) = match inputs {
            Inputs::Threats => {
                let mut threat_weights = vec![ThreatRow([0; L1]); THREAT_INPUTS];
                for row in &mut threat_weights[..THREATS] {
                    r.i8s(&mut row.0, "threat weights")?;
                }
                let mut threat_psqt = vec![[0i32; PSQT_BUCKETS]; THREAT_INPUTS];
                r.leb128(THREATS * PSQT_BUCKETS, 32, "threat PSQT weights", |i, v| {
                    threat_psqt[i / PSQT_BUCKETS][i % PSQT_BUCKETS] = v;
                })?;
                for row in &mut threat_weights[THREATS..] {
                    r.i8s(&mut row.0, "pawn pair weights")?;
                }
                r.leb128(PAIRS * PSQT_BUCKETS, 32, "pawn pair PSQT weights", |i, v| {
                    threat_psqt[THREATS + i / PSQT_BUCKETS][i % PSQT_BUCKETS] = v;
                })?;
                let (w, p) = r.psq_block(PSQ_FEATURES, "HalfKAv2_hm")?;
                (w, p, threat_weights, threat_psqt)
            }
            Inputs::PHm => {
                let (w, p) = r.psq_block(PHM_FEATURES, "P_hm")?;
                (w, p, Vec::new(), Vec::new())
            }
        };

        let mut stacks = Vec::with_capacity(LAYER_STACKS);
        for k in 0..LAYER_STACKS {
            stacks.push(r.stack(k)?);
        }
        if r.at != bytes.len() {
            return Err(r.fail(format!(
                "{} bytes follow the last layer stack (the net ends at byte {})",
                bytes.len() - r.at,
                r.at
            )));
        }
        let sha256 = Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect();
        Ok(ThreatNet {
            inputs,
            biases,
            psq_weights,
            psq_psqt,
            threat_weights,
            threat_psqt,
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

    /// A net of small random weights, for tests that need the architecture
    /// but not Stockfish's 98 MB file: the same arithmetic, other values.
    pub fn synthetic(seed: u64) -> ThreatNet {
        ThreatNet::synthetic_with(Inputs::Threats, seed)
    }

    /// A net of small random weights reading `inputs`.
    pub fn synthetic_with(inputs: Inputs, seed: u64) -> ThreatNet {
        let (psq_features, threat_inputs, psq_range) = match inputs {
            Inputs::Threats => (PSQ_FEATURES, THREAT_INPUTS, 12),
            Inputs::PHm => (PHM_FEATURES, 0, 24),
        };
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut small = |range: i64| ((next() % (2 * range as u64 + 1)) as i64 - range) as i32;
        let mut biases = Box::new(Row::ZERO);
        for b in &mut biases.0 {
            *b = small(60) as i16 + 40;
        }
        let psq_weights = (0..psq_features)
            .map(|_| {
                let mut r = Row::ZERO;
                for w in &mut r.0 {
                    *w = small(psq_range) as i16;
                }
                r
            })
            .collect();
        let threat_weights = (0..threat_inputs)
            .map(|_| {
                let mut r = ThreatRow([0; L1]);
                for w in &mut r.0 {
                    *w = small(9) as i8;
                }
                r
            })
            .collect();
        let psqt = |n: usize, small: &mut dyn FnMut(i64) -> i32| {
            (0..n).map(|_| std::array::from_fn(|_| small(3000))).collect::<Vec<_>>()
        };
        let psq_psqt = psqt(psq_features, &mut small);
        let threat_psqt = psqt(threat_inputs, &mut small);
        let stacks = (0..LAYER_STACKS)
            .map(|_| Stack {
                fc0_blocks: std::array::from_fn(|_| std::array::from_fn(|_| small(20) as i8)),
                fc0_biases: std::array::from_fn(|_| small(2000)),
                fc1_weights: std::array::from_fn(|_| std::array::from_fn(|_| small(40) as i8)),
                fc1_biases: std::array::from_fn(|_| small(2000)),
                fc2_weights: std::array::from_fn(|_| small(60) as i8),
                fc2_bias: small(2000),
            })
            .collect();
        ThreatNet {
            inputs,
            biases,
            psq_weights,
            psq_psqt,
            threat_weights,
            threat_psqt,
            stacks,
            description: format!("synthetic {inputs:?} net {seed}"),
            info: NetInfo { name: format!("synthetic-{seed}"), sha256: String::new() },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hashes_are_stockfish_19s() {
        // The values nn-1a298aa575a0.nnue holds in its header and before
        // its first block and each layer stack.
        assert_eq!(TRANSFORMER_HASH, 0xCB68_5313);
        assert_eq!(STACK_HASH, 0x6333_7116);
        assert_eq!(NET_HASH, 0xA85B_2205);
        // nn-61e7af4bb97d.nnue, Stockfish.js 19's lite net.
        assert_eq!(LITE_TRANSFORMER_HASH, 0x6F23_44B8);
        assert_eq!(LITE_NET_HASH, 0x0C10_35AE);
    }

    #[test]
    fn a_leb128_block_reads_and_its_faults_are_named() {
        let mut bytes = LEB128_MAGIC.to_vec();
        // 3 values: -1 (0x7f), 64 (0xc0 0x00), -129 (0xff 0x7e).
        let data = [0x7f, 0xc0, 0x00, 0xff, 0x7e];
        bytes.extend_from_slice(&(data.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&data);
        let mut out = vec![];
        let mut r = Reader { bytes: &bytes, at: 0, file: "t.nnue" };
        r.leb128(3, 16, "block", |_, v| out.push(v)).unwrap();
        assert_eq!(out, [-1, 64, -129]);
        let mut r = Reader { bytes: &bytes, at: 0, file: "t.nnue" };
        let e = r.leb128(4, 16, "block", |_, _| {}).unwrap_err().to_string();
        assert!(e.contains("t.nnue") && e.contains("ends after 3 of its 4"), "{e}");
        let mut r = Reader { bytes: &bytes, at: 0, file: "t.nnue" };
        let e = r.leb128(2, 16, "block", |_, _| {}).unwrap_err().to_string();
        assert!(e.contains("2 bytes after"), "{e}");
        let mut r = Reader { bytes: &bytes, at: 0, file: "t.nnue" };
        let e = r.leb128(3, 8, "block", |_, _| {}).unwrap_err().to_string();
        assert!(e.contains("outside 8-bit"), "{e}");
        let mut r = Reader { bytes: &bytes[..10], at: 0, file: "t.nnue" };
        let e = r.leb128(3, 16, "block", |_, _| {}).unwrap_err().to_string();
        assert!(e.contains("cut short"), "{e}");
    }
}
