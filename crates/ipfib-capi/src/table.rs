//! `ipfib_table`: a route set of both families that C code builds, changes, and then builds
//! into a table (`ipfib_fib_build`) or a live table (`ipfib_live_new`).
//!
//! Prefixes come as text (`10.0.0.0/8`, `2001:db8::/32`, as strict as a table file: the
//! length required, no host bits set) or, as DPDK's `rte_fib_add` takes them, as an address
//! and a depth (IPv4 in host byte order, IPv6 as 16 bytes in network order).

use std::ffi::{c_char, c_int};

use ipfib::Table;
use ipnet::IpNet;

use crate::ffi::{call, path_arg, prefix_arg, prefix_v4, prefix_v6, text};

/// One route, as ipfib_table_routes copies it out: the form DPDK's `rte_fib_add` and
/// `rte_fib6_add` take.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ipfib_route {
    /// 4 or 6.
    pub family: u8,
    /// The prefix length (0 to 32, or 0 to 128).
    pub depth: u8,
    /// IPv4: the address in host byte order; 0 for IPv6.
    pub v4: u32,
    /// IPv6: the address, 16 bytes in network order; zeros for IPv4.
    pub v6: [u8; 16],
    /// The route's next hop.
    pub next_hop: u32,
}

/// A route set (both families): prefixes and their next hops. Not synchronized: one thread
/// may change it while no other thread uses it; any number of threads may read it (build,
/// length) at once.
pub struct ipfib_table {
    pub(crate) table: Table,
}

impl ipfib_table {
    pub(crate) fn boxed(table: Table) -> *mut ipfib_table {
        Box::into_raw(Box::new(ipfib_table { table }))
    }
}

/// An empty route set. Free it with ipfib_table_free. Never NULL.
#[no_mangle]
pub extern "C" fn ipfib_table_new() -> *mut ipfib_table {
    ipfib_table::boxed(Table::new())
}

/// The routes of any file `ipfib --fib` reads (text, gzip, bzip2, MRT RIB, a saved table),
/// read once, so a pipe works. On error returns NULL and writes a message into err (if not
/// NULL). Any thread may call this.
///
/// # Safety
/// `path` is NULL (an error) or a NUL-terminated string; `err` is NULL or points to `errlen`
/// writable bytes.
#[no_mangle]
pub unsafe extern "C" fn ipfib_table_load(
    path: *const c_char,
    err: *mut c_char,
    errlen: usize,
) -> *mut ipfib_table {
    // SAFETY: the caller's contract for every pointer.
    unsafe {
        call(err, errlen, std::ptr::null_mut(), || {
            let path = path_arg(path)?;
            ipfib_io::read_fib(path, &ipfib_io::LoadOptions::default())
                .map(|file| ipfib_table::boxed(file.into_routes().0))
                .map_err(|e| text(&e))
        })
    }
}

/// Frees a route set (NULL ok). Tables and live tables built from it do not depend on it.
///
/// # Safety
/// `table` is NULL or a route set not freed before, used by no other thread.
#[no_mangle]
pub unsafe extern "C" fn ipfib_table_free(table: *mut ipfib_table) {
    // SAFETY: the caller's contract, passed on.
    unsafe { crate::ffi::free(table) }
}

/// The number of routes, both families (0 for NULL).
///
/// # Safety
/// `table` is NULL or a live route set.
#[no_mangle]
pub unsafe extern "C" fn ipfib_table_len(table: *const ipfib_table) -> usize {
    // SAFETY: the caller's contract.
    unsafe { table.as_ref() }.map_or(0, |t| t.table.len())
}

/// Copies the routes into `routes`: IPv4 before IPv6, each family in address order (a covering
/// prefix before the prefixes sharing its start). Writes at most `cap` of them and returns how
/// many the set holds (so a call with `cap` 0, where `routes` may be NULL, sizes the array);
/// 0 for a NULL set, or a NULL `routes` with `cap` > 0.
///
/// # Safety
/// `table` is NULL or a route set no other thread changes; `routes` is NULL or points to `cap`
/// writable entries.
#[no_mangle]
pub unsafe extern "C" fn ipfib_table_routes(
    table: *const ipfib_table,
    routes: *mut ipfib_route,
    cap: usize,
) -> usize {
    // SAFETY: the caller's contract for `table`.
    let Some(table) = (unsafe { table.as_ref() }) else {
        return 0;
    };
    if routes.is_null() && cap > 0 {
        return 0;
    }
    let out: &mut [ipfib_route] = if cap == 0 {
        &mut []
    } else {
        // SAFETY: the caller's contract: `routes` has `cap` writable entries.
        unsafe { std::slice::from_raw_parts_mut(routes, cap) }
    };
    for (slot, (net, next_hop)) in out.iter_mut().zip(table.table.iter()) {
        *slot = match net {
            IpNet::V4(n) => ipfib_route {
                family: 4,
                depth: n.prefix_len(),
                v4: u32::from(n.addr()),
                v6: [0; 16],
                next_hop,
            },
            IpNet::V6(n) => ipfib_route {
                family: 6,
                depth: n.prefix_len(),
                v4: 0,
                v6: n.addr().octets(),
                next_hop,
            },
        };
    }
    table.table.len()
}

