// Qwen2-Audio 7B (data/model_dims.csv and data/vision_dims.csv qwen2_audio_7b;
// estimate_vision.cpp [Q2A]): the text stack and the Whisper-style audio
// encoder counted by hand from the checkpoint's config and transformers'
// modules, checked against the checkpoint's published parameter count, and
// what a trained encoder keeps per frame in the two recipes' estimates.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "lint/facts/estimate.h"
#include "lint/facts/estimate_vision.h"
#include "tests/estimate_json.h"
#include "tests/memory_model_run.h"

using namespace mblint;
using test::estimate_json;
using test::estimated_recipe_model;

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr const char* kSft = "qwen2_audio_7b_sft_1gpu_h100_bf16_config";
constexpr const char* kPeft = "qwen2_audio_7b_peft_1gpu_h100_bf16_config";
}  // namespace

TEST_CASE("audio: Qwen2-Audio 7B's text stack, encoder and projector, counted by hand", "[estimate]") {
  // The text stack: the checkpoint's text_config sets intermediate 11008 and
  // vocab 156032 and leaves the rest to transformers' Qwen2Config defaults
  // (hidden 4096, 32 layers, 32 heads, 32 KV heads, untied); Bridge's
  // Qwen2AudioBridge adds qkv bias, no linear bias, a gated MLP, RMSNorm.
  MemoryModel m = estimated_recipe_model(kSft);
  CHECK(m.layers == 32);
  CHECK(m.hidden == 4096);
  CHECK(m.heads == 32);
  CHECK(m.query_groups == 32);
  CHECK(m.ffn == 11008);
  CHECK(m.vocab == 156032);  // a multiple of 128: no padding
  CHECK(m.swiglu);
  CHECK(m.rmsnorm);
  CHECK_FALSE(m.tied);
  // Per layer: qkv 4096 x 3 x 4096 + its bias 3 x 4096, proj 4096^2, fc1
  // (gate and up) 4096 x 2 x 11008, fc2 11008 x 4096, two norms 2 x 4096.
  int64_t layer = 50'331'648 + 12'288 + 16'777'216 + 90'177'536 + 45'088'768 + 8'192;
  CHECK(layer == 202'395'648);
  // 32 layers, the final norm, embedding and output layer 156,032 x 4096 each.
  int64_t text = 32 * layer + 4096 + 2 * 639'107'072LL;
  CHECK(text == 7'754'878'976);

  // The encoder (transformers modeling_qwen2_audio.py Qwen2AudioEncoder,
  // audio_config: 128 mels, d_model 1280, 32 layers of 20 heads, ffn 5120,
  // 1500 positions): conv1 128 x 3 x 1280 + 1280 = 492,800, conv2 1280 x 3
  // x 1280 + 1280 = 4,916,480, the position table 1500 x 1280 = 1,920,000;
  // per layer q/k/v/out 4 x 1280^2 with biases on q, v, out (3 x 1280),
  // two LayerNorms 4 x 1280, fc1 1280 x 5120 + 5120, fc2 5120 x 1280 + 1280:
  // 19,676,160; the final LayerNorm 2 x 1280.
  const VisionDims* d = find_vision_dims("qwen2_audio_7b");
  REQUIRE(d != nullptr);
  CHECK(std::string(d->arch) == "qwen2_audio");
  int64_t encoder_layer = (4 * 1'638'400 + 3 * 1280) + 4 * 1280 + (6'553'600 + 5120) + (6'553'600 + 1280);
  CHECK(encoder_layer == 19'676'160);
  VisionParams p = vision_params(*d);
  CHECK(p.tower == 492'800 + 4'916'480 + 1'920'000 + 32 * encoder_layer + 2560);
  CHECK(p.tower == 636'968'960);
  CHECK(p.tower_split == 0);  // an HF module: whole on every tensor-parallel rank
  // The projector: one linear 1280 -> 4096 with bias.
  CHECK(p.projector == 1280 * 4096 + 4096);
  CHECK(p.projector_split == 0);
  // The whole checkpoint: 8,397,094,912, the safetensors total listed for
  // Qwen/Qwen2-Audio-7B and -Instruct (a public Qwen release register
  // quoting the Hugging Face API's safetensors.total).
  CHECK(text + p.tower + p.projector == 8'397'094'912);
  // The encoder is Whisper large-v3's (same audio_config); with Whisper's
  // decoder (vocab 51,866 x 1280 tied embedding, 448 x 1280 positions, 32
  // layers of self- and cross-attention 2 x 6,557,440, three LayerNorms
  // 7,680, fc1 6,558,720, fc2 6,554,880, a final LayerNorm 2,560) it makes
  // 1,543,490,560, openai/whisper-large-v3's listed count.
  int64_t whisper_decoder = 51'866LL * 1280 + 448 * 1280 + 32 * (2 * 6'557'440LL + 7680 + 6'558'720 + 6'554'880) + 2560;
  CHECK(p.tower + whisper_decoder == 1'543'490'560);

  // The estimate's weights: all of it in bf16 (2 B), 15.64 GiB.
  auto sft = estimate_json({"--recipe", kSft});
  REQUIRE(sft["estimate"].is_object());
  CHECK(sft["estimate"]["weights"].get<double>() == Approx(8'397'094'912.0 * 2 / kGiB).margin(0.006));
}

TEST_CASE("audio: the SFT recipe trains the encoder; what it keeps per frame", "[estimate]") {
  // What autograd keeps per encoder frame (transformers
  // modeling_qwen2_audio.py; Bridge builds the encoder with no
  // attn_implementation and no gradient checkpointing: SDPA, with the bf16
  // key-padding mask Bridge passes). All bf16 (Float16Module) except the
  // LayerNorms' fp32 mean and rstd. Hidden 1280, ffn 5120, 20 heads.
  //   self_attn_layer_norm, final_layer_norm: input 2,560 + mean, rstd 8   5,136
  //   q/k/v input 2,560 + q, k, v 3 x 2,560 + SDPA output 2,560
  //     + fp32 logsumexp 4 x 20 + out_proj input 2,560                    15,440
  //   fc1 input 2,560 + GELU input 2 x 5,120 + fc2 input 2 x 5,120        23,040
  //                                                                       43,616 bytes
  double layer = 2 * (2560 + 8) + (2560 + 3 * 2560 + 2560 + 80 + 2560) + (2560 + 4 * 5120);
  CHECK(layer == 43'616);
  // The stem over two mel frames per encoder frame: conv1's bf16 mel input
  // 2 x 128 x 2 B = 512, conv1's output (GELU input) and the GELU's output
  // (conv2's input) 2 x 2 x 2,560, conv2's output (GELU input) 2,560:
  // 13,312. The avg-pool's input 2,560. Per audio token (2 frames): the
  // final LayerNorm 2,568 and the trained projector's input 2,560, so
  // 1,284 + 1,280 per frame.
  double frame = 32 * layer + (512 + 4 * 2560 + 2560) + 2560 + 1284 + 1280;
  CHECK(frame == 1'414'148);
  // One clip per example (Bridge's qwen2_audio_collate_fn), micro-batch 1,
  // padded to 3000 mel frames: 1500 encoder frames. The key-padding mask
  // (1500 x 1500 bf16) padded to 1504 columns in each of the 32 layers by
  // SDPA's memory-efficient kernel: 144,384,000 B.
  double mask = 32.0 * 1500 * 1504 * 2;
  double audio = 1500 * frame + mask;
  CHECK(audio == 2'265'606'000);
  MemoryModel m = estimated_recipe_model(kSft);
  CHECK_FALSE(m.vision.tower_frozen);
  CHECK_FALSE(m.vision.projector_frozen);
  CHECK(m.vision.images == 1);
  CHECK(m.vision.patches == 1500);
  CHECK(m.vision.activation_bytes == Approx(audio).epsilon(1e-12));
  // The position table never trains: 636,968,960 - 1,920,000 + 5,246,976
  // parameters get fp32 gradients and Adam state.
  CHECK(m.vision.trainable_params == 640'295'936);
  CHECK(m.vision.frozen_params == 1'920'000);

  // Against the same job with the encoder and projector frozen: 2.11 GiB of
  // activations and 640,295,936 x 4 B of gradients fewer.
  auto sft = estimate_json({"--recipe", kSft});
  auto frozen = estimate_json({"--recipe", kSft, "--set", "model.freeze_audio_model=true", "--set",
                               "model.freeze_audio_projection=true"});
  REQUIRE(sft["estimate"].is_object());
  REQUIRE(frozen["estimate"].is_object());
  CHECK(sft["estimate"]["vision"]["patches_per_microbatch"] == 1500);
  CHECK(sft["estimate"]["vision"]["images_per_microbatch"] == 1);
  CHECK(sft["estimate"]["activations"].get<double>() - frozen["estimate"]["activations"].get<double>() ==
        Approx(audio / kGiB).margin(0.011));
  CHECK(sft["estimate"]["gradients"].get<double>() - frozen["estimate"]["gradients"].get<double>() ==
        Approx(640'295'936.0 * 4 / kGiB).margin(0.011));
  // A trained projector behind a frozen encoder keeps only its input: 750
  // audio tokens x 2,560 B.
  MemoryModel projector_only = estimated_recipe_model(kSft, "model:\n  freeze_audio_model: true\n");
  CHECK(projector_only.vision.tower_frozen);
  CHECK(projector_only.vision.activation_bytes == 750.0 * 2560);
  // A micro-batch of 2: two clips, twice the frames and masks.
  MemoryModel two = estimated_recipe_model(kSft, "train:\n  micro_batch_size: 2\n");
  CHECK(two.vision.images == 2);
  CHECK(two.vision.patches == 3000);
  CHECK(two.vision.activation_bytes == Approx(2 * audio).epsilon(1e-12));
  // Full SFT of 8.4 B parameters on one H100 (Adam, no data parallelism to
  // shard over) needs far more than the GPU holds; the estimate says so.
  CHECK(sft["estimate"]["total"].get<double>() > 2 * sft["estimate"]["capacity"].get<double>());
}

TEST_CASE("audio: the PEFT recipe freezes the encoder and projector", "[estimate]") {
  // LoRA freezes the whole base model; its default targets (linear_qkv,
  // linear_proj, linear_fc1, linear_fc2) name no module of the HF encoder
  // (q_proj, k_proj, v_proj, out_proj, fc1, fc2) or projector (linear).
  std::vector<std::string> assumptions;
  test::LintRun run("mblint-estimate-audio-peft");
  run.options.recipe = run.value(kPeft);
  MemoryModel m = test::estimated_model_of(run, &assumptions);
  CHECK(m.vision.tower_frozen);
  CHECK(m.vision.projector_frozen);
  CHECK(m.vision.activation_bytes == 0);
  CHECK(m.vision.trainable_params == 0);
  CHECK(m.vision.frozen_params == 636'968'960 + 5'246'976);
  std::string audio_line;
  for (const std::string& a : assumptions) {
    if (a.rfind("audio encoder of Qwen/Qwen2-Audio-7B-Instruct", 0) == 0) audio_line = a;
  }
  CHECK(audio_line.find("637.0 M parameters (frozen") != std::string::npos);
  CHECK(audio_line.find("audio clips per micro-batch at most 1") != std::string::npos);
  CHECK(audio_line.find("key-padding mask") == std::string::npos);  // a frozen encoder keeps none
}
