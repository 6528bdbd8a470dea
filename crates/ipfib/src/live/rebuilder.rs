//! The background rebuilder: takes the queued updates, applies them to the route set, builds
//! the engines of the families they touched and publishes the new version.
//!
//! One thread does all building, so writers never wait for a build (they only append to the
//! queue under a short lock) and versions are published in submission order. While a build
//! runs, new updates queue up and go into the next version together: under a burst, the
//! number of publishes adapts to the build time instead of falling behind.

use std::collections::HashSet;
use std::mem;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, TryLockError};
use std::time::{Duration, Instant};

use super::current::Current;
use super::snapshot::Engine;
use super::update::{Families, Op};
use super::Snapshot;
use crate::addr::Address;
use crate::engine::{BuildOptions, EngineInfo};
use crate::error::BuildError;
use crate::prefix::Prefix;
use crate::route_table::RouteTable;
use crate::table::Table;

/// A publish: every update up to sequence number `upto` became visible to new lookups at `at`
/// (also recorded, with the unchanged version number, when a batch changed no route).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Publish {
    /// The sequence number of the last update it contains (see [`super::LiveFib::insert`]).
    pub upto: u64,
    /// When the rebuilder took its updates from the queue (what came before is waiting for the
    /// coalescing delay or for the rebuilder; what comes after is building).
    pub taken: Instant,
    /// When the new version was stored (new lookups see it from then on).
    pub at: Instant,
    /// The version number published.
    pub version: u64,
}

/// What writers, the rebuilder and `flush` share under one lock.
#[derive(Default)]
pub(super) struct Queue {
    /// Accepted updates not yet taken by the rebuilder, in submission order.
    pub pending: Vec<Op>,
    /// When the oldest pending update was accepted.
    pub first_pending_at: Option<Instant>,
    /// Sequence number of the last accepted update (the first is 1).
    pub submitted: u64,
    /// Sequence number of the last update visible to new lookups.
    pub published: u64,
    /// A `flush` is waiting: publish without waiting for the coalescing delay.
    pub urgent: bool,
    /// The live table is being dropped: publish what is pending, then stop.
    pub shutdown: bool,
    /// The rebuilder thread has ended (normally or by a panic).
    pub stopped: bool,
    /// The last build failure and the sequence number of the last update it covered; cleared
    /// by the next successful publish.
    pub error: Option<(BuildError, u64)>,
    /// Versions stored so far.
    pub publishes: u64,
    /// Publish records, when asked for ([`super::LiveOptions::record_publishes`]).
    pub log: Option<Vec<Publish>>,
    /// A publish happened since the engines last had nothing to compact: run compaction
    /// steps while no update waits.
    pub compact: bool,
    /// Bounded steps are done but the engines may still be split (several segments): once
    /// the table has been quiet for [`SETTLE_AFTER`], one settling step.
    pub settle: bool,
    /// When the last version with new routes was stored.
    pub last_publish_at: Option<Instant>,
}

/// The route set of the last publish, kept by the rebuilder (and read by
/// [`super::LiveFib::table`]), with the prefixes changed since the last successful build.
pub(super) struct Routes {
    pub v4: RouteTable<u32>,
    pub v6: RouteTable<u128>,
    changed4: Vec<Prefix<u32>>,
    changed6: Vec<Prefix<u128>>,
}

impl Routes {
    pub fn new(table: &Table) -> Self {
        Routes {
            v4: table.v4().clone(),
            v6: table.v6().clone(),
            changed4: Vec::new(),
            changed6: Vec::new(),
        }
    }

    fn apply(&mut self, op: Op) {
        match op {
            Op::Insert4(p, nh) => {
                if self.v4.insert(p, nh) != Some(nh) {
                    self.changed4.push(p);
                }
            }
            Op::Insert6(p, nh) => {
                if self.v6.insert(p, nh) != Some(nh) {
                    self.changed6.push(p);
                }
            }
            Op::Remove4(p) => {
                if self.v4.remove(p).is_some() {
                    self.changed4.push(p);
                }
            }
            Op::Remove6(p) => {
                if self.v6.remove(p).is_some() {
                    self.changed6.push(p);
                }
            }
            Op::ReplaceAll(table) => {
                let (v4, v6) = table.into_families();
                diff(&self.v4, &v4, &mut self.changed4);
                diff(&self.v6, &v6, &mut self.changed6);
                self.v4 = v4;
                self.v6 = v6;
            }
        }
    }
}

