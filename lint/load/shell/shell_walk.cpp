// The walk over a parsed script: lists, pipelines, && / ||, if, case, loops,
// subshells and function definitions, with the rules for what is certain:
// a decidable condition takes one branch; an undecidable one walks every
// branch as uncertain and afterwards forgets the variables they disagree on.
// Loop bodies are walked once. Nothing is ever executed.
#include "lint/base/input_rules.h"
#include "lint/load/shell/shell_walk.h"

#include <algorithm>
#include <deque>
#include <exception>
#include <utility>

namespace mblint::shell {

namespace {

constexpr size_t kMaxScriptBytes = size_t{8} << 20;
// Loop iterations walked one by one in a script, all loops together: nested
// loops over long lists fall back to one uncertain walk of the body.
constexpr size_t kMaxUnrolledTotal = 256;

Status negate(Status s) {
  if (s == Status::Success) return Status::Failure;
  if (s == Status::Failure) return Status::Success;
  return s;
}

Span node_span(const Walker& w, const Node& node) {
  return source_span(w.source, node.begin, std::max(node.begin + 1, node.end));
}

// One command of a list; `cmd &` runs in a subshell of its own.
Outcome walk_item(Walker& w, const Node& node, bool background, bool certain) {
  if (!background) return walk_node(w, node, certain);
  push_branch(w);
  walk_node(w, node, certain);
  pop_branch(w, {});
  return {Flow::Normal, Status::Success};
}

Outcome walk_list(Walker& w, const Node& node, bool certain) {
  Outcome last;
  for (size_t i = 0; i < node.children.size() && !w.stopped; ++i) {
    Outcome outcome = walk_item(w, node.children[i], node.flags[i] != 0, certain);
    if (outcome.flow != Flow::Normal) return outcome;
    last = outcome;
  }
  return last;
}

Outcome walk_pipeline(Walker& w, const Node& node, bool certain) {
  Outcome outcome;
  if (node.children.size() == 1) {
    outcome = walk_node(w, node.children[0], certain);
  } else {
    for (const Node& child : node.children) {  // each element runs in a subshell
      push_branch(w);
      outcome.status = walk_node(w, child, certain).status;
      pop_branch(w, {});
    }
  }
  if (node.negated) outcome.status = negate(outcome.status);
  return outcome;
}

// Walks `node` as one of several possible paths, then joins it with the path
// that skips it.
Outcome walk_maybe(Walker& w, const Node& node) {
  std::vector<Branch> branches;
  branches.push_back(run_branch(w, node));
  Status status = branches[0].status;
  merge_branches(w, branches, true);
  return {Flow::Normal, status};
}

// `a && b || c`: b runs when a succeeds (assumed for ordinary commands),
// c only when what precedes fails, which is rarely known.
Outcome walk_and_or(Walker& w, const Node& node, bool certain) {
  Outcome outcome = walk_node(w, node.children[0], certain);
  if (outcome.flow != Flow::Normal) return outcome;
  Status status = outcome.status;
  for (size_t i = 1; i < node.children.size() && !w.stopped; ++i) {
    const Node& next = node.children[i];
    bool is_and = node.flags[i - 1];
    if (status == (is_and ? Status::Failure : Status::Success)) continue;  // skipped
    bool runs = is_and ? status != Status::Undecided : status == Status::Failure;
    if (runs) {
      outcome = walk_node(w, next, certain);
      if (outcome.flow != Flow::Normal) return outcome;
      status = outcome.status;
      continue;
    }
    Status branch = walk_maybe(w, next).status;
    if (is_and)
      status = branch == Status::Failure ? Status::Failure : Status::Undecided;
    else
      status = branch == Status::Success ? Status::Success : Status::Undecided;
  }
  return {Flow::Normal, status};
}

// A node that is one command: the Simple or Cond node inside a one-element
// list or pipeline.
const Node* single_command(const Node& node) {
  const Node* at = &node;
  while ((at->kind == NodeKind::List || (at->kind == NodeKind::Pipeline && !at->negated) ||
          at->kind == NodeKind::AndOr) &&
         at->children.size() == 1) {
    at = &at->children[0];
  }
  return at->kind == NodeKind::Simple || at->kind == NodeKind::Cond ? at : nullptr;
}

// The variable a word is exactly (`"$V"`, `$V`, `${V}`), if it is one.
std::optional<std::string> variable_word(const Word& word) {
  if (word.parts.size() != 1 || word.parts[0].kind != PartKind::Parameter) return std::nullopt;
  const Part& part = word.parts[0];
  if (part.op != ParamOp::None || part.subscript != Subscript::None || !is_identifier(part.text))
    return std::nullopt;
  return part.text;
}

// `[ -z "$V" ]` / `[[ -z $V ]]`: the variable whose emptiness is tested.
std::optional<std::string> emptiness_test(const Node& condition) {
  const Node* command = single_command(condition);
  if (!command) return std::nullopt;
  if (command->kind == NodeKind::Cond) {
    const auto& tokens = detail_of(*command).cond;
    if (tokens.size() != 2 || !tokens[0].op.empty() || !tokens[1].op.empty()) return std::nullopt;
    if (plain_text(tokens[0].word) != "-z") return std::nullopt;
    return variable_word(tokens[1].word);
  }
  const auto& words = command->words;
  if (command->assignment_count != 0 || words.size() != 4) return std::nullopt;
  if (plain_text(words[0]) != "[" || plain_text(words[1]) != "-z" || plain_text(words[3]) != "]")
    return std::nullopt;
  return variable_word(words[2]);
}

// A body whose last command is `exit N` with N a literal other than 0.
bool ends_in_error_exit(const Node& body) {
  const Node* last = &body;
  while (last->kind == NodeKind::List && !last->children.empty()) last = &last->children.back();
  if (last->kind != NodeKind::Simple || last->words.size() != 2 || last->assignment_count != 0) return false;
  std::optional<std::string_view> status = plain_text(last->words[1]);
  return plain_text(last->words[0]) == "exit" && status && !status->empty() &&
         status->find_first_not_of("0123456789") == std::string_view::npos &&
         status->find_first_not_of('0') != std::string_view::npos;
}

// A template's guard on a placeholder: `CONTAINER_IMAGE=""` written in the
// script for the user to fill in, then `if [ -z "$CONTAINER_IMAGE" ]; then
// echo ...; exit 1; fi`. The script is meant to run once the placeholder is
// filled, so the guard is read as not taken (the value itself stays empty).
bool placeholder_guard(const Walker& w, const Node& condition, const Node& body) {
  std::optional<std::string> name = emptiness_test(condition);
  if (!name || !ends_in_error_exit(body)) return false;
  const VarState* state = find_var(w, *name);
  return state && state->presence == Presence::Set && !state->opaque && state->var.known &&
         state->var.value.text.empty() && state->var.definition.valid();
}

// Whether `body` gives `name` a value in one of its own commands (`X=1`,
// `export X=1`), not only in something it calls.
bool assigns(const Node& body, std::string_view name) {
  auto gives = [&](const Node& item) {
    const Node* command = single_command(item);
    if (!command || command->kind != NodeKind::Simple) return false;
    size_t first = 0;  // `X=1` alone, or `export X=1`
    if (command->assignment_count != command->words.size()) {
      if (command->assignment_count != 0 || plain_text(command->words[0]) != "export") return false;
      first = 1;
    }
    for (size_t i = first; i < command->words.size(); ++i) {
      std::optional<AssignmentTarget> target = assignment_target(command->words[i]);
      if (target && target->name == name && !target->subscript && !target->append) return true;
    }
    return false;
  };
  if (body.kind != NodeKind::List) return gives(body);
  return std::any_of(body.children.begin(), body.children.end(), gives);
}

// `if [ -z "$TP" ]; then TP=1; fi` on a variable the script never set: the
// same default as `${TP:=1}`, which mblint reads as the value when nothing
// in the script gives one (the environment is not assumed to hold it).
bool environment_default(const Walker& w, const Node& condition, const Node& body) {
  std::optional<std::string> name = emptiness_test(condition);
  if (!name || !assigns(body, *name)) return false;
  const VarState* state = find_var(w, *name);
  return !state || state->presence == Presence::Environment;
}

// if / elif / else: conditions in order until one is known true; every arm
// after an undecidable condition is one possible path.
Outcome walk_if(Walker& w, const Node& node, bool certain) {
  std::vector<Branch> branches;
  bool uncertain = false;
  bool taken = false;
  size_t arms = node.children.size() / 2;
  if (arms > 0 && environment_default(w, node.children[0], node.children[1]))
    return walk_node(w, node.children[1], certain);
  for (size_t arm = 0; arm < arms && !w.stopped; ++arm) {
    if (placeholder_guard(w, node.children[2 * arm], node.children[2 * arm + 1])) continue;
    Outcome condition = walk_node(w, node.children[2 * arm], certain && !uncertain);
    if (condition.flow != Flow::Normal && !uncertain) return condition;
    const Node& body = node.children[2 * arm + 1];
    if (condition.status == Status::Failure) continue;
    if (condition.status == Status::Success && !uncertain) return walk_node(w, body, certain);
    branches.push_back(run_branch(w, body));
    if (condition.status == Status::Success) {
      taken = true;
      break;
    }
    uncertain = true;
  }
  bool has_else = node.has_else && node.children.size() % 2 == 1;
  if (!taken && has_else) {
    if (!uncertain) return walk_node(w, node.children.back(), certain);
    branches.push_back(run_branch(w, node.children.back()));
    taken = true;
  }
  if (!uncertain) return {Flow::Normal, Status::Success};  // no arm ran
  return {merge_branches(w, branches, !taken), Status::Undecided};
}

Outcome walk_case(Walker& w, const Node& node, bool certain) {
  if (node.words.empty()) return {};
  MappedString subject = expand_word_string(w, node.words[0]);
  std::vector<Branch> branches;
  bool uncertain = false;
  bool taken = false;
  const auto& patterns = detail_of(node).patterns;
  for (size_t arm = 0; arm < node.children.size() && arm < patterns.size(); ++arm) {
    Status match = Status::Failure;
    for (const Word& pattern : patterns[arm]) {
      Status result = match_pattern(subject, expand_pattern(w, pattern));
      if (result == Status::Success) {
        match = result;
        break;
      }
      if (result == Status::Undecided) match = result;
    }
    if (match == Status::Failure) continue;
    if (match == Status::Success && !uncertain) return walk_node(w, node.children[arm], certain);
    branches.push_back(run_branch(w, node.children[arm]));
    if (match == Status::Success) {
      taken = true;
      break;
    }
    uncertain = true;
  }
  if (!uncertain) return {Flow::Normal, Status::Success};
  return {merge_branches(w, branches, !taken), Status::Undecided};
}

// A loop body may run any number of times: walked once, uncertain, then
// every variable it changed becomes unknown.
Outcome walk_loop_body(Walker& w, const Node& body, const std::string& variable, Span header) {
  push_branch(w);
  if (!variable.empty()) set_var(w, variable, opaque_var(header, is_exported(w, variable)));
  Outcome outcome = walk_node(w, body, false);
  Branch branch = pop_branch(w, outcome);
  branch.flow = Flow::Normal;  // an exit inside may or may not be reached
  merge_branches(w, {branch}, true, true);
  return {Flow::Normal, Status::Unknown};
}

// `for x in a b c` over values mblint knows: each iteration is walked with
// its value, so a launch in the body is one job per value. After a `break`
// or `continue` (which mblint does not place) the later iterations are
// uncertain.
Outcome walk_unrolled(Walker& w, const Node& node, const std::vector<MappedString>& items, bool certain,
                      Span header) {
  bool outer_jumped = w.jumped;
  w.jumped = false;
  w.unrolled += items.size();
  Outcome outcome{Flow::Normal, Status::Success};
  for (const MappedString& item : items) {
    if (w.stopped) break;
    set_var(w, node.name, known_scalar(item, header, is_exported(w, node.name)));
    outcome = walk_node(w, node.children[0], certain && !w.jumped);
    if (outcome.flow != Flow::Normal) break;
  }
  w.jumped = outer_jumped;
  return outcome;
}

Outcome walk_for(Walker& w, const Node& node, bool certain) {
  if (node.children.empty()) return {};
  uint32_t header_end = node.words.empty() ? node.begin + 3 : node.words.back().end;
  Span header = source_span(w.source, node.begin, header_end);
  if (node.has_in) {
    bool known = true;
    std::vector<MappedString> items;
    for (const Word& word : node.words) {
      for (MappedString& item : expand_fields(w, word)) {
        known = known && fully_known(item);
        items.push_back(std::move(item));
      }
    }
    if (known && items.empty()) return {Flow::Normal, Status::Success};  // runs zero times
    if (known && is_identifier(node.name) && w.unrolled + items.size() <= kMaxUnrolledTotal)
      return walk_unrolled(w, node, items, certain, header);
  }
  return walk_loop_body(w, node.children[0], node.name, header);
}

Outcome walk_arith_for(Walker& w, const Node& node) {
  if (node.children.empty() || node.words.size() < 3) return {};
  evaluate_arith_word(w, node.words[0]);
  bool no_test = node.words[1].parts.empty();
  std::optional<int64_t> test =
      no_test ? std::optional<int64_t>(1) : evaluate_arith_word(w, node.words[1]);
  if (test && *test == 0) return {Flow::Normal, Status::Success};
  push_branch(w);
  std::vector<std::string> stepped;
  evaluate_arith_word(w, node.words[2], &stepped);
  Span header = source_span(w.source, node.words[0].begin, node.words[2].end);
  for (const std::string& name : stepped)
    set_var(w, name, opaque_var(header, is_exported(w, name)));
  Outcome outcome = walk_node(w, node.children[0], false);
  Branch branch = pop_branch(w, outcome);
  branch.flow = Flow::Normal;
  merge_branches(w, {branch}, true, true);
  return {Flow::Normal, Status::Unknown};
}

Outcome walk_while(Walker& w, const Node& node, bool certain) {
  if (node.children.size() < 2) return {};
  Outcome condition = walk_node(w, node.children[0], certain);  // runs at least once
  if (condition.flow != Flow::Normal) return condition;
  Status stop = node.kind == NodeKind::While ? Status::Failure : Status::Success;
  if (condition.status == stop) return {Flow::Normal, Status::Success};
  return walk_loop_body(w, node.children[1], "", {});
}

Outcome walk_subshell(Walker& w, const Node& node, bool certain) {
  if (node.children.empty()) return {};
  push_branch(w);
  Outcome outcome = walk_node(w, node.children[0], certain);
  pop_branch(w, outcome);  // nothing a subshell sets survives it
  return {Flow::Normal, outcome.status};
}

Outcome walk_arith_command(Walker& w, const Node& node) {
  if (node.words.empty()) return {};
  std::optional<int64_t> value = evaluate_arith_word(w, node.words[0]);
  if (!value) return {Flow::Normal, Status::Undecided};
  return {Flow::Normal, *value != 0 ? Status::Success : Status::Failure};
}

Outcome dispatch(Walker& w, const Node& node, bool certain) {
  switch (node.kind) {
    case NodeKind::List:
      return walk_list(w, node, certain);
    case NodeKind::AndOr:
      return walk_and_or(w, node, certain);
    case NodeKind::Pipeline:
      return walk_pipeline(w, node, certain);
    case NodeKind::Simple:
      return walk_simple(w, node, certain);
    case NodeKind::If:
      return walk_if(w, node, certain);
    case NodeKind::Case:
      return walk_case(w, node, certain);
    case NodeKind::For:
      return walk_for(w, node, certain);
    case NodeKind::ArithFor:
      return walk_arith_for(w, node);
    case NodeKind::While:
    case NodeKind::Until:
      return walk_while(w, node, certain);
    case NodeKind::Group:
      return node.children.empty() ? Outcome{} : walk_node(w, node.children[0], certain);
    case NodeKind::Subshell:
      return walk_subshell(w, node, certain);
    case NodeKind::Function:
      if (!node.children.empty()) w.functions.insert_or_assign(node.name, Function{&node.children[0], w.source});
      return {};
    case NodeKind::Arith:
      return walk_arith_command(w, node);
    case NodeKind::Cond:
      return {Flow::Normal, evaluate_cond(w, detail_of(node).cond)};
  }
  return {};
}

// Keeps empty mappings or mappings of the wrong length from reaching the lexer.
MappedString normalized(const MappedString& code) {
  MappedString copy = code;
  uint32_t last = code.ends.empty() ? 0 : code.ends.back();
  copy.begins.resize(code.text.size(), last);
  copy.ends.resize(code.text.size(), last);
  return copy;
}

void script_problem(ShellScript& out, Span where, std::string message, std::string help) {
  out.problems.push_back(input_finding(input_rule::kScriptSyntax, std::move(message), where, std::move(help)));
}

// Reads and walks one top-level command at a time. After a certain `exit`
// the rest is still read, so its syntax problems are reported.
void walk_into(ShellScript& out, const Source& source, const ShellEnvironment& initial,
               const ShellLimits& limits, const ShellFiles* files) {
  Problems problems{out.problems, 0, false};
  Lexer lexer(source, source.text, problems);
  Parser parser(lexer);
  Walker w(source, limits, out);
  w.bodies = &lexer.bodies;
  load_initial(w, initial);
  if (files && files->arguments) w.positional = files->arguments;
  if (files && files->read) {
    w.files = files;
    w.directories.push_back(files->script_directory);
    w.walking.push_back(source.file);
    w.paths.push_back(files->script_path);
    w.dollar_zero = files->script_path;
  }
  bool walking = true;
  while (std::optional<TopLevel> top = read_top_level(parser)) {
    if (!walking || w.stopped) continue;
    const Node* command = &top->command;
    if (top->defines_function) command = &w.kept.emplace_back(std::move(top->command));
    Outcome outcome = walk_item(w, *command, top->background, true);
    walking = outcome.flow != Flow::Exit;
  }
  out.final_environment = final_environment(w);
}

// `make` builds the Source inside the try block: it may allocate.
template <typename MakeSource>
ShellScript walk_guarded(Span start, size_t size, MakeSource make, const ShellEnvironment& initial,
                         const ShellLimits& limits, const ShellFiles* files = nullptr) {
  ShellScript out;
  if (size > kMaxScriptBytes) {
    script_problem(out, start, "script larger than 8 MiB; mblint does not read it",
                   "lint a smaller script");
    return out;
  }
  try {
    make([&](const Source& source) { walk_into(out, source, initial, limits, files); });
  } catch (const std::exception& error) {  // out of memory: report, never throw
    out.commands.clear();
    script_problem(out, start, std::string("mblint could not read the script: ") + error.what(),
                   "lint a smaller script");
  }
  return out;
}

}  // namespace

Outcome walk_node(Walker& w, const Node& node, bool certain) {
  if (w.stopped) return {};
  if (w.walk_depth >= kMaxWalkDepth) {
    limit_problem(w, "walk-depth", node_span(w, node),
                  "commands and function calls nested too deeply to follow",
                  "mblint stopped walking here; flatten the script", true);
    return {};
  }
  ++w.walk_depth;
  Outcome outcome = dispatch(w, node, certain);
  --w.walk_depth;
  return outcome;
}

Branch run_branch(Walker& w, const Node& node) {
  push_branch(w);
  Outcome outcome = walk_node(w, node, false);
  return pop_branch(w, outcome);
}

Outcome walk_text(Walker& w, const Source& source, bool certain) {
  Problems problems{w.out.problems, 0, false};
  Lexer lexer(source, source.text, problems);
  Parser parser(lexer);
  Source caller = w.source;
  const std::map<uint32_t, HeredocBody>* caller_bodies = std::exchange(w.bodies, &lexer.bodies);
  w.source = source;
  Outcome last;
  while (std::optional<TopLevel> top = read_top_level(parser)) {
    if (w.stopped) break;
    const Node* command = &top->command;
    if (top->defines_function) command = &w.kept.emplace_back(std::move(top->command));
    last = walk_item(w, *command, top->background, certain);
    if (last.flow != Flow::Normal) break;
  }
  w.source = caller;
  w.bodies = caller_bodies;
  return last;
}

}  // namespace mblint::shell

