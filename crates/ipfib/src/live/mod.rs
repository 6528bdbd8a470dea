//! [`LiveFib`]: a forwarding table that changes while any number of threads look up in it.
//!
//! # Design
//!
//! * **Versions.** Lookups go to an immutable [`Snapshot`] (both families' engines). A change
//!   never touches a published snapshot: the background rebuilder builds a new one and swaps a
//!   single pointer, so a lookup sees the old version or the new one, never a mix.
//! * **Readers** hold a [`Reader`] each. The pointer is an [`arc_swap::ArcSwap`] with the
//!   version number beside it, and a reader keeps the version it last used with its own
//!   references to that version's engines: a lookup costs one atomic load of the number and a
//!   compare before the engine's own search, with no lock, no retry loop and no write to
//!   shared memory (reference counts are touched once per publish, not per lookup). We chose
//!   arc-swap over crossbeam-epoch (every read pins the epoch: a write to a per-thread slot
//!   and fences on every lookup) and left-right (a second copy of every table, and writers
//!   wait for readers to leave): with the version check the steady-state read path is as
//!   cheap as reading a plain pointer. An old version is freed when the last reader that
//!   held it moves on (its next lookup) or is dropped.
//! * **Writers** ([`LiveFib::insert`], [`LiveFib::remove`], [`LiveFib::apply`],
//!   [`LiveFib::replace_all`]) are checked on submission (a typed [`LiveError`]; nothing of a
//!   refused batch is queued) and appended to a queue under a short lock, from any thread. Each
//!   accepted update gets a sequence number and is never lost: the rebuilder publishes it,
//!   also when the table is dropped.
//! * **Backpressure.** The queue holds at most [`LiveOptions::max_queued`] updates. A writer
//!   whose batch does not fit waits (and hurries the rebuilder) until the rebuilder has taken
//!   the queue; [`LiveFib::try_apply`] returns [`LiveError::QueueFull`] instead of waiting. So
//!   memory follows the table and the bound, not how fast writers submit: writers that
//!   outpace the builds are slowed to their pace. A single batch larger than the bound is
//!   accepted when the queue is empty (it could never fit otherwise).
//! * **The rebuilder** (one thread, [`rebuilder`]) waits at most
//!   [`LiveOptions::delay`] after the first queued update, takes everything queued, applies it
//!   to its route set and rebuilds only the families that changed, asking the old engine to
//!   reuse what the changes do not touch ([`crate::Lookup::rebuild`]; engines that cannot,
//!   build from scratch). Publication itself is a pointer swap; the route set is updated in
//!   place (never copied), so its cost apart from the engine build does not grow with the
//!   table. [`LiveFib::flush`] skips the delay and returns once every earlier update is
//!   visible to new lookups.
//!
//! ```
//! use ipfib::{LiveFib, Table};
//!
//! let mut table = Table::new();
//! table.insert("10.0.0.0/8".parse().unwrap(), 1).unwrap();
//! let live = LiveFib::new(&table, "planb").unwrap();
//!
//! // A reader thread keeps its own handle.
//! let mut reader = live.reader();
//! assert_eq!(reader.lookup("10.1.2.3".parse().unwrap()), Some(1));
//!
//! // Writers submit from any thread; flush waits until the change is visible.
//! live.insert("10.1.0.0/16".parse().unwrap(), 2).unwrap();
//! live.flush().unwrap();
//! assert_eq!(reader.lookup("10.1.2.3".parse().unwrap()), Some(2));
//!
//! // Bad input is refused up front, with a typed error.
//! assert!(live.insert("10.1.0.1/16".parse().unwrap(), 3).is_err());
//! ```

mod current;
mod reader;
pub mod rebuilder;
mod snapshot;
mod update;

use std::net::IpAddr;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ipnet::IpNet;

pub use reader::Reader;
pub use rebuilder::Publish;
pub use snapshot::Snapshot;
pub use update::Update;

use crate::engine::{self, BuildOptions};
use crate::error::{BuildError, LiveError};
use crate::route_table::NextHop;
use crate::table::Table;
use current::Current;
use rebuilder::{lock, Queue, Routes, Shared};
use snapshot::Engine;
use update::Families;

