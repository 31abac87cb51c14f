// Megatron-LM command lines and functional-test configs read into Bridge's
// key space: flag table, argparse behaviour, validate_args derivations,
// defaults, provenance, and the CI harness's MODEL_ARGS -> argv rules.
#include <catch2/catch.hpp>

#include <fstream>

#include "lint/facts/derived.h"
#include "lint/load/dialects/megatron_lm_args.h"
#include "lint/load/dialects/megatron_lm_test_config.h"
#include "lint/load/shell/launch.h"
#include "lint/load/yaml/yaml_loader.h"
#include "lint/model/schema.h"
#include "lint/run/lint.h"
#include "rules/registry.h"
#include "tests/lint_run.h"
#include "tests/test_support.h"

using namespace mblint;

namespace {

// An argv written on one line of a synthetic file, split at spaces.
struct Argv {
  SourceSet sources;
  FileId file = kNoFile;
  MegatronLmArgs args;

  explicit Argv(const std::string& line) {
    file = add_source(sources, "args.sh", line);
    MegatronArgv argv;
    size_t at = 0;
    while (at < line.size()) {
      size_t end = line.find(' ', at);
      if (end == std::string::npos) end = line.size();
      if (end > at) argv.words.push_back(mapped_verbatim(file, static_cast<uint32_t>(at), line.substr(at, end - at)));
      at = end + 1;
    }
    args = read_megatron_lm_args(argv);
  }

  const ConfigValue* at(std::string_view path) const { return find_path(args.config, path); }
  std::optional<int64_t> integer(std::string_view path) const { return as_int(at(path)); }
  std::string text(Span span) const { return sources.files[file].text.substr(span.begin, span.end - span.begin); }
  bool rejected(std::string_view fragment) const {
    for (const Diagnostic& d : args.problems) {
      if (d.rule == "entry-point-argument" && d.message.find(fragment) != std::string::npos) return true;
    }
    return false;
  }
};

std::vector<int64_t> ints(const ConfigValue* list) {
  std::vector<int64_t> out;
  if (!list) return out;
  for (const ConfigValue& item : list->items) out.push_back(as_int(&item).value_or(-999));
  return out;
}

struct Run : test::LintRun {
  Run() : test::LintRun("mblint-megatron-lm") {}
};

}  // namespace

TEST_CASE("the flag table maps onto Megatron Bridge fields", "[megatron-lm]") {
  size_t mapped = 0;
  for (const MegatronLmFlag& flag : megatron_lm_flags()) {
    INFO(flag.flag);
    CHECK(flag.flag.substr(0, 2) == "--");
    CHECK(find_megatron_lm_flag(flag.flag) == &flag);  // no flag listed twice
    for (std::string_view path : {flag.path, flag.also}) {
      if (path.empty()) continue;
      size_t dot = path.find('.');
      REQUIRE(dot != std::string_view::npos);
      CHECK(find_schema_field(path.substr(0, dot), path.substr(dot + 1)) != nullptr);
      ++mapped;
    }
    if (flag.type == ArgType::Flag) CHECK_FALSE(flag.constant.empty());
  }
  CHECK(megatron_lm_flags().size() >= 150);
  CHECK(mapped >= 140);
}

TEST_CASE("parallel sizes, shape and batch flags", "[megatron-lm]") {
  Argv a("--tensor-model-parallel-size 4 --pipeline-model-parallel-size=2 --context-parallel-size 2 "
         "--expert-model-parallel-size 8 --expert-tensor-parallel-size 1 --num-layers 32 --hidden-size 4096 "
         "--num-attention-heads 32 --seq-length 8192 --micro-batch-size 1 --global-batch-size 256 --num-experts 64");
  CHECK(a.args.problems.empty());
  CHECK(a.integer("model.tensor_model_parallel_size") == 4);
  CHECK(a.integer("model.pipeline_model_parallel_size") == 2);
  CHECK(a.integer("model.context_parallel_size") == 2);
  CHECK(a.integer("model.expert_model_parallel_size") == 8);
  CHECK(a.integer("model.expert_tensor_parallel_size") == 1);
  CHECK(a.integer("model.num_layers") == 32);
  CHECK(a.integer("model.seq_length") == 8192);
  CHECK(a.integer("dataset.seq_length") == 8192);  // --seq-length feeds both
  CHECK(a.integer("train.micro_batch_size") == 1);
  CHECK(a.integer("train.global_batch_size") == 256);
  CHECK(a.integer("model.num_moe_experts") == 64);
}

