// NeMo 1.x / NeMo-Framework-Launcher YAML read into Bridge's key space:
// detection, the mapping of model.* and trainer.*, Launcher
// self-references, sentinels, checkpoint overlays, --dialect.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "lint/cli/cli.h"
#include "lint/facts/derived.h"
#include "lint/load/dialects/nemo_yaml.h"
#include "lint/load/yaml/yaml_loader.h"
#include "lint/run/lint.h"
#include "rules/registry.h"
#include "tests/lint_run.h"
#include "tests/cli_run.h"
#include "tests/test_support.h"

using namespace mblint;

namespace {

struct Loaded {
  SourceSet sources;
  FileId file = kNoFile;
  ConfigValue root;

  explicit Loaded(const std::string& text) {
    file = add_source(sources, "conf.yaml", text);
    YamlDocument doc = load_yaml(sources, file, YamlFlavor::OmegaConf, Layer::ConfigFile);
    REQUIRE(doc.ok);
    root = doc.root;
  }
  std::string text(Span span) const { return sources.files[file].text.substr(span.begin, span.end - span.begin); }
};

struct Run : test::LintRun {
  Run() : test::LintRun("mblint-nemo") {}
};

const char* kLauncherTraining =
    "run:\n"
    "  name: gpt3_5b\n"
    "  nodes: 4\n"
    "trainer:\n"
    "  num_nodes: ${training.run.nodes}\n"
    "  devices: 8\n"
    "  precision: bf16-mixed\n"
    "exp_manager:\n"
    "  checkpoint_callback_params:\n"
    "    model_parallel_size: ${multiply:${training.model.tensor_model_parallel_size}, "
    "${training.model.pipeline_model_parallel_size}}\n"
    "model:\n"
    "  micro_batch_size: 2\n"
    "  global_batch_size: 128\n"
    "  tensor_model_parallel_size: 4\n"
    "  pipeline_model_parallel_size: 2\n"
    "  virtual_pipeline_model_parallel_size: null\n"
    "  encoder_seq_length: 4096\n"
    "  num_layers: 24\n"
    "  num_attention_heads: 32\n"
    "  num_query_groups: null\n"
    "  sequence_parallel: true\n"
    "  activations_checkpoint_granularity: selective\n"
    "  optim:\n"
    "    name: distributed_fused_adam\n"
    "  data:\n"
    "    seq_length: ${training.model.encoder_seq_length}\n";

}  // namespace

TEST_CASE("NeMo configs are told from other trainer/model files by content", "[nemo]") {
  CHECK(is_nemo_config(Loaded("trainer:\n  devices: 8\nmodel:\n  num_layers: 2\n").root));
  CHECK_FALSE(is_nemo_config(Loaded("model:\n  num_layers: 2\n").root));  // MLPerf model section only
  CHECK_FALSE(is_nemo_config(Loaded("trainer:\n  devices: 8\n").root));
  CHECK_FALSE(is_nemo_config(Loaded("policy:\n  x: 1\ntrainer:\n  a: 1\nmodel:\n  b: 1\n").root));  // NeMo-RL
  CHECK_FALSE(is_nemo_config(
      Loaded("actor_rollout_ref:\n  model:\n    path: x\ntrainer:\n  nnodes: 1\nmodel:\n  b: 1\n").root));  // verl
  CHECK_FALSE(is_nemo_config(Loaded("defaults:\n  - base\n").root));  // a Hydra group file
}

TEST_CASE("NeMo model.* and trainer.* map onto Bridge fields", "[nemo]") {
  Loaded file(kLauncherTraining);
  NemoConfig nemo = read_nemo_config(file.root);
  auto at = [&](std::string_view path) { return find_path(nemo.config, path); };
  CHECK(as_int(at("model.tensor_model_parallel_size")) == 4);
  CHECK(as_int(at("model.pipeline_model_parallel_size")) == 2);
  CHECK(at("model.virtual_pipeline_model_parallel_size")->is_null());
  CHECK(as_int(at("model.seq_length")) == 4096);
  CHECK(as_int(at("model.num_layers")) == 24);
  CHECK(at("model.num_query_groups")->is_null());  // multi-head attention
  CHECK(as_bool(at("model.sequence_parallel")) == true);
  CHECK(as_int(at("train.global_batch_size")) == 128);
  CHECK(as_int(at("train.micro_batch_size")) == 2);
  CHECK(as_string(at("model.recompute_granularity")) == "selective");
  CHECK(as_bool(at("ddp.use_distributed_optimizer")) == true);
  CHECK(as_bool(at("optimizer.use_distributed_optimizer")) == true);
  CHECK(as_bool(at("model.bf16")) == true);
  CHECK(as_bool(at("model.fp16")) == false);
  CHECK(file.text(at("model.tensor_model_parallel_size")->where.value) == "4");
  CHECK(at("model.tensor_model_parallel_size")->where.layer == Layer::ConfigFile);
}

