//! The C bulk lookups (`ipfib_lookup_v6_bulk` on a table, `ipfib_reader_lookup_v6_bulk` through
//! a live table's reader: the exported functions a C program calls, with addresses as 16
//! network-order bytes) against the Rust batched path (`Fib::lookup_v6_batch` on `u128`s) on
//! the same table and trace, rounds interleaved, median and range of each (BENCHMARKS.md, "C
//! library").
//!
//! `cargo run --release -p ipfib-capi --example bulk_vs_batch -- TABLE [ADDRESSES] [RUNS]`

use std::ffi::CString;
use std::time::Instant;

use ipfib_capi::{
    ipfib_fib_free, ipfib_fib_open, ipfib_live_free, ipfib_live_new, ipfib_live_reader,
    ipfib_lookup_v6_bulk, ipfib_reader_free, ipfib_reader_lookup_v6_bulk, ipfib_table_free,
    ipfib_table_load,
};

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

    // The same routes in a live table (planb, as the opened table unless it is a saved table
    // of another engine), read through a reader as a forwarding thread would.
    // SAFETY: valid strings and buffer; the table is freed after the live table copied it.
    let (live, reader) = unsafe {
        let table = ipfib_table_load(c_path.as_ptr(), err.as_mut_ptr(), err.len());
        assert!(!table.is_null(), "load failed");
        let live = ipfib_live_new(table, std::ptr::null(), 100, err.as_mut_ptr(), err.len());
        assert!(!live.is_null(), "live table failed");
        ipfib_table_free(table);
        (live, ipfib_live_reader(live))
    };
    let mut live_out = vec![0u32; n];

    let (mut rust, mut c, mut c_live) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        let t = Instant::now();
        fib.lookup_v6_batch(&wide, &mut rust_out, u32::MAX).unwrap();
        rust.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        // SAFETY: `n` addresses and `n` outputs.
        unsafe { ipfib_lookup_v6_bulk(cfib, bytes.as_ptr(), c_out.as_mut_ptr(), n, u32::MAX) };
        c.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        // SAFETY: `n` addresses and `n` outputs; the reader is used by this thread only.
        unsafe {
            ipfib_reader_lookup_v6_bulk(reader, bytes.as_ptr(), live_out.as_mut_ptr(), n, u32::MAX)
        };
        c_live.push(t.elapsed().as_secs_f64());
    }
    assert_eq!(
        rust_out, c_out,
        "the C bulk lookup answers as the Rust batch does"
    );
    assert_eq!(
        rust_out, live_out,
        "the live reader's bulk lookup answers as the Rust batch does"
    );
    // SAFETY: made above, each freed once, the reader before its live table.
    unsafe {
        ipfib_fib_free(cfib);
        ipfib_reader_free(reader);
        ipfib_live_free(live);
    }
    // Median, lowest and highest, in ns per lookup.
    let stats = |times: &mut Vec<f64>| {
        times.sort_by(f64::total_cmp);
        let ns = |secs: f64| secs * 1e9 / n as f64;
        (
            ns(times[times.len() / 2]),
            ns(times[0]),
            ns(times[times.len() - 1]),
        )
    };
    let rust = stats(&mut rust);
    println!(
        "{path}: {n} matched IPv6 addresses, {runs} interleaved rounds, ns/lookup median (range)"
    );
    println!(
        "  Rust Fib::lookup_v6_batch       : {:6.2} ({:.2}-{:.2})",
        rust.0, rust.1, rust.2
    );
    for (name, times) in [
        ("C ipfib_lookup_v6_bulk         ", &mut c),
        ("C ipfib_reader_lookup_v6_bulk  ", &mut c_live),
    ] {
        let (median, low, high) = stats(times);
        println!(
            "  {name}: {median:6.2} ({low:.2}-{high:.2}), {:.3}x the Rust rate",
            rust.0 / median
        );
    }
}
