//! The operation sequence of `ipfib bench-ops` for each structure: insert every route into an
//! empty structure, look up the trace, update every route's next hop, delete every route,
//! then free a full one; each phase timed, and the answers checked after the inserts, the
//! updates and the deletes.

use std::time::{Duration, Instant};

use ipfib::{engine::patricia::Patricia, LiveFib, Lookup, NextHop, Prefix, Reader, Table, Update};

use crate::bench_ops::{OpsFamily, Work};

/// One timed phase: `count` operations in `time`.
#[derive(Clone, Copy, Debug)]
pub struct Measured {
    /// The operation.
    pub op: Op,
    /// Operations timed.
    pub count: usize,
    /// Their time.
    pub time: Duration,
}

/// The operations measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// A route inserted.
    Insert,
    /// An address looked up.
    Lookup,
    /// An existing route given another next hop.
    Update,
    /// A route removed.
    Delete,
    /// The whole table dropped (count 1).
    Free,
}

impl Op {
    /// The name in the report.
    pub fn name(self) -> &'static str {
        match self {
            Op::Insert => "insert",
            Op::Lookup => "lookup",
            Op::Update => "update",
            Op::Delete => "delete",
            Op::Free => "free",
        }
    }
}

fn timed(op: Op, count: usize, f: impl FnOnce() -> anyhow::Result<()>) -> anyhow::Result<Measured> {
    let start = Instant::now();
    f()?;
    Ok(Measured {
        op,
        count,
        time: start.elapsed(),
    })
}

/// Fails naming the structure, the phase and the first address answered wrongly.
fn check<A: OpsFamily>(
    who: &str,
    phase: &str,
    trace: &[A],
    got: &[Option<NextHop>],
    want: &[Option<NextHop>],
) -> anyhow::Result<()> {
    if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
        anyhow::bail!(
            "{who} after the {phase}: {} answers {:?}, the reference {:?}",
            trace[i].to_ip(),
            got[i],
            want[i]
        );
    }
    Ok(())
}

fn reader_answers<A: OpsFamily>(
    reader: &mut Reader,
    trace: &[A],
) -> anyhow::Result<Vec<Option<NextHop>>> {
    let mut raw = vec![0; trace.len()];
    A::reader_batch(reader, trace, &mut raw, NextHop::MAX)?;
    Ok(raw
        .into_iter()
        .map(|nh| (nh != NextHop::MAX).then_some(nh))
        .collect())
}

/// Ours: Patricia, changed in place one route at a time.
pub fn patricia<A: OpsFamily>(w: &Work<A>) -> anyhow::Result<Vec<Measured>> {
    let mut out = Vec::new();
    let mut p = Patricia::<A>::new();
    out.push(timed(Op::Insert, w.routes.len(), || {
        for &(prefix, nh) in &w.routes {
            p.insert(prefix, nh);
        }
        Ok(())
    })?);
    let mut got = vec![None; w.trace.len()];
    p.lookup_batch(&w.trace, &mut got)?;
    check("patricia", "inserts", &w.trace, &got, &w.expected)?;
    out.push(timed(Op::Lookup, w.trace.len(), || {
        Ok(p.lookup_batch(&w.trace, &mut got)?)
    })?);
    out.push(timed(Op::Update, w.routes.len(), || {
        for &(prefix, nh) in &w.routes {
            p.insert(prefix, nh ^ 1);
        }
        Ok(())
    })?);
    p.lookup_batch(&w.trace, &mut got)?;
    check("patricia", "updates", &w.trace, &got, &w.updated)?;
    out.push(timed(Op::Delete, w.routes.len(), || {
        for &(prefix, _) in &w.routes {
            p.remove(prefix);
        }
        Ok(())
    })?);
    p.lookup_batch(&w.trace, &mut got)?;
    check(
        "patricia",
        "deletes",
        &w.trace,
        &got,
        &vec![None; w.trace.len()],
    )?;
    let mut full = Patricia::<A>::new();
    for &(prefix, nh) in &w.routes {
        full.insert(prefix, nh);
    }
    out.push(timed(Op::Free, 1, || {
        drop(full);
        Ok(())
    })?);
    Ok(out)
}

