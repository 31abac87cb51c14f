// A readable pipeline layout that does not fit the rest of the config: its
// stage count, its layer counts, where it puts the MTP layers, and the
// virtual pipeline size written beside it.
#include "rules/support/pipeline_support.h"

#include <algorithm>

namespace mblint {

extern const RuleInfo kPipelineLayoutMismatch;

namespace {

// mtp_num_layers: null and the dataclass default count as 0; a recipe whose
// model trains no MTP (the catalog's dimensions) too.
Quantity mtp_layers(const Job& job) {
  Quantity q = config_int(job, "model.mtp_num_layers");
  const ConfigValue* node = config_node(job, q.path);
  if ((node && node->is_null()) || (!node && q.defaulted && !q.value)) {
    q.value = 0;
    q.display = node ? "null" : "None";
  } else if (!node && !q.known() && job.recipe && job.recipe->dims && job.recipe->dims->mtp_num_layers == 0) {
    q.value = 0;
    q.where = job.recipe_where;
    q.where.layer = Layer::Recipe;
    q.where.origin = fmt::format("recipe {} trains no MTP layers (mtp_num_layers unset)", job.recipe_name);
  }
  return q;
}

void check_stage_count(const RuleContext& context, const Layout& layout, std::vector<Diagnostic>& out) {
  const Quantity& pp = context.derived.pipeline_parallel;
  if (!pp.known() || *pp <= 0) return;
  auto stages = static_cast<int64_t>(layout.expanded.stages.size());
  if (stages % *pp == 0) return;
  Diagnostic diag = finding(
      kPipelineLayoutMismatch,
      fmt::format("pipeline_model_parallel_layout has {} stages, not a multiple of pipeline_model_parallel_size {}",
                  stages, *pp),
      {&layout.quantity, &pp});
  std::vector<int64_t> sizes;
  for (int64_t p : divisors(stages)) {
    if (p > 1) sizes.push_back(p);
  }
  std::vector<int64_t> choices = closest_below(sizes, *pp, 1);
  for (int64_t p : sizes) {
    if (p > *pp) {
      choices.push_back(p);
      break;
    }
  }
  report(out, std::move(diag),
         fmt::format("the layout needs pipeline_model_parallel_size x virtual stages = {} stages{}", stages,
                     choices.empty() ? std::string(": use a layout with a multiple of PP stages")
                                     : fmt::format(": use pipeline_model_parallel_size {}, or a layout with a "
                                                   "multiple of {} stages",
                                                   join_or(choices), *pp)),
         set_value_fixes(pp, choices));
}

void check_count(const RuleContext& context, const Layout& layout, char code, const Quantity& expected,
                 std::vector<Diagnostic>& out) {
  if (!expected.known() || *expected < 0) return;
  int64_t placed = count_layers(layout.expanded.stages, code);
  if (placed == *expected) return;
  std::string what = code == kDecoder ? "transformer layers (t)" : "MTP layers (m)";
  Diagnostic diag = finding(
      kPipelineLayoutMismatch,
      fmt::format("pipeline_model_parallel_layout places {} {} but {} is {}", placed, what, expected.name, *expected),
      {&layout.quantity, &expected});
  int64_t stages = static_cast<int64_t>(layout.expanded.stages.size());
  std::optional<std::string> example;
  if (code == kDecoder) example = example_layout(*expected, stages, mtp_layers(context.job).value.value_or(0));
  report(out, std::move(diag),
         example ? fmt::format("place exactly {} '{}' in the layout, e.g. \"{}\"", *expected, code, *example)
                 : fmt::format("place exactly {} '{}' in the layout", *expected, code));
}

// Megatron-Core keeps the MTP layers together in the last virtual stage of
// one pipeline rank.
void check_mtp_placement(const RuleContext& context, const Layout& layout, const Quantity& mtp,
                         std::vector<Diagnostic>& out) {
  auto vpp = layout_virtual_stages(layout, context.derived);
  if (!vpp || !mtp.known() || *mtp <= 0) return;
  int64_t pp = *context.derived.pipeline_parallel;
  const auto& stages = layout.expanded.stages;
  std::string problem;
  for (int64_t index = 0; index < static_cast<int64_t>(stages.size()) && problem.empty(); ++index) {
    int64_t in_stage = std::count(stages[index].begin(), stages[index].end(), kMtp);
    if (in_stage == 0) continue;
    int64_t rank = index % pp;
    int64_t virtual_stage = index / pp;
    if (virtual_stage != *vpp - 1) {
      problem = fmt::format("stage {} (pipeline rank {}, virtual stage {} of {}) holds an MTP layer; MTP layers must "
                            "be in the last virtual stage of a pipeline rank",
                            index + 1, rank, virtual_stage, *vpp);
    } else if (in_stage != *mtp) {
      problem = fmt::format("stage {} holds {} of the {} MTP layers; all of them must be in one stage", index + 1,
                            in_stage, *mtp);
    }
  }
  if (problem.empty()) return;
  Diagnostic diag = make_diagnostic(kPipelineLayoutMismatch,
                                    "pipeline_model_parallel_layout places the MTP layers where Megatron-Core cannot: " +
                                        problem,
                                    span_for(layout.quantity));
  add_notes(diag, {&layout.quantity, &context.derived.pipeline_parallel, &mtp}, &layout.quantity);
  report(out, std::move(diag), "put all MTP layers (m) just before the L in the last stage");
}

void check_virtual_pipeline(const RuleContext& context, const Layout& layout, std::vector<Diagnostic>& out) {
  auto detected = layout_virtual_stages(layout, context.derived);
  Quantity vpp = raw_virtual_pipeline(context.job);
  if (!detected || !vpp.known() || *vpp <= 0 || *vpp == *detected) return;
  if (vpp.where.layer == Layer::Rewrite) return;  // derived from this very layout
  const Quantity& pp = context.derived.pipeline_parallel;
  const Quantity& primary = most_specific({&vpp, &layout.quantity});
  Diagnostic diag = finding_at(
      kPipelineLayoutMismatch,
      fmt::format("virtual_pipeline_model_parallel_size {} conflicts with pipeline_model_parallel_layout: {} stages / "
                  "pipeline_model_parallel_size {} = {}",
                  *vpp, layout.expanded.stages.size(), *pp, count_of(*detected, "virtual stage")),
      primary, {&vpp, &layout.quantity, &pp});
  report(out, std::move(diag),
         fmt::format("set virtual_pipeline_model_parallel_size to {}, or to null (the layout decides it)", *detected),
         {set_value_fix(vpp, *detected)});
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  Layout layout = read_layout(context.job);
  if (!layout.present || !layout.known || !layout.expanded.error.empty()) return;
  check_stage_count(context, layout, out);
  check_count(context, layout, kDecoder, context.derived.num_layers, out);
  Quantity mtp = mtp_layers(context.job);
  check_count(context, layout, kMtp, mtp, out);
  check_mtp_placement(context, layout, mtp, out);
  check_virtual_pipeline(context, layout, out);
}

}  // namespace

extern const RuleInfo kPipelineLayoutMismatch = {
    .code = "MB504",
    .name = "pipeline-layout-mismatch",
    .group = RuleGroup::Pipeline,
    .severity = Severity::Error,
    .summary = "the pipeline layout does not fit the pipeline size, the layer counts or the virtual pipeline size",
    .doc = R"md(A `pipeline_model_parallel_layout` must agree with the rest of the model config, or Megatron-Core
stops at start-up:

* its stage count must be a multiple of `pipeline_model_parallel_size`; the quotient is the
  number of virtual stages per rank ("The length of pipeline_model_parallel_layout must be
  divisible by pipeline_model_parallel_size"; Megatron-LM's argparse asserts the same);
* it must place exactly `num_layers` transformer layers `t` ("Number of decoder layers ... must
  match num_layers") and exactly `mtp_num_layers` MTP layers `m`, none when MTP is off
  ("Number of mtp layers in layout must match mtp_num_layers");
* the MTP layers must sit together in the last virtual stage of one pipeline rank ("the MTP
  should be always in the last virtual pipeline stage of that rank", "All of the MTP layers
  must be in the same one virtual pipeline stage");
* a `virtual_pipeline_model_parallel_size` written next to the layout must equal stages / PP
  ("virtual_pipeline_model_parallel_size conflicts with pipeline_model_parallel_layout"). Under
  Megatron Bridge leave it null: the layout sets it. (Megatron-LM has no separate flag: it
  derives the virtual stages from the layout.)

Stages are listed in layer order: all ranks' first virtual stages, then the second ones, so
stage `i` (0-based) runs on pipeline rank `i mod PP` as virtual stage `i div PP`.)md",
    .bad = {"override.yaml",
     "model:\n  virtual_pipeline_model_parallel_size: null\n  pipeline_model_parallel_layout: \"Et*20|t*20|t*20|t*19L\"\n",
     "override.yaml --recipe llama3_70b_pretrain_32gpu_h100_bf16_config --nodes 4 --gpus-per-node 8"},
    .good = {.content =
     "model:\n  virtual_pipeline_model_parallel_size: null\n  pipeline_model_parallel_layout: \"Et*20|t*20|t*20|t*20L\"\n"},
    .check = check,
    .checks = "MC E2, MC E11, MC E12, BR model layout vs VPP",
};

}  // namespace mblint
