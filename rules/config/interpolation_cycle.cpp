// An OmegaConf interpolation cycle: found where the job's interpolations are
// resolved (lint/load/yaml/interpolation.cpp, lint/resolve/interpolation_check.cpp), reported
// here for Megatron Bridge configs only (is_bridge_job).
#include "lint/base/input_rules.h"
#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kInterpolationCycle;

namespace {

// Found when the job was resolved; reported for Megatron Bridge configs only.
void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (!is_bridge_job(context.job)) return;
  for (const Diagnostic& d : context.job.bridge_problems) {
    if (d.rule != kInterpolationCycle.name) continue;
    out.push_back(d);
    out.back().code = std::string(kInterpolationCycle.code);
  }
}

}  // namespace

extern const RuleInfo kInterpolationCycle = {
    .code = "MB022",
    .name = input_rule::kInterpolationCycle.name,
    .group = RuleGroup::Config,
    .severity = input_rule::kInterpolationCycle.severity,
    .summary = "OmegaConf interpolations that refer to each other in a cycle",
    .doc = R"md(When Megatron Bridge resolves the merged config (`OmegaConf.to_container(resolve=True)` in
`process_config_with_overrides`, `training/utils/omegaconf_utils.py`, v0.2.0 to v0.6.0), an
interpolation that leads back to itself, directly (`seq_length: ${.seq_length}`) or through
other values (`model.seq_length: ${dataset.seq_length}` with `dataset.seq_length:
${model.seq_length}`), makes OmegaConf raise `InterpolationResolutionError: Recursive
interpolation detected`, and the job stops before training.

mblint follows chains of up to 32 interpolations; a cycle is reported once, at the
`${...}` of the first value of the cycle in the file, with a note at each other value on it.
Longer chains are left unknown rather than judged. Like `interpolation-missing-key`, the rule
applies to Megatron Bridge jobs other than full dumps.)md",
    .bad = {"override.yaml", "model:\n  seq_length: ${dataset.seq_length}\ndataset:\n  seq_length: ${model.seq_length}\n",
     "override.yaml --recipe llama3_8b_pretrain_config --nodes 1 --gpus-per-node 8"},
    .good = {.content = "model:\n  seq_length: ${dataset.seq_length}\ndataset:\n  seq_length: 8192\n"},
    .check = check,
};

}  // namespace mblint
