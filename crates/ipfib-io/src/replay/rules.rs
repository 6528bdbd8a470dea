//! From an update stream to forwarding-table changes: the deterministic FIB semantics of
//! `ipfib replay` (and of everything else that follows a stream into a table).
//!
//! * [`Peers::One`] (`--peer IP`): that peer's routes. An announcement inserts the prefix (or replaces its next
//!   hop), a withdrawal removes it, whatever the base table held for it. Other peers' records
//!   are left out.
//! * [`Peers::All`] (`--peer all`): every peer's routes, merged per prefix. Each prefix keeps the route of each
//!   peer that currently announces it, and the FIB holds the route of the **lowest peer
//!   address** among them (IPv4 peers before IPv6 peers; the unnamed peer of poptrie's text
//!   form first). A route of the base table counts as one more peer, ranked after
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
use ipnet::IpNet;

use crate::{UpdateKind, UpdateRecord};

/// Whose routes: one peer's, or all peers merged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Peers {
    /// Every peer, merged by the lowest-peer-address rule.
    All,
    /// One peer.
    One(IpAddr),
}

impl FromStr for Peers {
    type Err = String;
    /// `all` (any case) or an IP address.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.eq_ignore_ascii_case("all") {
            return Ok(Peers::All);
        }
        s.parse()
            .map(Peers::One)
            .map_err(|_| format!("expected `all` or a peer IP address, got {s:?}"))
    }
}

impl fmt::Display for Peers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Peers::All => f.write_str("all"),
            Peers::One(ip) => write!(f, "{ip}"),
        }
    }
}

/// One FIB change and when the stream recorded it (µs after the stream's first record).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timed {
    /// Microseconds after the stream's first record.
    pub at_us: u64,
    /// The change.
    pub update: Update,
}

/// Who holds a route for a prefix; the derived order is the preference (lowest first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Source {
    Peer(Option<IpAddr>),
    Base,
}

/// The rules applied one record at a time: what a follower of a live stream keeps between
/// records (each peer's route per prefix, the next-hop numbering). [`plan`] is this over a
/// whole stream.
pub struct FibRules {
    peers: Peers,
    base: Table,
    hops: HashMap<IpAddr, NextHop>,
    routes: HashMap<IpNet, BTreeMap<Source, NextHop>>,
}

impl FibRules {
    /// The rules for `peers`, over the routes of `base`.
    pub fn new(base: &Table, peers: Peers) -> FibRules {
        FibRules {
            peers,
            base: base.clone(),
            hops: HashMap::new(),
            routes: HashMap::new(),
        }
    }

    /// The next hop number of a BGP next-hop address (0 for none): 1, 2, ... by first
    /// appearance.
    fn hop_id(&mut self, next_hop: Option<IpAddr>) -> NextHop {
        next_hop.map_or(0, |a| {
            let next = self.hops.len() as NextHop + 1;
            *self.hops.entry(a).or_insert(next)
        })
    }

    /// The FIB change `record` makes, if any.
    pub fn apply(&mut self, record: &UpdateRecord) -> Option<Update> {
        match self.peers {
            Peers::One(ip) if record.peer != Some(ip) => None,
            Peers::One(_) => Some(match record.kind {
                UpdateKind::Announce { next_hop } => {
                    Update::Insert(record.prefix, self.hop_id(next_hop))
                }
                UpdateKind::Withdraw => Update::Remove(record.prefix),
            }),
            Peers::All => {
                let id = match record.kind {
                    UpdateKind::Announce { next_hop } => Some(self.hop_id(next_hop)),
                    UpdateKind::Withdraw => None,
                };
                let base = &self.base;
                let held = self.routes.entry(record.prefix).or_insert_with(|| {
                    base.get(&record.prefix)
                        .map(|nh| (Source::Base, nh))
                        .into_iter()
                        .collect()
                });
                let before = held.first_key_value().map(|(_, &nh)| nh);
                match id {
                    Some(nh) => held.insert(Source::Peer(record.peer), nh),
                    None => held.remove(&Source::Peer(record.peer)),
                };
                let after = held.first_key_value().map(|(_, &nh)| nh);
                let update = match after {
                    Some(nh) => Update::Insert(record.prefix, nh),
                    None => Update::Remove(record.prefix),
                };
                (before != after).then_some(update)
            }
        }
    }
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

/// The FIB changes a stream makes to `base` under `peers`, and the final route set.
pub fn plan(records: &[UpdateRecord], base: &Table, peers: &Peers) -> (Vec<Timed>, Table) {
    let times = record_times(records);
    let mut rules = FibRules::new(base, peers.clone());
    let mut out = Vec::new();
    let mut table = base.clone();
    for (r, &at_us) in records.iter().zip(&times) {
        let Some(update) = rules.apply(r) else {
            continue;
        };
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
        let (plan, fin) = plan(&records, &base, &Peers::All);
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
        let (plan, fin) = plan(&records, &base, &Peers::One("192.0.2.1".parse().unwrap()));
        assert_eq!(plan.len(), 1);
        assert!(fin.is_empty());
        assert_eq!("ALL".parse::<Peers>().unwrap(), Peers::All);
        assert!("x".parse::<Peers>().is_err());
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
