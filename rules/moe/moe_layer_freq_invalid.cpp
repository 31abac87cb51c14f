// moe_layer_freq says which decoder layers are MoE: an int N (layer i is MoE
// iff i % N == 0) or a 0/1 list with one entry per layer.
#include "rules/support/moe_support.h"

namespace mblint {

extern const RuleInfo kMoeLayerFreqInvalid;

namespace {

using namespace moe;

void report(std::vector<Diagnostic>& out, std::string message, std::initializer_list<const Field*> fields,
            std::string help) {
  report(out, diagnostic_at(kMoeLayerFreqInvalid, std::move(message), fields), std::move(help));
}

void check_list(const RuleContext& context, const Field& freq, std::vector<Diagnostic>& out) {
  const std::vector<ConfigValue>& items = freq.value.items;
  for (size_t i = 0; i < items.size(); ++i) {
    std::optional<int64_t> entry = as_int(&items[i]);
    if (items[i].is_unknown()) return;
    if (entry == 0 || entry == 1) continue;
    report(out,
           fmt::format("moe_layer_freq entry {} is {}: every entry must be 1 (MoE layer) or 0 (dense layer); Megatron-"
                       "Core raises ValueError (\"Invalid layer pattern\") when the model is built",
                       i, to_display(items[i])),
           {&freq}, "write 1 for an MoE layer and 0 for a dense one");
    return;
  }
  const Quantity& layers = context.derived.num_layers;
  if (!layers.known() || static_cast<int64_t>(items.size()) == *layers) return;
  Field layers_field = from_quantity(layers);
  report(out,
         fmt::format("moe_layer_freq lists {} layers but the model has num_layers {}: Megatron-Core asserts \"Invalid "
                     "length of moe_layer_pattern\" when the model is built",
                     items.size(), *layers),
         {&freq, &layers_field},
         fmt::format("give one 0/1 entry per decoder layer ({} entries; MTP layers are not listed)", *layers));
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (!is_moe(context.derived)) return;
  Field freq = read_field(context.job, "model.moe_layer_freq");
  if (!freq.known()) return;
  switch (freq.value.kind) {
    case ValueKind::List: check_list(context, freq, out); return;
    case ValueKind::Int:
      if (freq.value.integer > 0) return;
      report(out,
             fmt::format("moe_layer_freq is {}: an integer frequency must be at least 1 (layer i is MoE when i % N == "
                         "0); Megatron-Core fails building the layer pattern",
                         freq.value.integer),
             {&freq}, "use 1 (every layer MoE), N > 1 (every N-th layer, starting with layer 0), or a 0/1 list");
      return;
    case ValueKind::String:
      // Megatron-LM evaluates its pattern strings itself; Megatron Bridge passes the value on.
      if (runs_validate_args(context.job)) return;
      report(out,
             fmt::format("moe_layer_freq is the string \"{}\": Megatron Bridge passes it to Megatron-Core unevaluated, "
                         "which raises ValueError (\"Invalid moe_layer_freq\") when the model is built",
                         freq.value.text),
             {&freq}, "write an integer or a YAML list of 0/1 entries, e.g. [0, 0, 0, 1, 1, ...]");
      return;
    default: return;
  }
}

}  // namespace

extern const RuleInfo kMoeLayerFreqInvalid = {
    .code = "MB717",
    .name = "moe-layer-freq-invalid",
    .group = RuleGroup::Moe,
    .severity = Severity::Error,
    .summary = "moe_layer_freq must be a positive int or a 0/1 list with one entry per layer",
    .doc = R"md(`moe_layer_freq` decides which decoder layers get experts. As an integer `N`, layer `i`
(counting from 0) is an MoE layer when `i % N == 0` — so layer 0 is always MoE and `N = 1` makes
every layer MoE. As a list, entry `i` is 1 for an MoE layer and 0 for a dense one (DeepSeek-V3:
three dense layers, then 58 MoE: `[0]*3 + [1]*58`).

Megatron-Core's `get_gpt_decoder_layer_specs` fails when the model is built if:

* the list's length is not `num_layers` ("Invalid length of moe_layer_pattern: ..., expected ...");
  MTP layers are not part of the list;
* an entry is neither 0 nor 1 ("Invalid layer pattern");
* the value is neither an int nor a list ("Invalid moe_layer_freq") — under Megatron Bridge a
  pattern string such as `"([0]*3+[1]*58)"` is passed on unevaluated; only Megatron-LM's
  command line evaluates such expressions;
* the integer is 0 or negative (a division by zero, or entries of -1).)md",
    .bad = {"override.yaml",
     "model:\n  moe_layer_freq: [0, 0, 1, 1, 1, 1]\n",
     "override.yaml --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --nodes 4 --gpus-per-node 4 --gpu gb200"},
    .good = {.content = "model:\n  moe_layer_freq: 2\n"},
    .check = check,
    .checks = "MC G22",
};

}  // namespace mblint
