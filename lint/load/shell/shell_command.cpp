// Simple commands: assignments, declaration builtins, the builtins that
// change what mblint knows (read, set --, shift, let, exit, return), function
// calls, and the record of every command reached.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <utility>

#include "lint/load/shell/shell_walk.h"

namespace mblint::shell {

namespace {

Span word_span(const Walker& w, const Word& word) {
  return source_span(w.source, word.begin, word.end);
}

struct AssignOptions {
  bool exported = false;  // export / declare -x
  bool local = false;     // local / declare inside a function
  bool integer = false;   // declare -i: the value is arithmetic
  bool assoc = false;     // declare -A: not followed
};

// `local X`: remember X's state to restore when the function returns.
void make_local(Walker& w, const std::string& name) {
  if (w.locals.empty()) return;
  Saved& frame = w.locals.back();
  if (frame.count(name)) return;
  const VarState* state = find_var(w, name);
  frame.emplace(name, state ? std::optional<VarState>(*state) : std::nullopt);
}

bool usable(const VarState* state) {
  return state && state->presence == Presence::Set && !state->opaque;
}

VarState array_state(std::vector<MappedString> elements, Span definition, bool exported) {
  VarState state;
  state.var.is_array = true;
  state.var.known = std::all_of(elements.begin(), elements.end(), fully_known);
  if (!elements.empty()) state.var.value = elements[0];
  state.var.elements = std::move(elements);
  state.var.definition = definition;
  state.var.exported = exported;
  return state;
}

// `[2]=x` inside `( )` makes a sparse or associative array: not followed.
bool has_explicit_index(const Word& element) {
  if (element.parts.empty() || element.parts[0].kind != PartKind::Literal ||
      element.parts[0].quoted) {
    return false;
  }
  const std::string& text = element.parts[0].text;
  return text.starts_with("[") && text.find("]=") != std::string::npos;
}

void assign_array(Walker& w, const Word& word, const AssignmentTarget& target, Span definition,
                  bool exported) {
  std::vector<MappedString> elements;
  const VarState* old = find_var(w, target.name);
  if (target.append) {
    // `ARGS+=(...)` on an array only an unread sourced file can have set.
    if (!old && w.after_unfollowed_source) return set_var(w, target.name, opaque_var(definition, exported));
    if (old && old->presence == Presence::Set && old->opaque)
      return set_var(w, target.name, opaque_var(definition, exported));
    if (old && old->presence == Presence::Environment)
      return set_var(w, target.name, opaque_var(definition, exported));
    if (usable(old)) elements = old->var.is_array ? old->var.elements : std::vector{old->var.value};
  }
  for (const Word& element : word.elements) {
    if (has_explicit_index(element))
      return set_var(w, target.name, opaque_var(definition, exported));
    for (MappedString& field : expand_fields(w, element)) elements.push_back(std::move(field));
  }
  set_var(w, target.name, array_state(std::move(elements), definition, exported));
}

// `A[i]=value`.
void assign_element(Walker& w, const AssignmentTarget& target, MappedString value, Span definition,
                    bool exported) {
  MappedString subscript;
  subscript.text = *target.subscript;
  std::optional<int64_t> index = evaluate_arith_text(w, subscript, nullptr);
  const VarState* old = find_var(w, target.name);
  std::vector<MappedString> elements;
  if (usable(old)) elements = old->var.is_array ? old->var.elements : std::vector{old->var.value};
  bool fits = index && *index >= 0 && static_cast<size_t>(*index) <= elements.size() &&
              (usable(old) || *index == 0) && !(old && old->opaque);
  if (!fits) return set_var(w, target.name, opaque_var(definition, exported));
  size_t i = static_cast<size_t>(*index);
  if (i == elements.size())
    elements.push_back(std::move(value));
  else
    elements[i] = std::move(value);
  if (old && usable(old) && !old->var.is_array && elements.size() == 1) {
    return set_var(w, target.name, known_scalar(std::move(elements[0]), definition, exported));
  }
  set_var(w, target.name, array_state(std::move(elements), definition, exported));
}

MappedString integer_value(Walker& w, const MappedString& value, Span definition, bool& known) {
  std::optional<int64_t> number = evaluate_arith_text(w, value, nullptr);
  known = number.has_value();
  return number ? uniform_text(std::to_string(*number), definition) : MappedString{};
}

// The variable's value, moved out to be appended to in place (its state is
// written again right after).
MappedString take_value(Walker& w, const std::string& name) {
  forget_exported(w, name, nullptr);
  return std::move(w.vars.find(name)->second.var.value);
}

// `X="$X more"` where X's old value may be taken over: a known scalar
// whose old state no open branch still needs (it is replaced right after).
bool self_append(const Walker& w, const Word& word, const AssignmentTarget& target, const AssignOptions& options,
                 const VarState* old) {
  if (options.integer || target.subscript || target.append || word.parts.size() < 2) return false;
  if (!old || old->presence != Presence::Set || old->opaque || old->var.is_array || !old->var.known) return false;
  const Part& name = word.parts[0];
  const Part& self = word.parts[1];
  if (name.kind != PartKind::Literal || name.text.size() != target.value_offset) return false;
  if (self.kind != PartKind::Parameter || self.op != ParamOp::None || self.subscript != Subscript::None ||
      !self.quoted || self.text != target.name)
    return false;
  // The rest must not read X again (it would find the value taken): plain
  // text and other variables only.
  for (size_t i = 2; i < word.parts.size(); ++i) {
    const Part& part = word.parts[i];
    if (part.kind == PartKind::Literal) continue;
    if (part.kind != PartKind::Parameter || part.op != ParamOp::None || part.subscript == Subscript::Index ||
        part.text == target.name)
      return false;
  }
  // In an open branch the old state is kept for the undo log by the first change only.
  return w.undo.empty() || w.undo.back().count(target.name) != 0;
}

void assign_word(Walker& w, const Word& word, const AssignmentTarget& target,
                 const AssignOptions& options) {
  Span definition = word_span(w, word);
  if (options.local) make_local(w, target.name);
  const VarState* old = find_var(w, target.name);
  bool exported = options.exported || (old && old->var.exported);
  if (options.assoc) return set_var(w, target.name, opaque_var(definition, exported));
  if (word.is_array) return assign_array(w, word, target, definition, exported);
  MappedString value = self_append(w, word, target, options, old)
                           ? expand_self_append(w, word.parts, take_value(w, target.name),
                                                old->var.definition)
                           : expand_string(w, word.parts, target.value_offset);
  if (options.integer) {
    bool known = false;
    value = integer_value(w, value, definition, known);
    if (!known) return set_var(w, target.name, opaque_var(definition, exported));
  }
  if (target.subscript) return assign_element(w, target, std::move(value), definition, exported);
  old = find_var(w, target.name);  // expansion may have assigned it (${X:=...})
  if (target.append && !old && w.after_unfollowed_source) {
    return set_var(w, target.name, opaque_var(definition, exported));  // as for an array above
  }
  if (target.append && old && old->presence != Presence::Unset) {
    if (!usable(old)) return set_var(w, target.name, opaque_var(definition, exported));
    if (old->var.is_array) {
      std::vector<MappedString> elements = old->var.elements;
      if (elements.empty()) elements.emplace_back();
      append_mapped(elements[0], value);
      return set_var(w, target.name, array_state(std::move(elements), definition, exported));
    }
    MappedString joined = old->var.value;
    append_mapped(joined, value);
    value = std::move(joined);
  }
  set_var(w, target.name, known_scalar(std::move(value), definition, exported));
}

// `export X`, `declare -a X`, `local X`: a name without a value.
void declare_name(Walker& w, const std::string& name, const AssignOptions& options, bool unexport,
                  bool array) {
  if (options.local) {
    make_local(w, name);
    VarState state;
    state.presence = Presence::Unset;
    if (array) state = array_state({}, {}, false);
    return set_var(w, name, state);
  }
  const VarState* old = find_var(w, name);
  if (options.exported || unexport) {
    VarState state;
    state.presence = Presence::Environment;  // still whatever the environment holds
    if (old) state = *old;
    state.var.exported = !unexport;
    return set_var(w, name, state);
  }
  if (options.assoc) return set_var(w, name, opaque_var({}, old && old->var.exported));
  if (array && (!old || old->presence != Presence::Set))
    set_var(w, name, array_state({}, {}, false));
}

struct DeclarationFlags {
  AssignOptions options;
  bool unexport = false;
  bool array = false;
  bool global = false;
  bool skip_names = false;  // -f / -p: about functions or printing
  bool nameref = false;
};

void read_flags(std::string_view builtin, std::string_view text, DeclarationFlags& flags) {
  bool on = text[0] == '-';
  for (char c : text.substr(1)) {
    switch (c) {
      case 'x':
        flags.options.exported = on;
        flags.unexport = !on;
        break;
      case 'a':
        flags.array = on;
        break;
      case 'A':
        flags.options.assoc = on;
        break;
      case 'i':
        flags.options.integer = on;
        break;
      case 'g':
        flags.global = on;
        break;
      case 'f':
      case 'F':
      case 'p':
        flags.skip_names = true;
        break;
      case 'n':
        if (builtin == "export")
          flags.unexport = true;
        else
          flags.nameref = on;
        break;
      default:
        break;
    }
  }
}

// export / declare / typeset / local / readonly: assignments that are not
// split, and attributes. Not recorded as commands.
void run_declaration(Walker& w, std::string_view builtin, const Node& node, size_t first_arg) {
  DeclarationFlags flags;
  flags.options.exported = builtin == "export";
  bool in_function = !w.locals.empty();
  bool local =
      builtin == "local" || ((builtin == "declare" || builtin == "typeset") && in_function);
  for (size_t i = first_arg; i < node.words.size(); ++i) {
    const Word& word = node.words[i];
    AssignOptions options = flags.options;
    options.local = local && !flags.global;
    if (auto target = assignment_target(word)) {
      if (flags.nameref) {
        set_var(w, target->name, opaque_var(word_span(w, word), options.exported));
        continue;
      }
      assign_word(w, word, *target, options);
      if (flags.unexport) declare_name(w, target->name, AssignOptions{}, true, false);
      continue;
    }
    for (const MappedString& field : expand_fields(w, word)) {
      const std::string& text = field.text;
      if (text.size() > 1 && (text[0] == '-' || text[0] == '+')) {
        read_flags(builtin, text, flags);
        continue;
      }
      if (flags.skip_names || !is_identifier(text)) continue;
      if (flags.nameref) {
        set_var(w, text, opaque_var(span_of(field, 0, text.size()), options.exported));
        continue;
      }
      declare_name(w, text, options, flags.unexport, flags.array);
    }
  }
}

void run_unset(Walker& w, const Node& node, size_t first_arg) {
  bool functions = false;
  for (size_t i = first_arg; i < node.words.size(); ++i) {
    for (const MappedString& field : expand_fields(w, node.words[i])) {
      const std::string& name = field.text;
      if (name == "-f") functions = true;
      if (name == "-v") functions = false;
      if (!name.empty() && name[0] == '-') continue;
      if (functions) {
        w.functions.erase(name);
        continue;
      }
      size_t bracket = name.find('[');
      if (bracket != std::string::npos) {  // unset 'A[2]': the array becomes sparse
        std::string array = name.substr(0, bracket);
        if (find_var(w, array))
          set_var(w, array, opaque_var(span_of(field, 0, name.size()), is_exported(w, array)));
        continue;
      }
      if (!is_identifier(name)) continue;
      VarState state;
      state.presence = Presence::Unset;
      state.var.known = true;
      set_var(w, name, state);
    }
  }
}

// read, mapfile, getopts, printf -v: the named variables get values mblint
// cannot know.
void make_unknown(Walker& w, const std::vector<MappedString>& argv,
                  std::string_view value_options) {
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& arg = argv[i].text;
    if (arg.size() > 1 && arg[0] == '-') {
      bool takes_value = arg.size() == 2 && value_options.find(arg[1]) != std::string_view::npos;
      bool names_array = arg == "-a";
      if (takes_value && i + 1 < argv.size()) {
        ++i;
        if (names_array && is_identifier(argv[i].text)) {
          set_var(w, argv[i].text, opaque_var(span_of(argv[i], 0, argv[i].text.size()), false));
        }
      }
      continue;
    }
    if (is_identifier(arg)) {
      set_var(w, arg, opaque_var(span_of(argv[i], 0, arg.size()), is_exported(w, arg)));
    }
  }
}

void run_set(Walker& w, const std::vector<MappedString>& argv) {
  auto dashes = std::find_if(argv.begin() + 1, argv.end(),
                             [](const MappedString& a) { return a.text == "--"; });
  if (dashes == argv.end()) return;
  w.positional = std::vector<MappedString>(dashes + 1, argv.end());
}

void run_shift(Walker& w, const std::vector<MappedString>& argv) {
  if (!w.positional) return;
  size_t count = 1;
  if (argv.size() > 1) {
    const std::string& text = argv[1].text;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), count);
    if (error != std::errc() || end != text.data() + text.size()) {
      w.positional.reset();  // an unknown count: the arguments are unknown again
      return;
    }
  }
  if (count > w.positional->size()) return;  // bash refuses and changes nothing
  w.positional->erase(w.positional->begin(), w.positional->begin() + static_cast<ptrdiff_t>(count));
}

