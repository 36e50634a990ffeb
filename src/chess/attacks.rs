//! Attack tables, all built at compile time by `const fn` (no `init()`, no
//! lazy statics): step attacks of kings, knights and pawns; sliding attacks
//! of rooks and bishops; the squares between and on the line through two
//! squares.
//!
//! Sliding attacks are looked up in slots, one per square and slider, of
//! `2^n` entries, `n` the number of relevant occupancy bits (the rays
//! without the board edge). Two ways of indexing a slot, and so two
//! tables, are built; one is chosen when the program starts
//! ([`slider_kernel`]), by the processor it runs on:
//!
//! * PEXT: the index is `pext(occupied, mask)`, and an entry holds the
//!   attacks packed to the bits of the square's rays (`u16`: a rook sees at
//!   most 14 squares), unpacked by `pdep`. The table is 210 KiB, which stays
//!   in a core's L2 cache beside the rest of the work; 64-bit entries
//!   (841 KiB) did not on a Zen 3 (512 KiB of L2), where the lookups'
//!   misses were the largest single cost of replaying games. Chosen where
//!   BMI2 is present and fast: every Intel processor that has it, and AMD's
//!   from Zen 3 (family 19h) on.
//! * Magic: `((occupied & mask) * magic) >> (64 - n)`, "fancy" magic
//!   bitboards, 64-bit entries. Chosen elsewhere: no BMI2 (other
//!   processors, other architectures), or BMI2 in microcode (AMD's Zen 1
//!   and 2, family 17h, and older, where one `pext` takes tens to hundreds
//!   of cycles).
//!
//! `KIBITZ_SLIDERS=magic` or `pext` asks for one (PEXT only where the
//! processor has BMI2). Both give the same attacks; tests compare them
//! entry by entry.
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
    walk(sq, occupied, deltas, 0)
}

