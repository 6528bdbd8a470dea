//! Typed errors for everything that can go wrong with user input.
//!
//! The public API never panics on bad prefixes, files or addresses: each failure is one of these
//! variants and, where it comes from a file, names the file and the line.

use std::path::PathBuf;

/// Why a prefix was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrefixError {
    /// The address has bits set beyond the prefix length (`10.0.0.1/8`). Masking silently would
    /// hide a typo in a routing table, so it is an error.
    #[error("host bits set in {addr}/{len} (the network is {network}/{len})")]
    HostBitsSet {
        /// The address as written.
        addr: String,
        /// The prefix length.
        len: u8,
        /// The address with the host bits cleared.
        network: String,
    },
    /// The prefix length exceeds the address width.
    #[error("prefix length {len} is longer than {max} bits")]
    LengthTooLong {
        /// The length given.
        len: u8,
        /// The family's width.
        max: u8,
    },
    /// The text is not a prefix of either family.
    #[error("not a prefix: {0:?}")]
    Syntax(String),
}

/// Errors from building or querying a lookup structure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LookupError {
    /// A batch lookup was given an output slice of a different length than its input.
    #[error("batch lookup: {addrs} addresses but room for {out} results")]
    BatchLength {
        /// Number of addresses.
        addrs: usize,
        /// Number of result slots.
        out: usize,
    },
    /// The requested engine cannot represent this table.
    #[error("engine {engine}: {reason}")]
    Unsupported {
        /// Engine name.
        engine: &'static str,
        /// What the engine cannot do.
        reason: String,
    },
}

/// Errors from reading a FIB (text or MRT) or a list of addresses.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be opened or read.
    #[error("{}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A line of a text file is malformed. Nothing of the file is used.
    #[error("{path}:{line}: {reason}")]
    Line {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// What is wrong with it.
        reason: String,
    },
    /// A binary (MRT) file is malformed at a byte offset.
    #[error("{path}: at byte offset {offset}: {reason}")]
    Record {
        /// The file.
        path: PathBuf,
        /// Offset of the bad record in the uncompressed stream.
        offset: u64,
        /// What is wrong with it.
        reason: String,
    },
}
