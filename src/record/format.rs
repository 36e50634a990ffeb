//! The `.kbz` record format. `docs/FORMAT.md` gives every byte; in short:
//!
//! * the file is a sequence of zstd frames, each with zstd's content
//!   checksum: frame 0 holds the [`Header`], every later frame one
//!   [`Block`];
//! * every structure is encoded with bincode 2.0.1, fixed-width
//!   little-endian integers ([`config`]), so the layout is exact;
//! * a block holds whole games as chains: the start position packed in 32
//!   bytes ([`PackedBoard`]), the roster tags, the result, every played move
//!   as its index among the legal moves sorted by their 16-bit encoding, and
//!   a label (score, best move, depth) for each selected ply.
//!
//! Blocks close at deterministic points (a number of games or labels), so a
//! run that is resumed writes the same bytes as one that was not.

use bincode::{
    Decode, Encode,
    error::{DecodeError, EncodeError},
};

use crate::{
    chess::{
        bitboard::Bitboard,
        fen::FenOptions,
        mv::{Move, MoveList},
        position::{CastlingMode, Position},
        types::{Color, Piece, Role, Square},
    },
    io::filter::{GameFilter, Speed},
    score::{MATE_BOUND, WIN_BOUND},
};

/// The first eight bytes of the header's content.
pub const MAGIC: [u8; 8] = *b"KIBITZ\x00\x01";

/// The format version; a change to any encoded structure changes it.
/// Version 2 records the net of the built-in search in [`Options`];
/// version 3 adds principal variations to the labels (two block columns)
/// and their length limit to the options; version 4 ratings, multi-PV
/// alternatives, game filters and the relabelling source; version 5 how
/// each game ended ([`Ending`], a block column) and the settings of a
/// self-play run ([`SelfPlayOptions`]); version 6 a byte of flags per
/// label ([`Label::flags`]: an engine that did not keep to its limit).
/// Files of every earlier version still read.
pub const FORMAT_VERSION: u32 = 7;

/// The longest principal variation a label keeps, in plies (as Lichess
/// stores with its analysis).
pub const MAX_PV: usize = 12;

/// Largest structure a reader accepts (guards allocation on corrupt data).
pub const DECODE_LIMIT: usize = 256 << 20;

/// The bincode configuration of every structure: fixed-width integers,
/// little-endian, with a size limit for decoding.
pub fn config() -> impl bincode::config::Config {
    bincode::config::standard()
        .with_fixed_int_encoding()
        .with_little_endian()
        .with_limit::<DECODE_LIMIT>()
}

/// By default a block closes when it holds this many games...
pub const BLOCK_GAMES: u32 = 1024;
/// ... or this many labels, whichever comes first.
pub const BLOCK_LABELS: u32 = 32_768;

/// Where labels come from.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Encode, Decode, serde::Serialize)]
pub enum LabelSource {
    /// kibitz's own fixed-depth search.
    Search,
    /// The `[%eval]` comments of the PGN.
    PgnEval,
    /// An external UCI engine.
    Engine,
    /// The evaluations the positions came with: a table's evaluation
    /// column, an EPD line's `ce` or `dm`.
    Table,
}

impl LabelSource {
    /// Whether labels come from a search (kibitz's or an engine's) rather
    /// than from the input.
    pub fn searches(self) -> bool {
        matches!(self, LabelSource::Search | LabelSource::Engine)
    }
}

/// The options that shape the output, recorded so a file says how it was
/// made, and so `--resume` and `merge` can refuse mismatched files. Written
/// field by field, in this order ([`Options::encode`]); docs/FORMAT.md
/// gives the bytes.
#[derive(Clone, PartialEq, Eq, Debug, serde::Serialize)]
pub struct Options {
    /// Label source.
    pub label: LabelSource,
    /// Search depth (0 when not searching by depth).
    pub depth: u32,
    /// Node limit per position (0 for none).
    pub nodes: u64,
    /// Transposition table size in MiB.
    pub hash_mib: u32,
    /// Plies skipped at the start of each game.
    pub skip_plies: u32,
    /// Positions in check skipped.
    pub skip_check: bool,
    /// Positions whose best move (or, without a search, the played move) is
    /// a capture skipped.
    pub skip_captures: bool,
    /// Fraction of positions kept, in millionths (1,000,000 = all).
    pub sample_ppm: u32,
    /// Seed of the sampling.
    pub seed: u64,
    /// Duplicate positions (by key) dropped.
    pub dedup: bool,
    /// Games read at most (0 = all).
    pub max_games: u64,
    /// Labels written at most (0 = all).
    pub max_positions: u64,
    /// Bytes of text read at most from each input (0 = all): `--max-bytes`.
    pub max_bytes: u64,
    /// `(k, n)`: only games whose index modulo n is k; `(0, 1)` for all.
    pub shard: (u64, u64),
    /// An external engine's `id name`, options and limits (empty for the
    /// built-in search).
    pub engine: String,
    /// A block closes at this many games...
    pub block_games: u32,
    /// ... or this many labels.
    pub block_labels: u32,
    /// The net the built-in search evaluated with: its file name (empty for
    /// the hand-written evaluation)...
    pub net: String,
    /// ... and the SHA-256 of its bytes.
    pub net_sha256: String,
    /// Plies of each label's principal variation kept (0: none; at most
    /// [`MAX_PV`]).
    pub pv_plies: u32,
    /// The game filters: games failing them were neither replayed nor
    /// searched (version 4).
    pub filter: GameFilter,
    /// Moves searched per position (`--multipv`; 1: the best only;
    /// version 4).
    pub multipv: u32,
    /// For a relabelled file, where its positions and old labels came
    /// from: each input and its labeller (empty otherwise; version 4).
    pub relabelled_from: String,
    /// For games kibitz played itself, how (version 5).
    pub selfplay: Option<SelfPlayOptions>,
}

/// How a self-play run made its games: openings, players and the rules
/// that end a game before the board does. The players' search (depth or
/// nodes, net or engine) is in [`Options`] as for any labelled file.
#[derive(Clone, PartialEq, Eq, Debug, Default, serde::Serialize)]
pub struct SelfPlayOptions {
    /// The opening book's name (empty: none)...
    pub book: String,
    /// ... the SHA-256 of its bytes ...
    pub book_sha256: String,
    /// ... and its positions.
    pub book_positions: u64,
    /// Starts: 0 the book's (or the standard position), 1 Chess960 (both
    /// sides the same), 2 double Fischer random (each side drawn apart).
    pub variant: u8,
    /// Random plies played after the opening.
    pub random_plies: u32,
    /// A random ply is drawn among this many best moves of a search (0:
    /// among all legal moves)...
    pub random_multipv: u32,
    /// ... no more than this many centipawns below the best.
    pub random_multipv_diff: u32,
    /// An opening whose first search scores beyond this (centipawns) is
    /// drawn again.
    pub opening_score: u32,
    /// A side resigns when the score stays beyond this ...
    pub resign_score: u32,
    /// ... for this many plies (0: never).
    pub resign_plies: u32,
    /// A game is drawn when the score stays within this ...
    pub draw_score: u32,
    /// ... for this many plies (0: never) ...
    pub draw_plies: u32,
    /// ... from this ply on.
    pub draw_from_ply: u32,
    /// A game ends drawn at this many plies (0: no limit).
    pub max_plies: u32,
    /// Games of the run (before the shard).
    pub games: u64,
    /// Labels of the run at most (0: no limit).
    pub positions: u64,
}

