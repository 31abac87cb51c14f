#!/usr/bin/env bash
# Build mblint with warnings as errors and run the whole test suite (ctest).
# Tests that need ../shared (the reference corpus) skip when it is absent.
#
#   tools/test.sh             Release build in build/
#   tools/test.sh --sanitize  the same suite built with AddressSanitizer and
#                             UndefinedBehaviorSanitizer in build-asan/
set -euo pipefail

cd "$(dirname "$0")/.."

dir=build
flags=(-DCMAKE_BUILD_TYPE=Release -DMBLINT_WERROR=ON)
if [[ "${1:-}" == --sanitize ]]; then
  dir=build-asan
  flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DMBLINT_WERROR=ON -DMBLINT_SANITIZE=ON)
  # Any leak, overflow or undefined behaviour fails the test that ran into it.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fi

cmake -S . -B "$dir" "${flags[@]}"
cmake --build "$dir" -j "$(nproc)"
ctest --test-dir "$dir" --output-on-failure -j "$(nproc)"
