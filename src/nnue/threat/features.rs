//! The inputs Stockfish 19's net adds to HalfKAv2_hm: threats and pawn
//! pairs.
//!
//! * **Threats** (Stockfish's `FullThreats`, 59,808 inputs): a piece
//!   attacking another piece. An input is the attacker (piece and
//!   square), the square attacked and the piece on it. Pawns count only
//!   their attacks on knights and rooks (pawns on pawns are the pairs'
//!   business); knights and queens attack pawns, knights, bishops, rooks
//!   and queens; bishops and rooks pawns, knights, bishops and rooks; kings
//!   neither attack nor are attacked here. Two pieces of one kind that
//!   attack each other are one input, not two: the attack whose (oriented)
//!   source square is the lower is left out.
//! * **Pawn pairs** (Stockfish's `PP_3Wide`, 4,560 inputs, numbered after
//!   the threats): every unordered pair of pawns, of either colours, that
//!   stand on the same file or on neighbouring files.
//!
//! Each side sees both sets from its own colour ("own" and "enemy" pieces)
//! and with the board turned so that its own back rank comes first; the
//! board is also mirrored when the side's king stands on files e to h (the
//! opposite of HalfKAv2_hm's mirror, which puts the king on files e to h).
//!
//! A threat is computed once for both sides as a [`Threat`] (pieces and
//! squares as they stand) and turned into each side's input by
//! [`threat_index`]. A move changes only the threats that touch the squares
//! it changed: those of the pieces on them, those aimed at them, and those
//! of sliders that pass through them. [`changed_threats`] finds exactly
//! those on the boards before and after, so the net's accumulators follow a
//! move without enumerating the board.

use crate::chess::{
    attacks,
    bitboard::Bitboard,
    types::{Color, Piece, Role, Square},
};

/// Threat inputs.
pub const THREATS: usize = 59_808;
/// Pawn pair inputs: pairs of 96 pawn places (two colours on ranks 2 to 7).
pub const PAIRS: usize = 96 * 95 / 2;
/// Threat and pawn pair inputs, which share one weight table.
pub const THREAT_INPUTS: usize = THREATS + PAIRS;

/// How many kinds of targets a piece of each role has, counting each
/// colour apart (Stockfish's `numValidTargets`).
const VALID_TARGETS: [u32; 6] = [4, 10, 8, 8, 10, 0];

/// The target's place among its attacker's targets, by attacker role and
/// target role, or -1 (Stockfish's `FullThreats::map`).
const TARGET_SLOT: [[i32; 6]; 6] = [
    [-1, 0, -1, 1, -1, -1],
    [0, 1, 2, 3, 4, -1],
    [0, 1, 2, 3, -1, -1],
    [0, 1, 2, 3, -1, -1],
    [0, 1, 2, 3, 4, -1],
    [-1, -1, -1, -1, -1, -1],
];

/// The roles each role attacks as threats, as a bitmask of role numbers.
const TARGET_ROLES: [u8; 6] = {
    let mut t = [0u8; 6];
    let mut a = 0;
    while a < 6 {
        let mut b = 0;
        while b < 6 {
            if TARGET_SLOT[a][b] >= 0 {
                t[a] |= 1 << b;
            }
            b += 1;
        }
        a += 1;
    }
    t
};

/// Whether a piece of role `attacker` attacking one of role `target` is a
/// threat input.
#[inline]
pub const fn is_target(attacker: Role, target: Role) -> bool {
    TARGET_ROLES[attacker as usize] & (1 << target as usize) != 0
}

// --- Empty-board attacks, computed at compile time ----------------------

const KNIGHT_STEPS: [(i32, i32); 8] =
    [(1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)];
const KING_STEPS: [(i32, i32); 8] =
    [(1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1)];
const DIAGONALS: [(i32, i32); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];
const ORTHOGONALS: [(i32, i32); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];

