// Building jobs from YAML files and command-line layers; derived quantities.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>

#include <fmt/format.h>

#include "lint/cli/cli.h"
#include "lint/facts/derived.h"
#include "lint/run/lint.h"
#include "rules/registry.h"
#include "tests/lint_run.h"
#include "tests/test_support.h"

using namespace mblint;

namespace {

struct Fixture : test::LintRun {
  Fixture() : test::LintRun("mblint-job") {}
};

}  // namespace

TEST_CASE("a recipe's values are located at the --recipe argument with the recipe named", "[job]") {
  Fixture f;
  f.write("o.yaml", "train:\n  train_iters: 10\n");
  f.options.recipe = f.value("llama3_70b_pretrain_config");
  const Job& job = f.lint("o.yaml");
  REQUIRE(job.recipe);
  CHECK(std::string(job.recipe->name) == "llama3_70b_pretrain_32gpu_h100_bf16_config");
  const ConfigValue* cp = find_path(job.config, "model.context_parallel_size");
  REQUIRE(cp);
  CHECK(as_int(cp) == 2);
  CHECK(cp->where.layer == Layer::Recipe);
  CHECK(f.text(primary_span(cp->where)) == "llama3_70b_pretrain_config");
  CHECK(cp->where.origin.find("llama3_70b_pretrain_32gpu_h100_bf16_config") != std::string::npos);
  CHECK(*f.derived().num_layers == 80);
  CHECK(*f.derived().num_query_groups == 8);
}

TEST_CASE("layers: recipe <- YAML <- --set, each value keeping where it was written", "[job]") {
  Fixture f;
  f.write("o.yaml", "model:\n  tensor_model_parallel_size: 8\n  pipeline_model_parallel_size: 2\n");
  f.options.recipe = f.value("llama3_70b_pretrain_32gpu_h100_bf16_config");
  f.options.sets = {f.value("model.pipeline_model_parallel_size=8")};
  const Job& job = f.lint("o.yaml");
  const ConfigValue* tp = find_path(job.config, "model.tensor_model_parallel_size");
  CHECK(as_int(tp) == 8);
  CHECK(tp->where.layer == Layer::ConfigFile);
  REQUIRE(tp->earlier.size() == 1);
  CHECK(tp->earlier[0].layer == Layer::Recipe);
  const ConfigValue* pp = find_path(job.config, "model.pipeline_model_parallel_size");
  CHECK(as_int(pp) == 8);
  CHECK(pp->where.layer == Layer::CommandLine);
  CHECK(f.text(pp->where.statement) == "model.pipeline_model_parallel_size=8");
  CHECK(pp->earlier.size() == 2);
}

TEST_CASE("Hydra struct mode: missing keys, + on existing keys, ++, ~", "[job]") {
  Fixture f;
  f.write("o.yaml", "train:\n  train_iters: 10\n");
  f.options.recipe = f.value("llama3_8b_pretrain_2gpu_h100_bf16_config");
  SECTION("a key that is not a field cannot be changed") {
    f.options.sets = {f.value("train.global_bach_size=8")};
    f.lint("o.yaml");
    REQUIRE(f.fired("override-syntax"));
    auto syntax = std::find_if(f.result.diagnostics.begin(), f.result.diagnostics.end(),
                               [](const Diagnostic& d) { return d.rule == "override-syntax"; });
    CHECK(syntax->help.find("train.global_batch_size") != std::string::npos);
  }
  SECTION("+ on an existing field fails, ++ works") {
    f.options.sets = {f.value("+train.global_batch_size=8")};
    f.lint("o.yaml");
    CHECK(f.fired("override-syntax"));
    f.options.sets = {f.value("++train.global_batch_size=8")};
    const Job& job = f.lint("o.yaml");
    CHECK_FALSE(f.fired("override-syntax"));
    CHECK(as_int(find_path(job.config, "train.global_batch_size")) == 8);
  }
  SECTION("a dict value merges into the section") {
    f.options.sets = {f.value("train={micro_batch_size:4}")};
    const Job& job = f.lint("o.yaml");
    CHECK(as_int(find_path(job.config, "train.micro_batch_size")) == 4);
    CHECK(as_int(find_path(job.config, "train.train_iters")) == 10);
  }
  SECTION("deleting a field leaves the recipe value") {
    f.options.sets = {f.value("~train.global_batch_size")};
    const Job& job = f.lint("o.yaml");
    CHECK(as_int(find_path(job.config, "train.global_batch_size")) == 512);
  }
}

