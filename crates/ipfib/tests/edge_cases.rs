//! Hand-written cases, each named after the bug it prevents (most are wrong answers of the
//! public PlanB code). Every case runs on every engine, every node-search backend, single and
//! batched, and the expected answers are written out by hand.

use std::net::IpAddr;

use ipfib::engine::planb::Backend;
use ipfib::{Fib, Lpm, PlanB};

/// Builds a FIB from `prefix next_hop` pairs (later duplicates replace earlier ones) and checks
/// each `(address, expected)` on every engine and backend.
fn check(routes: &[(&str, u32)], expect: &[(&str, Option<u32>)]) {
    let mut fib = Fib::new();
    for (prefix, nh) in routes {
        fib.insert(prefix.parse().expect("test prefix"), *nh)
            .expect("canonical test prefix");
    }
    for (addr, want) in expect {
        match addr.parse::<IpAddr>().expect("test address") {
            IpAddr::V4(a) => check_engines::<u32>(&fib.v4, u32::from(a), *want, addr),
            IpAddr::V6(a) => check_engines::<u128>(&fib.v6, u128::from(a), *want, addr),
        }
    }
}

fn check_engines<A>(table: &ipfib::RouteTable<A>, addr: A, want: Option<u32>, shown: &str)
where
    A: ipfib::engine::planb::layout::Family,
{
    let reference = ipfib::Reference::build(table);
    assert_eq!(reference.lookup(addr), want, "reference, {shown}");
    let mut planb = PlanB::build(table);
    for backend in Backend::available() {
        planb.set_backend(backend).expect("available");
        assert_eq!(planb.lookup(addr), want, "planb {backend} single, {shown}");
        // In a full batch of lanes (the interleaved path) and alone (the remainder path).
        let batch = vec![addr; 67];
        let mut out = vec![Some(12345); batch.len()];
        planb.lookup_batch(&batch, &mut out).expect("equal lengths");
        assert!(
            out.iter().all(|o| *o == want),
            "planb {backend} batched, {shown}: {out:?}"
        );
    }
}

#[test]
fn shorter_prefix_starting_where_a_longer_one_ends() {
    check(
        &[("2001:db8:1::/48", 1), ("2001:db8:2::/47", 2)],
        &[
            ("2001:db8:1::", Some(1)),
            ("2001:db8:1:ffff:ffff:ffff:ffff:ffff", Some(1)),
            ("2001:db8:2::", Some(2)),
            ("2001:db8:3:ffff:ffff:ffff:ffff:ffff", Some(2)),
            ("2001:db8:4::", None),
            ("2001:db8::", None),
        ],
    );
    check(
        &[("10.0.1.0/24", 1), ("10.0.2.0/23", 2)],
        &[
            ("10.0.1.255", Some(1)),
            ("10.0.2.0", Some(2)),
            ("10.0.3.255", Some(2)),
            ("10.0.4.0", None),
        ],
    );
}

#[test]
fn end_of_the_space_does_not_overflow_to_zero() {
    check(
        &[("ffff::/16", 5)],
        &[
            ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", Some(5)),
            ("ffff::", Some(5)),
            ("fffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", None),
            ("::", None),
        ],
    );
    check(
        &[("8000::/1", 3)],
        &[
            ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", Some(3)),
            ("7fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", None),
            ("::", None),
        ],
    );
    check(
        &[("128.0.0.0/1", 3)],
        &[
            ("255.255.255.255", Some(3)),
            ("127.255.255.255", None),
            ("0.0.0.0", None),
        ],
    );
}

#[test]
fn default_route_covers_the_top_slash_64() {
    check(
        &[("::/0", 1), ("ffff:ffff:ffff:fffe::/64", 2)],
        &[
            ("ffff:ffff:ffff:ffff::", Some(1)),
            ("ffff:ffff:ffff:ffff::1", Some(1)),
            ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", Some(1)),
            ("ffff:ffff:ffff:fffe:ffff:ffff:ffff:ffff", Some(2)),
            ("::", Some(1)),
        ],
    );
    check(
        &[("0.0.0.0/0", 9)],
        &[
            ("0.0.0.0", Some(9)),
            ("255.255.255.255", Some(9)),
            ("10.1.2.3", Some(9)),
        ],
    );
}

#[test]
fn prefixes_longer_than_slash_64_are_not_dropped() {
    check(
        &[
            ("2001:db8::/32", 1),
            ("2001:db8::/96", 3),
            ("2001:db8::1/128", 2),
            ("2001:db8:0:0:8000::/65", 4),
            ("2001:db8:0:0:8000::ff00/120", 5),
        ],
        &[
            ("2001:db8::1", Some(2)),
            ("2001:db8::", Some(3)),
            ("2001:db8::2", Some(3)),
            ("2001:db8::1:0:0", Some(1)),
            ("2001:db8:0:0:7fff:ffff:ffff:ffff", Some(1)),
            ("2001:db8:0:0:8000::", Some(4)),
            ("2001:db8:0:0:8000::ff17", Some(5)),
            ("2001:db8:0:0:ffff:ffff:ffff:ffff", Some(4)),
            ("2001:db8:0:1::", Some(1)),
        ],
    );
}

