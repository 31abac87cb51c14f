// The pre-commit hook end to end: a temporary repository with a bad launch
// script and a .pre-commit-config.yaml pointing at this repository's
// .pre-commit-hooks.yaml, run with the real `pre-commit` and the built mblint
// on PATH. language: system needs no network.
#include <catch2/catch.hpp>

#include "tests/gate_support.h"
#include "tests/test_support.h"

using namespace mblint;
using test::run_tool;
using test::shell_quote;

namespace {

std::string launch(const std::string& seq) {
  std::string text =
      "#!/bin/bash\n#SBATCH --nodes=1\n"
      "torchrun --nproc-per-node 8 scripts/training/run_recipe.py \\\n"
      "    --recipe llama3_8b_pretrain_config \\\n    model.context_parallel_size=2 \\\n"
      "    dataset.seq_length=";
  text += seq;
  text += "\n";
  return text;
}

const char* kGit = "git -c user.name=mblint-test -c user.email=mblint-test@example.invalid -c commit.gpgsign=false";

// The hooks repository and revision: this source tree at HEAD when its
// .pre-commit-hooks.yaml is committed unchanged (CI's clean clone), else a
// scratch repository holding the working-tree copy of the file.
std::pair<std::string, std::string> hooks_repository(const test::ScratchDir& scratch) {
  std::string source = shell_quote(test::source_dir().string());
  auto tracked = run_tool("git -C " + source + " ls-files --error-unmatch .pre-commit-hooks.yaml");
  auto unchanged = run_tool("git -C " + source + " diff --quiet HEAD -- .pre-commit-hooks.yaml");
  if (tracked.code == 0 && unchanged.code == 0) {
    auto head = run_tool("git -C " + source + " rev-parse HEAD");
    if (head.code == 0) return {test::source_dir().string(), head.output.substr(0, 40)};
  }
  WARN("the source tree's .pre-commit-hooks.yaml is not committed as is: using a scratch copy of it");
  std::filesystem::path repo = scratch.path / "hooks";
  std::filesystem::create_directories(repo);
  std::filesystem::copy_file(test::source_dir() / ".pre-commit-hooks.yaml", repo / ".pre-commit-hooks.yaml");
  std::string r = shell_quote(repo.string());
  REQUIRE(run_tool("git init -q " + r).code == 0);
  REQUIRE(run_tool(std::string(kGit) + " -C " + r + " add .pre-commit-hooks.yaml").code == 0);
  REQUIRE(run_tool(std::string(kGit) + " -C " + r + " commit -q -m hooks").code == 0);
  auto head = run_tool("git -C " + r + " rev-parse HEAD");
  return {repo.string(), head.output.substr(0, 40)};
}

}  // namespace

TEST_CASE("pre-commit runs the mblint hook: fails on a bad launch script, passes after the fix", "[precommit]") {
  if (!test::find_program("pre-commit") || !test::find_program("git")) {
    WARN("skipped: pre-commit or git is not installed (tools/setup.sh installs the Debian package pre-commit)");
    return;
  }
  test::ScratchDir scratch("mblint-precommit");
  auto [hooks_repo, rev] = hooks_repository(scratch);
  std::filesystem::path project = scratch.path / "project";
  std::filesystem::create_directories(project);
  scratch.write("project/launch/train.sbatch", launch("8190"));
  scratch.write("project/.pre-commit-config.yaml", "repos:\n  - repo: " + hooks_repo + "\n    rev: " + rev +
                                                       "\n    hooks:\n      - id: mblint\n");
  std::string p = shell_quote(project.string());
  REQUIRE(run_tool("git init -q " + p).code == 0);
  REQUIRE(run_tool(std::string(kGit) + " -C " + p + " add -A").code == 0);

  std::filesystem::path binary_dir = std::filesystem::path(MBLINT_BINARY).parent_path();
  std::string environment = "cd " + p + " && PATH=" + shell_quote(binary_dir.string()) + ":\"$PATH\" PRE_COMMIT_HOME=" +
                            shell_quote((scratch.path / "cache").string()) + " GIT_CONFIG_NOSYSTEM=1"
                            // No network: any HTTP(S) access would fail through this dead proxy.
                            " http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9"
                            " HTTPS_PROXY=http://127.0.0.1:9 PIP_NO_INDEX=1 ";
  auto failing = run_tool(environment + "pre-commit run --all-files --color never");
  INFO(failing.output);
  CHECK(failing.code == 1);
  CHECK(failing.output.find("mblint") != std::string::npos);
  CHECK(failing.output.find("Failed") != std::string::npos);
  CHECK(failing.output.find("launch/train.sbatch:6:5: error: sequence length 8190 is not divisible by "
                            "2*context_parallel_size = 4 [cp-seq-length-divisibility]") != std::string::npos);

  scratch.write("project/launch/train.sbatch", launch("8192"));
  REQUIRE(run_tool(std::string(kGit) + " -C " + p + " add -A").code == 0);
  auto passing = run_tool(environment + "pre-commit run --all-files --color never");
  INFO(passing.output);
  CHECK(passing.code == 0);
  CHECK(passing.output.find("Passed") != std::string::npos);
}