TEST_CASE("interpolations resolve inside the config; resolvers stay unknown", "[job]") {
  Fixture f;
  f.write("o.yaml",
          "dataset:\n  seq_length: 4096\nmodel:\n  seq_length: ${dataset.seq_length}\n"
          "  tensor_model_parallel_size: ${oc.env:TP}\n  context_parallel_size: ${.tensor_model_parallel_size}\n");
  const Job& job = f.lint("o.yaml");
  const ConfigValue* seq = find_path(job.config, "model.seq_length");
  CHECK(as_int(seq) == 4096);
  CHECK(f.text(seq->where.value) == "4096");  // where the number was written
  CHECK(f.text(seq->where.interpolated_at) == "${dataset.seq_length}");
  CHECK(find_path(job.config, "model.tensor_model_parallel_size")->is_unknown());
  CHECK(find_path(job.config, "model.context_parallel_size")->is_unknown());
  // Nothing fails; what stays unknown is said, once.
  REQUIRE(f.result.diagnostics.size() == 1);
  CHECK(f.result.diagnostics[0].rule == "unchecked-job");
  CHECK(f.result.diagnostics[0].message.find("tensor_model_parallel_size unknown") != std::string::npos);
}

TEST_CASE("builder-backed model.transformer.* keys are read as model.*", "[job]") {
  Fixture f;
  f.write("o.yaml", "model:\n  transformer:\n    tensor_model_parallel_size: 4\n");
  const Job& job = f.lint("o.yaml");
  CHECK(job.builder_backed_model);
  CHECK(as_int(find_path(job.config, "model.tensor_model_parallel_size")) == 4);
}

TEST_CASE("a full dump is typed by PyYAML and unset fields take dataclass defaults", "[job]") {
  Fixture f;
  f.write("dump.yaml",
          "_target_: megatron.bridge.training.config.ConfigContainer\n"
          "model:\n  _target_: megatron.bridge.models.gpt_provider.GPTModelProvider\n"
          "  tensor_model_parallel_size: 2\n  num_layers: 4\n  num_attention_heads: 8\n"
          "optimizer:\n  lr: 1e-4\n");
  const Job& job = f.lint("dump.yaml");
  CHECK(job.kind == InputKind::BridgeDump);
  CHECK(job.config_complete);
  CHECK(find_path(job.config, "optimizer.lr")->kind == ValueKind::String);
  CHECK(*f.derived().pipeline_parallel == 1);
  CHECK(f.derived().pipeline_parallel.defaulted);
  CHECK(*f.derived().context_parallel == 1);
}

TEST_CASE("files that are not Megatron Bridge configs are skipped silently", "[job]") {
  Fixture f;
  // NeMo-RL (NeMo 1.x trainer + model files are read as the NeMo dialect).
  f.write("nemo_rl.yaml", "policy:\n  megatron_cfg:\n    tensor_model_parallel_size: 3\n"
                          "cluster:\n  gpus_per_node: 8\n  num_nodes: 1\n");
  const Job& job = f.lint("nemo_rl.yaml");
  CHECK(job.kind == InputKind::NotAConfig);
  CHECK(f.result.diagnostics.empty());
}