/// Appends the prefixes whose route differs between `old` and `new`.
fn diff<A: Address>(old: &RouteTable<A>, new: &RouteTable<A>, changed: &mut Vec<Prefix<A>>) {
    let new_set: HashSet<_> = new.iter().collect();
    changed.extend(old.iter().filter(|r| !new_set.contains(r)).map(|(p, _)| p));
    changed.extend(
        new.iter()
            .filter(|&(p, nh)| old.get(p) != Some(nh))
            .map(|(p, _)| p),
    );
}

/// Everything the live table and its rebuilder thread share.
pub(super) struct Shared {
    pub current: Arc<Current>,
    pub engine: &'static EngineInfo,
    pub build: BuildOptions,
    pub delay: Duration,
    /// The most updates `pending` holds before writers wait ([`super::LiveOptions::max_queued`]).
    pub max_queued: usize,
    pub families: Families,
    pub queue: Mutex<Queue>,
    /// Wakes the rebuilder: updates queued, a flush, a writer waiting for room, shutdown.
    pub wake: Condvar,
    /// Wakes `flush` callers: a publish, a failure, the thread's end.
    pub done: Condvar,
    /// Wakes writers waiting for room in the queue: the rebuilder took the pending updates,
    /// or the thread ended.
    pub room: Condvar,
    pub routes: Mutex<Routes>,
}

/// Locks, ignoring poisoning: every critical section leaves the data consistent (they only
/// push, take or assign), so a panic elsewhere must not take the live table down with it.
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Marks the thread stopped however it ends, so `flush` and writers report
/// [`crate::LiveError::Closed`] instead of waiting forever.
struct Stopped<'a>(&'a Shared);

impl Drop for Stopped<'_> {
    fn drop(&mut self) {
        lock(&self.0.queue).stopped = true;
        self.0.done.notify_all();
        self.0.room.notify_all();
    }
}

/// The rebuilder thread's body.
pub(super) fn run(shared: Arc<Shared>) {
    let _stopped = Stopped(&shared);
    while let Some(work) = next_work(&shared) {
        let (ops, upto, taken) = match work {
            Work::Publish(ops, upto) => (ops, upto, Instant::now()),
            Work::Compact { settled } => {
                let more = compact(&shared, settled);
                let mut q = lock(&shared.queue);
                if settled {
                    q.settle = more;
                } else {
                    q.compact = more;
                }
                continue;
            }
        };
        let result = publish(&shared, ops);
        let mut q = lock(&shared.queue);
        match result {
            Ok(Some(published)) => {
                q.compact = true;
                q.settle = true;
                q.last_publish_at = Some(published.at);
                q.published = upto;
                q.error = None;
                q.publishes += 1;
                if let Some(log) = q.log.as_mut() {
                    log.push(Publish {
                        upto,
                        taken,
                        ..published
                    });
                }
            }
            // Nothing changed (re-announcements with the same next hop): visible already,
            // in the version that is current.
            Ok(None) => {
                q.published = upto;
                let version = shared.current.load().version();
                if let Some(log) = q.log.as_mut() {
                    log.push(Publish {
                        upto,
                        taken,
                        at: Instant::now(),
                        version,
                    });
                }
            }
            Err(e) => q.error = Some((e, upto)),
        }
        drop(q);
        shared.done.notify_all();
    }
}

/// How long no update must have been published before compaction steps run.
const COMPACT_AFTER: Duration = Duration::from_millis(2);
/// How long no update must have been published before a settling step (one that may take
/// work proportional to the table: PlanB copies every tree back into one segment).
const SETTLE_AFTER: Duration = Duration::from_millis(50);

/// What the rebuilder does next.
enum Work {
    /// Publish these updates (everything queued, up to this sequence number).
    Publish(Vec<Op>, u64),
    /// Nothing is queued and the engines may hold dead space: one compaction step (settling:
    /// work proportional to the table, after a long quiet spell).
    Compact {
        /// See [`Lookup::compact`](crate::engine::Lookup::compact).
        settled: bool,
    },
}

/// Waits for updates, then for the coalescing delay (cut short by a flush or shutdown), and
/// takes everything queued; with nothing queued after a publish, asks for compaction steps
/// first. `None`: shutdown with nothing pending.
fn next_work(shared: &Shared) -> Option<Work> {
    let mut q = lock(&shared.queue);
    loop {
        if q.pending.is_empty() {
            if q.shutdown {
                return None;
            }
            if q.compact || q.settle {
                // Compact only after a quiet spell, so that a burst of updates is not
                // interleaved with compaction steps; settle after a long one.
                let quiet = q.last_publish_at.map_or(Duration::MAX, |t| t.elapsed());
                let (after, settled) = if q.compact {
                    (COMPACT_AFTER, false)
                } else {
                    (SETTLE_AFTER, true)
                };
                if quiet >= after {
                    return Some(Work::Compact { settled });
                }
                q = shared
                    .wake
                    .wait_timeout(q, after - quiet)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
                continue;
            }
            q = shared.wake.wait(q).unwrap_or_else(PoisonError::into_inner);
            continue;
        }
        if q.urgent || q.shutdown {
            break;
        }
        // A delay past the clock's range (`Duration::MAX`) never comes due: such updates are
        // published by a flush, a wait for visibility or the table's drop.
        let due = q
            .first_pending_at
            .unwrap_or_else(Instant::now)
            .checked_add(shared.delay);
        let now = Instant::now();
        q = match due {
            Some(due) if now >= due => break,
            Some(due) => {
                shared
                    .wake
                    .wait_timeout(q, due - now)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0
            }
            None => shared.wake.wait(q).unwrap_or_else(PoisonError::into_inner),
        };
    }
    q.urgent = false;
    q.first_pending_at = None;
    shared.room.notify_all();
    Some(Work::Publish(mem::take(&mut q.pending), q.submitted))
}

