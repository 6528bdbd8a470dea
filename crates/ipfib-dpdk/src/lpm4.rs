//! `rte_lpm` (DIR-24-8) as an IPv4 [`Lookup`].
//!
//! Limits handled here rather than left to DPDK: next hops are a 24-bit field (a wider one is
//! a [`DpdkError::NextHopTooWide`], never truncated); depth 0 is refused by `rte_lpm`, so a
//! /0 route is installed as the /1 halves the table does not have
//! ([`sizing::routes_without_default`]), which matches the same addresses. Misses are
//! recognised by DPDK's hit flag, so next hop 0 needs no special encoding.

use std::ffi::{c_int, c_uint};
use std::ptr::NonNull;

use ipfib::{Lookup, LookupError, NextHop, RouteTable};

use crate::common::{self, Capacity};
use crate::error::DpdkError;
use crate::ffi;
use crate::native::{self, BulkLookup, NativeBulk};
use crate::sizing::{self, estimate};

const ENGINE: &str = "dpdk-lpm";
const NEXT_HOP_MASK: u32 = sizing::LPM4_MAX_NEXT_HOP;

/// DPDK's `rte_lpm` built from one IPv4 table.
#[derive(Debug)]
pub struct DpdkLpm {
    lpm: NonNull<ffi::RteLpm>,
    memory: usize,
    hit_flag: u32,
    tbl8: u32,
}

// SAFETY: the structure is only modified while it is built, by the thread that owns the
// value; afterwards rte_lpm lookups only read the tables (DPDK documents lookups as safe from
// any number of threads while nothing modifies the LPM, including non-EAL threads).
// rte_lpm_free, called on drop, needs no particular thread.
unsafe impl Send for DpdkLpm {}
// SAFETY: see `Send`: every `&self` method is a read-only DPDK lookup.
unsafe impl Sync for DpdkLpm {}

impl DpdkLpm {
    /// Builds the LPM, starting the EAL if it is not running yet (see [`crate::eal`]).
    pub fn build(table: &RouteTable<u32>) -> Result<Self, DpdkError> {
        if let Some((prefix, next_hop)) =
            sizing::first_next_hop_above(table, sizing::LPM4_MAX_NEXT_HOP)
        {
            return Err(DpdkError::NextHopTooWide {
                engine: ENGINE,
                prefix: prefix.to_string(),
                next_hop,
                max: sizing::LPM4_MAX_NEXT_HOP,
            });
        }
        let routes = sizing::routes_without_default(table);
        let rules = common::capacity(
            ENGINE,
            "routes",
            routes.len().max(1) as u64,
            u64::from(u32::MAX),
        )?;
        let groups = sizing::ipv4_tbl8_groups(routes.iter().map(|(p, _)| *p));
        let long_routes = routes.iter().filter(|(p, _)| p.len() > 24).count() as u64;
        // rte_lpm indexes tbl8 groups with 24 bits.
        let max_tbl8 = 1 << 24;
        let first = Capacity {
            routes: rules,
            tbl8: common::capacity(ENGINE, "tbl8 groups", groups.max(1), max_tbl8)?,
        };
        let fallback = Capacity {
            routes: rules,
            tbl8: common::capacity(ENGINE, "tbl8 groups", long_routes.max(1), max_tbl8)?,
        };
        common::with_fallback(first, fallback, |cap| Self::build_with(&routes, cap))
    }

    fn build_with(
        routes: &[(ipfib::Prefix<u32>, NextHop)],
        cap: Capacity,
    ) -> Result<Self, DpdkError> {
        let need = estimate::lpm4(u64::from(cap.routes), u64::from(cap.tbl8));
        common::prepare(ENGINE, need)?;
        let (mut built, memory) = common::measured(|| {
            let name = crate::eal::unique_name("l4");
            let mut err: c_int = 0;
            // SAFETY: `name` is a valid C string for the duration of the call (DPDK copies
            // it); `err` is a valid out-pointer.
            let raw =
                unsafe { ffi::ipfib_lpm4_create(name.as_ptr(), cap.routes, cap.tbl8, &mut err) };
            let lpm = NonNull::new(raw).ok_or_else(|| common::create_error(ENGINE, err))?;
            // Owned from here: an early return below frees it through Drop.
            let built = DpdkLpm {
                lpm,
                memory: 0,
                // SAFETY: returns a constant.
                hit_flag: unsafe { ffi::ipfib_lpm4_hit_flag() },
                tbl8: cap.tbl8,
            };
            for &(prefix, next_hop) in routes {
                // SAFETY: `lpm` is a live LPM owned by `built`; depth is 1..=32 and the next
                // hop fits 24 bits (both checked above).
                let ret = unsafe {
                    ffi::ipfib_lpm4_add(lpm.as_ptr(), prefix.addr(), prefix.len(), next_hop)
                };
                if ret < 0 {
                    return Err(common::add_error(ENGINE, prefix, ret));
                }
            }
            Ok(built)
        })?;
        built.memory = memory;
        Ok(built)
    }

    /// The number of tbl8 groups the LPM was created with.
    pub fn tbl8_groups(&self) -> u32 {
        self.tbl8
    }
}

impl NativeBulk<u32> for DpdkLpm {
    type Key = u32;
    type Hop = u32;

    fn key(addr: u32) -> u32 {
        addr
    }

    fn lookup_bulk(&self, keys: &[u32], hops: &mut [u32]) -> Result<(), LookupError> {
        native::in_calls(keys, hops, |ips, nhs| {
            // SAFETY: `lpm` is live for `&self`; `ips` and `nhs` hold `len` elements each
            // (`len` <= i32::MAX fits a c_uint); the lookup only reads `ips` and writes `nhs`.
            unsafe {
                ffi::ipfib_lpm4_lookup_bulk(
                    self.lpm.as_ptr(),
                    ips.as_ptr(),
                    nhs.as_mut_ptr(),
                    ips.len() as c_uint,
                )
            };
        })
    }

    /// The entry also carries DPDK's hit flag and group bits above the 24-bit hop.
    #[inline]
    fn decode(&self, hop: u32) -> Option<NextHop> {
        (hop & self.hit_flag != 0).then_some(hop & NEXT_HOP_MASK)
    }

    fn bulk_lookup(&self) -> BulkLookup {
        BulkLookup {
            call: "rte_lpm_lookup_bulk",
            requested: None,
            selected: "scalar",
            next_hop_bytes: 4,
        }
    }
}

impl Lookup<u32> for DpdkLpm {
    fn name(&self) -> &'static str {
        ENGINE
    }

    fn lookup(&self, addr: u32) -> Option<NextHop> {
        let mut nh = 0u32;
        // SAFETY: `lpm` is live for `&self`; `nh` is a valid out-pointer.
        let hit = unsafe { ffi::ipfib_lpm4_lookup(self.lpm.as_ptr(), addr, &mut nh) };
        (hit != 0).then_some(nh & NEXT_HOP_MASK)
    }

    fn lookup_batch(&self, addrs: &[u32], out: &mut [Option<NextHop>]) -> Result<(), LookupError> {
        common::chunked_batch(self, addrs, out)
    }

    fn memory_bytes(&self) -> usize {
        self.memory
    }
}

impl Drop for DpdkLpm {
    fn drop(&mut self) {
        // Frees change the heap too: keep them out of a concurrent build's measurement.
        let _guard = crate::eal::build_lock();
        // SAFETY: `lpm` came from rte_lpm_create and is freed exactly once, here.
        unsafe { ffi::ipfib_lpm4_free(self.lpm.as_ptr()) }
    }
}
