//! `ipfib convert IN OUT`: any supported FIB input (text, or an MRT RIB dump chosen down to one
//! path per prefix) written as the text format, so a RIB can be turned into a table once and
//! then loaded quickly, diffed and shared.

use std::path::PathBuf;

use ipfib::Table;
use ipfib_io::LoadReport;

use crate::fib_args::{load_reporting, MrtArgs};

/// Arguments of `ipfib convert`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Input: a text FIB or an MRT RIB dump (TABLE_DUMP, TABLE_DUMP_V2), plain, gzip or bzip2;
    /// `-` reads standard input. The format is detected from the content.
    #[arg(value_name = "IN")]
    pub input: PathBuf,

    /// Output text FIB; `-` writes standard output; a name ending in `.gz` is gzip-compressed.
    /// A regular file is written under a temporary name and renamed when complete, so a failed
    /// conversion never leaves a partial table behind; a device or FIFO is written through.
    #[arg(value_name = "OUT")]
    pub output: PathBuf,

    #[command(flatten)]
    pub mrt: MrtArgs,
}

/// Runs the conversion.
pub fn run(args: Args) -> anyhow::Result<()> {
    let (table, report) = load_reporting(&args.input, &args.mrt)?;
    let header = header(&args, &report, &table);
    crate::output::write_to(&args.output, |out| {
        writeln!(out, "{header}")?;
        ipfib_io::text::write_fib(out, &table)
    })
}

/// The comment line that says where the table came from.
fn header(args: &Args, report: &LoadReport, table: &Table) -> String {
    let options = if report.format.is_mrt() {
        format!(", {}", args.mrt.options().describe())
    } else {
        String::new()
    };
    format!(
        "# ipfib convert: from {} ({}{options}); {} IPv4 and {} IPv6 routes",
        args.input.display(),
        report.format.name(),
        table.v4().len(),
        table.v6().len()
    )
}
