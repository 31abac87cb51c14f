#!/usr/bin/env bash
# Build mblint with warnings as errors and run the whole test suite (ctest).
# Tests that need ../shared (the reference corpus) skip when it is absent.
#
#   tools/test.sh                       Release build in build/
#   tools/test.sh --sanitize            the same suite built with AddressSanitizer and
#                                       UndefinedBehaviorSanitizer in build-asan/; with clang
#                                       (Debian's, installed by tools/setup.sh) the same build
#                                       also makes the libFuzzer harnesses tools/fuzz.sh runs
#   tools/test.sh --sanitize --configure-only   configure build-asan/ and stop (tools/fuzz.sh)
set -euo pipefail

cd "$(dirname "$0")/.."

dir=build
flags=(-DCMAKE_BUILD_TYPE=Release -DMBLINT_WERROR=ON)
if [[ "${1:-}" == --sanitize ]]; then
  dir=build-asan
  # -O1 keeps the instrumented suite quick to build and run; line tables are
  # all a sanitizer report needs for its stack traces.
  flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only"
         -DMBLINT_WERROR=ON -DMBLINT_SANITIZE=ON)
  if command -v clang++ >/dev/null 2>&1; then
    # One instrumented build serves both the suite and the fuzz harnesses
    # (the engine is compiled with -fsanitize=fuzzer-no-link as well).
    flags+=(-DCMAKE_CXX_COMPILER=clang++ -DMBLINT_FUZZ=ON)
  fi
  # Any leak, overflow or undefined behaviour fails the test that ran into it.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fi

cmake -S . -B "$dir" "${flags[@]}"
[[ "${2:-}" == --configure-only ]] && exit 0
cmake --build "$dir" -j "$(nproc)"
ctest --test-dir "$dir" --output-on-failure -j "$(nproc)"
