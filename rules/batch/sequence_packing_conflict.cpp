// Sequence-packing settings that Megatron Bridge refuses together: two
// packing modes, packing specs without the switch (or the reverse), padding
// that CUDA graphs or padded cu_seqlens need, and what Energon packing
// cannot run with.
#include "rules/support/batch_support.h"

#include <algorithm>

namespace mblint {

extern const RuleInfo kSequencePackingConflict;

namespace {

Quantity setting(const Job& job, std::string_view path) { return as_quantity(config_bool(job, path)); }

bool on(const Quantity& q) { return q.known() && *q == 1; }
bool off(const Quantity& q) { return q.known() && *q == 0; }

void conflict(std::vector<Diagnostic>& out, std::string message, std::string help,
              std::initializer_list<const Quantity*> involved) {
  const Quantity* primary = nullptr;
  for (const Quantity* q : involved) {
    if (!span_for(*q).valid()) continue;
    if (!primary || &most_specific({primary, q}) == q) primary = q;
  }
  Diagnostic diag = make_diagnostic(kSequencePackingConflict, std::move(message),
                                    primary ? span_for(*primary) : Span{});
  add_notes(diag, involved, primary);
  report(out, std::move(diag), std::move(help));
}

// dataset.pad_to_max_length, or the same key in dataset.dataset_kwargs.
Quantity pad_to_max_length(const Job& job) {
  Quantity direct = setting(job, "dataset.pad_to_max_length");
  if (on(direct)) return direct;
  Quantity kwargs = setting(job, "dataset.dataset_kwargs.pad_to_max_length");
  if (on(kwargs)) return kwargs;
  return direct.known() ? direct : kwargs;
}

std::vector<std::string> names(const ConfigValue* node) {
  std::vector<std::string> out;
  if (!node) return out;
  if (node->kind == ValueKind::String) out.push_back(node->text);
  for (const ConfigValue& item : node->items) {
    if (auto s = as_string(&item)) out.push_back(*s);
  }
  return out;
}

bool contains(const std::vector<std::string>& list, std::string_view name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

void check_offline(const Job& job, std::vector<Diagnostic>& out) {
  Quantity offline = setting(job, "dataset.enable_offline_packing");
  Quantity in_batch = setting(job, "dataset.enable_in_batch_packing");
  if (on(offline) && on(in_batch)) {
    conflict(out,
             "enable_offline_packing and enable_in_batch_packing are both on: Megatron Bridge allows one packing "
             "mode",
             "keep offline packing (micro_batch_size 1) or in-batch packing (micro_batch_size >= 2)",
             {&offline, &in_batch});
    return;
  }
  const ConfigValue* specs_node = config_node(job, "dataset.offline_packing_specs");
  if (!specs_node || specs_node->is_unknown()) return;
  Quantity specs = quantity_at("dataset.offline_packing_specs", std::nullopt, specs_node->where);
  specs.display = specs_node->is_null() ? "null" : "set";
  if (on(offline) && specs_node->is_null()) {
    conflict(out, "enable_offline_packing is on but offline_packing_specs is null",
             "set "
             "dataset.offline_packing_specs (packed_sequence_size, ...) or turn offline packing off",
             {&offline, &specs});
    return;
  }
  if (!specs_node->is_map()) return;
  if (off(offline)) {
    conflict(out, "offline_packing_specs is set but enable_offline_packing is off: Megatron Bridge refuses the pair",
             "set enable_offline_packing to true, or offline_packing_specs to null", {&specs, &offline});
    return;
  }
  if (!on(offline)) return;
  Quantity pad_cu = setting(job, "dataset.offline_packing_specs.pad_cu_seqlens");
  Quantity pad_max = pad_to_max_length(job);
  if (on(pad_cu) && off(pad_max)) {
    conflict(out, "offline_packing_specs.pad_cu_seqlens needs dataset pad_to_max_length",
             "set "
             "dataset.pad_to_max_length (or dataset_kwargs.pad_to_max_length) to true",
             {&pad_cu, &pad_max});
    return;
  }
  TextSetting impl = config_text(job, "model.cuda_graph_impl");
  if (!impl.value || *impl.value == "none") return;
  Quantity impl_q = quantity_at(impl.path, std::nullopt, impl.where);
  impl_q.display = *impl.value;
  std::vector<std::string> modules = names(config_node(job, "model.cuda_graph_modules"));
  std::vector<std::string> scope = names(config_node(job, "model.cuda_graph_scope"));
  bool full = *impl.value == "full_iteration" ||
              (*impl.value == "local" && (contains(modules, "full_iteration") || contains(scope, "full_iteration")));
  bool te = *impl.value == "transformer_engine";
  if (!full && !te) return;
  if (off(pad_max)) {
    conflict(out,
             fmt::format("offline packing with CUDA graphs (cuda_graph_impl {}) needs dataset pad_to_max_length: "
                         "graphs need a fixed token width",
                         *impl.value),
             "set dataset.pad_to_max_length to true", {&impl_q, &pad_max});
    return;
  }
  std::vector<std::string> captured;
  for (const auto& list : {modules, scope}) {
    for (const std::string& m : list) {
      if (m != "full" && m != "full_iteration" && m != "full_iteration_inference") captured.push_back(m);
    }
  }
  bool modules_known = config_node(job, "model.cuda_graph_modules") || job.config_complete;
  bool attention = full || (te && modules_known && (captured.empty() || contains(captured, "attn")));
  if (attention && off(pad_cu)) {
    conflict(out, "CUDA graphs that capture attention over packed sequences need offline_packing_specs.pad_cu_seqlens",
             "set offline_packing_specs.pad_cu_seqlens to true", {&impl_q, &pad_cu});
  }
}

void check_energon(const Job& job, const Derived& d, std::vector<Diagnostic>& out) {
  const ConfigValue* buffer = config_node(job, "dataset.packing_buffer_size");
  if (!buffer || buffer->is_null() || buffer->is_unknown()) return;
  Quantity packing = quantity_at("dataset.packing_buffer_size", as_int(buffer), buffer->where);
  Quantity per_token = setting(job, "model.calculate_per_token_loss");
  Quantity average = setting(job, "ddp.average_in_collective");
  Quantity mtp = config_int(job, "model.mtp_num_layers");
  TextSetting impl = config_text(job, "model.cuda_graph_impl");
  Quantity impl_q = quantity_at(impl.path, std::nullopt, impl.where);
  impl_q.display = impl.value.value_or("");
  const Quantity& pp = d.pipeline_parallel;
  const char* help = "turn Energon packing off (packing_buffer_size: null) or change the setting";
  if (off(per_token)) {
    conflict(out, "Energon sequence packing needs calculate_per_token_loss", help, {&packing, &per_token});
  } else if (on(average)) {
    conflict(out, "Energon sequence packing needs ddp.average_in_collective off", help, {&packing, &average});
  } else if (mtp.known() && *mtp > 0) {
    conflict(out, "Energon sequence packing does not support multi-token prediction (mtp_num_layers > 0)", help,
             {&packing, &mtp});
  } else if (impl.value && *impl.value != "none") {
    conflict(out, "Energon sequence packing does not support CUDA graphs", help, {&packing, &impl_q});
  } else if (splits(pp)) {
    conflict(out, "Energon sequence packing does not support pipeline parallelism yet", help, {&packing, &pp});
  }
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (context.job.dialect != Dialect::Bridge) return;
  check_offline(context.job, out);
  check_energon(context.job, context.derived, out);
}

}  // namespace

extern const RuleInfo kSequencePackingConflict = {
    .code = "MB616",
    .name = "sequence-packing-conflict",
    .group = RuleGroup::Batch,
    .severity = Severity::Error,
    .summary = "sequence-packing settings Megatron Bridge refuses together",
    .doc = R"md(Megatron Bridge's `ConfigContainer.validate()` checks the sequence-packing settings at start-up:

* offline and in-batch packing are exclusive ("enable_offline_packing and enable_in_batch_packing
  are mutually exclusive");
* `enable_offline_packing` and `offline_packing_specs` go together ("offline_packing_specs must be
  set when enable_offline_packing=True", "enable_offline_packing must be True when
  offline_packing_specs is set");
* `offline_packing_specs.pad_cu_seqlens` needs the dataset's `pad_to_max_length`;
* CUDA graphs (`cuda_graph_impl` transformer_engine, or a full-iteration graph) need a fixed
  token width (`pad_to_max_length`), and graphs that capture attention need `pad_cu_seqlens`
  ("Packed attention CUDA graphs require offline_packing_specs.pad_cu_seqlens=True");
* Energon's own packing (`packing_buffer_size`) needs `calculate_per_token_loss`, no
  `average_in_collective`, and supports neither MTP, CUDA graphs nor pipeline parallelism.

The micro batch sizes packing needs are `packed-sequence-micro-batch`.)md",
    .bad = {"override.yaml", "dataset:\n  enable_offline_packing: true\n  offline_packing_specs: null\n",
     "override.yaml --recipe llama3_8b_sft_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2 --set model.sequence_parallel=true"},
    .good = {.content =
     "dataset:\n  enable_offline_packing: true\n  offline_packing_specs:\n    packed_sequence_size: 4096\n"
     "train:\n  micro_batch_size: 1\n"},
    .check = check,
    .checks = "BR V12, BR V13",
};

}  // namespace mblint
