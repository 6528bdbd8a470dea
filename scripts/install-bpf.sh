#!/usr/bin/env bash
# Installs what `cargo build --features ipfib-cli/bpf` needs: clang (it compiles the BPF
# programs of crates/ipfib-bpf for the `bpf` target), Debian's libbpf-dev (the loader the C
# shim links) and pkg-config (build.rs finds libbpf with it).
#
#   scripts/install-bpf.sh     clang, libbpf-dev and pkg-config
#
# Idempotent: when clang is on PATH and libbpf is visible to pkg-config nothing is downloaded.
# Needs root (or sudo) and the Debian package mirrors. Running the BPF trie needs root (or
# CAP_BPF and CAP_PERFMON) too; the build does not.
set -euo pipefail

for arg in "$@"; do
    case "$arg" in
    -h | --help)
        sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "install-bpf.sh: unknown argument '$arg' (see --help)" >&2
        exit 2
        ;;
    esac
done

have() {
    command -v clang >/dev/null 2>&1 && command -v pkg-config >/dev/null 2>&1 &&
        pkg-config --exists libbpf
}

if have; then
    echo "clang $(clang -dumpversion) and libbpf $(pkg-config --modversion libbpf) are already installed"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends clang libbpf-dev pkg-config

have
echo "clang $(clang -dumpversion) and libbpf $(pkg-config --modversion libbpf) installed"
