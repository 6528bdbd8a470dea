//! The CPU features the engines' inner loops use: detected once, and proven by tokens.
//!
//! One [`Backend`] names an instruction set; one zero-sized *token* per backend ([`Scalar`],
//! `Avx2`, `Avx512`, `Neon`) can only be made when the CPU has it, so holding one proves the
//! instructions exist and a method that uses them can be safe. A built table holds a [`Cpu`]
//! (a backend with its token), chosen once when it is built, and each engine dispatches on it
//! with `with_token!` to call its walk compiled for that backend: a lookup pays one
//! predictable branch, never a feature check. Every engine takes its backends from here, so a
//! new instruction set is a token and a variant here, and for each engine its inner search and
//! one line implementing the engine's walk trait for the token.
//!
//! Features are read once per process ([`Backend::available`] caches them).

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU8, Ordering};

/// A SIMD instruction set an engine can run its search with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// Portable, safe Rust (the compiler may vectorise it with the baseline ISA).
    Scalar,
    /// x86-64 AVX2, with POPCNT, BMI1 and BMI2 (every AVX2 CPU has them).
    Avx2,
    /// x86-64 AVX-512F and AVX-512BW, with POPCNT, BMI1 and BMI2.
    Avx512,
    /// aarch64 Advanced SIMD (NEON, part of every aarch64 CPU that runs Linux).
    Neon,
}

/// Bit of each backend in the detected set.
const fn bit(b: Backend) -> u8 {
    match b {
        Backend::Scalar => 1,
        Backend::Avx2 => 2,
        Backend::Avx512 => 4,
        Backend::Neon => 8,
    }
}

/// The backends this CPU runs, as [`bit`]s, with bit 7 set once detected.
static DETECTED: AtomicU8 = AtomicU8::new(0);
const DONE: u8 = 0x80;

/// Reads the CPU's features (once per process; later calls load the cached set).
#[inline]
fn detected() -> u8 {
    let cached = DETECTED.load(Ordering::Relaxed);
    if cached & DONE != 0 {
        return cached;
    }
    let mut set = DONE | bit(Backend::Scalar);
    #[cfg(target_arch = "x86_64")]
    {
        let base = is_x86_feature_detected!("popcnt")
            && is_x86_feature_detected!("bmi1")
            && is_x86_feature_detected!("bmi2");
        if base && is_x86_feature_detected!("avx2") {
            set |= bit(Backend::Avx2);
        }
        if base && is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw") {
            set |= bit(Backend::Avx512);
        }
    }
    #[cfg(target_arch = "aarch64")]
    if std::arch::is_aarch64_feature_detected!("neon") {
        set |= bit(Backend::Neon);
    }
    DETECTED.store(set, Ordering::Relaxed);
    set
}

impl Backend {
    /// Every backend, fastest first.
    pub const ALL: [Backend; 4] = [
        Backend::Avx512,
        Backend::Avx2,
        Backend::Neon,
        Backend::Scalar,
    ];

    /// The fastest backend this CPU supports.
    pub fn detect() -> Backend {
        Backend::ALL
            .into_iter()
            .find(|b| b.is_available())
            .unwrap_or(Backend::Scalar)
    }

    /// Whether this CPU can run the backend.
    #[inline]
    pub fn is_available(self) -> bool {
        detected() & bit(self) != 0
    }

    /// Backends this CPU supports, fastest first.
    pub fn available() -> Vec<Backend> {
        Backend::ALL
            .into_iter()
            .filter(|b| b.is_available())
            .collect()
    }

