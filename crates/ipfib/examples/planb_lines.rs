//! Cache lines per PlanB lookup on a real table and trace, from PlanB's own model
//! (`Lookup::lines_per_lookup`, `Lookup::lines_by_step`), and a fixed batch of lookups to count
//! instructions under callgrind:
//!
//! ```text
//! cargo run --release -p ipfib --example planb_lines -- FILE [matched|uniform|space]...
//! CALLGRIND=1 BACKEND=avx2 valgrind --tool=callgrind --toggle-collect='*batch_avx2*' \
//!     target/release/examples/planb_lines FILE uniform
//! ```
//!
//! `N` is the trace length (default 1 M; seed 1). With `CALLGRIND` set, the model is skipped and
//! one batched pass (and, with `SINGLE` set, one pass of single lookups) runs per trace.

use std::path::PathBuf;

use ipfib::engine::planb::PlanB;
use ipfib::{Backend, Build, BuildOptions, Lookup, RouteTable};
use ipfib_gen::TraceKind;

macro_rules! run {
    ($table:expr, $family:ty, $kinds:expr) => {{
        let table: &RouteTable<$family> = $table;
        let n: usize = std::env::var("N")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1 << 20);
        let backend = match std::env::var("BACKEND").as_deref() {
            Ok("scalar") => Backend::Scalar,
            Ok("avx2") => Backend::Avx2,
            Ok("avx512") => Backend::Avx512,
            _ => Backend::detect(),
        };
        let planb =
            PlanB::<$family>::build(table, &BuildOptions::with_backend(backend)).expect("build");
        for &kind in $kinds {
            let trace = ipfib_gen::trace(table, kind, n, 1);
            if std::env::var_os("CALLGRIND").is_some() {
                let mut out = vec![0u32; trace.len()];
                planb
                    // An opaque miss value, as real callers pass one: a constant here let the
                    // compiler fold the leaf's select into code no caller runs (BENCHMARKS.md,
                    // design table, session 11), and the counts mislead.
                    .lookup_batch_raw(&trace, &mut out, std::hint::black_box(u32::MAX))
                    .expect("equal lengths");
                let mut acc = out.iter().map(|&h| u64::from(h)).sum::<u64>();
                if std::env::var_os("SINGLE").is_some() {
                    for &a in &trace {
                        acc = acc.wrapping_add(u64::from(
                            planb.lookup(std::hint::black_box(a)).unwrap_or(7),
                        ));
                    }
                }
                println!("{kind}: {} lookups, checksum {acc}", trace.len());
                continue;
            }
            let total = planb.lines_per_lookup(&trace).expect("a model");
            let steps: Vec<String> = planb
                .lines_by_step(&trace)
                .iter()
                .map(|(step, lines)| format!("{step} {lines:.3}"))
                .collect();
            println!(
                "{kind:8} lines/lookup {total:.3}   by step: {}",
                steps.join(", ")
            );
        }
    }};
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(args.next().expect("usage: planb_lines FILE [TRACE...]"));
    let mut kinds: Vec<TraceKind> = args
        .map(|a| {
            *TraceKind::ALL
                .iter()
                .find(|k| k.name() == a)
                .expect("trace kind")
        })
        .collect();
    if kinds.is_empty() {
        kinds = vec![TraceKind::Matched, TraceKind::Uniform];
    }
    let table = ipfib_io::load_fib(&path, &ipfib_io::LoadOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    println!("{}", path.display());
    if !table.v6().is_empty() {
        run!(table.v6(), u128, &kinds);
    }
    if !table.v4().is_empty() {
        run!(table.v4(), u32, &kinds);
    }
}
