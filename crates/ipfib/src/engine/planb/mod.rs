//! PlanB: longest-prefix match as a predecessor search over elementary intervals, in
//! pointer-free, cache-line-sized B+-trees with SIMD node search (NSDI '26), extended with a
//! direct table on the top 16 bits and narrow per-chunk keys.
//!
//! Layout ([`layout`]): `direct[top 16 bits]` names the entry node of that chunk's tree. Inner
//! nodes (one flat 64-byte aligned array) are a cache line of sorted keys and one link, so
//! every inner step of a lookup is `node = link + rank` (a node's children are contiguous), with
//! no per-chunk descriptors; the last step searches a leaf (a second flat array), whose line
//! also holds the answers: the next hop of each position and flag bits for "no route" and
//! "fallback cell", so every `u32` is a valid next hop and no value array is read. Exactness for every prefix length comes from interval partitioning
//! ([`crate::interval`]) and, for IPv6 boundaries finer than /48, the [`fallback`] stage.

mod builder;
pub mod fallback;
pub mod layout;
pub mod search;
mod walk;

use crate::engine::{check_batch, Lpm};
use crate::error::LookupError;
use crate::table::{NextHop, RouteTable};
use fallback::Fallback;
use layout::Family;
pub use search::Backend;

/// The PlanB lookup structure for one family (`u32` = IPv4, `u128` = IPv6).
#[derive(Clone, Debug)]
pub struct PlanB<A: Family> {
    /// Entry node of each top-16-bit chunk: an inner node, or a leaf when `depth` is 1.
    direct: Box<[u32]>,
    /// Node searches per lookup, the leaf's included (uniform across chunks).
    depth: usize,
    /// Inner nodes, one cache line each.
    inner: Box<[<A::Key as layout::Key>::Line]>,
    /// Leaves with their answers, one cache line each.
    leaves: Box<[<A::Key as layout::Key>::Line]>,
    fallback: Fallback<A>,
    intervals: usize,
    results: usize,
    dispatch: search::Dispatch,
}

/// The arrays the builder hands over.
struct Parts<A: Family> {
    direct: Box<[u32]>,
    depth: usize,
    inner: Box<[<A::Key as layout::Key>::Line]>,
    leaves: Box<[<A::Key as layout::Key>::Line]>,
    fallback: Fallback<A>,
    intervals: usize,
    results: usize,
}

/// Shape and size of a built PlanB structure, for `ipfib stats` and the benchmarks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stats {
    /// Merged elementary intervals.
    pub intervals: usize,
    /// Dependent steps of a lookup: the direct table plus the tree levels.
    pub depth: usize,
    /// Bytes of the lookup structure.
    pub bytes: usize,
    /// The node-search backend chosen at run time (`avx512`, `avx2` or `scalar`).
    pub backend: &'static str,
    /// Cache-line tree nodes (inner nodes and leaves).
    pub nodes: usize,
    /// IPv6 /48 cells resolved by the second stage.
    pub fallback_cells: usize,
    /// Distinct answers (including "no route").
    pub results: usize,
}

impl<A: Family> PlanB<A> {
    /// Builds the structure from a route table, with the fastest node search this CPU has.
    pub fn build(table: &RouteTable<A>) -> Self {
        builder::build(table)
    }

    fn from_parts(p: Parts<A>) -> Self {
        PlanB {
            direct: p.direct,
            depth: p.depth,
            inner: p.inner,
            leaves: p.leaves,
            fallback: p.fallback,
            intervals: p.intervals,
            results: p.results,
            dispatch: search::Dispatch::new(Backend::detect())
                .expect("detected backends are available"),
        }
    }

    /// The node-search backend in use.
    pub fn backend(&self) -> Backend {
        self.dispatch.backend()
    }

    /// Switches the node-search backend (tests and benchmarks compare them); an error if this
    /// CPU cannot run it.
    pub fn set_backend(&mut self, backend: Backend) -> Result<(), LookupError> {
        self.dispatch = search::Dispatch::new(backend).ok_or_else(|| LookupError::Unsupported {
            engine: "planb",
            reason: format!("the {backend} node search is not supported by this CPU"),
        })?;
        Ok(())
    }

    /// Shape and size of the structure.
    pub fn stats(&self) -> Stats {
        Stats {
            intervals: self.intervals,
            depth: self.depth + 1,
            bytes: self.memory_bytes(),
            backend: self.backend().name(),
            nodes: self.inner.len() + self.leaves.len(),
            fallback_cells: self.fallback.cells(),
            results: self.results,
        }
    }

    /// The answer at position `rank` of `leaf` (a fallback cell is searched further with
    /// `addr`).
    #[inline(always)]
    fn answer(&self, leaf: &<A::Key as layout::Key>::Line, rank: u32, addr: A) -> Option<NextHop> {
        use layout::Key;
        let hop = A::Key::hop(leaf, rank);
        let flags = A::Key::flags(leaf) >> rank;
        if flags & layout::CELL != 0 {
            return self.cell(hop, addr);
        }
        (flags & layout::NO_ROUTE == 0).then_some(hop)
    }

    #[cold]
    #[inline(never)]
    fn cell(&self, cell: u32, addr: A) -> Option<NextHop> {
        self.fallback.lookup(cell, addr)
    }
}

impl<A: Family> Lpm<A> for PlanB<A> {
    fn name(&self) -> &'static str {
        "planb"
    }

    fn lookup(&self, addr: A) -> Option<NextHop> {
        match self.dispatch {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the token proves the CPU has the features the function enables.
            search::Dispatch::Avx512(token) => unsafe { walk::x86::one_avx512(self, token, addr) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            search::Dispatch::Avx2(token) => unsafe { walk::x86::one_avx2(self, token, addr) },
            search::Dispatch::Scalar(token) => walk::one(self, token, addr),
        }
    }

    fn lookup_batch(&self, addrs: &[A], out: &mut [Option<NextHop>]) -> Result<(), LookupError> {
        check_batch(addrs.len(), out.len())?;
        match self.dispatch {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the token proves the CPU has the features the function enables.
            search::Dispatch::Avx512(token) => unsafe {
                walk::x86::batch_avx512(self, token, addrs, out)
            },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            search::Dispatch::Avx2(token) => unsafe {
                walk::x86::batch_avx2(self, token, addrs, out)
            },
            search::Dispatch::Scalar(token) => walk::batch(self, token, addrs, out),
        }
        Ok(())
    }

    fn memory_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.direct)
            + std::mem::size_of_val(&*self.inner)
            + std::mem::size_of_val(&*self.leaves)
            + self.fallback.bytes()
    }
}
