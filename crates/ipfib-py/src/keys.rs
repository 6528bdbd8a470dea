//! Python keys as addresses and prefixes.
//!
//! A key is a `str` (`"10.1.2.3"`, `"10.0.0.0/8"`, `"2001:db8::/32"`), an `ipaddress` address
//! or network, packed `bytes` (4 for IPv4, 16 for IPv6), an `int` (the address as a number:
//! the family cannot be read off an int, so the table's `int_family` says which; it is unset by
//! default and an int key is then a `TypeError`), or a tuple `(address, prefixlen)` with any
//! address form above. Strings take the fast path: they are what most callers pass.
//!
//! Prefix keys are strict, as everywhere in ipfib: `10.0.0.1/8` (host bits set) is a
//! `ValueError` that names the network meant, never a silent mask.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::IpNet;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyInt, PyString, PyTuple, PyType};

use crate::parse::{self, Text};

/// A parsed key.
#[derive(Clone, Copy, Debug)]
pub enum Key {
    /// An address.
    Addr(IpAddr),
    /// A prefix, possibly with host bits set (see [`Key::prefix`]).
    Net(IpNet),
}

impl Key {
    /// The key as a route prefix: an address is its host route (`/32`, `/128`); a prefix with
    /// host bits set is a `ValueError`.
    pub fn prefix(self) -> PyResult<IpNet> {
        match self {
            Key::Addr(a) => Ok(IpNet::from(a)),
            Key::Net(n) => canonical(n),
        }
    }
}

/// `net` if its host bits are clear, else the `ValueError` naming the network.
pub fn canonical(net: IpNet) -> PyResult<IpNet> {
    if net.trunc() == net {
        Ok(net)
    } else {
        Err(PyValueError::new_err(format!(
            "host bits set in {net} (the network is {})",
            net.trunc()
        )))
    }
}

/// The `ipaddress` classes keys are checked against, imported once.
struct Classes {
    address: Py<PyTuple>,
    network: Py<PyTuple>,
    interface: Py<PyTuple>,
}

static CLASSES: PyOnceLock<Classes> = PyOnceLock::new();

fn classes(py: Python<'_>) -> PyResult<&Classes> {
    CLASSES.get_or_try_init(py, || {
        let m = py.import("ipaddress")?;
        let pair = |a: &str, b: &str| -> PyResult<Py<PyTuple>> {
            let a = m.getattr(a)?.cast_into::<PyType>()?;
            let b = m.getattr(b)?.cast_into::<PyType>()?;
            Ok(PyTuple::new(py, [a, b])?.unbind())
        };
        Ok(Classes {
            address: pair("IPv4Address", "IPv6Address")?,
            network: pair("IPv4Network", "IPv6Network")?,
            interface: pair("IPv4Interface", "IPv6Interface")?,
        })
    })
}

/// Parses a key; `int_family` (4, 6 or `None`) says what an int key is.
pub fn key(obj: &Bound<'_, PyAny>, int_family: Option<u8>) -> PyResult<Key> {
    if let Ok(s) = obj.cast::<PyString>() {
        return str_key(s.to_str()?);
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        return tuple_key(t, int_family);
    }
    if let Some(net) = network(obj)? {
        return Ok(Key::Net(net));
    }
    address(obj, int_family).map(Key::Addr)
}

/// A key given as text.
pub fn str_key(s: &str) -> PyResult<Key> {
    match parse::key(s) {
        Some(Text::Addr(a)) => Ok(Key::Addr(a)),
        Some(Text::Net(n)) => Ok(Key::Net(n)),
        None => Err(PyValueError::new_err(bad_key(s))),
    }
}

/// Why `s` is not a key, as precisely as can be told.
fn bad_key(s: &str) -> String {
    if let Some((addr, len)) = s.split_once('/') {
        if let (Some(a), Ok(l)) = (parse::address(addr), len.parse::<u16>()) {
            let max = if a.is_ipv4() { 32 } else { 128 };
            if l > max {
                return format!("{s:?}: prefix length {l} is longer than {max} bits");
            }
        }
        if parse::address(addr).is_none() {
            return format!("{s:?} is not a prefix: {addr:?} is not an IP address");
        }
        return format!("{s:?} is not a prefix: {len:?} is not a prefix length");
    }
    format!("{s:?} is not an IP address or prefix")
}