TEST_CASE("derived sizes: DP, expert DP, microbatches, lcm minimum, bubble", "[derived]") {
  Fixture f;
  f.write("o.yaml",
          "model:\n  tensor_model_parallel_size: 4\n  pipeline_model_parallel_size: 2\n  context_parallel_size: 1\n"
          "  expert_model_parallel_size: 6\n  expert_tensor_parallel_size: 1\n"
          "  virtual_pipeline_model_parallel_size: null\n  num_layers: 8\n"
          "train:\n  global_batch_size: 48\n  micro_batch_size: 2\n");
  f.set_cluster("3", "8");
  f.lint("o.yaml");
  const Derived& d = f.derived();
  CHECK(*d.world_size == 24);
  CHECK(*d.data_parallel == 3);
  CHECK(*d.expert_data_parallel == 2);
  CHECK(*d.min_gpus == 24);  // 2 x lcm(4, 6): the max formula would say 12, which cannot host TP 4
  CHECK(*d.microbatches == 8);
  REQUIRE(d.bubble);
  CHECK(*d.bubble == Approx(1.0 / (8.0 + 1.0)));  // PP 2, 8 microbatches: 1 idle slot in 9
}

TEST_CASE("pipeline bubble: the idle share of the step, in Derived and in pipeline-bubble's message", "[derived]") {
  // Written out here rather than taken from the code under test: with v model
  // chunks per rank and m microbatches, a 1F1B step runs v*m work slots per
  // stage plus p-1 slots of fill and drain, idle on every stage.
  auto idle_share = [](int p, int v, int m) { return double(p - 1) / double(v * m + p - 1); };
  struct Case {
    int p, v, m;
  };
  // Llama 3 70B has 80 layers; TP 8 on p nodes of 8 GPUs leaves DP 1, so GBS = m.
  for (Case c : {Case{8, 1, 2}, Case{8, 1, 16}, Case{4, 1, 8}, Case{2, 1, 4}, Case{5, 1, 11}, Case{4, 2, 4},
                 Case{8, 5, 8}, Case{16, 5, 16}}) {
    INFO("PP " << c.p << " VPP " << c.v << " m " << c.m);
    Fixture f;
    f.write("o.yaml", fmt::format("model:\n  tensor_model_parallel_size: 8\n  pipeline_model_parallel_size: {}\n"
                                  "  context_parallel_size: 1\n  virtual_pipeline_model_parallel_size: {}\n"
                                  "train:\n  global_batch_size: {}\n  micro_batch_size: 1\n",
                                  c.p, c.v > 1 ? std::to_string(c.v) : "null", c.m));
    f.options.recipe = f.value("llama3_70b_pretrain_32gpu_h100_bf16_config");
    f.set_cluster(std::to_string(c.p), "8");
    f.lint("o.yaml");
    double expected = idle_share(c.p, c.v, c.m);
    REQUIRE(f.derived().bubble);
    CHECK(*f.derived().bubble == Approx(expected));
    const Diagnostic* bubble = nullptr;
    for (const Diagnostic& d : f.result.diagnostics) {
      if (d.rule == "pipeline-bubble") bubble = &d;
    }
    if (expected <= 0.25) {  // the default threshold: the idle share, not the bubble-to-compute ratio
      CHECK(bubble == nullptr);
      continue;
    }
    REQUIRE(bubble != nullptr);
    std::string percent = fmt::format("idles for {}% of every step", static_cast<int>(std::lround(expected * 100)));
    CHECK(bubble->message.find(percent) != std::string::npos);
    CHECK(bubble->message.find("%") == bubble->message.rfind("%"));  // one figure, the idle share
  }
}

