//! Address and prefix text, parsed fast.
//!
//! Per-call lookups and string batches spend most of their time turning text into an address,
//! so dotted-quad IPv4 (by far the commonest input) has its own parser that does one pass over
//! the bytes with no allocation; everything else goes to the standard library's parsers. Both
//! accept exactly what `std::net` accepts: the fast path is only a shortcut, so a string it
//! declines is handed on, never rejected by it.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::IpNet;

/// A dotted-quad IPv4 address with the rules of `Ipv4Addr::from_str`: four decimal octets of
/// at most three digits, no leading zeros, each at most 255. `None` for anything else
/// (including text `std` would reject).
#[inline]
pub fn ipv4_fast(s: &[u8]) -> Option<u32> {
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

/// An address of either family, as `IpAddr::from_str` reads it.
#[inline]
pub fn address(s: &str) -> Option<IpAddr> {
    if let Some(v4) = ipv4_fast(s.as_bytes()) {
        return Some(IpAddr::V4(Ipv4Addr::from(v4)));
    }
    if s.as_bytes().contains(&b':') {
        return s.parse::<Ipv6Addr>().ok().map(IpAddr::V6);
    }
    s.parse().ok()
}

/// An address as text: either family's integer form, for batch lookups that split the
/// families into separate arrays.
pub enum Parsed {
    /// An IPv4 address (`u32::from(Ipv4Addr)`).
    V4(u32),
    /// An IPv6 address (`u128::from(Ipv6Addr)`).
    V6(u128),
}

/// [`address`] as the integer the batch lookups take.
#[inline]
pub fn address_int(s: &str) -> Option<Parsed> {
    if let Some(v4) = ipv4_fast(s.as_bytes()) {
        return Some(Parsed::V4(v4));
    }
    match address(s)? {
        IpAddr::V4(a) => Some(Parsed::V4(u32::from(a))),
        IpAddr::V6(a) => Some(Parsed::V6(u128::from(a))),
    }
}

/// What a key string names: an address, or a prefix (`addr/len`, host bits possibly set; the
/// caller decides whether that is an error).
pub enum Text {
    /// A single address.
    Addr(IpAddr),
    /// A prefix as written.
    Net(IpNet),
}

/// A key string: `addr` or `addr/len`. `None` when it is neither.
#[inline]
pub fn key(s: &str) -> Option<Text> {
    match s.split_once('/') {
        None => address(s).map(Text::Addr),
        Some((addr, len)) => {
            let addr = address(addr)?;
            // Decimal digits only: `u8::from_str` would also take a leading `+`.
            if len.is_empty() || len.len() > 3 || !len.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let len: u8 = len.parse().ok()?;
            IpNet::new(addr, len).ok().map(Text::Net)
        }
    }
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
            let fast = ipv4_fast(s.as_bytes());
            // The fast path may decline what std accepts, never the reverse, never disagree.
            assert!(fast.is_none() || fast == std, "{s:?}: {fast:?} vs {std:?}");
            assert_eq!(address(s).is_some(), std.is_some() || s.parse::<IpAddr>().is_ok());
        }
        // Exhaustive over a grid of octets, to catch carry and digit-count mistakes.
        for a in [0u32, 1, 9, 10, 99, 100, 199, 200, 249, 250, 255] {
            for b in [0u32, 7, 10, 100, 255] {
                let s = format!("{a}.{b}.{a}.{b}");
                let std = u32::from(s.parse::<Ipv4Addr>().unwrap());
                assert_eq!(ipv4_fast(s.as_bytes()), Some(std), "{s}");
            }
        }
    }

    #[test]
    fn keys_are_addresses_or_prefixes() {
        assert!(matches!(key("10.0.0.0/8"), Some(Text::Net(_))));
        assert!(matches!(key("10.0.0.1/8"), Some(Text::Net(_))), "host bits: caller's call");
        assert!(matches!(key("2001:db8::/32"), Some(Text::Net(_))));
        assert!(matches!(key("::ffff:1.2.3.4"), Some(Text::Addr(IpAddr::V6(_)))));
        assert!(matches!(key("10.1.2.3"), Some(Text::Addr(IpAddr::V4(_)))));
        for bad in [
            "10.0.0.0/33",
            "10.0.0.0/",
            "10.0.0.0/+8",
            "10.0.0.0/8/8",
            "::/129",
            "x",
            "",
            "/8",
            "10.0.0.0/0008",
        ] {
            assert!(key(bad).is_none(), "{bad:?}");
        }
    }
}
