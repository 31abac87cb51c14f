#!/usr/bin/env bash
# Build the release mblint and the yaml-cpp parse-only floor, then run the
# benchmark (tools/bench.py; options pass through, e.g. --quick).
# yamllint is only needed here: apt-get install yamllint.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)" --target mblint yaml_parse_floor >/dev/null
exec python3 tools/bench.py "$@"
