//! Typed errors for everything that can go wrong with user input.
//!
//! The public API never panics on bad prefixes, bad addresses or unbuildable tables: each
//! failure is one of these. Every enum is `#[non_exhaustive]`, so new failure kinds can be added
//! without breaking callers that match on them.

/// An error and its causes as one line, for surfaces that carry a single message (a Python
/// exception, a C error buffer, the CLI's error line): each cause is appended after `": "`
/// unless the message so far already quotes it.
pub fn one_line(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !s.contains(&text) {
            s.push_str(": ");
            s.push_str(&text);
        }
        cause = c.source();
    }
    s
}

/// Why a prefix was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
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

/// Errors from querying a built engine.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LookupError {
    /// A batch lookup was given an output slice of a different length than its input. Nothing
    /// was written.
    #[error("batch lookup: {addrs} addresses but room for {out} results")]
    BatchLength {
        /// Number of addresses.
        addrs: usize,
        /// Number of result slots.
        out: usize,
    },
    /// A comparator outside ipfib (a kernel map, a C library) could not answer.
    #[error("{engine}: {reason}")]
    Backend {
        /// The comparator.
        engine: &'static str,
        /// What failed.
        reason: String,
    },
}

/// Errors from building an engine.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// No engine of this name is registered.
    #[error("unknown engine {name:?} (known: {known})")]
    UnknownEngine {
        /// The name asked for.
        name: String,
        /// The registered names, comma-separated.
        known: String,
    },
    /// The engine does not support this address family, and the table has routes of it.
    #[error("engine {engine} does not support {family} routes")]
    UnsupportedFamily {
        /// Engine name.
        engine: &'static str,
        /// `"IPv4"` or `"IPv6"`.
        family: &'static str,
    },
    /// The engine cannot represent this table (too many next hops for an encoding, say).
    #[error("engine {engine}: {reason}")]
    Unsupported {
        /// Engine name.
        engine: &'static str,
        /// What the engine cannot do.
        reason: String,
    },
    /// The SIMD backend asked for cannot run on this CPU.
    #[error("the {backend} backend is not supported by this CPU")]
    BackendUnavailable {
        /// The backend's name.
        backend: &'static str,
    },
}

/// A structural invariant of an engine that does not hold: what [`crate::engine::Lookup::validate`]
/// reports for data that did not come from the engine's own builder (a damaged or hostile
/// saved table, say).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {engine} structure: {reason}")]
pub struct InvalidStructure {
    /// Engine name.
    pub engine: &'static str,
    /// Which invariant fails, and where.
    pub reason: String,
}

/// Why a [`crate::LiveFib`] refused an update or could not publish one.
///
/// Invalid updates are refused when they are submitted (nothing of a refused batch is
/// applied); an accepted update is never dropped, and a failure to build the version that
/// would show it is reported by [`crate::LiveFib::flush`] as [`LiveError::Build`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LiveError {
    /// Update `index` of the batch (0 for a single update) names a prefix with host bits set.
    #[error("update {index}: {source}")]
    InvalidPrefix {
        /// Position of the bad update in its batch.
        index: usize,
        /// What is wrong with its prefix.
        source: PrefixError,
    },
    /// Update `index` of the batch is a route of a family the live table's engine does not
    /// support.
    #[error("update {index}: engine {engine} does not support {family} routes")]
    UnsupportedFamily {
        /// Position of the bad update in its batch.
        index: usize,
        /// Engine name.
        engine: &'static str,
        /// `"IPv4"` or `"IPv6"`.
        family: &'static str,
    },
    /// The engine could not build the version holding the updates (they are kept, and go
    /// into the next build attempt).
    #[error("publishing a new version failed: {0}")]
    Build(#[from] BuildError),
    /// The background rebuilder has stopped (it panicked): nothing more can be published.
    #[error("the live table's rebuilder thread has stopped")]
    Closed,
    /// [`crate::LiveFib::try_apply`]: the queue has no room for the batch (nothing of it was
    /// queued). Retry after [`crate::LiveFib::flush`], or use `apply`, which waits.
    #[error("the update queue is full ({queued} queued, a batch of {batch}, at most {limit})")]
    QueueFull {
        /// Updates waiting to be published.
        queued: usize,
        /// Updates in the refused batch.
        batch: usize,
        /// [`crate::LiveOptions::max_queued`].
        limit: usize,
    },
    /// [`crate::LiveFib::wait_visible`] asked for a sequence number no update has yet.
    #[error("update {seq} has not been submitted (the last submitted is {submitted})")]
    NotIssued {
        /// The number asked for.
        seq: u64,
        /// The last sequence number issued.
        submitted: u64,
    },
}

/// Errors from saving a built table ([`crate::Fib::save`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SaveError {
    /// Writing the file failed.
    #[error("writing {}: {source}", path.display())]
    Io {
        /// The file (or `-` for a writer).
        path: std::path::PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The engine has no saved format (only PlanB has one); save a table built with it.
    #[error("engine {engine} has no saved-table format (build the table with planb to save it)")]
    Unsupported {
        /// The engine's name.
        engine: &'static str,
    },
}

/// Why a saved table cannot be opened ([`crate::Fib::open`], [`crate::Fib::from_bytes`]).
/// Every check runs before a single lookup can, so a damaged or hostile file is one of these,
/// never a panic or a wrong answer from the structure's unchecked walk.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The file could not be opened, read or mapped.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The bytes do not start with the saved-table magic: not a saved table at all.
    #[error("not an ipfib saved table (wrong magic bytes)")]
    NotSaved,
    /// Written by a different version of the format.
    #[error("saved-table format version {found}, this build reads version {supported}")]
    Version {
        /// The file's version.
        found: u32,
        /// The version this build reads.
        supported: u32,
    },
    /// Written on a machine of the other byte order (the arrays are used in place, so they
    /// are not swapped).
    #[error("the saved table was written in the other byte order")]
    ByteOrder,
    /// The file ends before what its header describes.
    #[error("the saved table is truncated: {what}")]
    Truncated {
        /// What is cut short.
        what: String,
    },
    /// The body does not match the header's checksum (damaged on disk or in transit).
    #[error(
        "the saved table is damaged: body checksum {computed:#010x}, header says {stored:#010x}"
    )]
    Checksum {
        /// The checksum in the header.
        stored: u64,
        /// The checksum of the body as read.
        computed: u64,
    },
    /// The header or section table is inconsistent (a missing, misplaced or unknown section,
    /// an array of the wrong size, a bad route).
    #[error("malformed saved table: {0}")]
    Format(String),
    /// The engine's arrays break an invariant its lookups rely on.
    #[error(transparent)]
    Invalid(#[from] InvalidStructure),
    /// The file names an engine this build cannot open.
    #[error("the saved table is of engine {0:?}, which this build cannot open")]
    Engine(String),
    /// No SIMD backend could be set up (see [`BuildError::BackendUnavailable`]).
    #[error(transparent)]
    Build(#[from] BuildError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot load table.txt")]
    struct Load(#[source] std::io::Error);

    #[derive(Debug, thiserror::Error)]
    #[error("line 3: {0}")]
    struct Quoting(#[source] PrefixError);

    #[test]
    fn one_line_appends_the_causes_a_message_does_not_quote() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        assert_eq!(one_line(&Load(io)), "cannot load table.txt: no such file");
        let quoted = Quoting(PrefixError::LengthTooLong { len: 40, max: 32 });
        let text = one_line(&quoted);
        assert_eq!(
            text,
            quoted.to_string(),
            "the cause is quoted once, not twice"
        );
    }
}
