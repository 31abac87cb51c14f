// Gated delta net (GDN) layers in the memory estimate: Megatron-Core's
// experimental attention variant "gated_delta_net" / "gdn" (Qwen3-Next,
// Qwen3.5), a linear-attention block that replaces softmax attention on
// the layers `linear_attention_freq` selects. The weights, the saved
// activations and their sources (Megatron-LM 2a75ac12c54b, the commit
// Megatron Bridge 067f987df03b pins; flash-linear-attention v0.5.1, the
// version Bridge's uv.lock pins) are in estimate_linear_attention.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "lint/facts/estimate.h"
#include "lint/model/catalog.h"
#include "lint/model/job.h"

namespace mblint {

// Megatron-Core's get_linear_attention_pattern for an integer frequency:
// 1-based layer i is softmax attention when i % freq == 0, a GDN layer
// otherwise (true = GDN).
std::vector<bool> gdn_layer_pattern(int64_t layers, int64_t freq);

// The GDN layers among stage `stage`'s decoder layers (the stage's own
// contiguous layers without interleaving, else the model-wide share).
double gdn_layers_on_stage(const MemoryModel& m, int stage);

// Parameters of one GDN block with its fused input norm: TP-split ones
// (in_proj, conv1d, dt_bias, A_log, out_proj) and replicated ones (the
// input norm and the gated output norm over one value head).
struct GdnParams {
  double sharded = 0, replicated = 0, largest = 0;
};
GdnParams gdn_layer_params(const MemoryModel& m);

// in_proj's output width (q, k, v, the gate z, beta, alpha) and the value
// width (out_proj's input), over all TP ranks.
double gdn_in_proj_width(const MemoryModel& m);
double gdn_value_width(const MemoryModel& m);

// Named saved-tensor terms of one GDN block in bytes, per micro-batch on one
// rank (`tokens` = s/CP x b, `rep` = 1/TP with sequence parallelism).
std::vector<std::pair<std::string, double>> gdn_layer_terms(const MemoryModel& m, double tokens, double rep);

// Their sum for one micro-batch of the model's tokens.
double gdn_layer_bytes(const MemoryModel& m);

// Reads the job's experimental_attention_variant "gated_delta_net"/"gdn"
// settings (linear_attention_freq, linear_*), else the catalog's record of
// the recipe's model (ModelDims::gated_delta_net); false with `why_not`
// when a dimension is not known.
bool read_gated_delta_net(const Job& job, const ModelDims* dims, MemoryModel& m, std::string* why_not);

// Whether the catalog records a gated delta net for this model.
bool catalog_has_gated_delta_net(const ModelDims* dims);

}  // namespace mblint
