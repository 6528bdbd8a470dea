#!/usr/bin/env bash
# Issue 35's targets for `ipfib follow`, through GoBGP (opt-in; not part of the test command):
#   1. a full IPv4 table (the 577,703 prefixes of ipv4-bgpdump-et-20151023, written as a
#      TABLE_DUMP_V2 RIB by scripts/fib-to-mrt-rib.py with synthetic attributes) injected into
#      speaker A: the time until B's Adj-RIB-In from A is complete (GoBGP's own time) against
#      the time until follow's table is (both from the start of the injection), and routes/s;
#   2. steady updates: N adds and N withdrawals of /24s through GoBGP's API, one `gobgp global
#      rib add|del` at a time (as fast as the CLI goes), and follow's visibility from receipt
#      (its per-interval p50/p99 lines while they run);
#   3. memory: follow's RSS with the full table, against `ipfib stats` (a static table alone).
# Everything runs pinned to CPU ${CPU:-0} (both gobgpd, follow and the polls share it).
#
# Usage: scripts/bmp-bench.sh [IPFIB]   (default: the test profile's binary, opt-level 2;
# STEADY=N adds and N withdrawals, 500 by default)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
cpu=${CPU:-0}
steady=${STEADY:-500}
fib="$root/../shared/data/ipv4/ipv4-bgpdump-et-20151023.txt.gz"
ipfib=${1:-${CARGO_TARGET_DIR:-$root/target}/debug/ipfib}
[ -x "$ipfib" ] || cargo build --quiet --profile test -p ipfib-cli --bin ipfib
command -v gobgpd >/dev/null || { echo "bmp-bench: gobgpd is not installed"; exit 1; }
[ -f "$fib" ] || { echo "bmp-bench: $fib is absent"; exit 1; }

work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait; rm -rf "$work"' EXIT
pin() { taskset -c "$cpu" "$@"; }
# shellcheck source=scripts/bmp-gobgp-lib.sh
source "$root/scripts/bmp-gobgp-lib.sh"

pin python3 scripts/fib-to-mrt-rib.py "$fib" "$work/full.mrt"
total=577703

pin "$ipfib" follow --bmp 127.0.0.1:0 --socket "$work/fib.sock" --interval 1s \
    --json "$work/follow.json" 2>"$work/follow.log" &
pids+=($!)
follow_pid=$!
until grep -q "listening for BMP on" "$work/follow.log"; do sleep 0.05; done
bmp=$(grep -o 'listening for BMP on .*' "$work/follow.log" | awk '{print $NF}')
gobgp_configs "${bmp##*:}"
start_b() {
    pin gobgpd -f "$work/b.toml" -p --api-hosts "127.0.0.1:$api_b" --pprof-disable >"$work/b.log" 2>&1 &
    pids+=($!)
}
start_a() {
    pin gobgpd -f "$work/a.toml" -p --api-hosts "127.0.0.1:$api_a" --pprof-disable >"$work/a.log" 2>&1 &
    pids+=($!)
}
start_b
start_a
established 30 || { echo "bmp-bench: no session"; exit 1; }

received() { # B's routes received from A (only IPv4 is injected)
    gobgp -p "$api_b" neighbor 127.0.0.1 2>/dev/null | awk '/Received:/ {print $2; exit}'
}
routes() { # follow's routes, from its last progress line
    grep -o 'routes [0-9]*' "$work/follow.log" | tail -1 | awk '{print $2}'
}
t0=$(date +%s.%N)
pin gobgp -p "$api_a" mrt inject global --only-best "$work/full.mrt" &
inject=$!
t_gobgp= t_follow=
while [ -z "$t_follow" ] || [ -z "$t_gobgp" ]; do
    now=$(date +%s.%N)
    if [ -z "$t_gobgp" ] && [ "$(received)" = "$total" ]; then t_gobgp=$now; fi
    if [ -z "$t_follow" ] && [ "$(routes)" = "$total" ]; then t_follow=$now; fi
    if python3 -c "import sys; sys.exit(0 if $now - $t0 > 600 else 1)"; then
        echo "bmp-bench: the dump did not complete in 600 s (B $(received), follow $(routes))"
        exit 1
    fi
    sleep 0.1
done
wait "$inject"
python3 - "$t0" "$t_gobgp" "$t_follow" "$total" <<'PY'
import sys
t0, g, f, n = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
print(f"dump: {n} routes; GoBGP (B's adj-in complete) {g - t0:.1f} s, "
      f"ipfib follow complete {f - t0:.1f} s: ratio {(f - t0) / (g - t0):.2f}, "
      f"{n / (f - t0):,.0f} routes/s")
PY
rss=$(grep VmRSS /proc/"$follow_pid"/status | awk '{print $2 * 1024}')
stats_rss=$( { /usr/bin/time -f %M pin "$ipfib" stats --fib "$fib" >/dev/null; } 2>&1 | tail -1)
python3 -c "
r, s, n = $rss, $stats_rss * 1024, $total
print(f'memory: follow RSS {r / 2**20:.0f} MiB with {n} routes of one peer = {r / n:.0f} B/route; '
      f'ipfib stats (static planb table alone) peak RSS {s / 2**20:.0f} MiB; difference {(r - s) / n:.0f} B/route')"

# Steady updates: adds, then withdrawals, of /24s in 203.0.113.0/24 .. (class 100.64/10).
mark=$(wc -l <"$work/follow.log")
t1=$(date +%s.%N)
for i in $(seq 0 $((steady - 1))); do
    pin gobgp -p "$api_a" global rib add -a ipv4 "100.$((64 + i / 256)).$((i % 256)).0/24" nexthop 192.0.2.9
done
for i in $(seq 0 $((steady - 1))); do
    pin gobgp -p "$api_a" global rib del -a ipv4 "100.$((64 + i / 256)).$((i % 256)).0/24"
done
t2=$(date +%s.%N)
sleep 1.5 # one more progress interval, so the last updates' line is printed
tail -n +"$((mark + 1))" "$work/follow.log" | python3 -c "
import re, sys
rows = [tuple(map(float, m.groups())) for l in sys.stdin
        if (m := re.search(r'\((\d+) updates/s\).*p50 (\d+) p99 (\d+)', l)) and int(m.group(1)) > 0]
print(f'steady: {2 * $steady} updates in {$t2 - $t1:.1f} s through the gobgp CLI ({2 * $steady / ($t2 - $t1):.0f}/s); '
      f'follow per-second visibility from receipt: p50 {min(r[1] for r in rows):.0f}-{max(r[1] for r in rows):.0f} us, '
      f'p99 {min(r[2] for r in rows):.0f}-{max(r[2] for r in rows):.0f} us over {len(rows)} intervals')"
kill "$follow_pid"
wait "$follow_pid" || true
python3 -c "
import json; d = json.load(open('$work/follow.json'))
print(f\"follow's report: {d['updates']} updates, visible p50 {d['visible_us_p50']:.0f} us p99 {d['visible_us_p99']:.0f} us (whole run), peak RSS {d['peak_rss_bytes'] >> 20} MiB\")"
echo "bmp-bench: CPU $(lscpu | sed -n 's/^Model name: *//p'), pinned to CPU $cpu, $(date -u +%F)"
