// The vision tower of the vision-language recipes in the memory estimate
// (lint/facts/estimate_vision.cpp): its parameters from the checkpoint's
// vision_config, counted by hand; the first pipeline stage holding it; a
// frozen tower keeping weights only; the image bound the estimate states.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "lint/facts/estimate.h"
#include "lint/facts/estimate_vision.h"
#include "tests/cli_run.h"
#include "tests/dense_model.h"
#include "tests/estimate_json.h"
#include "tests/memory_units.h"
#include "tests/test_support.h"

using namespace mblint;
using test::estimate_json;
using test::kGiB;

TEST_CASE("vision: Gemma 4 26B-A4B's tower and projector, counted by hand from its vision_config", "[estimate]") {
  // google/gemma-4-26B-A4B-it vision_config (sources in data/vision_dims.csv):
  // 27 layers, hidden 1152, 16 heads of 72, intermediate 4304, patch 16,
  // position_embedding_size 10240, standardize; modules of HF
  // transformers' Gemma4VisionModel and Gemma4MultimodalEmbedder.
  const VisionDims* d = find_vision_dims("gemma4_vl_26b");
  REQUIRE(d != nullptr);
  int64_t attention = 4 * 1152 * 1152 + 2 * 72;  // q, k, v, o (16 x 72 = 1152 wide) + q/k RMSNorms
  int64_t mlp = 3 * 1152 * 4304;                 // gate, up, down
  int64_t norms = 4 * 1152;                      // input, post-attention, pre- and post-MLP
  int64_t layer = attention + mlp + norms;
  CHECK(layer == 20'187'792);
  int64_t patch = 3 * 16 * 16 * 1152;  // RGB 16x16 patch -> 1152, no bias
  int64_t positions = 2 * 10240 * 1152;  // x and y tables
  int64_t standardize = 2 * 1152;        // std_bias, std_scale
  int64_t tower = 27 * layer + patch + positions + standardize;
  // The same tower's published parameter count (the vision encoder extracted
  // from google/gemma-4-31B-it: "verified_total_params" 569,550,384).
  CHECK(tower == 569'550'384);
  VisionParams p = vision_params(*d);
  CHECK(p.tower == tower);
  CHECK(p.projector == 1152 * 2816);  // embedding_projection; its RMSNorm has no weight
  CHECK(find_vision_dims("llama3_8b") == nullptr);
}

TEST_CASE("vision: the first stage holds the tower; frozen parameters keep weights only", "[estimate]") {
  // A 2-stage dense model, DP 4 with the distributed optimizer: a trained
  // parameter costs 2 (bf16) + 4 (main_grad) + 12 / 4 (Adam) bytes, a frozen
  // one 2; the projector's saved inputs are activations of the first stage.
  MemoryModel m = test::dense_gpt(8, 1024, 16, 2048, 32000);
  m.pp = 2;
  m.dp = 4;
  m.microbatches = 8;
  m.distributed_optimizer = true;
  m.stage_layers = {4, 4};
  m.stage_mtp = {0, 0};
  MemoryEstimate without = estimate_model(m);
  static const VisionDims dims = {"test", "test/vlm", "gemma4", 1, 64, 1, 64, 64, 16, 1, 3, 16, 2, 1024, 8, 0, 0, "test", 0, 0, 0};
  m.vision.dims = &dims;
  m.vision.trainable_params = 1e6;
  m.vision.frozen_params = 5e6;
  m.vision.activation_bytes = 3e6;
  MemoryEstimate with = estimate_model(m);
  // Stage 0 runs min(PP - 0, m) = 2 micro-batches in flight.
  double expected = 5e6 * 2 + 1e6 * (2 + 4 + 12.0 / 4) + 2 * 3e6;
  CHECK(with.stages[0].peak_allocated - without.stages[0].peak_allocated == Approx(expected / kGiB).epsilon(1e-9));
  CHECK(with.stages[1].peak_allocated == Approx(without.stages[1].peak_allocated).epsilon(1e-12));
  REQUIRE(with.vision);
  CHECK(with.vision->dims == &dims);
}

