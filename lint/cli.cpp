#include "lint/cli.h"

#include <algorithm>

#include <cxxopts.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lint/catalog.h"
#include "lint/lint.h"
#include "lint/render.h"
#include "lint/unchecked_rows.h"
#include "lint/version.h"

namespace mblint {

namespace {

constexpr const char* kVersion = "0.1.0";

const char* kUsage =
    "usage: mblint <command> [options]\n"
    "\n"
    "commands:\n"
    "  check FILE...     lint launch scripts and Megatron Bridge YAML files\n"
    "  rules             list every rule (code, name, severity, summary)\n"
    "  explain RULE      print a rule's documentation (name or code)\n"
    "  version           print mblint's version\n"
    "\n"
    "run `mblint check --help` for the options of check.\n";

// mblint's own command line as a source file, so that values given there
// (--recipe, --set, --nodes) can be located like any other value.
struct CommandLine {
  FileId file = kNoFile;
  std::vector<uint32_t> offsets;  // where each argument starts
};

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

cxxopts::Options check_options() {
  cxxopts::Options options("mblint check", "Lint Megatron Bridge launch scripts and YAML configs.");
  options.custom_help("[options]");
  options.positional_help("FILE...");
  options.add_options()
      ("recipe", "recipe the YAML files / --config-file scripts use", cxxopts::value<std::string>())
      ("nodes", "number of nodes", cxxopts::value<std::string>())
      ("gpus-per-node", "GPUs (ranks) per node", cxxopts::value<std::string>())
      ("gpu", "GPU type: a100-40, a100-80, h100, h200, b200, b300, gb200, gb300, vr200, r100",
       cxxopts::value<std::string>())
      ("set", "Hydra override applied last (repeatable), e.g. --set model.context_parallel_size=2",
       cxxopts::value<std::vector<std::string>>())
      ("bridge-version", "Megatron Bridge version the job runs (default: newest known)",
       cxxopts::value<std::string>())
      ("megatron-core-version", "Megatron-Core version the job runs (default: newest known)",
       cxxopts::value<std::string>())
      ("dialect", "read YAML files as bridge, megatron-lm or nemo (default: detected from the content)",
       cxxopts::value<std::string>())
      ("format", "output format: text or json", cxxopts::value<std::string>()->default_value("text"))
      ("fail-on", "exit 1 when a finding is at least: error, warning or note",
       cxxopts::value<std::string>()->default_value("error"))
      ("color", "colour: auto, always or never", cxxopts::value<std::string>()->default_value("auto"))
      ("h,help", "show this help")
      ("paths", "files to check", cxxopts::value<std::vector<std::string>>());
  options.parse_positional({"paths"});
  return options;
}

int run_check(const std::vector<std::string>& args, RuleSet rules, const CliEnvironment& env) {
  cxxopts::Options parser = check_options();
  std::vector<std::string> argv_storage = {"mblint check"};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<const char*> argv;
  for (const std::string& a : argv_storage) argv.push_back(a.c_str());
  cxxopts::ParseResult parsed;
  try {
    parsed = parser.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const cxxopts::exceptions::exception& error) {
    return usage_error(env, std::string(error.what()) + " (see mblint check --help)");
  }
  if (parsed.count("help")) {
    env.out << parser.help();
    return kExitClean;
  }
  if (!parsed.count("paths")) return usage_error(env, "check needs at least one file (see mblint check --help)");
  std::string format = parsed["format"].as<std::string>();
  if (format != "text" && format != "json") return usage_error(env, fmt::format("unknown --format '{}'", format));
  auto fail_on = parse_severity(parsed["fail-on"].as<std::string>());
  if (!fail_on) return usage_error(env, "--fail-on takes error, warning or note");
  std::string color = parsed["color"].as<std::string>();
  if (color != "auto" && color != "always" && color != "never") {
    return usage_error(env, "--color takes auto, always or never");
  }

  SourceSet sources;
  std::vector<std::string> full_args = {"check"};
  full_args.insert(full_args.end(), args.begin(), args.end());
  CommandLine line = add_command_line(sources, full_args);
  LintOptions options;
  options.paths = parsed["paths"].as<std::vector<std::string>>();
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
    return usage_error(env, fmt::format("unknown GPU type '{}' (known: a100-40, a100-80, h100, h200, b200, b300, "
                                        "gb200, gb300, vr200, r100)",
                                        options.gpu->text));
  }
  for (const auto* version : {&options.bridge_version, &options.megatron_core_version}) {
    if (*version && !parse_version(version->value().text)) {
      return usage_error(env, fmt::format("'{}' is not a version (expected e.g. 0.6 or 0.16.0)", version->value().text));
    }
  }

