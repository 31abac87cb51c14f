#include "lint/base/input_rules.h"
#include "lint/resolve/project_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "lint/base/file_reader.h"
#include "lint/base/file_walk.h"
#include "lint/base/version.h"
#include "lint/load/yaml/yaml_loader.h"
#include "lint/model/catalog.h"
#include "lint/model/schema.h"

namespace fs = std::filesystem;

namespace mblint {

namespace {

// What a config reader needs while it walks the tree.
struct Reader {
  const SourceSet& sources;
  const RuleNames& rules;
  std::vector<Diagnostic>& problems;
  ProjectConfig& config;
};

Span key_or_value(const ConfigValue& value) { return value.where.key.valid() ? value.where.key : value.where.value; }

void report(Reader& r, Span where, std::string message, std::string help) {
  r.problems.push_back(input_finding(input_rule::kProjectConfig, std::move(message), where, std::move(help)));
}

std::string kind_name(const ConfigValue& value) {
  switch (value.kind) {
    case ValueKind::Null:
      return "null";
    case ValueKind::Bool:
      return "a boolean";
    case ValueKind::Int:
      return "an integer";
    case ValueKind::Float:
      return "a number";
    case ValueKind::String:
      return "a string";
    case ValueKind::List:
      return "a list";
    case ValueKind::Map:
      return "a mapping";
    case ValueKind::Unknown:
      return "an expression";
  }
  return "a value";
}

std::string closest(std::string_view name, const std::vector<std::string_view>& known) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, name.size() / 3) + 1;
  for (std::string_view candidate : known) {
    size_t distance = edit_distance(name, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = std::string(candidate);
    }
  }
  return best;
}

std::string joined(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::string_view name : names) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

// A mapping whose keys must be among `known`; returns false (reported) when
// `value` is not a mapping.
bool check_map(Reader& r, const ConfigValue& value, std::string_view where,
               const std::vector<std::string_view>& known) {
  if (value.is_null()) return false;  // `cluster:` with nothing under it
  if (!value.is_map()) {
    report(r, value.where.value, fmt::format("{} must be a mapping, not {}", where, kind_name(value)),
           where == "context entry" ? std::string("write - {files: GLOB, launch: SCRIPT}")
                                    : fmt::format("write {}: {{{}: ...}}", where, known.front()));
    return false;
  }
  for (const MapEntry& entry : value.entries) {
    if (std::find(known.begin(), known.end(), entry.key) != known.end()) continue;
    std::string similar = closest(entry.key, known);
    report(r, key_or_value(entry.value),
           fmt::format("unknown key '{}' in {}: mblint ignores it", entry.key, where.empty() ? ".mblint.yaml" : where),
           similar.empty() ? fmt::format("known keys: {}", joined(known)) : fmt::format("did you mean {}?", similar));
  }
  return true;
}

// The text as written: versions and counts keep their spelling ("0.10").
std::string written_text(const Reader& r, const ConfigValue& value) {
  if (value.kind == ValueKind::String) return value.text;
  const Span& span = value.where.value;
  const std::string& text = r.sources.files[span.file].text;
  return text.substr(span.begin, span.end - span.begin);
}

// The span of a string's characters: inside the quotes of "a=1", so that
// an override read from it is located character by character.
Span text_span(const ConfigValue& value) {
  Span span = value.where.value;
  if (value.quoted && span.end - span.begin == value.text.size() + 2)
    return Span{span.file, span.begin + 1, span.end - 1};
  return span;
}

bool is_scalar(const ConfigValue& value) {
  return value.kind == ValueKind::Int || value.kind == ValueKind::Float || value.kind == ValueKind::String ||
         value.kind == ValueKind::Bool;
}

std::optional<CommandLineValue> read_count(Reader& r, const ConfigValue& value, std::string_view name) {
  if (value.kind == ValueKind::Int && value.integer > 0)
    return CommandLineValue{std::to_string(value.integer), value.where.value};
  report(r, value.where.value, fmt::format("{} is {}: expected a positive integer", name, to_display(value)),
         fmt::format("write e.g. {}: 8", name));
  return std::nullopt;
}

