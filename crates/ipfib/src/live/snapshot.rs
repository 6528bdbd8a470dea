//! [`Snapshot`]: one published version of a live table, immutable, with `Fib`'s lookups.

use std::fmt;
use std::net::IpAddr;
use std::ptr::NonNull;
use std::sync::Arc;

use crate::addr::Address;
use crate::engine::Lookup;
use crate::error::LookupError;
use crate::route_table::NextHop;

/// One version of a [`super::LiveFib`]: both families' engines as they were published. It never
/// changes; a reader that holds it keeps answering from it (and keeps it in memory) until it
/// loads a newer one.
///
/// The engines are reference-counted so a version that changes one family shares the other
/// family's engine with the version before it.
///
/// Unlike [`crate::Fib`] a snapshot keeps no route list (`lookup_prefix`): building one costs
/// time proportional to the table on every publish. [`super::LiveFib::lookup_prefix`] answers
/// that question from the live table's route set instead.
pub struct Snapshot {
    pub(super) version: u64,
    pub(super) engine: &'static str,
    pub(super) v4: Engine<u32>,
    pub(super) v6: Engine<u128>,
}

/// One family's engine in a version: the `Arc` that keeps it alive (versions that did not
/// change the family share it) and the engine's address, found once when it is published.
///
/// Reaching an engine through `Arc<dyn Lookup>` costs every call the start of the unsized
/// value, computed from the vtable's alignment (a load and three instructions); a `Box`
/// inside the `Arc` costs a dependent load instead. Either is a tenth of a single IPv4
/// lookup. With the address kept, a call through a snapshot or a reader is what a static
/// `Fib`'s is: single lookups through a reader went from 88 % to 96 % of the static engine's
/// rate (bart-tier1, `examples/live_single`; the `Box` variant measured 86 %).
pub(super) struct Engine<A: Address> {
    /// Keeps the engine alive; never read (`at` is).
    _arc: Arc<dyn Lookup<A>>,
    at: NonNull<dyn Lookup<A>>,
}

impl<A: Address> Engine<A> {
    /// An engine as a builder returns it.
    pub fn new(engine: Box<dyn Lookup<A>>) -> Self {
        let arc: Arc<dyn Lookup<A>> = Arc::from(engine);
        let at = NonNull::from(&*arc);
        Engine { _arc: arc, at }
    }

    /// The engine.
    #[inline(always)]
    pub fn get(&self) -> &dyn Lookup<A> {
        // SAFETY: `at` is the address of the engine that `self._arc` keeps alive: both are
        // set together in `new` (and copied together by `clone`), never changed apart, and
        // engines are never mutated.
        unsafe { self.at.as_ref() }
    }
}

impl<A: Address> Clone for Engine<A> {
    /// Another handle to the same engine.
    fn clone(&self) -> Self {
        Engine {
            _arc: Arc::clone(&self._arc),
            at: self.at,
        }
    }
}

// SAFETY: an `Engine` is an `Arc<dyn Lookup<A>>` and a pointer to the same engine, used only
// for shared references; engines are `Send + Sync`, so an `Engine` may be sent and shared as
// the `Arc` may.
unsafe impl<A: Address> Send for Engine<A> {}
// SAFETY: as above.
unsafe impl<A: Address> Sync for Engine<A> {}

impl Snapshot {
    /// The version number: 0 for the table the live table was created with, then one more per
    /// publish and per compaction step (which changes no route).
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The next hop of the longest route containing `addr` (of its own family), or `None`.
    #[inline]
    pub fn lookup(&self, addr: IpAddr) -> Option<NextHop> {
        match addr {
            IpAddr::V4(a) => self.v4.get().lookup(u32::from(a)),
            IpAddr::V6(a) => self.v6.get().lookup(u128::from(a)),
        }
    }

    /// One IPv4 address (`u32::from(Ipv4Addr)`).
    #[inline]
    pub fn lookup_v4(&self, addr: u32) -> Option<NextHop> {
        self.v4.get().lookup(addr)
    }

    /// One IPv6 address (`u128::from(Ipv6Addr)`).
    #[inline]
    pub fn lookup_v6(&self, addr: u128) -> Option<NextHop> {
        self.v6.get().lookup(addr)
    }

    /// As [`crate::Fib::lookup_v4_batch`]: plain next hops, `miss` where no route matches;
    /// the slices must have equal lengths.
    pub fn lookup_v4_batch(
        &self,
        addrs: &[u32],
        out: &mut [NextHop],
        miss: NextHop,
    ) -> Result<(), LookupError> {
        self.v4.get().lookup_batch_raw(addrs, out, miss)
    }

    /// As [`crate::Fib::lookup_v6_batch`].
    pub fn lookup_v6_batch(
        &self,
        addrs: &[u128],
        out: &mut [NextHop],
        miss: NextHop,
    ) -> Result<(), LookupError> {
        self.v6.get().lookup_batch_raw(addrs, out, miss)
    }

    /// The IPv4 engine (batches into `Option`s, stats, validation).
    pub fn v4(&self) -> &dyn Lookup<u32> {
        self.v4.get()
    }

    /// The IPv6 engine.
    pub fn v6(&self) -> &dyn Lookup<u128> {
        self.v6.get()
    }

    /// Bytes of both engines' lookup structures (shared parts counted in full).
    pub fn memory_bytes(&self) -> usize {
        self.v4.get().memory_bytes() + self.v6.get().memory_bytes()
    }

    /// The engine's registered name.
    pub fn engine_name(&self) -> &'static str {
        self.engine
    }
}

impl fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Snapshot")
            .field("version", &self.version)
            .field("engine", &self.engine)
            .field("memory_bytes", &self.memory_bytes())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::reference::Reference;
    use crate::engine::{Build, BuildOptions};
    use crate::prefix::Prefix;
    use crate::route_table::RouteTable;

    /// The address an `Engine` keeps stays valid for every handle however the handles are
    /// cloned, dropped and sent (run under Miri by `scripts/miri.sh`).
    #[test]
    fn engine_handles_share_one_engine() {
        let table: RouteTable<u32> = [(Prefix::new(0x0a00_0000, 8).unwrap(), 7)]
            .into_iter()
            .collect();
        let built = Reference::build(&table, &BuildOptions::default()).unwrap();
        let first = Engine::new(Box::new(built));
        let second = first.clone();
        drop(first);
        assert_eq!(second.get().lookup(0x0a01_0203), Some(7));
        let third = second.clone();
        let answer = std::thread::spawn(move || third.get().lookup(0x0b00_0000))
            .join()
            .unwrap();
        assert_eq!(answer, None);
        assert_eq!(second.get().lookup(0x0aff_ffff), Some(7));
    }
}
