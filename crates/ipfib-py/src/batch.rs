//! Batch lookups: NumPy arrays and sequences of strings in, arrays of next hops out.
//!
//! A list or tuple of strings is parsed in Rust a block at a time into the answer array with
//! the interpreter held (no Python call per address, no whole-array temporary); other
//! sequences and the arrays that need a conversion are turned into per-family integer arrays
//! while the interpreter is held, and only then is it released and the engine run. So no other
//! Python thread can change the input under the engine.
//!
//! Arrays are read in any layout NumPy can describe: a C-contiguous, aligned, native-endian
//! array is read directly; any other (Fortran order, strided or reversed views, stride-0
//! broadcasts, unaligned views, big-endian dtypes) is first copied by NumPy into that form
//! (see `native`). An array of no accepted kind is a TypeError naming its dtype and shape
//! and what to pass instead; other integer dtypes are refused, not converted, since
//! converting would have to guess what out-of-range values mean.

use std::ops::Deref;

use ipfib::LookupError;
use numpy::ndarray::{Dimension, Ix1, Ix2};
use numpy::{
    dtype, Element, PyArray, PyArray1, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyImportError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use crate::arrow::ArrowInput;
use crate::direct::{self, Addrs, Direct, Engines};
use crate::parse::{self, Parsed};
use crate::strs;
use crate::texts::{self, FixedText, Item, TextError, MAX_TEXT};

/// Addresses to look up, per family, with their positions in the caller's input when the
/// families are mixed.
pub enum Input {
    /// IPv4 only, in input order.
    V4(Vec<u32>),
    /// IPv6 only, in input order.
    V6(Vec<u128>),
    /// Both families: each address with its position in the input.
    Mixed {
        len: usize,
        v4: Vec<u32>,
        v4_at: Vec<usize>,
        v6: Vec<u128>,
        v6_at: Vec<usize>,
    },
}

/// `lookup` (of `Table` and `LiveTable`): the answers for `addrs` on `engines`, into `out`
/// when given, on up to `threads` threads. Arrays the engines read in place go straight to
/// them ([`Direct`]); everything else is converted first ([`Input`]).
pub fn lookup<'py>(
    py: Python<'py>,
    addrs: &Bound<'py, PyAny>,
    engines: Engines<'_>,
    miss: u32,
    out: Option<Bound<'py, PyAny>>,
    threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    if let Some(arrow) = ArrowInput::of(addrs)? {
        let out = direct::answers(py, out, arrow.len())?;
        arrow.lookup(
            py,
            engines,
            miss,
            out.try_readwrite()?.as_slice_mut()?,
            threads,
        )?;
        return Ok(out.into_any());
    }
    if let Ok(arr) = addrs.cast::<PyUntypedArray>() {
        if let Some(direct) = Direct::of(arr) {
            return Ok(direct.lookup(py, engines, miss, out, threads)?.into_any());
        }
        if let Some(text) = FixedText::of(arr)? {
            return Ok(text.lookup(py, engines, miss, out, threads)?.into_any());
        }
    }
    if let Ok(list) = addrs.cast::<PyList>() {
        let answers = sequence(
            py,
            list.len(),
            |i| strs::list_item(list, i),
            engines,
            miss,
            out,
        )?;
        return Ok(answers.into_any());
    }
    if let Ok(tuple) = addrs.cast::<PyTuple>() {
        let answers = sequence(
            py,
            tuple.len(),
            |i| tuple.get_borrowed_item(i),
            engines,
            miss,
            out,
        )?;
        return Ok(answers.into_any());
    }
    let input = Input::from_py(addrs)?;
    let answers = py
        .detach(|| input.lookup_raw(engines, miss, threads))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    match out {
        None => Ok(PyArray1::from_vec(py, answers).into_any()),
        Some(o) => {
            let arr = direct::output(o, answers.len())?;
            arr.try_readwrite()?
                .as_slice_mut()?
                .copy_from_slice(&answers);
            Ok(arr.into_any())
        }
    }
}

