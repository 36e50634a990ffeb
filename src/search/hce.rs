//! Static evaluation, built on what `do_move` keeps up to date.
//!
//! * material and piece-square values: the tapered score in `StateInfo`
//!   (never recomputed per node), and the non-pawn material for the phase;
//! * pawn structure (passed, isolated, doubled, backward, connected pawns),
//!   cached in a table keyed by the pawn key;
//! * material configuration (bishop pair, drawish endings and their scale
//!   factor, phase), cached in a table keyed by the material key;
//! * mobility, king safety (attacks on the king zone, pawn shelter, open
//!   files), rooks on open files, threats and hanging pieces, and tempo.
//!
//! Every term is a weight times a count, so the evaluation is linear in its
//! weights ([`WEIGHTS`], tuned by `kibitz tune`, see [`crate::search::texel`]):
//! the same code, run with a [`Trace`], gives the tuner each term's count.
//!
//! ```
//! use kibitz::{EvalTables, Position, evaluate};
//!
//! let mut tables = EvalTables::new();
//! let pos = Position::startpos();
//! let score = evaluate(&pos, &mut tables);
//! assert!(score.abs() < 50, "{score}");
//! ```

use crate::{
    chess::{
        attacks::{bishop_attacks, king_attacks, knight_attacks, rook_attacks},
        bitboard::Bitboard,
        position::Position,
        psqt::{self, Tapered},
        types::{ByColor, Color, File, Rank, Role, Square},
    },
    search::weights::WEIGHTS,
};

/// The evaluation terms (besides material and piece-square values, which
/// live in [`psqt`]). Each has a middlegame and an endgame weight.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(usize)]
#[allow(missing_docs)]
pub enum Term {
    PassedRank2,
    PassedRank3,
    PassedRank4,
    PassedRank5,
    PassedRank6,
    PassedRank7,
    Isolated,
    Doubled,
    Backward,
    ConnectedRank2,
    ConnectedRank3,
    ConnectedRank4,
    ConnectedRank5,
    ConnectedRank6,
    ConnectedRank7,
    BishopPair,
    KnightMobility,
    BishopMobility,
    RookMobility,
    QueenMobility,
    RookOpenFile,
    RookSemiOpenFile,
    KingAttackKnight,
    KingAttackBishop,
    KingAttackRook,
    KingAttackQueen,
    KingShelter,
    KingOpenFile,
    ThreatByPawn,
    ThreatByMinor,
    Hanging,
    PassedFreePath,
    PassedKingDistance,
    Tempo,
}

/// Number of [`Term`]s.
pub const NUM_TERMS: usize = Term::Tempo as usize + 1;

/// Names of the terms, for the tuner's output.
pub const TERM_NAMES: [&str; NUM_TERMS] = [
    "passed pawn, rank 2",
    "passed pawn, rank 3",
    "passed pawn, rank 4",
    "passed pawn, rank 5",
    "passed pawn, rank 6",
    "passed pawn, rank 7",
    "isolated pawn",
    "doubled pawn",
    "backward pawn",
    "connected pawn, rank 2",
    "connected pawn, rank 3",
    "connected pawn, rank 4",
    "connected pawn, rank 5",
    "connected pawn, rank 6",
    "connected pawn, rank 7",
    "bishop pair",
    "knight mobility (per square)",
    "bishop mobility (per square)",
    "rook mobility (per square)",
    "queen mobility (per square)",
    "rook on open file",
    "rook on semi-open file",
    "king zone attacked by a knight (per square)",
    "king zone attacked by a bishop (per square)",
    "king zone attacked by a rook (per square)",
    "king zone attacked by a queen (per square)",
    "pawn in the king's shelter",
    "king on or next to an open file (per file)",
    "piece attacked by a pawn",
    "rook or queen attacked by a minor piece",
    "piece attacked and undefended",
    "passed pawn with a free path",
    "passed pawn: enemy king's distance minus ours",
    "side to move",
];

/// Receives each term's count (White's minus Black's) during evaluation.
pub trait Trace {
    /// Adds `count` to term `term`.
    fn add(&mut self, term: Term, count: i32);
}

/// The evaluation itself traces nothing.
pub struct NoTrace;

impl Trace for NoTrace {
    #[inline(always)]
    fn add(&mut self, _term: Term, _count: i32) {}
}

/// Game phase in [0, 256]: 256 with all pieces, 0 with none.
pub const PHASE_MAX: i32 = 256;

