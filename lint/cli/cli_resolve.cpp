// `mblint resolve PATH... [job options]`: each training job as it will run,
// every setting with its effective value and where it came from, the derived
// sizes, and what mblint could not resolve (lint/report/resolved_settings.h). The jobs are
// built exactly as `check` builds them.
#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lint/cli/cli.h"
#include "lint/command_line/command_line.h"
#include "lint/report/render.h"
#include "lint/report/resolved_settings.h"
#include "lint/report/value_json.h"
#include "lint/run/lint.h"

namespace mblint {

namespace {

using Json = nlohmann::ordered_json;

cxxopts::Options resolve_options() {
  cxxopts::Options options("mblint resolve",
                           "Print each training job as it will run: every setting with its effective value and "
                           "where it came from, and the derived sizes.");
  options.custom_help("[options]");
  options.positional_help("PATH...");
  add_job_options(options);
  options.add_options("output")
      ("format", "output format: text or json", cxxopts::value<std::string>()->default_value("text"))
      ("h,help", "show this help")
      ("paths", "files and directories to resolve", cxxopts::value<std::vector<std::string>>());
  options.parse_positional({"paths"});
  return options;
}

Json optional_json(const std::optional<int64_t>& value) { return value ? Json(*value) : Json(nullptr); }
Json text_or_null(const std::string& text) { return text.empty() ? Json(nullptr) : Json(text); }

// file, line and column of a span (null where it was written nowhere).
void add_location(Json& j, const SourceSet& sources, Span where, bool column) {
  if (!where.valid()) {
    j["file"] = nullptr;
    j["line"] = nullptr;
    if (column) j["column"] = nullptr;
    return;
  }
  const SourceFile& file = sources.files[where.file];
  LineCol at = line_col(file, where.begin);
  j["file"] = file.path;
  j["line"] = at.line;
  if (column) j["column"] = at.column;
}

Json job_json(const ResolvedJob& job, const SourceSet& sources) {
  Json j;
  add_location(j, sources, job.where, false);
  j["launcher"] = text_or_null(job.launcher);
  j["entry"] = job.entry;
  j["dialect"] = job.dialect;
  j["recipe"] = text_or_null(job.recipe);
  j["nodes"] = optional_json(job.nodes);
  j["gpus_per_node"] = optional_json(job.gpus_per_node);
  j["world_size"] = optional_json(job.world_size);
  Json settings = Json::object();
  for (const ResolvedSetting& s : job.settings) {
    Json setting;
    setting["value"] = value_json(s.value);
    add_location(setting, sources, s.where, true);
    setting["layer"] = s.layer;
    settings[s.key] = std::move(setting);
  }
  j["settings"] = std::move(settings);
  Json derived = Json::object();
  for (const ResolvedSize& size : job.derived) {
    derived[size.name] = size.real ? Json(*size.real) : optional_json(size.integer);
  }
  j["derived"] = std::move(derived);
  Json unresolved = Json::array();
  for (const ResolvedUnknown& u : job.unresolved) {
    Json entry;
    entry["what"] = u.what;
    entry["why"] = u.why;
    add_location(entry, sources, u.where, false);
    entry["supply"] = text_or_null(u.supply);
    entry["unknown"] = u.unknown;
    unresolved.push_back(std::move(entry));
  }
  j["unresolved"] = std::move(unresolved);
  return j;
}

std::string location_text(const SourceSet& sources, Span where) {
  if (!where.valid()) return "";
  const SourceFile& file = sources.files[where.file];
  LineCol at = line_col(file, where.begin);
  return fmt::format("{}:{}:{}", file.path, at.line, at.column);
}

// A value as the user would write it, cut to fit a table cell.
std::string cell(const ConfigValue& value) {
  constexpr size_t kWidth = 40;
  std::string text = to_display(value);
  for (char& c : text) {
    if (c == '\n' || c == '\t') c = ' ';
  }
  if (text.size() > kWidth) text = text.substr(0, kWidth - 3) + "...";
  return text;
}

std::string origin_text(const SourceSet& sources, const ResolvedSetting& s) {
  std::string where = location_text(sources, s.where);
  std::string layer = s.layer;
  // `$TP` expanded: where TP was set.
  for (Span via : s.via) {
    if (via.valid() && via.file != kNoFile) layer += ", via " + location_text(sources, via);
  }
  std::string text = where.empty() ? layer : fmt::format("{} ({})", where, layer);
  // Defaults and rewrites are written nowhere: say whose they are.
  if ((s.layer == "default" || s.layer == "rewrite" || s.layer == "derived") && !s.origin.empty()) {
    text += ": " + s.origin;
  }
  return text;
}

bool is_allocation(const std::string& key) { return key == "nodes" || key == "gpus_per_node" || key == "world_size"; }

// "model" for model.tensor_model_parallel_size.
std::string section_of(const std::string& key) {
  if (is_allocation(key)) return "allocation";
  size_t dot = key.find('.');
  return dot == std::string::npos ? "top level" : key.substr(0, dot);
}

void print_settings(std::ostream& out, const SourceSet& sources, const ResolvedJob& job) {
  size_t key_width = 7;
  size_t value_width = 5;
  for (const ResolvedSetting& s : job.settings) {
    key_width = std::max(key_width, std::min<size_t>(s.key.size(), 56));
    value_width = std::max(value_width, cell(s.value).size());
  }
  out << fmt::format("  {:<{}}  {:<{}}  {}\n", "setting", key_width, "value", value_width, "from");
  // The allocation first, then the sections in alphabetical order.
  std::vector<const ResolvedSetting*> ordered;
  for (const ResolvedSetting& s : job.settings) ordered.push_back(&s);
  std::stable_sort(ordered.begin(), ordered.end(), [](const ResolvedSetting* a, const ResolvedSetting* b) {
    auto rank = [](const std::string& key) { return is_allocation(key) ? 0 : key.find('.') == std::string::npos ? 1 : 2; };
    return rank(a->key) < rank(b->key);
  });
  std::string section;
  for (const ResolvedSetting* s : ordered) {
    if (section_of(s->key) != section) {
      section = section_of(s->key);
      out << fmt::format("  [{}]\n", section);
    }
    out << fmt::format("  {:<{}}  {:<{}}  {}\n", s->key, key_width, cell(s->value), value_width,
                       origin_text(sources, *s));
  }
}

void print_derived(std::ostream& out, const ResolvedJob& job) {
  out << "  [derived]\n";
  for (const ResolvedSize& size : job.derived) {
    std::string value = size.real ? fmt::format("{:.3f}", *size.real)
                        : size.integer ? std::to_string(*size.integer)
                                       : std::string("unknown");
    out << fmt::format("  {:<26}  {}\n", size.name, value);
  }
}

void print_unresolved(std::ostream& out, const SourceSet& sources, const ResolvedJob& job) {
  if (job.unresolved.empty()) {
    out << "  every setting the checks need is known\n";
    return;
  }
  out << "  [unresolved]\n";
  for (const ResolvedUnknown& u : job.unresolved) {
    std::string where = location_text(sources, u.where);
    out << fmt::format("  {}: {}{}\n", u.what, u.why, where.empty() ? "" : fmt::format(" ({})", where));
    if (!u.unknown.empty()) out << fmt::format("    unknown: {}\n", fmt::join(u.unknown, ", "));
    if (!u.supply.empty()) out << fmt::format("    supply: {}\n", u.supply);
  }
}

std::string count_text(const std::optional<int64_t>& value) { return value ? std::to_string(*value) : "?"; }

void print_job(std::ostream& out, const SourceSet& sources, const ResolvedJob& job, size_t index) {
  out << fmt::format("job {}: {}\n", index, location_text(sources, job.where));
  out << fmt::format("  launcher {}, entry {}, dialect {}, recipe {}\n", job.launcher.empty() ? "none" : job.launcher,
                     job.entry, job.dialect, job.recipe.empty() ? "none" : job.recipe);
  out << fmt::format("  {} node(s) x {} GPU(s) per node = {} GPU(s)\n\n", count_text(job.nodes),
                     count_text(job.gpus_per_node), count_text(job.world_size));
  print_settings(out, sources, job);
  print_derived(out, job);
  print_unresolved(out, sources, job);
}

// The notes about the inputs themselves: a file that could not be read, a
// recipe not in the catalog, a script that launches nothing mblint reads.
RuleSelection input_problems() {
  RuleSelection selection;
  selection.selected = {"no-training-job"};  // kInputRules are always kept
  selection.ignored = {"unchecked-job"};     // the unresolved list says it
  return selection;
}

}  // namespace

int run_resolve(const std::vector<std::string>& args, RuleSet rules, const CliEnvironment& env) {
  cxxopts::Options parser = resolve_options();
  cxxopts::ParseResult parsed;
  // The words after `--` are the script's own arguments (read_script_args).
  std::vector<std::string> own(args.begin(), std::find(args.begin(), args.end(), "--"));
  if (auto stop = parse_command(parser, own, parsed, env)) return *stop;
  std::string format = parsed["format"].as<std::string>();
  if (format != "text" && format != "json") return usage_error(env, "resolve --format takes text or json");
  if (!parsed.count("paths")) return usage_error(env, "resolve needs at least one file (see mblint resolve --help)");

  SourceSet sources;
  auto [full_args, line] = add_command_words(sources, "resolve", args);
  LintOptions options;
  options.paths = parsed["paths"].as<std::vector<std::string>>();
  if (auto stop = read_job_options(full_args, line, env, options)) return *stop;
  options.keep_jobs = true;
  options.selection = input_problems();
  LintResult result = run_lint_unfolded(sources, options, rules);

  std::vector<ResolvedJob> jobs;
  for (size_t i = 0; i < result.jobs.size(); ++i) {
    if (is_resolved_job(result.jobs[i])) jobs.push_back(resolve_job(result.jobs[i], result.derived[i], sources));
  }
  if (format == "json") {
    Json document;
    document["version"] = 1;
    Json list = Json::array();
    for (const ResolvedJob& job : jobs) list.push_back(job_json(job, sources));
    document["jobs"] = std::move(list);
    env.out << document.dump(2) << '\n';
    render_text_diagnostics(env.err, sources, result.diagnostics, false);
  } else {
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (i) env.out << '\n';
      print_job(env.out, sources, jobs[i], i + 1);
    }
    if (!jobs.empty() && !result.diagnostics.empty()) env.out << '\n';
    render_text_diagnostics(env.out, sources, result.diagnostics, use_color("auto", env));
    env.out << fmt::format("mblint: {} training job{} in {} file{}\n", jobs.size(), jobs.size() == 1 ? "" : "s",
                           result.files_checked, result.files_checked == 1 ? "" : "s");
  }
  return jobs.empty() ? kExitFindings : kExitClean;
}

}  // namespace mblint
