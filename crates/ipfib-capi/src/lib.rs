//! ipfib for C: open a table (any FIB file, or a saved table, read into memory or mapped in
//! place), look addresses up one at a time or in bulk (DPDK's `rte_fib_lookup_bulk` shape),
//! save it.
//!
//! The header `include/ipfib.h` is generated from this file by cbindgen. Rules every function
//! keeps:
//! - No function aborts the process or lets a Rust panic cross into C: each body runs under
//!   `catch_unwind`, and a panic becomes an error return (there is none on any known input).
//! - Errors are a return value plus a message in the caller's `err` buffer (`errlen` bytes,
//!   always NUL-terminated, truncated if need be; `err` may be NULL).
//! - A NULL table or array is checked (one branch per call, outside the bulk loop): the single
//!   lookups and the bulk lookups return -1 for it and write nothing, `ipfib_fib_save` returns
//!   -1 with a message. Other invalid pointers (freed, too short) are undefined behaviour.
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

fn open(path: Option<&CStr>, engine: Option<&CStr>, map: bool) -> Result<Fib, String> {
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
    let options = ipfib_io::LoadOptions::default();
    let file = if map {
        // SAFETY: `map` is only set by `ipfib_fib_open_mapped`, whose documented contract (the
        // header) is that the caller keeps the file unchanged while the table is open.
        unsafe { ipfib_io::read_fib_mapped(path, &options) }
    } else {
        ipfib_io::read_fib(path, &options)
    };
    file.and_then(|f| f.build(engine)).map_err(|e| describe(&e))
}