const fn steps(sq: usize, deltas: &[(i32, i32)], slide: bool) -> u64 {
    let (f0, r0) = ((sq % 8) as i32, (sq / 8) as i32);
    let mut bb = 0u64;
    let mut k = 0;
    while k < deltas.len() {
        let (df, dr) = deltas[k];
        let (mut f, mut r) = (f0 + df, r0 + dr);
        while f >= 0 && f < 8 && r >= 0 && r < 8 {
            bb |= 1 << (r * 8 + f);
            if !slide {
                break;
            }
            f += df;
            r += dr;
        }
        k += 1;
    }
    bb
}

/// What a piece (kibitz's numbering, `2 * role + colour`) on `sq` attacks
/// on an empty board (Stockfish's `PseudoAttacks`).
const fn pseudo_attacks(piece: usize, sq: usize) -> u64 {
    match piece / 2 {
        0 => {
            let (f, r) = ((sq % 8) as i32, (sq / 8) as i32);
            let dr = if piece & 1 == 0 { 1 } else { -1 };
            let mut bb = 0u64;
            if r + dr >= 0 && r + dr < 8 {
                if f > 0 {
                    bb |= 1 << ((r + dr) * 8 + f - 1);
                }
                if f < 7 {
                    bb |= 1 << ((r + dr) * 8 + f + 1);
                }
            }
            bb
        }
        1 => steps(sq, &KNIGHT_STEPS, false),
        2 => steps(sq, &DIAGONALS, true),
        3 => steps(sq, &ORTHOGONALS, true),
        4 => steps(sq, &DIAGONALS, true) | steps(sq, &ORTHOGONALS, true),
        _ => steps(sq, &KING_STEPS, false),
    }
}

/// The index tables, all indexed by oriented pieces and squares.
struct Tables {
    /// Where the inputs of a piece on a square start within that piece's
    /// block (Stockfish's `offsets`).
    square_offset: [[u32; 64]; 12],
    /// The block of an (attacker, target) pair, by whether the source
    /// square is below the target's; [`THREATS`] for a pair that is no
    /// input (Stockfish's `index_lut1`).
    pair_base: [[[u32; 2]; 12]; 12],
    /// The attacked square's rank among the attacker's empty-board
    /// attacks (Stockfish's `index_lut2`).
    target_rank: [[[u8; 64]; 64]; 12],
}

const TABLES: Tables = {
    let mut square_offset = [[0u32; 64]; 12];
    let mut piece_squares = [0u32; 12];
    let mut piece_base = [0u32; 12];
    // Blocks follow Stockfish's piece order: White's pawn to king, then
    // Black's.
    let mut base = 0u32;
    let mut color = 0;
    while color < 2 {
        let mut role = 0;
        while role < 6 {
            let piece = 2 * role + color;
            let mut count = 0u32;
            let mut sq = 0;
            while sq < 64 {
                square_offset[piece][sq] = count;
                if role != 0 || (sq >= 8 && sq < 56) {
                    count += pseudo_attacks(piece, sq).count_ones();
                }
                sq += 1;
            }
            piece_squares[piece] = count;
            piece_base[piece] = base;
            base += VALID_TARGETS[role] * count;
            role += 1;
        }
        color += 1;
    }
    assert!(base as usize == THREATS);

    let mut pair_base = [[[0u32; 2]; 12]; 12];
    let mut a = 0;
    while a < 12 {
        let mut t = 0;
        while t < 12 {
            let slot = TARGET_SLOT[a / 2][t / 2];
            if slot < 0 {
                pair_base[a][t] = [THREATS as u32; 2];
            } else {
                let block = (t % 2) as u32 * (VALID_TARGETS[a / 2] / 2) + slot as u32;
                let index = piece_base[a] + block * piece_squares[a];
                // Two pieces of one kind attack each other: only the
                // attack from the higher square counts.
                let same_kind = a / 2 == t / 2;
                pair_base[a][t] = [index, if same_kind { THREATS as u32 } else { index }];
            }
            t += 1;
        }
        a += 1;
    }

    let mut target_rank = [[[0u8; 64]; 64]; 12];
    let mut p = 0;
    while p < 12 {
        let mut from = 0;
        while from < 64 {
            let bb = pseudo_attacks(p, from);
            let mut to = 0;
            while to < 64 {
                target_rank[p][from][to] = (bb & ((1u64 << to) - 1)).count_ones() as u8;
                to += 1;
            }
            from += 1;
        }
        p += 1;
    }
    Tables { square_offset, pair_base, target_rank }
};

