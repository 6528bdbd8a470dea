//! From a decoded UPDATE to prefix changes: the one reading of an UPDATE that the MRT update
//! reader and the BMP station share, so a message means the same thing in a file and on a
//! live session.
//!
//! The raw bytes are checked first ([`super::check_update`]); bgpkit-parser then decodes
//! them, and [`decoder_agrees`] refuses a message of which it dropped anything. [`changes`]
//! lists the withdrawals first, then the announcements (the order RFC 4271 §9 processes them
//! in), each from the classic fields and then from MP_UNREACH/MP_REACH_NLRI. Only unicast
//! prefixes are kept. A classic announcement's next hop is NEXT_HOP, an MP_REACH one's is the
//! global address of its next hop.

use bgpkit_parser::error::BgpValidationWarning;
use bgpkit_parser::models::{AttrType, BgpUpdateMessage, Safi};
use ipnet::IpNet;

use crate::updates::UpdateKind;

/// One prefix of an UPDATE: announced or withdrawn, with its ADD-PATH path identifier
/// (RFC 7911) when the session uses ADD-PATH for its family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Change {
    /// The prefix, as the message carries it (host bits are the caller's to check).
    pub prefix: IpNet,
    /// The path identifier, with ADD-PATH.
    pub path_id: Option<u32>,
    /// Announcement (with the next hop) or withdrawal.
    pub kind: UpdateKind,
}

/// bgpkit-parser's account of a message [`super::check_update`] passed: any warning that it
/// dropped prefixes or a next hop means the two disagree about the bytes, and the message is
/// bad rather than applied in part.
pub(crate) fn decoder_agrees(update: &BgpUpdateMessage) -> Result<(), String> {
    for w in update.attributes.validation_warnings() {
        let dropped = match w {
            BgpValidationWarning::MalformedNlri { .. }
            | BgpValidationWarning::MalformedAttributeList { .. } => true,
            BgpValidationWarning::OptionalAttributeError { attr_type, .. } => matches!(
                attr_type,
                AttrType::MP_REACHABLE_NLRI | AttrType::MP_UNREACHABLE_NLRI
            ),
            _ => false,
        };
        if dropped {
            return Err(format!("bgpkit-parser dropped part of this UPDATE: {w}"));
        }
    }
    Ok(())
}

/// Withdrawals, then announcements, of one UPDATE (unicast only); prefixes of other SAFIs are
/// counted in `not_unicast`.
pub(crate) fn changes(update: &BgpUpdateMessage, not_unicast: &mut u64) -> Vec<Change> {
    let attrs = &update.attributes;
    let mut out = Vec::new();
    let withdraw = |p: &bgpkit_parser::models::NetworkPrefix| Change {
        prefix: p.prefix,
        path_id: p.path_id,
        kind: UpdateKind::Withdraw,
    };
    out.extend(update.withdrawn_prefixes.iter().map(withdraw));
    if let Some(nlri) = attrs.get_unreachable_nlri() {
        if nlri.safi == Safi::Unicast {
            out.extend(nlri.prefixes.iter().map(withdraw));
        } else {
            *not_unicast += nlri.prefixes.len() as u64;
        }
    }
    let announce = |kind: UpdateKind| {
        move |p: &bgpkit_parser::models::NetworkPrefix| Change {
            prefix: p.prefix,
            path_id: p.path_id,
            kind,
        }
    };
    let classic = UpdateKind::Announce {
        next_hop: attrs.next_hop(),
    };
    out.extend(update.announced_prefixes.iter().map(announce(classic)));
    if let Some(nlri) = attrs.get_reachable_nlri() {
        if nlri.safi == Safi::Unicast {
            let kind = UpdateKind::Announce {
                next_hop: nlri.next_hop.map(|nh| nh.global_addr()),
            };
            out.extend(nlri.prefixes.iter().map(announce(kind)));
        } else {
            *not_unicast += nlri.prefixes.len() as u64;
        }
    }
    out
}
