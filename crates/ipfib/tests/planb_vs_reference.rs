//! PlanB against the reference model: random tables biased towards the hard cases, every node
//! search backend the CPU has, single and batched lookups.

use ipfib::engine::planb::layout::Family;
use ipfib::engine::planb::Backend;
use ipfib::{Lpm, PlanB, Prefix, Reference, RouteTable};
use proptest::prelude::*;

/// One raw route request; `shape` picks how the address is derived, so tables get nesting,
/// shared starts, adjacency, the top of the space and the /32, /48 and /64 boundaries.
type Raw = (u8, u128, u8, u32);

const SPECIAL_LENGTHS: [u8; 14] = [0, 1, 8, 15, 16, 17, 24, 31, 32, 33, 47, 48, 63, 64];

fn make_table<A: Family>(raws: &[Raw]) -> RouteTable<A> {
    let mut table = RouteTable::new();
    let mut made: Vec<Prefix<A>> = Vec::new();
    for &(shape, raw, len_pick, next_hop) in raws {
        let len = if len_pick % 3 == 0 {
            SPECIAL_LENGTHS[usize::from(len_pick / 3) % SPECIAL_LENGTHS.len()].min(A::BITS)
        } else {
            len_pick % (A::BITS + 1)
        };
        let random = A::from_u128_left(raw);
        let base = match (shape % 8, made.last()) {
            (0, _) => A::ZERO,
            (1, _) => A::MAX,
            (2, Some(p)) => p.first(), // shares a start
            (3, Some(p)) => p.last().checked_succ().unwrap_or(A::ZERO), // adjacent
            (4, Some(p)) => p.first().or(random.and(A::mask(p.len()).not())), // nested inside
            (5, _) => A::from_u128_left(0x2001_0db8u128 << 96 | raw >> 32), // one /32 region
            _ => random,
        };
        let prefix = Prefix::covering(base, len);
        made.push(prefix);
        table.insert(prefix, next_hop % 8); // few next hops: exercises interval merging
    }
    table
}

/// Every prefix's first and last address and their neighbours, plus random ones.
fn probes<A: Family>(table: &RouteTable<A>, random: &[u128]) -> Vec<A> {
    let mut out: Vec<A> = random.iter().map(|&r| A::from_u128_left(r)).collect();
    out.extend([A::ZERO, A::MAX]);
    for (p, _) in table.iter() {
        for a in [p.first(), p.last()] {
            out.push(a);
            out.extend(a.checked_succ());
            out.extend(a.checked_pred());
        }
    }
    out
}

fn check<A: Family>(table: &RouteTable<A>, addrs: &[A]) {
    let reference = Reference::build(table);
    let want: Vec<_> = addrs.iter().map(|&a| reference.lookup(a)).collect();
    let mut planb = PlanB::build(table);
    for backend in Backend::available() {
        planb.set_backend(backend).expect("available backend");
        for (a, w) in addrs.iter().zip(&want) {
            assert_eq!(
                planb.lookup(*a),
                *w,
                "{backend} single lookup of {:?}",
                a.to_ip()
            );
        }
        let mut got = vec![None; addrs.len()];
        planb.lookup_batch(addrs, &mut got).expect("equal lengths");
        for ((a, g), w) in addrs.iter().zip(&got).zip(&want) {
            assert_eq!(g, w, "{backend} batched lookup of {:?}", a.to_ip());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn ipv6_matches_reference(raws in prop::collection::vec(any::<Raw>(), 0..200),
                              random in prop::collection::vec(any::<u128>(), 0..64)) {
        let table = make_table::<u128>(&raws);
        check(&table, &probes(&table, &random));
    }

    #[test]
    fn ipv4_matches_reference(raws in prop::collection::vec(any::<Raw>(), 0..200),
                              random in prop::collection::vec(any::<u128>(), 0..64)) {
        let table = make_table::<u32>(&raws);
        check(&table, &probes(&table, &random));
    }
}

/// Tables large enough for trees of several levels in one chunk, and many chunks.
#[test]
fn deep_chunks_match_reference() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut t6 = RouteTable::<u128>::new();
    let mut t4 = RouteTable::<u32>::new();
    for i in 0..60_000u32 {
        // Dense /48s in one /16 (a deep tree), and /24s in one /8.
        let a6 = (0x2a00u128 << 112) | (u128::from(rng.gen::<u32>()) << 80);
        t6.insert(Prefix::covering(a6, rng.gen_range(17..=48)), i);
        let a4 = (10u32 << 24) | (rng.gen::<u32>() >> 8);
        t4.insert(Prefix::covering(a4, rng.gen_range(9..=32)), i);
    }
    let random: Vec<u128> = (0..20_000).map(|_| rng.gen()).collect();
    let near6: Vec<u128> = (0..20_000)
        .map(|_| (0x2a00u128 << 112) | (rng.gen::<u128>() >> 16))
        .collect();
    let mut p6 = probes(&t6, &random);
    p6.extend(near6);
    check(&t6, &p6);
    let near4: Vec<u32> = (0..20_000)
        .map(|_| (10u32 << 24) | (rng.gen::<u32>() >> 8))
        .collect();
    let mut p4 = probes(&t4, &random);
    p4.extend(near4);
    check(&t4, &p4);
}
