#include "lint/fix/fix_syntax.h"
#include "lint/base/text.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

#include <fmt/format.h>

namespace mblint {

namespace {

bool is_yaml_file(const SourceFile& file) {
  std::string lower = file.path;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return ends_with(lower, ".yaml") || ends_with(lower, ".yml") || ends_with(lower, ".json");
}

bool is_blank(char c) { return c == ' ' || c == '\t'; }

// A word YAML reads back as a plain string (not null, a bool or a number).
bool plain_string_word(std::string_view word) {
  if (word.empty() || !std::isalpha(static_cast<unsigned char>(word[0]))) return false;
  bool word_chars = std::all_of(word.begin(), word.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-' || c == '+' || c == '.';
  });
  if (!word_chars) return false;
  std::string lower(word);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* typed : {"null", "true", "false", "yes", "no", "on", "off", "y", "n"}) {
    if (lower == typed) return false;
  }
  return true;
}

std::optional<TextEdit> fit_yaml(TextEdit edit, std::string_view text) {
  std::string_view old = text.substr(edit.where.begin, edit.where.end - edit.where.begin);
  bool new_line = !edit.replacement.empty() && (edit.replacement[0] == '\n' || edit.replacement[0] == '\r');
  if (old.empty() && new_line) return edit;  // a whole `key: value` line (lint/fix/fix_insert.h)
  if (edit.replacement.find('\n') != std::string::npos) return std::nullopt;
  if (old.empty()) {
    // `key:` with no value: the value goes after a space.
    if (edit.where.begin > 0 && text[edit.where.begin - 1] == ':') edit.replacement = fmt::format(" {}", edit.replacement);
    return edit;
  }
  bool quoted = old.size() >= 2 && (old.front() == '"' || old.front() == '\'') && old.back() == old.front();
  if (quoted && plain_string_word(edit.replacement)) {
    // Keep the user's quotes around a string that stays a string.
    edit.where.begin += 1;
    edit.where.end -= 1;
  }
  return edit;
}

// Characters that mean the same inside double quotes, single quotes and
// outside them (so the quoting context of the value does not matter).
bool shell_inert(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '.' || c == ',' || c == ':' || c == '+' || c == '-' || c == '/' ||
           c == '=' || c == '@' || c == '%' || c == '[' || c == ']';
  });
}

// The start of the `--flag` the value at `begin` belongs to (`--flag value`
// or `--flag=value` on one line), if it is one.
std::optional<uint32_t> flag_before(std::string_view text, uint32_t begin) {
  if (begin == 0) return std::nullopt;
  size_t at = begin;
  if (text[at - 1] == '=') {
    while (at > 0 && !std::isspace(static_cast<unsigned char>(text[at - 1])) && text[at - 1] != '"' &&
           text[at - 1] != '\'') {
      --at;
    }
    if (text[at] == '-') return static_cast<uint32_t>(at);
    return std::nullopt;
  }
  if (!is_blank(text[at - 1])) return std::nullopt;
  while (at > 0 && is_blank(text[at - 1])) --at;
  size_t word_end = at;
  while (at > 0 && !std::isspace(static_cast<unsigned char>(text[at - 1]))) --at;
  std::string_view word = text.substr(at, word_end - at);
  if (word.size() >= 2 && word[0] == '-' && word.find('=') == std::string_view::npos &&
      std::isalpha(static_cast<unsigned char>(word.back()))) {
    return static_cast<uint32_t>(at);
  }
  return std::nullopt;
}

// Removing `--flag value` from a line: also the blanks that separated it.
Span flag_removal(std::string_view text, Span value, uint32_t flag_start) {
  Span removal{value.file, flag_start, value.end};
  size_t line_start = text.rfind('\n', flag_start == 0 ? 0 : flag_start - 1);
  line_start = line_start == std::string_view::npos ? 0 : line_start + 1;
  bool content_before = text.substr(line_start, flag_start - line_start).find_first_not_of(" \t") != std::string_view::npos;
  if (content_before) {
    while (removal.begin > line_start && is_blank(text[removal.begin - 1])) --removal.begin;
    return removal;
  }
  while (removal.end < text.size() && is_blank(text[removal.end])) ++removal.end;
  bool line_ends = removal.end >= text.size() || text[removal.end] == '\n' || text[removal.end] == '\r';
  if (!line_ends) return removal;
  // The flag was the whole line: remove the line, and the ` \` that
  // continued the previous line onto it.
  removal.begin = static_cast<uint32_t>(line_start);
  size_t back = line_start;
  if (back >= 2 && text[back - 1] == '\n' && text[back - 2] == '\\') {
    back -= 2;
    while (back > 0 && is_blank(text[back - 1])) --back;
    removal.begin = static_cast<uint32_t>(back);
  }
  return removal;
}

