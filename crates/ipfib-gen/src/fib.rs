//! The table generator: grows a prefix forest shaped like a [`Profile`].
//!
//! Lengths are generated shortest first, so when a route of length `L` is placed every route it
//! could be nested in already exists and none it could cover does. Each length's quota (the
//! profile's count scaled to the requested size) is split the way the real table splits it:
//!
//! * **top-level** routes go into a block of the address space (a /12 for IPv6, e.g. an RIR's
//!   2a00::/12; a /8 for IPv4) drawn with the real table's weights, at a random aligned
//!   position that no existing route covers — or, at the measured rate, right after the
//!   previous top-level route of that length in the block, because real allocations are
//!   announced in runs;
//! * **nested** routes pick their immediate covering prefix's length from the real
//!   (child length, parent length) counts, then a parent of that length with probability
//!   proportional to a heavy-tailed "fertility" (a few allocations carry thousands of
//!   more-specifics, most carry none), then a free position inside it that no route of an
//!   intermediate length covers (so the chosen parent stays the immediate one) — adjacent to the
//!   parent's previous child of that length at the measured rate.
//!
//! This reproduces the length histogram exactly and the nesting structure (depths, children per
//! parent, runs of neighbours) approximately; `docs/generator-profile.md` compares the result
//! with the real tables. When random tries fail in a block or parent, it is scanned for a free
//! position (a bounded number of steps) and then remembered as full for the current length; a
//! nested route whose parents are all full becomes top-level, and a route that fits nowhere
//! structured goes to any free position of its length (the structure degrades, the count and
//! histogram do not). A length whose every prefix is taken passes its remaining quota to the
//! next longer length. So every request up to the number of prefixes the family has is met
//! exactly.

use super::fastset::{FastMap, FastSet};
use super::hops::HopDraw;
use super::profile::{Profile, Ratio};
use super::rng::{Rng, Stream};
use ipfib::Address;
use ipfib::Prefix;
use ipfib::{NextHop, RouteTable};

/// Random positions tried in a block or parent before scanning it for a free one.
const TRIES: u32 = 8;
/// Blocks or parents drawn for one route before it is placed elsewhere.
const REGION_TRIES: u32 = 8;
/// Parents drawn for one nested route (cheap when they are known to be full).
const PARENT_DRAWS: u32 = 64;
/// Routes or taken positions a scan for a free position steps over before giving up.
const SCAN_STEPS: u32 = 512;

/// The network mask of a left-aligned prefix of length `len` (`0..=128`).
#[inline]
fn mask(len: u8) -> u128 {
    if len == 0 {
        0
    } else {
        u128::MAX << (128 - u32::from(len.min(128)))
    }
}

/// The distance between neighbouring left-aligned prefixes of length `len >= 1`.
#[inline]
fn step(len: u8) -> u128 {
    1u128 << (128 - u32::from(len.clamp(1, 128)))
}

/// Splits `total` over `weights` in proportion, rounding by largest remainder (ties to the
/// earlier entry), so the parts add up to exactly `total`.
pub(crate) fn apportion(total: u64, weights: &[u64]) -> Vec<u64> {
    let sum: u128 = weights.iter().map(|&w| u128::from(w)).sum();
    if sum == 0 {
        let mut parts = vec![0; weights.len()];
        if let Some(first) = parts.first_mut() {
            *first = total;
        }
        return parts;
    }
    let mut parts = Vec::with_capacity(weights.len());
    let mut remainders = Vec::with_capacity(weights.len());
    let mut given = 0u64;
    for (i, &w) in weights.iter().enumerate() {
        let exact = u128::from(total) * u128::from(w);
        let part = (exact / sum) as u64;
        parts.push(part);
        remainders.push((exact % sum, i));
        given += part;
    }
    remainders.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for &(_, i) in remainders.iter().take((total - given) as usize) {
        parts[i] += 1;
    }
    parts
}

/// Routes of one length, in placement order, with what parent selection needs.
#[derive(Default)]
struct Level {
    /// Left-aligned addresses, for membership tests.
    taken: FastSet<u128>,
    /// `(address, next hop, fertility)` in placement order.
    routes: Vec<(u128, NextHop, u64)>,
    /// Cumulative fertility, built once the length is complete.
    cumulative: Vec<u64>,
}

/// The previous route placed in a block or under a parent: `(length, address, next hop)`.
type Last = (u8, u128, NextHop);

