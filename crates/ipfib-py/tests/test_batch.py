"""Every batch input kind gives the same answers as single lookups."""

import ipaddress
import random
import threading
import time

import numpy as np
import pandas as pd
import pytest

import ipfib

MISS = 0xFFFFFFFF


@pytest.fixture(scope="module")
def table():
    rng = random.Random(7)
    t = ipfib.Table()
    t["0.0.0.0/1"] = 100
    t["::/1"] = 200
    for i in range(2000):
        v4 = rng.getrandbits(32)
        n4 = ipaddress.IPv4Network((v4, rng.randint(8, 32)), strict=False)
        t[n4] = i
        v6 = rng.getrandbits(128)
        n6 = ipaddress.IPv6Network((v6, rng.randint(16, 128)), strict=False)
        t[n6] = 10000 + i
    return t


def sample(n=3000, seed=3):
    rng = random.Random(seed)
    v4 = [ipaddress.IPv4Address(rng.getrandbits(32)) for _ in range(n)]
    v6 = [ipaddress.IPv6Address(rng.getrandbits(128)) for _ in range(n)]
    return v4, v6


def singles(t, addrs, miss=MISS):
    return np.array([t.get(str(a), miss) for a in addrs], dtype=np.uint32)


def test_single_lookups_match_an_independent_model(table):
    """The single lookups the batch tests compare with agree with a longest match worked out
    here, by prefix length over the table's own routes."""
    by_len = {}
    for net, value in table.items():
        net = ipaddress.ip_network(net)
        by_len.setdefault((net.version, net.prefixlen), {})[int(net.network_address)] = value
    v4, v6 = sample()
    for addr in v4 + v6:
        bits = addr.max_prefixlen
        want = MISS
        for length in range(bits, -1, -1):
            routes = by_len.get((addr.version, length))
            if routes is not None:
                key = int(addr) >> (bits - length) << (bits - length) if length else 0
                if key in routes:
                    want = routes[key]
                    break
        assert table.get(str(addr), MISS) == want, addr


def test_uint32_ipv4(table):
    v4, _ = sample()
    arr = np.array([int(a) for a in v4], dtype=np.uint32)
    want = singles(table, v4)
    got = table.lookup(arr)
    assert got.dtype == np.uint32 and got.shape == (len(v4),)
    assert np.array_equal(got, want)
    # Strided (not contiguous) input.
    assert np.array_equal(table.lookup(arr[::3]), want[::3])
    assert np.array_equal(table.lookup(arr, miss=5), singles(table, v4, 5))


def test_ipv6_packed_bytes_and_words(table):
    _, v6 = sample()
    packed = np.frombuffer(b"".join(a.packed for a in v6), dtype=np.uint8).reshape(-1, 16)
    words = np.array([[int(a) >> 64, int(a) & (2**64 - 1)] for a in v6], dtype=np.uint64)
    want = singles(table, v6)
    assert np.array_equal(table.lookup(packed), want)
    assert np.array_equal(table.lookup(words), want)
    assert np.array_equal(table.lookup(np.asfortranarray(words)), want)
    assert np.array_equal(table.lookup(packed[::2]), want[::2])


def test_strings_mixed_in_every_container(table):
    v4, v6 = sample(1000)
    mixed = [a for pair in zip(v4, v6) for a in pair]
    strs = [str(a) for a in mixed]
    want = singles(table, mixed)
    for container in (
        strs,
        tuple(strs),
        np.array(strs),  # dtype '<U..'
        np.array(strs, dtype=object),
        pd.Series(strs),
        pd.Series(strs, dtype="string"),
        (s for s in strs),
    ):
        got = table.lookup(container)
        assert np.array_equal(got, want), type(container)
    vals, found = table.lookup_mask(strs)
    assert np.array_equal(found, want != MISS)
    assert np.array_equal(vals, np.where(found, want, 0))
    # One family only takes the path without positions.
    assert np.array_equal(table.lookup([str(a) for a in v4]), singles(table, v4))
    assert np.array_equal(table.lookup([str(a) for a in v6]), singles(table, v6))


def test_string_lists_span_blocks(table):
    # Lists and tuples are parsed a block (4,096 strings) at a time: families that change
    # within and across blocks, and errors named by their index in the whole input.
    v4, v6 = sample(6000, seed=11)
    addrs = v4[:4500] + [a for pair in zip(v4[4500:], v6) for a in pair] + v6[:3000]
    strs = [str(a) for a in addrs]
    want = singles(table, addrs)
    assert np.array_equal(table.lookup(strs), want)
    assert np.array_equal(table.lookup(tuple(strs), miss=9), singles(table, addrs, 9))
    bad = list(strs)
    bad[9000] = "1.2.3.4.5"
    with pytest.raises(ValueError, match=r'addrs\[9000\]: "1.2.3.4.5" is not an IP address'):
        table.lookup(bad)
    bad[9000] = b"1.2.3.4"
    with pytest.raises(TypeError, match=r"addrs\[9000\] is bytes, not an address string"):
        table.lookup(tuple(bad))


