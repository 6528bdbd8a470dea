//! Every real table of the shared data set (`ipv4/` and `ipv6/`) against the reference model,
//! with every prefix given its own next hop (so a wrong interval cannot hide behind a neighbour
//! with an equal answer): the first, the last and a random address of every prefix, plus
//! 200,000 random addresses per table (half uniform over the space, half near announced
//! space), on every engine and backend, single and batched. Skipped with a message when the
//! data directory is absent.

use std::path::{Path, PathBuf};

use ipfib::{Address, NextHop, RouteTable};
use rand::{Rng, SeedableRng};

use crate::support::{check_table, inside, Plan};

/// Random addresses per table, besides the three per prefix.
const RANDOM: usize = 200_000;

/// Every address single and in two whole batches; the chunked lengths on a window.
const REAL: Plan = Plan {
    single_step: 1,
    misses: &[u32::MAX],
    batch_lengths: &[1, 31, 32, 33, 100, 1000],
    window: 40_000,
    model_step: 64,
};

fn tables_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.to_string_lossy().ends_with(".txt.gz"))
        .collect();
    files.sort();
    files
}

/// The table with next hop `i` for its `i`-th prefix.
fn distinct_next_hops<A: Address>(table: &RouteTable<A>) -> RouteTable<A> {
    table
        .iter()
        .enumerate()
        .map(|(i, (p, _))| (p, i as NextHop))
        .collect()
}

fn probes<A: Address>(table: &RouteTable<A>, rng: &mut impl Rng) -> Vec<A> {
    let mut out = Vec::with_capacity(table.len() * 3 + RANDOM);
    for (p, _) in table.iter() {
        out.extend([p.first(), p.last(), inside(p, rng.gen())]);
    }
    let prefixes: Vec<_> = table.iter().map(|(p, _)| p).collect();
    for i in 0..RANDOM {
        let random = A::from_u128_left(rng.gen::<u128>());
        if i % 2 == 0 {
            out.push(random);
        } else {
            // Near announced space: a random prefix's top bits (8 fewer than its length).
            let p = prefixes[rng.gen_range(0..prefixes.len())];
            let keep = p.len().saturating_sub(8);
            out.push(
                p.first()
                    .and(A::mask(keep))
                    .or(random.and(A::mask(keep).not())),
            );
        }
    }
    out
}

/// Checks one family of one file; returns the addresses checked.
fn check_family<A: Address>(name: &str, table: &RouteTable<A>) -> usize {
    if table.is_empty() {
        return 0;
    }
    let table = distinct_next_hops(table);
    let mut rng = rand::rngs::StdRng::seed_from_u64(table.len() as u64);
    let addrs = probes(&table, &mut rng);
    let subjects = check_table(&table, &addrs, &REAL);
    eprintln!(
        "{name}: {} {} routes, {} addresses agree on {subjects} engine/backend pairs",
        table.len(),
        A::FAMILY,
        addrs.len()
    );
    addrs.len()
}

fn check_dir(sub: &str) {
    let Some(data) = ipfib_testdata::shared_data() else {
        return;
    };
    let files = tables_in(&data.join(sub));
    assert!(
        !files.is_empty(),
        "no tables in {}",
        data.join(sub).display()
    );
    for file in files {
        let table = ipfib_io::load_fib(&file, &ipfib_io::LoadOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let name = file
            .file_name()
            .expect("file name")
            .to_string_lossy()
            .into_owned();
        let n = check_family(&name, table.v6()) + check_family(&name, table.v4());
        assert!(n > 0, "{name}: no routes");
    }
}

#[test]
fn every_real_ipv6_table_matches_the_reference() {
    check_dir("ipv6");
}

#[test]
fn every_real_ipv4_table_matches_the_reference() {
    check_dir("ipv4");
}
