//! The `--fib FILE` argument shared by every subcommand that reads a table, with the options
//! that say how an MRT RIB dump becomes a table.

use std::path::{Path, PathBuf};

use ipfib::{Fib, Table};
use ipfib_io::{LoadOptions, LoadReport, PeerChoice, ValueKind};

/// Where the forwarding table comes from.
#[derive(clap::Args, Debug, Clone)]
pub struct FibArgs {
    /// FIB file: text (`prefix/len next_hop` per line), an MRT RIB dump (TABLE_DUMP or
    /// TABLE_DUMP_V2), plain, gzip or bzip2, or a table saved by `ipfib save` (opened in
    /// place, without a build); the format is detected from the content.
    #[arg(long, value_name = "FILE")]
    pub fib: PathBuf,

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

    /// The built table: a saved table of `engine` is opened as it is (mapped, no build), any
    /// other input is loaded and built with `engine`.
    pub fn open(&self, engine: &str) -> anyhow::Result<Fib> {
        if ipfib_io::is_saved_file(&self.fib)? {
            return Ok(ipfib_io::open_fib(
                &self.fib,
                Some(engine),
                &self.mrt.options(),
            )?);
        }
        let table = self.load()?;
        Ok(Fib::build(&table, engine)?)
    }
}

/// Loads any FIB file with these MRT options, printing the load's warnings (skipped records,
/// left-out prefixes) on stderr so a shortened table is never presented as whole.
pub fn load_reporting(path: &Path, mrt: &MrtArgs) -> anyhow::Result<(Table, LoadReport)> {
    let (fib, report) = ipfib_io::load_fib_with_report(path, &mrt.options())?;
    for warning in report.warnings() {
        note!("ipfib: {}: {warning}", path.display());
    }
    Ok((fib, report))
}
