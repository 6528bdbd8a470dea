//! [`BpfLpmTrie`]: a table in the kernel's `BPF_MAP_TYPE_LPM_TRIE`, looked up, changed and
//! read back through the BPF program.

use std::marker::PhantomData;
use std::ops::Range;
use std::sync::{Mutex, MutexGuard, PoisonError};

use ipfib::{Address, Lookup, NextHop, RouteTable};

use crate::kernel::{Handle, Op, MISS};
use crate::slot::{family, Slot};
use crate::BpfError;

/// Slots per BPF_PROG_TEST_RUN: the selftest's `NR_LOOPS` (10,000 map operations per run of
/// its program), so the system call's cost is spread as it is there.
pub const LOOPS_PER_RUN: usize = 10_000;

/// The fewest slots a trie is created with: room for the bench's default 1,000,000-address
/// trace, so the bench never refills the slots inside a timed run.
pub const MIN_SLOTS: usize = 1 << 20;

/// A route table in the kernel's BPF LPM trie, with the program that drives it.
///
/// The program and the maps are used by one thread at a time (a lock): BPF_PROG_TEST_RUN
/// runs on the calling CPU, and the slots and answers arrays are shared.
pub struct BpfLpmTrie<A: Address> {
    handle: Mutex<Handle>,
    routes: usize,
    _family: PhantomData<fn() -> A>,
}

impl<A: Address> BpfLpmTrie<A> {
    /// An empty trie with room for `trie_max` routes, and `slots` slots for keys to look up
    /// or routes to change.
    pub fn empty(trie_max: usize, slots: usize) -> Result<Self, BpfError> {
        Ok(BpfLpmTrie {
            handle: Mutex::new(Handle::open(family::<A>(), trie_max, slots)?),
            routes: 0,
            _family: PhantomData,
        })
    }

    /// The routes of `table` in a new trie (inserted by the program), with
    /// `max(MIN_SLOTS, table.len())` slots.
    pub fn build(table: &RouteTable<A>) -> Result<Self, BpfError> {
        let mut trie = Self::empty(table.len(), table.len().max(MIN_SLOTS))?;
        let routes: Vec<Slot> = table.iter().map(|(p, nh)| Slot::prefix(p, nh)).collect();
        trie.apply(Op::Insert, &routes)?;
        trie.routes = table.len();
        Ok(trie)
    }

    fn lock(&self) -> MutexGuard<'_, Handle> {
        self.handle.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Entries of the slots array.
    pub fn capacity(&self) -> usize {
        self.lock().capacity()
    }

    /// Writes `slots` into the slots array from `offset` (untimed preparation).
    pub fn load(&self, offset: usize, slots: &[Slot]) -> Result<(), BpfError> {
        self.lock().load(offset, slots)
    }

    /// Runs `op` on the loaded slots `range`, [`LOOPS_PER_RUN`] per BPF_PROG_TEST_RUN.
    /// Returns the lookups that hit, or the operations done.
    pub fn run(&self, op: Op, range: Range<usize>) -> Result<u64, BpfError> {
        let mut h = self.lock();
        let mut hits = 0;
        let mut start = range.start;
        while start < range.end {
            let count = (range.end - start).min(LOOPS_PER_RUN);
            hits += h.run(op, start, count)?;
            start += count;
        }
        Ok(hits)
    }

    /// Loads `slots` and runs `op` on them, a slots array at a time.
    pub fn apply(&self, op: Op, slots: &[Slot]) -> Result<u64, BpfError> {
        let cap = self.capacity();
        let mut done = 0;
        for part in slots.chunks(cap.max(1)) {
            self.load(0, part)?;
            done += self.run(op, 0..part.len())?;
        }
        Ok(done)
    }

    /// Looks up the loaded slots `range` in the program and decodes each answer into `out`.
    pub fn answers(
        &self,
        range: Range<usize>,
        out: &mut [Option<NextHop>],
    ) -> Result<(), BpfError> {
        if out.len() != range.len() {
            return Err(BpfError::Capacity {
                what: "answers",
                needed: range.len(),
                capacity: out.len(),
            });
        }
        self.run(Op::Answers, range.clone())?;
        let mut h = self.lock();
        let raw = h.answers(range.start, range.len())?;
        for (o, &a) in out.iter_mut().zip(raw) {
            *o = (a != MISS).then_some(a as NextHop);
        }
        Ok(())
    }

    /// Looks up `addrs` in the program (through the slots array, a slots array at a time).
    pub fn lookup_all(&self, addrs: &[A]) -> Result<Vec<Option<NextHop>>, BpfError> {
        let cap = self.capacity();
        let mut out = vec![None; addrs.len()];
        for (part, o) in addrs.chunks(cap.max(1)).zip(out.chunks_mut(cap.max(1))) {
            let slots: Vec<Slot> = part.iter().map(|&a| Slot::address(a)).collect();
            self.load(0, &slots)?;
            self.answers(0..part.len(), o)?;
        }
        Ok(out)
    }
}

impl<A: Address> Lookup<A> for BpfLpmTrie<A> {
    fn name(&self) -> &'static str {
        "bpf-lpm-trie"
    }

    /// One BPF_MAP_LOOKUP_ELEM system call: the trie from userspace, not the program's path.
    fn lookup(&self, addr: A) -> Option<NextHop> {
        self.lock().lookup_syscall(&Slot::address(addr))
    }

    /// The trie's memory as the kernel accounts it (fdinfo `memlock`); the slot arrays are
    /// not counted.
    fn memory_bytes(&self) -> usize {
        self.lock().trie_bytes().unwrap_or(0)
    }
}

impl<A: Address> BpfLpmTrie<A> {
    /// Routes the trie was built with.
    pub fn routes(&self) -> usize {
        self.routes
    }
}
