"""Lookups per second: ipfib against pytricia and py-radix on real tables, same addresses.

    python bench_lookup.py TABLE.txt.gz [TABLE ...] [--addrs N] [--rounds R]

For each table (the text format: ``prefix value`` lines, gzip allowed) every library gets
the same routes and the same addresses: N "matched" addresses (a random address inside a
random route, so nearly all hit, as in ``ipfib bench``'s matched trace). Measured, each as
the median of R rounds:

* per call: a Python loop calling ``get(addr_str)`` (ipfib ``Table.get``, pytricia ``get``,
  py-radix ``search_best``, whose node holds the value);
* ipfib batch: one ``Table.lookup`` call on a NumPy array (uint32 for IPv4; (n, 2) uint64
  and (n, 16) uint8 for IPv6), and on the list of address strings.

Answers are checked to agree between the three libraries before timing. Run it pinned to one
core (scripts/py-bench.sh uses taskset); the machine should be otherwise idle.
"""

import argparse
import gzip
import ipaddress
import statistics
import sys
import time

import numpy as np
import pytricia
import radix

import ipfib


def read_routes(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    routes = []
    with opener(path, "rt") as f:
        for line in f:
            fields = line.split("#", 1)[0].split()
            if fields:
                routes.append((fields[0], int(fields[1])))
    return routes


def matched_addresses(routes, n, seed=42):
    rng = np.random.default_rng(seed)
    out = []
    for i in rng.integers(0, len(routes), size=n):
        net = ipaddress.ip_network(routes[i][0])
        out.append(net.network_address + int(rng.integers(0, 2**62)) % net.num_addresses)
    return out


def median_rate(fn, n, rounds):
    rates = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        rates.append(n / (time.perf_counter() - t0))
    return statistics.median(rates)


def bench_table(path, n, rounds):
    routes = read_routes(path)
    family = ipaddress.ip_network(routes[0][0]).version
    bits = 32 if family == 4 else 128
    t0 = time.perf_counter()
    t = ipfib.Table.load(path)
    t_load = time.perf_counter() - t0
    pyt = pytricia.PyTricia(bits)
    rdx = radix.Radix()
    for prefix, value in routes:
        pyt[prefix] = value
        rdx.add(prefix).data["v"] = value
    addrs = matched_addresses(routes, n)
    strs = [str(a) for a in addrs]

    # Agreement first: every library answers every address the same.
    want = [pyt.get(s) for s in strs]
    assert [t.get(s) for s in strs] == want, "ipfib per call disagrees with pytricia"
    rnodes = [rdx.search_best(s) for s in strs]
    assert [nd.data["v"] if nd else None for nd in rnodes] == want, "py-radix disagrees"
    miss = 0xFFFFFFFF
    want_arr = np.array([miss if w is None else w for w in want], dtype=np.uint32)

    batch_inputs = {}
    if family == 4:
        batch_inputs["uint32 array"] = np.array([int(a) for a in addrs], dtype=np.uint32)
    else:
        ints = [int(a) for a in addrs]
        batch_inputs["(n,2) uint64 array"] = np.array(
            [[v >> 64, v & (2**64 - 1)] for v in ints], dtype=np.uint64)
        batch_inputs["(n,16) uint8 array"] = np.frombuffer(
            b"".join(a.packed for a in addrs), dtype=np.uint8).reshape(-1, 16)
    batch_inputs["list of str"] = strs
    for name, arr in batch_inputs.items():
        assert np.array_equal(t.lookup(arr, miss=miss), want_arr), f"ipfib batch {name} disagrees"

    def loop(get):
        def run():
            for s in strs:
                get(s)
        return run

    rdx_best = rdx.search_best
    rates = {
        "pytricia per call": median_rate(loop(pyt.get), n, rounds),
        "py-radix per call": median_rate(loop(rdx_best), n, rounds),
        "ipfib per call": median_rate(loop(t.get), n, rounds),
    }
    for name, arr in batch_inputs.items():
        reps = max(1, 2_000_000 // n)
        lookup = t.lookup

        def run(arr=arr):
            for _ in range(reps):
                lookup(arr)

        rates[f"ipfib batch, {name}"] = median_rate(run, n * reps, rounds)
    base = rates["pytricia per call"]
    print(f"\n{path.split('/')[-1]}: {len(routes)} IPv{family} routes, {n} matched addresses, "
          f"median of {rounds} rounds (ipfib load+build {t_load:.2f} s)")
    print(f"{'':38} {'M lookups/s':>12} {'x pytricia':>11}")
    for name, r in rates.items():
        print(f"{name:38} {r / 1e6:12.2f} {r / base:11.1f}")
    return rates


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tables", nargs="+")
    ap.add_argument("--addrs", type=int, default=500_000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, ipfib {ipfib.__version__}, "
          f"pytricia {getattr(pytricia, '__version__', '1.3.0')}, engine planb")
    for path in args.tables:
        bench_table(path, args.addrs, args.rounds)


if __name__ == "__main__":
    main()
