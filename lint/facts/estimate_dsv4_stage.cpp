// DeepSeek V4 in the stage estimate. Sources: Megatron-LM dev d48bd6be0a85
// (megatron/core/transformer/, as estimate_dsv4.cpp reads it):
//  [ATT] experimental_attention_variant/deepseek_v4_hybrid_attention.py
//  [TB]  transformer_block.py (the n-stream expansion, the head, the mhc recompute plan)
//  [TL]  transformer_layer.py (HyperConnectionTransformerLayer)
//  [HC]  hyper_connection.py (learned_output_contract)
//  [MTP] multi_token_prediction.py (MultiTokenPredictionLayer under hyper-connections)
// and Megatron Bridge 067f987df03b
// src/megatron/bridge/models/deepseek/deepseek_v4_bridge.py (the layout).
#include "lint/facts/estimate_dsv4_stage.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace mblint {

namespace {

constexpr double kBf16 = 2.0, kFp32 = 4.0;

double tokens_of(const MemoryModel& m) { return static_cast<double>(m.seq) * static_cast<double>(m.micro_batch); }

int64_t ratio_of(const Dsv4Shape& s, int64_t layer) { return s.ratios[static_cast<size_t>(layer)]; }

// `per_layer(l)` summed over the decoder layers of stage `stage`: its own
// contiguous layers without virtual stages, else the stage's share of the
// mean over all layers (interleaved chunks spread the layer kinds), as
// estimate.cpp's marked_layers_on_stage counts a per-layer mark.
template <class F>
double over_stage_layers(const MemoryModel& m, int stage, F per_layer) {
  if (stage < 0 || stage >= static_cast<int>(m.stage_layers.size())) return 0;
  double n = m.stage_layers[static_cast<size_t>(stage)];
  int64_t layers = m.dsv4->layers;
  if (m.vpp == 1) {
    double start = 0;
    for (int s = 0; s < stage; ++s) start += m.stage_layers[static_cast<size_t>(s)];
    int64_t first = std::llround(start), count = std::llround(n);
    double sum = 0;
    for (int64_t l = first; l < first + count && l < layers; ++l) sum += per_layer(l);
    return sum;
  }
  double all = 0;
  for (int64_t l = 0; l < layers; ++l) all += per_layer(l);
  return n * all / static_cast<double>(std::max<int64_t>(1, layers));
}

// The MoE block of a DeepSeek V4 layer per micro-batch: estimate.cpp's
// router, dispatch and experts, and the pre-MLP norm here. [TL] :2297-2304:
// the MLP hyper-connection's aggregate is fp32 and MoE layers take it as it
// is, so the norm keeps an fp32 input (and its rstd) and its output is the
// MoE input. Under mhc recompute [TL] :2307-2318 checkpoints that norm
// (CheckpointWithoutOutput: the output is freed and recomputed) and the
// aggregate is in the recompute block ([TB] :801-839): neither is kept. Under
// "layernorm" recompute only the output is freed.
double moe_bytes(const MemoryModel& m, const Dsv4Run& run) {
  double h = static_cast<double>(m.hidden), tokens = tokens_of(m);
  double bytes = moe_block_bytes(m);
  if (!run.recompute_mhc) {
    bytes += tokens * (kFp32 * h + kFp32);  // pre-MLP norm input (fp32) + rstd
    if (!(m.recompute == "selective" && m.recompute_modules.count("layernorm"))) bytes += tokens * kBf16 * h;
  }
  return bytes;
}

// One decoder layer with compression ratio `ratio` per micro-batch.
// Fine-grained offloading follows the model's offload_modules (estimate.cpp
// clears them to count what the layers in transit still hold).
double layer_bytes(const MemoryModel& m, int64_t ratio, const Dsv4Run& run) {
  Dsv4Run r = run;
  r.offload_core_attn = m.offload_modules.count("core_attn") > 0;
  r.offload_attn_proj = m.offload_modules.count("attn_proj") > 0;
  return tokens_of(m) * dsv4_layer_token_bytes(*m.dsv4, ratio, r) + moe_bytes(m, r);
}

// Parameters of decoder layer `ratio` without its routed experts, and the routed experts.
double routed_params(const Dsv4Shape& s) {
  return static_cast<double>(s.experts) * 3.0 * static_cast<double>(s.hidden) * static_cast<double>(s.moe_ffn);
}

}  // namespace

