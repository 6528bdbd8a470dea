#!/usr/bin/env bash
# The cargo feature flags the test command builds with, on one line: DPDK's comparators
# (`ipfib-cli/dpdk`, which enables `ipfib-dpdk/dpdk`) when libdpdk is installed, nothing
# otherwise. scripts/test.sh (clippy, docs, tests) and scripts/c-tests.sh use the same flags,
# so everything after the tests step reuses its build instead of compiling again.
if command -v pkg-config >/dev/null 2>&1 && pkg-config --exists libdpdk; then
    echo "--features ipfib-cli/dpdk"
fi
