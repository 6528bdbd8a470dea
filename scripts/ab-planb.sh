#!/usr/bin/env bash
# Paired in-process A/B of PlanB's lookups: OLD commit against this tree, same table and trace,
# alternating rounds, batched (as `ipfib bench` calls it) and single. OLD must have the engine
# registry (a172211 or later). Usage:
#   scripts/ab-planb.sh OLD_COMMIT FIB [ROUNDS] [TRACE_LEN] [matched|uniform|space]
# Pin it for stable figures: taskset -c 1 scripts/ab-planb.sh ...
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
old_commit=$1
shift
work=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$work/old" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git -C "$root" worktree add --detach "$work/old" "$old_commit" >/dev/null
# Two packages named `ipfib` cannot share a lockfile: the old one becomes `ipfib-old`.
sed -i 's/^name = "ipfib"$/name = "ipfib-old"/' "$work/old/crates/ipfib/Cargo.toml"
cp -r "$root/scripts/ab-planb" "$work/harness"
sed -e "s|@OLD@|$work/old|g" -e "s|@NEW@|$root|g" "$work/harness/Cargo.toml.in" > "$work/harness/Cargo.toml"
CARGO_TARGET_DIR="${AB_TARGET_DIR:-$root/target/ab-planb}" \
    cargo run --quiet --release --manifest-path "$work/harness/Cargo.toml" -- "$@"
