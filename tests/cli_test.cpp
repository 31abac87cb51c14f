// The command line: exit codes, formats, colour, usage errors, the JSON contract.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "lint/base/build_info.h"
#include "lint/cli/cli.h"
#include "rules/registry.h"
#include "tests/cli_run.h"
#include "tests/test_support.h"

using namespace mblint;

namespace {

using Run = test::CliRun;
using test::run_mblint;

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path = test::make_temp_dir("mblint-cli");
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  void write(const std::string& name, const std::string& text) const {
    std::filesystem::create_directories((path / name).parent_path());
    std::ofstream(path / name, std::ios::binary) << text;
  }
};

const char* kBadYaml = "model:\n  tensor_model_parallel_size: 3\n  context_parallel_size: 1\n";
const char* kRecipe = "llama3_8b_pretrain_2gpu_h100_bf16_config";

}  // namespace

TEST_CASE("exit codes: 0 clean, 1 findings, 2 usage", "[cli]") {
  TempDir dir;
  dir.write("bad.yaml", kBadYaml);
  dir.write("good.yaml", "model:\n  tensor_model_parallel_size: 2\n  context_parallel_size: 1\n");
  CHECK(run_mblint({"check", "good.yaml", "--recipe", kRecipe, "--nodes", "1", "--gpus-per-node", "2"}, dir.path).code == 0);
  CHECK(run_mblint({"check", "bad.yaml", "--recipe", kRecipe, "--nodes", "1", "--gpus-per-node", "3"}, dir.path).code == 1);
  CHECK(run_mblint({"check"}, dir.path).code == 2);
  CHECK(run_mblint({"check", "bad.yaml", "--format", "xml"}, dir.path).code == 2);
  CHECK(run_mblint({"check", "bad.yaml", "--nodes", "four"}, dir.path).code == 2);
  CHECK(run_mblint({"check", "bad.yaml", "--gpu", "tpu"}, dir.path).code == 2);
  CHECK(run_mblint({"check", "bad.yaml", "--no-such-option"}, dir.path).code == 2);
  for (const char* threads : {"0", "-1", "two", "4x", "1025"}) {
    Run bad = run_mblint({"check", "bad.yaml", "--jobs", threads}, dir.path);
    CHECK(bad.code == 2);
    CHECK(bad.err.find("--jobs takes a number of threads") != std::string::npos);
  }
  CHECK(run_mblint({"check", "bad.yaml", "good.yaml", "-j", "3", "--recipe", kRecipe, "--nodes", "1",
                    "--gpus-per-node", "3"},
                   dir.path)
            .code == 1);
  CHECK(run_mblint({"frobnicate"}, dir.path).code == 2);
  CHECK(run_mblint({}, dir.path).code == 2);
}

TEST_CASE("the --fail-on option sets the severity that fails", "[cli]") {
  TempDir dir;
  dir.write("sp.yaml", "model:\n  tensor_model_parallel_size: 1\n  sequence_parallel: true\n");
  // 8 GPUs: on the recipe's 2 the weights, gradients and optimizer state of
  // Llama 3 8B alone do not fit at TP 1 (estimated-oom).
  std::vector<std::string> base = {"check", "sp.yaml", "--recipe", kRecipe, "--nodes", "1", "--gpus-per-node", "8"};
  CHECK(run_mblint(base, dir.path).code == 0);  // only a warning
  auto with = base;
  with.insert(with.end(), {"--fail-on", "warning"});
  CHECK(run_mblint(with, dir.path).code == 1);
}

TEST_CASE("colour only on a terminal, never with NO_COLOR", "[cli]") {
  TempDir dir;
  dir.write("bad.yaml", kBadYaml);
  std::vector<std::string> args = {"check", "bad.yaml", "--recipe", kRecipe, "--nodes", "1", "--gpus-per-node", "3"};
  CHECK(run_mblint(args, dir.path).out.find("\x1b[") == std::string::npos);
  CHECK(run_mblint(args, dir.path, {}, true).out.find("\x1b[") != std::string::npos);
  CHECK(run_mblint(args, dir.path, {{"NO_COLOR", "1"}}, true).out.find("\x1b[") == std::string::npos);
  auto always = args;
  always.push_back("--color=always");
  CHECK(run_mblint(always, dir.path).out.find("\x1b[") != std::string::npos);
}

