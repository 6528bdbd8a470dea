#!/usr/bin/env bash
# The forwarding pipeline's figures for BENCHMARKS.md: examples/dpdk-fwd with each LPM (ipfib,
# rte_fib/rte_fib6, rte_lpm/rte_lpm6) on the same routes and packets, both packet sources,
# rounds alternated (the LPMs take turns within each round), medians printed as a Markdown
# table with the lookup's share of the cycles per packet.
#
# Usage: scripts/dpdk-fwd-bench.sh [TABLE KIND ...]
#   TABLE: a table file of ../shared/data; KIND: matched or uniform. Default: every IPv4 table
#   of ../shared/data/ipv4 and ipv6-ris-dfz10, both kinds.
# Environment: ROUNDS (3), SECONDS_PER_RUN (3), CPU (1), PACKETS (262,144 in the pcap: the pcap
#   source holds them all in mbufs),
#   RING (262,144 packets circulating in the ring source: enough distinct destinations that the
#   lookups are not all cache hits), SOURCES ("ring pcap"), LPMS ("ipfib rte_fib rte_lpm": rte_lpm
#   takes minutes to build bart-tier1's 902 K routes, one add at a time, per run), HUGE (0; 1:
#   DPDK's memory from 2 MiB huge pages, reserved first with scripts/setup-hugepages.sh 4096).
# Needs libdpdk (scripts/install-dpdk.sh); builds the release C library and CLI first.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
data="${IPFIB_SHARED_DATA:-../shared/data}"
rounds=${ROUNDS:-3} seconds=${SECONDS_PER_RUN:-3} cpu=${CPU:-1}
packets=${PACKETS:-262144} ring=${RING:-262144}
read -r -a sources <<<"${SOURCES:-ring pcap}"
read -r -a lpms <<<"${LPMS:-ipfib rte_fib rte_lpm}"
pages=(--no-huge)
if [ "${HUGE:-0}" = 1 ]; then
    bash scripts/setup-hugepages.sh 4096 >/dev/null
    pages=(--in-memory)
fi

cases=("$@")
if [ "${#cases[@]}" -eq 0 ]; then
    for t in "$data"/ipv4/*.txt.gz "$data/ipv6/ipv6-ris-dfz10-20241220.txt.gz"; do
        cases+=("$t" matched "$t" uniform)
    done
fi

read -ra cli_features <<< "$(bash scripts/features.sh)"
cargo build --release --quiet -p ipfib-capi -p ipfib-cli "${cli_features[@]}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
IPFIB_C_BUILT=target/release bash scripts/install-c.sh "$work/prefix" >/dev/null
cp -r examples/dpdk-fwd "$work/src"
PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" make -s -C "$work/src" >/dev/null

echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'), pinned to CPU $cpu; $(date -u +%FT%TZ), $(git rev-parse --short HEAD); DPDK memory: $([ "${pages[0]}" = --in-memory ] && echo "2 MiB huge pages (--in-memory)" || echo "4 KiB pages (--no-huge)")"
echo
echo "| table | trace | source | ipfib Mpps | rte_fib Mpps | rte_lpm Mpps | ipfib / rte_fib | ipfib / rte_lpm | lookup cycles/packet ipfib, rte_fib, rte_lpm (of total) |"
echo "|---|---|---|---:|---:|---:|---:|---:|---|"
i=0
while [ "$i" -lt "${#cases[@]}" ]; do
    table=${cases[$i]} kind=${cases[$((i + 1))]}
    i=$((i + 2))
    name=$(basename "$table" .txt.gz)
    share=0
    case "$name" in ipv6-*) share=1 ;; esac
    target/release/ipfib gen pcap --fib "$table" --kind "$kind" --count "$packets" \
        --v6-share "$share" --out "$work/p.pcap" >/dev/null
    for source in "${sources[@]}"; do
        for r in $(seq "$rounds"); do
            for lpm in "${lpms[@]}"; do
                taskset -c "$cpu" "$work/src/dpdk-fwd" "${pages[@]}" -m 3072 -l "$cpu" --no-pci \
                    --file-prefix "fwd-bench-$$" --log-level=warning -- --fib "$table" \
                    --pcap "$work/p.pcap" --lpm "$lpm" --source "$source" --ring-packets "$ring" \
                    --seconds "$seconds" --quiet --json "$work/$lpm.$r.json" >/dev/null 2>"$work/err" \
                    || { cat "$work/err" >&2; exit 1; }
            done
        done
        python3 - "$work" "$rounds" "$name" "$kind" "$source" "${lpms[@]}" <<'PY'
import json, statistics, sys
work, rounds, name, kind, source = sys.argv[1], int(sys.argv[2]), *sys.argv[3:6]
lpms = sys.argv[6:]
res = {}
for lpm in lpms:
    runs = [json.load(open(f"{work}/{lpm}.{r}.json")) for r in range(1, rounds + 1)]
    mpps = [d["mpps"]["overall"] for d in runs]
    res[lpm] = (statistics.median(mpps), min(mpps), max(mpps),
                statistics.median(d["lookup_cycles_per_packet"] for d in runs),
                statistics.median(d["total_cycles_per_packet"] for d in runs))
f = lambda lpm: f"{res[lpm][0]:.2f} ({res[lpm][1]:.2f}–{res[lpm][2]:.2f})" if lpm in res else "not run"
c = lambda lpm: f"{res[lpm][3]:.0f} of {res[lpm][4]:.0f}" if lpm in res else "–"
r = lambda lpm: f"{res['ipfib'][0] / res[lpm][0]:.2f}×" if lpm in res and "ipfib" in res else "–"
print(f"| {name} | {kind} | {source} | {f('ipfib')} | {f('rte_fib')} | {f('rte_lpm')} | "
      f"**{r('rte_fib')}** | {r('rte_lpm')} | "
      f"{c('ipfib')}, {c('rte_fib')}, {c('rte_lpm')} |")
PY
    done
done
