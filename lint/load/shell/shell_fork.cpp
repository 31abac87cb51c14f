// A command that reads a variable set differently by branches mblint cannot
// decide (`if [ -n "$WANDB_API_KEY" ]; then ARGS+=(--wandb-project p); fi`,
// `case $1 in ...) TASK="..." ;; esac`) runs with one of the values those
// branches give it. It is walked once per combination of the values, as
// the arms of an undecidable `if` of which one surely runs; each recorded
// command says which arm it belongs to, so a launch found in every arm is
// one job whose settings are those the arms agree on (lint/resolve).
#include <algorithm>

#include "lint/load/shell/shell_walk.h"

namespace mblint::shell {

namespace {

// More combinations than this: the variables stay opaque, as before.
constexpr size_t kMaxCombinations = 16;

void collect_names(const std::vector<Word>& words, std::vector<std::string>& names);

void collect_names(const Word& word, std::vector<std::string>& names) {
  for (const Part& part : word.parts) {
    if (part.kind == PartKind::Parameter && is_identifier(part.text) &&
        std::find(names.begin(), names.end(), part.text) == names.end())
      names.push_back(part.text);
    collect_names(inner_words(part), names);
    collect_names(operand_words(part), names);
  }
  collect_names(word.elements, names);
}

void collect_names(const std::vector<Word>& words, std::vector<std::string>& names) {
  for (const Word& word : words) collect_names(word, names);
}

struct Forked {
  std::string name;
  std::shared_ptr<const std::vector<VarState>> values;
};

// The variables with alternatives the command's words read.
std::vector<Forked> forked_variables(const Walker& w, const Node& node) {
  std::vector<std::string> names;
  collect_names(node.words, names);
  std::vector<Forked> forked;
  for (const std::string& name : names) {
    const VarState* state = find_var(w, name);
    if (state && state->presence == Presence::Set && state->alternatives)
      forked.push_back(Forked{name, state->alternatives});
  }
  return forked;
}

// `X="... $OPTS ..."`, `export X=...`: commands that only give variables
// values.
bool assigns_only(const Node& node) {
  if (node.assignment_count == node.words.size()) return true;
  std::optional<std::string_view> builtin = plain_text(node.words[node.assignment_count]);
  return node.assignment_count == 0 && builtin &&
         (*builtin == "export" || *builtin == "declare" || *builtin == "typeset" || *builtin == "local" ||
          *builtin == "readonly");
}

// After the arms of an assignment, each variable it gave several values
// holds them as alternatives, on top of the value the assignment makes of
// the opaque variables (its known parts stay readable where no command
// forks: a later command that reads too many variables with alternatives).
void keep_partial_values(Walker& w, const Node& node, bool certain) {
  std::vector<std::pair<std::string, std::shared_ptr<const std::vector<VarState>>>> assigned;
  for (const Word& word : node.words) {
    std::optional<AssignmentTarget> target = assignment_target(word);
    const VarState* state = target ? find_var(w, target->name) : nullptr;
    if (state && state->alternatives) assigned.emplace_back(target->name, state->alternatives);
  }
  walk_simple_once(w, node, certain);
  for (auto& [name, values] : assigned) {
    const VarState* state = find_var(w, name);
    if (!state || state->presence != Presence::Set) continue;
    VarState partial = *state;
    partial.alternatives = std::move(values);
    set_var(w, name, std::move(partial));
  }
}

}  // namespace

std::optional<Outcome> walk_forked(Walker& w, const Node& node, bool certain) {
  if (w.fork_group != 0) return std::nullopt;  // inside an arm: read as opaque
  std::vector<Forked> forked = forked_variables(w, node);
  if (forked.empty()) return std::nullopt;
  size_t combinations = 1;
  for (const Forked& variable : forked) {
    combinations *= variable.values->size();
    if (combinations > kMaxCombinations) return std::nullopt;
  }
  w.fork_group = static_cast<uint32_t>(w.out.fork_arms.size() + 1);
  w.out.fork_arms[w.fork_group] = static_cast<uint32_t>(combinations);
  std::vector<Branch> arms;
  for (size_t arm = 0; arm < combinations && !w.stopped; ++arm) {
    w.fork_arm = static_cast<uint32_t>(arm);
    push_branch(w);
    size_t rest = arm;  // the arm's value of each variable, as digits of a mixed radix
    for (const Forked& variable : forked) {
      set_var(w, variable.name, (*variable.values)[rest % variable.values->size()]);
      rest /= variable.values->size();
    }
    arms.push_back(pop_branch(w, walk_simple_once(w, node, certain)));
  }
  w.fork_group = 0;
  w.fork_arm = 0;
  Status status = arms.empty() ? Status::Unknown : arms.front().status;
  for (const Branch& arm : arms) {
    if (arm.status != status) status = Status::Unknown;
  }
  Flow flow = merge_branches(w, arms, false);
  if (assigns_only(node)) keep_partial_values(w, node, certain);
  return Outcome{flow, status};
}

}  // namespace mblint::shell
