//! What bgpkit-parser 0.23 does with malformed UPDATE messages, observed. These facts are why
//! `ipfib_io::bgp` checks the raw bytes before bgpkit decodes them (see its module docs): for
//! every case below bgpkit returns `Ok` with part of the message dropped or missing, and says
//! so only in a validation warning. If an upgrade changes any of this, the test fails and the
//! module docs need a look.

#![cfg(feature = "mrt")]

mod mrt_support;

use bgpkit_parser::models::{AsnLength, BgpUpdateMessage};
use bgpkit_parser::parser::bgp::messages::parse_bgp_update_message;
use bytes::Bytes;
use mrt_support::bgp::*;

fn parse(update: &Update) -> Result<BgpUpdateMessage, String> {
    parse_bgp_update_message(Bytes::from(update.body()), false, &AsnLength::Bits32)
        .map_err(|e| e.to_string())
}

fn warnings(m: &BgpUpdateMessage) -> String {
    format!("{:?}", m.attributes.validation_warnings())
}

#[test]
fn observed() {
    let cases: Vec<(&str, Update)> = vec![
        ("ipv4 nlri /33", {
            let mut u = Update::announce_v4(&["10.0.0.0/8"], [192, 0, 2, 1]);
            u.nlri.extend(raw_prefix(33, &[10, 1, 2, 3, 4]));
            u
        }),
        ("mp_reach ipv6 /129", {
            let mut u = announce_v6(&[]);
            let nh: std::net::Ipv6Addr = "2001:db8::1".parse().unwrap();
            let mut nlri = prefix("2001:db8::/32");
            nlri.extend(raw_prefix(129, &[0x20; 17]));
            u.attrs = origin_and_path();
            u.attrs.extend(mp_reach(2, 1, &nh.octets(), &nlri));
            u
        }),
        ("nlri past the end", {
            let mut u = Update::announce_v4(&["10.0.0.0/8"], [192, 0, 2, 1]);
            u.nlri.extend(raw_prefix(24, &[10, 1]));
            u
        }),
        ("next_hop of 3 bytes", {
            let mut u = Update::announce_v4(&["10.0.0.0/8"], [192, 0, 2, 1]);
            u.attrs = origin_and_path();
            u.attrs.extend(attr(0x40, 3, &[192, 0, 2]));
            u
        }),
        ("mp_reach next hop of 7 bytes", {
            let mut u = announce_v6(&[]);
            u.attrs = origin_and_path();
            u.attrs
                .extend(mp_reach(2, 1, &[0x20; 7], &prefix("2001:db8::/32")));
            u
        }),
        ("withdrawal list with one bad entry", {
            let mut u = Update::withdraw_v4(&["10.0.0.0/8", "192.0.2.0/24"]);
            u.withdrawn.extend(raw_prefix(40, &[1, 2, 3, 4, 5]));
            u
        }),
        ("announcement without next hop", {
            let mut u = Update::announce_v4(&["10.0.0.0/8"], [192, 0, 2, 1]);
            u.attrs = origin_and_path();
            u
        }),
    ];
    // What survives of each message: withdrawn, announced (classic), MP_REACH prefixes, the
    // NEXT_HOP, and the warning bgpkit attaches.
    let want = [
        // The valid 10.0.0.0/8 is dropped with the bad /33.
        ("ipv4 nlri /33", 0, 0, 0, true, "MalformedNlri"),
        // The whole MP_REACH_NLRI is dropped, the valid 2001:db8::/32 with it.
        (
            "mp_reach ipv6 /129",
            0,
            0,
            0,
            false,
            "OptionalAttributeError",
        ),
        ("nlri past the end", 0, 0, 0, true, "MalformedNlri"),
        // The announcement is kept, without a next hop.
        (
            "next_hop of 3 bytes",
            0,
            1,
            0,
            false,
            "MalformedAttributeList",
        ),
        (
            "mp_reach next hop of 7 bytes",
            0,
            0,
            0,
            false,
            "OptionalAttributeError",
        ),
        // The two valid withdrawals are dropped with the bad entry.
        (
            "withdrawal list with one bad entry",
            0,
            0,
            0,
            false,
            "MalformedNlri",
        ),
        (
            "announcement without next hop",
            0,
            1,
            0,
            false,
            "MissingWellKnownAttribute",
        ),
    ];
    for ((name, update), want) in cases.iter().zip(want) {
        let m = parse(update).unwrap_or_else(|e| panic!("{name}: bgpkit now fails: {e}"));
        let mp = m
            .attributes
            .get_reachable_nlri()
            .map_or(0, |n| n.prefixes.len());
        let got = (
            *name,
            m.withdrawn_prefixes.len(),
            m.announced_prefixes.len(),
            mp,
            m.attributes.next_hop().is_some(),
        );
        assert_eq!(got, (want.0, want.1, want.2, want.3, want.4));
        let w = warnings(&m);
        assert!(w.contains(want.5), "{name}: {w}");
    }
}
