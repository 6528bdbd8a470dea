//! Reading and writing tables and address lists.
//!
//! [`load_fib`] is the one entry point the CLI uses for `--fib`: it reads the plain text format
//! ([`text`]), transparently decompressed ([`decompress`]).

pub mod decompress;
pub mod text;

use std::path::Path;

use crate::error::LoadError;
use crate::table::Fib;

/// Loads a FIB file of any supported format. Nothing half-built is returned: any error in the
/// file is an error for the whole load.
pub fn load_fib(path: &Path) -> Result<Fib, LoadError> {
    text::read_fib(path)
}
