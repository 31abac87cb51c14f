// Qwen3.5 (text and VL) in the memory estimate: each size's parameters
// counted by hand from its checkpoint's text_config and vision_config as
// data/model_dims.csv and data/vision_dims.csv record them (every number
// there from two independent copies, named in the rows' source column:
// p-doom/omegalax@e0d3d023ffc9 omegalax/models/qwen3_5/config.py,
// THUDM/slime@624b824a898a scripts/models/qwen3.5-*.sh,
// cpehle/tyr@69eaaa2466ce Tyr/Model/Qwen35/, pierre427/mlx2@0aea1cfe5ff2
// src/mlx2/adapters/qwen35_122b.py, Megatron Bridge 067f987df03b's Qwen3.5
// unit tests, NVIDIA/Megatron-LM@d98e8a64dd encoder_registry.py 'qwen-vl'),
// against Qwen's published totals (the model names: 0.8B, 9B, 27B, 35B,
// 122B, 397B); and what the recipes (Bridge 067f987df03b
// recipes/qwen_vl/h100/qwen35_vl.py, recipes/qwen/gb200/qwen35.py) turn
// on: the MTP layer, frozen parts, tied embeddings.
//
// Modules counted (Megatron-Core 2a75ac12c54b, as
// estimate_linear_attention_test.cpp): a GDN layer is in_proj h x (2 qk +
// 2 v + 2 Hv) with its fused RMSNorm h, conv1d (2 qk + v) x 4, dt_bias and
// A_log Hv each, out_norm over one value head (128), out_proj v x h (qk = 16
// key heads x 128, v = Hv x 128); a gated attention layer is linear_qkv h x
// 256 x (2 heads + 2 groups) (the output gate doubles the query columns),
// linear_proj heads x 256 x h, its input norm h and the Q/K head norms 2 x
// 256 (qk_layernorm); a dense MLP 3 h f + its norm h; a MoE block the router
// h x E, E x 3 h f_e, the shared expert 3 h f_s and its norm h (the shared
// expert's gate, h per layer, is not counted: 0.0002% of the 35B model);
// embeddings 248,320 x h, untied output layer as many, final norm h. The
// same terms give the HF checkpoints' modules one for one (in_proj_qkv,
// in_proj_z, in_proj_b, in_proj_a; q/k/v/o_proj, q_norm, k_norm).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "lint/facts/estimate.h"
#include "lint/facts/estimate_linear_attention.h"
#include "lint/facts/estimate_vision.h"
#include "tests/estimate_json.h"
#include "tests/memory_units.h"
#include "tests/qwen35_model.h"

using namespace mblint;
using test::bf16_parameters;
using test::estimate_json;
using test::kGiB;
using test::qwen35;

namespace {

// The tower and its one merger (no deepstack) of a vision_config.
int64_t tower_and_merger(const char* key) {
  const VisionDims* d = find_vision_dims(key);
  REQUIRE(d != nullptr);
  VisionParams p = vision_params(*d);
  return p.tower + p.projector;
}

}  // namespace

TEST_CASE("qwen35: 0.8B's language model and small tower, counted by hand", "[estimate]") {
  // text_config: 24 layers, hidden 1024, 8 heads / 2 groups, ffn 3584, 16
  // value heads, tied embeddings.
  MemoryModel m = qwen35({24, 1024, 8, 2, 3584, 16, true});
  // GDN: in_proj 1024 x (4096 + 4096 + 32) = 8,421,376, conv 6144 x 4 =
  // 24,576, 32, out_proj 2048 x 1024 = 2,097,152, norms 1024 + 128.
  CHECK(gdn_layer_params(m).sharded + gdn_layer_params(m).replicated == 10'544'288);
  // 18 GDN layers x 10,544,288 + 6 attention x 7,341,568 (qkv 1024 x 256 x
  // 20 = 5,242,880, proj 2,097,152, norms 1024 + 512) + 24 MLPs x 11,011,072
  // (3 x 1024 x 3584 + 1024) + one tied 248,320 x 1024 table + final norm.
  double text = 18 * 10'544'288.0 + 6 * 7'341'568.0 + 24 * 11'011'072.0 + 248320.0 * 1024 + 1024;
  CHECK(text == 752'393'024);
  CHECK(bf16_parameters(m) == Approx(text).epsilon(1e-12));
  // vision_config: depth 12, hidden 768, 12 heads, ffn 3072, out 1024:
  // 12 x 7,087,872 per layer + Conv3d 1,180,416 + 1,769,472 positions, and
  // the merger (norm 1,536, fc1 3072^2 + 3072, fc2 3072 x 1024 + 1024).
  int64_t layer = 3 * 768 * 768 + 3 * 768 + 768 * 768 + 768 * 3072 + 3072 + 3072 * 768 + 6 * 768;
  CHECK(layer == 7'087'872);
  int64_t tower = 12 * layer + (3 * 2 * 16 * 16 * 768 + 768) + 2304 * 768;
  int64_t merger = 2 * 768 + 3072 * 3072 + 3072 + 3072 * 1024 + 1024;
  CHECK(tower_and_merger("qwen35_vl_800m") == tower + merger);
  // 852,985,920 in all: the "0.8B" of Qwen/Qwen3.5-0.8B. The MTP layer the
  // recipes train (gated attention + MLP + eh_proj 2 x 1024^2 + 3 norms)
  // adds 20,452,864.
  CHECK(text + tower + merger == 852'985'920);
  m.mtp_layers = 1;
  m.stage_mtp = {1};
  CHECK(bf16_parameters(m) == Approx(text + 20'452'864.0).epsilon(1e-12));
}

