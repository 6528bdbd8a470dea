//! Bounds of the numeric arguments of `ipfib bench` and `ipfib gen`, checked when the
//! arguments are parsed (a clear usage error, status 2) instead of failing later on an
//! allocation ("capacity overflow", an abort on a huge allocation) or a thread per CPU cycle;
//! and a check of the memory a run is estimated to need against the memory available.

use clap::builder::RangedU64ValueParser;

/// Addresses of a generated trace: 2^28 (4 GiB of IPv6 addresses).
pub const MAX_TRACE: u64 = 1 << 28;
/// Prefixes of a generated table: 2^26 (about 10 GiB while an IPv6 table is generated).
pub const MAX_PREFIXES: u64 = 1 << 26;
/// Benchmark threads.
pub const MAX_THREADS: u64 = 1024;
/// Addresses per batch call.
pub const MAX_CHUNK: u64 = 1 << 24;
/// Timed runs per measurement.
pub const MAX_RUNS: u64 = 1000;
/// Rounds of the whole comparison.
pub const MAX_ROUNDS: u64 = 100;
/// Time budget of one run: one hour.
pub const MAX_RUN_BUDGET_MS: u64 = 3_600_000;

/// A clap parser for a count in `1..=max`.
pub fn count(max: u64) -> RangedU64ValueParser<usize> {
    RangedU64ValueParser::<usize>::new().range(1..=max)
}

/// Bytes of memory the system can still give (`MemAvailable`), if known.
fn available() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// Fails with a clear message when `bytes` (an estimate of what `what` needs) exceeds the
/// memory available; passes when that is unknown.
pub fn check_memory(what: &str, bytes: u64) -> anyhow::Result<()> {
    if let Some(free) = available() {
        anyhow::ensure!(
            bytes <= free,
            "{what} would need about {:.1} GiB of memory, but only {:.1} GiB is available",
            bytes as f64 / (1u64 << 30) as f64,
            free as f64 / (1u64 << 30) as f64
        );
    }
    Ok(())
}

/// Estimated bytes per generated route while a table is generated and held (measured:
/// about 170 for IPv6 and 110 for IPv4 at 2 M routes).
pub const BYTES_PER_GENERATED_ROUTE: u64 = 200;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_beyond_what_is_available_is_refused() {
        assert!(check_memory("nothing", 0).is_ok());
        if available().is_some() {
            let err = check_memory("a huge trace", u64::MAX)
                .unwrap_err()
                .to_string();
            assert!(err.contains("a huge trace") && err.contains("GiB"), "{err}");
        }
    }
}
