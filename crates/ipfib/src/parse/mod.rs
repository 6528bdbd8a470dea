//! IP address text, parsed fast and exactly.
//!
//! Every reader of address text (table files, `ipfib lookup`'s input, the Python package's
//! string batches, the Polars plugin) spends much of its time turning text into an address, so
//! the forms that make up nearly all real input have one-pass parsers with no allocation:
//! dotted-quad IPv4 and hex-group IPv6 with at most one `::`. They accept exactly what
//! `std::net` accepts: IPv4 in full, and IPv6 by handing the forms the fast path declines (an
//! embedded IPv4 address, `::ffff:1.2.3.4`) to the standard parser. IPv6 text of 16 bytes and
//! more is parsed with byte shuffles where the CPU has AVX2 (`ipv6_x86`) or NEON
//! (`ipv6_neon`), and a character at a time elsewhere; each is checked against `std` on the
//! same cases.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
mod form;
#[cfg(target_arch = "aarch64")]
mod ipv6_neon;
#[cfg(target_arch = "x86_64")]
mod ipv6_x86;

/// A dotted-quad IPv4 address as its integer (`u32::from(Ipv4Addr)`), by the rules of
/// `Ipv4Addr::from_str`: four decimal octets of at most three digits, no leading zeros (which
/// some parsers read as octal), each at most 255. `None` for anything else.
#[inline]
pub fn ipv4(s: &[u8]) -> Option<u32> {
    if s.len() < 7 || s.len() > 15 {
        return None;
    }
    let mut addr: u32 = 0;
    let mut octet: u32 = 0;
    let mut digits = 0u32;
    let mut dots = 0u32;
    let mut leading_zero = false;
    for &b in s {
        match b {
            b'0'..=b'9' => {
                if leading_zero {
                    return None;
                }
                if digits == 0 && b == b'0' {
                    leading_zero = true;
                }
                octet = octet * 10 + u32::from(b - b'0');
                digits += 1;
                if digits > 3 || octet > 255 {
                    return None;
                }
            }
            b'.' => {
                if digits == 0 || dots == 3 {
                    return None;
                }
                addr = (addr << 8) | octet;
                octet = 0;
                digits = 0;
                dots += 1;
                leading_zero = false;
            }
            _ => return None,
        }
    }
    if dots != 3 || digits == 0 {
        return None;
    }
    Some((addr << 8) | octet)
}

