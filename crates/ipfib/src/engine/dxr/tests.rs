//! DXR against the route table's own longest match, with every backend this CPU runs, through
//! the single, batched and raw paths; plus the encodings' edges and limits.

use super::*;
use crate::addr::Address;
use crate::prefix::Prefix;
use proptest::prelude::*;

fn p4(s: &str) -> Prefix<u32> {
    Prefix::from_net(s.parse().unwrap()).unwrap()
}

fn table(routes: &[(&str, NextHop)]) -> RouteTable<u32> {
    routes.iter().map(|&(s, nh)| (p4(s), nh)).collect()
}

/// Every address of `addrs`, plus every route's edges and outside neighbours, for preset `P`
/// with every backend: single lookups, batches into `Option`s (full 32-lane groups and a
/// remainder) and raw batches with a miss value, through each batch walk.
fn agrees<P: Preset>(t: &RouteTable<u32>, addrs: &[u32]) -> Dxr<P> {
    let mut all: Vec<u32> = addrs.to_vec();
    for (p, _) in t.iter() {
        all.extend([p.first(), p.last()]);
        all.extend(p.first().checked_pred());
        all.extend(p.last().checked_succ());
    }
    all.extend([0, u32::MAX, 1 << 31]);
    let want: Vec<Option<NextHop>> = all
        .iter()
        .map(|&a| t.longest_match(a).map(|(_, nh)| nh))
        .collect();
    let mut last = None;
    for backend in Backend::available() {
        let dxr = Dxr::<P>::build(t, &BuildOptions::with_backend(backend)).unwrap();
        dxr.validate().unwrap();
        let label = format!("{}/{backend}", P::NAME);
        let single: Vec<_> = all.iter().map(|&a| dxr.lookup(a)).collect();
        assert_eq!(single, want, "{label} single");
        let want_raw: Vec<_> = want.iter().map(|w| w.unwrap_or(0xdead_beef)).collect();
        // Every batch walk, whichever a block would pick.
        let mut dxr = dxr;
        for walk in [BatchWalk::Pipeline, BatchWalk::Stream, BatchWalk::Adaptive] {
            dxr.batch_walk = walk;
            let mut batch = vec![Some(0x5eed); all.len()];
            dxr.lookup_batch(&all, &mut batch).unwrap();
            assert_eq!(batch, want, "{label} batch, {walk:?}");
            let mut raw = vec![7; all.len()];
            dxr.lookup_batch_raw(&all, &mut raw, 0xdead_beef).unwrap();
            assert_eq!(raw, want_raw, "{label} raw, {walk:?}");
        }
        last = Some(dxr);
    }
    last.expect("scalar is always available")
}

fn both(t: &RouteTable<u32>, addrs: &[u32]) {
    agrees::<D16R>(t, addrs);
    agrees::<D20R>(t, addrs);
}

fn detail(d: &dyn Lookup<u32>, name: &str) -> u64 {
    match d
        .describe()
        .into_iter()
        .find(|x| x.name == name)
        .unwrap()
        .value
    {
        crate::engine::DetailValue::Count(n) => n,
        v => panic!("{name}: {v:?}"),
    }
}

#[test]
fn empty_table_answers_nothing() {
    let dxr = agrees::<D16R>(&RouteTable::new(), &[]);
    assert_eq!(detail(&dxr, "resolved_chunks"), 1 << 16);
    // A 2^16-entry direct table of u32s, the range array with only its dummy chunk and tail
    // padding, and the next-hop table with only index 0 ("no route").
    let direct = (1 << 16) * std::mem::size_of::<u32>();
    let ranges = format::DUMMY.len() + format::TAIL;
    let hops = std::mem::size_of::<NextHop>();
    assert_eq!(dxr.memory_bytes(), direct + ranges + hops);
}

#[test]
fn default_route_and_host_routes_at_both_ends_of_the_space() {
    both(
        &table(&[
            ("0.0.0.0/0", 9),
            ("255.255.255.255/32", 1),
            ("0.0.0.0/32", 2),
            ("255.255.255.0/24", 3),
        ]),
        &[],
    );
}

#[test]
fn next_hop_zero_and_max_are_routes_not_misses() {
    let t = table(&[
        ("10.0.0.0/8", 0),
        ("10.1.0.0/16", u32::MAX),
        ("10.1.2.0/25", 0),
    ]);
    both(&t, &[0x0a01_0203, 0x0a01_0281, 0x0a02_0000]);
}

