#!/usr/bin/env bash
# DPDK's own judgment: runs DPDK's test program `dpdk-test-fib` (Debian's dpdk-dev, installed by
# `scripts/install-dpdk.sh --tools`) on the real tables of ../shared/data and on the same
# matched and uniform traces `ipfib bench` uses, and `ipfib bench` (planb, dpdk-fib, dpdk-lpm)
# beside it on the same table and trace file, for BENCHMARKS.md.
#
# Usage: scripts/dpdk-test-fib.sh [TABLE.txt.gz ...]
#   default tables: every ../shared/data/ipv4/*.txt.gz and ipv6/ipv6-ris-dfz10-20241220.txt.gz
#
# What it does, per table and trace kind:
#   * the table without its comment lines as dpdk-test-fib's route file (`-f`: `prefix/len nh`,
#     the same text format, in the same sorted order ipfib adds routes in);
#   * `ipfib gen trace --kind matched|uniform --count TRACE_LEN --seed 1` (the addresses
#     `ipfib bench --trace matched|uniform` draws by default) as the lookup file (`-t`: one
#     address per line). IPv4: dpdk-test-fib (22.11 and later) reads `-t` addresses with
#     inet_pton into network byte order but adds routes and looks up in host order, so each
#     address would be looked up byte-swapped (1.2.3.4 as 4.3.2.1). The file it gets has every
#     address's bytes reversed, so that it looks up the trace's addresses; with RAW_V4=1 it is
#     also run on the file as written (the "as written" column).
#   * dpdk-test-fib with rte_fib (DIR-24-8 for IPv4, TRIE for IPv6) at the entry size and tbl8
#     group count `ipfib bench` gives rte_fib: the narrowest entry (1/2/4/8 bytes, IPv6 2/4/8)
#     holding every next hop + 1 and the tbl8 group count (crates/ipfib-dpdk/src/sizing.rs).
#     tbl8 groups: IPv4 one per /24 block holding longer routes (exact); IPv6 the upper bound
#     sum of (ceil8(len) - 24) / 8 over routes longer than /24 (ipfib's fallback; a larger pool
#     changes neither the groups used nor their order). REPEAT runs; then LPM_RUNS runs with
#     `-c` (rte_lpm / rte_lpm6 built too, timed on the same addresses after rte_fib, and checked
#     to answer as rte_fib does), unless the table has a default route, which rte_lpm refuses.
#     The rte_fib figure is taken from the runs without `-c` only.
#   * `taskset -c CPU ipfib bench --fib TABLE --trace FILE --engines planb,dpdk-fib` (IPv6:
#     dpdk-fib6; with BENCH_LPM=1 also dpdk-lpm / dpdk-lpm6) REPEAT times, batch-path figures
#     taken from its JSON.
#   All pinned to CPU (default 1; the EAL's lcore is the same CPU).
#
# dpdk-test-fib prints TSC cycles per lookup ("AVG FIB lookup"); M lookups/s = TSC MHz /
# cycles, with the TSC frequency from the kernel log ("tsc: Detected/Refined ... MHz"), else
# lscpu's BogoMIPS / 2, or TSC_MHZ if set.
#
# Environment:
#   IPFIB             ipfib binary with the dpdk feature (default target/release/ipfib; built
#                     with `cargo build --release -p ipfib-cli --features dpdk` when missing or
#                     built without it)
#   IPFIB_SHARED_DATA the data folder (default ../shared/data beside the checkout)
#   OUT               work and result folder (default target/dpdk-test-fib)
#   KINDS             trace kinds (default "matched uniform")
#   TRACE_LEN         addresses per trace, a multiple of 64 (default 1000000, ipfib bench's)
#   REPEAT            runs of each measurement (default 3)
#   LPM_RUNS          runs with `-c` per table and trace (default 1: rte_lpm's adds and deletes
#                     are quadratic in dpdk-test-fib, about 5 minutes a run for 900 K routes;
#                     0 skips them)
#   CPU               CPU to pin to (default 1)
#   PAGES             small: 4 KiB pages, `--no-huge`, and IPFIB_DPDK_PAGES=small for ipfib bench
#                     (default; needs nothing reserved); huge: `--in-memory` on the free 2 MiB
#                     pages (scripts/setup-hugepages.sh), ipfib bench on huge pages too
#   RAW_V4            1: also run IPv4 on the lookup file as written (default 0)
#   BENCH             0: skip ipfib bench (default 1)
#   BENCH_LPM         1: ipfib bench also times dpdk-lpm / dpdk-lpm6 (default 0: its rte_lpm
#                     build takes minutes on the large IPv4 tables)
#   TSC_MHZ           the TSC frequency, to override the detection
#   QUIET_WAIT        seconds to wait before each run for a quiet machine (default 120): the
#                     run starts once a 1-second sample of /proc/stat shows all CPUs together
#                     below QUIET_BUSY % busy (default 20), or when the wait is over; the busy
#                     share seen last before each run goes to its log and, the largest per
#                     table and trace, to the results (a shared machine)
#
# Prints a Markdown table and writes it to $OUT/results.md (raw figures: $OUT/results.tsv,
# logs: $OUT/logs/). Exits 0 with a SKIP line when dpdk-test-fib or the data is missing.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
data="${IPFIB_SHARED_DATA:-$root/../shared/data}"
out="${OUT:-$root/target/dpdk-test-fib}"
kinds="${KINDS:-matched uniform}"
trace_len="${TRACE_LEN:-1000000}"
repeat="${REPEAT:-3}"
lpm_runs="${LPM_RUNS:-1}"
cpu="${CPU:-1}"
pages="${PAGES:-small}"
raw_v4="${RAW_V4:-0}"
bench="${BENCH:-1}"
bench_lpm="${BENCH_LPM:-0}"
ipfib="${IPFIB:-$root/target/release/ipfib}"
quiet_wait="${QUIET_WAIT:-120}"
quiet_busy="${QUIET_BUSY:-20}"

