#!/usr/bin/env bash
# The library on a CPU without x86 SIMD: aarch64 Linux, built with NEON and tested under
# qemu-user, so the code behind `cfg(target_arch = "aarch64")` (the NEON node search, the
# NEON arms of every engine's dispatch) and the portable paths cannot rot unseen on this
# x86-64 machine.
#
# 1. Installs what it needs (scripts/install-cross.sh: Debian's qemu-user and aarch64 cross
#    gcc, and the aarch64 standard library through rustup). Where they cannot be had, it
#    falls back to checking that the library compiles for aarch64 (nightly + rust-src,
#    -Zbuild-std) and says that the tests were skipped.
# 2. Checks the library for aarch64 with unused code and imports as errors (a cfg that drops
#    their only user is the usual way this breaks), then builds its tests.
# 3. Runs, under qemu-aarch64, a representative part of the suite: the CPU detection test
#    with IPFIB_EXPECT_BACKEND=neon (so the run fails if the emulated CPU were not taken for
#    a NEON one and the portable code ran instead), PlanB's unit tests (every backend's node
#    search against a plain count, the staged batches against the intervals), the address
#    parsers (the NEON IPv6 parser and the bytewise one against `std`), and the
#    conformance suite but its proptest properties and real-table runs (too slow emulated):
#    every engine built with the default backend (NEON) against the reference.
#
# Budget: PORTABLE_BUDGET seconds (default 420) for the emulated runs; the step prints its
# times. Measured on the 2-core AMD EPYC Zen 3 with another build running: the cold aarch64
# build 11 min 18 s, the PlanB/CPU tests 35 s and the conformance part 222 s under qemu.
#
#   bash scripts/portable.sh
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
start=$SECONDS
budget=${PORTABLE_BUDGET:-420}
target=aarch64-unknown-linux-gnu

took() { echo "portable: $1 in $((SECONDS - start)) s"; }

check_only() {
    echo "skipping the aarch64 tests: $1"
    if ! rustup +nightly component list --installed 2>/dev/null | grep -q '^rust-src'; then
        if ! rustup toolchain install nightly --profile minimal --component rust-src >/dev/null 2>&1; then
            echo "skipping: the nightly toolchain with rust-src is not available either"
            exit 0
        fi
    fi
    RUSTFLAGS="-D unused" cargo +nightly check -q -Zbuild-std=core,alloc,std \
        --target "$target" -p ipfib --lib --target-dir target/portable
    status=$?
    [ "$status" -eq 0 ] && echo "ok    ipfib (lib) compiles for $target"
    took "compile check"
    exit $status
}

if ! bash scripts/install-cross.sh; then
    check_only "qemu-user, the aarch64 cross compiler or the aarch64 standard library could not be installed"
fi

export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu"
export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc
# `--cfg ipfib_portable` leaves the file readers and the benchmark harness out of the test
# build (crates/ipfib/Cargo.toml): the runs below skip the real tables anyway.
run() {
    RUSTFLAGS="--cfg ipfib_portable" \
        cargo test -q --target "$target" --target-dir target/portable -p ipfib "$@"
}

if ! RUSTFLAGS="-D unused" cargo check -q --target "$target" -p ipfib --lib --target-dir target/portable-check; then
    echo "FAILED: ipfib (lib) for $target, unused code as errors"
    exit 1
fi
if ! run --lib --test conformance --no-run; then
    echo "FAILED: the aarch64 build"
    exit 1
fi
took "aarch64 build"

status=0
IPFIB_EXPECT_BACKEND=neon timeout "$budget" bash -c "$(declare -f run); target=$target; \
    run --lib -- cpu:: engine::planb:: parse:: && run --test conformance -- --skip properties:: --skip real_tables::" || status=$?
if [ "$status" -eq 124 ]; then
    echo "FAILED: the aarch64 tests ran past the budget of $budget s"
elif [ "$status" -ne 0 ]; then
    echo "FAILED: the aarch64 tests under qemu"
else
    echo "ok    ipfib's NEON backend passes its tests for $target under qemu-aarch64"
fi
took "aarch64 tests"
exit $status
