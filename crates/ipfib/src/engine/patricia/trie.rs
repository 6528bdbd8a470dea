//! The path-compressed binary trie itself: nodes in one arena, linked by `u32` indices.
//!
//! Each node holds a prefix (its key bits and length) and two child links. A node is either a
//! *route* (the prefix is in the table, with its next hop) or *glue* (a branching point two
//! routes' paths share, which always has two children). Children extend their parent's prefix
//! and are picked by the bit just after it, so a lookup visits only the nodes on its address's
//! path, one per branching point rather than one per bit: at most 33 (IPv4) or 129 (IPv6), in
//! practice about 20 on a full table. That is the structure of the Linux BPF LPM trie.
//!
//! The arena (rather than a `Box` per node) keeps nodes of 20 bytes (IPv4) or 32 (IPv6) packed
//! in one allocation with half-size links, and makes a clone (what an incremental rebuild
//! starts from) one copy. Removed nodes go to a free list and are reused by later inserts.

use super::bits::Bits;
use crate::route_table::NextHop;

/// The "no node" link. Never a valid index: the arena holds fewer than `u32::MAX` nodes, so
/// `nodes.get(NIL)` is `None`, which the lookup uses as its end test.
pub const NIL: u32 = u32::MAX;

/// One node: a prefix, its route if it has one, and the links to the two halves below it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Node<A> {
    /// The prefix's bits; bits past `len` are zero.
    pub key: A,
    /// The route's next hop (meaningless for glue).
    pub next_hop: NextHop,
    /// Children by the bit after the prefix; [`NIL`] when absent.
    pub child: [u32; 2],
    /// Prefix length.
    pub len: u8,
    /// Whether the prefix is a route (else glue).
    pub route: bool,
}

impl<A: Bits> Node<A> {
    fn new(key: A, len: u8, route: Option<NextHop>) -> Self {
        Node {
            key,
            next_hop: route.unwrap_or(0),
            child: [NIL; 2],
            len,
            route: route.is_some(),
        }
    }

    fn children(&self) -> usize {
        self.child.iter().filter(|&&c| c != NIL).count()
    }
}

/// Where a link lives: the root, or a child slot of a node.
#[derive(Clone, Copy, Debug)]
enum Slot {
    Root,
    Child(u32, usize),
}

/// The trie: an arena of nodes, a root link, and a free list of removed nodes' indices.
#[derive(Clone, Debug)]
pub struct Trie<A> {
    pub(super) nodes: Vec<Node<A>>,
    pub(super) root: u32,
    pub(super) free: Vec<u32>,
    pub(super) routes: usize,
}

impl<A: Bits> Default for Trie<A> {
    fn default() -> Self {
        Trie {
            nodes: Vec::new(),
            root: NIL,
            free: Vec::new(),
            routes: 0,
        }
    }
}

impl<A: Bits> Trie<A> {
    /// The next hop of the longest route containing `addr`.
    #[inline]
    pub fn lookup(&self, addr: A) -> Option<NextHop> {
        let mut best = None;
        let mut i = self.root;
        // `get` is the bounds check and the end-of-path test at once (NIL is out of range).
        while let Some(n) = self.nodes.get(i as usize) {
            if addr.common(n.key) < n.len {
                break;
            }
            if n.route {
                best = Some(n.next_hop);
            }
            if n.len == A::BITS {
                break;
            }
            i = n.child[addr.bit(n.len)];
        }
        best
    }

    /// Nodes in use (routes and glue).
    pub fn live_nodes(&self) -> usize {
        self.nodes.len() - self.free.len()
    }

    fn link(&self, slot: Slot) -> u32 {
        match slot {
            Slot::Root => self.root,
            Slot::Child(n, d) => self.nodes[n as usize].child[d],
        }
    }

    fn set_link(&mut self, slot: Slot, to: u32) {
        match slot {
            Slot::Root => self.root = to,
            Slot::Child(n, d) => self.nodes[n as usize].child[d] = to,
        }
    }

