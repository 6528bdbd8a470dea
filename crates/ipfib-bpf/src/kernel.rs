//! The loaded BPF program and its maps: one [`Handle`] owns them and is the only code that
//! touches the shim's raw pointers.

use std::ffi::c_char;
use std::ptr::NonNull;

use crate::ffi;
use crate::slot::Slot;
use crate::BpfError;

/// `struct ctl` of `bpf/lpm_bench.bpf.c`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct Ctl {
    start: u32,
    count: u32,
    op: u32,
    family: u32,
    hits: u64,
    err: i64,
    failed: u64,
}

/// What one run of the program does per slot (`IPFIB_OP_*` in the program).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Look up, count the hits (the timed lookup).
    Lookup = 0,
    /// Look up, write each answer into the answers array.
    Answers = 1,
    /// Insert a prefix that is not there (`BPF_NOEXIST`).
    Insert = 2,
    /// Give an existing prefix the slot's next hop (`BPF_EXIST`).
    Update = 3,
    /// Delete a prefix.
    Delete = 4,
}

impl Op {
    /// The operation's name, for errors and reports.
    pub fn name(self) -> &'static str {
        match self {
            Op::Lookup | Op::Answers => "lookup",
            Op::Insert => "insert",
            Op::Update => "update",
            Op::Delete => "delete",
        }
    }
}

/// An answer's code for "no route" in the answers array (`IPFIB_MISS`).
pub const MISS: u64 = 1 << 32;

/// The BPF objects, compiled by build.rs.
pub const LPM_BENCH_OBJ: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/lpm_bench.bpf.o"));
/// The trie-free probe's object.
pub const TRIE_FREE_OBJ: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/trie_free.bpf.o"));

/// The program, its trie of one family and its arrays of `slots` entries, mapped.
pub struct Handle {
    raw: NonNull<ffi::IpfibBpf>,
    family: u32,
    slots: usize,
}

// SAFETY: the handle owns its kernel objects and mappings; nothing in it is tied to the
// thread that created it, and every access goes through `&mut self` or a caller's lock.
unsafe impl Send for Handle {}

impl Handle {
    /// Loads the program with a trie of `trie_max` entries and arrays of `slots` entries.
    pub fn open(family: u32, trie_max: usize, slots: usize) -> Result<Handle, BpfError> {
        let too_big = |what, n: usize| BpfError::Capacity {
            what,
            needed: n,
            capacity: u32::MAX as usize,
        };
        let trie_max = u32::try_from(trie_max.max(1)).map_err(|_| too_big("trie", trie_max))?;
        let nslots = u32::try_from(slots.max(1)).map_err(|_| too_big("slots", slots))?;
        let mut raw = std::ptr::null_mut();
        let mut msg = [0u8; 256];
        // SAFETY: the object bytes and the message buffer outlive the call and their lengths
        // are passed with them; `raw` is written only on success.
        let rc = unsafe {
            ffi::ipfib_bpf_open(
                LPM_BENCH_OBJ.as_ptr().cast(),
                LPM_BENCH_OBJ.len(),
                family,
                trie_max,
                nslots,
                &mut raw,
                msg.as_mut_ptr().cast::<c_char>(),
                msg.len(),
            )
        };
        match NonNull::new(raw) {
            Some(raw) if rc == 0 => Ok(Handle {
                raw,
                family,
                slots: nslots as usize,
            }),
            _ => Err(BpfError::Kernel {
                step: "loading the lookup program".into(),
                reason: ffi::message(&msg),
            }),
        }
    }

    /// Entries of the slots and answers arrays.
    pub fn capacity(&self) -> usize {
        self.slots
    }

    /// Writes `slots` into the slots array from `offset`.
    pub fn load(&mut self, offset: usize, slots: &[Slot]) -> Result<(), BpfError> {
        self.check(offset, slots.len())?;
        // SAFETY: the array is mapped for `self.slots` entries of 24 bytes (an 8-byte-rounded
        // `struct slot`, the layout of `Slot`), and `check` kept the range inside it; the
        // program does not run while `&mut self` is held.
        unsafe {
            let base = ffi::ipfib_bpf_slots(self.raw.as_ptr()).cast::<Slot>();
            std::ptr::copy_nonoverlapping(slots.as_ptr(), base.add(offset), slots.len());
        }
        Ok(())
    }

