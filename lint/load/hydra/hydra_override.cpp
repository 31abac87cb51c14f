// A hand-written lexer and recursive-descent parser for Hydra 1.3.2's
// override grammar (hydra/grammar/OverrideLexer.g4 and OverrideParser.g4),
// with values typed the way HydraOverrideVisitor._createPrimitive types them.
//
// Hydra fails in three stages, and the first stage that fails wins:
//   1. lexing/parsing (OverrideParseException; the first bad token in text
//      order, because ANTLR pulls tokens lazily),
//   2. the visitor evaluating the tree (unknown functions, bad casts),
//   3. applying the override (config groups, sweeps: "Error merging override").
// The parser below keeps that order: syntax, then evaluation, then the
// apply-time rejections that hold for any Megatron Bridge config.
#include "lint/base/input_rules.h"
#include "lint/load/hydra/hydra_override.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "lint/base/python_number.h"

namespace mblint {
namespace {

// Brackets, braces and function calls nested deeper than this are refused
// so hostile input cannot exhaust the stack.
constexpr int kMaxDepth = 100;

constexpr std::string_view kCannotParse = "Hydra cannot parse this override: ";

// ---------------------------------------------------------------------------
// Characters

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_blank(char c) { return c == ' ' || c == '\t'; }

// UNQUOTED_CHAR: characters allowed in unquoted values besides IDs and numbers.
bool is_unquoted_char(char c) {
  return c != '\0' && std::string_view("/-\\+.$%*@?|").find(c) != std::string_view::npos;
}

// Characters a backslash escapes in the ESC token.
bool is_escapable(char c) {
  return c != '\0' && std::string_view("\\()[]{}:=, \t").find(c) != std::string_view::npos;
}

char at(std::string_view s, size_t i) { return i < s.size() ? s[i] : '\0'; }

bool starts_ci(std::string_view s, size_t i, std::string_view word) {
  if (i + word.size() > s.size()) return false;
  for (size_t k = 0; k < word.size(); ++k) {
    char c = s[i + k];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != word[k]) return false;
  }
  return true;
}

std::string describe_char(char c) {
  auto byte = static_cast<unsigned char>(c);
  if (c == ' ') return "space";
  if (c == '\t') return "tab";
  if (byte == 0) return "NUL byte";
  if (byte < 0x20 || byte >= 0x7f) return fmt::format("byte 0x{:02X}", byte);
  return fmt::format("character '{}'", c);
}

// ---------------------------------------------------------------------------
// Token matchers. Each returns the end of the longest match starting at `i`,
// or `i` when nothing matches, like one rule of the ANTLR lexer.

// DIGIT (('_')? DIGIT)*
size_t digits_end(std::string_view s, size_t i) {
  if (!is_digit(at(s, i))) return i;
  ++i;
  while (i < s.size()) {
    if (is_digit(s[i])) {
      ++i;
    } else if (s[i] == '_' && is_digit(at(s, i + 1))) {
      i += 2;
    } else {
      break;
    }
  }
  return i;
}

// INT_UNSIGNED: '0' | [1-9] (('_')? DIGIT)*
size_t int_unsigned_end(std::string_view s, size_t i) {
  char c = at(s, i);
  if (c == '0') return i + 1;
  if (c >= '1' && c <= '9') return digits_end(s, i);
  return i;
}

size_t sign_end(std::string_view s, size_t i) {
  char c = at(s, i);
  return c == '+' || c == '-' ? i + 1 : i;
}

size_t match_int(std::string_view s, size_t i) {
  size_t j = sign_end(s, i);
  size_t end = int_unsigned_end(s, j);
  return end == j ? i : end;
}

// FLOAT: [+-]? (POINT_FLOAT | EXPONENT_FLOAT | inf | nan)
size_t match_float(std::string_view s, size_t i) {
  size_t j = sign_end(s, i);
  if (starts_ci(s, j, "inf") || starts_ci(s, j, "nan")) return j + 3;
  size_t int_end = int_unsigned_end(s, j);
  size_t point_end = j;  // end of a POINT_FLOAT; j when there is none
  if (at(s, int_end) == '.') {
    size_t fraction_end = digits_end(s, int_end + 1);
    if (fraction_end > int_end + 1) {
      point_end = fraction_end;  // INT_UNSIGNED? '.' DIGIT...
    } else if (int_end > j) {
      point_end = int_end + 1;  // INT_UNSIGNED '.'
    }
  }
  size_t best = point_end;
  size_t mantissa_end = point_end > j ? point_end : int_end;
  char e = at(s, mantissa_end);
  if (mantissa_end > j && (e == 'e' || e == 'E')) {
    size_t exponent = sign_end(s, mantissa_end + 1);
    size_t exponent_end = digits_end(s, exponent);
    if (exponent_end > exponent) best = std::max(best, exponent_end);
  }
  return best > j ? best : i;
}

size_t match_word_ci(std::string_view s, size_t i, std::string_view word) {
  return starts_ci(s, i, word) ? i + word.size() : i;
}

// ID in value mode: (CHAR|'_') (CHAR|DIGIT|'_'|'-')*
size_t match_id(std::string_view s, size_t i) {
  char c = at(s, i);
  if (!is_letter(c) && c != '_') return i;
  ++i;
  while (i < s.size() && (is_letter(s[i]) || is_digit(s[i]) || s[i] == '_' || s[i] == '-')) ++i;
  return i;
}

size_t match_esc(std::string_view s, size_t i) {
  while (at(s, i) == '\\' && is_escapable(at(s, i + 1))) i += 2;
  return i;
}

// QUOTED_VALUE ends at the first matching quote preceded by an even number
// of backslashes (an odd number escapes the quote).
size_t match_quoted(std::string_view s, size_t i) {
  char quote = at(s, i);
  if (quote != '\'' && quote != '"') return i;
  for (size_t close = s.find(quote, i + 1); close != std::string_view::npos;
       close = s.find(quote, close + 1)) {
    size_t backslashes = 0;
    while (close - backslashes > i + 1 && s[close - backslashes - 1] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return close + 1;
  }
  return i;
}

// INTERPOLATION: '${' ~('}')+ '}'
size_t match_interpolation(std::string_view s, size_t i) {
  if (at(s, i) != '$' || at(s, i + 1) != '{') return i;
  size_t close = s.find('}', i + 2);
  if (close == std::string_view::npos || close == i + 2) return i;
  return close + 1;
}

// Key mode: one segment of a key, KEY_SPECIAL or INT_UNSIGNED.
size_t match_key_segment(std::string_view s, size_t i) {
  char c = at(s, i);
  if (is_digit(c)) return int_unsigned_end(s, i);
  if (!is_letter(c) && c != '_' && c != '$') return i;
  ++i;
  while (i < s.size() &&
         (is_letter(s[i]) || is_digit(s[i]) || s[i] == '_' || s[i] == '-' || s[i] == '$'))
    ++i;
  return i;
}

// Key mode: ID | KEY_SPECIAL | DOT_PATH. A bare number is no key token.
size_t match_key(std::string_view s, size_t i) {
  size_t end = match_key_segment(s, i);
  if (end == i) return i;
  bool dotted = false;
  while (at(s, end) == '.') {
    size_t next = match_key_segment(s, end + 1);
    if (next == end + 1) break;
    end = next;
    dotted = true;
  }
  if (!dotted && is_digit(s[i])) return i;
  return end;
}

// ---------------------------------------------------------------------------
// Problems

struct Problem {
  size_t begin = 0;
  size_t end = 0;
  std::string message;
  std::string help;
};

// The pieces of the override that suggestions are built from.
struct Override {
  const MappedString& word;
  std::string_view text;
  size_t equal = std::string_view::npos;  // the '=' after the key
  size_t value_begin = 0;

  std::string_view head() const { return text.substr(0, equal + 1); }  // `key=`
  std::string_view value() const {
    std::string_view v = text.substr(std::min(value_begin, text.size()));
    while (!v.empty() && is_blank(v.back())) v.remove_suffix(1);
    return v;
  }
};

std::string quote_for_hydra(std::string_view value) {
  if (value.find('\'') == std::string_view::npos) return fmt::format("'{}'", value);
  if (value.find('"') == std::string_view::npos) return fmt::format("\"{}\"", value);
  std::string escaped;
  for (char c : value) {
    if (c == '\'') escaped += '\\';
    escaped += c;
  }
  return fmt::format("'{}'", escaped);
}

// `key='value'`: the usual fix for a value Hydra would read as structure.
std::string quoted_suggestion(const Override& o) {
  return fmt::format("{}{}", o.head(), quote_for_hydra(o.value()));
}

Problem problem(size_t begin, size_t end, std::string message, std::string help) {
  return Problem{begin, end, std::move(message), std::move(help)};
}

Problem cannot_parse(size_t begin, size_t end, std::string_view what, std::string help) {
  return problem(begin, end, fmt::format("{}{}", kCannotParse, what), std::move(help));
}

// ---------------------------------------------------------------------------
// Key

struct Key {
  OverrideOp op = OverrideOp::Change;
  size_t begin = 0;
  size_t end = 0;
  bool has_value = false;  // an '=' follows the key
  size_t equal = 0;
  size_t value_begin = 0;
  std::optional<Problem> refusal;  // config-group syntax or no key: refused when applied
};

// `train.global_batch_size = 5` -> `train.global_batch_size=5`.
std::string without_blanks_around_equal(std::string_view text) {
  size_t equal = text.find('=');
  std::string out;
  for (size_t i = 0; i < std::min(equal, text.size()); ++i) {
    if (!is_blank(text[i])) out += text[i];
  }
  if (equal == std::string_view::npos) return out;
  size_t value = equal + 1;
  while (value < text.size() && is_blank(text[value])) ++value;
  return fmt::format("{}={}", out, text.substr(value));
}

// `model.recompute_modules[0]=mlp` -> `model.recompute_modules.0=mlp`.
std::string brackets_to_dots(std::string_view text) {
  size_t equal = std::min(text.find('='), text.size());
  std::string out;
  for (size_t i = 0; i < equal; ++i) {
    if (text[i] == '[') {
      out += '.';
    } else if (text[i] != ']') {
      out += text[i];
    }
  }
  out += text.substr(equal);
  return out;
}

Problem key_quote_problem(std::string_view text, size_t i, size_t key_begin) {
  char quote = text[i];
  if (i != key_begin) {
    return cannot_parse(i, i + 1, fmt::format("unexpected quote {} in the key", quote),
                        "keys are written without quotes; quote only the value: key='value'");
  }
  std::string_view inner = text.substr(i + 1);
  if (!inner.empty() && inner.back() == quote) inner.remove_suffix(1);
  return cannot_parse(
      i, i + 1,
      fmt::format("unexpected quote {} before the key (the whole override is quoted and the "
                  "quotes reached Hydra)",
                  quote),
      fmt::format("remove the quotes around the override: {}{} (quote only the value if it "
                  "needs it: key='value')",
                  text.substr(0, i), inner));
}

// A character where a key (or the '=' after it) was expected.
Problem key_char_problem(std::string_view text, size_t i, size_t key_begin) {
  char c = text[i];
  if (is_blank(c)) {
    std::string help;
    if (text.find('=') != std::string_view::npos) {
      help = fmt::format("write {}", without_blanks_around_equal(text));
    } else {  // `train.global_batch_size 8`: a space where '=' belongs
      size_t value = i;
      while (is_blank(at(text, value))) ++value;
      help = value < text.size()
                 ? fmt::format("write {}={}", text.substr(0, i), text.substr(value))
                 : std::string("an override is one word, key=value, without spaces");
    }
    return cannot_parse(i, i + 1,
                        fmt::format("unexpected {} in the key (Hydra allows no spaces before '=')",
                                    describe_char(c)),
                        std::move(help));
  }
  if (c == '[') {
    return cannot_parse(i, i + 1,
                        "unexpected '[' in the key (Hydra keys index lists with '.', not brackets)",
                        fmt::format("write {}", brackets_to_dots(text)));
  }
  if (c == '\'' || c == '"') return key_quote_problem(text, i, key_begin);
  if (c == '#') {
    return cannot_parse(i, i + 1,
                        "unexpected character '#' (comments are not allowed in overrides)",
                        "remove the comment");
  }
  if (c == '-' && i == key_begin) {
    return cannot_parse(i, i + 1,
                        "unexpected '-' before the key (command-line options are not Hydra "
                        "overrides)",
                        "write the setting as key=value, e.g. train.train_iters=100, or pass the "
                        "option before the overrides");
  }
  if (c == '.') {
    return cannot_parse(i, i + 1, "unexpected '.' in the key (a key segment is empty)",
                        "write the key as names separated by single dots, e.g. model.num_layers");
  }
  if (c == '+' || c == '~') {
    return cannot_parse(
        i, i + 1, fmt::format("unexpected '{}' (prefixes go before the key: +, ++ or ~)", c),
        "use one prefix: +key=value adds, ++key=value adds or overrides, ~key deletes");
  }
  return cannot_parse(i, i + 1, fmt::format("unexpected {} in the key", describe_char(c)),
                      "keys are names separated by '.', e.g. model.tensor_model_parallel_size; "
                      "list elements are indexed as key.0");
}

Problem config_group_slash(std::string_view text, size_t slash, size_t key_begin) {
  size_t key_end = std::min(text.find('='), text.size());
  std::string key(text.substr(key_begin, key_end - key_begin));
  std::string dotted = std::string(text);
  std::replace(dotted.begin() + static_cast<std::ptrdiff_t>(key_begin),
               dotted.begin() + static_cast<std::ptrdiff_t>(key_end), '/', '.');
  return problem(slash, slash + 1,
                 fmt::format("Could not override '{}': Hydra reads '/' in a key as a config group "
                             "path, and Megatron Bridge has no config groups",
                             key),
                 fmt::format("Megatron Bridge keys use '.' between names: {}", dotted));
}

Problem config_group_at(std::string_view text, size_t at_sign, size_t package_end,
                        size_t key_begin) {
  std::string_view group = text.substr(key_begin, at_sign - key_begin);
  std::string example = group.empty() ? std::string("model.seq_length=4096")
                                      : fmt::format("{}.<field>=<value>", group);
  return problem(at_sign, package_end,
                 fmt::format("Override {} looks like a config group override, but config group "
                             "'{}' does not exist (Megatron Bridge has no config groups)",
                             text, group),
                 fmt::format("remove '{}' and address the field with a dotted key, e.g. {}",
                             text.substr(at_sign, package_end - at_sign), example));
}

// Config-group syntax after the key: `group/name` and `group@package`.
// Hydra parses both; Megatron Bridge refuses them when applying, which comes
// after any syntax error in the value, so the refusal is kept for later.
std::optional<Problem> parse_group_syntax(std::string_view text, Key& key, size_t& i) {
  // packageOrGroup: ID (SLASH ID)+, plain names only (no '.', no '$').
  auto plain_name = [&](size_t begin, size_t end) {
    std::string_view name = text.substr(begin, end - begin);
    return !name.empty() && !is_digit(name[0]) &&
           name.find_first_of(".$") == std::string_view::npos;
  };
  size_t slash = i;
  while (at(text, i) == '/' && key.end > key.begin) {
    size_t name_end = match_key(text, i + 1);
    if (!plain_name(key.begin, key.end) || !plain_name(i + 1, name_end)) {
      Problem bad = config_group_slash(text, i, key.begin);
      bad.message = fmt::format(
          "{}unexpected '/' in the key (Hydra reads '/' only between the "
          "plain names of a config group path)",
          kCannotParse);
      return bad;
    }
    i = name_end;
  }
  if (i > slash) key.refusal = config_group_slash(text, slash, key.begin);
  if (at(text, i) == '@' && i < text.size()) {
    size_t package_end = match_key(text, i + 1);
    key.refusal = config_group_at(text, i, package_end, key.begin);
    i = package_end;
  }
  return std::nullopt;
}

// override: (key EQUAL value? | TILDE key (EQUAL value?)? | PLUS PLUS? key EQUAL value?) EOF
// Returns a syntax problem of the key; refusals go to key.refusal.
std::optional<Problem> parse_key(std::string_view text, Key& key) {
  size_t i = 0;
  if (at(text, 0) == '~') {
    key.op = OverrideOp::Delete;
    i = 1;
  } else if (at(text, 0) == '+') {
    key.op = at(text, 1) == '+' ? OverrideOp::ForceAdd : OverrideOp::Add;
    i = key.op == OverrideOp::ForceAdd ? 2 : 1;
  }
  key.begin = i;
  key.end = match_key(text, i);
  i = key.end;
  if (std::optional<Problem> bad = parse_group_syntax(text, key, i)) return bad;
  bool empty_key = key.end == key.begin && !key.refusal;
  if (i >= text.size()) {
    if (text.empty()) {
      return cannot_parse(0, 0, "the override is empty",
                          "remove the empty argument, or write key=value");
    }
    if (empty_key) {
      return problem(0, i, fmt::format("the override has no key after '{}'", text.substr(0, i)),
                     "write the key, e.g. ~train.rampup_batch_size or +env_vars.FOO=1");
    }
    if (key.op == OverrideOp::Delete) return std::nullopt;
    return cannot_parse(
        key.begin, i,
        fmt::format("'{}' has no '=' (an override is key=value)", text.substr(key.begin)),
        fmt::format("write {}=<value>", text));
  }
  if (text[i] != '=') return key_char_problem(text, i, key.begin);
  if (empty_key) {  // Hydra parses an empty key; applying it fails
    key.refusal = problem(i, i + 1, "the override has no key before '='",
                          "write the key before '=', e.g. train.global_batch_size=256");
  }
  key.has_value = true;
  key.equal = i;
  key.value_begin = i + 1;
  while (is_blank(at(text, key.value_begin))) ++key.value_begin;  // EQUAL: '=' WS?
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// Value lexer

enum class Tok : uint8_t {
  End,
  Error,
  Equal,
  Comma,
  POpen,
  PClose,
  BrOpen,
  BrClose,
  BraceOpen,
  BraceClose,
  Colon,
  Float,
  Int,
  Bool,
  Null,
  Plain,  // UNQUOTED_CHAR
  Id,
  Esc,
  Ws,
  Quoted,
  Interpolation,
  Unknown,  // an expansion whose value is not known statically
};

struct Token {
  Tok type = Tok::End;
  size_t begin = 0;
  size_t end = 0;
  size_t mark = 0;       // the significant character (structural tokens absorb blanks)
  bool unknown = false;  // overlaps an unknown expansion
};

bool is_primitive_token(Tok type, bool dict_key) {
  switch (type) {
    case Tok::Id:
    case Tok::Null:
    case Tok::Int:
    case Tok::Float:
    case Tok::Bool:
    case Tok::Plain:
    case Tok::Esc:
    case Tok::Ws:
    case Tok::Unknown: return true;
    case Tok::Colon:
    case Tok::Interpolation: return !dict_key;  // dictKey allows neither
    default: return false;
  }
}

Problem value_char_problem(const Override& o, size_t i) {
  char c = o.text[i];
  auto byte = static_cast<unsigned char>(c);
  if (c == '#') {
    std::string_view kept = o.text.substr(o.value_begin, i - o.value_begin);
    while (!kept.empty() && is_blank(kept.back())) kept.remove_suffix(1);
    return cannot_parse(i, i + 1,
                        "unexpected character '#' (comments are not allowed in overrides)",
                        fmt::format("remove the comment: {}{}", o.head(), kept));
  }
  if (c == '\'' || c == '"') {
    return cannot_parse(
        i, i + 1, fmt::format("the quote {} is never closed", c),
        fmt::format("close the quote, or quote the whole value with the other quote: {}",
                    quoted_suggestion(o)));
  }
  if (c == '~') {
    return cannot_parse(i, i + 1,
                        "unexpected character '~' ('~' is null in YAML, not in Hydra overrides)",
                        fmt::format("write null: {}null", o.head()));
  }
  if (c == '$') {  // only reached for an unterminated or empty `${`
    bool empty = at(o.text, i + 2) == '}';
    return cannot_parse(i, i + 2,
                        empty ? "the interpolation '${}' is empty"
                              : "the interpolation '${' is never closed with '}'",
                        "write a complete interpolation such as ${dataset.seq_length}, or quote "
                        "the value");
  }
  if (byte >= 0x80) {
    return cannot_parse(i, i + 1,
                        fmt::format("unexpected {} (non-ASCII characters must be quoted in Hydra "
                                    "overrides)",
                                    describe_char(c)),
                        fmt::format("quote the value: {}", quoted_suggestion(o)));
  }
  if (byte < 0x20 || byte == 0x7f) {
    return cannot_parse(i, i + 1,
                        fmt::format("unexpected control character ({})", describe_char(c)),
                        "remove the control character");
  }
  return cannot_parse(i, i + 1,
                      fmt::format("unexpected {} (unquoted values may contain letters, digits, "
                                  "spaces and _-/\\+.$%*@?|:)",
                                  describe_char(c)),
                      fmt::format("quote the value: {}", quoted_suggestion(o)));
}

struct Lexer {
  const Override& o;
  std::vector<std::pair<size_t, size_t>> unknowns;  // unknown expansions, sorted
  size_t pos = 0;
  size_t next_unknown = 0;
  std::optional<Problem> error;

  Token next();
  Token structural_or_blank(std::string_view s);
};

Lexer make_lexer(const Override& o) {
  Lexer lexer{o, {}, o.value_begin, 0, std::nullopt};
  for (const Expansion& expansion : o.word.expansions) {
    if (!expansion.known && expansion.end >= o.value_begin) {
      lexer.unknowns.emplace_back(std::max(expansion.begin, o.value_begin),
                                  std::max(expansion.end, o.value_begin));
    }
  }
  std::sort(lexer.unknowns.begin(), lexer.unknowns.end());
  return lexer;
}

// Tokens made of one structural character with optional blanks around it
// (POPEN, COMMA, ...), or a WS token.
Token Lexer::structural_or_blank(std::string_view s) {
  auto skip_blanks = [&](size_t k) {
    while (k < s.size() && is_blank(s[k])) ++k;
    return k;
  };
  size_t mark = skip_blanks(pos);
  auto token = [&](Tok type, size_t end) { return Token{type, pos, end, mark, false}; };
  switch (at(s, mark)) {
    case '(': return token(Tok::POpen, skip_blanks(mark + 1));
    case ',': return token(Tok::Comma, skip_blanks(mark + 1));
    case ')': return token(Tok::PClose, mark + 1);
    case ']': return token(Tok::BrClose, mark + 1);
    case '}': return token(Tok::BraceClose, mark + 1);
    case ':': return token(Tok::Colon, skip_blanks(mark + 1));
    case '=': return token(Tok::Equal, skip_blanks(mark + 1));
    default: break;
  }
  if (mark > pos) return Token{Tok::Ws, pos, mark, pos, false};
  if (at(s, pos) == '[') return token(Tok::BrOpen, skip_blanks(pos + 1));
  if (at(s, pos) == '{') return token(Tok::BraceOpen, skip_blanks(pos + 1));
  return Token{Tok::Error, pos, pos, pos, false};
}

Token Lexer::next() {
  if (error) return Token{Tok::Error, error->begin, error->begin, error->begin, false};
  const std::string_view text = o.text;
  while (next_unknown < unknowns.size() && unknowns[next_unknown].first < pos) ++next_unknown;
  if (next_unknown < unknowns.size() && unknowns[next_unknown].first == pos) {
    auto [begin, end] = unknowns[next_unknown++];
    pos = std::max(pos, end);
    return Token{Tok::Unknown, begin, pos, begin, true};
  }
  if (pos >= text.size()) return Token{Tok::End, text.size(), text.size(), text.size(), false};

  // Ordinary tokens stop where an unknown expansion starts; quoted strings
  // and interpolations may enclose one.
  size_t limit = next_unknown < unknowns.size() ? unknowns[next_unknown].first : text.size();
  std::string_view s = text.substr(0, limit);
  Token token = structural_or_blank(s);
  if (token.type == Tok::Error) {
    // Longest match wins; on a tie the rule listed first in the grammar.
    token = Token{Tok::Error, pos, pos, pos, false};
    auto offer = [&](Tok type, size_t end) {
      if (end > token.end) token = Token{type, pos, end, pos, false};
    };
    offer(Tok::Float, match_float(s, pos));
    offer(Tok::Int, match_int(s, pos));
    offer(Tok::Bool, std::max(match_word_ci(s, pos, "true"), match_word_ci(s, pos, "false")));
    offer(Tok::Null, match_word_ci(s, pos, "null"));
    offer(Tok::Plain, is_unquoted_char(at(s, pos)) ? pos + 1 : pos);
    offer(Tok::Id, match_id(s, pos));
    offer(Tok::Esc, match_esc(s, pos));
    offer(Tok::Quoted, match_quoted(text, pos));
    offer(Tok::Interpolation, match_interpolation(text, pos));
    // Hydra would lex a lone `$` of an unfinished `${` and fail later at
    // the brace; the `${` is the useful place to point at.
    bool open_interpolation = at(text, pos) == '$' && at(text, pos + 1) == '{';
    if (token.type == Tok::Error || (open_interpolation && token.type != Tok::Interpolation)) {
      error = value_char_problem(o, pos);
      return Token{Tok::Error, pos, pos, pos, false};
    }
  }
  if (token.type == Tok::Quoted || token.type == Tok::Interpolation) {
    token.unknown = has_unknown(o.word, token.begin, token.end);
  }
  pos = token.end;
  return token;
}

// ---------------------------------------------------------------------------
// Value parser: builds a syntax tree; typing happens afterwards.

enum class NodeKind : uint8_t { Empty, Primitive, Quoted, List, Dict, Call };

struct Node {
  NodeKind kind = NodeKind::Empty;
  size_t begin = 0;  // text range, blanks around it excluded
  size_t end = 0;
  size_t first_token = 0;  // Primitive / Quoted: tokens [first_token, last_token)
  size_t last_token = 0;
  size_t name_end = 0;                 // Call: the function name is [begin, name_end)
  std::vector<Node> items;             // List items, Dict values, Call arguments
  std::vector<Node> keys;              // Dict keys
  std::vector<std::string> arg_names;  // Call: keyword names, "" when positional
};

struct Parser {
  const Override& o;
  Lexer lexer;
  std::vector<Token> tokens;
  size_t cursor = 0;
  std::optional<Problem> error;
  std::optional<size_t> sweep_comma;  // a top-level ',' (a simple choice sweep)

  const Token& peek(size_t ahead = 0);
  const Token& take();
  std::string text_of(const Token& t) const {
    return std::string(o.text.substr(t.begin, t.end - t.begin));
  }

  // ANTLR's error recovery looks one token past the offending one before
  // it reports, so a bad character right there is what Hydra reports.
  bool fail(Problem p) {
    if (error) return false;
    error = !lexer.error && peek(1).type == Tok::Error ? *lexer.error : std::move(p);
    return false;
  }
  bool fail_at(const Token& t) { return fail(unexpected(t, nullptr)); }
  Problem unexpected(const Token& t, const Token* open);
  Problem missing_value(const Token& t);
  Problem unclosed(const Token& open);

  bool parse_value(Node& out);
  bool parse_element(Node& out, int depth);
  bool parse_primitive(Node& out, bool dict_key);
  bool parse_list(Node& out, int depth);
  bool parse_dict(Node& out, int depth);
  bool parse_call(Node& out, int depth);
  bool check_depth(const Token& open, int depth);
};

const Token& Parser::peek(size_t ahead) {
  while (tokens.size() <= cursor + ahead) {
    bool finished =
        !tokens.empty() && (tokens.back().type == Tok::End || tokens.back().type == Tok::Error);
    tokens.push_back(finished ? tokens.back() : lexer.next());
  }
  return tokens[cursor + ahead];
}

const Token& Parser::take() {
  peek();
  return tokens[cursor++];
}

char closer_of(Tok open) { return open == Tok::BrOpen ? ']' : open == Tok::BraceOpen ? '}' : ')'; }

Problem Parser::unclosed(const Token& open) {
  char c = at(o.text, open.mark);
  return cannot_parse(open.mark, open.mark + 1, fmt::format("the '{}' is never closed", c),
                      fmt::format("close it with '{}', or quote the value if the '{}' is text: {}",
                                  closer_of(open.type), c, quoted_suggestion(o)));
}

// A value was expected at `t`.
Problem Parser::missing_value(const Token& t) {
  switch (t.type) {
    case Tok::Error: return *lexer.error;
    case Tok::Comma:
    case Tok::BrClose:
    case Tok::BraceClose:
    case Tok::PClose:
      return cannot_parse(t.mark, t.mark + 1,
                          fmt::format("a value is missing before '{}'", at(o.text, t.mark)),
                          fmt::format("add the missing value, or quote the value if the '{}' is "
                                      "text: {}",
                                      at(o.text, t.mark), quoted_suggestion(o)));
    case Tok::End: {
      const Token& last = cursor > 0 ? tokens[cursor - 1] : t;
      return cannot_parse(
          last.mark, last.mark + 1,
          fmt::format("a value is missing after '{}'", at(o.text, last.mark)),
          fmt::format("add the missing value, or remove the trailing '{}'", at(o.text, last.mark)));
    }
    default: return unexpected(t, nullptr);
  }
}

Problem Parser::unexpected(const Token& t, const Token* open) {
  std::string quoted = quoted_suggestion(o);
  size_t mark = t.mark;
  switch (t.type) {
    case Tok::Error: return *lexer.error;
    case Tok::End: return open ? unclosed(*open) : missing_value(t);
    case Tok::Equal: {
      std::string escaped(o.head());
      for (char c : o.value()) {
        if (c == '=') escaped += '\\';
        escaped += c;
      }
      return cannot_parse(
          mark, mark + 1,
          "unexpected '=' in the value (only the first '=' separates the key from "
          "the value)",
          fmt::format("quote the value: {}, or escape the '=': {}", quoted, escaped));
    }
    case Tok::BrClose:
    case Tok::BraceClose:
    case Tok::PClose: {
      char c = at(o.text, mark);
      if (open) {
        return cannot_parse(
            mark, mark + 1,
            fmt::format("unexpected '{}' (the '{}' is still open)", c, at(o.text, open->mark)),
            fmt::format("close it with '{}', or quote the value: {}", closer_of(open->type),
                        quoted));
      }
      return cannot_parse(mark, mark + 1, fmt::format("unexpected '{}' (nothing is open)", c),
                          fmt::format("remove it, or quote the value: {}", quoted));
    }
    case Tok::POpen:
      return cannot_parse(
          mark, mark + 1, "unexpected '(' (only a name directly before '(' makes a function call)",
          fmt::format("quote the value: {}, or escape the parentheses: \\( \\)", quoted));
    case Tok::BrOpen:
    case Tok::BraceOpen:
      return cannot_parse(mark, mark + 1,
                          fmt::format("unexpected '{}' (a list or dict must be a whole value or a "
                                      "whole item, not part of one)",
                                      at(o.text, mark)),
                          fmt::format("quote the value: {}, or escape the bracket: \\{}", quoted,
                                      at(o.text, mark)));
    case Tok::Quoted:
      return cannot_parse(t.begin, t.end,
                          "a quoted string must be a whole value or a whole item, not part of one",
                          fmt::format("quote the whole value: {}", quoted));
    case Tok::Comma:
      return cannot_parse(mark, mark + 1, "unexpected ','",
                          fmt::format("quote the value: {}", quoted));
    default: {
      // Text glued to a list, dict, call or quoted string: `[]aa`, `'a'b`.
      const Token* before = cursor > 0 ? &tokens[cursor - 1] : nullptr;
      std::string after = !before ? std::string("the value")
                          : before->type == Tok::Quoted
                              ? std::string("a quoted string")
                              : fmt::format("'{}'", at(o.text, before->mark));
      return cannot_parse(t.begin, t.end,
                          fmt::format("unexpected '{}' after {}", text_of(t), after),
                          fmt::format("quote the whole value: {}", quoted));
    }
  }
}

// value: element | simpleChoiceSweep (element (COMMA element)+)
bool Parser::parse_value(Node& out) {
  if (peek().type == Tok::End) {
    out.kind = NodeKind::Empty;  // `key=`: the empty string
    return true;
  }
  if (!parse_element(out, 0)) return false;
  while (peek().type == Tok::Comma) {
    if (!sweep_comma) sweep_comma = peek().mark;
    take();
    Node more;
    if (!parse_element(more, 0)) return false;
  }
  return peek().type == Tok::End || fail_at(peek());
}

// element: primitive | listContainer | dictContainer | function
bool Parser::parse_element(Node& out, int depth) {
  const Token& t = peek();
  switch (t.type) {
    case Tok::BrOpen: return parse_list(out, depth);
    case Tok::BraceOpen: return parse_dict(out, depth);
    case Tok::Quoted:
      out.kind = NodeKind::Quoted;
      out.begin = t.begin;
      out.end = t.end;
      out.first_token = cursor;
      out.last_token = cursor + 1;
      take();
      return true;
    case Tok::Id:
      if (peek(1).type == Tok::POpen) return parse_call(out, depth);
      return parse_primitive(out, false);
    default:
      if (is_primitive_token(t.type, false)) return parse_primitive(out, false);
      return fail(missing_value(t));
  }
}

bool Parser::parse_primitive(Node& out, bool dict_key) {
  size_t first = cursor;
  while (is_primitive_token(peek().type, dict_key)) take();
  size_t last = cursor;
  // _createPrimitive drops leading and trailing whitespace tokens.
  while (first < last && tokens[first].type == Tok::Ws) ++first;
  while (last > first && tokens[last - 1].type == Tok::Ws) --last;
  if (first == last) return fail(missing_value(peek()));
  out.kind = NodeKind::Primitive;
  out.first_token = first;
  out.last_token = last;
  out.begin = tokens[first].begin;
  out.end = tokens[last - 1].end;
  return true;
}

bool Parser::check_depth(const Token& open, int depth) {
  if (depth < kMaxDepth) return true;
  return fail(problem(
      open.mark, open.mark + 1,
      fmt::format("the value nests lists, dicts or calls more than {} levels deep", kMaxDepth),
      "flatten the value; mblint does not read deeper nesting"));
}

// listContainer: BRACKET_OPEN (element (COMMA element)*)? BRACKET_CLOSE
bool Parser::parse_list(Node& out, int depth) {
  Token open = take();
  if (!check_depth(open, depth)) return false;
  out.kind = NodeKind::List;
  out.begin = open.mark;
  if (peek().type == Tok::BrClose) {
    out.end = take().end;
    return true;
  }
  while (true) {
    if (peek().type == Tok::End) return fail(unclosed(open));
    Node item;
    if (!parse_element(item, depth + 1)) return false;
    out.items.push_back(std::move(item));
    Tok next = peek().type;
    if (next == Tok::BrClose) {
      out.end = take().end;
      return true;
    }
    if (next != Tok::Comma) return fail(unexpected(peek(), &open));
    take();
  }
}

// dictContainer: BRACE_OPEN (dictKeyValuePair (COMMA dictKeyValuePair)*)? BRACE_CLOSE
// dictKeyValuePair: dictKey COLON element
bool Parser::parse_dict(Node& out, int depth) {
  Token open = take();
  if (!check_depth(open, depth)) return false;
  out.kind = NodeKind::Dict;
  out.begin = open.mark;
  if (peek().type == Tok::BraceClose) {
    out.end = take().end;
    return true;
  }
  while (true) {
    const Token& key_start = peek();
    if (key_start.type == Tok::End) return fail(unclosed(open));
    if (key_start.type == Tok::Quoted || key_start.type == Tok::Interpolation) {
      return fail(cannot_parse(key_start.begin, key_start.end,
                               key_start.type == Tok::Quoted
                                   ? "dict keys cannot be quoted in Hydra overrides"
                                   : "an interpolation cannot be a dict key",
                               "write the key as a plain name: {key: value}"));
    }
    if (key_start.type == Tok::Colon) {
      return fail(cannot_parse(key_start.mark, key_start.mark + 1,
                               "a dict key is missing before ':'", "write {key: value}"));
    }
    if (!is_primitive_token(key_start.type, true)) return fail(missing_value(key_start));
    Node key;
    if (!parse_primitive(key, true)) return false;
    const Token& colon = peek();
    if (colon.type == Tok::End) return fail(unclosed(open));
    if (colon.type != Tok::Colon) {
      if (colon.type == Tok::Comma || colon.type == Tok::BraceClose) {
        return fail(cannot_parse(key.begin, key.end, "a dict entry has no ':' and value",
                                 "write {key: value}"));
      }
      return fail(unexpected(colon, &open));
    }
    take();
    if (peek().type == Tok::End) return fail(unclosed(open));
    Node value;
    if (!parse_element(value, depth + 1)) return false;
    out.keys.push_back(std::move(key));
    out.items.push_back(std::move(value));
    Tok next = peek().type;
    if (next == Tok::BraceClose) {
      out.end = take().end;
      return true;
    }
    if (next != Tok::Comma) return fail(unexpected(peek(), &open));
    take();
  }
}

// function: ID POPEN (argName? element (COMMA argName? element)*)? PCLOSE
bool Parser::parse_call(Node& out, int depth) {
  Token name = take();
  Token open = take();
  if (!check_depth(open, depth)) return false;
  out.kind = NodeKind::Call;
  out.begin = name.begin;
  out.name_end = name.end;
  if (peek().type == Tok::PClose) {
    out.end = take().end;
    return true;
  }
  while (true) {
    if (peek().type == Tok::End) return fail(unclosed(open));
    std::string arg_name;
    if (peek().type == Tok::Id && peek(1).type == Tok::Equal) {  // argName: ID EQUAL
      arg_name = text_of(take());
      take();
      if (peek().type == Tok::End) return fail(unclosed(open));
    }
    Node arg;
    if (!parse_element(arg, depth + 1)) return false;
    out.items.push_back(std::move(arg));
    out.arg_names.push_back(std::move(arg_name));
    Tok next = peek().type;
    if (next == Tok::PClose) {
      out.end = take().end;
      return true;
    }
    if (next != Tok::Comma) return fail(unexpected(peek(), &open));
    take();
  }
}

// ---------------------------------------------------------------------------
// Typing (the visitor)

std::string unescape_esc(std::string_view esc) {  // `\,\ ` -> `, `
  std::string out;
  for (size_t i = 1; i < esc.size(); i += 2) out += esc[i];
  return out;
}

// _unescape_quoted_string: drop the quotes; a run of backslashes before a
// quote keeps every other character (so `\'` -> `'` and `\\'` at the end -> `\`).
std::string unescape_quoted(std::string_view token) {
  char quote = token.front();
  std::string_view body = token.substr(1);  // still ends with the closing quote
  std::string out;
  size_t i = 0;
  while (i < body.size()) {
    if (body[i] == '\\') {
      size_t run_end = i;
      while (run_end < body.size() && body[run_end] == '\\') ++run_end;
      if (run_end < body.size() && body[run_end] == quote) {
        for (size_t k = i + 1; k <= run_end; k += 2) out += body[k];
        i = run_end + 1;
      } else {
        out.append(body.substr(i, run_end - i));
        i = run_end;
      }
    } else if (i + 1 == body.size()) {
      ++i;  // the closing quote
    } else {
      out += body[i++];
    }
  }
  return out;
}

// Decimal text (digits, '.', exponent; no underscores) -> double, like
// Python's float(): overflow gives inf, underflow 0.
double decimal_to_double(const std::string& digits, bool negative) {
  double value = 0.0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec == std::errc::result_out_of_range || ptr != digits.data() + digits.size()) {
    value = std::strtod(digits.c_str(), nullptr);
  }
  return negative ? -value : value;
}

// Python's float() of a string, ASCII only. nullopt when Python would raise.
std::optional<double> python_float(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  bool negative = !s.empty() && s.front() == '-';
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) s.remove_prefix(1);
  if (starts_ci(s, 0, "infinity") && s.size() == 8) return negative ? -HUGE_VAL : HUGE_VAL;
  if (starts_ci(s, 0, "inf") && s.size() == 3) return negative ? -HUGE_VAL : HUGE_VAL;
  if (starts_ci(s, 0, "nan") && s.size() == 3) return std::nan("");
  // digits ['.' digits] [e [+-] digits], underscores only between digits
  size_t i = digits_end(s, 0);
  bool mantissa_digits = i > 0;
  if (at(s, i) == '.') {
    size_t fraction = digits_end(s, i + 1);
    mantissa_digits = mantissa_digits || fraction > i + 1;
    i = fraction;
  }
  if (!mantissa_digits) return std::nullopt;
  if (at(s, i) == 'e' || at(s, i) == 'E') {
    size_t exponent = sign_end(s, i + 1);
    size_t exponent_end = digits_end(s, exponent);
    if (exponent_end == exponent) return std::nullopt;
    i = exponent_end;
  }
  if (i != s.size()) return std::nullopt;
  std::string digits;
  for (char c : s) {
    if (c != '_') digits += c;
  }
  return decimal_to_double(digits, negative);
}

// Python's repr() of a float, which str() uses: shortest round-trip digits,
// positional for exponents -4..15, otherwise `1e-05` / `1.5e+16`.
std::string python_float_repr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, x, std::chars_format::scientific);
  if (ec != std::errc()) return fmt::format("{}", x);
  std::string_view sci(buffer, static_cast<size_t>(end - buffer));
  std::string sign;
  if (sci.front() == '-') {
    sign = "-";
    sci.remove_prefix(1);
  }
  size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c != '.') digits += c;
  }
  int exponent = std::atoi(std::string(sci.substr(e + 1)).c_str());
  if (exponent < -4 || exponent >= 16) {
    std::string mantissa = digits.substr(0, 1);
    if (digits.size() > 1) mantissa += "." + digits.substr(1);
    return fmt::format("{}{}e{}{:02d}", sign, mantissa, exponent < 0 ? '-' : '+',
                       std::abs(exponent));
  }
  if (exponent < 0) return fmt::format("{}0.{}{}", sign, std::string(-exponent - 1, '0'), digits);
  size_t int_digits = static_cast<size_t>(exponent) + 1;
  if (digits.size() < int_digits) digits.append(int_digits - digits.size(), '0');
  std::string fraction = digits.substr(int_digits);
  return fmt::format("{}{}.{}", sign, digits.substr(0, int_digits),
                     fraction.empty() ? "0" : fraction);
}

