//! Errors from reading tables and address lists.

use std::path::PathBuf;

use crate::mrt::{FileFormat, LoadReport};

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
    /// A saved table (recognised by its magic bytes) cannot be opened.
    #[error("{}: {source}", path.display())]
    Saved {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        source: ipfib::OpenError,
    },
    /// The table was read, but the engine asked for cannot be built from it.
    #[error("{}: {source}", path.display())]
    Build {
        /// The file.
        path: PathBuf,
        /// Why the engine cannot be built.
        source: ipfib::BuildError,
    },
    /// The file was read without error but holds no routes (an empty or comment-only text file,
    /// `/dev/null`, an MRT dump with only its peer table or with no usable path). A table that
    /// forwards nothing is almost always a mistake (a wrong file, a failed export), so it is
    /// refused unless [`crate::LoadOptions::allow_empty`] is set.
    #[error("{}: {}", path.display(), empty_reason(report))]
    Empty {
        /// The file.
        path: PathBuf,
        /// What the load read (format, records, paths, skips), to tell why nothing was left.
        report: Box<LoadReport>,
    },
}

/// Why a load came out empty, and how to accept that.
fn empty_reason(report: &LoadReport) -> String {
    let what = match report.format {
        FileFormat::Text | FileFormat::Saved => {
            "no routes: the file is empty or holds only comments and blank lines".to_string()
        }
        _ => {
            let mut s = format!(
                "no routes: this {} dump has {} records and {} paths",
                report.format.name(),
                report.records,
                report.paths
            );
            if report.paths == 0 {
                s.push_str(" (no RIB entries, only a peer table or records that are left out)");
            } else {
                s.push_str(", but none gives a route for the chosen peer and value");
            }
            for w in report.warnings() {
                s.push_str("; ");
                s.push_str(&w);
            }
            s
        }
    };
    format!(
        "{what}. An empty table forwards nothing, so it is refused; set `allow_empty` in \
         LoadOptions (the command line's --allow-empty) if an empty table is intended"
    )
}
