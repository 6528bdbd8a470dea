//! Starting DPDK's Environment Abstraction Layer once per process, and its heap statistics.
//!
//! The EAL is started in-process without huge pages, PCI, shared files or telemetry: the LPM
//! libraries need only its malloc heap. `rte_eal_init` can run once per process, and its
//! memory (`-m`) is fixed then, so the first caller decides the size: [`init_eal`] with an
//! explicit size, or the comparator constructors with a size derived from their table
//! (overridable with the environment variable `IPFIB_DPDK_MEM_MB`).
//!
//! `rte_eal_init` pins the thread that calls it to the main lcore's CPU. It is therefore run
//! on a short-lived thread of its own, so no caller's CPU affinity ever changes (a caller that
//! is pinned with `taskset` stays pinned exactly as it was).
//!
//! DPDK is deployed on huge pages, and its large tables (`rte_fib6`'s first level alone is
//! 64 MiB) are fast only there: on this project's AMD EPYC machine `rte_fib6` on dfz10 read
//! 61 M lookups/s on 4 KiB pages and 73 on 2 MiB ones. So when the system has enough free huge
//! pages for `-m` (`scripts/setup-hugepages.sh` reserves them) the EAL maps its memory from
//! them as its heap grows (`--in-memory --socket-limit`: no files, nothing shared, so processes
//! running at once each take only what they use); otherwise, or with `IPFIB_DPDK_PAGES=small`,
//! it runs with `--no-huge` from a memory file (memfd) whose 4 KiB pages the kernel backs only
//! when DPDK touches them, and [`EalInfo::huge_page_bytes`] says so: the comparators are exact
//! either way, but only the first is DPDK at its best.

use std::cell::Cell;
use std::ffi::{c_char, c_int, CStr, CString};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use crate::error::DpdkError;
use crate::ffi;

/// EAL memory used when nothing asks for more: enough for the large tables of
/// `../shared/data` in both families with every comparator built at once.
pub const DEFAULT_MEM_MIB: u64 = 4096;
const MIB: u64 = 1 << 20;

/// How the EAL was started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EalInfo {
    /// The `-m` memory size in MiB.
    pub mem_mib: u64,
    /// The full argument list passed to `rte_eal_init`.
    pub args: Vec<String>,
    /// DPDK's maximum SIMD width in bits (512 when AVX-512 lookups are allowed).
    pub max_simd_bitwidth: u32,
    /// The huge-page size the memory is mapped from, or `None` on 4 KiB pages (`--no-huge`).
    pub huge_page_bytes: Option<u64>,
}

impl EalInfo {
    /// The pages DPDK's memory lives on, for reports: `2 MiB pages` or `4 KiB pages`.
    pub fn pages(&self) -> String {
        match self.huge_page_bytes {
            Some(b) if b >= 1 << 30 => format!("{} GiB pages", b >> 30),
            Some(b) => format!("{} MiB pages", b >> 20),
            None => "4 KiB pages".into(),
        }
    }

    /// Whether DPDK's memory is on 4 KiB pages (`--no-huge`), where its large tables pay TLB
    /// misses its deployments do not.
    pub fn small_pages(&self) -> bool {
        self.huge_page_bytes.is_none()
    }
}

/// How the EAL was started, if it was (successfully).
pub fn eal_info() -> Option<&'static EalInfo> {
    EAL.get().and_then(|r| r.as_ref().ok())
}

/// Starts the EAL as the first comparator build would (see `ensure_eal`'s sizing), so that a
/// caller timing builds can start it beforehand; a no-op when it runs already.
pub fn start_eal() -> Result<&'static EalInfo, DpdkError> {
    ensure_eal(0)
}

static EAL: OnceLock<Result<EalInfo, DpdkError>> = OnceLock::new();

/// Starts the EAL with `mem_mib` MiB of memory, or returns how it was started if it already
/// was (by any caller, with whatever size that caller chose). A failure is remembered: DPDK
/// cannot retry `rte_eal_init` in the same process.
pub fn init_eal(mem_mib: u64) -> Result<&'static EalInfo, DpdkError> {
    EAL.get_or_init(|| start(mem_mib))
        .as_ref()
        .map_err(Clone::clone)
}

/// Starts the EAL for a structure that needs about `needed_bytes`, unless it runs already.
/// The size is `IPFIB_DPDK_MEM_MB` if set, else the larger of [`DEFAULT_MEM_MIB`] and twice
/// the need (room for the other comparators built from the same table).
pub(crate) fn ensure_eal(needed_bytes: u64) -> Result<&'static EalInfo, DpdkError> {
    EAL.get_or_init(|| {
        let from_env = std::env::var("IPFIB_DPDK_MEM_MB").ok();
        let mem_mib = match from_env.as_deref().map(str::trim) {
            Some(v) => match v.parse::<u64>() {
                Ok(n) if n > 0 => n,
                _ => {
                    return Err(DpdkError::Eal {
                        args: format!("IPFIB_DPDK_MEM_MB={v}"),
                        reason: "IPFIB_DPDK_MEM_MB must be a positive number of MiB".into(),
                    })
                }
            },
            None => DEFAULT_MEM_MIB.max((2 * needed_bytes).div_ceil(MIB)),
        };
        start(mem_mib)
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// The CPU the EAL's main lcore is put on: the first one the calling thread may run on, so
/// that `-l` never names a CPU outside a `taskset` mask.
fn first_allowed_cpu() -> usize {
    // SAFETY: `set` is a plain bitmask owned by this frame; sched_getaffinity writes at most
    // `size_of::<cpu_set_t>()` bytes into it and CPU_ISSET only reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
            for cpu in 0..libc::CPU_SETSIZE as usize {
                if libc::CPU_ISSET(cpu, &set) {
                    return cpu;
                }
            }
        }
    }
    0
}