TEST_CASE("the last occurrence wins; unknown flags are skipped with their values", "[megatron-lm]") {
  Argv a("--data-path 0.5 /a 0.5 /b --tensor-model-parallel-size 2 --some-new-flag x y "
         "--tensor-model-parallel-size 8");
  CHECK(a.args.problems.empty());
  const ConfigValue* tp = a.at("model.tensor_model_parallel_size");
  REQUIRE(tp);
  CHECK(as_int(tp) == 8);
  CHECK(tp->earlier.size() == 1);  // the 2 it replaced is remembered
}

TEST_CASE("store_true, store_false and constant flags", "[megatron-lm]") {
  Argv a("--sequence-parallel --untie-embeddings-and-output-weights --no-overlap-p2p-communication "
         "--swiglu --disable-bias-linear --use-distributed-optimizer --bf16 --recompute-activations "
         "--recompute-granularity full --fp8-format hybrid --use-tp-pp-dp-mapping");
  CHECK(a.args.problems.empty());
  CHECK(as_bool(a.at("model.sequence_parallel")) == true);
  CHECK(as_bool(a.at("model.share_embeddings_and_output_weights")) == false);
  CHECK(as_bool(a.at("model.overlap_p2p_comm")) == false);
  CHECK(as_bool(a.at("model.gated_linear_unit")) == true);
  CHECK(as_bool(a.at("model.add_bias_linear")) == false);
  CHECK(as_bool(a.at("ddp.use_distributed_optimizer")) == true);
  CHECK(as_bool(a.at("optimizer.use_distributed_optimizer")) == true);
  CHECK(as_bool(a.at("model.bf16")) == true);
  CHECK(as_bool(a.at("dist.use_tp_pp_dp_mapping")) == true);
  CHECK(as_string(a.at("model.fp8")) == "hybrid");
  // validate_args: --recompute-activations means selective, whatever the order.
  CHECK(as_string(a.at("model.recompute_granularity")) == "selective");
}

TEST_CASE("nargs lists take the words up to the next flag", "[megatron-lm]") {
  Argv a("--recompute-modules core_attn mlp moe_act --hierarchical-context-parallel-sizes 2 4 "
         "--cp-comm-type a2a+p2p --rampup-batch-size 32 32 1000 --bf16");
  CHECK(a.args.problems.empty());
  const ConfigValue* modules = a.at("model.recompute_modules");
  REQUIRE(modules);
  REQUIRE(modules->items.size() == 3);
  CHECK(modules->items[2].text == "moe_act");
  CHECK(ints(a.at("model.hierarchical_context_parallel_sizes")) == std::vector<int64_t>{2, 4});
  CHECK(ints(a.at("train.rampup_batch_size")) == std::vector<int64_t>{32, 32, 1000});
  CHECK(as_bool(a.at("model.bf16")) == true);
}

TEST_CASE("what argparse rejects is an entry-point-argument error", "[megatron-lm]") {
  CHECK(Argv("--tensor-model-parallel-size four").rejected("invalid int value: 'four'"));
  CHECK(Argv("--recompute-granularity partial").rejected("invalid choice: 'partial'"));
  CHECK(Argv("--num-layers").rejected("expected one argument"));
  CHECK(Argv("--recompute-modules --bf16").rejected("expected at least one argument"));
  CHECK(Argv("--sequence-parallel false").rejected("rejects `false` after --sequence-parallel"));
  CHECK(Argv("--sequence-parallel=true").rejected("ignored explicit argument"));
  CHECK(Argv("--rampup-batch-size 32 32").rejected("expected 3 arguments"));
  CHECK(Argv("--moe-layer-freq [0]*3+[1]*a").rejected("invalid moe_freq_type value"));
  CHECK(Argv("--hierarchical-context-parallel-sizes 2x2").rejected("invalid int value: '2x2'"));
}