static TABLES_STATIC: Tables = TABLES;

/// What `perspective` XORs square numbers with when its king stands on
/// `king`: the mirror (king on files e to h) and the flip (Black).
#[inline]
pub fn orientation(perspective: Color, king: Square) -> usize {
    let mirror = if king.to_usize() % 8 >= 4 { 7 } else { 0 };
    mirror ^ (56 * perspective.to_usize())
}

/// A piece attacking another: perspective-free, packed so that threats
/// sort by attacker square first.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Threat(u32);

impl Threat {
    /// `attacker` on `from` attacks `target` on `to`.
    #[inline]
    pub fn new(attacker: Piece, from: Square, target: Piece, to: Square) -> Threat {
        Threat(
            (from.to_u32() << 16)
                | (to.to_u32() << 8)
                | ((attacker.to_usize() as u32) << 4)
                | target.to_usize() as u32,
        )
    }

    /// The attacker.
    #[inline]
    pub fn attacker(self) -> usize {
        ((self.0 >> 4) & 15) as usize
    }

    /// The piece attacked.
    #[inline]
    pub fn target(self) -> usize {
        (self.0 & 15) as usize
    }

    /// The attacker's square.
    #[inline]
    pub fn from(self) -> usize {
        (self.0 >> 16) as usize
    }

    /// The attacked square.
    #[inline]
    pub fn to(self) -> usize {
        ((self.0 >> 8) & 63) as usize
    }
}

/// The input `threat` is for the side whose pieces are `perspective`'s and
/// whose board is oriented by `orient` ([`orientation`]), or `None` for a
/// threat that is no input from that side (one of two pieces of a kind
/// attacking each other).
#[inline]
pub fn threat_index(threat: Threat, perspective: Color, orient: usize) -> Option<usize> {
    let t = &TABLES_STATIC;
    let flip = perspective.to_usize();
    let (a, target) = (threat.attacker() ^ flip, threat.target() ^ flip);
    let (from, to) = (threat.from() ^ orient, threat.to() ^ orient);
    let index = t.pair_base[a][target][usize::from(from < to)] as usize
        + t.square_offset[a][from] as usize
        + usize::from(t.target_rank[a][from][to]);
    (index < THREATS).then_some(index)
}

/// The input of the pawn pair (`a` of colour `ca`, `b` of colour `cb`) for
/// `perspective`, oriented by `orient`.
#[inline]
pub fn pair_index(
    a: Square,
    ca: Color,
    b: Square,
    cb: Color,
    perspective: Color,
    orient: usize,
) -> usize {
    let id = |sq: Square, c: Color| {
        48 * (c.to_usize() ^ perspective.to_usize()) + (sq.to_usize() ^ orient) - 8
    };
    let (x, y) = (id(a, ca), id(b, cb));
    let (hi, lo) = if x > y { (x, y) } else { (y, x) };
    THREATS + hi * (hi - 1) / 2 + lo
}

/// The squares a pawn on `sq` pairs with: its own file and the files beside
/// it, ranks 2 to 7, itself left out.
#[inline]
pub fn pair_band(sq: Square) -> Bitboard {
    const BANDS: [u64; 64] = {
        let mut t = [0u64; 64];
        let mut sq = 0;
        while sq < 64 {
            let file = 0x0101_0101_0101_0101u64 << (sq % 8);
            let mut files = file;
            if sq % 8 > 0 {
                files |= file >> 1;
            }
            if sq % 8 < 7 {
                files |= file << 1;
            }
            t[sq] = files & 0x00ff_ffff_ffff_ff00 & !(1u64 << sq);
            sq += 1;
        }
        t
    };
    Bitboard(BANDS[sq.to_usize()])
}

