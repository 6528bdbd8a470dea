#!/usr/bin/env bash
# `ipfib follow` against a real BGP daemon: two GoBGP speakers on loopback (A holds real RIBs
# and peers with B; B sends BMP to `ipfib follow`), checked through follow's lookup socket and
# its saved table:
#   1. after A's RIBs are injected (RouteViews TABLE_DUMP_V2 samples, both families, best path
#      only), follow's table equals B's Adj-RIB-In from A (`gobgp -j neighbor adj-in`),
#      prefix by prefix with the next-hop address;
#   2. a `gobgp global rib add` and `del` of an IPv4 and an IPv6 prefix on A is visible
#      through the socket within 1 s (polled every 10 ms);
#   3. killing A: B reports Peer Down and every route is gone within 2 s;
#   4. A again, then killing B (follow runs with --hold 3s): the routes stay 3 s after B's BMP
#      session ends and are gone within 5 s.
# Every wait polls with a deadline; each phase prints its time. Budget about 60 s (GoBGP takes
# 7-9 s to establish a session, twice).
#
# Usage: scripts/bmp-gobgp-tests.sh [IPFIB]   (default: the test profile's binary, built if
# missing). gobgpd comes from Debian's package (installed with apt when run as root); where it
# cannot be had, or ../shared/data is absent, the script says SKIP and exits 0.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
data="$root/../shared/data/mrt/rib"
start_all=$SECONDS

if ! command -v gobgpd >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "bmp-gobgp: installing Debian's gobgpd (apt-get)"
        apt-get install -y --no-install-recommends gobgpd >/dev/null 2>&1 ||
            { apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends gobgpd >/dev/null 2>&1; } || true
    fi
    if ! command -v gobgpd >/dev/null 2>&1; then
        echo "bmp-gobgp: SKIP: gobgpd is not installed (Debian's gobgpd package; apt as root)"
        exit 0
    fi
fi
v4rib="$data/routeviews2.rib.20140523.0600.first9072prefixes.gz"
v6rib="$data/routeviews6.rib.20151101.0600.first6870prefixes.gz"
if [ ! -f "$v4rib" ] || [ ! -f "$v6rib" ]; then
    echo "bmp-gobgp: SKIP: ../shared/data/mrt/rib (the RouteViews RIB samples) is absent"
    exit 0
fi
ipfib=${1:-${CARGO_TARGET_DIR:-$root/target}/debug/ipfib}
if [ ! -x "$ipfib" ]; then
    cargo build --quiet -p ipfib-cli --bin ipfib --profile test
fi

work=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do
        kill "$p" 2>/dev/null || true
    done
    for p in "${pids[@]}"; do
        wait "$p" 2>/dev/null || true
    done
    if [ -n "${BMP_GOBGP_KEEP:-}" ]; then
        echo "bmp-gobgp: kept $work"
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT

phase_start=$SECONDS
phase() {
    echo "bmp-gobgp: $1 ($((SECONDS - phase_start)) s)"
    phase_start=$SECONDS
}
fail() {
    echo "bmp-gobgp: FAIL: $*"
    echo "--- follow's log (last 20 lines)"
    tail -n 20 "$work/follow.log" || true
    for s in a b; do
        echo "--- gobgpd $s (last 5 lines)"
        tail -n 5 "$work/$s.log" 2>/dev/null || true
    done
    exit 1
}

# shellcheck source=scripts/bmp-gobgp-lib.sh
source "$root/scripts/bmp-gobgp-lib.sh"
zcat "$v4rib" >"$work/v4.mrt"
zcat "$v6rib" >"$work/v6.mrt"
cp "$root/scripts/bmp-gobgp-check.py" "$work/check.py"
check() { python3 "$work/check.py" "$@"; }

# ipfib follow first (its BMP port is the one B needs), with a 3 s hold time for phase 4.
"$ipfib" follow --bmp 127.0.0.1:0 --socket "$work/fib.sock" --socket-format hop \
    --save "$work/fib.saved" --save-every 200ms --interval 1s --hold 3s \
    --json "$work/follow.json" 2>"$work/follow.log" &
