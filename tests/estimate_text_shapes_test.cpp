// The shapes of the text models issue 20 left declined (data/model_dims.csv):
// Nemotron 3 Ultra, a hybrid Mamba/attention/LatentMoE stack like Nemotron 3
// Super; K-EXAONE 236B-A23B, whose multi-token prediction layer is dense;
// K-EXAONE 2.0 750B-A37B, whose shape is recorded but whose clamped SwiGLU
// keeps it declined. Each total parameter count is derived by hand from the
// sources the rows cite and compared with what the vendor publishes; the
// estimate's own count of the recipe's model must agree with the hand count.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "lint/facts/estimate.h"
#include "lint/model/catalog.h"
#include "tests/estimate_json.h"
#include "tests/memory_model_run.h"
#include "tests/memory_units.h"

using namespace mblint;
using test::estimate_json;

namespace {

// The memory model of `mblint estimate --recipe NAME`, with every parallel
// size 1 (one pipeline stage holds every layer and the MTP block, one rank
// every expert), so its weights are the whole model's.
MemoryModel whole_model(const std::string& recipe) {
  MemoryModel m = test::estimated_recipe_model(
      recipe, "model:\n  tensor_model_parallel_size: 1\n  pipeline_model_parallel_size: 1\n"
              "  expert_model_parallel_size: 1\n  context_parallel_size: 1\n");
  REQUIRE(m.pp == 1);
  return m;
}

// Its parameters in bf16, with or without the MTP block.
double parameters(MemoryModel m, bool with_mtp) {
  if (!with_mtp) m.stage_mtp = {0};
  return test::bf16_parameters(m);
}

}  // namespace

