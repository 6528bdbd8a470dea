//! Batch lookups of NumPy fixed-width string arrays (`U`: UCS-4 text, `S`: bytes), parsed in
//! Rust block by block with the interpreter released: each block of [`BLOCK`] strings is
//! parsed into per-family address buffers, looked up, and the answers put in place, so no
//! whole-array temporary is made and no Python object is touched per address. Big batches may
//! be split over threads like numeric ones.
//!
//! Items are read as NumPy reads them: trailing NULs are padding. Text that is not an address
//! (anything `IpAddr::from_str` refuses, non-ASCII included) is a ValueError naming the first
//! such item.

use numpy::PyUntypedArrayMethods;
use numpy::{PyArray1, PyArrayDescrMethods, PyArrayMethods, PyReadonlyArray1, PyUntypedArray};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::direct::{self, Engines, BLOCK};
use crate::parse::{self, Parsed};
use ipfib::{LookupError, NextHop};

/// The longest address text accepted (an IPv6 address with an embedded IPv4 one is 45
/// characters; a zone or other decoration is not an address here).
pub const MAX_TEXT: usize = 64;

/// How an item's bytes encode its characters.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Unit {
    /// NumPy `U`: 4 bytes per character, native byte order.
    Ucs4,
    /// NumPy `S`: one byte per character.
    Byte,
}

/// A 1-d `U` or `S` array, as its bytes (C-contiguous, native order).
pub struct FixedText<'py> {
    bytes: PyReadonlyArray1<'py, u8>,
    width: usize,
    unit: Unit,
    n: usize,
}

/// Why a text batch failed.
pub enum TextError {
    /// The engines refused the batch (never for equal lengths).
    Lookup(LookupError),
    /// Item `index` is not an address.
    Bad {
        /// Its position in the input.
        index: usize,
        /// Its text.
        text: String,
    },
    /// An item could not be read as text.
    Failed(PyErr),
}

/// One item of a text batch.
pub enum Item {
    /// An address.
    Addr(Parsed),
    /// No address (an Arrow null): answered with `miss`.
    Null,
    /// Text that is not an address.
    Bad(String),
    /// The item could not be read as text (an object that is not a string).
    Failed(PyErr),
}

impl Item {
    /// The item for `s`.
    #[inline]
    pub fn parse(s: &str) -> Item {
        match parse::address_int(s) {
            Some(p) => Item::Addr(p),
            None => Item::Bad(s.to_string()),
        }
    }
}

impl<'py> FixedText<'py> {
    /// `arr` as fixed-width text, when it is a 1-d `U` or `S` array (copied by NumPy into C
    /// order and native byte order first when it is not already).
    pub fn of(arr: &Bound<'py, PyUntypedArray>) -> PyResult<Option<FixedText<'py>>> {
        let dt = arr.dtype();
        let unit = match (arr.ndim(), dt.kind()) {
            (1, b'U') => Unit::Ucs4,
            (1, b'S') => Unit::Byte,
            _ => return Ok(None),
        };
        let width = dt.itemsize();
        let n = arr.len();
        let np = arr.py().import("numpy")?;
        // Native order and C-contiguous (no copy when it already is), then viewed as bytes.
        let native = dt.call_method1("newbyteorder", ("=",))?;
        let c = np.call_method1("ascontiguousarray", (arr, native))?;
        let bytes = c
            .call_method1("view", (np.getattr("uint8")?,))?
            .call_method1("reshape", (-1,))?;
        let bytes = bytes.cast_into::<PyArray1<u8>>()?.try_readonly()?;
        Ok(Some(FixedText {
            bytes,
            width,
            unit,
            n,
        }))
    }

    /// Looks every address up (as [`direct::Direct::lookup`]). On a ValueError for a bad
    /// item, `out` may already hold the answers of other blocks.
    pub fn lookup(
        &self,
        py: Python<'py>,
        engines: Engines<'_>,
        miss: NextHop,
        out: Option<Bound<'py, PyAny>>,
        threads: usize,
    ) -> PyResult<Bound<'py, PyArray1<u32>>> {
        let n = self.n;
        let out = direct::answers(py, out, n)?;
        if n == 0 || self.width == 0 {
            if n > 0 {
                return Err(bad(0, "", self.unit));
            }
            return Ok(out);
        }
        {
            let mut rw = out.try_readwrite()?;
            let answers = rw.as_slice_mut()?;
            let bytes = self.bytes.as_slice()?;
            let (width, unit) = (self.width, self.unit);
            let item = move |i: usize, buf: &mut [u8; MAX_TEXT]| -> Item {
                let raw = &bytes[i * width..(i + 1) * width];
                match text(raw, unit, buf).and_then(parse::address_bytes) {
                    Some(p) => Item::Addr(p),
                    None => Item::Bad(lossy(raw, unit)),
                }
            };
            let threads = direct::threads_for(threads, n);
            py.detach(|| parse_lookup(engines, &item, answers, miss, threads))
                .map_err(|e| match e {
                    TextError::Lookup(e) => PyValueError::new_err(e.to_string()),
                    TextError::Bad { index, text } => bad(index, &text, unit),
                    TextError::Failed(e) => e,
                })?;
        }
        Ok(out)
    }
}

/// The ValueError for item `index`.
fn bad(index: usize, text: &str, unit: Unit) -> PyErr {
    let hint = if unit == Unit::Byte {
        " (an S array is read as address text; packed IPv6 addresses are an (n, 16) uint8 \
         array: a.view(np.uint8).reshape(-1, 16))"
    } else {
        ""
    };
    PyValueError::new_err(format!(
        "addrs[{index}]: {text:?} is not an IP address{hint}"
    ))
}

