//! The pieces the engines' cache-line models share (this machine has no hardware counters;
//! see `../shared/PERF-FACTS.md`): the lines a read spans, and the mean over a trace.

/// Lines the `len` bytes at `p` span (64-byte lines, from the real address).
pub(crate) fn span<T>(p: *const T, len: usize) -> usize {
    let a = p as usize;
    (a + len - 1) / 64 - a / 64 + 1
}

/// The mean of `lines(a)` over `addrs` (`None` when empty).
pub(crate) fn mean<A: Copy>(addrs: &[A], lines: impl Fn(A) -> usize) -> Option<f64> {
    if addrs.is_empty() {
        return None;
    }
    let sum: usize = addrs.iter().map(|&a| lines(a)).sum();
    Some(sum as f64 / addrs.len() as f64)
}
