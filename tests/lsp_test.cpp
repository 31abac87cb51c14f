// The language server driven over pipes, in-process: framing, lifecycle,
// diagnostics from unsaved text, code actions, hover, and bad input.
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "catch2/catch.hpp"
#include "lint/facts/estimate.h"
#include "lint/facts/speed_model.h"
#include "lint/lsp/lsp_server.h"
#include "lint/lsp/lsp_text.h"
#include "lint/lsp/lsp_transport.h"
#include "rules/registry.h"
#include "tests/lint_run.h"
#include "tests/test_support.h"

namespace {

namespace fs = std::filesystem;
using mblint::lsp::Json;

// A server on a thread, talking over two pipes like an editor would.
struct Session {
  int to_server[2] = {-1, -1};
  int from_server[2] = {-1, -1};
  mblint::lsp::Server server;
  std::ostringstream log;
  std::thread thread;
  int exit_code = -1;
  bool finished = false;
  std::string pending;  // bytes read from the server not yet framed
  std::deque<Json> notifications;
  int next_id = 1;

  // The tests before the two-step ones check fixes before the first publish
  // (fix_check_delay_ms -1), so each edit publishes once; the default server
  // publishes first and re-checks the fixes when the input is quiet.
  explicit Session(std::vector<std::string> job_args = {}, int fix_check_delay_ms = -1) {
    server.job_args = std::move(job_args);
    server.fix_check_delay_ms = fix_check_delay_ms;
    REQUIRE(pipe(to_server) == 0);
    REQUIRE(pipe(from_server) == 0);
    server.rules = mblint::all_rules();
    server.log = &log;
    server.cwd = fs::current_path();
    thread = std::thread([this] {
      exit_code = mblint::lsp::serve(server, to_server[0], from_server[1], 0);
      close(from_server[1]);
    });
  }
  ~Session() {
    close_input();
    thread.join();
    close(to_server[0]);
    close(from_server[0]);
  }
  void close_input() {
    if (to_server[1] >= 0) close(to_server[1]);
    to_server[1] = -1;
  }
  // Wait for the server to stop (after `exit` or the end of its input).
  int wait_exit() {
    thread.join();
    thread = std::thread([] {});
    return exit_code;
  }

  void send_raw(const std::string& bytes) {
    size_t written = 0;
    while (written < bytes.size()) {
      ssize_t n = write(to_server[1], bytes.data() + written, bytes.size() - written);
      REQUIRE(n > 0);
      written += static_cast<size_t>(n);
    }
  }
  void send(const Json& message) {
    std::string body = message.dump();
    send_raw(fmt::format("Content-Length: {}\r\n\r\n{}", body.size(), body));
  }
  void notify(const std::string& method, Json params) {
    send(Json{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
  }
  int send_request(const std::string& method, Json params) {
    int id = next_id++;
    send(Json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}});
    return id;
  }

  // The next message from the server; null when none came within the time.
  std::optional<Json> read_message(int timeout_ms = 10000) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      size_t header_end = pending.find("\r\n\r\n");
      if (header_end != std::string::npos) {
        size_t length = std::stoul(pending.substr(pending.find(':') + 1, header_end));
        if (pending.size() >= header_end + 4 + length) {
          Json message = Json::parse(pending.substr(header_end + 4, length));
          pending.erase(0, header_end + 4 + length);
          return message;
        }
      }
      int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                      deadline - std::chrono::steady_clock::now())
                                      .count());
      if (left <= 0) return std::nullopt;
      pollfd fds{from_server[0], POLLIN, 0};
      if (poll(&fds, 1, left) <= 0) return std::nullopt;
      char chunk[65536];
      ssize_t n = read(from_server[0], chunk, sizeof chunk);
      if (n <= 0) return std::nullopt;
      pending.append(chunk, static_cast<size_t>(n));
    }
  }

  // The response to request `id`; notifications on the way are kept.
  Json response(int id) {
    for (;;) {
      auto message = read_message();
      REQUIRE(message);
      if (message->contains("id") && (*message)["id"] == id && !message->contains("method")) return *message;
      notifications.push_back(*message);
    }
  }
  Json request(const std::string& method, Json params) { return response(send_request(method, std::move(params))); }

  // The next publishDiagnostics for `uri` (other messages are kept, in order).
  Json diagnostics(const std::string& uri) {
    auto for_uri = [&](const Json& message) {
      return message.value("method", "") == "textDocument/publishDiagnostics" && message["params"]["uri"] == uri;
    };
    for (auto it = notifications.begin(); it != notifications.end(); ++it) {
      if (for_uri(*it)) {
        Json found = (*it)["params"];
        notifications.erase(it);
        return found;
      }
    }
    for (;;) {
      std::optional<Json> message = read_message();
      REQUIRE(message);
      if (for_uri(*message)) return (*message)["params"];
      notifications.push_back(*message);
    }
  }

  void initialize(const fs::path& root) {
    Json result = request("initialize", Json{{"processId", nullptr},
                                             {"rootUri", mblint::lsp::path_to_uri(root)},
                                             {"capabilities", Json::object()}});
    REQUIRE(result.contains("result"));
    notify("initialized", Json::object());
  }
  // The usual first steps: initialize on `root`, open `uri` with `text` and
  // wait for its first publish.
  Json start(const fs::path& root, const std::string& uri, const std::string& text) {
    initialize(root);
    open(uri, text);
    return diagnostics(uri);
  }
  void open(const std::string& uri, const std::string& text, const std::string& language = "yaml", int version = 1) {
    notify("textDocument/didOpen",
           Json{{"textDocument", {{"uri", uri}, {"languageId", language}, {"version", version}, {"text", text}}}});
  }
  void change(const std::string& uri, int version, Json change) {
    notify("textDocument/didChange", Json{{"textDocument", {{"uri", uri}, {"version", version}}},
                                          {"contentChanges", Json::array({std::move(change)})}});
  }
};

Json range(uint32_t line, uint32_t begin, uint32_t end_line, uint32_t end) {
  return Json{{"start", {{"line", line}, {"character", begin}}}, {"end", {{"line", end_line}, {"character", end}}}};
}

std::vector<std::string> codes(const Json& published) {
  std::vector<std::string> out;
  for (const Json& d : published["diagnostics"]) out.push_back(d["code"].get<std::string>());
  return out;
}

bool has_code(const Json& published, const std::string& rule) {
  auto all = codes(published);
  return std::find(all.begin(), all.end(), rule) != all.end();
}

// Apply LSP TextEdits (UTF-16 positions) to `text`, last first.
std::string apply_edits(std::string text, Json edits) {
  std::sort(edits.begin(), edits.end(), [](const Json& a, const Json& b) {
    auto key = [](const Json& e) { return std::make_pair(e["range"]["start"]["line"].get<int>(), e["range"]["start"]["character"].get<int>()); };
    return key(a) > key(b);
  });
  for (const Json& edit : edits) {
    auto pos = [](const Json& p) { return mblint::lsp::Position{p["line"].get<uint32_t>(), p["character"].get<uint32_t>()}; };
    mblint::lsp::apply_change(text, pos(edit["range"]["start"]), pos(edit["range"]["end"]), edit["newText"].get<std::string>());
  }
  return text;
}

// An override YAML with a world-size problem and a cp_comm_type with a safe fix.
constexpr const char* kConfig =
    "model:\n"
    "  tensor_model_parallel_size: 8\n"
    "  pipeline_model_parallel_size: 2\n"
    "  context_parallel_size: 2\n"
    "  cp_comm_type: [p2p, p2p]\n"
    "  num_layers: 4\n"
    "train:\n"
    "  global_batch_size: 64\n"
    "  micro_batch_size: 1\n";

}  // namespace

