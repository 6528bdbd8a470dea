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

use std::collections::HashMap;
use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use ipfib::{NextHop, Table, Update};
use ipnet::IpNet;

use super::held::{Held, SourceId, BASE};
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

/// Whose route a route is, for the merged rules: the peer that announced it, the router that
/// reported it (a BMP station's monitored router; `None` for a file) and the peer
/// distinguisher (RFC 7854 §4.2; 0 for a file). The derived order is the preference, lowest
/// first: peer address first, so the rule stays "lowest peer address wins" (IPv4 before
/// IPv6, the unnamed peer first); then router and distinguisher break ties between routers
/// that report the same peer; then `stale`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SourceKey {
    /// The BGP peer.
    pub peer: Option<IpAddr>,
    /// The router that reported the peer's routes (BMP); `None` for an update file.
    pub router: Option<IpAddr>,
    /// The peer distinguisher (BMP per-peer header); 0 for an update file.
    pub distinguisher: u64,
    /// 0 for the routes of a live session. The routes of a session that ended and are kept
    /// for a hold time carry a larger number, so they rank after the live routes of the same
    /// peer and router (see [`FibRules::rename_source`]).
    pub stale: u32,
}

impl SourceKey {
    /// The source of an update file's record: its peer, no router.
    pub fn of_peer(peer: Option<IpAddr>) -> SourceKey {
        SourceKey {
            peer,
            router: None,
            distinguisher: 0,
            stale: 0,
        }
    }
}

/// The rules applied one record at a time: what a follower of a live stream keeps between
/// records (each source's route per prefix, the next-hop numbering). [`plan`] is this over a
/// whole stream.
///
/// Memory (merged rules): one map entry per prefix holding its sources' routes in preference
/// order, a single one inline; sources are numbered once (a few dozen bytes per
/// source ever seen); a prefix no source announces any more is dropped, so what is kept is
/// bounded by the routes held.
pub struct FibRules {
    peers: Peers,
    base: Table,
    hops: HashMap<IpAddr, NextHop>,
    hop_list: Vec<IpAddr>,
    ids: HashMap<SourceKey, SourceId>,
    keys: Vec<SourceKey>,
    routes: HashMap<IpNet, Held>,
    counts: HashMap<SourceKey, usize>,
    fib_len: usize,
}

impl FibRules {
    /// The rules for `peers`, over the routes of `base`.
    pub fn new(base: &Table, peers: Peers) -> FibRules {
        FibRules {
            peers,
            base: base.clone(),
            hops: HashMap::new(),
            hop_list: Vec::new(),
            ids: HashMap::new(),
            keys: Vec::new(),
            routes: HashMap::new(),
            counts: HashMap::new(),
            fib_len: base.len(),
        }
    }

    /// The next hop number of a BGP next-hop address (0 for none): 1, 2, ... by first
    /// appearance.
    fn hop_id(&mut self, next_hop: Option<IpAddr>) -> NextHop {
        next_hop.map_or(0, |a| {
            let next = self.hops.len() as NextHop + 1;
            let list = &mut self.hop_list;
            *self.hops.entry(a).or_insert_with(|| {
                list.push(a);
                next
            })
        })
    }

