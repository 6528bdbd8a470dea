//! Out of memory: a message that says what could not be allocated and while doing what,
//! instead of Rust's one-line abort.
//!
//! An allocation that fails in Rust ends the process with `memory allocation of N bytes
//! failed` and SIGABRT (a stable program cannot hook that). The CLI's global allocator is
//! the system allocator, wrapped to record the size of a failed request; a SIGABRT handler
//! then, if a failure was recorded, writes what ipfib was doing ([`doing`]: the file being
//! read, the engine being built, with the table's size), the address-space limit
//! (`ulimit -v`) when one is set, and ends the process with status 1 instead of a core dump.
//! Fallible requests (`try_reserve`, which the library uses for saved tables) go through the
//! same allocator and still get their null back: only an abort after a failure prints this.
//!
//! The handler does only async-signal-safe work: atomic loads, `getrlimit` and `write` of
//! bytes formatted on the stack.

use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::{c_char, c_int, CStr, CString};
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// The system allocator, recording the size of the last request it could not satisfy.
pub struct Recording;

/// The size of the last failed allocation (0: none).
static FAILED: AtomicUsize = AtomicUsize::new(0);
/// What ipfib is doing, as a leaked C string (null: nothing said yet).
static DOING: AtomicPtr<c_char> = AtomicPtr::new(ptr::null_mut());

// SAFETY: every method forwards to `System` with the same arguments and returns its result
// unchanged; the only addition is an atomic store when a request fails.
unsafe impl GlobalAlloc for Recording {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        noted(unsafe { System.alloc(layout) }, layout.size())
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        noted(unsafe { System.alloc_zeroed(layout) }, layout.size())
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        noted(unsafe { System.realloc(ptr, layout, new_size) }, new_size)
    }
}

fn noted(p: *mut u8, size: usize) -> *mut u8 {
    if p.is_null() {
        FAILED.store(size.max(1), Ordering::SeqCst);
    }
    p
}

/// Says what the process is doing, for the out-of-memory message (the previous text is
/// leaked: a handler may be reading it; a few calls per run).
pub fn doing(what: &str) {
    let Ok(c) = CString::new(what) else { return };
    DOING.store(c.into_raw(), Ordering::SeqCst);
}

/// Installs the SIGABRT handler (once, at start).
pub fn install() {
    // SAFETY: `on_abort` is an `extern "C" fn(c_int)` doing only async-signal-safe work.
    unsafe {
        libc::signal(
            libc::SIGABRT,
            on_abort as extern "C" fn(c_int) as libc::sighandler_t,
        )
    };
}

extern "C" fn on_abort(sig: c_int) {
    let failed = FAILED.load(Ordering::SeqCst);
    if failed == 0 {
        // Not an allocation failure: the default action (a core dump where enabled).
        // SAFETY: async-signal-safe calls.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
        return;
    }
    let mut msg = Message::default();
    msg.push(b"ipfib: out of memory: could not allocate ");
    msg.size(failed as u64);
    let doing = DOING.load(Ordering::SeqCst);
    if !doing.is_null() {
        msg.push(b" while ");
        // SAFETY: a non-null `DOING` is a leaked, NUL-terminated C string.
        msg.push(unsafe { CStr::from_ptr(doing) }.to_bytes());
    }
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } == 0
        && limit.rlim_cur != libc::RLIM_INFINITY
    {
        msg.push(b" (the address-space limit, ulimit -v, is ");
        msg.size(limit.rlim_cur);
        msg.push(b")");
    }
    msg.push(b"\n");
    // SAFETY: write(2) of a stack buffer, then _exit(2): both async-signal-safe.
    unsafe {
        libc::write(2, msg.buf.as_ptr().cast(), msg.len);
        libc::_exit(1);
    }
}

/// A message built on the stack (no allocation in a signal handler); text past its end is
/// cut.
struct Message {
    buf: [u8; 1024],
    len: usize,
}

impl Default for Message {
    fn default() -> Self {
        Message {
            buf: [0; 1024],
            len: 0,
        }
    }
}

impl Message {
    fn push(&mut self, bytes: &[u8]) {
        let n = bytes.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&bytes[..n]);
        self.len += n;
    }

    fn number(&mut self, mut n: u64) {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.push(&digits[i..]);
    }

    /// `N bytes`, with the MiB beside it from 1 MiB on.
    fn size(&mut self, bytes: u64) {
        self.number(bytes);
        self.push(b" bytes");
        if bytes >= 1 << 20 {
            self.push(b" (");
            self.number(bytes >> 20);
            self.push(b" MiB)");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_formatted_without_allocating() {
        let mut m = Message::default();
        m.push(b"x ");
        m.size(0);
        m.push(b", ");
        m.size(3 << 20);
        assert_eq!(&m.buf[..m.len], b"x 0 bytes, 3145728 bytes (3 MiB)");
        let mut long = Message::default();
        long.push(&[b'a'; 2000]);
        assert_eq!(long.len, 1024, "cut at the buffer's end");
    }
}
