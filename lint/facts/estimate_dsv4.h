// DeepSeek V4 (Megatron-Core's experimental attention variant "dsv4_hybrid",
// built by Megatron Bridge 067f987df03b's DeepSeekV4Bridge) in the memory
// estimate: the weights of its layers, counted from Megatron-Core at
// NVIDIA/Megatron-LM dev d48bd6be0a85 (the branch Bridge's DeepSeek-V4-Flash
// verification card names; the submodule commit 2a75ac12 has none of the
// modules, main lacks csa.py). The terms and their sources are in
// estimate_dsv4.cpp.
//
// What is not modelled is the activations (csa.py's compressed sparse
// attention on its fused and unfused paths, the hyper-connection streams and
// their "mhc" recompute, the MTP layer's e_proj/h_proj streams): a DeepSeek V4
// job is declined with dsv4_not_modelled() as its reason.
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

// What an MTP layer adds around its decoder layer (norms, e_proj, h_proj,
// final norm, the hyper-connection head).
double dsv4_mtp_extra_params(const Dsv4Shape& s);

// Parameters of the whole model: embedding, decoder layers, final norm and
// hyper-connection head, output layer, and the MTP layers when `with_mtp`.
double dsv4_model_params(const Dsv4Shape& s, bool with_mtp);

// Why a DeepSeek V4 job is not estimated: what is counted and what is not,
// with the upstream files that hold the missing parts.
std::string dsv4_not_modelled(const Dsv4Shape& s);

}  // namespace mblint
