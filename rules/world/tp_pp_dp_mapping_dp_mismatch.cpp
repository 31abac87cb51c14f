// With use_tp_pp_dp_mapping the rank order puts the pipeline before data
// parallelism ("tp-cp-ep-pp-dp"); the dense and expert grids then share
// their pipeline groups only when TP·CP == ETP·EP, i.e. DP == expert DP.
#include "rules/support/parallel_support.h"

namespace mblint {

extern const RuleInfo kTpPpDpMappingDpMismatch;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  Setting mapping = read_flag(context.job, "dist.use_tp_pp_dp_mapping");
  if (!mapping.value || !*mapping.value) return;
  const Quantity& tp = d.tensor_parallel;
  const Quantity& cp = d.context_parallel;
  const Quantity& pp = d.pipeline_parallel;
  const Quantity& ep = d.expert_parallel;
  const Quantity& etp = d.expert_tensor_parallel;
  if (!tp.known() || !cp.known() || !pp.known() || !ep.known() || !etp.known()) return;
  if (*pp <= 1 || *tp <= 0 || *cp <= 0 || *ep <= 0 || *etp <= 0) return;
  int64_t dense_grid = *tp * *cp;
  int64_t expert_grid = *etp * *ep;
  if (dense_grid == expert_grid) return;
  std::string sizes;
  if (d.data_parallel.known() && d.expert_data_parallel.known()) {
    sizes = fmt::format(" (data-parallel size {}, expert data-parallel size {})", *d.data_parallel,
                        *d.expert_data_parallel);
  }
  Span where = span_for(mapping).valid() ? span_for(mapping) : span_for(most_specific({&ep, &etp, &tp, &cp}));
  Diagnostic diag = make_diagnostic(
      kTpPpDpMappingDpMismatch,
      fmt::format("with use_tp_pp_dp_mapping and pipeline_model_parallel_size {}, the attention and MoE layers need "
                  "the same data-parallel size: tensor x context parallel = {} x {} = {} but expert tensor x expert "
                  "parallel = {} x {} = {}{}",
                  *pp, *tp, *cp, dense_grid, *etp, *ep, expert_grid, sizes),
      where);
  bool dense_model = d.num_moe_experts.known() && *d.num_moe_experts == 0;
  if (dense_model) {
    add_notes(diag, {&tp, &cp, &pp}, nullptr);
    diag.notes.push_back(Note{"the model is dense, but its expert grid still exists: context-parallel ranks fold "
                              "into the expert data-parallel size, so CP > 1 alone breaks this rank order",
                              {}});
    diag.help = "set dist.use_tp_pp_dp_mapping to false (the default pp-last rank order has no such constraint), or "
                "context_parallel_size 1";
    diag.fixes.push_back(set_setting_fix(mapping, false, FixSafety::Unsafe));
    if (*etp == *tp && *ep == 1) diag.fixes.push_back(set_value_fix(cp, 1));
    out.push_back(std::move(diag));
    return;
  }
  add_notes(diag, {&tp, &cp, &etp, &ep, &pp}, nullptr);
  bool ep_fits = dense_grid % *etp == 0 && dense_grid / *etp > 1;
  diag.help = ep_fits ? fmt::format("set dist.use_tp_pp_dp_mapping to false (the default pp-last rank order has no "
                                    "such constraint), or expert_model_parallel_size {} so that ETP x EP = {}",
                                    dense_grid / *etp, dense_grid)
                      : "set dist.use_tp_pp_dp_mapping to false (the default pp-last rank order has no such "
                        "constraint)";
  diag.fixes.push_back(set_setting_fix(mapping, false, FixSafety::Unsafe));
  if (ep_fits) diag.fixes.push_back(set_value_fix(ep, dense_grid / *etp));
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kTpPpDpMappingDpMismatch = {
    .code = "MB103",
    .name = "tp-pp-dp-mapping-dp-mismatch",
    .group = RuleGroup::World,
    .severity = Severity::Error,
    .summary = "with use_tp_pp_dp_mapping and PP > 1, TP x CP must equal ETP x EP",
    .doc = R"md(`dist.use_tp_pp_dp_mapping` (Megatron-LM `--use-tp-pp-dp-mapping`) changes the rank order from
`tp-cp-ep-dp-pp` to `tp-cp-ep-pp-dp`: pipeline stages are placed before data parallelism. The
dense layers and the MoE layers are laid out on separate grids (the expert grid has no
context-parallel axis), and with the pipeline no longer last their pipeline groups coincide only
when `TP x CP == ETP x EP`, which is the same as `DP == expert DP`.

Megatron-Core's `initialize_model_parallel` asserts both at start-up when PP > 1: "When not using
pp-last rank ordering, the data parallel size of the attention and moe layers must be the same",
then "Pipeline parallel groups are expected to be the same for Non-Expert and Expert part". A dense
model is affected too: its expert grid still exists, and context-parallel ranks fold into the
expert data-parallel size, so CP > 1 alone trips it.

Unset `expert_tensor_parallel_size` is resolved the way the job's Bridge version does it (see
`expert-tensor-parallel-unset`).)md",
    .bad = {"override.yaml",
     "model:\n  tensor_model_parallel_size: 1\n  pipeline_model_parallel_size: 2\n  virtual_pipeline_model_parallel_size: "
     "null\n  expert_tensor_parallel_size: 1\ndist:\n  use_tp_pp_dp_mapping: true\n",
     "override.yaml --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --nodes 4 --gpus-per-node 8"},
    .good = {.content =
     "model:\n  tensor_model_parallel_size: 1\n  pipeline_model_parallel_size: 2\n  virtual_pipeline_model_parallel_size: "
     "null\n  expert_tensor_parallel_size: 1\ndist:\n  use_tp_pp_dp_mapping: false\n"},
    .check = check,
    .checks = "MC A3, MC A4",
};

}  // namespace mblint
