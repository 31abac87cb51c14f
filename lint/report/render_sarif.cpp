// SARIF 2.1.0 (OASIS): what code-scanning services ingest. Rule metadata goes
// to tool.driver.rules; each diagnostic becomes a result whose ruleId is the
// rule name, with its region, notes as related locations and fixes as
// artifact changes.
#include <cctype>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lint/engine/baseline.h"
#include "lint/report/render.h"

namespace mblint {

namespace {

using json = nlohmann::ordered_json;

// The key of partialFingerprints; bump the version when the hashed text changes.
constexpr const char* kFingerprintKey = "mblintFindingHash/v1";

// RFC 3986: everything but unreserved characters and '/' percent-encoded.
std::string percent_encode(std::string_view path) {
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') out += static_cast<char>(c);
    else out += fmt::format("%{:02X}", c);
  }
  return out;
}

struct SarifContext {
  const SourceSet& sources;
  const std::filesystem::path& base_dir;
};

std::string_view sarif_level(Severity severity) {
  switch (severity) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
  }
  return "warning";
}

// SARIF columns count Unicode code points here (columnKind below); mblint's
// spans are bytes.
uint32_t code_point_column(const SourceFile& file, uint32_t offset) {
  LineCol at = line_col(file, offset);
  uint32_t start = file.line_starts[at.line - 1];
  uint32_t column = 1;
  for (uint32_t i = start; i < offset && i < file.text.size(); ++i) {
    if ((static_cast<unsigned char>(file.text[i]) & 0xC0) != 0x80) ++column;
  }
  return column;
}

bool locatable(const SourceSet& sources, Span where) {
  return where.valid() && where.file < static_cast<FileId>(sources.files.size()) &&
         !sources.files[where.file].synthetic;
}

json region(const SourceSet& sources, Span where) {
  const SourceFile& file = sources.files[where.file];
  LineCol begin = line_col(file, where.begin);
  LineCol end = line_col(file, where.end);
  return json{{"startLine", begin.line},
              {"startColumn", code_point_column(file, where.begin)},
              {"endLine", end.line},
              {"endColumn", code_point_column(file, where.end)}};
}

// Relative to SRCROOT (the working directory) when under it, else an
// absolute file: URI.
json artifact_location(const SarifContext& c, FileId file) {
  std::string path = relative_path(c.sources.files[file].path, c.base_dir);
  if (std::filesystem::path(path).is_absolute()) return json{{"uri", "file://" + percent_encode(path)}};
  return json{{"uri", percent_encode(path)}, {"uriBaseId", "SRCROOT"}};
}

json physical_location(const SarifContext& c, Span where) {
  return json{{"artifactLocation", artifact_location(c, where.file)}, {"region", region(c.sources, where)}};
}

std::string example_markdown(std::string_view title, const RuleExample& example) {
  if (example.content.empty()) return {};
  return fmt::format("\n\n**{}** (`{}`, checked with `mblint check {}`):\n\n```\n{}{}```", title, example.filename,
                     example.args, example.content, example.content.ends_with('\n') ? "" : "\n");
}

// id and name are the rule name (what results' ruleId refers to); the code
// (MB401) is a property.
json rule_descriptor(const RuleInfo& rule) {
  std::string anchor = fmt::format("{}#{}", kRulesDocsUrl, rule.name);
  std::string markdown = fmt::format("**{}** ({}): {}\n\n{}{}{}\n\nReference: [{}]({})", rule.name, rule.code,
                                     rule.summary, rule.doc, example_markdown("Bad", rule.bad),
                                     example_markdown("Good", good_example(rule)), rule.name, anchor);
  return json{{"id", rule.name},
              {"name", rule.name},
              {"shortDescription", {{"text", rule.summary}}},
              {"fullDescription", {{"text", rule.doc}}},
              {"help", {{"text", fmt::format("{}\n\n{}\n\nSee {}", rule.summary, rule.doc, anchor)}, {"markdown", markdown}}},
              {"helpUri", anchor},
              {"defaultConfiguration", {{"level", sarif_level(rule.severity)}}},
              {"properties", {{"code", rule.code}}}};
}

