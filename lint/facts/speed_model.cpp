// The step-time model (see speed_model.h; design and accuracy in
// docs/speed-model.md). Sources of the formulas:
//   [NS] Narayanan et al. 2021, "Efficient Large-Scale Language Model Training
//        on GPU Clusters Using Megatron-LM": 2 FLOPs per multiply-add, the
//        backward pass 2x the forward, the 1F1B and interleaved bubble
//        (p - 1) / (v m) of the step.
//   [KO] Korthikanti et al. 2022, "Reducing Activation Recomputation": the
//        tensor- and sequence-parallel collectives of a layer (4 per pass).
//   [FA] Dao 2023, "FlashAttention-2": the backward pass of attention runs 5
//        matrix products to the forward's 2 (2.5x).
//   [DS] DeepSeek-V2/V3 reports: multi-latent attention's projections.
#include "lint/facts/speed_model.h"

#include <algorithm>
#include <cmath>

namespace mblint {

#include "lint/facts/speed_constants.inc"

namespace {

constexpr double kBf16 = 2;  // bytes per bf16 element

// What one transformer layer costs one rank for one micro-batch.
struct LayerCost {
  double attn_linear = 0;  // forward GEMM seconds: QKV (or MLA projections), output projection
  double mla_up = 0;       // forward GEMM seconds of MLA's up-projections (part of attn_linear)
  double mlp_linear = 0;   // forward GEMM seconds: dense MLP, shared experts, router
  double attention = 0;    // forward flash-attention seconds
  double experts = 0;      // forward seconds of the routed experts' grouped GEMMs
  double elementwise = 0;  // forward + backward seconds of memory-bound kernels
  double tp = 0, cp = 0, ep = 0;  // exposed communication, forward + backward
  double host = 0;         // host seconds to launch forward + backward
  double sync = 0;         // seconds the GPU waits on the host, forward + backward
};

struct Rank {
  const MemoryModel& m;
  const SpeedSettings& s;
  const GpuSpeed& gpu;
  const SpeedConstants& c;
  double gemm_tflops = 0, gemm_efficiency = 0, gemm_bytes = 2;
  bool quantized = false;
  double tokens = 0;  // tokens of one micro-batch on this rank's GEMMs (micro_batch x seq / CP)

