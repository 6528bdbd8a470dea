//! `ipfib.Table`: the pytricia-familiar mapping over a [`State`].
//!
//! The class is `frozen` with its state behind a mutex, so every method takes `&self` and a
//! batch lookup can release the interpreter while it runs: it takes a reference-counted handle
//! to the built engine and lets go of the lock first, so other threads may change the table
//! meanwhile (their change makes a new engine; the running batch finishes on the old one).
//! The lock is never held while waiting for the interpreter, so the two cannot deadlock.

use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use ipfib::{Fib, Table};
use ipnet::IpNet;
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyType};

use crate::batch;
use crate::direct::Engines;
use crate::errors;
use crate::keys::{self, Key};
use crate::load;
use crate::pickle;
use crate::state::State;

/// A longest-prefix-match table of IPv4 and IPv6 routes, each prefix mapped to an int value
/// (a next hop, an AS number: 0 to 4294967295).
///
/// Keys are strings ("10.0.0.0/8", "2001:db8::1"), ipaddress objects, packed bytes, ints when
/// `int_family` is set, or (address, prefixlen) tuples. Looking up an address or a prefix
/// (`t[k]`, `t.get(k)`, `k in t`, `t.get_key(k)`) finds the longest route containing it;
/// `has_key`, `del` and assignment work on exact prefixes. The two families never match each
/// other. Lookups after any change are always current: the engine is rebuilt when needed.
#[pyclass(frozen, name = "Table", module = "ipfib")]
pub struct PyTable {
    state: Mutex<State>,
    int_family: Mutex<Option<u8>>,
}

impl PyTable {
    pub fn with_state(state: State, int_family: Option<u8>) -> Self {
        PyTable {
            state: Mutex::new(state),
            int_family: Mutex::new(int_family),
        }
    }

    /// The state, locked. A panic while it was held (there is none on any known input) leaves
    /// it usable: every change to it is a single assignment or a whole-table operation.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn family(&self) -> Option<u8> {
        *self.int_family.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn key(&self, obj: &Bound<'_, PyAny>) -> PyResult<Key> {
        if let Ok(s) = obj.cast::<PyString>() {
            return keys::str_key(s.to_str()?);
        }
        keys::key(obj, self.family())
    }

    /// The built engine, building it first (interpreter released) if the routes changed.
    pub fn built(&self, py: Python<'_>) -> PyResult<Arc<Fib>> {
        if let Some(f) = self.lock().fresh() {
            return Ok(f.clone());
        }
        py.detach(|| self.lock().built()).map_err(errors::build)
    }

    /// The longest route containing the key: for an address, its longest match; for a prefix,
    /// the longest route containing the whole prefix.
    fn longest(&self, py: Python<'_>, key: Key) -> PyResult<Option<(IpNet, u32)>> {
        match key {
            Key::Addr(a) => self.longest_addr(py, a, false),
            Key::Net(n) => {
                let n = keys::canonical(n)?;
                Ok(self.lock().routes().supernets(&n).last())
            }
        }
    }

    /// The next hop (and, when `want_prefix`, the route) of an address.
    fn longest_addr(
        &self,
        py: Python<'_>,
        addr: IpAddr,
        want_prefix: bool,
    ) -> PyResult<Option<(IpNet, u32)>> {
        {
            let mut state = self.lock();
            if let Some(fib) = state.fresh() {
                return Ok(answer(fib, addr, want_prefix));
            }
            if !state.slow_lookup_due_for_rebuild() {
                return Ok(state.longest_match(addr));
            }
        }
        let fib = self.built(py)?;
        Ok(answer(&fib, addr, want_prefix))
    }

    fn value(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Option<u32>> {
        let key = self.key(key)?;
        Ok(self.longest(py, key)?.map(|(_, hop)| hop))
    }
}

/// The engine's answer for one address; the route itself only when asked for (it costs a
/// search of the route list), otherwise the address stands in as the prefix.
fn answer(fib: &Fib, addr: IpAddr, want_prefix: bool) -> Option<(IpNet, u32)> {
    if want_prefix {
        fib.lookup_prefix(addr)
    } else {
        fib.lookup(addr).map(|hop| (IpNet::from(addr), hop))
    }
}

/// The value of a route: an int 0 to 4294967295.
pub fn route_value(v: &Bound<'_, PyAny>) -> PyResult<u32> {
    if v.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyValueError::new_err(
            "a route's value is an int 0-4294967295, not a bool",
        ));
    }
    v.extract::<u32>().map_err(|_| {
        PyValueError::new_err(format!(
            "a route's value is an int 0-4294967295, not {}",
            v.repr()
                .map_or_else(|_| "this".to_string(), |r| r.to_string())
        ))
    })
}

