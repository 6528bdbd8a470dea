"""Arrow input (the PyCapsule interface) and pyarrow output: the same answers as NumPy and
strings, nulls in and nulls out."""

import ipaddress
import random

import numpy as np
import pytest

import ipfib

pa = pytest.importorskip("pyarrow")
MISS = 0xFFFFFFFF


@pytest.fixture(scope="module")
def table():
    rng = random.Random(17)
    t = ipfib.Table()
    t["0.0.0.0/1"] = 1
    t["::/1"] = 2
    for i in range(3000):
        t[ipaddress.IPv4Network((rng.getrandbits(32), rng.randint(8, 32)), strict=False)] = i
        t[ipaddress.IPv6Network((rng.getrandbits(128), rng.randint(16, 128)), strict=False)] = i
    return t


def addresses(n, seed):
    rng = random.Random(seed)
    v4 = [ipaddress.IPv4Address(rng.getrandbits(32)) for _ in range(n)]
    v6 = [ipaddress.IPv6Address(rng.getrandbits(128)) for _ in range(n)]
    return v4, v6


def test_every_arrow_type_answers_as_strings(table):
    v4, v6 = addresses(20_000, 1)
    want4 = table.lookup([str(a) for a in v4])
    want6 = table.lookup([str(a) for a in v6])
    u32 = pa.array([int(a) for a in v4], pa.uint32())
    fsb = pa.array([a.packed for a in v6], pa.binary(16))
    assert np.array_equal(table.lookup(u32), want4)
    assert np.array_equal(table.lookup(fsb, threads=2), want6)
    mixed = [str(a) for pair in zip(v4, v6) for a in pair]
    want = table.lookup(mixed)
    for t in [pa.string(), pa.large_string(), pa.string_view()]:
        assert np.array_equal(table.lookup(pa.array(mixed, t), threads=3), want), t
    # Slices (an offset into the buffers) and chunked arrays (the stream interface).
    assert np.array_equal(table.lookup(u32.slice(5, 100)), want4[5:105])
    assert np.array_equal(table.lookup(fsb.slice(7, 50)), want6[7:57])
    assert np.array_equal(table.lookup(pa.array(mixed).slice(3, 99)), want[3:102])
    chunked = pa.chunked_array([mixed[:5000], mixed[5000:5001], [], mixed[5001:]])
    assert np.array_equal(table.lookup(chunked), want)
    out = np.zeros(len(mixed), np.uint32)
    assert table.lookup(chunked, out=out) is out and np.array_equal(out, want)


def test_nulls_in_nulls_out(table):
    addrs = ["10.0.0.1", None, "2001:db8::1", None, "192.0.2.1"]
    want = table.lookup([a or "0.0.0.0" for a in addrs], miss=7)
    arr = pa.array(addrs)
    got = table.lookup(arr, miss=7)
    assert list(got) == [want[0], 7, want[2], 7, want[4]]
    res = table.lookup_arrow(arr, miss=7)
    assert res.type == pa.uint32()
    assert res.to_pylist() == [int(want[0]), None, int(want[2]), None, int(want[4])]
    ints = pa.array([int(ipaddress.IPv4Address("10.0.0.1")), None], pa.uint32())
    assert table.lookup_arrow(ints).to_pylist()[1] is None
    values, found = table.lookup_mask(arr)
    assert list(found) == [True, False, True, False, True]
    assert list(values) == [want[0], 0, want[2], 0, want[4]]
    # Without nulls and for NumPy or list input: a plain uint32 array.
    assert table.lookup_arrow(["10.0.0.1"]).null_count == 0
    assert table.lookup_arrow(np.array([1, 2], np.uint32)).to_pylist() == list(
        table.lookup(np.array([1, 2], np.uint32))
    )


def test_lookup_mask_is_exact_for_every_value():
    t = ipfib.Table()
    t["10.0.0.0/8"] = MISS  # a route whose value is the miss sentinel
    t["11.0.0.0/8"] = 0
    values, found = t.lookup_mask(pa.array(["10.1.1.1", "11.1.1.1", "12.1.1.1", None]))
    assert list(found) == [True, True, False, False]
    assert list(values) == [MISS, 0, 0, 0]


def test_refusals(table):
    with pytest.raises(TypeError, match="Int64 array.*uint32"):
        table.lookup(pa.array([1, 2], pa.int64()))
    with pytest.raises(TypeError, match=r"fixed_size_binary\(4\)"):
        table.lookup(pa.array([b"abcd"], pa.binary(4)))
    chunked = pa.chunked_array([["10.0.0.1"] * 5000, ["10.0.0.1", "bad"]])
    with pytest.raises(ValueError, match=r"addrs\[5001\]: \"bad\""):
        table.lookup(chunked, threads=2)
    with pytest.raises(ValueError, match=r"addrs\[1\]"):
        table.lookup_arrow(pa.array(["10.0.0.1", "10.0.0.0/8"]))


def test_live_table_takes_arrow(table):
    lt = ipfib.LiveTable(table)
    arr = pa.array(["10.0.0.1", None, "2001:db8::1"])
    assert lt.lookup_arrow(arr).to_pylist() == table.lookup_arrow(arr).to_pylist()
    assert np.array_equal(lt.lookup(arr), table.lookup(arr))