enum class Cast { Int, Float, Bool, Str };

// Why a cast fails, as Python says it: "ValueError", "invalid literal ...".
struct CastFailure {
  std::string type;
  std::string detail;
};

std::optional<Cast> cast_named(std::string_view name) {
  if (name == "int") return Cast::Int;
  if (name == "float") return Cast::Float;
  if (name == "bool") return Cast::Bool;
  if (name == "str") return Cast::Str;
  return std::nullopt;
}

bool is_sweep_function(std::string_view name) {
  return name == "choice" || name == "range" || name == "interval" || name == "glob" ||
         name == "tag" || name == "sort" || name == "shuffle";
}

struct Evaluator {
  const Override& o;
  const std::vector<Token>& tokens;
  Layer layer;
  std::optional<Problem> error;  // the visitor raised: the override is unusable
  std::optional<Problem> sweep;  // a sweep value: Bridge refuses it when applying
  std::vector<Problem> warnings;

  Provenance provenance(size_t begin, size_t end) const {
    Provenance where;
    where.layer = layer;
    where.value = span_of(o.word, begin, end);
    where.via = definitions_in(o.word, begin, end);
    return where;
  }
  std::string text(size_t begin, size_t end) const {
    return std::string(o.text.substr(begin, end - begin));
  }

  ConfigValue eval(const Node& node);
  ConfigValue primitive(const Node& node);
  std::string key_text(const Node& node) const;
  ConfigValue quoted(const Node& node);
  ConfigValue call(const Node& node);
  ConfigValue cast_call(const Node& node, Cast cast, std::vector<ConfigValue>& positional,
                        std::vector<std::pair<std::string, ConfigValue>>& named);
  std::optional<ConfigValue> cast_value(Cast cast, const ConfigValue& value, CastFailure& why);
  void note_sweep(const Node& node, std::string_view name, bool cast = false);
};

