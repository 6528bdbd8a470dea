#!/usr/bin/env bash
# Builds the C library (crates/ipfib-capi), compiles the C example and the C tests with the
# system C compiler against the checked-in header, and runs them on a real dual-stack table
# (an IPv4 and an IPv6 table of ../shared/data joined) against answers written by
# `ipfib lookup --engine reference`. Skips, saying so, when the data is absent.
#
# Usage: scripts/c-tests.sh        (CC overrides the compiler; the build uses the test profile)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
target="${CARGO_TARGET_DIR:-$PWD/target}"
cc="${CC:-cc}"
data="${IPFIB_SHARED_DATA:-../shared/data}"
v4="$data/ipv4/ipv4-rrc00-20020722-bestpath.txt.gz"
v6="$data/ipv6/ipv6-ris-dfz10-20241220.txt.gz"

cargo build --profile test -p ipfib-capi -p ipfib-cli
lib="$target/debug/libipfib_capi.a"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The exact link line the README gives: the static library and what Rust's std needs.
flags=(-std=c11 -O2 -Wall -Wextra -Werror -I crates/ipfib-capi/include)
libs=("$lib" -lpthread -ldl -lm)
"$cc" "${flags[@]}" crates/ipfib-capi/c/example.c "${libs[@]}" -o "$work/example"
"$cc" "${flags[@]}" crates/ipfib-capi/c/test.c "${libs[@]}" -o "$work/test"
echo "c-tests: example and tests compiled with $cc"

if [ ! -f "$v4" ] || [ ! -f "$v6" ]; then
    echo "c-tests: skipping the runs: $v4 or $v6 not found (set IPFIB_SHARED_DATA)"
    exit 0
fi
{ gzip -dc "$v4"; gzip -dc "$v6"; } > "$work/table.txt"
# The first address of every third prefix, and a few that no route or the default covers.
awk '!/^#/ && NF >= 2 && NR % 3 == 0 { split($1, p, "/"); print p[1] }' "$work/table.txt" > "$work/addrs"
printf '%s\n' 0.0.0.0 255.255.255.255 10.1.2.3 :: ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff \
    2001:db8::1 2a00:1450:4001:80b::200e >> "$work/addrs"
"$target/debug/ipfib" lookup --fib "$work/table.txt" --engine reference < "$work/addrs" > "$work/want"

"$work/test" "$work/table.txt" "$work/addrs" "$work/want" "$work"
"$work/example" "$work/table.txt" "$work/addrs" > "$work/example.out"
cmp "$work/example.out" "$work/want"
echo "c-tests: the example prints what ipfib lookup --engine reference prints ($(wc -l < "$work/want") addresses)"
