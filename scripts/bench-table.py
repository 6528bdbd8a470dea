#!/usr/bin/env python3
"""Turns `ipfib bench --json` files into the Markdown tables of BENCHMARKS.md.

Usage: python3 scripts/bench-table.py docs/bench/*.json
One table per file: engine, path, mode, threads, median M lookups/s with min-max, ratio to
planb on the same path, build ms, memory and bytes/prefix (all from that one run). The median
is the median of the rounds' medians, min-max the spread over rounds; `native` is DPDK's
selected lookup function and next-hop size.
"""
import json
import sys


def native(row):
    n = row.get('native')
    if not n:
        return "–"
    return f"{n.get('selected', '?')} nh{n.get('next_hop_bytes', '?')}B"


def table(path):
    rows = json.load(open(path))
    first = rows[0]
    print(f"**{path}** — {first['family']} {first['table']} ({first['prefixes']:,} prefixes), "
          f"trace {first['trace']} ({first['trace_len']:,} addresses), {first.get('rounds', 1)} rounds of {first['runs']} runs, CPUs {first['cpus']}\n")
    print("| engine | path | mode | thr | size | M lookups/s (median, min–max over rounds) | vs planb | build ms | MiB | B/prefix | native |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    planb = {(r['path'], r['mode'], r['threads'], r['prefixes']): r['mlps'] for r in rows if r['engine'] == 'planb'}
    for r in rows:
        base = planb.get((r['path'], r['mode'], r['threads'], r['prefixes']))
        ratio = f"{r['mlps'] / base:.2f}×" if base else "–"
        print(f"| {r['engine']} | {r['path']} | {r['mode']} | {r['threads']} | {r['prefixes']:,} | "
              f"{r['mlps']:.1f} ({r['mlps_min']:.1f}–{r['mlps_max']:.1f}) | {ratio} | {r['build_ms']:.0f} | "
              f"{r['bytes'] / 2**20:.1f} | {r['bytes_per_prefix']:.1f} | {native(r)} |")
    print()


for p in sys.argv[1:]:
    table(p)
