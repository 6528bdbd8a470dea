//! The per-peer header (RFC 7854 §4.2; Loc-RIB peers of RFC 9069) and which Adj-RIB a
//! message reports.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use super::error::Problem;
use super::frame::PER_PEER_HEADER;

/// Which RIB of the router a station follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum View {
    /// Adj-RIB-In before the router's import policy (peer types 0 to 2, L and O flags clear).
    #[default]
    PrePolicy,
    /// Adj-RIB-In after the import policy (L flag set, O clear).
    PostPolicy,
    /// The router's Loc-RIB (peer type 3, RFC 9069).
    LocRib,
}

impl FromStr for View {
    type Err = String;
    /// `pre`, `post` or `loc`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "pre" => Ok(View::PrePolicy),
            "post" => Ok(View::PostPolicy),
            "loc" => Ok(View::LocRib),
            _ => Err(format!("expected pre, post or loc, got {s:?}")),
        }
    }
}

/// Peer type of the Loc-RIB instance (RFC 9069).
pub const LOC_RIB: u8 = 3;

/// The fields of a per-peer header the station uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerHeader {
    /// Peer type (0 global, 1 RD, 2 local, 3 Loc-RIB).
    pub peer_type: u8,
    /// Peer flags.
    pub flags: u8,
    /// Peer distinguisher.
    pub distinguisher: u64,
    /// Peer address (0.0.0.0 for Loc-RIB).
    pub peer: IpAddr,
}

impl PeerHeader {
    /// Reads the first [`PER_PEER_HEADER`] bytes of `body`.
    pub fn read(body: &[u8]) -> Result<PeerHeader, Problem> {
        let Some(h) = body.get(..PER_PEER_HEADER) else {
            return Err(Problem::Malformed {
                part: "per-peer header",
                detail: format!("{} bytes, needs {PER_PEER_HEADER}", body.len()),
            });
        };
        let (peer_type, flags) = (h[0], h[1]);
        let distinguisher = u64::from_be_bytes(h[2..10].try_into().expect("8 bytes"));
        let peer = if peer_type == LOC_RIB {
            IpAddr::V4(Ipv4Addr::UNSPECIFIED)
        } else if flags & 0x80 != 0 {
            IpAddr::V6(Ipv6Addr::from(
                <[u8; 16]>::try_from(&h[10..26]).expect("16 bytes"),
            ))
        } else {
            IpAddr::V4(Ipv4Addr::new(h[22], h[23], h[24], h[25]))
        };
        Ok(PeerHeader {
            peer_type,
            flags,
            distinguisher,
            peer,
        })
    }

    /// Whether the message belongs to `view`.
    pub fn in_view(&self, view: View) -> bool {
        let (post, out) = (self.flags & 0x40 != 0, self.flags & 0x10 != 0);
        match view {
            View::PrePolicy => self.peer_type < LOC_RIB && !post && !out,
            View::PostPolicy => self.peer_type < LOC_RIB && post && !out,
            View::LocRib => self.peer_type == LOC_RIB,
        }
    }

    /// Why a message outside `view` is left out.
    pub fn ignored_as(&self) -> &'static str {
        if self.peer_type > LOC_RIB {
            "unknown peer types"
        } else if self.peer_type == LOC_RIB {
            "Loc-RIB messages"
        } else if self.flags & 0x10 != 0 {
            "Adj-RIB-Out messages"
        } else if self.flags & 0x40 != 0 {
            "post-policy messages"
        } else {
            "pre-policy messages"
        }
    }

    /// Whether the BGP messages use 4-byte AS numbers (the A flag clear, or Loc-RIB).
    pub fn as4(&self) -> bool {
        self.peer_type == LOC_RIB || self.flags & 0x20 == 0
    }
}