TEST_CASE("Megatron-LM --moe-layer-freq: an int, or a list expression evaluated statically", "[megatron-lm]") {
  CHECK(evaluate_layer_pattern("[0]*3+[1]*5") == std::vector<int64_t>{0, 0, 0, 1, 1, 1, 1, 1});
  CHECK(evaluate_layer_pattern("([0]*1+[1]*2)") == std::vector<int64_t>{0, 1, 1});
  CHECK(evaluate_layer_pattern("([1]*2+[0]*1)*2") == std::vector<int64_t>{1, 1, 0, 1, 1, 0});
  CHECK(evaluate_layer_pattern("2*[1,0]") == std::vector<int64_t>{1, 0, 1, 0});
  CHECK(evaluate_layer_pattern("[1,0,1]") == std::vector<int64_t>{1, 0, 1});
  CHECK(evaluate_layer_pattern("[0]*3+[1]*58")->size() == 61);
  CHECK_FALSE(evaluate_layer_pattern("[0]*3+"));
  CHECK_FALSE(evaluate_layer_pattern("[[0]]*2"));
  CHECK_FALSE(evaluate_layer_pattern("[0]*999999999"));  // refused, not built
  CHECK_FALSE(evaluate_layer_pattern("3"));               // an int, not a pattern

  Argv list("--moe-layer-freq ([0]*3+[1]*5)");
  CHECK(ints(list.at("model.moe_layer_freq")) == std::vector<int64_t>{0, 0, 0, 1, 1, 1, 1, 1});
  Argv every("--moe-layer-freq 2");
  CHECK(every.integer("model.moe_layer_freq") == 2);
  Argv tuple("--moe-layer-freq ([0],[1])");  // admitted characters, not a list: unknown, not an error
  CHECK(tuple.args.problems.empty());
  REQUIRE(tuple.at("model.moe_layer_freq"));
  CHECK(tuple.at("model.moe_layer_freq")->is_unknown());
}

TEST_CASE("virtual pipeline stages from layers per stage, stages per rank, or a layout", "[megatron-lm]") {
  Argv per_stage("--num-layers 32 --pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 2");
  CHECK(per_stage.integer("model.virtual_pipeline_model_parallel_size") == 4);  // (32 / 4) / 2
  const ConfigValue* vpp = per_stage.at("model.virtual_pipeline_model_parallel_size");
  CHECK(vpp->where.layer == Layer::Rewrite);
  CHECK(per_stage.text(vpp->where.statement) == "--num-layers-per-virtual-pipeline-stage 2");
  CHECK_FALSE(vpp->where.value.valid());  // never offered for an edit: the flag holds something else

  Argv accounted("--num-layers 30 --pipeline-model-parallel-size 4 --account-for-embedding-in-pipeline-split "
                 "--account-for-loss-in-pipeline-split --num-layers-per-virtual-pipeline-stage 4");
  CHECK(accounted.integer("model.virtual_pipeline_model_parallel_size") == 2);  // (30 + 2) / 4 / 4

  Argv one("--num-layers 8 --pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 2");
  REQUIRE(one.at("model.virtual_pipeline_model_parallel_size"));
  CHECK(one.at("model.virtual_pipeline_model_parallel_size")->is_null());  // 1 stage: none

  Argv uneven("--num-layers 12 --pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 2");
  CHECK(uneven.at("model.virtual_pipeline_model_parallel_size")->is_unknown());

  Argv stages("--pipeline-model-parallel-size 4 --num-virtual-stages-per-pipeline-rank 3");
  CHECK(stages.integer("model.virtual_pipeline_model_parallel_size") == 3);

  Argv layout("--pipeline-model-parallel-size 4 --pipeline-model-parallel-layout Et*3|(tt|)*6mL");
  CHECK(layout.integer("model.virtual_pipeline_model_parallel_size") == 2);  // 8 stages / 4
  CHECK(as_string(layout.at("model.pipeline_model_parallel_layout")) == "Et*3|(tt|)*6mL");

  Argv two("--num-virtual-stages-per-pipeline-rank 2 --num-layers-per-virtual-pipeline-stage 2");
  CHECK(two.at("model.virtual_pipeline_model_parallel_size")->is_unknown());
}

