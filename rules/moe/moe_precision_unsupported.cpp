// Megatron-LM up to Megatron-Core 0.15 restricted MoE precision in
// validate_args: grouped GEMM only in bf16, expert parallelism not in fp16.
#include "rules/support/moe_support.h"

namespace mblint {

extern const RuleInfo kMoePrecisionUnsupported;

namespace {

using namespace moe;

const Version kLifted{0, 16, 0};

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  const Derived& d = context.derived;
  if (!runs_validate_args(job) || job.versions.megatron_core >= kLifted) return;
  // A Megatron-LM launch: the precision is --bf16 / --fp16 themselves.
  Field bf16 = read_field(job, "model.bf16");
  Field fp16 = read_field(job, "model.fp16");
  Field grouped = read_field(job, "model.moe_grouped_gemm");
  if (grouped.boolean() == true && bf16.boolean() == false) {
    report(out,
           diagnostic_at(
               kMoePrecisionUnsupported,
               fmt::format(
                   "moe_grouped_gemm without bf16 on Megatron-Core {}: validate_args asserts \"Currently GroupedGEMM "
                   "for MoE only supports bf16 dtype.\" (lifted in 0.16)",
                   to_string(job.versions.megatron_core)),
               {&grouped, &bf16}),
           "train in bf16 (--bf16), or drop --moe-grouped-gemm", {set_field_fix(grouped, "false")});
  }
  if (fp16.boolean() == true && splits(d.expert_parallel)) {
    Field ep = from_quantity(d.expert_parallel);
    report(
        out,
        diagnostic_at(
            kMoePrecisionUnsupported,
            fmt::format("expert_model_parallel_size {} with fp16 on Megatron-Core {}: validate_args asserts \"Expert "
                        "parallelism is not supported with fp16 training.\" (lifted in 0.16)",
                        *d.expert_parallel, to_string(job.versions.megatron_core)),
            {&fp16, &ep}),
        "train in bf16 (--bf16), or use Megatron-Core 0.16 or newer", {set_value_fix(d.expert_parallel, 1)});
  }
}

}  // namespace

extern const RuleInfo kMoePrecisionUnsupported = {
    .code = "MB716",
    .name = "moe-precision-unsupported",
    .group = RuleGroup::Moe,
    .severity = Severity::Error,
    .summary = "Megatron-LM before Megatron-Core 0.16: grouped GEMM needs bf16, expert parallelism rejects fp16",
    .doc = R"md(Up to Megatron-Core 0.15, Megatron-LM's `validate_args` restricted MoE precision:

* `--moe-grouped-gemm` without `--bf16` asserts "Currently GroupedGEMM for MoE only supports bf16
  dtype.";
* `--expert-model-parallel-size` above 1 with `--fp16` asserts "Expert parallelism is not supported
  with fp16 training.".

Both were removed in 0.16 (together with the rule that an MoE model may not use a custom `--spec`,
which mblint does not read). They live in Megatron-LM's argument validation only: Megatron Bridge and
NeMo build `TransformerConfig` directly and never ran them, so the rule applies to Megatron-LM
launches with `--megatron-core-version` 0.15 or older. Grouped GEMM also needs compute capability 8.0
or newer; every GPU type mblint knows (A100 and later) has it.)md",
    .bad = {"launch.sh",
     "#!/bin/bash\ntorchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 4 --hidden-size 1024 "
     "--num-attention-heads 16 --seq-length 2048 --max-position-embeddings 2048 --micro-batch-size 1 "
     "--global-batch-size 8 --num-experts 8 --moe-grouped-gemm --fp16 --disable-bias-linear\n",
     "launch.sh --megatron-core-version 0.15.0"},
    .good = {"launch.sh",
     "#!/bin/bash\ntorchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 4 --hidden-size 1024 "
     "--num-attention-heads 16 --seq-length 2048 --max-position-embeddings 2048 --micro-batch-size 1 "
     "--global-batch-size 8 --num-experts 8 --moe-grouped-gemm --fp16 --disable-bias-linear\n",
     "launch.sh --megatron-core-version 0.16.0"},
    .check = check,
    .checks = "MC G20, MC G21",
};

}  // namespace mblint
