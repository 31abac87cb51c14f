// The 1F1B pipeline idles (PP-1)/(VPP·m + PP-1) of each step: its bubble
// lasts (PP-1)/(VPP·m) of the ideal step (Narayanan et al. 2021).
#include "rules/support/pipeline_support.h"
#include "rules/support/speed_support.h"

namespace mblint {

extern const RuleInfo kPipelineBubble;

namespace {

// The fewest microbatches that bring the idle share to the threshold t:
// (p-1)/(v·m + p-1) <= t  <=>  v·m >= (p-1)(1-t)/t.
int64_t microbatches_for(int64_t pp, int64_t chunks, double threshold) {
  double needed = static_cast<double>(pp - 1) * (1.0 - threshold) / (threshold * static_cast<double>(chunks));
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(needed - 1e-9)));
}

// ", about 18% more tokens/s/GPU" when the speed model predicts the job
// with `path` set to `value`; "" when it cannot.
std::string gain_of(const RuleContext& context, const std::optional<SpeedEstimate>& speed, const std::string& path,
                    int64_t value) {
  if (!speed) return "";
  std::optional<std::string> gain = gain_text(context, *speed, {MemoryChange{path, make_int(value)}});
  return gain ? ", " + *gain : "";
}

// The global batch that brings the bubble under the threshold. Under the
// interleaved schedule the microbatch count must also be a multiple of the
// microbatch group (PP by default) for the schedule to accept it.
std::optional<std::string> batch_remedy(const RuleContext& context, const std::optional<SpeedEstimate>& speed,
                                        const Interleaving& schedule, int64_t chunks, int64_t m) {
  const Derived& d = context.derived;
  int64_t pp = *d.pipeline_parallel;
  int64_t needed = microbatches_for(pp, chunks, context.thresholds.pipeline_bubble);
  if (schedule.interleaved) {
    Quantity group = microbatch_group_size(context);
    int64_t n = group.known() && *group >= pp ? *group : pp;
    needed = std::max(needed, n);
    needed = (needed + n - 1) / n * n;
  }
  const Quantity& dp = d.batch_data_parallel;
  if (!d.micro_batch_size.known() || !dp.known() || needed <= m) return std::nullopt;
  int64_t gbs = needed * *d.micro_batch_size * *dp;
  std::string gain = gain_of(context, speed, config_path_or(d.global_batch_size, "train.global_batch_size"), gbs);
  return fmt::format("global_batch_size >= {} ({} microbatches{})", gbs, needed, gain);
}

// Interleaving, where the layers allow it and the current microbatch count
// suits the interleaved schedule (at least PP, a multiple of the group).
std::optional<int64_t> virtual_remedy(const RuleContext& context, int64_t chunks, int64_t m) {
  const Derived& d = context.derived;
  int64_t pp = *d.pipeline_parallel;
  if (read_layout(context.job).present || d.first_stage_layers.known() || d.last_stage_layers.known()) {
    return std::nullopt;
  }
  Quantity group = microbatch_group_size(context);
  int64_t n = group.known() ? *group : pp;
  if (m < pp || n < pp || n > m || (m % n != 0 && m % n < pp)) return std::nullopt;
  if (!d.num_layers.known() || *d.num_layers % pp != 0) return std::nullopt;
  int64_t per_stage = *d.num_layers / pp;
  for (int64_t v : divisors(per_stage)) {
    if (v <= chunks) continue;
    if (bubble_idle_share(pp, v, m) <= context.thresholds.pipeline_bubble) return v;
  }
  return std::nullopt;
}

