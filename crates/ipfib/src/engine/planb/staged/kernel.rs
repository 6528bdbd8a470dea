//! The staged batch, written once for every backend: the blocks the staged tables serve are
//! split into answered lanes (written at once) and walk lanes, packed by where they start and
//! walked by the uniform walk's pipeline; the other blocks take the uniform walk.
//!
//! A backend brings one thing of its own, the *staging step* ([`Kernel::stage`]: read a
//! block's entries, write the answers, pack the walk lanes), and gets the rest compiled with
//! its instruction set enabled by [`kernel!`]: the portable step ([`stage_portable`], the
//! specification every other step is tested against) for [`Scalar`], and AVX-512's gathers and
//! compresses ([`super::avx512`]) for `Avx512`, AVX2's gathers and left-pack permutations
//! ([`super::avx2`]) for `Avx2`. NEON runs the portable step compiled with its instruction
//! set. Which backends take the staged walk by default is decided in one place,
//! [`super::rule`].
//!
//! Scratch space: the packed lanes of a batch (about 200 KiB, [`Classes`]) are allocated once
//! per thread, on its first staged block, and kept for its later batches (see
//! [`PACKED_LANES`]); no other allocation is made on the lookup path.

use super::{
    blocks, is_split, sample, Rule, Staged, ANSWERED, ANSWERED_HOP, ANSWERED_MISS, BLOCK,
    ENTRY_NODE, SUB_BASE, SUB_SHIFT_AT,
};
use crate::addr::AddressInput;
use crate::engine::planb::layout::Family;
use crate::engine::planb::search::scalar::Scalar;
use crate::engine::planb::search::Search;
use crate::engine::planb::walk::{
    advance, batch_of_depth, finish, lanes, pipeline, step, Group, View, IN_FLIGHT, LANES,
};
use crate::engine::planb::PlanB;
use crate::route_table::NextHop;

/// How many steps of 16 addresses ahead the staging step asks for its input (as ordinary
/// lines: 1 KiB ahead as non-temporal lines, the staging step waited on memory for most of
/// its time on a Xeon with AVX-512, where a line past 8 MiB takes 150 ns). In one process
/// (`scripts/ab-planb.sh`, dfz10 uniform, 5–9 rounds, against 4 steps non-temporal): ordinary
/// prefetches 4 steps ahead 1.51×, 8 steps 1.60×, 16 steps 1.64–1.72×, 32 steps 1.69×, 64
/// steps 1.66×; non-temporal ones 16 steps ahead 1.11×, 32 steps 1.03×.
pub const STAGE_AHEAD: usize = 16;

/// A backend's staged batch: its staging step, and the walk compiled with its instruction set
/// (made by [`kernel!`], so that a backend is its staging step plus one line).
pub(in crate::engine::planb) trait Kernel: Search {
    /// Splits `block` (a multiple of 16 addresses, at most [`BLOCK`]): every lane's answer
    /// from the staged tables goes to `out` (walk lanes get theirs later, so theirs may be
    /// anything until then), and the walk lanes are appended to their class in `classes`
    /// (`[root, mid, near, leaf]`, by the node they enter at, [`Classes`]).
    ///
    /// `SWAP`: `I` holds network-order bytes (a step that loads addresses as vectors swaps
    /// them; one that reads them through [`AddressInput::address`] need not).
    ///
    /// # Safety
    /// `block` is inside `addrs` and `out`, `staged` were made by [`Staged::of`] or
    /// [`Staged::with_splits`], each class holds fewer than [`LANES`] lanes, `I` is a `u128`
    /// (`SWAP` false) or its network-order bytes (`SWAP` true), and block positions fit 32
    /// bits.
    unsafe fn stage<I: AddressInput<u128>, const SWAP: bool>(
        self,
        staged: &Staged,
        addrs: &[I],
        block: std::ops::Range<usize>,
        out: &mut [NextHop],
        miss: NextHop,
        classes: &mut [Packed; 4],
    );

    /// The staged batch of `addrs` into `out`: each block ([`blocks`]) whose sample says the
    /// staged tables answer enough of it is staged, runs of other blocks take the uniform
    /// walk.
    ///
    /// # Safety
    /// `t` satisfies the structure invariants, has one segment and a depth of
    /// [`super::STAGED_DEPTHS`], `staged` are its staged tables, `I` is as for
    /// [`Kernel::stage`], and the batch is shorter than 2^32.
    unsafe fn walk<I: AddressInput<u128>, const SWAP: bool>(
        t: &PlanB<u128>,
        s: Self,
        staged: &Staged,
        rule: Rule,
        addrs: &[I],
        out: &mut [NextHop],
        miss: NextHop,
    );