TEST_CASE("UTF-16 positions convert to and from byte offsets", "[lsp]") {
  using mblint::lsp::Position;
  // "é" is 2 bytes / 1 unit, "€" 3 bytes / 1 unit, "😀" 4 bytes / 2 units.
  std::string text = "a: é€😀x\nb\r\nc";
  auto starts = mblint::lsp::line_starts(text);
  REQUIRE(starts.size() == 3);
  size_t x = text.find('x');
  CHECK(mblint::lsp::to_position(text, starts, static_cast<uint32_t>(x)).character == 7);
  CHECK(mblint::lsp::to_offset(text, starts, Position{0, 7}) == x);
  CHECK(mblint::lsp::to_offset(text, starts, Position{0, 100}) == text.find('\n'));  // clamped to the line
  CHECK(mblint::lsp::to_offset(text, starts, Position{1, 5}) == text.find('\r'));   // before "\r\n"
  CHECK(mblint::lsp::to_offset(text, starts, Position{9, 0}) == text.size());
  std::string edited = text;
  mblint::lsp::apply_change(edited, Position{0, 5}, Position{0, 7}, "Z");  // replace "😀"
  CHECK(edited == "a: é€Zx\nb\r\nc");
}

TEST_CASE("lsp: lifecycle, requests before initialize, unknown methods", "[lsp]") {
  fs::path root = mblint::test::make_temp_dir("mblint-lsp-life");
  Session s;
  Json early = s.request("textDocument/hover", Json{{"textDocument", {{"uri", "file:///x.yaml"}}},
                                                    {"position", {{"line", 0}, {"character", 0}}}});
  CHECK(early["error"]["code"] == mblint::lsp::kServerNotInitialized);
  s.open(mblint::lsp::path_to_uri(root / "early.yaml"), kConfig);  // a notification before initialize: dropped
  s.initialize(root);
  CHECK(s.request("initialize", Json::object())["error"]["code"] == mblint::lsp::kInvalidRequest);
  CHECK(s.request("workspace/symbol", Json{{"query", ""}})["error"]["code"] == mblint::lsp::kMethodNotFound);
  s.notify("$/unknownNotification", Json::object());  // ignored, no reply
  Json bad_params = s.request("textDocument/hover", Json{{"textDocument", 7}});
  CHECK(bad_params["error"]["code"] == mblint::lsp::kInvalidParams);
  CHECK(s.request("shutdown", nullptr)["result"].is_null());
  CHECK(s.request("textDocument/hover", Json::object())["error"]["code"] == mblint::lsp::kInvalidRequest);
  s.notify("exit", nullptr);
  CHECK(s.wait_exit() == 0);
  CHECK(s.notifications.empty());  // the early didOpen published nothing
}

TEST_CASE("lsp: exit without shutdown exits 1; end of input stops the server", "[lsp]") {
  {
    Session s;
    s.initialize(mblint::test::make_temp_dir("mblint-lsp-exit"));
    s.notify("exit", nullptr);
    CHECK(s.wait_exit() == 1);
  }
  {
    Session s;
    s.close_input();
    CHECK(s.wait_exit() == 1);
  }
}

TEST_CASE("lsp: diagnostics follow the unsaved text: open, change, fixed, closed", "[lsp]") {
  fs::path root = mblint::test::make_temp_dir("mblint-lsp-diag");
  std::string uri = mblint::lsp::path_to_uri(root / "override.yaml");
  Session s;
  s.initialize(root);
  s.open(uri, kConfig);  // never saved: nothing on disk
  Json first = s.diagnostics(uri);
  CHECK(first["version"] == 1);
  REQUIRE(has_code(first, "cp-comm-type-invalid"));
  for (const Json& d : first["diagnostics"]) {
    CHECK(d["source"] == "mblint");
    CHECK(d["codeDescription"]["href"] == std::string(mblint::kRulesDocsUrl) + "#" + d["code"].get<std::string>());
    CHECK(d["severity"].get<int>() >= 1);
    CHECK(d["severity"].get<int>() <= 3);
    if (d["code"] == "cp-comm-type-invalid") {
      CHECK(d["range"]["start"]["line"] == 4);
      CHECK(d["severity"] == 1);
    }
  }
  // Incremental change: the list becomes a single string.
  s.change(uri, 2, Json{{"range", range(4, 16, 4, 26)}, {"text", "p2p"}});
  Json second = s.diagnostics(uri);
  CHECK(second["version"] == 2);
  CHECK_FALSE(has_code(second, "cp-comm-type-invalid"));
  // Broken YAML: a syntax error replaces the findings.
  s.change(uri, 3, Json{{"range", range(0, 0, 0, 0)}, {"text", "model: [\n"}});
  Json third = s.diagnostics(uri);
  CHECK(has_code(third, "yaml-syntax"));
  s.notify("textDocument/didClose", Json{{"textDocument", {{"uri", uri}}}});
  Json closed = s.diagnostics(uri);
  CHECK(closed["diagnostics"].empty());
}

TEST_CASE("lsp: notes become related information in the file they point at", "[lsp]") {
  fs::path root = mblint::test::make_temp_dir("mblint-lsp-notes");
  std::string uri = mblint::lsp::path_to_uri(root / "c.yaml");
  Session s;
  Json published = s.start(root, uri, kConfig);
  bool related = false;
  for (const Json& d : published["diagnostics"]) {
    for (const Json& info : d.value("relatedInformation", Json::array())) {
      CHECK(info["location"]["uri"] == uri);
      CHECK_FALSE(info["message"].get<std::string>().empty());
      related = true;
    }
  }
  CHECK(related);
}

TEST_CASE("lsp: a quick fix applied to the text leaves no diagnostic of its rule", "[lsp]") {
  fs::path root = mblint::test::make_temp_dir("mblint-lsp-fix");
  std::string uri = mblint::lsp::path_to_uri(root / "override.yaml");
  Session s;
  REQUIRE(has_code(s.start(root, uri, kConfig), "cp-comm-type-invalid"));
  Json actions = s.request("textDocument/codeAction",
                           Json{{"textDocument", {{"uri", uri}}}, {"range", range(4, 0, 4, 0)},
                                {"context", {{"diagnostics", Json::array()}}}})["result"];
  REQUIRE(actions.is_array());
  const Json* fix = nullptr;
  const Json* disable = nullptr;
  for (const Json& action : actions) {
    CHECK(action["kind"] == "quickfix");
    if (action["diagnostics"][0]["code"] != "cp-comm-type-invalid") continue;
    if (action.value("isPreferred", false)) fix = &action;
    if (action["title"] == "Disable cp-comm-type-invalid for this line") disable = &action;
  }
  REQUIRE(fix);
  REQUIRE(disable);
  // The suppression comment goes at the end of the offending line.
  std::string suppressed = apply_edits(kConfig, (*disable)["edit"]["changes"][uri]);
  CHECK(suppressed.find("  cp_comm_type: [p2p, p2p] # mblint: disable=cp-comm-type-invalid -- TODO: reason\n") !=
        std::string::npos);
  // The fix, applied as the editor would, then sent back as a full change.
  std::string fixed = apply_edits(kConfig, (*fix)["edit"]["changes"][uri]);
  CHECK(fixed != kConfig);
  s.change(uri, 2, Json{{"text", fixed}});
  CHECK_FALSE(has_code(s.diagnostics(uri), "cp-comm-type-invalid"));
  // Only other kinds: nothing.
  Json none = s.request("textDocument/codeAction",
                        Json{{"textDocument", {{"uri", uri}}}, {"range", range(0, 0, 9, 0)},
                             {"context", {{"diagnostics", Json::array()}, {"only", {"refactor"}}}}})["result"];
  CHECK(none.empty());
}

TEST_CASE("lsp: positions count UTF-16 units on lines with non-ASCII text", "[lsp]") {
  fs::path root = mblint::test::make_temp_dir("mblint-lsp-utf16");
  std::string uri = mblint::lsp::path_to_uri(root / "override.yaml");
  std::string text = kConfig;
  // A comment with characters of 2, 3 and 4 bytes before the value.
  std::string line = "  cp_comm_type: [p2p, p2p]";
  std::string commented = "  cp_comm_type: &é€😀 [p2p, p2p]";
  text.replace(text.find(line), line.size(), commented);
  Session s;
  Json published = s.start(root, uri, text);
  const Json* cp = nullptr;
  for (const Json& d : published["diagnostics"]) {
    if (d["code"] == "cp-comm-type-invalid") cp = &d;
  }
  REQUIRE(cp);
  // The value starts at its anchor `&é€😀` (16 units in) and ends after the
  // list: 16 + "&" + é € (1 unit each) + 😀 (2 units) + " " + "[p2p, p2p]" =
  // 32 units (37 bytes).
  CHECK((*cp)["range"]["start"]["character"] == 16);
  CHECK((*cp)["range"]["end"]["character"] == 32);
  // A change addressed in UTF-16 units lands on the right bytes.
  s.change(uri, 2, Json{{"range", range(4, 22, 4, 32)}, {"text", "p2p"}});
  CHECK_FALSE(has_code(s.diagnostics(uri), "cp-comm-type-invalid"));
}

