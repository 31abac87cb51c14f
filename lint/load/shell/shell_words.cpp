// The characters of one word: literal runs, backslashes, quotes, and the
// `NAME=( ... )` array form. A literal that is a plain stretch of the source
// keeps no per-character mapping; it is made when the word is expanded.
#include <fmt/format.h>

#include <algorithm>

#include "lint/load/shell/shell_lexer_internal.h"

namespace mblint::shell {

namespace {

// `bash -c "$CMD"`: the source itself came from expansions; the literal
// characters keep those expansion records so definitions stay visible.
void carry_source_expansions(const Lexer& lx, PartBuilder& b) {
  MappedString& lit = detail_of(b.literal).mapped;
  if (b.origins.empty()) return;
  auto [lowest, highest] = std::minmax_element(b.origins.begin(), b.origins.end());
  for (const Expansion& e : lx.source.mapped->expansions) {
    // A code string holds up to 256 records and a literal is one word of it:
    // most records lie elsewhere.
    if (e.end <= *lowest || e.begin > *highest) continue;
    size_t i = 0;
    while (i < b.origins.size()) {
      if (b.origins[i] < e.begin || b.origins[i] >= e.end) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < b.origins.size() && b.origins[j] >= e.begin && b.origins[j] < e.end) ++j;
      Expansion copy = e;
      copy.begin = i;
      copy.end = j;
      lit.expansions.push_back(std::move(copy));
      i = j;
    }
  }
}

void start_literal(const Lexer& lx, PartBuilder& b, size_t at_index, bool quoted) {
  flush(lx, b);
  b.literal.kind = PartKind::Literal;
  b.literal.quoted = quoted;
  b.literal.verbatim = true;
  b.literal.begin = b.literal.end = static_cast<uint32_t>(at_index);
  b.open = true;
}

// The literal stops being a plain stretch of the source (an escape, a
// continuation, or a source that itself came from expansions): give its
// characters so far their mapping.
void materialize(const Lexer& lx, Part& literal) {
  MappedString& mapped = detail_of(literal).mapped;
  mapped.text = literal.text;
  map_source(lx.source, literal.begin, literal.text.size(), mapped);
  literal.verbatim = false;
}

// bash accepts a trailing `\` at the end of the file, but it usually means
// the last line of a command was lost. This and the two checks below are
// warnings: bash runs the script, only not as written.
void report_continuation_at_end(Lexer& lx, size_t backslash) {
  report_at(lx, backslash, backslash + 1, "line continuation `\\` at the end of the file",
            "remove the trailing `\\` or add the line it continues to", Severity::Warning);
}

bool blank(char c) { return c == ' ' || c == '\t'; }

// `\` followed by spaces escapes a space, not the newline: the command ends
// on this line and the next line runs as a command of its own.
void check_broken_continuation(Lexer& lx, size_t backslash) {
  size_t i = backslash + 1;
  while (i < lx.text.size() && blank(lx.text[i])) ++i;
  if (i == backslash + 1 || i >= lx.text.size() || lx.text[i] != '\n') return;
  report_at(lx, backslash, i, "`\\` followed by spaces does not continue the line: the command ends here and the "
            "next line runs as a separate command",
            "remove the spaces after the `\\`", Severity::Warning);
}

// A continuation into an empty line ends the command at that line; the
// options on the lines after it run as a command of their own.
void check_continuation_into_blank_line(Lexer& lx, size_t backslash, size_t after) {
  size_t i = after;
  while (i < lx.text.size() && blank(lx.text[i])) ++i;
  if (i >= lx.text.size() || lx.text[i] != '\n') return;
  size_t next = i + 1;
  while (next < lx.text.size() && (blank(lx.text[next]) || lx.text[next] == '\n')) ++next;
  if (next >= lx.text.size() || lx.text[next] == '#') return;
  report_at(lx, backslash, backslash + 1, "line continuation into an empty line: the command ends there and the "
            "lines after it run as a separate command",
            "remove the empty line, or the `\\` if the command is meant to end here", Severity::Warning);
}

// `\<newline>` (also `\<CR><LF>`): removed wherever it is not single-quoted.
// At the very end of the input it is a problem, unless a quote left open
// there is reported instead.
bool skip_continuation(Lexer& lx, bool quoted = false) {
  size_t i = lx.pos;
  if (at(lx, i) != '\\') return false;
  size_t after = 0;
  if (at(lx, i + 1) == '\n')
    after = i + 2;
  else if (at(lx, i + 1) == '\r' && at(lx, i + 2) == '\n')
    after = i + 3;
  else
    return false;
  lx.pos = after;
  if (lx.pos >= lx.text.size() && !quoted) report_continuation_at_end(lx, i);
  if (!quoted) check_continuation_into_blank_line(lx, i, after);
  return true;
}

void lex_single_quote(Lexer& lx, PartBuilder& b, size_t limit) {
  size_t open = lx.pos;
  size_t close = lx.text.find('\'', open + 1);
  if (close == std::string_view::npos || close >= limit) {
    report_unterminated(
        lx, open, open + 1, "unterminated single quote",
        "add the closing `'`; everything up to the end of the file is inside the quotes");
    close = limit;
  }
  mark_quoted(lx, b, open);
  add_run(lx, b, open + 1, close, true);
  lx.pos = std::min(close + 1, limit);
}

void lex_double_quote(Lexer& lx, PartBuilder& b, size_t limit) {
  size_t open = lx.pos;
  ++lx.pos;
  size_t before = b.added;
  lex_into(lx, b, Mode::DoubleQuoted, true, limit);
  // "$@" with no arguments makes no word, but "" does.
  if (b.added == before) mark_quoted(lx, b, open);
  if (lx.pos < limit && lx.text[lx.pos] == '"') {
    ++lx.pos;
    return;
  }
  report_unterminated(
      lx, open, open + 1, "unterminated double quote",
      "add the closing `\"`; everything up to the end of the file is inside the quotes");
}

// A backslash outside single quotes; lx.pos at it.
void lex_backslash(Lexer& lx, PartBuilder& b, Mode mode, bool quoted, size_t limit) {
  size_t i = lx.pos;
  if (skip_continuation(lx, quoted)) return;
  if (i + 1 >= limit) {
    if (i + 1 >= lx.text.size() && !quoted) report_continuation_at_end(lx, i);
    add_char(lx, b, '\\', i, i + 1, true);
    lx.pos = i + 1;
    return;
  }
  char next = lx.text[i + 1];
  if (!quoted && blank(next)) check_broken_continuation(lx, i);
  if (quoted) {
    // Inside double quotes only these characters can be escaped.
    std::string_view escapable = mode == Mode::Operand ? "$`\"\\}" : "$`\"\\";
    if (escapable.find(next) == std::string_view::npos) {
      add_char(lx, b, '\\', i, i + 1, true);
      lx.pos = i + 1;
      return;
    }
  }
  add_char(lx, b, next, i, i + 2, true);
  lx.pos = i + 2;
}

bool stops_word(const Lexer& lx, Mode mode, char c, int& regex_depth) {
  switch (mode) {
    case Mode::Word:
      if (c == '\r' && at(lx, lx.pos + 1) == '\n') return true;
      if ((c == '<' || c == '>') && at(lx, lx.pos + 1) == '(') return false;
      return is_metachar(c);
    case Mode::DoubleQuoted:
      return c == '"';
    case Mode::Operand:
      return c == '}';
    case Mode::Arithmetic:
      return false;
    case Mode::Regex:
      if (c == '(') ++regex_depth;
      if (c == ')' && regex_depth-- == 0) return true;
      if (regex_depth > 0) return c == '\n';
      return is_blank(c) || c == '\n' || c == ';' || c == '&' || c == '<' || c == '>';
  }
  return true;
}

// A character with no meaning in `mode`: it is taken as it is.
bool is_ordinary(Mode mode, bool quoted, char c) {
  if (c == '\\' || c == '$' || c == '`') return false;
  switch (mode) {
    case Mode::Word:
      return !is_metachar(c) && c != '\'' && c != '"' && c != '\r';
    case Mode::DoubleQuoted:
      return c != '"';
    case Mode::Operand:
      return c != '}' && c != '"' && (quoted || c != '\'');
    case Mode::Arithmetic:
      return c != '\'' && c != '"';
    case Mode::Regex:
      return false;
  }
  return false;
}

// `NAME=` or `NAME+=` so far, unquoted: a `(` now opens an array.
bool opens_array(const PartBuilder& b) {
  if (!b.parts.empty() || !b.open || b.literal.quoted) return false;
  std::string_view text = b.literal.text;
  if (text.size() < 2 || text.back() != '=' || !is_name_start(text[0])) return false;
  text.remove_suffix(text[text.size() - 2] == '+' ? 2 : 1);
  return std::all_of(text.begin(), text.end(), is_name_char);
}

void lex_array(Lexer& lx, Word& word) {
  size_t open = lx.pos;
  ++lx.pos;
  word.is_array = true;
  if (!enter_nesting(lx, open)) {
    leave_nesting(lx);
    return;
  }
  while (!lx.problems.fatal) {
    skip_blanks_and_comments(lx, true);
    if (lx.pos >= lx.text.size()) {
      report_unterminated(lx, open, open + 1, "unterminated array: `(` without `)`",
                          "add the closing `)`");
      break;
    }
    char c = lx.text[lx.pos];
    if (c == ')') {
      ++lx.pos;
      break;
    }
    if (is_metachar(c) && !((c == '<' || c == '>') && at(lx, lx.pos + 1) == '(')) {
      report_at(lx, lx.pos, lx.pos + 1, fmt::format("unexpected `{}` inside an array", c),
                "quote the character or remove it");
      ++lx.pos;
      continue;
    }
    word.elements.push_back(lex_word(lx));
  }
  leave_nesting(lx);
}

}  // namespace

