// Virtual pipeline stages interleave model chunks over the pipeline ranks:
// with one pipeline stage there is nothing to interleave.
#include "rules/support/pipeline_support.h"

namespace mblint {

extern const RuleInfo kVirtualPipelineNeedsPp;

namespace {

// The virtual pipeline size Megatron-Core ends up with, and what set it;
// nullopt when none is set or it is unknown.
std::optional<std::pair<int64_t, Quantity>> virtual_stages(const RuleContext& context) {
  const Job& job = context.job;
  bool one_is_none = job.dialect != Dialect::Bridge;
  Layout layout = read_layout(job);
  if (layout.present) {
    auto detected = layout_virtual_stages(layout, context.derived);
    if (!detected || *detected <= 1) return std::nullopt;
    Quantity source = layout.quantity;
    source.how = fmt::format("pipeline_model_parallel_layout has {} stages: {} virtual stages",
                             layout.expanded.stages.size(), *detected);
    return std::pair{*detected, source};
  }
  Quantity vpp = raw_virtual_pipeline(job);
  if (!vpp.known() || *vpp <= 0 || (one_is_none && *vpp == 1)) return std::nullopt;
  return std::pair{*vpp, vpp};
}

// Megatron-LM's --no-overlap-p2p-communication; the flag's default is on.
bool overlap_p2p(const Job& job) {
  return config_bool(job, "model.overlap_p2p_comm").value.value_or(true);
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Quantity& pp = context.derived.pipeline_parallel;
  if (!pp.known() || *pp <= 0) return;
  auto stages = virtual_stages(context);
  if (!stages) return;
  const auto& [vpp, source] = *stages;
  bool megatron_lm = context.job.dialect == Dialect::MegatronLM;
  bool overlap = !megatron_lm || overlap_p2p(context.job);
  int64_t minimum = overlap ? 2 : 3;
  if (*pp >= minimum) return;
  std::string message =
      overlap ? fmt::format("virtual_pipeline_model_parallel_size {} needs pipeline parallelism, but "
                            "pipeline_model_parallel_size is {}: {} rejects the interleaved schedule",
                            vpp, *pp, megatron_lm ? "Megatron-LM" : "Megatron-Core")
              : fmt::format("virtual_pipeline_model_parallel_size {} with --no-overlap-p2p-communication needs "
                            "pipeline_model_parallel_size > 2, got {}",
                            vpp, *pp);
  Diagnostic diag = finding(kVirtualPipelineNeedsPp, message, {&source, &pp});
  if (!overlap) diag.notes.push_back(note_for(config_bool(context.job, "model.overlap_p2p_comm")));
  if (megatron_lm) {
    diag.help = overlap ? "drop --num-virtual-stages-per-pipeline-rank / --num-layers-per-virtual-pipeline-stage, or "
                          "use --pipeline-model-parallel-size 2 or more"
                        : "drop --no-overlap-p2p-communication, drop the virtual stages, or use "
                          "--pipeline-model-parallel-size 3 or more";
  } else if (source.path == "model.virtual_pipeline_model_parallel_size") {
    diag.help = "drop the virtual pipeline (set virtual_pipeline_model_parallel_size to null), or use "
                "pipeline_model_parallel_size >= 2";
  } else {
    diag.help = "use a layout with pipeline_model_parallel_size stages, or more pipeline stages";
  }
  if (source.path == "model.virtual_pipeline_model_parallel_size") diag.fixes.push_back(set_null_fix(source));
  diag.fixes.push_back(set_value_fix(pp, minimum));
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kVirtualPipelineNeedsPp = {
    .code = "MB506",
    .name = "virtual-pipeline-needs-pp",
    .group = RuleGroup::Pipeline,
    .severity = Severity::Error,
    .summary = "a virtual pipeline (interleaved schedule) needs pipeline_model_parallel_size > 1",
    .doc = R"md(The interleaved 1F1B schedule splits each pipeline rank's layers into
`virtual_pipeline_model_parallel_size` chunks and cycles microbatches through them. With one
pipeline stage there is no pipeline to interleave: Megatron-Core's
`initialize_model_parallel` raises "pipeline-model-parallel size should be greater than 1 with
interleaved schedule" at start-up.

* Megatron Bridge passes the value as written: even `virtual_pipeline_model_parallel_size: 1`
  with `pipeline_model_parallel_size: 1` fails. A `pipeline_model_parallel_layout` with more
  stages than pipeline ranks sets the virtual pipeline size too.
* Megatron-LM's argparse turns one virtual stage into none, and asserts "When interleaved
  schedule is used, pipeline-model-parallel size should be greater than 1"; with
  `--no-overlap-p2p-communication` it needs more than 2 stages ("...should be greater than 2 to
  avoid having multiple p2p sends and recvs between same 2 ranks per communication batch").)md",
    .bad = {"override.yaml",
     "model:\n  pipeline_model_parallel_size: 1\n  virtual_pipeline_model_parallel_size: 2\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "model:\n  pipeline_model_parallel_size: 1\n  virtual_pipeline_model_parallel_size: null\n"},
    .check = check,
    .checks = "MC A7, MC E7, PS 30",
};

}  // namespace mblint
