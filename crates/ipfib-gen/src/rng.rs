//! The generators' random source: ChaCha8 with every derived draw done in integer arithmetic.
//!
//! Synthetic tables are benchmark inputs that are quoted by seed ("synth-4, seed 1"), so the same
//! seed must give the same table on every platform and with every future version of this crate.
//! ChaCha's keystream is fixed by its specification; the seed expansion and the derived draws
//! (bounded integers, Bernoulli trials) are written here rather than taken from `rand`, whose
//! distributions are allowed to change between releases. No floating point is used anywhere in
//! the generators' decisions.

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

/// Independent streams of one seed: a table and a trace generated with the same seed do not
/// share random numbers.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Stream {
    /// Table generation.
    Fib = 1,
    /// Trace generation.
    Trace = 2,
}

/// A seeded random source for one purpose.
pub(crate) struct Rng {
    inner: ChaCha8Rng,
}

impl Rng {
    /// The stream `stream` of seed `seed`. The 256-bit key is the seed in little-endian order
    /// followed by zeros (a fixed, documented expansion, independent of `rand_core`'s
    /// `seed_from_u64`).
    pub(crate) fn new(seed: u64, stream: Stream) -> Self {
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        let mut inner = ChaCha8Rng::from_seed(key);
        inner.set_stream(stream as u64);
        Rng { inner }
    }

    /// 64 uniformly random bits.
    #[inline]
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.inner.next_u64()
    }

    /// 128 uniformly random bits.
    #[inline]
    pub(crate) fn next_u128(&mut self) -> u128 {
        let hi = u128::from(self.next_u64());
        (hi << 64) | u128::from(self.next_u64())
    }

    /// A uniform integer in `0..n`; `n == 0` gives 0 (there is nothing to choose from, and the
    /// callers never use the value then).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        // Lemire's multiply-shift with rejection: unbiased, usually one draw.
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = u128::from(self.next_u64()) * u128::from(n);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }

    /// A uniform integer in `0..n` for 128-bit ranges; `n == 0` means the full range `0..2^128`.
    pub(crate) fn below_u128(&mut self, n: u128) -> u128 {
        if n == 0 {
            return self.next_u128();
        }
        if n <= u128::from(u64::MAX) {
            return u128::from(self.below(n as u64));
        }
        // Rejection on the smallest covering power of two: fewer than two draws on average.
        let mask = u128::MAX >> n.leading_zeros();
        loop {
            let v = self.next_u128() & mask;
            if v < n {
                return v;
            }
        }
    }

    /// True with probability `num / den` (certainly false when `den == 0`).
    #[inline]
    pub(crate) fn chance(&mut self, num: u64, den: u64) -> bool {
        den != 0 && self.below(den) < num
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_of_one_seed_differ_and_repeat() {
        let a: Vec<u64> = (0..4)
            .map(|_| Rng::new(7, Stream::Fib).next_u64())
            .collect();
        assert!(a.iter().all(|&x| x == a[0]));
        let mut fib = Rng::new(7, Stream::Fib);
        let mut trace = Rng::new(7, Stream::Trace);
        assert_ne!(fib.next_u64(), trace.next_u64());
    }

    #[test]
    fn below_stays_in_range_and_hits_every_value() {
        let mut rng = Rng::new(1, Stream::Fib);
        let mut seen = [false; 5];
        for _ in 0..1000 {
            let v = rng.below(5);
            assert!(v < 5);
            seen[v as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(rng.below(0), 0);
        assert_eq!(rng.below(1), 0);
    }

    #[test]
    fn below_u128_covers_wide_ranges() {
        let mut rng = Rng::new(2, Stream::Trace);
        let n = (1u128 << 100) + 3;
        let mut high = false;
        for _ in 0..200 {
            let v = rng.below_u128(n);
            assert!(v < n);
            high |= v >= 1u128 << 99;
        }
        assert!(high, "the upper half of the range is never drawn");
        assert_eq!(rng.below_u128(1), 0);
    }

    #[test]
    fn chance_matches_its_rate() {
        let mut rng = Rng::new(3, Stream::Fib);
        let hits = (0..10_000).filter(|_| rng.chance(1, 4)).count();
        assert!((2_200..2_800).contains(&hits), "{hits}");
        assert!(!rng.chance(5, 0));
        assert!(rng.chance(1, 1));
    }
}
