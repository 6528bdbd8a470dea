//! The station on hand-built BMP messages: every rule of `ipfib_io::bmp` (views, add-path, AS
//! size, peer up and down, the lowest-peer rule across routers, limits, and bad messages
//! applying nothing), checked against a plain map of what the routes must be.

mod bmp_support;
mod mrt_support;

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::time::Instant;

use bmp_support as b;
use ipfib::{Table, Update};
use ipfib_io::bmp::{
    BmpError, Event, Families, Framer, Notice, Problem, Session, Station, StationConfig, View,
};
use mrt_support::bgp::{self as g, bgp_update_message};

/// A station fed whole sessions, with its table kept as prefix -> next-hop address.
struct Rig {
    station: Station,
    table: Table,
    errors: Vec<BmpError>,
    next: u64,
}

impl Rig {
    fn new(config: StationConfig) -> Rig {
        Rig {
            station: Station::new(config),
            table: Table::new(),
            errors: Vec::new(),
            next: 1,
        }
    }

    fn apply(&mut self, updates: Vec<Update>, notices: Vec<Notice>) {
        for u in updates {
            match u {
                Update::Insert(n, nh) => {
                    self.table.insert(n, nh).unwrap();
                }
                Update::Remove(n) => {
                    self.table.remove(&n);
                }
            }
        }
        for n in notices {
            if let Notice::Closed { error: Some(e), .. } = n {
                self.errors.push(e);
            }
        }
    }

    /// One session from `router` sending `bytes`, left open when `close` is false.
    fn session(
        &mut self,
        router: &str,
        bytes: &[u8],
        view: View,
        families: Families,
        close: bool,
    ) -> u64 {
        let router: SocketAddr = router.parse().unwrap();
        let session = self.next;
        self.next += 1;
        let now = Instant::now();
        let o = self.station.handle(Event::Opened { session, router }, now);
        self.apply(o.updates, o.notices);
        let mut s = Session::new(router, view, families);
        let mut framer = Framer::new(bytes);
        let error = loop {
            match framer.next_frame() {
                Ok(Some(frame)) => {
                    let offset = frame.offset;
                    match s.decode(&frame) {
                        Ok(message) => {
                            let o = self.station.handle(
                                Event::Message {
                                    session,
                                    message,
                                    offset,
                                },
                                now,
                            );
                            let closed = o.close.is_some();
                            self.apply(o.updates, o.notices);
                            if closed {
                                return session;
                            }
                        }
                        Err(e) => break Some(e),
                    }
                }
                Ok(None) => break None,
                Err(e) => break Some(s.error(e.offset, e.kind, None, e.problem)),
            }
        };
        if close || error.is_some() {
            let o = self.station.handle(
                Event::Closed {
                    session,
                    error: error.map(|e| *e),
                },
                now,
            );
            self.apply(o.updates, o.notices);
        }
        session
    }

