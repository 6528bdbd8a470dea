//! PlanB: longest-prefix match as a predecessor search over elementary intervals, in
//! pointer-free, cache-line-sized B+-trees with SIMD node search (NSDI '26), extended with a
//! direct table on the top 16 bits and narrow per-chunk keys.
//!
//! Layout (`layout`): `direct[top 16 bits]` names the entry node of that chunk's tree. A tree's
//! lines live in a *segment* (a 64-byte aligned array shared behind `Arc`, so a live table can
//! rebuild some chunks into a new segment and keep the rest); a static table has one segment,
//! and its walk never looks at segments at all. Inner nodes are a cache line of sorted keys
//! and one link, so every inner step of a lookup is `node = link + rank` (a node's children are
//! contiguous in its segment), with no per-chunk descriptors; the last step searches a leaf,
//! whose line also holds the answers: the next hop of each position and flag bits for "no route" and
//! "fallback cell", so every `u32` is a valid next hop and no value array is read. Exactness
//! for every prefix length comes from interval partitioning ([`crate::interval`]) and, for IPv6
//! boundaries finer than /48, the `fallback` stage.
//!
//! Modules: `line` (the line types and the segment that holds them), `layout` (what a line
//! holds, written and read in one place), `builder` (route table → lines), `tree` (the built
//! tree: direct table, segments, lines and fallback cells, owned in one place, with the one
//! API that reads them back and derives a partial rebuild's or a compaction step's tree from
//! them), `search` (node search per SIMD backend), `walk` (the lookup, single and batched,
//! written once for every backend), `staged` (the chunks and blocks a copy of the direct table
//! and its sub-tables answer alone, and the batch that answers them without a walk),
//! `partial` (partial rebuilds and compaction steps), `saved` (a saved table's sections),
//! `validate` (the invariants the unchecked walk relies on), `fallback` (the exact IPv6
//! second stage), `lines` (a model of the cache lines a lookup reads).

mod builder;
mod fallback;
mod layout;
mod line;
mod lines;
mod pages;
mod partial;
mod saved;
mod search;
mod staged;
mod tree;
mod validate;
mod walk;

use crate::addr::AddressInput;
use crate::engine::{check_batch, Backend, Build, BuildOptions, Detail, Lookup};
use crate::error::{BuildError, InvalidStructure, LookupError};
use crate::prefix::Prefix;
use crate::route_table::{NextHop, RouteTable};
use layout::{Family, Key};
use line::Segment;
use tree::{Parts, Tree};

/// Lines one compaction step copies at most (128 KiB: a step costs about as much as a
/// partial rebuild of a dense chunk).
const COMPACT_BUDGET: usize = 2048;
pub(crate) use line::{Line16, Line32};

/// The PlanB lookup structure for one family (`PlanB<u32>` = IPv4, `PlanB<u128>` = IPv6).
///
/// Every value satisfies the structural invariants `validate` checks (the builder only makes
/// such structures), which is what lets the SIMD walks skip bounds checks.
///
/// ```
/// use ipfib::engine::{planb::PlanB, Backend, Build, BuildOptions, Lookup};
/// use ipfib::{Prefix, RouteTable};
///
/// let routes: RouteTable<u32> = [(Prefix::new(0x0a00_0000, 8).unwrap(), 1)].into_iter().collect();
/// let mut fib = PlanB::build(&routes, &BuildOptions::default()).unwrap();
/// assert_eq!(fib.lookup(0x0a01_0203), Some(1));
/// fib.set_backend(Backend::Scalar).unwrap();
/// assert_eq!(fib.lookup(0x0b00_0000), None);
/// ```
#[derive(Clone, Debug)]
pub struct PlanB<A: Family> {
    /// The direct table, the segments and their lines, and what is counted about them
    /// (`tree`).
    tree: Tree<A>,
    /// The backend the walks run with, and its token.
    cpu: crate::cpu::Cpu,
    /// The direct table with the chunks it answers alone marked, and sub-tables for chunks
    /// mostly answered a few bits further down, for the staged batch (`staged`); `None` where
    /// that batch does not run (IPv4, several segments), and in a live table from a partial
    /// rebuild or a compaction step until the next settling merge (`compact`).
    staged: Option<staged::Staged>,
}

