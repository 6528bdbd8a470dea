//! The BMP station on two streams GoBGP 3.10 really sent (tests/data/README.md), checked at
//! every message against a reference read of the same bytes by bgpkit-parser's own BMP
//! parser (`parse_bmp_msg`, an implementation independent of the station's framing, header
//! and Peer Up code), plus the counts the captures are known to hold.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use bgpkit_parser::models::ElemType;
use bgpkit_parser::parser::bmp::messages::{BmpMessageBody, BmpPeerType, PerPeerFlags};
use bytes::Bytes;
use ipfib::{Table, Update};
use ipfib_io::bmp::{
    Event, Families, Framer, Message, Notice, Problem, Session, Station, StationConfig, View,
};
use ipnet::IpNet;

const SAMPLE: &[u8] = include_bytes!("data/bmp-sample.bin");
const SAMPLE_ALL: &[u8] = include_bytes!("data/bmp-sample-all.bin");

fn router() -> SocketAddr {
    "127.0.0.2:40000".parse().unwrap()
}

/// The station's table, with next hops as addresses.
#[derive(Default)]
struct Run {
    table: Table,
    notices: Vec<Notice>,
}

impl Run {
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
        self.notices.extend(notices);
    }

    fn routes(&self, station: &Station) -> HashMap<IpNet, IpAddr> {
        let hops = station.rules().next_hop_addresses();
        self.table
            .iter()
            .map(|(n, nh)| (n, hops[nh as usize - 1]))
            .collect()
    }
}

/// Feeds `bytes` as one session; calls `each` after every message with the station, the
/// table and the message's end offset. Returns the run and the framing or decoding error.
fn feed(
    bytes: &[u8],
    view: View,
    hold: Duration,
    mut each: impl FnMut(&Station, &Run, u64),
) -> (Station, Run, Option<Problem>) {
    let mut station = Station::new(StationConfig {
        hold,
        ..StationConfig::default()
    });
    let mut run = Run::default();
    let now = Instant::now();
    let o = station.handle(
        Event::Opened {
            session: 1,
            router: router(),
        },
        now,
    );
    run.apply(o.updates, o.notices);
    let mut session = Session::new(router(), view, Families::both("planb"));
    let mut framer = Framer::new(bytes);
    let error = loop {
        let frame = match framer.next_frame() {
            Ok(Some(f)) => f,
            Ok(None) => break None,
            Err(e) => break Some(session.error(e.offset, e.kind, None, e.problem)),
        };
        let offset = frame.offset;
        match session.decode(&frame) {
            Ok(message) => {
                let o = station.handle(
                    Event::Message {
                        session: 1,
                        message,
                        offset,
                    },
                    now,
                );
                assert!(o.close.is_none());
                run.apply(o.updates, o.notices);
            }
            Err(e) => break Some(e),
        }
        each(&station, &run, framer.offset());
    };
    let problem = error.as_ref().map(|e| e.problem.clone());
    let o = station.handle(
        Event::Closed {
            session: 1,
            error: error.map(|e| *e),
        },
        now,
    );
    run.apply(o.updates, o.notices);
    (station, run, problem)
}

/// bgpkit-parser's reading of the stream: the view's routes after each message.
fn reference(bytes: &[u8], view: View) -> Vec<(u64, HashMap<IpNet, IpAddr>)> {
    let mut data = Bytes::copy_from_slice(bytes);
    let mut routes = HashMap::new();
    let mut out = Vec::new();
    while !data.is_empty() {
        let msg = bgpkit_parser::parse_bmp_msg(&mut data).expect("the capture parses");
        let header = msg.per_peer_header.as_ref();
        let local = header.is_some_and(|h| h.peer_type == BmpPeerType::LocalRib);
        let post = header.is_some_and(
            |h| matches!(h.peer_flags, PerPeerFlags::PeerFlags(f) if f.is_post_policy()),
        );
        let ours = match view {
            View::PrePolicy => !local && !post,
            View::PostPolicy => post,
            View::LocRib => local,
        };
        match (&msg.message_body, header) {
            (BmpMessageBody::RouteMonitoring(rm), Some(h)) if ours => {
                for elem in bgpkit_parser::Elementor::bgp_to_elems(
                    rm.bgp_message.clone(),
                    h.timestamp,
                    &h.peer_ip,
                    &h.peer_asn,
                ) {
                    match elem.elem_type {
                        ElemType::ANNOUNCE => {
                            routes.insert(elem.prefix.prefix, elem.next_hop.unwrap());
                        }
                        ElemType::WITHDRAW => {
                            routes.remove(&elem.prefix.prefix);
                        }
                    }
                }
            }
            (BmpMessageBody::PeerDownNotification(_), Some(h))
                if local == (view == View::LocRib) =>
            {
                let _ = h;
                routes.clear();
            }
            _ => {}
        }
        out.push(((bytes.len() - data.len()) as u64, routes.clone()));
    }
    out
}

