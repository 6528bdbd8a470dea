//! Helpers shared by the CLI integration tests: run the built `ipfib` binary, write tables.

#![allow(dead_code)] // each test binary uses a different subset

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What one run of the binary produced.
pub struct Output {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `ipfib ARGS`, feeding `stdin` (on a thread, so a large input cannot deadlock against a
/// full stdout pipe). Backtraces are switched off so stderr is just the message.
pub fn ipfib(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ipfib"))
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ipfib");
    let feeder = stdin.map(|bytes| {
        let mut pipe = child.stdin.take().unwrap();
        let bytes = bytes.to_vec();
        // The child may stop reading early (it exits on a bad line): ignore the broken pipe.
        std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        })
    });
    let out = child.wait_with_output().expect("wait for ipfib");
    if let Some(f) = feeder {
        f.join().unwrap();
    }
    Output {
        success: out.status.success(),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A small mixed table whose answers are worked out by hand in the tests.
pub const SMALL_FIB: &str = "\
# hand-written test table
10.0.0.0/8 1
10.1.0.0/16 2
10.1.2.0/24 0        # next hop 0 is an ordinary next hop
10.1.2.128/25 3
192.0.2.0/24 4294967295
255.255.255.255/32 5
2001:db8::/32 7
2001:db8:1::/48 8
ffff::/16 9
";

/// Writes `text` to `dir/name` and returns the path as a string for the command line.
pub fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path: PathBuf = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_string()
}

/// `../shared/data`, or `None` (after saying so) when it is absent.
pub fn shared_data() -> Option<PathBuf> {
    ipfib_testdata::shared_data()
}

/// The routes of a gzipped text table counted independently of the project's readers: each
/// line's first field parsed with `std::net` and its host bits cleared, so a prefix written
/// twice counts once. Returns the distinct prefixes per family (`[IPv4, IPv6]`) and, per
/// family, how many there are of each length.
pub fn count_text_table(path: &Path) -> ([usize; 2], [Vec<usize>; 2]) {
    use std::collections::HashSet;
    use std::io::BufRead;
    let file = std::fs::File::open(path).unwrap();
    let reader = std::io::BufReader::new(flate2::read::GzDecoder::new(file));
    let mut seen: [HashSet<(u128, u8)>; 2] = [HashSet::new(), HashSet::new()];
    for line in reader.lines() {
        let line = line.unwrap();
        let Some(field) = line
            .split('#')
            .next()
            .and_then(|l| l.split_whitespace().next())
        else {
            continue;
        };
        let (addr, len) = field.split_once('/').expect("address/length");
        let len: u8 = len.parse().unwrap();
        let (family, bits, width) = match addr.parse::<std::net::IpAddr>().unwrap() {
            std::net::IpAddr::V4(a) => (0, u128::from(u32::from(a)), 32),
            std::net::IpAddr::V6(a) => (1, u128::from(a), 128),
        };
        let host = u32::from(width - len);
        let network = if host >= 128 { 0 } else { bits >> host << host };
        seen[family].insert((network, len));
    }
    let lengths = |s: &HashSet<(u128, u8)>, width: usize| {
        let mut v = vec![0; width + 1];
        for &(_, len) in s {
            v[usize::from(len)] += 1;
        }
        v
    };
    (
        [seen[0].len(), seen[1].len()],
        [lengths(&seen[0], 32), lengths(&seen[1], 128)],
    )
}
