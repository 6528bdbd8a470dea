//! Prefixes of either family: an address and a length, host bits always zero.

use std::fmt;

use crate::addr::Address;
use crate::error::PrefixError;

/// A routing prefix: the first `len` bits of `addr` are the network, the rest are zero.
///
/// Construction checks the host bits, so every `Prefix` in the crate is canonical. Ordering is
/// by address, then by length (shorter first), which is the order the interval sweep needs: a
/// covering prefix sorts before the prefixes nested in it that share its start.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Prefix<A: Address> {
    addr: A,
    len: u8,
}

impl<A: Address> Prefix<A> {
    /// A prefix from its address bits and length; host bits set or an over-long length is an
    /// error (never a silent mask).
    pub fn new(addr: A, len: u8) -> Result<Self, PrefixError> {
        if len > A::BITS {
            return Err(PrefixError::LengthTooLong { len, max: A::BITS });
        }
        let network = addr.and(A::mask(len));
        if network != addr {
            return Err(PrefixError::HostBitsSet {
                addr: addr.to_ip().to_string(),
                len,
                network: network.to_ip().to_string(),
            });
        }
        Ok(Prefix { addr, len })
    }

    /// [`Prefix::new`] without the error's details, for checking many prefixes quickly (a
    /// saved table's route list: the `Result`'s strings made each check a stack copy of
    /// ~80 bytes, two thirds of the open time).
    #[inline]
    pub(crate) fn canonical(addr: A, len: u8) -> Option<Self> {
        (len <= A::BITS && addr.and(A::mask(len)) == addr).then_some(Prefix { addr, len })
    }

    /// A prefix from an `ipnet` value, rejecting host bits.
    pub fn from_net(net: A::Net) -> Result<Self, PrefixError> {
        let (addr, len) = A::from_net(net);
        Self::new(addr, len)
    }

    /// The prefix as an `ipnet` value.
    pub fn to_net(self) -> A::Net {
        self.addr.to_net(self.len)
    }

    /// The prefix that covers an address at a given length (host bits masked off): the key a
    /// per-length hash lookup uses. `len` is clamped to the family width.
    pub fn covering(addr: A, len: u8) -> Self {
        let len = len.min(A::BITS);
        Prefix {
            addr: addr.and(A::mask(len)),
            len,
        }
    }

    /// The network address (the first address of the prefix).
    #[inline]
    pub fn addr(self) -> A {
        self.addr
    }

    /// The prefix length.
    #[inline]
    #[allow(clippy::len_without_is_empty)] // a length in bits, not a collection's size
    pub fn len(self) -> u8 {
        self.len
    }

    /// True for the default route (`/0`), the prefix that covers everything.
    #[inline]
    pub fn is_default(self) -> bool {
        self.len == 0
    }

    /// The first address covered.
    #[inline]
    pub fn first(self) -> A {
        self.addr
    }

    /// The last address covered (all host bits one).
    #[inline]
    pub fn last(self) -> A {
        self.addr.or(A::mask(self.len).not())
    }

    /// True when `addr` lies inside the prefix.
    #[inline]
    pub fn contains(self, addr: A) -> bool {
        addr.and(A::mask(self.len)) == self.addr
    }
}

impl<A: Address> fmt::Display for Prefix<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr.to_ip(), self.len)
    }
}

impl<A: Address> fmt::Debug for Prefix<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_bits_are_an_error() {
        let err = Prefix::<u32>::new(0x0a00_0001, 8).unwrap_err();
        assert!(matches!(err, PrefixError::HostBitsSet { .. }));
        assert!(err.to_string().contains("10.0.0.0"), "{err}");
    }

    #[test]
    fn too_long_is_an_error() {
        assert!(matches!(
            Prefix::<u32>::new(0, 33),
            Err(PrefixError::LengthTooLong { len: 33, max: 32 })
        ));
        assert!(Prefix::<u128>::new(0, 129).is_err());
    }

    #[test]
    fn first_and_last_at_the_top_of_the_space() {
        let p = Prefix::<u128>::new(0xffffu128 << 112, 16).unwrap();
        assert_eq!(p.last(), u128::MAX);
        let all = Prefix::<u32>::new(0, 0).unwrap();
        assert_eq!((all.first(), all.last()), (0, u32::MAX));
        let host = Prefix::<u128>::new(5, 128).unwrap();
        assert_eq!((host.first(), host.last()), (5, 5));
    }

    #[test]
    fn covering_masks() {
        let p = Prefix::<u32>::covering(0x0a01_0203, 16);
        assert_eq!(p.to_string(), "10.1.0.0/16");
        assert!(p.contains(0x0a01_ffff));
        assert!(!p.contains(0x0a02_0000));
    }
}
