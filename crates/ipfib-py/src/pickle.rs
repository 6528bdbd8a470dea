//! Pickling as flat arrays, so a table can be shipped to worker processes in milliseconds.
//!
//! A pickled table is one `bytes` object: a short header, then either the saved-table format
//! of the built engine (for engines that have one, PlanB: its arrays and its route list, so
//! the unpickled table answers lookups at once with no build and makes its route set only if
//! a route-set question is asked), or, for other engines, the routes as three flat arrays per
//! family (built again on first lookup). No Python object per route is ever made.
//!
//! Layout (little-endian): `IPFIBPY1`, kind (`0` saved table, `1` routes), int family (0, 4,
//! 6), engine name length and name, route count (u64), then the payload. Unpickling checks
//! every length and every prefix (and the saved format checks its own header, checksum and
//! structure), so damaged bytes are a ValueError, never a crash.

use std::sync::Arc;

use ipfib::{Fib, Prefix, RouteTable, SaveError, Table};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors;
use crate::state::{engine_name, State};
use crate::table::PyTable;

const MAGIC: &[u8; 8] = b"IPFIBPY1";
const SAVED: u8 = 0;
const ROUTES: u8 = 1;

/// The pickle bytes of a table. The engine is built (interpreter released) and written; if
/// another thread changed the table meanwhile, that is done again, and after a few tries the
/// route set is written instead, under the lock, so the header, the routes and the engine
/// always describe one and the same table.
pub fn dump<'py>(
    py: Python<'py>,
    t: &PyTable,
    int_family: Option<u8>,
) -> PyResult<Bound<'py, PyBytes>> {
    for _ in 0..4 {
        let fib = t.built(py)?;
        let saved = py.detach(|| {
            let mut body = Vec::new();
            fib.write_to(&mut body).map(|()| body)
        });
        let mut state = t.lock();
        if !state.fresh().is_some_and(|f| Arc::ptr_eq(f, &fib)) {
            continue;
        }
        let mut out = header(SAVED, state.engine(), int_family, state.len());
        match saved {
            Ok(body) => out.extend_from_slice(&body),
            Err(SaveError::Unsupported { .. }) => {
                out[8] = ROUTES;
                write_routes(&mut out, state.routes());
            }
            Err(e) => return Err(PyValueError::new_err(errors::describe(&e))),
        }
        return Ok(PyBytes::new(py, &out));
    }
    let mut state = t.lock();
    let mut out = header(ROUTES, state.engine(), int_family, state.len());
    write_routes(&mut out, state.routes());
    Ok(PyBytes::new(py, &out))
}

fn header(kind: u8, engine: &str, int_family: Option<u8>, count: usize) -> Vec<u8> {
    let mut h = MAGIC.to_vec();
    h.push(kind);
    h.push(int_family.unwrap_or(0));
    h.push(engine.len() as u8);
    h.extend_from_slice(engine.as_bytes());
    h.extend_from_slice(&(count as u64).to_le_bytes());
    h
}

fn write_routes(out: &mut Vec<u8>, table: &Table) {
    let (v4, v6) = (table.v4(), table.v6());
    out.extend_from_slice(&(v4.len() as u64).to_le_bytes());
    out.extend(v4.iter().flat_map(|(p, _)| p.addr().to_le_bytes()));
    out.extend(v4.iter().map(|(p, _)| p.len()));
    out.extend(v4.iter().flat_map(|(_, h)| h.to_le_bytes()));
    out.extend_from_slice(&(v6.len() as u64).to_le_bytes());
    out.extend(v6.iter().flat_map(|(p, _)| p.addr().to_le_bytes()));
    out.extend(v6.iter().map(|(p, _)| p.len()));
    out.extend(v6.iter().flat_map(|(_, h)| h.to_le_bytes()));
}