ConfigValue Evaluator::eval(const Node& node) {
  switch (node.kind) {
    case NodeKind::Empty: return make_string("", provenance(node.begin, node.begin));
    case NodeKind::Primitive: return primitive(node);
    case NodeKind::Quoted: return quoted(node);
    case NodeKind::List: {
      ConfigValue list = make_list(provenance(node.begin, node.end));
      for (const Node& item : node.items) list.items.push_back(eval(item));
      return list;
    }
    case NodeKind::Dict: {
      ConfigValue map = make_map(provenance(node.begin, node.end));
      for (size_t i = 0; i < node.items.size(); ++i) {
        std::string name = key_text(node.keys[i]);
        ConfigValue value = eval(node.items[i]);
        // A Python dict keeps a repeated key in its first place, last value.
        auto same = [&](const MapEntry& entry) { return entry.key == name; };
        auto found = std::find_if(map.entries.begin(), map.entries.end(), same);
        if (found != map.entries.end()) {
          found->value = std::move(value);
        } else {
          map.entries.push_back(MapEntry{std::move(name), std::move(value)});
        }
      }
      return map;
    }
    case NodeKind::Call: return call(node);
  }
  return make_null();
}

// A dict key as text. Hydra types keys like values (`{1: a}` has the int
// key 1); ConfigValue keys are strings, so the key is kept as written.
std::string Evaluator::key_text(const Node& node) const {
  std::string joined;
  for (size_t i = node.first_token; i < node.last_token; ++i) {
    const Token& t = tokens[i];
    std::string_view piece = o.text.substr(t.begin, t.end - t.begin);
    joined += t.type == Tok::Esc ? unescape_esc(piece) : std::string(piece);
  }
  return joined;
}