  double gemm(double rows, double cols, double inner) const {
    double t = gemm_seconds(rows, cols, inner, gemm_bytes, gemm_tflops, gemm_efficiency, gpu.hbm_gbps, c.gemm_latency_s);
    return t + (quantized ? cast_seconds(rows, cols, inner) / 3 : 0);  // forward's share of the casts
  }
  // Quantizing a GEMM's input (forward) and output gradient (backward).
  double cast_seconds(double rows, double cols, double inner) const {
    return (rows * inner + rows * cols) * kCastBytesPerElement / (gpu.hbm_gbps * 1e9);
  }
  double hbm_seconds(double bytes) const { return bytes * c.elementwise_scale / (gpu.hbm_gbps * 1e9); }
  // Bandwidth per rank of a ring collective over `size` ranks `stride`
  // apart: NVLink while the group spans no more ranks than the domain holds;
  // across domains NCCL runs one ring per NIC, so the group's members inside
  // one domain share the traffic between their NICs.
  double link_gbps(int64_t stride, int64_t size) const {
    if (stride * size <= s.nvlink_domain) return gpu.nvlink_gbps;
    double members = static_cast<double>(std::clamp<int64_t>(s.nvlink_domain / std::max<int64_t>(1, stride), 1, size));
    return std::min(gpu.nvlink_gbps, gpu.network_gbps * members);
  }
  // An all-to-all of `bytes` (every routed copy) over `size` ranks `stride`
  // apart: the peers inside the NVLink domain over NVLink, the others over
  // this rank's NIC, at once. DeepEP and HybridEP send a token once per
  // remote domain however many of its top-k experts live there.
  double all_to_all(double bytes, int64_t stride, int64_t size, double efficiency, double topk) const {
    double n = static_cast<double>(size);
    int64_t local_ranks = std::clamp<int64_t>(s.nvlink_domain / std::max<int64_t>(1, stride), 1, size);
    double local = static_cast<double>(local_ranks);
    double near = bytes * (local - 1) / n, far = bytes * (n - local) / n;
    if (s.deepep && far > 0 && topk > 1) {
      double domains = n / local;
      double copies = topk * (domains - 1) / domains;  // remote copies of a token
      double distinct = (domains - 1) * (1 - std::pow(1 - 1 / domains, topk));
      far *= std::min(1.0, distinct / copies);
    }
    return std::max(collective(near, gpu.nvlink_gbps, efficiency), collective(far, gpu.network_gbps, efficiency));
  }
  double collective(double bytes, double gbps, double efficiency = 1) const {
    return collective_seconds(bytes, gbps, c.link_efficiency * efficiency, c.collective_latency_s);
  }
};

double tp_fraction(int64_t n) { return n > 1 ? static_cast<double>(n - 1) / static_cast<double>(n) : 0; }

// K and V widths per head group seen by attention (MLA expands its latent).
double qk_dim(const MemoryModel& m) { return m.mla ? static_cast<double>(m.qk_head + m.qk_rope) : static_cast<double>(m.kv_channels); }
double v_dim(const MemoryModel& m) { return m.mla ? static_cast<double>(m.v_head) : static_cast<double>(m.kv_channels); }
// The width routed experts work in: LatentMoE's latent, else the hidden size.
double expert_width(const MemoryModel& m) {
  return m.moe_latent > 0 ? static_cast<double>(m.moe_latent) : static_cast<double>(m.hidden);
}

void attention_block(const Rank& r, LayerCost& cost) {
  const MemoryModel& m = r.m;
  double tp = static_cast<double>(m.tp), h = static_cast<double>(m.hidden), heads = static_cast<double>(m.heads);
  double T = r.tokens;
  if (m.mla) {  // [DS]: down-projections, up-projections, output
    double q_out = heads * qk_dim(m);
    double q = m.q_lora > 0 ? r.gemm(T, static_cast<double>(m.q_lora), h) + r.gemm(T, q_out / tp, static_cast<double>(m.q_lora))
                            : r.gemm(T, q_out / tp, h);
    double kv_down = r.gemm(T, static_cast<double>(m.kv_lora + m.qk_rope), h);
    double kv_up = r.gemm(T, heads * (static_cast<double>(m.qk_head) + v_dim(m)) / tp, static_cast<double>(m.kv_lora));
    cost.mla_up = kv_up + (m.q_lora > 0 ? r.gemm(T, q_out / tp, static_cast<double>(m.q_lora)) : 0);
    cost.attn_linear = q + kv_down + kv_up + r.gemm(T, h, heads * v_dim(m) / tp);
  } else {
    double d = static_cast<double>(m.kv_channels), groups = static_cast<double>(m.query_groups);
    cost.attn_linear = r.gemm(T, (heads + 2 * groups) * d / tp, h) + r.gemm(T, h, heads * d / tp);
  }
  // Causal flash attention: each query meets half the sequence on average,
  // with CP too (Megatron's load-balanced split). QK^T and PV: 2 FLOPs each.
  // Each call of the kernel also does fixed work per query block (load the
  // queries, rescale and write the output, the half-masked diagonal tile),
  // counted as `attention_call_tokens` more keys per query and call. The
  // p2p CP ring calls the kernel once per step (CP times per pass) on the
  // chunk in hand, so the shorter per-rank sequence pays it CP times.
  double seq = static_cast<double>(m.seq);
  double calls = m.cp > 1 && !r.s.cp_a2a ? static_cast<double>(m.cp) : 1;
  double keys = seq / 2 + calls * r.c.attention_call_tokens;
  double flops = 2 * T * keys * (heads / tp) * (qk_dim(m) + v_dim(m));
  // Between its two products, each tile waits on the softmax's exponentials
  // (special function units, not tensor cores): that share of the time runs
  // at the GPU's exponential rate (doubled on Blackwell Ultra).
  double softmax = r.c.softmax_share / r.gpu.sfu_rate + (1 - r.c.softmax_share);
  cost.attention = softmax * flops / (r.gpu.bf16_tflops * 1e12 * r.c.attention_efficiency) + calls * r.c.gemm_latency_s;
  if (calls > 1) {
    // After each ring step but the first, the forward merges the step's
    // output into the running one (and its log-sum-exp); the backward
    // accumulates dQ, dK and dV likewise (TransformerEngine's
    // AttnFuncWithCPAndKVP2P).
    double q_elements = T * heads / tp * (v_dim(m) + qk_dim(m));  // the output forward, dQ backward
    double kv_heads = m.mla ? heads / tp : std::max(1.0, static_cast<double>(m.query_groups) / tp);
    double kv_elements = T * kv_heads * (qk_dim(m) + v_dim(m));
    double bytes = (calls - 1) * (q_elements + kv_elements) * kCpMergeBytesPerElement;
    cost.elementwise += r.hbm_seconds(bytes);
  }
}

// `hidden_share`: the share of a transformer layer's hidden-size elementwise
// passes (norms, residual adds, bias-dropout) this block runs: 1 for a whole
// layer, 1/2 for a hybrid stack's one-block layer.
void mlp_block(const Rank& r, bool moe, LayerCost& cost, double hidden_share = 1) {
  const MemoryModel& m = r.m;
  double tp = static_cast<double>(m.tp), h = static_cast<double>(m.hidden), T = r.tokens;
  double gate = m.swiglu ? 2 : 1;
  auto mlp = [&](double ffn) { return r.gemm(T, gate * ffn / tp, h) + r.gemm(T, h, ffn / tp); };
  double tokens_sp = m.sp ? T / tp : T;  // elementwise work per rank: split by SP, else repeated
  double elementwise_bytes = 0;
  if (!moe) {
    cost.mlp_linear = mlp(static_cast<double>(m.ffn));
    elementwise_bytes += T * static_cast<double>(m.ffn) / tp * kBf16 * kElementwisePassesFfn;
  } else {
    double experts = static_cast<double>(m.experts), ep = static_cast<double>(m.ep), etp = static_cast<double>(m.etp);
    double local = std::max(1.0, experts / ep);
    double pairs = T / tp * static_cast<double>(m.topk) * etp;  // routed token-expert pairs received (balanced)
    double per_expert = pairs / local;
    double ffn = static_cast<double>(m.moe_ffn) / etp;
    double width = expert_width(m);
    auto grouped = [&](double rows, double cols, double inner) {
      double one = gemm_seconds(rows, cols, inner, r.gemm_bytes, r.gemm_tflops, r.gemm_efficiency, r.gpu.hbm_gbps, 0);
      return local * (one + (r.quantized ? r.cast_seconds(rows, cols, inner) / 3 : 0) + r.c.gemm_latency_s);
    };
    cost.experts = grouped(per_expert, gate * ffn, width) + grouped(per_expert, width, ffn);
    cost.mlp_linear = r.gemm(T, experts, h);  // router
    // LatentMoE: each rank's tokens projected down before the dispatch and
    // up after the combine (moe_layer.py; duplicated on every TP rank).
    if (m.moe_latent > 0) cost.mlp_linear += r.gemm(T / tp, width, h) + r.gemm(T / tp, h, width);
    if (m.shared_ffn > 0) cost.mlp_linear += mlp(static_cast<double>(m.shared_ffn));
    elementwise_bytes += pairs * ffn * kBf16 * kElementwisePassesFfn;
    elementwise_bytes += T / tp * static_cast<double>(m.topk) * width * kBf16 * kPermutePassesHidden;
    if (m.shared_ffn > 0) elementwise_bytes += T * static_cast<double>(m.shared_ffn) / tp * kBf16 * kElementwisePassesFfn;
  }
  elementwise_bytes += hidden_share * tokens_sp * h * kBf16 * kElementwisePassesHidden;
  cost.elementwise += r.hbm_seconds(elementwise_bytes);
}

// Exposed TP communication, forward + backward, of `collectives` ring
// collectives per pass that the block's GEMMs (`hidden_by`) can hide.
// [KO]: with SP an all-gather before and a reduce-scatter after each of
// attention and MLP, without SP an all-reduce (twice the bytes) after each:
// the same bytes per pass.
double tp_comm(const Rank& r, int collectives, double hidden_by) {
  const MemoryModel& m = r.m;
  if (m.tp <= 1 || collectives == 0) return 0;
  double bytes = r.tokens * static_cast<double>(m.hidden) * kBf16 * tp_fraction(m.tp);
  double pass = collectives * r.collective(bytes, r.link_gbps(1, m.tp));
  double exposed = r.s.tp_comm_overlap
                       ? std::max(0.0, pass - hidden_by) + r.c.tp_overlap_exposed * std::min(pass, hidden_by)
                       : pass;
  return 2 * exposed;  // the backward repeats them
}

// Exposed context-parallel communication of an attention block.
double cp_attention_comm(const Rank& r, double attention_seconds) {
  const MemoryModel& m = r.m;
  if (m.cp <= 1) return 0;
  double T = r.tokens;
  double gbps = r.link_gbps(m.tp, m.cp);
  double heads_local = static_cast<double>(m.heads) / static_cast<double>(m.tp);
  if (r.s.cp_a2a) {  // Ulysses: Q, K, V before and the output after, not overlapped
    double bytes = T * heads_local * (2 * qk_dim(m) + 2 * v_dim(m)) * kBf16 * tp_fraction(m.cp);
    return 2 * r.collective(bytes, gbps, r.c.a2a_efficiency);
  }
  // The p2p ring passes this rank's K and V (cp - 1) times, overlapped
  // with the attention of the chunk in hand; the backward also passes dK, dV.
  double kv_heads = m.mla ? heads_local : std::max(1.0, static_cast<double>(m.query_groups) / static_cast<double>(m.tp));
  double bytes = T * kv_heads * (qk_dim(m) + v_dim(m)) * kBf16;
  double steps = static_cast<double>(m.cp - 1);
  double fwd = steps * r.collective(bytes, gbps);
  double overlap = attention_seconds * steps / static_cast<double>(m.cp);
  return std::max(0.0, fwd - overlap) + std::max(0.0, 2 * fwd - 2.5 * overlap);
}

// Exposed EP all-to-all of a MoE block: every routed token's vector leaves
// and comes back, forward and backward.
double ep_comm(const Rank& r) {
  const MemoryModel& m = r.m;
  if (m.ep <= 1) return 0;
  double bytes = r.tokens / static_cast<double>(m.tp) * static_cast<double>(m.topk) * expert_width(m) * kBf16;
  double efficiency = r.s.deepep ? r.c.deepep_efficiency : r.c.a2a_efficiency;
  double a2a = 4 * r.all_to_all(bytes, m.etp, m.ep, efficiency, static_cast<double>(m.topk));
  return r.s.ep_overlap ? r.c.ep_overlap_exposed * a2a : a2a;
}

// Exposed communication of one layer, forward + backward. A MoE layer's
// experts skip the TP collectives unless they are tensor-parallel
// themselves (ETP > 1).
void layer_comm(const Rank& r, bool moe, LayerCost& cost) {
  cost.tp = tp_comm(r, moe && r.m.etp == 1 ? 2 : 4, cost.attn_linear + cost.mlp_linear);
  cost.cp = cp_attention_comm(r, cost.attention);
  if (moe) cost.ep = ep_comm(r);
}

LayerCost layer_cost(const Rank& r, bool moe) {
  LayerCost cost;
  attention_block(r, cost);
  mlp_block(r, moe, cost);
  layer_comm(r, moe, cost);
  double host = r.c.cpu_layer_s + (moe ? r.c.cpu_moe_layer_s : 0);
  cost.host = r.s.cuda_graphs ? host * r.c.cuda_graph_cpu_share : host;
  // The alltoall and allgather dispatchers copy the token counts to the host
  // before the experts run (a device-host sync per dispatch); DeepEP and
  // HybridEP keep them on the device.
  if (moe && !r.s.deepep) cost.sync = r.c.moe_sync_s;
  return cost;
}

// A hybrid stack's layers hold one block each [MM]: the Mamba-2 mixer (M),
// attention (*), an MLP (-) or a MoE (E). Each is costed as the matching
// half of a transformer layer, with half its host launch time and half its
// hidden-size elementwise passes.
struct BlockCosts {
  LayerCost mamba, attention, mlp, moe;
};

// The Mamba-2 mixer's dims [MM], as the memory estimate reads them (heads
// default to expand 2 x hidden / head_dim).
struct Mixer {
  double inner = 0, heads = 0, head_dim = 0, groups = 0, state = 0;
  double projected() const { return 2 * inner + 2 * groups * state + heads; }  // in_proj: z, x, B, C, dt
};
Mixer mixer_of(const MemoryModel& m) {
  double head_dim = static_cast<double>(m.mamba_head_dim);
  double heads = m.mamba_heads > 0 ? static_cast<double>(m.mamba_heads) : 2.0 * static_cast<double>(m.hidden) / head_dim;
  return {heads * head_dim, heads, head_dim, static_cast<double>(m.mamba_groups), static_cast<double>(m.mamba_state)};
}

// Forward FLOPs per token of the chunked SSD scan over all heads and groups
// (Dao and Gu 2024, "Transformers are SSMs", sec. 6; mamba_ssm
// ops/triton/ssd_combined.py): C·Bᵀ within each chunk per group, Bᵀ·x into
// the chunk's state and C·state out of the previous one per head, and the
// masked (C·Bᵀ)·x per head.
double ssd_flops_per_token(const Mixer& d) {
  return 2 * kMambaChunk * d.state * d.groups + 4 * d.state * d.head_dim * d.heads +
         2 * kMambaChunk * d.head_dim * d.heads;
}

double host_seconds(const Rank& r, double seconds) {
  return r.s.cuda_graphs ? seconds * r.c.cuda_graph_cpu_share : seconds;
}

LayerCost mamba_block(const Rank& r) {
  const MemoryModel& m = r.m;
  Mixer d = mixer_of(m);
  double tp = static_cast<double>(m.tp), h = static_cast<double>(m.hidden), T = r.tokens;
  LayerCost cost;
  cost.attn_linear = r.gemm(T, d.projected() / tp, h) + r.gemm(T, h, d.inner / tp);  // in_proj, out_proj
  // The scan's matrix products run on tensor cores inside Triton kernels,
  // at their own achieved share of the BF16 peak (ssd_efficiency); the
  // backward 2.5x the forward, as flash attention's in layer_gpu_seconds.
  double flops = T * ssd_flops_per_token(d) / tp;
  cost.attention = flops / (r.gpu.bf16_tflops * 1e12 * r.c.ssd_efficiency) + kSsdKernels * r.c.gemm_latency_s;
  // Memory-bound passes: the causal conv over x, B and C; the z gate and
  // gated RMSNorm over d_inner, as an MLP's activation; half a layer's
  // hidden-size passes (one norm, one residual add).
  double tokens_sp = m.sp ? T / tp : T;
  double bytes = T * (d.inner + 2 * d.groups * d.state) / tp * kBf16 * kConvPasses +
                 T * d.inner / tp * kBf16 * kElementwisePassesFfn + 0.5 * tokens_sp * h * kBf16 * kElementwisePassesHidden;
  cost.elementwise = r.hbm_seconds(bytes);
  cost.tp = tp_comm(r, 2, cost.attn_linear);
  if (m.cp > 1) {
    // Context parallelism trades sequence for heads (mamba_context_parallel.py):
    // an all-to-all of the in_proj output before the conv and of the scan
    // output after it, forward and backward.
    double cp_bytes = T * (d.projected() + d.inner) / tp * kBf16 * tp_fraction(m.cp);
    cost.cp = 2 * r.collective(cp_bytes, r.link_gbps(m.tp, m.cp), r.c.a2a_efficiency);
  }
  cost.host = host_seconds(r, r.c.cpu_layer_s / 2);
  return cost;
}

BlockCosts block_costs(const Rank& r) {
  const MemoryModel& m = r.m;
  double tokens_sp = m.sp ? r.tokens / static_cast<double>(m.tp) : r.tokens;
  BlockCosts b;
  b.mamba = mamba_block(r);
  attention_block(r, b.attention);
  b.attention.elementwise += r.hbm_seconds(0.5 * tokens_sp * static_cast<double>(m.hidden) * kBf16 * kElementwisePassesHidden);
  b.attention.tp = tp_comm(r, 2, b.attention.attn_linear);
  b.attention.cp = cp_attention_comm(r, b.attention.attention);
  b.attention.host = host_seconds(r, r.c.cpu_layer_s / 2);
  mlp_block(r, false, b.mlp, 0.5);
  b.mlp.tp = tp_comm(r, 2, b.mlp.mlp_linear);
  b.mlp.host = b.attention.host;
  if (m.experts > 0) {
    mlp_block(r, true, b.moe, 0.5);
    b.moe.tp = tp_comm(r, m.etp == 1 ? 0 : 2, b.moe.mlp_linear);
    b.moe.ep = ep_comm(r);
    b.moe.host = host_seconds(r, r.c.cpu_layer_s / 2 + r.c.cpu_moe_layer_s);
    if (!r.s.deepep) b.moe.sync = r.c.moe_sync_s;
  }
  return b;
}

// Forward + backward GPU seconds of a layer, with what recompute adds.
double layer_gpu_seconds(const MemoryModel& m, const LayerCost& l, double recompute_share) {
  double linear = l.attn_linear + l.mlp_linear + l.experts;
  double seconds = 3 * linear + 3.5 * l.attention + l.elementwise;  // [NS] bwd = 2x fwd; [FA] attention bwd 2.5x
  if (m.recompute == "full") {
    seconds += recompute_share * (linear + l.attention + l.elementwise / 3);
  } else if (m.recompute == "selective") {
    const auto& mods = m.recompute_modules;
    if (mods.count("core_attn")) seconds += l.attention;
    if (mods.count("mlp")) seconds += l.mlp_linear;
    if (mods.count("moe")) seconds += l.mlp_linear + l.experts;
    if (mods.count("mla_up_proj")) seconds += l.mla_up;
    if (mods.count("moe_act") || mods.count("layernorm")) seconds += l.elementwise / 12;
  }
  return seconds;
}

// Share of a stage's layers that full recompute recomputes.
double full_recompute_share(const MemoryModel& m, double stage_layers) {
  if (m.recompute != "full") return 0;
  if (m.recompute_method != "block" || stage_layers <= 0) return 1;
  double per_chunk = stage_layers / static_cast<double>(m.vpp);
  return std::clamp(static_cast<double>(m.recompute_layers) / per_chunk, 0.0, 1.0);
}

// MoE layers among decoder layers [from, to) (fractional bounds).
double moe_layers_between(const MemoryModel& m, double from, double to) {
  if (m.experts <= 0) return 0;
  if (m.moe_pattern.empty()) return to - from;
  double count = 0;
  for (size_t i = 0; i < m.moe_pattern.size(); ++i) {
    double a = std::max(from, static_cast<double>(i)), b = std::min(to, static_cast<double>(i) + 1);
    if (m.moe_pattern[i] && b > a) count += b - a;
  }
  return count;
}

// MoE layers among the first `x` decoder layers (fractional), from a prefix
// sum of the pattern: O(1) per chunk however long the pipeline.
std::vector<double> moe_prefix(const MemoryModel& m) {
  std::vector<double> prefix(1, 0.0);
  for (bool moe : m.moe_pattern) prefix.push_back(prefix.back() + (moe ? 1 : 0));
  return prefix;
}
double moe_layers_before(const MemoryModel& m, const std::vector<double>& prefix, double x) {
  if (m.experts <= 0) return 0;
  if (m.moe_pattern.empty()) return x;
  double last = static_cast<double>(prefix.size() - 1);
  x = std::clamp(x, 0.0, last);
  size_t whole = static_cast<size_t>(x);
  if (whole + 1 >= prefix.size()) return prefix.back();
  return prefix[whole] + (x - static_cast<double>(whole)) * (prefix[whole + 1] - prefix[whole]);
}

struct StageTime {
  double compute = 0, tp = 0, cp = 0, ep = 0, pp = 0;
  double total() const { return compute + tp + cp + ep + pp; }
};

void add_layers(const MemoryModel& m, const LayerCost& l, double count, double recompute_share, StageTime& t) {
  double gpu = layer_gpu_seconds(m, l, recompute_share);
  t.compute += count * (std::max(gpu, l.host) + l.sync);
  double comm_repeat = 1 + (m.recompute == "full" ? recompute_share / 2 : 0);  // recompute repeats the forward's
  t.tp += count * l.tp * comm_repeat;
  t.cp += count * l.cp * comm_repeat;
  t.ep += count * l.ep * comm_repeat;
}

void add_kinds(const MemoryModel& m, const BlockCosts& b, const LayerKinds& k, double times, double recompute_share,
               StageTime& t) {
  add_layers(m, b.mamba, times * k.mamba, recompute_share, t);
  add_layers(m, b.attention, times * k.attention, recompute_share, t);
  add_layers(m, b.mlp, times * k.mlp, recompute_share, t);
  add_layers(m, b.moe, times * k.moe, recompute_share, t);
}

// The output layer and the loss, forward + backward.
double output_seconds(const Rank& r) {
  const MemoryModel& m = r.m;
  double vocab = static_cast<double>(m.vocab) / static_cast<double>(m.tp);
  double logits = 3 * r.gemm(r.tokens, vocab, static_cast<double>(m.hidden));
  return logits + r.hbm_seconds(r.tokens * vocab * kLossBytesPerLogit);
}

// Every stage's time per micro-batch; decoder layers are dealt to chunks in
// order (chunk v of stage s holds the (v x PP + s)-th slice).
std::vector<StageTime> stage_times(const Rank& r, const LayerCost& dense, const LayerCost& moe) {
  const MemoryModel& m = r.m;
  size_t pp = static_cast<size_t>(m.pp);
  std::vector<StageTime> stages(pp);
  bool hybrid = !m.hybrid_stages.empty();
  BlockCosts blocks = hybrid ? block_costs(r) : BlockCosts{};
  if (hybrid) {  // each stage's layers by kind (the order within a stage does not change its time)
    for (size_t s = 0; s < pp; ++s) {
      add_kinds(m, blocks, m.hybrid_stages[s], 1, full_recompute_share(m, m.stage_layers[s]), stages[s]);
    }
  } else {
    std::vector<double> prefix = moe_prefix(m);
    double start = 0;
    for (int64_t v = 0; v < m.vpp; ++v) {
      for (size_t s = 0; s < pp; ++s) {
        double n = m.stage_layers[s] / static_cast<double>(m.vpp);
        double moe_n = moe_layers_before(m, prefix, start + n) - moe_layers_before(m, prefix, start);
        double share = full_recompute_share(m, m.stage_layers[s]);
        add_layers(m, dense, n - moe_n, share, stages[s]);
        add_layers(m, moe, moe_n, share, stages[s]);
        start += n;
      }
    }
  }
  double h = static_cast<double>(m.hidden);
  stages.front().compute += r.hbm_seconds(r.tokens * h * kBf16 * 4);  // embedding lookup and its gradient
  stages.back().compute += output_seconds(r);
  for (size_t s = 0; s < pp; ++s) {
    double mtp = static_cast<double>(m.stage_mtp[s]);
    if (mtp <= 0) continue;
    // An MTP layer: a projection of [h; embedding] to h, a layer (a hybrid's:
    // its MTP pattern's layers), the logits.
    if (hybrid) {
      add_kinds(m, blocks, m.mtp_kinds, mtp, 0, stages[s]);
    } else {
      add_layers(m, m.experts > 0 ? moe : dense, mtp, 0, stages[s]);
    }
    stages[s].compute += mtp * (3 * r.gemm(r.tokens, h / static_cast<double>(m.tp), 2 * h) + output_seconds(r));
  }
  if (m.pp > 1) {
    // One activation tensor per chunk boundary, forward and backward. A
    // send is point to point: inside the NVLink domain over NVLink, else
    // over the sending GPU's own NIC (no ring to spread it over the
    // domain's NICs); the hop that leaves the domain paces the pipeline.
    double bytes = r.tokens * h * kBf16 / (m.sp ? static_cast<double>(m.tp) : 1);
    int64_t stride = m.tp * m.cp * m.dp;
    double gbps = stride * m.pp <= r.s.nvlink_domain ? r.gpu.nvlink_gbps : r.gpu.network_gbps;
    double one = r.collective(bytes, gbps);
    double vpp = static_cast<double>(m.vpp);
    for (StageTime& t : stages) {
      // Without interleaving the schedule sends and receives in blocking
      // batches (batch_p2p_comm); with it Bridge turns on overlap_p2p_comm
      // (CommOverlapConfig, Megatron-Core's default), so a transfer hides
      // behind the forward (or backward) of the chunk in hand and only what
      // it cannot hide waits. Either way each chunk hand-off costs a fixed
      // idle (the p2p wait and the chunk's launch), so deeper interleaving
      // pays it more often.
      double chunk_forward = t.compute / (3 * vpp);
      double transfer = m.vpp > 1 ? std::max(0.0, one - chunk_forward) : r.c.pp_exposed * one;
      t.pp = 2 * vpp * (transfer + r.c.pp_chunk_s);
    }
  }
  return stages;
}

// Parameters of a layer (weights of the full model).
struct LayerParams {
  double dense = 0, experts = 0;
};
double attention_params(const MemoryModel& m) {
  double h = static_cast<double>(m.hidden), heads = static_cast<double>(m.heads);
  if (m.mla) {
    double q_out = heads * qk_dim(m);
    return (m.q_lora > 0 ? h * static_cast<double>(m.q_lora) + static_cast<double>(m.q_lora) * q_out : h * q_out) +
           h * static_cast<double>(m.kv_lora + m.qk_rope) +
           static_cast<double>(m.kv_lora) * heads * (static_cast<double>(m.qk_head) + v_dim(m)) + heads * v_dim(m) * h;
  }
  double d = static_cast<double>(m.kv_channels);
  return h * (heads + 2 * static_cast<double>(m.query_groups)) * d + heads * d * h;
}

// A MoE block: router, shared experts and LatentMoE's projections (dense),
// routed experts.
LayerParams moe_params(const MemoryModel& m) {
  double h = static_cast<double>(m.hidden), gate = m.swiglu ? 3 : 2, width = expert_width(m);
  LayerParams p;
  p.dense = h * static_cast<double>(m.experts) + gate * h * static_cast<double>(m.shared_ffn) +
            (m.moe_latent > 0 ? 2 * h * width : 0);
  p.experts = static_cast<double>(m.experts) * gate * width * static_cast<double>(m.moe_ffn);
  return p;
}

double mlp_params(const MemoryModel& m) {
  return (m.swiglu ? 3 : 2) * static_cast<double>(m.hidden) * static_cast<double>(m.ffn);
}

double mamba_params(const MemoryModel& m) {
  Mixer d = mixer_of(m);
  return static_cast<double>(m.hidden) * (d.projected() + d.inner);  // in_proj, out_proj
}

LayerParams layer_params(const MemoryModel& m, bool moe) {
  LayerParams p;
  p.dense = attention_params(m);
  if (moe) {
    LayerParams e = moe_params(m);
    p.dense += e.dense;
    p.experts = e.experts;
  } else {
    p.dense += mlp_params(m);
  }
  return p;
}

// The parameters of a hybrid stack's layers of kinds `k`.
LayerParams kinds_params(const MemoryModel& m, const LayerKinds& k) {
  LayerParams e = moe_params(m);
  return {k.attention * attention_params(m) + k.mlp * mlp_params(m) + k.moe * e.dense + k.mamba * mamba_params(m),
          k.moe * e.experts};
}

LayerKinds total_kinds(const MemoryModel& m) {
  LayerKinds all;
  for (const LayerKinds& k : m.hybrid_stages) {
    all.mamba += k.mamba;
    all.attention += k.attention;
    all.mlp += k.mlp;
    all.moe += k.moe;
  }
  return all;
}

// Parameters one rank of the slowest-to-sync stage holds: (dense / TP, experts / (EP x ETP)).
LayerParams rank_params(const MemoryModel& m) {
  double embed = static_cast<double>(m.vocab * m.hidden) * (m.tied && m.pp == 1 ? 1 : 2);
  LayerParams total;
  if (!m.hybrid_stages.empty()) {
    total = kinds_params(m, total_kinds(m));
  } else {
    LayerParams dense = layer_params(m, false), moe = layer_params(m, true);
    double moe_layers = moe_layers_between(m, 0, static_cast<double>(m.layers));
    double dense_layers = static_cast<double>(m.layers) - moe_layers;
    total.dense = dense_layers * dense.dense + moe_layers * moe.dense;
    total.experts = moe_layers * moe.experts;
  }
  total.dense += embed;
  double pp = static_cast<double>(m.pp);
  // The embedding and output layer sit on the end stages: the largest stage
  // holds about its share of the layers plus one of them.
  LayerParams rank;
  rank.dense = ((total.dense - embed) / pp + (m.pp > 1 ? embed / 2 : embed)) / static_cast<double>(m.tp);
  rank.experts = total.experts / pp / static_cast<double>(m.ep * m.etp);
  return rank;
}

// Exposed data-parallel communication and the optimizer step.
void data_parallel(const Rank& r, double stage_seconds, StepBreakdown& b) {
  const MemoryModel& m = r.m;
  LayerParams p = rank_params(m);
  int64_t dense_group = m.dp * m.cp;
  double gbps = r.link_gbps(m.tp * m.cp, m.dp);
  double param_bytes = m.fp8_param ? 1 : static_cast<double>(m.param_bytes);
  double grad_bytes = static_cast<double>(m.grad_bytes);
  double dense_share = tp_fraction(dense_group), expert_share = tp_fraction(m.edp);
  double grads = p.dense * grad_bytes * dense_share + p.experts * grad_bytes * expert_share;
  double params = p.dense * param_bytes * dense_share + p.experts * param_bytes * expert_share;
  double microbatches = static_cast<double>(m.microbatches);
  // What overlap hides still slows the compute it runs beside: NCCL's
  // kernels take SMs (a thread block per channel) and HBM bandwidth from the
  // GEMMs; `overlap_slowdown` of the hidden time is added.
  double total = 0;
  if (!m.fsdp_sharding.empty()) {
    // Megatron-FSDP gathers the parameters for the forward and the backward
    // and reduce-scatters the gradients every micro-batch, overlapped with it.
    double per_mb = r.collective(2 * params + grads, gbps);
    b.dp = microbatches * std::max(0.0, per_mb - stage_seconds);
    total = microbatches * per_mb;
  } else if (m.distributed_optimizer) {
    double rs = r.collective(grads, gbps), ag = r.collective(params, gbps);
    b.dp = (r.s.overlap_grad_reduce ? std::max(0.0, rs - stage_seconds * 2 / 3) : rs) +
           (r.s.overlap_param_gather ? std::max(0.0, ag - stage_seconds / 3) : ag);
    total = rs + ag;
  } else {
    double ar = r.collective(2 * grads, gbps);
    b.dp = r.s.overlap_grad_reduce ? std::max(0.0, ar - stage_seconds * 2 / 3) : ar;
    total = ar;
  }
  b.dp += r.c.overlap_slowdown * std::max(0.0, total - b.dp);
  bool sharded = m.distributed_optimizer || !m.fsdp_sharding.empty();
  double shard = p.dense / (sharded ? static_cast<double>(dense_group) : 1) +
                 p.experts / (sharded ? static_cast<double>(m.edp) : 1);
  b.optimizer = shard * kOptimizerBytesPerParam / (r.gpu.hbm_gbps * 1e9);
}

double peak_tflops(const GpuSpeed& gpu, GemmPrecision p) {
  switch (p) {
    case GemmPrecision::BF16: return gpu.bf16_tflops;
    case GemmPrecision::FP8:
    case GemmPrecision::MXFP8: return gpu.fp8_tflops;
    case GemmPrecision::NVFP4: return gpu.fp4_tflops;
  }
  return 0;
}

double efficiency_of(const SpeedConstants& c, GemmPrecision p) {
  switch (p) {
    case GemmPrecision::BF16: return c.gemm_efficiency_bf16;
    case GemmPrecision::FP8: return c.gemm_efficiency_fp8;
    case GemmPrecision::MXFP8: return c.gemm_efficiency_mxfp8;
    case GemmPrecision::NVFP4: return c.gemm_efficiency_nvfp4;
  }
  return 0;
}

const char* precision_name(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::BF16: return "BF16";
    case GemmPrecision::FP8: return "FP8";
    case GemmPrecision::MXFP8: return "MXFP8";
    case GemmPrecision::NVFP4: return "NVFP4";
  }
  return "";
}

}  // namespace

