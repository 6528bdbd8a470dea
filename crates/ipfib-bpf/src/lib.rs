//! # ipfib-bpf — the kernel's BPF LPM trie as an ipfib comparator
//!
//! `BpfLpmTrie` holds a route table in a `BPF_MAP_TYPE_LPM_TRIE` map and drives it the way
//! the kernel's selftest benchmark does (`tools/testing/selftests/bpf/benchs/
//! bench_lpm_trie_map.c` with `progs/lpm_trie_bench.c`): an XDP program run through
//! `BPF_PROG_TEST_RUN` calls `bpf_loop()` over up to 10,000 slots per run and does one map
//! operation per slot: a lookup (counting hits, or writing each answer into an array that
//! userspace reads back to check it), an insert, an update of an existing prefix or a
//! delete. The keys come from an mmap-ed BPF array that userspace fills before timing. The
//! time the kernel takes to free a whole trie is measured by `FreeProbe` (fentry and fexit
//! on `trie_free`).
//!
//! Everything that talks to the kernel needs the `bpf` feature (clang and libbpf at build
//! time: `scripts/install-bpf.sh`) and, at run time, root or CAP_BPF: where the kernel
//! refuses, the calls return [`BpfError::Kernel`] with its reason. Without the feature the
//! crate has only [`BpfError`] and the [`Slot`] layout.

#![warn(missing_docs)]

mod error;
pub mod slot;

pub use error::BpfError;
pub use slot::Slot;

#[cfg(feature = "bpf")]
mod ffi;
#[cfg(feature = "bpf")]
mod free;
#[cfg(feature = "bpf")]
mod kernel;
#[cfg(feature = "bpf")]
mod trie;

#[cfg(feature = "bpf")]
pub use free::{FreeProbe, FREE_TIMEOUT};
#[cfg(feature = "bpf")]
pub use kernel::Op;
#[cfg(feature = "bpf")]
pub use trie::{BpfLpmTrie, LOOPS_PER_RUN, MIN_SLOTS};