    /// Lower-case name (`scalar`, `avx2`, `avx512`, `neon`).
    pub fn name(self) -> &'static str {
        match self {
            Backend::Scalar => "scalar",
            Backend::Avx2 => "avx2",
            Backend::Avx512 => "avx512",
            Backend::Neon => "neon",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A backend name that is not `avx512`, `avx2`, `neon` or `scalar`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown backend {0:?} (known: avx512, avx2, neon, scalar)")]
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

/// The portable backend's token: every CPU has it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Scalar;

/// Defines the token of a backend that needs a CPU feature: a zero-sized proof that only
/// `new` makes, and only where [`Backend::is_available`] says the CPU runs it.
macro_rules! token {
    ($(#[$doc:meta])* $name:ident, $arch:literal) => {
        $(#[$doc])*
        #[cfg(target_arch = $arch)]
        #[derive(Clone, Copy, Debug)]
        pub struct $name(());

        #[cfg(target_arch = $arch)]
        impl $name {
            /// The token, if this CPU runs the backend.
            #[inline]
            pub fn new() -> Option<Self> {
                Backend::$name.is_available().then_some($name(()))
            }
        }
    };
}

token!(
    /// Proof that the CPU has AVX2, POPCNT, BMI1 and BMI2.
    Avx2,
    "x86_64"
);
token!(
    /// Proof that the CPU has AVX-512F, AVX-512BW, POPCNT, BMI1 and BMI2.
    Avx512,
    "x86_64"
);
token!(
    /// Proof that the CPU has NEON.
    Neon,
    "aarch64"
);

/// A backend with the proof that this CPU runs it: what a built table holds, so a lookup
/// dispatches with one match and no feature detection.
#[derive(Clone, Copy, Debug)]
pub enum Cpu {
    /// Portable code.
    Scalar(Scalar),
    /// AVX2.
    #[cfg(target_arch = "x86_64")]
    Avx2(Avx2),
    /// AVX-512.
    #[cfg(target_arch = "x86_64")]
    Avx512(Avx512),
    /// NEON.
    #[cfg(target_arch = "aarch64")]
    Neon(Neon),
}

/// Runs `$body` with `$token` bound to the token `$cpu` (a [`Cpu`]) holds: the one match over
/// the backends, each arm compiled with its own token type, so that a `$body` calling a
/// function generic over the token gets that backend's instance of it.
macro_rules! with_token {
    ($cpu:expr, $token:ident => $body:expr) => {
        match $cpu {
            $crate::cpu::Cpu::Scalar($token) => $body,
            #[cfg(target_arch = "x86_64")]
            $crate::cpu::Cpu::Avx2($token) => $body,
            #[cfg(target_arch = "x86_64")]
            $crate::cpu::Cpu::Avx512($token) => $body,
            #[cfg(target_arch = "aarch64")]
            $crate::cpu::Cpu::Neon($token) => $body,
        }
    };
}
pub(crate) use with_token;

impl Cpu {
    /// The token for `backend`, if this CPU runs it.
    pub fn new(backend: Backend) -> Option<Cpu> {
        match backend {
            Backend::Scalar => Some(Cpu::Scalar(Scalar)),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 => Avx2::new().map(Cpu::Avx2),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512 => Avx512::new().map(Cpu::Avx512),
            #[cfg(target_arch = "aarch64")]
            Backend::Neon => Neon::new().map(Cpu::Neon),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    /// Which backend this is.
    pub fn backend(self) -> Backend {
        match self {
            Cpu::Scalar(_) => Backend::Scalar,
            #[cfg(target_arch = "x86_64")]
            Cpu::Avx2(_) => Backend::Avx2,
            #[cfg(target_arch = "x86_64")]
            Cpu::Avx512(_) => Backend::Avx512,
            #[cfg(target_arch = "aarch64")]
            Cpu::Neon(_) => Backend::Neon,
        }
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
        assert!("riscv".parse::<Backend>().is_err());
    }

    #[test]
    fn a_token_exists_exactly_for_the_available_backends() {
        for b in Backend::ALL {
            let cpu = Cpu::new(b);
            assert_eq!(cpu.is_some(), b.is_available(), "{b}");
            if let Some(cpu) = cpu {
                assert_eq!(cpu.backend(), b);
            }
        }
    }

    /// The backend the test command expects this CPU to run (`IPFIB_EXPECT_BACKEND`, set by
    /// `scripts/portable.sh` under qemu-aarch64) is the one detected: the emulated run tests
    /// the NEON code, not the portable code on a CPU model without NEON.
    #[test]
    fn the_expected_backend_is_detected() {
        if let Ok(want) = std::env::var("IPFIB_EXPECT_BACKEND") {
            let want: Backend = want.parse().expect("IPFIB_EXPECT_BACKEND names a backend");
            assert_eq!(Backend::detect(), want);
        }
    }
}
