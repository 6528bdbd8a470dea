//! One BMP session, message by message: what each message means for the station
//! ([`Message`]), with every check done before anything leaves the session. A message that
//! fails any check is an error and nothing of it is passed on.
//!
//! A route-monitoring message's UPDATE is read exactly as the MRT update reader reads one:
//! ipfib's byte check ([`crate::bgp::check_update`]) first, then bgpkit-parser, whose result
//! must not have dropped anything, then the shared change list (`bgp::decode`). Every prefix
//! must be canonical and of a family the live table's engine holds. For a peer that sends
//! ADD-PATH identifiers (negotiated in its Peer Up OPENs) the session keeps every path per
//! prefix and passes on the path with the lowest identifier: the peer's route for the prefix.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::net::{IpAddr, SocketAddr};

use bgpkit_parser::models::{Afi, AsnLength};
use bgpkit_parser::parser::bgp::messages::parse_bgp_update_message;
use bytes::Bytes;
use ipnet::IpNet;

use super::error::{BmpError, Problem};
use super::frame::{kind, Frame, PER_PEER_HEADER};
use super::header::{PeerHeader, View, LOC_RIB};
use super::open::{self, AddPath};
use crate::bgp;
use crate::updates::UpdateKind;

/// A peer as a router reports it: its address and the peer distinguisher.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PeerId {
    /// The peer's address (0.0.0.0 for the Loc-RIB).
    pub peer: IpAddr,
    /// The peer distinguisher.
    pub distinguisher: u64,
}

/// An address family of unicast routes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    /// IPv4.
    V4,
    /// IPv6.
    V6,
}

impl Family {
    /// The family of a prefix.
    pub fn of(prefix: &IpNet) -> Family {
        match prefix {
            IpNet::V4(_) => Family::V4,
            IpNet::V6(_) => Family::V6,
        }
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Family::V4 => "ipv4",
            Family::V6 => "ipv6",
        })
    }
}

/// The families the live table's engine holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Families {
    /// The engine's name, for errors.
    pub engine: String,
    /// IPv4 routes.
    pub v4: bool,
    /// IPv6 routes.
    pub v6: bool,
}

impl Families {
    /// Both families (for tests and engines that hold both).
    pub fn both(engine: &str) -> Families {
        Families {
            engine: engine.to_string(),
            v4: true,
            v6: true,
        }
    }

    /// What `engine` of ipfib's registry holds.
    pub fn of_engine(engine: &str) -> Result<Families, ipfib::BuildError> {
        let info = ipfib::engine::by_name(engine)?;
        let build = ipfib::BuildOptions::default();
        Ok(Families {
            engine: info.name().to_string(),
            v4: info.supports::<u32>(&build)?,
            v6: info.supports::<u128>(&build)?,
        })
    }
}

/// What one message means for the station.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// The session's first message; the router's sysName when it gave one.
    Initiation {
        /// sysName TLV.
        sys_name: Option<String>,
    },
    /// A peer's session came up (or up again: its old routes go).
    PeerUp {
        /// The peer.
        peer: PeerId,
    },
    /// A peer's session went down: all its routes go.
    PeerDown {
        /// The peer.
        peer: PeerId,
    },
    /// Route changes of one peer, in the order they apply (withdrawals of an UPDATE before
    /// its announcements), and the family an End-of-RIB marker closed.
    Routes {
        /// The peer.
        peer: PeerId,
        /// Prefix changes (canonical, of families the engine holds).
        changes: Vec<(IpNet, UpdateKind)>,
        /// The family of an End-of-RIB marker (RFC 4724 §2).
        end_of_rib: Option<Family>,
    },
    /// A Statistics Report: the route counters of the peer's Adj-RIB-In (types 7 and 9).
    Stats {
        /// The peer.
        peer: PeerId,
        /// Counter name and value.
        counters: Vec<(String, u64)>,
    },
    /// The router ends the session.
    Termination,
    /// A message with nothing for the station, and why.
    Ignored(&'static str),
}

