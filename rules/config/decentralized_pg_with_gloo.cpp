// Decentralized process groups are NCCL-only.
#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kDecentralizedPgWithGloo;

namespace {

constexpr BothOn kPair = {
    .first = "dist.use_decentralized_pg",
    .second = "dist.use_gloo_process_groups",
    .message =
        "dist.use_decentralized_pg with Gloo process groups: Megatron Bridge asserts \"Gloo process groups are "
        "not supported when use_decentralized_pg=True. Decentralized process groups only support NCCL "
        "backend.\"",
    .help = "set dist.use_gloo_process_groups to false (it defaults to true)",
};

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (is_bridge_job(context.job)) check_both_on(context.job, kDecentralizedPgWithGloo, kPair, out);
}

}  // namespace

extern const RuleInfo kDecentralizedPgWithGloo = {
    .code = "MB968",
    .name = "decentralized-pg-with-gloo",
    .group = RuleGroup::Config,
    .severity = Severity::Error,
    .summary = "dist.use_decentralized_pg needs dist.use_gloo_process_groups false",
    .doc = R"md(`dist.use_decentralized_pg` makes Megatron Bridge build its process groups itself instead of
through `parallel_state`, with NCCL only. `ConfigContainer.validate()` asserts "Gloo process groups
are not supported when use_decentralized_pg=True. Decentralized process groups only support NCCL
backend." Because `dist.use_gloo_process_groups` defaults to **true**, turning decentralized groups
on alone fails at start-up; turn Gloo off as well (and mind that the distributed optimizer then
needs a distributed checkpoint format, see `gloo-groups-required`).)md",
    .bad = {"override.yaml", "dist:\n  use_decentralized_pg: true\n",
     "override.yaml --recipe qwen3_8b_pretrain_config --nodes 2 --gpus-per-node 8"},
    .good = {.content = "dist:\n  use_decentralized_pg: true\n  use_gloo_process_groups: false\n"},
    .check = check,
    .checks = "BR V24",
};

}  // namespace mblint
