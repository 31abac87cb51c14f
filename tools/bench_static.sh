#!/usr/bin/env bash
# Start-up and whole-corpus time of the static release binary next to the
# shared one (docs/shipping.md). Runs alternate between the two binaries so
# that load from other processes falls on both alike; prints the median and
# the spread of each.
#
#   tools/bench_static.sh [BUILD_DIR]     default build/ (Release: mblint and mblint-static)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shared_dir=${MBLINT_SHARED_DIR:-../shared}
startup_runs=${STARTUP_RUNS:-200}
corpus_runs=${CORPUS_RUNS:-5}
mapfile -d '' corpus < <(find "$shared_dir/corpus" \( -name '*.yaml' -o -name '*.yml' \) -print0 | sort -z)

# seconds for "$@", run $2 times; CPU (user+sys) as well as wall.
measure() {  # measure RUNS COMMAND... -> "wall cpu" per run, one line
  local runs=$1
  shift
  local start end
  TIMEFORMAT='%R %U %S'
  { time (for ((i = 0; i < runs; i++)); do "$@" >/dev/null 2>&1 || true; done); } 2>&1 |
    awk -v n="$runs" '{printf "%.6f %.6f\n", $1 / n, ($2 + $3) / n}'
}
summary() {  # summary NAME FILE
  sort -n -k1 "$2" | awk -v name="$1" '{w[NR]=$1; c[NR]=$2} END {
    printf "%-34s wall median %8.2f ms (min %.2f, max %.2f)  cpu median %8.2f ms\n",
           name, w[int((NR+1)/2)]*1000, w[1]*1000, w[NR]*1000, c[int((NR+1)/2)]*1000}'
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
demo=(check fixtures/examples/launch/llama3_70b.sbatch --recipe llama3_70b_pretrain_config)
for round in 1 2 3 4 5; do
  for kind in shared static; do
    binary="$build/mblint"; [[ $kind == static ]] && binary="$build/mblint-static"
    measure "$startup_runs" "$binary" --version >>"$tmp/version-$kind"
    measure $((startup_runs / 4)) "$binary" "${demo[@]}" >>"$tmp/demo-$kind"
  done
done
for round in $(seq "$corpus_runs"); do
  for kind in shared static; do
    binary="$build/mblint"; [[ $kind == static ]] && binary="$build/mblint-static"
    measure 1 "$binary" check -j 1 --format json --exit-zero "${corpus[@]}" >>"$tmp/corpus-$kind"
  done
done
echo "${#corpus[@]} corpus files; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
for what in version demo corpus; do
  for kind in shared static; do summary "$what ($kind)" "$tmp/$what-$kind"; done
done
