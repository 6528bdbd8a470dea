//! Where the bench's inputs come from: the table (a FIB file or the generator) and the trace
//! (the generator or a file of addresses, one per line).

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use ipfib::{RouteTable, Table};
use ipfib_gen::TraceKind;

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
    /// This family's routes out of a loaded table.
    fn of_table(table: Table) -> RouteTable<Self>;
    /// A generated table of this family.
    fn generate(prefixes: usize, seed: u64) -> RouteTable<Self>;
}

impl Source for u32 {
    fn of_table(table: Table) -> RouteTable<u32> {
        table.into_families().0
    }
    fn generate(prefixes: usize, seed: u64) -> RouteTable<u32> {
        ipfib_gen::fib_v4(prefixes, seed)
    }
}

impl Source for u128 {
    fn of_table(table: Table) -> RouteTable<u128> {
        table.into_families().1
    }
    fn generate(prefixes: usize, seed: u64) -> RouteTable<u128> {
        ipfib_gen::fib_v6(prefixes, seed)
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
            let t = ipfib_gen::trace(table, *kind, count, seed);
            anyhow::ensure!(
                !t.is_empty(),
                "the {kind} trace generator produced no address (is the table empty?)"
            );
            Ok(t)
        }
        TraceArg::File(path) => Ok(crate::addresses::read_family(path)?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
