//! Syzygy endgame tablebases: the exact result (WDL, with the 50-move rule)
//! and the distance to the next capture or pawn move (DTZ) of positions
//! with few pieces.
//!
//! The tables are decoded by `shakmaty-syzygy`, the prober Lichess's
//! tablebase server runs on: a well-kept, tested decoder of a compressed
//! format whose every detail matters. kibitz's position crosses to its
//! board type at probe time only: everything the rest of kibitz sees is
//! its own types ([`Position`], [`Move`], [`TbWdl`]).
//!
//! The tables are memory-mapped and opened lazily, the first time a
//! position of their material is probed; [`Tablebases`] is shared by every
//! worker thread (`Arc`).
//!
//! Scores follow Stockfish's: a win the tables know is
//! [`crate::TB_WIN`]` - ply`, below every mate and above every evaluation
//! ([`crate::score`]); a win the 50-move rule spoils (a cursed win) scores
//! `+2`, a loss it saves (a blessed loss) `-2`.

use std::{
    collections::{BTreeSet, HashSet},
    hash::{BuildHasherDefault, Hasher},
    io::{self, Read},
    path::PathBuf,
    sync::{
        Arc, OnceLock,
        atomic::{AtomicU64, Ordering},
    },
};

use shakmaty::{CastlingMode, Chess, FromSetup, Position as _, Setup};
use shakmaty_syzygy::{Dtz, MaybeRounded, SyzygyError, Tablebase, Wdl};

use crate::{
    chess::{
        mv::Move,
        position::Position,
        types::{Color, Piece, Role, Square},
        zobrist,
    },
    score::{tb_loss_in, tb_win_in},
};

/// The score of a cursed win (a win the 50-move rule turns into a draw),
/// from the winner's side: a draw, by a hair.
pub const CURSED_WIN: i32 = 2;

/// A position's result by the tables, counting the 50-move rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TbWdl {
    /// Lost whatever the 50-move counter.
    Loss,
    /// Lost, but saved by the 50-move rule.
    BlessedLoss,
    /// Drawn.
    Draw,
    /// Won, but the 50-move rule turns it into a draw.
    CursedWin,
    /// Won.
    Win,
}

impl TbWdl {
    fn from_syzygy(wdl: Wdl) -> TbWdl {
        match wdl {
            Wdl::Loss => TbWdl::Loss,
            Wdl::BlessedLoss => TbWdl::BlessedLoss,
            Wdl::Draw => TbWdl::Draw,
            Wdl::CursedWin => TbWdl::CursedWin,
            Wdl::Win => TbWdl::Win,
        }
    }

    /// Python-chess's and the tables' number: 2 win, 1 cursed win, 0 draw,
    /// -1 blessed loss, -2 loss.
    pub fn value(self) -> i32 {
        match self {
            TbWdl::Loss => -2,
            TbWdl::BlessedLoss => -1,
            TbWdl::Draw => 0,
            TbWdl::CursedWin => 1,
            TbWdl::Win => 2,
        }
    }

    /// The search score of this result `ply` plies from the root
    /// (Stockfish's: a win just below mate, a cursed win or blessed loss a
    /// draw by two).
    pub fn score(self, ply: usize) -> i32 {
        match self {
            TbWdl::Win => tb_win_in(ply),
            TbWdl::Loss => tb_loss_in(ply),
            TbWdl::CursedWin => CURSED_WIN,
            TbWdl::BlessedLoss => -CURSED_WIN,
            TbWdl::Draw => 0,
        }
    }

    /// The game's result it stands for, side to move's view: 1 a win, 0 a
    /// draw (a cursed win and a blessed loss are draws), -1 a loss.
    pub fn outcome(self) -> i32 {
        match self {
            TbWdl::Win => 1,
            TbWdl::Loss => -1,
            _ => 0,
        }
    }

    /// The result from the other side.
    pub fn flip(self) -> TbWdl {
        match self {
            TbWdl::Loss => TbWdl::Win,
            TbWdl::BlessedLoss => TbWdl::CursedWin,
            TbWdl::Draw => TbWdl::Draw,
            TbWdl::CursedWin => TbWdl::BlessedLoss,
            TbWdl::Win => TbWdl::Loss,
        }
    }

    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            TbWdl::Loss => "loss",
            TbWdl::BlessedLoss => "blessed loss",
            TbWdl::Draw => "draw",
            TbWdl::CursedWin => "cursed win",
            TbWdl::Win => "win",
        }
    }
}

