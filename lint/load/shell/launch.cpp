#include "lint/base/input_rules.h"
#include "lint/base/text.h"
#include "lint/load/shell/launch.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lint/base/made_word.h"
#include "lint/load/dialects/megatron_lm_flags.h"
#include "lint/model/catalog.h"

namespace mblint {

namespace {

std::optional<int64_t> parse_count(std::string_view text) {
  if (text.empty() || text.size() > 12) return std::nullopt;
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

Diagnostic launch_problem(std::string message, Span where, std::string help) {
  return input_finding(input_rule::kEntryPointArgument, std::move(message), where, std::move(help));
}

// An option's value with the span of `--opt value` / `--opt=value` / `-Nvalue`.
struct OptionValue {
  MappedString value;
  Span statement;
};

// A count from a launcher option: known when it is a plain integer.
LocatedInt located_count(const OptionValue& option, std::string_view what) {
  LocatedInt result;
  result.where.layer = Layer::Launcher;
  result.where.statement = option.statement;
  result.where.value = span_of(option.value, 0, option.value.text.size());
  result.where.via = definitions_in(option.value, 0, option.value.text.size());
  if (has_unknown(option.value)) {
    result.unknown_because = fmt::format("{} is `{}`, which depends on the environment", what, option.value.text);
    return result;
  }
  result.value = parse_count(option.value.text);
  if (!result.value) result.unknown_because = fmt::format("{} is `{}`, not a number", what, option.value.text);
  return result;
}

// Reads options off an argv the way getopt-style launchers do.
class Options {
 public:
  Options(const std::vector<MappedString>& argv, size_t& i) : argv_(argv), i_(i) {}

  bool done() const { return i_ >= argv_.size(); }
  const MappedString& word() const { return argv_[i_]; }
  std::string_view text() const { return argv_[i_].text; }
  bool is_option() const { return !done() && text().size() > 1 && text()[0] == '-'; }

  // The option name: "--nodes" for "--nodes=4", "-N" for "-N4" when `short_attached`.
  std::string_view name() const {
    std::string_view t = text();
    if (starts_with(t, "--")) return t.substr(0, t.find('='));
    return t.size() > 2 ? t.substr(0, 2) : t;
  }

  // Consume the current option with a value (attached `=v`, attached short
  // `-Nv`, or the next word).
  std::optional<OptionValue> take_value() {
    const MappedString& flag = argv_[i_];
    std::string_view t = flag.text;
    size_t eq = t.find('=');
    if (starts_with(t, "--") && eq != std::string_view::npos) {
      ++i_;
      return OptionValue{substring(flag, eq + 1, t.size()), span_of(flag, 0, t.size())};
    }
    if (!starts_with(t, "--") && t.size() > 2) {  // -N4
      ++i_;
      size_t start = t[2] == '=' ? 3 : 2;
      return OptionValue{substring(flag, start, t.size()), span_of(flag, 0, t.size())};
    }
    ++i_;
    if (i_ >= argv_.size()) return std::nullopt;
    const MappedString& value = argv_[i_++];
    Span statement = span_of(flag, 0, t.size());
    Span value_span = span_of(value, 0, value.text.size());
    if (value_span.file == statement.file) {
      statement.begin = std::min(statement.begin, value_span.begin);
      statement.end = std::max(statement.end, value_span.end);
    }
    return OptionValue{value, statement};
  }

  void skip() { ++i_; }

 private:
  const std::vector<MappedString>& argv_;
  size_t& i_;
};

// --- Slurm -----------------------------------------------------------------

bool slurm_option_takes_value(std::string_view name) {
  static constexpr std::array<std::string_view, 40> kValued = {
      "-N", "--nodes", "-n", "--ntasks", "--ntasks-per-node", "--gpus-per-node", "--gres", "-G",
      "--gpus", "--gpus-per-task", "-p", "--partition", "-A", "--account", "-t", "--time", "-J",
      "--job-name", "-o", "--output", "-e", "--error", "-c", "--cpus-per-task", "--mem",
      "--container-image", "--container-mounts", "--container-workdir", "--container-name",
      "--container-env", "--mpi", "--export", "--cpu-bind", "--distribution", "-w", "--nodelist",
      "-C", "--constraint", "--reservation", "--qos"};
  return std::find(kValued.begin(), kValued.end(), name) != kValued.end();
}

// gpu:8, gpu:h100:8, gpu:h100:8(S:0-1) -> count and type.
void read_gres(const OptionValue& option, Cluster& cluster) {
  std::string_view text = option.value.text;
  size_t comma = text.find(',');
  if (comma != std::string_view::npos) text = text.substr(0, comma);
  if (!starts_with(text, "gpu")) return;
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= text.size()) {
    size_t colon = text.find(':', start);
    parts.push_back(text.substr(start, colon == std::string_view::npos ? std::string_view::npos : colon - start));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  if (parts.size() >= 2) {
    std::string_view count = parts.back();
    count = count.substr(0, count.find('('));
    size_t offset = static_cast<size_t>(count.data() - option.value.text.data());
    OptionValue count_value{substring(option.value, offset, offset + count.size()), option.statement};
    cluster.gpus_per_node = located_count(count_value, "the GPU count of --gres");
  }
  if (parts.size() >= 3 && !has_unknown(option.value)) {
    if (const GpuType* gpu = find_gpu(parts[1])) {
      cluster.gpu = gpu->name;
      cluster.gpu_where.layer = Layer::Launcher;
      cluster.gpu_where.statement = option.statement;
    }
  }
}

// --gpus-per-node=8 or --gpus-per-node=h100:8.
void read_gpus_per_node(const OptionValue& option, Cluster& cluster) {
  std::string_view text = option.value.text;
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    cluster.gpus_per_node = located_count(option, "--gpus-per-node");
    return;
  }
  OptionValue count{substring(option.value, colon + 1, text.size()), option.statement};
  cluster.gpus_per_node = located_count(count, "--gpus-per-node");
  if (const GpuType* gpu = find_gpu(text.substr(0, colon))) {
    cluster.gpu = gpu->name;
    cluster.gpu_where.layer = Layer::Launcher;
    cluster.gpu_where.statement = option.statement;
  }
}

// The part of an allocation that Slurm options describe.
struct SlurmRequest {
  LocatedInt nodes;
  LocatedInt ntasks;
  LocatedInt ntasks_per_node;
  Cluster gpus;  // gpus_per_node and gpu type from --gpus-per-node / --gres
};

void read_slurm_option(std::string_view name, const OptionValue& option, SlurmRequest& request) {
  if (name == "-N" || name == "--nodes") {
    request.nodes = located_count(option, "the node count");
    if (!request.nodes.value && option.value.text.find('-') != std::string::npos) {
      request.nodes.unknown_because = fmt::format("the node count is a range ({})", option.value.text);
    }
  } else if (name == "-n" || name == "--ntasks") {
    request.ntasks = located_count(option, "the task count");
  } else if (name == "--ntasks-per-node") {
    request.ntasks_per_node = located_count(option, "--ntasks-per-node");
  } else if (name == "--gpus-per-node") {
    read_gpus_per_node(option, request.gpus);
  } else if (name == "--gres") {
    read_gres(option, request.gpus);
  }
}

SlurmRequest request_from_directives(const std::vector<SbatchDirective>& directives) {
  SlurmRequest request;
  for (const SbatchDirective& directive : directives) {
    if (!directive.value) continue;
    OptionValue option{*directive.value, directive.span};
    read_slurm_option(directive.option, option, request);
  }
  return request;
}

// --- launch contexts -----------------------------------------------------------

struct Context {
  SlurmRequest slurm;          // #SBATCH, then srun's own options
  bool under_srun = false;
  Span srun_span;
  bool certain = true;
  // The command's environment, shared with the script's other commands.
  std::shared_ptr<const ShellEnvironment> environment = std::make_shared<const ShellEnvironment>();
  std::vector<std::pair<std::string, MappedString>> assignments;
  Span command_span;
  size_t depth = 0;
  // A launcher that runs Megatron-LM entry points with arguments of its own
  // (deepspeed: Megatron-DeepSpeed's --deepspeed, --zero-stage).
  std::string wrapper;
  bool under_ray = false;  // `ray job submit -- CMD`: CMD runs on the Ray cluster
  Span ray_span;
  bool bare_hydra_apps = false;  // LaunchReading::bare_hydra_apps
};

std::vector<EnvSetting> environment_of(const Context& context) {
  std::vector<EnvSetting> env;
  for (const auto& [name, variable] : *context.environment) {
    EnvSetting setting;
    setting.name = name;
    if (variable.known && !has_unknown(variable.value)) setting.value = variable.value.text;
    setting.where.layer = Layer::Launcher;
    setting.where.statement = variable.definition;
    setting.where.value = variable.definition;
    env.push_back(std::move(setting));
  }
  return env;
}

bool is_python(std::string_view name) {
  return name == "python" || name == "python3" || (starts_with(name, "python3.") && name.size() <= 10);
}

bool looks_like_program(std::string_view text) {
  std::string_view name = basename(text);
  return is_python(name) || name == "torchrun" || name == "bash" || name == "sh" || name == "srun" ||
         name == "uv" || ends_with(name, ".py") || ends_with(name, ".sh");
}

// Skips `--opt`, `--opt=value` and (for options in `valued`) `--opt value`.
template <size_t N>
void skip_options(Options& options, const std::array<std::string_view, N>& valued) {
  while (options.is_option()) {
    std::string_view name = options.name();
    bool attached = options.text().find('=') != std::string_view::npos;
    if (!attached && std::find(valued.begin(), valued.end(), name) != valued.end()) {
      options.take_value();
    } else {
      options.skip();
    }
  }
}

// sbatch's or srun's options from argv[i] on, into `request`; `i` ends at
// the command they run.
void read_slurm_options(const std::vector<MappedString>& argv, size_t& i, SlurmRequest& request) {
  Options options(argv, i);
  while (options.is_option()) {
    std::string_view option = options.name();
    bool attached = options.text().find('=') != std::string_view::npos ||
                    (!starts_with(options.text(), "--") && options.text().size() > 2);
    if (attached || slurm_option_takes_value(option)) {
      if (auto value = options.take_value()) read_slurm_option(option, *value, request);
    } else {
      options.skip();
    }
  }
}

void scan(const std::vector<MappedString>& argv, size_t i, Context context, const ShellLimits& limits,
          std::vector<Launch>& out);

// --- entry points ----------------------------------------------------------------

struct FlagSpec {
  std::string_view short_name;
  std::string_view long_name;
  std::string_view key;  // empty: a selection option, not an override
  bool integer;
};

constexpr std::array<FlagSpec, 19> kRunRecipeFlags = {{
    {"-ms", "--max_steps", "train.train_iters", true},
    {"-gb", "--global_batch_size", "train.global_batch_size", true},
    {"-mb", "--micro_batch_size", "train.micro_batch_size", true},
    {"-sl", "--seq_length", "dataset.seq_length", true},
    {"-tp", "--tensor_model_parallel_size", "model.tensor_model_parallel_size", true},
    {"-pp", "--pipeline_model_parallel_size", "model.pipeline_model_parallel_size", true},
    {"-cp", "--context_parallel_size", "model.context_parallel_size", true},
    {"-vp", "--virtual_pipeline_model_parallel_size", "model.virtual_pipeline_model_parallel_size", true},
    {"-ep", "--expert_model_parallel_size", "model.expert_model_parallel_size", true},
    {"-etp", "--expert_tensor_parallel_size", "model.expert_tensor_parallel_size", true},
    {"", "--lr", "optimizer.lr", false},
    {"", "--min_lr", "optimizer.min_lr", false},
    {"", "--warmup_iters", "scheduler.lr_warmup_iters", true},
    {"", "--pretrained_checkpoint", "checkpoint.pretrained_checkpoint", false},
    {"", "--save_dir", "checkpoint.save", false},
    {"", "--load_dir", "checkpoint.load", false},
    {"", "--save_interval", "checkpoint.save_interval", true},
    {"", "--step-func", "", false},
    {"", "--step_func", "", false},
}};

const FlagSpec* find_flag(std::string_view name) {
  for (const FlagSpec& spec : kRunRecipeFlags) {
    if (name == spec.long_name || (!spec.short_name.empty() && name == spec.short_name)) return &spec;
  }
  return nullptr;
}

// argparse: `--opt=value` or `--opt value` (single-dash options also `-tp=4`).
std::string_view option_name(std::string_view text) { return text.substr(0, text.find('=')); }

void add_value_problem(Launch& launch, const MappedString& flag, std::string_view message) {
  launch.problems.push_back(launch_problem(std::string(message),
                                           span_of(flag, 0, flag.text.size()),
                                           "give the option a value"));
}

// run_recipe.py's own arguments (scripts/training/run_recipe.py, argparse
// with allow_abbrev=False); the rest must be KEY=VALUE overrides.
void parse_run_recipe_args(const std::vector<MappedString>& argv, size_t i, Launch& launch) {
  while (i < argv.size()) {
    const MappedString& word = argv[i];
    std::string_view text = word.text;
    std::string_view name = option_name(text);
    bool attached = name.size() != text.size();
    auto take = [&]() -> std::optional<OptionValue> {
      if (attached) {
        ++i;
        return OptionValue{substring(word, name.size() + 1, text.size()), span_of(word, 0, text.size())};
      }
      if (i + 1 >= argv.size()) {
        add_value_problem(launch, word, fmt::format("argument {}: expected one argument", name));
        ++i;
        return std::nullopt;
      }
      const MappedString& value = argv[i + 1];
      i += 2;
      Span statement = span_of(word, 0, text.size());
      Span value_span = span_of(value, 0, value.text.size());
      if (value_span.file == statement.file) statement.end = std::max(statement.end, value_span.end);
      return OptionValue{value, statement};
    };
    if (name == "--recipe" || name == "--model" || name == "--mode" || name == "--dataset") {
      auto value = take();
      if (!value) continue;
      if (name == "--recipe") {
        launch.recipe = value->value;
        launch.recipe_statement = value->statement;
      } else if (name == "--model") {
        launch.model = value->value;
        launch.model_statement = value->statement;
      } else if (name == "--mode") {
        launch.mode = value->value;
      }
      continue;
    }
    if (const FlagSpec* spec = find_flag(name)) {
      auto value = take();
      if (!value || spec->key.empty()) continue;
      ConvenienceFlag flag;
      flag.flag = std::string(name);
      flag.key = split_path(spec->key);
      flag.value = value->value;
      flag.statement = value->statement;
      flag.integer = spec->integer;
      launch.flags.push_back(std::move(flag));
      continue;
    }
    if (name == "--dry-run" || name == "--dry_run" || name == "--deterministic" || name == "--dump-env" ||
        name == "--dump_env" || name == "-h" || name == "--help") {
      ++i;
      continue;
    }
    if (has_unknown(word) && word.text.find('=') == std::string::npos) {
      ++i;  // `$EXTRA_ARGS` we cannot see into
      continue;
    }
    if (!text.empty() && text[0] == '-') {
      std::string help = name == "--config-file" || name == "--config_file"
                             ? "run_recipe.py takes no YAML file: pass the settings as KEY=VALUE overrides, "
                               "or launch an entry point that accepts --config-file"
                             : "remove it, or pass the setting as a KEY=VALUE override";
      launch.problems.push_back(launch_problem(
          fmt::format("run_recipe.py rejects `{}` (\"Unknown option: {}\")", name, name),
          span_of(word, 0, name.size()), help));
      ++i;
      // Its value, if any, would be reported as a bad override: skip it.
      if (!attached && i < argv.size() && argv[i].text.find('=') == std::string::npos &&
          (argv[i].text.empty() || argv[i].text[0] != '-')) {
        ++i;
      }
      continue;
    }
    // `key = value` / `key= value`: the shell made separate words of it.
    bool spaced_equal = text.find('=') == std::string_view::npos && i + 1 < argv.size() &&
                        !argv[i + 1].text.empty() && argv[i + 1].text[0] == '=';
    bool trailing_equal = !text.empty() && text.back() == '=' && text.find('=') == text.size() - 1 &&
                          i + 1 < argv.size() && argv[i + 1].text.find('=') == std::string::npos &&
                          (argv[i + 1].text.empty() || argv[i + 1].text[0] != '-');
    if (spaced_equal || trailing_equal) {
      size_t last = i + 1;
      if (spaced_equal && argv[i + 1].text == "=" && i + 2 < argv.size() &&
          argv[i + 2].text.find('=') == std::string::npos) {
        last = i + 2;  // `key = value`
      }
      Span first = span_of(word, 0, text.size());
      Span end = span_of(argv[last], 0, argv[last].text.size());
      if (end.file == first.file) first.end = std::max(first.end, end.end);
      launch.problems.push_back(launch_problem(
          "spaces around `=` split this override into separate arguments",
          first, "write the override as one word: key=value"));
      i = last + 1;
      continue;
    }
    if (text.find('=') == std::string_view::npos) {
      launch.problems.push_back(launch_problem(
          fmt::format("run_recipe.py expects overrides in KEY=VALUE form, got `{}`", text),
          span_of(word, 0, text.size()), "write the override as key=value, e.g. train.train_iters=100"));
      ++i;
      continue;
    }
    launch.overrides.push_back(word);
    ++i;
  }
}

// setup_experiment.py (behind scripts/training/train.sh) owns these options
// and forwards everything else to run_recipe.py.
void parse_train_sh_args(const std::vector<MappedString>& argv, size_t i, Launch& launch,
                         SlurmRequest& request) {
  static constexpr std::array<std::string_view, 14> kValued = {
      "--nodes", "--gpus-per-node", "--gpus_per_node", "--account", "--partition", "--time", "--gres",
      "--additional-slurm-params", "--additional_slurm_params", "--container-image", "--mount", "--env",
      "--srun-arg", "--experiment-name"};
  static constexpr std::array<std::string_view, 3> kValuedShort = {"-lmc", "--peak-mem-clk", "--peak_mem_clk"};
  static constexpr std::array<std::string_view, 4> kFlags = {"--no-gpu-resource-request",
                                                            "--submission-dry-run", "--dry-run", "--wait"};
  std::vector<MappedString> forwarded;
  while (i < argv.size()) {
    std::string_view name = option_name(argv[i].text);
    bool valued = std::find(kValued.begin(), kValued.end(), name) != kValued.end() ||
                  std::find(kValuedShort.begin(), kValuedShort.end(), name) != kValuedShort.end();
    if (valued) {
      Options options(argv, i);
      auto value = options.take_value();
      if (!value) break;
      if (name == "--nodes") request.nodes = located_count(*value, "--nodes");
      if (name == "--gpus-per-node" || name == "--gpus_per_node") read_gpus_per_node(*value, request.gpus);
      if (name == "--gres") read_gres(*value, request.gpus);
      continue;
    }
    if (std::find(kFlags.begin(), kFlags.end(), name) != kFlags.end()) {
      ++i;
      continue;
    }
    forwarded.push_back(argv[i++]);
  }
  parse_run_recipe_args(forwarded, 0, launch);
}

// Examples, tutorials and in-house scripts: `--config-file PATH` plus
// trailing Hydra overrides; their recipe is fixed inside the script.
void parse_config_file_script_args(const std::vector<MappedString>& argv, size_t i, Launch& launch) {
  while (i < argv.size()) {
    const MappedString& word = argv[i];
    std::string_view text = word.text;
    if (!text.empty() && text[0] == '-') {
      std::string_view name = option_name(text);
      bool attached = name.size() != text.size();
      if (name == "--config-file" || name == "--config_file") {
        Options options(argv, i);
        if (auto value = options.take_value()) {
          launch.config_file = value->value;
          launch.config_file_statement = value->statement;
        }
        continue;
      }
      ++i;  // the script's own option; skip a separate value
      if (!attached && i < argv.size() && argv[i].text.find('=') == std::string::npos &&
          (argv[i].text.empty() || argv[i].text[0] != '-')) {
        ++i;
      }
      continue;
    }
    if (text.find('=') != std::string_view::npos) launch.overrides.push_back(word);
    ++i;
  }
}

bool has_override_words(const std::vector<MappedString>& argv, size_t i) {
  for (; i < argv.size(); ++i) {
    std::string_view text = argv[i].text;
    size_t eq = text.find('=');
    if (eq == std::string_view::npos || eq == 0 || text[0] == '-') continue;
    if (text.substr(0, eq).find('.') != std::string_view::npos) return true;
  }
  return false;
}

bool has_config_file_flag(const std::vector<MappedString>& argv, size_t i) {
  for (; i < argv.size(); ++i) {
    std::string_view name = option_name(argv[i].text);
    if (name == "--config-file" || name == "--config_file") return true;
  }
  return false;
}

// Megatron-LM's own entry points; another script counts as Megatron-LM when
// it takes Megatron-LM's parallel and shape flags (examples/**/train.py).
bool is_megatron_lm_entry(std::string_view name, const std::vector<MappedString>& argv, size_t i) {
  static constexpr std::array<std::string_view, 7> kEntries = {
      "pretrain_gpt.py", "pretrain_mamba.py", "pretrain_hybrid.py", "pretrain_bert.py",
      "pretrain_t5.py",  "pretrain_vlm.py",   "pretrain_retro.py"};
  if (std::find(kEntries.begin(), kEntries.end(), name) != kEntries.end()) return true;
  static constexpr std::array<std::string_view, 4> kMegatronFlags = {
      "--tensor-model-parallel-size", "--pipeline-model-parallel-size", "--num-layers", "--micro-batch-size"};
  if (!ends_with(name, ".py") || has_config_file_flag(argv, i) || has_override_words(argv, i)) return false;
  for (; i < argv.size(); ++i) {
    std::string_view flag = option_name(argv[i].text);
    if (std::find(kMegatronFlags.begin(), kMegatronFlags.end(), flag) != kMegatronFlags.end()) return true;
  }
  return false;
}

// Resources for a launch, from the most specific launcher down.
struct Torchrun {
  bool present = false;
  LocatedInt nnodes;
  LocatedInt nproc_per_node;
  Span span;
};

LocatedInt launcher_default(int64_t value, Span where, std::string origin) {
  LocatedInt result;
  result.value = value;
  result.where.layer = Layer::Launcher;
  result.where.statement = where;
  result.where.origin = std::move(origin);
  return result;
}

LauncherRequests requests_of(const Context& context, const Torchrun& torchrun) {
  LauncherRequests requests;
  requests.torchrun = torchrun.present;
  requests.torchrun_nnodes = torchrun.nnodes;
  requests.torchrun_nproc_per_node = torchrun.nproc_per_node;
  requests.srun = context.under_srun;
  requests.slurm_nodes = context.slurm.nodes;
  requests.slurm_ntasks = context.slurm.ntasks;
  requests.slurm_ntasks_per_node = context.slurm.ntasks_per_node;
  requests.slurm_gpus_per_node = context.slurm.gpus.gpus_per_node;
  return requests;
}

Cluster resolve_cluster(const Context& context, const Torchrun& torchrun, Span python_span) {
  Cluster cluster = context.slurm.gpus;
  cluster.requests = requests_of(context, torchrun);
  const SlurmRequest& slurm = context.slurm;
  if (torchrun.present) {
    cluster.nodes = torchrun.nnodes.value || !torchrun.nnodes.unknown_because.empty()
                        ? torchrun.nnodes
                        : launcher_default(1, torchrun.span, "torchrun runs on one node unless --nnodes is given");
    cluster.gpus_per_node =
        torchrun.nproc_per_node.value || !torchrun.nproc_per_node.unknown_because.empty()
            ? torchrun.nproc_per_node
            : launcher_default(1, torchrun.span, "torchrun starts one process unless --nproc-per-node is given");
    return cluster;
  }
  if (context.under_srun) {
    cluster.nodes = slurm.nodes;
    if (slurm.ntasks_per_node.value || !slurm.ntasks_per_node.unknown_because.empty()) {
      cluster.gpus_per_node = slurm.ntasks_per_node;
    } else if (slurm.ntasks.value || !slurm.ntasks.unknown_because.empty()) {
      cluster.world_size = slurm.ntasks;
      cluster.gpus_per_node = {};
    } else {
      cluster.gpus_per_node =
          launcher_default(1, context.srun_span, "srun starts one task per node unless --ntasks-per-node is given");
    }
    return cluster;
  }
  if (context.under_ray) {  // the cluster's GPUs are not on the command line
    cluster.nodes.unknown_because = "ray job submit runs the command on the Ray cluster, whose size is not given here";
    cluster.gpus_per_node.unknown_because = cluster.nodes.unknown_because;
    cluster.nodes.where.statement = cluster.gpus_per_node.where.statement = context.ray_span;
    return cluster;
  }
  // A bare `python script.py`: its processes are what runs the script. Run
  // alone it is one process, but scripts that an outer mpirun or srun starts
  // once per rank (llm-jp's train.sh under `mpirun -np 128 bash train.sh`)
  // look the same: the trainer then takes WORLD_SIZE from that environment.
  cluster.nodes.unknown_because =
      "a plain python command is as many processes as whatever runs this script starts (WORLD_SIZE in its "
      "environment)";
  cluster.gpus_per_node.unknown_because = cluster.nodes.unknown_because;
  cluster.nodes.where.statement = cluster.gpus_per_node.where.statement = python_span;
  return cluster;
}

Launch make_launch(EntryPoint entry, const MappedString& program, const Context& context,
                   const Torchrun& torchrun) {
  Launch launch;
  launch.entry = entry;
  launch.program = program;
  launch.span = context.command_span;
  launch.certain = context.certain;
  launch.cluster = resolve_cluster(context, torchrun, context.command_span);
  launch.env = environment_of(context);
  return launch;
}

// scripts/training/train.sh submits its own Slurm job: the resources are
// its --nodes and --gpus-per-node, not the surrounding allocation.
Launch launch_train_sh(const std::vector<MappedString>& argv, size_t i, const MappedString& program,
                       const Context& context) {
  Launch launch = make_launch(EntryPoint::TrainSh, program, context, Torchrun{});
  SlurmRequest request;
  parse_train_sh_args(argv, i, launch, request);
  Cluster cluster = request.gpus;
  cluster.nodes = request.nodes.value || !request.nodes.unknown_because.empty()
                      ? request.nodes
                      : launcher_default(1, launch.span, "train.sh submits one node unless --nodes is given");
  if (!cluster.gpus_per_node.value && cluster.gpus_per_node.unknown_because.empty()) {
    cluster.gpus_per_node.unknown_because = "train.sh was not given --gpus-per-node";
  }
  launch.cluster = cluster;
  return launch;
}

bool is_verl_megatron(const std::vector<MappedString>& argv, size_t i);
Launch launch_verl(const std::vector<MappedString>& argv, size_t i, const MappedString& module,
                   const Context& context);

bool is_slime_train(std::string_view name, const std::vector<MappedString>& argv, size_t i);
std::optional<OptionValue> option_value(const std::vector<MappedString>& argv, size_t i, std::string_view name);

// The first of `options` given: the model a launch names by id or path.
void read_named_model(const std::vector<MappedString>& argv, size_t i, Launch& launch,
                      std::initializer_list<std::string_view> options) {
  for (std::string_view option : options) {
    if (auto value = option_value(argv, i, option)) {
      launch.named_model = value->value;
      launch.named_model_statement = value->statement;
      return;
    }
  }
}
Launch launch_slime(const std::vector<MappedString>& argv, size_t i, const MappedString& program,
                    const Context& context);

// The value of the last override whose key is one of `keys` or ends in
// `.` + one of them (NeMo-Framework-Launcher's training.trainer.num_nodes).
const MappedString* override_value(const Launch& launch, std::initializer_list<std::string_view> keys) {
  const MappedString* found = nullptr;
  for (const MappedString& word : launch.overrides) {
    std::string_view text = word.text;
    std::string_view key = text.substr(0, text.find('='));
    while (!key.empty() && key[0] == '+') key.remove_prefix(1);
    for (std::string_view wanted : keys) {
      if (key == wanted || ends_with(key, fmt::format(".{}", wanted))) found = &word;
    }
  }
  return found;
}

LocatedInt override_count(const Launch& launch, std::initializer_list<std::string_view> keys, Span span) {
  if (const MappedString* word = override_value(launch, keys)) {
    size_t eq = word->text.find('=');
    OptionValue value{substring(*word, eq + 1, word->text.size()), span_of(*word, 0, word->text.size())};
    return located_count(value, std::string(word->text.substr(0, eq)));
  }
  LocatedInt unknown;
  unknown.unknown_because = "the program starts its own workers; their number is in the config it reads";
  unknown.where.layer = Layer::Launcher;
  unknown.where.statement = span;
  return unknown;
}

// A plain `python program.py key=value ...` that takes no --config-file is
// not a Megatron Bridge entry point run as one process: NeMo-RL
// (`cluster.num_nodes`) and NeMo-Framework-Launcher (`trainer.num_nodes`,
// `trainer.devices`) start their own workers, so the allocation is what
// those keys say, and unknown when the command line does not set them.
Cluster self_launching_cluster(const Launch& launch, Span span) {
  Cluster cluster;
  cluster.nodes = override_count(launch, {"cluster.num_nodes", "trainer.num_nodes"}, span);
  cluster.gpus_per_node = override_count(launch, {"cluster.gpus_per_node", "trainer.devices"}, span);
  return cluster;
}

// NeMo-RL's trainers (examples/run_dpo.py, run_grpo_math.py, run_sft.py, ...):
// `--config FILE` and `key=value` overrides of its own key space (policy.*,
// cluster.*); the program starts its Ray workers itself.
bool is_nemo_rl(std::string_view name, const std::vector<MappedString>& argv, size_t i) {
  if (!starts_with(name, "run_") || !ends_with(name, ".py") || name == "run_recipe.py") return false;
  bool config = false;
  bool own_keys = false;
  for (; i < argv.size(); ++i) {
    std::string_view text = argv[i].text;
    if (option_name(text) == "--config") config = true;
    std::string_view key = text.substr(0, text.find('='));
    while (!key.empty() && (key[0] == '+' || key[0] == '~')) key.remove_prefix(1);
    if (starts_with(key, "policy.") || starts_with(key, "cluster.")) own_keys = true;
  }
  return config || own_keys;
}

Launch launch_nemo_rl(const std::vector<MappedString>& argv, size_t i, const MappedString& program,
                      const Context& context) {
  Launch launch = make_launch(EntryPoint::MegatronLM, program, context, Torchrun{});
  launch.wrapper = fmt::format("{} {}", kNemoRlWrapperPrefix, basename(program.text));
  launch.reads = LaunchConfig::NemoRl;
  while (i < argv.size()) {
    const MappedString& word = argv[i];
    if (option_name(word.text) == "--config") {
      Options options(argv, i);
      if (auto value = options.take_value()) {
        launch.config_file = value->value;
        launch.config_file_statement = value->statement;
      }
      continue;
    }
    if (!starts_with(word.text, "-") && word.text.find('=') != std::string::npos) launch.overrides.push_back(word);
    ++i;
  }
  launch.cluster = Cluster{};  // cluster.num_nodes x cluster.gpus_per_node, read with the config
  return launch;
}

// NeMo-Framework-Launcher: launcher_scripts/main.py with `stages=[...]` or a
// stage's config group chosen (`training=gpt3/175b`, `peft=llama/squad`).
bool is_nemo_launcher(std::string_view name, const std::vector<MappedString>& argv, size_t i) {
  if (name != "main.py") return false;
  for (; i < argv.size(); ++i) {
    std::string_view key = std::string_view(argv[i].text).substr(0, argv[i].text.find('='));
    if (key == "stages" || key == "training" || key == "fine_tuning" || key == "peft") return true;
  }
  return false;
}

// A NeMo 1.x Hydra application: `--config-path`/`--config-name` and
// overrides of NeMo's own sections (trainer.*, model.*, exp_manager.*).
bool is_nemo_hydra_app(const std::vector<MappedString>& argv, size_t i) {
  if (is_verl_megatron(argv, i)) return false;  // verl's trainer takes trainer.* too
  bool hydra = false;
  bool nemo_keys = false;
  for (; i < argv.size(); ++i) {
    std::string_view text = argv[i].text;
    std::string_view option = option_name(text);
    if (option == "--config-path" || option == "--config-name") hydra = true;
    std::string_view key = text.substr(0, text.find('='));
    while (!key.empty() && key[0] == '+') key.remove_prefix(1);
    if (starts_with(key, "trainer.") || starts_with(key, "exp_manager.")) nemo_keys = true;
  }
  return hydra && nemo_keys;
}

// A trainer that composes its Hydra config itself (`python -u train.py
// [KEY=VALUE ...]`, MLPerf's NeMo trainers): NeMo 1.x, its config found by
// the job builder (LaunchReading::bare_hydra_apps). Group choices
// (`optim@model.optim=...`) and words mblint cannot know are not applied.
Launch launch_bare_hydra_app(const std::vector<MappedString>& argv, size_t i, const MappedString& program,
                             const Context& context, const Torchrun& torchrun) {
  Launch launch = make_launch(EntryPoint::ConfigFileScript, program, context, torchrun);
  launch.reads = LaunchConfig::NemoHydra;
  for (; i < argv.size(); ++i) {
    std::string_view text = argv[i].text;
    size_t equals = text.find('=');
    if (starts_with(text, "-") || equals == std::string_view::npos || has_unknown(argv[i])) continue;
    if (text.substr(0, equals).find('@') == std::string_view::npos) launch.overrides.push_back(argv[i]);
  }
  return launch;
}

// The Python program and its arguments, after the launcher.
void scan_program(const std::vector<MappedString>& argv, size_t i, const Context& context,
                  const Torchrun& torchrun, std::vector<Launch>& out) {
  if (i >= argv.size()) return;
  const MappedString& program = argv[i];
  std::string_view name = basename(program.text);
  std::string_view path = program.text;
  ++i;
  if (name == "run_recipe.py") {
    Launch launch = make_launch(EntryPoint::RunRecipe, program, context, torchrun);
    parse_run_recipe_args(argv, i, launch);
    out.push_back(std::move(launch));
    return;
  }
  if (name == "setup_experiment.py" && path.find("performance") == std::string_view::npos) {
    out.push_back(launch_train_sh(argv, i, program, context));
    return;
  }
  if (is_slime_train(name, argv, i)) {
    out.push_back(launch_slime(argv, i, program, context));
    return;
  }
  if (is_nemo_launcher(name, argv, i)) {
    Launch launch = make_launch(EntryPoint::ConfigFileScript, program, context, torchrun);
    launch.reads = LaunchConfig::NemoLauncher;
    for (; i < argv.size(); ++i) {
      if (!starts_with(argv[i].text, "-") && argv[i].text.find('=') != std::string::npos)
        launch.overrides.push_back(argv[i]);
    }
    launch.cluster = Cluster{};  // the stage config's trainer.num_nodes x trainer.devices
    out.push_back(std::move(launch));
    return;
  }
  if (is_nemo_hydra_app(argv, i)) {
    Launch launch = make_launch(EntryPoint::ConfigFileScript, program, context, torchrun);
    launch.reads = LaunchConfig::NemoHydra;
    if (auto dir = option_value(argv, i, "--config-path")) launch.config_dir = dir->value;
    if (auto name_value = option_value(argv, i, "--config-name")) {
      launch.config_file = name_value->value;
      launch.config_file_statement = name_value->statement;
    }
    for (; i < argv.size(); ++i) {
      if (!starts_with(argv[i].text, "-") && argv[i].text.find('=') != std::string::npos)
        launch.overrides.push_back(argv[i]);
    }
    out.push_back(std::move(launch));
    return;
  }
  if (name == "chatlearn_entrypoint.py") {
    Launch launch = make_launch(EntryPoint::MegatronLM, program, context, torchrun);
    launch.wrapper = "ChatLearn policy trainer";
    launch.reads = LaunchConfig::ChatLearn;
    parse_config_file_script_args(argv, i, launch);
    // The trainer's GPUs are models.policy_trainer.num_gpu, placed by Ray.
    launch.cluster = Cluster{};
    for (LocatedInt* count : {&launch.cluster.nodes, &launch.cluster.gpus_per_node}) {
      count->unknown_because = "ChatLearn places models.policy_trainer.num_gpu GPUs on its Ray cluster";
      count->where.layer = Layer::Launcher;
      count->where.statement = context.command_span;
    }
    out.push_back(std::move(launch));
    return;
  }
  if (is_nemo_rl(name, argv, i)) {
    out.push_back(launch_nemo_rl(argv, i, program, context));
    return;
  }
  if (ends_with(name, ".py") && is_verl_megatron(argv, i)) {  // a verl entry script of a project's own
    out.push_back(launch_verl(argv, i, program, context));
    return;
  }
  if (is_megatron_lm_entry(name, argv, i)) {
    Launch launch = make_launch(EntryPoint::MegatronLM, program, context, torchrun);
    launch.wrapper = context.wrapper;
    read_named_model(argv, i, launch, {"--hf-checkpoint", "--load"});
    launch.arguments.assign(argv.begin() + static_cast<std::ptrdiff_t>(i), argv.end());
    out.push_back(std::move(launch));
    return;
  }
  if (ends_with(name, ".py") && (has_config_file_flag(argv, i) || has_override_words(argv, i)) &&
      !context.bare_hydra_apps) {
    Launch launch = make_launch(EntryPoint::ConfigFileScript, program, context, torchrun);
    parse_config_file_script_args(argv, i, launch);
    if (!torchrun.present && !context.under_srun && !context.under_ray && !has_config_file_flag(argv, i))
      launch.cluster = self_launching_cluster(launch, context.command_span);
    out.push_back(std::move(launch));
    return;
  }
  if (context.bare_hydra_apps && ends_with(name, ".py")) out.push_back(launch_bare_hydra_app(argv, i, program, context, torchrun));
}

// `torchrun $DIST_ARGS pretrain_gpt.py ...` with `$DIST_ARGS` unknown: words
// the launcher reads as its options (they stand before a `.py` program). The
// program is still the launch; the counts those words may set are unknown.
bool skip_unknown_launcher_words(const std::vector<MappedString>& argv, size_t& i, Torchrun& resources) {
  // A program whose file name is known (`${DIR}/pretrain_gpt.py`).
  auto known_program = [](const MappedString& word) {
    size_t slash = word.text.rfind('/');
    size_t name = slash == std::string::npos ? 0 : slash + 1;
    return ends_with(word.text, ".py") && !has_unknown(word, name, word.text.size());
  };
  size_t at = i;
  while (at < argv.size() && has_unknown(argv[at]) && !known_program(argv[at])) ++at;
  if (at == i || at >= argv.size() || !known_program(argv[at])) return false;
  std::string why = fmt::format("`{}` is not known here and may hold the launcher's options", argv[i].text);
  for (LocatedInt* count : {&resources.nnodes, &resources.nproc_per_node}) {
    count->value.reset();
    count->unknown_because = why;
    count->where.layer = Layer::Launcher;
    count->where.statement = span_of(argv[i], 0, argv[i].text.size());
  }
  i = at;
  return true;
}

void scan_torchrun(const std::vector<MappedString>& argv, size_t i, const Context& context, Span span,
                   std::vector<Launch>& out) {
  static constexpr std::array<std::string_view, 30> kValued = {
      "--nnodes", "--nproc_per_node", "--nproc-per-node", "--node_rank", "--node-rank", "--master_addr",
      "--master-addr", "--master_port", "--master-port", "--rdzv_backend", "--rdzv-backend",
      "--rdzv_endpoint", "--rdzv-endpoint", "--rdzv_id", "--rdzv-id", "--rdzv_conf", "--rdzv-conf",
      "--max_restarts", "--max-restarts", "--monitor_interval", "--monitor-interval", "--start_method",
      "--start-method", "--role", "--log_dir", "--log-dir", "-r", "--redirects", "-t", "--tee"};
  Torchrun torchrun;
  torchrun.present = true;
  torchrun.span = span;
  Options options(argv, i);
  bool module = false;
  while (options.is_option()) {
    std::string_view name = options.name();
    if (name == "--nnodes") {
      if (auto value = options.take_value()) {
        torchrun.nnodes = located_count(*value, "--nnodes");
        if (!torchrun.nnodes.value && value->value.text.find(':') != std::string::npos &&
            !has_unknown(value->value)) {
          torchrun.nnodes.unknown_because = fmt::format("--nnodes is an elastic range ({})", value->value.text);
        }
      }
    } else if (name == "--nproc_per_node" || name == "--nproc-per-node") {
      if (auto value = options.take_value()) torchrun.nproc_per_node = located_count(*value, "--nproc-per-node");
    } else if (name == "-m" || name == "--module") {
      module = true;
      options.skip();
    } else if (options.text().find('=') == std::string_view::npos &&
               std::find(kValued.begin(), kValued.end(), name) != kValued.end()) {
      options.take_value();
    } else {
      options.skip();
    }
  }
  (void)module;
  skip_unknown_launcher_words(argv, i, torchrun);
  scan_program(argv, i, context, torchrun, out);
}

void scan_python(const std::vector<MappedString>& argv, size_t i, const Context& context,
                 std::vector<Launch>& out) {
  Span span = context.command_span;
  while (i < argv.size()) {
    std::string_view text = argv[i].text;
    if (text == "-m" && i + 1 < argv.size()) {
      std::string_view module = argv[i + 1].text;
      if (module == "torch.distributed.run" || module == "torch.distributed.launch") {
        scan_torchrun(argv, i + 2, context, span, out);
      }
      if (module == "verl.trainer.main_ppo" && is_verl_megatron(argv, i + 2))
        out.push_back(launch_verl(argv, i + 2, argv[i + 1], context));
      return;
    }
    if (text == "-X" || text == "-W") {
      i += 2;
      continue;
    }
    if (!text.empty() && text[0] == '-') {
      ++i;
      continue;
    }
    break;
  }
  scan_program(argv, i, context, Torchrun{}, out);
}

// A variable the launched command sees: its own `VAR=x` prefix first, then
// the exported environment.
std::optional<OptionValue> environment_value(const Context& context, std::string_view name) {
  for (auto it = context.assignments.rbegin(); it != context.assignments.rend(); ++it) {
    if (it->first == name) return OptionValue{it->second, span_of(it->second, 0, it->second.text.size())};
  }
  auto found = context.environment->find(std::string(name));
  if (found == context.environment->end()) return std::nullopt;
  MappedString value = found->second.value;
  if (!found->second.known && !has_unknown(value)) {  // mark it unknown, as the walk marks `$NAME`
    Expansion unknown;
    unknown.end = value.text.size();
    unknown.name = std::string(name);
    unknown.known = false;
    value.expansions.push_back(std::move(unknown));
  }
  return OptionValue{value, found->second.definition};
}

const MegatronLmKnownFlag* megatron_lm_flag(std::string_view flag) {
  for (const MegatronLmKnownFlag& known : megatron_lm_base_flags()) {
    if (known.flag == flag) return &known;
  }
  return nullptr;
}

bool is_true_word(std::string_view text) { return text == "true" || text == "True" || text == "1"; }

// A wrapper's Megatron-LM arguments: the words of the flags Megatron-LM's
// parser knows, with their values; the wrapper's own options are dropped,
// so they are never reported as unknown Megatron-LM flags. `rename` maps a
// flag's spelling onto Megatron-LM's (same length, so the mapping fits).
template <typename Rename>
std::vector<MappedString> megatron_lm_words(const std::vector<MappedString>& argv, size_t i, Rename rename) {
  std::vector<MappedString> out;
  while (i < argv.size()) {
    const MappedString& word = argv[i];
    std::string_view text = word.text;
    if (!starts_with(text, "--") || text.find('=') != std::string_view::npos) {
      ++i;
      continue;
    }
    size_t values = i + 1;
    while (values < argv.size() && !starts_with(argv[values].text, "--")) ++values;
    MappedString flag = word;
    rename(flag.text);
    if (flag.text.size() != word.text.size()) flag = word;
    const MegatronLmKnownFlag* known = megatron_lm_flag(flag.text);
    if (known && known->takes_value && values > i + 1) {
      out.push_back(flag);
      out.insert(out.end(), argv.begin() + static_cast<std::ptrdiff_t>(i + 1),
                 argv.begin() + static_cast<std::ptrdiff_t>(values));
    } else if (known && !known->takes_value && (values == i + 1 || is_true_word(argv[i + 1].text))) {
      out.push_back(flag);
    }
    i = values;
  }
  return out;
}

// ms-swift's `megatron sft|pt|rlhf` takes Megatron-LM's arguments spelled
// with underscores (swift/megatron/argument/megatron_args.py) next to its own
// (--model, --dataset, --max_length for the sequence length). The Megatron-LM
// ones are handed on in Megatron-LM's spelling; a boolean is `--flag true`.
// ms-swift's own options are dropped, so they are never reported as unknown
// Megatron-LM flags.
std::vector<MappedString> ms_swift_arguments(const std::vector<MappedString>& argv, size_t i) {
  return megatron_lm_words(argv, i, [](std::string& flag) {
    if (flag == "--loss_scale") return;  // ms-swift's own (a loss-scale preset name), not Megatron-LM's
    std::replace(flag.begin(), flag.end(), '_', '-');
    if (flag == "--max-length") flag = "--seq-length";
  });
}

// The allocation ms-swift's CLI asks torchrun for: NNODES and NPROC_PER_NODE
// (swift/cli/main.py); without NPROC_PER_NODE it takes every visible GPU.
Cluster ms_swift_cluster(const Context& context, Span span) {
  Cluster cluster;
  if (auto nodes = environment_value(context, "NNODES")) {
    cluster.nodes = located_count(*nodes, "NNODES");
  } else {
    cluster.nodes = launcher_default(1, span, "ms-swift runs on one node unless NNODES is set");
  }
  if (auto per_node = environment_value(context, "NPROC_PER_NODE")) {
    cluster.gpus_per_node = located_count(*per_node, "NPROC_PER_NODE");
  } else {
    cluster.gpus_per_node.unknown_because = "NPROC_PER_NODE is not set: ms-swift starts one process per visible GPU";
    cluster.gpus_per_node.where.layer = Layer::Launcher;
    cluster.gpus_per_node.where.statement = span;
  }
  return cluster;
}

bool scan_ms_swift(const std::vector<MappedString>& argv, size_t i, const Context& context,
                   std::vector<Launch>& out) {
  if (i >= argv.size()) return false;
  std::string_view command = argv[i].text;
  if (command != "sft" && command != "pt" && command != "rlhf") return false;  // export, infer: no training
  // `megatron sft config.yaml`: the settings are in the file (read by the
  // job builder), then the options after it.
  bool config = i + 1 < argv.size() && !starts_with(argv[i + 1].text, "-");
  if (config && !ends_with(argv[i + 1].text, ".yaml") && !ends_with(argv[i + 1].text, ".yml") &&
      !ends_with(argv[i + 1].text, ".json"))
    return false;
  Launch launch = make_launch(EntryPoint::MegatronLM, argv[i - 1], context, Torchrun{});
  launch.wrapper = fmt::format("{} megatron {}", kMsSwiftWrapperPrefix, command);
  if (config) {
    launch.reads = LaunchConfig::MsSwift;
    launch.config_file = argv[i + 1];
    launch.config_file_statement = span_of(argv[i + 1], 0, argv[i + 1].text.size());
    ++i;
  }
  launch.arguments = ms_swift_arguments(argv, i + 1);
  read_named_model(argv, i + 1, launch, {"--model", "--load"});
  launch.cluster = ms_swift_cluster(context, context.command_span);
  out.push_back(std::move(launch));
  return true;
}

bool has_option(const std::vector<MappedString>& argv, size_t i, std::string_view name) {
  for (; i < argv.size(); ++i) {
    if (option_name(argv[i].text) == name) return true;
  }
  return false;
}

// The value of `--name V` / `--name=V` among argv[i...], the last one given.
std::optional<OptionValue> option_value(const std::vector<MappedString>& argv, size_t i, std::string_view name) {
  std::optional<OptionValue> found;
  while (i < argv.size()) {
    if (option_name(argv[i].text) != name) {
      ++i;
      continue;
    }
    Options options(argv, i);
    if (auto value = options.take_value()) found = value;
  }
  return found;
}

// slime's train.py (THUDM/slime, slime/utils/arguments.py): Megatron-LM's
// parser plus slime's own options; the training actor's allocation is
// --actor-num-nodes x --actor-num-gpus-per-node (the rollout engines' GPUs
// are not the trained model's).
bool is_slime_train(std::string_view name, const std::vector<MappedString>& argv, size_t i) {
  return (name == "train.py" || name == "train_async.py") && (has_option(argv, i, "--actor-num-nodes") ||
                                has_option(argv, i, "--actor-num-gpus-per-node"));
}

// slime's validate_args: with --num-steps-per-rollout, the global batch is
// rollout_batch_size x n_samples_per_prompt // num_steps_per_rollout (a
// --global-batch-size given must equal it). The value is located at the
// --num-steps-per-rollout option; unknown when one of the three is.
void add_slime_global_batch(const std::vector<MappedString>& argv, size_t i, Launch& launch) {
  std::optional<OptionValue> steps = option_value(argv, i, "--num-steps-per-rollout");
  if (!steps || has_option(argv, i, "--global-batch-size")) return;
  // Plain integers, 0 for unknown: GCC 12 at -O2 warns that optionals
  // combined this way may be read uninitialized.
  int64_t product = 1;
  for (std::string_view name : {"--rollout-batch-size", "--n-samples-per-prompt"}) {
    std::optional<OptionValue> value = option_value(argv, i, name);
    std::optional<int64_t> number = value && !has_unknown(value->value) ? parse_count(value->value.text) : std::nullopt;
    bool fits = number && number.value() > 0 && product <= std::numeric_limits<int64_t>::max() / number.value();
    product = fits ? product * number.value() : 0;
  }
  int64_t divisor = has_unknown(steps->value) ? 0 : parse_count(steps->value.text).value_or(0);
  launch.arguments.push_back(word_at("--global-batch-size", steps->statement));
  if (product > 0 && divisor > 0) {
    launch.arguments.push_back(word_at(std::to_string(product / divisor), steps->statement));
  } else {
    launch.arguments.push_back(unknown_word_at("rollout_batch_size x n_samples_per_prompt // num_steps_per_rollout",
                                            steps->statement));
  }
}

Launch launch_slime(const std::vector<MappedString>& argv, size_t i, const MappedString& program,
                    const Context& context) {
  Launch launch = make_launch(EntryPoint::MegatronLM, program, context, Torchrun{});
  launch.wrapper = kSlimeWrapper;
  launch.arguments = megatron_lm_words(argv, i, [](std::string&) {});
  add_slime_global_batch(argv, i, launch);
  read_named_model(argv, i, launch, {"--hf-checkpoint", "--load"});
  Cluster cluster;
  if (auto nodes = option_value(argv, i, "--actor-num-nodes")) {
    cluster.nodes = located_count(*nodes, "--actor-num-nodes");
  } else {
    cluster.nodes.unknown_because = "slime's train.py was not given --actor-num-nodes";
  }
  if (auto gpus = option_value(argv, i, "--actor-num-gpus-per-node")) {
    cluster.gpus_per_node = located_count(*gpus, "--actor-num-gpus-per-node");
  } else {
    cluster.gpus_per_node.unknown_because = "slime's train.py was not given --actor-num-gpus-per-node";
  }
  launch.cluster = cluster;
  return launch;
}

// --- verl ------------------------------------------------------------------------

struct VerlOverride {
  std::string_view key;
  MappedString value;
  Span statement;
};

std::vector<VerlOverride> verl_overrides(const std::vector<MappedString>& argv, size_t i) {
  std::vector<VerlOverride> out;
  for (; i < argv.size(); ++i) {
    std::string_view text = argv[i].text;
    size_t eq = text.find('=');
    if (eq == std::string_view::npos || text.empty() || text[0] == '-') continue;
    std::string_view key = text.substr(0, eq);
    if (!key.empty() && key[0] == '+') key.remove_prefix(key[1] == '+' ? 2 : 1);
    out.push_back({key, substring(argv[i], eq + 1, text.size()), span_of(argv[i], 0, text.size())});
  }
  return out;
}

const VerlOverride* find_override(const std::vector<VerlOverride>& overrides, std::string_view key) {
  const VerlOverride* found = nullptr;
  for (const VerlOverride& o : overrides) {
    if (o.key == key) found = &o;  // the last one wins, as in Hydra
  }
  return found;
}

// verl's PPO trainer (`python3 -m verl.trainer.main_ppo`) with the Megatron
// actor: the actor's parallel sizes are actor_rollout_ref.actor.megatron.*
// (defaults TP = PP = CP = EP = 1, sequence parallelism and the distributed
// optimizer on: verl/trainer/config/ppo_megatron_trainer.yaml and
// engine/megatron.yaml), the allocation trainer.nnodes x n_gpus_per_node
// (defaults 1 x 8). The rollout engine's own TP is not the trained model's.
bool is_verl_megatron(const std::vector<MappedString>& argv, size_t i) {
  for (; i < argv.size(); ++i) {
    std::string_view text = argv[i].text;
    if (text.find("actor_rollout_ref.actor.megatron.") != std::string_view::npos) return true;
    if (text.find("actor_rollout_ref.actor.strategy=megatron") != std::string_view::npos) return true;
    if (starts_with(text, "--config-name") && text.find("megatron") != std::string_view::npos) return true;
    if (text == "--config-name" && i + 1 < argv.size() && argv[i + 1].text.find("megatron") != std::string::npos)
      return true;
  }
  return false;
}

LocatedInt verl_count(const std::vector<VerlOverride>& overrides, std::string_view key, int64_t fallback,
                      Span span) {
  if (const VerlOverride* o = find_override(overrides, key))
    return located_count(OptionValue{o->value, o->statement}, std::string(key));
  return launcher_default(fallback, span, fmt::format("verl's default {}: {}", key, fallback));
}

Launch launch_verl(const std::vector<MappedString>& argv, size_t i, const MappedString& module,
                   const Context& context) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kSizes = {{
      {"tensor_model_parallel_size", "--tensor-model-parallel-size"},
      {"pipeline_model_parallel_size", "--pipeline-model-parallel-size"},
      {"context_parallel_size", "--context-parallel-size"},
      {"expert_model_parallel_size", "--expert-model-parallel-size"},
      {"expert_tensor_parallel_size", "--expert-tensor-parallel-size"},
      {"virtual_pipeline_model_parallel_size", "--num-virtual-stages-per-pipeline-rank"},
  }};
  Launch launch = make_launch(EntryPoint::MegatronLM, module, context, Torchrun{});
  launch.wrapper = kVerlWrapper;
  std::vector<VerlOverride> overrides = verl_overrides(argv, i);
  const std::string prefix = "actor_rollout_ref.actor.megatron.";
  for (const auto& [key, flag] : kSizes) {
    const VerlOverride* o = find_override(overrides, prefix + std::string(key));
    if (!o || o->value.text == "null") continue;
    launch.arguments.push_back(word_at(flag, o->statement));
    launch.arguments.push_back(o->value);
  }
  // (sequence_parallel is not read from verl's config: its converter sets it
  // to TP > 1, lint/resolve/job_builder.cpp apply_verl_rewrites.)
  for (std::string_view key : {"use_distributed_optimizer"}) {  // on unless turned off
    const VerlOverride* o = find_override(overrides, prefix + std::string(key));
    if (o && !is_true_word(o->value.text) && o->value.text != "true") continue;
    std::string flag = "--" + std::string(key);
    std::replace(flag.begin(), flag.end(), '_', '-');
    launch.arguments.push_back(word_at(flag, o ? o->statement : context.command_span));
  }
  // The micro batch per GPU, unless batches are sized by tokens; the global
  // batch is verl's to compute (ppo_mini_batch_size counts prompts).
  const VerlOverride* dynamic = find_override(overrides, "actor_rollout_ref.actor.use_dynamic_bsz");
  const VerlOverride* micro = find_override(overrides, "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu");
  launch.arguments.push_back(word_at("--micro-batch-size", micro ? micro->statement : context.command_span));
  bool by_tokens = dynamic && is_true_word(dynamic->value.text);
  launch.arguments.push_back(micro && !by_tokens ? micro->value
                                                 : unknown_word_at("ppo_micro_batch_size_per_gpu", context.command_span));
  launch.arguments.push_back(word_at("--global-batch-size", context.command_span));
  launch.arguments.push_back(unknown_word_at("the global batch verl derives", context.command_span));
  if (const VerlOverride* model = find_override(overrides, "actor_rollout_ref.model.path")) {
    launch.named_model = model->value;
    launch.named_model_statement = model->statement;
  }
  launch.cluster = Cluster{};
  launch.cluster.nodes = verl_count(overrides, "trainer.nnodes", 1, context.command_span);
  launch.cluster.gpus_per_node = verl_count(overrides, "trainer.n_gpus_per_node", 8, context.command_span);
  return launch;
}

ShellEnvironment with_assignments(const ShellEnvironment& exported,
                                  const std::vector<std::pair<std::string, MappedString>>& assignments) {
  ShellEnvironment environment = exported;
  for (const auto& [name, value] : assignments) {
    ShellVariable variable;
    variable.value = value;
    variable.known = !has_unknown(value);
    variable.exported = true;
    variable.definition = span_of(value, 0, value.text.size());
    environment[name] = variable;
  }
  return environment;
}

ShellEnvironment with_assignments(const Context& context) {
  return with_assignments(*context.environment, context.assignments);
}

// `deepspeed [--num_nodes N] [--num_gpus G] ... program.py ARGS` (DeepSpeed's
// launcher/runner.py): without --num_nodes it runs on the hosts of its
// hostfile, without --num_gpus on every visible GPU; both are then unknown.
void scan_deepspeed(const std::vector<MappedString>& argv, size_t i, Context context, Span span,
                    std::vector<Launch>& out) {
  static constexpr std::array<std::string_view, 16> kValued = {
      "-H", "--hostfile", "-i", "--include", "-e", "--exclude", "--master_port", "--master_addr",
      "--launcher", "--launcher_args", "--num_nodes", "--num_gpus", "--num_accelerators", "--node_rank",
      "--ssh_port", "--elastic_training"};
  Torchrun resources;
  resources.present = true;
  resources.span = span;
  resources.nnodes.unknown_because = "deepspeed was not given --num_nodes: it runs on every host of its hostfile";
  resources.nproc_per_node.unknown_because = "deepspeed was not given --num_gpus: it starts one process per visible GPU";
  Options options(argv, i);
  while (options.is_option()) {
    std::string_view name = options.name();
    bool attached = options.text().find('=') != std::string_view::npos;
    if (name == "--num_nodes") {
      if (auto value = options.take_value()) resources.nnodes = located_count(*value, "--num_nodes");
    } else if (name == "--num_gpus" || name == "--num_accelerators") {
      if (auto value = options.take_value()) resources.nproc_per_node = located_count(*value, std::string(name));
    } else if (!attached && std::find(kValued.begin(), kValued.end(), name) != kValued.end()) {
      options.take_value();
    } else {
      options.skip();
    }
  }
  context.wrapper = kDeepSpeedWrapper;
  skip_unknown_launcher_words(argv, i, resources);
  scan_program(argv, i, context, resources, out);
}

// `mpirun|mpiexec [-np N] [-N n | --npernode n | -ppn n] ... PROGRAM` (Open
// MPI's and MPICH's options): every rank is one process of the program, as
// srun's tasks are. Without a per-node count the ranks fill the hostfile's
// slots, which are not in the script.
void scan_mpirun(const std::vector<MappedString>& argv, size_t i, Context context, const ShellLimits& limits,
                 std::vector<Launch>& out) {
  static constexpr std::array<std::string_view, 22> kValued = {
      "-x", "--hostfile", "-hostfile", "--machinefile", "-machinefile", "-f", "--host", "-H", "-host",
      "--map-by", "-map-by", "--bind-to", "-bind-to", "--rank-by", "-rank-by", "--prefix", "-wdir", "--wdir",
      "-c", "--output-filename", "-iface", "--tag-output"};
  std::optional<OptionValue> ranks;
  std::optional<OptionValue> per_node;
  while (i < argv.size() && starts_with(argv[i].text, "-")) {
    std::string_view name = argv[i].text;
    auto value = [&]() -> std::optional<OptionValue> {
      if (i + 1 >= argv.size()) {  // the option ends the command: nothing is launched
        i = argv.size();
        return std::nullopt;
      }
      OptionValue v{argv[i + 1], span_of(argv[i], 0, argv[i].text.size())};
      i += 2;
      return v;
    };
    if (name == "-np" || name == "-n" || name == "--np" || name == "--n") {
      ranks = value();
    } else if (name == "-N" || name == "--npernode" || name == "-npernode" || name == "-ppn" || name == "--ppn") {
      per_node = value();
    } else if (name == "--mca" || name == "-mca" || name == "-genv" || name == "-env" || name == "--env") {
      i = std::min(argv.size(), i + 3);  // two values
    } else if (std::find(kValued.begin(), kValued.end(), name) != kValued.end()) {
      value();
    } else {
      ++i;
    }
  }
  context.under_srun = true;  // ranks are the processes, one per task
  context.srun_span = context.command_span;
  context.slurm.ntasks = ranks ? located_count(*ranks, "mpirun -np") : LocatedInt{};
  context.slurm.ntasks_per_node = per_node ? located_count(*per_node, "the ranks per node of mpirun") : LocatedInt{};
  if (!per_node) {
    context.slurm.ntasks_per_node.unknown_because = "mpirun was not given a per-node count: its hostfile decides";
  }
  const LocatedInt& total = context.slurm.ntasks;
  const LocatedInt& each = context.slurm.ntasks_per_node;
  if (total.value && each.value && *each.value > 0 && *total.value % *each.value == 0) {
    context.slurm.nodes = total;
    context.slurm.nodes.value = *total.value / *each.value;
    context.slurm.nodes.where.origin = "mpirun -np divided by the ranks per node";
  } else if (!context.slurm.nodes.value) {
    context.slurm.nodes = LocatedInt{};
    context.slurm.nodes.unknown_because = "mpirun's node count is in its hostfile";
  }
  scan(argv, i, context, limits, out);
}

// `--runtime-env-json='{"env_vars": {...}}'`: the variables the job sees.
void read_runtime_env(const OptionValue& option, Context& context) {
  if (has_unknown(option.value)) return;
  nlohmann::json env = nlohmann::json::parse(option.value.text, nullptr, false);
  if (env.is_discarded() || !env.is_object() || !env.contains("env_vars") || !env["env_vars"].is_object()) return;
  for (const auto& [name, value] : env["env_vars"].items()) {
    if (!value.is_string()) continue;
    MappedString text;
    text.file = option.statement.file;
    for (char c : value.get<std::string>()) append_char(text, c, option.statement.begin, option.statement.end);
    context.assignments.emplace_back(name, std::move(text));
  }
}

// `ray job submit [options] -- COMMAND`: the command runs on the Ray
// cluster with the runtime environment's variables.
size_t skip_ray_submit(const std::vector<MappedString>& argv, size_t i, Context& context) {
  if (i + 1 >= argv.size() || argv[i].text != "job" || argv[i + 1].text != "submit") return argv.size();
  for (i += 2; i < argv.size(); ++i) {
    if (argv[i].text == "--") return i + 1;
    if (option_name(argv[i].text) == "--runtime-env-json") {
      size_t at = i;
      Options options(argv, at);
      if (auto value = options.take_value()) read_runtime_env(*value, context);
    }
  }
  return argv.size();
}

void scan_shell_c(const std::vector<MappedString>& argv, size_t i, Context context, const ShellLimits& limits,
                  std::vector<Launch>& out) {
  while (i < argv.size() && argv[i].text != "-c" && !argv[i].text.empty() && argv[i].text[0] == '-') ++i;
  if (i >= argv.size() || argv[i].text != "-c" || i + 1 >= argv.size()) return;
  if (context.depth >= limits.max_call_depth) return;
  const MappedString& code = argv[i + 1];
  ShellScript inner = walk_shell_code(code, with_assignments(context), limits);
  for (const ShellCommand& command : inner.commands) {
    Context nested = context;
    nested.certain = context.certain && command.certain;
    if (command.environment) nested.environment = command.environment;
    nested.assignments = command.assignments;
    nested.command_span = command.span;
    nested.depth = context.depth + 1;
    scan(command.argv, 0, nested, limits, out);
  }
}

// `${NSYSCMD} python -u train.py` with NSYSCMD unknown: a prefix held in a
// variable (a profiler, a binding tool) before a Python interpreter. The
// program is still the launch; the allocation is unknown, since the words
// may hold a launcher of their own.
void scan_after_unknown_prefix(const std::vector<MappedString>& argv, size_t i, const Context& context,
                               const ShellLimits& limits, std::vector<Launch>& out) {
  size_t at = i;
  while (at < argv.size() && at - i < 2 && has_unknown(argv[at])) ++at;
  if (at >= argv.size() || has_unknown(argv[at]) || !is_python(basename(argv[at].text))) return;
  size_t first = out.size();
  scan(argv, at, context, limits, out);
  std::string why = fmt::format("`{}` before the program is not known here and may hold a launcher", argv[i].text);
  for (size_t k = first; k < out.size(); ++k) {
    for (LocatedInt* count : {&out[k].cluster.nodes, &out[k].cluster.gpus_per_node}) {
      count->value.reset();
      count->unknown_because = why;
      count->where.layer = Layer::Launcher;
      count->where.statement = span_of(argv[i], 0, argv[i].text.size());
    }
  }
}

void scan(const std::vector<MappedString>& argv, size_t i, Context context, const ShellLimits& limits,
          std::vector<Launch>& out) {
  static constexpr std::array<std::string_view, 14> kUvValued = {
      "--with", "--project", "--directory", "--python", "-p", "--extra", "--group", "--env-file",
      "--index", "--index-url", "--with-requirements", "--package", "--only-group", "--no-group"};
  static constexpr std::array<std::string_view, 34> kDockerValued = {
      "-v", "--volume", "-e", "--env", "--env-file", "-w", "--workdir", "--name", "--gpus", "--shm-size",
      "--ipc", "--network", "--net", "-u", "--user", "--entrypoint", "--device", "--mount", "--ulimit",
      "--cap-add", "--security-opt", "-p", "--publish", "--runtime", "-l", "--label", "-h", "--hostname",
      "--add-host", "--cpus", "-m", "--memory", "--pid", "--group-add"};
  static constexpr std::array<std::string_view, 12> kNsysValued = {
      "-o", "--output", "-t", "--trace", "-s", "--sample", "-c", "--capture-range", "-d", "--delay",
      "--duration", "--cuda-memory-usage"};
  while (i < argv.size()) {
    const MappedString& word = argv[i];
    if (has_unknown(word)) {  // the program itself is not known
      scan_after_unknown_prefix(argv, i, context, limits, out);
      return;
    }
    std::string_view name = basename(word.text);
    // MLPerf's slurm2pytorch runs its command with torchrun's variables taken
    // from Slurm's (one process per srun task).
    if (name == "exec" || name == "time" || name == "nohup" || name == "stdbuf" || name == "command" ||
        name == "slurm2pytorch") {
      ++i;
      continue;
    }
    if (name == "env") {
      ++i;
      while (i < argv.size()) {
        std::string_view text = argv[i].text;
        size_t eq = text.find('=');
        if (eq != std::string_view::npos && eq > 0 && text[0] != '-') {
          context.assignments.emplace_back(std::string(text.substr(0, eq)),
                                           substring(argv[i], eq + 1, text.size()));
          ++i;
        } else if (!text.empty() && text[0] == '-') {
          ++i;
        } else {
          break;
        }
      }
      continue;
    }
    if (name == "sbatch") {  // a job of its own (its script's #SBATCH lines come first)
      ++i;
      context.slurm = SlurmRequest{};
      context.under_srun = false;
      read_slurm_options(argv, i, context.slurm);
      continue;
    }
    if (name == "srun") {
      ++i;
      context.under_srun = true;
      context.srun_span = context.command_span;
      read_slurm_options(argv, i, context.slurm);
      continue;
    }
    if (name == "docker") {  // docker run|exec [OPTIONS] IMAGE|CONTAINER COMMAND
      ++i;
      if (i >= argv.size() || (argv[i].text != "run" && argv[i].text != "exec")) return;
      ++i;
      Options options(argv, i);
      skip_options(options, kDockerValued);
      ++i;  // the image or container
      continue;
    }
    if (name == "uv") {
      ++i;
      if (i < argv.size() && argv[i].text == "run") ++i;
      Options options(argv, i);
      skip_options(options, kUvValued);
      continue;
    }
    if (name == "nsys") {
      ++i;
      if (i < argv.size() && argv[i].text == "profile") ++i;
      Options options(argv, i);
      skip_options(options, kNsysValued);
      continue;
    }
    if (name == "bindpcie") {  // MLPerf's CPU/NIC binding: `bindpcie [--cpu=exclusive] -- CMD`
      ++i;
      while (i < argv.size() && starts_with(argv[i].text, "-") && argv[i].text != "--") ++i;
      if (i < argv.size() && argv[i].text == "--") ++i;
      continue;
    }
    if (name == "numactl" || name == "taskset") {
      ++i;
      while (i < argv.size() && !looks_like_program(argv[i].text)) ++i;
      continue;
    }
    if (name == "bash" || name == "sh" || name == "zsh") {
      scan_shell_c(argv, i + 1, context, limits, out);
      return;
    }
    if (name == "torchrun") {
      scan_torchrun(argv, i + 1, context, span_of(word, 0, word.text.size()), out);
      return;
    }
    if (is_python(name)) {
      scan_python(argv, i + 1, context, out);
      return;
    }
    if (name == "train.sh") {
      out.push_back(launch_train_sh(argv, i + 1, word, context));
      return;
    }
    if (name == "megatron") {
      scan_ms_swift(argv, i + 1, context, out);
      return;
    }
    if (name == "deepspeed") {
      scan_deepspeed(argv, i + 1, context, span_of(word, 0, word.text.size()), out);
      return;
    }
    if (name == "mpirun" || name == "mpiexec") {
      scan_mpirun(argv, i + 1, context, limits, out);
      return;
    }
    if (name == "ray") {
      context.under_ray = true;
      context.ray_span = context.command_span;
      i = skip_ray_submit(argv, i + 1, context);
      continue;
    }
    if (ends_with(name, ".py")) {
      scan_program(argv, i, context, Torchrun{}, out);
      return;
    }
    return;
  }
}

}  // namespace