    /// The next-hop numbering so far: each number and the BGP next-hop address it stands
    /// for, in number order.
    pub fn next_hops(&self) -> impl Iterator<Item = (NextHop, IpAddr)> + '_ {
        self.hop_list
            .iter()
            .enumerate()
            .map(|(i, &a)| (i as NextHop + 1, a))
    }

    /// The next-hop addresses in number order: number `n` is `next_hop_addresses()[n - 1]`.
    pub fn next_hop_addresses(&self) -> &[IpAddr] {
        &self.hop_list
    }

    /// Whether `addr` has a next-hop number already.
    pub fn knows_next_hop(&self, addr: &IpAddr) -> bool {
        self.hops.contains_key(addr)
    }

    /// Distinct next-hop addresses numbered so far.
    pub fn next_hop_count(&self) -> usize {
        self.hops.len()
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
                self.apply_from(SourceKey::of_peer(record.peer), record.prefix, record.kind)
            }
        }
    }

    /// The FIB change one source's announcement or withdrawal of `prefix` makes, if any, under
    /// the merged rules (whatever [`Peers`] the rules were made with: a caller that follows
    /// one peer filters the records itself). A withdrawal by a source that does not hold the
    /// prefix changes nothing.
    pub fn apply_from(
        &mut self,
        key: SourceKey,
        prefix: IpNet,
        kind: UpdateKind,
    ) -> Option<Update> {
        let nh = match kind {
            UpdateKind::Announce { next_hop } => Some(self.hop_id(next_hop)),
            UpdateKind::Withdraw => None,
        };
        let src = match (self.ids.get(&key), nh) {
            (Some(&id), _) => id,
            (None, None) => return None,
            (None, Some(_)) => {
                let id = self.keys.len() as SourceId;
                self.keys.push(key);
                self.ids.insert(key, id);
                id
            }
        };
        self.change(prefix, |held, keys| {
            match (
                held.binary_search_by(|&(s, _)| rank(keys, s).cmp(&rank(keys, src))),
                nh,
            ) {
                (Ok(i), Some(nh)) => held[i].1 = nh,
                (Err(i), Some(nh)) => held.insert(i, (src, nh)),
                (Ok(i), None) => {
                    held.remove(i);
                }
                (Err(_), None) => {}
            }
        })
    }

    /// Edits the routes of `prefix` (seeded from the base) with `edit`, keeps the counts, and
    /// returns the FIB change.
    fn change(
        &mut self,
        prefix: IpNet,
        edit: impl FnOnce(&mut Vec<(SourceId, NextHop)>, &[SourceKey]),
    ) -> Option<Update> {
        let mut held = match self.routes.remove(&prefix) {
            Some(h) => h.into_vec(),
            None => self
                .base
                .get(&prefix)
                .map(|nh| (BASE, nh))
                .into_iter()
                .collect(),
        };
        let before = held.first().map(|&(_, nh)| nh);
        for &(s, _) in &held {
            self.count(s, -1);
        }
        edit(&mut held, &self.keys);
        for &(s, _) in &held {
            self.count(s, 1);
        }
        let after = held.first().map(|&(_, nh)| nh);
        match (before.is_some(), after.is_some()) {
            (false, true) => self.fib_len += 1,
            (true, false) => self.fib_len -= 1,
            _ => {}
        }
        // Nothing but the base: no entry (it is seeded from the base when needed again).
        if held.iter().any(|&(s, _)| s != BASE) {
            if let Some(h) = Held::from_vec(held) {
                self.routes.insert(prefix, h);
            }
        }
        let update = match after {
            Some(nh) => Update::Insert(prefix, nh),
            None => Update::Remove(prefix),
        };
        (before != after).then_some(update)
    }

    fn count(&mut self, id: SourceId, by: isize) {
        let Some(&key) = self.keys.get(id as usize) else {
            return;
        };
        let n = self.counts.entry(key).or_default();
        *n = n.saturating_add_signed(by);
        if *n == 0 {
            self.counts.remove(&key);
        }
    }

    /// Routes of the table the merged rules make (the base's and the sources').
    pub fn fib_len(&self) -> usize {
        self.fib_len
    }

    /// Prefixes `key` holds a route for.
    pub fn routes_of(&self, key: &SourceKey) -> usize {
        self.counts.get(key).copied().unwrap_or(0)
    }

    /// The sources that hold at least one route, with their route counts.
    pub fn sources(&self) -> impl Iterator<Item = (&SourceKey, usize)> + '_ {
        self.counts.iter().map(|(k, &n)| (k, n))
    }

    /// Withdraws every route of `key` whose prefix `pick` accepts, and returns the FIB changes
    /// (one per prefix whose route changed). One pass over the prefixes held: meant for rare
    /// events (a peer going down), not for single routes.
    pub fn withdraw_source_where(
        &mut self,
        key: &SourceKey,
        mut pick: impl FnMut(&IpNet) -> bool,
    ) -> Vec<Update> {
        let Some(&id) = self.ids.get(key) else {
            return Vec::new();
        };
        if self.routes_of(key) == 0 {
            return Vec::new();
        }
        let prefixes: Vec<IpNet> = self
            .routes
            .iter()
            .filter(|(p, held)| pick(p) && held.has(id))
            .map(|(p, _)| *p)
            .collect();
        prefixes
            .into_iter()
            .filter_map(|p| self.change(p, |held, _| held.retain(|&(s, _)| s != id)))
            .collect()
    }

    /// Withdraws every route of `key` ([`Self::withdraw_source_where`] for all prefixes).
    pub fn withdraw_source(&mut self, key: &SourceKey) -> Vec<Update> {
        self.withdraw_source_where(key, |_| true)
    }

    /// Moves every route of `from` to `to` (a session's routes kept for a hold time become
    /// stale), replacing any route `to` held for the same prefix, and returns the FIB changes
    /// that makes: none when no other source ranks between the two keys for any prefix.
    pub fn rename_source(&mut self, from: &SourceKey, to: SourceKey) -> Vec<Update> {
        let Some(&from_id) = self.ids.get(from) else {
            return Vec::new();
        };
        if self.routes_of(from) == 0 || *from == to {
            return Vec::new();
        }
        let to_id = match self.ids.get(&to) {
            Some(&id) => id,
            None => {
                let id = self.keys.len() as SourceId;
                self.keys.push(to);
                self.ids.insert(to, id);
                id
            }
        };
        let moved: Vec<IpNet> = self
            .routes
            .iter()
            .filter(|(_, held)| held.has(from_id))
            .map(|(p, _)| *p)
            .collect();
        moved
            .into_iter()
            .filter_map(|prefix| {
                self.change(prefix, |held, keys| {
                    let nh = held.iter().find(|&&(s, _)| s == from_id).expect("listed").1;
                    held.retain(|&(s, _)| s != from_id && s != to_id);
                    let i = held.partition_point(|&(s, _)| rank(keys, s) < rank(keys, to_id));
                    held.insert(i, (to_id, nh));
                })
            })
            .collect()
    }
}