    fn alloc(&mut self, node: Node<A>) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize] = node;
                i
            }
            None => {
                // Fewer than 2^32 - 1 nodes: a table that large does not fit in memory anyway
                // (each route makes at most two nodes of at least 20 bytes).
                let i = u32::try_from(self.nodes.len()).expect("under 2^32 nodes");
                assert!(i != NIL, "under 2^32 - 1 nodes");
                self.nodes.push(node);
                i
            }
        }
    }

    fn release(&mut self, i: u32) {
        self.nodes[i as usize] = Node::new(A::ZERO, 0, None);
        self.free.push(i);
    }

    /// Inserts or replaces the route `key/len` (`key` has no bits past `len`). Returns the
    /// replaced next hop.
    pub fn insert(&mut self, key: A, len: u8, next_hop: NextHop) -> Option<NextHop> {
        let mut slot = Slot::Root;
        loop {
            let i = self.link(slot);
            if i == NIL {
                let leaf = self.alloc(Node::new(key, len, Some(next_hop)));
                self.set_link(slot, leaf);
                self.routes += 1;
                return None;
            }
            let n = self.nodes[i as usize];
            let shared = key.common(n.key).min(len).min(n.len);
            if shared == n.len {
                if n.len == len {
                    let node = &mut self.nodes[i as usize];
                    let old = node.route.then_some(node.next_hop);
                    node.route = true;
                    node.next_hop = next_hop;
                    self.routes += usize::from(old.is_none());
                    return old;
                }
                // `n` is a proper prefix of the new route: go down.
                slot = Slot::Child(i, key.bit(n.len));
                continue;
            }
            // The paths part at `shared < n.len`: the new route goes between `slot` and `n`,
            // as `n`'s parent when it is a prefix of `n`, else beside it under new glue.
            let above = if shared == len {
                let mut node = Node::new(key, len, Some(next_hop));
                node.child[n.key.bit(len)] = i;
                self.alloc(node)
            } else {
                let leaf = self.alloc(Node::new(key, len, Some(next_hop)));
                let mut glue = Node::new(key.and(A::mask(shared)), shared, None);
                glue.child[key.bit(shared)] = leaf;
                glue.child[n.key.bit(shared)] = i;
                self.alloc(glue)
            };
            self.set_link(slot, above);
            self.routes += 1;
            return None;
        }
    }

    /// Removes the route `key/len`, returning its next hop if it was present. Nodes left
    /// without purpose are unlinked: a route with one child is replaced by the child, and glue
    /// left with one child by that child.
    pub fn remove(&mut self, key: A, len: u8) -> Option<NextHop> {
        let mut above = Slot::Root; // the slot that links to the parent of `slot`'s node
        let mut slot = Slot::Root;
        let i = loop {
            let i = self.link(slot);
            let n = self.nodes.get(i as usize)?;
            if n.len > len || key.common(n.key) < n.len {
                return None;
            }
            if n.len == len {
                break i;
            }
            above = slot;
            slot = Slot::Child(i, key.bit(n.len));
        };
        let n = self.nodes[i as usize];
        if !n.route {
            return None;
        }
        self.routes -= 1;
        match n.children() {
            2 => self.nodes[i as usize].route = false,
            1 => {
                let only = n.child[usize::from(n.child[0] == NIL)];
                self.set_link(slot, only);
                self.release(i);
            }
            _ => {
                self.set_link(slot, NIL);
                self.release(i);
                if let Slot::Child(p, d) = slot {
                    let parent = self.nodes[p as usize];
                    if !parent.route {
                        // Glue had two children; the other one takes its place.
                        self.set_link(above, parent.child[1 - d]);
                        self.release(p);
                    }
                }
            }
        }
        Some(n.next_hop)
    }

    /// Renumbers the nodes in breadth-first order and drops the free ones: the top levels,
    /// which every lookup walks, then sit together in a few hundred KiB that stay cached,
    /// where insertion order scattered them over the whole arena.
    pub fn relayout(&mut self) {
        let mut order = Vec::with_capacity(self.live_nodes());
        if self.root != NIL {
            order.push(self.root);
        }
        let mut next = 0;
        while next < order.len() {
            let n = &self.nodes[order[next] as usize];
            order.extend(n.child.iter().filter(|&&c| c != NIL));
            next += 1;
        }
        let mut renumber = vec![NIL; self.nodes.len()];
        for (new, &old) in order.iter().enumerate() {
            renumber[old as usize] = new as u32;
        }
        let link = |c: u32| if c == NIL { NIL } else { renumber[c as usize] };
        let nodes = order
            .iter()
            .map(|&old| {
                let mut n = self.nodes[old as usize];
                n.child = n.child.map(link);
                n
            })
            .collect();
        self.root = link(self.root);
        self.nodes = nodes;
        self.free = Vec::new();
    }

    /// The deepest path: nodes on the longest root-to-leaf chain (0 when empty).
    pub fn depth(&self) -> usize {
        let mut deepest = 0;
        let mut stack = vec![(self.root, 1usize)];
        while let Some((i, d)) = stack.pop() {
            if let Some(n) = self.nodes.get(i as usize) {
                deepest = deepest.max(d);
                stack.extend(n.child.iter().map(|&c| (c, d + 1)));
            }
        }
        deepest
    }

    /// Nodes a lookup of `addr` visits (each is a separate line, nodes being scattered).
    pub fn visits(&self, addr: A) -> usize {
        let mut visited = 0;
        let mut i = self.root;
        while let Some(n) = self.nodes.get(i as usize) {
            visited += 1;
            if addr.common(n.key) < n.len || n.len == A::BITS {
                break;
            }
            i = n.child[addr.bit(n.len)];
        }
        visited
    }

    /// Checks the invariants: every link in range and reached once, children extend their
    /// parent by the bit of their side, keys have no bits past their length, glue has two
    /// children, and the counts match.
    pub fn check(&self) -> Result<(), String> {
        let mut seen = vec![false; self.nodes.len()];
        let mut routes = 0;
        let mut reached = 0;
        // (node, parent key, parent length, side); the root has no parent (length 255).
        let mut stack = vec![(self.root, A::ZERO, u8::MAX, 0usize)];
        while let Some((i, pkey, plen, side)) = stack.pop() {
            if i == NIL {
                continue;
            }
            let n = self
                .nodes
                .get(i as usize)
                .ok_or_else(|| format!("link {i} past the {} nodes", self.nodes.len()))?;
            if std::mem::replace(&mut seen[i as usize], true) {
                return Err(format!("node {i} is linked twice"));
            }
            reached += 1;
            if n.len > A::BITS || n.key != n.key.and(A::mask(n.len)) {
                return Err(format!("node {i}: bits past its length {}", n.len));
            }
            if plen != u8::MAX
                && (n.len <= plen || n.key.common(pkey) < plen || n.key.bit(plen) != side)
            {
                return Err(format!("node {i} does not extend its parent's prefix"));
            }
            if !n.route && n.children() != 2 {
                return Err(format!("glue node {i} has {} children", n.children()));
            }
            if n.len == A::BITS && n.children() != 0 {
                return Err(format!("node {i} is a full-length prefix with children"));
            }
            routes += usize::from(n.route);
            for (d, &c) in n.child.iter().enumerate() {
                stack.push((c, n.key, n.len, d));
            }
        }
        if routes != self.routes || reached != self.live_nodes() {
            return Err(format!(
                "{routes} routes and {reached} nodes reached, {} and {} counted",
                self.routes,
                self.live_nodes()
            ));
        }
        Ok(())
    }
}
