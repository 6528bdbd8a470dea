#!/usr/bin/env bash
# The one test command (also what CI runs): formatting, lints, then the whole test suite.
#
# Every step runs even when an earlier one fails, so one run shows everything that is wrong;
# the exit status is non-zero if any step failed. Tests run in the `test` profile
# (opt-level 2, see Cargo.toml), which builds much faster than `--release` and still runs the
# real-table tests quickly. Tests that need ../shared/data skip (and say so) when it is absent.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

have_libdpdk() {
    command -v pkg-config >/dev/null 2>&1 && pkg-config --exists libdpdk
}

have_bpf_toolchain() {
    command -v clang >/dev/null 2>&1 && command -v pkg-config >/dev/null 2>&1 &&
        pkg-config --exists libbpf
}

# Everything this run installs outside the project, said before anything is done (each step's
# script installs its own, and skips saying so where it cannot).
announce_installs() {
    local items=()
    if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
        items+=("rustfmt and clippy, components of your Rust toolchain (rustup component add)")
    fi
    if ! have_libdpdk && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        items+=("Debian's libdpdk-dev and pkg-config, system-wide (apt-get, as root: scripts/install-dpdk.sh)")
    fi
    if ! have_bpf_toolchain && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        items+=("Debian's clang, libbpf-dev and pkg-config, system-wide (apt-get, as root: scripts/install-bpf.sh)")
    fi
    if ! rustup +nightly component list --installed 2>/dev/null | grep -q '^rust-src'; then
        items+=("the nightly Rust toolchain with rust-src (rustup toolchain install: the aarch64 check)")
    fi
    if ! cargo +nightly miri --version >/dev/null 2>&1; then
        items+=("Miri for the nightly toolchain (rustup component)")
    fi
    if ! command -v gobgpd >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        items+=("Debian's gobgpd, system-wide (apt-get, as root: scripts/bmp-gobgp-tests.sh)")
    fi
    if ! cargo fuzz --version >/dev/null 2>&1; then
        items+=("cargo-fuzz into ~/.cargo/bin (cargo install, from crates.io)")
    fi
    if [ ! -x "${CARGO_TARGET_DIR:-target}/py-venv/bin/python" ]; then
        items+=("a Python virtual environment in ${CARGO_TARGET_DIR:-target}/py-venv with crates/ipfib-py/requirements-test.txt (pip, from PyPI; inside the project)")
    fi
    echo "==> this run installs:"
    if [ "${#items[@]}" -eq 0 ]; then
        echo "  nothing: every tool it needs is already here"
    fi
    for item in "${items[@]}"; do
        echo "  - $item"
    done
}
announce_installs

# rustfmt and clippy are rustup components; adding them is a no-op (and offline-safe) when
# they are already installed.
if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
    echo "==> installing rustfmt and clippy"
    rustup component add rustfmt clippy
fi

summary=()
failed_steps=0

