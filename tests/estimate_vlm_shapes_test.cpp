// Shapes of vision-language checkpoints the catalog records for issue 20
// (data/model_dims.csv text_config rows, data/vision_dims.csv vision_config
// rows, every number from two independent copies named in the rows' source
// column): each size's parameters counted by hand from those numbers,
// compared with the total the publisher lists, and what the recipes (Megatron
// Bridge 067f987df03b) turn on.
#include <catch2/catch.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lint/facts/estimate.h"
#include "lint/facts/estimate_vision.h"
#include "tests/dense_model.h"
#include "tests/estimate_json.h"
#include "tests/memory_units.h"

using namespace mblint;
using test::estimate_json;
using test::kGiB;

namespace {

// Qwen3-VL-235B-A22B's language model on one GPU, as the catalog's row reads
// it: Qwen3's MoE decoder (RMSNorm, Q/K head norms, SwiGLU experts, no
// biases, untied output layer).
MemoryModel qwen3_vl_235b_text() {
  MemoryModel m = test::swiglu_decoder({94, 4096, 64, 4, 128, 12288, 151936, false});
  m.qk_norm = true;
  m.experts = 128;
  m.topk = 8;
  m.moe_ffn = 1536;
  m.moe_pattern.assign(94, true);
  return m;
}

}  // namespace