class Text(str):
    """A str subclass, as a user's own string type would be."""


@pytest.mark.parametrize("container", [list, tuple])
def test_every_kind_of_str_object_is_read(table, container):
    # List items are read in place: compact ASCII text from the object, anything else
    # through the interpreter; each kind must give the answer of its plain text.
    v4, v6 = sample(200, seed=5)
    plain = [str(a) for a in v4 + v6]
    want = table.lookup(plain)
    kinds = [
        [Text(s) for s in plain],  # subclass objects: not compact
        ["".join(reversed(s))[::-1] for s in plain],  # made by slicing
        [(s + "é")[:-1] for s in plain],  # from Latin-1 text: still compact ASCII
        [(s + "\u20ac")[:-1] for s in plain],  # from 2-byte text
        [(s + "\U0001f600")[:-1] for s in plain],  # from 4-byte text
        [s.encode().decode() for s in plain],
    ]
    for items in kinds:
        assert np.array_equal(table.lookup(container(items)), want)
    for bad, index, error in [
        ("1.2.3.4é", 3, ValueError),  # Latin-1, not ASCII
        ("::1\u20ac", 4, ValueError),  # 2-byte kind
        ("1.2.3.4\ud800", 5, UnicodeEncodeError),  # no UTF-8 form
        ("1.2.3.4\x00", 6, ValueError),
    ]:
        items = list(plain)
        items[index] = bad
        with pytest.raises(error) as e:
            table.lookup(container(items))
        if error is ValueError:
            assert f"addrs[{index}]" in str(e.value)


def test_mask_tells_a_route_valued_miss_apart():
    t = ipfib.Table()
    t["10.0.0.0/8"] = MISS
    vals, found = t.lookup_mask(np.array([0x0A000001, 0x0B000001], dtype=np.uint32))
    assert list(found) == [True, False]
    assert list(vals) == [MISS, 0]


def test_unaligned_and_strided_views_read_the_right_addresses():
    t = ipfib.Table.from_pairs([("10.0.0.0/8", 1), ("11.0.0.0/8", 2), ("2001:db8::/32", 3)])
    want4 = [1, 2, MISS]
    v4 = [int(ipaddress.ip_address(a)) for a in ("10.1.2.3", "11.0.0.1", "12.0.0.0")]
    # A uint32 field of a packed structured array: 5-byte strides, unaligned elements.
    packed = np.zeros(3, dtype=[("pad", "u1"), ("addr", "<u4")])
    packed["addr"] = v4
    assert not packed["addr"].flags.aligned
    assert list(t.lookup(packed["addr"])) == want4
    # Every other element of a larger array (aligned, strided).
    spaced = np.zeros(6, dtype=np.uint32)
    spaced[::2] = v4
    assert list(t.lookup(spaced[::2])) == want4
    # IPv6 as (n, 2) uint64 and (n, 16) uint8 fields of packed records.
    a6 = [int(ipaddress.ip_address(a)) for a in ("2001:db8::1", "2001:db9::")]
    rec = np.zeros(2, dtype=[("pad", "u1"), ("hl", "<u8", (2,)), ("b", "u1", (16,))])
    rec["hl"] = [[a >> 64, a & (2**64 - 1)] for a in a6]
    rec["b"] = [list(a.to_bytes(16, "big")) for a in a6]
    assert list(t.lookup(rec["hl"])) == [3, MISS]
    assert list(t.lookup(rec["b"])) == [3, MISS]


def test_empty_inputs(table):
    for empty in ([], np.zeros(0, np.uint32), np.zeros((0, 16), np.uint8), np.zeros((0, 2), np.uint64)):
        out = table.lookup(empty)
        assert out.dtype == np.uint32 and out.shape == (0,)
        vals, found = table.lookup_mask(empty)
        assert vals.shape == (0,) and found.dtype == np.bool_


def test_bad_inputs_are_clear_errors(table):
    with pytest.raises(TypeError, match="astype"):
        table.lookup(np.array([1, 2], dtype=np.int64))
    with pytest.raises(TypeError, match="uint32"):
        table.lookup(np.zeros((3, 4), np.uint8))
    with pytest.raises(TypeError, match="one address"):
        table.lookup("10.0.0.1")
    with pytest.raises(ValueError, match=r"addrs\[1\]: \"10.0.0.256\""):
        table.lookup(["10.0.0.1", "10.0.0.256"])
    with pytest.raises(TypeError, match=r"addrs\[2\] is int"):
        table.lookup(["10.0.0.1", "::1", 5])
    with pytest.raises(TypeError):
        table.lookup(5)
    with pytest.raises(OverflowError):
        table.lookup([], miss=-1)