// `[2, 4]` -> items "2", "4".
std::optional<std::vector<std::string>> list_items(std::string_view list) {
  if (list.size() < 2 || list.front() != '[' || list.back() != ']') return std::nullopt;
  std::vector<std::string> items;
  std::string_view inner = list.substr(1, list.size() - 2);
  size_t at = 0;
  while (at <= inner.size()) {
    size_t comma = inner.find(',', at);
    std::string_view item = inner.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
    while (!item.empty() && is_blank(item.front())) item.remove_prefix(1);
    while (!item.empty() && is_blank(item.back())) item.remove_suffix(1);
    if (!item.empty()) items.emplace_back(item);
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
  return items;
}

std::optional<TextEdit> fit_shell(TextEdit edit, std::string_view text) {
  std::string_view old = text.substr(edit.where.begin, edit.where.end - edit.where.begin);
  if (old.empty() && !edit.replacement.empty() && edit.replacement[0] == ' ') {
    // Words appended to a command (lint/fix/fix_insert.h, a Megatron-LM flag):
    // each one inert, one blank before each.
    std::string_view words = edit.replacement;
    while (!words.empty()) {
      if (words.front() != ' ') return std::nullopt;
      words.remove_prefix(1);
      size_t end = std::min(words.find(' '), words.size());
      if (end == 0 || !shell_inert(words.substr(0, end))) return std::nullopt;
      words.remove_prefix(end);
    }
    return edit;
  }
  if (!old.empty() && old.front() == '-' && edit.replacement.empty() && old.find_first_of(" \t\n") == std::string_view::npos) {
    // Dropping a flag word: with the blanks that separated it.
    return TextEdit{flag_removal(text, edit.where, edit.where.begin), ""};
  }
  bool old_is_flag = !old.empty() && old.front() == '-' &&
                     !std::isdigit(static_cast<unsigned char>(old.size() > 1 ? old[1] : 'x'));
  if (old_is_flag && starts_with(old, "--") && starts_with(edit.replacement, "--") &&
      old.find_first_of(" \t\n=") == std::string_view::npos) {
    // A flag renamed (--batch-size -> --micro-batch-size): inert words only.
    for (std::string_view words = edit.replacement; !words.empty();) {
      size_t end = std::min(words.find(' '), words.size());
      if (end == 0 || !shell_inert(words.substr(0, end))) return std::nullopt;
      words.remove_prefix(std::min(end + 1, words.size()));
    }
    return edit;
  }
  if (old_is_flag) return std::nullopt;  // a flag, not a value: a value edit cannot turn it off
  std::optional<uint32_t> flag = flag_before(text, edit.where.begin);
  if (flag && edit.replacement == "null") {
    // argparse has no `null`: leaving the flag out gives its default, None.
    return TextEdit{flag_removal(text, edit.where, *flag), ""};
  }
  if (auto items = list_items(edit.replacement)) {
    std::string joined;
    for (const std::string& item : *items) {
      if (!shell_inert(item)) return std::nullopt;
      if (!joined.empty()) joined += flag ? " " : ",";
      joined += item;
    }
    // After a flag: one word per item (nargs='+'); in a Hydra override: [a,b].
    edit.replacement = flag ? joined : fmt::format("[{}]", joined);
    if (flag && old.find('"') != std::string_view::npos) return std::nullopt;
    return edit;
  }
  if (!shell_inert(edit.replacement)) return std::nullopt;
  return edit;
}

}  // namespace

std::optional<TextEdit> fit_edit(const TextEdit& edit, const SourceSet& sources) {
  const Span& span = edit.where;
  if (!span.valid() || static_cast<size_t>(span.file) >= sources.files.size()) return std::nullopt;
  const SourceFile& file = sources.files[span.file];
  if (file.synthetic) return std::nullopt;  // mblint's own command line is not a file
  if (span.begin > span.end || span.end > file.text.size()) return std::nullopt;
  return is_yaml_file(file) ? fit_yaml(edit, file.text) : fit_shell(edit, file.text);
}

void fit_fix_edits(std::vector<Diagnostic>& diagnostics, const SourceSet& sources) {
  for (Diagnostic& d : diagnostics) {
    for (Fix& fix : d.fixes) {
      std::vector<TextEdit> fitted;
      for (const TextEdit& edit : fix.edits) {
        std::optional<TextEdit> fit = fit_edit(edit, sources);
        if (!fit) break;
        fitted.push_back(std::move(*fit));
      }
      // All of a fix or none of it.
      fix.edits = fitted.size() == fix.edits.size() ? std::move(fitted) : std::vector<TextEdit>{};
    }
  }
}

}  // namespace mblint
