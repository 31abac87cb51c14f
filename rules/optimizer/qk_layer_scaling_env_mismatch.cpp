// apply_query_key_layer_scaling must match NVTE_APPLY_QK_LAYER_SCALING:
// Transformer Engine's attention only takes it from the environment.
#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kQkLayerScalingEnvMismatch;

namespace {

constexpr std::string_view kVariable = "NVTE_APPLY_QK_LAYER_SCALING";

// bool(int(os.getenv(..., "0"))); nullopt when it is not an integer.
std::optional<bool> env_flag(const EnvLookup& env) {
  if (env.state == EnvState::Unset) return false;
  if (env.state != EnvState::Set || !env.value || env.value->empty()) return std::nullopt;
  for (char c : *env.value) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  return env.value->find_first_not_of('0') != std::string::npos;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  Resolved scaling = resolve(job, "model.apply_query_key_layer_scaling");
  auto impl = transformer_impl(job);
  if (!scaling.known() || impl != "transformer_engine") return;  // TE's attention is the one that checks
  auto config = truthy(scaling);
  EnvLookup env = lookup_launch_env(job, kVariable);
  auto environment = env_flag(env);
  if (!config || !environment || *config == *environment) return;
  std::string env_text = env.state == EnvState::Unset ? "unset" : *env.value;
  Diagnostic diag = make_diagnostic(
      kQkLayerScalingEnvMismatch,
      fmt::format("apply_query_key_layer_scaling is {} but {} is {}: Transformer Engine's attention raises "
                  "\"Transformer Engine does not support setting query key layer scaling via argument, so these two "
                  "must match\" when the model is built",
                  *config ? "true" : "false", kVariable, env_text),
      span_for(scaling).valid() ? span_for(scaling) : primary_span(env.where));
  if (env.state == EnvState::Set) diag.notes.push_back(note_for(env, kVariable));
  if (!span_for(scaling).valid()) diag.notes.push_back(note_for(scaling));
  report(out, std::move(diag),
         *config ? fmt::format("export {}=1 in the launch script, or set apply_query_key_layer_scaling to "
                               "false",
                               kVariable)
                 : fmt::format("unset {} (or set it to 0)", kVariable));
}

}  // namespace

extern const RuleInfo kQkLayerScalingEnvMismatch = {
    .code = "MB018",
    .name = "qk-layer-scaling-env-mismatch",
    .group = RuleGroup::Optimizer,
    .severity = Severity::Error,
    .summary = "apply_query_key_layer_scaling and NVTE_APPLY_QK_LAYER_SCALING disagree",
    .doc = R"md(Query-key layer scaling (dividing the attention scores by the layer number for fp16
stability) cannot be passed to Transformer Engine's `DotProductAttention` as an argument; TE reads
the environment variable `NVTE_APPLY_QK_LAYER_SCALING` instead. Megatron-Core's
`TEDotProductAttention` therefore compares the two when it is built and raises `ValueError`
("apply_query_key_layer_scaling is True but environment variable NVTE_APPLY_QK_LAYER_SCALING is
None. Transformer Engine does not support setting query key layer scaling via argument, so these
two must match.") — the job fails at model build, in Megatron-LM and Megatron Bridge alike.

The variable counts as set when it is an integer other than 0; unset means off. Only models on
the Transformer Engine implementation (the default) are checked. The environment is read from
the launch script and the config's `env_vars`.)md",
    .bad = {"launch.sh",
     "#!/bin/bash\ntorchrun --nproc-per-node 8 scripts/training/run_recipe.py \\\n"
     "    --recipe qwen3_8b_pretrain_config \\\n    model.apply_query_key_layer_scaling=true\n",
     "launch.sh --nodes 1"},
    .good = {.content =
     "#!/bin/bash\nexport NVTE_APPLY_QK_LAYER_SCALING=1\ntorchrun --nproc-per-node 8 scripts/training/run_recipe.py \\\n"
     "    --recipe qwen3_8b_pretrain_config \\\n    model.apply_query_key_layer_scaling=true\n"},
    .check = check,
    .checks = "MC L3",
};

}  // namespace mblint
