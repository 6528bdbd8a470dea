//! A fixed (unseeded) hasher for the generator's sets of left-aligned addresses.
//!
//! The generator asks "is this prefix taken?" tens of millions of times for a million-route
//! table, and std's SipHash with random keys is both slower than needed and irrelevant here (the
//! keys are our own, not adversarial). The sets are only queried, never iterated, so the hasher
//! cannot influence the generated table.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// Folds words with a multiply and finishes with the SplitMix64 mixer, so left-aligned
/// addresses (whose low bits are all zero) still spread over the whole hash.
#[derive(Default, Clone, Copy)]
pub(crate) struct MixHasher(u64);

const K: u64 = 0x9e37_79b9_7f4a_7c15;

impl MixHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(23) ^ word).wrapping_mul(K);
    }
}

impl Hasher for MixHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u8(&mut self, v: u8) {
        self.add(u64::from(v));
    }

    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.add(v);
    }

    #[inline]
    fn write_u128(&mut self, v: u128) {
        self.add((v >> 64) as u64);
        self.add(v as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// A set hashed with [`MixHasher`].
pub(crate) type FastSet<T> = HashSet<T, BuildHasherDefault<MixHasher>>;
/// A map hashed with [`MixHasher`].
pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<MixHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn aligned_keys_spread_over_low_bits() {
        let build = BuildHasherDefault::<MixHasher>::default();
        // 256 consecutive /48s, left-aligned: only bits 80..88 differ.
        let mut buckets = FastSet::default();
        for i in 0u128..256 {
            buckets.insert(build.hash_one((0x2001_0db8u128 << 96) | (i << 80)) & 0xff);
        }
        assert!(
            buckets.len() > 128,
            "{} of 256 low-byte values",
            buckets.len()
        );
    }

    #[test]
    fn byte_writes_depend_on_every_byte() {
        let build = BuildHasherDefault::<MixHasher>::default();
        assert_ne!(build.hash_one([1u8, 2, 3]), build.hash_one([1u8, 2, 4]));
        assert_ne!(build.hash_one("abcdefghij"), build.hash_one("abcdefghik"));
    }
}
