//! Every engine, with every SIMD backend this CPU runs, against the reference model, on a
//! table and addresses decoded from the input: single lookups, `lookup_batch` and
//! `lookup_batch_raw` (in batch sizes that hit every interleaving remainder) must all agree
//! with `Reference`, and `validate()` must pass.
//!
//! Each input checks one engine on one backend, both picked by a hash of the input, so that
//! an input costs one build, not one per engine: every engine in one run made an input take
//! about a second under the sanitizer (DXR-D20R's 2^20-chunk build alone half of it), which
//! left libFuzzer 29 inputs in 20 s.

#![no_main]

use std::sync::OnceLock;

use ipfib::engine::reference::Reference;
use ipfib::engine::{engines, Lookup};
use ipfib::{Address, Backend, BuildOptions, NextHop, Prefix, RouteTable};
use libfuzzer_sys::fuzz_target;

/// Reads the input front to back; past the end everything is 0. While `rng` is set, bytes
/// come from that generator instead (for big tables from a short input).
struct Input<'a> {
    data: &'a [u8],
    pos: usize,
    rng: Option<u64>,
}

impl Input<'_> {
    fn done(&self) -> bool {
        self.rng.is_none() && self.pos >= self.data.len()
    }
    fn u8(&mut self) -> u8 {
        if let Some(s) = self.rng.as_mut() {
            // xorshift64
            *s ^= *s << 13;
            *s ^= *s >> 7;
            *s ^= *s << 17;
            return (*s >> 24) as u8;
        }
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }
    /// `n` bytes as the top bytes of a u128 (the rest 0).
    fn left(&mut self, n: usize) -> u128 {
        let mut v = 0u128;
        for i in 0..n.min(16) {
            v |= u128::from(self.u8()) << (120 - 8 * i);
        }
        v
    }
    fn u32(&mut self) -> u32 {
        u32::from_be_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }
}

/// A table of one family: fresh prefixes and ones nested in, or next to, the previous one.
/// Up to 239 routes read from the input; when the size byte is 240 or more, up to 4,800 routes
/// from a generator seeded by the input, so that deep trees (several levels of B+-tree nodes)
/// are built too. (A PlanB build has a fixed cost, its 65,536-entry direct table, which under
/// the sanitizers dominates: a bigger table costs little more.)
fn table<A: Address>(input: &mut Input) -> RouteTable<A> {
    let mut routes = RouteTable::<A>::new();
    let size = input.u8();
    let count = if size >= 240 {
        input.rng = Some((u64::from(input.u32()) << 32 | u64::from(input.u32())) | 1);
        usize::from(size - 239) * 300
    } else {
        usize::from(size)
    };
    let mut prev = Prefix::<A>::covering(A::ZERO, 0);
    let wide = if A::BITS == 32 { 4 } else { 8 };
    for _ in 0..count {
        if input.done() {
            break;
        }
        let tag = input.u8();
        let len = input.u8() % (A::BITS + 1);
        let addr = match tag % 4 {
            0 => A::from_u128_left(input.left(wide)),
            1 => prev
                .addr()
                .or(A::from_u128_left(input.left(16)).and(A::mask(prev.len()).not())),
            2 => prev.addr().or(A::from_u128_left(
                1u128 << (127 - u32::from(len.max(1) - 1) % 128),
            )),
            _ => A::from_u128_left(input.left(16)),
        };
        let prefix = Prefix::covering(addr, len);
        let next_hop = match (tag >> 2) % 4 {
            0 | 1 => u32::from(tag >> 4),
            2 => input.u32(),
            _ => u32::MAX - u32::from(tag >> 4),
        };
        routes.insert(prefix, next_hop);
        prev = prefix;
    }
    input.rng = None;
    routes
}

/// Addresses to look up: both ends of every route and their neighbours, the ends of the
/// address space, then addresses from the rest of the input.
fn queries<A: Address>(routes: &RouteTable<A>, input: &mut Input) -> Vec<A> {
    let mut out = vec![A::ZERO, A::MAX];
    // Every route's ends for small tables; for big ones every 7th route's.
    let step = if routes.len() > 500 { 7 } else { 1 };
    for (p, _) in routes.iter().step_by(step) {
        out.push(p.first());
        out.push(p.last());
        out.extend(p.first().checked_pred());
        out.extend(p.last().checked_succ());
    }
    let width = usize::from(A::BITS / 8);
    for _ in 0..64 {
        if input.done() {
            break;
        }
        out.push(A::from_u128_left(input.left(width)));
    }
    out
}

/// A next hop no route uses, for `lookup_batch_raw`.
fn unused_next_hop<A: Address>(routes: &RouteTable<A>) -> NextHop {
    let used: std::collections::HashSet<NextHop> = routes.iter().map(|(_, nh)| nh).collect();
    (0..=u32::MAX).rev().find(|v| !used.contains(v)).unwrap()
}