/// Inserts `net` (an error from reading the prefix, or a prefix) into the route set.
///
/// # Safety
/// `table` is NULL or a live route set no other thread uses; `err` as for the callers.
unsafe fn insert(
    table: *mut ipfib_table,
    net: impl FnOnce() -> Result<IpNet, String>,
    next_hop: u32,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    // SAFETY: the caller's contract for every pointer.
    unsafe {
        call(err, errlen, -1, || {
            let table = &mut table.as_mut().ok_or("the table is NULL")?.table;
            let net = net()?;
            table.insert(net, next_hop).map_err(|e| e.to_string())?;
            Ok(0)
        })
    }
}

/// Removes `net` from the route set: 1 when it was there, 0 when not.
///
/// # Safety
/// As for [`insert`].
unsafe fn remove(
    table: *mut ipfib_table,
    net: impl FnOnce() -> Result<IpNet, String>,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    // SAFETY: the caller's contract for every pointer.
    unsafe {
        call(err, errlen, -1, || {
            let table = &mut table.as_mut().ok_or("the table is NULL")?.table;
            Ok(c_int::from(table.remove(&net()?).is_some()))
        })
    }
}

/// Inserts a route, or gives an existing route for the same prefix this next hop. Returns 0,
/// or -1 and a message in err (if not NULL) for a NULL table or a bad prefix ("10.0.0.1/8":
/// host bits set; "10.0.0.0/33"; text that is not a prefix), leaving the set unchanged.
///
/// # Safety
/// `table` is NULL or a route set no other thread uses; `prefix` is NULL or a NUL-terminated
/// string; `err` is NULL or points to `errlen` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn ipfib_table_insert(
    table: *mut ipfib_table,
    prefix: *const c_char,
    next_hop: u32,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    // SAFETY: the caller's contract for every pointer.
    unsafe { insert(table, || prefix_arg(prefix), next_hop, err, errlen) }
}

/// Removes the route for exactly this prefix: 1 when it was there, 0 when it was not, -1 and a
/// message in err (if not NULL) for a NULL table or a bad prefix, as ipfib_table_insert.
///
/// # Safety
/// As for ipfib_table_insert.
#[no_mangle]
pub unsafe extern "C" fn ipfib_table_remove(
    table: *mut ipfib_table,
    prefix: *const c_char,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    // SAFETY: the caller's contract for every pointer.
    unsafe { remove(table, || prefix_arg(prefix), err, errlen) }
}

/// ipfib_table_insert for an IPv4 prefix given as an address in host byte order and a depth
/// (0 to 32; host bits set are an error).
///
/// # Safety
/// `table` is NULL or a route set no other thread uses; `err` is NULL or points to `errlen`
/// writable bytes.
#[no_mangle]
pub unsafe extern "C" fn ipfib_table_insert_v4(
    table: *mut ipfib_table,
    addr: u32,
    depth: u8,
    next_hop: u32,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    // SAFETY: the caller's contract for every pointer.
    unsafe { insert(table, || prefix_v4(addr, depth), next_hop, err, errlen) }
}

/// ipfib_table_insert for an IPv6 prefix given as 16 bytes in network order and a depth (0 to
/// 128; host bits set are an error; a NULL address is an error).
///
/// # Safety
/// As for ipfib_table_insert_v4; `addr` is NULL or points to 16 readable bytes.
///
/// cbindgen:ptrs-as-arrays=[[addr; 16]]
#[no_mangle]
pub unsafe extern "C" fn ipfib_table_insert_v6(
    table: *mut ipfib_table,
    addr: *const u8,
    depth: u8,
    next_hop: u32,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    // SAFETY: the caller's contract for every pointer.
    unsafe { insert(table, || prefix_v6(addr, depth), next_hop, err, errlen) }
}

/// ipfib_table_remove for an IPv4 prefix given as in ipfib_table_insert_v4.
///
/// # Safety
/// As for ipfib_table_insert_v4.
#[no_mangle]
pub unsafe extern "C" fn ipfib_table_remove_v4(
    table: *mut ipfib_table,
    addr: u32,
    depth: u8,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    // SAFETY: the caller's contract for every pointer.
    unsafe { remove(table, || prefix_v4(addr, depth), err, errlen) }
}

/// ipfib_table_remove for an IPv6 prefix given as in ipfib_table_insert_v6.
///
/// # Safety
/// As for ipfib_table_insert_v6.
///
/// cbindgen:ptrs-as-arrays=[[addr; 16]]
#[no_mangle]
pub unsafe extern "C" fn ipfib_table_remove_v6(
    table: *mut ipfib_table,
    addr: *const u8,
    depth: u8,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    // SAFETY: the caller's contract for every pointer.
    unsafe { remove(table, || prefix_v6(addr, depth), err, errlen) }
}
