#include "lint/command_line/command_line.h"

#include <algorithm>

#include <fmt/format.h>

#include "lint/base/version.h"
#include "lint/model/catalog.h"

namespace mblint {

CommandLine add_command_line(SourceSet& sources, const std::vector<std::string>& args) {
  CommandLine line;
  std::string text = "mblint";
  for (const std::string& arg : args) {
    text += ' ';
    line.offsets.push_back(static_cast<uint32_t>(text.size()));
    text += arg;
  }
  line.file = add_source(sources, "<command-line>", text, /*synthetic=*/true);
  return line;
}

CommandWords add_command_words(SourceSet& sources, std::string command, const std::vector<std::string>& args) {
  CommandWords words;
  words.full_args.push_back(std::move(command));
  words.full_args.insert(words.full_args.end(), args.begin(), args.end());
  words.line = add_command_line(sources, words.full_args);
  return words;
}

// Every value of option `name` (`--name value` or `--name=value`), located.
std::vector<CommandLineValue> option_values(const std::vector<std::string>& args, const CommandLine& line,
                                            std::initializer_list<std::string_view> names) {
  std::vector<CommandLineValue> values;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") break;
    for (std::string_view name : names) {
      std::string_view arg = args[i];
      if (arg == name && i + 1 < args.size()) {
        values.push_back({args[i + 1], make_span(line.file, line.offsets[i + 1],
                                                 line.offsets[i + 1] + args[i + 1].size())});
        ++i;
        break;
      }
      if (arg.size() > name.size() && arg.substr(0, name.size()) == name && arg[name.size()] == '=') {
        uint32_t start = line.offsets[i] + static_cast<uint32_t>(name.size()) + 1;
        values.push_back({std::string(arg.substr(name.size() + 1)), make_span(line.file, start, start + arg.size() - name.size() - 1)});
        break;
      }
    }
  }
  return values;
}

std::optional<CommandLineValue> last_value(const std::vector<std::string>& args, const CommandLine& line,
                                           std::initializer_list<std::string_view> names) {
  auto values = option_values(args, line, names);
  if (values.empty()) return std::nullopt;
  return values.back();
}

std::optional<Severity> parse_severity(std::string_view text) {
  if (text == "error") return Severity::Error;
  if (text == "warning") return Severity::Warning;
  if (text == "note") return Severity::Note;
  return std::nullopt;
}

bool use_color(const std::string& mode, const CliEnvironment& env) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  auto no_color = env.getenv ? env.getenv("NO_COLOR") : std::nullopt;
  if (no_color && !no_color->empty()) return false;
  return env.stdout_is_tty;
}

int usage_error(const CliEnvironment& env, const std::string& message) {
  env.err << "mblint: " << message << "\n";
  return kExitUsage;
}

namespace {

std::optional<int> require_known_recipe(const LintOptions& options, const CliEnvironment& env) {
  if (!options.recipe || find_recipe(options.recipe->text)) return std::nullopt;
  std::vector<std::string> similar = similar_recipe_names(options.recipe->text);
  std::string hint = similar.empty() ? "check the name against Megatron Bridge's recipes"
                                     : fmt::format("did you mean {}?", fmt::join(similar, ", "));
  return usage_error(env, fmt::format("recipe '{}' is not in mblint's catalog: {} (`mblint recipes PATTERN` lists "
                                      "the catalogued names)",
                                      options.recipe->text, hint));
}

}  // namespace

std::optional<int> parse_command(cxxopts::Options& options, const std::vector<std::string>& args,
                                 cxxopts::ParseResult& parsed, const CliEnvironment& env) {
  std::vector<std::string> argv_storage = {options.program()};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<const char*> argv;
  for (const std::string& a : argv_storage) argv.push_back(a.c_str());
  try {
    parsed = options.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const cxxopts::exceptions::exception& error) {
    return usage_error(env, fmt::format("{} (see {} --help)", error.what(), options.program()));
  }
  if (parsed.count("help")) {
    env.out << options.help();
    return kExitClean;
  }
  return std::nullopt;
}

