// Documents and the workspace: file uris, the launch scripts that run an
// override YAML (found by reading scripts, never running them), and linting
// a document from the open buffers.
#include <fstream>
#include <sstream>

#include "lint/command_line/command_line.h"
#include "lint/lsp/lsp_server.h"

namespace mblint::lsp {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxScriptsVisited = 20000;   // directory entries walked per listing
constexpr size_t kMaxScriptBytes = 1u << 20;   // launch scripts are small
constexpr int kMaxDepth = 8;

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool skipped_directory(const fs::path& path) {
  std::string name = path.filename().string();
  return (!name.empty() && name[0] == '.') || name == "node_modules" || name == "__pycache__";
}

std::string file_name(std::string_view path) {
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// The text of a script: the open buffer, else the file (cached by mtime).
// "" when it does not mention --config-file at all.
const std::string& script_text(Server& server, const fs::path& path) {
  static const std::string kNone;
  std::string key = path.string();
  for (const auto& [uri, document] : server.documents) {
    if (document.path == key) return document.text;
  }
  std::error_code error;
  auto modified = fs::last_write_time(path, error);
  if (error) return kNone;
  auto it = server.script_cache.find(key);
  if (it != server.script_cache.end() && it->second.modified == modified) return it->second.text;
  CachedScript cached{modified, {}};
  if (std::optional<std::string> text = read_small_file(path, kMaxScriptBytes)) {
    cached.text = std::move(*text);
    if (cached.text.find("config-file") == std::string::npos && cached.text.find("config_file") == std::string::npos) {
      cached.text.clear();
    }
  }
  CachedScript& slot = server.script_cache[key];
  slot = std::move(cached);
  return slot.text;
}

}  // namespace

fs::path workspace_base(const Server& server, const std::string& path) {
  for (const fs::path& root : server.roots) {
    std::string prefix = root.string();
    if (!prefix.empty() && prefix.back() != '/') prefix += '/';
    if (path.rfind(prefix, 0) == 0) return root;
  }
  if (!path.empty()) return fs::path(path).parent_path();
  return server.cwd;
}

std::optional<std::string> read_small_file(const fs::path& path, std::uintmax_t max_bytes) {
  std::error_code error;
  auto size = fs::file_size(path, error);
  if (error || size > max_bytes) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string uri_to_path(std::string_view uri) {
  constexpr std::string_view kScheme = "file://";
  if (uri.substr(0, kScheme.size()) != kScheme) return "";
  std::string_view rest = uri.substr(kScheme.size());
  size_t slash = rest.find('/');  // skip an authority ("file://host/path")
  if (slash == std::string_view::npos) return "";
  rest = rest.substr(slash);
  std::string path;
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '%' && i + 2 < rest.size() && hex_value(rest[i + 1]) >= 0 && hex_value(rest[i + 2]) >= 0) {
      path += static_cast<char>(hex_value(rest[i + 1]) * 16 + hex_value(rest[i + 2]));
      i += 2;
    } else {
      path += rest[i];
    }
  }
  return path;
}

std::string path_to_uri(const fs::path& path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string uri = "file://";
  for (unsigned char c : path.string()) {
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' ||
                 c == '-' || c == '.' || c == '_' || c == '~';
    if (plain) {
      uri += static_cast<char>(c);
    } else {
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 15];
    }
  }
  return uri;
}

std::string canonical_path(const fs::path& path) {
  std::error_code error;
  fs::path canonical = fs::weakly_canonical(path, error);
  return error ? path.lexically_normal().string() : canonical.string();
}

bool is_script_path(const fs::path& path) {
  std::string ext = path.extension().string();
  return ext == ".sh" || ext == ".sbatch" || ext == ".slurm" || ext == ".bash";
}

bool script_names_config(std::string_view script_text, const std::string& yaml_path) {
  if (script_text.find("config-file") == std::string_view::npos &&
      script_text.find("config_file") == std::string_view::npos) {
    return false;
  }
  std::string name = file_name(yaml_path);
  return !name.empty() && script_text.find(name) != std::string_view::npos;
}

void relist_scripts(Server& server) {
  server.scripts.clear();
  server.scripts_listed = true;
  size_t visited = 0;
  for (const fs::path& root : server.roots) {
    std::error_code error;
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, error);
    for (; !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
      if (++visited > kMaxScriptsVisited) return;
      if (it->is_directory(error)) {
        if (it.depth() >= kMaxDepth || skipped_directory(it->path())) it.disable_recursion_pending();
        continue;
      }
      if (is_script_path(it->path()) && it->is_regular_file(error)) server.scripts.push_back(canonical_path(it->path()));
    }
  }
}

std::vector<fs::path> scripts_referencing(Server& server, const std::string& yaml_path) {
  if (!server.scripts_listed) relist_scripts(server);
  std::vector<fs::path> found;
  std::vector<fs::path> candidates = server.scripts;
  for (const auto& [uri, document] : server.documents) {  // open scripts outside the workspace folders
    if (is_script_path(document.path)) candidates.emplace_back(document.path);
  }
  for (const fs::path& script : candidates) {
    if (std::find(found.begin(), found.end(), script) != found.end()) continue;
    if (script_names_config(script_text(server, script), yaml_path)) found.push_back(script);
  }
  return found;
}

std::shared_ptr<const LintSnapshot> lint_document(Server& server, const Document& document, bool check_fixes) {
  auto snapshot = std::make_shared<LintSnapshot>();
  if (document.path.empty()) return snapshot;  // an untitled buffer: nothing on disk to relate it to
  SourceSet& sources = snapshot->sources;
  std::vector<std::string> args = {"lsp"};
  args.insert(args.end(), server.job_args.begin(), server.job_args.end());
  CommandLine line = add_command_line(sources, args);
  fs::path base = workspace_base(server, document.path);
  std::ostringstream ignored;  // job options were checked when the server started
  CliEnvironment env{ignored, ignored, false, {}, base};
  LintOptions options;
  read_job_options(args, line, env, options);
  options.yaml_cache = &server.yaml_cache;
  // Open documents are linted from their unsaved text.
  for (const auto& [uri, open] : server.documents) {
    if (!open.path.empty()) options.overlay[fs::path(open.path)] = open.text;
  }
  // Paths relative to the workspace read best in messages and hovers.
  auto shown = [&](const fs::path& path) {
    fs::path relative = path.lexically_relative(base);
    bool inside = !relative.empty() && *relative.begin() != "..";
    return inside ? relative.string() : path.string();
  };
  if (!is_script_path(document.path)) {
    for (const fs::path& script : scripts_referencing(server, document.path)) options.paths.push_back(shown(script));
  } else {  // with the open YAML files the project config says it runs
    for (const fs::path& yaml : context_yamls(server, document.path)) options.paths.push_back(shown(yaml));
  }
  options.paths.push_back(shown(document.path));
  snapshot->result =
      run_lint_unfolded(sources, options, server.rules, check_fixes ? FixCheck::Checked : FixCheck::Unchecked);
  // Each file's uri: the open document's own uri when it is open.
  for (const SourceFile& file : sources.files) {
    if (file.synthetic) {
      snapshot->uris.emplace_back();
      continue;
    }
    fs::path path = file.path;
    std::string canonical = canonical_path(path.is_absolute() ? path : base / path);
    std::string uri = path_to_uri(canonical);
    for (const auto& [open_uri, open] : server.documents) {
      if (open.path == canonical) uri = open_uri;
    }
    snapshot->uris.push_back(uri);
  }
  return snapshot;
}

}  // namespace mblint::lsp
