#!/usr/bin/env bash
# Installs what `cargo build --features dpdk` needs: Debian's DPDK development package (headers,
# libraries, libdpdk.pc) and pkg-config, which build.rs uses to find them.
#
#   scripts/install-dpdk.sh           libdpdk-dev and pkg-config (what the build needs)
#   scripts/install-dpdk.sh --tools   the same, and also Debian's dpdk-dev, which holds DPDK's
#                                     own test programs (dpdk-test-fib, used by
#                                     scripts/dpdk-test-fib.sh); opt-in, nothing else needs it
#
# Idempotent: when libdpdk is already visible to pkg-config (and, with --tools, dpdk-test-fib is
# on PATH) nothing is downloaded.
# Needs root (or sudo) and the Debian package mirrors.
set -euo pipefail

tools=0
for arg in "$@"; do
    case "$arg" in
    --tools) tools=1 ;;
    -h | --help)
        sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "install-dpdk.sh: unknown argument '$arg' (see --help)" >&2
        exit 2
        ;;
    esac
done

have_lib=0
if command -v pkg-config >/dev/null 2>&1 && pkg-config --exists libdpdk; then
    have_lib=1
fi
have_tools=0
if command -v dpdk-test-fib >/dev/null 2>&1; then
    have_tools=1
fi

if [ "$have_lib" -eq 1 ] && { [ "$tools" -eq 0 ] || [ "$have_tools" -eq 1 ]; }; then
    echo "libdpdk $(pkg-config --modversion libdpdk) is already installed"
    if [ "$tools" -eq 1 ]; then
        echo "dpdk-test-fib is already installed: $(command -v dpdk-test-fib)"
    fi
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi

packages=(libdpdk-dev pkg-config)
if [ "$tools" -eq 1 ]; then
    # dpdk-dev, not dpdk: Debian's `dpdk` package holds only the Python helper scripts
    # (dpdk-devbind.py, ...); the test programs (dpdk-test-fib, dpdk-testpmd, ...) are in dpdk-dev.
    packages+=(dpdk-dev)
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends "${packages[@]}"

pkg-config --exists libdpdk
echo "libdpdk $(pkg-config --modversion libdpdk) installed"
if [ "$tools" -eq 1 ]; then
    command -v dpdk-test-fib >/dev/null
    echo "dpdk-test-fib installed: $(command -v dpdk-test-fib)"
fi
echo "for DPDK at its best in ipfib bench, also reserve huge pages: sudo scripts/setup-hugepages.sh"
