"""ipfib_polars.lookup against ipfib.Table on the same table: a hand-written table of edge
cases, eager, lazy, chunked and streaming queries, errors, changed tables, and real tables
from ../shared/data (skipped, saying so, when absent)."""

import ipaddress
import os
import random
import time
from pathlib import Path

import ipfib
import polars as pl
import pytest

import ipfib_polars

REPO = Path(__file__).resolve().parents[3]

ROUTES = {
    "0.0.0.0/0": 1,
    "10.0.0.0/8": 2,
    "10.1.0.0/16": 3,
    "10.1.2.0/24": 4,
    "10.1.2.3/32": 5,
    "192.0.2.0/24": 6,
    # The value Table.lookup uses for a miss by default: the plugin must still tell it apart.
    "203.0.113.0/24": 0xFFFFFFFF,
    "2001:db8::/32": 10,
    "2001:db8:1::/48": 11,
    "2001:db8:1::1/128": 12,
    "::ffff:0:0/96": 13,  # IPv4-mapped IPv6: looked up as IPv6, as Table.lookup does
    "::/128": 14,
}

ADDRS = [
    "10.1.2.3",  # /32
    "10.1.2.4",  # /24
    "10.1.3.1",  # /16
    "10.200.0.1",  # /8
    "8.8.8.8",  # default route
    "0.0.0.0",
    "255.255.255.255",
    "192.0.2.255",
    "203.0.113.7",  # value 0xFFFFFFFF
    "2001:db8:1::1",  # /128
    "2001:db8:1::2",  # /48
    "2001:db8:2::1",  # /32
    "2001:db9::1",  # miss (no IPv6 default)
    "::",  # ::/128
    "::1",  # miss
    "::ffff:10.1.2.3",  # IPv4-mapped text
    "::ffff:a01:203",  # the same address written in hex
    "fe80::1",  # miss
]


@pytest.fixture
def table():
    return ipfib.Table.from_pairs(ROUTES.items())


@pytest.fixture
def saved(table, tmp_path):
    path = tmp_path / "hand.ipfib"
    table.save(path)
    return path


def expected(t, addrs):
    """Table.lookup's answers with misses as None (lookup_mask tells a miss from 0xFFFFFFFF)."""
    present = [a for a in addrs if a is not None]
    values, found = t.lookup_mask(present) if present else ([], [])
    answers = iter(int(v) if f else None for v, f in zip(values, found))
    return [None if a is None else next(answers) for a in addrs]


def packed(a):
    return None if a is None else ipaddress.ip_address(a).packed


def run(frame, table):
    return frame.select(ipfib_polars.lookup("a", table)).to_series()


def test_strings_eager(table, saved):
    addrs = ADDRS + [None, "10.1.2.3", None]
    out = run(pl.DataFrame({"a": addrs}), saved)
    assert out.dtype == pl.UInt32
    assert out.name == "a"
    assert out.to_list() == expected(table, addrs)
    assert out.to_list()[8] == 0xFFFFFFFF
    assert out.to_list()[12] is None


def test_binary_and_uint32(table, saved):
    addrs = ADDRS + [None]
    b = pl.DataFrame({"a": [packed(a) for a in addrs]}, schema={"a": pl.Binary})
    assert run(b, saved).to_list() == expected(table, addrs)
    v4 = [a for a in ADDRS if ":" not in a] + [None]
    ints = [None if a is None else int(ipaddress.IPv4Address(a)) for a in v4]
    u = pl.DataFrame({"a": ints}, schema={"a": pl.UInt32})
    assert run(u, saved).to_list() == expected(table, v4)


def test_path_like_and_str_and_expr(table, saved):
    df = pl.DataFrame({"x": ADDRS})
    want = expected(table, ADDRS)
    for t in (saved, str(saved)):
        out = df.select(ipfib_polars.lookup(pl.col("x").str.strip_chars(), t)).to_series()
        assert out.to_list() == want


def test_relative_path_is_made_absolute(table, saved, monkeypatch):
    monkeypatch.chdir(saved.parent)
    expr = ipfib_polars.lookup("a", saved.name)
    monkeypatch.chdir(REPO)
    assert pl.DataFrame({"a": ADDRS}).select(expr).to_series().to_list() == expected(table, ADDRS)


def test_malformed_text_names_row_and_text(table, saved):
    addrs = ["10.0.0.1", "::1", " 10.0.0.2", "10.0.0.3"]
    with pytest.raises(pl.exceptions.ComputeError, match=r'row 2 of 4: " 10.0.0.2" is not an IP address'):
        run(pl.DataFrame({"a": addrs}), saved)
    # Table.lookup refuses the same item, with the same words.
    with pytest.raises(ValueError, match=r'addrs\[2\]: " 10.0.0.2" is not an IP address'):
        table.lookup(addrs)
    for bad in ["", "10.0.0.256", "01.2.3.4", "1.2.3.4/32", "2001:db8::1%eth0", "x" * 100]:
        with pytest.raises(pl.exceptions.ComputeError, match="row 1 of 2: .* is not an IP address"):
            run(pl.DataFrame({"a": ["1.2.3.4", bad]}), saved)
        with pytest.raises(ValueError):
            table.lookup([bad])