ConfigValue int_value(std::string_view token, Provenance where) {
  bool overflow = false;
  std::optional<int64_t> value = python_int(token, &overflow);
  // Python ints are unbounded; one beyond 64 bits is kept as its text.
  if (!value) return make_unknown(std::string(token), std::move(where));
  return make_int(*value, std::move(where));
}

ConfigValue Evaluator::primitive(const Node& node) {
  Provenance where = provenance(node.begin, node.end);
  std::string joined = key_text(node);
  bool unknown = false;
  for (size_t i = node.first_token; i < node.last_token; ++i)
    unknown = unknown || tokens[i].unknown;
  if (unknown) return make_unknown(std::move(joined), std::move(where));
  if (node.last_token - node.first_token > 1)
    return make_string(std::move(joined), std::move(where));
  const Token& t = tokens[node.first_token];
  switch (t.type) {
    case Tok::Int: return int_value(joined, std::move(where));
    case Tok::Float:
      return make_float(python_float(joined).value_or(std::nan("")), std::move(where));
    case Tok::Bool: return make_bool(starts_ci(joined, 0, "true"), std::move(where));
    case Tok::Null: return make_null(std::move(where));
    case Tok::Id:
      if (joined == "None") {
        warnings.push_back(problem(node.begin, node.end,
                                   "`None` is the string \"None\" in Hydra's grammar, not null",
                                   "write null"));
      }
      return make_string(std::move(joined), std::move(where));
    default: return make_string(std::move(joined), std::move(where));
  }
}