struct Generator<'p, A: Address> {
    profile: &'p Profile<A>,
    rng: Rng,
    hops: HopDraw,
    levels: Vec<Level>,
    /// Lengths that hold at least one route, ascending.
    present: Vec<u8>,
    /// Per length, the blocks holding top-level routes of that length with cumulative counts.
    blocks: Vec<Vec<(u32, u64)>>,
    /// Share of routes of each length that have children, indexed by length.
    fertile: Vec<Ratio>,
    last_top: FastMap<u32, Last>,
    last_child: FastMap<(u128, u8), Last>,
    /// Regions `(base, region length, shortest length checked)` known to have no free position
    /// at the current length, so a heavy parent or a block covered by a short route is not
    /// searched again. Cleared with each new length: a region full at /24 may have room at /25.
    exhausted: FastSet<(u128, u8, u8)>,
}

/// Generates exactly `prefixes` distinct routes; the caller has checked that the family has that
/// many prefixes.
pub(crate) fn generate<A: Address>(
    profile: &Profile<A>,
    prefixes: u64,
    seed: u64,
) -> RouteTable<A> {
    let nh = profile.next_hops;
    // Twice the measured distinct ids per route: see `hops` for why.
    let ranks = (2 * u128::from(prefixes) * u128::from(nh.distinct.0))
        .div_ceil(u128::from(nh.distinct.1.max(1)));
    let mut g = Generator {
        profile,
        rng: Rng::new(seed, Stream::Fib),
        hops: HopDraw::new(u64::try_from(ranks).unwrap_or(u64::MAX)),
        levels: (0..=A::BITS).map(|_| Level::default()).collect(),
        present: Vec::new(),
        blocks: (0..=A::BITS)
            .map(|len| {
                let mut total = 0u64;
                profile
                    .blocks
                    .iter()
                    .filter(|&&(_, l, _)| l == len)
                    .map(|&(block, _, n)| {
                        total += u64::from(n);
                        (block, total)
                    })
                    .collect()
            })
            .collect(),
        fertile: (0..=A::BITS)
            .map(|len| {
                profile
                    .lengths
                    .iter()
                    .find(|&&(l, _, _, _)| l == len)
                    .map_or((0, 0), |&(_, n, _, f)| (u64::from(f), u64::from(n)))
            })
            .collect(),
        last_top: FastMap::default(),
        last_child: FastMap::default(),
        exhausted: FastSet::default(),
    };

    let length_weights: Vec<u64> = profile
        .lengths
        .iter()
        .map(|&(_, n, _, _)| n.into())
        .collect();
    let quotas = apportion(prefixes, &length_weights);

    let mut carry = 0u64;
    for len in 0..=A::BITS {
        let mut top = carry;
        let mut nested: Vec<(u8, u64)> = Vec::new();
        if let Some(i) = profile.lengths.iter().position(|&(l, _, _, _)| l == len) {
            let (_, _, top_measured, _) = profile.lengths[i];
            let parents: Vec<(u8, u32)> = profile
                .parents
                .iter()
                .filter(|&&(c, _, _)| c == len)
                .map(|&(_, p, n)| (p, n))
                .collect();
            let mut weights = vec![u64::from(top_measured)];
            weights.extend(parents.iter().map(|&(_, n)| u64::from(n)));
            let parts = apportion(quotas[i], &weights);
            top += parts[0];
            nested = parents
                .iter()
                .map(|&(p, _)| p)
                .zip(parts[1..].iter().copied())
                .collect();
        }
        carry = 0;
        for _ in 0..top {
            if !g.place_top(len) {
                carry += 1;
            }
        }
        for &(parent_len, count) in &nested {
            for _ in 0..count {
                if !g.place_nested(len, parent_len) {
                    carry += 1;
                }
            }
        }
        g.finish_level(len);
    }
    // Only when every prefix from the profile's shortest length up is taken: fill the shorter
    // lengths, which the count check guarantees have room.
    for len in (0..=A::BITS).rev() {
        while carry > 0 && g.place_anywhere(len) {
            carry -= 1;
        }
    }

    g.levels
        .iter()
        .enumerate()
        .flat_map(|(len, level)| {
            level.routes.iter().map(move |&(addr, nh, _)| {
                (Prefix::covering(A::from_u128_left(addr), len as u8), nh)
            })
        })
        .collect()
}

