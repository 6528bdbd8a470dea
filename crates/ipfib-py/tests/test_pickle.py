"""Pickling: round trips keep the routes and the built engine; bad bytes are errors."""

import gzip
import pickle
import time

import numpy as np
import pytest

import ipfib
from conftest import data_file

ROUTES = [("10.0.0.0/8", 1), ("10.1.0.0/16", 2), ("0.0.0.0/0", 0), ("2001:db8::/32", 3),
          ("2001:db8:1::/48", 4), ("ffff::/16", 2**32 - 1), ("::1/128", 5)]
ADDRS = ["10.1.2.3", "10.2.0.0", "11.0.0.0", "2001:db8:1::1", "2001:db8:2::", "ffff:ffff::", "::1", "::2"]


@pytest.mark.parametrize("engine", [e for e in ipfib.engines(4) if e in ipfib.engines(6)])
def test_round_trip(engine):
    t = ipfib.Table.from_pairs(ROUTES, engine=engine, int_family=6)
    want = t.lookup(ADDRS)
    for proto in (2, pickle.HIGHEST_PROTOCOL):
        u = pickle.loads(pickle.dumps(t, protocol=proto))
        assert isinstance(u, ipfib.Table)
        assert u.engine == engine and u.int_family == 6
        assert len(u) == len(t)
        assert np.array_equal(u.lookup(ADDRS), want)
        assert [u.get(a) for a in ADDRS] == [t.get(a) for a in ADDRS]
        assert u.items() == t.items()
        assert u.parent("10.1.0.0/16") == "10.0.0.0/8"
        assert u.children("2001:db8::/32") == ["2001:db8:1::/48"]
        # The unpickled table is a table like any other.
        u["10.1.2.0/24"] = 9
        assert u["10.1.2.3"] == 9 and t["10.1.2.3"] == 2
        del u["0.0.0.0/0"]
        assert u.get("11.0.0.0") is None


def test_changed_table_pickles_current_routes():
    t = ipfib.Table.from_pairs(ROUTES)
    t.lookup(ADDRS)
    t["10.1.2.0/24"] = 8  # the built engine is now out of date
    u = pickle.loads(pickle.dumps(t))
    assert u["10.1.2.3"] == 8


def test_empty_table_pickles():
    u = pickle.loads(pickle.dumps(ipfib.Table()))
    assert len(u) == 0 and list(u) == [] and u.get("10.0.0.1") is None


def test_damaged_bytes_are_value_errors():
    t = ipfib.Table.from_pairs(ROUTES)
    data = pickle.dumps(t)
    state = t.__reduce__()[1][0]
    for bad in (b"", b"IPFIBPY1", state[:20], state[:-5], b"XXXXXXXX" + state[8:],
                state[:40] + bytes([state[40] ^ 0xFF]) + state[41:]):
        with pytest.raises(ValueError):
            ipfib.Table._from_pickle(bad)
    assert pickle.loads(data).items() == t.items()


@pytest.mark.parametrize("built", [False, True])
def test_a_false_route_count_is_a_value_error(built):
    """The header's route count must match the routes the pickle holds, built or not."""
    t = ipfib.Table.from_pairs(ROUTES)
    if built:
        t.lookup(ADDRS)
    state = t.__reduce__()[1][0]
    at = 8 + 1 + 1 + 1 + state[10]  # magic, kind, int family, name length, name
    assert int.from_bytes(state[at:at + 8], "little") == len(ROUTES)
    for count in (len(ROUTES) + 1, 2**40, 2**64 - 1):
        bad = state[:at] + count.to_bytes(8, "little") + state[at + 8:]
        with pytest.raises(ValueError, match="count"):
            ipfib.Table._from_pickle(bad)


def test_big_table_pickles_and_unpickles_whole():
    """A 902 K-route table round-trips through pickle. The time is printed, not asserted
    (speed is measured by the benchmarks, not by tests on a shared machine)."""
    path = data_file("ipv4/ipv4-bart-tier1-2023.txt.gz")
    t = ipfib.Table.load(path)
    with gzip.open(path, "rt") as f:
        prefixes = {line.split()[0] for line in f if line.split("#", 1)[0].strip()}
    assert len(t) == len(prefixes)
    t0 = time.perf_counter()
    data = pickle.dumps(t, protocol=pickle.HIGHEST_PROTOCOL)
    t1 = time.perf_counter()
    u = pickle.loads(data)
    t2 = time.perf_counter()
    print(f"\n{len(t):,} routes: pickle {t1 - t0:.3f} s, unpickle {t2 - t1:.3f} s, {len(data) / 1e6:.1f} MB")
    assert len(u) == len(t)
    addrs = np.random.default_rng(5).integers(0, 2**32, 100_000, dtype=np.uint32)
    assert np.array_equal(u.lookup(addrs), t.lookup(addrs))
    assert u.items() == t.items()


def test_pickling_while_another_thread_changes_the_table():
    """Each pickle describes one table: its count, routes and engine agree."""
    import threading

    t = ipfib.Table.from_pairs([(f"10.{i}.0.0/16", i) for i in range(200)])
    stop = threading.Event()

    def churn():
        i = 0
        while not stop.is_set():
            t[f"11.{i % 250}.0.0/16"] = i
            if i % 3 == 0:
                del t[f"11.{i % 250}.0.0/16"]
            i += 1

    th = threading.Thread(target=churn)
    th.start()
    try:
        for _ in range(30):
            u = pickle.loads(pickle.dumps(t))
            keys = list(u)
            assert len(u) == len(keys)
            addrs = [k.split("/")[0] for k in keys]
            assert list(u.lookup(addrs)) == [u.get(a) for a in addrs]
    finally:
        stop.set()
        th.join()
