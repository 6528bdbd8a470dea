//! What the four DPDK wrappers share: the build procedure (size, check memory, create, add
//! every route, measure) and the mapping of DPDK's error codes.

use std::ffi::c_int;

use ipfib::{Address, LookupError, NextHop};

use crate::eal::{self, EalInfo};
use crate::error::DpdkError;
use crate::native::NativeBulk;

/// Addresses per bulk-lookup call of [`chunked_batch`]. DPDK's bulk lookups work in groups
/// of 8 or 16; 64 keeps the stack buffers small (1.5 KiB for IPv6) while amortising the call.
pub(crate) const CHUNK: usize = 64;

/// [`ipfib::Lookup::lookup_batch`] through a DPDK bulk lookup, [`CHUNK`] addresses per call:
/// each address is converted into DPDK's layout, looked up, and each answer decoded. The
/// length check is the [`ipfib::Lookup`] contract's. (Callers that can keep addresses and
/// answers in DPDK's own types call [`NativeBulk::lookup_bulk`] directly instead.)
pub(crate) fn chunked_batch<A: Address, E: NativeBulk<A>>(
    engine: &E,
    addrs: &[A],
    out: &mut [Option<NextHop>],
) -> Result<(), LookupError> {
    ipfib::engine::check_batch(addrs.len(), out.len())?;
    let mut keys = [E::Key::default(); CHUNK];
    let mut hops = [E::Hop::default(); CHUNK];
    for (a, o) in addrs.chunks(CHUNK).zip(out.chunks_mut(CHUNK)) {
        let n = a.len();
        for (key, &addr) in keys.iter_mut().zip(a) {
            *key = E::key(addr);
        }
        engine.lookup_bulk(&keys[..n], &mut hops[..n])?;
        for (o, &hop) in o.iter_mut().zip(&hops[..n]) {
            *o = engine.decode(hop);
        }
    }
    Ok(())
}

/// The capacities one build attempt uses.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Capacity {
    /// `max_rules`/`max_routes`.
    pub routes: u32,
    /// Number of tbl8 groups.
    pub tbl8: u32,
}

/// Converts a count to a DPDK `u32` capacity, or a [`DpdkError::TooLarge`].
pub(crate) fn capacity(
    engine: &'static str,
    what: &'static str,
    count: u64,
    max: u64,
) -> Result<u32, DpdkError> {
    if count > max {
        return Err(DpdkError::TooLarge {
            engine,
            what,
            count,
            max,
        });
    }
    Ok(u32::try_from(count).expect("max is at most u32::MAX"))
}

/// Runs `attempt` with `first`; if DPDK ran out of tbl8 groups or rule slots (`ENOSPC`) and
/// `fallback` is larger, runs it once more with `fallback`. The first attempt uses the exact
/// count; the fallback is a bound that cannot run out.
pub(crate) fn with_fallback<T>(
    first: Capacity,
    fallback: Capacity,
    mut attempt: impl FnMut(Capacity) -> Result<T, DpdkError>,
) -> Result<T, DpdkError> {
    match attempt(first) {
        Err(DpdkError::Add { code, .. })
            if code == libc::ENOSPC
                && (fallback.tbl8 > first.tbl8 || fallback.routes > first.routes) =>
        {
            attempt(fallback)
        }
        other => other,
    }
}

/// Starts the EAL if needed and checks its heap can take about `needed_bytes` more.
pub(crate) fn prepare(
    engine: &'static str,
    needed_bytes: u64,
) -> Result<&'static EalInfo, DpdkError> {
    let eal = eal::ensure_eal(needed_bytes)?;
    eal::check_memory(engine, eal, needed_bytes)?;
    Ok(eal)
}

/// The error for a failed create, from DPDK's (positive) errno value.
pub(crate) fn create_error(engine: &'static str, code: c_int) -> DpdkError {
    DpdkError::Create {
        engine,
        code,
        reason: eal::strerror(code),
    }
}

/// The error for a refused route, from DPDK's (negative) return value.
pub(crate) fn add_error(engine: &'static str, prefix: impl ToString, ret: c_int) -> DpdkError {
    DpdkError::Add {
        engine,
        prefix: prefix.to_string(),
        code: -ret,
        reason: eal::strerror(-ret),
    }
}

/// Measures how much the DPDK heap grows while `build` runs, holding the build lock so no
/// other build is counted. This is how `memory_bytes` is known: DPDK has no per-structure
/// size query, but every byte these libraries allocate (tables, RIB mempools, rule hashes)
/// comes from this heap.
pub(crate) fn measured<T>(
    build: impl FnOnce() -> Result<T, DpdkError>,
) -> Result<(T, usize), DpdkError> {
    let _guard = eal::build_lock();
    let (before, _) = eal::heap_stats();
    let built = build()?;
    let (after, _) = eal::heap_stats();
    Ok((
        built,
        usize::try_from(after.saturating_sub(before)).unwrap_or(usize::MAX),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enospc() -> DpdkError {
        DpdkError::Add {
            engine: "t",
            prefix: "::/0".into(),
            code: libc::ENOSPC,
            reason: "no space".into(),
        }
    }

    #[test]
    fn retries_once_with_the_larger_capacity_after_enospc() {
        let first = Capacity {
            routes: 10,
            tbl8: 5,
        };
        let fallback = Capacity {
            routes: 10,
            tbl8: 50,
        };
        let mut tried = Vec::new();
        let got = with_fallback(first, fallback, |cap| {
            tried.push(cap.tbl8);
            if cap.tbl8 < 50 {
                Err(enospc())
            } else {
                Ok(cap.tbl8)
            }
        });
        assert_eq!(got, Ok(50));
        assert_eq!(tried, [5, 50]);
    }

    #[test]
    fn other_errors_and_equal_fallbacks_are_not_retried() {
        let cap = Capacity {
            routes: 10,
            tbl8: 5,
        };
        let mut calls = 0;
        let got: Result<(), _> = with_fallback(cap, cap, |_| {
            calls += 1;
            Err(enospc())
        });
        assert_eq!((got, calls), (Err(enospc()), 1));

        let bigger = Capacity {
            routes: 20,
            tbl8: 5,
        };
        let mut calls = 0;
        let einval = DpdkError::Add {
            engine: "t",
            prefix: "::/0".into(),
            code: libc::EINVAL,
            reason: "invalid".into(),
        };
        let got: Result<(), _> = with_fallback(cap, bigger, |_| {
            calls += 1;
            Err(einval.clone())
        });
        assert_eq!((got, calls), (Err(einval), 1));
    }
}
