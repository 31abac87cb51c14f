// Vision towers of the vision-language recipes beyond Gemma 4 and Qwen3-VL
// (lint/facts/estimate_vision.cpp): each family's tower and projector counted
// by hand from its checkpoint's vision_config (sources in
// data/vision_dims.csv), checked against the count the publisher lists, and
// what the recipes' estimates say about it.
#include <string>
#include <utility>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "lint/facts/estimate_vision.h"
#include "tests/estimate_json.h"
#include "tests/memory_units.h"

using namespace mblint;
using test::estimate_json;
using test::kGiB;

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
  // The SFT recipes train the tower: estimated (the last test case of this
  // file derives its saved activations).
  auto sft = estimate_json({"--recipe", "qwen25_vl_7b_sft_2gpu_h100_bf16_config"});
  CHECK(sft["estimate"].is_object());
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

TEST_CASE("vision: Gemma 3 VL recipes: PEFT freezes the tower, the image bound", "[estimate]") {
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
  CHECK(sft["estimate"].is_object());  // the trained tower: the last test case of this file
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

TEST_CASE("vision: the trained Hugging Face towers of the Qwen2.5-VL and Gemma 3 VL SFT recipes", "[estimate]") {
  // What autograd keeps per patch (transformers modeling_qwen2_5_vl.py and
  // modeling_siglip.py; Bridge 067f987df03b sets no attn_implementation and
  // no gradient checkpointing: SDPA's flash kernel, which keeps q, k, v, its
  // output and an fp32 logsumexp per head). All bf16 (Float16Module) except
  // where a norm works in fp32.
  //
  // Qwen2.5-VL (hidden 1280, MLP 3420 for 3B and 7B, 16 heads of 80), one
  // block per patch:
  //   norm1, norm2 (Qwen2RMSNorm): fp32 input 4 x 1280 + fp32 rstd 4 +
  //     bf16 normalized 2 x 1280 = 7,684 each            15,368
  //   qkv input 2,560 + qkv output 3 x 2,560 (v is a view of it)
  //     + rotary q and k 2 x 2,560 + SDPA output 2,560 + logsumexp
  //     4 x 16 + proj input 2,560                        20,544
  //   MLP: gate/up input 2,560, SiLU input, SiLU output, up output,
  //     down input 4 x 2 x 3,420                         29,920
  //                                                      65,832 bytes
  double qwen_block = 2 * (4 * 1280 + 4 + 2 * 1280) + (2560 + 3 * 2560 + 2 * 2560 + 2560 + 4 * 16 + 2560) +
                      (2560 + 4 * 2 * 3420);
  CHECK(qwen_block == 65'832);
  // The 32 blocks, the Conv3d's bf16 pixels (3 x 2 x 14 x 14 x 2 B = 2,352),
  // the shared fp32 cos and sin (2 x 80 x 4 B = 640), the trained merger:
  // ln_q 7,684 and the inputs of fc1, the GELU and fc2 (3 x 2,560).
  double qwen_patch = 32 * qwen_block + 2352 + 640 + (7684 + 3 * 2560);
  CHECK(qwen_patch == 2'124'980);
  // qwen25_vl_7b_sft_2gpu_h100_bf16_config: micro-batch 2 x 4096 tokens,
  // every token an image token of 2 x 2 patches: 32,768 patches, whole on
  // each of the TP 2 ranks: 69,631,344,640 B = 64.85 GiB per micro-batch.
  CHECK(qwen_patch * 32'768 / kGiB == Approx(64.849).margin(0.001));
  auto qwen = estimate_json({"--recipe", "qwen25_vl_7b_sft_2gpu_h100_bf16_config"});
  REQUIRE(qwen["estimate"].is_object());
  CHECK(qwen["estimate"]["vision"]["tower_frozen"] == false);
  CHECK(qwen["estimate"]["vision"]["patches_per_microbatch"] == 32'768);
  // Against the same job with the tower frozen, where only the merger's
  // 4 x 2,560 bytes per patch were kept.
  auto qwen_frozen = estimate_json({"--recipe", "qwen25_vl_7b_sft_2gpu_h100_bf16_config", "--set",
                                    "model.freeze_vision_model=true"});
  REQUIRE(qwen_frozen["estimate"].is_object());
  CHECK(qwen["estimate"]["activations"].get<double>() - qwen_frozen["estimate"]["activations"].get<double>() ==
        Approx((qwen_patch - 4 * 2560) * 32'768 / kGiB).margin(0.02));
  // The trained tower's 631,975,680 + merger 44,574,464 parameters get fp32
  // gradients too, whole on the rank: 676,550,144 x 4 B more than with only
  // the merger trained.
  CHECK(qwen["estimate"]["gradients"].get<double>() - qwen_frozen["estimate"]["gradients"].get<double>() ==
        Approx(631'975'680 * 4.0 / kGiB).margin(0.02));

  // Gemma 3's SigLIP (hidden 1152, MLP 4304, 16 heads of 72), one layer per
  // patch:
  //   layer_norm1, layer_norm2: bf16 input 2,304 + fp32 mean and rstd 8   4,624
  //   q/k/v input 2,304 + q, k, v 3 x 2,304 + SDPA output 2,304
  //     + logsumexp 64 + out_proj input 2,304                             16,192
  //   fc1 input 2,304, GELU-tanh input and fc2 input 2 x 2 x 4,304        19,520
  //                                                                       38,032 bytes
  double siglip_layer = 2 * (2304 + 8) + (2304 + 3 * 2304 + 2304 + 64 + 2304) + (2304 + 4 * 4304);
  CHECK(siglip_layer == 38'032);
  // 27 layers, the Conv's bf16 pixels (3 x 14 x 14 x 2 B = 1,176), the
  // final LayerNorm 2,312, the projector's avg-pool input 2,304.
  double siglip_patch = 27 * siglip_layer + 1176 + 2312 + 2304;
  CHECK(siglip_patch == 1'032'656);
  // gemma3_vl_4b_sft_1gpu_h100_bf16_config: 32 images of 4096 patches
  // (131,072): 135,352,287,232 B = 126.06 GiB per micro-batch; with the
  // projector's 8,192 tokens x 4,612 B and the language model's two
  // attention biases (2 x 2 B x 2 x 4096^2), 126.22 GiB of vision
  // activations.
  CHECK(siglip_patch * 131'072 / kGiB == Approx(126.057).margin(0.001));
  auto gemma = estimate_json({"--recipe", "gemma3_vl_4b_sft_1gpu_h100_bf16_config"});
  REQUIRE(gemma["estimate"].is_object());
  auto gemma_frozen = estimate_json({"--recipe", "gemma3_vl_4b_sft_1gpu_h100_bf16_config", "--set",
                                     "model.freeze_vision_model=true"});
  REQUIRE(gemma_frozen["estimate"].is_object());
  CHECK(gemma["estimate"]["activations"].get<double>() - gemma_frozen["estimate"]["activations"].get<double>() ==
        Approx(siglip_patch * 131'072 / kGiB).margin(0.02));
  // The recipe on one H100 needs far more than the GPU: the bound takes
  // every one of the 4096 tokens of each sample as an image token (16
  // images a sample), deliberately high; the estimate says so.
  CHECK(gemma["estimate"]["total"].get<double>() > gemma["estimate"]["capacity"].get<double>());
  // A frozen projector behind the trained tower keeps its norm's input and
  // rstd per image token (the gradient flows through it): 8,192 x 2,308 B
  // instead of the trained projector's 4,612.
  auto projector_frozen = estimate_json({"--recipe", "gemma3_vl_4b_sft_1gpu_h100_bf16_config", "--set",
                                         "model.freeze_vision_projection=true"});
  REQUIRE(projector_frozen["estimate"].is_object());
  CHECK(gemma["estimate"]["activations"].get<double>() - projector_frozen["estimate"]["activations"].get<double>() ==
        Approx(8192.0 * (4612 - 2308) / kGiB).margin(0.011));
  // Gemma 4's trained HF tower is still declined.
  auto gemma4 = estimate_json({"--recipe", "gemma4_vl_26b_sft_8gpu_h100_bf16_config", "--set",
                               "model.freeze_vision_model=false"});
  CHECK(gemma4["estimate"].is_null());
  CHECK(declined_because(gemma4).find("trainable vision tower of google/gemma-4-26B-A4B-it") != std::string::npos);
}

TEST_CASE("vision: the trained Pixtral tower and Mistral 3 projector of the Ministral 3 SFT recipes", "[estimate]") {
  // What autograd keeps per patch, read from transformers
  // models/pixtral/modeling_pixtral.py (0233e509531a) and
  // models/mistral3/modeling_mistral3.py (00dcc6dda6f6); Bridge 067f987df03b
  // (models/ministral3/modeling_ministral3.py) builds both with
  // AutoModel.from_config / the projector class, sets no attn_implementation
  // and no gradient checkpointing: SDPA with the block-diagonal mask
  // PixtralVisionModel builds. PyTorch saves a mul operand only when the
  // other one needs a gradient (gen_variable_type.py guard_for): the rotary
  // cos and sin need none, so q_proj's and k_proj's outputs are not kept,
  // only the rotated q and k. All bf16 (Float16Module) except the norms'
  // fp32 internals.
  //
  // Pixtral (hidden 1024, MLP 4096, 16 heads of 64), one layer per patch:
  //   attention_norm, ffn_norm (Llama's RMSNorm): fp32 input 4 x 1024 +
  //     fp32 rstd 4 + bf16 normalized 2 x 1024 = 6,148 each       12,296
  //   q/k/v input 2,048 + rotated q and k 2 x 2,048 + v 2,048
  //     + the kernel's output 2,048 (written as batch, patches, heads,
  //     head_dim: o_proj's input after transformers' transpose(1, 2)
  //     .contiguous(), which copies nothing) + fp32 logsumexp 4 x 16  10,304
  //   MLP: gate/up input 2,048, SiLU input, SiLU output, up output,
  //     down input 4 x 2 x 4,096                                    34,816
  //                                                                 57,416 bytes
  double layer = 2 * (4 * 1024 + 4 + 2 * 1024) + (2048 + 2 * 2048 + 2048 + 2048 + 4 * 16) + (2048 + 4 * 2 * 4096);
  CHECK(layer == 57'416);
  // The 24 layers, the Conv2d's bf16 pixels (3 x 14 x 14 x 2 B = 1,176),
  // ln_pre 6,148, the shared bf16 cos and sin (2 x 64 x 2 B = 256).
  double tower = 24 * layer + 1176 + 6148 + 256;
  CHECK(tower == 1'385'564);
  // Mistral 3's projector, trained, for the 3B (text hidden 3072): its norm
  // 6,148 (the tower's output needs a gradient), the patch merger's input
  // (the unfolded 2 x 2 x 1024 rows: 2,048 per patch), and per image token
  // of 4 patches linear_1's input 2 x 1024, the GELU's and linear_2's
  // inputs 2 x 2 x 3072: 14,336 / 4 = 3,584 per patch.
  double projector = 6148 + 2048 + (2 * 1024 + 4 * 3072) / 4.0;
  CHECK(projector == 11'780);
  // ministral3_3b_sft_1gpu_h100_bf16_config: micro-batch 1 x 4096 tokens,
  // every token an image token of 2 x 2 patches: 16,384 patches, one
  // sequence (all images concatenated). The mask over them: 16,384 x 16,384
  // bf16, which SDPA's memory-efficient kernel pads into a new tensor in
  // each layer when the count is not a multiple of 8 (attention.cpp
  // preprocess_mask; the kernel keeps it for its backward, derivatives.yaml):
  // at most 24 x 16,384 x 16,384 x 2 B = 12 GiB, counted (erring high;
  // cuDNN's kernel keeps one copy, 0.5 GiB).
  double mask = 24.0 * 16'384 * 16'384 * 2;
  CHECK(mask / kGiB == 12.0);
  double vision = (tower + projector) * 16'384 + mask;
  CHECK(vision / kGiB == Approx(33.322).margin(0.001));
  auto sft = estimate_json({"--recipe", "ministral3_3b_sft_1gpu_h100_bf16_config"});
  REQUIRE(sft["estimate"].is_object());
  CHECK(sft["estimate"]["vision"]["patches_per_microbatch"] == 16'384);
  auto frozen = estimate_json({"--recipe", "ministral3_3b_sft_1gpu_h100_bf16_config", "--set",
                               "model.freeze_vision_model=true", "--set", "model.freeze_vision_projection=true"});
  REQUIRE(frozen["estimate"].is_object());
  CHECK(sft["estimate"]["activations"].get<double>() - frozen["estimate"]["activations"].get<double>() ==
        Approx(vision / kGiB).margin(0.01));
  // A frozen tower and a trained projector: no graph through the tower, no
  // mask; the projector's norm keeps only its normalized bf16 value for its
  // weight (2,048), then the same inputs: 2,048 + 2,048 + 3,584 = 7,680 B
  // per patch, 0.117 GiB.
  auto projector_only = estimate_json({"--recipe", "ministral3_3b_sft_1gpu_h100_bf16_config", "--set",
                                       "model.freeze_vision_model=true"});
  REQUIRE(projector_only["estimate"].is_object());
  CHECK(projector_only["estimate"]["activations"].get<double>() - frozen["estimate"]["activations"].get<double>() ==
        Approx(7680.0 * 16'384 / kGiB).margin(0.01));
  // A frozen projector behind the trained tower: the gradient passes through
  // its norm (fp32 copy and rstd, 4,100) and its GELU (input, 2 x 3072 / 4 =
  // 1,536 per patch); the linears keep nothing (frozen weights).
  auto tower_only = estimate_json({"--recipe", "ministral3_3b_sft_1gpu_h100_bf16_config", "--set",
                                   "model.freeze_vision_projection=true"});
  REQUIRE(tower_only["estimate"].is_object());
  CHECK(sft["estimate"]["activations"].get<double>() - tower_only["estimate"]["activations"].get<double>() ==
        Approx((11'780.0 - 5636) * 16'384 / kGiB).margin(0.01));
  // The trained tower's 403,305,472 and projector's 16,778,240 parameters
  // get fp32 gradients, whole on the rank.
  CHECK(sft["estimate"]["gradients"].get<double>() - frozen["estimate"]["gradients"].get<double>() ==
        Approx((403'305'472.0 + 16'778'240) * 4 / kGiB).margin(0.01));
  // The 8B (text hidden 4096, TP 2) and 14B (5120, TP 4) keep the same tower
  // bytes whole on every rank; their projectors 12,804 and 13,828 per patch.
  for (auto [recipe, text] : {std::pair{"ministral3_8b_sft_2gpu_h100_bf16_config", 4096},
                              std::pair{"ministral3_14b_sft_4gpu_h100_bf16_config", 5120}}) {
    INFO(recipe);
    auto e = estimate_json({"--recipe", recipe});
    auto f = estimate_json({"--recipe", recipe, "--set", "model.freeze_vision_model=true", "--set",
                            "model.freeze_vision_projection=true"});
    REQUIRE(e["estimate"].is_object());
    REQUIRE(f["estimate"].is_object());
    double per_patch = tower + 6148 + 2048 + (2 * 1024 + 4.0 * text) / 4;
    CHECK(e["estimate"]["activations"].get<double>() - f["estimate"]["activations"].get<double>() ==
          Approx((per_patch * 16'384 + mask) / kGiB).margin(0.01));
  }
}
