// Per-GPU memory of a training job, stage by stage, from the physics of what
// Megatron-Core keeps on the device. Sources:
//  [K]  Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
//       Transformer Models" (arXiv:2205.05198), Table 2 and eqs. (1)-(6):
//       per-layer activation bytes with TP, SP, selective and full recompute.
//  [MC] shared/reference/megatron-core-checks.md sections 3-6: Megatron's
//       theoretical_memory_usage.py (18 B/param, 6 + 12/d with the distributed
//       optimizer, docs/user-guide/features/dist_optimizer.md) and its known
//       gaps (CP, full recompute, 5as²b, SwiGLU/GQA, MoE, last stage).
//  [MM] Megatron-Core's Mamba stack, read at core_v0.16.0 and core_v0.17.0:
//       megatron/core/ssm/mamba_mixer.py (MambaMixer: in_proj, conv1d,
//       dt_bias/A_log/D, gated RMSNorm, out_proj; _ssm_training calls
//       mamba_ssm's mamba_split_conv1d_scan_combined), mamba_layer.py,
//       mamba_block.py and mamba_hybrid_layer_allocation.py (pattern symbols,
//       '|' pipeline segments, the even split without them), and
//       models/mamba/mamba_layer_specs.py (which layers fuse their norm).
//  [GM] The text stacks of Gemma 2 and Gemma 3 as Megatron Bridge 067f987df03b
//       builds them (src/megatron/bridge/models/gemma/gemma2_provider.py,
//       gemma3_provider.py, models/common/te_layers.py) on Megatron-Core
//       2a75ac12c54b (megatron/core/transformer/mlp.py MLP.forward,
//       attention.py get_query_key_value_tensors): the post norms of
//       TERowParallelLinearLayerNorm, qk_layernorm, the unfused GLU path and
//       the soft-capped logits and attention scores.
//  [GLU] The gated MLP's activation, Megatron-Core 2a75ac12c54b (the commit
//       Megatron Bridge 067f987df03b pins; the same code since core_v0.15.0)
//       megatron/core/transformer/mlp.py MLP.forward and moe/experts.py
//       TEGroupedMLP.forward: the fused bias_swiglu_impl / weighted_bias_
//       swiglu_impl (fusions/fused_bias_swiglu.py) save only their input,
//       the fc1 output; the unfused glu chunks it into x_glu and x_linear
//       (views), silu saves x_glu (a view: the fc1 output stays), and the
//       product saves silu's output and x_linear + glu_linear_offset (a new
//       tensor even for offset 0): two f-wide tensors more. The experts then
//       scale the product by the routing probabilities, which saves the
//       product too: three. TE's activation module (use_te_activation_func)
//       saves its input as the fused kernel does; in the experts the
//       probabilities' product saves its output: one more.
//  [NS] Narayanan et al. 2021 (1F1B and the interleaved schedule): warm-up
//       micro-batches per stage, megatron/core/pipeline_parallel/schedules.py.
// Every term below says which of these it follows. No constant is fitted to
// a measured run; the acceptance test (tools/memory_eval.py) only compares.
#include "lint/facts/estimate.h"
#include "lint/facts/estimate_dsa.h"
#include "lint/facts/estimate_dsv4_stage.h"
#include "lint/facts/estimate_linear_attention.h"
#include "lint/facts/estimate_peft.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

