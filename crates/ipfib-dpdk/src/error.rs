//! Why a DPDK comparator could not be built.
//!
//! Every way a table can fail to be represented exactly is a variant here, so a benchmark
//! never compares against a structure that silently dropped or truncated a route.

/// An error from starting DPDK or building one of its lookup structures.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DpdkError {
    /// `rte_eal_init` failed (it can only be tried once per process).
    #[error("DPDK EAL initialisation failed ({args}): {reason}")]
    Eal {
        /// The EAL arguments that were used.
        args: String,
        /// DPDK's explanation.
        reason: String,
    },
    /// The EAL's memory (`-m`, fixed when the EAL started) is too small for the structure.
    #[error("{engine}: needs about {needed_mib} MiB of DPDK memory but only {free_mib} MiB of the EAL's {total_mib} MiB is free; start the EAL with more (set IPFIB_DPDK_MEM_MB or call ipfib_dpdk::init_eal first)")]
    Memory {
        /// The structure being built.
        engine: &'static str,
        /// Estimated need.
        needed_mib: u64,
        /// Free memory in the DPDK heap.
        free_mib: u64,
        /// Memory the EAL was started with.
        total_mib: u64,
    },
    /// A next hop does not fit the structure's next-hop field; storing it would truncate it.
    #[error("{engine}: next hop {next_hop} of {prefix} does not fit (the largest it can store is {max})")]
    NextHopTooWide {
        /// The structure being built.
        engine: &'static str,
        /// The first route whose next hop is too wide.
        prefix: String,
        /// Its next hop.
        next_hop: u32,
        /// The largest next hop the structure can store.
        max: u32,
    },
    /// The table has more routes or needs more tbl8 groups than the structure can be sized for.
    #[error("{engine}: {what} is {count}, more than the structure allows ({max})")]
    TooLarge {
        /// The structure being built.
        engine: &'static str,
        /// What overflowed ("routes", "tbl8 groups").
        what: &'static str,
        /// How many were needed.
        count: u64,
        /// The limit.
        max: u64,
    },
    /// DPDK refused to create the structure.
    #[error("{engine}: create failed: {reason} (errno {code})")]
    Create {
        /// The structure being built.
        engine: &'static str,
        /// DPDK's errno value.
        code: i32,
        /// DPDK's explanation.
        reason: String,
    },
    /// DPDK refused a route.
    #[error("{engine}: adding {prefix} failed: {reason} (errno {code})")]
    Add {
        /// The structure being built.
        engine: &'static str,
        /// The route.
        prefix: String,
        /// DPDK's errno value (positive).
        code: i32,
        /// DPDK's explanation.
        reason: String,
    },
}
