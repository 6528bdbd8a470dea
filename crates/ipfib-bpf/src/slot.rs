//! The layout of one slot of the BPF program's `slots` array (`struct slot` in
//! `bpf/lpm_bench.bpf.c`): a trie key of either family followed by a next hop.

use ipfib::{Address, NextHop, Prefix};

/// One slot: the first 8 bytes are an IPv4 LPM trie key (prefix length, then the address in
/// network byte order), the first 20 an IPv6 one, so the program hands a slot to the trie as
/// its key without copying.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Slot {
    /// Prefix length in bits (the full width for an address to look up).
    pub prefixlen: u32,
    /// The address, network byte order, left-aligned.
    pub data: [u8; 16],
    /// The next hop an insert or update stores.
    pub next_hop: u32,
}

impl Slot {
    /// A slot to look up `addr`.
    pub fn address<A: Address>(addr: A) -> Slot {
        Slot::prefix(Prefix::covering(addr, A::BITS), 0)
    }

    /// A slot holding a route.
    pub fn prefix<A: Address>(prefix: Prefix<A>, next_hop: NextHop) -> Slot {
        Slot {
            prefixlen: u32::from(prefix.len()),
            data: prefix.addr().to_u128_left().to_be_bytes(),
            next_hop,
        }
    }
}

/// The BPF program's family code for `A`: 4 or 6.
pub fn family<A: Address>() -> u32 {
    if A::BITS == 32 {
        4
    } else {
        6
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_is_24_bytes_with_the_key_first_as_the_kernel_reads_it() {
        assert_eq!(std::mem::size_of::<Slot>(), 24);
        let s = Slot::prefix(Prefix::<u32>::new(0x0a01_0200, 24).unwrap(), 7);
        assert_eq!(s.prefixlen, 24);
        assert_eq!(&s.data[..4], &[10, 1, 2, 0]);
        assert_eq!(s.next_hop, 7);
        let s = Slot::address::<u128>(0x2001_0db8 << 96 | 1);
        assert_eq!(s.prefixlen, 128);
        assert_eq!(&s.data[..4], &[0x20, 0x01, 0x0d, 0xb8]);
        assert_eq!(s.data[15], 1);
        assert_eq!((family::<u32>(), family::<u128>()), (4, 6));
    }
}
