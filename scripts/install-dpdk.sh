#!/usr/bin/env bash
# Installs what `cargo build --features dpdk` needs: Debian's DPDK development package (headers,
# libraries, libdpdk.pc) and pkg-config, which build.rs uses to find them.
#
# Idempotent: when libdpdk is already visible to pkg-config nothing is downloaded.
# Needs root (or sudo) and the Debian package mirrors.
set -euo pipefail

if command -v pkg-config >/dev/null 2>&1 && pkg-config --exists libdpdk; then
    echo "libdpdk $(pkg-config --modversion libdpdk) is already installed"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends libdpdk-dev pkg-config

pkg-config --exists libdpdk
echo "libdpdk $(pkg-config --modversion libdpdk) installed"
echo "for DPDK at its best in ipfib bench, also reserve huge pages: sudo scripts/setup-hugepages.sh"
