#!/usr/bin/env bash
# Python lookup benchmark: ipfib against pytricia and py-radix on the real IPv6 DFZ table and
# the IPv4 et-2015 table, the same addresses for all (crates/ipfib-py/bench/bench_lookup.py).
#
# Uses its own virtual environment ($CARGO_TARGET_DIR/py-bench-venv, requirements pinned in
# crates/ipfib-py/requirements-bench.txt, from PyPI), builds a release wheel of ipfib with
# maturin and installs it there, then runs the benchmark pinned to one core (CPU, default 1).
#
# Then one big call (--big): `ipfib gen trace` writes a matched trace of BIG addresses (default
# 8,388,608) of the IPv6 table; BIG_ROUNDS (default 5) rounds each run one `ipfib bench` process
# (its batch rate on that table and trace, release build, pinned the same way) and one fresh
# Python process timing its first call; then bench_lookup.py times the other calls on the same
# addresses against the median bench rate (repeated, out=, threads, strings, Arrow, LiveTable;
# for an IPv4 table the standard run also times NumPy searchsorted). BIG=0 skips it.
#
# Usage: scripts/py-bench.sh [bench_lookup.py arguments, e.g. --addrs 500000 --rounds 5]
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
target="${CARGO_TARGET_DIR:-$root/target}"
venv="$target/py-bench-venv"
req="$root/crates/ipfib-py/requirements-bench.txt"
data="${IPFIB_SHARED_DATA:-$root/../shared/data}"
v6="$data/ipv6/ipv6-ris-dfz10-20241220.txt.gz"
v4="$data/ipv4/ipv4-bgpdump-et-20151023.txt.gz"
if [ ! -f "$v6" ] || [ ! -f "$v4" ]; then
    echo "py-bench: $v6 or $v4 not found (set IPFIB_SHARED_DATA)" >&2
    exit 1
fi

if [ ! -x "$venv/bin/python" ]; then
    "${PYTHON:-python3}" -m venv "$venv"
fi
stamp="$venv/.requirements.sha256"
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
    echo "$want" > "$stamp"
fi

wheels="$target/py-wheels"
rm -rf "$wheels"
(
    cd crates/ipfib-py
    VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" CARGO_TARGET_DIR="$target" \
        "$venv/bin/maturin" build --release --quiet -o "$wheels"
)
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall \
    --no-deps "$wheels"/ipfib-*.whl

# The CLI keeps the test command's features (DPDK's comparators where libdpdk is installed), so
# this build does not replace a CLI that `ipfib bench --engines dpdk-fib` needs.
read -ra cli_features <<< "$(bash scripts/features.sh)"
big=${BIG:-8388608}
rounds=${BIG_ROUNDS:-5}
extra=()
py=(taskset -c "${CPU:-1}" "$venv/bin/python" crates/ipfib-py/bench/bench_lookup.py)
if [ "$big" -gt 0 ]; then
    cargo build --release --quiet -p ipfib-cli "${cli_features[@]}"
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    "$target/release/ipfib" gen trace --fib "$v6" --kind matched --count "$big" --out "$work/trace.txt"
    "${py[@]}" "$v6" --big "$work/trace.txt" --make-array
    # Rounds alternate one ipfib bench process and one fresh Python process's first call:
    # single processes differ by up to 1.5x on this kind of machine (placement), so both
    # figures are medians of several processes, taken in the same minutes.
    for r in $(seq "$rounds"); do
        echo "py-bench: big call, round $r/$rounds"
        taskset -c "${CPU:-1}" "$target/release/ipfib" bench --fib "$v6" --trace "$work/trace.txt" \
            --engines planb --rounds 1 --json "$work/bench-$r.json" > "$work/bench-$r.txt" 2>&1
        "${py[@]}" "$v6" --big "$work/trace.txt" --first-call "$work/first-$r.json"
    done
    extra=(--big "$work/trace.txt" --bench-json "$work"/bench-*.json --first-json "$work"/first-*.json)
fi
"${py[@]}" "$v6" "$v4" "${extra[@]}" "$@"
