// Gemma 4 26B-A4B (the Gemma 4 VL recipes' language model) in the memory
// estimate: its full-attention layers with their own head width and KV
// groups, and the norms Bridge writes as PyTorch expressions
// (src/megatron/bridge/models/gemma/modeling_gemma4.py at 067f987df03b).
// Each figure is derived by hand from the checkpoint's text_config that
// data/model_dims.csv cites: 30 layers, hidden 2816, 16 heads; sliding layers
// 8 KV heads of 256, every 6th layer global with 2 KV heads of 512.
#include <catch2/catch.hpp>

#include <algorithm>

#include "lint/facts/estimate.h"
#include "tests/memory_model_run.h"
#include "tests/memory_units.h"

using namespace mblint;

namespace {

// A recipe's memory model on one tensor-parallel rank (and one expert rank):
// its weights are the whole model's.
MemoryModel on_one_rank(const std::string& recipe, const std::string& more = "") {
  return test::estimated_recipe_model(recipe, "model:\n  tensor_model_parallel_size: 1\n  expert_model_parallel_size: 1\n"
                                              "  sequence_parallel: false\n" + more);
}

MemoryModel whole_model() { return on_one_rank("gemma4_vl_26b_sft_8gpu_h100_bf16_config"); }

}  // namespace

TEST_CASE("Gemma 4: every 6th layer attends globally with 2 KV heads of 512", "[estimate]") {
  MemoryModel m = whole_model();
  REQUIRE(m.layers == 30);
  REQUIRE(m.global_attention.size() == 30);
  // interleaved_attn_pattern (5, 1): layers 6, 12, 18, 24, 30 (1-based).
  for (size_t i = 0; i < 30; ++i) {
    INFO("layer " << i + 1);
    CHECK(m.global_attention[i] == ((i + 1) % 6 == 0));
  }
  CHECK(m.kv_channels == 256);
  CHECK(m.query_groups == 8);
  CHECK(m.global_kv_channels == 512);
  CHECK(m.global_query_groups == 2);
  CHECK(m.gemma4_norms);
  CHECK(m.qk_norm);
  CHECK(m.post_norms);
}

TEST_CASE("Gemma 4: the global layers' attention weights, by hand", "[estimate]") {
  MemoryModel m = whole_model();
  MemoryModel sliding_only = m;
  sliding_only.global_attention.clear();
  // Per global layer, linear_qkv h x (16 + 2 x 2) x 512 and linear_proj
  // 16 x 512 x h, against h x (16 + 2 x 8) x 256 and 16 x 256 x h; the Q and
  // K norms (RMSNorm, one weight each over the head) 512 wide, not 256.
  const double h = 2816;
  double global = h * 512 * (16 + 4) + 16 * 512 * h + 2 * 512;
  double sliding = h * 256 * (16 + 16) + 16 * 256 * h + 2 * 256;
  CHECK(global - sliding == 17'302'016.0);
  double added = test::bf16_parameters(m) - test::bf16_parameters(sliding_only);
  CHECK(added == Approx(5 * 17'302'016.0).epsilon(1e-9));
}

