//! PlanB: longest-prefix match as a predecessor search over elementary intervals, in
//! pointer-free, cache-line-sized B+-trees with SIMD node search (NSDI '26), extended with a
//! direct table on the top 16 bits and narrow per-chunk keys.
//!
//! Layout ([`layout`]): `direct[top 16 bits]` names a descriptor; a descriptor lists, for each
//! of the `depth` levels of that chunk's tree, the offset of the level in one flat 64-byte
//! aligned node array, and where the chunk's result ids start. Children are found by index
//! arithmetic (`child = node * fan-out + rank`), so nodes hold keys only. Result ids index a
//! small table of answers, so "no route" is an answer like any next hop and every `u32` is a
//! valid next hop. Exactness for every prefix length comes from interval partitioning
//! ([`crate::interval`]) and, for IPv6 boundaries finer than /48, the [`fallback`] stage.

mod builder;
pub mod fallback;
#[cfg(target_arch = "x86_64")]
mod gather;
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
    /// Descriptor index of each top-16-bit chunk.
    direct: Box<[u16]>,
    /// Descriptors, `depth + 1` words each: `depth` level offsets (into `nodes`), then the offset
    /// of the chunk's result ids (into `values`).
    descs: Box<[u32]>,
    /// Node searches per lookup (uniform across chunks).
    depth: usize,
    /// All tree nodes, one cache line each; node 0 is all padding.
    nodes: Box<[<A::Key as layout::Key>::Node]>,
    /// Result id of each position of each chunk.
    values: Box<[u32]>,
    /// Answer of each result id; ids past the end name a fallback cell.
    results: Box<[Option<NextHop>]>,
    fallback: Fallback<A>,
    intervals: usize,
    dispatch: search::Dispatch,
}

/// The arrays the builder hands over.
struct Parts<A: Family> {
    direct: Box<[u16]>,
    descs: Box<[u32]>,
    depth: usize,
    nodes: Box<[<A::Key as layout::Key>::Node]>,
    values: Box<[u32]>,
    results: Box<[Option<NextHop>]>,
    fallback: Fallback<A>,
    intervals: usize,
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
    /// Cache-line tree nodes.
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
            descs: p.descs,
            depth: p.depth,
            nodes: p.nodes,
            values: p.values,
            results: p.results,
            fallback: p.fallback,
            intervals: p.intervals,
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
            nodes: self.nodes.len(),
            fallback_cells: self.fallback.cells(),
            results: self.results.len(),
        }
    }

    /// The answer for a result id (a fallback cell id is searched further with `addr`).
    #[inline(always)]
    fn resolve(&self, id: u32, addr: A) -> Option<NextHop> {
        match self.results.get(id as usize) {
            Some(answer) => *answer,
            None => self.resolve_fallback(id, addr),
        }
    }

    #[cold]
    #[inline(never)]
    fn resolve_fallback(&self, id: u32, addr: A) -> Option<NextHop> {
        let cell = id - self.results.len() as u32;
        self.results[self.fallback.lookup(cell, addr) as usize]
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
            search::Dispatch::Avx512(token) => unsafe { gather::batch(self, token, addrs, out) },
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
            + std::mem::size_of_val(&*self.descs)
            + std::mem::size_of_val(&*self.nodes)
            + std::mem::size_of_val(&*self.values)
            + std::mem::size_of_val(&*self.results)
            + self.fallback.bytes()
    }
}
