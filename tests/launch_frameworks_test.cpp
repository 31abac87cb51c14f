// Command substitutions mblint evaluates (pure functions of known text) and
// NeMo-RL's `--config` with its `defaults:` chain, in whole lint runs.
#include "tests/lint_run.h"

namespace mblint {

namespace {

bool unresolved_says(const Job& job, std::string_view text) {
  for (const Unresolved& u : job.unresolved) {
    if (u.why.find(text) != std::string::npos) return true;
  }
  return false;
}

const char* kTail =
    " --pipeline-model-parallel-size 1 --num-layers 32 --hidden-size 4096 --num-attention-heads 32"
    " --seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 256\n";

// A launch whose TP is `tp` as written in the script.
std::string launch_with_tp(const std::string& tp) {
  return "torchrun --nproc-per-node 8 pretrain_gpt.py --tensor-model-parallel-size " + tp + kTail;
}

std::optional<int64_t> tp_of(const test::LintRun& run) { return run.derived().tensor_parallel.value; }

}  // namespace

TEST_CASE("$(basename \"$0\" .sh) and $(dirname PATH) are the script's name and a directory", "[shell][substitution]") {
  test::LintRun run;
  run.write("tp4.sh", "#!/bin/bash\nNAME=$(basename \"$0\" .sh)\nD=$(dirname /a/b/c.sh)\n"
                      "case \"$NAME-$D\" in tp4-/a/b) TP=4 ;; *) TP=2 ;; esac\n" +
                          launch_with_tp("$TP"));
  run.lint("tp4.sh");
  CHECK(tp_of(run) == 4);
}

TEST_CASE("$0 in a child script is the child; in a sourced file it is the script run", "[shell][substitution]") {
  test::LintRun run;
  run.write("lib.sh", "SOURCED_BY=$(basename $0 .sh)\n");
  run.write("child.sh", "NAME=$(basename $0 .sh)\nif [ \"$NAME\" = child ]; then TP=2; else TP=8; fi\n" +
                            launch_with_tp("$TP"));
  run.write("main.sh", "#!/bin/bash\nsource lib.sh\nif [ \"$SOURCED_BY\" = main ]; then bash child.sh; fi\n");
  run.lint("main.sh");
  CHECK(tp_of(run) == 2);
}

TEST_CASE("realpath of an absolute path and echo | sed 's#A#B#' of known text are evaluated", "[shell][substitution]") {
  test::LintRun run;
  run.write("train.sh", "#!/bin/bash\nROOT=$(realpath /x/y/../z/)\n"
                        "C=$(echo $ROOT/tests/a.yaml | sed 's#tests#configs#')\n"
                        "[ \"$C\" = /x/z/configs/a.yaml ] && TP=4\n" +
                            launch_with_tp("${TP:-1}"));
  run.lint("train.sh");
  CHECK(tp_of(run) == 4);
}

TEST_CASE("substitutions that are not pure, or whose text is not known, stay unknown", "[shell][substitution]") {
  // A regular expression, a relative realpath, an unknown argument, another
  // command, two commands: each leaves TP unknown.
  for (const char* code : {"$(echo a.b | sed 's/a.b/4/')", "$(realpath ../x)", "$(basename $UNSET_DIR)",
                           "$(nproc)", "$(basename a; basename b)", "$(echo 4 | sed 's/4/&/')"}) {
    test::LintRun run;
    run.write("train.sh", std::string("#!/bin/bash\nTP=") + code + "\n" + launch_with_tp("$TP"));
    run.lint("train.sh");
    INFO(code);
    CHECK(!tp_of(run));
    CHECK(run.fired("unchecked-job"));  // said, located, never guessed
  }
}

TEST_CASE("NeMo-RL: --config with a defaults: chain, overrides last", "[launch][nemo-rl]") {
  test::LintRun run;
  run.write("examples/configs/base.yaml",
            "policy:\n  model_name: some/model\n  train_global_batch_size: 128\n  train_micro_batch_size: 2\n"
            "  max_total_sequence_length: 1024\n  megatron_cfg:\n    enabled: false\n"
            "    tensor_model_parallel_size: 2\n    pipeline_model_parallel_size: 1\n"
            "    context_parallel_size: 1\n    expert_model_parallel_size: 1\n"
            "    expert_tensor_parallel_size: 1\n    sequence_parallel: true\n"
            "cluster:\n  gpus_per_node: 1\n  num_nodes: 1\n");
  run.write("examples/configs/recipes/mid.yaml",
            "defaults: ../base.yaml\npolicy:\n  max_total_sequence_length: 4096\n  megatron_cfg:\n"
            "    enabled: true\n    pipeline_model_parallel_size: 2\ncluster:\n  gpus_per_node: 8\n  num_nodes: 2\n");
  run.write("examples/configs/recipes/leaf.yaml", "defaults: ./mid.yaml\npolicy:\n  megatron_cfg:\n"
                                                  "    tensor_model_parallel_size: 4\n");
  run.write("tests/run.sh", "#!/bin/bash\ncd ..\nuv run examples/run_dpo.py --config "
                            "examples/configs/recipes/leaf.yaml policy.train_global_batch_size=64 $@\n");
  const Job& job = run.lint("tests/run.sh");
  const Derived& d = run.derived();
  CHECK(job.dialect == Dialect::MegatronLM);
  CHECK(d.tensor_parallel.value == 4);    // leaf
  CHECK(d.pipeline_parallel.value == 2);  // mid
  CHECK(d.context_parallel.value == 1);   // base
  CHECK(as_int(find_path(job.config, "train.global_batch_size")) == 64);  // the override
  CHECK(as_int(find_path(job.config, "train.micro_batch_size")) == 2);
  CHECK(as_int(find_path(job.config, "model.seq_length")) == 4096);
  CHECK(job.cluster.nodes.value == 2);
  CHECK(job.cluster.gpus_per_node.value == 8);
  // The value is located in the file that set it.
  const ConfigValue* tp = find_path(job.config, "model.tensor_model_parallel_size");
  REQUIRE(tp);
  CHECK(run.sources.files[tp->where.value.file].path.find("leaf.yaml") != std::string::npos);
  CHECK(run.text(tp->where.value) == "4");
  // Settings the config leaves out are unknown, not Megatron-LM's defaults.
  const ConfigValue* optimizer = find_path(job.config, "ddp.use_distributed_optimizer");
  REQUIRE(optimizer);
  CHECK(optimizer->is_unknown());
}

TEST_CASE("NeMo-RL: a missing or cyclic parent is reported; a DTensor policy is no Megatron training",
          "[launch][nemo-rl]") {
  SECTION("missing parent") {
    test::LintRun run;
    run.write("leaf.yaml", "defaults: ./gone.yaml\npolicy:\n  megatron_cfg:\n    enabled: true\n");
    run.write("run.sh", "#!/bin/bash\npython examples/run_grpo.py --config leaf.yaml\n");
    const Job& job = run.lint("run.sh");
    CHECK(unresolved_says(job, "gone.yaml"));
    CHECK(!run.derived().tensor_parallel.value);  // not set anywhere: unknown, not 1
  }
  SECTION("cycle") {
    test::LintRun run;
    run.write("a.yaml", "defaults: b.yaml\n");
    run.write("b.yaml", "defaults: a.yaml\n");
    run.write("run.sh", "#!/bin/bash\npython examples/run_sft.py --config a.yaml\n");
    const Job& job = run.lint("run.sh");
    CHECK(unresolved_says(job, "inherits from itself"));
  }
  SECTION("DTensor") {
    test::LintRun run;
    run.write("c.yaml", "policy:\n  megatron_cfg:\n    enabled: false\n    tensor_model_parallel_size: 2\n");
    run.write("run.sh", "#!/bin/bash\npython examples/run_sft.py --config c.yaml\n");
    const Job& job = run.lint("run.sh");
    CHECK(!job.trains);
  }
}

}  // namespace mblint

