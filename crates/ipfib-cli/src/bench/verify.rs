//! The cross-engine agreement check and the result checksum.
//!
//! A benchmark of a wrong engine is worthless, so before anything is timed every contender
//! answers the whole trace on every path, and each answer is compared with the baseline (the
//! reference engine when it takes part). The batch path is checked through exactly the call
//! that is timed: ours `lookup_batch_raw` (its miss value decoded), a native comparator's
//! own bulk lookup on the sequence in its layout (its answers decoded), other comparators
//! `lookup_batch`. The first difference is reported with the engines,
//! the address and both answers, and the bench fails. The checksum summarises an engine's
//! answers in one number for the report and the JSON, so runs on other machines or tools fed the
//! same trace file can be compared too.

use std::fmt;

use ipfib::{Address, LookupError, NextHop};

use crate::bench::contenders::Engine;
use crate::bench::modes::{chain_next, FlipLow};

/// The code a miss contributes to the checksum: outside the `u32` range of next hops, so a
/// miss never hashes like any next hop.
const MISS: u64 = 1 << 32;

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a over `(index, answer)` pairs as little-endian `u64`s, a miss coded as `2^32`.
/// Position-sensitive, so two engines that swap two answers do not collide.
pub fn checksum(answers: &[Option<NextHop>]) -> u64 {
    let mut h = FNV_OFFSET;
    for (i, a) in answers.iter().enumerate() {
        let code = a.map_or(MISS, u64::from);
        for word in [i as u64, code] {
            for byte in word.to_le_bytes() {
                h ^= u64::from(byte);
                h = h.wrapping_mul(FNV_PRIME);
            }
        }
    }
    h
}

/// How a trace is fed to an engine when its answers are collected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feed {
    /// `lookup` per address.
    Single,
    /// The engine's batch path (see [`Engine`]) over chunks of this many addresses.
    Batch(usize),
    /// `lookup` per address, each address perturbed by the previous answer (latency mode).
    Chain,
}

impl fmt::Display for Feed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Feed::Single => f.write_str("single"),
            Feed::Batch(n) => write!(f, "batch of {n}"),
            Feed::Chain => f.write_str("latency chain"),
        }
    }
}

/// Two engines answered one address differently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disagreement<A: Address> {
    /// The engine everything is compared with.
    pub baseline: String,
    /// The engine that differs.
    pub other: String,
    /// How the other engine was fed.
    pub feed: Feed,
    /// Position in the trace.
    pub index: usize,
    /// The address looked up.
    pub addr: A,
    /// The baseline's answer.
    pub expected: Option<NextHop>,
    /// The other engine's answer.
    pub got: Option<NextHop>,
}

fn show(a: Option<NextHop>) -> String {
    a.map_or_else(|| "no route".to_string(), |nh| nh.to_string())
}

impl<A: Address> fmt::Display for Disagreement<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ENGINES DISAGREE: {} ({}) answers {} for {} (trace index {}), but {} answers {}",
            self.other,
            self.feed,
            show(self.got),
            self.addr.to_ip(),
            self.index,
            self.baseline,
            show(self.expected)
        )
    }
}

/// Why the agreement check failed.
#[derive(Debug, thiserror::Error)]
pub enum AgreementError<A: Address> {
    /// Two engines gave different answers.
    #[error("{0}")]
    Disagree(Box<Disagreement<A>>),
    /// An engine's batch lookup refused its input.
    #[error("engine {engine}: {source}")]
    Batch {
        /// The engine.
        engine: String,
        /// Its error.
        source: LookupError,
    },
}

/// Per-engine checksums of the answers on each feed, in the order the engines were given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checksums {
    /// Engine name.
    pub name: String,
    /// Checksum of the answers on each feed, in the order the feeds were given.
    pub sums: Vec<u64>,
}