/// A list or tuple of address strings (`n` items read by `get`), parsed and looked up a block
/// at a time into the answer array, with the interpreter held (it keeps the items alive and
/// unchanged): no whole-array temporary, and no other Python code runs during the call. On an
/// error, `out` may already hold the answers of earlier blocks.
fn sequence<'py, B: Deref<Target = Bound<'py, PyAny>>>(
    py: Python<'py>,
    n: usize,
    get: impl Fn(usize) -> PyResult<B>,
    engines: Engines<'_>,
    miss: u32,
    out: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyArray1<u32>>> {
    let out = direct::answers(py, out, n)?;
    {
        let mut rw = out.try_readwrite()?;
        let answers = rw.as_slice_mut()?;
        let item = |i: usize, _: &mut [u8; MAX_TEXT]| -> Item {
            let obj = match get(i) {
                Ok(obj) => obj,
                Err(e) => return Item::Failed(e),
            };
            match obj.cast::<PyString>() {
                Ok(s) => match strs::text(s) {
                    Ok(s) => Item::parse(s),
                    Err(e) => Item::Failed(e),
                },
                Err(_) => Item::Failed(not_text(i, &obj)),
            }
        };
        texts::part(engines, &item, 0, answers, miss).map_err(|e| match e {
            TextError::Lookup(e) => PyValueError::new_err(e.to_string()),
            TextError::Bad { index, text } => {
                PyValueError::new_err(format!("addrs[{index}]: {text:?} is not an IP address"))
            }
            TextError::Failed(e) => e,
        })?;
    }
    Ok(out)
}

/// The TypeError for item `i`, which is not a string.
fn not_text(i: usize, item: &Bound<'_, PyAny>) -> PyErr {
    PyTypeError::new_err(format!(
        "addrs[{i}] is {}, not an address string",
        item.get_type()
            .name()
            .map_or_else(|_| "?".to_string(), |n| n.to_string())
    ))
}

/// `lookup_arrow`: the answers for `addrs` as a pyarrow uint32 array, null where the input
/// is null (Arrow input), `miss` where no route matches.
pub fn lookup_arrow<'py>(
    py: Python<'py>,
    addrs: &Bound<'py, PyAny>,
    engines: Engines<'_>,
    miss: u32,
    threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let pa = py.import("pyarrow").map_err(|e| {
        PyImportError::new_err(format!("lookup_arrow returns a pyarrow array: {e}"))
    })?;
    let (values, valid) = match ArrowInput::of(addrs)? {
        Some(arrow) => {
            let values = PyArray1::<u32>::zeros(py, arrow.len(), false);
            arrow.lookup(
                py,
                engines,
                miss,
                values.try_readwrite()?.as_slice_mut()?,
                threads,
            )?;
            (values.into_any(), Some(arrow.valid()))
        }
        None => (lookup(py, addrs, engines, miss, None, threads)?, None),
    };
    let kwargs = PyDict::new(py);
    kwargs.set_item("type", pa.call_method0("uint32")?)?;
    if let Some(valid) = valid.filter(|v| v.contains(&false)) {
        let mask: Vec<bool> = valid.iter().map(|v| !v).collect();
        kwargs.set_item("mask", PyArray1::from_vec(py, mask))?;
    }
    pa.call_method("array", (values,), Some(&kwargs))
}

/// `lookup_mask`: (values, found) arrays for `addrs` on `engines`.
pub fn lookup_mask<'py>(
    py: Python<'py>,
    addrs: &Bound<'py, PyAny>,
    engines: Engines<'_>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    if let Some(arrow) = ArrowInput::of(addrs)? {
        // Two runs with different misses: an address with a route answers the same in both
        // (exact for every value, u32::MAX included); nulls are not found.
        let n = arrow.len();
        let (mut a, mut b) = (vec![0u32; n], vec![0u32; n]);
        arrow.lookup(py, engines, 0, &mut a, 1)?;
        arrow.lookup(py, engines, 1, &mut b, 1)?;
        let found: Vec<bool> = a
            .iter()
            .zip(&b)
            .zip(arrow.valid())
            .map(|((x, y), v)| v && x == y)
            .collect();
        let values = a
            .iter()
            .zip(&found)
            .map(|(&x, &f)| if f { x } else { 0 })
            .collect();
        return Ok((
            PyArray1::from_vec(py, values).into_any(),
            PyArray1::from_vec(py, found).into_any(),
        ));
    }
    let input = Input::from_py(addrs)?;
    let (values, found) = py
        .detach(|| input.lookup_mask(engines))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((
        PyArray1::from_vec(py, values).into_any(),
        PyArray1::from_vec(py, found).into_any(),
    ))
}

