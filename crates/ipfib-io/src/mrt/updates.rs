//! BGP4MP / BGP4MP_ET update files (RFC 6396 §4.4) as [`UpdateRecord`]s.
//!
//! Framing and offsets are ours ([`super::frame`]), message bodies are decoded by
//! bgpkit-parser. From each UPDATE the withdrawals come first, then the announcements (the
//! order RFC 4271 §9 processes them in), each from the classic fields and from
//! MP_UNREACH/MP_REACH_NLRI; only unicast prefixes are kept (multicast and labelled ones are
//! counted as ignored). State changes, OPEN, KEEPALIVE and the other messages carry no route
//! change and are counted as ignored too: a session going down is *not* turned into
//! withdrawals (the files record what was received, and a replay must not invent updates).

use std::io::BufRead;
use std::path::Path;

use bgpkit_parser::models::{Bgp4MpEnum, BgpMessage, BgpUpdateMessage, Safi};
use bgpkit_parser::parse_bgp4mp;
use bytes::Bytes;
use ipnet::IpNet;

use super::frame::{FrameError, Framer, Record};
use super::header::types;
use super::readahead::read_ahead;
use crate::updates::{UpdateKind, UpdateRecord, UpdateReport};
use crate::LoadError;

/// Reads every prefix update of a decompressed MRT stream.
pub(crate) fn read(
    input: Box<dyn BufRead + Send>,
    name: &Path,
    skip_bad_records: bool,
) -> Result<(Vec<UpdateRecord>, UpdateReport), LoadError> {
    let error = |offset, reason: String| LoadError::Record {
        path: name.to_path_buf(),
        offset,
        reason,
    };
    let mut framer = Framer::new(read_ahead(input));
    let mut out = Vec::new();
    let mut report = UpdateReport {
        format: "mrt",
        ..UpdateReport::default()
    };
    loop {
        let record = match framer.next(false) {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(FrameError { at_end: true, .. }) if skip_bad_records => {
                report.skipped += 1;
                break;
            }
            Err(e) => return Err(error(e.offset, e.reason)),
        };
        report.records += 1;
        let offset = record.offset;
        match decode(record, &mut out, &mut report) {
            Ok(()) => {}
            Err(_) if skip_bad_records => report.skipped += 1,
            Err(reason) => return Err(error(offset, reason)),
        }
    }
    Ok((out, report))
}

/// The prefix updates of one record, appended to `out`; `Err` is why the record is bad
/// (nothing of it is appended then).
fn decode(
    record: Record,
    out: &mut Vec<UpdateRecord>,
    report: &mut UpdateReport,
) -> Result<(), String> {
    let Record {
        timestamp,
        micros,
        kind,
        subtype,
        body,
        ..
    } = record;
    match kind {
        types::BGP4MP | types::BGP4MP_ET => {}
        types::TABLE_DUMP | types::TABLE_DUMP_V2 => {
            return Err(
                "a RIB dump record (TABLE_DUMP) in an update stream: give a BGP4MP \
                        updates file here, and a RIB dump as the base table (--fib)"
                    .into(),
            )
        }
        _ => {
            report.ignored += 1;
            return Ok(());
        }
    }
    let message = match parse_bgp4mp(subtype, Bytes::from(body)) {
        Ok(Bgp4MpEnum::Message(m)) => m,
        Ok(Bgp4MpEnum::StateChange(_)) => {
            report.ignored += 1;
            return Ok(());
        }
        Err(e) => return Err(format!("BGP4MP subtype {subtype}: {e}")),
    };
    let BgpMessage::Update(update) = message.bgp_message else {
        report.ignored += 1;
        return Ok(());
    };
    let time_us = u64::from(timestamp) * 1_000_000 + u64::from(micros);
    let peer = Some(message.peer_ip);
    let start = out.len();
    let mut push = |prefix: IpNet, kind| {
        if prefix.trunc() != prefix {
            return Err(format!(
                "prefix {prefix} has bits set past its length (the network is {})",
                prefix.trunc()
            ));
        }
        out.push(UpdateRecord {
            time_us,
            peer,
            prefix,
            kind,
        });
        Ok(())
    };
    let result = (|| {
        for (prefix, kind) in changes(&update, report) {
            push(prefix, kind)?;
        }
        Ok(())
    })();
    if result.is_err() {
        out.truncate(start);
    }
    result
}

/// Withdrawals, then announcements, of one UPDATE (unicast only).
fn changes(update: &BgpUpdateMessage, report: &mut UpdateReport) -> Vec<(IpNet, UpdateKind)> {
    let attrs = &update.attributes;
    let mut out = Vec::new();
    out.extend(
        update
            .withdrawn_prefixes
            .iter()
            .map(|p| (p.prefix, UpdateKind::Withdraw)),
    );
    if let Some(nlri) = attrs.get_unreachable_nlri() {
        if nlri.safi == Safi::Unicast {
            out.extend(
                nlri.prefixes
                    .iter()
                    .map(|p| (p.prefix, UpdateKind::Withdraw)),
            );
        } else {
            report.ignored += nlri.prefixes.len() as u64;
        }
    }
    let classic = UpdateKind::Announce {
        next_hop: attrs.next_hop(),
    };
    out.extend(
        update
            .announced_prefixes
            .iter()
            .map(|p| (p.prefix, classic)),
    );
    if let Some(nlri) = attrs.get_reachable_nlri() {
        if nlri.safi == Safi::Unicast {
            let kind = UpdateKind::Announce {
                next_hop: nlri.next_hop.map(|nh| nh.global_addr()),
            };
            out.extend(nlri.prefixes.iter().map(|p| (p.prefix, kind)));
        } else {
            report.ignored += nlri.prefixes.len() as u64;
        }
    }
    out
}
