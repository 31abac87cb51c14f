// LoRA on a gated delta net model (the Qwen3.5 PEFT recipes), derived by
// hand from Megatron Bridge 067f987df03b: peft/lora.py (LoRA's default
// target_modules linear_qkv, linear_proj, linear_fc1, linear_fc2; rank 32),
// peft/module_matcher.py (a module matches by its own name), peft/utils.py
// (get_adapter_attributes_from_linear: the whole layer's in and out
// features; ParallelLinearAdapter: linear_in and linear_out both split over
// TP, r x (in + out) / TP per rank; linear_out keeps linear_in's r-wide
// output for its weight gradient), on Megatron-LM 2a75ac12c54b's GatedDeltaNet
// (experimental_attention_variant_module_specs.py: in_proj and out_proj,
// which the default targets do not name) and TransformerEngine e7c550c5
// (module/linear.py, module/layernorm_linear.py: a frozen weight's GEMM
// keeps no input). The recipes: recipes/qwen_vl/h100/qwen35_vl.py
// (default_peft_config("lora"), mtp_num_layers 1).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "lint/facts/estimate.h"
#include "lint/facts/estimate_linear_attention.h"
#include "lint/facts/estimate_peft.h"
#include "tests/estimate_json.h"
#include "tests/memory_units.h"
#include "tests/qwen35_model.h"

using namespace mblint;
using test::estimate_json;
using test::kGiB;

namespace {

// Qwen3.5 9B's language model as data/model_dims.csv records it (row
// qwen35_vl_9b: 32 layers, hidden 4096, 16 heads, 4 groups of 256, dense
// SwiGLU 12288, GDN on three layers of four with 16 key heads and 32 value
// heads of 128, conv 4, gated attention), one GPU, seq 4096, micro-batch 1.
MemoryModel qwen35_9b() { return test::qwen35({32, 4096, 16, 4, 12288, 32, false}); }

// Per layer at TP 1, rank 32:
//   gated attention: linear_qkv 4096 -> 256 x (2 x 16 + 2 x 4) = 10,240:
//     32 x 14,336 = 458,752; linear_proj 4096 -> 4096: 262,144; 720,896
//   GDN: no adapter (in_proj and out_proj are not targets)
//   MLP: linear_fc1 4096 -> 24,576: 917,504; linear_fc2 12,288 -> 4096:
//     524,288; 1,441,792
// Decoder: 8 x 720,896 + 32 x 1,441,792 = 51,904,512; the MTP layer (gated
// attention + MLP): 2,162,688 more.
constexpr double kAttentionAdapters = 720896, kMlpAdapters = 1441792;

}  // namespace

TEST_CASE("estimate: LoRA's default targets on a gated delta net model, by hand (Qwen3.5 9B)", "[estimate]") {
  MemoryModel m = qwen35_9b();
  m.lora_rank = 32;
  double decoder = 8 * kAttentionAdapters + 32 * kMlpAdapters;
  CHECK(decoder == 51904512.0);
  MemoryEstimate e = estimate_model(m);
  // Only the adapters train: fp32 main gradients and Adam (fp32 master + two moments).
  CHECK(e.gradients * kGiB == Approx(4 * decoder).epsilon(1e-12));
  CHECK(e.optimizer * kGiB == Approx(12 * decoder).epsilon(1e-12));
  // The MTP layer's linears are matched by name too.
  MemoryModel mtp = m;
  mtp.mtp_layers = 1;
  mtp.stage_mtp = {1};
  CHECK(estimate_model(mtp).gradients * kGiB == Approx(4 * (decoder + kAttentionAdapters + kMlpAdapters)).epsilon(1e-12));
  // TP 2 splits both weights of every adapter: half of each.
  MemoryModel tp2 = m;
  tp2.tp = 2;
  CHECK(estimate_model(tp2).gradients * kGiB == Approx(4 * decoder / 2).epsilon(1e-12));
  // Targeting the GDN projections adds in_proj 4096 -> 2 x 2048 + 2 x 4096 +
  // 2 x 32 = 12,352 (32 x 16,448 = 526,336) and out_proj 4096 -> 4096
  // (262,144) on each of the 24 GDN layers.
  MemoryModel all = m;
  all.lora_targets.in_proj = true;
  all.lora_targets.out_proj = true;
  CHECK(estimate_model(all).gradients * kGiB == Approx(4 * (decoder + 24 * 788480.0)).epsilon(1e-12));
}

