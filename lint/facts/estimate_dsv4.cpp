// DeepSeek V4's weights, read from Megatron-Core at NVIDIA/Megatron-LM dev
// d48bd6be0a85 (21 Aug 2026; "[MCore] dev HEAD" in Megatron Bridge
// 067f987df03b examples/model_verification_cards/deepseek-v4-flash/card.yaml)
// and the provider Bridge builds from the Hugging Face config
// (src/megatron/bridge/models/deepseek/deepseek_v4_bridge.py:390-526).
// Files below are Megatron-LM's unless they say MB.
#include "lint/facts/estimate_dsv4.h"

#include <fmt/format.h>

#include <sstream>

#include "lint/model/catalog_fields.h"

namespace mblint {

std::optional<Dsv4Shape> dsv4_shape(const ModelDims* dims) {
  if (!dims || !dims->dsv4 || !dims->csa_compress_ratios) return std::nullopt;
  std::vector<int64_t> f = slash_numbers(dims->dsv4, 8);
  if (f.size() != 8) return std::nullopt;
  Dsv4Shape s;
  s.hidden = dims->hidden_size;
  s.heads = dims->num_attention_heads;
  s.head_dim = dims->v_head_dim;  // DSv4: one head dim for q, k and v (head_dim 512)
  s.rope_dim = dims->qk_pos_emb_head_dim;
  s.q_lora = dims->q_lora_rank;
  s.hc_mult = f[0];
  s.o_groups = f[1];
  s.o_lora = f[2];
  s.window = f[3];
  s.hash_layers = f[4];
  s.index_heads = f[5];
  s.index_head_dim = f[6];
  s.index_topk = f[7];
  s.experts = dims->num_moe_experts;
  s.moe_ffn = dims->moe_ffn_hidden_size;
  s.shared_ffn = dims->moe_shared_expert_intermediate_size;
  s.vocab = dims->vocab_size;
  s.layers = dims->num_layers;
  s.mtp_layers = dims->mtp_num_layers;
  std::istringstream ratios(dims->csa_compress_ratios);
  for (int64_t r = 0; ratios >> r;) s.ratios.push_back(r);
  if (static_cast<int64_t>(s.ratios.size()) != s.layers + s.mtp_layers) return std::nullopt;
  return s;
}

namespace {

// A Compressor (experimental_attention_variant/csa.py:1050-1103) over
// `head_dim`-wide entries: linear_wkv and linear_wgate (hidden -> coff x
// head_dim, "duplicated", no bias), the fp32 position bias ape (ratio x coff x
// head_dim) and an RMSNorm over head_dim; coff is 2 for ratio 4 (overlapping
// windows), else 1.
double compressor_params(const Dsv4Shape& s, int64_t ratio, int64_t head_dim) {
  double coff = ratio == 4 ? 2.0 : 1.0;
  double width = coff * static_cast<double>(head_dim);
  return 2.0 * static_cast<double>(s.hidden) * width + static_cast<double>(ratio) * width + static_cast<double>(head_dim);
}

// A CSAIndexer (csa.py:1465-1520): linear_wq_b (q_lora -> index heads x index
// head dim), linear_weights_proj (hidden -> index heads) and its own
// compressor over index_head_dim-wide entries.
double indexer_params(const Dsv4Shape& s, int64_t ratio) {
  double q_lora = static_cast<double>(s.q_lora), hidden = static_cast<double>(s.hidden);
  double heads = static_cast<double>(s.index_heads), dim = static_cast<double>(s.index_head_dim);
  return q_lora * heads * dim + hidden * heads + compressor_params(s, ratio, s.index_head_dim);
}

}  // namespace

double dsv4_attention_params(const Dsv4Shape& s, int64_t ratio) {
  double h = static_cast<double>(s.hidden), q_lora = static_cast<double>(s.q_lora);
  double d = static_cast<double>(s.head_dim), heads = static_cast<double>(s.heads);
  double o_width = static_cast<double>(s.o_groups * s.o_lora);
  // experimental_attention_variant/deepseek_v4_hybrid_attention.py:
  // linear_q_down_proj h -> q_lora with q_layernorm (:522-540, :578), linear_q_up_proj
  // q_lora -> heads x head_dim (:542-555), linear_kv_proj h -> head_dim (one
  // MQA head, :557-570) with kv_layernorm (:572); the grouped output projection
  // linear_o_group_proj, a plain parameter of (o_groups x o_lora) x (heads x
  // head_dim / o_groups) (:172-186), then linear_proj o_groups x o_lora -> h (:188-195).
  double p = h * q_lora + q_lora + q_lora * heads * d + h * d + d;
  p += o_width * (heads * d / static_cast<double>(s.o_groups)) + o_width * h;
  p += heads;  // csa.py:1757-1762: attn_sink, one fp32 logit per head
  // csa.py:1764-1795: a compressor when ratio > 1 (0 = sliding window only), an
  // indexer only when ratio == 4 (outside csa_dense_mode).
  if (ratio > 1) p += compressor_params(s, ratio, s.head_dim);
  if (ratio == 4) p += indexer_params(s, ratio);
  return p;
}

double dsv4_hyper_connection_params(const Dsv4Shape& s) {
  // hyper_connection.py:239-261: mapping_proj (n x hidden -> n² + 2n, no bias),
  // alpha_pre, alpha_post, alpha_res (one each) and bias (n² + 2n); n = hc_mult.
  double n = static_cast<double>(s.hc_mult);
  double outputs = n * n + 2 * n;
  return n * static_cast<double>(s.hidden) * outputs + 3 + outputs;
}

double dsv4_moe_params(const Dsv4Shape& s) {
  double h = static_cast<double>(s.hidden);
  // moe/router.py: Router.__init__ builds the weight (experts x hidden, :77-79)
  // on every layer, hash layers included; a hash layer routes with its tid2eid
  // buffer (:200-219), the others keep expert_bias as a buffer (:220-240):
  // neither is a parameter.
  // Routed experts and the shared expert are SwiGLU MLPs (gated_linear_unit:
  // fc1 hidden -> 2 x ffn, fc2 ffn -> hidden).
  double routed = static_cast<double>(s.experts) * 3.0 * h * static_cast<double>(s.moe_ffn);
  return static_cast<double>(s.experts) * h + routed + 3.0 * h * static_cast<double>(s.shared_ffn);
}

double dsv4_layer_params(const Dsv4Shape& s, int64_t ratio) {
  // transformer_layer.py:1930-1939: two hyper-connection modules (attention and
  // MLP) around the two pre-norms (input_layernorm, pre_mlp_layernorm: RMSNorm).
  return dsv4_attention_params(s, ratio) + 2 * dsv4_hyper_connection_params(s) + 2.0 * static_cast<double>(s.hidden) +
         dsv4_moe_params(s);
}

namespace {

// The hyper-connection head that folds the n streams back to one
// (transformer_block.py:400-406, multi_token_prediction.py:2062-2066): hc_head_fn
// (n x n·hidden), hc_head_base (n), hc_head_scale (1).
double hyper_connection_head_params(const Dsv4Shape& s) {
  double n = static_cast<double>(s.hc_mult);
  return n * n * static_cast<double>(s.hidden) + n + 1;
}

}  // namespace

double dsv4_mtp_extra_params(const Dsv4Shape& s) {
  // multi_token_prediction.py:1950-2066: enorm and hnorm (hidden each), e_proj and
  // h_proj (hidden -> hidden each, in place of eh_proj under hyper-connections),
  // final_layernorm and the layer's own hyper-connection head.
  double h = static_cast<double>(s.hidden);
  return 2 * h + 2 * h * h + h + hyper_connection_head_params(s);
}

double dsv4_model_params(const Dsv4Shape& s, bool with_mtp) {
  double h = static_cast<double>(s.hidden), vocab = static_cast<double>(s.vocab);
  double p = 2 * vocab * h + h + hyper_connection_head_params(s);  // untied embedding and output layer, final norm
  for (int64_t i = 0; i < s.layers; ++i) p += dsv4_layer_params(s, s.ratios[static_cast<size_t>(i)]);
  if (with_mtp) {
    for (int64_t j = 0; j < s.mtp_layers; ++j) {
      p += dsv4_layer_params(s, s.ratios[static_cast<size_t>(s.layers + j)]) + dsv4_mtp_extra_params(s);
    }
  }
  return p;
}

std::string dsv4_not_modelled(const Dsv4Shape& s) {
  return fmt::format(
      "DeepSeek V4 (experimental attention variant dsv4_hybrid) is not modelled: its {:.1f} B parameters are counted "
      "(lint/facts/estimate_dsv4.cpp), its activations are not: the compressed sparse attention's saved tensors "
      "(csa.py, fused and unfused paths), the {} hyper-connection streams and their mhc recompute "
      "(hyper_connection.py), the MTP layer's e_proj/h_proj streams (multi_token_prediction.py); "
      "NVIDIA/Megatron-LM branch dev d48bd6be0a85",
      dsv4_model_params(s, true) / 1e9, s.hc_mult);
}

}  // namespace mblint
