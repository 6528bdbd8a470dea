//! Batch lookups: NumPy arrays and sequences of strings in, arrays of next hops out.
//!
//! Every input is turned into per-family integer arrays while the interpreter is held (a copy
//! or conversion at memory speed, and for strings the parse, done in Rust with no Python call
//! per address); only then is the interpreter released and the engine run. So no other
//! Python thread can change the input under the engine, and the output is a fresh array the
//! caller owns.

use ipfib::{Fib, LookupError};
use numpy::{
    dtype, PyArray1, PyArray2, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

use crate::parse::{self, Parsed};

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
                "lookup takes many addresses; for one address use t[addr] or t.get(addr)",
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
            .map_err(|_| PyTypeError::new_err(format!("lookup takes {KINDS}")))?
            .collect::<PyResult<_>>()?;
        strings(items.len(), items.into_iter().map(Ok))
    }

    /// Next hops, `miss` where no route matches.
    pub fn lookup_raw(&self, fib: &Fib, miss: u32) -> Result<Vec<u32>, LookupError> {
        self.per_family(
            0,
            |a, out| fib.lookup_v4_batch(a, out, miss),
            |a, out| fib.lookup_v6_batch(a, out, miss),
        )
    }

    /// Next hops (0 where none) and whether a route matched.
    pub fn lookup_mask(&self, fib: &Fib) -> Result<(Vec<u32>, Vec<bool>), LookupError> {
        let answers = self.per_family(
            None,
            |a, out| fib.v4().lookup_batch(a, out),
            |a, out| fib.v6().lookup_batch(a, out),
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

/// A NumPy array of one of the accepted kinds.
fn array(arr: &Bound<'_, PyUntypedArray>) -> PyResult<Input> {
    let py = arr.py();
    // A view whose elements are not aligned for their type (a field of a packed structured
    // array, say) cannot be read as typed elements: read the aligned copy NumPy makes.
    let copy;
    let arr = if !arr.is_aligned() && matches!(arr.dtype().kind(), b'u' | b'i' | b'f') {
        copy = py
            .import("numpy")?
            .call_method1("ascontiguousarray", (arr,))?
            .cast_into::<PyUntypedArray>()?;
        if !copy.is_aligned() {
            return Err(PyTypeError::new_err(
                "cannot make an aligned copy of the array",
            ));
        }
        &copy
    } else {
        arr
    };
    let dt = arr.dtype();
    let shape = arr.shape().to_vec();
    if shape.len() == 1 && dt.is_equiv_to(&dtype::<u32>(py)) {
        let a = arr.cast::<PyArray1<u32>>()?.readonly();
        return Ok(Input::V4(match a.as_slice() {
            Ok(s) => s.to_vec(),
            Err(_) => a.as_array().iter().copied().collect(),
        }));
    }
    if shape.len() == 2 && shape[1] == 16 && dt.is_equiv_to(&dtype::<u8>(py)) {
        let a = arr.cast::<PyArray2<u8>>()?.readonly();
        if let Ok(bytes) = a.as_slice() {
            let out = bytes
                .chunks_exact(16)
                .map(|c| {
                    let mut b = [0u8; 16];
                    b.copy_from_slice(c);
                    u128::from_be_bytes(b)
                })
                .collect();
            return Ok(Input::V6(out));
        }
        let v = a.as_array();
        let out = v
            .rows()
            .into_iter()
            .map(|row| {
                let mut b = [0u8; 16];
                for (d, s) in b.iter_mut().zip(row.iter()) {
                    *d = *s;
                }
                u128::from_be_bytes(b)
            })
            .collect();
        return Ok(Input::V6(out));
    }
    if shape.len() == 2 && shape[1] == 2 && dt.is_equiv_to(&dtype::<u64>(py)) {
        let a = arr.cast::<PyArray2<u64>>()?.readonly();
        let v = a.as_array();
        let out = v
            .rows()
            .into_iter()
            .map(|row| (u128::from(row[0]) << 64) | u128::from(row[1]))
            .collect();
        return Ok(Input::V6(out));
    }
    let kind = dt.kind();
    if shape.len() == 1 && matches!(kind, b'U' | b'O') {
        let n = shape[0];
        return strings(n, arr.try_iter()?);
    }
    Err(PyTypeError::new_err(format!(
        "lookup takes {KINDS}; got an array of dtype {} and shape {:?}{}",
        dt.str()?,
        shape,
        hint(kind, &shape)
    )))
}

/// A pointer to the right input kind for common near misses.
fn hint(kind: u8, shape: &[usize]) -> &'static str {
    match (kind, shape.len()) {
        (b'i' | b'u', 1) => " (IPv4 addresses: convert with .astype(numpy.uint32))",
        (b'S', _) => " (byte strings: decode them to str, or pass packed IPv6 as (n, 16) uint8)",
        _ => "",
    }
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
        let s = item.cast::<PyString>().map_err(|_| {
            PyTypeError::new_err(format!(
                "addrs[{i}] is {}, not an address string",
                item.get_type()
                    .name()
                    .map_or_else(|_| "?".to_string(), |n| n.to_string())
            ))
        })?;
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
