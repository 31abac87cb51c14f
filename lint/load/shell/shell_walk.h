// Private to the shell reader: the state of a walk over the syntax tree and
// the pieces of it (variables, word expansion, conditions, simple commands)
// that live in separate files.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "lint/load/shell/shell.h"
#include "lint/load/shell/shell_syntax.h"

namespace mblint::shell {

// ---------------------------------------------------------------- state

enum class Presence : uint8_t {
  Environment,  // never given a value by the script: whatever the launcher's environment holds
  Unset,        // `unset X`, or `local X` without a value
  Set,
};

struct VarState {
  ShellVariable var;
  Presence presence = Presence::Set;
  // Set, but to a value that cannot be known at all (branches that disagree,
  // a loop variable, `read X`): it expands to the expression as written.
  bool opaque = false;
  // Branches mblint cannot decide gave it different values that it knows:
  // each of them (at most kMaxAlternatives). A command that reads it is
  // walked once per value (shell_fork.cpp). The state itself is opaque after
  // a join of branches; after an assignment that read such variables, it is
  // the value the assignment makes of them (unknown where they are).
  std::shared_ptr<const std::vector<VarState>> alternatives;
};

inline constexpr size_t kMaxAlternatives = 8;

using Vars = std::map<std::string, VarState, std::less<>>;
// Saved states by name; nullopt: the name was not in Vars at all.
using Saved = std::map<std::string, std::optional<VarState>, std::less<>>;

enum class Flow : uint8_t { Normal, Return, Exit };

// Unknown: an ordinary command's exit status (assumed to succeed for `&&`).
// Undecided: a test or condition mblint could not evaluate.
enum class Status : uint8_t { Success, Failure, Unknown, Undecided };

struct Outcome {
  Flow flow = Flow::Normal;
  Status status = Status::Success;
};

// A branch walked under an undo log: how it ended and what it changed.
struct Branch {
  Flow flow = Flow::Normal;
  Status status = Status::Success;
  Saved changed;  // the branch's final state of every variable it touched
};

// Work limit on characters produced by expansion and copied into commands:
// keeps `X="$X$X"` loops and huge environments bounded in time and memory
// (a real launch script produces well under a million).
inline constexpr size_t kWorkBudget = size_t{1} << 25;
// walk_node recursion, nesting and function calls together: keeps the C++
// stack bounded (the parser already stops at 200 levels of nesting).
inline constexpr size_t kMaxWalkDepth = 600;

// A function and the code it was defined in (the script, a sourced file, an
// eval'd string): its words are positions in that source.
struct Function {
  const Node* body = nullptr;
  Source source;
};

struct Walker {
  Walker(Source source_, const ShellLimits& limits_, ShellScript& out_)
      : source(source_), limits(limits_), out(out_) {}

