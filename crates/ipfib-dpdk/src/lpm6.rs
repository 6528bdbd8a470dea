//! `rte_lpm6` as an IPv6 [`Lookup`].
//!
//! Limits handled here rather than left to DPDK: next hops are a 21-bit field that DPDK
//! truncates without an error, so a wider one is a [`DpdkError::NextHopTooWide`]; depths are
//! 1..=128, so a /0 route is installed as the /1 halves the table does not have
//! ([`sizing::routes_without_default`]), which matches the same addresses. Misses are
//! recognised by DPDK's miss value (-1 in bulk, `-ENOENT` single), so next hop 0 needs no
//! special encoding.

use std::ffi::{c_int, c_uint};
use std::ptr::NonNull;

use ipfib::{Lookup, LookupError, NextHop, Prefix, RouteTable};

use crate::common::{self, Capacity};
use crate::error::DpdkError;
use crate::ffi;
use crate::native::{self, BulkLookup, NativeBulk};
use crate::sizing::{self, estimate};

const ENGINE: &str = "dpdk-lpm6";
/// `rte_hash`, which holds the rules, refuses fewer entries than one bucket (8).
const MIN_RULES: u64 = 8;

/// DPDK's `rte_lpm6` built from one IPv6 table.
#[derive(Debug)]
pub struct DpdkLpm6 {
    lpm: NonNull<ffi::RteLpm6>,
    memory: usize,
    tbl8: u32,
}

// SAFETY: the structure is only modified while it is built, by the thread that owns the
// value; afterwards rte_lpm6 lookups only read the tables (the rule hash is not touched by
// lookups), which DPDK documents as safe from any number of threads while nothing modifies
// the LPM, including non-EAL threads. rte_lpm6_free, called on drop, needs no particular
// thread.
unsafe impl Send for DpdkLpm6 {}
// SAFETY: see `Send`: every `&self` method is a read-only DPDK lookup.
unsafe impl Sync for DpdkLpm6 {}

impl DpdkLpm6 {
    /// Builds the LPM, starting the EAL if it is not running yet (see [`crate::eal`]).
    pub fn build(table: &RouteTable<u128>) -> Result<Self, DpdkError> {
        if let Some((prefix, next_hop)) =
            sizing::first_next_hop_above(table, sizing::LPM6_MAX_NEXT_HOP)
        {
            return Err(DpdkError::NextHopTooWide {
                engine: ENGINE,
                prefix: prefix.to_string(),
                next_hop,
                max: sizing::LPM6_MAX_NEXT_HOP,
            });
        }
        let routes = sizing::routes_without_default(table);
        let n = routes.len() as u64;
        let groups = sizing::ipv6_tbl8_groups(routes.iter().map(|(p, _)| *p));
        let bound = sizing::lpm6_tbl8_bound(&routes);
        let max = u64::from(u32::MAX);
        let first = Capacity {
            routes: common::capacity(ENGINE, "routes", n.max(MIN_RULES), max)?,
            tbl8: common::capacity(ENGINE, "tbl8 groups", groups.max(1), max)?,
        };
        // The rule hash is a cuckoo hash that can report full slightly before it is; the
        // fallback doubles it along with the tbl8 bound.
        let fallback = Capacity {
            routes: common::capacity(ENGINE, "routes", (2 * n).max(MIN_RULES), max)?,
            tbl8: common::capacity(ENGINE, "tbl8 groups", bound.max(1), max)?,
        };
        common::with_fallback(first, fallback, |cap| Self::build_with(&routes, cap))
    }

    fn build_with(routes: &[(Prefix<u128>, NextHop)], cap: Capacity) -> Result<Self, DpdkError> {
        let need = estimate::lpm6(u64::from(cap.routes), u64::from(cap.tbl8));
        common::prepare(ENGINE, need)?;
        let (mut built, memory) = common::measured(|| {
            let name = crate::eal::unique_name("l6");
            let mut err: c_int = 0;
            // SAFETY: `name` is a valid C string for the duration of the call (DPDK copies
            // it); `err` is a valid out-pointer.
            let raw =
                unsafe { ffi::ipfib_lpm6_create(name.as_ptr(), cap.routes, cap.tbl8, &mut err) };
            let lpm = NonNull::new(raw).ok_or_else(|| common::create_error(ENGINE, err))?;
            // Owned from here: an early return below frees it through Drop.
            let built = DpdkLpm6 {
                lpm,
                memory: 0,
                tbl8: cap.tbl8,
            };
            for &(prefix, next_hop) in routes {
                let ip = prefix.addr().to_be_bytes();
                // SAFETY: `lpm` is a live LPM owned by `built`, `ip` is 16 readable bytes;
                // depth is 1..=128 and the next hop fits 21 bits (both checked above).
                let ret = unsafe { ffi::ipfib_lpm6_add(lpm.as_ptr(), &ip, prefix.len(), next_hop) };
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

impl NativeBulk<u128> for DpdkLpm6 {
    type Key = [u8; 16];
    type Hop = i32;

    fn key(addr: u128) -> [u8; 16] {
        addr.to_be_bytes()
    }

    fn lookup_bulk(&self, keys: &[[u8; 16]], hops: &mut [i32]) -> Result<(), LookupError> {
        native::in_calls(keys, hops, |ips, nhs| {
            // SAFETY: `lpm` is live for `&self`; `ips` and `nhs` hold `len` elements each
            // (`len` <= i32::MAX fits a c_uint); the lookup only reads `ips` and writes `nhs`.
            unsafe {
                ffi::ipfib_lpm6_lookup_bulk(
                    self.lpm.as_ptr(),
                    ips.as_ptr(),
                    nhs.as_mut_ptr(),
                    ips.len() as c_uint,
                )
            };
        })
    }

    /// Next hops are below 2^21, so -1 is only ever DPDK's miss value.
    #[inline]
    fn decode(&self, hop: i32) -> Option<NextHop> {
        u32::try_from(hop).ok()
    }

    fn bulk_lookup(&self) -> BulkLookup {
        BulkLookup {
            call: "rte_lpm6_lookup_bulk_func",
            requested: None,
            selected: "scalar",
            next_hop_bytes: 4,
        }
    }
}

impl Lookup<u128> for DpdkLpm6 {
    fn name(&self) -> &'static str {
        ENGINE
    }

    fn lookup(&self, addr: u128) -> Option<NextHop> {
        let ip = addr.to_be_bytes();
        let mut nh = 0u32;
        // SAFETY: `lpm` is live for `&self`; `ip` is 16 readable bytes, `nh` a valid
        // out-pointer.
        let hit = unsafe { ffi::ipfib_lpm6_lookup(self.lpm.as_ptr(), &ip, &mut nh) };
        (hit != 0).then_some(nh)
    }

    fn lookup_batch(&self, addrs: &[u128], out: &mut [Option<NextHop>]) -> Result<(), LookupError> {
        common::chunked_batch(self, addrs, out)
    }

    fn memory_bytes(&self) -> usize {
        self.memory
    }
}

impl Drop for DpdkLpm6 {
    fn drop(&mut self) {
        // Frees change the heap too: keep them out of a concurrent build's measurement.
        let _guard = crate::eal::build_lock();
        // SAFETY: `lpm` came from rte_lpm6_create and is freed exactly once, here.
        unsafe { ffi::ipfib_lpm6_free(self.lpm.as_ptr()) }
    }
}
