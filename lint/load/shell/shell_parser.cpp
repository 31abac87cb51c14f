// Shell parser: recursive descent over the lexer's tokens, building the
// command tree the walker follows. On a syntax error it reports the problem
// at the construct's opening keyword (or at the stray token), skips what it
// cannot use and goes on, so one mistake does not hide the rest of a script.
#include <fmt/format.h>

#include <optional>

#include "lint/load/shell/shell_syntax.h"

namespace mblint::shell {

namespace {

const Token& peek(Parser& p) {
  if (!p.ahead) p.ahead = next_token(p.lx);
  return *p.ahead;
}

Token take(Parser& p) {
  peek(p);
  Token token = std::move(*p.ahead);
  p.ahead.reset();
  p.last_end = token.end;
  return token;
}

bool stopped(const Parser& p) { return p.lx.problems.fatal; }

template <size_t N>
bool is_word(const Token& t, const char (&keyword)[N]) {
  return t.kind == TokenKind::Word && t.keyword_length == N - 1 &&
         std::equal(keyword, keyword + N - 1, t.keyword.begin());
}

bool is_op(const Token& t, std::string_view op) {
  return t.kind == TokenKind::Operator && t.op == op;
}

bool is_redirection(const Token& t) {
  if (t.kind != TokenKind::Operator || t.op.empty()) return false;
  return t.op[0] == '<' || t.op[0] == '>' || t.op == "&>" || t.op == "&>>";
}

// Tokens that end a command list: closing keywords, `)`, `;;`, end of input.
bool is_terminator(const Token& t) {
  if (t.kind == TokenKind::End) return true;
  if (t.kind == TokenKind::Operator)
    return t.op == ")" || t.op == ";;" || t.op == ";&" || t.op == ";;&";
  if (t.kind != TokenKind::Word || t.keyword_length == 0) return false;
  return is_word(t, "then") || is_word(t, "elif") || is_word(t, "else") || is_word(t, "fi") ||
         is_word(t, "do") || is_word(t, "done") || is_word(t, "esac") || is_word(t, "}");
}

void skip_newlines(Parser& p) {
  while (!stopped(p) && peek(p).kind == TokenKind::Newline) take(p);
}

void problem(Parser& p, uint32_t begin, uint32_t end, std::string message, std::string help) {
  report(p.lx.problems, source_span(p.lx.source, begin, end), std::move(message), std::move(help));
}

std::string describe(const Parser& p, const Token& t) {
  switch (t.kind) {
    case TokenKind::End:
      return "end of file";
    case TokenKind::Newline:
      return "newline";
    case TokenKind::Operator:
      return fmt::format("`{}`", t.op);
    case TokenKind::Word:
      break;
  }
  std::string_view raw = p.lx.text.substr(t.begin, std::min<size_t>(t.end - t.begin, 40));
  return fmt::format("`{}`", raw);
}

std::string unexpected_help(const Token& t) {
  if (is_word(t, "fi")) return "remove it, or add the `if ...; then` it closes";
  if (is_word(t, "done")) return "remove it, or add the `for`/`while ...; do` it closes";
  if (is_word(t, "esac")) return "remove it, or add the `case ... in` it closes";
  if (is_word(t, "}")) return "remove it, or add the `{` it closes";
  if (is_op(t, ")")) return "remove it, or add the `(` it closes";
  if (is_word(t, "then") || is_word(t, "elif") || is_word(t, "else")) {
    return "`then`, `elif` and `else` belong after an `if` condition";
  }
  if (is_word(t, "do")) return "`do` belongs after a `for`, `while` or `until` header";
  if (is_op(t, ";;") || is_op(t, ";&") || is_op(t, ";;&")) {
    return "`;;` ends a `case` arm; separate commands with `;`";
  }
  return "a command is missing before it";
}

void report_unexpected(Parser& p, const Token& t) {
  problem(p, t.begin, t.end, fmt::format("unexpected {}", describe(p, t)), unexpected_help(t));
}

void report_missing(Parser& p, const Token& opener, std::string_view opener_text,
                    std::string_view missing) {
  if (p.lx.swallowed) return;  // the input ended inside something already reported
  problem(p, opener.begin, opener.end,
          fmt::format("`{}` without a matching `{}`", opener_text, missing),
          fmt::format("add `{}` to close the `{}`", missing, opener_text));
}

template <size_t N>
bool accept_word(Parser& p, const char (&keyword)[N]) {
  if (!is_word(peek(p), keyword)) return false;
  take(p);
  return true;
}

bool accept_op(Parser& p, std::string_view op) {
  if (!is_op(peek(p), op)) return false;
  take(p);
  return true;
}

// Holds one level of nesting for the duration of a compound command.
struct Nesting {
  Lexer& lx;
  bool ok;
  Nesting(Lexer& lexer, size_t at) : lx(lexer), ok(enter_nesting(lexer, at)) {}
  ~Nesting() { leave_nesting(lx); }
  Nesting(const Nesting&) = delete;
  Nesting& operator=(const Nesting&) = delete;
};

Node parse_list(Parser& p);
Node parse_command(Parser& p);

// Returns the word of a here-string (`<<< word`), which `read` reads.
std::optional<Word> parse_redirection(Parser& p) {
  Token op = take(p);
  if (peek(p).kind != TokenKind::Word) {
    // Often a `<placeholder>` left in a template: bash reads it as redirections.
    problem(p, op.begin, op.end, fmt::format("redirection {} without a target", describe(p, op)),
            "add the file name after it; a `<placeholder>` must be replaced by a value");
    return std::nullopt;
  }
  Token target = take(p);
  if (op.op == "<<" || op.op == "<<-")
    add_heredoc(p.lx, target.word, op.op == "<<-", op.begin, op.end);
  if (op.op == "<<<") return std::move(target.word);
  return std::nullopt;
}

void parse_redirections(Parser& p) {
  while (!stopped(p) && is_redirection(peek(p))) parse_redirection(p);
}

Node finish(Parser& p, Node node) {
  parse_redirections(p);
  node.end = p.last_end;
  return node;
}

Node parse_function_body(Parser& p, Node function) {
  ++p.functions;
  skip_newlines(p);
  function.children.push_back(parse_command(p));
  function.end = p.last_end;
  return function;
}

Node parse_function_definition(Parser& p, Token name) {
  Node function;
  function.kind = NodeKind::Function;
  function.begin = name.begin;
  auto text = plain_text(name.word);
  function.name =
      text ? std::string(*text) : std::string(p.lx.text.substr(name.begin, name.end - name.begin));
  Token open = take(p);  // (
  if (!accept_op(p, ")")) {
    problem(p, open.begin, open.end, fmt::format("expected `)` after `{}(`", function.name),
            "define functions as `name() { ...; }`");
  }
  return parse_function_body(p, std::move(function));
}

Node parse_function_keyword(Parser& p) {
  Token keyword = take(p);
  Node function;
  function.kind = NodeKind::Function;
  function.begin = keyword.begin;
  if (peek(p).kind != TokenKind::Word) {
    problem(p, keyword.begin, keyword.end, "`function` without a name",
            "write `function name { ...; }`");
    return function;
  }
  Token name = take(p);
  auto text = plain_text(name.word);
  function.name =
      text ? std::string(*text) : std::string(p.lx.text.substr(name.begin, name.end - name.begin));
  if (accept_op(p, "(") && !accept_op(p, ")")) {
    problem(p, name.begin, name.end, fmt::format("expected `)` after `{}(`", function.name),
            "write `function name { ...; }`");
  }
  return parse_function_body(p, std::move(function));
}

Node parse_simple(Parser& p) {
  Node node;
  node.kind = NodeKind::Simple;
  node.begin = peek(p).begin;
  bool in_prefix = true;
  while (!stopped(p)) {
    const Token& t = peek(p);
    if (is_redirection(t)) {
      if (t.op == "<<" || t.op == "<<-") detail_of(node).heredocs.push_back(t.begin);
      if (std::optional<Word> here = parse_redirection(p)) {
        std::vector<Word>& words = detail_of(node).here_string;
        words.clear();
        words.push_back(std::move(*here));
      }
      continue;
    }
    if (t.kind != TokenKind::Word) break;
    Token word = take(p);
    bool assignment = in_prefix && assignment_target(word.word).has_value();
    if (!assignment && node.words.empty() && is_op(peek(p), "(")) {
      return parse_function_definition(p, std::move(word));
    }
    if (assignment) ++node.assignment_count;
    in_prefix = assignment;
    node.words.push_back(std::move(word.word));
    node.end = word.end;
  }
  if (node.words.empty()) node.end = p.last_end;
  return node;
}

// A compound command's node, starting at its keyword.
Node node_at(NodeKind kind, const Token& keyword) {
  Node node;
  node.kind = kind;
  node.begin = keyword.begin;
  return node;
}

// Condition, `then`, body, then `elif`/`else` arms, then `fi`.
Node parse_if(Parser& p) {
  Token keyword = take(p);
  Nesting nesting(p.lx, keyword.begin);
  Node node = node_at(NodeKind::If, keyword);
  if (!nesting.ok) return node;
  std::string_view opener = "if";
  while (true) {
    node.children.push_back(parse_list(p));
    if (!accept_word(p, "then")) {
      report_missing(p, keyword, opener, "then");
      node.children.emplace_back();
      return finish(p, std::move(node));
    }
    node.children.push_back(parse_list(p));
    if (accept_word(p, "elif")) continue;
    if (accept_word(p, "else")) {
      node.children.push_back(parse_list(p));
      node.has_else = true;
    }
    break;
  }
  if (!accept_word(p, "fi")) report_missing(p, keyword, opener, "fi");
  return finish(p, std::move(node));
}

// `do list done` (or `{ list; }`) after a loop header.
void parse_loop_body(Parser& p, Node& node, const Token& keyword, std::string_view opener) {
  skip_newlines(p);
  if (is_word(peek(p), "{")) {
    node.children.push_back(parse_command(p));
    return;
  }
  if (!accept_word(p, "do")) {
    report_missing(p, keyword, opener, "do");
    node.children.emplace_back();
    return;
  }
  node.children.push_back(parse_list(p));
  if (!accept_word(p, "done")) report_missing(p, keyword, opener, "done");
}

Node parse_while(Parser& p) {
  Token keyword = take(p);
  Nesting nesting(p.lx, keyword.begin);
  Node node = node_at(is_word(keyword, "until") ? NodeKind::Until : NodeKind::While, keyword);
  if (!nesting.ok) return node;
  node.children.push_back(parse_list(p));
  std::string opener = node.kind == NodeKind::Until ? "until" : "while";
  if (!accept_word(p, "do")) {
    report_missing(p, keyword, opener, "do");
    node.children.emplace_back();
    return finish(p, std::move(node));
  }
  node.children.push_back(parse_list(p));
  if (!accept_word(p, "done")) report_missing(p, keyword, opener, "done");
  return finish(p, std::move(node));
}

// Splits the inside of `for ((init; test; step))` at its top-level `;`.
std::vector<std::pair<size_t, size_t>> split_arith_header(std::string_view text, size_t begin,
                                                          size_t end) {
  std::vector<std::pair<size_t, size_t>> pieces;
  int depth = 0;
  size_t start = begin;
  for (size_t i = begin; i < end; ++i) {
    char c = text[i];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ';' && depth == 0 && pieces.size() < 2) {
      pieces.emplace_back(start, i);
      start = i + 1;
    }
  }
  pieces.emplace_back(start, end);
  while (pieces.size() < 3) pieces.emplace_back(end, end);
  return pieces;
}

Node parse_arith_for(Parser& p, Node node, const Token& keyword) {
  node.kind = NodeKind::ArithFor;
  uint32_t open = peek(p).begin;
  size_t end = 0;
  if (scan_arithmetic(p.lx.text, open, end) != ArithScan::Closed) {
    problem(p, open, open + 2, "unterminated `((` in `for ((...))`", "add the closing `))`");
    p.ahead.reset();
    p.lx.pos = p.lx.text.size();
    return node;
  }
  p.ahead.reset();
  for (auto [b, e] : split_arith_header(p.lx.text, open + 2, end - 2)) {
    node.words.push_back(lex_arithmetic(p.lx, b, e));
  }
  p.lx.pos = end;
  p.last_end = static_cast<uint32_t>(end);
  accept_op(p, ";");
  parse_loop_body(p, node, keyword, "for");
  return finish(p, std::move(node));
}

Node parse_for(Parser& p) {
  Token keyword = take(p);
  Nesting nesting(p.lx, keyword.begin);
  Node node = node_at(NodeKind::For, keyword);
  if (!nesting.ok) return node;
  const Token& next = peek(p);
  if (is_op(next, "(") && next.begin + 1 < p.lx.text.size() && p.lx.text[next.begin + 1] == '(') {
    return parse_arith_for(p, std::move(node), keyword);
  }
  if (next.kind != TokenKind::Word) {
    problem(p, keyword.begin, keyword.end, "`for` without a variable name",
            "write `for NAME in WORDS; do ...; done`");
    return node;
  }
  Token name = take(p);
  auto text = plain_text(name.word);
  node.name = text ? std::string(*text) : std::string();
  skip_newlines(p);
  if (accept_word(p, "in")) {
    node.has_in = true;
    while (!stopped(p) && peek(p).kind == TokenKind::Word) node.words.push_back(take(p).word);
  }
  accept_op(p, ";");
  parse_loop_body(p, node, keyword, is_word(keyword, "select") ? "select" : "for");
  return finish(p, std::move(node));
}

// `pattern | pattern )` of one case arm; false when it is malformed.
bool parse_case_patterns(Parser& p, std::vector<Word>& patterns) {
  accept_op(p, "(");
  while (!stopped(p)) {
    const Token& t = peek(p);
    if (t.kind != TokenKind::Word) {
      problem(p, t.begin, t.end, fmt::format("expected a `case` pattern, found {}", describe(p, t)),
              "write arms as `pattern) commands ;;`");
      return false;
    }
    patterns.push_back(take(p).word);
    if (!accept_op(p, "|")) break;
  }
  if (accept_op(p, ")")) return true;
  const Token& t = peek(p);
  problem(p, t.begin, t.end,
          fmt::format("expected `)` after a `case` pattern, found {}", describe(p, t)),
          "write arms as `pattern) commands ;;`");
  return false;
}

Node parse_case(Parser& p) {
  Token keyword = take(p);
  Nesting nesting(p.lx, keyword.begin);
  Node node = node_at(NodeKind::Case, keyword);
  if (!nesting.ok) return node;
  if (peek(p).kind != TokenKind::Word) {
    report_missing(p, keyword, "case", "in");
    return node;
  }
  node.words.push_back(take(p).word);
  skip_newlines(p);
  if (!accept_word(p, "in")) {
    report_missing(p, keyword, "case", "in");
    return finish(p, std::move(node));
  }
  bool closed = false;
  while (!stopped(p)) {
    skip_newlines(p);
    if (accept_word(p, "esac")) {
      closed = true;
      break;
    }
    if (peek(p).kind == TokenKind::End) break;
    std::vector<Word> patterns;
    if (!parse_case_patterns(p, patterns)) return finish(p, std::move(node));
    detail_of(node).patterns.push_back(std::move(patterns));
    node.children.push_back(parse_list(p));
    if (accept_op(p, ";;") || accept_op(p, ";&") || accept_op(p, ";;&")) continue;
    if (!is_word(peek(p), "esac")) break;
  }
  if (!closed) report_missing(p, keyword, "case", "esac");
  return finish(p, std::move(node));
}

Node parse_group(Parser& p) {
  Token open = take(p);
  Nesting nesting(p.lx, open.begin);
  Node node;
  node.kind = NodeKind::Group;
  node.begin = open.begin;
  if (!nesting.ok) return node;
  node.children.push_back(parse_list(p));
  if (!accept_word(p, "}")) report_missing(p, open, "{", "}");
  return finish(p, std::move(node));
}

// `(( expr ))` or a `( list )` subshell.
Node parse_paren(Parser& p) {
  uint32_t open = peek(p).begin;
  Nesting nesting(p.lx, open);
  Node node;
  node.begin = open;
  if (!nesting.ok) return node;
  size_t end = 0;
  if (open + 1 < p.lx.text.size() && p.lx.text[open + 1] == '(' &&
      scan_arithmetic(p.lx.text, open, end) == ArithScan::Closed) {
    p.ahead.reset();
    node.kind = NodeKind::Arith;
    node.words.push_back(lex_arithmetic(p.lx, open + 2, end - 2));
    p.lx.pos = end;
    p.last_end = static_cast<uint32_t>(end);
    return finish(p, std::move(node));
  }
  Token paren = take(p);
  node.kind = NodeKind::Subshell;
  node.children.push_back(parse_list(p));
  if (!accept_op(p, ")")) report_missing(p, paren, "(", ")");
  return finish(p, std::move(node));
}

// `[[ ... ]]`: words and the operators && || ! ( ) < >.
Node parse_cond(Parser& p) {
  Token open = take(p);
  Node node;
  node.kind = NodeKind::Cond;
  node.begin = open.begin;
  while (!stopped(p)) {
    const Token& t = peek(p);
    if (t.kind == TokenKind::Newline) {
      take(p);
      continue;
    }
    if (is_word(t, "]]")) {
      take(p);
      return finish(p, std::move(node));
    }
    if (t.kind == TokenKind::Word) {
      Token word = take(p);
      bool regex = plain_text(word.word) == std::optional<std::string_view>("=~");
      detail_of(node).cond.push_back(CondToken{"", std::move(word.word)});
      if (regex) detail_of(node).cond.push_back(CondToken{"", lex_regex_word(p.lx)});
      continue;
    }
    if (t.kind == TokenKind::Operator && (t.op == "&&" || t.op == "||" || t.op == "(" ||
                                          t.op == ")" || t.op == "<" || t.op == ">")) {
      detail_of(node).cond.push_back(CondToken{take(p).op, {}});
      continue;
    }
    break;
  }
  report_missing(p, open, "[[", "]]");
  node.end = p.last_end;
  return node;
}

Node empty_command(Parser& p) {
  Node node;
  node.kind = NodeKind::Simple;
  node.begin = node.end = peek(p).begin;
  return node;
}

Node parse_command(Parser& p) {
  const Token& t = peek(p);
  if (t.kind == TokenKind::Word) {
    if (t.keyword_length == 0) return parse_simple(p);
    if (is_word(t, "if")) return parse_if(p);
    if (is_word(t, "while") || is_word(t, "until")) return parse_while(p);
    if (is_word(t, "for") || is_word(t, "select")) return parse_for(p);
    if (is_word(t, "case")) return parse_case(p);
    if (is_word(t, "function")) return parse_function_keyword(p);
    if (is_word(t, "{")) return parse_group(p);
    if (is_word(t, "[[")) return parse_cond(p);
    return parse_simple(p);
  }
  if (is_op(t, "(")) return parse_paren(p);
  if (is_redirection(t)) return parse_simple(p);
  Node node = empty_command(p);
  if (is_terminator(t) || t.kind == TokenKind::Newline) {
    problem(p, t.begin, t.end, fmt::format("missing command before {}", describe(p, t)),
            "add the command, or remove the operator before it");
  } else {
    report_unexpected(p, t);
    take(p);
  }
  return node;
}

bool at_pipe(Parser& p) { return !stopped(p) && (is_op(peek(p), "|") || is_op(peek(p), "|&")); }

Node parse_pipeline(Parser& p) {
  uint32_t begin = peek(p).begin;
  bool negated = false;
  while (!stopped(p)) {
    if (accept_word(p, "time")) {
      accept_word(p, "-p");
    } else if (accept_word(p, "!")) {
      negated = !negated;
    } else {
      break;
    }
  }
  Node first = parse_command(p);
  if (!negated && !at_pipe(p)) return first;  // most commands: no wrapper node
  Node node;
  node.kind = NodeKind::Pipeline;
  node.begin = begin;
  node.negated = negated;
  node.children.push_back(std::move(first));
  while (at_pipe(p)) {
    take(p);
    skip_newlines(p);
    node.children.push_back(parse_command(p));
  }
  node.end = p.last_end;
  return node;
}

Node parse_and_or(Parser& p) {
  Node first = parse_pipeline(p);
  if (!is_op(peek(p), "&&") && !is_op(peek(p), "||")) return first;
  Node node;
  node.kind = NodeKind::AndOr;
  node.begin = first.begin;
  node.children.push_back(std::move(first));
  while (!stopped(p) && (is_op(peek(p), "&&") || is_op(peek(p), "||"))) {
    node.flags.push_back(take(p).op == "&&");
    skip_newlines(p);
    node.children.push_back(parse_pipeline(p));
  }
  node.end = p.last_end;
  return node;
}

// An operator where a command should start: `;`, `|`, `&&`, ...
bool is_stray_operator(const Token& t) {
  return t.kind == TokenKind::Operator && t.op != "(" && !is_redirection(t) && !is_terminator(t);
}

// The separator after an and-or list; true for `&`.
bool accept_separator(Parser& p) {
  if (accept_op(p, "&")) return true;
  accept_op(p, ";");
  return false;
}

Node parse_list(Parser& p) {
  Node list;
  list.kind = NodeKind::List;
  list.begin = static_cast<uint32_t>(p.lx.pos);
  while (!stopped(p)) {
    skip_newlines(p);
    const Token& t = peek(p);
    if (is_terminator(t)) break;
    if (is_stray_operator(t)) {
      report_unexpected(p, t);
      take(p);
      continue;
    }
    list.children.push_back(parse_and_or(p));
    list.flags.push_back(accept_separator(p));
  }
  list.end = p.last_end;
  return list;
}

}  // namespace

std::optional<TopLevel> read_top_level(Parser& p) {
  while (!stopped(p)) {
    skip_newlines(p);
    const Token& t = peek(p);
    if (t.kind == TokenKind::End) return std::nullopt;
    if (is_terminator(t) || is_stray_operator(t)) {  // `fi` with no `if`, a stray `;;`, ...
      report_unexpected(p, t);
      take(p);
      continue;
    }
    size_t functions = p.functions;
    TopLevel top;
    top.command = parse_and_or(p);
    top.background = accept_separator(p);
    top.defines_function = p.functions != functions;
    return top;
  }
  return std::nullopt;
}

bool skip_substitution_body(Lexer& lexer) {
  Parser p(lexer);
  while (true) {
    parse_list(p);
    const Token& t = peek(p);
    if (is_op(t, ")")) {
      take(p);
      return true;
    }
    if (t.kind == TokenKind::End) return false;
    report_unexpected(p, t);
    take(p);
  }
}

}  // namespace mblint::shell
