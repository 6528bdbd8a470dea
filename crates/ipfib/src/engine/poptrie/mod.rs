//! Poptrie (Asai & Ohara, SIGCOMM '15): a multiway trie of 64-ary nodes whose children and
//! leaves are found by counting bits (`popcnt`), with leaf compression and a direct table on
//! the top `s` bits, for both families.
//!
//! A lookup reads `direct[top s bits]`; if the whole block has one answer that is the answer,
//! else it walks 6 bits per node until a slot is a leaf (see `layout` for what each array
//! holds). The structure is built from the route table's merged intervals (`builder`), so it
//! is exact for every prefix length, `/0` to `/32` and `/128` (the last level of a key is
//! partial; its padding slots repeat the reachable answer), independent of insertion order,
//! and minimal in the sense that a node exists only where answers differ below it.
//!
//! Modules: `layout` (node, leaf and bit-extraction definitions), `builder` (route table →
//! arrays), `walk` (single and batched lookups), `validate` (invariants), `lines` (a model of
//! the cache lines a lookup reads).

mod builder;
mod layout;
mod lines;
mod validate;
mod walk;

#[cfg(test)]
mod tests;

use std::marker::PhantomData;

use crate::cpu::Cpu;
use crate::engine::{check_batch, Build, BuildOptions, Detail, Lookup};
use crate::error::{BuildError, InvalidStructure, LookupError};
use crate::route_table::{NextHop, RouteTable};
pub use layout::Family;
use layout::{LeafWord, Leaves, Node};
use walk::{Access, View, Walk};

/// Direct-table width for IPv4: the paper's `s = 18` (1 MiB), which also puts the first node
/// level on bits 18–23, so a /24 ends exactly at a node's slot.
pub const DIRECT_BITS_V4: u32 = 18;

/// Direct-table width for IPv6, chosen by measurement on the real tables (BENCHMARKS.md).
pub const DIRECT_BITS_V6: u32 = 18;

/// The deepest trie (node levels below the direct table) whose batches may run as a stream
/// of single walks: every IPv4 trie with `s = 18` (3 levels), no real IPv6 one (8 levels on
/// dfz10, where interleaved groups are 1.5–2.5x faster; BENCHMARKS.md).
pub const STREAM_LEVELS: usize = 3;

/// Addresses at the start of a batch whose direct entries pick the walk of a shallow trie.
const SAMPLE: usize = 64;

/// Which walk a batch takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BatchWalk {
    /// Interleaved groups (`walk::batch`): deep tries.
    Groups,
    /// A stream of prefetched single walks (`walk::stream`); chosen per batch by
    /// `Adaptive`, forced by the tests.
    #[cfg_attr(not(test), allow(dead_code))]
    Stream,
    /// Per batch: the stream when at most a quarter of the first [`SAMPLE`] addresses need a
    /// node (the single walks' branches then predict, and the stream does the work with a
    /// fraction of the instructions), else the groups. Shallow tries. Measured on IPv4
    /// (BENCHMARKS.md): uniform traces (7–13 % of lookups through a node) 1.12–1.15x vs
    /// 0.89–0.95x PlanB with the stream and the groups on bart-tier1; a matched trace (47 %)
    /// 0.52x vs 0.80x.
    Adaptive,
}

/// The widest direct table allowed (2^24 entries, 64 MiB).
pub const MAX_DIRECT_BITS: u32 = 24;

