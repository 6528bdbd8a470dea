//! Address text parsed per second: `ipfib::parse::address_int` over the lines of a trace file
//! (the first `N` lines, default 1,000,000), in rounds; prints each round's ns per address.
//!
//! `cargo run --release -p ipfib --example parse_speed -- TRACE [N] [ROUNDS]`
use std::hint::black_box;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: parse_speed TRACE [N] [ROUNDS]");
    let n: usize = args.next().map_or(1_000_000, |a| a.parse().expect("N"));
    let rounds: usize = args.next().map_or(5, |a| a.parse().expect("ROUNDS"));
    let text = std::fs::read_to_string(&path).expect("trace");
    let lines: Vec<&str> = text.lines().filter(|l| !l.is_empty()).take(n).collect();
    for _ in 0..rounds {
        let t = Instant::now();
        let mut sum = 0u128;
        for l in &lines {
            match ipfib::parse::address_int(black_box(l)) {
                Some(ipfib::parse::Parsed::V6(a)) => sum = sum.wrapping_add(a),
                Some(ipfib::parse::Parsed::V4(a)) => sum = sum.wrapping_add(u128::from(a)),
                None => panic!("{l:?} is not an address"),
            }
        }
        black_box(sum);
        let ns = t.elapsed().as_nanos() as f64 / lines.len() as f64;
        println!("{ns:.1} ns per address ({} addresses)", lines.len());
    }
}
