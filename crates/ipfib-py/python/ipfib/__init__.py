"""ipfib: exact, fast longest-prefix match (LPM) for IPv4 and IPv6.

``ipfib.Table`` is a routing table mapping prefixes of both families to int values (next hops,
AS numbers: 0 to 4294967295), familiar to pytricia users::

    import ipfib
    t = ipfib.Table()
    t["10.0.0.0/8"] = 7
    t["2001:db8::/32"] = 9
    t["10.1.2.3"]                    # 7: the longest route containing the address
    t.get_key("10.1.2.3")            # "10.0.0.0/8"
    t.lookup(["10.1.2.3", "2001:db8::1", "192.0.2.1"])   # array([7, 9, 4294967295], uint32)

Batch lookups (``Table.lookup``, ``Table.lookup_mask``) take NumPy arrays or sequences of
strings and run the Rust engine with the GIL released. Tables pickle as flat arrays (the saved
table format), so they can be shipped to worker processes quickly.

``ipfib.LiveTable`` is a table that changes while threads look up in it: ``insert``,
``remove``, ``apply`` (a batch, all or nothing) and ``flush`` from any thread; every lookup,
single or batch, answers from one whole version, old or new, never a mix::

    lt = ipfib.LiveTable(t)                  # starts with t's routes
    lt.apply([("10.0.0.0/8", 8), ("192.0.2.0/24", None)])   # None: remove
    lt.flush()                               # every change so far is visible
    lt.lookup(addrs)                         # from other threads too, GIL released

Keys: ``str`` ("10.0.0.0/8", "10.1.2.3"), ``ipaddress`` addresses and networks, packed
``bytes`` (4 bytes IPv4, 16 bytes IPv6), ``(address, prefixlen)`` tuples, and ``int`` once
the table's ``int_family`` is set to 4 or 6 (an int does not say its family). A prefix with
host bits set ("10.0.0.1/8") is a ValueError, never silently masked.
"""

from ._ipfib import LiveTable, Table, engines, __version__

__all__ = ["LiveTable", "Table", "engines", "__version__"]


def _unpickle(data: bytes) -> Table:
    """Rebuilds a pickled ``Table`` (the callable ``Table.__reduce__`` names)."""
    return Table._from_pickle(data)