namespace mblint {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// ---------------------------------------------------------------------------------------
// Activation terms

struct Terms {
  double total = 0;
  std::vector<std::string>* details = nullptr;
  void add(const char* what, double bytes) {
    if (bytes <= 0) return;
    total += bytes;
    if (details) details->push_back(fmt::format("{}: {:.1f} MiB", what, bytes / (1024.0 * 1024.0)));
  }
};

// Bytes of one activation element: 16-bit, as [K] assumes. Runs without
// --bf16/--fp16 are rare in the measured set and are not modelled apart
// (the two fp32 FP8/FSDP runs there measure like 16-bit activations).
double ab(const MemoryModel&) { return 2.0; }

bool recomputes(const MemoryModel& m, const char* module) {
  return m.recompute == "selective" && m.recompute_modules.count(module) > 0;
}

bool offloads(const MemoryModel& m, const char* module) { return m.offload_modules.count(module) > 0; }

// An NVFP4 tensor's bytes per element in one layout: 4-bit values and an
// FP8 (E4M3) scale per 16 of them (TE's NVFP4BlockScaling).
constexpr double kNvfp4Bytes = 0.5 + 1.0 / 16;

// The weights are quantized parameters (fp8_param / fp4_param): no bf16 copy to cache from.
bool quantized_params(const MemoryModel& m) { return m.fp4 ? m.fp4_param : m.fp8_param; }

// TE's cache of a linear weight's quantized row-wise and column-wise copies.
double weight_cache_bytes(const MemoryModel& m) { return m.fp4 ? 2 * kNvfp4Bytes : 2.0; }

// Bytes per element of a tensor saved as a GEMM input. With FP8 or NVFP4
// training Transformer Engine quantizes the input of every quantized GEMM and
// keeps, for the backward pass, only the column-wise quantized copy the
// weight-gradient GEMM reads (it discards the row-wise data: TE
// pytorch/module/linear.py _Linear.forward, grouped_linear.py likewise):
// 1 byte with FP8, 4 bits and a scale per 16 with NVFP4, instead of the
// bf16 tensor. Layers first_last_layers_bf16 keeps in BF16 save bf16 inputs;
// their share is spread over the layers (the edge layers sit on the first
// and last stages, which this evens out: a 1-layer edge of 20 layers per
// stage is 5% of one stage's GEMM inputs at one byte more).
double gemm_input_bytes(const MemoryModel& m) {
  if (m.frozen_gemm_inputs) return 0;  // no weight gradient to compute (MemoryModel::frozen_gemm_inputs)
  double quantized = m.fp4 ? kNvfp4Bytes : m.fp8 ? 1.0 : ab(m);
  if (quantized >= ab(m) || m.bf16_edge_layers <= 0 || m.layers <= 0) return quantized;
  double edge = std::min(1.0, static_cast<double>(m.bf16_edge_layers) / static_cast<double>(m.layers));
  return quantized * (1 - edge) + ab(m) * edge;
}

// [G4] What a norm keeps per element of its input: Transformer Engine's
// (and Megatron's fused) norms keep the input and an fp32 rstd per row
// (counted at each site); a PyTorch-expression RMSNorm (Gemma4RMSNorm,
// _gemma4_rms_norm) keeps two fp32 copies of its input and, when its weight
// trains, its fp32 normalised output: 12 B, 8 B under LoRA's frozen base.
double torch_norm_bytes(const MemoryModel& m) { return m.lora_rank > 0 || m.frozen_gemm_inputs ? 8 : 12; }

// The core attention's saved state. Fused/flash attention (TE, FlashAttention)
// recomputes the scores in the backward pass and keeps only the output and
// the fp32 log-sum-exp per row ([MC] 4.3 item 3). Unfused ("local" impl or
// attention_backend unfused) keeps softmax output 2as²b, dropout mask as²b and
// dropout output 2as²b [K sec. 4.1]; without attention dropout PyTorch's
// dropout returns its input and neither the mask nor the copy exists. TE's
// unfused attention may add the softmax's fp32 output (te_softmax_kernel).
void core_attention(const MemoryModel& m, double tokens, double heads_local, Terms& t) {
  if (recomputes(m, "core_attn")) return;  // [K] selective recompute: recomputed from Q, K, V
  if (offloads(m, "core_attn")) return;    // fine-grained offloading moves them to the host
  double s = static_cast<double>(m.seq) / m.cp;
  double b = static_cast<double>(m.micro_batch);
  if (m.unfused_attention) {
    // [GM] Gemma 2's unfused fallback (Gemma2DotProductAttention: with an
    // attention mask or dropout) soft-caps the scores before the softmax:
    // tanh keeps its output for the backward pass.
    if (m.softcap_attention) t.add("attention soft-cap tanh output 2as²b/t", ab(m) * heads_local * s * s * b);
    int64_t sq = m.seq / std::max<int64_t>(1, m.cp);
    if (!m.local_attention && !te_softmax_kernel(sq, sq, b * heads_local)) {
      t.add("attention softmax output in fp32 (TE's torch softmax path) 4as²b/t", 4 * heads_local * s * s * b);
    }
    if (m.torch_softmax_fp32) {
      t.add("attention softmax output in fp32 (PyTorch's softmax, no masked_softmax_fusion) 4as²b/t",
            4 * heads_local * s * s * b);
    }
    t.add("attention softmax output 2as²b/t", ab(m) * heads_local * s * s * b);
    if (m.attention_dropout > 0) {
      t.add("attention dropout mask as²b/t", heads_local * s * s * b);
      t.add("attention dropout output 2as²b/t", ab(m) * heads_local * s * s * b);
    }
  } else {
    t.add("flash attention log-sum-exp (fp32)", 4 * tokens * heads_local);
  }
}

void attention_block(const MemoryModel& m, double tokens, double rep, Terms& t) {
  double h = static_cast<double>(m.hidden);
  double heads_local = static_cast<double>(m.heads) / m.tp;
  // [K]: layer-norm input 2sbh and the QKV input 2sbh, replicated over TP
  // unless sequence parallel splits them (eq. 4).
  if (m.pre_norms && !offloads(m, "attn_norm")) {
    if (m.torch_norms) t.add("input norm: fp32 copies (PyTorch RMSNorm)", torch_norm_bytes(m) * tokens * h * rep);
    else t.add("input layernorm input", ab(m) * tokens * h * rep);
  }
  if (!recomputes(m, "layernorm") && !offloads(m, "qkv_linear")) t.add("QKV input", gemm_input_bytes(m) * tokens * h * rep);
  double value_dim = 0;
  if (m.mla) {
    // Multi-latent attention (DeepSeek-V2): the down projections are
    // duplicated over TP and act on the sequence-parallel shard; the up
    // projections are TP-split. Their outputs are what mla_up_proj recomputes.
    if (m.q_lora > 0) t.add("MLA q down-projection + norm", 4 * tokens * m.q_lora * rep);
    t.add("MLA kv down-projection + norm", ab(m) * tokens * (2 * m.kv_lora + m.qk_rope) * rep);
    if (m.dsa_heads > 0) {
      // DeepSeek sparse attention: absorbed MLA over the indexer's top-k
      // keys instead of the up-projections and the core attention below.
      for (const auto& [what, bytes] : dsa_attention_terms(m, tokens)) t.add(what.c_str(), bytes);
    } else if (!recomputes(m, "mla_up_proj")) {
      double qk = static_cast<double>(m.qk_head + m.qk_rope);
      t.add("MLA up-projections and rotary Q, K", ab(m) * tokens * heads_local * (qk + (m.qk_head + m.v_head)));
      t.add("Q, K, V", ab(m) * tokens * heads_local * (2 * qk + m.v_head));
    }
    value_dim = static_cast<double>(m.v_head);
  } else {
    // [K]: Q, K 4sbh and V 2sbh, TP-split; with grouped-query attention K and
    // V have g·d columns instead of a·d.
    double d = static_cast<double>(m.kv_channels);
    double groups_local = static_cast<double>(m.query_groups) / m.tp;
    t.add("Q, K, V", ab(m) * tokens * d * (heads_local + 2 * groups_local));
    // [GM] qk_layernorm: TE's norm over each head of the Q and K views of the
    // fused QKV output (not contiguous, so the norm reshapes them into a
    // copy) keeps that input and an fp32 rstd per head and token.
    if (m.qk_norm && m.torch_norms) {
      t.add("Q, K norms: fp32 copies (PyTorch RMSNorm)", torch_norm_bytes(m) * d * tokens * (heads_local + groups_local));
    } else if (m.qk_norm) {
      t.add("Q, K norm inputs + rstd (fp32)", (ab(m) * d + 4) * tokens * (heads_local + groups_local));
    }
    // [G4] v_norm (Gemma4SelfAttention.get_query_key_value_tensors): V in
    // fp32, which the square and the division keep, and the normalised V
    // the core attention keeps in its place.
    if (m.gemma4_norms) t.add("v_norm: fp32 V + normalised V", (4 + ab(m)) * tokens * d * groups_local);
    value_dim = d;
    // attention_output_gate (attention.py _apply_output_gate, Megatron-LM
    // 2a75ac12c54b): linear_qkv also projects a gate per head; the output is
    // core_out x sigmoid(gate), which keeps the gate and the ungated output.
    if (m.attention_gate) t.add("attention output gate and ungated output", 2 * ab(m) * tokens * heads_local * d);
  }
  if (!(m.mla && m.dsa_heads > 0)) core_attention(m, tokens, heads_local, t);
  // [K]: the attention output is the projection's input, 2sbh/t.
  if (!offloads(m, "core_attn") && !offloads(m, "attn_proj")) {
    // Flash attention keeps its output for its own backward pass even when
    // the projection keeps no input (a frozen model).
    double out_bytes = m.frozen_gemm_inputs && !m.unfused_attention ? ab(m) : gemm_input_bytes(m);
    t.add("attention output (projection input)", out_bytes * tokens * heads_local * value_dim);
  }
  // [GM] the post-attention norm on linear_proj's output (reduced over TP,
  // scattered with SP) keeps its input and an fp32 rstd per token.
  if (m.post_norms && m.torch_norms) {
    t.add("post-attention norm: fp32 copies (PyTorch RMSNorm)", torch_norm_bytes(m) * tokens * h * rep);
  } else if (m.post_norms) {
    t.add("post-attention norm input + rstd (fp32)", (ab(m) * h + 4) * tokens * rep);
  }
  // [K]: the dropout mask after the projection, 1 byte per element.
  if (m.hidden_dropout > 0) t.add("attention dropout mask sbh", tokens * h * rep);
}

// The dense MLP [K]: inputs 2sbh + fc1 output 2sbf + activation output 2sbf,
// with SwiGLU the fc1 output is 2f wide (gate and up projections).
void dense_mlp(const MemoryModel& m, double tokens, double rep, double ffn, Terms& t, const char* name) {
  double h = static_cast<double>(m.hidden);
  double glu = m.swiglu ? 2.0 : 1.0;
  if (!recomputes(m, "layernorm") && !offloads(m, "mlp_norm")) t.add(name, gemm_input_bytes(m) * tokens * h * rep);
  t.add("MLP fc1 output (activation input)", ab(m) * tokens * ffn * glu / m.tp);
  // [GLU] the unfused glu computes act(x_glu) * (x_linear + offset): the
  // product keeps both operands, two new f-wide tensors, besides the fc1
  // output the activation keeps.
  if (m.unfused_glu && m.swiglu) t.add("unfused GLU: activation output and linear half", 2 * ab(m) * tokens * ffn / m.tp);
  // [GLU] clamped, glu's x_glu.clamp makes the tensor the activation keeps
  // (unclamped it keeps a view of the fc1 output); x_linear's clamp keeps
  // that view, already counted.
  if (m.unfused_glu && m.swiglu && m.clamped_glu) t.add("clamped GLU: clamped gate half", ab(m) * tokens * ffn / m.tp);
  t.add("MLP activation output (fc2 input)", gemm_input_bytes(m) * tokens * ffn / m.tp);
  // [GM] the post-MLP norm on linear_fc2's output, as after the attention.
  if (m.post_norms && m.torch_norms) {
    t.add("post-MLP norm: fp32 copies (PyTorch RMSNorm)", torch_norm_bytes(m) * tokens * h * rep);
  } else if (m.post_norms) {
    t.add("post-MLP norm input + rstd (fp32)", (ab(m) * h + 4) * tokens * rep);
  }
}

}  // namespace

double lora_adapter_params(double rank, double in, double out, double split) {
  return rank * (in + out) / std::max(1.0, split);
}

double expert_received_tokens(const MemoryModel& m, double routed) {
  // Balanced routing: each token goes to k experts; an expert rank receives
  // routed·k tokens, times ETP when the expert TP group gathers them.
  double received = routed * static_cast<double>(m.topk) * static_cast<double>(m.etp);
  if (m.capacity_factor > 0 && m.pad_to_capacity) received *= m.capacity_factor;
  return received;
}

