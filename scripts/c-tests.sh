#!/usr/bin/env bash
# Builds the C library (crates/ipfib-capi), compiles the C example and the C tests (tables
# opened from files: test.c; route sets, live tables and readers: test_live.c) with the
# system C compiler against the checked-in header, and runs them against answers written by
# `ipfib lookup --engine reference`: always on a hand-written table of edge cases, and on a
# real dual-stack table (an IPv4 and an IPv6 table of ../shared/data joined) when the data is
# there (that run skips, saying so, when it is absent).
#
# Usage: scripts/c-tests.sh        (CC overrides the compiler)
#
# The static library and the `ipfib` binary are the test build's (`cargo test --workspace
# --no-run` with the feature flags of scripts/features.sh, their paths read from cargo's JSON
# messages), which after the test command's tests step is already done: a `cargo build -p
# ipfib-capi` unifies features without the dev-dependencies and compiled four crates again
# (68 s on the 2-core AMD EPYC Zen 3).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
cc="${CC:-cc}"
data="${IPFIB_SHARED_DATA:-../shared/data}"
v4="$data/ipv4/ipv4-rrc00-20020722-bestpath.txt.gz"
v6="$data/ipv6/ipv6-ris-dfz10-20241220.txt.gz"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

read -r -a features <<<"$(bash scripts/features.sh)"
cargo test --workspace --no-run --message-format=json "${features[@]}" >"$work/build.json"
# The built file of (target name, target kind), not a test harness, from cargo's messages.
artifact() {
    python3 - "$work/build.json" "$1" "$2" <<'PY'
import json, sys
path, name, kind = sys.argv[1:]
for line in open(path):
    m = json.loads(line)
    if (m.get("reason") == "compiler-artifact" and not m["profile"]["test"]
            and m["target"]["name"] == name
            and kind in m["target"]["kind"]):
        for f in m["filenames"]:
            if kind == "bin" or f.endswith(".a"):
                print(f)
                sys.exit(0)
sys.exit(f"c-tests: cargo built no {kind} named {name}")
PY
}
lib=$(artifact ipfib_capi staticlib)
ipfib=$(artifact ipfib bin)

# The exact link line the README gives: the static library and what Rust's std needs.
flags=(-std=c11 -O2 -Wall -Wextra -Werror -I crates/ipfib-capi/include)
libs=("$lib" -lpthread -ldl -lm)
"$cc" "${flags[@]}" crates/ipfib-capi/c/example.c "${libs[@]}" -o "$work/example"
"$cc" "${flags[@]}" crates/ipfib-capi/c/test.c "${libs[@]}" -o "$work/test"
"$cc" "${flags[@]}" -pthread crates/ipfib-capi/c/test_live.c "${libs[@]}" -o "$work/test_live"
echo "c-tests: example and tests compiled with $cc"

# Runs the tests and the example on TABLE and ADDRESSES against what
# `ipfib lookup --engine reference` answers.
run_on() {
    local table=$1 addrs=$2 what=$3
    "$ipfib" lookup --fib "$table" --engine reference < "$addrs" > "$work/want"
    "$work/test" "$table" "$addrs" "$work/want" "$work"
    "$work/test_live" "$table" "$addrs" "$work/want" "$work"
    "$work/example" "$table" "$addrs" > "$work/example.out"
    cmp "$work/example.out" "$work/want"
    echo "c-tests: $what: the tests pass and the example prints what ipfib lookup --engine reference prints ($(wc -l < "$work/want") addresses)"
}

# Always: a hand-written dual-stack table of edge cases (a default route under host routes at
# both ends of the space, nested routes sharing a start, /25, /64, /128), probed at every
# route's first and last address and their neighbours.
cat > "$work/small.txt" <<'TABLE'
0.0.0.0/0 9
0.0.0.0/32 1
10.0.0.0/8 2
10.1.0.0/16 3
10.1.0.0/24 4
10.1.2.0/24 5
192.0.2.128/25 6
255.255.255.0/24 8
255.255.255.255/32 7
2001:db8::/32 10
2001:db8:1::/48 11
2001:db8:1:5::/64 12
2001:db8:1:5::1/128 13
ff00::/8 15
ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128 14
TABLE
cat > "$work/small.addrs" <<'ADDRS'
0.0.0.0
0.0.0.1
9.255.255.255
10.0.0.0
10.0.255.255
10.1.0.0
10.1.0.255
10.1.1.0
10.1.2.0
10.1.2.255
10.1.3.0
10.255.255.255
11.0.0.0
192.0.2.127
192.0.2.128
192.0.2.255
192.0.3.0
255.255.254.255
255.255.255.0
255.255.255.254
255.255.255.255
::
2001:db7:ffff:ffff:ffff:ffff:ffff:ffff
2001:db8::
2001:db8:0:ffff:ffff:ffff:ffff:ffff
2001:db8:1::
2001:db8:1:4:ffff:ffff:ffff:ffff
2001:db8:1:5::
2001:db8:1:5::1
2001:db8:1:5::2
2001:db8:1:5:ffff:ffff:ffff:ffff
2001:db8:1:6::
2001:db8:1:ffff:ffff:ffff:ffff:ffff
2001:db8:2::
2001:db8:ffff:ffff:ffff:ffff:ffff:ffff
2001:db9::
feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff
ff00::
ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe
ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff
ADDRS
run_on "$work/small.txt" "$work/small.addrs" "hand-written table"

if [ ! -f "$v4" ] || [ ! -f "$v6" ]; then
    echo "c-tests: skipping the real-table run: $v4 or $v6 not found (set IPFIB_SHARED_DATA)"
    exit 0
fi
{ gzip -dc "$v4"; gzip -dc "$v6"; } > "$work/table.txt"
# The first address of every third prefix, addresses inside routes of each family (a matched
# trace), and a few that no route or the default covers.
awk '!/^#/ && NF >= 2 && NR % 3 == 0 { split($1, p, "/"); print p[1] }' "$work/table.txt" > "$work/addrs"
for family in 4 6; do
    "$ipfib" gen trace --fib "$work/table.txt" --family "$family" --kind matched \
        --count 20000 --seed 3 >> "$work/addrs"
done
printf '%s\n' 0.0.0.0 255.255.255.255 10.1.2.3 :: ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff \
    2001:db8::1 2a00:1450:4001:80b::200e >> "$work/addrs"
run_on "$work/table.txt" "$work/addrs" "real dual-stack table"
