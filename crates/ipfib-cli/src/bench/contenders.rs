//! Everything `ipfib bench` compares, per address family: our engines (every engine of the
//! library's registry, so a new engine is benchmarked without touching this file), the peer
//! crates (feature `peers`) and the extra comparators such as DPDK (feature `dpdk`).

use ipfib::{engine, Address, BuildOptions, Lookup, NextHop, RouteTable};

use crate::bench::native::{NativeBatch, NativeInfo};

/// Builds one comparator from a table. Boxed so ours, the peers' and FFI ones mix in one list.
pub type Builder<A> = Box<dyn Fn(&RouteTable<A>) -> anyhow::Result<Engine<A>>>;

/// A built contender, and how its batch path is called.
pub enum Engine<A: Address> {
    /// One of ours, through the public API: `Lookup::lookup_batch_raw` (what
    /// `ipfib::Fib::lookup_v4_batch`/`lookup_v6_batch` call) into `u32`s, `miss` for no route.
    Ours {
        /// The engine.
        engine: Box<dyn Lookup<A>>,
        /// A value no route of the table has, answered for "no route".
        miss: NextHop,
    },
    /// A comparator without a native batch: `Lookup::lookup_batch` into `Option`s.
    Generic(Box<dyn Lookup<A>>),
    /// A comparator with its own batch layout (see [`crate::bench::native`]): DPDK's and the
    /// kernel's BPF trie, so without features `dpdk` and `bpf` only the tests build one.
    #[cfg_attr(not(any(feature = "dpdk", feature = "bpf")), allow(dead_code))]
    Native(Box<dyn NativeBatch<A>>),
}

impl<A: Address> Engine<A> {
    /// The engine's [`Lookup`] (its single path, name and size).
    pub fn lookup(&self) -> &dyn Lookup<A> {
        match self {
            Engine::Ours { engine, .. } => engine.as_ref(),
            Engine::Generic(engine) => engine.as_ref(),
            Engine::Native(native) => native.lookup(),
        }
    }

    /// The function the batch path calls.
    pub fn batch_call(&self) -> &'static str {
        match self {
            Engine::Ours { .. } => "lookup_batch_raw",
            Engine::Generic(_) => "lookup_batch",
            Engine::Native(native) => native.info().call,
        }
    }

    /// What the native path calls, for comparators that have one.
    pub fn native_info(&self) -> Option<NativeInfo> {
        match self {
            Engine::Native(native) => Some(native.info()),
            _ => None,
        }
    }
}

/// A next hop no route of `table` has (the largest such value), to stand for "no route" in
/// [`Lookup::lookup_batch_raw`]'s output.
pub fn unused_next_hop<A: Address>(table: &RouteTable<A>) -> NextHop {
    let mut used: Vec<NextHop> = table.iter().map(|(_, nh)| nh).collect();
    used.sort_unstable_by(|a, b| b.cmp(a));
    used.dedup();
    // Walking down from u32::MAX, the first value that is not the next used one is free; a
    // table has far fewer than 2^32 routes, so one is found.
    let mut candidate = NextHop::MAX;
    for nh in used {
        if nh != candidate {
            break;
        }
        candidate -= 1;
    }
    candidate
}

/// One thing to benchmark: its name (as `--engines` accepts it) and how to build it.
pub struct Contender<A: Address> {
    /// Name in the report.
    pub name: String,
    /// Whether it is one of ours (the others are shown as comparators).
    pub ours: bool,
    /// Builds it from the table under test.
    pub build: Builder<A>,
    /// Run once before its build, untimed: what its users pay once per process, not per
    /// structure (DPDK's EAL start-up, which maps all of DPDK's memory).
    pub setup: Option<fn()>,
}

/// What the bench needs to know per family to list its contenders.
pub trait Family: Address + crate::bench::modes::FlipLow {
    /// The peer crates' adapters for this family (empty without feature `peers`).
    fn peers() -> Vec<Contender<Self>>;
    /// Extra comparators for this family (DPDK's, with feature `dpdk`); the hook where
    /// out-of-tree or FFI engines join the run.
    fn extra() -> Vec<Contender<Self>>;
}

/// Whether a registered engine holds routes of family `A` (a single-family engine, such as
/// DXR for IPv4, refuses the other family's routes).
pub fn supports<A: Address>(info: &engine::EngineInfo) -> bool {
    info.supports::<A>(&BuildOptions::default())
        .unwrap_or(false)
}

/// Every contender for a family, ours first (the registered engines that hold the family),
/// in a stable order.
pub fn all<A: Family>() -> Vec<Contender<A>> {
    let mut list: Vec<Contender<A>> = engine::engines()
        .iter()
        .filter(|info| supports::<A>(info))
        .map(|info| Contender {
            name: info.name().to_string(),
            ours: true,
            setup: None,
            build: Box::new(move |t: &RouteTable<A>| {
                Ok(Engine::Ours {
                    engine: info.build(t, &BuildOptions::default())?,
                    miss: unused_next_hop(t),
                })
            }),
        })
        .collect();
    list.extend(A::peers());
    list.extend(A::extra());
    list
}