void flush(const Lexer& lx, PartBuilder& b) {
  if (!b.open) return;
  if (has_expansions(lx.source)) carry_source_expansions(lx, b);
  b.parts.push_back(std::move(b.literal));
  b.literal = Part{};
  b.origins.clear();
  b.open = false;
}

namespace {

// Capacity for `extra` more elements, growing at least geometrically (an
// exact reserve per run would copy the whole literal on every run).
template <typename Container>
void grow_for(Container& container, size_t extra) {
  size_t needed = container.size() + extra;
  if (needed > container.capacity()) container.reserve(std::max(needed, 2 * container.capacity()));
}

// A run of a source that came from expansions is mapped character by
// character: make room once instead of growing five containers per character.
void room_for(PartBuilder& b, size_t extra) {
  grow_for(b.literal.text, extra);
  grow_for(b.origins, extra);
  if (!b.literal.detail) return;
  MappedString& mapped = b.literal.detail->mapped;
  grow_for(mapped.text, extra);
  grow_for(mapped.begins, extra);
  grow_for(mapped.ends, extra);
}

}  // namespace

// One literal character produced by source characters [begin, end).
void add_char(const Lexer& lx, PartBuilder& b, char c, size_t begin, size_t end, bool quoted) {
  if (!b.open || b.literal.quoted != quoted) start_literal(lx, b, begin, quoted);
  Part& literal = b.literal;
  bool carry = has_expansions(lx.source);
  if (literal.verbatim) {
    if (literal.text.empty()) literal.begin = literal.end = static_cast<uint32_t>(begin);
    bool plain = end == begin + 1 && begin == literal.end && lx.text[begin] == c;
    if (plain && !carry) {
      literal.text.push_back(c);
      literal.end = static_cast<uint32_t>(end);
      ++b.added;
      return;
    }
    materialize(lx, literal);
  }
  literal.text.push_back(c);
  append_char(literal.detail->mapped, c, source_begin(lx.source, begin),
              source_end(lx.source, end - 1));
  literal.end = static_cast<uint32_t>(end);
  ++b.added;
  if (carry) b.origins.push_back(static_cast<uint32_t>(begin));
}

