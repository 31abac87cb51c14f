// DeepSeek V4 (Megatron-Core's experimental attention variant "dsv4_hybrid",
// built by Megatron Bridge 067f987df03b's DeepSeekV4Bridge) in the memory
// estimate: the weights of its layers, counted from Megatron-Core at
// NVIDIA/Megatron-LM dev d48bd6be0a85 (the branch Bridge's DeepSeek-V4-Flash
// verification card names; the submodule commit 2a75ac12 has none of the
// modules, main lacks csa.py), and what a layer's attention and
// hyper-connections save per token for the backward pass, from the same
// code. The terms and their sources are in estimate_dsv4.cpp.
//
// The stage estimate built from these (per-stage weights on the layout
// Bridge writes, the MoE blocks through estimate.cpp's moe_block_bytes, the
// mhc recompute blocks, the hyper-connection heads and the MTP layer) is
// estimate_dsv4_stage.{h,cpp}.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lint/model/catalog.h"

namespace mblint {

// One DeepSeek V4 model as data/model_dims.csv records it (the columns dsv4
// and csa_compress_ratios beside the MLA and MoE ones).
struct Dsv4Shape {
  int64_t hidden = 0, heads = 0, head_dim = 0, rope_dim = 0, q_lora = 0;
  int64_t o_groups = 0, o_lora = 0, hc_mult = 0, window = 0, hash_layers = 0;
  int64_t index_heads = 0, index_head_dim = 0, index_topk = 0;
  int64_t experts = 0, moe_ffn = 0, shared_ffn = 0, vocab = 0;
  int64_t layers = 0, mtp_layers = 0;
  std::vector<int64_t> ratios;  // per decoder layer, then per MTP layer: 0, 4 or 128
};

// The shape of a catalogued DeepSeek V4 model; nullopt when `dims` records none.
std::optional<Dsv4Shape> dsv4_shape(const ModelDims* dims);

// Parameters of one DSv4HybridSelfAttention with compression ratio `ratio`
// (its compressor when ratio > 1, its indexer when ratio == 4).
double dsv4_attention_params(const Dsv4Shape& s, int64_t ratio);

// Parameters of one HyperConnectionModule (a layer has two).
double dsv4_hyper_connection_params(const Dsv4Shape& s);

// Parameters of one MoE block (router, routed experts, shared expert).
double dsv4_moe_params(const Dsv4Shape& s);

// Parameters of one decoder layer with compression ratio `ratio`.
double dsv4_layer_params(const Dsv4Shape& s, int64_t ratio);

// The hyper-connection head that folds the n streams back to one (the
// decoder's on the last stage, and each MTP layer's).
double dsv4_hyper_connection_head_params(const Dsv4Shape& s);

// What an MTP layer adds around its decoder layer (norms, e_proj, h_proj,
// final norm, the hyper-connection head).
double dsv4_mtp_extra_params(const Dsv4Shape& s);

// Parameters of the whole model: embedding, decoder layers, final norm and
// hyper-connection head, output layer, and the MTP layers when `with_mtp`.
double dsv4_model_params(const Dsv4Shape& s, bool with_mtp);

// What a job sets that changes what a DeepSeek V4 layer keeps for the
// backward pass.
struct Dsv4Run {
  int64_t seq = 0;           // tokens of one sequence (SBHD, no context parallelism)
  int64_t tp = 1;            // attention heads per rank: heads / tp
  bool fused_csa = false;    // dsa_kernel_backend != "none" (apply_dsa_kernel_fusion)
  bool fused_mhc = false;    // use_fused_mhc (the cuTile hyper-connection kernels)
  bool recompute_mhc = false;       // "mhc" in recompute_modules (selective)
  bool recompute_up_proj = false;   // "mla_up_proj" in recompute_modules (selective)
  int64_t mhc_block_layers = 0;     // mhc_recompute_layer_num: layers per mhc recompute block (0: the stage's)
  // Fine-grained activation offloading of "core_attn" / "attn_proj": what
  // the sparse attention module keeps, linear_proj's input, on the host.
  bool offload_core_attn = false, offload_attn_proj = false;
};

// Keys one query attends on a layer with compression ratio `ratio`: the
// sliding window, plus the indexer's top-k compressed entries (ratio 4) or
// every compressed entry (ratio 128).
int64_t dsv4_attended_keys(const Dsv4Shape& s, int64_t ratio, int64_t seq);

// One named saved tensor, in bytes per token of one micro-batch on one rank.
struct Dsv4Term {
  std::string name;
  double bytes = 0;
};

// What one DSv4HybridSelfAttention with compression ratio `ratio` keeps per
// token: projections, the compressed sparse attention (unfused or fused
// path), its compressor and indexer.
std::vector<Dsv4Term> dsv4_attention_terms(const Dsv4Shape& s, int64_t ratio, const Dsv4Run& run);

// What a layer's two HyperConnectionModules keep per token, and the layer
// outputs their residual mix keeps (the MoE block's own tensors are not in it).
std::vector<Dsv4Term> dsv4_hyper_connection_terms(const Dsv4Shape& s, const Dsv4Run& run);

// The sum of both, per token: a layer's saved bytes without its MoE block.
double dsv4_layer_token_bytes(const Dsv4Shape& s, int64_t ratio, const Dsv4Run& run);

// The decoder layers per pipeline stage of the layout Bridge writes when the
// recipe leaves it unset (set_deepseek_v4_pipeline_model_parallel_layout): an
// even split, the first `layers % pp` stages one layer more; the embedding
// on the first stage, the MTP layers and the loss on the last.
std::vector<int64_t> dsv4_bridge_stage_layers(int64_t layers, int64_t pp);

}  // namespace mblint
