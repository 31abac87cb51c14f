// deterministic_mode with Transformer Engine's attention needs
// NVTE_ALLOW_NONDETERMINISTIC_ALGO=0; unset means 1.
#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kDeterministicAttentionEnv;

namespace {

constexpr std::string_view kVariable = "NVTE_ALLOW_NONDETERMINISTIC_ALGO";

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  Resolved mode = resolve(job, "model.deterministic_mode");
  auto impl = transformer_impl(job);
  if (!truthy(mode).value_or(false) || impl != "transformer_engine") return;
  EnvLookup env = lookup_launch_env(job, kVariable);
  if (env.state == EnvState::Unknown || (env.state == EnvState::Set && !env.value)) return;
  // int(os.getenv(name, "1")) != 0
  if (env.state == EnvState::Set && env.value->find_first_not_of('0') == std::string::npos && !env.value->empty()) {
    return;
  }
  std::string setting = env.state == EnvState::Unset ? "is not set (TE's default is 1)"
                                                     : fmt::format("is {}", *env.value);
  Diagnostic diag = make_diagnostic(
      kDeterministicAttentionEnv,
      fmt::format("deterministic_mode is on but {} {}: Megatron-Core's TE attention raises \"deterministic_mode is "
                  "on and we are using DotProductAttention from Transformer Engine, but "
                  "NVTE_ALLOW_NONDETERMINISTIC_ALGO is not 0\" when the model is built",
                  kVariable, setting),
      env.state == EnvState::Set ? primary_span(env.where) : span_for(mode));
  if (env.state == EnvState::Set) diag.notes.push_back(note_for(mode));
  if (env.from_config) diag.notes.push_back(note_for(env, kVariable));
  report(out, std::move(diag),
         fmt::format("export {}=0 (Megatron Bridge's deterministic recipes set it in env_vars)", kVariable));
}

}  // namespace

extern const RuleInfo kDeterministicAttentionEnv = {
    .code = "MB019",
    .name = "deterministic-attention-env",
    .group = RuleGroup::Optimizer,
    .severity = Severity::Error,
    .summary = "deterministic_mode with Transformer Engine attention needs NVTE_ALLOW_NONDETERMINISTIC_ALGO=0",
    .doc = R"md(Transformer Engine picks fused-attention kernels that are not bit-reproducible unless
`NVTE_ALLOW_NONDETERMINISTIC_ALGO=0` (the default, when unset, is 1). Megatron-Core's
`TEDotProductAttention` refuses to build a deterministic model otherwise: with
`deterministic_mode` on it raises `RuntimeError` ("deterministic_mode is on and we are using
DotProductAttention from Transformer Engine, but NVTE_ALLOW_NONDETERMINISTIC_ALGO is not 0.
Currently set to: not set."), in Megatron-LM and Megatron Bridge alike, after the job got its
nodes. Megatron Bridge's deterministic recipes put `NVTE_ALLOW_NONDETERMINISTIC_ALGO: 0` (with
`NCCL_ALGO` and `CUBLAS_WORKSPACE_CONFIG`) into `env_vars`.

The environment is read from the launch script and the config's `env_vars` (the shell wins);
without a launch script, or when the recipe may set the variable itself, the rule is silent.)md",
    .bad = {"launch.sh",
     "#!/bin/bash\nexport NVTE_ALLOW_NONDETERMINISTIC_ALGO=1\n"
     "torchrun --nproc-per-node 8 scripts/training/run_recipe.py \\\n"
     "    --recipe qwen3_8b_pretrain_config \\\n    model.deterministic_mode=true\n",
     "launch.sh --nodes 1"},
    .good = {.content =
     "#!/bin/bash\nexport NVTE_ALLOW_NONDETERMINISTIC_ALGO=0\n"
     "torchrun --nproc-per-node 8 scripts/training/run_recipe.py \\\n"
     "    --recipe qwen3_8b_pretrain_config \\\n    model.deterministic_mode=true\n"},
    .check = check,
    .checks = "MC L4",
};

}  // namespace mblint
