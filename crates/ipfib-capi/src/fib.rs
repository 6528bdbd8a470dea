//! `ipfib_fib`: an immutable table, opened from a file or built from an `ipfib_table`, looked
//! up one address at a time or in bulk (DPDK's `rte_fib_lookup_bulk` shape), saved.

use std::ffi::{c_char, c_int};

use ipfib::Fib;

use crate::ffi::{call, engine_arg, path_arg, text};
use crate::lookup;
use crate::table::ipfib_table;

/// A built forwarding table (both families). Immutable: any number of threads may look up in
/// it at once.
pub struct ipfib_fib {
    pub(crate) fib: Fib,
}

impl ipfib_fib {
    pub(crate) fn boxed(fib: Fib) -> *mut ipfib_fib {
        Box::into_raw(Box::new(ipfib_fib { fib }))
    }
}

/// [`ipfib_fib_open`] and [`ipfib_fib_open_mapped`].
///
/// # Safety
/// As for `ipfib_fib_open`; `map` only with `ipfib_fib_open_mapped`'s contract.
unsafe fn open(
    path: *const c_char,
    engine: *const c_char,
    map: bool,
    err: *mut c_char,
    errlen: usize,
) -> *mut ipfib_fib {
    // SAFETY: the caller's contract for every pointer.
    unsafe {
        call(err, errlen, std::ptr::null_mut(), || {
            let path = path_arg(path)?;
            let engine = if engine.is_null() {
                None
            } else {
                Some(engine_arg(engine, "planb")?)
            };
            let options = ipfib_io::LoadOptions::default();
            let file = if map {
                // SAFETY: `map` is only set by `ipfib_fib_open_mapped`, whose documented
                // contract is that the caller keeps the file unchanged while the table is open.
                ipfib_io::read_fib_mapped(path, &options)
            } else {
                ipfib_io::read_fib(path, &options)
            };
            file.and_then(|f| f.build(engine))
                .map(ipfib_fib::boxed)
                .map_err(|e| text(&e))
        })
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
    unsafe { open(path, engine, false, err, errlen) }
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
    unsafe { open(path, engine, true, err, errlen) }
}

/// Builds the routes of `table` with an engine (NULL = "planb"; `ipfib lookup --help`
/// lists the names). The table is only read, and may be changed or freed afterwards. On error
/// (a NULL table, an unknown engine, an engine that cannot hold a family the table has)
/// returns NULL and writes a message into err (if not NULL). Any thread may call this while no
/// thread changes `table`. Free the result with ipfib_fib_free.
///
/// # Safety
/// `table` is NULL or a live table; `engine` is NULL or a NUL-terminated string; `err` is
/// NULL or points to `errlen` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn ipfib_fib_build(
    table: *const ipfib_table,
    engine: *const c_char,
    err: *mut c_char,
    errlen: usize,
) -> *mut ipfib_fib {
    // SAFETY: the caller's contract for every pointer.
    unsafe {
        call(err, errlen, std::ptr::null_mut(), || {
            let table = &table.as_ref().ok_or("the table is NULL")?.table;
            let engine = engine_arg(engine, "planb")?;
            Fib::build(table, engine)
                .map(ipfib_fib::boxed)
                .map_err(|e| text(&e))
        })
    }
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
    // SAFETY: the caller's contract for every pointer.
    unsafe {
        call(err, errlen, -1, || {
            let path = path_arg(path)?;
            let fib = &fib.as_ref().ok_or("the table is NULL")?.fib;
            fib.save(path).map_err(|e| text(&e))?;
            Ok(0)
        })
    }
}

/// Frees a table from ipfib_fib_open or ipfib_fib_build (NULL ok).
///
/// # Safety
/// `fib` is NULL or a table from ipfib_fib_open not freed before, used by no other thread.
#[no_mangle]
pub unsafe extern "C" fn ipfib_fib_free(fib: *mut ipfib_fib) {
    // SAFETY: the caller's contract, passed on.
    unsafe { crate::ffi::free(fib) }
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
    unsafe { lookup::report(|| fib.fib.v4().lookup(addr), next_hop) }
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
    // SAFETY: the caller's contract: `addr` is NULL or 16 readable bytes.
    let Some(addr) = (unsafe { lookup::addr_v6(addr) }) else {
        return -1;
    };
    // SAFETY: the caller's contract: `next_hop` is NULL or writable.
    unsafe { lookup::report(|| fib.fib.v6().lookup(addr), next_hop) }
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
    // SAFETY: the caller's contract: `fib` is NULL or a live table.
    let Some(fib) = (unsafe { fib.as_ref() }) else {
        return -1;
    };
    // SAFETY: the caller's contract for the arrays, passed on.
    unsafe {
        lookup::bulk(addrs, next_hops, n, |a, out| {
            fib.fib.lookup_v4_batch(a, out, miss)
        })
    }
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
    // SAFETY: the caller's contract: `fib` is NULL or a live table.
    let Some(fib) = (unsafe { fib.as_ref() }) else {
        return -1;
    };
    // SAFETY: the caller's contract for the arrays, passed on.
    unsafe {
        lookup::bulk(addrs, next_hops, n, |a, out| {
            fib.fib.lookup_v6_bytes_batch(a, out, miss)
        })
    }
}
