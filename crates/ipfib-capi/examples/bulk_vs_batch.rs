//! The C bulk lookup (`ipfib_lookup_v6_bulk`, the exported function a C program calls, with
//! addresses as 16 network-order bytes) against the Rust batched path (`Fib::lookup_v6_batch`
//! on `u128`s) on the same table and trace, runs interleaved, best of each (BENCHMARKS.md,
//! "C library").
//!
//! `cargo run --release -p ipfib-capi --example bulk_vs_batch -- TABLE [ADDRESSES] [RUNS]`

use std::ffi::CString;
use std::time::Instant;

use ipfib_capi::{ipfib_fib_free, ipfib_fib_open, ipfib_lookup_v6_bulk};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: bulk_vs_batch TABLE [ADDRESSES] [RUNS]");
    let n: usize = args
        .next()
        .map_or(2_000_000, |s| s.parse().expect("ADDRESSES"));
    let runs: usize = args.next().map_or(9, |s| s.parse().expect("RUNS"));

    let c_path = CString::new(path.clone()).expect("no NUL in the path");
    let mut err = [0i8; 256];
    // SAFETY: valid strings and buffer.
    let cfib = unsafe {
        ipfib_fib_open(
            c_path.as_ptr(),
            std::ptr::null(),
            err.as_mut_ptr(),
            err.len(),
        )
    };
    assert!(!cfib.is_null(), "open failed");
    let fib =
        ipfib_io::open_fib(path.as_ref(), None, &ipfib_io::LoadOptions::default()).expect("open");

    // A matched trace: random addresses inside the table's IPv6 prefixes.
    let routes: Vec<_> = fib.table().v6().iter().map(|(p, _)| p).collect();
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let wide: Vec<u128> = (0..n)
        .map(|_| {
            let p = routes[next() as usize % routes.len()];
            let host = (u128::from(next()) << 64 | u128::from(next()))
                & !<u128 as ipfib::Address>::mask(p.len());
            p.addr() | host
        })
        .collect();
    let bytes: Vec<[u8; 16]> = wide.iter().map(|a| a.to_be_bytes()).collect();
    let (mut rust_out, mut c_out) = (vec![0u32; n], vec![0u32; n]);

    let (mut best_rust, mut best_c) = (f64::MAX, f64::MAX);
    for _ in 0..runs {
        let t = Instant::now();
        fib.lookup_v6_batch(&wide, &mut rust_out, u32::MAX).unwrap();
        best_rust = best_rust.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        // SAFETY: `n` addresses and `n` outputs.
        unsafe { ipfib_lookup_v6_bulk(cfib, bytes.as_ptr(), c_out.as_mut_ptr(), n, u32::MAX) };
        best_c = best_c.min(t.elapsed().as_secs_f64());
    }
    assert_eq!(
        rust_out, c_out,
        "the C bulk lookup answers as the Rust batch does"
    );
    // SAFETY: opened above, freed once.
    unsafe { ipfib_fib_free(cfib) };
    let ns = |secs: f64| secs * 1e9 / n as f64;
    println!("{path}: {n} matched IPv6 addresses, best of {runs}");
    println!("  Rust lookup_v6_batch   : {:6.2} ns/lookup", ns(best_rust));
    println!(
        "  C ipfib_lookup_v6_bulk : {:6.2} ns/lookup ({:.3}x the Rust time)",
        ns(best_c),
        best_c / best_rust
    );
}
