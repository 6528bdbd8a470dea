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

/// Loads and builds, with the interpreter released. A saved table is opened (mapped, no
/// build) when it was saved with the same engine; its route set is made at once, since a
/// loaded table is expected to answer route-set questions too.
pub fn load(py: Python<'_>, path: &Path, engine: &str, options: &LoadOptions) -> PyResult<State> {
    let engine = engine_name(engine).map_err(errors::build)?;
    py.detach(|| {
        let saved = ipfib_io::is_saved_file(path).map_err(errors::load)?;
        if saved {
            let fib = ipfib_io::open_fib(path, Some(engine), options).map_err(errors::load)?;
            let table = fib.table();
            return Ok(State::built_from(fib, table));
        }
        let table = ipfib_io::load_fib(path, options).map_err(errors::load)?;
        let fib = Fib::build(&table, engine).map_err(|e| {
            PyValueError::new_err(format!("{}: {}", path.display(), errors::describe(&e)))
        })?;
        Ok(State::built_from(fib, table))
    })
}