/// Hex digit values by byte, [`NOT_HEX`] for every other byte. A table rather than a `match`:
/// random hex text mixes digits and letters unpredictably, and the branches of a `match`
/// mispredicted about every other character (a third of the time of a string batch).
static HEX: [u8; 256] = {
    let mut t = [NOT_HEX; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};
const NOT_HEX: u8 = 0xFF;

/// A hex digit's value.
#[inline]
fn hex(b: u8) -> Option<u32> {
    let v = HEX[usize::from(b)];
    (v != NOT_HEX).then_some(u32::from(v))
}

/// An IPv6 address of hex groups with at most one `::`, by the rules of `Ipv6Addr::from_str`
/// (1 to 4 digits a group, `::` standing for at least one zero group). `None` for anything
/// else, including the forms with an embedded IPv4 address (`::ffff:1.2.3.4`), which the
/// caller hands to the standard parser. A shuffle parser where one runs (AVX2 or NEON, 16
/// bytes and more), the bytewise one otherwise.
#[inline]
fn ipv6_fast(s: &[u8]) -> Option<u128> {
    #[cfg(target_arch = "x86_64")]
    if s.len() >= 16 {
        if let Some(avx2) = crate::cpu::Avx2::new() {
            return ipv6_x86::ipv6(s, avx2);
        }
    }
    #[cfg(target_arch = "aarch64")]
    if s.len() >= 16 {
        if let Some(neon) = crate::cpu::Neon::new() {
            return ipv6_neon::ipv6(s, neon);
        }
    }
    ipv6_bytewise(s)
}

/// [`ipv6_fast`] a character at a time (any CPU, and texts under 16 bytes).
#[inline]
fn ipv6_bytewise(s: &[u8]) -> Option<u128> {
    if s.len() < 2 || s.len() > 39 {
        return None;
    }
    let mut groups = [0u16; 8];
    let mut n = 0usize;
    let mut gap: Option<usize> = None;
    let mut i = 0usize;
    if s[0] == b':' {
        if s[1] != b':' {
            return None;
        }
        gap = Some(0);
        i = 2;
        if i == s.len() {
            return Some(0);
        }
    }
    loop {
        let start = i;
        let mut v = 0u32;
        while let Some(d) = s.get(i).and_then(|&b| hex(b)) {
            v = (v << 4) | d;
            i += 1;
            if i - start > 4 {
                return None;
            }
        }
        if i == start || n == 8 {
            return None;
        }
        groups[n] = v as u16;
        n += 1;
        if i == s.len() {
            break;
        }
        if s[i] != b':' {
            return None;
        }
        i += 1;
        if s.get(i) == Some(&b':') {
            if gap.is_some() {
                return None;
            }
            gap = Some(n);
            i += 1;
            if i == s.len() {
                break;
            }
        } else if i == s.len() {
            return None;
        }
    }
    match gap {
        None if n == 8 => {}
        Some(g) if n < 8 => {
            // Move the groups after the gap to the end; the gap is zeros.
            let tail = n - g;
            groups.copy_within(g..n, 8 - tail);
            groups[g..8 - tail].fill(0);
        }
        _ => return None,
    }
    Some(groups.iter().fold(0u128, |a, &g| (a << 16) | u128::from(g)))
}

/// An IPv6 address as its integer (`u128::from(Ipv6Addr)`), by the rules of
/// `Ipv6Addr::from_str`.
#[inline]
pub fn ipv6(s: &[u8]) -> Option<u128> {
    if let Some(a) = ipv6_fast(s) {
        return Some(a);
    }
    let s = std::str::from_utf8(s).ok()?;
    s.parse::<Ipv6Addr>().ok().map(u128::from)
}

/// An address of either family as its integer, for batch lookups that split the families into
/// separate arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parsed {
    /// An IPv4 address (`u32::from(Ipv4Addr)`).
    V4(u32),
    /// An IPv6 address (`u128::from(Ipv6Addr)`).
    V6(u128),
}

/// An address of either family as an integer, as `IpAddr::from_str` reads it: the fast
/// parsers first, the standard one for whatever they decline.
#[inline]
pub fn address_int(s: &str) -> Option<Parsed> {
    address_bytes(s.as_bytes())
}

/// [`address_int`] of text given as bytes (checked as UTF-8 only when the fast parsers
/// decline it: text from a buffer need not be made a `str` first).
#[inline]
pub fn address_bytes(b: &[u8]) -> Option<Parsed> {
    if let Some(v4) = ipv4(b) {
        return Some(Parsed::V4(v4));
    }
    if let Some(v6) = ipv6_fast(b) {
        return Some(Parsed::V6(v6));
    }
    match std::str::from_utf8(b).ok()?.parse::<IpAddr>().ok()? {
        IpAddr::V4(a) => Some(Parsed::V4(u32::from(a))),
        IpAddr::V6(a) => Some(Parsed::V6(u128::from(a))),
    }
}

