//! Input: sources (files, stdin, zstd, gzip), chunking at game boundaries,
//! and the PGN and EPD readers.

pub mod csv;
pub mod epd;
pub mod filter;
pub mod mapguard;
#[cfg(feature = "parquet")]
pub mod parquet;
pub mod pgn;
pub mod place;
pub mod source;
pub mod table;

use std::{
    io,
    path::{Path, PathBuf},
};

/// The inputs with each folder replaced by the Parquet files beneath it, at
/// any depth, in the order of their paths: Lichess's partitioned layout
/// (`year=2025/month=05/train-00000-of-00042.parquet`) is read month by
/// month, file by file. A folder that holds none stays as given (its
/// reader says it is a folder with no Parquet file); so do other inputs.
pub fn expand_folders(inputs: &[PathBuf]) -> io::Result<Vec<PathBuf>> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
        let mut entries: Vec<PathBuf> =
            std::fs::read_dir(dir)?.map(|e| e.map(|e| e.path())).collect::<io::Result<_>>()?;
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out)?;
            } else if p.extension().is_some_and(|e| e == "parquet") {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut out = Vec::with_capacity(inputs.len());
    for input in inputs {
        if input.as_os_str() != "-" && input.is_dir() {
            let before = out.len();
            walk(input, &mut out).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("{}: cannot read the folder: {e}", input.display()),
                )
            })?;
            if out.len() == before {
                // Kept: the reader reports it as an input it cannot read,
                // and the run goes on with the others.
                out.push(input.clone());
            }
        } else {
            out.push(input.clone());
        }
    }
    Ok(out)
}

/// Whether a Parquet file holds Lichess's evaluations (`fen` and `line`
/// columns) rather than its games. Without Parquet support every Parquet
/// file is taken for one, to be refused with the reason where it is read.
pub fn parquet_evals(path: &Path) -> bool {
    #[cfg(feature = "parquet")]
    return parquet::is_evals(path);
    #[cfg(not(feature = "parquet"))]
    {
        let _ = path;
        true
    }
}

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

/// The folder an output file would go into, when that folder does not
/// exist (`None`: it exists, or the path has no folder part). kibitz makes
/// no missing folder for a file: a typo in a path is an error that names
/// the folder, not a stray tree of new ones.
pub fn missing_folder(path: &Path) -> Option<PathBuf> {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty())?;
    (!parent.is_dir()).then(|| parent.to_path_buf())
}

/// The error for an output whose folder does not exist: names the folder.
pub fn no_folder_error(folder: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("the folder {} does not exist (kibitz makes no missing folders)", folder.display()),
    )
}

/// Checks that an output file's folder exists (see [`missing_folder`]).
pub fn check_output_folder(path: &Path) -> io::Result<()> {
    missing_folder(path).map_or(Ok(()), |f| Err(no_folder_error(&f)))
}

/// Makes the folder `dir` if it is missing: a folder the user names for
/// outputs, or one that belongs to an output (a trainer's cache beside its
/// net). Its parent must exist; nothing above it is made.
pub fn make_output_folder(dir: &Path) -> io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    check_output_folder(dir)?;
    match std::fs::create_dir(dir) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        r => r,
    }
}