def test_wrong_binary_length_names_row(saved):
    df = pl.DataFrame({"a": [bytes(4), None, bytes(16), b"\x01\x02\x03"]})
    with pytest.raises(pl.exceptions.ComputeError, match=r"row 3 of 4: 3 bytes, not an address"):
        run(df, saved)


def test_other_types_are_refused(saved):
    with pytest.raises(pl.exceptions.PolarsError, match="String .* Binary .* UInt32"):
        run(pl.DataFrame({"a": [167772161]}), saved)


def test_empty_and_all_null(saved):
    for dtype in (pl.String, pl.Binary, pl.UInt32):
        out = run(pl.DataFrame({"a": []}, schema={"a": dtype}), saved)
        assert out.dtype == pl.UInt32 and out.len() == 0
        out = run(pl.DataFrame({"a": [None, None]}, schema={"a": dtype}), saved)
        assert out.to_list() == [None, None]
    assert run(pl.DataFrame({"a": [None, None]}), saved).to_list() == [None, None]


def test_chunked_column(table, saved):
    parts = [pl.DataFrame({"a": ADDRS[i::3] + [None]}) for i in range(3)]
    df = pl.concat(parts, rechunk=False)
    assert df["a"].n_chunks() == 3
    addrs = df["a"].to_list()
    assert run(df, saved).to_list() == expected(table, addrs)
    # Polars hands an elementwise plugin one chunk at a time: the row counts within the
    # chunk, and the message quotes the text.
    bad = pl.concat([parts[0], pl.DataFrame({"a": ["1.2.3.4", "nope"]})], rechunk=False)
    with pytest.raises(pl.exceptions.ComputeError, match=r'row 1 of 2: "nope" is not an IP'):
        run(bad, saved)


def flows(n=5000, seed=1):
    rng = random.Random(seed)
    return pl.DataFrame(
        {
            "a": [rng.choice(ADDRS + [None]) for _ in range(n)],
            "bytes": [rng.randrange(0, 1500) for _ in range(n)],
        }
    )


def test_lazy_filter_with_columns_group_by(table, saved):
    df = flows()
    lf = (
        df.lazy()
        .filter(pl.col("bytes") >= 100)
        .with_columns(hop=ipfib_polars.lookup("a", saved))
        .filter(pl.col("hop").is_not_null())
        .group_by("hop")
        .agg(pl.col("bytes").sum().alias("total"), pl.len().alias("n"))
        .sort("hop")
    )
    got = lf.collect()
    want = {}
    rows = df.filter(pl.col("bytes") >= 100)
    for a, b, hop in zip(rows["a"], rows["bytes"], expected(table, rows["a"].to_list())):
        if hop is not None:
            t, n = want.get(hop, (0, 0))
            want[hop] = (t + b, n + 1)
    assert got.rows() == [(hop, t, n) for hop, (t, n) in sorted(want.items())]


def test_streaming(table, saved):
    df = pl.concat([flows(seed=s) for s in range(4)], rechunk=False)
    lf = df.lazy().with_columns(hop=ipfib_polars.lookup("a", saved)).filter(pl.col("bytes") > 10)
    try:
        got = lf.collect(engine="streaming")
    except TypeError:  # a Polars without the engine= keyword
        pytest.skip("skipping: this Polars has no streaming engine to select")
    want = df.filter(pl.col("bytes") > 10)
    assert got["a"].to_list() == want["a"].to_list()
    assert got["hop"].to_list() == expected(table, want["a"].to_list())


def test_table_objects_and_changes(table, tmp_path):
    df = pl.DataFrame({"a": ADDRS})
    assert df.select(ipfib_polars.lookup("a", table)).to_series().to_list() == expected(table, ADDRS)
    # An unchanged table reuses its file; a changed one gets new answers at once.
    first = ipfib_polars.lookup("a", table)
    table["10.1.2.0/24"] = 99
    table["2001:db9::/32"] = 98
    del table["10.1.2.3/32"]
    second = ipfib_polars.lookup("a", table)
    got = df.select(second).to_series().to_list()
    assert got == expected(table, ADDRS)
    assert got[0] == 99 and got[12] == 98
    # The expression made before the change keeps the table as it was then.
    assert df.select(first).to_series().to_list()[0] == 5

    # A saved file replaced (Table.save renames a new file over it) is opened again.
    path = tmp_path / "changing.ipfib"
    table.save(path)
    expr = ipfib_polars.lookup("a", path)
    assert df.select(expr).to_series().to_list()[0] == 99
    table["10.1.2.0/24"] = 77
    table.save(path)
    assert df.select(expr).to_series().to_list()[0] == 77


