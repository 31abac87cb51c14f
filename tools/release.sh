#!/usr/bin/env bash
# Build mblint's release artifacts into dist/ (docs/shipping.md):
#
#   dist/mblint-X.Y.Z-linux-<arch>.tar.gz   mblint-X.Y.Z/bin/mblint, LICENSE, README.md, CHANGELOG.md, RULES.md
#   dist/mblint_X.Y.Z_<debarch>.deb         installs /usr/bin/mblint
#   dist/mblint-X.Y.Z-py3-none-<tag>.whl    console entry `mblint` that execs the bundled binary
#   dist/mblint-X.Y.Z.vsix                  the VS Code extension with the binary bundled
#   dist/SHA256SUMS
#
#   tools/release.sh            build the artifacts from the working tree
#   tools/release.sh --tag      first tag HEAD vX.Y.Z (the tree must be clean; an existing
#                               tag must point at HEAD), then build: the binary reports X.Y.Z
#   tools/release.sh --tag-only the tag alone
#
# X.Y.Z is CMake's project(VERSION). The binary is the Release build's
# mblint-static target in build/ (the objects tools/test.sh builds; here only
# the link is new when they are current). Offline apart from `npm ci` for the
# VS Code extension. Idempotent: dist/ is made anew, and every artifact is
# byte-for-byte the same on a second run of the same commit (file times are
# the commit's time).
set -euo pipefail
cd "$(dirname "$0")/.."

tag=0
tag_only=0
for arg in "$@"; do
  case "$arg" in
    --tag) tag=1 ;;
    --tag-only) tag=1 tag_only=1 ;;
    *) echo "usage: tools/release.sh [--tag | --tag-only]" >&2; exit 2 ;;
  esac
done

build=$(realpath -m "${MBLINT_RELEASE_BUILD_DIR:-build}")  # absolute: steps below cd elsewhere
python=${MBLINT_RELEASE_PYTHON:-/usr/bin/python3}  # Debian's, with python3-build
version=$(sed -n 's/^project(mblint VERSION \([0-9][0-9.]*\).*/\1/p' CMakeLists.txt)
[[ -n "$version" ]] || { echo "release: no project(mblint VERSION X.Y.Z) in CMakeLists.txt" >&2; exit 1; }
arch=$(uname -m)
debarch=$(dpkg --print-architecture)

if ((tag)); then
  if [[ -n "$(git status --porcelain --untracked-files=no)" ]]; then
    echo "release: the working tree has uncommitted changes; commit them before --tag" >&2
    exit 1
  fi
  if git rev-parse -q --verify "refs/tags/v$version" >/dev/null; then
    if [[ "$(git rev-parse "v$version^{commit}")" != "$(git rev-parse HEAD)" ]]; then
      echo "release: tag v$version exists on another commit; bump project(VERSION) in CMakeLists.txt" >&2
      exit 1
    fi
  else
    git tag -a "v$version" -m "mblint $version"
    echo "release: tagged HEAD v$version"
  fi
  ((tag_only)) && exit 0
fi

# One line per artifact: what it took.
phase_start=$SECONDS
phase() { echo "release: $1 ($((SECONDS - phase_start)) s)"; phase_start=$SECONDS; }

# Every file time in the artifacts: the commit's time (reproducible archives).
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}

# The binary: a build directory already configured is used as it is (build/
# from tools/test.sh: Release, its objects reused); else it is configured with
# tools/test.sh's flags.
if [[ -f "$build/CMakeCache.txt" ]]; then
  cmake "$build" >/dev/null
  type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt")
  [[ "$type" == Release ]] || echo "release: warning: $build is a $type build, not Release" >&2
else
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DMBLINT_WERROR=ON >/dev/null
fi
cmake --build "$build" -j "$(nproc)" --target mblint-static
binary="$build/mblint-static"
if ldd "$binary" >/dev/null 2>&1; then
  echo "release: $binary is a dynamic executable" >&2
  exit 1
fi
echo "release: $("$binary" --version)"

phase "binary"

stage="$build/release"
rm -rf "$stage" dist
mkdir -p "$stage" dist
dist=$(pwd)/dist

# Set every file's time to SOURCE_DATE_EPOCH (tar, zip and ar record them).
phase "clean"

settle() { find "$@" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +; }

# 1. The tarball.
top="mblint-$version"
mkdir -p "$stage/tar/$top/bin"
install -m 0755 "$binary" "$stage/tar/$top/bin/mblint"
install -m 0644 LICENSE README.md CHANGELOG.md "$stage/tar/$top/"
# The rules reference (rules/README.md in the repository), from this binary.
"$binary" rules --format markdown >"$stage/tar/$top/RULES.md"
chmod 0644 "$stage/tar/$top/RULES.md"
settle "$stage/tar"
tarball="mblint-$version-linux-$arch.tar.gz"
tar -C "$stage/tar" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" -cf - "$top" |
  gzip -9n >"$dist/$tarball"

