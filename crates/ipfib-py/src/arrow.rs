//! Arrow input: arrays and chunked arrays from pyarrow, Polars, DuckDB, nanoarrow, ... through
//! the Arrow PyCapsule interface (`__arrow_c_array__`, `__arrow_c_stream__`), imported by
//! arrow-rs's C data interface without copying the address buffers.
//!
//! Accepted types: `uint32` (IPv4, host order), `fixed_size_binary(16)` (IPv6, network
//! order), `string` / `large_string` / `string_view` (either family, parsed in Rust). Nulls
//! are answered with `miss` in `lookup`, and stay null in `lookup_arrow`.

use std::ffi::CStr;

use arrow_array::cast::AsArray;
use arrow_array::ffi::{from_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::types::UInt32Type;
use arrow_array::{make_array, Array, ArrayRef};
use arrow_schema::DataType;
use ipfib::NextHop;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods, PyTuple};

use crate::direct::{self, Addrs, Engines};
use crate::texts::{self, Item, TextError};

/// An Arrow array or chunked array of addresses, imported (the buffers are the producer's).
pub struct ArrowInput {
    chunks: Vec<ArrayRef>,
    len: usize,
}

const TYPES: &str = "uint32 (IPv4), fixed_size_binary(16) (IPv6) or string";

fn capsule<'py>(obj: Bound<'py, PyAny>, name: &CStr) -> PyResult<Bound<'py, PyCapsule>> {
    obj.cast_into::<PyCapsule>()
        .map_err(|_| PyTypeError::new_err(format!("addrs: expected an Arrow {name:?} capsule")))
        .and_then(|c| {
            if c.is_valid_checked(Some(name)) {
                Ok(c)
            } else {
                Err(PyTypeError::new_err(format!(
                    "addrs: the capsule is not named {name:?}"
                )))
            }
        })
}

fn arrow_error(e: arrow_schema::ArrowError) -> PyErr {
    PyValueError::new_err(format!("addrs: reading the Arrow data: {e}"))
}

impl ArrowInput {
    /// `obj` as Arrow data, when it offers the PyCapsule interface (`None` otherwise).
    pub fn of(obj: &Bound<'_, PyAny>) -> PyResult<Option<ArrowInput>> {
        let chunks = if obj.hasattr("__arrow_c_array__")? {
            let pair = obj
                .call_method0("__arrow_c_array__")?
                .cast_into::<PyTuple>()?;
            let schema = capsule(pair.get_item(0)?, c"arrow_schema")?;
            let array = capsule(pair.get_item(1)?, c"arrow_array")?;
            let schema_ptr = schema.pointer_checked(Some(c"arrow_schema"))?;
            let array_ptr = array.pointer_checked(Some(c"arrow_array"))?;
            // SAFETY: the capsules are named by the Arrow PyCapsule interface, so they hold an
            // ArrowSchema and an ArrowArray. The schema is only borrowed (its capsule releases
            // it); the array is moved out and its capsule's copy marked released, as the
            // interface specifies for a consumer that takes ownership.
            let data = unsafe {
                let schema = &*schema_ptr.as_ptr().cast::<FFI_ArrowSchema>();
                let array = FFI_ArrowArray::from_raw(array_ptr.as_ptr().cast());
                from_ffi(array, schema)
            }
            .map_err(arrow_error)?;
            vec![make_array(data)]
        } else if obj.hasattr("__arrow_c_stream__")? {
            let cap = capsule(
                obj.call_method0("__arrow_c_stream__")?,
                c"arrow_array_stream",
            )?;
            let ptr = cap.pointer_checked(Some(c"arrow_array_stream"))?;
            // SAFETY: a capsule named "arrow_array_stream" holds an ArrowArrayStream; it is
            // moved out (the capsule's copy marked released) and released when dropped.
            let stream = unsafe { FFI_ArrowArrayStream::from_raw(ptr.as_ptr().cast()) };
            read_stream(stream)?
        } else {
            return Ok(None);
        };
        let len = chunks.iter().map(|c| c.len()).sum();
        for c in &chunks {
            check_type(c.data_type())?;
        }
        Ok(Some(ArrowInput { chunks, len }))
    }

    /// The number of addresses (nulls included).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether each address is present (not null), in order.
    pub fn valid(&self) -> Vec<bool> {
        let mut v = Vec::with_capacity(self.len);
        for c in &self.chunks {
            match c.logical_nulls() {
                Some(n) => v.extend(n.iter()),
                None => v.extend(std::iter::repeat_n(true, c.len())),
            }
        }
        v
    }

