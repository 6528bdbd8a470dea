//! FIB text format (reader to be written).

use std::io::Write;
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

/// Writes a FIB in the text format, IPv4 routes first, each family in (address, length)
/// order: `prefix/len next_hop`, one route per line.
pub fn write_fib<W: Write>(mut out: W, fib: &Fib) -> std::io::Result<()> {
    for (prefix, next_hop) in fib.v4.iter() {
        writeln!(out, "{prefix} {next_hop}")?;
    }
    for (prefix, next_hop) in fib.v6.iter() {
        writeln!(out, "{prefix} {next_hop}")?;
    }
    out.flush()
}