namespace mblint {

TEST_CASE("NeMo-Framework-Launcher: the stage config under launcher_scripts/conf with the stage's overrides",
          "[launch][nemo-launcher]") {
  test::LintRun run;
  run.write("launcher_scripts/conf/peft/llama/squad.yaml",
            "trainer:\n  devices: 8\n  num_nodes: 1\nmodel:\n  tensor_model_parallel_size: 2\n"
            "  pipeline_model_parallel_size: 1\n  global_batch_size: 128\n  micro_batch_size: 4\n"
            "  restore_from_path: /ckpt/llama.nemo\n  data:\n    train_ds:\n      max_seq_length: 4096\n");
  run.write("examples/peft/llama/run.sh",
            "#!/bin/bash\nDIR=$(readlink -f $(dirname $0)/../../..)\n"
            "python3 ${DIR}/launcher_scripts/main.py stages=[peft] peft=${PEFT:-llama/squad} "
            "peft.trainer.devices=4 peft.model.micro_batch_size=1 training.model.micro_batch_size=7\n");
  const Job& job = run.lint("examples/peft/llama/run.sh");
  CHECK(job.dialect == Dialect::NeMo);
  CHECK(job.cluster.gpus_per_node.value == 4);  // the stage's override
  CHECK(job.cluster.nodes.value == 1);
  CHECK(run.derived().tensor_parallel.value == 2);
  CHECK(as_int(find_path(job.config, "train.micro_batch_size")) == 1);  // not another stage's key
  // A fine-tuning config gives the samples' length, not the restored model's.
  CHECK(as_int(find_path(job.config, "dataset.seq_length")) == 4096);
  CHECK(!find_path(job.config, "model.seq_length"));
  // The restored checkpoint's model fills what the file leaves out: unknown, not NeMo's default.
  CHECK(!run.derived().context_parallel.value);
}

TEST_CASE("NeMo-Framework-Launcher: a stage that does not train is no training job", "[launch][nemo-launcher]") {
  test::LintRun run;
  run.write("run.sh", "#!/bin/bash\npython3 /opt/launcher_scripts/main.py stages=[conversion] conversion=gpt3/convert\n");
  const Job& job = run.lint("run.sh");
  CHECK(!job.trains);
}

}  // namespace mblint