bool dsv4_supported(const MemoryModel& m, std::string* why_not) {
  std::string reason;
  if (m.tp > 1) {
    reason = fmt::format("DeepSeek V4 at tensor parallel size {}: its hybrid attention supports TP 1 only "
                         "(experimental_attention_variant/deepseek_v4_hybrid_attention.py:90-92 asserts it, "
                         "NVIDIA/Megatron-LM dev d48bd6be0a85)", m.tp);
  } else if (m.cp > 1) {
    reason = fmt::format("DeepSeek V4 at context parallel size {}: the compressed sparse attention's CP split "
                         "(deepseek_v4_hybrid_attention.py:261-270, csa.py:728-784, NVIDIA/Megatron-LM dev "
                         "d48bd6be0a85) is not modelled; the estimate counts SBHD sequences on one rank", m.cp);
  } else if (m.lora_rank > 0) {
    reason = "DeepSeek V4 with LoRA: the adapters on its attention, hyper-connection and MoE linears are not "
             "modelled (Megatron Bridge ships no DeepSeek V4 PEFT recipe)";
  }
  if (!reason.empty() && why_not) *why_not = reason;
  return reason.empty();
}

void dsv4_bridge_split(MemoryModel& m) {
  std::vector<int64_t> split = dsv4_bridge_stage_layers(m.layers, m.pp);
  m.stage_layers.assign(split.begin(), split.end());
  m.stage_mtp.assign(static_cast<size_t>(m.pp), 0);
  if (!m.stage_mtp.empty()) m.stage_mtp.back() = m.mtp_layers;
}

Dsv4StageParams dsv4_stage_params(const MemoryModel& m, int stage) {
  const Dsv4Shape& s = *m.dsv4;
  Dsv4StageParams p;
  double h = static_cast<double>(m.hidden), vocab = static_cast<double>(m.vocab);
  double expert_split = static_cast<double>(std::max<int64_t>(1, m.ep * m.etp));
  double routed = routed_params(s);
  // Decoder layers (estimate_dsv4.cpp dsv4_layer_params): every weight but
  // the routed experts is whole on each rank (TP 1).
  p.dense = over_stage_layers(m, stage, [&](int64_t l) { return dsv4_layer_params(s, ratio_of(s, l)) - routed; });
  p.experts = m.stage_layers[static_cast<size_t>(stage)] * routed / expert_split;
  p.largest = std::max(static_cast<double>(s.q_lora * s.heads * s.head_dim), h * static_cast<double>(s.experts));
  bool first = stage == 0, last = stage == m.pp - 1;
  if (first) p.dense += vocab * h;  // word embeddings
  if (last) {
    // Untied output layer, final norm and the decoder's hyper-connection head
    // ([TB] :400-406, on the stage with the final norm).
    p.dense += vocab * h + h + dsv4_hyper_connection_head_params(s);
  }
  double mtp = static_cast<double>(m.stage_mtp.empty() ? 0 : m.stage_mtp[static_cast<size_t>(stage)]);
  if (mtp > 0) {
    // Each depth: its decoder layer (ratio after the decoder's) and what
    // dsv4_mtp_extra_params counts around it; one when the layer is repeated.
    // The MTP stage builds its own embedding when it is not the first stage
    // (untied; estimate.cpp's stage_params says why).
    int64_t built = m.mtp_repeated ? 1 : static_cast<int64_t>(mtp);
    for (int64_t j = 0; j < built && s.layers + j < static_cast<int64_t>(s.ratios.size()); ++j) {
      p.dense += dsv4_layer_params(s, ratio_of(s, s.layers + j)) - routed + dsv4_mtp_extra_params(s);
      p.experts += routed / expert_split;
    }
    if (!first) p.dense += vocab * h;
  }
  if (first || last) p.largest = std::max(p.largest, vocab * h);
  return p;
}

