//! ipfib for C: open a table (any FIB file, or a saved table, mapped in place), look
//! addresses up one at a time or in bulk (DPDK's `rte_fib_lookup_bulk` shape), save it.
//!
//! The header `include/ipfib.h` is generated from this file by cbindgen. Rules every function
//! keeps:
//! - No function aborts the process or lets a Rust panic cross into C: each body runs under
//!   `catch_unwind`, and a panic becomes an error return (there is none on any known input).
//! - Errors are a return value plus a message in the caller's `err` buffer (`errlen` bytes,
//!   always NUL-terminated, truncated if need be; `err` may be NULL).
//! - A NULL pointer where the documentation does not allow one is undefined behaviour, as in
//!   DPDK: the lookup functions do not check, so they cost nothing beyond the lookup.
//! - An `ipfib_fib` is immutable: any number of threads may look up in it at once.

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_int, CStr, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

// An error and its causes, as one line.
use ipfib::error::one_line as describe;
use ipfib::Fib;

/// An opened forwarding table (both families).
pub struct ipfib_fib {
    fib: Fib,
}

/// Writes `msg` into `err` (NUL-terminated, truncated to at most `errlen - 1` bytes, at a
/// character boundary so the result stays UTF-8).
///
/// # Safety
/// `err` is NULL or points to `errlen` writable bytes.
unsafe fn write_err(err: *mut c_char, errlen: usize, msg: &str) {
    if err.is_null() || errlen == 0 {
        return;
    }
    let mut n = msg.len().min(errlen - 1);
    while !msg.is_char_boundary(n) {
        n -= 1;
    }
    // SAFETY: the caller's contract: `err` has room for `errlen > n` bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(msg.as_ptr(), err.cast::<u8>(), n);
        *err.add(n) = 0;
    }
}

/// A C string argument (`None` for NULL).
///
/// # Safety
/// `s` is NULL or a NUL-terminated string.
unsafe fn str_arg<'a>(s: *const c_char) -> Option<&'a CStr> {
    // SAFETY: the caller's contract: non-NULL means a NUL-terminated string.
    (!s.is_null()).then(|| unsafe { CStr::from_ptr(s) })
}

fn open(path: Option<&CStr>, engine: Option<&CStr>) -> Result<Fib, String> {
    let path = path.ok_or("path is NULL")?;
    let path = Path::new(OsStr::from_bytes(path.to_bytes()));
    let engine = match engine {
        None => None,
        Some(e) => {
            let name = e
                .to_str()
                .map_err(|_| "the engine name is not UTF-8".to_string())?;
            Some(
                ipfib::engine::by_name(name)
                    .map_err(|e| describe(&e))?
                    .name(),
            )
        }
    };
    ipfib_io::open_fib(path, engine, &ipfib_io::LoadOptions::default()).map_err(|e| describe(&e))
}

/// Opens a FIB file (text, gzip, bzip2, MRT RIB or saved table). engine: NULL = default (or
/// the saved engine). On error returns NULL and writes a message into err (if not NULL).
///
/// A saved table opened with its own engine (or NULL) is mapped and used in place; keep the
/// file unchanged while it is open (replace it by renaming a new file over it, as
/// ipfib_fib_save does). Free the result with ipfib_fib_free.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string (NULL is an error); `engine` is NULL or a
/// NUL-terminated string; `err` is NULL or points to `errlen` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn ipfib_fib_open(
    path: *const c_char,
    engine: *const c_char,
    err: *mut c_char,
    errlen: usize,
) -> *mut ipfib_fib {
    let result = catch_unwind(|| {
        // SAFETY: the caller's contract for `path` and `engine`.
        let (path, engine) = unsafe { (str_arg(path), str_arg(engine)) };
        open(path, engine)
    })
    .unwrap_or_else(|_| Err("internal error: a panic while opening the table".into()));
    match result {
        Ok(fib) => Box::into_raw(Box::new(ipfib_fib { fib })),
        Err(msg) => {
            // SAFETY: the caller's contract for `err`.
            unsafe { write_err(err, errlen, &msg) };
            std::ptr::null_mut()
        }
    }
}

/// Saves the table in the saved-table format (written to a temporary file, then renamed over
/// path). Returns 0 on success; on error -1 and a message in err (if not NULL). Only tables
/// built with the planb engine can be saved.
///
/// # Safety
/// `fib` is a table from ipfib_fib_open; `path` is NULL (an error) or a NUL-terminated string;
/// `err` is NULL or points to `errlen` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn ipfib_fib_save(
    fib: *const ipfib_fib,
    path: *const c_char,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    let result = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the caller's contract for `path`.
        let path = unsafe { str_arg(path) }.ok_or("path is NULL")?;
        // SAFETY: the caller's contract: `fib` is a live table.
        let fib = unsafe { &(*fib).fib };
        fib.save(Path::new(OsStr::from_bytes(path.to_bytes())))
            .map_err(|e| describe(&e))
    }))
    .unwrap_or_else(|_| Err("internal error: a panic while saving the table".into()));
    match result {
        Ok(()) => 0,
        Err(msg) => {
            // SAFETY: the caller's contract for `err`.
            unsafe { write_err(err, errlen, &msg) };
            -1
        }
    }
}

/// Frees a table from ipfib_fib_open (NULL ok).
///
/// # Safety
/// `fib` is NULL or a table from ipfib_fib_open not freed before, used by no other thread.
#[no_mangle]
pub unsafe extern "C" fn ipfib_fib_free(fib: *mut ipfib_fib) {
    if !fib.is_null() {
        // SAFETY: the caller's contract: `fib` came from `Box::into_raw` and is freed once.
        // Dropping a table does not panic (no Drop of its parts does), but stay safe anyway.
        let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(fib) })));
    }
}