impl Default for Options {
    /// Nothing selected away, no limit, one shard, the default block sizes;
    /// labels from kibitz's search with no depth or node count recorded.
    fn default() -> Options {
        Options {
            label: LabelSource::Search,
            depth: 0,
            nodes: 0,
            hash_mib: 0,
            skip_plies: 0,
            skip_check: false,
            skip_captures: false,
            sample_ppm: 1_000_000,
            seed: 0,
            dedup: false,
            max_games: 0,
            max_positions: 0,
            max_bytes: 0,
            shard: (0, 1),
            engine: String::new(),
            block_games: BLOCK_GAMES,
            block_labels: BLOCK_LABELS,
            net: String::new(),
            net_sha256: String::new(),
            pv_plies: 0,
            filter: GameFilter::default(),
            multipv: 1,
            relabelled_from: String::new(),
            selfplay: None,
        }
    }
}

impl Options {
    /// Every position of every game labelled: no opening skipped, no
    /// position left out for a check, a capture, the sampling or a
    /// duplicate. Analysis totals (accuracy, centipawn loss) mean what
    /// they say only then.
    pub fn labels_every_position(&self) -> bool {
        self.skip_plies == 0
            && !self.skip_check
            && !self.skip_captures
            && self.sample_ppm >= 1_000_000
            && !self.dedup
            && self.max_positions == 0
    }
}

impl Encode for Options {
    fn encode<E: bincode::enc::Encoder>(&self, e: &mut E) -> Result<(), EncodeError> {
        self.label.encode(e)?;
        self.depth.encode(e)?;
        self.nodes.encode(e)?;
        self.hash_mib.encode(e)?;
        self.skip_plies.encode(e)?;
        self.skip_check.encode(e)?;
        self.skip_captures.encode(e)?;
        self.sample_ppm.encode(e)?;
        self.seed.encode(e)?;
        self.dedup.encode(e)?;
        self.max_games.encode(e)?;
        self.max_positions.encode(e)?;
        self.max_bytes.encode(e)?;
        self.shard.encode(e)?;
        self.engine.encode(e)?;
        self.block_games.encode(e)?;
        self.block_labels.encode(e)?;
        self.net.encode(e)?;
        self.net_sha256.encode(e)?;
        self.pv_plies.encode(e)?;
        encode_filter(&self.filter, e)?;
        self.multipv.encode(e)?;
        self.relabelled_from.encode(e)?;
        match &self.selfplay {
            None => 0u8.encode(e)?,
            Some(p) => {
                1u8.encode(e)?;
                encode_selfplay(p, e)?;
            }
        }
        // Version 7: the title filters, after everything older versions
        // hold.
        self.filter.titles.encode(e)?;
        self.filter.exclude_titles.encode(e)
    }
}

/// The self-play options' bytes (version 5): the book's name, SHA-256 and
/// size, then every number in the order of [`SelfPlayOptions`]'s fields.
fn encode_selfplay<E: bincode::enc::Encoder>(
    p: &SelfPlayOptions,
    e: &mut E,
) -> Result<(), EncodeError> {
    p.book.encode(e)?;
    p.book_sha256.encode(e)?;
    p.book_positions.encode(e)?;
    p.variant.encode(e)?;
    for n in [
        p.random_plies,
        p.random_multipv,
        p.random_multipv_diff,
        p.opening_score,
        p.resign_score,
        p.resign_plies,
        p.draw_score,
        p.draw_plies,
        p.draw_from_ply,
        p.max_plies,
    ] {
        n.encode(e)?;
    }
    p.games.encode(e)?;
    p.positions.encode(e)
}

/// See [`encode_selfplay`].
fn decode_selfplay<Context, D: bincode::de::Decoder<Context = Context>>(
    d: &mut D,
) -> Result<SelfPlayOptions, DecodeError> {
    let (book, book_sha256, book_positions) =
        (String::decode(d)?, String::decode(d)?, u64::decode(d)?);
    let variant = u8::decode(d)?;
    let mut n = [0u32; 10];
    for v in &mut n {
        *v = u32::decode(d)?;
    }
    Ok(SelfPlayOptions {
        book,
        book_sha256,
        book_positions,
        variant,
        random_plies: n[0],
        random_multipv: n[1],
        random_multipv_diff: n[2],
        opening_score: n[3],
        resign_score: n[4],
        resign_plies: n[5],
        draw_score: n[6],
        draw_plies: n[7],
        draw_from_ply: n[8],
        max_plies: n[9],
        games: u64::decode(d)?,
        positions: u64::decode(d)?,
    })
}

impl Options {
    /// The options as format version 4 wrote them (before self-play), from
    /// the version 3 options on.
    fn decode_v4<Context, D: bincode::de::Decoder<Context = Context>>(
        d: &mut D,
    ) -> Result<Options, DecodeError> {
        let v3 = OptionsV3::decode(d)?;
        let filter = decode_filter(d)?;
        let multipv = u32::decode(d)?;
        let relabelled_from = String::decode(d)?;
        Ok(Options { filter, multipv, relabelled_from, ..v3.into() })
    }
}

impl Options {
    /// The options as versions 5 and 6 wrote them, before the title
    /// filters.
    fn decode_v6<Context, D: bincode::de::Decoder<Context = Context>>(
        d: &mut D,
    ) -> Result<Options, DecodeError> {
        let mut options = Options::decode_v4(d)?;
        options.selfplay = match u8::decode(d)? {
            0 => None,
            1 => Some(decode_selfplay(d)?),
            _ => return Err(DecodeError::Other("self-play options: a tag other than 0 or 1")),
        };
        Ok(options)
    }
}

impl<Context> Decode<Context> for Options {
    fn decode<D: bincode::de::Decoder<Context = Context>>(
        d: &mut D,
    ) -> Result<Options, DecodeError> {
        let mut options = Options::decode_v6(d)?;
        options.filter.titles = Vec::<String>::decode(d)?;
        options.filter.exclude_titles = Vec::<String>::decode(d)?;
        Ok(options)
    }
}

bincode::impl_borrow_decode!(Options);

/// The game filters' bytes (version 4): the four rating bounds (an option
/// tag byte, then a `u16`), the speeds (a `u64` count, then each class as a
/// `u32`: 0 ultrabullet to 5 correspondence), the two dates and the
/// terminations and results (strings: a `u64` length, then UTF-8).
fn encode_filter<E: bincode::enc::Encoder>(f: &GameFilter, e: &mut E) -> Result<(), EncodeError> {
    f.min_elo.encode(e)?;
    f.max_elo.encode(e)?;
    f.min_avg_elo.encode(e)?;
    f.max_avg_elo.encode(e)?;
    (f.speeds.len() as u64).encode(e)?;
    for s in &f.speeds {
        (Speed::ALL.iter().position(|x| x == s).unwrap_or(0) as u32).encode(e)?;
    }
    f.date_from.encode(e)?;
    f.date_to.encode(e)?;
    f.terminations.encode(e)?;
    f.results.encode(e)
}

