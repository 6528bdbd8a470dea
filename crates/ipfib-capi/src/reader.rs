//! `ipfib_reader`: one thread's handle on a live table. A lookup checks whether a newer version
//! was published (one atomic load and a compare), then searches the version it holds: no lock,
//! no retry, no write to memory another thread reads, so readers never wait for writers, the
//! background thread, or each other.

use std::ffi::c_int;

use ipfib::Reader;

use crate::lookup;

/// A reader of a live table. One thread at a time may use it (it may move between threads);
/// each reading thread takes its own from ipfib_live_reader.
pub struct ipfib_reader {
    reader: Reader,
}

impl ipfib_reader {
    pub(crate) fn boxed(reader: Reader) -> *mut ipfib_reader {
        Box::into_raw(Box::new(ipfib_reader { reader }))
    }
}

/// Frees a reader (NULL ok), letting go of the version it held. It may outlive its live table.
///
/// # Safety
/// `reader` is NULL or a reader not freed before, used by no other thread.
#[no_mangle]
pub unsafe extern "C" fn ipfib_reader_free(reader: *mut ipfib_reader) {
    // SAFETY: the caller's contract, passed on.
    unsafe { crate::ffi::free(reader) }
}

/// The number of the newest published version, which the reader's next lookup answers from:
/// 0 for the live table's first contents, then one more per published version (0 for NULL).
///
/// # Safety
/// `reader` is NULL or a reader no other thread uses.
#[no_mangle]
pub unsafe extern "C" fn ipfib_reader_version(reader: *mut ipfib_reader) -> u64 {
    // SAFETY: the caller's contract.
    unsafe { reader.as_mut() }.map_or(0, |r| r.reader.snapshot().version())
}

/// As ipfib_lookup_v4, in the live table's newest version: 1 and *next_hop set when a route
/// matches, 0 when none, -1 (nothing written) when `reader` or `next_hop` is NULL. The address
/// is in host byte order.
///
/// # Safety
/// `reader` is NULL or a reader no other thread uses; `next_hop` is NULL or points to a
/// writable uint32_t.
#[no_mangle]
pub unsafe extern "C" fn ipfib_reader_lookup_v4(
    reader: *mut ipfib_reader,
    addr: u32,
    next_hop: *mut u32,
) -> c_int {
    // SAFETY: the caller's contract: `reader` is NULL or not used by another thread.
    let Some(r) = (unsafe { reader.as_mut() }) else {
        return -1;
    };
    // SAFETY: the caller's contract: `next_hop` is NULL or writable.
    unsafe { lookup::report(|| r.reader.lookup_v4(addr), next_hop) }
}

/// The IPv6 form of ipfib_reader_lookup_v4: addr is 16 bytes in network order; -1 also when
/// `addr` is NULL.
///
/// # Safety
/// As for ipfib_reader_lookup_v4; `addr` is NULL or points to 16 readable bytes.
///
/// cbindgen:ptrs-as-arrays=[[addr; 16]]
#[no_mangle]
pub unsafe extern "C" fn ipfib_reader_lookup_v6(
    reader: *mut ipfib_reader,
    addr: *const u8,
    next_hop: *mut u32,
) -> c_int {
    // SAFETY: the caller's contract: `reader` is NULL or not used by another thread.
    let Some(r) = (unsafe { reader.as_mut() }) else {
        return -1;
    };
    // SAFETY: the caller's contract: `addr` is NULL or 16 readable bytes.
    let Some(addr) = (unsafe { lookup::addr_v6(addr) }) else {
        return -1;
    };
    // SAFETY: the caller's contract: `next_hop` is NULL or writable.
    unsafe { lookup::report(|| r.reader.lookup_v6(addr), next_hop) }
}

/// Bulk, as ipfib_lookup_v4_bulk: `next_hops[i]` = the answer for `addrs[i]` (host byte
/// order), or `miss` when no route matches, every answer from the same version. Returns 0, or
/// -1 (nothing written) when `reader` is NULL or, with `n` > 0, an array is NULL.
///
/// # Safety
/// `reader` is NULL or a reader no other thread uses; `addrs` is NULL or points to `n`
/// readable and `next_hops` is NULL or points to `n` writable uint32_t.
#[no_mangle]
pub unsafe extern "C" fn ipfib_reader_lookup_v4_bulk(
    reader: *mut ipfib_reader,
    addrs: *const u32,
    next_hops: *mut u32,
    n: usize,
    miss: u32,
) -> c_int {
    // SAFETY: the caller's contract: `reader` is NULL or not used by another thread.
    let Some(r) = (unsafe { reader.as_mut() }) else {
        return -1;
    };
    // SAFETY: the caller's contract for the arrays, passed on.
    unsafe {
        lookup::bulk(addrs, next_hops, n, |a, out| {
            r.reader.lookup_v4_batch(a, out, miss)
        })
    }
}

/// The IPv6 form of ipfib_reader_lookup_v4_bulk: each address is 16 bytes in network order,
/// read in place.
///
/// # Safety
/// `reader` is NULL or a reader no other thread uses; `addrs` is NULL or points to `n`
/// readable 16-byte addresses and `next_hops` is NULL or points to `n` writable uint32_t.
#[no_mangle]
pub unsafe extern "C" fn ipfib_reader_lookup_v6_bulk(
    reader: *mut ipfib_reader,
    addrs: *const [u8; 16],
    next_hops: *mut u32,
    n: usize,
    miss: u32,
) -> c_int {
    // SAFETY: the caller's contract: `reader` is NULL or not used by another thread.
    let Some(r) = (unsafe { reader.as_mut() }) else {
        return -1;
    };
    // SAFETY: the caller's contract for the arrays, passed on.
    unsafe {
        lookup::bulk(addrs, next_hops, n, |a, out| {
            r.reader.lookup_v6_bytes_batch(a, out, miss)
        })
    }
}
