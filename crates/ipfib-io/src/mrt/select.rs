//! From every path of a RIB to one value per prefix: peer choice, best path, value numbering.

use std::collections::HashMap;
use std::net::IpAddr;

use ipnet::IpNet;

use super::options::{LoadOptions, LoadReport, PeerChoice, ValueKind};
use super::routes::{RibReader, RibRoute};
use crate::LoadError;
use ipfib::Table;

/// The best path of a prefix so far.
struct Candidate {
    path_len: usize,
    peer_index: u16,
    value: Value,
}

/// A chosen path's value before next hops are numbered.
#[derive(Clone, Copy)]
enum Value {
    NextHop(IpAddr),
    Number(u32),
}

/// A prefix in order of first appearance.
struct Slot {
    prefix: IpNet,
    /// Whether the chosen peer had any path for it.
    from_peer: bool,
    best: Option<Candidate>,
}

/// Reads a whole RIB and builds the table `options` describe. Nothing is returned on error.
pub fn build_fib(
    mut reader: RibReader,
    options: &LoadOptions,
) -> Result<(Table, LoadReport), LoadError> {
    let mut index: HashMap<IpNet, usize> = HashMap::new();
    let mut slots: Vec<Slot> = Vec::new();
    let mut matched_paths = 0u64;
    for route in reader.by_ref() {
        let route = route?;
        let slot = *index.entry(route.prefix).or_insert_with(|| {
            slots.push(Slot {
                prefix: route.prefix,
                from_peer: false,
                best: None,
            });
            slots.len() - 1
        });
        let slot = &mut slots[slot];
        if !peer_matches(&options.peer, &route) {
            continue;
        }
        matched_paths += 1;
        slot.from_peer = true;
        let Some(value) = value_of(options.value, &route) else {
            continue;
        };
        let better = match &slot.best {
            None => true,
            Some(b) => (route.path_len(), route.peer_index) < (b.path_len, b.peer_index),
        };
        if better {
            slot.best = Some(Candidate {
                path_len: route.path_len(),
                peer_index: route.peer_index,
                value,
            });
        }
    }
    if options.peer != PeerChoice::Best && matched_paths == 0 {
        return Err(LoadError::Record {
            path: reader.path().to_path_buf(),
            offset: reader.offset(),
            reason: no_such_peer(&options.peer, &reader),
        });
    }

    let mut report = reader.report().clone();
    let mut fib = Table::new();
    let mut next_hop_ids: HashMap<IpAddr, u32> = HashMap::new();
    for slot in &slots {
        let Some(best) = &slot.best else {
            if slot.from_peer {
                report.prefixes_without_value += 1;
            } else {
                report.prefixes_not_from_peer += 1;
            }
            continue;
        };
        let value = match best.value {
            Value::Number(n) => n,
            Value::NextHop(ip) => {
                let next = next_hop_ids.len() as u32 + 1;
                *next_hop_ids.entry(ip).or_insert(next)
            }
        };
        // The reader only yields prefixes without host bits, so this cannot fail; the error
        // path still reports rather than panics.
        fib.insert(slot.prefix, value)
            .map_err(|e| LoadError::Record {
                path: reader.path().to_path_buf(),
                offset: 0,
                reason: e.to_string(),
            })?;
    }
    Ok((fib, report))
}

fn peer_matches(choice: &PeerChoice, route: &RibRoute) -> bool {
    match choice {
        PeerChoice::Best => true,
        PeerChoice::Index(i) => route.peer_index == *i,
        PeerChoice::Address(a) => route.peer_ip == *a,
    }
}

fn value_of(kind: ValueKind, route: &RibRoute) -> Option<Value> {
    match kind {
        ValueKind::NextHop => route.next_hop.map(Value::NextHop),
        ValueKind::OriginAs => Some(Value::Number(route.origin_as())),
        ValueKind::Peer => Some(Value::Number(u32::from(route.peer_index))),
    }
}

/// Why a chosen peer gave no path, with the peers there are so the user can pick one.
fn no_such_peer(choice: &PeerChoice, reader: &RibReader) -> String {
    let peers = reader.peers();
    let listed: Vec<String> = peers
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.map(|p| format!("{i}={} (AS{})", p.ip, p.asn)))
        .collect();
    let known = match choice {
        PeerChoice::Index(i) => peers.get(usize::from(*i)).copied().flatten().is_some(),
        PeerChoice::Address(a) => peers.iter().flatten().any(|p| p.ip == *a),
        PeerChoice::Best => true,
    };
    let what = if known {
        "is a peer of this dump but has no unicast paths in it"
    } else {
        "is not a peer of this dump"
    };
    let shown = listed
        .iter()
        .take(64)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    let more = if listed.len() > 64 { ", ..." } else { "" };
    format!("peer {choice} {what}; peers: {shown}{more}")
}