std::optional<CommandLineValue> read_gpu(Reader& r, const ConfigValue& value, std::string_view name) {
  if (value.kind == ValueKind::String && find_gpu(value.text)) return CommandLineValue{value.text, text_span(value)};
  report(r, value.where.value, fmt::format("{} is {}, not a GPU type mblint knows", name, to_display(value)),
         fmt::format("known GPU types: {}", gpu_type_names()));
  return std::nullopt;
}

std::optional<CommandLineValue> read_version(Reader& r, const ConfigValue& value, std::string_view name) {
  if (is_scalar(value) && value.kind != ValueKind::Bool) {
    std::string text = written_text(r, value);
    if (text.size() >= 2 && (text.front() == '"' || text.front() == '\'')) text = text.substr(1, text.size() - 2);
    if (parse_version(text)) return CommandLineValue{text, value.where.value};
  }
  report(r, value.where.value, fmt::format("{} is {}, not a version", name, to_display(value)),
         fmt::format("write it quoted, e.g. {}: \"{}\"", name,
                     name.find("bridge") != std::string_view::npos ? "0.6" : "0.16"));
  return std::nullopt;
}

std::optional<LocatedText> read_text(Reader& r, const ConfigValue& value, std::string_view name) {
  if (value.kind == ValueKind::String && !value.text.empty()) return LocatedText{value.text, text_span(value)};
  report(r, value.where.value, fmt::format("{} must be a non-empty string, not {}", name, kind_name(value)),
         "quote globs and paths: \"conf/*.yaml\"");
  return std::nullopt;
}

// A list of strings; a single string is accepted as a list of one.
std::vector<LocatedText> read_text_list(Reader& r, const ConfigValue& value, std::string_view name) {
  std::vector<LocatedText> out;
  if (value.kind == ValueKind::String) {
    if (auto text = read_text(r, value, name)) out.push_back(*text);
    return out;
  }
  if (!value.is_list()) {
    if (!value.is_null()) {
      report(r, value.where.value, fmt::format("{} must be a list of strings, not {}", name, kind_name(value)),
             fmt::format("write {}: [\"...\"]", name));
    }
    return out;
  }
  for (const ConfigValue& item : value.items) {
    if (auto text = read_text(r, item, name)) out.push_back(*text);
  }
  return out;
}

void read_cluster(Reader& r, const ConfigValue& cluster) {
  if (!check_map(r, cluster, "cluster", {"gpu", "gpus_per_node", "nvlink_domain"})) return;
  if (auto* gpu = find_child(cluster, "gpu")) r.config.gpu = read_gpu(r, *gpu, "cluster.gpu");
  if (auto* count = find_child(cluster, "gpus_per_node")) {
    r.config.gpus_per_node = read_count(r, *count, "cluster.gpus_per_node");
  }
  if (auto* domain = find_child(cluster, "nvlink_domain")) {
    r.config.nvlink_domain = read_count(r, *domain, "cluster.nvlink_domain");
  }
}

void read_versions(Reader& r, const ConfigValue& versions) {
  if (!check_map(r, versions, "versions", {"megatron_core", "bridge"})) return;
  if (auto* core = find_child(versions, "megatron_core")) {
    r.config.megatron_core_version = read_version(r, *core, "versions.megatron_core");
  }
  if (auto* bridge = find_child(versions, "bridge"))
    r.config.bridge_version = read_version(r, *bridge, "versions.bridge");
}