#[derive(Default)]
struct PeerPaths {
    add_path: AddPath,
    /// Every path of every prefix, for ADD-PATH families only.
    paths: HashMap<IpNet, BTreeMap<u32, Option<IpAddr>>>,
}

/// The decoding state of one session.
pub struct Session {
    router: SocketAddr,
    view: View,
    families: Families,
    sys_name: Option<String>,
    peers: HashMap<PeerId, PeerPaths>,
    not_unicast: u64,
}

impl Session {
    /// A session from `router` whose `view` the station follows into a table of `families`.
    pub fn new(router: SocketAddr, view: View, families: Families) -> Session {
        Session {
            router,
            view,
            families,
            sys_name: None,
            peers: HashMap::new(),
            not_unicast: 0,
        }
    }

    /// The router's TCP address.
    pub fn router(&self) -> SocketAddr {
        self.router
    }

    /// The router's sysName, once given.
    pub fn sys_name(&self) -> Option<&str> {
        self.sys_name.as_deref()
    }

    /// Prefixes of other SAFIs (multicast, VPN, ...) left out so far.
    pub fn not_unicast(&self) -> u64 {
        self.not_unicast
    }

    /// An error of this session at `offset` (boxed: errors are rare and large).
    pub fn error(
        &self,
        offset: u64,
        kind: Option<u8>,
        peer: Option<IpAddr>,
        problem: Problem,
    ) -> Box<BmpError> {
        Box::new(BmpError {
            router: self.router,
            sys_name: self.sys_name.clone(),
            offset,
            message: kind.map(kind::name),
            peer,
            problem,
        })
    }

    /// What `frame` means, or why it is bad (nothing of a bad message is kept).
    pub fn decode(&mut self, frame: &Frame) -> Result<Message, Box<BmpError>> {
        let fail =
            |s: &Session, peer: Option<IpAddr>, p| s.error(frame.offset, Some(frame.kind), peer, p);
        let body = frame.body;
        match frame.kind {
            kind::INITIATION => {
                let sys_name = tlvs(body, 0)
                    .map_err(|d| fail(self, None, malformed("initiation", d)))?
                    .into_iter()
                    .find(|(t, _)| *t == 2)
                    .map(|(_, v)| String::from_utf8_lossy(v).into_owned());
                self.sys_name.clone_from(&sys_name);
                return Ok(Message::Initiation { sys_name });
            }
            kind::TERMINATION => return Ok(Message::Termination),
            kind::ROUTE_MIRRORING => return Ok(Message::Ignored("route mirroring messages")),
            _ => {}
        }
        let head = PeerHeader::read(body).map_err(|p| fail(self, None, p))?;
        let peer = PeerId {
            peer: head.peer,
            distinguisher: head.distinguisher,
        };
        let rest = &body[PER_PEER_HEADER..];
        // Peer Up, Peer Down and statistics are about the peer, whatever the policy flags;
        // only the Loc-RIB is a peer of its own.
        let peer_in_view =
            head.peer_type <= LOC_RIB && (head.peer_type == LOC_RIB) == (self.view == View::LocRib);
        match frame.kind {
            kind::PEER_UP if peer_in_view => {
                let add_path = open::peer_up(rest).map_err(|p| fail(self, Some(peer.peer), p))?;
                self.peers.insert(
                    peer,
                    PeerPaths {
                        add_path,
                        ..PeerPaths::default()
                    },
                );
                Ok(Message::PeerUp { peer })
            }
            kind::PEER_DOWN if peer_in_view => {
                self.peers.remove(&peer);
                Ok(Message::PeerDown { peer })
            }
            kind::STATISTICS if peer_in_view => {
                let counters = stats(rest)
                    .map_err(|d| fail(self, Some(peer.peer), malformed("statistics report", d)))?;
                Ok(Message::Stats { peer, counters })
            }
            kind::ROUTE_MONITORING if head.in_view(self.view) => self
                .route_monitoring(&head, peer, rest)
                .map_err(|p| fail(self, Some(peer.peer), p)),
            kind::ROUTE_MONITORING => Ok(Message::Ignored(head.ignored_as())),
            _ => Ok(Message::Ignored("peer messages of another view")),
        }
    }