/// How a [`LiveFib`] publishes.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LiveOptions {
    /// The longest an accepted update waits for others to be published with it (measured
    /// from the oldest queued update). Shorter: each change visible sooner; longer: fewer
    /// builds under a burst. Default 100 µs.
    pub delay: Duration,
    /// Options of every engine build.
    pub build: BuildOptions,
    /// Keep a [`Publish`] record of every publish, for [`LiveFib::take_publishes`] (what
    /// `ipfib replay` measures visibility with). Off by default: the log grows per publish.
    pub record_publishes: bool,
    /// The most updates waiting to be published before writers wait for the rebuilder
    /// ([`LiveFib::try_apply`]: before it refuses). Default [`DEFAULT_MAX_QUEUED`].
    pub max_queued: usize,
}

/// The default [`LiveOptions::max_queued`]: 262,144 updates, about 10 MiB of queue (40 bytes
/// an update), more than a full IPv4 table's worth of changes per publish.
pub const DEFAULT_MAX_QUEUED: usize = 1 << 18;

impl Default for LiveOptions {
    fn default() -> Self {
        LiveOptions {
            delay: Duration::from_micros(100),
            build: BuildOptions::default(),
            record_publishes: false,
            max_queued: DEFAULT_MAX_QUEUED,
        }
    }
}

impl LiveOptions {
    /// These options with another coalescing delay. A delay past the clock's range (such as
    /// `Duration::MAX`) never comes due: updates are then published only by
    /// [`LiveFib::flush`] or when the table is dropped.
    pub fn with_delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// These options with other build options.
    pub fn with_build(mut self, build: BuildOptions) -> Self {
        self.build = build;
        self
    }

    /// These options with another queue bound (at least 1).
    pub fn with_max_queued(mut self, max_queued: usize) -> Self {
        self.max_queued = max_queued.max(1);
        self
    }

    /// These options, recording every publish (or not).
    pub fn with_publish_log(mut self, on: bool) -> Self {
        self.record_publishes = on;
        self
    }
}

/// A forwarding table of both families that changes while it is read. See the [module
/// documentation](self) for how it works.
///
/// Dropping it publishes whatever is still queued, then stops and joins the rebuilder thread.
/// [`Reader`]s outlive it: they keep answering from the last version.
pub struct LiveFib {
    shared: Arc<Shared>,
    worker: Option<JoinHandle<()>>,
}

impl LiveFib {
    /// A live table holding `table`, built by the engine named `engine` (ASCII case ignored),
    /// with default [`LiveOptions`].
    pub fn new(table: &Table, engine: &str) -> Result<LiveFib, BuildError> {
        LiveFib::with_options(table, engine, LiveOptions::default())
    }

