//! `ipfib_polars`: longest-prefix match as a Polars expression plugin.
//!
//! `lookup(column, table)` answers, for each address of a `String` (IPv4/IPv6 text), `Binary`
//! (4 bytes IPv4, 16 bytes IPv6, network order) or `UInt32` (IPv4) column, the next hop of the
//! longest route containing it in an ipfib **saved table** (what `ipfib.Table.save` writes):
//! a `UInt32` column, null where no route matches and where the input is null.
//!
//! Polars hands the plugin its keyword arguments pickled and reads them again on every call
//! (one per batch in a streaming query), so the table is passed by the path of its saved file,
//! never as routes. Opened tables are kept in a process-wide cache keyed by the canonical
//! path and the file's length, modification time, device and inode, so a query opens and
//! validates its table once; a file replaced or rewritten is opened again (only the newest
//! table of each path is kept, and at most [`MAX_TABLES`] tables in all). The table is read
//! into memory, not mapped, so nothing done to the file afterwards can affect a query that
//! has it.
//!
//! Text is parsed by the very parser `ipfib.Table.lookup` uses (`ipfib::parse`, so the rules
//! cannot drift): exactly what Rust's `IpAddr::from_str` accepts, no surrounding spaces. A malformed address is a ComputeError naming the row and
//! the text. The row counts within what Polars handed the plugin, which is the whole column
//! only when it is one chunk in an in-memory query: an elementwise expression is evaluated
//! per chunk or per streaming morsel, and the plugin is not told where its batch starts, so
//! the message says "row i of n" and quotes the text to find it by. Addresses are parsed into
//! blocks of [`BLOCK`] per family and looked up with the engine's batch calls. Nothing here
//! panics on any input: every failure is a `PolarsError`.

use std::collections::HashMap;
use std::fs::File;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use ipfib::{Fib, NextHop};
use polars_arrow::array::Array;
use polars_arrow::bitmap::Bitmap;
use polars_core::prelude::*;
use polars_error::{polars_bail, polars_err};
use pyo3::prelude::*;
use pyo3_polars::PolarsAllocator;
use serde::Deserialize;

use ipfib::parse::{self, Parsed};

mod ffi;

// Memory handed to Polars (the answers' buffers) is freed by Polars: use its allocator.
#[global_allocator]
static ALLOC: PolarsAllocator = PolarsAllocator::new();

/// Addresses parsed before each batch lookup (per family at most this many).
pub const BLOCK: usize = 4096;

/// The plugin's keyword arguments (`ipfib_polars.lookup` passes them).
#[derive(Deserialize)]
struct LookupKwargs {
    /// The saved table's path (made absolute by the Python side).
    table: String,
}

/// An opened saved table and the value that stands for "no route" in its batch answers.
struct Loaded {
    fib: Fib,
    /// A value no route of the table has, so the engine's plain batch answers (the fastest
    /// path, IPv6's staged walk included) tell a miss from a route unambiguously.
    miss: NextHop,
}

/// What identifies one version of a file: a file replaced by rename (as `Table.save` does)
/// has a new inode, one rewritten in place a new length or modification time.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    dev: u64,
    ino: u64,
}

impl Stamp {
    fn of(meta: &std::fs::Metadata) -> Stamp {
        #[cfg(unix)]
        let (dev, ino) = {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino())
        };
        #[cfg(not(unix))]
        let (dev, ino) = (0, 0);
        Stamp {
            len: meta.len(),
            modified: meta.modified().ok(),
            dev,
            ino,
        }
    }
}

/// Opened tables kept at most: a program that saves many versions of a table (each
/// `lookup(expr, Table)` after a change makes a new file) would otherwise keep them all. The
/// least recently used is dropped (queries that hold it keep it until they end), and opened
/// again if it is asked for again.
const MAX_TABLES: usize = 8;

/// An opened table, the version of the file it was read from, and when it was last used.
struct Entry {
    stamp: Stamp,
    loaded: Arc<Loaded>,
    used: u64,
}

#[derive(Default)]
struct Tables {
    by_path: HashMap<PathBuf, Entry>,
    clock: u64,
}

type Cache = Mutex<Tables>;

fn cache() -> &'static Cache {
    static TABLES: OnceLock<Cache> = OnceLock::new();
    TABLES.get_or_init(|| Mutex::new(Tables::default()))
}