// A rule by name or code; reported with the nearest rule name when unknown.
std::optional<std::string> read_rule(Reader& r, const ConfigValue& value, std::string_view name_or_code, Span where) {
  if (const RuleName* rule = find_rule_name(r.rules, name_or_code)) return std::string(rule->name);
  std::vector<std::string_view> names;
  for (const RuleName& rule : r.rules) names.push_back(rule.name);
  std::string similar = closest(name_or_code, names);
  (void)value;
  report(r, where, fmt::format("unknown rule '{}' in .mblint.yaml", name_or_code),
         similar.empty() ? "`mblint rules` lists every rule name and code" : fmt::format("did you mean {}?", similar));
  return std::nullopt;
}

void read_rules(Reader& r, const ConfigValue& rules) {
  if (!check_map(r, rules, "rules", {"disable", "severity"})) return;
  if (auto* disable = find_child(rules, "disable")) {
    for (const LocatedText& name : read_text_list(r, *disable, "rules.disable")) {
      if (auto rule = read_rule(r, *disable, name.text, name.where)) r.config.disabled[*rule] = name.where;
    }
  }
  const ConfigValue* severity = find_child(rules, "severity");
  if (!severity || severity->is_null()) return;
  if (!severity->is_map()) {
    report(r, severity->where.value, fmt::format("rules.severity must be a mapping, not {}", kind_name(*severity)),
           "write rules.severity: {RULE: error}");
    return;
  }
  for (const MapEntry& entry : severity->entries) {
    auto rule = read_rule(r, entry.value, entry.key, key_or_value(entry.value));
    std::optional<Severity> level;
    if (entry.value.kind == ValueKind::String) {
      if (entry.value.text == "error") level = Severity::Error;
      if (entry.value.text == "warning") level = Severity::Warning;
      if (entry.value.text == "note") level = Severity::Note;
    }
    if (!level) {
      report(r, entry.value.where.value,
             fmt::format("the severity of '{}' is {}: expected error, warning or note", entry.key,
                         to_display(entry.value)),
             "write error, warning or note (to turn a rule off, list it under rules.disable)");
      continue;
    }
    if (rule) r.config.severity[*rule] = RuleSeverity{*level, entry.value.where.value};
  }
}

std::optional<LocatedNumber> read_fraction(Reader& r, const ConfigValue& value, std::string_view name) {
  auto number = as_number(&value);
  if (number && value.kind != ValueKind::Bool && *number > 0 && *number <= 1 && std::isfinite(*number)) {
    return LocatedNumber{*number, value.where.value};
  }
  bool memory = name.find("memory") != std::string_view::npos;
  report(r, value.where.value,
         fmt::format("{} is {}: expected a fraction above 0 and at most 1", name, to_display(value)),
         memory ? fmt::format("write e.g. {}: 0.90 (the share of the GPU's memory the estimate may use at the high end of its measured error)", name)
                : fmt::format("write e.g. {}: 0.25 (the share of each step the pipeline may idle, "
                              "(PP-1)/(VPP*m + PP-1))",
                              name));
  return std::nullopt;
}

void read_thresholds(Reader& r, const ConfigValue& thresholds) {
  if (!check_map(r, thresholds, "thresholds", {"pipeline_bubble", "memory_headroom"})) return;
  if (auto* bubble = find_child(thresholds, "pipeline_bubble")) {
    r.config.pipeline_bubble = read_fraction(r, *bubble, "thresholds.pipeline_bubble");
  }
  if (auto* headroom = find_child(thresholds, "memory_headroom")) {
    r.config.memory_headroom = read_fraction(r, *headroom, "thresholds.memory_headroom");
  }
}

std::optional<LocatedNumber> read_non_negative(Reader& r, const ConfigValue& value, std::string_view name) {
  auto number = as_number(&value);
  if (number && value.kind != ValueKind::Bool && *number >= 0 && std::isfinite(*number)) {
    return LocatedNumber{*number, value.where.value};
  }
  report(r, value.where.value, fmt::format("{} is {}: expected a number of at least 0", name, to_display(value)),
         fmt::format("write e.g. {}: 5", name));
  return std::nullopt;
}

