//! `ipfib_live`: a table that changes while other threads look up in it (the C face of
//! [`ipfib::LiveFib`]). Writers submit from any thread; a background thread publishes each
//! batch of changes as a new version; readers (`ipfib_reader`, one per thread) answer from one
//! whole version, old or new, never a mix, without locks.

use std::ffi::{c_char, c_int};
use std::time::Duration;

use ipfib::{Fib, LiveFib, LiveOptions, Update};
use ipnet::IpNet;

use crate::ffi::{call, engine_arg, path_arg, prefix_arg, prefix_v4, prefix_v6, text};
use crate::reader::ipfib_reader;
use crate::table::ipfib_table;

/// A live table (both families). Every function taking one may be called from any thread at
/// any time, concurrently, except ipfib_live_free.
pub struct ipfib_live {
    pub(crate) live: LiveFib,
}

/// One route change of a batch (ipfib_live_apply): the route `prefix` (text, as in
/// ipfib_table_insert) with `next_hop`, or, when `withdraw` is not 0, the removal of the route
/// for exactly `prefix` (`next_hop` unused).
#[repr(C)]
pub struct ipfib_update {
    /// The prefix, as text ("10.0.0.0/8", "2001:db8::/32").
    pub prefix: *const c_char,
    /// The route's next hop (ignored for a withdrawal).
    pub next_hop: u32,
    /// Not 0: remove the route instead.
    pub withdraw: c_int,
}

/// A live table holding the routes of `table` (which is only read, and may be changed or freed
/// afterwards), built with an engine (NULL = "planb"). `delay_us`: the longest an accepted
/// change waits for others to be published with it, in microseconds (0: each change is
/// published as soon as the previous build is done; larger values coalesce bursts into fewer
/// builds; ipfib_live_flush publishes at once whatever the delay). A background thread does
/// the builds. On error (a NULL table, an unknown engine, a family the engine cannot hold)
/// returns NULL and writes a message into err (if not NULL). Free it with ipfib_live_free.
///
/// # Safety
/// `table` is NULL or a route set no other thread changes during the call; `engine` is NULL
/// or a NUL-terminated string; `err` is NULL or points to `errlen` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn ipfib_live_new(
    table: *const ipfib_table,
    engine: *const c_char,
    delay_us: u32,
    err: *mut c_char,
    errlen: usize,
) -> *mut ipfib_live {
    // SAFETY: the caller's contract for every pointer.
    unsafe {
        call(err, errlen, std::ptr::null_mut(), || {
            let table = &table.as_ref().ok_or("the table is NULL")?.table;
            let engine = engine_arg(engine, "planb")?;
            let options =
                LiveOptions::default().with_delay(Duration::from_micros(u64::from(delay_us)));
            let live = LiveFib::with_options(table, engine, options).map_err(|e| text(&e))?;
            Ok(Box::into_raw(Box::new(ipfib_live { live })))
        })
    }
}

/// Publishes whatever is still queued, stops the background thread and frees the live table
/// (NULL ok). Readers may be freed before or after: a reader that outlives its live table
/// keeps answering from the last version.
///
/// # Safety
/// `live` is NULL or a live table not freed before, that no other thread uses any more.
#[no_mangle]
pub unsafe extern "C" fn ipfib_live_free(live: *mut ipfib_live) {
    // SAFETY: the caller's contract, passed on.
    unsafe { crate::ffi::free(live) }
}

/// Runs `body` on the live table behind `live` (NULL is an error) under [`call`]'s rules.
///
/// # Safety
/// `live` is NULL or a live table; `err` is NULL or points to `errlen` writable bytes.
pub(crate) unsafe fn with_live<T>(
    live: *const ipfib_live,
    err: *mut c_char,
    errlen: usize,
    failed: T,
    body: impl FnOnce(&LiveFib) -> Result<T, String>,
) -> T {
    // SAFETY: the caller's contract for every pointer.
    unsafe {
        call(err, errlen, failed, || {
            body(&live.as_ref().ok_or("the live table is NULL")?.live)
        })
    }
}

/// Submits `updates` to the live table: 0, or -1 and the message.
///
/// # Safety
/// `live` is NULL or a live table; `err` is NULL or points to `errlen` writable bytes.
unsafe fn submit(
    live: *const ipfib_live,
    updates: impl FnOnce() -> Result<Vec<Update>, String>,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    // SAFETY: the caller's contract for every pointer.
    unsafe {
        with_live(live, err, errlen, -1, |live| {
            live.apply(updates()?).map_err(|e| text(&e))?;
            Ok(0)
        })
    }
}