/// A board as the threat inputs see it: what stands on each square, and
/// the squares of each piece.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Board {
    /// The piece on each square.
    pub squares: [Option<Piece>; 64],
    /// The squares of each piece (kibitz's numbering).
    pub by_piece: [Bitboard; 12],
    /// Every occupied square.
    pub occupied: Bitboard,
}

impl Board {
    /// The board of `squares`.
    pub fn new(squares: &[Option<Piece>; 64]) -> Board {
        let mut b =
            Board { squares: *squares, by_piece: [Bitboard::EMPTY; 12], occupied: Bitboard::EMPTY };
        for (i, pc) in squares.iter().enumerate() {
            if let Some(pc) = pc {
                let sq = Square::new(i as u32);
                b.by_piece[pc.to_usize()] |= Bitboard::from_square(sq);
                b.occupied |= Bitboard::from_square(sq);
            }
        }
        b
    }

    #[inline]
    fn role(&self, role: Role) -> Bitboard {
        self.by_piece[2 * role as usize] | self.by_piece[2 * role as usize + 1]
    }

    #[inline]
    fn remove(&mut self, sq: Square) {
        if let Some(pc) = self.squares[sq.to_usize()].take() {
            self.by_piece[pc.to_usize()] ^= Bitboard::from_square(sq);
            self.occupied ^= Bitboard::from_square(sq);
        }
    }

    #[inline]
    fn put(&mut self, sq: Square, pc: Piece) {
        self.remove(sq);
        self.squares[sq.to_usize()] = Some(pc);
        self.by_piece[pc.to_usize()] |= Bitboard::from_square(sq);
        self.occupied |= Bitboard::from_square(sq);
    }

    /// Takes back a move that changed `dirty` (the board before it).
    pub fn undo(&mut self, dirty: &[crate::chess::state::DirtyEntry]) {
        for e in dirty {
            if let Some(to) = e.to {
                self.remove(to);
            }
        }
        for e in dirty {
            if let Some(from) = e.from {
                self.put(from, e.piece);
            }
        }
    }

    /// The pawns of each colour.
    #[inline]
    pub fn pawns(&self) -> [Bitboard; 2] {
        [self.by_piece[Piece::WhitePawn.to_usize()], self.by_piece[Piece::BlackPawn.to_usize()]]
    }

    /// Every threat on the board, in no particular order (Stockfish's
    /// `FullThreats::append_active_indices`, before orientation).
    pub fn threats(&self, out: &mut ThreatList) {
        let occ = self.occupied;
        for (pc, &bb) in self.by_piece.iter().enumerate() {
            let piece = PIECES[pc];
            let role = piece.role();
            if role == Role::King {
                continue;
            }
            let targets = self.targets_of(role);
            for from in bb {
                let hits = attacks::piece_attacks(piece, from, occ) & targets;
                for to in hits {
                    out.push(Threat::new(piece, from, self.piece(to), to));
                }
            }
        }
    }

    /// The squares holding pieces a piece of `role` has threats against.
    #[inline]
    fn targets_of(&self, role: Role) -> Bitboard {
        let mask = TARGET_ROLES[role as usize];
        let mut bb = Bitboard::EMPTY;
        for r in 0..5 {
            if mask & (1 << r) != 0 {
                bb |= self.by_piece[2 * r] | self.by_piece[2 * r + 1];
            }
        }
        bb
    }

    #[inline]
    fn piece(&self, sq: Square) -> Piece {
        // Callers pass occupied squares only.
        self.squares[sq.to_usize()].unwrap_or(Piece::WhitePawn)
    }