TEST_CASE("Megatron-LM weight shards (GTP) join the model-parallel group; the batch is split over DP x GTP",
          "[derived]") {
  Fixture f;
  f.write("launch.sh", "#!/bin/bash\ntorchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 4 --hidden-size 1024 "
                       "--num-attention-heads 16 --seq-length 2048 --max-position-embeddings 2048 --micro-batch-size 1 "
                       "--global-batch-size 16 --bf16 --tensor-model-parallel-size 2 "
                       "--tensor-parallel-num-weight-shards 4\n");
  f.lint("launch.sh");
  const Derived& d = f.derived();
  CHECK(*d.weight_shard_groups == 2);          // 4 shards / TP 2
  CHECK(*d.data_parallel == 2);                // 8 / (TP 2 x PP 1 x CP 1 x GTP 2): the replicas
  CHECK(*d.batch_data_parallel == 4);          // each GTP rank takes its own micro-batch
  CHECK(*d.microbatches == 4);                 // 16 / (1 x 4)
  CHECK(*d.min_gpus == 4);
  // Megatron-Core 0.18 has no such flag: no GTP, DP 4.
  f.options.megatron_core_version = f.value("0.18.0");
  f.lint("launch.sh");
  CHECK(*f.derived().weight_shard_groups == 1);
  CHECK(*f.derived().data_parallel == 4);
  CHECK(*f.derived().batch_data_parallel == 4);
}

TEST_CASE("the NVLink domain stops at the node on HGX systems, not on NVL72 racks", "[derived]") {
  struct Case {
    const char* gpu;
    const char* per_node;
    int64_t domain;
  };
  for (Case c : {Case{"h100", "4", 4}, Case{"h100", "8", 8}, Case{"b200", "2", 2}, Case{"gb200", "4", 72},
                 Case{"gb300", "2", 72}, Case{"vr200", "4", 72}, Case{"gh200", "4", 4}, Case{"gh200-144gb", "2", 2}}) {
    INFO(c.gpu << " with " << c.per_node << " GPUs per node");
    Fixture f;
    f.write("o.yaml", "model:\n  tensor_model_parallel_size: 2\n");
    f.options.recipe = f.value("llama3_8b_pretrain_2gpu_h100_bf16_config");
    f.set_cluster("2", c.per_node);
    f.options.gpu = f.value(c.gpu);
    f.lint("o.yaml");
    CHECK(*f.derived().nvlink_domain == c.domain);
  }
}

TEST_CASE("unset ETP: 1 on Bridge >= 0.6 when EP > 1, TP on older releases", "[derived]") {
  Fixture f;
  f.write("o.yaml", "train:\n  train_iters: 1\n");
  f.options.recipe = f.value("qwen3_30b_a3b_pretrain_8gpu_h100_bf16_config");
  f.options.sets = {f.value("model.expert_tensor_parallel_size=null")};
  f.lint("o.yaml");
  CHECK(*f.derived().expert_tensor_parallel == 1);
  f.options.bridge_version = f.value("0.5");
  f.lint("o.yaml");
  CHECK(*f.derived().expert_tensor_parallel == *f.derived().tensor_parallel);
}

TEST_CASE("merging wide maps: every overlay key wins or is added, in order", "[job]") {
  // More than 256 key pairs takes the indexed path; short keys live inside
  // their entries, so the merge must not move the entries it indexed.
  // (Built with append, not "k" + std::string: GCC 12's -Wrestrict false positive.)
  auto key = [](size_t i) {
    std::string text = "k";
    text += std::to_string(i);
    return text;
  };
  for (size_t base_keys : {size_t{8}, size_t{40}, size_t{300}}) {
    ConfigValue base = make_map();
    for (size_t i = 0; i < base_keys; ++i) base.entries.push_back({key(i), make_int(int64_t(i))});
    base.entries.shrink_to_fit();  // the merge has to grow the vector
    ConfigValue overlay = make_map();
    for (size_t i = base_keys / 2; i < base_keys + 20; ++i) {
      overlay.entries.push_back({key(i), make_int(int64_t(1000 + i))});
    }
    merge_into(base, overlay);
    REQUIRE(base.entries.size() == base_keys + 20);
    for (size_t i = 0; i < base.entries.size(); ++i) {
      CHECK(base.entries[i].key == key(i));
      CHECK(base.entries[i].value.integer == int64_t(i < base_keys / 2 ? i : 1000 + i));
    }
  }
}
