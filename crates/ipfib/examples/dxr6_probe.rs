//! Would DXR pay for IPv6? A measurement, not an engine: the DXR layout carried over to IPv6
//! as directly as it goes, timed against PlanB on the same table and trace.
//!
//! DXR (see `engine::dxr`) resolves the top `K` bits in a direct table and searches the sorted
//! range starts of the chunk for the rest. For IPv6 the bits real tables vary in run from /16
//! to /48, so the probe uses the same 2^16 direct table as PlanB (DXR's D16), then, per chunk,
//! the sorted 32-bit starts of the ranges below /48 (bits 16..48; a chunk no route splits is
//! resolved in the direct entry, as in DXR) and a branch-free binary search, batched: `LANES`
//! lookups step through their searches together so their misses overlap (the batch walk DXR
//! and PlanB use). Boundaries finer than /48 are cut to /48 here (PlanB resolves them in its
//! fallback stage): the probe counts the addresses where that changes the answer and leaves
//! times every address anyway: the cut makes its searches, if anything, shorter than DXR's
//! would be.
//!
//! `cargo run --release -p ipfib --example dxr6_probe -- FILE [TRACE_LEN] [ROUNDS]`
//! (an IPv6 table; prints M lookups/s of both, matched and uniform traces, and the probes a
//! search makes).

use std::hint::black_box;
use std::time::Instant;

use ipfib::{Fib, Intervals, NextHop};

/// Lookups whose searches run interleaved.
const LANES: usize = 16;
const MISS: NextHop = NextHop::MAX;

/// The DXR-style IPv6 structure: a direct table on the top 16 bits, each entry either a
/// resolved answer or a chunk of sorted 32-bit range starts with their answers.
struct Dxr6 {
    /// Per chunk: `(first range, ranges)`; one range = resolved (its answer is `answers[first]`).
    direct: Vec<(u32, u32)>,
    starts: Vec<u32>,
    answers: Vec<NextHop>,
}

impl Dxr6 {
    fn build(intervals: &Intervals<u128>) -> Dxr6 {
        let mut chunks: Vec<Vec<(u32, NextHop)>> = vec![Vec::new(); 1 << 16];
        for (&start, &value) in intervals.starts().iter().zip(intervals.values()) {
            let coarse = (start >> 80) as u64;
            let chunk = (coarse >> 32) as usize;
            let key = coarse as u32;
            let answer = value.unwrap_or(MISS);
            let ranges = &mut chunks[chunk];
            match ranges.last_mut() {
                // A boundary finer than /48 shares its /48's start: the later answer wins.
                Some(last) if last.0 == key => last.1 = answer,
                _ => ranges.push((key, answer)),
            }
        }
        // Every chunk starts with the range in effect at its first address.
        let mut in_effect = MISS;
        let (mut direct, mut starts, mut answers) = (Vec::new(), Vec::new(), Vec::new());
        for ranges in &mut chunks {
            if ranges.first().is_none_or(|&(k, _)| k != 0) {
                ranges.insert(0, (0, in_effect));
            }
            in_effect = ranges.last().expect("one range at least").1;
            direct.push((starts.len() as u32, ranges.len() as u32));
            for &(k, a) in ranges.iter() {
                starts.push(k);
                answers.push(a);
            }
        }
        Dxr6 {
            direct,
            starts,
            answers,
        }
    }

    /// The answer for `addr`: the last range start `<=` its bits 16..48, by binary search.
    fn lookup(&self, addr: u128) -> NextHop {
        let coarse = (addr >> 80) as u64;
        let (first, n) = self.direct[(coarse >> 32) as usize];
        let x = coarse as u32;
        let (mut lo, mut len) = (first as usize, n as usize);
        while len > 1 {
            let half = len / 2;
            lo += half * usize::from(self.starts[lo + half] <= x);
            len -= half;
        }
        self.answers[lo]
    }

