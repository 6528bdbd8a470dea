//! Where the bench's inputs come from: the table (a FIB file or the generator) and the trace
//! (the generator or a file of addresses, one per line).

use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use ipfib::gen::TraceKind;
use ipfib::{Fib, LoadError, RouteTable};

use crate::bench::contenders::Family;

/// `--trace`: a generator kind or a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceArg {
    /// Generated from the table with this method.
    Gen(TraceKind),
    /// Read from a file, one address per line.
    File(PathBuf),
}

impl FromStr for TraceArg {
    type Err = std::convert::Infallible;
    /// A generator kind's name (`matched`, `uniform`, `space`) selects the generator; anything
    /// else is a file name (write `./matched` for a file of that name).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(s.parse::<TraceKind>()
            .map(TraceArg::Gen)
            .unwrap_or_else(|_| TraceArg::File(PathBuf::from(s))))
    }
}

impl fmt::Display for TraceArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceArg::Gen(kind) => write!(f, "{kind}"),
            TraceArg::File(path) => write!(f, "{}", path.display()),
        }
    }
}

/// The per-family parts of loading inputs.
pub trait Source: Family {
    /// This family's table out of a loaded FIB.
    fn of_fib(fib: Fib) -> RouteTable<Self>;
    /// A generated table of this family.
    fn generate(prefixes: usize, seed: u64) -> RouteTable<Self>;
}

impl Source for u32 {
    fn of_fib(fib: Fib) -> RouteTable<u32> {
        fib.v4
    }
    fn generate(prefixes: usize, seed: u64) -> RouteTable<u32> {
        ipfib::gen::fib_v4(prefixes, seed)
    }
}

impl Source for u128 {
    fn of_fib(fib: Fib) -> RouteTable<u128> {
        fib.v6
    }
    fn generate(prefixes: usize, seed: u64) -> RouteTable<u128> {
        ipfib::gen::fib_v6(prefixes, seed)
    }
}

/// Builds the trace: generated from the table, or read from a file.
pub fn trace<A: Source>(
    table: &RouteTable<A>,
    arg: &TraceArg,
    count: usize,
    seed: u64,
) -> anyhow::Result<Vec<A>> {
    match arg {
        TraceArg::Gen(kind) => {
            let t = ipfib::gen::trace(table, *kind, count, seed);
            anyhow::ensure!(
                !t.is_empty(),
                "the {kind} trace generator produced no address (is the table empty?)"
            );
            Ok(t)
        }
        TraceArg::File(path) => Ok(read_trace(path)?),
    }
}

fn line_error(path: &Path, line: u64, reason: String) -> LoadError {
    LoadError::Line {
        path: path.to_path_buf(),
        line,
        reason,
    }
}

/// Reads a trace file: one address per line, all of family `A`; blank lines and lines starting
/// with `#` are skipped; gzip-compressed files are recognised by their magic bytes. Any bad line
/// fails the whole read, naming the line.
pub fn read_trace<A: Family>(path: &Path) -> Result<Vec<A>, LoadError> {
    let io = |source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut buffered = BufReader::new(file);
    let gz = buffered.fill_buf().map_err(io)?.starts_with(&[0x1f, 0x8b]);
    let reader: Box<dyn BufRead> = if gz {
        Box::new(BufReader::new(flate2::read::MultiGzDecoder::new(buffered)))
    } else {
        Box::new(buffered)
    };
    parse_trace(reader, path)
}

fn parse_trace<A: Family>(reader: impl Read, path: &Path) -> Result<Vec<A>, LoadError> {
    let mut out = Vec::new();
    for (n, line) in BufReader::new(reader).lines().enumerate() {
        let line_no = n as u64 + 1;
        let line = line.map_err(|e| line_error(path, line_no, e.to_string()))?;
        let text = line.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        match text.parse::<A::Ip>() {
            Ok(ip) => out.push(A::from_ip(ip)),
            Err(_) => {
                let reason = match text.parse::<std::net::IpAddr>() {
                    Ok(other) => format!(
                        "{other} is not an {} address (the table under test is {})",
                        A::FAMILY,
                        A::FAMILY
                    ),
                    Err(_) => format!("not an address: {text:?}"),
                };
                return Err(line_error(path, line_no, reason));
            }
        }
    }
    if out.is_empty() {
        return Err(line_error(path, 0, "no addresses in the trace".into()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse<A: Family>(text: &str) -> Result<Vec<A>, LoadError> {
        parse_trace(text.as_bytes(), Path::new("t.txt"))
    }

    #[test]
    fn reads_addresses_skipping_blank_and_comment_lines() {
        let v: Vec<u128> = parse("# trace\n2001:db8::1\n\n  ::ffff:1.2.3.4 \n::\n").unwrap();
        assert_eq!(
            v,
            vec![
                0x2001_0db8_0000_0000_0000_0000_0000_0001,
                0xffff_0102_0304,
                0
            ]
        );
        let v: Vec<u32> = parse("10.0.0.1\n255.255.255.255\n").unwrap();
        assert_eq!(v, vec![0x0a00_0001, u32::MAX]);
    }

    #[test]
    fn wrong_family_and_garbage_name_the_line() {
        let err = parse::<u128>("2001:db8::1\n10.0.0.1\n")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("t.txt:2:"), "{err}");
        assert!(err.contains("not an IPv6 address"), "{err}");
        let err = parse::<u32>("10.0.0.1\n\n10.0.0.256\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("t.txt:3:") && err.contains("not an address"),
            "{err}"
        );
        let err = parse::<u32>("# only a comment\n").unwrap_err().to_string();
        assert!(err.contains("no addresses"), "{err}");
    }

    #[test]
    fn trace_arg_is_a_kind_or_a_file() {
        assert_eq!(
            "matched".parse::<TraceArg>().unwrap(),
            TraceArg::Gen(TraceKind::Matched)
        );
        assert_eq!(
            "uniform".parse::<TraceArg>().unwrap(),
            TraceArg::Gen(TraceKind::Uniform)
        );
        assert_eq!(
            "./matched".parse::<TraceArg>().unwrap(),
            TraceArg::File("./matched".into())
        );
    }

    #[test]
    fn gzip_traces_are_read_and_missing_files_named() {
        let dir = std::env::temp_dir().join(format!("ipfib-bench-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.gz");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut enc, b"1.2.3.4\n").unwrap();
        std::fs::write(&path, enc.finish().unwrap()).unwrap();
        assert_eq!(read_trace::<u32>(&path).unwrap(), vec![0x0102_0304]);
        let missing = dir.join("missing.txt");
        let err = read_trace::<u32>(&missing).unwrap_err().to_string();
        assert!(err.contains("missing.txt"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
