#!/usr/bin/env bash
# The cargo feature flags the test command builds with, on one line: DPDK's comparators
# (`ipfib-cli/dpdk`, which enables `ipfib-dpdk/dpdk`) when libdpdk is installed, and the
# kernel's BPF LPM trie (`ipfib-cli/bpf`: two small BPF programs compiled by clang and a C shim
# against libbpf, about a second of build) when clang and libbpf are; nothing otherwise.
# scripts/test.sh (clippy, docs, tests) and scripts/c-tests.sh use the same flags, so
# everything after the tests step reuses its build instead of compiling again.
features=()
if command -v pkg-config >/dev/null 2>&1 && pkg-config --exists libdpdk; then
    features+=(ipfib-cli/dpdk)
fi
if command -v clang >/dev/null 2>&1 && command -v pkg-config >/dev/null 2>&1 &&
    pkg-config --exists libbpf; then
    features+=(ipfib-cli/bpf)
fi
if [ "${#features[@]}" -gt 0 ]; then
    (
        IFS=,
        echo "--features ${features[*]}"
    )
fi