std::string percent(double share) { return fmt::format("{:.0f}%", share * 100); }

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Quantity& pp = d.pipeline_parallel;
  Quantity m = microbatch_count(context);
  Interleaving schedule = interleaving(context);
  if (!splits(pp) || !m.known() || *m <= 0 || !schedule.known) return;
  int64_t chunks = schedule.interleaved ? std::max<int64_t>(1, schedule.chunks) : 1;
  double idle = bubble_idle_share(*pp, chunks, *m);
  if (idle <= context.thresholds.pipeline_bubble) return;
  const Quantity& vpp = schedule.source.path == "model.pipeline_model_parallel_layout" ? schedule.source
                                                                                         : d.virtual_pipeline;
  const Quantity& primary = most_specific({&pp, &d.global_batch_size, &vpp});
  Diagnostic diag = finding_at(
      kPipelineBubble,
      fmt::format("pipeline bubble: the pipeline idles for {} of every step = (pipeline_model_parallel_size {} - 1) / "
                  "({}{} microbatches + {} - 1)",
                  percent(idle), *pp, chunks > 1 ? fmt::format("{} virtual stages x ", chunks) : "", *m, *pp),
      primary, {&pp, &vpp});
  diag.notes.push_back(Note{fmt::format("{} microbatches per step = {}", *m, m.how), span_for(d.global_batch_size)});
  std::vector<std::string> remedies;
  std::optional<SpeedEstimate> speed = job_speed(context);
  if (auto batch = batch_remedy(context, speed, schedule, chunks, *m)) remedies.push_back(*batch);
  if (auto v = virtual_remedy(context, chunks, *m)) {
    std::string gain =
        gain_of(context, speed, config_path_or(d.virtual_pipeline, "model.virtual_pipeline_model_parallel_size"), *v);
    remedies.push_back(fmt::format("virtual_pipeline_model_parallel_size {} ({} idle{})", *v,
                                   percent(bubble_idle_share(*pp, *v, *m)), gain));
    diag.fixes.push_back(set_value_fix(d.virtual_pipeline, *v));
  }
  remedies.push_back("a smaller pipeline_model_parallel_size");
  std::string help;
  if (speed && speed->breakdown.bubble > 0) {
    help = fmt::format("the speed model puts the bubble at {}; ", cost_text(*speed, speed->breakdown.bubble));
  }
  help += fmt::format("bring the idle share to {} or less (thresholds.pipeline_bubble) with ",
                      percent(context.thresholds.pipeline_bubble));
  for (size_t i = 0; i < remedies.size(); ++i) {
    if (i) help += i + 1 == remedies.size() ? ", or " : ", ";
    help += remedies[i];
  }
  report(out, std::move(diag), help);
}

}  // namespace

extern const RuleInfo kPipelineBubble = {
    .code = "MB502",
    .name = "pipeline-bubble",
    .group = RuleGroup::Pipeline,
    .severity = Severity::Warning,
    .summary = "the pipeline idles for more than 25% of each step (the idle share, thresholds.pipeline_bubble)",
    .doc = R"md(With pipeline parallelism the first and last stages wait while the pipeline fills and drains.
For the 1F1B schedule with `m = GBS / (MBS x DP)` microbatches per step that bubble lasts
`(PP - 1) / m` of the ideal, bubble-free step; the interleaved schedule divides it by the number of
virtual stages: `(PP - 1) / (VPP x m)` (Narayanan et al., "Efficient Large-Scale Language Model
Training on GPU Clusters Using Megatron-LM", 2021, section 2.2). That ratio is bubble time over
compute time, not a share of the step: the step takes `VPP x m + PP - 1` slots of which `PP - 1`
are idle, so the pipeline idles for

    idle share = (PP - 1) / (VPP x m + PP - 1)

of every step, which is what mblint reports (PP 8 with 2 microbatches: 7 / 9 = 78%, never more
than 100%). The rule warns when the idle share is above `thresholds.pipeline_bubble` in
`.mblint.yaml` (default 0.25: the pipeline idles for more than a quarter of the step). Raise the
global batch, interleave (`virtual_pipeline_model_parallel_size`), or use less pipeline
parallelism. Megatron-Core accepts fewer microbatches than stages without the virtual pipeline (it
only idles more), so this is a warning.

When the speed model can predict the job (a known GPU with published figures, a modelled
model: see `mblint estimate` and docs/speed-model.md), the help also says what the bubble costs:
its share of the predicted step time, which counts the real stages' times, the optimizer and
the fixed costs (so it is smaller than the idle share above), and for each suggested global batch
or virtual pipeline size the change in tokens/s/GPU the model predicts for the changed job.
Otherwise the help leaves the cost out.

The virtual stages count as the schedule runs them: from `virtual_pipeline_model_parallel_size`
or from the stage count of a `pipeline_model_parallel_layout`. The suggested global batch also
suits the interleaved schedule (a multiple of the microbatch group, PP by default; see
`interleaved-microbatch-count`), and interleaving is only suggested when the current
microbatch count suits it.)md",
    .bad = {"override.yaml",
     "model:\n  pipeline_model_parallel_size: 8\n  virtual_pipeline_model_parallel_size: null\n"
     "train:\n  global_batch_size: 16\n",
     "override.yaml --recipe llama3_70b_pretrain_32gpu_h100_bf16_config --nodes 8 --gpus-per-node 8"},
    .good = {.content =
     "model:\n  pipeline_model_parallel_size: 8\n  virtual_pipeline_model_parallel_size: 5\n"
     "train:\n  global_batch_size: 512\n"},
    .check = check,
    .checks = "PS 29, PS 33, MC F9",
};

}  // namespace mblint