    /// [`LiveFib::new`] with options.
    pub fn with_options(
        table: &Table,
        engine: &str,
        mut options: LiveOptions,
    ) -> Result<LiveFib, BuildError> {
        let info = engine::by_name(engine)?;
        options.build.for_updates = true;
        let first = Snapshot {
            version: 0,
            engine: info.name(),
            v4: Engine::new(info.build(table.v4(), &options.build)?),
            v6: Engine::new(info.build(table.v6(), &options.build)?),
        };
        let families = Families {
            engine: info.name(),
            v4: info.supports::<u32>(&options.build)?,
            v6: info.supports::<u128>(&options.build)?,
        };
        let shared = Arc::new(Shared {
            current: Arc::new(Current::new(first)),
            engine: info,
            build: options.build,
            delay: options.delay,
            max_queued: options.max_queued.max(1),
            families,
            queue: Mutex::new(Queue {
                log: options.record_publishes.then(Vec::new),
                ..Queue::default()
            }),
            wake: Condvar::new(),
            done: Condvar::new(),
            room: Condvar::new(),
            routes: Mutex::new(Routes::new(table)),
        });
        let worker = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("ipfib-rebuilder".into())
                .spawn(move || rebuilder::run(shared))
                .map_err(|e| BuildError::Unsupported {
                    engine: info.name(),
                    reason: format!("cannot start the rebuilder thread: {e}"),
                })?
        };
        Ok(LiveFib {
            shared,
            worker: Some(worker),
        })
    }

    /// A new reader handle, for one thread's lookups (see [`Reader`]).
    pub fn reader(&self) -> Reader {
        Reader::new(Arc::clone(&self.shared.current))
    }

    /// The current version. Holding it keeps that version in memory.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.shared.current.load_full()
    }

    /// One lookup in the current version, without a reader handle. Convenient, but it
    /// registers the read with arc-swap (a write to a per-thread slot); hot loops should use a
    /// [`Reader`].
    pub fn lookup(&self, addr: IpAddr) -> Option<NextHop> {
        self.shared.current.load().lookup(addr)
    }

    /// The route that matches `addr` in the route set of the last publish. This is a control
    /// plane query: it waits for a build in progress to finish.
    pub fn lookup_prefix(&self, addr: IpAddr) -> Option<(IpNet, NextHop)> {
        let routes = lock(&self.shared.routes);
        match addr {
            IpAddr::V4(a) => routes
                .v4
                .longest_match(u32::from(a))
                .map(|(p, nh)| (IpNet::V4(p.to_net()), nh)),
            IpAddr::V6(a) => routes
                .v6
                .longest_match(u128::from(a))
                .map(|(p, nh)| (IpNet::V6(p.to_net()), nh)),
        }
    }

    /// Inserts a route, or gives an existing one this next hop. Returns the update's sequence
    /// number (see [`LiveFib::wait_visible`]). A prefix with host bits set, or of a family the
    /// engine does not support, is refused.
    pub fn insert(&self, net: IpNet, next_hop: NextHop) -> Result<u64, LiveError> {
        self.apply([Update::Insert(net, next_hop)])
    }

    /// Removes a route (no change if it is absent). Returns the sequence number.
    pub fn remove(&self, net: IpNet) -> Result<u64, LiveError> {
        self.apply([Update::Remove(net)])
    }

    /// Submits a batch: every update is checked first, and if any is refused none is queued
    /// (the error names its index). An accepted batch is published in one version, in order
    /// (a later update of the same prefix wins). Returns the sequence number of its last
    /// update (of the last accepted update overall for an empty batch). When the queue has no
    /// room for the batch ([`LiveOptions::max_queued`]), waits until the rebuilder has taken
    /// it.
    pub fn apply<I: IntoIterator<Item = Update>>(&self, updates: I) -> Result<u64, LiveError> {
        self.enqueue(self.ops(updates)?, true)
    }

    /// [`LiveFib::apply`] that never waits: when the queue has no room for the batch it is
    /// refused whole with [`LiveError::QueueFull`] (retry after a [`LiveFib::flush`], or later).
    pub fn try_apply<I: IntoIterator<Item = Update>>(&self, updates: I) -> Result<u64, LiveError> {
        self.enqueue(self.ops(updates)?, false)
    }

    /// Replaces the whole route set with `table` (a reload): the next version holds exactly
    /// its routes. Returns the sequence number.
    pub fn replace_all(&self, table: Table) -> Result<u64, LiveError> {
        let op = self.shared.families.table(table)?;
        self.enqueue(vec![op], true)
    }

    fn ops<I: IntoIterator<Item = Update>>(
        &self,
        updates: I,
    ) -> Result<Vec<update::Op>, LiveError> {
        let families = self.shared.families;
        updates
            .into_iter()
            .enumerate()
            .map(|(i, u)| families.op(u, i))
            .collect()
    }

    fn enqueue(&self, ops: Vec<update::Op>, wait: bool) -> Result<u64, LiveError> {
        let limit = self.shared.max_queued;
        let mut q = lock(&self.shared.queue);
        loop {
            if q.stopped {
                return Err(LiveError::Closed);
            }
            if ops.is_empty() {
                return Ok(q.submitted);
            }
            if q.pending.is_empty() || q.pending.len() + ops.len() <= limit {
                break;
            }
            if !wait {
                return Err(LiveError::QueueFull {
                    queued: q.pending.len(),
                    batch: ops.len(),
                    limit,
                });
            }
            // Full: hurry the rebuilder instead of letting it wait out the delay.
            q.urgent = true;
            self.shared.wake.notify_one();
            q = self
                .shared
                .room
                .wait(q)
                .unwrap_or_else(PoisonError::into_inner);
        }
        q.submitted += ops.len() as u64;
        if q.pending.is_empty() {
            q.first_pending_at = Some(Instant::now());
            self.shared.wake.notify_one();
        }
        q.pending.extend(ops);
        Ok(q.submitted)
    }

    /// Returns once every update accepted before the call is visible to new lookups, asking
    /// the rebuilder not to wait for its coalescing delay. A failed build of those updates is
    /// its error (the updates are kept and go into the next build).
    pub fn flush(&self) -> Result<(), LiveError> {
        let target = {
            let mut q = lock(&self.shared.queue);
            q.urgent = true;
            self.shared.wake.notify_one();
            q.submitted
        };
        self.wait_visible(target)
    }

    /// Waits until the update with sequence number `seq` (and every earlier one) is visible to
    /// new lookups, without hurrying the rebuilder. A number not issued yet (above
    /// [`LiveFib::submitted`]) is [`LiveError::NotIssued`] at once: it could be waited for
    /// forever.
    pub fn wait_visible(&self, seq: u64) -> Result<(), LiveError> {
        let mut q = lock(&self.shared.queue);
        if seq > q.submitted {
            return Err(LiveError::NotIssued {
                seq,
                submitted: q.submitted,
            });
        }
        loop {
            if q.published >= seq {
                return Ok(());
            }
            if let Some((e, upto)) = &q.error {
                if *upto >= seq {
                    return Err(LiveError::Build(e.clone()));
                }
            }
            if q.stopped {
                return Err(LiveError::Closed);
            }
            q = self
                .shared
                .done
                .wait(q)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// The routes of the last published version (a copy; it waits for a build in progress).
    /// After a build failed ([`LiveError::Build`] from [`LiveFib::flush`] or
    /// [`LiveFib::wait_visible`]: an engine's encoding limits, never a bad update) the changes
    /// of that build stay applied, since an accepted update is never dropped, and the next
    /// publish builds them again; until then this shows them although no version holds them.
    pub fn table(&self) -> Table {
        let routes = lock(&self.shared.routes);
        Table::from_families(routes.v4.clone(), routes.v6.clone())
    }

    /// How many versions have been published since the live table was created.
    pub fn publishes(&self) -> u64 {
        lock(&self.shared.queue).publishes
    }

    /// Updates accepted and not yet taken by the rebuilder (at most
    /// [`LiveOptions::max_queued`], or one batch larger than it).
    pub fn queued(&self) -> usize {
        lock(&self.shared.queue).pending.len()
    }

    /// The sequence number of the last accepted update.
    pub fn submitted(&self) -> u64 {
        lock(&self.shared.queue).submitted
    }

    /// The sequence number of the last update visible to new lookups (with every earlier
    /// one): [`LiveFib::wait_visible`] of any number up to it returns at once.
    pub fn published(&self) -> u64 {
        lock(&self.shared.queue).published
    }

    /// The publish records since the last call (empty unless
    /// [`LiveOptions::record_publishes`] or [`LiveFib::record_publishes`] turned the log on).
    pub fn take_publishes(&self) -> Vec<Publish> {
        lock(&self.shared.queue)
            .log
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Starts (`true`) or stops recording a [`Publish`] record of every publish, as
    /// [`LiveOptions::record_publishes`] does from the start. Stopping drops the records not
    /// yet taken; starting keeps them.
    pub fn record_publishes(&self, on: bool) {
        let mut q = lock(&self.shared.queue);
        match (on, q.log.is_some()) {
            (true, false) => q.log = Some(Vec::new()),
            (false, true) => q.log = None,
            _ => {}
        }
    }

    /// The engine's registered name.
    pub fn engine_name(&self) -> &'static str {
        self.shared.engine.name()
    }
}

impl Drop for LiveFib {
    fn drop(&mut self) {
        lock(&self.shared.queue).shutdown = true;
        self.shared.wake.notify_one();
        if let Some(worker) = self.worker.take() {
            // A panic of the rebuilder has been reported by the panic hook already; the table
            // is going away, so there is nobody left to hand it to.
            let _ = worker.join();
        }
    }
}

impl std::fmt::Debug for LiveFib {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveFib")
            .field("engine", &self.engine_name())
            .field("version", &self.shared.current.load().version())
            .finish_non_exhaustive()
    }
}
