//! What went wrong on a BMP session, and where: every error names the router (its TCP
//! address, and its sysName once the Initiation message gave one), the byte offset of the
//! message in the session's stream, the message type and the problem.

use std::fmt;
use std::net::{IpAddr, SocketAddr};

use ipnet::IpNet;

/// A BMP session closed because of what it sent (or because it could not be read).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "router {router}{}: at byte {offset}{}: {problem}",
    Named(sys_name),
    At(message, peer)
)]
pub struct BmpError {
    /// The router's TCP address.
    pub router: SocketAddr,
    /// The router's sysName (Initiation message), when it sent one.
    pub sys_name: Option<String>,
    /// Offset of the bad message's first byte in the session's stream.
    pub offset: u64,
    /// The message type's name, when the common header was read.
    pub message: Option<&'static str>,
    /// The peer the message was about, when its per-peer header was read.
    pub peer: Option<IpAddr>,
    /// What is wrong.
    pub problem: Problem,
}

struct Named<'a>(&'a Option<String>);

impl fmt::Display for Named<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(name) => write!(f, " (sysName {name:?})"),
            None => Ok(()),
        }
    }
}

struct At<'a>(&'a Option<&'static str>, &'a Option<IpAddr>);

impl fmt::Display for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.0, self.1) {
            (Some(m), Some(p)) => write!(f, " ({m} about peer {p})"),
            (Some(m), None) => write!(f, " ({m})"),
            _ => Ok(()),
        }
    }
}

/// What is wrong with a BMP session's bytes (or its routes).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Problem {
    /// The common header's version is not 3 (RFC 7854).
    #[error("BMP version {0} (only version 3 is read)")]
    Version(u8),
    /// The common header's length is impossible for the message type, or absurdly large.
    #[error("message length {len} (a {kind} message has {min} to {max} bytes)")]
    Length {
        /// The declared length.
        len: u32,
        /// The message type's name.
        kind: &'static str,
        /// The smallest possible length.
        min: u32,
        /// The largest length accepted.
        max: u32,
    },
    /// The stream ended inside a message.
    #[error("the session ended inside a message ({got} of its {need} bytes arrived)")]
    Truncated {
        /// Bytes of the message that arrived.
        got: u64,
        /// The message's length (6 while the common header is incomplete).
        need: u64,
    },
    /// Reading the session failed.
    #[error("read error: {0}")]
    Io(String),
    /// A part of the message is malformed.
    #[error("malformed {part}: {detail}")]
    Malformed {
        /// The part (per-peer header, Peer Up, statistics, ...).
        part: &'static str,
        /// What is wrong with it.
        detail: String,
    },
    /// The BGP UPDATE a route-monitoring message carries is malformed.
    #[error("malformed BGP UPDATE: {0}")]
    Update(String),
    /// A prefix with host bits set.
    #[error("prefix {0} has bits set past its length")]
    HostBits(IpNet),
    /// A route of a family the live table's engine cannot hold.
    #[error("route {prefix}: engine {engine} holds no {family} routes")]
    Family {
        /// The route.
        prefix: IpNet,
        /// The engine.
        engine: String,
        /// "IPv4" or "IPv6".
        family: &'static str,
    },
    /// A limit of the station was reached (peers per router, routes per peer, next hops).
    #[error("limit reached: {0}")]
    Limit(String),
}
