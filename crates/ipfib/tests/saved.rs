//! Saved tables: round trips on every real table (mapped and copied), and damaged files that
//! must load and agree or fail with an error, never panic. (Not built with `--cfg
//! ipfib_portable`, which has no file readers: see Cargo.toml.)
#![cfg(not(ipfib_portable))]

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use ipfib::{Address, Fib, OpenError, Prefix, SaveError, Table};
use rand::{Rng, SeedableRng};

/// First, last and a random address of every prefix, and random addresses.
fn probes<A: Address>(fib: &Fib, v4: bool, rng: &mut impl Rng) -> Vec<A> {
    let table = fib.table();
    let mut out: Vec<A> = Vec::new();
    let add = |out: &mut Vec<A>, first: u128, last: u128| {
        out.push(A::from_u128_left(first));
        out.push(A::from_u128_left(last));
    };
    if v4 {
        for (p, _) in table.v4().iter() {
            add(&mut out, p.first().to_u128_left(), p.last().to_u128_left());
        }
    } else {
        for (p, _) in table.v6().iter() {
            add(&mut out, p.first().to_u128_left(), p.last().to_u128_left());
        }
    }
    out.extend((0..20_000).map(|_| A::from_u128_left(rng.gen())));
    out
}

/// Every answer of `got` equals `want`'s: batched per family and, on a sample, single lookups
/// and the matched route.
fn assert_same(want: &Fib, got: &Fib, what: &str) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let a4: Vec<u32> = probes(want, true, &mut rng);
    let a6: Vec<u128> = probes(want, false, &mut rng);
    let (mut w, mut g) = (vec![0; a4.len()], vec![0; a4.len()]);
    want.lookup_v4_batch(&a4, &mut w, u32::MAX).unwrap();
    got.lookup_v4_batch(&a4, &mut g, u32::MAX).unwrap();
    assert!(w == g, "{what}: IPv4 answers differ");
    let (mut w, mut g) = (vec![0; a6.len()], vec![0; a6.len()]);
    want.lookup_v6_batch(&a6, &mut w, u32::MAX).unwrap();
    got.lookup_v6_batch(&a6, &mut g, u32::MAX).unwrap();
    assert!(w == g, "{what}: IPv6 answers differ");
    let sample = a4
        .iter()
        .step_by(97)
        .map(|&a| IpAddr::from(std::net::Ipv4Addr::from(a)))
        .chain(
            a6.iter()
                .step_by(97)
                .map(|&a| IpAddr::from(std::net::Ipv6Addr::from(a))),
        );
    for addr in sample {
        assert_eq!(want.lookup(addr), got.lookup(addr), "{what}: {addr}");
        assert_eq!(
            want.lookup_prefix(addr),
            got.lookup_prefix(addr),
            "{what}: {addr}"
        );
    }
}

