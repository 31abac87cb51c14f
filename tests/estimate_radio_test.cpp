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

TEST_CASE("radio: the tower's bytes per token under LoRA, and the sound encoder declined", "[estimate]") {
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
  // The valor32k recipes leave has_sound to the checkpoint: declined, with
  // the missing piece named.
  auto valor = estimate_json({"--recipe", "nemotron_omni_valor32k_sft_4gpu_h100_bf16_config"});
  CHECK(valor["estimate"].is_null());
  std::string why;
  for (const auto& line : valor["estimate_unavailable"]) why += line.get<std::string>();
  CHECK(why.find("ParakeetEncoder") != std::string::npos);
  CHECK(why.find("sound_config") != std::string::npos);
}
