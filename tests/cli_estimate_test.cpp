// `mblint estimate`: the JSON object on top of the core contract, the text
// breakdown with bars only on a terminal, usage errors, and the measured
// 7B runs of Megatron-LM's CI when ../shared is present.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "lint/cli/cli.h"
#include "rules/registry.h"
#include "tests/cli_run.h"
#include "tests/test_support.h"

using namespace mblint;

namespace {

using Run = test::CliRun;
using test::run_mblint;

// A 7B GPT on 8 H100s, TP 2 x PP 2 x DP 2, 4 micro-batches.
const char* kJob =
    "MODEL_ARGS:\n  --num-layers: 32\n  --hidden-size: 4096\n  --num-attention-heads: 32\n"
    "  --seq-length: 4096\n  --max-position-embeddings: 4096\n  --micro-batch-size: 1\n"
    "  --global-batch-size: 8\n  --tensor-model-parallel-size: 2\n  --pipeline-model-parallel-size: 2\n"
    "  --sequence-parallel: true\n  --use-distributed-optimizer: true\n  --bf16: true\n";

struct Dir {
  std::filesystem::path path = test::make_temp_dir("mblint-estimate");
  Dir() { std::ofstream(path / "model_config.yaml") << kJob; }
  ~Dir() { std::filesystem::remove_all(path); }
};

}  // namespace

TEST_CASE("estimate --format json adds the estimate object to the core contract", "[cli][estimate]") {
  Dir dir;
  Run r = run_mblint({"estimate", "model_config.yaml", "--nodes", "1", "--gpus-per-node", "8", "--gpu", "h100",
                      "--format", "json"},
                     dir.path);
  INFO(r.err);
  CHECK(r.code == 0);
  auto doc = nlohmann::json::parse(r.out);
  CHECK(doc["version"] == 1);
  CHECK(doc["diagnostics"].is_array());
  CHECK(doc["summary"]["files"] == 1);
  const auto& e = doc["estimate"];
  for (const char* key : {"weights", "gradients", "optimizer", "activations", "other", "peak_allocated", "overhead",
                          "total", "capacity"}) {
    INFO(key);
    CHECK(e[key].is_number());
  }
  double sum = e["weights"].get<double>() + e["gradients"].get<double>() + e["optimizer"].get<double>() +
               e["activations"].get<double>() + e["other"].get<double>();
  CHECK(e["peak_allocated"].get<double>() == Approx(sum).margin(0.03));
  CHECK(e["total"].get<double>() == Approx(e["peak_allocated"].get<double>() + e["overhead"].get<double>()).margin(0.02));
  CHECK(e["capacity"].get<double>() == Approx(79.11));
  CHECK(e["microbatches"] == 4);
  CHECK(e["bubble_fraction"].get<double>() == Approx(1.0 / (4 + 1)));  // PP 2, 4 microbatches: 1 idle slot of 5
  REQUIRE(e["stages"].size() == 2);
  CHECK(e["stages"][1]["stage"] == 1);
  double most = std::max(e["stages"][0]["total"].get<double>(), e["stages"][1]["total"].get<double>());
  CHECK(e["total"].get<double>() == Approx(most).margin(0.01));
  CHECK(e["rank"].get<std::string>().find("pipeline stage") != std::string::npos);
}

TEST_CASE("estimate text: bars on a terminal only, and the capacity line", "[cli][estimate]") {
  Dir dir;
  std::vector<std::string> args = {"estimate", "model_config.yaml", "--nodes", "1", "--gpus-per-node", "8", "--gpu",
                                   "h100"};
  Run tty = run_mblint(args, dir.path, {}, true);
  Run plain = run_mblint(args, dir.path);
  CHECK(tty.out.find("\u2588") != std::string::npos);
  CHECK(plain.out.find("\u2588") == std::string::npos);
  CHECK(plain.out.find("GiB of 79.1 GiB (") != std::string::npos);
  CHECK(plain.out.find("most loaded rank:") != std::string::npos);
  CHECK(plain.out.find("per stage (GiB): 0: ") != std::string::npos);
}

