#!/usr/bin/env bash
# Builds the C library (crates/ipfib-capi), installs it into a scratch prefix with
# scripts/install-c.sh, compiles the C example (static library) and the C tests (pkg-config,
# shared library; tables opened from files: test.c; route sets, live tables and readers:
# test_live.c) with the system C compiler, and runs them against answers written by
# `ipfib lookup --engine reference`: always on a hand-written table of edge cases, and on a
# real dual-stack table (an IPv4 and an IPv6 table of ../shared/data joined) when the data is
# there (that run skips, saying so, when it is absent). On both tables it also builds and runs
# the DPDK forwarding example (scripts/dpdk-fwd-tests.sh) against the installed library.
#
# Usage: scripts/c-tests.sh        (CC overrides the compiler)
#
# The static library and the `ipfib` binary are the test build's (`cargo test --workspace
# --tests --no-run` with the feature flags of scripts/features.sh, their paths read from
# cargo's JSON messages), which after the test command's tests step is already done: a `cargo
# build -p ipfib-capi` unifies features without the dev-dependencies and compiled four crates
# again (68 s on the 2-core AMD EPYC Zen 3), and without `--tests`, as the tests step selects,
# the examples were built here (87 s, Intel Xeon Ice Lake).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
cc="${CC:-cc}"
data="${IPFIB_SHARED_DATA:-../shared/data}"
v4="$data/ipv4/ipv4-rrc00-20020722-bestpath.txt.gz"
v6="$data/ipv6/ipv6-ris-dfz10-20241220.txt.gz"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

read -r -a features <<<"$(bash scripts/features.sh)"
cargo test --workspace --tests --no-run --message-format=json "${features[@]}" >"$work/build.json"
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

# Installed as a C user installs it (scripts/install-c.sh, from the libraries just built), then
# compiled the two ways the README gives: the tests through pkg-config against the shared
# library, the example against the static one.
if ! command -v pkg-config >/dev/null 2>&1; then
    if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
        echo "c-tests: pkg-config is missing (install Debian's pkg-config, or your system's)" >&2
        exit 1
    fi
    echo "c-tests: installing Debian's pkg-config"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends pkg-config >/dev/null
fi
prefix="$work/prefix"
IPFIB_C_BUILT=$(dirname "$lib") bash scripts/install-c.sh "$prefix"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
flags=(-std=c11 -O2 -Wall -Wextra -Werror)
read -r -a pc <<<"$(pkg-config --cflags --libs ipfib)"
for t in test test_live; do
    "$cc" "${flags[@]}" -pthread "crates/ipfib-capi/c/$t.c" "${pc[@]}" -Wl,-rpath,"$prefix/lib" -o "$work/$t"
done
if ! ldd "$work/test" | grep -q "libipfib.so.* => $prefix/lib/"; then
    echo "c-tests: the tests do not load the installed libipfib.so:" >&2
    ldd "$work/test" >&2
    exit 1
fi
"$cc" "${flags[@]}" $(pkg-config --cflags ipfib) crates/ipfib-capi/c/example.c "$prefix/lib/libipfib.a" \
    -lpthread -ldl -lm -o "$work/example"
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
# The DPDK forwarding example on the same table (skips, saying so, without libdpdk).
bash scripts/dpdk-fwd-tests.sh "$prefix" "$ipfib" "$work/small.txt" "hand-written table"

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
bash scripts/dpdk-fwd-tests.sh "$prefix" "$ipfib" "$work/table.txt" "real dual-stack table" \
    "$data/updates/ris-rrc00-updates-20190101-0000-5min.txt.gz"
