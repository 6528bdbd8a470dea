"""The Dask example end to end: a real LocalCluster of 2 worker processes, small input."""

import subprocess
import sys
from pathlib import Path

import dask.dataframe as dd
import numpy as np
import pytest

import ipfib
from conftest import shared_data

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "dask_enrich.py"


def table_file(tmp_path):
    """The MRT RIB of the shared data (origin AS) or, without it, a made-up text table."""
    rib = shared_data() / "mrt" / "rib" / "rrc00.bview.20020722.2337.gz"
    if rib.is_file():
        return rib
    text = tmp_path / "table.txt"
    rng = np.random.default_rng(2)
    lines = [f"{a}.{b}.0.0/16 {64500 + a}" for a, b in rng.integers(1, 224, size=(500, 2))]
    lines += ["2001:db8::/32 64496", "2001:db8:1::/48 64497"]
    text.write_text("\n".join(lines) + "\n")
    return text


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_dask_example_matches_single_process(tmp_path, fmt):
    table_path = table_file(tmp_path)
    addrs = tmp_path / ("addrs.csv" if fmt == "csv" else "addrs.parquet")
    out = tmp_path / "out.parquet"
    run = subprocess.run(
        [sys.executable, str(EXAMPLE), "--table", str(table_path), "--addrs", str(addrs),
         "--out", str(out), "--count", "20000", "--partitions", "4", "--workers", "2"],
        capture_output=True, text=True, timeout=240,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "on 2 workers" in run.stdout, run.stdout
    got = dd.read_parquet(out).compute()
    inp = (dd.read_csv(addrs, dtype={"addr": "string"}) if fmt == "csv" else dd.read_parquet(addrs)).compute()
    assert len(got) == len(inp) == 20000
    assert list(got["addr"]) == list(inp["addr"])
    # The single-process answer.
    t = ipfib.Table.load(table_path, value="origin-as")
    values, found = t.lookup_mask(list(inp["addr"]))
    origin = got["origin_as"]
    assert np.array_equal(origin.isna().to_numpy(), ~found)
    assert np.array_equal(origin[found].to_numpy(dtype=np.uint32), values[found])
    assert found.sum() >= 10000, "half the addresses are inside routed prefixes"


SHIPPED_ONCE = '''
import sys
sys.path.insert(0, sys.argv[1])
import dask_enrich, ipfib
from dask.distributed import Client, LocalCluster

def install_counter():
    import ipfib
    ipfib._calls = 0
    orig = ipfib._unpickle
    def counted(data):
        ipfib._calls += 1
        return orig(data)
    ipfib._unpickle = counted

def calls():
    import ipfib
    return ipfib._calls

if __name__ == "__main__":
    table = ipfib.Table.load(sys.argv[2], value="origin-as")
    dask_enrich.generate_addresses(table, sys.argv[3], 8000, 8)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as c, Client(c) as client:
        client.run(install_counter)
        dask_enrich.enrich(client, table, sys.argv[3], sys.argv[4])
        print("unpickles", sorted(client.run(calls).values()))
'''


def test_dask_example_ships_the_table_once_per_worker(tmp_path):
    """8 partitions on 2 workers: each worker unpickles the table exactly once."""
    script = tmp_path / "shipped_once.py"
    script.write_text(SHIPPED_ONCE)
    run = subprocess.run(
        [sys.executable, str(script), str(EXAMPLE.parent), str(table_file(tmp_path)),
         str(tmp_path / "a.parquet"), str(tmp_path / "o.parquet")],
        capture_output=True, text=True, timeout=240,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "unpickles [1, 1]" in run.stdout, run.stdout
