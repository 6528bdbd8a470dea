//! Lookup traces: where the addresses fall, determinism, empty tables, kind names.

use std::net::{Ipv4Addr, Ipv6Addr};

use ipfib::{Intervals, Prefix, RouteTable};
use ipfib_gen::{GenError, TraceKind};

fn v4(routes: &[&str]) -> RouteTable<u32> {
    routes
        .iter()
        .enumerate()
        .map(|(i, s)| (Prefix::from_net(s.parse().unwrap()).unwrap(), i as u32 + 1))
        .collect()
}

fn v6(routes: &[&str]) -> RouteTable<u128> {
    routes
        .iter()
        .enumerate()
        .map(|(i, s)| (Prefix::from_net(s.parse().unwrap()).unwrap(), i as u32 + 1))
        .collect()
}

fn p4(s: &str) -> Prefix<u32> {
    Prefix::from_net(s.parse().unwrap()).unwrap()
}

#[test]
fn matched_addresses_hit_a_route_of_a_generated_table() {
    let t = ipfib_gen::fib_v6(20_000, 1);
    let iv = Intervals::from_table(&t);
    let trace = ipfib_gen::trace(&t, TraceKind::Matched, 50_000, 1);
    assert_eq!(trace.len(), 50_000);
    assert!(trace.iter().all(|&a| iv.lookup(a).is_some()));
}

#[test]
fn matched_picks_routes_not_addresses() {
    // A /8 and a /24 inside it: each route is sampled half the time, so about half the
    // addresses fall in the /24 although it is 1/65536 of the /8.
    let t = v4(&["10.0.0.0/8", "10.1.2.0/24"]);
    let small = p4("10.1.2.0/24");
    let trace = ipfib_gen::trace(&t, TraceKind::Matched, 20_000, 3);
    let inside = trace.iter().filter(|&&a| small.contains(a)).count();
    assert!((9_000..11_000).contains(&inside), "{inside}");
    assert!(trace.iter().all(|&a| p4("10.0.0.0/8").contains(a)));
}

#[test]
fn uniform_weights_by_address_count() {
    // Announced space: 10/8 (the /24 inside it adds nothing) and 192.168/16, so 1/257 of the
    // addresses are in 192.168/16: about 389 of 100,000.
    let t = v4(&["10.0.0.0/8", "10.1.2.0/24", "192.168.0.0/16"]);
    let trace = ipfib_gen::trace(&t, TraceKind::Uniform, 100_000, 4);
    let iv = Intervals::from_table(&t);
    assert!(trace.iter().all(|&a| iv.lookup(a).is_some()));
    let in_16 = trace
        .iter()
        .filter(|&&a| p4("192.168.0.0/16").contains(a))
        .count();
    assert!((280..500).contains(&in_16), "{in_16}");
    let in_24 = trace
        .iter()
        .filter(|&&a| p4("10.1.2.0/24").contains(a))
        .count();
    assert!(in_24 < 30, "{in_24}");
}

#[test]
fn uniform_stays_in_the_announced_space_of_a_generated_table() {
    let t = ipfib_gen::fib_v4(20_000, 2);
    let iv = Intervals::from_table(&t);
    let trace = ipfib_gen::trace(&t, TraceKind::Uniform, 50_000, 2);
    assert!(trace.iter().all(|&a| iv.lookup(a).is_some()));
}

#[test]
fn uniform_reaches_the_top_of_the_space_and_covers_everything_with_halves() {
    // ::/1 and 8000::/1 together are all 2^128 addresses: the sizes overflow u128.
    let t = v6(&["::/1", "8000::/1"]);
    let trace = ipfib_gen::trace(&t, TraceKind::Uniform, 1_000, 5);
    let high = trace.iter().filter(|&&a| a >> 127 == 1).count();
    assert!((400..600).contains(&high), "{high}");
    // A default route alone.
    let t = v6(&["::/0"]);
    assert_eq!(ipfib_gen::trace(&t, TraceKind::Uniform, 10, 5).len(), 10);
    // A host route at the very top.
    let t = v4(&["255.255.255.255/32"]);
    let trace = ipfib_gen::trace(&t, TraceKind::Uniform, 5, 5);
    assert!(trace.iter().all(|&a| a == u32::MAX));
    let trace = ipfib_gen::trace(&t, TraceKind::Matched, 5, 5);
    assert!(trace
        .iter()
        .all(|&a| Ipv4Addr::from(a) == Ipv4Addr::BROADCAST));
}

#[test]
fn space_ignores_the_routes() {
    let t = v6(&["2001:db8::/32"]);
    let trace = ipfib_gen::trace(&t, TraceKind::Space, 8_000, 6);
    let global = Prefix::<u128>::from_net("2000::/3".parse().unwrap()).unwrap();
    let in_global = trace.iter().filter(|&&a| global.contains(a)).count();
    // 2000::/3 is an eighth of the space: about 1,000.
    assert!((850..1_150).contains(&in_global), "{in_global}");
    let empty = RouteTable::<u128>::new();
    assert_eq!(ipfib_gen::trace(&empty, TraceKind::Space, 3, 6).len(), 3);
}

#[test]
fn empty_table_gives_an_empty_trace_or_a_typed_error() {
    let empty = RouteTable::<u32>::new();
    for kind in [TraceKind::Matched, TraceKind::Uniform] {
        assert!(ipfib_gen::trace(&empty, kind, 100, 1).is_empty());
        let err = ipfib_gen::try_trace(&empty, kind, 100, 1).unwrap_err();
        assert_eq!(
            err,
            GenError::EmptyTable {
                family: "IPv4",
                kind
            }
        );
        assert!(err.to_string().contains(kind.name()), "{err}");
    }
}

#[test]
fn same_seed_same_trace() {
    let t = ipfib_gen::fib_v6(5_000, 1);
    for kind in TraceKind::ALL {
        let a = ipfib_gen::trace(&t, kind, 1_000, 9);
        assert_eq!(a, ipfib_gen::trace(&t, kind, 1_000, 9), "{kind}");
        assert_ne!(a, ipfib_gen::trace(&t, kind, 1_000, 10), "{kind}");
        assert!(ipfib_gen::trace(&t, kind, 0, 9).is_empty());
    }
}

#[test]
fn kind_names_round_trip() {
    for kind in TraceKind::ALL {
        assert_eq!(kind.to_string().parse::<TraceKind>(), Ok(kind));
    }
    assert_eq!(" Matched ".parse::<TraceKind>(), Ok(TraceKind::Matched));
    let err = "zipf".parse::<TraceKind>().unwrap_err();
    assert!(err.to_string().contains("\"zipf\""), "{err}");
}

#[test]
fn ipv6_matched_addresses_are_inside_their_prefix_bits() {
    let t = v6(&["2001:db8:1::/48", "2001:db8:1:2::/64", "::1/128"]);
    let trace = ipfib_gen::trace(&t, TraceKind::Matched, 3_000, 12);
    let host = trace
        .iter()
        .filter(|&&a| Ipv6Addr::from(a) == Ipv6Addr::LOCALHOST)
        .count();
    assert!((850..1_150).contains(&host), "{host}");
    let iv = Intervals::from_table(&t);
    assert!(trace.iter().all(|&a| iv.lookup(a).is_some()));
}