/// An address of either family, as `IpAddr::from_str` reads it.
#[inline]
pub fn address(s: &str) -> Option<IpAddr> {
    Some(match address_int(s)? {
        Parsed::V4(a) => IpAddr::V4(Ipv4Addr::from(a)),
        Parsed::V6(a) => IpAddr::V6(Ipv6Addr::from(a)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_ipv4_agrees_with_std() {
        let cases = [
            "0.0.0.0",
            "255.255.255.255",
            "10.1.2.3",
            "192.168.001.1",
            "01.2.3.4",
            "1.2.3.04",
            "0.0.0.00",
            "256.1.1.1",
            "1.2.3",
            "1.2.3.4.5",
            "1..2.3",
            ".1.2.3",
            "1.2.3.",
            "1.2.3.4 ",
            " 1.2.3.4",
            "1.2.3.-4",
            "1.2.3.+4",
            "1234.1.1.1",
            "999.999.999.999",
            "1.2.3.4/8",
            "a.b.c.d",
            "",
        ];
        for s in cases {
            let std = s.parse::<Ipv4Addr>().ok().map(u32::from);
            let fast = ipv4(s.as_bytes());
            assert_eq!(fast, std, "{s:?}");
            assert_eq!(
                address(s).is_some(),
                std.is_some() || s.parse::<IpAddr>().is_ok()
            );
        }
        // Exhaustive over a grid of octets, to catch carry and digit-count mistakes.
        for a in [0u32, 1, 9, 10, 99, 100, 199, 200, 249, 250, 255] {
            for b in [0u32, 7, 10, 100, 255] {
                let s = format!("{a}.{b}.{a}.{b}");
                let std = u32::from(s.parse::<Ipv4Addr>().unwrap());
                assert_eq!(ipv4(s.as_bytes()), Some(std), "{s}");
            }
        }
    }

    #[test]
    fn ipv4_parser_agrees_with_std_on_edge_cases() {
        let cases = [
            "0.0.0.0",
            "255.255.255.255",
            "1.2.3.4",
            "10.0.0.0",
            "256.0.0.0",
            "1.2.3",
            "1.2.3.4.",
            "1.2.3.4.5",
            ".1.2.3",
            "01.2.3.4",
            "1.02.3.4",
            "0.0.0.00",
            "1..2.3",
            "",
            "1.2.3.-4",
            "1.2.3.4 ",
            "1234.1.1.1",
            "1.2.3.0004",
            "a.b.c.d",
            "1.2.3.4a",
            "199.199.199.199",
            "300.1.1.1",
            "1.2.3.25x",
            "1.2.3.255",
            "1.2.3.2555",
        ];
        for case in cases {
            let std = case.parse::<Ipv4Addr>().ok().map(u32::from);
            assert_eq!(ipv4(case.as_bytes()), std, "{case:?}");
        }
    }

    /// A small deterministic generator, so the test needs no dependency.
    fn next(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    /// `a` written as people and programs write addresses: each group with 0 to 3 leading
    /// zeros (within 4 digits), letters in either case, and one run of zero groups (or, at
    /// times, a run that is not all zeros) left out as `::` at random.
    fn written(a: u128, st: &mut u64) -> String {
        let groups: Vec<u16> = (0..8).rev().map(|i| (a >> (16 * i)) as u16).collect();
        let text: Vec<String> = groups
            .iter()
            .map(|&g| {
                let digits = format!("{g:x}").len();
                let width = digits + (next(st) as usize) % (5 - digits);
                let t = format!("{g:0width$x}");
                if next(st).is_multiple_of(2) {
                    t.to_uppercase()
                } else {
                    t
                }
            })
            .collect();
        let from = (next(st) % 9) as usize;
        let to = from + (next(st) as usize) % (9 - from);
        if to > from && !next(st).is_multiple_of(4) {
            format!("{}::{}", text[..from].join(":"), text[to..].join(":"))
        } else {
            text.join(":")
        }
    }

    #[test]
    fn fast_ipv6_agrees_with_std() {
        let fixed = [
            "::",
            "::1",
            "1::",
            "1::2",
            "::ffff:1.2.3.4",
            "1:2:3:4:5:6:7:8",
            "1:2:3:4:5:6:7::",
            "::2:3:4:5:6:7:8",
            "1:2:3:4:5:6:7::8",
            "1:2:3:4:5:6::8",
            "1::2::3",
            ":1::",
            "1:::2",
            "1:2",
            "12345::",
            "fFfF::",
            "0000:0000::",
            "1:2:3:4:5:6:7:8:9",
            ":",
            ":::",
            "1:",
            ":1",
            "g::",
            "1::2:",
            "2001:db8::/32",
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        ];
        let mut cases: Vec<String> = fixed.iter().map(|s| s.to_string()).collect();
        let mut st = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..20_000 {
            // Random addresses with runs of zero groups, written by std (compressed), then in
            // full with leading zeros and upper case, then mutated.
            let mut a = 0u128;
            for _ in 0..8 {
                let g = match next(&mut st) % 4 {
                    0 | 1 => 0,
                    2 => next(&mut st) % 16,
                    _ => next(&mut st) % 65536,
                };
                a = (a << 16) | u128::from(g);
            }
            let std = Ipv6Addr::from(a);
            cases.push(std.to_string());
            cases.push(
                std.segments()
                    .iter()
                    .map(|g| format!("{g:04X}"))
                    .collect::<Vec<_>>()
                    .join(":"),
            );
            let mut m = std.to_string().into_bytes();
            let at = (next(&mut st) as usize) % m.len();
            m[at] = b":0a.Gf"[(next(&mut st) % 6) as usize];
            cases.push(String::from_utf8(m).unwrap());
            let written = written(a, &mut st);
            let mut m = written.clone().into_bytes();
            cases.push(written);
            let at = (next(&mut st) as usize) % m.len();
            m[at] = b":0a.Gf"[(next(&mut st) % 6) as usize];
            if next(&mut st).is_multiple_of(2) {
                m.insert(at, b"0:"[(next(&mut st) % 2) as usize]);
            }
            cases.push(String::from_utf8(m).unwrap());
        }
        for s in &cases {
            let want = s.parse::<Ipv6Addr>().ok().map(u128::from);
            let fast = ipv6_fast(s.as_bytes());
            assert_eq!(fast, ipv6_bytewise(s.as_bytes()), "{s:?}");
            assert!(
                fast.is_none() || fast == want,
                "{s:?}: {fast:?} vs {want:?}"
            );
            let any = address(s).map(|a| a.to_string());
            assert_eq!(
                any,
                s.parse::<IpAddr>().ok().map(|a| a.to_string()),
                "{s:?}"
            );
        }
        // The common forms do take the fast path.
        for s in [
            "2001:db8::1",
            "::",
            "fe80::1:2",
            "1:2:3:4:5:6:7:8",
            "2a00:1450:4001:80b::200e",
        ] {
            assert!(ipv6_fast(s.as_bytes()).is_some(), "{s}");
        }
        // ipv6 is exact on every case, fast path or not.
        for s in &cases {
            let want = s.parse::<Ipv6Addr>().ok().map(u128::from);
            assert_eq!(ipv6(s.as_bytes()), want, "{s:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn ipv6_parser_agrees_with_std(s in "[0-9a-fA-F:.]{0,41}") {
            let std = s.parse::<Ipv6Addr>().ok().map(u128::from);
            proptest::prop_assert_eq!(ipv6(s.as_bytes()), std);
            let any = s.parse::<IpAddr>().ok();
            proptest::prop_assert_eq!(address(&s), any);
        }

        #[test]
        fn ipv6_parser_agrees_with_std_on_written_addresses(a: u128, seed: u64) {
            let s = written(a, &mut (seed | 1));
            let std = s.parse::<Ipv6Addr>().ok().map(u128::from);
            proptest::prop_assert_eq!(ipv6(s.as_bytes()), std);
            proptest::prop_assert_eq!(ipv6_bytewise(s.as_bytes()), std);
        }

        #[test]
        fn ipv4_parser_agrees_with_std(s in "[0-9.]{0,17}") {
            let std = s.parse::<std::net::Ipv4Addr>().ok().map(u32::from);
            proptest::prop_assert_eq!(ipv4(s.as_bytes()), std);
        }

        #[test]
        fn ipv4_parser_agrees_with_std_on_addresses(a: [u8; 4], pad in 0usize..3) {
            let zeros = "0".repeat(pad);
            let s = format!("{}.{}.{}.{zeros}{}", a[0], a[1], a[2], a[3]);
            let std = s.parse::<std::net::Ipv4Addr>().ok().map(u32::from);
            proptest::prop_assert_eq!(ipv4(s.as_bytes()), std);
        }
    }
}