/// What the tables say of a position: its result and the move that keeps
/// it (the shortest way to the next capture or pawn move in a win, the
/// longest in a loss).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TbAnswer {
    /// The result, counting the 50-move rule from the position's counter.
    pub wdl: TbWdl,
    /// Plies to the next capture or pawn move along the tables' best line
    /// (negative when losing, 0 in a draw). Stored DTZ may be rounded by a
    /// ply: exact enough to rank moves, not to count plies.
    pub dtz: i32,
    /// The tables' best move (none when the game is over).
    pub best: Option<Move>,
}

/// Where tables could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TablebaseError {
    /// A folder given does not exist or cannot be listed.
    #[error("Syzygy folder {path}: {source}")]
    Folder {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Folders with no table in them.
    #[error("no Syzygy tables (.rtbw, .rtbz) in {0}")]
    Empty(String),
}

/// A set of Syzygy tables from one or more folders.
pub struct Tablebases {
    tables: Tablebase<Chess>,
    folders: Vec<PathBuf>,
    wdl_tables: usize,
    dtz_tables: usize,
    warnings: Vec<String>,
    /// The material keys of the WDL tables, both ways round
    /// ([`table_keys`]): a position of any other material is not converted
    /// for a probe bound to fail.
    wdl_materials: HashSet<u64, BuildHasherDefault<KeyHasher>>,
}

/// A hasher for material keys, already random: taken as they are (the set
/// is looked up at every node the search might probe).
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// The material keys (kibitz's, as `do_move` keeps them: [`Position::material_key`])
/// of a table's name (`KRBvKR`), its sides both ways round.
fn table_keys(name: &str) -> Option<[u64; 2]> {
    let (white, black) = name.split_once('v')?;
    let counts = |side: &str| -> Option<[u32; 6]> {
        let mut c = [0u32; 6];
        for ch in side.chars() {
            let role = match ch {
                'P' => Role::Pawn,
                'N' => Role::Knight,
                'B' => Role::Bishop,
                'R' => Role::Rook,
                'Q' => Role::Queen,
                'K' => Role::King,
                _ => return None,
            };
            c[role as usize] += 1;
        }
        Some(c)
    };
    let key = |w: [u32; 6], b: [u32; 6]| {
        Role::ALL.iter().fold(0u64, |k, &role| {
            k ^ zobrist::material_of_count(Piece::new(Color::White, role), w[role as usize])
                ^ zobrist::material_of_count(Piece::new(Color::Black, role), b[role as usize])
        })
    };
    let (w, b) = (counts(white)?, counts(black)?);
    Some([key(w, b), key(b, w)])
}

/// The first bytes of a WDL and of a DTZ table of standard chess.
const WDL_MAGIC: [u8; 4] = [0x71, 0xe8, 0x23, 0x5d];
const DTZ_MAGIC: [u8; 4] = [0xd7, 0x66, 0x0c, 0xa5];

/// Probes that failed on a table that could not be read (a corrupt file):
/// the position was then taken as outside the tables. Counted for the whole
/// process, for the run's summary.
static PROBE_ERRORS: AtomicU64 = AtomicU64::new(0);
static FIRST_PROBE_ERROR: OnceLock<String> = OnceLock::new();

/// Probes that failed on an unreadable table so far, and the first error.
pub fn probe_errors() -> (u64, Option<&'static str>) {
    (PROBE_ERRORS.load(Ordering::Relaxed), FIRST_PROBE_ERROR.get().map(String::as_str))
}

/// A probe's result: the answer, or `None` when no table covers the
/// position; a table that fails to read is counted and named once.
fn checked<T>(result: Result<T, SyzygyError>) -> Option<T> {
    match result {
        Ok(v) => Some(v),
        Err(SyzygyError::ProbeFailed { metric, material, error }) => {
            PROBE_ERRORS.fetch_add(1, Ordering::Relaxed);
            let _ = FIRST_PROBE_ERROR.set(format!("the {metric} table {material}: {error}"));
            None
        }
        Err(_) => None,
    }
}

