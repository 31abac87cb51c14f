// DeepSeek sparse attention (DSA) in the memory estimate. Sources, read at
// NVIDIA/Megatron-LM 2a75ac12c54b (the submodule Megatron Bridge 067f987df03b
// pins), megatron/core/transformer/experimental_attention_variant/:
//  [DSA]  dsa.py: DSAIndexer (linear_wq_b q_lora -> heads·dim, linear_wk
//         h -> dim, a LayerNorm k_norm, linear_weights_proj h -> heads, all
//         parallel_mode "duplicated"), DSAttention (an indexer only on layers
//         is_dsa_skip_topk_layer does not skip; x and qr detached, so the
//         indexer trains only through its loss, under grad only when
//         dsa_indexer_loss_coeff > 0; with CP the keys are all-gathered to
//         the full sequence), FusedDSAIndexerLoss (saves the indexer's q,
//         weights, k and the top-k indices).
//  [CUD]  dsa_cudnn_kernels.py (dsa_kernel_backend "cudnn", what the GLM-5
//         recipes set): FusedIndexerSparseAttnFunc / FusedSparseAttentionFunc
//         save the latent query and key, int32 top-k key indices (sq·b x
//         topk), the latent output and its log-sum-exp; with the indexer
//         loss, FusedQKTopKWithSparseLossFunc computes the indexer's
//         gradients in the forward pass and keeps them (q, k, weights).
//  [AMLA] absorbed_mla.py (the DSA spec's AbsorbedMLASelfAttention, in
//         models/gpt/experimental_attention_variant_module_specs.py): the
//         query's no-rope part times the k up-projection weight gives a
//         kv_lora-wide latent query (the einsum keeps the q up-projection
//         output); keys are the kv_lora + rope latent, gathered over SP; the
//         latent output goes through the v up-projection weight to the
//         heads·v_head input of linear_proj.
#include "lint/facts/estimate_dsa.h"

#include <algorithm>
#include <cmath>

namespace mblint {

namespace {

constexpr double kBf16 = 2.0;  // activations are 16-bit, as the rest of the estimate assumes

bool recomputes(const MemoryModel& m, const char* module) {
  return m.recompute == "selective" && m.recompute_modules.count(module) > 0;
}

}  // namespace

bool dsa_computes_topk(int64_t layer_number, int64_t skip_topk_offset, int64_t topk_freq) {
  if (topk_freq <= 1) return true;  // DSAttention: index sharing only with topk_freq > 1
  int64_t offset = std::max<int64_t>(skip_topk_offset, 1);
  return std::max<int64_t>(layer_number - offset, 0) % topk_freq == 0;
}

std::vector<bool> dsa_indexer_layers(int64_t layers, int64_t skip_topk_offset, int64_t topk_freq) {
  std::vector<bool> out(static_cast<size_t>(std::max<int64_t>(0, layers)));
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = dsa_computes_topk(static_cast<int64_t>(i) + 1, skip_topk_offset, topk_freq);
  }
  return out;
}

double dsa_indexers_on_stage(const MemoryModel& m, int stage) {
  if (m.dsa_heads <= 0 || m.dsa_indexer.empty()) return 0;
  return marked_layers_on_stage(m, m.dsa_indexer, stage);
}

double dsa_indexer_params(const MemoryModel& m) {
  // [DSA] DSAIndexer.__init__: wq_b reads the q LoRA latent (the hidden
  // states without q_lora_rank); k_norm is a LayerNorm (weight and bias).
  double h = static_cast<double>(m.hidden);
  double q_in = m.q_lora > 0 ? static_cast<double>(m.q_lora) : h;
  double heads = static_cast<double>(m.dsa_heads), dim = static_cast<double>(m.dsa_head_dim);
  return q_in * heads * dim + h * dim + 2 * dim + h * heads;
}

std::vector<std::pair<std::string, double>> dsa_attention_terms(const MemoryModel& m, double tokens) {
  std::vector<std::pair<std::string, double>> t;
  double heads_local = static_cast<double>(m.heads) / static_cast<double>(m.tp);
  double latent = static_cast<double>(m.kv_lora + m.qk_rope);
  if (!recomputes(m, "mla_up_proj")) {
    // [AMLA] einsum("...nd,ndk->...nk", q_no_pe, k_up_weight) keeps q_no_pe,
    // a view of the whole q up-projection output.
    t.emplace_back("absorbed MLA q up-projection output", kBf16 * tokens * heads_local * (m.qk_head + m.qk_rope));
  }
  // [CUD] q_flat and kv_flat: the latent query per head and the one latent
  // key, which DSAttention all-gathers over CP to the full sequence.
  t.emplace_back("absorbed MLA latent query", kBf16 * tokens * heads_local * latent);
  t.emplace_back("absorbed MLA latent key (full sequence under CP)", kBf16 * tokens * static_cast<double>(m.cp) * latent);
  if (!recomputes(m, "core_attn")) {
    t.emplace_back("sparse attention latent output", kBf16 * tokens * heads_local * static_cast<double>(m.kv_lora));
    t.emplace_back("sparse attention log-sum-exp (fp32)", 4 * tokens * heads_local);
    t.emplace_back("sparse attention top-k key indices (int32)", 4 * tokens * static_cast<double>(m.dsa_topk));
  }
  return t;
}

std::vector<std::pair<std::string, double>> dsa_indexer_terms(const MemoryModel& m, double tokens) {
  std::vector<std::pair<std::string, double>> t;
  if (!m.dsa_indexer_loss) return t;  // [DSA] no loss: the indexer runs under no_grad and keeps nothing
  double heads = static_cast<double>(m.dsa_heads), dim = static_cast<double>(m.dsa_head_dim);
  // [DSA] k_norm (LayerNorm) keeps its input and fp32 mean and rstd per row.
  t.emplace_back("DSA indexer k_norm input + statistics (fp32)", (kBf16 * dim + 8) * tokens);
  // [CUD]/[DSA] the indexer's q (heads x dim) and weights (heads) per local
  // query, and its key over the CP-gathered sequence: kept as tensors or as
  // their gradients computed in the forward pass.
  t.emplace_back("DSA indexer q, weights and gathered k (or their gradients)",
                 kBf16 * tokens * (heads * dim + heads) + kBf16 * tokens * static_cast<double>(m.cp) * dim);
  return t;
}

double dsa_indexer_bytes(const MemoryModel& m) {
  double tokens = static_cast<double>(m.seq) / static_cast<double>(m.cp) * static_cast<double>(m.micro_batch);
  double total = 0;
  for (const auto& term : dsa_indexer_terms(m, tokens)) total += term.second;
  return total;
}

}  // namespace mblint
