//! Hand-built BMP messages (RFC 7854) for the station's tests.

#![allow(dead_code)]

use std::net::IpAddr;

/// A whole BMP message: common header (version 3, length, type) and body.
pub fn message(kind: u8, body: &[u8]) -> Vec<u8> {
    let mut out = vec![3];
    out.extend(((6 + body.len()) as u32).to_be_bytes());
    out.push(kind);
    out.extend(body);
    out
}

/// A per-peer header: peer type, flags, distinguisher, address (V flag set for IPv6), AS
/// 65001, BGP ID, zero timestamp.
pub fn peer_header(peer_type: u8, flags: u8, distinguisher: u64, peer: IpAddr) -> Vec<u8> {
    let mut out = vec![peer_type];
    let (addr, v6) = match peer {
        IpAddr::V4(a) => {
            let mut b = [0u8; 16];
            b[12..].copy_from_slice(&a.octets());
            (b, false)
        }
        IpAddr::V6(a) => (a.octets(), true),
    };
    out.push(flags | if v6 { 0x80 } else { 0 });
    out.extend(distinguisher.to_be_bytes());
    out.extend(addr);
    out.extend(65001u32.to_be_bytes());
    out.extend([10, 0, 0, 1]);
    out.extend([0; 8]);
    out
}

/// A route-monitoring message from `peer` (pre-policy, global) carrying a BGP message.
pub fn route_monitoring(peer: &str, flags: u8, bgp_message: &[u8]) -> Vec<u8> {
    let mut body = peer_header(0, flags, 0, peer.parse().unwrap());
    body.extend(bgp_message);
    message(0, &body)
}

/// An OPEN message with these capabilities (code, value).
pub fn open(caps: &[(u8, Vec<u8>)]) -> Vec<u8> {
    let mut cap = Vec::new();
    for (code, value) in caps {
        cap.push(*code);
        cap.push(value.len() as u8);
        cap.extend(value);
    }
    let mut params = vec![2, cap.len() as u8];
    params.extend(cap);
    let mut out = vec![0xff; 16];
    out.extend(((29 + params.len()) as u16).to_be_bytes());
    out.extend([1, 4, 0xfd, 0xe9, 0, 90, 10, 0, 0, 1, params.len() as u8]);
    out.extend(params);
    out
}

/// The ADD-PATH capability for (AFI, send/receive) entries, SAFI unicast.
pub fn add_path(entries: &[(u16, u8)]) -> (u8, Vec<u8>) {
    let value = entries
        .iter()
        .flat_map(|&(afi, sr)| {
            let mut v = afi.to_be_bytes().to_vec();
            v.extend([1, sr]);
            v
        })
        .collect();
    (69, value)
}

/// A Peer Up for `peer` with these OPENs.
pub fn peer_up(peer: &str, sent: &[u8], received: &[u8]) -> Vec<u8> {
    let mut body = peer_header(0, 0, 0, peer.parse().unwrap());
    body.extend([0; 20]);
    body.extend(sent);
    body.extend(received);
    message(3, &body)
}

/// A Peer Down for `peer` (reason 2).
pub fn peer_down(peer: &str) -> Vec<u8> {
    let mut body = peer_header(0, 0, 0, peer.parse().unwrap());
    body.extend([2, 0, 0]);
    message(2, &body)
}

/// An Initiation message with a sysName.
pub fn initiation(sys_name: &str) -> Vec<u8> {
    let mut body = 2u16.to_be_bytes().to_vec();
    body.extend((sys_name.len() as u16).to_be_bytes());
    body.extend(sys_name.as_bytes());
    message(4, &body)
}