    /// The answers array from `offset`, `len` entries (written by [`Op::Answers`]).
    pub fn answers(&mut self, offset: usize, len: usize) -> Result<&[u64], BpfError> {
        self.check(offset, len)?;
        // SAFETY: the answers array is mapped for `self.slots` u64s and `check` kept the range
        // inside it; the borrow of `self` keeps the program from running meanwhile.
        Ok(unsafe {
            let base = ffi::ipfib_bpf_answers(self.raw.as_ptr()).cast::<u64>();
            std::slice::from_raw_parts(base.add(offset), len)
        })
    }

    fn check(&self, offset: usize, len: usize) -> Result<(), BpfError> {
        match offset.checked_add(len) {
            Some(end) if end <= self.slots => Ok(()),
            _ => Err(BpfError::Capacity {
                what: "slots",
                needed: offset.saturating_add(len),
                capacity: self.slots,
            }),
        }
    }

    /// One BPF_PROG_TEST_RUN: `op` on `count` slots from `start` (at most 2^23, bpf_loop's
    /// limit). Returns the hits (lookups) or operations done.
    pub fn run(&mut self, op: Op, start: usize, count: usize) -> Result<u64, BpfError> {
        self.check(start, count)?;
        let ctl_ptr = self.ctl();
        let ctl = Ctl {
            start: start as u32,
            count: count as u32,
            op: op as u32,
            family: self.family,
            ..Ctl::default()
        };
        let mut retval = 0u32;
        // SAFETY: `ctl_ptr` points at the mapped one-entry control array, sized for `Ctl`
        // (`struct ctl`); the run is synchronous, so the program is done with it when the
        // call returns.
        let rc = unsafe {
            ctl_ptr.write_volatile(ctl);
            ffi::ipfib_bpf_run(self.raw.as_ptr(), &mut retval)
        };
        if rc != 0 {
            return Err(BpfError::Kernel {
                step: "BPF_PROG_TEST_RUN".into(),
                reason: std::io::Error::from_raw_os_error(-rc).to_string(),
            });
        }
        // SAFETY: as above; the program wrote its results before the run returned.
        let done = unsafe { ctl_ptr.read_volatile() };
        if done.err != 0 {
            return Err(BpfError::Operation {
                op: op.name(),
                slot: done.failed,
                errno: -done.err,
            });
        }
        // XDP_PASS (2) unless the program could not find its control entry.
        if retval != 2 {
            return Err(BpfError::Kernel {
                step: "running the lookup program".into(),
                reason: format!("it returned {retval}, not XDP_PASS"),
            });
        }
        Ok(done.hits)
    }

    fn ctl(&self) -> *mut Ctl {
        // SAFETY: the handle is open; the shim returns its mapping of the control array.
        unsafe { ffi::ipfib_bpf_ctl(self.raw.as_ptr()).cast::<Ctl>() }
    }

    /// A lookup from userspace (BPF_MAP_LOOKUP_ELEM on the trie), one system call.
    pub fn lookup_syscall(&self, key: &Slot) -> Option<u32> {
        let mut nh = 0u32;
        // SAFETY: `key` is a full `struct slot`, at least the trie's key size, and `nh` is
        // the trie's 4-byte value; both outlive the call.
        let rc = unsafe {
            ffi::ipfib_bpf_lookup(self.raw.as_ptr(), (key as *const Slot).cast(), &mut nh)
        };
        (rc == 0).then_some(nh)
    }

    /// The trie's memory as the kernel accounts it (`memlock` of its fdinfo), if readable.
    pub fn trie_bytes(&self) -> Option<usize> {
        // SAFETY: the handle is open.
        let fd = unsafe { ffi::ipfib_bpf_trie_fd(self.raw.as_ptr()) };
        let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")).ok()?;
        info.lines()
            .find_map(|l| l.strip_prefix("memlock:"))
            .and_then(|v| v.trim().parse().ok())
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: the handle was returned by ipfib_bpf_open and is closed once, here.
        unsafe { ffi::ipfib_bpf_close(self.raw.as_ptr()) }
    }
}
