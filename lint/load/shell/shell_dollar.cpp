// `$` expansions as written: parameters with their operators, `$(...)` and
// backticks (parsed to find their end, never run), `$((...))` and `$'...'`.
#include <fmt/format.h>

#include "lint/load/shell/shell_lexer_internal.h"

namespace mblint::shell {

namespace {

void add_utf8(const Lexer& lx, PartBuilder& b, uint32_t code, size_t begin, size_t end) {
  std::string bytes;
  if (code < 0x80) {
    bytes += static_cast<char>(code);
  } else if (code < 0x800) {
    bytes += static_cast<char>(0xC0 | (code >> 6));
    bytes += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    bytes += static_cast<char>(0xE0 | (code >> 12));
    bytes += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    bytes += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    code = std::min<uint32_t>(code, 0x10FFFF);
    bytes += static_cast<char>(0xF0 | (code >> 18));
    bytes += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    bytes += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    bytes += static_cast<char>(0x80 | (code & 0x3F));
  }
  for (char c : bytes) add_char(lx, b, c, begin, end, true);
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads digits of `base` (at most `max_digits`) after lx.pos.
uint32_t read_number(Lexer& lx, size_t limit, int base, int max_digits) {
  uint32_t value = 0;
  for (int n = 0; n < max_digits && lx.pos < limit; ++n) {
    int digit = hex_value(lx.text[lx.pos]);
    if (digit < 0 || digit >= base) break;
    value = value * static_cast<uint32_t>(base) + static_cast<uint32_t>(digit);
    ++lx.pos;
  }
  return value;
}

// One escape of $'...', lx.pos at the backslash.
void lex_ansi_escape(Lexer& lx, PartBuilder& b, size_t limit) {
  size_t begin = lx.pos;
  char c = at(lx, begin + 1);
  lx.pos = begin + 2;
  auto emit = [&](uint32_t code) { add_utf8(lx, b, code, begin, lx.pos); };
  switch (c) {
    case 'n':
      return emit('\n');
    case 't':
      return emit('\t');
    case 'r':
      return emit('\r');
    case 'a':
      return emit(7);
    case 'b':
      return emit(8);
    case 'e':
    case 'E':
      return emit(27);
    case 'f':
      return emit(12);
    case 'v':
      return emit(11);
    case '\\':
    case '\'':
    case '"':
    case '?':
      return emit(static_cast<uint8_t>(c));
    case 'x':
    case 'u':
    case 'U': {  // up to 2, 4 or 8 hex digits; none leaves the escape as written
      size_t digits = lx.pos;
      uint32_t value = read_number(lx, limit, 16, c == 'x' ? 2 : c == 'u' ? 4 : 8);
      if (lx.pos == digits) break;
      return emit(value);
    }
    case 'c':
      if (lx.pos < limit) {
        char control = lx.text[lx.pos++];
        return emit(static_cast<uint8_t>(control) & 0x1F);
      }
      break;
    default:
      if (c >= '0' && c <= '7') {
        lx.pos = begin + 1;
        return emit(read_number(lx, limit, 8, 3) & 0xFF);
      }
      break;
  }
  // Not an escape bash knows: the backslash and the character stay.
  lx.pos = begin + 1;
  add_char(lx, b, '\\', begin, begin + 1, true);
}

void lex_ansi_c(Lexer& lx, PartBuilder& b, size_t limit) {
  size_t open = lx.pos;
  lx.pos += 2;
  size_t before = b.added;
  while (lx.pos < limit && lx.text[lx.pos] != '\'') {
    if (lx.text[lx.pos] == '\\' && lx.pos + 1 < limit) {
      lex_ansi_escape(lx, b, limit);
      continue;
    }
    add_char(lx, b, lx.text[lx.pos], lx.pos, lx.pos + 1, true);
    ++lx.pos;
  }
  if (b.added == before) mark_quoted(lx, b, open);
  if (lx.pos >= limit) {
    report_unterminated(lx, open, open + 2, "unterminated `$'` string", "add the closing `'`");
    return;
  }
  ++lx.pos;
}

void lex_arithmetic_expansion(Lexer& lx, PartBuilder& b, bool quoted, size_t end) {
  size_t open = lx.pos;
  Part part;
  part.kind = PartKind::Arithmetic;
  part.quoted = quoted;
  part.begin = static_cast<uint32_t>(open);
  if (enter_nesting(lx, open)) {
    detail_of(part).inner.push_back(lex_arithmetic(lx, open + 3, end - 2));
    lx.pos = end;
  }
  leave_nesting(lx);
  part.end = static_cast<uint32_t>(lx.pos);
  add_part(lx, b, std::move(part));
}

void report_unterminated_arithmetic(Lexer& lx, size_t open) {
  report_unterminated(lx, open, open + 3, "unterminated `$((`",
                      "add the closing `))`; everything up to the end of the file is inside it");
  lx.pos = lx.text.size();
}

// `[...]` after a parameter name; lx.pos at `[`.
void lex_subscript(Lexer& lx, Part& part, size_t limit) {
  char c = at(lx, lx.pos + 1);
  if ((c == '@' || c == '*') && at(lx, lx.pos + 2) == ']') {
    part.subscript = c == '@' ? Subscript::All : Subscript::Joined;
    lx.pos += 3;
    return;
  }
  int depth = 0;
  for (size_t i = lx.pos + 1; i < limit && lx.text[i] != '}'; ++i) {
    if (lx.text[i] == '[') ++depth;
    if (lx.text[i] != ']') continue;
    if (depth-- > 0) continue;
    part.subscript = Subscript::Index;
    detail_of(part).inner.push_back(lex_arithmetic(lx, lx.pos + 1, i));
    lx.pos = i + 1;
    return;
  }
  part.op = ParamOp::Unsupported;
}

// The operator after the name in ${NAME...}; lx.pos just after the name.
void lex_param_operator(Lexer& lx, Part& part) {
  char c = at(lx, lx.pos);
  auto word_op = [](char op) {
    switch (op) {
      case '-':
        return ParamOp::Default;
      case '=':
        return ParamOp::Assign;
      case '+':
        return ParamOp::Alternative;
      case '?':
        return ParamOp::Error;
      default:
        return ParamOp::Unsupported;
    }
  };
  if (c == '}') return;
  if (part.op == ParamOp::Length) {
    part.op = ParamOp::Unsupported;
    return;
  }
  if (c == ':' && word_op(at(lx, lx.pos + 1)) != ParamOp::Unsupported) {
    part.colon = true;
    part.op = word_op(at(lx, lx.pos + 1));
    lx.pos += 2;
  } else if (word_op(c) != ParamOp::Unsupported) {
    part.op = word_op(c);
    ++lx.pos;
  } else if (c == '#' || c == '%') {
    part.op = c == '#' ? ParamOp::RemovePrefix : ParamOp::RemoveSuffix;
    ++lx.pos;
    if (at(lx, lx.pos) == c) {
      part.longest = true;
      ++lx.pos;
    }
  } else {
    part.op = ParamOp::Unsupported;  // ${X/a/b}, ${X:1:2}, ${X^^}, ...
  }
}

void lex_param_name(Lexer& lx, Part& part) {
  size_t start = lx.pos;
  char c = at(lx, start);
  if (is_name_start(c)) {
    while (is_name_char(at(lx, lx.pos))) ++lx.pos;
  } else if (is_digit(c)) {
    while (is_digit(at(lx, lx.pos))) ++lx.pos;
  } else if (c != '\0' && std::string_view("@*#?$!-").find(c) != std::string_view::npos) {
    ++lx.pos;
  }
  part.text.assign(lx.text.substr(start, lx.pos - start));
}

void lex_brace_parameter(Lexer& lx, PartBuilder& b, bool quoted, size_t limit) {
  size_t open = lx.pos;
  Part part;
  part.kind = PartKind::Parameter;
  part.quoted = quoted;
  part.begin = static_cast<uint32_t>(open);
  lx.pos = open + 2;
  if (!enter_nesting(lx, open)) {
    leave_nesting(lx);
    return;
  }
  char first = at(lx, lx.pos);
  char second = at(lx, lx.pos + 1);
  if (first == '#' && second != '}' && second != '\0' && second != ':' && second != '-' &&
      second != '=' && second != '+' && second != '?') {
    part.op = ParamOp::Length;
    ++lx.pos;
  } else if (first == '!' && second != '}') {
    part.op = ParamOp::Unsupported;  // ${!NAME}: indirection
  }
  if (part.op != ParamOp::Unsupported) lex_param_name(lx, part);
  if (part.text.empty()) part.op = ParamOp::Unsupported;
  if (part.op != ParamOp::Unsupported && at(lx, lx.pos) == '[') lex_subscript(lx, part, limit);
  if (part.op != ParamOp::Unsupported) lex_param_operator(lx, part);
  if (at(lx, lx.pos) != '}' || part.op == ParamOp::Unsupported) {
    // The operand (or the unsupported rest) runs to the closing brace.
    PartBuilder operand;
    size_t operand_begin = lx.pos;
    lex_into(lx, operand, Mode::Operand, quoted, limit);
    flush(lx, operand);
    if (part.op != ParamOp::Unsupported && part.op != ParamOp::None && part.op != ParamOp::Length) {
      Word word;
      word.parts = std::move(operand.parts);
      word.begin = static_cast<uint32_t>(operand_begin);
      word.end = static_cast<uint32_t>(lx.pos);
      detail_of(part).operand.push_back(std::move(word));
    }
  }
  if (at(lx, lx.pos) == '}' && lx.pos < limit) {
    ++lx.pos;
  } else if (!lx.problems.fatal) {
    report_unterminated(lx, open, open + 2, "unterminated `${`",
                        "add the closing `}`; everything up to the end of the file is inside it");
  }
  leave_nesting(lx);
  part.end = static_cast<uint32_t>(lx.pos);
  add_part(lx, b, std::move(part));
}

void lex_simple_parameter(Lexer& lx, PartBuilder& b, bool quoted) {
  Part part;
  part.kind = PartKind::Parameter;
  part.quoted = quoted;
  part.begin = static_cast<uint32_t>(lx.pos);
  ++lx.pos;
  if (is_digit(at(lx, lx.pos))) {
    part.text.assign(1, lx.text[lx.pos++]);  // $10 is ${1}0
  } else {
    lex_param_name(lx, part);
  }
  part.end = static_cast<uint32_t>(lx.pos);
  add_part(lx, b, std::move(part));
}

}  // namespace

// `$(...)` or `<(...)`: parsed (to find its end) but never run.
void lex_command_substitution(Lexer& lx, PartBuilder& b, bool quoted) {
  size_t open = lx.pos;
  Part part;
  part.kind = PartKind::CommandSubstitution;
  part.quoted = quoted;
  part.begin = static_cast<uint32_t>(open);
  lx.pos = open + 2;
  if (enter_nesting(lx, open)) {
    bool closed = skip_substitution_body(lx);
    if (!closed && !lx.problems.fatal) {
      // `$((1+2)` is read as `$(` + subshell, but the writer meant `$((`.
      size_t length = lx.text.substr(open, 3) == "$((" ? 3 : 2;
      std::string opener(lx.text.substr(open, length));
      report_unterminated(lx, open, open + length, fmt::format("unterminated `{}`", opener),
                          fmt::format("add the closing `{}`; everything up to the end of the "
                                      "file is inside it",
                                      std::string(length - 1, ')')));
    }
  }
  leave_nesting(lx);
  part.end = static_cast<uint32_t>(lx.pos);
  add_part(lx, b, std::move(part));
}

void lex_backtick(Lexer& lx, PartBuilder& b, bool quoted, size_t limit) {
  size_t open = lx.pos;
  size_t i = open + 1;
  while (i < limit && lx.text[i] != '`') i += lx.text[i] == '\\' ? 2 : 1;
  if (i >= limit) {
    report_unterminated(lx, open, open + 1, "unterminated backtick command substitution",
                        "add the closing backtick, or use `$(...)`");
    lx.pos = limit;
  } else {
    lx.pos = i + 1;
  }
  Part part;
  part.kind = PartKind::CommandSubstitution;
  part.quoted = quoted;
  part.begin = static_cast<uint32_t>(open);
  part.end = static_cast<uint32_t>(lx.pos);
  add_part(lx, b, std::move(part));
}

// lx.pos at `$`.
void lex_dollar(Lexer& lx, PartBuilder& b, bool quoted, size_t limit) {
  size_t i = lx.pos;
  char next = i + 1 < limit ? lx.text[i + 1] : '\0';
  if (next == '(') {
    if (i + 2 < limit && lx.text[i + 2] == '(') {
      size_t end = 0;
      ArithScan scan = scan_arithmetic(lx.text, i + 1, end);
      if (scan == ArithScan::Closed && end <= limit)
        return lex_arithmetic_expansion(lx, b, quoted, end);
      if (scan == ArithScan::Unterminated) return report_unterminated_arithmetic(lx, i);
    }
    return lex_command_substitution(lx, b, quoted);
  }
  if (next == '{') return lex_brace_parameter(lx, b, quoted, limit);
  if (next == '\'' && !quoted) return lex_ansi_c(lx, b, limit);
  if (next == '"' && !quoted) {
    ++lx.pos;  // $"..." (translated string) reads like "..."
    return;
  }
  if (is_name_char(next) ||
      (next != '\0' && std::string_view("@*#?$!-").find(next) != std::string_view::npos)) {
    return lex_simple_parameter(lx, b, quoted);
  }
  add_char(lx, b, '$', i, i + 1, quoted);
  ++lx.pos;
}

ArithScan scan_arithmetic(std::string_view text, size_t open, size_t& end) {
  int depth = 0;
  size_t i = open + 2;
  while (i < text.size()) {
    char c = text[i];
    if (c == '\\') {
      i += 2;
      continue;
    }
    if (c == '\'' || c == '"') {
      size_t close = i + 1;
      while (close < text.size() && text[close] != c)
        close += (c == '"' && text[close] == '\\') ? 2 : 1;
      if (close >= text.size()) return ArithScan::Unterminated;
      i = close + 1;
      continue;
    }
    if (c == '(') ++depth;
    if (c == ')') {
      if (depth == 0) {
        if (i + 1 < text.size() && text[i + 1] == ')') {
          end = i + 2;
          return ArithScan::Closed;
        }
        return ArithScan::NotArithmetic;
      }
      --depth;
    }
    ++i;
  }
  return ArithScan::Unterminated;
}

}  // namespace mblint::shell