TEST_CASE("lsp: hover shows the effective value, each layer, and the parallel layout", "[lsp]") {
  fs::path root = mblint::test::make_temp_dir("mblint-lsp-hover");
  fs::create_directories(root / "conf");
  std::string yaml_path = (root / "conf" / "override.yaml").string();
  std::string script = "#!/bin/bash\n"
                       "torchrun --nnodes=2 --nproc-per-node=8 pretrain_llama3.py \\\n"
                       "  --config-file conf/override.yaml \\\n"
                       "  model.tensor_model_parallel_size=4\n";
  {
    std::ofstream(root / "launch.sbatch") << script;  // on disk only: found by scanning the workspace
  }
  std::string uri = mblint::lsp::path_to_uri(yaml_path);
  Session s({"--recipe", "llama3_8b_pretrain_config"});
  s.start(root, uri, kConfig);
  Json result = s.request("textDocument/hover", Json{{"textDocument", {{"uri", uri}}},
                                                     {"position", {{"line", 1}, {"character", 5}}}})["result"];
  REQUIRE(result.is_object());
  std::string text = result["contents"]["value"];
  INFO(text);
  CHECK(text.find("**model.tensor_model_parallel_size** = `4`") != std::string::npos);
  CHECK(text.find("config file") != std::string::npos);
  CHECK(text.find("conf/override.yaml:2") != std::string::npos);
  CHECK(text.find("override (effective)") != std::string::npos);
  CHECK(text.find("launch.sbatch:4") != std::string::npos);
  CHECK(text.find("world size: **16**") != std::string::npos);
  CHECK(text.find("data parallel (DP): **1**") != std::string::npos);  // 16 / (4 x 2 x 2)
  CHECK(text.find("microbatches per step: **64**") != std::string::npos);
  CHECK(text.find("minimum GPUs") != std::string::npos);
  CHECK(text.find("pipeline bubble") != std::string::npos);
  CHECK(text.find("Checked partly") == std::string::npos);  // the launch, the recipe and the allocation are known
  CHECK(result["range"]["start"]["line"] == 1);
  // Nothing under the cursor: no hover.
  Json empty = s.request("textDocument/hover", Json{{"textDocument", {{"uri", uri}}},
                                                    {"position", {{"line", 40}, {"character", 0}}}})["result"];
  CHECK(empty.is_null());
}

TEST_CASE("lsp: an override YAML is linted with the script that launches it; edits in either re-lint both", "[lsp]") {
  fs::path root = mblint::test::make_temp_dir("mblint-lsp-context");
  std::string yaml_uri = mblint::lsp::path_to_uri(root / "override.yaml");
  std::string script_uri = mblint::lsp::path_to_uri(root / "launch.sh");
  std::string script = "#!/bin/bash\n"
                       "torchrun --nnodes=1 --nproc-per-node=8 pretrain.py --config-file override.yaml\n";
  std::string yaml = "model:\n  tensor_model_parallel_size: 2\n";
  Session s({"--recipe", "llama3_8b_pretrain_config"});
  s.initialize(root);
  s.open(script_uri, script, "shellscript");
  s.open(yaml_uri, yaml);
  s.diagnostics(script_uri);
  CHECK_FALSE(has_code(s.diagnostics(yaml_uri), "world-size-divisibility"));
  // TP 3 does not divide the script's 8 GPUs: the YAML shows it.
  s.change(yaml_uri, 2, Json{{"range", range(1, 30, 1, 31)}, {"text", "3"}});
  Json yaml_diags = s.diagnostics(yaml_uri);
  CHECK(has_code(yaml_diags, "world-size-divisibility"));
  // The script is linted again too (its job reads the unsaved YAML).
  s.diagnostics(script_uri);
  // Giving the script 6 GPUs per node fixes it: the YAML is linted again.
  s.change(script_uri, 2, Json{{"range", range(1, 37, 1, 38)}, {"text", "6"}});  // --nproc-per-node=6
  s.diagnostics(script_uri);
  CHECK_FALSE(has_code(s.diagnostics(yaml_uri), "world-size-divisibility"));
}

TEST_CASE("lsp: a burst of 1,000 changes is linted at its newest version, never older after newer", "[lsp]") {
  fs::path root = mblint::test::make_temp_dir("mblint-lsp-burst");
  std::string uri = mblint::lsp::path_to_uri(root / "override.yaml");
  Session s;
  s.start(root, uri, kConfig);
  std::string burst;
  for (int v = 2; v <= 1001; ++v) {  // toggle the pipeline size 2 <-> 3; ends at 2 (v odd)
    Json change{{"jsonrpc", "2.0"},
                {"method", "textDocument/didChange"},
                {"params", {{"textDocument", {{"uri", uri}, {"version", v}}},
                            {"contentChanges", Json::array({Json{{"range", range(2, 32, 2, 33)}, {"text", v % 2 ? "2" : "3"}}})}}}};
    std::string body = change.dump();
    burst += fmt::format("Content-Length: {}\r\n\r\n{}", body.size(), body);
  }
  s.send_raw(burst);
  int64_t last = 0;
  int publishes = 0;
  Json newest;
  while (last < 1001) {
    Json published = s.diagnostics(uri);
    CHECK(published["version"].get<int64_t>() > last);
    last = published["version"].get<int64_t>();
    newest = published;
    ++publishes;
  }
  CHECK(publishes < 1000);  // coalesced
  // The newest text: the list problem is still there, the hover reads PP 2.
  CHECK(has_code(newest, "cp-comm-type-invalid"));
  Json hover = s.request("textDocument/hover", Json{{"textDocument", {{"uri", uri}}},
                                                    {"position", {{"line", 2}, {"character", 32}}}})["result"];
  CHECK(hover["contents"]["value"].get<std::string>().find("= `2`") != std::string::npos);
  CHECK_FALSE(s.read_message(200));  // nothing stale arrives afterwards
}

TEST_CASE("lsp: malformed input gets an error response or silence, and the server keeps serving", "[lsp]") {
  fs::path root = mblint::test::make_temp_dir("mblint-lsp-bad");
  Session s;
  s.initialize(root);
  auto frame = [](const std::string& body, std::optional<size_t> length = std::nullopt) {
    return fmt::format("Content-Length: {}\r\n\r\n{}", length.value_or(body.size()), body);
  };
  // Not JSON: ParseError with a null id.
  s.send_raw(frame("{not json"));
  auto parse_error = s.read_message();
  REQUIRE(parse_error);
  CHECK((*parse_error)["error"]["code"] == mblint::lsp::kParseError);
  CHECK((*parse_error)["id"].is_null());
  // JSON that is not a request.
  s.send_raw(frame("[1,2]"));
  CHECK((*s.read_message())["error"]["code"] == mblint::lsp::kInvalidRequest);
  s.send_raw(frame(R"({"jsonrpc":"2.0","id":{"a":1},"method":"shutdown"})"));
  CHECK((*s.read_message())["error"]["code"] == mblint::lsp::kInvalidRequest);
  // Content-Length too small, then a good request: a ParseError, then the answer.
  std::string ping = R"({"jsonrpc":"2.0","id":99,"method":"workspace/symbol","params":{"query":""}})";
  s.send_raw(frame(ping, ping.size() - 10) + frame(ping));
  CHECK((*s.read_message())["error"]["code"] == mblint::lsp::kParseError);
  Json answer = s.response(99);
  CHECK(answer["error"]["code"] == mblint::lsp::kMethodNotFound);
  // Content-Length too large: the next message is found inside the body.
  std::string ping2 = R"({"jsonrpc":"2.0","id":100,"method":"workspace/symbol","params":{"query":""}})";
  s.send_raw(frame(ping, ping.size() + 40) + frame(ping2));
  CHECK((*s.read_message())["error"]["code"] == mblint::lsp::kParseError);
  CHECK(s.response(100)["error"]["code"] == mblint::lsp::kMethodNotFound);
  // Headers without a length, junk, a negative and an absurd length.
  s.send_raw("Content-Type: x\r\n\r\n");
  s.send_raw("garbage garbage\r\n\r\n");
  s.send_raw("Content-Length: -5\r\n\r\n");
  s.send_raw("Content-Length: 99999999999\r\n\r\n");
  s.close_input();
  CHECK(s.wait_exit() == 1);  // the end of input stops it (no shutdown was asked)
  CHECK(s.log.str().find("mblint lsp:") != std::string::npos);  // problems were logged on stderr
}