/// Non-pawn material (both sides, middlegame values) at or above which the
/// game counts as a middlegame, and at or below which as an endgame.
const MIDGAME_LIMIT: i32 = 2 * (2 * 325 + 2 * 340 + 2 * 470 + 1000) - 400;
const ENDGAME_LIMIT: i32 = 2 * 470 + 2 * 340 - 200;

/// The phase of a position from its non-pawn material.
#[inline]
pub fn phase(pos: &Position) -> i32 {
    let npm = pos.non_pawn_material(Color::White) + pos.non_pawn_material(Color::Black);
    let npm = npm.clamp(ENDGAME_LIMIT, MIDGAME_LIMIT);
    (npm - ENDGAME_LIMIT) * PHASE_MAX / (MIDGAME_LIMIT - ENDGAME_LIMIT)
}

/// A cached pawn-structure evaluation.
#[derive(Clone, Copy, Default)]
struct PawnEntry {
    key: u64,
    score: Tapered,
    passed: ByColor<Bitboard>,
    attacks: ByColor<Bitboard>,
}

/// A cached material evaluation: what follows from the piece counts alone
/// (the material key says nothing of where the pieces stand).
#[derive(Clone, Copy, Default)]
struct MaterialEntry {
    key: u64,
    score: Tapered,
    /// Endgame scale factor (of 64) when White / Black is the stronger side.
    scale: ByColor<u8>,
    /// One bishop each and no other pieces: the ending is drawish when the
    /// bishops stand on squares of opposite colours, which is looked up
    /// on the board at each evaluation.
    bishops_only: bool,
}

/// The per-searcher caches the evaluation uses.
pub struct EvalTables {
    pawns: Vec<PawnEntry>,
    material: Vec<MaterialEntry>,
}

const PAWN_ENTRIES: usize = 1 << 14;
const MATERIAL_ENTRIES: usize = 1 << 12;

impl Default for EvalTables {
    fn default() -> EvalTables {
        EvalTables::new()
    }
}

impl EvalTables {
    /// Empty tables (about 1 MiB).
    pub fn new() -> EvalTables {
        EvalTables {
            pawns: vec![PawnEntry::default(); PAWN_ENTRIES],
            material: vec![MaterialEntry::default(); MATERIAL_ENTRIES],
        }
    }

    /// Forgets everything (so that evaluation order cannot matter).
    pub fn clear(&mut self) {
        self.pawns.fill(PawnEntry::default());
        self.material.fill(MaterialEntry::default());
    }
}

#[inline(always)]
fn weight(term: Term) -> Tapered {
    WEIGHTS[term as usize]
}

#[inline(always)]
fn add<T: Trace>(trace: &mut T, score: &mut Tapered, term: Term, count: i32) {
    trace.add(term, count);
    let w = weight(term);
    score.mg += w.mg * count;
    score.eg += w.eg * count;
}

/// Signed count: `+n` for White, `-n` for Black.
#[inline(always)]
fn signed(color: Color, n: i32) -> i32 {
    if color == Color::White { n } else { -n }
}

/// Squares strictly ahead of rank `rank` from `color`'s side.
fn ahead_of(color: Color, rank: Rank) -> Bitboard {
    let r = rank.to_u32();
    Bitboard(match color {
        Color::White => {
            if r >= 7 {
                0
            } else {
                !0u64 << (8 * (r + 1))
            }
        }
        Color::Black => (1u64 << (8 * r)) - 1,
    })
}

/// Squares in front of a pawn of `color` on `sq`, on its file.
fn front_span(color: Color, sq: Square) -> Bitboard {
    Bitboard::from_file(sq.file()) & ahead_of(color, sq.rank())
}

/// The files next to `file`.
fn adjacent_files(file: File) -> Bitboard {
    let f = Bitboard::from_file(file);
    Bitboard(((f.0 << 1) & !Bitboard::FILE_A.0) | ((f.0 >> 1) & !Bitboard::FILE_H.0))
}

