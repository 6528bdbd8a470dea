#!/usr/bin/env bash
# The Python package's tests (crates/ipfib-py): makes a virtual environment, installs the
# pinned test requirements from PyPI, builds the extension into it with maturin, runs pytest.
#
# The environment lives in $CARGO_TARGET_DIR/py-venv (target/ is ignored by git) and is
# reused while crates/ipfib-py/requirements-test.txt is unchanged; delete it to start over.
# The extension is built in the `py-test` profile (Cargo.toml: opt-level 2, no LTO, 16 codegen
# units, no debug info): a cold build took 154 s against 211 s in the release profile (AMD EPYC
# Zen 3, 2 vCPUs, BENCHMARKS.md, "The test command's time"); the benchmarks keep the release
# build. (`maturin develop --profile test` would build a test harness, not a loadable module.)
# Tests that need ../shared/data skip, saying so, when
# it is absent. PYTHON picks the interpreter (default python3).
#
# Then the same for the Polars plugin, crates/ipfib-polars (see below).
#
# Usage: scripts/py-tests.sh [pytest arguments] (given to both pytest runs)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
target="${CARGO_TARGET_DIR:-$root/target}"
venv="$target/py-venv"
req="$root/crates/ipfib-py/requirements-test.txt"
python="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
    echo "py-tests: creating $venv with $("$python" --version)"
    "$python" -m venv "$venv"
fi
# Installs a requirements file into the environment, unless the stamp file `$2` records that
# exact file already.
install_requirements() {
    local req=$1 stamp=$2 want
    want=$(sha256sum "$req" | cut -d' ' -f1)
    if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
        echo "py-tests: installing $req"
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
        echo "$want" > "$stamp"
    fi
}

# Builds the extension of the maturin package in directory `$1` into the environment.
build() {
    echo "py-tests: building $1 (maturin develop --profile py-test)"
    (
        cd "$1"
        VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" CARGO_TARGET_DIR="$target" \
            "$venv/bin/maturin" develop --profile py-test --quiet
    )
}

install_requirements "$req" "$venv/.requirements.sha256"
build crates/ipfib-py

# No cache directory in the source tree; hypothesis keeps its example database under target/
# (tests/conftest.py reads IPFIB_HYPOTHESIS_DIR).
status=0
(cd crates/ipfib-py && IPFIB_HYPOTHESIS_DIR="$target/py-hypothesis" \
    "$venv/bin/python" -m pytest tests -p no:cacheprovider -q -rs "$@") || status=$?

# The Polars expression plugin (crates/ipfib-polars: its own cargo workspace, since it needs
# pyo3 0.29 through pyo3-polars), built into the same environment in its own `py-test` profile
# and tested against the ipfib package above. Its pinned Polars is installed on top. Its cold
# build took 548 s on one core (AMD EPYC Zen 4, session 30), almost all of it polars-core and
# polars-arrow; with pyo3-polars' `derive` feature (polars-plan, -io, -parquet and -ops too) it
# took 852 s, which is why the plugin writes its C entry points itself (src/ffi.rs). Polars'
# crates build without optimization in `py-test` (crates/ipfib-polars/Cargo.toml): cold, 347 s
# -> 161 s on two cores (Intel Xeon Ice Lake), the tests 7.6 s -> 5.9 s.
install_requirements "$root/crates/ipfib-polars/requirements-test.txt" \
    "$venv/.requirements-polars.sha256"
build crates/ipfib-polars
(cd crates/ipfib-polars && "$venv/bin/python" -m pytest tests -p no:cacheprovider -q -rs "$@") ||
    status=$?
exit "$status"