TEST_CASE("JSON output is exactly one object with the documented fields", "[cli]") {
  TempDir dir;
  dir.write("bad.yaml", kBadYaml);
  Run r = run_mblint(
      {"check", "bad.yaml", "--recipe", kRecipe, "--nodes", "1", "--gpus-per-node", "3", "--format", "json"}, dir.path);
  CHECK(r.code == 1);
  auto document = nlohmann::json::parse(r.out);  // throws on anything but one JSON value
  CHECK(document["version"] == 1);
  // The release alone, never the commit: the fixtures stay the same from one commit to the next.
  CHECK(document["tool"] == nlohmann::json{{"name", "mblint"}, {"version", MBLINT_VERSION}});
  REQUIRE(document["diagnostics"].is_array());
  REQUIRE_FALSE(document["diagnostics"].empty());
  for (const auto& d : document["diagnostics"]) {
    for (const char* key : {"rule", "code", "severity", "message", "file", "line", "column", "end_line",
                            "end_column", "notes", "fixes"}) {
      INFO(key);
      CHECK(d.contains(key));
    }
    CHECK((d["severity"] == "error" || d["severity"] == "warning" || d["severity"] == "note"));
    for (const auto& note : d["notes"]) {
      CHECK(note.contains("message"));
      CHECK(note.contains("file"));
      CHECK(note.contains("line"));
      CHECK(note.contains("column"));
    }
    for (const auto& fix : d["fixes"]) {
      CHECK(fix.contains("description"));
      CHECK((fix["safety"] == "safe" || fix["safety"] == "unsafe"));
      for (const auto& edit : fix["edits"]) {
        for (const char* key : {"file", "line", "column", "end_line", "end_column", "replacement"}) CHECK(edit.contains(key));
      }
    }
  }
  const auto& heads = document["diagnostics"][0];
  CHECK(heads["rule"] == "heads-divisible-by-tp");
  CHECK(heads["code"] == "MB201");
  CHECK(heads["file"] == "bad.yaml");
  CHECK(heads["line"] == 2);
  CHECK(heads["column"] == 31);
  CHECK(heads["end_column"] == 32);
  CHECK(document["summary"]["files"] == 1);
  CHECK(document["summary"]["errors"].get<int>() >= 1);
}

TEST_CASE("rules and explain", "[cli]") {
  TempDir dir;
  Run rules = run_mblint({"rules"}, dir.path);
  CHECK(rules.code == 0);
  CHECK(rules.out.find("cp-seq-length-divisibility") != std::string::npos);
  Run json = run_mblint({"rules", "--format", "json"}, dir.path);
  auto list = nlohmann::json::parse(json.out);
  CHECK(list.size() == all_rules().size());
  Run explain = run_mblint({"explain", "MB401"}, dir.path);
  CHECK(explain.code == 0);
  CHECK(explain.out.find("# cp-seq-length-divisibility") != std::string::npos);
  CHECK(explain.out.find("## Bad") != std::string::npos);
  CHECK(run_mblint({"explain", "no-such-rule"}, dir.path).code == 2);
}

TEST_CASE("a missing file is reported at the argument that names it", "[cli]") {
  TempDir dir;
  Run r = run_mblint({"check", "nope.yaml"}, dir.path);
  CHECK(r.code == 1);
  CHECK(r.out.find("<command-line>:1:14: error: cannot read 'nope.yaml': no such file [unreadable-file]") !=
        std::string::npos);
}

TEST_CASE("mblint --version is one line: mblint X.Y.Z from CMake, and the commit between releases", "[cli]") {
  TempDir dir;
  Run r = run_mblint({"--version"}, dir.path);
  CHECK(r.code == 0);
  std::string expected = std::string("mblint ") + MBLINT_VERSION;
  if (!build_commit().empty()) expected += " (" + std::string(build_commit()) + ")";
  CHECK(r.out == expected + "\n");
  // A commit is a short hash; none at the release tag or without git.
  CHECK((build_commit().empty() || build_commit().find_first_not_of("0123456789abcdef") == std::string::npos));
  CHECK(std::string(kVersion) == MBLINT_VERSION);
  Run long_form = run_mblint({"version"}, dir.path);
  CHECK(long_form.out.rfind(expected + "\nchecks Megatron Bridge ", 0) == 0);
}

TEST_CASE("lsp: its timing options take whole milliseconds, or exit 2 before serving", "[cli]") {
  TempDir dir;
  // Valid values would start the server on this process's stdin: only the refusals are run here.
  for (const char* value : {"-2", "10001", "abc", "5ms", ""}) {
    Run bad = run_mblint({"lsp", "--fix-check-delay-ms", value}, dir.path);
    CHECK(bad.code == 2);
    CHECK(bad.err.find("--fix-check-delay-ms takes -1 to 10000") != std::string::npos);
  }
  Run negative = run_mblint({"lsp", "--debounce-ms=-1"}, dir.path);
  CHECK(negative.code == 2);
  CHECK(negative.err.find("--debounce-ms takes 0 to 10000") != std::string::npos);
}
