// DeepSeek sparse attention (DSA) in the memory estimate: the lightning
// indexer's weights and saved activations, and the absorbed-MLA sparse
// attention's saved tensors, from Megatron-Core's experimental attention
// variant "dsa" (the Megatron-LM commit Megatron Bridge 067f987df03b pins,
// 2a75ac12c54b). The terms and their sources are in estimate_dsa.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "lint/facts/estimate.h"

namespace mblint {

// Megatron-Core's is_dsa_skip_topk_layer (dsa.py), inverted: whether 1-based
// decoder layer `layer_number` computes its own top-k and so builds an
// indexer.
bool dsa_computes_topk(int64_t layer_number, int64_t skip_topk_offset, int64_t topk_freq);

// Per decoder layer of a `layers`-layer stack: builds an indexer.
std::vector<bool> dsa_indexer_layers(int64_t layers, int64_t skip_topk_offset, int64_t topk_freq);

// The indexer layers among stage `stage`'s decoder layers (the stage's own
// layers without interleaving, else the model-wide share).
double dsa_indexers_on_stage(const MemoryModel& m, int stage);

// Parameters of one indexer (duplicated on every TP rank).
double dsa_indexer_params(const MemoryModel& m);

// Named saved-tensor terms in bytes, per micro-batch on one rank:
// the absorbed MLA's and the sparse attention's (every DSA layer; they
// replace MLA's up-projection, Q/K/V and core-attention terms), and one
// indexer's (layers that build one, when the indexer loss trains it).
std::vector<std::pair<std::string, double>> dsa_attention_terms(const MemoryModel& m, double tokens);
std::vector<std::pair<std::string, double>> dsa_indexer_terms(const MemoryModel& m, double tokens);

// The sum of dsa_indexer_terms for one micro-batch of the model's tokens.
double dsa_indexer_bytes(const MemoryModel& m);

}  // namespace mblint
