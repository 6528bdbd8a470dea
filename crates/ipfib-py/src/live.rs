//! `ipfib.LiveTable`: the Python face of [`LiveFib`], a table that changes while other threads
//! look up in it.
//!
//! Changes (`insert`, `remove`, `apply`, `flush`) may come from any thread; a background
//! thread publishes each batch of them as a new version. Every lookup (single or batch) takes
//! the current version once and answers wholly from it, old or new, never a mix, with the
//! interpreter released for batches, so threads look up in parallel while another writes.

use std::net::IpAddr;
use std::time::Duration;

use ipfib::{Fib, LiveFib, LiveOptions, Update};
use ipnet::IpNet;
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::batch;
use crate::direct::Engines;
use crate::errors;
use crate::keys::{self, Key};
use crate::state::{engine_name, State};
use crate::table::{route_value, PyTable};

/// A longest-prefix-match table that changes while it is read: writers from any thread,
/// lookups from many threads at once, each answered from one whole version.
///
/// LiveTable(routes=None, engine="planb", delay_us=100): starts with the routes of `routes`
/// (an ipfib.Table, copied; None: empty). `delay_us` is the longest a change waits to be
/// published together with others (larger values coalesce bursts into fewer builds); flush()
/// publishes at once. Keys as in Table (strings, ipaddress objects, (address, length)).
#[pyclass(frozen, name = "LiveTable", module = "ipfib")]
pub struct PyLiveTable {
    live: LiveFib,
}

fn live_error(e: ipfib::LiveError) -> PyErr {
    PyValueError::new_err(errors::describe(&e))
}

/// A route prefix from a key (an address is its host route; host bits set: ValueError).
fn prefix(obj: &Bound<'_, PyAny>) -> PyResult<IpNet> {
    let key = match obj.cast::<PyString>() {
        Ok(s) => keys::str_key(s.to_str()?)?,
        Err(_) => keys::key(obj, None)?,
    };
    key.prefix()
}

/// An address to look up (a prefix key is refused: a live table answers addresses).
fn address(obj: &Bound<'_, PyAny>) -> PyResult<IpAddr> {
    if let Ok(s) = obj.cast::<PyString>() {
        return match keys::str_key(s.to_str()?)? {
            Key::Addr(a) => Ok(a),
            Key::Net(n) => Err(PyValueError::new_err(format!(
                "{n} is a prefix; a LiveTable looks up addresses"
            ))),
        };
    }
    keys::address(obj, None)
}

#[pymethods]
impl PyLiveTable {
    #[new]
    #[pyo3(signature = (routes = None, engine = "planb", delay_us = 100))]
    fn new(
        py: Python<'_>,
        routes: Option<&Bound<'_, PyTable>>,
        engine: &str,
        delay_us: u64,
    ) -> PyResult<Self> {
        let table = routes
            .map(|t| t.get().lock().routes().clone())
            .unwrap_or_default();
        let engine = engine_name(engine).map_err(errors::build)?;
        let options = LiveOptions::default().with_delay(Duration::from_micros(delay_us));
        let live = py
            .detach(|| LiveFib::with_options(&table, engine, options))
            .map_err(errors::build)?;
        Ok(PyLiveTable { live })
    }

    /// lt.insert(prefix, value): adds the route or replaces its value (visible after the
    /// coalescing delay, or flush()). Waits while the update queue is full.
    fn insert(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let net = prefix(key)?;
        let hop = route_value(value)?;
        py.detach(|| self.live.insert(net, hop))
            .map_err(live_error)?;
        Ok(())
    }

    fn __setitem__(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        self.insert(py, key, value)
    }

    /// lt.remove(prefix): removes the route for exactly this prefix (nothing when there is
    /// none).
    fn remove(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let net = prefix(key)?;
        py.detach(|| self.live.remove(net)).map_err(live_error)?;
        Ok(())
    }

