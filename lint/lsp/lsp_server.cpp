#include "lint/lsp/lsp_server.h"

#include <algorithm>
#include <csignal>

#include "lint/command_line/command_line.h"
#include "lint/lsp/lsp_transport.h"

namespace mblint::lsp {

namespace {

Json response(const Json& id, Json result) { return Json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}}; }

Json notification(std::string_view method, Json params) {
  return Json{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
}

Json publish(const Document& document, Json diagnostics) {
  return notification("textDocument/publishDiagnostics",
                      Json{{"uri", document.uri}, {"version", document.version}, {"diagnostics", std::move(diagnostics)}});
}

void log_line(const Server& server, std::string_view text) {
  if (server.log) *server.log << "mblint lsp: " << text << '\n' << std::flush;
}

// The second step of an edit's lint: the same text with its fixes re-checked.
// Published only when that changes what the editor shows (a help narrowed to
// the fixes that remain), so a re-check that keeps every fix sends nothing.
void check_document_fixes(Server& server, Document& document, std::vector<Json>& out) {
  document.fixes_unchecked = false;
  try {
    std::shared_ptr<const LintSnapshot> checked = lint_document(server, document, true);
    Json diagnostics = diagnostics_for(*checked, document.uri);
    bool changed = !document.snapshot || diagnostics != diagnostics_for(*document.snapshot, document.uri);
    document.snapshot = std::move(checked);
    if (changed) out.push_back(publish(document, std::move(diagnostics)));
  } catch (const std::exception& error) {  // a bug in mblint: keep serving, offer nothing unchecked
    log_line(server, "re-checking the fixes of " + document.uri + " failed: " + error.what());
    document.snapshot = nullptr;
  }
}

Json capabilities() {
  return Json{
      {"positionEncoding", "utf-16"},
      {"textDocumentSync",
       {{"openClose", true}, {"change", 2 /* incremental */}, {"save", {{"includeText", false}}}}},
      {"codeActionProvider", {{"codeActionKinds", {"quickfix"}}}},
      {"hoverProvider", true},
  };
}

void read_roots(Server& server, const Json& params) {
  server.roots.clear();
  if (auto folders = params.find("workspaceFolders"); folders != params.end() && folders->is_array()) {
    for (const Json& folder : *folders) {
      std::string path = uri_to_path(folder.value("uri", ""));
      if (!path.empty()) server.roots.emplace_back(path);
    }
  }
  if (server.roots.empty()) {
    if (auto root = params.find("rootUri"); root != params.end() && root->is_string()) {
      std::string path = uri_to_path(root->get<std::string>());
      if (!path.empty()) server.roots.emplace_back(path);
    } else if (auto root_path = params.find("rootPath"); root_path != params.end() && root_path->is_string()) {
      server.roots.emplace_back(root_path->get<std::string>());
    }
  }
  server.scripts_listed = false;
}

// Open documents whose lint includes `document`'s text: the scripts that
// launch an override YAML, the YAML files a script launches (lsp_context.cpp).
void mark_related(Server& server, const Document& changed) {
  for (auto& [uri, other] : server.documents) {
    if (lints_together(server, other, changed)) other.pending = true;
  }
}

void did_open(Server& server, const Json& params) {
  const Json& item = params.at("textDocument");
  Document document;
  document.uri = item.at("uri").get<std::string>();
  document.language = item.value("languageId", "");
  document.text = item.at("text").get<std::string>();
  document.version = item.value("version", int64_t{0});
  std::string path = uri_to_path(document.uri);
  document.path = path.empty() ? "" : canonical_path(path);
  document.pending = true;
  if (is_script_path(document.path)) server.scripts_listed = false;
  mark_related(server, document);
  server.documents[document.uri] = std::move(document);
}

void did_change(Server& server, const Json& params) {
  const Json& item = params.at("textDocument");
  auto it = server.documents.find(item.at("uri").get<std::string>());
  if (it == server.documents.end()) return;  // not open: nothing to change
  Document& document = it->second;
  for (const Json& change : params.at("contentChanges")) {
    const std::string& text = change.at("text").get_ref<const std::string&>();
    if (auto range = change.find("range"); range != change.end() && !range->is_null()) {
      auto position = [](const Json& p) {
        return Position{p.at("line").get<uint32_t>(), p.at("character").get<uint32_t>()};
      };
      ByteRange bytes = to_byte_range(document.text, position(range->at("start")), position(range->at("end")));
      std::string_view replacement = text;
      note_edit(server.yaml_cache, document.text, ByteEdit{bytes.begin, bytes.end, replacement});
      document.text.replace(bytes.begin, bytes.end - bytes.begin, text);
    } else {
      // A whole new text: the part that differs is the edit.
      ByteRange bytes = changed_range(document.text, text);
      size_t kept_suffix = document.text.size() - bytes.end;
      std::string_view replacement = std::string_view(text).substr(bytes.begin, text.size() - kept_suffix - bytes.begin);
      note_edit(server.yaml_cache, document.text, ByteEdit{bytes.begin, bytes.end, replacement});
      document.text = text;
    }
  }
  if (auto version = item.find("version"); version != item.end() && version->is_number_integer()) {
    document.version = version->get<int64_t>();
  }
  document.pending = true;
  mark_related(server, document);
}

void did_close(Server& server, const Json& params, std::vector<Json>& out) {
  auto it = server.documents.find(params.at("textDocument").at("uri").get<std::string>());
  if (it == server.documents.end()) return;
  Document closed = std::move(it->second);
  server.documents.erase(it);
  mark_related(server, closed);  // they now read the file on disk
  out.push_back(notification("textDocument/publishDiagnostics",
                             Json{{"uri", closed.uri}, {"diagnostics", Json::array()}}));
}

void did_save(Server& server, const Json& params) {
  auto it = server.documents.find(params.at("textDocument").at("uri").get<std::string>());
  server.scripts_listed = false;  // a script may have been created
  if (it != server.documents.end()) {
    it->second.pending = true;
    mark_related(server, it->second);
  }
}

// What the client watches for us: the files a lint reads besides the open ones.
Json watch_registration() {
  Json watchers = Json::array();
  for (const char* glob : {"**/*.{yaml,yml}", "**/*.{sh,bash,sbatch,slurm}", "**/.mblint.yaml"}) {
    watchers.push_back(Json{{"globPattern", glob}});
  }
  Json registration{{"id", "mblint-watched-files"},
                    {"method", "workspace/didChangeWatchedFiles"},
                    {"registerOptions", {{"watchers", std::move(watchers)}}}};
  return Json{{"jsonrpc", "2.0"},
              {"id", "mblint-register-watchers"},
              {"method", "client/registerCapability"},
              {"params", {{"registrations", Json::array({std::move(registration)})}}}};
}

// Files changed outside the editor (a checkout, a generator, another tool).
// An open file's buffer is what the lints read, so only closed files count:
// the open documents whose last lint read one, that a script now launches,
// or that a project config governs are linted again.
void did_change_watched_files(Server& server, const Json& params) {
  server.scripts_listed = false;  // a launch script may have been created or deleted
  for (const Json& change : params.at("changes")) {
    std::string path = uri_to_path(change.at("uri").get<std::string>());
    if (path.empty()) continue;
    Document on_disk;
    on_disk.path = canonical_path(path);
    on_disk.uri = path_to_uri(on_disk.path);
    bool open = std::any_of(server.documents.begin(), server.documents.end(),
                            [&](const auto& entry) { return entry.second.path == on_disk.path; });
    if (open) continue;
    if (is_project_config(on_disk.path)) {
      // Created, changed or deleted: every open file under it is linted again.
      for (auto& [uri, other] : server.documents) {
        if (under_project_config(on_disk.path, other)) other.pending = true;
      }
      continue;
    }
    constexpr std::uintmax_t kMaxBytes = 1u << 20;  // scripts and configs are small
    on_disk.text = read_small_file(on_disk.path, kMaxBytes).value_or("");  // "" when deleted
    for (auto& [uri, other] : server.documents) {
      if (lints_together(server, other, on_disk)) other.pending = true;
    }
  }
}

void handle_notification(Server& server, const std::string& method, const Json& params, std::vector<Json>& out) {
  if (method == "exit") {
    server.exit = true;
    server.exit_code = server.state == ServerState::ShutDown ? 0 : 1;
    return;
  }
  if (server.state != ServerState::Running) return;  // dropped before initialize and after shutdown
  if (method == "textDocument/didOpen") return did_open(server, params);
  if (method == "textDocument/didChange") return did_change(server, params);
  if (method == "textDocument/didClose") return did_close(server, params, out);
  if (method == "textDocument/didSave") return did_save(server, params);
  if (method == "workspace/didChangeWatchedFiles") return did_change_watched_files(server, params);
  if (method == "initialized") {
    if (server.client_watches_files) out.push_back(watch_registration());
    return;
  }
  // initialized, $/cancelRequest, $/setTrace, workspace/didChangeConfiguration...: nothing to do.
}

Document* find_document(Server& server, const Json& params) {
  auto it = server.documents.find(params.at("textDocument").at("uri").get<std::string>());
  return it == server.documents.end() ? nullptr : &it->second;
}

void handle_request(Server& server, const Json& id, const std::string& method, const Json& params,
                    std::vector<Json>& out) {
  if (method == "initialize") {
    if (server.state != ServerState::Uninitialized) {
      out.push_back(error_response(id, kInvalidRequest, "initialize was already called"));
      return;
    }
    read_roots(server, params);
    const Json* watch = &params;
    for (const char* key : {"capabilities", "workspace", "didChangeWatchedFiles"}) {
      watch = watch->is_object() && watch->contains(key) ? &(*watch)[key] : nullptr;
      if (!watch) break;
    }
    server.client_watches_files = watch && watch->is_object() && watch->contains("dynamicRegistration") &&
                                  (*watch)["dynamicRegistration"] == true;
    server.state = ServerState::Running;
    out.push_back(response(id, Json{{"capabilities", capabilities()},
                                    {"serverInfo", {{"name", "mblint"}, {"version", version_text()}}}}));
    return;
  }
  if (server.state == ServerState::Uninitialized) {
    out.push_back(error_response(id, kServerNotInitialized, "the server has not been initialized"));
    return;
  }
  if (server.state == ServerState::ShutDown) {
    out.push_back(error_response(id, kInvalidRequest, "the server is shutting down"));
    return;
  }
  if (method == "shutdown") {
    server.state = ServerState::ShutDown;
    out.push_back(response(id, nullptr));
    return;
  }
  if (method == "textDocument/codeAction" || method == "textDocument/hover") {
    lint_pending(server, out);  // answer from the current text
    Document* document = find_document(server, params);
    if (document && method == "textDocument/codeAction" && offers_unchecked_fixes(*document, params)) {
      check_document_fixes(server, *document, out);  // a fix is offered only re-checked
    }
    if (!document || !document->snapshot) {
      out.push_back(response(id, nullptr));
      return;
    }
    out.push_back(response(id, method == "textDocument/hover" ? hover(*document, params)
                                                               : code_actions(*document, params)));
    return;
  }
  out.push_back(error_response(id, kMethodNotFound, "unknown method " + method));
}

}  // namespace