Status run_let(Walker& w, const std::vector<MappedString>& argv) {
  Status status = Status::Undecided;
  for (size_t i = 1; i < argv.size(); ++i) {
    std::optional<int64_t> value = evaluate_arith_text(w, argv[i], nullptr);
    status = value ? (*value != 0 ? Status::Success : Status::Failure) : Status::Undecided;
  }
  return status;
}

Status run_test(const std::vector<MappedString>& argv) {
  std::vector<MappedString> args(argv.begin() + 1, argv.end());
  if (argv[0].text == "[") {
    if (args.empty() || args.back().text != "]") return Status::Undecided;
    args.pop_back();
  }
  return evaluate_test(args);
}

Outcome call_function(Walker& w, const std::string& name, const Function& function,
                      const std::vector<MappedString>& argv,
                      const std::vector<std::pair<std::string, VarState>>& prefix, bool certain,
                      Span where) {
  if (w.call_depth >= w.limits.max_call_depth) {
    limit_problem(w, fmt::format("call-depth:{}", name), where,
                  fmt::format("function `{}` is called more than {} levels deep", name,
                              w.limits.max_call_depth),
                  "mblint does not follow deeper calls; check for unbounded recursion", false);
    return {Flow::Normal, Status::Unknown};
  }
  std::optional<std::vector<MappedString>> caller_arguments = std::move(w.positional);
  w.positional = std::vector<MappedString>(argv.begin() + 1, argv.end());
  Saved before_prefix;
  for (const auto& [variable, state] : prefix) {  // `X=1 f`: X is set while f runs
    const VarState* old = find_var(w, variable);
    before_prefix.emplace(variable, old ? std::optional<VarState>(*old) : std::nullopt);
    set_var(w, variable, state);
  }
  w.locals.emplace_back();
  ++w.call_depth;
  Source caller = w.source;
  // The here-documents read so far are the current text's; a function
  // defined in another text (a sourced file, now closed) has none here.
  bool same_text = function.source.text.data() == caller.text.data();
  const std::map<uint32_t, HeredocBody>* bodies = std::exchange(w.bodies, same_text ? w.bodies : nullptr);
  w.source = function.source;  // defined in a sourced file: its positions are there
  Outcome outcome = walk_node(w, *function.body, certain);
  w.source = caller;
  w.bodies = bodies;
  --w.call_depth;
  Saved hidden = std::move(w.locals.back());
  w.locals.pop_back();
  for (auto& [variable, state] : hidden) set_var(w, variable, std::move(state));
  for (auto& [variable, state] : before_prefix) set_var(w, variable, std::move(state));
  w.positional = std::move(caller_arguments);
  return {outcome.flow == Flow::Exit ? Flow::Exit : Flow::Normal, outcome.status};
}

