//! Frames: every structure of a `.kbz` file is one zstd frame with zstd's
//! content checksum, and a complete file ends with an end marker, a zstd
//! skippable frame holding the file's counts.
//!
//! Writing: the header frame and each block frame are written with one
//! `write_all`, flushed and synced, so after a crash the file is whole up to
//! some frame boundary plus possibly part of one frame. A run that
//! completes ends the file with the end marker, so a file cut short at a
//! block boundary (a kill, a full disk) is never taken for a complete one:
//! readers report a file without it as incomplete.

use std::io;

use crate::{
    hash::fnv1a64,
    record::format::{BlockError, DECODE_LIMIT, config},
};

/// zstd level of every frame (fixed: the same input gives the same bytes).
pub const ZSTD_LEVEL: i32 = 19;

/// Magic of the end marker: a zstd skippable frame (RFC 8878 allows
/// 0x184D2A50 to 0x184D2A5F), which `zstd -t` and zstd readers skip.
pub const TRAILER_MAGIC: u32 = 0x184d_2a5b;
const TRAILER_TAG: [u8; 8] = *b"KBZEND\0\x01";
const TRAILER_PAYLOAD: usize = 8 + 3 * 8 + 8;

/// What the end marker says the file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Trailer {
    /// Block frames.
    pub blocks: u64,
    /// Games.
    pub games: u64,
    /// Labelled positions.
    pub labels: u64,
}

impl Trailer {
    /// The frame: magic, payload size, then the tag, the three counts and an
    /// FNV-1a checksum of the tag and counts, all little-endian.
    pub fn encode(&self) -> Vec<u8> {
        let mut payload = Vec::with_capacity(TRAILER_PAYLOAD);
        payload.extend_from_slice(&TRAILER_TAG);
        for n in [self.blocks, self.games, self.labels] {
            payload.extend_from_slice(&n.to_le_bytes());
        }
        let sum = fnv1a64(&payload);
        payload.extend_from_slice(&sum.to_le_bytes());
        let mut frame = Vec::with_capacity(8 + TRAILER_PAYLOAD);
        frame.extend_from_slice(&TRAILER_MAGIC.to_le_bytes());
        frame.extend_from_slice(&(TRAILER_PAYLOAD as u32).to_le_bytes());
        frame.extend_from_slice(&payload);
        frame
    }

    /// Reads an end marker frame; `None` if the bytes are not one.
    pub fn decode(frame: &[u8]) -> Option<Trailer> {
        let u64_at = |at: usize| -> Option<u64> {
            frame.get(at..at + 8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
        };
        if frame.len() != 8 + TRAILER_PAYLOAD
            || frame[..4] != TRAILER_MAGIC.to_le_bytes()
            || frame[4..8] != (TRAILER_PAYLOAD as u32).to_le_bytes()
            || frame[8..16] != TRAILER_TAG
            || fnv1a64(&frame[8..40]) != u64_at(40)?
        {
            return None;
        }
        Some(Trailer { blocks: u64_at(16)?, games: u64_at(24)?, labels: u64_at(32)? })
    }
}

/// Whether a frame is an end marker (by its magic).
pub fn is_trailer_frame(frame: &[u8]) -> bool {
    frame.len() >= 4 && frame[..4] == TRAILER_MAGIC.to_le_bytes()
}

/// Encodes and compresses a structure into one zstd frame with a checksum.
pub fn encode_frame<T: bincode::Encode>(value: &T) -> io::Result<Vec<u8>> {
    let raw = bincode::encode_to_vec(value, config()).map_err(io::Error::other)?;
    let mut compressor = zstd::bulk::Compressor::new(ZSTD_LEVEL)?;
    compressor.include_checksum(true)?;
    compressor.include_contentsize(true)?;
    compressor.compress(&raw)
}

/// A frame that does not decode.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The frame declares more content than any structure of the format.
    #[error("frame content larger than the format allows")]
    TooLarge,
    /// No zstd frame, or one without its content size.
    #[error("not a zstd frame with a content size")]
    NotZstd,
    /// zstd refused the frame.
    #[error("zstd: {0}")]
    Zstd(std::io::Error),
    /// The content is not the structure expected.
    #[error("decoding: {0}")]
    Decode(bincode::error::DecodeError),
    /// Bytes left after the structure.
    #[error("{0} bytes after the structure")]
    Trailing(usize),
    /// The columns of a block do not add up.
    #[error(transparent)]
    Block(#[from] BlockError),
}

/// Decompresses one frame (checksum verified) and decodes it.
pub fn decode_frame<T: bincode::Decode<()>>(frame: &[u8]) -> Result<T, FrameError> {
    let size = match zstd::zstd_safe::get_frame_content_size(frame) {
        Ok(Some(n)) if n <= DECODE_LIMIT as u64 => n as usize,
        Ok(Some(_)) => return Err(FrameError::TooLarge),
        _ => return Err(FrameError::NotZstd),
    };
    let raw = zstd::bulk::decompress(frame, size).map_err(FrameError::Zstd)?;
    let (value, used) = bincode::decode_from_slice(&raw, config()).map_err(FrameError::Decode)?;
    if used != raw.len() {
        return Err(FrameError::Trailing(raw.len() - used));
    }
    Ok(value)
}
