// An OmegaConf interpolation to a key that does not exist: found where the job's interpolations are
// resolved (lint/load/yaml/interpolation.cpp, lint/resolve/interpolation_check.cpp), reported
// here for Megatron Bridge configs only (is_bridge_job).
#include "lint/base/input_rules.h"
#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kInterpolationMissingKey;

namespace {

// Found when the job was resolved; reported for Megatron Bridge configs only.
void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (!is_bridge_job(context.job)) return;
  for (const Diagnostic& d : context.job.bridge_problems) {
    if (d.rule != kInterpolationMissingKey.name) continue;
    out.push_back(d);
    out.back().code = std::string(kInterpolationMissingKey.code);
  }
}

}  // namespace

extern const RuleInfo kInterpolationMissingKey = {
    .code = "MB021",
    .name = input_rule::kInterpolationMissingKey.name,
    .group = RuleGroup::Config,
    .severity = input_rule::kInterpolationMissingKey.severity,
    .summary = "an OmegaConf interpolation ${...} names a key that does not exist",
    .doc = R"md(Megatron Bridge merges a `--config-file` YAML and the Hydra overrides onto the recipe's config
and then resolves every interpolation with `OmegaConf.to_container(resolve=True)`
(`process_config_with_overrides`, `training/utils/omegaconf_utils.py`, v0.3.0 to v0.6.0, used by
`scripts/training/run_recipe.py` and the examples; v0.2.0's examples do the same merge and
resolve themselves). An interpolation whose key is not in the merged config makes OmegaConf
(>= 2.3, which Bridge requires) raise `InterpolationKeyError: Interpolation key 'foo.bar' not
found`, and the job stops before training.

What mblint calls missing: the key is not in what the job's files and overrides set (nor in
the recipe layer, when the recipe is known) **and** it can be no field of the recipe's config
either: the top-level key is not a `ConfigContainer` field, or the field is not in any of its
section's dataclasses (mblint's schema, `lint/model/schema.h`). A key that is a schema field exists in
every recipe's config, so an interpolation to it resolves (mblint then treats its value as
unknown); keys under free-form fields (`env_vars`, dicts) are never judged. Relative
interpolations (`${.x}` is a sibling, `${..y}` one level up) are resolved from the value that
holds them. Resolvers (`${oc.env:TP}`, `${oc.select:...}`) and forms mblint does not model
(brackets, quoted keys) stay unknown and are not reported.

The diagnostic points at the `${...}` characters in the value and offers the closest existing
key as a did-you-mean. Full ConfigContainer dumps and other dialects (NeMo configs are composed
by Hydra from several files; Megatron-LM functional tests use `${VAR}` for envsubst) are not
checked.)md",
    .bad = {"override.yaml", "model:\n  seq_length: ${foo.bar}\n",
     "override.yaml --recipe llama3_8b_pretrain_config --nodes 1 --gpus-per-node 8"},
    .good = {.content = "model:\n  seq_length: ${dataset.seq_length}\n"},
    .check = check,
};

}  // namespace mblint
