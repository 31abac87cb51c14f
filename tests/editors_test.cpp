// The editor clients against real editors: headless Neovim runs the
// editors/neovim setup against `mblint lsp` and applies a quick fix; Emacs in
// batch mode runs eglot with editors/emacs and shows a diagnostic; the VS
// Code extension is built with npm and packaged to a .vsix with vsce.
// Each skips with a message when its tool is absent (CI installs them with
// tools/setup.sh).
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "catch2/catch.hpp"
#include "tests/test_support.h"

namespace {

namespace fs = std::filesystem;

bool have(const std::string& tool) {
  return std::system(fmt::format("command -v {} >/dev/null 2>&1", tool).c_str()) == 0;
}

std::string shell_quoted(const fs::path& path) { return fmt::format("'{}'", path.string()); }

fs::path editor_script(const std::string& name) { return mblint::test::source_dir() / "tests/editors" / name; }

// One editor's end-to-end run on a file of its own: `command` runs the
// editor on its script (under tests/editors/), which reads what to check from
// the MBLINT_* variables and writes PASS, or FAIL and why, to MBLINT_RESULT.
struct EditorRun {
  std::string editor;   // names the directory and the log
  std::string file;     // MBLINT_FILE, in a new directory
  std::string text;     // the file's text
  std::string rule;     // MBLINT_RULE: the diagnostic the editor must show
  std::string expect;   // MBLINT_EXPECT: a line the applied quick fix leaves ("": no fix is applied)
  std::string command;
};

void check_editor_passes(const EditorRun& run) {
  fs::path dir = mblint::test::make_temp_dir("mblint-" + run.editor);
  fs::path file = dir / run.file;
  std::ofstream(file) << run.text;
  fs::path result = dir / "result.txt";
  fs::path log = dir / (run.editor + ".log");
  std::string expect = run.expect.empty() ? "" : fmt::format("MBLINT_EXPECT='{}' ", run.expect);
  std::string command = fmt::format(
      "cd {} && MBLINT_REPO={} MBLINT_BIN={} MBLINT_FILE={} MBLINT_RULE={} {}MBLINT_RESULT={} timeout 120 {} > {} 2>&1",
      shell_quoted(dir), shell_quoted(mblint::test::source_dir()), shell_quoted(MBLINT_BINARY), shell_quoted(file),
      run.rule, expect, shell_quoted(result), run.command, shell_quoted(log));
  int status = std::system(command.c_str());
  std::string outcome = mblint::test::read_file(result);
  INFO(run.editor << " exit status " << status << "\n" << outcome << mblint::test::read_file(log));
  CHECK(outcome.rfind("PASS", 0) == 0);
}

}  // namespace

TEST_CASE("Neovim with editors/neovim shows mblint's diagnostic and applies its quick fix", "[editors][lsp]") {
  if (!have("nvim")) {
    WARN("skipped: nvim is not installed (tools/setup.sh installs Debian's neovim)");
    return;
  }
  check_editor_passes({"nvim", "override.yaml",
                       "# résumé: a comment with non-ASCII text\n"
                       "model:\n"
                       "  context_parallel_size: 2\n"
                       "  num_layers: 4\n"
                       "  cp_comm_type: [p2p, p2p]\n",
                       "cp-comm-type-invalid", "cp_comm_type: p2p",
                       fmt::format("nvim --headless --clean -n -i NONE -c 'luafile {}'",
                                   editor_script("nvim_e2e.lua").string())});
}

TEST_CASE("Emacs with eglot and editors/emacs shows mblint's diagnostics on a launch script", "[editors][lsp]") {
  if (!have("emacs") || std::system("emacs --batch --eval \"(require 'eglot)\" >/dev/null 2>&1") != 0) {
    WARN("skipped: emacs with eglot is not installed (tools/setup.sh installs Debian's emacs-nox and elpa-eglot)");
    return;
  }
  check_editor_passes({"emacs", "launch.sh",
                       "#!/bin/bash\n"
                       "torchrun --nnodes=1 --nproc-per-node=8 pretrain.py --config-file override.yaml "
                       "model.tensor_model_parallel_size=3\n",
                       "heads-divisible-by-tp", "",
                       fmt::format("emacs --batch -l {}", shell_quoted(editor_script("emacs_e2e.el")))});
}

TEST_CASE("the VS Code extension builds with npm and packages to a .vsix", "[editors]") {
  if (!have("npm") || !have("node")) {
    WARN("skipped: node/npm are not installed (tools/setup.sh installs Debian's nodejs and npm)");
    return;
  }
  fs::path source = mblint::test::source_dir() / "editors/vscode";
  fs::path dir = mblint::test::make_temp_dir("mblint-vscode");
  for (const char* name : {"package.json", "package-lock.json", "extension.js", "README.md", ".vscodeignore"}) {
    fs::copy_file(source / name, dir / name);
  }
  std::string log = shell_quoted(dir / "npm.log");
  std::string command = fmt::format(
      "cd {} && npm ci --no-audit --no-fund > {} 2>&1 && npx --no-install vsce package --skip-license --out mblint.vsix "
      ">> {} 2>&1",
      shell_quoted(dir), log, log);
  int status = std::system(command.c_str());
  INFO(mblint::test::read_file(dir / "npm.log"));
  REQUIRE(status == 0);
  REQUIRE(fs::exists(dir / "mblint.vsix"));
  // The package holds the client and its runtime dependency, not the packager.
  std::string list = fmt::format(
      "python3 -c \"import zipfile,sys; print('\\n'.join(zipfile.ZipFile(sys.argv[1]).namelist()))\" {} > {}",
      shell_quoted(dir / "mblint.vsix"), shell_quoted(dir / "contents.txt"));
  REQUIRE(std::system(list.c_str()) == 0);
  std::string contents = mblint::test::read_file(dir / "contents.txt");
  INFO(contents.substr(0, 2000));
  CHECK(contents.find("extension/package.json") != std::string::npos);
  CHECK(contents.find("extension/extension.js") != std::string::npos);
  CHECK(contents.find("extension/node_modules/vscode-languageclient/package.json") != std::string::npos);
  CHECK(contents.find("node_modules/@vscode/vsce/") == std::string::npos);
}
