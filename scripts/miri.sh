#!/usr/bin/env bash
# The core crate's scalar-path unit tests under Miri (undefined-behaviour checker), on the
# nightly toolchain Miri needs. Called by scripts/test.sh; skips (exit 0, saying so) when the
# nightly toolchain or its Miri component cannot be installed.
#
#   bash scripts/miri.sh          # node search, line layout, tree builder, route list, tables:
#                                 # the units the scalar walk is made of (about 2 minutes)
#   bash scripts/miri.sh --full   # also the whole scalar walk over built PlanB tables
#                                 # (scalar_walk_*: about 10 minutes per test, since every
#                                 # build fills the 65,536-entry direct table)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! cargo +nightly miri --version >/dev/null 2>&1; then
    echo "==> installing Miri for the nightly toolchain"
    if ! rustup toolchain install nightly --profile minimal --component miri,rust-src >/dev/null 2>&1 \
        || ! cargo +nightly miri --version >/dev/null 2>&1; then
        echo "skipping: Miri is not available (rustup could not install nightly + miri)"
        exit 0
    fi
fi

filters=(
    engine::planb::search::
    engine::planb::layout::
    engine::planb::builder::
    engine::backend::
    engine::registry::
    fib::routes::
    live::snapshot::
    table::
    interval::
    prefix::
    addr::
)
if [ "${1:-}" = "--full" ]; then
    filters+=(engine::planb::tests::)
fi

# Few proptest cases: Miri interprets every instruction, and the point is UB, not coverage
# (the property tests run in full natively).
export PROPTEST_CASES="${PROPTEST_CASES:-8}"
export MIRIFLAGS="${MIRIFLAGS:-} -Zmiri-disable-isolation"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
for f in "${filters[@]}"; do
    if cargo +nightly miri test -q -p ipfib --lib -- "$f" >"$log" 2>&1; then
        echo "ok    Miri: $f ($(grep -o '[0-9]* passed' "$log" | head -1))"
    else
        cat "$log"
        echo "FAIL  Miri: $f"
        status=1
    fi
done
exit $status
