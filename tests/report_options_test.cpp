// --format github (and its automatic choice under GitHub Actions), --output,
// --exit-zero, --quiet, --statistics.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "lint/report/render.h"
#include "tests/gate_support.h"

using namespace mblint;
using mblint::test::run_mblint;
using mblint::test::ScratchDir;

namespace {

const char* kLaunch =
    "#!/bin/bash\n#SBATCH --nodes=1\n"
    "CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun --nproc-per-node 8 scripts/training/run_recipe.py \\\n"
    "    --recipe llama3_8b_pretrain_config \\\n    model.context_parallel_size=2 \\\n"
    "    dataset.seq_length=8190\n";

const char* kYaml = "optimizer:\n  finetune_lr: 0.000005\n  min_lr: 0.000005\n";
const std::vector<std::string> kYamlArgs = {"check", "override.yaml", "--recipe", "qwen3_8b_pretrain_config",
                                            "--nodes", "1", "--gpus-per-node", "8"};

std::vector<std::string> with(std::vector<std::string> args, std::initializer_list<std::string> more) {
  args.insert(args.end(), more);
  return args;
}

}  // namespace

TEST_CASE("format github: one workflow command per diagnostic, escaped", "[cli-output]") {
  ScratchDir dir("mblint-output");
  dir.write("launch.sh", kLaunch);
  auto run = run_mblint({"check", "launch.sh", "--format", "github"}, dir.path);
  CHECK(run.code == 1);
  CHECK(run.out.rfind("::error file=launch.sh,line=6,col=5,endLine=6,endColumn=28,"
                      "title=mblint cp-seq-length-divisibility (MB401)::sequence length 8190 is not divisible",
                      0) == 0);
  // Notes and help follow in the message, newlines escaped: one line per diagnostic.
  CHECK(std::count(run.out.begin(), run.out.end(), '\n') == 1);
  CHECK(run.out.find("%0Anote: ") != std::string::npos);
  CHECK(run.out.find("%0Ahelp: use seq_length 8192") != std::string::npos);

  dir.write("override.yaml", kYaml);
  auto warning = run_mblint(with(kYamlArgs, {"--format", "github"}), dir.path);
  CHECK(warning.out.rfind("::warning file=override.yaml,line=2,col=3,", 0) == 0);
  CHECK(warning.code == 0);
}

TEST_CASE("GitHub escaping of properties and data: % CR LF , :", "[cli-output]") {
  ScratchDir dir("mblint-output");
  dir.write("a:b%c.sh", kLaunch);
  auto run = run_mblint({"check", "a:b%c.sh", "--format", "github"}, dir.path);
  CHECK(run.out.rfind("::error file=a%3Ab%25c.sh,line=6,", 0) == 0);

  SourceSet sources;
  FileId file = add_source(sources, "conf/x,y.yaml", "a: 1\n");
  Diagnostic d{"some-rule", "MB999", Severity::Note, "50% done\r\nnext: line", make_span(file, 0, 1), {}, "", false, {}, ""};
  std::ostringstream out;
  render_github(out, sources, {d});
  CHECK(out.str() == "::notice file=conf/x%2Cy.yaml,line=1,col=1,endLine=1,endColumn=2,"
                     "title=mblint some-rule (MB999)::50%25 done%0D%0Anext: line\n");
}

TEST_CASE("GITHUB_ACTIONS=true chooses --format github unless a format is given", "[cli-output]") {
  ScratchDir dir("mblint-output");
  dir.write("launch.sh", kLaunch);
  auto automatic = run_mblint({"check", "launch.sh"}, dir.path, {{"GITHUB_ACTIONS", "true"}});
  CHECK(automatic.out.rfind("::error file=launch.sh,", 0) == 0);
  auto text = run_mblint({"check", "launch.sh", "--format", "text"}, dir.path, {{"GITHUB_ACTIONS", "true"}});
  CHECK(text.out.rfind("launch.sh:6:5: error:", 0) == 0);
  auto other = run_mblint({"check", "launch.sh"}, dir.path, {{"GITHUB_ACTIONS", "false"}});
  CHECK(other.out.rfind("launch.sh:6:5: error:", 0) == 0);
}

