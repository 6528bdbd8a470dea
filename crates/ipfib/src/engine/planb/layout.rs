//! The memory layout PlanB searches: what a key is for each family, and the 64-byte lines.
//!
//! A lookup consumes the address in two parts. The top 16 bits index a direct table (DXR's and
//! Poptrie's trick: it replaces the two or three widest tree levels by one load). The next
//! bits, up to the family's *coarse* width (32 for IPv4, 48 for IPv6), are the key searched in
//! that chunk's tree. Because a chunk's keys share their top 16 bits, the key is narrower than
//! the address: `u16` for IPv4 and `u32` for IPv6 (about twice the fan-out of the paper's
//! 8 × `u64` node). IPv6 boundaries finer than /48 are rare in real tables; the /48 cells that
//! contain them are resolved by a second stage ([`super::fallback`]), so every prefix length up
//! to /128 stays exact.
//!
//! Every node is one cache line, of two kinds:
//! - an *inner* node: sorted keys and a *link*, the index of its first child (its children are
//!   contiguous, so the next node is `link + rank`);
//! - a *leaf*: sorted keys and the answers themselves, one more than its keys: the next hop of
//!   each position and two flag bits per position, "no route" and "fallback cell" (then the
//!   hop slot holds the cell's index). The answer is in the line the last search already
//!   loaded, so a lookup touches no value array.
//!
//! | family | inner node | leaf |
//! |---|---|---|
//! | IPv6 (`u32` keys) | 15 keys, link | 7 keys, flags, 8 hops (32-bit) |
//! | IPv6, *narrow* | 15 keys, link | 9 keys, flags, 10 hops (16-bit), pad |
//! | IPv4 (`u16` keys) | 30 keys, link | 9 keys, pad, flags, 10 hops (32-bit) |
//! | IPv4, *narrow* | 30 keys, link | 14 keys, flags, 15 hops (16-bit), pad |
//!
//! A table whose next hops (and fallback cell numbers) all fit 16 bits (tables of next-hop
//! ids, as routers keep, or of origin-AS ranks) gets narrow leaves: 15 answers per line
//! instead of 10 (IPv4), 10 instead of 8 (IPv6), so its leaves take a third (a fifth) less
//! memory. The format is fixed per table and family (the `narrow` of [`super::PlanB`]'s tree,
//! `tree`), so the walk is compiled for each and never tests it per lookup.
//!
//! In a table of depth 2 (one inner level: nearly every IPv4 table), a chunk whose tree is a
//! single leaf is entered at that leaf: its direct entry carries [`LEAF_ENTRY`], and the
//! inner step keeps such a lane where it is instead of following a link. Without it every
//! such chunk needs an all-padding inner node in front of its leaf (a third of IPv4 et-2015's
//! chunks), and a lookup reads that line too.

use super::line::{Line16, Line32};
use super::search::Search;
use crate::addr::{Address, AddressInput};
use crate::route_table::NextHop;
use crate::storage::Pod;
use std::fmt::Debug;

/// Bits resolved by the direct table in front of the trees.
pub const DIRECT_BITS: u32 = 16;

/// Flag bit of a direct-table entry that names its chunk's only leaf in a table of depth 2
/// (module docs); the entry's other bits are the leaf's line.
pub const LEAF_ENTRY: u32 = 1 << 31;

/// A direct entry's line, without [`LEAF_ENTRY`].
#[inline(always)]
pub const fn entry_line(entry: u32) -> u32 {
    entry & !LEAF_ENTRY
}

/// Flag bit (shifted by the position) of a leaf position with no route.
pub const NO_ROUTE: u32 = 1;
/// Flag bit (shifted by the position) of a leaf position whose hop slot names a fallback cell.
pub const CELL: u32 = 1 << 16;

/// What a leaf position answers, as the builder sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Answer {
    /// The longest matching route's next hop.
    Route(NextHop),
    /// No route covers the position.
    NoRoute,
    /// The position is a coarse cell with finer boundaries: search fallback cell `n`.
    Cell(u32),
}

impl Answer {
    /// Whether a narrow leaf (16-bit hop slots) holds this answer: a next hop or a fallback
    /// cell number below 2^16.
    pub fn fits_narrow(self) -> bool {
        match self {
            Answer::Route(hop) => hop <= u32::from(u16::MAX),
            Answer::NoRoute => true,
            Answer::Cell(cell) => cell <= u32::from(u16::MAX),
        }
    }