impl<A: Family> PlanB<A> {
    fn from_parts(p: Parts<A>, backend: Backend) -> Result<Self, BuildError> {
        let stage = p.stage;
        let tree = Tree::from_parts(p);
        let mut planb = PlanB {
            tree,
            cpu: crate::cpu::Cpu::new(backend).ok_or(BuildError::BackendUnavailable {
                backend: backend.name(),
            })?,
            staged: None,
        };
        // The walk's unchecked accesses rest on these invariants; the builder establishes
        // them, and debug builds (the test profile) check that it did.
        #[cfg(debug_assertions)]
        if let Err(e) = validate::check(&planb.tree) {
            panic!("the builder made an invalid structure: {e}");
        }
        planb.staged = if stage {
            staged::Staged::of(&planb)
        } else {
            None
        };
        Ok(planb)
    }

    /// The built tree (`tree`): what every reader of the structure reads.
    #[inline(always)]
    fn tree(&self) -> &Tree<A> {
        &self.tree
    }

    /// The node-search backend in use.
    pub fn backend(&self) -> Backend {
        self.cpu.backend()
    }

    /// Switches the node-search backend (tests and benchmarks compare them); an error if this
    /// CPU cannot run it.
    pub fn set_backend(&mut self, backend: Backend) -> Result<(), BuildError> {
        self.cpu = crate::cpu::Cpu::new(backend).ok_or(BuildError::BackendUnavailable {
            backend: backend.name(),
        })?;
        Ok(())
    }

    /// Dependent steps of a lookup: the direct table plus the tree levels.
    pub fn depth(&self) -> usize {
        self.tree.depth() + 1
    }

    /// Lines of every segment (inner nodes and leaves).
    fn lines(&self) -> usize {
        self.tree.lines()
    }

    /// Merged elementary intervals of the table it was built from (`None` after a partial
    /// rebuild, which does not see the whole table).
    pub fn intervals(&self) -> Option<usize> {
        self.tree.intervals()
    }

    /// The answer at position `rank` of `leaf`, a line of `segment`, as output kind `O` (a
    /// fallback cell is searched further with `addr`; the segment is looked up only then). A
    /// route or "no route" becomes the output with a select, no branch; only a cell branches
    /// (rare, and predicted).
    #[inline(always)]
    fn answer<'s, O: walk::Output, const NARROW: bool>(
        segment: impl FnOnce() -> &'s Segment<A>,
        leaf: &<A::Key as Key>::Line,
        rank: u32,
        addr: A,
        miss: NextHop,
    ) -> O {
        let hop = A::Key::hop::<NARROW>(leaf, rank);
        let flags = A::Key::flags::<NARROW>(leaf) >> rank;
        if flags & layout::CELL != 0 {
            return O::from_answer(Self::cell(segment(), hop, addr), miss);
        }
        O::from_leaf(hop, flags & layout::NO_ROUTE != 0, miss)
    }

    #[cold]
    #[inline(never)]
    fn cell(segment: &Segment<A>, cell: u32, addr: A) -> Option<NextHop> {
        segment.fallback.lookup(cell, addr)
    }

    fn line_bytes(&self) -> usize {
        self.tree.line_bytes()
    }

    /// Bytes of the staged tables (`staged`), if the table has them.
    fn staged_bytes(&self) -> usize {
        self.staged.as_ref().map_or(0, staged::Staged::bytes)
    }

    /// The batched walk for the backend in use, into any output kind.
    fn batch_into<I: AddressInput<A>, O: walk::Output>(
        &self,
        addrs: &[I],
        out: &mut [O],
        miss: NextHop,
    ) {
        // SAFETY: the token proves the CPU has the features its walk enables, and `self`
        // satisfies the structure invariants (every PlanB does, see the type's doc).
        crate::cpu::with_token!(self.cpu, s => unsafe {
            walk::Walk::batch(s, self, addrs, out, miss)
        })
    }
}

impl<A: Family> Build<A> for PlanB<A> {
    fn build(table: &RouteTable<A>, options: &BuildOptions) -> Result<Self, BuildError> {
        let backend = options.resolve_backend()?;
        Self::from_parts(builder::build(table, options.for_updates), backend)
    }
}