TEST_CASE("text shapes: Nemotron 3 Ultra's parameters, by hand, match the checkpoint to the byte", "[estimate]") {
  // nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16 (data/model_dims.csv: NVIDIA's
  // ModelOpt config in Megatron-LM and a second copy in willccbb/miles): 108
  // layers of the pattern, hidden 8192, vocab 131072 untied, RMSNorm, no bias.
  const double h = 8192, V = 131072;
  // Mamba-2 mixer (Megatron-Core MambaMixer): 256 heads x 64 = d_inner 16384,
  // 8 groups, state 128, conv 4. in_proj h -> 2 d_inner + 2 g s + heads with
  // its fused input norm; conv1d weight and bias over d_inner + 2 g s
  // channels; A_log, D, dt_bias per head; the gated norm over d_inner;
  // out_proj d_inner -> h.
  const double di = 256 * 64, gs = 8 * 128;
  double mamba = h * (2 * di + 2 * gs + 256) + h + (di + 2 * gs) * (4 + 1) + 3 * 256 + di + di * h;
  CHECK(mamba == 421'645'056.0);
  // Attention: 64 heads and 2 query groups of 128, its fused input norm.
  double attention = h * 128 * (64 + 2 * 2) + 64 * 128 * h + h;
  CHECK(attention == 138'420'224.0);
  // LatentMoE: the pre-MLP norm, the router (512 x h), the h -> 2048 and
  // 2048 -> h latent projections, 512 squared-ReLU experts 2048 -> 5120 ->
  // 2048 and the shared expert h -> 10240 -> h.
  const double latent = 2048;
  double moe = h + 512 * h + 2 * h * latent + 512 * 2 * latent * 5120 + 2 * h * 10240;
  CHECK(moe == 10'942'947'328.0);
  // 48 Mamba, 48 MoE and 12 attention layers; embedding, output layer, final norm.
  double main = 48 * mamba + 48 * moe + 12 * attention + 2 * V * h + h;
  CHECK(main == 549'308'968'960.0);  // NVIDIA: "550B total" (MB docs/models/nemotron/nemotron3-ultra.md)
  // The MTP layer ('*E'): attention and MoE, eh_proj 2h -> h, enorm, hnorm
  // and its final norm. The BF16 checkpoint's index total_size,
  // 1,121,049,257,984 bytes, is these parameters in 2 B plus the 49 MoE
  // layers' 512 expert biases (e_score_correction_bias) in fp32.
  double with_mtp = main + attention + moe + 2 * h * h + 3 * h;
  CHECK(with_mtp == 560'524'578'816.0);
  CHECK(2 * with_mtp + 4 * 49 * 512 == 1'121'049'257'984.0);
  // What the estimate builds for the recipes (mtp_num_layers 2 over one
  // repeated layer): the same counts.
  MemoryModel m = whole_model("nemotron_3_ultra_pretrain_24gpu_h100_bf16_config");
  CHECK(m.layers == 108);
  CHECK(m.moe_latent == 2048);
  CHECK(m.mtp_layers == 2);
  CHECK(m.mtp_repeated);
  CHECK(m.mamba_heads == 256);
  CHECK(parameters(m, false) == Approx(main).epsilon(1e-12));
  CHECK(parameters(m, true) == Approx(with_mtp).epsilon(1e-12));
}

TEST_CASE("text shapes: K-EXAONE 236B-A23B's parameters and its dense MTP layer, by hand", "[estimate]") {
  // LGAI-EXAONE/K-EXAONE-236B-A23B (data/model_dims.csv: LG's configuration in
  // huggingface/transformers' exaone_moe.md, the checkpoint's config in
  // TensorRT-LLM's test and a GGUF model card): 48 layers, hidden 6144, 64
  // heads and 8 KV groups of 128 with Q/K RMSNorm, layer 0 dense (SwiGLU
  // 18432), layers 1-47 MoE (128 experts of 2048, top-8, one 2048 shared),
  // vocab 153600 untied.
  const double h = 6144, f = 18432, e = 2048, V = 153600;
  double attention = h * 128 * (64 + 2 * 8) + 64 * 128 * h + 2 * 128 + h;
  double dense = 3 * h * f + h;
  double moe = h + 128 * h + 128 * 3 * h * e + 3 * h * e;
  double main = 48 * attention + dense + 47 * moe + 2 * V * h + h;
  CHECK(main == 236'571'150'336.0);  // LG: 236B in total
  CHECK(main - 2 * V * h == Approx(234.7e9).epsilon(1e-3));  // LG: "234B" without embeddings
  // The MTP layer is dense (Bridge's build_exaone_moe_layer_spec hands MCore a
  // dense layer spec for it), with eh_proj and its three norms.
  double mtp = attention + dense + 2 * h * h + 3 * h;
  MemoryModel m = whole_model("exaone_moe_236b_a23b_pretrain_64gpu_h100_bf16_config");
  CHECK(m.qk_norm);
  CHECK(m.rmsnorm);
  CHECK(m.unfused_glu);  // ExaoneMoeModelProvider: bias_activation_fusion False
  CHECK(m.mtp_layers == 1);
  CHECK(parameters(m, false) == Approx(main).epsilon(1e-12));
  CHECK(parameters(m, true) == Approx(main + mtp).epsilon(1e-12));
  // Had the MTP layer been a MoE layer (the default for a MoE stack whose
  // last layer is MoE), it would hold 128 experts more.
  CHECK(parameters(m, true) - parameters(m, false) < moe);
}

TEST_CASE("text shapes: K-EXAONE 2.0 750B-A37B, its shape matches NVIDIA's byte count",
          "[estimate]") {
  const Recipe* recipe = find_recipe("exaone_moe_2_0_750b_a37_pretrain_512gpu_h100_bf16_config");
  REQUIRE(recipe);
  REQUIRE(recipe->dims);
  const ModelDims& d = *recipe->dims;
  // LG's card: 78 layers (2 leading dense + 76 sparse), 1 MTP layer, hidden
  // 6144, intermediate 18432, 64 Q / 8 KV heads of 128, 256 experts (8
  // active, 1 shared) of 2048, vocab 153600.
  CHECK(d.num_layers == 78);
  CHECK(d.moe_dense_layers == 2);
  CHECK(d.num_moe_experts == 256);
  const double h = d.hidden_size, f = d.ffn_hidden_size, e = d.moe_ffn_hidden_size, V = d.vocab_size;
  const double hd = d.kv_channels;
  double attention = h * hd * (d.num_attention_heads + 2 * d.num_query_groups) + d.num_attention_heads * hd * h +
                     2 * hd + h;
  double dense = 3 * h * f + h;
  double moe = h + d.num_moe_experts * h + d.num_moe_experts * 3 * h * e + 3 * h * d.moe_shared_expert_intermediate_size;
  double layers = d.num_layers * attention + d.moe_dense_layers * dense + (d.num_layers - d.moe_dense_layers) * moe;
  double mtp = attention + dense + 2 * h * h + 3 * h;  // one physical MTP layer, dense
  double total = layers + (d.tied_embeddings ? 1 : 2) * V * h + h + mtp;
  CHECK(total == 749'357'465'344.0);
  // NVIDIA's verification card (MB examples/model_verification_cards/
  // k-exaone-2/card.yaml): 1,498,715,008,512 BF16 payload bytes, the
  // parameters in 2 B and the 76 MoE layers' 256 expert biases in fp32.
  CHECK(2 * total + 4 * 76 * 256 == 1'498'715'008'512.0);
  // The recipes are estimated with every layer's SwiGLU taken as clamped
  // (tests/estimate_glu_test.cpp), and say so.
  auto doc = estimate_json({"--recipe", "exaone_moe_2_0_750b_a37_pretrain_512gpu_h100_bf16_config"});
  REQUIRE(doc["estimate"].is_object());
  CHECK(doc["estimate"].dump().find("every layer assumed clamped") != std::string::npos);
}

TEST_CASE("text shapes: every Nemotron 3 Ultra and K-EXAONE 236B-A23B recipe is estimated", "[estimate]") {
  for (const char* recipe :
       {"nemotron_3_ultra_pretrain_24gpu_h100_bf16_config",
        "nemotron_3_ultra_sft_192gpu_h100_bf16_openmathinstruct2_packed_config",
        "nemotron_3_ultra_peft_32gpu_h100_bf16_openmathinstruct2_packed_config",
        "nemotron_3_ultra_pretrain_256gpu_gb200_fp8mx_config", "nemotron_3_ultra_pretrain_256gpu_gb300_fp8mx_config",
        "exaone_moe_236b_a23b_pretrain_64gpu_h100_bf16_config", "exaone_moe_236b_a23b_sft_64gpu_h100_bf16_config",
        "exaone_moe_236b_a23b_peft_16gpu_h100_bf16_config"}) {
    INFO(recipe);
    CHECK(estimate_json({"--recipe", recipe})["estimate"].is_object());
  }
}