LayerFlops layer_flops(const MemoryModel& m, bool moe) {
  LayerFlops f;
  double heads = static_cast<double>(m.heads), gate = m.swiglu ? 3 : 2;
  LayerParams p = layer_params(m, moe);
  // Every weight is used once per token: 2 FLOPs per parameter, except the
  // routed experts (top-k of them) [NS].
  f.linear = 2 * p.dense;
  if (moe) f.experts = 2 * static_cast<double>(m.topk) * gate * expert_width(m) * static_cast<double>(m.moe_ffn);
  f.attention = 2 * (static_cast<double>(m.seq) / 2) * heads * (qk_dim(m) + v_dim(m));
  return f;
}

namespace {

double sum(const LayerFlops& f) { return f.linear + f.attention + f.experts; }

// Forward FLOPs per token of a hybrid stack's layers of kinds `k`.
double kinds_flops(const MemoryModel& m, const LayerKinds& k) {
  LayerFlops attention = layer_flops(m, false);
  attention.linear = 2 * attention_params(m);
  LayerFlops moe = layer_flops(m, true);
  moe.linear = 2 * moe_params(m).dense;
  moe.attention = 0;
  double mamba = 2 * mamba_params(m) + ssd_flops_per_token(mixer_of(m));
  return k.attention * sum(attention) + k.mlp * 2 * mlp_params(m) + k.moe * sum(moe) + k.mamba * mamba;
}

}  // namespace