    /// One staged block ([`Kernel::stage`], then each class's full groups through
    /// [`walk_packed`]). Out of line, as is [`Kernel::rests`], so that the uniform walk the
    /// caller inlines for blocks not staged is compiled as it would be alone, whatever the
    /// staged code around it (a call per 4,096 addresses costs nothing measurable).
    ///
    /// # Safety
    /// As for [`Kernel::stage`] and [`walk_packed`], with `v` the view of a table of depth
    /// `DEPTH`.
    #[allow(clippy::too_many_arguments)]
    unsafe fn block<I: AddressInput<u128>, const SWAP: bool, const N: bool, const DEPTH: usize>(
        v: View<'_, u128, Self, false, N>,
        staged: &Staged,
        addrs: &[I],
        block: std::ops::Range<usize>,
        out: &mut [NextHop],
        miss: NextHop,
        classes: &mut Classes,
    );

    /// The lanes each class holds at the end of a batch ([`walk_rest`]).
    ///
    /// # Safety
    /// As for [`walk_rest`], with `v` the view of a table of depth `DEPTH`.
    unsafe fn rests<I: AddressInput<u128>, const N: bool, const DEPTH: usize>(
        v: View<'_, u128, Self, false, N>,
        classes: &mut Classes,
        addrs: &[I],
        out: &mut [NextHop],
        miss: NextHop,
    );
}

