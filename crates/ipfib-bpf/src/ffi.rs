//! The C shim's functions (`csrc/shim.c`), which wrap the libbpf calls this crate makes.

use std::ffi::{c_char, c_int, c_void};

/// A loaded lookup program with its maps (opaque).
#[repr(C)]
pub struct IpfibBpf {
    _private: [u8; 0],
}

/// The attached trie-free probe (opaque).
#[repr(C)]
pub struct IpfibBpfProbe {
    _private: [u8; 0],
}

extern "C" {
    pub fn ipfib_bpf_open(
        obj: *const c_void,
        obj_len: usize,
        family: u32,
        trie_max: u32,
        nslots: u32,
        out: *mut *mut IpfibBpf,
        msg: *mut c_char,
        msg_len: usize,
    ) -> c_int;
    pub fn ipfib_bpf_close(h: *mut IpfibBpf);
    pub fn ipfib_bpf_slots(h: *mut IpfibBpf) -> *mut c_void;
    pub fn ipfib_bpf_answers(h: *mut IpfibBpf) -> *mut c_void;
    pub fn ipfib_bpf_ctl(h: *mut IpfibBpf) -> *mut c_void;
    pub fn ipfib_bpf_trie_fd(h: *mut IpfibBpf) -> c_int;
    pub fn ipfib_bpf_run(h: *mut IpfibBpf, retval: *mut u32) -> c_int;
    pub fn ipfib_bpf_lookup(h: *mut IpfibBpf, key: *const c_void, next_hop: *mut u32) -> c_int;
    pub fn ipfib_bpf_probe_open(
        obj: *const c_void,
        obj_len: usize,
        out: *mut *mut IpfibBpfProbe,
        msg: *mut c_char,
        msg_len: usize,
    ) -> c_int;
    pub fn ipfib_bpf_probe_close(p: *mut IpfibBpfProbe);
    pub fn ipfib_bpf_probe_freed(p: *mut IpfibBpfProbe) -> *mut c_void;
}

/// The shim's message buffer as a string.
pub fn message(buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}