void read_diff_limits(Reader& r, const ConfigValue& diff) {
  if (!check_map(r, diff, "diff",
                 {"max_peak_memory_increase_gib", "max_memory_fraction", "max_step_time_increase_percent",
                  "max_throughput_drop_percent", "max_bubble_increase"})) {
    return;
  }
  DiffThresholds& out = r.config.diff;
  if (auto* v = find_child(diff, "max_peak_memory_increase_gib"))
    out.max_peak_memory_increase_gib = read_non_negative(r, *v, "diff.max_peak_memory_increase_gib");
  if (auto* v = find_child(diff, "max_memory_fraction"))
    out.max_memory_fraction = read_fraction(r, *v, "diff.max_memory_fraction");
  if (auto* v = find_child(diff, "max_step_time_increase_percent"))
    out.max_step_time_increase_percent = read_non_negative(r, *v, "diff.max_step_time_increase_percent");
  if (auto* v = find_child(diff, "max_throughput_drop_percent"))
    out.max_throughput_drop_percent = read_non_negative(r, *v, "diff.max_throughput_drop_percent");
  if (auto* v = find_child(diff, "max_bubble_increase"))
    out.max_bubble_increase = read_non_negative(r, *v, "diff.max_bubble_increase");
}

void read_diff(Reader& r, const ConfigValue& diff) {
  size_t problems = r.problems.size();
  read_diff_limits(r, diff);
  r.config.diff.valid = r.problems.size() == problems;
}

std::optional<ContextEntry> read_context_entry(Reader& r, const ConfigValue& item) {
  if (!check_map(r, item, "context entry", {"files", "launch", "recipe", "nodes", "gpus_per_node", "gpu", "set"})) {
    if (item.is_null()) report(r, item.where.value, "empty context entry", "write - {files: GLOB, launch: SCRIPT}");
    return std::nullopt;
  }
  ContextEntry entry;
  const ConfigValue* files = find_child(item, "files");
  if (!files) {
    report(r, item.where.value, "context entry without files: it applies to no file",
           "add files: \"conf/*.yaml\" (a glob relative to the directory of the project config)");
    return std::nullopt;
  }
  auto glob = read_text(r, *files, "context files");
  if (!glob) return std::nullopt;
  entry.files = *glob;
  if (auto* launch = find_child(item, "launch")) {
    entry.launch = read_text(r, *launch, "context launch");
    if (entry.launch) {
      entry.launch_path = (r.config.dir / entry.launch->text).lexically_normal();
      std::error_code error;
      std::string ext = entry.launch_path.extension().string();
      if (ext == ".yaml" || ext == ".yml" || ext == ".json") {
        report(r, entry.launch->where,
               fmt::format("launch '{}' is a YAML file, not a launch script", entry.launch->text),
               "name the script that runs the matched files with --config-file; a YAML gets a recipe with recipe:");
        entry.launch.reset();
      } else if (!fs::is_regular_file(entry.launch_path, error)) {
        report(r, entry.launch->where, fmt::format("launch script '{}' does not exist", entry.launch->text),
               "paths in the project config are relative to the directory that holds it");
        entry.launch.reset();
      }
    }
  }
  if (auto* recipe = find_child(item, "recipe")) {
    if (auto text = read_text(r, *recipe, "context recipe")) entry.recipe = CommandLineValue{text->text, text->where};
  }
  if (auto* nodes = find_child(item, "nodes")) entry.nodes = read_count(r, *nodes, "context nodes");
  if (auto* count = find_child(item, "gpus_per_node"))
    entry.gpus_per_node = read_count(r, *count, "context gpus_per_node");
  if (auto* gpu = find_child(item, "gpu")) entry.gpu = read_gpu(r, *gpu, "context gpu");
  if (auto* sets = find_child(item, "set")) {
    for (const LocatedText& set : read_text_list(r, *sets, "context set")) {
      entry.sets.push_back(CommandLineValue{set.text, set.where});
    }
  }
  return entry;
}