    /// lt.apply(changes): a batch of (prefix, value) pairs, value None for a removal, all or
    /// nothing: a bad item (named by its index) or a family the engine cannot hold refuses the
    /// whole batch and changes nothing. Published as one version.
    fn apply(&self, py: Python<'_>, changes: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut updates = Vec::new();
        for (i, item) in changes.try_iter()?.enumerate() {
            let update = (|| -> PyResult<Update> {
                let (key, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) =
                    item?.extract().map_err(|_| {
                        PyValueError::new_err("expected a (prefix, value or None) pair")
                    })?;
                let net = prefix(&key)?;
                Ok(if value.is_none() {
                    Update::Remove(net)
                } else {
                    Update::Insert(net, route_value(&value)?)
                })
            })()
            .map_err(|e| errors::prefixed(py, e, &format!("changes[{i}]: ")))?;
            updates.push(update);
        }
        py.detach(|| self.live.apply(updates)).map_err(live_error)?;
        Ok(())
    }

    /// lt.flush(): returns once every change made before the call is visible to lookups.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.live.flush()).map_err(live_error)
    }

    /// lt.lookup(addrs, miss=0xFFFFFFFF, *, out=None, threads=1): as Table.lookup, every
    /// answer from the version current when the call began.
    #[pyo3(signature = (addrs, miss = u32::MAX, *, out = None, threads = 1))]
    fn lookup<'py>(
        &self,
        py: Python<'py>,
        addrs: &Bound<'py, PyAny>,
        miss: u32,
        out: Option<Bound<'py, PyAny>>,
        threads: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let snap = self.live.snapshot();
        batch::lookup(py, addrs, Engines::from(&*snap), miss, out, threads)
    }

    /// lt.lookup_arrow(addrs, miss=0xFFFFFFFF, *, threads=1): as Table.lookup_arrow, from one
    /// version.
    #[pyo3(signature = (addrs, miss = u32::MAX, *, threads = 1))]
    fn lookup_arrow<'py>(
        &self,
        py: Python<'py>,
        addrs: &Bound<'py, PyAny>,
        miss: u32,
        threads: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let snap = self.live.snapshot();
        batch::lookup_arrow(py, addrs, Engines::from(&*snap), miss, threads)
    }

    /// lt.lookup_mask(addrs) -> (values, found): as Table.lookup_mask, from one version.
    fn lookup_mask<'py>(
        &self,
        py: Python<'py>,
        addrs: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let snap = self.live.snapshot();
        batch::lookup_mask(py, addrs, Engines::from(&*snap))
    }

    /// lt.get(addr, default=None): the value of the longest route containing the address.
    #[pyo3(signature = (addr, default = None))]
    fn get(
        &self,
        addr: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
    ) -> PyResult<Option<Py<PyAny>>> {
        let py = addr.py();
        Ok(match self.live.lookup(address(addr)?) {
            Some(v) => Some(v.into_pyobject(py)?.into_any().unbind()),
            None => default,
        })
    }

    fn __getitem__(&self, addr: &Bound<'_, PyAny>) -> PyResult<u32> {
        self.live
            .lookup(address(addr)?)
            .ok_or_else(|| PyKeyError::new_err(addr.clone().unbind()))
    }

    fn __contains__(&self, addr: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.live.lookup(address(addr)?).is_some())
    }

    /// The number of the current version (0 at creation, one more per publish that changed
    /// the routes).
    #[getter]
    fn version(&self) -> u64 {
        self.live.snapshot().version()
    }

    /// The engine's registered name.
    #[getter]
    fn engine(&self) -> &'static str {
        self.live.engine_name()
    }

    /// lt.table(): the routes of the current version as a new ipfib.Table (same engine).
    fn table(&self, py: Python<'_>) -> PyTable {
        let table = py.detach(|| self.live.table());
        PyTable::with_state(State::from_table(table, self.live.engine_name()), None)
    }

    /// lt.save(path): writes the current routes in the saved-table format (built with the
    /// live table's engine; one without a saved format, the reference engine, is a
    /// ValueError), written to a temporary file and renamed over `path`.
    fn save(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        let engine = self.live.engine_name();
        let fib = py
            .detach(|| Fib::build(&self.live.table(), engine))
            .map_err(errors::build)?;
        py.detach(|| fib.save(&path)).map_err(|e| match e {
            ipfib::SaveError::Io { path, source } => {
                errors::load(ipfib_io::LoadError::Io { path, source })
            }
            e => PyValueError::new_err(errors::describe(&e)),
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "<ipfib.LiveTable engine={} version={}>",
            self.live.engine_name(),
            self.live.snapshot().version()
        )
    }
}
