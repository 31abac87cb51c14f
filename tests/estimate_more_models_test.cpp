// More of the catalog's models in the memory estimate (issue 20): Gemma 2
// (2B, 9B, 27B) and Gemma 3 1B, whose text stacks carry layer features the
// plain GPT layer lacks (data/model_dims.csv text_extras; terms [GM] in
// lint/facts/estimate.cpp). Each weight count is derived by hand from the
// checkpoint's config and compared with the published parameter count; each
// extra activation term by hand from the Megatron Bridge 067f987df03b and
// Megatron-Core 2a75ac12c54b modules that keep it.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "lint/facts/estimate.h"
#include "tests/cli_run.h"
#include "tests/lint_run.h"
#include "tests/memory_model_run.h"
#include "tests/estimate_json.h"
#include "tests/memory_units.h"
#include "tests/test_support.h"

using namespace mblint;
using test::estimate_json;
using test::kGiB;

namespace {

// Every parameter of the model on one rank (TP = PP = 1, no FP8 cache, bf16).
double parameters(MemoryModel m) {
  m.tp = m.pp = m.vpp = m.cp = m.dp = 1;
  m.stage_layers = {static_cast<double>(m.layers)};
  m.stage_mtp = {0};
  return test::bf16_parameters(m);
}

}  // namespace

