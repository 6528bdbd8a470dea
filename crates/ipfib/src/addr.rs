//! Address families as plain unsigned integers.
//!
//! Every engine works on addresses as integers: IPv4 is a `u32`, IPv6 a `u128`, most significant
//! bit first. The [`Address`] trait is the one small abstraction the route table, the interval
//! partitioning and the engines are written against, so each algorithm exists once for both
//! families. `std::net` and `ipnet` types appear only at the API edge.

use std::fmt::{Debug, Display};
use std::hash::Hash;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use ipnet::{Ipv4Net, Ipv6Net};

/// An IP address family, represented by its address as an unsigned integer.
///
/// Implemented for `u32` (IPv4) and `u128` (IPv6), and sealed: no other type can implement it,
/// so code that picks a family's part of a dual-stack value (`Table::family`,
/// `EngineInfo::build`) covers every implementation. Bit 0 of the integer is the last bit of
/// the address, so integer order is address order.
pub trait Address:
    sealed::Sealed
    + AddressInput<Self>
    + Copy
    + Ord
    + Eq
    + Hash
    + Debug
    + Default
    + Send
    + Sync
    + 'static
{
    /// Address width in bits (32 or 128).
    const BITS: u8;
    /// The all-zeros address.
    const ZERO: Self;
    /// The all-ones address, the top of the space.
    const MAX: Self;
    /// Family name for messages: `"IPv4"` or `"IPv6"`.
    const FAMILY: &'static str;

    /// The `std::net` address type of this family.
    type Ip: Copy + Debug + Display + FromStr + Eq;
    /// The `ipnet` prefix type of this family.
    type Net: Copy + Debug + Display + FromStr + Eq;
    /// The address as 4 or 16 bytes in network order, as packet headers, C programs and
    /// DPDK's `rte_fib6` hold it ([`AddressInput::address`] converts).
    type Bytes: AddressInput<Self> + Debug + Eq + Send + Sync + 'static;

    /// Converts from the `std::net` address.
    fn from_ip(ip: Self::Ip) -> Self;
    /// Converts to the `std::net` address.
    fn to_ip(self) -> Self::Ip;
    /// The address as network-order bytes ([`AddressInput::address`] is the inverse).
    fn to_be_bytes(self) -> Self::Bytes;
    /// Splits an `ipnet` prefix into its address bits and length (host bits are kept as given).
    fn from_net(net: Self::Net) -> (Self, u8);
    /// Builds an `ipnet` prefix; `len` must be at most `BITS`.
    fn to_net(self, len: u8) -> Self::Net;

    /// The network mask of a prefix of length `len` (`0..=BITS`): `len` leading ones.
    fn mask(len: u8) -> Self;
    /// Bitwise and.
    fn and(self, other: Self) -> Self;
    /// Bitwise or.
    fn or(self, other: Self) -> Self;
    /// Bitwise not.
    fn not(self) -> Self;
    /// `self + 1`, or `None` at the top of the space.
    fn checked_succ(self) -> Option<Self>;
    /// `self - 1`, or `None` at zero.
    fn checked_pred(self) -> Option<Self>;
    /// The address widened to 128 bits, left-aligned (IPv4 `a.b.c.d` becomes `a.b.c.d::`), so
    /// code that only needs the top bits can treat both families alike.
    fn to_u128_left(self) -> u128;
    /// Inverse of [`Address::to_u128_left`]; the low bits that do not fit are dropped.
    fn from_u128_left(v: u128) -> Self;
}

/// The seal: only this crate can name `Sealed`, so only it can implement [`Address`].
mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for u128 {}
}

