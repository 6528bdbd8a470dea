//! From an update stream to forwarding-table changes: the deterministic FIB semantics of
//! `ipfib replay`.
//!
//! * `--peer IP`: that peer's routes. An announcement inserts the prefix (or replaces its next
//!   hop), a withdrawal removes it, whatever the base table held for it. Other peers' records
//!   are left out.
//! * `--peer all`: every peer's routes, merged per prefix. Each prefix keeps the route of each
//!   peer that currently announces it, and the FIB holds the route of the **lowest peer
//!   address** among them (IPv4 peers before IPv6 peers; the unnamed peer of poptrie's text
//!   form first). A route of the base table (`--fib`) counts as one more peer, ranked after
//!   every real one: it is used only while no peer announces the prefix, and peers' withdrawals
//!   never remove it. A withdrawal by a peer that did not announce the prefix changes nothing.
//!   The result depends only on the records and their order, not on timing.
//! * Next hops: the BGP next-hop addresses of the stream, numbered 1, 2, ... in order of first
//!   appearance; an announcement without a next hop gets 0. (Base-table routes keep their
//!   own numbers.)
//! * Within one MRT UPDATE, withdrawals are applied before announcements (RFC 4271 §9); BGP
//!   session state changes are not turned into withdrawals.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use ipfib::{NextHop, Table, Update};
use ipfib_io::{UpdateKind, UpdateRecord};
use ipnet::IpNet;

/// `--peer`: one peer's routes or all peers merged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PeerArg {
    /// Every peer, merged by the lowest-peer-address rule.
    All,
    /// One peer.
    One(IpAddr),
}

impl FromStr for PeerArg {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.eq_ignore_ascii_case("all") {
            return Ok(PeerArg::All);
        }
        s.parse()
            .map(PeerArg::One)
            .map_err(|_| format!("expected `all` or a peer IP address, got {s:?}"))
    }
}

impl fmt::Display for PeerArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PeerArg::All => f.write_str("all"),
            PeerArg::One(ip) => write!(f, "{ip}"),
        }
    }
}

/// One FIB change and when the stream recorded it (µs after the stream's first record).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timed {
    pub at_us: u64,
    pub update: Update,
}

/// Who holds a route for a prefix; the derived order is the preference (lowest first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Source {
    Peer(Option<IpAddr>),
    Base,
}

/// When each record happened, in µs after the first. A stream whose timestamps are all whole
/// seconds (BGP4MP and the text captures; BGP4MP_ET has microseconds) does not say when within
/// its second a record came, and replaying a busy second as one instant would make thousands of
/// updates arrive together: the records of each second are spread evenly over it instead, in
/// recorded order.
pub fn record_times(records: &[UpdateRecord]) -> Vec<u64> {
    let start = records.first().map_or(0, |r| r.time_us);
    let mut at: Vec<u64> = records
        .iter()
        .map(|r| r.time_us.saturating_sub(start))
        .collect();
    if records.iter().all(|r| r.time_us % 1_000_000 == 0) {
        let mut i = 0;
        while i < at.len() {
            let j = i + at[i..].iter().take_while(|&&t| t == at[i]).count();
            let n = (j - i) as u64;
            for (k, t) in at[i..j].iter_mut().enumerate() {
                *t = t.saturating_add(k as u64 * 1_000_000 / n);
            }
            i = j;
        }
    }
    at
}

