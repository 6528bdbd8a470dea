#!/usr/bin/env bash
# Builds the cargo-fuzz targets in fuzz/ and runs each for FUZZ_SECONDS seconds (default: 20,
# or less when there are more targets than fit in 60 s of wall time at FUZZ_JOBS at a time: the
# whole run keeps the 60 s it had with six targets).
# Fails if a target does not build or if any run finds a crash, a panic, a leak, a timeout or
# an out-of-memory input (libFuzzer then leaves the input in fuzz/artifacts/<target>/ and the
# log in fuzz/work/<target>.log).
#
# Usage: scripts/fuzz.sh [TARGET...]     (all targets when none is given)
#   FUZZ_SECONDS=600 scripts/fuzz.sh mrt_reader
#   FUZZ_JOBS=1 scripts/fuzz.sh          (one target at a time; default: one per CPU, at most 4)
#
# The project uses the stable toolchain; cargo-fuzz needs nightly-only flags
# (-Zsanitizer=address), which RUSTC_BOOTSTRAP=1 unlocks on stable. Only the seed corpus in
# fuzz/corpus/<target>/ is versioned; what a run adds goes to fuzz/work/<target>/ (ignored).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
# Each libFuzzer run is one process on one core: as many at a time as there are cores.
cpus=$(nproc 2>/dev/null || echo 1)
jobs="${FUZZ_JOBS:-$((cpus < 4 ? cpus : 4))}"
export RUSTC_BOOTSTRAP=1
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# The fuzz crate is a workspace of its own: keep its sanitizer build apart from the main one.
export CARGO_TARGET_DIR="$root/fuzz/target"

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "==> installing cargo-fuzz"
    cargo install cargo-fuzz --locked
fi

# libFuzzer is C++ built by libfuzzer-sys.
if ! command -v c++ >/dev/null 2>&1; then
    echo "fuzz.sh: a C++ compiler (c++) is needed to build libFuzzer" >&2
    exit 1
fi

cd fuzz
if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo fuzz list)
fi
rounds=$(( (${#targets[@]} + jobs - 1) / jobs ))
budget=$(( 60 / (rounds > 0 ? rounds : 1) ))
seconds="${FUZZ_SECONDS:-$(( budget < 20 ? budget : 20 ))}"

echo "==> building ${#targets[@]} fuzz targets (address sanitizer, debug assertions)"
for t in "${targets[@]}"; do
    cargo fuzz build "$t"
done

mkdir -p work
run_one() {
    local t=$1
    mkdir -p "work/$t" "corpus/$t" "artifacts/$t"
    # The first corpus directory is where new inputs go; the seeds are only read.
    # -rss_limit_mb: the readers must stay far below it on any input.
    if cargo fuzz run "$t" "work/$t" "corpus/$t" -- \
        -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=30 -print_final_stats=1 \
        >"work/$t.log" 2>&1; then
        echo "PASS  $t: $(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "work/$t.log" | grep -Eo '[0-9]+$' || echo '?') runs in ${seconds} s"
        return 0
    fi
    echo "FAIL  $t (log: fuzz/work/$t.log)"
    grep -E 'panicked|ERROR: |SUMMARY|Test unit written|^thread' "work/$t.log" | head -20 || true
    return 1
}

echo "==> running each target for ${seconds} s (${jobs} at a time)"
failed=0
pids=()
names=()
for t in "${targets[@]}"; do
    run_one "$t" &
    pids+=($!)
    names+=("$t")
    if [ "${#pids[@]}" -ge "$jobs" ]; then
        wait "${pids[0]}" || failed=$((failed + 1))
        pids=("${pids[@]:1}")
        names=("${names[@]:1}")
    fi
done
for p in "${pids[@]}"; do
    wait "$p" || failed=$((failed + 1))
done

if [ "$failed" -gt 0 ]; then
    echo "fuzz.sh: $failed target(s) failed"
    exit 1
fi
echo "fuzz.sh: all ${#targets[@]} targets ran ${seconds} s without a failure"
