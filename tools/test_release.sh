#!/usr/bin/env bash
# The release artifacts as a user meets them (docs/shipping.md): runs
# tools/release.sh twice and checks
#   - release.sh is idempotent: the second run leaves the same bytes in dist/;
#   - the static binary runs `--version` and checks the demo job (fixtures/examples)
#     inside an empty chroot (as root; otherwise in an empty directory under
#     `env -i`), and ldd calls it "not a dynamic executable";
#   - the tarball, the .deb (files, modes, control fields), the wheel (installed
#     with `pip install --no-index` into a fresh venv, `mblint check` works) and
#     the .vsix (bin/mblint executable, package.json valid, target linux-x64,
#     the extension starts its bundled binary unless mblint.path is set);
#   - --tag-only tags a clean HEAD vX.Y.Z, again is a no-op, refuses a dirty tree
#     and a tag on another commit; the commit in --version is empty at the tag
#     and in a tree without .git.
#
#   tools/test_release.sh       uses build/ (tools/test.sh's Release build)
# MBLINT_RELEASE_BUILD_DIR picks another build directory.
set -euo pipefail
cd "$(dirname "$0")/.."

export MBLINT_RELEASE_BUILD_DIR=${MBLINT_RELEASE_BUILD_DIR:-build}
python=${MBLINT_RELEASE_PYTHON:-/usr/bin/python3}
version=$(sed -n 's/^project(mblint VERSION \([0-9][0-9.]*\).*/\1/p' CMakeLists.txt)
arch=$(uname -m)
debarch=$(dpkg --print-architecture)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

