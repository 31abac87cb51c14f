// LoRA on a gated delta net model in the memory estimate. Sources:
//  [LORA] Megatron Bridge 067f987df03b, src/megatron/bridge/peft/lora.py
//         (LoRA: target_modules default linear_qkv, linear_proj, linear_fc1,
//         linear_fc2; share_expert_adapters default True: one adapter for an
//         EP rank's grouped experts), module_matcher.py (ModuleMatcher.match:
//         a module matches when its own name equals a target or its full
//         name matches a wildcard target; no targets: every linear type not
//         excluded), utils.py (get_adapter_attributes_from_linear: the whole
//         layer's in and out features; ParallelLinearAdapter: linear_in is
//         ColumnParallelLinear(in, r, gather_output=True) behind a
//         column-parallel base and RowParallelLinear(in, r) behind a
//         row-parallel one, linear_out ColumnParallelLinear(r, out): both
//         weights are split over the layer's TP group, r x (in + out) / TP
//         per rank; behind a sequence-parallel column base linear_in reads
//         the gathered input), lora_layers.py (LoRALinear.forward).
//  [GDN]  Megatron-LM 2a75ac12c54b (the submodule Bridge pins),
//         megatron/core/models/gpt/experimental_attention_variant_module_specs.py
//         get_gated_delta_net_module_spec: the GDN block's projections are
//         in_proj (TE LayerNormColumnParallelLinear) and out_proj (TE
//         RowParallelLinear), so the default targets match no GDN
//         projection; its softmax-attention layers, MLPs, experts, shared
//         experts and the MTP layer's are matched by name.
//  [TE]   TransformerEngine e7c550c5 (Bridge's uv.lock):
//         module/layernorm_linear.py keeps the norm output only when the
//         weight trains or the output is returned (LoRA asks for it:
//         return_layernorm_output), module/linear.py keeps its input only
//         for a trained weight; so an adapted linear's input stays (the
//         adapter's linear_in saves it) and a frozen one's does not
//         (estimate_linear_attention.cpp drops the GDN projections' inputs).
#include "lint/facts/estimate_peft.h"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "lint/base/config_value.h"
#include "lint/facts/estimate_linear_attention.h"
#include "lint/facts/setting_reader.h"

