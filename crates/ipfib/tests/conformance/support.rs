//! What every conformance test shares: building every registered engine with every SIMD
//! backend this CPU runs (the *subjects*), the reference answers, and one comparison that
//! drives every lookup path of a subject (single, batched into `Option`s, batched raw with a
//! chosen miss value, at batch lengths on both sides of the 32-lane groups).
//!
//! Nothing here names an engine: the subjects come from [`ipfib::engine::engines`], so an
//! engine added to the registry is tested by every test without editing one.

use ipfib::engine::reference::Reference;
use ipfib::engine::{self, BuildOptions, EngineInfo, Lookup};
use ipfib::{Address, Backend, BuildError, LookupError, NextHop, Prefix, RouteTable};

/// One built engine under test: which engine, which backend, which family.
pub struct Subject<A: Address> {
    /// `engine/backend family`, for messages.
    pub label: String,
    /// The built lookup structure.
    pub engine: Box<dyn Lookup<A>>,
}

/// Whether `info` supports family `A`: it builds a one-route table of that family, or refuses
/// it with [`BuildError::UnsupportedFamily`] naming itself and the family. Any other outcome
/// fails the test.
pub fn supports<A: Address>(info: &EngineInfo) -> bool {
    let one: RouteTable<A> = [(Prefix::new(A::ZERO, 0).expect("/0"), 1)]
        .into_iter()
        .collect();
    match info.build::<A>(&one, &BuildOptions::default()) {
        Ok(_) => true,
        Err(BuildError::UnsupportedFamily { engine, family }) => {
            assert_eq!(engine, info.name(), "the error names the registered engine");
            assert_eq!(family, A::FAMILY, "the error names the family");
            false
        }
        Err(e) => panic!(
            "{} cannot build a one-route {} table: {e}",
            info.name(),
            A::FAMILY
        ),
    }
}

/// Every engine of `registry` built from `table` with every backend this CPU runs, each
/// validated. An engine that does not support family `A` is left out when `table` has routes
/// (after checking that it refuses them with [`BuildError::UnsupportedFamily`]) and kept when
/// the table is empty (it must build one, and then answer "no route" everywhere, which the
/// comparison checks like any other answer).
pub fn subjects_of<A: Address>(registry: &[EngineInfo], table: &RouteTable<A>) -> Vec<Subject<A>> {
    let mut out = Vec::new();
    for info in registry {
        let supported = supports::<A>(info);
        for backend in Backend::available() {
            let label = format!("{}/{backend} {}", info.name(), A::FAMILY);
            match info.build::<A>(table, &BuildOptions::with_backend(backend)) {
                Ok(engine) => {
                    assert!(
                        supported || table.is_empty(),
                        "{label}: an engine without {} support built {} routes of it",
                        A::FAMILY,
                        table.len()
                    );
                    if supported {
                        assert_eq!(engine.name(), info.name(), "{label}: name()");
                    }
                    if let Err(e) = engine.validate() {
                        panic!("{label}: a structure from the engine's own builder fails validate(): {e}");
                    }
                    out.push(Subject { label, engine });
                }
                Err(BuildError::UnsupportedFamily { engine, family }) if !supported => {
                    assert!(
                        !table.is_empty(),
                        "{label}: an engine must build an empty table of a family it does not support"
                    );
                    assert_eq!((engine, family), (info.name(), A::FAMILY), "{label}");
                }
                Err(e) => panic!(
                    "{label}: cannot build a table of {} routes: {e}",
                    table.len()
                ),
            }
        }
    }
    out
}

/// [`subjects_of`] over the crate's registry.
pub fn subjects<A: Address>(table: &RouteTable<A>) -> Vec<Subject<A>> {
    subjects_of(engine::engines(), table)
}

/// The reference model's answer for every address.
pub fn reference_answers<A: Address>(table: &RouteTable<A>, addrs: &[A]) -> Vec<Option<NextHop>> {
    let reference = Reference::new(table);
    addrs.iter().map(|&a| reference.lookup(a)).collect()
}