/// Pawn structure of both sides: score and passed pawns.
fn evaluate_pawns<T: Trace>(pos: &Position, trace: &mut T) -> (Tapered, ByColor<Bitboard>) {
    let mut score = Tapered::ZERO;
    let mut passed = ByColor::<Bitboard>::default();
    for color in Color::ALL {
        let ours = pos.pieces(color, Role::Pawn);
        let theirs = pos.pieces(!color, Role::Pawn);
        let our_attacks = ours.pawn_attacks(color);
        for sq in ours {
            let rank = sq.rank().relative(color).to_usize();
            let front = front_span(color, sq);
            let adjacent = adjacent_files(sq.file());
            let span = front
                | Bitboard(front.0 << 1 & !Bitboard::FILE_A.0)
                | Bitboard(front.0 >> 1 & !Bitboard::FILE_H.0);
            if (theirs & span).is_empty() && (ours & front).is_empty() {
                passed[color] |= sq;
                if (1..=6).contains(&rank) {
                    let term = [
                        Term::PassedRank2,
                        Term::PassedRank3,
                        Term::PassedRank4,
                        Term::PassedRank5,
                        Term::PassedRank6,
                        Term::PassedRank7,
                    ][rank - 1];
                    add(trace, &mut score, term, signed(color, 1));
                }
            }
            if (ours & adjacent).is_empty() {
                add(trace, &mut score, Term::Isolated, signed(color, 1));
            }
            if (ours & front).any() {
                add(trace, &mut score, Term::Doubled, signed(color, 1));
            }
            let phalanx = (ours & adjacent & Bitboard::from_rank(sq.rank())).any();
            let supported = our_attacks.contains(sq);
            if (phalanx || supported) && (1..=6).contains(&rank) {
                let term = [
                    Term::ConnectedRank2,
                    Term::ConnectedRank3,
                    Term::ConnectedRank4,
                    Term::ConnectedRank5,
                    Term::ConnectedRank6,
                    Term::ConnectedRank7,
                ][rank - 1];
                add(trace, &mut score, term, signed(color, 1));
            } else if (ours & adjacent).any() {
                // Backward: no friendly pawn beside or behind on the adjacent
                // files, and the stop square is attacked by an enemy pawn.
                let behind_or_level = adjacent & !ahead_of(color, sq.rank());
                if let Some(stop) = sq.offset(if color == Color::White { 8 } else { -8 })
                    && (ours & behind_or_level).is_empty()
                    && (theirs.pawn_attacks(!color)).contains(stop)
                {
                    add(trace, &mut score, Term::Backward, signed(color, 1));
                }
            }
        }
    }
    (score, passed)
}

/// Material configuration: bishop pair and the endgame scale factors, from
/// the piece counts alone (so that the material table can cache them), and
/// whether the pieces are one bishop each (see [`scale_factor`]).
fn evaluate_material<T: Trace>(pos: &Position, trace: &mut T) -> (Tapered, ByColor<u8>, bool) {
    let mut score = Tapered::ZERO;
    for color in Color::ALL {
        if pos.pieces(color, Role::Bishop).count() >= 2 {
            add(trace, &mut score, Term::BishopPair, signed(color, 1));
        }
    }
    let bishop = psqt::mg_value(Role::Bishop);
    let rook = psqt::mg_value(Role::Rook);
    let scale = ByColor::new_with(|strong| {
        let weak = !strong;
        let pawns = pos.pieces(strong, Role::Pawn).count();
        let npm_strong = pos.non_pawn_material(strong);
        let npm_weak = pos.non_pawn_material(weak);
        if pawns == 0 && npm_strong - npm_weak <= bishop {
            // No pawns and at most a minor piece ahead: hard to win.
            if npm_strong < rook {
                0
            } else if npm_weak <= bishop {
                16
            } else {
                8
            }
        } else {
            64
        }
    });
    let bishops_only = Color::ALL
        .into_iter()
        .all(|c| pos.non_pawn_material(c) == bishop && pos.pieces(c, Role::Bishop).count() == 1);
    (score, scale, bishops_only)
}

/// The endgame scale factor (of 64) when `strong` is ahead: the material
/// table's, halved for bishops of opposite colours and no other pieces.
fn scale_factor(pos: &Position, entry: &MaterialEntry, strong: Color) -> i32 {
    let scale = i32::from(entry.scale[strong]);
    if scale == 64
        && entry.bishops_only
        && (pos.pieces_by_role(Role::Bishop) & Bitboard::DARK_SQUARES).count() == 1
    {
        32
    } else {
        scale
    }
}

/// The endgame scale factor (of 64) when `strong` is ahead.
pub fn endgame_scale(pos: &Position, strong: Color) -> i32 {
    let (score, scale, bishops_only) = evaluate_material(pos, &mut NoTrace);
    scale_factor(pos, &MaterialEntry { key: 0, score, scale, bishops_only }, strong)
}