pids+=($!)
follow_pid=$!
check wait-log "$work/follow.log" "listening for BMP on" 20 >/dev/null || fail "follow did not start"
bmp=$(grep -o 'listening for BMP on .*' "$work/follow.log" | awk '{print $NF}')
bmp_port=${bmp##*:}

gobgp_configs "$bmp_port"
start_b
start_a
established 30 || fail "A and B did not establish their BGP session within 30 s"
phase "A and B established, B's BMP session up"

gobgp -p "$api_a" mrt inject global --only-best "$work/v4.mrt"
gobgp -p "$api_a" mrt inject global --only-best "$work/v6.mrt"
phase "RIBs injected into A"

adj_in() {
    gobgp -p "$api_b" -j neighbor 127.0.0.1 adj-in -a ipv4 >"$work/adj4.json"
    gobgp -p "$api_b" -j neighbor 127.0.0.1 adj-in -a ipv6 >"$work/adj6.json"
}
same_table() { # deadline in s: polls until follow's saved table equals B's Adj-RIB-In from A
    local deadline=$((SECONDS + $1))
    while [ $SECONDS -lt $deadline ]; do
        adj_in
        if [ -f "$work/fib.saved" ] && "$ipfib" convert --allow-empty "$work/fib.saved" - \
            >"$work/fib.txt" 2>/dev/null &&
            check compare "$work/fib.txt" "$work/fib.saved.next-hops" \
                "$work/adj4.json" "$work/adj6.json" >"$work/compare.txt"; then
            cat "$work/compare.txt"
            return 0
        fi
        sleep 0.2
    done
    cat "$work/compare.txt" 2>/dev/null || true
    return 1
}
same_table "${BMP_GOBGP_COMPARE_S:-30}" || fail "follow's table never equalled B's adj-in from A"
phase "follow's table equals B's adj-in from A, prefix by prefix with next hops"

# Add and withdraw one prefix of each family on A: visible through the socket within 1 s.
for fam in ipv4 ipv6; do
    if [ $fam = ipv4 ]; then
        net=198.51.100.0/24 addr=198.51.100.1 nh=192.0.2.7
    else
        net=2001:db8:1::/48 addr=2001:db8:1::1 nh=2001:db8::7
    fi
    before=$(check ask "$work/fib.sock" "$addr")
    t0=$(date +%s.%N)
    gobgp -p "$api_a" global rib add -a $fam $net nexthop $nh
    check wait-answer "$work/fib.sock" "$addr" "$nh" 1.0 "$t0" ||
        fail "$net add not visible within 1 s"
    t0=$(date +%s.%N)
    gobgp -p "$api_a" global rib del -a $fam $net
    check wait-answer "$work/fib.sock" "$addr" "$before" 1.0 "$t0" ||
        fail "$net withdrawal not visible within 1 s"
done
phase "rib add and del of an IPv4 and an IPv6 prefix visible within 1 s each"

# Kill A: B sends Peer Down, and every route goes at once (hold applies to BMP sessions).
probe4=$(check first-prefix-address "$work/fib.txt" 4)
probe6=$(check first-prefix-address "$work/fib.txt" 6)
t0=$(date +%s.%N)
kill "$a_pid"
wait "$a_pid" 2>/dev/null || true
check wait-answer "$work/fib.sock" "$probe4" - 2.0 "$t0" || fail "IPv4 routes not gone 2 s after A died"
check wait-answer "$work/fib.sock" "$probe6" - 2.0 "$t0" || fail "IPv6 routes not gone 2 s after A died"
phase "A killed: its routes gone within 2 s"

# A again with a small RIB; then B dies: the routes stay for the 3 s hold, then go.
start_a
established 30 || fail "A and B did not establish again within 30 s"
gobgp -p "$api_a" mrt inject global --only-best "$work/v4.mrt"
check wait-answer "$work/fib.sock" "$probe4" "!-" 10.0 || fail "re-injected routes did not arrive"
lines=$(grep -c "session ended" "$work/follow.log" || true)
kill "$b_pid"
check hold "$work/fib.sock" "$probe4" "$work/follow.log" "$lines" 3.0 5.0 ||
    fail "held routes did not stay 3 s and go by 5 s"
phase "B killed: its routes held 3 s, gone within 5 s"

kill "$follow_pid"
wait "$follow_pid" || fail "follow did not exit cleanly on SIGTERM"
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert d['routes'] == 0, d['routes']
print(f\"bmp-gobgp: follow's report: {d['updates']} updates, visible p50 {d['visible_us_p50']:.0f} us p99 {d['visible_us_p99']:.0f} us, peak RSS {d['peak_rss_bytes'] >> 20} MiB\")
" "$work/follow.json"
echo "bmp-gobgp: PASS ($((SECONDS - start_all)) s)"
