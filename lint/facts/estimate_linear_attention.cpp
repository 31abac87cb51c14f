// Gated delta net (GDN) layers in the memory estimate. Sources:
//  [GDN] NVIDIA/Megatron-LM 2a75ac12c54b (the submodule Megatron Bridge
//        067f987df03b pins), megatron/core/ssm/gated_delta_net/common.py
//        (_GDNBase: in_proj hidden -> 2·qk + 2·v + 2·value heads, i.e. q, k,
//        v, the output gate z, beta and alpha; a depthwise conv1d over q, k, v
//        without bias; dt_bias and A_log per value head; out_norm over one
//        value head; out_proj v -> hidden; bias False; the spec fuses the
//        input norm into in_proj), gdn.py (GatedDeltaNet.forward) and
//        models/gpt/experimental_attention_variant_module_specs.py
//        (get_gated_delta_net_module_spec, get_linear_attention_pattern).
//  [FLA] flash-linear-attention v0.5.1 (Bridge's uv.lock):
//        fla/ops/gated_delta_rule/chunk.py ChunkGatedDeltaRuleFunction
//        save_for_backward (q, k, v, the chunk-cumulative g in fp32, beta
//        and the WY matrix A, B x T x H x 64 in k's dtype from
//        chunk_fwd.py; the chunk states h are recomputed in the backward
//        pass), fla/modules/l2norm.py (saves its output and rstd),
//        fla/modules/conv/triton/ops.py CausalConv1dFunction (saves its
//        input; the SiLU output is recomputed).
// Context parallelism exchanges sequence for heads (the a2a in
// GatedDeltaNet.forward): the element counts per rank are those of s/CP
// tokens with every head.
#include "lint/facts/estimate_linear_attention.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "lint/base/config_value.h"
#include "lint/facts/setting_reader.h"
#include "lint/model/catalog_fields.h"