namespace {

// The MoE block's input, the pre-MLP norm's output the router and the
// dispatch read.
void moe_input(const MemoryModel& m, double tokens, double rep, Terms& t) {
  if (!recomputes(m, "layernorm") && !offloads(m, "mlp_norm")) {
    t.add("MoE input (layernorm output)", ab(m) * tokens * static_cast<double>(m.hidden) * rep);
  }
}

// A MoE layer's MLP (megatron/core/transformer/moe): router logits and
// probabilities in fp32 and the routing map, tokens routed top-k, all-to-all
// to the expert ranks and gathered over expert TP, the grouped GEMMs, and the
// un-permutation that weights the returned tokens by their probabilities.
void moe_mlp(const MemoryModel& m, double tokens, double rep, Terms& t) {
  double h = static_cast<double>(m.hidden);
  double glu = m.swiglu ? 2.0 : 1.0;
  double local = tokens * rep;  // tokens this rank routes (sequence parallel shard)
  double e = static_cast<double>(m.experts);
  double k = static_cast<double>(m.topk);
  if (recomputes(m, "moe")) return;  // the whole MoE layer is recomputed from its input
  t.add("router logits and probabilities (fp32) + routing map", local * e * 9);
  double received = expert_received_tokens(m, local);
  // LatentMoE (moe_layer.py fc1_latent_proj / fc2_latent_proj): the router
  // and the shared experts see the hidden states; a duplicated (not TP-split)
  // projection takes the routed tokens down to the latent width before the
  // dispatch and back up after the combine, which keeps its latent input.
  double width = m.moe_latent > 0 ? static_cast<double>(m.moe_latent) : h;
  if (m.dispatcher == "allgather") t.add("allgather dispatcher: gathered tokens", local * m.ep * m.etp * ab(m) * width);
  if (!offloads(m, "expert_fc1")) t.add("expert fc1 input (dispatched tokens)", received * gemm_input_bytes(m) * width);
  t.add("expert fc1 output", received * ab(m) * m.moe_ffn * glu / m.etp);
  if (!recomputes(m, "moe_act") && !offloads(m, "moe_act")) {
    // [GLU] what the activation keeps besides the fc1 output, before the
    // product with the routing probabilities (which also saves it).
    double expert_f = received * ab(m) * m.moe_ffn / m.etp;
    if (m.swiglu && m.unfused_glu) {
      t.add("unfused GLU in the experts: activation output, linear half, product before the probabilities", 3 * expert_f);
      if (m.clamped_glu) t.add("clamped GLU in the experts: clamped gate half", expert_f);
    } else if (m.swiglu && m.te_activation) {
      t.add("TE activation output in the experts (before the probabilities)", expert_f);
    }
    t.add("expert activation output", received * gemm_input_bytes(m) * m.moe_ffn / m.etp);
  }
  t.add("un-permutation input (returned tokens)", local * k * ab(m) * width);
  if (m.moe_latent > 0) t.add("latent up-projection input (combined tokens)", local * gemm_input_bytes(m) * width);
  if (m.shared_ffn > 0 && !recomputes(m, "shared_experts")) {
    double glu_s = glu;
    t.add("shared expert fc1 output", ab(m) * tokens * m.shared_ffn * glu_s / m.tp);
    // [GLU] the shared experts are an MLP: its unfused glu as above.
    if (m.swiglu && m.unfused_glu) {
      t.add("unfused GLU in the shared experts: activation output and linear half",
            2 * ab(m) * tokens * m.shared_ffn / m.tp);
      if (m.clamped_glu) t.add("clamped GLU in the shared experts: clamped gate half", ab(m) * tokens * m.shared_ffn / m.tp);
    }
    t.add("shared expert activation output", gemm_input_bytes(m) * tokens * m.shared_ffn / m.tp);
  }
}

// The Mamba-2 mixer's dims [MM]: d_inner = heads x head_dim (the heads
// default to expand 2 x hidden / head_dim), G groups of B and C with N
// states each. Heads and groups are split over TP.
struct MambaDims {
  double inner = 0, heads = 0, groups = 0, state = 0;
  double projected() const { return 2 * inner + 2 * groups * state + heads; }  // in_proj: z, x, B, C, dt
};

MambaDims mamba_dims(const MemoryModel& m) {
  double heads = m.mamba_heads > 0 ? static_cast<double>(m.mamba_heads)
                                   : 2.0 * static_cast<double>(m.hidden) / static_cast<double>(m.mamba_head_dim);
  return {heads * static_cast<double>(m.mamba_head_dim), heads, static_cast<double>(m.mamba_groups),
          static_cast<double>(m.mamba_state)};
}

// What a Mamba layer keeps for the backward pass [MM]. MambaLayer runs the
// mixer, whose in_proj is a TE LayerNormColumnParallelLinear (norm input and
// GEMM input, as a QKV projection [K]); training takes the memory-efficient
// path, mamba_ssm's mamba_split_conv1d_scan_combined (state-spaces/mamba
// v2.3.2, mamba_ssm/ops/triton/ssd_combined.py: save_for_backward keeps
// zxbcdt and out_x), i.e. its whole input zxBCdt and the scan output before
// the z gate, and recomputes the convolution, dt and the chunk states in the
// backward pass; the gated RMSNorm after it (layernorm_gated.py) keeps its
// input and an fp32 rstd per group; out_proj
// keeps its input. Context parallelism exchanges sequence for heads
// (mamba_context_parallel.py): the element counts per rank are the same.
//
// The unfused path (use_mamba_mem_eff_path off; Megatron-LM 2a75ac12c54b,
// the commit Megatron Bridge 067f987df03b pins, mamba_mixer.py forward ->
// _static_prefill) splits zxBCdt and makes contiguous copies of each part,
// so its saved tensors are those copies: causal-conv1d's CausalConv1dFn
// (Dao-AILab/causal-conv1d causal_conv1d_interface.py; Bridge's uv.lock
// pins 1.6.2) saves its input xBC; mamba_ssm v2.3.2's
// MambaChunkScanCombinedFn (mamba_ssm/ops/triton/ssd_combined.py; with
// rmsnorm the mixer passes no z) saves the scan output, x, dt, the fp32
// dA_cumsum (batch x heads x chunks x chunk_size, ssd_chunk_state.py
// _chunk_cumsum_fwd: one fp32 per token and head), B and C, and recomputes
// the chunk states; the gated RMSNorm (layernorm_gated.py LayerNormFn)
// saves its input y (a contiguous copy of the scan output), the z copy and
// the fp32 rstd per group; out_proj keeps its input.
void mamba_unfused_scan(const MemoryModel& m, const MambaDims& d, double tokens, Terms& t) {
  double tp = static_cast<double>(m.tp);
  double bc = 2 * d.groups * d.state;
  t.add("Mamba conv1d input xBC (unfused path)", ab(m) * tokens * (d.inner + bc) / tp);
  t.add("Mamba chunk scan: output, x, B, C, dt", ab(m) * tokens * (2 * d.inner + bc + d.heads) / tp);
  t.add("Mamba chunk scan: dA_cumsum (fp32)", 4 * tokens * d.heads / tp);
  t.add("Mamba gated norm input, z + rstd (fp32)", (2 * ab(m) * d.inner + 4 * d.groups) * tokens / tp);
}

void mamba_mixer(const MemoryModel& m, double tokens, double rep, Terms& t) {
  MambaDims d = mamba_dims(m);
  double h = static_cast<double>(m.hidden);
  t.add("Mamba in_proj norm input", ab(m) * tokens * h * rep);
  t.add("Mamba in_proj input", gemm_input_bytes(m) * tokens * h * rep);
  if (m.mamba_unfused) {
    mamba_unfused_scan(m, d, tokens, t);
  } else {
    t.add("Mamba zxBCdt (kept by the fused conv + scan)", ab(m) * tokens * d.projected() / m.tp);
    t.add("Mamba scan output before the z gate", ab(m) * tokens * d.inner / m.tp);
    t.add("Mamba gated norm input + rstd (fp32)", (ab(m) * d.inner + 4 * d.groups) * tokens / m.tp);
  }
  t.add("Mamba out_proj input", gemm_input_bytes(m) * tokens * d.inner / m.tp);
  if (m.hidden_dropout > 0) t.add("Mamba dropout mask sbh", tokens * h * rep);
}

// ---------------------------------------------------------------------------------------
// Parameters

struct StageParams {
  double sharded = 0;      // TP-split dense parameters (linear weights)
  double replicated = 0;   // norms, biases, router, position embeddings
  double experts = 0;      // routed experts, split by EP·ETP
  double largest = 0;      // the largest single weight on the stage (elements)
  double adapter_params = 0;  // LoRA adapters, when PEFT trains them
};

void add_attention_params(const MemoryModel& m, double count, StageParams& p) {
  double h = static_cast<double>(m.hidden);
  double norms = m.rmsnorm ? h : 2 * h;
  if (m.mla) {
    double qk = static_cast<double>(m.qk_head + m.qk_rope);
    double a = static_cast<double>(m.heads);
    double q = m.q_lora > 0 ? m.q_lora * a * qk : h * a * qk;
    double q_down = m.q_lora > 0 ? h * m.q_lora + m.q_lora : 0;
    double kv_down = h * (m.kv_lora + m.qk_rope) + m.kv_lora;
    double up = q + m.kv_lora * a * (m.qk_head + m.v_head) + a * m.v_head * h;
    p.sharded += count * up / m.tp;
    p.replicated += count * (q_down + kv_down + norms);
    p.largest = std::max(p.largest, h * a * qk / m.tp);
    return;
  }
  double d = static_cast<double>(m.kv_channels);
  // attention_output_gate: linear_qkv projects heads x kv_channels more (attention.py).
  double qkv = h * d * (m.heads * (m.attention_gate ? 2 : 1) + 2 * m.query_groups);
  double proj = m.heads * d * h;
  double bias = m.add_bias ? d * (m.heads + 2 * m.query_groups) : 0;
  // [GM] the post-attention norm (h) and the Q and K head norms (d each).
  double extra_norms = (m.post_norms ? norms : 0) + (m.qk_norm ? 2 * (m.rmsnorm ? d : 2 * d) : 0);
  if (!m.pre_norms) norms = 0;  // [GM] EXAONE 4: no input norm
  p.sharded += count * (qkv + proj + bias) / m.tp;
  p.replicated += count * (norms + extra_norms + (m.add_bias ? h : 0));
  p.largest = std::max(p.largest, qkv / m.tp);
}

void add_mlp_params(const MemoryModel& m, double count, bool moe, StageParams& p) {
  double h = static_cast<double>(m.hidden);
  double glu = m.swiglu ? 2.0 : 1.0;
  double norm = m.rmsnorm ? h : 2 * h;
  p.replicated += count * norm * ((m.post_norms ? 1 : 0) + (m.pre_norms ? 1 : 0));  // [GM] pre- and post-MLP norms
  if (!moe) {
    double f = static_cast<double>(m.ffn);
    p.sharded += count * (h * f * glu + f * h + (m.add_bias ? f * glu : 0)) / m.tp;
    p.replicated += count * (m.add_bias ? h : 0);
    p.largest = std::max(p.largest, h * f * glu / m.tp);
    return;
  }
  double fe = static_cast<double>(m.moe_ffn);
  p.replicated += count * h * m.experts;  // router
  // LatentMoE: experts between latent widths, and the duplicated h <-> latent
  // projections (moe_layer.py, parallel_mode "duplicated": whole on every TP rank).
  double width = m.moe_latent > 0 ? static_cast<double>(m.moe_latent) : h;
  p.experts += count * m.experts * (width * fe * glu + fe * width) / (m.ep * m.etp);
  if (m.moe_latent > 0) p.replicated += count * 2 * h * width;
  if (m.shared_ffn > 0) p.sharded += count * (h * m.shared_ffn * glu + m.shared_ffn * h) / m.tp;
}

// A Mamba layer's parameters [MM]: in_proj h x (2·d_inner + 2GN + H) with
// its fused input norm, the depthwise conv1d over x, B, C (kernel 4, with
// bias), dt_bias, A_log and D per head, the gated norm over d_inner, and
// out_proj d_inner x h; all but the input norm are split over TP.
void add_mamba_params(const MemoryModel& m, double count, StageParams& p) {
  if (count <= 0) return;
  MambaDims d = mamba_dims(m);
  double h = static_cast<double>(m.hidden);
  constexpr double kConvWidth = 4;  // MambaMixer's d_conv
  double conv = (d.inner + 2 * d.groups * d.state) * (kConvWidth + 1);
  p.sharded += count * (h * d.projected() + conv + 3 * d.heads + d.inner + d.inner * h) / m.tp;
  p.replicated += count * (m.rmsnorm ? h : 2 * h);
  p.largest = std::max(p.largest, h * d.projected() / m.tp);
}

// LoRA adapters of a hybrid stack's layers (lora_adapter_params on each
// targeted linear), on the linear layers the Nemotron recipes
// target: linear_qkv, linear_proj, linear_fc1, linear_fc2, in_proj and
// out_proj. A MoE layer's grouped experts share one adapter per EP rank
// (share_expert_adapters, LoRA's default) with one expert GEMM's widths; its
// shared experts get their own. The router and LatentMoE's projections are
// not targeted.
double hybrid_lora_params(const MemoryModel& m, const LayerKinds& k) {
  double r = static_cast<double>(m.lora_rank), h = static_cast<double>(m.hidden), tp = static_cast<double>(m.tp);
  double glu = m.swiglu ? 2.0 : 1.0;
  auto pair = [&](double in, double out, double split) { return lora_adapter_params(r, in, out, split); };
  double qkv_out = static_cast<double>(m.heads + 2 * m.query_groups) * m.kv_channels;
  double attention = pair(h, qkv_out, tp) + pair(static_cast<double>(m.heads * m.kv_channels), h, tp);
  auto mlp = [&](double ffn, double split) { return pair(h, ffn * glu, split) + pair(ffn, h, split); };
  MambaDims d = mamba_dims(m);
  double mamba = pair(h, d.projected(), tp) + pair(d.inner, h, tp);
  double width = m.moe_latent > 0 ? static_cast<double>(m.moe_latent) : h;
  double etp = static_cast<double>(m.etp);
  double moe = pair(width, m.moe_ffn * glu, etp) + pair(m.moe_ffn, width, etp);
  if (m.shared_ffn > 0) moe += mlp(static_cast<double>(m.shared_ffn), tp);
  return k.attention * attention + k.mlp * mlp(static_cast<double>(m.ffn), tp) + k.moe * moe + k.mamba * mamba;
}

// Dense and MoE layer counts of stage `stage`. Without interleaving the
// stage's layers are contiguous; with it (or a layout) the MoE share of the
// whole model is used.
std::pair<double, double> dense_and_moe_layers(const MemoryModel& m, int stage) {
  double n = m.stage_layers[stage];
  if (m.moe_pattern.empty()) return {n, 0};
  if (m.vpp == 1) {
    double start = 0;
    for (int s = 0; s < stage; ++s) start += m.stage_layers[s];
    auto first = static_cast<size_t>(std::llround(start));
    auto count = static_cast<size_t>(std::llround(n));
    double moe = 0;
    for (size_t i = first; i < first + count && i < m.moe_pattern.size(); ++i) moe += m.moe_pattern[i] ? 1 : 0;
    return {n - moe, moe};
  }
  double share = static_cast<double>(std::count(m.moe_pattern.begin(), m.moe_pattern.end(), true)) /
                 static_cast<double>(m.moe_pattern.size());
  return {n * (1 - share), n * share};
}

// A Gemma 4 full-attention layer's view of the model: Gemma4SelfAttention
// builds it from a copy of the config with the global head width and KV
// group count.
MemoryModel global_view(const MemoryModel& m) {
  MemoryModel g = m;
  g.kv_channels = m.global_kv_channels;
  g.query_groups = m.global_query_groups;
  if (te_trains_unfused(g.kv_channels)) g.unfused_attention = true;
  return g;
}

// The layer kinds of stage `stage`: the hybrid stack's, or a transformer's
// (every layer attention, plus its dense or MoE MLP).
LayerKinds layer_kinds(const MemoryModel& m, int stage) {
  if (!m.hybrid_stages.empty()) return m.hybrid_stages[static_cast<size_t>(stage)];
  auto [dense, moe] = dense_and_moe_layers(m, stage);
  return {0,
          dense + moe,
          dense,
          moe,
          dsa_indexers_on_stage(m, stage),
          gdn_layers_on_stage(m, stage),
          marked_layers_on_stage(m, m.global_attention, stage)};
}

double layer_count(const MemoryModel& m, const LayerKinds& k) {
  return m.hybrid_stages.empty() ? k.attention : k.mamba + k.attention + k.mlp + k.moe;
}

// One MTP depth's layers: the hybrid's MTP pattern, else a transformer
// layer (attention + MLP, or MoE when the last decoder layer is MoE).
LayerKinds mtp_layer_kinds(const MemoryModel& m) {
  const LayerKinds& k = m.mtp_kinds;
  if (k.mamba + k.attention + k.mlp + k.moe > 0) return k;
  bool moe = !m.moe_pattern.empty() && m.moe_pattern.back();
  // An MTP depth's layers number from 1 (multi_token_prediction.py), and
  // layer 1 always computes its own DSA top-k: it builds an indexer.
  return {0, 1, moe ? 0.0 : 1.0, moe ? 1.0 : 0.0, m.dsa_heads > 0 ? 1.0 : 0.0};
}

double attention_layer_bytes(const MemoryModel& m);
double mlp_layer_bytes(const MemoryModel& m, bool moe);

// The activation bytes of the layers `k` counts, per micro-batch.
double kinds_bytes(const MemoryModel& m, const LayerKinds& k) {
  double bytes = (k.attention - k.linear - k.global) * attention_layer_bytes(m) + k.mlp * mlp_layer_bytes(m, false);
  if (k.global > 0) bytes += k.global * attention_layer_bytes(global_view(m));
  if (k.linear > 0) bytes += k.linear * gdn_layer_bytes(m);
  if (k.moe > 0) bytes += k.moe * mlp_layer_bytes(m, true);
  if (k.mamba > 0) bytes += k.mamba * mamba_layer_bytes(m);
  if (k.indexers > 0) bytes += k.indexers * dsa_indexer_bytes(m);
  if (m.lora_rank > 0 && !m.gdn_pattern.empty()) {  // LoRA's adapters on a GDN model (estimate_peft.cpp)
    double tokens = static_cast<double>(m.seq) / m.cp * m.micro_batch;
    for (const auto& [what, b] : gdn_model_lora_terms(m, k, tokens, m.sp ? 1.0 / m.tp : 1.0)) bytes += b;
  }
  return bytes;
}

StageParams stage_params(const MemoryModel& m, int stage) {
  StageParams p;
  if (m.dit.present) {  // estimate_dit.cpp: the blocks and embedders of this stage
    const DitStage& d = m.dit.stages[static_cast<size_t>(stage)];
    p.sharded = d.params.sharded;
    p.replicated = d.params.replicated;
    p.largest = d.largest;
    return p;
  }
  if (m.dsv4) {  // DeepSeek V4: every weight but the routed experts whole on each rank (TP 1)
    Dsv4StageParams d = dsv4_stage_params(m, stage);
    p.sharded = d.dense;
    p.experts = d.experts;
    p.largest = d.largest;
    return p;
  }
  LayerKinds k = layer_kinds(m, stage);
  double dense = k.mlp, moe = k.moe;
  double h = static_cast<double>(m.hidden);
  add_attention_params(m, k.attention - k.linear - k.global, p);
  if (k.global > 0) add_attention_params(global_view(m), k.global, p);
  if (k.linear > 0) {  // gated delta net blocks in place of attention
    GdnParams g = gdn_layer_params(m);
    p.sharded += k.linear * g.sharded;
    p.replicated += k.linear * g.replicated;
    p.largest = std::max(p.largest, g.largest);
  }
  p.replicated += k.indexers * dsa_indexer_params(m);  // duplicated over TP
  add_mlp_params(m, dense, false, p);
  add_mlp_params(m, moe, true, p);
  add_mamba_params(m, k.mamba, p);
  if (m.lora_rank > 0 && !m.hybrid_stages.empty()) {
    p.adapter_params = hybrid_lora_params(m, k);
  } else if (m.lora_rank > 0 && !m.gdn_pattern.empty()) {
    p.adapter_params = gdn_model_lora_params(m, k);
  } else if (m.lora_rank > 0) {
    // LoRA on linear_qkv, linear_proj, linear_fc1, linear_fc2 of every layer.
    double glu = m.swiglu ? 2.0 : 1.0, r = static_cast<double>(m.lora_rank), tp = static_cast<double>(m.tp);
    auto per_layer = [&](const MemoryModel& a) {
      double qkv_out = static_cast<double>(a.heads + 2 * a.query_groups) * a.kv_channels;
      return lora_adapter_params(r, h, qkv_out, tp) +
             lora_adapter_params(r, static_cast<double>(a.heads * a.kv_channels), h, tp) +
             lora_adapter_params(r, h, a.ffn * glu, tp) + lora_adapter_params(r, static_cast<double>(a.ffn), h, tp);
    };
    p.adapter_params = (dense + moe - k.global) * per_layer(m);
    if (k.global > 0) p.adapter_params += k.global * per_layer(global_view(m));
  }
  // [G4] Per layer, the per-layer input's gate, projection and post norm:
  // plain nn.Linear and a norm, whole on every TP rank.
  if (m.ple_dim > 0) p.replicated += (dense + moe) * (2 * h * m.ple_dim + (m.rmsnorm ? h : 2 * h));
  double embedding = static_cast<double>(m.vocab) * h / m.tp;
  bool first = stage == 0;
  bool last = stage == m.pp - 1;
  // Word embeddings on the first stage (+ learned positions, replicated).
  if (first) {
    p.sharded += embedding;
    p.replicated += static_cast<double>(m.positions) * h;
    p.largest = std::max(p.largest, embedding);
    if (m.ple_dim > 0) {
      // [G4] _attach_ple_modules: the vocab-parallel per-layer embedding, the
      // column-parallel hidden -> layers x ple_dim projection, its norm.
      double width = static_cast<double>(m.layers * m.ple_dim);
      double table = static_cast<double>(m.ple_vocab) * width / m.tp;
      p.sharded += table + h * width / m.tp;
      p.replicated += static_cast<double>(m.ple_dim);
      p.largest = std::max(p.largest, table);
    }
  }
  // [MC] sec. 3: the last stage holds the output weight: its own when untied,
  // a synchronised copy of the embedding when tied and PP > 1.
  if (last) {
    if (!m.tied || m.pp > 1) p.sharded += embedding;
    p.replicated += m.rmsnorm ? h : 2 * h;  // final norm
    p.largest = std::max(p.largest, embedding);
  }
  // MTP (multi_token_prediction.py MultiTokenPredictionLayer): per layer
  // built, its transformer layer (MoE when the last decoder layer is) or, in
  // a hybrid stack, the layers of its pattern; the 2h -> h eh_proj; enorm,
  // hnorm and final_layernorm. A repeated layer is built once for all depths.
  double mtp = static_cast<double>(m.stage_mtp.empty() ? 0 : m.stage_mtp[stage]);
  if (mtp > 0) {
    double built = m.mtp_repeated ? 1 : mtp;
    LayerKinds kinds = mtp_layer_kinds(m);
    add_attention_params(m, built * kinds.attention, p);
    p.replicated += built * kinds.indexers * dsa_indexer_params(m);
    add_mlp_params(m, built * kinds.mlp, false, p);
    add_mlp_params(m, built * kinds.moe, true, p);
    add_mamba_params(m, built * kinds.mamba, p);
    if (m.lora_rank > 0 && !m.hybrid_stages.empty()) p.adapter_params += built * hybrid_lora_params(m, kinds);
    if (m.lora_rank > 0 && !m.gdn_pattern.empty()) p.adapter_params += built * gdn_model_lora_params(m, kinds);
    p.sharded += built * 2 * h * h / m.tp;
    p.replicated += built * 3 * (m.rmsnorm ? h : 2 * h);
    // The MTP stage builds its own word embeddings for the depths' inputs
    // (gpt_model.py: `if self.pre_process or self.mtp_process`, and
    // language_module.py shared_embedding_or_output_weight: "MTP need both
    // embedding layer and output layer", Megatron-LM 2a75ac12c54b). Untied
    // models only: with tied weights the stage's output weight copy is
    // already counted above.
    if (!first && !m.tied) {
      p.sharded += embedding;
      p.largest = std::max(p.largest, embedding);
    }
  }
  return p;
}

// ---------------------------------------------------------------------------------------
// Pipeline schedule

// Micro-batches (in model chunks) whose activations a stage holds at its peak.
// 1F1B [NS]: stage i runs PP - i - 1 warm-up forwards, then one more before
// its first backward: min(PP - i, m). Interleaved [NS] (schedules.py
// get_pp_rank_microbatches): warm-up (PP - i - 1)·2 + (VPP - 1)·group chunks,
// plus the one in steady state, at most m·VPP.
double chunks_in_flight(const MemoryModel& m, int stage) {
  int64_t mb = std::max<int64_t>(1, m.microbatches);
  if (m.pp == 1) return 1;
  if (m.vpp <= 1) return static_cast<double>(std::min<int64_t>(m.pp - stage, mb));
  int64_t group = m.microbatch_group > 0 ? m.microbatch_group : m.pp;
  int64_t warmup = (m.pp - stage - 1) * 2 + (m.vpp - 1) * group;
  return static_cast<double>(std::min<int64_t>(warmup + 1, mb * m.vpp));
}

// The bytes a full-recompute checkpoint keeps per layer group: the group's
// input 2sbh [K sec. 5], split over TP with SP or distribute_saved_activations;
// n x that under hyper-connections (the n residual streams, estimate_dsv4_stage.cpp).
double checkpoint_bytes(const MemoryModel& m, double tokens) {
  double split = (m.sp || m.distribute_saved) ? 1.0 / m.tp : 1.0;
  return ab(m) * tokens * m.hidden * split * dsv4_streams(m);
}

struct StageActivations {
  double layers = 0;    // the decoder layers' saved activations
  double edges = 0;     // embedding (first stage), final norm / output input (last stage)
  double logits = 0;    // logits and cross-entropy (last stage)
  double working = 0;   // recompute working set
  double offloaded = 0; // moved to the host
  double in_flight = 0;
};

StageActivations stage_activations(const MemoryModel& m, int stage) {
  StageActivations a;
  double tokens = static_cast<double>(m.seq) / m.cp * m.micro_batch;  // [MC] 4.3 item 1: s/CP per rank
  double rep = m.sp ? 1.0 / m.tp : 1.0;
  LayerKinds kinds = layer_kinds(m, stage);
  double n = layer_count(m, kinds);
  // A diffusion model's blocks and DeepSeek V4's layers (which differ by
  // compression ratio) are summed per stage by their own estimates.
  const DitStage* dit = m.dit.present ? &m.dit.stages[static_cast<size_t>(stage)] : nullptr;
  auto stage_bytes = [&](const MemoryModel& mm) {
    return dit ? dit->block_bytes : mm.dsv4 ? dsv4_layers_bytes(mm, stage) : kinds_bytes(mm, kinds);
  };
  double per_layer = n > 0 ? stage_bytes(m) / n : 0;
  double chunk_layers = n / std::max<int64_t>(1, m.vpp);
  double chunks = chunks_in_flight(m, stage);
  a.in_flight = m.vpp > 1 ? chunks / m.vpp : chunks;
  double per_chunk = chunk_layers * per_layer;
  if (m.recompute != "full") per_chunk += m.dsv4 ? dsv4_recompute_block_bytes(m, chunk_layers) : 0;
  if (m.recompute == "full" && chunk_layers > 0) {
    double group = static_cast<double>(std::max<int64_t>(1, m.recompute_layers));
    if (m.recompute_method == "block") {
      double recomputed = std::min(group, chunk_layers);
      per_chunk = recomputed * checkpoint_bytes(m, tokens) + (chunk_layers - recomputed) * per_layer;
      a.working = per_layer;  // one recomputed layer at a time
    } else {  // uniform: one checkpoint per group of `group` layers
      per_chunk = std::ceil(chunk_layers / group) * checkpoint_bytes(m, tokens);
      a.working = std::min(group, chunk_layers) * per_layer;  // the group being recomputed
    }
  }
  a.layers = chunks * per_chunk;
  if (!m.offload_modules.empty() && n > 0) {
    // Fine-grained offloading copies asynchronously: the layer being
    // offloaded and the one being reloaded still hold their tensors.
    MemoryModel kept = m;
    kept.offload_modules.clear();
    double full = stage_bytes(kept) / n;
    a.working += std::min(2.0, n) * std::max(0.0, full - per_layer);
  }
  // CPU activation offloading (PP = 1 only): the first k layers' activations
  // go to the host; one layer is in flight on the device at a time.
  if (m.cpu_offload_layers > 0 && m.recompute.empty()) {
    double moved = std::max(0.0, std::min<double>(static_cast<double>(m.cpu_offload_layers), n) - 1) * per_layer;
    a.offloaded = std::min(moved, a.layers);
    a.layers -= a.offloaded;
  }
  double h = static_cast<double>(m.hidden);
  if (dit) {  // a diffusion transformer: its embedders, head and loss instead of the embedding and logits
    a.edges = a.in_flight * dit->outer_bytes;
    return a;
  }
  if (stage == 0) {
    // [K]: the embedding dropout mask sbh/t per micro-batch in flight, and
    // the token and position ids (int64).
    double mask = m.hidden_dropout > 0 ? tokens * h * rep : 0;
    a.edges += a.in_flight * (mask + 16 * tokens);
    // [G4] _compute_per_layer_inputs: the projection keeps its input (the
    // embedding output), its output's norm over ple_dim keeps what a norm
    // keeps, and the per-layer inputs (layers x ple_dim per token) stay for
    // every layer's product. The table lookup keeps only the token ids.
    if (m.ple_dim > 0) {
      double width = static_cast<double>(m.layers * m.ple_dim);
      double norm = m.torch_norms ? torch_norm_bytes(m) : ab(m);
      a.edges += a.in_flight * (ab(m) * tokens * h + (norm + ab(m)) * tokens * width * rep);
    }
  }
  if (stage == m.pp - 1) {
    // [K]: the final norm input 2sbh and the output layer's input 2sbh.
    a.edges += 2 * ab(m) * tokens * h * rep;
    if (m.dsv4) a.edges += dsv4_head_bytes(m);  // the hyper-connection head before the final norm
    // Logits and the loss (megatron/core/tensor_parallel/cross_entropy.py):
    // the output layer's bf16 logits 2·sbv/t are cast to fp32 (4·sbv/t) for
    // the vocab-parallel cross entropy, which turns them into the softmax in
    // place and keeps it for the backward pass; the backward pass hands back
    // a bf16 gradient (2·sbv/t) while the fp32 softmax is alive. Peak 6 bytes
    // per logit. [K] counts only 4sbv/t (the fp32 logits) for p = 1.
    // With --cross-entropy-loss-fusion (native) the steps are compiled
    // functions (jit_fuser) that return new tensors instead of working in
    // place: the fp32 cast and the fp32 softmax coexist, 10 bytes per logit.
    double logits = tokens * static_cast<double>(m.vocab) / m.tp;
    double mtp = static_cast<double>(m.stage_mtp.empty() ? 0 : m.stage_mtp[stage]);
    double cast = m.cross_entropy == "native" ? 4 : 0;
    a.logits = logits * (ab(m) + cast + 4 * (1 + mtp));  // each MTP loss keeps its own fp32 softmax
    // With cross_entropy_fusion_impl "te" (language_module.py, core_v0.17.0)
    // the bf16 logits go to Transformer Engine's parallel_cross_entropy
    // (TE v2.9 transformer_engine/pytorch/triton/cross_entropy.py), which
    // writes the gradient into the logits in place and saves only them (and
    // fp32 statistics per row): 2 bytes per logit, per loss.
    if (m.cross_entropy == "te") a.logits = logits * ab(m) * (1 + mtp);
    // [GM] Gemma2OutputLayer soft-caps the logits, cap x tanh(logits / cap):
    // tanh keeps its bf16 output for the backward pass, alive beside the
    // loss's own tensors.
    if (m.logit_softcap) a.logits += logits * ab(m) * (1 + mtp);
    // defer_embedding_wgrad_compute: the output layer's weight gradient waits
    // for the pipeline flush, keeping each earlier micro-batch's bf16 logits
    // gradient and the layer's input.
    if (m.deferred_wgrad > 1) {
      a.logits += static_cast<double>(m.deferred_wgrad - 1) * (ab(m) * logits + ab(m) * tokens * h * rep);
    }
  }
  if (!m.stage_mtp.empty() && m.stage_mtp[stage] > 0) {
    // MTP depths run once per micro-batch on the stage holding them: their
    // layers each (a repeated layer runs once per depth) plus the
    // concatenated [embedding, hidden] input.
    double layer = m.dsv4 ? dsv4_mtp_depth_bytes(m) : kinds_bytes(m, mtp_layer_kinds(m));
    double inputs = m.dsv4 ? dsv4_mtp_input_bytes(m) : 2 * ab(m) * tokens * h * rep;
    if (m.recompute == "full") {
      // Under full recompute each depth checkpoints its projection and layer
      // from their two inputs, hidden_states and the embedding (2sbh each),
      // and recomputes them in the backward pass, one depth at a time
      // (multi_token_prediction.py MultiTokenPredictionLayer.forward ->
      // _checkpointed_forward, Megatron-LM 2a75ac12c54b).
      a.layers += a.in_flight * m.stage_mtp[stage] * inputs;
      a.working = std::max(a.working, layer + inputs);
    } else {
      a.layers += a.in_flight * m.stage_mtp[stage] * (layer + inputs);
    }
  }
  return a;
}

// ---------------------------------------------------------------------------------------
// Bytes per parameter

struct ParamBytes {
  double weights = 0, gradients = 0, optimizer = 0;
  double reload = 0;  // the second copy of the inner optimizer's state while a checkpoint loads
};

// [MC] 4.1: bf16 parameters 2 B, fp32 main gradients 4 B, fp32 master
// weights 4 B and Adam's two moments 8 B (18 B/param); the distributed
// optimizer shards the master weights and moments over the data-parallel
// group (DP·CP for dense parameters, expert DP for experts, per instance).
// Resuming a distributed optimizer from a checkpoint (Megatron-LM
// 2a75ac12c54b, megatron/core/optimizer/distrib_optimizer.py): before the
// first step the inner optimizer has no state, so sharded_state_dict(
// is_loading=True) calls load_state_dict(state_dict()), which allocates
// every state tensor with torch.empty (exp_avg, exp_avg_sq and, with the
// precision-aware optimizer, master_param) and hands them to the inner
// optimizer's load_state_dict while still holding them. TE's FusedAdam (the
// Adam optimizer/__init__.py imports first; Apex's only without TE)
// (transformer_engine/pytorch/optimizers/fused_adam.py load_state_dict,
// set_scaled_state, _initialize_state) does not adopt them: it allocates
// its own state tensors and copies into them, so at the end of that call
// both copies are alive. (torch's Optimizer.load_state_dict first casts
// them to the bf16 parameter's dtype; TE drops those casts param by param,
// so they are gone by then.) Without the precision-aware optimizer the
// fp32 master shards are Megatron's own and are not doubled.
double resume_state_bytes(const MemoryModel& m) {
  return m.exp_avg_bytes + m.exp_avg_sq_bytes + (m.precision_aware ? m.master_bytes : 0);
}

ParamBytes param_bytes(const MemoryModel& m, const StageParams& p) {
  ParamBytes b;
  double dense = p.sharded + p.replicated;
  double all = dense + p.experts;
  double dense_shard = static_cast<double>(m.dp * m.cp) / std::max<int64_t>(1, m.optimizer_instances);
  double expert_shard = static_cast<double>(m.edp) / std::max<int64_t>(1, m.optimizer_instances);
  dense_shard = std::max(1.0, dense_shard);
  expert_shard = std::max(1.0, expert_shard);
  bool fsdp = !m.fsdp_sharding.empty();
  bool shard_optimizer = m.distributed_optimizer || fsdp || m.optimizer == "dist_muon";
  bool shard_grads = fsdp && m.fsdp_sharding.rfind("optim_grads", 0) == 0;
  bool shard_params = fsdp && m.fsdp_sharding == "optim_grads_params";
  double state = m.master_bytes * (m.param_bytes < 4 ? 1 : 0) + m.exp_avg_bytes + m.exp_avg_sq_bytes;
  b.weights = all * m.param_bytes;
  if (m.lora_rank > 0) {
    // LoRA: the frozen base weights get no main_grad and no optimizer state;
    // the adapters (A: in x r, B: r x out per linear layer) get both, as
    // fp32-master Adam with fp32 gradients. Their weights are counted with
    // the base weights' bytes.
    double adapters = p.adapter_params;
    b.weights += adapters * m.param_bytes;
    b.gradients = adapters * 4;
    b.optimizer = adapters * state;
    return b;
  }
  if (shard_params) {
    // Megatron-FSDP keeps a 1/(DP·CP) shard plus the gathered parameters of
    // the module running and the one prefetched.
    double layers = std::max(1.0, std::accumulate(m.stage_layers.begin(), m.stage_layers.end(), 0.0));
    b.weights = (dense / dense_shard + p.experts / expert_shard + 2 * all / layers) * m.param_bytes;
  }
  // FP8 training without fp8 parameters: Transformer Engine caches the
  // quantized weight and its transpose (2 x 1 B) across micro-batches
  // (is_first_microbatch caching); NVFP4 its two NVFP4 layouts. NVFP4
  // parameters are counted at the bf16 parameter's 2 B (their packed
  // 4-bit values and the column-wise copy come to 1.1 B: an upper bound).
  if (m.fp8_weight_cache && !quantized_params(m)) b.weights += (p.sharded + p.experts) * weight_cache_bytes(m);
  b.gradients = shard_grads ? (dense / dense_shard + p.experts / expert_shard) * m.grad_bytes : all * m.grad_bytes;
  // Hybrid FSDP with outer_dp_sharding_strategy "optim" (megatron_fsdp
  // fully_shard.py, core_v0.17.0): parameters and gradients are sharded
  // within each of the num_distributed_optimizer_instances groups, the
  // optimizer state over all of them.
  double instances = m.fsdp_outer_optim ? static_cast<double>(std::max<int64_t>(1, m.optimizer_instances)) : 1.0;
  double optimizer = shard_optimizer ? (dense / dense_shard + p.experts / expert_shard) / instances : all;
  b.optimizer = optimizer * state * (1 - m.optimizer_offload);
  b.reload = m.resumes_optimizer ? optimizer * resume_state_bytes(m) : 0;
  return b;
}

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / kGiB); }

