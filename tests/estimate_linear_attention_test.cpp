// Gated delta net (Qwen3-Next) in the memory estimate, derived by hand from
// Megatron-Core at NVIDIA/Megatron-LM 2a75ac12c54b (the submodule Megatron
// Bridge 067f987df03b pins): megatron/core/ssm/gated_delta_net/common.py
// (_GDNBase.__init__: in_proj hidden -> 2·qk + 2·v + 2·value heads, conv1d
// over 2·qk + v channels without bias, dt_bias and A_log per value head,
// out_norm over one value head, out_proj v -> hidden), gdn.py (the
// forward), models/gpt/experimental_attention_variant_module_specs.py
// (get_linear_attention_pattern) and transformer/attention.py
// (attention_output_gate); the saved tensors of flash-linear-attention
// v0.5.1 (Bridge's uv.lock): fla/ops/gated_delta_rule/chunk.py
// ChunkGatedDeltaRuleFunction.forward save_for_backward, chunk_fwd.py (A is
// B x T x H x 64 in k's dtype), fla/modules/l2norm.py and
// fla/modules/conv/triton/ops.py CausalConv1dFunction.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "lint/facts/estimate.h"
#include "lint/facts/estimate_linear_attention.h"
#include "tests/dense_model.h"
#include "tests/memory_units.h"

using namespace mblint;
using test::kGiB;

namespace {

// Qwen3-Next 80B-A3B as data/model_dims.csv records it (Bridge's
// test_qwen3_next_bridge.py config: 48 layers, hidden 2048, 16 heads, 2 KV
// heads of 256, 512 experts top-10 of width 512 plus a 512-wide shared
// expert, vocab 151936, untied; GDN every layer but each 4th: 16 key heads
// and 32 value heads of 128, conv kernel 4; gated attention) on one GPU.
MemoryModel qwen3_next() {
  MemoryModel m = test::swiglu_decoder({48, 2048, 16, 2, 256, 5120, 151936, false});
  m.experts = 512;
  m.topk = 10;
  m.moe_ffn = 512;
  m.shared_ffn = 512;
  m.moe_pattern.assign(48, true);
  m.gdn_pattern = gdn_layer_pattern(48, 4);
  m.gdn_key_heads = 16;
  m.gdn_key_dim = 128;
  m.gdn_value_heads = 32;
  m.gdn_value_dim = 128;
  m.gdn_conv = 4;
  m.attention_gate = true;
  return m;
}

}  // namespace

TEST_CASE("estimate: linear_attention_freq 4 makes every fourth layer softmax attention", "[estimate]") {
  // get_linear_attention_pattern: 0 (attention) when (i + 1) % freq == 0.
  auto pattern = gdn_layer_pattern(48, 4);
  CHECK(std::count(pattern.begin(), pattern.end(), true) == 36);
  CHECK(pattern[0]);
  CHECK(pattern[2]);
  CHECK_FALSE(pattern[3]);
  CHECK_FALSE(pattern[47]);
  // PP 4 without interleaving: 12 contiguous layers per stage, 9 of them GDN.
  MemoryModel m = qwen3_next();
  m.pp = 4;
  m.stage_layers = {12, 12, 12, 12};
  for (int stage = 0; stage < 4; ++stage) CHECK(gdn_layers_on_stage(m, stage) == 9);
  // Uneven first stage (11 layers): layers 1-11 hold attention layers 4 and 8.
  m.stage_layers = {11, 13, 12, 12};
  CHECK(gdn_layers_on_stage(m, 0) == 9);
  CHECK(gdn_layers_on_stage(m, 1) == 9);  // layers 12-24: 12, 16, 20, 24 are attention
}

TEST_CASE("estimate: a gated delta net layer's parameters from the Qwen3-Next config", "[estimate]") {
  MemoryModel m = qwen3_next();
  GdnParams p = gdn_layer_params(m);
  // in_proj 2048 x (2·2048 + 2·4096 + 2·32) = 25,296,896; conv1d 8192 x 4 =
  // 32,768; dt_bias + A_log 64; out_proj 4096 x 2048 = 8,388,608; the fused
  // input norm 2048 and out_norm 128 (RMSNorm weights).
  CHECK(p.sharded == 25296896.0 + 32768 + 64 + 8388608);
  CHECK(p.replicated == 2048.0 + 128);
  m.tp = 2;
  CHECK(gdn_layer_params(m).sharded == (25296896.0 + 32768 + 64 + 8388608) / 2);
}

