#!/usr/bin/env bash
# The core crate compiled for a CPU without x86 SIMD (aarch64 Linux), so the code behind
# `cfg(not(target_arch = "x86_64"))` cannot rot unseen: this machine builds and tests only
# x86-64, where that code is never compiled. The portable scalar path is what such a CPU runs.
#
# A check, not a build: no aarch64 linker or C compiler is needed. The standard library for
# the target is checked from source (-Zbuild-std), which needs the nightly toolchain with
# rust-src (the Miri step installs both). Unused code and imports are errors, since a cfg
# that drops their only user is the usual way this breaks. Skips, saying so, when nightly +
# rust-src cannot be had.
#
# The library alone: every `target_arch` cfg of the workspace is in it (the engines' SIMD
# walks and the backend dispatch). The other crates have none, and the ones that read
# compressed files (ipfib-io, and through it the CLI, the C library and ipfib's tests) build
# bzip2's C sources, which would need an aarch64 C cross compiler.
#
#   bash scripts/portable.sh
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

target=aarch64-unknown-linux-gnu
if ! rustup +nightly component list --installed 2>/dev/null | grep -q '^rust-src'; then
    echo "==> installing the nightly toolchain with rust-src"
    if ! rustup toolchain install nightly --profile minimal --component rust-src >/dev/null 2>&1; then
        echo "skipping: the nightly toolchain with rust-src is not available"
        exit 0
    fi
fi

# Its own target directory: the build-std artifacts are kept apart from the main build's.
RUSTFLAGS="-D unused" cargo +nightly check -q -Zbuild-std=core,alloc,std \
    --target "$target" -p ipfib --lib --target-dir target/portable
status=$?
if [ "$status" -eq 0 ]; then
    echo "ok    ipfib (lib) compiles for $target"
fi
exit $status
