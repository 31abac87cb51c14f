#include "lint/rule/rule.h"

#include <algorithm>

namespace mblint {

const RuleInfo* find_rule(RuleSet rules, std::string_view name_or_code) {
  for (const RuleInfo* rule : rules) {
    if (rule->name == name_or_code || rule->code == name_or_code) return rule;
  }
  return nullptr;
}

RuleExample good_example(const RuleInfo& rule) {
  RuleExample good = rule.good;
  if (good.filename.empty()) good.filename = rule.bad.filename;
  if (good.args.empty()) good.args = rule.bad.args;
  return good;
}

namespace {

constexpr RuleGroupInfo kGroups[] = {
    {RuleGroup::Input, "input", "input problems (found by the loaders)"},
    {RuleGroup::Config, "config", "config keys and values"},
    {RuleGroup::World, "world", "world size and process groups"},
    {RuleGroup::Tensor, "tensor", "tensor parallelism and model shape"},
    {RuleGroup::Sequence, "sequence", "sequence parallelism"},
    {RuleGroup::Context, "context", "context parallelism"},
    {RuleGroup::Pipeline, "pipeline", "pipeline parallelism"},
    {RuleGroup::Batch, "batch", "batch"},
    {RuleGroup::Moe, "moe", "mixture of experts"},
    {RuleGroup::Runtime, "runtime", "recompute, offloading, precision"},
    {RuleGroup::Optimizer, "optimizer", "optimizer, overlap, environment"},
    {RuleGroup::Memory, "memory", "memory"},
};

}  // namespace

std::span<const RuleGroupInfo> rule_groups() { return kGroups; }

const RuleGroupInfo& group_info(RuleGroup group) { return kGroups[static_cast<size_t>(group)]; }

RuleNames rule_names(RuleSet rules) {
  RuleNames names;
  names.reserve(rules.size());
  for (const RuleInfo* rule : rules) names.push_back({rule->name, rule->code});
  return names;
}

bool in_scope(const RuleContext& context, std::string_view section) {
  if (!context.sections) return true;
  return std::find(context.sections->begin(), context.sections->end(), section) != context.sections->end();
}

Diagnostic make_diagnostic(const RuleInfo& rule, std::string message, Span where) {
  Diagnostic d;
  d.rule = std::string(rule.name);
  d.code = std::string(rule.code);
  d.severity = rule.severity;
  d.message = std::move(message);
  d.where = where;
  return d;
}

}  // namespace mblint