/// Batch lengths the chunked runs use: single addresses, less than one 32-lane group, exactly
/// one, one more, around two, and long batches with and without a remainder.
pub const BATCH_LENGTHS: &[usize] = &[1, 2, 31, 32, 33, 63, 64, 65, 100, 1000, 1057];

/// How thoroughly [`check_answers`] drives each subject.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Single lookups of every `single_step`-th address (1 = all of them).
    pub single_step: usize,
    /// The miss values of the raw batches over all addresses.
    pub misses: &'static [NextHop],
    /// Batch lengths of the chunked runs (each length covers the whole window, the last
    /// chunk being the remainder).
    pub batch_lengths: &'static [usize],
    /// Addresses the chunked runs cover: the first ones, or all of them repeated when there
    /// are fewer, so even a short probe list makes full 32-lane groups.
    pub window: usize,
    /// A registered engine that *is* the reference model answers the same code's answers, so
    /// on big tables it is only checked on every `model_step`-th address (its batch paths and
    /// registry plumbing are checked in full on the small tables), with a window as much
    /// smaller.
    pub model_step: usize,
}

/// For small tables: everything, everywhere.
pub const THOROUGH: Plan = Plan {
    single_step: 1,
    misses: &[u32::MAX, 0, 0x8000_0001],
    batch_lengths: BATCH_LENGTHS,
    window: 1100,
    model_step: 1,
};

/// Next-hop value no test table uses as a route (except where a test says so), written into
/// output slots before a call that must not touch them.
pub const SENTINEL: NextHop = 0x5EED_F00D;

/// Collects disagreements and fails with the first few.
struct Mismatches {
    count: usize,
    shown: Vec<String>,
}

impl Mismatches {
    fn new() -> Self {
        Mismatches {
            count: 0,
            shown: Vec::new(),
        }
    }

    fn note<A: Address, T: std::fmt::Debug + PartialEq>(
        &mut self,
        i: usize,
        addr: A,
        got: T,
        want: T,
    ) {
        if got != want {
            self.count += 1;
            if self.shown.len() < 8 {
                self.shown.push(format!(
                    "  #{i} {}: got {got:?}, want {want:?}",
                    addr.to_ip()
                ));
            }
        }
    }

    fn assert_none(self, what: &str) {
        assert!(
            self.count == 0,
            "{what}: {} answers disagree with the reference, first ones:\n{}",
            self.count,
            self.shown.join("\n")
        );
    }
}