/// Keeps the contenders named in `wanted` (all when empty); an unknown name is an error that
/// lists the known ones.
pub fn select<A: Address>(
    list: Vec<Contender<A>>,
    wanted: &[String],
) -> anyhow::Result<Vec<Contender<A>>> {
    if wanted.is_empty() {
        return Ok(list);
    }
    let known: Vec<String> = list.iter().map(|c| c.name.clone()).collect();
    for w in wanted {
        if !known.iter().any(|k| k.eq_ignore_ascii_case(w)) {
            anyhow::bail!("unknown engine {w:?} (known: {})", known.join(", "));
        }
    }
    Ok(list
        .into_iter()
        .filter(|c| wanted.iter().any(|w| w.eq_ignore_ascii_case(&c.name)))
        .collect())
}

/// The help of `--engines`: every name it accepts in this build (ours, the peers, DPDK's).
/// Built from the registry and the comparator lists without building anything: it is part of
/// the command-line definition, made on every run of `ipfib`.
pub fn help() -> String {
    let ours: Vec<&str> = engine::engines().iter().map(|e| e.name()).collect();
    let mut others: Vec<String> = Vec::new();
    let names = u32::peers()
        .into_iter()
        .chain(u32::extra())
        .map(|c| c.name)
        .chain(
            u128::peers()
                .into_iter()
                .chain(u128::extra())
                .map(|c| c.name),
        );
    for name in names {
        if !others.contains(&name) {
            others.push(name);
        }
    }
    let peers = if others.is_empty() {
        "none in this build (features `peers`, `dpdk`, `bpf`)".to_string()
    } else {
        others.join(", ")
    };
    format!(
        "Only these engines (comma-separated, ASCII case ignored; default all that hold the \
         family). ipfib's: {}; peers: {peers}",
        ours.join(", ")
    )
}

#[cfg(feature = "peers")]
fn peer_list<A>() -> Vec<Contender<A>>
where
    A: Address + crate::bench::peers::IpNetFamily,
    (A, u8): prefix_trie::Prefix,
    crate::bench::peers::PrefixTrie<A>: Lookup<A>,
{
    use crate::bench::peers::{IpNetTable, PrefixTrie};
    vec![
        Contender {
            name: "prefix-trie".into(),
            ours: false,
            setup: None,
            build: Box::new(|t: &RouteTable<A>| {
                Ok(Engine::Generic(Box::new(PrefixTrie::build(t))))
            }),
        },
        Contender {
            name: "ip_network_table".into(),
            ours: false,
            setup: None,
            build: Box::new(|t: &RouteTable<A>| {
                Ok(Engine::Generic(Box::new(IpNetTable::build(t)?)))
            }),
        },
    ]
}

#[cfg(not(feature = "peers"))]
fn peer_list<A: Address>() -> Vec<Contender<A>> {
    Vec::new()
}

impl Family for u32 {
    fn peers() -> Vec<Contender<u32>> {
        peer_list()
    }
    fn extra() -> Vec<Contender<u32>> {
        extra_v4()
    }
}

impl Family for u128 {
    fn peers() -> Vec<Contender<u128>> {
        peer_list()
    }
    fn extra() -> Vec<Contender<u128>> {
        extra_v6()
    }
}

/// A DPDK comparator as a contender, timed through its native bulk lookup; DPDK's EAL is started
/// before its build is timed.
#[cfg(feature = "dpdk")]
fn dpdk<A: Address, E: ipfib_dpdk::NativeBulk<A> + 'static>(
    name: &str,
    build: fn(&RouteTable<A>) -> Result<E, ipfib_dpdk::DpdkError>,
) -> Contender<A> {
    use crate::bench::native::Dpdk;
    Contender {
        name: name.into(),
        ours: false,
        build: Box::new(move |t: &RouteTable<A>| Ok(Engine::Native(Box::new(Dpdk(build(t)?))))),
        // A failure here is remembered by the EAL and reported by the build.
        setup: Some(|| drop(ipfib_dpdk::start_eal())),
    }
}

/// The kernel's BPF LPM trie (`bpf-lpm-trie`), timed through its BPF program
/// ([`crate::bench::native::Bpf`]); where the kernel refuses BPF its build fails with the
/// kernel's reason and the bench leaves it out, saying so.
#[cfg(feature = "bpf")]
fn bpf<A: Address>() -> Contender<A> {
    use crate::bench::native::Bpf;
    Contender {
        name: "bpf-lpm-trie".into(),
        ours: false,
        setup: None,
        build: Box::new(|t: &RouteTable<A>| {
            Ok(Engine::Native(Box::new(Bpf(ipfib_bpf::BpfLpmTrie::build(
                t,
            )?))))
        }),
    }
}

/// The kernel's BPF LPM trie with feature `bpf`, else nothing.
fn bpf_list<A: Address>() -> Vec<Contender<A>> {
    #[cfg(feature = "bpf")]
    {
        vec![bpf()]
    }
    #[cfg(not(feature = "bpf"))]
    Vec::new()
}

