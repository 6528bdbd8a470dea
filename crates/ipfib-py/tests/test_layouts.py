"""Every array layout NumPy can describe is read as the addresses it holds, or refused.

Each accepted layout (C or Fortran order, strided and reversed views, transposes, broadcast
rows, unaligned views, big-endian dtypes, read-only arrays, empty arrays) must give exactly
the answers of a plain C-contiguous copy of the same addresses, which are themselves checked
against the string path. Everything else is a TypeError whose message names what was given
and what to pass.
"""

import ipaddress
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ipfib

MISS = 0xFFFFFFFF
N = 257  # odd, so halves and reversals do not line up with anything


@pytest.fixture(scope="module")
def table():
    rng = random.Random(11)
    t = ipfib.Table()
    t["0.0.0.0/1"] = 100
    t["::/1"] = 200
    for i in range(1500):
        n4 = ipaddress.IPv4Network((rng.getrandbits(32), rng.randint(4, 32)), strict=False)
        t[n4] = i
        n6 = ipaddress.IPv6Network((rng.getrandbits(128), rng.randint(4, 128)), strict=False)
        t[n6] = 10000 + i
    return t


def addresses(n=N, seed=5):
    rng = random.Random(seed)
    v4 = [rng.getrandbits(32) for _ in range(n)]
    v6 = [rng.getrandbits(128) for _ in range(n)]
    return v4, v6


def as_u32(v4):
    return np.array(v4, dtype=np.uint32)


def as_bytes(v6):
    return np.array([list(a.to_bytes(16, "big")) for a in v6], dtype=np.uint8).reshape(-1, 16)


def as_words(v6):
    words = [[a >> 64, a & (2**64 - 1)] for a in v6]
    return np.array(words, dtype=np.uint64).reshape(-1, 2)


def unaligned(a, dtype=None):
    """A C-contiguous copy of `a` whose data starts one byte past an aligned address."""
    dtype = np.dtype(dtype or a.dtype)
    raw = np.ascontiguousarray(a, dtype=dtype).tobytes()
    buf = bytearray(len(raw) + 1)
    buf[1:] = raw
    out = np.frombuffer(buf, dtype=dtype, offset=1).reshape(a.shape)
    assert not out.flags.aligned or out.size == 0 or dtype.alignment == 1
    return out


def read_only(a):
    a = a.copy()
    a.setflags(write=False)
    return a


def column(a, width=3, at=1):
    """`a` as column block `at` of a wider array: rows are strided, elements not contiguous."""
    shape = (a.shape[0], width * (a.shape[1] if a.ndim == 2 else 1))
    wide = np.zeros(shape, dtype=a.dtype)
    if a.ndim == 1:
        wide[:, at] = a
        return wide[:, at]
    k = a.shape[1]
    wide[:, at * k:(at + 1) * k] = a
    return wide[:, at * k:(at + 1) * k]


def reversed_columns(a):
    """A view with a negative column stride holding the same rows as `a`."""
    return a[:, ::-1].copy()[:, ::-1]


def interleaved(a):
    """`a` as every other row of a larger array (a[::2] of something)."""
    big = np.zeros((2 * a.shape[0],) + a.shape[1:], dtype=a.dtype)
    big[::2] = a
    return big[::2]


def reversed_rows(a):
    """A view with a negative row stride holding the rows of `a` in order."""
    return a[::-1].copy()[::-1]


def every_other_reversed(a):
    """A view with a negative stride of two elements holding `a` in order."""
    big = np.zeros((2 * a.shape[0],) + a.shape[1:], dtype=a.dtype)
    view = big[::-2]
    view[...] = a
    return view


def transposed(a):
    """`a` as the transpose of a C-contiguous (k, n) array: Fortran order."""
    return np.ascontiguousarray(a.T).T


# Each: (name, make(contiguous) -> view holding the same addresses).
LAYOUTS_ANY = [
    ("c", lambda a: a),
    ("interleaved", interleaved),
    ("reversed rows", reversed_rows),
    ("every other row, reversed", every_other_reversed),
    ("read-only", read_only),
    ("unaligned", unaligned),
    ("big-endian", lambda a: a.astype(a.dtype.newbyteorder(">"))),
    ("unaligned big-endian", lambda a: unaligned(a, a.dtype.newbyteorder(">"))),
    ("read-only unaligned big-endian",
     lambda a: read_only(unaligned(a, a.dtype.newbyteorder(">")))),
]
LAYOUTS_1D = LAYOUTS_ANY + [
    ("column of a 2-d array", column),
    ("column of a Fortran array", lambda a: np.asfortranarray(np.stack([a, a, a], axis=1))[:, 1]),
]
LAYOUTS_2D = LAYOUTS_ANY + [
    ("fortran", np.asfortranarray),
    ("transposed", transposed),
    ("reversed columns", reversed_columns),
    ("column block", column),
    ("fortran, every other row", lambda a: np.asfortranarray(interleaved(a))),
    ("fortran read-only", lambda a: read_only(np.asfortranarray(a))),
    ("fortran big-endian", lambda a: np.asfortranarray(a.astype(a.dtype.newbyteorder(">")))),
]