fn updates<A: OpsFamily>(
    routes: &[(Prefix<A>, NextHop)],
    f: impl Fn(NextHop) -> Option<NextHop>,
) -> Vec<Update> {
    routes
        .iter()
        .map(|&(p, nh)| match f(nh) {
            Some(nh) => Update::Insert(A::ipnet(p), nh),
            None => Update::Remove(A::ipnet(p)),
        })
        .collect()
}

/// Applies `updates` in batches of `batch` (all at once for 0), each published before the
/// next is submitted.
fn apply_batched(live: &LiveFib, updates: Vec<Update>, batch: usize) -> anyhow::Result<()> {
    let size = if batch == 0 {
        updates.len().max(1)
    } else {
        batch
    };
    let mut it = updates.into_iter().peekable();
    while it.peek().is_some() {
        live.apply(it.by_ref().take(size))?;
        live.flush()?;
    }
    Ok(())
}

/// Ours: `LiveFib`, changes coalesced into batches of `w.batch` updates (all in one for 0),
/// each published (flushed) before the next; a lookup is a `Reader` batch lookup.
pub fn live_coalesced<A: OpsFamily>(w: &Work<A>) -> anyhow::Result<Vec<Measured>> {
    let who = "livefib-coalesced";
    let mut out = Vec::new();
    let live = LiveFib::new(&Table::new(), w.engine)?;
    let mut reader = live.reader();
    let inserts = updates(&w.routes, Some);
    out.push(timed(Op::Insert, w.routes.len(), || {
        apply_batched(&live, inserts, w.batch)
    })?);
    reader.refresh();
    check(
        who,
        "inserts",
        &w.trace,
        &reader_answers(&mut reader, &w.trace)?,
        &w.expected,
    )?;
    let mut raw = vec![0; w.trace.len()];
    out.push(timed(Op::Lookup, w.trace.len(), || {
        Ok(A::reader_batch(
            &mut reader,
            &w.trace,
            &mut raw,
            NextHop::MAX,
        )?)
    })?);
    let changes = updates(&w.routes, |nh| Some(nh ^ 1));
    out.push(timed(Op::Update, w.routes.len(), || {
        apply_batched(&live, changes, w.batch)
    })?);
    reader.refresh();
    check(
        who,
        "updates",
        &w.trace,
        &reader_answers(&mut reader, &w.trace)?,
        &w.updated,
    )?;
    let removes = updates(&w.routes, |_| None);
    out.push(timed(Op::Delete, w.routes.len(), || {
        apply_batched(&live, removes, w.batch)
    })?);
    reader.refresh();
    let none = vec![None; w.trace.len()];
    check(
        who,
        "deletes",
        &w.trace,
        &reader_answers(&mut reader, &w.trace)?,
        &none,
    )?;
    drop((reader, live));
    let full = LiveFib::new(&w.table(), w.engine)?;
    out.push(timed(Op::Free, 1, || {
        drop(full);
        Ok(())
    })?);
    Ok(out)
}

/// Ours: `LiveFib`, every update published on its own (submitted, then flushed) before the
/// next; `w.per_update` of each kind are timed: inserts of the last routes into a table
/// holding the others, updates of the first, deletes of the last.
pub fn live_per_update<A: OpsFamily>(w: &Work<A>) -> anyhow::Result<Vec<Measured>> {
    let who = "livefib-per-update";
    // At most half the table, so the inserted (last) and updated (first) routes differ.
    let k = w.per_update.min(w.routes.len() / 2);
    let (head, tail) = w.routes.split_at(w.routes.len() - k);
    let mut start = Table::new();
    for &(p, nh) in head {
        start.insert(A::ipnet(p), nh)?;
    }
    let live = LiveFib::new(&start, w.engine)?;
    let mut reader = live.reader();
    let one_by_one = |ups: Vec<Update>| -> anyhow::Result<()> {
        for u in ups {
            live.apply([u])?;
            live.flush()?;
        }
        Ok(())
    };
    let mut out = vec![timed(Op::Insert, k, || one_by_one(updates(tail, Some)))?];
    reader.refresh();
    check(
        who,
        "inserts",
        &w.trace,
        &reader_answers(&mut reader, &w.trace)?,
        &w.expected,
    )?;
    out.push(timed(Op::Update, k, || {
        one_by_one(updates(&w.routes[..k], |nh| Some(nh ^ 1)))
    })?);
    out.push(timed(Op::Delete, k, || {
        one_by_one(updates(tail, |_| None))
    })?);
    // The rest, untimed, so the answers can be checked against the fully updated table: the
    // first k were updated above, the last k deleted, these are the others.
    let rest = updates(&w.routes[k..w.routes.len() - k], |nh| Some(nh ^ 1));
    live.apply(rest)?;
    live.apply(updates(tail, |nh| Some(nh ^ 1)))?;
    live.flush()?;
    reader.refresh();
    check(
        who,
        "updates and deletes",
        &w.trace,
        &reader_answers(&mut reader, &w.trace)?,
        &w.updated,
    )?;
    Ok(out)
}

