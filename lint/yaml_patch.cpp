#include "lint/yaml_patch.h"

#include <algorithm>
#include <optional>

#include "lint/yaml_scalar.h"

namespace mblint {

namespace {

// Every span a loaded tree or a loader problem carries.
template <typename Visit>
void for_each_span(Provenance& where, Visit& visit) {
  visit(where.value);
  visit(where.key);
  visit(where.statement);
  visit(where.interpolated_at);
  for (Span& span : where.via) visit(span);
}

template <typename Visit>
void for_each_span(ConfigValue& value, Visit& visit) {
  for_each_span(value.where, visit);
  for (Provenance& earlier : value.earlier) for_each_span(earlier, visit);
  for (ConfigValue& item : value.items) for_each_span(item, visit);
  for (MapEntry& entry : value.entries) for_each_span(entry.value, visit);
}

template <typename Visit>
void for_each_span(YamlDocument& document, Visit& visit) {
  for_each_span(document.root, visit);
  for (Diagnostic& problem : document.problems) {
    visit(problem.where);
    for (Note& note : problem.notes) visit(note.where);
    for (Fix& fix : problem.fixes) {
      for (TextEdit& edit : fix.edits) visit(edit.where);
    }
  }
}

void restamp(YamlDocument& document, FileId from, FileId to) {
  auto visit = [&](Span& span) {
    if (span.file == from) span.file = to;
  };
  for_each_span(document, visit);
}

bool is_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

bool is_key_char(char c) { return is_alnum(c) || c == '_' || c == '-' || c == '.'; }

// Characters a plain scalar may use here without any YAML meaning: no
// indicator (`#`, `:`, `,`, brackets, `&`, `*`, `!`, `|`, `>`, quotes, `%`,
// `@`, `?`), no tab, no non-ASCII byte.
bool is_plain_char(char c) { return is_alnum(c) || c == '_' || c == '.' || c == '/' || c == '~' || c == '+' || c == '-' || c == '$' || c == ' '; }

// A single-line plain scalar that reads as its own text.
bool is_simple_plain(std::string_view value) {
  if (value.empty() || value.front() == ' ' || value.back() == ' ') return false;
  char first = value.front();
  bool first_ok = is_alnum(first) || first == '_' || first == '.' || first == '/' || first == '~' || first == '+' ||
                  (first == '-' && value.size() > 1 && (is_alnum(value[1]) || value[1] == '.'));
  if (!first_ok || value == "..." || value.substr(0, 3) == "---") return false;
  return std::all_of(value.begin(), value.end(), is_plain_char);
}

bool is_printable_ascii(char c) { return c >= 0x20 && c <= 0x7e; }

// The content of a single-line quoted scalar with nothing after its closing
// quote; nullopt when not that simple (escapes in double quotes).
std::optional<std::string> simple_quoted(std::string_view value) {
  if (value.size() < 2 || value.front() != value.back()) return std::nullopt;
  char quote = value.front();
  if (quote != '"' && quote != '\'') return std::nullopt;
  std::string_view inner = value.substr(1, value.size() - 2);
  if (!std::all_of(inner.begin(), inner.end(), is_printable_ascii)) return std::nullopt;
  if (quote == '"') {
    if (inner.find_first_of("\"\\") != std::string_view::npos) return std::nullopt;
    return std::string(inner);
  }
  std::string text;
  for (size_t i = 0; i < inner.size(); ++i) {
    if (inner[i] == '\'') {
      if (i + 1 >= inner.size() || inner[i + 1] != '\'') return std::nullopt;
      ++i;
    }
    text += inner[i];
  }
  return text;
}

// The node a simple scalar value is loaded as (provenance left empty).
std::optional<ConfigValue> simple_scalar(std::string_view value, YamlFlavor flavor) {
  if (auto quoted = simple_quoted(value)) {
    ConfigValue string = make_string(std::move(*quoted));
    string.quoted = true;
    return string;
  }
  if (!is_simple_plain(value)) return std::nullopt;
  // yaml-cpp reports these as null events, not as scalars.
  if (value == "~" || value == "null" || value == "Null" || value == "NULL") return make_null();
  return type_plain_scalar(value, flavor);
}

// `<indent>key: value` with a simple key; offsets within the line.
struct EntryLine {
  size_t indent = 0;
  size_t key_end = 0;
  size_t value_begin = 0;
};

std::optional<EntryLine> simple_entry(std::string_view line) {
  EntryLine entry;
  while (entry.indent < line.size() && line[entry.indent] == ' ') ++entry.indent;
  size_t at = entry.indent;
  if (at >= line.size() || !(is_alnum(line[at]) || line[at] == '_')) return std::nullopt;
  while (at < line.size() && is_key_char(line[at])) ++at;
  entry.key_end = at;
  if (at + 1 >= line.size() || line[at] != ':' || line[at + 1] != ' ') return std::nullopt;
  at += 1;
  while (at < line.size() && line[at] == ' ') ++at;
  if (at >= line.size()) return std::nullopt;
  entry.value_begin = at;
  return entry;
}

size_t line_content_end(std::string_view text, size_t at) {
  size_t end = text.find('\n', at);
  if (end == std::string_view::npos) end = text.size();
  if (end > at && text[end - 1] == '\r') --end;
  return end;
}

// A plain scalar continues on following lines indented deeper than its key;
// such a line (blank ones aside) would make the value multi-line.
bool next_lines_end_value(std::string_view text, size_t line_end, size_t indent) {
  size_t at = text.find('\n', line_end);
  while (at != std::string_view::npos) {
    ++at;
    size_t first = at;
    while (first < text.size() && text[first] == ' ') ++first;
    if (first >= text.size()) return true;
    char c = text[first];
    if (c == '\t') return false;  // tabs: leave it to the parser
    if (c != '\n' && c != '\r') return first - at <= indent;
    at = text.find('\n', first);
  }
  return true;
}

ConfigValue* find_value(ConfigValue& node, Span value, Span key) {
  if (node.where.value == value && node.where.key == key) return &node;
  for (ConfigValue& item : node.items) {
    if (ConfigValue* found = find_value(item, value, key)) return found;
  }
  for (MapEntry& entry : node.entries) {
    if (ConfigValue* found = find_value(entry.value, value, key)) return found;
  }
  return nullptr;
}

bool is_scalar(const ConfigValue& value) { return value.kind != ValueKind::Map && value.kind != ValueKind::List; }

// Anchors, aliases and merge keys copy values around the tree: a patched
// value could be one of several copies. Any `&`, `*` or `<<` in the text
// (even inside a value) sends the edit to the parser.
bool may_copy_values(std::string_view text) {
  return text.find_first_of("&*") != std::string_view::npos || text.find("<<") != std::string_view::npos;
}

// A duplicate key's diagnostic names the value it replaced, which is no
// longer in the tree (so never the value patched): it only needs its spans
// moved. Syntax problems stop the parse somewhere: those texts re-parse.
bool only_duplicate_keys(const std::vector<Diagnostic>& problems) {
  return std::all_of(problems.begin(), problems.end(),
                     [](const Diagnostic& problem) { return problem.rule == "duplicate-key"; });
}

}  // namespace

YamlDocument load_yaml_cached(YamlCache* cache, const SourceSet& sources, FileId file, YamlFlavor flavor,
                              Layer layer) {
  if (!cache) return load_yaml(sources, file, flavor, layer);
  const std::string& text = sources.files[file].text;
  auto& entries = cache->entries;
  for (auto it = entries.begin(); it != entries.end(); ++it) {
    if (it->flavor != flavor || it->layer != layer || it->text.size() != text.size() || it->text != text) continue;
    ++cache->hits;
    std::rotate(it, it + 1, entries.end());  // most recently used last
    YamlDocument document = entries.back().document;
    if (entries.back().file != file) restamp(document, entries.back().file, file);
    return document;
  }
  ++cache->parses;
  YamlDocument document = load_yaml(sources, file, flavor, layer);
  if (cache->capacity == 0) return document;
  if (entries.size() >= cache->capacity) entries.erase(entries.begin());
  entries.push_back(ParsedYaml{text, flavor, layer, file, document});
  return document;
}

bool patch_scalar_edit(ParsedYaml& parsed, const ByteEdit& edit) {
  const std::string& before = parsed.text;
  YamlDocument& document = parsed.document;
  if (!document.ok || !only_duplicate_keys(document.problems) || !document.root.is_map()) return false;
  if (edit.begin > edit.end || edit.end > before.size()) return false;
  std::string_view replaced = std::string_view(before).substr(edit.begin, edit.end - edit.begin);
  if (replaced.find_first_of("\r\n") != std::string_view::npos ||
      edit.replacement.find_first_of("\r\n") != std::string_view::npos) {
    return false;
  }
  if (may_copy_values(before) || may_copy_values(edit.replacement)) return false;
  size_t line_begin = edit.begin == 0 ? 0 : before.rfind('\n', edit.begin - 1);
  line_begin = line_begin == std::string::npos || edit.begin == 0 ? 0 : line_begin + 1;
  size_t line_end = line_content_end(before, line_begin);
  if (edit.end > line_end) return false;
  std::string_view old_line = std::string_view(before).substr(line_begin, line_end - line_begin);
  std::string new_line(old_line);
  new_line.replace(edit.begin - line_begin, edit.end - edit.begin, edit.replacement);

  auto old_entry = simple_entry(old_line);
  auto new_entry = simple_entry(new_line);
  if (!old_entry || !new_entry || old_entry->value_begin != new_entry->value_begin ||
      old_entry->key_end != new_entry->key_end ||
      old_line.substr(0, old_entry->value_begin) != std::string_view(new_line).substr(0, new_entry->value_begin)) {
    return false;
  }
  std::string_view old_value = old_line.substr(old_entry->value_begin);
  std::string_view new_value = std::string_view(new_line).substr(new_entry->value_begin);
  if (!simple_scalar(old_value, parsed.flavor)) return false;
  std::optional<ConfigValue> typed = simple_scalar(new_value, parsed.flavor);
  if (!typed || !next_lines_end_value(before, line_end, old_entry->indent)) return false;

  FileId file = parsed.file;
  auto offset = [](size_t at) { return static_cast<uint32_t>(at); };
  Span old_span = make_span(file, offset(line_begin + old_entry->value_begin), offset(line_end));
  Span key_span = make_span(file, offset(line_begin + old_entry->indent), offset(line_begin + old_entry->key_end));
  ConfigValue* node = find_value(document.root, old_span, key_span);
  if (!node || !is_scalar(*node)) return false;

  // Certain now: rewrite the node, then move every later offset.
  int64_t delta = static_cast<int64_t>(new_line.size()) - static_cast<int64_t>(old_line.size());
  typed->where = std::move(node->where);
  typed->earlier = std::move(node->earlier);
  *node = std::move(*typed);
  uint32_t old_end = old_span.end;
  auto shift = [&](Span& span) {
    if (span.file != file) return;
    if (span.begin >= old_end) span.begin = static_cast<uint32_t>(span.begin + delta);
    if (span.end >= old_end) span.end = static_cast<uint32_t>(span.end + delta);
  };
  for_each_span(document, shift);
  parsed.text.replace(edit.begin, edit.end - edit.begin, edit.replacement);
  return true;
}

void note_edit(YamlCache& cache, std::string_view before, const ByteEdit& edit) {
  for (ParsedYaml& entry : cache.entries) {  // one entry per flavor the text was read as
    if (entry.text.size() != before.size() || entry.text != before) continue;
    if (patch_scalar_edit(entry, edit)) ++cache.patches;
  }
}

}  // namespace mblint
