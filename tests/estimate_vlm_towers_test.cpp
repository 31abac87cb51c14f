// Vision towers of the vision-language recipes beyond Gemma 4 and Qwen3-VL
// (lint/facts/estimate_vision.cpp): each family's tower and projector counted
// by hand from its checkpoint's vision_config (sources in
// data/vision_dims.csv), checked against the count the publisher lists, and
// what the recipes' estimates say about it.
#include <string>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "lint/facts/estimate_vision.h"
#include "tests/estimate_json.h"

using namespace mblint;
using test::estimate_json;

namespace {

std::string declined_because(const nlohmann::json& doc) {
  std::string why;
  for (const auto& line : doc.value("estimate_unavailable", nlohmann::json::array())) why += line.get<std::string>();
  return why;
}

}  // namespace

TEST_CASE("vision: Qwen2.5-VL's tower and merger, counted by hand from its vision_config", "[estimate]") {
  // Qwen2.5-VL vision_config (NVIDIA/NeMo Qwen25VLVisionConfig and
  // alibaba/Pai-Megatron-Patch get_vision_model_config agree): depth 32,
  // hidden 1280, 16 heads, intermediate 3420 (3B, 7B) or 3456 (32B, 72B),
  // patch 14 x 14 x 2 frames x 3 channels, spatial merge 2. HF's
  // Qwen2_5_VisionTransformerPretrainedModel: Conv3d without bias; per block
  // RMSNorm norm1/norm2, qkv and proj with bias, gate/up/down with bias; the
  // merger ln_q (RMSNorm) + 5120 -> 5120 -> text hidden, both biased.
  int64_t h = 1280, merged = 4 * h;
  auto block = [&](int64_t f) { return (3 * h * h + 3 * h) + (h * h + h) + 2 * (h * f + f) + (f * h + h) + 2 * h; };
  CHECK(block(3420) == 19'702'200);
  CHECK(block(3456) == 19'840'512);
  int64_t patch = 3 * 2 * 14 * 14 * h;
  auto merger = [&](int64_t text) { return h + (merged * merged + merged) + (merged * text + text); };

  const VisionDims* seven = find_vision_dims("qwen25_vl_7b");
  REQUIRE(seven != nullptr);
  CHECK(std::string(seven->arch) == "qwen25_vl");
  VisionParams p7 = vision_params(*seven);
  CHECK(p7.tower == 32 * block(3420) + patch);
  CHECK(p7.tower == 631'975'680);
  CHECK(p7.projector == merger(3584));
  CHECK(p7.projector == 44'574'464);
  CHECK(p7.tower_split == 0);  // an HF module: whole on every tensor-parallel rank
  CHECK(p7.projector_split == 0);
  // 676,550,144 vision parameters
  // with Qwen2.5-7B's 7,615,616,512 make 8,292,166,656: the 8.29 B listed
  // for Qwen/Qwen2.5-VL-7B-Instruct.
  CHECK(p7.tower + p7.projector == 676'550'144);

  VisionParams p3 = vision_params(*find_vision_dims("qwen25_vl_3b"));
  CHECK(p3.tower == 631'975'680);
  CHECK(p3.projector == merger(2048));
  // + Qwen2.5-3B's 3,085,938,688 = 3,754,622,976: the listed 3.75 B.
  CHECK(p3.tower + p3.projector == 668'684'288);

  VisionParams p72 = vision_params(*find_vision_dims("qwen25_vl_72b"));
  CHECK(p72.tower == 32 * block(3456) + patch);
  CHECK(p72.projector == merger(8192));
  // + Qwen2.5-72B's 72,706,203,648 = 73,410,777,344: the listed 73.4 B.
  CHECK(p72.tower + p72.projector == 704'573'696);
  VisionParams p32 = vision_params(*find_vision_dims("qwen25_vl_32b"));
  CHECK(p32.tower == p72.tower);
  CHECK(p32.projector == merger(5120));
}