    /// The threats that involve the squares `changed`: of the pieces on
    /// them, against the pieces on them, and of sliders through them when
    /// they are empty. Each threat once.
    pub fn threats_touching(&self, changed: Bitboard, out: &mut ThreatList) {
        let occ = self.occupied;
        let sliders_diag = self.role(Role::Bishop) | self.role(Role::Queen);
        let sliders_orth = self.role(Role::Rook) | self.role(Role::Queen);
        for sq in changed {
            match self.squares[sq.to_usize()] {
                Some(piece) => {
                    let role = piece.role();
                    // The piece's own threats.
                    if role != Role::King {
                        let hits = attacks::piece_attacks(piece, sq, occ) & self.targets_of(role);
                        for to in hits {
                            out.push(Threat::new(piece, sq, self.piece(to), to));
                        }
                    }
                    // Threats against it, from pieces off the changed
                    // squares (those on them were counted above).
                    if role == Role::King {
                        continue;
                    }
                    let attackers = (attacks::pawn_attacks(Color::Black, sq)
                        & self.by_piece[Piece::WhitePawn.to_usize()])
                        | (attacks::pawn_attacks(Color::White, sq)
                            & self.by_piece[Piece::BlackPawn.to_usize()])
                        | (attacks::knight_attacks(sq) & self.role(Role::Knight))
                        | (attacks::bishop_attacks(sq, occ) & sliders_diag)
                        | (attacks::rook_attacks(sq, occ) & sliders_orth);
                    for from in attackers & !changed {
                        let attacker = self.piece(from);
                        if is_target(attacker.role(), role) {
                            out.push(Threat::new(attacker, from, piece, sq));
                        }
                    }
                }
                None => {
                    // Sliders whose line passes through: the threat on the
                    // first piece beyond, counted from the changed square
                    // nearest the slider, and left to the loop above when
                    // that piece stands on a changed square.
                    let diag = attacks::bishop_attacks(sq, occ);
                    let orth = attacks::rook_attacks(sq, occ);
                    for from in ((diag & sliders_diag) | (orth & sliders_orth)) & !changed {
                        if (attacks::between(from, sq) & changed).any() {
                            continue;
                        }
                        let ray = if attacks::bishop_rays(sq).contains(from) { diag } else { orth };
                        let beyond = ray
                            & attacks::line(from, sq)
                            & occ
                            & !changed
                            & !attacks::between(from, sq)
                            & !Bitboard::from_square(from);
                        let Some(to) = beyond.first() else { continue };
                        let (attacker, target) = (self.piece(from), self.piece(to));
                        if is_target(attacker.role(), target.role()) {
                            out.push(Threat::new(attacker, from, target, to));
                        }
                    }
                }
            }
        }
    }
}

/// Kibitz's pieces by number.
const PIECES: [Piece; 12] = Piece::ALL;

/// Threats, in a list of fixed room: a move touches at most four squares,
/// each with at most 27 threats of its piece, 18 against it and 8 through
/// it, and a whole board has fewer than 256 threats in any position
/// reachable in a game (each attack of a non-king piece is one).
#[derive(Clone)]
pub struct ThreatList {
    items: Vec<Threat>,
}

impl Default for ThreatList {
    fn default() -> ThreatList {
        ThreatList { items: Vec::with_capacity(256) }
    }
}

impl ThreatList {
    /// Empties the list.
    #[inline]
    pub fn clear(&mut self) {
        self.items.clear();
    }

    /// Adds a threat.
    #[inline]
    pub fn push(&mut self, t: Threat) {
        self.items.push(t);
    }

    /// The threats.
    #[inline]
    pub fn as_slice(&self) -> &[Threat] {
        &self.items
    }

    /// Sorts the threats.
    #[inline]
    pub fn sort(&mut self) {
        self.items.sort_unstable();
    }
}