run_step() {
    local name=$1
    shift
    echo
    echo "==> $name: $*"
    local start=$SECONDS
    if "$@"; then
        summary+=("PASS  $name ($((SECONDS - start)) s)")
    else
        summary+=("FAIL  $name ($((SECONDS - start)) s)")
        failed_steps=$((failed_steps + 1))
    fi
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT

# DPDK's comparators (the C shim, and their answers against the reference) are what every
# ratio in BENCHMARKS.md is measured against. libdpdk comes from Debian's packages
# (scripts/install-dpdk.sh), installed first when this runs as root with apt, so that clippy,
# the docs and the tests build with them in one build (scripts/features.sh); where libdpdk
# cannot be had, they build and run without them, and this step says so.
install_dpdk() {
    if ! have_libdpdk && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        local install_log
        install_log=$(mktemp)
        if ! bash scripts/install-dpdk.sh >"$install_log" 2>&1; then
            tail -n 5 "$install_log"
            rm -f "$install_log"
            echo "installing libdpdk failed: DPDK's comparators are not built or tested"
            return 1
        fi
        rm -f "$install_log"
    fi
    if have_libdpdk; then
        echo "libdpdk $(pkg-config --modversion libdpdk) is installed: DPDK's comparators are built and tested"
    else
        echo "libdpdk is not installed (scripts/install-dpdk.sh needs root and apt): DPDK's comparators are not built or tested"
    fi
}
# The kernel's BPF LPM trie (bench comparator `bpf-lpm-trie`, `ipfib bench-ops`): clang compiles
# its BPF programs and the shim links libbpf (scripts/install-bpf.sh), installed first when
# this runs as root with apt; where they cannot be had it is not built, and this step says so.
# Its tests skip, saying why, where the kernel refuses BPF.
install_bpf() {
    if ! have_bpf_toolchain && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        local install_log
        install_log=$(mktemp)
        if ! bash scripts/install-bpf.sh >"$install_log" 2>&1; then
            tail -n 5 "$install_log"
            rm -f "$install_log"
            echo "installing clang and libbpf failed: the BPF trie is not built or tested"
            return 1
        fi
        rm -f "$install_log"
    fi
    if have_bpf_toolchain; then
        echo "clang $(clang -dumpversion) and libbpf $(pkg-config --modversion libbpf) are installed: the BPF trie is built and tested"
    else
        echo "clang or libbpf is missing (scripts/install-bpf.sh needs root and apt): the BPF trie is not built or tested"
    fi
}
run_step "format" cargo fmt --all -- --check
run_step "dpdk" install_dpdk
run_step "bpf" install_bpf
read -r -a features <<<"$(bash scripts/features.sh)"

# `--tests` and then `--doc` leave out the examples, benchmark programs that clippy
# (`--all-targets`, above) checks: building them at opt-level 2 was 179 of the cold test
# build's 1,450 CPU seconds, 91 of them `planb_lines` (Intel Xeon Ice Lake, 2 vCPUs).
# scripts/c-tests.sh selects the same targets, so that it reuses this build.
run_tests() {
    local status=0
    cargo test --workspace --no-fail-fast --tests "${features[@]}" 2>&1 | tee "$log" || status=1
    cargo test --workspace --no-fail-fast --doc "${features[@]}" 2>&1 | tee -a "$log" || status=1
    return "$status"
}

run_step "clippy" cargo clippy --workspace --all-targets "${features[@]}" -- -D warnings
# The API documentation: no broken or private intra-doc links.
run_step "docs" env RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet "${features[@]}"
run_step "tests" run_tests
# `ipfib follow` against two real GoBGP speakers over BMP (the binary the tests just built;
# skips, saying so, without gobgpd or ../shared/data). About 35 s.
run_step "bmp-gobgp" bash scripts/bmp-gobgp-tests.sh
# The C library: example and tests compiled with the system cc against the checked-in header
# (its freshness is the ipfib-capi `header_is_fresh` test above).
run_step "c-tests" bash scripts/c-tests.sh
# The Python package: a virtual environment with the pinned requirements, the extension built
# by maturin, pytest (its counts are added to the summary below).
pylog=$(mktemp)
trap 'rm -f "$log" "$pylog"' EXIT
run_py_tests() {
    bash scripts/py-tests.sh 2>&1 | tee "$pylog"
}
run_step "py-tests" run_py_tests
# The core crate compiled for aarch64, where none of the x86 SIMD code exists (skips, saying
# so, where nightly + rust-src cannot be had).
run_step "portable" bash scripts/portable.sh
# The scalar path's unit tests under Miri (skips, saying so, where nightly + Miri cannot be had).
run_step "miri" bash scripts/miri.sh
# Every fuzz target briefly (FUZZ_SECONDS each, 20 by default), so none can rot.
run_step "fuzz" bash scripts/fuzz.sh

# Add up cargo's "test result: ok. N passed; M failed; K ignored; ..." lines.
read -r passed failed ignored suites < <(
    awk '/^test result:/ {
            for (i = 1; i <= NF; i++) {
                if ($(i+1) ~ /^passed/)  p += $i
                if ($(i+1) ~ /^failed/)  f += $i
                if ($(i+1) ~ /^ignored/) g += $i
            }
            s++
         }
         END { printf "%d %d %d %d\n", p, f, g, s }' "$log"
)
# And pytest's closing lines ("N passed, M failed, K skipped in ..."): one per package.
read -r py_passed py_failed py_skipped < <(
    awk '/ (passed|failed|error|errors|skipped)[ ,]/ && / in [0-9.]+s/ {
            n = split($0, w, /[ ,=]+/)
            for (i = 2; i <= n; i++) {
                if (w[i] == "passed")  p += w[i-1]
                if (w[i] == "failed" || w[i] == "error" || w[i] == "errors") f += w[i-1]
                if (w[i] == "skipped") s += w[i-1]
            }
         }
         END { printf "%d %d %d\n", p, f, s }' "$pylog"
)
passed=$((passed + py_passed))
failed=$((failed + py_failed))
ignored=$((ignored + py_skipped))
data="${IPFIB_SHARED_DATA:-../shared/data}"
if [ -d "$data" ]; then
    data_note="real tables from $data"
else
    data_note="$data not found: real-table tests skipped"
fi

echo
echo "==> summary"
for line in "${summary[@]}"; do
    echo "  $line"
done
echo "  $suites test suites + pytest, $ignored ignored or skipped; $data_note"
echo "tests: $passed passed, $failed failed"

if [ "$failed_steps" -ne 0 ]; then
    echo "FAILED: $failed_steps step(s)"
    exit 1
fi
echo "OK"
