// Private to the shell reader: the syntax tree of a bash script and the
// lexer and parser that build it. Positions in the tree are indices into the
// MappedString being read (the "source"), not file offsets; `source_span`
// maps them back to the file. Reading a whole file and reading the argument
// of `bash -c "..."` therefore share all code.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lint/base/diagnostic.h"
#include "lint/base/mapped_string.h"

namespace mblint::shell {

// ---------------------------------------------------------------- source

struct Source {
  std::string_view text;
  FileId file = kNoFile;
  // The mapping of `text` when it is a value (the argument of `bash -c`);
  // null for a whole file, where character i is byte i.
  const MappedString* mapped = nullptr;
  // Characters map to increasing offsets: a span needs only its two ends.
  bool monotonic = true;
};

Source file_source(FileId file, std::string_view text);
Source code_source(const MappedString& code);

inline uint32_t source_begin(const Source& source, size_t i) {
  return source.mapped ? source.mapped->begins[i] : static_cast<uint32_t>(i);
}
inline uint32_t source_end(const Source& source, size_t i) {
  return source.mapped ? source.mapped->ends[i] : static_cast<uint32_t>(i + 1);
}
// Expansion records of the source itself (only for `bash -c` code).
inline bool has_expansions(const Source& source) {
  return source.mapped && !source.mapped->expansions.empty();
}

// Gives `out` the mapping of source characters [first, first + count).
void map_source(const Source& source, size_t first, size_t count, MappedString& out);

// The file span of source characters [begin, end).
Span source_span(const Source& source, size_t begin, size_t end);

// Syntax problems found while reading. Reading stops (`fatal`) when nesting
// is too deep or too many problems were found, so hostile input stays cheap.
struct Problems {
  std::vector<Diagnostic>& out;
  size_t count = 0;
  bool fatal = false;
};

inline constexpr size_t kMaxProblems = 100;
inline constexpr int kMaxNesting = 200;

// A script-syntax finding. `demote_to` lowers it for a construct bash
// accepts that likely loses part of a command (a stray line continuation):
// the script runs, only not as written.
void report(Problems& problems, Span where, std::string message, std::string help,
            std::optional<Severity> demote_to = std::nullopt);

// ---------------------------------------------------------------- words

struct Word;

enum class PartKind : uint8_t {
  Literal,              // characters after quote removal
  Parameter,            // $NAME, ${NAME...}, $1, $@, ...
  CommandSubstitution,  // $(...), `...`, <(...): never run, always unknown
  Arithmetic,           // $((...))
};

enum class ParamOp : uint8_t {
  None,
  Length,        // ${#NAME}
  Default,       // ${NAME:-word} / ${NAME-word}
  Assign,        // ${NAME:=word} / ${NAME=word}
  Alternative,   // ${NAME:+word} / ${NAME+word}
  Error,         // ${NAME:?word} / ${NAME?word}
  RemovePrefix,  // ${NAME#pattern} and ${NAME##pattern}
  RemoveSuffix,  // ${NAME%pattern} and ${NAME%%pattern}
  Unsupported,   // ${NAME/a/b}, ${NAME:1:2}, ${!NAME}, ...: parsed, unknown
};

enum class Subscript : uint8_t { None, All, Joined, Index };  // [@] [*] [n]

// What only some parts need, kept out of line: a script is mostly plain
// literal words, and a small Part keeps a large script's tree small.
struct PartDetail {
  MappedString mapped;        // Literal that is not verbatim: its characters and mapping
  std::vector<Word> inner;    // Subscript::Index: the index; Arithmetic: the expression
  std::vector<Word> operand;  // the word after a parameter operator, if any
};

struct Part {
  PartKind kind = PartKind::Literal;
  bool quoted = false;  // inside quotes, or escaped
  // Literal that is exactly the source characters [begin, end): no mapping is
  // stored; it is made from the source when the word is expanded.
  bool verbatim = false;
  ParamOp op = ParamOp::None;
  bool colon = false;    // `:-` rather than `-`
  bool longest = false;  // `##` / `%%`
  Subscript subscript = Subscript::None;
  uint32_t begin = 0;  // the part as written, in source indices
  uint32_t end = 0;
  // Literal: the characters after quote removal. Parameter: the name (NAME,
  // digits, or one of @ * # ? $ ! - 0).
  std::string text;
  std::unique_ptr<PartDetail> detail;
};

const std::vector<Word>& inner_words(const Part& part);
const std::vector<Word>& operand_words(const Part& part);
PartDetail& detail_of(Part& part);  // made on first use

struct Word {
  std::vector<Part> parts;
  uint32_t begin = 0;
  uint32_t end = 0;
  bool is_array = false;       // `NAME=( ... )`: parts hold `NAME=`
  std::vector<Word> elements;  // the words between the parentheses
};

// A literal part's characters with their mapping, without the first `skip`.
MappedString literal_mapped(const Source& source, const Part& part, size_t skip = 0);

// A variable name: [A-Za-z_][A-Za-z0-9_]*.
bool is_identifier(std::string_view name);

// The single unquoted literal text of a word ("if", "export"), if it is one.
std::optional<std::string_view> plain_text(const Word& word);

// `NAME=`, `NAME+=`, `NAME[sub]=` at the start of a word.
struct AssignmentTarget {
  std::string name;
  bool append = false;
  std::optional<std::string> subscript;  // the text between [ and ]
  size_t value_offset = 0;               // characters of the first literal part before the value
};

std::optional<AssignmentTarget> assignment_target(const Word& word);

// ---------------------------------------------------------------- commands

enum class NodeKind : uint8_t {
  List,      // children separated by ; & or newlines; flags: run in background
  AndOr,     // children joined by && (flag true) or || (flag false)
  Pipeline,  // children joined by |
  Simple,    // words (leading `assignment_count` are prefix assignments)
  If,        // children: cond, body, cond, body, ..., [else body]
  Case,      // words[0]: subject; patterns[i] and children[i]: the arms
  For,       // name, words (if has_in), children[0]: body
  ArithFor,  // words: init, test, step; children[0]: body
  While,     // children: cond, body
  Until,
  Group,     // { list; }
  Subshell,  // ( list )
  Function,  // name, children[0]: body
  Arith,     // (( words[0] ))
  Cond,      // [[ cond ]]
};

// One token of `[[ ... ]]`: an operator (&& || ! ( ) < >) or a word.
struct CondToken {
  std::string op;
  Word word;
};

// Case patterns and [[ ]] tokens, out of line like PartDetail.
struct NodeDetail {
  std::vector<std::vector<Word>> patterns;
  std::vector<CondToken> cond;
  std::vector<Word> here_string;  // Simple: the word of `<<< word` (the last one counts)
  std::vector<uint32_t> heredocs;  // Simple: the offsets of its `<<` / `<<-` (Lexer::bodies)
};

struct Node {
  NodeKind kind = NodeKind::List;
  bool negated = false;  // Pipeline: `! cmd`
  bool has_else = false;
  bool has_in = false;
  uint32_t assignment_count = 0;
  uint32_t begin = 0;  // the opening keyword or first word
  uint32_t end = 0;
  std::vector<Node> children;
  std::vector<uint8_t> flags;
  std::vector<Word> words;
  std::string name;
  std::unique_ptr<NodeDetail> detail;
};

const NodeDetail& detail_of(const Node& node);
NodeDetail& detail_of(Node& node);  // made on first use

// ---------------------------------------------------------------- lexer

enum class TokenKind : uint8_t { Word, Operator, Newline, End };

struct Token {
  TokenKind kind = TokenKind::End;
  std::string op;  // Operator: ";", "&&", "(", ">>", "<<", ... (no fd digits)
  Word word;
  uint32_t begin = 0;
  uint32_t end = 0;
  // A word that could be a reserved word (plain, at most 8 characters): its
  // text, so the parser's many keyword checks are cheap.
  std::array<char, 8> keyword{};
  uint8_t keyword_length = 0;
};

// A here-document's lines between its `<<` line and its delimiter.
struct HeredocBody {
  uint32_t begin = 0;
  uint32_t end = 0;
  bool quoted = false;
};

struct PendingHeredoc {
  std::string delimiter;
  bool strip_tabs = false;  // <<-
  bool quoted = false;      // <<'EOF' / <<"EOF": the body is not expanded
  uint32_t op_begin = 0;    // the `<<` operator, where a missing end is reported
  uint32_t op_end = 0;
};

struct Lexer {
  Lexer(const Source& source_, std::string_view text_, Problems& problems_)
      : source(source_), text(text_), problems(problems_) {}