const KINDS: &str = "a uint32 array (IPv4, host order), an (n, 16) uint8 array (IPv6, \
                     network order), an (n, 2) uint64 array (IPv6, high 64 bits first) or a \
                     sequence of address strings";

impl Input {
    /// Reads any accepted input (see `Table.lookup`).
    pub fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<Input> {
        if let Ok(list) = obj.cast::<PyList>() {
            return strings(list.len(), list.iter().map(Ok));
        }
        if let Ok(tuple) = obj.cast::<PyTuple>() {
            return strings(tuple.len(), tuple.iter().map(Ok));
        }
        if obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyBytes>() {
            return Err(PyTypeError::new_err(
                "addrs: a str or bytes is one address; lookup takes many: for one address \
                 use t[addr] or t.get(addr)",
            ));
        }
        if let Ok(arr) = obj.cast::<PyUntypedArray>() {
            return array(arr);
        }
        // Anything else array-like (a pandas Series, a pyarrow array) goes through NumPy; an
        // iterable NumPy cannot make an array of (a generator) is read item by item.
        let np = obj.py().import("numpy")?;
        if let Ok(a) = np.call_method1("asarray", (obj,)) {
            if let Ok(arr) = a.cast::<PyUntypedArray>() {
                if arr.ndim() >= 1 {
                    return array(arr);
                }
            }
        }
        let items: Vec<Bound<'_, PyAny>> = obj
            .try_iter()
            .map_err(|_| {
                PyTypeError::new_err(format!(
                    "addrs: {} is one value, not many addresses (for one address use t[addr] \
                     or t.get(addr)); lookup takes {KINDS}",
                    obj.get_type()
                        .name()
                        .map_or_else(|_| "?".to_string(), |n| n.to_string())
                ))
            })?
            .collect::<PyResult<_>>()?;
        strings(items.len(), items.into_iter().map(Ok))
    }

    /// Next hops, `miss` where no route matches, each family's lookups on up to `threads`
    /// threads (0: one per core; see [`direct::threads_for`]).
    pub fn lookup_raw(
        &self,
        engines: Engines<'_>,
        miss: u32,
        threads: usize,
    ) -> Result<Vec<u32>, LookupError> {
        let on = |n| direct::threads_for(threads, n);
        self.per_family(
            0,
            |a, out| direct::run(engines, Addrs::V4(a), out, miss, on(a.len())),
            |a, out| direct::run(engines, Addrs::V6(a), out, miss, on(a.len())),
        )
    }

    /// Next hops (0 where none) and whether a route matched.
    pub fn lookup_mask(&self, engines: Engines<'_>) -> Result<(Vec<u32>, Vec<bool>), LookupError> {
        let answers = self.per_family(
            None,
            |a, out| engines.v4_options(a, out),
            |a, out| engines.v6_options(a, out),
        )?;
        Ok((
            answers.iter().map(|a| a.unwrap_or(0)).collect(),
            answers.iter().map(Option::is_some).collect(),
        ))
    }