/// See [`encode_filter`].
fn decode_filter<Context, D: bincode::de::Decoder<Context = Context>>(
    d: &mut D,
) -> Result<GameFilter, DecodeError> {
    let (min_elo, max_elo) = (Option::<u16>::decode(d)?, Option::<u16>::decode(d)?);
    let (min_avg_elo, max_avg_elo) = (Option::<u16>::decode(d)?, Option::<u16>::decode(d)?);
    let count = u64::decode(d)?;
    let mut speeds = Vec::new();
    for _ in 0..count.min(Speed::ALL.len() as u64 + 1) {
        let code = u32::decode(d)?;
        speeds.push(*Speed::ALL.get(code as usize).ok_or(DecodeError::UnexpectedVariant {
            type_name: "Speed",
            allowed: &bincode::error::AllowedEnumVariants::Range { min: 0, max: 5 },
            found: code,
        })?);
    }
    if count > Speed::ALL.len() as u64 {
        return Err(DecodeError::Other("more speed classes than there are"));
    }
    Ok(GameFilter {
        min_elo,
        max_elo,
        min_avg_elo,
        max_avg_elo,
        speeds,
        date_from: Option::<String>::decode(d)?,
        date_to: Option::<String>::decode(d)?,
        terminations: Vec::<String>::decode(d)?,
        results: Vec::<String>::decode(d)?,
        titles: Vec::new(),
        exclude_titles: Vec::new(),
    })
}

/// [`Options`] as format version 3 wrote them, before game filters.
#[derive(Decode)]
struct OptionsV3 {
    v2: OptionsV2,
    pv_plies: u32,
}

impl From<OptionsV3> for Options {
    fn from(o: OptionsV3) -> Options {
        Options { pv_plies: o.pv_plies, ..o.v2.into() }
    }
}

/// [`Options`] as format version 2 wrote them, before variations.
#[derive(Decode)]
struct OptionsV2 {
    v1: OptionsV1,
    net: String,
    net_sha256: String,
}

impl From<OptionsV2> for Options {
    fn from(o: OptionsV2) -> Options {
        Options { net: o.net, net_sha256: o.net_sha256, ..o.v1.into() }
    }
}

/// [`Options`] as format version 1 wrote them, before the net was recorded.
#[derive(Decode)]
struct OptionsV1 {
    label: LabelSource,
    depth: u32,
    nodes: u64,
    hash_mib: u32,
    skip_plies: u32,
    skip_check: bool,
    skip_captures: bool,
    sample_ppm: u32,
    seed: u64,
    dedup: bool,
    max_games: u64,
    max_positions: u64,
    max_bytes: u64,
    shard: (u64, u64),
    engine: String,
    block_games: u32,
    block_labels: u32,
}

impl From<OptionsV1> for Options {
    fn from(o: OptionsV1) -> Options {
        Options {
            label: o.label,
            depth: o.depth,
            nodes: o.nodes,
            hash_mib: o.hash_mib,
            skip_plies: o.skip_plies,
            skip_check: o.skip_check,
            skip_captures: o.skip_captures,
            sample_ppm: o.sample_ppm,
            seed: o.seed,
            dedup: o.dedup,
            max_games: o.max_games,
            max_positions: o.max_positions,
            max_bytes: o.max_bytes,
            shard: o.shard,
            engine: o.engine,
            block_games: o.block_games,
            block_labels: o.block_labels,
            net: String::new(),
            net_sha256: String::new(),
            pv_plies: 0,
            filter: GameFilter::default(),
            multipv: 1,
            relabelled_from: String::new(),
            selfplay: None,
        }
    }
}

/// One input file as recorded.
#[derive(Clone, PartialEq, Eq, Debug, Encode, Decode, serde::Serialize)]
pub struct InputInfo {
    /// The name as given.
    pub name: String,
    /// Its size in bytes (0 for standard input).
    pub size: u64,
}

/// The header (frame 0). It is always written in the current version's
/// layout, under the current version's number (a header taken from an
/// older file, as dedup and relabelling take their input's, is written as
/// a current one); it reads in every version's.
#[derive(Clone, PartialEq, Eq, Debug, serde::Serialize)]
pub struct Header {
    /// [`MAGIC`].
    pub magic: [u8; 8],
    /// [`FORMAT_VERSION`].
    pub version: u32,
    /// The kibitz version that wrote the file.
    pub kibitz_version: String,
    /// How the records were made.
    pub options: Options,
    /// The inputs, in order.
    pub inputs: Vec<InputInfo>,
}

impl Encode for Header {
    fn encode<E: bincode::enc::Encoder>(&self, e: &mut E) -> Result<(), EncodeError> {
        self.magic.encode(e)?;
        FORMAT_VERSION.encode(e)?;
        self.kibitz_version.encode(e)?;
        self.options.encode(e)?;
        self.inputs.encode(e)
    }
}

impl<Context> Decode<Context> for Header {
    fn decode<D: bincode::de::Decoder<Context = Context>>(
        d: &mut D,
    ) -> Result<Header, bincode::error::DecodeError> {
        let magic = <[u8; 8]>::decode(d)?;
        let version = u32::decode(d)?;
        if magic != MAGIC {
            return Err(bincode::error::DecodeError::Other("not a kibitz record file (bad magic)"));
        }
        if version == 0 || version > FORMAT_VERSION {
            return Err(bincode::error::DecodeError::OtherString(format!(
                "format version {version} (this kibitz reads versions 1 to {FORMAT_VERSION})"
            )));
        }
        let kibitz_version = String::decode(d)?;
        let options = match version {
            1 => OptionsV1::decode(d)?.into(),
            2 => OptionsV2::decode(d)?.into(),
            3 => OptionsV3::decode(d)?.into(),
            4 => Options::decode_v4(d)?,
            5 | 6 => Options::decode_v6(d)?,
            _ => Options::decode(d)?,
        };
        let inputs = Vec::<InputInfo>::decode(d)?;
        Ok(Header { magic, version, kibitz_version, options, inputs })
    }
}

bincode::impl_borrow_decode!(Header);

/// A label of one position.
#[derive(Clone, Copy, PartialEq, Eq, Debug, serde::Serialize)]
pub struct Label {
    /// The ply of the labelled position in its chain (0 = start position).
    pub ply: u16,
    /// Score from the side to move's point of view: centipawns, or a mate
    /// score `±(32000 - plies to mate)`.
    pub score: i16,
    /// The best move as its index among the sorted legal moves, or 255 for
    /// none (labels from `[%eval]`).
    pub best: u8,
    /// The depth searched (0 for `[%eval]`).
    pub depth: u8,
    /// The principal variation (empty when not kept or not known).
    pub pv: Pv,
    /// The next best moves of a multi-PV search, best first (empty for a
    /// single line).
    pub alternatives: Alternatives,
    /// What is known of how the label was made ([`LABEL_SHORT_OF_LIMIT`],
    /// [`LABEL_PAST_LIMIT`]; 0 for a label made as asked).
    pub flags: u8,
}