    /// `LANES` lookups at a time, their binary searches interleaved step by step (the same
    /// number of steps for every lane of a group: the largest chunk's).
    fn lookup_batch(&self, addrs: &[u128], out: &mut [NextHop], probes: &mut u64) {
        for (group, out) in addrs.chunks(LANES).zip(out.chunks_mut(LANES)) {
            let mut lo = [0usize; LANES];
            let mut len = [0usize; LANES];
            let mut x = [0u32; LANES];
            for (i, &a) in group.iter().enumerate() {
                let coarse = (a >> 80) as u64;
                let (first, n) = self.direct[(coarse >> 32) as usize];
                (lo[i], len[i], x[i]) = (first as usize, n as usize, coarse as u32);
            }
            let steps = len.iter().map(|&n| usize::BITS - n.leading_zeros()).max();
            for _ in 0..steps.unwrap_or(0) {
                for i in 0..group.len() {
                    let half = len[i] / 2;
                    // Branch-free: a lane's comparison outcome is a coin toss.
                    let below = usize::from(self.starts[lo[i] + half] <= x[i]);
                    lo[i] += half * below;
                    len[i] -= half;
                }
                *probes += group.len() as u64;
            }
            for (o, &l) in out.iter_mut().zip(&lo) {
                *o = self.answers[l];
            }
        }
    }
}

fn rate(n: usize, f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    n as f64 / t.elapsed().as_secs_f64() / 1e6
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .ok_or("usage: dxr6_probe FILE [TRACE_LEN] [ROUNDS]")?;
    let len: usize = args.next().map_or(Ok(2_000_000), |s| s.parse())?;
    let rounds: usize = args.next().map_or(Ok(5), |s| s.parse())?;
    let table = ipfib_io::load_fib(path.as_ref(), &ipfib_io::LoadOptions::default())?;
    let intervals = Intervals::from_table(table.v6());
    let t = Instant::now();
    let dxr = Dxr6::build(&intervals);
    let build_ms = t.elapsed().as_secs_f64() * 1e3;
    let fib = Fib::build(&table, "planb")?;
    let bytes = dxr.direct.len() * 8 + dxr.starts.len() * 4 + dxr.answers.len() * 4;
    let largest = dxr.direct.iter().map(|&(_, n)| n).max().unwrap_or(0);
    println!(
        "{path}: {} IPv6 routes, {} ranges, largest chunk {largest} ranges, {:.1} MiB \
         ({:.1} B/prefix), built in {build_ms:.0} ms; PlanB {:.1} MiB",
        table.v6().len(),
        dxr.starts.len(),
        bytes as f64 / (1 << 20) as f64,
        bytes as f64 / table.v6().len().max(1) as f64,
        fib.v6().memory_bytes() as f64 / (1 << 20) as f64,
    );
    for kind in [ipfib_gen::TraceKind::Matched, ipfib_gen::TraceKind::Uniform] {
        let trace = ipfib_gen::trace(table.v6(), kind, len, 1);
        let mut differ = 0usize;
        for &a in trace.iter().step_by(97) {
            let planb = fib.v6().lookup(a).unwrap_or(MISS);
            differ += usize::from(dxr.lookup(a) != planb);
        }
        let mut out = vec![0; trace.len()];
        let (mut dxr_rates, mut planb_rates, mut probes) = (Vec::new(), Vec::new(), 0u64);
        for _ in 0..rounds {
            dxr_rates.push(rate(trace.len(), || {
                dxr.lookup_batch(&trace, &mut out, &mut probes);
                black_box(&out);
            }));
            planb_rates.push(rate(trace.len(), || {
                fib.lookup_v6_batch(&trace, &mut out, MISS)
                    .expect("equal lengths");
                black_box(&out);
            }));
        }
        let (d, p) = (median(dxr_rates), median(planb_rates));
        println!(
            "  {kind:8} DXR6 batch {d:7.1} M/s  PlanB batch {p:7.1} M/s  ({:.2}x)  \
             {:.1} search steps per lookup; {differ} of {} sampled answers differ (cut /48)",
            d / p,
            probes as f64 / (trace.len() * rounds) as f64,
            trace.len().div_ceil(97),
        );
    }
    Ok(())
}
