// Megatron-LM accepts multi-token prediction only with rotary or no
// position embeddings.
#include "rules/support/moe_support.h"

namespace mblint {

extern const RuleInfo kMtpPositionEmbeddingUnsupported;

namespace {

using namespace moe;

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (!runs_validate_args(job)) return;
  Field mtp = read_field(job, "model.mtp_num_layers");
  Field position = read_field(job, "model.position_embedding_type");
  std::optional<int64_t> layers = mtp.integer();
  std::optional<std::string> type = position.text();
  if (!layers || *layers <= 0 || !type || *type == "rope" || *type == "none") return;
  report(out,
         diagnostic_at(
             kMtpPositionEmbeddingUnsupported,
             fmt::format(
                 "mtp_num_layers {} with {} position embeddings: validate_args asserts \"Multi-Token Prediction (MTP) "
                 "is not supported with {} position embedding type.\" (rope and none are supported)",
                 *layers, *type, *type),
             {&position, &mtp}),
         "use --position-embedding-type rope (or none), or drop --mtp-num-layers", {set_field_fix(position, "rope")});
}

}  // namespace

extern const RuleInfo kMtpPositionEmbeddingUnsupported = {
    .code = "MB721",
    .name = "mtp-position-embedding-unsupported",
    .group = RuleGroup::Moe,
    .severity = Severity::Error,
    .summary = "Megatron-LM: multi-token prediction needs rope or no position embeddings",
    .doc = R"md(Multi-token prediction (MTP, `--mtp-num-layers`) adds prediction heads for further tokens.
Megatron-LM's `validate_args` asserts "Multi-Token Prediction (MTP) is not supported with X position
embedding type. The supported position embedding types are rope and none." for any other type. A
later check in the same function would also admit `learned_absolute` and `mrope`, but the stricter
one runs first. Megatron-LM's default position embedding is `learned_absolute`, so an MTP launch
without `--position-embedding-type rope` stops at start-up.

Megatron Bridge and NeMo do not run `validate_args`; their MTP models (DeepSeek-V3, GLM-4.5, Qwen3-Next)
use RoPE or YaRN and are not checked by this rule.)md",
    .bad = {"launch.sh",
     "#!/bin/bash\ntorchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 4 --hidden-size 1024 "
     "--num-attention-heads 16 --seq-length 2048 --max-position-embeddings 2048 --micro-batch-size 1 "
     "--global-batch-size 8 --mtp-num-layers 1 --bf16\n",
     "launch.sh"},
    .good = {.content =
     "#!/bin/bash\ntorchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 4 --hidden-size 1024 "
     "--num-attention-heads 16 --seq-length 2048 --max-position-embeddings 2048 --micro-batch-size 1 "
     "--global-batch-size 8 --mtp-num-layers 1 --position-embedding-type rope --bf16\n"},
    .check = check,
    .checks = "MC H1",
};

}  // namespace mblint
