//! Hand-built BGP UPDATE messages and the MRT bodies that carry them (BGP4MP and the deprecated
//! type 5), for the malformed cases no real file has.

#![allow(dead_code)]

/// An UPDATE message body (what follows the 19-byte BGP header), field by field, as raw bytes:
/// each field may be made malformed on purpose.
#[derive(Clone, Default)]
pub struct Update {
    /// Withdrawn routes (the field, without its length).
    pub withdrawn: Vec<u8>,
    /// Path attributes (the field, without its length).
    pub attrs: Vec<u8>,
    /// The trailing NLRI.
    pub nlri: Vec<u8>,
}

impl Update {
    /// The body: withdrawn length, withdrawn routes, attribute length, attributes, NLRI.
    pub fn body(&self) -> Vec<u8> {
        let mut out = (self.withdrawn.len() as u16).to_be_bytes().to_vec();
        out.extend(&self.withdrawn);
        out.extend((self.attrs.len() as u16).to_be_bytes());
        out.extend(&self.attrs);
        out.extend(&self.nlri);
        out
    }

    /// An announcement of IPv4 `prefixes` with ORIGIN, AS_PATH and NEXT_HOP `next_hop`.
    pub fn announce_v4(prefixes: &[&str], next_hop: [u8; 4]) -> Self {
        let mut attrs = origin_and_path();
        attrs.extend(attr(0x40, 3, &next_hop));
        Update {
            attrs,
            nlri: prefixes.iter().flat_map(|p| prefix(p)).collect(),
            ..Update::default()
        }
    }

    /// A withdrawal of IPv4 `prefixes`.
    pub fn withdraw_v4(prefixes: &[&str]) -> Self {
        Update {
            withdrawn: prefixes.iter().flat_map(|p| prefix(p)).collect(),
            ..Update::default()
        }
    }
}

/// ORIGIN IGP and an empty AS_PATH (valid with 2- and 4-byte ASes alike).
pub fn origin_and_path() -> Vec<u8> {
    let mut out = attr(0x40, 1, &[0]);
    out.extend(attr(0x40, 2, &[]));
    out
}

/// One path attribute; the extended-length flag is set when the value needs it.
pub fn attr(flags: u8, code: u8, value: &[u8]) -> Vec<u8> {
    if value.len() > 255 {
        let mut out = vec![flags | 0x10, code];
        out.extend((value.len() as u16).to_be_bytes());
        out.extend(value);
        out
    } else {
        let mut out = vec![flags, code, value.len() as u8];
        out.extend(value);
        out
    }
}

/// A prefix in NLRI encoding: its length, then the bytes that hold it.
pub fn prefix(p: &str) -> Vec<u8> {
    let net: ipnet::IpNet = p.parse().unwrap();
    let bits = net.prefix_len();
    let bytes = match net.network() {
        std::net::IpAddr::V4(a) => a.octets().to_vec(),
        std::net::IpAddr::V6(a) => a.octets().to_vec(),
    };
    raw_prefix(bits, &bytes[..usize::from(bits).div_ceil(8)])
}

/// A prefix entry with any length byte and any bytes (for malformed ones).
pub fn raw_prefix(bits: u8, bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![bits];
    out.extend(bytes);
    out
}

/// MP_REACH_NLRI: AFI, SAFI, next hop, reserved byte, NLRI.
pub fn mp_reach(afi: u16, safi: u8, next_hop: &[u8], nlri: &[u8]) -> Vec<u8> {
    let mut value = afi.to_be_bytes().to_vec();
    value.push(safi);
    value.push(next_hop.len() as u8);
    value.extend(next_hop);
    value.push(0);
    value.extend(nlri);
    attr(0x80, 14, &value)
}

/// MP_UNREACH_NLRI: AFI, SAFI, withdrawn NLRI.
pub fn mp_unreach(afi: u16, safi: u8, nlri: &[u8]) -> Vec<u8> {
    let mut value = afi.to_be_bytes().to_vec();
    value.push(safi);
    value.extend(nlri);
    attr(0x80, 15, &value)
}

/// A whole BGP message: marker, length, type 2 (UPDATE), body.
pub fn bgp_update_message(body: &[u8]) -> Vec<u8> {
    let mut out = vec![0xff; 16];
    out.extend(((body.len() + 19) as u16).to_be_bytes());
    out.push(2);
    out.extend(body);
    out
}

/// The body of a BGP4MP_MESSAGE_AS4 record (subtype 4) from IPv4 peer `peer` (AS 65001) to
/// the collector 192.0.2.254 (AS 65000), carrying an UPDATE with `body`.
pub fn bgp4mp_as4(peer: [u8; 4], body: &[u8]) -> Vec<u8> {
    let mut out = 65001u32.to_be_bytes().to_vec();
    out.extend(65000u32.to_be_bytes());
    out.extend([0, 0, 0, 1]); // interface index, AFI IPv4
    out.extend(peer);
    out.extend([192, 0, 2, 254]);
    out.extend(bgp_update_message(body));
    out
}

/// The body of a deprecated type 5 (BGP) BGP_UPDATE record (RFC 6396 B.2.1): peer AS, peer
/// IPv4 address, local AS, local IPv4 address, then the UPDATE without its BGP header.
pub fn legacy_update(peer: [u8; 4], body: &[u8]) -> Vec<u8> {
    let mut out = 65001u16.to_be_bytes().to_vec();
    out.extend(peer);
    out.extend(65000u16.to_be_bytes());
    out.extend([192, 0, 2, 254]);
    out.extend(body);
    out
}

/// An IPv6 MP_REACH announcement of `prefixes` with next hop 2001:db8::1.
pub fn announce_v6(prefixes: &[&str]) -> Update {
    let nh: std::net::Ipv6Addr = "2001:db8::1".parse().unwrap();
    let nlri: Vec<u8> = prefixes.iter().flat_map(|p| prefix(p)).collect();
    let mut attrs = origin_and_path();
    attrs.extend(mp_reach(2, 1, &nh.octets(), &nlri));
    Update {
        attrs,
        ..Update::default()
    }
}
