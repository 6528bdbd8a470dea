"""Table.load on real tables (text and MRT) against independent Python readings of them."""

import gzip
import ipaddress
import random

import numpy as np
import pytest

import ipfib
from conftest import data_file


def read_text(path):
    routes = {}
    with gzip.open(path, "rt") as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if line:
                routes[ipaddress.ip_network(line[0])] = int(line[1])
    return routes


def lpm(by_len, family_bits, addr):
    """Longest match over {length: {network int: value}}."""
    a = int(addr)
    for length in sorted(by_len, reverse=True):
        key = a >> (family_bits - length) << (family_bits - length) if length else 0
        v = by_len[length].get(key)
        if v is not None:
            return v
    return None


@pytest.mark.parametrize("rel", ["ipv6/ipv6-ris-dfz10-20241220.txt.gz", "ipv4/ipv4-bgpdump-et-20151023.txt.gz"])
def test_real_text_table(rel):
    path = data_file(rel)
    routes = read_text(path)
    t = ipfib.Table.load(str(path))
    assert len(t) == len(routes)
    bits = 32 if rel.startswith("ipv4") else 128
    by_len = {}
    for net, v in routes.items():
        by_len.setdefault(net.prefixlen, {})[int(net.network_address)] = v
    rng = random.Random(11)
    nets = rng.sample(list(routes), 3000)
    cls = ipaddress.IPv4Address if bits == 32 else ipaddress.IPv6Address
    addrs = [n.network_address for n in nets] + [n.broadcast_address for n in nets]
    addrs += [cls(rng.getrandbits(bits)) for _ in range(3000)]
    want = [lpm(by_len, bits, a) for a in addrs]
    got = t.lookup([str(a) for a in addrs])
    assert [None if g == 0xFFFFFFFF else int(g) for g in got] == want
    assert [t.get(str(a)) for a in addrs[:500]] == want[:500]
    for net in nets[:200]:
        assert t.has_key(str(net)) and t[str(net)] == routes[net]


def best_path_origins(bgpdump_m):
    """Origin AS per prefix by the documented best-path rule, from bgpdump -m text."""
    peer_index = {}
    best = {}
    with gzip.open(bgpdump_m, "rt") as f:
        for line in f:
            fields = line.rstrip("\n").split("|")
            peer, prefix, path = fields[3], fields[5], fields[6].split()
            idx = peer_index.setdefault(peer, len(peer_index))
            hops = len(path)
            if path and path[-1].startswith("{"):
                origin = min(int(x) for x in path[-1].strip("{}").split(","))
            elif path:
                origin = int(path[-1])
            else:
                origin = int(fields[4])
            rank = (hops, idx)
            if prefix not in best or rank < best[prefix][0]:
                best[prefix] = (rank, origin)
    return {ipaddress.ip_network(p): o for p, (_, o) in best.items()}


def test_mrt_origin_as():
    rib = data_file("mrt/rib/rrc00.bview.20020722.2337.gz")
    expected = data_file("mrt/expected/bgpdump-bview.20020722.2337.gz.bgpdump-m.txt.gz")
    want = best_path_origins(expected)
    t = ipfib.Table.load(rib, value="origin-as")
    got = {ipaddress.ip_network(k): v for k, v in t.items()}
    assert len(got) == len(want)
    diff = [p for p in want if got.get(p) != want[p]]
    assert not diff, f"{len(diff)} prefixes differ, e.g. {diff[:3]}"
    # The other options are accepted and change what is stored.
    by_peer = ipfib.Table.load(rib, value="peer")
    assert set(by_peer.values()) <= set(range(64))
    one_peer = ipfib.Table.load(rib, peer=0, allow_empty=True)
    assert len(one_peer) <= len(t)


def test_saved_table_file_loads(tmp_path):
    t = ipfib.Table.from_pairs([("10.0.0.0/8", 1), ("10.1.0.0/16", 2), ("2001:db8::/32", 3)])
    saved = tmp_path / "t.ipfib"
    t.save(saved)
    u = ipfib.Table.load(saved)
    assert u.items() == t.items()
    assert list(u.lookup(np.array([0x0A010001, 0x0A020001], np.uint32))) == [2, 1]
    assert u.get("2001:db8::1") == 3
    # Loaded with another engine, it is rebuilt from its routes.
    r = ipfib.Table.load(saved, engine="reference")
    assert r.engine == "reference" and r.items() == t.items()
    with pytest.raises(ValueError, match="reference"):
        r.save(tmp_path / "r.ipfib")
    with pytest.raises(FileNotFoundError):
        t.save(tmp_path / "no" / "such" / "dir.ipfib")
    # A damaged saved file is a ValueError naming the file.
    damaged = tmp_path / "damaged.ipfib"
    data = bytearray(saved.read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="damaged.ipfib"):
        ipfib.Table.load(damaged)


def _through_pipe(data):
    """A readable end of a pipe that a thread fills with `data`, as a /dev/fd path."""
    import os
    import threading

    r, w = os.pipe()

    def feed():
        with os.fdopen(w, "wb") as f:
            f.write(data)

    threading.Thread(target=feed, daemon=True).start()
    return r, f"/dev/fd/{r}"


@pytest.mark.parametrize("kind", ["text", "saved"])
def test_load_reads_a_pipe_from_its_first_byte(tmp_path, kind):
    """Table.load on a pipe reads every byte once (the format sniff used to eat 8 of them)."""
    import os

    t = ipfib.Table.from_pairs([("10.0.0.0/8", 1), ("10.1.0.0/16", 2), ("2001:db8::/32", 3)])
    saved = tmp_path / "t.ipfib"
    t.save(saved)
    data = saved.read_bytes() if kind == "saved" else b"10.0.0.0/8 1\n10.1.0.0/16 2\n2001:db8::/32 3\n"
    fd, path = _through_pipe(data)
    try:
        u = ipfib.Table.load(path)
    finally:
        os.close(fd)
    assert u.items() == t.items()


def test_saved_table_is_read_into_memory_unless_mmap(tmp_path):
    """The default load keeps working when the file is truncated and overwritten; mmap=True
    maps it (its contract: the file is replaced by rename only, as save does)."""
    t = ipfib.Table.from_pairs([("10.0.0.0/8", 1), ("2001:db8::/32", 3)])
    saved = tmp_path / "t.ipfib"
    t.save(saved)
    u = ipfib.Table.load(saved)
    with open(saved, "r+b") as f:
        f.truncate(0)
        f.write(b"\0" * 4096)
    assert u.get("10.1.2.3") == 1 and u.get("2001:db8::1") == 3
    t.save(saved)
    m = ipfib.Table.load(saved, mmap=True)
    t2 = ipfib.Table.from_pairs([("10.0.0.0/8", 9)])
    t2.save(saved)  # a rename over the mapped file: the mapping keeps the old one
    assert m.get("10.1.2.3") == 1
    assert ipfib.Table.load(saved).get("10.1.2.3") == 9