fn start(mem_mib: u64) -> Result<EalInfo, DpdkError> {
    // Run on a thread of its own: rte_eal_init pins its calling thread (see the module doc).
    std::thread::Builder::new()
        .name("ipfib-dpdk-eal".into())
        .spawn(move || start_on_this_thread(mem_mib))
        .map_err(|e| DpdkError::Eal {
            args: String::new(),
            reason: format!("cannot spawn the EAL start-up thread: {e}"),
        })?
        .join()
        .unwrap_or_else(|_| {
            Err(DpdkError::Eal {
                args: String::new(),
                reason: "the EAL start-up thread panicked".into(),
            })
        })
}

/// The default huge-page size, if the system has free huge pages of it for `mem_mib` MiB
/// (`/proc/meminfo`), and `IPFIB_DPDK_PAGES` is not `small`.
fn huge_pages_for(mem_mib: u64) -> Option<u64> {
    if std::env::var("IPFIB_DPDK_PAGES").is_ok_and(|v| v.trim() == "small") {
        return None;
    }
    huge_pages_in(&std::fs::read_to_string("/proc/meminfo").ok()?, mem_mib)
}

/// [`huge_pages_for`] from the text of `/proc/meminfo`.
fn huge_pages_in(meminfo: &str, mem_mib: u64) -> Option<u64> {
    let field = |name: &str| -> Option<u64> {
        let line = meminfo.lines().find(|l| l.starts_with(name))?;
        line[name.len()..].split_whitespace().next()?.parse().ok()
    };
    let page_bytes = field("Hugepagesize:")?.checked_mul(1024)?;
    let free_bytes = field("HugePages_Free:")?.saturating_mul(page_bytes);
    (page_bytes > 0 && free_bytes >= mem_mib.saturating_mul(MIB)).then_some(page_bytes)
}

fn start_on_this_thread(mem_mib: u64) -> Result<EalInfo, DpdkError> {
    let huge_page_bytes = huge_pages_for(mem_mib);
    // Huge pages: in memory only (no hugetlbfs files, no shared config), taken as the heap
    // grows up to the limit. Preallocating them (`-m`) made concurrent processes fail: each
    // saw 4,608 MiB free and asked for 4,096 (`ipfib bench` tests run in parallel). 4 KiB
    // pages: `-m` maps a memory file the kernel backs only where DPDK touches it.
    let pages: [String; 2] = if huge_page_bytes.is_some() {
        ["--in-memory".into(), format!("--socket-limit={mem_mib}")]
    } else {
        ["--no-huge".into(), format!("-m{mem_mib}")]
    };
    let args: Vec<String> = vec![
        "ipfib".into(),
        "-l".into(),
        first_allowed_cpu().to_string(),
        pages[0].clone(),
        pages[1].clone(),
        "--no-pci".into(),
        "--no-shconf".into(),
        "--no-telemetry".into(),
        "--force-max-simd-bitwidth=512".into(),
        // One runtime directory for every ipfib process: with --no-shconf nothing in it is
        // shared or locked (no config file, no IPC socket, memory in private memfds), so
        // concurrent processes do not meet, and no directory is left behind per process.
        "--file-prefix=ipfib".into(),
        "--log-level=warning".into(),
    ];
    let joined = args.join(" ");
    let c_args: Vec<CString> = args
        .iter()
        .map(|a| CString::new(a.as_str()).expect("EAL arguments contain no NUL"))
        .collect();
    let mut argv: Vec<*mut c_char> = c_args.iter().map(|a| a.as_ptr() as *mut c_char).collect();
    argv.push(std::ptr::null_mut());
    let mut err: c_int = 0;
    // SAFETY: argv holds argc valid NUL-terminated strings (kept alive by `c_args` for the
    // whole call) followed by NULL, as rte_eal_init expects; DPDK may permute the pointer
    // array, which is ours to lose. `err` is a valid out-pointer.
    let ret =
        unsafe { ffi::ipfib_dpdk_eal_init(argv.len() as c_int - 1, argv.as_mut_ptr(), &mut err) };
    if ret < 0 {
        return Err(DpdkError::Eal {
            args: joined,
            reason: strerror(err),
        });
    }
    // SAFETY: plain query of EAL state, valid after a successful rte_eal_init.
    let max_simd_bitwidth = unsafe { ffi::ipfib_dpdk_max_simd_bitwidth() };
    Ok(EalInfo {
        mem_mib,
        args,
        max_simd_bitwidth,
        huge_page_bytes,
    })
}

