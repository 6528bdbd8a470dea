//! MRT update files as [`UpdateRecord`]s: BGP4MP / BGP4MP_ET (RFC 6396 §4.4, ADD-PATH
//! subtypes of RFC 8050) and the deprecated type 5 BGP records (Appendix B.2.1).
//!
//! Framing and offsets are ours ([`super::frame`]); what each record carries is read by
//! [`super::envelope`]; every UPDATE is checked by [`crate::bgp::check_update`] and then decoded
//! by bgpkit-parser, whose warnings must not say it dropped anything (else the record is bad).
//! A bad record is an error naming its offset, or with `skip_bad_records` skipped whole and
//! counted: nothing of it is applied. From each UPDATE the withdrawals come first, then the
//! announcements (the order RFC 4271 §9 processes them in), each from the classic fields and
//! from MP_UNREACH/MP_REACH_NLRI; only unicast prefixes are kept (multicast and labelled ones
//! are counted as ignored). State changes, OPEN, KEEPALIVE and the other messages carry no
//! route change and are counted as ignored too, by reason: a session going down is *not*
//! turned into withdrawals (the files record what was received, and a replay must not invent
//! updates).

use std::io::BufRead;
use std::path::Path;

use bgpkit_parser::models::AsnLength;
use bgpkit_parser::parser::bgp::messages::parse_bgp_update_message;
use bytes::Bytes;

use super::envelope::{self, reason, Carried};
use super::frame::{FrameError, Framer, Record};
use super::header::{types, HEADER_LEN};
use super::readahead::read_ahead;
use crate::bgp;
use crate::updates::{UpdateRecord, UpdateReport};
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
            Err(e @ FrameError { at_end: true, .. }) if skip_bad_records => {
                report.skipped += 1;
                report
                    .first_skipped
                    .get_or_insert(error(e.offset, e.reason).to_string());
                break;
            }
            Err(e) => return Err(error(e.offset, e.reason)),
        };
        report.records += 1;
        let offset = record.offset;
        match decode(record, &mut out, &mut report) {
            Ok(()) => {}
            Err(reason) if skip_bad_records => {
                report.skipped += 1;
                report
                    .first_skipped
                    .get_or_insert(error(offset, reason).to_string());
            }
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
        offset,
        timestamp,
        micros,
        kind,
        subtype,
        body,
        ..
    } = record;
    let carried = match kind {
        types::BGP4MP | types::BGP4MP_ET => envelope::bgp4mp(subtype, &body)?,
        types::BGP => envelope::legacy_bgp(subtype, &body)?,
        types::TABLE_DUMP | types::TABLE_DUMP_V2 => {
            return Err(
                "a RIB dump record (TABLE_DUMP) in an update stream: give a BGP4MP \
                        updates file here, and a RIB dump as the base table (--fib)"
                    .into(),
            )
        }
        types::BGP4PLUS | types::BGP4PLUS_01 => {
            return Err(format!(
                "MRT type {kind} (BGP4PLUS, the deprecated BGP over IPv6 format) carries route \
                 changes but is not read"
            ))
        }
        types::START..=types::PEER_DOWN => Carried::Ignored(reason::EVENTS),
        _ => Carried::Ignored(reason::OTHER_PROTOCOLS),
    };
    let (peer, at, add_path, as4) = match carried {
        Carried::Ignored(why) => {
            report.ignore(why, 1);
            return Ok(());
        }
        Carried::Update {
            peer,
            at,
            add_path,
            as4,
        } => (peer, at, add_path, as4),
    };
    // The body's first byte in the stream: after the header (and the microsecond field).
    let body_at = offset + HEADER_LEN as u64 + if types::is_extended(kind) { 4 } else { 0 };
    let update = &body[at..];
    bgp::check_update(update, add_path).map_err(|e| {
        format!(
            "malformed BGP UPDATE from {peer}: at byte offset {} (byte {} of the UPDATE): {}",
            body_at + (at + e.offset) as u64,
            e.offset,
            e.problem
        )
    })?;
    let asn = if as4 {
        AsnLength::Bits32
    } else {
        AsnLength::Bits16
    };
    let update = parse_bgp_update_message(Bytes::from(body).slice(at..), add_path, &asn)
        .map_err(|e| format!("BGP UPDATE from {peer}: {e}"))?;
    bgp::decode::decoder_agrees(&update)?;
    let time_us = u64::from(timestamp) * 1_000_000 + u64::from(micros);
    let start = out.len();
    let mut not_unicast = 0;
    let changes = bgp::decode::changes(&update, &mut not_unicast);
    if not_unicast > 0 {
        report.ignore(reason::NOT_UNICAST, not_unicast);
    }
    for bgp::decode::Change { prefix, kind, .. } in changes {
        if prefix.trunc() != prefix {
            out.truncate(start);
            return Err(format!(
                "prefix {prefix} has bits set past its length (the network is {})",
                prefix.trunc()
            ));
        }
        out.push(UpdateRecord {
            time_us,
            peer: Some(peer),
            prefix,
            kind,
        });
    }
    Ok(())
}