/// The preference of a source number: real sources by their key, then the base.
fn rank(keys: &[SourceKey], id: SourceId) -> (bool, Option<&SourceKey>) {
    (id == BASE, keys.get(id as usize))
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

    fn key(peer: &str, router: &str, stale: u32) -> SourceKey {
        SourceKey {
            peer: Some(peer.parse().unwrap()),
            router: Some(router.parse().unwrap()),
            distinguisher: 0,
            stale,
        }
    }

    fn announce(nh: &str) -> UpdateKind {
        UpdateKind::Announce {
            next_hop: Some(nh.parse().unwrap()),
        }
    }

    #[test]
    fn routers_break_ties_between_reports_of_one_peer_and_peers_rank_first() {
        let mut rules = FibRules::new(&Table::new(), Peers::All);
        let n: IpNet = "10.0.0.0/8".parse().unwrap();
        let (a2, a1) = (
            key("192.0.2.1", "127.0.0.2", 0),
            key("192.0.2.1", "127.0.0.1", 0),
        );
        let low_peer = key("192.0.2.0", "127.0.0.9", 0);
        assert_eq!(
            rules.apply_from(a2, n, announce("198.51.100.1")),
            Some(Update::Insert(n, 1))
        );
        assert_eq!(
            rules.apply_from(a1, n, announce("198.51.100.2")),
            Some(Update::Insert(n, 2))
        );
        assert_eq!(rules.apply_from(a2, n, announce("198.51.100.3")), None);
        assert_eq!(
            rules.apply_from(low_peer, n, announce("198.51.100.1")),
            Some(Update::Insert(n, 1))
        );
        assert_eq!(rules.withdraw_source(&low_peer), [Update::Insert(n, 2)]);
        assert_eq!(rules.withdraw_source(&a1), [Update::Insert(n, 3)]);
        assert_eq!(rules.routes_of(&a2), 1);
        assert_eq!(rules.withdraw_source(&a2), [Update::Remove(n)]);
        assert_eq!(rules.sources().count(), 0);
        assert_eq!(rules.fib_len(), 0);
        assert!(
            rules.routes.is_empty(),
            "nothing kept for prefixes nobody holds"
        );
        let hops: Vec<_> = rules.next_hops().collect();
        assert_eq!(hops[0], (1, "198.51.100.1".parse().unwrap()));
        assert_eq!(hops.len(), 3);
    }

    #[test]
    fn stale_routes_rank_after_the_live_session_and_go_with_their_source() {
        let mut rules = FibRules::new(&Table::new(), Peers::All);
        let (n, m): (IpNet, IpNet) = (
            "10.0.0.0/8".parse().unwrap(),
            "2001:db8::/32".parse().unwrap(),
        );
        let live = key("192.0.2.1", "127.0.0.1", 0);
        let stale = key("192.0.2.1", "127.0.0.1", u32::MAX);
        rules.apply_from(live, n, announce("198.51.100.1"));
        rules.apply_from(live, m, announce("2001:db8::1"));
        assert_eq!(rules.rename_source(&live, stale), []);
        assert_eq!((rules.routes_of(&live), rules.routes_of(&stale)), (0, 2));
        // The new session announces n again with another next hop: it wins over the stale one.
        assert_eq!(
            rules.apply_from(live, n, announce("198.51.100.2")),
            Some(Update::Insert(n, 3))
        );
        // Sweeping the stale IPv6 routes removes m only.
        assert_eq!(
            rules.withdraw_source_where(&stale, |p| matches!(p, IpNet::V6(_))),
            [Update::Remove(m)]
        );
        assert_eq!(rules.withdraw_source(&stale), []);
        assert_eq!(rules.routes_of(&live), 1);
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