/// [`Label::flags`]: the engine that made the label stopped far short of
/// the limit it was given (under a quarter of its nodes or half its depth,
/// with no mate found and more than one legal move): a shallower label than
/// the header says.
pub const LABEL_SHORT_OF_LIMIT: u8 = 1;
/// [`Label::flags`]: the engine that made the label went on past twice its
/// node (or depth) limit and was stopped: a deeper label than the header
/// says, and not reproducible.
pub const LABEL_PAST_LIMIT: u8 = 2;
/// [`Label::flags`]: the label is the endgame tables' (exact): a win scores
/// [`crate::score::TB_WIN`], a loss its negative, a draw 0, and the best
/// move keeps the result by the shortest way to the next capture or pawn
/// move.
pub const LABEL_TABLEBASE: u8 = 4;
/// [`Label::flags`], with [`LABEL_TABLEBASE`]: a win the 50-move rule
/// turns into a draw (a cursed win, scored `+2`), or a loss it saves (a
/// blessed loss, `-2`).
pub const LABEL_TB_50_MOVE: u8 = 8;

/// Moves searched at most per position (`--multipv`): the best and up to
/// `MAX_MULTIPV - 1` alternatives.
pub const MAX_MULTIPV: usize = 5;

/// The alternatives of a label: moves (as indices among the sorted legal
/// moves) with their scores, side to move's view.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, serde::Serialize)]
pub struct Alternatives {
    len: u8,
    moves: [u8; MAX_MULTIPV - 1],
    scores: [i16; MAX_MULTIPV - 1],
}

impl Alternatives {
    /// Alternatives from (move index, score) pairs (those past
    /// `MAX_MULTIPV - 1` dropped).
    pub fn new(lines: &[(u8, i16)]) -> Alternatives {
        let mut a = Alternatives::default();
        for &(m, score) in lines.iter().take(MAX_MULTIPV - 1) {
            a.moves[usize::from(a.len)] = m;
            a.scores[usize::from(a.len)] = score;
            a.len += 1;
        }
        a
    }

    /// The (move index, score) pairs, best first.
    pub fn lines(&self) -> impl Iterator<Item = (u8, i16)> + '_ {
        let n = usize::from(self.len);
        self.moves[..n].iter().copied().zip(self.scores[..n].iter().copied())
    }

    /// How many.
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// None.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A principal variation: up to [`MAX_PV`] moves, each as its index among
/// the sorted legal moves of the position it is played in (the first in
/// the labelled position).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, serde::Serialize)]
pub struct Pv {
    len: u8,
    moves: [u8; MAX_PV],
}

impl Pv {
    /// The variation of these move indices (those past [`MAX_PV`] dropped).
    pub fn new(indices: &[u8]) -> Pv {
        let mut pv = Pv::default();
        for &i in indices.iter().take(MAX_PV) {
            pv.moves[usize::from(pv.len)] = i;
            pv.len += 1;
        }
        pv
    }

    /// The move indices.
    pub fn indices(&self) -> &[u8] {
        &self.moves[..usize::from(self.len)]
    }

    /// The moves, played from `pos` (which is left as it was); stops at an
    /// index that is no legal move.
    pub fn moves(&self, pos: &Position) -> Vec<Move> {
        let mut pos = pos.clone();
        let mut out = Vec::with_capacity(self.indices().len());
        for &i in self.indices() {
            let Some(m) = move_at(&pos, i) else { break };
            out.push(m);
            pos.do_move(m);
        }
        out
    }

    /// The variation of `moves` from `pos`, at most `plies` long; stops at
    /// a move that is not legal there.
    pub fn from_moves(pos: &Position, moves: &[Move], plies: usize) -> Pv {
        let mut pos = pos.clone();
        let mut indices = Vec::with_capacity(plies.min(MAX_PV));
        for &m in moves.iter().take(plies.min(MAX_PV)) {
            let Some(i) = move_index(&pos, m) else { break };
            indices.push(i);
            pos.do_move(m);
        }
        Pv::new(&indices)
    }
}

/// A game (or an EPD position: a chain without moves), as the program
/// handles it. On disk a block stores its games column by column.
#[derive(Clone, PartialEq, Eq, Debug, serde::Serialize)]
pub struct GameRecord {
    /// The game's index in the input (all inputs, from 0).
    pub index: u64,
    /// The start position.
    pub start: [u8; 32],
    /// 0 Black won, 1 draw, 2 White won, 3 unknown.
    pub result: u8,
    /// Event, Site, Date, Round, White, Black, Result.
    pub tags: [String; 7],
    /// `[WhiteElo]` and `[BlackElo]`, 0 where the game has none (or a
    /// value that is not a rating).
    pub elo: [u16; 2],
    /// Each played move as its index among the sorted legal moves.
    pub moves: Vec<u8>,
    /// Labels, in ply order.
    pub labels: Vec<Label>,
    /// How the game ended, when kibitz knows (games it played itself).
    pub ending: Ending,
}

/// How a game ended: what the final position says, or the rule that
/// adjudicated it. Games read from a database say nothing
/// ([`Ending::Unknown`]): their result is the database's.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ending {
    /// Not recorded.
    #[default]
    Unknown,
    /// The side to move is checkmated.
    Checkmate,
    /// The side to move has no legal move and is not in check.
    Stalemate,
    /// The position occurred for the third time.
    Repetition,
    /// A hundred plies without a capture or a pawn move.
    FiftyMoves,
    /// Neither side can mate.
    InsufficientMaterial,
    /// The score stayed beyond the resign limit: the losing side resigned.
    Resigned,
    /// The score stayed near zero: drawn by agreement.
    DrawAdjudicated,
    /// The game reached the ply limit: drawn.
    MaxPlies,
    /// The position entered the endgame tables: their result (a cursed
    /// win or a blessed loss is a draw).
    Tablebase,
}

impl Ending {
    /// Every ending, in code order.
    pub const ALL: [Ending; 10] = [
        Ending::Unknown,
        Ending::Checkmate,
        Ending::Stalemate,
        Ending::Repetition,
        Ending::FiftyMoves,
        Ending::InsufficientMaterial,
        Ending::Resigned,
        Ending::DrawAdjudicated,
        Ending::MaxPlies,
        Ending::Tablebase,
    ];

    /// The byte a block stores.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The ending of a stored byte (`Unknown` for a code this version does
    /// not know).
    pub fn from_code(code: u8) -> Ending {
        Ending::ALL.get(usize::from(code)).copied().unwrap_or(Ending::Unknown)
    }

    /// Whether a rule ended the game rather than the board.
    pub fn is_adjudication(self) -> bool {
        matches!(
            self,
            Ending::Resigned | Ending::DrawAdjudicated | Ending::MaxPlies | Ending::Tablebase
        )
    }

