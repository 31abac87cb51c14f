// Every pipeline stage (and every virtual stage) must get whole layers.
#include "rules/support/pipeline_support.h"

namespace mblint {

extern const RuleInfo kLayersDivisibleByPp;

namespace {

std::vector<int64_t> pipeline_choices(int64_t layers, int64_t current) {
  std::vector<int64_t> below, above;
  for (int64_t p : divisors(layers)) {
    if (p > 1 && p < current) below.push_back(p);
    if (p > current && p <= 2 * current) above.push_back(p);
  }
  std::vector<int64_t> choices;
  if (!below.empty()) choices.push_back(below.back());
  if (!above.empty()) choices.push_back(above.front());
  return choices;
}

// Uneven split with a virtual pipeline: each middle rank's layers are cut
// into VPP chunks too.
void check_middle_virtual_stages(const RuleContext& context, int64_t middle_layers, int64_t middle_stages,
                                 const Quantity& edge, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Quantity& vpp = d.virtual_pipeline;
  if (middle_stages <= 0 || middle_layers <= 0 || !splits(vpp)) return;
  int64_t per_rank = middle_layers / middle_stages;
  if (per_rank % *vpp == 0) return;
  const Quantity& primary = most_specific({&vpp, &edge, &d.pipeline_parallel});
  Diagnostic diag = make_diagnostic(
      kLayersDivisibleByPp,
      fmt::format("each of the {} middle pipeline stages holds {} layers ({} left after the first/last stages), not "
                  "divisible by virtual_pipeline_model_parallel_size {}",
                  middle_stages, per_rank, middle_layers, *vpp),
      span_for(primary));
  add_notes(diag, {&vpp, &d.first_stage_layers, &d.last_stage_layers, &d.num_layers, &d.pipeline_parallel},
            &primary);
  // A virtual pipeline size must also cut the first and last stages.
  int64_t common = per_rank;
  for (const Quantity* stage : {&d.first_stage_layers, &d.last_stage_layers}) {
    if (stage->known() && *stage->value > 0) common = gcd64(common, *stage->value);
  }
  std::vector<int64_t> choices;
  for (int64_t v : divisors(common)) {
    if (v > 1 && v != *vpp) choices.push_back(v);
  }
  if (choices.size() > 3) choices.resize(3);
  report(out, std::move(diag),
         choices.empty() ? "drop virtual_pipeline_model_parallel_size (set it to null), or change the "
                           "first/last stage layer counts"
                         : fmt::format("use virtual_pipeline_model_parallel_size {}, or change the first/last "
                                       "stage layer counts",
                                       join_or(choices)),
         set_value_fixes(vpp, choices));
}

// Uneven split: first and/or last stage sizes given, the middle stages
// share the rest evenly.
void check_uneven(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  int64_t layers = *d.num_layers;
  int64_t pp = *d.pipeline_parallel;
  int64_t middle_layers = layers;
  int64_t middle_stages = pp;
  const Quantity* edge = nullptr;
  for (const Quantity* stage : {&d.first_stage_layers, &d.last_stage_layers}) {
    if (!stage->known()) continue;
    middle_layers -= *stage->value;
    middle_stages -= 1;
    edge = stage;
  }
  bool broken = middle_stages > 0 ? (middle_layers < 0 || middle_layers % middle_stages != 0)
                                  : middle_layers != 0;
  if (!broken) {
    check_middle_virtual_stages(context, middle_layers, middle_stages, *edge, out);
    return;
  }
  Diagnostic diag = make_diagnostic(
      kLayersDivisibleByPp,
      middle_stages > 0
          ? fmt::format("{} layers left for the {} middle pipeline stages do not split evenly ({} - first/last "
                        "stage layers)",
                        middle_layers, middle_stages, layers)
          : fmt::format("the first and last pipeline stages hold {} layers but the model has {}",
                        layers - middle_layers, layers),
      span_for(*edge));
  add_notes(diag, {&d.first_stage_layers, &d.last_stage_layers, &d.num_layers, &d.pipeline_parallel}, edge);
  report(out, std::move(diag), "choose first/last stage layer counts that leave a multiple of the middle stage count");
}

// First/last stage sizes themselves: more than 0 layers, and whole layers
// per virtual stage. Megatron-Core checks these at any pipeline size.
bool check_edge_stages(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Quantity& vpp = d.virtual_pipeline;
  for (const Quantity* stage : {&d.first_stage_layers, &d.last_stage_layers}) {
    if (!stage->known()) continue;
    if (*stage->value <= 0) {
      Diagnostic diag = make_diagnostic(kLayersDivisibleByPp,
                                        fmt::format("{} is {}; a pipeline stage must hold more than 0 layers",
                                                    stage->name, *stage->value),
                                        span_for(*stage));
      add_notes(diag, {stage}, stage);
      report(out, std::move(diag),
             fmt::format("set {} to a positive layer count, or to null for an even split", stage->name),
             {set_null_fix(*stage)});
      return true;
    }
    if (splits(vpp) && *stage->value % *vpp != 0) {
      const Quantity& primary = most_specific({stage, &vpp});
      Diagnostic diag = finding_at(
          kLayersDivisibleByPp,
          fmt::format("{} {} is not divisible by virtual_pipeline_model_parallel_size {}: each of the stage's virtual "
                      "stages must hold whole layers",
                      stage->name, *stage->value, *vpp),
          primary, {stage, &vpp});
      int64_t below = *stage->value / *vpp * *vpp;
      int64_t above = below + *vpp;
      diag.help = below > 0 ? fmt::format("use {} {} or {}", stage->name, below, above)
                            : fmt::format("use {} {}", stage->name, above);
      if (below > 0) diag.fixes.push_back(set_value_fix(*stage, below));
      diag.fixes.push_back(set_value_fix(*stage, above));
      out.push_back(std::move(diag));
      return true;
    }
  }
  return false;
}

// Megatron-LM's --num-layers-per-virtual-pipeline-stage: VPP = layers per
// stage / this, and validate_args asserts that it divides (every release
// from core_v0.12.0). The reader leaves VPP unknown then; false when there
// is nothing to report.
bool check_layers_per_virtual_stage(const RuleContext& context, int64_t units, const std::string& counted,
                                    std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  const Derived& d = context.derived;
  if (job.dialect != Dialect::MegatronLM) return false;
  Quantity per_virtual = config_int(job, "model.num_layers_per_virtual_pipeline_stage");
  if (!per_virtual.known() || *per_virtual <= 0 || d.virtual_pipeline.known()) return false;
  // The reader gave VPP from this flag alone (not from a layout or a stage count as well).
  if (!(d.virtual_pipeline.where.statement == per_virtual.where.statement)) return false;
  int64_t pp = *d.pipeline_parallel;
  int64_t per_stage = units / pp;
  if (per_stage % *per_virtual == 0) return false;
  Diagnostic diag = finding_at(
      kLayersDivisibleByPp,
      fmt::format("--num-layers-per-virtual-pipeline-stage {} does not divide the {} layers per pipeline stage ({} / "
                  "pipeline_model_parallel_size {}): Megatron-LM's validate_args asserts \"number of layers per "
                  "pipeline stage must be divisible number of layers per virtual pipeline stage\"",
                  *per_virtual, per_stage, counted, pp),
      per_virtual, {&d.pipeline_parallel, &d.num_layers});
  std::vector<int64_t> choices;  // whole layers per virtual stage, at least two virtual stages
  for (int64_t v : divisors(per_stage)) {
    if (v < per_stage && v != *per_virtual) choices.push_back(v);
  }
  if (choices.size() > 3) choices.erase(choices.begin(), choices.end() - 3);
  diag.help = choices.empty()
                  ? fmt::format("drop --num-layers-per-virtual-pipeline-stage: a stage of {} layers cannot be "
                                "interleaved",
                                per_stage)
                  : fmt::format("use --num-layers-per-virtual-pipeline-stage {} (divisors of {}), or give the virtual "
                                "stages with --num-virtual-stages-per-pipeline-rank",
                                join_or(choices), per_stage);
  for (auto it = choices.rbegin(); it != choices.rend(); ++it) diag.fixes.push_back(set_value_fix(per_virtual, *it));
  out.push_back(std::move(diag));
  return true;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Quantity& layers = d.num_layers;
  const Quantity& pp = d.pipeline_parallel;
  const Quantity& vpp = d.virtual_pipeline;
  if (!layers.known() || !pp.known() || *layers <= 0 || *pp <= 0) return;
  if (d.pipeline_layout_set) return;  // an explicit layout places every layer itself
  if (d.first_stage_layers.known() || d.last_stage_layers.known()) {
    if (check_edge_stages(context, out)) return;
    if (*pp > 1) check_uneven(context, out);
    return;
  }
  // A hybrid stack's split ignores the account_for_* options (Megatron-Core's
  // select_pipeline_segment; Megatron-LM asserts them off: hybrid-pipeline-segments).
  bool hybrid = hybrid_layer_pattern(context.job).has_value();
  int64_t extra = hybrid ? 0
                         : (d.account_for_embedding.value.value_or(false) ? 1 : 0) +
                               (d.account_for_loss.value.value_or(false) ? 1 : 0);
  int64_t units = *layers + extra;
  std::string counted = extra ? fmt::format("{} layers + {} for embedding/loss = {}", *layers, extra, units)
                              : fmt::format("num_layers {}", *layers);
  if (units % *pp != 0) {
    const Quantity& primary = most_specific({&pp, &layers});
    Diagnostic diag =
        finding_at(kLayersDivisibleByPp,
                   fmt::format("{} is not divisible by pipeline_model_parallel_size {} ({:.2f} layers per stage)",
                               counted, *pp, static_cast<double>(units) / static_cast<double>(*pp)),
                   primary, {&pp, &layers});
    std::vector<int64_t> choices = pipeline_choices(units, *pp);
    report(out, std::move(diag),
           choices.empty()
               ? "set num_layers_in_first_pipeline_stage / num_layers_in_last_pipeline_stage for an uneven split"
               : fmt::format("use pipeline_model_parallel_size {}, or an uneven split with "
                             "num_layers_in_first_pipeline_stage / num_layers_in_last_pipeline_stage",
                             join_or(choices)),
           set_value_fixes(pp, choices));
    return;
  }
  if (check_layers_per_virtual_stage(context, units, counted, out)) return;
  if (!splits(vpp)) return;
  int64_t per_stage = units / *pp;
  if (per_stage % *vpp == 0) return;
  const Quantity& primary = most_specific({&vpp, &pp, &layers});
  Diagnostic diag =
      finding_at(kLayersDivisibleByPp,
                 fmt::format("{} / pipeline_model_parallel_size {} = {} layers per stage, not divisible by "
                             "virtual_pipeline_model_parallel_size {}",
                             counted, *pp, per_stage, *vpp),
                 primary, {&vpp, &pp, &layers});
  std::vector<int64_t> choices;
  for (int64_t v : divisors(per_stage)) {
    if (v > 1 && v != *vpp) choices.push_back(v);
  }
  if (choices.size() > 3) choices.resize(3);
  report(out, std::move(diag),
         choices.empty()
             ? "drop virtual_pipeline_model_parallel_size (set it to null)"
             : fmt::format("use virtual_pipeline_model_parallel_size {} (divisors of {})", join_or(choices), per_stage),
         set_value_fixes(vpp, choices));
}

}  // namespace

extern const RuleInfo kLayersDivisibleByPp = {
    .code = "MB501",
    .name = "layers-divisible-by-pp",
    .group = RuleGroup::Pipeline,
    .severity = Severity::Error,
    .summary = "each pipeline stage and each virtual stage must hold a whole number of layers",
    .doc = R"md(An even pipeline split gives each of the PP stages `num_layers / PP` layers, and an interleaved
schedule splits each stage again into VPP chunks. Megatron-Core checks this only when it builds
the model ("num_layers should be divisible by pipeline_model_parallel_size", "number of layers
per pipeline rank should be divisible by vp_size"); Megatron Bridge does not check it up front.

With `account_for_embedding_in_pipeline_split` / `account_for_loss_in_pipeline_split` the
embedding and the loss count as one layer each (Llama 3.1 405B's 126 layers split over 8 stages
only this way). With `num_layers_in_first_pipeline_stage` / `..._last_...` the middle stages
must share the remaining layers evenly, and `TransformerConfig` raises at start-up when they do
not ("number of layers at middle stage: ... must be divisible by the middle pipeline model
parallel size", "Mismatch: N middle layers remaining but M middle PP stages available"), when a
first or last stage is given 0 or fewer layers ("num_layers_in_first_pipeline_stage must be
larger than 0"), and, with a virtual pipeline, when the first or last stage or each middle
stage cannot be cut into VPP whole chunks ("number of layers at first stage: N must be
divisible by virtual pipeline parallel degree V", "number of layers on each middle pipeline
rank: ... must be divisible by virtual pipeline parallel degree"). An explicit
`pipeline_model_parallel_layout` is checked by its own rules.

Megatron-LM's `--num-layers-per-virtual-pipeline-stage N` sets the virtual pipeline size to the
layers per stage divided by N; `validate_args` (`megatron/training/arguments.py`, every release from
core_v0.12.0 to the current one) asserts "number of layers per pipeline stage must be divisible
number of layers per virtual pipeline stage" when N does not divide them (80 layers over 16
stages are 5 per stage, which 2 layers per virtual stage do not divide).)md",
    .bad = {"override.yaml",
     "model:\n  pipeline_model_parallel_size: 3\n  virtual_pipeline_model_parallel_size: null\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 6"},
    .good = {"override.yaml",
     "model:\n  pipeline_model_parallel_size: 4\n  virtual_pipeline_model_parallel_size: null\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 8"},
    .check = check,
    .checks = "MC E5, MC E6, MC E13, MC E14, MC E15, MC E16, MC E17, MC E18, MC E19, PS 31, PS 32, BR model uneven PP, BR model account_for split",
};

}  // namespace mblint
