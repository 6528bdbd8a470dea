//! `ipfib convert IN OUT`: any supported FIB input (text, or an MRT RIB dump chosen down to one
//! path per prefix) written as the text format, so a RIB can be turned into a table once and
//! then loaded quickly, diffed and shared.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use ipfib::io::LoadReport;
use ipfib::Fib;

use crate::fib_args::{load_reporting, MrtArgs};

/// Arguments of `ipfib convert`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Input: a text FIB or an MRT RIB dump (TABLE_DUMP, TABLE_DUMP_V2), plain, gzip or bzip2;
    /// `-` reads standard input. The format is detected from the content.
    #[arg(value_name = "IN")]
    pub input: PathBuf,

    /// Output text FIB; `-` writes standard output; a name ending in `.gz` is gzip-compressed.
    /// The file is written under a temporary name and renamed when complete, so a failed
    /// conversion never leaves a partial table behind.
    #[arg(value_name = "OUT")]
    pub output: PathBuf,

    #[command(flatten)]
    pub mrt: MrtArgs,
}

/// Runs the conversion.
pub fn run(args: Args) -> anyhow::Result<()> {
    let (fib, report) = load_reporting(&args.input, &args.mrt)?;
    let header = header(&args, &report, &fib);
    if args.output.as_os_str() == "-" {
        let stdout = io::stdout().lock();
        return match write_table(BufWriter::new(stdout), &header, &fib) {
            // The reader went away (`| head`): not an error of the conversion.
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
            other => other.context("writing the table to standard output"),
        };
    }
    write_file(&args.output, &header, &fib)
}

/// The comment line that says where the table came from.
fn header(args: &Args, report: &LoadReport, fib: &Fib) -> String {
    let options = if report.format.is_mrt() {
        format!(", {}", args.mrt.options().describe())
    } else {
        String::new()
    };
    format!(
        "# ipfib convert: from {} ({}{options}); {} IPv4 and {} IPv6 routes",
        args.input.display(),
        report.format.name(),
        fib.v4.len(),
        fib.v6.len()
    )
}

fn write_table<W: Write>(mut out: W, header: &str, fib: &Fib) -> io::Result<()> {
    writeln!(out, "{header}")?;
    ipfib::io::text::write_fib(&mut out, fib)?;
    out.flush()
}

/// Writes next to `path` and renames, gzip-compressing when the name ends in `.gz`.
fn write_file(path: &Path, header: &str, fib: &Fib) -> anyhow::Result<()> {
    let mut tmp_name = path.as_os_str().to_owned();
    tmp_name.push(format!(".tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp_name);
    let result = (|| -> io::Result<()> {
        let file = BufWriter::with_capacity(1 << 16, File::create(&tmp)?);
        if path.extension().is_some_and(|e| e == "gz") {
            let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::default());
            write_table(&mut gz, header, fib)?;
            gz.finish()?
                .into_inner()
                .map_err(|e| e.into_error())?
                .sync_all()
        } else {
            let mut file = file;
            write_table(&mut file, header, fib)?;
            file.into_inner().map_err(|e| e.into_error())?.sync_all()
        }
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("writing {}", path.display()));
    }
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
}