def test_lookups_see_changes(table):
    t = table.copy()
    arr = np.array([0x0A000001], dtype=np.uint32)
    before = t.lookup(arr)[0]
    t["10.0.0.1/32"] = 424242
    assert t.lookup(arr)[0] == 424242
    del t["10.0.0.1/32"]
    assert t.lookup(arr)[0] == before


def test_gil_is_released_during_the_engine():
    """Another thread runs Python code inside the time one long engine call takes.

    No speed is asserted: the main thread stamps the clock as it spins, the worker stamps it
    right before and after one long batch call, and a stamp strictly inside that call (with a
    margin at both ends for the copies and the switch) can only exist if the call released the
    GIL: a call holding it would leave the spinning thread no bytecode to run until it returns.
    """
    t = ipfib.Table()
    t["0.0.0.0/0"] = 1
    for i in range(0, 2**16, 7):
        t[f"{i >> 8}.{i & 255}.0.0/16"] = i
    arr = np.random.default_rng(1).integers(0, 2**32, size=16_000_000, dtype=np.uint32)
    t.lookup(arr[:10])  # built before the call
    call = {}
    done = threading.Event()

    def worker():
        call["start"] = time.perf_counter()
        t.lookup(arr)
        call["end"] = time.perf_counter()
        done.set()

    stamps = []
    th = threading.Thread(target=worker)
    th.start()
    n = 0
    while not done.is_set():
        n += 1
        if n % 64 == 0:
            stamps.append(time.perf_counter())
    th.join()
    margin = 0.01
    inside = [s for s in stamps if call["start"] + margin < s < call["end"] - margin]
    length = call["end"] - call["start"]
    assert length > 4 * margin, f"the call took {length:.3f} s: too short to tell"
    assert inside, (
        f"no Python ran in this thread during a {length:.3f} s engine call "
        f"({len(stamps)} stamps outside it): the call held the GIL"
    )


def test_concurrent_lookups_and_changes_never_crash():
    """Lookups while another thread inserts: each call answers from one version of the table.

    The /24s of 10.0.0.0/16 are inserted in order, so a version holds the first k of them:
    in every answer, the /24s that answered with their own value are all below those that
    still answered with the /16's, and every address outside 10.0.0.0/16 has its /16's value.
    """
    t = ipfib.Table.from_pairs([(f"10.{i}.0.0/16", i) for i in range(256)])
    arr = np.arange(0x0A000000, 0x0A000000 + 200_000, 7, dtype=np.uint32)
    second = (arr >> 16) & 0xFF
    third = (arr >> 8) & 0xFF
    in_first = second == 0
    errors = []

    def check(out):
        assert out.shape == arr.shape
        assert np.array_equal(out[~in_first], second[~in_first])
        y, got = third[in_first], out[in_first]
        new = got == 1000 + y
        assert np.all(new | (got == 0)), "an answer from neither the /16 nor the /24"
        if new.any() and (~new).any():
            assert y[new].max() < y[~new].min(), "answers from two versions in one call"

    def looker():
        try:
            for _ in range(20):
                check(t.lookup(arr))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=looker) for _ in range(3)]
    for th in threads:
        th.start()
    for i in range(200):
        t[f"10.0.{i}.0/24"] = 1000 + i
    for th in threads:
        th.join()
    assert not errors
    assert t["10.0.5.1"] == 1005


def big_sample(n, seed):
    """n random addresses of each family as the three numeric kinds: uint32, (n, 16) uint8
    and (n, 2) uint64 (the same IPv6 addresses)."""
    rng = np.random.default_rng(seed)
    v4 = rng.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32)
    v6_bytes = rng.integers(0, 256, size=(n, 16), dtype=np.uint8)
    v6_halves = v6_bytes.view(">u8").astype(np.uint64)
    return v4, v6_bytes, v6_halves


@pytest.mark.parametrize("threads", [1, 2, 3, 0])
def test_in_place_arrays_match_strings_on_any_thread_count(table, threads):
    """The arrays read in place (split over threads or not, blocks of 4,096 and a ragged end)
    answer what the strings of the same addresses answer."""
    n = 3 * 262_144 + 4_097  # several threads' worth, not a multiple of a block
    v4, v6_bytes, v6_halves = big_sample(n, 11)
    pick = np.random.default_rng(5).choice(n, 3000, replace=False)
    want4 = table.lookup([str(ipaddress.IPv4Address(int(a))) for a in v4[pick]])
    want6 = table.lookup([str(ipaddress.IPv6Address(bytes(b))) for b in v6_bytes[pick]])
    got4 = table.lookup(v4, threads=threads)
    got_bytes = table.lookup(v6_bytes, threads=threads)
    got_halves = table.lookup(v6_halves, threads=threads)
    assert np.array_equal(got4[pick], want4)
    assert np.array_equal(got_bytes[pick], want6)
    assert np.array_equal(got_halves, got_bytes)
    # The whole arrays against one thread (the split must not move or drop an answer).
    assert np.array_equal(got4, table.lookup(v4))
    assert np.array_equal(got_bytes, table.lookup(v6_bytes, threads=1))


