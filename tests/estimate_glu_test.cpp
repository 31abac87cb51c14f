// The gated MLP's activation in the memory estimate (issue 20): the fused
// kernel or Megatron-Core's unfused glu, as the job's bias_activation_fusion
// makes it (lint/facts/estimate.cpp [GLU]). What each path keeps is read from
// Megatron-Core 2a75ac12c54b (the commit Megatron Bridge 067f987df03b pins):
// megatron/core/transformer/mlp.py MLP.forward, moe/experts.py
// TEGroupedMLP.forward, fusions/fused_bias_swiglu.py. The fused
// bias_swiglu_impl saves only its input (the fc1 output, 2f wide); the
// unfused glu's torch.chunk gives two views, silu saves x_glu (a view: the
// fc1 output stays alive) and the product saves silu's output and
// x_linear + glu_linear_offset (a new tensor even for offset 0.0): two f-wide
// tensors more; in the experts the product is then scaled by the routing
// probabilities, a multiplication that saves it too: three.
#include <catch2/catch.hpp>

#include "lint/facts/estimate.h"
#include "tests/estimate_json.h"
#include "tests/lint_run.h"
#include "tests/memory_model_run.h"
#include "tests/test_support.h"

using namespace mblint;

namespace {

// A Megatron-LM launch of a small SwiGLU GPT with `extra` flags.
MemoryModel megatron_lm_model(const std::string& extra) {
  return test::estimated_launch_model(
      "#!/bin/bash\ntorchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 4 --hidden-size 1024 "
      "--num-attention-heads 16 --seq-length 2048 --micro-batch-size 1 --global-batch-size 8 --bf16 --swiglu " +
      extra + "\n");
}

// The activation bytes of a dense layer's f-wide MLP tensors: the layer's
// bytes less those of the same layer without an MLP width.
double dense_f_terms(const MemoryModel& m) {
  MemoryModel none = m;
  none.ffn = 0;
  return layer_activation_bytes(m, false) - layer_activation_bytes(none, false);
}

// The same for a MoE layer's routed experts (no shared experts here).
double expert_f_terms(const MemoryModel& m) {
  MemoryModel none = m;
  none.moe_ffn = 0;
  return layer_activation_bytes(m, true) - layer_activation_bytes(none, true);
}

}  // namespace

TEST_CASE("glu: one Qwen3-8B layer's MLP, by hand, unfused as its bridge leaves it and fused", "[estimate]") {
  // Qwen3Bridge sets no bias_activation_fusion (data/model_dims.csv): the
  // unfused glu. qwen3_8b_pretrain_4gpu_h100_bf16_config: TP 4 without SP,
  // micro-batch 2 x seq 4096, T = 8192 tokens; h 4096, f 12288.
  MemoryModel m = test::estimated_recipe_model("qwen3_8b_pretrain_4gpu_h100_bf16_config");
  REQUIRE(m.tp == 4);
  REQUIRE_FALSE(m.sp);
  REQUIRE(m.micro_batch * m.seq == 8192);
  REQUIRE(m.ffn == 12288);
  CHECK(m.unfused_glu);
  const double T = 8192, f = 12288, t = 4;
  // Per layer, bf16: fc1's output 2 x 2f (kept as silu's input), silu's
  // output and x_linear + 0 (2f each, saved by the product), the product
  // (fc2's input, 2f): 10 T f / t bytes.
  CHECK(dense_f_terms(m) == Approx(10 * T * f / t).epsilon(1e-12));
  CHECK(10 * T * f / t == 251'658'240.0);
  // Fused (bias_swiglu_impl), as the job can ask: fc1's output and the
  // kernel's output, 6 T f / t; the difference 4 T f / t = 96 MiB a layer.
  MemoryModel fused = test::estimated_recipe_model("qwen3_8b_pretrain_4gpu_h100_bf16_config",
                                   "model:\n  bias_activation_fusion: true\n");
  CHECK_FALSE(fused.unfused_glu);
  CHECK(dense_f_terms(fused) == Approx(6 * T * f / t).epsilon(1e-12));
  CHECK(layer_activation_bytes(m, false) - layer_activation_bytes(fused, false) == Approx(4 * T * f / t).epsilon(1e-12));
  // Selective recompute of the MLP keeps only its input: no difference.
  MemoryModel recomputed = m;
  recomputed.recompute = "selective";
  recomputed.recompute_modules = {"mlp"};
  MemoryModel recomputed_fused = fused;
  recomputed_fused.recompute = "selective";
  recomputed_fused.recompute_modules = {"mlp"};
  CHECK(layer_activation_bytes(recomputed, false) == layer_activation_bytes(recomputed_fused, false));
  // TE's activation module (use_te_activation_func) saves its input, as the
  // fused kernel does.
  MemoryModel te = test::estimated_recipe_model("qwen3_8b_pretrain_4gpu_h100_bf16_config", "model:\n  use_te_activation_func: true\n");
  CHECK(te.te_activation);
  CHECK_FALSE(te.unfused_glu);
  CHECK(dense_f_terms(te) == Approx(6 * T * f / t).epsilon(1e-12));
}

