#include "lint/load/yaml/yaml_patch.h"

#include <algorithm>
#include <optional>

#include "lint/base/yaml_scalar.h"

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
void visit_problem_spans(Diagnostic& problem, Visit& visit) {
  visit(problem.where);
  for (Note& note : problem.notes) visit(note.where);
  for (Fix& fix : problem.fixes) {
    for (TextEdit& edit : fix.edits) visit(edit.where);
  }
}

template <typename Visit>
void for_each_span(YamlDocument& document, Visit& visit) {
  for_each_span(document.root, visit);
  for (Diagnostic& problem : document.problems) visit_problem_spans(problem, visit);
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

// The node at `value` keyed at `key`; null when absent or inside a flow
// collection (`[a,\n b]`: there a plain scalar runs on over line ends).
ConfigValue* find_value(ConfigValue& node, Span value, Span key, std::string_view text) {
  if (node.where.value == value && node.where.key == key) return &node;
  uint32_t begin = node.where.value.begin;
  if (begin < text.size() && (text[begin] == '[' || text[begin] == '{')) return nullptr;
  for (ConfigValue& item : node.items) {
    if (ConfigValue* found = find_value(item, value, key, text)) return found;
  }
  for (MapEntry& entry : node.entries) {
    if (ConfigValue* found = find_value(entry.value, value, key, text)) return found;
  }
  return nullptr;
}

bool is_scalar(const ConfigValue& value) { return value.kind != ValueKind::Map && value.kind != ValueKind::List; }

// Nodes keyed at `key`, or scalars with a value span touching [begin, end]. One (the
// node edited) unless the YAML is odd (`? ` explicit keys can give two
// nodes one key span, and an empty value's span is found by reading the
// text after its key's colon).
size_t nodes_near(const ConfigValue& node, Span key, uint32_t begin, uint32_t end) {
  const Span& value = node.where.value;
  bool touches = value.file == key.file && is_scalar(node) &&
                 ((value.begin >= begin && value.begin <= end) || (value.end >= begin && value.end <= end));
  size_t count = node.where.key == key || touches ? 1 : 0;  // containers end where their last value does
  for (const ConfigValue& item : node.items) count += nodes_near(item, key, begin, end);
  for (const MapEntry& entry : node.entries) count += nodes_near(entry.value, key, begin, end);
  return count;
}

// The loaded node is what the line's text reads as: nothing was read from
// beyond the line.
bool same_scalar(const ConfigValue& a, const ConfigValue& b) {
  bool reals = a.real == b.real || (a.real != a.real && b.real != b.real);  // NaN
  return a.kind == b.kind && a.boolean == b.boolean && a.integer == b.integer && reals && a.text == b.text &&
         a.quoted == b.quoted;
}

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

// --- section edits -----------------------------------------------------------------

constexpr size_t kMaxSectionPatchBytes = 1u << 20;  // far below load_yaml's node limit

size_t line_start_of(std::string_view text, size_t at) {
  if (at == 0) return 0;
  size_t newline = text.rfind('\n', at - 1);
  return newline == std::string_view::npos ? 0 : newline + 1;
}

// What starts a line at column 0: inside a section only blank lines,
// indented lines and comments; a top-level key line starts a section.
enum class LineStart { Inside, Key, Other };

LineStart classify_line(std::string_view text, size_t start) {
  if (start >= text.size()) return LineStart::Inside;
  char c = text[start];
  if (c == ' ' || c == '#' || c == '\n' || c == '\r') return LineStart::Inside;
  if (is_alnum(c) || c == '_') return LineStart::Key;
  return LineStart::Other;
}

// Every line starting in [from, to) is inside a section.
bool all_inside(std::string_view text, size_t from, size_t to) {
  for (size_t at = from; at < to;) {
    if (classify_line(text, at) != LineStart::Inside) return false;
    size_t newline = text.find('\n', at);
    if (newline == std::string_view::npos) break;
    at = newline + 1;
  }
  return true;
}

// `key:` alone on its line (the section's value starts on the next line).
bool bare_key_line(std::string_view line) {
  size_t at = 0;
  while (at < line.size() && is_key_char(line[at])) ++at;
  return at > 0 && at + 1 == line.size() && line[at] == ':';
}

enum class Where { Before, Inside, After, Mixed };

// Where a problem's spans lie relative to the section (T_start, end).
Where place_of(const Diagnostic& problem, uint32_t section_begin, uint32_t section_end) {
  bool before = false, inside = false, after = false;
  auto note = [&](const Span& span) {
    if (!span.valid()) return;
    if (span.end <= section_begin) before = true;
    else if (span.begin > section_begin && span.end <= section_end) inside = true;
    else if (span.begin >= section_end) after = true;
    else before = inside = after = true;
  };
  note(problem.where);
  for (const Note& n : problem.notes) note(n.where);
  if (before + inside + after != 1) return before || inside || after ? Where::Mixed : Where::Before;
  return before ? Where::Before : inside ? Where::Inside : Where::After;
}

// A quoted scalar or flow collection over several lines: yaml-cpp reads an
// unclosed one on to the end of the text, past where the section was cut.
bool has_multiline_flow(const ConfigValue& value, std::string_view text) {
  const Span& span = value.where.value;
  if (span.begin < span.end && span.end <= text.size() && std::string_view("[{'\"").find(text[span.begin]) != std::string_view::npos &&
      text.substr(span.begin, span.end - span.begin).find('\n') != std::string_view::npos) {
    return true;
  }
  for (const ConfigValue& item : value.items) {
    if (has_multiline_flow(item, text)) return true;
  }
  for (const MapEntry& entry : value.entries) {
    if (has_multiline_flow(entry.value, text)) return true;
  }
  return false;
}

void set_block_map_end(ConfigValue& map) {
  uint32_t end = map.where.value.begin;
  for (const MapEntry& entry : map.entries) end = std::max(end, entry.value.where.value.end);
  map.where.value.end = end;
}


// --- block edits (an edit between siblings of a nested map or block sequence) -------

// Where a child of a block collection starts: its key, or its item's `-`.
std::optional<size_t> child_start(const ConfigValue& container, size_t k, std::string_view text) {
  if (container.kind == ValueKind::Map) {
    const Span& key = container.entries[k].value.where.key;
    if (!key.valid() || key.begin >= text.size()) return std::nullopt;
    return key.begin;
  }
  size_t at = container.items[k].where.value.begin;
  if (at > text.size()) return std::nullopt;
  while (at > 0 && text[at - 1] == ' ') --at;
  if (at == 0 || text[at - 1] != '-') return std::nullopt;
  return at - 1;
}

// A child whose line holds nothing before it but the indentation: the line
// can start a parse of its own.
struct ChildLine {
  size_t line = 0;    // offset of the line start
  size_t column = 0;  // where the key or `-` stands on it
  bool clean = false;
};

std::optional<std::vector<ChildLine>> child_lines(const ConfigValue& container, std::string_view text) {
  size_t count = container.kind == ValueKind::Map ? container.entries.size() : container.items.size();
  std::vector<ChildLine> lines;
  lines.reserve(count);
  std::optional<size_t> column;
  for (size_t k = 0; k < count; ++k) {
    auto start = child_start(container, k, text);
    if (!start) return std::nullopt;
    ChildLine line{line_start_of(text, *start), 0, false};
    line.column = *start - line.line;
    line.clean = std::all_of(text.begin() + static_cast<std::ptrdiff_t>(line.line),
                             text.begin() + static_cast<std::ptrdiff_t>(*start), [](char c) { return c == ' '; });
    if (line.clean) {
      if (column && *column != line.column) return std::nullopt;
      column = line.column;
    }
    lines.push_back(line);
  }
  return lines;
}

bool is_block_collection(const ConfigValue& value, std::string_view text) {
  if (value.kind == ValueKind::Map ? value.entries.empty() : value.kind != ValueKind::List || value.items.empty()) {
    return false;
  }
  uint32_t begin = value.where.value.begin;
  return begin < text.size() && text[begin] != '[' && text[begin] != '{';
}

// The lines re-parsed for an edit: children [first, next) of `container`
// are replaced by what the text from `begin` up to child `next`'s line reads
// as; child `next`'s line is parsed too and must read as the next child.
struct BlockWindow {
  ConfigValue* container = nullptr;
  size_t first = 0, next = 0;
  size_t begin = 0;       // offset of child `first`'s line (same before and after the edit)
  size_t old_next = 0;    // offset of child `next`'s line before the edit
  size_t column = 0;
  bool starts_at_edit = false;  // the window's first line is new text
};

// How a line at the children's column starts: a key, an item, or neither
// (then nothing is assumed about how the line before it ends).
int line_class(std::string_view text, size_t at, ValueKind kind) {
  if (at >= text.size()) return 0;
  size_t end = line_content_end(text, at);
  std::string_view line = text.substr(at, end - at);
  if (kind == ValueKind::List) return line.size() >= 2 && line[0] == '-' && line[1] == ' ' ? 2 : 0;
  if (line.empty() || !(is_alnum(line[0]) || line[0] == '_')) return 0;
  size_t colon = line.find(':');
  bool key = colon != std::string_view::npos && (colon + 1 == line.size() || line[colon + 1] == ' ');
  return key ? 1 : 0;
}

// `indentless`: a list written at its key's column (`key:` then `- a` below
// it). yaml-cpp closes what is in such a list differently from a list that
// starts a text, so no window is made at that level (only inside its items).
std::optional<BlockWindow> find_window(ConfigValue& container, std::string_view text, const ByteEdit& edit,
                                       size_t depth, bool indentless) {
  if (depth > 64) return std::nullopt;
  auto lines = child_lines(container, text);
  if (!lines || lines->empty()) return std::nullopt;
  const auto& at = *lines;
  size_t count = at.size();
  auto first_next = [&](size_t from) {
    size_t n = from;
    while (n < count && at[n].line < edit.end) ++n;
    return n;
  };
  auto child = [&](size_t k) -> ConfigValue& {
    return container.kind == ValueKind::Map ? container.entries[k].value : container.items[k];
  };
  // A duplicate key leaves its entry where the key was first written, with
  // the last value: then the children are out of line order, and only a
  // window inside one of them is looked for.
  bool ordered = std::is_sorted(at.begin(), at.end(), [](const ChildLine& a, const ChildLine& b) { return a.line < b.line; });
  // The edit starts at a child's line: lines are inserted before it or
  // replace it and maybe more. Not the first child: the collection starts there.
  for (size_t k = 1; ordered && !indentless && k < count; ++k) {
    if (at[k].line != edit.begin || !at[k].clean) continue;
    size_t next = first_next(k);
    if (next >= count || !at[next].clean) return std::nullopt;
    return BlockWindow{&container, k, next, at[k].line, at[next].line, at[k].column, true};
  }
  // Otherwise the window starts at the last child whose first line ends before the edit.
  size_t first = count;
  for (size_t k = 0; k < count; ++k) {
    size_t newline = text.find('\n', at[k].line);
    if (newline == std::string_view::npos || newline >= edit.begin) continue;
    if (first == count || at[k].line > at[first].line) first = k;
  }
  if (first == count) return std::nullopt;
  size_t region_end = text.size();  // where the next child's line starts
  for (size_t k = 0; k < count; ++k) {
    if (at[k].line > at[first].line) region_end = std::min(region_end, at[k].line);
  }
  if (edit.end <= region_end && is_block_collection(child(first), text)) {  // a window in it is smaller
    ConfigValue& inside = child(first);
    size_t begin = inside.where.value.begin;
    bool list_at_key = container.kind == ValueKind::Map && inside.kind == ValueKind::List &&
                       begin - line_start_of(text, begin) <= at[first].column;
    if (auto inner = find_window(inside, text, edit, depth + 1, list_at_key)) return inner;
  }
  if (!ordered || indentless) return std::nullopt;
  size_t next = first_next(first + 1);
  if (next >= count || !at[first].clean || !at[next].clean) return std::nullopt;
  return BlockWindow{&container, first, next, at[first].line, at[next].line, at[first].column, false};
}

// Every line of a window may be parsed on its own at the children's column:
// nothing less indented (that would close the collection), a list's lines
// at its column are items, no tabs, carriage returns or document markers.
bool window_lines_fit(std::string_view window, size_t column, ValueKind kind) {
  if (window.find_first_of("\t\r") != std::string_view::npos) return false;
  for (size_t at = 0; at < window.size();) {
    size_t end = window.find('\n', at);
    if (end == std::string_view::npos) end = window.size();
    std::string_view line = window.substr(at, end - at);
    size_t indent = line.find_first_not_of(' ');
    if (indent != std::string_view::npos && line[indent] != '#') {
      if (indent < column) return false;
      if (indent == 0 && (line[0] == '%' || line.substr(0, 3) == "---" || line.substr(0, 3) == "...")) return false;
      if (indent == column && kind == ValueKind::List && line_class(line, indent, kind) != 2 &&
          line.substr(indent) != "-") {
        return false;
      }
    }
    at = end + 1;
  }
  return true;
}

// No node outside the window's children points into its lines (a null list
// item's span is the token after it, which can be the window's first): such
// a node would read differently after the edit. The window's children and
// the next child (its spans move with it) are skipped.
bool clear_of_window(const ConfigValue& node, const BlockWindow& window, size_t from, size_t to) {
  auto inside = [&](const Span& span) {
    return span.valid() && ((span.begin >= from && span.begin <= to) || (span.end > from && span.end <= to));
  };
  if (inside(node.where.key) || (is_scalar(node) && inside(node.where.value))) return false;
  bool is_container = &node == window.container;
  size_t count = node.kind == ValueKind::Map ? node.entries.size() : node.items.size();
  for (size_t k = 0; k < count; ++k) {
    if (is_container && k >= window.first && k <= window.next) continue;
    const ConfigValue& child = node.kind == ValueKind::Map ? node.entries[k].value : node.items[k];
    if (!clear_of_window(child, window, from, to)) return false;
  }
  return true;
}

// Every span of `value` lies in [0, limit] of the window: nothing points past
// the cut (a null at the end of the window's text, say).
bool spans_within(ConfigValue& value, FileId file, size_t limit) {
  bool inside = true;
  auto check = [&](Span& span) {
    if (span.file == file && span.valid() && (span.begin > limit || span.end > limit)) inside = false;
  };
  for_each_span(value, check);
  return inside;
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
  std::optional<ConfigValue> old_typed = simple_scalar(old_value, parsed.flavor);
  if (!old_typed) return false;
  std::optional<ConfigValue> typed = simple_scalar(new_value, parsed.flavor);
  if (!typed || !next_lines_end_value(before, line_end, old_entry->indent)) return false;

  FileId file = parsed.file;
  auto offset = [](size_t at) { return static_cast<uint32_t>(at); };
  Span old_span = make_span(file, offset(line_begin + old_entry->value_begin), offset(line_end));
  Span key_span = make_span(file, offset(line_begin + old_entry->indent), offset(line_begin + old_entry->key_end));
  ConfigValue* node = find_value(document.root, old_span, key_span, before);
  if (!node || !is_scalar(*node) || !same_scalar(*node, *old_typed)) return false;
  if (nodes_near(document.root, key_span, old_span.begin, old_span.end) != 1) return false;

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

bool patch_section_edit(ParsedYaml& parsed, const ByteEdit& edit) {
  const std::string& before = parsed.text;
  YamlDocument& document = parsed.document;
  if (!document.ok || !only_duplicate_keys(document.problems) || !document.root.is_map()) return false;
  if (edit.begin > edit.end || edit.end > before.size() || before.size() > kMaxSectionPatchBytes) return false;
  if (before.compare(0, 3, "\xEF\xBB\xBF") == 0) return false;  // a byte-order mark
  if (may_copy_values(before) || may_copy_values(edit.replacement)) return false;
  // The section's key line: the nearest top-level line at or before the edit,
  // left as it is (the edit may start at its end: Enter after `train:`).
  size_t section = line_start_of(before, edit.begin);
  while (classify_line(before, section) == LineStart::Inside) {
    if (section == 0) return false;
    section = line_start_of(before, section - 1);
  }
  size_t key_line_end = line_content_end(before, section);
  if (classify_line(before, section) != LineStart::Key || edit.begin < key_line_end) return false;
  if (key_line_end >= before.size() || before[key_line_end] != '\n') return false;
  if (!bare_key_line(std::string_view(before).substr(section, key_line_end - section))) return false;
  // The next top-level key line, at or after the edit's end, also untouched.
  size_t next = line_start_of(before, edit.end);
  if (next < edit.end) {
    size_t newline = before.find('\n', edit.end);
    next = newline == std::string::npos ? before.size() : newline + 1;
  }
  while (next < before.size() && classify_line(before, next) == LineStart::Inside) {
    size_t newline = before.find('\n', next);
    next = newline == std::string::npos ? before.size() : newline + 1;
  }
  if (next < before.size() && classify_line(before, next) != LineStart::Key) return false;
  if (!all_inside(before, key_line_end + 1, next)) return false;
  // The old tree: the section is the root entry keyed at `section`, and the
  // entry after it (if any) is keyed at `next`.
  auto& entries = document.root.entries;
  auto found = std::find_if(entries.begin(), entries.end(),
                            [&](const MapEntry& entry) { return entry.value.where.key.begin == section; });
  if (found == entries.end()) return false;
  size_t index = static_cast<size_t>(found - entries.begin());
  bool last = index + 1 == entries.size();
  if (last != (next >= before.size())) return false;
  if (!last && entries[index + 1].value.where.key.begin != next) return false;
  for (const Diagnostic& problem : document.problems) {
    if (place_of(problem, static_cast<uint32_t>(section), static_cast<uint32_t>(next)) == Where::Mixed) return false;
  }

  // The new text up to the next section, everything before this section
  // blanked (offsets and line numbers stay), parsed alone.
  std::string after = before;
  after.replace(edit.begin, edit.end - edit.begin, edit.replacement);
  int64_t delta = static_cast<int64_t>(edit.replacement.size()) - static_cast<int64_t>(edit.end - edit.begin);
  size_t new_next = static_cast<size_t>(static_cast<int64_t>(next) + delta);
  // The key line and the next section's line are still whole lines.
  size_t key_line = key_line_end + 1 - section;
  if (after.compare(section, key_line, before, section, key_line) != 0) return false;
  if (new_next < after.size() && after[new_next - 1] != '\n') return false;
  if (!all_inside(after, key_line_end + 1, new_next)) return false;
  // The next section's key line is parsed too: whether the section's last
  // value continues onto it is decided there (yaml-cpp lets a plain scalar
  // run on to a column-0 line), and it must stay the next entry.
  size_t cut = after.find('\n', new_next);
  cut = last || cut == std::string::npos ? after.size() : cut + 1;
  SourceSet alone;
  std::string partial = after.substr(0, cut);
  for (size_t i = 0; i < section; ++i) {
    if (partial[i] != '\n' && partial[i] != '\r') partial[i] = ' ';
  }
  FileId id = add_source(alone, "section.yaml", std::move(partial));
  YamlDocument reparsed = load_yaml(alone, id, parsed.flavor, parsed.layer);
  if (!reparsed.ok || !only_duplicate_keys(reparsed.problems) || !reparsed.root.is_map() ||
      reparsed.root.entries.size() != (last ? 1u : 2u)) {
    return false;
  }
  if (!last && (reparsed.root.entries[1].key != entries[index + 1].key ||
                reparsed.root.entries[1].value.where.key.begin != new_next)) {
    return false;
  }
  MapEntry& fresh = reparsed.root.entries.front();
  if (has_multiline_flow(fresh.value, after)) return false;
  restamp(reparsed, id, parsed.file);
  if (fresh.key != found->key || fresh.value.where.key != found->value.where.key) return false;
  for (const Diagnostic& problem : reparsed.problems) {
    if (place_of(problem, static_cast<uint32_t>(section), static_cast<uint32_t>(new_next)) != Where::Inside) return false;
  }

  // Certain now: swap the section in, move what follows.
  auto shift = [&](Span& span) {
    if (span.file != parsed.file) return;
    if (span.begin >= next) span.begin = static_cast<uint32_t>(span.begin + delta);
    if (span.end >= next) span.end = static_cast<uint32_t>(span.end + delta);
  };
  found->value = std::move(fresh.value);
  for (size_t i = index + 1; i < entries.size(); ++i) for_each_span(entries[i].value, shift);
  set_block_map_end(document.root);
  // Problems in document order: before the section, in it (new), after it.
  std::vector<Diagnostic> problems, later;
  for (Diagnostic& problem : document.problems) {
    Where where = place_of(problem, static_cast<uint32_t>(section), static_cast<uint32_t>(next));
    if (where == Where::Before) problems.push_back(std::move(problem));
    if (where == Where::After) {
      visit_problem_spans(problem, shift);
      later.push_back(std::move(problem));
    }
  }
  for (Diagnostic& problem : reparsed.problems) problems.push_back(std::move(problem));
  for (Diagnostic& problem : later) problems.push_back(std::move(problem));
  document.problems = std::move(problems);
  parsed.text = std::move(after);
  return true;
}

bool patch_block_edit(ParsedYaml& parsed, const ByteEdit& edit) {
  const std::string& before = parsed.text;
  YamlDocument& document = parsed.document;
  if (!document.ok || !only_duplicate_keys(document.problems) || !is_block_collection(document.root, before)) {
    return false;
  }
  if (edit.begin > edit.end || edit.end > before.size() || before.size() > kMaxSectionPatchBytes) return false;
  if (before.compare(0, 3, "\xEF\xBB\xBF") == 0 || before.front() == '%' || before.compare(0, 3, "---") == 0 ||
      before.find("\n%") != std::string::npos || before.find("\n---") != std::string::npos) {
    return false;  // a byte-order mark, directives or document markers
  }
  if (may_copy_values(before) || may_copy_values(edit.replacement)) return false;
  auto window = find_window(document.root, before, edit, 0, false);
  if (!window) return false;
  // A duplicate key before or after the window stays as it is (its spans
  // moved); one with a span in it is left to a full parse.
  for (const Diagnostic& problem : document.problems) {
    Where where = place_of(problem, static_cast<uint32_t>(window->begin), static_cast<uint32_t>(window->old_next));
    if (where != Where::Before && where != Where::After) return false;
  }
  ConfigValue& container = *window->container;
  ValueKind kind = container.kind;
  if (!clear_of_window(document.root, *window, window->begin, window->old_next + window->column)) return false;
  int64_t delta = static_cast<int64_t>(edit.replacement.size()) - static_cast<int64_t>(edit.end - edit.begin);
  std::string after = before;
  after.replace(edit.begin, edit.end - edit.begin, edit.replacement);
  auto new_next = static_cast<size_t>(static_cast<int64_t>(window->old_next) + delta);
  // The next child's line is still a whole line, where it moved to.
  if (new_next <= window->begin || new_next >= after.size() || after[new_next - 1] != '\n') return false;
  size_t begin = window->begin;
  size_t column = window->column;
  if (window->starts_at_edit) {
    // New text where a child started: it must start a child the same way
    // (at the column, a key or an item), so that the child before it ends
    // there as it did.
    bool indented = std::all_of(after.begin() + static_cast<std::ptrdiff_t>(begin),
                                after.begin() + static_cast<std::ptrdiff_t>(begin + column), [](char c) { return c == ' '; });
    int was = line_class(before, begin + column, kind);
    if (!indented || was == 0 || line_class(after, begin + column, kind) != was) return false;
  }
  size_t cut = after.find('\n', new_next);
  cut = cut == std::string::npos ? after.size() : cut + 1;
  std::string_view window_text = std::string_view(after).substr(begin, cut - begin);
  if (!window_lines_fit(window_text, column, kind)) return false;

  SourceSet alone;
  FileId id = add_source(alone, "block.yaml", std::string(window_text));
  YamlDocument fresh = load_yaml(alone, id, parsed.flavor, parsed.layer);
  std::string_view fresh_text = alone.files[id].text;
  if (!fresh.ok || !fresh.problems.empty() || fresh.root.kind != kind || !is_block_collection(fresh.root, fresh_text)) {
    return false;
  }
  auto lines = child_lines(fresh.root, fresh_text);
  if (!lines || lines->empty()) return false;
  size_t kept = lines->size() - 1;
  size_t limit = new_next - begin;
  // The window's last child is the next child, where it now starts.
  if (!lines->back().clean || lines->back().line != limit || lines->back().column != column) return false;
  if (kind == ValueKind::Map && fresh.root.entries.back().key != container.entries[window->next].key) return false;
  for (size_t k = 0; k < kept; ++k) {
    ConfigValue& value = kind == ValueKind::Map ? fresh.root.entries[k].value : fresh.root.items[k];
    if ((*lines)[k].column != column || has_multiline_flow(value, fresh_text) || !spans_within(value, id, limit)) {
      return false;
    }
  }
  if (kind == ValueKind::Map) {  // a new key the map already has elsewhere: a duplicate-key problem
    for (size_t k = 0; k < kept; ++k) {
      const std::string& key = fresh.root.entries[k].key;
      for (size_t other = 0; other < container.entries.size(); ++other) {
        if ((other < window->first || other >= window->next) && container.entries[other].key == key) return false;
      }
    }
  }

  // Certain now: move what follows the window, then swap its children in.
  FileId file = parsed.file;
  size_t old_next = window->old_next;
  auto shift = [&](Span& span) {
    if (span.file != file) return;
    if (span.begin >= old_next) span.begin = static_cast<uint32_t>(static_cast<int64_t>(span.begin) + delta);
    if (span.end >= old_next) span.end = static_cast<uint32_t>(static_cast<int64_t>(span.end) + delta);
  };
  for_each_span(document, shift);
  auto place = [&](Span& span) {
    if (span.file != id) return;
    span.file = file;
    span.begin = static_cast<uint32_t>(span.begin + begin);
    span.end = static_cast<uint32_t>(span.end + begin);
  };
  auto first = static_cast<std::ptrdiff_t>(window->first);
  auto next = static_cast<std::ptrdiff_t>(window->next);
  if (kind == ValueKind::Map) {
    auto& entries = fresh.root.entries;
    for (size_t k = 0; k < kept; ++k) for_each_span(entries[k].value, place);
    container.entries.erase(container.entries.begin() + first, container.entries.begin() + next);
    container.entries.insert(container.entries.begin() + first, std::make_move_iterator(entries.begin()),
                             std::make_move_iterator(entries.begin() + static_cast<std::ptrdiff_t>(kept)));
  } else {
    auto& items = fresh.root.items;
    for (size_t k = 0; k < kept; ++k) for_each_span(items[k], place);
    container.items.erase(container.items.begin() + first, container.items.begin() + next);
    container.items.insert(container.items.begin() + first, std::make_move_iterator(items.begin()),
                           std::make_move_iterator(items.begin() + static_cast<std::ptrdiff_t>(kept)));
  }
  parsed.text = std::move(after);
  return true;
}

void note_edit(YamlCache& cache, std::string_view before, const ByteEdit& edit) {
  for (ParsedYaml& entry : cache.entries) {  // one entry per flavor the text was read as
    if (entry.text.size() != before.size() || entry.text != before) continue;
    if (patch_scalar_edit(entry, edit)) {
      ++cache.patches;
    } else if (patch_block_edit(entry, edit)) {
      ++cache.block_patches;
    } else if (patch_section_edit(entry, edit)) {
      ++cache.section_patches;
    }
  }
}

}  // namespace mblint
