//! Opening a saved table (read into memory, the default, or mapped) against building it from
//! its text file (BENCHMARKS.md, "Saved tables"): the median of several runs of each, the
//! saved file in the page cache.
//!
//! `cargo run --release -p ipfib --example open_vs_build -- TABLE.txt.gz [RUNS]`

use std::time::{Duration, Instant};

use ipfib::Fib;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: open_vs_build TABLE [RUNS]");
    let runs: usize = args.next().map_or(7, |r| r.parse().expect("RUNS"));
    let options = ipfib_io::LoadOptions::default();
    let saved = std::env::temp_dir().join(format!("open_vs_build-{}.ipfib", std::process::id()));

    let mut parse = Vec::new();
    let mut build = Vec::new();
    let mut fib = None;
    for _ in 0..runs {
        let t = Instant::now();
        let table = ipfib_io::load_fib(path.as_ref(), &options).expect("load");
        parse.push(t.elapsed());
        let t = Instant::now();
        fib = Some(Fib::build(&table, "planb").expect("build"));
        build.push(t.elapsed());
    }
    let fib = fib.expect("runs >= 1");
    fib.save(&saved).expect("save");
    let bytes = std::fs::metadata(&saved).expect("saved").len();

    let mut open = Vec::new();
    let mut mapped = Vec::new();
    let mut copy = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let f = Fib::open(&saved).expect("open");
        open.push(t.elapsed());
        assert!(!f.is_mapped());
        let t = Instant::now();
        // SAFETY: this process alone writes the temporary file, and not while it is mapped.
        let f = unsafe { Fib::open_mapped(&saved) }.expect("open mapped");
        mapped.push(t.elapsed());
        assert!(f.is_mapped());
        let t = Instant::now();
        let b = std::fs::read(&saved).expect("read");
        Fib::from_bytes(&b).expect("from_bytes");
        copy.push(t.elapsed());
    }
    std::fs::remove_file(&saved).ok();
    let (parse, build, open, copy) = (median(parse), median(build), median(open), median(copy));
    let mapped = median(mapped);
    let text = parse + build;
    println!("{path}: saved file {:.1} MiB", bytes as f64 / 1048576.0);
    println!("  load text + build : {text:>10.2?}  (parse {parse:.2?}, build {build:.2?})");
    println!(
        "  open saved (read) : {open:>10.2?}  ({:.3} of load + build, {:.3} of build alone)",
        open.as_secs_f64() / text.as_secs_f64(),
        open.as_secs_f64() / build.as_secs_f64()
    );
    println!(
        "  open saved, mapped: {mapped:>10.2?}  (read / mapped = {:.2})",
        open.as_secs_f64() / mapped.as_secs_f64()
    );
    println!("  fs::read + from_bytes: {copy:>7.2?}");
}
