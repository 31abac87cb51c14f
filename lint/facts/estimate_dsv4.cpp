// DeepSeek V4's weights, read from Megatron-Core at NVIDIA/Megatron-LM dev
// d48bd6be0a85 (21 Aug 2026; "[MCore] dev HEAD" in Megatron Bridge
// 067f987df03b examples/model_verification_cards/deepseek-v4-flash/card.yaml)
// and the provider Bridge builds from the Hugging Face config
// (src/megatron/bridge/models/deepseek/deepseek_v4_bridge.py:390-526).
// Files below are Megatron-LM's unless they say MB.
#include "lint/facts/estimate_dsv4.h"

#include <algorithm>
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

double dsv4_hyper_connection_head_params(const Dsv4Shape& s) {
  // transformer_block.py:400-406, multi_token_prediction.py:2062-2066: hc_head_fn
  // (n x n·hidden), hc_head_base (n), hc_head_scale (1).
  double n = static_cast<double>(s.hc_mult);
  return n * n * static_cast<double>(s.hidden) + n + 1;
}

double dsv4_mtp_extra_params(const Dsv4Shape& s) {
  // multi_token_prediction.py:1950-2066: enorm and hnorm (hidden each), e_proj and
  // h_proj (hidden -> hidden each, in place of eh_proj under hyper-connections),
  // final_layernorm and the layer's own hyper-connection head.
  double h = static_cast<double>(s.hidden);
  return 2 * h + 2 * h * h + h + dsv4_hyper_connection_head_params(s);
}

double dsv4_model_params(const Dsv4Shape& s, bool with_mtp) {
  double h = static_cast<double>(s.hidden), vocab = static_cast<double>(s.vocab);
  double p = 2 * vocab * h + h + dsv4_hyper_connection_head_params(s);  // untied embedding and output layer, final norm
  for (int64_t i = 0; i < s.layers; ++i) p += dsv4_layer_params(s, s.ratios[static_cast<size_t>(i)]);
  if (with_mtp) {
    for (int64_t j = 0; j < s.mtp_layers; ++j) {
      p += dsv4_layer_params(s, s.ratios[static_cast<size_t>(s.layers + j)]) + dsv4_mtp_extra_params(s);
    }
  }
  return p;
}

// ---------------------------------------------------------------------------
// Saved activations, per token of one micro-batch on one rank. Sources (all
// Megatron-LM dev d48bd6be0a85, megatron/core/transformer/):
//  [ATT] experimental_attention_variant/deepseek_v4_hybrid_attention.py
//  [CSA] experimental_attention_variant/csa.py
//  [FSA] experimental_attention_variant/csa_utils/fused_sparse_attention.py
//  [DSA] experimental_attention_variant/dsa.py (FusedDSAIndexerLoss)
//  [HC]  hyper_connection.py
//  [TL]  transformer_layer.py (HyperConnectionTransformerLayer)
//  [TB]  transformer_block.py (the mHC recompute plan)
//  [MHC] megatron/core/fusions/fused_mhc_kernels.py (use_fused_mhc)
// Only the SBHD layout without context parallelism is modelled (what the
// recipes run: CP 1, no packed sequences); activations are 16-bit.

namespace {

constexpr double kBf16 = 2.0, kFp32 = 4.0;

double d(int64_t v) { return static_cast<double>(v); }

// [FSA] _get_topk_alignment (:111-122): the fused kernels pad top-k to 64
// (SM100) or 128 (SM90); 128, the larger, is assumed.
double padded_keys(int64_t keys) { return d((keys + 127) / 128 * 128); }

void add(std::vector<Dsv4Term>& t, const char* name, double bytes) {
  if (bytes > 0) t.push_back({name, bytes});
}

// [CSA] Compressor._forward_sbhd (:1149-1193) over entries `dim` wide:
// linear_wkv and linear_wgate give coff x dim per token (coff 2 at ratio 4,
// :1052-1053); the overlap transform makes new tensors of the same size; the
// softmax over each window keeps its fp32 output, its bf16 cast and the kv
// are kept by the product (:1177-1178); the norm keeps the dim-wide
// compressed entry (one per `ratio` tokens) and its output feeds the rope.
void compressor_terms(int64_t ratio, int64_t dim, const char* name, std::vector<Dsv4Term>& t) {
  double width = (ratio == 4 ? 2.0 : 1.0) * d(dim);
  add(t, name, width * (kBf16 + kFp32 + kBf16) + 2 * kBf16 * d(dim) / d(ratio));
}

}  // namespace

int64_t dsv4_attended_keys(const Dsv4Shape& s, int64_t ratio, int64_t seq) {
  // [CSA] get_window_topk_idxs (:73-79): window_size keys per query;
  // _forward_unfused_csa (:1881-1890) adds the indexer's min(index_topk,
  // s / 4) on CSA layers, get_compress_topk_idxs (:97-102) all s / ratio
  // compressed entries on the others.
  int64_t keys = s.window;
  if (ratio == 4) keys += std::min(s.index_topk, seq / 4);
  if (ratio > 4) keys += seq / ratio;
  return keys;
}

