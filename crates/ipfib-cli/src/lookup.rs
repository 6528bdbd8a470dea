//! `ipfib lookup`: answer addresses against a FIB, one output line per address.
//!
//! Addresses come from the arguments or, when there are none, from stdin one per line
//! (surrounding whitespace trimmed). Each gets exactly one line, in input order: the next hop in
//! decimal, or `-` when no route matches, so the output can be pasted next to the input. For that
//! reason a blank input line is an error rather than skipped: skipping it would shift every
//! following answer against its address.
//!
//! Stdin is processed in chunks of [`CHUNK`] lines: each chunk is split by family, answered with
//! the engine's batched lookup (where fast engines overlap many searches) and written through one
//! buffered, locked stdout, flushed after each full chunk. Memory stays bounded however long the
//! input is.

use std::io::{self, BufReader, Write};
use std::net::IpAddr;
use std::path::Path;

use anyhow::bail;
use ipfib::engine::EngineInfo;
use ipfib::{Fib, NextHop};

use crate::addresses::{parse_addr, AddressLines};
use crate::fib_args::FibArgs;

/// Addresses answered per batch when streaming stdin.
const CHUNK: usize = 64 * 1024;

/// Arguments of `ipfib lookup`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    fib: FibArgs,
    /// Engine that answers the lookups.
    #[arg(long, value_name = "ENGINE", default_value = "planb", value_parser = crate::engine_arg::Engines)]
    engine: &'static EngineInfo,
    /// Addresses to look up (IPv4 and IPv6 may be mixed); without any, addresses are read from
    /// stdin, one per line.
    #[arg(value_name = "ADDR")]
    addrs: Vec<String>,
}

/// Runs the subcommand.
pub fn run(args: Args) -> anyhow::Result<()> {
    if args.addrs.is_empty() && ipfib_io::decompress::is_stdin(&args.fib.fib) {
        bail!("--fib - reads the table from stdin, so give the addresses as arguments");
    }
    // Parse the arguments before loading the table: a typo fails fast, and before any output.
    let from_args = args
        .addrs
        .iter()
        .enumerate()
        .map(|(i, s)| parse_addr(s).map_err(|e| anyhow::anyhow!("argument {}: {e}", i + 1)))
        .collect::<anyhow::Result<Vec<IpAddr>>>()?;

    let fib = args.fib.open(args.engine.name())?;

    let mut out = crate::Stdout::default();
    let mut batch = Batch::default();
    let result = if from_args.is_empty() {
        let stdin = io::stdin();
        // Stdin's own buffer is 8 KiB; a larger one means fewer system calls on big traces.
        let input = BufReader::with_capacity(256 * 1024, stdin.lock());
        stream(&fib, input, &mut batch, &mut out)
    } else {
        from_args
            .chunks(CHUNK)
            .try_for_each(|chunk| batch.answer(&fib, chunk, &mut out))
    };
    // A closed pipe (`ipfib lookup ... | head`) ends the command quietly in `main`; any other
    // write error names standard output.
    result.and_then(|()| out.flush().map_err(anyhow::Error::from))
}

/// Reads addresses line by line, answering every full chunk. On a bad line, the addresses
/// before it are still answered and written, then the error names `stdin:LINE`.
fn stream<R: io::BufRead, W: Write>(
    fib: &Fib,
    input: R,
    batch: &mut Batch,
    out: &mut W,
) -> anyhow::Result<()> {
    let mut lines = AddressLines::strict(input, Path::new("stdin"));
    let mut pending: Vec<IpAddr> = Vec::with_capacity(CHUNK);
    loop {
        match lines.next_addr() {
            Ok(Some(addr)) => pending.push(addr),
            Ok(None) => break,
            Err(e) => {
                batch.answer(fib, &pending, out)?;
                out.flush()?;
                return Err(e.into());
            }
        }
        if pending.len() == CHUNK {
            batch.answer(fib, &pending, out)?;
            // Each full chunk's answers leave at once (one write per 64 Ki answers), so a
            // program feeding stdin and reading stdout in turn is never left waiting.
            out.flush()?;
            pending.clear();
        }
    }
    batch.answer(fib, &pending, out)
}

/// Scratch space reused from chunk to chunk, so steady-state streaming allocates nothing.
#[derive(Default)]
struct Batch {
    v4: Vec<u32>,
    v6: Vec<u128>,
    r4: Vec<Option<NextHop>>,
    r6: Vec<Option<NextHop>>,
}

impl Batch {
    /// Looks up a chunk of mixed addresses and writes one line per address, in order.
    fn answer<W: Write>(&mut self, fib: &Fib, addrs: &[IpAddr], out: &mut W) -> anyhow::Result<()> {
        self.v4.clear();
        self.v6.clear();
        for addr in addrs {
            match addr {
                IpAddr::V4(a) => self.v4.push(u32::from(*a)),
                IpAddr::V6(a) => self.v6.push(u128::from(*a)),
            }
        }
        self.r4.clear();
        self.r4.resize(self.v4.len(), None);
        self.r6.clear();
        self.r6.resize(self.v6.len(), None);
        fib.v4().lookup_batch(&self.v4, &mut self.r4)?;
        fib.v6().lookup_batch(&self.v6, &mut self.r6)?;
        let (mut r4, mut r6) = (self.r4.iter(), self.r6.iter());
        for addr in addrs {
            let result = match addr {
                IpAddr::V4(_) => r4.next(),
                IpAddr::V6(_) => r6.next(),
            };
            // Each family has exactly as many results as addresses, so `next` never runs out.
            write_next_hop(out, result.copied().flatten())?;
        }
        Ok(())
    }
}

/// Writes `nh` in decimal (or `-`) and a newline, without the formatting machinery: at millions
/// of lines per second this is a visible share of the time.
fn write_next_hop<W: Write>(out: &mut W, nh: Option<NextHop>) -> io::Result<()> {
    let Some(mut v) = nh else {
        return out.write_all(b"-\n");
    };
    let mut buf = [0u8; 11];
    let mut i = buf.len() - 1;
    buf[i] = b'\n';
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.write_all(&buf[i..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_hops_print_in_decimal() {
        let mut out = Vec::new();
        for nh in [Some(0), Some(7), Some(10), Some(4_294_967_295), None] {
            write_next_hop(&mut out, nh).unwrap();
        }
        assert_eq!(String::from_utf8(out).unwrap(), "0\n7\n10\n4294967295\n-\n");
    }
}
