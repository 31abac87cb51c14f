// recompute_num_layers counts layers inside one model chunk (the layers a
// pipeline stage holds, divided again by the virtual stages). Megatron-Core
// never checks its range: beyond the chunk it means "every layer", and zero
// or less recomputes nothing (block) or never finishes the forward pass
// (uniform steps through the chunk by this count).
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kRecomputeNumLayersRange;

namespace {

struct Chunk {
  int64_t layers = 0;
  std::string how;
};

// Layers per model chunk for an even split; nullopt for uneven splits and
// explicit layouts (their chunks differ).
std::optional<Chunk> chunk_layers(const Derived& d) {
  if (d.pipeline_layout || d.first_stage_layers.known() || d.last_stage_layers.known()) return std::nullopt;
  if (d.account_for_embedding.value.value_or(false) || d.account_for_loss.value.value_or(false)) return std::nullopt;
  if (!d.num_layers.known() || !d.pipeline_parallel.known() || !d.virtual_pipeline.known()) return std::nullopt;
  int64_t pp = *d.pipeline_parallel;
  int64_t vpp = std::max<int64_t>(1, *d.virtual_pipeline);
  if (pp <= 0 || *d.num_layers % (pp * vpp) != 0) return std::nullopt;
  Chunk c;
  c.layers = *d.num_layers / (pp * vpp);
  c.how = vpp > 1 ? fmt::format("{} layers / pipeline_model_parallel_size {} / virtual_pipeline_model_parallel_size {}",
                                *d.num_layers, pp, vpp)
                  : fmt::format("{} layers / pipeline_model_parallel_size {}", *d.num_layers, pp);
  return c;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (!context.job.trains) return;  // only training builds the optimizer and recomputes
  const Job& job = context.job;
  Choice granularity = read_choice(job, "model.recompute_granularity");
  Choice method = read_choice(job, "model.recompute_method");
  Quantity n = config_int(job, "model.recompute_num_layers");
  if (!granularity.is("full") || !n.known()) return;
  if (!method.is("uniform") && !method.is("block")) return;
  Diagnostic diag = make_diagnostic(kRecomputeNumLayersRange, "", first_span(job, {span_for(n)}));
  if (*n <= 0) {
    bool uniform = method.is("uniform");
    diag.severity = uniform ? Severity::Error : Severity::Warning;
    diag.message = uniform ? fmt::format("recompute_num_layers {} with recompute_method uniform: the forward pass "
                                         "steps through the layers by {} and never finishes",
                                         *n, *n)
                           : fmt::format("recompute_num_layers {} with recompute_method block recomputes no layer: "
                                         "full recompute is on but saves no memory",
                                         *n);
    diag.notes.push_back(note_for(method));
    report(out, std::move(diag), "use recompute_num_layers 1 or more", {int_fix(job, n, 1)});
    return;
  }
  std::optional<Chunk> chunk = chunk_layers(context.derived);
  if (!chunk || *n <= chunk->layers) return;
  diag.severity = Severity::Note;
  diag.message = fmt::format("recompute_num_layers {} is more than the {} layers of a model chunk ({}): every layer "
                             "is recomputed, as with {}",
                             *n, chunk->layers, chunk->how, chunk->layers);
  add_notes(diag, {&context.derived.num_layers, &context.derived.pipeline_parallel}, nullptr);
  if (*context.derived.virtual_pipeline > 1) add_notes(diag, {&context.derived.virtual_pipeline}, nullptr);
  report(out, std::move(diag), fmt::format("use recompute_num_layers {} to say what the run does", chunk->layers),
         {int_fix(job, n, chunk->layers, FixSafety::Safe)});
}

}  // namespace

extern const RuleInfo kRecomputeNumLayersRange = {
    .code = "MB803",
    .name = "recompute-num-layers-range",
    .group = RuleGroup::Runtime,
    .severity = Severity::Warning,
    .summary = "recompute_num_layers outside 1..layers per model chunk: a hang, no recompute, or more than there is",
    .doc = R"md(With full recompute, `recompute_num_layers` counts layers inside one model chunk: the
`num_layers / PP` layers of a pipeline stage, divided again by VPP with an interleaved schedule.
Megatron-Core (`megatron/core/recompute.py`, every release) does not check its range:

* `uniform` steps through the chunk `recompute_num_layers` layers at a time, so 0 or a negative
  count never ends the loop and the first forward pass hangs (**error**);
* `block` recomputes the first `recompute_num_layers` layers, so 0 recomputes nothing and full
  recompute saves no memory (**warning**);
* a count above the chunk's layers recomputes every layer, exactly as the chunk size would
  (**note**: the config overstates; setting it to the chunk size is safe).

Uneven pipeline splits and explicit layouts have chunks of different sizes; only the lower bound
is checked for them.)md",
    .bad = {"override.yaml",
     "model:\n  recompute_granularity: full\n  recompute_method: uniform\n  recompute_num_layers: 0\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content =
     "model:\n  recompute_granularity: full\n  recompute_method: uniform\n  recompute_num_layers: 1\n"},
    .check = check,
    .checks = "MC I6",
};

}  // namespace mblint
