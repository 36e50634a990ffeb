//! What an input is: its compression from the magic number, its text
//! format from its first line, and archives or binary data refused.

/// The text format of an input.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Portable Game Notation: games with tags and movetext.
    Pgn,
    /// Extended Position Description: one position per line.
    Epd,
}

/// How an input is compressed, from its first bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    /// Not compressed.
    Plain,
    /// zstd (one or more frames, skippable frames allowed).
    Zstd,
    /// gzip (one or more members).
    Gzip,
    /// A Parquet file (Lichess's games dataset): columns, compressed page
    /// by page. Found by the magic number at both ends, so only a file
    /// (not a stream) is one.
    Parquet,
}

/// The magic number a Parquet file starts and ends with.
pub const PARQUET_MAGIC: &[u8; 4] = b"PAR1";

/// Whether `bytes` (a whole file) is a Parquet file: [`PARQUET_MAGIC`] at
/// its start and at its end.
pub fn is_parquet(bytes: &[u8]) -> bool {
    bytes.len() >= 12 && bytes.starts_with(PARQUET_MAGIC) && bytes.ends_with(PARQUET_MAGIC)
}

/// Whether the file at `path` is a Parquet file, from its first and last
/// four bytes (the file is not read whole).
pub fn is_parquet_file(path: &std::path::Path) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(path) else { return false };
    let (mut head, mut tail) = ([0u8; 4], [0u8; 4]);
    f.read_exact(&mut head).is_ok()
        && f.seek(SeekFrom::End(-4)).is_ok()
        && f.read_exact(&mut tail).is_ok()
        && &head == PARQUET_MAGIC
        && &tail == PARQUET_MAGIC
}

impl Compression {
    /// Detects the compression from the first bytes of a stream.
    pub fn detect(head: &[u8]) -> Compression {
        match head {
            [0x28, 0xb5, 0x2f, 0xfd, ..] => Compression::Zstd,
            // Skippable frames: magic 0x184D2A50 to 0x184D2A5F.
            [b0, 0x2a, 0x4d, 0x18, ..] if b0 & 0xf0 == 0x50 => Compression::Zstd,
            [0x1f, 0x8b, ..] => Compression::Gzip,
            _ => Compression::Plain,
        }
    }
}

/// Lines of text [`sniff_format`] weighs.
const SNIFF_LINES: usize = 64;

/// Guesses the text format from the first bytes of the decompressed text:
/// of its first [`SNIFF_LINES`] lines (blank lines and `#` comments left
/// out), those shaped like a FEN board vote EPD, tag pairs and movetext
/// that opens with a move number vote PGN, and the rest (a line of
/// garbage) do not vote. EPD wins a majority; a tie or no vote at all is
/// PGN. One bad line, first or not, does not change the kind of a file.
pub fn sniff_format(text: &[u8]) -> Format {
    let text = text.strip_prefix(b"\xef\xbb\xbf").unwrap_or(text);
    let (mut epd, mut pgn) = (0usize, 0usize);
    let lines = text
        .split(|&b| b == b'\n')
        .map(|l| l.trim_ascii())
        .filter(|l| !l.is_empty() && !l.starts_with(b"#"))
        .take(SNIFF_LINES);
    for line in lines {
        if looks_like_fen(line) {
            epd += 1;
        } else if line.starts_with(b"[") || starts_with_move_number(line) {
            pgn += 1;
        }
    }
    if epd > pgn { Format::Epd } else { Format::Pgn }
}

/// Whether a line opens with a FEN board: eight ranks of pieces and digits.
fn looks_like_fen(line: &[u8]) -> bool {
    let board = line.split(|b| b.is_ascii_whitespace()).next().unwrap_or(b"");
    board.iter().filter(|&&b| b == b'/').count() == 7
        && board.iter().all(|&b| b == b'/' || b.is_ascii_digit() || b"pnbrqkPNBRQK".contains(&b))
}

/// Whether a line opens with a move number (`1.`, `12...`).
fn starts_with_move_number(line: &[u8]) -> bool {
    let digits = line.iter().take_while(|b| b.is_ascii_digit()).count();
    digits > 0 && line.get(digits) == Some(&b'.')
}