TEST_CASE("estimate: usage errors and jobs that cannot be estimated", "[cli][estimate]") {
  Dir dir;
  CHECK(run_mblint({"estimate"}, dir.path).code == kExitUsage);
  CHECK(run_mblint({"estimate", "model_config.yaml", "--format", "xml"}, dir.path).code == kExitUsage);
  std::ofstream(dir.path / "shapeless.yaml") << "MODEL_ARGS:\n  --micro-batch-size: 1\n";
  Run r = run_mblint({"estimate", "shapeless.yaml", "--format", "json"}, dir.path);
  auto doc = nlohmann::json::parse(r.out);
  CHECK(doc["estimate"].is_null());
  CHECK(doc["estimate_unavailable"][0].get<std::string>().find("num_layers") != std::string::npos);
  CHECK(r.code == kExitFindings);
}

TEST_CASE("estimate matches Megatron-LM's measured 7B runs within 5%", "[cli][estimate][shared]") {
  auto shared = test::shared_or_skip("the comparison with the measured 7B runs");
  if (!shared) return;
  // Measured peak max-allocated memory on the last rank (dgx_h100, dev):
  // megatron-core-checks.md section 6.1.
  struct Case {
    const char* name;
    double measured;
  };
  for (Case c : {Case{"gpt3_7b_tp4_pp1_memory_speed", 53.22}, Case{"gpt3_7b_tp1_pp4_memory_speed", 56.55}}) {
    auto path = *shared / "corpus/NVIDIA__Megatron-LM/tests/functional_tests/test_cases/gpt" / c.name / "model_config.yaml";
    Run r = run_mblint(
        {"estimate", path.string(), "--nodes", "1", "--gpus-per-node", "8", "--gpu", "h100", "--format", "json"},
        std::filesystem::current_path());
    auto doc = nlohmann::json::parse(r.out);
    double last = doc["estimate"]["stages"].back()["peak_allocated"].get<double>();
    INFO(c.name << ": " << last << " GiB estimated, " << c.measured << " measured");
    CHECK(std::abs(last / c.measured - 1) < 0.05);
  }
}

TEST_CASE("estimate: a world size TP×PP×CP does not divide is named as such, not as unknown", "[cli][estimate]") {
  Dir dir;
  // 6 GPUs for TP 2 x PP 2: world-size-divisibility reports it; the estimate assumes one replica.
  Run r = run_mblint({"estimate", "model_config.yaml", "--nodes", "1", "--gpus-per-node", "6", "--gpu", "h100",
                      "--format", "json"},
                     dir.path);
  INFO(r.out);
  auto doc = nlohmann::json::parse(r.out);
  REQUIRE(doc["estimate"].is_object());
  std::string assumptions = doc["estimate"]["assumptions"].dump();
  CHECK(assumptions.find("world size 6 is not a multiple of TP×PP×CP = 4") != std::string::npos);
  CHECK(assumptions.find("world size unknown") == std::string::npos);
}

