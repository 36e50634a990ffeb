//! Attack tables, all built at compile time by `const fn` (no `init()`, no
//! lazy statics): step attacks of kings, knights and pawns; sliding attacks
//! of rooks and bishops; the squares between and on the line through two
//! squares.
//!
//! Sliding attacks are looked up in one shared table of 107,648 entries
//! (841 KiB). Each square owns a slot of `2^n` entries, `n` the number of
//! relevant occupancy bits (the rays without the board edge). The index into
//! the slot is either
//!
//! * `pext(occupied, mask)` when the build targets a CPU with BMI2
//!   (`target-cpu=native` on any recent x86-64), or
//! * `((occupied & mask) * magic) >> (64 - n)`, "fancy" magic bitboards, in a
//!   portable build.
//!
//! The magic numbers were found by the test `find_magic` with a seeded
//! xorshift generator; that test finds them again and compares. Filling the
//! table at compile time asserts that no two occupancies with different
//! attacks share an entry, so a wrong magic number fails the build.
//!
//! ```
//! use kibitz::{attacks, Bitboard, Square};
//!
//! let occupied = Bitboard::from(Square::E6) | Square::B4;
//! let rook = attacks::rook_attacks(Square::E4, occupied);
//! assert!(rook.contains(Square::E6) && !rook.contains(Square::E7));
//! assert!(rook.contains(Square::B4) && !rook.contains(Square::A4));
//! ```

use crate::chess::{
    bitboard::Bitboard,
    types::{Color, Piece, Role, Square},
};