    /// A PGN `[Termination]` value: `normal` where the board ended the
    /// game, `adjudication` where a rule did (the PGN standard's words),
    /// `unterminated` for an unknown ending.
    pub fn termination(self) -> &'static str {
        match self {
            Ending::Unknown => "unterminated",
            e if e.is_adjudication() => "adjudication",
            _ => "normal",
        }
    }

    /// The ending's name in summaries (`fifty_moves`, `resigned`...).
    pub fn name(self) -> &'static str {
        match self {
            Ending::Unknown => "unknown",
            Ending::Checkmate => "checkmate",
            Ending::Stalemate => "stalemate",
            Ending::Repetition => "repetition",
            Ending::FiftyMoves => "fifty_moves",
            Ending::InsufficientMaterial => "insufficient_material",
            Ending::Resigned => "resigned",
            Ending::DrawAdjudicated => "draw_adjudicated",
            Ending::MaxPlies => "max_plies",
            Ending::Tablebase => "tablebase",
        }
    }
}

impl GameRecord {
    /// A record without labels.
    pub fn new(
        index: u64,
        start: [u8; 32],
        result: u8,
        tags: [String; 7],
        moves: Vec<u8>,
    ) -> GameRecord {
        GameRecord {
            index,
            start,
            result,
            tags,
            elo: [0; 2],
            moves,
            labels: Vec::new(),
            ending: Ending::Unknown,
        }
    }

    /// The number of labels.
    pub fn label_count(&self) -> usize {
        self.labels.len()
    }

    /// The labels.
    pub fn labels(&self) -> &[Label] {
        &self.labels
    }

    /// Replaces the labels (in ply order).
    pub fn set_labels(&mut self, labels: &[Label]) {
        self.labels = labels.to_vec();
    }

    /// Whether White is to move at `ply` of the chain.
    fn white_at(&self, ply: usize) -> bool {
        let black_starts = self.start[24] & 0x80 != 0;
        (ply % 2 == 1) == black_starts
    }
}

/// A block whose columns do not add up (a corrupt or foreign file).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BlockError {
    /// The per-game columns differ in length.
    #[error("block: game columns of different lengths")]
    GameColumns,
    /// The per-label columns differ in length.
    #[error("block: label columns of different lengths")]
    LabelColumns,
    /// Fewer moves than the games' move counts.
    #[error("block: moves column too short")]
    MovesShort,
    /// Fewer bitmap bytes than the games need.
    #[error("block: bitmap column too short")]
    BitmapShort,
    /// More labelled plies than labels.
    #[error("block: more labelled plies than labels")]
    TooFewLabels,
    /// A variation longer than a label may keep.
    #[error("block: a variation longer than {MAX_PV} plies")]
    PvTooLong,
    /// Fewer variation moves than the labels' lengths.
    #[error("block: variation column too short")]
    PvShort,
    /// Bytes left over after the last game.
    #[error("block: columns longer than their games")]
    ColumnsTooLong,
}

/// A block: consecutive games (by index) of one run, stored column by
/// column, which zstd compresses far better than game by game (a quarter
/// fewer bytes on Lichess games):
///
/// * per game: index, start position, result, the seven tags (one column
///   per tag), the number of moves, and (since version 4) the two ratings
///   and (since version 5) how the game ended (at the end of the block);
/// * all games' moves, then all games' label bitmaps (for each game,
///   `(moves + 1) / 8` rounded up bytes; bit `p % 8` of byte `p / 8` set when
///   ply `p` is labelled);
/// * per label: the score as White's view minus White's view of the game's
///   previous label (0 before a game's first), wrapping in 16 bits, split
///   into a column of low bytes and a column of high bytes; the best move's
///   index (255 for none); the depth; the length of its principal
///   variation;
/// * all labels' variations, move indices one after another;
/// * (since version 6) per label, its flags ([`Label::flags`]).
#[derive(Clone, PartialEq, Eq, Debug, Default, Encode, Decode, serde::Serialize)]
pub struct Block {
    indices: Vec<u64>,
    starts: Vec<[u8; 32]>,
    results: Vec<u8>,
    tags: [Vec<String>; 7],
    move_counts: Vec<u32>,
    moves: Vec<u8>,
    labelled: Vec<u8>,
    score_low: Vec<u8>,
    score_high: Vec<u8>,
    bests: Vec<u8>,
    depths: Vec<u8>,
    pv_lens: Vec<u8>,
    pv_moves: Vec<u8>,
    elos: [Vec<u16>; 2],
    alt_counts: Vec<u8>,
    alt_moves: Vec<u8>,
    alt_scores: Vec<i16>,
    endings: Vec<u8>,
    flags: Vec<u8>,
}

/// A [`Block`] as format version 5 wrote it, without label flags.
#[derive(Decode)]
pub struct BlockV5 {
    indices: Vec<u64>,
    starts: Vec<[u8; 32]>,
    results: Vec<u8>,
    tags: [Vec<String>; 7],
    move_counts: Vec<u32>,
    moves: Vec<u8>,
    labelled: Vec<u8>,
    score_low: Vec<u8>,
    score_high: Vec<u8>,
    bests: Vec<u8>,
    depths: Vec<u8>,
    pv_lens: Vec<u8>,
    pv_moves: Vec<u8>,
    elos: [Vec<u16>; 2],
    alt_counts: Vec<u8>,
    alt_moves: Vec<u8>,
    alt_scores: Vec<i16>,
    endings: Vec<u8>,
}

impl From<BlockV5> for Block {
    fn from(b: BlockV5) -> Block {
        Block {
            flags: vec![0; b.score_low.len()],
            indices: b.indices,
            starts: b.starts,
            results: b.results,
            tags: b.tags,
            move_counts: b.move_counts,
            moves: b.moves,
            labelled: b.labelled,
            score_low: b.score_low,
            score_high: b.score_high,
            bests: b.bests,
            depths: b.depths,
            pv_lens: b.pv_lens,
            pv_moves: b.pv_moves,
            elos: b.elos,
            alt_counts: b.alt_counts,
            alt_moves: b.alt_moves,
            alt_scores: b.alt_scores,
            endings: b.endings,
        }
    }
}

/// A [`Block`] as format version 4 wrote it, without endings.
#[derive(Decode)]
pub struct BlockV4 {
    indices: Vec<u64>,
    starts: Vec<[u8; 32]>,
    results: Vec<u8>,
    tags: [Vec<String>; 7],
    move_counts: Vec<u32>,
    moves: Vec<u8>,
    labelled: Vec<u8>,
    score_low: Vec<u8>,
    score_high: Vec<u8>,
    bests: Vec<u8>,
    depths: Vec<u8>,
    pv_lens: Vec<u8>,
    pv_moves: Vec<u8>,
    elos: [Vec<u16>; 2],
    alt_counts: Vec<u8>,
    alt_moves: Vec<u8>,
    alt_scores: Vec<i16>,
}

