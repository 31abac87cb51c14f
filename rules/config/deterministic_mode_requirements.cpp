// Megatron Bridge's deterministic mode: no cross-entropy fusion, and an
// NCCL all-reduce algorithm that is reproducible.
#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kDeterministicModeRequirements;

namespace {

constexpr std::string_view kAlgorithms[] = {"Tree", "Ring", "CollnetDirect", "CollnetChain", "^NVLS"};

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (!is_bridge_job(job)) return;
  Resolved mode = resolve(job, "model.deterministic_mode");
  if (!is_on(mode)) return;
  Resolved fusion = resolve(job, "model.cross_entropy_loss_fusion");
  if (is_on(fusion)) {
    report(out,
           finding(kDeterministicModeRequirements,
                   "deterministic_mode with cross_entropy_loss_fusion: Megatron Bridge asserts \"Cross "
                   "Entropy Fusion is currently not deterministic.\"",
                   {&fusion, &mode}),
           "set model.cross_entropy_loss_fusion to false");
  }
  EnvLookup algo = lookup_launch_env(job, "NCCL_ALGO");
  if (algo.state == EnvState::Unknown || (algo.state == EnvState::Set && !algo.value)) return;
  if (algo.state == EnvState::Set) {
    for (std::string_view allowed : kAlgorithms) {
      if (*algo.value == allowed) return;
    }
  }
  Diagnostic diag = make_diagnostic(
      kDeterministicModeRequirements,
      fmt::format("deterministic_mode needs NCCL_ALGO set to Tree, Ring, CollnetDirect, CollnetChain or ^NVLS, but it "
                  "{}: Megatron Bridge asserts \"NCCL_ALGO must be one of ('Tree', 'Ring', 'CollnetDirect', "
                  "'CollnetChain', '^NVLS').\"",
                  algo.state == EnvState::Unset ? std::string("is not set") : fmt::format("is {}", *algo.value)),
      algo.state == EnvState::Set ? primary_span(algo.where) : span_for(mode));
  if (algo.state == EnvState::Set) diag.notes.push_back(note_for(mode));
  if (algo.from_config) diag.notes.push_back(note_for(algo, "NCCL_ALGO"));
  report(out, std::move(diag),
         "export NCCL_ALGO=Ring (or add it to env_vars, as Megatron Bridge's deterministic recipes do)");
}

}  // namespace

extern const RuleInfo kDeterministicModeRequirements = {
    .code = "MB971",
    .name = "deterministic-mode-requirements",
    .group = RuleGroup::Config,
    .severity = Severity::Error,
    .summary = "deterministic_mode with cross-entropy fusion, or without a reproducible NCCL_ALGO",
    .doc = R"md(`model.deterministic_mode` asks for bit-reproducible training. Megatron Bridge's
`_validate_and_apply_deterministic_mode` (`training/config.py`) asserts at start-up:

* "Cross Entropy Fusion is currently not deterministic." — `cross_entropy_loss_fusion` (on by
  default in Megatron-Core) must be off;
* "NCCL_ALGO must be one of ('Tree', 'Ring', 'CollnetDirect', 'CollnetChain', '^NVLS')." — the
  variable must be set (NCCL's own choice, NVLS included, is not reproducible).

Megatron Bridge's `--deterministic` flag and deterministic recipes apply both (fusion off,
`NCCL_ALGO: Ring` in `env_vars`, together with `NVTE_ALLOW_NONDETERMINISTIC_ALGO: 0`, see
`deterministic-attention-env`). The environment is read from the launch script and the config's
`env_vars`; without a launch script the NCCL_ALGO part is not checked.)md",
    .bad = {"override.yaml", "model:\n  deterministic_mode: true\n  cross_entropy_loss_fusion: true\n",
     "override.yaml --recipe qwen3_8b_pretrain_config --nodes 2 --gpus-per-node 8"},
    .good = {.content = "model:\n  deterministic_mode: true\n  cross_entropy_loss_fusion: false\n"},
    .check = check,
    .checks = "BR V27",
};

}  // namespace mblint
