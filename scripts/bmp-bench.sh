#!/usr/bin/env bash
# Issue 35's targets for `ipfib follow`, through GoBGP (opt-in; not part of the test command):
#   1. a full table injected into speaker A: the time until B's Adj-RIB-In from A is complete
#      (GoBGP's own time) against the time until follow's table is (both from the start of the
#      injection), and routes/s. IPv4 (the default): the 577,703 prefixes of
#      ipv4-bgpdump-et-20151023; FAMILY=6: the 228,726 of ipv6-ris-dfz10-20241220; each written
#      as a TABLE_DUMP_V2 RIB by scripts/fib-to-mrt-rib.py with synthetic attributes;
#   2. steady updates: N adds and N withdrawals through GoBGP's API (IPv4 /24s in 100.64.0.0/10,
#      or IPv6 /48s in 2001:db8::/32, a /16 chunk that holds fallback cells in the DFZ table),
#      one `gobgp global rib add|del` at a time (as fast as the CLI goes), and follow's
#      visibility from receipt (its per-interval p50/p99 lines while they run);
#   3. lookups during the feed: READERS threads of follow (`--readers`) look up a matched trace
#      of the table all along; their rate in the intervals with steady updates against the
#      quiet intervals just before them (same table, same process), and, since this kind of
#      machine drifts by tens of percent within a minute, cycle by cycle: the updates go in
#      CYCLES bursts (default 5), each followed by QUIET_CYCLE seconds without (default 3), and
#      each burst's median rate is taken against the quiet seconds after it (their first
#      second skipped: it may hold the burst's end);
#   4. memory: follow's RSS with the full table, against `ipfib stats` (a static table alone).
# Both gobgpd, the injection and the polls run pinned to CPU ${CPU:-0}; follow (station,
# rebuilder, readers) to CPU ${FOLLOW_CPU:-1} (the same CPU when the machine has one), or with
# READER_CPUS=LIST its readers to those CPUs (`--reader-cpus`, a data plane's lookup cores) and
# the rest of follow to FOLLOW_CPU.
#
# Usage: scripts/bmp-bench.sh [IPFIB]   (default: the test profile's binary, opt-level 2;
# FAMILY=6 for the IPv6 table and updates; STEADY=N adds and N withdrawals, 500 by default;
# READERS=N lookup threads, default 1;
# QUIET=S seconds of quiet intervals before the steady part, default 6)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
cpu=${CPU:-0}
follow_cpu=${FOLLOW_CPU:-$(($(nproc) > 1 ? 1 : 0))}
steady=${STEADY:-500}
readers=${READERS:-1}
reader_cpus=${READER_CPUS:-}
quiet=${QUIET:-6}
cycles=${CYCLES:-5}
quiet_cycle=${QUIET_CYCLE:-3}
# The family decides the table, and the steady updates' prefix number i and next hop.
family=${FAMILY:-4}
case $family in
4)
    fib="$root/../shared/data/ipv4/ipv4-bgpdump-et-20151023.txt.gz"
    prefix() { echo "100.$((64 + $1 / 256)).$(($1 % 256)).0/24"; }
    hop=192.0.2.9
    ;;
6)
    fib="$root/../shared/data/ipv6/ipv6-ris-dfz10-20241220.txt.gz"
    prefix() { printf '2001:db8:%x::/48\n' "$1"; }
    hop=2001:db8::9
    ;;
*) echo "bmp-bench: FAMILY is 4 or 6, not $family"; exit 1 ;;
esac
ipfib=${1:-${CARGO_TARGET_DIR:-$root/target}/debug/ipfib}
[ -x "$ipfib" ] || cargo build --quiet --profile test -p ipfib-cli --bin ipfib
command -v gobgpd >/dev/null || { echo "bmp-bench: gobgpd is not installed"; exit 1; }
[ -f "$fib" ] || { echo "bmp-bench: $fib is absent"; exit 1; }

work=$(mktemp -d)
pids=()
# gobgpd holding a full table can take many seconds to act on SIGTERM: SIGKILL after 3 s.
stop_all() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    sleep 3
    for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap stop_all EXIT
# Background processes are started with taskset directly (it execs), so $! is their PID.
pin() { taskset -c "$cpu" "$@"; }
# This shell too, so its forks (a few hundred per second in the steady part) stay off
# follow's CPU; follow's own taskset sets its mask anew.
taskset -pc "$cpu" $$ >/dev/null
# shellcheck source=scripts/bmp-gobgp-lib.sh
source "$root/scripts/bmp-gobgp-lib.sh"

# RIB_MRT=FILE (uncompressed TABLE_DUMP_V2 of FAMILY's routes) injects that instead of the
# full table (a quicker run of the steady-update part).
if [ -n "${RIB_MRT:-}" ]; then
    cp "$RIB_MRT" "$work/full.mrt"
    in_file="the file"
else
    in_file=$(pin python3 scripts/fib-to-mrt-rib.py "$fib" "$work/full.mrt" | awk '{print $1}')
fi