const ROOK_DELTAS: [(i32, i32); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
const BISHOP_DELTAS: [(i32, i32); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];
const KNIGHT_DELTAS: [(i32, i32); 8] =
    [(1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)];
const KING_DELTAS: [(i32, i32); 8] =
    [(1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1)];

/// The square `(df, dr)` steps away from `sq`, as a bit, or 0 off the board.
const fn step(sq: usize, df: i32, dr: i32) -> u64 {
    let f = (sq % 8) as i32 + df;
    let r = (sq / 8) as i32 + dr;
    if f < 0 || f > 7 || r < 0 || r > 7 { 0 } else { 1 << (r * 8 + f) }
}

const fn step_table<const N: usize>(deltas: &[(i32, i32); N]) -> [u64; 64] {
    let mut table = [0; 64];
    let mut sq = 0;
    while sq < 64 {
        let mut i = 0;
        while i < N {
            table[sq] |= step(sq, deltas[i].0, deltas[i].1);
            i += 1;
        }
        sq += 1;
    }
    table
}

/// The slow, obviously correct slider: walk each ray until a blocker.
const fn slide(sq: usize, occupied: u64, deltas: &[(i32, i32); 4]) -> u64 {
    let mut attacks = 0;
    let mut i = 0;
    while i < 4 {
        let (df, dr) = deltas[i];
        let mut f = (sq % 8) as i32 + df;
        let mut r = (sq / 8) as i32 + dr;
        while f >= 0 && f <= 7 && r >= 0 && r <= 7 {
            let bit = 1u64 << (r * 8 + f);
            attacks |= bit;
            if occupied & bit != 0 {
                break;
            }
            f += df;
            r += dr;
        }
        i += 1;
    }
    attacks
}

/// The relevant occupancy mask: the rays from `sq` without their last
/// square (a piece on the board's edge never blocks anything further).
const fn relevant_mask(sq: usize, deltas: &[(i32, i32); 4]) -> u64 {
    let mut mask = 0;
    let mut i = 0;
    while i < 4 {
        let (df, dr) = deltas[i];
        let mut f = (sq % 8) as i32 + df;
        let mut r = (sq / 8) as i32 + dr;
        while f + df >= 0 && f + df <= 7 && r + dr >= 0 && r + dr <= 7 {
            mask |= 1u64 << (r * 8 + f);
            f += df;
            r += dr;
        }
        i += 1;
    }
    mask
}

/// Where a square's sliding attacks live in [`SLIDER_TABLE`].
#[derive(Clone, Copy)]
struct Magic {
    mask: u64,
    #[cfg_attr(target_feature = "bmi2", allow(dead_code))]
    magic: u64,
    #[cfg_attr(target_feature = "bmi2", allow(dead_code))]
    shift: u32,
    offset: usize,
}

impl Magic {
    #[inline(always)]
    fn index(&self, occupied: u64) -> usize {
        #[cfg(target_feature = "bmi2")]
        {
            // Safety: the build targets BMI2 (`cfg(target_feature)` is set
            // only then), so the instruction exists.
            self.offset + unsafe { std::arch::x86_64::_pext_u64(occupied, self.mask) } as usize
        }
        #[cfg(not(target_feature = "bmi2"))]
        {
            self.offset + ((occupied & self.mask).wrapping_mul(self.magic) >> self.shift) as usize
        }
    }
}

const ROOK_TABLE_SIZE: usize = 102_400;
const BISHOP_TABLE_SIZE: usize = 5_248;
const SLIDER_TABLE_SIZE: usize = ROOK_TABLE_SIZE + BISHOP_TABLE_SIZE;

const fn build_magics(deltas: &[(i32, i32); 4], numbers: &[u64; 64], base: usize) -> [Magic; 64] {
    let mut magics = [Magic { mask: 0, magic: 0, shift: 0, offset: 0 }; 64];
    let mut offset = base;
    let mut sq = 0;
    while sq < 64 {
        let mask = relevant_mask(sq, deltas);
        let bits = mask.count_ones();
        magics[sq] = Magic { mask, magic: numbers[sq], shift: 64 - bits, offset };
        offset += 1 << bits;
        sq += 1;
    }
    magics
}

static ROOK_MAGICS: [Magic; 64] = build_magics(&ROOK_DELTAS, &ROOK_MAGIC_NUMBERS, 0);
static BISHOP_MAGICS: [Magic; 64] =
    build_magics(&BISHOP_DELTAS, &BISHOP_MAGIC_NUMBERS, ROOK_TABLE_SIZE);

/// Fills the slots of one slider. Subsets of the mask are enumerated with
/// the carry-rippler trick, which visits them in increasing numeric order:
/// exactly the order of their `pext` index.
const fn fill_slider(
    table: &mut [u64; SLIDER_TABLE_SIZE],
    deltas: &[(i32, i32); 4],
    magics: &[Magic; 64],
) {
    let mut sq = 0;
    while sq < 64 {
        let m = magics[sq];
        let mut subset: u64 = 0;
        let mut pext_index = 0;
        loop {
            let attacks = slide(sq, subset, deltas);
            let index = if cfg!(target_feature = "bmi2") {
                m.offset + pext_index
            } else {
                m.offset + (subset.wrapping_mul(m.magic) >> m.shift) as usize
            };
            // A destructive collision means a bad magic number: fail the build.
            assert!(table[index] == 0 || table[index] == attacks, "bad magic number");
            table[index] = attacks;
            pext_index += 1;
            subset = subset.wrapping_sub(m.mask) & m.mask;
            if subset == 0 {
                break;
            }
        }
        sq += 1;
    }
}

#[allow(long_running_const_eval)]
static SLIDER_TABLE: [u64; SLIDER_TABLE_SIZE] = {
    let mut table = [0; SLIDER_TABLE_SIZE];
    fill_slider(&mut table, &ROOK_DELTAS, &ROOK_MAGICS);
    fill_slider(&mut table, &BISHOP_DELTAS, &BISHOP_MAGICS);
    table
};

static KNIGHT_ATTACKS: [u64; 64] = step_table(&KNIGHT_DELTAS);
static KING_ATTACKS: [u64; 64] = step_table(&KING_DELTAS);
static PAWN_ATTACKS: [[u64; 64]; 2] =
    [step_table(&[(-1, 1), (1, 1)]), step_table(&[(-1, -1), (1, -1)])];
static ROOK_RAYS: [u64; 64] = rays(&ROOK_DELTAS);
static BISHOP_RAYS: [u64; 64] = rays(&BISHOP_DELTAS);

const fn rays(deltas: &[(i32, i32); 4]) -> [u64; 64] {
    let mut table = [0; 64];
    let mut sq = 0;
    while sq < 64 {
        table[sq] = slide(sq, 0, deltas);
        sq += 1;
    }
    table
}

/// `(between, line)` for every pair of squares.
const fn between_and_line() -> ([[u64; 64]; 64], [[u64; 64]; 64]) {
    let mut between = [[0; 64]; 64];
    let mut line = [[0; 64]; 64];
    let mut a = 0;
    while a < 64 {
        let mut b = 0;
        while b < 64 {
            let bit_a = 1u64 << a;
            let bit_b = 1u64 << b;
            let mut k = 0;
            while k < 2 {
                let deltas = if k == 0 { &ROOK_DELTAS } else { &BISHOP_DELTAS };
                if a != b && slide(a, 0, deltas) & bit_b != 0 {
                    line[a][b] = (slide(a, 0, deltas) & slide(b, 0, deltas)) | bit_a | bit_b;
                    between[a][b] = slide(a, bit_b, deltas) & slide(b, bit_a, deltas);
                }
                k += 1;
            }
            b += 1;
        }
        a += 1;
    }
    (between, line)
}

static BETWEEN_LINE: ([[u64; 64]; 64], [[u64; 64]; 64]) = between_and_line();

/// Squares a knight on `sq` attacks.
#[inline]
pub fn knight_attacks(sq: Square) -> Bitboard {
    Bitboard(KNIGHT_ATTACKS[sq.to_usize()])
}

/// Squares a king on `sq` attacks.
#[inline]
pub fn king_attacks(sq: Square) -> Bitboard {
    Bitboard(KING_ATTACKS[sq.to_usize()])
}

/// Squares a pawn of `color` on `sq` attacks.
#[inline]
pub fn pawn_attacks(color: Color, sq: Square) -> Bitboard {
    Bitboard(PAWN_ATTACKS[color.to_usize()][sq.to_usize()])
}

/// Squares a rook on `sq` attacks, given the occupied squares.
#[inline]
pub fn rook_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    let index = ROOK_MAGICS[sq.to_usize()].index(occupied.0);
    // Safety: `index` is `offset + i` with `i < 2^n` for this square's slot
    // (pext of an n-bit mask, or a product shifted right by 64 - n), and the
    // slots were laid out to fit in the table. Skipping the bounds check is
    // worth about 3% in perft.
    Bitboard(unsafe { *SLIDER_TABLE.get_unchecked(index) })
}

