//! [`Reader`]: a per-thread handle that looks up in the current version without locking.

use std::net::IpAddr;
use std::sync::Arc;

use arc_swap::{ArcSwap, Cache};

use super::Snapshot;
use crate::error::LookupError;
use crate::route_table::NextHop;

/// A reader's handle on a [`super::LiveFib`]: one per thread (it is `Send`, not `Sync`; the
/// methods take `&mut self`).
///
/// Each lookup first checks whether a newer version was published: one atomic *load* of the
/// live table's current pointer, compared with the version this handle holds
/// ([`arc_swap::Cache`]). Only when it differs does the handle take the new version (a
/// reference-count increment, once per publish, not per lookup). So a lookup takes no lock,
/// never retries, and writes nothing to memory another thread reads: readers do not contend
/// with each other or with the rebuilder, however many there are.
///
/// Every lookup answers from one whole version, old or new, never a mix. The version a handle
/// holds stays in memory until the handle's next lookup (or [`Reader::refresh`]) or until the
/// handle is dropped: an idle handle pins at most one old version.
pub struct Reader {
    cache: Cache<Arc<ArcSwap<Snapshot>>, Arc<Snapshot>>,
}

impl Reader {
    pub(super) fn new(current: Arc<ArcSwap<Snapshot>>) -> Self {
        Reader {
            cache: Cache::new(current),
        }
    }

    /// The current version, to run many lookups against one version (the whole batch sees the
    /// same routes). Cheap: see the type's documentation.
    #[inline]
    pub fn snapshot(&mut self) -> &Arc<Snapshot> {
        self.cache.load()
    }

    /// Takes the current version now and lets go of the one held before (so an idle reader
    /// does not keep an old version in memory).
    pub fn refresh(&mut self) {
        self.cache.load();
    }

    /// The next hop of the longest route containing `addr` in the current version.
    #[inline]
    pub fn lookup(&mut self, addr: IpAddr) -> Option<NextHop> {
        self.cache.load().lookup(addr)
    }

    /// One IPv4 address (`u32::from(Ipv4Addr)`).
    #[inline]
    pub fn lookup_v4(&mut self, addr: u32) -> Option<NextHop> {
        self.cache.load().lookup_v4(addr)
    }

    /// One IPv6 address (`u128::from(Ipv6Addr)`).
    #[inline]
    pub fn lookup_v6(&mut self, addr: u128) -> Option<NextHop> {
        self.cache.load().lookup_v6(addr)
    }

    /// A batch of IPv4 addresses into plain next hops (`miss` for no route), all from one
    /// version; the slices must have equal lengths.
    #[inline]
    pub fn lookup_v4_batch(
        &mut self,
        addrs: &[u32],
        out: &mut [NextHop],
        miss: NextHop,
    ) -> Result<(), LookupError> {
        self.cache.load().lookup_v4_batch(addrs, out, miss)
    }

    /// A batch of IPv6 addresses, as [`Reader::lookup_v4_batch`].
    #[inline]
    pub fn lookup_v6_batch(
        &mut self,
        addrs: &[u128],
        out: &mut [NextHop],
        miss: NextHop,
    ) -> Result<(), LookupError> {
        self.cache.load().lookup_v6_batch(addrs, out, miss)
    }
}

impl std::fmt::Debug for Reader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reader").finish_non_exhaustive()
    }
}