  Source source;
  const ShellLimits& limits;
  ShellScript& out;
  Vars vars;
  // exported_environment() of `vars` as last built: every command recorded
  // until the next change shares it (forget_exported() after a change).
  std::shared_ptr<const ShellEnvironment> exported;
  std::vector<Saved> undo;    // per open branch: states before its first change
  std::vector<Saved> locals;  // per function call: states `local` hid
  std::map<std::string, Function, std::less<>> functions;
  // Inside a function call: its arguments. At top level: nullopt, the
  // script's own arguments, which are unknown.
  std::optional<std::vector<MappedString>> positional;
  size_t call_depth = 0;
  size_t walk_depth = 0;
  size_t simple_commands = 0;  // commands recorded, against limits.max_commands
  size_t work = 0;             // characters produced, against kWorkBudget
  bool stopped = false;        // a limit was hit: nothing more is walked
  // A `source` mblint could not read ran before: it may have set any
  // variable (an append to one the script never set then extends its value).
  bool after_unfollowed_source = false;
  std::set<std::string, std::less<>> reported;
  // Following `source`, `bash FILE` and `eval` (shell_source.cpp).
  const ShellFiles* files = nullptr;
  std::vector<std::string> directories;  // of the files being walked: the script first
  std::vector<FileId> walking;           // files being walked, outermost first
  std::vector<std::string> paths;        // their absolute paths ("" when not known)
  std::string dollar_zero;               // `$0` of the shell being walked ("" when not known)
  size_t follow_depth = 0;
  // While a child runs under a launcher (`srun ... bash train.sh`): the
  // launcher's words, recorded with every command of the child.
  std::vector<MappedString> launcher;
  // The here-document bodies of the text being walked (its Lexer's).
  const std::map<uint32_t, HeredocBody>* bodies = nullptr;
  size_t followed_bytes = 0;
  size_t follows = 0;  // files and code strings followed, against limits.max_follows
  std::deque<std::string> texts;     // followed files, alive as long as the walk
  std::deque<MappedString> codes;    // eval'd strings
  std::deque<Node> kept;             // commands that define functions
  // A command that reads variables with alternatives is walked once per
  // combination of their values (shell_fork.cpp): the fork being walked
  // (0: none) and its arm, stamped on every command recorded.
  uint32_t fork_group = 0;
  uint32_t fork_arm = 0;
  // Loops over known lists are walked once per value (shell_walk.cpp).
  size_t unrolled = 0;  // iterations walked so, against kMaxUnrolledTotal
  bool jumped = false;  // a `break` (or `continue N`) was reached in the loop being unrolled
};

// ---------------------------------------------------------------- variables

const VarState* find_var(const Walker& w, std::string_view name);
void set_var(Walker& w, std::string_view name, std::optional<VarState> state);
VarState known_scalar(MappedString value, Span definition, bool exported);
VarState opaque_var(Span definition, bool exported);
bool is_exported(const Walker& w, std::string_view name);

void push_branch(Walker& w);
Branch pop_branch(Walker& w, Outcome outcome);
// Joins branches of which one ran (plus, with `fallthrough`, the path where
// none did): variables they disagree on become unknown, keeping the values
// they give as alternatives unless the branch is a loop body (which may run
// any number of times). The flow is Exit when every path exits, Return when
// every path returns.
Flow merge_branches(Walker& w, const std::vector<Branch>& branches, bool fallthrough, bool loop = false);

void load_initial(Walker& w, const ShellEnvironment& initial);
ShellEnvironment exported_environment(const Walker& w);
// The exported environment as a shared copy, built again only after `vars`
// changed; nullptr when building it would pass the work budget.
std::shared_ptr<const ShellEnvironment> shared_exported_environment(Walker& w, Span where);
// Before `name` changes to `next` (nullptr: removed): only a change to an
// exported variable changes the exported environment.
void forget_exported(Walker& w, std::string_view name, const VarState* next);
size_t environment_size(const ShellEnvironment& environment);
ShellEnvironment final_environment(const Walker& w);

// A limit problem, reported once per `key`; `stop` ends the walk.
void limit_problem(Walker& w, const std::string& key, Span where, std::string message,
                   std::string help, bool stop);
// Counts produced characters; false (and the walk stops) past kWorkBudget.
bool charge(Walker& w, size_t characters, Span where);

// ---------------------------------------------------------------- expansion

// A stretch of an expanded word and how the rest of expansion treats it.
struct Piece {
  MappedString text;
  bool split = false;        // unquoted expansion output: split on blanks
  bool glob = false;         // unquoted: active in patterns
  bool quoted = false;       // makes a word even when empty ("")
  bool field_break = false;  // between "${A[@]}" elements
  // Valid when `text` keeps the source mapping of the words it came from (an
  // array element, the words of an unquoted `$CMD`): the `${A[@]}` / `$CMD`
  // that expanded it. A word made of such a piece alone is located where it
  // was written; joined with other text it is located at this expression.
  Span in_place;
};

// `skip`: characters of a leading literal part that are not part of the
// value (the `NAME=` of an assignment word).
std::vector<Piece> expand_parts(Walker& w, const std::vector<Part>& parts, bool operand = false,
                                size_t skip = 0);
std::vector<MappedString> expand_fields(Walker& w, const Word& word);
void expand_fields_into(Walker& w, const Word& word, std::vector<MappedString>& fields);
// Without word splitting: an assignment's value, a [[ ]] operand.
MappedString expand_string(Walker& w, const std::vector<Part>& parts, size_t skip = 0);
MappedString expand_word_string(Walker& w, const Word& word);
// `X="$X more"` (parts: `X=`, `$X`, the rest) with X's `old` value taken
// over, not copied: a script that builds a long list one line at a time
// stays linear. The same result as expand_string of the parts.
MappedString expand_self_append(Walker& w, const std::vector<Part>& parts, MappedString old, Span definition);

struct Pattern {
  MappedString text;
  std::vector<bool> active;  // per character: unquoted, so `*`, `?` and `[` there are special
};
Pattern expand_pattern(Walker& w, const Word& word);

// True when no part of the text is unknown.
bool fully_known(const MappedString& text);

// `text` with every character mapped to `span` (values made by mblint: the
// result of $(( )), an unknown expression as written).
MappedString uniform_text(std::string_view text, Span span);

// Arithmetic on expanded text; the variables it reads are added to `used`.
std::optional<int64_t> evaluate_arith_text(Walker& w, const MappedString& text,
                                           std::vector<Expansion>* used);
// Arithmetic on a word; the names it assigns are added to `assigned`.
std::optional<int64_t> evaluate_arith_word(Walker& w, const Word& word,
                                           std::vector<std::string>* assigned = nullptr);

// ---------------------------------------------------------------- conditions

Status evaluate_test(const std::vector<MappedString>& args);  // `[`/`test` operands
Status evaluate_cond(Walker& w, const std::vector<CondToken>& tokens);
Status match_pattern(const MappedString& subject, const Pattern& pattern);
bool glob_match(std::string_view text, const Pattern& pattern);

// ---------------------------------------------------------------- walking

Outcome walk_node(Walker& w, const Node& node, bool certain);
Outcome walk_simple(Walker& w, const Node& node, bool certain);
// walk_simple without the fork: the command as its words expand now.
Outcome walk_simple_once(Walker& w, const Node& node, bool certain);
// A command that reads variables with alternatives, walked once per
// combination as the arms of an `if` mblint cannot decide, of which one
// surely runs. nullopt: the command reads none (or too many combinations).
std::optional<Outcome> walk_forked(Walker& w, const Node& node, bool certain);
// One branch under an undo log (the changes are captured, then undone).
Branch run_branch(Walker& w, const Node& node);
// Reads and walks `source` (a followed file, an eval'd string) in the
// current shell, one top-level command at a time.
Outcome walk_text(Walker& w, const Source& source, bool certain);

// ---------------------------------------------------------------- following

// `source FILE` / `. FILE`, `bash|sh FILE`, `eval ...`: follows the command
// recorded at w.out.commands[index] when it is one of these. nullopt: not one.
std::optional<Outcome> follow_command(Walker& w, size_t index,
                                      const std::vector<std::pair<std::string, VarState>>& prefix,
                                      bool certain);
// `sbatch <<EOF`, `bash <<'EOF'`: the here-document fed to the command
// recorded at w.out.commands[index] is walked as the script it runs.
// nullopt: not one.
std::optional<Outcome> follow_heredoc(Walker& w, const Node& node, size_t index,
                                      const std::vector<std::pair<std::string, VarState>>& prefix,
                                      bool certain);
// `$(dirname "$0")`, `$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)`: the
// directory of the script (or of the file being walked), when the text of a
// command substitution is one of these idioms.
std::optional<std::string> script_directory_idiom(const Walker& w, std::string_view code);
// The output of the command substitution at source [begin, end) when it is
// a pure function of known arguments (`basename`, `dirname`, `realpath` of
// an absolute path, `echo TEXT | sed 's#A#B#'`; shell_substitution.cpp).
std::optional<std::string> pure_substitution(Walker& w, uint32_t begin, uint32_t end);

}  // namespace mblint::shell