TEST_CASE("estimate: Qwen3-Next 80B-A3B's parameters add up from its config", "[estimate]") {
  // Per layer: GDN 33,720,512 (above) on 36 layers; gated attention on 12:
  // linear_qkv 2048 x 256 x (2·16 + 2·2) = 18,874,368 (the output gate
  // doubles the query columns), linear_proj 4096 x 2048 = 8,388,608, input
  // norm 2048; MoE on all 48: 512 experts x 3 x 2048 x 512 = 1,610,612,736,
  // router 512 x 2048, the shared expert 3 x 2048 x 512 = 3,145,728,
  // pre-MLP norm 2048; embedding and output 2 x 151936 x 2048; final norm.
  // 79,674,286,848 in all ("80B total parameters", the model card). Not
  // counted: q/k layernorms (2 x 256 per attention layer) and the shared
  // expert's gate (2048 per layer), 104,448 together.
  MemoryModel m = qwen3_next();
  double params = test::bf16_parameters(m);
  CHECK(params == Approx(79674286848.0).epsilon(1e-12));
  // With the MTP layer the pretrain recipes train (gated attention + MoE,
  // eh_proj 2 x 2048 x 2048, three norms): 1,650,468,864 more.
  m.mtp_layers = 1;
  m.stage_mtp = {1};
  CHECK(test::bf16_parameters(m) == Approx(79674286848.0 + 1650468864.0).epsilon(1e-12));
}

TEST_CASE("estimate: a gated delta net layer's saved activations, tensor by tensor", "[estimate]") {
  // Bytes per token at TP 1 (h 2048, qk 16 x 128, v 32 x 128):
  //   in_proj norm input 2h 4,096 + GEMM input 2h 4,096
  //   in_proj output q, k, v, z, beta, alpha: 2 x 12,352 = 24,704 (kept as
  //     the base of the views the compiled gate functions save)
  //   conv1d input (q, k, v): 2 x 8,192 = 16,384
  //   l2norm output q, k 2 x 4,096 + fp32 rstd 4 x 32 = 8,320
  //   delta rule q, k on 32 value heads and v: 2 x (2 x 4,096 + 4,096) = 24,576
  //   g (fp32) and beta: 6 x 32 = 192; WY matrix A: 2 x 32 x 64 = 4,096
  //   output gate z: 8,192; gated norm input, output and rstd: 16,512
  //   out_proj input: 8,192
  // = 119,360 B per token; x 4096 tokens = 488,898,560 B.
  MemoryModel m = qwen3_next();
  CHECK(gdn_layer_bytes(m) == 119360.0 * 4096);
  // TP 2 with sequence parallelism halves every term.
  MemoryModel tp2 = m;
  tp2.tp = 2;
  tp2.sp = true;
  CHECK(gdn_layer_bytes(tp2) == 119360.0 * 4096 / 2);
  // Selective recompute of gdn_norm_out keeps the gated norm's input only:
  // 16,512 + 8,192 - 8,192 fewer bytes per token.
  m.recompute = "selective";
  m.recompute_modules = {"gdn_norm_out"};
  CHECK(gdn_layer_bytes(m) == (119360.0 - 16512 - 8192 + 8192) * 4096);
}

TEST_CASE("estimate: the attention output gate's weights and saved tensors", "[estimate]") {
  // attention.py: linear_qkv projects heads x kv_channels more; the gate and
  // the ungated output are kept (2 x 2 x 16 x 256 = 16,384 B per token).
  MemoryModel gated = qwen3_next();
  gated.gdn_pattern.clear();  // every layer softmax attention, to isolate the gate
  MemoryModel plain = gated;
  plain.attention_gate = false;
  double weights = test::bf16_parameters(gated) - test::bf16_parameters(plain);
  CHECK(weights == Approx(48.0 * 2048 * 16 * 256).epsilon(1e-12));
  double per_layer = layer_activation_bytes(gated, true) - layer_activation_bytes(plain, true);
  CHECK(per_layer == 16384.0 * 4096);
}

TEST_CASE("estimate: a stage's GDN layers replace its attention in the stage's activations", "[estimate]") {
  // A gated attention block keeps per token (TP 1, flash attention): input
  // norm input 4,096 + QKV input 4,096 + Q, K, V 2 x 256 x (16 + 2 x 2) =
  // 10,240 + gate and ungated output 16,384 + fp32 log-sum-exp 4 x 16 = 64 +
  // projection input 8,192 = 43,072 B. On one stage with one micro-batch
  // in flight, 36 layers swap that block for a GDN block (119,360 B); the
  // MoE blocks, embedding and logits are the same.
  MemoryModel m = qwen3_next();
  MemoryModel all_attention = m;
  all_attention.gdn_pattern.clear();
  double swapped = (estimate_model(m).activations - estimate_model(all_attention).activations) * kGiB;
  CHECK(swapped == Approx(36.0 * (119360 - 43072) * 4096).epsilon(1e-9));
}