// `IFS=, read -r A B C <<< "$line"` with the line and IFS known: the fields
// as bash splits them (the last name takes the rest). False: not this form.
bool read_here_string(Walker& w, const std::vector<MappedString>& argv,
                      const std::vector<std::pair<std::string, VarState>>& prefix, const Word* here) {
  if (!here) return false;
  std::vector<std::string> names;
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& arg = argv[i].text;
    if (arg == "-r") continue;
    if (!is_identifier(arg)) return false;  // -a, -d, -p ...: not followed
    names.push_back(arg);
  }
  if (names.empty()) return false;
  MappedString line = expand_word_string(w, *here);
  std::string ifs = " \t\n";
  const VarState* global = find_var(w, "IFS");
  for (const auto& [name, state] : prefix) {
    if (name == "IFS") global = &state;
  }
  if (global) {
    if (global->presence != Presence::Set || global->opaque || !global->var.known) return false;
    ifs = global->var.value.text;
  }
  if (!fully_known(line) || ifs.find_first_of(" \t\n") != std::string::npos) return false;  // blanks: bash trims
  Span definition = span_of(line, 0, line.text.size());
  size_t at = 0;
  for (size_t n = 0; n < names.size(); ++n) {
    size_t end = n + 1 == names.size() ? line.text.size() : line.text.find_first_of(ifs, at);
    if (end == std::string::npos) end = line.text.size();
    MappedString field = substring(line, std::min(at, line.text.size()), end);
    set_var(w, names[n], known_scalar(std::move(field), definition, is_exported(w, names[n])));
    at = end == line.text.size() ? end : end + 1;
  }
  return true;
}