TEST_CASE("more models: Gemma 2's parameters, by hand, match the published counts", "[estimate]") {
  // google/gemma-2-2b (data/model_dims.csv): 26 layers, hidden 2304, 8 heads
  // and 4 KV groups of 256, GeGLU 9216, vocab 256000 tied; RMSNorm: an input
  // norm, a post-attention norm, a pre-MLP norm and a post-MLP norm per layer
  // (Gemma2Bridge's mapping: input_layernorm, post_attention_layernorm,
  // pre_feedforward_layernorm, post_feedforward_layernorm) and a final norm.
  const double h = 2304, d = 256, f = 9216;
  double qkv = h * d * (8 + 2 * 4), proj = 8 * d * h, mlp = 3 * h * f, norms = 4 * h;
  double layer = qkv + proj + mlp + norms;
  CHECK(layer == 77'865'984.0);
  double total = 26 * layer + 256000 * h + h;
  // The published count: 2,614,341,888 (keras-hub's Gemma 2 preset `params`,
  // the HF checkpoint's safetensors total).
  CHECK(total == 2'614'341'888.0);
  MemoryModel m = test::estimated_recipe_model("gemma2_2b_sft_1gpu_h100_bf16_config");
  CHECK(m.rmsnorm);
  CHECK(m.post_norms);
  CHECK_FALSE(m.qk_norm);
  CHECK(m.unfused_glu);
  CHECK(m.logit_softcap);
  CHECK(m.softcap_attention);
  CHECK_FALSE(m.unfused_attention);  // FlexAttention without dropout: flash-like
  CHECK(parameters(m) == Approx(total).epsilon(1e-12));
  // 9B (42 layers, hidden 3584, 16 heads, 8 groups, ffn 14336) and 27B (46
  // layers, hidden 4608, 32 heads of 128, 16 groups, ffn 36864): 9,241,705,984
  // and 27,227,128,320 published.
  CHECK(parameters(test::estimated_recipe_model("gemma2_9b_sft_4gpu_h100_bf16_config")) == Approx(9'241'705'984.0).epsilon(1e-12));
  CHECK(parameters(test::estimated_recipe_model("gemma2_27b_sft_16gpu_h100_bf16_config")) ==
        Approx(27'227'128'320.0).epsilon(1e-12));
}

TEST_CASE("more models: Gemma 3 1B's parameters, by hand, match the published count", "[estimate]") {
  // Gemma3ModelProvider of gemma3.py's recipes (data/model_dims.csv):
  // 26 layers, hidden 1152, 4 heads and 1 KV group of 256, GeGLU 6912, vocab
  // 262144 tied; the four RMSNorms per layer as Gemma 2 and, with
  // qk_layernorm, a 256-wide RMSNorm over the query heads and one over the
  // key heads.
  const double h = 1152, d = 256, f = 6912;
  double layer = h * d * (4 + 2) + 4 * d * h + 3 * h * f + 4 * h + 2 * d;
  CHECK(layer == 26'842'112.0);
  double total = 26 * layer + 262144 * h + h;
  // The published count: 999,885,952 (keras-hub's Gemma 3 1B preset, the HF
  // checkpoint's safetensors total).
  CHECK(total == 999'885'952.0);
  MemoryModel m = test::estimated_recipe_model("gemma3_1b_pretrain_1gpu_h100_bf16_config");
  CHECK(m.qk_norm);
  CHECK(m.post_norms);
  CHECK_FALSE(m.logit_softcap);
  CHECK_FALSE(m.softcap_attention);
  // The pretrain recipe trains on mock data with a 32,000-token NullTokenizer
  // and use_tokenizer_vocab_size (recipes/common.py), so Bridge sizes its
  // embedding to the tokenizer's 32,000 (a multiple of 128: no padding;
  // training/setup.py _validate_and_set_vocab_size), not the checkpoint's.
  CHECK(parameters(m) == Approx(26 * layer + 32000 * h + h).epsilon(1e-12));
  // The SFT recipe keeps the model's vocabulary (its tokenizer is the
  // checkpoint's, use_tokenizer_vocab_size off): the published count.
  CHECK(parameters(test::estimated_recipe_model("gemma3_1b_sft_1gpu_h100_bf16_config")) == Approx(total).epsilon(1e-12));
}

TEST_CASE("more models: a Gemma layer's extra saved activations, by hand", "[estimate]") {
  // gemma2_2b_sft_1gpu: seq 2048, micro-batch 1, TP 1, no SP: T = 2048 tokens.
  MemoryModel m = test::estimated_recipe_model("gemma2_2b_sft_1gpu_h100_bf16_config");
  REQUIRE(m.seq == 2048);
  REQUIRE(m.micro_batch == 1);
  REQUIRE(m.tp == 1);
  const double T = 2048, h = 2304, f = 9216;
  MemoryModel plain = m;
  plain.post_norms = plain.unfused_glu = false;
  // The post-attention and post-MLP norms keep their bf16 input and an fp32
  // rstd per token: 2 x (2h + 4) T; the unfused GLU's product keeps
  // gelu(x_glu) and x_linear + 0, 2 x 2 f T.
  double extra = 2 * (2 * h + 4) * T + 2 * 2 * f * T;
  CHECK(layer_activation_bytes(m, false) - layer_activation_bytes(plain, false) == Approx(extra).epsilon(1e-12));
  // The soft-capped logits: tanh's bf16 output, 2 B per logit of the
  // 256,000-token vocabulary, beside the native cross entropy's 10 B.
  MemoryModel uncapped = m;
  uncapped.logit_softcap = false;
  double logits = T * 256000;
  auto activations = [](const MemoryModel& model) { return estimate_model(model).activations * kGiB; };
  CHECK(activations(m) - activations(uncapped) == Approx(2 * logits).epsilon(1e-9));
  // All of it over the plain GPT layer: 26 layers' extras and the soft-cap.
  MemoryModel none = plain;
  none.logit_softcap = false;
  CHECK(activations(m) - activations(none) == Approx(26 * extra + 2 * logits).epsilon(1e-9));
  // Gemma 3 1B's qk_layernorm keeps the Q and K views' copies and an fp32
  // rstd per head: (2 x 256 + 4) x T x (4 + 1) at seq 4096 (SFT recipe).
  MemoryModel g3 = test::estimated_recipe_model("gemma3_1b_sft_1gpu_h100_bf16_config");
  REQUIRE(g3.seq == 4096);
  MemoryModel no_qk = g3;
  no_qk.qk_norm = false;
  CHECK(layer_activation_bytes(g3, false) - layer_activation_bytes(no_qk, false) ==
        Approx((2 * 256 + 4) * 4096.0 * 5).epsilon(1e-12));
}

TEST_CASE("more models: Gemma 2 with attention dropout takes the unfused attention and keeps the soft-cap",
          "[estimate]") {
  // Gemma2FlexDotProductAttention runs FlexAttention only without dropout;
  // with it, Gemma2DotProductAttention keeps tanh's output of the capped
  // scores and the softmax output (2as²b each), the dropout mask (as²b) and
  // its output (2as²b): 7as²b per layer, a = 8 heads, s = 2048, b = 1.
  MemoryModel flex = test::estimated_recipe_model("gemma2_2b_sft_1gpu_h100_bf16_config");
  MemoryModel dropout = test::estimated_recipe_model("gemma2_2b_sft_1gpu_h100_bf16_config", "model:\n  attention_dropout: 0.1\n");
  CHECK(dropout.unfused_attention);
  const double as2b = 8.0 * 2048 * 2048;
  const double lse = 4.0 * 2048 * 8;  // FlexAttention's fp32 log-sum-exp, gone on the unfused path
  CHECK(layer_activation_bytes(dropout, false) - layer_activation_bytes(flex, false) ==
        Approx(7 * as2b - lse).epsilon(1e-12));
  // The recipes leave the caps on; a job that turns them off drops the terms.
  MemoryModel off = test::estimated_recipe_model("gemma2_2b_sft_1gpu_h100_bf16_config",
                                 "model:\n  final_logit_softcapping: null\n  attn_logit_softcapping: 0\n");
  CHECK_FALSE(off.logit_softcap);
  CHECK_FALSE(off.softcap_attention);
}

TEST_CASE("more models: every Gemma 2, Gemma 3 1B and EXAONE 4.0 1.2B recipe is estimated", "[estimate]") {
  for (const char* recipe :
       {"gemma2_2b_pretrain_2gpu_h100_bf16_config", "gemma2_2b_sft_1gpu_h100_bf16_config",
        "gemma2_2b_peft_1gpu_h100_bf16_config", "gemma2_9b_pretrain_8gpu_h100_bf16_config",
        "gemma2_9b_sft_4gpu_h100_bf16_config", "gemma2_9b_peft_1gpu_h100_bf16_config",
        "gemma2_27b_pretrain_16gpu_h100_bf16_config", "gemma2_27b_sft_16gpu_h100_bf16_config",
        "gemma2_27b_peft_4gpu_h100_bf16_config", "gemma3_1b_pretrain_1gpu_h100_bf16_config",
        "gemma3_1b_sft_1gpu_h100_bf16_config", "gemma3_1b_peft_1gpu_h100_bf16_config",
        "exaone4_1p2b_pretrain_1gpu_h100_bf16_config", "exaone4_1p2b_sft_1gpu_h100_bf16_config",
        "exaone4_1p2b_peft_1gpu_h100_bf16_config"}) {
    INFO(recipe);
    CHECK(estimate_json({"--recipe", recipe})["estimate"].is_object());
  }
}

TEST_CASE("more models: EXAONE 4.0 1.2B's parameters and its unfused attention, by hand", "[estimate]") {
  // LGAI-EXAONE/EXAONE-4.0-1.2B (data/model_dims.csv): 30 layers, hidden 2048,
  // 32 heads and 8 KV groups of 64, SwiGLU 4096, vocab 102400 tied. Pure
  // post-norm layers (exaone4_layer_spec): no input or pre-MLP norm, a
  // post-attention and a post-MLP RMSNorm, 64-wide Q and K norms.
  const double h = 2048, d = 64, f = 4096;
  double layer = h * d * (32 + 2 * 8) + 32 * d * h + 3 * h * f + 2 * h + 2 * d;
  CHECK(layer == 35'655'808.0);
  // Without the embedding: 1,069,676,288, the model card's "1.07B without
  // embeddings"; with it 1,279,391,488.
  CHECK(30 * layer + h == 1'069'676'288.0);
  double total = 30 * layer + h + 102400 * h;
  MemoryModel m = test::estimated_recipe_model("exaone4_1p2b_pretrain_1gpu_h100_bf16_config");
  CHECK_FALSE(m.pre_norms);
  CHECK(m.qk_norm);
  CHECK(parameters(m) == Approx(total).epsilon(1e-12));
  // The layer spec's core attention is Megatron-Core's DotProductAttention:
  // the softmax output 2as²b/t per layer (no dropout: EXAONE's provider sets
  // it to 0), not flash attention's log-sum-exp; at seq 4096 and the
  // recipe's micro-batch b, 32 heads.
  REQUIRE(m.unfused_attention);
  REQUIRE(m.attention_dropout == 0);
  MemoryModel flash = m;
  flash.unfused_attention = false;
  double s = 4096, b = static_cast<double>(m.micro_batch);
  REQUIRE(m.seq == 4096);
  CHECK(layer_activation_bytes(m, false) - layer_activation_bytes(flash, false) ==
        Approx(2 * 32 * s * s * b - 4 * s * b * 32).epsilon(1e-12));
  // No input norm and no pre-MLP norm: their 2sbh inputs are not kept.
  MemoryModel pre = m;
  pre.pre_norms = true;
  CHECK(layer_activation_bytes(pre, false) - layer_activation_bytes(m, false) ==
        Approx(2 * 2 * s * b * h).epsilon(1e-12));
}