TEST_CASE("query groups count only with --group-query-attention", "[megatron-lm]") {
  Argv ignored("--num-attention-heads 32 --num-query-groups 8");
  REQUIRE(ignored.at("model.num_query_groups"));
  CHECK(ignored.at("model.num_query_groups")->is_null());
  CHECK_FALSE(ignored.at("model.num_query_groups")->where.origin.empty());
  Argv gqa("--group-query-attention --num-query-groups 8");
  CHECK(gqa.integer("model.num_query_groups") == 8);
  Argv one("--group-query-attention");
  CHECK(one.integer("model.num_query_groups") == 1);
}

TEST_CASE("T5's --encoder-seq-length stands in for --seq-length; hybrid patterns fix the layers", "[megatron-lm]") {
  Argv t5("--encoder-seq-length 512 --decoder-seq-length 128");
  CHECK(t5.integer("model.seq_length") == 512);
  // validate_args (core_v0.17.0 on): the pattern's main stack is num_layers,
  // whatever --num-layers says; its '|' segments over PP the virtual stages;
  // what follows '/' is the MTP block's.
  Argv hybrid("--num-layers 20 --pipeline-model-parallel-size 2 --hybrid-layer-pattern M*M*|M*M-|M*|M*/*-");
  CHECK(hybrid.integer("model.num_layers") == 12);
  CHECK(hybrid.integer("model.virtual_pipeline_model_parallel_size") == 2);
  Argv even("--pipeline-model-parallel-size 2 --hybrid-override-pattern M*M*|M*M-");
  CHECK(even.integer("model.num_layers") == 8);
  REQUIRE(even.at("model.virtual_pipeline_model_parallel_size"));
  CHECK(even.at("model.virtual_pipeline_model_parallel_size")->is_null());
  Argv uneven("--pipeline-model-parallel-size 2 --hybrid-layer-pattern M*M*|M*M-|M*");  // Megatron-LM asserts
  CHECK(uneven.integer("model.num_layers") == 10);
  CHECK(uneven.at("model.virtual_pipeline_model_parallel_size")->is_unknown());
}

TEST_CASE("provenance: flag, value, statement, and the assignments behind a variable", "[megatron-lm]") {
  Argv a("--tensor-model-parallel-size 4 --sequence-parallel");
  const ConfigValue* tp = a.at("model.tensor_model_parallel_size");
  REQUIRE(tp);
  CHECK(tp->where.layer == Layer::Override);
  CHECK(a.text(tp->where.value) == "4");
  CHECK(a.text(tp->where.key) == "--tensor-model-parallel-size");
  CHECK(a.text(tp->where.statement) == "--tensor-model-parallel-size 4");
  const ConfigValue* sp = a.at("model.sequence_parallel");
  CHECK(a.text(sp->where.statement) == "--sequence-parallel");
  CHECK_FALSE(sp->where.value.valid());  // nothing to edit to "false" in place

  // Words from a script: `--tensor-model-parallel-size $TP` with TP=8 defined
  // elsewhere, and `$PP` unknown.
  SourceSet sources;
  FileId file = add_source(sources, "train.sh", "TP=8\npretrain_gpt.py --tensor-model-parallel-size $TP "
                                                "--pipeline-model-parallel-size $PP\n");
  auto expanded = [&](uint32_t begin, uint32_t end, const std::string& value, Span definition, bool known) {
    MappedString word;
    word.file = file;
    for (char c : value) append_char(word, c, begin, end);
    word.expansions.push_back(Expansion{0, value.size(), make_span(file, begin, end), definition, "X", known});
    return word;
  };
  MegatronArgv argv;
  argv.words = {mapped_verbatim(file, 21, "--tensor-model-parallel-size"),
                expanded(50, 53, "8", make_span(file, 0, 4), true),
                mapped_verbatim(file, 54, "--pipeline-model-parallel-size"), expanded(85, 88, "$PP", {}, false)};
  MegatronLmArgs args = read_megatron_lm_args(argv);
  const ConfigValue* from_variable = find_path(args.config, "model.tensor_model_parallel_size");
  REQUIRE(from_variable);
  CHECK(as_int(from_variable) == 8);
  REQUIRE(from_variable->where.via.size() == 1);
  CHECK(from_variable->where.via[0] == make_span(file, 0, 4));
  const ConfigValue* unknown = find_path(args.config, "model.pipeline_model_parallel_size");
  REQUIRE(unknown);
  CHECK(unknown->is_unknown());
  CHECK(args.problems.empty());
}

