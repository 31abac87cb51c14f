// Variables during a walk: lookups, assignments under undo logs, and the
// merge after branches of which mblint cannot tell which one runs.
#include <algorithm>

#include "lint/base/input_rules.h"
#include "lint/load/shell/shell_walk.h"

namespace mblint::shell {

namespace {

// Writes without logging: restoring a branch's starting state.
void write_var(Walker& w, const std::string& name, std::optional<VarState> state) {
  forget_exported(w, name, state ? &*state : nullptr);
  if (!state) {
    w.vars.erase(name);
    return;
  }
  w.vars.insert_or_assign(name, std::move(*state));
}



bool same_text(const std::vector<MappedString>& a, const std::vector<MappedString>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const MappedString& x, const MappedString& y) { return x.text == y.text; });
}

// Two paths agree on a variable when it has the same known value on both.
// A null state: the variable is not in Vars at all.
bool same_value(const VarState* a, const VarState* b) {
  if (!a || !b) return !a && !b;
  if (a->presence != b->presence) return false;
  if (a->presence != Presence::Set) return true;
  if (a->opaque || b->opaque || a->var.is_array != b->var.is_array) return false;
  if (!a->var.known || !b->var.known) return false;
  if (a->var.is_array) return same_text(a->var.elements, b->var.elements);
  return a->var.value.text == b->var.value.text;
}

bool same_state(const VarState* a, const VarState* b) {
  if (!a || !b) return !a && !b;
  return same_value(a, b) && a->var.exported == b->var.exported && a->opaque == b->opaque &&
         a->var.definition == b->var.definition;
}

const VarState* state_of(const std::optional<VarState>& state) { return state ? &*state : nullptr; }

bool same_text(const VarState& a, const VarState& b) {
  if (a.var.is_array != b.var.is_array) return false;
  if (a.var.is_array) return same_text(a.var.elements, b.var.elements);
  return a.var.value.text == b.var.value.text;
}

// The values the paths give a variable they disagree on, when each path
// gives one mblint has (known, or with its unknown parts marked) and there
// are at most kMaxAlternatives of them; else empty.
std::vector<VarState> alternatives_of(const std::vector<const VarState*>& paths, bool exported) {
  std::vector<VarState> values;
  auto add = [&](const VarState& value) {
    if (std::none_of(values.begin(), values.end(), [&](const VarState& v) { return same_text(v, value); })) {
      values.push_back(value);
      values.back().var.exported = exported;
    }
  };
  for (const VarState* path : paths) {
    if (!path || path->presence != Presence::Set) return {};
    if (path->alternatives) {
      for (const VarState& value : *path->alternatives) add(value);
    } else if (path->opaque) {
      return {};
    } else {
      add(*path);
    }
    if (values.size() > kMaxAlternatives) return {};
  }
  return values;
}

// The value after a join of `paths`; `latest` is the last branch's change.
std::optional<VarState> joined_state(const std::vector<const VarState*>& paths,
                                     const VarState* latest, bool loop) {
  bool exported = std::any_of(paths.begin(), paths.end(),
                              [](const VarState* p) { return p && p->var.exported; });
  bool agree = std::all_of(paths.begin(), paths.end(),
                           [&](const VarState* p) { return same_value(p, paths.front()); });
  if (agree) {
    const VarState* chosen = latest ? latest : paths.front();
    if (!chosen) return std::nullopt;
    VarState result = *chosen;
    result.var.exported = exported;
    return result;
  }
  std::vector<VarState> values = loop ? std::vector<VarState>{} : alternatives_of(paths, exported);
  if (values.size() == 1) return values.front();  // the same text on every path
  VarState result = opaque_var(latest ? latest->var.definition : Span{}, exported);
  if (!values.empty()) result.alternatives = std::make_shared<const std::vector<VarState>>(std::move(values));
  return result;
}

}  // namespace

const VarState* find_var(const Walker& w, std::string_view name) {
  auto it = w.vars.find(name);
  return it == w.vars.end() ? nullptr : &it->second;
}

void set_var(Walker& w, std::string_view name, std::optional<VarState> state) {
  forget_exported(w, name, state ? &*state : nullptr);
  auto it = w.vars.find(name);
  if (!w.undo.empty()) {
    Saved& log = w.undo.back();
    if (log.find(name) == log.end()) {  // the old state is replaced below: move it to the log
      log.emplace(std::string(name),
                  it == w.vars.end() ? std::nullopt : std::optional(std::move(it->second)));
    }
  }
  if (!state) {
    if (it != w.vars.end()) w.vars.erase(it);
  } else if (it == w.vars.end()) {
    w.vars.emplace(std::string(name), std::move(*state));
  } else {
    it->second = std::move(*state);
  }
}

VarState known_scalar(MappedString value, Span definition, bool exported) {
  VarState state;
  state.var.known = fully_known(value);
  state.var.value = std::move(value);
  state.var.definition = definition;
  state.var.exported = exported;
  return state;
}

VarState opaque_var(Span definition, bool exported) {
  VarState state;
  state.opaque = true;
  state.var.known = false;
  state.var.definition = definition;
  state.var.exported = exported;
  return state;
}

bool is_exported(const Walker& w, std::string_view name) {
  const VarState* state = find_var(w, name);
  return state && state->var.exported;
}

void push_branch(Walker& w) { w.undo.emplace_back(); }