/// DPDK's `rte_fib` and `rte_lpm` with feature `dpdk`, else nothing.
fn dpdk_v4() -> Vec<Contender<u32>> {
    #[cfg(feature = "dpdk")]
    {
        vec![
            dpdk("dpdk-fib", ipfib_dpdk::DpdkFib::build),
            dpdk("dpdk-lpm", ipfib_dpdk::DpdkLpm::build),
        ]
    }
    #[cfg(not(feature = "dpdk"))]
    Vec::new()
}

/// DPDK's `rte_fib6` and `rte_lpm6` with feature `dpdk`, else nothing.
fn dpdk_v6() -> Vec<Contender<u128>> {
    #[cfg(feature = "dpdk")]
    {
        vec![
            dpdk("dpdk-fib6", ipfib_dpdk::DpdkFib6::build),
            dpdk("dpdk-lpm6", ipfib_dpdk::DpdkLpm6::build),
        ]
    }
    #[cfg(not(feature = "dpdk"))]
    Vec::new()
}

/// Extra IPv4 comparators: DPDK's `rte_fib` and `rte_lpm` with feature `dpdk`, the kernel's
/// BPF LPM trie with feature `bpf`.
pub fn extra_v4() -> Vec<Contender<u32>> {
    dpdk_v4().into_iter().chain(bpf_list()).collect()
}

/// Extra IPv6 comparators: DPDK's `rte_fib6` and `rte_lpm6` with feature `dpdk`, the kernel's
/// BPF LPM trie with feature `bpf`.
pub fn extra_v6() -> Vec<Contender<u128>> {
    dpdk_v6().into_iter().chain(bpf_list()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names<A: Address>(list: &[Contender<A>]) -> Vec<String> {
        list.iter().map(|c| c.name.clone()).collect()
    }

    #[test]
    fn every_engine_of_ours_comes_first_then_the_peers() {
        let list = all::<u128>();
        let ours: Vec<String> = engine::engines()
            .iter()
            .filter(|e| supports::<u128>(e))
            .map(|e| e.name().into())
            .collect();
        assert_eq!(names(&list)[..ours.len()], ours[..]);
        assert!(list[..ours.len()].iter().all(|c| c.ours));
        assert!(list[ours.len()..].iter().all(|c| !c.ours));
        if cfg!(feature = "peers") {
            let rest = &names(&list)[ours.len()..];
            assert!(rest.iter().any(|n| n == "prefix-trie"), "{rest:?}");
            assert!(rest.iter().any(|n| n == "ip_network_table"), "{rest:?}");
        }
    }

    #[test]
    fn built_contenders_report_their_own_names() {
        let mut t = RouteTable::<u32>::new();
        t.insert_net("10.0.0.0/8".parse().unwrap(), 4).unwrap();
        for c in all::<u32>() {
            let built = match (c.build)(&t) {
                Ok(built) => built,
                // The kernel's trie where the kernel refuses BPF (no root): nothing to check.
                Err(e) if c.name == "bpf-lpm-trie" => {
                    eprintln!("skipped {}: {e}", c.name);
                    continue;
                }
                Err(e) => panic!("{}: {e}", c.name),
            };
            assert_eq!(matches!(built, Engine::Ours { .. }), c.ours, "{}", c.name);
            let e = built.lookup();
            assert_eq!(e.name(), c.name);
            assert_eq!(e.lookup(0x0a01_0101), Some(4), "{}", c.name);
            assert_eq!(e.lookup(0x0b00_0000), None, "{}", c.name);
        }
    }

    #[test]
    fn the_miss_value_is_a_next_hop_no_route_has() {
        let mut t = RouteTable::<u32>::new();
        assert_eq!(unused_next_hop(&t), u32::MAX);
        t.insert_net("10.0.0.0/8".parse().unwrap(), u32::MAX)
            .unwrap();
        t.insert_net("11.0.0.0/8".parse().unwrap(), u32::MAX - 1)
            .unwrap();
        t.insert_net("12.0.0.0/8".parse().unwrap(), u32::MAX - 3)
            .unwrap();
        t.insert_net("13.0.0.0/8".parse().unwrap(), 7).unwrap();
        assert_eq!(unused_next_hop(&t), u32::MAX - 2);
    }

    #[test]
    fn selection_keeps_order_ignores_case_and_refuses_unknown_names() {
        let picked = select(all::<u32>(), &["REFERENCE".into(), "planb".into()]).unwrap();
        assert_eq!(names(&picked), ["planb", "reference"]);
        assert_eq!(select(all::<u32>(), &[]).unwrap().len(), all::<u32>().len());
        // (This test named "dxr" as the unknown engine until DXR was registered.)
        let err = select(all::<u32>(), &["planb".into(), "no-such-engine".into()])
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("\"no-such-engine\"") && err.contains("planb"),
            "{err}"
        );
    }
}
