#!/usr/bin/env bash
# Runs the core crate's tests (SIMD node search, batch lookups, the unchecked PlanB walk) and
# the readers' unit tests under AddressSanitizer.
#
# Usage: scripts/asan.sh [extra cargo test args, e.g. a test name filter]
#
# How it works on the stable toolchain: -Zsanitizer=address is a nightly flag, which
# RUSTC_BOOTSTRAP=1 unlocks. `--target x86_64-unknown-linux-gnu` keeps RUSTFLAGS away from
# build scripts and proc-macros (they run on the host and must not be instrumented). The
# standard library is not rebuilt (-Zbuild-std needs the rust-src component and a nightly
# cargo): accesses inside std are not checked, but every access our code makes is, which is
# what matters for the SIMD loads and the unchecked indexing.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
target=x86_64-unknown-linux-gnu
if [ "$(uname -m)" != x86_64 ] || [ "$(uname -s)" != Linux ]; then
    echo "asan.sh: only set up for x86_64 Linux" >&2
    exit 1
fi

export RUSTC_BOOTSTRAP=1
export RUSTFLAGS="-Zsanitizer=address -Cdebuginfo=1 ${ASAN_RUSTFLAGS:-}"
export RUSTDOCFLAGS="-Zsanitizer=address"
# Leaks are checked too (LeakSanitizer comes with ASan on Linux); stop at the first error.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=0}"
# An instrumented build is not reusable by normal builds: keep it apart.
export CARGO_TARGET_DIR="$root/target/asan"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

failed=0
run() {
    echo
    echo "==> $*"
    if ! "$@"; then
        echo "FAIL: $*"
        failed=$((failed + 1))
    fi
}

# The core crate's unit tests: SIMD backends against each other, PlanB build/validate/walk.
run cargo test -p ipfib --lib --target "$target" "$@"

# Its integration tests: the conformance suite (every engine, backend and batch path against
# the reference, real tables included) and the public-API contract.
for name in conformance public_api; do
    run cargo test -p ipfib --test "$name" --target "$target" "$@"
done

# The readers' unit tests (line splitting over buffer boundaries, framing, read-ahead thread).
run cargo test -p ipfib-io --lib --target "$target" "$@"

echo
if [ "$failed" -gt 0 ]; then
    echo "asan.sh: $failed step(s) failed"
    exit 1
fi
echo "asan.sh: no AddressSanitizer errors"