TEST_CASE("Megatron-LM defaults where the command line is silent", "[megatron-lm]") {
  Job job;
  job.dialect = Dialect::MegatronLM;
  Argv a("--tensor-model-parallel-size 2 --micro-batch-size 2 --expert-model-parallel-size 4");
  job.config = a.args.config;
  job.cluster.nodes.value = 2;
  job.cluster.gpus_per_node.value = 8;
  apply_megatron_lm_defaults(job);
  auto at = [&](std::string_view path) { return find_path(job.config, path); };
  CHECK(as_int(at("model.pipeline_model_parallel_size")) == 1);
  CHECK(at("model.pipeline_model_parallel_size")->where.layer == Layer::SchemaDefault);
  CHECK(at("model.pipeline_model_parallel_size")->where.origin == "the Megatron-LM default");
  CHECK(as_int(at("model.context_parallel_size")) == 1);
  CHECK(as_bool(at("model.sequence_parallel")) == false);
  CHECK(at("model.virtual_pipeline_model_parallel_size")->is_null());
  CHECK(at("model.num_moe_experts")->is_null());
  CHECK(as_int(at("model.expert_tensor_parallel_size")) == 2);  // = TP, not Bridge's 1
  CHECK(as_int(at("train.global_batch_size")) == 16);            // MBS 2 x DP 8
  CHECK(at("train.global_batch_size")->where.layer == Layer::Rewrite);
  CHECK(as_int(at("model.tensor_model_parallel_size")) == 2);    // written values stay

  Derived d = derive(job);
  CHECK(*d.expert_tensor_parallel == 2);
  CHECK(*d.data_parallel == 8);
  CHECK(*d.microbatches == 1);
}

TEST_CASE("no global batch default without a world size or with a step schedule", "[megatron-lm]") {
  Job unknown_world;
  unknown_world.dialect = Dialect::MegatronLM;
  unknown_world.config = Argv("--micro-batch-size 2").args.config;
  apply_megatron_lm_defaults(unknown_world);
  CHECK_FALSE(find_path(unknown_world.config, "train.global_batch_size"));

  Job schedule;
  schedule.config = Argv("--micro-batch-size 2 --step-batch-size-schedule 0:32").args.config;
  schedule.cluster.world_size.value = 8;
  apply_megatron_lm_defaults(schedule);
  CHECK_FALSE(find_path(schedule.config, "train.global_batch_size"));
}

TEST_CASE("Megatron-LM --use-checkpoint-args: the checkpoint's model shape is unknown", "[megatron-lm]") {
  Job job;
  job.config = Argv("--use-checkpoint-args --tensor-model-parallel-size 1 --expert-model-parallel-size 8 "
                    "--num-layers 4 --num-experts 8")
                   .args.config;
  apply_megatron_lm_defaults(job);
  auto at = [&](std::string_view path) { return find_path(job.config, path); };
  CHECK(at("model.num_moe_experts")->is_unknown());   // forced from the checkpoint
  CHECK(as_int(at("model.num_layers")) == 4);          // the command line wins
  CHECK(at("model.hidden_size")->is_unknown());       // filled from the checkpoint
  CHECK(as_int(at("model.expert_model_parallel_size")) == 8);  // parallel sizes stay the command line's
}

TEST_CASE("launch scripts: Megatron-LM entry points keep their argument words", "[megatron-lm][launch]") {
  SourceSet sources;
  FileId file = add_source(sources, "train.sh",
                           "#!/bin/bash\nGPUS_PER_NODE=8\nNUM_NODES=1\n"
                           "DISTRIBUTED_ARGS=(--nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES)\n"
                           "MODEL_ARGS=(\n  --num-layers 24 # depth\n  \"--fp8-format hybrid\"\n)\n"
                           "torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py ${MODEL_ARGS[@]} "
                           "--tensor-model-parallel-size 2\n"
                           "python examples/inhouse/train.py --pipeline-model-parallel-size 2\n"
                           "python examples/inhouse/other.py --config-file x.yaml --tensor-model-parallel-size 2\n");
  ShellScript script = walk_shell_script(sources, file, {});
  std::vector<Launch> launches = find_launches(script, {});
  REQUIRE(launches.size() == 3);
  CHECK(launches[0].entry == EntryPoint::MegatronLM);
  CHECK(launches[0].cluster.gpus_per_node.value == 8);
  REQUIRE(launches[0].arguments.size() == 6);
  CHECK(launches[0].arguments[2].text == "--fp8-format");  // the quoted element was split
  CHECK(launches[1].entry == EntryPoint::MegatronLM);
  CHECK(launches[2].entry == EntryPoint::ConfigFileScript);
}

