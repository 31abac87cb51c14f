// The RADIO ViT-H tower and MLP projector of the Nemotron Omni recipes
// (data/vision_dims.csv arch "radio"; estimate_vision.cpp [RADIO]), counted
// by hand from Bridge's _build_vision_config (Megatron-Bridge 067f987df03b
// src/megatron/bridge/models/nemotron_omni/nemotron_omni_provider.py:101-129)
// and Megatron-LM 2a75ac12c54b megatron/core/models/vision/radio.py, and
// checked against the parameter count Bridge's verification card reports
// for the converted checkpoint.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "lint/facts/estimate.h"
#include "lint/facts/estimate_llava.h"
#include "lint/facts/estimate_sound.h"
#include "lint/facts/estimate_vision.h"
#include "tests/estimate_json.h"
#include "tests/memory_units.h"

using namespace mblint;
using test::estimate_json;
using test::kGiB;

TEST_CASE("radio: Nemotron Omni's RADIO ViT-H and projector, counted by hand", "[estimate]") {
  const VisionDims* d = find_vision_dims("nemotron_omni_cord_v2");
  REQUIRE(d != nullptr);
  VisionParams p = vision_params(*d);
  // One TE ViT layer (hidden 1280, ffn 5120, biased qkv and linears):
  // split over TP: qkv 3 x 1280^2 + 3 x 1280 = 4,919,040, proj 1280^2 =
  // 1,638,400, fc1 1280 x 5120 + 5120 = 6,558,720, fc2 5120 x 1280 =
  // 6,553,600: 19,669,760; whole: the LayerNorms fused into qkv and fc1
  // (weight and bias, 4 x 1280) and the proj and fc2 biases (2 x 1280): 7,680.
  // The embedder 3 x 16^2 x 1280 = 983,040 (column-parallel, no bias), the
  // position table (2048 / 16)^2 x 1280 = 20,971,520, 10 class tokens x 1280
  // = 12,800.
  CHECK(p.tower_split == 32 * 19'669'760LL + 983'040);
  CHECK(p.tower == 32 * (19'669'760LL + 7'680) + 983'040 + 20'971'520 + 12'800);
  CHECK(p.tower == 651'645'440);
  // The projector over 2x2 pixel-shuffled features (4 x 1280 = 5120 wide):
  // RMSNorm 5120, fc1 5120 x 20480, fc2 20480 x 2688, no biases.
  CHECK(p.projector_split == 5120LL * 20480 + 20480LL * 2688);
  CHECK(p.projector == 159'912'960);
  // Bridge's card (nemotron-3-nano-omni-30b-a3b-reasoning card.yaml,
  // hf_to_megatron_cpu) reports 33,015,546,816 parameters for the whole
  // converted checkpoint. By hand: the text stack (Nemotron 3 Nano: 23 Mamba
  // layers of 38,744,896, 6 attention layers of 23,399,040, 23 MoE layers of
  // 1,297,468,032 without the router's expert_bias buffer, final norm 2688,
  // untied embedding and output 2 x 131072 x 2688) 31,577,937,344; this
  // tower with the checkpoint's separate video embedder (3 x 2 x 16^2 x
  // 1280 = 1,966,080; the cord_v2 recipes run temporal_patch_dim 1 and do
  // not build it); this projector; the Parakeet sound encoder (24 conformer
  // blocks of 25,189,376 and a 4,334,592 subsampling stack) 608,879,616 and
  // its projector (1024 + 1024 x 4096 + 4096 x 2688) 15,205,376.
  int64_t text = 23 * 38'744'896LL + 6 * 23'399'040LL + 23 * 1'297'468'032LL + 2688 + 2 * 131'072LL * 2688;
  CHECK(text == 31'577'937'344);
  CHECK(text + p.tower + 1'966'080 + p.projector + 608'879'616 + 15'205'376 == 33'015'546'816);
}

TEST_CASE("radio: a trained projector's bytes per image token", "[estimate]") {
  // Its fused norm's input and output (2 x 5120 bf16), fc1's output and the
  // squared ReLU's output (2 x 20480 / TP bf16): at TP 4, 2 x (10240 + 10240)
  // = 40,960 B per image token.
  CHECK(mlp_projector_bytes(1, 5120, 20480, 4, false) == 40'960);
  // The cord_v2 SFT recipe (TP 4, micro-batch 1, 4096 tokens) trains the
  // projector behind the frozen tower: every token an image token, 4096 x
  // 40,960 B = 0.156 GiB more than with the projector frozen too.
  auto sft = estimate_json({"--recipe", "nemotron_omni_cord_v2_sft_4gpu_h100_bf16_config"});
  auto frozen = estimate_json(
      {"--recipe", "nemotron_omni_cord_v2_sft_4gpu_h100_bf16_config", "--set", "model.freeze_vision_projection=true"});
  REQUIRE(sft["estimate"].is_object());
  REQUIRE(frozen["estimate"].is_object());
  const auto& v = sft["estimate"]["vision"];
  CHECK(v["tower_parameters"] == 651'645'440);
  CHECK(v["projector_parameters"] == 159'912'960);
  CHECK(v["tower_frozen"] == true);
  CHECK(v["projector_frozen"] == false);
  CHECK(v["patches_per_microbatch"] == 4096 * 4);
  double diff = sft["estimate"]["activations"].get<double>() - frozen["estimate"]["activations"].get<double>();
  CHECK(diff == Approx(4096.0 * 40'960 / kGiB).margin(0.011));
}

TEST_CASE("radio: the tower's bytes per token under LoRA", "[estimate]") {
  // One RADIO layer at TP 4 without sequence parallelism, no dropout, flash
  // attention, per token: the qkv LayerNorm's input and output (2 x 2h, whole
  // on every rank), q, k, v (6h / TP), the attention output, which is
  // proj's input (2h / TP), and its fp32 logsumexp (4 x 16 heads / TP), the
  // fc1 LayerNorm's input and output (2 x 2h), the GELU's input and output
  // (2 x 2f / TP): h 1280, f 5120: 10,240 + 1,920 + 640 + 16 + 5,120 =
  // 17,936 B; under the PEFT recipe's LoRA the frozen tower keeps them for
  // its adapters over 4096 x (4 + 10) = 57,344 tokens and 32 layers.
  MemoryModel v;
  v.hidden = 1280;
  v.heads = v.query_groups = 16;
  v.kv_channels = 80;
  v.ffn = 5120;
  v.swiglu = false;
  v.add_bias = true;
  v.seq = 1;
  v.tp = 4;
  v.hidden_dropout = v.attention_dropout = 0;
  CHECK(layer_activation_bytes(v, false) == Approx(17'936));
}

TEST_CASE("radio: Nemotron Omni's Parakeet sound encoder and projector, counted by hand", "[estimate]") {
  // The checkpoint's sound_config (ollama 87288ced4fbb
  // convert/convert_nemotron_h_test.go:365-379: 24 blocks of 1024, 8 heads,
  // ffn 4096, depthwise kernel 9, 256 subsampling channels, factor 8, 128
  // mel bins, projection 4096) laid out as transformers' ParakeetEncoder
  // (f14d0cbc824e modeling_parakeet.py) with Bridge's convolution_bias False
  // (nemotron_omni_provider.py:263-281).
  const SoundDims* d = find_sound_dims("nemotron_omni_valor32k");
  REQUIRE(d != nullptr);
  SoundParams p = sound_params(*d);
  // One conformer block: two feed-forwards 2 x (1024 x 4096 + 4096 x 1024) =
  // 16,777,216; q, k, v, o 4 x 1024^2 = 4,194,304, relative_k_proj 1024^2 =
  // 1,048,576, bias_u and bias_v 2 x 8 x 128 = 2,048; the convolution
  // module: pointwise 1024 x 2048 = 2,097,152, depthwise 1024 x 9 = 9,216,
  // BatchNorm 2 x 1024, pointwise 1024^2 = 1,048,576; five LayerNorms 5 x 2 x
  // 1024 = 10,240: 25,189,376.
  int64_t block = 16'777'216LL + 4'194'304 + 1'048'576 + 2'048 + 2'097'152 + 9'216 + 2'048 + 1'048'576 + 10'240;
  CHECK(block == 25'189'376);
  // Subsampling (log2 8 = 3 stride-2 stages): Conv2d 1 -> 256 (3x3 + bias)
  // 2,560; two depthwise (256 x 9 + 256 = 2,560) and pointwise (256^2 + 256
  // = 65,792) pairs; the linear 256 x 128 / 8 = 4096 -> 1024 with bias
  // 4,195,328: 4,334,592.
  int64_t subsampling = 2'560 + 2 * (2'560 + 65'792) + 4'096LL * 1'024 + 1'024;
  CHECK(subsampling == 4'334'592);
  CHECK(p.encoder == 24 * block + subsampling);
  CHECK(p.encoder == 608'879'616);
  // The projector: fc1's RMSNorm 1024 (whole), fc1 1024 x 4096 and fc2 4096
  // x 2688 (split).
  CHECK(p.projector_split == 1'024LL * 4'096 + 4'096LL * 2'688);
  CHECK(p.projector == 15'205'376);
}

TEST_CASE("radio: the valor32k recipes, with the sound encoder and the video embedder", "[estimate]") {
  // Against cord_v2 (the same tower, no sound, temporal_patch_dim 1), the
  // valor32k SFT recipe (TP 4, micro-batch 1, 4096 tokens) adds on the rank:
  // the frozen Parakeet encoder whole (608,879,616), the frozen video
  // embedder 3 x 2 x 16^2 x 1280 / 4 = 491,520 (separate_video_embedder,
  // Megatron-LM 2a75ac12c54b radio.py:163-185), and the trained sound
  // projector 1024 + 15,204,352 / 4 = 3,802,112: 613,173,248 x 2 B = 1.142
  // GiB of weights; its saved bytes over 4096 sound tokens, 2 x (2 x 1024 +
  // 2 x 4096 / 4) = 8,192 B each: 0.031 GiB.
  auto valor = estimate_json({"--recipe", "nemotron_omni_valor32k_sft_4gpu_h100_bf16_config"});
  auto cord = estimate_json({"--recipe", "nemotron_omni_cord_v2_sft_4gpu_h100_bf16_config"});
  REQUIRE(valor["estimate"].is_object());
  REQUIRE(cord["estimate"].is_object());
  CHECK(mlp_projector_bytes(1, 1024, 4096, 4, false) == 8'192);
  const auto& v = valor["estimate"]["vision"];
  CHECK(v["video_embedder_parameters"] == 1'966'080);
  CHECK(v["sound"]["encoder_parameters"] == 608'879'616);
  CHECK(v["sound"]["projector_parameters"] == 15'205'376);
  CHECK(v["sound"]["encoder_frozen"] == true);
  CHECK(v["sound"]["projector_frozen"] == false);
  CHECK(v["sound"]["tokens_per_microbatch"] == 4096);
  auto diff = [&](const char* part) {
    return valor["estimate"][part].get<double>() - cord["estimate"][part].get<double>();
  };
  CHECK(diff("weights") == Approx(613'173'248.0 * 2 / kGiB).margin(0.011));
  CHECK(diff("activations") == Approx(4096.0 * 8'192 / kGiB).margin(0.011));
  // The PEFT recipe freezes both and LoRA (the recipe's LoRA(dim=16),
  // nemotron_omni.py:292, recorded as peft.dim) wraps the projector's
  // linear_fc1 and linear_fc2: 16 x (1024 + 4096) / 4 + 16 x (4096 + 2688) / 4
  // = 47,616 adapter parameters, the projector's bytes kept for them.
  auto peft = estimate_json({"--recipe", "nemotron_omni_valor32k_peft_4gpu_h100_bf16_config"});
  REQUIRE(peft["estimate"].is_object());
  CHECK(peft["estimate"]["vision"]["sound"]["projector_frozen"] == true);
  std::string assumed;
  for (const auto& line : peft["estimate"]["assumptions"]) assumed += line.get<std::string>();
  CHECK(assumed.find("LoRA adapters 0.05 M per GPU") != std::string::npos);
  // A trained encoder is declined, naming what is not modelled.
  auto trained = estimate_json({"--recipe", "nemotron_omni_valor32k_sft_4gpu_h100_bf16_config", "--set",
                                "model.freeze_sound_encoder=false"});
  CHECK(trained["estimate"].is_null());
  std::string why;
  for (const auto& line : trained["estimate_unavailable"]) why += line.get<std::string>();
  CHECK(why.find("ParakeetEncoder") != std::string::npos);
  CHECK(why.find("freeze_sound_encoder false") != std::string::npos);
}