ConfigValue Evaluator::quoted(const Node& node) {
  const Token& t = tokens[node.first_token];
  std::string value = unescape_quoted(o.text.substr(t.begin, t.end - t.begin));
  Provenance where = provenance(node.begin, node.end);
  if (t.unknown) return make_unknown(std::move(value), std::move(where));
  ConfigValue string = make_string(std::move(value), std::move(where));
  string.quoted = true;
  return string;
}

void Evaluator::note_sweep(const Node& node, std::string_view name, bool cast) {
  if (sweep) return;
  std::string what = cast ? fmt::format("'{}(...)' of several values is a Hydra choice sweep", name)
                          : fmt::format("'{}(...)' is a Hydra sweep function", name);
  sweep = problem(node.begin, node.name_end,
                  fmt::format("Error merging override {}: {}, which Megatron Bridge cannot apply",
                              o.text, what),
                  fmt::format("give a single value, or quote the value if it is text: {}",
                              quoted_suggestion(o)));
}

ConfigValue Evaluator::call(const Node& node) {
  std::string name = text(node.begin, node.name_end);
  std::vector<ConfigValue> positional;
  std::vector<std::pair<std::string, ConfigValue>> named;
  for (size_t i = 0; i < node.items.size(); ++i) {
    if (node.arg_names[i].empty() && !named.empty()) {
      error =
          cannot_parse(node.items[i].begin, node.items[i].end,
                       fmt::format("positional argument follows keyword argument in {}()", name),
                       "put the positional arguments first");
      return make_null();
    }
    ConfigValue value = eval(node.items[i]);
    if (error) return make_null();
    if (node.arg_names[i].empty()) {
      positional.push_back(std::move(value));
    } else {
      named.emplace_back(node.arg_names[i], std::move(value));
    }
  }
  if (std::optional<Cast> cast = cast_named(name)) return cast_call(node, *cast, positional, named);
  Provenance where = provenance(node.begin, node.end);
  if (name == "sort" || name == "shuffle") {
    // Of a plain list the result is a list again (shuffled at random, or
    // sorted), which Bridge accepts; mblint does not evaluate it.
    if (positional.size() == 1 && named.empty() && positional[0].is_list()) {
      return make_unknown(text(node.begin, node.end), std::move(where));
    }
  }
  if (is_sweep_function(name)) {
    note_sweep(node, name);
    return make_null(std::move(where));
  }
  error = cannot_parse(
      node.begin, node.name_end,
      fmt::format("unknown function '{}' (an unquoted name followed by '(' is a function call)",
                  name),
      fmt::format("quote the value: {}, or escape the parentheses: \\( \\)", quoted_suggestion(o)));
  return make_null();
}

