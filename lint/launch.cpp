#include "lint/launch.h"

#include <algorithm>
#include <array>
#include <charconv>

#include <fmt/format.h>

#include "lint/catalog.h"

namespace mblint {

namespace {

std::string_view basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

std::optional<int64_t> parse_count(std::string_view text) {
  if (text.empty() || text.size() > 12) return std::nullopt;
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

Diagnostic launch_problem(std::string rule, std::string message, Span where, std::string help) {
  Diagnostic d;
  d.rule = std::move(rule);
  d.severity = Severity::Error;
  d.message = std::move(message);
  d.where = where;
  d.help = std::move(help);
  return d;
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
  ShellEnvironment environment;
  std::vector<std::pair<std::string, MappedString>> assignments;
  Span command_span;
  size_t depth = 0;
};

std::vector<EnvSetting> environment_of(const Context& context) {
  std::vector<EnvSetting> env;
  for (const auto& [name, variable] : context.environment) {
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
  launch.problems.push_back(launch_problem("entry-point-argument", std::string(message),
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
          "entry-point-argument", fmt::format("run_recipe.py rejects `{}` (\"Unknown option: {}\")", name, name),
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
          "entry-point-argument", "spaces around `=` split this override into separate arguments",
          first, "write the override as one word: key=value"));
      i = last + 1;
      continue;
    }
    if (text.find('=') == std::string_view::npos) {
      launch.problems.push_back(launch_problem(
          "entry-point-argument",
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
  // A bare `python script.py`: one process, whatever the allocation.
  cluster.nodes = launcher_default(1, python_span, "a plain python command runs a single process");
  cluster.gpus_per_node = launcher_default(1, python_span, "a plain python command runs a single process");
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
  if (is_megatron_lm_entry(name, argv, i)) {
    Launch launch = make_launch(EntryPoint::MegatronLM, program, context, torchrun);
    launch.arguments.assign(argv.begin() + static_cast<std::ptrdiff_t>(i), argv.end());
    out.push_back(std::move(launch));
    return;
  }
  if (ends_with(name, ".py") && (has_config_file_flag(argv, i) || has_override_words(argv, i))) {
    Launch launch = make_launch(EntryPoint::ConfigFileScript, program, context, torchrun);
    parse_config_file_script_args(argv, i, launch);
    out.push_back(std::move(launch));
  }
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

ShellEnvironment with_assignments(const Context& context) {
  ShellEnvironment environment = context.environment;
  for (const auto& [name, value] : context.assignments) {
    ShellVariable variable;
    variable.value = value;
    variable.known = !has_unknown(value);
    variable.exported = true;
    variable.definition = span_of(value, 0, value.text.size());
    environment[name] = variable;
  }
  return environment;
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
    nested.environment = command.environment;
    nested.assignments = command.assignments;
    nested.command_span = command.span;
    nested.depth = context.depth + 1;
    scan(command.argv, 0, nested, limits, out);
  }
}

void scan(const std::vector<MappedString>& argv, size_t i, Context context, const ShellLimits& limits,
          std::vector<Launch>& out) {
  static constexpr std::array<std::string_view, 14> kUvValued = {
      "--with", "--project", "--directory", "--python", "-p", "--extra", "--group", "--env-file",
      "--index", "--index-url", "--with-requirements", "--package", "--only-group", "--no-group"};
  static constexpr std::array<std::string_view, 12> kNsysValued = {
      "-o", "--output", "-t", "--trace", "-s", "--sample", "-c", "--capture-range", "-d", "--delay",
      "--duration", "--cuda-memory-usage"};
  while (i < argv.size()) {
    const MappedString& word = argv[i];
    if (has_unknown(word)) return;  // the program itself is not known
    std::string_view name = basename(word.text);
    if (name == "exec" || name == "time" || name == "nohup" || name == "stdbuf" || name == "command") {
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
    if (name == "srun") {
      ++i;
      context.under_srun = true;
      context.srun_span = context.command_span;
      Options options(argv, i);
      while (options.is_option()) {
        std::string_view option = options.name();
        bool attached = options.text().find('=') != std::string_view::npos || (!starts_with(options.text(), "--") && options.text().size() > 2);
        if (attached || slurm_option_takes_value(option)) {
          if (auto value = options.take_value()) read_slurm_option(option, *value, context.slurm);
        } else {
          options.skip();
        }
      }
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
    if (ends_with(name, ".py")) {
      scan_program(argv, i, context, Torchrun{}, out);
      return;
    }
    return;
  }
}

}  // namespace

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
                                  const ShellLimits& limits) {
  SlurmRequest allocation = request_from_directives(directives);
  std::vector<Launch> launches;
  for (const ShellCommand& command : script.commands) {
    Context context;
    context.slurm = allocation;
    context.certain = command.certain;
    context.environment = command.environment;
    context.assignments = command.assignments;
    context.command_span = command.span;
    for (const auto& [name, value] : command.assignments) {
      ShellVariable variable;
      variable.value = value;
      variable.known = !has_unknown(value);
      variable.exported = true;
      variable.definition = span_of(value, 0, value.text.size());
      context.environment[name] = variable;
    }
    scan(command.argv, 0, context, limits, launches);
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
