//! The kernel's LPM trie through the BPF program, checked against ipfib's route table:
//! lookups of both families (hits, misses, default routes, every prefix length), inserts,
//! updates and deletes, and the free probe. Where the kernel refuses BPF (no root, BPF
//! disabled) each test says why and passes without checking: there is nothing to check.
#![cfg(feature = "bpf")]

use ipfib::{Address, Prefix, RouteTable};
use ipfib_bpf::{BpfError, BpfLpmTrie, FreeProbe, Op, Slot};
use rand::{rngs::StdRng, Rng, SeedableRng};

/// A table with a default route and prefixes of every length, nested inside each other.
fn table<A: Address>(n: usize, seed: u64) -> RouteTable<A> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut t = RouteTable::new();
    t.insert(Prefix::new(A::ZERO, 0).unwrap(), 1);
    for i in 0..n {
        let len = rng.gen_range(1..=A::BITS);
        // Half of the prefixes inside 10/8-like space, so they nest.
        let base: u128 = if i % 2 == 0 { 0x0a << 120 } else { rng.gen() };
        let addr = A::from_u128_left(base | (rng.gen::<u128>() >> 8));
        t.insert(Prefix::covering(addr, len), i as u32 + 2);
    }
    t
}

fn trace<A: Address>(t: &RouteTable<A>, n: usize, seed: u64) -> Vec<A> {
    let mut rng = StdRng::seed_from_u64(seed);
    let routes: Vec<Prefix<A>> = t.iter().map(|(p, _)| p).collect();
    (0..n)
        .map(|i| {
            let random = A::from_u128_left(rng.gen());
            if i % 4 == 0 {
                return random;
            }
            let p = routes[rng.gen_range(0..routes.len())];
            p.addr().or(random.and(A::mask(p.len()).not()))
        })
        .collect()
}

/// The trie, or `None` (said on stderr) where the kernel refuses BPF.
fn build<A: Address>(t: &RouteTable<A>) -> Option<BpfLpmTrie<A>> {
    match BpfLpmTrie::build(t) {
        Ok(trie) => Some(trie),
        Err(e @ BpfError::Kernel { .. }) => {
            eprintln!("skipped: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

fn agrees<A: Address>(trie: &BpfLpmTrie<A>, t: &RouteTable<A>, addrs: &[A]) {
    let got = trie.lookup_all(addrs).unwrap();
    for (&a, g) in addrs.iter().zip(got) {
        let want = t.longest_match(a).map(|(_, nh)| nh);
        assert_eq!(g, want, "{}", a.to_ip());
        assert_eq!(
            ipfib::Lookup::lookup(trie, a),
            want,
            "syscall {}",
            a.to_ip()
        );
    }
}

fn lookups_agree<A: Address>(seed: u64) {
    let t = table::<A>(3000, seed);
    let Some(trie) = build(&t) else { return };
    let mut addrs = trace(&t, 20_000, seed + 1);
    addrs.extend([A::ZERO, A::MAX]);
    agrees(&trie, &t, &addrs);
    assert!(ipfib::Lookup::memory_bytes(&trie) > 0);
}

#[test]
fn ipv4_lookups_agree_with_the_route_table() {
    lookups_agree::<u32>(4);
}

#[test]
fn ipv6_lookups_agree_with_the_route_table() {
    lookups_agree::<u128>(6);
}

#[test]
fn inserts_updates_and_deletes_change_the_answers() {
    let mut t = table::<u32>(2000, 9);
    let Some(trie) = build(&t) else { return };
    let routes: Vec<(Prefix<u32>, u32)> = t.iter().collect();
    let addrs = trace(&t, 5000, 10);

    // Updates: every route gets another next hop.
    let updated: Vec<Slot> = routes
        .iter()
        .map(|&(p, nh)| Slot::prefix(p, nh + 100_000))
        .collect();
    assert_eq!(
        trie.apply(Op::Update, &updated).unwrap(),
        routes.len() as u64
    );
    for &(p, nh) in &routes {
        t.insert(p, nh + 100_000);
    }
    agrees(&trie, &t, &addrs);

    // Deletes of half, then inserting them again.
    let half: Vec<Slot> = updated.iter().step_by(2).copied().collect();
    trie.apply(Op::Delete, &half).unwrap();
    for &(p, _) in routes.iter().step_by(2) {
        t.remove(p);
    }
    agrees(&trie, &t, &addrs);
    trie.apply(Op::Insert, &half).unwrap();
    for &(p, nh) in routes.iter().step_by(2) {
        t.insert(p, nh + 100_000);
    }
    agrees(&trie, &t, &addrs);

    // An insert of a present prefix, an update or delete of an absent one: typed errors.
    let present = updated[0];
    let absent = Slot::prefix(Prefix::<u32>::new(0xc633_6400, 24).unwrap(), 5);
    assert!(t.get(Prefix::new(0xc633_6400, 24).unwrap()).is_none());
    for (op, slot) in [
        (Op::Insert, present),
        (Op::Update, absent),
        (Op::Delete, absent),
    ] {
        let err = trie.apply(op, &[slot]).unwrap_err();
        assert!(matches!(err, BpfError::Operation { .. }), "{op:?}: {err}");
    }
}

#[test]
fn the_free_probe_times_a_dropped_trie() {
    let t = table::<u32>(5000, 11);
    let Some(trie) = build(&t) else { return };
    let probe = match FreeProbe::attach() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("skipped: {e}");
            return;
        }
    };
    let took = probe.free(trie).unwrap();
    assert!(took.as_nanos() > 0, "{took:?}");
}
