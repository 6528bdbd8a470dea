//! The station: every session's messages turned into changes of one forwarding table, by the
//! replay rules ([`crate::replay::rules`]), with the per-router and per-peer bookkeeping. Pure:
//! no sockets, no threads, no clock of its own (times come with the events), so every rule is
//! tested without a network.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use ipfib::{Table, Update};

use super::error::{BmpError, Problem};
use super::session::{Family, Message, PeerId};
use crate::replay::rules::{FibRules, Peers, SourceKey};
use crate::updates::UpdateKind;

/// How the station follows its routers.
#[derive(Clone, Debug)]
pub struct StationConfig {
    /// One peer's routes (merged across routers), or every peer's (`None`).
    pub peer: Option<IpAddr>,
    /// How long a router's routes stay after its session ends (0: they go at once).
    pub hold: Duration,
    /// Peers one router may report.
    pub max_peers_per_router: usize,
    /// Routes one peer may hold.
    pub max_routes_per_peer: usize,
    /// Distinct next-hop addresses (their numbering is never forgotten).
    pub max_next_hops: usize,
}

impl Default for StationConfig {
    fn default() -> Self {
        StationConfig {
            peer: None,
            hold: Duration::ZERO,
            max_peers_per_router: 1024,
            max_routes_per_peer: 4 << 20,
            max_next_hops: 1 << 20,
        }
    }
}

/// What a session tells the station.
#[derive(Clone, Debug)]
pub enum Event {
    /// A router connected.
    Opened {
        /// The session's number (unique per station).
        session: u64,
        /// The router's TCP address.
        router: SocketAddr,
    },
    /// A whole, checked message.
    Message {
        /// The session.
        session: u64,
        /// What it means.
        message: Message,
        /// Offset of the message in the session (for errors).
        offset: u64,
    },
    /// The session ended: at the end of the stream (`None`), or because of a bad message.
    Closed {
        /// The session.
        session: u64,
        /// Why, when it was an error.
        error: Option<BmpError>,
    },
}

/// Something worth a log line.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Notice {
    /// A router connected.
    RouterUp {
        /// The router.
        router: SocketAddr,
    },
    /// A session ended; with the error that ended it.
    Closed {
        /// The router.
        router: SocketAddr,
        /// Routes withdrawn at once (0 when held).
        withdrawn: usize,
        /// Routes kept for the hold time.
        held: usize,
        /// The error, if the session failed.
        error: Option<BmpError>,
    },
    /// A peer's End-of-RIB marker.
    EndOfRib {
        /// The router.
        router: SocketAddr,
        /// The peer.
        peer: PeerId,
        /// The family.
        family: Family,
        /// The peer's routes at that moment.
        routes: usize,
    },
    /// Route monitoring for a peer that had no Peer Up (GoBGP 3.10's Loc-RIB does this).
    PeerWithoutPeerUp {
        /// The router.
        router: SocketAddr,
        /// The peer.
        peer: PeerId,
    },
    /// A connection refused because --max-sessions were open.
    Refused {
        /// The router.
        router: SocketAddr,
    },
    /// Held routes of an ended session went at the end of the hold time (or at End-of-RIB).
    HeldExpired {
        /// The router.
        router: IpAddr,
        /// Routes withdrawn.
        withdrawn: usize,
    },
}

/// What one event did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The FIB changes, to be applied in one batch.
    pub updates: Vec<Update>,
    /// A session the station closes (a limit was reached): the caller shuts its socket.
    pub close: Option<u64>,
    /// Log lines.
    pub notices: Vec<Notice>,
}

/// A peer's state, for reports.
#[derive(Clone, Debug, Default)]
pub struct PeerState {
    /// Whether its session is up (a Peer Up, or route monitoring, and no Peer Down since).
    pub up: bool,
    /// Families whose End-of-RIB arrived.
    pub end_of_rib: Vec<Family>,
    /// Route-monitoring prefix changes received.
    pub changes: u64,
    /// The last Statistics Report's counters.
    pub stats: Vec<(String, u64)>,
}