double dsv4_layers_bytes(const MemoryModel& m, int stage) {
  return over_stage_layers(m, stage, [&](int64_t l) { return layer_bytes(m, ratio_of(*m.dsv4, l), m.dsv4_run); });
}

double dsv4_recompute_block_bytes(const MemoryModel& m, double chunk_layers) {
  if (!m.dsv4_run.recompute_mhc || chunk_layers <= 0) return 0;
  // [TB] :801-839: one recompute block per model chunk, or one per
  // mhc_recompute_layer_num layers; each block's n-stream input stays for
  // the recompute and the last block's output is registered as its anchor:
  // blocks + 1 tensors of n x hidden.
  int64_t k = m.dsv4_run.mhc_block_layers;
  double blocks = k > 0 ? std::ceil(chunk_layers / static_cast<double>(k)) : 1.0;
  return (blocks + 1) * tokens_of(m) * kBf16 * dsv4_streams(m) * static_cast<double>(m.hidden);
}

double dsv4_mtp_depth_bytes(const MemoryModel& m) {
  const Dsv4Shape& s = *m.dsv4;
  double h = static_cast<double>(m.hidden), n = dsv4_streams(m), tokens = tokens_of(m);
  // The MTP layer runs without the block's mhc recompute manager ([MTP]
  // :2258-2283 pass none), so its hyper-connections keep what they keep
  // without mhc recompute.
  Dsv4Run run = m.dsv4_run;
  run.recompute_mhc = false;
  double layers = 0;
  int64_t depths = std::max<int64_t>(1, s.mtp_layers);
  for (int64_t j = 0; j < depths && s.layers + j < static_cast<int64_t>(s.ratios.size()); ++j) {
    layers += layer_bytes(m, ratio_of(s, s.layers + j), run);
  }
  double bytes = layers / static_cast<double>(depths);
  // [MTP] _concat_embeddings (:2149-2190): enorm's output (e_proj's input) and
  // rstd; hnorm over each of the n streams keeps its input (the decoder's
  // pre-contraction streams, counted by dsv4_head_bytes) and rstd, and its
  // output is h_proj's input; e_out + h_out keep nothing.
  bytes += tokens * (kBf16 * h + kFp32 + kBf16 * n * h + kFp32 * n);
  // [MTP] _postprocess (:2290-2312): the depth's own head,
  // learned_output_contract ([HC] :194-207, compiled) over the layer's
  // n-stream output (kept, with the fp32 rsqrt and n gates per token), then
  // final_layernorm's input + rstd and the output layer's input.
  bytes += tokens * (kBf16 * n * h + kFp32 * (1 + n) + kBf16 * h + kFp32 + kBf16 * h);
  return bytes;
}

double dsv4_mtp_input_bytes(const MemoryModel& m) {
  return tokens_of(m) * kBf16 * static_cast<double>(m.hidden);  // [MTP] :2151 enorm's input, the embedding
}

double dsv4_head_bytes(const MemoryModel& m) {
  // [TB] :513-530: learned_output_contract over the last layer's n streams
  // (kept by the compiled function, with the fp32 rsqrt and n gates a token;
  // also the MTP layers' input, [TB] :518-522).
  double n = dsv4_streams(m);
  return tokens_of(m) * (kBf16 * n * static_cast<double>(m.hidden) + kFp32 * (1 + n));
}

double dsv4_streams(const MemoryModel& m) {
  // [TB] :476-480: the first stage expands [s, b, h] into [s, b, n·h]; the
  // later stages receive and pass on the n streams.
  return m.dsv4 ? static_cast<double>(std::max<int64_t>(1, m.dsv4->hc_mult)) : 1.0;
}

}  // namespace mblint