fn real_tables() -> Vec<PathBuf> {
    let Some(dir) = ipfib_testdata::shared_data() else {
        return Vec::new();
    };
    let mut files = Vec::new();
    for family in ["ipv4", "ipv6"] {
        for e in std::fs::read_dir(dir.join(family)).unwrap() {
            let p = e.unwrap().path();
            if p.to_string_lossy().ends_with(".txt.gz") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

fn load(path: &Path) -> Table {
    ipfib_io::load_fib(path, &ipfib_io::LoadOptions::default()).unwrap()
}

#[test]
fn every_real_table_round_trips_mapped_and_copied() {
    let dir = tempfile::tempdir().unwrap();
    for path in real_tables() {
        let table = load(&path);
        let fib = Fib::build(&table, "planb").unwrap();
        let saved = dir.path().join("t.ipfib");
        fib.save(&saved).unwrap();
        // SAFETY: this test alone writes the temporary file, and not while it is mapped.
        let mapped = unsafe { Fib::open_mapped(&saved) }.unwrap();
        assert!(mapped.is_mapped());
        let name = path.display().to_string();
        assert_same(&fib, &mapped, &format!("{name} mapped"));
        let read = Fib::open(&saved).unwrap();
        assert!(!read.is_mapped());
        assert_same(&fib, &read, &format!("{name} read"));
        let bytes = std::fs::read(&saved).unwrap();
        let copied = Fib::from_bytes(&bytes).unwrap();
        assert!(!copied.is_mapped());
        assert_same(&fib, &copied, &format!("{name} copied"));
        assert_eq!(mapped.table(), table, "{name}: the routes come back");
        mapped.v4().validate().unwrap();
        mapped.v6().validate().unwrap();
        assert_eq!(mapped.memory_bytes(), fib.memory_bytes());
        let mut written = Vec::new();
        fib.write_to(&mut written).unwrap();
        assert_eq!(
            written, bytes,
            "{name}: save and write_to write the same bytes"
        );
    }
}

/// A small dual-stack table: nested prefixes, a fallback cell (a /64), a default route.
fn small_fib() -> Fib {
    let mut t = Table::new();
    for (i, net) in [
        "0.0.0.0/0",
        "10.0.0.0/8",
        "10.1.0.0/16",
        "10.1.2.0/24",
        "192.0.2.0/24",
        "255.255.255.255/32",
        "2001:db8::/32",
        "2001:db8:1::/48",
        "2001:db8:1:5::/64",
        "2001:db8:1:5::1/128",
        "2a00::/12",
    ]
    .iter()
    .enumerate()
    {
        t.insert(net.parse().unwrap(), i as u32 + 1).unwrap();
    }
    for i in 0..300u32 {
        let p = Prefix::new(0x2001_0db9_0000u128 << 80 | u128::from(i) << 80, 48).unwrap();
        t.insert(ipnet::IpNet::V6(p.to_net()), 100 + i).unwrap();
    }
    Fib::build(&t, "planb").unwrap()
}

/// Saves to one path from several threads at once: every save succeeds (each writes its own
/// temporary file), the file left is a whole table, and no temporary file is left behind.
#[test]
fn concurrent_saves_to_one_path_leave_a_whole_table() {
    let fib = small_fib();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.ipfib");
    for _ in 0..5 {
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| fib.save(&path).unwrap());
            }
        });
        let opened = Fib::open(&path).unwrap();
        assert_same(&fib, &opened, "after concurrent saves");
    }
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["t.ipfib"], "only the saved table remains");
    // A missing directory is the operating system's own error (Python maps its number to
    // FileNotFoundError), naming the path asked for.
    let missing = dir.path().join("no/such/t.ipfib");
    match fib.save(&missing) {
        Err(SaveError::Io { path, source }) => {
            assert_eq!(path, missing);
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound, "{source}");
            assert!(source.raw_os_error().is_some(), "{source:?}");
        }
        other => panic!("saving into a missing directory: {other:?}"),
    }
}

fn saved_bytes(fib: &Fib) -> Vec<u8> {
    let mut b = Vec::new();
    fib.write_to(&mut b).unwrap();
    b
}

/// Every single-byte change of a small saved table loads and agrees, or fails with an error
/// (the body checksum catches every change of one byte in the body; header fields are checked
/// one by one).
#[test]
fn every_single_byte_change_is_refused_or_harmless() {
    let fib = small_fib();
    let good = saved_bytes(&fib);
    let chunk = good.len().div_ceil(
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
    );
    std::thread::scope(|s| {
        for c in 0..good.len().div_ceil(chunk) {
            let (good, fib) = (&good, &fib);
            s.spawn(move || {
                let mut bytes = good.clone();
                for i in c * chunk..((c + 1) * chunk).min(good.len()) {
                    let was = bytes[i];
                    bytes[i] = was ^ (1 << (i % 8)) ^ (c as u8 & 0x80);
                    if let Ok(opened) = Fib::from_bytes(&bytes) {
                        assert_same(fib, &opened, &format!("byte {i} changed"));
                    }
                    bytes[i] = was;
                }
            });
        }
    });
}

#[test]
fn every_truncation_is_an_error() {
    let good = saved_bytes(&small_fib());
    for len in 0..good.len() {
        match Fib::from_bytes(&good[..len]) {
            Err(OpenError::NotSaved | OpenError::Truncated { .. }) => {}
            Err(e) => panic!("truncated to {len}: unexpected error {e}"),
            Ok(_) => panic!("truncated to {len}: loaded"),
        }
    }
    let mut longer = good.clone();
    longer.push(0);
    assert!(Fib::from_bytes(&longer).is_err(), "an extra byte");
}

#[test]
fn random_damage_to_a_large_table_is_refused() {
    let Some(path) = ipfib_testdata::shared_file("ipv6/ipv6-ris-dfz10-20241220.txt.gz") else {
        return;
    };
    let fib = Fib::build(&load(&path), "planb").unwrap();
    let good = saved_bytes(&fib);
    let mut rng = rand::rngs::StdRng::seed_from_u64(10);
    for round in 0..40 {
        let mut bytes = good.clone();
        for _ in 0..rng.gen_range(1..50) {
            let i = rng.gen_range(0..bytes.len());
            bytes[i] = rng.gen();
        }
        if let Ok(opened) = Fib::from_bytes(&bytes) {
            assert_same(&fib, &opened, &format!("round {round}"));
        }
    }
}

