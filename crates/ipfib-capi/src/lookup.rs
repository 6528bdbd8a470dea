//! What the single and bulk lookups of tables (`ipfib_fib`) and live readers (`ipfib_reader`)
//! share: the NULL checks and the C result.

use std::ffi::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

use ipfib::LookupError;

/// A single lookup's C result: 1 with `*next_hop` set when a route matched, 0 when none did
/// (or the lookup panicked, which never crosses the boundary), -1 when `next_hop` is NULL.
///
/// # Safety
/// `next_hop` is NULL or writable.
pub(crate) unsafe fn report(lookup: impl FnOnce() -> Option<u32>, next_hop: *mut u32) -> c_int {
    if next_hop.is_null() {
        return -1;
    }
    match catch_unwind(AssertUnwindSafe(lookup)) {
        Ok(Some(hop)) => {
            // SAFETY: the caller's contract, and not NULL.
            unsafe { *next_hop = hop };
            1
        }
        _ => 0,
    }
}

/// An IPv6 address argument (16 bytes in network order) as its integer; `None` for NULL.
///
/// # Safety
/// `addr` is NULL or points to 16 readable bytes.
pub(crate) unsafe fn addr_v6(addr: *const u8) -> Option<u128> {
    // SAFETY: the caller's contract: a non-NULL `addr` has 16 readable bytes.
    (!addr.is_null())
        .then(|| u128::from_be_bytes(unsafe { addr.cast::<[u8; 16]>().read_unaligned() }))
}

/// A bulk lookup's C result: runs `lookup` on the two arrays and returns 0, or -1 (nothing
/// written) when, with `n` > 0, an array is NULL. With `n` == 0 the arrays are not used and
/// may be NULL. A panic (none is known) leaves the output as it is.
///
/// # Safety
/// Non-NULL arrays have `n` readable (`addrs`) and writable (`next_hops`) elements.
pub(crate) unsafe fn bulk<A>(
    addrs: *const A,
    next_hops: *mut u32,
    n: usize,
    lookup: impl FnOnce(&[A], &mut [u32]) -> Result<(), LookupError>,
) -> c_int {
    if n == 0 {
        return 0;
    }
    if addrs.is_null() || next_hops.is_null() {
        return -1;
    }
    // SAFETY: the caller's contract: non-NULL arrays of `n` elements each.
    let (addrs, out) = unsafe {
        (
            std::slice::from_raw_parts(addrs, n),
            std::slice::from_raw_parts_mut(next_hops, n),
        )
    };
    // Equal lengths, so the batch cannot fail.
    let _ = catch_unwind(AssertUnwindSafe(|| lookup(addrs, out)));
    0
}