/// Checks one subject on `addrs` against `want` (the reference answers), through every lookup
/// path `plan` asks for. Output slots are filled with a wrong value before each batch, so a
/// slot a batch forgets to write is caught.
pub fn check_subject<A: Address>(
    s: &Subject<A>,
    addrs: &[A],
    want: &[Option<NextHop>],
    plan: &Plan,
) {
    assert_eq!(addrs.len(), want.len());
    let label = &s.label;
    let e = s.engine.as_ref();

    let mut m = Mismatches::new();
    for (i, (&a, &w)) in addrs
        .iter()
        .zip(want)
        .enumerate()
        .step_by(plan.single_step.max(1))
    {
        m.note(i, a, e.lookup(a), w);
    }
    m.assert_none(&format!("{label}: single lookups"));

    // The whole list in one batch, into Options.
    let mut out: Vec<Option<NextHop>> = want.iter().map(|w| poison(*w)).collect();
    e.lookup_batch(addrs, &mut out)
        .unwrap_or_else(|err| panic!("{label}: lookup_batch: {err}"));
    let mut m = Mismatches::new();
    for (i, ((&a, &g), &w)) in addrs.iter().zip(&out).zip(want).enumerate() {
        m.note(i, a, g, w);
    }
    m.assert_none(&format!("{label}: lookup_batch of {}", addrs.len()));
    drop(out);

    // The whole list in one raw batch per miss value: the miss exactly where the reference
    // has no route.
    let mut raw = vec![0u32; addrs.len()];
    for &miss in plan.misses {
        for (o, w) in raw.iter_mut().zip(want) {
            *o = w.unwrap_or(miss) ^ 1;
        }
        e.lookup_batch_raw(addrs, &mut raw, miss)
            .unwrap_or_else(|err| panic!("{label}: lookup_batch_raw: {err}"));
        let mut m = Mismatches::new();
        for (i, ((&a, &g), &w)) in addrs.iter().zip(&raw).zip(want).enumerate() {
            m.note(i, a, g, w.unwrap_or(miss));
        }
        m.assert_none(&format!(
            "{label}: lookup_batch_raw of {} with miss {miss:#x}",
            addrs.len()
        ));
    }
    drop(raw);

    // An empty batch is a batch like any other.
    e.lookup_batch(&[], &mut [])
        .unwrap_or_else(|err| panic!("{label}: empty lookup_batch: {err}"));
    e.lookup_batch_raw(&[], &mut [], 0)
        .unwrap_or_else(|err| panic!("{label}: empty lookup_batch_raw: {err}"));
    e.lookup_batch_bytes_raw(&[], &mut [], 0)
        .unwrap_or_else(|err| panic!("{label}: empty lookup_batch_bytes_raw: {err}"));
    if addrs.is_empty() || plan.window == 0 {
        return;
    }
    // Chunked runs: every batch length over the window, both output kinds.
    let win_addrs: Vec<A> = addrs.iter().copied().cycle().take(plan.window).collect();
    let win_want: Vec<Option<NextHop>> =
        want.iter().copied().cycle().take(win_addrs.len()).collect();
    let miss = plan.misses.first().copied().unwrap_or(u32::MAX);
    for &len in plan.batch_lengths {
        let mut m = Mismatches::new();
        let mut mr = Mismatches::new();
        let mut mb = Mismatches::new();
        for (c, (a, w)) in win_addrs.chunks(len).zip(win_want.chunks(len)).enumerate() {
            let bytes: Vec<A::Bytes> = a.iter().map(|a| a.to_be_bytes()).collect();
            let mut from_bytes: Vec<NextHop> = w.iter().map(|w| w.unwrap_or(miss) ^ 1).collect();
            e.lookup_batch_bytes_raw(&bytes, &mut from_bytes, miss)
                .unwrap_or_else(|err| panic!("{label}: lookup_batch_bytes_raw: {err}"));
            for (k, ((&addr, &g), &want)) in a.iter().zip(&from_bytes).zip(w).enumerate() {
                mb.note(c * len + k, addr, g, want.unwrap_or(miss));
            }
            let mut out: Vec<Option<NextHop>> = w.iter().map(|w| poison(*w)).collect();
            e.lookup_batch(a, &mut out)
                .unwrap_or_else(|err| panic!("{label}: lookup_batch of {}: {err}", a.len()));
            let mut raw: Vec<NextHop> = w.iter().map(|w| w.unwrap_or(miss) ^ 1).collect();
            e.lookup_batch_raw(a, &mut raw, miss)
                .unwrap_or_else(|err| panic!("{label}: lookup_batch_raw of {}: {err}", a.len()));
            for (k, (((&addr, &g), &gr), &want)) in a.iter().zip(&out).zip(&raw).zip(w).enumerate()
            {
                m.note(c * len + k, addr, g, want);
                mr.note(c * len + k, addr, gr, want.unwrap_or(miss));
            }
        }
        m.assert_none(&format!("{label}: lookup_batch in batches of {len}"));
        mr.assert_none(&format!("{label}: lookup_batch_raw in batches of {len}"));
        mb.assert_none(&format!(
            "{label}: lookup_batch_bytes_raw in batches of {len}"
        ));
    }
}

/// A wrong `Option` answer for a slot whose right answer is `want`.
fn poison(want: Option<NextHop>) -> Option<NextHop> {
    match want {
        Some(_) => None,
        None => Some(SENTINEL),
    }
}

/// Checks every subject of `table` on `addrs` against the reference; returns how many
/// subjects were checked.
pub fn check_table<A: Address>(table: &RouteTable<A>, addrs: &[A], plan: &Plan) -> usize {
    let want = reference_answers(table, addrs);
    let subjects = subjects(table);
    let model = Reference::<A>::new(&RouteTable::new()).name();
    for s in &subjects {
        if s.engine.name() == model && plan.model_step > 1 {
            let (a, w): (Vec<A>, Vec<Option<NextHop>>) = addrs
                .iter()
                .zip(&want)
                .step_by(plan.model_step)
                .map(|(a, w)| (*a, *w))
                .unzip();
            let plan = Plan {
                window: plan.window / plan.model_step,
                ..*plan
            };
            check_subject(s, &a, &w, &plan);
        } else {
            check_subject(s, addrs, &want, plan);
        }
    }
    subjects.len()
}