pass() { echo "ok: $*"; passed=$((passed + 1)); }
fail() { echo "FAILED: $*"; failed=$((failed + 1)); }
check() {  # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}

# The demo job's golden: stdout, then "[exit N]".
demo_args=(check launch/llama3_70b.sbatch launch/qwen3_moe.sbatch --recipe llama3_70b_pretrain_config)
[[ "$(cat fixtures/examples/cmd)" == "${demo_args[*]}" ]] || { echo "fixtures/examples/cmd changed: update ${0}" >&2; exit 1; }
expected_demo=$(cat fixtures/examples/expected.txt)
demo_output() {  # demo_output DIR COMMAND...: the demo's stdout and exit code, run in DIR
  local dir=$1 code=0 out
  shift
  out=$(cd "$dir" && "$@" "${demo_args[@]}") || code=$?
  printf '%s\n[exit %d]' "$out" "$code"
}
# `mblint --version`: "mblint X.Y.Z", or "mblint X.Y.Z (abc1234)" between releases.
is_match() { [[ "$1" =~ $2 ]]; }
is_version() { is_match "$1" "^mblint ${version//./\\.}( \\([0-9a-f]{7,}\\))?\$"; }

echo "== tools/release.sh, twice"
start=$(date +%s)
tools/release.sh >"$work/release1.log" 2>&1 || { cat "$work/release1.log"; exit 1; }
cp dist/SHA256SUMS "$work/SHA256SUMS.first"
tools/release.sh >"$work/release2.log" 2>&1 || { cat "$work/release2.log"; exit 1; }
echo "(both runs: $(($(date +%s) - start)) s)"
check "release.sh twice: the same bytes in dist/" diff "$work/SHA256SUMS.first" dist/SHA256SUMS
check "SHA256SUMS matches dist/" bash -c 'cd dist && sha256sum --quiet -c SHA256SUMS'
check "SHA256SUMS lists the four artifacts" test "$(wc -l <dist/SHA256SUMS)" -eq 4

echo "== the tarball"
tarball=dist/mblint-$version-linux-$arch.tar.gz
tar -tvzf "$tarball" | awk '{print $1, $NF}' | sort -k2 >"$work/tar.txt"
cat >"$work/tar.expected" <<EOF
drwxr-xr-x mblint-$version/
-rw-r--r-- mblint-$version/CHANGELOG.md
-rw-r--r-- mblint-$version/LICENSE
-rw-r--r-- mblint-$version/README.md
-rw-r--r-- mblint-$version/RULES.md
drwxr-xr-x mblint-$version/bin/
-rwxr-xr-x mblint-$version/bin/mblint
EOF
check "tarball: mblint-$version/bin/mblint, LICENSE, README.md, CHANGELOG.md, RULES.md" diff "$work/tar.expected" "$work/tar.txt"
mkdir "$work/tar"
tar -xzf "$tarball" -C "$work/tar"
binary=$work/tar/mblint-$version/bin/mblint
check "ldd: not a dynamic executable" bash -c "ldd '$binary' 2>&1 | grep -q 'not a dynamic executable'"
check "RULES.md is the rules reference (rules/README.md)" cmp "$work/tar/mblint-$version/RULES.md" rules/README.md

echo "== the static binary in an empty root"
root=$work/root
mkdir -p "$root"
cp "$binary" "$root/mblint"
cp -r fixtures/examples/launch fixtures/examples/conf "$root/"
if [[ $(id -u) -eq 0 ]] && command -v chroot >/dev/null; then
  # Nothing but the binary and the demo's files: no libc, no loader, no /proc.
  how="chroot"
  chroot=$(command -v chroot)
  run_static() { env -i "$chroot" "$root" /mblint "$@"; }
else
  how="env -i in an empty directory (not root: no chroot)"
  run_static() { env -i "$root/mblint" "$@"; }
fi
echo "($how)"
check "static --version: $(run_static --version)" is_version "$(run_static --version)"
check "static binary checks the demo job as fixtures/examples/expected.txt says" \
  test "$(demo_output "$root" run_static)" == "$expected_demo"

echo "== the .deb"
deb=dist/mblint_${version}_$debarch.deb
field() { dpkg-deb -f "$deb" "$1"; }
check "deb Package: mblint" test "$(field Package)" == mblint
check "deb Version: $version" test "$(field Version)" == "$version"
check "deb Architecture: $debarch" test "$(field Architecture)" == "$debarch"
check "deb Maintainer, Description, Section devel, Priority optional set" \
  test -n "$(field Maintainer)" -a -n "$(field Description)" -a "$(field Section)" == devel -a "$(field Priority)" == optional
check "deb Installed-Size in KiB" is_match "$(field Installed-Size)" '^[0-9]+$'
check "deb has no Depends (static binary)" test -z "$(field Depends)"
dpkg-deb -c "$deb" | awk '{print $1, $2, $NF}' >"$work/deb.txt"
check "deb installs /usr/bin/mblint, root-owned, 0755" grep -qx -- '-rwxr-xr-x root/root ./usr/bin/mblint' "$work/deb.txt"
check "deb installs README.md, RULES.md and changelog.gz in /usr/share/doc/mblint" \
  bash -c "grep -q ' ./usr/share/doc/mblint/README.md$' '$work/deb.txt' && grep -q ' ./usr/share/doc/mblint/RULES.md$' '$work/deb.txt' && grep -q ' ./usr/share/doc/mblint/changelog.gz$' '$work/deb.txt'"
check "deb installs the copyright file: Apache-2.0" \
  bash -c "dpkg-deb --fsys-tarfile '$deb' | tar -xO ./usr/share/doc/mblint/copyright | grep -qx 'License: Apache-2.0'"
check "deb holds nothing outside /usr/bin and /usr/share/doc/mblint" \
  test -z "$(awk '{print $3}' "$work/deb.txt" | grep -vE '^\./(usr/(bin/(mblint)?|share/(doc/(mblint/.*)?)?)?)?$')"
dpkg-deb -x "$deb" "$work/deb"
check "deb's /usr/bin/mblint --version" is_version "$("$work/deb/usr/bin/mblint" --version)"

echo "== the wheel in a fresh venv"
wheels=(dist/mblint-"$version"-py3-none-*.whl)
check "one wheel, tagged py3-none-manylinux_2_17_x86_64" test "${#wheels[@]}" -eq 1 -a -n "$(ls dist/*manylinux_2_17_x86_64*.whl)"
"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install --no-index --quiet "${wheels[0]}"
check "pip-installed mblint --version" is_version "$("$work/venv/bin/mblint" --version)"
check "pip-installed python -m mblint --version" is_version "$("$work/venv/bin/python" -m mblint --version)"
check "wheel metadata: License Apache-2.0, LICENSE file bundled" \
  bash -c "unzip -p '${wheels[0]}' 'mblint-$version.dist-info/METADATA' | grep -qx 'License: Apache-2.0' && unzip -Z1 '${wheels[0]}' | grep -q 'dist-info/LICENSE$'"
check "pip-installed mblint checks the demo job as fixtures/examples/expected.txt says" \
  test "$(demo_output fixtures/examples env -i "$work/venv/bin/mblint")" == "$expected_demo"

echo "== the .vsix"
vsix=dist/mblint-$version.vsix
unzip -Z "$vsix" >"$work/vsix.txt"
check "vsix holds extension/bin/mblint, executable" grep -qE '^-rwxr-xr-x .* extension/bin/mblint$' "$work/vsix.txt"
check "vsix holds the license (packaged without --skip-license)" grep -qE ' extension/LICENSE(\.txt)?$' "$work/vsix.txt"
check "vsix holds extension.js and vscode-languageclient, not vsce" \
  bash -c "grep -q ' extension/extension.js$' '$work/vsix.txt' && grep -q ' extension/node_modules/vscode-languageclient/package.json$' '$work/vsix.txt' && ! grep -q 'node_modules/@vscode/vsce/' '$work/vsix.txt'"
unzip -p "$vsix" extension/package.json >"$work/package.json"
check "vsix package.json: valid, version $version, repository, license, main, mblint.path empty by default" \
  "$python" - "$work/package.json" "$version" <<'EOF'
import json, sys
manifest = json.load(open(sys.argv[1]))
path = manifest["contributes"]["configuration"]["properties"]["mblint.path"]
assert manifest["name"] == "mblint" and manifest["version"] == sys.argv[2], manifest["version"]
assert manifest["repository"]["url"] and manifest["license"] == "Apache-2.0" and manifest["main"] == "./extension.js"
assert path["default"] == "", path
EOF
check "vsix manifest targets linux-x64" bash -c "unzip -p '$vsix' extension.vsixmanifest | grep -q 'TargetPlatform=\"linux-x64\"'"
mkdir "$work/vsix"
unzip -q "$vsix" -d "$work/vsix"
check "vsix's bin/mblint --version" is_version "$("$work/vsix/extension/bin/mblint" --version)"
# The extension as VS Code loads it (stand-ins for the vscode API): the bundled
# binary when mblint.path is unset, the setting when it is set.
if command -v node >/dev/null; then
  node tools/release/extension_server.js "$work/vsix/extension" >"$work/server.txt"
  check "the extension runs its bundled binary when mblint.path is unset" \
    grep -qxF "(unset) -> $work/vsix/extension/bin/mblint" "$work/server.txt"
  check "the extension runs mblint.path when it is set" grep -qxF "/opt/custom/mblint -> /opt/custom/mblint" "$work/server.txt"
else
  fail "node is not installed (tools/setup.sh installs it): the extension's choice of binary is untested"
fi

echo "== --tag-only and the commit in --version, in a clone"
clone=$work/clone
# The tag and commits below need an identity; the machine may have none.
export GIT_AUTHOR_NAME=mblint-test GIT_AUTHOR_EMAIL=test@mblint.invalid
export GIT_COMMITTER_NAME=mblint-test GIT_COMMITTER_EMAIL=test@mblint.invalid
git clone -q --no-local . "$clone" 2>/dev/null || git clone -q . "$clone"
git -C "$clone" tag -d "v$version" >/dev/null 2>&1 || true
commit_of() {  # the commit build_commit.cmake writes for source tree $1
  cmake -DSOURCE_DIR="$1" -DVERSION="$version" -DOUT="$work/commit.h" -P cmake/build_commit.cmake
  sed -n 's/^#define MBLINT_BUILD_COMMIT "\(.*\)"$/\1/p' "$work/commit.h"
}
check "before the tag, --version names the commit" test "$(commit_of "$clone")" == "$(git -C "$clone" rev-parse --short=7 HEAD)"
check "--tag-only tags HEAD v$version" bash -c "'$clone/tools/release.sh' --tag-only >/dev/null && test \"\$(git -C '$clone' rev-parse 'v$version^{commit}')\" == \"\$(git -C '$clone' rev-parse HEAD)\""
check "--tag-only again: a no-op" "$clone/tools/release.sh" --tag-only
check "at the tag, --version names no commit" test -z "$(commit_of "$clone")"
echo "dirty" >>"$clone/README.md"
check "--tag-only refuses a dirty tree" bash -c "! '$clone/tools/release.sh' --tag-only 2>/dev/null"
git -C "$clone" checkout -q -- README.md
git -C "$clone" commit -q --allow-empty -m "after the release"
check "--tag-only refuses when v$version is on another commit" bash -c "! '$clone/tools/release.sh' --tag-only 2>/dev/null"
check "after the tag, --version names the new commit" test "$(commit_of "$clone")" == "$(git -C "$clone" rev-parse --short=7 HEAD)"
mkdir "$work/archive"
git -C "$clone" archive HEAD | tar -x -C "$work/archive"
check "a source tree without .git: --version names no commit" test -z "$(commit_of "$work/archive")"

echo
echo "release: $passed passed, $failed failed"
((failed == 0))
