//! FIB text format (to be written).

use std::path::Path;

use crate::error::LoadError;
use crate::table::Fib;

/// Reads a FIB text file.
pub fn read_fib(path: &Path) -> Result<Fib, LoadError> {
    Err(LoadError::Line {
        path: path.to_path_buf(),
        line: 0,
        reason: "not implemented yet".into(),
    })
}
