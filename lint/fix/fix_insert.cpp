#include "lint/fix/fix_insert.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "lint/base/config_value.h"

namespace mblint {

namespace {

// Whether the key at `at` follows `{` or `,` (a flow mapping or JSON laid out
// one key per line).
bool inside_flow(std::string_view text, size_t at) {
  while (at > 0 && std::isspace(static_cast<unsigned char>(text[at - 1]))) --at;
  return at > 0 && (text[at - 1] == '{' || text[at - 1] == ',');
}

// A new `name: text` line after the last entry the YAML file writes in the
// section, at that entry's indentation. Only block-style sections whose
// entries all start their line at one indentation.
std::optional<TextEdit> yaml_insertion(const Job& job, const SourceSet& sources, const std::string& key,
                                       const std::string& text) {
  std::vector<std::string> segments = split_path(key);
  if (segments.size() < 2 || job.builder_backed_model) return std::nullopt;
  const ConfigValue* section = find_path(job.config, std::vector<std::string>(segments.begin(), segments.end() - 1));
  if (!section || !section->is_map()) return std::nullopt;
  FileId file = job.primary;
  const SourceFile& source = sources.files[file];
  std::optional<uint32_t> indent;
  uint32_t last = 0;
  for (const MapEntry& entry : section->entries) {
    const Span& written = entry.value.where.key;
    if (!written.valid() || written.file != file) continue;
    LineCol at = line_col(source, written.begin);
    uint32_t column = at.column - 1;
    std::string_view before = std::string_view(source.text).substr(written.begin - column, column);
    if (before.find_first_not_of(' ') != std::string_view::npos) return std::nullopt;  // flow style, `- key:`
    if (inside_flow(source.text, written.begin)) return std::nullopt;  // `{` or `,` before it: no line to add
    if (indent && *indent != column) return std::nullopt;
    indent = column;
    last = std::max({last, written.end, entry.value.where.value.end});
  }
  if (!indent) return std::nullopt;  // the YAML does not write this section
  size_t eol = source.text.find('\n', last);
  std::string line = fmt::format("{}{}: {}", std::string(*indent, ' '), segments.back(), text);
  if (eol == std::string::npos) return TextEdit{make_span(file, source.text.size(), source.text.size()), "\n" + line};
  bool crlf = eol > 0 && source.text[eol - 1] == '\r';
  size_t at = crlf ? eol - 1 : eol;
  return TextEdit{make_span(file, at, at), (crlf ? "\r\n" : "\n") + line};
}

// ` key=text` after the last argument of the launch command.
std::optional<TextEdit> override_append(const Job& job, const SourceSet& sources, const std::string& key,
                                        const std::string& text) {
  const Span& launch = job.launch_span;
  if (!launch.valid() || sources.files[launch.file].synthetic || job.builder_backed_model) return std::nullopt;
  std::string value = text;
  for (size_t at = value.find(", "); at != std::string::npos; at = value.find(", ", at)) value.erase(at + 1, 1);
  return TextEdit{make_span(launch.file, launch.end, launch.end), fmt::format(" {}={}", key, value)};
}

}  // namespace

std::optional<TextEdit> setting_edit(const Job& job, const SourceSet& sources, const std::string& key,
                                     const std::string& text) {
  if (job.dialect != Dialect::Bridge || job.primary == kNoFile) return std::nullopt;
  // Only a key that holds the recipe's value: setting it replaces that value.
  const ConfigValue* node = find_path(job.config, key);
  if (!node || node->where.layer != Layer::Recipe) return std::nullopt;
  if (job.kind == InputKind::BridgeOverrideYaml) return yaml_insertion(job, sources, key, text);
  if (job.kind == InputKind::LaunchScript &&
      (job.entry == EntryPoint::RunRecipe || job.entry == EntryPoint::ConfigFileScript)) {
    return override_append(job, sources, key, text);
  }
  return std::nullopt;
}

void place_setting_fixes(std::vector<Diagnostic>& diagnostics, size_t first, const Job& job,
                         const SourceSet& sources) {
  for (size_t i = first; i < diagnostics.size(); ++i) {
    for (Fix& fix : diagnostics[i].fixes) {
      if (fix.set_key.empty() || !fix.edits.empty()) continue;
      if (auto edit = setting_edit(job, sources, fix.set_key, fix.set_text)) fix.edits.push_back(std::move(*edit));
    }
  }
}

}  // namespace mblint