#[test]
fn nested_prefixes_sharing_a_start_and_duplicates() {
    let mut t = table(&[
        ("10.0.0.0/8", 1),
        ("10.0.0.0/16", 2),
        ("10.0.0.0/24", 3),
        ("10.0.0.0/32", 4),
    ]);
    t.insert(p4("10.0.0.0/24"), 5);
    both(&t, &[0x0a00_0000, 0x0a00_0001, 0x0a00_0100]);
}

#[test]
fn chunks_pick_short_long_and_resolved_forms() {
    // 10.1/16: /24s only, few hops → short. 10.2/16: a /25 → long (D16R). 10.3/16: one /16
    // → resolved.
    let t = table(&[
        ("10.1.1.0/24", 1),
        ("10.1.2.0/24", 2),
        ("10.2.1.0/25", 3),
        ("10.3.0.0/16", 4),
    ]);
    let d16 = agrees::<D16R>(&t, &[]);
    assert_eq!(detail(&d16, "short_chunks"), 1);
    assert_eq!(detail(&d16, "long_chunks"), 1);
    // D20R: starts in multiples of 16 are short there, so the /25 chunk is short too.
    let d20 = agrees::<D20R>(&t, &[]);
    assert_eq!(detail(&d20, "long_chunks"), 0);
    assert_eq!(detail(&d20, "short_chunks"), 2);
}

#[test]
fn more_than_255_next_hops_in_a_chunk_are_long() {
    let t: RouteTable<u32> = (0..300u32)
        .map(|i| (Prefix::new(0x0a00_0000 | i << 8, 24).unwrap(), i))
        .collect();
    let dxr = agrees::<D16R>(&t, &[]);
    assert!(detail(&dxr, "long_chunks") >= 1);
}

#[test]
fn a_chunk_of_thousands_of_ranges_keeps_every_boundary() {
    // 3,000 alternating /32s in one /16: 6,001 ranges, searched down to a window first.
    let t: RouteTable<u32> = (0..3000u32)
        .map(|i| (Prefix::new(0x0a09_0000 | (2 * i + 1), 32).unwrap(), i))
        .collect();
    let probes: Vec<u32> = (0..7000u32).map(|i| 0x0a09_0000 | i).collect();
    let dxr = agrees::<D16R>(&t, &probes);
    assert_eq!(detail(&dxr, "longest_chunk"), 6001);
    agrees::<D20R>(&t, &probes);
}

#[test]
fn identical_chunks_are_stored_once() {
    let t: RouteTable<u32> = (0..100u32)
        .map(|i| (Prefix::new(0x1400_0000 | i << 16 | 0x0100, 24).unwrap(), 7))
        .collect();
    let dxr = agrees::<D16R>(&t, &[]);
    assert_eq!(detail(&dxr, "short_chunks"), 100);
    assert_eq!(detail(&dxr, "stored_chunks"), 1);
}

#[test]
fn more_next_hops_than_16_bits_index_take_the_wide_form() {
    // 70,000 /24s with their own next hops, and a /8 over them all: chunks mix indices above
    // 65,535 with the /8's.
    let mut t: RouteTable<u32> = (0..70_000u32)
        .map(|i| (Prefix::new(0x1000_0000 + (i << 9), 24).unwrap(), i))
        .collect();
    t.insert(p4("16.0.0.0/8"), u32::MAX);
    let probes: Vec<u32> = (0..200_000u32).map(|i| 0x1000_0000 + i * 211).collect();
    let dxr = agrees::<D16R>(&t, &probes);
    assert!(detail(&dxr, "wide_chunks") > 0);
    assert_eq!(detail(&dxr, "next_hops"), 70_001);
    agrees::<D20R>(&t, &probes);
}

#[test]
fn too_many_next_hops_is_a_typed_error() {
    let t: RouteTable<u32> = (0..1001u32)
        .map(|i| (Prefix::new(i << 8, 24).unwrap(), i))
        .collect();
    let limits = Limits {
        hops: 1000,
        ..Limits::default()
    };
    let err = Dxr::<D16R>::with_limits(&t, &BuildOptions::default(), limits).unwrap_err();
    assert!(
        matches!(&err, BuildError::Unsupported { engine: "d16r", reason } if reason.contains("1001 distinct")),
        "{err}"
    );
    let fewer: RouteTable<u32> = t.iter().take(1000).collect();
    Dxr::<D16R>::with_limits(&fewer, &BuildOptions::default(), limits).expect("1,000 fit");
}

#[test]
fn range_array_overflow_is_a_typed_error() {
    let t: RouteTable<u32> = (0..64u32)
        .map(|i| (Prefix::new(i << 16 | 0x80, 25).unwrap(), i))
        .collect();
    let small = Limits {
        units: 16,
        ..Limits::default()
    };
    let err = Dxr::<D16R>::with_limits(&t, &BuildOptions::default(), small).unwrap_err();
    assert!(matches!(err, BuildError::Unsupported { .. }), "{err}");
    Dxr::<D16R>::with_limits(&t, &BuildOptions::default(), Limits::default()).expect("fits");
}

