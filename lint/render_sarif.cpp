// SARIF 2.1.0 (OASIS): what code-scanning services ingest. Rule metadata goes
// to tool.driver.rules; each diagnostic becomes a result whose ruleId is the
// rule name, with its region, notes as related locations and fixes as
// artifact changes.
#include <nlohmann/json.hpp>

#include "lint/render.h"

namespace mblint {

namespace {

using json = nlohmann::ordered_json;

constexpr const char* kRulesDocUrl = "https://github.com/mblint/mblint/blob/main/rules/README.md";

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

json physical_location(const SourceSet& sources, Span where) {
  return json{{"artifactLocation", {{"uri", sources.files[where.file].path}, {"uriBaseId", "SRCROOT"}}},
              {"region", region(sources, where)}};
}

json rule_descriptor(const RuleInfo& rule) {
  std::string anchor = std::string(kRulesDocUrl) + "#" + std::string(rule.name);
  return json{{"id", rule.name},
              {"shortDescription", {{"text", rule.summary}}},
              {"fullDescription", {{"text", rule.doc}}},
              {"help", {{"text", rule.doc}, {"markdown", rule.doc}}},
              {"helpUri", anchor},
              {"defaultConfiguration", {{"level", sarif_level(rule.severity)}}},
              {"properties", {{"code", rule.code}}}};
}

json fixes_json(const SourceSet& sources, const Diagnostic& d) {
  json fixes = json::array();
  for (const Fix& fix : d.fixes) {
    if (fix.edits.empty()) continue;
    json changes = json::array();
    for (const TextEdit& edit : fix.edits) {
      if (!locatable(sources, edit.where)) continue;
      changes.push_back({{"artifactLocation", {{"uri", sources.files[edit.where.file].path}, {"uriBaseId", "SRCROOT"}}},
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

json result_json(const SourceSet& sources, const Diagnostic& d, int rule_index) {
  std::string text = d.message;
  if (!d.help.empty()) text += "\nhelp: " + d.help;
  json result = {{"ruleId", d.rule}};
  if (rule_index >= 0) result["ruleIndex"] = rule_index;
  result["level"] = sarif_level(d.severity);
  result["message"] = {{"text", text}};
  json locations = json::array();
  if (locatable(sources, d.where)) locations.push_back({{"physicalLocation", physical_location(sources, d.where)}});
  result["locations"] = std::move(locations);
  json related = json::array();
  int id = 0;
  for (const Note& note : d.notes) {
    json location = {{"id", id++}, {"message", {{"text", note.message}}}};
    if (locatable(sources, note.where)) location["physicalLocation"] = physical_location(sources, note.where);
    related.push_back(std::move(location));
  }
  if (!related.empty()) result["relatedLocations"] = std::move(related);
  json fixes = fixes_json(sources, d);
  if (!fixes.empty()) result["fixes"] = std::move(fixes);
  result["properties"] = {{"code", d.code}};
  return result;
}

}  // namespace

void render_sarif(std::ostream& out, const SourceSet& sources, const std::vector<Diagnostic>& diagnostics,
                  RuleSet rules, std::string_view tool_version) {
  json rule_list = json::array();
  for (const RuleInfo* rule : rules) rule_list.push_back(rule_descriptor(*rule));
  json results = json::array();
  for (const Diagnostic& d : diagnostics) {
    int index = -1;
    for (size_t i = 0; i < rules.size(); ++i) {
      if (rules[i]->name == d.rule) index = static_cast<int>(i);
    }
    results.push_back(result_json(sources, d, index));
  }
  json run = {{"tool",
               {{"driver",
                 {{"name", "mblint"},
                  {"version", tool_version},
                  {"informationUri", "https://github.com/mblint/mblint"},
                  {"rules", std::move(rule_list)}}}}},
              {"columnKind", "unicodeCodePoints"},
              {"originalUriBaseIds", {{"SRCROOT", {{"description", {{"text", "the directory mblint ran in"}}}}}}},
              {"results", std::move(results)}};
  json document = {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
                   {"version", "2.1.0"},
                   {"runs", json::array({std::move(run)})}};
  out << document.dump(2, ' ', false, json::error_handler_t::replace) << '\n';
}

}  // namespace mblint