TEST_CASE("qwen35: the 2B and 4B, counted by hand against keras-hub's exact counts", "[estimate]") {
  // The rows' numbers: 4B text and tower in two copies (omegalax
  // e0d3d023ffc9 _QWEN3_5_SPECS[qwen3.5-4b], ridcl/tunix 28aa906e65cd
  // ModelConfig.qwen3_5_4b / qwen3_5_4b_vl), 2B in omegalax; both checked by
  // the parameter counts Google's keras-team/keras-hub 71453d08f59e
  // qwen3_5_presets.py lists for the checkpoints (2,213,241,664 and
  // 4,539,265,536; the same file's 0.8B, 9B and 27B counts are this file's
  // 852,985,920, 9,409,813,744 and 27,356,728,560).
  // 4B text_config: 32 layers, 2560, 16 / 4 heads, ffn 9216, 32 value heads,
  // tied. GDN 2560 x (4096 + 8192 + 64) + 2560 + 8192 x 4 + 64 + 128 + 4096 x
  // 2560 = 42,142,400; attention 2560 x 256 x 40 + 4096 x 2560 + 2560 + 512 =
  // 36,703,232; MLP 3 x 2560 x 9216 + 2560 = 70,781,440.
  MemoryModel four = qwen35({32, 2560, 16, 4, 9216, 32, true});
  CHECK(gdn_layer_params(four).sharded + gdn_layer_params(four).replicated == 42'142'400);
  double text4 = 24 * 42'142'400.0 + 8 * 36'703'232.0 + 32 * 70'781'440.0 + 248320.0 * 2560 + 2560;
  CHECK(text4 == 4'205'751'296);
  CHECK(bf16_parameters(four) == Approx(text4).epsilon(1e-12));
  // The small-model tower of both (depth 24, hidden 1024, 16 heads, ffn
  // 4096): 24 x 12,596,224 per layer + Conv3d 1,573,888 + 2304 x 1024
  // positions = 306,242,560; a merger (norm 2,048, fc1 4096^2 + 4096, fc2
  // 4096 x out + out) to 2560: 27,271,680.
  int64_t layer = 3 * 1024 * 1024 + 3 * 1024 + 1024 * 1024 + 1024 * 4096 + 4096 + 4096 * 1024 + 6 * 1024;
  CHECK(layer == 12'596'224);
  int64_t tower = 24 * layer + (3 * 2 * 16 * 16 * 1024 + 1024) + 2304 * 1024;
  CHECK(tower == 306'242'560);
  CHECK(tower_and_merger("qwen35_vl_4b") == tower + 27'271'680);
  // 4,539,265,536: keras-hub's qwen3_5_4b count, to the parameter. The
  // checkpoint's MTP layer (the recipes train it) adds 120,599,552: gated
  // attention + MLP + eh_proj 2 x 2560^2 + 3 norms.
  CHECK(text4 + tower + 27'271'680 == 4'539'265'536);
  four.mtp_layers = 1;
  four.stage_mtp = {1};
  CHECK(bf16_parameters(four) == Approx(text4 + 120'599'552.0).epsilon(1e-12));

  // 2B text_config: 24 layers, 2048, 8 / 2 heads, ffn 6144, 16 value heads,
  // tied. GDN 21,063,840; attention 14,682,624; MLP 37,750,784.
  MemoryModel two = qwen35({24, 2048, 8, 2, 6144, 16, true});
  double text2 = 18 * 21'063'840.0 + 6 * 14'682'624.0 + 24 * 37'750'784.0 + 248320.0 * 2048 + 2048;
  CHECK(text2 == 1'881'825'088);
  CHECK(bf16_parameters(two) == Approx(text2).epsilon(1e-12));
  // The same tower, its merger to 2048: 25,174,016. 2,213,241,664 in all:
  // keras-hub's qwen3_5_2b count.
  CHECK(tower_and_merger("qwen35_vl_2b") == tower + 25'174'016);
  CHECK(text2 + tower + 25'174'016 == 2'213'241'664);
}

TEST_CASE("qwen35: the dense 9B and 27B, counted by hand", "[estimate]") {
  // 9B: 32 layers, 4096, 16 / 4 heads, ffn 12288, 32 value heads, untied.
  // GDN 4096 x (4096 + 8192 + 64) + 8192 x 4 + 64 + 4096^2 + 4096 + 128 =
  // 67,408,064; attention 4096 x 256 x 40 + 4096 x 4096 + 4096 + 512 =
  // 58,724,864; MLP 3 x 4096 x 12288 + 4096 = 150,999,040.
  MemoryModel nine = qwen35({32, 4096, 16, 4, 12288, 32, false});
  double text9 = 24 * 67'408'064.0 + 8 * 58'724'864.0 + 32 * 150'999'040.0 + 2 * 248320.0 * 4096 + 4096;
  CHECK(text9 == 8'953'803'264);
  CHECK(bf16_parameters(nine) == Approx(text9).epsilon(1e-12));
  // The large tower (depth 27, 1152, 16 heads, ffn 4304; 15,239,504 per
  // layer as Qwen3-VL's) and a merger to 4096: 415,891,440 + 40,119,040.
  CHECK(tower_and_merger("qwen35_vl_9b") == 415'891'440 + 40'119'040);
  // 9,409,813,744 with the tower: the "9B" of Qwen/Qwen3.5-9B.
  CHECK(text9 + 415'891'440 + 40'119'040 == 9'409'813'744);

  // 27B (Bridge's test_qwen35_bridge.py 27B config as well): 64 layers,
  // 5120, 24 / 4 heads, ffn 17408, 48 value heads. GDN 115,881,184;
  // attention 104,863,232; MLP 267,392,000.
  MemoryModel m = qwen35({64, 5120, 24, 4, 17408, 48, false});
  double text27 = 48 * 115'881'184.0 + 16 * 104'863'232.0 + 64 * 267'392'000.0 + 2 * 248320.0 * 5120 + 5120;
  CHECK(text27 == 26'895'998'464);
  CHECK(bf16_parameters(m) == Approx(text27).epsilon(1e-12));
  CHECK(tower_and_merger("qwen35_vl_27b") == 415'891'440 + 44'838'656);
  // 27,356,728,560 with the tower: the "27B" of Qwen/Qwen3.5-27B.
  CHECK(text27 + 415'891'440 + 44'838'656 == 27'356'728'560);
}

TEST_CASE("qwen35: the MoE 35B-A3B, 122B-A10B and 397B-A17B, counted by hand", "[estimate]") {
  // 35B-A3B: 40 layers of hidden 2048 with Qwen3-Next's GDN (33,720,512)
  // and attention (16 / 2 heads: 27,265,536 with the Q/K norms); 256
  // experts of 512, top-8, a 512 shared expert: MoE 2048 x 256 + 256 x 3 x
  // 2048 x 512 + 3 x 2048 x 512 + 2048 = 808,978,432.
  MemoryModel a3b = qwen35({40, 2048, 16, 2, 8192, 32, false, 256, 8, 512, 512});
  double text35 = 30 * 33'720'512.0 + 10 * 27'265'536.0 + 40 * 808'978'432.0 + 2 * 248320.0 * 2048 + 2048;
  CHECK(text35 == 34'660'528'768);
  CHECK(bf16_parameters(a3b) == Approx(text35).epsilon(1e-12));
  // + tower 415,891,440 + merger 30,679,808 = 35,107,100,016: "35B".
  CHECK(text35 + tower_and_merger("qwen35_vl_35b_a3b") == 35'107'100'016);

  // 122B-A10B: 48 layers of 3072, 32 / 2 heads, 64 value heads, 256
  // experts of 1024, top-8, shared 1024. GDN 88,526,080; attention
  // 78,646,784; MoE 2,426,145,792.
  MemoryModel a10b = qwen35({48, 3072, 32, 2, 12288, 64, false, 256, 8, 1024, 1024});
  double text122 = 36 * 88'526'080.0 + 12 * 78'646'784.0 + 48 * 2'426'145'792.0 + 2 * 248320.0 * 3072 + 3072;
  CHECK(bf16_parameters(a10b) == Approx(text122).epsilon(1e-12));
  // 122,562,670,320 with the tower: "122B".
  CHECK(text122 + tower_and_merger("qwen35_vl_122b_a10b") == 122'562'670'320);

  // 397B-A17B: 60 layers of 4096, 32 / 2 heads, 64 value heads, 512
  // experts of 1024, top-10, shared 1024. GDN 118,018,304; attention
  // 104,862,208; MoE 6,457,135,104.
  MemoryModel a17b = qwen35({60, 4096, 32, 2, 16384, 64, false, 512, 10, 1024, 1024});
  double text397 = 45 * 118'018'304.0 + 15 * 104'862'208.0 + 60 * 6'457'135'104.0 + 2 * 248320.0 * 4096 + 4096;
  CHECK(bf16_parameters(a17b) == Approx(text397).epsilon(1e-12));
  // 396,802,115,056 with the tower: "397B". Bridge's unit-test mock of this
  // config says shared_expert_intermediate_size 4096; that would be 3 x
  // 4096 x 3072 x 60 = 2,264,924,160 more, 399.1 B, not the published 397B
  // (omegalax and slime, the row's copies, both say 1024).
  CHECK(text397 + tower_and_merger("qwen35_vl_397b_a17b") == 396'802'115'056);
  MemoryModel mock = a17b;
  mock.shared_ffn = 4096;
  CHECK(bf16_parameters(mock) - bf16_parameters(a17b) == Approx(2'264'924'160.0).epsilon(1e-12));
}

TEST_CASE("qwen35: the recipes' MTP layer, frozen parts and tied embeddings", "[estimate]") {
  // The 9B text recipe (GB200, TP 1, DP 8): Bridge maps the text_config's
  // mtp_num_hidden_layers (1) to mtp_num_layers; no vision tower. bf16
  // weights of 8,953,803,264 + the MTP layer 243,290,624 (attention
  // 58,724,864 + MLP 150,999,040 + eh_proj 2 x 4096^2 + 3 norms).
  auto text = estimate_json({"--recipe", "qwen35_text_9b_pretrain_8gpu_gb200_bf16_config"});
  REQUIRE(text["estimate"].is_object());
  CHECK(text["estimate"]["vision"].is_null());
  CHECK(text["estimate"]["weights"].get<double>() ==
        Approx((8'953'803'264.0 + 243'290'624.0) * 2 / kGiB).margin(0.005));
  // The 0.8B SFT recipe trains everything on one GPU, with tied embeddings
  // (the checkpoint's top-level tie_word_embeddings): text + MTP + tower +
  // merger = 752,393,024 + 20,452,864 + 100,592,896 parameters in bf16.
  auto small = estimate_json({"--recipe", "qwen35_vl_800m_sft_1gpu_h100_bf16_config"});
  REQUIRE(small["estimate"].is_object());
  const auto& v = small["estimate"]["vision"];
  CHECK(v["model"] == "Qwen/Qwen3.5-0.8B");
  CHECK(v["tower_parameters"] == 88'004'352);
  CHECK(v["projector_parameters"] == 12'588'544);
  CHECK(v["tower_frozen"] == false);
  // seq 4096 x micro-batch 4 x merge 2^2 patches.
  CHECK(v["patches_per_microbatch"] == 65'536);
  CHECK(small["estimate"]["weights"].get<double>() ==
        Approx((752'393'024.0 + 20'452'864.0 + 100'592'896.0) * 2 / kGiB).margin(0.005));
  // The 27B pretrain recipe freezes the tower and trains the merger and the
  // language model.
  auto pre = estimate_json({"--recipe", "qwen35_vl_27b_pretrain_16gpu_h100_bf16_mock_config"});
  REQUIRE(pre["estimate"].is_object());
  CHECK(pre["estimate"]["vision"]["tower_frozen"] == true);
  CHECK(pre["estimate"]["vision"]["projector_frozen"] == false);
  // PEFT: LoRA on a gated delta net model (its adapters counted in
  // estimate_lora_gdn_test.cpp): the base and the tower frozen.
  auto peft = estimate_json({"--recipe", "qwen35_vl_9b_peft_1gpu_h100_bf16_config"});
  REQUIRE(peft["estimate"].is_object());
  CHECK(peft["estimate"]["vision"]["tower_frozen"] == true);
  // 2B and 4B: every recipe estimates. The 4B SFT recipe (TP 2) trains the
  // language model, its MTP layer, the Megatron-Core tower and the merger.
  auto four = estimate_json({"--recipe", "qwen35_vl_4b_sft_2gpu_h100_bf16_config"});
  REQUIRE(four["estimate"].is_object());
  CHECK(four["estimate"]["vision"]["model"] == "Qwen/Qwen3.5-4B");
  CHECK(four["estimate"]["vision"]["tower_frozen"] == false);
  for (const char* recipe : {"qwen35_vl_4b_peft_1gpu_h100_bf16_config", "qwen35_vl_2b_sft_1gpu_h100_bf16_config",
                             "qwen35_vl_2b_peft_1gpu_h100_bf16_config"}) {
    INFO(recipe);
    CHECK(estimate_json({"--recipe", recipe})["estimate"].is_object());
  }
}