/// A table from its pickle bytes, and its int family.
pub fn load(py: Python<'_>, data: &[u8]) -> PyResult<(State, Option<u8>)> {
    let bad = |what: &str| PyValueError::new_err(format!("not an ipfib.Table pickle: {what}"));
    let mut r = Cursor(data);
    if r.take(8).ok_or_else(|| bad("too short"))? != MAGIC {
        return Err(bad("wrong magic bytes (or a newer format)"));
    }
    let kind = r.u8().ok_or_else(|| bad("too short"))?;
    let family = match r.u8().ok_or_else(|| bad("too short"))? {
        0 => None,
        f @ (4 | 6) => Some(f),
        f => return Err(bad(&format!("int family {f}"))),
    };
    let name_len = r.u8().ok_or_else(|| bad("too short"))?;
    let name = r
        .take(usize::from(name_len))
        .ok_or_else(|| bad("too short"))?;
    let name = std::str::from_utf8(name).map_err(|_| bad("engine name not UTF-8"))?;
    let engine = engine_name(name).map_err(errors::build)?;
    let count = r.u64().ok_or_else(|| bad("too short"))?;
    let state = match kind {
        SAVED => {
            let body = r.0;
            let fib = py
                .detach(|| Fib::from_bytes(body))
                .map_err(|e| bad(&errors::describe(&e)))?;
            if fib.route_count() as u64 != count {
                return Err(bad(&format!(
                    "the header counts {count} routes, the table holds {}",
                    fib.route_count()
                )));
            }
            State::from_fib(fib, count as usize)
        }
        ROUTES => {
            let table = read_routes(&mut r).map_err(|e| bad(&e))?;
            if r.0.is_empty() && table.len() as u64 == count {
                State::from_table(table, engine)
            } else {
                return Err(bad("route count or length does not match"));
            }
        }
        k => return Err(bad(&format!("kind {k}"))),
    };
    Ok((state, family))
}

/// Reads the bytes of a pickle front to back, `None` past the end.
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }

    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    fn u64(&mut self) -> Option<u64> {
        self.take(8)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_le_bytes)
    }

    /// `n` records of `width` bytes (bounded by the bytes left, so a huge count cannot
    /// allocate).
    fn array(&mut self, n: u64, width: usize) -> Option<&'a [u8]> {
        let n = usize::try_from(n).ok()?;
        self.take(n.checked_mul(width)?)
    }
}

fn read_routes(r: &mut Cursor<'_>) -> Result<Table, String> {
    let short = || "too short".to_string();
    let n4 = r.u64().ok_or_else(short)?;
    let a4 = r.array(n4, 4).ok_or_else(short)?;
    let l4 = r.array(n4, 1).ok_or_else(short)?;
    let h4 = r.array(n4, 4).ok_or_else(short)?;
    let v4 = family::<u32, 4>(a4, l4, h4, u32::from_le_bytes)?;
    let n6 = r.u64().ok_or_else(short)?;
    let a6 = r.array(n6, 16).ok_or_else(short)?;
    let l6 = r.array(n6, 1).ok_or_else(short)?;
    let h6 = r.array(n6, 4).ok_or_else(short)?;
    let v6 = family::<u128, 16>(a6, l6, h6, u128::from_le_bytes)?;
    Ok(Table::from_families(v4, v6))
}

fn family<A: ipfib::Address, const W: usize>(
    addrs: &[u8],
    lens: &[u8],
    hops: &[u8],
    addr: impl Fn([u8; W]) -> A,
) -> Result<RouteTable<A>, String> {
    addrs
        .chunks_exact(W)
        .zip(lens)
        .zip(hops.chunks_exact(4))
        .map(|((a, &len), h)| {
            let a: [u8; W] = a.try_into().map_err(|_| "record width".to_string())?;
            let h: [u8; 4] = h.try_into().map_err(|_| "record width".to_string())?;
            let prefix = Prefix::new(addr(a), len).map_err(|e| e.to_string())?;
            Ok((prefix, u32::from_le_bytes(h)))
        })
        .collect()
}
