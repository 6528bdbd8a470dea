//! [`Reader`]: a per-thread handle that looks up in the current version without locking.

use std::net::IpAddr;
use std::sync::Arc;

use super::current::Current;
use super::snapshot::Engine;
use super::Snapshot;
use crate::error::LookupError;
use crate::route_table::NextHop;

/// A reader's handle on a [`super::LiveFib`]: one per thread (it is `Send`, not `Sync`; the
/// methods take `&mut self`).
///
/// Each lookup first checks whether a newer version was published: one atomic *load* of the
/// live table's version number, compared with the version this handle holds. Only when it
/// differs does the handle take the new version (reference-count increments, once per
/// publish, not per lookup). So a lookup takes no lock, never retries, and writes nothing to
/// memory another thread reads: readers do not contend with each other or with the
/// rebuilder, however many there are. The handle keeps its own references to the version's
/// two engines, so a lookup goes from the handle straight to the engine.
///
/// Every lookup answers from one whole version, old or new, never a mix. The version a handle
/// holds stays in memory until the handle's next lookup (or [`Reader::refresh`]) or until the
/// handle is dropped: an idle handle pins at most one old version.
pub struct Reader {
    current: Arc<Current>,
    /// The version held (`snapshot.version()`).
    version: u64,
    snapshot: Arc<Snapshot>,
    v4: Engine<u32>,
    v6: Engine<u128>,
}

impl Reader {
    pub(super) fn new(current: Arc<Current>) -> Self {
        let snapshot = current.load_full();
        Reader {
            version: snapshot.version,
            v4: snapshot.v4.clone(),
            v6: snapshot.v6.clone(),
            snapshot,
            current,
        }
    }

    /// Takes the published version if it is not the one held: the per-lookup check.
    #[inline(always)]
    fn check(&mut self) {
        if self.current.version() != self.version {
            self.take_published();
        }
    }

    /// The slow path of [`Reader::check`], once per publish.
    #[cold]
    #[inline(never)]
    fn take_published(&mut self) {
        let snapshot = self.current.load_full();
        self.version = snapshot.version;
        self.v4 = snapshot.v4.clone();
        self.v6 = snapshot.v6.clone();
        self.snapshot = snapshot;
    }

    /// The current version, to run many lookups against one version (the whole batch sees the
    /// same routes). Cheap: see the type's documentation.
    #[inline]
    pub fn snapshot(&mut self) -> &Arc<Snapshot> {
        self.check();
        &self.snapshot
    }

    /// Takes the current version now and lets go of the one held before (so an idle reader
    /// does not keep an old version in memory).
    pub fn refresh(&mut self) {
        self.check();
    }

    /// The next hop of the longest route containing `addr` in the current version.
    #[inline]
    pub fn lookup(&mut self, addr: IpAddr) -> Option<NextHop> {
        match addr {
            IpAddr::V4(a) => self.lookup_v4(u32::from(a)),
            IpAddr::V6(a) => self.lookup_v6(u128::from(a)),
        }
    }

    /// One IPv4 address (`u32::from(Ipv4Addr)`).
    #[inline]
    pub fn lookup_v4(&mut self, addr: u32) -> Option<NextHop> {
        self.check();
        self.v4.get().lookup(addr)
    }

    /// One IPv6 address (`u128::from(Ipv6Addr)`).
    #[inline]
    pub fn lookup_v6(&mut self, addr: u128) -> Option<NextHop> {
        self.check();
        self.v6.get().lookup(addr)
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
        self.check();
        self.v4.get().lookup_batch_raw(addrs, out, miss)
    }

    /// A batch of IPv6 addresses, as [`Reader::lookup_v4_batch`].
    #[inline]
    pub fn lookup_v6_batch(
        &mut self,
        addrs: &[u128],
        out: &mut [NextHop],
        miss: NextHop,
    ) -> Result<(), LookupError> {
        self.check();
        self.v6.get().lookup_batch_raw(addrs, out, miss)
    }

    /// A batch of IPv4 addresses as 4 network-order bytes each (as in a packet header), as
    /// [`Reader::lookup_v4_batch`].
    #[inline]
    pub fn lookup_v4_bytes_batch(
        &mut self,
        addrs: &[[u8; 4]],
        out: &mut [NextHop],
        miss: NextHop,
    ) -> Result<(), LookupError> {
        self.check();
        self.v4.get().lookup_batch_bytes_raw(addrs, out, miss)
    }

    /// A batch of IPv6 addresses as 16 network-order bytes each (as in a packet header, and
    /// as DPDK's `rte_fib6` takes them), read in place, as [`Reader::lookup_v4_batch`].
    #[inline]
    pub fn lookup_v6_bytes_batch(
        &mut self,
        addrs: &[[u8; 16]],
        out: &mut [NextHop],
        miss: NextHop,
    ) -> Result<(), LookupError> {
        self.check();
        self.v6.get().lookup_batch_bytes_raw(addrs, out, miss)
    }
}

impl std::fmt::Debug for Reader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reader")
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}
