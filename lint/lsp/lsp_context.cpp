// Which open documents are linted together: a launch script and the override
// YAML it runs, whether the script names the YAML with --config-file or the
// project config's `context` entry names the script for the YAML
// (`- {files: "conf/*.yaml", launch: launch/run.sbatch}`, for a script whose
// `--config-file "$1"` mblint cannot resolve by reading it).
#include <algorithm>

#include "lint/lsp/lsp_server.h"
#include "lint/resolve/project_config.h"

namespace mblint::lsp {

namespace fs = std::filesystem;

namespace {

// The value of the last `--config FILE` / `--config=FILE` among the job options.
std::optional<std::string> config_option(const std::vector<std::string>& args) {
  std::optional<std::string> value;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--config" && i + 1 < args.size()) value = args[i + 1];
    if (args[i].rfind("--config=", 0) == 0) value = args[i].substr(9);
  }
  return value;
}

// The project config that governs `path`, as a lint of it finds it (the
// nearest `.mblint.yaml` above it, unless `mblint lsp` was given --config or
// --no-config).
std::optional<fs::path> project_config_of(const Server& server, const std::string& path) {
  const auto& args = server.job_args;
  if (std::find(args.begin(), args.end(), "--no-config") != args.end()) return std::nullopt;
  if (std::optional<std::string> named = config_option(args)) {
    fs::path file = *named;
    return file.is_absolute() ? file : workspace_base(server, path) / file;
  }
  return find_project_config(fs::path(path).parent_path());
}

bool reads(const Document& reader, const std::string& uri) {
  return reader.snapshot && std::find(reader.snapshot->uris.begin(), reader.snapshot->uris.end(), uri) !=
                                reader.snapshot->uris.end();
}

// Whether the buffer holds what the file on disk holds.
bool saved(const Document& document) {
  std::optional<std::string> text = read_small_file(document.path, document.text.size());
  return text && *text == document.text;
}

}  // namespace

bool is_project_config(const std::string& path) { return fs::path(path).filename() == kProjectConfigName; }

bool under_project_config(const std::string& config_path, const Document& document) {
  std::string dir = fs::path(config_path).parent_path().string() + "/";
  return !document.path.empty() && document.path.rfind(dir, 0) == 0;
}

std::optional<fs::path> context_launch(const Server& server, const std::string& yaml_path) {
  if (yaml_path.empty() || is_script_path(yaml_path) || is_project_config(yaml_path)) return std::nullopt;
  std::optional<fs::path> config_path = project_config_of(server, yaml_path);
  if (!config_path) return std::nullopt;
  // A scratch load: its problems are reported by the lint that reads it.
  SourceSet scratch;
  std::vector<Diagnostic> problems;
  ProjectConfig config = load_project_config(scratch, *config_path, config_path->string(), Span{}, rule_names(server.rules), problems);
  const ContextEntry* entry = find_context(config, yaml_path);
  if (!entry || !entry->launch) return std::nullopt;
  return fs::path(canonical_path(entry->launch_path));
}

std::vector<fs::path> context_yamls(const Server& server, const std::string& script_path) {
  std::vector<fs::path> yamls;
  for (const auto& [uri, document] : server.documents) {
    if (document.path.empty() || is_script_path(document.path)) continue;
    std::optional<fs::path> launch = context_launch(server, document.path);
    if (launch && launch->string() == script_path) yamls.emplace_back(document.path);
  }
  return yamls;
}

bool lints_together(const Server& server, const Document& other, const Document& changed) {
  if (other.path.empty() || changed.path.empty() || other.uri == changed.uri) return false;
  // The project config decides how every file under it is linted; the lint
  // reads it from disk, so only a saved change matters.
  if (is_project_config(changed.path)) {
    return saved(changed) && under_project_config(changed.path, other);
  }
  // The last lint of either read the other.
  if (reads(other, changed.uri) || reads(changed, other.uri)) return true;
  bool changed_script = is_script_path(changed.path);
  bool other_script = is_script_path(other.path);
  if (changed_script == other_script) return false;
  const Document& script = changed_script ? changed : other;
  const Document& yaml = changed_script ? other : changed;
  if (script_names_config(script.text, yaml.path)) return true;
  std::optional<fs::path> launch = context_launch(server, yaml.path);
  return launch && launch->string() == script.path;
}

}  // namespace mblint::lsp
