// `mblint resolve --format json` against the contract of issue 15
// (docs/commands.md, "mblint resolve"): the document's shape, key by key and type by type, and
// what it promises: an unknown value is absent from settings and named in
// unresolved; a script that launches nothing has no job; the jobs are the
// ones `check` reports.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "lint/cli/cli.h"
#include "rules/registry.h"
#include "tests/cli_run.h"
#include "tests/resolve_contract.h"
#include "tests/test_support.h"

using namespace mblint;
using nlohmann::json;
using mblint::test::check_contract;

namespace {

using Run = test::CliRun;
using test::run_mblint;

struct TempDir {
  std::filesystem::path dir = test::make_temp_dir("mblint-resolve");
  ~TempDir() { std::filesystem::remove_all(dir); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name, std::ios::binary) << text;
  }
};

// The text at a setting's location in the file it names.
std::string line_at(const std::filesystem::path& dir, const json& setting) {
  std::ifstream in(dir / setting["file"].get<std::string>());
  std::string line;
  for (int n = 0; n < setting["line"].get<int>() && std::getline(in, line); ++n) {
  }
  return line.substr(setting["column"].get<size_t>() - 1);
}

constexpr const char* kMegatronScript = R"(#!/bin/bash
NNODES=2
torchrun --nproc_per_node 8 --nnodes $NNODES pretrain_gpt.py \
    --tensor-model-parallel-size 4 \
    --pipeline-model-parallel-size $PP \
    --num-layers 32 --hidden-size 4096 --num-attention-heads 32 \
    --seq-length 4096 --max-position-embeddings 4096 \
    --micro-batch-size 1 --global-batch-size 64 --bf16
)";

}  // namespace

TEST_CASE("resolve --format json follows the contract", "[resolve]") {
  TempDir temp;
  temp.write("train.sh", kMegatronScript);
  Run run = run_mblint({"resolve", "train.sh", "--format", "json"}, temp.dir);
  INFO(run.out << run.err);
  REQUIRE(run.code == kExitClean);
  json document = json::parse(run.out);
  check_contract(document);
  REQUIRE(document["jobs"].size() == 1);
  const json& job = document["jobs"][0];
  CHECK(job["file"] == "train.sh");
  CHECK(job["line"] == 3);
  CHECK(job["launcher"] == "torchrun");
  CHECK(job["entry"] == "pretrain_gpt.py");
  CHECK(job["dialect"] == "megatron-lm");
  CHECK(job["recipe"].is_null());
  CHECK(job["nodes"] == 2);
  CHECK(job["gpus_per_node"] == 8);
  CHECK(job["world_size"] == 16);
  const json& settings = job["settings"];
  CHECK(settings["nodes"]["value"] == 2);
  CHECK(settings["world_size"]["layer"] == "derived");

  // A written value: its place holds what was written.
  const json& tp = settings["model.tensor_model_parallel_size"];
  CHECK(tp["value"] == 4);
  CHECK(tp["layer"] == "Megatron-LM flag");
  CHECK(line_at(temp.dir, tp).rfind("4", 0) == 0);
  // Megatron-LM's default, written nowhere.
  const json& cp = settings["model.context_parallel_size"];
  CHECK(cp["value"] == 1);
  CHECK(cp["layer"] == "default");
  CHECK(cp["file"].is_null());
  CHECK(settings["model.virtual_pipeline_model_parallel_size"]["value"].is_null());

  // $PP is unknown: absent from settings, named in unresolved, located at `$PP`.
  CHECK_FALSE(settings.contains("model.pipeline_model_parallel_size"));
  bool named = false;
  for (const json& u : job["unresolved"]) {
    if (u["what"].get<std::string>().find("pipeline_model_parallel_size") != std::string::npos) {
      named = true;
      CHECK(u["file"] == "train.sh");
      CHECK(u["line"] == 5);
    }
  }
  CHECK(named);
  // What depends on PP is unknown, not guessed.
  CHECK(job["derived"]["data_parallel_size"].is_null());
  CHECK(job["derived"]["pipeline_bubble"].is_null());
}

TEST_CASE("resolve reports the derived sizes of a known job", "[resolve]") {
  TempDir temp;
  // fmt, not std::string::replace: GCC 12 at -O2 warns (-Wrestrict, a false positive) on the latter.
  std::string_view text = kMegatronScript;
  size_t pp = text.find("$PP");
  std::string script = fmt::format("{}2{}", text.substr(0, pp), text.substr(pp + 3));
  temp.write("train.sh", script);
  json document = json::parse(run_mblint({"resolve", "train.sh", "--format", "json"}, temp.dir).out);
  check_contract(document);
  const json& derived = document["jobs"][0]["derived"];
  CHECK(derived["data_parallel_size"] == 2);  // 16 / (4 * 2)
  CHECK(derived["microbatches"] == 32);        // 64 / (1 * 2)
  CHECK(derived["pipeline_bubble"].get<double>() == Approx(1.0 / 33.0));
  CHECK(document["jobs"][0]["unresolved"].empty());
}