TEST_CASE("glu: the flag follows the model's bridge, the recipe and the user's override", "[estimate]") {
  // LlamaBridge sets it (llama_bridge.py:56): fused; a user may turn it off.
  CHECK_FALSE(test::estimated_recipe_model("llama3_8b_pretrain_8gpu_h100_bf16_config").unfused_glu);
  CHECK(test::estimated_recipe_model("llama3_8b_pretrain_8gpu_h100_bf16_config", "model:\n  bias_activation_fusion: false\n").unfused_glu);
  // Qwen3MoEBridge leaves it off, but the 16-GPU H100 pretrain recipe sets it
  // (recipes/qwen/h100/qwen3_moe.py:158); its SFT sibling on 8 GPUs does not.
  CHECK_FALSE(test::estimated_recipe_model("qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config").unfused_glu);
  CHECK(test::estimated_recipe_model("qwen3_30b_a3b_sft_8gpu_h100_bf16_config").unfused_glu);
  // Gemma's fast_gelu has no fused kernel: unfused whatever the flag says.
  CHECK(test::estimated_recipe_model("gemma2_2b_sft_1gpu_h100_bf16_config", "model:\n  bias_activation_fusion: true\n").unfused_glu);
  // EXAONE 4's SwiGLU is unfused only because its provider leaves the flag off.
  CHECK(test::estimated_recipe_model("exaone4_1p2b_pretrain_1gpu_h100_bf16_config").unfused_glu);
  CHECK_FALSE(test::estimated_recipe_model("exaone4_1p2b_pretrain_1gpu_h100_bf16_config",
                           "model:\n  bias_activation_fusion: true\n").unfused_glu);
}

TEST_CASE("glu: Megatron-LM fuses the SwiGLU unless --no-bias-swiglu-fusion", "[estimate]") {
  // arguments.py: --no-bias-swiglu-fusion is store_false into
  // bias_swiglu_fusion (default True); argument_utils.py makes it
  // bias_activation_fusion with --swiglu (Megatron-LM d98e8a64).
  CHECK_FALSE(megatron_lm_model("").unfused_glu);
  MemoryModel off = megatron_lm_model("--no-bias-swiglu-fusion");
  CHECK(off.unfused_glu);
  // 4 layers, h 1024, ffn int(8h/3/64)*64 = 2688, T = 2048, TP 1: 4 T f
  // bytes more a layer.
  REQUIRE(off.ffn == 2688);
  MemoryModel on = megatron_lm_model("");
  CHECK(layer_activation_bytes(off, false) - layer_activation_bytes(on, false) ==
        Approx(4.0 * 2048 * 2688).epsilon(1e-12));
}

TEST_CASE("glu: a Qwen3-30B-A3B MoE layer's experts, by hand", "[estimate]") {
  // qwen3_30b_a3b_sft_8gpu_h100_bf16_config: TP 4 with SP, EP 4, ETP 1,
  // seq 2048, micro-batch 1; 128 experts of f_e 768, top-8. Each rank routes
  // its 2048 / 4 = 512 sequence-parallel tokens to 8 experts: it receives
  // 512 x 8 = 4096 token copies (balanced routing).
  MemoryModel m = test::estimated_recipe_model("qwen3_30b_a3b_sft_8gpu_h100_bf16_config");
  REQUIRE(m.tp == 4);
  REQUIRE(m.sp);
  REQUIRE(m.etp == 1);
  REQUIRE(m.seq * m.micro_batch == 2048);
  REQUIRE(m.topk == 8);
  REQUIRE(m.moe_ffn == 768);
  REQUIRE(m.unfused_glu);
  const double received = 2048.0 / 4 * 8, fe = 768;
  // Unfused: fc1's output (2 x 2 f_e), silu's output, x_linear + 0 and the
  // glu's product before the probabilities (2 f_e each), the weighted
  // product (fc2's input, 2 f_e): 12 f_e bytes per received token.
  CHECK(expert_f_terms(m) == Approx(12 * received * fe).epsilon(1e-12));
  // Fused (weighted_bias_swiglu_impl saves its input and the probabilities):
  // 6 f_e; the difference 6 x 4096 x 768 = 18,874,368 B a MoE layer.
  MemoryModel fused = m;
  fused.unfused_glu = false;
  CHECK(expert_f_terms(fused) == Approx(6 * received * fe).epsilon(1e-12));
  CHECK(layer_activation_bytes(m, true) - layer_activation_bytes(fused, true) == 18'874'368.0);
  // TE's activation module: its output is saved by the probabilities'
  // product, one f_e more than fused.
  MemoryModel te = fused;
  te.te_activation = true;
  CHECK(expert_f_terms(te) == Approx(8 * received * fe).epsilon(1e-12));
  // moe_act recompute (CheckpointWithoutOutput around the activation) keeps
  // only the fc1 output, whichever path.
  for (MemoryModel* x : {&m, &fused}) {
    x->recompute = "selective";
    x->recompute_modules = {"moe_act"};
  }
  CHECK(expert_f_terms(m) == Approx(4 * received * fe).epsilon(1e-12));
  CHECK(expert_f_terms(fused) == Approx(4 * received * fe).epsilon(1e-12));
}

