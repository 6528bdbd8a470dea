//! `rte_fib` (DIR-24-8) as an IPv4 [`Lookup`], with AVX-512 bulk lookups.
//!
//! Next hops are stored as `next_hop + 1` with DPDK's default (miss) value 0, so a miss maps
//! to `None` exactly and every `u32` next hop is representable. Entries are the narrowest of
//! DPDK's 1, 2, 4 and 8 bytes that hold every `next_hop + 1` and the tbl8 group count (one
//! bit of each entry marks an extended entry): DPDK at its best, since the 2^24-entry first
//! level is most of what a lookup reads. `rte_fib` accepts a /0 route as it is. It needs one
//! tbl8 group per /24 block holding routes longer than /24, exactly.

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
const ENGINE: &str = "dpdk-fib";

/// DPDK's `rte_fib` built from one IPv4 table.
#[derive(Debug)]
pub struct DpdkFib {
    fib: NonNull<ffi::RteFib>,
    memory: usize,
    avx512: bool,
    entry_bytes: u8,
    tbl8: u32,
}

// SAFETY: the structure is only modified while it is built, by the thread that owns the
// value; afterwards DPDK's lookup reads the tables and never writes (DPDK documents lookups
// as safe from any number of threads while nothing modifies the FIB, and calls from non-EAL
// threads are allowed). rte_fib_free, called on drop, needs no particular thread.
unsafe impl Send for DpdkFib {}
// SAFETY: see `Send`: every `&self` method is a read-only DPDK lookup.
unsafe impl Sync for DpdkFib {}

impl DpdkFib {
    /// Builds the FIB, starting the EAL if it is not running yet (see [`crate::eal`]).
    pub fn build(table: &RouteTable<u32>) -> Result<Self, DpdkError> {
        let routes = common::capacity(ENGINE, "routes", table.len().max(1) as u64, MAX_ROUTES)?;
        // Every count fits an 8-byte entry; the entry size is chosen per attempt below.
        let max_tbl8 = u64::from(u32::MAX);
        let groups = sizing::ipv4_tbl8_groups(table.iter().map(|(p, _)| p));
        let long_routes = table.iter().filter(|(p, _)| p.len() > 24).count() as u64;
        let first = Capacity {
            routes,
            tbl8: common::capacity(ENGINE, "tbl8 groups", groups.max(1), max_tbl8)?,
        };
        let fallback = Capacity {
            routes,
            tbl8: common::capacity(ENGINE, "tbl8 groups", long_routes.max(1), max_tbl8)?,
        };
        common::with_fallback(first, fallback, |cap| {
            let entry_bytes =
                sizing::fib_build_entry_bytes(table, cap.tbl8, &sizing::FIB4_ENTRY_BYTES);
            Self::build_with(table, cap, entry_bytes)
        })
    }

    fn build_with(
        table: &RouteTable<u32>,
        cap: Capacity,
        entry_bytes: u8,
    ) -> Result<Self, DpdkError> {
        let need = estimate::fib4(u64::from(cap.routes), u64::from(cap.tbl8), entry_bytes);
        common::prepare(ENGINE, need)?;
        let (mut built, memory) = common::measured(|| {
            let name = crate::eal::unique_name("f4");
            let (mut avx512, mut err): (c_int, c_int) = (0, 0);
            // SAFETY: `name` is a valid C string for the duration of the call (DPDK copies
            // it); the out-pointers are valid.
            let raw = unsafe {
                ffi::ipfib_fib4_create(
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
            let built = DpdkFib {
                fib,
                memory: 0,
                avx512: avx512 != 0,
                entry_bytes,
                tbl8: cap.tbl8,
            };
            for (prefix, next_hop) in table.iter() {
                // SAFETY: `fib` is a live FIB owned by `built`.
                let ret = unsafe {
                    ffi::ipfib_fib4_add(
                        fib.as_ptr(),
                        prefix.addr(),
                        prefix.len(),
                        u64::from(next_hop) + 1,
                    )
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

    /// True when DPDK selected its AVX-512 bulk lookup; otherwise a scalar one is used.
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

    fn bulk(&self, ips: &[u32], nhs: &mut [u64]) {
        debug_assert!(ips.len() == nhs.len() && ips.len() <= i32::MAX as usize);
        // SAFETY: `fib` is live for `&self`; `ips` and `nhs` hold `len` elements each and
        // `len` fits a c_int (checked by the callers); the lookup only reads `ips` and writes
        // `nhs`.
        unsafe {
            ffi::ipfib_fib4_lookup_bulk(
                self.fib.as_ptr(),
                ips.as_ptr(),
                nhs.as_mut_ptr(),
                ips.len() as c_int,
            )
        };
    }
}

impl NativeBulk<u32> for DpdkFib {
    type Key = u32;
    type Hop = u64;

    fn key(addr: u32) -> u32 {
        addr
    }

    fn lookup_bulk(&self, keys: &[u32], hops: &mut [u64]) -> Result<(), LookupError> {
        native::in_calls(keys, hops, |k, h| self.bulk(k, h))
    }

    #[inline]
    fn decode(&self, hop: u64) -> Option<NextHop> {
        decode(hop)
    }

    fn bulk_lookup(&self) -> BulkLookup {
        BulkLookup {
            call: "rte_fib_lookup_bulk",
            requested: Some("avx512"),
            selected: if self.avx512 {
                "avx512"
            } else {
                "scalar-macro"
            },
            next_hop_bytes: self.entry_bytes,
        }
    }
}

/// The stored value back to a next hop: 0 is DPDK's default, i.e. no route.
#[inline]
fn decode(stored: u64) -> Option<NextHop> {
    stored.checked_sub(1).map(|nh| nh as NextHop)
}

impl Lookup<u32> for DpdkFib {
    fn name(&self) -> &'static str {
        ENGINE
    }

    fn lookup(&self, addr: u32) -> Option<NextHop> {
        let mut nh = [0u64];
        self.bulk(&[addr], &mut nh);
        decode(nh[0])
    }

    fn lookup_batch(&self, addrs: &[u32], out: &mut [Option<NextHop>]) -> Result<(), LookupError> {
        common::chunked_batch(self, addrs, out)
    }

    fn memory_bytes(&self) -> usize {
        self.memory
    }
}

impl Drop for DpdkFib {
    fn drop(&mut self) {
        // Frees change the heap too: keep them out of a concurrent build's measurement.
        let _guard = crate::eal::build_lock();
        // SAFETY: `fib` came from rte_fib_create and is freed exactly once, here.
        unsafe { ffi::ipfib_fib4_free(self.fib.as_ptr()) }
    }
}
