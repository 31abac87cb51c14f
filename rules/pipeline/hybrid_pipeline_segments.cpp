// A hybrid layer pattern cut into '|' pipeline segments places every layer
// itself: the segments must divide over the pipeline stages, and no
// first/last stage layer count may compete with them.
#include "rules/support/pipeline_support.h"

namespace mblint {

extern const RuleInfo kHybridPipelineSegments;

namespace {

// The pattern the job writes (the catalog's recipes use none with
// segments), valued by its segment count, located where it is written.
std::optional<Quantity> written_pattern(const Job& job) {
  std::optional<HybridPatternSetting> pattern = hybrid_layer_pattern(job);
  if (!pattern || pattern->from_catalog) return std::nullopt;
  Quantity q = quantity_at(pattern->path, pattern->segments, pattern->where);
  q.display = fmt::format("\"{}\" ({} pipeline segment{})", pattern->text, pattern->segments,
                          pattern->segments == 1 ? "" : "s");
  return q;
}

// Megatron-LM flags validate_args asserts off with --hybrid-layer-pattern,
// under the keys the argument reader stores them at.
struct SplitFlag {
  const char* path;
  const char* flag;
  const char* why;  // what the pattern does instead
};
constexpr SplitFlag kVirtualStageFlags[] = {
    {"model.num_layers_per_virtual_pipeline_stage", "--num-layers-per-virtual-pipeline-stage",
     "the virtual pipeline comes from the pattern's '|' segments"},
    {"model.num_virtual_stages_per_pipeline_rank", "--num-virtual-stages-per-pipeline-rank",
     "the virtual pipeline comes from the pattern's '|' segments"},
};
constexpr SplitFlag kAccountForFlags[] = {
    {"model.account_for_embedding_in_pipeline_split", "--account-for-embedding-in-pipeline-split",
     "the pattern places every layer"},
    {"model.account_for_loss_in_pipeline_split", "--account-for-loss-in-pipeline-split", "the pattern places every layer"},
};

void report_split_flag(const SplitFlag& f, const Quantity& value, const Quantity& pattern, std::string help,
                       std::vector<Diagnostic>& out) {
  report(out,
         finding_at(kHybridPipelineSegments,
                    fmt::format("{} with --hybrid-layer-pattern: Megatron-LM's validate_args asserts it is not given "
                                "({})",
                                f.flag, f.why),
                    value, {&value, &pattern}),
         std::move(help));
}

// Megatron-LM's validate_args: with --hybrid-layer-pattern the pattern alone
// places the layers, so --pipeline-model-parallel-layout, the virtual-stage
// flags and the --account-for-*-in-pipeline-split flags are asserted off.
bool check_megatron_lm_split_flags(const Job& job, const Quantity& pattern, std::vector<Diagnostic>& out) {
  if (job.dialect != Dialect::MegatronLM) return false;
  TextSetting layout = config_text(job, "model.pipeline_model_parallel_layout");
  if (layout.value && !layout.value->empty()) {
    Quantity q = quantity_at("model.pipeline_model_parallel_layout", std::nullopt, layout.where);
    q.display = *layout.value;
    report(out,
           finding_at(kHybridPipelineSegments,
                      "--pipeline-model-parallel-layout with --hybrid-layer-pattern: Megatron-LM's validate_args "
                      "asserts it is not given (the pattern's '|' segments lay out the pipeline)",
                      q, {&q, &pattern}),
           "drop --pipeline-model-parallel-layout and cut the pattern into pipeline segments with '|'");
    return true;
  }
  for (const SplitFlag& f : kVirtualStageFlags) {
    Quantity flag = config_int(job, f.path);
    if (!flag.known() || flag.defaulted) continue;
    report_split_flag(f, flag, pattern,
                      fmt::format("drop {} and cut the pattern into pipeline_model_parallel_size x the virtual stages "
                                  "segments with '|'",
                                  f.flag),
                      out);
    return true;
  }
  for (const SplitFlag& f : kAccountForFlags) {
    Quantity on = as_quantity(read_flag(job, f.path));
    if (!on.known() || *on != 1 || on.defaulted) continue;
    report_split_flag(f, on, pattern, fmt::format("drop {}", f.flag), out);
    return true;
  }
  return false;
}

void check_stage_counts(const Derived& d, const Quantity& pattern, std::vector<Diagnostic>& out) {
  for (const Quantity* stage : {&d.first_stage_layers, &d.last_stage_layers}) {
    if (!stage->known()) continue;
    Diagnostic diag = finding_at(
        kHybridPipelineSegments,
        fmt::format("{} is set, but the hybrid layer pattern's '|' segments already place every layer: Megatron-Core's "
                    "select_pipeline_segment raises ValueError",
                    stage->name),
        *stage, {stage, &pattern});
    report(out, std::move(diag),
           fmt::format("set {} to null (move layers between the pattern's segments instead)", stage->name),
           {set_null_fix(*stage)});
    return;
  }
}

void check_divides(const Derived& d, const Quantity& pattern, std::vector<Diagnostic>& out) {
  const Quantity& pp = d.pipeline_parallel;
  if (!pp.known() || *pp <= 0 || *pattern % *pp == 0) return;
  std::vector<int64_t> choices = closest_around(divisors_above_one(*pattern), *pp);
  Diagnostic diag = finding(kHybridPipelineSegments,
                            fmt::format("the hybrid layer pattern has {} '|' pipeline segments, not divisible by "
                                        "pipeline_model_parallel_size {}: Megatron-Core's select_pipeline_segment "
                                        "raises ValueError (segment v x PP + rank is virtual stage v of that rank)",
                                        *pattern, *pp),
                            {&pp, &pattern});
  report(out, std::move(diag),
         choices.empty() ? fmt::format("cut the pattern into a multiple of {} segments", *pp)
                         : fmt::format("use pipeline_model_parallel_size {}, or cut the pattern into a multiple of {} "
                                       "segments",
                                       join_or(choices), *pp),
         set_value_fixes(pp, choices));
}

// Megatron Bridge passes the virtual pipeline size as written (None for a
// hybrid language model: hybrid-virtual-pipeline), and Megatron-Core builds
// segment v x PP + rank for each virtual stage v of a rank: segments beyond
// PP x VPP are never built, and nothing checks that they were. (Megatron-LM
// derives VPP from the segments instead.)
void check_all_built(const Job& job, const Derived& d, const Quantity& pattern, std::vector<Diagnostic>& out) {
  const Quantity& pp = d.pipeline_parallel;
  Quantity vpp = raw_virtual_pipeline(job);
  if (job.dialect != Dialect::Bridge || !pp.known() || *pp <= 0 || !vpp.known() || *pattern % *pp != 0) return;
  int64_t built = *pp * std::max<int64_t>(1, *vpp);
  if (*pattern <= built) return;
  std::string message = fmt::format(
      "the hybrid layer pattern has {} '|' pipeline segments, but pipeline_model_parallel_size {}{} builds {}: "
      "Megatron-Core builds segment v x PP + rank for each virtual stage v of a rank, so segments {} to {} are never "
      "built and the model trains without their layers (nothing checks it)",
      *pattern, *pp, *vpp > 1 ? fmt::format(" x virtual_pipeline_model_parallel_size {}", *vpp) : "", built,
      built + 1, *pattern);
  Diagnostic diag = *vpp > 0 ? finding(kHybridPipelineSegments, std::move(message), {&pp, &pattern, &vpp})
                             : finding(kHybridPipelineSegments, std::move(message), {&pp, &pattern});
  report(out, std::move(diag),
         fmt::format("cut the pattern into {} segments (Megatron Bridge builds hybrid language models without a "
                     "virtual pipeline), or set pipeline_model_parallel_size {}",
                     built, *pattern));
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (job.dialect != Dialect::Bridge && job.dialect != Dialect::MegatronLM) return;
  std::optional<Quantity> pattern = written_pattern(job);
  if (!pattern) return;
  if (check_megatron_lm_split_flags(job, *pattern, out)) return;
  if (**pattern <= 1) return;
  size_t before = out.size();
  check_stage_counts(context.derived, *pattern, out);
  if (out.size() == before) check_divides(context.derived, *pattern, out);
  if (out.size() == before) check_all_built(job, context.derived, *pattern, out);
}

}  // namespace

extern const RuleInfo kHybridPipelineSegments = {
    .code = "MB510",
    .name = "hybrid-pipeline-segments",
    .group = RuleGroup::Pipeline,
    .severity = Severity::Error,
    .summary = "a hybrid layer pattern places the pipeline itself: its '|' segments must divide over PP, all be "
               "built, and no other split option may compete",
    .doc = R"md(A hybrid (Mamba) layer pattern may cut its layers into pipeline segments with `|`
("M-M*|M-M-|M*M-|M-M-"): Megatron-Core's `select_pipeline_segment`
(`megatron/core/models/hybrid/hybrid_layer_allocation.py` at 2a75ac12c54b, the commit Megatron
Bridge 067f987df03b pins; `mamba_hybrid_layer_allocation.py` in core_v0.17.0) gives segment
`v x PP + rank` to virtual stage `v` of pipeline rank `rank`, so the segments place every layer. It
raises ValueError when the segment count is not a multiple of `pipeline_model_parallel_size`, and when
`num_layers_in_first_pipeline_stage` or `num_layers_in_last_pipeline_stage` is given as well. The
model is built after the job's start-up, on every rank.

Megatron Bridge does not derive the virtual pipeline from the segments: it passes
`virtual_pipeline_model_parallel_size` as written, and its hybrid language-model provider asserts
that it is None (`hybrid-virtual-pipeline`). Each rank then builds only segment `rank` (segment
`v x PP + rank` of each of its virtual stages for the multimodal providers), so a pattern with more
segments than PP x VPP trains a model without the layers of the others, and nothing reports it:
the rule reports it as an error when PP and the virtual pipeline size are known.

Megatron-LM's `validate_args` (`megatron/training/arguments.py` at 2a75ac12c54b) asserts the same
divisibility earlier ("The number of hybrid pipeline segments ... must be evenly divisible by
--pipeline-model-parallel-size") and derives the virtual pipeline size from the segments; with
`--hybrid-layer-pattern`, with or without segments, it also asserts that
`--pipeline-model-parallel-layout`, `--account-for-embedding-in-pipeline-split` and
`--account-for-loss-in-pipeline-split`, `--num-layers-per-virtual-pipeline-stage` and
`--num-virtual-stages-per-pipeline-rank` are not given: the pattern places every layer and its
segments give the virtual pipeline. A pattern without `|` is split by the
layer count instead (`layers-divisible-by-pp`); Megatron Bridge builds hybrid models without a
virtual pipeline (`hybrid-virtual-pipeline`).

The rule reads the pattern the job writes (`hybrid_layer_pattern`, or the older
`hybrid_override_pattern`); the catalog's recipes use patterns without segments.)md",
    .bad = {"config.yaml",
            "model:\n  hybrid_layer_pattern: \"M-M*|M-M-|M*M-\"\n  pipeline_model_parallel_size: 2\n  "
            "hidden_size: 1024\n  num_attention_heads: 8\ntrain:\n  micro_batch_size: 1\n  global_batch_size: 16\n",
            "config.yaml --nodes 1 --gpus-per-node 8"},
    .good = {.content = "model:\n  hybrid_layer_pattern: \"M-M*M-M-|M*M-M-M-\"\n  pipeline_model_parallel_size: 2\n  "
                        "hidden_size: 1024\n  num_attention_heads: 8\ntrain:\n  micro_batch_size: 1\n  "
                        "global_batch_size: 16\n"},
    .check = check,
    .checks = "MC E26",
};

}  // namespace mblint