// Fixed overhead outside PyTorch's allocator, so not in max_allocated: the
// CUDA context with the kernels of PyTorch, cuBLAS, cuDNN and TE (about
// 0.5 GiB on Hopper-class GPUs), NCCL's communicator buffers (NCCL_BUFFSIZE
// 4 MiB per channel and peer over the TP/DP/PP communicators; ~0.5 GiB) and
// the caching allocator's fragmentation (reserved above allocated; ~10%;
// Bridge's memory-tuning notes show a 58.8 GB peak failing on 80 GB without
// expandable segments).
constexpr double kContextGiB = 0.5;
constexpr double kNcclGiB = 0.5;
constexpr double kFragmentation = 0.10;

// The overhead outside the allocator for a peak allocated (bytes or GiB alike).
double overhead_for(double peak, double unit) { return (kContextGiB + kNcclGiB) * unit + kFragmentation * peak; }

}  // namespace

bool te_trains_unfused(int64_t head_dim) { return head_dim > 0 && (head_dim % 8 != 0 || head_dim > 256); }

// Transformer Engine's fused scale-mask-softmax kernel takes the scores
// only for some shapes (FusedScaleMaskSoftmax.is_kernel_available,
// transformer_engine/pytorch/attention/dot_product_attention/softmax.py,
// the same at v2.8 and d0067d0): 16 < sk < 16384, sk a multiple of 8, sq > 1,
// sq and b x heads multiples of 4, sq a multiple of the kernel's batches per
// block. Otherwise forward_torch_softmax runs torch's softmax in fp32
// (softmax_in_fp32 defaults to True there), which keeps its fp32 output for
// the backward pass besides the bf16 probabilities the second GEMM keeps.
bool te_softmax_kernel(int64_t sq, int64_t sk, double attn_batches) {
  if (!(16 < sk && sk < 16384) || sk % 8 != 0 || sq <= 1) return false;
  if (sq % 4 != 0 || std::fmod(attn_batches, 4.0) != 0) return false;
  int64_t pow2 = 1;
  while (pow2 < sk) pow2 <<= 1;
  int64_t warp = std::min<int64_t>(pow2, 32);  // THREADS_PER_WARP
  int64_t per_warp = pow2 <= 128 ? 2 : 1;
  int64_t per_block = (128 / warp) * per_warp;  // THREADS_PER_BLOCK 128
  return sq % per_block == 0;
}

