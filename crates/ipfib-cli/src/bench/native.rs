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
    /// call (one per thread, allocated before timing).
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

#[cfg(feature = "dpdk")]
mod dpdk {
    use std::hint::black_box;
    use std::marker::PhantomData;
    use std::ops::Range;

    use ipfib::{Address, Lookup, LookupError, NextHop};
    use ipfib_dpdk::NativeBulk;

    use super::{NativeBatch, NativeInfo, Prepared, Runner};

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
                hops: vec![E::Hop::default(); chunk.max(1)],
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
