//! The contract of the public API, used only the way a program embedding the crate uses it:
//! `Table` for the routes of both families (`ipnet` prefixes, `std::net` addresses), `Fib`
//! built by engine name, and the typed errors. Every registered engine is built through
//! `Fib::build`; the conformance suite (`tests/conformance`) checks the engines' answers in
//! depth, this file checks what a caller sees.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipfib::engine::{self, BuildOptions};
use ipfib::{Backend, BuildError, Fib, LookupError, NextHop, PrefixError, Table};
use ipnet::IpNet;
use proptest::prelude::*;

fn net(s: &str) -> IpNet {
    s.parse().expect("test prefix")
}

fn ip(s: &str) -> IpAddr {
    s.parse().expect("test address")
}

/// Routes of both families: nesting, host routes at the top of the space, and an
/// IPv4-mapped range on the IPv6 side.
fn sample() -> Table {
    let mut t = Table::new();
    for (prefix, nh) in [
        ("0.0.0.0/0", 1),
        ("10.0.0.0/8", 2),
        ("10.1.0.0/16", 3),
        ("10.1.2.0/24", 4),
        ("192.0.2.0/24", 5),
        ("255.255.255.255/32", 6),
        ("2001:db8::/32", 7),
        ("2001:db8:1::/48", 8),
        ("2001:db8:1:2::/64", 9),
        ("2001:db8:1:2::1/128", 10),
        ("::ffff:0:0/96", 11),
        ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128", 12),
    ] {
        assert_eq!(t.insert(net(prefix), nh), Ok(None), "{prefix}");
    }
    t
}

/// Addresses around every route (first, last, neighbours), a few fixed ones, and each IPv4
/// address again as an IPv4-mapped and an IPv4-compatible IPv6 address.
fn probes(t: &Table) -> Vec<IpAddr> {
    let mut out = vec![
        ip("0.0.0.0"),
        ip("255.255.255.255"),
        ip("::"),
        ip("::1"),
        ip("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
        ip("10.1.2.3"),
        ip("2001:db8:1:2::2"),
    ];
    for (n, _) in t.iter() {
        match n {
            IpNet::V4(n) => {
                for a in [u32::from(n.network()), u32::from(n.broadcast())] {
                    out.extend(
                        [a.wrapping_sub(1), a, a.wrapping_add(1)].map(|a| IpAddr::V4(a.into())),
                    );
                }
            }
            IpNet::V6(n) => {
                for a in [u128::from(n.network()), u128::from(n.broadcast())] {
                    out.extend(
                        [a.wrapping_sub(1), a, a.wrapping_add(1)].map(|a| IpAddr::V6(a.into())),
                    );
                }
            }
        }
    }
    let v4: Vec<Ipv4Addr> = out
        .iter()
        .filter_map(|a| match a {
            IpAddr::V4(a) => Some(*a),
            IpAddr::V6(_) => None,
        })
        .collect();
    for a in v4 {
        out.push(IpAddr::V6(a.to_ipv6_mapped()));
        out.push(IpAddr::V6(Ipv6Addr::from(u128::from(u32::from(a)))));
    }
    out
}

/// Whether `info` builds one-route tables of both families (single-family engines, such as
/// DXR for IPv4, refuse the other family's routes).
fn dual_stack(info: &engine::EngineInfo) -> bool {
    fn holds<A: ipfib::Address>(info: &engine::EngineInfo) -> bool {
        let one: ipfib::RouteTable<A> = [(ipfib::Prefix::new(A::ZERO, 0).expect("/0"), 1)]
            .into_iter()
            .collect();
        info.build(&one, &BuildOptions::default()).is_ok()
    }
    holds::<u32>(info) && holds::<u128>(info)
}

/// Every registered engine's name that holds both families: the dual-stack tests run these;
/// `a_single_family_engine_builds_its_family_and_refuses_the_other` the rest.
fn engine_names() -> Vec<&'static str> {
    engine::engines()
        .iter()
        .filter(|e| dual_stack(e))
        .map(|e| e.name())
        .collect()
}

