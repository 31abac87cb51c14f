#!/usr/bin/env bash
# Install mblint's build dependencies (Debian 12 packages), build it, and run
# it on the demo job. Safe to run again: every step is idempotent.
#
#   tools/setup.sh            install, build (Release) and run the demo
#   tools/setup.sh --no-demo  install and build only
set -euo pipefail

cd "$(dirname "$0")/.."

PACKAGES=(build-essential cmake pkg-config libyaml-cpp-dev libre2-dev libfmt-dev libcxxopts-dev
          catch2 nlohmann-json3-dev python3
          neovim emacs-nox elpa-eglot)  # editor end-to-end tests of `mblint lsp`

missing=()
for package in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
# Node and npm for the VS Code extension's packaging test; a machine that has
# them already (e.g. from NodeSource, whose nodejs bundles npm) keeps its own.
if ! command -v npm > /dev/null 2>&1; then
  for package in nodejs npm; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
  done
fi
if ((${#missing[@]})); then
  echo "mblint setup: installing ${missing[*]}"
  if [[ $(id -u) -eq 0 ]]; then SUDO=(); else SUDO=(sudo); fi
  "${SUDO[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq "${missing[@]}"
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$(nproc)" --target mblint

if [[ "${1:-}" != "--no-demo" ]]; then
  echo
  echo "\$ build/mblint check fixtures/examples/launch/*.sbatch --recipe llama3_70b_pretrain_config"
  # The demo job has problems on purpose: exit code 1 is expected here.
  build/mblint check fixtures/examples/launch/*.sbatch --recipe llama3_70b_pretrain_config || true
fi