def test_live_table_changes(table):
    live = ipfib.LiveTable(table)
    df = pl.DataFrame({"a": ADDRS})
    assert df.select(ipfib_polars.lookup("a", live)).to_series().to_list() == expected(table, ADDRS)
    live.insert("10.1.2.3/32", 55)
    live.flush()
    assert df.select(ipfib_polars.lookup("a", live)).to_series().to_list()[0] == 55


def test_other_engine_tables(table):
    engines = [e for e in ipfib.engines() if e not in ("planb", "dxr")]
    if not engines:
        pytest.skip("skipping: no engine other than planb that holds IPv6")
    other = table.copy()
    other.engine = engines[0]
    got = pl.DataFrame({"a": ADDRS}).select(ipfib_polars.lookup("a", other)).to_series()
    assert got.to_list() == expected(table, ADDRS)


def test_many_tables(tmp_path):
    # More tables than the plugin keeps open: the least recently used are opened again.
    df = pl.DataFrame({"a": ["10.1.2.3"]})
    paths = []
    for i in range(12):
        path = tmp_path / f"t{i}.ipfib"
        ipfib.Table.from_pairs([("10.0.0.0/8", i)]).save(path)
        paths.append(path)
    for _ in range(2):
        for i, path in enumerate(paths):
            assert df.select(ipfib_polars.lookup("a", path)).item() == i


def test_bad_table_argument(tmp_path):
    df = pl.DataFrame({"a": ["10.0.0.1"]})
    with pytest.raises(pl.exceptions.ComputeError, match="nope.ipfib"):
        df.select(ipfib_polars.lookup("a", tmp_path / "nope.ipfib"))
    junk = tmp_path / "junk.ipfib"
    junk.write_bytes(b"not a table at all")
    with pytest.raises(pl.exceptions.ComputeError, match="junk.ipfib"):
        df.select(ipfib_polars.lookup("a", junk))
    with pytest.raises(TypeError, match="saved table"):
        ipfib_polars.lookup("a", {"10.0.0.0/8": 1})


# Real tables: ../shared/data (or $IPFIB_SHARED_DATA), as the ipfib-py tests find it.
def data_file(rel):
    env = os.environ.get("IPFIB_SHARED_DATA")
    path = (Path(env) if env else REPO.parent / "shared" / "data") / rel
    if not path.is_file():
        pytest.skip(f"skipping: {path} not found (../shared/data or $IPFIB_SHARED_DATA)")
    return path


def trace(t, n, seed):
    """n addresses of t's family: half uniform, half inside routes of the table."""
    rng = random.Random(seed)
    keys = [ipaddress.ip_network(k) for k in rng.sample(t.keys(), 20000)]
    bits = keys[0].max_prefixlen
    make = ipaddress.IPv4Address if bits == 32 else ipaddress.IPv6Address
    out = [make(rng.getrandbits(bits)) for _ in range(n // 2)]
    for _ in range(n - len(out)):
        net = rng.choice(keys)
        out.append(make(int(net.network_address) + rng.randrange(net.num_addresses)))
    rng.shuffle(out)
    return out


@pytest.mark.parametrize(
    "rel", ["ipv4/ipv4-bgpdump-et-20151023.txt.gz", "ipv6/ipv6-ris-dfz10-20241220.txt.gz"]
)
def test_real_table(rel, tmp_path):
    t = ipfib.Table.load(data_file(rel))
    path = tmp_path / "real.ipfib"
    t.save(path)
    addrs = trace(t, 200_000, seed=len(rel))
    texts = [str(a) for a in addrs]
    want = expected(t, texts)
    assert sum(v is not None for v in want) > 100_000  # the matched half, at least

    df = pl.DataFrame({"a": texts, "b": [a.packed for a in addrs]})
    ipfib_polars.lookup("a", path)  # the table is opened by the first query below
    start = time.perf_counter()
    got = df.lazy().select(hop=ipfib_polars.lookup("a", path)).collect()["hop"]
    polars_s = time.perf_counter() - start
    assert got.to_list() == want

    start = time.perf_counter()
    t.lookup(texts)
    table_s = time.perf_counter() - start
    print(
        f"\n{rel}: {len(texts):,} strings, Polars query {len(texts) / polars_s / 1e6:.1f} M/s "
        f"(first, opening the table), Table.lookup(list of str) {len(texts) / table_s / 1e6:.1f} M/s"
    )
    start = time.perf_counter()
    again = df.lazy().select(hop=ipfib_polars.lookup("a", path)).collect()["hop"]
    print(f"  again (table cached): {len(texts) / (time.perf_counter() - start) / 1e6:.1f} M/s")
    assert again.equals(got)

    binary = df.select(ipfib_polars.lookup("b", path)).to_series()
    assert binary.to_list() == want
    if addrs[0].version == 4:
        ints = pl.DataFrame({"u": [int(a) for a in addrs]}, schema={"u": pl.UInt32})
        assert ints.select(ipfib_polars.lookup("u", path)).to_series().to_list() == want