namespace {

// What the compressed sparse attention module keeps ([ATT] :315 calls it
// with the layer input and the q latent: the sparse attention, the
// compressor and the indexer run inside it).
void core_attention_terms(const Dsv4Shape& s, int64_t ratio, const Dsv4Run& run, std::vector<Dsv4Term>& t) {
  double dim = d(s.head_dim);
  double heads = d(s.heads) / d(std::max<int64_t>(1, run.tp));
  double keys = d(dsv4_attended_keys(s, ratio, run.seq));
  if (run.fused_csa) {
    // [FSA] CSASparseAttnFunc.forward (:731) / FusedCSAIndexerSparseAttnFunc
    // (:1791-1802): q (the query above), kv_full (the key and the compressed
    // entries: a new tensor when the layer compresses, [CSA] _build_kv_full
    // :1821-1824), int32 top-k indices, the output and its fp32 lse.
    if (ratio > 1) add(t, "fused attention: keys + compressed entries (kv_full)", kBf16 * dim * (1.0 + 1.0 / d(ratio)));
    add(t, "fused attention: output + lse (fp32)", kBf16 * heads * dim + kFp32 * heads);
    add(t, "fused attention: top-k key indices (int32, padded to 128)", 4.0 * padded_keys(static_cast<int64_t>(keys)));
  } else {
    // [CSA] unfused_compressed_sparse_attn (:685-706): the fp32 query, the
    // gathered keys cast to fp32 (one per attended key, kept by both
    // einsums), exp(scores) and the attention weights (fp32, kept by the
    // division and the second einsum), the int64 gather index, the int32
    // top-k and the bool mask of invalid keys.
    add(t, "unfused attention: query in fp32", kFp32 * heads * dim);
    add(t, "unfused attention: gathered keys in fp32", kFp32 * keys * dim);
    add(t, "unfused attention: exp(scores) + weights (fp32)", 2 * kFp32 * heads * keys);
    add(t, "unfused attention: key indices (int64 + int32) + mask", keys * (8 + 4 + 1));
  }
  if (ratio > 1) compressor_terms(ratio, s.head_dim, "compressor: kv, window softmax (fp32 + bf16), entries", t);
  if (ratio == 4) {
    // The indexer trains in every training step on both paths ([CSA]
    // :1871 unfused, :2147 fused): forward_before_topk (:1577-1599) makes q
    // (index heads x index dim, after RoPE and the rotation), its own
    // compressor's keys and the head weights; the unfused path keeps them in
    // FusedDSAIndexerLoss ([DSA] :1069, weights cast to fp32 at [CSA] :1877)
    // with the int64 top-k, the fp32 causal mask over the s / 4 compressed
    // entries ([CSA] :1861-1868, [DSA] :1074) and the window keys' fp32 lse
    // (:1878); the fused path keeps their gradients instead ([FSA] :1791-1802),
    // of the same size.
    double ih = d(s.index_heads), idim = d(s.index_head_dim);
    add(t, "indexer q + head weights (bf16 and fp32)", kBf16 * ih * idim + (kBf16 + kFp32) * ih);
    compressor_terms(ratio, s.index_head_dim, "indexer compressor: kv, window softmax, entries", t);
    if (!run.fused_csa) {
      double compressed = d(run.seq / 4);
      add(t, "indexer loss: top-k (int64) + causal mask (fp32) + lse", 8.0 * d(std::min(s.index_topk, run.seq / 4)) +
                                                                         kFp32 * compressed + kFp32 * heads);
    }
  }
}

}  // namespace