/// Squares a bishop on `sq` attacks, given the occupied squares.
#[inline]
pub fn bishop_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    let index = BISHOP_MAGICS[sq.to_usize()].index(occupied.0);
    // Safety: as in `rook_attacks`.
    Bitboard(unsafe { *SLIDER_TABLE.get_unchecked(index) })
}

/// Squares a queen on `sq` attacks, given the occupied squares.
#[inline]
pub fn queen_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    rook_attacks(sq, occupied) | bishop_attacks(sq, occupied)
}

/// Squares a rook on `sq` attacks on an empty board.
#[inline]
pub fn rook_rays(sq: Square) -> Bitboard {
    Bitboard(ROOK_RAYS[sq.to_usize()])
}

/// Squares a bishop on `sq` attacks on an empty board.
#[inline]
pub fn bishop_rays(sq: Square) -> Bitboard {
    Bitboard(BISHOP_RAYS[sq.to_usize()])
}

/// Squares a piece of `role` (not a pawn) on `sq` attacks.
#[inline]
pub fn attacks(role: Role, sq: Square, occupied: Bitboard) -> Bitboard {
    match role {
        Role::Pawn => Bitboard::EMPTY,
        Role::Knight => knight_attacks(sq),
        Role::Bishop => bishop_attacks(sq, occupied),
        Role::Rook => rook_attacks(sq, occupied),
        Role::Queen => queen_attacks(sq, occupied),
        Role::King => king_attacks(sq),
    }
}

/// Squares `piece` on `sq` attacks (pawns included).
#[inline]
pub fn piece_attacks(piece: Piece, sq: Square, occupied: Bitboard) -> Bitboard {
    match piece.role() {
        Role::Pawn => pawn_attacks(piece.color(), sq),
        role => attacks(role, sq, occupied),
    }
}

/// The squares strictly between `a` and `b` if they share a rank, file or
/// diagonal; otherwise empty.
///
/// ```text
/// between(b2, f6):
/// . . . . . . . .
/// . . . . . . . .
/// . . . . . . . .
/// . . . . 1 . . .
/// . . . 1 . . . .
/// . . 1 . . . . .
/// . . . . . . . .
/// . . . . . . . .
/// ```
#[inline]
pub fn between(a: Square, b: Square) -> Bitboard {
    Bitboard(BETWEEN_LINE.0[a.to_usize()][b.to_usize()])
}