TEST_CASE("MODEL_ARGS becomes argv exactly as the CI harness builds it", "[megatron-lm][test-config]") {
  SourceSet sources;
  std::string yaml =
      "ENV_VARS:\n"
      "  CUDA_DEVICE_MAX_CONNECTIONS: 1\n"
      "  NCCL_ALGO: ${ALGO}\n"
      "MODEL_ENV_VARS:\n"
      "  MODEL_ARGS:\n"
      "    GPUS_PER_NODE: 4\n"
      "MODEL_ARGS:\n"
      "  --sequence-parallel: true\n"
      "  --moe-layer-freq: ([0]*1+[1]*3)\n"
      "  --recompute-modules: \"[core_attn mlp]\"\n"
      "  --step-batch-size-schedule: \"0:384 200B:768\"\n"
      "  --pipeline-model-parallel-layout: Et|(tt|)*2L\n"
      "  --tensor-model-parallel-size: 2\n"
      "  --data-path: ${DATA_PATH}/my-gpt3_00_text_document\n"
      "  --lr: 1.0e-4\n"
      "  --eval-iters: \"\"\n"
      "MODEL_ARGS_2:\n"
      "  --tensor-model-parallel-size: 4\n";
  FileId file = add_source(sources, "model_config.yaml", yaml);
  YamlDocument doc = load_yaml(sources, file, YamlFlavor::Yaml12, Layer::ConfigFile);
  REQUIRE(doc.ok);
  REQUIRE(is_megatron_lm_test_config(doc.root));
  MegatronTestConfig test = read_megatron_lm_test_config(sources, doc.root, *find_child(doc.root, "MODEL_ARGS"));
  std::vector<std::string> words;
  for (const MappedString& w : test.argv.words) words.push_back(w.text);
  CHECK(words == std::vector<std::string>{"--sequence-parallel", "--moe-layer-freq", "([0]*1+[1]*3)",
                                          "--recompute-modules", "core_attn", "mlp", "--step-batch-size-schedule",
                                          "0:384 200B:768", "--pipeline-model-parallel-layout", "Et|(tt|)*2L",
                                          "--tensor-model-parallel-size", "2", "--data-path",
                                          "${DATA_PATH}/my-gpt3_00_text_document", "--lr", "1.0e-4"});
  CHECK(has_unknown(test.argv.words[13]));  // envsubst placeholder
  // Every word is located in the YAML; the statement is the whole entry.
  auto text = [&](Span s) { return yaml.substr(s.begin, s.end - s.begin); };
  CHECK(text(span_of(test.argv.words[4], 0, 9)) == "core_attn");
  CHECK(text(test.argv.entries[10]) == "--tensor-model-parallel-size: 2");
  CHECK(test.cluster.gpus_per_node.value == 4);
  CHECK_FALSE(test.cluster.nodes.value);  // never guessed
  CHECK_FALSE(test.cluster.nodes.unknown_because.empty());
  REQUIRE(test.env.size() == 2);
  CHECK(test.env[0].value == "1");
  CHECK_FALSE(test.env[1].value);
  REQUIRE(test.problems.size() == 1);  // MODEL_ARGS_2 is said to be unchecked
  CHECK(test.problems[0].severity == Severity::Note);

  MegatronLmArgs args = read_megatron_lm_args(test.argv);
  CHECK(args.problems.empty());
  const ConfigValue* tp = find_path(args.config, "model.tensor_model_parallel_size");
  REQUIRE(tp);
  CHECK(tp->where.layer == Layer::ConfigFile);
  CHECK(text(tp->where.value) == "2");
  CHECK(text(tp->where.statement) == "--tensor-model-parallel-size: 2");
  CHECK(as_int(find_path(args.config, "model.virtual_pipeline_model_parallel_size")) == 4);  // 4 stages / PP 1
  CHECK(ints(find_path(args.config, "model.moe_layer_freq")) == std::vector<int64_t>{0, 1, 1, 1});
}

