// DeepSeek sparse attention (GLM-5.x) in the memory estimate, derived by hand
// from Megatron-Core at NVIDIA/Megatron-LM 2a75ac12c54b (the submodule
// Megatron Bridge 067f987df03b pins), megatron/core/transformer/
// experimental_attention_variant/: dsa.py (DSAIndexer, DSAttention,
// is_dsa_skip_topk_layer), dsa_cudnn_kernels.py (the fused functions'
// save_for_backward) and absorbed_mla.py.
#include <catch2/catch.hpp>

#include "lint/facts/estimate.h"
#include "lint/facts/estimate_dsa.h"
#include "tests/dense_model.h"
#include "tests/memory_units.h"

using namespace mblint;

namespace {

// GLM-5.2 as data/model_dims.csv records it (78 layers, 3 dense, MLA, 256
// experts top-8 + 1 shared, indexer 32 heads x 128, top-2048, shared top-k
// every 4 layers after the first 3) on one GPU: TP = PP = EP = 1, MTP 1.
MemoryModel glm52() {
  MemoryModel m = test::swiglu_decoder({78, 6144, 64, 64, 96, 12288, 154880, false});
  m.mla = true;
  m.q_lora = 2048;
  m.kv_lora = 512;
  m.qk_head = 192;
  m.qk_rope = 64;
  m.v_head = 256;
  m.experts = 256;
  m.topk = 8;
  m.moe_ffn = 2048;
  m.shared_ffn = 2048;
  m.moe_pattern.assign(78, true);
  for (int i = 0; i < 3; ++i) m.moe_pattern[static_cast<size_t>(i)] = false;
  m.mtp_layers = 1;
  m.dsa_heads = 32;
  m.dsa_head_dim = 128;
  m.dsa_topk = 2048;
  m.dsa_topk_freq = 4;
  m.dsa_skip_offset = 3;
  m.dsa_indexer_loss = true;
  m.dsa_indexer = dsa_indexer_layers(78, 3, 4);
  m.stage_mtp = {1};
  return m;
}

}  // namespace

TEST_CASE("estimate: DSA index sharing builds an indexer on the layers that compute top-k", "[estimate]") {
  // is_dsa_skip_topk_layer(n, offset, freq): skip when max(n - max(offset, 1), 0) % freq != 0.
  CHECK(dsa_computes_topk(1, 3, 4));
  CHECK(dsa_computes_topk(3, 3, 4));
  CHECK_FALSE(dsa_computes_topk(4, 3, 4));
  CHECK_FALSE(dsa_computes_topk(6, 3, 4));
  CHECK(dsa_computes_topk(7, 3, 4));
  CHECK(dsa_computes_topk(75, 3, 4));
  CHECK_FALSE(dsa_computes_topk(78, 3, 4));
  // GLM-5.2: layers 1-3 and 7, 11, ..., 75: 3 + 18 = 21 of 78. GLM-5.1
  // (index_topk_freq 1): every layer.
  auto glm52_layers = dsa_indexer_layers(78, 3, 4);
  CHECK(std::count(glm52_layers.begin(), glm52_layers.end(), true) == 21);
  auto glm51_layers = dsa_indexer_layers(78, 0, 1);
  CHECK(std::count(glm51_layers.begin(), glm51_layers.end(), true) == 78);
}

