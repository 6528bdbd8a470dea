//! # ipfib-dpdk — DPDK's LPM libraries as comparators for ipfib
//!
//! The strongest correct baselines for ipfib's engines are DPDK's `rte_fib6`/`rte_fib`
//! (with AVX-512 bulk lookups) and `rte_lpm6`/`rte_lpm`. This crate wraps each as an
//! [`ipfib::Lookup`] so benchmarks and tests treat them like any other engine:
//! `DpdkFib6` (`dpdk-fib6`), `DpdkLpm6` (`dpdk-lpm6`), `DpdkFib` (`dpdk-fib`) and
//! `DpdkLpm` (`dpdk-lpm`), built by `comparators_v6` / `comparators_v4`.
//!
//! The wrappers answer exactly like [`ipfib::engine::reference::Reference`] or refuse to be
//! built: a table that a DPDK structure cannot represent (a next hop wider than its field, too many routes) is a
//! typed [`DpdkError`], never a structure that gives wrong answers. See each type for how it
//! encodes misses and default routes.
//!
//! ## Running DPDK inside a library
//!
//! DPDK's EAL is started once per process, on first use or by `init_eal`/`start_eal`: huge
//! pages when the system has enough free (else 4 KiB pages, which `eal_info` reports), no
//! PCI, no shared files, no telemetry, AVX-512 allowed (see `eal` for why it runs on a
//! thread of its own and how `-m` is sized; `IPFIB_DPDK_MEM_MB` overrides the size). Its
//! log goes to stderr. `memory_bytes` of each wrapper is the growth of DPDK's malloc heap
//! while that structure was built (builds and frees are serialised so the figure is that
//! structure's alone): tables, tbl8 groups, RIB node pools and rule hashes, everything DPDK
//! allocated for it.
//!
//! ## Native bulk lookups
//!
//! Each wrapper also implements `native::NativeBulk`: DPDK's bulk lookup fed in DPDK's own layout
//! (IPv6 as 16 network-order bytes, IPv4 as host-order `u32`s) into an array of DPDK's
//! next-hop type, with no conversion per call, as a DPDK application calls it; and it tells
//! which lookup function DPDK selected (`native::BulkLookup`). Benchmarks time this path.
//!
//! Everything that calls DPDK needs the `dpdk` feature (and `libdpdk-dev`, see
//! `scripts/install-dpdk.sh`). Without it the crate has only [`sizing`] and [`DpdkError`], and
//! builds with no C compiler and no DPDK, so the workspace builds everywhere.

#![warn(missing_docs)]

pub mod error;
pub mod sizing;

pub use error::DpdkError;

#[cfg(feature = "dpdk")]
mod common;
#[cfg(feature = "dpdk")]
pub mod eal;
#[cfg(feature = "dpdk")]
mod ffi;
#[cfg(feature = "dpdk")]
mod fib4;
#[cfg(feature = "dpdk")]
mod fib6;
#[cfg(feature = "dpdk")]
mod lpm4;
#[cfg(feature = "dpdk")]
mod lpm6;
#[cfg(feature = "dpdk")]
pub mod native;

#[cfg(feature = "dpdk")]
pub use dpdk_api::*;

#[cfg(feature = "dpdk")]
mod dpdk_api {
    use ipfib::{Lookup, RouteTable};

    pub use crate::eal::{eal_info, init_eal, start_eal, EalInfo};
    pub use crate::fib4::DpdkFib;
    pub use crate::fib6::DpdkFib6;
    pub use crate::lpm4::DpdkLpm;
    pub use crate::lpm6::DpdkLpm6;
    pub use crate::native::{BulkLookup, NativeBulk};
    use crate::DpdkError;

    /// Every DPDK IPv6 comparator for a table: `dpdk-fib6`, then `dpdk-lpm6`. Starts the EAL
    /// if it is not running yet. Fails on the first structure that cannot represent the
    /// table exactly (for example `dpdk-lpm6` with a next hop of 2^21 or more); build the
    /// types one by one to keep the others in that case.
    pub fn comparators_v6(
        table: &RouteTable<u128>,
    ) -> Result<Vec<Box<dyn Lookup<u128>>>, DpdkError> {
        Ok(vec![
            Box::new(DpdkFib6::build(table)?),
            Box::new(DpdkLpm6::build(table)?),
        ])
    }

    /// Every DPDK IPv4 comparator for a table: `dpdk-fib`, then `dpdk-lpm`. Starts the EAL if
    /// it is not running yet. Fails on the first structure that cannot represent the table
    /// exactly (for example `dpdk-lpm` with a next hop of 2^24 or more).
    pub fn comparators_v4(table: &RouteTable<u32>) -> Result<Vec<Box<dyn Lookup<u32>>>, DpdkError> {
        Ok(vec![
            Box::new(DpdkFib::build(table)?),
            Box::new(DpdkLpm::build(table)?),
        ])
    }
}
