// micro_batch_size and global_batch_size must be positive numbers; null is
// an error under Megatron Bridge and, for the global batch, a silent default
// under Megatron-LM.
#include "rules/support/pipeline_support.h"

namespace mblint {

extern const RuleInfo kBatchSizeNotPositive;

namespace {

// null as written (a trimmed dump that leaves the field out says nothing).
bool is_null(const Job& job, const Quantity& q) {
  const ConfigValue* node = config_node(job, q.path);
  return node && node->is_null();
}

void report(const Quantity& q, std::string message, std::string help, std::optional<int64_t> fix,
            std::vector<Diagnostic>& out) {
  Diagnostic diag = finding_at(kBatchSizeNotPositive, std::move(message), q, {&q});
  if (!span_for(q).valid()) diag.notes.push_back(note_for(q));
  diag.help = std::move(help);
  if (fix) diag.fixes.push_back(set_value_fix(q, *fix));
  out.push_back(std::move(diag));
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  const Derived& d = context.derived;
  const Quantity& mbs = d.micro_batch_size;
  const Quantity& gbs = d.global_batch_size;
  bool megatron_lm = job.dialect == Dialect::MegatronLM;
  if (mbs.known() && *mbs <= 0) {
    report(mbs, fmt::format("micro_batch_size is {}; it must be at least 1", *mbs),
           "set micro_batch_size to 1 or more (the samples one forward/backward pass processes per rank)", 1, out);
  } else if (is_null(job, mbs)) {
    report(mbs,
           megatron_lm ? "--micro-batch-size is not given: Megatron-LM asserts it is set"
                       : "micro_batch_size is null: Megatron Bridge needs it (the eval micro batch and the "
                         "microbatch calculator are derived from it)",
           "set micro_batch_size, e.g. 1", std::nullopt, out);
  }
  if (gbs.known() && *gbs <= 0) {
    report(gbs, fmt::format("global_batch_size is {}; a step must process at least one sample", *gbs),
           "set global_batch_size to a positive multiple of micro_batch_size x data-parallel size", std::nullopt, out);
  } else if (!megatron_lm && is_null(job, gbs) && !config_text(job, "train.step_batch_size_schedule").value) {
    std::optional<int64_t> suggestion;
    if (mbs.known() && *mbs > 0 && d.batch_data_parallel.known()) suggestion = *mbs * *d.batch_data_parallel;
    report(gbs,
           "global_batch_size is null: Megatron Bridge does not default it (Megatron-LM would use micro_batch_size x "
           "data-parallel size) and stops at start-up",
           suggestion ? fmt::format("set global_batch_size, e.g. {} (micro_batch_size x data-parallel size) or a "
                                    "multiple of it",
                                    *suggestion)
                      : "set global_batch_size to a multiple of micro_batch_size x data-parallel size",
           std::nullopt, out);
  }
}

}  // namespace

extern const RuleInfo kBatchSizeNotPositive = {
    .code = "MB603",
    .name = "batch-size-not-positive",
    .group = RuleGroup::Batch,
    .severity = Severity::Error,
    .summary = "micro_batch_size and global_batch_size must be set and positive",
    .doc = R"md(Megatron-LM's `validate_args` asserts `micro_batch_size` is given and above 0, and that the
global batch is above 0; Megatron-Core's microbatch calculator then needs at least one
microbatch ("number of microbatches should be at least 1, got 0"), which a global batch of 0
or less never gives.

A null `global_batch_size` differs by program: Megatron-LM silently uses `micro_batch_size x
data-parallel size` (one microbatch per rank and step) and prints "setting global batch size to
N"; Megatron Bridge does not default it: `ConfigContainer.validate()` asserts "train.global_batch_size
must be set when eval_global_batch_size is not explicitly configured", and the microbatch
calculator asserts "--global-batch-size is required" (Bridge does not pass a step batch-size
schedule to it). A null `micro_batch_size` fails under Bridge the same way ("train.micro_batch_size
must be set ...").)md",
    .bad = {"override.yaml", "train:\n  micro_batch_size: 0\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "train:\n  micro_batch_size: 1\n"},
    .check = check,
    .checks = "MC F1, MC F2",
};

}  // namespace mblint