TEST_CASE("vision: the Gemma 4 VL recipes state their tower, its freezing and the image bound", "[estimate]") {
  // gemma4_vl.py (Bridge 067f987df03b): SFT freezes the vision tower and
  // trains the projection; seq_length 4096 and micro-batch 1 bound a
  // micro-batch at 4096 / 280 = 14 images of 280 soft tokens, each pooled
  // from 3 x 3 patches: 14 x 280 x 9 = 35,280 patches.
  auto sft = estimate_json({"--recipe", "gemma4_vl_26b_sft_8gpu_h100_bf16_config"});
  REQUIRE(sft["estimate"].is_object());
  const auto& v = sft["estimate"]["vision"];
  CHECK(v["model"] == "google/gemma-4-26B-A4B-it");
  CHECK(v["stage"] == 0);
  CHECK(v["tower_parameters"] == 569'550'384);
  CHECK(v["projector_parameters"] == 3'244'032);
  CHECK(v["tower_frozen"] == true);
  CHECK(v["projector_frozen"] == false);
  CHECK(v["images_per_microbatch"] == 14);
  CHECK(v["patches_per_microbatch"] == 35'280);
  bool stated = false;
  for (const auto& line : sft["estimate"]["assumptions"]) {
    stated = stated || line.get<std::string>().rfind("vision tower of google/gemma-4-26B-A4B-it", 0) == 0;
  }
  CHECK(stated);
  // PEFT: the whole base model is frozen, the tower and projection included.
  auto peft = estimate_json({"--recipe", "gemma4_vl_26b_peft_4gpu_h100_bf16_config"});
  REQUIRE(peft["estimate"].is_object());
  CHECK(peft["estimate"]["vision"]["projector_frozen"] == true);
  // A trained HF tower's saved activations are not modelled: declined, saying so.
  auto trained = estimate_json({"--recipe", "gemma4_vl_26b_sft_8gpu_h100_bf16_config", "--set",
                                "model.freeze_vision_model=false"});
  CHECK(trained["estimate"].is_null());
  std::string why;
  for (const auto& line : trained.value("estimate_unavailable", nlohmann::json::array())) why += line.get<std::string>();
  CHECK(why.find("trainable vision tower of google/gemma-4-26B-A4B-it") != std::string::npos);
}

TEST_CASE("vision: Qwen3-VL 8B's tower and mergers, counted by hand from its vision_config", "[estimate]") {
  // Qwen/Qwen3-VL-8B-Instruct vision_config (data/vision_dims.csv): depth 27,
  // hidden 1152, 16 heads, intermediate 4304, patch 16 x 16 x 2 frames x 3
  // channels, 2304 position rows, spatial_merge_size 2, out_hidden_size
  // 4096, 3 deepstack mergers; modules of Bridge's modelling_qwen3_vl
  // (067f987df03b): LayerNorm (weight + bias), biased qkv/proj/fc1/fc2.
  const VisionDims* d = find_vision_dims("qwen3_vl_8b");
  REQUIRE(d != nullptr);
  int64_t h = 1152, f = 4304, merged = 4 * h;
  int64_t split = 3 * h * h + 3 * h + h * h + h * f + f + f * h;  // qkv (+ bias), proj, fc1 (+ bias), fc2
  int64_t whole = 2 * h + 2 * h + h + h;                          // two LayerNorms, proj and fc2 biases
  CHECK(split + whole == 15'239'504);
  int64_t embeddings = 3 * 2 * 16 * 16 * h + h + 2304 * h;  // Conv3d with bias, position table
  VisionParams p = vision_params(*d);
  CHECK(p.tower == 27 * (split + whole) + embeddings);
  CHECK(p.tower == 415'891'440);
  CHECK(p.tower_split == 27 * split);
  int64_t merger_split = merged * merged + merged + merged * 4096;  // fc1 (+ bias), fc2
  CHECK(p.projector_split == 4 * merger_split);
  CHECK(p.projector == 4 * merger_split + (2 * h + 4096) + 3 * (2 * merged + 4096));  // norms, fc2 biases
  // With Qwen3-8B's 8,190,735,360 text parameters: 8,767,123,696, the
  // 8.8 B the model is listed with.
  CHECK(p.tower + p.projector == 576'388'336);
}

TEST_CASE("vision: Qwen3-VL 8B recipes: a trained tower's activations, a frozen language model, LoRA declined",
          "[estimate]") {
  // SFT trains everything: the tower's activations over at most
  // seq_length x micro-batch x merge^2 = 4096 x 2 x 4 = 32,768 patches.
  auto sft = estimate_json({"--recipe", "qwen3_vl_8b_sft_2gpu_h100_bf16_config"});
  REQUIRE(sft["estimate"].is_object());
  CHECK(sft["estimate"]["vision"]["patches_per_microbatch"] == 32'768);
  CHECK(sft["estimate"]["vision"]["tower_frozen"] == false);
  // The pretrain recipe freezes the language model and the tower and trains
  // the mergers: on TP 4 (DP 1) each rank holds 160,450,560 / 4 split +
  // 46,336 replicated merger parameters = 40,158,976, the only ones with
  // fp32 gradients (4 B) and Adam state (12 B, not sharded at DP 1).
  auto pre = estimate_json({"--recipe", "qwen3_vl_8b_pretrain_4gpu_h100_bf16_mock_config"});
  REQUIRE(pre["estimate"].is_object());
  CHECK(pre["estimate"]["gradients"].get<double>() == Approx(40'158'976.0 * 4 / kGiB).margin(0.005));
  CHECK(pre["estimate"]["optimizer"].get<double>() == Approx(40'158'976.0 * 12 / kGiB).margin(0.005));
  CHECK(pre["estimate"]["vision"]["tower_frozen"] == true);
  CHECK(pre["estimate"]["vision"]["projector_frozen"] == false);
  // LoRA's default targets also match the tower's Megatron-Core layers and
  // the mergers: estimated with those adapters (tests/estimate_vlm_towers_test.cpp).
  auto peft = estimate_json({"--recipe", "qwen3_vl_8b_peft_1gpu_h100_bf16_config"});
  CHECK(peft["estimate"].is_object());
}
