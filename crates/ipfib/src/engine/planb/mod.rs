//! PlanB engine (placeholder layout while the SIMD tree lands: binary search over intervals).

use crate::addr::Address;
use crate::engine::Lpm;
use crate::interval::Intervals;
use crate::table::{NextHop, RouteTable};

/// PlanB lookup structure.
#[derive(Clone, Debug)]
pub struct PlanB<A: Address> {
    intervals: Intervals<A>,
}

impl<A: Address> PlanB<A> {
    /// Builds the engine from a route table.
    pub fn build(table: &RouteTable<A>) -> Self {
        PlanB {
            intervals: Intervals::from_table(table),
        }
    }
}

impl<A: Address> Lpm<A> for PlanB<A> {
    fn name(&self) -> &'static str {
        "planb"
    }
    fn lookup(&self, addr: A) -> Option<NextHop> {
        self.intervals.lookup(addr)
    }
    fn memory_bytes(&self) -> usize {
        self.intervals.len() * (std::mem::size_of::<A>() + 8)
    }
}

/// Shape and size of a built PlanB structure, for `ipfib stats` and the benchmarks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stats {
    /// Merged elementary intervals.
    pub intervals: usize,
    /// Tree levels a lookup walks (including any direct-table stage).
    pub depth: usize,
    /// Bytes of the lookup structure.
    pub bytes: usize,
    /// The node-search backend chosen at run time (`avx512`, `avx2` or `scalar`).
    pub backend: &'static str,
}

impl<A: Address> PlanB<A> {
    /// Shape and size of the structure.
    pub fn stats(&self) -> Stats {
        Stats {
            intervals: self.intervals.len(),
            depth: 1,
            bytes: self.memory_bytes(),
            backend: "scalar",
        }
    }
}
