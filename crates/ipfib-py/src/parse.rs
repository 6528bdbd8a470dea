//! Key text: an address or a prefix. Addresses are parsed by `ipfib::parse` (fast, and exactly
//! what `std::net` accepts), shared with the table readers, the CLI and the Polars plugin.

use std::net::IpAddr;

pub use ipfib::parse::{address, address_bytes, address_int, Parsed};
use ipnet::IpNet;

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
    fn keys_are_addresses_or_prefixes() {
        assert!(matches!(key("10.0.0.0/8"), Some(Text::Net(_))));
        assert!(
            matches!(key("10.0.0.1/8"), Some(Text::Net(_))),
            "host bits: caller's call"
        );
        assert!(matches!(key("2001:db8::/32"), Some(Text::Net(_))));
        assert!(matches!(
            key("::ffff:1.2.3.4"),
            Some(Text::Addr(IpAddr::V6(_)))
        ));
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
