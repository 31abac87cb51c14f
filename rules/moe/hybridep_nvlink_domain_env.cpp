// HybridEP needs to know how many ranks of its group share one NVLink domain
// (NUM_OF_HYBRID_EP_RANKS_PER_NVLINK_DOMAIN); a wrong count mis-plans its
// intra- and inter-domain transfers.
#include "rules/support/config_support.h"
#include "rules/support/moe_support.h"

namespace mblint {

extern const RuleInfo kHybridepNvlinkDomainEnv;

namespace {

using namespace moe;

constexpr std::string_view kVariable = "NUM_OF_HYBRID_EP_RANKS_PER_NVLINK_DOMAIN";

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  const Derived& d = context.derived;
  Field dispatcher = read_field(job, "model.moe_token_dispatcher_type");
  Field backend = read_field(job, "model.moe_flex_dispatcher_backend");
  if (!is_moe(d) || dispatcher.text() != "flex" || backend.text() != "hybridep") return;
  NvlinkDomain nvlink = nvlink_domain(job, d);
  if (!d.expert_parallel.known() || !d.expert_tensor_parallel.known() || !nvlink.size.known() || nvlink.assumed) {
    return;
  }
  EnvLookup env = lookup_env(job, kVariable);
  std::optional<int64_t> set = env_int(env);
  if (!set) return;
  // The HybridEP group is the expert TP x EP group, contiguous in Megatron's rank order.
  int64_t group = *d.expert_tensor_parallel * *d.expert_parallel;
  int64_t domain = *nvlink.size;
  int64_t expected = std::min(group, domain);
  if (*set == expected) return;
  Diagnostic diag = make_diagnostic(
      kHybridepNvlinkDomainEnv,
      fmt::format("{}={} but each HybridEP group (expert_tensor_parallel_size {} x expert_model_parallel_size {} = {} "
                  "ranks) has {} ranks per NVLink domain of {}: HybridEP plans its NVLink and network transfers from "
                  "this count",
                  kVariable, *set, *d.expert_tensor_parallel, *d.expert_parallel, group, expected, domain),
      primary_span(env.where));
  if (env.from_config && env.where.layer == Layer::Recipe && !env.where.origin.empty()) {
    diag.notes.push_back(Note{env.where.origin, primary_span(env.where)});
  }
  add_notes(diag, {&d.expert_parallel, &d.expert_tensor_parallel, &nvlink.size}, nullptr);
  diag.help = fmt::format("set {}={} (NVIDIA's performance scripts use min(EP, 8) on 8-GPU nodes and EP on NVL72)",
                          kVariable, expected);
  Fix fix;
  fix.description = fmt::format("set {} to {}", kVariable, expected);
  fix.safety = FixSafety::Unsafe;
  diag.fixes.push_back(std::move(fix));
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kHybridepNvlinkDomainEnv = {
    .code = "MB728",
    .name = "hybridep-nvlink-domain-env",
    .group = RuleGroup::Moe,
    .severity = Severity::Warning,
    .summary = "NUM_OF_HYBRID_EP_RANKS_PER_NVLINK_DOMAIN does not match the NVLink domain",
    .doc = R"md(The HybridEP backend of the flex dispatcher moves tokens over NVLink inside an NVLink domain
and over the network between domains. It learns the topology from the environment variable
`NUM_OF_HYBRID_EP_RANKS_PER_NVLINK_DOMAIN`: how many ranks of one dispatch group (the expert
TP x EP group, contiguous in Megatron's rank order) share an NVLink domain. NVIDIA's performance
scripts set it to `min(EP, 8)` on 8-GPU nodes (H100, B200, B300) and to `EP` on NVL72 racks (GB200,
GB300, VR200), and refuse EP above 72 there; the skill notes warn that a count that does not match
the topology costs performance and sometimes correctness.

mblint compares the value exported by the launch script (or set in the config's `env_vars`, or in
the recipe's own `env_vars`, which Megatron Bridge applies only when the variable is not already
set) with `min(ETP x EP, NVLink domain)`. The NVLink domain comes from the GPU type (`--gpu`) or
the job's own `NVLINK_DOMAIN_SIZE` (the recipe's included); without either the rule is silent.)md",
    .bad = {"launch.sh",
     "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --gres=gpu:h100:8\n"
     "export NUM_OF_HYBRID_EP_RANKS_PER_NVLINK_DOMAIN=4\n"
     "srun python scripts/training/run_recipe.py --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config "
     "model.moe_token_dispatcher_type=flex model.moe_flex_dispatcher_backend=hybridep model.expert_model_parallel_size=8\n",
     "launch.sh"},
    .good = {.content =
     "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --gres=gpu:h100:8\n"
     "export NUM_OF_HYBRID_EP_RANKS_PER_NVLINK_DOMAIN=8\n"
     "srun python scripts/training/run_recipe.py --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config "
     "model.moe_token_dispatcher_type=flex model.moe_flex_dispatcher_backend=hybridep model.expert_model_parallel_size=8\n"},
    .check = check,
    .checks = "PS 56",
};

}  // namespace mblint
