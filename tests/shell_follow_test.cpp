// Following `source`, `bash FILE` and `eval` in a whole lint run: what flows
// back, what does not, and the limits that keep bad input bounded.
#include <chrono>

#include <fmt/format.h>

#include "tests/lint_run.h"

namespace mblint {

namespace {

const char* kTail =
    " --num-layers 32 --hidden-size 4096 --num-attention-heads 32"
    " --seq-length 4096 --max-position-embeddings 4096"
    " --micro-batch-size 1 --global-batch-size 256 --use-distributed-optimizer --sequence-parallel\n";

std::string launch_with_tp(const std::string& tp) {
  return "torchrun --nproc-per-node 8 pretrain_gpt.py --tensor-model-parallel-size " + tp + kTail;
}

bool unresolved_says(const Job& job, std::string_view text) {
  for (const Unresolved& u : job.unresolved) {
    if (u.why.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("a sourced file's variables, arrays and functions flow back", "[shell][follow]") {
  test::LintRun run;
  run.write("conf/model.sh", "TP=4\nARGS=(--pipeline-model-parallel-size 2)\nlaunch() { " +
                                 std::string("torchrun --nproc-per-node 8 pretrain_gpt.py \"$@\" ") + kTail + "}\n");
  run.write("train.sh", "#!/bin/bash\n. conf/model.sh\nlaunch --tensor-model-parallel-size $TP ${ARGS[@]}\n");
  const Job& job = run.lint("train.sh");
  CHECK(job.unresolved.empty());
  CHECK(*run.derived().tensor_parallel.value == 4);
  CHECK(*run.derived().pipeline_parallel.value == 2);
  // The launch is written in the sourced file, and the job says so.
  CHECK(run.sources.files[job.launch_span.file].path == "conf/model.sh");
}

TEST_CASE("a child script's variables do not come back; its arguments are bound", "[shell][follow]") {
  test::LintRun run;
  run.write("child.sh", "TP=$1\nexport SEEN=${HIDDEN:-unset}\n" + launch_with_tp("$TP"));
  run.write("main.sh", "#!/bin/bash\nHIDDEN=1\nbash child.sh 2\n" + launch_with_tp("${TP:-8}"));
  run.options.paths = {"main.sh"};
  run.result = run_lint(run.sources, run.options, all_rules());
  REQUIRE(run.result.jobs.size() == 2);
  CHECK(*run.result.derived[0].tensor_parallel.value == 2);  // the child's launch
  CHECK(*run.result.derived[1].tensor_parallel.value == 8);  // TP did not come back
}

TEST_CASE("sourcing is bounded: a chain deeper than the limit is reported, not followed", "[shell][follow]") {
  test::LintRun run;
  // fmt, not std::string's +: GCC 12 at -O2 warns (-Wrestrict, a false positive) on the latter.
  for (int i = 0; i < 12; ++i) run.write(fmt::format("s{}.sh", i), fmt::format("source s{}.sh\n", i + 1));
  run.write("s12.sh", "TP=4\n");
  run.write("train.sh", "#!/bin/bash\nsource s0.sh\n" + launch_with_tp("${TP:-2}"));
  const Job& job = run.lint("train.sh");
  CHECK(unresolved_says(job, "nested more than 8 deep"));
  CHECK(*run.derived().tensor_parallel.value == 2);  // s12.sh never read: TP keeps the script's default
}

TEST_CASE("a sourced file too large for the budget is reported, not read", "[shell][follow]") {
  test::LintRun run;
  std::string big(9u << 20, '#');  // over the 8 MiB a file may have
  big += "\nTP=4\n";
  run.write("big.sh", big);
  run.write("train.sh", "#!/bin/bash\nsource big.sh\n" + launch_with_tp("${TP:-2}"));
  const Job& job = run.lint("train.sh");
  CHECK(unresolved_says(job, "MiB"));
  CHECK(*run.derived().tensor_parallel.value == 2);
}

TEST_CASE("following hand-offs keeps a check fast", "[shell][follow]") {
  test::LintRun run;
  run.write("conf/a.sh", "source conf/b.sh\nA=1\n");
  run.write("conf/b.sh", "B=2\nrun_cmd=\"torchrun --nproc-per-node 8 pretrain_gpt.py --tensor-model-parallel-size 2" +
                             std::string(kTail).substr(0, std::string(kTail).size() - 1) + "\"\n");
  run.write("train.sh", "#!/bin/bash\nsource conf/a.sh\neval $run_cmd\n");
  auto start = std::chrono::steady_clock::now();
  const Job& job = run.lint("train.sh");
  auto elapsed = std::chrono::steady_clock::now() - start;
  CHECK(job.unresolved.empty());
  CHECK(*run.derived().tensor_parallel.value == 2);
  // 20 ms in a release build; this is a -O0 test build, so allow more.
  CHECK(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count() < 500);
}

}  // namespace mblint

namespace mblint {

TEST_CASE("a plain python program without --config-file starts its own workers: no one-process guess",
          "[launch][follow]") {
  test::LintRun run;
  run.write("rl.sh", "#!/bin/bash\nuv run examples/run_dpo.py --config cfg.yaml dpo.max_num_steps=10\n");
  run.lint("rl.sh");
  CHECK_FALSE(run.derived().nodes.known());
  CHECK_FALSE(run.derived().gpus_per_node.known());
  test::LintRun given;
  given.write("nfl.sh", "#!/bin/bash\npython3 main.py training=gpt3/5b training.trainer.num_nodes=2 "
                        "training.trainer.devices=8\n");
  given.lint("nfl.sh");
  CHECK(*given.derived().nodes.value == 2);
  CHECK(*given.derived().gpus_per_node.value == 8);
}

TEST_CASE("verl's Megatron actor: its sizes, not the rollout engine's; verl's defaults otherwise", "[launch][follow]") {
  test::LintRun run;
  run.write("verl.sh", "#!/bin/bash\npython3 -m verl.trainer.main_ppo --config-name=ppo_megatron_trainer \\\n"
                       "  actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2 \\\n"
                       "  actor_rollout_ref.rollout.tensor_model_parallel_size=4 \\\n"
                       "  actor_rollout_ref.actor.use_dynamic_bsz=True \\\n"
                       "  actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4\n");
  run.lint("verl.sh");
  CHECK(*run.derived().tensor_parallel.value == 2);
  CHECK(*run.derived().pipeline_parallel.value == 1);
  CHECK(*run.derived().nodes.value == 1);
  CHECK(*run.derived().gpus_per_node.value == 8);
  CHECK_FALSE(run.derived().micro_batch_size.known());  // sized by tokens
  CHECK_FALSE(run.derived().global_batch_size.known());
}

}  // namespace mblint