#[test]
fn errors_name_what_is_wrong() {
    let good = saved_bytes(&small_fib());
    let err = |b: &[u8]| Fib::from_bytes(b).unwrap_err();
    assert!(matches!(err(b"10.0.0.0/8 1\n"), OpenError::NotSaved));
    let mut b = good.clone();
    b[8] = 9;
    assert!(matches!(err(&b), OpenError::Version { found: 9, .. }));
    let mut b = good.clone();
    b[12..16].reverse();
    assert!(matches!(err(&b), OpenError::ByteOrder));
    let mut b = good.clone();
    let last = b.len() - 1;
    b[last] ^= 1;
    assert!(matches!(err(&b), OpenError::Checksum { .. }));
    let missing = Fib::open("/nonexistent/t.ipfib").unwrap_err();
    assert!(matches!(missing, OpenError::Io { .. }));
    assert!(missing.to_string().contains("/nonexistent/t.ipfib"));

    let reference = Fib::build(&small_fib().table(), "reference").unwrap();
    assert!(matches!(
        reference.write_to(&mut Vec::new()),
        Err(SaveError::Unsupported {
            engine: "reference"
        })
    ));
}

/// `Fib::open` reads the file into memory: truncating the file and writing other bytes into
/// it afterwards changes no answer (a mapped table would die with SIGBUS on its first lookup
/// of a lost page).
#[test]
fn an_opened_table_survives_its_file_truncated_and_overwritten() {
    let fib = small_fib();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.ipfib");
    fib.save(&path).unwrap();
    let opened = Fib::open(&path).unwrap();
    assert!(!opened.is_mapped());
    let len = std::fs::metadata(&path).unwrap().len();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(0).unwrap();
    file.set_len(len).unwrap(); // zeros where the table was, written in place
    drop(file);
    assert_same(&fib, &opened, "after the file was truncated and zeroed");
}

/// A reader that hands out at most `chunk` bytes per read, like a pipe.
struct Pipe<'a>(&'a [u8], usize);

impl std::io::Read for Pipe<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.len().min(buf.len()).min(self.1);
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

/// `Fib::read_from` takes the header, then exactly the length it declares, from any stream:
/// short reads are fine, a stream that ends early or goes on after the table is refused.
#[test]
fn read_from_takes_exactly_the_declared_length_from_a_stream() {
    let fib = small_fib();
    let bytes = saved_bytes(&fib);
    for chunk in [1, 7, 64, 4096, usize::MAX] {
        let read = Fib::read_from(Pipe(&bytes, chunk)).unwrap();
        assert_same(&fib, &read, &format!("read in chunks of {chunk}"));
    }
    let short = Fib::read_from(Pipe(&bytes[..bytes.len() - 1], 4096)).unwrap_err();
    assert!(matches!(short, OpenError::Truncated { .. }), "{short}");
    let mut long = bytes.clone();
    long.push(0);
    let long = Fib::read_from(Pipe(&long, 4096)).unwrap_err();
    assert!(long.to_string().contains("goes on after"), "{long}");
    let header_only = Fib::read_from(Pipe(&bytes[..10], 4096)).unwrap_err();
    assert!(
        matches!(header_only, OpenError::Truncated { .. }),
        "{header_only}"
    );
    // A header that declares more than the process can allocate is an error, not an abort.
    let mut huge = bytes[..64].to_vec();
    huge[40..48].copy_from_slice(&(u64::MAX / 2).to_ne_bytes());
    let huge = Fib::read_from(Pipe(&huge, 4096)).unwrap_err();
    assert!(huge.to_string().contains("allocate"), "{huge}");
}

/// `Fib::save` to a symlink (a chain of two, relative) replaces the file at its end and
/// leaves the links as they were.
#[test]
fn save_writes_through_symlinks() {
    let fib = small_fib();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("real")).unwrap();
    let target = dir.path().join("real/t.ipfib");
    std::fs::write(&target, b"old").unwrap();
    let link1 = dir.path().join("link1");
    let link2 = dir.path().join("link2");
    std::os::unix::fs::symlink("real/t.ipfib", &link1).unwrap();
    std::os::unix::fs::symlink("link1", &link2).unwrap();
    fib.save(&link2).unwrap();
    for link in [&link1, &link2] {
        assert!(std::fs::symlink_metadata(link)
            .unwrap()
            .file_type()
            .is_symlink());
    }
    assert_same(&fib, &Fib::open(&target).unwrap(), "through the links");
    assert_eq!(
        ipfib::saved::write_target(&link2).unwrap(),
        dir.path()
            .join("link1")
            .parent()
            .unwrap()
            .join("real/t.ipfib")
    );
    let looped = dir.path().join("loop");
    std::os::unix::fs::symlink("loop", &looped).unwrap();
    assert!(fib.save(&looped).is_err(), "a loop of links is an error");
}
