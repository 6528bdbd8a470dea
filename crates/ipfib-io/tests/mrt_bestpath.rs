//! Best-path selection against the shared best-path tables, which were derived from the same
//! RIBs by an independent tool with the same rule (shortest AS path, an AS_SET counting 1, ties
//! to the lowest peer index). Their next-hop ids rank next hops by route count, ours number
//! them by first appearance, so the comparison is of the prefix sets and of the partition of
//! prefixes by next hop.

#![cfg(feature = "mrt")]

mod mrt_support;

use std::collections::{BTreeMap, BTreeSet};

use ipfib::Table;
use ipfib_io::{load_fib_with_report, FileFormat, LoadOptions};
use mrt_support::data_file;

/// Every route of both families as (prefix text, value).
fn routes(fib: &Table) -> BTreeMap<String, u32> {
    let v4 = fib.v4().iter().map(|(p, v)| (p.to_string(), v));
    let v6 = fib.v6().iter().map(|(p, v)| (p.to_string(), v));
    v4.chain(v6).collect()
}

/// The prefixes grouped by value, with the values themselves forgotten.
fn partition(routes: &BTreeMap<String, u32>) -> BTreeSet<BTreeSet<String>> {
    let mut groups: BTreeMap<u32, BTreeSet<String>> = BTreeMap::new();
    for (p, v) in routes {
        groups.entry(*v).or_default().insert(p.clone());
    }
    groups.into_values().collect()
}

fn compare(rib: &str, reference: &str, format: FileFormat) {
    let (Some(rib), Some(reference)) = (data_file(rib), data_file(reference)) else {
        return;
    };
    let (ours, report) = load_fib_with_report(&rib, &LoadOptions::default()).unwrap();
    assert_eq!(report.format, format);
    assert_eq!(report.skipped_records + report.skipped_paths, 0);
    let (theirs, _) = load_fib_with_report(&reference, &LoadOptions::default()).unwrap();
    let (ours, theirs) = (routes(&ours), routes(&theirs));

    let only_ours: Vec<_> = ours
        .keys()
        .filter(|p| !theirs.contains_key(*p))
        .take(10)
        .collect();
    let only_theirs: Vec<_> = theirs
        .keys()
        .filter(|p| !ours.contains_key(*p))
        .take(10)
        .collect();
    assert!(
        only_ours.is_empty() && only_theirs.is_empty(),
        "prefix sets differ: only ours {only_ours:?}, only the reference {only_theirs:?}"
    );

    let (po, pt) = (partition(&ours), partition(&theirs));
    if po != pt {
        // Name prefixes whose group differs, to point at the selection that went wrong: a
        // group is identified by its first prefix.
        let group_of = |parts: &BTreeSet<BTreeSet<String>>| -> BTreeMap<String, String> {
            parts
                .iter()
                .flat_map(|g| {
                    let id = g.first().cloned().unwrap_or_default();
                    g.iter().map(move |p| (p.clone(), id.clone()))
                })
                .collect()
        };
        let (go, gt) = (group_of(&po), group_of(&pt));
        let wrong: Vec<_> = go.keys().filter(|p| go[*p] != gt[*p]).take(10).collect();
        panic!(
            "next-hop partitions differ ({} groups vs {}); e.g. prefixes {wrong:?}",
            po.len(),
            pt.len()
        );
    }
}

#[test]
fn routeviews6_2015_best_paths_match_the_reference_table() {
    compare(
        "mrt/rib/routeviews6.rib.20150922.1200.bz2",
        "ipv6/ipv6-routeviews6-20150922-bestpath.txt.gz",
        FileFormat::MrtTableDumpV2,
    );
}

#[test]
fn rrc00_2002_best_paths_match_the_reference_table() {
    compare(
        "mrt/rib/rrc00.bview.20020722.2337.gz",
        "ipv4/ipv4-rrc00-20020722-bestpath.txt.gz",
        FileFormat::MrtTableDump,
    );
}