TEST_CASE("vlm shapes: Qwen3-VL 235B-A22B's language model, tower and mergers, counted by hand", "[estimate]") {
  // text_config (alibaba/Pai-Megatron-Patch a098ca5acbde run_mcore_qwen.sh
  // A22B and pytorch/torchtitan 0375bb6789fa qwen3_vl_configs["235B-A22B"]
  // agree): 94 layers, hidden 4096, 64 heads / 4 KV heads of 128, 128
  // experts of 1536, top-8, vocab 151936, untied.
  // Attention: qkv 4096 x 128 x (64 + 2 x 4) = 37,748,736, proj 8192 x 4096
  // = 33,554,432, input norm 4096, Q/K norms 2 x 128.
  int64_t attention = 37'748'736 + 33'554'432 + 4096 + 256;
  CHECK(attention == 71'307'520);
  // MoE: router 4096 x 128, 128 experts x 3 x 4096 x 1536, pre-MLP norm.
  int64_t moe = 4096 * 128 + 128LL * 3 * 4096 * 1536 + 4096;
  CHECK(moe == 2'416'447'488);
  double text = 94 * static_cast<double>(attention + moe) + 2 * 151936.0 * 4096 + 4096;
  // 235,093,634,560: Qwen3-235B-A22B's count, the text model the VL
  // checkpoint is built on (the row qwen3_235b_a22b).
  CHECK(text == 235'093'634'560);
  CHECK(test::bf16_parameters(qwen3_vl_235b_text()) == Approx(text).epsilon(1e-12));
  // vision_config: the 8B's tower (depth 27, 1152, 16 heads, ffn 4304,
  // 2304 positions, 3 deepstack mergers) with out_hidden_size 4096, the same
  // as the 8B's (estimate_vision_test.cpp): 415,891,440 + 160,496,896.
  const VisionDims* d = find_vision_dims("qwen3_vl_235b_a22b");
  REQUIRE(d != nullptr);
  VisionParams p = vision_params(*d);
  CHECK(p.tower == 415'891'440);
  CHECK(p.projector == 160'496'896);
  // 235,670,022,896 in all: the "235B" of Qwen/Qwen3-VL-235B-A22B-Instruct.
  CHECK(text + static_cast<double>(p.tower + p.projector) == 235'670'022'896);
}

TEST_CASE("vlm shapes: the Qwen3-VL 235B-A22B recipes", "[estimate]") {
  // GB300 pretrain (perf_recipes/qwen_vl/gb300/qwen3_vl.py): TP 1, PP 1,
  // EP 64 on 64 GPUs, micro-batch 1, seq 4096; the mock recipe it builds on
  // freezes the language model and the tower and trains the mergers. Per GPU:
  // the dense part of the language model (94 x (71,307,520 + router 524,288
  // + norm 4096) + embeddings and output 2 x 151936 x 4096 + final norm =
  // 7,997,238,784), 1/64 of the experts (94 x 2,415,919,104 / 64 =
  // 3,548,381,184), tower and mergers 576,388,336: 12,122,008,304 bf16
  // weights. Only the mergers' 160,496,896 parameters are trained: bf16
  // gradients (the perf recipes' grad_reduce_in_fp32 off) and Adam state
  // sharded over DP 64.
  auto gb300 = estimate_json({"--recipe", "qwen3_vl_235b_a22b_pretrain_64gpu_gb300_bf16_config"});
  REQUIRE(gb300["estimate"].is_object());
  const auto& e = gb300["estimate"];
  CHECK(e["weights"].get<double>() == Approx(12'122'008'304.0 * 2 / kGiB).margin(0.005));
  CHECK(e["gradients"].get<double>() == Approx(160'496'896.0 * 2 / kGiB).margin(0.005));
  CHECK(e["optimizer"].get<double>() == Approx(160'496'896.0 * 12 / 64 / kGiB).margin(0.005));
  CHECK(e["vision"]["model"] == "Qwen/Qwen3-VL-235B-A22B-Instruct");
  CHECK(e["vision"]["tower_frozen"] == true);
  CHECK(e["vision"]["projector_frozen"] == false);
  CHECK(e["vision"]["patches_per_microbatch"] == 4096 * 1 * 4);
  // Every one of the 14 recipes is estimated now: SFT (the tower trained) and
  // PEFT (LoRA on the tower and mergers too) as well.
  for (const char* recipe : {"qwen3_vl_235b_a22b_sft_32gpu_h100_bf16_config",
                             "qwen3_vl_235b_a22b_peft_16gpu_h100_bf16_config",
                             "qwen3_vl_235b_a22b_pretrain_256gpu_h100_bf16_mock_config"}) {
    INFO(recipe);
    CHECK(estimate_json({"--recipe", recipe})["estimate"].is_object());
  }
}

TEST_CASE("vlm shapes: Pixtral's tower and Mistral 3's projector (Ministral 3's layout), counted by hand",
          "[estimate]") {
  // The layout Bridge's Ministral3Model builds (HF PixtralVisionModel and
  // Mistral3MultiModalProjector; estimate_vision.cpp [PIX]) on a small
  // made-up vision_config, not a catalogued checkpoint's: 2 layers, hidden 64,
  // 4 heads, intermediate 128, patch 14, spatial merge 2, text hidden 96.
  static const VisionDims dims = {"test", "test/pixtral", "pixtral", 2, 64, 4, 16, 128, 14, 1, 3, 0, 2, 96, 0, 0, 0,
                                  "test", 0, 0, 0};
  VisionParams p = vision_params(dims);
  // Per layer q/k/v/o 4 x 64^2 = 16,384, gate/up/down 3 x 64 x 128 = 24,576,
  // two RMSNorms 128: 41,088; Conv2d 3 x 14^2 x 64 = 37,632 (no bias); ln_pre 64.
  CHECK(p.tower == 2 * 41'088 + 37'632 + 64);
  // Norm 64, patch merger 256 x 64, linear_1 64 x 96, linear_2 96 x 96.
  CHECK(p.projector == 64 + 256 * 64 + 64 * 96 + 96 * 96);
  // An HF module: whole on every tensor-parallel rank.
  CHECK(p.tower_split == 0);
  CHECK(p.projector_split == 0);
  // multimodal_projector_bias: the row records linear_1's and linear_2's biases.
  VisionDims biased = dims;
  biased.extra_params = 96 + 96;
  CHECK(vision_params(biased).projector == p.projector + 192);
}

TEST_CASE("vlm shapes: Ministral 3 3B, 8B and 14B, counted by hand against the published counts", "[estimate]") {
  // text_config (the checkpoints' raw config.json in rengzhengcodes/SmolBench
  // a4d1710a298a scripts/arch/arch_configs_raw.json, and Bridge's unit test
  // test_ministral3_provider.py with Ministral3ModelProvider's defaults): 32
  // heads, 8 KV heads of 128, SwiGLU, RMSNorm, no biases, vocab 131072; the
  // 3B ties its output layer. Per layer q 4096 x h, k and v 1024 x h each, o
  // h x 4096, MLP 3 x h x f, two norms.
  struct Size {
    const char* key;
    int64_t layers, hidden, ffn;
    bool tied;
    int64_t layer, text, projector, published;
  };
  // The published counts: 3B 3,849,090,048 (the checkpoint index's distinct
  // parameters), 8B 8,918,026,240 (the BF16 checkpoint's count; the FP8
  // Instruct checkpoint lists 476 more, its 238 layers' weight and
  // activation scales), 14B 13,945,031,680 (the BF16 index total_size / 2;
  // the FP8 Instruct lists 560 more).
  const Size sizes[] = {
      {"ministral3_3b", 26, 3072, 9216, true, 116'398'080, 3'429'006'336, 16'778'240, 3'849'090'048},
      {"ministral3_8b", 34, 4096, 14336, false, 218'112'000, 8'489'553'920, 25'166'848, 8'918'026'240},
      {"ministral3_14b", 40, 5120, 16384, false, 304'097'280, 13'506'073'600, 35'652'608, 13'945'031'680},
  };
  for (const Size& s : sizes) {
    INFO(s.key);
    int64_t h = s.hidden;
    CHECK(h * 4096 + 2 * h * 1024 + 4096 * h + 3 * h * s.ffn + 2 * h == s.layer);
    CHECK(s.layers * s.layer + (s.tied ? 1 : 2) * 131072 * h + h == s.text);
    MemoryModel m = test::swiglu_decoder({s.layers, h, 32, 8, 128, s.ffn, 131072, s.tied});
    CHECK(test::bf16_parameters(m) == Approx(static_cast<double>(s.text)).epsilon(1e-12));
    // vision_config (the same in all three): Pixtral, 24 layers of 1024, 16
    // heads, ffn 4096, patch 14: 24 x 16,779,264 + Conv2d 602,112 + ln_pre
    // 1024 = 403,305,472; the projector (no bias): norm 1024 + patch merger
    // 4096 x 1024 + linear_1 1024 x h + linear_2 h x h.
    const VisionDims* d = find_vision_dims(s.key);
    REQUIRE(d != nullptr);
    VisionParams p = vision_params(*d);
    CHECK(p.tower == 403'305'472);
    CHECK(p.projector == 1024 + 4096 * 1024 + 1024 * h + h * h);
    CHECK(p.projector == s.projector);
    CHECK(s.text + p.tower + p.projector == s.published);
  }
}

TEST_CASE("vlm shapes: the Ministral 3 recipes", "[estimate]") {
  // PEFT (recipes/ministral3/h100/ministral3.py): LoRA freezes the base
  // model, and its targets name no module of the HF Pixtral tower or
  // projector: both are weights only.
  for (const char* recipe : {"ministral3_3b_peft_1gpu_h100_bf16_config", "ministral3_8b_peft_1gpu_h100_bf16_config",
                             "ministral3_14b_peft_2gpu_h100_bf16_config"}) {
    INFO(recipe);
    auto e = estimate_json({"--recipe", recipe});
    REQUIRE(e["estimate"].is_object());
    CHECK(e["estimate"]["vision"]["tower_frozen"] == true);
    CHECK(e["estimate"]["vision"]["projector_frozen"] == true);
  }
  // 3B PEFT on one GPU: bf16 weights of text + tower + projector =
  // 3,849,090,048, and LoRA's rank-32 adapters on the 26 layers (Bridge's
  // default targets): linear_qkv 32 x (3072 + 6144), linear_proj 32 x (4096
  // + 3072), linear_fc1 32 x (3072 + 18432), linear_fc2 32 x (9216 + 3072) =
  // 1,605,632 a layer, 41,746,432 in all, trained: fp32 gradients (the
  // recipe's grad_reduce_in_fp32) and Adam's 12 B a parameter at DP 1.
  auto small = estimate_json({"--recipe", "ministral3_3b_peft_1gpu_h100_bf16_config"});
  const auto& e = small["estimate"];
  CHECK(e["weights"].get<double>() == Approx((3'849'090'048.0 + 41'746'432.0) * 2 / kGiB).margin(0.005));
  CHECK(e["gradients"].get<double>() == Approx(41'746'432.0 * 4 / kGiB).margin(0.005));
  CHECK(e["optimizer"].get<double>() == Approx(41'746'432.0 * 12 / kGiB).margin(0.005));
  // SFT sets every freeze_* false: the trained HF tower and projector are
  // estimated (their saved activations are derived by hand in
  // estimate_vlm_towers_test.cpp).
  auto sft = estimate_json({"--recipe", "ministral3_3b_sft_1gpu_h100_bf16_config"});
  REQUIRE(sft["estimate"].is_object());
  CHECK(sft["estimate"]["vision"]["tower_frozen"] == false);
  CHECK(sft["estimate"]["vision"]["projector_frozen"] == false);
}

TEST_CASE("vlm shapes: GLM-4.5V's language model, Glm4v tower and merger, counted by hand", "[estimate]") {
  // The checkpoint's tensors as a model-information report of zai-org/GLM-4.5V
  // lists them (data/model_dims.csv and data/vision_dims.csv glm_45v cite it;
  // Bridge's GLM45VModelProvider defaults give the same text shape), 18,106
  // tensors, 107,710,933,120 parameters in all.
  // Text: embeddings and the untied output layer 2 x 151552 x 4096; per layer
  // q/k/v with biases (4096 x (12288 + 2 x 1024) + 12288 + 2 x 1024), o
  // 12288 x 4096, two RMSNorms; layer 0 a dense gated MLP 3 x 4096 x 10944;
  // layers 1-45: 128 experts and one shared expert of 3 x 4096 x 1408, the
  // router 128 x 4096 and its fp32 correction bias 128; the final norm.
  int64_t embeddings = 2LL * 151552 * 4096;
  int64_t attention = 4096LL * (12288 + 2 * 1024) + 12288 + 2 * 1024 + 12288LL * 4096 + 2 * 4096;
  CHECK(attention == 109'074'432);
  int64_t dense = 3LL * 4096 * 10944;
  int64_t moe = 129LL * 3 * 4096 * 1408 + 128 * 4096 + 128;
  CHECK(moe == 2'232'418'432);
  int64_t text = embeddings + 46 * attention + dense + 45 * moe + 4096;
  CHECK(text == 106'852'251'264);
  // Tower (estimate_vision.cpp [GLM4V]): 24 blocks of qkv 1536 x 4608, proj
  // 1536 x 1536 (no biases), a gated MLP 1536 -> 4096 (out_hidden_size) ->
  // 1536 and two RMSNorms (28,314,624 each); Conv3d 3 x 2 x 14 x 14 x 1536
  // and its bias; 576 x 1536 positions; post_conv_layernorm, post_layernorm.
  const VisionDims* d = find_vision_dims("glm_45v");
  REQUIRE(d != nullptr);
  VisionParams p = vision_params(*d);
  CHECK(p.tower == 24 * 28'314'624 + 1'806'336 + 1536 + 884'736 + 2 * 1536);
  CHECK(p.tower == 682'246'656);
  // Projector: downsample Conv2d 1536 x 2 x 2 -> 4096 with bias
  // (25,169,920); merger proj 4096 x 4096, LayerNorm 2 x 4096, gate/up/down
  // 3 x 4096 x 10944 (151,265,280).
  CHECK(p.projector == 25'169'920 + 151'265'280);
  // An HF module: nothing is split over tensor parallelism.
  CHECK(p.tower_split == 0);
  CHECK(p.projector_split == 0);
  CHECK(text + p.tower + p.projector == 107'710'933'120);

  // PEFT (recipes/glm_vl/h100/glm_45v.py): LoRA freezes the whole base model
  // (peft/base.py freeze_model) and its targets name no module of the HF
  // tower: weights only, on the first stage; the bound every token of the
  // 8192-token sample an image token of 2 x 2 patches.
  auto peft = estimate_json({"--recipe", "glm_45v_peft_32gpu_h100_bf16_config"});
  REQUIRE(peft["estimate"].is_object());
  const auto& v = peft["estimate"]["vision"];
  CHECK(v["model"] == "zai-org/GLM-4.5V");
  CHECK(v["tower_frozen"] == true);
  CHECK(v["projector_frozen"] == true);
  CHECK(v["patches_per_microbatch"] == 8192 * 4);
  // freeze_vision_model alone leaves the position table, post norms and
  // downsample trainable (GLM45VModel.freeze), so autograd still records
  // through the frozen blocks: declined, saying so.
  auto frozen = estimate_json(
      {"--recipe", "glm_45v_sft_128gpu_h100_bf16_config", "--set", "model.freeze_vision_model=true"});
  CHECK_THAT(frozen["estimate_unavailable"][0].get<std::string>(),
             Catch::Contains("freezes only patch_embed and blocks"));
}

TEST_CASE("vlm shapes: GLM-4.5V SFT's trained Glm4v tower, its saved activations counted by hand", "[estimate]") {
  // What autograd keeps per patch in transformers' Glm4vVisionModel
  // (src/transformers/models/glm4v/modeling_glm4v.py, huggingface/transformers
  // 03eac6f6d2af and the 5.x copy evalstate/transformers 141c7ab87a1a:
  // Glm4vRMSNorm, Glm4vVisionAttention.forward, Glm4VisionMlp,
  // Glm4vVisionBlock.forward, Glm4vVisionModel.forward,
  // Glm4vVisionPatchMerger.forward). Bridge 067f987df03b
  // models/glm_vl/modeling_glm_45v.py:128-132 builds it with _from_config,
  // no attn_implementation, no gradient checkpointing: SDPA without a mask,
  // one call per image, the flash kernel. bf16 (Float16Module) except where
  // a norm works in fp32. Hidden 1536, 12 heads of 128, the block MLP 4096
  // (out_hidden_size) wide, the merger's 10,944 (intermediate_size).
  //   norm1, norm2: fp32 input 4 x 1536 + rstd 4 + bf16 normalized
  //     2 x 1536 = 9,220 each                                      18,440
  //   qkv input 3,072 + qkv output 3 x 3,072 (v a view of it)
  //     + rotated q and k 2 x 3,072 + SDPA output 3,072
  //     + logsumexp 4 x 12 + proj's input (torch.cat's copy) 3,072  24,624
  //   MLP: gate/up input 3,072, SiLU input, SiLU output, up output,
  //     down input 4 x 2 x 4,096                                   35,840
  //                                                                78,904 bytes
  double block = 2 * (4 * 1536 + 4 + 2 * 1536) + (3072 + 3 * 3072 + 2 * 3072 + 3072 + 4 * 12 + 3072) +
                 (3072 + 4 * 2 * 4096);
  CHECK(block == 78'904);
  // The merger per merged token (2 x 2 patches): proj's input 2 x 4,096,
  // post_projection_norm (nn.LayerNorm: bf16 input 8,192 + mean and rstd 8),
  // the GELU's input 8,192, gate/up's input 8,192, then SiLU input, both
  // factors and down's input 4 x 2 x 10,944.
  double merger = 8192 + (8192 + 8) + 8192 + 8192 + 4 * 2 * 10944;
  CHECK(merger == 120'328);
  // Beside the blocks, per patch: the Conv3d's bf16 pixels (3 x 2 x 14 x 14
  // x 2 B = 2,352), post_conv_layernorm 9,220, grid_sample's fp32 grid (2 x
  // 4 B), the shared fp32 cos and sin (2 x 128 x 4 B = 1,024),
  // post_layernorm 9,220, the downsample's input 3,072, a quarter of the
  // merger's 120,328.
  double beside = 2352 + 9220 + 8 + 1024 + 9220 + 3072 + merger / 4;
  CHECK(beside == 54'978);
  double patch = 24 * block + beside;
  CHECK(patch == 1'948'674);
  // glm_45v_sft_128gpu_h100_bf16_config (recipes/glm_vl/h100/glm_45v.py:
  // freeze_* False, micro-batch 1, seq 8192): every token an image token of
  // 2 x 2 patches, 32,768 patches, plus grid_sample's fp32 copy of the 576 x
  // 1536 position table: 63,857,688,576 B = 59.47 GiB per micro-batch.
  double vision = patch * 32'768 + 4.0 * 576 * 1536;
  CHECK(vision == 63'857'688'576.0);
  auto sft = estimate_json({"--recipe", "glm_45v_sft_128gpu_h100_bf16_config"});
  REQUIRE(sft["estimate"].is_object());
  const auto& e = sft["estimate"];
  CHECK(e["vision"]["tower_frozen"] == false);
  CHECK(e["vision"]["projector_frozen"] == false);
  CHECK(e["vision"]["patches_per_microbatch"] == 32'768);
  std::string assumed;
  for (const auto& a : e["assumptions"]) assumed += a.get<std::string>() + "\n";
  CHECK_THAT(assumed, Catch::Contains("keeps 78904 bytes per patch and layer"));
  CHECK_THAT(assumed, Catch::Contains("beside the blocks 54978 bytes per patch"));
  CHECK_THAT(assumed, Catch::Contains("the merger's 120328 bytes per merged token"));
  CHECK_THAT(assumed, Catch::Contains(fmt::format("the vision part {:.2f} GiB per micro-batch", vision / kGiB)));
  // Stage 0 holds one decoder layer (the recipe's layout) and keeps the tower's
  // activations for each of the 4 micro-batches in flight there (PP 8,
  // global batch 64 / DP 16): 237.89 GiB of the stage's activations.
  CHECK(e["microbatches"] == 4);
  CHECK(e["activations"].get<double>() > 4 * vision / kGiB);
  // The trained tower and projector get fp32 gradients, whole on the rank.
  CHECK(e["vision"]["tower_parameters"] == 682'246'656);
  // freeze_vision_projection freezes only the merger; the downsample keeps
  // training: not modelled, declined.
  auto merger_frozen = estimate_json(
      {"--recipe", "glm_45v_sft_128gpu_h100_bf16_config", "--set", "model.freeze_vision_projection=true"});
  CHECK_THAT(merger_frozen["estimate_unavailable"][0].get<std::string>(),
             Catch::Contains("freezes only the merger"));
}

TEST_CASE("vlm shapes: EXAONE 4.5 33B's grouped-query tower and merger, counted by hand", "[estimate]") {
  // vision_config (rengzhengcodes/SmolBench a4d1710a298a arch_configs_raw.json
  // and NVIDIA/TensorRT-LLM 16bd5167cd64 test_modeling_exaone4_5.py agree):
  // depth 28, hidden 2048, 32 heads of 64, 8 KV heads, intermediate 5120,
  // patch 14, temporal patch 2, spatial merge 2, out_hidden_size 5120. Per
  // Megatron-Core layer (estimate_vision.cpp [EX45]) split over TP: qkv
  // 2048 x (32 + 2 x 8) x 64 + its bias 3072, proj 2048 x 2048, the gated
  // fc1 2048 x 2 x 5120 + its bias 10,240, fc2 5120 x 2048 = 41,956,352;
  // whole: two RMSNorm weights and the proj and fc2 biases, 4 x 2048.
  const VisionDims* d = find_vision_dims("exaone45_vl_33b");
  REQUIRE(d != nullptr);
  VisionParams p = vision_params(*d);
  CHECK(p.tower_split == 28 * 41'956'352LL);
  // + the Conv3d without bias, 3 x 2 x 14 x 14 x 2048 = 2,408,448, whole;
  // no position table, no final norm: 1,177,415,680, the technical report's
  // "1.2B-parameter vision encoder".
  CHECK(p.tower == 28 * (41'956'352LL + 8192) + 2'408'448);
  CHECK(p.tower == 1'177'415'680);
  // Merger: RMSNorm 2048 (whole), fc1 8192 x 8192 + bias (split), fc2 8192 x
  // 5120 (split) + its bias 5120 (whole).
  CHECK(p.projector_split == 8192LL * 8192 + 8192 + 8192LL * 5120);
  CHECK(p.projector == p.projector_split + 2048 + 5120);
  CHECK(p.projector == 109'067'264);
  // text_config (the same two copies): 64 layers of 5120, 40 heads, 8 KV
  // heads of 128, intermediate 27392, vocab 153600, untied: per layer q/o 2 x
  // 5120^2, k/v 2 x 5120 x 1024, Q/K norms 2 x 128, the post-attention and
  // post-MLP norms 2 x 5120 (EXAONE 4's post-norm layer), the MLP 3 x 5120 x
  // 27392; embeddings and output 2 x 153600 x 5120; the final norm.
  int64_t layer = 2LL * 5120 * 5120 + 2LL * 5120 * 1024 + 256 + 2 * 5120 + 3LL * 5120 * 27392;
  CHECK(layer == 483'666'176);
  int64_t text = 64 * layer + 2LL * 153600 * 5120 + 5120;
  // 32.5 B (EXAONE 4.0 32B's stack with the 153,600-token vocabulary) +
  // 1.29 B vision + the one MTP layer: the "33B" of the name. No exact
  // published total was found; the two copies agree on every number.
  CHECK(text == 32'527'504'384);

  // One vision layer's saved activations per token at the recipes' TP 4 (no
  // SP, no dropout, flash attention): the qkv norm's input and output (2 x
  // 2h, whole), q, k, v (2 x (2048 + 2 x 8 x 64) / 4 = 1536), the attention
  // output (2h / TP) and its fp32 logsumexp (4 x 32 / TP), the fc1 norm's
  // input and output (2 x 2h), fc1's output (2 x 2 x 5120 / TP), the unfused
  // glu's activation output and linear half (bias_activation_fusion False:
  // 2 x 2 x 5120 / TP) and fc2's input (2 x 5120 / TP): 8192 + 1536 + 1024 +
  // 32 + 8192 + 5120 + 5120 + 2560 = 31,776 B.
  MemoryModel v;
  v.hidden = 2048;
  v.heads = 32;
  v.query_groups = 8;
  v.kv_channels = 64;
  v.ffn = 5120;
  v.swiglu = v.unfused_glu = v.rmsnorm = true;
  v.add_bias = true;
  v.seq = 1;
  v.tp = 4;
  v.hidden_dropout = v.attention_dropout = 0;
  CHECK(layer_activation_bytes(v, false) == Approx(31'776));
  // The SFT recipe (TP 4, PP 4, micro-batch 1, 4096 tokens) trains tower and
  // merger: every token an image token of 2 x 2 patches, 16,384 patches, each
  // keeping 28 x 31,776 (layers) + 2 x 3 x 2 x 14 x 14 = 2,352 (the Conv3d's
  // pixels) + 2 x 2048 x (2 + 2 / 4) = 10,240 (the merger's norm, fc1, GELU
  // and fc2 inputs) = 902,320 B, for each of the 4 micro-batches in flight on
  // stage 0: 55.1 GiB more than with both frozen.
  auto sft = estimate_json({"--recipe", "exaone45_vl_33b_sft_16gpu_h100_bf16_config"});
  auto frozen = estimate_json({"--recipe", "exaone45_vl_33b_sft_16gpu_h100_bf16_config", "--set",
                               "model.freeze_vision_model=true", "--set", "model.freeze_vision_projection=true"});
  REQUIRE(sft["estimate"].is_object());
  REQUIRE(frozen["estimate"].is_object());
  CHECK(sft["estimate"]["vision"]["patches_per_microbatch"] == 4096 * 4);
  CHECK(sft["estimate"]["vision"]["tower_frozen"] == false);
  double diff = sft["estimate"]["activations"].get<double>() - frozen["estimate"]["activations"].get<double>();
  CHECK(diff == Approx(4.0 * 16384 * 902'320 / kGiB).margin(0.011));
  // PEFT (TP 4): LoRA's targets also wrap the tower's and the merger's
  // Megatron-Core linears (rank 32, the TP side divided): per layer qkv
  // 32 x (2048 + 3072), proj 32 x (2048 + 2048), fc1 32 x (2048 + 10240),
  // fc2 32 x (5120 + 2048), over 4 = 229,376; the merger's fc1 32 x 16384 / 4
  // and fc2 32 x 13312 / 4: 28 x 229,376 + 131,072 + 106,496 = 6,660,096.
  auto peft = estimate_json({"--recipe", "exaone45_vl_33b_peft_4gpu_h100_bf16_config"});
  REQUIRE(peft["estimate"].is_object());
  CHECK(peft["estimate"]["vision"]["tower_frozen"] == true);
  std::string assumed;
  for (const auto& line : peft["estimate"]["assumptions"]) assumed += line.get<std::string>();
  CHECK_THAT(assumed, Catch::Contains("LoRA adapters on its layers and mergers too: 6.7 M per GPU"));
}
