//! Errors from reading tables and address lists.

use std::path::PathBuf;

/// Errors from reading a FIB (text or MRT) or a list of addresses.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
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
