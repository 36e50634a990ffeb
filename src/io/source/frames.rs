//! zstd frames: walking a file's frame and block headers (RFC 8878) to
//! find where each frame ends, and decoding one frame.

use std::{
    io::{self, Read},
    ops::Range,
};

use memmap2::Mmap;

/// The end of the zstd frame (data or skippable) starting at `pos`, read
/// from the frame and block headers (RFC 8878), or `None` if the bytes there
/// are not a complete frame.
pub fn zstd_frame_end(data: &[u8], pos: usize) -> Option<usize> {
    zstd_frame_end_with(data, pos, &mut |_| {})
}

/// [`zstd_frame_end`], calling `progress` with the position now and then
/// while walking a long frame's blocks.
fn zstd_frame_end_with(data: &[u8], pos: usize, progress: &mut dyn FnMut(usize)) -> Option<usize> {
    let le32 = |at: usize| -> Option<u32> {
        data.get(at..at + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let magic = le32(pos)?;
    if magic & 0xffff_fff0 == 0x184d_2a50 {
        let size = le32(pos + 4)? as usize;
        let end = pos.checked_add(8)?.checked_add(size)?;
        return (end <= data.len()).then_some(end);
    }
    if magic != 0xfd2f_b528 {
        return None;
    }
    let descriptor = *data.get(pos + 4)?;
    let fcs_flag = descriptor >> 6;
    let single_segment = descriptor & 0x20 != 0;
    let checksum = descriptor & 0x04 != 0;
    let dict_bytes = [0, 1, 2, 4][usize::from(descriptor & 3)];
    let fcs_bytes = match fcs_flag {
        0 => usize::from(single_segment),
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let mut at = pos + 5 + usize::from(!single_segment) + dict_bytes + fcs_bytes;
    loop {
        let h = data.get(at..at + 3)?;
        let header = u32::from(h[0]) | u32::from(h[1]) << 8 | u32::from(h[2]) << 16;
        let last = header & 1 != 0;
        let block_type = (header >> 1) & 3;
        let size = (header >> 3) as usize;
        at += 3 + match block_type {
            0 | 2 => size,
            1 => 1,
            _ => return None,
        };
        if at > data.len() {
            return None;
        }
        if last {
            break;
        }
        progress(at);
    }
    if checksum {
        at += 4;
    }
    (at <= data.len()).then_some(at)
}

/// The frames of a mapped zstd file, in order, and how many hold data (are
/// not skippable). A stretch that is not a complete frame ends the list as
/// one range (the decoder reports it). Walking the block headers touches
/// the file's pages (and the kernel maps the pages around each touch);
/// they are released as the walk goes, so a large file does not become
/// resident, even for a moment.
pub fn zstd_frames(map: &Mmap) -> (Vec<Range<usize>>, usize) {
    let mut frames = Vec::new();
    let mut data_frames = 0;
    let mut pos = 0;
    let mut released = 0;
    let mut release = |at: usize| {
        if at - released > super::RELEASE_STEP {
            super::release_behind(map, &mut released, at);
        }
    };
    while pos < map.len() {
        match zstd_frame_end_with(map, pos, &mut release) {
            Some(end) => {
                data_frames += usize::from(!is_skippable(&map[pos..end]));
                frames.push(pos..end);
                pos = end;
            }
            None => {
                frames.push(pos..map.len());
                break;
            }
        }
        release(pos);
    }
    let mut from = 0;
    super::release_behind(map, &mut from, map.len());
    (frames, data_frames)
}

/// Frames larger than this (compressed) are streamed rather than decoded
/// whole in parallel, to keep memory bounded.
pub(super) const MAX_PARALLEL_FRAME: usize = 32 << 20;

/// Whether the bytes start with a skippable frame's magic number.
pub(super) fn is_skippable(frame: &[u8]) -> bool {
    matches!(frame, [b0, 0x2a, 0x4d, 0x18, ..] if b0 & 0xf0 == 0x50)
}

/// Decodes one zstd frame (a skippable frame gives no bytes).
pub(super) fn decode_frame(frame: &[u8]) -> io::Result<Vec<u8>> {
    if is_skippable(frame) {
        return Ok(Vec::new());
    }
    let capacity = match zstd::zstd_safe::get_frame_content_size(frame) {
        Ok(Some(n)) if n <= 1 << 30 => n as usize,
        _ => frame.len() * 4,
    };
    let mut out = Vec::with_capacity(capacity);
    let mut decoder = zstd::stream::read::Decoder::with_buffer(frame)?.single_frame();
    decoder.read_to_end(&mut out)?;
    Ok(out)
}