/// Walks each ray from `sq` until a blocker, and returns the attacked
/// squares; with `rays` (the square's rays on an empty board) not empty,
/// returns them packed to the bits of `rays` instead, as `pext(attacks,
/// rays)` packs them: each attacked square's bit goes to the place its
/// square holds among the rays (packing in the walk keeps the PEXT table's
/// compile-time evaluation within rustc's limits).
const fn walk(sq: usize, occupied: u64, deltas: &[(i32, i32); 4], rays: u64) -> u64 {
    let mut attacks = 0;
    let mut i = 0;
    while i < 4 {
        let (df, dr) = deltas[i];
        let mut f = (sq % 8) as i32 + df;
        let mut r = (sq / 8) as i32 + dr;
        while f >= 0 && f <= 7 && r >= 0 && r <= 7 {
            let bit = 1u64 << (r * 8 + f);
            attacks |= if rays == 0 { bit } else { 1 << (rays & (bit - 1)).count_ones() };
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

/// Where a square's sliding attacks live in the tables.
#[derive(Clone, Copy)]
struct Magic {
    /// The relevant occupancy: the rays without their last squares.
    mask: u64,
    /// The rays on an empty board: where the PEXT table's packed attacks
    /// are unpacked to.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    rays: u64,
    magic: u64,
    shift: u32,
    offset: usize,
}

/// How sliding attacks are looked up (see the module's documentation).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SliderKernel {
    /// Fancy magic bitboards, 64-bit entries.
    Magic,
    /// `pext` to index, `pdep` to unpack 16-bit entries.
    Pext,
}

impl SliderKernel {
    /// The kernel's name, as figures quote it and `KIBITZ_SLIDERS` takes it.
    pub fn name(self) -> &'static str {
        match self {
            SliderKernel::Magic => "magic",
            SliderKernel::Pext => "pext",
        }
    }
}

/// Whether lookups go through the PEXT table; false (magic, which every
/// processor runs) until [`choose_slider_kernel`] has run.
static PEXT_KERNEL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static KERNEL_CHOSEN: std::sync::Once = std::sync::Once::new();

/// Chooses the kernel for this process, once: by the processor, or by
/// `KIBITZ_SLIDERS`. Every [`Position`](crate::Position) is built through
/// a call of this, so the choice is made before any board exists; lookups
/// made earlier use magic bitboards, which give the same attacks.
pub fn choose_slider_kernel() {
    KERNEL_CHOSEN.call_once(|| {
        let pext = match std::env::var("KIBITZ_SLIDERS").as_deref() {
            Ok("magic") => false,
            Ok("pext") => pext_available(),
            _ => pext_is_fast(),
        };
        PEXT_KERNEL.store(pext, std::sync::atomic::Ordering::Relaxed);
    });
}

/// The kernel this process looks sliding attacks up with.
pub fn slider_kernel() -> SliderKernel {
    choose_slider_kernel();
    if pext_chosen() { SliderKernel::Pext } else { SliderKernel::Magic }
}

/// Whether this processor runs BMI2's `pext` and `pdep` in hardware at a
/// few cycles each: BMI2 present, and not an AMD (or Hygon) processor
/// before family 19h, whose BMI2 is microcoded.
pub fn pext_is_fast() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        if !pext_available() {
            return false;
        }
        let vendor = std::arch::x86_64::__cpuid(0);
        let amd_like = (vendor.ebx, vendor.edx, vendor.ecx)
            == (0x6874_7541, 0x6974_6e65, 0x444d_4163)
            || (vendor.ebx, vendor.edx, vendor.ecx) == (0x6f67_7948, 0x6e65_476e, 0x656e_6975);
        if !amd_like {
            return true;
        }
        // Family: the base family, plus the extended family when the base is 0xf.
        let eax = std::arch::x86_64::__cpuid(1).eax;
        let base = (eax >> 8) & 0xf;
        let family = if base == 0xf { base + ((eax >> 20) & 0xff) } else { base };
        family >= 0x19
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether PEXT has the processor's BMI2 at all (it may still be slow).
fn pext_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("bmi2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether lookups go through the PEXT table: one load of a flag that
/// stays in L1 and a branch that always goes the same way. (A first-use
/// check here, with its call on the cold path, cost perft a fifth of its
/// speed: the hot loops kept registers free for the call.)
#[inline(always)]
fn pext_chosen() -> bool {
    PEXT_KERNEL.load(std::sync::atomic::Ordering::Relaxed)
}

/// Defines a BMI2 instruction's function: the intrinsic when the build
/// targets BMI2, inline assembly otherwise. Either is only called once
/// [`pext_chosen`] found BMI2 on the processor.
macro_rules! bmi2 {
    ($(#[$doc:meta])* $name:ident, $intrinsic:ident) => {
        $(#[$doc])*
        #[cfg(target_arch = "x86_64")]
        #[inline(always)]
        fn $name(x: u64, mask: u64) -> u64 {
            #[cfg(target_feature = "bmi2")]
            {
                // Safety: the build targets BMI2.
                unsafe { std::arch::x86_64::$intrinsic(x, mask) }
            }
            #[cfg(not(target_feature = "bmi2"))]
            {
                let r: u64;
                // Safety: reached only when the processor has BMI2 (the
                // kernel is chosen by CPUID); the instruction reads and
                // writes registers only.
                unsafe {
                    std::arch::asm!(concat!(stringify!($name), " {r}, {x}, {m}"),
                        x = in(reg) x, m = in(reg) mask, r = lateout(reg) r,
                        options(pure, nomem, nostack, preserves_flags));
                }
                r
            }
        }
    };
}

bmi2!(
    /// `pext`: the bits of `x` under `mask`, packed to the low end.
    pext,
    _pext_u64
);
bmi2!(
    /// `pdep`: the low bits of `x` spread over the set bits of `mask`.
    pdep,
    _pdep_u64
);

impl Magic {
    /// The attacks from this square's slot for `occupied`, through the
    /// kernel in use. The kernel the build expects is inlined and the
    /// other is a call: a build for BMI2 (the default `target-cpu=native`
    /// on a recent x86-64) calls magic lookups only on processors whose
    /// BMI2 is slow; a portable build calls PEXT lookups only where a
    /// processor it was not built for has fast BMI2. Both paths inlined
    /// measured the same within this machine's noise (BENCHMARKS.md,
    /// "Perft"); the expected one alone keeps the hot loops smaller.
    #[inline(always)]
    fn attacks(&self, occupied: u64) -> u64 {
        #[cfg(all(target_arch = "x86_64", target_feature = "bmi2"))]
        {
            if pext_chosen() {
                self.pext_attacks(occupied)
            } else {
                self.magic_attacks_call(occupied)
            }
        }
        #[cfg(all(target_arch = "x86_64", not(target_feature = "bmi2")))]
        {
            if pext_chosen() {
                self.pext_attacks_call(occupied)
            } else {
                self.magic_attacks(occupied)
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self.magic_attacks(occupied)
        }
    }

    #[cfg(all(target_arch = "x86_64", target_feature = "bmi2"))]
    #[cold]
    #[inline(never)]
    fn magic_attacks_call(&self, occupied: u64) -> u64 {
        self.magic_attacks(occupied)
    }

    #[cfg(all(target_arch = "x86_64", not(target_feature = "bmi2")))]
    #[cold]
    #[inline(never)]
    fn pext_attacks_call(&self, occupied: u64) -> u64 {
        self.pext_attacks(occupied)
    }

    /// Through the PEXT table: only with BMI2 on the processor.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn pext_attacks(&self, occupied: u64) -> u64 {
        let index = self.offset + pext(occupied, self.mask) as usize;
        // Safety: `pext` of an n-bit mask is below 2^n, the slot's size,
        // and the slots were laid out to fit in the table.
        let packed = unsafe { *PEXT_TABLE.get_unchecked(index) };
        pdep(u64::from(packed), self.rays)
    }

    #[inline(always)]
    fn magic_attacks(&self, occupied: u64) -> u64 {
        let index =
            self.offset + ((occupied & self.mask).wrapping_mul(self.magic) >> self.shift) as usize;
        // Safety: a product shifted right by 64 - n is below 2^n, the
        // slot's size, and the slots were laid out to fit in the table.
        // Skipping the bounds check is worth about 3% in perft.
        unsafe { *SLIDER_TABLE.get_unchecked(index) }
    }
}

const ROOK_TABLE_SIZE: usize = 102_400;
const BISHOP_TABLE_SIZE: usize = 5_248;
const SLIDER_TABLE_SIZE: usize = ROOK_TABLE_SIZE + BISHOP_TABLE_SIZE;

const fn build_magics(deltas: &[(i32, i32); 4], numbers: &[u64; 64], base: usize) -> [Magic; 64] {
    let mut magics = [Magic { mask: 0, rays: 0, magic: 0, shift: 0, offset: 0 }; 64];
    let mut offset = base;
    let mut sq = 0;
    while sq < 64 {
        let mask = relevant_mask(sq, deltas);
        let bits = mask.count_ones();
        let rays = slide(sq, 0, deltas);
        magics[sq] = Magic { mask, rays, magic: numbers[sq], shift: 64 - bits, offset };
        offset += 1 << bits;
        sq += 1;
    }
    magics
}

static ROOK_MAGICS: [Magic; 64] = build_magics(&ROOK_DELTAS, &ROOK_MAGIC_NUMBERS, 0);
static BISHOP_MAGICS: [Magic; 64] =
    build_magics(&BISHOP_DELTAS, &BISHOP_MAGIC_NUMBERS, ROOK_TABLE_SIZE);

/// Fills the slots of one slider, magic-indexed.
const fn fill_slider(
    table: &mut [u64; SLIDER_TABLE_SIZE],
    deltas: &[(i32, i32); 4],
    magics: &[Magic; 64],
) {
    let mut sq = 0;
    while sq < 64 {
        let m = magics[sq];
        let mut subset: u64 = 0;
        loop {
            let attacks = slide(sq, subset, deltas);
            let index = m.offset + (subset.wrapping_mul(m.magic) >> m.shift) as usize;
            // A destructive collision means a bad magic number: fail the build.
            assert!(table[index] == 0 || table[index] == attacks, "bad magic number");
            table[index] = attacks;
            subset = subset.wrapping_sub(m.mask) & m.mask;
            if subset == 0 {
                break;
            }
        }
        sq += 1;
    }
}

/// Fills the slots of one slider in `pext` order with packed attacks.
/// Subsets of the mask are enumerated with the carry-rippler trick, which
/// visits them in increasing numeric order: exactly the order of their
/// `pext` index.
const fn fill_pext_slider(
    table: &mut [u16; SLIDER_TABLE_SIZE],
    deltas: &[(i32, i32); 4],
    magics: &[Magic; 64],
) {
    let mut sq = 0;
    while sq < 64 {
        let m = magics[sq];
        let mut subset: u64 = 0;
        let mut index = m.offset;
        loop {
            let packed = walk(sq, subset, deltas, m.rays);
            assert!(packed <= u16::MAX as u64, "attacks beyond 16 bits");
            table[index] = packed as u16;
            index += 1;
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

#[cfg(target_arch = "x86_64")]
#[allow(long_running_const_eval)]
static PEXT_TABLE: [u16; SLIDER_TABLE_SIZE] = {
    let mut table = [0; SLIDER_TABLE_SIZE];
    fill_pext_slider(&mut table, &ROOK_DELTAS, &ROOK_MAGICS);
    fill_pext_slider(&mut table, &BISHOP_DELTAS, &BISHOP_MAGICS);
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
    Bitboard(ROOK_MAGICS[sq.to_usize()].attacks(occupied.0))
}

/// Squares a bishop on `sq` attacks, given the occupied squares.
#[inline]
pub fn bishop_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    Bitboard(BISHOP_MAGICS[sq.to_usize()].attacks(occupied.0))
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

    /// Every occupancy subset of every square gives the slow slider's answer
    /// through each kernel (PEXT where the processor has BMI2) and through
    /// the one in use, and occupancy outside the mask does not matter.
    #[test]
    fn sliders_match_slow_slider_exhaustively() {
        let mut rng = Rng(12345);
        let mut checked = 0u64;
        for sq in Square::ALL {
            let s = sq.to_usize();
            for (deltas, magics, f) in [
                (&ROOK_DELTAS, &ROOK_MAGICS, rook_attacks as fn(Square, Bitboard) -> Bitboard),
                (&BISHOP_DELTAS, &BISHOP_MAGICS, bishop_attacks),
            ] {
                let m = magics[s];
                let mask = relevant_mask(s, deltas);
                let mut subset = 0u64;
                loop {
                    let occupied = subset | (rng.next() & !mask);
                    let want = slide(s, subset, deltas);
                    assert_eq!(f(sq, Bitboard(occupied)).0, want);
                    assert_eq!(m.magic_attacks(occupied), want);
                    #[cfg(target_arch = "x86_64")]
                    if pext_available() {
                        assert_eq!(m.pext_attacks(occupied), want);
                    }
                    checked += 1;
                    subset = subset.wrapping_sub(mask) & mask;
                    if subset == 0 {
                        break;
                    }
                }
            }
        }
        assert_eq!(checked, SLIDER_TABLE_SIZE as u64);
    }

    /// The kernel in use is PEXT only where the processor has BMI2, and
    /// the processor's own choice is the fast one where BMI2 is fast.
    #[test]
    fn the_kernel_follows_the_processor() {
        assert!(pext_available() || !pext_is_fast());
        if slider_kernel() == SliderKernel::Pext {
            assert!(pext_available());
        }
        if std::env::var_os("KIBITZ_SLIDERS").is_none() {
            assert_eq!(slider_kernel() == SliderKernel::Pext, pext_is_fast());
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