/// The table saved at `path`, opened once per version of the file.
fn table(path: &str) -> PolarsResult<Arc<Loaded>> {
    let io = |e: std::io::Error| polars_err!(ComputeError: "ipfib table {path:?}: {e}");
    let canonical = std::fs::canonicalize(path).map_err(io)?;
    // The stamp is taken from the open file and the table read from that same file, so the
    // cached table is the content the stamp describes even if the path is replaced meanwhile.
    let file = File::open(&canonical).map_err(io)?;
    let stamp = Stamp::of(&file.metadata().map_err(io)?);
    // Held while a table is read: the batches of a streaming query, on several threads, then
    // wait for the one read instead of each reading the file.
    let mut tables = cache().lock().unwrap_or_else(|p| p.into_inner());
    tables.clock += 1;
    let now = tables.clock;
    if let Some(e) = tables.by_path.get_mut(&canonical) {
        if e.stamp == stamp {
            e.used = now;
            return Ok(Arc::clone(&e.loaded));
        }
    }
    let fib = Fib::read_from(std::io::BufReader::with_capacity(1 << 20, file))
        .map_err(|e| polars_err!(ComputeError: "ipfib table {path:?}: {e}"))?;
    let miss = unused_value(&fib).ok_or_else(
        || polars_err!(ComputeError: "ipfib table {path:?}: every u32 value is a next hop"),
    )?;
    let loaded = Arc::new(Loaded { fib, miss });
    let entry = Entry {
        stamp,
        loaded: Arc::clone(&loaded),
        used: now,
    };
    tables.by_path.insert(canonical, entry);
    while tables.by_path.len() > MAX_TABLES {
        let oldest = tables
            .by_path
            .iter()
            .min_by_key(|(_, e)| e.used)
            .map(|(p, _)| p.clone());
        match oldest {
            Some(p) => tables.by_path.remove(&p),
            None => break,
        };
    }
    Ok(loaded)
}

/// The largest u32 that is no route's value (`u32::MAX` unless the table uses it).
fn unused_value(fib: &Fib) -> Option<NextHop> {
    let mut used: Vec<NextHop> = fib.table().iter().map(|(_, hop)| hop).collect();
    used.sort_unstable_by(|a, b| b.cmp(a));
    used.dedup();
    let mut candidate = NextHop::MAX;
    for hop in used {
        if hop < candidate {
            break;
        }
        candidate = candidate.checked_sub(1)?;
    }
    Some(candidate)
}

/// Collects one column's answers: addresses are queued per family and looked up a block at a
/// time; `out` holds one answer per row so far (`miss` for nulls and misses).
struct Batcher<'t> {
    t: &'t Loaded,
    /// The rows of the column being answered (for error messages).
    rows: usize,
    out: Vec<NextHop>,
    v4: Vec<u32>,
    at4: Vec<usize>,
    v6: Vec<u128>,
    at6: Vec<usize>,
    r4: Vec<NextHop>,
    r6: Vec<NextHop>,
}

impl<'t> Batcher<'t> {
    fn new(t: &'t Loaded, rows: usize) -> Self {
        Batcher {
            t,
            rows,
            out: Vec::with_capacity(rows),
            v4: Vec::with_capacity(BLOCK),
            at4: Vec::with_capacity(BLOCK),
            v6: Vec::with_capacity(BLOCK),
            at6: Vec::with_capacity(BLOCK),
            r4: vec![0; BLOCK],
            r6: vec![0; BLOCK],
        }
    }

    /// The index of the next row.
    fn row(&self) -> usize {
        self.out.len()
    }

    #[inline]
    fn v4(&mut self, a: u32) -> PolarsResult<()> {
        self.at4.push(self.out.len());
        self.v4.push(a);
        self.out.push(self.t.miss);
        if self.v4.len() == BLOCK {
            self.flush()?;
        }
        Ok(())
    }

    #[inline]
    fn v6(&mut self, a: u128) -> PolarsResult<()> {
        self.at6.push(self.out.len());
        self.v6.push(a);
        self.out.push(self.t.miss);
        if self.v6.len() == BLOCK {
            self.flush()?;
        }
        Ok(())
    }

    #[inline]
    fn null(&mut self) {
        self.out.push(self.t.miss);
    }

    #[inline]
    fn text(&mut self, s: &str) -> PolarsResult<()> {
        match parse::address_int(s) {
            Some(Parsed::V4(a)) => self.v4(a),
            Some(Parsed::V6(a)) => self.v6(a),
            None => polars_bail!(
                ComputeError: "row {} of {}: {s:?} is not an IP address", self.row(), self.rows
            ),
        }
    }

    #[inline]
    fn bytes(&mut self, b: &[u8]) -> PolarsResult<()> {
        if let Ok(a) = <[u8; 4]>::try_from(b) {
            self.v4(u32::from_be_bytes(a))
        } else if let Ok(a) = <[u8; 16]>::try_from(b) {
            self.v6(u128::from_be_bytes(a))
        } else {
            polars_bail!(
                ComputeError: "row {} of {}: {} bytes, not an address (4 bytes IPv4, 16 bytes IPv6)",
                self.row(), self.rows, b.len()
            )
        }
    }