/// A router's state, for reports.
#[derive(Clone, Debug, Default)]
pub struct RouterState {
    /// sysName from its Initiation message.
    pub sys_name: Option<String>,
    /// Sessions so far.
    pub sessions: u64,
    /// Sessions that ended with an error.
    pub failures: u64,
    /// Its live session, if connected.
    live: Option<(u64, SocketAddr)>,
}

struct Held {
    router: IpAddr,
    keys: Vec<SourceKey>,
    deadline: Instant,
}

/// The station (see the module docs).
pub struct Station {
    config: StationConfig,
    rules: FibRules,
    routers: BTreeMap<IpAddr, RouterState>,
    /// Live sources (stale = 0) and their state.
    peers: BTreeMap<SourceKey, PeerState>,
    held: Vec<Held>,
    next_stale: u32,
    ignored: BTreeMap<&'static str, u64>,
    changes: u64,
}

impl Station {
    /// An empty station.
    pub fn new(config: StationConfig) -> Station {
        Station {
            config,
            rules: FibRules::new(&Table::new(), Peers::All),
            routers: BTreeMap::new(),
            peers: BTreeMap::new(),
            held: Vec::new(),
            next_stale: u32::MAX,
            ignored: BTreeMap::new(),
            changes: 0,
        }
    }

    /// The rules (route counts per source, next-hop numbering).
    pub fn rules(&self) -> &FibRules {
        &self.rules
    }

    /// Routers seen, by address.
    pub fn routers(&self) -> &BTreeMap<IpAddr, RouterState> {
        &self.routers
    }

    /// Routers connected now.
    pub fn live_routers(&self) -> usize {
        self.routers.values().filter(|r| r.live.is_some()).count()
    }

    /// Peers seen (live sessions' keys).
    pub fn peers(&self) -> &BTreeMap<SourceKey, PeerState> {
        &self.peers
    }