/// One insertion as a batch.
fn insertion(net: Result<IpNet, String>, next_hop: u32) -> Result<Vec<Update>, String> {
    Ok(vec![Update::Insert(net?, next_hop)])
}

/// One removal as a batch.
fn removal(net: Result<IpNet, String>) -> Result<Vec<Update>, String> {
    Ok(vec![Update::Remove(net?)])
}

/// Submits a route (or a new next hop for an existing route's prefix). It becomes visible to
/// readers within the live table's delay plus a build (ipfib_live_flush waits for it). Returns
/// 0, or -1 and a message in err (if not NULL) for a NULL live table, a bad prefix (as
/// ipfib_table_insert), or a family the engine cannot hold; a refused change is not queued.
/// When 262,144 changes are already waiting to be published, the call waits until the
/// background thread has taken them (so memory stays bounded however fast writers submit).
///
/// # Safety
/// `live` is NULL or a live table; `prefix` is NULL or a NUL-terminated string; `err` is NULL
/// or points to `errlen` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn ipfib_live_insert(
    live: *const ipfib_live,
    prefix: *const c_char,
    next_hop: u32,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    // SAFETY: the caller's contract for every pointer.
    unsafe {
        submit(
            live,
            || insertion(prefix_arg(prefix), next_hop),
            err,
            errlen,
        )
    }
}

/// Submits the removal of the route for exactly this prefix (no change when there is none).
/// Returns 0, or -1 and a message as ipfib_live_insert.
///
/// # Safety
/// As for ipfib_live_insert.
#[no_mangle]
pub unsafe extern "C" fn ipfib_live_remove(
    live: *const ipfib_live,
    prefix: *const c_char,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    // SAFETY: the caller's contract for every pointer.
    unsafe { submit(live, || removal(prefix_arg(prefix)), err, errlen) }
}

/// ipfib_live_insert for an IPv4 prefix given as an address in host byte order and a depth.
///
/// # Safety
/// `live` is NULL or a live table; `err` is NULL or points to `errlen` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn ipfib_live_insert_v4(
    live: *const ipfib_live,
    addr: u32,
    depth: u8,
    next_hop: u32,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    // SAFETY: the caller's contract for every pointer.
    unsafe {
        submit(
            live,
            || insertion(prefix_v4(addr, depth), next_hop),
            err,
            errlen,
        )
    }
}

/// ipfib_live_insert for an IPv6 prefix given as 16 bytes in network order and a depth.
///
/// # Safety
/// As for ipfib_live_insert_v4; `addr` is NULL (an error) or points to 16 readable bytes.
///
/// cbindgen:ptrs-as-arrays=[[addr; 16]]
#[no_mangle]
pub unsafe extern "C" fn ipfib_live_insert_v6(
    live: *const ipfib_live,
    addr: *const u8,
    depth: u8,
    next_hop: u32,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    // SAFETY: the caller's contract for every pointer.
    unsafe {
        submit(
            live,
            || insertion(prefix_v6(addr, depth), next_hop),
            err,
            errlen,
        )
    }
}

/// ipfib_live_remove for an IPv4 prefix given as in ipfib_live_insert_v4.
///
/// # Safety
/// As for ipfib_live_insert_v4.
#[no_mangle]
pub unsafe extern "C" fn ipfib_live_remove_v4(
    live: *const ipfib_live,
    addr: u32,
    depth: u8,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    // SAFETY: the caller's contract for every pointer.
    unsafe { submit(live, || removal(prefix_v4(addr, depth)), err, errlen) }
}

/// ipfib_live_remove for an IPv6 prefix given as in ipfib_live_insert_v6.
///
/// # Safety
/// As for ipfib_live_insert_v6.
///
/// cbindgen:ptrs-as-arrays=[[addr; 16]]
#[no_mangle]
pub unsafe extern "C" fn ipfib_live_remove_v6(
    live: *const ipfib_live,
    addr: *const u8,
    depth: u8,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    // SAFETY: the caller's contract for every pointer.
    unsafe { submit(live, || removal(prefix_v6(addr, depth)), err, errlen) }
}

