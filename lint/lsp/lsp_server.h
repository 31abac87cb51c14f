// `mblint lsp`: a Language Server Protocol server over stdio. Single-threaded:
// messages are handled in order; documents changed since their last lint are
// linted when the input goes quiet (a burst of didChange is linted once, at
// its newest version) and before any request that reads lint results, so a
// published result is never older than one already published.
//
// Fixes are re-checked before they are offered (lint/fix/fix_verify.h), which
// on a large dump costs several times the lint itself. So an edit is linted
// in two steps: first without the re-check, published at once (the findings,
// with each rule's own help); then, once the input has stayed quiet for
// fix_check_delay_ms, again with it, published only where the re-check
// changed what the editor shows. A code action on a finding whose fixes are
// still unchecked runs the second step first: no fix is ever offered
// unchecked.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "lint/base/source.h"
#include "lint/load/yaml/yaml_patch.h"
#include "lint/lsp/lsp_text.h"
#include "lint/report/render.h"  // kRulesDocsUrl: where `code` links to
#include "lint/rule/rule.h"
#include "lint/run/lint.h"

namespace mblint::lsp {

using Json = nlohmann::json;

// The inline suppression the "disable RULE for this line" action writes
// (end-of-line form of `# mblint: disable=RULE -- reason`).
inline constexpr std::string_view kSuppressionMarker = "# mblint: disable=";
inline constexpr std::string_view kSuppressionReasonPlaceholder = "TODO: reason";

// JSON-RPC and LSP error codes.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kServerNotInitialized = -32002;

// One lint run and the files it read, kept for hover and code actions.
struct LintSnapshot {
  SourceSet sources;
  LintResult result;
  std::vector<std::string> uris;  // uri of each FileId; "" for "<command-line>"
};

struct Document {
  std::string uri;
  std::string path;  // canonical file path; "" for a uri that is not file://
  std::string language;
  std::string text;
  int64_t version = 0;
  bool pending = false;  // changed since its last lint
  // The last lint did not re-check the fixes (the first of an edit's two steps).
  bool fixes_unchecked = false;
  std::shared_ptr<const LintSnapshot> snapshot;  // the last lint, of `text` when not pending
};

// How long the input stays quiet before the fixes of the last lint are
// re-checked. Short enough that a pause in typing shows the checked help,
// long enough that steady typing pays only for the first step.
inline constexpr int kFixCheckDelayMs = 150;

enum class ServerState { Uninitialized, Running, ShutDown };

struct CachedScript {
  std::filesystem::file_time_type modified;
  std::string text;  // "" when it names no --config-file
};

struct Server {
  RuleSet rules;
  std::vector<std::string> job_args;  // job options given to `mblint lsp` (--recipe, --gpu, ...)
  // Quiet input before fixes are re-checked; negative: in the same lint as the
  // findings (one publish per edit, each fix checked before it is shown).
  int fix_check_delay_ms = kFixCheckDelayMs;
  std::filesystem::path cwd;
  std::ostream* log = nullptr;  // stderr

  ServerState state = ServerState::Uninitialized;
  std::vector<std::filesystem::path> roots;  // workspace folders
  std::map<std::string, Document> documents;  // by uri
  // Launch scripts of the workspace (for the script that runs an override YAML).
  std::vector<std::filesystem::path> scripts;
  bool scripts_listed = false;
  std::map<std::string, CachedScript> script_cache;  // by path
  // YAML parses of recent texts; a value edit patches its document's parse.
  YamlCache yaml_cache;
  bool exit = false;
  int exit_code = 0;
  // The client can watch files for us (workspace/didChangeWatchedFiles with
  // dynamic registration): launch scripts, YAML and .mblint.yaml changed
  // outside the editor re-lint the open documents that read them.
  bool client_watches_files = false;
};

// --- the protocol (lsp_server.cpp) -----------------------------------------------------------

// Handle one message (the JSON text of a frame); replies and notifications go
// to `out`. False when the text is not JSON (a ParseError was answered).
bool handle_message(Server& server, std::string_view body, std::vector<Json>& out);

bool has_pending(const Server& server);

// Lint every document changed since its last lint and publish its diagnostics.
void lint_pending(Server& server, std::vector<Json>& out);

// Whether a lint of an unchanged document left its fixes unchecked.
bool has_unchecked_fixes(const Server& server);

// Re-lint, with the fixes re-checked, each unchanged document whose last lint
// left them unchecked; publish those whose diagnostics change.
void check_fixes(Server& server, std::vector<Json>& out);

// Serve on file descriptors until `exit` or the end of the input; returns the exit code.
int serve(Server& server, int in_fd, int out_fd, int debounce_ms);

Json error_response(const Json& id, int code, std::string_view message);

// --- documents and the workspace (lsp_workspace.cpp) ---------------------------------------

std::string uri_to_path(std::string_view uri);  // "" when not a file:// uri
// A file's bytes; nullopt when it cannot be read or is over `max_bytes`.
std::optional<std::string> read_small_file(const std::filesystem::path& path, std::uintmax_t max_bytes);
std::string path_to_uri(const std::filesystem::path& path);
std::string canonical_path(const std::filesystem::path& path);

// Launch scripts in the workspace whose text names `yaml` next to --config-file.
std::vector<std::filesystem::path> scripts_referencing(Server& server, const std::string& yaml_path);
// Whether `script_text` names `yaml_path` (by file name) with --config-file.
bool script_names_config(std::string_view script_text, const std::string& yaml_path);
void relist_scripts(Server& server);
bool is_script_path(const std::filesystem::path& path);

// Lint a document (with the scripts that launch it) from the open buffers;
// `check_fixes` false leaves its fixes unchecked (lint/run/lint.h FixCheck).
std::shared_ptr<const LintSnapshot> lint_document(Server& server, const Document& document, bool check_fixes = true);
// What a lint of the file at `path` resolves relative paths against: its workspace folder.
std::filesystem::path workspace_base(const Server& server, const std::string& path);

// --- linted together (lsp_context.cpp) ------------------------------------------------------

// The launch script (canonical) the project config's `context` names for override YAML `yaml_path`.
std::optional<std::filesystem::path> context_launch(const Server& server, const std::string& yaml_path);
// The open override YAML documents whose context launch is `script_path`.
std::vector<std::filesystem::path> context_yamls(const Server& server, const std::string& script_path);
// Whether a change in `changed` changes `other`'s lint (a script and the YAML
// it runs, either way; a project config and the files under it).
bool lints_together(const Server& server, const Document& other, const Document& changed);
// Whether `path` names a project config (`.mblint.yaml`), and whether `document`
// lies under the directory of the one at `config_path`.
bool is_project_config(const std::string& path);
bool under_project_config(const std::string& config_path, const Document& document);

// --- features (lsp_features.cpp) ------------------------------------------------------------

Json range_of(const LintSnapshot& snapshot, Span span);
// The diagnostics of `snapshot` located in file `uri`, as LSP diagnostics.
Json diagnostics_for(const LintSnapshot& snapshot, const std::string& uri);
Json lsp_diagnostic(const LintSnapshot& snapshot, const Diagnostic& diagnostic);
Json code_actions(const Document& document, const Json& params);
// Whether a code action request would offer a fix the last lint did not re-check.
bool offers_unchecked_fixes(const Document& document, const Json& params);
Json hover(const Document& document, const Json& params);

}  // namespace mblint::lsp