impl From<BlockV4> for Block {
    fn from(b: BlockV4) -> Block {
        Block {
            flags: vec![0; b.score_low.len()],
            endings: vec![0; b.indices.len()],
            indices: b.indices,
            starts: b.starts,
            results: b.results,
            tags: b.tags,
            move_counts: b.move_counts,
            moves: b.moves,
            labelled: b.labelled,
            score_low: b.score_low,
            score_high: b.score_high,
            bests: b.bests,
            depths: b.depths,
            pv_lens: b.pv_lens,
            pv_moves: b.pv_moves,
            elos: b.elos,
            alt_counts: b.alt_counts,
            alt_moves: b.alt_moves,
            alt_scores: b.alt_scores,
        }
    }
}

/// A [`Block`] as format version 3 wrote it, without ratings.
#[derive(Decode)]
pub struct BlockV3 {
    indices: Vec<u64>,
    starts: Vec<[u8; 32]>,
    results: Vec<u8>,
    tags: [Vec<String>; 7],
    move_counts: Vec<u32>,
    moves: Vec<u8>,
    labelled: Vec<u8>,
    score_low: Vec<u8>,
    score_high: Vec<u8>,
    bests: Vec<u8>,
    depths: Vec<u8>,
    pv_lens: Vec<u8>,
    pv_moves: Vec<u8>,
}

impl From<BlockV3> for Block {
    fn from(b: BlockV3) -> Block {
        Block {
            flags: vec![0; b.score_low.len()],
            endings: vec![0; b.indices.len()],
            elos: [vec![0; b.indices.len()], vec![0; b.indices.len()]],
            alt_counts: vec![0; b.score_low.len()],
            alt_moves: Vec::new(),
            alt_scores: Vec::new(),
            indices: b.indices,
            starts: b.starts,
            results: b.results,
            tags: b.tags,
            move_counts: b.move_counts,
            moves: b.moves,
            labelled: b.labelled,
            score_low: b.score_low,
            score_high: b.score_high,
            bests: b.bests,
            depths: b.depths,
            pv_lens: b.pv_lens,
            pv_moves: b.pv_moves,
        }
    }
}

/// A [`Block`] as format versions 1 and 2 wrote it, without variations.
#[derive(Decode)]
pub struct BlockV2 {
    indices: Vec<u64>,
    starts: Vec<[u8; 32]>,
    results: Vec<u8>,
    tags: [Vec<String>; 7],
    move_counts: Vec<u32>,
    moves: Vec<u8>,
    labelled: Vec<u8>,
    score_low: Vec<u8>,
    score_high: Vec<u8>,
    bests: Vec<u8>,
    depths: Vec<u8>,
}

impl From<BlockV2> for Block {
    fn from(b: BlockV2) -> Block {
        Block {
            flags: vec![0; b.score_low.len()],
            pv_lens: vec![0; b.score_low.len()],
            pv_moves: Vec::new(),
            endings: vec![0; b.indices.len()],
            elos: [vec![0; b.indices.len()], vec![0; b.indices.len()]],
            alt_counts: vec![0; b.score_low.len()],
            alt_moves: Vec::new(),
            alt_scores: Vec::new(),
            indices: b.indices,
            starts: b.starts,
            results: b.results,
            tags: b.tags,
            move_counts: b.move_counts,
            moves: b.moves,
            labelled: b.labelled,
            score_low: b.score_low,
            score_high: b.score_high,
            bests: b.bests,
            depths: b.depths,
        }
    }
}

impl Block {
    /// The block of `games` (in index order).
    pub fn from_games(games: &[GameRecord]) -> Block {
        let mut b = Block::default();
        for g in games {
            b.indices.push(g.index);
            b.starts.push(g.start);
            b.results.push(g.result);
            for (column, tag) in b.tags.iter_mut().zip(&g.tags) {
                column.push(tag.clone());
            }
            b.elos[0].push(g.elo[0]);
            b.elos[1].push(g.elo[1]);
            b.endings.push(g.ending.code());
            b.move_counts.push(g.moves.len() as u32);
            b.moves.extend_from_slice(&g.moves);
            let mut bitmap = vec![0u8; (g.moves.len() + 1).div_ceil(8)];
            let mut previous: i16 = 0;
            for l in &g.labels {
                let p = usize::from(l.ply);
                if let Some(byte) = bitmap.get_mut(p / 8) {
                    *byte |= 1 << (p % 8);
                }
                let white = if g.white_at(p) { l.score } else { l.score.wrapping_neg() };
                let delta = white.wrapping_sub(previous);
                previous = white;
                b.score_low.push(delta as u8);
                b.score_high.push((delta >> 8) as u8);
                b.bests.push(l.best);
                b.depths.push(l.depth);
                b.pv_lens.push(l.pv.indices().len() as u8);
                b.pv_moves.extend_from_slice(l.pv.indices());
                b.alt_counts.push(l.alternatives.len() as u8);
                b.flags.push(l.flags);
                for (m, score) in l.alternatives.lines() {
                    b.alt_moves.push(m);
                    b.alt_scores.push(score);
                }
            }
            b.labelled.extend_from_slice(&bitmap);
        }
        b
    }

    /// The games, decoded; an error names what does not add up.
    pub fn games(&self) -> Result<Vec<GameRecord>, BlockError> {
        let n = self.indices.len();
        if self.starts.len() != n
            || self.results.len() != n
            || self.move_counts.len() != n
            || self.tags.iter().any(|t| t.len() != n)
            || self.elos.iter().any(|e| e.len() != n)
            || self.endings.len() != n
        {
            return Err(BlockError::GameColumns);
        }
        let labels = self.score_low.len();
        if self.score_high.len() != labels
            || self.bests.len() != labels
            || self.depths.len() != labels
            || self.pv_lens.len() != labels
            || self.alt_counts.len() != labels
            || self.flags.len() != labels
            || self.alt_moves.len() != self.alt_scores.len()
        {
            return Err(BlockError::LabelColumns);
        }
        let mut out = Vec::with_capacity(n);
        let (mut moves_at, mut bitmap_at, mut label_at, mut pv_at) = (0usize, 0, 0, 0);
        let mut alt_at = 0usize;
        for i in 0..n {
            let count = self.move_counts[i] as usize;
            let moves =
                self.moves.get(moves_at..moves_at + count).ok_or(BlockError::MovesShort)?.to_vec();
            moves_at += count;
            let bytes = (count + 1).div_ceil(8);
            let bitmap =
                self.labelled.get(bitmap_at..bitmap_at + bytes).ok_or(BlockError::BitmapShort)?;
            bitmap_at += bytes;
            let mut g = GameRecord::new(
                self.indices[i],
                self.starts[i],
                self.results[i],
                std::array::from_fn(|t| self.tags[t][i].clone()),
                moves,
            );
            g.elo = [self.elos[0][i], self.elos[1][i]];
            g.ending = Ending::from_code(self.endings[i]);
            let mut white: i16 = 0;
            for p in (0..=count).filter(|&p| bitmap[p / 8] & (1 << (p % 8)) != 0) {
                if label_at >= labels {
                    return Err(BlockError::TooFewLabels);
                }
                let delta =
                    i16::from_le_bytes([self.score_low[label_at], self.score_high[label_at]]);
                white = white.wrapping_add(delta);
                let score = if g.white_at(p) { white } else { white.wrapping_neg() };
                let pv_len = usize::from(self.pv_lens[label_at]);
                if pv_len > MAX_PV {
                    return Err(BlockError::PvTooLong);
                }
                let pv = self.pv_moves.get(pv_at..pv_at + pv_len).ok_or(BlockError::PvShort)?;
                pv_at += pv_len;
                let alt_len = usize::from(self.alt_counts[label_at]);
                if alt_len >= MAX_MULTIPV {
                    return Err(BlockError::PvTooLong);
                }
                let alt_moves =
                    self.alt_moves.get(alt_at..alt_at + alt_len).ok_or(BlockError::PvShort)?;
                let alt_scores = &self.alt_scores[alt_at..alt_at + alt_len];
                alt_at += alt_len;
                let lines: Vec<(u8, i16)> =
                    alt_moves.iter().copied().zip(alt_scores.iter().copied()).collect();
                g.labels.push(Label {
                    ply: p as u16,
                    score,
                    best: self.bests[label_at],
                    depth: self.depths[label_at],
                    pv: Pv::new(pv),
                    alternatives: Alternatives::new(&lines),
                    flags: self.flags[label_at],
                });
                label_at += 1;
            }
            out.push(g);
        }
        if moves_at != self.moves.len()
            || bitmap_at != self.labelled.len()
            || label_at != labels
            || pv_at != self.pv_moves.len()
            || alt_at != self.alt_moves.len()
        {
            return Err(BlockError::ColumnsTooLong);
        }
        Ok(out)
    }