namespace mblint {

namespace {

constexpr double kBf16 = 2.0;

bool set_target(std::string_view name, LoraTargets& t) {
  if (name == "linear_qkv") return t.qkv = true;
  if (name == "linear_proj") return t.proj = true;
  if (name == "linear_fc1") return t.fc1 = true;
  if (name == "linear_fc2") return t.fc2 = true;
  if (name == "in_proj") return t.in_proj = true;
  if (name == "out_proj") return t.out_proj = true;
  return false;
}

bool decline(std::string* why_not, std::string reason) {
  if (why_not) *why_not = fmt::format("LoRA on a gated delta net model: {}", reason);
  return false;
}

}  // namespace

bool read_lora_targets(const Job& job, LoraTargets& targets, std::string* why_not) {
  if (auto target = config_text(job, "peft._target_").value; target) {
    std::string_view cls(*target);
    auto ends_with = [&](std::string_view tail) {
      return cls.size() >= tail.size() && cls.substr(cls.size() - tail.size()) == tail;
    };
    if (!ends_with(".LoRA") && !ends_with(".VLMLoRA")) return decline(why_not, fmt::format("the PEFT class {} is not modelled (LoRA only)", cls));
  }
  const ConfigValue* excluded = config_node(job, "peft.exclude_modules");
  if (excluded && excluded->is_list() && !excluded->items.empty()) {
    return decline(why_not, "exclude_modules (LoRA on every other linear) is not modelled");
  }
  const ConfigValue* list = config_node(job, "peft.target_modules");
  if (!list || list->is_null()) return true;  // LoRA's default targets
  if (!list->is_list()) return decline(why_not, "peft.target_modules is not a list of module names");
  if (list->items.empty()) return decline(why_not, "an empty target_modules (every linear layer) is not modelled");
  LoraTargets read{false, false, false, false, false, false};
  for (const ConfigValue& item : list->items) {
    if (item.text.find_first_of("*.") != std::string::npos) {
      return decline(why_not, fmt::format("the wildcard target '{}' (matched against full module names) is not modelled",
                                          item.text));
    }
    if (!set_target(item.text, read)) {
      return decline(why_not, fmt::format("the target module '{}' is not modelled (linear_qkv, linear_proj, linear_fc1, "
                                          "linear_fc2, in_proj and out_proj are)",
                                          item.text));
    }
  }
  targets = read;
  return true;
}

double gdn_model_lora_params(const MemoryModel& m, const LayerKinds& k) {
  const LoraTargets& t = m.lora_targets;
  double r = static_cast<double>(m.lora_rank), h = static_cast<double>(m.hidden);
  double tp = static_cast<double>(m.tp), etp = static_cast<double>(m.etp);
  double glu = m.swiglu ? 2.0 : 1.0;
  double d = static_cast<double>(m.kv_channels);
  // linear_qkv projects the output gate too (attention_output_gate).
  double qkv_out = d * (static_cast<double>(m.heads) * (m.attention_gate ? 2 : 1) + 2.0 * m.query_groups);
  double attention = (t.qkv ? lora_adapter_params(r, h, qkv_out, tp) : 0) + (t.proj ? lora_adapter_params(r, m.heads * d, h, tp) : 0);
  double gdn = (t.in_proj ? lora_adapter_params(r, h, gdn_in_proj_width(m), tp) : 0) +
               (t.out_proj ? lora_adapter_params(r, gdn_value_width(m), h, tp) : 0);
  auto mlp = [&](double f, double split) {
    return (t.fc1 ? lora_adapter_params(r, h, f * glu, split) : 0) + (t.fc2 ? lora_adapter_params(r, f, h, split) : 0);
  };
  double dense = mlp(static_cast<double>(m.ffn), tp);
  double moe = mlp(static_cast<double>(m.moe_ffn), etp) + (m.shared_ffn > 0 ? mlp(static_cast<double>(m.shared_ffn), tp) : 0);
  return (k.attention - k.linear) * attention + k.linear * gdn + k.mlp * dense + k.moe * moe;
}

std::vector<std::pair<std::string, double>> gdn_model_lora_terms(const MemoryModel& m, const LayerKinds& k,
                                                                 double tokens, double rep) {
  const LoraTargets& t = m.lora_targets;
  double r = static_cast<double>(m.lora_rank), h = static_cast<double>(m.hidden);
  double softmax = k.attention - k.linear;
  double shared = m.shared_ffn > 0 ? k.moe : 0;  // MoE layers with a shared expert
  // Adapted linears that see every token, and the routed experts' (one
  // shared adapter per EP rank over the tokens it receives).
  double per_token = softmax * (t.qkv + t.proj) + k.linear * (t.in_proj + t.out_proj) +
                     (k.mlp + shared) * (t.fc1 + t.fc2);
  double experts = k.moe * (t.fc1 + t.fc2);
  std::vector<std::pair<std::string, double>> terms;
  // [LORA] linear_in's output (gathered to all r columns, or all-reduced)
  // is linear_out's saved input.
  terms.emplace_back("LoRA adapter intermediates (r per adapted linear)", kBf16 * r * tokens * per_token);
  terms.emplace_back("LoRA expert adapter intermediates (r per received token)",
                     kBf16 * r * expert_received_tokens(m, tokens * rep) * experts);
  if (m.sp && m.tp > 1) {
    // [LORA] behind a column-parallel base linear_in keeps its input
    // gathered over the sequence (TE returns the fused norm's output
    // gathered; the shared expert's adapter gathers it), besides the
    // sequence-parallel shard the estimate already counts.
    double column = softmax * t.qkv + k.linear * t.in_proj + (k.mlp + shared) * t.fc1;
    terms.emplace_back("LoRA A inputs gathered over sequence parallelism", kBf16 * tokens * h * column);
  }
  return terms;
}

}  // namespace mblint
