"""Shared helpers: where the real tables are, and a pure-Python reference LPM."""

import ipaddress
import os
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.database import DirectoryBasedExampleDatabase

if os.environ.get("IPFIB_HYPOTHESIS_DIR"):
    # scripts/py-tests.sh keeps the example database under target/, out of the source tree.
    settings.register_profile(
        "ipfib", database=DirectoryBasedExampleDatabase(os.environ["IPFIB_HYPOTHESIS_DIR"])
    )
    settings.load_profile("ipfib")

REPO = Path(__file__).resolve().parents[3]


def shared_data() -> Path:
    """../shared/data next to the checkout, or $IPFIB_SHARED_DATA (as the Rust tests)."""
    env = os.environ.get("IPFIB_SHARED_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


def data_file(rel: str) -> Path:
    """A file of the shared data set; the test is skipped, saying so, when it is absent."""
    path = shared_data() / rel
    if not path.is_file():
        pytest.skip(f"skipping: {path} not found (../shared/data or $IPFIB_SHARED_DATA)")
    return path


class Reference:
    """The obviously correct model: a dict of routes, longest match by scanning lengths."""

    def __init__(self):
        self.routes = {}  # ip_network -> value

    def insert(self, net, value):
        self.routes[net] = value

    def delete(self, net):
        del self.routes[net]

    def longest(self, addr):
        """(network, value) of the longest route containing addr, or None."""
        best = None
        for net, value in self.routes.items():
            if net.version == addr.version and addr in net:
                if best is None or net.prefixlen > best[0].prefixlen:
                    best = (net, value)
        return best

    def order(self):
        """The iteration order ipfib promises: IPv4 first, then by (address, length)."""
        return sorted(self.routes, key=lambda n: (n.version, int(n.network_address), n.prefixlen))

    def parent(self, net):
        cands = [n for n in self.routes if n.version == net.version and n.prefixlen < net.prefixlen
                 and net.subnet_of(n)]
        return max(cands, key=lambda n: n.prefixlen) if cands else None

    def children(self, net):
        return [n for n in self.order() if n.version == net.version and n != net and n.subnet_of(net)]


def ip(s):
    return ipaddress.ip_address(s)