std::vector<MappedString> ms_swift_megatron_words(const std::vector<MappedString>& words) {
  return ms_swift_arguments(words, 0);
}

ShellEnvironment slurm_environment(const std::vector<SbatchDirective>& directives) {
  SlurmRequest request = request_from_directives(directives);
  ShellEnvironment environment;
  auto define = [&](const char* name, const LocatedInt& value) {
    if (!value.value) return;
    ShellVariable variable;
    std::string text = std::to_string(*value.value);
    variable.value = MappedString{};
    variable.value.file = value.where.statement.file;
    for (char c : text) append_char(variable.value, c, value.where.statement.begin, value.where.statement.end);
    variable.definition = value.where.statement;
    variable.exported = true;
    environment[name] = std::move(variable);
  };
  define("SLURM_NNODES", request.nodes);
  define("SLURM_JOB_NUM_NODES", request.nodes);
  define("SLURM_NTASKS_PER_NODE", request.ntasks_per_node);
  define("SLURM_GPUS_PER_NODE", request.gpus.gpus_per_node);
  if (request.ntasks.value) {
    define("SLURM_NTASKS", request.ntasks);
  } else if (request.nodes.value && request.ntasks_per_node.value) {
    LocatedInt total = request.ntasks_per_node;
    total.value = *request.nodes.value * *request.ntasks_per_node.value;
    define("SLURM_NTASKS", total);
  }
  return environment;
}

