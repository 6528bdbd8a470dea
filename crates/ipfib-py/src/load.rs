//! `Table.load`: any file `ipfib --fib` reads, with the MRT options as keyword arguments.

use std::path::Path;

use ipfib::Fib;
use ipfib_io::{LoadOptions, PeerChoice, ValueKind};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyString};

use crate::errors;
use crate::state::{engine_name, State};

/// The load options from `Table.load`'s keywords: `peer` is "best", a peer index (int) or a
/// peer IP (str); `value` is "next-hop", "origin-as" or "peer".
pub fn options(
    peer: Option<&Bound<'_, PyAny>>,
    value: Option<&str>,
    skip_bad_records: bool,
    allow_empty: bool,
) -> PyResult<LoadOptions> {
    let peer =
        match peer {
            None => PeerChoice::Best,
            Some(p) if p.is_instance_of::<PyInt>() && !p.is_instance_of::<PyBool>() => {
                PeerChoice::Index(p.extract::<u16>().map_err(|_| {
                    PyValueError::new_err(format!("peer index {p} is not in 0-65535"))
                })?)
            }
            Some(p) => match p.cast::<PyString>() {
                Ok(s) => s.to_str()?.parse().map_err(PyValueError::new_err)?,
                Err(_) => {
                    return Err(PyValueError::new_err(
                        "peer is \"best\", a peer index (int) or a peer IP address (str)",
                    ))
                }
            },
        };
    let value = match value {
        None => ValueKind::NextHop,
        Some(v) => v.parse().map_err(PyValueError::new_err)?,
    };
    Ok(LoadOptions {
        peer,
        value,
        skip_bad_records,
        allow_empty,
    })
}

/// Loads and builds, with the interpreter released. The file is opened and read once (pipes
/// and FIFOs work); a saved table is used as it is when it was saved with the same engine,
/// read into memory, or mapped when `mmap` is set. Its route set is made at once, since a
/// loaded table is expected to answer route-set questions too.
pub fn load(
    py: Python<'_>,
    path: &Path,
    engine: &str,
    options: &LoadOptions,
    mmap: bool,
) -> PyResult<State> {
    let engine = engine_name(engine).map_err(errors::build)?;
    py.detach(|| {
        let file = if mmap {
            // SAFETY: `Table.load(mmap=True)`'s documented contract (its docstring and the
            // README): the caller keeps the file from being truncated or written into while
            // the table lives.
            unsafe { ipfib_io::read_fib_mapped(path, options) }
        } else {
            ipfib_io::read_fib(path, options)
        }
        .map_err(errors::load)?;
        let table = match file.into_content() {
            ipfib_io::Content::Saved(fib) if fib.engine_name() == engine => {
                let table = fib.table();
                return Ok(State::built_from(fib, table));
            }
            ipfib_io::Content::Saved(fib) => fib.table(),
            ipfib_io::Content::Routes(table, _) => table,
        };
        let fib = Fib::build(&table, engine).map_err(|e| {
            PyValueError::new_err(format!("{}: {}", path.display(), errors::describe(&e)))
        })?;
        Ok(State::built_from(fib, table))
    })
}