/// DPDK's message for an errno value.
pub(crate) fn strerror(code: c_int) -> String {
    // SAFETY: rte_strerror returns a pointer to a static or thread-local NUL-terminated string
    // that stays valid until the next call on this thread; it is copied at once.
    unsafe {
        let p = ffi::ipfib_dpdk_strerror(code);
        if p.is_null() {
            format!("error {code}")
        } else {
            CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    }
}

/// `(allocated, free)` bytes of the DPDK malloc heap. Only meaningful after the EAL started.
pub(crate) fn heap_stats() -> (u64, u64) {
    let (mut allocated, mut free) = (0u64, 0u64);
    // SAFETY: both out-pointers are valid; the call only reads heap statistics (under DPDK's
    // own heap lock).
    unsafe { ffi::ipfib_dpdk_heap_stats(&mut allocated, &mut free) };
    (allocated, free)
}

/// Fails with [`DpdkError::Memory`] when the heap cannot hold about `needed_bytes` more.
pub(crate) fn check_memory(
    engine: &'static str,
    eal: &EalInfo,
    needed_bytes: u64,
) -> Result<(), DpdkError> {
    let (allocated, heap_free) = heap_stats();
    // On huge pages the heap grows on demand up to the limit, so what it has free now
    // understates what it can still give.
    let free = if eal.huge_page_bytes.is_some() {
        (eal.mem_mib * MIB).saturating_sub(allocated)
    } else {
        heap_free
    };
    if needed_bytes > free {
        return Err(DpdkError::Memory {
            engine,
            needed_mib: needed_bytes.div_ceil(MIB),
            free_mib: free / MIB,
            total_mib: eal.mem_mib,
        });
    }
    Ok(())
}

static BUILD: Mutex<()> = Mutex::new(());

thread_local! {
    /// Whether this thread holds [`BUILD`] (a structure dropped on a failed build's error
    /// path takes the lock again from inside the build).
    static HOLDING_BUILD: Cell<bool> = const { Cell::new(false) };
}

/// Holds the build lock; re-entering on the same thread is a no-op.
pub(crate) struct BuildGuard(Option<MutexGuard<'static, ()>>);

impl Drop for BuildGuard {
    fn drop(&mut self) {
        if self.0.take().is_some() {
            HOLDING_BUILD.with(|h| h.set(false));
        }
    }
}

/// Serialises building and freeing structures, so that the heap growth measured around one
/// build (`memory_bytes`) is that structure's alone.
pub(crate) fn build_lock() -> BuildGuard {
    if HOLDING_BUILD.with(Cell::get) {
        return BuildGuard(None);
    }
    let guard = BUILD
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    HOLDING_BUILD.with(|h| h.set(true));
    BuildGuard(Some(guard))
}

/// A process-unique object name: DPDK names structures and refuses duplicates.
pub(crate) fn unique_name(kind: &str) -> CString {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    CString::new(format!("ipfib_{kind}_{n}")).expect("no NUL in the name")
}

#[cfg(test)]
mod tests {
    use super::*;

    const MEMINFO: &str = "MemTotal:       24000000 kB\nHugePages_Total:    2304\n\
                           HugePages_Free:     2048\nHugepagesize:       2048 kB\n";

    #[test]
    fn huge_pages_are_used_only_when_enough_are_free() {
        assert_eq!(huge_pages_in(MEMINFO, 4096), Some(2 << 20));
        assert_eq!(huge_pages_in(MEMINFO, 4097), None);
        let none_free = MEMINFO.replace("HugePages_Free:     2048", "HugePages_Free:        0");
        assert_eq!(huge_pages_in(&none_free, 1), None);
        assert_eq!(huge_pages_in("MemTotal: 1 kB\n", 1), None);
        // An absurd `IPFIB_DPDK_MEM_MB` is "not enough", not an overflow.
        assert_eq!(huge_pages_in(MEMINFO, u64::MAX), None);
        // So is a page size whose bytes overflow.
        let absurd = MEMINFO.replace("2048 kB", &format!("{} kB", u64::MAX));
        assert_eq!(huge_pages_in(&absurd, 1), None);
    }

    #[test]
    fn pages_name_the_page_size() {
        let mut info = EalInfo {
            mem_mib: 1,
            args: Vec::new(),
            max_simd_bitwidth: 512,
            huge_page_bytes: Some(2 << 20),
        };
        assert_eq!(info.pages(), "2 MiB pages");
        assert!(!info.small_pages());
        info.huge_page_bytes = Some(1 << 30);
        assert_eq!(info.pages(), "1 GiB pages");
        info.huge_page_bytes = None;
        assert_eq!(info.pages(), "4 KiB pages");
        assert!(info.small_pages());
    }
}
