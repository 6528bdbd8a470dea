//! `rte_fib6` (TRIE) as an IPv6 [`Lookup`]: the fastest correct IPv6 structure DPDK has, with
//! AVX-512 bulk lookups.
//!
//! Next hops are stored as `next_hop + 1` with DPDK's default (miss) value 0, so a miss maps
//! to `None` exactly and every `u32` next hop is representable. Entries are the narrowest of
//! DPDK's 2, 4 and 8 bytes that hold every `next_hop + 1` and the tbl8 group count (one bit
//! of each entry marks an extended entry): DPDK at its best. `rte_fib6` accepts a /0 route as
//! it is.

use std::ffi::c_int;
use std::ptr::NonNull;

use ipfib::{Lookup, LookupError, NextHop, RouteTable};

use crate::common::{self, Capacity};
use crate::error::DpdkError;
use crate::ffi;
use crate::native::{self, BulkLookup, NativeBulk};
use crate::sizing::{self, estimate};

/// `max_routes` is a C `int`, and the RIB is created with twice as many nodes.
const MAX_ROUTES: u64 = (i32::MAX / 2) as u64;
const ENGINE: &str = "dpdk-fib6";

/// DPDK's `rte_fib6` built from one IPv6 table.
#[derive(Debug)]
pub struct DpdkFib6 {
    fib: NonNull<ffi::RteFib6>,
    memory: usize,
    avx512: bool,
    entry_bytes: u8,
    tbl8: u32,
}

// SAFETY: the structure is only modified while it is built, by the thread that owns the
// value; afterwards DPDK's lookup reads the tables and never writes (DPDK documents lookups
// as safe from any number of threads while nothing modifies the FIB, and calls from non-EAL
// threads are allowed). rte_fib6_free, called on drop, needs no particular thread.
unsafe impl Send for DpdkFib6 {}
// SAFETY: see `Send`: every `&self` method is a read-only DPDK lookup.
unsafe impl Sync for DpdkFib6 {}

impl DpdkFib6 {
    /// Builds the FIB, starting the EAL if it is not running yet (see [`crate::eal`]).
    pub fn build(table: &RouteTable<u128>) -> Result<Self, DpdkError> {
        let routes = common::capacity(ENGINE, "routes", table.len().max(1) as u64, MAX_ROUTES)?;
        // Every count fits an 8-byte entry; the entry size is chosen per attempt below.
        let max_tbl8 = u64::from(u32::MAX);
        let reserved = sizing::fib6_reserved_tbl8_groups(table);
        let bound = sizing::fib6_tbl8_bound(table);
        let first = Capacity {
            routes,
            tbl8: common::capacity(ENGINE, "tbl8 groups", reserved.max(1), max_tbl8)?,
        };
        let fallback = Capacity {
            routes,
            tbl8: common::capacity(ENGINE, "tbl8 groups", bound.max(1), max_tbl8)?,
        };
        common::with_fallback(first, fallback, |cap| {
            let entry_bytes =
                sizing::fib_build_entry_bytes(table, cap.tbl8, &sizing::FIB6_ENTRY_BYTES);
            Self::build_with(table, cap, entry_bytes)
        })
    }

