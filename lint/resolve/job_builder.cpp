#include "lint/base/input_rules.h"
#include "lint/base/text.h"
#include "lint/resolve/job_builder.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "lint/base/made_word.h"
#include "lint/base/file_reader.h"
#include "lint/base/python_number.h"
#include "lint/load/dialects/chatlearn.h"
#include "lint/load/dialects/hydra_compose.h"
#include "lint/load/dialects/megatron_lm_args.h"
#include "lint/load/dialects/megatron_lm_flags.h"
#include "lint/load/dialects/megatron_lm_test_config.h"
#include "lint/load/dialects/nemo_rl.h"
#include "lint/load/dialects/nemo_yaml.h"
#include "lint/load/hydra/hydra_override.h"
#include "lint/load/hydra/overrides.h"
#include "lint/load/shell/hand_off.h"
#include "lint/load/shell/launch.h"
#include "lint/load/shell/shell.h"
#include "lint/load/yaml/config_yaml.h"
#include "lint/load/yaml/interpolation.h"
#include "lint/load/yaml/yaml_ahead.h"
#include "lint/load/yaml/yaml_loader.h"
#include "lint/model/recipe_layer.h"
#include "lint/model/schema.h"
#include "lint/resolve/interpolation_check.h"
#include "lint/resolve/job_alternatives.h"

namespace fs = std::filesystem;