TEST_CASE("estimate --recipe NAME alone estimates the recipe's job, as an override that changes nothing would", "[cli][estimate]") {
  Dir dir;
  // The recipe's own tensor parallelism: an override that changes nothing.
  std::ofstream(dir.path / "same.yaml") << "model:\n  tensor_model_parallel_size: 1\n";
  std::vector<std::string> job = {"--recipe", "llama3_8b_pretrain_config", "--nodes", "2", "--gpus-per-node", "8",
                                  "--gpu", "h100", "--format", "json"};
  std::vector<std::string> alone = {"estimate"};
  alone.insert(alone.end(), job.begin(), job.end());
  std::vector<std::string> with_file = {"estimate", "same.yaml"};
  with_file.insert(with_file.end(), job.begin(), job.end());
  Run a = run_mblint(alone, dir.path);
  Run b = run_mblint(with_file, dir.path);
  INFO(a.err << b.err);
  CHECK(a.code == b.code);
  auto doc = nlohmann::json::parse(a.out);
  auto reference = nlohmann::json::parse(b.out);
  REQUIRE(doc["estimate"].is_object());
  CHECK(doc["estimate"] == reference["estimate"]);
  CHECK(doc["summary"]["jobs"] == reference["summary"]["jobs"]);
  // The text names the recipe (as the catalog names it), not a file.
  Run text = run_mblint({"estimate", "--recipe", "llama3_8b_pretrain_config", "--nodes", "2", "--gpus-per-node", "8"},
                        dir.path);
  INFO(text.out);
  CHECK(text.out.rfind("memory estimate: recipe llama3_8b_pretrain_", 0) == 0);
  // Neither a file nor a recipe: a usage error that says what is needed.
  Run nothing = run_mblint({"estimate", "--nodes", "2"}, dir.path);
  CHECK(nothing.code == 2);
  CHECK(nothing.err.find("estimate needs a file or --recipe NAME") != std::string::npos);
  // A misspelled recipe is rejected with did-you-mean, as with a file.
  Run typo = run_mblint({"estimate", "--recipe", "llama3_8b_pretrain_confg"}, dir.path);
  CHECK(typo.code == 2);
  CHECK(typo.err.find("llama3_8b_pretrain_config") != std::string::npos);
}

// The GLM-5.2 verification card's H100 checkpoint_resume run (Megatron
// Bridge 067f987df03b, examples/model_verification_cards/glm5-2/card.yaml):
// 352 H100, PP 11 with the card's layout, seq 2048, precision-aware Adam.
TEST_CASE("estimate: the GLM-5.2 card's resumed run, optimizer remainders and the load peak", "[cli][estimate]") {
  Dir dir;
  std::vector<std::string> job = {
      "estimate", "--recipe", "glm52_pretrain_416gpu_h100_bf16_config", "--nodes", "44", "--gpus-per-node", "8",
      "--gpu", "h100", "--format", "json", "--set", "model.seq_length=2048", "--set", "dataset.seq_length=2048",
      "--set", "model.pipeline_model_parallel_size=11", "--set", "model.virtual_pipeline_model_parallel_size=null",
      "--set", "model.microbatch_group_size_per_vp_stage=null", "--set",
      "model.pipeline_model_parallel_layout='Etttttt|tttttttt|tttttttt|tttttttt|tttttttt|tttttttt|tttttttt|"
      "tttttttt|tttttttt|tttt|ttttmL'"};
  auto estimate = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = job;
    args.insert(args.end(), extra.begin(), extra.end());
    Run r = run_mblint(args, dir.path);
    INFO(r.err);
    return nlohmann::json::parse(r.out)["estimate"];
  };
  auto fresh = estimate({});
  auto full_master = estimate({"--set", "optimizer.store_param_remainders=false"});
  // store_param_remainders: 4 + 4 + 2 B of Adam state per parameter, not 4 + 4 + 4.
  CHECK(full_master["optimizer"].get<double>() / fresh["optimizer"].get<double>() == Approx(12.0 / 10.0).epsilon(1e-3));
  CHECK(fresh.find("resume") == fresh.end());
  // Resuming (--load_dir): weights + gradients + twice the optimizer state
  // (TE's FusedAdam holds the master remainders too), above the training step.
  auto resumed = estimate({"--set", "checkpoint.load=/ckpt"});
  double w = resumed["weights"], g = resumed["gradients"], o = resumed["optimizer"];
  CHECK(resumed["peak_allocated"].get<double>() == Approx(w + g + 2 * o).margin(0.02));
  CHECK(resumed["peak_allocated"].get<double>() > fresh["peak_allocated"].get<double>());
  // Fine-tuning from it loads no optimizer state.
  auto finetune = estimate({"--set", "checkpoint.load=/ckpt", "--set", "checkpoint.finetune=true"});
  CHECK(finetune.find("resume") == finetune.end());
}