/// Whether each registered engine holds IPv4 and IPv6 routes (found once: it builds engines).
fn holds() -> &'static [[bool; 2]] {
    static HOLDS: OnceLock<Vec<[bool; 2]>> = OnceLock::new();
    HOLDS.get_or_init(|| {
        let options = BuildOptions::default();
        engines()
            .iter()
            .map(|e| {
                [
                    e.supports::<u32>(&options).unwrap_or(true),
                    e.supports::<u128>(&options).unwrap_or(true),
                ]
            })
            .collect()
    })
}

/// Checks `engine` (the index of a registered engine), if it holds family `A`, on `backend`.
fn check<A: Address>(routes: &RouteTable<A>, addrs: &[A], engine: usize, backend: Backend) {
    let (engine, holds) = (&engines()[engine], holds()[engine]);
    // A single-family engine (DXR: IPv4) refuses the other family, by design.
    if !holds[usize::from(A::BITS == 128)] {
        return;
    }
    let reference = Reference::new(routes);
    let want: Vec<Option<NextHop>> = addrs.iter().map(|&a| reference.lookup(a)).collect();
    // The reference itself against the route table's own longest match.
    for (a, w) in addrs.iter().zip(&want) {
        assert_eq!(
            routes.longest_match(*a).map(|(_, nh)| nh),
            *w,
            "reference at {a:?}"
        );
    }
    let miss = unused_next_hop(routes);
    let want_raw: Vec<NextHop> = want.iter().map(|w| w.unwrap_or(miss)).collect();
    let options = BuildOptions::with_backend(backend);
    let fib: Box<dyn Lookup<A>> = match engine.build::<A>(routes, &options) {
        Ok(fib) => fib,
        Err(e) => panic!(
            "{} ({backend}) refused a {} table: {e}",
            engine.name(),
            A::FAMILY
        ),
    };
    let what = format!("{} {} {backend}", engine.name(), A::FAMILY);
    fib.validate().unwrap_or_else(|e| panic!("{what}: {e}"));
    for (a, w) in addrs.iter().zip(&want) {
        assert_eq!(fib.lookup(*a), *w, "{what}: lookup {a:?}");
    }
    // Batches in sizes around the interleaving widths (4, 8, 16) and their remainders, one
    // after another through the addresses (each size over every address made the lookups
    // nine times the checks above), then all of them in one batch.
    let sizes = [1usize, 3, 5, 8, 9, 16, 17, 33].into_iter().cycle();
    let mut start = 0;
    for size in sizes {
        if start >= addrs.len() {
            break;
        }
        let end = (start + size).min(addrs.len());
        check_batch(
            fib.as_ref(),
            &addrs[start..end],
            &want[start..end],
            &want_raw[start..end],
            miss,
            &what,
        );
        start = end;
    }
    check_batch(fib.as_ref(), addrs, &want, &want_raw, miss, &what);
    // Mismatched lengths are an error that writes nothing.
    let mut short = vec![Some(7); addrs.len().saturating_sub(1)];
    assert!(fib.lookup_batch(addrs, &mut short).is_err());
    assert!(short.iter().all(|o| *o == Some(7)));
    let mut raw_long = vec![7; addrs.len() + 1];
    assert!(fib.lookup_batch_raw(addrs, &mut raw_long, miss).is_err());
    assert!(raw_long.iter().all(|o| *o == 7));
}

/// `lookup_batch` and `lookup_batch_raw` of `addrs` in one batch each.
fn check_batch<A: Address>(
    fib: &dyn Lookup<A>,
    addrs: &[A],
    want: &[Option<NextHop>],
    want_raw: &[NextHop],
    miss: NextHop,
    what: &str,
) {
    let mut out = vec![Some(0xdead); addrs.len()];
    fib.lookup_batch(addrs, &mut out).unwrap();
    assert_eq!(out, want, "{what}: lookup_batch of {}", addrs.len());
    let mut raw = vec![0xdead; addrs.len()];
    fib.lookup_batch_raw(addrs, &mut raw, miss).unwrap();
    assert_eq!(raw, want_raw, "{what}: lookup_batch_raw of {}", addrs.len());
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input {
        data,
        pos: 0,
        rng: None,
    };
    let v4 = table::<u32>(&mut input);
    let v6 = table::<u128>(&mut input);
    let q4 = queries(&v4, &mut input);
    let q6 = queries(&v6, &mut input);
    let backends = Backend::available();
    let pick = data
        .iter()
        .fold(data.len(), |h, &b| h.wrapping_mul(31) ^ usize::from(b));
    let engine = pick % engines().len();
    let backend = backends[pick / engines().len() % backends.len()];
    check(&v4, &q4, engine, backend);
    check(&v6, &q6, engine, backend);
});