#[test]
fn validate_catches_unordered_starts_and_bad_indices() {
    let t = table(&[("10.1.1.0/25", 1), ("10.1.2.0/25", 2)]);
    let good = Dxr::<D16R>::build(&t, &BuildOptions::default()).unwrap();
    good.validate().unwrap();
    let at = format::Chunk::of(&good.ranges, Entry(good.direct[0x0a01]), false)
        .unwrap()
        .at;
    let mut bad = good.clone();
    bad.ranges[at + 2] = 0xff;
    bad.ranges[at + 3] = 0xff;
    assert!(bad.validate().is_err(), "a start out of order");
    let mut bad = good.clone();
    bad.direct[5] = Entry::resolved(9).0;
    assert!(bad.validate().is_err(), "an index past the next hops");
}

#[test]
fn lines_per_lookup_models_the_reads() {
    let t = table(&[("10.0.0.0/8", 1), ("10.1.2.0/24", 2)]);
    let dxr = Dxr::<D16R>::build(&t, &BuildOptions::default()).unwrap();
    assert_eq!(
        dxr.lines_per_lookup(&[0x0b00_0000]),
        Some(2.0),
        "direct + hop"
    );
    let chunk = dxr.lines_per_lookup(&[0x0a01_0203]).unwrap();
    assert!((3.0..=5.0).contains(&chunk), "{chunk}");
}

/// A random route biased to the hard cases: chunk edges, the ends of the space, nesting.
fn route(raw: u32, len_pick: u8, shape: u8) -> Prefix<u32> {
    const LENS: [u8; 10] = [0, 8, 15, 16, 17, 20, 21, 24, 25, 32];
    let len = if len_pick < 128 {
        LENS[usize::from(len_pick) % LENS.len()]
    } else {
        len_pick % 33
    };
    let addr = match shape % 5 {
        0 => 0,
        1 => u32::MAX,
        2 => 0x0a01_0000 | (raw & 0xffff),
        3 => 0x0a01_0000 | (raw & 0x0fff) << 4,
        _ => raw,
    };
    Prefix::covering(addr, len)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn random_tables_agree_with_the_model(
        routes in prop::collection::vec((any::<u32>(), any::<u8>(), any::<u8>(), any::<u32>()), 0..200),
        probes in prop::collection::vec(any::<u32>(), 0..64),
    ) {
        let t: RouteTable<u32> = routes
            .iter()
            .map(|&(raw, len, shape, nh)| (route(raw, len, shape), nh % 400))
            .collect();
        let mut addrs = probes.clone();
        addrs.extend(probes.iter().map(|p| 0x0a01_0000 | (p & 0xffff)));
        both(&t, &addrs);
    }
}

#[test]
fn every_address_of_a_dense_chunk() {
    // Every length from /17 to /32 nested in one /16, so each address's answer differs.
    let mut t = RouteTable::new();
    for len in 17..=32u8 {
        t.insert(Prefix::covering(0x0a05_1234, len), u32::from(len));
        t.insert(Prefix::covering(0x0a05_f00f, len), 100 + u32::from(len));
    }
    let all: Vec<u32> = (0..=0xffffu32).map(|i| 0x0a05_0000 | i).collect();
    both(&t, &all);
}

#[test]
fn blocks_of_one_batch_pick_their_own_walk() {
    // 10.5.0.0/16 is split by many routes (searched); 20.0.0.0/8 covers whole chunks
    // (resolved). Blocks alternate between the two, so the adaptive walk streams some blocks
    // and pipelines the others within one call.
    let mut t = table(&[("20.0.0.0/8", 3)]);
    for i in 0..200u32 {
        t.insert(Prefix::covering(0x0a05_0000 | i << 8, 24), i);
    }
    let searched = |i: u32| 0x0a05_0000 | (i * 97) & 0xffff;
    let resolved = |i: u32| 0x1400_0000 | (i * 7919) & 0xff_ffff;
    let addrs: Vec<u32> = (0..3 * BLOCK as u32 + 17)
        .map(|i| {
            if (i as usize / BLOCK).is_multiple_of(2) {
                searched(i)
            } else {
                resolved(i)
            }
        })
        .collect();
    let dxr = agrees::<D16R>(&t, &addrs);
    assert!(!dxr.streams(&addrs[..BLOCK]), "a searched block pipelines");
    assert!(dxr.streams(&addrs[BLOCK..]), "a resolved block streams");
}
