// distribute_saved_activations shards the checkpointed inputs of recomputed
// layers across the tensor-parallel group; sequence parallelism already
// shards them, and Megatron-Core refuses both at once.
#include "rules/support/parallel_support.h"

namespace mblint {

extern const RuleInfo kDistributeSavedActivationsWithSequenceParallel;

namespace {

// recompute_granularity: nullopt when unknown, "" when None.
std::optional<std::string> recompute_granularity(const Job& job) {
  const ConfigValue* node = find_path(job.config, "model.recompute_granularity");
  if (!node) {
    // The catalog records every recipe's granularity; dumps and Megatron-LM
    // default to None.
    if (job.recipe || job.config_complete || megatron_lm_command_line(job)) return std::string();
    return std::nullopt;
  }
  if (node->is_null()) return std::string();
  if (node->kind != ValueKind::String) return std::nullopt;
  return node->text;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  const Derived& d = context.derived;
  Setting distribute = config_bool(job, "model.distribute_saved_activations");
  if (!distribute.value || !*distribute.value) return;
  auto granularity = recompute_granularity(job);
  if (!granularity || granularity->empty()) return;  // only checked with recompute on
  if (sequence_parallel_runs(d) != true) return;
  Diagnostic diag = make_diagnostic(
      kDistributeSavedActivationsWithSequenceParallel,
      fmt::format("distribute_saved_activations is true with sequence parallelism (tensor_model_parallel_size {}): "
                  "Megatron-Core rejects it (\"distribute_saved_activations: True must be false when sequence "
                  "parallel is enabled\")",
                  *d.tensor_parallel),
      span_for(distribute).valid() ? span_for(distribute) : span_for(d.sequence_parallel));
  diag.notes.push_back(note_for(d.sequence_parallel));
  diag.notes.push_back(note_at("recompute_granularity", *granularity,
                               find_path(job.config, "model.recompute_granularity")->where));
  report(out, std::move(diag),
         "set distribute_saved_activations to false: sequence parallelism already shards those activations",
         {set_setting_fix(distribute, false, FixSafety::Unsafe)});
}

}  // namespace

extern const RuleInfo kDistributeSavedActivationsWithSequenceParallel = {
    .code = "MB304",
    .name = "distribute-saved-activations-with-sequence-parallel",
    .group = RuleGroup::Sequence,
    .severity = Severity::Error,
    .summary = "distribute_saved_activations cannot be combined with sequence parallelism",
    .doc = R"md(With activation recomputation, `distribute_saved_activations` splits each recomputed layer's saved
input across the tensor-parallel ranks. Sequence parallelism already keeps those activations
split along the sequence, so the two are exclusive: Megatron-Core's `TransformerConfig` raises
"distribute_saved_activations: True must be false when sequence parallel is enabled: True" while
the model config is finalized, whenever `recompute_granularity` is set. Megatron Bridge and
Megatron-LM both reach it (sequence parallelism at TP = 1 is turned off first, so that case
passes).)md",
    .bad = {"override.yaml",
     "model:\n  tensor_model_parallel_size: 2\n  context_parallel_size: 1\n  sequence_parallel: true\n"
     "  recompute_granularity: full\n  recompute_method: uniform\n  recompute_num_layers: 1\n"
     "  distribute_saved_activations: true\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content =
     "model:\n  tensor_model_parallel_size: 2\n  context_parallel_size: 1\n  sequence_parallel: true\n"
     "  recompute_granularity: full\n  recompute_method: uniform\n  recompute_num_layers: 1\n"
     "  distribute_saved_activations: false\n"},
    .check = check,
    .checks = "MC C7",
};

}  // namespace mblint
