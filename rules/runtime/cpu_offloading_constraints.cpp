// Activation CPU offloading (cpu_offloading) moves layer activations to host
// memory between forward and backward. Megatron-Core supports it only
// without pipeline parallelism, without recompute, without per-layer CUDA
// graphs and for fewer layers than the model has.
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kCpuOffloadingConstraints;

namespace {

// cpu_offloading as the running program sees it: Megatron-LM turns it on
// with --cpu-offloading-num-layers > 0.
Setting cpu_offloading(const Job& job, const Quantity& layers) {
  if (job.dialect != Dialect::MegatronLM) return read_flag(job, "model.cpu_offloading");
  Setting s;
  s.name = "cpu_offloading";
  s.path = "model.cpu_offloading_num_layers";
  if (layers.known()) {
    s.value = *layers > 0;
    s.where = layers.where;
  }
  return s;
}

void push(const RuleContext& context, std::vector<Diagnostic>& out, std::string message, Span where,
          std::vector<Note> notes, std::string help, std::vector<Fix> fixes) {
  Diagnostic diag = make_diagnostic(kCpuOffloadingConstraints, std::move(message), first_span(context.job, {where}));
  for (Note& n : notes) {
    if (!(n.where.valid() && n.where == diag.where)) diag.notes.push_back(std::move(n));
  }
  diag.help = std::move(help);
  diag.fixes = std::move(fixes);
  out.push_back(std::move(diag));
}

// The other value is the primary location when it was written later.
Span pick(const Setting& offload, const Provenance& other) {
  return rank_of(other) > rank_of(offload.where) ? primary_span(other) : span_for(offload);
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  const Derived& d = context.derived;
  Quantity layers = config_int(job, "model.cpu_offloading_num_layers");
  Setting offload = cpu_offloading(job, layers);
  if (!offload.value.value_or(false)) return;
  Note offload_note = note_for(offload);
  if (layers.known() && d.num_layers.known() && (*layers < 0 || *layers >= *d.num_layers)) {
    push(context, out,
         fmt::format("cpu_offloading_num_layers {} is out of range: offloading works for 0 to {} layers (fewer than "
                     "the model's {})",
                     *layers, *d.num_layers - 1, *d.num_layers),
         span_for(layers), {note_for(d.num_layers)}, fmt::format("use at most {} layers", *d.num_layers - 1),
         {int_fix(job, layers, *d.num_layers - 1)});
  }
  const Quantity& pp = d.pipeline_parallel;
  if (splits(pp)) {
    push(context, out,
         fmt::format("CPU activation offloading does not support pipeline parallelism (pipeline_model_parallel_size "
                     "{})",
                     *pp),
         pick(offload, pp.where), {offload_note, note_for(pp)},
         "offload optimizer state instead (optimizer.optimizer_cpu_offload), or use pipeline_model_parallel_size 1",
         {flag_fix(job, offload, false)});
  }
  Choice granularity = read_choice(job, "model.recompute_granularity");
  if (granularity.is_set()) {
    push(context, out,
         fmt::format("CPU activation offloading does not work with activation recompute (recompute_granularity {})",
                     *granularity.value),
         pick(offload, granularity.where), {offload_note, note_for(granularity)},
         "choose one: recompute or CPU activation offloading",
         {unset_fix(job, granularity.path, granularity.where, FixSafety::Unsafe), flag_fix(job, offload, false)});
  }
  CudaGraphs graphs = cuda_graphs(job);
  bool exempt = job.versions.megatron_core >= Version{0, 18, 0} && graphs.impl.is("full_iteration");
  if (graphs.enabled() && !exempt) {
    push(context, out,
         fmt::format("CPU activation offloading does not support CUDA graphs (cuda_graph_impl {})", *graphs.impl.value),
         pick(offload, graphs.impl.where), {offload_note, note_for(graphs.impl)},
         "set cuda_graph_impl to none, or turn CPU activation offloading off",
         {text_fix(job, graphs.impl, "none"), flag_fix(job, offload, false)});
  }
}

}  // namespace

extern const RuleInfo kCpuOffloadingConstraints = {
    .code = "MB810",
    .name = "cpu-offloading-constraints",
    .group = RuleGroup::Runtime,
    .severity = Severity::Error,
    .summary = "CPU activation offloading with pipeline parallelism, recompute, CUDA graphs or too many layers",
    .doc = R"md(`model.cpu_offloading` (Megatron-LM: `--cpu-offloading-num-layers N` with N > 0) keeps the
activations of `cpu_offloading_num_layers` layers in host memory. Megatron-Core's
`TransformerConfig.__post_init__` raises a `ValueError` before the model is built when:

* `cpu_offloading_num_layers` is not in `[0, num_layers)` ("CPU offloading can be done only for
  layers less than N");
* `pipeline_model_parallel_size > 1` ("Currently there is no support for Pipeline parallelism with
  CPU offloading");
* any `recompute_granularity` is set ("CPU offloading does not work when activation recomputation
  is enabled");
* CUDA graphs are on ("CUDA graphs not supported with CPU offloading."); from Megatron-Core 0.18
  the whole-iteration implementation `cuda_graph_impl: full_iteration` is allowed.

Fine-grained activation offloading together with `cpu_offloading` is reported by
`fine-grained-activation-offloading`. Optimizer-state offloading (`optimizer.optimizer_cpu_offload`)
has none of these limits.)md",
    .bad = {"override.yaml",
     "model:\n  cpu_offloading: true\n  cpu_offloading_num_layers: 4\n",
     "override.yaml --recipe llama3_70b_pretrain_32gpu_h100_bf16_config --nodes 4 --gpus-per-node 8"},
    .good = {.content = "model:\n  cpu_offloading: false\n  cpu_offloading_num_layers: 4\n"},
    .check = check,
    .checks = "MC I9, PS 62",
};

}  // namespace mblint