/// The whole line (edge to edge) through `a` and `b` if they are aligned;
/// otherwise empty.
#[inline]
pub fn line(a: Square, b: Square) -> Bitboard {
    Bitboard(BETWEEN_LINE.1[a.to_usize()][b.to_usize()])
}

/// Whether `a`, `b` and `c` lie on one line.
#[inline]
pub fn aligned(a: Square, b: Square, c: Square) -> bool {
    line(a, b).contains(c)
}

#[rustfmt::skip]
const ROOK_MAGIC_NUMBERS: [u64; 64] = [
    0x0280002330804000, 0x0040001000200040, 0x0200081020804200, 0x0480048090008800,
    0x0200020020041009, 0x0200040110820008, 0xa080808001000200, 0x2180004023000280,
    0x0020800040002088, 0x1000804000200080, 0x0006004014802200, 0xc048800801811001,
    0x0005000800050010, 0x0002001004020008, 0x0004000208100401, 0x870200010060940a,
    0x0080004020004000, 0x0040030041002080, 0x0001010020001040, 0x000812000a420020,
    0x008b808004000800, 0x5400808004000200, 0x8006a40018104211, 0x0100220001004084,
    0x2000400080008030, 0x00c0520200210080, 0x0002150100200240, 0x0100100080080080,
    0x0002950100116800, 0x8041000300080400, 0x002100210004c200, 0x4200090a00004084,
    0x0200204010800080, 0x01c1008021004000, 0x0000100088802000, 0x1021800802805000,
    0x0003000801000510, 0x0042104008010420, 0x0040220804000150, 0x0442084182001704,
    0x40c0004882268001, 0x0280201000404001, 0x8211004020010010, 0x0001002010010008,
    0x4188080100110004, 0x0502020004008080, 0x1c6100020005000c, 0x0018010040820004,
    0x0200310840820200, 0x0210004000200040, 0x1004430160009100, 0x0000800800d00180,
    0x6010800400080080, 0x4511000204004900, 0x5000308801020400, 0x0201000080420100,
    0x8080401080002103, 0xc401001040008021, 0x1001200408110041, 0x5000200810000501,
    0x0001080010030301, 0x6021000804000201, 0x000090020822850c, 0x4000810404419222,
];