  const Source& source;
  std::string_view text;
  Problems& problems;
  size_t pos = 0;
  int depth = 0;  // nesting of $( ${ and compound commands
  std::vector<PendingHeredoc> heredocs;
  // The bodies read so far, by the offset of their `<<` (a command that
  // feeds one to a shell or sbatch runs it).
  std::map<uint32_t, HeredocBody> bodies;
  // An unterminated quote, expansion or heredoc ran to the end of the input:
  // constructs still open there are its consequence and are not reported.
  bool swallowed = false;
};

Token next_token(Lexer& lexer);

// The word after `=~` inside [[ ]]: parentheses and `|` belong to the regex.
Word lex_regex_word(Lexer& lexer);

// For `((` at `open`: Closed with `end` just past the matching `))`;
// NotArithmetic when the parentheses close one at a time (`((a) | b)` is a
// nested subshell); Unterminated when the input ends first.
enum class ArithScan : uint8_t { Closed, NotArithmetic, Unterminated };
ArithScan scan_arithmetic(std::string_view text, size_t open, size_t& end);

// Source [begin, end) read as the body of an arithmetic expression.
Word lex_arithmetic(Lexer& lexer, size_t begin, size_t end);

// Register a heredoc; its body is skipped at the next newline.
void add_heredoc(Lexer& lexer, const Word& delimiter, bool strip_tabs, uint32_t op_begin,
                 uint32_t op_end);

// Nesting guard for recursive constructs: false (and reading stops) past
// kMaxNesting.
bool enter_nesting(Lexer& lexer, size_t at);
inline void leave_nesting(Lexer& lexer) { --lexer.depth; }

// ---------------------------------------------------------------- parser

struct Parser {
  explicit Parser(Lexer& lexer) : lx(lexer) {}

  Lexer& lx;
  std::optional<Token> ahead;  // one token of lookahead
  uint32_t last_end = 0;       // end of the last token taken
  size_t functions = 0;        // function definitions read so far
};

// One top-level command (an and-or list with its `;` or `&`).
struct TopLevel {
  Node command;
  bool background = false;
  // It defines a function: the walker keeps pointers into it, so it must
  // outlive the walk.
  bool defines_function = false;
};

// The next top-level command, or nullopt at the end of the input. Reading a
// script one command at a time lets each be walked, then freed.
std::optional<TopLevel> read_top_level(Parser& parser);

// Called by the lexer after `$(` or `<(`: reads commands up to and including
// the closing `)`. False when the input ended first.
bool skip_substitution_body(Lexer& lexer);

}  // namespace mblint::shell
