//! Addresses in saved tables: as 32-bit words, most significant first (one per IPv4 address,
//! four per IPv6 address), so both families share one element type and no section needs more
//! than 4-byte alignment.

use crate::addr::Address;

/// Words per address of family `A`.
pub fn per_address<A: Address>() -> usize {
    usize::from(A::BITS) / 32
}

/// The family number sections are tagged with (4 or 6).
pub fn family<A: Address>() -> u32 {
    if A::BITS == 32 {
        4
    } else {
        6
    }
}

/// The words of `addrs`.
pub fn from_addresses<A: Address>(addrs: impl Iterator<Item = A>) -> Vec<u32> {
    let n = per_address::<A>();
    let mut words = Vec::new();
    for a in addrs {
        let v = a.to_u128_left();
        words.extend((0..n).map(|i| (v >> (96 - 32 * i)) as u32));
    }
    words
}

/// The addresses in `words` (whose length is a multiple of [`per_address`]).
pub fn to_addresses<A: Address>(words: &[u32]) -> impl Iterator<Item = A> + '_ {
    words.chunks_exact(per_address::<A>()).map(|c| {
        let v = c
            .iter()
            .enumerate()
            .fold(0u128, |v, (i, &w)| v | (u128::from(w) << (96 - 32 * i)));
        A::from_u128_left(v)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_families_round_trip() {
        let v6 = [0u128, 1, u128::MAX, 0x2001_0db8 << 96 | 7];
        let w = from_addresses(v6.iter().copied());
        assert_eq!(w.len(), 16);
        assert_eq!(w[12], 0x2001_0db8);
        assert_eq!(to_addresses::<u128>(&w).collect::<Vec<_>>(), v6);
        let v4 = [0u32, 0x0a00_0001, u32::MAX];
        let w = from_addresses(v4.iter().copied());
        assert_eq!(w, v4);
        assert_eq!(to_addresses::<u32>(&w).collect::<Vec<_>>(), v4);
    }
}