TEST_CASE("resolve of a script that launches nothing has no job and says so", "[resolve]") {
  TempDir temp;
  temp.write("prepare.sh", "#!/bin/bash\npython download.py --out /data\n");
  Run run = run_mblint({"resolve", "prepare.sh", "--format", "json"}, temp.dir);
  CHECK(run.code == kExitFindings);
  json document = json::parse(run.out);
  check_contract(document);
  CHECK(document["jobs"].empty());
  CHECK(run.err.find("no-training-job") != std::string::npos);
}

TEST_CASE("resolve shows the jobs check checks, with --set and the recipe", "[resolve]") {
  TempDir temp;
  temp.write("override.yaml", "model:\n  tensor_model_parallel_size: 4\n");
  std::vector<std::string> job_args = {"override.yaml", "--recipe", "llama3_8b_pretrain_config", "--nodes", "1",
                                       "--gpus-per-node", "8", "--set", "train.micro_batch_size=2", "--format", "json"};
  std::vector<std::string> resolve = {"resolve"}, check = {"check"};
  resolve.insert(resolve.end(), job_args.begin(), job_args.end());
  check.insert(check.end(), job_args.begin(), job_args.end());
  json resolved = json::parse(run_mblint(resolve, temp.dir).out);
  json checked = json::parse(run_mblint(check, temp.dir).out);
  check_contract(resolved);
  REQUIRE(resolved["jobs"].size() == checked["jobs"].size());
  const json& job = resolved["jobs"][0];
  CHECK(job["recipe"] == checked["jobs"][0]["recipe"]);
  CHECK(job["recipe"] == "llama3_8b_pretrain_2gpu_h100_bf16_config");
  CHECK(job["settings"]["model.tensor_model_parallel_size"]["layer"] == "config file");
  CHECK(job["settings"]["model.tensor_model_parallel_size"]["line"] == 2);
  CHECK(job["settings"]["train.micro_batch_size"]["value"] == 2);
  CHECK(job["settings"]["train.micro_batch_size"]["layer"] == "command line");
  CHECK(job["settings"]["train.micro_batch_size"]["file"] == "<command-line>");
  CHECK(job["settings"]["model.num_layers"]["layer"] == "recipe");
  CHECK(job["settings"]["model.num_layers"]["value"] == 32);
  CHECK(job["unresolved"].empty());
  CHECK(checked["jobs"][0]["checked"] == "fully");
}

TEST_CASE("recipes filters the catalog by substring and glob", "[resolve]") {
  TempDir temp;
  json all = json::parse(run_mblint({"recipes", "--format", "json"}, temp.dir).out);
  json glob = json::parse(run_mblint({"recipes", "llama3_8b_*", "--format", "json"}, temp.dir).out);
  json alias = json::parse(run_mblint({"recipes", "LLAMA3_8B_PRETRAIN_CONFIG", "--format", "json"}, temp.dir).out);
  CHECK(all["version"] == 1);
  CHECK(all["recipes"].size() >= 700);
  CHECK(glob["recipes"].size() > 1);
  CHECK(glob["recipes"].size() < all["recipes"].size());
  for (const json& r : glob["recipes"]) CHECK(r["name"].get<std::string>().rfind("llama3_8b_", 0) == 0);
  // A legacy short name finds its canonical recipe.
  REQUIRE(alias["recipes"].size() == 1);
  CHECK(alias["recipes"][0]["name"] == "llama3_8b_pretrain_2gpu_h100_bf16_config");
  CHECK(run_mblint({"recipes", "no_such_model"}, temp.dir).code == kExitFindings);
}

TEST_CASE("resolve walks a directory as check does, one job per launch", "[resolve]") {
  TempDir temp;
  std::filesystem::create_directories(temp.dir / "launch");
  std::string two_nodes = kMegatronScript;
  std::string four_nodes = kMegatronScript;
  four_nodes.replace(four_nodes.find("NNODES=2"), 8, "NNODES=4");
  std::ofstream(temp.dir / "launch" / "a.sh") << two_nodes;
  std::ofstream(temp.dir / "launch" / "b.sh") << four_nodes;
  std::ofstream(temp.dir / "launch" / "notes.md") << "# not a job\n";
  Run run = run_mblint({"resolve", "launch", "--format", "json"}, temp.dir);
  REQUIRE(run.code == kExitClean);
  json document = json::parse(run.out);
  check_contract(document);
  REQUIRE(document["jobs"].size() == 2);
  CHECK(document["jobs"][0]["file"] == "launch/a.sh");
  CHECK(document["jobs"][0]["nodes"] == 2);
  CHECK(document["jobs"][1]["file"] == "launch/b.sh");
  CHECK(document["jobs"][1]["nodes"] == 4);
  CHECK(document["jobs"][1]["world_size"] == 32);
}
