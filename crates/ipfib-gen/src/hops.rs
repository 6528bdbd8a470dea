//! Fresh next-hop identifiers: a Zipf–Mandelbrot law over origin-AS-like ranks.
//!
//! Only the routes that do not repeat a neighbour's or covering prefix's next hop draw here
//! (about 45 % of them), so this law is not the final rank/count curve of a table: that comes out
//! of the draws plus the repetition. The weight `(rank + 10)^-0.875` over twice the measured
//! number of distinct ids (see [`super::fib`]) was chosen so that a generated table of the
//! measured size has about as many distinct next hops as the real one (34,149 origin ASes in the
//! RIS DFZ table), with the most frequent id on a few percent of the routes. Identifiers are
//! ranks starting at 1, like the shared data files' next-hop ids.

use super::rng::Rng;
use ipfib::NextHop;

/// Offset `q` of the law.
const OFFSET: f64 = 10.0;

/// Cumulative integer weights of ranks `1..=n`.
pub(crate) struct HopDraw {
    cumulative: Vec<u64>,
}

impl HopDraw {
    /// A law over `ranks` identifiers (at least one).
    pub(crate) fn new(ranks: u64) -> Self {
        let ranks = ranks.clamp(1, u64::from(NextHop::MAX));
        let mut cumulative = Vec::with_capacity(ranks as usize);
        let mut total = 0u64;
        for rank in 1..=ranks {
            let x = rank as f64 + OFFSET;
            // x^0.875 = x / x^(1/8), with the eighth root by three square roots: IEEE-754
            // rounds sqrt and / exactly, so the weights are the same on every platform (a
            // `powf` result may differ in the last bit between libms).
            let power = x / x.sqrt().sqrt().sqrt();
            let weight = ((1u64 << 40) as f64 / power) as u64;
            total += weight.max(1);
            cumulative.push(total);
        }
        HopDraw { cumulative }
    }

    /// One identifier, `1..=ranks`.
    pub(crate) fn draw(&self, rng: &mut Rng) -> NextHop {
        let total = *self.cumulative.last().expect("at least one rank");
        let r = rng.below(total);
        let index = self.cumulative.partition_point(|&c| c <= r);
        // `index < ranks <= u32::MAX`, so the id fits.
        (index as NextHop).saturating_add(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;

    #[test]
    fn ranks_stay_in_range_and_fall_off() {
        let hops = HopDraw::new(1000);
        let mut rng = Rng::new(5, Stream::Fib);
        let mut counts = vec![0u32; 1001];
        for _ in 0..100_000 {
            let id = hops.draw(&mut rng);
            assert!((1..=1000).contains(&id));
            counts[id as usize] += 1;
        }
        // Expected ratio rank 1 / rank 100 is (110 / 11)^0.875 = 7.5.
        let ratio = f64::from(counts[1]) / f64::from(counts[100].max(1));
        assert!((5.5..10.0).contains(&ratio), "{ratio}");
        assert!(counts[1] > counts[10] && counts[10] > counts[100]);
    }

    #[test]
    fn a_single_rank_always_draws_one() {
        let hops = HopDraw::new(0);
        let mut rng = Rng::new(5, Stream::Fib);
        assert!((0..10).all(|_| hops.draw(&mut rng) == 1));
    }
}
