//! Declarations of the C shim (`csrc/shim.c`). The DPDK objects are opaque here; only the
//! shim touches their fields.

use std::ffi::{c_char, c_int, c_uint};

/// Opaque `struct rte_fib6`.
#[repr(C)]
pub struct RteFib6 {
    _private: [u8; 0],
}
/// Opaque `struct rte_fib`.
#[repr(C)]
pub struct RteFib {
    _private: [u8; 0],
}
/// Opaque `struct rte_lpm`.
#[repr(C)]
pub struct RteLpm {
    _private: [u8; 0],
}
/// Opaque `struct rte_lpm6`.
#[repr(C)]
pub struct RteLpm6 {
    _private: [u8; 0],
}

extern "C" {
    pub fn ipfib_dpdk_eal_init(argc: c_int, argv: *mut *mut c_char, err: *mut c_int) -> c_int;
    pub fn ipfib_dpdk_strerror(errnum: c_int) -> *const c_char;
    pub fn ipfib_dpdk_heap_stats(allocated: *mut u64, free: *mut u64);
    pub fn ipfib_dpdk_max_simd_bitwidth() -> c_uint;

    pub fn ipfib_fib6_create(
        name: *const c_char,
        max_routes: u32,
        num_tbl8: u32,
        nh_bytes: c_int,
        avx512: *mut c_int,
        err: *mut c_int,
    ) -> *mut RteFib6;
    pub fn ipfib_fib6_add(fib: *mut RteFib6, ip: *const [u8; 16], depth: u8, nh: u64) -> c_int;
    pub fn ipfib_fib6_lookup_bulk(
        fib: *mut RteFib6,
        ips: *const [u8; 16],
        nhs: *mut u64,
        n: c_int,
    ) -> c_int;
    pub fn ipfib_fib6_free(fib: *mut RteFib6);

    pub fn ipfib_fib4_create(
        name: *const c_char,
        max_routes: u32,
        num_tbl8: u32,
        nh_bytes: c_int,
        avx512: *mut c_int,
        err: *mut c_int,
    ) -> *mut RteFib;
    pub fn ipfib_fib4_add(fib: *mut RteFib, ip: u32, depth: u8, nh: u64) -> c_int;
    pub fn ipfib_fib4_lookup_bulk(
        fib: *mut RteFib,
        ips: *const u32,
        nhs: *mut u64,
        n: c_int,
    ) -> c_int;
    pub fn ipfib_fib4_free(fib: *mut RteFib);

    pub fn ipfib_lpm4_create(
        name: *const c_char,
        max_rules: u32,
        num_tbl8: u32,
        err: *mut c_int,
    ) -> *mut RteLpm;
    pub fn ipfib_lpm4_add(lpm: *mut RteLpm, ip: u32, depth: u8, nh: u32) -> c_int;
    pub fn ipfib_lpm4_lookup(lpm: *const RteLpm, ip: u32, nh: *mut u32) -> c_int;
    pub fn ipfib_lpm4_lookup_bulk(
        lpm: *const RteLpm,
        ips: *const u32,
        nhs: *mut u32,
        n: c_uint,
    ) -> c_int;
    pub fn ipfib_lpm4_hit_flag() -> u32;
    pub fn ipfib_lpm4_free(lpm: *mut RteLpm);

    pub fn ipfib_lpm6_create(
        name: *const c_char,
        max_rules: u32,
        num_tbl8: u32,
        err: *mut c_int,
    ) -> *mut RteLpm6;
    pub fn ipfib_lpm6_add(lpm: *mut RteLpm6, ip: *const [u8; 16], depth: u8, nh: u32) -> c_int;
    pub fn ipfib_lpm6_lookup(lpm: *const RteLpm6, ip: *const [u8; 16], nh: *mut u32) -> c_int;
    pub fn ipfib_lpm6_lookup_bulk(
        lpm: *const RteLpm6,
        ips: *const [u8; 16],
        nhs: *mut i32,
        n: c_uint,
    ) -> c_int;
    pub fn ipfib_lpm6_free(lpm: *mut RteLpm6);
}
