// The interleaved pipeline schedule walks the microbatches in groups of
// microbatch_group_size_per_vp_stage (PP by default): it needs at least PP
// microbatches, and a last group that is empty or at least PP long.
#include "rules/support/pipeline_support.h"

#include <algorithm>

namespace mblint {

extern const RuleInfo kInterleavedMicrobatchCount;

namespace {

struct Inputs {
  const Quantity& pp;
  Quantity m;
  Quantity group;
  const Quantity& schedule_source;
};

// The smallest accepted microbatch count at or above `at_least`, for the
// known group size or the default (PP).
int64_t next_valid(int64_t at_least, int64_t pp, int64_t group) {
  int64_t n = std::max(group, pp);
  int64_t m = std::max(at_least, n);
  while (m % n != 0 && m % n < pp) ++m;
  return m;
}

void add_fixes(const RuleContext& context, Diagnostic& diag, const Inputs& in, std::vector<int64_t> counts,
               std::string& help) {
  const Derived& d = context.derived;
  std::vector<std::string> batches;
  if (d.micro_batch_size.known() && d.batch_data_parallel.known()) {
    for (int64_t count : counts) {
      int64_t gbs = count * *d.micro_batch_size * *d.batch_data_parallel;
      batches.push_back(fmt::format("global_batch_size {} ({} microbatches)", gbs, count));
      diag.fixes.push_back(set_value_fix(d.global_batch_size, gbs));
    }
  }
  std::string join;
  for (size_t i = 0; i < batches.size(); ++i) join += (i ? " or " : "") + batches[i];
  help = join.empty() ? "" : "use " + join;
  if (in.schedule_source.path == "model.virtual_pipeline_model_parallel_size") {
    std::string drop = context.job.dialect == Dialect::MegatronLM
                           ? "drop the virtual pipeline stages (--num-virtual-stages-per-pipeline-rank)"
                           : "drop the virtual pipeline (virtual_pipeline_model_parallel_size: null)";
    help += join.empty() ? drop : ", or " + drop;
    diag.fixes.push_back(set_null_fix(in.schedule_source));
  }
}

Diagnostic make(const RuleContext& context, const Inputs& in, std::string message) {
  const Derived& d = context.derived;
  const Quantity* primary = &most_specific({&d.global_batch_size, &d.micro_batch_size, &in.pp, &in.schedule_source});
  if (in.group.known() && !in.group.defaulted && &most_specific({primary, &in.group}) == &in.group) primary = &in.group;
  Diagnostic diag = make_diagnostic(kInterleavedMicrobatchCount, std::move(message), span_for(*primary));
  diag.notes.push_back(Note{fmt::format("{} microbatches per step = {}", *in.m, in.m.how), span_for(d.global_batch_size)});
  add_notes(diag, {&in.pp, &in.schedule_source}, primary);
  if (in.group.known() && !in.group.defaulted) add_notes(diag, {&in.group}, primary);
  return diag;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  Interleaving schedule = interleaving(context);
  if (!schedule.known || !schedule.interleaved) return;
  Inputs in{context.derived.pipeline_parallel, microbatch_count(context), microbatch_group_size(context),
            schedule.source};
  if (!in.m.known() || *in.m <= 0) return;
  int64_t pp = *in.pp;
  int64_t m = *in.m;
  std::string help;
  if (m < pp) {
    Diagnostic diag = make(context, in,
                           fmt::format("the interleaved pipeline schedule needs at least pipeline_model_parallel_size "
                                       "= {} microbatches per step, but there are {}",
                                       pp, m));
    int64_t group = in.group.known() ? *in.group : pp;
    add_fixes(context, diag, in, {next_valid(pp, pp, group)}, help);
    report(out, std::move(diag), help);
    return;
  }
  if (!in.group.known()) return;  // a recipe may set the group size
  int64_t group = *in.group;
  if (group < pp || group > m) {
    Diagnostic diag = make(context, in,
                           fmt::format("microbatch_group_size_per_vp_stage {} must lie between "
                                       "pipeline_model_parallel_size {} and the {} microbatches per step",
                                       group, pp, m));
    report(out, std::move(diag),
           fmt::format("set microbatch_group_size_per_vp_stage to {} (or null for {})", std::clamp(group, pp, m), pp),
           {set_value_fix(in.group, std::clamp(group, pp, m))});
    return;
  }
  int64_t last = m % group;
  if (last == 0 || last >= pp) return;
  std::string divisor = in.group.defaulted
                            ? fmt::format("pipeline_model_parallel_size {}, the default microbatch group", group)
                            : fmt::format("microbatch_group_size_per_vp_stage {}", group);
  Diagnostic diag = make(context, in,
                         fmt::format("{} microbatches per step leave a last group of {} ({} mod {}): the interleaved "
                                     "schedule needs it empty or at least pipeline_model_parallel_size {} long",
                                     m, last, m, divisor, pp));
  std::vector<int64_t> counts;
  if (m - last >= pp) counts.push_back(m - last);
  counts.push_back(next_valid(m, pp, group));
  add_fixes(context, diag, in, counts, help);
  report(out, std::move(diag),
         help + fmt::format("{}or {} {}", help.empty() ? "" : ", ",
                            context.job.dialect == Dialect::MegatronLM
                                ? "--microbatch-group-size-per-virtual-pipeline-stage"
                                : "microbatch_group_size_per_vp_stage",
                            m),
         {set_value_fix(in.group, m)});
}

}  // namespace

extern const RuleInfo kInterleavedMicrobatchCount = {
    .code = "MB602",
    .name = "interleaved-microbatch-count",
    .group = RuleGroup::Batch,
    .severity = Severity::Error,
    .summary = "the interleaved pipeline schedule needs at least PP microbatches, in whole groups",
    .doc = R"md(With a virtual pipeline (`virtual_pipeline_model_parallel_size`, or a
`pipeline_model_parallel_layout` with more stages than pipeline ranks) Megatron-Core runs the
interleaved 1F1B schedule. It feeds the microbatches of a step (`M = GBS / (MBS x DP)`) through
each model chunk in groups of `N = microbatch_group_size_per_vp_stage`, which defaults to the
pipeline size PP. At the first training step `forward_backward_pipelining_with_interleaving`
raises:

* when `N < PP` or `N > M` ("The number of contiguous micro-batches in a virtual pipeline stage
  should range in [PP=..., M=...]"): so **M must be at least PP**, whatever the group size;
* when the last group is shorter than PP but not empty, `0 < M mod N < PP` ("The remainder of
  M (the total micro-batches) divided by N ... should be 0, or larger than or equal to the
  pipeline-parallel size"): with the default group, **M must be a multiple of PP**.

Without the virtual pipeline, fewer microbatches than stages are allowed (a large bubble:
`pipeline-bubble`). Megatron Bridge passes `virtual_pipeline_model_parallel_size: 1` on as is,
which still selects the interleaved schedule; Megatron-LM turns 1 into none. Recipes may set
`microbatch_group_size_per_vp_stage` (the GLM-5 recipes do) and mblint's catalog does not
record it, so for a recipe-based job only `M >= PP` is checked unless the file sets the group
size.)md",
    .bad = {"override.yaml",
     "train:\n  global_batch_size: 3\n  micro_batch_size: 1\n",
     "override.yaml --recipe llama3_70b_pretrain_32gpu_h100_bf16_config --nodes 4 --gpus-per-node 8"},
    .good = {.content = "train:\n  global_batch_size: 8\n  micro_batch_size: 1\n"},
    .check = check,
    .checks = "MC F7, MC F8",
};

}  // namespace mblint