    /// The hop slot and the flag bits (before shifting by the position) of the answer.
    fn encode(self) -> (u32, u32) {
        match self {
            Answer::Route(hop) => (hop, 0),
            Answer::NoRoute => (0, NO_ROUTE),
            Answer::Cell(cell) => (cell, CELL),
        }
    }
}

/// A leaf position's answer as the walk reads it back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decoded {
    /// The next hop.
    Hop(NextHop),
    /// No route covers the position.
    NoRoute,
    /// Search fallback cell `n`.
    Cell(u32),
}

/// A key type of the chunk trees: the address bits just below the direct-table bits, and the
/// line formats that hold them.
pub trait Key: Copy + Ord + Default + Debug + Send + Sync + 'static {
    /// Padding for unused key slots: never counted as "less than" any query.
    const PAD: Self;
    /// Keys of an inner node; its fan-out is one more.
    const INNER_KEYS: usize;
    /// Keys of a leaf; it answers one position more.
    const LEAF_KEYS: usize;
    /// Keys of a narrow leaf (16-bit hop slots).
    const NARROW_KEYS: usize;
    /// One cache line.
    type Line: Copy + Debug + Send + Sync + Pod + 'static;

    /// An inner node holding `keys` (at most `INNER_KEYS`), padding, and `link`.
    fn inner(keys: &[Self], link: u32) -> Self::Line;
    /// A leaf holding `keys` (at most the format's key count) and `keys.len() + 1` answers
    /// (each [`Answer::fits_narrow`] when `NARROW`).
    fn leaf<const NARROW: bool>(keys: &[Self], answers: &[Answer]) -> Self::Line;
    /// The link of an inner node.
    fn link(line: &Self::Line) -> u32;
    /// The hop slot of leaf position `r`.
    fn hop<const NARROW: bool>(line: &Self::Line, r: u32) -> u32;
    /// The flag word of a leaf: [`NO_ROUTE`] and [`CELL`] shifted left by each position.
    fn flags<const NARROW: bool>(line: &Self::Line) -> u32;
    /// The low bits of a coarse address, the bits this key type holds.
    fn from_coarse(coarse: u64) -> Self;
    /// The inverse: the key as the low bits of a coarse address.
    fn to_low(self) -> u64;
    /// Number of keys of an inner node less than `x`, with the node search `s`.
    fn rank_inner<S: Search>(s: S, line: &Self::Line, x: Self) -> u32;
    /// Number of keys of a leaf less than `x`, with the node search `s`.
    fn rank_leaf<S: Search, const NARROW: bool>(s: S, line: &Self::Line, x: Self) -> u32;
    /// The real keys of a node's first `slots` slots: those that are not padding (padding is
    /// never less than a query, so this bounds any rank).
    fn keys_in(line: &Self::Line, slots: usize) -> usize;
    /// Key slot `i` of a node.
    fn key_at(line: &Self::Line, i: usize) -> Self;
    /// Replaces the link of an inner node (a tree copied to another place in a segment).
    fn set_link(line: &mut Self::Line, link: u32);
    /// Replaces the hop slot of leaf position `r` (a fallback cell renumbered).
    fn set_hop<const NARROW: bool>(line: &mut Self::Line, r: u32, hop: u32);

    /// Keys of a leaf in the given format.
    fn leaf_keys(narrow: bool) -> usize {
        if narrow {
            Self::NARROW_KEYS
        } else {
            Self::LEAF_KEYS
        }
    }

    /// [`Key::leaf`] with the format chosen at run time (building, not walking).
    fn leaf_in(keys: &[Self], answers: &[Answer], narrow: bool) -> Self::Line {
        if narrow {
            Self::leaf::<true>(keys, answers)
        } else {
            Self::leaf::<false>(keys, answers)
        }
    }

    /// [`Key::rank_leaf`] with the format chosen at run time.
    fn rank_leaf_in<S: Search>(s: S, line: &Self::Line, x: Self, narrow: bool) -> u32 {
        if narrow {
            Self::rank_leaf::<S, true>(s, line, x)
        } else {
            Self::rank_leaf::<S, false>(s, line, x)
        }
    }

    /// [`Key::decode`] with the format chosen at run time.
    fn decode_in(line: &Self::Line, r: u32, narrow: bool) -> Decoded {
        if narrow {
            Self::decode::<true>(line, r)
        } else {
            Self::decode::<false>(line, r)
        }
    }

    /// Renumbers the fallback cells a leaf names: cell `c` becomes `renumber(c)`. `None`, the
    /// leaf part-renumbered, when `renumber` gives `None` or a number a narrow leaf's 16-bit
    /// slot cannot hold.
    fn renumber_cells(
        leaf: &mut Self::Line,
        narrow: bool,
        mut renumber: impl FnMut(u32) -> Option<u32>,
    ) -> Option<()> {
        let keys = Self::keys_in(leaf, Self::leaf_keys(narrow));
        for r in 0..=keys as u32 {
            if let Decoded::Cell(c) = Self::decode_in(leaf, r, narrow) {
                let n = renumber(c)?;
                if narrow && !Answer::Cell(n).fits_narrow() {
                    return None;
                }
                Self::set_hop_in(leaf, r, n, narrow);
            }
        }
        Some(())
    }

    /// [`Key::set_hop`] with the format chosen at run time.
    fn set_hop_in(line: &mut Self::Line, r: u32, hop: u32, narrow: bool) {
        if narrow {
            Self::set_hop::<true>(line, r, hop)
        } else {
            Self::set_hop::<false>(line, r, hop)
        }
    }

    /// The answer at position `r` (at most the format's key count) of a leaf: the inverse of
    /// [`Key::leaf`]'s encoding.
    #[inline(always)]
    fn decode<const NARROW: bool>(line: &Self::Line, r: u32) -> Decoded {
        let hop = Self::hop::<NARROW>(line, r);
        let flags = Self::flags::<NARROW>(line) >> r;
        if flags & CELL != 0 {
            Decoded::Cell(hop)
        } else if flags & NO_ROUTE != 0 {
            Decoded::NoRoute
        } else {
            Decoded::Hop(hop)
        }
    }
}

