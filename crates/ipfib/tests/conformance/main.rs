//! The conformance suite: every engine of the registry (`ipfib::engine::engines()`), with every
//! SIMD backend this CPU runs, on both families, through every lookup path (single,
//! batched into `Option`s, batched raw with a chosen miss value, at batch lengths on both sides
//! of the 32-lane groups), against the reference model. No test names an engine: adding one to
//! the registry puts it under every test here.
//!
//! * `edge_cases`: hand-written tables, each named after the bug it prevents.
//! * `properties`: random tables biased to the hard cases, and large tables of every tree
//!   depth.
//! * `real_tables`: every real table of the shared data set (not built with `--cfg
//!   ipfib_portable`, scripts/portable.sh's emulated aarch64 run, which has no file readers).
//! * `rebuilds`: the structures partial rebuilds and compaction steps make (live tables).
//! * this file: the registry's and the traits' contracts (families an engine does not
//!   support, batch length errors, backends, validation, descriptions).

mod edge_cases;
mod properties;
#[cfg(not(ipfib_portable))]
mod real_tables;
mod rebuilds;
mod support;

use ipfib::engine::{self, Absent, Build, BuildOptions, DetailValue, EngineInfo, Lookup};
use ipfib::{Address, Backend, BuildError, NextHop, Prefix, RouteTable};

use support::{
    check_batch_length_errors, check_subject, reference_answers, subjects, subjects_of, supports,
    THOROUGH,
};

fn one_route<A: Address>() -> RouteTable<A> {
    [(Prefix::covering(A::MAX, 8), 1)].into_iter().collect()
}

#[test]
fn registry_names_are_unique_and_each_is_found_by_name() {
    let all = engine::engines();
    assert!(!all.is_empty());
    for (i, e) in all.iter().enumerate() {
        assert!(!e.name().is_empty() && !e.summary().is_empty(), "{e:?}");
        assert!(
            all[..i].iter().all(|o| o.name() != e.name()),
            "{} twice",
            e.name()
        );
        assert_eq!(
            engine::by_name(e.name()).expect("registered").name(),
            e.name()
        );
        assert_eq!(
            engine::by_name(&e.name().to_ascii_uppercase())
                .expect("any case")
                .name(),
            e.name()
        );
    }
    match engine::by_name("no-such-engine") {
        Err(BuildError::UnknownEngine { name, known }) => {
            assert_eq!(name, "no-such-engine");
            for e in all {
                assert!(known.contains(e.name()), "{known:?} lists {}", e.name());
            }
        }
        other => panic!("unknown engine: {other:?}"),
    }
}

/// Every engine either supports a family or refuses routes of it with `UnsupportedFamily`
/// (naming itself and the family) while still building an empty table that answers nothing;
/// and every engine supports at least one family.
#[test]
fn an_unsupported_family_is_refused_with_routes_and_built_empty() {
    fn family<A: Address>(info: &EngineInfo) -> bool {
        let supported = supports::<A>(info);
        let empty = info
            .build::<A>(&RouteTable::new(), &BuildOptions::default())
            .unwrap_or_else(|e| {
                panic!(
                    "{} cannot build an empty {} table: {e}",
                    info.name(),
                    A::FAMILY
                )
            });
        assert_eq!(empty.lookup(A::ZERO), None);
        assert_eq!(empty.lookup(A::MAX), None);
        empty.validate().expect("valid");
        if !supported {
            assert_eq!(
                info.build::<A>(&one_route(), &BuildOptions::default())
                    .err(),
                Some(BuildError::UnsupportedFamily {
                    engine: info.name(),
                    family: A::FAMILY
                })
            );
        }
        supported
    }
    for info in engine::engines() {
        let v4 = family::<u32>(info);
        let v6 = family::<u128>(info);
        assert!(v4 || v6, "{} supports no family", info.name());
    }
}

/// An IPv4-only engine as a registry entry would declare one (a linear scan, small enough to
/// be obviously right), to check that the suite skips rather than fails a family an engine
/// does not support, and that the registry names the engine in the error.
struct LinearV4(Vec<(Prefix<u32>, NextHop)>);

impl Lookup<u32> for LinearV4 {
    fn name(&self) -> &'static str {
        "v4-only"
    }
    fn lookup(&self, addr: u32) -> Option<NextHop> {
        self.0
            .iter()
            .filter(|(p, _)| p.contains(addr))
            .max_by_key(|(p, _)| p.len())
            .map(|&(_, nh)| nh)
    }
    fn memory_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.0)
    }
}

impl Build<u32> for LinearV4 {
    fn build(table: &RouteTable<u32>, _: &BuildOptions) -> Result<Self, BuildError> {
        Ok(LinearV4(table.iter().collect()))
    }
}

static V4_ONLY: [EngineInfo; 1] = [EngineInfo::new::<LinearV4, Absent>(
    "v4-only",
    "a linear scan for IPv4, nothing for IPv6",
)];

