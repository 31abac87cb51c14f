#include "rules/support/pipeline_support.h"

#include <algorithm>
#include <cctype>

namespace mblint {


Layout read_layout(const Job& job) {
  Layout layout;
  layout.quantity.name = "pipeline_model_parallel_layout";
  layout.quantity.path = "model.pipeline_model_parallel_layout";
  const ConfigValue* node = config_node(job, layout.quantity.path);
  if (!node || node->is_null()) return layout;
  layout.present = true;
  layout.quantity.where = node->where;
  layout.quantity.display = node->kind == ValueKind::String ? node->text : to_display(*node);
  std::optional<ExpandedLayout> expanded;
  if (node->kind == ValueKind::String) {
    expanded = expand_layout(node->text);
  } else if (node->is_list()) {
    expanded = expand_layout_list(*node);
    layout.list_form = true;
  }
  if (!expanded) return layout;
  layout.known = true;
  layout.expanded = std::move(*expanded);
  return layout;
}

std::optional<std::string> example_layout(int64_t layers, int64_t stages, int64_t mtp) {
  if (layers <= 0 || stages <= 0 || mtp < 0 || layers % stages != 0) return std::nullopt;
  int64_t per = layers / stages;
  std::string unit = per == 1 ? "t" : fmt::format("t*{}", per);
  std::string tail = unit + std::string(static_cast<size_t>(mtp), kMtp) + "L";
  if (stages == 1) return "E" + tail;
  std::string middle = stages == 3 ? unit + "|" : stages > 3 ? fmt::format("({}|)*{}", unit, stages - 2) : "";
  return "E" + unit + "|" + middle + tail;
}

int64_t count_layers(const std::vector<std::string>& stages, char code) {
  int64_t n = 0;
  for (const std::string& stage : stages) n += std::count(stage.begin(), stage.end(), code);
  return n;
}

std::optional<int64_t> layout_virtual_stages(const Layout& layout, const Derived& d) {
  if (!layout.known || !layout.expanded.error.empty()) return std::nullopt;
  const Quantity& pp = d.pipeline_parallel;
  if (!pp.known() || *pp <= 0) return std::nullopt;
  auto stages = static_cast<int64_t>(layout.expanded.stages.size());
  if (stages % *pp != 0) return std::nullopt;
  return stages / *pp;
}

Quantity raw_virtual_pipeline(const Job& job) {
  Quantity q = config_int(job, "model.virtual_pipeline_model_parallel_size");
  const ConfigValue* node = config_node(job, q.path);
  if ((node && node->is_null()) || (!node && q.defaulted && !q.value)) {
    q.value = 0;
    q.display = node ? "null" : "None";
  }
  return q;
}

Interleaving interleaving(const RuleContext& context) {
  const Derived& d = context.derived;
  Interleaving result;
  const Quantity& pp = d.pipeline_parallel;
  if (!pp.known() || *pp <= 0) return result;
  Quantity vpp = raw_virtual_pipeline(context.job);
  Layout layout = read_layout(context.job);
  // Megatron-LM's argparse (and NeMo) treat one virtual stage as none;
  // Megatron Bridge hands 1 to Megatron-Core, which then interleaves.
  bool one_is_none = context.job.dialect != Dialect::Bridge;
  if (layout.present) {
    auto detected = layout_virtual_stages(layout, d);
    if (!detected) return result;
    bool explicit_vpp = vpp.known() && *vpp > 0 && !(one_is_none && *vpp == 1);
    result.known = true;
    result.chunks = *detected;
    result.interleaved = *pp > 1 && (*detected > 1 || explicit_vpp);
    result.source = layout.quantity;
    result.source.how = fmt::format("pipeline_model_parallel_layout has {} stages = pipeline_model_parallel_size {} "
                                    "x {}",
                                    layout.expanded.stages.size(), *pp, count_of(*detected, "virtual stage"));
    return result;
  }
  if (!vpp.known()) return result;
  result.known = true;
  result.source = vpp;
  bool none = *vpp <= 0 || (one_is_none && *vpp == 1);
  result.chunks = none ? 1 : *vpp;
  result.interleaved = !none && *pp > 1;
  return result;
}

Quantity microbatch_group_size(const RuleContext& context) {
  Quantity q = config_int(context.job, "model.microbatch_group_size_per_vp_stage");
  const ConfigValue* node = config_node(context.job, q.path);
  bool null_value = (node && node->is_null()) || (!node && q.defaulted && !q.value);
  // Megatron-LM's argparse default is None too: no flag means PP.
  bool megatron_lm_default = !node && context.job.dialect == Dialect::MegatronLM;
  const Quantity& pp = context.derived.pipeline_parallel;
  if ((null_value || megatron_lm_default) && pp.known()) {
    q.value = *pp;
    q.defaulted = true;
    q.how = fmt::format("microbatch_group_size_per_vp_stage is {}: Megatron-Core uses pipeline_model_parallel_size "
                        "({})",
                        node ? "null" : "unset", *pp);
  }
  return q;
}

Quantity microbatch_count(const RuleContext& context) {
  const Derived& d = context.derived;
  if (d.microbatches.known()) return d.microbatches;
  Quantity m = d.microbatches;
  const Quantity& gbs = d.global_batch_size;
  const Quantity& mbs = d.micro_batch_size;
  const Quantity& dp = d.batch_data_parallel;
  bool decrease = config_bool(context.job, "train.decrease_batch_size_if_needed").value.value_or(false);
  if (!decrease || !gbs.known() || !mbs.known() || !dp.known() || *mbs <= 0 || *dp <= 0 || *gbs < 0) return m;
  m.value = *gbs / (*mbs * *dp);
  m.how = fmt::format("global batch {} rounded down to a multiple of micro batch {} x DP {} "
                      "(decrease_batch_size_if_needed)",
                      *gbs, *mbs, *dp);
  return m;
}

Presence comm_overlap_presence(const Job& job) {
  if (job.dialect != Dialect::Bridge) return Presence::Absent;
  const ConfigValue* node = config_node(job, "comm_overlap");
  if (node && node->is_map()) return Presence::Present;
  if (node && node->is_null()) return Presence::Absent;
  if (!node && job.config_complete) return Presence::Absent;  // ConfigContainer.comm_overlap defaults to None
  return Presence::Unknown;
}

Quantity as_quantity(const Setting& setting) {
  Quantity q;
  q.name = setting.name;
  q.path = setting.path;
  q.where = setting.where;
  q.defaulted = setting.defaulted;
  if (setting.value) {
    q.value = *setting.value ? 1 : 0;
    q.display = *setting.value ? "true" : "false";
  }
  return q;
}

Fix set_null_fix(const Quantity& quantity) {
  Fix fix;
  fix.description = fmt::format("set {} to null", quantity.name);
  fix.safety = FixSafety::Unsafe;
  edit_or_set(fix, quantity.where, quantity.path, "null");
  // The re-check sees the null too (it re-lints the job with the changes).
  if (!quantity.path.empty()) fix.changes.push_back(SettingChange{quantity.path, "null"});
  return fix;
}

Quantity quantity_at(std::string_view path, std::optional<int64_t> value, const Provenance& where) {
  Quantity q;
  q.path = std::string(path);
  size_t dot = path.rfind('.');
  q.name = std::string(dot == std::string_view::npos ? path : path.substr(dot + 1));
  q.value = value;
  q.where = where;
  return q;
}

}  // namespace mblint
