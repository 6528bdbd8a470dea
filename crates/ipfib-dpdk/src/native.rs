//! DPDK's bulk lookups called the way a DPDK application calls them.
//!
//! [`ipfib::Lookup::lookup_batch`] takes `u128`/`u32` addresses and returns
//! `Option<NextHop>`s, so the wrappers convert every address into DPDK's layout and decode
//! every answer around each bulk call. A DPDK application does neither: its addresses come
//! out of packets already in DPDK's layout (IPv6 as 16 network-order bytes; IPv4 as a
//! host-order `u32`, which `rte_fib`/`rte_lpm` take), and it uses DPDK's answers as they are.
//! [`NativeBulk`] is that interface: convert the addresses once with [`NativeBulk::key`],
//! then call [`NativeBulk::lookup_bulk`] from those keys straight into an array of DPDK's
//! next-hop type, in calls as large as the caller likes.

use ipfib::{Address, Lookup, LookupError, NextHop};

/// Which DPDK lookup function answers a structure's bulk lookups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BulkLookup {
    /// The DPDK call, e.g. `rte_fib6_lookup_bulk`.
    pub call: &'static str,
    /// The implementation asked for with `rte_fib_select_lookup`/`rte_fib6_select_lookup`
    /// (`avx512`), or `None` for the libraries that have one implementation.
    pub requested: Option<&'static str>,
    /// The implementation that answers: the requested one when DPDK accepted it, else the
    /// scalar one selected instead (`scalar`, `scalar-macro`).
    pub selected: &'static str,
    /// Bytes per next-hop entry in DPDK's tables (`nh_sz` of `rte_fib`/`rte_fib6`; 4 for the
    /// LPM libraries, whose 4-byte entries carry a 24- or 21-bit next hop).
    pub next_hop_bytes: u8,
}

/// A DPDK structure's own bulk lookup, in DPDK's address layout and next-hop type.
pub trait NativeBulk<A: Address>: Lookup<A> {
    /// One address as the bulk lookup reads it: `[u8; 16]` in network byte order for IPv6,
    /// a host-order `u32` for IPv4.
    type Key: Copy + Default + Send + Sync + 'static;
    /// One answer as the bulk lookup writes it (`u64` for `rte_fib`/`rte_fib6`, `u32` for
    /// `rte_lpm`, `i32` for `rte_lpm6`).
    type Hop: Copy + Default + Send + Sync + 'static;

    /// An address in the bulk lookup's layout.
    fn key(addr: A) -> Self::Key;

    /// DPDK's bulk lookup of `keys` into `hops` (equal lengths, else nothing is written and
    /// an error is returned); one DPDK call per `i32::MAX` keys.
    fn lookup_bulk(&self, keys: &[Self::Key], hops: &mut [Self::Hop]) -> Result<(), LookupError>;

    /// A DPDK answer as a next hop (`None` for no route), exactly as
    /// [`Lookup::lookup_batch`] would have answered.
    fn decode(&self, hop: Self::Hop) -> Option<NextHop>;

    /// Which lookup function answers, and the next-hop entry size.
    fn bulk_lookup(&self) -> BulkLookup;
}

/// Keys per DPDK call: the `rte_fib`/`rte_fib6` bulk lookups take an `int` count.
const MAX_CALL: usize = i32::MAX as usize;

/// Runs `call` over equal-length `keys` and `hops` in pieces of at most [`MAX_CALL`].
pub(crate) fn in_calls<K, H>(
    keys: &[K],
    hops: &mut [H],
    mut call: impl FnMut(&[K], &mut [H]),
) -> Result<(), LookupError> {
    ipfib::engine::check_batch(keys.len(), hops.len())?;
    for (k, h) in keys.chunks(MAX_CALL).zip(hops.chunks_mut(MAX_CALL)) {
        call(k, h);
    }
    Ok(())
}
