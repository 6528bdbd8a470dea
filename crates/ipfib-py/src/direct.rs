//! Batch lookups of NumPy address arrays read in place: a uint32 array (IPv4), an (n, 16)
//! uint8 array (IPv6 bytes) or an (n, 2) uint64 array (IPv6 halves), C-contiguous, aligned and
//! native-endian, go to the engine without a whole-array conversion. The interpreter is
//! released for the whole lookup; the answers are written straight into the output array (a
//! new one, or the caller's `out=`), and a big batch may be split over threads (lookups only
//! read the engine).
//!
//! IPv6 bytes are read by the engine's bytes path in place; IPv6 halves are converted in
//! blocks of [`BLOCK`] addresses (one small buffer per thread, reused), never as a whole.
//!
//! As with NumPy's own functions that release the interpreter, another Python thread that
//! writes into the input array during the call gets a mix of old and new addresses' answers
//! (each answer is still an answer for the address read).

use ipfib::engine::Lookup;
use ipfib::{Fib, LookupError, NextHop, Snapshot};
use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArray};
use numpy::{PyArrayDescrMethods, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// Addresses converted per step on the IPv6-halves path (64 KiB of `u128`, within L2).
pub const BLOCK: usize = 4096;

/// Addresses NumPy holds in a form the engines read in place.
pub enum Direct<'py> {
    /// IPv4, host order.
    V4(PyReadonlyArray1<'py, u32>),
    /// IPv6, 16 bytes each, network order.
    V6Bytes(PyReadonlyArray2<'py, u8>),
    /// IPv6, two u64 each, high half first.
    V6Halves(PyReadonlyArray2<'py, u64>),
}

/// The two engines a batch runs on: a static table's, or one version of a live table.
#[derive(Clone, Copy)]
pub struct Engines<'a> {
    v4: &'a dyn Lookup<u32>,
    v6: &'a dyn Lookup<u128>,
}

impl<'a> From<&'a Fib> for Engines<'a> {
    fn from(fib: &'a Fib) -> Self {
        Engines {
            v4: fib.v4(),
            v6: fib.v6(),
        }
    }
}

impl<'a> From<&'a Snapshot> for Engines<'a> {
    fn from(snap: &'a Snapshot) -> Self {
        Engines {
            v4: snap.v4(),
            v6: snap.v6(),
        }
    }
}

impl Engines<'_> {
    /// IPv4 next hops, `miss` where none.
    pub fn v4_raw(&self, a: &[u32], out: &mut [NextHop], miss: NextHop) -> Result<(), LookupError> {
        self.v4.lookup_batch_raw(a, out, miss)
    }

    /// IPv6 next hops, `miss` where none.
    pub fn v6_raw(
        &self,
        a: &[u128],
        out: &mut [NextHop],
        miss: NextHop,
    ) -> Result<(), LookupError> {
        self.v6.lookup_batch_raw(a, out, miss)
    }

    /// Next hops or `None`, per family (for `lookup_mask`).
    pub fn v4_options(&self, a: &[u32], out: &mut [Option<NextHop>]) -> Result<(), LookupError> {
        self.v4.lookup_batch(a, out)
    }

    /// [`Engines::v4_options`] for IPv6.
    pub fn v6_options(&self, a: &[u128], out: &mut [Option<NextHop>]) -> Result<(), LookupError> {
        self.v6.lookup_batch(a, out)
    }
}

