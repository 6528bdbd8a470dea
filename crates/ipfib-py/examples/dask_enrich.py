"""Enrich a large table of IP addresses with origin AS on a Dask cluster, with ipfib.

    python dask_enrich.py --table RIB --addrs addrs.parquet --out enriched.parquet

* ``--table`` is any file ``ipfib --fib`` reads: an MRT RIB dump (plain, gzip or bzip2; the
  value stored is chosen by ``--value``, ``origin-as`` by default), or a text table
  (``prefix value`` lines, where the value is taken as it is).
* ``--addrs`` is a Parquet dataset (a directory, as Dask writes) or a ``.csv`` file with a
  column ``addr`` of address strings, IPv4 and IPv6 mixed. If it does not exist it is generated
  (``--count`` addresses, ``--partitions`` parts): half inside routed prefixes, half anywhere,
  so some have no route.
* The output is a Parquet dataset with ``addr`` and ``origin_as`` (a nullable UInt32: missing
  where no route contains the address).

The table is loaded once on the client and **scattered to every worker once**
(``client.scatter(table, broadcast=True)``): it travels as a pickle of flat arrays (the saved
table format, a few MB for a full table) and each worker unpickles it in milliseconds with no
rebuild. Every partition then refers to that one copy, so the table is not shipped per
partition. Each partition is looked up with one ``Table.lookup_mask`` call: the strings are
parsed in Rust and the engine runs with the GIL released.

Without ``--scheduler`` the example starts a ``LocalCluster`` of ``--workers`` processes.
"""

import argparse
import os
import sys
import time

import numpy as np
import pandas as pd

import ipfib


def generate_addresses(table, path, count, partitions, seed=1):
    """Writes ``count`` address strings: half inside the table's routes, half anywhere."""
    import dask.dataframe as dd

    rng = np.random.default_rng(seed)
    prefixes = list(table)
    inside = count // 2
    picks = rng.integers(0, len(prefixes), size=inside) if prefixes else np.zeros(0, int)
    out = []
    import ipaddress

    for i in picks:
        net = ipaddress.ip_network(prefixes[i])
        offset = int(rng.integers(0, 2**63)) % net.num_addresses
        out.append(str(net.network_address + offset))
    for _ in range(count - len(out)):
        if rng.random() < 0.5:
            out.append(str(ipaddress.IPv4Address(int(rng.integers(0, 2**32)))))
        else:
            hi = int(rng.integers(0, 2**63)) << 65 | int(rng.integers(0, 2**63)) << 2
            out.append(str(ipaddress.IPv6Address(hi % 2**128)))
    order = rng.permutation(len(out))
    df = pd.DataFrame({"addr": pd.Series([out[i] for i in order], dtype="string")})
    if str(path).endswith(".csv"):
        df.to_csv(path, index=False)
    else:
        dd.from_pandas(df, npartitions=partitions).to_parquet(path, write_index=False)


def enrich_partition(df, table):
    """One partition: ``addr`` -> ``origin_as`` (nullable), in one batch lookup."""
    values, found = table.lookup_mask(df["addr"].to_numpy(dtype=object))
    out = df[["addr"]].copy()
    out["origin_as"] = pd.arrays.IntegerArray(values, ~found)
    return out


def read_addresses(path):
    import dask.dataframe as dd

    if str(path).endswith(".csv"):
        return dd.read_csv(path, dtype={"addr": "string"}, blocksize="16MB")
    return dd.read_parquet(path)


def enrich(client, table, addrs_path, out_path):
    """Scatters the table once, maps every partition, writes Parquet; returns the row count."""
    table_future = client.scatter(table, broadcast=True)
    ddf = read_addresses(addrs_path)
    meta = ddf._meta[["addr"]].assign(origin_as=pd.Series([], dtype="UInt32"))
    out = ddf.map_partitions(enrich_partition, table_future, meta=meta)
    out.to_parquet(out_path, write_index=False)
    return len(ddf)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--table", required=True, help="MRT RIB dump or text table")
    ap.add_argument("--value", default="origin-as", help="for MRT: origin-as, next-hop or peer")
    ap.add_argument("--addrs", required=True, help="Parquet directory or .csv with column addr")
    ap.add_argument("--out", required=True, help="output Parquet directory")
    ap.add_argument("--count", type=int, default=2_000_000, help="addresses to generate if --addrs is absent")
    ap.add_argument("--partitions", type=int, default=16)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--scheduler", help="address of a running scheduler (else a LocalCluster)")
    args = ap.parse_args(argv)

    from dask.distributed import Client, LocalCluster

    t0 = time.perf_counter()
    table = ipfib.Table.load(args.table, value=args.value)
    print(f"table: {len(table)} routes from {args.table} ({time.perf_counter() - t0:.2f} s)")
    if not os.path.exists(args.addrs):
        t0 = time.perf_counter()
        generate_addresses(table, args.addrs, args.count, args.partitions)
        print(f"generated {args.count} addresses in {args.addrs} ({time.perf_counter() - t0:.2f} s)")

    if args.scheduler:
        client = Client(args.scheduler)
        cluster = None
    else:
        cluster = LocalCluster(
            n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(cluster)
    try:
        t0 = time.perf_counter()
        rows = enrich(client, table, args.addrs, args.out)
        dt = time.perf_counter() - t0
        print(f"enriched {rows} addresses into {args.out} in {dt:.2f} s "
              f"on {len(client.scheduler_info()['workers'])} workers")
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
