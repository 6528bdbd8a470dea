//! ipfib for C: build a route set or read one from a file (`ipfib_table`), build it into a
//! table (`ipfib_fib`) or a live table that changes while other threads look up in it
//! (`ipfib_live`, read through one `ipfib_reader` per thread), look addresses up one at a time
//! or in bulk (DPDK's `rte_fib_lookup_bulk` shape), save and open saved tables.
//!
//! The header `include/ipfib.h` is generated from these files by cbindgen. Rules every
//! function keeps (the code for them is in one place, `ffi`):
//! - No function aborts the process or lets a Rust panic cross into C: each body runs under
//!   `catch_unwind`, and a panic becomes an error return (there is none on any known input).
//! - Errors are a return value plus a message in the caller's `err` buffer (`errlen` bytes,
//!   always NUL-terminated, truncated if need be; `err` may be NULL, `errlen` may be 0).
//! - A NULL object, string or array is checked and refused (an error, or -1 from lookups);
//!   other invalid pointers (freed, too short) are undefined behaviour.
//! - Text prefixes are as strict as a table file's: `10.0.0.1/8` (host bits set), a length
//!   over 32 or 128, or text that is not a prefix is an error naming the problem; a refused
//!   change changes nothing.

#![allow(non_camel_case_types)]

mod ffi;
mod fib;
mod live;
mod lookup;
mod reader;
mod replay;
mod table;

use std::ffi::c_char;

pub use fib::*;
pub use live::*;
pub use reader::*;
pub use replay::*;
pub use table::*;

/// The library's version ("MAJOR.MINOR.PATCH"), the same as the IPFIB_VERSION macro of the
/// header it was built with. A static string: do not free it.
#[no_mangle]
pub extern "C" fn ipfib_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}
