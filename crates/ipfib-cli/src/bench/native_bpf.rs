//! The kernel's BPF LPM trie as a native comparator: the sequence is written once, before
//! timing, into the BPF program's mmap-ed slots array, and each timed call is the program
//! (`BPF_PROG_TEST_RUN`, 10,000 lookups per run through `bpf_loop`, as the kernel's
//! selftest benchmark), which counts hits; the agreement check has it write every answer
//! into its answers array instead, read back here.

use std::hint::black_box;
use std::ops::Range;
use std::sync::{Mutex, PoisonError};

use ipfib::{Address, Lookup, LookupError, NextHop};
use ipfib_bpf::{BpfError, BpfLpmTrie, Op, Slot};

use super::{NativeBatch, NativeInfo, Prepared, Runner};

/// The BPF trie with its native path.
pub struct Bpf<A: Address>(pub BpfLpmTrie<A>);

impl<A: Address> NativeBatch<A> for Bpf<A> {
    fn lookup(&self) -> &dyn Lookup<A> {
        &self.0
    }

    fn info(&self) -> NativeInfo {
        NativeInfo {
            call: "BPF_PROG_TEST_RUN",
            requested: None,
            selected: "bpf_loop",
            next_hop_bytes: 4,
            answer_bytes: 8,
            burst: None,
            pages: None,
            small_pages: false,
        }
    }

    fn prepare(&self, addrs: &[A]) -> Box<dyn Prepared + '_> {
        let keys: Vec<Slot> = addrs.iter().map(|&a| Slot::address(a)).collect();
        let capacity = self.0.capacity().max(1);
        // The first window goes in now; a sequence longer than the slots array (more than
        // ipfib_bpf::MIN_SLOTS addresses) is loaded a window at a time inside the runs.
        let loaded = self.0.load(0, &keys[..keys.len().min(capacity)]).is_ok();
        Box::new(Keys {
            trie: &self.0,
            keys,
            capacity,
            window: Mutex::new(loaded.then_some(0)),
        })
    }
}

struct Keys<'a, A: Address> {
    trie: &'a BpfLpmTrie<A>,
    keys: Vec<Slot>,
    capacity: usize,
    /// The window of `keys` now in the slots array.
    window: Mutex<Option<usize>>,
}

fn lookup_error(e: BpfError) -> LookupError {
    LookupError::Backend {
        engine: "bpf-lpm-trie",
        reason: e.to_string(),
    }
}

impl<A: Address> Keys<'_, A> {
    /// Runs `f` on each part of `range`, with the part's window in the slots array; `f` gets
    /// the slots' range and the part's offset inside `range`.
    fn each_window(
        &self,
        range: Range<usize>,
        mut f: impl FnMut(Range<usize>, usize) -> Result<(), BpfError>,
    ) -> Result<(), LookupError> {
        let mut at = range.start;
        while at < range.end {
            let w = at / self.capacity;
            let base = w * self.capacity;
            let end = range.end.min(base + self.capacity);
            {
                let mut window = self.window.lock().unwrap_or_else(PoisonError::into_inner);
                if *window != Some(w) {
                    let last = self.keys.len().min(base + self.capacity);
                    self.trie
                        .load(0, &self.keys[base..last])
                        .map_err(lookup_error)?;
                    *window = Some(w);
                }
            }
            f(at - base..end - base, at - range.start).map_err(lookup_error)?;
            at = end;
        }
        Ok(())
    }
}

impl<A: Address> Prepared for Keys<'_, A> {
    fn runner(&self, _chunk: usize) -> Box<dyn Runner + '_> {
        Box::new(KeysRunner { keys: self })
    }
}

struct KeysRunner<'a, 'b, A: Address> {
    keys: &'a Keys<'b, A>,
}

impl<A: Address> Runner for KeysRunner<'_, '_, A> {
    fn run(&mut self, range: Range<usize>) -> Result<(), LookupError> {
        let trie = self.keys.trie;
        self.keys.each_window(range, |slots, _| {
            black_box(trie.run(Op::Lookup, slots)?);
            Ok(())
        })
    }

    fn answers(
        &mut self,
        range: Range<usize>,
        out: &mut [Option<NextHop>],
    ) -> Result<(), LookupError> {
        ipfib::engine::check_batch(range.len(), out.len())?;
        let trie = self.keys.trie;
        self.keys.each_window(range, |slots, offset| {
            let n = slots.len();
            trie.answers(slots, &mut out[offset..offset + n])
        })
    }
}
