#!/usr/bin/env bash
# Run a libFuzzer harness (fuzz/fuzz_<HARNESS>.cpp) for SECONDS seconds.
#
#   tools/fuzz.sh HARNESS SECONDS   e.g. tools/fuzz.sh shell 600
#   tools/fuzz.sh all SECONDS       every harness, one after the other (CI: 20)
#   tools/fuzz.sh list              the harnesses
#
# Builds the harness in build-asan/ (the instrumented build of
# `tools/test.sh --sanitize`: clang, ASan + UBSan + libFuzzer) and the seed
# corpora (tools/fuzz_seeds.py) when missing. Inputs that find new coverage go
# to build-asan/fuzz-corpus/HARNESS; a crash, hang (>10 s per input) or OOM
# (>2 GiB) stops the run, exits non-zero and leaves the input in
# build-asan/fuzz-artifacts/. Reproduce one with: build-asan/fuzz/fuzz_HARNESS FILE
# MBLINT_FUZZ_SEED=N fixes libFuzzer's random seed (0, the default: a new one each run).
set -euo pipefail
cd "$(dirname "$0")/.."

harnesses() { sed -n 's/^\([a-z_]*\):.*/\1/p' fuzz/dicts.txt; }

if [[ "${1:-}" == list ]]; then harnesses; exit 0; fi
if [[ $# -ne 2 || ! "$2" =~ ^[0-9]+$ ]]; then
  echo "usage: tools/fuzz.sh HARNESS|all SECONDS   (harnesses: $(harnesses | tr '\n' ' '))" >&2
  exit 2
fi
name=$1 seconds=$2

if [[ "$name" == all ]]; then
  status=0
  for h in $(harnesses); do "$0" "$h" "$seconds" || status=1; done
  exit $status
fi
if ! harnesses | grep -qx "$name"; then
  echo "tools/fuzz.sh: no harness '$name' in fuzz/dicts.txt" >&2
  exit 2
fi

build=build-asan
if ! grep -qs "MBLINT_FUZZ:BOOL=ON" "$build/CMakeCache.txt"; then
  tools/test.sh --sanitize --configure-only >/dev/null
  if ! grep -qs "MBLINT_FUZZ:BOOL=ON" "$build/CMakeCache.txt"; then
    echo "tools/fuzz.sh: the harnesses need clang (apt-get install clang libclang-rt-14-dev)" >&2
    exit 2
  fi
fi
cmake --build "$build" -j "$(nproc)" --target "fuzz_$name" >/dev/null
[[ -d $build/fuzz-seeds ]] || tools/fuzz_seeds.py "$build/fuzz-seeds" >/dev/null

dict=$build/fuzz-$name.dict
for d in $(sed -n "s/^$name: *//p" fuzz/dicts.txt); do cat "fuzz/$d"; done > "$dict"
mkdir -p "$build/fuzz-corpus/$name" "$build/fuzz-artifacts"

echo "fuzz_$name: ${seconds}s"
log=$build/fuzz-$name.log
set +e
"$build/fuzz/fuzz_$name" -seed="${MBLINT_FUZZ_SEED:-0}" -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
  -dict="$dict" -artifact_prefix="$build/fuzz-artifacts/$name-" -print_final_stats=1 \
  "$build/fuzz-corpus/$name" "$build/fuzz-seeds/$name" >"$log" 2>&1
status=$?
set -e
grep -E '^#[0-9]+.*(DONE|INITED)|stat::number_of_executed_units|stat::peak_rss_mb' "$log" | sed 's/^/  /'
if [[ $status -ne 0 ]]; then
  echo "fuzz_$name FAILED (exit $status); log: $log" >&2
  grep -E 'ERROR|SUMMARY|Test unit written' "$log" >&2 || tail -n 30 "$log" >&2
fi
exit $status
