// Inside one NVLink domain tensor parallelism (up to 8) is usually faster
// than pipeline stages, which add a bubble. Advice, not a failure; where the
// speed model predicts the job, it decides, because the premise (the bubble
// costs more than the all-reduces TP adds) holds only for few microbatches.
#include <algorithm>

#include "rules/support/parallel_support.h"
#include "rules/support/pipeline_support.h"
#include "rules/support/speed_support.h"

namespace mblint {

extern const RuleInfo kPreferTpOverPpInNvlinkDomain;

namespace {

// The largest k dividing PP with TP·k a valid tensor-parallel size no larger
// than `limit`; 1 when there is none.
int64_t tp_factor(const RuleContext& context, int64_t tp, int64_t pp, int64_t limit) {
  std::vector<int64_t> valid = valid_tensor_parallel_sizes(context, limit);
  int64_t best = 1;
  for (int64_t k : divisors(pp)) {
    if (k <= 1 || tp * k > limit) continue;
    if (std::find(valid.begin(), valid.end(), tp * k) != valid.end()) best = k;
  }
  return best;
}

// A suggestion the model predicts to gain less than this is not worth a note.
constexpr double kWorthwhileGain = 0.02;

// What the speed model says of moving the factor `k` from PP to TP: what
// the bubble costs now (" the speed model puts the bubble at ...; ") and
// what the move gains (" (about 22% more tokens/s/GPU)"); both empty when it
// cannot predict the job; nullopt when it predicts the move no faster (the
// note is then not given).
struct PredictedMove {
  std::string bubble;
  std::string gain;
};

// The setting that lays the layers out over the pipeline stages, when one
// does ("pipeline_model_parallel_layout", the '|' segments of a hybrid
// stack's pattern): a new PP needs a new one, which mblint does not write.
std::optional<std::string> explicit_stage_layout(const Job& job) {
  if (read_layout(job).present) return "pipeline_model_parallel_layout";
  for (const char* path : {"model.hybrid_layer_pattern", "model.hybrid_override_pattern"}) {
    TextSetting pattern = config_text(job, path);
    if (pattern.value && pattern.value->find('|') != std::string::npos) {
      return fmt::format("the '|' stage segments of {}", pattern.name);
    }
  }
  return std::nullopt;
}

// Whether moving the factor `k` ends the pipeline while the job interleaves
// it: the virtual pipeline size must go too (Megatron-Core rejects it
// without PP).
bool ends_interleaving(const Derived& d, int64_t k) {
  return *d.pipeline_parallel / k == 1 && splits(d.virtual_pipeline);
}

std::optional<PredictedMove> predicted_move(const RuleContext& context, int64_t k) {
  const Derived& d = context.derived;
  std::optional<SpeedEstimate> now = job_speed(context);
  if (!now) return PredictedMove{};
  std::vector<MemoryChange> move = {
      {config_path_or(d.tensor_parallel, "model.tensor_model_parallel_size"), make_int(*d.tensor_parallel * k)},
      {config_path_or(d.pipeline_parallel, "model.pipeline_model_parallel_size"), make_int(*d.pipeline_parallel / k)}};
  if (ends_interleaving(d, k)) {
    move.push_back({config_path_or(d.virtual_pipeline, "model.virtual_pipeline_model_parallel_size"), make_null()});
  }
  std::optional<double> gain = speed_gain(context, *now, move);
  if (!gain) return PredictedMove{};
  if (*gain < kWorthwhileGain) return std::nullopt;
  PredictedMove predicted;
  if (now->breakdown.bubble > 0) {
    predicted.bubble = fmt::format("the speed model puts the bubble at {}; ", cost_text(*now, now->breakdown.bubble));
  }
  predicted.gain = fmt::format(" (about {:.0f}% more tokens/s/GPU)", *gain * 100);
  return predicted;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Quantity& tp = d.tensor_parallel;
  const Quantity& pp = d.pipeline_parallel;
  const Quantity& w = d.world_size;
  const Quantity& domain = d.nvlink_domain;
  if (!tp.known() || !pp.known() || !w.known() || !domain.known()) return;
  if (*pp <= 1 || *tp <= 0 || *w <= 0 || *w > *domain) return;
  if (!d.num_moe_experts.known() || *d.num_moe_experts != 0) return;  // MoE sizes TP by active parameters
  if (chosen_by_recipe({&tp.where, &pp.where})) return;                 // NVIDIA's tuned choice
  int64_t limit = std::min<int64_t>({8, *domain, *w});
  if (*tp >= limit) return;
  int64_t k = tp_factor(context, *tp, *pp, limit);
  if (k <= 1) return;
  std::optional<PredictedMove> speed = predicted_move(context, k);
  if (!speed) return;
  const Quantity& primary = most_specific({&pp, &tp});
  Diagnostic diag = finding_at(
      kPreferTpOverPpInNvlinkDomain,
      fmt::format("all {} GPUs share one NVLink domain, yet the model is split into {} pipeline stages with "
                  "tensor_model_parallel_size {}: tensor parallelism up to {} is usually faster there than pipeline "
                  "stages, which add a bubble",
                  *w, *pp, *tp, limit),
      primary, {&pp, &tp, &domain});
  bool unvirtual = ends_interleaving(d, k);
  std::string layout = fmt::format("tensor_model_parallel_size {} with pipeline_model_parallel_size {}{}", *tp * k,
                                   *pp / k, unvirtual ? " and no virtual pipeline" : "");
  diag.help = fmt::format("{}try {}{}", speed->bubble, layout, speed->gain);
  if (std::optional<std::string> stages = explicit_stage_layout(context.job)) {
    diag.help += fmt::format(", with {} rewritten for it (mblint offers no fix: the layout is yours to choose)",
                             *stages);
    out.push_back(std::move(diag));
    return;
  }
  // One fix that moves the factor from PP to TP: changing either alone
  // breaks TP x PP x CP dividing the world size.
  std::vector<Fix> parts = {set_value_fix(tp, *tp * k), set_value_fix(pp, *pp / k)};
  if (unvirtual) {
    const Quantity& vpp = d.virtual_pipeline;
    Fix none;
    edit_or_set(none, vpp.where, vpp.path, "null");
    none.changes.push_back(SettingChange{config_path_or(vpp, "model.virtual_pipeline_model_parallel_size"), "null"});
    parts.push_back(std::move(none));
  }
  std::string what = fmt::format("set tensor_model_parallel_size to {} and pipeline_model_parallel_size to {}{}",
                                 *tp * k, *pp / k, unvirtual ? ", virtual_pipeline_model_parallel_size to null" : "");
  diag.fixes.push_back(combined_fix(std::move(what), parts));
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kPreferTpOverPpInNvlinkDomain = {
    .code = "MB209",
    .name = "prefer-tp-over-pp-in-nvlink-domain",
    .group = RuleGroup::Tensor,
    .severity = Severity::Note,
    .summary = "inside one NVLink domain, raise tensor parallelism before adding pipeline stages",
    .doc = R"md(Advice from NVIDIA's parallelism guidance (the `parallelism-strategies` skill): on a single
NVLink node, use tensor parallelism up to 8 before pipeline parallelism. Tensor-parallel
all-reduces stay on NVLink, while pipeline stages add a bubble, in which the pipeline idles for
`(PP - 1) / (VPP x microbatches + PP - 1)` of the step (see `pipeline-bubble`), and uneven stage
memory.

The note appears for a dense model whose whole job fits one NVLink domain (the GPU type's
domain, at most one node on HGX systems, or one node when no GPU type is known) and that uses PP > 1 with TP below 8, when a
larger TP that the attention heads and key/value groups accept can replace some pipeline
stages. MoE models are left alone (their TP is sized by the active parameters), and so is a
recipe's own TP and PP.

The guidance assumes the bubble costs more than the all-reduces a larger TP adds. That holds
with few microbatches per step, not with many: with 128 microbatches PP 4 idles about 2% of the
step, while TP 8 on a model of a few billion parameters spends far more in communication and in
GEMMs too narrow to run at full speed. So when the speed model can predict the job (a known GPU
type and a modelled model: see `mblint estimate` and docs/speed-model.md), the note appears only
if it predicts the suggested layout at least 2% faster, and says by how much and what the bubble
costs now; without a prediction it appears as the guidance says. Measure before and after.)md",
    .bad = {"override.yaml",
     "model:\n  tensor_model_parallel_size: 4\n  sequence_parallel: true\n  pipeline_model_parallel_size: 2\n"
     "  virtual_pipeline_model_parallel_size: null\ntrain:\n  global_batch_size: 2\n  micro_batch_size: 1\n",
     "override.yaml --recipe llama3_70b_pretrain_config --nodes 1 --gpus-per-node 8 --gpu h100"},
    .good = {.content =
     "model:\n  tensor_model_parallel_size: 8\n  sequence_parallel: true\n  pipeline_model_parallel_size: 1\n"
     "  virtual_pipeline_model_parallel_size: null\ntrain:\n  global_batch_size: 2\n  micro_batch_size: 1\n"},
    .check = check,
    .checks = "PS 16",
};

}  // namespace mblint