namespace mblint {

namespace {

// --- what a file is -----------------------------------------------------------

enum class FileType { Script, Yaml, Other };

// By name first (what editors and pre-commit go by), then by a shebang.
FileType file_type(const SourceFile& file) {
  std::string_view path = file.path;
  for (std::string_view ext : {".sh", ".sbatch", ".slurm", ".bash"}) {
    if (ends_with(path, ext)) return FileType::Script;
  }
  for (std::string_view ext : {".yaml", ".yml", ".json"}) {
    if (ends_with(path, ext)) return FileType::Yaml;
  }
  return file.text.rfind("#!", 0) == 0 ? FileType::Script : FileType::Other;
}

bool looks_like_bridge_config(const ConfigValue& root) {
  if (!root.is_map()) return false;
  bool any_section = false;
  for (const MapEntry& entry : root.entries) {
    // Other frameworks' configs: NeMo 1.x (trainer), NeMo-RL (policy), verl,
    // Megatron-LM functional tests (MODEL_ARGS), Hydra group files (defaults).
    if (entry.key == "trainer" || entry.key == "policy" || entry.key == "actor_rollout_ref" ||
        entry.key == "MODEL_ARGS" || entry.key == "defaults" || entry.key == "cluster") {
      return false;
    }
    // A section holds a mapping: `optimizer: adam` at the top of a flat
    // Megatron-LM --yaml-cfg file is no ConfigContainer section. The one
    // exception is mixed_precision, which Bridge also takes as a preset name.
    bool section_value = entry.value.is_map() || (entry.key == "mixed_precision" && entry.value.kind == ValueKind::String);
    if (is_config_section(entry.key) && entry.key != "env_vars" && section_value) any_section = true;
  }
  return any_section;
}

// Builder-backed Llama configs nest the transformer fields under
// model.transformer; store them flat so every rule finds them in one place.
void hoist_transformer_fields(ConfigValue& root, Job& job) {
  ConfigValue* model = find_child(root, "model");
  if (!model || !model->is_map()) return;
  auto it = std::find_if(model->entries.begin(), model->entries.end(),
                         [](const MapEntry& e) { return e.key == "transformer"; });
  if (it == model->entries.end() || !it->value.is_map()) return;
  ConfigValue transformer = std::move(it->value);
  model->entries.erase(it);
  for (MapEntry& entry : transformer.entries) {
    if (entry.key == "_target_") continue;
    if (!find_child(*model, entry.key)) model->entries.push_back(std::move(entry));
  }
  job.builder_backed_model = true;
}

// --- layers ----------------------------------------------------------------------

void select_recipe(Job& job, const std::string& name, Provenance where) {
  job.recipe_name = name;
  job.recipe_where = std::move(where);
  const RecipeAlias* alias = nullptr;
  job.recipe = find_recipe(name, &alias);
  if (job.recipe) {
    job.config = recipe_layer(*job.recipe, job.recipe_where);
    return;
  }
  std::vector<std::string> similar = similar_recipe_names(name);
  std::string help = similar.empty() ? "check the name; mblint's catalog holds Megatron Bridge's library and "
                                       "performance recipes"
                                     : fmt::format("did you mean {}?", similar.front());
  Diagnostic d = input_finding(input_rule::kUnknownRecipe,
                         fmt::format("recipe '{}' is not in mblint's catalog: the values it sets are unknown, "
                                     "so checks that need them stay silent",
                                     name),
                         primary_span(job.recipe_where), help);
  for (const Span& via : job.recipe_where.via) {
    d.notes.push_back(Note{"the value of the recipe name comes from here", via});
  }
  job.problems.push_back(std::move(d));
}

std::optional<Provenance> recipe_provenance(const MappedString& word, Span statement, Layer layer) {
  if (has_unknown(word)) return std::nullopt;  // --recipe $RECIPE with RECIPE unknown
  Provenance where;
  where.layer = layer;
  where.value = span_of(word, 0, word.text.size());
  where.statement = statement;
  where.via = definitions_in(word, 0, word.text.size());
  return where;
}

std::string recipe_task(std::string_view mode) {
  if (mode == "lora" || mode == "dora") return "peft";
  return std::string(mode);
}

ConfigValue flag_value(const ConvenienceFlag& flag, std::vector<Diagnostic>& problems, bool& ok) {
  Provenance where;
  where.layer = Layer::ConvenienceFlag;
  where.value = span_of(flag.value, 0, flag.value.text.size());
  where.statement = flag.statement;
  where.via = definitions_in(flag.value, 0, flag.value.text.size());
  ok = true;
  if (has_unknown(flag.value)) return make_unknown(flag.value.text, where);
  if (flag.integer) {
    if (std::optional<int64_t> value = python_int(flag.value.text)) return make_int(*value, where);
    ok = false;
    problems.push_back(input_finding(input_rule::kEntryPointArgument,
                               fmt::format("argument {}: invalid int value: '{}'", flag.flag, flag.value.text),
                               where.value, fmt::format("{} takes an integer", flag.flag)));
    return make_null();
  }
  if (flag.key.back() == "lr" || flag.key.back() == "min_lr") {
    if (std::optional<double> value = python_float(flag.value.text)) return make_float(*value, where);
    ok = false;
    problems.push_back(input_finding(input_rule::kEntryPointArgument,
                               fmt::format("argument {}: invalid float value: '{}'", flag.flag, flag.value.text),
                               where.value, fmt::format("{} takes a number", flag.flag)));
    return make_null();
  }
  return make_string(flag.value.text, where);
}

void apply_override_words(Job& job, const std::vector<MappedString>& words, Layer layer) {
  for (size_t i = 0; i < words.size(); ++i) {
    const MappedString& word = words[i];
    if (i == kMaxOverrides) {  // a generated or hostile list: the rest is not read
      job.problems.push_back(input_finding(input_rule::kOverrideSyntax,
          fmt::format("more than {} Hydra overrides in one launch; mblint stops reading them here", kMaxOverrides),
          span_of(word, 0, word.text.size()), "split the settings into a --config-file YAML"));
      break;
    }
    HydraParse parse = parse_hydra_override(word, layer);
    for (Diagnostic& d : parse.problems) job.problems.push_back(std::move(d));
    if (parse.parsed) apply_override(job, *parse.parsed, job.problems);
  }
}

void apply_command_line(Job& job, const LintOptions& options, const SourceSet& sources) {
  std::vector<MappedString> sets;
  for (const CommandLineValue& set : options.sets) {
    sets.push_back(mapped_verbatim(set.span.file, set.span.begin, set.text));
  }
  apply_override_words(job, sets, Layer::CommandLine);
  auto count = [&](const std::optional<CommandLineValue>& value, LocatedInt& slot) {
    if (!value) return;
    slot = LocatedInt{};
    slot.where.layer = Layer::CommandLine;
    slot.where.value = value->span;
    slot.where.statement = value->span;
    int64_t parsed = 0;
    auto [ptr, ec] = std::from_chars(value->text.data(), value->text.data() + value->text.size(), parsed);
    if (ec == std::errc() && ptr == value->text.data() + value->text.size()) slot.value = parsed;
  };
  count(options.nodes, job.cluster.nodes);
  count(options.gpus_per_node, job.cluster.gpus_per_node);
  if (options.nodes || options.gpus_per_node) job.cluster.world_size = LocatedInt{};
  if (options.gpu) {
    if (const GpuType* gpu = find_gpu(options.gpu->text)) {
      job.cluster.gpu = gpu->name;
      job.cluster.gpu_where = Provenance{};
      job.cluster.gpu_where.layer = Layer::CommandLine;
      job.cluster.gpu_where.statement = options.gpu->span;
    }
  }
  (void)sources;
}

// Megatron Bridge's start-up rewrites that change what the config means.
bool from_command_line(const ConfigValue* value) {
  if (!value) return false;
  Layer layer = value->where.layer;
  return layer == Layer::Override || layer == Layer::ConvenienceFlag || layer == Layer::CommandLine;
}

// run_recipe.py's sync_model_pipeline_layout: when the command line changes
// PP or VPP and not the layout, a recipe's layout builder computes a new one
// (its value is not in the catalog).
void rebuild_recipe_layout(Job& job) {
  if (!job.recipe || !job.recipe->pipeline_layout_builder) return;
  const ConfigValue* layout = find_path(job.config, "model.pipeline_model_parallel_layout");
  if (!layout || layout->where.layer != Layer::Recipe) return;
  if (!from_command_line(find_path(job.config, "model.pipeline_model_parallel_size")) &&
      !from_command_line(find_path(job.config, "model.virtual_pipeline_model_parallel_size"))) {
    return;
  }
  Provenance where = layout->where;
  where.layer = Layer::Rewrite;
  where.origin = fmt::format("run_recipe.py rebuilds recipe {}'s pipeline layout for the new pipeline sizes",
                             job.recipe->name);
  assign_path(job.config, {"model", "pipeline_model_parallel_layout"},
              make_unknown("the layout the recipe's layout builder computes", std::move(where)));
}

void apply_bridge_rewrites(Job& job) {
  if (job.entry == EntryPoint::RunRecipe || job.entry == EntryPoint::TrainSh) {
    // run_recipe.py: sync_model_dataset_sequence_length copies the dataset's
    // sequence length into the model.
    if (const ConfigValue* dataset = find_path(job.config, "dataset.seq_length"); dataset && !dataset->is_null()) {
      ConfigValue copy = *dataset;
      copy.earlier.clear();
      if (copy.where.layer == Layer::Recipe) {
        copy.where.origin = fmt::format("{} (run_recipe.py copies dataset.seq_length into model.seq_length)",
                                        copy.where.origin);
      } else {
        copy.where.origin.clear();
      }
      const ConfigValue* model = find_path(job.config, "model.seq_length");
      if (!model || to_display(*model) != to_display(copy) || model->where.layer < copy.where.layer) {
        assign_path(job.config, {"model", "seq_length"}, std::move(copy));
      }
    }
  }
  if (job.entry == EntryPoint::RunRecipe || job.entry == EntryPoint::TrainSh) rebuild_recipe_layout(job);
  if (job.cluster.gpu.empty() && job.recipe) {
    if (const GpuType* gpu = find_gpu(job.recipe->gpu)) {
      job.cluster.gpu = gpu->name;
      job.cluster.gpu_where = job.recipe_where;
      job.cluster.gpu_where.origin = fmt::format("recipe {} is set up for {} (pass --gpu if you run elsewhere)",
                                                 job.recipe->name, gpu->display);
    }
  }
}

void finish_job(Job& job, const LintOptions& options, const SourceSet& sources) {
  apply_command_line(job, options, sources);
  InterpolationResult interpolated = resolve_interpolations(job.config);
  if (!interpolated.complete) {
    job.problems.push_back(input_finding(input_rule::kYamlSyntax,
                                   fmt::format("the interpolations of this config chain or copy more than {} "
                                               "values; mblint stops resolving them here",
                                               kInterpolationWork),
                                   interpolated.stopped_at,
                                   "the values past this point are treated as unknown; shorten the chains"));
  }
  job.bridge_problems = interpolation_diagnostics(job, interpolated.problems, sources);
  apply_bridge_rewrites(job);
  // The other dialects' defaults, after every layer (--set, --nodes) so
  // they follow what the job finally says.
  if (job.dialect == Dialect::MegatronLM) apply_megatron_lm_defaults(job);
  if (job.kind == InputKind::NemoYaml || (job.kind == InputKind::LaunchScript && job.dialect == Dialect::NeMo))
    apply_nemo_defaults(job);
  if (options.bridge_version) {
    if (auto v = parse_version(options.bridge_version->text)) {
      job.versions.bridge = *v;
      job.versions.bridge_given = true;
    }
  }
  if (options.megatron_core_version) {
    if (auto v = parse_version(options.megatron_core_version->text)) {
      job.versions.megatron_core = *v;
      job.versions.megatron_core_given = true;
    }
  }
}

void select_command_line_recipe(Job& job, const LintOptions& options) {
  if (!options.recipe) return;
  Provenance where;
  where.layer = Layer::CommandLine;
  where.value = options.recipe->span;
  where.statement = options.recipe->span;
  select_recipe(job, options.recipe->text, where);
}

// The launch names its recipe through something mblint cannot evaluate
// (`--recipe "$1"`): mblint's own --recipe says which one, else it stays unknown.
void recipe_not_known(Job& job, const MappedString& word, const LintOptions& options) {
  if (options.recipe) {
    select_command_line_recipe(job, options);
    return;
  }
  job.unresolved.push_back(Unresolved{"recipe",
                                      fmt::format("the recipe name is `{}`, which is not known here", word.text),
                                      "pass --recipe NAME to say which recipe this launch runs",
                                      span_of(word, 0, word.text.size())});
}

// --- YAML ----------------------------------------------------------------------

fs::path resolve_relative(const fs::path& path, const fs::path& base_dir) {
  return path.is_absolute() ? path : base_dir / path;
}

std::string display_path(const fs::path& path, const fs::path& base_dir) {
  std::error_code error;
  fs::path relative = fs::relative(path, base_dir, error);
  if (!error && !relative.empty() && relative.native().rfind("..", 0) != 0) return relative.lexically_normal().string();
  return path.lexically_normal().string();
}

// --- launch scripts ----------------------------------------------------------------

// How far above a script its repository's root may be.
constexpr int kRepositoryLevels = 8;

struct ScriptContext {
  SourceSet& sources;
  const LintOptions& options;
  std::set<fs::path>& referenced;  // YAML files followed from scripts
  std::map<fs::path, FileId>& loaded;  // each file is read once per run
  fs::path script_dir;
  // YAML parsed for this script's jobs, by file: a trainer's Hydra configs
  // are read while finding its root config and again while composing it.
  std::map<FileId, LoadedYaml> parsed = {};
};

// `file` parsed once per script (its problems reported with each use; the
// run drops the duplicates).
const LoadedYaml& parsed_yaml(ScriptContext& context, FileId file) {
  auto it = context.parsed.find(file);
  if (it == context.parsed.end()) {
    it = context.parsed.emplace(file, load_config_yaml(context.sources, file, context.options.yaml_cache)).first;
  }
  return it->second;
}

void load_config_file(Job& job, const Launch& launch, ScriptContext& context) {
  if (!launch.config_file) return;
  const MappedString& word = *launch.config_file;
  Span statement = launch.config_file_statement;
  fs::path path;
  if (context.options.launch_config_file) {
    path = *context.options.launch_config_file;  // a .mblint.yaml context names the file this launch runs
  } else {
    if (has_unknown(word)) {  // --config-file $CONFIG with CONFIG unknown
      job.unresolved.push_back(Unresolved{
          "config file", fmt::format("the --config-file path is `{}`, which is not known here", word.text),
          "name the YAML this launch runs in a `context:` entry of .mblint.yaml (`files:` and `launch:`)",
          span_of(word, 0, word.text.size())});
      return;
    }
    fs::path named = word.text;
    path = named.is_absolute() ? named : context.script_dir / named;
    if (!source_file_exists(path, &context.options.overlay)) path = resolve_relative(named, context.options.base_dir);
  }
  Span where = span_of(word, 0, word.text.size());
  fs::path canonical = canonical_or_same(context.sources.canonical, path);
  FileId file = kNoFile;
  if (auto it = context.loaded.find(canonical); it != context.loaded.end()) {
    file = it->second;
  } else {
    ReadResult read = read_source_file(context.sources, path, display_path(path, context.options.base_dir), where,
                                       kMaxInputBytes, &context.options.overlay);
    if (read.problem) {
      read.problem->message += " (looked next to the script and in the current directory)";
      read.problem->help = "check the path: the entry point resolves it from where it runs; mblint looks next to "
                           "the launch script, then in the current directory";
      job.problems.push_back(std::move(*read.problem));
      return;
    }
    file = read.file;
    context.loaded[canonical] = file;
  }
  context.referenced.insert(canonical);
  job.files.push_back(file);
  LoadedYaml yaml = load_config_yaml(context.sources, file, context.options.yaml_cache);
  for (Diagnostic& d : yaml.problems) job.problems.push_back(std::move(d));
  if (!yaml.ok || !yaml.root.is_map()) return;
  hoist_transformer_fields(yaml.root, job);
  merge_into(job.config, yaml.root);
  (void)statement;
}

// The release the flags are checked against: --megatron-core-version, else
// mblint's default.
FlagCheckOptions flag_check_options(const LintOptions& options) {
  FlagCheckOptions check;
  check.version = kNewestMegatronCore;
  if (options.megatron_core_version) {
    if (auto v = parse_version(options.megatron_core_version->text)) {
      check.version = *v;
      check.version_given = true;
    }
  }
  return check;
}

// The diagnostics, and the settings a misspelled flag meant: unknown
// rather than Megatron-LM's default (the run stops before either applies).
// Settings only one entry script builds a model from (the estimate reads
// them: lint/facts/estimate_llava.cpp, estimate_t5.cpp): pretrain_vlm.py's
// vision tower, examples/mimo/train.py's provider, T5's encoder and decoder.
// Under a known entry script that is none of their scripts they do nothing
// (--img-h is in every script's parser; --freeze-ViT is an unknown flag to
// pretrain_gpt.py), so they are dropped from the job.
void keep_script_models(Job& job, const FlagParser& parser) {
  if (!parser.known) return;
  struct ScriptModel {
    std::vector<std::string_view> scripts;
    std::vector<std::string_view> paths;
  };
  static const std::vector<ScriptModel> kModels = {
      {{"pretrain_vlm.py", "examples/multimodal/train.py"},
       {"model.img_h", "model.img_w", "model.patch_dim", "model.dataloader_seq_length",
        "model.disable_vision_class_token", "model.freeze_language_model", "model.freeze_vision_model",
        "model.vision_model_type"}},
      {{"examples/mimo/train.py"},
       {"model.model_provider", "model.total_seq_length", "model.packing_buffer_size",
        "checkpoint.language_model_checkpoint"}},
      {{"examples/t5/pretrain_t5.py", "pretrain_t5.py", "pretrain_vlm.py", "examples/multimodal/train.py"},
       {"model.encoder_num_layers", "model.decoder_num_layers", "model.decoder_seq_length"}},
  };
  for (const ScriptModel& model : kModels) {
    bool runs = std::any_of(parser.scripts.begin(), parser.scripts.end(), [&](std::string_view script) {
      return std::find(model.scripts.begin(), model.scripts.end(), script) != model.scripts.end();
    });
    if (runs) continue;
    for (std::string_view path : model.paths) erase_path(job.config, split_path(path));
  }
}

void take_flag_check(Job& job, FlagCheck check) {
  for (Diagnostic& d : check.diagnostics) job.problems.push_back(std::move(d));
  // A fork's validate_args may differ: the argument rules do not judge it.
  if (check.fork_flags) job.megatron_lm_script.clear();
  for (const FlagCheck::Intended& intended : check.intended) {
    const MegatronLmFlag* spec = megatron_lm_flag_kept(intended.flag);
    if (!spec) continue;
    Provenance where;
    where.layer = Layer::Override;
    where.key = intended.at;
    where.statement = intended.at;
    where.origin = fmt::format("not set: the flag meant to set it is misspelled ({} expected)", intended.flag);
    for (std::string_view path : {spec->path, spec->also}) {
      if (path.empty() || find_path(job.config, path)) continue;
      assign_path(job.config, split_path(path), make_unknown(std::string(intended.flag), where));
    }
  }
}

// slime's train.py overrides Megatron-LM's parsed arguments before
// validate_args (slime/backends/megatron_utils/arguments.py,
// set_default_megatron_args): the distributed optimizer for Adam (every
// release; Muon and the other optimizers shard themselves), bf16 unless fp16.
void apply_slime_defaults(Job& job, const Launch& launch) {
  Provenance where;
  where.layer = Layer::Rewrite;
  where.statement = span_of(launch.program, 0, launch.program.text.size());
  const ConfigValue* optimizer = find_path(job.config, "optimizer.optimizer");
  bool adam = !optimizer || (optimizer->kind == ValueKind::String && optimizer->text == "adam");
  if (adam || (optimizer && optimizer->kind == ValueKind::Unknown)) {
    where.origin = "slime's set_default_megatron_args uses the distributed optimizer with Adam";
    for (std::string_view path : {"ddp.use_distributed_optimizer", "optimizer.use_distributed_optimizer"}) {
      assign_path(job.config, split_path(path), adam ? make_bool(true, where) : make_unknown(optimizer->text, where));
    }
  }
  const ConfigValue* fp16 = find_path(job.config, "model.fp16");
  if (!fp16 || (fp16->kind == ValueKind::Bool && !fp16->boolean)) {
    where.origin = "slime's set_default_megatron_args trains in bf16 unless --fp16";
    for (std::string_view path : {"model.bf16", "optimizer.bf16"}) {
      assign_path(job.config, split_path(path), make_bool(true, where));
    }
  }
}

// ms-swift's `megatron` CLI fills Megatron-LM's arguments from its own
// dataclass (swift/megatron/arguments/megatron_args.py, MegatronArguments, at
// modelscope/ms-swift 3602360a5), whose defaults differ from Megatron-LM's
// argparse: these stand where the launch does not set them. Precision comes
// from the model's torch_dtype (its Hugging Face config): unknown.
void apply_ms_swift_defaults(Job& job) {
  Provenance where;
  where.layer = Layer::SchemaDefault;
  auto put = [&](std::string_view path, ConfigValue value, const char* origin) {
    if (find_path(job.config, path)) return;
    value.where = where;
    value.where.origin = origin;
    assign_path(job.config, split_path(path), std::move(value));
  };
  const char* zero = "ms-swift's default: the distributed optimizer";
  put("ddp.use_distributed_optimizer", make_bool(true, where), zero);
  put("optimizer.use_distributed_optimizer", make_bool(true, where), zero);
  put("model.expert_tensor_parallel_size", make_int(1, where),
      "ms-swift's default since 3.9 (September 2025; before, tensor_model_parallel_size)");
  put("model.moe_token_dispatcher_type", make_string("alltoall", where), "ms-swift's default");
  put("model.attention_backend", make_string("flash", where), "ms-swift's default");
  put("model.moe_router_dtype", make_string("fp32", where), "ms-swift's default");
  put("model.moe_grouped_gemm", make_bool(true, where), "ms-swift's default");
  put("model.hidden_dropout", make_float(0.0, where), "ms-swift's default");
  put("model.attention_dropout", make_float(0.0, where), "ms-swift's default");
  if (!find_path(job.config, "model.recompute_granularity")) {
    put("model.recompute_granularity", make_string("selective", where), "ms-swift's default");
    ConfigValue modules = make_list();
    modules.items.push_back(make_string("core_attn", where));
    put("model.recompute_modules", std::move(modules), "ms-swift's default: selective recompute of core_attn");
  }
  where.layer = Layer::Launcher;
  for (std::string_view path : {"model.bf16", "model.fp16", "optimizer.bf16", "optimizer.fp16"}) {
    if (find_path(job.config, path)) continue;
    Provenance unknown = where;
    unknown.origin = "ms-swift takes the precision from the model's torch_dtype, which mblint does not read";
    assign_path(job.config, split_path(path), make_unknown("the model's torch_dtype", unknown));
  }
}

// Megatron-DeepSpeed: DeepSpeed's ZeRO shards what Megatron-LM's distributed
// optimizer would (and more from stage 2), not Megatron-LM's default of none.
void deepspeed_zero_sharding(Job& job, const Launch& launch) {
  Provenance where;
  where.layer = Layer::Launcher;
  where.statement = launch.span;
  where.origin = "Megatron-DeepSpeed: DeepSpeed's ZeRO stage decides how the optimizer is sharded";
  for (std::string_view path : {"ddp.use_distributed_optimizer", "optimizer.use_distributed_optimizer"}) {
    if (!find_path(job.config, path)) assign_path(job.config, split_path(path), make_unknown("ZeRO", where));
  }
}

// `"$@"` or `$EXTRA_ARGS` among the flags: read as empty (bash's value when
// nothing gives it), and said, with how to give it.
void note_outside_arguments(Job& job, const MappedString& word) {
  bool positional = word.text.find("$@") != std::string::npos || word.text.find("$*") != std::string::npos ||
                    word.text.find("${@") != std::string::npos;
  job.unresolved.push_back(Unresolved{
      fmt::format("arguments `{}`", word.text),
      fmt::format("`{}` among the flags comes from {}, not known here: read as empty, so a flag it may hold is "
                  "not seen (its setting takes Megatron-LM's default)",
                  word.text, positional ? "the script's own arguments" : "the environment"),
      positional ? "give the script's arguments after `--` (mblint check SCRIPT -- ARG...)"
                 : "set it in the script, or pass --set KEY=VALUE for the settings it holds",
      span_of(word, 0, word.text.size())});
}

void apply_megatron_lm_arguments(Job& job, const Launch& launch, const ScriptContext& context) {
  MegatronArgv argv;
  argv.words = launch.arguments;
  argv.layer = Layer::Override;
  // Megatron-DeepSpeed's parser has choices of its own (--normalization
  // rmsnorm, --position-embedding-type alibi).
  bool deepspeed = launch.wrapper == kDeepSpeedWrapper || megatron_deepspeed_argv(argv);
  argv.own_choices = deepspeed;
  MegatronLmArgs args = read_megatron_lm_args(argv);
  merge_into(job.config, args.config);
  for (Diagnostic& d : args.problems) job.problems.push_back(std::move(d));
  if (deepspeed) deepspeed_zero_sharding(job, launch);
  if (args.outside_word) note_outside_arguments(job, *args.outside_word);
  if (launch.wrapper == kSlimeWrapper) apply_slime_defaults(job, launch);
  // A wrapper (deepspeed, slime, ms-swift) adds options of its own: the
  // flags are not checked against Megatron-LM's parser alone.
  if (!launch.wrapper.empty()) return;
  FlagParser parser = parser_for_program(launch.program.text);
  if (parser.known && !deepspeed) job.megatron_lm_script = parser.entry;
  keep_script_models(job, parser);
  Span program = span_of(launch.program, 0, launch.program.text.size());
  take_flag_check(job, check_megatron_lm_flags(argv, parser, flag_check_options(context.options), context.sources,
                                               program));
}

void apply_launch_layers(Job& job, const Launch& launch, ScriptContext& context) {
  if (launch.entry == EntryPoint::MegatronLM) {
    apply_megatron_lm_arguments(job, launch, context);
    return;
  }
  if (launch.entry == EntryPoint::RunRecipe || launch.entry == EntryPoint::TrainSh) {
    if (launch.recipe) {
      if (auto where = recipe_provenance(*launch.recipe, launch.recipe_statement, Layer::Override)) {
        select_recipe(job, launch.recipe->text, *where);
      } else {
        recipe_not_known(job, *launch.recipe, context.options);
      }
    } else if (launch.model && launch.mode) {
      std::string name = fmt::format("{}_{}_config", launch.model->text, recipe_task(launch.mode->text));
      if (has_unknown(*launch.mode)) {
        recipe_not_known(job, *launch.mode, context.options);
      } else if (auto where = recipe_provenance(*launch.model, launch.model_statement, Layer::Override)) {
        select_recipe(job, name, *where);
      } else {
        recipe_not_known(job, *launch.model, context.options);
      }
    }
  } else {
    select_command_line_recipe(job, context.options);  // the script fixes its recipe inside
    load_config_file(job, launch, context);
  }
  for (const ConvenienceFlag& flag : launch.flags) {
    bool ok = true;
    ConfigValue value = flag_value(flag, job.problems, ok);
    if (ok) assign_path(job.config, flag.key, std::move(value));
  }
  apply_override_words(job, launch.overrides, Layer::Override);
}

std::string lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// A model's name without its path, its case and the marks of a variant of
// the same shape, in any order: `Qwen/Qwen3-30B-A3B-Instruct-2507-FP8` is
// `qwen3-30b-a3b`.
std::string base_model_name(std::string_view text) {
  std::string name = lowercase(text.substr(text.rfind('/') == std::string_view::npos ? 0 : text.rfind('/') + 1));
  for (bool stripped = true; stripped;) {
    stripped = false;
    for (std::string_view suffix : {"_torch_dist", "-torch-dist", "-mcore", "-instruct", "-thinking", "-base", "-chat",
                                    "-fp8"}) {
      if (name.size() > suffix.size() && ends_with(name, suffix)) {
        name.resize(name.size() - suffix.size());
        stripped = true;
      }
    }
    // A release date (`-2507`: July 2025).
    if (name.size() > 5 && name[name.size() - 5] == '-' &&
        std::all_of(name.end() - 4, name.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
      name.resize(name.size() - 5);
      stripped = true;
    }
  }
  return name;
}

// The catalogued model a Hugging Face id or checkpoint directory names:
// `Qwen/Qwen3-8B`, `/root/Qwen3-4B`, `ZhipuAI/GLM-4.5-Air-Base-mcore`,
// compared by base_model_name; null unless exactly one catalogued model
// matches.
const ModelDims* model_named(std::string_view text) {
  while (!text.empty() && text.back() == '/') text.remove_suffix(1);
  std::string name = base_model_name(text);
  const ModelDims* found = nullptr;
  for (const ModelDims& model : all_models()) {
    if (!model.hf_id || !*model.hf_id) continue;
    std::string_view id = model.hf_id;
    if (base_model_name(id) != name) continue;
    if (found && std::string_view(found->hf_id) != id) return nullptr;  // two models of that name
    found = &model;
  }
  return found;
}

// A launch that names its model only by id or checkpoint takes the model's
// shape from the catalog; every value says so. Values the launch writes win.
void apply_named_model(Job& job, const Launch& launch) {
  if (!launch.named_model || has_unknown(*launch.named_model)) return;
  if (find_path(job.config, "model.num_layers") || find_path(job.config, "model.hidden_size")) return;
  const ModelDims* model = model_named(launch.named_model->text);
  if (!model) return;
  Provenance where;
  where.layer = Layer::Recipe;
  where.value = span_of(*launch.named_model, 0, launch.named_model->text.size());
  where.statement = launch.named_model_statement;
  where.origin = fmt::format("the shape of {} in mblint's catalog (the launch names the model `{}`)", model->hf_id,
                             launch.named_model->text);
  auto put = [&](std::string_view key, int value) {
    if (value <= 0 || find_path(job.config, fmt::format("model.{}", key))) return;
    assign_path(job.config, {"model", std::string(key)}, make_int(value, where));
  };
  put("num_layers", model->num_layers);
  put("hidden_size", model->hidden_size);
  put("num_attention_heads", model->num_attention_heads);
  put("num_query_groups", model->num_query_groups);
  put("ffn_hidden_size", model->ffn_hidden_size);
  put("kv_channels", model->kv_channels);
  put("num_moe_experts", model->num_moe_experts);
  put("moe_ffn_hidden_size", model->moe_ffn_hidden_size);
  put("moe_router_topk", model->moe_router_topk);
}

// A YAML file a launch names indirectly (a NeMo-RL `defaults:` parent),
// read once per run and linted with the launch; nullopt with `why`.
std::optional<ConfigValue> read_launch_yaml(Job& job, ScriptContext& context, const fs::path& path, Span named_at,
                                            std::string& why) {
  if (!source_file_exists(path, &context.options.overlay)) {
    why = fmt::format("there is no file `{}`", display_path(path, context.options.base_dir));
    return std::nullopt;
  }
  fs::path canonical = canonical_or_same(context.sources.canonical, path);
  FileId file = kNoFile;
  if (auto it = context.loaded.find(canonical); it != context.loaded.end()) {
    file = it->second;
  } else {
    ReadResult read = read_source_file(context.sources, path, display_path(path, context.options.base_dir),
                                       named_at, kMaxInputBytes, &context.options.overlay);
    if (read.problem) {
      why = read.problem->message;
      return std::nullopt;
    }
    file = read.file;
    context.loaded[canonical] = file;
  }
  context.referenced.insert(canonical);
  if (std::find(job.files.begin(), job.files.end(), file) == job.files.end()) job.files.push_back(file);
  const LoadedYaml& yaml = parsed_yaml(context, file);
  job.problems.insert(job.problems.end(), yaml.problems.begin(), yaml.problems.end());
  if (!yaml.ok) {
    why = fmt::format("`{}` is not valid YAML", display_path(path, context.options.base_dir));
    return std::nullopt;
  }
  return yaml.root;
}

// Where NeMo-RL's `--config PATH` is: as written (absolute), next to the
// script, in the current directory, or from the repository's root above the
// script (the scripts `cd` there first).
std::optional<fs::path> locate_launch_file(const ScriptContext& context, const fs::path& named) {
  std::error_code error;
  const auto* overlay = &context.options.overlay;
  if (named.is_absolute()) return source_file_exists(named, overlay) ? std::optional(named) : std::nullopt;
  std::vector<fs::path> candidates = {context.script_dir / named, context.options.base_dir / named};
  fs::path above = fs::absolute(context.script_dir, error).lexically_normal();
  for (int level = 0; level < kRepositoryLevels && above.has_parent_path() && above != above.parent_path(); ++level) {
    above = above.parent_path();
    candidates.push_back(above / named);
  }
  for (const fs::path& candidate : candidates) {
    if (source_file_exists(candidate, overlay)) return candidate;
  }
  return std::nullopt;
}

// NeMo-RL: the policy's settings from --config (and the files it inherits
// from) and the overrides, as Megatron-LM flags for the job.
// On/off flags NeMo-RL's config leaves unknown: unknown settings, not
// Megatron-LM's defaults (applied after the flags are read).
void mark_unknown_flags(Job& job, const std::vector<std::string_view>& flags, Span where_written) {
  for (std::string_view flag : flags) {
    const MegatronLmFlag* spec = find_megatron_lm_flag(flag);
    if (!spec) continue;
    Provenance where;
    where.layer = Layer::ConfigFile;
    where.statement = where_written;
    where.origin = fmt::format("NeMo-RL's config does not make {} known", flag);
    for (std::string_view path : {spec->path, spec->also}) {
      if (!path.empty()) assign_path(job.config, split_path(path), make_unknown(std::string(flag), where));
    }
  }
}

Launch with_nemo_rl_policy(const Launch& launch, Job& job, ScriptContext& context,
                           std::vector<std::string_view>& unknown_flags) {
  Launch expanded = launch;
  Span command = launch.span;
  if (!launch.config_file) {
    job.unresolved.push_back(Unresolved{"config file", "NeMo-RL's trainer is run without --config: its settings are "
                                        "the program's built-in default config, which mblint does not have",
                                        "pass --config FILE on the launch line", command});
  }
  ConfigValue root = make_map();
  if (launch.config_file && has_unknown(*launch.config_file)) {
    job.unresolved.push_back(Unresolved{
        "config file", fmt::format("the --config path is `{}`, which is not known here", launch.config_file->text),
        "write the path on the launch line, or give the script's arguments after `--`",
        span_of(*launch.config_file, 0, launch.config_file->text.size())});
  } else if (launch.config_file) {
    Span named_at = span_of(*launch.config_file, 0, launch.config_file->text.size());
    std::optional<fs::path> path = locate_launch_file(context, launch.config_file->text);
    if (!path) {
      job.unresolved.push_back(Unresolved{
          "config file",
          fmt::format("there is no file `{}` (looked next to the script, in the current directory and in the "
                      "directories above the script)",
                      launch.config_file->text),
          "check the path", named_at});
    } else {
      ReadNemoRlYaml read = [&](const fs::path& file, Span at, std::string& why) {
        return read_launch_yaml(job, context, file, at, why);
      };
      NemoRlConfig config = read_nemo_rl_config(*path, named_at, launch.overrides, read);
      root = std::move(config.root);
      for (Unresolved& gap : config.unresolved) job.unresolved.push_back(std::move(gap));
    }
  }
  if (!find_child(root, "policy") && !find_child(root, "cluster")) apply_dotted_overrides(root, launch.overrides);
  NemoRlPolicy policy = nemo_rl_policy(root, command);
  expanded.arguments = std::move(policy.arguments);
  expanded.cluster = policy.cluster;
  if (policy.model) {
    expanded.named_model = policy.model;
    expanded.named_model_statement = policy.model_statement;
  }
  if (policy.megatron == false) job.trains = false;  // a DTensor policy: not a Megatron training
  unknown_flags = std::move(policy.unknown_flags);
  return expanded;
}

// The last `key=value` word of `launch` with exactly this key.
const MappedString* launcher_override(const Launch& launch, std::string_view key) {
  const MappedString* found = nullptr;
  for (const MappedString& word : launch.overrides) {
    if (std::string_view(word.text).substr(0, word.text.find('=')) == key) found = &word;
  }
  return found;
}

std::string override_text(const MappedString& word) { return word.text.substr(word.text.find('=') + 1); }

// NeMo-Framework-Launcher's main.py: the training stage it runs, from
// `stages=[...]` or the stage whose config is chosen; "" when unknown,
// "-" when no stage trains (conversion, evaluation, data preparation).
std::string launcher_stage(const Launch& launch) {
  static constexpr std::array<std::string_view, 3> kTraining = {"training", "fine_tuning", "peft"};
  if (const MappedString* stages = launcher_override(launch, "stages")) {
    if (has_unknown(*stages)) return "";
    std::string list = override_text(*stages);
    for (char& c : list) {
      if (c == '[' || c == ']' || c == ',' || c == '"' || c == '\'') c = ' ';
    }
    std::istringstream names(list);
    for (std::string name; names >> name;) {
      if (std::find(kTraining.begin(), kTraining.end(), name) != kTraining.end()) return name;
    }
    return "-";
  }
  for (std::string_view stage : kTraining) {
    if (launcher_override(launch, stage)) return std::string(stage);
  }
  return "";
}

// NeMo-Framework-Launcher: main.py composes the stage's config,
// launcher_scripts/conf/<stage>/<group>.yaml next to main.py, and applies
// the `<stage>.*` overrides; the NeMo 1.x job is that config. When main.py's
// own path is not known (an installed launcher, /opt/NeMo-Framework-Launcher),
// the config is looked up in the repository above the script.
// The stage config (or, when it was not read, only the overrides) as the
// job's NeMo config. Without the file, what NeMo would default is unknown:
// the file may set it.
void take_launcher_config(Job& job, ConfigValue root, const Launch& launch, const std::string& stage, bool read) {
  apply_dotted_overrides(root, launch.overrides, stage.empty() ? std::string() : stage + ".");
  NemoConfig nemo = read_nemo_config(root);
  merge_into(job.config, nemo.config);
  // Under torchrun or srun the processes are the launcher's (NeMo's
  // trainer.devices must match them); otherwise the config's trainer.
  if (!job.cluster.requests.torchrun && !job.cluster.requests.srun) job.cluster = nemo.cluster;
  job.trains = !nemo.inference;
  if (read) return;
  Provenance where;
  where.layer = Layer::ConfigFile;
  where.statement = launch.span;
  where.origin = "set in the stage config, which mblint did not read";
  for (std::string_view path : {"model.tensor_model_parallel_size", "model.pipeline_model_parallel_size",
                                "model.context_parallel_size", "model.expert_model_parallel_size",
                                "model.expert_tensor_parallel_size", "model.sequence_parallel",
                                "model.virtual_pipeline_model_parallel_size", "model.num_moe_experts"}) {
    if (!find_path(job.config, path)) assign_path(job.config, split_path(path), make_unknown(std::string(path), where));
  }
}

// NeMo-Framework-Launcher: main.py composes the stage's config,
// launcher_scripts/conf/<stage>/<group>.yaml next to main.py, and applies
// the `<stage>.*` overrides; the NeMo 1.x job is that config. When main.py's
// own path is not known (an installed launcher, /opt/NeMo-Framework-Launcher),
// the config is looked up in the repository above the script.
void build_nemo_launcher_job(Job& job, const Launch& launch, ScriptContext& context) {
  job.dialect = Dialect::NeMo;
  Span command = launch.span;
  std::string stage = launcher_stage(launch);
  if (stage == "-") {
    job.trains = false;
    return;
  }
  std::string supply = "pass stages=[training] and training=GROUP/NAME on the launch line";
  if (stage.empty()) {
    job.unresolved.push_back(Unresolved{"config file", "the stage main.py runs is set in launcher_scripts/conf/"
                                        "config.yaml, not on the launch line", supply, command});
    take_launcher_config(job, make_map(), launch, "training", false);
    return;
  }
  const MappedString* group = launcher_override(launch, stage);
  if (!group || has_unknown(*group)) {
    job.unresolved.push_back(Unresolved{
        "config file",
        group ? fmt::format("the {} config is `{}`, which is not known here", stage, override_text(*group))
              : fmt::format("the {} config is the default of launcher_scripts/conf/config.yaml", stage),
        supply, group ? span_of(*group, 0, group->text.size()) : command});
    take_launcher_config(job, make_map(), launch, stage, false);
    return;
  }
  fs::path relative = fs::path("conf") / stage / (override_text(*group) + ".yaml");
  std::vector<fs::path> candidates;
  if (!has_unknown(launch.program)) candidates.push_back(fs::path(launch.program.text).parent_path() / relative);
  std::error_code error;
  fs::path above = fs::absolute(context.script_dir, error).lexically_normal();
  for (int level = 0; level < kRepositoryLevels && above.has_parent_path() && above != above.parent_path(); ++level) {
    above = above.parent_path();
    candidates.push_back(above / "launcher_scripts" / relative);
  }
  Span named_at = span_of(*group, 0, group->text.size());
  for (const fs::path& candidate : candidates) {
    if (!source_file_exists(candidate, &context.options.overlay)) continue;
    std::string why;
    std::optional<ConfigValue> root = read_launch_yaml(job, context, candidate, named_at, why);
    if (!root) {
      job.unresolved.push_back(Unresolved{"config file", why, "check the file", named_at});
      take_launcher_config(job, make_map(), launch, stage, false);
      return;
    }
    take_launcher_config(job, std::move(*root), launch, stage, true);
    return;
  }
  job.unresolved.push_back(Unresolved{
      "config file",
      fmt::format("there is no {} next to main.py or in a launcher_scripts/ directory above the script",
                  relative.string()),
      "check the config group's name", named_at});
  take_launcher_config(job, make_map(), launch, stage, false);
}

// ms-swift's `megatron sft config.yaml`: each top-level `key: value` of the
// file is the option `--key value` (a list gives several values), before the
// options written after the file on the command line. A file mblint cannot
// read may set anything: an unknown word stands for it among the arguments.
Launch with_ms_swift_config(const Launch& launch, Job& job, ScriptContext& context) {
  Launch expanded = launch;
  const MappedString& named = *launch.config_file;
  Span named_at = span_of(named, 0, named.text.size());
  std::optional<ConfigValue> root;
  std::string why = fmt::format("the path `{}` is not known here", named.text);
  if (!has_unknown(named)) {
    if (std::optional<fs::path> path = locate_launch_file(context, named.text)) {
      root = read_launch_yaml(job, context, *path, named_at, why);
    } else {
      why = fmt::format("there is no file `{}` (looked next to the script, in the current directory and in the "
                        "directories above the script)", named.text);
    }
  }
  std::vector<MappedString> words;
  if (!root || !root->is_map()) {
    job.unresolved.push_back(Unresolved{"config file", why, "check the path, or run mblint where the launch runs",
                                        named_at});
    MappedString opaque = word_at(named.text, named_at);
    opaque.expansions.push_back(Expansion{0, opaque.text.size(), named_at, named_at, "the settings of " + named.text, false});
    words.push_back(std::move(opaque));
  } else {
    for (const MapEntry& entry : root->entries) {
      const ConfigValue& value = entry.value;
      if (value.is_map() || value.is_null()) continue;
      words.push_back(word_at("--" + entry.key, value.where.key.valid() ? value.where.key : named_at));
      std::vector<const ConfigValue*> items;
      if (value.is_list()) {
        for (const ConfigValue& item : value.items) items.push_back(&item);
      } else {
        items.push_back(&value);
      }
      for (const ConfigValue* item : items) {
        std::string text = item->kind == ValueKind::String ? item->text : to_display(*item);
        words.push_back(word_at(text, item->where.value.valid() ? item->where.value : named_at));
      }
      if (entry.key == "model" && value.kind == ValueKind::String && !launch.named_model) {
        expanded.named_model = words.back();
        expanded.named_model_statement = value.where.value;
      }
    }
    words = ms_swift_megatron_words(words);
  }
  words.insert(words.end(), launch.arguments.begin(), launch.arguments.end());
  expanded.arguments = std::move(words);
  return expanded;
}

// verl's transformer config (verl/models/mcore/config_converter.py,
// _get_base_transformer_config): sequence parallelism exactly when TP > 1,
// whatever actor.megatron.sequence_parallel says, and the alltoall dispatcher.
void apply_verl_rewrites(Job& job, const Launch& launch) {
  Provenance where;
  where.layer = Layer::Rewrite;
  where.statement = launch.span;
  where.origin = "verl's config converter: sequence_parallel = tensor_model_parallel_size > 1";
  const ConfigValue* tp = find_path(job.config, "model.tensor_model_parallel_size");
  std::optional<int64_t> size = tp ? as_int(tp) : std::optional<int64_t>(1);  // verl's default TP 1
  assign_path(job.config, {"model", "sequence_parallel"},
              size ? make_bool(*size > 1, where) : make_unknown("tensor_model_parallel_size > 1", where));
  if (!find_path(job.config, "model.moe_token_dispatcher_type")) {
    where.origin = "verl's config converter uses the alltoall dispatcher";
    assign_path(job.config, {"model", "moe_token_dispatcher_type"}, make_string("alltoall", where));
  }
}

// verl's Megatron actor, ms-swift and NeMo-RL build the model's transformer
// config from its Hugging Face config (verl's and mbridge's converters,
// ms-swift's, Megatron Bridge's AutoBridge), not from Megatron-LM's parser.
bool model_from_hf_config(const Launch& launch) {
  const std::string& wrapper = launch.wrapper;
  return wrapper == kVerlWrapper || starts_with(wrapper, kMsSwiftWrapperPrefix) ||
         starts_with(wrapper, kNemoRlWrapperPrefix);
}

// What such a launch does not set is the checkpoint's, never argparse's
// default (a dense model, multi-head attention, add_bias_linear true, no QK
// norm, LayerNorm, learned positions, GPT-2's tokenizer): unknown, or what
// mblint's catalog records when it knows the model.
void hf_model_architecture(Job& job, const Launch& launch) {
  const ModelDims* model =
      launch.named_model && !has_unknown(*launch.named_model) ? model_named(launch.named_model->text) : nullptr;
  Provenance where;
  where.layer = Layer::Launcher;
  where.statement = launch.named_model ? launch.named_model_statement : launch.span;
  where.origin = "the model's Hugging Face config, which mblint does not read";
  if (!model) {  // a known model's experts and groups come with its shape (apply_named_model)
    for (std::string_view path : {"model.num_moe_experts", "model.num_query_groups"}) {
      if (!find_path(job.config, path)) assign_path(job.config, split_path(path), make_unknown(std::string(path), where));
    }
  }
  Provenance catalog = where;
  catalog.layer = Layer::Recipe;
  if (model) {
    catalog.origin = fmt::format("{} in mblint's catalog (the launch names the model `{}`)", model->hf_id,
                                 launch.named_model->text);
  }
  auto put = [&](std::string_view path, std::optional<bool> known) {
    if (find_path(job.config, path)) return;
    assign_path(job.config, split_path(path),
                known ? make_bool(*known, catalog) : make_unknown(std::string(path), where));
  };
  put("model.gated_linear_unit", model ? std::optional<bool>(model->gated_linear_unit) : std::nullopt);
  put("model.share_embeddings_and_output_weights", model ? std::optional<bool>(model->tied_embeddings) : std::nullopt);
  put("model.multi_latent_attention", model ? std::optional<bool>(model->multi_latent_attention) : std::nullopt);
  for (std::string_view path : {"model.add_bias_linear", "model.qk_layernorm", "model.normalization",
                                "model.position_embedding_type", "model.moe_router_dtype"}) {
    put(path, std::nullopt);
  }
  // The checkpoint's own tokenizer, not pretrain_gpt.py's GPT-2 default.
  if (!find_path(job.config, "tokenizer.tokenizer_type")) {
    Provenance tokenizer = where;
    tokenizer.origin = "the model's Hugging Face tokenizer";
    assign_path(job.config, {"tokenizer", "tokenizer_type"}, make_string("HuggingFaceTokenizer", tokenizer));
  }
  if (model && model->vocab_size > 0 && !find_path(job.config, "model.vocab_size")) {
    assign_path(job.config, {"model", "vocab_size"}, make_int(model->vocab_size, catalog));
  }
}

// ChatLearn: --config-file (read next to the script, where the run script
// starts it) with the overrides applied; a file mblint cannot read may set
// anything.
Launch with_chatlearn_config(const Launch& launch, Job& job, ScriptContext& context) {
  Launch expanded = launch;
  std::optional<ConfigValue> root;
  std::string why = "the trainer is run without --config-file";
  Span named_at = launch.span;
  if (launch.config_file) {
    named_at = span_of(*launch.config_file, 0, launch.config_file->text.size());
    why = fmt::format("the --config-file path `{}` is not known here", launch.config_file->text);
    if (!has_unknown(*launch.config_file)) {
      if (std::optional<fs::path> path = locate_launch_file(context, launch.config_file->text)) {
        root = read_launch_yaml(job, context, *path, named_at, why);
      } else {
        why = fmt::format("there is no file `{}` next to the script or in the current directory",
                          launch.config_file->text);
      }
    }
  }
  std::vector<MappedString> words;
  if (!root || !root->is_map()) {
    job.unresolved.push_back(Unresolved{"config file", why, "check the path", named_at});
    MappedString opaque = word_at(launch.config_file ? launch.config_file->text : "the config", named_at);
    opaque.expansions.push_back(Expansion{0, opaque.text.size(), named_at, named_at, "the config file", false});
    words.push_back(std::move(opaque));
    root = make_map();
  }
  apply_dotted_overrides(*root, launch.overrides);
  resolve_interpolations(*root);
  for (MappedString& word : chatlearn_megatron_words(*root, launch.span)) words.push_back(std::move(word));
  expanded.arguments = std::move(words);
  return expanded;
}

// `${oc.env:NAME}` in a config the launch's program composes: the launch's
// exported variables. One the scripts never set is unset, as `${NAME:-d}`
// reads it in the script (the environment is the one the scripts build).
InterpolationEnvironment launch_environment(const Launch& launch) {
  InterpolationEnvironment environment;
  environment.lookup = [&launch](std::string_view name) {
    EnvironmentValue found;
    found.state = EnvironmentValue::State::Unset;
    for (const EnvSetting& setting : launch.env) {
      if (setting.name != name) continue;
      found.where = setting.where.value;
      found.state = setting.value ? EnvironmentValue::State::Set : EnvironmentValue::State::Unknown;
      if (setting.value) found.value = *setting.value;
    }
    return found;
  };
  return environment;
}

// `config_path="conf", config_name="x"` of a trainer's `@hydra.main(...)` or
// NeMo's `@hydra_runner(...)`; nullopt when the file holds neither.
std::optional<std::pair<std::string, std::string>> hydra_decorator(std::string_view text) {
  size_t at = text.find("@hydra.main(");
  if (at == std::string_view::npos) at = text.find("@hydra_runner(");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view call = text.substr(at, text.find(')', at) - at);
  auto argument = [&](std::string_view name) -> std::optional<std::string> {
    size_t key = call.find(name);
    if (key == std::string_view::npos) return std::nullopt;
    size_t open = call.find_first_of("\"'", key);
    if (open == std::string_view::npos) return std::nullopt;
    size_t close = call.find(call[open], open + 1);
    if (close == std::string_view::npos) return std::nullopt;
    return std::string(call.substr(open + 1, close - open - 1));
  };
  std::optional<std::string> path = argument("config_path");
  std::optional<std::string> name = argument("config_name");
  if (!path || !name) return std::nullopt;
  return std::pair(*path, *name);
}

// The primary config of a trainer run without --config-path/--config-name:
// the one its `@hydra.main` names when the program is beside the script
// that starts it, else the only config of conf/ there that no other one
// includes. nullopt with `why`.
std::optional<fs::path> bare_trainer_config(const Launch& launch, ScriptContext& context, const HydraReader& read,
                                            std::string& why) {
  std::error_code error;
  fs::path launch_dir =
      fs::absolute(resolve_relative(context.sources.files[launch.span.file].path, context.options.base_dir), error)
          .parent_path();
  std::string program = launch.program.text;
  for (const fs::path& candidate : {launch_dir / program, launch_dir / fs::path(program).filename()}) {
    if (has_unknown(launch.program) || !source_file_exists(candidate, &context.options.overlay)) continue;
    ReadResult read_program = read_source_file(context.sources, candidate,
                                               display_path(candidate, context.options.base_dir), launch.span,
                                               kMaxInputBytes, &context.options.overlay);
    if (read_program.problem) break;
    if (auto named = hydra_decorator(context.sources.files[read_program.file].text)) {
      return candidate.parent_path() / named->first / (named->second + ".yaml");
    }
    break;
  }
  std::vector<fs::path> roots = root_hydra_configs(launch_dir / "conf", read, &context.options.overlay);
  if (roots.size() == 1) return roots.front();
  why = roots.empty() ? fmt::format("`{}` names no Hydra config mblint can read, and there is no conf/*.yaml beside "
                                    "the script that starts it",
                                    program)
                      : fmt::format("`{}` is not beside the script that starts it, and conf/ there holds {} configs "
                                    "that none of the others includes",
                                    program, roots.size());
  return std::nullopt;
}

// A trainer that composes its own Hydra config (MLPerf's NeMo trainers):
// that config with its `defaults:` list, `${oc.env:...}` read from the
// launch's environment, then the overrides.
void build_bare_hydra_job(Job& job, const Launch& launch, ScriptContext& context) {
  HydraReader read = [&](const fs::path& path) {
    std::string ignored;
    return read_launch_yaml(job, context, path, launch.span, ignored);
  };
  std::string why;
  std::optional<fs::path> primary_path = bare_trainer_config(launch, context, read, why);
  std::optional<ConfigValue> primary = primary_path ? read(*primary_path) : std::nullopt;
  if (!primary) {
    if (primary_path) why = fmt::format("`{}` cannot be read", display_path(*primary_path, context.options.base_dir));
    job.unresolved.push_back(Unresolved{"config file", why, "start the trainer with --config-path and --config-name",
                                        launch.span});
    take_launcher_config(job, make_map(), launch, "", false);
    return;
  }
  HydraComposition composed = compose_hydra_config(*primary, primary_path->parent_path(), read);
  for (const HydraComposition::Skipped& skipped : composed.not_read) {
    // A group's option (`optional tp_overlap@model.ub_tp_comm_overlap_cfg:
    // ${oc.env:...}`) leaves only its package unknown, located at the entry
    // where a check that reads it reports it.
    if (!skipped.root) continue;
    job.unresolved.push_back(Unresolved{
        "config file", fmt::format("the defaults entry `{}` is not read: {}", skipped.entry, skipped.why),
        "what it sets is unknown", skipped.where});
  }
  InterpolationEnvironment environment = launch_environment(launch);
  resolve_interpolations(composed.root, &environment);
  take_launcher_config(job, std::move(composed.root), launch, "", composed.complete);
}

// A NeMo 1.x Hydra application: --config-path (as written, then relative to
// the program, the script and the current directory) / --config-name .yaml
// with the overrides, read as a NeMo config; when it is not read, only the
// overrides, and what NeMo would default stays unknown. Without either flag, the
// config the trainer composes itself (build_bare_hydra_job).
void build_nemo_hydra_job(Job& job, const Launch& launch, ScriptContext& context) {
  job.dialect = Dialect::NeMo;
  if (!launch.config_dir && !launch.config_file) {
    build_bare_hydra_job(job, launch, context);
    return;
  }
  bool known = launch.config_dir && launch.config_file && !has_unknown(*launch.config_dir) &&
               !has_unknown(*launch.config_file);
  Span named_at = launch.config_file ? launch.config_file_statement : launch.span;
  if (known) {
    fs::path dir = launch.config_dir->text;
    std::string name = launch.config_file->text;
    if (!ends_with(name, ".yaml")) name += ".yaml";
    std::vector<fs::path> candidates = {dir / name};
    if (!dir.is_absolute()) {
      if (!has_unknown(launch.program)) candidates.push_back(fs::path(launch.program.text).parent_path() / dir / name);
      candidates.push_back(context.script_dir / dir / name);
      candidates.push_back(context.options.base_dir / dir / name);
    }
    for (const fs::path& candidate : candidates) {
      if (!source_file_exists(candidate, &context.options.overlay)) continue;
      std::string why;
      if (std::optional<ConfigValue> root = read_launch_yaml(job, context, candidate, named_at, why)) {
        take_launcher_config(job, std::move(*root), launch, "", true);
        return;
      }
      job.unresolved.push_back(Unresolved{"config file", why, "check the file", named_at});
      take_launcher_config(job, make_map(), launch, "", false);
      return;
    }
  }
  job.unresolved.push_back(Unresolved{
      "config file",
      known ? fmt::format("there is no {}/{}.yaml next to the program, the script or in the current directory",
                          launch.config_dir->text, launch.config_file->text)
            : "the Hydra config (--config-path / --config-name) is not known here",
      "write --config-path and --config-name on the launch line", named_at});
  take_launcher_config(job, make_map(), launch, "", false);
}

Job job_from_launch(const Launch& launch, FileId script, ScriptContext& context) {
  Job job;
  job.primary = script;
  job.kind = InputKind::LaunchScript;
  job.entry = launch.entry;
  if (launch.entry == EntryPoint::MegatronLM) {
    job.dialect = Dialect::MegatronLM;
    // examples/inference/**, tools/run_text_generation_server.py: no training step.
    std::string_view program = launch.program.text;
    job.trains = program.find("inference") == std::string_view::npos &&
                 program.find("text_generation") == std::string_view::npos &&
                 program.find("convert") == std::string_view::npos;  // checkpoint conversion
  }
  job.launch_span = launch.span;
  job.files.push_back(script);
  job.config = make_map();
  Launch expanded;  // a launch whose settings are in a file, with them read
  std::vector<std::string_view> unknown_flags;
  const Launch& read = launch.reads == LaunchConfig::NemoRl
                            ? (expanded = with_nemo_rl_policy(launch, job, context, unknown_flags))
                        : launch.reads == LaunchConfig::MsSwift ? (expanded = with_ms_swift_config(launch, job, context))
                        : launch.reads == LaunchConfig::ChatLearn ? (expanded = with_chatlearn_config(launch, job, context))
                                                                : launch;
  job.cluster = read.cluster;
  job.env = read.env;
  job.problems.insert(job.problems.begin(), read.problems.begin(), read.problems.end());
  if (launch.reads == LaunchConfig::NemoLauncher) build_nemo_launcher_job(job, read, context);
  else if (launch.reads == LaunchConfig::NemoHydra) build_nemo_hydra_job(job, read, context);
  else apply_launch_layers(job, read, context);
  mark_unknown_flags(job, unknown_flags, read.config_file_statement.valid() ? read.config_file_statement : read.span);
  apply_named_model(job, read);
  if (starts_with(read.wrapper, kMsSwiftWrapperPrefix)) apply_ms_swift_defaults(job);
  if (read.wrapper == kVerlWrapper) apply_verl_rewrites(job, read);
  if (model_from_hf_config(read)) hf_model_architecture(job, read);
  finish_job(job, context.options, context.sources);
  return job;
}

// A sourced file or an eval before the launch runs in the launching shell
// and may set what the launch reads; another script or launcher cannot.
void add_shell_state_hand_offs(Job& job, const std::vector<Unresolved>& hand_offs) {
  for (const Unresolved& hand_off : hand_offs) {
    bool same_shell = hand_off.what == "sourced file" || hand_off.why.find("`eval") == 0;
    // In a file the script followed: counted (mblint does not order files).
    bool before = hand_off.where.file != job.launch_span.file || hand_off.where.begin < job.launch_span.begin;
    if (!same_shell || !before) continue;
    job.unresolved.push_back(hand_off);
    // Noted in a file the script sourced: that file is the job's too.
    FileId file = hand_off.where.file;
    if (hand_off.where.valid() && std::find(job.files.begin(), job.files.end(), file) == job.files.end())
      job.files.push_back(file);
  }
}

// A script named for checking in which mblint finds no training launch.
Diagnostic no_training_job(FileId file, const std::vector<Unresolved>& hand_offs) {
  Diagnostic d = input_finding(input_rule::kNoTrainingJob,
                         "no training launch found in this script: mblint checked nothing here",
                         make_span(file, 0, 0),
                         "mblint reads torchrun, python -m torch.distributed.run, srun, deepspeed, ray job "
                         "submit and plain python launches of Megatron-LM's pretrain_*.py, slime's train.py, "
                         "Megatron Bridge's run_recipe.py and scripts/training/train.sh, and scripts that take "
                         "--config-file; and ms-swift's megatron sft|pt|rlhf");
  for (const Unresolved& hand_off : hand_offs) d.notes.push_back(Note{hand_off.why, hand_off.where});
  if (!hand_offs.empty()) d.where = hand_offs.front().where;
  return d;
}

// Paths a sourced or called script names that mblint never opens: the
// kernel's and the devices' (reading them can block or never end).
bool system_path(const fs::path& path) {
  std::string text = path.lexically_normal().string();
  for (std::string_view root : {"/proc", "/sys", "/dev"}) {
    if (text.rfind(root, 0) == 0 && (text.size() == root.size() || text[root.size()] == '/')) return true;
  }
  return false;
}

// `source FILE` / `bash FILE` as the walk asks for it: relative to the file
// that names it, then to the script, then to the current directory. Only
// regular files are read; they may lie outside the checked tree (a script
// sources ../common.sh), but never under /proc, /sys or /dev.
std::optional<ShellFile> read_followed_file(ScriptContext& context, const std::string& path,
                                            const std::string& from_directory, std::string& why) {
  fs::path named = path;
  std::vector<fs::path> candidates;
  if (named.is_absolute()) {
    candidates.push_back(named);
    // `/root/slime/scripts/models/qwen3-4B.sh`: a path in the container the
    // repository is installed in; its last three or more components name the
    // file from the repository's root, one of the directories above the script.
    fs::path normal = named.lexically_normal();  // one object: begin and end must come from the same path
    std::vector<fs::path> parts(normal.begin(), normal.end());
    std::error_code error;
    fs::path above = fs::absolute(context.script_dir, error).lexically_normal();
    // Only a path outside the script's own tree: one the script computes from
    // its directory names exactly that file (present or not).
    auto [outside, unused] = std::mismatch(normal.begin(), normal.end(), above.begin(), above.end());
    if (std::distance(normal.begin(), outside) > 1) parts.clear();
    for (int level = 0; level < kRepositoryLevels && above.has_parent_path() && above != above.parent_path(); ++level) {
      above = above.parent_path();
      for (size_t first = 1; first + 3 <= parts.size(); ++first) {
        fs::path tail;
        for (size_t k = first; k < parts.size(); ++k) tail /= parts[k];
        candidates.push_back(above / tail);
      }
    }
  } else {
    candidates = {fs::path(from_directory) / named, context.script_dir / named, context.options.base_dir / named};
    // `cd /workspace/megatron-lm; ./tests/x/run.sh`: a path of several
    // components names the file from the repository's root, one of the
    // directories above the script.
    fs::path normal = named.lexically_normal();
    if (std::distance(normal.begin(), normal.end()) > 2) {
      std::error_code error;
      fs::path above = context.script_dir.is_absolute() ? context.script_dir
                                                         : context.options.base_dir / context.script_dir;
      above = fs::absolute(above, error).lexically_normal();
      for (int level = 0; level < kRepositoryLevels && above.has_parent_path() && above != above.parent_path(); ++level) {
        above = above.parent_path();
        candidates.push_back(above / named);
      }
    }
  }
  std::string under_system = fmt::format("`{}` is under /proc, /sys or /dev, which mblint never reads", path);
  for (const fs::path& candidate : candidates) {
    if (system_path(candidate)) {
      why = under_system;
      return std::nullopt;
    }
    std::error_code error;
    fs::file_status status;
    bool sealed = sealing_dir(&context.options.overlay, candidate).has_value();  // a revision's files: the overlay decides
    if (sealed) {
      if (!source_file_exists(candidate, &context.options.overlay)) continue;
    } else {
      status = fs::status(candidate, error);
      if (error || !fs::exists(status)) continue;
    }
    // Resolving links costs a system call per component, so only for a
    // file that is there: one reached through a link into /proc is not read.
    fs::path real = fs::weakly_canonical(fs::absolute(candidate, error), error);
    if (!error && system_path(real)) {
      why = under_system;
      return std::nullopt;
    }
    if (!sealed && !fs::is_regular_file(status)) {
      why = fmt::format("`{}` is not a regular file", path);
      return std::nullopt;
    }
    ReadResult read = read_source_file(context.sources, candidate, display_path(candidate, context.options.base_dir),
                                       Span{}, kMaxInputBytes, &context.options.overlay);
    if (read.problem) {
      why = read.problem->message;
      return std::nullopt;
    }
    fs::path absolute = fs::absolute(candidate, error);
    return ShellFile{read.file, context.sources.files[read.file].text,
                     absolute.lexically_normal().parent_path().string(), absolute.lexically_normal().string()};
  }
  why = fmt::format("there is no file `{}` next to the script or in the current directory", path);
  return std::nullopt;
}

// The positional parameters the user gave, each located at its word on
// mblint's command line.
std::vector<MappedString> script_arguments(const std::vector<CommandLineValue>& values) {
  std::vector<MappedString> arguments;
  for (const CommandLineValue& value : values) {
    MappedString argument;
    argument.file = value.span.file;
    for (size_t i = 0; i < value.text.size(); ++i) {
      uint32_t at = value.span.begin + static_cast<uint32_t>(i);
      append_char(argument, value.text[i], at, at + 1);
    }
    arguments.push_back(std::move(argument));
  }
  return arguments;
}

ShellFiles followed_files(ScriptContext& context, const fs::path& script) {
  ShellFiles files;
  std::error_code error;
  fs::path absolute = fs::absolute(resolve_relative(script, context.options.base_dir), error).lexically_normal();
  files.script_directory = absolute.parent_path().string();
  files.script_path = absolute.string();
  files.read = [&context](const std::string& path, const std::string& from, std::string& why) {
    return read_followed_file(context, path, from, why);
  };
  return files;
}

// One job per launch unit of a walked script (the arms of a fork agreed).
std::vector<Job> jobs_from_launches(const std::vector<Launch>& launches, const ShellScript& script, FileId file,
                                    const std::vector<Unresolved>& hand_offs, ScriptContext& context) {
  std::vector<LaunchUnit> units = launch_units(launches, script.fork_arms);
  bool any_certain = std::any_of(units.begin(), units.end(), [](const LaunchUnit& u) { return u.certain; });
  std::vector<Job> jobs;
  auto arm_job = [&](const Launch& launch) {
    Job job = job_from_launch(launch, file, context);
    if (launch.span.file != file && launch.span.valid()) job.files.push_back(launch.span.file);
    return job;
  };
  for (const LaunchUnit& unit : units) {
    if (any_certain && !unit.certain) continue;
    jobs.push_back(arm_job(*unit.arms.front()));
    for (size_t arm = 1; arm < unit.arms.size(); ++arm) keep_agreed(jobs.back(), arm_job(*unit.arms[arm]));
    add_shell_state_hand_offs(jobs.back(), hand_offs);
  }
  return jobs;
}

// Commands a file that only sets variables runs: builtins, and the pure
// tools of `$(basename $(readlink -f ...) | sed ...)`.
bool only_sets_variables(const ShellScript& script) {
  static const std::set<std::string_view> kQuiet = {
      "export", "source", ".",        ":",        "unset",    "readonly", "declare", "typeset", "local",
      "set",    "echo",   "printf",   "true",     "false",    "exit",     "return",  "shift",   "test",
      "[",      "[[",     "basename", "dirname",  "readlink", "realpath", "sed",     "cat",     "expr"};
  return std::all_of(script.commands.begin(), script.commands.end(), [](const ShellCommand& command) {
    return command.argv.empty() || (!has_unknown(command.argv[0]) && kQuiet.count(command.argv[0].text) > 0);
  });
}

// MLPerf's training submissions: the file checked is a config_<SYSTEM>.sh
// that only sets and exports variables; the README runs `source config_X.sh
// && sbatch -N $DGXNNODES run.sub` with the run.sub beside it, which starts
// the trainer through run_and_time.sh. That run.sub is walked as the job it
// submits, with the config's exported variables and DGXNNODES nodes.
// nullopt: not such a file.
// `hand_offs` gains a note when the file only sets variables and there is
// no run.sub beside it, or the run.sub starts no training.
std::optional<std::vector<Job>> mlperf_config_jobs(FileId file, const ShellScript& config,
                                                   std::vector<Unresolved>& hand_offs, ScriptContext& context) {
  // A syntax error stops the walk: the rest of the file may run anything.
  if (!config.problems.empty() || !only_sets_variables(config)) return std::nullopt;
  std::string why;
  fs::path script = resolve_relative(context.sources.files[file].path, context.options.base_dir);
  std::optional<ShellFile> run_sub = read_followed_file(context, "run.sub", script.parent_path().string(), why);
  Span start = make_span(file, 0, 0);
  if (!run_sub) {
    // Named as MLPerf names them (config_<SYSTEM>.sh); another file that
    // stops early (`exit 0` before its launch) is not one.
    if (script.filename().string().rfind("config", 0) != 0) return std::nullopt;
    hand_offs.push_back(Unresolved{"command",
                                   "this file only sets variables: the job is started by whatever runs with them "
                                   "(MLPerf's `source config_X.sh && sbatch run.sub`), and there is no run.sub "
                                   "beside it",
                                   "check the script that starts the job", start});
    return std::nullopt;
  }
  std::vector<SbatchDirective> directives = read_sbatch_directives(context.sources.files[run_sub->file], run_sub->file);
  ShellEnvironment initial;
  for (const auto& [name, variable] : config.final_environment) {
    if (variable.exported) initial[name] = variable;
  }
  if (auto nodes = initial.find("DGXNNODES"); nodes != initial.end() && nodes->second.known) {
    SbatchDirective count;  // sbatch -N $DGXNNODES: after run.sub's own lines, it wins
    count.option = "--nodes";
    count.value = nodes->second.value;
    count.span = nodes->second.definition;
    directives.push_back(std::move(count));
  }
  for (auto& [name, variable] : slurm_environment(directives)) initial[name] = variable;
  ShellFiles files = followed_files(context, run_sub->path);
  ShellScript job_script = walk_shell_script(context.sources, run_sub->file, initial, {}, &files);
  std::vector<Launch> launches = find_launches(job_script, directives, {}, LaunchReading{true});
  std::vector<Unresolved> chain_hand_offs = find_hand_offs(job_script, launches);
  std::vector<Unresolved> all = hand_offs;
  all.insert(all.end(), chain_hand_offs.begin(), chain_hand_offs.end());
  std::vector<Job> jobs = jobs_from_launches(launches, job_script, file, all, context);
  if (jobs.empty()) {
    hand_offs.push_back(Unresolved{"command",
                                   "this file only sets variables, read as the environment of the run.sub beside it "
                                   "(MLPerf's `source config_X.sh && sbatch run.sub`), which starts no training "
                                   "mblint reads",
                                   "check run.sub", start});
    hand_offs.insert(hand_offs.end(), chain_hand_offs.begin(), chain_hand_offs.end());
    return std::nullopt;
  }
  for (Job& job : jobs) {
    if (std::find(job.files.begin(), job.files.end(), run_sub->file) == job.files.end())
      job.files.push_back(run_sub->file);
  }
  for (Diagnostic& d : job_script.problems) jobs.front().problems.push_back(std::move(d));
  return jobs;
}

std::vector<Job> jobs_from_script(FileId file, ScriptContext& context) {
  std::vector<SbatchDirective> directives = read_sbatch_directives(context.sources.files[file], file);
  ShellFiles files = followed_files(context, context.sources.files[file].path);
  if (context.options.script_args) files.arguments = script_arguments(*context.options.script_args);
  ShellScript script = walk_shell_script(context.sources, file, slurm_environment(directives), {}, &files);
  std::vector<Launch> launches = find_launches(script, directives);
  std::vector<Unresolved> hand_offs = find_hand_offs(script, launches);
  std::vector<Job> jobs = jobs_from_launches(launches, script, file, hand_offs, context);
  if (jobs.empty()) {
    if (auto chain = mlperf_config_jobs(file, script, hand_offs, context)) jobs = std::move(*chain);
  }
  if (jobs.empty()) {
    Job job;
    job.primary = file;
    job.kind = InputKind::LaunchScript;
    job.files.push_back(file);
    job.problems.push_back(no_training_job(file, hand_offs));
    jobs.push_back(std::move(job));
  }
  for (Diagnostic& d : script.problems) jobs.front().problems.push_back(std::move(d));
  return jobs;
}

std::optional<Dialect> forced_dialect(const LintOptions& options) {
  if (!options.dialect) return std::nullopt;
  if (options.dialect->text == "megatron-lm") return Dialect::MegatronLM;
  if (options.dialect->text == "nemo") return Dialect::NeMo;
  return Dialect::Bridge;
}

// The mapping that holds Megatron-LM flags: MODEL_ARGS, or (with --dialect
// megatron-lm) a file of bare `--flag: value` entries.
const ConfigValue* megatron_lm_arguments(const ConfigValue& root, bool forced) {
  if (is_megatron_lm_test_config(root)) return find_child(root, "MODEL_ARGS");
  if (!forced || !root.is_map()) return nullptr;
  bool flags = std::any_of(root.entries.begin(), root.entries.end(),
                           [](const MapEntry& e) { return e.key.rfind("--", 0) == 0; });
  return flags ? &root : nullptr;
}

void build_megatron_lm_test_job(Job& job, const ConfigValue& root, const ConfigValue& args, SourceSet& sources,
                                const LintOptions& options) {
  job.kind = InputKind::MegatronLmTestConfig;
  MegatronTestConfig test = read_megatron_lm_test_config(sources, root, args);
  job.cluster = test.cluster;
  job.env = test.env;
  job.trains = !test.inference;
  for (Diagnostic& d : test.problems) job.problems.push_back(std::move(d));
  if (test.nemo_overrides) {  // gpt-nemo: NeMo 2 overrides on a NeMo-Run recipe mblint does not have
    job.dialect = Dialect::NeMo;
    merge_into(job.config, test.nemo_config);
    return;
  }
  job.dialect = Dialect::MegatronLM;
  MegatronLmArgs parsed = read_megatron_lm_args(test.argv);
  merge_into(job.config, parsed.config);
  for (Diagnostic& d : parsed.problems) job.problems.push_back(std::move(d));
  fs::path path = resolve_relative(sources.files[job.primary].path, options.base_dir);
  FlagParser parser = parser_for_test_config(path.string());
  job.megatron_lm_script = parser.entry;
  keep_script_models(job, parser);
  take_flag_check(job, check_megatron_lm_flags(test.argv, parser, flag_check_options(options), sources, Span{}));
}

void build_nemo_job(Job& job, const ConfigValue& root) {
  job.kind = InputKind::NemoYaml;
  job.dialect = Dialect::NeMo;
  NemoConfig nemo = read_nemo_config(root);
  merge_into(job.config, nemo.config);
  job.cluster = nemo.cluster;
  job.trains = !nemo.inference;
}

bool has_bridge_section(const ConfigValue& root) {
  return root.is_map() && std::any_of(root.entries.begin(), root.entries.end(), [](const MapEntry& e) {
           return is_config_section(e.key) && e.key != "env_vars";
         });
}

Job job_from_yaml(FileId file, LoadedYaml yaml, SourceSet& sources, const LintOptions& options) {
  Job job;
  job.primary = file;
  job.files.push_back(file);
  job.config = make_map();
  job.problems = std::move(yaml.problems);
  job.kind = InputKind::NotAConfig;
  if (!yaml.ok) return job;
  // The dialect comes from the content unless --dialect says otherwise.
  std::optional<Dialect> forced = forced_dialect(options);
  if (!forced || forced == Dialect::MegatronLM) {
    if (const ConfigValue* args = megatron_lm_arguments(yaml.root, forced.has_value())) {
      build_megatron_lm_test_job(job, yaml.root, *args, sources, options);
      finish_job(job, options, sources);
      return job;
    }
  }
  if ((!forced && is_nemo_config(yaml.root)) || (forced == Dialect::NeMo && yaml.root.is_map())) {
    build_nemo_job(job, yaml.root);
    finish_job(job, options, sources);
    return job;
  }
  bool bridge = forced ? forced == Dialect::Bridge && has_bridge_section(yaml.root)
                      : looks_like_bridge_config(yaml.root);
  if (!bridge) {
    if (forced) {
      job.problems.push_back(input_finding(input_rule::kNoTrainingJob,
          fmt::format("--dialect {} finds no {} config in this file: mblint checked nothing here",
                      options.dialect->text, dialect_name(*forced) == "bridge" ? "Megatron Bridge" : options.dialect->text),
          options.dialect->span,
          forced == Dialect::MegatronLM ? "a Megatron-LM file holds `--flag: value` entries or a MODEL_ARGS mapping"
                                        : "a Megatron Bridge file has ConfigContainer sections (model:, train:, ...)"));
    }
    return job;
  }
  job.kind = yaml.dump ? InputKind::BridgeDump : InputKind::BridgeOverrideYaml;
  job.config_complete = yaml.dump;
  // Applied to a recipe or forced to Bridge by the user: a Bridge file, whatever
  // its keys look like (is_bridge_job guesses only for a YAML linted on its own).
  if (options.recipe || forced == Dialect::Bridge) job.bridge_file_plausible = true;
  select_command_line_recipe(job, options);
  hoist_transformer_fields(yaml.root, job);
  merge_into(job.config, yaml.root);
  finish_job(job, options, sources);
  return job;
}

// Where each path stands in the "<command-line>" source, found by its text
// in one pass (a check of a whole tree names thousands).
std::vector<Span> argument_spans(const LintOptions& options, const SourceSet& sources) {
  std::vector<Span> spans(options.paths.size());
  if (options.command_line_file == kNoFile) return spans;
  const SourceFile& line = sources.files[options.command_line_file];
  size_t at = 0;
  for (size_t i = 0; i < options.paths.size(); ++i) {
    size_t found = line.text.find(options.paths[i], at);
    if (found == std::string::npos) break;
    spans[i] = make_span(options.command_line_file, found, found + options.paths[i].size());
    at = found + options.paths[i].size();
  }
  return spans;
}

}  // namespace

BuildResult build_jobs(SourceSet& sources, const LintOptions& options, const JobSink& each) {
  BuildResult result;
  auto keep = [&](Job&& job) {
    if (each) each(job);
    else result.jobs.push_back(std::move(job));
  };
  std::vector<FileId> scripts;
  std::vector<std::pair<FileId, fs::path>> yamls;
  std::vector<Span> arguments = argument_spans(options, sources);
  for (size_t i = 0; i < options.paths.size(); ++i) {
    fs::path path = resolve_relative(options.paths[i], options.base_dir);
    ReadResult read = read_source_file(sources, path, options.paths[i], arguments[i],
                                       kMaxInputBytes, &options.overlay);
    if (read.problem) {
      result.problems.push_back(std::move(*read.problem));
      continue;
    }
    ++result.files_checked;
    switch (file_type(sources.files[read.file])) {
      case FileType::Script: scripts.push_back(read.file); break;
      case FileType::Yaml: yamls.emplace_back(read.file, canonical_or_same(sources.canonical, path)); break;
      case FileType::Other:
        // Named on the command line but of no type mblint reads (a README
        // among the configs): skipped, which is information, not a fault.
        result.problems.push_back(demoted(
            input_finding(
                input_rule::kUnreadableFile,
                fmt::format("'{}' is neither a YAML file nor a launch script; mblint skipped it", options.paths[i]),
                arguments[i],
                "mblint reads *.yaml, *.yml, *.json, *.sh, *.sbatch, *.slurm and scripts that start with #!"),
            Severity::Note));
        break;
    }
  }
  std::set<fs::path> referenced;
  std::map<fs::path, FileId> loaded;
  for (const auto& [file, path] : yamls) loaded[path] = file;
  for (FileId script : scripts) {
    fs::path script_path = resolve_relative(sources.files[script].path, options.base_dir);
    ScriptContext context{sources, options, referenced, loaded, script_path.parent_path()};
    for (Job& job : jobs_from_script(script, context)) keep(std::move(job));
  }
  std::vector<FileId> alone;  // the YAML files no script launches: a job each
  for (const auto& [file, path] : yamls) {
    if (!referenced.count(path)) alone.push_back(file);  // else linted with the script that launches it
  }
  // Many files: parse them ahead on worker threads while jobs are built here.
  std::optional<YamlAhead> ahead;
  if (options.threads > 1 && alone.size() > 1 && !options.yaml_cache) ahead.emplace(sources, alone, options.threads);
  for (size_t i = 0; i < alone.size(); ++i) {
    LoadedYaml yaml = ahead ? ahead->take(i) : load_config_yaml(sources, alone[i], options.yaml_cache);
    keep(job_from_yaml(alone[i], std::move(yaml), sources, options));
  }
  return result;
}

Job job_from_command_line(SourceSet& sources, const LintOptions& options) {
  Job job;
  job.primary = options.command_line_file;
  job.kind = InputKind::BridgeOverrideYaml;
  job.config = make_map();
  select_command_line_recipe(job, options);
  finish_job(job, options, sources);
  return job;
}

}  // namespace mblint
