//! Address text out of the `str` items of a list or tuple, read in place where CPython allows.
//!
//! PyO3's safe accessors take a new reference to each list item (an increment now, a
//! decrement later) and reach a `str`'s text through `PyUnicode_AsUTF8AndSize`, a call into
//! libpython. On CPython builds with a GIL, list items are borrowed instead, and text stored
//! as compact ASCII (every address Python writes) is read from the object itself: lookups of
//! 2 M IPv6 strings (dfz10) ran 1.09x as fast (median of 15 alternated calls, AMD EPYC Zen 4).
//! Fetching the objects of items 16 ahead into the cache gained nothing there (0.98x): a
//! list's strings made in order lie in order in memory, which the hardware prefetcher follows.

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

/// Item `i` of `list`, borrowed where the interpreter's lock keeps it alive.
#[cfg(not(any(Py_LIMITED_API, Py_GIL_DISABLED, PyPy, GraalPy)))]
#[inline(always)]
pub fn list_item<'a, 'py>(
    list: &'a Bound<'py, PyList>,
    i: usize,
) -> PyResult<Borrowed<'a, 'py, PyAny>> {
    if i >= list.len() {
        return Err(pyo3::exceptions::PyIndexError::new_err("list changed size"));
    }
    // SAFETY: `i` is within the list, and the caller holds the interpreter's lock (`list` is
    // a `Bound`) and runs no Python code while it uses the item, so nothing can remove the
    // item from the list or free it: the borrowed pointer stays valid for `'a`.
    Ok(unsafe { Borrowed::from_ptr(list.py(), pyo3::ffi::PyList_GET_ITEM(list.as_ptr(), i as _)) })
}

/// Item `i` of `list`, a new reference (free-threaded or limited-API builds, PyPy).
#[cfg(any(Py_LIMITED_API, Py_GIL_DISABLED, PyPy, GraalPy))]
#[inline(always)]
pub fn list_item<'py>(list: &Bound<'py, PyList>, i: usize) -> PyResult<Bound<'py, PyAny>> {
    list.get_item(i)
}

/// The text of `s`: its own bytes when stored as compact ASCII, else as UTF-8 from the
/// interpreter (an error for text that is not valid UTF-8, as lone surrogates).
#[inline(always)]
pub fn text<'a>(s: &'a Bound<'_, PyString>) -> PyResult<&'a str> {
    #[cfg(not(any(Py_LIMITED_API, PyPy, GraalPy, Py_3_14)))]
    {
        use pyo3::ffi;
        let p = s.as_ptr();
        // SAFETY: `p` is a `str` object (`s` is a `Bound<PyString>`), alive for `'a`; a
        // compact ASCII one holds its `length` characters as bytes right after its header
        // (`PyUnicode_DATA`), all below 128, so they are valid UTF-8, and a `str` never
        // changes once made.
        unsafe {
            if ffi::PyUnicode_IS_COMPACT_ASCII(p) != 0 {
                let len = ffi::PyUnicode_GET_LENGTH(p) as usize;
                let data = ffi::PyUnicode_DATA(p) as *const u8;
                return Ok(std::str::from_utf8_unchecked(std::slice::from_raw_parts(
                    data, len,
                )));
            }
        }
    }
    s.to_str()
}
