// Precedence-climbing evaluator for bash arithmetic. Short-circuited
// operands (`0 && x=1`, the untaken side of `?:`) are parsed with `live`
// false so their assignments do not happen.
#include "lint/load/shell/shell_arith.h"

#include <array>
#include <cctype>
#include <limits>

namespace mblint::shell {

namespace {

using Value = std::optional<int64_t>;

constexpr int kMaxDepth = 200;         // parentheses and unary operators
constexpr int kMaxVariableDepth = 16;  // X=Y, Y=X+1, ... evaluated in turn

struct Arith {
  std::string_view s;
  const ArithScope& scope;
  int variable_depth = 0;
  size_t pos = 0;
  int depth = 0;
  bool failed = false;  // malformed: bash would report an error
};

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

void skip_space(Arith& a) {
  while (a.pos < a.s.size() && std::isspace(static_cast<unsigned char>(a.s[a.pos]))) ++a.pos;
}

bool eat(Arith& a, std::string_view op) {
  skip_space(a);
  if (a.s.substr(a.pos, op.size()) != op) return false;
  a.pos += op.size();
  return true;
}

Value fail(Arith& a) {
  a.failed = true;
  return std::nullopt;
}

std::string_view read_name(Arith& a) {
  size_t start = a.pos;
  while (a.pos < a.s.size() && is_name_char(a.s[a.pos])) ++a.pos;
  return a.s.substr(start, a.pos - start);
}

Value multiply_checked(int64_t x, int64_t y) {
  int64_t r = 0;
  if (__builtin_mul_overflow(x, y, &r)) return std::nullopt;
  return r;
}

Value power(int64_t base, int64_t exponent) {
  if (exponent < 0) return std::nullopt;  // bash: "exponent less than 0"
  int64_t result = 1;
  while (exponent > 0) {
    if (exponent & 1) {
      Value next = multiply_checked(result, base);
      if (!next) return std::nullopt;
      result = *next;
    }
    exponent >>= 1;
    if (exponent > 0) {
      Value squared = multiply_checked(base, base);
      if (!squared) return std::nullopt;
      base = *squared;
    }
  }
  return result;
}

Value apply(std::string_view op, Value lhs, Value rhs) {
  if (!lhs || !rhs) return std::nullopt;
  int64_t x = *lhs, y = *rhs, r = 0;
  if (op == "+") return __builtin_add_overflow(x, y, &r) ? Value() : Value(r);
  if (op == "-") return __builtin_sub_overflow(x, y, &r) ? Value() : Value(r);
  if (op == "*") return multiply_checked(x, y);
  if (op == "/" || op == "%") {
    if (y == 0 || (x == std::numeric_limits<int64_t>::min() && y == -1)) return std::nullopt;
    return op == "/" ? x / y : x % y;
  }
  if (op == "**") return power(x, y);
  if (op == "<<" || op == ">>") {
    if (y < 0 || y >= 64) return std::nullopt;
    return op == "<<" ? static_cast<int64_t>(static_cast<uint64_t>(x) << y) : x >> y;
  }
  if (op == "<") return x < y;
  if (op == ">") return x > y;
  if (op == "<=") return x <= y;
  if (op == ">=") return x >= y;
  if (op == "==") return x == y;
  if (op == "!=") return x != y;
  if (op == "&") return x & y;
  if (op == "|") return x | y;
  if (op == "^") return x ^ y;
  return std::nullopt;
}

int digit_value(char c, int base) {
  if (c >= '0' && c <= '9') return c - '0';
  if (base <= 36) {
    if (c >= 'a' && c <= 'z') return c - 'a' + 10;
    if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
    return -1;
  }
  if (c >= 'a' && c <= 'z') return c - 'a' + 10;
  if (c >= 'A' && c <= 'Z') return c - 'A' + 36;
  if (c == '@') return 62;
  if (c == '_') return 63;
  return -1;
}

// Digits in `base`; nullopt on overflow, failure on a bad digit.
Value parse_digits(Arith& a, std::string_view digits, int base) {
  if (digits.empty()) return fail(a);
  int64_t value = 0;
  for (char c : digits) {
    int digit = digit_value(c, base);
    if (digit < 0 || digit >= base) return fail(a);
    if (__builtin_mul_overflow(value, base, &value) ||
        __builtin_add_overflow(value, digit, &value)) {
      return std::nullopt;
    }
  }
  return value;
}

// 42, 0x2A, 052, 16#2A, 64#@_
Value parse_number(Arith& a) {
  size_t start = a.pos;
  while (a.pos < a.s.size() &&
         (is_name_char(a.s[a.pos]) || a.s[a.pos] == '#' || a.s[a.pos] == '@')) {
    ++a.pos;
  }
  std::string_view token = a.s.substr(start, a.pos - start);
  size_t hash = token.find('#');
  if (hash != std::string_view::npos) {
    Value base = parse_digits(a, token.substr(0, hash), 10);
    if (!base || *base < 2 || *base > 64) return fail(a);
    return parse_digits(a, token.substr(hash + 1), static_cast<int>(*base));
  }
  if (token.size() > 2 && token[0] == '0' && (token[1] == 'x' || token[1] == 'X')) {
    return parse_digits(a, token.substr(2), 16);
  }
  if (token.size() > 1 && token[0] == '0') return parse_digits(a, token.substr(1), 8);
  return parse_digits(a, token, 10);
}

Value evaluate_all(Arith& a);

// A variable's value, itself read as an arithmetic expression.
Value variable_value(Arith& a, std::string_view name) {
  std::optional<std::string> text = a.scope.get(name);
  if (!text) return std::nullopt;
  if (a.variable_depth >= kMaxVariableDepth) return std::nullopt;
  Arith inner{*text, a.scope, a.variable_depth + 1};
  return evaluate_all(inner);
}

void assign(Arith& a, std::string_view name, Value value, bool live) {
  if (live && a.scope.set) a.scope.set(name, value);
}

Value parse_comma(Arith& a, bool live);
Value parse_assignment(Arith& a, bool live);
Value parse_unary(Arith& a, bool live);

Value parse_primary(Arith& a, bool live) {
  skip_space(a);
  if (a.pos >= a.s.size()) return fail(a);
  char c = a.s[a.pos];
  if (c == '(') {
    ++a.pos;
    Value value = parse_comma(a, live);
    if (!eat(a, ")")) return fail(a);
    return value;
  }
  if (std::isdigit(static_cast<unsigned char>(c))) return parse_number(a);
  if (!is_name_start(c)) return fail(a);
  std::string_view name = read_name(a);
  if (a.pos < a.s.size() && a.s[a.pos] == '[') return fail(a);  // array element: not followed
  Value value = variable_value(a, name);
  for (std::string_view op : {"++", "--"}) {
    if (!eat(a, op)) continue;
    assign(a, name, apply(op == "++" ? "+" : "-", value, 1), live);
    return value;
  }
  return value;
}

Value parse_unary(Arith& a, bool live) {
  if (++a.depth > kMaxDepth) return fail(a);
  Value result;
  skip_space(a);
  size_t save = a.pos;
  if (eat(a, "++") || eat(a, "--")) {
    bool increment = a.s[save] == '+';
    skip_space(a);
    if (a.pos < a.s.size() && is_name_start(a.s[a.pos])) {
      std::string_view name = read_name(a);
      result = apply(increment ? "+" : "-", variable_value(a, name), 1);
      assign(a, name, result, live);
      --a.depth;
      return result;
    }
    a.pos = save;  // `--5` is - (-5)
  }
  if (eat(a, "!")) {
    Value v = parse_unary(a, live);
    result = v ? Value(*v == 0) : Value();
  } else if (eat(a, "~")) {
    Value v = parse_unary(a, live);
    result = v ? Value(~*v) : Value();
  } else if (eat(a, "-")) {
    result = apply("-", 0, parse_unary(a, live));
  } else if (eat(a, "+")) {
    result = parse_unary(a, live);
  } else {
    result = parse_primary(a, live);
  }
  --a.depth;
  return result;
}

struct BinaryOp {
  std::string_view text;
  int precedence = 0;
};

// The binary operator at the current position, without consuming it.
BinaryOp peek_binary(Arith& a) {
  static constexpr std::array<BinaryOp, 19> kOps = {{
      {"**", 11}, {"<<", 8}, {">>", 8}, {"<=", 7}, {">=", 7}, {"==", 6}, {"!=", 6},
      {"&&", 2},  {"||", 1}, {"*", 10}, {"/", 10}, {"%", 10}, {"+", 9},  {"-", 9},
      {"<", 7},   {">", 7},  {"&", 5},  {"^", 4},  {"|", 3},
  }};
  skip_space(a);
  std::string_view rest = a.s.substr(a.pos);
  for (const BinaryOp& op : kOps) {
    if (rest.substr(0, op.text.size()) != op.text) continue;
    char after = rest.size() > op.text.size() ? rest[op.text.size()] : '\0';
    bool compound_assignment =
        after == '=' && op.text != "<=" && op.text != ">=" && op.text != "==" && op.text != "!=";
    if (compound_assignment) return {};
    return op;
  }
  return {};
}

Value parse_binary(Arith& a, int min_precedence, bool live) {
  Value lhs = parse_unary(a, live);
  while (!a.failed) {
    BinaryOp op = peek_binary(a);
    if (op.precedence == 0 || op.precedence < min_precedence) break;
    a.pos += op.text.size();
    if (op.text == "&&" || op.text == "||") {
      bool is_and = op.text == "&&";
      bool decided = lhs && ((*lhs == 0) == is_and);  // 0 && x, 1 || x
      Value rhs = parse_binary(a, op.precedence + 1, live && lhs && !decided);
      if (decided)
        lhs = is_and ? 0 : 1;
      else if (lhs)
        lhs = rhs ? Value(*rhs != 0) : Value();
      else
        lhs = (rhs && ((*rhs == 0) == is_and)) ? Value(is_and ? 0 : 1) : Value();
      continue;
    }
    int next = op.text == "**" ? op.precedence : op.precedence + 1;  // ** is right-associative
    Value rhs = parse_binary(a, next, live);
    lhs = apply(op.text, lhs, rhs);
  }
  return lhs;
}

Value parse_conditional(Arith& a, bool live) {
  Value condition = parse_binary(a, 1, live);
  if (!eat(a, "?")) return condition;
  bool yes = condition && *condition != 0;
  bool no = condition && *condition == 0;
  Value if_true = parse_assignment(a, live && yes);
  if (!eat(a, ":")) return fail(a);
  Value if_false = parse_assignment(a, live && no);
  if (!condition) return std::nullopt;
  return yes ? if_true : if_false;
}

// `name op= expr` if that is what follows, else a conditional expression.
Value parse_assignment(Arith& a, bool live) {
  skip_space(a);
  size_t save = a.pos;
  if (a.pos < a.s.size() && is_name_start(a.s[a.pos])) {
    std::string_view name = read_name(a);
    skip_space(a);
    static constexpr std::array<std::string_view, 11> kAssignments = {
        "<<=", ">>=", "+=", "-=", "*=", "/=", "%=", "&=", "^=", "|=", "="};
    for (std::string_view op : kAssignments) {
      if (a.s.substr(a.pos, op.size()) != op) continue;
      if (op == "=" && a.s.substr(a.pos, 2) == "==") break;
      a.pos += op.size();
      Value rhs = parse_assignment(a, live);
      Value value =
          op == "=" ? rhs : apply(op.substr(0, op.size() - 1), variable_value(a, name), rhs);
      assign(a, name, value, live);
      return value;
    }
  }
  a.pos = save;
  return parse_conditional(a, live);
}

Value parse_comma(Arith& a, bool live) {
  Value value = parse_assignment(a, live);
  while (!a.failed && eat(a, ",")) value = parse_assignment(a, live);
  return value;
}

Value evaluate_all(Arith& a) {
  skip_space(a);
  if (a.pos >= a.s.size()) return 0;  // $(( )) and an empty variable are 0
  Value value = parse_comma(a, true);
  skip_space(a);
  if (a.failed || a.pos != a.s.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<int64_t> evaluate_arithmetic(std::string_view expression, const ArithScope& scope) {
  Arith a{expression, scope};
  return evaluate_all(a);
}

}  // namespace mblint::shell
