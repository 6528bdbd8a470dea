//! Helpers shared by the tests and the example: finding `../shared/data` and reading its
//! gzip text tables (`prefix/len next_hop` lines, `#` comments), so they do not depend on the
//! library's text reader.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use flate2::read::GzDecoder;
use ipfib::{Address, Prefix, RouteTable};

/// Reads one family's routes of a gzip text table. Panics with the file and line on a bad
/// line: this is test support, and a bad fixture must fail the test loudly.
pub fn load_gz<A: Address>(path: &Path) -> RouteTable<A>
where
    <A::Ip as std::str::FromStr>::Err: std::fmt::Debug,
{
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut table = RouteTable::new();
    for (i, line) in BufReader::new(GzDecoder::new(file)).lines().enumerate() {
        let line = line.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        macro_rules! bad {
            () => {
                bad_line(path, i + 1, line)
            };
        }
        let (net, nh) = line
            .split_once(char::is_whitespace)
            .unwrap_or_else(|| bad!());
        let (addr, len) = net.split_once('/').unwrap_or_else(|| bad!());
        let addr = A::from_ip(addr.parse().unwrap_or_else(|_| bad!()));
        let len: u8 = len.parse().unwrap_or_else(|_| bad!());
        let nh: u32 = nh.trim().parse().unwrap_or_else(|_| bad!());
        let prefix = Prefix::new(addr, len).unwrap_or_else(|_| bad!());
        table.insert(prefix, nh);
    }
    table
}

fn bad_line(path: &Path, line_no: usize, line: &str) -> ! {
    panic!("{}:{line_no}: bad line {line:?}", path.display())
}

/// `n` addresses, each a uniformly random address inside a uniformly random route of the
/// table (a "matched" trace: every address hits some route, at every depth the table has).
pub fn matched_trace<A: Address>(
    table: &RouteTable<A>,
    n: usize,
    mut random: impl FnMut() -> u128,
) -> Vec<A> {
    let prefixes: Vec<Prefix<A>> = table.iter().map(|(p, _)| p).collect();
    assert!(!prefixes.is_empty(), "a matched trace needs routes");
    (0..n)
        .map(|_| {
            let p = prefixes[(random() % prefixes.len() as u128) as usize];
            let host = A::from_u128_left(random()).and(A::mask(p.len()).not());
            p.addr().or(host)
        })
        .collect()
}

/// `../shared/data`, or `None` (after saying so) when it is absent.
pub fn shared_data() -> Option<PathBuf> {
    ipfib_testdata::shared_data()
}