/// Submits `n` changes as one batch, all or nothing: every change is checked first, and if one
/// is refused (a NULL or bad prefix, a family the engine cannot hold) nothing is queued and the
/// message names its index ("update 2: ..."). An accepted batch is published in one version,
/// in order (a later change of the same prefix wins). Returns 0, or -1 and a message in err
/// (if not NULL); `updates` may be NULL when `n` is 0. Waits, as ipfib_live_insert does, while
/// the queue of waiting changes has no room for the batch (a batch larger than the whole queue
/// is taken when the queue is empty).
///
/// # Safety
/// `live` is NULL or a live table; `updates` is NULL or points to `n` readable entries whose
/// prefixes are NULL or NUL-terminated strings; `err` is NULL or points to `errlen` writable
/// bytes.
#[no_mangle]
pub unsafe extern "C" fn ipfib_live_apply(
    live: *const ipfib_live,
    updates: *const ipfib_update,
    n: usize,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    let batch = || {
        if n == 0 {
            return Ok(Vec::new());
        }
        if updates.is_null() {
            return Err(format!("the updates are NULL (with n = {n})"));
        }
        // SAFETY: the caller's contract: a non-NULL `updates` has `n` entries.
        let updates = unsafe { std::slice::from_raw_parts(updates, n) };
        updates
            .iter()
            .enumerate()
            .map(|(i, u)| {
                // SAFETY: the caller's contract for each entry's prefix.
                let net =
                    unsafe { prefix_arg(u.prefix) }.map_err(|e| format!("update {i}: {e}"))?;
                Ok(if u.withdraw != 0 {
                    Update::Remove(net)
                } else {
                    Update::Insert(net, u.next_hop)
                })
            })
            .collect()
    };
    // SAFETY: the caller's contract for every pointer.
    unsafe { submit(live, batch, err, errlen) }
}

/// Returns once every change accepted before the call is visible to new lookups (0), asking
/// the background thread not to wait out its delay; -1 and a message in err (if not NULL) for
/// a NULL live table or a failed build (the changes stay queued for the next build).
///
/// # Safety
/// `live` is NULL or a live table; `err` is NULL or points to `errlen` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn ipfib_live_flush(
    live: *const ipfib_live,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    // SAFETY: the caller's contract for every pointer.
    unsafe {
        with_live(live, err, errlen, -1, |live| {
            live.flush().map_err(|e| text(&e))?;
            Ok(0)
        })
    }
}

/// A copy of the routes of the last published version (it waits for a build in progress),
/// for ipfib_fib_build, ipfib_table_len, or a check; free it with ipfib_table_free. NULL for a
/// NULL live table.
///
/// # Safety
/// `live` is NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn ipfib_live_table(live: *const ipfib_live) -> *mut ipfib_table {
    // SAFETY: the caller's contract for every pointer.
    unsafe {
        with_live(
            live,
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
            |live| Ok(ipfib_table::boxed(live.table())),
        )
    }
}

/// Saves the routes of the last published version in the saved-table format (built with the
/// planb engine, whatever the live table's engine; written to a temporary file, then renamed
/// over path, so ipfib_fib_open_mapped readers of the old file are safe). Call
/// ipfib_live_flush first to include every change submitted so far. Returns 0, or -1 and a
/// message in err (if not NULL).
///
/// # Safety
/// `live` is NULL or a live table; `path` is NULL or a NUL-terminated string; `err` is NULL or
/// points to `errlen` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn ipfib_live_save(
    live: *const ipfib_live,
    path: *const c_char,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    // SAFETY: the caller's contract for every pointer.
    unsafe {
        with_live(live, err, errlen, -1, |live| {
            let path = path_arg(path)?;
            let fib = Fib::build(&live.table(), "planb").map_err(|e| text(&e))?;
            fib.save(path).map_err(|e| text(&e))?;
            Ok(0)
        })
    }
}

/// A new reader: the handle one thread looks up through (ipfib_reader_lookup_v4 and the
/// others). Free it with ipfib_reader_free. NULL for a NULL live table.
///
/// # Safety
/// `live` is NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn ipfib_live_reader(live: *const ipfib_live) -> *mut ipfib_reader {
    // SAFETY: the caller's contract for every pointer.
    unsafe {
        with_live(
            live,
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
            |live| Ok(ipfib_reader::boxed(live.reader())),
        )
    }
}
