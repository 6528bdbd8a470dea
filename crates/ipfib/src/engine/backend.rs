//! SIMD backends: which instruction set an engine's inner loop uses, detected once.
//!
//! Engines compile their hot loops once per backend (inside `#[target_feature]` functions) and
//! pick one when a table is built, so a lookup pays one predictable branch per call, not a
//! feature check.

use std::fmt;
use std::str::FromStr;

/// A SIMD instruction set an engine can run its search with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// Portable, safe Rust (the compiler may vectorise it with the baseline ISA).
    Scalar,
    /// x86-64 AVX2 and POPCNT.
    Avx2,
    /// x86-64 AVX-512F, AVX-512BW and POPCNT.
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
        match self {
            Backend::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 => is_x86_feature_detected!("avx2") && is_x86_feature_detected!("popcnt"),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512 => {
                is_x86_feature_detected!("avx512f")
                    && is_x86_feature_detected!("avx512bw")
                    && is_x86_feature_detected!("popcnt")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
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

/// A backend name that is not `avx512`, `avx2` or `scalar`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown backend {0:?} (known: avx512, avx2, scalar)")]
pub struct UnknownBackend(pub String);

impl FromStr for Backend {
    type Err = UnknownBackend;
    fn from_str(s: &str) -> Result<Self, UnknownBackend> {
        Backend::ALL
            .into_iter()
            .find(|b| b.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownBackend(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_scalar_is_always_there() {
        for b in Backend::ALL {
            assert_eq!(b.name().parse::<Backend>().unwrap(), b);
        }
        assert!(Backend::available().contains(&Backend::Scalar));
        assert!(Backend::detect().is_available());
        assert!("neon".parse::<Backend>().is_err());
    }
}