    fn routes(&self) -> BTreeMap<String, String> {
        let hops = self.station.rules().next_hop_addresses();
        self.table
            .iter()
            .map(|(n, nh)| (n.to_string(), hops[nh as usize - 1].to_string()))
            .collect()
    }
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

fn v4(prefixes: &[&str], nh: [u8; 4]) -> Vec<u8> {
    bgp_update_message(&g::Update::announce_v4(prefixes, nh).body())
}

fn v6(prefixes: &[&str]) -> Vec<u8> {
    bgp_update_message(&g::announce_v6(prefixes).body())
}

fn rm(peer: &str, msg: &[u8]) -> Vec<u8> {
    b::route_monitoring(peer, 0, msg)
}

fn both() -> Families {
    Families::both("planb")
}

#[test]
fn the_lowest_peer_wins_across_routers_and_peer_down_withdraws_only_that_peer() {
    let mut rig = Rig::new(StationConfig::default());
    let mut r1 = b::initiation("r1");
    r1.extend(rm(
        "192.0.2.2",
        &v4(&["10.0.0.0/8", "11.0.0.0/8"], [198, 51, 100, 2]),
    ));
    rig.session("127.0.0.1:1000", &r1, View::PrePolicy, both(), false);
    let mut r2 = rm("192.0.2.1", &v4(&["10.0.0.0/8"], [198, 51, 100, 1]));
    r2.extend(rm("192.0.2.1", &v6(&["2001:db8:1::/48"])));
    let s2 = rig.session("127.0.0.2:1000", &r2, View::PrePolicy, both(), false);
    assert_eq!(
        rig.routes(),
        map(&[
            ("10.0.0.0/8", "198.51.100.1"),
            ("11.0.0.0/8", "198.51.100.2"),
            ("2001:db8:1::/48", "2001:db8::1")
        ])
    );
    // Router 2 reports its peer down: router 1's route for 10/8 comes back.
    let o = rig.station.handle(
        Event::Message {
            session: s2,
            message: decode_one("127.0.0.2:1000", &b::peer_down("192.0.2.1")),
            offset: 0,
        },
        Instant::now(),
    );
    assert_eq!(
        o.updates.len(),
        2,
        "one batch: 10/8 replaced, 2001:db8:1::/48 removed"
    );
    rig.apply(o.updates, o.notices);
    assert_eq!(
        rig.routes(),
        map(&[
            ("10.0.0.0/8", "198.51.100.2"),
            ("11.0.0.0/8", "198.51.100.2")
        ])
    );
    assert_eq!(
        rig.station.routers()[&"127.0.0.1".parse::<IpAddr>().unwrap()]
            .sys_name
            .as_deref(),
        Some("r1")
    );
}

fn decode_one(router: &str, bytes: &[u8]) -> ipfib_io::bmp::Message {
    let mut s = Session::new(router.parse().unwrap(), View::PrePolicy, both());
    let mut f = Framer::new(bytes);
    let frame = f.next_frame().unwrap().unwrap();
    s.decode(&frame).unwrap()
}

#[test]
fn a_peer_up_again_drops_the_old_routes_and_peer_filters_apply() {
    let open = b::open(&[]);
    let mut bytes = b::peer_up("192.0.2.1", &open, &open);
    bytes.extend(rm("192.0.2.1", &v4(&["10.0.0.0/8"], [198, 51, 100, 1])));
    bytes.extend(rm("192.0.2.9", &v4(&["12.0.0.0/8"], [198, 51, 100, 9])));
    bytes.extend(b::peer_up("192.0.2.1", &open, &open));
    bytes.extend(rm("192.0.2.1", &v4(&["11.0.0.0/8"], [198, 51, 100, 1])));
    let mut rig = Rig::new(StationConfig {
        peer: Some("192.0.2.1".parse().unwrap()),
        ..StationConfig::default()
    });
    rig.session("127.0.0.1:1", &bytes, View::PrePolicy, both(), false);
    assert_eq!(rig.routes(), map(&[("11.0.0.0/8", "198.51.100.1")]));
    assert_eq!(
        rig.station.ignored().get("routes of other peers (--peer)"),
        Some(&1)
    );
}

#[test]
fn add_path_peers_hold_every_path_and_the_lowest_path_id_is_the_route() {
    let sent = b::open(&[b::add_path(&[(1, 1)])]);
    let received = b::open(&[b::add_path(&[(1, 2)])]);
    let path = |id: u32, p: &str| {
        let mut out = id.to_be_bytes().to_vec();
        out.extend(g::prefix(p));
        out
    };
    let announce = |id: u32, nh: u8| {
        let mut attrs = g::origin_and_path();
        attrs.extend(g::attr(0x40, 3, &[192, 0, 2, nh]));
        bgp_update_message(
            &g::Update {
                attrs,
                nlri: path(id, "10.0.0.0/8"),
                ..Default::default()
            }
            .body(),
        )
    };
    let withdraw = |id: u32| {
        bgp_update_message(
            &g::Update {
                withdrawn: path(id, "10.0.0.0/8"),
                ..Default::default()
            }
            .body(),
        )
    };
    let mut bytes = b::peer_up("192.0.2.1", &sent, &received);
    for m in [announce(5, 5), announce(3, 3), announce(7, 7), withdraw(3)] {
        bytes.extend(rm("192.0.2.1", &m));
    }
    let mut rig = Rig::new(StationConfig::default());
    rig.session("127.0.0.1:1", &bytes, View::PrePolicy, both(), false);
    assert_eq!(rig.routes(), map(&[("10.0.0.0/8", "192.0.2.5")]));
    // The same bytes without ADD-PATH negotiated are malformed (the path id reads as a /0
    // and garbage): the session fails, nothing of the message applied.
    let mut plain = b::peer_up("192.0.2.1", &b::open(&[]), &b::open(&[]));
    plain.extend(rm("192.0.2.1", &announce(5, 5)));
    let mut rig = Rig::new(StationConfig::default());
    rig.session("127.0.0.1:1", &plain, View::PrePolicy, both(), false);
    assert!(rig.table.is_empty());
    assert_eq!(rig.errors.len(), 1);
}

#[test]
fn two_byte_as_peers_and_views_by_flags() {
    // A 2-byte AS_PATH: flag A (0x20). Post-policy (L, 0x40) and Adj-RIB-Out (O, 0x10)
    // messages are another view's.
    let mut attrs = g::attr(0x40, 1, &[0]);
    attrs.extend(g::attr(0x40, 2, &[2, 1, 0xfd, 0xe9]));
    attrs.extend(g::attr(0x40, 3, &[192, 0, 2, 1]));
    let two = bgp_update_message(
        &g::Update {
            attrs,
            nlri: g::prefix("10.0.0.0/8"),
            ..Default::default()
        }
        .body(),
    );
    let mut bytes = b::route_monitoring("192.0.2.1", 0x20, &two);
    bytes.extend(b::route_monitoring(
        "192.0.2.1",
        0x40,
        &v4(&["11.0.0.0/8"], [192, 0, 2, 1]),
    ));
    bytes.extend(b::route_monitoring(
        "192.0.2.1",
        0x10,
        &v4(&["12.0.0.0/8"], [192, 0, 2, 1]),
    ));
    let mut rig = Rig::new(StationConfig::default());
    rig.session("127.0.0.1:1", &bytes, View::PrePolicy, both(), false);
    assert_eq!(rig.routes(), map(&[("10.0.0.0/8", "192.0.2.1")]));
    let mut rig = Rig::new(StationConfig::default());
    rig.session("127.0.0.1:1", &bytes, View::PostPolicy, both(), false);
    assert_eq!(rig.routes(), map(&[("11.0.0.0/8", "192.0.2.1")]));
    assert_eq!(rig.station.ignored().get("Adj-RIB-Out messages"), Some(&1));
}

#[test]
fn a_bad_message_closes_the_session_naming_the_router_and_applies_nothing_of_it() {
    let good = rm("192.0.2.1", &v4(&["10.0.0.0/8"], [192, 0, 2, 1]));
    // 13.0.0.0/7 written as byte 13: a host bit set past the length.
    let mut host_bits = g::Update::announce_v4(&["11.0.0.0/8"], [192, 0, 2, 1]);
    host_bits.nlri.extend(g::raw_prefix(7, &[13]));
    let host_bits = rm("192.0.2.1", &bgp_update_message(&host_bits.body()));
    let mut bad_nlri = g::Update::announce_v4(&["13.0.0.0/8"], [192, 0, 2, 1]);
    bad_nlri.nlri.extend(g::raw_prefix(33, &[1, 2, 3, 4, 5]));
    let bad_nlri = rm("192.0.2.1", &bgp_update_message(&bad_nlri.body()));
    let v6_route = rm("192.0.2.1", &v6(&["2001:db8:1::/48"]));
    let mut absurd = vec![3];
    absurd.extend(u32::MAX.to_be_bytes());
    absurd.push(0);
    let families_v4 = Families {
        engine: "dxr".into(),
        v4: true,
        v6: false,
    };
    for (name, bad, families) in [
        ("host bits", host_bits, both()),
        ("a /33", bad_nlri, both()),
        ("IPv6 to a v4-only engine", v6_route, families_v4),
        ("absurd length", absurd, both()),
        ("garbage", b"GET / HTTP/1.1\r\n\r\n".to_vec(), both()),
        ("truncated", good[..good.len() - 1].to_vec(), both()),
    ] {
        // Router 1 stays; router 2 sends a good route, then the bad message, with a hold
        // time so that its good route stays: the table is exactly the valid part.
        let mut rig = Rig::new(StationConfig {
            hold: std::time::Duration::from_secs(60),
            ..StationConfig::default()
        });
        rig.session(
            "127.0.0.1:1",
            &rm("192.0.2.9", &v4(&["9.0.0.0/8"], [192, 0, 2, 9])),
            View::PrePolicy,
            both(),
            false,
        );
        let mut bytes = good.clone();
        bytes.extend(&bad);
        rig.session("127.0.0.2:2", &bytes, View::PrePolicy, families, true);
        assert_eq!(
            rig.routes(),
            map(&[("9.0.0.0/8", "192.0.2.9"), ("10.0.0.0/8", "192.0.2.1")]),
            "{name}"
        );
        assert_eq!(rig.errors.len(), 1, "{name}");
        let e = &rig.errors[0];
        let text = e.to_string();
        assert!(text.starts_with("router 127.0.0.2:2"), "{name}: {text}");
        assert_eq!(e.offset, good.len() as u64, "{name}: {text}");
        assert!(text.len() < 4000, "{name}");
        if name == "IPv6 to a v4-only engine" {
            assert!(matches!(e.problem, Problem::Family { .. }), "{text}");
            assert!(
                text.contains("2001:db8:1::/48") && text.contains("dxr"),
                "{text}"
            );
        }
    }
}

#[test]
fn limits_close_the_session_before_any_of_the_message_applies() {
    let mut rig = Rig::new(StationConfig {
        max_routes_per_peer: 2,
        ..StationConfig::default()
    });
    let mut bytes = rm("192.0.2.1", &v4(&["10.0.0.0/8"], [192, 0, 2, 1]));
    bytes.extend(rm(
        "192.0.2.1",
        &v4(&["11.0.0.0/8", "12.0.0.0/8"], [192, 0, 2, 1]),
    ));
    rig.session("127.0.0.1:1", &bytes, View::PrePolicy, both(), false);
    assert!(
        rig.table.is_empty(),
        "hold 0: the session's routes went with it"
    );
    assert!(
        matches!(rig.errors[0].problem, Problem::Limit(_)),
        "{}",
        rig.errors[0]
    );
    let mut rig = Rig::new(StationConfig {
        max_peers_per_router: 1,
        ..StationConfig::default()
    });
    let mut bytes = rm("192.0.2.1", &v4(&["10.0.0.0/8"], [192, 0, 2, 1]));
    bytes.extend(rm("192.0.2.2", &v4(&["11.0.0.0/8"], [192, 0, 2, 1])));
    rig.session("127.0.0.1:1", &bytes, View::PrePolicy, both(), false);
    assert!(rig.errors[0].to_string().contains("--max-peers-per-router"));
}