    /// Runs a batch lookup per family (`v4`, `v6`: fill `out` for the addresses) and returns
    /// the answers in input order, `blank` before they are written.
    fn per_family<T: Copy>(
        &self,
        blank: T,
        v4: impl FnOnce(&[u32], &mut [T]) -> Result<(), LookupError>,
        v6: impl FnOnce(&[u128], &mut [T]) -> Result<(), LookupError>,
    ) -> Result<Vec<T>, LookupError> {
        match self {
            Input::V4(a) => {
                let mut out = vec![blank; a.len()];
                v4(a, &mut out)?;
                Ok(out)
            }
            Input::V6(a) => {
                let mut out = vec![blank; a.len()];
                v6(a, &mut out)?;
                Ok(out)
            }
            Input::Mixed {
                len,
                v4: a4,
                v4_at,
                v6: a6,
                v6_at,
            } => {
                let mut out = vec![blank; *len];
                let mut part = vec![blank; a4.len()];
                v4(a4, &mut part)?;
                scatter(&mut out, v4_at, &part);
                let mut part = vec![blank; a6.len()];
                v6(a6, &mut part)?;
                scatter(&mut out, v6_at, &part);
                Ok(out)
            }
        }
    }
}

/// `out[at[i]] = part[i]`.
fn scatter<T: Copy>(out: &mut [T], at: &[usize], part: &[T]) {
    for (&i, &v) in at.iter().zip(part) {
        if let Some(slot) = out.get_mut(i) {
            *slot = v;
        }
    }
}

/// A NumPy array of one of the accepted kinds, in any layout NumPy can describe.
///
/// The kind is told by shape and dtype kind and size alone, so every byte order and layout of
/// an accepted kind is read (see [`native`]); anything else is refused by [`refusal`].
fn array(arr: &Bound<'_, PyUntypedArray>) -> PyResult<Input> {
    let dt = arr.dtype();
    let shape = arr.shape().to_vec();
    match (shape.as_slice(), dt.kind(), dt.itemsize()) {
        ([_], b'u', 4) => {
            let a = native::<u32, Ix1>(arr)?;
            let a = a.try_readonly()?;
            Ok(Input::V4(a.as_slice()?.to_vec()))
        }
        ([_, 16], b'u', 1) => {
            let a = native::<u8, Ix2>(arr)?;
            let a = a.try_readonly()?;
            let out = a
                .as_slice()?
                .chunks_exact(16)
                .map(|c| {
                    let mut b = [0u8; 16];
                    b.copy_from_slice(c);
                    u128::from_be_bytes(b)
                })
                .collect();
            Ok(Input::V6(out))
        }
        ([_, 2], b'u', 8) => {
            let a = native::<u64, Ix2>(arr)?;
            let a = a.try_readonly()?;
            let out = a
                .as_slice()?
                .chunks_exact(2)
                .map(|w| (u128::from(w[0]) << 64) | u128::from(w[1]))
                .collect();
            Ok(Input::V6(out))
        }
        ([n], b'U' | b'O', _) => strings(*n, arr.try_iter()?),
        // Byte strings as ASCII text (lookup reads them in place, see `FixedText`; here for
        // lookup_mask): non-ASCII bytes are NumPy's UnicodeDecodeError, a ValueError.
        ([_], b'S', _) => {
            let text = arr.call_method1("astype", ("U",))?;
            Input::from_py(&text)
        }
        _ => Err(refusal(arr)?),
    }
}

/// `arr` as a C-contiguous, aligned array of `T` in native byte order: `arr` itself when it
/// already is one (the usual case: no copy here), otherwise a copy NumPy makes, which reads
/// any order, strides (negative, zero), alignment and byte order NumPy can describe.
///
/// The caller has checked that `arr` holds `T`-like values (the same kind and size), so the
/// copy only changes the layout and the byte order, never a value.
fn native<'py, T: Element, D: Dimension>(
    arr: &Bound<'py, PyUntypedArray>,
) -> PyResult<Bound<'py, PyArray<T, D>>> {
    let py = arr.py();
    let want = dtype::<T>(py);
    // C order, not just "contiguous": rust-numpy's as_slice also takes a Fortran-ordered array
    // and would hand out its memory column by column.
    if arr.is_c_contiguous() && arr.is_aligned() && arr.dtype().is_equiv_to(&want) {
        return Ok(arr.cast::<PyArray<T, D>>()?.clone());
    }
    let kwargs = PyDict::new(py);
    kwargs.set_item("dtype", want)?;
    kwargs.set_item("order", "C")?;
    kwargs.set_item("copy", true)?;
    let copy = py
        .import("numpy")?
        .call_method("array", (arr,), Some(&kwargs))?;
    Ok(copy.cast_into::<PyArray<T, D>>()?)
}

