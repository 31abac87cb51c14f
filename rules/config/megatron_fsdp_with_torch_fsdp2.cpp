// Megatron-FSDP and Torch FSDP2 are two ways to shard the same model.
#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kMegatronFsdpWithTorchFsdp2;

namespace {

constexpr BothOn kPair = {
    .first = "dist.use_torch_fsdp2",
    .second = "dist.use_megatron_fsdp",
    .message =
        "dist.use_megatron_fsdp and dist.use_torch_fsdp2 are both true: Megatron Bridge raises "
        "\"use_megatron_fsdp and use_torch_fsdp2 are mutually exclusive.\"",
    .help = "keep one of them (NVIDIA's FSDP notes recommend Megatron-FSDP)",
};

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (is_bridge_job(context.job)) check_both_on(context.job, kMegatronFsdpWithTorchFsdp2, kPair, out);
}

}  // namespace

extern const RuleInfo kMegatronFsdpWithTorchFsdp2 = {
    .code = "MB963",
    .name = "megatron-fsdp-with-torch-fsdp2",
    .group = RuleGroup::Config,
    .severity = Severity::Error,
    .summary = "Megatron-FSDP and Torch FSDP2 both enabled",
    .doc = R"md(Megatron-FSDP (`dist.use_megatron_fsdp`) and PyTorch FSDP2 (`dist.use_torch_fsdp2`) each wrap
the model to shard parameters, gradients and optimizer state; only one can. Megatron Bridge's
`ConfigContainer.validate()` raises `ValueError("use_megatron_fsdp and use_torch_fsdp2 are mutually
exclusive.")` at start-up. Both switches are read from `dist`, as Bridge does.)md",
    .bad = {"override.yaml", "dist:\n  use_megatron_fsdp: true\n  use_torch_fsdp2: true\n",
     "override.yaml --recipe qwen3_8b_pretrain_config --nodes 2 --gpus-per-node 8"},
    .good = {.content = "dist:\n  use_megatron_fsdp: true\n  use_torch_fsdp2: false\n"},
    .check = check,
    .checks = "BR V18, PS 73",
};

}  // namespace mblint