TEST_CASE("Gemma 4: a global layer's 512-wide heads run Transformer Engine's unfused attention", "[estimate]") {
  // No fused backend trains a head wider than 256 (te_trains_unfused).
  CHECK(te_trains_unfused(512));
  CHECK_FALSE(te_trains_unfused(256));
  CHECK(te_trains_unfused(52));
  MemoryModel m = on_one_rank("gemma4_vl_26b_sft_8gpu_h100_bf16_config", "  recompute_granularity: null\n");
  REQUIRE(m.recompute.empty());
  REQUIRE_FALSE(m.unfused_attention);
  MemoryModel sliding_only = m;
  sliding_only.global_attention.clear();
  const double t = static_cast<double>(m.seq) * m.micro_batch, s = static_cast<double>(m.seq);
  // Per global layer against a sliding one (16 heads; 2 KV heads of 512
  // against 8 of 256), bf16: Q, K, V 2t x 512 x 20 - 2t x 256 x 32; the Q and
  // K norms (input and fp32 rstd per head) (1024 + 4) x 18 - (512 + 4) x 24;
  // v_norm 6 B x 512 x 2 - 6 B x 256 x 8; the attention output 2 x 16 x
  // (512 - 256); the unfused softmax's bf16 output over 16 heads x s x s
  // (and its fp32 copy where TE's softmax kernel does not take the shape)
  // in place of flash attention's fp32 log-sum-exp per head.
  double per_token = (2 * 512 * 20 - 2 * 256 * 32) + (1028 * 18 - 516 * 24) + (6 * 512 * 2 - 6 * 256 * 8) +
                     2 * 16 * 256 - 4 * 16;
  CHECK(per_token == 12'200.0);
  double softmax = te_softmax_kernel(m.seq, m.seq, 16) ? 2.0 : 6.0;
  double per_layer = per_token * t + softmax * 16 * s * s;
  double added = (estimate_model(m).activations - estimate_model(sliding_only).activations) * test::kGiB;
  CHECK(added == Approx(5 * per_layer).epsilon(1e-9));
}

TEST_CASE("Gemma 4: v_norm and the MoE layer's PyTorch RMSNorms, by hand", "[estimate]") {
  MemoryModel m = whole_model();
  REQUIRE(m.tp == 1);
  REQUIRE_FALSE(m.sp);
  const double tokens = static_cast<double>(m.seq) * m.micro_batch;
  const double h = 2816;
  MemoryModel plain = m;
  plain.gemma4_norms = false;
  // A sliding layer: V (8 groups of 256) in fp32 (4 B) and normalised in
  // bf16 (2 B). In the MoE block five _gemma4_rms_norm calls with a weight
  // (experts' input, shared expert's input, FFN output in the layer; routed
  // and shared output in Gemma4MoELayer), each keeping two fp32 copies of
  // its input and its fp32 output, 12 B per element, and the router's
  // scaleless norm (8 B) whose output its trained scale keeps (2 B).
  double v_norm = 6 * tokens * 8 * 256;
  double moe_norms = (5 * 12 + 8 + 2) * tokens * h;
  CHECK(layer_activation_bytes(m, true) - layer_activation_bytes(plain, true) == Approx(v_norm + moe_norms));
  // A dense layer (none in this model, but the same attention) gets v_norm only.
  CHECK(layer_activation_bytes(m, false) - layer_activation_bytes(plain, false) == Approx(v_norm));
  // Under LoRA the norms' weights are frozen: the product with the weight no
  // longer keeps the fp32 normalised output, 8 B per element.
  m.lora_rank = plain.lora_rank = 16;
  CHECK(layer_activation_bytes(m, true) - layer_activation_bytes(plain, true) ==
        Approx(v_norm + (5 * 8 + 8) * tokens * h));
  // "moe" recompute reruns Gemma4MoELayer's own norms; the layer's three stay.
  m.recompute = plain.recompute = "selective";
  m.recompute_modules = plain.recompute_modules = {"moe"};
  CHECK(layer_activation_bytes(m, true) - layer_activation_bytes(plain, true) == Approx(v_norm + 3 * 8 * tokens * h));
}

// Gemma 4 E4B (text only; data/model_dims.csv gemma4_e4b from
// Gemma4DenseProvider's defaults): 42 layers of 2560, 8 heads and 2 KV
// heads of 256, every 6th layer global with 2 KV heads of 512, a 10,240 GLU
// MLP, per-layer embeddings 262,144 x (42 x 256), Megatron's local spec.
namespace {

MemoryModel e4b(const std::string& more = "") { return on_one_rank("gemma4_e4b_pretrain_2gpu_h100_bf16_config", more); }

}  // namespace

TEST_CASE("Gemma 4 E4B: parameters, by hand", "[estimate]") {
  MemoryModel m = e4b();
  REQUIRE(m.tp == 1);
  REQUIRE(m.layers == 42);
  CHECK(m.ple_vocab == 262144);
  CHECK(m.ple_dim == 256);
  CHECK(m.torch_norms);
  CHECK(m.unfused_attention);
  CHECK(m.local_attention);
  // The recipe turns masked_softmax_fusion off: PyTorch's softmax, in bf16
  // (GPTModelProvider's attention_softmax_in_fp32 False), keeps what the
  // fused kernel keeps.
  CHECK_FALSE(m.torch_softmax_fp32);
  CHECK(std::count(m.global_attention.begin(), m.global_attention.end(), true) == 7);
  const double h = 2560, f = 10240, V = 262144, P = 256;
  // Every layer: the GLU MLP, five h-wide RMSNorms (input, post-attention,
  // pre-MLP, post-MLP, per-layer input), the per-layer input's gate and
  // projection (h x 256 each). Sliding attention: 8 + 2 x 2 heads of 256 in
  // linear_qkv, 8 x 256 -> h, Q and K norms of 256; global: of 512.
  double common = 3 * h * f + 5 * h + 2 * h * P;
  double sliding = common + h * 256 * 12 + 8 * 256 * h + 2 * 256;
  double global = common + h * 512 * 12 + 8 * 512 * h + 2 * 512;
  CHECK(sliding == 93'074'432.0);
  CHECK(global == 106'182'144.0);
  // The tied embedding, the per-layer embedding table and its column-parallel
  // projection h -> 42 x 256 with a 256-wide norm, the final norm.
  double outer = V * h + V * 42 * P + h * 42 * P + P + h;
  double total = 35 * sliding + 7 * global + outer;
  CHECK(total == 7'518'068'992.0);
  CHECK(test::bf16_parameters(m) == Approx(total).epsilon(1e-9));
}

TEST_CASE("Gemma 4 E4B: the local spec's norms and softmax and the per-layer inputs, by hand", "[estimate]") {
  MemoryModel m = e4b();
  REQUIRE_FALSE(m.sp);
  const double t = static_cast<double>(m.seq) * m.micro_batch;
  const double h = 2560, P = 256, d = 256, heads = 8, groups = 2;
  MemoryModel fused = m;
  fused.torch_norms = false;
  fused.ple_dim = 0;
  // PyTorch RMSNorms keep 12 B per element where a fused norm keeps its bf16
  // input (input and pre-MLP norms: 2 B) or its input and an fp32 rstd per
  // row (post norms, Q and K head norms); the per-layer input adds the gate's
  // and the GELU's inputs, the GELU's output, the projection's input, and its
  // post norm.
  double norms = 2 * (12 - 2) * t * h + 2 * (12 * t * h - (2 * h + 4) * t) +
                 (12 * d - (2 * d + 4)) * t * (heads + groups);
  double per_layer_input = 2 * t * (h + 3 * P) + 12 * t * h;
  CHECK(layer_activation_bytes(m, false) - layer_activation_bytes(fused, false) == Approx(norms + per_layer_input));
  // With attention_softmax_in_fp32 DotProductAttention's PyTorch softmax
  // keeps its fp32 output beside the bf16 probabilities: 4 B per score,
  // 8 heads x s x s.
  MemoryModel fp32_softmax = m;
  fp32_softmax.torch_softmax_fp32 = true;
  CHECK(layer_activation_bytes(fp32_softmax, false) - layer_activation_bytes(m, false) == Approx(4 * heads * t * t));
  MemoryModel read = e4b("  attention_softmax_in_fp32: true\n");
  CHECK(read.torch_softmax_fp32);
}