// What the builtins and functions mblint knows do after being recorded.
Outcome run_command(Walker& w, const std::vector<MappedString>& argv,
                    const std::vector<std::pair<std::string, VarState>>& prefix, bool certain,
                    Span where, const Word* here) {
  if (!fully_known(argv[0])) return {Flow::Normal, Status::Unknown};
  const std::string name = argv[0].text;
  if (auto function = w.functions.find(name); function != w.functions.end()) {
    return call_function(w, name, function->second, argv, prefix, certain, where);
  }
  if (name == "exit") return {Flow::Exit, Status::Unknown};
  // exec replaces the shell; without a command it only sets redirections.
  if (name == "exec" && argv.size() > 1) return {Flow::Exit, Status::Unknown};
  if (name == "return" && !w.locals.empty()) return {Flow::Return, Status::Unknown};
  if (name == "true" || name == ":") return {Flow::Normal, Status::Success};
  if (name == "false") return {Flow::Normal, Status::Failure};
  if (name == "[" || name == "test") return {Flow::Normal, run_test(argv)};
  if (name == "let") return {Flow::Normal, run_let(w, argv)};
  // `continue` ends only the current iteration: the later ones still run;
  // `break` and `continue N` (an outer loop's) end this loop.
  bool outer_continue = name == "continue" && argv.size() > 1 && argv[1].text != "1";
  if (name == "break" || outer_continue) w.jumped = true;
  if (name == "read" && read_here_string(w, argv, prefix, here)) return {Flow::Normal, Status::Success};
  if (name == "read") make_unknown(w, argv, "adinNptu");
  if (name == "mapfile" || name == "readarray") make_unknown(w, argv, "dnOsuCc");
  if (name == "getopts" && argv.size() > 2) make_unknown(w, {argv[0], argv[2]}, "");
  if (name == "printf" && argv.size() > 2 && argv[1].text == "-v")
    make_unknown(w, {argv[0], argv[2]}, "");
  if (name == "set") run_set(w, argv);
  if (name == "shift") run_shift(w, argv);
  // `source FILE` / `. FILE`: the file may assign anything, but mblint never
  // reads files a script names at run time. Known variables keep their
  // values (they can be wrong if the file reassigns them); the command is
  // recorded so callers can report or follow the file themselves.
  return {Flow::Normal, Status::Unknown};
}

