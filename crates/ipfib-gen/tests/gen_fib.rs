//! Synthetic tables: determinism, exact sizes, canonical prefixes, profile shares, nesting.

use ipfib::{Address, Prefix, RouteTable};
use ipfib_gen::{shape, GenError};

fn share<A: Address>(t: &RouteTable<A>, len: usize) -> f64 {
    100.0 * t.length_histogram()[len] as f64 / t.len() as f64
}

#[test]
fn same_seed_same_table_other_seed_other_table() {
    assert_eq!(ipfib_gen::fib_v6(20_000, 7), ipfib_gen::fib_v6(20_000, 7));
    assert_ne!(ipfib_gen::fib_v6(20_000, 7), ipfib_gen::fib_v6(20_000, 8));
    assert_eq!(ipfib_gen::fib_v4(20_000, 7), ipfib_gen::fib_v4(20_000, 7));
    assert_ne!(ipfib_gen::fib_v4(20_000, 7), ipfib_gen::fib_v4(20_000, 8));
}

#[test]
fn exact_counts_at_every_size() {
    for n in [0usize, 1, 2, 3, 7, 50, 333, 4_096, 25_001] {
        assert_eq!(ipfib_gen::fib_v6(n, 1).len(), n, "IPv6 {n}");
        assert_eq!(ipfib_gen::fib_v4(n, 1).len(), n, "IPv4 {n}");
    }
}

#[test]
fn the_papers_largest_synthetic_size() {
    // synth-4 of the PlanB paper: 1 M IPv6 routes.
    let t = ipfib_gen::fib_v6(1_000_000, 4);
    assert_eq!(t.len(), 1_000_000);
    assert!((share(&t, 48) - 46.32).abs() < 0.01);
}

#[test]
fn no_host_bits_and_lengths_in_range() {
    let v6 = ipfib_gen::fib_v6(30_000, 3);
    for (p, _) in v6.iter() {
        assert!(Prefix::new(p.addr(), p.len()).is_ok(), "{p}");
    }
    let v4 = ipfib_gen::fib_v4(30_000, 3);
    for (p, _) in v4.iter() {
        assert!(Prefix::new(p.addr(), p.len()).is_ok(), "{p}");
        assert!(p.len() >= 8, "{p}");
    }
}

#[test]
fn ipv6_routes_stay_in_global_unicast() {
    let t = ipfib_gen::fib_v6(50_000, 5);
    let global = Prefix::<u128>::from_net("2000::/3".parse().unwrap()).unwrap();
    let outside: Vec<_> = t
        .iter()
        .filter(|(p, _)| !global.contains(p.addr()))
        .collect();
    assert!(
        outside.is_empty(),
        "{} routes outside 2000::/3",
        outside.len()
    );
}

/// The targets are the real tables' shares as stated in the shared data README (not read
/// from the profile), so a wrong embedded histogram fails here.
#[test]
fn length_shares_match_the_stated_targets() {
    let v6 = ipfib_gen::fib_v6(100_000, 11);
    for (len, target) in [(48, 46.32), (32, 11.17), (44, 9.50), (40, 9.22), (36, 3.68)] {
        let got = share(&v6, len);
        assert!(
            (got - target).abs() < 0.01,
            "IPv6 /{len}: {got:.3} % vs {target} %"
        );
    }
    let v4 = ipfib_gen::fib_v4(100_000, 11);
    for (len, target) in [
        (24, 59.62),
        (22, 12.04),
        (23, 10.70),
        (21, 5.63),
        (20, 4.72),
    ] {
        let got = share(&v4, len);
        assert!(
            (got - target).abs() < 0.01,
            "IPv4 /{len}: {got:.3} % vs {target} %"
        );
    }
}

#[test]
fn length_shares_follow_the_profile_at_every_length() {
    let t = ipfib_gen::fib_v6(200_000, 2);
    for (len, target) in ipfib_gen::IPV6_DFZ.length_shares() {
        let got = share(&t, usize::from(len)) / 100.0;
        // Largest-remainder rounding: at most one route off per length.
        assert!((got - target).abs() <= 1.0 / 200_000.0 + 1e-12, "/{len}");
    }
}

/// Bands around the real tables' nested shares (RIS DFZ IPv6 0.588, bart Tier-1 IPv4 0.507,
/// measured by `gen_vs_real`), at sizes other than the measured ones.
#[test]
fn more_specifics_nest_under_allocations() {
    let v6 = shape::nested_share(&ipfib_gen::fib_v6(100_000, 9));
    assert!((0.50..0.67).contains(&v6), "IPv6 nested share {v6:.3}");
    let v4 = shape::nested_share(&ipfib_gen::fib_v4(400_000, 9));
    assert!((0.43..0.58).contains(&v4), "IPv4 nested share {v4:.3}");
    // Deeper nesting exists too (/32 -> /40 -> /48 chains): the real tables have 21 % (IPv6)
    // and 15 % (IPv4) of routes at depth two or more.
    let depths = shape::depth_histogram(&ipfib_gen::fib_v6(100_000, 9));
    let deep: usize = depths.iter().skip(2).sum();
    let deep = deep as f64 / 100_000.0;
    assert!((0.12..0.30).contains(&deep), "IPv6 depth >= 2: {deep:.3}");
}

#[test]
fn next_hops_repeat_but_vary() {
    let t = ipfib_gen::fib_v6(50_000, 1);
    let mut hops: Vec<u32> = t.iter().map(|(_, nh)| nh).collect();
    assert!(hops.iter().all(|&h| h >= 1));
    hops.sort_unstable();
    hops.dedup();
    // Origin-AS-like: thousands of ids, far fewer than routes.
    assert!(
        (1_000..25_000).contains(&hops.len()),
        "{} distinct",
        hops.len()
    );
}

#[test]
fn tiny_tables_are_valid() {
    for seed in 0..20 {
        let t = ipfib_gen::fib_v4(3, seed);
        assert_eq!(t.len(), 3);
        let t = ipfib_gen::fib_v6(1, seed);
        assert_eq!(t.len(), 1);
        assert_eq!(t.iter().next().map(|(p, _)| p.len()), Some(48));
    }
}

#[test]
fn more_routes_than_the_family_has_is_an_error() {
    // IPv4 has 2^33 - 1 prefixes; only a 64-bit usize can ask for more.
    if let Ok(too_many) = usize::try_from(1u64 << 33) {
        let err = ipfib_gen::IPV4_TIER1.generate(too_many, 1).unwrap_err();
        assert!(matches!(err, GenError::TooManyPrefixes { max, .. } if max == (1 << 33) - 1));
        assert!(err.to_string().contains("IPv4"), "{err}");
        assert!(ipfib_gen::fib_v4(too_many, 1).is_empty());
    }
    assert_eq!(ipfib_gen::max_prefixes::<u32>(), (1 << 33) - 1);
    assert_eq!(ipfib_gen::max_prefixes::<u128>(), u128::MAX);
}