    /// The number of games.
    pub fn len(&self) -> usize {
        self.indices.len()
    }

    /// The number of labels.
    pub fn label_count(&self) -> usize {
        self.score_low.len()
    }

    /// Whether the block has no game.
    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }
}

/// The tags a record keeps, in order: the seven-tag roster.
pub const ROSTER: [&str; 7] = ["Event", "Site", "Date", "Round", "White", "Black", "Result"];

/// A game result code from a `[Result]` value.
pub fn result_code(result: &[u8]) -> u8 {
    match result {
        b"0-1" => 0,
        b"1/2-1/2" => 1,
        b"1-0" => 2,
        _ => 3,
    }
}

/// A game result code as a `[Result]` value (`*` for unknown).
pub fn result_text(code: u8) -> &'static str {
    match code {
        0 => "0-1",
        1 => "1/2-1/2",
        2 => "1-0",
        _ => "*",
    }
}

/// The legal moves of `pos`, sorted by encoding: the order move indices
/// refer to (independent of the move generator's order).
pub fn sorted_moves(pos: &Position) -> MoveList {
    let mut moves = pos.legal_moves();
    moves.as_mut_slice().sort_unstable_by_key(|m| m.to_u16());
    moves
}

/// The index of `m` among the sorted legal moves.
pub fn move_index(pos: &Position, m: Move) -> Option<u8> {
    sorted_moves(pos).iter().position(|&x| x == m).and_then(|i| u8::try_from(i).ok())
}

/// The move at `index` among the sorted legal moves.
pub fn move_at(pos: &Position, index: u8) -> Option<Move> {
    sorted_moves(pos).get(usize::from(index)).copied()
}

/// Clamps a search score into the label's 16 bits (mate scores fit).
pub fn label_score(score: i32) -> i16 {
    score.clamp(-32_000, 32_000) as i16
}

/// Whether a label score is a mate score.
pub fn is_mate(score: i16) -> bool {
    i32::from(score).abs() >= MATE_BOUND
}

/// Whether a label score is a known win or loss: a mate, or a win the
/// endgame tables know (`TB_WIN - ply`). Training leaves both out alike;
/// `--max-score` drops both, as beyond any centipawn limit.
pub fn is_decided(score: i16) -> bool {
    i32::from(score).abs() >= WIN_BOUND
}

/// A position packed in 32 bytes, marlinformat-style:
///
/// ```text
/// bytes  0.. 8  occupancy, u64 little-endian
/// bytes  8..24  a nibble per occupied square, low squares first, low nibble
///               first: piece code 0-11 (2 * role + color: P p N n B b R r Q
///               q K k), 12/13 a White/Black rook that may still castle
/// byte  24      bit 7: Black to move; bits 0-6: en-passant square, 64 = none
/// byte  25      halfmove clock (capped at 255)
/// bytes 26..28  fullmove number, u16 little-endian
/// byte  28      bit 0: Chess960
/// bytes 29..32  zero
/// ```
pub struct PackedBoard;

impl PackedBoard {
    /// Packs `pos`.
    pub fn pack(pos: &Position) -> [u8; 32] {
        let mut out = [0u8; 32];
        let occupied = pos.occupied();
        out[..8].copy_from_slice(&occupied.0.to_le_bytes());
        let castling_rooks: Bitboard = Color::ALL
            .iter()
            .flat_map(|&c| {
                crate::chess::types::CastlingSide::ALL
                    .into_iter()
                    .filter_map(move |s| pos.castling_rook(c, s))
            })
            .collect();
        for (i, sq) in occupied.enumerate() {
            let code = match pos.piece_on(sq) {
                Some(p) if castling_rooks.contains(sq) && p.role() == Role::Rook => {
                    12 + p.color() as u8
                }
                Some(p) => p as u8,
                None => 0,
            };
            out[8 + i / 2] |= code << (4 * (i & 1));
        }
        let ep = pos.ep_square().map_or(64, |s| s as u8);
        out[24] = ep | if pos.side_to_move() == Color::Black { 0x80 } else { 0 };
        out[25] = pos.rule50().min(255) as u8;
        out[26..28].copy_from_slice(
            &(pos.fullmove_number().min(u32::from(u16::MAX)) as u16).to_le_bytes(),
        );
        out[28] = u8::from(pos.is_chess960());
        out
    }