def check(table, arr, want, name):
    got = table.lookup(arr)
    assert got.dtype == np.uint32 and got.shape == want.shape, name
    assert np.array_equal(got, want), f"{name}: {int((got != want).sum())} wrong answers"
    vals, found = table.lookup_mask(arr)
    assert np.array_equal(found, want != MISS), name
    assert np.array_equal(vals, np.where(found, want, 0)), name


def test_the_contiguous_answers_are_the_string_answers(table):
    v4, v6 = addresses()
    s4 = [str(ipaddress.IPv4Address(a)) for a in v4]
    s6 = [str(ipaddress.IPv6Address(a)) for a in v6]
    assert np.array_equal(table.lookup(as_u32(v4)), table.lookup(s4))
    assert np.array_equal(table.lookup(as_bytes(v6)), table.lookup(s6))
    assert np.array_equal(table.lookup(as_words(v6)), table.lookup(s6))


def test_fortran_ordered_ipv6_bytes_read_as_rows(table):
    """The issue #32 case: an (n, 16) uint8 array in Fortran order is n addresses, one per
    row, as np.ascontiguousarray would give; before the fix its memory was read in C order."""
    _, v6 = addresses()
    packed = as_bytes(v6)
    f = np.asfortranarray(packed)
    assert f.flags.f_contiguous and not f.flags.c_contiguous
    assert np.array_equal(table.lookup(f), table.lookup(np.ascontiguousarray(f)))
    assert np.array_equal(table.lookup(f), table.lookup([str(ipaddress.IPv6Address(a)) for a in v6]))


@pytest.mark.parametrize("name,make", LAYOUTS_1D, ids=[n for n, _ in LAYOUTS_1D])
def test_ipv4_uint32_layouts(table, name, make):
    v4, _ = addresses()
    base = as_u32(v4)
    want = table.lookup(base)
    arr = make(base)
    assert arr.shape == base.shape and np.array_equal(arr.astype(np.uint32), base), name
    check(table, arr, want, name)


@pytest.mark.parametrize("name,make", LAYOUTS_2D, ids=[n for n, _ in LAYOUTS_2D])
def test_ipv6_bytes_layouts(table, name, make):
    _, v6 = addresses()
    base = as_bytes(v6)
    want = table.lookup(base)
    arr = make(base)
    assert arr.shape == base.shape and np.array_equal(arr, base), name
    check(table, arr, want, name)


@pytest.mark.parametrize("name,make", LAYOUTS_2D, ids=[n for n, _ in LAYOUTS_2D])
def test_ipv6_words_layouts(table, name, make):
    _, v6 = addresses()
    base = as_words(v6)
    want = table.lookup(base)
    arr = make(base)
    assert arr.shape == base.shape and np.array_equal(arr.astype(np.uint64), base), name
    check(table, arr, want, name)


def test_unaligned_uint32_from_a_byte_offset(table):
    """np.frombuffer at an odd offset: C-contiguous yet unaligned (refused before the fix with
    'cannot make an aligned copy of the array')."""
    v4, _ = addresses()
    raw = b"\x00" + as_u32(v4).tobytes()
    arr = np.frombuffer(raw, dtype=np.uint32, offset=1)
    assert arr.flags.c_contiguous and not arr.flags.aligned and not arr.flags.writeable
    assert np.array_equal(table.lookup(arr), table.lookup(as_u32(v4)))


def test_broadcast_rows(table):
    """Stride-0 views (np.broadcast_to): every row the same address."""
    v4, v6 = addresses(1)
    want4 = table.lookup(as_u32(v4 * 5))
    assert np.array_equal(table.lookup(np.broadcast_to(as_u32(v4), (5,))), want4)
    want6 = table.lookup(as_bytes(v6 * 5))
    assert np.array_equal(table.lookup(np.broadcast_to(as_bytes(v6), (5, 16))), want6)
    assert np.array_equal(table.lookup(np.broadcast_to(as_words(v6), (5, 2))), want6)


@pytest.mark.parametrize("make", [lambda a: a, np.asfortranarray, read_only,
                                  lambda a: a.astype(a.dtype.newbyteorder(">"))])
def test_empty_arrays_of_every_layout(table, make):
    for empty in (np.zeros(0, np.uint32), np.zeros((0, 16), np.uint8),
                  np.zeros((0, 2), np.uint64)):
        out = table.lookup(make(empty))
        assert out.dtype == np.uint32 and out.shape == (0,)