json fixes_json(const SarifContext& c, const Diagnostic& d) {
  const SourceSet& sources = c.sources;
  json fixes = json::array();
  for (const Fix& fix : d.fixes) {
    if (fix.edits.empty()) continue;
    json changes = json::array();
    for (const TextEdit& edit : fix.edits) {
      if (!locatable(sources, edit.where)) continue;
      changes.push_back({{"artifactLocation", artifact_location(c, edit.where.file)},
                         {"replacements",
                          json::array({{{"deletedRegion", region(sources, edit.where)},
                                        {"insertedContent", {{"text", edit.replacement}}}}})}});
    }
    if (changes.empty()) continue;
    fixes.push_back({{"description", {{"text", fix.description + " (" + std::string(fix_safety_name(fix.safety)) + ")"}}},
                     {"artifactChanges", std::move(changes)}});
  }
  return fixes;
}

// Stable across edits elsewhere in the file: the baseline's identity of the
// finding (file, rule, config key path -- or the message without one).
std::string fingerprint(const SarifContext& c, const Diagnostic& d) {
  BaselineKey key = baseline_key(c.sources, d, c.base_dir);
  return fnv1a_hex(fmt::format("{}\n{}\n{}\n{}", key.file, key.rule, key.subject, key.message_hash));
}

json result_json(const SarifContext& c, const Diagnostic& d, int rule_index) {
  const SourceSet& sources = c.sources;
  std::string text = d.message;
  if (!d.help.empty()) text += "\nhelp: " + d.help;
  json result = {{"ruleId", d.rule}};
  if (rule_index >= 0) result["ruleIndex"] = rule_index;
  result["level"] = sarif_level(d.severity);
  result["message"] = {{"text", text}};
  json locations = json::array();
  if (locatable(sources, d.where)) locations.push_back({{"physicalLocation", physical_location(c, d.where)}});
  // A finding on mblint's own command line has no file to point at.
  if (!locations.empty()) result["locations"] = std::move(locations);
  json related = json::array();
  int id = 0;
  for (const Note& note : d.notes) {
    json location = {{"id", id++}, {"message", {{"text", note.message}}}};
    if (locatable(sources, note.where)) location["physicalLocation"] = physical_location(c, note.where);
    related.push_back(std::move(location));
  }
  if (!related.empty()) result["relatedLocations"] = std::move(related);
  json fixes = fixes_json(c, d);
  if (!fixes.empty()) result["fixes"] = std::move(fixes);
  result["partialFingerprints"] = {{kFingerprintKey, fingerprint(c, d)}};
  result["properties"] = {{"code", d.code}};
  if (!d.subject.empty()) result["properties"]["subject"] = d.subject;
  return result;
}

json srcroot(const std::filesystem::path& base_dir) {
  json root = {{"description", {{"text", "the directory mblint ran in"}}}};
  if (base_dir.is_absolute()) {
    std::string uri = "file://" + percent_encode(base_dir.lexically_normal().generic_string());
    if (!uri.ends_with('/')) uri += '/';
    root["uri"] = uri;
  }
  return root;
}

}  // namespace

void render_sarif(std::ostream& out, const SourceSet& sources, const std::vector<Diagnostic>& diagnostics,
                  RuleSet rules, std::string_view tool_version, const std::filesystem::path& base_dir) {
  SarifContext context{sources, base_dir};
  json rule_list = json::array();
  for (const RuleInfo* rule : rules) rule_list.push_back(rule_descriptor(*rule));
  json results = json::array();
  for (const Diagnostic& d : diagnostics) {
    int index = -1;
    for (size_t i = 0; i < rules.size(); ++i) {
      if (rules[i]->name == d.rule) index = static_cast<int>(i);
    }
    results.push_back(result_json(context, d, index));
  }
  json run = {{"tool",
               {{"driver",
                 {{"name", "mblint"},
                  {"version", tool_version},
                  {"informationUri", kProjectUrl},
                  {"rules", std::move(rule_list)}}}}},
              {"columnKind", "unicodeCodePoints"},
              {"originalUriBaseIds", {{"SRCROOT", srcroot(base_dir)}}},
              {"results", std::move(results)}};
  json document = {{"$schema", "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"},
                   {"version", "2.1.0"},
                   {"runs", json::array({std::move(run)})}};
  out << document.dump(2, ' ', false, json::error_handler_t::replace) << '\n';
}

}  // namespace mblint