namespace mblint {

TEST_CASE("ms-swift megatron sft CONFIG: the file's options, then the command line's", "[launch][ms-swift]") {
  SECTION("read") {
    test::LintRun run;
    run.write("conf/sft.yaml", "model: some/unknown-model\ntensor_model_parallel_size: 2\nmax_length: 2048\n"
                               "micro_batch_size: 4\nloss_scale: default\n");
    run.write("run.sh", "#!/bin/bash\nNPROC_PER_NODE=8 megatron sft conf/sft.yaml --micro_batch_size 1\n");
    const Job& job = run.lint("run.sh");
    CHECK(run.derived().tensor_parallel.value == 2);
    CHECK(as_int(find_path(job.config, "train.micro_batch_size")) == 1);  // the command line wins
    CHECK(as_int(find_path(job.config, "model.seq_length")) == 2048);
    CHECK(!run.fired("entry-point-argument"));  // ms-swift's loss_scale is not Megatron-LM's --loss-scale
    // The Hugging Face config decides whether the model has experts.
    const ConfigValue* experts = find_path(job.config, "model.num_moe_experts");
    REQUIRE(experts);
    CHECK(experts->is_unknown());
  }
  SECTION("missing: anything it sets is unknown, not Megatron-LM's default") {
    test::LintRun run;
    run.write("run.sh", "#!/bin/bash\nNPROC_PER_NODE=8 megatron sft conf/gone.yaml\n");
    const Job& job = run.lint("run.sh");
    CHECK(!run.derived().tensor_parallel.value);
    CHECK(unresolved_says(job, "conf/gone.yaml"));
  }
}

}  // namespace mblint