phase "tarball"

# 2. The .deb: /usr/bin/mblint and its documentation; no Depends (static).
deb="$stage/deb"
mkdir -p "$deb/DEBIAN" "$deb/usr/bin" "$deb/usr/share/doc/mblint"
install -m 0755 "$binary" "$deb/usr/bin/mblint"
install -m 0644 README.md "$deb/usr/share/doc/mblint/README.md"
install -m 0644 "$stage/tar/$top/RULES.md" "$deb/usr/share/doc/mblint/RULES.md"
gzip -9n <CHANGELOG.md >"$deb/usr/share/doc/mblint/changelog.gz"
# Debian's machine-readable copyright file; the license text is Debian's own
# /usr/share/common-licenses/Apache-2.0.
cat >"$deb/usr/share/doc/mblint/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: mblint
Source: https://github.com/mblint/mblint

Files: *
Copyright: mblint developers
License: Apache-2.0
 On Debian systems the full text of the Apache License, Version 2.0 is in
 /usr/share/common-licenses/Apache-2.0.
EOF
chmod 0644 "$deb/usr/share/doc/mblint/copyright"
chmod 0644 "$deb/usr/share/doc/mblint/changelog.gz"
cat >"$deb/DEBIAN/control" <<EOF
Package: mblint
Version: $version
Architecture: $debarch
Maintainer: mblint developers <mblint@users.noreply.github.com>
Installed-Size: $(du -sk --apparent-size "$deb/usr" | cut -f1)
Section: devel
Priority: optional
Homepage: https://github.com/mblint/mblint
Description: linter for Megatron Bridge training launches
 mblint reads Megatron Bridge, Megatron-LM and NeMo launch scripts, recipe
 YAML and Hydra overrides before a job is submitted, resolves the job the way
 Megatron Bridge will, and reports parallelism and configuration problems
 compiler-style, with the values' locations and fixes. Statically linked.
EOF
chmod -R u=rwX,go=rX "$deb"
settle "$deb"
dpkg-deb --root-owner-group -Zgzip --build "$deb" "$dist/mblint_${version}_${debarch}.deb" >/dev/null

phase "deb"

# 3. The wheel: packaging/python plus the binary.
py="$stage/python"
cp -r packaging/python "$py"
cp README.md LICENSE "$py/"
install -D -m 0755 "$binary" "$py/mblint/bin/mblint"
settle "$py"
(cd "$py" && MBLINT_VERSION="$version" "$python" -m build --wheel --no-isolation --outdir "$dist" >build.log 2>&1) ||
  { cat "$py/build.log" >&2; exit 1; }

phase "wheel"

# 4. The VS Code extension with bin/mblint; the version is CMake's. Packaged
# in $build/release-vscode, kept between runs: `npm ci` (14,000 files, most
# of them vsce's, which the package leaves out) runs again only when the lock
# file changed, so a second run of the same commit needs no registry.
ext="$build/release-vscode"
if [[ ! -f "$ext/node_modules/.package-lock.json" ]] || ! cmp -s editors/vscode/package-lock.json "$ext/package-lock.json"; then
  rm -rf "$ext"
  mkdir -p "$ext"
  cp editors/vscode/package.json editors/vscode/package-lock.json "$ext/"
  (cd "$ext" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error >"$stage/npm.log" 2>&1) ||
    { cat "$stage/npm.log" >&2; exit 1; }
  settle "$ext/node_modules"
fi
rm -rf "$ext/bin"
for name in package.json extension.js README.md .vscodeignore; do
  cp "editors/vscode/$name" "$ext/"
done
cp LICENSE "$ext/LICENSE"
install -D -m 0755 "$binary" "$ext/bin/mblint"
"$python" - "$ext/package.json" "$version" <<'EOF'
import json, sys
path, version = sys.argv[1], sys.argv[2]
manifest = json.load(open(path))
manifest["version"] = version
open(path, "w").write(json.dumps(manifest, indent=2) + "\n")
EOF
settle "$ext/bin" "$ext/package.json" "$ext/package-lock.json" "$ext/extension.js" "$ext/README.md" "$ext/.vscodeignore" \
  "$ext/LICENSE"
(cd "$ext" && npx --no-install vsce package --target linux-x64 --out "$dist/mblint-$version.vsix" \
   >"$stage/vsce.log" 2>&1) || { cat "$stage/vsce.log" >&2; exit 1; }

phase "vsix"

# 5. Checksums.
(cd "$dist" && sha256sum -- *.tar.gz *.deb *.whl *.vsix >SHA256SUMS)
echo "release: dist/"
(cd "$dist" && cat SHA256SUMS)