/// Collects an engine's answers over a trace.
pub fn answers<A: FlipLow>(
    engine: &Engine<A>,
    trace: &[A],
    feed: Feed,
) -> Result<Vec<Option<NextHop>>, LookupError> {
    let lookup = engine.lookup();
    let mut out = vec![None; trace.len()];
    match (feed, engine) {
        (Feed::Single, _) => {
            for (o, &a) in out.iter_mut().zip(trace) {
                *o = lookup.lookup(a);
            }
        }
        (Feed::Batch(chunk), Engine::Ours { engine, miss }) => {
            let chunk = chunk.max(1);
            let mut raw = vec![0; chunk];
            for (addrs, o) in trace.chunks(chunk).zip(out.chunks_mut(chunk)) {
                let raw = &mut raw[..addrs.len()];
                engine.lookup_batch_raw(addrs, raw, *miss)?;
                for (o, &nh) in o.iter_mut().zip(raw.iter()) {
                    *o = (nh != *miss).then_some(nh);
                }
            }
        }
        (Feed::Batch(chunk), Engine::Native(native)) => {
            native
                .prepare(trace)
                .runner(chunk.max(1))
                .answers(0..trace.len(), &mut out)?;
        }
        (Feed::Batch(chunk), Engine::Generic(engine)) => {
            for (addrs, o) in trace.chunks(chunk.max(1)).zip(out.chunks_mut(chunk.max(1))) {
                engine.lookup_batch(addrs, o)?;
            }
        }
        (Feed::Chain, _) => {
            let mut prev = None;
            for (o, &a) in out.iter_mut().zip(trace) {
                prev = lookup.lookup(chain_next(a, prev));
                *o = prev;
            }
        }
    }
    Ok(out)
}

/// The address actually looked up at `index` for a feed, given the baseline's answers (which
/// the other engine shared up to `index`, being the first difference).
fn looked_up<A: FlipLow>(trace: &[A], feed: Feed, base: &[Option<NextHop>], index: usize) -> A {
    match feed {
        Feed::Single | Feed::Batch(_) => trace[index],
        Feed::Chain => {
            let prev = index.checked_sub(1).and_then(|i| base[i]);
            chain_next(trace[index], prev)
        }
    }
}