#[test]
fn slash_64_and_slash_48_boundaries() {
    check(
        &[
            ("2001:db8:0:1::/64", 1),
            ("2001:db8:1::/48", 2),
            ("2001:db8:1:0:1::/80", 3),
        ],
        &[
            ("2001:db8:0:0:ffff:ffff:ffff:ffff", None),
            ("2001:db8:0:1::", Some(1)),
            ("2001:db8:0:1:ffff:ffff:ffff:ffff", Some(1)),
            ("2001:db8:0:2::", None),
            ("2001:db8:1::", Some(2)),
            ("2001:db8:1:0:1::", Some(3)),
            ("2001:db8:1:0:1:ffff:ffff:ffff", Some(3)),
            ("2001:db8:1:0:2::", Some(2)),
            ("2001:db8:1:ffff:ffff:ffff:ffff:ffff", Some(2)),
        ],
    );
}

#[test]
fn host_routes_at_both_ends_of_the_space() {
    check(
        &[
            ("::/128", 1),
            ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128", 2),
            ("::/0", 3),
        ],
        &[
            ("::", Some(1)),
            ("::1", Some(3)),
            ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", Some(2)),
            ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe", Some(3)),
        ],
    );
    check(
        &[
            ("0.0.0.0/32", 1),
            ("255.255.255.255/32", 2),
            ("255.255.255.0/24", 4),
        ],
        &[
            ("0.0.0.0", Some(1)),
            ("0.0.0.1", None),
            ("255.255.255.255", Some(2)),
            ("255.255.255.254", Some(4)),
        ],
    );
}

#[test]
fn nested_prefixes_sharing_a_start() {
    check(
        &[
            ("10.0.0.0/8", 1),
            ("10.0.0.0/16", 2),
            ("10.0.0.0/24", 3),
            ("10.0.0.0/32", 4),
        ],
        &[
            ("10.0.0.0", Some(4)),
            ("10.0.0.1", Some(3)),
            ("10.0.1.0", Some(2)),
            ("10.1.0.0", Some(1)),
            ("10.255.255.255", Some(1)),
            ("11.0.0.0", None),
        ],
    );
    check(
        &[
            ("2001:db8::/32", 1),
            ("2001:db8::/48", 2),
            ("2001:db8::/64", 3),
            ("2001:db8::/128", 4),
        ],
        &[
            ("2001:db8::", Some(4)),
            ("2001:db8::1", Some(3)),
            ("2001:db8:0:1::", Some(2)),
            ("2001:db8:1::", Some(1)),
        ],
    );
}

#[test]
fn duplicates_resolve_to_the_last_insert_everywhere() {
    check(
        &[("10.0.0.0/8", 1), ("10.0.0.0/8", 2)],
        &[("10.0.0.1", Some(2))],
    );
    check(
        &[("2001:db8::/32", 7), ("2001:db8::/32", 8)],
        &[("2001:db8::1", Some(8))],
    );
}

#[test]
fn next_hop_zero_and_max_are_routes_not_misses() {
    check(
        &[("10.0.0.0/8", 0), ("11.0.0.0/8", u32::MAX)],
        &[
            ("10.0.0.1", Some(0)),
            ("11.0.0.1", Some(u32::MAX)),
            ("12.0.0.1", None),
        ],
    );
    check(
        &[("2001:db8::/32", 0)],
        &[("2001:db8::1", Some(0)), ("2001:db9::", None)],
    );
}

#[test]
fn empty_table_has_no_routes() {
    check(
        &[],
        &[
            ("0.0.0.0", None),
            ("255.255.255.255", None),
            ("::", None),
            ("2001:db8::1", None),
        ],
    );
}

#[test]
fn equal_neighbours_merge_but_keep_answers() {
    check(
        &[
            ("2001:db8::/33", 4),
            ("2001:db8:8000::/33", 4),
            ("2001:db8::/32", 5),
        ],
        &[
            ("2001:db8::", Some(4)),
            ("2001:db8:ffff::", Some(4)),
            ("2001:db9::", None),
        ],
    );
}

#[test]
fn batch_length_mismatch_is_an_error_not_a_panic() {
    let planb = PlanB::<u32>::build(&ipfib::RouteTable::new());
    let mut out = vec![None; 2];
    assert!(planb.lookup_batch(&[1, 2, 3], &mut out).is_err());
}