/// Why the start of an input is not PGN or EPD text, if it is not: an
/// archive kibitz does not decompress (bzip2, xz, zip, 7z, lz4: named, so
/// the user knows to decompress it first), or binary data, refused at once
/// instead of being scanned for games that are not there (`/dev/zero`
/// would otherwise be read for ever, and a `.pgn.bz2` read as a few empty
/// games). In the first 64 KiB: more than 10% NUL bytes (zeros, UTF-16
/// text; some EPD files end every line with a NUL, about 1.5% of their
/// bytes, and are text), or more than 1% other control bytes (random or
/// compressed data has about 11%; text has next to none).
pub fn binary_at(text: &[u8]) -> Option<String> {
    const ARCHIVES: [(&[u8], &str, &str); 6] = [
        (b"BZh", "bzip2", "bzip2 -dc"),
        (b"\xfd7zXZ\x00", "xz", "xz -dc"),
        (b"PK\x03\x04", "zip", "unzip -p"),
        (b"7z\xbc\xaf\x27\x1c", "7z", "7z x -so"),
        (b"\x04\x22\x4d\x18", "lz4", "lz4 -dc"),
        (b"\x5d\x00\x00", "lzma", "xz -dc"),
    ];
    // bzip2: "BZh", the block size 1-9, then a block's or the end's magic.
    let bzip2_body = |t: &[u8]| {
        matches!(t.get(3), Some(b'1'..=b'9'))
            && t.get(4..10)
                .is_some_and(|m| m == b"1AY&SY" || m == [0x17, 0x72, 0x45, 0x38, 0x50, 0x90])
    };
    for (magic, name, tool) in ARCHIVES {
        if text.starts_with(magic) && (name != "bzip2" || bzip2_body(text)) {
            return Some(format!(
                "{name}-compressed data: kibitz reads zstd and gzip; decompress it first \
                 (for example `{tool} FILE | kibitz ... -`): input skipped"
            ));
        }
    }
    let head = &text[..text.len().min(1 << 16)];
    let nuls = memchr::memchr_iter(0, head).count();
    // At least 16 of them as well as the share: a stray byte in a short
    // file or a short first read from a pipe is left to the parser.
    if nuls >= 16 && nuls * 10 > head.len() {
        return Some(format!(
            "binary data, not PGN or EPD text ({nuls} NUL bytes in the first {}): input skipped",
            head.len()
        ));
    }
    // Control bytes other than NUL, tab, line feed, form feed and carriage
    // return (and DOS's end-of-file mark).
    let controls = head
        .iter()
        .filter(|&&b| (b < 0x20 && !b"\0\t\n\x0c\r\x1a".contains(&b)) || b == 0x7f)
        .count();
    (controls >= 16 && controls * 100 > head.len()).then(|| {
        format!(
            "binary data, not PGN or EPD text ({controls} control bytes in the first {}): input skipped",
            head.len()
        )
    })
}

/// The name of a compression in messages.
pub(super) fn compression_name(c: Compression) -> &'static str {
    match c {
        Compression::Plain => "plain",
        Compression::Zstd => "zstd",
        Compression::Gzip => "gzip",
        Compression::Parquet => "parquet",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_compression_by_magic() {
        assert_eq!(Compression::detect(&[0x28, 0xb5, 0x2f, 0xfd, 0]), Compression::Zstd);
        assert_eq!(Compression::detect(&[0x50, 0x2a, 0x4d, 0x18]), Compression::Zstd);
        assert_eq!(Compression::detect(&[0x1f, 0x8b, 8]), Compression::Gzip);
        assert_eq!(Compression::detect(b"[Event"), Compression::Plain);
        assert_eq!(Compression::detect(b""), Compression::Plain);
    }

    #[test]
    fn sniffs_format() {
        assert_eq!(sniff_format(b"[Event \"x\"]\n1. e4 *\n"), Format::Pgn);
        assert_eq!(sniff_format(b"\n8/8/8/8/8/8/8/K6k w - - bm Kb2;\n"), Format::Epd);
        assert_eq!(sniff_format(b"1. e4 e5 *"), Format::Pgn);
        // One bad line, first or later, does not make a book of positions
        // PGN, nor a PGN file EPD.
        let fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\n";
        assert_eq!(sniff_format(format!("garbage\n{}", fen.repeat(3)).as_bytes()), Format::Epd);
        assert_eq!(sniff_format(format!("{fen}garbage\n{fen}").as_bytes()), Format::Epd);
        assert_eq!(
            sniff_format(format!("{fen}[Event \"x\"]\n\n1. e4 e5 *\n").as_bytes()),
            Format::Pgn
        );
        assert_eq!(sniff_format(b"garbage\nmore garbage\n"), Format::Pgn);
        assert_eq!(sniff_format(b""), Format::Pgn);
    }
}
