#include "lint/base/input_rules.h"
#include "lint/resolve/project_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "lint/base/file_reader.h"
#include "lint/base/file_walk.h"
#include "lint/model/schema.h"
#include "lint/resolve/job_builder.h"

namespace fs = std::filesystem;

namespace mblint {

namespace {

constexpr int kNoConfig = -1;

fs::path absolute_path(const fs::path& path, const fs::path& base_dir) {
  return (path.is_absolute() ? path : base_dir / path).lexically_normal();
}

// Relative to the current directory when under it, as the job builder shows
// the files it follows.
std::string display_path(const fs::path& path, const fs::path& base_dir) {
  fs::path relative = path.lexically_normal().lexically_relative(base_dir.lexically_normal());
  if (!relative.empty() && relative.native().rfind("..", 0) != 0) return relative.string();
  return path.lexically_normal().string();
}

bool is_yaml_name(const fs::path& path) {
  std::string ext = path.extension().string();
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

// Which `.mblint.yaml` governs each directory, each config loaded once.
struct Configs {
  SourceSet& sources;
  const LintOptions& options;
  const RuleNames& rules;
  ProjectBuild& build;
  // Keyed by path strings: comparing std::filesystem::paths splits them into
  // components each time, and a tree of thousands of files asks often.
  std::unordered_map<std::string, int> by_dir;
  std::unordered_map<std::string, int> by_file;
  int forced = kNoConfig;  // --config FILE

  int load(const fs::path& path, Span requested_at) {
    const fs::path& key = canonical_or_same(sources.canonical, path);
    if (auto it = by_file.find(key.native()); it != by_file.end()) return it->second;
    auto config = std::make_unique<ProjectConfig>(load_project_config(
        sources, absolute_path(path, options.base_dir),
        display_path(absolute_path(path, options.base_dir), options.base_dir), requested_at, rules, build.problems,
        &options.overlay));
    build.configs.push_back(std::move(config));
    int index = static_cast<int>(build.configs.size() - 1);
    by_file[key.native()] = index;
    return index;
  }

  // The nearest .mblint.yaml (find_project_config), each directory on the
  // way up asked once: a tree of thousands of files shares its parents.
  int for_dir(const fs::path& dir) {
    if (options.no_project_config) return kNoConfig;
    if (options.project_config) return forced;
    if (auto it = by_dir.find(dir.native()); it != by_dir.end()) return it->second;
    fs::path at = dir.lexically_normal();
    int index = kNoConfig;
    if (std::optional<fs::path> found = project_config_in(at, &options.overlay)) {
      index = load(*found, Span{});
    } else if (at.has_parent_path() && at.parent_path() != at) {
      index = for_dir(at.parent_path());
    }
    by_dir[dir.native()] = index;
    return index;
  }

  const ProjectConfig* get(int index) const { return index == kNoConfig ? nullptr : build.configs[index].get(); }

  bool excluded(const fs::path& path) {
    const ProjectConfig* config = get(for_dir(path.parent_path()));
    return config && is_excluded(*config, path);
  }
};

struct Input {
  fs::path path;        // absolute
  std::string display;  // as named on the command line, or relative to the cwd
  bool walked = false;  // found by a directory walk (not named)
  int config = kNoConfig;
};

// A directory of a revision's files (lint/base/file_reader.h, sealed_key):
// the walk of walk_directory over the overlay's paths, which are canonical;
// the files come back under `dir` as named. The overlay's order (component by
// component) is the walk's depth-first byte order.
std::vector<fs::path> walk_overlay(const fs::path& dir, const std::map<fs::path, std::string>& overlay,
                                   const std::function<bool(const fs::path&)>& skip) {
  std::vector<fs::path> out;
  std::error_code error;
  fs::path root = fs::weakly_canonical(dir, error);
  if (error) root = dir.lexically_normal();
  for (auto it = overlay.lower_bound(root); it != overlay.end(); ++it) {
    fs::path relative = it->first.lexically_relative(root);
    if (relative.empty() || *relative.begin() == "..") break;  // past the directory
    if (it->first.filename().empty() || !is_walked_name(it->first)) continue;  // a sealed key, a name never walked
    fs::path at = dir.lexically_normal();
    bool kept = true;
    for (const fs::path& part : relative) {
      at /= part;
      kept = kept && !is_hidden_name(part) && !skip(at);
    }
    if (kept) out.push_back(at);
  }
  return out;
}

bool overlay_directory(const fs::path& path, const std::map<fs::path, std::string>& overlay) {
  std::error_code error;
  fs::path dir = fs::weakly_canonical(path, error);
  auto it = overlay.lower_bound(dir / "");
  if (it == overlay.end()) return false;
  fs::path relative = it->first.lexically_relative(dir);
  return !relative.empty() && *relative.begin() != "..";
}

std::vector<Input> expand_paths(const LintOptions& options, Configs& configs) {
  std::vector<Input> inputs;
  std::unordered_set<std::string> seen;  // canonical paths
  auto add = [&](Input input) {
    if (!seen.insert(canonical_or_same(configs.sources.canonical, input.path).native()).second) return;  // a file named twice is read once
    input.config = configs.for_dir(input.path.parent_path());
    inputs.push_back(std::move(input));
  };
  for (const std::string& arg : options.paths) {
    fs::path path = absolute_path(arg, options.base_dir);
    std::error_code error;
    fs::file_status status = fs::status(path, error);
    bool sealed = sealing_dir(&options.overlay, path).has_value();
    if (sealed ? !overlay_directory(path, options.overlay) : !fs::is_directory(status)) {
      // A missing path stays: the job builder reports it where it was named.
      bool exists = sealed ? source_file_exists(path, &options.overlay) : fs::exists(status);
      if (exists && configs.excluded(path)) continue;
      add(Input{path, arg, false});
      continue;
    }
    auto excluded = [&](const fs::path& p) { return configs.excluded(p); };
    for (const fs::path& file : sealed ? walk_overlay(path, options.overlay, excluded) : walk_directory(path, excluded)) {
      add(Input{file, display_path(file, options.base_dir), true});
    }
  }
  return inputs;
}

// A walked file that is no config at all (a workflow, a compose file, an
// install script without a training launch) stays silent; a YAML that does
// not parse but names a config section is still reported.
bool names_config_section(const std::string& text) {
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + at, end - at);
    size_t colon = line.find(':');
    if (colon != std::string_view::npos && colon > 0 && line[0] != ' ' && line[0] != '#') {
      std::string_view key = line.substr(0, colon);
      if ((is_config_section(key) && key != "env_vars") || key == "trainer" || key == "MODEL_ARGS") return true;
    }
    at = end + 1;
  }
  return false;
}

void silence_non_config(const SourceSet& sources, Job& job) {
  bool unlaunched_script = job.kind == InputKind::LaunchScript && job.entry == EntryPoint::None;
  // A YAML that does not parse cannot be classified: its text decides.
  bool unparsed = std::any_of(job.problems.begin(), job.problems.end(),
                              [](const Diagnostic& d) { return d.rule == "yaml-syntax"; });
  bool other_yaml =
      job.kind == InputKind::NotAConfig && !(unparsed && names_config_section(sources.files[job.primary].text));
  if (unlaunched_script || other_yaml) job.problems.clear();
}

struct Builder {
  SourceSet& sources;
  const LintOptions& options;
  Configs& configs;
  ProjectBuild& build;
  std::unordered_set<std::string> walked;      // canonical paths of walked files
  std::unordered_set<std::string> referenced;  // canonical paths of YAML files a built script read
  const ProjectJobSink& each;