void read_context(Reader& r, const ConfigValue& context) {
  if (context.is_null()) return;
  if (!context.is_list()) {
    report(r, context.where.value, fmt::format("context must be a list, not {}", kind_name(context)),
           "write context: [{files: GLOB, launch: SCRIPT}]");
    return;
  }
  for (const ConfigValue& item : context.items) {
    if (auto entry = read_context_entry(r, item)) r.config.context.push_back(std::move(*entry));
  }
}

void read_require_complete(Reader& r, const ConfigValue& value) {
  if (value.kind == ValueKind::Bool) {
    r.config.require_complete = value.boolean;
    return;
  }
  report(r, value.where.value, fmt::format("require_complete is {}: expected true or false", to_display(value)),
         "write require_complete: true");
}

void read_config(Reader& r, const ConfigValue& root) {
  if (root.is_null()) return;  // an empty file: every default
  if (!check_map(r, root, "",
                 {"cluster", "versions", "rules", "thresholds", "context", "exclude", "require_complete", "diff"})) {
    return;
  }
  if (auto* complete = find_child(root, "require_complete")) read_require_complete(r, *complete);
  if (auto* cluster = find_child(root, "cluster")) read_cluster(r, *cluster);
  if (auto* versions = find_child(root, "versions")) read_versions(r, *versions);
  if (auto* rules = find_child(root, "rules")) read_rules(r, *rules);
  if (auto* thresholds = find_child(root, "thresholds")) read_thresholds(r, *thresholds);
  if (auto* context = find_child(root, "context")) read_context(r, *context);
  if (auto* exclude = find_child(root, "exclude")) r.config.exclude = read_text_list(r, *exclude, "exclude");
  if (auto* diff = find_child(root, "diff")) read_diff(r, *diff);
}

// `path` relative to the config's directory, '/'-separated; empty when the
// path is outside it.
std::string relative_to(const fs::path& dir, const fs::path& path) {
  fs::path relative = path.lexically_normal().lexically_relative(dir);
  std::string text = relative.generic_string();
  if (text.empty() || text == "." || text.rfind("..", 0) == 0) return "";
  return text;
}

}  // namespace

std::optional<fs::path> project_config_in(const fs::path& dir, const FileOverlay* overlay) {
  fs::path candidate = dir.lexically_normal() / kProjectConfigName;
  if (source_file_exists(candidate, overlay)) return candidate;
  return std::nullopt;
}

std::optional<fs::path> find_project_config(const fs::path& dir) {
  fs::path at = dir.lexically_normal();
  for (int depth = 0; depth < 256; ++depth) {
    if (std::optional<fs::path> found = project_config_in(at)) return found;
    if (!at.has_parent_path() || at.parent_path() == at) break;
    at = at.parent_path();
  }
  return std::nullopt;
}

ProjectConfig load_project_config(SourceSet& sources, const fs::path& path, std::string display, Span requested_at,
                                  const RuleNames& rules, std::vector<Diagnostic>& problems,
                                  const FileOverlay* overlay) {
  ProjectConfig config;
  config.path = path.lexically_normal();
  config.dir = config.path.parent_path();
  ReadResult read = read_source_file(sources, path, std::move(display), requested_at, 1u << 20, overlay);
  if (read.problem) {
    // Found above a checked file, not named: say what it is and how to go on.
    if (!requested_at.valid())
      read.problem->help = "this is the project config found above the checked files: fix it, or pass --no-config";
    problems.push_back(std::move(*read.problem));
    return config;
  }
  config.file = read.file;
  YamlDocument document = load_yaml(sources, read.file, YamlFlavor::Yaml12, Layer::ConfigFile);
  for (Diagnostic& d : document.problems) problems.push_back(std::move(d));
  if (!document.ok) return config;
  Reader reader{sources, rules, problems, config};
  read_config(reader, document.root);
  return config;
}