ShellVariable prefix_variable(const MappedString& value, Span definition) {
  ShellVariable variable;
  variable.known = fully_known(value);
  variable.value = value;
  variable.definition = definition;
  variable.exported = true;
  return variable;
}

// The argv of a simple command, bounded by max_words_per_command.
std::vector<MappedString> expand_argv(Walker& w, const Node& node, Span where) {
  std::vector<MappedString> argv;
  argv.reserve(node.words.size() - node.assignment_count);
  for (size_t i = node.assignment_count; i < node.words.size() && !w.stopped; ++i) {
    expand_fields_into(w, node.words[i], argv);
    if (argv.size() > w.limits.max_words_per_command) {
      limit_problem(
          w, "words-per-command", where,
          fmt::format("a command with more than {} words; mblint reads only the first ones",
                      w.limits.max_words_per_command),
          "split the command", false);
      argv.resize(w.limits.max_words_per_command);
      break;
    }
  }
  return argv;
}

Outcome assignments_only(Walker& w, const Node& node) {
  for (const Word& word : node.words) {
    if (auto target = assignment_target(word)) assign_word(w, word, *target, {});
  }
  return {Flow::Normal, Status::Success};
}

}  // namespace

Outcome walk_simple(Walker& w, const Node& node, bool certain) {
  if (w.stopped || node.words.empty()) return {};
  if (std::optional<Outcome> forked = walk_forked(w, node, certain)) return *forked;
  return walk_simple_once(w, node, certain);
}