std::vector<Dsv4Term> dsv4_attention_terms(const Dsv4Shape& s, int64_t ratio, const Dsv4Run& run) {
  std::vector<Dsv4Term> t;
  double h = d(s.hidden), q_lora = d(s.q_lora), dim = d(s.head_dim);
  double heads = d(s.heads) / d(std::max<int64_t>(1, run.tp));
  // [ATT] :662 linear_q_down_proj, :720 linear_kv_proj and [CSA] :1161-1162
  // the compressors' GEMMs read the input norm's output; under mhc recompute
  // [TL] :2203-2212 checkpoints that norm and frees its output.
  if (!run.recompute_mhc) add(t, "attention input (input norm output, GEMM input)", kBf16 * h);
  // [ATT] :685 q_layernorm keeps its input and fp32 rstd; its output is the
  // input of linear_q_up_proj (:707) and the indexer's linear_wq_b ([CSA] :1577).
  add(t, "q_layernorm input + rstd", kBf16 * q_lora + kFp32);
  add(t, "q latent (q up-projection and indexer input)", kBf16 * q_lora);
  if (!run.recompute_up_proj) {
    // [ATT] :707-711 the q up-projection output, kept by the compiled q RMS
    // norm, and the normed query after RoPE (in place, :758), kept by the core
    // attention; :720-721 the kv projection output and the normed key. Under
    // mla_up_proj recompute (:866-877, :340-342) all are freed after the core
    // attention and recomputed.
    add(t, "q up-projection output + normed query after RoPE", 2 * kBf16 * heads * dim + kFp32 * heads);
    add(t, "kv projection output + normed key + rstd", 2 * kBf16 * dim + kFp32);
  }
  // Fine-grained offloading of "core_attn" moves what the module keeps to
  // the host ([ATT] :311-331: the tensors saved inside its context).
  if (!run.offload_core_attn) core_attention_terms(s, ratio, run, t);
  // [ATT] :405-415 inverse RoPE out of place: its output is kept by the
  // grouped projection's einsum (:468), whose o_groups x o_lora output
  // linear_proj keeps (:476).
  add(t, "grouped output projection input (after inverse RoPE)", kBf16 * heads * dim);
  // Fine-grained offloading of "attn_proj" moves linear_proj's input to the
  // host ([ATT] :474-477).
  if (!run.offload_attn_proj) add(t, "linear_proj input (o_groups x o_lora)", kBf16 * d(s.o_groups * s.o_lora));
  return t;
}

std::vector<Dsv4Term> dsv4_hyper_connection_terms(const Dsv4Shape& s, const Dsv4Run& run) {
  std::vector<Dsv4Term> t;
  double h = d(s.hidden), n = d(s.hc_mult);
  // Per module, two a layer ([TL] :2195-2199 attention, :2294-2296 MLP):
  // [HC] compute_mappings (:371-421) runs outside any checkpoint; on the
  // native path _projection_and_get_norm (:321-335) casts the n streams to
  // fp32 for the compiled projection, which keeps that copy for the weight
  // gradient and the norm. The fused kernel (use_fused_mhc: [MHC]
  // CutileProjRmsComputeH :2879-2913) keeps the streams as given, a view of
  // the n-stream input counted below (freed with it under mhc recompute).
  // The mixing logits, the norm scale, the Sinkhorn input (:34-49) and the
  // bf16 h_pre, h_post, h_res are small.
  double mixing = n * n + 2 * n;
  if (!run.fused_mhc) {
    add(t, "hyper-connections: fp32 copy of the n streams (mapping projection input)", 2 * kFp32 * n * h);
  }
  add(t, "hyper-connections: mapping logits, Sinkhorn input, mixing weights",
      2 * (kFp32 * (mixing + 1 + n * n) + kBf16 * mixing));
  if (!run.recompute_mhc) {
    // [HC] aggregate (:507-523) and the H_res/H_post mix (:132-144) keep the
    // n-stream input of each module: 16-bit streams are assumed, though
    // [TL] :2298-2302 says the MLP's aggregate may be fp32 (it then replaces
    // the fp32 copy above, which is counted anyway). The attention's
    // aggregated input is kept by its input norm (the MoE block's pre-MLP
    // norm input is counted by the MoE code). Under mhc recompute [TB]
    // :801-829 puts the stage's layers in one recompute block whose
    // aggregates, norms and mixes are checkpointed: only their small
    // inputs and the stage's last output stay.
    add(t, "hyper-connections: n-stream input of both modules", 2 * kBf16 * n * h);
    add(t, "hyper-connections: aggregated attention input (input norm input) + rstd", kBf16 * h + kFp32);
  }
  // [HC] :132-144 and :824-904: the mix keeps the layer output x (the
  // attention's linear_proj output, the MoE output) with or without checkpoint.
  add(t, "hyper-connections: attention and MoE outputs kept by the H_post mix", 2 * kBf16 * h);
  return t;
}

double dsv4_layer_token_bytes(const Dsv4Shape& s, int64_t ratio, const Dsv4Run& run) {
  double total = 0;
  for (const Dsv4Term& term : dsv4_attention_terms(s, ratio, run)) total += term.bytes;
  for (const Dsv4Term& term : dsv4_hyper_connection_terms(s, run)) total += term.bytes;
  return total;
}

std::vector<int64_t> dsv4_bridge_stage_layers(int64_t layers, int64_t pp) {
  // MB src/megatron/bridge/models/deepseek/deepseek_v4_bridge.py:137-163:
  // divmod(num_layers, pp); stage i gets base + (i < extra) decoder layers.
  std::vector<int64_t> out;
  if (pp <= 0 || layers <= 0) return out;
  int64_t base = layers / pp, extra = layers % pp;
  for (int64_t i = 0; i < pp; ++i) out.push_back(base + (i < extra ? 1 : 0));
  return out;
}

}  // namespace mblint
