#!/usr/bin/env bash
# Build mblint with warnings as errors and run the whole test suite (ctest).
# Tests that need ../shared (the reference corpus) skip when it is absent.
set -euo pipefail

cd "$(dirname "$0")/.."

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DMBLINT_WERROR=ON
cmake --build build -j "$(nproc)"
ctest --test-dir build --output-on-failure -j "$(nproc)"