#[pymethods]
impl PyTable {
    /// Table(engine="planb", int_family=None)
    ///
    /// An empty table. `engine` is any name from `ipfib.engines()`; `int_family` (4 or 6)
    /// makes int keys addresses of that family (unset, an int key is a TypeError, since an int
    /// does not say its family).
    #[new]
    #[pyo3(signature = (engine = "planb", int_family = None))]
    fn new(engine: &str, int_family: Option<u8>) -> PyResult<Self> {
        let family = keys::int_family(int_family)?;
        let state = State::new(engine).map_err(errors::build)?;
        Ok(PyTable::with_state(state, family))
    }

    /// Table.load(path, engine="planb", *, int_family=None, peer="best", value="next-hop",
    /// skip_bad_records=False, allow_empty=False, mmap=False)
    ///
    /// Reads any file `ipfib --fib` accepts: the text format, MRT RIB dumps (TABLE_DUMP v1 and
    /// v2), gzip or bzip2 (recognised by content), or a saved table. The file is opened and
    /// read once, so pipes and FIFOs work. The MRT options choose the path per prefix (`peer`:
    /// "best", a peer index or a peer IP) and the number stored (`value`: "next-hop",
    /// "origin-as" or "peer"). The engine is built before it returns. A saved table is read
    /// into memory; `mmap=True` maps it instead (no copy), and then the file must not be
    /// truncated or written into while the table lives (a lookup would crash the interpreter
    /// with SIGBUS or read changed bytes unchecked; replacing it by rename, as `save` does, is
    /// safe). Errors name the file and the line (text) or byte offset (MRT): OSError when the
    /// file cannot be read, ValueError when its content is bad.
    #[classmethod]
    #[pyo3(signature = (path, engine = "planb", *, int_family = None, peer = None, value = None, skip_bad_records = false, allow_empty = false, mmap = false))]
    #[allow(clippy::too_many_arguments)]
    fn load(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        path: std::path::PathBuf,
        engine: &str,
        int_family: Option<u8>,
        peer: Option<&Bound<'_, PyAny>>,
        value: Option<&str>,
        skip_bad_records: bool,
        allow_empty: bool,
        mmap: bool,
    ) -> PyResult<Self> {
        let family = keys::int_family(int_family)?;
        let options = load::options(peer, value, skip_bad_records, allow_empty)?;
        let state = load::load(py, &path, engine, &options, mmap)?;
        Ok(PyTable::with_state(state, family))
    }