Json error_response(const Json& id, int code, std::string_view message) {
  return Json{{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

bool handle_message(Server& server, std::string_view body, std::vector<Json>& out) {
  Json message = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (message.is_discarded()) {
    out.push_back(error_response(nullptr, kParseError, "the message is not valid JSON"));
    return false;
  }
  bool has_id = message.is_object() && message.contains("id") &&
                (message["id"].is_number_integer() || message["id"].is_string());
  Json id = has_id ? message["id"] : Json(nullptr);
  if (!message.is_object() || !message.contains("method") || !message["method"].is_string()) {
    // A response to a request of ours (we send none) or not a request at all.
    if (message.is_object() && (message.contains("result") || message.contains("error"))) return true;
    out.push_back(error_response(id, kInvalidRequest, "not a JSON-RPC request or notification"));
    return true;
  }
  if (message.contains("id") && !has_id) {
    out.push_back(error_response(nullptr, kInvalidRequest, "a request id must be a number or a string"));
    return true;
  }
  std::string method = message["method"].get<std::string>();
  Json params = message.contains("params") ? message["params"] : Json::object();
  try {
    if (has_id) {
      handle_request(server, id, method, params, out);
    } else {
      handle_notification(server, method, params, out);
    }
  } catch (const Json::exception& error) {
    log_line(server, method + ": bad parameters: " + error.what());
    if (has_id) out.push_back(error_response(id, kInvalidParams, std::string("bad parameters: ") + error.what()));
  } catch (const std::exception& error) {
    log_line(server, method + ": " + error.what());
    if (has_id) out.push_back(error_response(id, kInternalError, error.what()));
  }
  return true;
}

bool has_pending(const Server& server) {
  for (const auto& [uri, document] : server.documents) {
    if (document.pending) return true;
  }
  return false;
}

void lint_pending(Server& server, std::vector<Json>& out) {
  bool check_now = server.fix_check_delay_ms < 0;
  for (auto& [uri, document] : server.documents) {
    if (!document.pending) continue;
    document.pending = false;
    try {
      document.snapshot = lint_document(server, document, check_now);
      document.fixes_unchecked = !check_now;
      out.push_back(publish(document, diagnostics_for(*document.snapshot, document.uri)));
    } catch (const std::exception& error) {  // a bug in mblint: keep serving
      log_line(server, "linting " + document.uri + " failed: " + error.what());
      document.snapshot = nullptr;
      document.fixes_unchecked = false;
    }
  }
}

bool has_unchecked_fixes(const Server& server) {
  return std::any_of(server.documents.begin(), server.documents.end(),
                     [](const auto& entry) { return entry.second.fixes_unchecked && !entry.second.pending; });
}

void check_fixes(Server& server, std::vector<Json>& out) {
  for (auto& [uri, document] : server.documents) {
    if (document.fixes_unchecked && !document.pending) check_document_fixes(server, document, out);
  }
}

int serve(Server& server, int in_fd, int out_fd, int debounce_ms) {
  std::signal(SIGPIPE, SIG_IGN);  // a client that went away ends the loop, not the process
  FrameReader reader{in_fd, {}, 0, false};
  std::vector<Json> out;
  auto flush = [&]() {
    bool ok = true;
    for (const Json& message : out) {
      ok = ok && write_frame(out_fd, message.dump(-1, ' ', false, Json::error_handler_t::replace));
    }
    out.clear();
    return ok;
  };
  while (!server.exit) {
    // Lint once the input is quiet: a burst of changes is linted once.
    if (has_pending(server) && !has_buffered_frame(reader) && !wait_readable(reader, debounce_ms)) {
      lint_pending(server, out);
      if (!flush()) break;
      continue;
    }
    // Then, while the input stays quiet, the fixes of what was just published.
    if (has_unchecked_fixes(server) && !has_buffered_frame(reader) &&
        !wait_readable(reader, std::max(server.fix_check_delay_ms, 0))) {
      check_fixes(server, out);
      if (!flush()) break;
      continue;
    }
    Frame frame = read_frame(reader);
    if (frame.kind == Frame::Eof) break;
    if (frame.kind == Frame::Broken) {
      log_line(server, frame.error);
      continue;
    }
    if (!frame.error.empty()) log_line(server, frame.error);
    if (!handle_message(server, frame.body, out)) {
      // When the Content-Length was too large the next message's header is
      // inside the body: resume reading there.
      log_line(server, "a message body is not valid JSON");
      size_t next = frame.body.find("Content-Length:");
      if (next != std::string::npos) resync_into_body(reader, frame, next);
    }
    if (!flush()) break;
  }
  if (!server.exit) server.exit_code = server.state == ServerState::ShutDown ? 0 : 1;
  return server.exit_code;
}

}  // namespace mblint::lsp
