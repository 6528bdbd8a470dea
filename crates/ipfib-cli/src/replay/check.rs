//! The final check of `ipfib replay`: the live table against the reference engine built from
//! the route set the stream should have produced.

use ipfib::engine::{self, BuildOptions, Lookup};
use ipfib::{Address, LiveFib, NextHop, RouteTable, Table};
use ipfib_gen::TraceKind;

/// Random addresses checked per family, besides every prefix's first and last address.
const SAMPLE: usize = 100_000;

/// Addresses whose answer differs between the live table's current version and the reference
/// engine on `expected` (0 = the check passed). Checked: the first and last address of every
/// prefix of `expected` and of the live route set, a sample matched to `expected` and a sample
/// uniform over the whole address space.
pub fn differences(live: &LiveFib, expected: &Table, seed: u64) -> anyhow::Result<u64> {
    let snap = live.snapshot();
    let actual = live.table();
    let v4 = family(snap.v4(), expected.v4(), actual.v4(), seed)?;
    let v6 = family(snap.v6(), expected.v6(), actual.v6(), seed)?;
    Ok(v4 + v6)
}

fn family<A: Address>(
    live: &dyn Lookup<A>,
    expected: &RouteTable<A>,
    actual: &RouteTable<A>,
    seed: u64,
) -> anyhow::Result<u64> {
    let reference = engine::by_name("reference")?.build(expected, &BuildOptions::default())?;
    let ends = |t: &RouteTable<A>| -> Vec<A> {
        t.iter().flat_map(|(p, _)| [p.first(), p.last()]).collect()
    };
    let mut addrs = ends(expected);
    addrs.extend(ends(actual));
    addrs.extend(ipfib_gen::trace(expected, TraceKind::Matched, SAMPLE, seed));
    addrs.extend(ipfib_gen::trace(
        expected,
        TraceKind::Space,
        SAMPLE,
        seed ^ 1,
    ));
    let differ = |a: &A| -> bool {
        let (x, y): (Option<NextHop>, Option<NextHop>) = (live.lookup(*a), reference.lookup(*a));
        x != y
    };
    Ok(addrs.iter().filter(|a| differ(a)).count() as u64)
}