/// The C face of [`open`]: a table, or NULL and a message in `err`.
///
/// # Safety
/// As for `ipfib_fib_open`.
unsafe fn open_c(
    path: *const c_char,
    engine: *const c_char,
    map: bool,
    err: *mut c_char,
    errlen: usize,
) -> *mut ipfib_fib {
    let result = catch_unwind(|| {
        // SAFETY: the caller's contract for `path` and `engine`.
        let (path, engine) = unsafe { (str_arg(path), str_arg(engine)) };
        open(path, engine, map)
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

/// Opens a FIB file (text, gzip, bzip2, MRT RIB or saved table). engine: NULL = default (or
/// the saved engine). On error returns NULL and writes a message into err (if not NULL).
///
/// The path is opened and read once, so a pipe or FIFO ("/dev/fd/N", "/dev/stdin") works.
/// A saved table opened with its own engine (or NULL) is read into memory and used as it is,
/// with no build; the file may change or go away afterwards. Free the result with
/// ipfib_fib_free. Any thread may call this.
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
    // SAFETY: the caller's contract, passed on.
    unsafe { open_c(path, engine, false, err, errlen) }
}

/// ipfib_fib_open, except that a saved table in a regular file is mapped instead of read:
/// no copy, and the pages are shared by every process that maps the file. Other files are
/// read as ipfib_fib_open reads them.
///
/// CONTRACT: while the table is open, nobody may truncate the file or write into it: a
/// lookup that touches a truncated page kills the process with SIGBUS, and rewritten bytes
/// are read unchecked (wrong answers, reads out of bounds). Replacing the file by renaming
/// another over it, as ipfib_fib_save does, is safe: the table keeps the old file.
///
/// # Safety
/// As for ipfib_fib_open, plus the contract above.
#[no_mangle]
pub unsafe extern "C" fn ipfib_fib_open_mapped(
    path: *const c_char,
    engine: *const c_char,
    err: *mut c_char,
    errlen: usize,
) -> *mut ipfib_fib {
    // SAFETY: the caller's contract, passed on.
    unsafe { open_c(path, engine, true, err, errlen) }
}

/// Saves the table in the saved-table format (written to a temporary file, then renamed over
/// path). Returns 0 on success; on error -1 and a message in err (if not NULL). Only tables
/// built with the planb engine can be saved.
///
/// # Safety
/// `fib` is NULL (an error) or a table from ipfib_fib_open; `path` is NULL (an error) or a
/// NUL-terminated string; `err` is NULL or points to `errlen` writable bytes.
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
        // SAFETY: the caller's contract: `fib` is NULL or a live table.
        let fib = &unsafe { fib.as_ref() }.ok_or("the table is NULL")?.fib;
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

/// 1 and *next_hop set when a route matches, 0 when none, -1 (nothing written) when `fib` or
/// `next_hop` is NULL. IPv4 in host byte order, IPv6 as 16 bytes in network order (as in a
/// packet header, as DPDK's rte_fib6 takes them). Any number of threads may look up at once.
///
/// # Safety
/// `fib` is NULL or a live table; `next_hop` is NULL or points to a writable uint32_t.
#[no_mangle]
pub unsafe extern "C" fn ipfib_lookup_v4(
    fib: *const ipfib_fib,
    addr: u32,
    next_hop: *mut u32,
) -> c_int {
    // SAFETY: the caller's contract: `fib` is NULL or a live table.
    let Some(fib) = (unsafe { fib.as_ref() }) else {
        return -1;
    };
    // SAFETY: the caller's contract: `next_hop` is NULL or writable.
    unsafe {
        report(
            catch_unwind(AssertUnwindSafe(|| fib.fib.v4().lookup(addr))),
            next_hop,
        )
    }
}

/// The IPv6 form of ipfib_lookup_v4: addr is 16 bytes in network order; -1 also when `addr` is
/// NULL.
///
/// # Safety
/// `fib` is NULL or a live table; `addr` is NULL or points to 16 readable bytes; `next_hop` is
/// NULL or points to a writable uint32_t.
///
/// cbindgen:ptrs-as-arrays=[[addr; 16]]
#[no_mangle]
pub unsafe extern "C" fn ipfib_lookup_v6(
    fib: *const ipfib_fib,
    addr: *const u8,
    next_hop: *mut u32,
) -> c_int {
    // SAFETY: the caller's contract: `fib` is NULL or a live table.
    let Some(fib) = (unsafe { fib.as_ref() }) else {
        return -1;
    };
    if addr.is_null() {
        return -1;
    }
    // SAFETY: the caller's contract: a non-NULL `addr` has 16 readable bytes.
    let bytes = unsafe { addr.cast::<[u8; 16]>().read_unaligned() };
    let found = catch_unwind(AssertUnwindSafe(|| {
        fib.fib.v6().lookup(u128::from_be_bytes(bytes))
    }));
    // SAFETY: the caller's contract: `next_hop` is NULL or writable.
    unsafe { report(found, next_hop) }
}

/// A single lookup's C result: 1 with `*next_hop` set when a route matched, 0 when none did
/// (or the lookup panicked, which never crosses the boundary), -1 when `next_hop` is NULL.
///
/// # Safety
/// `next_hop` is NULL or writable.
unsafe fn report(found: std::thread::Result<Option<u32>>, next_hop: *mut u32) -> c_int {
    if next_hop.is_null() {
        return -1;
    }
    match found {
        Ok(Some(hop)) => {
            // SAFETY: the caller's contract, and not NULL.
            unsafe { *next_hop = hop };
            1
        }
        _ => 0,
    }
}

/// The table and the two arrays of a bulk call, or `None` when one of them is NULL (with `n`
/// > 0; with `n` == 0 the arrays are not used and may be NULL).
///
/// # Safety
/// `fib` is NULL or a live table; non-NULL arrays have `n` readable (`addrs`) and writable
/// (`next_hops`) elements.
unsafe fn bulk_args<'a, A>(
    fib: *const ipfib_fib,
    addrs: *const A,
    next_hops: *mut u32,
    n: usize,
) -> Option<(&'a Fib, &'a [A], &'a mut [u32])> {
    // SAFETY: the caller's contract: `fib` is NULL or a live table.
    let fib = &unsafe { fib.as_ref() }?.fib;
    if n == 0 {
        return Some((fib, &[], &mut []));
    }
    if addrs.is_null() || next_hops.is_null() {
        return None;
    }
    // SAFETY: the caller's contract: non-NULL arrays of `n` elements each.
    let (addrs, out) = unsafe {
        (
            std::slice::from_raw_parts(addrs, n),
            std::slice::from_raw_parts_mut(next_hops, n),
        )
    };
    Some((fib, addrs, out))
}

/// Bulk: `next_hops[i]` = the answer for `addrs[i]`, or `miss` when no route matches. Returns
/// 0, or -1 (nothing written) when `fib` is NULL or, with `n` > 0, an array is NULL. Any
/// number of threads may look up at once.
///
/// # Safety
/// `fib` is NULL or a live table; `addrs` is NULL or points to `n` readable and `next_hops` is
/// NULL or points to `n` writable uint32_t.
#[no_mangle]
pub unsafe extern "C" fn ipfib_lookup_v4_bulk(
    fib: *const ipfib_fib,
    addrs: *const u32,
    next_hops: *mut u32,
    n: usize,
    miss: u32,
) -> c_int {
    // SAFETY: the caller's contract, passed on.
    let Some((fib, addrs, out)) = (unsafe { bulk_args(fib, addrs, next_hops, n) }) else {
        return -1;
    };
    // Equal lengths, so the batch cannot fail; a panic (none is known) leaves `out` as is.
    let _ = catch_unwind(AssertUnwindSafe(|| fib.lookup_v4_batch(addrs, out, miss)));
    0
}

/// The IPv6 form of ipfib_lookup_v4_bulk: each address is 16 bytes in network order, read in
/// place by the batched walk.
///
/// # Safety
/// `fib` is NULL or a live table; `addrs` is NULL or points to `n` readable 16-byte addresses
/// and `next_hops` is NULL or points to `n` writable uint32_t.
#[no_mangle]
pub unsafe extern "C" fn ipfib_lookup_v6_bulk(
    fib: *const ipfib_fib,
    addrs: *const [u8; 16],
    next_hops: *mut u32,
    n: usize,
    miss: u32,
) -> c_int {
    // SAFETY: the caller's contract, passed on; `[u8; 16]` has alignment 1, so any pointer
    // to it is aligned.
    let Some((fib, addrs, out)) = (unsafe { bulk_args(fib, addrs, next_hops, n) }) else {
        return -1;
    };
    // Equal lengths, so the batch cannot fail; a panic (none is known) leaves `out` as is.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        fib.lookup_v6_bytes_batch(addrs, out, miss)
    }));
    0
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