Outcome walk_simple_once(Walker& w, const Node& node, bool certain) {
  if (w.stopped || node.words.empty()) return {};
  Span where = source_span(w.source, node.words.front().begin, node.words.back().end);
  if (node.assignment_count == node.words.size()) return assignments_only(w, node);
  std::optional<std::string_view> builtin = plain_text(node.words[node.assignment_count]);
  if (builtin && node.assignment_count == 0) {
    if (*builtin == "export" || *builtin == "declare" || *builtin == "typeset" ||
        *builtin == "local" || *builtin == "readonly") {
      run_declaration(w, *builtin, node, 1);
      return {Flow::Normal, Status::Success};
    }
    if (*builtin == "unset") {
      run_unset(w, node, 1);
      return {Flow::Normal, Status::Success};
    }
  }
  ShellCommand command;
  command.certain = certain;
  command.span = where;
  command.launcher = w.launcher;
  command.fork_group = w.fork_group;
  command.fork_arm = w.fork_arm;
  std::vector<std::pair<std::string, VarState>> prefix;
  for (size_t i = 0; i < node.assignment_count; ++i) {
    const Word& word = node.words[i];
    auto target = assignment_target(word);
    MappedString value =
        word.is_array ? MappedString{} : expand_string(w, word.parts, target->value_offset);
    prefix.emplace_back(target->name, known_scalar(value, word_span(w, word), true));
    command.assignments.emplace_back(target->name, std::move(value));
  }
  command.argv = expand_argv(w, node, where);
  if (w.stopped) return {};
  if (command.argv.empty()) return assignments_only(w, node);  // `X=1 $EMPTY`: plain assignments
  if (++w.simple_commands > w.limits.max_commands) {
    limit_problem(w, "commands", where,
                  fmt::format("more than {} commands walked", w.limits.max_commands),
                  "mblint stopped walking here", true);
    return {};
  }
  command.environment = shared_exported_environment(w, where);
  if (!command.environment) return {};
  if (!prefix.empty()) {  // the command's own copy: the exported variables and its prefix
    auto environment = std::make_shared<ShellEnvironment>(*command.environment);
    for (const auto& [name, state] : prefix)
      environment->insert_or_assign(name, prefix_variable(state.var.value, state.var.definition));
    if (!charge(w, environment_size(*environment), where)) return {};
    command.environment = std::move(environment);
  }
  w.out.commands.push_back(std::move(command));
  if (auto followed = follow_heredoc(w, node, w.out.commands.size() - 1, prefix, certain)) return *followed;
  if (auto followed = follow_command(w, w.out.commands.size() - 1, prefix, certain)) return *followed;
  // Only function calls (and the commands followed above) record further
  // commands, and they copy their arguments before walking; until then this
  // reference stays valid.
  const Word* here = node.detail && !node.detail->here_string.empty() ? &node.detail->here_string[0] : nullptr;
  return run_command(w, w.out.commands.back().argv, prefix, certain, where, here);
}

}  // namespace mblint::shell