/// The kernel's BPF LPM trie: every operation by the BPF program through
/// BPF_PROG_TEST_RUN, 10,000 per run (as the kernel's selftest benchmark), keys written to
/// its slots array before each timed phase; the free is the kernel's own time
/// (`bpf_map_free_deferred`), or skipped with the reason when the probe cannot attach.
#[cfg(feature = "bpf")]
pub fn bpf<A: OpsFamily>(
    w: &Work<A>,
    probe: &Result<ipfib_bpf::FreeProbe, ipfib_bpf::BpfError>,
) -> anyhow::Result<(Vec<Measured>, Option<String>)> {
    use ipfib_bpf::{BpfLpmTrie, Op as K, Slot};
    let who = "bpf-lpm-trie";
    let n = w.routes.len();
    let slots = n.max(w.trace.len());
    let trie = BpfLpmTrie::<A>::empty(n, slots)?;
    let routes: Vec<Slot> = w
        .routes
        .iter()
        .map(|&(p, nh)| Slot::prefix(p, nh))
        .collect();
    let changed: Vec<Slot> = w
        .routes
        .iter()
        .map(|&(p, nh)| Slot::prefix(p, nh ^ 1))
        .collect();
    let keys: Vec<Slot> = w.trace.iter().map(|&a| Slot::address(a)).collect();
    let mut got = vec![None; w.trace.len()];
    let mut answers = |trie: &BpfLpmTrie<A>| -> anyhow::Result<Vec<Option<NextHop>>> {
        trie.load(0, &keys)?;
        trie.answers(0..keys.len(), &mut got)?;
        Ok(got.clone())
    };
    let mut out = Vec::new();
    trie.load(0, &routes)?;
    out.push(timed(Op::Insert, n, || {
        Ok(trie.run(K::Insert, 0..n).map(drop)?)
    })?);
    check(who, "inserts", &w.trace, &answers(&trie)?, &w.expected)?;
    trie.load(0, &keys)?;
    out.push(timed(Op::Lookup, keys.len(), || {
        Ok(trie.run(K::Lookup, 0..keys.len()).map(drop)?)
    })?);
    trie.load(0, &changed)?;
    out.push(timed(Op::Update, n, || {
        Ok(trie.run(K::Update, 0..n).map(drop)?)
    })?);
    check(who, "updates", &w.trace, &answers(&trie)?, &w.updated)?;
    trie.load(0, &routes)?;
    out.push(timed(Op::Delete, n, || {
        Ok(trie.run(K::Delete, 0..n).map(drop)?)
    })?);
    check(
        who,
        "deletes",
        &w.trace,
        &answers(&trie)?,
        &vec![None; w.trace.len()],
    )?;
    let skipped = match probe {
        Ok(probe) => {
            trie.load(0, &routes)?;
            trie.run(K::Insert, 0..n)?;
            let time = probe.free(trie)?;
            out.push(Measured {
                op: Op::Free,
                count: 1,
                time,
            });
            None
        }
        Err(e) => Some(format!("free not measured: {e}")),
    };
    Ok((out, skipped))
}