/// The Poptrie lookup structure for one family (`Poptrie<u32>` = IPv4, `Poptrie<u128>` =
/// IPv6).
///
/// ```
/// use ipfib::engine::{poptrie::Poptrie, Build, BuildOptions, Lookup};
/// use ipfib::{Prefix, RouteTable};
///
/// let routes: RouteTable<u32> = [
///     (Prefix::new(0x0a00_0000, 8).unwrap(), 1),
///     (Prefix::new(0x0a01_0200, 24).unwrap(), u32::MAX),
/// ]
/// .into_iter()
/// .collect();
/// let fib = Poptrie::build(&routes, &BuildOptions::default()).unwrap();
/// assert_eq!(fib.lookup(0x0a01_0203), Some(u32::MAX), "any u32 is a next hop");
/// assert_eq!(fib.lookup(0x0a02_0000), Some(1));
/// assert_eq!(fib.lookup(0x0b00_0000), None);
/// ```
#[derive(Clone, Debug)]
pub struct Poptrie<A: Family> {
    /// Direct-table width `s`.
    bits: u32,
    direct: Box<[u32]>,
    nodes: Box<[Node]>,
    /// Never empty (a walk may read leaf 0 without using it).
    leaves: Leaves,
    /// `hops[0]` is "no route" (its value is never returned).
    hops: Box<[NextHop]>,
    /// Nodes per level below the direct table.
    levels: Vec<usize>,
    /// The batch walk: adaptive for tries of at most [`STREAM_LEVELS`] node levels, where
    /// the out-of-order core can overlap single walks, the interleaved groups otherwise.
    batch_walk: BatchWalk,
    /// The backend the walks run with, and its token.
    cpu: Cpu,
    family: PhantomData<A>,
}

impl<A: Family> Poptrie<A> {
    /// Builds with a direct table of `2^direct_bits` entries (`1..=24`, at most the address
    /// width); [`Build::build`] uses [`DIRECT_BITS_V4`] or [`DIRECT_BITS_V6`].
    pub fn build_with(
        table: &RouteTable<A>,
        options: &BuildOptions,
        direct_bits: u32,
    ) -> Result<Self, BuildError> {
        let backend = options.resolve_backend()?;
        let cpu = Cpu::new(backend).ok_or(BuildError::BackendUnavailable {
            backend: backend.name(),
        })?;
        if direct_bits == 0 || direct_bits > MAX_DIRECT_BITS.min(u32::from(A::BITS)) {
            return Err(BuildError::Unsupported {
                engine: "poptrie",
                reason: format!(
                    "direct table of {direct_bits} bits (1 to {} allowed)",
                    MAX_DIRECT_BITS.min(u32::from(A::BITS))
                ),
            });
        }
        let built = builder::build(table, direct_bits)?;
        let mut leaves = built.leaves;
        if leaves.is_empty() {
            leaves.push(0);
        }
        let leaves = if built.hops.len() <= 1 << 16 {
            Leaves::Narrow(leaves.iter().map(|&l| u16::from_index(l)).collect())
        } else {
            Leaves::Wide(leaves.into_boxed_slice())
        };
        let trie = Poptrie {
            batch_walk: if built.levels.len() <= STREAM_LEVELS {
                BatchWalk::Adaptive
            } else {
                BatchWalk::Groups
            },
            bits: direct_bits,
            direct: built.direct.into_boxed_slice(),
            nodes: built.nodes.into_boxed_slice(),
            leaves,
            hops: built.hops.into_boxed_slice(),
            levels: built.levels,
            cpu,
            family: PhantomData,
        };
        #[cfg(debug_assertions)]
        if let Err(e) = validate::check(&trie) {
            panic!("the builder made an invalid structure: {e}");
        }
        Ok(trie)
    }

    /// Direct-table width `s`.
    pub fn direct_bits(&self) -> u32 {
        self.bits
    }

    /// Number of 64-ary nodes.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Nodes per level below the direct table (level 0: the nodes the direct table points
    /// to); its length is the deepest walk's node count.
    pub fn levels(&self) -> &[usize] {
        &self.levels
    }

    #[inline(always)]
    fn view<'t, L>(&'t self, leaves: &'t [L]) -> View<'t, L> {
        View {
            bits: self.bits,
            direct: &self.direct,
            nodes: &self.nodes,
            leaves,
            hops: &self.hops,
        }
    }

    /// Whether a batch of `addrs` takes the stream walk (see [`BatchWalk`]).
    fn streams(&self, addrs: &[A]) -> bool {
        match self.batch_walk {
            BatchWalk::Groups => false,
            BatchWalk::Stream => true,
            BatchWalk::Adaptive => {
                let sample = &addrs[..addrs.len().min(SAMPLE)];
                let through_node = sample
                    .iter()
                    .filter(|a| self.direct[a.top(self.bits)] & layout::LEAF_TAG == 0)
                    .count();
                through_node * 4 <= sample.len()
            }
        }
    }