namespace mblint {

const ShellEnvironment& ShellCommand::variables() const {
  static const ShellEnvironment none;
  return environment ? *environment : none;
}

ShellScript walk_shell_script(const SourceSet& sources, FileId file,
                              const ShellEnvironment& initial, const ShellLimits& limits,
                              const ShellFiles* files) {
  if (file < 0 || static_cast<size_t>(file) >= sources.files.size()) return {};
  const SourceFile& source = sources.files[static_cast<size_t>(file)];
  bool following = files && files->read;
  // Following files adds to `sources` during the walk: walk a copy.
  std::string copy = following && source.text.size() <= shell::kMaxScriptBytes ? source.text : std::string();
  std::string_view text = following ? std::string_view(copy) : std::string_view(source.text);
  auto make = [&](auto&& walk) { walk(shell::file_source(file, text)); };
  ShellScript out =
      shell::walk_guarded(Span{file, 0, 0}, source.text.size(), make, initial, limits, files);
  if (file < 0 || static_cast<size_t>(file) >= sources.files.size()) return out;
  const SourceFile& after = sources.files[static_cast<size_t>(file)];
  if (after.text.size() <= shell::kMaxScriptBytes) out.directives = read_sbatch_directives(after, file);
  return out;
}

ShellScript walk_shell_code(const MappedString& code, const ShellEnvironment& initial,
                            const ShellLimits& limits) {
  uint32_t first = code.begins.empty() ? 0 : code.begins[0];
  auto make = [&](auto&& walk) {
    bool consistent =
        code.begins.size() == code.text.size() && code.ends.size() == code.text.size();
    if (consistent) return walk(shell::code_source(code));
    MappedString fixed = shell::normalized(code);
    walk(shell::code_source(fixed));
  };
  return shell::walk_guarded(Span{code.file, first, first}, code.text.size(), make, initial,
                             limits);
}

}  // namespace mblint
