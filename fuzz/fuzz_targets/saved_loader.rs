//! The saved-table loader on damaged files whose checksum is made right again, so that the
//! checks behind the checksum (header, section table, route list, PlanB's validator) are what
//! is exercised: every input must load or fail with an error, never panic, and a table that
//! loads must answer lookups (single and batched) without a panic or an out-of-bounds read
//! (the address sanitizer watches the walk's unchecked accesses).
//!
//! Input: a flag byte, then edits of 5 bytes each (a 4-byte little-endian offset into a small
//! valid saved table, modulo its length, and the byte to store). Flag bit 0 set: the input
//! after the flag byte is the whole file instead. Flag bit 1 clear: the body checksum is
//! recomputed after the edits. Flag bit 2 set: the edits damage a second table, which also
//! routes 2001::/16, so that on CPUs with AVX-512 that chunk gets a sub-table and the file
//! holds PlanB's saved choice of sub-tables (`SPLITS`).

#![no_main]

use std::sync::OnceLock;

use ipfib::{Fib, Table};
use libfuzzer_sys::fuzz_target;

/// A small dual-stack table with nesting, a fallback cell and several tree levels; with
/// `split`, also 2001::/16 (a chunk most of which one route answers: a sub-table's case).
fn saved(split: bool) -> &'static [u8] {
    static SAVED: [OnceLock<Vec<u8>>; 2] = [OnceLock::new(), OnceLock::new()];
    SAVED[usize::from(split)].get_or_init(|| {
        let mut t = Table::new();
        for (i, net) in [
            "0.0.0.0/0",
            "10.0.0.0/8",
            "10.1.2.0/24",
            "2001:db8::/32",
            "2001:db8:1:5::/64",
        ]
        .iter()
        .enumerate()
        {
            t.insert(net.parse().unwrap(), i as u32).unwrap();
        }
        for i in 0..300u32 {
            let net = format!("2001:db9:{i:x}::/48");
            t.insert(net.parse().unwrap(), 10 + i).unwrap();
            t.insert(format!("10.2.{}.0/24", i % 256).parse().unwrap(), 1000 + i)
                .unwrap();
        }
        if split {
            t.insert("2001::/16".parse().unwrap(), 5).unwrap();
        }
        let mut out = Vec::new();
        Fib::build(&t, "planb").unwrap().write_to(&mut out).unwrap();
        out
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&flag, rest)) = data.split_first() else {
        return;
    };
    let mut bytes = if flag & 1 != 0 {
        rest.to_vec()
    } else {
        let mut b = saved(flag & 4 != 0).to_vec();
        for edit in rest.chunks_exact(5) {
            let at = u32::from_le_bytes([edit[0], edit[1], edit[2], edit[3]]) as usize % b.len();
            b[at] = edit[4];
        }
        b
    };
    if flag & 2 == 0 && bytes.len() >= 64 {
        let crc = u64::from(crc32fast::hash(&bytes[64..]));
        bytes[48..56].copy_from_slice(&crc.to_ne_bytes());
    }
    let Ok(fib) = Fib::from_bytes(&bytes) else {
        return;
    };
    let v4: Vec<u32> = (0..64u32)
        .map(|i| i.wrapping_mul(0x0402_0301) ^ 0x0a02_0000)
        .collect();
    let v6: Vec<u128> = (0..64u128)
        .map(|i| (0x2001_0db9u128 << 96) ^ (i << 80) ^ (i << 60) ^ i)
        .collect();
    let (mut o4, mut o6) = (vec![0; v4.len()], vec![0; v6.len()]);
    fib.lookup_v4_batch(&v4, &mut o4, u32::MAX).unwrap();
    fib.lookup_v6_batch(&v6, &mut o6, u32::MAX).unwrap();
    for (&a, &o) in v4.iter().zip(&o4) {
        assert_eq!(fib.v4().lookup(a).unwrap_or(u32::MAX), o);
    }
    for (&a, &o) in v6.iter().zip(&o6) {
        assert_eq!(fib.v6().lookup(a).unwrap_or(u32::MAX), o);
        let _ = fib.lookup_prefix(std::net::IpAddr::from(std::net::Ipv6Addr::from(a)));
    }
});
