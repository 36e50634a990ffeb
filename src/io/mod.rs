//! Input: sources (files, stdin, zstd, gzip), chunking at game boundaries,
//! and the PGN and EPD readers.

pub mod epd;
pub mod filter;
pub mod mapguard;
pub mod pgn;
pub mod source;

/// Whether `a` and `b` name the same file: the same device and inode when
/// both exist, otherwise the same absolute path.
pub fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    #[cfg(unix)]
    if let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) {
        use std::os::unix::fs::MetadataExt;
        return ma.dev() == mb.dev() && ma.ino() == mb.ino();
    }
    std::path::absolute(a).ok() == std::path::absolute(b).ok()
}
