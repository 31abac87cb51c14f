// Deferring the embedding's weight-gradient computation overlaps it with the
// pipeline flush: it needs a pipeline, fused gradient accumulation and a
// non-negative deferral limit.
#include "rules/support/pipeline_support.h"

namespace mblint {

extern const RuleInfo kDeferEmbeddingWgradInvalid;

namespace {

struct Deferral {
  std::optional<bool> defer;
  Quantity defer_source;
  Quantity limit;  // wgrad_deferral_limit
};

// Megatron Bridge's comm_overlap, when present, decides both values: its
// own fields, or off and -1.
std::optional<Deferral> read_deferral(const Job& job) {
  Presence comm = comm_overlap_presence(job);
  if (comm == Presence::Unknown) return std::nullopt;
  Deferral d;
  std::string section = comm == Presence::Present ? "comm_overlap." : "model.";
  Setting defer = config_bool(job, section + "defer_embedding_wgrad_compute");
  d.defer = defer.value;
  d.defer_source = as_quantity(defer);
  d.limit = config_int(job, section + "wgrad_deferral_limit");
  // Left out of a partial config, a field may still be set by the recipe;
  // null (or a full dump's default) is really unset.
  const ConfigValue* limit_node = config_node(job, section + "wgrad_deferral_limit");
  bool limit_unset = (limit_node && limit_node->is_null()) || (!limit_node && job.config_complete);
  if (comm == Presence::Present) {
    const ConfigValue* defer_node = config_node(job, section + "defer_embedding_wgrad_compute");
    bool defer_unset = (defer_node && defer_node->is_null()) || (!defer_node && job.config_complete);
    if (!d.defer && defer_unset) d.defer = false;
    if (limit_unset) {
      d.limit.value = -1;
      d.limit.how = "comm_overlap leaves wgrad_deferral_limit unset: Megatron Bridge uses -1";
    }
  } else if (!limit_node && job.dialect == Dialect::MegatronLM) {
    d.limit.value = 0;  // --wgrad-deferral-limit defaults to 0
    d.limit.defaulted = true;
  }
  return d;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  std::optional<Deferral> deferral = read_deferral(context.job);
  if (!deferral || !deferral->defer || !*deferral->defer) return;
  const Quantity& defer = deferral->defer_source;
  const Quantity& pp = context.derived.pipeline_parallel;
  Setting fusion = config_bool(context.job, "model.gradient_accumulation_fusion");
  Quantity fusion_q = as_quantity(fusion);
  std::vector<std::pair<std::string, const Quantity*>> problems;
  if (pp.known() && *pp == 1) problems.push_back({"pipeline_model_parallel_size is 1", &pp});
  if (fusion.value && !*fusion.value) problems.push_back({"gradient_accumulation_fusion is off", &fusion_q});
  if (deferral->limit.known() && *deferral->limit < 0) {
    problems.push_back({fmt::format("wgrad_deferral_limit is {}", *deferral->limit), &deferral->limit});
  }
  if (problems.empty()) return;
  const Quantity* primary = &defer;
  for (const auto& problem : problems) {
    if (&most_specific({primary, problem.second}) == problem.second) primary = problem.second;
  }
  std::string why;
  for (size_t i = 0; i < problems.size(); ++i) why += (i ? ", and " : "") + problems[i].first;
  Diagnostic diag = make_diagnostic(
      kDeferEmbeddingWgradInvalid,
      fmt::format("defer_embedding_wgrad_compute is on but {}: Megatron-Core rejects the model config", why),
      span_for(*primary));
  if (primary != &defer) diag.notes.push_back(note_for(defer));
  for (const auto& problem : problems) {
    if (problem.second != primary) diag.notes.push_back(note_for(*problem.second));
  }
  add_notes(diag, {}, primary);
  const Quantity& first = *problems.front().second;
  if (&first == &pp) {
    diag.help = "turn defer_embedding_wgrad_compute off: without a pipeline there is no flush to overlap it with";
  } else if (&first == &fusion_q) {
    diag.help = "turn defer_embedding_wgrad_compute off, or gradient_accumulation_fusion on";
  } else {
    diag.help = "set wgrad_deferral_limit to 0 (no limit) or a positive number of microbatches";
    diag.fixes.push_back(set_value_fix(deferral->limit, 0));
  }
  Setting defer_setting;
  defer_setting.name = defer.name;
  defer_setting.where = defer.where;
  diag.fixes.push_back(set_setting_fix(defer_setting, false, FixSafety::Unsafe));
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kDeferEmbeddingWgradInvalid = {
    .code = "MB508",
    .name = "defer-embedding-wgrad-invalid",
    .group = RuleGroup::Pipeline,
    .severity = Severity::Error,
    .summary = "defer_embedding_wgrad_compute needs PP > 1, gradient accumulation fusion and wgrad_deferral_limit >= 0",
    .doc = R"md(`defer_embedding_wgrad_compute` postpones the word-embedding weight-gradient GEMMs of the last
pipeline stage into the pipeline flush, where they hide behind communication. Megatron-Core's
`ModelParallelConfig` raises at start-up when

* the pipeline has one stage ("Cannot defer embedding wgrad compute when pipeline model parallel
  is not used"),
* `gradient_accumulation_fusion` is off ("Cannot defer embedding wgrad compute when gradient
  accumulation fusion is not used"),
* `wgrad_deferral_limit` is negative ("Wgrad deferral limit should be greater than or equal to
  0 when it is enabled!").

Under Megatron Bridge a `comm_overlap` section decides both values: set
`comm_overlap.defer_embedding_wgrad_compute: true` and Bridge passes
`comm_overlap.wgrad_deferral_limit`, or -1 when that is left unset, which fails. NVIDIA's
recipes set both (GPT-3 175B: limit 50, Llama 3 70B: 22).)md",
    .bad = {"override.yaml",
     "comm_overlap:\n  defer_embedding_wgrad_compute: true\n  wgrad_deferral_limit: null\n",
     "override.yaml --recipe llama3_70b_pretrain_32gpu_h100_bf16_config --nodes 4 --gpus-per-node 8"},
    .good = {.content = "comm_overlap:\n  defer_embedding_wgrad_compute: true\n  wgrad_deferral_limit: 22\n"},
    .check = check,
    .checks = "MC E23, BR model defer wgrad",
};

}  // namespace mblint
