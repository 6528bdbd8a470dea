//! The process's memory as `/proc/self/status` reports it, for the JSON reports of `replay`
//! and `follow`.

/// A size field of `/proc/self/status` in bytes (`VmRSS` now, `VmHWM` the peak); 0 where
/// there is no such file.
pub fn rss(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(field)?.strip_prefix(':').map(str::to_string))
        })
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}