TEST_CASE("estimate: what LoRA changes in a gated delta net model's saved activations", "[estimate]") {
  MemoryModel m = qwen35_9b();
  // A GDN layer keeps 127,552 B per token when trained (the terms of
  // estimate_linear_attention_test.cpp at h 4096, qk 2048, v 4096): norm and
  // GEMM inputs 8,192 each, in_proj output 24,704, conv input 16,384, l2norm
  // 8,320, delta rule 24,576 + 192 + 4,096, z 8,192, gated norm 16,512,
  // out_proj input 8,192.
  CHECK(gdn_layer_bytes(m) == 127552.0 * 4096);
  // Frozen and without an adapter, in_proj and out_proj keep no GEMM input:
  // 8,192 + 8,192 fewer.
  m.lora_rank = 32;
  CHECK(gdn_layer_bytes(m) == (127552.0 - 16384) * 4096);
  // Every adapted linear keeps linear_in's output for linear_out: r = 32
  // bf16 values a token. Per token: 24 GDN layers -16,384 each; 8 attention
  // layers and 32 MLPs with two adapters each, +128 each.
  MemoryModel trained = qwen35_9b();
  double per_token = 24 * -16384.0 + (8 + 32) * 128.0;
  CHECK((estimate_model(m).activations - estimate_model(trained).activations) * kGiB ==
        Approx(per_token * 4096).epsilon(1e-9));
  // The adapters' intermediates alone, for one attention layer and one MLP.
  LayerKinds one{0, 1, 1, 0};
  auto terms = gdn_model_lora_terms(m, one, 4096, 1);
  double sum = 0;
  for (const auto& [what, bytes] : terms) sum += bytes;
  CHECK(sum == 4 * 2 * 32 * 4096.0);
  // With sequence parallelism over TP 2, linear_qkv's and linear_fc1's
  // adapters keep their input gathered: 2 x 4096 B a token each, more.
  MemoryModel sp = m;
  sp.tp = 2;
  sp.sp = true;
  sum = 0;
  for (const auto& [what, bytes] : gdn_model_lora_terms(sp, one, 4096, 0.5)) sum += bytes;
  CHECK(sum == 4 * 2 * 32 * 4096.0 + 2 * 2 * 4096.0 * 4096);
}

TEST_CASE("estimate: target_modules of LoRA on a gated delta net model", "[estimate]") {
  // The Qwen3.5 9B PEFT recipe: Bridge's default targets; the language
  // model's adapters (decoder and MTP layer, 54,067,200) and the Qwen3-VL
  // tower's and merger's (estimate_vision.cpp: 27 x 570,368 + 573,440 =
  // 15,973,376) train.
  auto peft = estimate_json({"--recipe", "qwen35_vl_9b_peft_1gpu_h100_bf16_config"});
  REQUIRE(peft["estimate"].is_object());
  // (the JSON rounds GiB to two decimals)
  CHECK(peft["estimate"]["gradients"].get<double>() == Approx(4 * (54067200.0 + 15973376.0) / kGiB).margin(0.005));
  // in_proj and out_proj as targets add 24 x 788,480 adapters.
  auto all = estimate_json({"--recipe", "qwen35_vl_9b_peft_1gpu_h100_bf16_config", "--set",
                            "peft.target_modules=[linear_qkv,linear_proj,linear_fc1,linear_fc2,in_proj,out_proj]"});
  REQUIRE(all["estimate"].is_object());
  CHECK(all["estimate"]["gradients"].get<double>() ==
        Approx(4 * (54067200.0 + 24 * 788480.0 + 15973376.0) / kGiB).margin(0.005));
  // A name the estimate does not model is declined, saying which.
  auto other = estimate_json({"--recipe", "qwen35_vl_9b_peft_1gpu_h100_bf16_config", "--set",
                              "peft.target_modules=[linear_qkv,conv1d]"});
  CHECK(other["estimate"].is_null());
  CHECK(other["estimate_unavailable"].dump().find("'conv1d'") != std::string::npos);
}