/// Flag word of a leaf's answers.
fn flag_word(answers: &[Answer]) -> u32 {
    answers
        .iter()
        .enumerate()
        .map(|(r, a)| a.encode().1 << r)
        .fold(0, |w, f| w | f)
}

/// Where a narrow IPv6 leaf keeps its flag word and its first hop slot pair (words).
const NARROW6_FLAGS: usize = 9;
const NARROW6_HOPS: usize = 10;

/// The 16-bit hop slot `r` of a narrow IPv6 leaf: half `r & 1` of word `NARROW6_HOPS + r / 2`
/// (little-endian), read as the two bytes it is, so the compiler emits one 16-bit load.
#[inline(always)]
fn narrow6_hop(line: &Line32, r: u32) -> u32 {
    let at = NARROW6_HOPS * 4 + 2 * (r as usize).min(9);
    let bytes = crate::storage::as_bytes(std::slice::from_ref(line));
    u32::from(u16::from_le_bytes([bytes[at], bytes[at + 1]]))
}

impl Key for u32 {
    const PAD: Self = u32::MAX;
    const INNER_KEYS: usize = 15;
    const LEAF_KEYS: usize = 7;
    const NARROW_KEYS: usize = 9;
    type Line = Line32;

    fn inner(keys: &[u32], link: u32) -> Line32 {
        let mut w = [u32::MAX; 16];
        w[..keys.len()].copy_from_slice(keys);
        w[15] = link;
        Line32(w)
    }
    fn leaf<const NARROW: bool>(keys: &[u32], answers: &[Answer]) -> Line32 {
        debug_assert_eq!(answers.len(), keys.len() + 1);
        let mut w = [u32::MAX; 16];
        w[..keys.len()].copy_from_slice(keys);
        if NARROW {
            w[NARROW6_FLAGS] = flag_word(answers);
            let mut line = Line32(w);
            for (r, a) in answers.iter().enumerate() {
                debug_assert!(a.fits_narrow());
                Self::set_hop::<true>(&mut line, r as u32, a.encode().0);
            }
            line
        } else {
            w[7] = flag_word(answers);
            for (r, a) in answers.iter().enumerate() {
                w[8 + r] = a.encode().0;
            }
            Line32(w)
        }
    }
    #[inline(always)]
    fn link(line: &Line32) -> u32 {
        line.0[15]
    }
    #[inline(always)]
    fn hop<const NARROW: bool>(line: &Line32, r: u32) -> u32 {
        if NARROW {
            narrow6_hop(line, r)
        } else {
            line.0[8 + (r as usize & 7)]
        }
    }
    #[inline(always)]
    fn flags<const NARROW: bool>(line: &Line32) -> u32 {
        line.0[if NARROW { NARROW6_FLAGS } else { 7 }]
    }
    #[inline(always)]
    fn from_coarse(coarse: u64) -> u32 {
        coarse as u32
    }
    fn to_low(self) -> u64 {
        u64::from(self)
    }
    #[inline(always)]
    fn rank_inner<S: Search>(s: S, line: &Line32, x: u32) -> u32 {
        s.rank32::<15>(line, x)
    }
    #[inline(always)]
    fn rank_leaf<S: Search, const NARROW: bool>(s: S, line: &Line32, x: u32) -> u32 {
        if NARROW {
            s.rank32::<{ Self::NARROW_KEYS }>(line, x)
        } else {
            s.rank32::<7>(line, x)
        }
    }
    fn keys_in(line: &Line32, slots: usize) -> usize {
        line.0[..slots].iter().filter(|&&k| k != Self::PAD).count()
    }
    fn key_at(line: &Line32, i: usize) -> u32 {
        line.0[i]
    }
    fn set_link(line: &mut Line32, link: u32) {
        line.0[15] = link;
    }
    fn set_hop<const NARROW: bool>(line: &mut Line32, r: u32, hop: u32) {
        if NARROW {
            let r = r.min(9);
            let word = &mut line.0[NARROW6_HOPS + (r as usize >> 1)];
            let shift = (r & 1) * 16;
            *word = (*word & !(0xffff << shift)) | ((hop & 0xffff) << shift);
        } else {
            line.0[8 + (r as usize & 7)] = hop;
        }
    }
}

