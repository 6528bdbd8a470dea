//! What a Python `Table` holds: the route set and the engine built from it, kept in step
//! without the caller ever asking for a rebuild.
//!
//! A change to the routes drops the built [`Fib`]; the next batch lookup builds it again.
//! Single lookups on a changed table do not rebuild at once: a program that alternates
//! inserts and lookups (building a table while querying it) would otherwise pay a full build
//! per lookup. They are answered from the route set itself (a probe per prefix length in use:
//! exact, a few microseconds), and only after enough of them to pay for a build
//! ([`State::rebuild_after`]) is the engine rebuilt. So every answer is current, and the
//! extra cost is bounded by a constant factor of the best schedule.
//!
//! A table unpickled or opened from a saved file starts the other way round: the built engine
//! is there and the route set is made from the engine's route list the first time a route-set
//! question (iteration, `parent`, an insert) needs it, so a worker that only looks up never
//! pays for it.

use std::net::IpAddr;
use std::sync::Arc;

use ipfib::{BuildError, Fib, Table};
use ipnet::IpNet;

/// The route set and, when current, the engine built from it. At least one of the two is
/// always present.
pub struct State {
    /// The routes; `None` only while `fib` holds them (an unpickled or saved table not yet
    /// asked a route-set question).
    table: Option<Table>,
    /// The engine built from exactly `table`, or `None` after a change.
    fib: Option<Arc<Fib>>,
    /// The registered engine name.
    engine: &'static str,
    /// Whether the engine holds IPv4 and IPv6 routes (DXR: IPv4 only), so a route it cannot
    /// hold is refused when it is added, not at the next lookup.
    holds: [bool; 2],
    /// Single lookups answered from the route set since the last change.
    slow_lookups: usize,
    /// The number of routes while `table` is `None` (the route list's length, known without
    /// making the set).
    count: usize,
}

impl State {
    /// An empty table for `engine` (an unknown name is an error).
    pub fn new(engine: &str) -> Result<State, BuildError> {
        Ok(State::from_table(Table::new(), engine_name(engine)?))
    }

    /// A table holding `table`, engine built on demand.
    pub fn from_table(table: Table, engine: &'static str) -> State {
        State {
            table: Some(table),
            fib: None,
            holds: holds(engine),
            engine,
            slow_lookups: 0,
            count: 0,
        }
    }

    /// A table built from `table`.
    pub fn built_from(fib: Fib, table: Table) -> State {
        State {
            engine: fib.engine_name(),
            holds: holds(fib.engine_name()),
            count: table.len(),
            table: Some(table),
            fib: Some(Arc::new(fib)),
            slow_lookups: 0,
        }
    }

    /// A table whose routes (`count` of them) are known only from the route list of `fib`
    /// (an unpickled table): the route set is made when first needed.
    pub fn from_fib(fib: Fib, count: usize) -> State {
        State {
            engine: fib.engine_name(),
            holds: holds(fib.engine_name()),
            table: None,
            fib: Some(Arc::new(fib)),
            slow_lookups: 0,
            count,
        }
    }