/// Borrowed addresses, free of the interpreter.
#[derive(Clone, Copy)]
pub enum Addrs<'a> {
    /// IPv4, host order.
    V4(&'a [u32]),
    /// IPv6 as integers.
    V6(&'a [u128]),
    /// IPv6, 16 bytes each, network order.
    V6Bytes(&'a [[u8; 16]]),
    /// IPv6, two u64 each, high half first.
    V6Halves(&'a [[u64; 2]]),
}

impl<'a> Addrs<'a> {
    fn len(&self) -> usize {
        match self {
            Addrs::V4(a) => a.len(),
            Addrs::V6(a) => a.len(),
            Addrs::V6Bytes(a) => a.len(),
            Addrs::V6Halves(a) => a.len(),
        }
    }

    fn slice(&self, from: usize, to: usize) -> Addrs<'a> {
        match *self {
            Addrs::V4(a) => Addrs::V4(&a[from..to]),
            Addrs::V6(a) => Addrs::V6(&a[from..to]),
            Addrs::V6Bytes(a) => Addrs::V6Bytes(&a[from..to]),
            Addrs::V6Halves(a) => Addrs::V6Halves(&a[from..to]),
        }
    }
}

impl<'py> Direct<'py> {
    /// `arr` as an array read in place, when it is one of the three kinds, C-contiguous,
    /// aligned and native-endian (`None` for anything else: the general path copies it).
    pub fn of(arr: &Bound<'py, PyUntypedArray>) -> Option<Direct<'py>> {
        let swapped = arr.dtype().is_native_byteorder() == Some(false);
        if !arr.is_c_contiguous() || !arr.is_aligned() || swapped {
            return None;
        }
        let dt = arr.dtype();
        match (arr.shape(), dt.kind(), dt.itemsize()) {
            ([_], b'u', 4) => arr
                .cast::<PyArray1<u32>>()
                .ok()?
                .try_readonly()
                .ok()
                .map(Direct::V4),
            ([_, 16], b'u', 1) => arr
                .cast::<numpy::PyArray2<u8>>()
                .ok()?
                .try_readonly()
                .ok()
                .map(Direct::V6Bytes),
            ([_, 2], b'u', 8) => arr
                .cast::<numpy::PyArray2<u64>>()
                .ok()?
                .try_readonly()
                .ok()
                .map(Direct::V6Halves),
            _ => None,
        }
    }

    /// The number of addresses.
    pub fn len(&self) -> usize {
        match self {
            Direct::V4(a) => a.len(),
            Direct::V6Bytes(a) => a.shape()[0],
            Direct::V6Halves(a) => a.shape()[0],
        }
    }

    fn addrs(&self) -> PyResult<Addrs<'_>> {
        Ok(match self {
            Direct::V4(a) => Addrs::V4(a.as_slice()?),
            Direct::V6Bytes(a) => Addrs::V6Bytes(a.as_slice()?.as_chunks().0),
            Direct::V6Halves(a) => Addrs::V6Halves(a.as_slice()?.as_chunks().0),
        })
    }

    /// Looks every address up in `engines` (`miss` where no route matches) into `out` (a new
    /// uint32 array when `None`), with the interpreter released, on `threads` threads (0: one
    /// per core). Returns the output array.
    pub fn lookup(
        &self,
        py: Python<'py>,
        engines: Engines<'_>,
        miss: NextHop,
        out: Option<Bound<'py, PyAny>>,
        threads: usize,
    ) -> PyResult<Bound<'py, PyArray1<u32>>> {
        let n = self.len();
        let out = answers(py, out, n)?;
        {
            let mut rw = out.try_readwrite()?;
            let answers = rw.as_slice_mut()?;
            let addrs = self.addrs()?;
            let threads = threads_for(threads, n);
            py.detach(|| run(engines, addrs, answers, miss, threads))
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
        }
        Ok(out)
    }
}

/// The array the answers go into: the caller's `out=` (checked by [`output`]) or a new one of
/// `n` zeros.
pub fn answers<'py>(
    py: Python<'py>,
    out: Option<Bound<'py, PyAny>>,
    n: usize,
) -> PyResult<Bound<'py, PyArray1<u32>>> {
    match out {
        Some(o) => output(o, n),
        None => Ok(PyArray1::<u32>::zeros(py, n, false)),
    }
}

/// The caller's `out=`: a writable, C-contiguous uint32 array of `n` elements.
pub fn output<'py>(o: Bound<'py, PyAny>, n: usize) -> PyResult<Bound<'py, PyArray1<u32>>> {
    let arr = o.cast_into::<PyArray1<u32>>().map_err(|e| {
        PyTypeError::new_err(format!(
            "out: expected a 1-d numpy uint32 array, got {}",
            e.into_inner().get_type()
        ))
    })?;
    if arr.len() != n {
        return Err(PyValueError::new_err(format!(
            "out: {} elements for {n} addresses",
            arr.len()
        )));
    }
    if !arr.is_c_contiguous() {
        return Err(PyValueError::new_err(
            "out: the array must be C-contiguous (a fresh np.empty(n, np.uint32))",
        ));
    }
    Ok(arr)
}

/// Addresses per thread below which another thread costs more than it saves (starting and
/// joining a thread is tens of µs; 256 Ki lookups take about 2.5 ms).
const PER_THREAD: usize = 1 << 18;

/// The threads to use: `asked` (0: one per core), no more than the batch keeps busy.
pub fn threads_for(asked: usize, n: usize) -> usize {
    let asked = if asked == 0 {
        std::thread::available_parallelism().map_or(1, |c| c.get())
    } else {
        asked
    };
    asked.min(n.div_ceil(PER_THREAD)).max(1)
}

/// The lookups (`out` as long as `addrs`), split into `threads` contiguous parts (1: on
/// the calling thread).
pub fn run(
    engines: Engines<'_>,
    addrs: Addrs<'_>,
    out: &mut [NextHop],
    miss: NextHop,
    threads: usize,
) -> Result<(), LookupError> {
    if threads <= 1 {
        return part(engines, addrs, out, miss);
    }
    let n = addrs.len();
    let per = n.div_ceil(threads).next_multiple_of(BLOCK);
    std::thread::scope(|s| {
        let handles: Vec<_> = out
            .chunks_mut(per)
            .enumerate()
            .map(|(i, o)| {
                let from = i * per;
                let a = addrs.slice(from, from + o.len());
                s.spawn(move || part(engines, a, o, miss))
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
    })
}

/// One thread's lookups.
fn part(
    engines: Engines<'_>,
    addrs: Addrs<'_>,
    out: &mut [NextHop],
    miss: NextHop,
) -> Result<(), LookupError> {
    match addrs {
        Addrs::V4(a) => engines.v4_raw(a, out, miss),
        Addrs::V6(a) => engines.v6_raw(a, out, miss),
        Addrs::V6Bytes(a) => engines.v6.lookup_batch_bytes_raw(a, out, miss),
        Addrs::V6Halves(a) => {
            let mut block = vec![0u128; BLOCK.min(a.len())];
            for (a, o) in a.chunks(BLOCK).zip(out.chunks_mut(BLOCK)) {
                let b = &mut block[..a.len()];
                for (x, h) in b.iter_mut().zip(a) {
                    *x = (u128::from(h[0]) << 64) | u128::from(h[1]);
                }
                engines.v6_raw(b, o, miss)?;
            }
            Ok(())
        }
    }
}