namespace mblint {

namespace {

constexpr double kBf16 = 2.0;  // activations are 16-bit, as the rest of the estimate assumes
constexpr double kChunk = 64;  // FLA's chunk size: A holds 64 values per token and value head

bool recomputes(const MemoryModel& m, const char* module) {
  return m.recompute == "selective" && m.recompute_modules.count(module) > 0;
}

struct GdnDims {
  double qk = 0, v = 0, key_heads = 0, value_heads = 0, key_dim = 0, value_dim = 0, conv = 0;
  double projected() const { return 2 * qk + 2 * v + 2 * value_heads; }  // in_proj: q, k, v, z, beta, alpha
  double conv_channels() const { return 2 * qk + v; }
};

GdnDims gdn_dims(const MemoryModel& m) {
  GdnDims d;
  d.key_heads = static_cast<double>(m.gdn_key_heads);
  d.value_heads = static_cast<double>(m.gdn_value_heads);
  d.key_dim = static_cast<double>(m.gdn_key_dim);
  d.value_dim = static_cast<double>(m.gdn_value_dim);
  d.qk = d.key_heads * d.key_dim;
  d.v = d.value_heads * d.value_dim;
  d.conv = static_cast<double>(m.gdn_conv);
  return d;
}

}  // namespace

std::vector<bool> gdn_layer_pattern(int64_t layers, int64_t freq) {
  std::vector<bool> out(static_cast<size_t>(std::max<int64_t>(0, layers)), true);
  if (freq <= 0) return out;
  for (size_t i = 0; i < out.size(); ++i) out[i] = (static_cast<int64_t>(i) + 1) % freq != 0;
  return out;
}

double gdn_layers_on_stage(const MemoryModel& m, int stage) {
  if (m.gdn_pattern.empty()) return 0;
  return marked_layers_on_stage(m, m.gdn_pattern, stage);
}

double gdn_in_proj_width(const MemoryModel& m) { return gdn_dims(m).projected(); }
double gdn_value_width(const MemoryModel& m) { return gdn_dims(m).v; }

GdnParams gdn_layer_params(const MemoryModel& m) {
  GdnDims d = gdn_dims(m);
  double h = static_cast<double>(m.hidden);
  double tp = static_cast<double>(m.tp);
  GdnParams p;
  // [GDN] _GDNBase.__init__: in_proj, the depthwise conv1d (conv_bias
  // False), dt_bias and A_log, out_proj; all marked tensor_model_parallel.
  p.sharded = (h * d.projected() + d.conv_channels() * d.conv + 2 * d.value_heads + d.v * h) / tp;
  // The fused input norm (in_proj's layer_norm_weight) and out_norm over
  // value_head_dim; LayerNorm adds a bias to each.
  double norms = h + d.value_dim;
  p.replicated = m.rmsnorm ? norms : 2 * norms;
  p.largest = h * d.projected() / tp;
  return p;
}

std::vector<std::pair<std::string, double>> gdn_layer_terms(const MemoryModel& m, double tokens, double rep) {
  GdnDims d = gdn_dims(m);
  double h = static_cast<double>(m.hidden);
  double tp = static_cast<double>(m.tp);
  double gemm = m.fp8 ? 1.0 : kBf16;  // FP8 GEMM inputs are kept quantized (estimate.cpp)
  std::vector<std::pair<std::string, double>> t;
  // in_proj is a TE LayerNormColumnParallelLinear: the norm's input and the
  // GEMM's input, as a QKV projection [K].
  t.emplace_back("GDN in_proj norm input", kBf16 * tokens * h * rep);
  // Under LoRA a projection without an adapter is frozen: TE keeps no GEMM
  // input for it (estimate_peft.cpp [TE]).
  bool lora = m.lora_rank > 0;
  if (!lora || m.lora_targets.in_proj) t.emplace_back("GDN in_proj input", gemm * tokens * h * rep);
  // _prepare_input_for_gated_delta_rule and _compute_gates are jit_fuser
  // (torch.compile) functions whose inputs beta, alpha and z are views of
  // the in_proj output; the compiled backward saves the gate inputs it
  // needs (softplus(alpha + dt_bias), sigmoid(beta)), and a saved view keeps
  // its whole base alive: the in_proj output qkvzba.
  t.emplace_back("GDN in_proj output (q, k, v, z, beta, alpha)", kBf16 * tokens * d.projected() / tp);
  // [FLA] causal_conv1d saves its (contiguous) input, the q, k, v columns.
  t.emplace_back("GDN conv1d input", kBf16 * tokens * d.conv_channels() / tp);
  // [FLA] l2norm saves its output and an fp32 rstd per key head (q and k).
  t.emplace_back("GDN L2-normalised q, k + rstd (fp32)", (kBf16 * 2 * d.qk + 4 * 2 * d.key_heads) * tokens / tp);
  // [FLA] the chunked delta rule keeps q and k repeated to the value heads
  // (repeat_interleave in _prepare_input_for_gated_delta_rule), v, the
  // fp32 cumulative decay g, beta, and the WY matrix A (64 per head).
  t.emplace_back("GDN delta-rule q, k (per value head), v",
                 kBf16 * tokens * (2 * d.value_heads * d.key_dim + d.v) / tp);
  t.emplace_back("GDN delta-rule g (fp32) and beta", (4 + kBf16) * tokens * d.value_heads / tp);
  t.emplace_back("GDN delta-rule WY matrix A", kBf16 * tokens * d.value_heads * kChunk / tp);
  // The output gate z (a contiguous copy) for the gated norm's backward.
  t.emplace_back("GDN output gate z", kBf16 * tokens * d.v / tp);
  if (recomputes(m, "gdn_norm_out")) {
    // [GDN] recompute_norm_out: the gated norm is checkpointed from its
    // inputs (core output and z) and out_proj's input is discarded and
    // recomputed in the backward pass.
    t.emplace_back("GDN core output (gated norm recomputed)", kBf16 * tokens * d.v / tp);
  } else {
    // _apply_gated_norm: out_norm's input and fp32 rstd per value head, its
    // output (the factor of the z gate's gradient), then out_proj's input.
    t.emplace_back("GDN gated norm input, rstd (fp32) and output",
                   (2 * kBf16 * d.v + 4 * d.value_heads) * tokens / tp);
    if (!lora || m.lora_targets.out_proj) t.emplace_back("GDN out_proj input", gemm * tokens * d.v / tp);
  }
  if (m.hidden_dropout > 0) t.emplace_back("GDN dropout mask sbh", tokens * h * rep);
  return t;
}

double gdn_layer_bytes(const MemoryModel& m) {
  double tokens = static_cast<double>(m.seq) / m.cp * m.micro_batch;
  double total = 0;
  for (const auto& [what, bytes] : gdn_layer_terms(m, tokens, m.sp ? 1.0 / m.tp : 1.0)) total += bytes;
  return total;
}

bool catalog_has_gated_delta_net(const ModelDims* dims) {
  return dims && dims->gated_delta_net && *dims->gated_delta_net;
}

bool read_gated_delta_net(const Job& job, const ModelDims* dims, MemoryModel& m, std::string* why_not) {
  // The catalog's "freq/key_heads/key_dim/value_heads/value_dim/conv_kernel/output_gate".
  std::vector<int64_t> catalog = slash_numbers(dims ? dims->gated_delta_net : nullptr, 7);
  bool recorded = catalog.size() == 7;
  std::vector<std::string> missing;
  // Unset dims take TransformerConfig's defaults (Megatron-LM 2a75ac12c54b
  // transformer_config.py:363-375, unchanged at d98e8a64dd; Megatron-LM's
  // flags default to them): what Megatron-Core builds, not a guess. The
  // layer pattern has no default (__post_init__ asserts it is set).
  auto dim = [&](const char* path, size_t index, int64_t upstream_default) -> int64_t {
    if (auto v = config_int(job, path).value; v && *v > 0) return *v;
    return recorded ? catalog[index] : upstream_default;
  };
  m.gdn_key_heads = dim("model.linear_num_key_heads", 1, 16);
  m.gdn_key_dim = dim("model.linear_key_head_dim", 2, 128);
  m.gdn_value_heads = dim("model.linear_num_value_heads", 3, 32);
  m.gdn_value_dim = dim("model.linear_value_head_dim", 4, 128);
  m.gdn_conv = dim("model.linear_conv_kernel_dim", 5, 4);
  // linear_attention_freq: an integer, or a per-layer list (1 = GDN).
  const ConfigValue* freq = config_node(job, "model.linear_attention_freq");
  if (freq && freq->is_list()) {
    for (const ConfigValue& item : freq->items) m.gdn_pattern.push_back(as_int(&item).value_or(1) != 0);
    if (static_cast<int64_t>(m.gdn_pattern.size()) != m.layers) missing.push_back("linear_attention_freq (list length)");
  } else if (auto every = as_int(freq); every && *every > 0) {
    m.gdn_pattern = gdn_layer_pattern(m.layers, *every);
  } else if (recorded) {
    m.gdn_pattern = gdn_layer_pattern(m.layers, catalog[0]);
  } else {
    missing.push_back("linear_attention_freq");
  }
  m.attention_gate = config_bool(job, "model.attention_output_gate").value.value_or(recorded && catalog[6] != 0);
  if (!missing.empty()) {
    if (why_not) {
      *why_not = fmt::format("gated delta net: {} not known", fmt::join(missing, ", "));
    }
    m.gdn_pattern.clear();
    return false;
  }
  return true;
}

}  // namespace mblint