impl<A: Family> Lookup<A> for PlanB<A> {
    fn name(&self) -> &'static str {
        "planb"
    }

    fn lookup(&self, addr: A) -> Option<NextHop> {
        // SAFETY: as for the batch.
        crate::cpu::with_token!(self.cpu, s => unsafe { walk::Walk::one(s, self, addr) })
    }

    fn lookup_batch(&self, addrs: &[A], out: &mut [Option<NextHop>]) -> Result<(), LookupError> {
        check_batch(addrs.len(), out.len())?;
        self.batch_into(addrs, out, 0);
        Ok(())
    }

    fn lookup_batch_raw(
        &self,
        addrs: &[A],
        out: &mut [NextHop],
        miss: NextHop,
    ) -> Result<(), LookupError> {
        check_batch(addrs.len(), out.len())?;
        if !A::staged_batch(self, addrs, out, miss) {
            self.batch_into(addrs, out, miss);
        }
        Ok(())
    }

    fn lookup_batch_bytes_raw(
        &self,
        addrs: &[A::Bytes],
        out: &mut [NextHop],
        miss: NextHop,
    ) -> Result<(), LookupError> {
        check_batch(addrs.len(), out.len())?;
        if !A::staged_batch(self, addrs, out, miss) {
            self.batch_into(addrs, out, miss);
        }
        Ok(())
    }

    fn memory_bytes(&self) -> usize {
        self.tree.direct_bytes()
            + self.line_bytes()
            + self.tree.fallback_bytes()
            + self.staged_bytes()
    }

    fn describe(&self) -> Vec<Detail> {
        let counted = self
            .tree
            .intervals()
            .zip(self.tree.results())
            .map(|(i, r)| {
                [
                    Detail::count("intervals", i),
                    Detail::count("distinct_results", r),
                ]
            });
        let mut details: Vec<Detail> = counted.into_iter().flatten().collect();
        details.extend([
            Detail::count("depth", self.depth()),
            Detail::text("leaves", if self.tree.narrow() { "narrow" } else { "wide" }),
            Detail::text("node_search", self.backend().name()),
            Detail::count("segments", self.tree.segments().len()),
            Detail::count("lines", self.lines()),
            Detail::count("room_lines", self.tree.room()),
            Detail::count("fallback_cells", self.tree.cells()),
            Detail::bytes("direct_bytes", self.tree.direct_bytes()),
            Detail::bytes("line_bytes", self.line_bytes()),
            Detail::bytes("fallback_bytes", self.tree.fallback_bytes()),
            Detail::bytes("staged_bytes", self.staged_bytes()),
            Detail::count(
                "staged_split_chunks",
                self.staged.as_ref().map_or(0, staged::Staged::split_chunks),
            ),
        ]);
        let sub = self
            .staged
            .as_ref()
            .map(staged::Staged::sub_entries)
            .unwrap_or_default();
        details.extend([
            Detail::count("sub_answers", sub.answered),
            Detail::count("sub_leaf_walks", sub.leaf),
            Detail::count("sub_near_walks", sub.near),
            Detail::count("sub_mid_walks", sub.mid),
            Detail::count("sub_root_walks", sub.root),
        ]);
        details
    }

    fn lines_per_lookup(&self, addrs: &[A]) -> Option<f64> {
        self.average_lines(addrs)
    }

    fn lines_by_step(&self, addrs: &[A]) -> Vec<(String, f64)> {
        self.lines_per_step(addrs)
    }

    fn validate(&self) -> Result<(), InvalidStructure> {
        validate::check(&self.tree)
    }

    /// Rebuilds only the chunks `changed` touches, sharing the rest (`partial`); `None` when a
    /// full build is better (a change wider than thousands of chunks, a chunk outgrowing the
    /// table's depth, or too many dead lines or segments: the full build compacts).
    fn rebuild(
        &self,
        table: &RouteTable<A>,
        changed: &[Prefix<A>],
        options: &BuildOptions,
    ) -> Option<Result<Box<dyn Lookup<A>>, BuildError>> {
        let backend = match options.resolve_backend() {
            Ok(b) => b,
            Err(e) => return Some(Err(e)),
        };
        let parts = self.partial_parts(table, changed)?;
        Some(Self::from_parts(parts, backend).map(|p| Box::new(p) as Box<dyn Lookup<A>>))
    }

    /// One compaction step (`partial`): the live trees of the emptiest segments, at most
    /// `COMPACT_BUDGET` lines, copied into one new segment; once settled, or when the segment
    /// partial rebuilds append to is nearly full, every tree copied into one segment with room,
    /// so lookups take the one-segment walk again (a few ms on the largest tables: both kinds
    /// of step poll `interrupted` every few thousand chunks).
    fn compact(
        &self,
        options: &BuildOptions,
        settled: bool,
        interrupted: &dyn Fn() -> bool,
    ) -> Option<Result<Box<dyn Lookup<A>>, BuildError>> {
        let backend = match options.resolve_backend() {
            Ok(b) => b,
            Err(e) => return Some(Err(e)),
        };
        let parts = if settled || self.tree().room_spent() {
            // Staged tables only once settled: their choice (the greedy's valuation) cannot be
            // interrupted, and the next partial rebuild drops them anyway. Staging every merge,
            // an IPv6 DFZ table (dfz10) fed /48s in 2001::/16 at 54 a second merged every 7
            // updates (that chunk's 2,153 lines a rebuild fill the room) and updates waited for
            // the rebuilder p99 8.9-18.6 ms (`ipfib replay`, Intel Xeon Ice Lake, 2 vCPUs).
            self.merged_parts(settled, interrupted)?
        } else {
            self.compact_parts(COMPACT_BUDGET, interrupted)?
        };
        Some(Self::from_parts(parts, backend).map(|p| Box::new(p) as Box<dyn Lookup<A>>))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interval::Intervals;
    use crate::prefix::Prefix;

    /// PlanB over `routes` (address, length, next hop), default options.
    fn built<A: Family>(routes: &[(A, u8, NextHop)]) -> PlanB<A> {
        let table: RouteTable<A> = routes
            .iter()
            .map(|&(a, len, nh)| (Prefix::new(a, len).unwrap(), nh))
            .collect();
        PlanB::build(&table, &BuildOptions::default()).unwrap()
    }

    /// The scalar walk, single and batched (full 32-lane groups and the remainder), against a
    /// binary search over the intervals. Small enough to run under Miri, which checks the
    /// walk's indexing and the unsafe-free scalar path for undefined behaviour.
    fn scalar_walk_matches_intervals<A: Family>(routes: &[(A, u8, NextHop)], probes: &[A]) {
        let table: RouteTable<A> = routes
            .iter()
            .map(|&(a, len, nh)| (Prefix::new(a, len).unwrap(), nh))
            .collect();
        let intervals = Intervals::from_table(&table);
        let planb =
            PlanB::build(&table, &BuildOptions::with_backend(Backend::Scalar)).expect("build");
        let want: Vec<Option<NextHop>> = probes.iter().map(|&a| intervals.lookup(a)).collect();
        let single: Vec<Option<NextHop>> = probes.iter().map(|&a| planb.lookup(a)).collect();
        assert_eq!(single, want);
        let mut batch = vec![Some(7); probes.len()];
        planb.lookup_batch(probes, &mut batch).unwrap();
        assert_eq!(batch, want);
        let mut raw = vec![0; probes.len()];
        planb.lookup_batch_raw(probes, &mut raw, 99).unwrap();
        let want_raw: Vec<NextHop> = want.iter().map(|a| a.unwrap_or(99)).collect();
        assert_eq!(raw, want_raw);
        planb.validate().unwrap();
    }

    #[test]
    fn scalar_walk_ipv6_with_a_fallback_cell() {
        let routes = [
            (0u128, 0, 1),
            (0x2001_0db8 << 96, 32, 2),
            (0x2001_0db8_0001 << 80, 48, 3),
            ((0x2001_0db8_0001 << 80) | (5 << 64), 64, 4),
            (u128::MAX, 128, 5),
        ];
        let mut probes: Vec<u128> = routes
            .iter()
            .flat_map(|&(a, len, _)| {
                let last = a | (u128::MAX >> len.min(127) >> u32::from(len == 128));
                [a, a.wrapping_sub(1), last, last.wrapping_add(1)]
            })
            .collect();
        probes.extend((0..40).map(|i| (0x2001_0db8_0001u128 << 80) | (i << 62)));
        scalar_walk_matches_intervals(&routes, &probes);
    }

    /// Leaves are narrow exactly when every next hop fits 16 bits (`u16::MAX` included), and
    /// both formats answer as the intervals do.
    #[test]
    fn leaf_format_follows_the_next_hops() {
        for (widest, narrow) in [(u32::from(u16::MAX), true), (1 << 16, false)] {
            let routes: Vec<(u32, u8, NextHop)> = (0..300u32)
                .map(|i| (0x0a00_0000 | (i << 8), 24, i % 3))
                .chain([(0, 1, widest), (0x0b00_0000, 16, 5)])
                .collect();
            let planb = built(&routes);
            assert_eq!(planb.tree().narrow(), narrow, "widest next hop {widest}");
            assert_eq!(planb.tree().depth(), 2);
            let probes: Vec<u32> = (0..2000u32)
                .map(|i| 0x0a00_0000 | (i * 97))
                .chain([0, u32::MAX, 0x0b00_0000, 0x0bff_ffff, 0x0b01_0000])
                .collect();
            scalar_walk_matches_intervals(&routes, &probes);
        }
        for (widest, narrow) in [(u32::from(u16::MAX), true), (1 << 16, false)] {
            let routes: Vec<(u128, u8, NextHop)> = (0..100u128)
                .map(|i| ((0x2001_0db8 << 96) | (i << 80), 48, i as u32 % 3))
                .chain([
                    (0, 1, widest),
                    ((0x2001_0db8_0005 << 80) | (9 << 64), 64, 4),
                ])
                .collect();
            assert_eq!(
                built(&routes).tree().narrow(),
                narrow,
                "IPv6, widest next hop {widest}"
            );
            let probes: Vec<u128> = (0..400u128)
                .map(|i| (0x2001_0db8 << 96) | (i << 78))
                .chain([0, u128::MAX, (0x2001_0db8_0005 << 80) | (9 << 64)])
                .collect();
            scalar_walk_matches_intervals(&routes, &probes);
        }
    }

    proptest::proptest! {
        /// Random IPv4 tables in a few chunks (deep enough for inner nodes, leaf entries and
        /// shared one-answer leaves), next hops narrow or wide: every backend, single and
        /// batched, answers as the intervals do.
        #[test]
        fn both_leaf_formats_match_the_intervals_on_every_backend(
            routes in proptest::collection::vec((0u32..4, proptest::num::u16::ANY, 8u8..=32, 0u32..6), 0..600),
            wide in proptest::bool::ANY,
            probes in proptest::collection::vec(proptest::num::u32::ANY, 64),
        ) {
            let table: RouteTable<u32> = routes
                .iter()
                .map(|&(chunk, low, len, hop)| {
                    let addr = ((0x0a00 + chunk) << 16) | u32::from(low);
                    let hop = if wide && hop == 0 { u32::MAX - 2 } else { hop };
                    (Prefix::covering(addr, len), hop)
                })
                .collect();
            let intervals = Intervals::from_table(&table);
            let probes: Vec<u32> = table
                .iter()
                .flat_map(|(p, _)| [p.first(), p.last(), p.last().wrapping_add(1)])
                .chain(probes.iter().map(|&a| (a & 0x0003_ffff) | 0x0a00_0000))
                .chain(probes.iter().copied())
                .collect();
            let want: Vec<Option<NextHop>> = probes.iter().map(|&a| intervals.lookup(a)).collect();
            for backend in Backend::ALL.into_iter().filter(|b| b.is_available()) {
                let planb = PlanB::build(&table, &BuildOptions::with_backend(backend)).unwrap();
                planb.validate().unwrap();
                let single: Vec<Option<NextHop>> = probes.iter().map(|&a| planb.lookup(a)).collect();
                proptest::prop_assert_eq!(&single, &want, "{:?} single", backend);
                let mut batch = vec![Some(7); probes.len()];
                planb.lookup_batch(&probes, &mut batch).unwrap();
                proptest::prop_assert_eq!(&batch, &want, "{:?} batch", backend);
            }
        }
    }

    #[test]
    fn scalar_walk_ipv4_in_a_deep_chunk() {
        let routes: Vec<(u32, u8, NextHop)> = (0..700u32)
            .map(|i| (0x0a00_0000 | (i << 8), 24, i % 5))
            .chain([(0, 1, 9), (u32::MAX, 32, 8)])
            .collect();
        let probes: Vec<u32> = (0..1500u32)
            .map(|i| 0x0a00_0000 | (i * 131))
            .chain([0, u32::MAX, u32::MAX - 1])
            .collect();
        scalar_walk_matches_intervals(&routes, &probes);
    }
}