fn count(routes: &HashMap<IpNet, IpAddr>) -> (usize, usize) {
    let v4 = routes.keys().filter(|n| matches!(n, IpNet::V4(_))).count();
    (v4, routes.len() - v4)
}

#[test]
fn the_initial_dump_sample_matches_bgpkit_at_every_message_and_peer_down_empties_it() {
    let expected = reference(SAMPLE, View::PrePolicy);
    assert_eq!(expected.len(), 860);
    let mut i = 0;
    let mut at_eor = Vec::new();
    let (station, run, error) = feed(SAMPLE, View::PrePolicy, Duration::ZERO, |st, run, end| {
        assert_eq!(end, expected[i].0);
        let routes = run.routes(st);
        assert_eq!(
            routes, expected[i].1,
            "after message {i} (ending at byte {end})"
        );
        if run
            .notices
            .iter()
            .filter(|n| matches!(n, Notice::EndOfRib { .. }))
            .count()
            > at_eor.len()
        {
            at_eor.push(count(&routes));
        }
        i += 1;
    });
    assert_eq!((i, error), (860, None));
    assert_eq!(at_eor, [(599, 0), (599, 251)]);
    // Before Peer Down: the dump plus the live changes (one v4 route re-added, then both
    // withdrawn again).
    let before_down = &expected[858].1;
    assert_eq!(count(before_down), (599, 251));
    let added: IpNet = "198.51.100.0/24".parse().unwrap();
    assert_eq!(
        expected[854].1[&added],
        "192.0.2.7".parse::<IpAddr>().unwrap()
    );
    assert_eq!(
        expected[856].1[&added],
        "192.0.2.8".parse::<IpAddr>().unwrap()
    );
    assert!(run.table.is_empty(), "Peer Down withdrew everything");
    assert_eq!(station.peers().len(), 1);
    let peer = station.peers().values().next().unwrap();
    assert_eq!((peer.up, peer.end_of_rib.len()), (false, 2));
}

#[test]
fn the_all_views_sample_gives_each_view_its_own_routes() {
    for (view, ignored) in [
        (
            View::PrePolicy,
            [("post-policy messages", 594), ("Loc-RIB messages", 594)],
        ),
        (
            View::PostPolicy,
            [("pre-policy messages", 298), ("Loc-RIB messages", 594)],
        ),
        (
            View::LocRib,
            [("pre-policy messages", 298), ("post-policy messages", 594)],
        ),
    ] {
        let expected = reference(SAMPLE_ALL, view);
        let mut i = 0;
        let mut most = 0;
        let (station, run, error) = feed(SAMPLE_ALL, view, Duration::ZERO, |st, run, _| {
            let routes = run.routes(st);
            assert_eq!(routes, expected[i].1, "{view:?}: after message {i}");
            most = most.max(routes.len());
            i += 1;
        });
        assert_eq!(error, None);
        assert_eq!(
            most,
            199 + 98,
            "{view:?}: every announced prefix held at once"
        );
        for (why, n) in ignored {
            assert_eq!(station.ignored().get(why), Some(&n), "{view:?}: {why}");
        }
        assert!(run.table.is_empty());
        if view != View::PrePolicy {
            // These views withdraw every route before the Peer Down.
            assert!(expected[expected.len() - 2].1.is_empty(), "{view:?}");
        }
        let no_peer_up = run
            .notices
            .iter()
            .any(|n| matches!(n, Notice::PeerWithoutPeerUp { .. }));
        assert_eq!(
            no_peer_up,
            view == View::LocRib,
            "GoBGP 3.10 sends no Loc-RIB Peer Up"
        );
    }
}

