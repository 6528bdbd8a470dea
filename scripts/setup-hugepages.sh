#!/usr/bin/env bash
# Reserves 2 MiB huge pages for the DPDK comparators of `ipfib bench` (built with
# `--features dpdk`), so that DPDK runs as it is deployed: its EAL maps its memory from huge
# pages when enough are free, and falls back to 4 KiB pages (reported as `4K` in the bench's
# native column) when not. DPDK's large tables pay TLB misses on small pages: rte_fib6 on the
# dfz10 table read 61 M lookups/s on 4 KiB pages and 73 on 2 MiB pages on this project's machine.
#
# Usage: scripts/setup-hugepages.sh [MiB]   (default 4608: the EAL's default 4096 MiB + room)
# Idempotent (never lowers an existing reservation); needs root (or sudo). Undo with
# `echo 0 | sudo tee /proc/sys/vm/nr_hugepages`.
set -euo pipefail

mib=${1:-4608}
page_kib=$(awk '/^Hugepagesize:/ {print $2}' /proc/meminfo)
if [ -z "$page_kib" ]; then
    echo "this kernel has no huge pages (no Hugepagesize in /proc/meminfo)" >&2
    exit 1
fi
want=$(( (mib * 1024 + page_kib - 1) / page_kib ))
have=$(cat /proc/sys/vm/nr_hugepages)
if [ "$have" -ge "$want" ]; then
    echo "$have huge pages of $page_kib KiB already reserved (want $want)"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
echo "$want" | $SUDO tee /proc/sys/vm/nr_hugepages >/dev/null
got=$(cat /proc/sys/vm/nr_hugepages)
echo "reserved $got huge pages of $page_kib KiB ($(( got * page_kib / 1024 )) MiB; asked for $want)"
if [ "$got" -lt "$want" ]; then
    echo "the kernel could not find $want free huge pages (memory fragmented or too small):" \
        "DPDK will run on 4 KiB pages unless IPFIB_DPDK_MEM_MB fits in what was reserved" >&2
    exit 1
fi
