#!/usr/bin/env bash
# Installs the C library the way C programs expect to find it, into PREFIX:
#
#   PREFIX/include/ipfib.h
#   PREFIX/lib/libipfib.a                      (static)
#   PREFIX/lib/libipfib.so.X.Y.Z, .so.SONAME, .so   (shared; SONAME is MAJOR, or 0.MINOR before 1.0)
#   PREFIX/lib/pkgconfig/ipfib.pc
#
# so that, with PKG_CONFIG_PATH=PREFIX/lib/pkgconfig (not needed for /usr/local or /usr):
#
#   cc prog.c $(pkg-config --cflags --libs ipfib)                        # shared
#   cc prog.c $(pkg-config --cflags ipfib) PREFIX/lib/libipfib.a -lpthread -ldl -lm   # static
#
# Usage: bash scripts/install-c.sh PREFIX
#   Builds the library with `cargo build --release -p ipfib-capi` first. IPFIB_C_BUILT=DIR
#   installs the libraries already built in DIR instead (scripts/c-tests.sh passes the test
#   build's, so the test command builds nothing twice).
#
# Why not cargo-c: Debian's cargo-c (0.9.14, cargo 0.66) cannot read this workspace's
# manifest (`profile.test.debug = "line-tables-only"`), and `cargo install cargo-c` (0.10.24,
# the newest for Rust 1.95) compiles 348 crates, 1,656 s on one core of the AMD EPYC Zen 3
# (BENCHMARKS.md, "C library"): on every fresh machine, more than all the C tests take. What
# cargo-c would do for this crate (a soname, the header, the libraries, a .pc file) is this
# script and a few lines of crates/ipfib-capi/build.rs.
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: bash scripts/install-c.sh PREFIX" >&2
    exit 2
fi
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mkdir -p "$1"
prefix=$(cd "$1" && pwd)

version=$(cargo metadata --no-deps --format-version 1 |
    python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "ipfib-capi"))')
IFS=. read -r major minor _ <<<"$version"
# The soname's version: what a compatible upgrade keeps (the same rule as build.rs).
if [ "$major" = 0 ]; then so_version="0.$minor"; else so_version="$major"; fi

built="${IPFIB_C_BUILT:-}"
if [ -z "$built" ]; then
    cargo build --release -p ipfib-capi
    built="${CARGO_TARGET_DIR:-target}/release"
fi
for f in libipfib_capi.a libipfib_capi.so; do
    if [ ! -f "$built/$f" ]; then
        echo "install-c: $built/$f not found (build ipfib-capi first)" >&2
        exit 1
    fi
done

install -d "$prefix/include" "$prefix/lib/pkgconfig"
install -m 644 crates/ipfib-capi/include/ipfib.h "$prefix/include/ipfib.h"
install -m 644 "$built/libipfib_capi.a" "$prefix/lib/libipfib.a"
install -m 755 "$built/libipfib_capi.so" "$prefix/lib/libipfib.so.$version"
ln -sf "libipfib.so.$version" "$prefix/lib/libipfib.so.$so_version"
ln -sf "libipfib.so.$so_version" "$prefix/lib/libipfib.so"
cat > "$prefix/lib/pkgconfig/ipfib.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: ipfib
Description: Exact, fast longest-prefix match for IPv4 and IPv6 forwarding tables
Version: $version
Libs: -L\${libdir} -lipfib
Libs.private: -lpthread -ldl -lm
Cflags: -I\${includedir}
PC
echo "install-c: ipfib $version installed into $prefix (header, libipfib.a, libipfib.so.$so_version, pkgconfig/ipfib.pc)"