/// A batch whose output length differs from its input length is
/// [`LookupError::BatchLength`] and writes nothing; an empty batch is fine.
pub fn check_batch_length_errors<A: Address>(s: &Subject<A>) {
    let label = &s.label;
    let e = s.engine.as_ref();
    for (n_addrs, n_out) in [
        (0, 1),
        (1, 0),
        (3, 2),
        (2, 3),
        (31, 32),
        (33, 32),
        (32, 33),
        (64, 1000),
        (1000, 64),
    ] {
        let addrs: Vec<A> = (0..n_addrs)
            .map(|i| if i % 2 == 0 { A::ZERO } else { A::MAX })
            .collect();
        let want_err = Err(LookupError::BatchLength {
            addrs: n_addrs,
            out: n_out,
        });

        let mut out = vec![Some(SENTINEL); n_out];
        assert_eq!(
            e.lookup_batch(&addrs, &mut out),
            want_err,
            "{label}: lookup_batch {n_addrs} -> {n_out}"
        );
        assert!(
            out.iter().all(|o| *o == Some(SENTINEL)),
            "{label}: lookup_batch {n_addrs} -> {n_out} wrote output despite the error"
        );

        let mut raw = vec![SENTINEL; n_out];
        assert_eq!(
            e.lookup_batch_raw(&addrs, &mut raw, 7),
            want_err,
            "{label}: lookup_batch_raw {n_addrs} -> {n_out}"
        );
        assert!(
            raw.iter().all(|o| *o == SENTINEL),
            "{label}: lookup_batch_raw {n_addrs} -> {n_out} wrote output despite the error"
        );

        let bytes: Vec<A::Bytes> = addrs.iter().map(|a| a.to_be_bytes()).collect();
        assert_eq!(
            e.lookup_batch_bytes_raw(&bytes, &mut raw, 7),
            want_err,
            "{label}: lookup_batch_bytes_raw {n_addrs} -> {n_out}"
        );
        assert!(
            raw.iter().all(|o| *o == SENTINEL),
            "{label}: lookup_batch_bytes_raw {n_addrs} -> {n_out} wrote output despite the error"
        );
    }
    assert_eq!(e.lookup_batch(&[], &mut []), Ok(()), "{label}: empty batch");
    assert_eq!(
        e.lookup_batch_raw(&[], &mut [], 7),
        Ok(()),
        "{label}: empty raw batch"
    );
}

/// Every prefix's first and last address and their neighbours, the cell and chunk boundaries
/// of every engine's layout around its start (/16, /18, /20, /24, /30, /32, /48, /64: PlanB's
/// chunks and cells, Poptrie's direct table and strides, DXR's chunks) with their neighbours,
/// the two ends of the space, and `random` (left-aligned into the family).
pub fn probes<A: Address>(table: &RouteTable<A>, random: &[u128]) -> Vec<A> {
    let mut out: Vec<A> = random.iter().map(|&r| A::from_u128_left(r)).collect();
    out.extend([A::ZERO, A::MAX]);
    let edge = |a: A, out: &mut Vec<A>| {
        out.push(a);
        out.extend(a.checked_succ());
        out.extend(a.checked_pred());
    };
    for (p, _) in table.iter() {
        edge(p.first(), &mut out);
        edge(p.last(), &mut out);
        for len in [16u8, 18, 20, 24, 30, 32, 48, 64] {
            if len < p.len() && len < A::BITS {
                let cell = Prefix::covering(p.first(), len);
                edge(cell.first(), &mut out);
                edge(cell.last(), &mut out);
            }
        }
    }
    out
}

/// An address inside `p`: its first address with the host bits taken from `bits`.
pub fn inside<A: Address>(p: Prefix<A>, bits: u128) -> A {
    p.first()
        .or(A::from_u128_left(bits).and(A::mask(p.len()).not()))
}
