// overlap_moe_expert_parallel_comm (EP A2A overlap) hides the expert
// all-to-all behind computation of another microbatch; it needs expert
// parallelism, an all-to-all dispatcher, 16-bit training, the interleaved
// schedule with PP, and no recomputation or other overlap that would
// reorder the work.
#include "rules/support/moe_support.h"

namespace mblint {

extern const RuleInfo kEpOverlapPrerequisites;

namespace {

using namespace moe;

struct Finding {
  std::string message;  // what is wrong, without the switch
  std::vector<Field> fields;
  std::string help;
  std::vector<Fix> fixes;
  std::string who = "Megatron-Core asserts when the model config is finalized";
};

// Where each check lives, per release (Megatron-Core transformer_config.py,
// Megatron Bridge training/comm_overlap.py).
constexpr Version kCoreRejectsMoeRecompute{0, 17, 0};   // "moe" not in recompute_modules
constexpr Version kBridgeRejectsMoeRecompute{0, 6, 0};
constexpr Version kCoreAcceptsNoMtp{0, 19, 0};          // mtp_num_layers 0 allowed
constexpr Version kBridgeAcceptsNoMtp{0, 6, 0};
constexpr Version kCoreMtpNeedsPipelineFrom{0, 16, 0};  // one MTP layer needs PP > 1 ...
constexpr Version kCoreMtpNeedsPipelineUntil{0, 18, 0};  // ... in 0.16 and 0.17 only

// Megatron Bridge's CommOverlapConfig repeats the model checks when the
// switch is set in its comm_overlap section.
bool bridge_checks(const Job& job, const Switch& overlap) {
  return job.dialect == Dialect::Bridge && overlap.from.path == "comm_overlap.overlap_moe_expert_parallel_comm";
}

std::string who_asserts(const Job& job, bool core, bool bridge) {
  std::string core_version = to_string(job.versions.megatron_core);
  std::string bridge_version = to_string(job.versions.bridge);
  if (core && bridge) {
    return fmt::format("Megatron Bridge {}'s CommOverlapConfig and Megatron-Core {} assert", bridge_version,
                       core_version);
  }
  if (bridge) return fmt::format("Megatron Bridge {}'s CommOverlapConfig asserts", bridge_version);
  return fmt::format("Megatron-Core {} asserts when the model config is finalized", core_version);
}

void emit(const Switch& overlap, Finding finding, std::vector<Diagnostic>& out) {
  // Point at what the user wrote last: the offending value or the switch.
  const Field* primary = &overlap.from;
  for (const Field& f : finding.fields) {
    if (located(f) && (!located(*primary) || layer_rank(f.value.where.layer) >= layer_rank(primary->value.where.layer))) {
      primary = &f;
      break;
    }
  }
  Diagnostic diag = make_diagnostic(
      kEpOverlapPrerequisites,
      fmt::format("overlap_moe_expert_parallel_comm is on but {}: {}", finding.message, finding.who),
      span_for(*primary));
  if (!located(*primary)) primary = nullptr;
  for (const Field& f : finding.fields) add_field_notes(diag, {&f}, primary == &f ? &f : nullptr);
  add_field_notes(diag, {&overlap.from}, primary == &overlap.from ? &overlap.from : nullptr);
  diag.help = std::move(finding.help);
  diag.fixes = std::move(finding.fixes);
  diag.fixes.push_back(set_field_fix(overlap.from, "false"));
  out.push_back(std::move(diag));
}

std::vector<Finding> expert_findings(const RuleContext& context) {
  const Derived& d = context.derived;
  const Job& job = context.job;
  std::vector<Finding> found;
  if (d.expert_parallel.known() && *d.expert_parallel <= 1) {
    found.push_back({fmt::format("expert_model_parallel_size is {} (it overlaps the expert-parallel all-to-all)",
                                 *d.expert_parallel),
                     {from_quantity(d.expert_parallel)},
                     "use expert_model_parallel_size > 1, or turn the overlap off",
                     {}});
  }
  // Megatron Bridge's CommOverlapConfig checks the expert count; Megatron-Core does not.
  if (job.dialect == Dialect::Bridge && d.num_moe_experts.known() && *d.num_moe_experts <= 1) {
    found.push_back({fmt::format("num_moe_experts is {} (Megatron Bridge requires more than 1)",
                                 d.num_moe_experts.display.empty() ? std::to_string(*d.num_moe_experts)
                                                                   : d.num_moe_experts.display),
                     {from_quantity(d.num_moe_experts)},
                     "turn the overlap off: the model has no experts to overlap",
                     {}});
  }
  Field dispatcher = read_field(job, "model.moe_token_dispatcher_type");
  if (auto type = dispatcher.text(); type && *type != "alltoall" && *type != "flex") {
    found.push_back({fmt::format("the token dispatcher is {} (alltoall or flex required)", *type),
                     {dispatcher},
                     "use moe_token_dispatcher_type alltoall (or flex)",
                     {set_field_fix(dispatcher, "alltoall")}});
  }
  ComputePrecision precision = model_precision(job);
  if (precision.bf16 == false && precision.fp16 == false) {
    Field bf16 = read_field(job, "model.bf16");
    if (primary_span(precision.where).valid()) bf16.value.where = precision.where;
    bf16.how = note_for(precision).message;
    found.push_back({"the model trains in neither bf16 nor fp16", {bf16}, "train in bf16 (mixed_precision bf16_mixed)",
                     {}});
  }
  return found;
}

// At most one MTP layer; 0 is accepted from Megatron-Core 0.19 / Bridge 0.6;
// one MTP layer needs PP > 1 in Megatron-Core 0.16 and 0.17.
std::vector<Finding> mtp_findings(const RuleContext& context, const Switch& overlap) {
  const Job& job = context.job;
  const Derived& d = context.derived;
  std::vector<Finding> found;
  Field mtp = read_field(job, "model.mtp_num_layers");
  std::optional<int64_t> layers = mtp.integer();
  if (!layers) return found;
  if (*layers > 1) {
    found.push_back({fmt::format("mtp_num_layers is {} (at most one MTP layer is supported)", *layers), {mtp},
                     "use mtp_num_layers 1", {set_field_fix(mtp, "1")}});
    return found;
  }
  if (*layers == 0) {
    bool core = job.versions.megatron_core < kCoreAcceptsNoMtp;
    bool bridge = bridge_checks(job, overlap) && job.versions.bridge < kBridgeAcceptsNoMtp;
    if (!core && !bridge) return found;
    found.push_back({"mtp_num_layers is 0 (\"MTP layernum only supports 1\": only None or 1 are accepted before "
                     "Megatron-Core 0.19 and Megatron Bridge 0.6)",
                     {mtp}, "set mtp_num_layers to null", {set_field_fix(mtp, "null")}, who_asserts(job, core, bridge)});
    return found;
  }
  const Version& core = job.versions.megatron_core;
  bool needs_pipeline = core >= kCoreMtpNeedsPipelineFrom && core < kCoreMtpNeedsPipelineUntil;
  if (*layers == 1 && needs_pipeline && d.pipeline_parallel.known() && *d.pipeline_parallel == 1) {
    Field pp = from_quantity(d.pipeline_parallel);
    found.push_back({"mtp_num_layers is 1 with pipeline_model_parallel_size 1 (Megatron-Core 0.16 and 0.17 need "
                     "pipeline parallelism for the overlap with an MTP layer)",
                     {mtp, pp}, "use pipeline_model_parallel_size > 1, drop the MTP layer, or use Megatron-Core 0.18 "
                     "or newer", {}, who_asserts(job, true, false)});
  }
  return found;
}

std::vector<Finding> schedule_findings(const RuleContext& context, const Switch& overlap) {
  const Derived& d = context.derived;
  const Job& job = context.job;
  std::vector<Finding> found;
  Field vpp = read_field(job, "model.virtual_pipeline_model_parallel_size");
  // A pipeline layout can set the virtual stages itself: not decided here.
  if (splits(d.pipeline_parallel) && vpp.is_null() && !d.pipeline_layout) {
    Field pp = from_quantity(d.pipeline_parallel);
    found.push_back({fmt::format("pipeline_model_parallel_size is {} without virtual_pipeline_model_parallel_size (the "
                                 "overlap needs the interleaved schedule)",
                                 *d.pipeline_parallel),
                     {vpp, pp},
                     "set virtual_pipeline_model_parallel_size (>= 2, dividing the layers per stage)",
                     {}});
  }
  Field granularity = read_field(job, "model.recompute_granularity");
  if (granularity.text() == "full") {
    found.push_back({"recompute_granularity is full", {granularity}, "use selective recomputation (without 'moe')",
                     {set_field_fix(granularity, "selective")}});
  }
  for (const char* path : {"model.recompute_method", "model.recompute_num_layers"}) {
    Field f = read_field(job, path);
    if (!f.known() || f.is_null()) continue;
    found.push_back({fmt::format("{} is {} (it must be null)", f.name, f.display()), {f},
                     fmt::format("set {} to null", f.name), {set_field_fix(f, "null")}});
  }
  Field modules = read_field(job, "model.recompute_modules");
  bool core_moe = job.versions.megatron_core >= kCoreRejectsMoeRecompute;
  bool bridge_moe = bridge_checks(job, overlap) && job.versions.bridge >= kBridgeRejectsMoeRecompute;
  if (modules.known() && modules.value.is_list() && (core_moe || bridge_moe)) {
    for (const ConfigValue& item : modules.value.items) {
      if (as_string(&item) != "moe") continue;
      found.push_back({"recompute_modules contains 'moe'", {modules},
                       "recompute a smaller part of the layer instead (e.g. moe_act)", {},
                       who_asserts(job, core_moe, bridge_moe)});
      break;
    }
  }
  Field shared_overlap = read_field(job, "model.moe_shared_expert_overlap");
  if (shared_overlap.boolean() == true) {
    found.push_back({"moe_shared_expert_overlap is true (the two overlaps exclude each other)", {shared_overlap},
                     "set moe_shared_expert_overlap to false", {set_field_fix(shared_overlap, "false")}});
  }
  for (Finding& f : mtp_findings(context, overlap)) found.push_back(std::move(f));
  return found;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  Switch overlap = overlap_switch(context.job, "overlap_moe_expert_parallel_comm");
  if (overlap.value != true) return;
  for (Finding& f : expert_findings(context)) emit(overlap, std::move(f), out);
  for (Finding& f : schedule_findings(context, overlap)) emit(overlap, std::move(f), out);
}

}  // namespace

extern const RuleInfo kEpOverlapPrerequisites = {
    .code = "MB723",
    .name = "ep-overlap-prerequisites",
    .group = RuleGroup::Moe,
    .severity = Severity::Error,
    .summary = "expert-parallel communication overlap is on without one of its prerequisites",
    .doc = R"md(`overlap_moe_expert_parallel_comm` (EP A2A overlap; set through
`comm_overlap.overlap_moe_expert_parallel_comm` in Megatron Bridge, `--overlap-moe-expert-parallel-comm`
in Megatron-LM) runs the expert all-to-all of one microbatch while another computes. Megatron-Core's
`TransformerConfig.__post_init__` asserts, when the model config is finalized, and Megatron Bridge's
`CommOverlapConfig` asserts the same earlier:

* `expert_model_parallel_size > 1` and (Bridge) `num_moe_experts > 1`;
* `moe_token_dispatcher_type` `alltoall` or `flex` (the default `allgather` is not);
* bf16 or fp16 training ("...is only supported with bf16 or fp16 model");
* with `pipeline_model_parallel_size > 1`, `virtual_pipeline_model_parallel_size` set ("If enabling EP
  A2A overlap, virtual_pipeline_model_parallel_size must be specified when
  pipeline_model_parallel_size > 1");
* no full recomputation, `recompute_method` and `recompute_num_layers` null;
* `moe_shared_expert_overlap` off.

Some checks moved between releases (`megatron/core/transformer/transformer_config.py` at
core_v0.14.0 .. core_v0.19.0; Megatron Bridge `src/megatron/bridge/training/comm_overlap.py` at
v0.2.0 .. v0.6.0, whose `CommOverlapConfig` repeats them when `comm_overlap.overlap_moe_expert_parallel_comm`
is set):

* no `moe` in `recompute_modules`: asserted from Megatron-Core 0.17 and Megatron Bridge 0.6 (allowed
  before);
* MTP: Megatron-Core 0.14 to 0.18 and Bridge before 0.6 accept only `mtp_num_layers` None or 1 ("MTP
  layernum only supports 1 ..."), so 0 is an error there; Megatron-Core 0.19 and Bridge 0.6 accept
  None, 0 or 1 ("MTP supports at most one layer ..."); two or more layers are an error everywhere;
* Megatron-Core 0.16 and 0.17 also require `pipeline_model_parallel_size > 1` with one MTP layer
  ("Pipeline model parallel size must be larger than 1 when enabling overlap_moe_expert_parallel_comm
  with MTP layer."); 0.18 dropped it.

Pass `--megatron-core-version` and `--bridge-version` for the release the job runs (default the newest).

Each unmet prerequisite is reported on its own. PyTorch 2.6 or newer is also required; the installed
PyTorch is not in the files. In Megatron Bridge, `comm_overlap.overlap_moe_expert_parallel_comm` decides
when it is set; without it, a `CommOverlapConfig` resets `model.overlap_moe_expert_parallel_comm` to
false, so the model value counts only when the job has no `comm_overlap` section.)md",
    .bad = {"override.yaml",
     "comm_overlap:\n  overlap_moe_expert_parallel_comm: true\nmodel:\n  moe_token_dispatcher_type: allgather\n",
     "override.yaml --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --nodes 4 --gpus-per-node 4 --gpu gb200"},
    .good = {.content =
     "comm_overlap:\n  overlap_moe_expert_parallel_comm: true\nmodel:\n  moe_token_dispatcher_type: alltoall\n"},
    .check = check,
    .checks = "MC K9, MC J11, MC H5, PS 52",
};

}  // namespace mblint
