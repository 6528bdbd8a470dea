//! Every real table in `../shared/data` against the reference model, with every prefix given its
//! own next hop (so a wrong interval can't hide behind an equal neighbour): the first, last and a
//! random address of every prefix, plus a million random addresses, on every node-search
//! backend, single and batched. Skipped with a message when the data directory is absent.

use std::path::{Path, PathBuf};

use ipfib::engine::planb::layout::Family;
use ipfib::engine::planb::Backend;
use ipfib::{Lpm, PlanB, Reference, RouteTable};
use rand::{Rng, SeedableRng};

fn tables_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("readable data directory")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.to_string_lossy().ends_with(".txt.gz"))
        .collect();
    files.sort();
    files
}

/// The table with next hop `i` for the `i`-th prefix.
fn distinct_next_hops<A: Family>(table: &RouteTable<A>) -> RouteTable<A> {
    table
        .iter()
        .enumerate()
        .map(|(i, (p, _))| (p, i as u32))
        .collect()
}

fn probes<A: Family>(table: &RouteTable<A>, rng: &mut impl Rng) -> Vec<A> {
    let mut out = Vec::with_capacity(table.len() * 3 + 1_000_000);
    for (p, _) in table.iter() {
        let host = A::from_u128_left(rng.gen::<u128>()).and(A::mask(p.len()).not());
        out.extend([p.first(), p.last(), p.first().or(host)]);
    }
    // Half uniform over the whole space, half near announced space (a random prefix's top bits).
    let prefixes: Vec<_> = table.iter().map(|(p, _)| p).collect();
    for i in 0..1_000_000 {
        let random = A::from_u128_left(rng.gen::<u128>());
        if i % 2 == 0 || prefixes.is_empty() {
            out.push(random);
        } else {
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

fn check_family<A: Family>(name: &str, table: &RouteTable<A>) -> usize {
    if table.is_empty() {
        return 0;
    }
    let table = distinct_next_hops(table);
    let mut rng = rand::rngs::StdRng::seed_from_u64(table.len() as u64);
    let addrs = probes(&table, &mut rng);
    let reference = Reference::build(&table);
    let want: Vec<_> = addrs.iter().map(|&a| reference.lookup(a)).collect();
    let mut planb = PlanB::build(&table);
    let mut got = vec![None; addrs.len()];
    for backend in Backend::available() {
        planb.set_backend(backend).expect("available");
        planb.lookup_batch(&addrs, &mut got).expect("equal lengths");
        let wrong = got.iter().zip(&want).filter(|(g, w)| g != w).count();
        assert_eq!(
            wrong, 0,
            "{name}: {backend} batched lookups disagree with the reference on {wrong} addresses"
        );
        for (i, &a) in addrs.iter().enumerate().step_by(7) {
            assert_eq!(
                planb.lookup(a),
                want[i],
                "{name}: {backend} single lookup of {}",
                a.to_ip()
            );
        }
    }
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
        let fib = ipfib::io::load_fib(&file, &ipfib::io::LoadOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let name = file
            .file_name()
            .expect("file name")
            .to_string_lossy()
            .into_owned();
        let n = check_family(&name, &fib.v6) + check_family(&name, &fib.v4);
        eprintln!("{name}: {} routes, {n} addresses agree", fib.len());
    }
}

#[test]
fn every_real_ipv6_table_matches_reference() {
    check_dir("ipv6");
}

#[test]
fn every_real_ipv4_table_matches_reference() {
    check_dir("ipv4");
}
