// Silence has to be earned: what mblint could not resolve about a job is
// reported (lint/facts/coverage.h), checks the known values decide still fire, a
// fix is re-checked before it is offered (lint/fix/fix_verify.h), and one value
// that breaks several checks gives one error (lint/run/root_cause.h).
#include <catch2/catch.hpp>

#include <algorithm>

#include "tests/lint_run.h"

using namespace mblint;
using mblint::test::LintRun;

namespace {

const Diagnostic* finding(const LintResult& result, std::string_view rule) {
  for (const Diagnostic& d : result.diagnostics) {
    if (d.rule == rule) return &d;
  }
  return nullptr;
}

std::vector<std::string> gap_names(const Derived& d) {
  std::vector<std::string> out;
  for (const CoverageGap& gap : d.coverage.gaps) out.push_back(gap.what);
  return out;
}

}  // namespace

TEST_CASE("a YAML without a recipe is checked partly, and says which values the recipe would give", "[coverage]") {
  LintRun run;
  run.write("override.yaml", "model:\n  tensor_model_parallel_size: 2\n");
  run.set_cluster("8", "8");  // any located value will do for the node count
  run.lint("override.yaml");
  const Derived& d = run.derived();
  REQUIRE(gap_names(d) == std::vector<std::string>{"recipe unknown"});
  const CoverageGap& gap = d.coverage.gaps.front();
  // TP is written in the file; what the recipe would set is not known.
  CHECK(std::find(gap.unknown.begin(), gap.unknown.end(), "tensor_model_parallel_size") == gap.unknown.end());
  CHECK(std::find(gap.unknown.begin(), gap.unknown.end(), "pipeline_model_parallel_size") != gap.unknown.end());
  CHECK(std::find(gap.unknown.begin(), gap.unknown.end(), "num_layers") != gap.unknown.end());
  const Diagnostic* note = finding(run.result, "unchecked-job");
  REQUIRE(note);
  CHECK(note->severity == Severity::Note);
  REQUIRE(run.result.coverage.size() == 1);
  CHECK(!run.result.coverage[0].coverage.complete());
}

TEST_CASE("require_complete turns the coverage note into an error", "[coverage]") {
  LintRun run;
  run.write("override.yaml", "model:\n  tensor_model_parallel_size: 2\n");
  run.options.thresholds.require_complete = true;
  run.lint("override.yaml");
  const Diagnostic* note = finding(run.result, "unchecked-job");
  REQUIRE(note);
  CHECK(note->severity == Severity::Error);
}

TEST_CASE("a job with every core value known is checked fully and gets no coverage note", "[coverage]") {
  LintRun run;
  run.write("launch.sh",
            "#!/bin/bash\n#SBATCH --nodes=1\ntorchrun --nproc-per-node 8 pretrain_gpt.py --tensor-model-parallel-size 2 "
            "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 "
            "--max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 256 "
            "--use-distributed-optimizer\n");
  run.lint("launch.sh");
  CHECK(run.derived().coverage.complete());
  CHECK(!finding(run.result, "unchecked-job"));
}

TEST_CASE("a value from an unknown variable is a located gap", "[coverage]") {
  LintRun run;
  run.write("launch.sh",
            "#!/bin/bash\n#SBATCH --nodes=1\ntorchrun --nproc-per-node 8 pretrain_gpt.py --tensor-model-parallel-size $TP "
            "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 "
            "--max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 256\n");
  run.lint("launch.sh");
  const Derived& d = run.derived();
  REQUIRE(!d.coverage.complete());
  const CoverageGap& gap = d.coverage.gaps.front();
  CHECK(gap.what == "tensor_model_parallel_size unknown");
  REQUIRE(gap.where.valid());
  CHECK(run.text(gap.where) == "$TP");
}

