//! The `--fib FILE` argument shared by every subcommand that reads a table, with the options
//! that say how an MRT RIB dump becomes a table.

use std::path::{Path, PathBuf};

use ipfib::{Fib, Table};
use ipfib_io::{LoadOptions, LoadReport, PeerChoice, ValueKind};

/// Where the forwarding table comes from.
#[derive(clap::Args, Debug, Clone)]
pub struct FibArgs {
    /// FIB file: text (`prefix/len next_hop` per line), an MRT RIB dump (TABLE_DUMP or
    /// TABLE_DUMP_V2), plain, gzip or bzip2, or a table saved by `ipfib save` (used as it is,
    /// without a build); the format is detected from the content. `-` is standard input; pipes
    /// and FIFOs (`<(...)`, `/dev/stdin`) are read once, front to back, like files.
    #[arg(long, value_name = "FILE")]
    pub fib: PathBuf,

    /// Map a saved table (a regular file written by `ipfib save`) instead of reading it into
    /// memory: no copy, pages shared between processes. The file must then not be truncated
    /// or written into while ipfib runs (a lookup would die with SIGBUS or read changed bytes
    /// unchecked); replacing it by rename, as `ipfib save` does, is safe. Without this flag the
    /// table is read once and later changes to the file cannot affect ipfib.
    #[arg(long)]
    pub mmap: bool,

    #[command(flatten)]
    pub mrt: MrtArgs,
}

/// How an MRT RIB dump (many paths per prefix) becomes a table (one value per prefix).
/// Ignored for text input.
#[derive(clap::Args, Debug, Clone)]
pub struct MrtArgs {
    /// MRT: whose path each prefix gets. `best` = shortest AS path (an AS_SET counts as 1),
    /// ties to the lowest peer index; or a peer index (PEER_INDEX_TABLE position; for
    /// TABLE_DUMP v1 the order peers first appear, from 0); or a peer IP address.
    #[arg(long, value_name = "best|INDEX|IP", default_value = "best")]
    pub peer: PeerChoice,

    /// MRT: the number stored per prefix. `next-hop`: ids 1, 2, ... for the BGP next hops in
    /// order of first appearance; `origin-as`: the origin AS (lowest of a final AS_SET; the
    /// peer's AS for an empty path); `peer`: the peer index.
    #[arg(
        long,
        value_name = "next-hop|origin-as|peer",
        default_value = "next-hop"
    )]
    pub value: ValueKind,

    /// MRT: skip records that cannot be parsed (and repair the early-RIS 4-bytes-short
    /// TABLE_DUMP length) instead of failing; the counts are reported on stderr.
    #[arg(long)]
    pub skip_bad_records: bool,

    /// Accept a table without routes (any format). By default a load that yields no route (an
    /// empty or comment-only file, /dev/null, an MRT dump with only its peer table) is an
    /// error, because every lookup would silently answer "no route".
    #[arg(long)]
    pub allow_empty: bool,
}

impl MrtArgs {
    /// The library's load options.
    pub fn options(&self) -> LoadOptions {
        LoadOptions {
            peer: self.peer.clone(),
            value: self.value,
            skip_bad_records: self.skip_bad_records,
            allow_empty: self.allow_empty,
        }
    }
}

impl FibArgs {
    /// Loads the table; any error names the file and line (or byte offset). Skipped records
    /// and left-out prefixes are reported on stderr.
    pub fn load(&self) -> anyhow::Result<Table> {
        Ok(load_reporting(&self.fib, &self.mrt)?.0)
    }

    /// The built table: a saved table of `engine` is used as it is (read, or mapped with
    /// `--mmap`; no build), any other input is loaded and built with `engine`. The file is
    /// opened and read once; the load's warnings go to stderr as for [`FibArgs::load`].
    pub fn open(&self, engine: &str) -> anyhow::Result<Fib> {
        let options = self.mrt.options();
        crate::oom::doing(&format!("reading {}", self.fib.display()));
        let file = if self.mmap {
            // SAFETY: `--mmap`'s documented contract (its help text and the README): the user
            // keeps the file from being truncated or written into while ipfib runs.
            unsafe { ipfib_io::read_fib_mapped(&self.fib, &options) }?
        } else {
            ipfib_io::read_fib(&self.fib, &options)?
        };
        warn(&self.fib, &file.report());
        crate::oom::doing(&format!(
            "building the {engine} engine from {}",
            self.fib.display()
        ));
        Ok(file.build(Some(engine))?)
    }
}

/// Prints a load's warnings (skipped records, left-out prefixes) on stderr.
fn warn(path: &Path, report: &LoadReport) {
    for warning in report.warnings() {
        note!("ipfib: {}: {warning}", path.display());
    }
}

/// Loads any FIB file with these MRT options, printing the load's warnings (skipped records,
/// left-out prefixes) on stderr so a shortened table is never presented as whole.
pub fn load_reporting(path: &Path, mrt: &MrtArgs) -> anyhow::Result<(Table, LoadReport)> {
    crate::oom::doing(&format!("reading {}", path.display()));
    let (fib, report) = ipfib_io::load_fib_with_report(path, &mrt.options())?;
    crate::oom::doing(&format!(
        "working on {} ({} IPv4 and {} IPv6 routes)",
        path.display(),
        fib.v4().len(),
        fib.v6().len()
    ));
    warn(path, &report);
    Ok((fib, report))
}