/// The 32-bit word at halves `i, i + 1` of a [`Line16`].
#[inline(always)]
fn word16(line: &Line16, i: usize) -> u32 {
    u32::from(line.0[i]) | (u32::from(line.0[i + 1]) << 16)
}

/// Stores a 32-bit word at halves `i, i + 1`.
fn put_word16(h: &mut [u16; 32], i: usize, w: u32) {
    h[i] = w as u16;
    h[i + 1] = (w >> 16) as u16;
}

/// Where a narrow IPv4 leaf keeps its flag word (halves) and its first hop slot.
const NARROW_FLAGS: usize = 14;
const NARROW_HOPS: usize = 16;

impl Key for u16 {
    const PAD: Self = u16::MAX;
    const INNER_KEYS: usize = 30;
    const LEAF_KEYS: usize = 9;
    const NARROW_KEYS: usize = 14;
    type Line = Line16;

    fn inner(keys: &[u16], link: u32) -> Line16 {
        let mut h = [u16::MAX; 32];
        h[..keys.len()].copy_from_slice(keys);
        put_word16(&mut h, 30, link);
        Line16(h)
    }
    fn leaf<const NARROW: bool>(keys: &[u16], answers: &[Answer]) -> Line16 {
        debug_assert_eq!(answers.len(), keys.len() + 1);
        let mut h = [u16::MAX; 32];
        h[..keys.len()].copy_from_slice(keys);
        if NARROW {
            put_word16(&mut h, NARROW_FLAGS, flag_word(answers));
            for (r, a) in answers.iter().enumerate() {
                debug_assert!(a.fits_narrow());
                h[NARROW_HOPS + r] = a.encode().0 as u16;
            }
        } else {
            put_word16(&mut h, 10, flag_word(answers));
            for (r, a) in answers.iter().enumerate() {
                put_word16(&mut h, 12 + 2 * r, a.encode().0);
            }
        }
        Line16(h)
    }
    #[inline(always)]
    fn link(line: &Line16) -> u32 {
        word16(line, 30)
    }
    #[inline(always)]
    fn hop<const NARROW: bool>(line: &Line16, r: u32) -> u32 {
        // `r` is at most the format's key count, so the index stays inside the line; the
        // `min` lets the compiler see that and drop the bounds check.
        if NARROW {
            u32::from(line.0[NARROW_HOPS + (r as usize).min(Self::NARROW_KEYS)])
        } else {
            word16(line, 12 + 2 * (r as usize).min(9))
        }
    }
    #[inline(always)]
    fn flags<const NARROW: bool>(line: &Line16) -> u32 {
        word16(line, if NARROW { NARROW_FLAGS } else { 10 })
    }
    #[inline(always)]
    fn from_coarse(coarse: u64) -> u16 {
        coarse as u16
    }
    fn to_low(self) -> u64 {
        u64::from(self)
    }
    #[inline(always)]
    fn rank_inner<S: Search>(s: S, line: &Line16, x: u16) -> u32 {
        s.rank16::<30>(line, x)
    }
    #[inline(always)]
    fn rank_leaf<S: Search, const NARROW: bool>(s: S, line: &Line16, x: u16) -> u32 {
        if NARROW {
            s.rank16::<{ Self::NARROW_KEYS }>(line, x)
        } else {
            s.rank16::<9>(line, x)
        }
    }
    fn keys_in(line: &Line16, slots: usize) -> usize {
        line.0[..slots].iter().filter(|&&k| k != Self::PAD).count()
    }
    fn key_at(line: &Line16, i: usize) -> u16 {
        line.0[i]
    }
    fn set_link(line: &mut Line16, link: u32) {
        put_word16(&mut line.0, 30, link);
    }
    fn set_hop<const NARROW: bool>(line: &mut Line16, r: u32, hop: u32) {
        if NARROW {
            line.0[NARROW_HOPS + (r as usize).min(Self::NARROW_KEYS)] = hop as u16;
        } else {
            put_word16(&mut line.0, 12 + 2 * (r as usize).min(9), hop);
        }
    }
}

