#!/usr/bin/env bash
# The DPDK forwarding example (examples/dpdk-fwd) built out of tree against an installed ipfib
# (pkg-config) and run for two seconds per case with --verify (the port chosen for 100,000
# packets checked against ipfib's reference engine on the final table; a mismatch fails):
# each LPM (ipfib, rte_fib/rte_fib6, rte_lpm/rte_lpm6) and each packet source (the pcap vdev
# replaying a file, packets recycled through a ring port), and ipfib while a real update stream
# replays into its live table. Packets come from `ipfib gen pcap`, half IPv4, half IPv6.
#
# Called by scripts/c-tests.sh with the library it installed and the `ipfib` binary it built:
#   scripts/dpdk-fwd-tests.sh PREFIX IPFIB TABLE NAME [UPDATES]
# Skips, saying so, where libdpdk is not installed (scripts/install-dpdk.sh needs root and
# apt). Runs without huge pages (--no-huge), pinned to CPU ${CPU:-1}. About 40 s on the 2-core
# AMD EPYC Zen 3 for the real dual-stack table with updates.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
prefix=$1 ipfib=$2 table=$3 name=$4 updates=${5:-}

if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists libdpdk; then
    echo "dpdk-fwd: SKIP ($name): libdpdk is not installed (scripts/install-dpdk.sh, as root with apt)"
    exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r examples/dpdk-fwd "$work/src"
PKG_CONFIG_PATH="$prefix/lib/pkgconfig" make -s -C "$work/src" >/dev/null
"$ipfib" gen pcap --fib "$table" --kind matched --count 100000 --v6-share 0.5 \
    --out "$work/packets.pcap" >/dev/null

eal=(--no-huge -m 1536 -l "${CPU:-1}" --no-pci --file-prefix "ipfib-fwd-test-$$"
    --log-level=warning)
# One case: LPM, source, extra arguments. Prints its summary line; a failure prints the
# program's output.
run() {
    local lpm=$1 source=$2
    shift 2
    local tag="$lpm-$source${1:+-updates}"
    if ! timeout 300 "$work/src/dpdk-fwd" "${eal[@]}" -- --fib "$table" --pcap "$work/packets.pcap" \
        --lpm "$lpm" --source "$source" --seconds 2 --verify 100000 --quiet \
        --json "$work/$tag.json" "$@" >"$work/$tag.out" 2>&1; then
        cat "$work/$tag.out"
        echo "dpdk-fwd: FAIL ($name): $tag"
        return 1
    fi
    python3 - "$work/$tag.json" "$name" "$tag" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
v = d["verify"]
assert v["mismatches"] == 0 and v["packets"] > 0, v
line = (f"dpdk-fwd: {sys.argv[2]}: {sys.argv[3]}: {d['mpps']['overall']:.2f} Mpps, "
        f"lookup {d['lookup_cycles_per_packet']:.0f} of {d['total_cycles_per_packet']:.0f} "
        f"cycles/packet, verify {v['packets']} packets, 0 mismatches")
if "replay" in d:
    r = d["replay"]
    line += f", replayed {r['updates']} changes (visible p99 {r['visible_us_p99']:.0f} us)"
print(line)
PY
}

status=0
run ipfib pcap || status=1
run ipfib ring || status=1
run rte_fib ring || status=1
run rte_fib pcap || status=1
run rte_lpm ring || status=1
run rte_lpm pcap || status=1
if [ -n "$updates" ]; then
    run ipfib ring --updates "$updates" --speed 0 || status=1
fi
exit "$status"
