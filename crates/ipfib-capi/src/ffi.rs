//! The rules every C entry point keeps, in one place: panics caught, errors as a return value
//! plus a message in the caller's buffer, and arguments read from C pointers.

use std::ffi::{c_char, CStr, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use ipfib::Prefix;
use ipnet::IpNet;

/// Writes `msg` into `err` (NUL-terminated, truncated to at most `errlen - 1` bytes, at a
/// character boundary so the result stays UTF-8).
///
/// # Safety
/// `err` is NULL or points to `errlen` writable bytes.
pub(crate) unsafe fn write_err(err: *mut c_char, errlen: usize, msg: &str) {
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

/// Runs `body` with panics caught: its value, or `failed` after the message (a panic's too,
/// which no known input causes) is written into `err`.
///
/// # Safety
/// `err` is NULL or points to `errlen` writable bytes.
pub(crate) unsafe fn call<T>(
    err: *mut c_char,
    errlen: usize,
    failed: T,
    body: impl FnOnce() -> Result<T, String>,
) -> T {
    let result = catch_unwind(AssertUnwindSafe(body))
        .unwrap_or_else(|_| Err("internal error: a panic inside ipfib (a bug)".into()));
    match result {
        Ok(value) => value,
        Err(msg) => {
            // SAFETY: the caller's contract for `err`.
            unsafe { write_err(err, errlen, &msg) };
            failed
        }
    }
}

/// Frees what `Box::into_raw` made (NULL ok); a panic while dropping (none is known: no part
/// of any object panics in `Drop`) stays on this side.
///
/// # Safety
/// `ptr` is NULL or came from `Box::into_raw`, is freed once, and no other thread uses it.
pub(crate) unsafe fn free<T>(ptr: *mut T) {
    if !ptr.is_null() {
        // SAFETY: the caller's contract.
        let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(ptr) })));
    }
}

/// An error and its causes as one line: the message C callers get.
pub(crate) fn text(e: &(dyn std::error::Error + 'static)) -> String {
    ipfib::error::one_line(e)
}

/// A C string argument (`None` for NULL).
///
/// # Safety
/// `s` is NULL or a NUL-terminated string that outlives `'a`.
pub(crate) unsafe fn str_arg<'a>(s: *const c_char) -> Option<&'a CStr> {
    // SAFETY: the caller's contract: non-NULL means a NUL-terminated string.
    (!s.is_null()).then(|| unsafe { CStr::from_ptr(s) })
}

/// A path argument; NULL is an error.
///
/// # Safety
/// As for [`str_arg`].
pub(crate) unsafe fn path_arg<'a>(path: *const c_char) -> Result<&'a Path, String> {
    // SAFETY: the caller's contract, passed on.
    let path = unsafe { str_arg(path) }.ok_or("the path is NULL")?;
    Ok(Path::new(OsStr::from_bytes(path.to_bytes())))
}

/// An engine name argument: NULL is `default`, otherwise a registered engine's name (ASCII
/// case ignored).
///
/// # Safety
/// As for [`str_arg`].
pub(crate) unsafe fn engine_arg(
    engine: *const c_char,
    default: &'static str,
) -> Result<&'static str, String> {
    // SAFETY: the caller's contract, passed on.
    let Some(name) = (unsafe { str_arg(engine) }) else {
        return Ok(default);
    };
    let name = name
        .to_str()
        .map_err(|_| "the engine name is not UTF-8".to_string())?;
    ipfib::engine::by_name(name)
        .map(|info| info.name())
        .map_err(|e| text(&e))
}

/// A prefix in text form (`10.0.0.0/8`, `2001:db8::/32`), as strict as a table file's.
///
/// # Safety
/// As for [`str_arg`].
pub(crate) unsafe fn prefix_arg(prefix: *const c_char) -> Result<IpNet, String> {
    // SAFETY: the caller's contract, passed on.
    let text = unsafe { str_arg(prefix) }.ok_or("the prefix is NULL")?;
    let text = text
        .to_str()
        .map_err(|_| format!("the prefix {text:?} is not UTF-8"))?;
    ipfib_io::text::parse_prefix(text)
}

/// An IPv4 prefix from a host-order address and a length (as DPDK's `rte_fib_add` takes
/// them), checked as the text form is.
pub(crate) fn prefix_v4(addr: u32, depth: u8) -> Result<IpNet, String> {
    Prefix::new(addr, depth)
        .map(|p| IpNet::V4(p.to_net()))
        .map_err(|e| e.to_string())
}

/// An IPv6 prefix from 16 network-order bytes and a length, checked as the text form is.
///
/// # Safety
/// `addr` is NULL (an error) or points to 16 readable bytes.
pub(crate) unsafe fn prefix_v6(addr: *const u8, depth: u8) -> Result<IpNet, String> {
    if addr.is_null() {
        return Err("the address is NULL".into());
    }
    // SAFETY: the caller's contract: a non-NULL `addr` has 16 readable bytes.
    let bytes = unsafe { addr.cast::<[u8; 16]>().read_unaligned() };
    Prefix::new(u128::from_be_bytes(bytes), depth)
        .map(|p| IpNet::V6(p.to_net()))
        .map_err(|e| e.to_string())
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

    /// The binary forms refuse what the text form refuses, with the same words.
    #[test]
    fn binary_prefixes_are_strict() {
        assert_eq!(prefix_v4(0x0a00_0000, 8).unwrap().to_string(), "10.0.0.0/8");
        assert!(prefix_v4(0x0a00_0001, 8).unwrap_err().contains("host bits"));
        assert!(prefix_v4(0, 33).unwrap_err().contains("longer than 32"));
        let addr = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
        // SAFETY: `addr` has 16 bytes.
        unsafe {
            assert_eq!(
                prefix_v6(addr.as_ptr(), 128).unwrap().to_string(),
                "2001:db8::1/128"
            );
            assert!(prefix_v6(addr.as_ptr(), 32)
                .unwrap_err()
                .contains("host bits"));
            assert!(prefix_v6(addr.as_ptr(), 129)
                .unwrap_err()
                .contains("longer than 128"));
            assert!(prefix_v6(std::ptr::null(), 0).is_err());
        }
    }
}