/// Checks that every engine answers every address of `trace` alike on every feed.
///
/// The baseline is the engine named `reference` when present, else the first; it is compared
/// with itself on the other feeds too (its batch path is code like any other). `feeds` of
/// [`Feed::Chain`] compare the chains, which stay equal as long as the answers do. Returns the
/// checksums per engine and feed, or the first disagreement found.
pub fn check_agreement<A: FlipLow>(
    engines: &[Engine<A>],
    trace: &[A],
    feeds: &[Feed],
) -> Result<Vec<Checksums>, AgreementError<A>> {
    let base_at = engines
        .iter()
        .position(|e| e.lookup().name() == "reference")
        .unwrap_or(0);
    let mut sums: Vec<Checksums> = engines
        .iter()
        .map(|e| Checksums {
            name: e.lookup().name().to_string(),
            sums: Vec::with_capacity(feeds.len()),
        })
        .collect();
    let Some(base) = engines.get(base_at) else {
        return Ok(sums);
    };
    let batch_err = |e: &Engine<A>, source| AgreementError::Batch {
        engine: e.lookup().name().to_string(),
        source,
    };
    for &feed in feeds {
        // A chain is compared against the baseline's own chain; the other feeds against its
        // plain `lookup`, the definition of a right answer.
        let base_feed = if feed == Feed::Chain {
            Feed::Chain
        } else {
            Feed::Single
        };
        let expected = answers(base, trace, base_feed).map_err(|e| batch_err(base, e))?;
        for (engine, sum) in engines.iter().zip(sums.iter_mut()) {
            let got = answers(engine, trace, feed).map_err(|e| batch_err(engine, e))?;
            if let Some(index) = expected.iter().zip(&got).position(|(x, y)| x != y) {
                return Err(AgreementError::Disagree(Box::new(Disagreement {
                    baseline: base.lookup().name().to_string(),
                    other: engine.lookup().name().to_string(),
                    feed,
                    index,
                    addr: looked_up(trace, feed, &expected, index),
                    expected: expected[index],
                    got: got[index],
                })));
            }
            sum.sums.push(checksum(&got));
        }
    }
    Ok(sums)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::native::{NativeBatch, NativeInfo, Prepared, Runner};
    use ipfib::engine::reference::Reference;
    use ipfib::{engine, BuildOptions, Lookup, RouteTable};

    /// An engine that is right except at one address: the deliberately wrong engine the check
    /// must catch.
    struct OffByOne<A: Address> {
        inner: Box<dyn Lookup<A>>,
        wrong_at: A,
        batch_only: bool,
    }

    impl<A: Address> Lookup<A> for OffByOne<A> {
        fn name(&self) -> &'static str {
            "off-by-one"
        }
        fn lookup(&self, addr: A) -> Option<NextHop> {
            let right = self.inner.lookup(addr);
            if addr == self.wrong_at && !self.batch_only {
                right.map_or(Some(0), |nh| nh.checked_add(1))
            } else {
                right
            }
        }
        fn lookup_batch(
            &self,
            addrs: &[A],
            out: &mut [Option<NextHop>],
        ) -> Result<(), LookupError> {
            self.inner.lookup_batch(addrs, out)?;
            for (a, o) in addrs.iter().zip(out.iter_mut()) {
                if *a == self.wrong_at {
                    *o = Some(o.map_or(7, |nh| nh ^ 1));
                }
            }
            Ok(())
        }
        fn lookup_batch_raw(
            &self,
            addrs: &[A],
            out: &mut [NextHop],
            miss: NextHop,
        ) -> Result<(), LookupError> {
            let mut answers = vec![None; addrs.len()];
            self.lookup_batch(addrs, &mut answers)?;
            for (o, a) in out.iter_mut().zip(answers) {
                *o = a.unwrap_or(miss);
            }
            Ok(())
        }
        fn memory_bytes(&self) -> usize {
            0
        }
    }

    /// A native batch over the reference engine: keys are the addresses, answers `next hop +
    /// 1` as `u64`s (0 for no route), except at `wrong_at`, answered 0.
    struct NativeOffByOne {
        inner: Reference<u32>,
        wrong_at: u32,
    }

    impl NativeBatch<u32> for NativeOffByOne {
        fn lookup(&self) -> &dyn Lookup<u32> {
            &self.inner
        }
        fn info(&self) -> NativeInfo {
            NativeInfo {
                call: "test_bulk",
                requested: None,
                selected: "scalar",
                next_hop_bytes: 8,
                answer_bytes: 8,
                burst: None,
                pages: None,
                small_pages: false,
            }
        }
        fn prepare(&self, addrs: &[u32]) -> Box<dyn Prepared + '_> {
            Box::new(NativeKeys(self, addrs.to_vec()))
        }
    }

    struct NativeKeys<'a>(&'a NativeOffByOne, Vec<u32>);

    impl Prepared for NativeKeys<'_> {
        fn runner(&self, _chunk: usize) -> Box<dyn Runner + '_> {
            Box::new(NativeRun(self))
        }
    }

    struct NativeRun<'a>(&'a NativeKeys<'a>);

    impl Runner for NativeRun<'_> {
        fn run(&mut self, _range: std::ops::Range<usize>) -> Result<(), LookupError> {
            Ok(())
        }
        fn answers(
            &mut self,
            range: std::ops::Range<usize>,
            out: &mut [Option<NextHop>],
        ) -> Result<(), LookupError> {
            let NativeKeys(native, keys) = self.0;
            for (o, &a) in out.iter_mut().zip(&keys[range]) {
                let hop: u64 = if a == native.wrong_at {
                    0
                } else {
                    native.inner.lookup(a).map_or(0, |nh| u64::from(nh) + 1)
                };
                *o = hop.checked_sub(1).map(|nh| nh as NextHop);
            }
            Ok(())
        }
    }

    fn table() -> RouteTable<u32> {
        let mut t = RouteTable::new();
        for (net, nh) in [("10.0.0.0/8", 1), ("10.1.0.0/16", 2), ("192.168.0.0/24", 3)] {
            t.insert_net(net.parse().unwrap(), nh).unwrap();
        }
        t
    }

    fn trace() -> Vec<u32> {
        vec![
            0x0a00_0001,
            0x0a01_0001,
            0xc0a8_0005,
            0x0b00_0000,
            0x0a01_ffff,
            0xc0a8_0100,
        ]
    }

    fn ours(t: &RouteTable<u32>) -> Vec<Engine<u32>> {
        engine::engines()
            .iter()
            .map(|e| Engine::Ours {
                engine: e.build(t, &BuildOptions::default()).unwrap(),
                miss: u32::MAX,
            })
            .collect()
    }

    const ALL_FEEDS: [Feed; 3] = [Feed::Single, Feed::Batch(4), Feed::Chain];

    #[test]
    fn right_engines_agree_and_share_checksums() {
        let t = table();
        let sums = check_agreement(&ours(&t), &trace(), &ALL_FEEDS).unwrap();
        assert_eq!(sums.len(), engine::engines().len());
        for s in &sums {
            assert_eq!(s.sums.len(), 3);
            assert_eq!(s.sums, sums[0].sums, "{} differs", s.name);
        }
    }

    #[test]
    fn a_wrong_answer_is_caught_with_engines_address_and_answers() {
        let t = table();
        let mut engines = ours(&t);
        engines.push(Engine::Generic(Box::new(OffByOne {
            inner: Box::new(Reference::new(&t)),
            wrong_at: 0xc0a8_0005,
            batch_only: false,
        })));
        let err = check_agreement(&engines, &trace(), &[Feed::Single]).unwrap_err();
        let AgreementError::Disagree(d) = err else {
            panic!("expected a disagreement, got {err}")
        };
        assert_eq!(d.baseline, "reference");
        assert_eq!(d.other, "off-by-one");
        assert_eq!(d.index, 2);
        assert_eq!(d.addr, 0xc0a8_0005);
        assert_eq!((d.expected, d.got), (Some(3), Some(4)));
        let msg = d.to_string();
        assert!(
            msg.contains("192.168.0.5") && msg.contains("off-by-one"),
            "{msg}"
        );
    }

    #[test]
    fn a_wrong_batch_path_is_caught_even_when_single_is_right() {
        let t = table();
        let wrong = || {
            Box::new(OffByOne {
                inner: Box::new(Reference::new(&t)),
                wrong_at: 0x0b00_0000,
                batch_only: true,
            })
        };
        // Through `lookup_batch` (a comparator) and `lookup_batch_raw` (one of ours).
        for wrong in [
            Engine::Generic(wrong()),
            Engine::Ours {
                engine: wrong(),
                miss: u32::MAX,
            },
        ] {
            let mut engines = ours(&t);
            engines.push(wrong);
            assert!(check_agreement(&engines, &trace(), &[Feed::Single]).is_ok());
            let err =
                check_agreement(&engines, &trace(), &[Feed::Single, Feed::Batch(2)]).unwrap_err();
            let AgreementError::Disagree(d) = err else {
                panic!("expected a disagreement, got {err}")
            };
            assert_eq!(d.feed, Feed::Batch(2));
            assert_eq!((d.index, d.expected, d.got), (3, None, Some(7)));
        }
    }

    #[test]
    fn a_wrong_native_batch_is_caught_and_a_right_one_agrees() {
        let t = table();
        let mut engines = ours(&t);
        engines.push(Engine::Native(Box::new(NativeOffByOne {
            inner: Reference::new(&t),
            wrong_at: 0x0a01_ffff,
        })));
        assert!(check_agreement(&engines, &trace(), &[Feed::Single]).is_ok());
        let err = check_agreement(&engines, &trace(), &[Feed::Batch(4)]).unwrap_err();
        let AgreementError::Disagree(d) = err else {
            panic!("expected a disagreement, got {err}")
        };
        assert_eq!((d.other.as_str(), d.index), ("reference", 4));
        assert_eq!((d.expected, d.got), (Some(2), None));
        engines.pop();
        engines.push(Engine::Native(Box::new(NativeOffByOne {
            inner: Reference::new(&t),
            wrong_at: 1,
        })));
        let sums = check_agreement(&engines, &trace(), &ALL_FEEDS).unwrap();
        assert!(sums.iter().all(|s| s.sums == sums[0].sums));
    }

    #[test]
    fn a_wrong_answer_is_caught_in_the_latency_chain_at_the_perturbed_address() {
        let t = table();
        // 10.1.0.1 follows an answer of 1 (odd), so the chain looks up 10.1.0.0 instead.
        let mut engines = ours(&t);
        engines.push(Engine::Generic(Box::new(OffByOne {
            inner: Box::new(Reference::new(&t)),
            wrong_at: 0x0a01_0000,
            batch_only: false,
        })));
        let err = check_agreement(&engines, &trace(), &[Feed::Chain]).unwrap_err();
        let AgreementError::Disagree(d) = err else {
            panic!("expected a disagreement, got {err}")
        };
        assert_eq!((d.index, d.addr), (1, 0x0a01_0000));
        assert_eq!((d.expected, d.got), (Some(2), Some(3)));
    }

    #[test]
    fn checksum_separates_miss_order_and_values() {
        let a = checksum(&[Some(1), None]);
        assert_ne!(a, checksum(&[None, Some(1)]));
        assert_ne!(a, checksum(&[Some(1), Some(0)]));
        assert_ne!(checksum(&[None]), checksum(&[Some(u32::MAX)]));
        assert_ne!(checksum(&[]), checksum(&[None]));
        assert_eq!(a, checksum(&[Some(1), None]));
    }

    #[test]
    fn no_engines_is_no_disagreement() {
        let sums = check_agreement::<u32>(&[], &trace(), &ALL_FEEDS).unwrap();
        assert!(sums.is_empty());
    }
}