TEST_CASE("vision: Qwen2.5-VL recipes: PEFT freezes the HF tower, SFT's trained tower is declined", "[estimate]") {
  // qwen25_vl.py (Bridge 067f987df03b): the PEFT recipes keep every freeze_*
  // False, but PEFT freezes the base model and LoRA's targets (linear_qkv,
  // linear_proj, linear_fc1, linear_fc2) name no module of the HF tower.
  auto peft = estimate_json({"--recipe", "qwen25_vl_7b_peft_1gpu_h100_bf16_config"});
  REQUIRE(peft["estimate"].is_object());
  const auto& v = peft["estimate"]["vision"];
  CHECK(v["model"] == "Qwen/Qwen2.5-VL-7B-Instruct");
  CHECK(v["stage"] == 0);
  CHECK(v["tower_parameters"] == 631'975'680);
  CHECK(v["projector_parameters"] == 44'574'464);
  CHECK(v["tower_frozen"] == true);
  CHECK(v["projector_frozen"] == true);
  // The SFT recipes train the tower, an HF module whose saved activations
  // are not modelled: declined, naming it.
  auto sft = estimate_json({"--recipe", "qwen25_vl_7b_sft_2gpu_h100_bf16_config"});
  CHECK(sft["estimate"].is_null());
  CHECK(declined_because(sft).find("trainable vision tower of Qwen/Qwen2.5-VL-7B-Instruct") != std::string::npos);
  // A frozen tower and a trained merger: the merger keeps ln_q's normalized
  // input, fc1's, the GELU's and fc2's inputs: 4 x 1280 bf16 values per patch
  // (its input needs no gradient, so ln_q's fp32 internals are not saved).
  // SFT at micro-batch 2 x 4096 tokens x 2^2: 32,768 patches, 0.3125 GiB.
  auto frozen = estimate_json({"--recipe", "qwen25_vl_7b_sft_2gpu_h100_bf16_config", "--set",
                               "model.freeze_vision_model=true"});
  REQUIRE(frozen["estimate"].is_object());
  CHECK(frozen["estimate"]["vision"]["patches_per_microbatch"] == 32'768);
  CHECK(frozen["estimate"]["vision"]["projector_frozen"] == false);
  auto both = estimate_json({"--recipe", "qwen25_vl_7b_sft_2gpu_h100_bf16_config", "--set",
                             "model.freeze_vision_model=true", "--set", "model.freeze_vision_projection=true"});
  REQUIRE(both["estimate"].is_object());
  double merger_gib = 4.0 * 2.0 * 32'768 * 1280 / (1024.0 * 1024.0 * 1024.0);
  CHECK(merger_gib == Approx(0.3125));
  CHECK(frozen["estimate"]["activations"].get<double>() - both["estimate"]["activations"].get<double>() ==
        Approx(merger_gib).margin(0.01));
}

TEST_CASE("vision: Gemma 3's SigLIP tower and projector, counted by hand from its vision_config", "[estimate]") {
  // SigLIP of the Gemma 3 VL checkpoints (google-deepmind/gemma ViTModel and
  // NeMo SigLIPViT400M_14_384_Config agree): 27 layers, width 1152, MLP
  // 4304, 16 heads, patch 14 over 896 x 896 images: a 64 x 64 learned
  // position table. q/k/v/out and fc1/fc2 with biases, two LayerNorms per
  // layer, a Conv patch embedding with bias, the final LayerNorm; no pooling
  // head (Bridge sets vision_use_head False).
  int64_t h = 1152, f = 4304;
  int64_t layer = 4 * (h * h + h) + (h * f + f) + (f * h + h) + 2 * 2 * h;
  CHECK(layer == 15'239'504);
  int64_t tower = 27 * layer + (3 * 14 * 14 * h + h) + 64 * 64 * h + 2 * h;
  CHECK(tower == 416'866'032);
  const VisionDims* d = find_vision_dims("gemma3_vl_4b");
  REQUIRE(d != nullptr);
  VisionParams p = vision_params(*d);
  CHECK(p.tower == tower);
  CHECK(p.tower_split == 0);  // an HF module: whole on every tensor-parallel rank
  // Bridge's Gemma3VLMultimodalProjector: RMSNorm over 1152 and a
  // column-parallel 1152 -> 2560 projection without bias.
  CHECK(p.projector == 1152 + 1152 * 2560);
  CHECK(p.projector_split == 1152 * 2560);
  // With the 4B's text stack (34 layers of 94,382,592 parameters, a tied
  // 262,208 x 2560 table, the final norm: 3,880,263,168): 4,300,079,472, the
  // 4.3 B listed for google/gemma-3-4b-it. The 12B and 27B give 12,187,325,040
  // and 27,432,406,640 the same way (12.2 B and 27.4 B listed).
  CHECK(3'880'263'168 + p.tower + p.projector == 4'300'079'472);
  CHECK(vision_params(*find_vision_dims("gemma3_vl_27b")).projector == 1152 + 1152 * 5376);
}

TEST_CASE("vision: Gemma 3 VL recipes: PEFT freezes the tower, the image bound, SFT declined", "[estimate]") {
  // gemma3_vl.py (Bridge 067f987df03b): PEFT at micro-batch 2 x 4096 tokens;
  // each image places 256 soft tokens, avg-pooled 4 x 4 from 64 x 64
  // patches: at most 2 x 16 = 32 images, 32 x 256 x 16 = 131,072 patches.
  auto peft = estimate_json({"--recipe", "gemma3_vl_4b_peft_1gpu_h100_bf16_config"});
  REQUIRE(peft["estimate"].is_object());
  const auto& v = peft["estimate"]["vision"];
  CHECK(v["model"] == "google/gemma-3-4b-it");
  CHECK(v["tower_parameters"] == 416'866'032);
  CHECK(v["projector_parameters"] == 2'950'272);
  CHECK(v["tower_frozen"] == true);
  CHECK(v["projector_frozen"] == true);
  CHECK(v["images_per_microbatch"] == 32);
  CHECK(v["patches_per_microbatch"] == 131'072);
  auto sft = estimate_json({"--recipe", "gemma3_vl_4b_sft_1gpu_h100_bf16_config"});
  CHECK(sft["estimate"].is_null());
  CHECK(declined_because(sft).find("trainable vision tower of google/gemma-3-4b-it") != std::string::npos);
  // A trained projector behind a frozen tower keeps, per image token, the
  // TENorm's bf16 input and fp32 rstd and the projection's bf16 input:
  // 32 x 256 x (4 x 1152 + 4) bytes = 0.0352 GiB.
  auto trained = estimate_json({"--recipe", "gemma3_vl_4b_sft_1gpu_h100_bf16_config", "--set",
                                "model.freeze_vision_model=true"});
  auto frozen = estimate_json({"--recipe", "gemma3_vl_4b_sft_1gpu_h100_bf16_config", "--set",
                               "model.freeze_vision_model=true", "--set", "model.freeze_vision_projection=true"});
  REQUIRE(trained["estimate"].is_object());
  REQUIRE(frozen["estimate"].is_object());
  double projector_gib = 32.0 * 256 * (4 * 1152 + 4) / (1024.0 * 1024.0 * 1024.0);
  CHECK(trained["estimate"]["activations"].get<double>() - frozen["estimate"]["activations"].get<double>() ==
        Approx(projector_gib).margin(0.01));
}

TEST_CASE("vision: LoRA on Qwen3-VL also adapts the tower's layers and mergers", "[estimate]") {
  // Bridge's LoRA wraps every module named linear_qkv, linear_proj,
  // linear_fc1 or linear_fc2 (peft/module_matcher.py): in Qwen3-VL also the
  // 27 Megatron-Core vision layers and the 4 patch mergers. Rank 32, TP 1:
  // r x (in + out) per linear.
  int64_t r = 32, h = 1152, f = 4304, merged = 4 * h;
  int64_t tower = 27 * r * ((h + 3 * h) + (h + h) + (h + f) + (f + h));
  int64_t mergers = 4 * r * ((merged + merged) + (merged + 4096));
  CHECK(tower + mergers == 17'693'696);
  // Qwen3-8B's own adapters: 36 layers x 32 x (qkv 4096 + 6144, proj 4096 +
  // 4096, fc1 4096 + 2 x 12288, fc2 12288 + 4096) = 73,138,176. All adapters
  // keep fp32 gradients; nothing else does.
  int64_t language = 36 * r * ((4096 + 6144) + (4096 + 4096) + (4096 + 2 * 12288) + (12288 + 4096));
  CHECK(language == 73'138'176);
  auto peft = estimate_json({"--recipe", "qwen3_vl_8b_peft_1gpu_h100_bf16_config"});
  REQUIRE(peft["estimate"].is_object());
  CHECK(peft["estimate"]["gradients"].get<double>() ==
        Approx((language + tower + mergers) * 4.0 / (1024.0 * 1024.0 * 1024.0)).margin(0.005));
  CHECK(peft["estimate"]["vision"]["tower_frozen"] == true);
  CHECK(peft["estimate"]["vision"]["projector_frozen"] == true);
  // The adapters need the tower's activations over at most 4096 x 2 x 2^2
  // patches (every token an image token), counted as a trained tower's.
  CHECK(peft["estimate"]["vision"]["patches_per_microbatch"] == 32'768);
}