double model_flops_per_token(const MemoryModel& m) {
  double h = static_cast<double>(m.hidden), vocab = static_cast<double>(m.vocab);
  double mtp = static_cast<double>(m.mtp_layers);
  double forward = 2 * h * vocab + mtp * (2 * 2 * h * h + 2 * h * vocab);
  if (!m.hybrid_stages.empty()) {
    forward += kinds_flops(m, total_kinds(m)) + mtp * kinds_flops(m, m.mtp_kinds);
    return 3 * forward;
  }
  LayerFlops dense = layer_flops(m, false), moe = layer_flops(m, true);
  double moe_layers = moe_layers_between(m, 0, static_cast<double>(m.layers));
  double dense_layers = static_cast<double>(m.layers) - moe_layers;
  forward += dense_layers * sum(dense) + moe_layers * sum(moe) + mtp * sum(m.experts > 0 ? moe : dense);
  return 3 * forward;
}

double gemm_seconds(double m, double n, double k, double bytes_per_element, double tflops, double efficiency,
                    double hbm_gbps, double latency_s) {
  if (m <= 0 || n <= 0 || k <= 0) return 0;
  double arithmetic = 2 * m * n * k / (tflops * 1e12 * efficiency);
  double memory = (m * k + k * n + m * n) * bytes_per_element / (hbm_gbps * 1e9);
  return std::max(arithmetic, memory) + latency_s;
}

