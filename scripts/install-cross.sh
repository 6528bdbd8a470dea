#!/usr/bin/env bash
# Installs what `scripts/portable.sh` needs to run the aarch64 tests under emulation: Debian's
# qemu-user (qemu-aarch64) and the aarch64 cross C compiler and C library (the linker, and
# bzip2's C sources in ipfib-io), plus the Rust standard library for aarch64-unknown-linux-gnu.
#
# Idempotent: what is already there is not downloaded again. Needs root (or sudo) for apt-get,
# and the Debian package mirrors. Exits non-zero when something cannot be had.
#
#   bash scripts/install-cross.sh
set -euo pipefail

target=aarch64-unknown-linux-gnu
if ! command -v qemu-aarch64 >/dev/null 2>&1 || ! command -v aarch64-linux-gnu-gcc >/dev/null 2>&1; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
        SUDO="sudo"
    fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross >/dev/null
fi
if ! rustup target list --installed | grep -qx "$target"; then
    rustup target add "$target" >/dev/null
fi
echo "qemu-aarch64 $(qemu-aarch64 --version | head -1 | awk '{print $3}'), $(aarch64-linux-gnu-gcc --version | head -1), rust-std for $target: installed"
