//! The reference LPM: small enough to be obviously correct.
//!
//! One hash map per prefix length; a lookup masks the address to each length that has routes,
//! longest first, and returns the first hit. It is the model every other engine is compared
//! against in the tests, and `--engine reference` in the CLI.

use std::collections::HashMap;

use crate::addr::Address;
use crate::engine::{Build, BuildOptions, Detail, Lookup};
use crate::error::BuildError;
use crate::prefix::Prefix;
use crate::route_table::{NextHop, RouteTable};

/// Hash map per prefix length, probed longest first.
#[derive(Clone, Debug)]
pub struct Reference<A: Address> {
    /// `(length, routes of that length)`, longest length first, only lengths that have routes.
    by_length: Vec<(u8, HashMap<A, NextHop>)>,
}

impl<A: Address> Reference<A> {
    /// Builds the per-length maps from a table (infallible; [`Build::build`] wraps it).
    pub fn new(table: &RouteTable<A>) -> Self {
        let mut maps: Vec<HashMap<A, NextHop>> = vec![HashMap::new(); usize::from(A::BITS) + 1];
        for (prefix, next_hop) in table.iter() {
            maps[usize::from(prefix.len())].insert(prefix.addr(), next_hop);
        }
        let by_length = (0..=A::BITS)
            .rev()
            .zip(maps.into_iter().rev())
            .filter(|(_, m)| !m.is_empty())
            .collect();
        Reference { by_length }
    }
}

impl<A: Address> Build<A> for Reference<A> {
    fn build(table: &RouteTable<A>, _options: &BuildOptions) -> Result<Self, BuildError> {
        Ok(Self::new(table))
    }
}

impl<A: Address> Lookup<A> for Reference<A> {
    fn name(&self) -> &'static str {
        "reference"
    }

    fn lookup(&self, addr: A) -> Option<NextHop> {
        self.by_length
            .iter()
            .find_map(|(len, map)| map.get(&Prefix::covering(addr, *len).addr()).copied())
    }

    fn memory_bytes(&self) -> usize {
        self.by_length
            .iter()
            .map(|(_, m)| m.capacity() * (std::mem::size_of::<(A, NextHop)>() + 1))
            .sum()
    }

    fn describe(&self) -> Vec<Detail> {
        vec![Detail::count("max_probes", self.by_length.len())]
    }
}