TEST_CASE("Launcher self-references (${training.model...}) resolve against the file", "[nemo]") {
  Loaded file(kLauncherTraining);
  NemoConfig nemo = read_nemo_config(file.root);
  // trainer.num_nodes: ${training.run.nodes} -> 4, located where 4 is written.
  REQUIRE(nemo.cluster.nodes.value == 4);
  CHECK(file.text(nemo.cluster.nodes.where.value) == "4");
  CHECK(file.text(nemo.cluster.nodes.where.interpolated_at) == "${training.run.nodes}");
  CHECK(nemo.cluster.gpus_per_node.value == 8);
  const ConfigValue* data_length = find_path(nemo.config, "dataset.seq_length");
  REQUIRE(data_length);
  CHECK(as_int(data_length) == 4096);
  // Also fine_tuning., peft., evaluation., prompt_learning. ...
  Loaded peft("trainer:\n  num_nodes: ${peft.run.n}\n  devices: 2\nrun:\n  n: 3\n"
              "model:\n  tensor_model_parallel_size: 1\n");
  CHECK(read_nemo_config(peft.root).cluster.nodes.value == 3);
}

TEST_CASE("sentinels and environment-driven values are unknown, never guessed", "[nemo]") {
  Loaded all_gpus("trainer:\n  num_nodes: 1\n  devices: -1\nmodel:\n  tensor_model_parallel_size: -1\n");
  NemoConfig nemo = read_nemo_config(all_gpus.root);
  CHECK_FALSE(nemo.cluster.gpus_per_node.value);
  CHECK(nemo.cluster.gpus_per_node.unknown_because.find("-1") != std::string::npos);
  REQUIRE(find_path(nemo.config, "model.tensor_model_parallel_size"));
  CHECK(find_path(nemo.config, "model.tensor_model_parallel_size")->is_unknown());  // from the checkpoint

  Loaded list("trainer:\n  num_nodes: 1\n  devices: [0]\nmodel:\n  num_layers: 2\n");
  CHECK_FALSE(read_nemo_config(list.root).cluster.gpus_per_node.value);

  Loaded env("trainer:\n  num_nodes: ${oc.env:NNODES}\n  devices: 8\nmodel:\n"
             "  tensor_model_parallel_size: ${oc.decode:${oc.env:TP}}\n");
  NemoConfig from_env = read_nemo_config(env.root);
  CHECK_FALSE(from_env.cluster.nodes.value);
  CHECK(find_path(from_env.config, "model.tensor_model_parallel_size")->is_unknown());
}

TEST_CASE("NeMo defaults fill a training config; a checkpoint overlay stays unknown", "[nemo]") {
  {
    Run run;
    run.write("train.yaml",
              "trainer:\n  num_nodes: 1\n  devices: 8\nmodel:\n  micro_batch_size: 1\n  global_batch_size: 8\n"
              "  num_layers: 4\n");
    const Job& job = run.lint("train.yaml");
    CHECK(job.kind == InputKind::NemoYaml);
    CHECK(job.dialect == Dialect::NeMo);
    const ConfigValue* tp = find_path(job.config, "model.tensor_model_parallel_size");
    REQUIRE(tp);
    CHECK(as_int(tp) == 1);
    CHECK(tp->where.layer == Layer::SchemaDefault);
    CHECK(as_int(find_path(job.config, "model.expert_tensor_parallel_size")) == 1);
    CHECK(*run.result.derived[0].data_parallel == 8);
    CHECK(run.errors() == 0);
  }
  {
    Run run;  // PEFT overlay: TP, layers and heads come from the .nemo file
    run.write("peft.yaml",
              "trainer:\n  num_nodes: 1\n  devices: 2\nmodel:\n  restore_from_path: /models/llama.nemo\n"
              "  micro_batch_size: 1\n  global_batch_size: 128\n  peft:\n    peft_scheme: lora\n");
    const Job& job = run.lint("peft.yaml");
    CHECK_FALSE(find_path(job.config, "model.tensor_model_parallel_size"));
    CHECK_FALSE(run.result.derived[0].data_parallel.known());
    CHECK(run.errors() == 0);
  }
}