reader_args=()
if [ "$readers" -gt 0 ]; then
    pin "$ipfib" gen trace --fib "${RIB_MRT:-$fib}" --kind matched --count 1000000 --out "$work/trace.txt"
    reader_args=(--readers "$readers" --reader-trace "$work/trace.txt")
fi
follow_cpus=$follow_cpu
if [ -n "$reader_cpus" ] && [ "$readers" -gt 0 ]; then
    reader_args+=(--reader-cpus "$reader_cpus")
    follow_cpus="$follow_cpu,$reader_cpus"
fi
taskset -c "$follow_cpus" "$ipfib" follow --bmp 127.0.0.1:0 --socket "$work/fib.sock" --interval 1s \
    "${reader_args[@]}" --json "$work/follow.json" 2>"$work/follow.log" &
pids+=($!)
follow_pid=$!
until grep -q "listening for BMP on" "$work/follow.log"; do sleep 0.05; done
bmp=$(grep -o 'listening for BMP on .*' "$work/follow.log" | awk '{print $NF}')
gobgp_configs "${bmp##*:}"
start_b() {
    taskset -c "$cpu" gobgpd -f "$work/b.toml" -p --api-hosts "127.0.0.1:$api_b" --pprof-disable >"$work/b.log" 2>&1 &
    pids+=($!)
}
start_a() {
    taskset -c "$cpu" gobgpd -f "$work/a.toml" -p --api-hosts "127.0.0.1:$api_a" --pprof-disable >"$work/a.log" 2>&1 &
    pids+=($!)
}
start_b
start_a
established 30 || { echo "bmp-bench: no session"; exit 1; }

received() { # B's routes received from A (one family is injected)
    gobgp -p "$api_b" neighbor 127.0.0.1 2>/dev/null | awk '/Received:/ {print $2; exit}'
}
routes() { # follow's routes, from its last progress line
    grep -o 'routes [0-9]*' "$work/follow.log" | tail -1 | awk '{print $2}'
}
# Both counts every 100 ms until the injection is over and both have stood still, equal, for
# a second; then each one's time is when it first reached that final count (GoBGP's
# --only-best injection leaves out a few of the file's prefixes, so the final count is less
# than the file's).
t0=$(date +%s.%N)
taskset -c "$cpu" gobgp -p "$api_a" mrt inject global --only-best "$work/full.mrt" \
    >"$work/inject.log" 2>&1 &
inject=$!
: >"$work/counts"
still=0 last=
while [ $still -lt 10 ]; do
    now=$(date +%s.%N)
    row="$(received) $(routes)"
    echo "$now $row" >>"$work/counts"
    if ! kill -0 "$inject" 2>/dev/null && [ "$row" = "$last" ] && [ "${row% *}" = "${row#* }" ]; then
        still=$((still + 1))
    else
        still=0
    fi
    last=$row
    if [ "$(python3 -c "print(int($now - $t0))")" -gt 1200 ]; then
        echo "bmp-bench: the dump did not complete in 1200 s ($row)"
        exit 1
    fi
    sleep 0.1
done
# An injection that failed, or left GoBGP with no route, is no dump to time.
if ! wait "$inject"; then
    echo "bmp-bench: gobgp mrt inject failed: $(tail -3 "$work/inject.log")"
    exit 1
fi
if [ "$(tail -1 "$work/counts" | awk '{print $2}')" = 0 ]; then
    echo "bmp-bench: B received no route from A after the injection ($(tail -3 "$work/inject.log"))"
    exit 1
fi
python3 - "$t0" "$work/counts" "$in_file" <<'PY'
import sys
t0 = float(sys.argv[1])
in_file = f"{int(sys.argv[3]):,}" if sys.argv[3].isdigit() else sys.argv[3]
rows = [tuple(map(float, l.split())) for l in open(sys.argv[2]) if len(l.split()) == 3]
final = int(rows[-1][1])
g = next(t for t, b, f in rows if b == final) - t0
f = next(t for t, b, f in rows if f == final) - t0
first = next((t for t, b, f in rows if f > 0), t0) - t0
print(f"dump: {final} routes (of {in_file}); GoBGP (B's adj-in complete) {g:.1f} s, "
      f"ipfib follow complete {f:.1f} s (first route at {first:.1f} s): ratio {f / g:.2f}, "
      f"{final / f:,.0f} routes/s")