/// The FIB changes a stream makes to `base` under `peer`, and the final route set.
pub fn plan(records: &[UpdateRecord], base: &Table, peer: &PeerArg) -> (Vec<Timed>, Table) {
    let times = record_times(records);
    let mut hops: HashMap<IpAddr, NextHop> = HashMap::new();
    let mut hop_id = |nh: Option<IpAddr>| -> NextHop {
        nh.map_or(0, |a| {
            let next = hops.len() as NextHop + 1;
            *hops.entry(a).or_insert(next)
        })
    };
    let mut routes: HashMap<IpNet, BTreeMap<Source, NextHop>> = HashMap::new();
    let mut out = Vec::new();
    let mut table = base.clone();
    for (r, &at_us) in records.iter().zip(&times) {
        let change = match peer {
            PeerArg::One(ip) if r.peer != Some(*ip) => None,
            PeerArg::One(_) => Some(match r.kind {
                UpdateKind::Announce { next_hop } => Update::Insert(r.prefix, hop_id(next_hop)),
                UpdateKind::Withdraw => Update::Remove(r.prefix),
            }),
            PeerArg::All => {
                let held = routes.entry(r.prefix).or_insert_with(|| {
                    base.get(&r.prefix)
                        .map(|nh| (Source::Base, nh))
                        .into_iter()
                        .collect()
                });
                let before = held.first_key_value().map(|(_, &nh)| nh);
                match r.kind {
                    UpdateKind::Announce { next_hop } => {
                        held.insert(Source::Peer(r.peer), hop_id(next_hop));
                    }
                    UpdateKind::Withdraw => {
                        held.remove(&Source::Peer(r.peer));
                    }
                }
                let after = held.first_key_value().map(|(_, &nh)| nh);
                let update = match after {
                    Some(nh) => Update::Insert(r.prefix, nh),
                    None => Update::Remove(r.prefix),
                };
                (before != after).then_some(update)
            }
        };
        if let Some(update) = change {
            // Prefixes from the readers are canonical, so these cannot fail.
            match update {
                Update::Insert(n, nh) => {
                    let _ = table.insert(n, nh);
                }
                Update::Remove(n) => {
                    table.remove(&n);
                }
            }
            out.push(Timed { at_us, update });
        }
    }
    (out, table)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(t: u64, peer: &str, prefix: &str, nh: Option<&str>) -> UpdateRecord {
        UpdateRecord {
            time_us: t,
            peer: Some(peer.parse().unwrap()),
            prefix: prefix.parse().unwrap(),
            kind: match nh {
                Some(nh) => UpdateKind::Announce {
                    next_hop: Some(nh.parse().unwrap()),
                },
                None => UpdateKind::Withdraw,
            },
        }
    }

    #[test]
    fn all_peers_lowest_address_wins_and_the_base_is_the_fallback() {
        let mut base = Table::new();
        base.insert("10.0.0.0/8".parse().unwrap(), 99).unwrap();
        let records = [
            rec(1_000, "192.0.2.2", "10.0.0.0/8", Some("198.51.100.1")), // id 1
            rec(1_001, "192.0.2.1", "10.0.0.0/8", Some("198.51.100.2")), // id 2, lower peer
            rec(1_002, "192.0.2.2", "10.0.0.0/8", None),                 // not the best: no change
            rec(1_003, "192.0.2.1", "10.0.0.0/8", None),                 // back to the base
            rec(1_004, "192.0.2.9", "11.0.0.0/8", None),                 // never announced
        ];
        let (plan, fin) = plan(&records, &base, &PeerArg::All);
        let n = "10.0.0.0/8".parse().unwrap();
        assert_eq!(
            plan.iter().map(|t| t.update.clone()).collect::<Vec<_>>(),
            [
                Update::Insert(n, 1),
                Update::Insert(n, 2),
                Update::Insert(n, 99)
            ]
        );
        assert_eq!(plan[1].at_us, 1);
        assert_eq!(fin, base);
    }

    #[test]
    fn one_peer_withdrawals_remove_base_routes() {
        let mut base = Table::new();
        base.insert("10.0.0.0/8".parse().unwrap(), 99).unwrap();
        let records = [
            rec(0, "192.0.2.1", "10.0.0.0/8", None),
            rec(0, "192.0.2.2", "11.0.0.0/8", Some("198.51.100.1")),
        ];
        let (plan, fin) = plan(&records, &base, &PeerArg::One("192.0.2.1".parse().unwrap()));
        assert_eq!(plan.len(), 1);
        assert!(fin.is_empty());
        assert_eq!("ALL".parse::<PeerArg>().unwrap(), PeerArg::All);
        assert!("x".parse::<PeerArg>().is_err());
    }

    #[test]
    fn whole_second_streams_are_spread_over_each_second() {
        let second = |t: u64| rec(t, "192.0.2.1", "10.0.0.0/8", None);
        let records = [
            second(5_000_000),
            second(5_000_000),
            second(5_000_000),
            second(6_000_000),
        ];
        assert_eq!(record_times(&records), [0, 333_333, 666_666, 1_000_000]);
        // Microsecond timestamps (BGP4MP_ET) are kept as recorded.
        let records = [second(5_000_000), second(5_000_000), second(5_000_007)];
        assert_eq!(record_times(&records), [0, 0, 7]);
    }
}