  LintOptions options_for(int config) const {
    const ProjectConfig* project = configs.get(config);
    return project ? options_with_config(options, *project) : options;
  }

  // Build `unit` and keep its jobs (or hand each to `each`); returns how many
  // named files it read.
  size_t run(LintOptions unit, int config) {
    const ProjectConfig* project = configs.get(config);
    BuildResult built = build_jobs(sources, unit, [&](Job& job) {
      const fs::path& primary = canonical_or_same(sources.canonical, absolute_path(sources.files[job.primary].path, options.base_dir));
      if (walked.count(primary.native())) silence_non_config(sources, job);
      for (FileId file : job.files) {
        if (file != job.primary)
          referenced.insert(canonical_or_same(sources.canonical, absolute_path(sources.files[file].path, options.base_dir)).native());
      }
      if (project) apply_config_cluster(*project, options, job);
      if (each) {
        each(job, project, unit.thresholds);
        return;
      }
      build.jobs.push_back(std::move(job));
      build.job_configs.push_back(project);
      build.job_thresholds.push_back(unit.thresholds);
    });
    for (Diagnostic& d : built.problems) build.problems.push_back(std::move(d));
    return built.files_checked;
  }
};

// A context `launch:` whose script runs no --config-file entry point: the
// matched YAML could only be linted alone.
void report_unused_launch(ProjectBuild& build, const ContextEntry& entry) {
  // The project file is valid; only the entry does less than it seems to.
  build.problems.push_back(demoted(
      input_finding(input_rule::kProjectConfig,
                    fmt::format("'{}' launches no entry point that takes --config-file: the files this context "
                                "entry matches are linted alone",
                                entry.launch->text),
                    entry.launch->where,
                    "name a script that passes the YAML as --config-file, or give the entry a recipe: and a cluster"),
      Severity::Warning));
}

struct Group {
  std::vector<const Input*> scripts;
  std::vector<const Input*> yamls;
};

void build_yaml_units(Builder& builder, int config, const std::vector<const Input*>& yamls) {
  const ProjectConfig* project = builder.configs.get(config);
  LintOptions base = builder.options_for(config);
  std::vector<std::string> plain;
  std::map<const ContextEntry*, std::vector<std::string>> by_context;
  for (const Input* input : yamls) {
    if (builder.referenced.count(canonical_or_same(builder.sources.canonical, input->path).native())) {
      ++builder.build.files_checked;  // linted with the script that launches it
      continue;
    }
    const ContextEntry* entry = project ? find_context(*project, input->path) : nullptr;
    if (entry && entry->launch) {
      LintOptions unit = options_with_context(base, *entry);
      unit.paths = {display_path(entry->launch_path, builder.options.base_dir), input->display};
      unit.launch_config_file = canonical_or_same(builder.sources.canonical, input->path);
      builder.run(std::move(unit), config);
      ++builder.build.files_checked;
      if (!builder.referenced.count(canonical_or_same(builder.sources.canonical, input->path).native())) report_unused_launch(builder.build, *entry);
    } else if (entry) {
      by_context[entry].push_back(input->display);
    } else {
      plain.push_back(input->display);
    }
  }
  if (!plain.empty()) {
    LintOptions unit = base;
    unit.paths = std::move(plain);
    builder.build.files_checked += builder.run(std::move(unit), config);
  }
  for (auto& [entry, paths] : by_context) {
    LintOptions unit = options_with_context(base, *entry);
    unit.paths = std::move(paths);
    builder.build.files_checked += builder.run(std::move(unit), config);
  }
}

// No file but a recipe (`estimate --recipe NAME`): the job mblint's own command
// line describes, as if an empty override file were applied to the recipe,
// under the .mblint.yaml of the working directory.
ProjectBuild build_recipe_job(SourceSet& sources, const LintOptions& options, Configs& configs, ProjectBuild& build,
                              const ProjectJobSink& each) {
  std::error_code error;
  fs::path dir = options.base_dir.empty() ? fs::current_path(error) : options.base_dir;
  int config = error ? kNoConfig : configs.for_dir(dir);
  const ProjectConfig* project = configs.get(config);
  LintOptions unit = project ? options_with_config(options, *project) : options;
  Job job = job_from_command_line(sources, unit);
  if (project) apply_config_cluster(*project, options, job);
  if (each) {
    each(job, project, unit.thresholds);
  } else {
    build.jobs.push_back(std::move(job));
    build.job_configs.push_back(project);
    build.job_thresholds.push_back(unit.thresholds);
  }
  return std::move(build);
}

}  // namespace

