// Small helpers shared by the shell lexer, parser and walker: source spans,
// problem reports and the shape of assignment words.
#include "lint/base/input_rules.h"
#include "lint/load/shell/shell_syntax.h"

#include <algorithm>

namespace mblint::shell {

namespace {

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

bool is_monotonic(const MappedString& text) {
  for (size_t i = 0; i < text.begins.size(); ++i) {
    if (text.ends[i] < text.begins[i]) return false;
    if (i > 0 && (text.begins[i] < text.begins[i - 1] || text.ends[i] < text.ends[i - 1])) {
      return false;
    }
  }
  return true;
}

}  // namespace

Source file_source(FileId file, std::string_view text) { return Source{text, file, nullptr, true}; }

Source code_source(const MappedString& code) {
  return Source{code.text, code.file, &code, is_monotonic(code)};
}

void map_source(const Source& source, size_t first, size_t count, MappedString& out) {
  out.file = source.file;
  if (source.mapped) {
    out.begins.assign(source.mapped->begins.begin() + first,
                      source.mapped->begins.begin() + first + count);
    out.ends.assign(source.mapped->ends.begin() + first,
                    source.mapped->ends.begin() + first + count);
    return;
  }
  out.begins.resize(count);
  out.ends.resize(count);
  for (size_t i = 0; i < count; ++i) {
    out.begins[i] = static_cast<uint32_t>(first + i);
    out.ends[i] = static_cast<uint32_t>(first + i + 1);
  }
}

Span source_span(const Source& source, size_t begin, size_t end) {
  size_t size = source.text.size();
  if (source.mapped && (!source.monotonic || size == 0)) return span_of(*source.mapped, begin, end);
  begin = std::min(begin, size);
  end = std::min(std::max(end, begin), size);
  if (begin == end) {
    uint32_t at =
        begin < size ? source_begin(source, begin) : (size ? source_end(source, size - 1) : 0);
    return Span{source.file, at, at};
  }
  return Span{source.file, source_begin(source, begin), source_end(source, end - 1)};
}

void report(Problems& problems, Span where, std::string message, std::string help,
            std::optional<Severity> demote_to) {
  if (problems.fatal) return;
  Diagnostic diagnostic = input_finding(input_rule::kScriptSyntax, "", where);
  if (demote_to) diagnostic = demoted(std::move(diagnostic), *demote_to);
  if (problems.count >= kMaxProblems) {
    diagnostic.message = "too many syntax problems; mblint stopped reading the script here";
    diagnostic.help = "fix the problems above first";
    problems.fatal = true;
  } else {
    diagnostic.message = std::move(message);
    diagnostic.help = std::move(help);
    ++problems.count;
  }
  problems.out.push_back(std::move(diagnostic));
}

const std::vector<Word>& inner_words(const Part& part) {
  static const std::vector<Word> kNone;
  return part.detail ? part.detail->inner : kNone;
}

const std::vector<Word>& operand_words(const Part& part) {
  static const std::vector<Word> kNone;
  return part.detail ? part.detail->operand : kNone;
}

PartDetail& detail_of(Part& part) {
  if (!part.detail) part.detail = std::make_unique<PartDetail>();
  return *part.detail;
}

const NodeDetail& detail_of(const Node& node) {
  static const NodeDetail kNone;
  return node.detail ? *node.detail : kNone;
}

NodeDetail& detail_of(Node& node) {
  if (!node.detail) node.detail = std::make_unique<NodeDetail>();
  return *node.detail;
}

MappedString literal_mapped(const Source& source, const Part& part, size_t skip) {
  skip = std::min(skip, part.text.size());
  if (!part.verbatim) {
    if (!part.detail) return MappedString{};
    const MappedString& mapped = part.detail->mapped;
    if (skip == 0) return mapped;
    return substring(mapped, skip, mapped.text.size());
  }
  MappedString out;
  out.text = part.text.substr(skip);
  map_source(source, part.begin + skip, out.text.size(), out);
  return out;
}

bool is_identifier(std::string_view name) {
  return !name.empty() && is_name_start(name[0]) &&
         std::all_of(name.begin(), name.end(), is_name_char);
}

std::optional<std::string_view> plain_text(const Word& word) {
  if (word.parts.size() != 1 || word.is_array) return std::nullopt;
  const Part& part = word.parts[0];
  if (part.kind != PartKind::Literal || part.quoted) return std::nullopt;
  return std::string_view(part.text);
}

std::optional<AssignmentTarget> assignment_target(const Word& word) {
  if (word.parts.empty()) return std::nullopt;
  const Part& first = word.parts[0];
  if (first.kind != PartKind::Literal || first.quoted) return std::nullopt;
  std::string_view text = first.text;
  if (text.empty() || !is_name_start(text[0])) return std::nullopt;
  size_t i = 1;
  while (i < text.size() && is_name_char(text[i])) ++i;
  AssignmentTarget target;
  target.name.assign(text.substr(0, i));
  if (i < text.size() && text[i] == '[') {
    size_t close = text.find(']', i);
    if (close == std::string_view::npos) return std::nullopt;
    target.subscript = std::string(text.substr(i + 1, close - i - 1));
    i = close + 1;
  }
  if (i < text.size() && text[i] == '+') {
    target.append = true;
    ++i;
  }
  if (i >= text.size() || text[i] != '=') return std::nullopt;
  target.value_offset = i + 1;
  return target;
}

}  // namespace mblint::shell
