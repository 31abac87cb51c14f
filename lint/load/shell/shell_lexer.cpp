// Shell lexer: turns source characters into tokens, words (see
// shell_words.cpp) and operators, and skips heredoc bodies. Context-dependent
// reading (keywords, `((`, case patterns, heredoc delimiters) is decided by
// the parser, which pulls one token at a time.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "lint/load/shell/shell_lexer_internal.h"

namespace mblint::shell {

namespace {

constexpr std::array<std::string_view, 23> kOperators = {
    ";;&", ";;",  ";&",  ";",  "&&", "&>>", "&>", "&",  "||", "|&", "|", "(",
    ")",   "<<<", "<<-", "<<", "<>", "<&",  "<",  ">>", ">&", ">|", ">"};

std::string_view match_operator(std::string_view text, size_t at_index) {
  for (std::string_view op : kOperators) {
    if (text.substr(at_index, op.size()) == op) return op;
  }
  return {};
}

std::string heredoc_delimiter(const Lexer& lx, const Word& word) {
  std::string text;
  for (const Part& part : word.parts) {
    if (part.kind == PartKind::Literal)
      text += part.text;
    else
      text.append(lx.text.substr(part.begin, part.end - part.begin));
  }
  return text;
}

void report_unterminated_heredoc(Lexer& lx, const PendingHeredoc& heredoc) {
  report_unterminated(
      lx, heredoc.op_begin, heredoc.op_end,
      fmt::format("here-document is never closed: no line `{}` follows", heredoc.delimiter),
      fmt::format("end the here-document with a line containing only `{}`", heredoc.delimiter));
}

// After a newline: skip the bodies of the heredocs started on that line.
void skip_heredoc_bodies(Lexer& lx) {
  for (const PendingHeredoc& heredoc : lx.heredocs) {
    bool closed = false;
    size_t begin = lx.pos;
    while (lx.pos < lx.text.size()) {
      size_t line_start = lx.pos;
      size_t newline = lx.text.find('\n', lx.pos);
      size_t line_end = newline == std::string_view::npos ? lx.text.size() : newline;
      std::string_view line = lx.text.substr(lx.pos, line_end - lx.pos);
      lx.pos = newline == std::string_view::npos ? lx.text.size() : newline + 1;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (heredoc.strip_tabs)
        line.remove_prefix(std::min(line.find_first_not_of('\t'), line.size()));
      if (line == heredoc.delimiter) {
        closed = true;
        lx.bodies[heredoc.op_begin] =
            HeredocBody{static_cast<uint32_t>(begin), static_cast<uint32_t>(line_start), heredoc.quoted};
        break;
      }
    }
    if (!closed) report_unterminated_heredoc(lx, heredoc);
  }
  lx.heredocs.clear();
}

Token operator_token(Lexer& lx, size_t begin, size_t op_at) {
  Token token;
  token.kind = TokenKind::Operator;
  token.op = std::string(match_operator(lx.text, op_at));
  lx.pos = op_at + token.op.size();
  token.begin = static_cast<uint32_t>(begin);
  token.end = static_cast<uint32_t>(lx.pos);
  return token;
}

}  // namespace

bool enter_nesting(Lexer& lx, size_t at_index) {
  if (++lx.depth <= kMaxNesting) return true;
  if (!lx.problems.fatal) {
    report_at(lx, at_index, at_index + 1, "commands or expansions nested more than 200 deep",
              "flatten the script; mblint stops reading here");
    lx.problems.fatal = true;
  }
  lx.pos = lx.text.size();
  return false;
}

void add_heredoc(Lexer& lx, const Word& delimiter, bool strip_tabs, uint32_t op_begin,
                 uint32_t op_end) {
  bool quoted = std::any_of(delimiter.parts.begin(), delimiter.parts.end(), [](const Part& part) {
    return part.quoted || part.kind != PartKind::Literal;
  });
  lx.heredocs.push_back(
      PendingHeredoc{heredoc_delimiter(lx, delimiter), strip_tabs, quoted, op_begin, op_end});
}

Token next_token(Lexer& lx) {
  Token token;
  if (lx.problems.fatal) lx.pos = lx.text.size();
  skip_blanks_and_comments(lx, false);
  token.begin = token.end = static_cast<uint32_t>(lx.pos);
  if (lx.pos >= lx.text.size()) {
    for (const PendingHeredoc& heredoc : lx.heredocs) report_unterminated_heredoc(lx, heredoc);
    lx.heredocs.clear();
    return token;
  }
  char c = lx.text[lx.pos];
  if (c == '\n' || (c == '\r' && at(lx, lx.pos + 1) == '\n')) {
    lx.pos += c == '\n' ? 1 : 2;
    token.kind = TokenKind::Newline;
    token.end = static_cast<uint32_t>(lx.pos);
    skip_heredoc_bodies(lx);
    return token;
  }
  if (is_digit(c)) {  // 2>&1, 2>file: the digits belong to the redirection
    size_t j = lx.pos;
    while (is_digit(at(lx, j))) ++j;
    char op = at(lx, j);
    if ((op == '<' || op == '>') && at(lx, j + 1) != '(') return operator_token(lx, lx.pos, j);
  }
  bool substitution = (c == '<' || c == '>') && at(lx, lx.pos + 1) == '(';
  bool operator_char = is_metachar(c) && !is_blank(c);
  if (operator_char && !substitution && !match_operator(lx.text, lx.pos).empty()) {
    return operator_token(lx, lx.pos, lx.pos);
  }
  size_t start = lx.pos;
  token.kind = TokenKind::Word;
  token.word = lex_word(lx);
  if (lx.pos == start) ++lx.pos;  // never stall on a character nothing reads
  token.end = static_cast<uint32_t>(lx.pos);
  std::optional<std::string_view> plain = plain_text(token.word);
  if (plain && plain->size() <= token.keyword.size()) {
    std::copy(plain->begin(), plain->end(), token.keyword.begin());
    token.keyword_length = static_cast<uint8_t>(plain->size());
  }
  return token;
}

}  // namespace mblint::shell