    /// A whole run of IPv4 integers (`valid[i]` false: null), looked up in place.
    fn v4_run(&mut self, addrs: &[u32], valid: Option<&Bitmap>) -> PolarsResult<()> {
        let start = self.out.len();
        self.out.resize(start + addrs.len(), self.t.miss);
        let out = self.out.get_mut(start..).unwrap_or_default();
        self.t
            .fib
            .lookup_v4_batch(addrs, out, self.t.miss)
            .map_err(|e| polars_err!(ComputeError: "{e}"))?;
        if let Some(valid) = valid {
            for (slot, present) in out.iter_mut().zip(valid.iter()) {
                if !present {
                    *slot = self.t.miss;
                }
            }
        }
        Ok(())
    }

    /// Looks the queued addresses up and puts the answers in their rows.
    fn flush(&mut self) -> PolarsResult<()> {
        let lookup = |e: ipfib::LookupError| polars_err!(ComputeError: "{e}");
        let miss = self.t.miss;
        if let Some(r4) = self.r4.get_mut(..self.v4.len()) {
            self.t
                .fib
                .lookup_v4_batch(&self.v4, r4, miss)
                .map_err(lookup)?;
            for (&k, &hop) in self.at4.iter().zip(r4.iter()) {
                if let Some(slot) = self.out.get_mut(k) {
                    *slot = hop;
                }
            }
        }
        if let Some(r6) = self.r6.get_mut(..self.v6.len()) {
            self.t
                .fib
                .lookup_v6_batch(&self.v6, r6, miss)
                .map_err(lookup)?;
            for (&k, &hop) in self.at6.iter().zip(r6.iter()) {
                if let Some(slot) = self.out.get_mut(k) {
                    *slot = hop;
                }
            }
        }
        self.v4.clear();
        self.at4.clear();
        self.v6.clear();
        self.at6.clear();
        Ok(())
    }

    /// The answers as a UInt32 series, null where `miss`.
    fn finish(mut self, name: PlSmallStr) -> PolarsResult<Series> {
        self.flush()?;
        let miss = self.t.miss;
        let validity = if self.out.contains(&miss) {
            Some(self.out.iter().map(|&hop| hop != miss).collect::<Bitmap>())
        } else {
            None
        };
        Ok(UInt32Chunked::from_vec_validity(name, self.out, validity).into_series())
    }
}

/// The column types `lookup` reads.
fn check_input(dtype: &DataType) -> PolarsResult<()> {
    match dtype {
        DataType::String | DataType::Binary | DataType::UInt32 | DataType::Null => Ok(()),
        other => polars_bail!(
            InvalidOperation: "ipfib_polars.lookup takes a String (address text), Binary \
            (4 or 16 bytes) or UInt32 (IPv4) column, not {other}"
        ),
    }
}

fn lookup_field(inputs: &[Field]) -> PolarsResult<Field> {
    let [input] = inputs else {
        polars_bail!(InvalidOperation: "ipfib_polars.lookup takes one column, got {}", inputs.len())
    };
    check_input(input.dtype())?;
    Ok(Field::new(input.name().clone(), DataType::UInt32))
}

/// `ipfib_polars.lookup`: the next hop of every address in the column (through [`ffi`]).
fn lookup(inputs: &[Series], kwargs: LookupKwargs) -> PolarsResult<Series> {
    let [s] = inputs else {
        polars_bail!(InvalidOperation: "ipfib_polars.lookup takes one column, got {}", inputs.len())
    };
    check_input(s.dtype())?;
    let t = table(&kwargs.table)?;
    let mut b = Batcher::new(&t, s.len());
    match s.dtype() {
        DataType::String => {
            for arr in s.str()?.downcast_iter() {
                if arr.null_count() == 0 {
                    for text in arr.values_iter() {
                        b.text(text)?;
                    }
                } else {
                    for text in arr.iter() {
                        match text {
                            Some(text) => b.text(text)?,
                            None => b.null(),
                        }
                    }
                }
            }
        }
        DataType::Binary => {
            for arr in s.binary()?.downcast_iter() {
                for bytes in arr.iter() {
                    match bytes {
                        Some(bytes) => b.bytes(bytes)?,
                        None => b.null(),
                    }
                }
            }
        }
        DataType::UInt32 => {
            for arr in s.u32()?.downcast_iter() {
                let valid = arr.validity().filter(|v| v.unset_bits() > 0);
                b.v4_run(arr.values(), valid)?;
            }
        }
        _ => {
            for _ in 0..s.len() {
                b.null();
            }
        }
    }
    b.finish(s.name().clone())
}

/// The extension module (the plugin's functions are found by Polars in the same library).
#[pymodule]
fn _ipfib_polars(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
