//! [`FreeProbe`]: the time the kernel takes to free an LPM trie: the run of
//! `bpf_map_free_deferred` (the kernel worker that frees a map, the function the selftest
//! times), seen from the workqueue's raw tracepoints (see `bpf/trie_free.bpf.c` for why not
//! fentry/fexit).

use std::ffi::c_char;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use ipfib::Address;

use crate::ffi;
use crate::kernel::TRIE_FREE_OBJ;
use crate::trie::BpfLpmTrie;
use crate::BpfError;

/// `struct freed` of `bpf/trie_free.bpf.c`.
#[repr(C)]
struct Freed {
    target_fn: AtomicU64,
    total_ns: AtomicU64,
    count: AtomicU64,
}

/// How long [`FreeProbe::free`] waits for the kernel's deferred free.
pub const FREE_TIMEOUT: Duration = Duration::from_secs(120);

/// The attached probe. While it lives, every LPM trie the kernel frees adds to its count.
pub struct FreeProbe {
    raw: NonNull<ffi::IpfibBpfProbe>,
}

// SAFETY: the probe owns its kernel objects and mapping; its counters are atomics.
unsafe impl Send for FreeProbe {}
// SAFETY: as above; shared use only reads the atomics.
unsafe impl Sync for FreeProbe {}

impl FreeProbe {
    /// Loads and attaches the probe (needs root, and `bpf_map_free_deferred` in
    /// `/proc/kallsyms`).
    pub fn attach() -> Result<FreeProbe, BpfError> {
        let target = free_fn_address()?;
        let mut raw = std::ptr::null_mut();
        let mut msg = [0u8; 256];
        // SAFETY: the object bytes and the message buffer outlive the call and their lengths
        // are passed with them; `raw` is written only on success.
        let rc = unsafe {
            ffi::ipfib_bpf_probe_open(
                TRIE_FREE_OBJ.as_ptr().cast(),
                TRIE_FREE_OBJ.len(),
                &mut raw,
                msg.as_mut_ptr().cast::<c_char>(),
                msg.len(),
            )
        };
        match NonNull::new(raw) {
            Some(raw) if rc == 0 => {
                let probe = FreeProbe { raw };
                probe.freed().target_fn.store(target, Ordering::Release);
                Ok(probe)
            }
            _ => Err(BpfError::Kernel {
                step: "attaching the trie-free probe".into(),
                reason: ffi::message(&msg),
            }),
        }
    }

    fn freed(&self) -> &Freed {
        // SAFETY: the mapping is an 8-byte-aligned page holding `struct freed` (three u64s)
        // for as long as the probe lives; the kernel updates it atomically.
        unsafe { &*ffi::ipfib_bpf_probe_freed(self.raw.as_ptr()).cast::<Freed>() }
    }

    /// Tries freed so far and their total time.
    pub fn seen(&self) -> (u64, Duration) {
        let f = self.freed();
        let count = f.count.load(Ordering::Acquire);
        (
            count,
            Duration::from_nanos(f.total_ns.load(Ordering::Acquire)),
        )
    }

    /// Drops `trie` and returns the time the kernel's `bpf_map_free_deferred` took for it
    /// (the free is deferred to a kernel worker; this waits for it, up to [`FREE_TIMEOUT`]).
    /// The program's object holds a trie of each family, the other one empty: both frees
    /// are waited for and their times added (an empty trie's free is a few microseconds).
    pub fn free<A: Address>(&self, trie: BpfLpmTrie<A>) -> Result<Duration, BpfError> {
        let (count, total) = self.seen();
        drop(trie);
        let started = Instant::now();
        loop {
            let (now, now_total) = self.seen();
            if now >= count + 2 {
                return Ok(now_total.saturating_sub(total));
            }
            if started.elapsed() > FREE_TIMEOUT {
                return Err(BpfError::FreeNotSeen(FREE_TIMEOUT.as_secs()));
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

/// The address of `bpf_map_free_deferred` from `/proc/kallsyms` (zeros without root).
fn free_fn_address() -> Result<u64, BpfError> {
    let refused = |reason: String| BpfError::Kernel {
        step: "finding bpf_map_free_deferred in /proc/kallsyms".into(),
        reason,
    };
    let syms = std::fs::read_to_string("/proc/kallsyms").map_err(|e| refused(e.to_string()))?;
    let addr = syms
        .lines()
        .find_map(|l| {
            let mut w = l.split_whitespace();
            let (addr, _, name) = (w.next()?, w.next()?, w.next()?);
            (name == "bpf_map_free_deferred").then(|| u64::from_str_radix(addr, 16).ok())?
        })
        .ok_or_else(|| refused("the symbol is not listed".into()))?;
    if addr == 0 {
        return Err(refused(
            "addresses are hidden (kptr_restrict, no root)".into(),
        ));
    }
    Ok(addr)
}

impl Drop for FreeProbe {
    fn drop(&mut self) {
        // SAFETY: returned by ipfib_bpf_probe_open, closed once, here.
        unsafe { ffi::ipfib_bpf_probe_close(self.raw.as_ptr()) }
    }
}