/// Implements [`Kernel`] for a backend token: its staging step `$stage` (a function of the
/// token and the [`Kernel::stage`] arguments), and the walk, the block and the rests compiled
/// with the attributes given (the backend's `#[target_feature]`, none for the portable one),
/// so that the node search and the staging step inline into them.
macro_rules! kernel {
    ($token:ty, stage = $stage:ident $(, #[$attr:meta])*) => {
        impl $crate::engine::planb::staged::kernel::Kernel for $token {
            #[inline(always)]
            unsafe fn stage<I: AddressInput<u128>, const SWAP: bool>(
                self,
                staged: &Staged,
                addrs: &[I],
                block: std::ops::Range<usize>,
                out: &mut [NextHop],
                miss: NextHop,
                classes: &mut [Packed; 4],
            ) {
                // SAFETY: the caller's contract is the staging step's.
                unsafe { $stage::<I, SWAP>(self, staged, addrs, block, out, miss, classes) }
            }

            #[inline(always)]
            unsafe fn walk<I: AddressInput<u128>, const SWAP: bool>(
                t: &PlanB<u128>,
                s: Self,
                staged: &Staged,
                rule: Rule,
                addrs: &[I],
                out: &mut [NextHop],
                miss: NextHop,
            ) {
                $(#[$attr])*
                unsafe fn walk<I: AddressInput<u128>, const SWAP: bool>(
                    t: &PlanB<u128>,
                    s: $token,
                    staged: &Staged,
                    rule: Rule,
                    addrs: &[I],
                    out: &mut [NextHop],
                    miss: NextHop,
                ) {
                    // SAFETY: the caller's contract (`Kernel::walk`).
                    unsafe { staged_walk::<$token, I, SWAP>(t, s, staged, rule, addrs, out, miss) }
                }
                // SAFETY: the caller's contract; the token proves the CPU features.
                unsafe { walk::<I, SWAP>(t, s, staged, rule, addrs, out, miss) }
            }

            #[inline(always)]
            unsafe fn block<
                I: AddressInput<u128>,
                const SWAP: bool,
                const N: bool,
                const DEPTH: usize,
            >(
                v: View<'_, u128, Self, false, N>,
                staged: &Staged,
                addrs: &[I],
                block: std::ops::Range<usize>,
                out: &mut [NextHop],
                miss: NextHop,
                classes: &mut Classes,
            ) {
                $(#[$attr])*
                #[inline(never)]
                unsafe fn block_of<
                    I: AddressInput<u128>,
                    const SWAP: bool,
                    const N: bool,
                    const DEPTH: usize,
                >(
                    v: View<'_, u128, $token, false, N>,
                    staged: &Staged,
                    addrs: &[I],
                    block: std::ops::Range<usize>,
                    out: &mut [NextHop],
                    miss: NextHop,
                    classes: &mut Classes,
                ) {
                    // SAFETY: the caller's contract (`Kernel::block`).
                    unsafe {
                        staged_block::<$token, I, SWAP, N, DEPTH>(
                            v, staged, addrs, block, out, miss, classes,
                        )
                    }
                }
                // SAFETY: the caller's contract; the token in `v` proves the CPU features.
                unsafe { block_of::<I, SWAP, N, DEPTH>(v, staged, addrs, block, out, miss, classes) }
            }

            #[inline(always)]
            unsafe fn rests<I: AddressInput<u128>, const N: bool, const DEPTH: usize>(
                v: View<'_, u128, Self, false, N>,
                classes: &mut Classes,
                addrs: &[I],
                out: &mut [NextHop],
                miss: NextHop,
            ) {
                $(#[$attr])*
                #[inline(never)]
                unsafe fn rests<I: AddressInput<u128>, const N: bool, const DEPTH: usize>(
                    v: View<'_, u128, $token, false, N>,
                    classes: &mut Classes,
                    addrs: &[I],
                    out: &mut [NextHop],
                    miss: NextHop,
                ) {
                    // SAFETY: the caller's contract (`Kernel::rests`).
                    unsafe { walk_rests::<$token, I, N, DEPTH>(v, classes, addrs, out, miss) }
                }
                // SAFETY: the caller's contract; the token in `v` proves the CPU features.
                unsafe { rests::<I, N, DEPTH>(v, classes, addrs, out, miss) }
            }
        }
    };
}

kernel!(Scalar, stage = stage_portable);
#[cfg(target_arch = "aarch64")]
kernel!(crate::cpu::Neon, stage = stage_portable);

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::super::avx2::stage as stage_avx2;
    use super::super::avx512::stage as stage_avx512;
    use super::*;
    use crate::engine::planb::search::{avx2::Avx2, avx512::Avx512};

    kernel!(Avx2, stage = stage_avx2, #[target_feature(enable = "avx2,popcnt")]);
    kernel!(
        Avx512,
        stage = stage_avx512,
        #[target_feature(enable = "avx512f,avx512bw,popcnt")]
    );
}

/// [`Kernel::walk`] for any backend, dispatching on the leaf format and depth once per batch.
///
/// # Safety
/// As for [`Kernel::walk`].
#[inline(always)]
unsafe fn staged_walk<S: Kernel, I: AddressInput<u128>, const SWAP: bool>(
    t: &PlanB<u128>,
    s: S,
    staged: &Staged,
    rule: Rule,
    addrs: &[I],
    out: &mut [NextHop],
    miss: NextHop,
) {
    // SAFETY: caller's contract; the depth passed is the table's own.
    unsafe {
        match (t.tree().narrow(), t.tree().depth()) {
            (false, 3) => {
                staged_walk_in::<S, I, SWAP, false, 3>(t, s, staged, rule, addrs, out, miss)
            }
            (false, 4) => {
                staged_walk_in::<S, I, SWAP, false, 4>(t, s, staged, rule, addrs, out, miss)
            }
            (false, 5) => {
                staged_walk_in::<S, I, SWAP, false, 5>(t, s, staged, rule, addrs, out, miss)
            }
            (false, 6) => {
                staged_walk_in::<S, I, SWAP, false, 6>(t, s, staged, rule, addrs, out, miss)
            }
            (true, 3) => {
                staged_walk_in::<S, I, SWAP, true, 3>(t, s, staged, rule, addrs, out, miss)
            }
            (true, 4) => {
                staged_walk_in::<S, I, SWAP, true, 4>(t, s, staged, rule, addrs, out, miss)
            }
            (true, 5) => {
                staged_walk_in::<S, I, SWAP, true, 5>(t, s, staged, rule, addrs, out, miss)
            }
            (true, 6) => {
                staged_walk_in::<S, I, SWAP, true, 6>(t, s, staged, rule, addrs, out, miss)
            }
            _ => crate::engine::planb::walk::batch(t, s, addrs, out, miss),
        }
    }
}

/// [`staged_walk`] for leaf format `N` and depth `DEPTH`.
///
/// # Safety
/// As for [`Kernel::walk`].
#[inline(always)]
unsafe fn staged_walk_in<
    S: Kernel,
    I: AddressInput<u128>,
    const SWAP: bool,
    const N: bool,
    const DEPTH: usize,
>(
    t: &PlanB<u128>,
    s: S,
    staged: &Staged,
    rule: Rule,
    addrs: &[I],
    out: &mut [NextHop],
    miss: NextHop,
) {
    let v = View::<u128, S, false, N>::new(t.tree(), s);
    let n = addrs.len().min(out.len());
    // The thread's classes, taken on its first staged block and kept for its next batches
    // (`PACKED_LANES`).
    let mut packed: Option<Box<Classes>> = None;
    // The start of the run of blocks not staged yet: they take the uniform walk together,
    // so a trace that never stages pays one sample per block and nothing else.
    let mut run = 0;
    let mut blocks = blocks(n).peekable();
    while let Some(block) = blocks.next() {
        // The next block's sample, asked for now: read cold, its eight lines were a wait
        // in front of every block.
        if let Some(next) = blocks.peek() {
            for a in sample(&addrs[next.clone()]) {
                s.prefetch(a);
            }
        }
        if staged.stages(rule, &addrs[block.clone()], |a| a.address().coarse()) {
            // SAFETY: caller's contract, as above; `DEPTH` is the table's depth.
            unsafe {
                batch_of_depth::<u128, I, S, NextHop, false, N, 0, DEPTH>(
                    v,
                    &addrs[run..block.start],
                    &mut out[run..block.start],
                    miss,
                );
                let classes = &mut **packed
                    .get_or_insert_with(|| PACKED_LANES.take().unwrap_or_else(classes));
                S::block::<I, SWAP, N, DEPTH>(v, staged, addrs, block.clone(), out, miss, classes);
            }
            run = block.end;
        }
    }
    // SAFETY: as above.
    unsafe {
        batch_of_depth::<u128, I, S, NextHop, false, N, 0, DEPTH>(
            v,
            &addrs[run..n],
            &mut out[run..n],
            miss,
        );
        if let Some(classes) = packed.as_deref_mut() {
            S::rests::<I, N, DEPTH>(v, classes, addrs, out, miss);
        }
    };
    if packed.is_some() {
        PACKED_LANES.set(packed);
    }
}

std::thread_local! {
    /// Each thread's packed walk lanes between batches (empty: every lane is walked by the
    /// end of a batch): one allocation of [`Classes`] per thread that runs a staged batch,
    /// freed when the thread ends. Made anew on each call, they were zeroed for every batch
    /// that staged a block: with batches of 4,096 addresses (`ipfib bench`'s default) that
    /// was about 150 KiB written per batch, and it pushed the table's lines out of L1.
    static PACKED_LANES: std::cell::Cell<Option<Box<Classes>>> =
        const { std::cell::Cell::new(None) };
}

/// One staged block for [`Kernel::block`].
///
/// # Safety
/// As for [`Kernel::block`].
#[inline(always)]
unsafe fn staged_block<
    S: Kernel,
    I: AddressInput<u128>,
    const SWAP: bool,
    const N: bool,
    const DEPTH: usize,
>(
    v: View<'_, u128, S, false, N>,
    staged: &Staged,
    addrs: &[I],
    block: std::ops::Range<usize>,
    out: &mut [NextHop],
    miss: NextHop,
    classes: &mut Classes,
) {
    // SAFETY: caller's contract.
    unsafe {
        v.s.stage::<I, SWAP>(staged, addrs, block, out, miss, &mut classes.packed);
        let [root, mid, near, leaf] = &mut classes.packed;
        let states = &mut classes.states;
        walk_packed::<S, I, N, DEPTH, false>(v, root, states, addrs, out, miss);
        walk_packed::<S, I, N, 3, true>(v, mid, states, addrs, out, miss);
        walk_packed::<S, I, N, 2, true>(v, near, states, addrs, out, miss);
        walk_packed::<S, I, N, 1, true>(v, leaf, states, addrs, out, miss);
    }
}

/// The lanes each class holds at the end of a batch, for [`Kernel::rests`].
///
/// # Safety
/// As for [`Kernel::rests`].
#[inline(always)]
unsafe fn walk_rests<S: Search, I: AddressInput<u128>, const N: bool, const DEPTH: usize>(
    v: View<'_, u128, S, false, N>,
    classes: &mut Classes,
    addrs: &[I],
    out: &mut [NextHop],
    miss: NextHop,
) {
    let [root, mid, near, leaf] = &mut classes.packed;
    // SAFETY: caller's contract.
    unsafe {
        walk_rest::<S, I, N, DEPTH>(v, root, addrs, out, miss);
        walk_rest::<S, I, N, 3>(v, mid, addrs, out, miss);
        walk_rest::<S, I, N, 2>(v, near, addrs, out, miss);
        walk_rest::<S, I, N, 1>(v, leaf, addrs, out, miss);
    }
}

/// Slots of a [`Packed`]: fewer than [`LANES`] lanes carried over from earlier blocks, a
/// block's, and the 16 that a compressed store writes past the last.
const PACKED: usize = LANES + BLOCK + 16;

/// Walk lanes, packed: key bits, entry node and position in the batch. A block's lanes are
/// appended, the full groups walked, and the rest (fewer than [`LANES`]) carried to the
/// next block's, so a lane walks alone only at the end of a batch.
pub struct Packed {
    pub(super) x: [u32; PACKED],
    pub(super) node: [u32; PACKED],
    pub(super) at: [u32; PACKED],
    pub(super) len: usize,
}

impl Packed {
    fn new() -> Self {
        Packed {
            x: [0; PACKED],
            node: [0; PACKED],
            at: [0; PACKED],
            len: 0,
        }
    }
}

/// The walk lanes of a block by where they enter: a chunk's entry node (`root`), the
/// inner node two above their leaf (`mid`, [`super::ENTER_MID`]), the one above their leaf
/// (`near`, [`super::ENTER_NEAR`]), their leaf (`leaf`, [`super::ENTER_LEAF`]).
pub struct Classes {
    packed: [Packed; 4],
    /// The pipeline's groups, for each class's walk in turn (made once, like the rest).
    states: [Group<u32, 0>; IN_FLIGHT],
}

/// Empty classes, on the heap (about 200 KiB; a block fills at most 48 KiB of them).
fn classes() -> Box<Classes> {
    Box::new(Classes {
        packed: std::array::from_fn(|_| Packed::new()),
        states: std::array::from_fn(|_| Group::new()),
    })
}

/// The class ([`Classes`]: 0 root, 1 mid, 2 near, 3 leaf) of a walk entry, by its marks
/// (`entry >> 28 & 3`: none, [`super::ENTER_NEAR`], [`super::ENTER_LEAF`], both).
const CLASS_OF_MARKS: [usize; 4] = [0, 2, 3, 1];

/// The portable staging step ([`Kernel::stage`]), one address at a time and without a
/// branch on what the entry says except for lanes in split chunks: every lane's answer is
/// written to `out` (a walk lane's is overwritten by its walk), and every lane is written to
/// the next slot of its class, which only a walk lane then claims. The specification the
/// vector steps are tested against (`staged::tests`), and AVX2's step.
///
/// # Safety
/// As for [`Kernel::stage`]. (With [`Scalar`], every access is checked: a broken contract
/// panics.)
#[inline(always)]
pub unsafe fn stage_portable<I: AddressInput<u128>, const SWAP: bool>(
    s: impl Search,
    staged: &Staged,
    addrs: &[I],
    block: std::ops::Range<usize>,
    out: &mut [NextHop],
    miss: NextHop,
    classes: &mut [Packed; 4],
) {
    const STEP: usize = 16;
    let mut len = classes.each_ref().map(|p| p.len);
    for at in block {
        if at % STEP == 0 {
            let ahead = at + STAGE_AHEAD * STEP;
            if let Some(ahead) = addrs.get(ahead..ahead + STEP) {
                s.prefetch_input::<_, false>(ahead);
            }
        }
        // SAFETY: `at` is in the block, inside `addrs` and `out`; a chunk (the top 16 bits
        // of a 48-bit coarse address) is below 2^16 = `entries.len()`, and a split entry's
        // sub-table index is inside `sub` (as `Staged::of` and `Staged::with_splits` make
        // them); a class's `len` stays below `PACKED` (fewer than `LANES` before the block,
        // at most one more per address of it). All caller's contract.
        unsafe {
            let coarse = s.at(addrs, at).address().coarse();
            let key = coarse as u32;
            let mut entry = *s.at(&staged.entries, (coarse >> 32) as usize);
            if is_split(entry) {
                let shift = (entry >> SUB_SHIFT_AT) & 31;
                entry = *s.at(
                    &staged.sub,
                    (entry & SUB_BASE) as usize + (key >> shift) as usize,
                );
            }
            let walk = entry & ANSWERED == 0;
            *s.at_mut(out, at) = if entry & ANSWERED_MISS != 0 {
                miss
            } else {
                entry & ANSWERED_HOP
            };
            let class = CLASS_OF_MARKS[(entry >> 28 & 3) as usize];
            let p = s.at_mut(classes, class);
            let slot = *s.at(&len, class);
            *s.at_mut(&mut p.x, slot) = key;
            *s.at_mut(&mut p.node, slot) = entry & ENTRY_NODE;
            *s.at_mut(&mut p.at, slot) = at as u32;
            *s.at_mut(&mut len, class) += usize::from(walk);
        }
    }
    for (p, len) in classes.iter_mut().zip(len) {
        p.len = len;
    }
}

/// The full groups of [`LANES`] of one class's packed walk lanes through the pipeline,
/// each `SEARCHES` searches from its packed node (the table's depth from an entry node,
/// fewer from a node a sub-table named), each answer written at its lane's position; the
/// rest are moved to the front of `p`, for the next block or [`walk_rest`].
///
/// `DEEP`: the nodes are deeper than entry nodes, and not likely in L1 as the few entry
/// nodes are, so a group asks for its nodes' lines as it enters.
///
/// # Safety
/// As for [`Kernel::walk`]; `p` was filled by [`Kernel::stage`] from `addrs`, and each of its
/// nodes is `SEARCHES` searches from its leaf.
#[inline(always)]
unsafe fn walk_packed<
    S: Search,
    I: AddressInput<u128>,
    const N: bool,
    const SEARCHES: usize,
    const DEEP: bool,
>(
    v: View<'_, u128, S, false, N>,
    p: &mut Packed,
    states: &mut [Group<u32, 0>; IN_FLIGHT],
    addrs: &[I],
    out: &mut [NextHop],
    miss: NextHop,
) {
    let groups = p.len / LANES;
    // `pipeline` has each group enter, take its `SEARCHES - 1` inner steps in order one
    // round apart, then search its leaves, as `advance` and `finish` require.
    pipeline!(groups, SEARCHES, states,
        enter(round, g) {
            g.x.copy_from_slice(&p.x[lanes(round)]);
            g.node.copy_from_slice(&p.node[lanes(round)]);
            if DEEP {
                for &node in &g.node {
                    // SAFETY: the packed nodes are lines of the table (`stage`).
                    unsafe { v.s.prefetch(v.s.at(v.home, node as usize)) };
                }
            }
        }
        step(g) {
            // SAFETY: the packed nodes are nodes of the table, each `SEARCHES` searches
            // from its leaf, and the group has taken the steps before this one.
            unsafe { advance(v, g, false) }
        }
        finish(group, g) {
            for (i, &at) in p.at[lanes(group)].iter().enumerate() {
                let at = at as usize;
                // SAFETY: the group is at its leaves; the positions in `p.at` are
                // positions of this batch's blocks, inside `addrs` and `out` (`stage`).
                unsafe {
                    let addr = v.s.at(addrs, at).address();
                    *v.s.at_mut(out, at) = finish(v, v.s.at(v.home, g.node[i] as usize), || 0, g.x[i], addr, miss);
                }
            }
        }
    );
    let walked = groups * LANES;
    p.x.copy_within(walked..p.len, 0);
    p.node.copy_within(walked..p.len, 0);
    p.at.copy_within(walked..p.len, 0);
    p.len -= walked;
}

/// The lanes [`walk_packed`] left in `p` (fewer than a group), one at a time: the end of
/// a batch.
///
/// # Safety
/// As for [`walk_packed`].
#[inline(always)]
unsafe fn walk_rest<S: Search, I: AddressInput<u128>, const N: bool, const SEARCHES: usize>(
    v: View<'_, u128, S, false, N>,
    p: &mut Packed,
    addrs: &[I],
    out: &mut [NextHop],
    miss: NextHop,
) {
    for i in 0..p.len {
        let (x, mut node, at) = (p.x[i], p.node[i], p.at[i] as usize);
        // SAFETY: as for `walk_packed`.
        unsafe {
            for _ in 1..SEARCHES {
                node = step(v, v.s.at(v.home, node as usize), x);
            }
            out[at] = finish(
                v,
                v.s.at(v.home, node as usize),
                || 0,
                x,
                addrs[at].address(),
                miss,
            );
        }
    }
    p.len = 0;
}