TEST_CASE("estimate: GLM-5.2's parameters match its checkpoint's element count", "[estimate]") {
  // Megatron Bridge's verification card (examples/model_verification_cards/
  // glm5-2/card.yaml, HF revision 4d67f66c) counts 753,329,940,480 elements in
  // the checkpoint: 78 layers and the MTP layer. Megatron-Core holds the same
  // weights except the 76 MoE layers' e_score_correction_bias (256 each),
  // which it keeps as the router's expert_bias buffer. Per indexer:
  // wq_b 2048 x 32·128 + wk 6144 x 128 + k_norm 2·128 + weights_proj 6144 x 32.
  const double indexer = 2048.0 * 4096 + 6144.0 * 128 + 256 + 6144.0 * 32;
  CHECK(indexer == 9371904.0);
  MemoryModel m = glm52();
  CHECK(dsa_indexer_params(m) == indexer);
  double params = test::bf16_parameters(m);
  CHECK(params == Approx(753329940480.0 - 76 * 256).epsilon(1e-12));
  // Without index sharing every layer (and the MTP layer) has its indexer:
  // 57 more, as GLM-5.1.
  MemoryModel every = m;
  every.dsa_indexer = dsa_indexer_layers(78, 0, 1);
  CHECK(test::bf16_parameters(every) - params == Approx(57 * indexer).epsilon(1e-9));
}

TEST_CASE("estimate: a DSA layer's saved activations, by hand", "[estimate]") {
  // A small DSA model: hidden 1024, 8 heads, q_lora 256, kv_lora 128, qk
  // 64 + rope 32, v 64, dense SwiGLU MLP 2048; indexer 4 heads x 64, top-256;
  // s 1024, b 2 (T = 2048 tokens), TP = CP = 1, no dropout, bf16.
  MemoryModel m = glm52();
  m.hidden = 1024;
  m.heads = 8;
  m.ffn = 2048;
  m.q_lora = 256;
  m.kv_lora = 128;
  m.qk_head = 64;
  m.qk_rope = 32;
  m.v_head = 64;
  m.experts = 0;
  m.moe_pattern.clear();
  m.seq = 1024;
  m.micro_batch = 2;
  m.dsa_heads = 4;
  m.dsa_head_dim = 64;
  m.dsa_topk = 256;
  const double T = 2048, h = 1024, H = 8;
  double attention = 2 * T * h                // input norm input
                     + 2 * T * h              // q/kv down-projection input
                     + 4 * T * 256            // q down output + q_layernorm output (qr)
                     + 2 * T * (2 * 128 + 32)  // kv down output + kv_layernorm
                     // [absorbed_mla.py] the q up-projection output, kept by the k_up einsum
                     + 2 * T * H * (64 + 32)
                     // [dsa_cudnn_kernels.py save_for_backward] latent query and key (kv_lora + rope),
                     // latent output (kv_lora), fp32 log-sum-exp per head, int32 top-k indices
                     + 2 * T * H * (128 + 32) + 2 * T * (128 + 32) + 2 * T * H * 128 + 4 * T * H + 4 * T * 256
                     + 2 * T * H * 64;        // v up-projection output: linear_proj's input
  double mlp = 2 * T * h + 2 * T * 2048 * 2 + 2 * T * 2048 + 2 * T * h;
  CHECK(layer_activation_bytes(m, false) == Approx(attention + mlp).epsilon(1e-12));
  // The indexer (with its loss, as GLM-5's bridge sets it: 0.001): k_norm's
  // input and fp32 mean/rstd, and its q (4 x 64), weights (4) and key (64)
  // or their gradients, computed in the forward pass.
  double indexer = (2 * 64 + 8) * T + 2 * T * (4 * 64 + 4) + 2 * T * 64;
  CHECK(dsa_indexer_bytes(m) == Approx(indexer).epsilon(1e-12));
  // With CP 2 the latent key and the indexer's key are the whole sequence's.
  MemoryModel cp2 = m;
  cp2.cp = 2;
  double half = T / 2;
  CHECK(dsa_indexer_bytes(cp2) == Approx((2 * 64 + 8) * half + 2 * half * (4 * 64 + 4) + 2 * T * 64).epsilon(1e-12));
  // Without the indexer loss the indexer runs under no_grad and keeps nothing.
  MemoryModel no_loss = m;
  no_loss.dsa_indexer_loss = false;
  CHECK(dsa_indexer_bytes(no_loss) == 0);
}