/// One compaction step of both families' engines ([`Lookup::compact`](crate::engine::Lookup::compact), settling or not),
/// published as a new version with the same routes. False when neither engine had anything to
/// compact (or a step failed: the engine in use stays, and compaction waits for the next
/// publish). A step gives up when an update arrives meanwhile (true: try again later), so an
/// update waits for no settling copy; what a step finished before that is published.
fn compact(shared: &Shared, settled: bool) -> bool {
    let interrupted = || updates_waiting(shared);
    let prev = shared.current.load_full();
    let v4 = prev.v4.get().compact(&shared.build, settled, &interrupted);
    let v6 = if interrupted() {
        None
    } else {
        prev.v6.get().compact(&shared.build, settled, &interrupted)
    };
    let (v4, v6) = (v4.and_then(Result::ok), v6.and_then(Result::ok));
    if v4.is_none() && v6.is_none() {
        // Nothing done: finished, or cut short by an update (then again after it).
        return interrupted();
    }
    shared.current.store(Snapshot {
        version: prev.version + 1,
        engine: prev.engine,
        v4: v4.map_or_else(|| prev.v4.clone(), Engine::new),
        v6: v6.map_or_else(|| prev.v6.clone(), Engine::new),
    });
    true
}

/// Whether an update waits: polled by compaction steps. A writer holding the queue's lock
/// right now counts as one, so the poll never blocks. (A flush with nothing queued does not:
/// it waits for nothing.)
fn updates_waiting(shared: &Shared) -> bool {
    match shared.queue.try_lock() {
        Ok(q) => !q.pending.is_empty(),
        Err(TryLockError::WouldBlock) => true,
        Err(TryLockError::Poisoned(q)) => !q.into_inner().pending.is_empty(),
    }
}

/// Applies `ops` and publishes a version with the touched families rebuilt. `Ok(None)` when
/// the route set did not change.
fn publish(shared: &Shared, ops: Vec<Op>) -> Result<Option<Publish>, BuildError> {
    // Held until the version is stored, so `LiveFib::table` shows a published set (except
    // after a failed build: the changes stay applied, to be retried by the next publish, and
    // `table` shows them; see its documentation).
    let mut routes = lock(&shared.routes);
    for op in ops {
        routes.apply(op);
    }
    if routes.changed4.is_empty() && routes.changed6.is_empty() {
        return Ok(None);
    }
    let prev = shared.current.load_full();
    let Routes {
        v4,
        v6,
        changed4,
        changed6,
    } = &mut *routes;
    let new4 = rebuild(shared, &prev.v4, v4, changed4)?;
    let new6 = rebuild(shared, &prev.v6, v6, changed6)?;
    let version = prev.version + 1;
    shared.current.store(Snapshot {
        version,
        engine: shared.engine.name(),
        v4: new4,
        v6: new6,
    });
    let at = Instant::now();
    // Only now are the changes in a published version; a failed build keeps them for the
    // next attempt.
    changed4.clear();
    changed6.clear();
    Ok(Some(Publish {
        upto: 0,
        taken: at,
        at,
        version,
    }))
}

/// One family's engine for the new version: the old one when nothing of it changed, else the
/// engine's own partial rebuild, else a build from scratch.
fn rebuild<A: Address>(
    shared: &Shared,
    prev: &Engine<A>,
    table: &RouteTable<A>,
    changed: &mut Vec<Prefix<A>>,
) -> Result<Engine<A>, BuildError> {
    if changed.is_empty() {
        return Ok(prev.clone());
    }
    changed.sort_unstable();
    changed.dedup();
    let built = match prev.get().rebuild(table, changed, &shared.build) {
        Some(partial) => partial?,
        None => shared.engine.build(table, &shared.build)?,
    };
    Ok(Engine::new(built))
}