MemoryRange total_range(const MemoryEstimate& e) {
  double low = e.peak_allocated / (1 + kEstimateErrorBand);
  double high = e.peak_allocated / (1 - kEstimateErrorBand);
  return {low + overhead_for(low, 1.0), high + overhead_for(high, 1.0)};
}

MemoryEstimate without_optimizer(const MemoryEstimate& e) {
  MemoryEstimate out = e;
  out.peak_allocated = e.peak_allocated - e.optimizer;
  out.optimizer = 0;
  out.overhead = overhead_for(out.peak_allocated, 1.0);
  out.total = out.peak_allocated + out.overhead;
  std::erase_if(out.parts, [](const MemoryPart& p) { return p.name == "optimizer"; });
  return out;
}

double marked_layers_on_stage(const MemoryModel& m, const std::vector<bool>& marks, int stage) {
  if (marks.empty() || stage < 0 || stage >= static_cast<int>(m.stage_layers.size())) return 0;
  double n = m.stage_layers[static_cast<size_t>(stage)];
  if (m.vpp == 1) {
    double start = 0;
    for (int s = 0; s < stage; ++s) start += m.stage_layers[static_cast<size_t>(s)];
    auto first = static_cast<size_t>(std::llround(start));
    auto count = static_cast<size_t>(std::llround(n));
    double marked = 0;
    for (size_t i = first; i < first + count && i < marks.size(); ++i) marked += marks[i] ? 1 : 0;
    return marked;
  }
  double share = static_cast<double>(std::count(marks.begin(), marks.end(), true)) / static_cast<double>(marks.size());
  return n * share;
}

