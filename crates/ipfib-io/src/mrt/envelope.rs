//! What an update-stream record carries: the MRT envelopes around BGP messages (RFC 6396 §4.4
//! BGP4MP and BGP4MP_ET, RFC 8050 ADD-PATH subtypes, and the deprecated type 5 "BGP" of
//! Appendix B.2.1 that RIS wrote until 2001), unpacked far enough to find the UPDATE message
//! body and the peer it came from. Anything else is either named as left out (with the
//! reason the update report counts it under) or is an error: no record is dropped unsaid.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::bgp;

/// What a record carries.
#[derive(Debug)]
pub(crate) enum Carried {
    /// An UPDATE message received from `peer`: its body starts at `at` of the record body.
    Update {
        peer: IpAddr,
        at: usize,
        add_path: bool,
        as4: bool,
    },
    /// No route change: left out, counted under this reason.
    Ignored(&'static str),
}

/// Reasons records are left out, as the update report names them.
pub(crate) mod reason {
    pub const STATE_CHANGE: &str = "BGP state changes";
    pub const OPEN: &str = "OPEN messages";
    pub const NOTIFICATION: &str = "NOTIFICATION messages";
    pub const KEEPALIVE: &str = "KEEPALIVE messages";
    pub const ROUTE_REFRESH: &str = "ROUTE-REFRESH messages";
    pub const LOCAL: &str = "messages the collector sent (BGP4MP *_LOCAL subtypes)";
    pub const EVENTS: &str = "collector events (MRT START, DIE, I_AM_DEAD, PEER_DOWN)";
    pub const OTHER_PROTOCOLS: &str = "other routing protocols (RIP, IDRP, RIPng, OSPF, IS-IS)";
    pub const NOT_UNICAST: &str = "prefixes of non-unicast families (multicast, VPN, ...)";
}

/// A BGP4MP / BGP4MP_ET record body (the microsecond field already removed).
pub(crate) fn bgp4mp(subtype: u16, body: &[u8]) -> Result<Carried, String> {
    // (4-byte ASes, ADD-PATH) of the subtypes that carry received messages.
    let (as4, add_path) = match subtype {
        0 | 5 => return Ok(Carried::Ignored(reason::STATE_CHANGE)),
        1 => (false, false),
        4 => (true, false),
        8 => (false, true),
        9 => (true, true),
        6 | 7 | 10 | 11 => return Ok(Carried::Ignored(reason::LOCAL)),
        2 | 3 => {
            return Err(format!(
                "BGP4MP subtype {subtype} ({}, a RIB format of the MRT drafts) in an update \
                 stream: it holds table entries, not route changes, and is not read",
                if subtype == 2 {
                    "BGP4MP_ENTRY"
                } else {
                    "BGP4MP_SNAPSHOT"
                }
            ))
        }
        _ => return Err(format!("unknown BGP4MP subtype {subtype}")),
    };
    let as_len = if as4 { 4 } else { 2 };
    if !as4 && is_short_zebra_open(body) {
        return Ok(Carried::Ignored(reason::OPEN));
    }
    // Peer AS, local AS, interface index, address family, then the two addresses.
    let afi_at = 2 * as_len + 2;
    let afi = body
        .get(afi_at..afi_at + 2)
        .map(|b| u16::from_be_bytes([b[0], b[1]]))
        .ok_or_else(|| {
            format!(
                "BGP4MP record of {} bytes, too short for its header",
                body.len()
            )
        })?;
    let ip_at = afi_at + 2;
    let (peer, ip_len) = match afi {
        1 => (body.get(ip_at..ip_at + 4).map(ipv4), 4),
        2 => (body.get(ip_at..ip_at + 16).map(ipv6), 16),
        other => return Err(format!("BGP4MP address family {other} (expected 1 or 2)")),
    };
    let message_at = ip_at + 2 * ip_len;
    let (Some(peer), Some(message)) = (peer, body.get(message_at..)) else {
        return Err(format!(
            "BGP4MP record of {} bytes, too short for its header",
            body.len()
        ));
    };
    message_kind(message, message_at, peer, add_path, as4)
}

/// A deprecated type 5 (BGP) record body (RFC 6396 Appendix B.2.1): BGP_UPDATE is peer AS (2),
/// peer IPv4 address (4), local AS (2), local IPv4 address (4), then the UPDATE message
/// *without* its 19-byte BGP header.
pub(crate) fn legacy_bgp(subtype: u16, body: &[u8]) -> Result<Carried, String> {
    match subtype {
        1 => {}
        3 => return Ok(Carried::Ignored(reason::STATE_CHANGE)),
        5 => return Ok(Carried::Ignored(reason::OPEN)),
        6 => return Ok(Carried::Ignored(reason::NOTIFICATION)),
        7 => return Ok(Carried::Ignored(reason::KEEPALIVE)),
        0 | 2 | 4 => {
            return Err(format!(
                "MRT type 5 (BGP) subtype {subtype} ({}) is not read",
                match subtype {
                    0 => "BGP_NULL",
                    2 => "BGP_PREF_UPDATE",
                    _ => "BGP_SYNC",
                }
            ))
        }
        _ => return Err(format!("unknown MRT type 5 (BGP) subtype {subtype}")),
    }
    let peer = body.get(2..6).map(ipv4).filter(|_| body.len() >= 12);
    let Some(peer) = peer else {
        return Err(format!(
            "MRT type 5 BGP_UPDATE record of {} bytes, shorter than its 12-byte header",
            body.len()
        ));
    };
    Ok(Carried::Update {
        peer,
        at: 12,
        add_path: false,
        as4: false,
    })
}

/// Old Zebra collectors (RIS rrc01 of 2000, for one) wrote the OPEN they sent right after the
/// two AS numbers, with no interface index, address family or addresses: a BGP marker at byte
/// 4 and message type OPEN at byte 22 (bgpkit-parser and bgpdump accept this form too).
fn is_short_zebra_open(body: &[u8]) -> bool {
    body.len() >= 4 + bgp::HEADER_LEN && body[4..20].iter().all(|&b| b == 0xff) && body[22] == 1
}

/// A whole BGP message at `at` of a BGP4MP body.
fn message_kind(
    message: &[u8],
    at: usize,
    peer: IpAddr,
    add_path: bool,
    as4: bool,
) -> Result<Carried, String> {
    let (kind, _) = bgp::split_message(message).map_err(|e| {
        format!(
            "BGP message at byte {} of the record body: {}",
            at + e.offset,
            e.problem
        )
    })?;
    Ok(match kind {
        bgp::UPDATE => Carried::Update {
            peer,
            at: at + bgp::HEADER_LEN,
            add_path,
            as4,
        },
        1 => Carried::Ignored(reason::OPEN),
        3 => Carried::Ignored(reason::NOTIFICATION),
        4 => Carried::Ignored(reason::KEEPALIVE),
        5 => Carried::Ignored(reason::ROUTE_REFRESH),
        other => return Err(format!("unknown BGP message type {other}")),
    })
}

fn ipv4(b: &[u8]) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(b[0], b[1], b[2], b[3]))
}

fn ipv6(b: &[u8]) -> IpAddr {
    let mut a = [0u8; 16];
    a.copy_from_slice(b);
    IpAddr::V6(Ipv6Addr::from(a))
}
