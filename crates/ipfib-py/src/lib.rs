//! # ipfib-py — ipfib for Python
//!
//! The extension module `ipfib._ipfib` behind the Python package `ipfib` (built with maturin:
//! see `pyproject.toml`). It offers `table::PyTable` (`ipfib.Table`), a longest-prefix-match
//! mapping familiar to pytricia users, whose batch lookups take NumPy arrays or sequences of
//! strings and run the engine with the interpreter released, and which pickles as flat arrays
//! (the saved-table format). Modules: `keys` (Python keys as addresses and prefixes), `parse`
//! (fast address text), `state` (the route set and the lazily rebuilt engine), `batch`
//! (array inputs and outputs), `pickle`, `load` (files), `errors` (Rust errors as Python
//! exceptions).
//!
//! Nothing here panics on user input, and PyO3 turns any panic into a Python exception
//! rather than aborting the interpreter.

mod arrow;
mod batch;
mod direct;
mod errors;
mod keys;
mod live;
mod load;
mod parse;
mod pickle;
mod state;
mod strs;
mod table;
mod texts;

use pyo3::prelude::*;

/// The registered engine names, the default ("planb") first; with `family` (4 or 6) only the
/// engines that hold routes of that family (DXR and its presets are IPv4 only).
#[pyfunction]
#[pyo3(signature = (family = None))]
fn engines(family: Option<u8>) -> PyResult<Vec<&'static str>> {
    if family.is_some_and(|f| f != 4 && f != 6) {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "family must be 4 or 6, not {}",
            family.unwrap_or_default()
        )));
    }
    let options = ipfib::BuildOptions::default();
    let mut names = Vec::new();
    for e in ipfib::engine::engines() {
        let holds = match family {
            Some(4) => e.supports::<u32>(&options),
            Some(_) => e.supports::<u128>(&options),
            None => Ok(true),
        };
        if holds.map_err(errors::build)? {
            names.push(e.name());
        }
    }
    Ok(names)
}

/// ipfib: exact, fast longest-prefix match for IPv4 and IPv6 (the Rust extension module).
#[pymodule]
fn _ipfib(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<table::PyTable>()?;
    m.add_class::<live::PyLiveTable>()?;
    m.add_function(wrap_pyfunction!(engines, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