TEST_CASE("NeMo jobs go through the same rules", "[nemo]") {
  Run run;
  run.write("train.yaml",
            "trainer:\n  num_nodes: 16\n  devices: 8\n  precision: bf16\nmodel:\n  micro_batch_size: 1\n"
            "  global_batch_size: 32\n  tensor_model_parallel_size: 1\n  pipeline_model_parallel_size: 1\n"
            "  num_layers: 32\n  num_attention_heads: 71\n");
  run.lint("train.yaml");
  CHECK(run.fired("global-batch-divisibility"));  // 32 % (1 x 128)
}

TEST_CASE("the --dialect option forces how a YAML file is read", "[nemo]") {
  {
    Run run;  // a model section alone reads as a Bridge override file...
    run.write("model_config.yaml", "model:\n  tensor_model_parallel_size: 8\n  num_attention_heads: 12\n");
    CHECK(run.lint("model_config.yaml").kind == InputKind::BridgeOverrideYaml);
  }
  {
    Run run;  // ...unless it is said to be NeMo
    run.write("model_config.yaml", "model:\n  tensor_model_parallel_size: 8\n  num_attention_heads: 12\n");
    run.options.dialect = run.value("nemo");
    const Job& job = run.lint("model_config.yaml");
    CHECK(job.kind == InputKind::NemoYaml);
    CHECK(run.fired("heads-divisible-by-tp"));
  }
  {
    Run run;  // and a trainer + model file can be read as Bridge's
    run.write("conf.yaml", "trainer:\n  devices: 8\nmodel:\n  tensor_model_parallel_size: 2\n");
    run.options.dialect = run.value("bridge");
    const Job& job = run.lint("conf.yaml");
    CHECK(job.kind == InputKind::BridgeOverrideYaml);
    CHECK(job.dialect == Dialect::Bridge);
  }
}

TEST_CASE("NeMo serving configs: a checkpoint's model, and no training batch", "[nemo]") {
  Run run;
  run.write("inference_rm.yaml",
            "trainer:\n  num_nodes: 1\n  devices: 8\ninference:\n  port: 5555\nrm_model_file: null\n"
            "model:\n  forward_micro_batch_size: 4\n  global_batch_size: 0\n  micro_batch_size: 1\n");
  const Job& job = run.lint("inference_rm.yaml");
  CHECK(job.kind == InputKind::NemoYaml);
  CHECK_FALSE(job.trains);
  CHECK_FALSE(find_path(job.config, "train.global_batch_size"));       // sizes the set-up, not a step
  CHECK_FALSE(find_path(job.config, "model.tensor_model_parallel_size"));  // the model file's
  CHECK(run.errors() == 0);
}

TEST_CASE("mblint check --dialect takes bridge, megatron-lm or nemo", "[nemo][cli]") {
  std::filesystem::path dir = test::make_temp_dir("mblint-dialect-cli");
  std::ofstream(dir / "model_config.yaml") << "model:\n  tensor_model_parallel_size: 8\n  num_attention_heads: 12\n";
  test::CliRun unknown = test::run_mblint({"check", "model_config.yaml", "--dialect", "pytorch"}, dir);
  CHECK(unknown.code == kExitUsage);
  CHECK(unknown.err.find("unknown --dialect 'pytorch'") != std::string::npos);
  test::CliRun nemo = test::run_mblint({"check", "model_config.yaml", "--dialect=nemo"}, dir);
  CHECK(nemo.code == kExitFindings);
  CHECK(nemo.out.find("[heads-divisible-by-tp]") != std::string::npos);
  std::filesystem::remove_all(dir);
}
