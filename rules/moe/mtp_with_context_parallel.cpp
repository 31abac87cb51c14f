// Before Megatron-Core 0.14 multi-token prediction did not shift its labels
// across context-parallel chunks.
#include "rules/support/moe_support.h"

namespace mblint {

extern const RuleInfo kMtpWithContextParallel;

namespace {

using namespace moe;

const Version kSupported{0, 14, 0};

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  const Quantity& cp = context.derived.context_parallel;
  if (job.versions.megatron_core >= kSupported || !splits(cp)) return;
  Field mtp = read_field(job, "model.mtp_num_layers");
  std::optional<int64_t> layers = mtp.integer();
  if (!layers || *layers <= 0) return;
  Field cp_field = from_quantity(cp);
  std::string version = to_string(job.versions.megatron_core);
  bool asserts = runs_validate_args(job);
  Diagnostic diag = diagnostic_at(
      kMtpWithContextParallel,
      asserts ? fmt::format("mtp_num_layers {} with context_parallel_size {} on Megatron-Core {}: validate_args asserts "
                            "\"Multi-Token Prediction (MTP) is not supported with Context Parallelism.\"",
                            *layers, *cp, version)
              : fmt::format("mtp_num_layers {} with context_parallel_size {} on Megatron-Core {}: the MTP layers shift "
                            "their tokens within each rank's sequence chunk only, so the MTP loss is wrong at every "
                            "chunk boundary",
                            *layers, *cp, version),
      {&mtp, &cp_field});
  if (!asserts) diag.severity = Severity::Warning;
  report(out, std::move(diag),
         "use Megatron-Core 0.14 or newer (MTP supports context parallelism there), or context_parallel_size 1",
         {set_value_fix(cp, 1)});
}

}  // namespace

extern const RuleInfo kMtpWithContextParallel = {
    .code = "MB722",
    .name = "mtp-with-context-parallel",
    .group = RuleGroup::Moe,
    .severity = Severity::Error,
    .summary = "before Megatron-Core 0.14, multi-token prediction does not work with context parallelism",
    .doc = R"md(Multi-token prediction trains extra heads on labels shifted by one more token per MTP layer.
With context parallelism each rank holds chunks of the sequence, so the shift must cross ranks.
Megatron-Core added that (`roll_tensor` over the CP group) in 0.14. Up to 0.13:

* Megatron-LM's `validate_args` asserts "Multi-Token Prediction (MTP) is not supported with Context
  Parallelism." (an error);
* Megatron Bridge and NeMo do not run `validate_args`: the job trains, but the shift wraps around
  inside each chunk and the MTP loss is computed on wrong labels at every chunk boundary (a warning).

Pass `--megatron-core-version` to match the installed release; the default (newest) is not
affected.)md",
    .bad = {"override.yaml",
     "model:\n  mtp_num_layers: 1\n  context_parallel_size: 2\n  seq_length: 4096\ndataset:\n  seq_length: 4096\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 4 "
     "--megatron-core-version 0.13.0"},
    .good = {"override.yaml",
     "model:\n  mtp_num_layers: 1\n  context_parallel_size: 2\n  seq_length: 4096\ndataset:\n  seq_length: 4096\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 4 "
     "--megatron-core-version 0.14.0"},
    .check = check,
    .checks = "MC H6",
};

}  // namespace mblint
