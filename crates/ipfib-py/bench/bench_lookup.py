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

With ``--big TRACE --bench-json JSON... --first-json JSON...`` (scripts/py-bench.sh makes them:
a matched trace of the first table from ``ipfib gen trace``, then rounds that alternate one
``ipfib bench`` process and one fresh Python process timing its first call, ``--first-call``,
on the same table and trace) it also times one big call: the whole trace as an (n, 16) uint8
array (or uint32 for IPv4), the first call (median of the fresh processes), then repeated,
with ``out=``, and an idle ``LiveTable``, alternated round by round; on every core; the same
addresses as a NumPy ``U`` array, an Arrow string array and a list of str. Each is given as a
share of the median ``ipfib bench`` batch rate. Single processes on this kind of machine differ
by up to 1.5x (placement), which is why first calls and ``ipfib bench`` are both medians of
several processes, alternated. For IPv4 tables the
standard run also times the baseline a user might write: ``np.searchsorted`` over the table's
elementary intervals.
"""

import argparse
import gzip
import ipaddress
import json
import os
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
    if family == 4:
        starts, values = elementary_intervals(routes)
        arr = batch_inputs["uint32 array"]
        got = values[np.searchsorted(starts, arr, side="right") - 1]
        assert np.array_equal(got, want_arr), "searchsorted baseline disagrees"
        rates["NumPy searchsorted over intervals"] = median_rate(
            lambda: values[np.searchsorted(starts, arr, side="right") - 1], n, rounds)
    base = rates["pytricia per call"]
    print(f"\n{path.split('/')[-1]}: {len(routes)} IPv{family} routes, {n} matched addresses, "
          f"median of {rounds} rounds (ipfib load+build {t_load:.2f} s)")
    print(f"{'':38} {'M lookups/s':>12} {'x pytricia':>11}")
    for name, r in rates.items():
        print(f"{name:38} {r / 1e6:12.2f} {r / base:11.1f}")
    return rates


def elementary_intervals(routes):
    """IPv4 routes as sorted interval starts and the value of each interval (MISS where no
    route covers it): what a user with NumPy alone would build for searchsorted."""
    miss = 0xFFFFFFFF
    nets = sorted(
        (ipaddress.ip_network(p) for p, _ in routes),
        key=lambda n: (int(n.network_address), n.prefixlen),
    )
    value = {ipaddress.ip_network(p): v for p, v in routes}
    starts, values, stack = [0], [miss], []  # stack: (end, value) of enclosing routes

    def emit(at, v):
        if starts[-1] == at:
            values[-1] = v
        elif values[-1] != v:
            starts.append(at)
            values.append(v)

    for n in nets:
        lo, hi = int(n.network_address), int(n.broadcast_address) + 1
        while stack and stack[-1][0] <= lo:
            end, _ = stack.pop()
            emit(end, stack[-1][1] if stack else miss)
        stack.append((hi, value[n]))
        emit(lo, value[n])
    while stack:
        end, _ = stack.pop()
        if end < 2**32:
            emit(end, stack[-1][1] if stack else miss)
    return np.array(starts, dtype=np.uint32), np.array(values, dtype=np.uint32)


def trace_array(trace):
    """The trace as an (n, 16) uint8 array (IPv6) or a uint32 array (IPv4), and its strings;
    the array is kept beside the trace as .npy so that fresh processes load it quickly."""
    strs = [line.strip() for line in open(trace) if line.strip()]
    cache = trace + ".npy"
    try:
        arr = np.load(cache)
    except OSError:
        addrs = [ipaddress.ip_address(s) for s in strs]
        if addrs[0].version == 6:
            arr = np.frombuffer(b"".join(a.packed for a in addrs), dtype=np.uint8)
            arr = arr.reshape(-1, 16)
        else:
            arr = np.array([int(a) for a in addrs], dtype=np.uint32)
        np.save(cache, arr)
    return arr, strs


def array_kind(arr):
    return "(n,16) uint8" if arr.ndim == 2 else "uint32"


def first_call(path, trace, out_json):
    """One fresh process's first lookup call on the whole trace (the engine built by a
    one-address call first, as a program would), written to ``out_json``."""
    arr = np.load(trace + ".npy")
    t = ipfib.Table.load(path)
    t.lookup(arr[:1])
    t0 = time.perf_counter()
    t.lookup(arr)
    rate = len(arr) / (time.perf_counter() - t0)
    with open(out_json, "w") as f:
        json.dump({"first_call": rate}, f)


def bench_rate_of(path):
    with open(path) as f:
        doc = json.load(f)
    rows = doc if isinstance(doc, list) else doc.get("results", [])
    batch = [r for r in rows if r.get("engine") == "planb" and r.get("path") == "batch"
             and r.get("mode") == "throughput" and r.get("threads") == 1]
    return batch[0]["mlps"] * 1e6 if batch else None


def alternated(fns, n, rounds):
    """Rates of several calls timed in alternation, round by round (the order rotated each
    round), so that a slow spell of the machine falls on all of them alike: one list of
    per-round rates a call."""
    rates = [[] for _ in fns]
    for r in range(rounds):
        for k in range(len(fns)):
            i = (k + r) % len(fns)
            t0 = time.perf_counter()
            fns[i]()
            rates[i].append(n / (time.perf_counter() - t0))
    return rates


def paired(a, b):
    """Median of the per-round ratios a/b of two alternated calls: what they differ by when
    this machine's speed drifts between rounds (their median rates can differ by 10 % on two
    identical tables)."""
    return statistics.median(x / y for x, y in zip(a, b))


def all_cpus(fn):
    """``fn()`` with the process allowed on every CPU (the benchmark is pinned to one)."""
    pinned = os.sched_getaffinity(0)
    os.sched_setaffinity(0, range(os.cpu_count()))
    try:
        return fn()
    finally:
        os.sched_setaffinity(0, pinned)


def bench_big(path, trace, bench_jsons, first_jsons, rounds):
    import json
    import pyarrow as pa

    bench_rates = [r for r in map(bench_rate_of, bench_jsons) if r]
    bench_rate = statistics.median(bench_rates) if bench_rates else None
    firsts = []
    for p in first_jsons:
        with open(p) as f:
            firsts.append(json.load(f)["first_call"])
    arr, strs = trace_array(trace)
    n, kind = len(arr), array_kind(arr)
    t = ipfib.Table.load(path)
    want = t.lookup(arr)
    rates = {}
    if firsts:
        rates[f"first call, {kind}, 1 thread (fresh processes)"] = statistics.median(firsts)
    out = np.empty(n, np.uint32)
    lt = ipfib.LiveTable(t)
    twin = ipfib.Table.load(path)
    assert np.array_equal(lt.lookup(arr), want)
    assert np.array_equal(twin.lookup(arr), want)
    table_rates, out_rates, live_rates, twin_rates = alternated(
        [lambda: t.lookup(arr), lambda: t.lookup(arr, out=out), lambda: lt.lookup(arr),
         lambda: twin.lookup(arr)],
        n, rounds)
    table_rate, out_rate, live_rate = map(statistics.median, (table_rates, out_rates, live_rates))
    rates[f"repeated, {kind}, 1 thread"] = table_rate
    rates[f"repeated, {kind}, out=, 1 thread"] = out_rate
    cores = os.cpu_count()
    rates[f"repeated, {kind}, threads=0 ({cores} cores)"] = all_cpus(
        lambda: median_rate(lambda: t.lookup(arr, threads=0), n, rounds))
    ustrs = np.array(strs)
    astrs = pa.array(strs, pa.string())
    k = min(n, 2_000_000)
    assert np.array_equal(t.lookup(ustrs[:k]), want[:k])
    assert np.array_equal(t.lookup(astrs[:k]), want[:k])
    assert np.array_equal(t.lookup(strs[:k]), want[:k])
    rates["strings: NumPy U array"] = median_rate(lambda: t.lookup(ustrs[:k]), k, rounds)
    rates["strings: Arrow string array"] = median_rate(lambda: t.lookup(astrs[:k]), k, rounds)
    rates["strings: list of str"] = median_rate(lambda: t.lookup(strs[:k]), k, rounds)
    rates[f"LiveTable (idle), {kind}, 1 thread"] = live_rate
    print(f"\n{path.split('/')[-1]}: one call on {n} addresses of {trace.split('/')[-1]}, "
          f"median of {rounds} rounds (Table and LiveTable alternated); ipfib bench planb "
          "batch: " + (f"median {bench_rate / 1e6:.2f} M/s of {len(bench_rates)} processes ("
                       + ", ".join(f"{r / 1e6:.1f}" for r in bench_rates) + ")"
                       if bench_rate else "not found in the JSON"))
    if firsts:
        print(f"first calls in {len(firsts)} fresh processes, alternated with ipfib bench: "
              + ", ".join(f"{r / 1e6:.1f}" for r in firsts) + " M/s")
    print(f"{'':52} {'M lookups/s':>12} {'of bench':>9}")
    for name, r in rates.items():
        share = f"{100 * r / bench_rate:8.1f}%" if bench_rate else ""
        print(f"{name:52} {r / 1e6:12.2f} {share}")
    print(f"LiveTable idle / Table: {100 * paired(live_rates, table_rates):.1f} % (median of "
          f"{rounds} per-round ratios; the same ratio of a second Table built alike: "
          f"{100 * paired(twin_rates, table_rates):.1f} %; of the medians: "
          f"{100 * live_rate / table_rate:.1f} %)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tables", nargs="+")
    ap.add_argument("--addrs", type=int, default=500_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--big", metavar="TRACE", help="a trace file of the first table (one call)")
    ap.add_argument("--bench-json", nargs="*", default=[],
                    help="ipfib bench's JSON on the same table and trace (one per process)")
    ap.add_argument("--first-json", nargs="*", default=[],
                    help="first-call results of fresh processes (from --first-call)")
    ap.add_argument("--first-call", metavar="OUT_JSON",
                    help="time one fresh process's first call on --big TRACE into OUT_JSON "
                         "(TRACE.npy must exist: --make-array) and exit")
    ap.add_argument("--make-array", action="store_true",
                    help="write --big TRACE as TRACE.npy and exit")
    args = ap.parse_args(argv)
    if args.make_array:
        trace_array(args.big)
        return
    if args.first_call:
        first_call(args.tables[0], args.big, args.first_call)
        return
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, ipfib {ipfib.__version__}, "
          f"pytricia {getattr(pytricia, '__version__', '1.3.0')}, engine planb")
    for path in args.tables:
        bench_table(path, args.addrs, args.rounds)
    if args.big:
        bench_big(args.tables[0], args.big, args.bench_json, args.first_json, args.rounds)


if __name__ == "__main__":
    main()
