#!/usr/bin/env python3
"""Turns `ipfib bench --json` files into the Markdown tables of BENCHMARKS.md.

Usage: python3 scripts/bench-table.py docs/bench/*.json
One table per file: engine, path, mode, threads, median M lookups/s with min-max, ratio to
planb on the same path, build ms, memory and bytes/prefix (all from that one run).
"""
import json
import sys


def table(path):
    rows = json.load(open(path))
    first = rows[0]
    print(f"**{path}** — {first['family']} {first['table']} ({first['prefixes']:,} prefixes), "
          f"trace {first['trace']} ({first['trace_len']:,} addresses), {first['runs']} runs, CPUs {first['cpus']}\n")
    print("| engine | path | mode | thr | size | M lookups/s (median, min–max) | vs planb | build ms | MiB | B/prefix |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    planb = {(r['path'], r['mode'], r['threads'], r['prefixes']): r['mlps'] for r in rows if r['engine'] == 'planb'}
    for r in rows:
        base = planb.get((r['path'], r['mode'], r['threads'], r['prefixes']))
        ratio = f"{r['mlps'] / base:.2f}×" if base else "–"
        print(f"| {r['engine']} | {r['path']} | {r['mode']} | {r['threads']} | {r['prefixes']:,} | "
              f"{r['mlps']:.1f} ({r['mlps_min']:.1f}–{r['mlps_max']:.1f}) | {ratio} | {r['build_ms']:.0f} | "
              f"{r['bytes'] / 2**20:.1f} | {r['bytes_per_prefix']:.1f} |")
    print()


for p in sys.argv[1:]:
    table(p)
