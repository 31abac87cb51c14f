// `$(...)` is never run. Besides the script-directory idioms
// (shell_source.cpp), a few commands print a pure function of their
// arguments, and a careful reader evaluates them when the arguments are
// known: `basename PATH [SUFFIX]`, `dirname PATH`, `realpath PATH` /
// `readlink -f PATH` of an absolute path (normalized lexically: the file is
// then looked up by that path), and `echo TEXT | sed 's#A#B#'` where A and B
// are plain text (no regular-expression characters). Anything else stays
// unknown.
#include <filesystem>

#include "lint/load/shell/shell_walk.h"

namespace mblint::shell {

namespace {

// The longest command substitution read this way; longer ones are left
// unknown without being parsed a second time.
constexpr size_t kMaxIdiomCode = 4096;

bool names_script(std::string_view word) {
  return word == "$0" || word == "${0}" || word == "${BASH_SOURCE[0]}" || word == "$BASH_SOURCE" ||
         word == "${BASH_SOURCE}";
}

// The path `$0` names (the script run: a child's own file) or
// `${BASH_SOURCE[0]}` (the file being read); nullopt when not known.
std::optional<std::string> script_path(const Walker& w, std::string_view written) {
  bool bash_source = written.find("BASH_SOURCE") != std::string_view::npos;
  const std::string& path = bash_source ? (w.paths.empty() ? std::string() : w.paths.back()) : w.dollar_zero;
  if (path.empty() || w.paths.size() != w.walking.size()) return std::nullopt;
  return path;
}

// The words of a simple command, each fully known; nullopt otherwise.
std::optional<std::vector<std::string>> known_words(Walker& w, const Node& node) {
  if (node.kind != NodeKind::Simple || node.assignment_count != 0 || node.words.empty()) return std::nullopt;
  std::vector<std::string> words;
  for (const Word& word : node.words) {
    std::string_view written = w.source.text.substr(word.begin, word.end - word.begin);
    std::string_view unquoted = written;
    if (unquoted.size() >= 2 && unquoted.front() == '"' && unquoted.back() == '"')
      unquoted = unquoted.substr(1, unquoted.size() - 2);
    if (names_script(unquoted)) {
      std::optional<std::string> path = script_path(w, unquoted);
      if (!path) return std::nullopt;
      words.push_back(*path);
      continue;
    }
    for (const MappedString& field : expand_fields(w, word)) {
      if (!fully_known(field)) return std::nullopt;
      words.push_back(field.text);
    }
  }
  return words;
}

std::string strip_trailing_slashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

std::optional<std::string> basename_of(const std::vector<std::string>& args) {
  size_t i = 1;
  if (i < args.size() && args[i] == "--") ++i;
  if (args.size() - i != 1 && args.size() - i != 2) return std::nullopt;
  std::string path = strip_trailing_slashes(args[i]);
  if (path.empty()) return std::nullopt;
  std::string name = path == "/" ? path : path.substr(path.rfind('/') + 1);
  if (args.size() - i == 2) {
    const std::string& suffix = args[i + 1];
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      name.resize(name.size() - suffix.size());
  }
  return name;
}

std::optional<std::string> dirname_of(const std::vector<std::string>& args) {
  size_t i = 1;
  if (i < args.size() && args[i] == "--") ++i;
  if (args.size() - i != 1) return std::nullopt;
  std::string path = strip_trailing_slashes(args[i]);
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return std::string(".");
  if (slash == 0) return std::string("/");
  return strip_trailing_slashes(path.substr(0, slash));
}

// realpath / readlink -f of an absolute path: `..` and `.` removed lexically.
// A relative path depends on the working directory: unknown.
std::optional<std::string> real_path_of(const std::vector<std::string>& args) {
  std::vector<std::string> operands;
  bool follow = args[0] == "realpath";
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-f" || a == "-e" || a == "-m" || a == "--canonicalize" || a == "--canonicalize-existing") {
      follow = true;
    } else if (a == "-s" || a == "-q" || a == "--") {
      continue;
    } else if (!a.empty() && a[0] == '-') {
      return std::nullopt;
    } else {
      operands.push_back(a);
    }
  }
  if (!follow || operands.size() != 1 || operands[0].empty() || operands[0][0] != '/') return std::nullopt;
  std::string normal = std::filesystem::path(operands[0]).lexically_normal().string();
  return strip_trailing_slashes(normal);
}