#[test]
fn a_single_family_engine_builds_its_family_and_refuses_the_other() {
    let t = sample();
    for info in engine::engines().iter().filter(|e| !dual_stack(e)) {
        let name = info.name();
        let Err(err) = Fib::build(&t, name) else {
            panic!("{name}: a dual-stack table is refused")
        };
        assert!(
            matches!(err, BuildError::UnsupportedFamily { engine, .. } if engine == name),
            "{name}: {err}"
        );
        let mut v4 = Table::new();
        let mut v6 = Table::new();
        for (net, nh) in t.iter() {
            match net {
                IpNet::V4(_) => v4.insert(net, nh).unwrap(),
                IpNet::V6(_) => v6.insert(net, nh).unwrap(),
            };
        }
        let mine = if Fib::build(&v4, name).is_ok() {
            v4
        } else {
            v6
        };
        let fib = Fib::build(&mine, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        check_fib(&fib, &mine, &probes(&mine));
    }
}

/// `Fib::lookup`, `Fib::lookup_prefix` and the per-family engines agree with
/// `Table::longest_match` on every probe.
fn check_fib(fib: &Fib, t: &Table, addrs: &[IpAddr]) {
    let name = fib.engine_name();
    for &a in addrs {
        let want = t.longest_match(a);
        assert_eq!(fib.lookup_prefix(a), want, "{name}: lookup_prefix({a})");
        assert_eq!(fib.lookup(a), want.map(|(_, nh)| nh), "{name}: lookup({a})");
        match a {
            IpAddr::V4(v4) => assert_eq!(
                fib.v4().lookup(u32::from(v4)),
                fib.lookup(a),
                "{name}: v4()"
            ),
            IpAddr::V6(v6) => assert_eq!(
                fib.v6().lookup(u128::from(v6)),
                fib.lookup(a),
                "{name}: v6()"
            ),
        }
        if let Some((route, nh)) = want {
            assert!(route.contains(&a), "{route} contains {a}");
            assert_eq!(t.get(&route), Some(nh));
        }
    }
}

#[test]
fn every_registered_engine_builds_a_dual_stack_fib_by_name() {
    let t = sample();
    let addrs = probes(&t);
    assert!(!engine_names().is_empty());
    for name in engine_names() {
        let fib = Fib::build(&t, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(fib.engine_name(), name);
        check_fib(&fib, &t, &addrs);
        fib.v4().validate().expect("a built IPv4 engine is valid");
        fib.v6().validate().expect("a built IPv6 engine is valid");
        assert_eq!(
            fib.memory_bytes(),
            fib.v4().memory_bytes() + fib.v6().memory_bytes()
        );

        let upper = Fib::build(&t, &name.to_ascii_uppercase()).expect("names ignore ASCII case");
        assert_eq!(upper.engine_name(), name);

        for backend in Backend::available() {
            let fib = Fib::build_with(&t, name, &BuildOptions::with_backend(backend))
                .unwrap_or_else(|e| panic!("{name}/{backend}: {e}"));
            check_fib(&fib, &t, &addrs);
        }
    }
}

#[test]
fn the_crate_documentation_example_answers_as_documented() {
    let mut table = Table::new();
    table.insert(net("2001:db8::/32"), 1).unwrap();
    table.insert(net("2001:db8:1::/48"), 2).unwrap();
    table.insert(net("192.0.2.0/24"), 3).unwrap();
    for name in engine_names() {
        let fib = Fib::build(&table, name).unwrap();
        assert_eq!(fib.lookup(ip("2001:db8:1::1")), Some(2), "{name}");
        assert_eq!(fib.lookup(ip("2001:db8:2::1")), Some(1), "{name}");
        assert_eq!(fib.lookup(ip("192.0.2.77")), Some(3), "{name}");
        assert_eq!(fib.lookup(ip("2001:db9::")), None, "{name}");
        assert_eq!(
            fib.lookup_prefix(ip("2001:db8:1::1")),
            Some((net("2001:db8:1::/48"), 2)),
            "{name}"
        );
    }
}

#[test]
fn an_unknown_engine_name_is_a_typed_error_listing_the_known_ones() {
    let t = sample();
    for bad in ["no-such-engine", ""] {
        match Fib::build(&t, bad) {
            Err(BuildError::UnknownEngine { name, known }) => {
                assert_eq!(name, bad);
                for n in engine_names() {
                    assert!(known.contains(n), "{known:?} lists {n}");
                }
                let msg = BuildError::UnknownEngine { name, known }.to_string();
                assert!(msg.contains(&format!("{bad:?}")), "{msg}");
            }
            other => panic!("{bad:?}: {other:?}"),
        }
    }
}

#[test]
fn batch_lookups_write_the_chosen_miss_value_exactly_where_no_route_matches() {
    let t = sample();
    let addrs = probes(&t);
    let v4: Vec<u32> = addrs
        .iter()
        .filter_map(|a| match a {
            IpAddr::V4(a) => Some(u32::from(*a)),
            IpAddr::V6(_) => None,
        })
        .collect();
    let v6: Vec<u128> = addrs
        .iter()
        .filter_map(|a| match a {
            IpAddr::V6(a) => Some(u128::from(*a)),
            IpAddr::V4(_) => None,
        })
        .collect();
    // Long enough for full 32-lane groups and a remainder.
    let v4: Vec<u32> = v4.iter().copied().cycle().take(1000).collect();
    let v6: Vec<u128> = v6.iter().copied().cycle().take(1000).collect();
    for name in engine_names() {
        let fib = Fib::build(&t, name).unwrap();
        for miss in [0, u32::MAX, 12_345] {
            for len in [0, 1, 31, 32, 33, 100, 1000] {
                let mut out = vec![0xDEAD_BEEF_u32; len];
                fib.lookup_v4_batch(&v4[..len], &mut out, miss).unwrap();
                for (a, o) in v4[..len].iter().zip(&out) {
                    let want = fib.lookup(IpAddr::V4((*a).into())).unwrap_or(miss);
                    assert_eq!(*o, want, "{name}: {} miss {miss}", Ipv4Addr::from(*a));
                }
                let mut out = vec![0xDEAD_BEEF_u32; len];
                fib.lookup_v6_batch(&v6[..len], &mut out, miss).unwrap();
                for (a, o) in v6[..len].iter().zip(&out) {
                    let want = fib.lookup(IpAddr::V6((*a).into())).unwrap_or(miss);
                    assert_eq!(*o, want, "{name}: {} miss {miss}", Ipv6Addr::from(*a));
                }
            }
        }
        // A length mismatch is an error, and nothing is written.
        let mut out = vec![0xDEAD_BEEF_u32; 3];
        assert_eq!(
            fib.lookup_v4_batch(&v4[..4], &mut out, 0),
            Err(LookupError::BatchLength { addrs: 4, out: 3 })
        );
        assert_eq!(
            fib.lookup_v6_batch(&v6[..2], &mut out, 0),
            Err(LookupError::BatchLength { addrs: 2, out: 3 })
        );
        assert_eq!(out, [0xDEAD_BEEF; 3], "{name}: nothing written on error");
    }
}

/// An IPv4 address never matches an IPv6 route and vice versa; an IPv4-mapped IPv6 address
/// (`::ffff:a.b.c.d`) is an IPv6 address and matches only IPv6 routes.
#[test]
fn ipv4_and_ipv6_routes_never_answer_the_other_family() {
    let v4_only: Table = [(net("0.0.0.0/0"), 4)].into_iter().collect();
    let v6_only: Table = [(net("::/0"), 6)].into_iter().collect();
    let v6_addrs = [
        "::",
        "::ffff:10.1.2.3",
        "::10.1.2.3",
        "::ffff:0.0.0.0",
        "2001:db8::1",
        "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
    ]
    .map(ip);
    let v4_addrs = ["0.0.0.0", "10.1.2.3", "255.255.255.255"].map(ip);
    for name in engine_names() {
        let fib = Fib::build(&v4_only, name).unwrap();
        for a in v6_addrs {
            assert_eq!(fib.lookup(a), None, "{name}: {a} among IPv4 routes");
            assert_eq!(fib.lookup_prefix(a), None, "{name}: {a}");
            assert_eq!(v4_only.longest_match(a), None, "Table: {a}");
        }
        let mut out = [0u32; 6];
        let ints = v6_addrs.map(|a| match a {
            IpAddr::V6(a) => u128::from(a),
            IpAddr::V4(_) => unreachable!(),
        });
        fib.lookup_v6_batch(&ints, &mut out, 99).unwrap();
        assert_eq!(
            out, [99; 6],
            "{name}: batched IPv6 lookups among IPv4 routes"
        );
        for a in v4_addrs {
            assert_eq!(fib.lookup(a), Some(4), "{name}: {a}");
        }

        let fib = Fib::build(&v6_only, name).unwrap();
        for a in v4_addrs {
            assert_eq!(fib.lookup(a), None, "{name}: {a} among IPv6 routes");
            assert_eq!(fib.lookup_prefix(a), None, "{name}: {a}");
        }
        let mut out = [0u32; 3];
        fib.lookup_v4_batch(&[0, 0x0a01_0203, u32::MAX], &mut out, 99)
            .unwrap();
        assert_eq!(
            out, [99; 3],
            "{name}: batched IPv4 lookups among IPv6 routes"
        );
        for a in v6_addrs {
            assert_eq!(fib.lookup(a), Some(6), "{name}: {a}");
        }
    }

    // Both families, and a mapped range on the IPv6 side: the mapped address takes the IPv6
    // route; converted with `to_ipv4_mapped` it takes the IPv4 one.
    let t: Table = [
        (net("10.0.0.0/8"), 1),
        (net("::ffff:0:0/96"), 2),
        (net("::ffff:10.1.0.0/112"), 3),
    ]
    .into_iter()
    .collect();
    for name in engine_names() {
        let fib = Fib::build(&t, name).unwrap();
        let mapped: Ipv6Addr = "::ffff:10.1.2.3".parse().unwrap();
        assert_eq!(
            fib.lookup_prefix(IpAddr::V6(mapped)),
            Some((net("::ffff:10.1.0.0/112"), 3)),
            "{name}"
        );
        let other: Ipv6Addr = "::ffff:10.2.0.1".parse().unwrap();
        assert_eq!(
            fib.lookup_prefix(IpAddr::V6(other)),
            Some((net("::ffff:0:0/96"), 2)),
            "{name}"
        );
        let v4 = mapped.to_ipv4_mapped().expect("a mapped address");
        assert_eq!(
            fib.lookup_prefix(IpAddr::V4(v4)),
            Some((net("10.0.0.0/8"), 1)),
            "{name}"
        );
        assert_eq!(
            fib.lookup(ip("::10.1.2.3")),
            None,
            "{name}: IPv4-compatible is not mapped"
        );
        assert_eq!(fib.lookup(ip("11.0.0.0")), None, "{name}");
    }
}

#[test]
fn remove_then_rebuild_no_longer_answers_the_removed_route() {
    let mut t = sample();
    let before = t.clone();
    let old = Fib::build(&t, "planb").unwrap();

    assert_eq!(
        t.remove(&net("10.1.0.1/16")),
        None,
        "host bits name no route"
    );
    assert_eq!(t.remove(&net("10.1.0.0/17")), None, "not a route");
    assert_eq!(t, before, "failed removes change nothing");

    assert_eq!(t.remove(&net("10.1.0.0/16")), Some(3));
    assert_eq!(t.remove(&net("10.1.0.0/16")), None, "already removed");
    assert_eq!(t.remove(&net("2001:db8:1::/48")), Some(8));
    assert_eq!(t.len(), before.len() - 2);
    assert_eq!(t.get(&net("10.1.0.0/16")), None);

    for name in engine_names() {
        let fib = Fib::build(&t, name).unwrap();
        assert_eq!(
            fib.lookup_prefix(ip("10.1.9.9")),
            Some((net("10.0.0.0/8"), 2)),
            "{name}"
        );
        assert_eq!(fib.lookup(ip("10.1.2.3")), Some(4), "{name}: the /24 stays");
        assert_eq!(
            fib.lookup_prefix(ip("2001:db8:1::5")),
            Some((net("2001:db8::/32"), 7)),
            "{name}"
        );
        assert_eq!(
            fib.lookup(ip("2001:db8:1:2::5")),
            Some(9),
            "{name}: the /64 stays"
        );
        check_fib(&fib, &t, &probes(&before));
    }
    // A built Fib is a snapshot: changing the table afterwards does not change it.
    assert_eq!(old.lookup(ip("10.1.9.9")), Some(3));
    assert_eq!(old.table(), before);
}

#[test]
fn insert_with_host_bits_is_an_error_and_leaves_the_table_unchanged() {
    let mut t = sample();
    let before = t.clone();
    match t.insert(net("10.0.0.1/8"), 9) {
        Err(PrefixError::HostBitsSet { addr, len, network }) => {
            assert_eq!(
                (addr.as_str(), len, network.as_str()),
                ("10.0.0.1", 8, "10.0.0.0")
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        t.insert(net("2001:db8::1/32"), 9),
        Err(PrefixError::HostBitsSet { len: 32, .. })
    ));
    assert_eq!(t, before);
    assert_eq!(t.get(&net("10.0.0.1/8")), None, "host bits name no route");

    // Replacing a route returns the old next hop; the count stays.
    assert_eq!(t.insert(net("10.0.0.0/8"), 20), Ok(Some(2)));
    assert_eq!(t.get(&net("10.0.0.0/8")), Some(20));
    assert_eq!(t.len(), before.len());
    assert!(!t.is_empty() && Table::new().is_empty());
}

#[test]
fn iteration_is_ipv4_first_then_by_address_then_length() {
    let t: Table = [
        (net("2001:db8::/48"), 1),
        (net("10.0.0.0/16"), 2),
        (net("::/0"), 3),
        (net("10.0.0.0/8"), 4),
        (net("2001:db8::/32"), 5),
        (net("9.0.0.0/8"), 6),
        (net("0.0.0.0/0"), 7),
        (net("ffff::/16"), 8),
    ]
    .into_iter()
    .collect();
    let order: Vec<(String, NextHop)> = t.iter().map(|(n, nh)| (n.to_string(), nh)).collect();
    let want = [
        ("0.0.0.0/0", 7),
        ("9.0.0.0/8", 6),
        ("10.0.0.0/8", 4),
        ("10.0.0.0/16", 2),
        ("::/0", 3),
        ("2001:db8::/32", 5),
        ("2001:db8::/48", 1),
        ("ffff::/16", 8),
    ]
    .map(|(n, nh)| (n.to_string(), nh));
    assert_eq!(order, want);
    assert_eq!(t.len(), 8);
    assert_eq!(t.v4().len(), 4);
    assert_eq!(t.v6().len(), 4);
    assert_eq!(t.family::<u32>(), t.v4());
    assert_eq!(t.family::<u128>(), t.v6());
}

#[test]
fn from_iterator_and_extend_keep_the_last_route_and_clear_host_bits() {
    let t: Table = [
        (net("10.0.0.0/8"), 1),
        (net("10.0.0.0/8"), 2),
        (net("10.9.9.9/16"), 3),
        (net("2001:db8::1/32"), 4),
    ]
    .into_iter()
    .collect();
    assert_eq!(t.len(), 3);
    assert_eq!(
        t.get(&net("10.0.0.0/8")),
        Some(2),
        "the later duplicate wins"
    );
    assert_eq!(t.get(&net("10.9.0.0/16")), Some(3), "host bits cleared");
    assert_eq!(t.get(&net("2001:db8::/32")), Some(4));

    let mut e = t.clone();
    e.extend([(net("10.0.0.0/8"), 5), (net("::/0"), 6), (net("::/0"), 7)]);
    assert_eq!(e.len(), 4);
    assert_eq!(e.get(&net("10.0.0.0/8")), Some(5));
    assert_eq!(e.get(&net("::/0")), Some(7));

    let (v4, v6) = e.clone().into_families();
    assert_eq!(Table::from_families(v4.clone(), v6.clone()), e);
    assert_eq!(Table::from(v4).len() + Table::from(v6).len(), e.len());
}

#[test]
fn a_fib_gives_back_the_table_it_was_built_from() {
    for t in [sample(), Table::new(), probes_table()] {
        for name in engine_names() {
            let fib = Fib::build(&t, name).unwrap();
            assert_eq!(fib.table(), t, "{name}");
            let rebuilt = Fib::build(&fib.table(), name).unwrap();
            check_fib(&rebuilt, &t, &probes(&sample()));
        }
    }
}

/// A table of host routes and their covering prefixes from the sample's probes.
fn probes_table() -> Table {
    probes(&sample())
        .into_iter()
        .enumerate()
        .map(|(i, a)| (IpNet::from(a), i as NextHop))
        .collect()
}

#[test]
fn an_empty_fib_answers_nothing() {
    let t = Table::new();
    for name in engine_names() {
        let fib = Fib::build(&t, name).unwrap();
        for a in probes(&sample()) {
            assert_eq!(fib.lookup(a), None, "{name}: {a}");
            assert_eq!(fib.lookup_prefix(a), None, "{name}: {a}");
        }
        let mut out = [1u32; 40];
        fib.lookup_v4_batch(&[7; 40], &mut out, 0).unwrap();
        assert_eq!(out, [0; 40]);
    }
}

// ---------------------------------------------------------------------------------------------
// Properties: supernets, subnets, longest match and iteration against a naive model.

/// A route of either family in a small region, so nesting and shared starts are common:
/// IPv4 inside 10.0.0.0/8 (sometimes anywhere), IPv6 inside 2001:db8::/32 (sometimes
/// anywhere), with lengths down to /0.
fn any_net() -> impl Strategy<Value = IpNet> {
    let v4 = (any::<u32>(), 0u8..=32, any::<bool>()).prop_map(|(bits, len, anywhere)| {
        let addr = if anywhere {
            bits
        } else {
            0x0a00_0000 | (bits & 0x00ff_ffff)
        };
        IpNet::from(ipnet::Ipv4Net::new(addr.into(), len).unwrap()).trunc()
    });
    let v6 = (any::<u128>(), 0u8..=128, any::<bool>()).prop_map(|(bits, len, anywhere)| {
        let addr = if anywhere {
            bits
        } else {
            (0x2001_0db8u128 << 96) | (bits & ((1u128 << 96) - 1))
        };
        IpNet::from(ipnet::Ipv6Net::new(addr.into(), len).unwrap()).trunc()
    });
    prop_oneof![v4, v6]
}

/// The same as `any_net`, or a route of `routes` with more or fewer bits, and host bits kept
/// (queries ignore them).
fn query(routes: Vec<IpNet>) -> impl Strategy<Value = IpNet> {
    let n = routes.len();
    prop_oneof![
        any_net(),
        (any::<prop::sample::Index>(), any::<i8>(), any::<u128>()).prop_map(
            move |(i, delta, bits)| {
                if n == 0 {
                    return net("10.0.0.0/8");
                }
                let r = routes[i.index(n)];
                let len = (i16::from(r.prefix_len()) + i16::from(delta % 9))
                    .clamp(0, i16::from(r.max_prefix_len())) as u8;
                match r {
                    IpNet::V4(r) => {
                        let a = u32::from(r.network())
                            | (bits as u32
                                & !u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0));
                        IpNet::from(ipnet::Ipv4Net::new(a.into(), len).unwrap())
                    }
                    IpNet::V6(r) => {
                        let a = u128::from(r.network())
                            | (bits & !u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0));
                        IpNet::from(ipnet::Ipv6Net::new(a.into(), len).unwrap())
                    }
                }
            }
        ),
    ]
}

/// Sort key of a route in `Table::iter` order: family, address, length.
fn order(n: &IpNet) -> (u8, u128, u8) {
    match n {
        IpNet::V4(n) => (4, u128::from(u32::from(n.network())), n.prefix_len()),
        IpNet::V6(n) => (6, u128::from(n.network()), n.prefix_len()),
    }
}

fn table_and_queries() -> impl Strategy<Value = (Vec<(IpNet, NextHop)>, Vec<IpNet>)> {
    prop::collection::vec((any_net(), any::<u32>()), 0..40).prop_flat_map(|routes| {
        let nets: Vec<IpNet> = routes.iter().map(|r| r.0).collect();
        (Just(routes), prop::collection::vec(query(nets), 1..24))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn supernets_subnets_and_longest_match_agree_with_a_naive_model((routes, queries) in table_and_queries()) {
        let table: Table = routes.iter().copied().collect();
        // The model: the routes, a later duplicate replacing the earlier one.
        let model: Vec<(IpNet, NextHop)> = routes
            .iter()
            .map(|&(n, nh)| (order(&n), (n, nh)))
            .collect::<BTreeMap<(u8, u128, u8), (IpNet, NextHop)>>()
            .into_values()
            .collect();

        let mut sorted = model.clone();
        sorted.sort_by_key(|(n, _)| order(n));
        prop_assert_eq!(table.iter().collect::<Vec<_>>(), sorted.clone(), "iter() order");
        prop_assert_eq!(table.len(), model.len());
        for (n, nh) in &model {
            prop_assert_eq!(table.get(n), Some(*nh));
        }

        for q in &queries {
            let mut sup: Vec<(IpNet, NextHop)> = model.iter().filter(|(r, _)| r.contains(q)).copied().collect();
            sup.sort_by_key(|(r, _)| r.prefix_len());
            prop_assert_eq!(table.supernets(q).collect::<Vec<_>>(), sup, "supernets({})", q);

            let mut sub: Vec<(IpNet, NextHop)> = model.iter().filter(|(r, _)| q.contains(r)).copied().collect();
            sub.sort_by_key(|(r, _)| order(r));
            prop_assert_eq!(table.subnets(q).collect::<Vec<_>>(), sub, "subnets({})", q);
        }

        let mut addrs: Vec<IpAddr> = queries.iter().flat_map(|q| [q.addr(), q.network(), q.broadcast()]).collect();
        addrs.extend(model.iter().flat_map(|(n, _)| [n.network(), n.broadcast()]));
        let fibs: Vec<Fib> = engine_names().into_iter().map(|name| Fib::build(&table, name).unwrap()).collect();
        for a in addrs {
            let want = model
                .iter()
                .filter(|(r, _)| r.contains(&a))
                .max_by_key(|(r, _)| r.prefix_len())
                .copied();
            prop_assert_eq!(table.longest_match(a), want, "longest_match({})", a);
            for fib in &fibs {
                prop_assert_eq!(fib.lookup_prefix(a), want, "{}: lookup_prefix({})", fib.engine_name(), a);
                prop_assert_eq!(fib.lookup(a), want.map(|(_, nh)| nh), "{}: lookup({})", fib.engine_name(), a);
            }
        }
    }
}
