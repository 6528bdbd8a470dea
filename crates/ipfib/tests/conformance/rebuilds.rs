//! The structures live tables make: engines that rebuild in part after a change
//! (`Lookup::rebuild`) and then compact (`Lookup::compact`) are checked like fresh builds,
//! through every lookup path and every backend. A partly rebuilt table can be laid out
//! differently from any fresh build (PlanB's trees then live in several segments, which its
//! walks handle on a path of their own), so only these tests reach that layout with the SIMD
//! batch walks.

use std::collections::BTreeSet;

use ipfib::engine::{self, BuildOptions, DetailValue, Lookup};
use ipfib::{Address, Backend, Prefix, RouteTable};
use proptest::prelude::*;

use crate::properties::{make_table, Raw};
use crate::support::{
    check_subject, inside, probes, reference_answers, supports, Subject, THOROUGH,
};

/// `before` with the routes `removes` picks taken out and `inserts` put in (new routes and new
/// next hops for old ones), and the prefixes that changed, sorted and without duplicates (what
/// a live table passes to `rebuild`).
fn changed_table<A: Address>(
    before: &RouteTable<A>,
    removes: &[usize],
    inserts: &RouteTable<A>,
) -> (RouteTable<A>, Vec<Prefix<A>>) {
    let mut after = before.clone();
    let mut changed = BTreeSet::new();
    let old: Vec<Prefix<A>> = before.iter().map(|(p, _)| p).collect();
    if !old.is_empty() {
        for &r in removes {
            let p = old[r % old.len()];
            after.remove(p);
            changed.insert(p);
        }
    }
    for (p, hop) in inserts.iter() {
        after.insert(p, hop);
        changed.insert(p);
    }
    (after, changed.into_iter().collect())
}

/// Addresses that probe both tables: every route's edges in either, an address inside each.
fn addresses<A: Address>(tables: &[&RouteTable<A>], random: &[u128]) -> Vec<A> {
    let mut addrs = Vec::new();
    for t in tables {
        addrs.extend(probes(t, random));
        addrs.extend(
            t.iter()
                .zip(random.iter().chain([&0x5555u128]).cycle())
                .map(|((p, _), &r)| inside(p, r)),
        );
    }
    addrs
}

/// The largest `segments` count an engine reports (1 when it reports none).
fn segments<A: Address>(e: &dyn Lookup<A>) -> u64 {
    e.describe()
        .into_iter()
        .filter(|d| d.name == "segments")
        .filter_map(|d| match d.value {
            DetailValue::Count(n) => Some(n),
            _ => None,
        })
        .max()
        .unwrap_or(1)
}

/// Compaction steps a check follows at most (each is checked in full).
const MAX_STEPS: usize = 8;

/// Every engine that rebuilds in part, with every backend: `tables[0]` built in full, then
/// rebuilt into each later table in turn (the changes between neighbours), each result checked
/// against the reference; then its compaction steps, unsettled until there are none, then a
/// settled one, each checked too. Returns the most segments any structure had.
fn check_chain<A: Address>(tables: &[(RouteTable<A>, Vec<Prefix<A>>)], random: &[u128]) -> u64 {
    let all: Vec<&RouteTable<A>> = tables.iter().map(|(t, _)| t).collect();
    let addrs = addresses(&all, random);
    let (last, _) = tables.last().expect("at least one table");
    let want = reference_answers(last, &addrs);
    let mut most = 0;
    for info in engine::engines() {
        if !supports::<A>(info) {
            continue;
        }
        for backend in Backend::available() {
            let options = BuildOptions::with_backend(backend);
            let label = format!("{}/{backend} {}", info.name(), A::FAMILY);
            let mut current = info
                .build::<A>(&tables[0].0, &options)
                .unwrap_or_else(|e| panic!("{label}: build: {e}"));
            let mut rebuilt = false;
            for (step, (table, changed)) in tables.iter().enumerate().skip(1) {
                let next = match current.rebuild(table, changed, &options) {
                    Some(r) => r.unwrap_or_else(|e| panic!("{label}: rebuild {step}: {e}")),
                    // The caller would build in full: nothing of this engine's to check.
                    None => info
                        .build::<A>(table, &options)
                        .unwrap_or_else(|e| panic!("{label}: build {step}: {e}")),
                };
                rebuilt = true;
                current = next;
            }
            if !rebuilt {
                continue;
            }
            let mut check = |e: Box<dyn Lookup<A>>, what: &str| {
                if let Err(err) = e.validate() {
                    panic!("{label} {what}: fails validate(): {err}");
                }
                most = most.max(segments(e.as_ref()));
                let subject = Subject {
                    label: format!("{label} {what}"),
                    engine: e,
                };
                check_subject(&subject, &addrs, &want, &THOROUGH);
                subject.engine
            };
            current = check(current, "after rebuilds");
            for step in 0..MAX_STEPS {
                match current.compact(&options, false, &|| false) {
                    Some(r) => {
                        let next = r.unwrap_or_else(|e| panic!("{label}: compact: {e}"));
                        current = check(next, &format!("after compaction step {step}"));
                    }
                    None => break,
                }
            }
            if let Some(r) = current.compact(&options, true, &|| false) {
                let settled = r.unwrap_or_else(|e| panic!("{label}: settled compact: {e}"));
                check(settled, "settled");
            }
        }
    }
    most
}

