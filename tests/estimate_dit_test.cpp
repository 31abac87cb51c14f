// Diffusion transformers in the memory estimate (lint/facts/estimate_dit.cpp):
// Megatron Bridge's Wan and FLUX, their parameters against the published
// checkpoints' counts and the bytes their blocks keep per token, by hand from
// Megatron Bridge 067f987df03b (sources in estimate_dit.cpp).
#include <catch2/catch.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include "lint/facts/estimate_dit.h"
#include "tests/cli_run.h"
#include "tests/memory_model_run.h"
#include "tests/test_support.h"

using namespace mblint;

namespace {

// `mblint estimate --recipe NAME`, with an override file when `config` is given.
nlohmann::json estimate_recipe(const std::string& recipe, const std::string& config = "") {
  auto cwd = test::make_temp_dir("mblint-estimate-dit");
  std::vector<std::string> args = {"estimate", "--recipe", recipe, "--format", "json"};
  if (!config.empty()) {
    std::ofstream(cwd / "job.yaml") << config;
    args.insert(args.begin() + 1, "job.yaml");
  }
  auto run = test::run_mblint(args, cwd);
  std::filesystem::remove_all(cwd);
  return nlohmann::json::parse(run.out);
}

bool mentions(const nlohmann::json& lines, const std::string& text) {
  for (const auto& line : lines) {
    if (line.get<std::string>().find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("dit: Wan 1.3B's parameters by hand equal the checkpoint's count", "[estimate][dit]") {
  // recipes/wan/h100/wan.py:53-60: 30 blocks, h 1536, FFN 8960, 12 heads,
  // crossattn_emb_size 1536; WanModelProvider's in/out channels 16, patch
  // 1 x 2 x 2, freq_dim 256, text_dim 4096.
  WanDims d;
  // A block: self-attention linear_qkv 1536 x 4608 + 4608, linear_proj
  // 1536² + 1536; cross-attention linear_q 1536² + 1536, linear_kv
  // 1536 x 3072 + 3072, linear_proj 1536² + 1536; Q/K norms over all heads
  // 4 x 1536; norm3 2 x 1536; fc1 1536 x 8960 + 8960, fc2 8960 x 1536 + 1536;
  // the modulation 6 x 1536.
  double block = 1536.0 * 4608 + 4608 + 1536.0 * 1536 + 1536 + 1536.0 * 1536 + 1536 + 1536.0 * 3072 + 3072 +
                 1536.0 * 1536 + 1536 + 4 * 1536 + 2 * 1536 + 1536.0 * 8960 + 8960 + 8960.0 * 1536 + 1536 + 6 * 1536;
  CHECK(block == 46'440'704);
  CHECK(wan_layer_params(d, 1).total() == block);
  // Outside the blocks: patch_embedding 64 x 1536 + 1536, text_embedding
  // 4096 x 1536 + 1536 and 1536² + 1536, time_embedder 256 x 1536 + 1536 and
  // 1536² + 1536, time_proj 1536 x 9216 + 9216, head 1536 x 64 + 64 and its
  // 2 x 1536 modulation.
  double outer = 65.0 * 1536 + 4097.0 * 1536 + 1537.0 * 1536 + 257.0 * 1536 + 1537.0 * 1536 + 1536.0 * 9216 + 9216 +
                 1536.0 * 64 + 64 + 2 * 1536;
  CHECK(outer == 25'775'680);
  CHECK(wan_outer_params(d, true, true).total() == outer);
  // Wan2.1-T2V-1.3B's checkpoint holds 1,418,996,800 parameters (the "1.3B"
  // of its name; the count other projects' parameter checks assert).
  CHECK(wan_parameters(d) == 1'418'996'800);
  // Wan 14B (recipes/wan/h100/wan.py:163-170): the published 14,288,491,584.
  WanDims big{40, 5120, 40, 13824, 5120};
  CHECK(wan_parameters(big) == 14'288'491'584);
  // TP 2 splits the linears and their column biases; the row biases, norms
  // and modulation stay whole: 8h² + 2hf + 6h + f split, 15h whole.
  DitParams tp2 = wan_layer_params(d, 2);
  CHECK(tp2.replicated == 15 * 1536);
  CHECK(tp2.sharded == (block - 15 * 1536) / 2);
}

TEST_CASE("dit: a Wan 1.3B block's saved bytes per token, by hand", "[estimate][dit]") {
  // wan_1_3b_pretrain: the mock's 24 x 104 x 60 latents in 1 x 2 x 2 patches,
  // 24 x 52 x 30 = 37,440 tokens, CP 8: 4,680 per rank; TP 1; 512 text tokens.
  WanDims d;
  DitTokens t{4680, 512, 1, false};
  // Per latent token, h = 1536, f = 8960, 12 heads, bf16:
  //   self-attention: norm1 input + linear_qkv input 2 x 2h, Q and K norm
  //   inputs 2 x 2h, linear_qkv output 2 x 3h, Q and K after RoPE 2 x 2h,
  //   output 2h, fp32 statistics 4 x 12, projection output 2h = 22h + 48;
  //   cross-attention: norm3 + linear_q inputs 2 x 2h, Q norm input and Q
  //   2 x 2h, output 2h, statistics 48 = 10h + 48;
  //   MLP: norm2 + fc1 inputs 2 x 2h, fc1 and GELU outputs 2 x 2f, fc2
  //   output 2h = 6h + 4f.
  double per_token = 22 * 1536 + 48 + 10 * 1536 + 48 + 6 * 1536 + 4 * 8960;
  CHECK(per_token == 94'304);
  // Over the text tokens: K's norm input 2h, K 2h, linear_kv's output 2 x 2h.
  double per_text_token = 8 * 1536;
  CHECK(wan_layer_bytes(d, t) == Approx(4680 * per_token + 512 * per_text_token));
  CHECK(wan_layer_bytes(d, t) == Approx(447'634'176.0));
}

TEST_CASE("dit: FLUX.1-dev's parameters by hand equal the checkpoint's count", "[estimate][dit]") {
  // FluxBridge.provider_bridge on FLUX.1-dev's config (black-forest-labs/flux
  // src/flux/util.py configs["flux-dev"]): h 3072 (24 heads of 128), FFN 4h,
  // 19 double and 38 single blocks, 64 latent channels, T5 4096, CLIP 768,
  // the guidance embedder.
  FluxDims d;
  const double h = 3072, f = 12288;
  // Double block: two AdaLN linears h -> 6h with bias, two QKV h -> 3h with
  // bias, two projections h² + h, two MLPs (h x f + f, f x h + h), four
  // per-head norms of 128.
  double dbl = 2 * (6 * h * h + 6 * h) + 2 * (3 * h * h + 3 * h) + 2 * (h * h + h) + 2 * (2 * h * f + f + h) + 4 * 128;
  CHECK(dbl == 339'831'296);
  CHECK(flux_double_params(d, 1).total() == dbl);
  // Single block: AdaLN h -> 3h with bias, QKV h -> 3h with bias, the
  // projection h² without bias, the MLP, two norms of 128.
  double sgl = 3 * h * h + 3 * h + 3 * h * h + 3 * h + h * h + 2 * h * f + f + h + 2 * 128;
  CHECK(sgl == 141'591'808);
  CHECK(flux_single_params(d, 1).total() == sgl);
  // img_embed 64 x h + h, txt_embed 4096 x h + h, the timestep and guidance
  // MLPEmbedders (256 x h + h, h² + h each), the vector MLPEmbedder
  // (768 x h + h, h² + h), norm_out's h -> 2h + 2h, proj_out h x 64 + 64.
  double outer = 65 * h + 4097 * h + 2 * (257 * h + h * h + h) + 769 * h + h * h + h + 2 * h * h + 2 * h + 64 * h + 64;
  CHECK(outer == 64'124'992);
  // 19 x 339,831,296 + 38 x 141,591,808 + 64,124,992 = 11,901,408,320:
  // FLUX.1-dev's "12B", the element count of its flux1-dev.safetensors.
  CHECK(flux_parameters(d) == 11'901'408'320);
  // Without the guidance embedder (FLUX.1-schnell's layout) 10,229,760 less.
  d.guidance = false;
  CHECK(flux_parameters(d) == 11'901'408'320 - 10'229'760);
}

TEST_CASE("dit: a FLUX double and single block's saved bytes, by hand", "[estimate][dit]") {
  // flux_12b_pretrain: the mock's 1024 x 1024 images, latents / 8 packed
  // 2 x 2: 64 x 64 = 4,096 image tokens, 512 text tokens, micro-batch 1, TP 2.
  FluxDims d;
  DitTokens t{4096, 512, 2, false};
  const double h = 3072, f = 12288, T = 4608;
  // A stream of t tokens: norm input and linear_qkv input 2 x 2h, Q and K
  // norm inputs 2 x 2h/2, projection output 2h, MLP norm and fc1 inputs
  // 2 x 2h, fc1 and GELU outputs 2 x 2f/2, fc2 output 2h: 14h + 2f per token.
  double stream = 14 * h + 2 * f;
  // The joint attention over T = 4,608: Q, K, V 3 x 2h/2, RoPE's cos and sin
  // 4 x 2 x 128, output 2h/2, statistics 4 x 24/2 per token.
  double attention = 4 * h + 1024 + 48;
  CHECK(flux_double_bytes(d, t) == Approx(4096 * stream + 512 * stream + T * attention));
  CHECK(flux_double_bytes(d, t) == Approx(372'989'952.0));
  // Single block per token of T: norm input and modulated norm 2 x 2h, fc1
  // and GELU outputs 2 x 2f/2, linear_qkv output 3h, Q and K norm inputs 2h,
  // Q and K after RoPE 2h, cos and sin 1024, output h, statistics 48, the
  // summed output 2h.
  double single = 4 * h + 2 * f + 3 * h + 2 * h + 2 * h + 1024 + h + 48 + 2 * h;
  CHECK(flux_single_bytes(d, t) == Approx(T * single));
  CHECK(flux_single_bytes(d, t) == Approx(316'366'848.0));
}

TEST_CASE("dit: the Wan and FLUX recipes are estimated with their token counts stated", "[estimate][dit]") {
  auto wan = estimate_recipe("wan_1_3b_pretrain_8gpu_h100_bf16_config");
  REQUIRE(wan["estimate"].is_object());
  CHECK(mentions(wan["estimate"]["assumptions"], "37440 latent tokens and 512 text tokens"));
  // 30 blocks x 447,634,176 B in flight (PP 1, no recompute).
  double blocks = 30 * 447'634'176.0 / (1024.0 * 1024 * 1024);
  CHECK(wan["estimate"]["activations"].get<double>() > blocks);
  CHECK(wan["estimate"]["activations"].get<double>() < blocks + 0.1);
  // text2image: F_latents 1 (recipes/wan/h100/wan.py:316): 52 x 30 = 1,560 tokens.
  auto t2i = estimate_recipe("wan_1_3b_text2image_pretrain_1gpu_h100_bf16_config");
  REQUIRE(t2i["estimate"].is_object());
  CHECK(mentions(t2i["estimate"]["assumptions"], "1560 latent tokens"));
  // Real data: the packing's capacity, dataset.seq_length, is the stated bound.
  auto real = estimate_recipe("wan_1_3b_pretrain_8gpu_h100_bf16_config", "dataset:\n  path: /data/wds\n");
  REQUIRE(real["estimate"].is_object());
  CHECK(mentions(real["estimate"]["assumptions"], "at most dataset.seq_length = 1024 latent tokens"));
  auto flux = estimate_recipe("flux_12b_pretrain_2gpu_h100_bf16_config");
  REQUIRE(flux["estimate"].is_object());
  CHECK(mentions(flux["estimate"]["assumptions"], "4096 image tokens and 512 text tokens"));
  // FLUX with real data: the image size is the data's, declined.
  auto flux_real = estimate_recipe("flux_12b_pretrain_2gpu_h100_bf16_config", "dataset:\n  path: /data/wds\n");
  CHECK_FALSE(flux_real["estimate"].is_object());
}

TEST_CASE("dit: a setting written but not known declines the estimate instead of taking the default",
          "[estimate][dit]") {
  // model.in_channels from an environment variable mblint cannot read: the
  // provider's default (16) would be a guess.
  std::string why;
  CHECK_FALSE(test::recipe_memory_model("wan_1_3b_pretrain_8gpu_h100_bf16_config",
                                        "model:\n  in_channels: ${oc.env:WAN_IN_CHANNELS}\n", &why));
  CHECK(why == "Wan (diffusion transformer): model.in_channels is set to a value mblint cannot know");
  CHECK(test::recipe_memory_model("wan_1_3b_pretrain_8gpu_h100_bf16_config", "model:\n  in_channels: 16\n"));
}