TEST_CASE("a functional-test config is linted at the world size given on the command line",
          "[megatron-lm][test-config]") {
  std::string config =
      "MODEL_ARGS:\n"
      "  --num-layers: 12\n"
      "  --num-attention-heads: 16\n"
      "  --tensor-model-parallel-size: 2\n"
      "  --pipeline-model-parallel-size: 8\n"
      "  --micro-batch-size: 4\n"
      "  --global-batch-size: 32\n"
      "  --sequence-parallel: true\n";
  {
    Run run;
    run.write("model_config.yaml", config);
    const Job& job = run.lint("model_config.yaml");
    CHECK(job.kind == InputKind::MegatronLmTestConfig);
    CHECK(job.dialect == Dialect::MegatronLM);
    CHECK_FALSE(run.fired("world-size-divisibility"));  // the world size is unknown: silent
  }
  {
    Run run;
    run.write("model_config.yaml", config);
    run.set_cluster("1", "8");
    run.lint("model_config.yaml");
    CHECK(run.fired("world-size-divisibility"));  // TP 2 x PP 8 = 16 > 8
    CHECK(run.fired("layers-divisible-by-pp"));   // 12 layers over 8 stages
  }
}

TEST_CASE("gpt-nemo tests: NeMo 2 dotted overrides are mapped", "[megatron-lm][test-config]") {
  Run run;
  run.write("model_config.yaml",
            "MODEL_ARGS:\n"
            "  trainer.num_nodes: 1\n"
            "  trainer.devices: 8\n"
            "  trainer.strategy.tensor_model_parallel_size: 2\n"
            "  trainer.strategy.pipeline_model_parallel_size: 2\n"
            "  trainer.strategy.sequence_parallel: True\n"
            "  data.micro_batch_size: 2\n"
            "  data.global_batch_size: 32\n"
            "  data.seq_length: 512\n"
            "  model.config.num_layers: 12\n"
            "  log.log_dir: ${CHECKPOINT_SAVE_PATH}\n");
  const Job& job = run.lint("model_config.yaml");
  CHECK(job.kind == InputKind::MegatronLmTestConfig);
  CHECK(job.dialect == Dialect::NeMo);
  CHECK(as_int(find_path(job.config, "model.tensor_model_parallel_size")) == 2);
  CHECK(as_int(find_path(job.config, "train.global_batch_size")) == 32);
  CHECK(as_int(find_path(job.config, "model.seq_length")) == 512);
  CHECK(as_int(find_path(job.config, "model.num_layers")) == 12);
  CHECK(job.cluster.nodes.value == 1);
  CHECK(job.cluster.gpus_per_node.value == 8);
  CHECK_FALSE(find_path(job.config, "model.context_parallel_size"));  // the NeMo-Run recipe's: unknown
  CHECK(run.errors() == 0);
}

TEST_CASE("dialect megatron-lm (--dialect) reads a bare file of flags", "[megatron-lm][test-config]") {
  Run run;
  run.write("args.yaml", "--tensor-model-parallel-size: 16\n--num-attention-heads: 8\n");
  run.options.dialect = run.value("megatron-lm");
  run.set_cluster("2", "8");
  const Job& job = run.lint("args.yaml");
  CHECK(job.dialect == Dialect::MegatronLM);
  CHECK(run.fired("heads-divisible-by-tp"));
}

TEST_CASE("inference runs are marked as not training", "[megatron-lm]") {
  {
    Run run;
    run.write("serve.sh", "#!/bin/bash\ntorchrun --nproc-per-node 2 examples/inference/gpt/gpt_dynamic_inference.py "
                          "--tensor-model-parallel-size 2 --num-layers 4\n");
    const Job& job = run.lint("serve.sh");
    CHECK(job.entry == EntryPoint::MegatronLM);
    CHECK_FALSE(job.trains);
  }
  {
    Run run;
    run.write("model_config.yaml", "MODE: inference\nMODEL_ARGS:\n  --tensor-model-parallel-size: 2\n");
    CHECK_FALSE(run.lint("model_config.yaml").trains);
  }
  {
    Run run;
    run.write("model_config.yaml", "MODE: pretraining\nMODEL_ARGS:\n  --tensor-model-parallel-size: 2\n");
    CHECK(run.lint("model_config.yaml").trains);
  }
}