ProjectBuild build_project(SourceSet& sources, const LintOptions& options, const RuleNames& rules,
                           const ProjectJobSink& each) {
  ProjectBuild build;
  Configs configs{sources, options, rules, build, {}, {}, kNoConfig};
  if (options.project_config && !options.no_project_config) {
    configs.forced = configs.load(options.project_config->text, options.project_config->span);
  }
  if (options.paths.empty() && options.recipe) return build_recipe_job(sources, options, configs, build, each);
  std::vector<Input> inputs = expand_paths(options, configs);
  // Read every input once in walk order: the builds below read them again
  // and get the same ids (add_source), so findings come out in path order.
  for (const Input& input : inputs) {
    (void)read_source_file(sources, input.path, input.display, Span{}, kMaxInputBytes, &options.overlay);
  }
  Builder builder{sources, options, configs, build, {}, {}, each};
  std::map<int, Group> groups;
  for (const Input& input : inputs) {
    if (input.walked) builder.walked.insert(canonical_or_same(sources.canonical, input.path).native());
    Group& group = groups[input.config];
    (is_yaml_name(input.path) ? group.yamls : group.scripts).push_back(&input);
  }
  // Scripts first: the YAML files they read are then known.
  for (auto& [config, group] : groups) {
    if (group.scripts.empty()) continue;
    LintOptions unit = builder.options_for(config);
    unit.paths.clear();
    for (const Input* input : group.scripts) unit.paths.push_back(input->display);
    build.files_checked += builder.run(std::move(unit), config);
  }
  for (auto& [config, group] : groups) build_yaml_units(builder, config, group.yamls);
  return build;
}

}  // namespace mblint
