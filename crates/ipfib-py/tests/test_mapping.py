"""The mapping API against the pure-Python reference, by hypothesis and by hand."""

import ipaddress

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ipfib
from conftest import Reference

# Engines that hold both families, and those that hold IPv4 only (DXR and its presets).
DUAL = [e for e in ipfib.engines(4) if e in ipfib.engines(6)]
V4_ONLY = [e for e in ipfib.engines(4) if e not in ipfib.engines(6)]

BITS = {4: 32, 6: 128}
# High bits shared by many generated prefixes, so they nest, share starts and end where others
# begin; plus the two ends of each space.
ANCHORS = {
    4: [0, 0x0A000000, 0x0A010000, 0xC0000200, 0xFFFFFF00],
    6: [0, 0x20010DB8 << 96, (0x20010DB8 << 96) | (1 << 80), 0xFFFF << 112, (1 << 128) - (1 << 64)],
}


@st.composite
def prefixes(draw, family=None):
    fam = draw(st.sampled_from([4, 6])) if family is None else family
    bits = BITS[fam]
    anchor = draw(st.sampled_from(ANCHORS[fam]))
    noise = draw(st.integers(0, (1 << bits) - 1)) >> draw(st.sampled_from([bits // 4, bits // 2, bits - 8, bits]))
    length = draw(st.integers(0, bits))
    base = (anchor ^ noise) & ((1 << bits) - 1)
    mask = ((1 << bits) - 1) ^ ((1 << (bits - length)) - 1)
    net = ipaddress.ip_network((base & mask, length)) if fam == 4 else ipaddress.IPv6Network((base & mask, length))
    if draw(st.booleans()) and length > 0:
        # The adjacent prefix of the same length (wrapping at the top of the space).
        step = 1 << (bits - length)
        start = (int(net.network_address) + step) % (1 << bits)
        cls = ipaddress.IPv4Network if fam == 4 else ipaddress.IPv6Network
        net = cls((start, length))
    return net


values = st.integers(0, 2**32 - 1)


def op_lists(family=None):
    """Sequences of sets, deletes and lookups of prefixes of `family` (both when None)."""
    return st.lists(
        st.one_of(
            st.tuples(st.just("set"), prefixes(family), values),
            st.tuples(st.just("del"), prefixes(family), st.just(0)),
            st.tuples(st.just("look"), prefixes(family), st.just(0)),
        ),
        max_size=60,
    )


def probe_addresses(ref, extra):
    """The first and last address of every route and of the extra prefixes, and just outside."""
    out = []
    for net in list(ref.routes) + extra:
        first, last = int(net.network_address), int(net.broadcast_address)
        top = (1 << net.max_prefixlen) - 1
        cls = ipaddress.IPv4Address if net.version == 4 else ipaddress.IPv6Address
        for v in (first, last, first - 1, last + 1):
            if 0 <= v <= top:
                out.append(cls(v))
    return out


def check_lookups(t, ref, addrs):
    for a in addrs:
        want = ref.longest(a)
        s = str(a)
        assert t.get(s) == (want[1] if want else None), s
        assert (s in t) == (want is not None)
        assert t.get_key(s) == (str(want[0]) if want else None), s
    if addrs:
        got = t.lookup([str(a) for a in addrs], miss=7)
        vals, found = t.lookup_mask([str(a) for a in addrs])
        for i, a in enumerate(addrs):
            want = ref.longest(a)
            assert found[i] == (want is not None)
            assert vals[i] == (want[1] if want else 0)
            assert got[i] == (want[1] if want else 7)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op_lists(), st.sampled_from(DUAL))
def test_mapping_matches_reference(ops, engine):
    run_mapping(ops, engine)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op_lists(4), st.sampled_from(V4_ONLY or ["planb"]))
def test_ipv4_only_engines_match_reference(ops, engine):
    run_mapping(ops, engine)


def run_mapping(ops, engine):
    """Applies `ops` to a table on `engine` and to the reference, then compares everything."""
    t = ipfib.Table(engine=engine)
    ref = Reference()
    touched = []
    for op, net, value in ops:
        touched.append(net)
        key = str(net)
        if op == "set":
            t[key] = value
            ref.insert(net, value)
        elif op == "del":
            if net in ref.routes:
                del t[key]
                ref.delete(net)
            else:
                try:
                    del t[key]
                except KeyError:
                    pass
                else:
                    raise AssertionError(f"del of absent {key} did not raise KeyError")
        else:
            # A lookup right after changes: answered from the route set or a rebuilt engine,
            # never a stale one.
            addr = net.network_address
            want = ref.longest(addr)
            assert t.get(addr) == (want[1] if want else None)
        assert len(t) == len(ref.routes)
    assert list(t) == [str(n) for n in ref.order()]
    assert t.items() == [(str(n), ref.routes[n]) for n in ref.order()]
    for net in touched:
        assert t.has_key(net) == (net in ref.routes)
        p = ref.parent(net)
        assert t.parent(str(net)) == (str(p) if p else None)
        assert t.children(net) == [str(c) for c in ref.children(net)]
        # A prefix key looks up the longest route containing the whole prefix.
        sup = [n for n in ref.routes if n.version == net.version and net.subnet_of(n)]
        best = max(sup, key=lambda n: n.prefixlen) if sup else None
        assert t.get(net) == (ref.routes[best] if best else None)
    check_lookups(t, ref, probe_addresses(ref, touched))


def test_families_never_match_each_other():
    t = ipfib.Table()
    t["0.0.0.0/0"] = 4
    assert t.get("::ffff:10.1.2.3") is None
    assert t.get("::") is None
    t["::/0"] = 6
    assert t["::ffff:10.1.2.3"] == 6
    assert t["10.1.2.3"] == 4
    assert list(t.lookup(["1.2.3.4", "::1"])) == [4, 6]


def test_key_forms():
    t = ipfib.Table()
    t[ipaddress.ip_network("10.0.0.0/8")] = 1
    t[("192.0.2.0", 24)] = 2
    t[bytes([198, 51, 100, 7])] = 3  # packed: a host route
    t[ipaddress.ip_address("2001:db8::1")] = 4
    assert t.has_key("198.51.100.7/32")
    assert t.has_key("2001:db8::1/128")
    assert t[ipaddress.ip_address("10.9.9.9")] == 1
    assert t[bytes(ipaddress.ip_address("192.0.2.9").packed)] == 2
    assert t[(ipaddress.ip_address("192.0.2.0"), 25)] == 2
    t.int_family = 4
    assert t[0x0A000001] == 1
    assert t[(0xC0000200, 24)] == 2
    t6 = ipfib.Table(int_family=6)
    t6[(0x20010DB8 << 96, 32)] = 5
    assert t6[(0x20010DB8 << 96) | 1] == 5
    assert t6.int_family == 6


def test_get_default_and_keyerror():
    t = ipfib.Table()
    assert t.get("10.0.0.1") is None
    assert t.get("10.0.0.1", -1) == -1
    try:
        t["10.0.0.1"]
    except KeyError as e:
        assert "10.0.0.1" in str(e)
    else:
        raise AssertionError("no KeyError")


def test_engine_switch_keeps_answers():
    t = ipfib.Table.from_pairs([("10.0.0.0/8", 1), ("10.1.0.0/16", 2), ("2001:db8::/32", 3)])
    addrs = ["10.1.2.3", "10.2.0.0", "2001:db8::1", "11.0.0.0"]
    want = list(t.lookup(addrs))
    for e in DUAL:
        t.engine = e
        assert t.engine == e
        assert list(t.lookup(addrs)) == want
        assert [t.get(a, 2**32 - 1) for a in addrs] == want


def test_interleaved_changes_and_lookups_stay_current():
    """Many single lookups between changes: slow answers, then a rebuild, then fast ones."""
    t = ipfib.Table()
    for i in range(300):
        t[f"10.{i // 256}.{i % 256}.0/24"] = i
        assert t[f"10.{i // 256}.{i % 256}.9"] == i
        # Enough lookups to pass the rebuild threshold now and then.
        for _ in range(3):
            assert t["10.0.0.1"] == 0
    del t["10.0.0.0/24"]
    assert t.get("10.0.0.1") is None
    assert list(t.lookup(np.array([0x0A000001, 0x0A000101], dtype=np.uint32))) == [2**32 - 1, 1]


def test_copy_is_independent():
    t = ipfib.Table.from_pairs([("10.0.0.0/8", 1)])
    u = t.copy()
    u["10.0.0.0/8"] = 2
    assert t["10.1.1.1"] == 1 and u["10.1.1.1"] == 2
