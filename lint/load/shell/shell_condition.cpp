// Conditions: `[ ... ]` / `test ...` on expanded words and `[[ ... ]]` on
// its own tokens, in three-valued logic: a test that needs the file system,
// a regex, or a value mblint does not know is Undecided.
#include <algorithm>
#include <array>
#include <charconv>

#include "lint/load/shell/shell_walk.h"

namespace mblint::shell {

namespace {

constexpr int kMaxDepth = 200;

Status from_bool(bool value) { return value ? Status::Success : Status::Failure; }

Status negate(Status s) {
  if (s == Status::Success) return Status::Failure;
  if (s == Status::Failure) return Status::Success;
  return Status::Undecided;
}

Status both(Status a, Status b) {
  if (a == Status::Failure || b == Status::Failure) return Status::Failure;
  if (a == Status::Success && b == Status::Success) return Status::Success;
  return Status::Undecided;
}

Status either(Status a, Status b) {
  if (a == Status::Success || b == Status::Success) return Status::Success;
  if (a == Status::Failure && b == Status::Failure) return Status::Failure;
  return Status::Undecided;
}

// `a OP b OP c` read left to right: -a and -o in [ ], && and || in [[ ]].
template <class Reader>
Status chain(Reader& r, bool (*at_op)(const Reader&, size_t, std::string_view), std::string_view op,
             Status (*operand)(Reader&), Status (*combine)(Status, Status)) {
  Status s = operand(r);
  while (at_op(r, r.pos, op)) {
    ++r.pos;
    s = combine(s, operand(r));
  }
  return s;
}

bool is_string_or_number_op(std::string_view op) {
  static constexpr std::array<std::string_view, 12> kOps = {
      "=", "==", "!=", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "=~"};
  return std::find(kOps.begin(), kOps.end(), op) != kOps.end();
}

bool is_binary_op(std::string_view op) {
  return is_string_or_number_op(op) || op == "-nt" || op == "-ot" || op == "-ef";
}

bool is_unary_op(std::string_view op) {
  static constexpr std::string_view kLetters = "abcdefghknoprstuvwxzGLNOSR";
  return op.size() == 2 && op[0] == '-' && kLetters.find(op[1]) != std::string_view::npos;
}

std::optional<int64_t> parse_integer(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

Status compare_numbers(std::string_view op, std::optional<int64_t> a, std::optional<int64_t> b) {
  if (!a || !b) return Status::Undecided;
  if (op == "-eq") return from_bool(*a == *b);
  if (op == "-ne") return from_bool(*a != *b);
  if (op == "-lt") return from_bool(*a < *b);
  if (op == "-le") return from_bool(*a <= *b);
  if (op == "-gt") return from_bool(*a > *b);
  return from_bool(*a >= *b);  // -ge
}

Status compare_strings(std::string_view op, const MappedString& a, const MappedString& b) {
  if (!fully_known(a) || !fully_known(b)) return Status::Undecided;
  if (op == "=" || op == "==") return from_bool(a.text == b.text);
  if (op == "!=") return from_bool(a.text != b.text);
  if (op == "<") return from_bool(a.text < b.text);
  if (op == ">") return from_bool(a.text > b.text);
  return Status::Undecided;
}

// -z / -n; every other unary test looks at files, options or the terminal.
Status unary_test(std::string_view op, const MappedString& operand) {
  if (op != "-z" && op != "-n") return Status::Undecided;
  if (!fully_known(operand)) return Status::Undecided;
  return from_bool(operand.text.empty() == (op == "-z"));
}

Status non_empty(const MappedString& operand) {
  if (!fully_known(operand)) return Status::Undecided;
  return from_bool(!operand.text.empty());
}

// ---------------------------------------------------------------- [ ] / test

struct TestReader {
  const std::vector<MappedString>& args;
  size_t pos = 0;
  int depth = 0;
};

bool test_at(const TestReader& r, size_t i, std::string_view text) {
  return i < r.args.size() && r.args[i].text == text;
}

Status test_or(TestReader& r);

Status test_primary(TestReader& r) {
  size_t left = r.args.size() - r.pos;
  if (left == 0) return Status::Undecided;
  const MappedString& first = r.args[r.pos];
  if (left >= 3 && is_binary_op(r.args[r.pos + 1].text)) {
    std::string_view op = r.args[r.pos + 1].text;
    const MappedString& rhs = r.args[r.pos + 2];
    r.pos += 3;
    if (op[0] == '-' && op != "-nt" && op != "-ot" && op != "-ef") {
      if (!fully_known(first) || !fully_known(rhs)) return Status::Undecided;
      return compare_numbers(op, parse_integer(first.text), parse_integer(rhs.text));
    }
    return compare_strings(op, first, rhs);
  }
  if (first.text == "(" && left >= 3 && r.depth < kMaxDepth) {
    ++r.pos;
    ++r.depth;
    Status inner = test_or(r);
    --r.depth;
    if (!test_at(r, r.pos, ")")) return Status::Undecided;
    ++r.pos;
    return inner;
  }
  if (left >= 2 && is_unary_op(first.text)) {
    r.pos += 2;
    return unary_test(first.text, r.args[r.pos - 1]);
  }
  ++r.pos;
  return non_empty(first);
}

Status test_not(TestReader& r) {
  if (test_at(r, r.pos, "!") && r.pos + 1 < r.args.size() && r.depth < kMaxDepth) {
    ++r.pos;
    ++r.depth;
    Status inner = negate(test_not(r));
    --r.depth;
    return inner;
  }
  return test_primary(r);
}

Status test_and(TestReader& r) { return chain(r, test_at, "-a", test_not, both); }

Status test_or(TestReader& r) { return chain(r, test_at, "-o", test_and, either); }

// ---------------------------------------------------------------- [[ ]]

struct CondReader {
  Walker& w;
  const std::vector<CondToken>& tokens;
  size_t pos = 0;
  int depth = 0;
};

bool cond_op(const CondReader& r, size_t i, std::string_view op) {
  return i < r.tokens.size() && r.tokens[i].op == op;
}

bool cond_word(const CondReader& r, size_t i, std::string_view text) {
  if (i >= r.tokens.size() || !r.tokens[i].op.empty()) return false;
  auto plain = plain_text(r.tokens[i].word);
  return plain && *plain == text;
}

// The binary operator at `i`, if there is one.
std::optional<std::string> cond_binary(const CondReader& r, size_t i) {
  if (i >= r.tokens.size()) return std::nullopt;
  const CondToken& t = r.tokens[i];
  if (t.op == "<" || t.op == ">") return t.op;
  if (!t.op.empty()) return std::nullopt;
  auto plain = plain_text(t.word);
  if (plain && is_binary_op(*plain)) return std::string(*plain);
  return std::nullopt;
}

Status cond_compare(CondReader& r, const Word& lhs_word, const std::string& op,
                    const Word& rhs_word) {
  if (op == "=~" || op == "-nt" || op == "-ot" || op == "-ef") return Status::Undecided;
  if (op[0] == '-') {  // -eq and friends: both sides are arithmetic
    return compare_numbers(op, evaluate_arith_word(r.w, lhs_word),
                           evaluate_arith_word(r.w, rhs_word));
  }
  MappedString lhs = expand_word_string(r.w, lhs_word);
  if (op == "=" || op == "==" || op == "!=") {
    Status match = match_pattern(lhs, expand_pattern(r.w, rhs_word));
    return op == "!=" ? negate(match) : match;
  }
  return compare_strings(op, lhs, expand_word_string(r.w, rhs_word));
}

Status cond_or(CondReader& r);

Status cond_primary(CondReader& r) {
  if (r.pos >= r.tokens.size() || !r.tokens[r.pos].op.empty()) return Status::Undecided;
  const Word& first = r.tokens[r.pos].word;
  std::optional<std::string> op = cond_binary(r, r.pos + 1);
  if (op && r.pos + 2 < r.tokens.size() && r.tokens[r.pos + 2].op.empty()) {
    const Word& rhs = r.tokens[r.pos + 2].word;
    r.pos += 3;
    return cond_compare(r, first, *op, rhs);
  }
  auto plain = plain_text(first);
  if (plain && is_unary_op(*plain) && r.pos + 1 < r.tokens.size() &&
      r.tokens[r.pos + 1].op.empty()) {
    const Word& operand = r.tokens[r.pos + 1].word;
    r.pos += 2;
    return unary_test(*plain, expand_word_string(r.w, operand));
  }
  ++r.pos;
  return non_empty(expand_word_string(r.w, first));
}

Status cond_not(CondReader& r) {
  if (r.depth >= kMaxDepth) return Status::Undecided;
  ++r.depth;
  Status s;
  if (cond_word(r, r.pos, "!")) {
    ++r.pos;
    s = negate(cond_not(r));
  } else if (cond_op(r, r.pos, "(")) {
    ++r.pos;
    s = cond_or(r);
    if (cond_op(r, r.pos, ")"))
      ++r.pos;
    else
      s = Status::Undecided;
  } else {
    s = cond_primary(r);
  }
  --r.depth;
  return s;
}

Status cond_and(CondReader& r) { return chain(r, cond_op, "&&", cond_not, both); }

Status cond_or(CondReader& r) { return chain(r, cond_op, "||", cond_and, either); }

// ---------------------------------------------------------------- globs

bool active(const Pattern& p, size_t i) { return i < p.active.size() && p.active[i]; }

// End (past `]`) of the bracket expression opening at `open`, or 0.
size_t bracket_end(std::string_view pattern, size_t open) {
  size_t i = open + 1;
  if (i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^')) ++i;
  if (i < pattern.size() && pattern[i] == ']') ++i;
  while (i < pattern.size() && pattern[i] != ']') ++i;
  return i < pattern.size() ? i + 1 : 0;
}

bool bracket_matches(std::string_view pattern, size_t open, size_t end, char c) {
  size_t i = open + 1;
  bool negated = pattern[i] == '!' || pattern[i] == '^';
  if (negated) ++i;
  bool found = false;
  size_t last = end - 1;  // the closing ]
  for (bool first = true; i < last; first = false) {
    if (!first && pattern[i] == ']') break;
    if (i + 2 < last && pattern[i + 1] == '-') {
      found = found || (pattern[i] <= c && c <= pattern[i + 2]);
      i += 3;
    } else {
      found = found || pattern[i] == c;
      ++i;
    }
  }
  return found != negated;
}

// Matches one pattern element at `p` against `c`; returns its length or 0.
size_t match_one(const Pattern& pattern, size_t p, char c) {
  std::string_view text = pattern.text.text;
  if (active(pattern, p) && text[p] == '?') return 1;
  if (active(pattern, p) && text[p] == '[') {
    size_t end = bracket_end(text, p);
    if (end != 0) return bracket_matches(text, p, end, c) ? end - p : 0;
  }
  return text[p] == c ? 1 : 0;
}

}  // namespace

Status evaluate_test(const std::vector<MappedString>& args) {
  if (args.empty()) return Status::Failure;
  TestReader r{args};
  Status s = test_or(r);
  return r.pos == args.size() ? s : Status::Undecided;
}

Status evaluate_cond(Walker& w, const std::vector<CondToken>& tokens) {
  if (tokens.empty()) return Status::Undecided;
  CondReader r{w, tokens};
  Status s = cond_or(r);
  return r.pos == tokens.size() ? s : Status::Undecided;
}

// Iterative matching with one backtrack point per `*`: linear in practice.
bool glob_match(std::string_view text, const Pattern& pattern) {
  std::string_view pat = pattern.text.text;
  size_t t = 0, p = 0;
  size_t star = std::string_view::npos, star_text = 0;
  while (t < text.size()) {
    if (p < pat.size() && active(pattern, p) && pat[p] == '*') {
      star = p++;
      star_text = t;
      continue;
    }
    size_t length = p < pat.size() ? match_one(pattern, p, text[t]) : 0;
    if (length > 0) {
      p += length;
      ++t;
      continue;
    }
    if (star == std::string_view::npos) return false;
    p = star + 1;
    t = ++star_text;
  }
  while (p < pat.size() && active(pattern, p) && pat[p] == '*') ++p;
  return p == pat.size();
}

Status match_pattern(const MappedString& subject, const Pattern& pattern) {
  const std::string& text = pattern.text.text;
  bool matches_all = !text.empty() && fully_known(pattern.text);
  for (size_t i = 0; i < text.size() && matches_all; ++i) {
    matches_all = active(pattern, i) && text[i] == '*';
  }
  if (matches_all) return Status::Success;  // `*)` matches whatever the subject is
  if (!fully_known(subject) || !fully_known(pattern.text)) return Status::Undecided;
  return from_bool(glob_match(subject.text, pattern));
}

}  // namespace mblint::shell