double layers_in_flight(const MemoryModel& m, int stage) {
  if (stage < 0 || stage >= static_cast<int>(m.stage_layers.size())) return 0;
  return chunks_in_flight(m, stage) * m.stage_layers[stage] / static_cast<double>(std::max<int64_t>(1, m.vpp));
}

namespace {

// The attention block of a layer [K] (with its input norm and the dropout
// mask after the projection).
void attention_part(const MemoryModel& m, Terms& t) {
  double tokens = static_cast<double>(m.seq) / m.cp * m.micro_batch;
  attention_block(m, tokens, m.sp ? 1.0 / m.tp : 1.0, t);
}

// [G4] A Gemma 4 E-model layer's per-layer input (Gemma4DenseTransformerLayer
// .forward, after the MLP): gelu(gate(x)) * per_layer_input, projected back
// and normalised. nn.Linear keeps the gate's input (x) and the projection's
// input (the product), GELU its input, the product its GELU operand (the
// per-layer input is a slice of the model's tensor, counted once on the first
// stage), and the post norm what a norm keeps.
void per_layer_input_terms(const MemoryModel& m, double tokens, Terms& t) {
  double h = static_cast<double>(m.hidden), p = static_cast<double>(m.ple_dim);
  t.add("per-layer input: gate input, GELU input and output, projection input", ab(m) * tokens * (h + 3 * p));
  t.add("per-layer input norm", (m.torch_norms ? torch_norm_bytes(m) * h : ab(m) * h + 4) * tokens);
}

// [G4] The norms of a Gemma 4 MoE layer (Bridge's modeling_gemma4.py) over
// `elements` (tokens x hidden on this rank). Each is _gemma4_rms_norm, a
// PyTorch expression that keeps two fp32 copies of its input and, when its
// weight trains, its fp32 normalised output: 12 B per element, 8 B under
// LoRA's frozen base. Gemma4TransformerLayer._forward_mlp normalises the
// experts' input, the shared expert's input and the FFN output outside
// self.mlp, where "moe" recompute does not reach; inside Gemma4MoELayer (and
// its recompute) the routed and the shared output are normalised, and the
// router's input by a scaleless norm (8 B) times its learned scale, which
// keeps the bf16 normalised input when the scale trains.
void gemma4_moe_norms(const MemoryModel& m, double elements, Terms& t) {
  double kept = torch_norm_bytes(m);
  t.add("Gemma 4 MoE-layer input and output norms (fp32)", 3 * kept * elements);
  if (recomputes(m, "moe")) return;
  bool scale_trains = kept > 8;  // LoRA freezes the router's scale with the rest of the base
  t.add("Gemma 4 routed and shared output norms, router norm (fp32)", (2 * kept + 8 + (scale_trains ? ab(m) : 0)) * elements);
}

// The MLP or MoE block of a layer, with its pre-MLP norm and dropout mask.
void mlp_part(const MemoryModel& m, bool moe, Terms& t) {
  double tokens = static_cast<double>(m.seq) / m.cp * m.micro_batch;
  double rep = m.sp ? 1.0 / m.tp : 1.0;
  if (moe) {
    moe_input(m, tokens, rep, t);
    moe_mlp(m, tokens, rep, t);
  } else if (recomputes(m, "mlp")) {
    // The MLP is recomputed from its input (the residual, kept by the fused
    // pre-MLP layer norm) [K sec. 5 applied to the MLP].
    if (!offloads(m, "mlp_norm")) t.add("MLP input (recomputed MLP)", ab(m) * tokens * m.hidden * rep);
  } else {
    dense_mlp(m, tokens, rep, static_cast<double>(m.ffn), t, "MLP input (layernorm output)");
    if (m.pre_norms && !offloads(m, "mlp_norm")) {
      double norm = m.torch_norms ? torch_norm_bytes(m) : ab(m);
      t.add(m.torch_norms ? "pre-MLP norm: fp32 copies (PyTorch RMSNorm)" : "pre-MLP layernorm input",
            norm * tokens * m.hidden * rep);
    }
  }
  if (moe && !offloads(m, "mlp_norm")) t.add("pre-MLP layernorm input", ab(m) * tokens * m.hidden * rep);
  if (moe && m.gemma4_norms) gemma4_moe_norms(m, tokens * m.hidden * rep, t);
  if (m.hidden_dropout > 0) t.add("MLP dropout mask sbh", tokens * m.hidden * rep);
  if (m.ple_dim > 0) per_layer_input_terms(m, tokens * rep, t);
}

double attention_layer_bytes(const MemoryModel& m) {
  Terms t;
  attention_part(m, t);
  return t.total;
}

double mlp_layer_bytes(const MemoryModel& m, bool moe) {
  Terms t;
  mlp_part(m, moe, t);
  return t.total;
}

}  // namespace