    /// Looks every address up into `out` (`miss` for nulls and where no route matches), with
    /// the interpreter released, numeric chunks on up to `threads` threads.
    pub fn lookup(
        &self,
        py: Python<'_>,
        engines: Engines<'_>,
        miss: NextHop,
        out: &mut [NextHop],
        threads: usize,
    ) -> PyResult<()> {
        py.detach(|| {
            let mut at = 0;
            for c in &self.chunks {
                let o = &mut out[at..at + c.len()];
                chunk(engines, c, miss, o, threads).map_err(|e| match e {
                    TextError::Bad { index, text } => TextError::Bad {
                        index: at + index,
                        text,
                    },
                    e => e,
                })?;
                at += c.len();
                if let Some(nulls) = c.logical_nulls() {
                    for (slot, present) in o.iter_mut().zip(nulls.iter()) {
                        if !present {
                            *slot = miss;
                        }
                    }
                }
            }
            Ok(())
        })
        .map_err(|e: TextError| match e {
            TextError::Lookup(e) => PyValueError::new_err(e.to_string()),
            TextError::Bad { index, text } => {
                PyValueError::new_err(format!("addrs[{index}]: {text:?} is not an IP address"))
            }
            TextError::Failed(e) => e,
        })
    }
}

/// The Arrow types accepted, or the TypeError naming the one given.
fn check_type(t: &DataType) -> PyResult<()> {
    match t {
        DataType::UInt32
        | DataType::FixedSizeBinary(16)
        | DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View => Ok(()),
        DataType::FixedSizeBinary(w) => Err(PyTypeError::new_err(format!(
            "addrs: an Arrow fixed_size_binary({w}) array: IPv6 addresses are \
             fixed_size_binary(16); IPv4 addresses are uint32"
        ))),
        t => Err(PyTypeError::new_err(format!(
            "addrs: an Arrow {t} array: lookup takes {TYPES}"
        ))),
    }
}

/// Every array of an Arrow stream.
fn read_stream(mut stream: FFI_ArrowArrayStream) -> PyResult<Vec<ArrayRef>> {
    let last_error = |s: &mut FFI_ArrowArrayStream, code: i32| -> PyErr {
        let text = s.get_last_error.and_then(|f| {
            // SAFETY: the stream's own callback, called on the stream, as the interface says;
            // the message it returns (if any) lives until the next call on the stream.
            let p = unsafe { f(s) };
            // SAFETY: a non-NULL message is a NUL-terminated string.
            (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        });
        PyValueError::new_err(format!(
            "addrs: reading the Arrow stream failed (error {code}): {}",
            text.unwrap_or_default()
        ))
    };
    let get_schema = stream
        .get_schema
        .ok_or_else(|| PyValueError::new_err("addrs: the Arrow stream has been released"))?;
    let get_next = stream
        .get_next
        .ok_or_else(|| PyValueError::new_err("addrs: the Arrow stream has been released"))?;
    let mut schema = FFI_ArrowSchema::empty();
    // SAFETY: the stream's callback, writing a schema the caller owns into `schema`.
    let code = unsafe { get_schema(&mut stream, &mut schema) };
    if code != 0 {
        return Err(last_error(&mut stream, code));
    }
    let mut chunks = Vec::new();
    loop {
        let mut array = FFI_ArrowArray::empty();
        // SAFETY: as above, writing the next array into `array` (released: the end).
        let code = unsafe { get_next(&mut stream, &mut array) };
        if code != 0 {
            return Err(last_error(&mut stream, code));
        }
        if array.is_released() {
            break;
        }
        // SAFETY: an array the stream produced, of the stream's schema.
        let data = unsafe { from_ffi(array, &schema) }.map_err(arrow_error)?;
        chunks.push(make_array(data));
    }
    Ok(chunks)
}

/// One chunk's lookups into `out` (null slots get whatever the value buffer says; the caller
/// overwrites them).
fn chunk(
    engines: Engines<'_>,
    c: &ArrayRef,
    miss: NextHop,
    out: &mut [NextHop],
    threads: usize,
) -> Result<(), TextError> {
    let on = direct::threads_for(threads, c.len());
    match c.data_type() {
        DataType::UInt32 => {
            let a = c.as_primitive::<UInt32Type>();
            direct::run(engines, Addrs::V4(a.values()), out, miss, on).map_err(TextError::Lookup)
        }
        DataType::FixedSizeBinary(16) => {
            let a = c.as_fixed_size_binary();
            let (bytes, _) = a.value_data().as_chunks::<16>();
            direct::run(engines, Addrs::V6Bytes(&bytes[..a.len()]), out, miss, on)
                .map_err(TextError::Lookup)
        }
        DataType::Utf8 => strings(engines, c.as_string::<i32>(), miss, out, on),
        DataType::LargeUtf8 => strings(engines, c.as_string::<i64>(), miss, out, on),
        DataType::Utf8View => strings(engines, c.as_string_view(), miss, out, on),
        _ => Ok(()), // refused by check_type before
    }
}

/// A string chunk, parsed in blocks (nulls skipped).
fn strings<'a, A>(
    engines: Engines<'_>,
    a: A,
    miss: NextHop,
    out: &mut [NextHop],
    threads: usize,
) -> Result<(), TextError>
where
    A: arrow_array::ArrayAccessor<Item = &'a str> + Sync + Copy,
{
    let item = move |i: usize, _: &mut [u8; texts::MAX_TEXT]| -> Item {
        if a.is_null(i) {
            Item::Null
        } else {
            Item::parse(a.value(i))
        }
    };
    texts::parse_lookup(engines, &item, out, miss, threads)
}