/// How PlanB splits an address of one family: implemented for `u32` and `u128`.
pub trait Family: Address {
    /// The chunk-tree key.
    type Key: Key;
    /// Top bits resolved by direct table + tree (32 for IPv4, 48 for IPv6).
    const COARSE_BITS: u32;
    /// Whether batches may take the staged walk ([`super::staged`]): IPv6, whose trees are
    /// deep enough for it to pay (an IPv4 walk is two steps).
    const STAGED: bool;
    /// Whether the uniform-depth batch asks for its input addresses non-temporally
    /// ([`super::search::Search::prefetch_input`]). IPv4: yes, the walk's lines are most of
    /// L2 and the 4-byte addresses are read once (et-2015 matched: ordinary prefetches
    /// 0.97–0.98×). IPv6: no: its five-step groups read about 40 KiB of structure lines
    /// between a prefetch and its use, and a non-temporal line, kept in L1 only, is gone by
    /// then and read from memory; ordinary prefetches ran dfz10 matched at 1.18× (in one
    /// process, `scripts/ab-planb.sh`, third machine).
    const INPUT_NTA: bool;

    /// The top [`Family::COARSE_BITS`] bits of the address.
    fn coarse(self) -> u64;
    /// The first address of a coarse cell.
    fn from_coarse(coarse: u64) -> Self;
    /// True when the bits below the coarse bits are all zero (a cell-aligned boundary).
    fn is_cell_aligned(self) -> bool;

    /// Runs the staged batch ([`super::staged`]) of `addrs` into `out` when the family has
    /// one and `t` can take it; false, with nothing written, otherwise.
    fn staged_batch<I: AddressInput<Self>>(
        _t: &super::PlanB<Self>,
        _addrs: &[I],
        _out: &mut [NextHop],
        _miss: NextHop,
    ) -> bool {
        false
    }
}

impl Family for u32 {
    type Key = u16;
    const COARSE_BITS: u32 = 32;
    const STAGED: bool = false;
    const INPUT_NTA: bool = true;

    #[inline(always)]
    fn coarse(self) -> u64 {
        u64::from(self)
    }
    #[inline(always)]
    fn from_coarse(coarse: u64) -> u32 {
        coarse as u32
    }
    #[inline(always)]
    fn is_cell_aligned(self) -> bool {
        true
    }
}

impl Family for u128 {
    type Key = u32;
    const COARSE_BITS: u32 = 48;
    const STAGED: bool = true;
    const INPUT_NTA: bool = false;

    #[inline(always)]
    fn coarse(self) -> u64 {
        (self >> 80) as u64
    }
    #[inline(always)]
    fn from_coarse(coarse: u64) -> u128 {
        u128::from(coarse) << 80
    }
    #[inline(always)]
    fn is_cell_aligned(self) -> bool {
        self & ((1u128 << 80) - 1) == 0
    }

    #[inline(always)]
    fn staged_batch<I: AddressInput<u128>>(
        t: &super::PlanB<u128>,
        addrs: &[I],
        out: &mut [NextHop],
        miss: NextHop,
    ) -> bool {
        super::staged::batch(t, addrs, out, miss)
    }
}

/// The direct-table index (top 16 bits) of a coarse address.
#[inline(always)]
pub fn chunk_of<A: Family>(coarse: u64) -> usize {
    (coarse >> (A::COARSE_BITS - DIRECT_BITS)) as usize
}

