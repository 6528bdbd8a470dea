//! Rust errors as Python exceptions with the message the Rust side wrote.

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;

/// An error and its causes as one line (the causes only where the message does not already
/// quote them).
pub use ipfib::error::one_line as describe;

/// An engine that cannot be built, or an unknown engine name: ValueError.
pub fn build(e: ipfib::BuildError) -> PyErr {
    PyValueError::new_err(describe(&e))
}

/// A rejected prefix: ValueError.
pub fn prefix(e: ipfib::PrefixError) -> PyErr {
    PyValueError::new_err(describe(&e))
}

/// A file that cannot be loaded: OSError (with errno and file name, so Python picks the
/// subclass, FileNotFoundError and so on) when it cannot be read, ValueError naming the file
/// and line or byte offset when its content is bad.
pub fn load(e: ipfib_io::LoadError) -> PyErr {
    if let ipfib_io::LoadError::Io { path, source } = &e {
        let filename = path.display().to_string();
        return match source.raw_os_error() {
            Some(errno) => {
                // Python prints the errno itself; drop Rust's " (os error N)" suffix.
                let text = describe(source);
                let text = text
                    .split(" (os error")
                    .next()
                    .unwrap_or_default()
                    .to_string();
                PyOSError::new_err((errno, text, filename))
            }
            None => PyOSError::new_err(format!("{filename}: {}", describe(source))),
        };
    }
    PyValueError::new_err(describe(&e))
}

/// `e` with `prefix` put in front of its message, same exception type.
pub fn prefixed(py: Python<'_>, e: PyErr, prefix: &str) -> PyErr {
    let ty = e.get_type(py);
    let msg = e.value(py).to_string();
    match ty.call1((format!("{prefix}{msg}"),)) {
        Ok(v) => PyErr::from_value(v),
        Err(_) => e,
    }
}