    /// Messages and prefixes left out, by reason.
    pub fn ignored(&self) -> &BTreeMap<&'static str, u64> {
        &self.ignored
    }

    /// Route-monitoring prefix changes received.
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// When [`Self::expire`] has work next.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.held.iter().map(|h| h.deadline).min()
    }

    /// Handles one event at time `now`.
    pub fn handle(&mut self, event: Event, now: Instant) -> Outcome {
        let mut out = Outcome::default();
        match event {
            Event::Opened { session, router } => {
                if let Some((old, _)) = self.routers.get(&router.ip()).and_then(|r| r.live) {
                    // A second session from the router's address: the router reconnected
                    // before its old session's end reached us. The old one is closed.
                    self.end_session(router.ip(), old, None, now, &mut out);
                    out.close = Some(old);
                }
                let state = self.routers.entry(router.ip()).or_default();
                state.live = Some((session, router));
                state.sessions += 1;
                out.notices.push(Notice::RouterUp { router });
            }
            Event::Closed { session, error } => {
                if let Some(router) = self.router_of(session) {
                    self.end_session(router, session, error, now, &mut out);
                }
            }
            Event::Message {
                session,
                message,
                offset,
            } => {
                if let Some(router) = self.router_of(session) {
                    if let Err(problem) = self.message(router, message, &mut out) {
                        let addr = self.routers[&router].live.expect("live").1;
                        let error = BmpError {
                            router: addr,
                            sys_name: self.routers[&router].sys_name.clone(),
                            offset,
                            message: None,
                            peer: None,
                            problem,
                        };
                        self.end_session(router, session, Some(error), now, &mut out);
                        out.close = Some(session);
                    }
                }
            }
        }
        out
    }

    /// Withdraws held routes whose hold time is over.
    pub fn expire(&mut self, now: Instant) -> Outcome {
        let mut out = Outcome::default();
        let (due, keep): (Vec<Held>, Vec<Held>) = std::mem::take(&mut self.held)
            .into_iter()
            .partition(|h| h.deadline <= now);
        self.held = keep;
        for h in due {
            let before = out.updates.len();
            for key in &h.keys {
                out.updates.extend(self.rules.withdraw_source(key));
            }
            out.notices.push(Notice::HeldExpired {
                router: h.router,
                withdrawn: out.updates.len() - before,
            });
        }
        out
    }

    /// The router of a live session.
    fn router_of(&self, session: u64) -> Option<IpAddr> {
        self.routers
            .iter()
            .find(|(_, r)| r.live.is_some_and(|(s, _)| s == session))
            .map(|(&ip, _)| ip)
    }

    fn key(router: IpAddr, peer: PeerId) -> SourceKey {
        SourceKey {
            peer: Some(peer.peer),
            router: Some(router),
            distinguisher: peer.distinguisher,
            stale: 0,
        }
    }

    /// Applies one message of a live session; `Err` closes the session (nothing of the
    /// message was applied).
    fn message(
        &mut self,
        router: IpAddr,
        message: Message,
        out: &mut Outcome,
    ) -> Result<(), Problem> {
        let addr = self.routers[&router].live.expect("live").1;
        match message {
            Message::Initiation { sys_name } => {
                self.routers.get_mut(&router).expect("live").sys_name = sys_name;
            }
            Message::Termination => {}
            Message::Ignored(why) => *self.ignored.entry(why).or_default() += 1,
            Message::PeerUp { peer } => {
                let key = Self::key(router, peer);
                if self.peers.get(&key).is_some_and(|p| p.up) {
                    out.updates.extend(self.rules.withdraw_source(&key));
                } else {
                    self.check_peers(router, &key)?;
                }
                self.peers.insert(
                    key,
                    PeerState {
                        up: true,
                        ..PeerState::default()
                    },
                );
            }
            Message::PeerDown { peer } => {
                let key = Self::key(router, peer);
                out.updates.extend(self.rules.withdraw_source(&key));
                if let Some(p) = self.peers.get_mut(&key) {
                    p.up = false;
                }
            }
            Message::Stats { peer, counters } => {
                if let Some(p) = self.peers.get_mut(&Self::key(router, peer)) {
                    p.stats = counters;
                }
            }
            Message::Routes {
                peer,
                changes,
                end_of_rib,
            } => {
                let key = Self::key(router, peer);
                if !self.peers.get(&key).is_some_and(|p| p.up) {
                    self.check_peers(router, &key)?;
                    out.notices
                        .push(Notice::PeerWithoutPeerUp { router: addr, peer });
                    self.peers.entry(key).or_default().up = true;
                }
                if self.config.peer.is_some_and(|ip| ip != peer.peer) {
                    *self
                        .ignored
                        .entry("routes of other peers (--peer)")
                        .or_default() += changes.len() as u64;
                } else {
                    self.routes(key, &changes, out)?;
                }
                let state = self.peers.get_mut(&key).expect("inserted above");
                state.changes += changes.len() as u64;
                self.changes += changes.len() as u64;
                if let Some(family) = end_of_rib {
                    if !state.end_of_rib.contains(&family) {
                        state.end_of_rib.push(family);
                    }
                    out.notices.push(Notice::EndOfRib {
                        router: addr,
                        peer,
                        family,
                        routes: self.rules.routes_of(&key),
                    });
                    self.sweep_held(router, peer, family, out);
                }
            }
        }
        Ok(())
    }

    fn check_peers(&self, router: IpAddr, key: &SourceKey) -> Result<(), Problem> {
        let n = self
            .peers
            .iter()
            .filter(|(k, p)| k.router == Some(router) && p.up && *k != key)
            .count();
        if n >= self.config.max_peers_per_router {
            return Err(Problem::Limit(format!(
                "more than {} peers from one router (--max-peers-per-router)",
                self.config.max_peers_per_router
            )));
        }
        Ok(())
    }

    /// Applies a peer's changes after checking the limits for the whole message.
    fn routes(
        &mut self,
        key: SourceKey,
        changes: &[(ipnet::IpNet, UpdateKind)],
        out: &mut Outcome,
    ) -> Result<(), Problem> {
        let announced = changes
            .iter()
            .filter(|(_, k)| matches!(k, UpdateKind::Announce { .. }))
            .count();
        if self.rules.routes_of(&key) + announced > self.config.max_routes_per_peer {
            return Err(Problem::Limit(format!(
                "peer {} would hold more than {} routes (--max-routes-per-peer)",
                key.peer.map_or("?".into(), |p| p.to_string()),
                self.config.max_routes_per_peer
            )));
        }
        if self.rules.next_hop_count() + announced > self.config.max_next_hops {
            let new: std::collections::HashSet<IpAddr> = changes
                .iter()
                .filter_map(|(_, k)| match k {
                    UpdateKind::Announce { next_hop } => *next_hop,
                    UpdateKind::Withdraw => None,
                })
                .filter(|a| !self.rules.knows_next_hop(a))
                .collect();
            if self.rules.next_hop_count() + new.len() > self.config.max_next_hops {
                return Err(Problem::Limit(format!(
                    "more than {} distinct next hops (--max-next-hops)",
                    self.config.max_next_hops
                )));
            }
        }
        for &(prefix, kind) in changes {
            out.updates.extend(self.rules.apply_from(key, prefix, kind));
        }
        Ok(())
    }

    /// At a peer's End-of-RIB after a reconnect: the routes of that peer and family that the
    /// held session had and the new one did not announce again go.
    fn sweep_held(&mut self, router: IpAddr, peer: PeerId, family: Family, out: &mut Outcome) {
        let live = Self::key(router, peer);
        let mut withdrawn = 0;
        for h in self.held.iter().filter(|h| h.router == router) {
            for key in h
                .keys
                .iter()
                .filter(|k| SourceKey { stale: 0, ..**k } == live)
            {
                let gone = self
                    .rules
                    .withdraw_source_where(key, |p| Family::of(p) == family);
                withdrawn += gone.len();
                out.updates.extend(gone);
            }
        }
        if withdrawn > 0 {
            out.notices.push(Notice::HeldExpired { router, withdrawn });
        }
    }

    /// A session's end: its peers' routes go now, or are held.
    fn end_session(
        &mut self,
        router: IpAddr,
        session: u64,
        error: Option<BmpError>,
        now: Instant,
        out: &mut Outcome,
    ) {
        let state = self.routers.get_mut(&router).expect("known router");
        let Some((live, addr)) = state.live else {
            return;
        };
        if live != session {
            return;
        }
        state.live = None;
        if error.is_some() {
            state.failures += 1;
        }
        let keys: Vec<SourceKey> = self
            .peers
            .iter()
            .filter(|(k, p)| k.router == Some(router) && p.up)
            .map(|(k, _)| *k)
            .collect();
        let (mut withdrawn, mut held) = (0, 0);
        let mut stale_keys = Vec::new();
        let hold = !self.config.hold.is_zero();
        let stale = self.next_stale;
        for key in keys {
            self.peers.get_mut(&key).expect("listed").up = false;
            if hold {
                let to = SourceKey { stale, ..key };
                held += self.rules.routes_of(&key);
                out.updates.extend(self.rules.rename_source(&key, to));
                stale_keys.push(to);
            } else {
                let gone = self.rules.withdraw_source(&key);
                withdrawn += gone.len();
                out.updates.extend(gone);
            }
        }
        if hold && !stale_keys.is_empty() {
            self.next_stale = self.next_stale.saturating_sub(1).max(1);
            self.held.push(Held {
                router,
                keys: stale_keys,
                deadline: now + self.config.hold,
            });
        }
        out.notices.push(Notice::Closed {
            router: addr,
            withdrawn,
            held,
            error,
        });
    }
}
