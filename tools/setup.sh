#!/usr/bin/env bash
# Install mblint's build dependencies (Debian 12 packages), build it, and run
# it on the demo job. Safe to run again: every step is idempotent.
#
#   tools/setup.sh            install, build (Release) and run the demo
#   tools/setup.sh --no-demo  install and build only
#   tools/setup.sh --deps-only  install only (CI: tools/test.sh builds its own way)
set -euo pipefail

cd "$(dirname "$0")/.."

PACKAGES=(build-essential cmake pkg-config libyaml-cpp-dev libre2-dev libfmt-dev libcxxopts-dev
          catch2 nlohmann-json3-dev python3
          # Test-only: the pre-commit hook test, the editor end-to-end tests of `mblint lsp`,
          # clang + the libFuzzer runtime for tools/fuzz.sh (CI smoke).
          git pre-commit neovim emacs-nox elpa-eglot clang libclang-rt-14-dev
          # Releases (tools/release.sh, tools/test_release.sh): the wheel with Debian's
          # python3-build, a venv to install it into, unzip to read the wheel and the .vsix.
          python3-build python3-setuptools python3-wheel python3-venv unzip)
# Node.js and npm (test-only: the SARIF schema validator, the VS Code
# extension package) from Debian, unless the machine already has an npm (a
# NodeSource nodejs bundles its own npm; Debian's npm package would conflict).
if ! command -v npm >/dev/null 2>&1; then PACKAGES+=(nodejs npm); fi

missing=()
for package in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "mblint setup: installing ${missing[*]}"
  if [[ $(id -u) -eq 0 ]]; then SUDO=(); else SUDO=(sudo); fi
  "${SUDO[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq "${missing[@]}"
fi

# Test-only npm packages (Ajv for tests/sarif_test.cpp), pinned by
# tools/node/package-lock.json, into tools/node/node_modules (gitignored).
if [[ ! -f tools/node/node_modules/.package-lock.json ||
      tools/node/package-lock.json -nt tools/node/node_modules/.package-lock.json ]]; then
  echo "mblint setup: installing the test tools in tools/node (npm ci)"
  (cd tools/node && npm ci --no-audit --no-fund --loglevel=error)
fi

[[ "${1:-}" == --deps-only ]] && exit 0

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$(nproc)" --target mblint

if [[ "${1:-}" != "--no-demo" ]]; then
  echo
  echo "\$ build/mblint check fixtures/examples/launch/*.sbatch --recipe llama3_70b_pretrain_config"
  # The demo job has problems on purpose: exit code 1 is expected here.
  build/mblint check fixtures/examples/launch/*.sbatch --recipe llama3_70b_pretrain_config || true
fi
