// LoRA on a gated delta net model (Qwen3-Next, Qwen3.5) in the memory
// estimate: which linears Megatron Bridge's LoRA wraps in a model whose
// layers mix gated delta net and softmax attention blocks, the adapters'
// parameters per rank as Bridge shards them, and what they keep for the
// backward pass. Sources are in estimate_peft.cpp.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "lint/facts/estimate.h"
#include "lint/model/job.h"

namespace mblint {

// Reads peft.target_modules (Bridge's LoRA default when not written: the
// four transformer linears). False with `why_not` for what the estimate does
// not model on a GDN model: another PEFT class, wildcards, other module
// names, an empty list (every linear) or exclude_modules.
bool read_lora_targets(const Job& job, LoraTargets& targets, std::string* why_not);

// The adapters of the layers `k` counts (softmax attention = attention -
// linear, GDN = linear, dense MLP, MoE), per rank: r x (in + out) / TP for
// each targeted linear (the expert TP for the routed experts, one adapter
// shared by an EP rank's local experts).
double gdn_model_lora_params(const MemoryModel& m, const LayerKinds& k);

// What the adapters of those layers keep for the backward pass, per
// micro-batch on one rank (`tokens` = s/CP x b, `rep` = 1/TP with sequence
// parallelism): linear_out's r-wide input per adapted linear and token, and
// with sequence parallelism the gathered input linear_in keeps for each
// column-parallel target.
std::vector<std::pair<std::string, double>> gdn_model_lora_terms(const MemoryModel& m, const LayerKinds& k,
                                                                 double tokens, double rep);

}  // namespace mblint