/// Evaluates `pos` from the side to move's point of view, in centipawns.
pub fn evaluate(pos: &Position, tables: &mut EvalTables) -> i32 {
    evaluate_traced(pos, tables, &mut NoTrace)
}

/// [`evaluate`], reporting each term's count to `trace`.
pub fn evaluate_traced<T: Trace>(pos: &Position, tables: &mut EvalTables, trace: &mut T) -> i32 {
    let mut score = pos.psq();

    // Pawn structure, cached by pawn key (always recomputed when tracing).
    let pawn_key = pos.pawn_key();
    let pi = (pawn_key as usize) & (PAWN_ENTRIES - 1);
    let entry = &mut tables.pawns[pi];
    if entry.key != pawn_key || std::mem::size_of::<T>() != 0 {
        let (s, passed) = evaluate_pawns(pos, trace);
        *entry = PawnEntry {
            key: pawn_key,
            score: s,
            passed,
            attacks: ByColor::new_with(|c| pos.pieces(c, Role::Pawn).pawn_attacks(c)),
        };
    }
    let pawns = *entry;
    score += pawns.score;

    // Material configuration, cached by material key.
    let material_key = pos.material_key();
    let mi = (material_key as usize) & (MATERIAL_ENTRIES - 1);
    let mentry = &mut tables.material[mi];
    if mentry.key != material_key || std::mem::size_of::<T>() != 0 {
        let (s, scale, bishops_only) = evaluate_material(pos, trace);
        *mentry = MaterialEntry { key: material_key, score: s, scale, bishops_only };
    }
    let material = *mentry;
    score += material.score;

    score += evaluate_pieces(pos, &pawns, trace);

    let stm = pos.side_to_move();
    add(trace, &mut score, Term::Tempo, signed(stm, 1));

    let phase = phase(pos);
    let strong = if score.eg >= 0 { Color::White } else { Color::Black };
    let scale = scale_factor(pos, &material, strong);
    let eg = score.eg * scale / 64;
    let value = (score.mg * phase + eg * (PHASE_MAX - phase)) / PHASE_MAX;
    if stm == Color::White { value } else { -value }
}