TEST_CASE("a sourced file before the launch leaves the job partly checked; one after it does not", "[coverage]") {
  const std::string launch =
      "torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
      "--seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 256\n";
  {
    LintRun run;
    run.write("launch.sh", "#!/bin/bash\n#SBATCH --nodes=1\nsource ./env/model.sh\n" + launch);
    run.lint("launch.sh");
    CHECK(gap_names(run.derived()) == std::vector<std::string>{"sourced file not followed"});
  }
  {
    LintRun run;
    run.write("launch.sh", "#!/bin/bash\n#SBATCH --nodes=1\nsource .venv/bin/activate\n" + launch +
                               "source ./cleanup.sh\n");
    run.lint("launch.sh");
    CHECK(run.derived().coverage.complete());  // a virtualenv cannot change the job; the later file runs after it
  }
}

TEST_CASE("known sizes decide the world-size check although the recipe is unknown", "[coverage]") {
  LintRun run;
  run.write("override.yaml", "model:\n  tensor_model_parallel_size: 4\n  pipeline_model_parallel_size: 4\n");
  run.set_cluster("1", "8");
  run.lint("override.yaml");
  const Diagnostic* error = finding(run.result, "world-size-divisibility");
  REQUIRE(error);
  CHECK(error->message.find("whatever context_parallel_size is") != std::string::npos);
}

TEST_CASE("known sizes that divide the world size leave the check undecided, not failed", "[coverage]") {
  LintRun run;
  run.write("override.yaml", "model:\n  tensor_model_parallel_size: 2\n  pipeline_model_parallel_size: 2\n");
  run.set_cluster("1", "8");
  run.lint("override.yaml");
  CHECK(!finding(run.result, "world-size-divisibility"));
}

TEST_CASE("a fix that would leave a new finding is not offered", "[coverage][fix]") {
  // TP 16 on 2 nodes of 8 GPUs: "set nodes to 4" keeps TP 16 across two
  // nodes (tp-crosses-nvlink-domain); TP 8 fits.
  LintRun run;
  run.write("launch.sh",
            "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\ntorchrun --nnodes 2 --nproc-per-node 8 "
            "scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config model.tensor_model_parallel_size=16\n");
  run.lint("launch.sh");
  const Diagnostic* error = finding(run.result, "world-size-divisibility");
  REQUIRE(error);
  std::vector<std::string> fixes;
  for (const Fix& fix : error->fixes) fixes.push_back(fix.description);
  CHECK(std::find(fixes.begin(), fixes.end(), "set nodes to 4") == fixes.end());
  CHECK(std::find(fixes.begin(), fixes.end(), "set tensor_model_parallel_size to 8") != fixes.end());
  CHECK(error->help.find("nodes") == std::string::npos);
}

TEST_CASE("one value that breaks several checks gives one error with the others as notes", "[coverage]") {
  // TP 3 on 16 GPUs for Llama 3 8B (32 heads, 8 query groups, CP 2): the
  // heads, the query groups and the world size all fail on the same value.
  LintRun run;
  run.write("override.yaml", "model:\n  tensor_model_parallel_size: 3\n");
  run.options.recipe = run.value("llama3_8b_pretrain_config");
  run.set_cluster("2", "8");
  run.lint("override.yaml");
  CHECK(run.errors() == 1);
  const Diagnostic& root = run.result.diagnostics.front();
  size_t folded = std::count_if(root.notes.begin(), root.notes.end(), [](const Note& n) {
    return n.message.rfind("the same value also fails", 0) == 0;
  });
  CHECK(folded >= 2);
  // Every fix left is a TP that fixes all of them (2 or 4: 8 x CP 2 = 16
  // divides 16 too, but so does the world size).
  REQUIRE(!root.fixes.empty());
  for (const Fix& fix : root.fixes) CHECK(fix.description.rfind("set tensor_model_parallel_size to ", 0) == 0);
}

TEST_CASE("a launch script with no training launch says so and names the hand-offs", "[coverage]") {
  LintRun run;
  run.write("launch.sh", "#!/bin/bash\nsource ./models/qwen3.sh\neval \"$RUN\"\nbash other.sh\n");
  run.lint("launch.sh");
  const Diagnostic* note = finding(run.result, "no-training-job");
  REQUIRE(note);
  CHECK(note->notes.size() == 3);
  CHECK(run.result.coverage.empty());
}
