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
    cpu::
    engine::registry::
    fib::routes::
    live::snapshot::
    storage::tests::arenas
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
# One run with every filter: each run of the test binary under Miri costs seconds of start-up
# (about 4 s of CPU each on the 2-core AMD EPYC Zen 3, eleven runs before).
if cargo +nightly miri test -p ipfib --lib -- "${filters[@]}" >"$log" 2>&1; then
    status=0
else
    status=1
fi
for f in "${filters[@]}"; do
    passed=$(grep -c "^test .*$f.* \.\.\. ok\$" "$log")
    failed=$(grep -c "^test .*$f.* \.\.\. FAILED\$" "$log")
    if [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]; then
        echo "ok    Miri: $f ($passed passed)"
    else
        echo "FAIL  Miri: $f ($passed passed, $failed failed)"
        status=1
    fi
done
if [ "$status" -ne 0 ]; then
    cat "$log"
fi
exit $status