std::vector<Launch> find_launches(const ShellScript& script, const std::vector<SbatchDirective>& directives,
                                  const ShellLimits& limits, LaunchReading reading) {
  SlurmRequest allocation = request_from_directives(directives);
  std::vector<Launch> launches;
  for (const ShellCommand& command : script.commands) {
    if (command.followed) continue;  // what it runs is in the script's commands
    Context context;
    context.bare_hydra_apps = reading.bare_hydra_apps;
    context.slurm = allocation;
    context.certain = command.certain;
    if (command.environment) context.environment = command.environment;
    if (!command.assignments.empty()) {
      context.environment =
          std::make_shared<const ShellEnvironment>(with_assignments(command.variables(), command.assignments));
    }
    context.assignments = command.assignments;
    context.command_span = command.span;
    size_t first = launches.size();
    if (command.launcher.empty()) {
      scan(command.argv, 0, context, limits, launches);
    } else {
      std::vector<MappedString> argv = command.launcher;  // `srun ... bash -c`: the launcher first
      argv.insert(argv.end(), command.argv.begin(), command.argv.end());
      scan(argv, 0, context, limits, launches);
    }
    for (size_t i = first; i < launches.size(); ++i) {
      launches[i].fork_group = command.fork_group;
      launches[i].fork_arm = command.fork_arm;
    }
  }
  return launches;
}

std::string_view entry_point_name(EntryPoint entry) {
  switch (entry) {
    case EntryPoint::None: return "none";
    case EntryPoint::RunRecipe: return "run_recipe.py";
    case EntryPoint::TrainSh: return "train.sh";
    case EntryPoint::ConfigFileScript: return "--config-file script";
    case EntryPoint::MegatronLM: return "Megatron-LM";
    case EntryPoint::Unknown: return "unknown";
  }
  return "unknown";
}

std::string_view dialect_name(Dialect dialect) {
  switch (dialect) {
    case Dialect::Bridge: return "bridge";
    case Dialect::MegatronLM: return "megatron-lm";
    case Dialect::NeMo: return "nemo";
  }
  return "bridge";
}

}  // namespace mblint