// `s<d>A<d>B<d>[g]` with A and B plain text.
std::optional<std::string> sed_substitute(std::string text, std::string_view script) {
  if (script.size() < 4 || script[0] != 's') return std::nullopt;
  char d = script[1];
  if (d == '\\' || d == '\n' || d == ' ') return std::nullopt;
  size_t second = script.find(d, 2);
  if (second == std::string_view::npos) return std::nullopt;
  size_t third = script.find(d, second + 1);
  if (third == std::string_view::npos) return std::nullopt;
  std::string_view from = script.substr(2, second - 2);
  std::string_view to = script.substr(second + 1, third - second - 1);
  std::string_view flags = script.substr(third + 1);
  if (from.empty() || (flags != "" && flags != "g")) return std::nullopt;
  if (from.find_first_of(".[]*^$\\+?(){}|") != std::string_view::npos) return std::nullopt;
  if (to.find_first_of("&\\") != std::string_view::npos) return std::nullopt;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
    if (flags != "g") break;
  }
  return text;
}

// `echo TEXT | sed [-e] SCRIPT`: echo's output without its newline.
std::optional<std::string> echo_sed(Walker& w, const Node& node) {
  if (node.kind != NodeKind::Pipeline || node.negated || node.children.size() != 2) return std::nullopt;
  auto echo = known_words(w, node.children[0]);
  auto sed = known_words(w, node.children[1]);
  if (!echo || !sed || (*echo)[0] != "echo" || (*sed)[0] != "sed") return std::nullopt;
  std::vector<std::string> text(echo->begin() + 1, echo->end());
  if (!text.empty() && (text[0] == "-e" || text[0] == "-n" || text[0] == "-E")) return std::nullopt;
  std::string line;
  for (size_t i = 0; i < text.size(); ++i) line += (i ? " " : "") + text[i];
  size_t s = 1;
  if (s < sed->size() && (*sed)[s] == "-e") ++s;
  if (sed->size() != s + 1) return std::nullopt;
  return sed_substitute(line, (*sed)[s]);
}

}  // namespace

std::optional<std::string> pure_substitution(Walker& w, uint32_t begin, uint32_t end) {
  std::string_view code = w.source.text.substr(begin, end - begin);
  if (!code.starts_with("$(") || code.starts_with("$((") || !code.ends_with(")") || code.size() > kMaxIdiomCode)
    return std::nullopt;
  std::vector<Diagnostic> ignored;  // reported when the script itself was read
  Problems problems{ignored, 0, false};
  Lexer lexer(w.source, w.source.text.substr(0, end - 1), problems);
  lexer.pos = begin + 2;
  Parser parser(lexer);
  std::optional<TopLevel> top = read_top_level(parser);
  if (!top || top->background || top->defines_function || !ignored.empty()) return std::nullopt;
  if (read_top_level(parser) || !ignored.empty()) return std::nullopt;  // one command only
  const Node& node = top->command;
  if (node.kind == NodeKind::Pipeline) return echo_sed(w, node);
  std::optional<std::vector<std::string>> args = known_words(w, node);
  if (!args) return std::nullopt;
  const std::string& command = (*args)[0];
  if (command == "basename") return basename_of(*args);
  if (command == "dirname") return dirname_of(*args);
  if (command == "realpath" || command == "readlink") return real_path_of(*args);
  return std::nullopt;
}

}  // namespace mblint::shell