/// `(address, prefixlen)`.
fn tuple_key(t: &Bound<'_, PyTuple>, int_family: Option<u8>) -> PyResult<Key> {
    if t.len() != 2 {
        return Err(PyTypeError::new_err(format!(
            "a tuple key is (address, prefixlen), not a tuple of {} items",
            t.len()
        )));
    }
    let addr = address(&t.get_item(0)?, int_family)?;
    let len_obj = t.get_item(1)?;
    let len: u8 = match len_obj.extract::<u8>() {
        Ok(l) if !len_obj.is_instance_of::<PyBool>() => l,
        _ => {
            return Err(PyValueError::new_err(format!(
                "prefix length {} is not an integer 0-128",
                len_obj.repr()?
            )))
        }
    };
    IpNet::new(addr, len).map(Key::Net).map_err(|_| {
        PyValueError::new_err(format!(
            "prefix length {len} is longer than {} bits (address {addr})",
            if addr.is_ipv4() { 32 } else { 128 }
        ))
    })
}

/// An `ipaddress` network (`None` when `obj` is not one).
fn network(obj: &Bound<'_, PyAny>) -> PyResult<Option<IpNet>> {
    let py = obj.py();
    let c = classes(py)?;
    if !obj.is_instance(c.network.bind(py))? {
        return Ok(None);
    }
    let addr = address(&obj.getattr("network_address")?, None)?;
    let len: u8 = obj.getattr("prefixlen")?.extract()?;
    // An ipaddress network is always a valid prefix; the error is for look-alike subclasses.
    IpNet::new(addr, len).map(Some).map_err(|e| {
        PyValueError::new_err(format!(
            "{}: {e}",
            obj.repr().map_or(String::new(), |r| r.to_string())
        ))
    })
}

/// An address in any key form but a prefix: `str`, `ipaddress` address, packed `bytes`, or an
/// `int` of family `int_family`.
pub fn address(obj: &Bound<'_, PyAny>, int_family: Option<u8>) -> PyResult<IpAddr> {
    if let Ok(s) = obj.cast::<PyString>() {
        let s = s.to_str()?;
        return parse::address(s)
            .ok_or_else(|| PyValueError::new_err(format!("{s:?} is not an IP address")));
    }
    let py = obj.py();
    let c = classes(py)?;
    if obj.is_instance(c.interface.bind(py))? {
        return Err(PyTypeError::new_err(format!(
            "{} is an interface (an address and a network): pass its .ip or its .network",
            obj.repr()?
        )));
    }
    if obj.is_instance(c.address.bind(py))? {
        let version: u8 = obj.getattr("version")?.extract()?;
        let n: u128 = obj.call_method0("__int__")?.extract()?;
        return int_address(n, Some(version), obj);
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        let b = b.as_bytes();
        return match b.len() {
            4 => Ok(IpAddr::V4(Ipv4Addr::from(
                <[u8; 4]>::try_from(b).unwrap_or_default(),
            ))),
            16 => Ok(IpAddr::V6(Ipv6Addr::from(
                <[u8; 16]>::try_from(b).unwrap_or_default(),
            ))),
            n => Err(PyValueError::new_err(format!(
                "packed address of {n} bytes: IPv4 is 4 bytes, IPv6 is 16"
            ))),
        };
    }
    if obj.is_instance_of::<PyInt>() && !obj.is_instance_of::<PyBool>() {
        let Some(family) = int_family else {
            return Err(PyTypeError::new_err(
                "an int key needs a family: set the table's int_family to 4 or 6 \
                 (Table(int_family=4)), or pass a str, an ipaddress object or packed bytes",
            ));
        };
        let n: u128 = obj.extract().map_err(|_| {
            PyValueError::new_err(format!(
                "{} is not an address (negative or too large)",
                obj.repr().map_or(String::new(), |r| r.to_string())
            ))
        })?;
        return int_address(n, Some(family), obj);
    }
    Err(PyTypeError::new_err(format!(
        "{} is not an address key: use a str, an ipaddress object, packed bytes, \
         or an int with the table's int_family set",
        obj.get_type().name()?
    )))
}

/// An address from its number.
fn int_address(n: u128, family: Option<u8>, obj: &Bound<'_, PyAny>) -> PyResult<IpAddr> {
    match family {
        Some(4) => u32::try_from(n)
            .map(|v| IpAddr::V4(Ipv4Addr::from(v)))
            .map_err(|_| {
                PyValueError::new_err(format!(
                    "{n} is too large for an IPv4 address (int_family is 4)"
                ))
            }),
        Some(6) => Ok(IpAddr::V6(Ipv6Addr::from(n))),
        _ => Err(PyValueError::new_err(format!(
            "{} has no known address family",
            obj.repr()?
        ))),
    }
}

/// The family for int keys from a Python value: `None`, 4 or 6.
pub fn int_family(v: Option<u8>) -> PyResult<Option<u8>> {
    match v {
        None | Some(4) | Some(6) => Ok(v),
        Some(other) => Err(PyValueError::new_err(format!(
            "int_family is 4, 6 or None, not {other}"
        ))),
    }
}