TEST_CASE("output option writes the report to a file, keeping an existing file's permissions", "[cli-output]") {
  ScratchDir dir("mblint-output");
  dir.write("launch.sh", kLaunch);
  dir.write("report.txt", "old");
  ::chmod((dir.path / "report.txt").c_str(), 0640);
  auto run = run_mblint({"check", "launch.sh", "--output", "report.txt", "--format", "json"}, dir.path);
  CHECK(run.code == 1);
  CHECK(run.out.empty());
  auto direct = run_mblint({"check", "launch.sh", "--format", "json"}, dir.path);
  CHECK(dir.read("report.txt") == direct.out);
  struct stat info {};
  REQUIRE(::stat((dir.path / "report.txt").c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0640);
  // No temporary file is left behind.
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path)) ++files;
  CHECK(files == 2);
  auto unwritable = run_mblint({"check", "launch.sh", "--output", "no/such/dir/report.txt"}, dir.path);
  CHECK(unwritable.code == 2);
}

TEST_CASE("exit-zero, quiet and fail-on options", "[cli-output]") {
  ScratchDir dir("mblint-output");
  dir.write("launch.sh", kLaunch);
  CHECK(run_mblint({"check", "launch.sh", "--exit-zero"}, dir.path).code == 0);
  CHECK(run_mblint({"check", "launch.sh", "--exit-zero", "--format", "nope"}, dir.path).code == 2);
  auto quiet = run_mblint({"check", "launch.sh", "--quiet"}, dir.path);
  CHECK(quiet.code == 1);
  CHECK(quiet.out.find("mblint: 1 error") == std::string::npos);
  CHECK(quiet.out.find("[cp-seq-length-divisibility]") != std::string::npos);

  dir.write("override.yaml", "optimizer:\n  lr: 0.0001\n");
  auto clean = run_mblint(with(kYamlArgs, {"-q"}), dir.path);
  CHECK(clean.code == 0);
  CHECK(clean.out.empty());
  dir.write("override.yaml", kYaml);
  CHECK(run_mblint(with(kYamlArgs, {"--fail-on", "warning"}), dir.path).code == 1);
  CHECK(run_mblint(with(kYamlArgs, {"--fail-on", "warning", "--exit-zero"}), dir.path).code == 0);
}

TEST_CASE("statistics option counts findings per rule, most frequent first", "[cli-output]") {
  ScratchDir dir("mblint-output");
  dir.write("stats.sh",
            "#!/bin/bash\n#SBATCH --nodes=1\n"
            "CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun --nproc-per-node 8 scripts/training/run_recipe.py \\\n"
            "    --recipe llama3_8b_pretrain_config \\\n    model.context_parallel_size=2 \\\n"
            "    +optimizer.finetune_lr=1 +optimizer.lrr=2 +optimizer.foo=3 \\\n    dataset.seq_length=8190\n");
  auto run = run_mblint({"check", "stats.sh", "--statistics"}, dir.path);
  CHECK(run.code == 1);
  CHECK(run.out == "3  MB010  unknown-key\n1  MB401  cp-seq-length-divisibility\n"
                   "mblint: 1 error, 3 warnings, 0 notes in 1 file; 1 job checked\n");
  auto quiet = run_mblint({"check", "stats.sh", "--statistics", "-q"}, dir.path);
  CHECK(quiet.out == "3  MB010  unknown-key\n1  MB401  cp-seq-length-divisibility\n");
  auto json = run_mblint({"check", "stats.sh", "--statistics", "--format", "json"}, dir.path);
  auto document = nlohmann::json::parse(json.out);
  CHECK(document["statistics"] == nlohmann::json::parse(R"([{"code": "MB010", "rule": "unknown-key", "count": 3},
      {"code": "MB401", "rule": "cp-seq-length-divisibility", "count": 1}])"));
  CHECK(run_mblint({"check", "stats.sh", "--statistics", "--format", "sarif"}, dir.path).code == 2);
}