def test_out_is_written_and_returned(table):
    v4, v6_bytes, _ = big_sample(10_000, 12)
    out = np.full(10_000, 7, dtype=np.uint32)
    got = table.lookup(v6_bytes, out=out)
    assert got is out
    assert np.array_equal(out, table.lookup(v6_bytes))
    # The general path (strings, mixed families) writes into out too.
    mixed = [str(ipaddress.IPv4Address(int(a))) for a in v4[:50]] + ["2001:db8::1"] * 50
    out = np.zeros(100, dtype=np.uint32)
    assert table.lookup(mixed, out=out, miss=5) is out
    assert np.array_equal(out, table.lookup(mixed, miss=5))


@pytest.mark.parametrize(
    "out, error, words",
    [
        (np.zeros(9, np.uint32), ValueError, "9 elements for 10 addresses"),
        (np.zeros(10, np.int32), TypeError, "uint32"),
        (np.zeros((10, 1), np.uint32), TypeError, "uint32"),
        (np.zeros(20, np.uint32)[::2], ValueError, "C-contiguous"),
        ([0] * 10, TypeError, "uint32"),
    ],
)
def test_bad_out_is_refused_and_left_alone(table, out, error, words):
    v4, _, _ = big_sample(10, 13)
    before = np.array(out, copy=True)
    with pytest.raises(error, match=words):
        table.lookup(v4, out=out)
    with pytest.raises(error, match=words):
        table.lookup([str(ipaddress.IPv4Address(int(a))) for a in v4], out=out)
    assert np.array_equal(np.asarray(out), before)


def test_read_only_out_is_refused(table):
    v4, _, _ = big_sample(10, 14)
    out = np.zeros(10, np.uint32)
    out.flags.writeable = False
    with pytest.raises((ValueError, TypeError)):
        table.lookup(v4, out=out)


def test_threads_must_be_a_count(table):
    v4, _, _ = big_sample(10, 15)
    with pytest.raises((OverflowError, TypeError)):
        table.lookup(v4, threads=-1)


@pytest.mark.parametrize("kind", ["U", "S"])
@pytest.mark.parametrize("threads", [1, 3])
def test_fixed_width_string_arrays_match_lists(table, kind, threads):
    """NumPy U and S arrays (parsed in Rust in blocks, GIL released) answer what a list of the
    same strings answers, across blocks, threads, both families mixed and padding."""
    v4, v6 = sample(40_000, seed=21)
    strs = [str(a) for pair in zip(v4, v6) for a in pair] + ["::", "0.0.0.0", "::ffff:1.2.3.4"]
    arr = np.array(strs, dtype=kind)
    want = table.lookup(strs)
    assert np.array_equal(table.lookup(arr, threads=threads), want)
    # Wider items (more padding), a non-contiguous view, a byte-swapped U array.
    wide = arr.astype(f"{kind}60")
    assert np.array_equal(table.lookup(wide, threads=threads), want)
    assert np.array_equal(table.lookup(wide[::2]), want[::2])
    if kind == "U":
        swapped = arr.astype(arr.dtype.newbyteorder(">" if np.little_endian else "<"))
        assert np.array_equal(table.lookup(swapped), want)
    values, found = table.lookup_mask(arr[:100])
    assert np.array_equal(np.where(found, values, MISS), want[:100])


@pytest.mark.parametrize(
    "arr, index, text",
    [
        (np.array(["10.0.0.1", "10.0.0.300"], dtype="U"), 1, "10.0.0.300"),
        (np.array(["10.0.0.1"] * 5000 + ["1.2.3.4/8"], dtype="U"), 5000, "1.2.3.4/8"),
        (np.array(["10.0.0.1", "10.0.0.1é"], dtype="U"), 1, "10.0.0.1é"),
        (np.array([b"10.0.0.1", b""], dtype="S"), 1, ""),
        (np.array([b"\x20\x01\x0d\xb8" + b"\x00" * 12], dtype="S16"), 0, None),
    ],
)
def test_bad_fixed_width_strings_are_named(table, arr, index, text):
    with pytest.raises(ValueError, match=rf"addrs\[{index}\]") as e:
        table.lookup(arr, threads=2)
    if text is not None:
        assert f'"{text}"' in str(e.value)
    if arr.dtype.kind == "S":
        assert "view(np.uint8)" in str(e.value)
