// Private to the three lexer files (shell_lexer.cpp: tokens, operators and
// heredocs; shell_words.cpp: the characters and quoting of one word;
// shell_dollar.cpp: `$` expansions and backticks): building the parts of a
// word and reporting what is left open.
#pragma once

#include <string>

#include "lint/load/shell/shell_syntax.h"

namespace mblint::shell {

inline bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
inline bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_blank(char c) { return c == ' ' || c == '\t'; }
inline bool is_metachar(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' ||
         c == ')' || c == '<' || c == '>';
}

inline char at(const Lexer& lx, size_t i) { return i < lx.text.size() ? lx.text[i] : '\0'; }

// Where a word stops, and how quote characters behave inside it.
enum class Mode : uint8_t {
  Word,          // a command word: stops at a metacharacter
  DoubleQuoted,  // inside "...": stops at the closing quote
  Operand,       // inside ${NAME:-...}: stops at the closing brace
  Arithmetic,    // inside $((...)): stops at the given limit
  Regex,         // after =~ in [[ ]]: parentheses and | are part of it
};

// The parts of one word; literal characters gather until an expansion.
struct PartBuilder {
  std::vector<Part> parts;
  Part literal;
  bool open = false;
  size_t added = 0;               // characters and parts added so far
  std::vector<uint32_t> origins;  // source index of each literal character
};

// ---------------------------------------------------------------- shell_words.cpp

void flush(const Lexer& lx, PartBuilder& b);
// One literal character produced by source characters [begin, end).
void add_char(const Lexer& lx, PartBuilder& b, char c, size_t begin, size_t end, bool quoted);
// Source characters [begin, end) taken as they are.
void add_run(const Lexer& lx, PartBuilder& b, size_t begin, size_t end, bool quoted);
// `""` and `''` make an (empty) word even though they add no character.
void mark_quoted(const Lexer& lx, PartBuilder& b, size_t at_index);
void add_part(const Lexer& lx, PartBuilder& b, Part part);

void report_at(Lexer& lx, size_t begin, size_t end, std::string message, std::string help,
               std::optional<Severity> demote_to = std::nullopt);  // see report()
// A construct that ran to the end of the input; reported only when it is
// the innermost one.
void report_unterminated(Lexer& lx, size_t begin, size_t end, std::string message,
                         std::string help);

// Reads characters into `b` until what ends `mode` (not consumed) or `limit`.
void lex_into(Lexer& lx, PartBuilder& b, Mode mode, bool quoted, size_t limit);
Word lex_word(Lexer& lx);
void skip_blanks_and_comments(Lexer& lx, bool newlines);

// ---------------------------------------------------------------- shell_dollar.cpp

// lx.pos at `$`: a parameter, `$(...)`, `$((...))`, `$'...'`, or a plain `$`.
void lex_dollar(Lexer& lx, PartBuilder& b, bool quoted, size_t limit);
void lex_backtick(Lexer& lx, PartBuilder& b, bool quoted, size_t limit);
// `$(...)` or `<(...)`: parsed (to find its end) but never run.
void lex_command_substitution(Lexer& lx, PartBuilder& b, bool quoted);

}  // namespace mblint::shell