TEST_CASE("lsp: a huge document and changes to unknown documents do not break the server", "[lsp]") {
  fs::path root = mblint::test::make_temp_dir("mblint-lsp-huge");
  std::string uri = mblint::lsp::path_to_uri(root / "huge.yaml");
  std::string huge = "model:\n";
  while (huge.size() < (9u << 20)) huge += fmt::format("  # {}\n", std::string(100, 'x'));
  Session s;
  s.initialize(root);
  s.change(mblint::lsp::path_to_uri(root / "never-opened.yaml"), 2, Json{{"text", "x"}});
  s.open(uri, huge);
  Json published = s.diagnostics(uri);
  CHECK(has_code(published, "unreadable-file"));  // over the 8 MiB input cap, said so
  s.change(uri, 2, Json{{"range", range(1, 0, 1, 0)}, {"text", "  tensor_model_parallel_size: 2\n"}});
  CHECK(s.diagnostics(uri)["version"] == 2);
  // A position past the end clamps.
  s.change(uri, 3, Json{{"range", range(999999999, 5, 999999999, 9)}, {"text", "\n"}});
  CHECK(s.diagnostics(uri)["version"] == 3);
}

// --- memory estimate on hover, the project config's launch context, "disable RULE" applied -------

namespace {

Json hover_at(Session& s, const std::string& uri, uint32_t line, uint32_t character) {
  return s.request("textDocument/hover", Json{{"textDocument", {{"uri", uri}}},
                                              {"position", {{"line", line}, {"character", character}}}})["result"];
}

std::string hover_text(Session& s, const std::string& uri, uint32_t line, uint32_t character) {
  Json result = hover_at(s, uri, line, character);
  REQUIRE(result.is_object());
  return result["contents"]["value"].get<std::string>();
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::multiset<std::string> code_set(const Json& published) {
  auto all = codes(published);
  return {all.begin(), all.end()};
}

// Ask for the actions on the line of `diagnostic`, apply the "Disable RULE"
// one to `text` as the editor would and send the result; returns the title
// and the new diagnostics.
std::pair<std::string, Json> apply_disable(Session& s, const std::string& uri, std::string& text, int version,
                                           const Json& diagnostic) {
  uint32_t line = diagnostic["range"]["start"]["line"];
  std::string rule = diagnostic["code"];
  Json actions = s.request("textDocument/codeAction",
                           Json{{"textDocument", {{"uri", uri}}}, {"range", range(line, 0, line, 0)},
                                {"context", {{"diagnostics", Json::array()}}}})["result"];
  const Json* disable = nullptr;
  for (const Json& action : actions) {
    if (action["diagnostics"][0]["code"] == rule && action["title"].get<std::string>().rfind("Disable " + rule, 0) == 0)
      disable = &action;
  }
  INFO("no disable action for " << rule << " on line " << line);
  REQUIRE(disable);
  REQUIRE((*disable)["edit"]["changes"].size() == 1);  // only this document changes
  text = apply_edits(text, (*disable)["edit"]["changes"][uri]);
  s.change(uri, version, Json{{"text", text}});
  return {(*disable)["title"].get<std::string>(), s.diagnostics(uri)};
}

// Apply "Disable RULE" to each finding of `uri` in turn: each one goes and no
// finding appears (no unused-suppression, no suppression-without-reason).
void disable_each(Session& s, const std::string& uri, std::string& text, Json published,
                  std::vector<std::string>& titles) {
  int version = published["version"].get<int>();
  while (!published["diagnostics"].empty()) {
    Json target = published["diagnostics"][0];
    std::multiset<std::string> expected = code_set(published);
    expected.erase(expected.find(target["code"].get<std::string>()));
    auto [title, after] = apply_disable(s, uri, text, ++version, target);
    INFO(text);
    CHECK(code_set(after) == expected);
    titles.push_back(title);
    published = after;
  }
}

}  // namespace

TEST_CASE("lsp: hover on a parallel size shows the per-GPU memory estimate of the job", "[lsp]") {
  mblint::test::LintRun run("mblint-lsp-memory");
  run.write("conf/override.yaml", kConfig);
  run.write("launch.sbatch", "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gres=gpu:h100:8\n"
                             "srun --ntasks-per-node=8 python pretrain_llama3.py --config-file conf/override.yaml "
                             "model.context_parallel_size=1\n");
  // What `mblint estimate` computes for the same job.
  run.options.recipe = run.value("llama3_8b_pretrain_config");
  const mblint::Job& job = run.lint("launch.sbatch");
  std::optional<mblint::MemoryEstimate> expected = mblint::estimate_memory(job, run.derived());
  REQUIRE(expected);
  REQUIRE(expected->capacity > 0);
  std::optional<mblint::SpeedEstimate> speed = mblint::estimate_speed(job, run.derived());
  REQUIRE(speed);

  std::string uri = mblint::lsp::path_to_uri(run.dir / "conf" / "override.yaml");
  Session s({"--recipe", "llama3_8b_pretrain_config"});
  s.start(run.dir, uri, kConfig);
  auto gib = [](double v) { return fmt::format("{:.1f} GiB", v); };
  for (uint32_t line : {1u, 2u, 7u, 8u}) {  // TP, PP, global and micro batch size
    std::string text = hover_text(s, uri, line, 4);
    INFO(text);
    CHECK(contains(text, "**Parallel layout**"));
    CHECK(contains(text, "**Memory per GPU (estimate)**"));
    CHECK(contains(text, "- most loaded rank: " + expected->rank));
    CHECK(contains(text, fmt::format("- total: **{}** of {} ({:.0f}%, H100 80GB HBM3)", gib(expected->total),
                                     gib(expected->capacity), 100 * expected->total / expected->capacity)));
    CHECK(contains(text, fmt::format("headroom {}", gib(expected->capacity - expected->total))));
    CHECK(contains(text, fmt::format("weights {} · gradients {} · optimizer states {} · activations {}",
                                     gib(expected->weights), gib(expected->gradients), gib(expected->optimizer),
                                     gib(expected->activations))));
    CHECK(contains(text, "an upper bound"));  // a recipe's own code is not read
    CHECK(contains(text, "**Step time (estimate)**"));
    CHECK(contains(text, fmt::format("- **{:.0f} tokens/s/GPU**", speed->tokens_per_sec_per_gpu)));
  }
  // num_layers: read by the estimate, not a parallel size.
  std::string layers = hover_text(s, uri, 5, 4);
  CHECK(contains(layers, "**Memory per GPU (estimate)**"));
  CHECK_FALSE(contains(layers, "**Parallel layout**"));
  // cp_comm_type: neither.
  std::string comm = hover_text(s, uri, 4, 4);
  CHECK_FALSE(contains(comm, "Memory per GPU"));
  CHECK_FALSE(contains(comm, "Parallel layout"));
  // The estimate follows the unsaved text: PP 2 -> 4 moves memory off the busiest stage.
  s.change(uri, 2, Json{{"range", range(2, 32, 2, 33)}, {"text", "4"}});
  s.diagnostics(uri);
  std::string pp4 = hover_text(s, uri, 2, 4);
  CHECK_FALSE(contains(pp4, fmt::format("- total: **{}**", gib(expected->total))));
  CHECK(contains(pp4, "- total: **"));
}

TEST_CASE("lsp: hover says why the memory estimate is missing", "[lsp]") {
  fs::path root = mblint::test::make_temp_dir("mblint-lsp-memory-why");
  std::string uri = mblint::lsp::path_to_uri(root / "override.yaml");
  Session s;  // no recipe: the model shape is unknown
  s.start(root, uri, kConfig);
  std::string text = hover_text(s, uri, 1, 4);
  INFO(text);
  CHECK(contains(text, "**Parallel layout**"));
  CHECK(contains(text, "- not estimated: the model shape is not known: hidden_size, num_attention_heads, seq_length"));
  // The job is checked partly, and the hover says what is missing and how to supply it.
  CHECK(contains(text, "**Checked partly**: what mblint could not resolve for this job"));
  CHECK(contains(text, "- recipe unknown: "));
  CHECK(contains(text, "--recipe"));
}

TEST_CASE("lsp: the project config's context names the launch script of an open YAML; edits in either re-lint both",
          "[lsp][project-config]") {
  fs::path root = mblint::test::make_temp_dir("mblint-lsp-project-context");
  fs::create_directories(root / "conf");
  fs::create_directories(root / "launch");
  std::ofstream(root / ".mblint.yaml") << "context:\n  - {files: \"conf/*.yaml\", launch: launch/run.sbatch}\n";
  // `--config-file "$CONFIG"`: reading the script cannot tell which YAML it runs.
  std::string script = "#!/bin/bash\n"
                       "#SBATCH --nodes=1\n"
                       "CONFIG=$1\n"
                       "srun torchrun --nproc-per-node 8 pretrain_llama3_8b.py --config-file \"$CONFIG\" \\\n"
                       "    model.num_layers=5\n";
  std::ofstream(root / "launch" / "run.sbatch") << script;
  std::string yaml = "model:\n  tensor_model_parallel_size: 3\n  pipeline_model_parallel_size: 2\n"
                     "  context_parallel_size: 1\n";
  std::string yaml_uri = mblint::lsp::path_to_uri(root / "conf" / "a.yaml");
  std::string script_uri = mblint::lsp::path_to_uri(root / "launch" / "run.sbatch");
  REQUIRE_FALSE(mblint::lsp::script_names_config(script, (root / "conf" / "a.yaml").string()));
  auto find = [](const Json& published, const std::string& rule) -> std::optional<Json> {
    for (const Json& d : published["diagnostics"]) {
      if (d["code"] == rule) return d;
    }
    return std::nullopt;
  };
  auto points_into = [](const Json& d, const std::string& uri) {
    for (const Json& info : d.value("relatedInformation", Json::array())) {
      if (info["location"]["uri"] == uri) return true;
    }
    return false;
  };

  Session s;
  s.initialize(root);
  s.open(yaml_uri, yaml);
  // TP 3 x PP 2 does not divide the script's 8 GPUs: found in the YAML, with notes in the script.
  auto world = find(s.diagnostics(yaml_uri), "world-size-divisibility");
  REQUIRE(world);
  CHECK((*world)["range"]["start"]["line"] == 1);
  CHECK(points_into(*world, script_uri));
  CHECK(contains(hover_text(s, yaml_uri, 1, 4), "world size: **8**"));

  // The script opened: its lint takes the open YAML, so the script's
  // num_layers=5 meets the YAML's PP 2.
  s.open(script_uri, script, "shellscript");
  auto layers = find(s.diagnostics(script_uri), "layers-divisible-by-pp");
  REQUIRE(layers);
  CHECK((*layers)["range"]["start"]["line"] == 4);
  CHECK(points_into(*layers, yaml_uri));
  // The YAML is linted again too: it now reads the script's buffer.
  CHECK(has_code(s.diagnostics(yaml_uri), "world-size-divisibility"));

  // An edit in the YAML (PP 2 -> 1) re-lints the script.
  s.change(yaml_uri, 2, Json{{"range", range(2, 32, 2, 33)}, {"text", "1"}});
  CHECK(has_code(s.diagnostics(yaml_uri), "world-size-divisibility"));  // 8 % 3 still
  CHECK_FALSE(has_code(s.diagnostics(script_uri), "layers-divisible-by-pp"));
  // An edit in the script (6 GPUs per node) re-lints the YAML: TP 3 fits.
  s.change(script_uri, 2, Json{{"range", range(3, 31, 3, 32)}, {"text", "6"}});
  s.diagnostics(script_uri);
  CHECK_FALSE(has_code(s.diagnostics(yaml_uri), "world-size-divisibility"));
  CHECK(contains(hover_text(s, yaml_uri, 1, 4), "world size: **6**"));
  // The project config saved without the context: opening (or saving) it
  // re-lints the files under it, and the YAML is linted alone.
  std::ofstream(root / ".mblint.yaml") << "context: []\n";
  s.open(mblint::lsp::path_to_uri(root / ".mblint.yaml"), "context: []\n");
  s.diagnostics(yaml_uri);
  s.diagnostics(script_uri);
  CHECK(contains(hover_text(s, yaml_uri, 1, 4), "world size: **unknown**"));

  // A YAML the context does not cover is linted alone.
  std::string other_uri = mblint::lsp::path_to_uri(root / "other.yaml");
  s.open(other_uri, yaml);
  CHECK_FALSE(has_code(s.diagnostics(other_uri), "world-size-divisibility"));
  // --no-config: the context is not read.
  Session plain({"--no-config"});
  CHECK_FALSE(has_code(plain.start(root, yaml_uri, yaml), "world-size-divisibility"));
}

TEST_CASE("lsp: 'Disable RULE' applied to a YAML silences each finding and adds none", "[lsp]") {
  fs::path root = mblint::test::make_temp_dir("mblint-lsp-disable-yaml");
  std::string uri = mblint::lsp::path_to_uri(root / "override.yaml");
  // Three errors on the TP line, whose note is suppressed already without a
  // reason; one on cp_comm_type; and on the PP line a suppression of a rule
  // that does not exist (itself a finding).
  std::string text = "model:\n"
                     "  tensor_model_parallel_size: 3  # mblint: disable=tp-without-sequence-parallel\n"
                     "  pipeline_model_parallel_size: 1  # mblint: disable=MB999\n"
                     "  cp_comm_type: [p2p, p2p]\n";
  Session s({"--recipe", "llama3_8b_pretrain_config", "--nodes", "1", "--gpus-per-node", "8"});
  Json published = s.start(root, uri, text);
  REQUIRE(has_code(published, "unused-suppression"));
  REQUIRE(has_code(published, "heads-divisible-by-tp"));
  REQUIRE(has_code(published, "world-size-divisibility"));
  REQUIRE(has_code(published, "cp-comm-type-invalid"));
  REQUIRE_FALSE(has_code(published, "tp-without-sequence-parallel"));
  std::vector<std::string> titles;
  disable_each(s, uri, text, published, titles);
  INFO(text);
  // The TP line keeps one comment: the errors joined it, with a placeholder reason.
  size_t tp = text.find("  tensor_model_parallel_size: 3  # mblint: disable=tp-without-sequence-parallel,");
  REQUIRE(tp != std::string::npos);
  std::string tp_line = text.substr(tp, text.find('\n', tp) - tp);
  CHECK(std::count(tp_line.begin(), tp_line.end(), '#') == 1);
  for (std::string rule : {"heads-divisible-by-tp", "query-groups-divisible-by-tp", "world-size-divisibility"}) {
    CHECK(contains(tp_line, "," + rule));
  }
  CHECK(tp_line.ends_with(" -- TODO: reason"));
  CHECK(contains(text, "  pipeline_model_parallel_size: 1  # mblint: disable=MB999,unused-suppression\n"));
  CHECK(contains(text, "  cp_comm_type: [p2p, p2p] # mblint: disable=cp-comm-type-invalid -- TODO: reason\n"));
  CHECK(std::count(titles.begin(), titles.end(), "Disable heads-divisible-by-tp for this line (add it to the suppression there)") == 1);
  CHECK(std::count(titles.begin(), titles.end(), "Disable cp-comm-type-invalid for this line") == 1);

  // An error suppressed without a reason is not honoured: the action gives
  // the suppression a reason instead of naming the rule twice.
  std::string refused_uri = mblint::lsp::path_to_uri(root / "refused.yaml");
  std::string refused = "model:\n  tensor_model_parallel_size: 3  # mblint: disable=heads-divisible-by-tp\n";
  s.open(refused_uri, refused);
  Json before = s.diagnostics(refused_uri);
  REQUIRE(has_code(before, "suppression-without-reason"));
  const Json* heads = nullptr;
  for (const Json& d : before["diagnostics"]) {
    if (d["code"] == "heads-divisible-by-tp") heads = &d;
  }
  REQUIRE(heads);
  auto [title, after] = apply_disable(s, refused_uri, refused, 2, *heads);
  CHECK(title == "Disable heads-divisible-by-tp for this line (give a reason to the suppression there)");
  CHECK(refused == "model:\n  tensor_model_parallel_size: 3  # mblint: disable=heads-divisible-by-tp -- TODO: reason\n");
  std::multiset<std::string> expected = code_set(before);
  expected.erase("heads-divisible-by-tp");
  expected.erase("suppression-without-reason");
  CHECK(code_set(after) == expected);
}

TEST_CASE("lsp: 'Disable RULE' in a launch script: end of line, above the command, the whole file", "[lsp]") {
  fs::path root = mblint::test::make_temp_dir("mblint-lsp-disable-sh");
  Session s;
  s.initialize(root);
  auto disable_all = [&](const std::string& name, std::string text, std::vector<std::string>& titles) {
    std::string uri = mblint::lsp::path_to_uri(root / name);
    s.open(uri, text, "shellscript");
    Json published = s.diagnostics(uri);
    REQUIRE_FALSE(published["diagnostics"].empty());
    disable_each(s, uri, text, published, titles);
    return text;
  };
  std::string head = "#!/bin/bash\n#SBATCH --nodes=4\n#SBATCH --gres=gpu:h100:8\n"
                     "CUDA_DEVICE_MAX_CONNECTIONS=1 srun --ntasks-per-node=8 python scripts/training/run_recipe.py \\\n"
                     "    --recipe llama3_70b_pretrain_32gpu_h100_bf16_config \\\n";
  // A finding on the command's last line: the comment ends that line.
  std::vector<std::string> titles;
  std::string last = disable_all("last.sh", head + "    model.cp_comm_type=[p2p,p2p]\n", titles);
  CHECK(last == head + "    model.cp_comm_type=[p2p,p2p] # mblint: disable=cp-comm-type-invalid -- TODO: reason\n");
  CHECK(titles == std::vector<std::string>{"Disable cp-comm-type-invalid for this line"});
  // Findings on a continuation line: one comment alone above the command,
  // which every further finding of the command joins.
  titles.clear();
  std::string middle = disable_all("middle.sh", head + "    model.tensor_model_parallel_size=3 \\\n"
                                                       "    model.cp_comm_type=[p2p,p2p]\n", titles);
  INFO(middle);
  CHECK(middle.starts_with("#!/bin/bash\n#SBATCH --nodes=4\n#SBATCH --gres=gpu:h100:8\n# mblint: disable="));
  CHECK(std::count(middle.begin(), middle.end(), '#') == 4);  // #!, two #SBATCH, one suppression
  CHECK(contains(middle, ",cp-comm-type-invalid"));
  CHECK(contains(middle, " -- TODO: reason\nCUDA_DEVICE_MAX_CONNECTIONS=1 srun --ntasks-per-node=8"));
  CHECK(contains(middle, "    model.tensor_model_parallel_size=3 \\\n    model.cp_comm_type=[p2p,p2p]\n"));
  REQUIRE(titles.size() >= 2);
  CHECK(contains(titles[0], " for this command"));
  // A finding on an #SBATCH line (itself a comment): the whole file, below `#!`.
  titles.clear();
  std::string sbatch = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gres=gpu:h100:8\n"
                       "CUDA_DEVICE_MAX_CONNECTIONS=1 srun --ntasks-per-node=8 python \\\n"
                       "    scripts/training/run_recipe.py \\\n"
                       "    --recipe llama3_70b_pretrain_32gpu_h100_bf16_config\n";
  std::string whole = disable_all("sbatch.sh", sbatch, titles);
  CHECK(whole == "#!/bin/bash\n# mblint: disable-file=world-size-divisibility -- TODO: reason\n" + sbatch.substr(12));
  CHECK(titles == std::vector<std::string>{"Disable world-size-divisibility in this file"});
}

// --- latency work: value edits patch the previous parse (lint/load/yaml/yaml_patch.h) ------------------

namespace {

// What a fresh server (nothing cached) publishes for `text`.
Json fresh_diagnostics(const fs::path& root, const std::string& uri, const std::string& text) {
  Session fresh;
  return fresh.start(root, uri, text)["diagnostics"];
}

}  // namespace

TEST_CASE("lsp: value edits take the patched parse and publish exactly what a full lint publishes", "[lsp]") {
  fs::path root = mblint::test::make_temp_dir("mblint-lsp-patch");
  std::string uri = mblint::lsp::path_to_uri(root / "config.yaml");
  std::string text = mblint::test::read_file(mblint::test::source_dir() /
                                             "fixtures/rules/moe-router-padding-invalid/fires-dump-no-fp8/config.yaml");
  // Value edits (line, old value, new value) that change the findings, then a
  // structural edit, then value edits again on the re-parsed text.
  struct Edit {
    uint32_t line;
    std::string key;
    std::string value;
  };
  const std::vector<Edit> edits = {
      {8, "  tensor_model_parallel_size: ", "3"},   // heads no longer divisible
      {15, "  moe_router_padding_for_quantization: ", "false"},  // the finding goes away
      {8, "  tensor_model_parallel_size: ", "'2'"},  // a quoted string
      {3, "  num_layers: ", "null"},
  };
  Session s;
  s.start(root, uri, text);
  int version = 1;
  auto apply = [&](Json change) {
    s.change(uri, ++version, change);
    if (change.contains("range")) {
      text = apply_edits(text, Json::array({Json{{"range", change["range"]}, {"newText", change["text"]}}}));
    } else {
      text = change["text"].get<std::string>();
    }
    Json published = s.diagnostics(uri);
    CHECK(published["version"] == version);
    INFO(text);
    CHECK(published["diagnostics"] == fresh_diagnostics(root, uri, text));
    return published;
  };
  auto value_edit = [&](const Edit& edit) {
    size_t begin = 0;
    for (uint32_t i = 0; i < edit.line; ++i) begin = text.find('\n', begin) + 1;
    size_t end = text.find('\n', begin);
    REQUIRE(text.compare(begin, edit.key.size(), edit.key) == 0);
    auto from = static_cast<uint32_t>(edit.key.size());
    return apply(Json{{"range", range(edit.line, from, edit.line, static_cast<uint32_t>(end - begin))},
                      {"text", edit.value}});
  };
  CHECK(has_code(value_edit(edits[0]), "heads-divisible-by-tp"));
  CHECK_FALSE(has_code(value_edit(edits[1]), "moe-router-padding-invalid"));
  value_edit(edits[2]);
  apply(Json{{"range", range(17, 0, 17, 0)}, {"text", "  exit_interval: 5\n  eval_iters: 2\n"}});  // structural
  value_edit(edits[3]);
  value_edit(Edit{21, "  micro_batch_size: ", "3"});  // moved down by the structural edit
  // Structural edits between siblings re-parse just those lines: a nested
  // entry, then a new top-level key between sections.
  apply(Json{{"range", range(21, 0, 21, 0)}, {"text", "  exit_duration_in_mins: 30\n"}});
  apply(Json{{"range", range(16, 0, 16, 0)}, {"text", "rng:\n  seed: 5\n"}});
  // A client that sends the whole text: the same fast path, the same result.
  std::string whole = text;
  whole.replace(whole.find("num_layers: null"), 16, "num_layers: 6");
  apply(Json{{"text", whole}});
  s.request("shutdown", nullptr);
  s.notify("exit", Json::object());
  CHECK(s.wait_exit() == 0);
  // Every value edit was patched, the first structural one (before a
  // section's first entry) re-parsed its section, the others their lines;
  // the open was the one full parse.
  CHECK(s.server.yaml_cache.patches == 6);
  CHECK(s.server.yaml_cache.block_patches == 2);
  CHECK(s.server.yaml_cache.section_patches == 1);
  CHECK(s.server.yaml_cache.parses == 1);
}

// --- files changed outside the editor -----------------------------------------------------------

TEST_CASE("lsp: launch scripts and project configs changed on disk re-lint the open YAML (watched files)", "[lsp]") {
  fs::path root = mblint::test::make_temp_dir("mblint-lsp-watched");
  fs::path script = root / "launch.sh";
  std::string yaml_uri = mblint::lsp::path_to_uri(root / "override.yaml");
  std::string script_uri = mblint::lsp::path_to_uri(script);
  auto write = [](const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; };
  auto watched = [&](Session& s, const std::string& uri, int type) {
    s.notify("workspace/didChangeWatchedFiles", Json{{"changes", Json::array({Json{{"uri", uri}, {"type", type}}})}});
  };
  Session s({"--recipe", "llama3_8b_pretrain_config"});
  Json capabilities{{"workspace", {{"didChangeWatchedFiles", {{"dynamicRegistration", true}}}}}};
  Json init = s.request("initialize", Json{{"processId", nullptr},
                                          {"rootUri", mblint::lsp::path_to_uri(root)},
                                          {"capabilities", capabilities}});
  REQUIRE(init.contains("result"));
  s.notify("initialized", Json::object());
  // The server asks the client to watch the files a lint reads.
  std::optional<Json> registration = s.read_message();
  REQUIRE(registration);
  CHECK((*registration)["method"] == "client/registerCapability");
  Json registered = (*registration)["params"]["registrations"][0];
  CHECK(registered["method"] == "workspace/didChangeWatchedFiles");
  CHECK(registered["registerOptions"]["watchers"].size() == 3);
  s.send(Json{{"jsonrpc", "2.0"}, {"id", (*registration)["id"]}, {"result", nullptr}});  // the client's answer

  s.open(yaml_uri, "model:\n  tensor_model_parallel_size: 3\n");
  CHECK_FALSE(has_code(s.diagnostics(yaml_uri), "world-size-divisibility"));
  // A checkout adds the script that launches the YAML on 8 GPUs: TP 3 does not divide them.
  write(script, "#!/bin/bash\ntorchrun --nnodes=1 --nproc-per-node=8 pretrain.py --config-file override.yaml\n");
  watched(s, script_uri, 1);
  CHECK(has_code(s.diagnostics(yaml_uri), "world-size-divisibility"));
  // Another tool gives it 6 GPUs per node.
  write(script, "#!/bin/bash\ntorchrun --nnodes=1 --nproc-per-node=6 pretrain.py --config-file override.yaml\n");
  watched(s, script_uri, 2);
  CHECK_FALSE(has_code(s.diagnostics(yaml_uri), "world-size-divisibility"));
  // A project config that turns the rule's error into... nothing: disabled.
  write(script, "#!/bin/bash\ntorchrun --nnodes=1 --nproc-per-node=8 pretrain.py --config-file override.yaml\n");
  watched(s, script_uri, 2);
  CHECK(has_code(s.diagnostics(yaml_uri), "world-size-divisibility"));
  write(root / ".mblint.yaml", "rules:\n  disable: [world-size-divisibility]\n");
  watched(s, mblint::lsp::path_to_uri(root / ".mblint.yaml"), 1);
  CHECK_FALSE(has_code(s.diagnostics(yaml_uri), "world-size-divisibility"));
  fs::remove(root / ".mblint.yaml");
  watched(s, mblint::lsp::path_to_uri(root / ".mblint.yaml"), 3);
  CHECK(has_code(s.diagnostics(yaml_uri), "world-size-divisibility"));
  // The script is deleted: the YAML is linted alone again.
  fs::remove(script);
  watched(s, script_uri, 3);
  CHECK_FALSE(has_code(s.diagnostics(yaml_uri), "world-size-divisibility"));
  // An open file's buffer wins over its file on disk: a change on disk to it is ignored.
  s.open(script_uri, "#!/bin/bash\ntorchrun --nnodes=1 --nproc-per-node=8 pretrain.py --config-file override.yaml\n",
         "shellscript");
  s.diagnostics(script_uri);
  CHECK(has_code(s.diagnostics(yaml_uri), "world-size-divisibility"));
  write(script, "#!/bin/bash\necho nothing\n");
  watched(s, script_uri, 2);
  Json hover = s.request("textDocument/hover", Json{{"textDocument", {{"uri", yaml_uri}}},
                                                    {"position", {{"line", 1}, {"character", 4}}}});
  CHECK(hover.contains("result"));
  s.request("shutdown", nullptr);
  s.notify("exit", Json::object());
  CHECK(s.wait_exit() == 0);
  fs::remove_all(root);
}

TEST_CASE("lsp: a client that cannot watch files is not asked to", "[lsp]") {
  fs::path root = mblint::test::make_temp_dir("mblint-lsp-nowatch");
  Session s;
  s.initialize(root);  // no workspace capabilities
  std::string uri = mblint::lsp::path_to_uri(root / "a.yaml");
  s.open(uri, "model:\n  tensor_model_parallel_size: 2\n");
  s.diagnostics(uri);
  for (const Json& message : s.notifications) CHECK(message.value("method", "") != "client/registerCapability");
  // A malformed capability is no reason to fail initialize.
  Session t;
  Json bad{{"workspace", {{"didChangeWatchedFiles", {{"dynamicRegistration", "yes"}}}}}};
  CHECK(t.request("initialize", Json{{"rootUri", mblint::lsp::path_to_uri(root)}, {"capabilities", bad}})
            .contains("result"));
  fs::remove_all(root);
}

TEST_CASE("lsp: misspelled keys and mistyped values of a YAML applied to a recipe get quick fixes that clear them",
          "[lsp]") {
  fs::path root = mblint::test::make_temp_dir("mblint-lsp-key-fixes");
  std::string uri = mblint::lsp::path_to_uri(root / "override.yaml");
  // Field review A.3 (three misspelled keys: once taken for another
  // framework's file) plus a value of the wrong type.
  std::string text = "model:\n"
                     "  tensor_model_paralel_size: 2\n"
                     "  pipeline_model_paralel_size: 2\n"
                     "  sequence_paralel: true\n"
                     "train:\n"
                     "  micro_batch_size: \"1\"\n";
  Session s({"--recipe", "llama3_8b_pretrain_config", "--nodes", "1", "--gpus-per-node", "8"});
  Json published = s.start(root, uri, text);
  std::multiset<std::string> found = code_set(published);
  REQUIRE(found.count("unknown-key") == 3);
  REQUIRE(found.count("value-type-mismatch") == 1);
  // Errors and warnings (LSP severity 1 and 2): a fix may bring a note, never one of these.
  auto serious = [](const Json& diagnostics) {
    std::multiset<std::string> out;
    for (const Json& d : diagnostics["diagnostics"]) {
      if (d["severity"].get<int>() <= 2) out.insert(d["code"].get<std::string>());
    }
    return out;
  };
  int version = 1;
  std::vector<std::string> titles;
  // Each finding of the two rules in turn, top to bottom: its quick fix,
  // applied as the editor would, removes it and brings no new error or warning.
  for (;;) {
    const Json* target = nullptr;
    for (const Json& d : published["diagnostics"]) {
      if (d["code"] == "unknown-key" || d["code"] == "value-type-mismatch") {
        target = &d;
        break;
      }
    }
    if (!target) break;
    std::string rule = (*target)["code"];
    uint32_t line = (*target)["range"]["start"]["line"];
    Json actions = s.request("textDocument/codeAction",
                             Json{{"textDocument", {{"uri", uri}}}, {"range", range(line, 0, line, 0)},
                                  {"context", {{"diagnostics", Json::array()}}}})["result"];
    const Json* fix = nullptr;
    for (const Json& action : actions) {
      if (action["diagnostics"][0]["code"] == rule && action["title"].get<std::string>().rfind("Disable ", 0) != 0) {
        fix = &action;
        break;
      }
    }
    INFO(rule << " on line " << line << "\n" << text);
    REQUIRE(fix);
    titles.push_back((*fix)["title"]);
    text = apply_edits(text, (*fix)["edit"]["changes"][uri]);
    s.change(uri, ++version, Json{{"text", text}});
    std::multiset<std::string> expected = serious(published);
    expected.erase(expected.find(rule));
    published = s.diagnostics(uri);
    CHECK(serious(published) == expected);
  }
  CHECK(text == "model:\n"
                "  tensor_model_parallel_size: 2\n"
                "  pipeline_model_parallel_size: 2\n"
                "  sequence_parallel: true\n"
                "train:\n"
                "  micro_batch_size: 1\n");
  CHECK(titles == std::vector<std::string>{"rename the key to tensor_model_parallel_size (unsafe: changes the run)",
                                           "rename the key to pipeline_model_parallel_size (unsafe: changes the run)",
                                           "rename the key to sequence_parallel (unsafe: changes the run)",
                                           "write 1 (unsafe: changes the run)"});
}

TEST_CASE("lsp: hover says what the job runs with, as mblint resolve does", "[lsp][resolve]") {
  fs::path root = mblint::test::make_temp_dir("mblint-lsp-resolve");
  std::string uri = mblint::lsp::path_to_uri(root / "override.yaml");
  Session s({"--recipe", "llama3_8b_pretrain_config", "--nodes", "1", "--gpus-per-node", "8"});
  s.initialize(root);
  s.open(uri, "model:\n"
              "  tensor_model_parallel_size: 4\n"
              "  expert_tensor_parallel_size: null\n"
              "  num_layers: ${oc.env:LAYERS}\n");
  s.diagnostics(uri);
  // Written and run as written: nothing more to say.
  std::string tp = hover_text(s, uri, 1, 4);
  CHECK_FALSE(contains(tp, "Runs with"));
  CHECK(contains(tp, "config file (effective)"));
  // Unset: Megatron-Core runs it with TP's value.
  std::string etp = hover_text(s, uri, 2, 4);
  CHECK(contains(etp, "Runs with `4` (rewrite: expert_tensor_parallel_size is unset"));
  // An environment variable: not known, never guessed.
  std::string layers = hover_text(s, uri, 3, 4);
  CHECK(contains(layers, "The value this job runs with is not known"));
  fs::remove_all(root);
}

// An override YAML whose finding offers two changes, one of which the
// re-check refuses: context_parallel_size 8 does not fit 4 GPUs.
constexpr const char* kHierarchicalCp =
    "model:\n"
    "  context_parallel_size: 4\n"
    "  cp_comm_type: a2a+p2p\n"
    "  hierarchical_context_parallel_sizes: [2, 4]\n";
const std::vector<std::string> kHierarchicalCpJob = {"--recipe", "llama3_8b_pretrain_2gpu_h100_bf16_config", "--nodes",
                                                      "1", "--gpus-per-node", "4"};

const Json* finding(const Json& published, const std::string& rule) {
  for (const Json& d : published["diagnostics"]) {
    if (d["code"] == rule) return &d;
  }
  return nullptr;
}

std::vector<std::string> action_titles(Session& s, const std::string& uri, uint32_t line) {
  Json actions = s.request("textDocument/codeAction", Json{{"textDocument", {{"uri", uri}}},
                                                           {"range", range(line, 0, line, 0)},
                                                           {"context", {{"diagnostics", Json::array()}}}})["result"];
  std::vector<std::string> titles;
  for (const Json& action : actions) titles.push_back(action["title"].get<std::string>());
  return titles;
}

bool any_contains(const std::vector<std::string>& texts, const std::string& part) {
  return std::any_of(texts.begin(), texts.end(), [&](const std::string& t) { return contains(t, part); });
}

TEST_CASE("lsp: findings are published before their fixes are re-checked; the checked help follows", "[lsp]") {
  fs::path root = mblint::test::make_temp_dir("mblint-lsp-two-step");
  std::string uri = mblint::lsp::path_to_uri(root / "override.yaml");
  // A checked lint of the same text, from a server that checks first.
  std::string checked_message;
  {
    Session one_step(kHierarchicalCpJob);
    Json published = one_step.start(root, uri, kHierarchicalCp);
    const Json* d = finding(published, "hierarchical-cp-sizes-product");
    REQUIRE(d);
    checked_message = (*d)["message"].get<std::string>();
    REQUIRE(contains(checked_message, "(re-checked, not offered as a fix: set context_parallel_size to 8"));
  }
  Session s(kHierarchicalCpJob, 0);
  Json first = s.start(root, uri, kHierarchicalCp);
  const Json* unchecked = finding(first, "hierarchical-cp-sizes-product");
  REQUIRE(unchecked);
  // The rule's own help, not yet narrowed by the re-check.
  CHECK(contains((*unchecked)["message"].get<std::string>(), "or context_parallel_size 8"));
  CHECK_FALSE(contains((*unchecked)["message"].get<std::string>(), "re-checked"));
  // The input stays quiet: the same version again, with the checked help.
  Json second = s.diagnostics(uri);
  CHECK(second["version"] == first["version"]);
  const Json* checked = finding(second, "hierarchical-cp-sizes-product");
  REQUIRE(checked);
  CHECK((*checked)["message"] == checked_message);
  CHECK(code_set(second) == code_set(first));
  std::vector<std::string> titles = action_titles(s, uri, 3);
  CHECK(any_contains(titles, "hierarchical_context_parallel_sizes"));
  CHECK_FALSE(any_contains(titles, "set context_parallel_size to 8"));
}

TEST_CASE("lsp: a code action on unchecked fixes re-checks them before it answers", "[lsp]") {
  fs::path root = mblint::test::make_temp_dir("mblint-lsp-two-step-action");
  std::string uri = mblint::lsp::path_to_uri(root / "override.yaml");
  Session s(kHierarchicalCpJob, 10000);  // the quiet-input re-check never comes in this test
  Json first = s.start(root, uri, kHierarchicalCp);
  REQUIRE(finding(first, "hierarchical-cp-sizes-product"));
  // A line without a fixable finding is answered from the unchecked lint: nothing is published.
  std::vector<std::string> elsewhere = action_titles(s, uri, 0);
  CHECK_FALSE(any_contains(elsewhere, "set "));
  // On the finding: its fixes are checked first, the narrowed help published, and only the kept fix offered.
  std::vector<std::string> titles = action_titles(s, uri, 3);
  CHECK(any_contains(titles, "hierarchical_context_parallel_sizes"));
  CHECK_FALSE(any_contains(titles, "set context_parallel_size to 8"));
  Json republished = s.diagnostics(uri);  // kept on the way to the response
  const Json* checked = finding(republished, "hierarchical-cp-sizes-product");
  REQUIRE(checked);
  CHECK(contains((*checked)["message"].get<std::string>(), "(re-checked, not offered as a fix"));
  // Checked once: asking again publishes nothing more, and a new edit starts over unchecked.
  CHECK(action_titles(s, uri, 3) == titles);
  std::string edited = kHierarchicalCp;
  edited.replace(edited.find("[2, 4]"), 6, "[4, 2]");
  s.change(uri, 2, Json{{"text", edited}});
  Json after_edit = s.diagnostics(uri);
  CHECK(after_edit["version"] == 2);
  const Json* again = finding(after_edit, "hierarchical-cp-sizes-product");
  REQUIRE(again);
  CHECK_FALSE(contains((*again)["message"].get<std::string>(), "re-checked"));
}