void add_job_options(cxxopts::Options& options) {
  options.add_options("job")
      ("recipe", "recipe the YAML files / --config-file scripts use", cxxopts::value<std::string>())
      ("nodes", "number of nodes", cxxopts::value<std::string>())
      ("gpus-per-node", "GPUs (ranks) per node", cxxopts::value<std::string>())
      ("gpu", fmt::format("GPU type: {}", gpu_type_names()),
       cxxopts::value<std::string>())
      ("set", "Hydra override applied last (repeatable), e.g. --set model.context_parallel_size=2",
       cxxopts::value<std::vector<std::string>>())
      ("bridge-version", "Megatron Bridge version the job runs (default: newest known)",
       cxxopts::value<std::string>())
      ("megatron-core-version", "Megatron-Core version the job runs (default: newest known)",
       cxxopts::value<std::string>())
      ("dialect", "read YAML files as bridge, megatron-lm or nemo (default: detected from the content)",
       cxxopts::value<std::string>())
      ("script-args", "a launch script's positional parameters ($1 $2 ...), split on blanks; or give them "
                      "after `--`", cxxopts::value<std::string>());
  options.add_options("project")
      ("config", "project config to use instead of the nearest .mblint.yaml above each file",
       cxxopts::value<std::string>())
      ("no-config", "ignore every .mblint.yaml");
}

// `-- A B` (each word one parameter) or `--script-args "A B"` (split on
// blanks), each located on the command line.
std::optional<int> read_script_args(const std::vector<std::string>& args, const CommandLine& line,
                                    const CliEnvironment& env, LintOptions& options) {
  auto dashes = std::find(args.begin(), args.end(), "--");
  std::optional<CommandLineValue> joined = last_value(args, line, {"--script-args"});
  if (dashes != args.end() && joined) return usage_error(env, "give the script's arguments after `--` or with --script-args, not both");
  if (dashes != args.end()) {
    options.script_args.emplace();
    for (auto it = dashes + 1; it != args.end(); ++it) {
      size_t i = static_cast<size_t>(it - args.begin());
      options.script_args->push_back({*it, make_span(line.file, line.offsets[i], line.offsets[i] + it->size())});
    }
    return std::nullopt;
  }
  if (!joined) return std::nullopt;
  options.script_args.emplace();
  const std::string& text = joined->text;
  size_t at = 0;
  while ((at = text.find_first_not_of(" \t", at)) != std::string::npos) {
    size_t end = std::min(text.find_first_of(" \t", at), text.size());
    uint32_t begin = joined->span.begin + static_cast<uint32_t>(at);
    options.script_args->push_back({text.substr(at, end - at), make_span(line.file, begin, begin + (end - at))});
    at = end;
  }
  return std::nullopt;
}

std::optional<int> read_job_options(const std::vector<std::string>& full_args, const CommandLine& line,
                                    const CliEnvironment& env, LintOptions& options) {
  options.base_dir = env.cwd;
  options.command_line_file = line.file;
  options.recipe = last_value(full_args, line, {"--recipe"});
  options.nodes = last_value(full_args, line, {"--nodes"});
  options.gpus_per_node = last_value(full_args, line, {"--gpus-per-node"});
  options.gpu = last_value(full_args, line, {"--gpu"});
  options.sets = option_values(full_args, line, {"--set"});
  options.bridge_version = last_value(full_args, line, {"--bridge-version"});
  options.megatron_core_version = last_value(full_args, line, {"--megatron-core-version"});
  options.dialect = last_value(full_args, line, {"--dialect"});
  if (auto stop = read_script_args(full_args, line, env, options)) return *stop;
  options.project_config = last_value(full_args, line, {"--config"});
  options.no_project_config = std::find(full_args.begin(), full_args.end(), "--no-config") != full_args.end();
  if (options.project_config && options.no_project_config) {
    return usage_error(env, "--config and --no-config exclude each other");
  }
  if (options.dialect && options.dialect->text != "bridge" && options.dialect->text != "megatron-lm" &&
      options.dialect->text != "nemo") {
    return usage_error(env, fmt::format("unknown --dialect '{}' (known: bridge, megatron-lm, nemo)",
                                        options.dialect->text));
  }
  for (const auto* count : {&options.nodes, &options.gpus_per_node}) {
    if (*count && (count->value().text.empty() ||
                   !std::all_of(count->value().text.begin(), count->value().text.end(), ::isdigit) ||
                   count->value().text == "0")) {
      return usage_error(env, fmt::format("expected a positive integer, got '{}'", count->value().text));
    }
  }
  if (options.gpu && !find_gpu(options.gpu->text)) {
    return usage_error(env, fmt::format("unknown GPU type '{}' (known: {})", options.gpu->text, gpu_type_names()));
  }
  for (const auto* version : {&options.bridge_version, &options.megatron_core_version}) {
    if (*version && !parse_version(version->value().text)) {
      return usage_error(env, fmt::format("'{}' is not a version (expected e.g. 0.6 or 0.16.0)", version->value().text));
    }
  }

  return std::nullopt;
}

std::optional<int> read_recipe_job_options(const std::vector<std::string>& full_args, const CommandLine& line,
                                           const CliEnvironment& env, LintOptions& options) {
  if (auto stop = read_job_options(full_args, line, env, options)) return stop;
  return require_known_recipe(options, env);
}

}  // namespace mblint