namespace mblint {

TEST_CASE("a container path is found in the repository above the script; a path the script computes is not",
          "[shell][follow]") {
  test::LintRun run;
  run.write("repo/scripts/models/m.sh", "TP=4\n");
  std::string launch = "torchrun --nproc-per-node 8 pretrain_gpt.py --tensor-model-parallel-size ${TP:-2}"
                       " --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096"
                       " --max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 256\n";
  run.write("repo/examples/x/run.sh", "#!/bin/bash\nsource /root/repo/scripts/models/m.sh\n" + launch);
  run.write("repo/examples/x/wrong.sh",
            "#!/bin/bash\nsource \"$(dirname \"$0\")/../scripts/models/m.sh\"\n" + launch);
  run.lint("repo/examples/x/run.sh");
  CHECK(run.derived().tensor_parallel.value == 4);
  const Job& job = run.lint("repo/examples/x/wrong.sh");  // repo/examples/scripts/models/m.sh: not there
  CHECK(run.derived().tensor_parallel.value == 2);
  CHECK(std::any_of(job.unresolved.begin(), job.unresolved.end(),
                    [](const Unresolved& u) { return u.what == "sourced file"; }));
}

TEST_CASE("slime: the global batch from --num-steps-per-rollout", "[launch][slime]") {
  test::LintRun run;
  run.write("run.sh", "#!/bin/bash\npython3 train.py --actor-num-nodes 1 --actor-num-gpus-per-node 8 "
                      "--rollout-batch-size 128 --n-samples-per-prompt 8 --num-steps-per-rollout 4\n");
  const Job& job = run.lint("run.sh");
  CHECK(as_int(find_path(job.config, "train.global_batch_size")) == 256);
  test::LintRun unknown;
  unknown.write("run.sh", "#!/bin/bash\npython3 train.py --actor-num-nodes 1 --actor-num-gpus-per-node 8 "
                          "--rollout-batch-size $RB --n-samples-per-prompt 8 --num-steps-per-rollout 4\n");
  const Job& other = unknown.lint("run.sh");
  CHECK(!as_int(find_path(other.config, "train.global_batch_size")));
}

}  // namespace mblint

namespace mblint {

TEST_CASE("NeMo Hydra application: --config-path/--config-name with trainer.* and model.* overrides",
          "[launch][nemo-hydra]") {
  SECTION("read") {
    test::LintRun run;
    run.write("conf/sft.yaml", "trainer:\n  devices: 8\n  num_nodes: 1\nmodel:\n  tensor_model_parallel_size: 2\n"
                               "  micro_batch_size: 4\n  global_batch_size: 64\n  data:\n    train_ds:\n"
                               "      micro_batch_size: ${model.micro_batch_size}\n      global_batch_size: 32\n");
    run.write("run.sh", "#!/bin/bash\ntorchrun --nproc_per_node=2 train_gpt_sft.py --config-path=conf "
                        "--config-name=sft trainer.devices=2 model.data.train_ds.micro_batch_size=1\n");
    const Job& job = run.lint("run.sh");
    CHECK(job.dialect == Dialect::NeMo);
    CHECK(run.derived().tensor_parallel.value == 2);
    CHECK(job.cluster.gpus_per_node.value == 2);  // torchrun's processes
    // NeMo's fine-tuning takes the batch from data.train_ds.
    CHECK(as_int(find_path(job.config, "train.micro_batch_size")) == 1);
    CHECK(as_int(find_path(job.config, "train.global_batch_size")) == 32);
    CHECK(!run.fired("override-syntax"));  // NeMo's keys are not Bridge overrides
  }
  SECTION("not read: the overrides only, NeMo's defaults unknown") {
    test::LintRun run;
    run.write("run.sh", "#!/bin/bash\ntorchrun --nproc_per_node=2 train_gpt_sft.py --config-path=$(pwd)/conf "
                        "--config-name=sft trainer.devices=2 model.data.train_ds.global_batch_size=4\n");
    const Job& job = run.lint("run.sh");
    CHECK(!run.derived().tensor_parallel.value);
    CHECK(as_int(find_path(job.config, "train.global_batch_size")) == 4);
    CHECK(std::any_of(job.unresolved.begin(), job.unresolved.end(),
                      [](const Unresolved& u) { return u.what == "config file"; }));
  }
}

}  // namespace mblint
