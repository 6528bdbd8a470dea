"""ipfib.LiveTable: changes from any thread, lookups that answer from one whole version."""

import ipaddress
import threading

import numpy as np
import pytest

import ipfib

MISS = 0xFFFFFFFF


def base():
    t = ipfib.Table()
    t["10.0.0.0/8"] = 1
    t["10.1.0.0/16"] = 2
    t["2001:db8::/32"] = 3
    return t


def test_starts_with_the_routes_and_follows_changes():
    t = base()
    lt = ipfib.LiveTable(t)
    assert lt.version == 0 and lt.engine == "planb"
    assert lt["10.1.2.3"] == 2 and lt.get("2001:db8::1") == 3 and "192.0.2.1" not in lt
    t["10.1.0.0/16"] = 99  # the live table copied the routes
    assert lt["10.1.2.3"] == 2
    lt.insert("192.0.2.0/24", 4)
    lt["10.1.0.0/16"] = 5
    lt.remove("10.0.0.0/8")
    lt.remove("172.16.0.0/12")  # absent: nothing
    lt.flush()
    assert lt.version >= 1
    assert lt.get("10.2.0.0") is None and lt.get("10.2.0.0", 7) == 7
    assert lt["10.1.2.3"] == 5 and lt["192.0.2.1"] == 4
    with pytest.raises(KeyError):
        lt["10.2.0.0"]
    assert sorted(lt.table().items()) == [
        ("10.1.0.0/16", 5),
        ("192.0.2.0/24", 4),
        ("2001:db8::/32", 3),
    ]
    addrs = ["10.1.2.3", "192.0.2.9", "2001:db8::1", "10.2.0.0", "::1"]
    want = lt.table().lookup(addrs)
    assert np.array_equal(lt.lookup(addrs), want)
    values, found = lt.lookup_mask(addrs)
    assert list(found) == [True, True, True, False, False]
    v4 = np.array([int(ipaddress.IPv4Address("10.1.2.3"))] * 10, np.uint32)
    out = np.zeros(10, np.uint32)
    assert lt.lookup(v4, out=out) is out and set(out) == {5}


def test_a_batch_is_all_or_nothing():
    lt = ipfib.LiveTable(base())
    with pytest.raises(ValueError, match=r"changes\[2\]"):
        lt.apply([("10.0.0.0/8", 7), ("10.9.0.0/16", None), ("10.0.0.1/8", 1)])
    with pytest.raises(ValueError, match=r"changes\[1\].*pair"):
        lt.apply([("10.0.0.0/8", 7), "10.9.0.0/16"])
    with pytest.raises(ValueError, match=r"changes\[0\].*value"):
        lt.apply([("10.0.0.0/8", -1)])
    lt.flush()
    assert lt.version == 0 and lt["10.0.0.1"] == 1
    lt.apply([("10.0.0.0/8", 7), ("10.1.0.0/16", None), ("2001:db8::/32", 8)])
    lt.flush()
    assert (lt["10.1.0.1"], lt["2001:db8::1"]) == (7, 8)


def test_an_engine_that_cannot_hold_a_family_refuses_the_batch():
    t = ipfib.Table("dxr")
    t["10.0.0.0/8"] = 1
    lt = ipfib.LiveTable(t, engine="dxr")
    with pytest.raises(ValueError, match="update 1: engine dxr does not support IPv6"):
        lt.apply([("11.0.0.0/8", 2), ("2001:db8::/32", 3)])
    lt.flush()
    assert "11.0.0.1" not in lt


def test_bad_arguments():
    with pytest.raises(ValueError, match="nosuch"):
        ipfib.LiveTable(engine="nosuch")
    lt = ipfib.LiveTable()
    with pytest.raises(ValueError, match="host bits|10.0.0.1/8"):
        lt.insert("10.0.0.1/8", 1)
    with pytest.raises(ValueError):
        lt.insert("10.0.0.0/8", True)
    with pytest.raises(ValueError, match="prefix"):
        lt.get("10.0.0.0/8")
    with pytest.raises(TypeError):
        ipfib.LiveTable(routes="10.0.0.0/8")


def test_save_and_load(tmp_path):
    lt = ipfib.LiveTable(base())
    lt.insert("192.0.2.0/24", 4)
    lt.flush()
    path = tmp_path / "live.ipfib"
    lt.save(path)
    t = ipfib.Table.load(str(path))
    assert sorted(t.items()) == sorted(lt.table().items())
    with pytest.raises(ValueError):
        ipfib.LiveTable(base(), engine="reference").save(tmp_path / "ref.ipfib")


def test_readers_never_see_a_mixed_version():
    """A writer re-points every route to the next version number in one batch, 200 times;
    reader threads look up addresses under every route, in batches of each kind. Each answer
    array must hold a single value (one version), never smaller than the last one seen."""
    n = 64
    nets4 = [f"10.{i}.0.0/16" for i in range(n)]
    nets6 = [f"2001:db8:{i:x}::/48" for i in range(n)]
    t = ipfib.Table()
    for net in nets4 + nets6:
        t[net] = 0
    lt = ipfib.LiveTable(t, delay_us=0)
    v4 = np.array([int(ipaddress.IPv4Address(f"10.{i}.1.1")) for i in range(n)] * 64, np.uint32)
    v6 = np.frombuffer(
        b"".join(ipaddress.IPv6Address(f"2001:db8:{i:x}::1").packed for i in range(n)) * 64,
        np.uint8,
    ).reshape(-1, 16)
    strs = [f"10.{i}.1.1" for i in range(n)] + [f"2001:db8:{i:x}::1" for i in range(n)]
    done = threading.Event()
    problems = []
    counts = []

    def read(addrs, threads):
        last, calls = 0, 0
        while not done.is_set() or calls < 3:
            got = lt.lookup(addrs, threads=threads)
            calls += 1
            values = set(got.tolist())
            if len(values) != 1:
                problems.append(f"mixed answer: {sorted(values)[:5]}")
                return
            (v,) = values
            if v < last:
                problems.append(f"went back from {last} to {v}")
                return
            last = v
        counts.append(calls)

    readers = [
        threading.Thread(target=read, args=(v4, 1)),
        threading.Thread(target=read, args=(v6, 2)),
        threading.Thread(target=read, args=(strs, 1)),
    ]
    for r in readers:
        r.start()
    try:
        for version in range(1, 201):
            lt.apply([(net, version) for net in nets4 + nets6])
            if version % 50 == 0:
                lt.flush()
        lt.flush()
    finally:
        done.set()
        for r in readers:
            r.join()
    assert not problems, problems
    assert len(counts) == 3
    assert set(lt.lookup(v4).tolist()) == {200}
