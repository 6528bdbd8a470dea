//! Node search: count the keys of one cache-line node that are less than the query.
//!
//! The tree walk is written once ([`super::walk`]) against [`Search`]; the backends below
//! implement it for both key widths. Each SIMD backend is a zero-sized *token* that can only be
//! obtained after run-time CPU detection, so holding one proves the instructions exist and its
//! methods can be safe. The walk is compiled once per backend inside a
//! `#[target_feature]` function, and [`Backend`] picks one when a table is built: the
//! per-lookup cost of dispatch is one predictable branch per batch.

#[cfg(target_arch = "x86_64")]
pub mod avx2;
#[cfg(target_arch = "x86_64")]
pub mod avx512;
pub mod scalar;

use std::fmt;
use std::str::FromStr;

use super::layout::{Node16, Node32};

/// Counts keys `< x` in one node, for both node shapes. Keys are stored as `boundary - 1` and
/// padded with the key type's maximum, so the count is the number of boundaries `<= x`, and
/// padding never counts. [`super::layout::Key::rank`] picks the method for a key type.
pub trait Search: Copy {
    /// Number of the 32 `u16` keys of `node` that are less than `x`.
    fn rank16(self, node: &Node16, x: u16) -> u32;
    /// Number of the 16 `u32` keys of `node` that are less than `x`.
    fn rank32(self, node: &Node32, x: u32) -> u32;

    /// `&slice[i]` for an index the walk computed from the table's own arrays. The scalar
    /// backend checks it; the SIMD backends skip the check (asserted in debug builds), since
    /// the builder guarantees every index the walk can form is in bounds (see
    /// [`super::walk`]) and the checks cost four instructions per tree level.
    fn at<T>(self, slice: &[T], i: usize) -> &T;
}

/// A node-search implementation, chosen at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// Portable, branch-free, safe Rust (the compiler may vectorise it with the baseline ISA).
    Scalar,
    /// 256-bit compares (two per node for `u32` keys, two for `u16` keys).
    Avx2,
    /// One 512-bit compare into a mask register and a popcount per node.
    Avx512,
}

impl Backend {
    /// Every backend, fastest first.
    pub const ALL: [Backend; 3] = [Backend::Avx512, Backend::Avx2, Backend::Scalar];

    /// The fastest backend this CPU supports.
    pub fn detect() -> Backend {
        Backend::ALL
            .into_iter()
            .find(|b| b.is_available())
            .unwrap_or(Backend::Scalar)
    }

    /// Whether this CPU can run the backend.
    pub fn is_available(self) -> bool {
        Dispatch::new(self).is_some()
    }

    /// Backends this CPU supports, fastest first.
    pub fn available() -> Vec<Backend> {
        Backend::ALL
            .into_iter()
            .filter(|b| b.is_available())
            .collect()
    }

    /// Lower-case name (`scalar`, `avx2`, `avx512`).
    pub fn name(self) -> &'static str {
        match self {
            Backend::Scalar => "scalar",
            Backend::Avx2 => "avx2",
            Backend::Avx512 => "avx512",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Backend {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Backend::ALL
            .into_iter()
            .find(|b| b.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| format!("unknown backend {s:?} (known: avx512, avx2, scalar)"))
    }
}

/// A backend together with the proof that it can run: what a built table holds, so a lookup
/// dispatches with one match and no feature detection.
#[derive(Clone, Copy, Debug)]
pub enum Dispatch {
    /// Portable search.
    Scalar(scalar::Scalar),
    /// AVX2 search.
    #[cfg(target_arch = "x86_64")]
    Avx2(avx2::Avx2),
    /// AVX-512 search.
    #[cfg(target_arch = "x86_64")]
    Avx512(avx512::Avx512),
}

impl Dispatch {
    /// The dispatch for `backend`, if this CPU can run it.
    pub fn new(backend: Backend) -> Option<Dispatch> {
        match backend {
            Backend::Scalar => Some(Dispatch::Scalar(scalar::Scalar)),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 => avx2::Avx2::new().map(Dispatch::Avx2),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512 => avx512::Avx512::new().map(Dispatch::Avx512),
            #[cfg(not(target_arch = "x86_64"))]
            _ => None,
        }
    }

    /// Which backend this is.
    pub fn backend(self) -> Backend {
        match self {
            Dispatch::Scalar(_) => Backend::Scalar,
            #[cfg(target_arch = "x86_64")]
            Dispatch::Avx2(_) => Backend::Avx2,
            #[cfg(target_arch = "x86_64")]
            Dispatch::Avx512(_) => Backend::Avx512,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every available backend agrees with a plain count on random nodes and queries.
    fn check_u32(keys: [u32; 16], x: u32) {
        let node = Node32(keys);
        let want = keys.iter().filter(|&&k| k < x).count() as u32;
        assert_eq!(scalar::Scalar.rank32(&node, x), want);
        #[cfg(target_arch = "x86_64")]
        {
            if let Some(t) = avx2::Avx2::new() {
                assert_eq!(t.rank32(&node, x), want, "avx2 u32");
            }
            if let Some(t) = avx512::Avx512::new() {
                assert_eq!(t.rank32(&node, x), want, "avx512 u32");
            }
        }
    }

    fn check_u16(keys: [u16; 32], x: u16) {
        let node = Node16(keys);
        let want = keys.iter().filter(|&&k| k < x).count() as u32;
        assert_eq!(scalar::Scalar.rank16(&node, x), want);
        #[cfg(target_arch = "x86_64")]
        {
            if let Some(t) = avx2::Avx2::new() {
                assert_eq!(t.rank16(&node, x), want, "avx2 u16");
            }
            if let Some(t) = avx512::Avx512::new() {
                assert_eq!(t.rank16(&node, x), want, "avx512 u16");
            }
        }
    }

    #[test]
    fn extremes_and_sign_bit() {
        let mut k = [0u32; 16];
        for (i, v) in k.iter_mut().enumerate() {
            *v = (i as u32).wrapping_mul(0x1111_1111) ^ 0x8000_0000;
        }
        for x in [
            0,
            1,
            0x7fff_ffff,
            0x8000_0000,
            0x8000_0001,
            u32::MAX - 1,
            u32::MAX,
        ] {
            check_u32(k, x);
            check_u32([u32::MAX; 16], x);
            check_u32([0; 16], x);
        }
        let mut k = [0u16; 32];
        for (i, v) in k.iter_mut().enumerate() {
            *v = (i as u16).wrapping_mul(0x0841) ^ 0x8000;
        }
        for x in [0, 1, 0x7fff, 0x8000, 0x8001, u16::MAX - 1, u16::MAX] {
            check_u16(k, x);
            check_u16([u16::MAX; 32], x);
            check_u16([0; 32], x);
        }
    }

    proptest! {
        #[test]
        fn backends_agree_u32(keys in proptest::array::uniform16(any::<u32>()), x in any::<u32>()) {
            check_u32(keys, x);
        }

        #[test]
        fn backends_agree_u16(keys in proptest::array::uniform32(any::<u16>()), x in any::<u16>()) {
            check_u16(keys, x);
        }
    }
}