/// Routes in a handful of /16 chunks (so changes touch few chunks and rebuild in part), with
/// nested, adjacent and host routes, and next hops from `salt`.
fn chunky<A: Address>(chunks: &[u128], per_chunk: usize, salt: u32) -> RouteTable<A> {
    let mut t = RouteTable::new();
    for (c, &chunk) in chunks.iter().enumerate() {
        let base = A::from_u128_left(chunk << 112);
        for i in 0..per_chunk {
            let bits = (i as u128 * 0x9e37_79b9_7f4a_7c15) << 16;
            let len = [17u8, 20, 24, 24, 28, 32, 48, 64, 128][i % 9].min(A::BITS);
            let at = Prefix::covering(base, 16);
            t.insert(
                Prefix::covering(inside(at, bits), len),
                salt.wrapping_mul(31)
                    .wrapping_add((c * per_chunk + i) as u32 % 7),
            );
        }
        t.insert(Prefix::covering(base, 16), salt.wrapping_add(c as u32));
    }
    t
}

#[test]
fn partly_rebuilt_and_compacted_tables_match_the_reference() {
    fn family<A: Address>() -> u64 {
        let chunks = [0x2001, 0x2a02, 0x0a05, 0xffff, 0x0000];
        let base = chunky::<A>(&chunks, 300, 1);
        let inserts: RouteTable<A> = chunky::<A>(&chunks[..2], 40, 9);
        let (second, changed) =
            changed_table(&base, &(0..50).map(|i| i * 7).collect::<Vec<_>>(), &inserts);
        let inserts = chunky::<A>(&chunks[2..4], 25, 17);
        let (third, changed3) = changed_table(&second, &[3, 11, 400], &inserts);
        check_chain(
            &[(base, Vec::new()), (second, changed), (third, changed3)],
            &[0, u128::MAX, 0x2001_0db8 << 96, 0x0a05_1234 << 96],
        )
    }
    let most = family::<u128>().max(family::<u32>());
    assert!(
        most > 1,
        "no partly rebuilt structure had several segments: the test no longer reaches the \
         layout it is for"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn random_changes_rebuild_to_the_reference_ipv6(
        base in prop::collection::vec(any::<Raw>(), 0..120),
        inserts in prop::collection::vec(any::<Raw>(), 0..24),
        removes in prop::collection::vec(any::<usize>(), 0..24),
        random in prop::collection::vec(any::<u128>(), 0..32),
    ) {
        random_changes::<u128>(&base, &inserts, &removes, &random);
    }

    #[test]
    fn random_changes_rebuild_to_the_reference_ipv4(
        base in prop::collection::vec(any::<Raw>(), 0..120),
        inserts in prop::collection::vec(any::<Raw>(), 0..24),
        removes in prop::collection::vec(any::<usize>(), 0..24),
        random in prop::collection::vec(any::<u128>(), 0..32),
    ) {
        random_changes::<u32>(&base, &inserts, &removes, &random);
    }
}

fn random_changes<A: Address>(base: &[Raw], inserts: &[Raw], removes: &[usize], random: &[u128]) {
    let before = make_table::<A>(base);
    let (after, changed) = changed_table(&before, removes, &make_table::<A>(inserts));
    check_chain(&[(before, Vec::new()), (after, changed)], random);
}
