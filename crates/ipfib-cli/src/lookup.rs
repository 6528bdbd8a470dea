//! `ipfib lookup`: answer addresses against a FIB, one output line per address.
//!
//! Addresses come from the arguments or, when there are none, from stdin one per line
//! (surrounding whitespace trimmed). Each gets exactly one line, in input order: the next hop in
//! decimal, or `-` when no route matches, so the output can be pasted next to the input. For that
//! reason a blank input line is an error rather than skipped: skipping it would shift every
//! following answer against its address.
//!
//! Stdin is processed in chunks of [`CHUNK`] lines: each chunk is split by family, answered with
//! the engines' `lookup_batch` (where fast engines overlap many searches) and written through one
//! buffered, locked stdout. Memory stays bounded however long the input is.

use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use ipfib::io::text::parse_ipv4;
use ipfib::{EngineKind, LoadError, Lpm, NextHop};

use crate::fib_args::FibArgs;

/// Addresses answered per batch when streaming stdin.
const CHUNK: usize = 64 * 1024;

/// Arguments of `ipfib lookup`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    fib: FibArgs,
    /// Engine that answers the lookups (planb or reference).
    #[arg(long, value_name = "ENGINE", default_value = "planb")]
    engine: EngineKind,
    /// Addresses to look up (IPv4 and IPv6 may be mixed); without any, addresses are read from
    /// stdin, one per line.
    #[arg(value_name = "ADDR")]
    addrs: Vec<String>,
}

/// The engines of both families, built once.
struct Engines {
    v4: Box<dyn Lpm<u32>>,
    v6: Box<dyn Lpm<u128>>,
}

/// Runs the subcommand.
pub fn run(args: Args) -> anyhow::Result<()> {
    if args.addrs.is_empty() && ipfib::io::decompress::is_stdin(&args.fib.fib) {
        bail!("--fib - reads the table from stdin, so give the addresses as arguments");
    }
    // Parse the arguments before loading the table: a typo fails fast, and before any output.
    let from_args = args
        .addrs
        .iter()
        .enumerate()
        .map(|(i, s)| match s.trim() {
            "" => bail!("argument {}: empty (expected an IP address)", i + 1),
            _ => parse_addr(s).map_err(|e| anyhow::anyhow!("argument {}: {e}", i + 1)),
        })
        .collect::<anyhow::Result<Vec<IpAddr>>>()?;

    let fib = args.fib.load()?;
    let engines = Engines {
        v4: args.engine.build_v4(&fib.v4),
        v6: args.engine.build_v6(&fib.v6),
    };
    drop(fib);

    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(64 * 1024, stdout.lock());
    let mut batch = Batch::default();
    let result = if from_args.is_empty() {
        let stdin = io::stdin();
        // Stdin's own buffer is 8 KiB; a larger one means fewer system calls on big traces.
        let input = BufReader::with_capacity(256 * 1024, stdin.lock());
        stream(&engines, input, Path::new("stdin"), &mut batch, &mut out)
    } else {
        from_args
            .chunks(CHUNK)
            .try_for_each(|chunk| batch.answer(&engines, chunk, &mut out))
    };
    let result = result.and_then(|()| out.flush().map_err(anyhow::Error::from));
    match result {
        // The reader of our output went away (`ipfib lookup ... | head`): not a failure.
        Err(e) if is_broken_pipe(&e) => Ok(()),
        other => other,
    }
}

/// An address of either family, surrounding whitespace ignored.
fn parse_addr(s: &str) -> anyhow::Result<IpAddr> {
    let t = s.trim();
    if t.is_empty() {
        bail!("empty line (expected an IP address)");
    }
    let parsed = if t.as_bytes().contains(&b':') {
        t.parse::<Ipv6Addr>().ok().map(IpAddr::V6)
    } else {
        parse_ipv4(t.as_bytes()).map(|a| IpAddr::V4(Ipv4Addr::from(a)))
    };
    parsed.ok_or_else(|| anyhow::anyhow!("not an IP address: {t:?}"))
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// Reads addresses line by line, answering every full chunk. On a bad line, the addresses
/// before it are still answered and written, then the error names `source:LINE`.
fn stream<R: BufRead, W: Write>(
    engines: &Engines,
    mut input: R,
    source: &Path,
    batch: &mut Batch,
    out: &mut W,
) -> anyhow::Result<()> {
    let mut pending: Vec<IpAddr> = Vec::with_capacity(CHUNK);
    let mut line = Vec::with_capacity(64);
    let mut line_no: u64 = 0;
    loop {
        line.clear();
        let n = input
            .read_until(b'\n', &mut line)
            .with_context(|| format!("reading {}", source.display()))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let parsed = std::str::from_utf8(&line)
            .map_err(|_| anyhow::anyhow!("invalid UTF-8"))
            .and_then(parse_addr);
        match parsed {
            Ok(addr) => pending.push(addr),
            Err(reason) => {
                batch.answer(engines, &pending, out)?;
                out.flush()?;
                return Err(LoadError::Line {
                    path: PathBuf::from(source),
                    line: line_no,
                    reason: reason.to_string(),
                }
                .into());
            }
        }
        if pending.len() == CHUNK {
            batch.answer(engines, &pending, out)?;
            pending.clear();
        }
    }
    batch.answer(engines, &pending, out)
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
    fn answer<W: Write>(
        &mut self,
        engines: &Engines,
        addrs: &[IpAddr],
        out: &mut W,
    ) -> anyhow::Result<()> {
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
        engines.v4.lookup_batch(&self.v4, &mut self.r4)?;
        engines.v6.lookup_batch(&self.v6, &mut self.r6)?;
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

    #[test]
    fn addresses_are_trimmed_and_checked() {
        assert_eq!(parse_addr(" 10.0.0.1\r\n").unwrap().to_string(), "10.0.0.1");
        assert_eq!(
            parse_addr("\t2001:DB8::1 ").unwrap().to_string(),
            "2001:db8::1"
        );
        assert!(parse_addr("   ").is_err());
        assert!(parse_addr("10.0.0.256").is_err());
        assert!(parse_addr("10.0.0.0/8").is_err());
        assert!(parse_addr("fe80::1%eth0").is_err());
        assert!(parse_addr("010.0.0.1").is_err());
        assert!(parse_addr("1.2.3.4:80").is_err());
        assert_eq!(
            parse_addr("::ffff:1.2.3.4").unwrap().to_string(),
            "::ffff:1.2.3.4"
        );
    }
}
