//! A comparator's own batch path: addresses converted once, before timing, into the
//! comparator's layout, and bulk lookups from there into an array of its own answer type.
//!
//! This is how a comparator runs at its best: a DPDK application gets its addresses from
//! packets, already in DPDK's layout, and uses DPDK's answers as they are, so converting every
//! address to and every answer from ipfib's types inside the timed loop (what
//! [`ipfib::Lookup::lookup_batch`] has to do for DPDK) would time work DPDK never does. A
//! comparator without a native batch is timed through `lookup_batch`.
//!
//! Three small object-safe steps, so one timing loop serves every comparator: a
//! [`NativeBatch`] prepares a sequence once ([`Prepared`]); each thread then gets a
//! [`Runner`] with its own preallocated answer array.

use std::ops::Range;

use ipfib::{Address, Lookup, LookupError, NextHop};
use serde::Serialize;

/// A comparator with its own batch layout.
pub trait NativeBatch<A: Address>: Send + Sync {
    /// The comparator itself (its single path, its name, its size).
    fn lookup(&self) -> &dyn Lookup<A>;
    /// What the native path calls, for the report.
    fn info(&self) -> NativeInfo;
    /// Converts `addrs` into the comparator's layout (untimed).
    fn prepare(&self, addrs: &[A]) -> Box<dyn Prepared + '_>;
}

/// A sequence in a comparator's layout.
pub trait Prepared: Sync {
    /// A lookup loop over this sequence with its own answer array for `chunk` addresses per
    /// call, or fewer where the comparator is called in smaller bursts ([`NativeInfo::burst`])
    /// (one per thread, allocated before timing).
    fn runner(&self, chunk: usize) -> Box<dyn Runner + '_>;
}

/// One thread's bulk lookups over a [`Prepared`] sequence.
pub trait Runner {
    /// Looks up `range` of the sequence, a chunk per call, into the answer array (timed).
    fn run(&mut self, range: Range<usize>) -> Result<(), LookupError>;
    /// The same lookups, each answer decoded into `out` (`out.len() == range.len()`), for the
    /// agreement check.
    fn answers(
        &mut self,
        range: Range<usize>,
        out: &mut [Option<NextHop>],
    ) -> Result<(), LookupError>;
}

/// What a native path calls, as the report and the JSON show it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NativeInfo {
    /// The bulk-lookup function, e.g. `rte_fib6_lookup_bulk`.
    pub call: &'static str,
    /// The implementation asked for (`avx512`), when the library offers a choice.
    pub requested: Option<&'static str>,
    /// The implementation that answers (`avx512`, `scalar`, ...).
    pub selected: &'static str,
    /// Bytes per next-hop entry in the comparator's tables.
    pub next_hop_bytes: u8,
    /// Bytes per answer in the output array (the comparator's next-hop type).
    pub answer_bytes: u8,
    /// The most addresses one bulk call gets, when the comparator is called in bursts smaller
    /// than the bench's chunk (DPDK: a receive burst), else `None`.
    pub burst: Option<usize>,
    /// The memory pages its tables live on (`2 MiB pages`, `4 KiB pages`), where the library
    /// maps its own memory: on small pages a large table pays TLB misses its deployments do
    /// not, so the report shows it.
    pub pages: Option<String>,
    /// Whether those pages are 4 KiB ones (the terminal table marks it).
    #[serde(skip)]
    pub small_pages: bool,
}

impl NativeInfo {
    /// Short form for the terminal table: `avx512 nh4B`, or `scalar (avx512 refused) nh8B`,
    /// with ` 4K` appended when the tables are on 4 KiB pages.
    pub fn short(&self) -> String {
        let refused = match self.requested {
            Some(r) if r != self.selected => format!(" ({r} refused)"),
            _ => String::new(),
        };
        let small = if self.small_pages { " 4K" } else { "" };
        format!(
            "{}{refused} nh{}B{small}",
            self.selected, self.next_hop_bytes
        )
    }
}

#[cfg(feature = "dpdk")]
pub use dpdk::Dpdk;

#[cfg(feature = "bpf")]
#[path = "native_bpf.rs"]
mod bpf;
#[cfg(feature = "bpf")]
pub use bpf::Bpf;

#[cfg(feature = "dpdk")]
mod dpdk {
    use std::hint::black_box;
    use std::marker::PhantomData;
    use std::ops::Range;

    use ipfib::{Address, Lookup, LookupError, NextHop};
    use ipfib_dpdk::NativeBulk;

    use super::{NativeBatch, NativeInfo, Prepared, Runner};

    /// Addresses per DPDK bulk call at most: a DPDK application looks up the addresses of one
    /// receive burst at a time (l3fwd's `MAX_PKT_BURST` is 32), and that is also where DPDK is
    /// fastest: `rte_fib` on et-2015 matched ran 506–513 M/s in calls of 32 against 461–464 in
    /// calls of 4,096 (`rte_fib6` on dfz10 the same either way; BENCHMARKS.md, "Session 18").
    /// A smaller `--chunk` is kept.
    pub const BURST: usize = 32;

    /// A DPDK comparator with its native bulk lookup.
    pub struct Dpdk<E>(pub E);

    impl<A: Address, E: NativeBulk<A> + 'static> NativeBatch<A> for Dpdk<E> {
        fn lookup(&self) -> &dyn Lookup<A> {
            &self.0
        }

        fn info(&self) -> NativeInfo {
            let b = self.0.bulk_lookup();
            NativeInfo {
                call: b.call,
                requested: b.requested,
                selected: b.selected,
                next_hop_bytes: b.next_hop_bytes,
                answer_bytes: std::mem::size_of::<E::Hop>() as u8,
                burst: Some(BURST),
                pages: ipfib_dpdk::eal_info().map(|e| e.pages()),
                small_pages: ipfib_dpdk::eal_info().is_some_and(|e| e.small_pages()),
            }
        }