/// The threats a move changes: those only on the board before (`removed`)
/// and those only on the board after (`added`), where `changed` holds every
/// square the move changed.
pub fn changed_threats(
    before: &Board,
    after: &Board,
    changed: Bitboard,
    scratch: &mut [ThreatList; 2],
    removed: &mut ThreatList,
    added: &mut ThreatList,
) {
    let [old, new] = scratch;
    old.clear();
    new.clear();
    before.threats_touching(changed, old);
    after.threats_touching(changed, new);
    old.sort();
    new.sort();
    let (o, n) = (old.as_slice(), new.as_slice());
    let (mut i, mut j) = (0, 0);
    while i < o.len() && j < n.len() {
        match o[i].cmp(&n[j]) {
            std::cmp::Ordering::Less => {
                removed.push(o[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                added.push(n[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                i += 1;
                j += 1;
            }
        }
    }
    for &t in &o[i..] {
        removed.push(t);
    }
    for &t in &n[j..] {
        added.push(t);
    }
}

/// A pawn pair: two pawn squares and their colours.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Pair {
    /// The first pawn and its colour.
    pub a: (Square, Color),
    /// The second pawn and its colour.
    pub b: (Square, Color),
}

/// Every pawn pair on a board with pawns `pawns` (White's, Black's).
pub fn pairs(pawns: [Bitboard; 2], out: &mut Vec<Pair>) {
    let all = pawns[0] | pawns[1];
    let color = |sq: Square| if pawns[0].contains(sq) { Color::White } else { Color::Black };
    for a in all {
        // Each pair once: from its lower square.
        let later = Bitboard(all.0 & !(2u64 << a.to_u32()).wrapping_sub(1));
        for b in pair_band(a) & later {
            out.push(Pair { a: (a, color(a)), b: (b, color(b)) });
        }
    }
}

/// The pawn pairs a move changes: on the board before, every pair with a
/// pawn that is gone (`removed`); on the board after, every pair with a
/// pawn that is new (`added`). A pawn is the same pawn when a pawn of the
/// same colour stands on the same square.
pub fn changed_pairs(
    before: [Bitboard; 2],
    after: [Bitboard; 2],
    removed: &mut Vec<Pair>,
    added: &mut Vec<Pair>,
) {
    if before == after {
        return;
    }
    let gone = [before[0] & !after[0], before[1] & !after[1]];
    let new = [after[0] & !before[0], after[1] & !before[1]];
    pairs_with(before, gone, removed);
    pairs_with(after, new, added);
}

/// The pairs on a board with pawns `pawns` that include one of `these`.
fn pairs_with(pawns: [Bitboard; 2], these: [Bitboard; 2], out: &mut Vec<Pair>) {
    let all = pawns[0] | pawns[1];
    let marked = these[0] | these[1];
    let color = |sq: Square| if pawns[0].contains(sq) { Color::White } else { Color::Black };
    for a in marked {
        // A pair of two marked pawns is counted from the lower one.
        let partners = pair_band(a) & all & !(marked & Bitboard((1u64 << a.to_u32()) - 1).with(a));
        for b in partners {
            out.push(Pair { a: (a, color(a)), b: (b, color(b)) });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_threat_inputs_number_stockfishs() {
        // The offsets add up to FullThreats' 59,808 (checked when the
        // tables are built) and no index reaches past it.
        for a in 0..12 {
            for t in 0..12 {
                for b in 0..2 {
                    let base = TABLES_STATIC.pair_base[a][t][b] as usize;
                    assert!(base <= THREATS);
                }
            }
        }
        assert_eq!(PAIRS, 4560);
        assert_eq!(THREAT_INPUTS + 22_528, 86_896);
    }

    #[test]
    fn a_pawn_pair_has_one_index_either_way() {
        let (a, b) = (Square::E4, Square::D6);
        for p in [Color::White, Color::Black] {
            for orient in [0, 7, 56, 63] {
                let x = pair_index(a, Color::White, b, Color::Black, p, orient);
                let y = pair_index(b, Color::Black, a, Color::White, p, orient);
                assert_eq!(x, y);
                assert!((THREATS..THREAT_INPUTS).contains(&x));
            }
        }
    }
}