#[rustfmt::skip]
const BISHOP_MAGIC_NUMBERS: [u64; 64] = [
    0x1020821002002042, 0x08a0012400809522, 0x8022448902011101, 0x0804240382042050,
    0x0802021000050440, 0x8083922020500100, 0x0011010860043202, 0x0009004202014100,
    0x00002610c4080080, 0x3100090811004200, 0x3000900440802208, 0x0420840410803004,
    0x1043020210020010, 0x0222048221208104, 0x0048443401241000, 0x0000010048040480,
    0x00400860184600c0, 0x0244001110020040, 0x82080034002c0412, 0x0840880802004011,
    0x0001010820080020, 0x010100b08080c000, 0x0204080080841080, 0x0004321104880410,
    0x0008042020051000, 0x0001108108100100, 0x84002801d0015041, 0x8104040000410200,
    0x0010040001050800, 0x0022040a06010102, 0x0080c40042010400, 0x4084110030804110,
    0x0002384402222010, 0x8200a82000080202, 0x0008180400020401, 0x2000200501880108,
    0x04006600202a0080, 0x0201220080280800, 0x20100402888108c0, 0x0001420604002108,
    0x8108020804042208, 0x2800821010100344, 0x000a0010580a2400, 0x2000004010400a01,
    0x610ac00812000044, 0x4224100842020440, 0x0030300220400884, 0x0292042046102084,
    0x080401041006021c, 0x0205260206200010, 0x4210008400881400, 0x2000200104090408,
    0x1814000813040824, 0x0000302001250810, 0x100c20b802099c18, 0x0110308200444001,
    0x1801002811045000, 0x0200402088149020, 0x0080010081581804, 0x0200121004460811,
    0x1404013020204120, 0x05c0002a20880084, 0x0846042028310102, 0x0010104218204010,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The xorshift64* generator the magic numbers were found with.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
    }

    /// Finds the first collision-free magic number the generator offers for
    /// `sq` (random sparse numbers whose product with the mask spreads into
    /// the top byte).
    fn find_magic(sq: usize, deltas: &[(i32, i32); 4], rng: &mut Rng) -> u64 {
        let mask = relevant_mask(sq, deltas);
        let bits = mask.count_ones();
        let mut subsets = Vec::new();
        let mut subset = 0u64;
        loop {
            subsets.push((subset, slide(sq, subset, deltas)));
            subset = subset.wrapping_sub(mask) & mask;
            if subset == 0 {
                break;
            }
        }
        let mut used = vec![0u64; 1 << bits];
        loop {
            let magic = rng.next() & rng.next() & rng.next();
            if (mask.wrapping_mul(magic) >> 56).count_ones() < 6 {
                continue;
            }
            used.fill(0);
            let ok = subsets.iter().all(|&(occ, attacks)| {
                let i = (occ.wrapping_mul(magic) >> (64 - bits)) as usize;
                let fits = used[i] == 0 || used[i] == attacks;
                used[i] = attacks;
                fits
            });
            if ok {
                return magic;
            }
        }
    }

    #[test]
    fn magic_numbers_are_reproducible() {
        let mut rng = Rng(0x6b69_6269_747a_0001);
        for (sq, &magic) in ROOK_MAGIC_NUMBERS.iter().enumerate() {
            assert_eq!(find_magic(sq, &ROOK_DELTAS, &mut rng), magic, "rook {sq}");
        }
        for (sq, &magic) in BISHOP_MAGIC_NUMBERS.iter().enumerate() {
            assert_eq!(find_magic(sq, &BISHOP_DELTAS, &mut rng), magic, "bishop {sq}");
        }
    }

    #[test]
    fn table_sizes() {
        let rook: usize = (0..64).map(|sq| 1 << relevant_mask(sq, &ROOK_DELTAS).count_ones()).sum();
        let bishop: usize =
            (0..64).map(|sq| 1 << relevant_mask(sq, &BISHOP_DELTAS).count_ones()).sum();
        assert_eq!((rook, bishop), (ROOK_TABLE_SIZE, BISHOP_TABLE_SIZE));
    }

    /// Every occupancy subset of every square gives the slow slider's answer,
    /// and occupancy outside the mask does not matter.
    #[test]
    fn sliders_match_slow_slider_exhaustively() {
        let mut rng = Rng(12345);
        for sq in Square::ALL {
            let s = sq.to_usize();
            for (deltas, f) in [
                (&ROOK_DELTAS, rook_attacks as fn(Square, Bitboard) -> Bitboard),
                (&BISHOP_DELTAS, bishop_attacks),
            ] {
                let mask = relevant_mask(s, deltas);
                let mut subset = 0u64;
                loop {
                    let noise = rng.next() & !mask;
                    assert_eq!(f(sq, Bitboard(subset | noise)).0, slide(s, subset, deltas));
                    subset = subset.wrapping_sub(mask) & mask;
                    if subset == 0 {
                        break;
                    }
                }
            }
        }
    }

    #[test]
    fn step_attacks() {
        assert_eq!(knight_attacks(Square::A1), Bitboard::from(Square::B3) | Square::C2);
        assert_eq!(king_attacks(Square::E1).count(), 5);
        assert_eq!(pawn_attacks(Color::White, Square::E4), Bitboard::from(Square::D5) | Square::F5);
        assert_eq!(pawn_attacks(Color::Black, Square::A5), Bitboard::from(Square::B4));
        assert_eq!(pawn_attacks(Color::White, Square::H8), Bitboard::EMPTY);
    }

    #[test]
    fn between_and_line_tables() {
        assert_eq!(
            between(Square::B2, Square::F6),
            Bitboard::from(Square::C3) | Square::D4 | Square::E5
        );
        assert_eq!(between(Square::A1, Square::B3), Bitboard::EMPTY);
        assert_eq!(between(Square::E1, Square::E2), Bitboard::EMPTY);
        assert_eq!(line(Square::A1, Square::C3).count(), 8);
        assert_eq!(line(Square::A1, Square::B3), Bitboard::EMPTY);
        assert!(aligned(Square::E1, Square::E4, Square::E8));
        assert!(!aligned(Square::E1, Square::E4, Square::D8));
        for a in Square::ALL {
            for b in Square::ALL {
                assert_eq!(between(a, b), between(b, a));
                assert_eq!(line(a, b), line(b, a));
                assert!((between(a, b) & !line(a, b)).is_empty());
            }
        }
    }
}