impl std::fmt::Debug for Tablebases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tablebases")
            .field("folders", &self.folders)
            .field("wdl_tables", &self.wdl_tables)
            .field("dtz_tables", &self.dtz_tables)
            .field("max_pieces", &self.max_pieces())
            .finish()
    }
}

impl Tablebases {
    /// The tables in `paths`: folders separated by `:` (as UCI's
    /// `SyzygyPath` takes them; `;` on Windows). Every folder must exist;
    /// together they must hold at least one table.
    ///
    /// # Errors
    ///
    /// A folder that cannot be listed, a table file of a wrong size, or no
    /// table at all.
    pub fn open(paths: &str) -> Result<Tablebases, TablebaseError> {
        let separator = if cfg!(windows) { ';' } else { ':' };
        let folders: Vec<PathBuf> =
            paths.split(separator).filter(|p| !p.trim().is_empty()).map(PathBuf::from).collect();
        // Safety: the tables are read-only data kibitz never writes; the
        // contract of a memory map (no one truncates the files while they
        // are mapped) is the user's, as for every memory-mapped input.
        let mut tables = unsafe { Tablebase::with_mmap_filesystem() };
        let (mut wdl_tables, mut dtz_tables) = (0, 0);
        let mut warnings = Vec::new();
        let (mut wdl_names, mut dtz_names) = (BTreeSet::new(), BTreeSet::new());
        let mut wdl_materials = HashSet::default();
        for folder in &folders {
            let entries = std::fs::read_dir(folder)
                .map_err(|source| TablebaseError::Folder { path: folder.clone(), source })?;
            let mut paths: Vec<PathBuf> =
                entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
            paths.sort();
            for path in paths {
                let wdl = match path.extension().and_then(|e| e.to_str()) {
                    Some("rtbw") => true,
                    Some("rtbz") => false,
                    _ => continue,
                };
                // A file of another variant (or no table at all) under a
                // table's name is left out, and said, before it is used.
                let mut magic = [0u8; 4];
                let read = std::fs::File::open(&path).and_then(|mut f| f.read_exact(&mut magic));
                if let Err(e) = read {
                    warnings.push(format!("{}: {e}: skipped", path.display()));
                    continue;
                }
                if magic != if wdl { WDL_MAGIC } else { DTZ_MAGIC } {
                    warnings.push(format!(
                        "{}: not a Syzygy {} table of standard chess (its first bytes are {}): \
                         skipped",
                        path.display(),
                        if wdl { "WDL" } else { "DTZ" },
                        magic.map(|b| format!("{b:02x}")).join(" ")
                    ));
                    continue;
                }
                match tables.add_file(&path) {
                    Ok(()) => {
                        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
                        if wdl {
                            wdl_tables += 1;
                            if let Some(keys) = stem.as_deref().and_then(table_keys) {
                                wdl_materials.extend(keys);
                            }
                            wdl_names.extend(stem);
                        } else {
                            dtz_tables += 1;
                            dtz_names.extend(stem);
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::InvalidInput => {}
                    Err(e) => warnings.push(format!(
                        "{}: {e} (a table's size is 16 more than a multiple of 64: a truncated \
                         or damaged file): skipped",
                        path.display()
                    )),
                }
            }
        }
        if wdl_tables + dtz_tables == 0 {
            let names: Vec<String> = folders.iter().map(|f| f.display().to_string()).collect();
            let mut text =
                if names.is_empty() { "(no folder given)".to_string() } else { names.join(", ") };
            if !warnings.is_empty() {
                text = format!("{text} ({})", warnings.join("; "));
            }
            return Err(TablebaseError::Empty(text));
        }
        let missing: Vec<&str> = wdl_names.difference(&dtz_names).map(String::as_str).collect();
        if !missing.is_empty() {
            warnings.push(format!(
                "no DTZ table beside the WDL table of {}: those positions are searched, not \
                 labelled by the tables (the search still probes their WDL)",
                missing.join(", ")
            ));
        }
        Ok(Tablebases { tables, folders, wdl_tables, dtz_tables, warnings, wdl_materials })
    }

    /// The tables of `--syzygy` when given, else of the environment
    /// variable `KIBITZ_SYZYGY` when set and not empty; `None` when neither.
    ///
    /// # Errors
    ///
    /// As [`Tablebases::open`].
    pub fn from_option(option: Option<&str>) -> Result<Option<Arc<Tablebases>>, TablebaseError> {
        let env = std::env::var("KIBITZ_SYZYGY").ok();
        match option.or(env.as_deref()).filter(|p| !p.trim().is_empty()) {
            Some(paths) => Ok(Some(Arc::new(Tablebases::open(paths)?))),
            None => Ok(None),
        }
    }

    /// The most pieces (kings included) a table covers.
    pub fn max_pieces(&self) -> u32 {
        self.tables.max_pieces() as u32
    }

    /// WDL tables found.
    pub fn wdl_tables(&self) -> usize {
        self.wdl_tables
    }

    /// DTZ tables found.
    pub fn dtz_tables(&self) -> usize {
        self.dtz_tables
    }

    /// What was left out or is missing, a line each (files skipped, DTZ
    /// tables missing).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The folders read.
    pub fn folders(&self) -> &[PathBuf] {
        &self.folders
    }

    /// One line for a run's summary: `35 WDL and 35 DTZ tables, up to 4
    /// pieces, in /tb`.
    pub fn describe(&self) -> String {
        let folders: Vec<String> = self.folders.iter().map(|f| f.display().to_string()).collect();
        format!(
            "{} WDL and {} DTZ tables, up to {} pieces, in {}",
            self.wdl_tables,
            self.dtz_tables,
            self.max_pieces(),
            folders.join(":")
        )
    }

    /// Whether `pos` may be in the tables: no more pieces than the largest
    /// table and no castling right (the tables hold none). Its material's
    /// table may still be missing.
    #[inline]
    pub fn may_cover(&self, pos: &Position) -> bool {
        pos.occupied().count() <= self.max_pieces() && pos.castling_rights() == 0
    }

    /// Whether a WDL table of `pos`'s material (or only kings) is in the
    /// set: the search's gate before a probe, read from the material key
    /// `do_move` keeps (a partial set has no table for most materials of
    /// its largest size, and converting the board for a probe bound to fail
    /// cost the search 15% of its speed).
    #[inline]
    pub fn has_wdl_table(&self, pos: &Position) -> bool {
        pos.occupied().count() == 2 || self.wdl_materials.contains(&pos.material_key())
    }

    /// The result of `pos` as if its 50-move counter were zero (WDL tables
    /// alone, the search's probe: it probes only just after a capture or
    /// pawn move). `None` when no table covers it.
    pub fn probe_wdl_after_zeroing(&self, pos: &Position) -> Option<TbWdl> {
        if !self.may_cover(pos) {
            return None;
        }
        let board = to_shakmaty(pos)?;
        checked(self.tables.probe_wdl_after_zeroing(&board)).map(TbWdl::from_syzygy)
    }

    /// The result of `pos` counting its 50-move counter (WDL and DTZ
    /// tables). `None` when no table covers it, or when DTZ's rounding
    /// leaves the result open (a win or a draw by a ply, at the edge of
    /// the 50-move rule).
    pub fn probe_wdl(&self, pos: &Position) -> Option<TbWdl> {
        if !self.may_cover(pos) {
            return None;
        }
        let board = to_shakmaty(pos)?;
        self.wdl50(&board)
    }

    /// The result of `board` by its 50-move counter, when DTZ's rounding
    /// leaves it decided.
    fn wdl50(&self, board: &Chess) -> Option<TbWdl> {
        checked(self.tables.probe_wdl(board))?.unambiguous().map(TbWdl::from_syzygy)
    }

    /// The DTZ of `pos` (plies to the next capture or pawn move in the
    /// tables' best line; negative when losing; may be one ply off, as the
    /// tables round some). `None` when no table covers it.
    pub fn probe_dtz(&self, pos: &Position) -> Option<i32> {
        if !self.may_cover(pos) {
            return None;
        }
        let board = to_shakmaty(pos)?;
        checked(self.tables.probe_dtz(&board)).map(|d| d.ignore_rounding().0)
    }

    /// The tables' answer for `pos`: its result (50-move rule counted),
    /// DTZ and best move. `None` when no table covers it or the result is
    /// left open by DTZ's rounding.
    pub fn answer(&self, pos: &Position) -> Option<TbAnswer> {
        if !self.may_cover(pos) {
            return None;
        }
        let board = to_shakmaty(pos)?;
        let wdl = self.wdl50(&board)?;
        let dtz = checked(self.tables.probe_dtz(&board))?.ignore_rounding().0;
        let best = match checked(self.tables.best_move(&board))? {
            Some((m, _)) => Some(from_shakmaty(pos, m)?),
            None => None,
        };
        Some(TbAnswer { wdl, dtz, best })
    }

    /// The root's moves ranked as Stockfish ranks them with its DTZ
    /// ranking on: by what each keeps of the result under the 50-move
    /// rule, a win's moves by how soon they zero the counter (a capture, a
    /// pawn move or mate). Only the moves of the best rank are searched, so
    /// a search of any depth makes progress on every move of a won ending:
    /// the distance to zeroing falls with each of them, no position
    /// repeats, and the counter never reaches 100. (Stockfish ranks wins
    /// alike and lets the search choose among them until a position has
    /// repeated; a shallow search then goes round first.) A move into a
    /// threefold repetition or the 50-move rule is a draw. Returns the
    /// moves of the best rank and the root's result, or `None` when some
    /// move's position is not in the tables.
    pub fn rank_root_moves(&self, pos: &mut Position) -> Option<(Vec<Move>, TbWdl)> {
        if !self.may_cover(pos) {
            return None;
        }
        let board = to_shakmaty(pos)?;
        let rule50 = board.halfmoves() as i32;
        let mut ranked: Vec<(Move, i32)> = Vec::new();
        for m in board.legal_moves() {
            let mv = from_shakmaty(pos, m)?;
            let mut after = board.clone();
            after.play_unchecked(m);
            // The DTZ of the move from the root's side: plies to zero the
            // counter (positive: winning).
            let dtz = if after.is_checkmate() {
                1
            } else if m.is_zeroing() {
                // After a capture or a pawn move the WDL alone tells (the
                // opponent's, to move there).
                let wdl = checked(self.tables.probe_wdl_after_zeroing(&after))?;
                dtz_before_zeroing(-(wdl as i32))
            } else if drawn_by_rule(pos, mv) {
                0
            } else {
                let d: MaybeRounded<Dtz> = checked(self.tables.probe_dtz(&after))?;
                let d = -d.ignore_rounding().0;
                match d.signum() {
                    1 => d + 1,
                    -1 => d - 1,
                    _ => 0,
                }
            };
            let rank = root_rank(dtz, rule50);
            ranked.push((mv, rank));
        }
        let best = ranked.iter().map(|&(_, r)| r).max()?;
        let wdl = if best > MAX_DTZ / 2 {
            TbWdl::Win
        } else if best > 0 {
            TbWdl::CursedWin
        } else if best == 0 {
            TbWdl::Draw
        } else if best < -MAX_DTZ / 2 {
            TbWdl::Loss
        } else {
            TbWdl::BlessedLoss
        };
        let moves = ranked.into_iter().filter(|&(_, r)| r == best).map(|(m, _)| m).collect();
        Some((moves, wdl))
    }
}

/// Whether `mv` (neither a capture nor a pawn move) draws by the rules: a
/// threefold repetition of the game's history, or the 50-move rule.
fn drawn_by_rule(pos: &mut Position, mv: Move) -> bool {
    pos.do_move(mv);
    let drawn = pos.is_repetition(1) || pos.is_fifty_move_draw();
    pos.undo_move(mv);
    drawn
}

/// The top of [`root_rank`]'s scale (Stockfish's `MAX_DTZ`).
const MAX_DTZ: i32 = 1 << 18;

/// A root move's rank from its DTZ (from the mover's side: positive wins,
/// negative loses, 0 draws) and the root's 50-move counter: a win within
/// the rule ranks highest, sooner zeroing first; then cursed wins by how
/// close they come; draws; blessed losses; losses, the longest resistance
/// first.
fn root_rank(dtz: i32, rule50: i32) -> i32 {
    if dtz > 0 {
        if dtz + rule50 <= 99 { MAX_DTZ - dtz } else { MAX_DTZ / 2 - (dtz + rule50) }
    } else if dtz < 0 {
        if -dtz * 2 + rule50 < 100 { -MAX_DTZ - dtz } else { -MAX_DTZ / 2 + (-dtz + rule50) }
    } else {
        0
    }
}

/// The DTZ of a zeroing move (a capture or a pawn move) from the side that
/// makes it, given the WDL it leaves that side (-2 to 2), as Stockfish's
/// `dtz_before_zeroing` has it: a win or a loss one ply away, a cursed win
/// or a blessed loss beyond the 50-move rule's reach (101), so that it
/// ranks below every win and above every loss.
fn dtz_before_zeroing(wdl: i32) -> i32 {
    match wdl {
        2 => 1,
        1 => 101,
        -1 => -101,
        -2 => -1,
        _ => 0,
    }
}

/// `pos` as shakmaty's board, for a probe. `None` for a position shakmaty
/// refuses (one kibitz's own checks let through, such as an impossible
/// check): it is then not probed.
// The large error is shakmaty's own, dropped here at once.
#[allow(clippy::result_large_err)]
fn to_shakmaty(pos: &Position) -> Option<Chess> {
    let mut setup = Setup::empty();
    for sq in pos.occupied() {
        let piece = pos.piece_on(sq)?;
        let color = shakmaty::Color::from_white(piece.color() == Color::White);
        let role = shakmaty::Role::ALL[piece.role() as usize];
        setup.board.set_piece_at(shakmaty::Square::new(sq as u32), shakmaty::Piece { color, role });
    }
    setup.turn = shakmaty::Color::from_white(pos.side_to_move() == Color::White);
    setup.ep_square = pos.ep_square().map(|sq| shakmaty::Square::new(sq as u32));
    setup.halfmoves = pos.rule50();
    setup.fullmoves = std::num::NonZeroU32::new(pos.fullmove_number().max(1))?;
    Chess::from_setup(setup, CastlingMode::Standard)
        .or_else(|e| e.ignore_invalid_ep_square())
        .or_else(|e| e.ignore_impossible_check())
        .ok()
}

/// shakmaty's move as kibitz's, checked legal in `pos`.
fn from_shakmaty(pos: &Position, m: shakmaty::Move) -> Option<Move> {
    let from = Square::new(m.from()? as u32);
    let to = Square::new(m.to() as u32);
    let mv = match m {
        shakmaty::Move::EnPassant { .. } => Move::en_passant(from, to),
        shakmaty::Move::Normal { promotion: Some(role), .. } => {
            // shakmaty numbers roles from 1, pawn first; kibitz from 0.
            Move::promotion(from, to, Role::new(role as usize - 1))
        }
        shakmaty::Move::Normal { .. } => Move::normal(from, to),
        _ => return None,
    };
    pos.is_legal(mv).then_some(mv)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A capture or pawn move into a cursed win ranks below every win
    /// within the 50-move rule and above a draw; one into a blessed loss
    /// (the move that saves a lost position) above every loss.
    #[test]
    fn zeroing_moves_into_cursed_results_rank_between() {
        let cursed = root_rank(dtz_before_zeroing(1), 0);
        assert!(cursed < root_rank(99, 0) && cursed > 0);
        assert_eq!(root_rank(dtz_before_zeroing(2), 0), root_rank(1, 0));
        let blessed = root_rank(dtz_before_zeroing(-1), 0);
        assert!(blessed > root_rank(-49, 0) && blessed < 0);
        assert!(blessed > root_rank(dtz_before_zeroing(-2), 0));
        assert_eq!(root_rank(dtz_before_zeroing(0), 0), 0);
    }

    /// Wins within the rule rank by DTZ, the counter counted in; a win the
    /// counter puts out of reach is a cursed one; losses by resistance.
    #[test]
    fn wins_rank_by_how_soon_they_zero_the_counter() {
        assert!(root_rank(3, 0) > root_rank(5, 0));
        assert!(root_rank(5, 90) > MAX_DTZ / 2);
        assert!(root_rank(10, 90) < MAX_DTZ / 2 && root_rank(10, 90) > 0);
        assert!(root_rank(-20, 0) > root_rank(-4, 0));
        assert!(root_rank(-60, 0) > -MAX_DTZ / 2);
    }
}