@settings(max_examples=150, deadline=None)
@given(
    data=st.data(),
    kind=st.sampled_from(["u32", "bytes", "words"]),
    n=st.integers(0, 40),
)
def test_any_layout_reads_like_its_contiguous_copy(table, data, kind, n):
    """A random view (order, row step and direction, column direction, byte order, alignment,
    writeability) gives the answers of np.ascontiguousarray of the same view."""
    rng = random.Random(data.draw(st.integers(0, 2**32), label="seed"))
    v4 = [rng.getrandbits(32) for _ in range(n)]
    v6 = [rng.getrandbits(128) for _ in range(n)]
    base = {"u32": lambda: as_u32(v4), "bytes": lambda: as_bytes(v6),
            "words": lambda: as_words(v6)}[kind]()
    dt = base.dtype
    if data.draw(st.booleans(), label="big-endian"):
        dt = dt.newbyteorder(">")
    step = data.draw(st.sampled_from([1, 2, 3, -1, -2]), label="row step")
    fortran = base.ndim == 2 and data.draw(st.booleans(), label="fortran")
    # Writable storage for every |step|-th row, maybe one byte off alignment.
    shape = (max(1, n * abs(step)),) + base.shape[1:]
    if data.draw(st.booleans(), label="unaligned"):
        size = int(np.prod(shape)) * dt.itemsize
        buf = bytearray(size + 1)
        flat = np.frombuffer(buf, dtype=dt, offset=1)
        store = flat.reshape(shape[::-1]).T if fortran else flat.reshape(shape)
    else:
        store = np.zeros(shape, dtype=dt, order="F" if fortran else "C")
    view = store[::step][:n]
    view[...] = base
    if base.ndim == 2 and data.draw(st.booleans(), label="reversed columns"):
        view = view[:, ::-1].copy()[:, ::-1]
    if data.draw(st.booleans(), label="read-only"):
        view.setflags(write=False)
    assert view.shape == base.shape and np.array_equal(view, base)
    want = table.lookup(base)
    assert np.array_equal(table.lookup(view), want), (
        f"{kind} n={n} dtype={view.dtype.str} strides={view.strides} "
        f"flags c={view.flags.c_contiguous} f={view.flags.f_contiguous} "
        f"aligned={view.flags.aligned}"
    )


REFUSED = [
    # (input, exception, message pattern)
    (np.uint32(0x0A000001), TypeError, r"one address"),
    (np.array(0x0A000001, dtype=np.uint32), TypeError, r"0-d uint32 array.*reshape\(1\)"),
    (np.array("10.0.0.1"), TypeError, r"0-d .*array.*reshape\(1\)"),
    (np.zeros((2, 3, 16), np.uint8), TypeError, r"shape \(2, 3, 16\).*\(n, 16\) uint8"),
    (np.zeros((3, 4), np.uint8), TypeError, r"shape \(3, 4\).*uint32"),
    (np.zeros((3, 1), np.uint32), TypeError, r"shape \(3, 1\).*ravel"),
    (np.array([1, 2], dtype=np.int64), TypeError, r"int64.*astype\(np\.uint32\)"),
    (np.array([1, 2], dtype=">i8"), TypeError, r">i8.*astype\(np\.uint32\)"),
    (np.array([1, 2], dtype=np.uint64), TypeError, r"uint64.*astype\(np\.uint32\)"),
    (np.array([1, 2], dtype=np.int32), TypeError, r"int32.*astype\(np\.uint32\)"),
    (np.zeros(32, np.uint8), TypeError, r"1-d uint8.*reshape\(-1, 16\)"),
    (np.array([1.0, 2.0]), TypeError, r"float64.*uint32"),
    (np.array([True]), TypeError, r"bool.*uint32"),
    (np.zeros((2, 16), np.int8), TypeError, r"\(n, 16\).*int8.*astype\(np\.uint8\)"),
    (np.zeros((2, 16), np.uint16), TypeError, r"\(n, 16\).*uint16.*astype\(np\.uint8\)"),
    (np.zeros((2, 2), np.int64), TypeError, r"\(n, 2\).*int64.*astype\(np\.uint64\)"),
    (np.zeros((2, 2), np.uint32), TypeError, r"\(n, 2\).*uint32.*astype\(np\.uint64\)"),
    (np.zeros(2, dtype=[("a", "<u4")]), TypeError, r"\[\('a', '<u4'\)\].*uint32"),
]


def refused_id(arr):
    if not isinstance(arr, np.ndarray):
        return f"{type(arr).__name__} scalar"
    return f"{arr.dtype.str} {arr.shape}"


@pytest.mark.parametrize("arr,exc,pattern", REFUSED, ids=[refused_id(a) for a, _, _ in REFUSED])
def test_refusals_say_what_was_given_and_what_to_pass(table, arr, exc, pattern):
    with pytest.raises(exc, match=pattern) as e:
        table.lookup(arr)
    assert str(e.value).startswith("addrs: "), str(e.value)
    with pytest.raises(exc, match=pattern):
        table.lookup_mask(arr)