impl<A: Address> Generator<'_, A> {
    /// True when every prefix of length `len` is taken.
    fn full(&self, len: u8) -> bool {
        let taken = self.levels[usize::from(len)].taken.len() as u128;
        len < 128 && taken >= 1u128 << len
    }

    fn record(&mut self, len: u8, addr: u128, nh: NextHop) {
        // Only the measured share of each length ever has children; those get a Pareto(1)
        // fertility, 2^32 / U with U uniform in 1..=2^32, so most weigh about 1 and a few
        // weigh thousands, like the children-per-parent counts of real tables.
        let fertility = if self.ratio(self.fertile[usize::from(len)]) {
            (1u64 << 32) / (self.rng.below(1 << 32) + 1)
        } else {
            0
        };
        let level = &mut self.levels[usize::from(len)];
        if level.routes.is_empty() {
            let at = self.present.partition_point(|&l| l < len);
            self.present.insert(at, len);
        }
        level.taken.insert(addr);
        level.routes.push((addr, nh, fertility));
    }

    fn finish_level(&mut self, len: u8) {
        self.exhausted.clear();
        let level = &mut self.levels[usize::from(len)];
        // A length with no fertile route that must still parent (tables smaller than the
        // profile's smallest counts) lets every route be a parent alike.
        let uniform = level.routes.iter().all(|&(_, _, f)| f == 0);
        let mut total = 0u64;
        level.cumulative = level
            .routes
            .iter()
            .map(|&(_, _, f)| {
                total = total.saturating_add(if uniform { 1 } else { f });
                total
            })
            .collect();
    }

    /// True when no route of a length in `above..len` covers `addr`, and `addr/len` is free.
    fn uncovered(&self, addr: u128, above: u8, len: u8) -> bool {
        if self.levels[usize::from(len)].taken.contains(&addr) {
            return false;
        }
        let from = self.present.partition_point(|&l| l < above);
        self.present[from..]
            .iter()
            .take_while(|&&l| l < len)
            .all(|&l| {
                !self.levels[usize::from(l)]
                    .taken
                    .contains(&(addr & mask(l)))
            })
    }

    fn ratio(&mut self, r: Ratio) -> bool {
        self.rng.chance(r.0, r.1)
    }

    /// Places one top-level route of length `len`; false when the length is full.
    fn place_top(&mut self, len: u8) -> bool {
        if self.full(len) {
            return false;
        }
        let bits = self.profile.block_bits;
        let total = self.blocks_for(len).last().map_or(0, |&(_, c)| c);
        if len < bits || total == 0 {
            return self.place_uncovered(len);
        }
        for _ in 0..REGION_TRIES {
            let r = self.rng.below(total);
            let blocks = self.blocks_for(len);
            let block = blocks[blocks.partition_point(|&(_, c)| c <= r)].0;
            let base = u128::from(block)
                .checked_shl(128 - u32::from(bits))
                .unwrap_or(0);
            if self.exhausted.contains(&(base, bits, 0)) {
                continue;
            }
            let previous = self.last_top.get(&block).copied();
            let Some((addr, neighbour_nh)) =
                self.find_in(base, bits, 0, len, previous, self.profile.top_adjacent)
            else {
                self.exhausted.insert((base, bits, 0));
                continue;
            };
            let nh = match neighbour_nh {
                Some(prev_nh) if self.ratio(self.profile.next_hops.top_adjacent_same) => prev_nh,
                _ => self.hops.draw(&mut self.rng),
            };
            self.record(len, addr, nh);
            self.last_top.insert(block, (len, addr, nh));
            return true;
        }
        self.place_uncovered(len)
    }

    /// The blocks top-level routes of length `len` are drawn from, with cumulative counts:
    /// the profile's for that length, or for a length with none (a spilled quota) those of the
    /// nearest shorter length that has some.
    fn blocks_for(&self, len: u8) -> &[(u32, u64)] {
        (0..=len)
            .rev()
            .map(|l| self.blocks[usize::from(l)].as_slice())
            .find(|b| !b.is_empty())
            .unwrap_or(&[])
    }

    /// Places a route of length `len` that no route covers anywhere in the family's space,
    /// falling back to any free position; false when the length is full.
    ///
    /// The space is searched block by block from a random one, skipping blocks already known
    /// to be full at this length, so a crowded region is walked through at most once per
    /// length rather than on every call.
    fn place_uncovered(&mut self, len: u8) -> bool {
        let bits = self.profile.block_bits.min(A::BITS);
        let found = if len < bits {
            self.scan_from_random(0, 0, 0, len)
        } else {
            let blocks = 1u64 << bits;
            let first = self.rng.below(blocks);
            let mut found = None;
            for i in 0..blocks {
                let block = u128::from((first + i) % blocks);
                let base = block.checked_shl(128 - u32::from(bits)).unwrap_or(0);
                if self.exhausted.contains(&(base, bits, 0)) {
                    continue;
                }
                found = self.scan_from_random(base, bits, 0, len);
                if found.is_some() {
                    break;
                }
                self.exhausted.insert((base, bits, 0));
            }
            found
        };
        match found {
            Some(addr) => {
                let nh = self.hops.draw(&mut self.rng);
                self.record(len, addr, nh);
                true
            }
            None => self.place_anywhere(len),
        }
    }

    /// Places one route of length `len` nested in a route of length `parent_len`; false when
    /// the length is full.
    fn place_nested(&mut self, len: u8, parent_len: u8) -> bool {
        if self.full(len) {
            return false;
        }
        let Some(parent_len) = self.nearest_parent_length(parent_len, len) else {
            return self.place_top(len);
        };
        for attempt in 0..PARENT_DRAWS {
            let level = &self.levels[usize::from(parent_len)];
            // Heavy parents fill up (a /47 holds two /48s); once the fertile ones drawn are
            // full, any route of the length may take the child.
            let index = if attempt < PARENT_DRAWS - REGION_TRIES {
                let total = level.cumulative.last().copied().unwrap_or(0);
                let r = self.rng.below(total);
                level.cumulative.partition_point(|&c| c <= r)
            } else {
                self.rng.below(level.routes.len() as u64) as usize
            };
            let (parent, parent_nh, _) = level.routes[index];
            let region = (parent, parent_len, parent_len + 1);
            if self.exhausted.contains(&region) {
                continue;
            }
            let key = (parent, parent_len);
            let previous = self.last_child.get(&key).copied();
            let adjacent_rate = self.profile.nested_adjacent;
            let Some((addr, sibling_nh)) = self.find_in(
                parent,
                parent_len,
                parent_len + 1,
                len,
                previous,
                adjacent_rate,
            ) else {
                self.exhausted.insert(region);
                continue;
            };
            let hops = self.profile.next_hops;
            let nh = match sibling_nh {
                Some(s) if self.ratio(hops.nested_adjacent_same) => s,
                _ if self.ratio(hops.inherit) => parent_nh,
                _ => self.hops.draw(&mut self.rng),
            };
            self.record(len, addr, nh);
            self.last_child.insert(key, (len, addr, nh));
            return true;
        }
        // The parents drawn are full: keep the route in the allocation structure as a
        // top-level one.
        self.place_top(len)
    }

    /// A free position of length `len` inside `base/region_len` that no route of a length in
    /// `above..len` covers: right after `previous` (the last route placed there) at rate
    /// `adjacent`, else at random, and after a few failures the first one after a random
    /// position. Returns the position and, when it continues a run, the previous route's next
    /// hop; `None` when the region has no such position.
    fn find_in(
        &mut self,
        base: u128,
        region_len: u8,
        above: u8,
        len: u8,
        previous: Option<Last>,
        adjacent: Ratio,
    ) -> Option<(u128, Option<NextHop>)> {
        let mut previous = previous.filter(|&(l, _, _)| l == len);
        for _ in 0..TRIES {
            let next = match previous {
                Some((_, prev, nh)) if self.ratio(adjacent) => prev
                    .checked_add(step(len))
                    .filter(|&a| a & mask(region_len) == base)
                    .map(|a| (a, nh)),
                _ => None,
            };
            let addr = match next {
                Some((a, _)) => a,
                None => base | (self.rng.next_u128() & mask(len) & !mask(region_len)),
            };
            if self.uncovered(addr, above, len) {
                return Some((addr, next.map(|(_, nh)| nh)));
            }
            // A run that cannot continue is not retried.
            if next.is_some() {
                previous = None;
            }
        }
        self.scan_from_random(base, region_len, above, len)
            .map(|a| (a, None))
    }

    /// [`Self::scan`] from a random position of the region.
    fn scan_from_random(&mut self, base: u128, region_len: u8, above: u8, len: u8) -> Option<u128> {
        let start = base | (self.rng.next_u128() & mask(len) & !mask(region_len) & mask(A::BITS));
        self.scan(base, region_len, start, above, len)
    }

    /// The first position of length `len` at or after `start` (wrapping inside the region
    /// `base/region_len`) that is free and that no route of a length in `above..len` covers.
    ///
    /// Each step jumps over a whole covering route or one taken position, so the cost is
    /// bounded by the routes inside the region, not its size; and by [`SCAN_STEPS`], after
    /// which the region counts as full (`None`) for this length. Without that bound, tables
    /// as dense as the real IPv4 one (most /8s 96–100 % announced) take minutes, walking
    /// tens of thousands of routes per placement.
    fn scan(&self, base: u128, region_len: u8, start: u128, above: u8, len: u8) -> Option<u128> {
        let mut budget = SCAN_STEPS;
        let inside = !mask(region_len);
        // `None` is 2^128: the region is the whole space.
        let size = 1u128.checked_shl(128 - u32::from(region_len));
        let from = self.present.partition_point(|&l| l < above);
        let mut at = start;
        let mut advanced = 0u128;
        loop {
            // The shortest route covering `at`, to jump past all of it at once.
            let cover = self.present[from..]
                .iter()
                .copied()
                .take_while(|&l| l < len)
                .find(|&l| self.levels[usize::from(l)].taken.contains(&(at & mask(l))));
            let jump = match cover {
                Some(l) => (at & mask(l)).wrapping_add(step(l)).wrapping_sub(at),
                None if self.levels[usize::from(len)].taken.contains(&at) => step(len),
                None => return Some(at),
            };
            budget = budget.checked_sub(1)?;
            // Overflow means all 2^128 addresses were passed.
            advanced = advanced.checked_add(jump)?;
            if size.is_some_and(|s| advanced >= s) {
                return None;
            }
            at = base | (at.wrapping_add(jump) & inside);
        }
    }

    /// The wanted parent length if it has routes, else the present length nearest to it below
    /// `len` (only for tables too small to hold every length the profile nests under).
    fn nearest_parent_length(&self, wanted: u8, len: u8) -> Option<u8> {
        if wanted < len && !self.levels[usize::from(wanted)].routes.is_empty() {
            return Some(wanted);
        }
        self.present
            .iter()
            .copied()
            .filter(|&l| l < len)
            .min_by_key(|&l| (l.abs_diff(wanted), l))
    }

    /// Places a route of length `len` at the first free position at or after a random one,
    /// ignoring structure; false when the length is full.
    fn place_anywhere(&mut self, len: u8) -> bool {
        if self.full(len) {
            return false;
        }
        let family = mask(A::BITS);
        let mut addr = self.rng.next_u128() & mask(len) & family;
        // Terminates: fewer than 2^len positions are taken, and stepping by one position
        // modulo the family's space visits all of them.
        while self.levels[usize::from(len)].taken.contains(&addr) {
            addr = addr.wrapping_add(step(len)) & family;
        }
        let nh = self.hops.draw(&mut self.rng);
        self.record(len, addr, nh);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apportion_adds_up_and_follows_weights() {
        assert_eq!(apportion(10, &[1, 1, 1]), [4, 3, 3]);
        assert_eq!(apportion(7, &[0, 5, 0]), [0, 7, 0]);
        assert_eq!(apportion(3, &[0, 0]), [3, 0]);
        assert_eq!(apportion(0, &[2, 3]), [0, 0]);
        assert_eq!(apportion(5, &[]), Vec::<u64>::new());
        let parts = apportion(1_000_003, &[446, 110, 101, 97, 39, 207]);
        assert_eq!(parts.iter().sum::<u64>(), 1_000_003);
        // Floors give 1,000,001; the two largest remainders (.621 of /207, .338 of /446) get one each.
        assert_eq!(parts[0], 446_002);
        assert_eq!(parts[5], 207_001);
    }

    #[test]
    fn masks_and_steps() {
        assert_eq!(mask(0), 0);
        assert_eq!(mask(128), u128::MAX);
        assert_eq!(mask(1), 1 << 127);
        assert_eq!(step(128), 1);
        assert_eq!(step(32), 1 << 96);
    }
}