    fn route_monitoring(
        &mut self,
        head: &PeerHeader,
        peer: PeerId,
        message: &[u8],
    ) -> Result<Message, Problem> {
        let update_error = |e: String| Problem::Update(e);
        let (kind, update) =
            bgp::split_message(message).map_err(|e| update_error(e.to_string()))?;
        if kind != bgp::UPDATE {
            return Err(Problem::Malformed {
                part: "route monitoring",
                detail: format!("it carries BGP message type {kind}, not an UPDATE"),
            });
        }
        let paths = self
            .peers
            .get(&peer)
            .map(|p| p.add_path)
            .unwrap_or_default();
        let add_path = add_path_of(update, paths)?;
        bgp::check_update(update, add_path).map_err(|e| update_error(e.to_string()))?;
        let asn = if head.as4() {
            AsnLength::Bits32
        } else {
            AsnLength::Bits16
        };
        let parsed = parse_bgp_update_message(Bytes::copy_from_slice(update), add_path, &asn)
            .map_err(|e| update_error(e.to_string()))?;
        bgp::decode::decoder_agrees(&parsed).map_err(update_error)?;
        let end_of_rib = parsed.is_end_of_rib().then(|| {
            match parsed.attributes.get_unreachable_nlri().map(|n| n.afi) {
                Some(Afi::Ipv6) => Family::V6,
                _ => Family::V4,
            }
        });
        let changes = bgp::decode::changes(&parsed, &mut self.not_unicast);
        for c in &changes {
            if c.prefix.trunc() != c.prefix {
                return Err(Problem::HostBits(c.prefix));
            }
            let family = Family::of(&c.prefix);
            let held = match family {
                Family::V4 => self.families.v4,
                Family::V6 => self.families.v6,
            };
            if !held {
                return Err(Problem::Family {
                    prefix: c.prefix,
                    engine: self.families.engine.clone(),
                    family: if family == Family::V4 { "IPv4" } else { "IPv6" },
                });
            }
        }
        // Every check passed: from here on the message is applied whole.
        let state = self.peers.entry(peer).or_default();
        let changes = if add_path {
            changes
                .into_iter()
                .filter_map(|c| state.best_path_change(c))
                .collect()
        } else {
            changes.into_iter().map(|c| (c.prefix, c.kind)).collect()
        };
        Ok(Message::Routes {
            peer,
            changes,
            end_of_rib,
        })
    }
}

impl PeerPaths {
    /// Applies one path's change and returns the change of the peer's route (its path with
    /// the lowest identifier), if any.
    fn best_path_change(&mut self, c: bgp::decode::Change) -> Option<(IpNet, UpdateKind)> {
        let id = c.path_id.unwrap_or(0);
        let paths = self.paths.entry(c.prefix).or_default();
        let before = paths.first_key_value().map(|(_, &nh)| nh);
        match c.kind {
            UpdateKind::Announce { next_hop } => {
                paths.insert(id, next_hop);
            }
            UpdateKind::Withdraw => {
                paths.remove(&id);
            }
        }
        let after = paths.first_key_value().map(|(_, &nh)| nh);
        if paths.is_empty() {
            self.paths.remove(&c.prefix);
        }
        if before == after {
            return None;
        }
        Some((
            c.prefix,
            match after {
                Some(next_hop) => UpdateKind::Announce { next_hop },
                None => UpdateKind::Withdraw,
            },
        ))
    }
}