  LintResult result = run_lint(sources, options, rules);
  Summary summary = summarize(result.diagnostics, result.files_checked);
  if (format == "json") {
    render_json(env.out, sources, result.diagnostics, summary);
  } else {
    render_text(env.out, sources, result.diagnostics, summary, use_color(color, env));
  }
  bool failing = std::any_of(result.diagnostics.begin(), result.diagnostics.end(),
                             [&](const Diagnostic& d) { return d.severity >= *fail_on; });
  return failing ? kExitFindings : kExitClean;
}

void print_example(std::ostream& out, const RuleExample& example);

// The rules reference (rules/README.md is this output; a test keeps it current).
void print_rules_markdown(std::ostream& out, RuleSet rules) {
  out << "# mblint rules\n\n"
         "Generated by `mblint rules --format markdown` from the rules' metadata; do not edit.\n"
         "Every rule can be referred to by name or code (`mblint explain MB401`).\n\n"
         "| code | name | severity | summary |\n|---|---|---|---|\n";
  for (const RuleInfo* rule : rules) {
    out << fmt::format("| {} | [{}](#{}) | {} | {} |\n", rule->code, rule->name, rule->name,
                       severity_name(rule->severity), rule->summary);
  }
  for (const RuleInfo* rule : rules) {
    out << fmt::format("\n## {}\n\n`{}` · {} · {}\n\n{}\n", rule->name, rule->code, severity_name(rule->severity),
                       rule->summary, rule->doc);
    if (!rule->checks.empty()) out << fmt::format("\nUpstream checks covered: {}.\n", rule->checks);
    out << "\nBad:\n\n";
    print_example(out, rule->bad);
    out << "\nGood:\n\n";
    print_example(out, rule->good);
  }
  out << "\n## Upstream checks mblint does not make\n\n"
         "Ids refer to the tables of the reference notes: MC = Megatron-Core / Megatron-LM checks, BR = "
         "Megatron Bridge `validate()` / `finalize()`, PS = the parallelism-strategies pitfalls.\n\n"
         "| id | check | why it is not decided from the files |\n|---|---|---|\n";
  for (const UncheckedRow& row : unchecked_rows()) {
    out << fmt::format("| {} | {} | {} |\n", row.id, row.check, row.reason);
  }
}

int run_rules(const std::vector<std::string>& args, RuleSet rules, const CliEnvironment& env) {
  std::string format = "text";
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].rfind("--format=", 0) == 0) format = args[i].substr(9);
    if (args[i] == "--format" && i + 1 < args.size()) format = args[i + 1];
  }
  if (format == "markdown") {
    print_rules_markdown(env.out, rules);
    return kExitClean;
  }
  if (format != "text" && format != "json") return usage_error(env, "rules --format takes text, json or markdown");
  if (format == "json") {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const RuleInfo* rule : rules) {
      list.push_back({{"code", rule->code},
                      {"name", rule->name},
                      {"severity", severity_name(rule->severity)},
                      {"summary", rule->summary}});
    }
    env.out << list.dump(2) << '\n';
    return kExitClean;
  }
  for (const RuleInfo* rule : rules) {
    env.out << fmt::format("{:<7} {:<8} {:<38} {}\n", rule->code, severity_name(rule->severity), rule->name,
                           rule->summary);
  }
  return kExitClean;
}

void print_example(std::ostream& out, const RuleExample& example) {
  out << "```\n$ mblint check " << example.args << "\n```\n";
  out << "`" << example.filename << "`:\n```\n" << example.content;
  if (!example.content.empty() && example.content.back() != '\n') out << '\n';
  out << "```\n";
}

int run_explain(const std::vector<std::string>& args, RuleSet rules, const CliEnvironment& env) {
  if (args.empty()) return usage_error(env, "explain needs a rule name or code (see mblint rules)");
  const RuleInfo* rule = find_rule(rules, args[0]);
  if (!rule) return usage_error(env, fmt::format("no rule named '{}' (see mblint rules)", args[0]));
  env.out << fmt::format("# {} ({}, {})\n\n{}\n\n{}\n", rule->name, rule->code, severity_name(rule->severity),
                         rule->summary, rule->doc);
  if (!rule->bad.content.empty()) {
    env.out << "\n## Bad\n\n";
    print_example(env.out, rule->bad);
  }
  if (!rule->good.content.empty()) {
    env.out << "\n## Good\n\n";
    print_example(env.out, rule->good);
  }
  return kExitClean;
}

}  // namespace

int run_cli(const std::vector<std::string>& args, RuleSet rules, const CliEnvironment& env) {
  if (args.empty()) {
    env.err << kUsage;
    return kExitUsage;
  }
  const std::string& command = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "check") return run_check(rest, rules, env);
  if (command == "rules") return run_rules(rest, rules, env);
  if (command == "explain") return run_explain(rest, rules, env);
  if (command == "version" || command == "--version") {
    env.out << "mblint " << kVersion << " (Megatron Bridge " << to_string(kNewestBridge) << ", Megatron-Core "
            << to_string(kNewestMegatronCore) << " by default)\n";
    return kExitClean;
  }
  if (command == "help" || command == "-h" || command == "--help") {
    env.out << kUsage;
    return kExitClean;
  }
  env.err << fmt::format("mblint: unknown command '{}'\n\n{}", command, kUsage);
  return kExitUsage;
}

}  // namespace mblint