/// The TypeError for an array of no accepted kind: what it is and what to pass instead.
fn refusal(arr: &Bound<'_, PyUntypedArray>) -> PyResult<PyErr> {
    let dt = arr.dtype();
    let name = dt.str()?.to_string();
    let shape = arr.shape();
    let (kind, size) = (dt.kind(), dt.itemsize());
    let int = matches!(kind, b'i' | b'u');
    let shown = match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let msg = match shape {
        [] => format!(
            "a 0-d {name} array is one value, not an array of addresses: pass a.reshape(1), \
             or look one address up with t[addr]"
        ),
        [_] if dt.has_fields() => {
            format!("a 1-d array of records ({name}): pass one field (a['name']) holding {KINDS}")
        }
        [_] if kind == b'u' && size == 1 => format!(
            "a 1-d uint8 array of shape {shown}: IPv6 addresses packed 16 bytes each are an \
             (n, 16) uint8 array: pass a.reshape(-1, 16); IPv4 addresses are uint32: pass \
             a.astype(np.uint32)"
        ),
        [_] if int => format!(
            "a 1-d {name} array: IPv4 addresses are a uint32 array (host order): pass \
             a.astype(np.uint32) once every value is known to be 0 to 4294967295"
        ),
        [_] if matches!(kind, b'S' | b'V') => format!(
            "a 1-d {name} array of byte strings: decode text addresses to str \
             (a.astype(str)); pass packed IPv6 addresses as an (n, 16) uint8 array \
             (a.view(np.uint8).reshape(-1, 16) when the items are 16 bytes)"
        ),
        [_, 16] if int => format!(
            "an (n, 16) {name} array: IPv6 addresses as bytes are an (n, 16) uint8 array \
             (network order): pass a.astype(np.uint8)"
        ),
        [_, 2] if int => format!(
            "an (n, 2) {name} array: IPv6 addresses as halves are an (n, 2) uint64 array \
             (high 64 bits first): pass a.astype(np.uint64)"
        ),
        [_, 1] if int => format!(
            "a {name} array of shape {shown}: IPv4 addresses are a 1-d uint32 array: pass \
             a.ravel() (a.ravel().astype(np.uint32) for another dtype)"
        ),
        _ => format!("a {name} array of shape {shown}: lookup takes {KINDS}"),
    };
    Ok(PyTypeError::new_err(format!("addrs: {msg}")))
}

/// Parses a sequence of address strings (both families) into per-family arrays.
fn strings<'py>(
    n: usize,
    items: impl Iterator<Item = PyResult<Bound<'py, PyAny>>>,
) -> PyResult<Input> {
    let mut v4 = Vec::with_capacity(n);
    let mut v4_at = Vec::with_capacity(n);
    let mut v6 = Vec::new();
    let mut v6_at = Vec::new();
    let mut len = 0;
    for (i, item) in items.enumerate() {
        let item = item?;
        let s = item.cast::<PyString>().map_err(|_| not_text(i, &item))?;
        let s = s.to_str()?;
        match parse::address_int(s) {
            Some(Parsed::V4(a)) => {
                v4.push(a);
                v4_at.push(i);
            }
            Some(Parsed::V6(a)) => {
                v6.push(a);
                v6_at.push(i);
            }
            None => {
                return Err(PyValueError::new_err(format!(
                    "addrs[{i}]: {s:?} is not an IP address"
                )))
            }
        }
        len = i + 1;
    }
    Ok(if v6.is_empty() {
        Input::V4(v4)
    } else if v4.is_empty() {
        Input::V6(v6)
    } else {
        Input::Mixed {
            len,
            v4,
            v4_at,
            v6,
            v6_at,
        }
    })
}