    /// The engine's name.
    pub fn engine(&self) -> &'static str {
        self.engine
    }

    /// Changes the engine (an unknown name is an error and changes nothing); the next lookup
    /// that needs it builds the new one.
    pub fn set_engine(&mut self, name: &str) -> Result<(), BuildError> {
        let name = engine_name(name)?;
        if name != self.engine {
            let held = holds(name);
            let routes = self.routes();
            refuse_unheld(name, held, !routes.v4().is_empty(), !routes.v6().is_empty())?;
            self.holds = held;
            self.engine = name;
            self.fib = None;
            self.slow_lookups = 0;
        }
        Ok(())
    }

    /// The route set (made from the engine's route list the first time it is needed).
    pub fn routes(&mut self) -> &Table {
        self.table
            .get_or_insert_with(|| self.fib.as_ref().map(|f| f.table()).unwrap_or_default())
    }

    /// Refuses a route of a family the engine cannot hold, before anything changes.
    pub fn check_family(&self, net: &IpNet) -> Result<(), BuildError> {
        let v4 = matches!(net, IpNet::V4(_));
        refuse_unheld(self.engine, self.holds, v4, !v4)
    }

    /// Replaces every route (a family the engine cannot hold is refused, nothing changed).
    pub fn replace_routes(&mut self, table: Table) -> Result<(), BuildError> {
        let (v4, v6) = (!table.v4().is_empty(), !table.v6().is_empty());
        refuse_unheld(self.engine, self.holds, v4, v6)?;
        *self.routes_mut() = table;
        Ok(())
    }

    /// The route set for a change: the built engine no longer matches it and is dropped.
    pub fn routes_mut(&mut self) -> &mut Table {
        self.routes();
        self.fib = None;
        self.slow_lookups = 0;
        self.table.get_or_insert_with(Table::new)
    }

    /// The number of routes, without making the route set.
    pub fn len(&self) -> usize {
        self.table.as_ref().map_or(self.count, Table::len)
    }

    /// The built engine if it is current.
    pub fn fresh(&self) -> Option<&Arc<Fib>> {
        self.fib.as_ref()
    }

    /// The built engine, building it if the routes changed since. Call this with the
    /// interpreter released: a build of a large table takes a fraction of a second.
    pub fn built(&mut self) -> Result<Arc<Fib>, BuildError> {
        if let Some(f) = &self.fib {
            return Ok(f.clone());
        }
        let engine = self.engine;
        let fib = Arc::new(Fib::build(self.routes(), engine)?);
        self.fib = Some(fib.clone());
        self.slow_lookups = 0;
        Ok(fib)
    }

    /// Single lookups answered from the route set after which the engine is rebuilt: about
    /// what one build costs, at a few microseconds per slow lookup against roughly a quarter
    /// of a microsecond per route for a build.
    pub fn rebuild_after(&self) -> usize {
        64 + self.len() / 8
    }

    /// Counts a single lookup made while the engine is out of date; true when enough have
    /// been made that the engine should be rebuilt now rather than answer from the routes.
    pub fn slow_lookup_due_for_rebuild(&mut self) -> bool {
        self.slow_lookups += 1;
        self.slow_lookups > self.rebuild_after()
    }

    /// An independent copy: the route set cloned, the built engine shared (it is immutable).
    pub fn clone_state(&self) -> State {
        State {
            table: self.table.clone(),
            fib: self.fib.clone(),
            engine: self.engine,
            holds: self.holds,
            slow_lookups: 0,
            count: self.count,
        }
    }

    /// The longest route containing `addr`, from the route set.
    pub fn longest_match(&mut self, addr: IpAddr) -> Option<(IpNet, u32)> {
        self.routes().longest_match(addr)
    }
}

/// Whether the engine named `name` (registered) holds IPv4 and IPv6 routes.
fn holds(name: &str) -> [bool; 2] {
    let options = ipfib::BuildOptions::default();
    ipfib::engine::by_name(name).map_or([true, true], |e| {
        [
            e.supports::<u32>(&options).unwrap_or(true),
            e.supports::<u128>(&options).unwrap_or(true),
        ]
    })
}

/// An error when routes of a family `engine` does not hold (per `held`) are present.
fn refuse_unheld(
    engine: &'static str,
    held: [bool; 2],
    v4: bool,
    v6: bool,
) -> Result<(), BuildError> {
    let family = if v4 && !held[0] {
        "IPv4"
    } else if v6 && !held[1] {
        "IPv6"
    } else {
        return Ok(());
    };
    Err(BuildError::UnsupportedFamily { engine, family })
}

/// The registered name of an engine (case ignored on input).
pub fn engine_name(name: &str) -> Result<&'static str, BuildError> {
    ipfib::engine::by_name(name).map(|e| e.name())
}