double layer_activation_bytes(const MemoryModel& m, bool moe, std::vector<std::string>* details) {
  Terms t;
  t.details = details;
  attention_part(m, t);
  mlp_part(m, moe, t);
  return t.total;
}

double moe_block_bytes(const MemoryModel& m) {
  Terms t;
  moe_mlp(m, static_cast<double>(m.seq) / m.cp * m.micro_batch, m.sp ? 1.0 / m.tp : 1.0, t);
  return t.total;
}

double mamba_layer_bytes(const MemoryModel& m, std::vector<std::string>* details) {
  Terms t;
  t.details = details;
  double tokens = static_cast<double>(m.seq) / m.cp * m.micro_batch;
  mamba_mixer(m, tokens, m.sp ? 1.0 / m.tp : 1.0, t);
  return t.total;
}

MemoryEstimate estimate_model(const MemoryModel& m) {
  MemoryEstimate e;
  e.capacity = m.capacity_gib;
  e.microbatches = m.microbatches;
  if (m.pp > 1) {
    e.bubble_fraction = bubble_idle_share(m.pp, m.vpp, m.microbatches);
  } else {
    e.bubble_fraction = 0.0;
  }
  double best = -1;
  for (int stage = 0; stage < m.pp; ++stage) {
    StageParams p = stage_params(m, stage);
    // The vision tower sits on the first stage (estimate_vision.cpp): trained
    // parameters as dense replicated ones, frozen ones as weights only.
    bool vision = stage == 0 && m.vision.dims;
    if (vision) p.replicated += m.vision.trainable_params;
    if (vision) p.adapter_params += m.vision.adapter_params;  // LoRA on the tower's own linears
    // pretrain_vlm.py's CLIP ViT and projector, also on the first stage
    // (estimate_llava.cpp).
    bool encoder = stage == 0 && m.encoder.present;
    if (encoder) p.replicated += m.encoder.trainable_params;
    ParamBytes pb = param_bytes(m, p);
    if (vision) pb.weights += m.vision.frozen_params * m.param_bytes;
    if (encoder) pb.weights += m.encoder.frozen_params * m.param_bytes;
    if (m.vision.language_frozen || m.encoder.language_frozen) {  // only the vision parameters it trains keep grads and optimizer state
      StageParams trained;
      trained.replicated = (vision ? m.vision.trainable_params : 0) + (encoder ? m.encoder.trainable_params : 0);
      ParamBytes t = param_bytes(m, trained);
      pb.gradients = t.gradients;
      pb.optimizer = t.optimizer;
    }
    StageActivations a = stage_activations(m, stage);
    double vision_act = (vision ? a.in_flight * m.vision.activation_bytes : 0) +
                        (encoder ? a.in_flight * m.encoder.activation_bytes : 0);
    // Fixed buffers in the allocator: cuBLAS and TE GEMM workspaces (32 MiB
    // each on Hopper: CUBLAS_WORKSPACE_CONFIG :4096:8, TE get_workspace), the
    // pipeline's send/receive buffers (2sbh each way) and, without gradient
    // accumulation fusion, the bf16 weight gradient of the largest weight
    // before it is added to the fp32 main_grad.
    double tokens = static_cast<double>(m.seq) / m.cp * m.micro_batch;
    double rep = m.sp ? 1.0 / m.tp : 1.0;
    double workspace = 64.0 * 1024 * 1024;
    double p2p = m.pp > 1 ? 2 * ab(m) * tokens * m.hidden * rep * dsv4_streams(m) : 0;
    double wgrad = m.grad_accumulation_fusion ? 0 : p.largest * m.param_bytes;
    double other = workspace + p2p + wgrad;
    double activations = a.layers + a.edges + a.logits + a.working + vision_act;
    double peak = pb.weights + pb.gradients + pb.optimizer + activations + other;
    // Loading a checkpoint: no activations yet, the weights, gradient buffers
    // and optimizer state plus the second copy of the optimizer's state
    // (resume_state_bytes). It counts when it exceeds the training step.
    double resume = std::max(0.0, pb.weights + pb.gradients + pb.optimizer + pb.reload - peak);
    peak += resume;
    double overhead = overhead_for(peak, kGiB);
    StageMemory sm{stage, peak / kGiB, (peak + overhead) / kGiB};
    e.stages.push_back(sm);
    if (sm.total <= best) continue;
    best = sm.total;
    e.stage = stage;
    e.weights = pb.weights / kGiB;
    e.gradients = pb.gradients / kGiB;
    e.optimizer = pb.optimizer / kGiB;
    e.activations = activations / kGiB;
    e.other = other / kGiB;
    e.resume = resume / kGiB;
    e.peak_allocated = peak / kGiB;
    e.overhead = overhead / kGiB;
    e.total = sm.total;
    e.parts.clear();
    double params = p.sharded + p.replicated + p.experts;
    e.parts.push_back({"weights", e.weights,
                       {fmt::format("{:.3g} M parameters on this rank ({:.3g} M in routed experts), {} B each{}",
                                    params / 1e6, p.experts / 1e6, m.param_bytes,
                                    m.fp8_weight_cache && !quantized_params(m)
                                        ? fmt::format(" + {:.3g} B {} weight cache for linear layers",
                                                      weight_cache_bytes(m), m.fp4 ? "NVFP4" : "fp8")
                                        : "")}});
    if (m.vocab > 0) {
      e.parts.back().details.push_back(fmt::format("embedding and output layer: {} vocabulary rows{}",
                                                   m.vocab, m.vocab_assumed ? " (assumed, below)" : ""));
    }
    if (vision) {
      e.parts.back().details.push_back(fmt::format("{}: {:.3g} M parameters ({:.3g} M frozen)", vision_part_label(m.vision),
                                                   (m.vision.trainable_params + m.vision.frozen_params) / 1e6,
                                                   m.vision.frozen_params / 1e6));
    }
    if (m.dit.present) {
      e.parts.back().details.push_back(
          fmt::format("{} ({:.4g} M parameters in all)", m.dit.label, m.dit.total_params / 1e6));
    }
    if (encoder) {
      e.parts.back().details.push_back(
          fmt::format("{}: {:.3g} M parameters ({:.3g} M frozen)", m.encoder.label,
                      (m.encoder.trainable_params + m.encoder.frozen_params) / 1e6, m.encoder.frozen_params / 1e6));
    }
    e.parts.push_back({"gradients", e.gradients, {fmt::format("main_grad buffer, {} B per parameter", m.grad_bytes)}});
    e.parts.push_back({"optimizer", e.optimizer,
                       {fmt::format("{} state{}", m.optimizer,
                                    m.distributed_optimizer ? fmt::format(", sharded over DP·CP = {}{}", m.dp * m.cp,
                                                                          m.experts > 0 ? fmt::format(" (experts: EDP {})", m.edp) : "")
                                                            : ", not sharded (distributed optimizer off)")}});
    std::vector<std::string> act;
    act.push_back(fmt::format("decoder layers: {} ({:.3g} layers x {:.3g} micro-batches in flight{})", gib(a.layers),
                              m.stage_layers[stage], a.in_flight,
                              m.recompute.empty() ? "" : fmt::format(", {} recompute", m.recompute)));
    if (a.working > 0) act.push_back(fmt::format("recompute working set: {}", gib(a.working)));
    if (a.offloaded > 0) act.push_back(fmt::format("offloaded to the host: {}", gib(a.offloaded)));
    if (a.edges > 0) {
      act.push_back(fmt::format("{}: {}", m.dit.present ? "embedders, rotary table, head and loss" : "embedding / output-layer inputs",
                                gib(a.edges)));
    }
    if (a.logits > 0) act.push_back(fmt::format("logits + cross-entropy (fp32): {}", gib(a.logits)));
    if (vision_act > 0) {
      act.push_back(fmt::format("{}: {}", encoder && !vision ? m.encoder.label : vision_part_label(m.vision),
                                gib(vision_act)));
    }
    e.parts.push_back({"activations", e.activations, act});
    e.parts.push_back({"other", e.other,
                       {fmt::format("GEMM workspaces {}, pipeline buffers {}, weight-gradient temporary {}",
                                    gib(workspace), gib(p2p), gib(wgrad))}});
    if (resume > 0) {
      e.parts.push_back({"resume", e.resume,
                         {fmt::format("loading the checkpoint's optimizer state peaks above the training step: "
                                      "weights + gradients + optimizer state + a second copy of Adam's state ({})",
                                      gib(pb.reload))}});
    }
    e.parts.push_back({"overhead", e.overhead,
                       {fmt::format("CUDA context {:.1f} GiB + NCCL {:.1f} GiB + {:.0f}% allocator fragmentation",
                                    kContextGiB, kNcclGiB, kFragmentation * 100)}});
  }
  bool last = e.stage == m.pp - 1;
  if (m.pp == 1) {
    e.rank = "the only pipeline stage";
  } else {
    e.rank = fmt::format("{} pipeline stage (stage {} of {})", e.stage == 0 ? "first" : last ? "last" : "middle",
                         e.stage, m.pp);
  }
  if (m.experts > 0) e.rank += ", any expert rank (balanced routing)";
  if (m.vision.dims) e.vision = m.vision;
  return e;
}

}  // namespace mblint
