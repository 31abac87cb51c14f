// The 1F1B pipeline idles (PP-1)/(VPP·m) of each step (Narayanan et al. 2021).
#include "rules/rule_support.h"

namespace mblint {

extern const RuleInfo kPipelineBubble;

namespace {

constexpr double kThreshold = 0.25;

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  if (!d.bubble || *d.bubble <= kThreshold) return;
  const Quantity& pp = d.pipeline_parallel;
  const Quantity& vpp = d.virtual_pipeline;
  const Quantity& m = d.microbatches;
  int64_t chunks = std::max<int64_t>(1, *vpp);
  Diagnostic diag = make_diagnostic(
      kPipelineBubble,
      fmt::format("pipeline bubble is {:.0f}% of every step: (pipeline_model_parallel_size {} - 1) / ({}{} "
                  "microbatches)",
                  *d.bubble * 100, *pp, chunks > 1 ? fmt::format("{} virtual stages x ", chunks) : "", *m),
      span_for(most_specific({&pp, &d.global_batch_size, &vpp})));
  const Quantity& primary = most_specific({&pp, &d.global_batch_size, &vpp});
  add_notes(diag, {&pp, &vpp}, &primary);
  diag.notes.push_back(Note{fmt::format("{} microbatches per step = {}", *m, m.how), span_for(d.global_batch_size)});
  std::vector<std::string> remedies;
  // More microbatches: the global batch that brings the bubble under the threshold.
  int64_t needed_m = static_cast<int64_t>(std::ceil(static_cast<double>(*pp - 1) / (kThreshold * chunks)));
  if (d.micro_batch_size.known() && d.data_parallel.known() && needed_m > *m) {
    int64_t gbs = needed_m * *d.micro_batch_size * *d.data_parallel;
    remedies.push_back(fmt::format("global_batch_size >= {} ({} microbatches)", gbs, needed_m));
  }
  // Interleaving, where the layers allow it.
  if (d.num_layers.known() && *d.num_layers % *pp == 0) {
    int64_t per_stage = *d.num_layers / *pp;
    for (int64_t v : divisors(per_stage)) {
      if (v <= chunks) continue;
      double bubble = static_cast<double>(*pp - 1) / static_cast<double>(v * *m);
      if (bubble <= kThreshold) {
        remedies.push_back(fmt::format("virtual_pipeline_model_parallel_size {} ({:.0f}%)", v, bubble * 100));
        diag.fixes.push_back(set_value_fix(vpp, v));
        break;
      }
    }
  }
  remedies.push_back("a smaller pipeline_model_parallel_size");
  std::string help = "lower it with ";
  for (size_t i = 0; i < remedies.size(); ++i) {
    if (i) help += i + 1 == remedies.size() ? ", or " : ", ";
    help += remedies[i];
  }
  diag.help = help;
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kPipelineBubble = {
    "MB502",
    "pipeline-bubble",
    Severity::Warning,
    "the pipeline idles for more than 25% of each step",
    R"md(With pipeline parallelism the first and last stages wait while the pipeline fills and drains.
For the 1F1B schedule that idle fraction is `(PP - 1) / m` of the step, where
`m = GBS / (MBS x DP)` is the number of microbatches; the interleaved schedule divides it by
the number of virtual stages: `(PP - 1) / (VPP x m)` (Narayanan et al., "Efficient Large-Scale
Language Model Training on GPU Clusters Using Megatron-LM", 2021). Above 25% a large share of
the GPUs' time is spent idle. Raise the global batch, interleave
(`virtual_pipeline_model_parallel_size`), or use less pipeline parallelism.)md",
    {"override.yaml",
     "model:\n  pipeline_model_parallel_size: 8\n  virtual_pipeline_model_parallel_size: null\n"
     "train:\n  global_batch_size: 16\n",
     "override.yaml --recipe llama3_70b_pretrain_32gpu_h100_bf16_config --nodes 8 --gpus-per-node 8"},
    {"override.yaml",
     "model:\n  pipeline_model_parallel_size: 8\n  virtual_pipeline_model_parallel_size: 5\n"
     "train:\n  global_batch_size: 512\n",
     "override.yaml --recipe llama3_70b_pretrain_32gpu_h100_bf16_config --nodes 8 --gpus-per-node 8"},
    check,
    "PS 29, PS 33",
};

}  // namespace mblint