    /// Table.from_pairs(pairs, engine="planb", int_family=None)
    ///
    /// A table from an iterable of (key, value) pairs; a later pair for the same prefix
    /// replaces an earlier one. A bad pair is an error naming its position.
    #[classmethod]
    #[pyo3(signature = (pairs, engine = "planb", int_family = None))]
    fn from_pairs(
        _cls: &Bound<'_, PyType>,
        pairs: &Bound<'_, PyAny>,
        engine: &str,
        int_family: Option<u8>,
    ) -> PyResult<Self> {
        let t = PyTable::new(engine, int_family)?;
        {
            let mut table = Table::new();
            for (i, pair) in pairs.try_iter()?.enumerate() {
                let pair = pair?;
                let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) =
                    pair.extract().map_err(|_| {
                        pyo3::exceptions::PyTypeError::new_err(format!(
                            "pairs[{i}] is not a (key, value) pair"
                        ))
                    })?;
                let at = |e: PyErr| errors::prefixed(k.py(), e, &format!("pairs[{i}]: "));
                let net = t.key(&k).and_then(Key::prefix).map_err(at)?;
                let hop = route_value(&v).map_err(at)?;
                table.insert(net, hop).map_err(|e| at(errors::prefix(e)))?;
            }
            t.lock().replace_routes(table).map_err(errors::build)?;
        }
        Ok(t)
    }

    /// The engine's name; assign another name from `ipfib.engines()` to switch (the next
    /// lookup builds it). An engine that cannot hold the table's routes (DXR with IPv6 routes)
    /// is a ValueError, and the engine stays as it was.
    #[getter]
    fn engine(&self) -> &'static str {
        self.lock().engine()
    }

    #[setter]
    fn set_engine(&self, name: &str) -> PyResult<()> {
        self.lock().set_engine(name).map_err(errors::build)
    }

    /// The family of int keys: 4, 6 or None (int keys refused).
    #[getter]
    fn int_family(&self) -> Option<u8> {
        self.family()
    }

    #[setter]
    fn set_int_family(&self, family: Option<u8>) -> PyResult<()> {
        let family = keys::int_family(family)?;
        *self.int_family.lock().unwrap_or_else(|e| e.into_inner()) = family;
        Ok(())
    }

    /// t[key] = value: adds the route (an address key is its host route), replacing the value
    /// of the same prefix. A prefix with host bits set, or of a family the engine cannot hold
    /// (DXR: IPv6), is a ValueError.
    fn __setitem__(&self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let net = self.key(key)?.prefix()?;
        let hop = route_value(value)?;
        let mut state = self.lock();
        state.check_family(&net).map_err(errors::build)?;
        state
            .routes_mut()
            .insert(net, hop)
            .map_err(errors::prefix)?;
        Ok(())
    }

    /// t[key]: the value of the longest route containing the address or prefix; KeyError when
    /// there is none.
    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<u32> {
        match self.value(py, key)? {
            Some(v) => Ok(v),
            None => Err(PyKeyError::new_err(key.clone().unbind())),
        }
    }

    /// t.get(key, default=None): like t[key], `default` when no route contains it.
    #[pyo3(signature = (key, default = None))]
    fn get(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        match self.value(py, key)? {
            Some(v) => Ok(v.into_pyobject(py)?.into_any().unbind()),
            None => Ok(default.unwrap_or_else(|| py.None())),
        }
    }

    /// key in t: True when some route contains the address or prefix (longest-prefix match,
    /// as pytricia; `has_key` is the exact test).
    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.value(py, key)?.is_some())
    }

    /// t.get_key(key): the longest route containing the address or prefix, as a string
    /// ("10.0.0.0/8"), or None.
    fn get_key(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        let found = match self.key(key)? {
            Key::Addr(a) => self.longest_addr(py, a, true)?,
            k => self.longest(py, k)?,
        };
        Ok(found.map(|(net, _)| net.to_string()))
    }

    /// del t[prefix]: removes exactly this route; KeyError when it is not in the table.
    fn __delitem__(&self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let net = self.key(key)?.prefix()?;
        let mut state = self.lock();
        if state.routes().get(&net).is_none() {
            return Err(PyKeyError::new_err(net.to_string()));
        }
        state.routes_mut().remove(&net);
        Ok(())
    }

    /// t.has_key(prefix): True when exactly this prefix is a route.
    fn has_key(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let net = self.key(key)?.prefix()?;
        Ok(self.lock().routes().get(&net).is_some())
    }

    /// t.delete(prefix): the same as del t[prefix].
    fn delete(&self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        self.__delitem__(key)
    }

    /// t.insert(prefix, value): the same as t[prefix] = value.
    fn insert(&self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        self.__setitem__(key, value)
    }

    /// t.parent(prefix): the longest route strictly shorter than the prefix that contains it,
    /// as a string, or None. The prefix itself need not be a route.
    fn parent(&self, key: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        let net = self.key(key)?.prefix()?;
        let mut state = self.lock();
        let parent = state
            .routes()
            .supernets(&net)
            .take_while(|(n, _)| n.prefix_len() < net.prefix_len())
            .last();
        Ok(parent.map(|(n, _)| n.to_string()))
    }

    /// t.children(prefix): the routes strictly inside the prefix (longer, contained), as a list
    /// of strings in address order. The prefix itself need not be a route.
    fn children(&self, key: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
        let net = self.key(key)?.prefix()?;
        let mut state = self.lock();
        Ok(state
            .routes()
            .subnets(&net)
            .filter(|(n, _)| *n != net)
            .map(|(n, _)| n.to_string())
            .collect())
    }

    /// len(t): routes of both families.
    fn __len__(&self) -> usize {
        self.lock().len()
    }

    /// Iterates over the prefixes as strings: IPv4 first, each family in address order (a
    /// covering prefix before those that share its start). The iterator walks a snapshot, so
    /// changing the table meanwhile is safe.
    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let list = PyList::new(py, self.keys_vec())?;
        Ok(list.try_iter()?.into_any())
    }

    /// t.keys(): the prefixes as strings, in iteration order.
    fn keys(&self) -> Vec<String> {
        self.keys_vec()
    }

    /// t.values(): the values, in iteration order.
    fn values(&self) -> Vec<u32> {
        self.lock().routes().iter().map(|(_, v)| v).collect()
    }

    /// t.items(): (prefix string, value) pairs, in iteration order.
    fn items(&self) -> Vec<(String, u32)> {
        self.lock()
            .routes()
            .iter()
            .map(|(n, v)| (n.to_string(), v))
            .collect()
    }

    /// t.lookup(addrs, miss=0xFFFFFFFF, *, out=None, threads=1) -> numpy.ndarray[uint32]
    ///
    /// Looks up many addresses in one call, with the interpreter released while the engine
    /// runs. `addrs` is a uint32 array (IPv4, host order: int(IPv4Address)), an (n, 16) uint8
    /// array (IPv6, network order: packed), an (n, 2) uint64 array (IPv6, high 64 bits
    /// first), or any sequence of strings (both families mixed, parsed in Rust). A
    /// C-contiguous, aligned, native-endian array of these kinds is read in place, with no
    /// whole-array temporary (IPv6 bytes by the engines' bytes path); arrays of any other
    /// layout (Fortran order, strided, reversed, unaligned, big-endian) are copied by NumPy
    /// first; other dtypes and shapes are a TypeError saying what to pass. Addresses with no
    /// route get `miss`; use lookup_mask when every value can be a route's.
    ///
    /// `out`: a C-contiguous uint32 array of len(addrs) to write the answers into (and
    /// return), instead of a new one. `threads`: split a big batch over this many threads
    /// (0: one per core); a thread gets at least 262,144 addresses, so small batches stay on
    /// one.
    #[pyo3(signature = (addrs, miss = u32::MAX, *, out = None, threads = 1))]
    fn lookup<'py>(
        &self,
        py: Python<'py>,
        addrs: &Bound<'py, PyAny>,
        miss: u32,
        out: Option<Bound<'py, PyAny>>,
        threads: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let fib = self.built(py)?;
        batch::lookup(py, addrs, Engines::from(&*fib), miss, out, threads)
    }

    /// t.lookup_arrow(addrs, miss=0xFFFFFFFF, *, threads=1) -> pyarrow.UInt32Array
    ///
    /// Like lookup, returning a pyarrow array: null where the input is null (Arrow arrays and
    /// chunked arrays of uint32, fixed_size_binary(16) or strings, from pyarrow, Polars,
    /// DuckDB or anything offering the Arrow PyCapsule interface, read without copying the
    /// address buffers), `miss` where no route matches. Needs pyarrow.
    #[pyo3(signature = (addrs, miss = u32::MAX, *, threads = 1))]
    fn lookup_arrow<'py>(
        &self,
        py: Python<'py>,
        addrs: &Bound<'py, PyAny>,
        miss: u32,
        threads: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let fib = self.built(py)?;
        batch::lookup_arrow(py, addrs, Engines::from(&*fib), miss, threads)
    }

    /// t.lookup_mask(addrs) -> (values: ndarray[uint32], found: ndarray[bool])
    ///
    /// Like lookup, with the unambiguous answer: `found[i]` is True when a route contains
    /// `addrs[i]`, and `values[i]` is its value (0 where `found[i]` is False).
    fn lookup_mask<'py>(
        &self,
        py: Python<'py>,
        addrs: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let fib = self.built(py)?;
        batch::lookup_mask(py, addrs, Engines::from(&*fib))
    }

    /// t.save(path): writes the built table in the saved-table format (what `ipfib save`
    /// writes), which `Table.load`, every `--fib` and the C library open without a build.
    /// Written to a temporary file and renamed over `path`. Engines without a saved format
    /// (the reference engine) are a ValueError.
    fn save(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        let fib = self.built(py)?;
        py.detach(|| fib.save(&path)).map_err(|e| match e {
            ipfib::SaveError::Io { path, source } => {
                errors::load(ipfib_io::LoadError::Io { path, source })
            }
            e => PyValueError::new_err(errors::describe(&e)),
        })
    }

    /// t.copy(): an independent table with the same routes, engine and int_family (the built
    /// engine is shared until one of them changes).
    fn copy(&self) -> Self {
        let state = self.lock().clone_state();
        PyTable::with_state(state, self.family())
    }

    fn __copy__(&self) -> Self {
        self.copy()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
        self.copy()
    }

    /// Pickles as flat arrays: the saved-table format (engine and route list) for engines
    /// that have one, the route set otherwise. See `ipfib` module docs.
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let bytes = pickle::dump(py, self, self.family())?;
        let unpickle = py.import("ipfib")?.getattr("_unpickle")?;
        Ok((unpickle, (bytes,)))
    }

    /// Table._from_pickle(data): the table `__reduce__` wrote (used by pickle).
    #[staticmethod]
    fn _from_pickle(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let (state, family) = pickle::load(py, data)?;
        Ok(PyTable::with_state(state, family))
    }

    fn __repr__(&self) -> String {
        let state = self.lock();
        format!(
            "<ipfib.Table: {} routes, engine {:?}>",
            state.len(),
            state.engine()
        )
    }
}

impl PyTable {
    fn keys_vec(&self) -> Vec<String> {
        self.lock()
            .routes()
            .iter()
            .map(|(n, _)| n.to_string())
            .collect()
    }
}