// int(...), float(...), bool(...), str(...): one positional argument or
// `value=`; several positional arguments make a choice sweep.
ConfigValue Evaluator::cast_call(const Node& node, Cast cast, std::vector<ConfigValue>& positional,
                                 std::vector<std::pair<std::string, ConfigValue>>& named) {
  std::string name = text(node.begin, node.name_end);
  std::string call_text = text(node.begin, node.end);
  auto type_error = [&](std::string why) {
    error = cannot_parse(node.begin, node.end,
                         fmt::format("TypeError while evaluating '{}': {}", call_text, why),
                         fmt::format("call it as {}(<value>)", name));
    return make_null();
  };
  if (named.size() > 1 || (named.size() == 1 && named[0].first != "value")) {
    return type_error(fmt::format("unexpected keyword argument '{}'", named.back().first));
  }
  if (!named.empty() && !positional.empty()) {
    return type_error("cannot use both position and named arguments");
  }
  if (named.empty() && positional.empty())
    return type_error("No positional args or value specified");
  if (positional.size() > 1) {
    note_sweep(node, name, true);
    return make_null();
  }
  const ConfigValue& argument = named.empty() ? positional[0] : named[0].second;
  CastFailure why;
  std::optional<ConfigValue> result = cast_value(cast, argument, why);
  if (!result) {
    error =
        cannot_parse(node.begin, node.end,
                     fmt::format("{} while evaluating '{}': {}", why.type, call_text, why.detail),
                     "give the value without the cast, or a value the cast accepts");
    return make_null();
  }
  result->where = provenance(node.begin, node.end);
  return std::move(*result);
}