#[test]
fn a_cut_at_a_message_boundary_keeps_that_state_and_a_cut_inside_one_applies_none_of_it() {
    let hold = Duration::from_secs(3600);
    let mut states: Vec<(u64, HashMap<IpNet, IpAddr>)> = vec![(0, HashMap::new())];
    feed(SAMPLE, View::PrePolicy, hold, |st, run, end| {
        states.push((end, run.routes(st)))
    });
    // Every message boundary, and a cut 1 byte and half a message past each.
    for (k, (end, routes)) in states.iter().enumerate() {
        let end = *end as usize;
        let (st, run, error) = feed(&SAMPLE[..end], View::PrePolicy, hold, |_, _, _| {});
        assert_eq!(error, None, "cut at boundary {k}");
        assert_eq!(&run.routes(&st), routes, "cut at boundary {k} (byte {end})");
        let Some((next, _)) = states.get(k + 1) else {
            continue;
        };
        for cut in [end + 1, (end + *next as usize) / 2] {
            let (st, run, error) = feed(&SAMPLE[..cut], View::PrePolicy, hold, |_, _, _| {});
            assert!(
                matches!(error, Some(Problem::Truncated { .. })),
                "cut at byte {cut}: {error:?}"
            );
            assert_eq!(
                &run.routes(&st),
                routes,
                "cut inside message {k} at byte {cut}"
            );
        }
    }
}

#[test]
fn a_session_end_withdraws_everything_or_holds_it_until_the_deadline() {
    let cut = {
        let mut ends = Vec::new();
        feed(SAMPLE, View::PrePolicy, Duration::ZERO, |_, _, end| {
            ends.push(end)
        });
        ends[853] as usize // after the IPv6 End-of-RIB: 850 routes
    };
    let (_, run, _) = feed(
        &SAMPLE[..cut],
        View::PrePolicy,
        Duration::ZERO,
        |_, _, _| {},
    );
    assert!(run.table.is_empty());
    let hold = Duration::from_secs(3);
    let (mut st, mut run, _) = feed(&SAMPLE[..cut], View::PrePolicy, hold, |_, _, _| {});
    assert_eq!(run.table.len(), 850);
    let deadline = st.next_deadline().unwrap();
    let o = st.expire(deadline - Duration::from_millis(1));
    assert!(o.updates.is_empty());
    let o = st.expire(deadline);
    run.apply(o.updates, o.notices);
    assert!(run.table.is_empty());
    assert_eq!(st.next_deadline(), None);
}

#[test]
fn a_reconnect_within_the_hold_time_keeps_re_announced_routes_and_sweeps_the_rest_at_eor() {
    // First session: the whole dump; it ends and is held. The second session (same router
    // address) replays the dump with its first 10 IPv4 routes left out: at the IPv4
    // End-of-RIB those 10 go, the rest stay.
    let mut ends = Vec::new();
    feed(SAMPLE, View::PrePolicy, Duration::ZERO, |_, _, end| {
        ends.push(end)
    });
    let dump = &SAMPLE[..ends[853] as usize];
    let hold = Duration::from_secs(60);
    let mut station = Station::new(StationConfig {
        hold,
        ..StationConfig::default()
    });
    let mut run = Run::default();
    let now = Instant::now();
    for (session, skip) in [(1u64, 0..0), (2, 2..12)] {
        let o = station.handle(
            Event::Opened {
                session,
                router: router(),
            },
            now,
        );
        run.apply(o.updates, o.notices);
        let mut s = Session::new(router(), View::PrePolicy, Families::both("planb"));
        let mut framer = Framer::new(dump);
        let mut k = 0;
        while let Some(frame) = framer.next_frame().unwrap() {
            let offset = frame.offset;
            let message = s.decode(&frame).unwrap();
            if !skip.contains(&k) {
                let o = station.handle(
                    Event::Message {
                        session,
                        message,
                        offset,
                    },
                    now,
                );
                run.apply(o.updates, o.notices);
            }
            k += 1;
        }
        if session == 1 {
            let o = station.handle(
                Event::Closed {
                    session,
                    error: None,
                },
                now,
            );
            run.apply(o.updates, o.notices);
            assert_eq!(run.table.len(), 850);
        }
    }
    assert_eq!(run.table.len(), 840);
    let o = station.expire(now + hold);
    run.apply(o.updates, o.notices);
    assert_eq!(run.table.len(), 840, "the live session's routes stay");
    let _ = Message::Termination;
}