/// Implements [`Address`] for one family's integer: the two families differ only in their
/// types, width and name, and in how the integer sits in 128 bits (`$left`, `$from_left`).
macro_rules! address {
    ($t:ty, $bits:literal, $family:literal, $ip:ty, $net:ty,
     left($l:ident) $left:expr, from_left($v:ident) $from_left:expr) => {
        impl Address for $t {
            const BITS: u8 = $bits;
            const ZERO: Self = 0;
            const MAX: Self = <$t>::MAX;
            const FAMILY: &'static str = $family;
            type Ip = $ip;
            type Net = $net;
            type Bytes = [u8; $bits / 8];

            #[inline]
            fn from_ip(ip: $ip) -> Self {
                <$t>::from(ip)
            }
            #[inline]
            fn to_ip(self) -> $ip {
                <$ip>::from(self)
            }
            #[inline]
            fn to_be_bytes(self) -> [u8; $bits / 8] {
                <$t>::to_be_bytes(self)
            }
            #[inline]
            fn from_net(net: $net) -> (Self, u8) {
                (<$t>::from(net.addr()), net.prefix_len())
            }
            fn to_net(self, len: u8) -> $net {
                <$net>::new(self.into(), len.min($bits)).expect("length clamped to the width")
            }
            #[inline]
            fn mask(len: u8) -> Self {
                if len == 0 {
                    0
                } else {
                    <$t>::MAX << ($bits - u32::from(len.min($bits)))
                }
            }
            #[inline]
            fn and(self, other: Self) -> Self {
                self & other
            }
            #[inline]
            fn or(self, other: Self) -> Self {
                self | other
            }
            #[inline]
            fn not(self) -> Self {
                !self
            }
            #[inline]
            fn checked_succ(self) -> Option<Self> {
                self.checked_add(1)
            }
            #[inline]
            fn checked_pred(self) -> Option<Self> {
                self.checked_sub(1)
            }
            #[inline]
            fn to_u128_left(self) -> u128 {
                let $l = self;
                $left
            }
            #[inline]
            fn from_u128_left($v: u128) -> Self {
                $from_left
            }
        }
    };
}

address!(u32, 32, "IPv4", Ipv4Addr, Ipv4Net,
    left(a) u128::from(a) << 96, from_left(v) (v >> 96) as u32);
address!(u128, 128, "IPv6", Ipv6Addr, Ipv6Net, left(a) a, from_left(v) v);

/// An address as a batch caller stores it: the family's integer, or its network-order
/// [`Address::Bytes`]. Batched walks are generic over it so that bytes are converted where the
/// walk reads each address, not in a separate pass over the batch.
pub trait AddressInput<A>: Copy {
    /// How an element lies in memory, for walks that load many at once with vector
    /// instructions; [`InputLayout::Other`] (the default) has them read each element through
    /// [`AddressInput::address`].
    const LAYOUT: InputLayout = InputLayout::Other;

    /// The address as its family's integer.
    fn address(self) -> A;
}

/// How a batch element lies in memory ([`AddressInput::LAYOUT`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputLayout {
    /// The family's integer, in the CPU's byte order.
    Native,
    /// The address's bytes in network order (the family's [`Address::Bytes`]).
    NetworkOrder,
    /// Anything else.
    Other,
}

impl AddressInput<u32> for u32 {
    const LAYOUT: InputLayout = InputLayout::Native;

    #[inline(always)]
    fn address(self) -> u32 {
        self
    }
}

impl AddressInput<u128> for u128 {
    const LAYOUT: InputLayout = InputLayout::Native;

    #[inline(always)]
    fn address(self) -> u128 {
        self
    }
}

impl AddressInput<u32> for [u8; 4] {
    const LAYOUT: InputLayout = InputLayout::NetworkOrder;

    #[inline(always)]
    fn address(self) -> u32 {
        u32::from_be_bytes(self)
    }
}

impl AddressInput<u128> for [u8; 16] {
    const LAYOUT: InputLayout = InputLayout::NetworkOrder;

    #[inline(always)]
    fn address(self) -> u128 {
        u128::from_be_bytes(self)
    }
}

/// Parses an address of either family, returning it as the integer of its family.
pub fn parse_ip(s: &str) -> Option<IpAddr> {
    s.trim().parse::<IpAddr>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_at_the_edges() {
        assert_eq!(u32::mask(0), 0);
        assert_eq!(u32::mask(32), u32::MAX);
        assert_eq!(u32::mask(24), 0xffff_ff00);
        assert_eq!(u128::mask(0), 0);
        assert_eq!(u128::mask(128), u128::MAX);
        assert_eq!(u128::mask(64), u128::MAX << 64);
        assert_eq!(u128::mask(1), 1u128 << 127);
    }

    #[test]
    fn successor_stops_at_the_top() {
        assert_eq!(u32::MAX.checked_succ(), None);
        assert_eq!(u128::MAX.checked_succ(), None);
        assert_eq!(7u32.checked_succ(), Some(8));
        assert_eq!(0u128.checked_pred(), None);
    }

    #[test]
    fn left_alignment_round_trips() {
        let a: u32 = 0xc0a8_0001;
        assert_eq!(u32::from_u128_left(a.to_u128_left()), a);
        assert_eq!(a.to_u128_left() >> 96, u128::from(a));
    }
}