std::optional<ConfigValue> Evaluator::cast_value(Cast cast, const ConfigValue& value,
                                                 CastFailure& why) {
  Provenance where = value.where;
  if (value.is_unknown()) return value;
  if (value.is_list() || value.is_map()) {
    ConfigValue out = value;
    for (ConfigValue& item : out.items) {
      auto cast_item = cast_value(cast, item, why);
      if (!cast_item) return std::nullopt;
      item = std::move(*cast_item);
    }
    for (MapEntry& entry : out.entries) {
      auto cast_item = cast_value(cast, entry.value, why);
      if (!cast_item) return std::nullopt;
      entry.value = std::move(*cast_item);
    }
    return out;
  }
  if (value.is_null() && cast != Cast::Bool) {
    why = {"AssertionError", "null cannot be cast"};
    return std::nullopt;
  }
  switch (cast) {
    case Cast::Int: {
      if (value.kind == ValueKind::Int) return value;
      if (value.kind == ValueKind::Bool) return make_int(value.boolean ? 1 : 0, where);
      if (value.kind == ValueKind::Float) {
        if (std::isnan(value.real)) {
          why = {"ValueError", "cannot convert float NaN to integer"};
          return std::nullopt;
        }
        if (std::isinf(value.real)) {
          why = {"OverflowError", "cannot convert float infinity to integer"};
          return std::nullopt;
        }
        double truncated = std::trunc(value.real);
        if (std::fabs(truncated) >= 9.2e18)
          return make_unknown(python_float_repr(truncated), where);
        return make_int(static_cast<int64_t>(truncated), where);
      }
      bool overflow = false;
      std::optional<int64_t> parsed = python_int(value.text, &overflow);
      if (parsed) return make_int(*parsed, where);
      if (overflow) return make_unknown(value.text, where);
      why = {"ValueError", fmt::format("invalid literal for int() with base 10: '{}'", value.text)};
      return std::nullopt;
    }
    case Cast::Float: {
      if (value.kind == ValueKind::Float) return value;
      if (value.kind == ValueKind::Int)
        return make_float(static_cast<double>(value.integer), where);
      if (value.kind == ValueKind::Bool) return make_float(value.boolean ? 1.0 : 0.0, where);
      if (std::optional<double> parsed = python_float(value.text))
        return make_float(*parsed, where);
      why = {"ValueError", fmt::format("could not convert string to float: '{}'", value.text)};
      return std::nullopt;
    }
    case Cast::Bool: {
      if (value.kind == ValueKind::Null) return make_bool(false, where);
      if (value.kind == ValueKind::Bool) return value;
      if (value.kind == ValueKind::Int) return make_bool(value.integer != 0, where);
      if (value.kind == ValueKind::Float) return make_bool(value.real != 0.0, where);
      if (starts_ci(value.text, 0, "true") && value.text.size() == 4) return make_bool(true, where);
      if (starts_ci(value.text, 0, "false") && value.text.size() == 5)
        return make_bool(false, where);
      why = {"ValueError", fmt::format("Cannot cast '{}' to bool", value.text)};
      return std::nullopt;
    }
    case Cast::Str: {
      if (value.kind == ValueKind::Bool)
        return make_string(value.boolean ? "true" : "false", where);
      if (value.kind == ValueKind::Int) return make_string(std::to_string(value.integer), where);
      if (value.kind == ValueKind::Float) return make_string(python_float_repr(value.real), where);
      return make_string(value.text, where);
    }
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// Assembly

Diagnostic to_diagnostic(const MappedString& word, const Problem& p) {
  return input_finding(input_rule::kOverrideSyntax, p.message, span_of(word, p.begin, p.end), p.help);
}

Problem sweep_problem(const Override& o, size_t comma) {
  std::string_view value = o.value();
  std::string shown = value.find('"') == std::string_view::npos
                          ? fmt::format("{}\"{}\"", o.head(), value)
                          : quoted_suggestion(o);
  std::string help = fmt::format("quote the value: {}", shown);
  if (shown.find('\'') == std::string::npos) help += fmt::format(" (in a shell: '{}')", shown);
  if (value.find_first_of("[]{}()'\"\\") == std::string_view::npos) {
    std::string escaped(o.head());
    for (char c : value) {
      if (c == ',') escaped += '\\';
      escaped += c;
    }
    help += fmt::format(", or escape the commas: {}", escaped);
  }
  return problem(comma, comma + 1,
                 fmt::format("Error merging override {}: the unquoted ',' makes Hydra read the "
                             "value as a sweep over several values, which Megatron Bridge cannot "
                             "apply",
                             o.text),
                 std::move(help));
}

HydraParse parse_override(const MappedString& word, Layer layer) {
  HydraParse result;
  const std::string_view text = word.text;
  // An unknown expansion in the key leaves nothing to check: the override
  // could be anything once the shell has expanded it.
  size_t first_equal = std::min(text.find('='), text.size());
  if (!text.empty() && has_unknown(word, 0, first_equal)) return result;

  Key key;
  if (std::optional<Problem> bad = parse_key(text, key)) {
    result.problems.push_back(to_diagnostic(word, *bad));
    return result;
  }
  HydraOverride parsed;
  parsed.op = key.op;
  parsed.key = split_path(text.substr(key.begin, key.end - key.begin));
  parsed.key_span = span_of(word, key.begin, key.end);
  parsed.statement_span = span_of(word, 0, text.size());
  if (!key.has_value) {
    if (key.refusal) {
      result.problems.push_back(to_diagnostic(word, *key.refusal));
    } else {
      result.parsed = std::move(parsed);
    }
    return result;
  }

  Override o{word, text, key.equal, key.value_begin};
  Parser parser{o, make_lexer(o), {}, 0, std::nullopt, std::nullopt};
  Node top;
  top.begin = top.end = key.equal + 1;
  bool syntax_ok = parser.parse_value(top);
  Evaluator evaluator{o, parser.tokens, layer, std::nullopt, std::nullopt, {}};
  ConfigValue value;
  if (!syntax_ok) {
    // What an unknown expansion expands to may well fix the syntax.
    if (!has_unknown(word, key.value_begin, text.size())) {
      result.problems.push_back(to_diagnostic(word, *parser.error));
      return result;
    }
    size_t end = key.value_begin + o.value().size();
    value = make_unknown(std::string(o.value()), evaluator.provenance(key.value_begin, end));
  } else {
    value = evaluator.eval(top);
  }
  std::optional<Problem> refusal = evaluator.error;
  if (!refusal) refusal = key.refusal;
  if (!refusal && parser.sweep_comma) refusal = sweep_problem(o, *parser.sweep_comma);
  if (!refusal) refusal = evaluator.sweep;
  if (refusal) {
    result.problems.push_back(to_diagnostic(word, *refusal));
    return result;
  }
  value.where.key = parsed.key_span;
  value.where.statement = parsed.statement_span;
  parsed.value = std::move(value);
  result.parsed = std::move(parsed);
  for (const Problem& warning : evaluator.warnings) {
    result.problems.push_back(to_diagnostic(word, warning));
  }
  return result;
}

}  // namespace

HydraParse parse_hydra_override(const MappedString& word, Layer layer) {
  try {
    return parse_override(word, layer);
  } catch (const std::exception& e) {  // e.g. bad_alloc on absurd input: never escape
    HydraParse result;
    result.problems.push_back(input_finding(input_rule::kOverrideSyntax,
                                            fmt::format("mblint could not read this override ({})", e.what()),
                                            span_of(word, 0, word.text.size()), "check the override by hand"));
    return result;
  }
}

}  // namespace mblint
