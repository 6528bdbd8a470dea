//! The path attributes field (RFC 4271 §4.3): each attribute's flags, type and length framing
//! (RFC 7606 §4: one bad length makes the rest unreadable), and the three attributes that
//! decide which prefixes change and where they point: NEXT_HOP, MP_REACH_NLRI and
//! MP_UNREACH_NLRI (RFC 4760). Other attributes are framed, not decoded.

use super::error::{Field, Problem, UpdateError};
use super::nlri::check_prefixes;

const NEXT_HOP: u8 = 3;
const MP_REACH_NLRI: u8 = 14;
const MP_UNREACH_NLRI: u8 = 15;
/// The Extended Length flag: a 2-byte length follows the type.
const EXTENDED_LENGTH: u8 = 0x10;

/// What the attributes say about the message's announcements.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    /// A NEXT_HOP attribute is present (and 4 bytes long).
    pub next_hop: bool,
}

/// Checks the path attributes field, which starts at `base` of the message.
pub(crate) fn check_attributes(
    bytes: &[u8],
    base: usize,
    add_path: bool,
) -> Result<Seen, UpdateError> {
    let mut seen = Seen::default();
    let mut once = [false; 3];
    let mut at = 0;
    while at < bytes.len() {
        let flags = bytes[at];
        let header = if flags & EXTENDED_LENGTH != 0 { 4 } else { 3 };
        let Some(head) = bytes.get(at..at + header) else {
            return Err(UpdateError {
                offset: base + at,
                problem: Problem::Truncated(Field::PathAttributes),
            });
        };
        let code = head[1];
        let len = if header == 4 {
            usize::from(u16::from_be_bytes([head[2], head[3]]))
        } else {
            usize::from(head[2])
        };
        let start = at + header;
        let available = bytes.len() - start;
        if len > available {
            return Err(UpdateError {
                offset: base + at,
                problem: Problem::LengthOverrun {
                    field: Field::PathAttributes,
                    declared: len,
                    available,
                },
            });
        }
        let value = &bytes[start..start + len];
        let slot = match code {
            NEXT_HOP => Some(0),
            MP_REACH_NLRI => Some(1),
            MP_UNREACH_NLRI => Some(2),
            _ => None,
        };
        if let Some(slot) = slot {
            if std::mem::replace(&mut once[slot], true) {
                return Err(UpdateError {
                    offset: base + at,
                    problem: Problem::DuplicateAttribute(code),
                });
            }
        }
        match code {
            NEXT_HOP if len != 4 => {
                return Err(UpdateError {
                    offset: base + at,
                    problem: Problem::NextHopLength(len),
                })
            }
            NEXT_HOP => seen.next_hop = true,
            MP_REACH_NLRI => check_mp_reach(value, base + start, add_path)?,
            MP_UNREACH_NLRI => check_mp_unreach(value, base + start, add_path)?,
            _ => {}
        }
        at = start + len;
    }
    Ok(seen)
}

/// The prefix length limit of a family whose NLRI are plain prefixes (unicast and multicast
/// IPv4 and IPv6); `None` for every other family (labelled, VPN, flowspec, EVPN, ...), whose
/// NLRI this module does not decode.
fn plain_prefix_bits(afi: u16, safi: u8) -> Option<u8> {
    match (afi, safi) {
        (1, 1 | 2) => Some(32),
        (2, 1 | 2) => Some(128),
        _ => None,
    }
}

/// The next-hop lengths a family allows, where known: RFC 4760 (IPv4 4, IPv6 16 or 32 with a
/// link-local address), RFC 8950 (IPv4 NLRI with an IPv6 next hop), RFC 4364 / RFC 4659 (VPN
/// next hops carry an 8-byte route distinguisher first).
fn next_hop_lengths(afi: u16, safi: u8) -> Option<(&'static [usize], &'static str)> {
    match (afi, safi) {
        (1, 1 | 2 | 4) => Some((
            &[4, 16, 32],
            "4, or 16 or 32 for an IPv6 next hop (RFC 8950)",
        )),
        (2, 1 | 2 | 4) => Some((&[16, 32], "16, or 32 with a link-local address")),
        (1, 128 | 129) => Some((&[12, 24, 48], "12, or 24 or 48 for an IPv6 next hop")),
        (2, 128 | 129) => Some((&[24, 48], "24 or 48")),
        _ => None,
    }
}

/// MP_REACH_NLRI: AFI (2), SAFI (1), next-hop length (1), next hop, reserved (1), NLRI.
fn check_mp_reach(value: &[u8], base: usize, add_path: bool) -> Result<(), UpdateError> {
    let too_short = || UpdateError {
        offset: base,
        problem: Problem::AttributeTooShort {
            field: Field::MpReach,
            len: value.len(),
        },
    };
    let [a0, a1, safi, nh_len, ..] = *value else {
        return Err(too_short());
    };
    let afi = u16::from_be_bytes([a0, a1]);
    let nh_len = usize::from(nh_len);
    // Next hop, then the reserved byte (RFC 4760: set to 0, ignored when received).
    let nlri_at = 4 + nh_len + 1;
    if nlri_at > value.len() {
        return Err(UpdateError {
            offset: base + 3,
            problem: Problem::LengthOverrun {
                field: Field::MpReach,
                declared: nh_len,
                available: value.len() - 4,
            },
        });
    }
    if let Some((allowed, text)) = next_hop_lengths(afi, safi) {
        if !allowed.contains(&nh_len) {
            return Err(UpdateError {
                offset: base + 3,
                problem: Problem::MpNextHopLength {
                    afi,
                    safi,
                    len: nh_len,
                    allowed: text,
                },
            });
        }
    }
    match plain_prefix_bits(afi, safi) {
        Some(max) => check_prefixes(
            &value[nlri_at..],
            base + nlri_at,
            Field::MpReach,
            max,
            add_path,
        ),
        None => Ok(()),
    }
}

/// MP_UNREACH_NLRI: AFI (2), SAFI (1), withdrawn routes.
fn check_mp_unreach(value: &[u8], base: usize, add_path: bool) -> Result<(), UpdateError> {
    let [a0, a1, safi, ..] = *value else {
        return Err(UpdateError {
            offset: base,
            problem: Problem::AttributeTooShort {
                field: Field::MpUnreach,
                len: value.len(),
            },
        });
    };
    match plain_prefix_bits(u16::from_be_bytes([a0, a1]), safi) {
        Some(max) => check_prefixes(&value[3..], base + 3, Field::MpUnreach, max, add_path),
        None => Ok(()),
    }
}