    fn build_with(
        table: &RouteTable<u128>,
        cap: Capacity,
        entry_bytes: u8,
    ) -> Result<Self, DpdkError> {
        let need = estimate::fib6(u64::from(cap.routes), u64::from(cap.tbl8), entry_bytes);
        common::prepare(ENGINE, need)?;
        let (mut built, memory) = common::measured(|| {
            let name = crate::eal::unique_name("f6");
            let (mut avx512, mut err): (c_int, c_int) = (0, 0);
            // SAFETY: `name` is a valid C string for the duration of the call (DPDK copies
            // it); the out-pointers are valid.
            let raw = unsafe {
                ffi::ipfib_fib6_create(
                    name.as_ptr(),
                    cap.routes,
                    cap.tbl8,
                    c_int::from(entry_bytes),
                    &mut avx512,
                    &mut err,
                )
            };
            let fib = NonNull::new(raw).ok_or_else(|| common::create_error(ENGINE, err))?;
            // Owned from here: an early return below frees it through Drop.
            let built = DpdkFib6 {
                fib,
                memory: 0,
                avx512: avx512 != 0,
                entry_bytes,
                tbl8: cap.tbl8,
            };
            for (prefix, next_hop) in table.iter() {
                let ip = prefix.addr().to_be_bytes();
                // SAFETY: `fib` is a live FIB owned by `built`, `ip` is 16 readable bytes.
                let ret = unsafe {
                    ffi::ipfib_fib6_add(fib.as_ptr(), &ip, prefix.len(), u64::from(next_hop) + 1)
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

    /// True when DPDK selected its AVX-512 bulk lookup (the CPU has AVX-512F/DQ/BW and the EAL
    /// allows 512-bit SIMD); otherwise the scalar one is used.
    pub fn uses_avx512(&self) -> bool {
        self.avx512
    }

    /// Bytes per table entry (see the module doc).
    pub fn entry_bytes(&self) -> u8 {
        self.entry_bytes
    }

    /// The number of tbl8 groups the FIB was created with.
    pub fn tbl8_groups(&self) -> u32 {
        self.tbl8
    }

    fn bulk(&self, ips: &[[u8; 16]], nhs: &mut [u64]) {
        debug_assert!(ips.len() == nhs.len() && ips.len() <= i32::MAX as usize);
        // SAFETY: `fib` is live for `&self`; `ips` and `nhs` hold `len` elements each and
        // `len` fits a c_int (checked by the callers); the lookup only reads `ips` and writes
        // `nhs`.
        unsafe {
            ffi::ipfib_fib6_lookup_bulk(
                self.fib.as_ptr(),
                ips.as_ptr(),
                nhs.as_mut_ptr(),
                ips.len() as c_int,
            )
        };
    }
}

impl NativeBulk<u128> for DpdkFib6 {
    type Key = [u8; 16];
    type Hop = u64;

    fn key(addr: u128) -> [u8; 16] {
        addr.to_be_bytes()
    }

    fn lookup_bulk(&self, keys: &[[u8; 16]], hops: &mut [u64]) -> Result<(), LookupError> {
        native::in_calls(keys, hops, |k, h| self.bulk(k, h))
    }

    #[inline]
    fn decode(&self, hop: u64) -> Option<NextHop> {
        decode(hop)
    }

    fn bulk_lookup(&self) -> BulkLookup {
        BulkLookup {
            call: "rte_fib6_lookup_bulk",
            requested: Some("avx512"),
            selected: if self.avx512 { "avx512" } else { "scalar" },
            next_hop_bytes: self.entry_bytes,
        }
    }
}

/// The stored value back to a next hop: 0 is DPDK's default, i.e. no route.
#[inline]
fn decode(stored: u64) -> Option<NextHop> {
    stored.checked_sub(1).map(|nh| nh as NextHop)
}

impl Lookup<u128> for DpdkFib6 {
    fn name(&self) -> &'static str {
        ENGINE
    }

    fn lookup(&self, addr: u128) -> Option<NextHop> {
        let mut nh = [0u64];
        self.bulk(&[addr.to_be_bytes()], &mut nh);
        decode(nh[0])
    }

    fn lookup_batch(&self, addrs: &[u128], out: &mut [Option<NextHop>]) -> Result<(), LookupError> {
        common::chunked_batch(self, addrs, out)
    }

    fn memory_bytes(&self) -> usize {
        self.memory
    }
}

impl Drop for DpdkFib6 {
    fn drop(&mut self) {
        // Frees change the heap too: keep them out of a concurrent build's measurement.
        let _guard = crate::eal::build_lock();
        // SAFETY: `fib` came from rte_fib6_create and is freed exactly once, here.
        unsafe { ffi::ipfib_fib6_free(self.fib.as_ptr()) }
    }
}
