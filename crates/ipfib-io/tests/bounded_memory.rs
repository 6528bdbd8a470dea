//! Memory grows with the table, not with the input: the peak of live heap bytes while reading
//! hostile text (a 200 MB line, millions of copies of one route, a gzip bomb of NUL bytes) stays
//! at a few MiB. A counting allocator measures it; the tests in this file take turns, so one
//! test's allocations never count against another's.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{self, BufReader, Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use ipfib_io::text::read_fib_from;
use ipfib_io::{load_fib_from, LoadOptions};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

static TURN: Mutex<()> = Mutex::new(());

/// Runs `f` and returns its result and the peak of heap bytes it added.
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let out = f();
    (out, PEAK.load(Ordering::Relaxed).saturating_sub(base))
}

const MIB: usize = 1 << 20;

/// `total` bytes made by repeating `pattern`, produced as they are read (never held whole).
struct Repeat {
    pattern: Vec<u8>,
    at: usize,
    left: u64,
}

impl Repeat {
    fn new(pattern: &[u8], total: u64) -> Self {
        Repeat {
            pattern: pattern.to_vec(),
            at: 0,
            left: total,
        }
    }
}

impl Read for Repeat {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = (buf.len() as u64).min(self.left) as usize;
        for b in &mut buf[..n] {
            *b = self.pattern[self.at];
            self.at = (self.at + 1) % self.pattern.len();
        }
        self.left -= n as u64;
        Ok(n)
    }
}

#[test]
fn a_200_mb_line_costs_no_more_than_a_short_one() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    for pattern in [&b"1"[..], b"10.0.0.0/8 1 ", b"\x00"] {
        let input = BufReader::with_capacity(256 * 1024, Repeat::new(pattern, 200 << 20));
        let (result, peak) = peak_of(|| read_fib_from(input, Path::new("long.txt")));
        let msg = result.unwrap_err().to_string();
        assert!(msg.starts_with("long.txt:1: line too long"), "{msg}");
        assert!(peak < 2 * MIB, "peak {peak} bytes for a 200 MB line");
    }
}

#[test]
fn millions_of_copies_of_one_route_are_held_once() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    // 20 M lines (about 300 MB of text): before, every line was kept until the end (~240 MB).
    let line = b"192.0.2.0/24 7\n";
    let input = BufReader::new(Repeat::new(line, 20_000_000 * line.len() as u64));
    let (fib, peak) = peak_of(|| read_fib_from(input, Path::new("dups.txt")).unwrap());
    assert_eq!(fib.len(), 1);
    assert!(peak < 4 * MIB, "peak {peak} bytes");

    // Two routes alternating, and 1000 routes cycled: never adjacent repeats.
    for pattern in [
        b"192.0.2.0/24 7\n2001:db8::/32 8\n".to_vec(),
        (0..1000)
            .flat_map(|i| format!("10.{}.{}.0/24 {i}\n", i % 256, i / 256).into_bytes())
            .collect(),
    ] {
        let whole = (100 * MIB / pattern.len() * pattern.len()) as u64;
        let input = BufReader::new(Repeat::new(&pattern, whole));
        let (fib, peak) = peak_of(|| read_fib_from(input, Path::new("dups.txt")).unwrap());
        assert!(fib.len() <= 1000);
        assert!(peak < 8 * MIB, "peak {peak} bytes for {} routes", fib.len());
    }
}

#[test]
fn a_gzip_bomb_of_nul_bytes_stops_at_the_first_line() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![0u8; MIB];
    for _ in 0..256 {
        e.write_all(&zeros).unwrap();
    }
    let gz = e.finish().unwrap();
    let start = std::time::Instant::now();
    let (result, peak) = peak_of(|| {
        load_fib_from(
            io::Cursor::new(gz),
            Path::new("bomb.gz"),
            &LoadOptions::default(),
        )
    });
    let msg = result.unwrap_err().to_string();
    assert!(
        msg.contains("line too long") && msg.contains("binary"),
        "{msg}"
    );
    assert!(msg.len() < 300, "{msg}");
    // The decompressor's and reader's buffers (and the compressed input's copy), nothing more.
    assert!(peak < 8 * MIB, "peak {peak} bytes");
    assert!(start.elapsed().as_secs() < 2, "took {:?}", start.elapsed());
}

#[test]
fn a_saved_table_with_a_gzip_bomb_behind_it_is_read_no_further_than_its_header_says() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let mut table = ipfib::Table::new();
    table.insert("10.0.0.0/8".parse().unwrap(), 1).unwrap();
    let fib = ipfib::Fib::build(&table, "planb").unwrap();
    let mut saved = Vec::new();
    fib.write_to(&mut saved).unwrap();
    // The saved table, then 256 MiB of NUL bytes, gzip-compressed (about 250 KB).
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(&saved).unwrap();
    let zeros = vec![0u8; MIB];
    for _ in 0..256 {
        e.write_all(&zeros).unwrap();
    }
    let gz = e.finish().unwrap();
    let (result, peak) = peak_of(|| {
        load_fib_from(
            io::Cursor::new(gz),
            Path::new("bomb.ipfib.gz"),
            &LoadOptions::default(),
        )
    });
    let msg = result.unwrap_err().to_string();
    assert!(
        msg.contains("bomb.ipfib.gz") && msg.contains("body bytes"),
        "{msg}"
    );
    // The table, its copy and the decompressor's buffers: a few times the saved size.
    assert!(
        peak < 4 * saved.len() + 8 * MIB,
        "peak {peak} bytes for a {} byte saved table",
        saved.len()
    );
}