/// Children of an inner node: one more than its keys.
#[inline(always)]
pub const fn fanout<K: Key>() -> usize {
    K::INNER_KEYS + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_one_cache_line() {
        assert_eq!(std::mem::size_of::<Line16>(), 64);
        assert_eq!(std::mem::align_of::<Line16>(), 64);
        assert_eq!(std::mem::size_of::<Line32>(), 64);
        assert_eq!(std::mem::align_of::<Line32>(), 64);
    }

    #[test]
    fn coarse_split_of_ipv6() {
        let a: u128 = 0x2001_0db8_0001_0000_0000_0000_0000_0001;
        assert_eq!(a.coarse(), 0x2001_0db8_0001);
        assert_eq!(chunk_of::<u128>(a.coarse()), 0x2001);
        assert_eq!(<u32 as Key>::from_coarse(a.coarse()), 0x0db8_0001);
        assert!(!a.is_cell_aligned());
        assert!(u128::from_coarse(a.coarse()).is_cell_aligned());
    }

    #[test]
    fn coarse_split_of_ipv4() {
        let a: u32 = 0xc0a8_0102;
        assert_eq!(chunk_of::<u32>(a.coarse()), 0xc0a8);
        assert_eq!(<u16 as Key>::from_coarse(a.coarse()), 0x0102);
    }

    /// The answer a decoded leaf position stands for.
    fn answer_of(d: Decoded) -> Answer {
        match d {
            Decoded::Cell(c) => Answer::Cell(c),
            Decoded::NoRoute => Answer::NoRoute,
            Decoded::Hop(h) => Answer::Route(h),
        }
    }

    /// Every position of a full leaf decodes to the answer it was built with, and the keys
    /// never overlap the answer words.
    fn leaf_round_trip<K: Key>(keys: &[K]) {
        let answers: Vec<Answer> = (0..=keys.len() as u32)
            .map(|r| match r % 3 {
                0 => Answer::Route(u32::MAX - r),
                1 => Answer::NoRoute,
                _ => Answer::Cell(r * 1000),
            })
            .collect();
        let line = K::leaf::<false>(keys, &answers);
        for (r, a) in answers.iter().enumerate() {
            assert_eq!(
                answer_of(K::decode::<false>(&line, r as u32)),
                *a,
                "position {r}"
            );
        }
        let inner = K::inner(keys, 0xdead_beef);
        assert_eq!(K::link(&inner), 0xdead_beef);
    }

    #[test]
    fn leaves_hold_their_answers() {
        leaf_round_trip::<u32>(&[1, 2, 3, 4, 5, 6, u32::MAX - 1]);
        leaf_round_trip::<u16>(&[1, 2, 3, 4, 5, 6, 7, 8, u16::MAX - 1]);
        leaf_round_trip::<u32>(&[]);
    }

    /// A full narrow leaf: every position decodes to its answer (the widest 16-bit hop and a
    /// fallback cell included), and the keys, flags and hop slots never overlap.
    fn narrow_round_trip<K: Key>(keys: &[K]) {
        let answers: Vec<Answer> = (0..=keys.len() as u32)
            .map(|r| match r % 4 {
                0 => Answer::Route(u32::from(u16::MAX) - r),
                1 => Answer::NoRoute,
                2 => Answer::Cell(r * 1000),
                _ => Answer::Route(r),
            })
            .collect();
        assert!(answers.iter().all(|a| a.fits_narrow()));
        let line = K::leaf::<true>(keys, &answers);
        assert_eq!(K::keys_in(&line, K::NARROW_KEYS), keys.len());
        for (r, a) in answers.iter().enumerate() {
            assert_eq!(
                answer_of(K::decode::<true>(&line, r as u32)),
                *a,
                "position {r}"
            );
        }
        for (i, &k) in keys.iter().enumerate() {
            assert_eq!(K::key_at(&line, i), k);
        }
    }

    #[test]
    fn narrow_leaves_hold_their_answers() {
        assert!(!Answer::Route(1 << 16).fits_narrow());
        assert!(!Answer::Cell(1 << 16).fits_narrow());
        let keys16: Vec<u16> = (1..=13).chain([u16::MAX - 1]).collect();
        narrow_round_trip::<u16>(&keys16);
        let keys32: Vec<u32> = (1..=8).chain([u32::MAX - 1]).collect();
        narrow_round_trip::<u32>(&keys32);
        narrow_round_trip::<u32>(&[]);
    }
}
