//! MRT RIB dumps (RFC 6396 TABLE_DUMP and TABLE_DUMP_V2) as FIB input.
//!
//! A RIB dump is what route collectors (RIPE RIS, RouteViews) publish: every peer's path for
//! every prefix. [`load`] turns one into a [`Table`] by choosing one path per prefix
//! ([`PeerChoice`]) and one number per path ([`ValueKind`]); [`RibReader`] gives every path, for
//! tools that want more. Record bodies are decoded by bgpkit-parser; framing, offsets and
//! consistency checks are ours (module `frame`), so a truncated or corrupt file is an error naming
//! the byte offset of the bad record in the decompressed stream.
//!
//! Update traces (BGP4MP) are refused as tables: they hold changes to a table, and replaying
//! them without the table they apply to would give a partial table that looks complete. They
//! are read as changes by [`crate::updates`].

#[cfg(feature = "mrt")]
mod envelope;
#[cfg(feature = "mrt")]
mod frame;
mod header;
mod options;
#[cfg(feature = "mrt")]
mod readahead;
#[cfg(feature = "mrt")]
mod routes;
#[cfg(feature = "mrt")]
mod select;
#[cfg(feature = "mrt")]
pub(crate) mod updates;

pub use options::{FileFormat, LoadOptions, LoadReport, PeerChoice, ValueKind};
#[cfg(feature = "mrt")]
pub use routes::{Origin, PathSegment, PeerInfo, RibReader, RibRoute};

pub(crate) use header::{looks_like_mrt, HEADER_LEN};

#[cfg(feature = "mrt")]
use std::io::BufRead;
#[cfg(feature = "mrt")]
use std::path::Path;

#[cfg(feature = "mrt")]
use crate::LoadError;
#[cfg(feature = "mrt")]
use ipfib::Table;

/// Loads an MRT RIB dump (plain, gzip or bzip2; `-` is standard input) as a FIB, choosing
/// paths and values by `options`.
#[cfg(feature = "mrt")]
pub fn load(path: &Path, options: &LoadOptions) -> Result<(Table, LoadReport), LoadError> {
    let reader = RibReader::open(path, options.skip_bad_records)?;
    select::build_fib(reader, options)
}

/// [`load`] from an already decompressed stream; `path` is the name errors use.
#[cfg(feature = "mrt")]
pub fn load_from(
    input: Box<dyn BufRead + Send>,
    path: &Path,
    options: &LoadOptions,
) -> Result<(Table, LoadReport), LoadError> {
    let reader = RibReader::from_reader(input, path, options.skip_bad_records)?;
    select::build_fib(reader, options)
}
