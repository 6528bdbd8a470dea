//! Route table → DXR arrays: elementary intervals ([`crate::interval`]) cut at chunk
//! boundaries, each chunk resolved in the direct table or encoded as a range array.

use std::collections::HashMap;

use super::format::{encode_chunk, Entry, Form, DUMMY, MAX_FIELD, TAIL};
use crate::error::BuildError;
use crate::interval::Intervals;
use crate::route_table::{NextHop, RouteTable};

/// The encoding limits the builder enforces (the format's by default; tests lower them).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Distinct next hops at most.
    pub hops: usize,
    /// Range array size at most, in 4-byte units.
    pub units: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            hops: MAX_FIELD,
            units: MAX_FIELD,
        }
    }
}

/// How the chunks came out, for `describe`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub intervals: usize,
    pub resolved_chunks: usize,
    pub short_chunks: usize,
    pub long_chunks: usize,
    pub wide_chunks: usize,
    /// Chunks stored (identical range arrays are stored once).
    pub stored_chunks: usize,
    pub short_ranges: usize,
    pub long_ranges: usize,
    pub wide_ranges: usize,
    pub max_ranges: usize,
    /// The largest chunk's halvings from a fence block to a window.
    pub max_extra: u32,
}

/// The built arrays.
pub struct Parts {
    pub direct: Vec<u32>,
    pub ranges: Vec<u8>,
    pub hops: Vec<NextHop>,
    /// Indices need 32 bits: every chunk is [`Form::Wide`].
    pub wide: bool,
    pub stats: Stats,
}

/// Builds the arrays for `2^k` chunks.
pub fn build(
    table: &RouteTable<u32>,
    k: u32,
    engine: &'static str,
    limits: Limits,
) -> Result<Parts, BuildError> {
    let iv = Intervals::from_table(table);
    let (starts, values) = (iv.starts(), iv.values());
    let (hops, index) = hop_table(values);
    if hops.len() - 1 > limits.hops {
        return Err(BuildError::Unsupported {
            engine,
            reason: format!(
                "{} distinct next hops; a next-hop index holds {}",
                hops.len() - 1,
                limits.hops
            ),
        });
    }
    // Each interval's next-hop index, looked up once: a chunk reads it by position, not by a
    // hash of the next hop (2^k lookups for D20R otherwise).
    let hop_index: Vec<u32> = values
        .iter()
        .map(|v| v.map_or(0, |nh| index[&nh]))
        .collect();
    let chunk_bits = 32 - k;
    let shift = 24 - k;
    let mut stats = Stats {
        intervals: iv.len(),
        ..Stats::default()
    };
    let mut direct = Vec::with_capacity(1 << k);
    let wide = hops.len() > 1 << 16;
    let mut ranges: Vec<u8> = DUMMY.to_vec();
    let mut stored: HashMap<Vec<u8>, usize> = HashMap::new();
    let (mut offs, mut idxs) = (Vec::new(), Vec::new());
    // `i`: the interval containing the current chunk's first address.
    let mut i = 0;
    let chunks = 1u64 << k;
    let mut chunk = 0;
    while chunk < chunks {
        let first = chunk << chunk_bits;
        let end = first + (1 << chunk_bits);
        while i + 1 < starts.len() && u64::from(starts[i + 1]) <= first {
            i += 1;
        }
        // Every chunk that ends by the next interval's start resolves to interval `i`'s next
        // hop: the run is filled at once (most of D20R's 2^20 chunks on a real table).
        let next = starts.get(i + 1).map_or(1 << 32, |&s| u64::from(s));
        let whole = (next >> chunk_bits) - chunk;
        if whole > 0 {
            stats.resolved_chunks += whole as usize;
            direct.resize(
                direct.len() + whole as usize,
                Entry::resolved(hop_index[i]).0,
            );
            chunk += whole;
            continue;
        }
        // A boundary inside this chunk: its ranges.
        offs.clear();
        idxs.clear();
        offs.push(0);
        idxs.push(hop_index[i]);
        let mut j = i + 1;
        while j < starts.len() && u64::from(starts[j]) < end {
            offs.push((u64::from(starts[j]) - first) as u32);
            idxs.push(hop_index[j]);
            j += 1;
        }
        i = j - 1;
        chunk += 1;
        let n = offs.len();
        let form = if wide {
            stats.wide_chunks += 1;
            stats.wide_ranges += n;
            Form::Wide
        } else if offs.iter().all(|&o| o % (1 << shift) == 0) && idxs.iter().all(|&h| h < 256) {
            offs.iter_mut().for_each(|o| *o >>= shift);
            stats.short_chunks += 1;
            stats.short_ranges += n;
            Form::Short
        } else {
            stats.long_chunks += 1;
            stats.long_ranges += n;
            Form::Long
        };
        stats.max_ranges = stats.max_ranges.max(n);
        stats.max_extra = stats.max_extra.max(super::format::extra_for(n));
        let bytes = encode_chunk(&offs, &idxs, form, shift);
        let units = match stored.get(&bytes) {
            Some(&u) => u,
            None => {
                let u = ranges.len() / 4;
                ranges.extend_from_slice(&bytes);
                stored.insert(bytes, u);
                u
            }
        };
        if units > limits.units {
            return Err(BuildError::Unsupported {
                engine,
                reason: format!(
                    "range arrays over {} bytes (the direct table's offset field)",
                    limits.units * 4
                ),
            });
        }
        direct.push(Entry::chunk(units, form).0);
    }
    stats.stored_chunks = stored.len();
    ranges.extend([0; TAIL]);
    Ok(Parts {
        direct,
        ranges,
        hops,
        wide,
        stats,
    })
}

/// The next-hop table (index 0 = "no route", a placeholder that is never a route's value)
/// and each next hop's index, most used first so that short chunks (8-bit indices) apply to
/// as many chunks as possible.
fn hop_table(values: &[Option<NextHop>]) -> (Vec<NextHop>, HashMap<NextHop, u32>) {
    let mut uses: HashMap<NextHop, usize> = HashMap::new();
    for nh in values.iter().flatten() {
        *uses.entry(*nh).or_default() += 1;
    }
    let mut order: Vec<(NextHop, usize)> = uses.into_iter().collect();
    order.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let hops: Vec<NextHop> = std::iter::once(0)
        .chain(order.iter().map(|o| o.0))
        .collect();
    let index = order
        .iter()
        .enumerate()
        .map(|(i, o)| (o.0, i as u32 + 1))
        .collect();
    (hops, index)
}