TEST_CASE("glu: the shared experts are an MLP", "[estimate]") {
  // A shared expert (SharedExpertMLP, an MLP without routing probabilities)
  // keeps two f-wide tensors more unfused, over TP like a dense MLP.
  MemoryModel m = test::estimated_recipe_model("qwen3_30b_a3b_sft_8gpu_h100_bf16_config");
  m.shared_ffn = 1024;
  MemoryModel fused = m;
  fused.unfused_glu = false;
  const double T = 2048, routed = 6 * (2048.0 / 4 * 8) * 768;
  CHECK(layer_activation_bytes(m, true) - layer_activation_bytes(fused, true) ==
        Approx(routed + 2 * 2 * T * 1024 / 4).epsilon(1e-12));
}

TEST_CASE("glu: not known, the unfused path is assumed and said", "[estimate]") {
  // A Bridge YAML without a recipe does not say; Megatron-Core's default is
  // off, the larger of the two.
  test::LintRun run("mblint-estimate-glu-yaml");
  run.write("config.yaml",
            "model:\n  num_layers: 2\n  hidden_size: 1024\n  num_attention_heads: 16\n  seq_length: 2048\n"
            "  gated_linear_unit: true\n  ffn_hidden_size: 2816\n");
  run.options.paths = {"config.yaml"};
  std::vector<std::string> assumptions;
  MemoryModel m = test::estimated_model_of(run, &assumptions);
  CHECK(m.unfused_glu);
  bool said = false;
  for (const std::string& a : assumptions) said = said || a.find("bias_activation_fusion unknown") != std::string::npos;
  CHECK(said);
}

TEST_CASE("glu: K-EXAONE 2.0's clamped SwiGLU keeps the clamped gate half, on every layer taken as clamped",
          "[estimate]") {
  // glu() in mlp.py and moe/experts.py (Megatron-Core 2a75ac12c54b): with
  // activation_func_clamp_value, x_glu.clamp(max=val) is a new tensor, and
  // silu saves it instead of a view of the fc1 output (which x_linear's
  // clamp keeps alive as its saved input, as silu did before): one f-wide
  // tensor more per token, in the dense MLPs, the routed experts and the
  // shared expert. Which layers clamp comes from the checkpoint's
  // swiglu_limits (exaone_moe_provider.py:88-90), not in the catalog: every
  // layer is counted (the larger estimate) and the estimate says so.
  const std::string recipe = "exaone_moe_2_0_750b_a37_pretrain_512gpu_h100_bf16_config";
  std::vector<std::string> assumptions;
  test::LintRun run("mblint-estimate-glu-clamp");
  run.options.recipe = run.value(recipe);
  MemoryModel m = test::estimated_model_of(run, &assumptions);
  REQUIRE(m.unfused_glu);
  CHECK(m.clamped_glu);
  bool said = false;
  for (const std::string& a : assumptions) said = said || a.find("every layer assumed clamped") != std::string::npos;
  CHECK(said);
  MemoryModel unclamped = m;
  unclamped.clamped_glu = false;
  REQUIRE(m.cp == 1);
  const double T = static_cast<double>(m.micro_batch * m.seq), ab = 2;
  // A dense layer: ab x T x f / TP more.
  CHECK(layer_activation_bytes(m, false) - layer_activation_bytes(unclamped, false) ==
        Approx(ab * T * static_cast<double>(m.ffn) / static_cast<double>(m.tp)).epsilon(1e-12));
  // A MoE layer: the routed experts' clamped gate half and the shared expert's.
  CHECK(layer_activation_bytes(m, true) > layer_activation_bytes(unclamped, true));
  CHECK(expert_f_terms(m) - expert_f_terms(unclamped) > 0);
  // A job's own activation_func_clamp_value clamps every layer of any model.
  CHECK_FALSE(test::estimated_recipe_model("llama3_8b_pretrain_8gpu_h100_bf16_config").clamped_glu);
  MemoryModel clamped = test::estimated_recipe_model("llama3_8b_pretrain_8gpu_h100_bf16_config",
                                     "model:\n  bias_activation_fusion: false\n  activation_func_clamp_value: 7.0\n");
  CHECK(clamped.clamped_glu);
  MemoryModel plain = clamped;
  plain.clamped_glu = false;
  // This recipe runs CP 2: a rank holds b x s / CP tokens.
  REQUIRE(clamped.cp == 2);
  const double Tl = static_cast<double>(clamped.micro_batch * clamped.seq) / static_cast<double>(clamped.cp);
  CHECK(layer_activation_bytes(clamped, false) - layer_activation_bytes(plain, false) ==
        Approx(ab * Tl * static_cast<double>(clamped.ffn) / static_cast<double>(clamped.tp)).epsilon(1e-12));
}
