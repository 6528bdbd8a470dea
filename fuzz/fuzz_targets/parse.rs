//! Address and prefix parsing and the checks behind them: `ipnet` text into `Table::insert`,
//! `Prefix::new` / `Prefix::from_net` on raw integers, and the text reader's own fast IPv4
//! parser against the standard library's.

#![no_main]

use std::net::{IpAddr, Ipv4Addr};

use ipfib::{Prefix, Table};
use ipnet::IpNet;
use libfuzzer_sys::fuzz_target;

fn check_prefix<A: ipfib::Address>(addr: A, len: u8) {
    match Prefix::new(addr, len) {
        Ok(p) => {
            assert!(len <= A::BITS);
            assert_eq!((p.addr(), p.len()), (addr, len));
            assert!(p.first() <= p.last());
            assert!(p.contains(p.first()) && p.contains(p.last()));
            assert_eq!(Prefix::from_net(p.to_net()).unwrap(), p);
            assert_eq!(p.is_default(), len == 0);
        }
        Err(_) => {
            // Refused only for a real reason: too long, or host bits set.
            if len <= A::BITS {
                let c = Prefix::covering(addr, len);
                assert_ne!(
                    c.addr(),
                    addr,
                    "{addr:?}/{len} refused but has no host bits"
                );
            }
        }
    }
    if len <= A::BITS {
        let c = Prefix::covering(addr, len);
        assert!(c.contains(addr));
        assert_eq!(c.len(), len);
        assert_eq!(Prefix::new(c.addr(), len).unwrap(), c);
    }
}

fuzz_target!(|data: &[u8]| {
    // The address parsers accept exactly what std accepts.
    let std = std::str::from_utf8(data)
        .ok()
        .and_then(|s| s.parse::<Ipv4Addr>().ok())
        .map(u32::from);
    assert_eq!(ipfib::parse::ipv4(data), std);
    let std6 = std::str::from_utf8(data)
        .ok()
        .and_then(|s| s.parse::<std::net::Ipv6Addr>().ok())
        .map(u128::from);
    assert_eq!(ipfib::parse::ipv6(data), std6);
    if let Ok(s) = std::str::from_utf8(data) {
        assert_eq!(ipfib::parse::address(s), s.parse::<std::net::IpAddr>().ok());
    }

    // Raw integers as prefixes of both families.
    if data.len() >= 21 {
        let v4 = u32::from_be_bytes(data[0..4].try_into().unwrap());
        let v6 = u128::from_be_bytes(data[4..20].try_into().unwrap());
        let len = data[20];
        check_prefix(v4, len);
        check_prefix(v6, len);
        check_prefix(v4, len % 33);
        check_prefix(v6, len % 129);
    }

    // Text prefixes through ipnet into a table: accepted exactly when there are no host bits,
    // and then found again by lookup and by exact match.
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut table = Table::new();
    for (i, word) in text.split_ascii_whitespace().enumerate().take(64) {
        let next_hop = i as u32;
        if let Ok(addr) = word.parse::<IpAddr>() {
            let _ = table.longest_match(addr);
            continue;
        }
        let Ok(net) = word.parse::<IpNet>() else {
            continue;
        };
        match table.insert(net, next_hop) {
            Ok(_) => {
                assert_eq!(net, net.trunc());
                assert_eq!(table.get(&net), Some(next_hop));
                let (found, nh) = table.longest_match(net.addr()).unwrap();
                assert!(found.prefix_len() >= net.prefix_len());
                assert!(found.contains(&net.addr()));
                if found == net {
                    assert_eq!(nh, next_hop);
                }
                assert!(table.supernets(&net).any(|(n, _)| n == net));
                assert!(table.subnets(&net).any(|(n, _)| n == net));
                let shown: IpNet = net.to_string().parse().unwrap();
                assert_eq!(shown, net);
            }
            Err(_) => assert_ne!(net, net.trunc(), "{net} refused"),
        }
    }
    let n = table.len();
    assert_eq!(table.iter().count(), n);
    assert_eq!(table.v4().len() + table.v6().len(), n);
    let nets: Vec<IpNet> = table.iter().map(|(n, _)| n).collect();
    for net in nets {
        assert!(table.remove(&net).is_some());
    }
    assert!(table.is_empty());
});