if ! command -v dpdk-test-fib >/dev/null 2>&1; then
    echo "SKIP dpdk-test-fib.sh: dpdk-test-fib is not installed (Debian's dpdk-dev:" \
        "scripts/install-dpdk.sh --tools, as root)"
    exit 0
fi
if [ ! -d "$data/ipv4" ] && [ ! -d "$data/ipv6" ]; then
    echo "SKIP dpdk-test-fib.sh: no real tables at $data (../shared/data beside the checkout," \
        "or set IPFIB_SHARED_DATA)"
    exit 0
fi
if [ $((trace_len % 64)) -ne 0 ]; then
    # dpdk-test-fib looks up whole bursts of 64: a last partial burst would read past its array.
    echo "dpdk-test-fib.sh: TRACE_LEN=$trace_len is not a multiple of 64" >&2
    exit 2
fi
case "$pages" in
small) eal_pages=(--no-huge) ;;
huge) eal_pages=(--in-memory) ;;
*)
    echo "dpdk-test-fib.sh: PAGES must be small or huge, not '$pages'" >&2
    exit 2
    ;;
esac

if [ $# -gt 0 ]; then
    tables=("$@")
else
    shopt -s nullglob
    tables=("$data"/ipv4/*.txt.gz)
    shopt -u nullglob
    [ -f "$data/ipv6/ipv6-ris-dfz10-20241220.txt.gz" ] &&
        tables+=("$data/ipv6/ipv6-ris-dfz10-20241220.txt.gz")
fi
if [ ${#tables[@]} -eq 0 ]; then
    echo "SKIP dpdk-test-fib.sh: no tables found under $data"
    exit 0
fi

# ipfib with DPDK's comparators (its `bench --help` lists dpdk-fib only then).
has_dpdk() { [ -x "$ipfib" ] && "$ipfib" bench --help 2>/dev/null | grep -q 'dpdk-fib'; }
if ! has_dpdk; then
    if [ -n "${IPFIB:-}" ]; then
        echo "dpdk-test-fib.sh: $ipfib is missing or was built without --features dpdk" >&2
        exit 1
    fi
    echo "building ipfib with DPDK's comparators: cargo build --release -p ipfib-cli --features dpdk"
    cargo build --release -p ipfib-cli --features dpdk
    has_dpdk
fi

# TSC frequency (dpdk-test-fib counts TSC cycles).
tsc_mhz="${TSC_MHZ:-}"
tsc_src="TSC_MHZ"
if [ -z "$tsc_mhz" ]; then
    tsc_mhz=$(dmesg 2>/dev/null | sed -n 's/.*tsc: Refined TSC clocksource calibration: \([0-9.]*\) MHz.*/\1/p' | tail -1)
    tsc_src="kernel log (Refined TSC clocksource calibration)"
fi
if [ -z "$tsc_mhz" ]; then
    tsc_mhz=$(dmesg 2>/dev/null | sed -n 's/.*tsc: Detected \([0-9.]*\) MHz processor.*/\1/p' | tail -1)
    tsc_src="kernel log (tsc: Detected ... MHz processor)"
fi
if [ -z "$tsc_mhz" ]; then
    tsc_mhz=$(lscpu | awk -F: '/^BogoMIPS/ {gsub(/ /, "", $2); printf "%.3f", $2 / 2}')
    tsc_src="lscpu BogoMIPS / 2"
fi
cpu_model=$(lscpu | sed -n 's/^Model name: *//p' | head -1)

mkdir -p "$out/logs"
tsv="$out/results.tsv"
md="$out/results.md"
printf 'table\tfamily\troutes\tkind\tentry_bytes\ttbl8\tmeasure\tunit\tvalues\n' >"$tsv"

# Busy share of all CPUs over one second, in percent (from /proc/stat).
busy_pct() {
    local a b
    a=$(awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6}' /proc/stat)
    sleep 1
    b=$(awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6}' /proc/stat)
    echo "$a $b" | awk '{busy = $3 - $1; idle = $4 - $2; printf "%.0f", 100 * busy / (busy + idle + 1e-9)}'
}
# Waits (up to QUIET_WAIT s) for a quiet machine; sets $busy to the last sample.
wait_quiet() {
    local waited=0
    busy=$(busy_pct)
    while [ "$busy" -ge "$quiet_busy" ] && [ "$waited" -lt "$quiet_wait" ]; do
        sleep 4
        waited=$((waited + 5))
        busy=$(busy_pct)
    done
}
busy_all=""

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR] = $1} END {
    if (NR == 0) { print "-"; exit }
    if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
minmax() { tr ' ' '\n' | grep -v '^$' | sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {
    if (NR == 0) print "-"; else printf "%s-%s", lo, hi }'; }

echo "dpdk-test-fib.sh: $cpu_model, CPU $cpu, TSC $tsc_mhz MHz ($tsc_src), $pages pages," \
    "$repeat runs each, traces of $trace_len addresses; load: $(uptime | sed 's/.*load/load/')"

rows=()
for table in "${tables[@]}"; do
    name=$(basename "$table" .txt.gz)
    routes="$out/$name.routes"
    zcat -f "$table" | grep -v -e '^#' -e '^[[:space:]]*$' >"$routes"
    # Family, routes, largest next hop, /0 present, tbl8 groups, as ipfib's sizing computes them.
    read -r family nroutes max_nh has_default tbl8 < <(awk '
        { split($1, p, "/"); d = p[2] + 0; n++; if ($2 + 0 > mx) mx = $2 + 0; if (d == 0) def = 1
          if (index(p[1], ":")) { v6 = 1; if (d > 24) g6 += (int((d + 7) / 8) * 8 - 24) / 8 }
          else if (d > 24) { split(p[1], o, "."); blk[o[1] "." o[2] "." o[3]] = 1 } }
        END { g4 = length(blk); printf "%s %d %d %d %d\n", (v6 ? 6 : 4), n, mx, def + 0, (v6 ? g6 : g4) }' "$routes")
    need=$((max_nh + 1 > tbl8 ? max_nh + 1 : tbl8))
    if [ "$family" = 6 ]; then sizes="2 4 8"; else sizes="1 2 4 8"; fi
    entry=8
    for b in $sizes; do
        if [ "$b" -lt 8 ] && [ $(((1 << (8 * b - 1)) - 1)) -ge "$need" ]; then
            entry=$b
            break
        fi
    done
    # EAL memory: rte_fib's tables (2^24 entries + tbl8 groups) and RIB, rte_lpm's for -c, the
    # route and lookup arrays, and room.
    mem_mb=$(((((1 << 24) * entry + tbl8 * (256 * entry + 4)) + ((1 << 24) * 4 + tbl8 * 1040) +
        nroutes * 512 + trace_len * 16) / (1 << 20) + 512))
    if [ "$pages" = huge ]; then
        free_mb=$(awk '/^HugePages_Free:/ {f = $2} /^Hugepagesize:/ {s = $2} END {print int(f * s / 1024)}' /proc/meminfo)
        if [ "$free_mb" -lt "$mem_mb" ]; then
            echo "SKIP $name: PAGES=huge needs $mem_mb MiB of free huge pages, $free_mb free" \
                "(scripts/setup-hugepages.sh $((mem_mb + 512)))"
            continue
        fi
    fi
    eal=(-l "$cpu" "${eal_pages[@]}" -m "$mem_mb" --no-pci --no-shconf --no-telemetry
        --log-level=warning)
    app=(-e "$entry" -g "$tbl8")
    [ "$family" = 6 ] && app=(-6 "${app[@]}")
    if [ "$family" = 6 ]; then engines=planb,dpdk-fib6 lpm=dpdk-lpm6; else engines=planb,dpdk-fib lpm=dpdk-lpm; fi
    if [ "$bench_lpm" = 1 ]; then engines="$engines,$lpm"; fi
    echo "== $name: IPv$family, $nroutes routes, largest next hop $max_nh, entry ${entry} B," \
        "$tbl8 tbl8 groups, -m $mem_mb"

    for kind in $kinds; do
        trace="$out/$name.$kind.txt"
        "$ipfib" gen trace --fib "$table" --kind "$kind" --count "$trace_len" --seed 1 --out "$trace"
        lookups="$trace"
        if [ "$family" = 4 ]; then
            lookups="$out/$name.$kind.dpdk.txt"
            awk -F. '{print $4 "." $3 "." $2 "." $1}' "$trace" >"$lookups"
        fi
        variants=(fib)
        [ "$family" = 4 ] && [ "$raw_v4" = 1 ] && variants+=(raw)
        [ "$has_default" = 0 ] && [ "$lpm_runs" -gt 0 ] && variants+=(cmp)
        fib_cyc="" lpm_cyc="" raw_cyc="" row_busy=""
        for variant in "${variants[@]}"; do
            runs=$repeat
            [ "$variant" = cmp ] && runs=$lpm_runs
            for i in $(seq 1 "$runs"); do
                log="$out/logs/$name.$kind.$variant.$i.log"
                extra=()
                file="$lookups"
                [ "$variant" = cmp ] && extra=(-c)
                [ "$variant" = raw ] && file="$trace"
                cmd=(taskset -c "$cpu" dpdk-test-fib "${eal[@]}" -- -f "$routes" -t "$file"
                    "${app[@]}" "${extra[@]}")
                wait_quiet
                busy_all="$busy_all $busy" row_busy="$row_busy $busy"
                echo "${cmd[*]}" >"$log"
                echo "busy before the run: $busy %" >>"$log"
                if ! "${cmd[@]}" >>"$log" 2>&1 || grep -q -e '^FAIL' -e 'Can not' "$log"; then
                    echo "dpdk-test-fib failed, see $log:" >&2
                    tail -5 "$log" >&2
                    exit 1
                fi
                if [ "$variant" = cmp ] && ! grep -q 'FIB and LPM lookup returns same values' "$log"; then
                    echo "dpdk-test-fib: rte_fib and rte_lpm disagree, see $log" >&2
                    exit 1
                fi
                c=$(sed -n 's/^AVG FIB lookup \([0-9.]*\)$/\1/p' "$log")
                case "$variant" in
                fib) fib_cyc="$fib_cyc $c" ;;
                raw) raw_cyc="$raw_cyc $c" ;;
                cmp) lpm_cyc="$lpm_cyc $(sed -n 's/^AVG LPM lookup \([0-9.]*\)$/\1/p' "$log")" ;;
                esac
            done
        done
        pfx="$name\tIPv$family\t$nroutes\t$kind\t$entry\t$tbl8"
        printf "$pfx\tdpdk-test-fib rte_fib\tcycles\t%s\n" "$fib_cyc" >>"$tsv"
        [ -n "$lpm_cyc" ] && printf "$pfx\tdpdk-test-fib rte_lpm\tcycles\t%s\n" "$lpm_cyc" >>"$tsv"
        [ -n "$raw_cyc" ] && printf "$pfx\tdpdk-test-fib rte_fib as written\tcycles\t%s\n" "$raw_cyc" >>"$tsv"

        b_planb="" b_fib="" b_lpm="" b_bytes="" b_ratio=""
        if [ "$bench" = 1 ]; then
            for i in $(seq 1 "$repeat"); do
                json="$out/logs/$name.$kind.bench.$i.json"
                log="$out/logs/$name.$kind.bench.$i.log"
                if [ "$pages" = small ]; then export IPFIB_DPDK_PAGES=small; else unset IPFIB_DPDK_PAGES; fi
                cmd=(taskset -c "$cpu" "$ipfib" bench --fib "$table" --trace "$trace"
                    --engines "$engines" --json "$json")
                wait_quiet
                busy_all="$busy_all $busy" row_busy="$row_busy $busy"
                echo "${cmd[*]}" >"$log"
                echo "busy before the run: $busy %" >>"$log"
                "${cmd[@]}" >>"$log" 2>&1 || {
                    echo "ipfib bench failed, see $log" >&2
                    exit 1
                }
                read -r p f l nb < <(python3 - "$json" <<'PY'
import json, sys
rows = [r for r in json.load(open(sys.argv[1])) if r["path"] == "batch" and r["mode"] == "throughput"]
get = lambda pre: next(r for r in rows if r["engine"].startswith(pre))
fib = next(r for r in rows if r["engine"] in ("dpdk-fib", "dpdk-fib6"))
lpm = next((r["mlps"] for r in rows if r["engine"] in ("dpdk-lpm", "dpdk-lpm6")), "")
print(get("planb")["mlps"], fib["mlps"], lpm or "-", fib["native"]["next_hop_bytes"])
PY
                )
                b_planb="$b_planb $p" b_fib="$b_fib $f" b_bytes=$nb
                b_ratio="$b_ratio $(awk -v p="$p" -v f="$f" 'BEGIN {printf "%.3f", p / f}')"
                [ "$l" != - ] && b_lpm="$b_lpm $l"
            done
            if [ "$b_bytes" != "$entry" ]; then
                echo "WARNING: ipfib bench built rte_fib with ${b_bytes} B entries, dpdk-test-fib ran with $entry B" >&2
            fi
            printf "$pfx\tipfib bench planb batch\tMlookups/s\t%s\n" "$b_planb" >>"$tsv"
            printf "$pfx\tipfib bench dpdk-fib batch\tMlookups/s\t%s\n" "$b_fib" >>"$tsv"
            [ -n "$b_lpm" ] && printf "$pfx\tipfib bench dpdk-lpm batch\tMlookups/s\t%s\n" "$b_lpm" >>"$tsv"
        fi

        # One Markdown row: medians, spreads (min-max over the runs) in brackets.
        fc=$(echo "$fib_cyc" | median)
        fmps=$(awk -v t="$tsc_mhz" -v c="$fc" 'BEGIN {printf "%.1f", t / c}')
        lc="-" lmps="-"
        if [ -n "$lpm_cyc" ]; then
            lc="$(echo "$lpm_cyc" | median) [$(echo "$lpm_cyc" | minmax)]"
            lmps=$(awk -v t="$tsc_mhz" -v c="$(echo "$lpm_cyc" | median)" 'BEGIN {printf "%.1f", t / c}')
        fi
        rawcol=""
        [ "$raw_v4" = 1 ] && rawcol=" $( [ -n "$raw_cyc" ] && echo "$(echo "$raw_cyc" | median) [$(echo "$raw_cyc" | minmax)]" || echo -) |"
        bcols=" - | - | - | - | - |"
        if [ "$bench" = 1 ]; then
            r3() { awk '{printf "%.1f", $1}'; }
            mm() { tr ' ' '\n' | grep -v '^$' | sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%.0f-%.0f", lo, hi}'; }
            pm=$(echo "$b_planb" | median)
            blpm="-"
            [ -n "$b_lpm" ] && blpm="$(echo "$b_lpm" | median | r3) [$(echo "$b_lpm" | mm)]"
            bcols=" $(echo "$b_fib" | median | r3) [$(echo "$b_fib" | mm)] | $blpm | $(echo "$pm" | r3) [$(echo "$b_planb" | mm)] | $(awk -v a="$pm" -v b="$fmps" 'BEGIN {printf "%.2fx", a / b}') | $(echo "$b_ratio" | median | awk '{printf "%.2fx", $1}') [$(echo "$b_ratio" | minmax)] |"
        fi
        rows+=("| $name | $kind | ${entry} B | $fc [$(echo "$fib_cyc" | minmax)] | $fmps | $lc | $lmps |$rawcol$bcols $(echo "$row_busy" | tr ' ' '\n' | sort -g | tail -1) |")
        echo "${rows[-1]}"
    done
done

{
    echo "dpdk-test-fib (DPDK $(pkg-config --modversion libdpdk 2>/dev/null || echo '?')) and ipfib bench," \
        "$cpu_model, pinned to CPU $cpu, $pages pages, TSC $tsc_mhz MHz ($tsc_src)," \
        "traces of $trace_len addresses (seed 1); medians of $repeat runs, [min-max]" \
        "(dpdk-test-fib rte_lpm: $lpm_runs run(s) with -c);" \
        "busy share of all CPUs in the second before each run: median $(echo "$busy_all" | median) %," \
        "max $(echo "$busy_all" | tr ' ' '\n' | sort -g | tail -1) %;" \
        "load after the runs: $(uptime | sed 's/.*load/load/')"
    echo
    rawh="" rawa=""
    [ "$raw_v4" = 1 ] && rawh=" rte_fib cyc, file as written |" rawa="---:|"
    echo "| table | trace | rte_fib entry | dpdk-test-fib rte_fib cyc/lookup | = M/s | dpdk-test-fib rte_lpm cyc/lookup | = M/s |$rawh ipfib bench dpdk-fib M/s | ipfib bench dpdk-lpm M/s | ipfib bench planb M/s | planb / dpdk-test-fib rte_fib | planb / dpdk-fib in ipfib bench (per run) | busy % before (max) |"
    echo "|---|---|---:|---:|---:|---:|---:|$rawa---:|---:|---:|---:|---:|---:|"
    printf '%s\n' "${rows[@]}"
} >"$md"
echo
cat "$md"