/// Mobility, king safety, rooks on files, threats, passed pawns' paths.
fn evaluate_pieces<T: Trace>(pos: &Position, pawns: &PawnEntry, trace: &mut T) -> Tapered {
    let mut score = Tapered::ZERO;
    let occupied = pos.occupied();
    // Attack maps: all attacks, and attacks by minor pieces, per color.
    let mut attacked = ByColor::<Bitboard>::default();
    let mut by_minor = ByColor::<Bitboard>::default();
    let mut king_attacks_count = ByColor::<[i32; 4]>::default();
    for color in Color::ALL {
        let them = !color;
        let ours = pos.pieces_of(color);
        let their_king = pos.king(them);
        let zone = king_attacks(their_king) | Bitboard::from(their_king);
        let safe = !ours & !pawns.attacks[them];
        let mut all = pawns.attacks[color];
        let mut mobility = [0i32; 4];
        let mut zone_hits = [0i32; 4];
        for (i, role) in
            [Role::Knight, Role::Bishop, Role::Rook, Role::Queen].into_iter().enumerate()
        {
            for sq in pos.pieces(color, role) {
                let a = match role {
                    Role::Knight => knight_attacks(sq),
                    Role::Bishop => bishop_attacks(sq, occupied),
                    Role::Rook => rook_attacks(sq, occupied),
                    _ => bishop_attacks(sq, occupied) | rook_attacks(sq, occupied),
                };
                all |= a;
                if i < 2 {
                    by_minor[color] |= a;
                }
                mobility[i] += (a & safe).count() as i32;
                zone_hits[i] += (a & zone).count() as i32;
                if role == Role::Rook {
                    let file = Bitboard::from_file(sq.file());
                    if (file & pos.pieces_by_role(Role::Pawn)).is_empty() {
                        add(trace, &mut score, Term::RookOpenFile, signed(color, 1));
                    } else if (file & pos.pieces(color, Role::Pawn)).is_empty() {
                        add(trace, &mut score, Term::RookSemiOpenFile, signed(color, 1));
                    }
                }
            }
        }
        let king = king_attacks(pos.king(color));
        all |= king;
        attacked[color] = all;
        king_attacks_count[color] = zone_hits;
        let terms =
            [Term::KnightMobility, Term::BishopMobility, Term::RookMobility, Term::QueenMobility];
        for (term, n) in terms.into_iter().zip(mobility) {
            add(trace, &mut score, term, signed(color, n));
        }
    }
    for color in Color::ALL {
        let them = !color;
        // King safety: enemy attacks on our king zone, shelter, open files.
        let hits = king_attacks_count[them];
        let terms = [
            Term::KingAttackKnight,
            Term::KingAttackBishop,
            Term::KingAttackRook,
            Term::KingAttackQueen,
        ];
        // Attacks by `them` on our king count against us.
        for (term, n) in terms.into_iter().zip(hits) {
            add(trace, &mut score, term, signed(them, n));
        }
        let ksq = pos.king(color);
        let shelter_zone = {
            let files = Bitboard::from_file(ksq.file()) | adjacent_files(ksq.file());
            files
                & ahead_of(color, ksq.rank())
                & (Bitboard::from_rank(Rank::Second.relative(color))
                    | Bitboard::from_rank(Rank::Third.relative(color)))
        };
        add(
            trace,
            &mut score,
            Term::KingShelter,
            signed(color, (pos.pieces(color, Role::Pawn) & shelter_zone).count() as i32),
        );
        let mut open = 0;
        for f in [
            ksq.file().to_u32() as i32 - 1,
            ksq.file().to_u32() as i32,
            ksq.file().to_u32() as i32 + 1,
        ] {
            if (0..8).contains(&f)
                && (Bitboard::from_file(File::new(f as u32)) & pos.pieces(color, Role::Pawn))
                    .is_empty()
            {
                open += 1;
            }
        }
        add(trace, &mut score, Term::KingOpenFile, signed(color, open));

        // Threats against `color`'s pieces.
        let ours = pos.pieces_of(color)
            & !pos.pieces_by_role(Role::Pawn)
            & !pos.pieces_by_role(Role::King);
        let by_pawn = (ours & pawns.attacks[them]).count() as i32;
        add(trace, &mut score, Term::ThreatByPawn, signed(them, by_pawn));
        let majors = pos.pieces(color, Role::Rook) | pos.pieces(color, Role::Queen);
        add(
            trace,
            &mut score,
            Term::ThreatByMinor,
            signed(them, (majors & by_minor[them]).count() as i32),
        );
        let hanging = (ours & attacked[them] & !attacked[color]).count() as i32;
        add(trace, &mut score, Term::Hanging, signed(them, hanging));

        // Passed pawns: a free path, and the kings' race to the stop square.
        for sq in pawns.passed[color] {
            let path = front_span(color, sq);
            if (path & occupied).is_empty() && (path & attacked[them]).is_empty() {
                add(trace, &mut score, Term::PassedFreePath, signed(color, 1));
            }
            if let Some(stop) = sq.offset(if color == Color::White { 8 } else { -8 }) {
                let d =
                    pos.king(them).distance(stop) as i32 - pos.king(color).distance(stop) as i32;
                add(trace, &mut score, Term::PassedKingDistance, signed(color, d));
            }
        }
    }
    score
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The evaluation of a position must not depend on what the caches
    /// saw before it: here two positions with the same material key, one
    /// with bishops on squares of the same colour, one with opposite ones
    /// (a drawish ending scaled down).
    #[test]
    fn evaluation_does_not_depend_on_the_caches() {
        let same = Position::from_fen("5bk1/8/8/8/3P4/8/PPP5/2B1K3 w - - 0 1").unwrap();
        let opposite = Position::from_fen("2b3k1/8/8/8/3P4/8/PPP5/2B1K3 w - - 0 1").unwrap();
        assert_eq!(same.material_key(), opposite.material_key());
        for (first, second) in [(&same, &opposite), (&opposite, &same)] {
            let fresh = evaluate(second, &mut EvalTables::new());
            let mut tables = EvalTables::new();
            evaluate(first, &mut tables);
            assert_eq!(evaluate(second, &mut tables), fresh, "{}", second.fen());
        }
        // And the opposite bishops are what scales the ending down.
        let (a, b) =
            (evaluate(&same, &mut EvalTables::new()), evaluate(&opposite, &mut EvalTables::new()));
        assert!(b < a, "opposite bishops {b}, same-coloured {a}");
    }
}