    /// Unpacks a position; `None` if the bytes are not a valid position.
    pub fn unpack(bytes: &[u8; 32]) -> Option<Position> {
        let occupied = Bitboard(u64::from_le_bytes(bytes[..8].try_into().ok()?));
        if occupied.count() > 32 {
            return None;
        }
        let mut board = [None; 64];
        let mut rooks: Vec<(Color, Square)> = Vec::new();
        for (i, sq) in occupied.enumerate() {
            let code = (bytes[8 + i / 2] >> (4 * (i & 1))) & 15;
            let piece = match code {
                0..=11 => Piece::ALL[usize::from(code)],
                12 | 13 => {
                    let color = if code == 12 { Color::White } else { Color::Black };
                    rooks.push((color, sq));
                    Piece::new(color, Role::Rook)
                }
                _ => return None,
            };
            board[sq.to_usize()] = Some(piece);
        }
        let turn = if bytes[24] & 0x80 != 0 { Color::Black } else { Color::White };
        let ep = bytes[24] & 0x7f;
        let chess960 = bytes[28] & 1 != 0;
        // Castling rights as file letters (Shredder-FEN) for the marked rooks.
        let castling: Vec<u8> = rooks
            .iter()
            .map(|&(c, sq)| {
                let f = sq.file().char() as u8;
                if c == Color::White { f.to_ascii_uppercase() } else { f }
            })
            .collect();
        let setup = crate::chess::fen::Setup {
            board,
            turn,
            castling,
            ep_square: (ep < 64).then(|| Square::new_masked(u32::from(ep))),
            halfmoves: u32::from(bytes[25]),
            fullmoves: u32::from(u16::from_le_bytes([bytes[26], bytes[27]])).max(1),
        };
        let mode = if chess960 { CastlingMode::Chess960 } else { CastlingMode::Standard };
        let mut pos = Position::from_setup(
            &setup,
            FenOptions {
                castling_mode: Some(CastlingMode::Chess960),
                drop_invalid_castling: false,
            },
        )
        .ok()?;
        pos.set_chess960(mode == CastlingMode::Chess960);
        Some(pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The filter's bytes, as docs/FORMAT.md gives them, written out by
    /// hand: a change to the filter's fields cannot change them silently.
    #[test]
    fn filter_bytes_are_the_formats() {
        let filter = GameFilter {
            min_elo: Some(1500),
            max_avg_elo: Some(2000),
            speeds: vec![Speed::Blitz, Speed::Rapid],
            date_from: Some("2016.05.01".into()),
            terminations: vec!["Normal".into()],
            ..GameFilter::default()
        };
        let mut expected = vec![1, 0xdc, 0x05, 0, 0, 1, 0xd0, 0x07];
        expected.extend([2, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0]);
        expected.extend([1, 10, 0, 0, 0, 0, 0, 0, 0]);
        expected.extend(b"2016.05.01");
        expected.push(0);
        expected.extend([1, 0, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0]);
        expected.extend(b"Normal");
        expected.extend([0; 8]);
        let mut bytes = Vec::new();
        struct Collect<'a>(&'a mut Vec<u8>);
        impl bincode::enc::write::Writer for Collect<'_> {
            fn write(&mut self, b: &[u8]) -> Result<(), EncodeError> {
                self.0.extend_from_slice(b);
                Ok(())
            }
        }
        let mut e = bincode::enc::EncoderImpl::new(Collect(&mut bytes), config());
        encode_filter(&filter, &mut e).unwrap();
        assert_eq!(bytes, expected);
        let mut options = Options::from(OptionsV1 {
            label: LabelSource::Search,
            depth: 8,
            nodes: 0,
            hash_mib: 16,
            skip_plies: 8,
            skip_check: true,
            skip_captures: true,
            sample_ppm: 1_000_000,
            seed: 0,
            dedup: false,
            max_games: 0,
            max_positions: 0,
            max_bytes: 0,
            shard: (0, 1),
            engine: String::new(),
            block_games: BLOCK_GAMES,
            block_labels: BLOCK_LABELS,
        });
        options.filter = filter;
        options.multipv = 3;
        options.selfplay = Some(SelfPlayOptions {
            book: "noob_3moves.epd.zst".into(),
            book_positions: 150_932,
            variant: 2,
            random_plies: 8,
            resign_score: 2000,
            resign_plies: 4,
            games: 1000,
            ..SelfPlayOptions::default()
        });
        let encoded = bincode::encode_to_vec(&options, config()).unwrap();
        let (back, used): (Options, usize) =
            bincode::decode_from_slice(&encoded, config()).unwrap();
        assert_eq!((back, used), (options, encoded.len()));
    }

    #[test]
    fn packing_round_trips() {
        for fen in [
            crate::chess::fen::STARTPOS,
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 17 40",
        ] {
            let pos = Position::from_fen(fen).unwrap();
            let back = PackedBoard::unpack(&PackedBoard::pack(&pos)).unwrap();
            assert_eq!(back.fen(), pos.fen());
            assert_eq!(back.key(), pos.key());
        }
        let pos960 =
            Position::from_fen("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9")
                .unwrap();
        let back = PackedBoard::unpack(&PackedBoard::pack(&pos960)).unwrap();
        assert!(back.is_chess960());
        assert_eq!(back.fen(), pos960.fen());
        assert!(PackedBoard::unpack(&[0xff; 32]).is_none());
    }

    #[test]
    fn block_columns_round_trip() {
        let pos =
            Position::from_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1").unwrap();
        let mut a = GameRecord::new(3, PackedBoard::pack(&pos), 1, Default::default(), vec![0; 20]);
        a.set_labels(&[
            Label {
                ply: 0,
                score: 35,
                best: 4,
                depth: 8,
                pv: Pv::new(&[4, 0, 17]),
                alternatives: Alternatives::new(&[(0, 20), (17, -5)]),
                flags: LABEL_SHORT_OF_LIMIT,
            },
            Label {
                ply: 1,
                score: -31_990,
                best: 255,
                depth: 0,
                pv: Pv::default(),
                alternatives: Alternatives::default(),
                flags: 0,
            },
            Label {
                ply: 9,
                score: 31_999,
                best: 0,
                depth: 12,
                pv: Pv::default(),
                alternatives: Alternatives::default(),
                flags: LABEL_PAST_LIMIT,
            },
            Label {
                ply: 20,
                score: -7,
                best: 1,
                depth: 8,
                pv: Pv::default(),
                alternatives: Alternatives::default(),
                flags: 0,
            },
        ]);
        let mut b = GameRecord::new(
            4,
            PackedBoard::pack(&Position::startpos()),
            2,
            Default::default(),
            vec![],
        );
        b.tags[1] = "site".into();
        b.set_labels(&[Label {
            ply: 0,
            score: 12,
            best: 7,
            depth: 8,
            pv: Pv::new(&[7; MAX_PV]),
            alternatives: Alternatives::default(),
            flags: 0,
        }]);
        let c = GameRecord::new(
            5,
            PackedBoard::pack(&Position::startpos()),
            3,
            Default::default(),
            vec![1, 2, 3],
        );
        let games = vec![a, b, c];
        let block = Block::from_games(&games);
        assert_eq!(block.games().unwrap(), games);
        let bytes = bincode::encode_to_vec(&block, config()).unwrap();
        let (back, _): (Block, usize) = bincode::decode_from_slice(&bytes, config()).unwrap();
        assert_eq!(back.games().unwrap(), games);
        let mut broken = block.clone();
        broken.bests.pop();
        assert_eq!(broken.games(), Err(BlockError::LabelColumns));
        let mut broken = block.clone();
        broken.pv_moves.pop();
        assert_eq!(broken.games(), Err(BlockError::PvShort));
        let mut broken = block.clone();
        broken.pv_moves.push(0);
        assert_eq!(broken.games(), Err(BlockError::ColumnsTooLong));
        let mut broken = block;
        broken.pv_lens[0] = 13;
        assert_eq!(broken.games(), Err(BlockError::PvTooLong));
    }

    #[test]
    fn bincode_layout_is_fixed_width() {
        // A label's fields as their columns hold them.
        let bytes = bincode::encode_to_vec((3u16, -5i16, 7u8, 8u8), config()).unwrap();
        assert_eq!(bytes, [3, 0, 0xfb, 0xff, 7, 8]);
    }
}
