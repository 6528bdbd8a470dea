//! [`FreeProbe`]: the time the kernel takes to free an LPM trie, from fentry and fexit
//! programs on `trie_free` (the map's free callback; the selftest times its caller,
//! `bpf_map_free_deferred`, the same way).

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
    start_ns: AtomicU64,
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
    /// Loads and attaches the probe (needs the kernel's BTF and root).
    pub fn attach() -> Result<FreeProbe, BpfError> {
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
            Some(raw) if rc == 0 => Ok(FreeProbe { raw }),
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
        (count, Duration::from_nanos(f.total_ns.load(Ordering::Acquire)))
    }

    /// Drops `trie` and returns the time the kernel's `trie_free` took for it (the free is
    /// deferred to a kernel worker; this waits for it, up to [`FREE_TIMEOUT`]).
    pub fn free<A: Address>(&self, trie: BpfLpmTrie<A>) -> Result<Duration, BpfError> {
        let (count, total) = self.seen();
        drop(trie);
        let started = Instant::now();
        loop {
            let (now, now_total) = self.seen();
            if now > count {
                return Ok(now_total.saturating_sub(total));
            }
            if started.elapsed() > FREE_TIMEOUT {
                return Err(BpfError::FreeNotSeen(FREE_TIMEOUT.as_secs()));
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

impl Drop for FreeProbe {
    fn drop(&mut self) {
        // SAFETY: returned by ipfib_bpf_probe_open, closed once, here.
        unsafe { ffi::ipfib_bpf_probe_close(self.raw.as_ptr()) }
    }
}