        fn prepare(&self, addrs: &[A]) -> Box<dyn Prepared + '_> {
            Box::new(Keys {
                engine: &self.0,
                keys: addrs.iter().map(|&a| E::key(a)).collect(),
                _family: PhantomData,
            })
        }
    }

    struct Keys<'a, A: Address, E: NativeBulk<A>> {
        engine: &'a E,
        keys: Vec<E::Key>,
        _family: PhantomData<fn() -> A>,
    }

    impl<A: Address, E: NativeBulk<A>> Prepared for Keys<'_, A, E> {
        fn runner(&self, chunk: usize) -> Box<dyn Runner + '_> {
            Box::new(KeysRunner {
                keys: self,
                hops: vec![E::Hop::default(); chunk.clamp(1, BURST)],
            })
        }
    }

    struct KeysRunner<'a, 'b, A: Address, E: NativeBulk<A>> {
        keys: &'a Keys<'b, A, E>,
        hops: Vec<E::Hop>,
    }

    impl<A: Address, E: NativeBulk<A>> Runner for KeysRunner<'_, '_, A, E> {
        fn run(&mut self, range: Range<usize>) -> Result<(), LookupError> {
            let chunk = self.hops.len();
            for part in self.keys.keys[range].chunks(chunk) {
                let hops = &mut self.hops[..part.len()];
                self.keys.engine.lookup_bulk(part, hops)?;
                black_box(&*hops);
            }
            Ok(())
        }

        fn answers(
            &mut self,
            range: Range<usize>,
            out: &mut [Option<NextHop>],
        ) -> Result<(), LookupError> {
            ipfib::engine::check_batch(range.len(), out.len())?;
            let chunk = self.hops.len();
            let engine = self.keys.engine;
            for (part, o) in self.keys.keys[range]
                .chunks(chunk)
                .zip(out.chunks_mut(chunk))
            {
                let hops = &mut self.hops[..part.len()];
                engine.lookup_bulk(part, hops)?;
                for (o, &h) in o.iter_mut().zip(hops.iter()) {
                    *o = engine.decode(h);
                }
            }
            Ok(())
        }
    }

    #[cfg(test)]
    mod tests {
        use std::sync::Mutex;

        use ipfib::{Lookup, LookupError, NextHop};
        use ipfib_dpdk::{BulkLookup, NativeBulk};

        use super::{Dpdk, BURST};
        use crate::bench::native::NativeBatch;

        /// Answers every address with itself, and records the length of each bulk call.
        #[derive(Default)]
        struct Echo {
            calls: Mutex<Vec<usize>>,
        }

        impl Lookup<u32> for Echo {
            fn name(&self) -> &'static str {
                "echo"
            }
            fn lookup(&self, addr: u32) -> Option<NextHop> {
                Some(addr)
            }
            fn memory_bytes(&self) -> usize {
                0
            }
        }

        impl NativeBulk<u32> for Echo {
            type Key = u32;
            type Hop = u64;
            fn key(addr: u32) -> u32 {
                addr
            }
            fn lookup_bulk(&self, keys: &[u32], hops: &mut [u64]) -> Result<(), LookupError> {
                ipfib::engine::check_batch(keys.len(), hops.len())?;
                self.calls.lock().unwrap().push(keys.len());
                for (h, &k) in hops.iter_mut().zip(keys) {
                    *h = u64::from(k) + 1;
                }
                Ok(())
            }
            fn decode(&self, hop: u64) -> Option<NextHop> {
                hop.checked_sub(1).map(|h| h as NextHop)
            }
            fn bulk_lookup(&self) -> BulkLookup {
                BulkLookup {
                    call: "echo_bulk",
                    requested: None,
                    selected: "scalar",
                    next_hop_bytes: 8,
                }
            }
        }

        #[test]
        fn dpdk_is_called_a_burst_at_a_time() {
            let dpdk = Dpdk(Echo::default());
            assert_eq!(dpdk.info().burst, Some(BURST));
            let addrs: Vec<u32> = (0..100).collect();
            let prepared = dpdk.prepare(&addrs);
            let bursts = vec![BURST, BURST, BURST, 100 - 3 * BURST];
            for (chunk, calls) in [(4096, bursts), (10, vec![10; 10])] {
                let mut runner = prepared.runner(chunk);
                dpdk.0.calls.lock().unwrap().clear();
                runner.run(0..100).unwrap();
                assert_eq!(*dpdk.0.calls.lock().unwrap(), calls, "chunk {chunk}");
                let mut out = vec![None; 100];
                runner.answers(0..100, &mut out).unwrap();
                let expected: Vec<Option<NextHop>> = addrs.iter().map(|&a| Some(a)).collect();
                assert_eq!(out, expected, "chunk {chunk}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_form_says_what_was_selected_and_refused() {
        let mut info = NativeInfo {
            call: "rte_fib6_lookup_bulk",
            requested: Some("avx512"),
            selected: "avx512",
            next_hop_bytes: 4,
            answer_bytes: 8,
            burst: Some(32),
            pages: Some("2 MiB pages".into()),
            small_pages: false,
        };
        assert_eq!(info.short(), "avx512 nh4B");
        info.selected = "scalar";
        info.next_hop_bytes = 8;
        assert_eq!(info.short(), "scalar (avx512 refused) nh8B");
        info.requested = None;
        assert_eq!(info.short(), "scalar nh8B");
        info.pages = Some("4 KiB pages".into());
        info.small_pages = true;
        assert_eq!(info.short(), "scalar nh8B 4K");
    }
}