    fn batch_into<O: walk::Output>(&self, addrs: &[A], out: &mut [O], miss: NextHop) {
        let stream = self.streams(addrs);
        // SAFETY: the token proves the CPU has the features its walk enables, and every
        // `Poptrie` satisfies the invariants the walks rely on (the builder makes only such
        // structures).
        crate::cpu::with_token!(self.cpu, c => unsafe {
            match (&self.leaves, stream) {
                (Leaves::Narrow(l), true) => c.stream(self.view(l), addrs, out, miss),
                (Leaves::Narrow(l), false) => c.batch(self.view(l), addrs, out, miss),
                (Leaves::Wide(l), true) => c.stream(self.view(l), addrs, out, miss),
                (Leaves::Wide(l), false) => c.batch(self.view(l), addrs, out, miss),
            }
        })
    }

    fn bytes_of_parts(&self) -> [(&'static str, usize); 4] {
        [
            ("direct_bytes", std::mem::size_of_val(&*self.direct)),
            ("node_bytes", std::mem::size_of_val(&*self.nodes)),
            ("leaf_bytes", self.leaves.bytes()),
            ("next_hop_bytes", std::mem::size_of_val(&*self.hops)),
        ]
    }
}

impl<A: Family> Build<A> for Poptrie<A> {
    /// An empty table gets a 2-entry direct table: a dual-stack `Fib` of one family would
    /// otherwise carry 1 MiB of "no route" for the other.
    fn build(table: &RouteTable<A>, options: &BuildOptions) -> Result<Self, BuildError> {
        let bits = if table.is_empty() {
            1
        } else if A::BITS == 32 {
            DIRECT_BITS_V4
        } else {
            DIRECT_BITS_V6
        };
        Self::build_with(table, options, bits)
    }
}

impl<A: Family> Lookup<A> for Poptrie<A> {
    fn name(&self) -> &'static str {
        "poptrie"
    }

    fn lookup(&self, addr: A) -> Option<NextHop> {
        // SAFETY: as for the batch; the leaves are `self`'s.
        crate::cpu::with_token!(self.cpu, c => unsafe {
            match &self.leaves {
                Leaves::Narrow(l) => c.answer(self, l, addr),
                Leaves::Wide(l) => c.answer(self, l, addr),
            }
        })
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
        self.batch_into(addrs, out, miss);
        Ok(())
    }

    fn memory_bytes(&self) -> usize {
        self.bytes_of_parts().iter().map(|(_, b)| b).sum()
    }

    fn describe(&self) -> Vec<Detail> {
        let levels: Vec<String> = self.levels.iter().map(|n| n.to_string()).collect();
        let mut details = vec![
            Detail::count("direct_bits", self.bits as usize),
            Detail::count("levels", self.levels.len() + 1),
            Detail::text(
                "nodes_per_level",
                if levels.is_empty() {
                    "-".to_string()
                } else {
                    levels.join("/")
                },
            ),
            Detail::count("nodes", self.nodes.len()),
            Detail::count("leaves", self.leaves.len()),
            Detail::count("leaf_width_bytes", self.leaves.width()),
            Detail::count(
                "direct_leaves",
                self.direct
                    .iter()
                    .filter(|&&d| d & layout::LEAF_TAG != 0)
                    .count(),
            ),
            Detail::count("next_hops", self.hops.len() - 1),
            Detail::text("walk", crate::cpu::with_token!(self.cpu, c => c.name())),
            Detail::text(
                "batch_walk",
                match self.batch_walk {
                    BatchWalk::Groups => "interleaved groups",
                    BatchWalk::Stream => "prefetched singles",
                    BatchWalk::Adaptive => "prefetched singles or groups, per batch",
                },
            ),
        ];
        details.extend(
            self.bytes_of_parts()
                .into_iter()
                .map(|(name, b)| Detail::bytes(name, b)),
        );
        details
    }

    fn lines_per_lookup(&self, addrs: &[A]) -> Option<f64> {
        crate::engine::line_model::mean(addrs, |a| self.lines_touched(a))
    }

    fn validate(&self) -> Result<(), InvalidStructure> {
        validate::check(self)
    }
}
