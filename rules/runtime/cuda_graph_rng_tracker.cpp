// A captured CUDA graph replays the random-number state it was captured
// with unless the RNG is TransformerEngine's graph-safe tracker. Megatron
// Bridge's model provider asserts the tracker is on; Megatron-LM turns it on
// by itself.
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kCudaGraphRngTracker;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (job.dialect != Dialect::Bridge) return;  // Megatron-LM enables it with a warning
  CudaGraphs graphs = cuda_graphs(job);
  if (!graphs.enabled()) return;
  // ConfigContainer.validate() turns both on when either is on.
  Setting model = read_flag(job, "model.use_te_rng_tracker");
  Setting rng = read_flag(job, "rng.te_rng_tracker");
  if (!model.value || !rng.value || *model.value || *rng.value) return;
  Diagnostic diag = make_diagnostic(
      kCudaGraphRngTracker,
      fmt::format("cuda_graph_impl {} needs TransformerEngine's RNG tracker, but model.use_te_rng_tracker and "
                  "rng.te_rng_tracker are both false",
                  *graphs.impl.value),
      first_span(job, {span_for(graphs.impl), span_for(model)}));
  diag.notes.push_back(note_for(model));
  diag.notes.push_back(note_for(rng));
  report(out, std::move(diag),
         "set model.use_te_rng_tracker to true (Megatron Bridge then sets rng.te_rng_tracker too)",
         {flag_fix(job, model, true), text_fix(job, graphs.impl, "none")});
}

}  // namespace

extern const RuleInfo kCudaGraphRngTracker = {
    .code = "MB813",
    .name = "cuda-graph-rng-tracker",
    .group = RuleGroup::Runtime,
    .severity = Severity::Error,
    .summary = "CUDA graphs under Megatron Bridge need the TransformerEngine RNG tracker",
    .doc = R"md(Dropout inside a captured CUDA graph must draw from a random-number generator whose state the
graph can advance: TransformerEngine's tracker. Megatron Bridge's GPT and hybrid model providers
assert it when the model is built with any `cuda_graph_impl` other than `none`: "Transformer
engine's RNG tracker is required for cudagraphs, it can be enabled with use_te_rng_tracker=True".
`ConfigContainer.validate()` first turns both `model.use_te_rng_tracker` and `rng.te_rng_tracker`
on when either is on, so the job fails only when both are false.

Megatron-LM instead switches `--te-rng-tracker` on by itself ("te_rng_tracker is not enabled,
enabling it for CUDA graphs"), so this rule is silent there.)md",
    .bad = {"config.yaml",
     "_target_: megatron.bridge.training.config.ConfigContainer\nmodel:\n  cuda_graph_impl: transformer_engine\n"
     "  use_te_rng_tracker: false\nrng:\n  te_rng_tracker: false\n",
     "config.yaml"},
    .good = {.content =
     "_target_: megatron.bridge.training.config.ConfigContainer\nmodel:\n  cuda_graph_impl: transformer_engine\n"
     "  use_te_rng_tracker: true\nrng:\n  te_rng_tracker: false\n"},
    .check = check,
    .checks = "PS 67",
};

}  // namespace mblint