TEST_CASE("the flag index answers as a scan of the flag table would", "[megatron-lm]") {
  for (const MegatronLmFlag& spec : megatron_lm_flags()) {
    INFO(spec.flag);
    const MegatronLmFlag* found = find_megatron_lm_flag(spec.flag);
    REQUIRE(found != nullptr);
    // The first spec of a flag wins, as argparse keeps the first definition.
    for (const MegatronLmFlag& earlier : megatron_lm_flags()) {
      if (earlier.flag == spec.flag) {
        CHECK(found == &earlier);
        break;
      }
    }
    if (!spec.path.empty()) CHECK(megatron_lm_flag_writes(spec.path));
    if (!spec.also.empty()) CHECK(megatron_lm_flag_writes(spec.also));
  }
  CHECK(find_megatron_lm_flag("--no-such-flag") == nullptr);
  CHECK_FALSE(megatron_lm_flag_writes("model.no_such_field"));
  CHECK_FALSE(megatron_lm_flag_writes(""));
}

namespace {

// The diagnostic of `rule` in a lint of `script` (written as launch.sh), and
// the text and 1-based line it points at.
struct Located {
  std::string text;
  uint32_t line = 0;
  bool found = false;
};

Located locate(const std::string& script, std::string_view rule) {
  test::LintRun run("mblint-arrays");
  run.write("launch.sh", script);
  run.lint("launch.sh");
  Located at;
  for (const Diagnostic& d : run.result.diagnostics) {
    if (d.rule != rule) continue;
    at.found = true;
    at.text = run.text(d.where);
    at.line = line_col(run.sources.files[d.where.file], d.where.begin).line;
  }
  return at;
}

constexpr std::string_view kModel =
    "--num-layers 4 --hidden-size 1024 --num-attention-heads 16 --seq-length 2048 --max-position-embeddings 2048 "
    "--micro-batch-size 1 --global-batch-size 8 --bf16";

}  // namespace

TEST_CASE("a flag written inside a bash array is located where it is written", "[megatron-lm][launch]") {
  std::string model(kModel);
  // DDP_ARGS=( ... ) over several lines, expanded unquoted.
  Located array = locate("#!/bin/bash\nDDP_ARGS=(\n    --use-distributed-optimizer\n    --overlap-param-gather\n)\n"
                         "torchrun --nproc-per-node 8 pretrain_gpt.py " + model + " ${DDP_ARGS[@]}\n",
                         "overlap-param-gather-prerequisites");
  REQUIRE(array.found);
  CHECK(array.text == "--overlap-param-gather");
  CHECK(array.line == 4);
  // Appended with +=, expanded quoted.
  Located appended = locate("#!/bin/bash\nARGS=(" + model + ")\nARGS+=(--use-distributed-optimizer)\n"
                            "ARGS+=(--overlap-param-gather)\n"
                            "torchrun --nproc-per-node 8 pretrain_gpt.py \"${ARGS[@]}\"\n",
                            "overlap-param-gather-prerequisites");
  REQUIRE(appended.found);
  CHECK(appended.text == "--overlap-param-gather");
  CHECK(appended.line == 4);
  // The array expanded into a command held in a variable, run as $CMD.
  Located command = locate("#!/bin/bash\nDDP_ARGS=(--use-distributed-optimizer\n  --overlap-param-gather)\n"
                           "CMD=\"torchrun --nproc-per-node 8 pretrain_gpt.py " + model + " ${DDP_ARGS[@]}\"\n$CMD\n",
                           "overlap-param-gather-prerequisites");
  REQUIRE(command.found);
  CHECK(command.text == "--overlap-param-gather");
  CHECK(command.line == 3);
  // Joined with other text in one word, an element is located at the expansion.
  Located joined = locate("#!/bin/bash\nTP=(16)\ntorchrun --nproc-per-node 8 pretrain_gpt.py " + model +
                          " --tensor-model-parallel-size=${TP[@]}\n",
                          "world-size-divisibility");
  REQUIRE(joined.found);
  CHECK(joined.text == "--tensor-model-parallel-size=${TP[@]}");
  CHECK(joined.line == 3);
}