/// 1 and *next_hop set when a route matches, 0 when none. IPv4 in host byte order, IPv6 as
/// 16 bytes in network order (as in a packet header, as DPDK's rte_fib6 takes them).
///
/// # Safety
/// `fib` is a live table; `next_hop` points to a writable uint32_t.
#[no_mangle]
pub unsafe extern "C" fn ipfib_lookup_v4(
    fib: *const ipfib_fib,
    addr: u32,
    next_hop: *mut u32,
) -> c_int {
    // SAFETY: the caller's contract: `fib` is a live table.
    let fib = unsafe { &(*fib).fib };
    // SAFETY: the caller's contract: `next_hop` is writable.
    unsafe {
        report(
            catch_unwind(AssertUnwindSafe(|| fib.v4().lookup(addr))),
            next_hop,
        )
    }
}

/// The IPv6 form of ipfib_lookup_v4: addr is 16 bytes in network order.
///
/// # Safety
/// `fib` is a live table; `addr` points to 16 readable bytes; `next_hop` to a writable
/// uint32_t.
///
/// cbindgen:ptrs-as-arrays=[[addr; 16]]
#[no_mangle]
pub unsafe extern "C" fn ipfib_lookup_v6(
    fib: *const ipfib_fib,
    addr: *const u8,
    next_hop: *mut u32,
) -> c_int {
    // SAFETY: the caller's contract: `fib` is a live table, `addr` 16 readable bytes.
    let (fib, bytes) = unsafe { (&(*fib).fib, addr.cast::<[u8; 16]>().read_unaligned()) };
    let found = catch_unwind(AssertUnwindSafe(|| {
        fib.v6().lookup(u128::from_be_bytes(bytes))
    }));
    // SAFETY: the caller's contract: `next_hop` is writable.
    unsafe { report(found, next_hop) }
}

/// A single lookup's C result: 1 with `*next_hop` set when a route matched, 0 when none did
/// (or the lookup panicked, which never crosses the boundary).
///
/// # Safety
/// `next_hop` is writable.
unsafe fn report(found: std::thread::Result<Option<u32>>, next_hop: *mut u32) -> c_int {
    match found {
        Ok(Some(hop)) => {
            // SAFETY: the caller's contract.
            unsafe { *next_hop = hop };
            1
        }
        _ => 0,
    }
}

/// Bulk: `next_hops[i]` = the answer for `addrs[i]`, or `miss` when no route matches.
///
/// # Safety
/// `fib` is a live table; `addrs` points to `n` readable and `next_hops` to `n` writable
/// uint32_t (either may be NULL when `n` is 0).
#[no_mangle]
pub unsafe extern "C" fn ipfib_lookup_v4_bulk(
    fib: *const ipfib_fib,
    addrs: *const u32,
    next_hops: *mut u32,
    n: usize,
    miss: u32,
) {
    if n == 0 {
        return;
    }
    // SAFETY: the caller's contract: `n` elements each, non-NULL since `n > 0`.
    let (fib, addrs, out) = unsafe {
        (
            &(*fib).fib,
            std::slice::from_raw_parts(addrs, n),
            std::slice::from_raw_parts_mut(next_hops, n),
        )
    };
    // Equal lengths, so the batch cannot fail; a panic (none is known) leaves `out` as is.
    let _ = catch_unwind(AssertUnwindSafe(|| fib.lookup_v4_batch(addrs, out, miss)));
}

/// The IPv6 form of ipfib_lookup_v4_bulk: each address is 16 bytes in network order, read in
/// place by the batched walk.
///
/// # Safety
/// `fib` is a live table; `addrs` points to `n` readable 16-byte addresses and `next_hops`
/// to `n` writable uint32_t (either may be NULL when `n` is 0).
#[no_mangle]
pub unsafe extern "C" fn ipfib_lookup_v6_bulk(
    fib: *const ipfib_fib,
    addrs: *const [u8; 16],
    next_hops: *mut u32,
    n: usize,
    miss: u32,
) {
    if n == 0 {
        return;
    }
    // SAFETY: the caller's contract: `n` elements each, non-NULL since `n > 0`; `[u8; 16]`
    // has alignment 1, so any pointer to it is aligned.
    let (fib, addrs, out) = unsafe {
        (
            &(*fib).fib,
            std::slice::from_raw_parts(addrs, n),
            std::slice::from_raw_parts_mut(next_hops, n),
        )
    };
    // Equal lengths, so the batch cannot fail; a panic (none is known) leaves `out` as is.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        fib.lookup_v6_bytes_batch(addrs, out, miss)
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A message cut to the buffer stays NUL-terminated UTF-8: never half a character.
    #[test]
    fn truncated_messages_end_at_a_character_boundary() {
        let msg = "fib.txt:1: bad prefix \u{201c}10.0.0.0/33\u{201d}";
        for errlen in 1..=msg.len() + 2 {
            let mut buf = vec![0x7fu8 as c_char; errlen];
            // SAFETY: `buf` has `errlen` writable bytes.
            unsafe { write_err(buf.as_mut_ptr(), errlen, msg) };
            // SAFETY: write_err NUL-terminates within the buffer.
            let written = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_bytes();
            assert!(written.len() < errlen);
            let text = std::str::from_utf8(written).expect("UTF-8");
            assert!(msg.starts_with(text), "{errlen}: {text:?}");
            // At most the bytes of one character less than fit.
            assert!(
                text.len() + 3 >= msg.len().min(errlen - 1),
                "{errlen}: {text:?}"
            );
        }
    }
}
