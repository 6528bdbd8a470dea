//! Patricia: the classic path-compressed binary trie, the structure of the Linux BPF LPM trie
//! and of BSD's radix tree, for both families, with insert and remove.
//!
//! It is the floor the other engines are measured against: a lookup follows one node per
//! branching point of its address's path (about 20 dependent loads on a full IPv4 table, each
//! a likely cache miss), where PlanB and DXR read two to five lines. It is written to be a
//! fair floor, not a strawman: nodes sit in one arena with `u32` links (20 bytes per IPv4
//! node, 32 per IPv6 node), a prefix test is one xor and a leading-zero count, and updates are
//! in place. `trie` holds the structure; this module is the engine around it.
//!
//! ```
//! use ipfib::engine::patricia::Patricia;
//! use ipfib::engine::Lookup;
//! use ipfib::Prefix;
//!
//! let mut trie = Patricia::<u32>::new();
//! trie.insert(Prefix::new(0x0a00_0000, 8).unwrap(), 1);
//! trie.insert(Prefix::new(0x0a01_0000, 16).unwrap(), 2);
//! assert_eq!(trie.lookup(0x0a01_0203), Some(2));
//! assert_eq!(trie.remove(Prefix::new(0x0a01_0000, 16).unwrap()), Some(2));
//! assert_eq!(trie.lookup(0x0a01_0203), Some(1));
//! ```

mod bits;
mod trie;

pub use bits::Bits;

use crate::engine::{Build, BuildOptions, Detail, Lookup};
use crate::error::{BuildError, InvalidStructure};
use crate::prefix::Prefix;
use crate::route_table::{NextHop, RouteTable};
use trie::{Node, Trie};

/// A path-compressed binary trie (`Patricia<u32>` = IPv4, `Patricia<u128>` = IPv6).
#[derive(Clone, Debug)]
pub struct Patricia<A: Bits> {
    trie: Trie<A>,
}

impl<A: Bits> Default for Patricia<A> {
    fn default() -> Self {
        Patricia {
            trie: Trie::default(),
        }
    }
}

impl<A: Bits> Patricia<A> {
    /// An empty trie.
    pub fn new() -> Self {
        Self::default()
    }

    /// Inserts a route, or replaces the next hop of the same prefix (returning the old one).
    pub fn insert(&mut self, prefix: Prefix<A>, next_hop: NextHop) -> Option<NextHop> {
        self.trie.insert(prefix.addr(), prefix.len(), next_hop)
    }

    /// Removes a route, returning its next hop if it was present.
    pub fn remove(&mut self, prefix: Prefix<A>) -> Option<NextHop> {
        self.trie.remove(prefix.addr(), prefix.len())
    }

    /// Number of routes.
    pub fn len(&self) -> usize {
        self.trie.routes
    }

    /// True when the trie holds no route.
    pub fn is_empty(&self) -> bool {
        self.trie.routes == 0
    }

    /// Nodes in use: one per route plus one per branching point that is not a route.
    pub fn nodes(&self) -> usize {
        self.trie.live_nodes()
    }

    /// Nodes on the longest root-to-leaf path (the worst case of a lookup).
    pub fn depth(&self) -> usize {
        self.trie.depth()
    }
}

/// Changed prefixes above which [`Lookup::rebuild`] declines and a full build runs: applying a
/// change costs a root-to-leaf walk, a full build one per route, and the copy a rebuild starts
/// from is a memcpy of the arena, so changes up to an eighth of the table still win.
fn rebuild_limit(routes: usize) -> usize {
    (routes / 8).max(1024)
}

impl<A: Bits> Build<A> for Patricia<A> {
    fn build(table: &RouteTable<A>, options: &BuildOptions) -> Result<Self, BuildError> {
        // No SIMD here, but a backend this CPU lacks is still an error, as for every engine.
        options.resolve_backend()?;
        let mut trie = Trie::default();
        trie.nodes.reserve(table.len() * 2);
        for (p, nh) in table.iter() {
            trie.insert(p.addr(), p.len(), nh);
        }
        trie.relayout();
        Ok(Patricia { trie })
    }
}

impl<A: Bits> Lookup<A> for Patricia<A> {
    fn name(&self) -> &'static str {
        "patricia"
    }

    fn lookup(&self, addr: A) -> Option<NextHop> {
        self.trie.lookup(addr)
    }

    fn memory_bytes(&self) -> usize {
        self.trie.nodes.capacity() * std::mem::size_of::<Node<A>>()
            + self.trie.free.capacity() * std::mem::size_of::<u32>()
    }

    fn describe(&self) -> Vec<Detail> {
        vec![
            Detail::count("routes", self.len()),
            Detail::count("nodes", self.nodes()),
            Detail::count("glue_nodes", self.nodes() - self.len()),
            Detail::count("free_nodes", self.trie.free.len()),
            Detail::count("depth", self.depth()),
            Detail::count("node_size", std::mem::size_of::<Node<A>>()),
            Detail::bytes("node_bytes", self.memory_bytes()),
        ]
    }

    /// Nodes visited: each is its own cache line (nodes of one path are not adjacent).
    fn lines_per_lookup(&self, addrs: &[A]) -> Option<f64> {
        crate::engine::line_model::mean(addrs, |a| self.trie.visits(a))
    }

    fn validate(&self) -> Result<(), InvalidStructure> {
        self.trie.check().map_err(|reason| InvalidStructure {
            engine: "patricia",
            reason,
        })
    }

    /// A copy of this trie with the changed prefixes inserted (with the table's next hop) or
    /// removed: the copy is one memcpy of the arena, each change one walk, so a live table's
    /// publication does not rebuild the whole trie. Declines (full build) for changes over an
    /// eighth of the table, or when half the arena is free nodes (a full build packs it).
    fn rebuild(
        &self,
        table: &RouteTable<A>,
        changed: &[Prefix<A>],
        options: &BuildOptions,
    ) -> Option<Result<Box<dyn Lookup<A>>, BuildError>> {
        if changed.len() > rebuild_limit(table.len())
            || self.trie.free.len() > self.trie.nodes.len() / 2 + 1024
        {
            return None;
        }
        if let Err(e) = options.resolve_backend() {
            return Some(Err(e));
        }
        let mut next = self.clone();
        for &p in changed {
            match table.get(p) {
                Some(nh) => next.insert(p, nh),
                None => next.remove(p),
            };
        }
        Some(Ok(Box::new(next)))
    }
}

#[cfg(test)]
mod tests;