/// The lookups of `out.len()` items read by `item` (item `i`, with a scratch buffer for
/// decoding), split into `threads` contiguous parts; the error of the lowest-numbered bad
/// item. Generic over the reader, so that each input kind's is inlined into the parse loop
/// (through a `dyn` call per item, Arrow strings ran at the rate of a list of `str`).
pub fn parse_lookup<F>(
    engines: Engines<'_>,
    item: &F,
    out: &mut [NextHop],
    miss: NextHop,
    threads: usize,
) -> Result<(), TextError>
where
    F: Fn(usize, &mut [u8; MAX_TEXT]) -> Item + Sync,
{
    let n = out.len();
    if threads <= 1 {
        return part(engines, item, 0, out, miss);
    }
    let per = n.div_ceil(threads).next_multiple_of(BLOCK);
    let results: Vec<Result<(), TextError>> = std::thread::scope(|s| {
        let handles: Vec<_> = out
            .chunks_mut(per)
            .enumerate()
            .map(|(i, o)| s.spawn(move || part(engines, item, i * per, o, miss)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    // Parts are in input order, so the first error is the lowest index.
    results.into_iter().collect()
}

/// One thread's items, `first` to `first + out.len()`: parsed a block at a time into
/// per-family buffers, looked up, answers put in place (nulls get `miss`).
pub fn part<F>(
    engines: Engines<'_>,
    item: &F,
    first: usize,
    out: &mut [NextHop],
    miss: NextHop,
) -> Result<(), TextError>
where
    F: Fn(usize, &mut [u8; MAX_TEXT]) -> Item + ?Sized,
{
    let mut v4: Vec<u32> = Vec::with_capacity(BLOCK);
    let mut v6: Vec<u128> = Vec::with_capacity(BLOCK);
    let mut at4: Vec<usize> = Vec::with_capacity(BLOCK);
    let mut at6: Vec<usize> = Vec::with_capacity(BLOCK);
    let mut r4 = vec![0; BLOCK];
    let mut r6 = vec![0; BLOCK];
    let mut text = [0u8; MAX_TEXT];
    for (b, o) in out.chunks_mut(BLOCK).enumerate() {
        v4.clear();
        v6.clear();
        at4.clear();
        at6.clear();
        let base = first + b * BLOCK;
        for (k, slot) in o.iter_mut().enumerate() {
            match item(base + k, &mut text) {
                Item::Addr(Parsed::V4(a)) => {
                    v4.push(a);
                    at4.push(k);
                }
                Item::Addr(Parsed::V6(a)) => {
                    v6.push(a);
                    at6.push(k);
                }
                Item::Null => *slot = miss,
                Item::Bad(text) => {
                    return Err(TextError::Bad {
                        index: base + k,
                        text,
                    })
                }
                Item::Failed(e) => return Err(TextError::Failed(e)),
            }
        }
        let (r4, r6) = (&mut r4[..v4.len()], &mut r6[..v6.len()]);
        engines
            .v4_raw(&v4, r4, miss)
            .and_then(|()| engines.v6_raw(&v6, r6, miss))
            .map_err(TextError::Lookup)?;
        for (&k, &hop) in at4.iter().zip(r4.iter()) {
            o[k] = hop;
        }
        for (&k, &hop) in at6.iter().zip(r6.iter()) {
            o[k] = hop;
        }
    }
    Ok(())
}

/// An item's text (trailing NULs dropped): a byte item read in place, a UCS-4 item narrowed
/// into `buf`; `None` when it is longer than any address or (UCS-4) holds a non-ASCII
/// character. A byte item is not copied: the parser reads bytes, never needing them to stay
/// valid UTF-8, so an array changed by another thread during the call only gives a mix of
/// answers (as [`direct`] says of every array read in place); and a copy costs the parser a
/// stalled load (its 16-byte reads straddle the copy's stores): S arrays of IPv6 text ran at
/// 21 M/s with it (AMD EPYC Zen 4).
fn text<'b>(item: &'b [u8], unit: Unit, buf: &'b mut [u8; MAX_TEXT]) -> Option<&'b [u8]> {
    match unit {
        Unit::Byte => {
            let end = item.iter().rposition(|&c| c != 0).map_or(0, |i| i + 1);
            item.get(..end).filter(|t| t.len() <= MAX_TEXT)
        }
        Unit::Ucs4 => {
            let chars = item.as_chunks::<4>().0;
            let len = chars
                .iter()
                .position(|c| *c == [0; 4])
                .unwrap_or(chars.len());
            let text = buf.get_mut(..len)?;
            // Narrowed without a branch a character (the loop vectorises); any character
            // above 0x7F shows in `wide`.
            let mut wide = 0u32;
            for (b, c) in text.iter_mut().zip(chars) {
                let c = u32::from_ne_bytes(*c);
                wide |= c;
                *b = c as u8;
            }
            (wide <= 0x7F).then_some(text)
        }
    }
}

/// An item's text for an error message (what NumPy would show, trailing NULs dropped).
fn lossy(item: &[u8], unit: Unit) -> String {
    let s: String = match unit {
        Unit::Byte => String::from_utf8_lossy(item).into_owned(),
        Unit::Ucs4 => item
            .chunks_exact(4)
            .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
            .take_while(|&c| c != 0)
            .map(|c| char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect(),
    };
    s.trim_end_matches('\0').to_string()
}
