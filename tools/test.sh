#!/usr/bin/env bash
# Build mblint with warnings as errors and run the whole test suite (ctest).
# Tests that need ../shared (the reference corpus) skip when it is absent,
# unless MBLINT_REQUIRE_SHARED=1 (.ci/run sets it): then they fail.
#
#   tools/test.sh                       Release build in build/
#   tools/test.sh --sanitize            the same suite built with AddressSanitizer and
#                                       UndefinedBehaviorSanitizer in build-asan/; with clang
#                                       (Debian's, installed by tools/setup.sh) the same build
#                                       also makes the libFuzzer harnesses tools/fuzz.sh runs
#   tools/test.sh --sanitize --configure-only   configure build-asan/ and stop (tools/fuzz.sh)
#   tools/test.sh --threads             ThreadSanitizer build in build-tsan/: the tests of
#                                       parsing ahead on threads ([threads]) and a check of
#                                       the whole ../shared corpus on 4 threads
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

if [[ "${1:-}" == --threads ]]; then
  dir=build-tsan
  # -g1: line tables for the reports' stack traces (GCC has no -gline-tables-only).
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
    -DMBLINT_WERROR=ON -DCMAKE_CXX_FLAGS=-fsanitize=thread -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread
  cmake --build "$dir" -j "$(nproc)" --target mblint mblint_thread_tests
  export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
  "$dir/tests/mblint_thread_tests" "[threads]"
  shared=${MBLINT_SHARED_DIR:-../shared}
  if [[ -d "$shared/corpus" ]]; then
    find "$shared/corpus" \( -name '*.yaml' -o -name '*.yml' \) -print0 | sort -z |
      xargs -0 "$dir/mblint" check -j 4 --format json --exit-zero >/dev/null
    echo "mblint test: the corpus checked on 4 threads under ThreadSanitizer: no race reported"
  elif [[ "${MBLINT_REQUIRE_SHARED:-}" == 1 ]]; then
    echo "mblint test: $shared/corpus is absent and MBLINT_REQUIRE_SHARED=1: the corpus run under ThreadSanitizer cannot run" >&2
    exit 1
  else
    echo "mblint test: $shared/corpus is absent: the corpus run under ThreadSanitizer is skipped"
  fi
  exit 0
fi

cmake -S . -B "$dir" "${flags[@]}"
[[ "${2:-}" == --configure-only ]] && exit 0
cmake --build "$dir" -j "$(nproc)"
ctest --test-dir "$dir" --output-on-failure -j "$(nproc)"