#[test]
fn a_single_family_engine_is_skipped_for_the_other_family_not_failed() {
    assert!(supports::<u32>(&V4_ONLY[0]));
    assert!(!supports::<u128>(&V4_ONLY[0]));
    let t6 = one_route::<u128>();
    assert!(
        subjects_of(&V4_ONLY, &t6).is_empty(),
        "skipped for a table with IPv6 routes"
    );
    assert_eq!(
        V4_ONLY[0]
            .build::<u128>(&t6, &BuildOptions::default())
            .err(),
        Some(BuildError::UnsupportedFamily {
            engine: "v4-only",
            family: "IPv6"
        })
    );
    let empty = subjects_of(&V4_ONLY, &RouteTable::<u128>::new());
    assert_eq!(
        empty.len(),
        Backend::available().len(),
        "kept for an empty IPv6 table"
    );
    let addrs = [0u128, 1, u128::MAX];
    for s in &empty {
        check_subject(s, &addrs, &[None; 3], &THOROUGH);
        check_batch_length_errors(s);
    }
    let t4 = one_route::<u32>();
    let v4 = subjects_of(&V4_ONLY, &t4);
    assert_eq!(v4.len(), Backend::available().len());
    let addrs = [0u32, 0xff00_0000, u32::MAX, 0xfeff_ffff];
    let want = reference_answers(&t4, &addrs);
    for s in &v4 {
        check_subject(s, &addrs, &want, &THOROUGH);
    }
}

#[test]
fn batch_length_mismatch_is_an_error_and_writes_nothing() {
    fn family<A: Address>() {
        for table in [RouteTable::<A>::new(), one_route::<A>()] {
            let all = subjects(&table);
            assert!(!all.is_empty());
            for s in &all {
                check_batch_length_errors(s);
            }
        }
    }
    family::<u32>();
    family::<u128>();
}

/// A backend this CPU lacks is `BackendUnavailable` for an engine with SIMD backends, and
/// ignored by one without; the default options pick one that runs.
#[test]
fn an_unavailable_backend_is_an_error_or_ignored_never_a_crash() {
    assert!(Backend::available().contains(&Backend::Scalar));
    fn family<A: Address>() {
        let table = one_route::<A>();
        for info in engine::engines().iter().filter(|e| supports::<A>(e)) {
            for backend in Backend::ALL.into_iter().filter(|b| !b.is_available()) {
                match info.build::<A>(&table, &BuildOptions::with_backend(backend)) {
                    Ok(e) => assert_eq!(
                        e.lookup(A::MAX),
                        Some(1),
                        "{} ignores {backend}",
                        info.name()
                    ),
                    Err(err) => assert_eq!(
                        err,
                        BuildError::BackendUnavailable {
                            backend: backend.name()
                        },
                        "{}",
                        info.name()
                    ),
                }
            }
            let e = info
                .build::<A>(&table, &BuildOptions::default())
                .expect("default backend");
            assert_eq!(e.lookup(A::MAX), Some(1));
        }
    }
    family::<u32>();
    family::<u128>();
}

/// `describe()` names are `snake_case` and unique (they are JSON keys in `ipfib stats`), and
/// the sizes an engine reports in bytes add up to `memory_bytes()`, for every engine and
/// backend.
#[test]
fn descriptions_are_snake_case_json_keys() {
    fn family<A: Address>() {
        // Long and host routes too, so an engine's second stage (if any) has bytes to report.
        let mut several = one_route::<A>();
        for (len, hop) in [(A::BITS, 2), (A::BITS - 1, 3), (A::BITS / 2 + 1, 4)] {
            several.insert(Prefix::covering(A::MAX, len), hop);
            several.insert(Prefix::covering(A::ZERO, len), hop);
        }
        for table in [RouteTable::<A>::new(), one_route::<A>(), several] {
            for s in subjects(&table) {
                let details = s.engine.describe();
                for (i, d) in details.iter().enumerate() {
                    assert!(
                        !d.name.is_empty()
                            && d.name
                                .chars()
                                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                        "{}: detail name {:?}",
                        s.label,
                        d.name
                    );
                    assert!(
                        details[..i].iter().all(|o| o.name != d.name),
                        "{}: {} twice",
                        s.label,
                        d.name
                    );
                    assert!(!d.value.to_string().is_empty(), "{}: {}", s.label, d.name);
                }
                // The parts an engine reports in bytes are its memory, split: they add up.
                let parts: Vec<u64> = details
                    .iter()
                    .filter_map(|d| match d.value {
                        DetailValue::Bytes(b) => Some(b),
                        _ => None,
                    })
                    .collect();
                if !parts.is_empty() {
                    assert_eq!(
                        parts.iter().sum::<u64>(),
                        s.engine.memory_bytes() as u64,
                        "{}: the byte details do not add up to memory_bytes()",
                        s.label
                    );
                }
            }
        }
    }
    family::<u32>();
    family::<u128>();
}