double collective_seconds(double bytes_per_rank, double gbps, double efficiency, double latency_s) {
  if (bytes_per_rank <= 0) return 0;
  return bytes_per_rank / (gbps * 1e9 * efficiency) + latency_s;
}

double pipeline_seconds(const std::vector<double>& stage_seconds, int64_t microbatches, int64_t vpp) {
  if (stage_seconds.empty()) return 0;
  double slowest = *std::max_element(stage_seconds.begin(), stage_seconds.end());
  double sum = 0;
  for (double t : stage_seconds) sum += t;
  return static_cast<double>(microbatches) * slowest + (sum - slowest) / static_cast<double>(std::max<int64_t>(1, vpp));
}

const GpuSpeed* find_gpu_speed(const std::string& gpu_name) {
  for (const GpuSpeed& g : kGpuSpeeds) {
    if (gpu_name == g.name) return &g;
  }
  return nullptr;
}

const SpeedConstants& default_speed_constants() { return kSpeedConstants; }

std::optional<SpeedEstimate> estimate_step(const MemoryModel& m, const SpeedSettings& s, const GpuSpeed& gpu,
                                           const SpeedConstants& c, std::string* why_not) {
  double peak = peak_tflops(gpu, s.precision);
  bool needs_mx = s.precision == GemmPrecision::MXFP8 || s.precision == GemmPrecision::NVFP4;
  if (peak <= 0 || (needs_mx && !gpu.mx_scaling)) {
    if (why_not) *why_not = std::string(precision_name(s.precision)) + " GEMMs are not supported on " + gpu.name;
    return std::nullopt;
  }
  if (m.stage_layers.size() != static_cast<size_t>(m.pp) || m.stage_mtp.size() != static_cast<size_t>(m.pp)) {
    if (why_not) *why_not = "the pipeline split is not known";
    return std::nullopt;
  }
  Rank r{m, s, gpu, c};
  r.gemm_tflops = peak;
  r.gemm_efficiency = efficiency_of(c, s.precision);
  r.quantized = s.precision != GemmPrecision::BF16;
  r.gemm_bytes = s.precision == GemmPrecision::NVFP4 ? 0.5 : r.quantized ? 1 : 2;
  r.tokens = static_cast<double>(m.micro_batch * m.seq) / static_cast<double>(m.cp);

  LayerCost dense = layer_cost(r, false);
  LayerCost moe = m.experts > 0 ? layer_cost(r, true) : dense;
  std::vector<StageTime> stages = stage_times(r, dense, moe);
  std::vector<double> totals;
  size_t slowest = 0;
  for (size_t i = 0; i < stages.size(); ++i) {
    totals.push_back(stages[i].total());
    if (totals[i] > totals[slowest]) slowest = i;
  }
  SpeedEstimate e;
  e.slowest_stage = static_cast<int>(slowest);
  StepBreakdown& b = e.breakdown;
  double mb = static_cast<double>(m.microbatches);
  const StageTime& worst = stages[slowest];
  b.compute = mb * worst.compute;
  b.tp = mb * worst.tp;
  b.cp = mb * worst.cp;
  b.ep = mb * worst.ep;
  b.pp = mb * worst.pp;
  b.bubble = pipeline_seconds(totals, m.microbatches, m.vpp) - mb * totals[slowest];
  data_parallel(r, totals[slowest], b);
  b.other = c.step_fixed_s;
  e.step_time_s = b.compute + b.tp + b.cp + b.ep + b.pp + b.bubble + b.dp + b.optimizer + b.other;
  double world = static_cast<double>(m.tp * m.pp * m.cp * m.dp);
  double tokens = static_cast<double>(m.micro_batch * m.microbatches * m.dp * m.seq);
  e.tokens_per_sec_per_gpu = tokens / e.step_time_s / world;
  e.model_flops_per_token = model_flops_per_token(m);
  e.model_tflops_per_gpu = e.tokens_per_sec_per_gpu * e.model_flops_per_token / 1e12;
  e.mfu = e.model_tflops_per_gpu / peak;
  return e;
}

}  // namespace mblint