bool is_excluded(const ProjectConfig& config, const fs::path& path) {
  std::string relative = relative_to(config.dir, path);
  if (relative.empty()) return false;
  return std::any_of(config.exclude.begin(), config.exclude.end(),
                     [&](const LocatedText& pattern) { return excluded_by(pattern.text, relative); });
}

const ContextEntry* find_context(const ProjectConfig& config, const fs::path& path) {
  std::string relative = relative_to(config.dir, path);
  if (relative.empty()) return nullptr;
  for (const ContextEntry& entry : config.context) {
    std::string_view pattern = entry.files.text;
    // A glob without '/' names files at any depth, like exclude.
    bool anywhere = pattern.find('/') == std::string_view::npos;
    std::string_view name = relative;
    if (anywhere && name.rfind('/') != std::string_view::npos) name = name.substr(name.rfind('/') + 1);
    if (glob_match(pattern, name)) return &entry;
  }
  return nullptr;
}

LintOptions options_with_config(const LintOptions& command_line, const ProjectConfig& config) {
  LintOptions options = command_line;
  if (!options.bridge_version) options.bridge_version = config.bridge_version;
  if (!options.megatron_core_version) options.megatron_core_version = config.megatron_core_version;
  if (config.pipeline_bubble) options.thresholds.pipeline_bubble = config.pipeline_bubble->value;
  if (config.memory_headroom) options.thresholds.memory_headroom = config.memory_headroom->value;
  if (config.require_complete) options.thresholds.require_complete = true;
  return options;
}

LintOptions options_with_context(const LintOptions& options, const ContextEntry& entry) {
  LintOptions out = options;
  if (!out.recipe) out.recipe = entry.recipe;
  if (!out.nodes) out.nodes = entry.nodes;
  if (!out.gpus_per_node) out.gpus_per_node = entry.gpus_per_node;
  if (!out.gpu) out.gpu = entry.gpu;
  // The command line's --set come last, so they win.
  out.sets = entry.sets;
  out.sets.insert(out.sets.end(), options.sets.begin(), options.sets.end());
  return out;
}

void apply_config_cluster(const ProjectConfig& config, const LintOptions& command_line, Job& job) {
  auto located = [](const CommandLineValue& value) {
    Provenance where;
    where.layer = Layer::ConfigFile;
    where.value = value.span;
    where.statement = value.span;
    return where;
  };
  // A GPU type named by the job itself (--gres=gpu:h100:8, a context's gpu)
  // stays; a recipe's assumed GPU (it has an origin text) gives way.
  bool job_names_gpu = !job.cluster.gpu.empty() && job.cluster.gpu_where.origin.empty();
  if (config.gpu && !command_line.gpu && !job_names_gpu) {
    if (const GpuType* gpu = find_gpu(config.gpu->text)) {
      job.cluster.gpu = gpu->name;
      job.cluster.gpu_where = located(*config.gpu);
    }
  }
  if (config.gpus_per_node && !command_line.gpus_per_node && !job.cluster.gpus_per_node.value) {
    LocatedInt count;
    count.value = std::stoll(config.gpus_per_node->text);
    count.where = located(*config.gpus_per_node);
    job.cluster.gpus_per_node = count;
  }
}

void apply_rule_settings(const ProjectConfig& config, std::vector<Diagnostic>& diagnostics, size_t first) {
  if (config.disabled.empty() && config.severity.empty()) return;
  auto begin = diagnostics.begin() + static_cast<std::ptrdiff_t>(std::min(first, diagnostics.size()));
  auto kept =
      std::remove_if(begin, diagnostics.end(), [&](const Diagnostic& d) { return config.disabled.count(d.rule) > 0; });
  diagnostics.erase(kept, diagnostics.end());
  for (size_t i = first; i < diagnostics.size(); ++i) {
    auto it = config.severity.find(diagnostics[i].rule);
    if (it != config.severity.end()) diagnostics[i].severity = it->second.severity;
  }
}

}  // namespace mblint
