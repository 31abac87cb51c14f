// What a rule is: stable metadata, its documentation with a bad and a good
// example, and a check over the resolved job. Rules live in rules/, one file
// each; a rule never parses and never prints.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lint/base/diagnostic.h"
#include "lint/model/rule_selection.h"
#include "lint/model/thresholds.h"

namespace mblint {

struct Job;
struct Derived;

// A documented example, run by the test suite: the bad one must fire, the
// good one must stay silent. `args` is what follows `mblint check`; the file
// named `filename` holds `content`. A good example that leaves `filename` and
// `args` empty is the bad example's file, fixed, under the same command
// (good_example()), so most rules write only its content.
struct RuleExample {
  std::string_view filename = {};
  std::string_view content = {};
  std::string_view args = {};
};

// What a rule's findings about the job depend on. A Section rule judges each
// top-level section ("model", "train", a stray top-level key) on its own: its
// findings in one section depend on that section's values and on facts of the
// job a fix never changes (dialect, versions, whether the file is a Megatron
// Bridge file). Re-checking a fix runs such a rule only over the sections the
// fix changed (lint/fix/fix_verify.cpp), which keeps the editor quick on large
// dumps.
enum class RuleScope : uint8_t { Job, Section };

struct RuleInfo;
using RuleSet = std::span<const RuleInfo* const>;

// Runs `rules` over a job (lint/engine/check_job.h check_job, handed down so
// that a rule never reaches up to the engine).
using JobCheck = void (*)(const Job& job, const Derived& derived, const Thresholds& thresholds, RuleSet rules,
                          std::vector<Diagnostic>& out);

struct RuleContext {
  const Job& job;
  const Derived& derived;
  const Thresholds& thresholds;
  // Facts about the job that several rules work out (its effective
  // precision, its memory estimate), kept by the first rule that asks. The
  // rules' support code owns the type (rules/support/runtime_support.h RuleMemo).
  mutable std::shared_ptr<void> memo = {};
  // For Section rules: the top-level keys to judge; null for every one.
  const std::vector<std::string>* sections = nullptr;
  // The rules of this run, and how to run them over a changed copy of the
  // job: the memory rules keep only remedies no other error rule objects to
  // (rules/support/memory_support.cpp). Null `check_rules`: nothing to ask.
  RuleSet rules = {};
  JobCheck check_rules = nullptr;
};

// True when a Section rule is to judge the top-level key `section`.
bool in_scope(const RuleContext& context, std::string_view section);

using RuleCheck = void (*)(const RuleContext& context, std::vector<Diagnostic>& out);

// The groups `mblint rules` lists the rules in; a rule's file sits in its
// group's folder, rules/<folder>/.
enum class RuleGroup : uint8_t {
  Input, Config, World, Tensor, Sequence, Context, Pipeline, Batch, Moe, Runtime, Optimizer, Memory,
};

struct RuleGroupInfo {
  RuleGroup group;
  std::string_view folder;  // "moe"
  std::string_view title;   // "mixture of experts"
};

// Every group, in the order `mblint rules` lists them.
std::span<const RuleGroupInfo> rule_groups();
const RuleGroupInfo& group_info(RuleGroup group);

struct RuleInfo {
  std::string_view code;      // stable, e.g. "MB401"
  std::string_view name;      // kebab-case, e.g. "cp-seq-length-divisibility"
  RuleGroup group;
  Severity severity;
  std::string_view summary;   // one line
  std::string_view doc;       // Markdown: why it matters, what Megatron does, versions
  RuleExample bad;
  RuleExample good;
  // nullptr for input problems found by the loaders (yaml-syntax, ...).
  RuleCheck check;
  // The upstream checks this rule covers, by their ids in the reference
  // notes: "MC A1, MC A2, BR V1, PS 1" (MC = megatron-core-checks.md section 2,
  // BR = bridge-config-format.md section 4, PS = parallelism-strategies.md
  // section 13). Printed in the rules reference.
  std::string_view checks = {};
  RuleScope scope = RuleScope::Job;
};

const RuleInfo* find_rule(RuleSet rules, std::string_view name_or_code);

// The rule's good example with the file name and command it is checked with:
// its own, or the bad example's where it leaves them empty.
RuleExample good_example(const RuleInfo& rule);

// The names and codes of `rules`, for what only names rules (lint/model/rule_selection.h).
RuleNames rule_names(RuleSet rules);

// A diagnostic of `rule` at its default severity.
Diagnostic make_diagnostic(const RuleInfo& rule, std::string message, Span where);

}  // namespace mblint
