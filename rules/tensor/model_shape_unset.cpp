// A model whose shape is 0: TransformerConfig's defaults, which a bare model
// provider (vanilla_gpt's GPTModelProvider()) keeps until the launch sets them.
// With no attention heads and no kv_channels the head dimension is a division
// by zero before the first step.
#include "rules/support/parallel_support.h"
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kModelShapeUnset;

namespace {

bool zero(const Quantity& q) { return q.known() && *q <= 0; }

std::string zero_names(const Job& job, const std::vector<const Quantity*>& zeros) {
  std::vector<std::string> names;
  for (const Quantity* q : zeros) names.push_back(setting_name(job, q->path));
  return fmt::format("{} {} 0", join_names(names), zeros.size() == 1 ? "is" : "are");
}

// What stops the job: the program that divides by the head count.
std::string division_by_zero(const Job& job) {
  if (job.dialect == Dialect::MegatronLM) {
    return "Megatron-LM's validate_args checks hidden_size % num_attention_heads when --kv-channels is not given, "
           "a ZeroDivisionError at start-up";
  }
  return "Megatron-Core's TransformerConfig computes the head dimension hidden_size // num_attention_heads when "
         "kv_channels is unset, a ZeroDivisionError when the model is built, before the first step";
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  const Derived& d = context.derived;
  std::vector<const Quantity*> zeros;
  for (const Quantity* q : {&d.num_layers, &d.hidden_size, &d.num_attention_heads}) {
    if (zero(*q)) zeros.push_back(q);
  }
  if (zeros.empty()) return;
  // At the head count when it is the value that breaks the build.
  const Quantity& primary = zero(d.num_attention_heads) ? d.num_attention_heads : *zeros.front();
  bool divides_by_zero = zero(d.num_attention_heads) && kv_channels_unset(job).has_value();
  std::string message =
      divides_by_zero ? fmt::format("{}: {}", zero_names(job, zeros), division_by_zero(job))
                      : fmt::format("{}: the model has no {}", zero_names(job, zeros),
                                    zero(d.num_layers)            ? "transformer layers"
                                    : zero(d.num_attention_heads) ? "attention heads"
                                                                  : "width");
  Diagnostic diag = make_diagnostic(kModelShapeUnset, std::move(message), span_for(primary));
  if (!divides_by_zero) diag.severity = Severity::Warning;
  for (const Quantity* q : zeros) {
    if (q != &primary) diag.notes.push_back(note_for(*q));
  }
  std::string help =
      job.dialect == Dialect::MegatronLM
          ? "pass --num-layers, --hidden-size and --num-attention-heads with the model's values"
          : "set the model's shape: --set model.num_layers=N model.hidden_size=H model.num_attention_heads=A, or "
            "the same keys in the override YAML";
  report(out, std::move(diag), std::move(help));
}

}  // namespace

extern const RuleInfo kModelShapeUnset = {
    .code = "MB215",
    .name = "model-shape-unset",
    .group = RuleGroup::Tensor,
    .severity = Severity::Error,
    .summary = "the model's num_layers, hidden_size or num_attention_heads is 0: no shape was set",
    .doc = R"md(Megatron-Core's `TransformerConfig` gives `num_layers`, `hidden_size` and
`num_attention_heads` a default of 0 (`megatron/core/transformer/transformer_config.py` at
2a75ac12c54b). A model provider that sets no shape keeps them: Megatron Bridge's
`vanilla_gpt_pretrain_1gpu_h100_bf16_config` builds a bare `GPTModelProvider()` for Megatron-LM
correlation runs (`src/megatron/bridge/recipes/gpt/h100/vanilla_gpt.py`, 067f987df03b) and expects
the launch to pass the shape.

* With `num_attention_heads` 0 and `kv_channels` unset, `TransformerConfig.__post_init__` computes
  `kv_channels = hidden_size // num_attention_heads`: a `ZeroDivisionError` when the model is built,
  after the allocation waited in the queue (an **error**). Megatron-LM's `validate_args` fails the
  same way on `hidden_size % num_attention_heads`.
* Otherwise (`num_layers` or `hidden_size` 0, or heads 0 with `kv_channels` set) nothing checks
  it: the model has no transformer layers, no width or no heads (a **warning**).

There is no fix: the shape is the model's to choose.)md",
    .bad = {"override.yaml",
            "train:\n  train_iters: 10\n",
            "override.yaml --recipe vanilla_gpt_pretrain_1gpu_h100_bf16_config --nodes 1 --gpus-per-node 1 --gpu h100"},
    .good = {.content = "model:\n  num_layers: 2\n  hidden_size: 256\n  num_attention_heads: 4\ntrain:\n"
                        "  train_iters: 10\n"},
    .check = check,
    .checks = "MC B5",
};

}  // namespace mblint