// Source characters [begin, end) as they are: one append while the literal
// is still a plain stretch of the source.
void add_run(const Lexer& lx, PartBuilder& b, size_t begin, size_t end, bool quoted) {
  if (begin >= end) return;
  if (!b.open || b.literal.quoted != quoted) start_literal(lx, b, begin, quoted);
  Part& literal = b.literal;
  if (literal.verbatim && !has_expansions(lx.source)) {
    if (literal.text.empty()) literal.begin = literal.end = static_cast<uint32_t>(begin);
    if (literal.end == begin) {
      literal.text.append(lx.text.substr(begin, end - begin));
      literal.end = static_cast<uint32_t>(end);
      b.added += end - begin;
      return;
    }
  }
  add_char(lx, b, lx.text[begin], begin, begin + 1, quoted);
  if (has_expansions(lx.source)) room_for(b, end - begin - 1);
  for (size_t i = begin + 1; i < end; ++i) add_char(lx, b, lx.text[i], i, i + 1, quoted);
}

// `""` and `''` make an (empty) word even though they add no character.
void mark_quoted(const Lexer& lx, PartBuilder& b, size_t at_index) {
  if (b.open && b.literal.quoted) return;
  start_literal(lx, b, at_index, true);
}

void add_part(const Lexer& lx, PartBuilder& b, Part part) {
  flush(lx, b);
  b.parts.push_back(std::move(part));
  ++b.added;
}

