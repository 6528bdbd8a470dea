//! Temporary files removed when the process is interrupted: `ipfib save`, `convert` and `gen`
//! write a temporary file beside their output and rename it into place; SIGINT, SIGTERM or
//! SIGHUP in between would otherwise leave it behind.
//!
//! The handler does only async-signal-safe work: it unlinks the registered paths (C strings
//! held in atomic slots), restores the default action and raises the signal again, so the
//! process still ends the way the signal asks (status 128 + its number in a shell).
//!
//! A long-running command that ends cleanly on a signal (`ipfib follow`, which writes its
//! report at exit) asks for [`stop_on_signal`]: the first signal then only sets a flag the
//! command polls; a second one ends the process as above.

use std::ffi::{c_char, c_int, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::Once;

/// Paths to unlink on a signal. A few suffice: one output is written at a time.
static SLOTS: [AtomicPtr<c_char>; 4] = [const { AtomicPtr::new(ptr::null_mut()) }; 4];

const SIGNALS: [c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// A registered temporary file: removed by the signal handler until this is dropped (the file
/// was renamed into place, or removed by its writer).
pub struct Registered {
    slot: Option<usize>,
}

/// Set by the first signal after [`stop_on_signal`].
static STOP: AtomicBool = AtomicBool::new(false);
/// Whether the next signal only sets [`STOP`].
static GRACEFUL: AtomicBool = AtomicBool::new(false);

fn install() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        for sig in SIGNALS {
            // SAFETY: `on_signal` is an `extern "C" fn(c_int)` that only calls
            // async-signal-safe functions (unlink, signal, raise) and atomic operations.
            unsafe { libc::signal(sig, on_signal as extern "C" fn(c_int) as libc::sighandler_t) };
        }
    });
}

/// Makes the first SIGINT, SIGTERM or SIGHUP set the returned flag instead of ending the
/// process (registered files stay: their writers finish or remove them); a second signal
/// ends it as usual.
pub fn stop_on_signal() -> &'static AtomicBool {
    install();
    GRACEFUL.store(true, Ordering::SeqCst);
    &STOP
}

/// Registers `path` for removal on SIGINT, SIGTERM or SIGHUP (the handlers are installed on
/// the first call). With every slot taken, the path is not registered: an interrupted run may
/// then leave it, as it would without this module.
pub fn register(path: &Path) -> Registered {
    install();
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return Registered { slot: None };
    };
    let raw = c.into_raw();
    for (i, slot) in SLOTS.iter().enumerate() {
        if slot
            .compare_exchange(ptr::null_mut(), raw, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return Registered { slot: Some(i) };
        }
    }
    // SAFETY: `raw` came from `CString::into_raw` just above and was stored nowhere.
    drop(unsafe { CString::from_raw(raw) });
    Registered { slot: None }
}

impl Drop for Registered {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            // The string is leaked, not freed: a handler running on another thread at this
            // moment may still read it. A few bytes per output file.
            SLOTS[i].store(ptr::null_mut(), Ordering::SeqCst);
        }
    }
}

extern "C" fn on_signal(sig: c_int) {
    if GRACEFUL.swap(false, Ordering::SeqCst) {
        STOP.store(true, Ordering::SeqCst);
        return;
    }
    for slot in &SLOTS {
        let p = slot.load(Ordering::SeqCst);
        if !p.is_null() {
            // SAFETY: a non-null slot holds a leaked, NUL-terminated C string.
            unsafe { libc::unlink(p) };
        }
    }
    // SAFETY: async-signal-safe calls: back to the default action, then the signal again.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}
