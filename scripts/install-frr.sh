#!/usr/bin/env bash
# Installs FRRouting from Debian's `frr` package (bookworm: 8.4.4) for scripts/bmp-frr-try.sh:
# bgpd (/usr/lib/frr/bgpd), its BMP module (bgpd_bmp.so, which Debian puts in
# /usr/lib/<multiarch>/frr/modules/; `bgpd -M bmp` finds it there) and vtysh.
#
#   scripts/install-frr.sh     frr (only; no recommends such as frr-pythontools)
#
# Idempotent: when bgpd, bgpd_bmp.so and vtysh are present nothing is downloaded. Needs root (or sudo) and
# the Debian package mirrors; where apt cannot provide `frr` it says SKIP and exits 0. The
# package's service is not used (no systemd here): the try script runs bgpd directly.
set -euo pipefail

for arg in "$@"; do
    case "$arg" in
    -h | --help)
        sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "install-frr.sh: unknown argument '$arg' (see --help)" >&2
        exit 2
        ;;
    esac
done

bgpd=/usr/lib/frr/bgpd
# bgpd_bmp.so: Debian's multiarch module directory (upstream's default is /usr/lib/frr/modules).
bmp_so() {
    local f
    for f in /usr/lib/*/frr/modules/bgpd_bmp.so /usr/lib/frr/modules/bgpd_bmp.so; do
        if [ -f "$f" ]; then
            echo "$f"
            return 0
        fi
    done
    return 1
}

have() {
    [ -x "$bgpd" ] && bmp_so >/dev/null && command -v vtysh >/dev/null 2>&1
}
version() {
    dpkg-query -W -f='${Version}' frr 2>/dev/null || "$bgpd" --version | head -n 1
}

if have; then
    echo "install-frr: frr $(version) is already installed ($bgpd, $(bmp_so))"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
        echo "install-frr: SKIP: not root and no sudo; cannot install Debian's frr"
        exit 0
    fi
    SUDO="sudo"
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-frr: SKIP: no apt-get; install FRR (bgpd with its bmp module) by other means"
    exit 0
fi

export DEBIAN_FRONTEND=noninteractive
# The package's maintainer scripts would start the service; without systemd (or with a
# policy-rc.d that forbids it) invoke-rc.d only warns, which is fine.
if ! { $SUDO apt-get install -y --no-install-recommends frr ||
    { $SUDO apt-get update && $SUDO apt-get install -y --no-install-recommends frr; }; }; then
    echo "install-frr: SKIP: apt could not install Debian's frr"
    exit 0
fi

if ! have; then
    echo "install-frr: SKIP: frr is installed but $bgpd or bgpd_bmp.so is missing"
    exit 0
fi
echo "install-frr: frr $(version) installed ($bgpd, $(bmp_so))"