PY
total=$(tail -1 "$work/counts" | awk '{print $2}')
rss=$(grep VmRSS /proc/"$follow_pid"/status | awk '{print $2 * 1024}')
stats_rss=$(python3 -c "
import resource, subprocess, sys
subprocess.run(['taskset', '-c', '$cpu', '$ipfib', 'stats', '--fib', '$fib'], stdout=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
python3 -c "
r, s, n = $rss, $stats_rss * 1024, $total
print(f'memory: follow RSS {r / 2**20:.0f} MiB with {n} routes of one peer = {r / n:.0f} B/route; '
      f'ipfib stats on the FIB file (a static planb table alone; meaningful for the full table) '
      f'peak RSS {s / 2**20:.0f} MiB; difference {(r - s) / n:.0f} B/route')"

# Quiet intervals (no updates) just before the steady ones: the readers' idle rate.
quiet_mark=$(wc -l <"$work/follow.log")
sleep "$quiet"

# Steady updates: adds, then withdrawals, of prefix number i (`prefix`, by family, above).
mark=$(wc -l <"$work/follow.log")
t1=$(date +%s.%N)
paused=0
per=$(((steady + cycles - 1) / cycles))
for c in $(seq 0 $((cycles - 1))); do
    first=$((c * per))
    last=$(((c + 1) * per < steady ? (c + 1) * per : steady))
    for i in $(seq "$first" $((last - 1))); do
        pin gobgp -p "$api_a" global rib add -a "ipv$family" "$(prefix "$i")" nexthop "$hop"
    done
    for i in $(seq "$first" $((last - 1))); do
        pin gobgp -p "$api_a" global rib del -a "ipv$family" "$(prefix "$i")"
    done
    if [ "$c" -lt $((cycles - 1)) ]; then
        sleep "$quiet_cycle"
        paused=$((paused + quiet_cycle))
    fi
done
t2=$(date +%s.%N)
sleep 1.5 # one more progress interval, so the last updates' line is printed
tail -n +"$((mark + 1))" "$work/follow.log" | python3 -c "
import re, sys
rows = [tuple(map(float, m.groups())) for l in sys.stdin
        if (m := re.search(r'\((\d+) updates/s\).*p50 (\d+) p99 (\d+) \(waiting (\d+), building (\d+)\)', l))
        and int(m.group(1)) > 0]
print(f'steady: {2 * $steady} updates in {$t2 - $t1 - $paused:.1f} s through the gobgp CLI ({2 * $steady / ($t2 - $t1 - $paused):.0f}/s, in $cycles bursts); '
      f'follow per-second visibility from receipt: p50 {min(r[1] for r in rows):.0f}-{max(r[1] for r in rows):.0f} us, '
      f'p99 {min(r[2] for r in rows):.0f}-{max(r[2] for r in rows):.0f} us over {len(rows)} intervals '
      f'(p99 waiting {min(r[3] for r in rows):.0f}-{max(r[3] for r in rows):.0f}, '
      f'building {min(r[4] for r in rows):.0f}-{max(r[4] for r in rows):.0f} us)')"
if [ "$readers" -gt 0 ]; then
    python3 - "$work/follow.log" "$quiet_mark" "$mark" "$readers" <<'PY'
import re, statistics, sys
lines = open(sys.argv[1]).read().splitlines()
quiet_mark, mark, readers = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
def intervals(rows):
    """(updates in the interval?, reader M lookups/s) of each progress line."""
    for l in rows:
        m = re.search(r'\((\d+) updates/s\).*lookups ([0-9.]+) M/s', l)
        if m:
            yield int(m.group(1)) > 0, float(m.group(2))
# The first quiet line may cover the end of the dump: skip it.
idle = [r for busy, r in intervals(lines[quiet_mark:mark]) if not busy][1:]
during = [r for busy, r in intervals(lines[mark:]) if busy]
if not idle or not during:
    print(f"lookups: not enough intervals (idle {len(idle)}, during {len(during)})")
else:
    i, d = statistics.median(idle), statistics.median(during)
    print(f"lookups ({readers} reader(s), matched trace, batches of 64): idle {i:.1f} M/s "
          f"(median of {len(idle)} intervals, {min(idle):.1f}-{max(idle):.1f}), during the steady "
          f"updates {d:.1f} M/s (median of {len(during)}, {min(during):.1f}-{max(during):.1f}): "
          f"{100 * d / i:.1f} % of idle")
# Cycle by cycle: each run of seconds with updates against the quiet run after it.
runs, kind = [], None
for busy, rate in intervals(lines[mark:]):
    if busy != kind:
        runs.append((busy, []))
        kind = busy
    runs[-1][1].append(rate)
ratios = [statistics.median(b) / statistics.median(q[1:])
          for (busy, b), (_, q) in zip(runs, runs[1:]) if busy and len(q) > 1]
if ratios:
    print(f"lookups cycle by cycle: during / quiet after, median {100 * statistics.median(ratios):.1f} % "
          f"over {len(ratios)} bursts ({', '.join(f'{100 * r:.1f}' for r in ratios)})")
PY
fi
kill "$follow_pid"
wait "$follow_pid" || true
python3 -c "
import json; d = json.load(open('$work/follow.json'))
print(f\"follow's report: {d['updates']} updates, visible p50 {d['visible_us_p50']:.0f} us p99 {d['visible_us_p99']:.0f} us (whole run), peak RSS {d['peak_rss_bytes'] >> 20} MiB\")"
echo "bmp-bench: IPv$family, CPU $(lscpu | sed -n 's/^Model name: *//p'), gobgpd on CPU $cpu, follow on CPU $follow_cpu${reader_cpus:+, its readers on CPU $reader_cpus}, $(date -u +%F)"
