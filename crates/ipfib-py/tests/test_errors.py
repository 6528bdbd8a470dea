"""Errors are Python exceptions with messages that name the bad input."""

import gzip
import ipaddress

import pytest

import ipfib


def test_bad_prefixes_and_addresses():
    t = ipfib.Table()
    with pytest.raises(ValueError, match=r"host bits set in 10.0.0.1/8 \(the network is 10.0.0.0/8\)"):
        t["10.0.0.1/8"] = 1
    with pytest.raises(ValueError, match="prefix length 33 is longer than 32 bits"):
        t["10.0.0.0/33"] = 1
    with pytest.raises(ValueError, match="prefix length 129"):
        t["::/129"] = 1
    with pytest.raises(ValueError, match='"10.0.0.256" is not an IP address'):
        t.get("10.0.0.256")
    with pytest.raises(ValueError, match='"bogus"'):
        "bogus" in t
    with pytest.raises(ValueError, match="host bits"):
        t.has_key("10.0.0.1/8")
    with pytest.raises(ValueError, match="host bits"):
        t.parent(("10.0.0.1", 8))
    with pytest.raises(ValueError):
        t[("10.0.0.0", 40)] = 1
    with pytest.raises(ValueError, match="packed address of 5 bytes"):
        t[b"12345"] = 1
    assert len(t) == 0, "nothing was inserted by a failed call"


def test_bad_values():
    t = ipfib.Table()
    for bad in (-1, 2**32, 1.5, "7", True, None):
        with pytest.raises(ValueError, match="value is an int 0-4294967295"):
            t["10.0.0.0/8"] = bad
    t["10.0.0.0/8"] = 2**32 - 1
    assert t["10.0.0.1"] == 2**32 - 1


def test_int_keys_need_a_family():
    t = ipfib.Table()
    with pytest.raises(TypeError, match="int_family"):
        t[167772161]
    with pytest.raises(ValueError):
        ipfib.Table(int_family=5)
    t.int_family = 4
    with pytest.raises(ValueError, match="too large for an IPv4"):
        t[2**32]
    with pytest.raises(ValueError, match="negative"):
        t[-1]
    with pytest.raises(TypeError, match="interface"):
        t[ipaddress.ip_interface("10.0.0.1/8")]
    with pytest.raises(TypeError, match="float"):
        t[1.5]


def test_missing_keys():
    t = ipfib.Table.from_pairs([("10.0.0.0/8", 1)])
    with pytest.raises(KeyError):
        t["11.0.0.0"]
    with pytest.raises(KeyError, match="10.0.0.0/16"):
        del t["10.0.0.0/16"]
    with pytest.raises(KeyError):
        t.delete("192.0.2.0/24")
    assert t.parent("10.0.0.0/8") is None
    assert t.children("11.0.0.0/8") == []


def test_engines():
    assert ipfib.engines()[0] == "planb"
    v4, v6 = ipfib.engines(4), ipfib.engines(6)
    assert set(v4) | set(v6) == set(ipfib.engines())
    assert "dxr" in v4 and "dxr" not in v6, "DXR is IPv4 only"
    with pytest.raises(ValueError, match="4 or 6"):
        ipfib.engines(5)
    # An engine refuses a family it cannot hold, naming it, and the table stays as it was.
    t = ipfib.Table.from_pairs([("10.0.0.0/8", 1), ("2001:db8::/32", 3)], engine="planb")
    with pytest.raises(ValueError, match="dxr does not support IPv6"):
        t.engine = "dxr"
    assert t.engine == "planb" and list(t.lookup(["10.1.2.3", "2001:db8::1"])) == [1, 3]
    d = ipfib.Table(engine="dxr")
    d["10.0.0.0/8"] = 1
    with pytest.raises(ValueError, match="dxr does not support IPv6"):
        d["2001:db8::/32"] = 3
    assert len(d) == 1 and list(d.lookup(["10.1.2.3"])) == [1]
    with pytest.raises(ValueError, match="does not support IPv6"):
        ipfib.Table.from_pairs([("2001:db8::/32", 3)], engine="d16r")
    with pytest.raises(ValueError, match="unknown engine"):
        ipfib.Table(engine="nope")
    t = ipfib.Table()
    with pytest.raises(ValueError, match="known: planb"):
        t.engine = "nope"
    assert t.engine == "planb"


def test_from_pairs_names_the_bad_pair():
    with pytest.raises(ValueError, match=r"pairs\[1\]: host bits"):
        ipfib.Table.from_pairs([("10.0.0.0/8", 1), ("10.0.0.1/8", 2)])
    with pytest.raises(TypeError, match=r"pairs\[0\] is not a \(key, value\) pair"):
        ipfib.Table.from_pairs(["10.0.0.0/8"])


def test_load_errors_name_file_and_line(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        ipfib.Table.load(tmp_path / "absent.txt")
    assert e.value.filename.endswith("absent.txt")
    with pytest.raises(IsADirectoryError):
        ipfib.Table.load(tmp_path)
    bad = tmp_path / "bad.txt"
    bad.write_text("10.0.0.0/8 1\n# fine\n10.0.0.1/8 2\n")
    with pytest.raises(ValueError, match=r"bad.txt:3: host bits set in 10.0.0.1/8"):
        ipfib.Table.load(bad)
    gz = tmp_path / "bad.gz"
    gz.write_bytes(gzip.compress(b"10.0.0.0/8 1\n10.0.0.0/8 x\n"))
    with pytest.raises(ValueError, match=r"bad.gz:2:"):
        ipfib.Table.load(gz)
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n")
    with pytest.raises(ValueError, match="no routes"):
        ipfib.Table.load(empty)
    assert len(ipfib.Table.load(empty, allow_empty=True)) == 0
    garbage = tmp_path / "garbage"
    garbage.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(ValueError, match="garbage"):
        ipfib.Table.load(garbage)
    with pytest.raises(ValueError, match="value kind"):
        ipfib.Table.load(bad, value="nonsense")
    with pytest.raises(ValueError, match="peer"):
        ipfib.Table.load(bad, peer="nonsense")
    with pytest.raises(ValueError, match="unknown engine"):
        ipfib.Table.load(bad, engine="nope")


def test_hostile_keys_never_crash():
    t = ipfib.Table.from_pairs([("0.0.0.0/0", 1), ("::/0", 2)])
    for k in ["", "/", "1.2.3.4/", "::/", "1.2.3.4/-1", "\x00", "é", "1.2.3.4/99999999999",
              "1" * 10000, ":::", "1.2.3.4\n", " 1.2.3.4", (), (1, 2, 3), ("1.2.3.4", "8"),
              ("1.2.3.4", 2**70), object(), [], b"", "\ud800"]:
        with pytest.raises((ValueError, TypeError)):
            t.get(k)