Branch pop_branch(Walker& w, Outcome outcome) {
  Saved log = std::move(w.undo.back());
  w.undo.pop_back();
  Branch branch;
  branch.flow = outcome.flow;
  branch.status = outcome.status;
  for (auto& [name, before] : log) {
    auto it = w.vars.find(name);
    branch.changed.emplace(
        name, it == w.vars.end() ? std::nullopt : std::optional(std::move(it->second)));
    write_var(w, name, std::move(before));
  }
  return branch;
}

Flow merge_branches(Walker& w, const std::vector<Branch>& branches, bool fallthrough, bool loop) {
  std::vector<const Branch*> live;
  for (const Branch& branch : branches) {
    if (branch.flow != Flow::Exit) live.push_back(&branch);  // a path that exits never gets here
  }
  if (live.empty() && !fallthrough) return Flow::Exit;
  std::set<std::string> names;
  for (const Branch* branch : live) {
    for (const auto& entry : branch->changed) names.insert(entry.first);
  }
  std::vector<const VarState*> paths;
  for (const std::string& name : names) {
    const VarState* before = find_var(w, name);
    const VarState* latest = nullptr;
    paths.clear();
    for (const Branch* branch : live) {
      auto it = branch->changed.find(name);
      bool changed = it != branch->changed.end();
      paths.push_back(changed ? state_of(it->second) : before);
      if (changed) latest = state_of(it->second);
    }
    if (fallthrough) paths.push_back(before);
    std::optional<VarState> result = joined_state(paths, latest, loop);
    if (!same_state(state_of(result), before)) set_var(w, name, std::move(result));
  }
  bool all_return = !fallthrough && std::all_of(live.begin(), live.end(), [](const Branch* b) {
    return b->flow == Flow::Return;
  });
  return all_return ? Flow::Return : Flow::Normal;
}

// A value with unknown parts marked by expansion records (`--nodes
// $SLURM_NNODES`) is kept; one the caller calls unknown without saying which
// part is unknown cannot be used at all.
bool usable_when_unknown(const ShellVariable& variable) {
  if (variable.is_array) {
    return !variable.elements.empty() &&
           std::any_of(variable.elements.begin(), variable.elements.end(),
                       [](const MappedString& e) { return !fully_known(e); });
  }
  return !fully_known(variable.value);
}

// A caller's value whose mapping does not match its text maps every
// character to the definition instead, so later substrings stay in bounds.
void repair_mapping(MappedString& value, Span definition) {
  if (value.begins.size() == value.text.size() && value.ends.size() == value.text.size()) return;
  value.begins.assign(value.text.size(), definition.begin);
  value.ends.assign(value.text.size(), definition.end);
  if (value.file == kNoFile) value.file = definition.file;
}

void load_initial(Walker& w, const ShellEnvironment& initial) {
  w.exported.reset();  // every variable may change
  for (const auto& [name, variable] : initial) {
    VarState state;
    state.var = variable;
    repair_mapping(state.var.value, variable.definition);
    for (MappedString& element : state.var.elements) repair_mapping(element, variable.definition);
    state.opaque = !variable.known && !usable_when_unknown(variable);
    w.vars.insert_or_assign(name, std::move(state));
  }
}

// Variables the script never gave a value (only `export X` of whatever the
// environment holds) are left out, like those it never mentions.
ShellEnvironment exported_environment(const Walker& w) {
  ShellEnvironment environment;
  for (const auto& [name, state] : w.vars) {
    if (!state.var.exported || state.presence != Presence::Set || state.var.is_array) continue;
    ShellVariable variable = state.var;
    if (state.opaque) variable.known = false;
    environment.emplace(name, std::move(variable));
  }
  return environment;
}

// Charged as the copy it is: commands that share it cost nothing more.
std::shared_ptr<const ShellEnvironment> shared_exported_environment(Walker& w, Span where) {
  if (w.exported) return w.exported;
  auto environment = std::make_shared<const ShellEnvironment>(exported_environment(w));
  if (!charge(w, environment_size(*environment), where)) return nullptr;
  w.exported = environment;
  return environment;
}

void forget_exported(Walker& w, std::string_view name, const VarState* next) {
  if (!w.exported) return;
  if (is_exported(w, name) || (next && next->var.exported)) w.exported.reset();
}

size_t environment_size(const ShellEnvironment& environment) {
  size_t total = 0;
  for (const auto& [name, variable] : environment) total += name.size() + variable.value.text.size();
  return total;
}

ShellEnvironment final_environment(const Walker& w) {
  ShellEnvironment environment;
  for (const auto& [name, state] : w.vars) {
    if (state.presence != Presence::Set) continue;
    ShellVariable variable = state.var;
    if (state.opaque) variable.known = false;
    environment.emplace(name, std::move(variable));
  }
  return environment;
}

void limit_problem(Walker& w, const std::string& key, Span where, std::string message,
                   std::string help, bool stop) {
  if (stop) w.stopped = true;
  if (!w.reported.insert(key).second) return;
  w.out.problems.push_back(input_finding(input_rule::kScriptSyntax, std::move(message), where, std::move(help)));
}

bool charge(Walker& w, size_t characters, Span where) {
  w.work += characters;
  if (w.work <= kWorkBudget) return true;
  limit_problem(w, "work", where,
                "the script expands to more text than mblint follows (32 Mi characters)",
                "mblint stopped walking here; simplify the script's string building", true);
  return false;
}

}  // namespace mblint::shell