/// Whether the UPDATE's prefixes carry path identifiers: the families it holds (classic
/// fields are IPv4, MP attributes name theirs) must agree.
fn add_path_of(update: &[u8], paths: AddPath) -> Result<bool, Problem> {
    if paths.v4 == paths.v6 {
        return Ok(paths.v4);
    }
    let mut seen = Vec::new();
    let wlen = update
        .get(..2)
        .map_or(0, |b| usize::from(u16::from_be_bytes([b[0], b[1]])));
    let alen_at = 2 + wlen;
    let alen = update
        .get(alen_at..alen_at + 2)
        .map_or(0, |b| usize::from(u16::from_be_bytes([b[0], b[1]])));
    let attrs = update.get(alen_at + 2..alen_at + 2 + alen).unwrap_or(&[]);
    if wlen > 0 || update.len() > alen_at + 2 + alen {
        seen.push(paths.v4);
    }
    let mut at = 0;
    while let Some(&[flags, code]) = attrs
        .get(at..at + 2)
        .map(|b| <&[u8; 2]>::try_from(b).expect("2"))
    {
        let (head, len) = if flags & 0x10 != 0 {
            (
                4,
                attrs
                    .get(at + 2..at + 4)
                    .map(|b| usize::from(u16::from_be_bytes([b[0], b[1]]))),
            )
        } else {
            (3, attrs.get(at + 2).map(|&b| usize::from(b)))
        };
        let Some(len) = len else { break };
        if code == 14 || code == 15 {
            match attrs.get(at + head..at + head + 2) {
                Some([0, 1]) => seen.push(paths.v4),
                Some([0, 2]) => seen.push(paths.v6),
                _ => {}
            }
        }
        at += head + len;
    }
    match seen.first() {
        None => Ok(false),
        Some(&first) if seen.iter().all(|&s| s == first) => Ok(first),
        Some(_) => Err(Problem::Malformed {
            part: "route monitoring",
            detail: "one UPDATE holds IPv4 and IPv6 prefixes, and only one of the families \
                     uses ADD-PATH"
                .into(),
        }),
    }
}

fn malformed(part: &'static str, detail: String) -> Problem {
    Problem::Malformed { part, detail }
}

/// Type-length-value entries (2-byte type, 2-byte length) from `at`.
fn tlvs(body: &[u8], mut at: usize) -> Result<Vec<(u16, &[u8])>, String> {
    let mut out = Vec::new();
    while at < body.len() {
        let h = body.get(at..at + 4).ok_or("a TLV header is cut")?;
        let (t, len) = (
            u16::from_be_bytes([h[0], h[1]]),
            usize::from(u16::from_be_bytes([h[2], h[3]])),
        );
        let value = body
            .get(at + 4..at + 4 + len)
            .ok_or_else(|| format!("a TLV of {len} bytes runs past the message"))?;
        out.push((t, value));
        at += 4 + len;
    }
    Ok(out)
}

/// The route counters of a Statistics Report: type 7 (routes in the Adj-RIB-In) and type 9
/// (per AFI/SAFI).
fn stats(body: &[u8]) -> Result<Vec<(String, u64)>, String> {
    let count = body.get(..4).ok_or("the counter count is cut")?;
    let count = u32::from_be_bytes(count.try_into().expect("4 bytes"));
    let entries = tlvs(body, 4)?;
    if entries.len() as u64 != u64::from(count) {
        return Err(format!(
            "{count} counters announced, {} present",
            entries.len()
        ));
    }
    let mut out = Vec::new();
    for (t, v) in entries {
        match (t, v.len()) {
            (7, 8) => out.push((
                "adj_rib_in_routes".into(),
                u64::from_be_bytes(v.try_into().expect("8")),
            )),
            (9, 11) => out.push((
                format!(
                    "adj_rib_in_routes_afi{}_safi{}",
                    u16::from_be_bytes([v[0], v[1]]),
                    v[2]
                ),
                u64::from_be_bytes(v[3..].try_into().expect("8")),
            )),
            _ => {}
        }
    }
    Ok(out)
}