void report_at(Lexer& lx, size_t begin, size_t end, std::string message, std::string help,
               std::optional<Severity> demote_to) {
  report(lx.problems, source_span(lx.source, begin, end), std::move(message), std::move(help), demote_to);
}

// A construct that ran to the end of the input; reported only when it is
// the innermost one.
void report_unterminated(Lexer& lx, size_t begin, size_t end, std::string message,
                         std::string help) {
  if (lx.swallowed) return;
  lx.swallowed = true;
  report_at(lx, begin, end, std::move(message), std::move(help));
}

void lex_into(Lexer& lx, PartBuilder& b, Mode mode, bool quoted, size_t limit) {
  int regex_depth = 0;
  while (lx.pos < limit && !lx.problems.fatal) {
    char c = lx.text[lx.pos];
    if (stops_word(lx, mode, c, regex_depth)) return;
    if (c == '\\') {
      lex_backslash(lx, b, mode, quoted, limit);
    } else if (c == '$') {
      lex_dollar(lx, b, quoted, limit);
    } else if (c == '`') {
      lex_backtick(lx, b, quoted, limit);
    } else if ((c == '<' || c == '>') && mode == Mode::Word) {
      lex_command_substitution(lx, b, quoted);  // <(...) process substitution
    } else if (c == '\'' && !quoted) {
      lex_single_quote(lx, b, limit);
    } else if (c == '"' && (!quoted || mode == Mode::Operand)) {
      lex_double_quote(lx, b, limit);
    } else {
      size_t end = lx.pos + 1;
      while (end < limit && is_ordinary(mode, quoted, lx.text[end])) ++end;
      add_run(lx, b, lx.pos, end, quoted);
      lx.pos = end;
    }
  }
}

Word lex_word(Lexer& lx) {
  Word word;
  word.begin = static_cast<uint32_t>(lx.pos);
  PartBuilder b;
  lex_into(lx, b, Mode::Word, false, lx.text.size());
  if (at(lx, lx.pos) == '(' && opens_array(b)) lex_array(lx, word);
  flush(lx, b);
  word.parts = std::move(b.parts);
  word.end = static_cast<uint32_t>(lx.pos);
  return word;
}

void skip_blanks_and_comments(Lexer& lx, bool newlines) {
  while (lx.pos < lx.text.size()) {
    char c = lx.text[lx.pos];
    if (is_blank(c) || (newlines && (c == '\n' || c == '\r'))) {
      ++lx.pos;
    } else if (c == '\\') {
      if (!skip_continuation(lx)) return;
    } else if (c == '#') {
      size_t newline = lx.text.find('\n', lx.pos);
      lx.pos = newline == std::string_view::npos ? lx.text.size() : newline;
    } else {
      return;
    }
  }
}

Word lex_arithmetic(Lexer& lx, size_t begin, size_t end) {
  lx.pos = begin;
  PartBuilder b;
  lex_into(lx, b, Mode::Arithmetic, false, end);
  flush(lx, b);
  Word word;
  word.parts = std::move(b.parts);
  word.begin = static_cast<uint32_t>(begin);
  word.end = static_cast<uint32_t>(end);
  lx.pos = std::max(lx.pos, end);
  return word;
}

Word lex_regex_word(Lexer& lx) {
  skip_blanks_and_comments(lx, false);
  Word word;
  word.begin = static_cast<uint32_t>(lx.pos);
  PartBuilder b;
  lex_into(lx, b, Mode::Regex, false, lx.text.size());
  flush(lx, b);
  word.parts = std::move(b.parts);
  word.end = static_cast<uint32_t>(lx.pos);
  return word;
}

}  // namespace mblint::shell