const FRR: &[u8] = include_bytes!("data/frr-sample.bin");
const FRR_ADD_PATH: &[u8] = include_bytes!("data/frr-addpath-sample.bin");

#[test]
fn the_frr_sample_gives_pre_and_post_policy_their_routes_and_skips_mirroring_and_stats() {
    // FRR 8.4.4: Initiation, a Peer Down before the peer was ever up, route mirroring of
    // every BGP message, statistics reports (types 0, 2-5, 11 and 65531), pre- and
    // post-policy RMs of 2 IPv4 routes and 1 IPv6 route, one IPv4 withdrawal, Peer Down.
    let v4: IpNet = "198.51.100.0/24".parse().unwrap();
    let v6: IpNet = "2001:db8:1::/48".parse().unwrap();
    let gone: IpNet = "203.0.113.0/25".parse().unwrap();
    for (view, other) in [
        (View::PrePolicy, "post-policy messages"),
        (View::PostPolicy, "pre-policy messages"),
    ] {
        let expected = reference(FRR, view);
        assert_eq!(expected.len(), 20);
        let mut i = 0;
        let mut most = 0;
        let mut before_down = HashMap::new();
        let (station, run, error) = feed(FRR, view, Duration::ZERO, |st, run, end| {
            assert_eq!(end, expected[i].0);
            let routes = run.routes(st);
            assert_eq!(routes, expected[i].1, "{view:?}: after message {i}");
            most = most.max(routes.len());
            if i == 18 {
                before_down = routes;
            }
            i += 1;
        });
        assert_eq!((i, error), (20, None), "{view:?}");
        assert_eq!(most, 3, "{view:?}");
        assert_eq!(before_down.len(), 2, "{view:?}");
        assert_eq!(before_down[&v4], "192.0.2.7".parse::<IpAddr>().unwrap());
        assert_eq!(before_down[&v6], "2001:db8::7".parse::<IpAddr>().unwrap());
        assert!(!before_down.contains_key(&gone));
        assert!(
            run.table.is_empty(),
            "{view:?}: Peer Down withdrew everything"
        );
        assert_eq!(station.ignored().get("route mirroring messages"), Some(&6));
        assert_eq!(station.ignored().get(other), Some(&4), "{view:?}");
        assert!(!run
            .notices
            .iter()
            .any(|n| matches!(n, Notice::PeerWithoutPeerUp { .. })));
    }
}

#[test]
fn frr_route_monitoring_lacks_the_add_path_identifiers_its_peer_up_negotiated() {
    // FRR 8.4.4 with ADD-PATH between its peer (send) and itself (receive): the Peer Up
    // carries both OPENs as sent, so path identifiers are negotiated for IPv4 and IPv6
    // unicast, but FRR encodes its Route Monitoring UPDATEs without them. The station
    // follows the Peer Up and rejects the first RM (at byte 344: NLRI 18 c6 33 64, i.e.
    // 198.51.100.0/24 without a path identifier); bgpkit's BMP parser never applies ADD-PATH
    // and reads the routes FRR meant.
    let mut ends = Vec::new();
    let (_, run, error) = feed(
        FRR_ADD_PATH,
        View::PrePolicy,
        Duration::ZERO,
        |_, _, end| ends.push(end),
    );
    assert_eq!(ends, [34, 85, 344]);
    match error {
        Some(Problem::Update(e)) => assert!(
            e.contains("a path identifier and prefix length in the NLRI needs 5 bytes"),
            "{e}"
        ),
        other => panic!("{other:?}"),
    }
    assert!(run.table.is_empty());
    let expected = reference(FRR_ADD_PATH, View::PrePolicy);
    let last = &expected.last().unwrap().1;
    assert_eq!(
        last[&"198.51.100.0/24".parse::<IpNet>().unwrap()],
        "192.0.2.7".parse::<IpAddr>().unwrap()
    );
    assert_eq!(
        last[&"2001:db8:1::/48".parse::<IpNet>().unwrap()],
        "2001:db8::7".parse::<IpAddr>().unwrap()
    );
}
